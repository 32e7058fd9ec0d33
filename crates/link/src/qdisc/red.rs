//! RED, Random Early Detection (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993), with the "gentle" variant (Floyd, "Recommendation on using the
//! gentle_ variant of RED", 2000). On each arrival RED updates an exponentially weighted average of the
//! queue in bytes; below `min` it accepts, between `min` and `max` it drops (or CE-marks) with a
//! probability rising linearly from 0 to `probability`, and above `max` it drops everything, or with
//! `gentle` rises linearly from `probability` to 1 between `max` and 2·`max` first.
//!
//! Reading: Floyd & Jacobson §4 and §7 (the average, the count-based spacing of drops, the idle-time
//! decay); Linux `include/net/red.h` and `net/sched/sch_red.c`, iproute2 `tc/q_red.c` and `tc/tc_red.c`
//! (the defaults, `burst` → W_q, the idle damping; read, not copied).
//!
//! Choices: the average and the probabilities are `f64` (Linux: fixed point with W_q = 2^-Wlog, the same
//! W_q as here). Drops are spaced as Linux spaces them, which is the paper's "uniform" method: after a
//! drop (or on entering the region) a uniform R in [0, 1) is drawn, and the n-th arrival after it is dropped
//! once n·p_b ≥ R, so the gap between drops is uniform on 1…⌈1/p_b⌉ arrivals rather than geometric
//! (Floyd & Jacobson §7: pa = pb / (1 − count·pb)). The idle period starts when a dequeue leaves the queue
//! empty (the paper's "queue is empty"; Linux starts it when a dequeue finds the queue empty, one packet
//! time later), and an arrival after it decays the average by (1 − W_q)^m, m = idle / (avpkt·8 /
//! bandwidth), computed exactly (Linux: a table of shifts). Linux has no gentle mode; `gentle = false` is
//! Linux's behaviour. Adaptive RED (tc-red `adaptive`) is not implemented.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use tcplab_units::{ByteSize, Instant, Rate};

use super::codel::FifoQueue;
use super::{mark_ce, note_arrival, note_departure, over_limit, PacketMeta, Qdisc, QdiscStats};
use crate::config::QueueLimit;
use crate::queue::DropReason;

/// RED's parameters, as tc-red(8) takes them (Linux sch_red). The hard limit (tc-red's `limit`, bytes) is
/// the link direction's `queue`; a limit in packets counts as packets × `avpkt` bytes where a default
/// below needs bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedConfig {
    /// Average queue below which nothing is dropped (min_th). Default: `max` / 3 (tc-red, after Floyd's
    /// REDparameters.txt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<ByteSize>,
    /// Average queue at which the drop probability reaches `probability` (max_th). Default: `min` × 3 if
    /// `min` is given, else the limit / 4 (tc-red).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<ByteSize>,
    /// The drop probability at `max` (max_p), 0 < p ≤ 1. Default 0.02 (tc-red; Floyd & Jacobson use 0.02
    /// in their simulations).
    pub probability: f64,
    /// The typical packet size, bytes: with `burst` it sets the averaging weight, and with `bandwidth` the
    /// idle-time decay. tc-red requires it; default 1000B (tc-red(8)'s example).
    pub avpkt: ByteSize,
    /// Packets of a burst into an empty queue the average should let through: the weight W_q = 2^-n is
    /// the largest for which `burst + 1 − min/avpkt ≤ (1 − (1 − W_q)^burst) / W_q` (Floyd & Jacobson §4
    /// and §10; iproute2 `tc_red_eval_ewma`). Default (2·`min` + `max`) / (3·`avpkt`) (tc-red).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// The rate the idle-time decay assumes: an idle period counts as the packets of `avpkt` bytes this
    /// rate could have sent meanwhile (Floyd & Jacobson §4's m). Set it to the link's rate. Default 10mbit
    /// (tc-red).
    pub bandwidth: Rate,
    /// CE-mark ECN-capable packets instead of dropping them (tc-red `ecn`; RFC 3168 §7). Default false.
    pub ecn: bool,
    /// With `ecn`: drop, not mark, once the average is in the hard-drop region (tc-red `harddrop`).
    /// Default false.
    pub harddrop: bool,
    /// Between `max` and 2·`max` raise the probability linearly from `probability` to 1 instead of dropping
    /// everything above `max` (Floyd 2000, the gentle_ variant; ns-2's default). Default true. Linux has no
    /// gentle mode: false is Linux.
    pub gentle: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min: None,
            max: None,
            probability: 0.02,
            avpkt: ByteSize::new(1000),
            burst: None,
            bandwidth: Rate::from_bps(10_000_000),
            ecn: false,
            harddrop: false,
            gentle: true,
        }
    }
}

/// RED's parameters with tc-red's defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RedParams {
    pub min: f64,
    pub max: f64,
    pub max_p: f64,
    pub burst: u32,
    /// log2(1/W_q).
    pub wlog: u32,
    /// Time to send `avpkt` bytes at `bandwidth`, seconds.
    pub xmit_time: f64,
}

impl RedConfig {
    /// tc-red's derivation of the unset parameters; the error names the parameter and what is accepted.
    pub(crate) fn resolve(&self, limit: QueueLimit) -> Result<RedParams, (&'static str, String)> {
        let avpkt = self.avpkt.bytes();
        if avpkt == 0 || avpkt > 65536 {
            return Err(("avpkt", format!("{}: accepted 1B to 64KiB", self.avpkt)));
        }
        let limit_bytes = match limit {
            QueueLimit::Bytes(b) => b,
            QueueLimit::Packets(n) => n as u64 * avpkt,
        };
        let max = match (self.max, self.min) {
            (Some(m), _) => m.bytes(),
            (None, Some(min)) => min.bytes() * 3,
            (None, None) => limit_bytes / 4,
        };
        let min = self.min.map_or(max / 3, |m| m.bytes());
        if min >= max {
            return Err(("min", format!("{} with max {}: accepted min < max", ByteSize::new(min), ByteSize::new(max))));
        }
        if max > limit_bytes {
            return Err((
                "max",
                format!(
                    "{}: above the queue limit {limit} ({}); accepted at most the limit",
                    ByteSize::new(max),
                    ByteSize::new(limit_bytes)
                ),
            ));
        }
        if !(self.probability > 0.0 && self.probability <= 1.0) {
            return Err(("probability", format!("{}: accepted 0 < probability <= 1", self.probability)));
        }
        if self.bandwidth.bps() == 0 {
            return Err(("bandwidth", "0bit: accepted a rate above zero, such as \"10mbit\"".into()));
        }
        let burst = self.burst.unwrap_or(((2 * min + max) / (3 * avpkt)) as u32);
        // iproute2 tc_red_eval_ewma: a burst of `burst` packets into an empty queue should leave the
        // average below min.
        let a = burst as f64 + 1.0 - min as f64 / avpkt as f64;
        if a < 1.0 {
            return Err((
                "burst",
                format!("{burst}: too small for min {}; accepted at least {}", ByteSize::new(min), 1 + min / avpkt),
            ));
        }
        let wlog = (1..32u32).find(|&wlog| {
            let w = 0.5f64.powi(wlog as i32);
            a <= (1.0 - (1.0 - w).powi(burst as i32)) / w
        });
        let Some(wlog) = wlog else {
            return Err((
                "burst",
                format!("{burst}: too large (no weight 2^-1 to 2^-31 fits); accepted a smaller burst"),
            ));
        };
        let xmit_time = avpkt as f64 * 8.0 / self.bandwidth.bps() as f64;
        Ok(RedParams { min: min as f64, max: max as f64, max_p: self.probability, burst, wlog, xmit_time })
    }

    pub(crate) fn validate(&self, limit: QueueLimit) -> Result<(), (&'static str, String)> {
        self.resolve(limit).map(|_| ())
    }
}

/// What RED decides for an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Accept,
    /// A probabilistic drop or mark.
    Early,
    /// Above the region: drop (or mark, with `ecn` and not `harddrop`).
    Hard,
}

/// RED over one FIFO (Linux sch_red with its bfifo child).
#[derive(Debug)]
pub struct Red<T> {
    p: RedParams,
    w: f64,
    ecn: bool,
    harddrop: bool,
    gentle: bool,
    limit: QueueLimit,
    queue: FifoQueue<T>,
    /// The average queue, bytes.
    avg: f64,
    /// Arrivals in the drop region since the last drop, −1 outside it (Floyd & Jacobson's count).
    count: i64,
    /// The uniform draw the count is measured against.
    r: f64,
    idle_since: Option<Instant>,
    rng: Xoshiro256PlusPlus,
    stats: QdiscStats,
}

impl<T> Red<T> {
    /// `cfg` should have passed [`RedConfig::validate`] with `limit`; if not, tc-red's defaults for this
    /// limit are used.
    pub fn new(cfg: &RedConfig, limit: QueueLimit, seed: u64) -> Self {
        let p = cfg.resolve(limit).or_else(|_| RedConfig::default().resolve(limit)).unwrap_or(RedParams {
            min: 5000.0,
            max: 15000.0,
            max_p: 0.02,
            burst: 8,
            wlog: 9,
            xmit_time: 0.0008,
        });
        Red {
            w: 0.5f64.powi(p.wlog as i32),
            p,
            ecn: cfg.ecn,
            harddrop: cfg.harddrop,
            gentle: cfg.gentle,
            limit,
            queue: FifoQueue { packets: Default::default(), bytes: 0 },
            avg: 0.0,
            count: -1,
            r: 0.0,
            // The queue starts empty and idle (Linux `red_set_vars` starts the idle period).
            idle_since: Some(Instant::ZERO),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            stats: QdiscStats::default(),
        }
    }

    /// The average queue, bytes.
    pub fn average(&self) -> f64 {
        self.avg
    }

    /// The weight of the average, W_q.
    pub fn weight(&self) -> f64 {
        self.w
    }

    /// The thresholds in effect (min, max), bytes.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.p.min, self.p.max)
    }

    /// p_b for an average queue of `avg` bytes: 0 below min, linear to max_p at max, then (gentle) linear to
    /// 1 at 2·max, 1 beyond.
    pub fn probability_at(&self, avg: f64) -> f64 {
        let RedParams { min, max, max_p, .. } = self.p;
        if avg < min {
            0.0
        } else if avg < max {
            max_p * (avg - min) / (max - min)
        } else if self.gentle && avg < 2.0 * max {
            max_p + (1.0 - max_p) * (avg - max) / max
        } else {
            1.0
        }
    }

    fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Floyd & Jacobson §4 and §7 with the gentle region; see the module docs for the spacing.
    fn decide(&mut self, now: Instant) -> Action {
        match self.idle_since.take() {
            // An idle queue: the average decays as if m small packets had left meanwhile.
            Some(since) => {
                let m = now.saturating_since(since).as_secs_f64() / self.p.xmit_time;
                self.avg *= (1.0 - self.w).powf(m);
            }
            None => self.avg += self.w * (self.queue.bytes as f64 - self.avg),
        }
        let (min, max) = (self.p.min, self.p.max);
        let hard_from = if self.gentle { 2.0 * max } else { max };
        if self.avg < min {
            self.count = -1;
            Action::Accept
        } else if self.avg >= hard_from {
            self.count = -1;
            Action::Hard
        } else {
            self.count += 1;
            if self.count == 0 {
                // Entering the region: draw, and let this one pass (Linux `red_action`).
                self.r = self.uniform();
                return Action::Accept;
            }
            let pb = self.probability_at(self.avg);
            if self.count as f64 * pb >= self.r {
                self.count = 0;
                self.r = self.uniform();
                Action::Early
            } else {
                Action::Accept
            }
        }
    }
}

impl<T> Qdisc<T> for Red<T> {
    fn enqueue(&mut self, now: Instant, mut meta: PacketMeta, item: T) -> Result<(), (T, DropReason)> {
        let refused = match self.decide(now) {
            Action::Accept => None,
            Action::Early | Action::Hard if !self.ecn => Some(DropReason::Aqm),
            Action::Hard if self.harddrop => Some(DropReason::Aqm),
            Action::Early | Action::Hard => {
                if mark_ce(&mut meta) {
                    self.stats.marks += 1;
                    None
                } else {
                    Some(DropReason::Aqm)
                }
            }
        };
        let refused = refused.or_else(|| {
            over_limit(self.limit, self.queue.packets.len(), self.queue.bytes, meta.wire_len)
                .then_some(DropReason::QueueFull)
        });
        if let Some(reason) = refused {
            match reason {
                DropReason::QueueFull => self.stats.drops_overlimit += 1,
                _ => self.stats.drops_aqm += 1,
            }
            // A refusal leaves an empty queue idle.
            if self.queue.packets.is_empty() {
                self.idle_since = Some(now);
            }
            return Err((item, reason));
        }
        self.queue.bytes += meta.wire_len as u64;
        note_arrival(&mut self.stats, &mut meta, now, self.queue.packets.len() + 1, self.queue.bytes);
        self.queue.packets.push_back((meta, item));
        Ok(())
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)> {
        let (meta, item) = self.queue.packets.pop_front()?;
        self.queue.bytes -= meta.wire_len as u64;
        if self.queue.packets.is_empty() {
            self.idle_since = Some(now);
        }
        note_departure(&mut self.stats, &meta, now);
        Some((meta, item))
    }

    fn len_packets(&self) -> usize {
        self.queue.packets.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn drop_probability(&mut self, _now: Instant) -> Option<f64> {
        Some(self.probability_at(self.avg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// min 50 kB, max 150 kB, max_p 0.1, 1000-byte packets, a 600 kB queue.
    fn cfg(gentle: bool) -> RedConfig {
        RedConfig {
            min: Some(ByteSize::new(50_000)),
            max: Some(ByteSize::new(150_000)),
            probability: 0.1,
            gentle,
            ..RedConfig::default()
        }
    }

    const LIMIT: QueueLimit = QueueLimit::Bytes(600_000);

    fn meta(ect: bool) -> PacketMeta {
        PacketMeta { wire_len: 1000, flow: 1, ect, ce: false, enqueued: Instant::ZERO }
    }

    /// A RED queue holding `backlog` bytes with its average there, fed one arrival per departure so both
    /// stay put: (drops, marks) out of `n` arrivals.
    fn held_at(cfg: &RedConfig, backlog: u64, n: u32, ect: bool, seed: u64) -> (u64, u64, Red<u32>) {
        let mut q = Red::new(cfg, LIMIT, seed);
        for i in 0..backlog / 1000 {
            q.queue.packets.push_back((meta(ect), i as u32));
            q.queue.bytes += 1000;
        }
        q.avg = backlog as f64;
        q.idle_since = None;
        let mut dropped = Vec::new();
        for i in 0..n {
            let t = Instant::from_nanos(i as u64 * 1000);
            if q.enqueue(t, meta(ect), i).is_ok() {
                q.dequeue(t, &mut dropped);
            }
        }
        assert_eq!(q.avg, backlog as f64, "the average stayed at the backlog");
        (q.stats.drops_aqm, q.stats.marks, q)
    }

    /// The long-run fraction of arrivals RED drops at a steady p_b: gaps between drops are
    /// max(1, ⌈R/p_b⌉) for uniform R, so the mean gap is Σ_{k ≥ 0} max(0, 1 − k·p_b) (for 1/p_b whole, (1 +
    /// 1/p_b)/2: about twice p_b for small p_b, as Floyd & Jacobson §7 note) and the fraction its inverse.
    fn expected_fraction(pb: f64) -> f64 {
        let mut mean_gap = 0.0;
        let mut k = 0.0;
        while k * pb < 1.0 {
            mean_gap += 1.0 - k * pb;
            k += 1.0;
        }
        1.0 / mean_gap
    }

    /// Floyd & Jacobson §4 with Floyd's gentle variant: for a steady average queue the measured drop
    /// fraction follows p_b: 0 below min, linear from 0 to max_p between min and max, linear from max_p to
    /// 1 between max and 2·max (gentle), everything beyond.
    #[test]
    fn red_drop_probability_follows_its_curve() {
        let red = Red::<u32>::new(&cfg(true), LIMIT, 1);
        for (backlog, pb) in [
            (40_000, 0.0),
            (75_000, 0.025),
            (100_000, 0.05),
            (125_000, 0.075),
            (149_000, 0.099),
            (180_000, 0.1 + 0.9 * 30.0 / 150.0),
            (225_000, 0.1 + 0.9 * 75.0 / 150.0),
            (280_000, 0.1 + 0.9 * 130.0 / 150.0),
            (310_000, 1.0),
        ] {
            assert!((red.probability_at(backlog as f64) - pb).abs() < 1e-12, "p_b at {backlog}");
            let n = 200_000;
            let (drops, marks, _) = held_at(&cfg(true), backlog, n, false, 7);
            assert_eq!(marks, 0);
            let measured = drops as f64 / n as f64;
            let want = if pb == 0.0 { 0.0 } else { expected_fraction(pb) };
            // The gaps are independent and uniform: the count's sd is below 1% of it at these sizes.
            assert!(
                (measured - want).abs() <= 0.04 * want,
                "avg {backlog}: measured {measured}, p_b {pb}, expected {want}"
            );
        }
        // Without gentle, everything is dropped from max up (Linux's RED).
        let (drops, _, _) = held_at(&cfg(false), 180_000, 1000, false, 7);
        assert_eq!(drops, 1000);
    }

    /// With `ecn`, ECN-capable arrivals are marked where they would be dropped, also in the hard region
    /// unless `harddrop`; arrivals that are not ECN-capable are dropped.
    #[test]
    fn red_with_ecn_marks_instead_of_dropping() {
        let ecn = RedConfig { ecn: true, ..cfg(true) };
        let (drops, marks, q) = held_at(&ecn, 100_000, 100_000, true, 7);
        assert_eq!(drops, 0);
        assert!((marks as f64 / 1e5 - expected_fraction(0.05)).abs() < 0.04 * expected_fraction(0.05));
        // The 100 packets left queued are the last arrivals, about 10% of them marked.
        let ce = q.queue.packets.iter().filter(|(m, _)| m.ce).count();
        assert!((1..=25).contains(&ce), "{ce}");
        let (drops, marks, _) = held_at(&ecn, 100_000, 100_000, false, 7);
        assert!(drops > 0 && marks == 0);
        let (drops, marks, _) = held_at(&ecn, 310_000, 1000, true, 7);
        assert_eq!((drops, marks), (0, 1000));
        let hard = RedConfig { harddrop: true, ..ecn };
        let (drops, marks, _) = held_at(&hard, 310_000, 1000, true, 7);
        assert_eq!((drops, marks), (1000, 0));
    }

    /// The average moves by W_q toward the queue at each arrival (Floyd & Jacobson §4), and after an idle
    /// spell it decays by (1 − W_q)^m, m = idle / (avpkt·8 / bandwidth): the small packets the link could
    /// have sent meanwhile.
    #[test]
    fn red_average_follows_the_queue_and_decays_when_idle() {
        let mut q = Red::<u32>::new(&cfg(true), LIMIT, 1);
        let w = q.weight();
        let mut avg = 0.0;
        for i in 0..30u32 {
            q.enqueue(Instant::ZERO, meta(false), i).unwrap();
            // The first arrival found the queue empty (idle since 0: no decay of a zero average).
            avg = if i == 0 { 0.0 } else { avg + w * (i as f64 * 1000.0 - avg) };
            assert!((q.average() - avg).abs() < 1e-9, "arrival {i}");
        }
        let mut dropped = Vec::new();
        while q.dequeue(Instant::from_nanos(5_000_000), &mut dropped).is_some() {}
        let before = q.average();
        // avpkt 1000 B at 10 Mbit/s: 0.8 ms a packet; 40 ms idle is m = 50.
        q.enqueue(Instant::from_nanos(45_000_000), meta(false), 99).unwrap();
        let want = before * (1.0 - w).powf(50.0);
        assert!((q.average() - want).abs() < 1e-9 * before, "{} vs {want}", q.average());
    }

    /// tc-red's defaults: max = limit/4, min = max/3, burst = (2·min + max)/(3·avpkt), and W_q the largest
    /// power of ½ with burst + 1 − min/avpkt ≤ (1 − (1 − W)^burst)/W (iproute2 `tc_red_eval_ewma`).
    #[test]
    fn red_defaults_follow_tc_red() {
        let p = RedConfig::default().resolve(QueueLimit::Bytes(1_000_000)).unwrap();
        assert_eq!((p.max, p.min, p.burst), (250_000.0, 83_333.0, 138));
        // a = 138 + 1 − 83.3 = 55.7; (1 − (63/64)^138)·64 = 56.7 fits, (1 − (31/32)^138)·32 = 31.6 does not.
        assert_eq!(p.wlog, 6);
        let p = RedConfig { max: Some(ByteSize::new(100_000)), ..RedConfig::default() }
            .resolve(QueueLimit::Bytes(400_000))
            .unwrap();
        assert_eq!((p.min, p.burst, p.wlog), (33_333.0, 55, 5));
        // A limit in packets counts avpkt bytes each.
        let p = RedConfig::default().resolve(QueueLimit::Packets(1000)).unwrap();
        assert_eq!(p.max, 250_000.0);
        assert!((p.xmit_time - 0.0008).abs() < 1e-15);
    }

    #[test]
    fn red_rejects_inconsistent_parameters_by_name() {
        let bad = |c: RedConfig| c.validate(QueueLimit::Bytes(100_000)).unwrap_err();
        assert_eq!(
            bad(RedConfig {
                min: Some(ByteSize::new(30_000)),
                max: Some(ByteSize::new(20_000)),
                ..RedConfig::default()
            })
            .0,
            "min"
        );
        assert_eq!(bad(RedConfig { max: Some(ByteSize::new(200_000)), ..RedConfig::default() }).0, "max");
        assert_eq!(bad(RedConfig { probability: 0.0, ..RedConfig::default() }).0, "probability");
        let (key, msg) = bad(RedConfig { burst: Some(1), min: Some(ByteSize::new(20_000)), ..RedConfig::default() });
        assert!(key == "burst" && msg.contains("accepted at least 21"), "{msg}");
        assert_eq!(bad(RedConfig { avpkt: ByteSize::new(0), ..RedConfig::default() }).0, "avpkt");
    }

    /// Same seed, same drops; another seed, other drops (at the same rate).
    #[test]
    fn red_is_deterministic_per_seed() {
        let pattern = |seed| {
            let (_, _, q) = held_at(&cfg(true), 100_000, 5000, false, seed);
            (q.stats, q.r)
        };
        assert_eq!(pattern(3), pattern(3));
        assert_ne!(pattern(3).1, pattern(4).1);
    }
}
