//! Linux receive rules that the kernel's packetdrill selftests showed the `linux` personality lacked
//! (crates/packetdrill, issue 23, fourth round): a segment that crosses the window's right edge is taken
//! whole, in order or not, when nothing waits to be read, and dropped whole otherwise (`tcp_sequence`;
//! the kernel's `tcp_ooo-before-and-after-accept` and `tcp_rcv_big_endseq`).

use super::*;

/// A server with SO_RCVBUF 64 KiB (the SYN-ACK's window 64240, scale 1), no timestamps, window growth
/// off so the window stays where the SYN-ACK put it, and `whole_segment_past_window` on or off.
fn server(on: bool) -> Connection {
    let cfg = TcpConfig {
        timestamps: false,
        grow_window: false,
        initial_recv_window_whole_mss: true,
        whole_segment_past_window: on,
        ..cfg()
    };
    let mut c = Connection::listen(cfg, LOCAL_PORT, LOCAL_ISS);
    send!(c, time 0, inp(REMOTE_ISS, 0, SYN, 32_792, 0).mss(1000).wscale(7).sack_permitted());
    let sent = transmit_all(&mut c, at(0));
    assert_eq!((sent.len(), sent[0].window), (1, 64_240), "the SYN-ACK offers 44 whole segments");
    send!(c, time 10, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 257, 0));
    assert_eq!(c.state(), State::Established);
    recv_nothing!(c, time 10);
    c
}

/// The peer sends 39000 bytes starting 2000 bytes past RCV.NXT, then 60000 more: both begin inside the
/// 64240-byte window and the second ends 34760 bytes past it. Linux queues both whole (`tcp_data_queue`
/// checks only the start; the kernel's `tcp_ooo-before-and-after-accept` expects `sack 2001:101001`
/// with tcp_rmem[1] 131072, a 64240-byte window); once the hole is filled RCV.NXT jumps past all of it.
/// Off, the second is trimmed at the edge and the SACK block ends there (RFC 9293 §3.10.7.4).
#[test]
fn test_established_out_of_order_segment_queued_whole_past_the_edge() {
    let first = REMOTE_ISS + 1;
    let base = SeqNumber(first);
    let sacked = |c: &mut Connection, t: u64| {
        let got = transmit_all(c, at(t));
        assert_eq!(got.len(), 1, "one duplicate ACK");
        assert_eq!(got[0].ack, base, "nothing in order yet");
        got[0].options.sack.as_slice().iter().map(|b| (b.left - base, b.right - base)).collect::<Vec<_>>()
    };
    for (on, right) in [(true, 101_000), (false, 64_240)] {
        let mut c = server(on);
        send!(c, time 20, inp(first + 2000, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 39_000));
        assert_eq!(sacked(&mut c, 20), [(2000, 41_000)]);
        send!(c, time 21, inp(first + 41_000, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 60_000));
        assert_eq!(sacked(&mut c, 21), [(2000, right)], "rule {on}");
        send!(c, time 22, inp(first, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 2000));
        let got = transmit_all(&mut c, at(22));
        assert_eq!(got.last().map(|s| s.ack - base), Some(right), "the hole filled, rule {on}");
    }
}

/// A segment that begins at or past the right edge is still dropped whole: only the start is checked.
#[test]
fn test_established_out_of_order_segment_past_the_edge_dropped() {
    let first = REMOTE_ISS + 1;
    let mut c = server(true);
    send!(c, time 20, inp(first + 64_240, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 1000));
    let got = transmit_all(&mut c, at(20));
    assert_eq!(got.len(), 1, "an ACK for the out-of-window segment");
    assert!(got[0].options.sack.is_empty(), "nothing queued: {}", describe(&got[0]));
}

/// 1000 bytes unread, then a segment from inside the window to past its edge, out of order: Linux drops
/// it whole (`tcp_sequence`: "Only accept this packet if receive queue is empty"; the kernel's
/// `tcp_rcv_big_endseq` line 30, which 6.18 passes through the kernel backend) and sends a duplicate
/// ACK with no SACK block; off, the part inside the window is queued and SACKed.
#[test]
fn test_established_segment_past_the_edge_dropped_while_data_unread() {
    let first = REMOTE_ISS + 1;
    for (on, sacked) in [(true, false), (false, true)] {
        let mut c = server(on);
        send!(c, time 20, inp(first, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 1000));
        let _ = transmit_all(&mut c, at(20));
        assert_eq!(c.readable(), 1000);
        send!(c, time 30, inp(first + 2000, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 70_000));
        let got = transmit_all(&mut c, at(30));
        assert_eq!(got.len(), 1, "one duplicate ACK at once, rule {on}");
        assert_eq!(got[0].ack, SeqNumber(first + 1000));
        assert_eq!(!got[0].options.sack.is_empty(), sacked, "rule {on}: {}", describe(&got[0]));
    }
}

/// A GRO super-packet of 10000 bytes in segments of 1000 (Google's `gro/gro-mss-option`: the SYN said
/// MSS 1100): Linux measures the peer's segment size from `gso_size` (`tcp_measure_rcv_mss`), so
/// `tcpi_rcv_mss` reads 1000; the same payload as one plain segment reads 10000.
#[test]
fn test_established_gro_packet_measures_its_segment_size() {
    for (gso, want) in [(Some(1000), 1000), (None, 10_000)] {
        let mut c = server(true);
        let seg = inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 10_000);
        match gso {
            Some(g) => c.on_segment_gro(at(20), &seg, g),
            None => send!(c, time 20, seg),
        }
        assert_eq!(c.readable(), 10_000);
        assert_eq!(c.tcp_info(at(20)).rcv_mss, want, "gso {gso:?}");
    }
}
