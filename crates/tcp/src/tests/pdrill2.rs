//! More Linux rules that Google's packetdrill corpus (`gtests/net/tcp`) showed the `linux` personality
//! lacked (crates/packetdrill, issue 23): GSO packets of at most half of cwnd and `min_tso_segs`
//! segments, cwnd grown by what an ACK newly delivered, the FIN sent alone past a full cwnd, the loss
//! probe timer left alone by a duplicate ACK, and the restart after idle held until the window opens.

use super::*;
use crate::congestion::Abc;
use crate::InitialWindow;

/// The peer's ACK of the first `segs` segments at `t_ms`, echoing TSval `ts(20)`.
fn ack_of(segs: u32, t_ms: u64) -> TcpSegment {
    inp(REMOTE_ISS + 1, LOCAL_ISS + 1 + segs * SMSS_TS, ACK, REMOTE_WINDOW, 0).ts(pts(t_ms), ts(20))
}

/// The first byte of segment `i` (from 0) of the data.
fn seg_start(i: u32) -> u32 {
    LOCAL_ISS + 1 + i * SMSS_TS
}

/// IW 10 sent at once on an idle connection under `tso`: Linux's `tcp_cwnd_test` gives one GSO packet
/// at most half of cwnd (5 segments), and `tcp_tso_autosize` at least `min_tso_segs` (the rate-based
/// size is 2 here: SRTT 10 ms, 2 × 14480 B / 10 ms × 2⁻¹⁰ s < 3 segments). With `min_tso_segs` = 10
/// the flight is two packets of 5, each ending with PSH (Google's `slow_start/slow-start-after-idle`:
/// `P. 1:5001(5000)`, `P. 5001:10001(5000)`); with 1, one segment per packet and no PSH inside the
/// write.
#[test]
fn test_established_gso_packets_are_min_tso_segs_at_most_half_cwnd() {
    let psh = |min_tso_segs: u32| {
        let mut c = client_established(TcpConfig {
            tso: true,
            rack: true,
            min_tso_segs,
            initial_window: InitialWindow::Segments(10),
            send_buffer: ByteSize::new(1 << 20),
            ..cfg()
        });
        assert_eq!(c.send(20 * SMSS_TS as u64), 20 * SMSS_TS as u64);
        let sent = transmit_all(&mut c, at(20));
        assert_eq!(sent.len(), 10, "the initial window");
        sent.iter().map(|s| s.flags.contains(TcpFlags::PSH)).collect::<Vec<_>>()
    };
    let (f, t) = (false, true);
    assert_eq!(psh(10), [f, f, f, f, t, f, f, f, f, t]);
    assert_eq!(psh(2), [f, t, f, t, f, t, f, t, f, t]);
    assert_eq!(psh(1), [f; 10]);
}

/// IW 10 of 15 segments sent at t = 20; segment 0 is delayed, so the peer SACKs segment 1 (t = 30) and
/// 1–2 (t = 31): two duplicate ACKs, each releasing a segment by limited transmit (RFC 3042). At t = 32
/// segment 0 arrives and the ACK covers 0–2. It newly delivers one segment: the other two were
/// delivered when SACKed. With `cwnd_growth_delivered` slow start grows cwnd by that one (Linux
/// `tcp_cong_control` with `acked_sacked`), 10 → 11, so 2 more segments go (9 in flight); by the bytes
/// acknowledged it would grow to 13 and let all 3 go (Google's `limited_transmit/limited-transmit-sack`:
/// 2 segments, the last one an ACK later). Without SACK the two duplicate ACKs stand for the two
/// segments (`tcp_add_reno_sack`), with the same result.
#[test]
fn test_established_ack_after_reordering_grows_cwnd_by_what_it_delivered() {
    let after = |cwnd_growth_delivered: bool, sack: bool| {
        let mut c = client_established(TcpConfig {
            cwnd_growth_delivered,
            sack,
            abc: Abc::Unlimited,
            initial_window: InitialWindow::Segments(10),
            send_buffer: ByteSize::new(1 << 20),
            ..cfg()
        });
        assert_eq!(c.send(15 * SMSS_TS as u64), 15 * SMSS_TS as u64);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
        for (t, last) in [(30u64, 2u32), (31, 3)] {
            let mut dup = ack_of(0, t);
            if sack {
                dup = dup.sack(&[(seg_start(1), seg_start(last))]);
            }
            send!(c, time t, dup);
            assert_eq!(transmit_all(&mut c, at(t)).len(), 1, "limited transmit");
        }
        send!(c, time 32, ack_of(3, 32));
        let sent = transmit_all(&mut c, at(32)).len();
        (c.cwnd() / SMSS_TS, sent)
    };
    for sack in [true, false] {
        assert_eq!(after(true, sack), (11, 2), "sack {sack}");
        assert_eq!(after(false, sack), (13, 3), "sack {sack}");
    }
}

/// Three segments fill an initial window of 3; close() at t = 30 has no data left to
/// send. With `fin_ignores_cwnd` the FIN goes alone at once (Linux `tcp_cwnd_test`, Google's
/// `shutdown/shutdown-rdwr-write-queue-close`); without it, it waits for an ACK to open cwnd.
#[test]
fn test_established_fin_alone_ignores_cwnd() {
    let at_close = |fin_ignores_cwnd: bool| {
        let mut c =
            client_established(TcpConfig { fin_ignores_cwnd, initial_window: InitialWindow::Segments(3), ..cfg() });
        assert_eq!(c.send(3 * SMSS_TS as u64), 3 * SMSS_TS as u64);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 3);
        c.close();
        transmit_all(&mut c, at(30)).iter().map(|s| (s.seq.0 - LOCAL_ISS, s.payload_len, s.flags)).collect::<Vec<_>>()
    };
    assert_eq!(at_close(true), [(1 + 3 * SMSS_TS, 0, FIN_ACK)]);
    assert_eq!(at_close(false), []);
}

/// RACK-TLP with four segments sent at t = 20 and SRTT 10 ms: the loss probe is due at 20 + 2 SRTT = 40.
/// A duplicate ACK at t = 25 (it SACKs the last byte only, no whole segment) leaves it there; only an ACK
/// of new data restarts it (RFC 8985 §7.2; Linux `FLAG_SET_XMIT_TIMER` from `tcp_clean_rtx_queue`):
/// the ACK of the first segment at t = 30 (an RTT sample of 10 ms again) moves it to 50. Google's
/// `fast_retransmit/fr-4pkt-fack-last-byte` expects the probe 2 SRTT after the send, not after the SACK.
#[test]
fn test_established_duplicate_ack_leaves_the_loss_probe_timer() {
    let mut c =
        client_established(TcpConfig { rack: true, tlp: true, initial_window: InitialWindow::Segments(10), ..cfg() });
    assert_eq!(c.send(4 * SMSS_TS as u64), 4 * SMSS_TS as u64);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 4);
    assert_eq!(c.poll_timeout(), Some(at(40)));
    send!(c, time 25, ack_of(0, 25).sack(&[(seg_start(4) - 1, seg_start(4))]));
    assert!(transmit_all(&mut c, at(25)).is_empty());
    assert_eq!(c.poll_timeout(), Some(at(40)), "a duplicate ACK leaves the probe timer");
    send!(c, time 30, ack_of(1, 30));
    transmit_all(&mut c, at(30));
    assert_eq!(c.poll_timeout(), Some(at(50)), "an ACK of new data restarts it");
}

/// Restart after idle (RFC 5681 §4.1) "before beginning transmission": cwnd 20 (IW 10 acknowledged at
/// t = 30, byte counting unlimited), and the ACK closes the window. More is written; the zero-window
/// probes that follow, seconds after the last data, begin no transmission and leave cwnd at 20 (Linux
/// restarts on a write or a window update, `tcp_slow_start_after_idle_check`; Google's
/// `slow_start/slow-start-after-win-update` reads 36 through three probes); the window update at
/// t = 5000 restarts it at IW 10.
#[test]
fn test_established_restart_after_idle_waits_for_the_window() {
    let mut c = client_established(TcpConfig {
        abc: Abc::Unlimited,
        initial_window: InitialWindow::Segments(10),
        send_buffer: ByteSize::new(1 << 20),
        ..cfg()
    });
    assert_eq!(c.send(10 * SMSS_TS as u64), 10 * SMSS_TS as u64);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
    send!(c, time 30, inp(REMOTE_ISS + 1, seg_start(10), ACK, 0, 0).ts(pts(30), ts(20)));
    assert_eq!(c.cwnd() / SMSS_TS, 20);
    assert_eq!(c.send(10 * SMSS_TS as u64), 10 * SMSS_TS as u64);
    assert!(transmit_all(&mut c, at(30)).is_empty(), "the window is closed");
    let mut probes = 0;
    while let Some(t) = c.poll_timeout().filter(|t| *t < at(5000)) {
        c.on_timeout(t);
        probes += transmit_all(&mut c, t).len();
        assert_eq!(c.cwnd() / SMSS_TS, 20, "a window probe restarts nothing");
    }
    assert!(probes >= 2, "zero-window probes: {probes}");
    send!(c, time 5000, inp(REMOTE_ISS + 1, seg_start(10), ACK, REMOTE_WINDOW, 0).ts(pts(5000), ts(20)));
    assert_eq!(transmit_all(&mut c, at(5000)).len(), 10);
    assert_eq!(c.cwnd() / SMSS_TS, 10, "restarted at IW when the window opened");
}

/// Four segments sent at t = 20; the peer SACKs the last byte of segment 3 (t = 25), then segment 1
/// whole and half of segment 2 (t = 26). With `sack_whole_segments` only whole segments count as SACKed
/// (Linux `tcp_match_skb_to_sack` splits an skb at MSS boundaries only): nothing, then segment 1; the
/// byte-wise scoreboard counts 1 byte (a segment in `tcpi_sacked`, rounded up) and then 1.5 segments and
/// that byte (2).
#[test]
fn test_established_sack_counts_whole_segments_only() {
    let sacked = |sack_whole_segments: bool| {
        let mut c = client_established(TcpConfig {
            rack: true,
            sack_whole_segments,
            initial_window: InitialWindow::Segments(10),
            ..cfg()
        });
        assert_eq!(c.send(4 * SMSS_TS as u64), 4 * SMSS_TS as u64);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 4);
        send!(c, time 25, ack_of(0, 25).sack(&[(seg_start(4) - 1, seg_start(4))]));
        transmit_all(&mut c, at(25));
        let first = c.tcp_info(at(25)).sacked;
        let half = seg_start(2) + SMSS_TS / 2;
        send!(c, time 26, ack_of(0, 26).sack(&[(seg_start(1), half), (seg_start(4) - 1, seg_start(4))]));
        transmit_all(&mut c, at(26));
        (first, c.tcp_info(at(26)).sacked)
    };
    assert_eq!(sacked(true), (0, 1));
    assert_eq!(sacked(false), (1, 2));
}
