//! The host CPU cost model on whole runs: a CPU-bound receiver runs at its CPU's rate, service demand is
//! the configured cost, and fewer ACKs free CPU for data.

mod common;

use tcplab_sim::{run, CpuSpec, SimRun, SimSpec, CLIENT, SERVER};
use tcplab_tcp::config::AckPolicy;
use tcplab_tcp::{Connection, Estats, TcpConfig};
use tcplab_units::Duration;
use tcplab_workload::Report;

const MSS_PAYLOAD: f64 = 1448.0;

fn us(x: f64) -> Duration {
    Duration::from_nanos((x * 1000.0) as u64)
}

/// A 10 s bulk transfer client → server over `rate`, 1 ms each way, with the receiver's CPU model.
fn bulk(rate: &str, cpu: CpuSpec, ack_policy: AckPolicy) -> (SimRun<Estats>, f64) {
    let mut server = common::host(4 << 20);
    server.cpu = Some(cpu);
    server.transport = TcpConfig { ack_policy, ..server.transport };
    let spec = SimSpec {
        up: common::link(rate, "1ms", 1000, 0.0),
        down: common::link(rate, "1ms", 1000, 0.0),
        hosts: [common::host(4 << 20), server],
        apps: vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(65536), true)),
        ],
        measure: Duration::from_secs(10),
    };
    let r = run::<Connection>(&spec, 1).unwrap();
    let Report::Stream(s) = r.apps[0].report() else { unreachable!("a stream application") };
    let bps = s.window_bytes as f64 * 8.0 / s.elapsed.as_secs_f64();
    (r, bps)
}

fn receiver_cpu() -> CpuSpec {
    CpuSpec { cores: 1, per_segment_in: us(20.0), per_ack_out: us(2.0), per_kb_copy: us(1.0), ..CpuSpec::default() }
}

#[test]
fn a_cpu_bound_receiver_runs_at_its_cpu_rate() {
    // Per full segment, with an ACK for every segment: 20 us in + 2 us ACK out + 1448/1024 us of copy.
    let per_segment_us = 20.0 + 2.0 + MSS_PAYLOAD / 1024.0;
    let expected = MSS_PAYLOAD * 8.0 / (per_segment_us * 1e-6);
    let (r, got) = bulk("1gbit", receiver_cpu(), AckPolicy::Every);
    eprintln!("CPU-bound receiver: {got} bit/s, CPU rate {expected}");
    assert!((got / expected - 1.0).abs() < 0.02, "{got} bit/s, CPU rate {expected}");
    // The CPU, not the link, was the bottleneck: busy all the window, and nothing was dropped.
    let c = r.cpu[SERVER].unwrap();
    assert!(c.busy_window.as_secs_f64() > 0.98 * 10.0, "{:?}", c.busy_window);
    assert_eq!(r.links[0].drops_queue_full, 0);
    // Two cores process twice as fast (still below the 1 Gbit/s link's 941 Mbit/s).
    let (_, two) = bulk("1gbit", CpuSpec { cores: 2, per_segment_in: us(40.0), ..receiver_cpu() }, AckPolicy::Every);
    let per_segment_us = 40.0 + 2.0 + MSS_PAYLOAD / 1024.0;
    let expected = 2.0 * MSS_PAYLOAD * 8.0 / (per_segment_us * 1e-6);
    assert!((two / expected - 1.0).abs() < 0.02, "{two} bit/s, two cores' rate {expected}");
}

#[test]
fn service_demand_equals_the_configured_costs_on_an_uncongested_run() {
    // 100 Mbit/s: the CPU (about 495 Mbit/s) is idle most of the time.
    let (r, got) = bulk("100mbit", receiver_cpu(), AckPolicy::Every);
    assert!(got > 90e6, "{got}");
    let Report::Stream(s) = r.apps[0].report() else { unreachable!("a stream application") };
    let kb = s.window_bytes as f64 / 1024.0;
    let demand_us_per_kb = r.cpu[SERVER].unwrap().busy_window.as_secs_f64() * 1e6 / kb;
    let expected = (20.0 + 2.0) / (MSS_PAYLOAD / 1024.0) + 1.0;
    eprintln!("service demand {demand_us_per_kb} us/KB, configured {expected}");
    assert!((demand_us_per_kb / expected - 1.0).abs() < 0.02, "{demand_us_per_kb} us/KB vs {expected}");
    assert!(r.cpu[CLIENT].is_none(), "a host without the model reports none");
}

#[test]
fn fewer_acks_raise_a_cpu_bound_receivers_throughput() {
    // ACKs cost 10 us each here: ACK avoidance (one ACK per up to 8 segments) frees that time for data.
    let cpu = CpuSpec { per_ack_out: us(10.0), ..receiver_cpu() };
    let (every, every_bps) = bulk("1gbit", cpu.clone(), AckPolicy::Every);
    let (avoid, avoid_bps) = bulk("1gbit", cpu, AckPolicy::Avoidance);
    let acks = |r: &SimRun<Estats>| {
        let e = &r.endpoints.iter().find(|e| e.host == SERVER).unwrap().stats;
        (e.SegsOut - e.DataSegsOut) as f64 / r.endpoints[0].stats.DataSegsOut as f64
    };
    assert!(acks(&avoid) < 0.5 * acks(&every), "ACKs per data segment {} vs {}", acks(&avoid), acks(&every));
    eprintln!("ACK avoidance {avoid_bps} bit/s ({} ACKs/segment), every {every_bps} ({})", acks(&avoid), acks(&every));
    assert!(avoid_bps > 1.15 * every_bps, "avoidance {avoid_bps} vs every {every_bps}");
}
