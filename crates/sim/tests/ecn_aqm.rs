//! ECN end to end (issue 24, "what must be shown"): an AQM that marks instead of dropping, RFC 3168's TCP
//! reacting to the marks, and no retransmission on the way; the same path without ECN drops and
//! retransmits. CoDel (RFC 8289) at a 10 Mbit/s bottleneck, one Linux bulk flow.

use crate::common;

use tcplab_link::qdisc::CodelConfig;
use tcplab_link::{LinkConfig, QdiscConfig};
use tcplab_sim::{run, AppSpec, FlowId, HostId, LinkId, LinkSpec, SimRun, SimSpec};
use tcplab_tcp::config::EcnMode;
use tcplab_tcp::{Connection, Estats, TcpConfig};
use tcplab_units::{ByteSize, Duration};
use tcplab_workload::Report;

const SECS: u64 = 30;

/// Sender host 0 → router 2 → (the bottleneck, link 0, with CoDel) → router 3 → receiver host 1; 50 ms RTT.
fn path(ecn: EcnMode) -> SimSpec<TcpConfig> {
    let codel = QdiscConfig::Codel(CodelConfig { ecn: true, ..CodelConfig::default() });
    let bottleneck = LinkConfig { qdisc: codel, ..common::link("10mbit", "20ms", 1000, 0.0) };
    let duplex = |a, b, cfg: LinkConfig| LinkSpec { a: HostId(a), b: HostId(b), forward: cfg.clone(), backward: cfg };
    let links = vec![
        duplex(2, 3, bottleneck),
        duplex(0, 2, common::link("1gbit", "5ms", 1000, 0.0)),
        duplex(3, 1, common::link("1gbit", "0s", 1000, 0.0)),
    ];
    let apps = vec![
        AppSpec { host: HostId(1), peer: HostId(0), flow: FlowId(0), app: common::acceptor(5001, None, true) },
        AppSpec {
            host: HostId(0),
            peer: HostId(1),
            flow: FlowId(0),
            app: common::opener(5001, Duration::ZERO, Some(16384), true),
        },
    ];
    let host = || {
        let mut h = common::host(8 << 20);
        let linux = TcpConfig::personality("linux").unwrap();
        h.transport =
            TcpConfig { ecn, send_buffer: ByteSize::new(8 << 20), recv_buffer: ByteSize::new(8 << 20), ..linux };
        h
    };
    SimSpec { hosts: (0..4).map(|_| host()).collect(), links, apps, measure: Duration::from_secs(SECS) }
}

fn sender(r: &SimRun<Estats>) -> &Estats {
    &r.endpoints.iter().find(|e| e.host == HostId(0)).expect("the sender's connection").stats
}

/// What the receiving application read in the window, bit/s (the sender's writes would count its send
/// buffer's backlog too).
fn goodput(r: &SimRun<Estats>) -> f64 {
    match r.apps[0].report() {
        Report::Stream(s) => s.window_bytes as f64 * 8.0 / SECS as f64,
        other => panic!("not a bulk transfer: {other:?}"),
    }
}

#[test]
fn codel_marks_instead_of_dropping_and_the_flow_never_retransmits() {
    let r = run::<Connection>(&path(EcnMode::On), 1).unwrap();
    let q = r.qdiscs[LinkId(0).forward().index()].expect("CoDel takes the staged path");
    let s = sender(&r);
    assert!(q.marks > 20, "CoDel marked {} packets", q.marks);
    assert_eq!((q.drops_aqm, q.drops_overlimit), (0, 0), "an ECN flow is marked, never dropped: {q:?}");
    assert_eq!(s.SegsRetrans, 0, "no loss, no retransmission: {s:?}");
    // Each reduction answers marks; at most one a window, so fewer reductions than marks.
    assert!(s.CongSignals > 0 && s.CongSignals <= q.marks, "{} reductions for {} marks", s.CongSignals, q.marks);
    // The link stays busy: 10 Mbit/s less the headers and framing (1448 of 1538 bytes), a 10% margin for
    // slow start and CoDel's interval.
    let bound = 10e6 * 1448.0 / 1538.0;
    assert!(goodput(&r) > 0.9 * bound, "goodput {} of {bound}", goodput(&r));
    // CoDel holds the standing queue near its 5 ms target: the mean sojourn is within 4 × target.
    let mean_ms = q.sojourn_sum_ns as f64 / q.dequeued as f64 / 1e6;
    assert!(mean_ms < 20.0, "mean sojourn {mean_ms:.1} ms");
}

#[test]
fn without_ecn_codel_drops_and_the_flow_retransmits() {
    let r = run::<Connection>(&path(EcnMode::Off), 1).unwrap();
    let q = r.qdiscs[LinkId(0).forward().index()].expect("CoDel takes the staged path");
    let s = sender(&r);
    assert_eq!(q.marks, 0, "a Not-ECT packet is never marked");
    assert!(q.drops_aqm > 20, "CoDel dropped {}", q.drops_aqm);
    assert!(s.SegsRetrans >= q.drops_aqm / 2, "{} retransmissions for {} drops", s.SegsRetrans, q.drops_aqm);
}
