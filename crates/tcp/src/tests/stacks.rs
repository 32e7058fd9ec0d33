//! Behaviours where the stacks (and their knobs) differ: PAWS, the 4.4BSD phase-locked delayed ACK,
//! TCP_CORK, a full interface queue, and finding a lost retransmission without a timeout.

use super::pair::{Fate, Pair, Side};
use super::*;
use crate::config::{AckPolicy, IfqFull};
use crate::InitialWindow;

/// RFC 7323 §5.3 R1: a segment whose TSval is older than TS.Recent (pts(10), from the SYN-ACK) is an
/// old duplicate: dropped, and answered with an ACK. The same data with a current TSval is accepted.
#[test]
fn test_established_paws_drops_old_timestamps() {
    let mut c = client_established(cfg());
    send!(c, time 20, inp(50_001, 10_001, PSH_ACK, REMOTE_WINDOW, 100).ts(pts(5), 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10))]);
    assert_eq!((c.readable(), c.estats().ThruOctetsReceived), (0, 0));
    send!(c, time 21, inp(50_001, 10_001, PSH_ACK, REMOTE_WINDOW, 100).ts(pts(21), 11));
    assert_eq!(c.readable(), 100);
    // A late copy of data already received, with an old TSval: still dropped, and reported with a
    // D-SACK (RFC 2883 §4; Linux tcp_send_dupack), so its sender can tell a retransmission was needless.
    transmit_all(&mut c, at(21));
    send!(c, time 22, inp(50_001, 10_001, PSH_ACK, REMOTE_WINDOW, 100).ts(pts(5), 11));
    let acks = transmit_all(&mut c, at(22));
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].options.sack.as_slice(), &[SackBlock { left: SeqNumber(50_001), right: SeqNumber(50_101) }]);
}

/// 4.4BSD flushes delayed ACKs from one global 200 ms fast timer, so the delay is whatever is left of
/// the current 200 ms period (0 to 200 ms); RFC 1122-style delayed ACK waits 200 ms from the arrival.
#[test]
fn test_established_bsd_delayed_ack_is_phase_locked() {
    for (arrival, bsd_due, delayed_due) in [(20, 200, 220), (190, 200, 390), (200, 400, 400)] {
        for (policy, due) in [(AckPolicy::Bsd, bsd_due), (AckPolicy::Delayed, delayed_due)] {
            let mut c = client_established(TcpConfig { ack_policy: policy, ..cfg() });
            send!(c, time arrival, peer(50_001, 10_001, PSH_ACK, 1000, arrival, 11));
            recv_nothing!(c, time arrival);
            assert_eq!(c.poll_timeout(), Some(at(due)), "{policy:?}, data at {arrival} ms");
        }
    }
}

/// TCP_CORK holds a short segment until a full one can go or 200 ms pass (Linux's ceiling); without it
/// (Nagle alone, nothing outstanding) the short segment goes at once.
#[test]
fn test_established_cork_holds_short_segments_for_200ms() {
    let mut c = client_established(TcpConfig { cork: true, ..cfg() });
    assert_eq!(c.send(100), 100);
    recv_nothing!(c, time 20);
    fire(&mut c, 220);
    recv!(c, time 220, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(221, pts(10))]);
    // A full segment is never held.
    let mut c = client_established(TcpConfig { cork: true, ..cfg() });
    assert_eq!(c.send(1448 + 100), 1548);
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 1448).ts(21, pts(10))]);
    let mut c = client_established(cfg());
    assert_eq!(c.send(100), 100);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 100).ts(21, pts(10))]);
}

/// The interface refuses a segment (TxRoom::Full). `block` counts a SendStall and waits; `cwr` (Linux
/// `tcp_enter_cwr`) also takes a congestion signal: ssthresh = max(cwnd/2, 2·SMSS) = 2896, cwnd =
/// ssthresh, so only two of the three segments IW allowed go when the queue has room; `drop` sends
/// anyway (the interface drops it).
#[test]
fn test_established_full_interface_queue() {
    let stall = |ifq_full: IfqFull| {
        let mut c = client_established(TcpConfig { ifq_full, ..cfg() });
        assert_eq!(c.send(4 * 1448), 4 * 1448);
        let refused = c.poll_transmit(at(20), TxRoom::Full).is_none();
        let sent = transmit_all(&mut c, at(21)).len();
        let e = c.estats();
        (refused, sent, e.SendStall, e.CongSignals, c.ssthresh())
    };
    assert_eq!(stall(IfqFull::Block), (true, 3, 1, 0, u32::MAX));
    assert_eq!(stall(IfqFull::Cwr), (true, 2, 1, 1, 2896));
    let (refused, sent, send_stall, _, _) = stall(IfqFull::Drop);
    assert_eq!((refused, sent, send_stall), (false, 2, 0));
}

/// `ifq_full = "linux-2.4"`: 2.4's `tcp_enter_cwr` with nothing in flight sets ssthresh = max(cwnd/2, 2)
/// = 2 segments and cwnd = in flight + 1 = 1 segment; a second refusal changes nothing but is counted
/// again in CongSignals, as web100 counted every call of `tcp_enter_cwr`.
#[test]
fn test_established_full_interface_queue_linux24() {
    let cfg = TcpConfig { ifq_full: IfqFull::Linux24, cwnd_unit: crate::config::CwndUnit::Packets, ..cfg() };
    let mut c = client_established(cfg);
    assert_eq!(c.send(4 * 1448), 4 * 1448);
    assert!(c.poll_transmit(at(20), TxRoom::Full).is_none());
    assert_eq!((c.ssthresh(), c.cwnd()), (2896, 1448));
    assert!(c.poll_transmit(at(20), TxRoom::Full).is_none());
    let e = c.estats();
    assert_eq!((e.SendStall, e.CongSignals), (2, 2));
    assert_eq!(transmit_all(&mut c, at(21)).len(), 1);
}

/// Sixty segments (IW 20) over a 50 ms RTT; segment 3 is lost, and so is its first retransmission.
/// RFC 6675 recovery has no rule for a lost retransmission: the RTO (1 s) repairs it. Linux's
/// `tcp_mark_lost_retrans` (`lost_retransmit_detection`: DupThresh segments sent after the
/// retransmission are SACKed) and RACK (a retransmission sent before segments now SACKed, more than
/// an RTT ago, is lost: RFC 8985 §6.2) resend it without a timeout.
#[test]
fn test_established_lost_retransmission() {
    let run = |cfg: TcpConfig| {
        let cfg = TcpConfig { initial_window: InitialWindow::Segments(20), recv_buffer: cfg_bytes(1 << 20), ..cfg };
        let mut p = Pair::new(cfg.clone(), cfg, dur_ms(25));
        p.record = false;
        p.establish();
        let lost = p.client.snd_nxt() + 3 * SMSS_TS;
        let mut drops = 0;
        p.set_filter(move |side, seg| {
            if side == Side::Client && seg.seq == lost && seg.payload_len > 0 && drops < 2 {
                drops += 1;
                return Fate::Drop;
            }
            Fate::Deliver
        });
        p.to_write[0] = 60 * SMSS_TS as u64;
        p.run_while(|p| p.read[1] < 60 * SMSS_TS as u64);
        p.client.estats()
    };
    assert_eq!(run(cfg()).Timeouts, 1);
    let e = run(TcpConfig { lost_retransmit_detection: true, ..cfg() });
    assert_eq!((e.Timeouts, e.SegsRetrans), (0, 2));
    let e = run(TcpConfig { rack: true, ..cfg() });
    assert_eq!((e.Timeouts, e.SegsRetrans), (0, 2));
}
