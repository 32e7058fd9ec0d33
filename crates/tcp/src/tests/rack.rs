//! RACK-TLP (RFC 8985): a tail loss repaired by a probe instead of a timeout, and a reordering window
//! that stops spurious retransmissions once reordering has been seen.

use super::pair::{Fate, Pair, Side};
use super::*;
use crate::InitialWindow;

fn rack_cfg(rack: bool) -> TcpConfig {
    TcpConfig {
        rack,
        tlp: rack,
        initial_window: InitialWindow::Segments(10),
        send_buffer: cfg_bytes(1 << 20),
        recv_buffer: cfg_bytes(256 << 10),
        ..cfg()
    }
}

/// Eleven segments sent at once (t = T, the handshake done) over a 100 ms RTT, the last two dropped.
/// The ACKs of the first nine arrive at T+100 (the receiver acknowledges at once: every second
/// segment, and the first on the window update its read causes), SRTT 100 ms exactly. With two
/// segments in flight the PTO is 2·SRTT = 200 ms (RFC 8985 §7.2), so at T+300 the probe resends the
/// last segment (no new data to send, §7.3). Its SACK (T+400) shows a segment delivered that was sent
/// after segment 9, which was sent more than RACK.rtt + reo_wnd (min_RTT/4 = 25 ms: one segment SACKed,
/// no recovery yet) ago: RACK marks it lost (§6.2 step 5), fast recovery resends it at T+400, and all
/// is acknowledged at T+500. Without RACK-TLP the RTO fires 1 s (RFC 6298 minimum) after the last ACK.
#[test]
fn test_established_tail_drop_repaired_by_loss_probe() {
    let run = |rack: bool| {
        let cfg = TcpConfig { initial_window: InitialWindow::Segments(12), ..rack_cfg(rack) };
        let mut p = Pair::new(cfg.clone(), cfg, dur_ms(50));
        p.establish();
        let start = p.now;
        let first = p.client.snd_nxt();
        let lost = [first + 9 * SMSS_TS, first + 10 * SMSS_TS];
        let mut dropped = 0;
        p.set_filter(move |side, seg| {
            if side == Side::Client && lost.contains(&seg.seq) && dropped < 2 {
                dropped += 1;
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        p.to_write[0] = 11 * SMSS_TS as u64;
        p.run_while(|p| p.client.snd_una() != first + 11 * SMSS_TS);
        let ms = |t: Instant| t.saturating_since(start).as_millis();
        let rtx: Vec<_> =
            p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0).skip(11).map(|s| (ms(s.at), s.seg.seq)).collect();
        (ms(p.now), rtx, p.client.estats(), lost)
    };
    let (done, rtx, e, lost) = run(true);
    assert_eq!(rtx, vec![(300, lost[1]), (400, lost[0])], "probe of the tail, then RACK's repair");
    assert_eq!(done, 500);
    assert_eq!((e.LossProbes, e.RackMarkedLost, e.Timeouts, e.FastRetran, e.SegsRetrans), (1, 1, 0, 1, 2));
    let (done, rtx, e, _) = run(false);
    assert_eq!(rtx[0].0, 1100, "RTO 1 s after the last ACK");
    assert!(done > 1200);
    assert_eq!((e.LossProbes, e.Timeouts), (0, 1));
}

/// Linux's `TCP_TIMEOUT_MIN_US` (`timeout_min`, 2 ms in the `linux` personality) on both RACK-TLP timers,
/// over a 100 ms RTT. The tail drop above: the probe goes 2·SRTT + 2 ms after the last ACK (RFC 8985 §7.2
/// alone: 2·SRTT), and RACK's repair on its SACK 100 ms later. Four segments of which the first three
/// are lost: the SACK of the fourth (T+100) finds them sent 100 ms ago, within RACK.rtt + reo_wnd
/// (min_RTT/4 = 25 ms, no reordering seen, one segment SACKed), and the reordering timer fires when the
/// window has passed, at T+125, or 2 ms later.
#[test]
fn test_established_timeout_min_delays_the_probe_and_the_reordering_timer() {
    let run = |timeout_min: Duration, sent: u32, lost: &'static [u32]| {
        let cfg = TcpConfig { initial_window: InitialWindow::Segments(12), timeout_min, ..rack_cfg(true) };
        let mut p = Pair::new(cfg.clone(), cfg, dur_ms(50));
        p.establish();
        let start = p.now;
        let first = p.client.snd_nxt();
        let mut dropped = 0;
        p.set_filter(move |side, seg| {
            if side == Side::Client && lost.iter().any(|&i| seg.seq == first + i * SMSS_TS) && dropped < lost.len() {
                dropped += 1;
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        p.to_write[0] = (sent * SMSS_TS) as u64;
        p.run_while(|p| p.client.snd_una() != first + sent * SMSS_TS);
        let us = |t: Instant| t.saturating_since(start).as_micros();
        let rtx: Vec<_> = p
            .sent_by(Side::Client)
            .filter(|s| s.seg.payload_len > 0)
            .skip(sent as usize)
            .map(|s| (us(s.at), (s.seg.seq - first) / SMSS_TS))
            .collect();
        rtx
    };
    assert_eq!(run(Duration::ZERO, 11, &[9, 10]), vec![(300_000, 10), (400_000, 9)]);
    assert_eq!(run(dur_ms(2), 11, &[9, 10]), vec![(302_000, 10), (402_000, 9)]);
    assert_eq!(run(Duration::ZERO, 4, &[0, 1, 2])[0], (125_000, 0));
    assert_eq!(run(dur_ms(2), 4, &[0, 1, 2])[0], (127_000, 0));
}

/// A bulk transfer over a 50 ms RTT in which every 150th data segment arrives 10 ms late (reordered,
/// not lost). DupThresh-based recovery retransmits a late segment whenever three SACKs arrive before
/// it (8 of the 20 times here; later in the run the bursts are shorter). RACK does so the first time only (no reordering seen yet: the window is zero once
/// DupThresh segments are SACKed, RFC 8985 §6.2 step 4); the D-SACK for that needless retransmission
/// shows reordering, and from then on the window is min_RTT/4 · 2 = 25 ms, more than the 10 ms delay.
#[test]
fn test_established_rack_reordering_window_adapts() {
    let run = |rack: bool| {
        let mut p = Pair::new(rack_cfg(rack), rack_cfg(rack), dur_ms(25));
        p.record = false;
        p.establish();
        let mut n = 0u32;
        let mut delayed = std::collections::HashSet::new();
        p.set_filter(move |side, seg| {
            if side == Side::Client && seg.payload_len > 0 {
                n += 1;
                if n.is_multiple_of(150) && delayed.insert(seg.seq) {
                    return Fate::Delay(dur_ms(10));
                }
            }
            Fate::Deliver
        });
        p.to_write[0] = 3_000 * SMSS_TS as u64;
        p.run_while(|p| p.read[1] < 3_000 * SMSS_TS as u64);
        p.client.estats()
    };
    let e = run(false);
    assert!(e.SegsRetrans >= 5 && e.DSACKDups == e.SegsRetrans, "dupthresh retransmits late segments: {e:?}");
    let e = run(true);
    assert_eq!((e.SegsRetrans, e.DSACKDups, e.Timeouts), (1, 1, 0), "only the first, before reordering was seen");
}

/// RFC 8985 §7.4: a probe that repaired a loss is told apart from one that did not. Eleven segments,
/// the last one's first copy either dropped or held 800 ms. The receiver's delayed ACK for the tenth
/// segment re-arms the PTO (2·SRTT + 200 ms with one segment in flight), which fires about 740 ms after
/// the segments left. Dropped: the probe is the only copy of the last segment to arrive, no
/// D-SACK follows, and once an ACK goes past the probe (the next write's) the sender treats the episode
/// as a loss and reduces cwnd once (Linux `tcp_process_tlp_ack`). Held: the late original and the
/// probe both arrive, the probe draws a D-SACK, and cwnd stays.
#[test]
fn test_established_loss_probe_recovery_reduces_cwnd_once() {
    let run = |fate: Fate| {
        let cfg = TcpConfig { initial_window: InitialWindow::Segments(12), prr: true, ..rack_cfg(true) };
        let mut p = Pair::new(cfg.clone(), cfg, dur_ms(50));
        p.establish();
        let first = p.client.snd_nxt();
        let last = first + 10 * SMSS_TS;
        let mut done = false;
        p.set_filter(move |side, seg| {
            if side == Side::Client && seg.seq == last && !done {
                done = true;
                return fate;
            }
            Fate::Deliver
        });
        p.to_write[0] = 11 * SMSS_TS as u64;
        p.run_while(|p| p.client.snd_una() != first + 11 * SMSS_TS);
        let cwnd = p.client.cwnd();
        p.to_write[0] = 2 * SMSS_TS as u64;
        p.run_while(|p| p.client.snd_una() != first + 13 * SMSS_TS);
        p.run_until(p.now + dur_ms(200));
        (cwnd, p.client.cwnd(), p.client.estats())
    };
    let (before, after, e) = run(Fate::Drop);
    assert_eq!((e.LossProbes, e.LossProbeRecoveries, e.CongSignals, e.Timeouts), (1, 1, 1, 0));
    assert!(after < before, "cwnd reduced: {before} -> {after}");
    let (before, after, e) = run(Fate::Delay(dur_ms(800)));
    assert_eq!((e.LossProbes, e.DSACKDups, e.LossProbeRecoveries, e.CongSignals), (1, 1, 0, 0));
    assert!(after >= before, "cwnd kept: {before} -> {after}");
}

/// One segment dropped in slow start (`linux`, 10 ms each way): the SACKs of the data after it make RACK
/// mark it lost, and it is retransmitted at the instant the last of them arrives, after new data the
/// instant's earlier ACKs released. One round trip later the SACK of that new data arrives before the
/// ACK of the retransmission; the new data was sent before the retransmission, so the retransmission is
/// not overdue, and it is not sent again. (Ordered by sequence number, the tie of their equal transmit
/// times made the retransmission look older: a second, spurious retransmission that D-SACK reported.)
#[test]
fn test_established_retransmission_after_new_data_of_its_instant_is_not_lost() {
    let cfg = TcpConfig::personality("linux").unwrap();
    let cfg = TcpConfig { send_buffer: cfg_bytes(1 << 20), recv_buffer: cfg_bytes(1 << 20), ..cfg };
    let mut p = Pair::new(cfg.clone(), cfg, dur_ms(10));
    p.establish();
    let first = p.client.snd_nxt();
    let lost = first + 33 * SMSS_TS;
    let mut dropped = false;
    p.set_filter(move |side, seg| {
        if side == Side::Client && seg.seq == lost && !std::mem::replace(&mut dropped, true) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = 400 * SMSS_TS as u64;
    p.run_to_idle();
    assert_eq!(p.read[1], 400 * SMSS_TS as u64);
    let resent: Vec<_> =
        p.sent_by(Side::Client).filter(|s| s.seg.seq == lost && s.seg.payload_len > 0).map(|s| s.at).collect();
    assert_eq!(resent.len(), 2, "the original and one retransmission: {resent:?}");
    // The retransmission went after new data sent at the same instant.
    let rtx_at = resent[1];
    let before: Vec<_> = p.trace.iter().take_while(|s| !(s.at == rtx_at && s.seg.seq == lost)).collect();
    assert!(before.iter().any(|s| s.from == Side::Client && s.at == rtx_at && s.seg.seq > lost));
    let c = p.client.estats();
    assert_eq!((c.SegsRetrans, c.DSACKDups, c.FastRetran), (1, 0, 1));
}
