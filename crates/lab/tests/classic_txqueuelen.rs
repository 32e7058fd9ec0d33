//! The txqueuelen/web100 experiment (`classic/txqueuelen`, docs/classic.md §5), shortened to 1 s points:
//! what Linux 2.4's stall path and web100's counters give on back-to-back gigabit hosts.

use crate::common;

use common::{estats, run_scenario, scenario, stream};
use tcplab_lab::result::Point;
use tcplab_lab::SHIPPED;

fn point(q: u32) -> Point {
    let text = SHIPPED.iter().find(|s| s.name == "classic/txqueuelen").expect("shipped").text;
    let set = [format!("client.host.txqueuelen={q}"), "test.duration=\"1s\"".to_string()];
    let set: Vec<&str> = set.iter().map(String::as_str).collect();
    run_scenario(&scenario(text, &set), 1).points.remove(0)
}

fn client(p: &Point) -> tcplab_tcp::Estats {
    estats(p.connections.iter().find(|c| c.side == "client").expect("a client end")).clone()
}

/// Every point: goodput is the line rate less framing, 1 Gbit/s × 1448/1538 = 941.48 Mbit/s; nothing is
/// lost, so no fast retransmit; the receiver ACKs every second segment (SegsIn half of SegsOut); web100
/// counts a congestion signal on every call of 2.4's `tcp_enter_cwr`, so CongSignals = SendStall.
#[test]
fn txqueuelen_goodput_is_the_line_rate_and_every_stall_is_a_congestion_signal() {
    let line = 1e9 * 1448.0 / 1538.0;
    for q in [10, 300, 2000] {
        let p = point(q);
        let g = stream(&p).throughput_bps;
        assert!((g / line - 1.0).abs() < 0.002, "txqueuelen {q}: {g} vs {line}");
        let e = client(&p);
        assert_eq!(e.CongSignals, e.SendStall, "txqueuelen {q}");
        assert_eq!((e.FastRetran, e.SegsRetrans), (0, 0), "txqueuelen {q}");
        let half = e.SegsOut as f64 / 2.0;
        assert!((e.SegsIn as f64 / half - 1.0).abs() < 0.01, "txqueuelen {q}: {} in, {} out", e.SegsIn, e.SegsOut);
    }
}

/// 2.4's `tcp_ack` grows cwnd only when the packets in flight before an ACK were at least cwnd. With a
/// queue of 2000 frames nothing stalls, ssthresh stays infinite (no congestion avoidance at all), and
/// slow start stops once cwnd passes the 2 MB receive window (2,000,000 / 1448 = 1381 segments): about
/// 1381 SlowStart steps from IW 3, not one per ACK. Moderation runs on dubious ACKs only, none here.
#[test]
fn txqueuelen_2000_grows_cwnd_only_while_it_is_filled() {
    let e = client(&point(2000));
    assert_eq!((e.SendStall, e.CongSignals, e.CongAvoid), (0, 0, 0));
    assert!((1370..=1385).contains(&e.SlowStart), "SlowStart {}", e.SlowStart);
    assert!(e.MaxSsCwnd <= 1383 * 1448, "MaxSsCwnd {}", e.MaxSsCwnd);
    assert!(e.OtherReductions <= 2, "OtherReductions {}", e.OtherReductions);
}

/// Stalls fall with the queue, but they do not stop at 300 as in the 2003 report: in the lab the flight
/// is bounded only by cwnd and the 1381-segment receive window, so after a stall cwnd climbs back in
/// congestion avoidance until a queue of 300 overflows again (docs/classic.md §5, what stays open).
#[test]
fn txqueuelen_stalls_fall_with_the_queue_and_persist_below_the_receive_window() {
    let (s10, s300) = (client(&point(10)).SendStall, client(&point(300)).SendStall);
    assert!(s10 > 100 * s300 && s300 > 0, "{s10} {s300}");
}

fn point_with(q: u32, set: &[&str]) -> Point {
    let text = SHIPPED.iter().find(|s| s.name == "classic/txqueuelen").expect("shipped").text;
    let mut all = vec![format!("client.host.txqueuelen={q}"), "test.duration=\"1s\"".to_string()];
    all.extend(set.iter().map(|s| s.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run_scenario(&scenario(text, &all), 1).points.remove(0)
}

/// The report's stalls ending between 200 and 300 and its CongAvoid and CongSignals at zero past 300 are
/// what a cap on the data in flight between about 206 and 306 segments (the queue plus the 6 segments the
/// back-to-back path holds) gives: a what-if with a 400 KB receive window (400,000 / 1448 = 276 segments;
/// 2.4 would offer that for a SO_RCVBUF clamped to 256 KiB by rmem_max, ¾ of twice 262,144 = 393,216 bytes,
/// docs/classic.md § 5). Below the cap the queue overflows as before; at and above 300 nothing stalls,
/// ssthresh is never set, and cwnd grows in slow start until the window stops the flight (SlowStart = the
/// window in segments less IW). The report's other counters still do not appear: nothing here makes the
/// receiver send an ACK at SND.UNA (DupAcksIn), so no dubious ACK moderates cwnd (OtherReductions).
#[test]
fn txqueuelen_a_flight_cap_below_the_queue_stops_stalls_and_congestion_avoidance() {
    let window = ["test.recv_buffer=\"400KB\""];
    let e = client(&point_with(200, &window));
    assert!(e.SendStall > 0 && e.CongAvoid > 0, "txqueuelen 200: {} stalls, {} CongAvoid", e.SendStall, e.CongAvoid);
    for q in [300, 2000] {
        let p = point_with(q, &window);
        let e = client(&p);
        assert_eq!((e.SendStall, e.CongSignals, e.CongAvoid), (0, 0, 0), "txqueuelen {q}");
        assert!((270..=276).contains(&e.SlowStart), "txqueuelen {q}: SlowStart {}", e.SlowStart);
        // web100's DupAcksIn (`dup_acks_in = "web100"`) counts the receiver's FIN, a bare segment at SND.UNA.
        assert_eq!(e.DupAcksIn, 1, "txqueuelen {q}");
        assert!(e.OtherReductions <= 1, "txqueuelen {q}: OtherReductions {}", e.OtherReductions);
        let line = 1e9 * 1448.0 / 1538.0;
        assert!((stream(&p).throughput_bps / line - 1.0).abs() < 0.002, "txqueuelen {q}");
    }
}

/// web100 counts in DupAcksIn every pure ACK whose ACK number is SND.UNA, window updates included
/// (`web100_update_segrecv`, modelled by `dup_acks_in = "web100"` in `linux-2.4`); the lab's receiver reads
/// each segment as it arrives, so it never has a window to reopen and never repeats an ACK: DupAcksIn is
/// 1 at every queue length, the receiver's FIN at the end (published: rising with txqueuelen), and with it
/// no dubious ACKs that would moderate cwnd in 2.4's `tcp_try_to_open` (OtherReductions stays at most 1).
#[test]
fn txqueuelen_the_receiver_sends_no_ack_at_snd_una() {
    for q in [10, 100, 1000] {
        let e = client(&point(q));
        assert_eq!(e.DupAcksIn, 1, "txqueuelen {q}");
        assert!(e.OtherReductions <= 1, "txqueuelen {q}: OtherReductions {}", e.OtherReductions);
    }
}
