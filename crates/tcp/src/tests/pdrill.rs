//! Linux send-side rules that packetdrill runs against the kernel showed (crates/packetdrill, issue 23):
//! PSH at the end of every multi-segment GSO packet, the FIN never held by Nagle, and the cork released by
//! the probe timer at max(RTO, rto_min).

use super::*;
use crate::config::Cwv;
use crate::congestion::Abc;
use crate::InitialWindow;

/// A 20-segment write on an idle connection, IW 10, SRTT 10 ms (the handshake's sample). Under `tso` a
/// super-packet holds max(2, 2 × cwnd / SRTT × 2⁻¹⁰ s / SMSS) = max(2, 2 × 14480 B / 10 ms / 1024 / 1448 B)
/// = 2 segments, so the flight leaves as five GSO packets of two, each ending with PSH (Linux 6.18 through
/// a TUN device: `tcp_min_tso_segs` 2 gives PSH every second segment, 1 none). Without `tso` no segment of
/// the flight ends the write, so none carries PSH.
#[test]
fn test_established_psh_ends_each_gso_packet() {
    let flags = |tso: bool| {
        let mut c = client_established(TcpConfig {
            tso,
            rack: true,
            initial_window: InitialWindow::Segments(10),
            send_buffer: ByteSize::new(1 << 20),
            ..cfg()
        });
        assert_eq!(c.send(20 * SMSS_TS as u64), 20 * SMSS_TS as u64);
        let sent = transmit_all(&mut c, at(20));
        assert_eq!(sent.len(), 10, "the initial window");
        sent.iter().map(|s| s.flags.contains(TcpFlags::PSH)).collect::<Vec<_>>()
    };
    assert_eq!(flags(true), [false, true, false, true, false, true, false, true, false, true]);
    assert_eq!(flags(false), [false; 10]);
}

/// 500 bytes go at t = 20; 500 more are written at once and Nagle holds them (the first are
/// unacknowledged). close() at t = 30: with `fin_ends_nagle` the held bytes leave with the FIN at once
/// (Linux `tcp_nagle_test` never holds the FIN); without it the FIN waits with them for the ACK.
#[test]
fn test_established_close_sends_the_fin_past_nagle() {
    let after_close = |fin_ends_nagle: bool| {
        let mut c = client_established(TcpConfig { fin_ends_nagle, ..cfg() });
        assert_eq!(c.send(500), 500);
        let first = transmit_all(&mut c, at(20));
        assert_eq!(first.len(), 1);
        assert_eq!(c.send(500), 500);
        assert!(transmit_all(&mut c, at(20)).is_empty(), "Nagle holds the short second write");
        c.close();
        transmit_all(&mut c, at(30)).iter().map(|s| (s.seq.0 - LOCAL_ISS, s.payload_len, s.flags)).collect::<Vec<_>>()
    };
    let fin_psh_ack = TcpFlags(TcpFlags::FIN.0 | TcpFlags::PSH.0 | TcpFlags::ACK.0);
    assert_eq!(after_close(true), [(501, 500, fin_psh_ack)]);
    assert_eq!(after_close(false), []);
}

/// TCP_CORK with nothing in flight: 100 bytes written at t = 20 stay corked. Without `cork_ceiling_rto`
/// they leave 200 ms later (t = 220); with it, when the probe timer fires max(RTO, rto_min) later: the
/// RTO after the handshake's 10 ms sample is max(10 + 4 × 5 ms, rto_min 1 s) = 1 s, so at t = 1020.
#[test]
fn test_established_cork_released_by_the_probe_timer() {
    let release = |cork_ceiling_rto: bool| {
        let mut c = client_established(TcpConfig { cork: true, cork_ceiling_rto, ..cfg() });
        assert_eq!(c.send(100), 100);
        assert!(transmit_all(&mut c, at(20)).is_empty(), "corked");
        let due = c.poll_timeout().expect("the cork's timer");
        c.on_timeout(due);
        let sent = transmit_all(&mut c, due);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].payload_len, 100);
        due
    };
    assert_eq!(release(false), at(220));
    assert_eq!(release(true), at(1020));
}

/// `ts_recent_needs_valid_ack`: a segment whose ACK field is beyond SND.NXT is dropped (RFC 9293
/// §3.10.7.4) and does not move TS.Recent: here it carries a TSval 10⁶ ahead, and had it been taken, PAWS would refuse the peer's real
/// next segment (packetdrill `ts_recent/invalid_ack`; Linux `tcp_ack` refuses it before
/// `tcp_replace_ts_recent`). The reply to it echoes the old TSval, and the data that follows is taken.
#[test]
fn test_established_ack_of_unsent_data_leaves_ts_recent() {
    let mut c = server_established(TcpConfig { ts_recent_needs_valid_ack: true, ..cfg() });
    let forged = inp(REMOTE_ISS + 1, LOCAL_ISS + 1 + 9_999, FIN_ACK, REMOTE_WINDOW, 0).ts(pts(10) + 1_000_000, ts(0));
    send!(c, time 20, forged);
    let reply = transmit_all(&mut c, at(20));
    assert_eq!(reply.len(), 1, "an ACK of the dropped segment");
    assert_eq!(reply[0].options.timestamps.map(|t| t.tsecr), Some(pts(10)), "TS.Recent unchanged");
    assert_eq!(c.state(), State::Established, "the FIN was dropped with it");
    send!(c, time 30, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 1000).ts(pts(30), ts(20)));
    assert_eq!(c.readable(), 1000, "PAWS lets the real segment in");
}

/// Slow start when application-limited (byte counting unlimited, as Linux): a flight of exactly IW 10,
/// then ACKs of two segments each.
/// Under `cwv = "linux"` cwnd grows while it is below twice the largest flight of the window (Linux
/// `tcp_is_cwnd_limited` with `max_packets_out`), so to 20 (Google's packetdrill
/// `slow_start/slow-start-app-limited`); RFC 2861's test on the flight before each ACK stops at 14, when
/// 6 segments are left in flight.
#[test]
fn test_established_app_limited_slow_start_grows_to_twice_the_flight() {
    let cwnds = |cwv: Cwv| {
        let c0 = TcpConfig { cwv, abc: Abc::Unlimited, initial_window: InitialWindow::Segments(10), ..cfg() };
        let mut c = client_established(c0);
        assert_eq!(c.send(10 * SMSS_TS as u64), 10 * SMSS_TS as u64);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
        let mut v = vec![c.cwnd() / SMSS_TS];
        for (i, t) in [(2u32, 125u64), (4, 130), (6, 135), (8, 140), (10, 145)] {
            send!(c, time t, inp(REMOTE_ISS + 1, LOCAL_ISS + 1 + i * SMSS_TS, ACK, REMOTE_WINDOW, 0).ts(pts(t), ts(20)));
            assert!(transmit_all(&mut c, at(t)).is_empty());
            v.push(c.cwnd() / SMSS_TS);
        }
        v
    };
    assert_eq!(cwnds(Cwv::Linux), [10, 12, 14, 16, 18, 20]);
    assert_eq!(cwnds(Cwv::Rfc2861), [10, 12, 14, 14, 14, 14]);
}

/// RFC 2861 decay under `cwv = "linux"` follows `slow_start_after_idle`, as Linux's `tcp_cwnd_validate`
/// calls `tcp_cwnd_application_limited` only under tcp_slow_start_after_idle. IW 10 sent at t = 20 and
/// acknowledged at t = 30 (cwnd 20); the application then writes one segment at t = 500, long after an
/// RTO (110 ms) of leaving cwnd unused. With the setting off (Google's defaults.sh) cwnd stays 20, where
/// the decay would have taken it halfway to the 10 used, 15; with it on, the restart after idle (RFC 5681
/// §4.1, `tcp_cwnd_restart`) takes it back to IW 10.
#[test]
fn test_established_linux_decay_needs_slow_start_after_idle() {
    let cwnd_after_idle = |slow_start_after_idle: bool| {
        let c0 = TcpConfig {
            cwv: Cwv::Linux,
            abc: Abc::Unlimited,
            slow_start_after_idle,
            rto_min: dur_ms(100),
            initial_window: InitialWindow::Segments(10),
            ..cfg()
        };
        let mut c = client_established(c0);
        assert_eq!(c.send(10 * SMSS_TS as u64), 10 * SMSS_TS as u64);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
        send!(c, time 30, inp(REMOTE_ISS + 1, LOCAL_ISS + 1 + 10 * SMSS_TS, ACK, REMOTE_WINDOW, 0).ts(pts(30), ts(20)));
        transmit_all(&mut c, at(30));
        assert_eq!(c.cwnd() / SMSS_TS, 20);
        assert_eq!(c.send(SMSS_TS as u64), SMSS_TS as u64);
        transmit_all(&mut c, at(500));
        c.cwnd() / SMSS_TS
    };
    assert_eq!(cwnd_after_idle(false), 20);
    assert_eq!(cwnd_after_idle(true), 10);
}
