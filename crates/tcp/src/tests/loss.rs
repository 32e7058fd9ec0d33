//! Loss recovery: fast retransmit after DupThresh duplicate ACKs (RFC 5681 §3.2), NewReno (RFC 6582),
//! SACK-based recovery (RFC 6675), limited transmit (RFC 3042), and the retransmission timeout when no
//! duplicate ACKs can come (RFC 6298 §5).

use super::pair::{Arrival, Fate, Pair, Sent, Side};
use super::*;
use crate::InitialWindow;

fn cfg_newreno() -> TcpConfig {
    TcpConfig { sack: false, ..cfg() }
}

/// NewReno, scripted. Ten segments queued at t=20; cwnd 4380 lets three go (10001, 11449, 12897).
/// The first is lost; the peer's ACKs repeat ack 10001 with the same window (65532 bytes, as in the
/// SYN-ACK) — RFC 5681 §2 duplicate ACKs.
///
/// * dup ACK 1 (t=30), 2 (t=31): limited transmit (RFC 3042; RFC 5681 §3.2 step 1), one new segment
///   each: FlightSize 4344 → 5792 → 7240 ≤ cwnd + 2·SMSS = 7276. The 36 bytes left over are not sent
///   (sender SWS avoidance).
/// * dup ACK 3 (t=32): fast retransmit of 10001 (RFC 5681 §3.2 step 3). ssthresh = max(FlightSize / 2,
///   2·SMSS), where FlightSize leaves out the two limited-transmit segments (RFC 5681 §3.2 step 2,
///   RFC 3042 §2: they MUST NOT count): max(4344 / 2, 2896) = 2896; cwnd = ssthresh + 3·SMSS = 7240
///   (RFC 6582 §3.2 step 2-3); FlightSize 7240 leaves no room: nothing new.
/// * dup ACK 4 (t=33): cwnd inflates to 8688 (step 4): one new segment, 17241.
/// * t=40: the full ACK 17241 (> recover = 17240): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)
///   = min(2896, 1448 + 1448) = 2896 (RFC 6582 §3.2 step 3 option 1); FlightSize 1448 → one new segment.
#[test]
fn test_established_fast_retransmit_newreno() {
    let mut c = client_established(cfg_newreno());
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    let data = |seq: u32, now: u64, echo: u64| out(seq, 50_001, ACK, 32_768, 1448).ts(ts(now), pts(echo));
    recv!(c, time 20, [data(10_001, 20, 10), data(11_449, 20, 10), data(12_897, 20, 10)]);
    let dup = |t: u64| peer(50_001, 10_001, ACK, 0, t, 21);

    send!(c, time 30, dup(30));
    recv!(c, time 30, [data(14_345, 30, 30)]);
    send!(c, time 31, dup(31));
    recv!(c, time 31, [data(15_793, 31, 31)]);
    assert_eq!(c.estats().FastRetran, 0);
    send!(c, time 32, dup(32));
    recv!(c, time 32, [data(10_001, 32, 32)]);
    assert_eq!((c.ssthresh(), c.cwnd()), (2896, 2896));
    assert_eq!(c.estats().FastRetran, 1);
    send!(c, time 33, dup(33));
    recv!(c, time 33, [data(17_241, 33, 33)]);

    send!(c, time 40, peer(50_001, 17_241, ACK, 0, 40, 33));
    assert_eq!(c.cwnd(), 2896);
    recv!(c, time 40, [data(18_689, 40, 40)]);
    let e = c.estats();
    assert_eq!((e.FastRetran, e.SegsRetrans, e.DupAcksIn, e.CongSignals, e.Timeouts), (1, 1, 4, 1, 0));
}

/// The same with SACK. RFC 5681 §3.2 step 1 / RFC 3042 §2: on each of the first two duplicate ACKs
/// "a segment of previously unsent data ... provided that ... the total FlightSize would remain less
/// than or equal to cwnd plus 2*SMSS". RFC 6675 §5 (B)(3) says the same in SACK terms: send while
/// cwnd − pipe >= 1 SMSS, pipe (SetPipe) leaving out SACKed bytes — cwnd itself is not raised. Each dup
/// ACK SACKs one more segment, so one new segment per dup ACK either way:
/// dup ACK 1: pipe 4344 − 1448 = 2896, cwnd − pipe = 1484 → one segment (14345); FlightSize 5792.
/// dup ACK 2: pipe 5792 − 2896 = 2896 → one segment (15793); FlightSize 7240 <= 4380 + 2896.
/// dup ACK 3: recovery (RFC 6675 §5 step 4): ssthresh = cwnd = FlightSize / 2, the FlightSize without
/// the two limited-transmit segments (RFC 6675 §5 step 4.2 note, RFC 5681 §3.2 step 2): max(4344 / 2,
/// 2·SMSS) = 2896; retransmit 10001; pipe = 1448 (15793, neither SACKed nor lost) + 1448
/// (retransmitted) = 2896 = cwnd: no more.
#[test]
fn test_established_limited_transmit_sack() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    let data = |seq: u32, now: u64, echo: u64| out(seq, 50_001, ACK, 32_768, 1448).ts(ts(now), pts(echo));
    recv!(c, time 20, [data(10_001, 20, 10), data(11_449, 20, 10), data(12_897, 20, 10)]);

    send!(c, time 30, peer(50_001, 10_001, ACK, 0, 30, 21).sack(&[(11_449, 12_897)]));
    recv!(c, time 30, [data(14_345, 30, 30)]);
    send!(c, time 31, peer(50_001, 10_001, ACK, 0, 31, 21).sack(&[(11_449, 14_345)]));
    recv!(c, time 31, [data(15_793, 31, 31)]);
    send!(c, time 32, peer(50_001, 10_001, ACK, 0, 32, 21).sack(&[(11_449, 15_793)]));
    recv!(c, time 32, [data(10_001, 32, 32)]);
    assert_eq!((c.ssthresh(), c.cwnd()), (2896, 2896));
    assert_eq!(c.estats().FastRetran, 1);
}

/// Same defect without limited transmit: with `limited_transmit = false` nothing may go beyond cwnd
/// before recovery (RFC 5681 §2: no sequence number above SND.UNA + min(cwnd, rwnd)). IW 4 segments
/// (5792 bytes) all outstanding: the first two SACKing dup ACKs must release nothing. The third starts
/// recovery: ssthresh = cwnd = 5792 / 2 = 2896, retransmit 10001; pipe = 1448 (the retransmission; the
/// rest is SACKed) → one new segment, 15793 (RFC 6675 §5 (C), NextSeg rule 2).
#[test]
fn test_established_sack_dup_acks_respect_cwnd() {
    let mut c =
        client_established(TcpConfig { limited_transmit: false, initial_window: InitialWindow::Segments(4), ..cfg() });
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    let data = |seq: u32, now: u64, echo: u64| out(seq, 50_001, ACK, 32_768, 1448).ts(ts(now), pts(echo));
    recv!(c, time 20, [data(10_001, 20, 10), data(11_449, 20, 10), data(12_897, 20, 10), data(14_345, 20, 10)]);
    send!(c, time 30, peer(50_001, 10_001, ACK, 0, 30, 21).sack(&[(11_449, 12_897)]));
    recv_nothing!(c, time 30);
    send!(c, time 31, peer(50_001, 10_001, ACK, 0, 31, 21).sack(&[(11_449, 14_345)]));
    recv_nothing!(c, time 31);
    send!(c, time 32, peer(50_001, 10_001, ACK, 0, 32, 21).sack(&[(11_449, 15_793)]));
    recv!(c, time 32, [data(10_001, 32, 32), data(15_793, 32, 32)]);
}

/// SACK recovery, scripted, in a case the defect above cannot touch: IW 4 segments, and the peer's dup
/// ACKs shrink its window to exactly those 4 segments (field 1448 << 2 = 5792), so no new data may go.
/// * dup ACKs 1, 2 (t=30, 31), each SACKing one more segment: nothing to send (window full).
/// * dup ACK 3 (t=32): DupThresh, and 4344 SACKed bytes > (DupThresh − 1)·SMSS above 10001 (IsLost,
///   RFC 6675 §4): retransmit 10001 (RFC 6675 §5 step 4.3); ssthresh = cwnd = max(5792 / 2, 2·SMSS) =
///   2896. Nothing else: NextSeg finds no other lost segment and the window is full.
/// * t=40: cumulative ACK 15793 = RecoveryPoint, window 65532 again: recovery over, cwnd 2896, nothing
///   outstanding → two new segments.
#[test]
fn test_established_fast_retransmit_sack() {
    let mut c = client_established(TcpConfig { initial_window: InitialWindow::Segments(4), ..cfg() });
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    let data = |seq: u32, now: u64, echo: u64| out(seq, 50_001, ACK, 32_768, 1448).ts(ts(now), pts(echo));
    recv!(c, time 20, [data(10_001, 20, 10), data(11_449, 20, 10), data(12_897, 20, 10), data(14_345, 20, 10)]);
    let dup = |t: u64, right: u32| inp(50_001, 10_001, ACK, 1448, 0).ts(pts(t), 21).sack(&[(11_449, right)]);
    send!(c, time 30, dup(30, 12_897));
    recv_nothing!(c, time 30);
    send!(c, time 31, dup(31, 14_345));
    recv_nothing!(c, time 31);
    assert_eq!(c.estats().FastRetran, 0);
    send!(c, time 32, dup(32, 15_793));
    recv!(c, time 32, [data(10_001, 32, 32)]);
    assert_eq!((c.ssthresh(), c.cwnd()), (2896, 2896));
    send!(c, time 40, peer(50_001, 15_793, ACK, 0, 40, 33));
    recv!(c, time 40, [data(15_793, 40, 40), data(17_241, 40, 40)]);
    let e = c.estats();
    assert_eq!((e.FastRetran, e.SegsRetrans, e.DupAcksIn, e.Timeouts, e.SACKsRcvd), (1, 1, 3, 0, 3));
}

/// What happened in a pair run with one dropped data segment.
struct DropRun {
    p: Pair,
    dropped: SeqNumber,
    /// The client's retransmissions (data segments starting below the highest sequence sent before),
    /// with their index in the trace.
    rtx: Vec<(usize, Sent)>,
    /// Highest sequence number sent (SND.NXT) just before the first retransmission.
    snd_nxt_at_rtx: SeqNumber,
}

/// Client writes `nseg` full segments at t=100 to a default server, one-way delay 10 ms; the first
/// transmission of segment number `drop` (0-based) is dropped. Runs until nothing is pending.
fn run_with_drop(client_cfg: TcpConfig, nseg: u32, drop: u32) -> DropRun {
    let smss = if client_cfg.timestamps { 1448 } else { 1460 };
    let server_cfg = TcpConfig { sack: client_cfg.sack, timestamps: client_cfg.timestamps, ..cfg() };
    let mut p = Pair::new(client_cfg, server_cfg, dur_ms(10));
    p.establish();
    p.run_until(at(100));
    let dropped = SeqNumber(LOCAL_ISS + 1 + drop * smss);
    let mut done = false;
    p.set_filter(move |side, seg| {
        if side == Side::Client && seg.seq == dropped && seg.payload_len > 0 && !done {
            done = true;
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = (nseg * smss) as u64;
    p.run_to_idle();
    assert_eq!(p.client.smss(), smss);

    let mut high = SeqNumber(LOCAL_ISS + 1);
    let mut rtx = Vec::new();
    let mut snd_nxt_at_rtx = None;
    for (i, s) in p.trace.iter().enumerate() {
        if s.from != Side::Client || s.seg.payload_len == 0 {
            continue;
        }
        if s.seg.seq < high {
            rtx.push((i, *s));
            snd_nxt_at_rtx.get_or_insert(high);
        }
        high = high.max(s.seg.seq + s.seg.payload_len);
    }
    let drops: Vec<_> = p.trace.iter().filter(|s| s.fate == Fate::Drop).map(|s| s.seg.seq).collect();
    assert_eq!(drops, vec![dropped], "exactly one segment dropped");
    // Everything arrived, once, and was acknowledged.
    let total = (nseg * smss) as u64;
    assert_eq!(p.read[1], total);
    assert_eq!(p.server.estats().ThruOctetsReceived, total);
    assert_eq!(p.client.estats().ThruOctetsAcked, total);
    assert_eq!(p.client.snd_una(), SeqNumber(LOCAL_ISS + 1) + total as u32);
    DropRun { p, dropped, rtx, snd_nxt_at_rtx: snd_nxt_at_rtx.expect("no retransmission") }
}

/// The duplicate ACKs the client received, in delivery order: pure ACKs with ack = the dropped sequence
/// number, except the first such ACK, which is the one that advanced SND.UNA to it.
fn dup_acks(r: &DropRun) -> Vec<Arrival> {
    r.p.arrivals
        .iter()
        .filter(|a| a.to == Side::Client && a.seg.ack == r.dropped && a.seg.payload_len == 0)
        .skip(1)
        .copied()
        .collect()
}

/// Common checks for a fast retransmit: exactly one retransmission, of exactly the dropped segment,
/// and it is the very first segment the client sent after processing the third duplicate ACK
/// (RFC 5681 §3.2 steps 2-3); ssthresh from the FlightSize at that moment, less the two segments limited
/// transmit sent on the first two duplicate ACKs (RFC 5681 (4), §3.2 step 2); no timeout.
fn check_fast_retransmit(r: &DropRun, smss: u32) -> Vec<Arrival> {
    assert_eq!(r.rtx.len(), 1, "one retransmission: {:?}", r.rtx);
    let (idx, rtx) = r.rtx[0];
    assert_eq!((rtx.seg.seq, rtx.seg.payload_len), (r.dropped, smss));
    let dups = dup_acks(r);
    let before: Vec<_> = dups.iter().filter(|a| a.trace_len <= idx).collect();
    assert_eq!(before.len(), 3, "the retransmission follows exactly DupThresh = 3 dup ACKs: {dups:?}");
    assert_eq!(before[2].trace_len, idx, "sent in response to the third dup ACK");
    assert_eq!(before[2].at, rtx.at);
    let e = r.p.client.estats();
    assert_eq!((e.FastRetran, e.Timeouts, e.SegsRetrans, e.CongSignals), (1, 0, 1, 1));
    // FlightSize without the two limited-transmit segments (RFC 5681 §3.2 step 2).
    let flight = r.snd_nxt_at_rtx - r.dropped - 2 * smss;
    assert_eq!(r.p.client.ssthresh(), (flight / 2).max(2 * smss), "FlightSize {flight}");
    dups
}

/// Pair, SACK on: 20 segments, the fifth (seq 10001 + 4·1448 = 15793) dropped. Every duplicate ACK
/// carries SACK blocks, the first starting right after the hole (15793 + 1448 = 17241).
#[test]
fn test_established_pair_fast_retransmit_sack() {
    let r = run_with_drop(cfg(), 20, 4);
    assert_eq!(r.dropped, SeqNumber(15_793));
    let dups = check_fast_retransmit(&r, 1448);
    for d in &dups {
        let first = d.seg.options.sack.as_slice().first().copied().expect("SACK block in every dup ACK");
        assert_eq!(first.left, SeqNumber(17_241));
    }
}

/// Pair, SACK off (NewReno): the same drop; dup ACKs carry no SACK option; after the full ACK, cwnd
/// restarts from ssthresh (no more congestion events).
#[test]
fn test_established_pair_fast_retransmit_newreno() {
    let r = run_with_drop(cfg_newreno(), 20, 4);
    let dups = check_fast_retransmit(&r, 1448);
    assert!(dups.iter().all(|d| d.seg.options.sack.is_empty()));
    assert_eq!(r.p.client.estats().SACKsRcvd, 0);
}

/// Pair, the last of five segments dropped: nothing follows it, so no duplicate ACK can come; the
/// retransmission timer expires RTO = 1 s (RFC 6298 (2.4) floor; the samples are ~20 ms) after it was
/// last restarted by the last ACK of new data (RFC 6298 (5.3)), and the segment is sent again.
#[test]
fn test_established_pair_rto_last_segment() {
    let r = run_with_drop(cfg(), 5, 4);
    assert_eq!(r.rtx.len(), 1);
    let (idx, rtx) = r.rtx[0];
    assert_eq!((rtx.seg.seq, rtx.seg.payload_len), (r.dropped, 1448));
    assert!(dup_acks(&r).is_empty(), "no dup ACKs");
    // The last ACK reaching the client before the retransmission (an ACK of new data: no dup ACKs).
    let last_ack = r.p.arrivals.iter().rev().find(|a| a.to == Side::Client && a.trace_len <= idx).unwrap();
    assert_eq!(last_ack.seg.ack, r.dropped);
    let last_ack = last_ack.at;
    assert_eq!(rtx.at, last_ack + Duration::from_secs(1), "RTO 1 s after the timer restart");
    let e = r.p.client.estats();
    assert_eq!((e.Timeouts, e.AbruptTimeouts, e.SubsequentTimeouts, e.FastRetran, e.SegsRetrans), (1, 1, 0, 0, 1));
    // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2·SMSS) = max(1448 / 2, 2896); cwnd = 1 SMSS, then
    // one ACK in slow start.
    assert_eq!(r.p.client.ssthresh(), 2896);
}
