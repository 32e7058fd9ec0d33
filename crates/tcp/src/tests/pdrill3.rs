//! Receive-window rules of Linux that the kernel's packetdrill selftests showed the `linux` personality
//! lacked (crates/packetdrill, issue 23): the initial window in whole segments (`tcp_rcv_neg_window`), a
//! segment past the window taken whole while nothing is unread, and a bare FIN taken at a zero window
//! (`tcp_rcv_zero_wnd_fin`).

use super::*;
use crate::config::AckPolicy;

/// A 20000-byte receive space, no timestamps unless asked (so segments carry the whole MSS 1460), Linux's
/// ACK policy (ATO 40 ms), and the three rules on or off together.
fn small_space(on: bool, timestamps: bool) -> TcpConfig {
    TcpConfig {
        recv_buffer: ByteSize::new(20_000),
        window_scaling: false,
        timestamps,
        initial_recv_window_whole_mss: on,
        whole_segment_past_window: on,
        fin_past_window: on,
        ack_policy: AckPolicy::Linux,
        ato_min: dur_ms(40),
        delayed_ack_timeout: dur_ms(200),
        ..cfg()
    }
}

/// The peer's SYN: MSS 1000, no window scale, timestamps when `ts`.
fn syn(ts: bool) -> TcpSegment {
    let s = inp(REMOTE_ISS, 0, SYN, 32_792, 0).mss(1000);
    if ts {
        s.ts(pts(0), 0)
    } else {
        s
    }
}

/// A server that answered `syn(ts)` and got the handshake's ACK at 10 ms; returns it and its SYN-ACK.
fn server(cfg: TcpConfig, with_ts: bool) -> (Connection, TcpSegment) {
    let mut c = Connection::listen(cfg, LOCAL_PORT, LOCAL_ISS);
    send!(c, time 0, syn(with_ts));
    let sent = transmit_all(&mut c, at(0));
    assert_eq!(sent.len(), 1);
    let ack = inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 257 * 128, 0);
    send!(c, time 10, if with_ts { ack.ts(pts(10), ts(0)) } else { ack });
    assert_eq!(c.state(), State::Established);
    recv_nothing!(c, time 10);
    (c, sent[0])
}

/// SO_RCVBUF 20000 with MSS 1460: Linux offers 13 whole segments, 18980 bytes (`tcp_select_initial_window`,
/// the kernel's `tcp_rcv_neg_window.pkt`). A passive open that agreed to timestamps rounds to the 1448
/// bytes each segment will carry (13 × 1448 = 18824); an active open does not know yet, so its SYN rounds
/// to 1460 whatever it offers. Off, the space itself goes out.
#[test]
fn test_syn_received_initial_window_whole_segments() {
    assert_eq!(server(small_space(true, false), false).1.window, 18_980);
    assert_eq!(server(small_space(true, true), true).1.window, 18_824);
    assert_eq!(server(small_space(false, false), false).1.window, 20_000);
    for (on, want) in [(true, 18_980), (false, 20_000)] {
        let mut c = Connection::connect(small_space(on, true), LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
        let sent = transmit_all(&mut c, at(0));
        assert_eq!(sent[0].window, want, "active open, rules {on}");
    }
    // A space above 65535 is rounded first and then capped, as Linux does: still 65535.
    let big = TcpConfig { recv_buffer: ByteSize::new(131_072), ..small_space(true, false) };
    assert_eq!(server(big, false).1.window, 65_535);
}

/// The peer sends 20000 bytes into the 18980-byte window with nothing unread: Linux takes all of it
/// (`tcp_sequence`: "Only accept this packet if receive queue is empty") and, as measured on 6.18, ACKs
/// it by the delayed-ACK timer with a zero window. A segment past the edge while data is unread is
/// dropped whole and answered with a duplicate ACK at once (`tcp_sequence`:
/// SKB_DROP_REASON_TCP_INVALID_END_SEQUENCE; measured through the kernel backend on 6.18 with the
/// kernel's `tcp_rcv_big_endseq` less its window and `nstat` lines). Off, the first one is trimmed too.
#[test]
fn test_established_segment_past_window_taken_whole_when_nothing_unread() {
    let (mut c, _) = server(small_space(true, false), false);
    send!(c, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 20_000));
    assert_eq!(c.readable(), 20_000, "taken whole");
    recv_nothing!(c, time 20);
    let t = c.poll_timeout().expect("the delayed-ACK timer");
    assert_eq!(t, at(60), "the delayed ACK, ATO 40 ms");
    c.on_timeout(t);
    let acks = transmit_all(&mut c, t);
    assert_eq!(acks.len(), 1);
    assert_eq!((acks[0].ack.0, acks[0].window), (REMOTE_ISS + 1 + 20_000, 0));

    // With 1000 bytes unread, 20000 more bytes arrive past the edge of the 19000 the ACK of the first
    // 1000 offered: none of them is taken, and a duplicate ACK goes at once.
    let (mut c, _) = server(small_space(true, false), false);
    send!(c, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 1000));
    let _ = transmit_all(&mut c, at(20));
    send!(c, time 30, inp(REMOTE_ISS + 1001, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 20_000));
    assert_eq!(c.readable(), 1000, "dropped whole");
    let acks = transmit_all(&mut c, at(30));
    assert_eq!(acks.iter().map(|a| a.ack.0).collect::<Vec<_>>(), [REMOTE_ISS + 1001], "a duplicate ACK at once");

    let (mut off, _) = server(small_space(false, false), false);
    send!(off, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 20_000));
    assert_eq!(off.readable(), 20_000, "20000 is the whole window without the rounding");
    let (mut off, _) = server(TcpConfig { recv_buffer: ByteSize::new(18_980), ..small_space(false, false) }, false);
    send!(off, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 20_000));
    assert_eq!(off.readable(), 18_980, "RFC 9293: trimmed to the window");
}

/// After 60000 bytes fill the window (taken whole, the kernel's `tcp_rcv_zero_wnd_fin.pkt`), the peer's
/// bare FIN finds a zero window: Linux takes it and ACKs it at once, ACK 60002 with the window still 0
/// (CLOSE-WAIT). Under RFC 9293 the FIN is a byte outside the window: refused with an ACK of 60001.
#[test]
fn test_established_bare_fin_at_zero_window() {
    for on in [true, false] {
        let (mut c, _) = server(small_space(on, false), false);
        send!(c, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, PSH_ACK, 257 * 128, 60_000));
        let mut acks = transmit_all(&mut c, at(20));
        if acks.is_empty() {
            let t = c.poll_timeout().expect("the delayed-ACK timer");
            c.on_timeout(t);
            acks = transmit_all(&mut c, t);
        }
        assert_eq!(acks.last().unwrap().window, 0);
        let end = acks.last().unwrap().ack.0;
        send!(c, time 100, inp(end, LOCAL_ISS + 1, FIN_ACK, 257 * 128, 0));
        let acks = transmit_all(&mut c, at(100));
        assert_eq!(acks.len(), 1, "an ACK at once, rules {on}");
        assert_eq!(acks[0].window, 0);
        if on {
            assert_eq!(acks[0].ack.0, REMOTE_ISS + 1 + 60_001);
            assert_eq!(c.state(), State::CloseWait);
        } else {
            assert_eq!(acks[0].ack.0, end);
            assert_eq!(c.state(), State::Established);
        }
    }
}
