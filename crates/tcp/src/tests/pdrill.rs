//! Linux send-side rules that packetdrill runs against the kernel showed (crates/packetdrill, issue 23):
//! PSH at the end of every multi-segment GSO packet, the FIN never held by Nagle, and the cork released by
//! the probe timer at max(RTO, rto_min).

use super::*;
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
