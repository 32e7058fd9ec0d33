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
