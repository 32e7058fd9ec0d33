//! The host CPU cost model on whole runs: a CPU-bound receiver runs at its CPU's rate, service demand is
//! the configured cost, and fewer ACKs free CPU for data.

use crate::common;

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
    let spec = SimSpec::two_hosts(
        common::link(rate, "1ms", 1000, 0.0),
        common::link(rate, "1ms", 1000, 0.0),
        [common::host(4 << 20), server],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(65536), true)),
        ],
        Duration::from_secs(10),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    let Report::Stream(s) = r.apps[0].report() else { unreachable!("a stream application") };
    let bps = s.window_bytes as f64 * 8.0 / s.elapsed.as_secs_f64();
    (r, bps)
}

fn receiver_cpu() -> CpuSpec {
    CpuSpec { cores: 1, per_segment_in: us(20.0), per_ack_out: us(2.0), per_kb_copy: us(1.0), ..CpuSpec::default() }
}

#[test]
fn a_cpu_bound_receiver_runs_at_its_cpu_rate_while_busy() {
    // Per full segment, with an ACK for every segment: 20 us in + 2 us ACK out + 1448/1024 us of copy.
    let per_segment_us = 20.0 + 2.0 + MSS_PAYLOAD / 1024.0;
    let expected = MSS_PAYLOAD * 8.0 / (per_segment_us * 1e-6);
    let (r, got) = bulk("1gbit", receiver_cpu(), AckPolicy::Every);
    let busy = r.cpu[SERVER].unwrap().busy_window.as_secs_f64() / 10.0;
    eprintln!("CPU-bound receiver: {got} bit/s, CPU rate {expected}, busy {busy}");
    // Every moment the CPU works it moves data at its rate: throughput is that rate times the busy share.
    assert!((got / (expected * busy) - 1.0).abs() < 0.01, "{got} bit/s, CPU rate {expected} x {busy}");
    // And it is busy nearly all the window. Segments are processed before the application's copies
    // (they preempt them), so the reads wait until the 4 MiB window has closed and the backlog is
    // drained; the read then reopens it and the CPU idles until new data is back, a round trip (2 ms)
    // after each window's worth: about 3% of the time here. (The reopened window leaves as a burst that
    // overflows the path's 1000-packet queue; the losses change nothing above.)
    assert!(busy > 0.95 && busy <= 1.0, "{busy}");
    // Two cores process twice as fast (still below the 1 Gbit/s link's 941 Mbit/s).
    let (r2, two) = bulk("1gbit", CpuSpec { cores: 2, per_segment_in: us(40.0), ..receiver_cpu() }, AckPolicy::Every);
    let busy2 = r2.cpu[SERVER].unwrap().busy_window.as_secs_f64() / 20.0;
    let per_segment_us = 40.0 + 2.0 + MSS_PAYLOAD / 1024.0;
    let expected = 2.0 * MSS_PAYLOAD * 8.0 / (per_segment_us * 1e-6);
    eprintln!("two cores: {two} bit/s, rate {expected}, busy {busy2}");
    assert!((two / (expected * busy2) - 1.0).abs() < 0.02, "{two} bit/s, two cores' rate {expected} x {busy2}");
    assert!(busy2 > 0.9 && busy2 <= 1.0, "{busy2}");
}

/// A receiver whose only cost is its copy, 10 us per KB on one core, behind a 10 Gbit/s path: the read
/// returns when its copy is done, the data leaves the receive buffer then, the buffer fills, the window
/// closes, and the host sets the rate: 1024 x 8 bit / 10 us = 819.2 Mbit/s, with a service demand of
/// exactly the configured 10 us/KB (not less: work the CPU has not done by the end of the window is not
/// counted, and none piles up).
#[test]
fn a_receiver_bound_by_its_copy_sets_the_rate_through_its_window() {
    let cpu = CpuSpec { cores: 1, per_kb_copy: us(10.0), ..CpuSpec::default() };
    let mut server = common::host(1 << 20);
    server.cpu = Some(cpu);
    let spec = SimSpec::two_hosts(
        common::link("10gbit", "50us", 1000, 0.0),
        common::link("10gbit", "50us", 1000, 0.0),
        [common::host(1 << 20), server],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(65536), true)),
        ],
        Duration::from_secs(2),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    let Report::Stream(s) = r.apps[0].report() else { unreachable!("a stream application") };
    let secs = s.elapsed.as_secs_f64();
    let bps = s.window_bytes as f64 * 8.0 / secs;
    let c = r.cpu[SERVER].unwrap();
    let busy = c.busy_window.as_secs_f64() / secs;
    let demand = c.busy_window.as_secs_f64() * 1e6 / (s.window_bytes as f64 / 1024.0);
    eprintln!("copy-bound receiver: {bps} bit/s, busy {busy}, {demand} us/KB");
    assert!((bps / 819.2e6 - 1.0).abs() < 0.02, "{bps} bit/s, expected 819.2 Mbit/s");
    assert!((demand / 10.0 - 1.0).abs() < 0.02, "{demand} us/KB, configured 10");
    assert!(busy <= 1.0 && busy > 0.98, "{busy}");
    // The back-pressure went through the window: the sender waited on it, the path never queued.
    let sender = &r.endpoints.iter().find(|e| e.host == CLIENT).unwrap().stats;
    assert!(sender.SndLimTimeRwin > 0.9 * secs * 1e3, "{} ms rwnd-limited", sender.SndLimTimeRwin);
    assert_eq!(r.links[0].drops_queue_full, 0);
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
