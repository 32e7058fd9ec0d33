//! ECN end to end through a shipped scenario (issue 24; docs/ecn.md § Shown through `aqm-compare`): the
//! same AQM that drops marks instead when both the qdisc and the TCP do ECN, and the bulk flow backs off as
//! often without retransmitting anything.

use crate::common;

use tcplab_lab::result::Point;
use tcplab_lab::{load, run_point, Source, SHIPPED};

fn run(set: &[&str]) -> Point {
    let text = SHIPPED.iter().find(|s| s.name == "aqm-compare").expect("aqm-compare is shipped").text;
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let s = load(&Source { name: "aqm-compare.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"));
    run_point(&s, s.seed).expect("the run completes").point
}

#[test]
fn codel_and_pie_mark_instead_of_dropping_and_the_flow_retransmits_nothing() {
    for kind in ["codel", "pie"] {
        let dropped = run(&[&format!("path.up.qdisc={{kind=\"{kind}\"}}")]);
        let marked = run(&[&format!("path.up.qdisc={{kind=\"{kind}\",ecn=true}}"), "client.tcp.ecn=\"on\""]);
        let (qd, qm) = (dropped.links.up.qdisc.unwrap(), marked.links.up.qdisc.unwrap());
        let sender = |p: &Point| common::estats(p.connections.iter().find(|c| c.side == "client").unwrap());
        let receiver = |p: &Point| common::estats(p.connections.iter().find(|c| c.side == "server").unwrap());
        let (sd, sm, rm) = (sender(&dropped), sender(&marked), receiver(&marked));
        // Without ECN every congestion signal is a drop and a retransmission.
        assert!(qd.drops_aqm > 0 && qd.marks == 0 && sd.SegsRetrans > 0, "{kind}: {qd:?}");
        // With it: marks, no drop, no retransmission; every mark reaches the receiver (CE), which echoes
        // it (ECE) once per window, and each echo is one window reduction at the sender (RFC 3168 § 6.1.2).
        assert!(qm.marks > 0 && qm.drops_aqm == 0 && sm.SegsRetrans == 0, "{kind}: {qm:?} {}", sm.SegsRetrans);
        assert_eq!(rm.CERcvd, qm.marks, "{kind}");
        assert_eq!(sm.CongSignals, rm.ECESent, "{kind}");
        assert!(sm.ECNsignals >= sm.CongSignals, "{kind}");
        // The AQM reacts as often and holds the same delay: a mark is a drop without the loss.
        let ratio = sm.CongSignals as f64 / sd.CongSignals as f64;
        assert!((0.8..=1.25).contains(&ratio), "{kind}: {} against {} reductions", sm.CongSignals, sd.CongSignals);
        assert!((qm.sojourn_mean_ms / qd.sojourn_mean_ms - 1.0).abs() < 0.1, "{kind}: {qm:?} {qd:?}");
    }
}
