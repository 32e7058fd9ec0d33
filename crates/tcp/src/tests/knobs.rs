//! Each knob's documented effect, shown on a small experiment between two connections (no link rate,
//! a fixed one-way latency): the numbers asserted are the textbook ones, worked out in the comments.

use tcplab_units::{ByteSize, Duration, Instant};
use tcplab_wire::TcpSegment;

use super::pair::{Fate, Pair, Side};
use crate::config::{AckPolicy, InitialWindow};
use crate::congestion::Abc;
use crate::TcpConfig;

const MSS: u32 = 1448;

fn bulk_cfg() -> TcpConfig {
    TcpConfig {
        send_buffer: ByteSize::new(64 << 20),
        recv_buffer: ByteSize::new(64 << 20),
        initial_window: InitialWindow::Segments(4),
        ..TcpConfig::default()
    }
}

/// Slow-start growth factor per RTT of a bulk sender: cwnd after the 6th round of ACKs over cwnd after the
/// 5th (RTT 100 ms, no loss, no rate limit; the k-th round of ACKs arrives k·100 ms after data starts).
fn slow_start_factor(sender: TcpConfig, receiver: TcpConfig) -> f64 {
    let mut p = Pair::new(sender, receiver, Duration::from_millis(50));
    p.record = false;
    p.establish();
    p.to_write[0] = 1 << 40;
    let start = p.now;
    p.run_until(start + Duration::from_millis(505));
    let w5 = p.client.cwnd() as f64;
    p.run_until(start + Duration::from_millis(605));
    assert!(p.client.cwnd() < p.client.ssthresh(), "still in slow start");
    p.client.cwnd() as f64 / w5
}

#[test]
fn test_established_abc_l2_restores_slow_start_under_delayed_acks() {
    // ACK every segment, L = 1: each ACK of one segment adds one: cwnd doubles per RTT.
    // Delayed ACK (one ACK per 2 segments), L = 1 (RFC 5681 min(N, SMSS)): half as many ACKs, each adding
    //   one segment: ×1.5 per RTT.
    // Delayed ACK with L = 2 (RFC 3465 §2.2): each ACK of 2 segments adds 2: doubling again (an odd
    //   segment at the end of a round waits for the delayed-ACK timer, so a little under 2).
    let every = slow_start_factor(bulk_cfg(), TcpConfig { ack_policy: AckPolicy::Every, ..bulk_cfg() });
    let l1 = slow_start_factor(bulk_cfg(), bulk_cfg());
    let l2 = slow_start_factor(TcpConfig { abc: Abc::L2, ..bulk_cfg() }, bulk_cfg());
    assert!((every - 2.0).abs() < 0.02, "ACK every segment: ×{every} per RTT");
    assert!((l1 - 1.5).abs() < 0.05, "delayed ACK, L = 1: ×{l1} per RTT");
    assert!((l2 - 2.0).abs() < 0.02, "delayed ACK, L = 2: ×{l2} per RTT");
    // Classic packet counting (+1 segment per ACK, ABC off) behaves as L = 1 here: every ACK covers 2.
    let off = slow_start_factor(TcpConfig { abc: Abc::Off, ..bulk_cfg() }, bulk_cfg());
    assert!((off - 1.5).abs() < 0.05, "packet counting: ×{off} per RTT");
}

/// Transactions per second of a write-write-read client: each request is written in two 100-byte pieces,
/// the server answers 100 bytes once it has both.
fn write_write_read_rate(client: TcpConfig, server: TcpConfig, rtt: Duration, n: u64) -> f64 {
    let mut p = Pair::new(client, server, Duration::from_nanos(rtt.as_nanos() / 2));
    p.record = false;
    p.establish();
    let start = p.now;
    for i in 1..=n {
        p.to_write[0] += 100;
        p.run_until(p.now);
        p.to_write[0] += 100;
        p.run_while(|p| p.read[1] < 200 * i);
        p.to_write[1] += 100;
        p.run_while(|p| p.read[0] < 100 * i);
    }
    n as f64 / p.now.saturating_since(start).as_secs_f64()
}

#[test]
fn test_established_nagle_and_delayed_ack_stall_write_write_read() {
    // RTT 10 ms, delayed ACK 200 ms. With Nagle the second piece waits for the ACK of the first; the server,
    // holding one short segment and no reply yet, delays that ACK: the ACK leaves 200 ms after the first
    // piece arrived, the second piece follows it, and the reply comes back: T = 2·RTT + 200 ms = 220 ms
    // (the reference's "RTT + t_da", with the extra round trip of the held piece).
    // With TCP_NODELAY both pieces go at once and the reply rides the ACK: T = RTT.
    let rtt = Duration::from_millis(10);
    let nagle = write_write_read_rate(TcpConfig::default(), TcpConfig::default(), rtt, 20);
    assert!((nagle - 1.0 / 0.220).abs() < 0.02 / 0.220, "Nagle: {nagle} transactions/s, expected {}", 1.0 / 0.220);
    let nodelay =
        write_write_read_rate(TcpConfig { nodelay: true, ..TcpConfig::default() }, TcpConfig::default(), rtt, 200);
    assert!((nodelay - 100.0).abs() < 1.0, "TCP_NODELAY: {nodelay} transactions/s, expected 1/RTT = 100");
    // Minshall's variant does not help here: the held piece follows a short one.
    let minshall =
        write_write_read_rate(TcpConfig { minshall: true, ..TcpConfig::default() }, TcpConfig::default(), rtt, 20);
    assert!((minshall - nagle).abs() / nagle < 0.02, "Minshall {minshall} vs Nagle {nagle}");
}

/// Time from the first transmission of the first dropped segment until SND.UNA passes the last
/// dropped one, with three segments of one window lost.
fn recovery_time(sack: bool) -> (Duration, u64, u64) {
    let cfg = TcpConfig { sack, initial_window: InitialWindow::Segments(40), ..bulk_cfg() };
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(50));
    p.record = false;
    p.establish();
    let first = p.client.snd_nxt();
    let lost = [first + 10 * MSS, first + 20 * MSS, first + 30 * MSS];
    let mut dropped = [false; 3];
    p.set_filter(move |side, seg: &TcpSegment| {
        if side == Side::Client {
            for (i, l) in lost.iter().enumerate() {
                if seg.seq == *l && seg.payload_len > 0 && !dropped[i] {
                    dropped[i] = true;
                    return Fate::Drop;
                }
            }
        }
        Fate::Deliver
    });
    p.to_write[0] = 40 * MSS as u64;
    let start = p.now;
    let done = lost[2] + MSS;
    p.run_while(|p| p.client.snd_una() < done);
    let e = p.client.estats();
    (p.now.saturating_since(start), e.FastRetran, e.Timeouts)
}

#[test]
fn test_established_sack_repairs_several_holes_in_one_rtt_newreno_one_per_rtt() {
    // 40 segments in one window, segments 10, 20 and 30 lost, RTT 100 ms. Both detect the first loss
    // one RTT after the window left. SACK (RFC 6675) knows all three holes from the scoreboard and
    // retransmits them together: one more RTT. NewReno learns of each next hole from a partial ACK:
    // one RTT per hole, three in all.
    let rtt = 0.100;
    let (sack, sack_fr, sack_to) = recovery_time(true);
    let (newreno, nr_fr, nr_to) = recovery_time(false);
    assert_eq!((sack_fr, sack_to, nr_fr, nr_to), (1, 0, 1, 0), "one fast retransmit each, no timeout");
    assert!((sack.as_secs_f64() - 2.0 * rtt).abs() < 0.01, "SACK: {sack:?}, expected 2 RTT");
    assert!((newreno.as_secs_f64() - 4.0 * rtt).abs() < 0.01, "NewReno: {newreno:?}, expected 4 RTT");
}

#[test]
fn test_established_probabilistic_immediate_ack_rate() {
    // ack_every = 4 and p = 0.5: the expected number of segments per ACK is (1 − (1−p)^k)/p = 1.875
    // (reference §3.2). The draw comes from the connection's own stream: same seed, same ACKs.
    let recv = |seed: u64| {
        let cfg = TcpConfig { ack_every: 4, ack_immediate_p: 0.5, ..bulk_cfg() };
        let mut p = Pair::new(bulk_cfg(), cfg, Duration::from_millis(50));
        p.server.set_random_seed(seed);
        p.record = true;
        p.establish();
        p.to_write[0] = 2000 * MSS as u64;
        p.run_while(|p| p.read[1] < 2000 * MSS as u64);
        let data = p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0).count() as f64;
        let acks = p.sent_by(Side::Server).filter(|s| s.seg.payload_len == 0 && s.at > Instant::ZERO).count() as f64;
        data / acks
    };
    let a = recv(1);
    assert!((a - 1.875).abs() < 0.15, "segments per ACK {a}, expected 1.875");
    assert_eq!(a, recv(1));
}

/// Every cwnd reduction is counted in CongSignals or OtherReductions (RFC 4898; web100's invariant): over
/// a lossy bulk transfer, each event that lowers cwnd also raises one of the two counters.
fn reductions_are_counted(cfg: TcpConfig, loss_every: u64) {
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(20));
    p.record = false;
    p.establish();
    let mut n = 0u64;
    p.set_filter(move |side, seg: &TcpSegment| {
        n += 1;
        // A deterministic, irregular loss pattern on data: drop when a cheap hash of the count hits.
        if side == Side::Client
            && seg.payload_len > 0
            && (n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40).is_multiple_of(loss_every)
        {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = 20_000 * MSS as u64;
    p.run_until(p.now);
    let (mut reductions, mut steps) = (0, 0);
    loop {
        let before = (p.client.cwnd(), p.client.estats());
        if !p.step() || p.read[1] >= 20_000 * MSS as u64 {
            break;
        }
        steps += 1;
        let after = p.client.estats();
        if p.client.cwnd() < before.0 {
            reductions += 1;
            let counted =
                (after.CongSignals + after.OtherReductions) - (before.1.CongSignals + before.1.OtherReductions);
            assert!(
                counted >= 1,
                "step {steps}: cwnd {} -> {} uncounted: {:?}\n{:?}",
                before.0,
                p.client.cwnd(),
                before.1,
                after
            );
        }
    }
    assert!(reductions > 10, "the experiment must reduce cwnd often: {reductions}");
}

#[test]
fn test_established_every_cwnd_reduction_is_counted() {
    reductions_are_counted(bulk_cfg(), 150);
    reductions_are_counted(TcpConfig { max_burst: 3, cwv: crate::config::Cwv::Rfc2861, ..bulk_cfg() }, 150);
    reductions_are_counted(TcpConfig { sack: false, ..bulk_cfg() }, 400);
    let linux24 = TcpConfig::personality("linux-2.4").unwrap();
    reductions_are_counted(
        TcpConfig { send_buffer: ByteSize::new(64 << 20), recv_buffer: ByteSize::new(64 << 20), ..linux24 },
        150,
    );
}

/// Segments sent in response to each duplicate ACK of a recovery from one loss in a 100-segment window
/// (cwnd-limited, RTT 100 ms), the fast retransmit excluded.
fn sends_per_dup_ack(prr: bool) -> Vec<usize> {
    let cfg = TcpConfig { prr, initial_window: InitialWindow::Segments(100), ..bulk_cfg() };
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(50));
    // Open the receive window first: one short exchange, so that the 100-segment window is cwnd's alone.
    p.establish();
    p.to_write[0] = MSS as u64;
    p.run_while(|p| p.read[1] < MSS as u64);
    let lost = p.client.snd_nxt() + 10 * MSS;
    let mut dropped = false;
    p.set_filter(move |side, seg: &TcpSegment| {
        if side == Side::Client && seg.seq == lost && !dropped {
            dropped = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.to_write[0] = 1000 * MSS as u64;
    p.run_while(|p| p.client.snd_una() <= lost);
    let marks: Vec<usize> =
        p.arrivals.iter().filter(|a| a.to == Side::Client && a.seg.ack == lost).map(|a| a.trace_len).collect();
    marks
        .windows(2)
        .map(|w| {
            let sent = &p.trace[w[0]..w[1]];
            sent.iter().filter(|s| s.from == Side::Client && s.seg.payload_len > 0 && s.seg.seq != lost).count()
        })
        .collect()
}

#[test]
fn test_established_prr_spreads_the_reduction_over_the_recovery() {
    // RFC 6937 §1: with one loss in a window of W segments, RFC 6675 sets cwnd = W/2 and sends nothing until
    // half the window's duplicate ACKs have drained pipe below it, then one segment per ACK. PRR sends
    // about one segment per two ACKs from the start (ssthresh/RecoverFS = 1/2).
    let rfc6675 = sends_per_dup_ack(false);
    let prr = sends_per_dup_ack(true);
    // The first three entries answer the ACK before the loss and the two limited-transmit dupACKs.
    let first_half = |v: &[usize]| v.iter().skip(3).take(40).sum::<usize>();
    assert_eq!(first_half(&rfc6675), 0, "RFC 6675 waits: {rfc6675:?}");
    let p = first_half(&prr);
    assert!((18..=22).contains(&p), "PRR sends one per two ACKs: {p} over 40 ACKs: {prr:?}");
    assert!(prr.iter().skip(3).all(|&n| n <= 1), "no bursts under PRR: {prr:?}");
}

/// The largest RTT sample (ms) after the last segment of a 10-segment transfer is lost once and repaired
/// by the RTO (RTT 100 ms, RTO 1 s).
fn max_rtt_after_tail_loss(sampling: crate::config::RttSampling) -> f64 {
    let cfg = TcpConfig { rtt_sampling: sampling, ..bulk_cfg() };
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(50));
    p.establish();
    let last = p.client.snd_nxt() + 9 * MSS;
    let mut dropped = false;
    p.set_filter(move |side, seg: &TcpSegment| {
        if side == Side::Client && seg.seq == last && !dropped {
            dropped = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.to_write[0] = 10 * MSS as u64;
    p.run_while(|p| p.client.snd_una() < last + MSS);
    assert_eq!(p.client.estats().Timeouts, 1);
    p.client.estats().MaxRTT
}

#[test]
fn test_established_rtt_sampling_policies_and_karns_ambiguity() {
    use crate::config::RttSampling;
    // Karn: the retransmitted segment gives no sample; the largest is the path's 100 ms (plus the
    // delayed-ACK wait for an odd segment, up to 200 ms).
    let karn = max_rtt_after_tail_loss(RttSampling::Karn);
    assert!(karn <= 300.0, "Karn: {karn} ms");
    // Timestamps: the echo belongs to the retransmission, so its sample is right too.
    let ts = max_rtt_after_tail_loss(RttSampling::Auto);
    assert!(ts <= 300.0, "timestamps: {ts} ms");
    // Every ACK, timed from the first transmission: the ACK of the retransmission is charged the RTO,
    // about 1 s + 100 ms — the feedback Karn's rule exists to avoid.
    let every = max_rtt_after_tail_loss(RttSampling::EveryAck);
    assert!((1_050.0..=1_400.0).contains(&every), "every ACK: {every} ms");
}

#[test]
fn a_connection_stays_small() {
    // docs/benchmarks.md: per-connection memory. The RFC 4898 counters are about half of it.
    let conn = std::mem::size_of::<crate::Connection>();
    let estats = std::mem::size_of::<crate::Estats>();
    eprintln!("Connection {conn} bytes, of which Estats {estats}");
    // 1,524 bytes before ECN, which added 36 (its state, and three RFC 4898 counters); pacing/TSQ, the
    // delivery-rate sampler and their statistics cost a pointer each, the pacing timer a slot (issue 27);
    // `tcpi_last_data_recv`'s time, 32-bit milliseconds, 8 with alignment (issue 23); the receive memory
    // by truesize a pointer; the receive buffer's window limit, kept for every segment to read (issue 25), 8;
    // the pending reset boxed (a segment inline was 72 bytes of every connection), -64; the RTO the RFC 4898
    // MinRTO/MaxRTO gauges last counted, so that an RTO restart with the same RTO skips them (issue 25), 8;
    // the timestamp clock's tick last found, its start, length and TSval (issue 25), 16.
    assert!(conn <= 1584, "Connection grew to {conn} bytes");
}

/// cwnd before the episode, after it, and the counters, when segment 10 of a 40-segment window is
/// delayed by 30 ms (reordered, not lost): three duplicate ACKs trigger a spurious fast retransmit.
fn spurious_fast_retransmit(undo: bool) -> (u32, u32, crate::Estats) {
    let cfg = TcpConfig { undo, initial_window: InitialWindow::Segments(40), ..bulk_cfg() };
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(50));
    p.establish();
    let late = p.client.snd_nxt() + 10 * MSS;
    let mut delayed = false;
    p.set_filter(move |side, seg: &TcpSegment| {
        if side == Side::Client && seg.seq == late && !delayed {
            delayed = true;
            return Fate::Delay(Duration::from_millis(30));
        }
        Fate::Deliver
    });
    p.to_write[0] = 40 * MSS as u64;
    let before = p.client.cwnd();
    // Until the D-SACK for the needless retransmission is back (two RTTs after the window left).
    p.run_until(p.now + Duration::from_millis(210));
    (before, p.client.cwnd(), p.client.estats())
}

#[test]
fn test_established_dsack_undoes_a_spurious_fast_retransmit() {
    // RFC 3708: the late original fills the hole, the retransmission arrives as a duplicate, the receiver
    // reports it with D-SACK (RFC 2883), and the sender restores cwnd and ssthresh (RFC 4015).
    let (before, after, e) = spurious_fast_retransmit(true);
    assert_eq!((e.FastRetran, e.SegsRetrans, e.DSACKDups, e.CongOverCount), (1, 1, 1, 1));
    assert!(after >= before, "cwnd restored: {before} -> {after}");
    // Without undo the halving stays.
    let (before, after, e) = spurious_fast_retransmit(false);
    assert_eq!((e.FastRetran, e.DSACKDups, e.CongOverCount), (1, 1, 0));
    assert!(after < before, "cwnd stays reduced: {before} -> {after}");
}

#[test]
fn test_established_out_of_order_acks_give_no_rtt_sample() {
    // The server's ACKs for the first window: one is held back 60 ms, so it arrives after later ones.
    // It acknowledges nothing new by then, so it yields no sample and the smoothed RTT stays at the path's.
    let cfg = TcpConfig { initial_window: InitialWindow::Segments(20), ..bulk_cfg() };
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_millis(50));
    p.establish();
    let mut n = 0;
    p.set_filter(move |side, seg: &TcpSegment| {
        if side == Side::Server && seg.payload_len == 0 {
            n += 1;
            if n == 3 {
                return Fate::Delay(Duration::from_millis(60));
            }
        }
        Fate::Deliver
    });
    p.to_write[0] = 20 * MSS as u64;
    p.run_while(|p| p.read[1] < 20 * MSS as u64);
    p.run_until(p.now + Duration::from_millis(300));
    // Samples come from the ACKs that advanced SND.UNA when they arrived, plus the handshake's.
    let mut highest = None;
    let mut advancing = 0;
    let mut late_acks = 0;
    for a in p.arrivals.iter().filter(|a| a.to == Side::Client && a.seg.payload_len == 0 && !a.seg.flags.syn()) {
        match highest {
            Some(h) if a.seg.ack <= h => late_acks += 1,
            _ => {
                advancing += 1;
                highest = Some(a.seg.ack);
            }
        }
    }
    let e = p.client.estats();
    assert!(late_acks >= 1, "the held-back ACK arrived behind a later one");
    assert_eq!(e.CountRTT, advancing + 1, "one sample per advancing ACK and the handshake, none from late ones");
    assert_eq!(e.SegsRetrans, 0);
}
