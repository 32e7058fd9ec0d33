//! Flows that share a bottleneck (issue 24, "what must be shown"): fairness of identical CUBIC flows, the
//! RTT unfairness of Reno, and bufferbloat behind a 1000-packet FIFO. Physics, on dumbbells built from the
//! engine's graph.

use crate::common;

use tcplab_link::LinkConfig;
use tcplab_sim::{run, AppSpec, FlowId, HostId, LinkSpec, SimRun, SimSpec};
use tcplab_tcp::config::CongestionControlKind;
use tcplab_tcp::{Connection, Estats, TcpConfig};
use tcplab_units::{Duration, Instant};
use tcplab_workload::{App, Report, RrClient, RrClientConfig, RrServer, RrServerConfig};

fn duplex(a: u32, b: u32, cfg: LinkConfig) -> LinkSpec {
    LinkSpec { a: HostId(a), b: HostId(b), forward: cfg.clone(), backward: cfg }
}

/// What runs over pair i of a dumbbell.
enum Flow {
    Bulk,
    /// 1-byte requests and responses, one at a time (netperf TCP_RR).
    Rr,
}

/// A dumbbell of `flows.len()` pairs: sender i (host i) to receiver i (host n + i), routers 2n and 2n + 1,
/// access links of 1 Gbit/s with sender i's one-way delay `access[i]`, and `bottleneck` between the routers.
fn dumbbell(
    flows: &[(Flow, &str)],
    bottleneck: LinkConfig,
    cc: CongestionControlKind,
    secs: u64,
) -> SimSpec<TcpConfig> {
    let n = flows.len() as u32;
    let (left, right) = (2 * n, 2 * n + 1);
    let mut links = vec![duplex(left, right, bottleneck)];
    let mut apps = Vec::new();
    for (i, (flow, access)) in flows.iter().enumerate() {
        let i = i as u32;
        links.push(duplex(i, left, common::link("1gbit", access, 1000, 0.0)));
        links.push(duplex(right, n + i, common::link("1gbit", "0s", 1000, 0.0)));
        let (s, r) = (HostId(i), HostId(n + i));
        let (server, client) = match flow {
            Flow::Bulk => (common::acceptor(5001, None, true), common::opener(5001, Duration::ZERO, Some(16384), true)),
            Flow::Rr => (
                App::RrServer(RrServer::new(RrServerConfig {
                    port: 5001,
                    ports: 1,
                    connections: 1,
                    request: 1,
                    response: 1,
                })),
                App::RrClient(RrClient::new(RrClientConfig {
                    connections: 1,
                    port: 5001,
                    ports: 1,
                    at: Instant::ZERO,
                    spacing: Duration::ZERO,
                    request: 1,
                    response: 1,
                    burst: 0,
                    per_transaction: false,
                    port_retry: Duration::from_millis(1),
                })),
            ),
        };
        apps.push(AppSpec { host: r, peer: s, flow: FlowId(i), app: server });
        apps.push(AppSpec { host: s, peer: r, flow: FlowId(i), app: client });
    }
    let host = || {
        let mut h = common::host(8 << 20);
        h.transport = TcpConfig { congestion_control: cc, nodelay: true, ..h.transport };
        h
    };
    SimSpec { hosts: (0..2 * n + 2).map(|_| host()).collect(), links, apps, measure: Duration::from_secs(secs) }
}

/// Goodput of pair i over the window, bit/s: what its receiver read (the sender's writes would count its
/// send buffer's backlog too).
fn goodput(r: &SimRun<Estats>, i: usize, secs: u64) -> f64 {
    match r.apps[2 * i].report() {
        Report::Stream(s) => s.window_bytes as f64 * 8.0 / secs as f64,
        other => panic!("pair {i} is not a bulk transfer: {other:?}"),
    }
}

/// Jain's fairness index (Jain, Chiu and Hawe, DEC-TR-301, 1984): (Σx)² / (n·Σx²), 1 when all are equal.
fn jain(x: &[f64]) -> f64 {
    let (s, s2): (f64, f64) = (x.iter().sum(), x.iter().map(|v| v * v).sum());
    s * s / (x.len() as f64 * s2)
}

#[test]
fn four_identical_cubic_flows_share_a_100_mbit_bottleneck_fairly() {
    // Equal RTTs (2 × (5 + 10) ms), a one-BDP buffer (30 ms × 100 Mbit/s = 244 full frames).
    let secs = 60;
    let flows = [(Flow::Bulk, "5ms"), (Flow::Bulk, "5ms"), (Flow::Bulk, "5ms"), (Flow::Bulk, "5ms")];
    let r = run::<Connection>(
        &dumbbell(&flows, common::link("100mbit", "10ms", 244, 0.0), CongestionControlKind::Cubic, secs),
        1,
    )
    .unwrap();
    let x: Vec<f64> = (0..4).map(|i| goodput(&r, i, secs)).collect();
    let sum: f64 = x.iter().sum();
    assert!(sum > 0.9 * 100e6 * 1448.0 / 1538.0, "the bottleneck is used: {x:?}");
    assert!(jain(&x) >= 0.98, "Jain's index {} for {x:?}", jain(&x));
}

#[test]
fn reno_shares_by_a_power_of_the_rtt_ratio_between_one_and_two() {
    // Two Reno flows, RTTs 20 ms and 80 ms (access delays 9 and 39 ms, 1 ms of bottleneck each way), a
    // drop-tail buffer small against both RTTs (25 frames, 3 ms at 100 Mbit/s). Both flows lose at the
    // same overflows (a drop-tail queue's synchronized losses), grow by one segment per RTT in between, so
    // each one's mean window is proportional to 1/RTT and its throughput to 1/RTT²: Floyd, "Connections
    // with multiple congested gateways in packet-switched networks, part 1" (CCR 21(5), 1991), §3, and
    // Lakshman & Madhow, "The performance of TCP/IP for networks with high bandwidth-delay products and
    // random loss" (IEEE/ACM ToN 5(3), 1997), §V: throughput ∝ RTT^-k with k = 2 for synchronized losses
    // (k = 1, the square-root law, when losses are random and independent): (80/20)^k from 4 to 16.
    let secs = 120;
    let flows = [(Flow::Bulk, "9ms"), (Flow::Bulk, "39ms")];
    let r = run::<Connection>(
        &dumbbell(&flows, common::link("100mbit", "1ms", 25, 0.0), CongestionControlKind::Reno, secs),
        1,
    )
    .unwrap();
    let (short, long) = (goodput(&r, 0, secs), goodput(&r, 1, secs));
    let ratio = short / long;
    // k from the measured ratio: the analyses bound it between 1 (independent losses) and 2 (fully
    // synchronized ones). Two flows through one drop-tail queue lose together only in part: this run gives
    // k ≈ 1.26 (5.7×), closer to the random-loss end than the synchronized model's 16×.
    let k = ratio.ln() / 4f64.ln();
    assert!((1.0..=2.0).contains(&k), "k = {k:.2}: ratio {ratio:.2} ({short:.0} / {long:.0} bit/s)");
}

fn rr_latency_us(r: &SimRun<Estats>, i: usize) -> tcplab_workload::LatencySummary {
    match r.apps[2 * i + 1].report() {
        Report::Rr(rr) => rr.latency,
        other => panic!("pair {i} is not request/response: {other:?}"),
    }
}

#[test]
fn a_1000_packet_fifo_delays_an_rr_flow_by_its_drain_time() {
    // 10 Mbit/s, 1000-frame FIFO: full, it holds 1000 × 1538 B × 8 / 10 Mbit/s = 1.23 s. A bulk flow keeps
    // it near full (CUBIC backs off to 0.7 of its window, so the queue stays above 600 frames); the rr
    // flow's 1-byte requests wait behind it.
    let secs = 60;
    let bottleneck = || common::link("10mbit", "5ms", 1000, 0.0);
    let idle =
        run::<Connection>(&dumbbell(&[(Flow::Rr, "5ms")], bottleneck(), CongestionControlKind::Cubic, 10), 1).unwrap();
    let base = rr_latency_us(&idle, 0);
    let loaded = run::<Connection>(
        &dumbbell(&[(Flow::Bulk, "5ms"), (Flow::Rr, "5ms")], bottleneck(), CongestionControlKind::Cubic, secs),
        1,
    )
    .unwrap();
    let lat = rr_latency_us(&loaded, 1);
    // The idle path: 2 × 10 ms of propagation and four small frames' serialization.
    assert!((20_000.0..21_000.0).contains(&base.p50), "idle {base:?}");
    let drain_us = 1000.0 * 1538.0 * 8.0 / 10e6 * 1e6;
    // The transactions that waited behind a full queue (the 99th percentile; the maximum is a request the
    // full queue dropped, recovered after a 1 s RTO and its doubling) waited its drain time.
    let rise_p99 = lat.p99 - base.p50;
    assert!(
        (rise_p99 - drain_us).abs() < 0.05 * drain_us,
        "p99 rise {rise_p99:.0} us, drain {drain_us:.0} us: {lat:?}"
    );
    // Per transaction the median is much lower: while the queue is full a transaction takes 1.2 s, while
    // it drains after the bulk flow's losses many quick ones complete, so the samples crowd there. The mean
    // still rises more than tenfold.
    assert!(lat.mean > 10.0 * base.mean, "mean {} us against {} us idle", lat.mean, base.mean);
}
