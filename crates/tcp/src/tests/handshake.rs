//! Opening: the three-way handshake as an exact segment exchange (RFC 9293 §3.5), option negotiation
//! (RFC 9293 §3.7.1 MSS, RFC 7323 window scale and timestamps, RFC 2018 SACK-permitted), SYN and
//! SYN-ACK retransmission (RFC 6298).

use super::*;

/// The handshake between two default-configured connections, segment by segment, one-way delay 10 ms.
///
/// * Client SYN (t=0): seq = ISS 10000, window 65535 (a SYN's window is never scaled, RFC 7323 §2.2),
///   MSS 1460, window scale 1 (65536-byte buffer >> 1 fits 16 bits), SACK-permitted, TSval 1 TSecr 0.
/// * Server SYN-ACK (t=10): seq = ISS 50000, ack 10001; offers back the same set (it was offered all
///   of them), TSval 11, TSecr 1 (the SYN's TSval).
/// * Client ACK (t=20): seq 10001 ack 50001; window field 32768 = 65536 >> 1, now scaled; TSval 21,
///   TSecr 11.
///
/// Negotiated: both ends send 1460 − 12 = 1448 payload bytes per segment (timestamps take 12 bytes of
/// every segment's options). RTT samples from the echoed timestamps: 20 ms on both sides.
#[test]
fn test_syn_sent_handshake_all_options() {
    let mut client = Connection::connect(cfg(), LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
    let mut server = Connection::listen(cfg(), REMOTE_PORT, REMOTE_ISS);

    let syn = out(10_000, 0, SYN, 65_535, 0).mss(1460).wscale(1).sack_permitted().ts(1, 0);
    recv!(client, time 0, [syn]);
    assert_eq!(client.state(), State::SynSent);

    send!(server, time 10, syn);
    assert_eq!(server.state(), State::SynReceived);
    let syn_ack = inp(50_000, 10_001, SYN_ACK, 65_535, 0).mss(1460).wscale(1).sack_permitted().ts(11, 1);
    recv!(server, time 10, [syn_ack]);

    send!(client, time 20, syn_ack);
    assert_eq!(client.state(), State::Established);
    let ack = out(10_001, 50_001, ACK, 32_768, 0).ts(21, 11);
    recv!(client, time 20, [ack]);

    send!(server, time 30, ack);
    assert_eq!(server.state(), State::Established);
    recv_nothing!(server, time 30);
    assert_eq!((client.poll_timeout(), server.poll_timeout()), (None, None));

    // Negotiated MSS: 1448-byte payloads both ways.
    assert_eq!((client.smss(), server.smss()), (SMSS_TS, SMSS_TS));
    assert_eq!(client.estats().CurMSS, 1448);
    assert_eq!(client.estats().SampleRTT, 20.0);
    assert_eq!(server.estats().SampleRTT, 20.0);
    // RFC 3390 initial window for SMSS 1448: min(4·1448, max(2·1448, 4380)) = 4380.
    assert_eq!(client.cwnd(), 4380);

    // 3000 bytes: two full segments; the 104-byte tail waits (Nagle, data outstanding).
    assert_eq!(client.send(3000), 3000);
    recv!(client, time 40, [
        out(10_001, 50_001, ACK, 32_768, 1448).ts(41, 11),
        out(11_449, 50_001, ACK, 32_768, 1448).ts(41, 11),
    ]);
    // The server's data: its TS.Recent is the ACK's TSval 21 (the ACK covered Last.ACK.sent, RFC 7323
    // §4.3); its window field 32768 (65535 offered in the SYN-ACK, rounded up to the scale unit).
    assert_eq!(server.send(3000), 3000);
    recv!(server, time 40, [
        inp(50_001, 10_001, ACK, 32_768, 1448).ts(41, 21),
        inp(51_449, 10_001, ACK, 32_768, 1448).ts(41, 21),
    ]);
}

/// Timestamps off on both ends: the same exchange without the TS option, and 1460-byte payloads. RTT
/// samples come from timing the SYN / SYN-ACK (both 20 ms, never retransmitted).
#[test]
fn test_syn_sent_handshake_without_timestamps() {
    let mut client = Connection::connect(cfg_no_ts(), LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
    let mut server = Connection::listen(cfg_no_ts(), REMOTE_PORT, REMOTE_ISS);

    let syn = out(10_000, 0, SYN, 65_535, 0).mss(1460).wscale(1).sack_permitted();
    recv!(client, time 0, [syn]);
    send!(server, time 10, syn);
    let syn_ack = inp(50_000, 10_001, SYN_ACK, 65_535, 0).mss(1460).wscale(1).sack_permitted();
    recv!(server, time 10, [syn_ack]);
    send!(client, time 20, syn_ack);
    let ack = out(10_001, 50_001, ACK, 32_768, 0);
    recv!(client, time 20, [ack]);
    send!(server, time 30, ack);
    assert_eq!((client.state(), server.state()), (State::Established, State::Established));

    assert_eq!((client.smss(), server.smss()), (1460, 1460));
    assert_eq!(client.estats().SampleRTT, 20.0);
    assert_eq!(server.estats().SampleRTT, 20.0);
    assert_eq!(client.send(3000), 3000);
    recv!(client, time 40, [out(10_001, 50_001, ACK, 32_768, 1460), out(11_461, 50_001, ACK, 32_768, 1460)]);
}

/// A client that offers no window scaling, no SACK and no timestamps: the SYN-ACK of a fully enabled
/// server carries only the MSS (RFC 7323 §1.3 and §2.2, RFC 2018 §2: an option not in the SYN must not
/// be in the SYN-ACK), and windows stay unscaled (65535).
#[test]
fn test_syn_sent_handshake_client_offers_no_options() {
    let bare = TcpConfig { window_scaling: false, sack: false, timestamps: false, ..cfg() };
    let mut client = Connection::connect(bare, LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
    let mut server = Connection::listen(cfg(), REMOTE_PORT, REMOTE_ISS);

    let syn = out(10_000, 0, SYN, 65_535, 0).mss(1460);
    recv!(client, time 0, [syn]);
    send!(server, time 10, syn);
    let syn_ack = inp(50_000, 10_001, SYN_ACK, 65_535, 0).mss(1460);
    recv!(server, time 10, [syn_ack]);
    send!(client, time 20, syn_ack);
    let ack = out(10_001, 50_001, ACK, 65_535, 0);
    recv!(client, time 20, [ack]);
    send!(server, time 30, ack);
    assert_eq!((client.state(), server.state()), (State::Established, State::Established));
    assert_eq!((client.smss(), server.smss()), (1460, 1460));

    // The server's data carries no options and an unscaled window.
    assert_eq!(server.send(1460), 1460);
    recv!(server, time 40, [inp(50_001, 10_001, PSH_ACK, 65_535, 1460)]);
}

/// A SYN without any option: the peer's MSS defaults to 536 (RFC 9293 §3.7.1, RFC 1122 §4.2.2.6), so
/// the server sends 536-byte segments; the SYN-ACK carries only our MSS and no window scale, no
/// SACK-permitted, no timestamps; windows are unscaled.
#[test]
fn test_listen_syn_without_options() {
    let mut s = Connection::listen(cfg(), LOCAL_PORT, LOCAL_ISS);
    send!(s, time 0, inp(50_000, 0, SYN, 8192, 0));
    assert_eq!(s.state(), State::SynReceived);
    recv!(s, time 0, [out(10_000, 50_001, SYN_ACK, 65_535, 0).mss(1460)]);
    send!(s, time 10, inp(50_001, 10_001, ACK, 8192, 0));
    assert_eq!(s.state(), State::Established);
    assert_eq!(s.smss(), 536);
    assert_eq!(s.estats().SampleRTT, 10.0, "SYN-ACK timed without timestamps");

    // IW = min(4·536, max(2·536, 4380)) = 2144 = four segments. 2000 bytes: three full 536-byte
    // segments, then a 392-byte tail that Nagle holds while data is outstanding.
    assert_eq!(s.cwnd(), 2144);
    assert_eq!(s.send(2000), 2000);
    recv!(s, time 20, [
        out(10_001, 50_001, ACK, 65_535, 536),
        out(10_537, 50_001, ACK, 65_535, 536),
        out(11_073, 50_001, ACK, 65_535, 536),
    ]);
}

/// The client's side of the same: a SYN-ACK without options leaves SMSS 536, no timestamps, no SACK,
/// and the client's window scale offer void (RFC 7323 §2.2: both must offer), so its ACK says 65535.
#[test]
fn test_syn_sent_syn_ack_without_options() {
    let mut c = client_syn_sent(cfg());
    send!(c, time 10, inp(50_000, 10_001, SYN_ACK, 8192, 0));
    assert_eq!(c.state(), State::Established);
    recv!(c, time 10, [out(10_001, 50_001, ACK, 65_535, 0)]);
    assert_eq!(c.smss(), 536);
    assert_eq!(c.send(1000), 1000);
    recv!(c, time 20, [out(10_001, 50_001, ACK, 65_535, 536)]);
}

/// A lost SYN is sent again when the retransmission timer expires: after the initial RTO of 1 s, then
/// after 2 s (RFC 6298 (2.1), (5.5)), identical but for the TSval. The SYN-ACK echoing the second
/// retransmission's TSval gives a valid RTT sample (RFC 7323 §4: no Karn ambiguity with timestamps).
#[test]
fn test_syn_sent_timeout() {
    let mut c = client_syn_sent(cfg());
    fire(&mut c, 1000);
    recv!(c, time 1000, [expected_syn(&cfg(), 1000)]);
    fire(&mut c, 3000);
    recv!(c, time 3000, [expected_syn(&cfg(), 3000)]);
    assert_eq!(c.poll_timeout(), Some(at(7000)));
    let e = c.estats();
    assert_eq!((e.Timeouts, e.SubsequentTimeouts, e.SegsRetrans), (1, 1, 2));

    send!(c, time 3010, inp(50_000, 10_001, SYN_ACK, REMOTE_SYN_WINDOW, 0)
        .mss(1460).wscale(REMOTE_WSCALE).sack_permitted().ts(pts(3010), ts(3000)));
    assert_eq!(c.state(), State::Established);
    recv!(c, time 3010, [out(10_001, 50_001, ACK, 32_768, 0).ts(ts(3010), pts(3010))]);
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.estats().SampleRTT, 10.0, "3011 - 3001 ticks of 1 ms");
}

/// RFC 6298 (5.7): "If the timer expires awaiting the ACK of a SYN segment and the TCP implementation
/// is using an RTO less than 3 seconds, the RTO MUST be re-initialized to 3 seconds when data
/// transmission begins". Without timestamps the SYN-ACK of a retransmitted SYN gives no RTT sample
/// (Karn), so the first data segment must be timed with RTO = 3 s: timer at 1020 + 3000 ms.
#[test]
fn test_syn_sent_timeout_rto_reinitialized_to_3s() {
    let mut c = client_syn_sent(cfg_no_ts());
    fire(&mut c, 1000);
    recv!(c, time 1000, [expected_syn(&cfg_no_ts(), 1000)]);
    send!(c, time 1010, peer_syn_ack(&cfg_no_ts(), 1010));
    assert_eq!(c.state(), State::Established);
    recv!(c, time 1010, [out(10_001, 50_001, ACK, 32_768, 0)]);
    assert_eq!(c.estats().CountRTT, 0, "Karn: no sample from a retransmitted SYN");
    assert_eq!(c.send(1000), 1000);
    recv!(c, time 1020, [out(10_001, 50_001, PSH_ACK, 32_768, 1000)]);
    assert_eq!(c.poll_timeout(), Some(at(4020)), "RTO must be 3 s after a SYN timeout");
}

/// SYN-RECEIVED → ESTABLISHED on the peer's ACK (the `server_established` fixture), then data both
/// ways. The server's right edge is the SYN-ACK's 50001 + 65535 = 115536.
/// * Its first data segment: window 65535 → field 32768 (rounded up to the scale unit); TSecr = the
///   ACK's TSval (TS.Recent, RFC 7323 §4.3).
/// * Two full segments from the peer: ACK of the second at once, ack 52897; 2896 bytes unread, so the
///   window is 115536 − 52897 = 62639 → field ⌈62639 / 2⌉ = 31320.
#[test]
fn test_syn_received_recv_ack() {
    let mut s = server_established(cfg());
    assert_eq!(s.smss(), SMSS_TS);
    assert_eq!(s.send(1448), 1448);
    recv!(s, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 1448).ts(21, pts(10))]);
    send!(s, time 30, peer(50_001, 11_449, ACK, 1448, 30, 21));
    recv_nothing!(s, time 30);
    send!(s, time 31, peer(51_449, 11_449, ACK, 1448, 31, 21));
    recv!(s, time 31, [out(11_449, 52_897, ACK, 31_320, 0).ts(32, pts(30))]);
    assert_eq!(s.estats().ThruOctetsAcked, 1448);
}

/// SYN-RECEIVED, the peer repeats its SYN (it did not hear our SYN-ACK): the SYN-ACK goes again,
/// unchanged but for the TSval (RFC 9293 §3.10.7.4 — a retransmitted SYN is answered, not reset).
#[test]
fn test_syn_received_syn_retransmitted() {
    let mut s = server_syn_received(cfg());
    send!(s, time 5, peer_syn(&cfg()));
    assert_eq!(s.state(), State::SynReceived);
    recv!(s, time 5, [out(10_000, 50_001, SYN_ACK, 65_535, 0).mss(1460).wscale(1).sack_permitted().ts(6, pts(0))]);
    assert_eq!(s.estats().SegsRetrans, 1);
}

/// SYN-RECEIVED, the retransmission timer expires: SYN-ACK again after 1 s, then the timer doubles.
#[test]
fn test_syn_received_timeout() {
    let mut s = server_syn_received(cfg());
    fire(&mut s, 1000);
    recv!(s, time 1000, [out(10_000, 50_001, SYN_ACK, 65_535, 0).mss(1460).wscale(1).sack_permitted().ts(1001, pts(0))]);
    assert_eq!(s.poll_timeout(), Some(at(3000)));
    // The ACK echoing the repeated SYN-ACK (TSval 1001) completes the handshake; no timer remains.
    send!(s, time 1010, inp(50_001, 10_001, ACK, REMOTE_WINDOW, 0).ts(pts(1010), 1001));
    assert_eq!(s.state(), State::Established);
    assert_eq!(s.poll_timeout(), None);
    assert_eq!(s.estats().SampleRTT, 10.0);
}

/// SYN-RECEIVED, an ACK that acknowledges nothing we sent (ack 10005 > SND.NXT 10001) does not complete
/// the handshake (RFC 9293 §3.10.7.4, SYN-RECEIVED: SND.UNA < SEG.ACK =< SND.NXT required).
#[test]
fn test_syn_received_bad_ack() {
    let mut s = server_syn_received(cfg());
    send!(s, time 10, inp(50_001, 10_005, ACK, REMOTE_WINDOW, 0).ts(pts(10), 1));
    assert_eq!(s.state(), State::SynReceived);
}

/// ESTABLISHED, a SYN arrives: RFC 5961 §4 challenge ACK (seq = SND.NXT, ack = RCV.NXT); the
/// connection stays up.
#[test]
fn test_established_recv_syn() {
    let mut c = client_established(cfg());
    send!(c, time 20, inp(50_000, 0, SYN, REMOTE_SYN_WINDOW, 0).mss(1460).ts(pts(20), 0));
    assert_eq!(c.state(), State::Established);
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10))]);
}
