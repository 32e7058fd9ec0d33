//! `classic/txqueuelen` (docs/classic.md § 5) read with web100's own counting code, not only its variable
//! list: the web100 patch (web100/linux-web100, the 2.6-era patch; the 2.4 patch for web100 2.1 is not
//! public) counts DupAcksIn in `web100_update_segrecv`, which `tcp_v4_rcv` calls for every segment before
//! `tcp_v4_do_rcv`, so before `tcp_ack` moves SND.UNA: a segment without payload is a duplicate when its
//! ACK equals SND.UNA on arrival, window updates and a bare FIN included. `linux-2.4` counts so
//! (`dup_acks_in = "web100"`); these tests pin what that gives on the report's setup, 1 s a point.

use crate::common;

use common::{estats, run_scenario, scenario, stream};
use tcplab_lab::result::Point;
use tcplab_lab::SHIPPED;
use tcplab_tcp::Estats;

fn point(q: u32, extra: &[&str]) -> Point {
    let text = SHIPPED.iter().find(|s| s.name == "classic/txqueuelen").expect("shipped").text;
    let mut set = vec![format!("client.host.txqueuelen={q}"), "test.duration=\"1s\"".to_string()];
    set.extend(extra.iter().map(|s| s.to_string()));
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    run_scenario(&scenario(text, &set), 1).points.remove(0)
}

/// The counters with DupAcksIn left out, to compare two runs on everything else.
fn without_dup_acks_in(e: &Estats) -> Estats {
    let mut e = e.clone();
    e.DupAcksIn = 0;
    e
}

fn client(p: &Point) -> Estats {
    estats(p.connections.iter().find(|c| c.side == "client").expect("a client end")).clone()
}

const RFC5681: &[&str] = &["client.tcp.dup_acks_in=\"rfc5681\"", "server.tcp.dup_acks_in=\"rfc5681\""];

/// On the shipped setup the receiver keeps up with the line and never repeats an ACK, so web100's rule
/// finds exactly one segment at SND.UNA: the receiver's FIN, sent after its ACK of the sender's FIN.
/// RFC 5681 counts none (a FIN is no duplicate). The definition moves that counter only: every other
/// counter of the sender is the same under both, at a small, the default and the largest queue.
#[test]
fn web100_finds_one_ack_at_snd_una_the_receivers_fin_and_changes_nothing_else() {
    for q in [10, 100, 2000] {
        let (web100, rfc) = (client(&point(q, &[])), client(&point(q, RFC5681)));
        assert_eq!((web100.DupAcksIn, rfc.DupAcksIn), (1, 0), "txqueuelen {q}");
        assert_eq!(without_dup_acks_in(&web100), without_dup_acks_in(&rfc), "txqueuelen {q}");
        assert_eq!((web100.FastRetran, web100.SegsRetrans), (0, 0), "txqueuelen {q}");
    }
}

/// What web100's DupAcksIn needs, shown with a receiver that cannot keep up: one core charged 10 µs per
/// KB copied (`host.cpu`), so its reads lag, its window closes and reopens, and each reopening is a
/// pure ACK at SND.UNA with a larger window (2.4's `cleanup_rbuf` window update). web100 counts them
/// (53 in the first second); RFC 5681 counts none (the window changed). They widen the window, so 2.4's
/// `tcp_ack_is_dubious` passes them (FLAG_WIN_UPDATE) and nothing is moderated: OtherReductions stays
/// at 1. The rate is the receiver's, 8 bit / 10 ns = 819.2 Mbit/s of payload and then some on the
/// first second's buffer, not the report's 941: the report's receiver kept up, which is why this is a
/// what-if and not the shipped setup.
#[test]
fn web100_counts_the_window_updates_of_a_receiver_that_falls_behind() {
    let slow = "server.host.cpu={cores=1,per_kb_copy=\"10us\"}";
    let p = point(100, &[slow]);
    let (web100, rfc) = (client(&p), client(&point(100, &[slow, RFC5681[0], RFC5681[1]])));
    assert_eq!(web100.DupAcksIn, 53);
    assert_eq!(rfc.DupAcksIn, 0);
    assert_eq!(without_dup_acks_in(&web100), without_dup_acks_in(&rfc));
    assert!(web100.SndLimTransRwin > 50, "window-limited {} times", web100.SndLimTransRwin);
    assert_eq!((web100.OtherReductions, web100.FastRetran), (1, 0));
    let g = stream(&p).throughput_bps;
    assert!((815e6..835e6).contains(&g), "{g}");
}

/// web100's other counters as its code counts them: `tcp_enter_cwr` calls `web100_update_congestion` on
/// every call, in CWR or not, and `tcp_transmit_skb` counts SendStall beside it, so CongSignals =
/// SendStall; `tcp_reno_cong_avoid` counts SlowStart while cwnd ≤ ssthresh and CongAvoid above it, once
/// per cwnd-limited call (2.4: `tcp_ack`'s `prior_in_flight >= snd_cwnd`), so one stall puts the sender
/// in congestion avoidance for the rest of the run (some 40,000 calls a second, one per ACK), and
/// SlowStart is the initial slow start (about txqueuelen + 4 steps) plus one step per stall. The 1 s
/// figures: 380 stalls, 393 SlowStart at 10; 2 and 306 at 300; 1 and 1,005 at 1000; at 2000 the send
/// buffer stops the flight first: no stall, no congestion avoidance, 1,379 SlowStart.
#[test]
fn web100_congestion_counters_follow_the_stalls() {
    for (q, stalls, slow_start) in [(10, 380, 393), (300, 2, 306), (1000, 1, 1005), (2000, 0, 1379)] {
        let e = client(&point(q, &[]));
        assert_eq!((e.SendStall, e.CongSignals, e.SlowStart), (stalls, stalls, slow_start), "txqueuelen {q}");
        if stalls > 0 {
            assert!((37_000..42_000).contains(&e.CongAvoid), "txqueuelen {q}: CongAvoid {}", e.CongAvoid);
        } else {
            assert_eq!(e.CongAvoid, 0);
        }
        assert_eq!((e.OtherReductions, e.FastRetran), (1, 0), "txqueuelen {q}");
    }
}
