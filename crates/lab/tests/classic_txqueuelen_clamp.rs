//! `classic/txqueuelen` (docs/classic.md § 5) with iperf's 2 MB buffer requests clamped by Linux 2.4's
//! defaults: `sock_setsockopt` caps SO_SNDBUF and SO_RCVBUF at `wmem_max`/`rmem_max` (65,535 unless raised)
//! and doubles them, 131,070 bytes, of which 2.4 offers 3/4 as the window (`tcp_win_from_space` with
//! adv_win_scale 2): 98,302 bytes, 67 segments of 1448. The what-if shows the report's shape (stalls that
//! end, then no congestion avoidance) with its step at txqueuelen 50-100 instead of the report's 200-300,
//! which is why the shipped scenario does not use it: the report's hosts had their limits raised.

use crate::common;

use common::txqueuelen_sender;
use tcplab_tcp::Estats;

fn sender(txqueuelen: u32) -> Estats {
    txqueuelen_sender(txqueuelen, &["test.recv_buffer=\"98302B\"", "test.send_buffer=\"131070B\""])
}

#[test]
fn default_buffer_limits_end_the_stalls_between_50_and_100() {
    let window = 65_535u64 * 2 * 3 / 4;
    assert_eq!(window, 98_302);
    assert_eq!(window / 1448, 67);
    let at50 = sender(50);
    let at100 = sender(100);
    eprintln!(
        "txqueuelen 50: SendStall {} CongAvoid {}; 100: SendStall {} CongAvoid {} SlowStart {}",
        at50.SendStall, at50.CongAvoid, at100.SendStall, at100.CongAvoid, at100.SlowStart
    );
    // A queue of 50 is below the 67-segment flight less the few the path holds: it still overflows.
    assert!(at50.SendStall > 0 && at50.CongAvoid > 0);
    // A queue of 100 holds the whole flight: no stall, and the window, not cwnd, limits the sender.
    assert_eq!((at100.SendStall, at100.CongSignals, at100.CongAvoid), (0, 0, 0));
    // Slow start ran up to the window and stopped there: one step per segment of the window, less IW.
    assert!((60..=67).contains(&at100.SlowStart), "{}", at100.SlowStart);
}
