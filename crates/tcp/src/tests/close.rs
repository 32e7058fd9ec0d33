//! Closing (RFC 9293 §3.6, §3.10.4, §3.10.7.4): FIN-WAIT-1, FIN-WAIT-2, CLOSING, TIME-WAIT on the active
//! side; CLOSE-WAIT, LAST-ACK on the passive side; CLOSED after TIME-WAIT's `time_wait` (60 s).
//!
//! Window arithmetic: the client fixture's right edge is 115537; once the peer's FIN is consumed
//! RCV.NXT = 50002 and the window is 115537 − 50002 = 65535 → field ⌈65535 / 2⌉ = 32768.

use super::pair::{assert_log, log_since, Pair, Side};
use super::*;

/// ESTABLISHED → FIN-WAIT-1 (asserted); the FIN takes sequence number 10001 and is timed by the RTO.
fn client_fin_wait_1() -> Connection {
    let mut c = client_established(cfg());
    c.close();
    assert_eq!(c.state(), State::FinWait1);
    recv!(c, time 20, [out(10_001, 50_001, FIN_ACK, 32_768, 0).ts(21, pts(10))]);
    assert_eq!(c.poll_timeout(), Some(at(1020)));
    c
}

/// FIN-WAIT-1 → FIN-WAIT-2 when the peer acknowledges the FIN (ack 10002) at t=30.
fn client_fin_wait_2() -> Connection {
    let mut c = client_fin_wait_1();
    send!(c, time 30, peer(50_001, 10_002, ACK, 0, 30, 21));
    assert_eq!(c.state(), State::FinWait2);
    recv_nothing!(c, time 30);
    assert_eq!(c.poll_timeout(), None, "FIN acknowledged: no retransmission timer");
    c
}

/// FIN-WAIT-2 → TIME-WAIT on the peer's FIN (seq 50001) at t=40: ACK 50002, 2·MSL timer at 40 + 60 s.
fn client_time_wait() -> Connection {
    let mut c = client_fin_wait_2();
    send!(c, time 40, peer(50_001, 10_002, FIN_ACK, 0, 40, 21));
    assert_eq!(c.state(), State::TimeWait);
    recv!(c, time 40, [out(10_002, 50_002, ACK, 32_768, 0).ts(41, pts(40))]);
    assert_eq!(c.poll_timeout(), Some(at(60_040)));
    c
}

/// ESTABLISHED → CLOSE-WAIT on the peer's FIN at t=20: ACKed at once (ack 50002), end of stream seen.
fn client_close_wait() -> Connection {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(50_001, 10_001, FIN_ACK, 0, 20, 11));
    assert_eq!(c.state(), State::CloseWait);
    recv!(c, time 20, [out(10_001, 50_002, ACK, 32_768, 0).ts(21, pts(20))]);
    c
}

/// CLOSE-WAIT → LAST-ACK on close at t=30: FIN seq 10001.
fn client_last_ack() -> Connection {
    let mut c = client_close_wait();
    c.close();
    assert_eq!(c.state(), State::LastAck);
    recv!(c, time 30, [out(10_001, 50_002, FIN_ACK, 32_768, 0).ts(31, pts(20))]);
    assert_eq!(c.poll_timeout(), Some(at(1030)));
    c
}

#[test]
fn test_established_close() {
    client_fin_wait_1();
}

/// Close with 100 unsent bytes: the FIN rides on the last data segment (FIN after the data, seq
/// 10001 + 100 = 10101 for the FIN itself).
#[test]
fn test_established_close_with_queued_data() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(100), 100);
    c.close();
    assert_eq!(c.state(), State::FinWait1);
    assert_eq!(c.send(100), 0, "no writes after close");
    recv!(c, time 20, [out(10_001, 50_001, TcpFlags(FIN_ACK.0 | PSH_ACK.0), 32_768, 100).ts(21, pts(10))]);
    // ACK of the data only: still FIN-WAIT-1. ACK of the FIN (10102): FIN-WAIT-2.
    send!(c, time 30, peer(50_001, 10_101, ACK, 0, 30, 21));
    assert_eq!(c.state(), State::FinWait1);
    send!(c, time 31, peer(50_001, 10_102, ACK, 0, 31, 21));
    assert_eq!(c.state(), State::FinWait2);
    assert_eq!(c.estats().ThruOctetsAcked, 100, "the FIN is not data");
}

#[test]
fn test_fin_wait_1_recv_ack() {
    client_fin_wait_2();
}

/// A lost FIN is retransmitted when the RTO expires (1 s after it was sent), then after 2 s more.
#[test]
fn test_fin_wait_1_timeout() {
    let mut c = client_fin_wait_1();
    fire(&mut c, 1020);
    recv!(c, time 1020, [out(10_001, 50_001, FIN_ACK, 32_768, 0).ts(1021, pts(10))]);
    assert_eq!(c.poll_timeout(), Some(at(3020)));
    assert_eq!(c.state(), State::FinWait1);
}

/// Simultaneous close: FIN-WAIT-1 receives a FIN that does not acknowledge ours → CLOSING, ACK 50002;
/// then the ACK of our FIN → TIME-WAIT.
#[test]
fn test_fin_wait_1_recv_fin() {
    let mut c = client_fin_wait_1();
    send!(c, time 30, peer(50_001, 10_001, FIN_ACK, 0, 30, 11));
    assert_eq!(c.state(), State::Closing);
    recv!(c, time 30, [out(10_002, 50_002, ACK, 32_768, 0).ts(31, pts(30))]);
    send!(c, time 40, peer(50_002, 10_002, ACK, 0, 40, 21));
    assert_eq!(c.state(), State::TimeWait);
    recv_nothing!(c, time 40);
    assert_eq!(c.poll_timeout(), Some(at(60_040)));
}

/// FIN-WAIT-1 receives a FIN that also acknowledges ours: straight to TIME-WAIT.
#[test]
fn test_fin_wait_1_recv_fin_ack() {
    let mut c = client_fin_wait_1();
    send!(c, time 30, peer(50_001, 10_002, FIN_ACK, 0, 30, 21));
    assert_eq!(c.state(), State::TimeWait);
    recv!(c, time 30, [out(10_002, 50_002, ACK, 32_768, 0).ts(31, pts(30))]);
    assert_eq!(c.poll_timeout(), Some(at(60_030)));
}

/// FIN-WAIT-2 still receives data (RFC 9293 §3.10.7.4, seventh: ESTABLISHED, FIN-WAIT-1 and
/// FIN-WAIT-2 process segment text). One 1000-byte segment: delayed ACK at +200 ms, ack 51001, window
/// 115537 − 51001 = 64536 → 32268 (unread).
#[test]
fn test_fin_wait_2_recv_data() {
    let mut c = client_fin_wait_2();
    send!(c, time 40, peer(50_001, 10_002, PSH_ACK, 1000, 40, 21));
    recv_nothing!(c, time 40);
    fire(&mut c, 240);
    recv!(c, time 240, [out(10_002, 51_001, ACK, 32_268, 0).ts(241, pts(40))]);
    assert_eq!(c.readable(), 1000);
    assert_eq!(c.state(), State::FinWait2);
}

#[test]
fn test_fin_wait_2_recv_fin() {
    client_time_wait();
}

/// TIME-WAIT lasts exactly `time_wait` (60 s) from the ACK of the peer's FIN, then CLOSED.
#[test]
fn test_time_wait_timeout() {
    let mut c = client_time_wait();
    c.on_timeout(at(60_039));
    assert_eq!(c.state(), State::TimeWait);
    fire(&mut c, 60_040);
    assert_eq!(c.state(), State::Closed);
    assert_eq!(c.poll_timeout(), None);
    recv_nothing!(c, time 60_040);
}

/// TIME-WAIT, the peer retransmits its FIN (our ACK was lost): it is acknowledged again.
#[test]
fn test_time_wait_recv_fin_retransmit() {
    let mut c = client_time_wait();
    send!(c, time 1000, peer(50_001, 10_002, FIN_ACK, 0, 1000, 21));
    assert_eq!(c.state(), State::TimeWait);
    recv!(c, time 1000, [out(10_002, 50_002, ACK, 32_768, 0).ts(1001, pts(40))]);
}

#[test]
fn test_established_recv_fin() {
    let c = client_close_wait();
    assert!(c.is_eof());
    assert_eq!(c.readable(), 0);
}

/// `has_input` (what the engine asks before a read event) is `readable() > 0 || is_eof()` at each step:
/// nothing before the handshake or after a full read, bytes left after a partial one, and once the peer's
/// FIN is in, its data and then the close to notice.
#[test]
fn has_input_is_data_to_read_or_the_close_to_notice() {
    assert!(!client_syn_sent(cfg()).has_input());
    let mut c = client_established(cfg());
    assert!(!c.has_input());
    send!(c, time 20, peer(50_001, 10_001, PSH_ACK, 1000, 20, 11));
    assert!(c.has_input());
    assert_eq!(c.recv(600), 600);
    assert!(c.has_input(), "400 bytes left");
    assert_eq!(c.recv(u64::MAX), 400);
    assert!(!c.has_input());
    send!(c, time 30, peer(51_001, 10_001, FIN_ACK, 500, 30, 11));
    assert!(c.has_input() && !c.is_eof());
    assert_eq!(c.recv(u64::MAX), 500);
    assert!(c.has_input() && c.is_eof() && c.readable() == 0);
}

/// CLOSE-WAIT may still send (the connection is half-closed in the other direction only).
#[test]
fn test_close_wait_send() {
    let mut c = client_close_wait();
    assert_eq!(c.send(100), 100);
    recv!(c, time 30, [out(10_001, 50_002, PSH_ACK, 32_768, 100).ts(31, pts(20))]);
}

#[test]
fn test_close_wait_close() {
    client_last_ack();
}

/// LAST-ACK, the ACK of our FIN: CLOSED at once, no timer, nothing to send.
#[test]
fn test_last_ack_recv_ack() {
    let mut c = client_last_ack();
    send!(c, time 40, peer(50_002, 10_002, ACK, 0, 40, 31));
    assert_eq!(c.state(), State::Closed);
    assert_eq!(c.poll_timeout(), None);
    recv_nothing!(c, time 40);
}

/// The whole close through the pair driver (one-way delay 10 ms), with the state of both ends checked
/// between events. The server's window field after consuming the FIN: its right edge is the
/// SYN-ACK's 10001 + 65535 = 75536, RCV.NXT 10002 → 65534 bytes → field 32767.
#[test]
fn test_established_pair_close() {
    let mut p = Pair::new(cfg(), cfg(), dur_ms(10));
    p.establish();
    p.run_until(at(100));
    p.client.close();
    p.run_until(at(105));
    assert_eq!((p.client.state(), p.server.state()), (State::FinWait1, State::Established));
    p.run_until(at(115));
    assert_eq!((p.client.state(), p.server.state()), (State::FinWait1, State::CloseWait));
    p.run_until(at(125));
    assert_eq!((p.client.state(), p.server.state()), (State::FinWait2, State::CloseWait));
    p.run_until(at(150));
    p.server.close();
    p.run_until(at(155));
    assert_eq!((p.client.state(), p.server.state()), (State::FinWait2, State::LastAck));
    p.run_until(at(165));
    assert_eq!((p.client.state(), p.server.state()), (State::TimeWait, State::LastAck));
    p.run_until(at(175));
    assert_eq!((p.client.state(), p.server.state()), (State::TimeWait, State::Closed));
    p.run_until(at(60_159));
    assert_eq!(p.client.state(), State::TimeWait);
    p.run_until(at(60_160));
    assert_eq!(p.client.state(), State::Closed);
    assert_log(
        &log_since(&p, at(100)),
        &[
            (100, Side::Client, out(10_001, 50_001, FIN_ACK, 32_768, 0).ts(101, 11)),
            (110, Side::Server, inp(50_001, 10_002, ACK, 32_767, 0).ts(111, 101)),
            (150, Side::Server, inp(50_001, 10_002, FIN_ACK, 32_767, 0).ts(151, 101)),
            (160, Side::Client, out(10_002, 50_002, ACK, 32_768, 0).ts(161, 151)),
        ],
    );
    assert_eq!((p.client.poll_timeout(), p.server.poll_timeout()), (None, None));
}

#[test]
fn test_fin_wait_2_send_buffer_is_empty_once_the_fin_is_acked() {
    // SND.UNA = 10002 is one past write_end = 10001 (the FIN's number): nothing is queued, so the whole
    // send buffer (64 KiB) is free. Found by the scenario fuzzer: the subtraction went below zero (a
    // debug-build panic; in release a full buffer, which held RFC 2861 decay off after close).
    let c = client_fin_wait_2();
    assert_eq!(c.send_buffer_free(), cfg().send_buffer.bytes());
}

/// A FIN at the receive window's right edge, read in the same instant (found by the scenario fuzzer: the
/// application read before any ACK had moved the edge). The fixture's edge is 115537 (65536 bytes from
/// 50001); the peer sends 45 full segments and a last one of 376 bytes with the FIN, which takes sequence
/// number 115537, the edge itself. The FIN is taken (CLOSE-WAIT) and the application reads all 65536
/// bytes at once; the ACK then covers the FIN (115538) and announces the whole buffer again, 65536 bytes
/// → field ⌈65536 / 2⌉ = 32768.
#[test]
fn test_established_fin_at_the_window_edge() {
    let mut c = client_established(cfg());
    for k in 0..45 {
        send!(c, time 20, peer(50_001 + k * 1448, 10_001, ACK, 1448, 20, 11));
    }
    send!(c, time 20, peer(115_161, 10_001, FIN_ACK, 376, 20, 11));
    assert_eq!(c.state(), State::CloseWait);
    assert_eq!(c.recv(u64::MAX), 65_536);
    recv!(c, time 20, [out(10_001, 115_538, ACK, 32_768, 0).ts(21, pts(20))]);
}
