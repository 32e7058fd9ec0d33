//! Resets, aborts, the SYN retry limit, shutdown for reading and the window-scale space: the TCP
//! features the packetdrill interpreter's socket layer uses, through the public API.

use tcplab_tcp::{reset_for, ConnError, Connection, State, TcpConfig, TxRoom};
use tcplab_units::{ByteSize, Instant};
use tcplab_wire::{SeqNumber, TcpFlags, TcpSegment};

fn linux() -> TcpConfig {
    TcpConfig::personality("linux").unwrap()
}

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

fn drain(c: &mut Connection, now: Instant) -> Vec<TcpSegment> {
    std::iter::from_fn(|| c.poll_transmit(now, TxRoom::Free)).take(1000).collect()
}

/// Runs a handshake between a client and a server; both ESTABLISHED at `ms(1)`.
fn pair(cfg: TcpConfig) -> (Connection, Connection) {
    let mut a = Connection::connect(cfg.clone(), 40000, 80, 1000);
    let mut b = Connection::listen(cfg, 80, 9000);
    let syn = drain(&mut a, ms(0)).remove(0);
    b.on_segment(ms(0), &syn);
    let synack = drain(&mut b, ms(0)).remove(0);
    a.on_segment(ms(1), &synack);
    for s in drain(&mut a, ms(1)) {
        b.on_segment(ms(1), &s);
    }
    assert!(a.is_established() && b.is_established());
    (a, b)
}

#[test]
fn reset_for_follows_rfc_9293_3_10_7_1() {
    let ack = TcpSegment {
        seq: SeqNumber(5),
        ack: SeqNumber(77),
        flags: TcpFlags::ACK,
        src_port: 1,
        dst_port: 2,
        ..Default::default()
    };
    let r = reset_for(&ack).unwrap();
    assert_eq!((r.seq, r.flags, r.src_port, r.dst_port), (SeqNumber(77), TcpFlags::RST, 2, 1));
    let syn = TcpSegment { seq: SeqNumber(5), flags: TcpFlags::SYN, payload_len: 10, ..Default::default() };
    let r = reset_for(&syn).unwrap();
    assert_eq!((r.seq, r.ack, r.flags), (SeqNumber(0), SeqNumber(16), TcpFlags::RST | TcpFlags::ACK));
    assert!(reset_for(&TcpSegment { flags: TcpFlags::RST, ..Default::default() }).is_none());
}

#[test]
fn abort_sends_rst_ack_and_the_peer_reports_reset() {
    let (mut a, mut b) = pair(linux());
    a.abort(ms(2));
    assert_eq!(a.state(), State::Closed);
    let out = drain(&mut a, ms(2));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, TcpFlags::RST | TcpFlags::ACK);
    assert_eq!(out[0].seq, a.snd_nxt());
    assert!(out[0].options.timestamps.is_some(), "Linux's active reset carries timestamps");
    b.on_segment(ms(3), &out[0]);
    assert_eq!(b.state(), State::Closed);
    assert_eq!(b.error(), Some(ConnError::Reset));
    assert!(drain(&mut a, ms(4)).is_empty(), "one reset only");
}

/// An abort from the application between the call before it and the call after it (the engine's order):
/// the call before found the windows closed, and the reset still leaves at the call after.
#[test]
fn abort_behind_closed_windows_still_sends_the_reset() {
    let (mut a, _b) = pair(linux());
    assert!(a.send(1_000_000) > 0);
    let sent = std::iter::from_fn(|| a.poll_transmit_before_app(ms(2), TxRoom::Free)).take(1000).count();
    assert_eq!(sent, 10, "the initial window (RFC 6928) goes, then cwnd is closed");
    a.abort(ms(2));
    let out = drain(&mut a, ms(2));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].flags, TcpFlags::RST | TcpFlags::ACK);
    assert_eq!(out[0].seq, a.snd_nxt());
}

/// The server of a fresh pair, at `ms(3)`, just after the quick ACK of 1,000 bytes it received and read:
/// a pure ACK with nothing else to send.
fn after_a_pure_ack(cfg: TcpConfig) -> Connection {
    let (mut a, mut b) = pair(cfg);
    assert_eq!(a.send(1000), 1000);
    for s in drain(&mut a, ms(2)) {
        b.on_segment(ms(3), &s);
    }
    assert_eq!(b.recv(u64::MAX), 1000);
    let ack = b.poll_transmit(ms(3), TxRoom::Free).expect("a quick ACK");
    assert_eq!((ack.payload_len, ack.flags), (0, TcpFlags::ACK));
    b
}

/// A write or a close from the application between a pure ACK and the call after it (at one instant):
/// the ACK found nothing else to send, and the data or the FIN still leaves at the call after.
#[test]
fn a_write_or_close_behind_a_pure_ack_still_sends() {
    for close in [false, true] {
        let mut b = after_a_pure_ack(linux());
        if close {
            b.close();
        } else {
            assert_eq!(b.send(500), 500);
        }
        let out = drain(&mut b, ms(3));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].payload_len, out[0].flags.fin()), (if close { 0 } else { 500 }, close));
    }
}

/// RFC 2861 validation outside Linux's rule decays cwnd by the clock: a call long after a pure ACK, with no
/// event between, still validates (the pure ACK's shortcut for the call after it is kept off there).
#[test]
fn rfc2861_decay_runs_at_a_later_call_after_a_pure_ack() {
    let mut cfg = linux();
    cfg.cwv = tcplab_tcp::config::Cwv::Rfc2861;
    let mut b = after_a_pure_ack(cfg);
    let cwnd = b.cwnd();
    // Ten seconds idle, many RTOs: RFC 2861 §3 halves the unused window.
    assert!(b.poll_transmit(ms(10_003), TxRoom::Free).is_none());
    assert_eq!(b.cwnd(), cwnd / 2, "cwnd {cwnd} did not decay");
}

#[test]
fn syn_sent_answers_a_bad_ack_with_a_reset_and_a_reset_refuses() {
    let mut a = Connection::connect(linux(), 40000, 80, 1000);
    let syn = drain(&mut a, ms(0)).remove(0);
    let bad = TcpSegment {
        src_port: 80,
        dst_port: 40000,
        seq: SeqNumber(7),
        ack: SeqNumber(555),
        flags: TcpFlags::SYN | TcpFlags::ACK,
        window: 1000,
        ..Default::default()
    };
    a.on_segment(ms(1), &bad);
    let out = drain(&mut a, ms(1));
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].seq, out[0].flags), (SeqNumber(555), TcpFlags::RST));
    assert_eq!(a.state(), State::SynSent);
    let refuse = TcpSegment { ack: syn.seq + 1, flags: TcpFlags::RST | TcpFlags::ACK, ..bad };
    a.on_segment(ms(2), &refuse);
    assert_eq!((a.state(), a.error()), (State::Closed, Some(ConnError::Refused)));
}

#[test]
fn syn_retries_end_in_etimedout() {
    let cfg = TcpConfig { syn_retries: 2, ..linux() };
    let mut a = Connection::connect(cfg, 40000, 80, 1000);
    let mut syns = drain(&mut a, ms(0)).len();
    let mut now = ms(0);
    while let Some(t) = a.poll_timeout() {
        now = t;
        a.on_timeout(now);
        syns += drain(&mut a, now).len();
    }
    assert_eq!(syns, 3, "the SYN and two retransmissions");
    assert_eq!((a.state(), a.error()), (State::Closed, Some(ConnError::TimedOut)));
    assert_eq!(now, ms(7000), "1 s + 2 s + 4 s of RTO");
}

#[test]
fn data_after_close_resets_only_when_reads_are_shut() {
    for shut in [false, true] {
        let (mut a, _b) = pair(linux());
        a.close();
        if shut {
            a.shutdown_read();
        }
        let fin = drain(&mut a, ms(2));
        assert!(fin[0].flags.fin());
        let data = TcpSegment {
            src_port: 80,
            dst_port: 40000,
            seq: a.rcv_nxt(),
            ack: fin[0].seq + 1,
            flags: TcpFlags::ACK,
            window: 1000,
            payload_len: 100,
            ..Default::default()
        };
        a.on_segment(ms(3), &data);
        let out = drain(&mut a, ms(3));
        if shut {
            assert_eq!(out.len(), 1);
            assert_eq!((out[0].seq, out[0].flags), (data.ack, TcpFlags::RST));
            assert_eq!((a.state(), a.error()), (State::Closed, Some(ConnError::Reset)));
        } else {
            assert_eq!(a.readable(), 100);
            assert_eq!(a.state(), State::FinWait2);
        }
    }
}

#[test]
fn wscale_space_sets_the_shift() {
    let mut cfg = linux();
    cfg.wscale_space = ByteSize::new(15 << 20);
    let mut a = Connection::connect(cfg, 40000, 80, 1000);
    let syn = drain(&mut a, ms(0)).remove(0);
    assert_eq!(syn.options.window_scale, Some(8), "15 MiB needs shift 8, as Linux's tcp_rmem[2] gives");
    let mut a = Connection::connect(linux(), 40000, 80, 1000);
    let syn = drain(&mut a, ms(0)).remove(0);
    assert_eq!(syn.options.window_scale, Some(1), "0: from recv_buffer × recv_window_ratio (80 KiB)");
}
