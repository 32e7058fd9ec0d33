//! `tcp_info` fields that Google's and the kernel's packetdrill scripts read and the `linux`
//! personality did not report (crates/packetdrill, issue 23, fifth round): `tcpi_lost` and
//! `tcpi_retrans` from RACK's marks, `tcpi_reordering` grown as Linux's `tcp_check_sack_reordering`
//! grows `tp->reordering`, `tcpi_reord_seen`, and `tcpi_last_data_recv` (`icsk_ack.lrcvtime`).

use super::*;
use crate::InitialWindow;

/// The peer's ACK of the first `segs` segments at `t_ms`, echoing TSval `ts(20)`, with SACK blocks
/// of whole segments `[a, b)` (segment numbers from 0).
fn ack_sack(segs: u32, t_ms: u64, blocks: &[(u32, u32)]) -> TcpSegment {
    let s = |i: u32| LOCAL_ISS + 1 + i * SMSS_TS;
    let blocks: Vec<_> = blocks.iter().map(|&(a, b)| (s(a), s(b))).collect();
    inp(REMOTE_ISS + 1, s(segs), ACK, REMOTE_WINDOW, 0).ts(pts(t_ms), ts(20)).sack(&blocks)
}

/// Ten segments sent at t = 20, RTT 10 ms. The SACK of segment 7 at t = 30 lets RACK mark 0–6 lost
/// once RACK.rtt + min_RTT/4 has passed (the reordering timer): `tcpi_lost` 7, each retransmission in
/// flight one `tcpi_retrans`, lost segments still counted while their retransmission is out (Linux
/// `lost_out` keeps TCPCB_LOST until the segment is SACKed or acknowledged). The SACK of segment 5
/// shows reordering of 8 − 5 = 3 segments, not more than `tp->reordering` (3): unchanged, but seen
/// (`tcpi_reord_seen` 1); segment 3's shows 5, and `tcpi_reordering` reads 5 (Google's
/// `sack/sack-shift-sacked-7-3-4-8-9-fack`). The final cumulative ACK clears lost and retrans, and
/// delivers segment 4, never retransmitted, below what was SACKed before: reordering of 10 − 4 = 6
/// (`tcp_clean_rtx_queue` checks its `reord` the same way).
#[test]
fn test_established_tcp_info_lost_retrans_and_reordering() {
    let mut c =
        client_established(TcpConfig { rack: true, tlp: true, initial_window: InitialWindow::Segments(10), ..cfg() });
    assert_eq!(c.send(10 * SMSS_TS as u64), 10 * SMSS_TS as u64);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
    let i = c.tcp_info(at(20));
    assert_eq!((i.lost, i.retrans, i.reordering, i.reord_seen), (0, 0, 3, 0));

    send!(c, time 30, ack_sack(0, 30, &[(7, 8)]));
    let mut rtx = transmit_all(&mut c, at(30)).len() as u32;
    let timer = c.poll_timeout().expect("the RACK reordering timer");
    assert!(timer > at(30) && timer <= at(35), "min_RTT/4 after RACK.rtt: {timer:?}");
    c.on_timeout(timer);
    rtx += transmit_all(&mut c, timer).len() as u32;
    assert!(rtx >= 1, "fast recovery retransmits the first lost segment");
    let i = c.tcp_info(timer);
    assert_eq!((i.ca_state, i.lost, i.retrans, i.reordering), (3, 7, rtx, 3), "0-6 lost");

    let t = timer + dur_ms(1);
    c.on_segment(t, &ack_sack(0, 36, &[(5, 6), (7, 8)]));
    rtx += transmit_all(&mut c, t).len() as u32;
    let i = c.tcp_info(t);
    assert_eq!((i.lost, i.retrans, i.reordering, i.reord_seen), (6, rtx, 3, 1), "5 SACKed: 3 segments below fack");

    c.on_segment(t, &ack_sack(0, 36, &[(3, 4), (5, 6), (7, 8)]));
    rtx += transmit_all(&mut c, t).len() as u32;
    let i = c.tcp_info(t);
    assert_eq!((i.lost, i.retrans, i.reordering, i.reord_seen), (5, rtx, 5, 2), "3 SACKed: 8 - 3 = 5 segments");

    c.on_segment(t + dur_ms(20), &ack_sack(10, 56, &[]));
    let i = c.tcp_info(t + dur_ms(20));
    assert_eq!((i.ca_state, i.unacked, i.lost, i.retrans, i.reordering), (0, 0, 0, 0, 6), "all acknowledged");
}

/// `tcpi_last_data_recv` counts from the establishment (t = 10: Linux `tcp_finish_connect` sets
/// `lrcvtime`) until data arrives in order (`tcp_event_data_recv`); out-of-order data leaves it
/// (Google's `tcp_info/tcp-info-last_data_recv`: 990–1010 ms after the handshake, then at most 10).
#[test]
fn test_established_tcp_info_last_data_recv() {
    let mut c = client_established(cfg());
    assert_eq!(c.tcp_info(at(1010)).last_data_recv, 1000);
    send!(c, time 1010, inp(REMOTE_ISS + 1 + 1000, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 1000).ts(pts(1010), ts(10)));
    transmit_all(&mut c, at(1010));
    assert_eq!(c.tcp_info(at(1020)).last_data_recv, 1010, "out of order: not counted");
    send!(c, time 1020, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 1000).ts(pts(1020), ts(10)));
    transmit_all(&mut c, at(1020));
    assert_eq!(c.tcp_info(at(1025)).last_data_recv, 5);
}
