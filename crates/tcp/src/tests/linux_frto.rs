//! F-RTO (RFC 5682 §3, SACK-enhanced, as Linux's `tcp_enter_loss` / `tcp_process_loss` /
//! `tcp_try_undo_loss` run it with `net.ipv4.tcp_frto` = 2): after a timeout's retransmission, the first
//! ACK that advances SND.UNA sends new data; an ACK of data never retransmitted then shows the timeout
//! spurious and the congestion response is undone; a duplicate ACK instead means the loss was real.

use super::pair::{Fate, Pair, Side};
use super::*;

const SMSS: u32 = 1448;

fn linux(frto: bool) -> TcpConfig {
    // No TLP: its probe would draw an ACK past the held ones before the RTO fires.
    TcpConfig { frto, tlp: false, ..linux_4mib_no_tso() }
}

/// What a run with the first window's ACKs held past the RTO shows.
struct Delayed {
    /// cwnd and ssthresh before the timeout, and once the run settled after it (at the undo, if any).
    before: (u32, u32),
    after: (u32, u32),
    /// Client data segments sent after the timeout's retransmission and before the undo (or the end),
    /// each as (segment index, a retransmission).
    between: Vec<(u32, bool)>,
    segs_retrans: u64,
    cong_over: u64,
}

/// 20 ms each way; 40 segments to send. The server's ACKs of the first ten segments (IW 10) are held
/// 600 ms, past the RTO (200 ms minimum plus the handshake's RTT): the timeout retransmits the first
/// segment, then the delayed ACKs arrive in order, one per original segment (quick ACKs).
fn delayed_acks_past_the_rto(frto: bool) -> Delayed {
    let mut p = Pair::new(linux(frto), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    let s0 = p.client.snd_nxt();
    p.set_filter(move |side, seg| {
        let held = side == Side::Server && seg.ack > s0 && seg.ack <= s0 + 10 * SMSS;
        if held {
            Fate::Delay(dur_ms(600))
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = 40 * SMSS as u64;
    let mut before = (0, 0);
    p.run_while(|p| {
        if p.client.estats().Timeouts == 0 {
            before = (p.client.cwnd(), p.client.ssthresh());
        }
        p.client.estats().Timeouts == 0 && p.now < at(5_000)
    });
    assert_eq!(p.client.estats().Timeouts, 1, "the held ACKs let the RTO fire");
    let rto_at = p.now;
    p.run_while(|p| p.client.estats().CongOverCount == 0 && p.now < at(3_000));
    let after = (p.client.cwnd(), p.client.ssthresh());
    let undo_at = p.now;
    let mut high = s0;
    let mut between = Vec::new();
    for s in p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0) {
        let rtx = s.seg.seq < high;
        high = high.max(s.seg.seq + s.seg.payload_len);
        if s.at >= rto_at && s.at <= undo_at {
            between.push(((s.seg.seq - s0) / SMSS, rtx));
        }
    }
    p.run_while(|p| p.client.estats().ThruOctetsAcked < 40 * SMSS as u64 && p.now < at(10_000));
    let e = p.client.estats();
    assert_eq!(e.ThruOctetsAcked, 40 * SMSS as u64, "everything delivered");
    Delayed { before, after, between, segs_retrans: e.SegsRetrans, cong_over: e.CongOverCount }
}

#[test]
fn a_spurious_timeout_sends_new_data_then_is_undone() {
    let d = delayed_acks_past_the_rto(true);
    assert_eq!(d.between.first(), Some(&(0, true)), "the timeout retransmits the head: {:?}", d.between);
    assert!(d.between.len() >= 2, "step 2.b: new data after the first ACK: {:?}", d.between);
    assert!(d.between[1..].iter().all(|&(k, rtx)| !rtx && k >= 10), "only new data before the undo: {:?}", d.between);
    assert_eq!(d.cong_over, 1, "the timeout was backed out");
    assert!(d.after.0 >= d.before.0, "cwnd restored: {:?} from {:?}", d.after, d.before);
    assert_eq!(d.after.1, d.before.1, "ssthresh restored");
    assert_eq!(d.segs_retrans, 1, "no retransmission but the timeout's");
}

/// The same delayed ACKs without F-RTO: go-back-N retransmits the second segment on the first ACK,
/// and the reduction stays.
#[test]
fn without_frto_the_same_delay_retransmits_and_keeps_the_reduction() {
    let d = delayed_acks_past_the_rto(false);
    assert_eq!(d.cong_over, 0);
    assert!(d.between.iter().filter(|s| s.1).count() >= 2, "go-back-N: {:?}", d.between);
    assert!(d.segs_retrans >= 2);
    assert!(d.after.1 < d.before.1, "the timeout's ssthresh stays: {:?} from {:?}", d.after, d.before);
}

/// Every transmission of a first window lost (a real loss): the timeout's retransmission is
/// acknowledged, F-RTO sends new data, and the duplicate ACKs those bring say the loss was real; the
/// same segments are retransmitted as without F-RTO, each once, and nothing is undone.
#[test]
fn a_real_loss_falls_back_to_conventional_recovery() {
    let run = |frto: bool| {
        let mut p = Pair::new(linux(frto), linux_4mib_no_tso(), dur_ms(20));
        p.establish();
        let mut first: Option<tcplab_wire::SeqNumber> = None;
        let mut seen = std::collections::HashSet::new();
        p.set_filter(move |side, seg| {
            if side != Side::Client || seg.payload_len == 0 {
                return Fate::Deliver;
            }
            let s0 = *first.get_or_insert(seg.seq);
            let k = (seg.seq - s0) / SMSS;
            // The first transmission of each of the first ten segments is lost.
            if k < 10 && seen.insert(k) {
                return Fate::Drop;
            }
            Fate::Deliver
        });
        p.to_write[0] = 40 * SMSS as u64;
        p.run_while(|p| p.client.estats().ThruOctetsAcked < 40 * SMSS as u64 && p.now < at(10_000));
        let e = p.client.estats();
        assert_eq!(e.ThruOctetsAcked, 40 * SMSS as u64, "everything delivered (frto {frto})");
        assert_eq!(e.CongOverCount, 0, "a real loss is not undone (frto {frto})");
        let s0 = p.sent_by(Side::Client).find(|s| s.seg.payload_len > 0).unwrap().seg.seq;
        let mut rtx: Vec<u32> = Vec::new();
        let mut high = s0;
        for s in p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0) {
            if s.seg.seq < high {
                rtx.push((s.seg.seq - s0) / SMSS);
            } else {
                high = s.seg.seq + s.seg.payload_len;
            }
        }
        rtx.sort_unstable();
        (rtx, e.Timeouts)
    };
    let (with, timeouts_with) = run(true);
    let (without, timeouts_without) = run(false);
    assert_eq!(with, (0..10).collect::<Vec<_>>(), "each lost segment retransmitted once");
    assert_eq!(with, without, "the same retransmissions as without F-RTO");
    assert_eq!((timeouts_with, timeouts_without), (1, 1));
}

#[test]
fn frto_is_linux_only() {
    for (name, _) in crate::personality::PERSONALITIES {
        let cfg = TcpConfig::personality(name).unwrap();
        assert_eq!(cfg.frto, *name == "linux", "{name}");
    }
    assert!(!TcpConfig::default().frto, "off in `rfc` and by default");
}

/// What a run shows when the first segment is lost twice (its first transmission and the timeout's
/// retransmission) and the duplicate ACKs that SACK the rest of the first window are held past the
/// timeout: they then SACK data sent once, below the timeout's SND.NXT, while SND.UNA stays.
struct OrigSacked {
    /// cwnd and ssthresh just before the timeout, and once the held SACKs were in (before a second timeout).
    before: (u32, u32),
    after: (u32, u32),
    cong_over: u64,
    timeouts: u64,
}

fn held_sacks_of_original_data(frto: bool) -> OrigSacked {
    let mut p = Pair::new(linux(frto), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    let s0 = p.client.snd_nxt();
    let mut head_sent = 0;
    p.set_filter(move |side, seg| match side {
        Side::Client if seg.payload_len > 0 && seg.seq == s0 => {
            head_sent += 1;
            if head_sent <= 2 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        }
        // The receiver's duplicate ACKs, each SACKing more of segments 1 to 9.
        Side::Server if seg.ack == s0 && !seg.options.sack.is_empty() => Fate::Delay(dur_ms(500)),
        _ => Fate::Deliver,
    });
    p.to_write[0] = 40 * SMSS as u64;
    let mut before = (0, 0);
    p.run_while(|p| {
        if p.client.estats().Timeouts == 0 {
            before = (p.client.cwnd(), p.client.ssthresh());
        }
        p.client.estats().Timeouts == 0 && p.now < at(5_000)
    });
    assert_eq!(p.client.estats().Timeouts, 1, "the lost head and the held SACKs let the RTO fire");
    let rto_at = p.now;
    // The held SACKs arrive about 500 ms after they were sent, before the backed-off RTO (twice about
    // 240 ms) fires again.
    p.run_while(|p| p.client.estats().CongOverCount == 0 && p.now < rto_at + dur_ms(400));
    let after = (p.client.cwnd(), p.client.ssthresh());
    let (cong_over, timeouts) = (p.client.estats().CongOverCount, p.client.estats().Timeouts);
    p.run_while(|p| p.client.estats().ThruOctetsAcked < 40 * SMSS as u64 && p.now < at(10_000));
    assert_eq!(p.client.estats().ThruOctetsAcked, 40 * SMSS as u64, "everything delivered (frto {frto})");
    OrigSacked { before, after, cong_over, timeouts }
}

/// Linux's step 3.b (`tcp_process_loss`): `FLAG_ORIG_SACK_ACKED`, which `tcp_sacktag_one` sets for a
/// newly SACKed segment never retransmitted and ending at or below `high_seq`, makes
/// `tcp_try_undo_loss(sk, true)` undo the timeout, though SND.UNA did not move: not all of the window
/// was lost. Without F-RTO nothing is undone (no D-SACK, no timestamp proof: the head was lost).
#[test]
fn sacks_of_never_retransmitted_data_show_the_timeout_spurious() {
    let d = held_sacks_of_original_data(true);
    assert_eq!((d.cong_over, d.timeouts), (1, 1), "undone on the held SACKs, before a second timeout");
    assert_eq!(d.after.1, d.before.1, "ssthresh restored: {:?} from {:?}", d.after, d.before);
    assert!(d.after.0 >= d.before.0, "cwnd restored: {:?} from {:?}", d.after, d.before);
    let d = held_sacks_of_original_data(false);
    assert_eq!(d.cong_over, 0, "without F-RTO the reduction stays");
    assert!(d.after.1 < d.before.1, "{:?} from {:?}", d.after, d.before);
}

/// Linux counts what is in flight after a timeout as in every state (`tcp_packets_in_flight`, with
/// `tcp_enter_loss` having marked every unSACKed segment lost), F-RTO or not: new data sent past the
/// timeout's SND.NXT leaves the count once SACKed. Without F-RTO, the first window lost and segment 5
/// lost again on the timeout's go-back-N: SND.UNA stays at segment 5 until a second timeout, while the
/// SACKs of the new data sent behind it keep clocking more out. RFC 6675's count after an RTO keeps
/// SACKed data above the timeout's SND.NXT in the pipe, which would stop the new data at one cwnd.
#[test]
fn after_a_timeout_sacked_new_data_leaves_the_linux_count() {
    let mut p = Pair::new(linux(false), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    let s0 = p.client.snd_nxt();
    let mut sent = std::collections::HashMap::new();
    p.set_filter(move |side, seg| {
        if side != Side::Client || seg.payload_len == 0 {
            return Fate::Deliver;
        }
        let k = (seg.seq - s0) / SMSS;
        let n = sent.entry(k).or_insert(0);
        *n += 1;
        if k < 10 && *n == 1 || k == 5 && *n == 2 {
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.to_write[0] = 400 * SMSS as u64;
    let mut cwnd = 0;
    p.run_while(|p| {
        let e = p.client.estats();
        if e.Timeouts == 1 {
            cwnd = cwnd.max(p.client.cwnd());
            assert!(e.PipeSize <= p.client.cwnd() as u64, "the count respects cwnd");
        }
        e.Timeouts < 2 && p.now < at(5_000)
    });
    assert_eq!(p.client.estats().Timeouts, 2, "segment 5 waits for a second timeout");
    let high = s0 + 10 * SMSS;
    let new_data = p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0 && s.seg.seq >= high).count() as u32;
    assert!(
        new_data > 2 * cwnd / SMSS,
        "SACKs of new data clocked out more new data: {new_data} segments against a cwnd of at most {} segments",
        cwnd / SMSS
    );
}
