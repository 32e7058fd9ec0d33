//! Where BBR's drops at 0 % loss in `bbr-loss` come from, and why the `linux` receiver's growth of its
//! window on out-of-order data (`grow_window_out_of_order`) raised them (docs/bbr.md § bbr-loss): every
//! drop is STARTUP's overshoot of the 1-BDP queue; the window never limits the sender; what the rule
//! changes is the ACK clock during STARTUP's loss episodes. Linux's `tcp_grow_window` sets
//! `icsk_ack.quick` whenever it grows rcv_ssthresh, and `__tcp_ack_snd_check` serves quick-ACK mode
//! before SACK compression, so while the window still has room to grow every out-of-order segment is
//! acknowledged at once. BBR's recovery cwnd (packet conservation, per ACK) then stays higher, the queue
//! stays full and the retransmissions overflow it again.

use crate::common;

use common::{estats, run_scenario, scenario, shipped_one_point_without_cpu_model};
use tcplab_lab::result::Point;

const STARTUP: f64 = 0.0;
const DRAIN: f64 = 1.0;
const PROBE_BW: f64 = 2.0;
/// The up direction's queue, packets (`queue = "330pkt"`).
const QUEUE: u64 = 330;

/// bbr-loss's 0 % point for BBR over its full 15 s, sampled every 10 ms, the server's knob as given.
fn run(grow_out_of_order: bool) -> Point {
    let text = shipped_one_point_without_cpu_model("bbr-loss");
    let knob = format!("server.tcp.grow_window_out_of_order={grow_out_of_order}");
    let set = [
        "client.tcp.congestion_control=\"bbr\"",
        "path.up.loss.p=0.0",
        "test.series={interval=\"10ms\",vars=[\"X_BbrMode\"]}",
        knob.as_str(),
    ];
    run_scenario(&scenario(&text, &set), 1).points.remove(0)
}

/// The client's BBR mode and the up queue's backlog at each 10 ms sample, by time.
fn modes_and_queue(p: &Point) -> Vec<(f64, f64, u64)> {
    let lv = p.logvars.as_ref().expect("test.series");
    let i = lv.columns.iter().position(|c| c == "X_BbrMode").expect("X_BbrMode sampled");
    let end = lv.ends.iter().find(|e| e.side == "client").expect("the client's samples");
    let q = p.links.queue_series.as_ref().expect("links.queue_series");
    let up = q.directions.iter().find(|d| d.direction == "up").expect("the up direction sampled");
    end.rows
        .iter()
        .filter_map(|r| {
            let k = q.axis.t_s.iter().position(|t| (t - r[0]).abs() < 1e-6)?;
            Some((r[0], r[i], up.backlog_packets[k]))
        })
        .collect()
}

fn end(p: &Point, side: &str) -> tcplab_tcp::Estats {
    estats(p.connections.iter().find(|c| c.side == side).expect("both ends"))
}

#[test]
fn bbr_loss_drops_are_startups_and_ofo_window_growth_acks_at_once() {
    let (grow, fixed) = (run(true), run(false));
    let mut drops = Vec::new();
    for (name, p) in [("growth on out-of-order data", &grow), ("in-order growth only", &fixed)] {
        let up = &p.links.up;
        assert_eq!(up.drops_random_loss, 0, "{name}: no random loss at the 0 % point");
        // The receiver's window never held the sender back: it stays ahead of STARTUP's cwnd (1535
        // against 755 packets at the queue's first overflow, 0.37 s, with the rule).
        assert_eq!(end(p, "client").SndLimTimeRwin, 0.0, "{name}: the window limited the sender");
        let s = modes_and_queue(p);
        let exit = s.iter().position(|x| x.1 != STARTUP).expect("BBR leaves STARTUP");
        // STARTUP fills the queue to its limit (330 at 0.37 s in both runs) and leaves within 0.7 s.
        assert!(s[..exit].iter().any(|x| x.2 >= QUEUE - 1), "{name}: STARTUP filled the queue");
        assert!(s[exit].0 < 0.75, "{name}: STARTUP ended at {} s", s[exit].0);
        // DRAIN paces at a third of the rate the link drains: the queue only shrinks, no packet can find
        // it full. From PROBE_BW on it never comes near the limit again (its peak: 107 packets; 10 ms of
        // PROBE_BW's 1.25 gain adds about 20), so every drop-tail drop of the 15 s falls in STARTUP.
        let drain: Vec<u64> = s[exit..].iter().take_while(|x| x.1 == DRAIN).map(|x| x.2).collect();
        assert!(!drain.is_empty() && drain.windows(2).all(|w| w[1] <= w[0]), "{name}: DRAIN {drain:?}");
        let later = s[exit..].iter().skip_while(|x| x.1 != PROBE_BW).map(|x| x.2).max().expect("PROBE_BW");
        assert!(later < QUEUE / 2, "{name}: the queue reached {later} packets after STARTUP");
        drops.push(up.drops_queue_full);
    }
    // With the rule each out-of-order segment that grows rcv_ssthresh is ACKed at once; the window starts
    // at the whole 16 MiB space (Linux 6.10+) and reaches its ceiling early in the first loss episode
    // (0.44 s), after which SACKs are compressed again: fewer compressed ACKs than without the rule.
    let (with, without) = (end(&grow, "server").AcksCompressed, end(&fixed, "server").AcksCompressed);
    assert!(with > 0 && with < without, "compressed ACKs {with} with the rule, {without} without");
    // BBR takes an ACK's losses off cwnd on the ACK that marks them (Linux's `tp->lost`), so how densely
    // the receiver ACKs that episode no longer moves STARTUP's cwnd: the same drops either way (704 and
    // 704; while losses counted at their paced retransmissions, 1147 with the rule against 1074 without).
    let (a, b) = (drops[0] as f64, drops[1] as f64);
    assert!((a - b).abs() <= 0.01 * b, "drops with the rule {a} against {b} without");
    // Every drop is repaired by one retransmission (no spurious one, no retransmission lost twice
    // unrepaired): the retransmission count of docs/bbr.md is the drop count.
    for (p, d) in [(&grow, drops[0]), (&fixed, drops[1])] {
        assert_eq!(common::stream(p).retransmissions, d);
    }
}
