//! Receive coalescing (GRO behind interrupt moderation) on whole runs: frames that arrive within the hold
//! reach TCP as one packet, so a saturated gigabit receiver ACKs once per batch, a slower link is untouched,
//! and a CPU-bound receiver pays its per-packet cost once per batch.

use crate::common;

use tcplab_sim::{run, CpuSpec, HostSpec, SimRun, SimSpec, CLIENT, SERVER};
use tcplab_tcp::config::AckPolicy;
use tcplab_tcp::{Connection, Estats, TcpConfig};
use tcplab_units::Duration;
use tcplab_workload::Report;

/// Wire bytes of a full segment with timestamps: 1448 payload + 52 IPv4/TCP + 38 Ethernet framing.
const FRAME_BYTES: f64 = 1538.0;

/// A bulk transfer client → server for `secs` over `rate`, 1 ms each way, 100-frame queue; the server
/// (the receiver) as `server` says.
fn bulk(rate: &str, server: HostSpec<TcpConfig>, secs: u64) -> (SimRun<Estats>, f64) {
    let spec = SimSpec::two_hosts(
        common::link(rate, "1ms", 100, 0.0),
        common::link(rate, "1ms", 100, 0.0),
        [common::host(16 << 20), server],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(65536), true)),
        ],
        Duration::from_secs(secs),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    let Report::Stream(s) = r.apps[0].report() else { unreachable!("a stream application") };
    let bps = s.window_bytes as f64 * 8.0 / s.elapsed.as_secs_f64();
    (r, bps)
}

fn receiver(hold_us: u64) -> HostSpec<TcpConfig> {
    HostSpec { rx_coalesce: Duration::from_micros(hold_us), ..common::host(16 << 20) }
}

/// Data segments the receiver took per ACK it sent.
fn segments_per_ack(r: &SimRun<Estats>) -> f64 {
    let e = &r.endpoints.iter().find(|e| e.host == SERVER).unwrap().stats;
    e.DataSegsIn as f64 / (e.SegsOut - e.DataSegsOut) as f64
}

#[test]
fn a_saturated_gigabit_receiver_acks_once_per_batch_of_frames_within_the_hold() {
    // Frames 12.304 us apart: those within 50 us of the first are 5 (at 0, 12.3, 24.6, 36.9 and 49.2 us).
    let frame_us = FRAME_BYTES * 8.0 / 1e3;
    let batch = 1.0 + (50.0 / frame_us).floor();
    assert_eq!(batch, 5.0);
    let (plain, plain_bps) = bulk("1gbit", receiver(0), 3);
    let (gro, gro_bps) = bulk("1gbit", receiver(50), 3);
    let (p, g) = (segments_per_ack(&plain), segments_per_ack(&gro));
    eprintln!("segments per ACK: {p:.3} without, {g:.3} with 50 us; goodput {plain_bps} / {gro_bps} bit/s");
    // ACK every second segment without; one ACK per batch with (slightly fewer per batch: slow start, and a
    // timestamp that ticks mid-batch ends it, as it ends Linux's).
    assert!((1.95..=2.0).contains(&p), "{p}");
    assert!((0.9 * batch..=batch).contains(&g), "{g} segments per ACK, batches of {batch}");
    // The path's bottleneck and its losses set the goodput, not the receiver's ACK count.
    assert!((gro_bps / plain_bps - 1.0).abs() < 0.01, "{gro_bps} vs {plain_bps}");
    assert!(gro_bps <= 1e9 * 1448.0 / FRAME_BYTES);
}

#[test]
fn frames_further_apart_than_the_hold_are_not_coalesced() {
    // At 100 Mbit/s frames are 123 us apart: a 50 us hold finds nothing to join, and the run is the same.
    let (plain, _) = bulk("100mbit", receiver(0), 2);
    let (gro, _) = bulk("100mbit", receiver(50), 2);
    let stats = |r: &SimRun<Estats>| {
        let e = &r.endpoints.iter().find(|e| e.host == SERVER).unwrap().stats;
        (e.SegsOut, e.DataSegsIn, e.ThruOctetsReceived)
    };
    assert_eq!(stats(&plain), stats(&gro));
    assert!(segments_per_ack(&gro) < 2.01, "{}", segments_per_ack(&gro));
}

#[test]
fn a_cpu_bound_receiver_pays_its_per_packet_cost_once_per_batch() {
    // 20 us per received packet and 2 us per ACK, an ACK per packet: without coalescing the receiver's CPU
    // carries 1448 bytes per 22 us (527 Mbit/s); batches of frames cost it one packet each, and the
    // 1 Gbit/s link becomes the bottleneck again.
    let cpu = CpuSpec {
        cores: 1,
        per_segment_in: Duration::from_micros(20),
        per_ack_out: Duration::from_micros(2),
        ..CpuSpec::default()
    };
    let host = |hold_us: u64| {
        let mut h = receiver(hold_us);
        h.cpu = Some(cpu.clone());
        h.transport = TcpConfig { ack_policy: AckPolicy::Every, ..h.transport };
        h
    };
    let (_, plain_bps) = bulk("1gbit", host(0), 3);
    let (gro, gro_bps) = bulk("1gbit", host(50), 3);
    let cpu_rate = 1448.0 * 8.0 / 22e-6;
    eprintln!("CPU-bound receiver: {plain_bps} bit/s without coalescing (CPU rate {cpu_rate}), {gro_bps} with");
    assert!((plain_bps / cpu_rate - 1.0).abs() < 0.03, "{plain_bps} against the CPU's {cpu_rate}");
    assert!(gro_bps > 1.5 * plain_bps, "{gro_bps} vs {plain_bps}");
    // An ACK per coalesced packet, not per segment.
    assert!(segments_per_ack(&gro) > 2.0, "{}", segments_per_ack(&gro));
    assert!(gro.cpu[SERVER].is_some());
}
