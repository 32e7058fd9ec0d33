//! `classic/txqueuelen` (docs/classic.md § 5, "A third pass"): the report's 2 MB iperf buffers with Linux
//! 2.4's own arithmetic instead of the lab's plain 2 MB. `sock_setsockopt` doubles both requests; the
//! sender's 4 MB is charged per skb by truesize, about 1.8 KB for a 1448-byte segment (`tcp_alloc_pskb`:
//! the MSS plus MAX_TCP_HEADER, aligned, plus struct sk_buff), so it holds some 2,222 segments; the
//! receiver offers 3/4 of its 4 MB (`tcp_win_from_space`, adv_win_scale 2): 3 MB. Both exceed every queue
//! of the sweep plus the few segments the path holds, so by 2.4's own arithmetic the stalls never end,
//! not even at txqueuelen 2000 (where the shipped scenario's 2 MB of payload happens to stop the flight
//! just short of the queue). The report's "no SendStall past 200" therefore needs a cap 2.4's arithmetic
//! on a 2 MB request does not give; and the run repeats no ACK, so DupAcksIn stays 0 without one either.

use crate::common;

use common::txqueuelen_sender;
use tcplab_tcp::Estats;

/// The sender's counters after 1 s with 2.4's doubled, truesize-charged buffers.
fn sender(txqueuelen: u32) -> Estats {
    txqueuelen_sender(
        txqueuelen,
        &["test.send_buffer=\"4MB\"", "client.tcp.send_buffer_truesize=\"1800B\"", "server.tcp.recv_window_ratio=1.5"],
    )
}

#[test]
fn linux_2_4s_own_buffers_for_2mb_leave_the_largest_queue_stalling() {
    // What 2.4 makes of the 2 MB requests, in segments of 1448 bytes.
    let send_skbs = 4_000_000u64 / 1800;
    let window = 2_000_000u64 * 2 * 3 / 4;
    assert_eq!(send_skbs, 2222);
    assert_eq!(window / 1448, 2071);
    // Both exceed txqueuelen 2000 plus the handful of segments the 70 µs path holds at 1 Gbit/s.
    assert!(send_skbs > 2000 + 6 && window / 1448 > 2000 + 6);

    let at2000 = sender(2000);
    eprintln!(
        "txqueuelen 2000, 2.4's buffers: SendStall {} CongSignals {} CongAvoid {} SlowStart {} DupAcksIn {} \
         FastRetran {} MaxRwinRcvd {}",
        at2000.SendStall,
        at2000.CongSignals,
        at2000.CongAvoid,
        at2000.SlowStart,
        at2000.DupAcksIn,
        at2000.FastRetran,
        at2000.MaxRwinRcvd
    );
    assert_eq!(at2000.MaxRwinRcvd, window);
    // Slow start runs past the queue (one step per segment: the queue, the path, less the initial window)
    // and the queue overflows: a stall, CWR, and congestion avoidance from there on.
    assert!(at2000.SlowStart >= 2000, "{}", at2000.SlowStart);
    assert!(at2000.SendStall >= 1, "{}", at2000.SendStall);
    assert_eq!(at2000.CongSignals, at2000.SendStall);
    assert!(at2000.CongAvoid > 0);
    // Nothing is lost and nothing is repeated: the receiver reads as it receives, so it never sends an ACK
    // at SND.UNA (2.4 would send one only as a window update after a read that frees half the clamp), and
    // even web100's rule, which would count a bare segment at SND.UNA, finds none in this run.
    assert_eq!((at2000.FastRetran, at2000.DupAcksIn), (0, 0));
}
