//! `classic/txqueuelen` (docs/classic.md § 5, "What caps the flight"): which of the lab's limits stops
//! the data in flight where the interface queue no longer does. Linux 2.4 would offer more window than
//! the lab does for iperf's 2 MB SO_RCVBUF (`sock_setsockopt` doubles it, `tcp_win_from_space` with
//! adv_win_scale 2 offers 3/4 of the double: 1.5 × the request), yet nothing moves, because the lab's
//! flight at txqueuelen 2000 is the send buffer's (2 MB of payload, 1381 segments of 1448), not the
//! window's. So a cap on either side below the queue ends the stalls; the counters alone do not say
//! which side capped the report's flight.

use crate::common;

use common::txqueuelen_sender as sender;
use tcplab_tcp::Estats;

/// The counters the report plots, for comparing two runs.
fn counters(e: &Estats) -> [u64; 5] {
    [e.SendStall, e.CongSignals, e.CongAvoid, e.SlowStart, e.OtherReductions]
}

#[test]
fn the_window_linux_2_4_offers_for_2mb_changes_no_counter() {
    let window_2_4 = 2_000_000u64 * 2 * 3 / 4;
    assert_eq!(window_2_4, 3_000_000);
    for q in [1000, 2000] {
        let shipped = sender(q, &[]);
        let offered = sender(q, &["server.tcp.recv_window_ratio=1.5"]);
        eprintln!("txqueuelen {q}: shipped {:?}, 2.4's window {:?}", counters(&shipped), counters(&offered));
        assert_eq!(shipped.MaxRwinRcvd, 2_000_000);
        assert_eq!(offered.MaxRwinRcvd, window_2_4);
        assert_eq!(counters(&shipped), counters(&offered), "txqueuelen {q}");
    }
}

#[test]
fn the_flight_at_txqueuelen_2000_is_the_send_buffers() {
    let at2000 = sender(2000, &[]);
    // Slow start to the send buffer and no further: one step per segment of 2 MB, less the initial window.
    let segments = 2_000_000u64 / 1448;
    assert_eq!(segments, 1381);
    assert!((segments - 4..=segments).contains(&at2000.SlowStart), "{}", at2000.SlowStart);
    assert_eq!((at2000.SendStall, at2000.CongAvoid), (0, 0));
    // Half the send buffer halves the flight, and then a queue of 1000 holds it: no stall, no
    // congestion avoidance (the sender is never cwnd-limited once slow start reaches the buffer).
    let at1000 = sender(1000, &["test.send_buffer=\"1MB\""]);
    eprintln!("txqueuelen 1000, 1 MB buffers: {:?}", counters(&at1000));
    assert_eq!((at1000.SendStall, at1000.CongSignals, at1000.CongAvoid), (0, 0, 0));
    assert!((1_000_000 / 1448 - 4..=1_000_000 / 1448).contains(&at1000.SlowStart), "{}", at1000.SlowStart);
    // And the shipped 2 MB at 1000 still stalls: the buffer's 1381 segments exceed the queue and path.
    let shipped = sender(1000, &[]);
    assert!(shipped.SendStall > 0 && shipped.CongAvoid > 0, "{:?}", counters(&shipped));
}
