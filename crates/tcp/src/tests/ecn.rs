//! ECN (RFC 3168 §6.1) between two real connections: the negotiation matrix of Linux's `tcp_ecn` values,
//! the SYN fallback, ECT on new data only, the receiver's echo until CWR, and the sender's single
//! reduction per window.

use tcplab_units::ByteSize;
use tcplab_wire::{EcnCodepoint, SeqNumber, TcpFlags, TcpSegment};

use super::dur_ms;
use super::pair::{Fate, Pair, Side};
use crate::{EcnMode, TcpConfig};

const TCPI_OPT_ECN: u8 = 8;
const ECE_CWR: TcpFlags = TcpFlags(TcpFlags::ECE.0 | TcpFlags::CWR.0);

fn with_ecn(base: &str, ecn: EcnMode) -> TcpConfig {
    let mut c = TcpConfig::personality(base).unwrap();
    c.ecn = ecn;
    c.send_buffer = ByteSize::new(1 << 20);
    c.recv_buffer = ByteSize::new(1 << 20);
    c
}

fn is_new_data(seg: &TcpSegment, highest: &mut SeqNumber) -> bool {
    let end = seg.seq + seg.payload_len;
    let new = seg.payload_len > 0 && end > *highest;
    if new {
        *highest = end;
    }
    new
}

/// A filter that gives the client's `n`-th new data segment `fate` and delivers everything else.
fn nth_new_data(n: usize, fate: Fate) -> impl FnMut(Side, &TcpSegment) -> Fate {
    let (mut k, mut highest) = (0, SeqNumber(0));
    move |side, seg| {
        if side == Side::Client && is_new_data(seg, &mut highest) {
            k += 1;
            if k == n {
                return fate;
            }
        }
        Fate::Deliver
    }
}

/// Linux `tcp_ecn`: the client asks only with 1 (`on`); the server agrees with 1 or 2 (`accept`). The SYN
/// is an ECN-setup SYN (ECE and CWR) exactly when the client asks, the SYN-ACK has ECE (without CWR)
/// exactly when ECN is agreed, and tcp_info's TCPI_OPT_ECN says so at both ends.
#[test]
fn test_handshake_ecn_negotiation_matrix() {
    use EcnMode::*;
    for client in [Off, On, Accept] {
        for server in [Off, On, Accept] {
            let mut p = Pair::new(with_ecn("rfc", client), with_ecn("rfc", server), dur_ms(10));
            p.establish();
            let agreed = client == On && server != Off;
            let syn = p.sent_by(Side::Client).next().unwrap().seg;
            assert_eq!(syn.flags.contains(ECE_CWR), client == On, "{client:?}/{server:?} SYN {:?}", syn.flags);
            let syn_ack = p.sent_by(Side::Server).next().unwrap().seg;
            assert!(syn_ack.flags.syn() && syn_ack.flags.ack());
            assert_eq!(syn_ack.flags.contains(TcpFlags::ECE), agreed, "{client:?}/{server:?} SYN-ACK");
            assert!(!syn_ack.flags.contains(TcpFlags::CWR));
            assert_eq!((syn.ecn, syn_ack.ecn), (EcnCodepoint::NotEct, EcnCodepoint::NotEct), "§6.1.1");
            let now = p.now;
            for side in [Side::Client, Side::Server] {
                let on = p.conn(side).tcp_info(now).options & TCPI_OPT_ECN != 0;
                assert_eq!(on, agreed, "{client:?}/{server:?} {side:?}");
            }
        }
    }
}

/// RFC 3168 §6.1.1.1 / Linux `tcp_ecn_fallback`: the ECN-setup SYN is lost, the SYN sent again asks for
/// nothing, and the connection runs without ECN.
#[test]
fn test_syn_sent_retransmitted_syn_drops_ecn() {
    let mut p = Pair::new(with_ecn("linux", EcnMode::On), with_ecn("linux", EcnMode::On), dur_ms(10));
    let mut first = true;
    p.set_filter(move |side, seg| {
        if side == Side::Client && seg.flags.syn() && std::mem::take(&mut first) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.establish();
    let syns: Vec<_> = p.sent_by(Side::Client).filter(|s| s.seg.flags.syn()).map(|s| s.seg.flags).collect();
    assert_eq!(syns, [TcpFlags::SYN | ECE_CWR, TcpFlags::SYN]);
    let now = p.now;
    assert_eq!(p.client.tcp_info(now).options & TCPI_OPT_ECN, 0);
    assert_eq!(p.server.tcp_info(now).options & TCPI_OPT_ECN, 0);
}

/// What a transfer with the `k`-th new data segment (and, with `also`, the `k + also`-th) CE-marked did.
struct Marked {
    p: Pair,
    /// Sequence number of the first marked segment.
    marked: SeqNumber,
}

fn transfer_with_marks(base: &str, k: usize, also: Option<usize>) -> Marked {
    transfer_with_marks_from(with_ecn(base, EcnMode::On), with_ecn(base, EcnMode::Accept), k, also)
}

fn transfer_with_marks_from(client: TcpConfig, server: TcpConfig, k: usize, also: Option<usize>) -> Marked {
    let mut p = Pair::new(client, server, dur_ms(10));
    p.establish();
    let mut n = 0;
    let mut highest = SeqNumber(0);
    let marked = std::rc::Rc::new(std::cell::Cell::new(SeqNumber(0)));
    let m = marked.clone();
    p.set_filter(move |side, seg| {
        if side != Side::Client || !is_new_data(seg, &mut highest) {
            return Fate::Deliver;
        }
        n += 1;
        if n == k {
            m.set(seg.seq);
        }
        if n == k || also.is_some_and(|a| n == k + a) {
            Fate::MarkCe
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = 400 * 1448;
    p.close_when_written[0] = true;
    p.run_to_idle();
    assert_eq!(p.read[1], 400 * 1448);
    let marked = marked.get();
    Marked { p, marked }
}

/// One CE mark (the 30th data segment of a 400-segment transfer, during slow start): the receiver sets
/// ECE on every segment from that arrival until the CWR segment arrives, and on none after (§6.1.3); the
/// sender reduces once though several ACKs echo (§6.1.2: once per window), ssthresh = FlightSize / 2
/// (RFC 5681 (4), the `rfc` reduction), and sets CWR on exactly one segment, new data, the first it
/// sends after the reduction. Nothing is retransmitted.
#[test]
fn test_established_ce_mark_echoed_until_cwr_and_answered_once() {
    let Marked { p, marked } = transfer_with_marks("rfc", 30, None);
    let ce_arrival = p.arrivals.iter().find(|a| a.to == Side::Server && a.seg.ecn == EcnCodepoint::Ce).unwrap();
    assert_eq!(ce_arrival.seg.seq, marked);
    let cwr: Vec<_> = p.sent_by(Side::Client).filter(|s| s.seg.flags.contains(TcpFlags::CWR)).collect();
    assert_eq!(cwr.len(), 2, "the ECN-setup SYN and one data segment: {cwr:?}");
    let cwr = cwr[1];
    assert!(cwr.seg.payload_len > 0 && cwr.seg.ecn == EcnCodepoint::Ect0);
    let cwr_arrival = p.arrivals.iter().find(|a| a.to == Side::Server && a.seg.seq == cwr.seg.seq).unwrap();
    // The receiver: ECE on what it sent while the echo lasted, and only then.
    let (from, to) = (ce_arrival.trace_len, cwr_arrival.trace_len);
    for (i, s) in p.trace.iter().enumerate().filter(|(_, s)| s.from == Side::Server && !s.seg.flags.syn()) {
        let echoing = i >= from && i < to;
        assert_eq!(s.seg.flags.contains(TcpFlags::ECE), echoing, "server segment #{i} {:?}", s.seg);
        assert_eq!(s.seg.ecn, EcnCodepoint::NotEct, "§6.1.4: pure ACKs are not ECT");
    }
    let server = p.server.estats();
    assert_eq!((server.CERcvd, server.ECESent), (1, 1));
    // The sender: the first ECE ACK reduced; the others in that window did not.
    let first_ece = p
        .arrivals
        .iter()
        .find(|a| a.to == Side::Client && !a.seg.flags.syn() && a.seg.flags.contains(TcpFlags::ECE))
        .unwrap();
    let client = p.client.estats();
    assert!(client.ECNsignals >= 2, "several ACKs echoed: {}", client.ECNsignals);
    assert_eq!((client.CongSignals, client.SegsRetrans, client.FastRetran), (1, 0, 0));
    let nxt = p.trace[..first_ece.trace_len]
        .iter()
        .filter(|s| s.from == Side::Client)
        .map(|s| s.seg.seq + s.seg.seq_len())
        .fold(first_ece.seg.ack, |a, b| if b > a { b } else { a });
    let flight = nxt - first_ece.seg.ack;
    let smss = p.client.smss();
    assert_eq!(p.client.ssthresh(), (flight / 2).max(2 * smss), "RFC 5681 (4) from FlightSize {flight}");
    // CWR goes on the first new data sent after the reduction.
    let after: Vec<_> =
        p.trace[first_ece.trace_len..].iter().filter(|s| s.from == Side::Client && s.seg.payload_len > 0).collect();
    assert_eq!(after[0].seg.seq, cwr.seg.seq);
}

/// Two CE marks a few segments apart, within one window: one echo episode (ECESent 1: the second mark
/// arrives while ECE is already being sent) and one reduction.
#[test]
fn test_established_two_marks_in_one_window_reduce_once() {
    let Marked { p, .. } = transfer_with_marks("rfc", 30, Some(3));
    let (server, client) = (p.server.estats(), p.client.estats());
    assert_eq!((server.CERcvd, server.ECESent), (2, 1));
    assert_eq!(client.CongSignals, 1);
}

/// Under `linux`: the CE-marked segment is ACKed at once (`tcp_ecn_check_ce` enters quick-ACK mode), as is
/// the CWR segment (`tcp_ecn_accept_cwr`); the reduction is CUBIC's, ssthresh from cwnd (β = 0.7), once.
#[test]
fn test_established_linux_acks_ce_and_cwr_at_once() {
    let Marked { p, marked } = transfer_with_marks("linux", 31, None);
    let acked_at_once = |seq: SeqNumber| {
        let a = p.arrivals.iter().find(|a| a.to == Side::Server && a.seg.seq == seq).unwrap();
        let end = seq + a.seg.payload_len;
        p.trace[a.trace_len..].iter().any(|s| s.from == Side::Server && s.at == a.at && s.seg.ack >= end)
    };
    assert!(acked_at_once(marked), "the CE segment");
    let cwr = p.sent_by(Side::Client).filter(|s| s.seg.flags.contains(TcpFlags::CWR)).nth(1).unwrap().seg;
    assert!(acked_at_once(cwr.seq), "the CWR segment");
    let client = p.client.estats();
    assert_eq!((client.CongSignals, client.SegsRetrans), (1, 0));
    assert_eq!(p.server.estats().ECESent, 1);
}

/// RFC 3168 §6.1.5 and Linux `tcp_ecn_send`: retransmissions are not ECT, new data is; the loss's
/// reduction also queues CWR (§6.1.2: a reduction "for any reason"), which rides on new data.
#[test]
fn test_established_retransmission_is_not_ect() {
    let mut p = Pair::new(with_ecn("rfc", EcnMode::On), with_ecn("rfc", EcnMode::On), dur_ms(10));
    p.establish();
    p.set_filter(nth_new_data(20, Fate::Drop));
    p.to_write[0] = 100 * 1448;
    p.run_to_idle();
    assert_eq!(p.read[1], 100 * 1448);
    let mut highest = SeqNumber(0);
    let mut retransmissions = 0;
    let mut cwr = Vec::new();
    for s in p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0) {
        let new = is_new_data(&s.seg, &mut highest);
        let want = if new { EcnCodepoint::Ect0 } else { EcnCodepoint::NotEct };
        assert_eq!(s.seg.ecn, want, "{:?}", s.seg);
        retransmissions += !new as u32;
        if s.seg.flags.contains(TcpFlags::CWR) {
            assert!(new);
            cwr.push(s.seg.seq);
        }
    }
    assert_eq!(retransmissions, 1);
    assert_eq!(cwr.len(), 1, "the fast retransmit's reduction, announced once");
    assert!(p
        .sent_by(Side::Server)
        .all(|s| s.seg.ecn == EcnCodepoint::NotEct && (s.seg.flags.syn() || !s.seg.flags.contains(TcpFlags::ECE))));
}

/// ECN off (every shipped personality but `linux`, which only accepts): no segment is ECT or carries ECE
/// or CWR, and a CE mark the network sets anyway (it may not, on Not-ECT) is ignored — here the marking
/// queue drops instead.
#[test]
fn test_established_without_ecn_a_marking_queue_drops() {
    let mut p = Pair::new(with_ecn("linux", EcnMode::Accept), with_ecn("linux", EcnMode::Accept), dur_ms(10));
    p.establish();
    p.set_filter(nth_new_data(20, Fate::MarkCe));
    p.to_write[0] = 100 * 1448;
    p.run_to_idle();
    assert_eq!(p.read[1], 100 * 1448);
    assert!(p.trace.iter().all(|s| s.seg.ecn == EcnCodepoint::NotEct && !s.seg.flags.contains(TcpFlags::ECE)));
    assert!(p.trace.iter().all(|s| !s.seg.flags.contains(TcpFlags::CWR)));
    // The queue dropped the Not-ECT segment, and only it is sent again. Since the `linux` receiver's window
    // opens from 64 KiB (`rcv_ssthresh_from_initial_window`) the retransmission leaves in the same instant
    // as, and after, the new data the same ACKs let out; RACK breaks the tie of equal send times by
    // sequence (Linux `tcp_skb_sent_after`), so a SACK of that earlier-sent data marks the retransmission
    // lost and it goes once more (2; a same-instant ordering defect, docs/packetdrill.md § Sixth round).
    let retransmitted: Vec<u32> = p
        .sent_by(Side::Client)
        .filter(|s| s.seg.payload_len > 0)
        .scan(SeqNumber(0), |high, s| {
            let again = s.seg.seq + s.seg.payload_len <= *high;
            *high = (*high).max(s.seg.seq + s.seg.payload_len);
            Some(again.then_some(s.seg.seq.0))
        })
        .flatten()
        .collect();
    assert!(!retransmitted.is_empty(), "the queue dropped the Not-ECT segment");
    assert!(retransmitted.iter().all(|&q| q == retransmitted[0]), "only the dropped segment: {retransmitted:?}");
    assert_eq!(p.client.estats().SegsRetrans, retransmitted.len() as u64);
}

/// What the sender did in a CWR reduction: from the first ACK that echoed ECE to the ACK that ended it
/// (the first to cover SND.NXT of the signal).
struct Cwr {
    /// Data bytes the sender sent in answer to the first ECE ACK (before the next ACK arrived).
    first_answer: u32,
    /// Data bytes sent from the first ECE ACK until the ACK that ended the reduction.
    sent: u32,
    /// Bytes acknowledged meanwhile: DeliveredData summed (no SACK in play here).
    delivered: u32,
    /// FlightSize at the signal (RFC 6937 RecoverFS).
    recover_fs: u32,
    /// Data bytes sent from the first ECE ACK while the first quarter of RecoverFS was delivered, and
    /// what those ACKs delivered.
    early: (u32, u32),
}

fn cwr_episode(p: &Pair) -> Cwr {
    let to_client: Vec<_> = p.arrivals.iter().filter(|a| a.to == Side::Client && !a.seg.flags.syn()).collect();
    let i = to_client.iter().position(|a| a.seg.flags.contains(TcpFlags::ECE)).expect("an ECE ACK");
    let first = to_client[i];
    let before = to_client[i - 1].seg.ack;
    let high = p.trace[..first.trace_len]
        .iter()
        .filter(|s| s.from == Side::Client)
        .map(|s| s.seg.seq + s.seg.seq_len())
        .fold(first.seg.ack, |a, b| if b > a { b } else { a });
    let end = to_client[i..].iter().position(|a| a.seg.ack >= high).map(|j| i + j).expect("the reduction ends");
    let data = |from: usize, to: usize| -> u32 {
        p.trace[from..to].iter().filter(|s| s.from == Side::Client).map(|s| s.seg.payload_len).sum()
    };
    let quarter = to_client[i..].iter().position(|a| 4 * (a.seg.ack - before) >= high - before).unwrap() + i;
    Cwr {
        first_answer: data(first.trace_len, to_client[i + 1].trace_len),
        early: (data(first.trace_len, to_client[quarter].trace_len), to_client[quarter - 1].seg.ack - before),
        sent: data(first.trace_len, to_client[end].trace_len),
        delivered: to_client[end - 1].seg.ack - before,
        recover_fs: high - before,
    }
}

/// `prr_cwr` (the `linux` personality; Linux `tcp_cwnd_reduction` in CA_CWR): after an ECN-Echo the
/// sender keeps sending, PRR's share of what the ACKs deliver (ssthresh / RecoverFS of it, CUBIC's 0.7),
/// from the first ECE ACK on (Linux lets one segment go until one has); without it cwnd is ssthresh at
/// once and the first ECE ACK, with the flight above it, lets nothing go.
#[test]
fn test_established_linux_cwr_reduction_is_spread_by_prr() {
    let smss = 1448;
    let Marked { p, .. } = transfer_with_marks("linux", 31, None);
    let c = cwr_episode(&p);
    let ssthresh = p.client.ssthresh();
    let client = p.client.estats();
    assert_eq!((client.CongSignals, client.SegsRetrans), (1, 0));
    assert!(c.first_answer >= smss, "the first ECE ACK lets a segment go: {}", c.first_answer);
    // RFC 6937 §3's proportional part, in whole segments as the byte allowance lets them go.
    let share = (c.delivered as u64 * ssthresh as u64).div_ceil(c.recover_fs as u64) as u32;
    assert!(
        c.sent <= share + smss && c.sent + 2 * smss >= share,
        "sent {} of PRR's {share} (delivered {}, RecoverFS {}, ssthresh {ssthresh})",
        c.sent,
        c.delivered,
        c.recover_fs
    );
    assert!(c.delivered > 4 * smss, "an episode long enough to say something: {}", c.delivered);
    // Spread: while the first quarter of the flight is delivered, PRR's share of it goes.
    let (early_sent, early_delivered) = c.early;
    let early_share = (early_delivered as u64 * ssthresh as u64).div_ceil(c.recover_fs as u64) as u32;
    assert!(early_sent + 2 * smss >= early_share && early_sent > 0, "{early_sent} of {early_share} early");
    assert!(p.client.cwnd() >= ssthresh, "cwnd {} below ssthresh {ssthresh} after the reduction", p.client.cwnd());

    // The same transfer with the reduction made at once: nothing answers the first ECE ACK.
    let mut at_once = with_ecn("linux", EcnMode::On);
    at_once.prr_cwr = false;
    let Marked { p, .. } = transfer_with_marks_from(at_once, with_ecn("linux", EcnMode::Accept), 31, None);
    let c = cwr_episode(&p);
    assert_eq!(c.first_answer, 0);
    // The flight must fall below ssthresh first: a quarter of it delivered sends nothing (about 30 %
    // under CUBIC's β = 0.7).
    assert_eq!(c.early.0, 0, "sent while the first quarter was delivered");
    assert_eq!(p.client.estats().CongSignals, 1);
}

/// The window as the ACK that ends the `linux` CWR reduction leaves it, and ssthresh, with and without
/// `cwnd_growth_at_reduction_end`.
fn at_the_reduction_end(growth_at_end: bool) -> (u32, u32) {
    let mut client = with_ecn("linux", EcnMode::On);
    client.cwnd_growth_at_reduction_end = growth_at_end;
    let mut p = Pair::new(client, with_ecn("linux", EcnMode::Accept), dur_ms(10));
    p.establish();
    p.set_filter(nth_new_data(31, Fate::MarkCe));
    p.to_write[0] = 400 * 1448;
    let in_cwr = |p: &Pair| p.client.tcp_info(tcplab_units::Instant::ZERO).ca_state == 2;
    p.run_while(|p| !in_cwr(p));
    p.run_while(in_cwr);
    (p.client.cwnd(), p.client.ssthresh())
}

/// Linux's `tcp_ack` runs `tcp_fastretrans_alert` before `tcp_cong_control`: the ACK that ends a CWR
/// reduction (`tcp_end_cwnd_reduction`, the state Open again) then grows the window from ssthresh
/// (`cwnd_growth_at_reduction_end`). The harness delivers the ACKs of one instant together, so the ACKs
/// after that one grow the window as well, with or without the knob: the knob's growth is the
/// difference, one whole segment (CUBIC's packet arithmetic, `bictcp`: the ACK's packets fill `cnt`,
/// the credit counted from the reduction's start). (That the ECE ACK which starts the reduction
/// grows nothing is `crates/packetdrill/scripts/ecn-cwr-prr.pkt`'s ssthresh 7, beside the kernel's.)
#[test]
fn test_established_linux_ack_that_ends_the_cwr_reduction_grows_the_window() {
    let (with, ssthresh) = at_the_reduction_end(true);
    let (without, ssthresh_without) = at_the_reduction_end(false);
    assert_eq!(ssthresh, ssthresh_without);
    assert!(without >= ssthresh, "cwnd {without} below ssthresh {ssthresh}");
    assert_eq!(with, without + 1448, "cwnd {with} with the knob, {without} without");
}

/// A transfer whose `mark`-th new data segment is CE-marked and `drop`-th dropped: what the sender counted.
fn mark_then_drop(base: &str, mark: usize, drop: usize) -> (u64, u64, u64) {
    let mut p = Pair::new(with_ecn(base, EcnMode::On), with_ecn(base, EcnMode::On), dur_ms(10));
    p.establish();
    let mut n = 0;
    let mut highest = SeqNumber(0);
    p.set_filter(move |side, seg| {
        if side != Side::Client || !is_new_data(seg, &mut highest) {
            return Fate::Deliver;
        }
        n += 1;
        match n {
            _ if n == mark => Fate::MarkCe,
            _ if n == drop => Fate::Drop,
            _ => Fate::Deliver,
        }
    });
    p.to_write[0] = 400 * 1448;
    p.run_to_idle();
    assert_eq!(p.read[1], 400 * 1448);
    let c = p.client.estats();
    (c.CongSignals, c.FastRetran, c.SegsRetrans)
}

/// RFC 3168 §6.1.2 (ssthresh is not decreased again within a round trip) and Linux (`tcp_enter_recovery`
/// recalculates ssthresh only below CA_CWR): a loss found while the ECN-Echo's reduction is under way is
/// fast-retransmitted without a second reduction; found after the reduction ended, it reduces again.
#[test]
fn test_established_loss_within_the_ecn_reduction_reduces_once() {
    for base in ["rfc", "linux"] {
        let (signals, fast, _) = mark_then_drop(base, 0, 34);
        assert_eq!((signals, fast), (1, 1), "{base}: the loss alone");
        let (signals, fast, retrans) = mark_then_drop(base, 30, 34);
        assert_eq!((signals, fast), (1, 1), "{base}: a loss in the reduced window");
        assert!(retrans >= 1);
        let (signals, fast, _) = mark_then_drop(base, 30, 200);
        assert_eq!((signals, fast), (2, 1), "{base}: a loss windows later");
    }
    // `rfc` retransmits the lost segment once, whatever else happened.
    assert_eq!(mark_then_drop("rfc", 30, 34).2, 1);
}
