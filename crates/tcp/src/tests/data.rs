//! ESTABLISHED data transfer: acknowledgement generation (RFC 1122 §4.2.3.2 delayed ACK, RFC 5681 §4.2
//! immediate ACKs for out-of-order data and filled holes, RFC 2018 SACK blocks, RFC 2883 D-SACK),
//! segment acceptability (RFC 9293 §3.10.7.4), and the Nagle algorithm (RFC 896, RFC 1122 §4.2.3.4).
//!
//! Receiver-side arithmetic used throughout (client fixture, 64 KiB buffer, scale 1): after the
//! handshake RCV.NXT = 50001 and the advertised right edge RCV.ADV = 50001 + 65536 = 115537. The window
//! field is (RCV.ADV − RCV.NXT) >> 1, rounded up; unread data keeps the right edge where it is, so
//! the window shrinks by what arrives until the application reads.

use super::pair::{assert_log, log_since, Fate, Pair, Side};
use super::*;

/// Two full-sized segments: the first is held (delayed ACK), the second is acknowledged at once
/// (RFC 1122 §4.2.3.2: "an ACK ... for at least every second full-sized segment").
/// The ACK: ack 52897, window (115537 − 52897) = 62640 bytes unread-limited → field 31320; TSecr is the
/// TSval of the first segment, which covered Last.ACK.sent (RFC 7323 §4.3), not of the second.
#[test]
fn test_established_recv_two_full_segments() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_001, ACK, 1448, 20, 11));
    recv_nothing!(c, time 20);
    assert_eq!(c.poll_timeout(), Some(at(220)), "delayed-ACK timer, 200 ms");
    send!(c, time 21, peer(51_449, 10_001, ACK, 1448, 21, 11));
    recv!(c, time 21, [out(10_001, 52_897, ACK, 31_320, 0).ts(22, pts(20))]);
    assert_eq!(c.poll_timeout(), None, "the ACK cancelled the delayed-ACK timer");

    // Reading 2896 bytes opens the window by less than it would need to double: no window update
    // (RFC 1122 §4.2.3.3 receiver SWS avoidance).
    assert_eq!(c.recv(u64::MAX), 2896);
    recv_nothing!(c, time 22);
}

/// One segment alone is acknowledged when the delayed-ACK timer expires, 200 ms after it arrived.
/// The application read it, but a 1000-byte opening is less than one MSS, so the right edge stays
/// (RFC 1122 §4.2.3.3): window = 115537 − 51001 = 64536 → field 32268.
#[test]
fn test_established_recv_single_segment_delayed_ack() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_001, PSH_ACK, 1000, 20, 11));
    assert_eq!(c.recv(u64::MAX), 1000);
    recv_nothing!(c, time 20);
    recv_nothing!(c, time 219);
    fire(&mut c, 220);
    recv!(c, time 220, [out(10_001, 51_001, ACK, 32_268, 0).ts(221, pts(20))]);
    assert_eq!(c.poll_timeout(), None);
}

/// Out-of-order segments are acknowledged at once with a duplicate ACK (RFC 5681 §4.2) whose first SACK
/// block holds the segment that triggered it (RFC 2018 §4); the segment filling the hole is acknowledged
/// at once too. Segments of 1448 bytes: #1 50001, #2 51449, #3 52897, #4 ends 55793... here #1 is late.
/// Out-of-order data is not "unread in-order data", so the dup ACKs keep window 65536 → 32768, and
/// their TSecr stays TS.Recent = the handshake's (an out-of-order segment does not cover
/// Last.ACK.sent). The final ACK: 4344 bytes unread, window 61192 → field 30596.
#[test]
fn test_established_recv_out_of_order() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(51_449, 10_001, ACK, 1448, 20, 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10)).sack(&[(51_449, 52_897)])]);
    send!(c, time 21, peer(52_897, 10_001, ACK, 1448, 21, 11));
    recv!(c, time 21, [out(10_001, 50_001, ACK, 32_768, 0).ts(22, pts(10)).sack(&[(51_449, 54_345)])]);
    assert_eq!(c.readable(), 0);
    send!(c, time 22, peer(50_001, 10_001, ACK, 1448, 22, 11));
    recv!(c, time 22, [out(10_001, 54_345, ACK, 30_596, 0).ts(23, pts(22))]);
    assert_eq!(c.readable(), 4344);
    assert_eq!(c.poll_timeout(), None);
    let e = c.estats();
    assert_eq!((e.DupAcksOut, e.DupAckEpisodes, e.ThruOctetsReceived), (2, 1, 4344));
}

/// Two holes: the SACK blocks list the most recently changed block first (RFC 2018 §4); filling the
/// first hole is ACKed at once and still reports the remaining block; filling the last one clears SACK.
#[test]
fn test_established_recv_out_of_order_two_holes() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(51_449, 10_001, ACK, 1448, 20, 11)); // #2
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10)).sack(&[(51_449, 52_897)])]);
    send!(c, time 21, peer(54_345, 10_001, ACK, 1448, 21, 11)); // #4
    recv!(c, time 21, [out(10_001, 50_001, ACK, 32_768, 0)
        .ts(22, pts(10))
        .sack(&[(54_345, 55_793), (51_449, 52_897)])]);
    // #1 fills the first hole: RCV.NXT 52897, 2896 unread → window 62640 → 31320.
    send!(c, time 22, peer(50_001, 10_001, ACK, 1448, 22, 11));
    recv!(c, time 22, [out(10_001, 52_897, ACK, 31_320, 0).ts(23, pts(22)).sack(&[(54_345, 55_793)])]);
    // #3 fills the last one: RCV.NXT 55793, 5792 unread → window 59744 → 29872.
    send!(c, time 23, peer(52_897, 10_001, ACK, 1448, 23, 11));
    recv!(c, time 23, [out(10_001, 55_793, ACK, 29_872, 0).ts(24, pts(23))]);
}

/// A duplicate segment (entirely below RCV.NXT) is not acceptable: it is answered at once with an ACK
/// (RFC 9293 §3.10.7.4) reporting it in a D-SACK block (RFC 2883 §4), and it does not move TS.Recent.
#[test]
fn test_established_recv_duplicate_segment() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_001, ACK, 1448, 20, 11));
    send!(c, time 21, peer(51_449, 10_001, ACK, 1448, 21, 11));
    recv!(c, time 21, [out(10_001, 52_897, ACK, 31_320, 0).ts(22, pts(20))]);
    send!(c, time 30, peer(50_001, 10_001, ACK, 1448, 30, 11));
    recv!(c, time 30, [out(10_001, 52_897, ACK, 31_320, 0).ts(31, pts(20)).sack(&[(50_001, 51_449)])]);
    assert_eq!(c.estats().ThruOctetsReceived, 2896);
}

/// A segment beyond the receive window (seq 50001 + 70000, window 65536) is not acceptable: ACK with
/// the current RCV.NXT and window, no SACK block (nothing was queued).
#[test]
fn test_established_recv_out_of_window() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(120_001, 10_001, ACK, 1448, 20, 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10))]);
    assert_eq!(c.estats().ThruOctetsReceived, 0);
}

/// A segment acknowledging data never sent (ack 10500 > SND.NXT 10001). RFC 9293 §3.10.7.4, ESTABLISHED,
/// fifth check: "If the ACK acks something not yet sent (SEG.ACK > SND.NXT), then send an ACK, drop the
/// segment, and return." The 1448 bytes it carries must not be accepted. (TS.Recent does move: the
/// segment passed the sequence check, where RFC 7323 Appendix D (R3) records its TSval.)
#[test]
fn test_established_recv_ack_of_unsent_data() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_500, ACK, 1448, 20, 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(20))]);
    assert_eq!(c.readable(), 0, "the segment was dropped");
    assert_eq!(c.snd_una(), SeqNumber(10_001));
}

/// The same ACK without data: an immediate ACK, SND.UNA unchanged. The segment passed the sequence
/// check, so its TSval became TS.Recent (RFC 7323 Appendix D, R3, comes before the ACK check).
#[test]
fn test_established_recv_pure_ack_of_unsent_data() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_500, ACK, 0, 20, 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(20))]);
    assert_eq!(c.snd_una(), SeqNumber(10_001));
}

/// Nagle (RFC 1122 §4.2.3.4): the first small write goes at once (nothing outstanding); a second small
/// write waits until the first is acknowledged, then goes with the ACK's TSval echoed.
#[test]
fn test_established_nagle_holds_second_small_write() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(100), 100);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(21, pts(10))]);
    assert_eq!(c.send(100), 100);
    recv_nothing!(c, time 21);
    recv_nothing!(c, time 29);
    send!(c, time 30, peer(50_001, 10_101, ACK, 0, 30, 21));
    recv!(c, time 30, [out(10_101, 50_001, PSH_ACK, 32_768, 100).ts(31, pts(30))]);
}

/// Before the application hears of a segment (`poll_transmit_before_app`), the connection sends what the
/// segment released — here the small write Nagle held, freed by the ACK riding on the peer's reply — but
/// no pure ACK: that waits for the call after the application has read, and then carries the window the
/// read opened.
#[test]
fn test_established_before_app_sends_released_data_but_no_pure_ack() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(100), 100);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(21, pts(10))]);
    assert_eq!(c.send(100), 100);
    recv_nothing!(c, time 21);
    send!(c, time 30, peer(50_001, 10_101, PSH_ACK, 100, 30, 21));
    let released = c.poll_transmit_before_app(at(30), TxRoom::Free).into_iter().collect::<Vec<_>>();
    // The reply is unread: the window is 100 bytes short (65,436 B → field 32,718).
    assert_segments(&released, &[out(10_101, 50_101, PSH_ACK, 32_718, 100).ts(31, pts(30))]);
    assert!(c.poll_transmit_before_app(at(30), TxRoom::Free).is_none());

    // Two full-sized segments call for an ACK at once (RFC 1122 §4.2.3.2), but not before the application.
    send!(c, time 40, peer(50_101, 10_201, ACK, 1448, 40, 31));
    send!(c, time 40, peer(51_549, 10_201, ACK, 1448, 40, 31));
    assert!(c.poll_transmit_before_app(at(40), TxRoom::Free).is_none());
    assert_eq!(c.recv(u64::MAX), 100 + 2 * 1448);
    recv!(c, time 40, [out(10_201, 52_997, ACK, 32_768, 0).ts(41, pts(40))]);
}

/// TCP_NODELAY: the second small write goes at once too.
#[test]
fn test_established_nodelay_sends_small_writes_at_once() {
    let mut c = client_established(TcpConfig { nodelay: true, ..cfg() });
    assert_eq!(c.send(100), 100);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(21, pts(10))]);
    assert_eq!(c.send(100), 100);
    recv!(c, time 21, [out(10_101, 50_001, PSH_ACK, 32_768, 100).ts(22, pts(10))]);
}

/// Nagle never holds a full-sized segment: with 100 bytes outstanding, a 2000-byte write sends 1448
/// bytes (no PSH: the queue is not empty) and holds the 552-byte tail until everything is acknowledged.
#[test]
fn test_established_nagle_sends_full_segments() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(100), 100);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(21, pts(10))]);
    assert_eq!(c.send(2000), 2000);
    recv!(c, time 21, [out(10_101, 50_001, ACK, 32_768, 1448).ts(22, pts(10))]);
    // An ACK of the first 100 bytes only: 1448 bytes still outstanding, the tail still waits.
    send!(c, time 30, peer(50_001, 10_101, ACK, 0, 30, 21));
    recv_nothing!(c, time 30);
    send!(c, time 31, peer(50_001, 11_549, ACK, 0, 31, 22));
    recv!(c, time 31, [out(11_549, 50_001, PSH_ACK, 32_768, 552).ts(32, pts(31))]);
}

/// Two default connections through the pair driver (one-way delay 10 ms). The handshake ends at 30 ms;
/// the client's TS.Recent is the SYN-ACK's TSval 11, the server's the handshake ACK's TSval 21.
///
/// * t=100: the client writes 2·1448 bytes: two segments (the last with PSH).
/// * t=110: the first arrives, held; the second makes two full segments → ACK at once, ack 12897,
///   window 65536 (the application read everything) → field 32768, TSecr 101.
/// * t=200: 1000 more bytes, one segment, arriving at 210: not full-sized → the delayed-ACK timer
///   acknowledges it at 410. The right edge does not move for a 1000-byte opening (less than one MSS,
///   RFC 1122 §4.2.3.3), so the window is 65536 − 1000 = 64536 → field 32268.
#[test]
fn test_established_pair_delayed_ack() {
    let mut p = Pair::new(cfg(), cfg(), dur_ms(10));
    p.establish();
    assert_eq!(p.now, at(30));
    p.run_until(at(100));
    p.client.send(2 * 1448);
    p.run_until(at(199));
    assert_log(
        &log_since(&p, at(100)),
        &[
            (100, Side::Client, out(10_001, 50_001, ACK, 32_768, 1448).ts(101, 11)),
            (100, Side::Client, out(11_449, 50_001, PSH_ACK, 32_768, 1448).ts(101, 11)),
            (110, Side::Server, inp(50_001, 12_897, ACK, 32_768, 0).ts(111, 101)),
        ],
    );
    p.run_until(at(200));
    p.client.send(1000);
    p.run_until(at(1000));
    assert_log(
        &log_since(&p, at(200)),
        &[
            (200, Side::Client, out(12_897, 50_001, PSH_ACK, 32_768, 1000).ts(201, 111)),
            (410, Side::Server, inp(50_001, 13_897, ACK, 32_268, 0).ts(411, 201)),
        ],
    );
    assert_eq!(p.read[1], 3896);
    assert_eq!(p.client.estats().ThruOctetsAcked, 3896);
}

/// Reordering through the pair driver: the first of three segments sent at t=100 is 5 ms late.
/// Segments #2 and #3 arrive at 110, each answered at once by a duplicate ACK (ack 10001) with the SACK
/// block grown by one segment; #1 arrives at 115 and fills the hole: an immediate ACK of all 4344
/// bytes. The sender sees two duplicate ACKs, fewer than DupThresh: no retransmission.
#[test]
fn test_established_pair_out_of_order() {
    let mut p = Pair::new(cfg(), cfg(), dur_ms(10));
    p.establish();
    p.run_until(at(100));
    p.set_filter(|side, seg| {
        if side == Side::Client && seg.seq == SeqNumber(10_001) && seg.payload_len > 0 {
            Fate::Delay(dur_ms(5))
        } else {
            Fate::Deliver
        }
    });
    p.client.send(3 * 1448);
    p.run_until(at(1000));
    assert_log(
        &log_since(&p, at(100)),
        &[
            (100, Side::Client, out(10_001, 50_001, ACK, 32_768, 1448).ts(101, 11)),
            (100, Side::Client, out(11_449, 50_001, ACK, 32_768, 1448).ts(101, 11)),
            (100, Side::Client, out(12_897, 50_001, PSH_ACK, 32_768, 1448).ts(101, 11)),
            (110, Side::Server, inp(50_001, 10_001, ACK, 32_768, 0).ts(111, 21).sack(&[(11_449, 12_897)])),
            (110, Side::Server, inp(50_001, 10_001, ACK, 32_768, 0).ts(111, 21).sack(&[(11_449, 14_345)])),
            (115, Side::Server, inp(50_001, 14_345, ACK, 32_768, 0).ts(116, 101)),
        ],
    );
    let (c, s) = (p.client.estats(), p.server.estats());
    assert_eq!((c.DupAcksIn, c.FastRetran, c.SegsRetrans, c.ThruOctetsAcked), (2, 0, 0, 4344));
    assert_eq!((s.DupAcksOut, s.ThruOctetsReceived), (2, 4344));
}
