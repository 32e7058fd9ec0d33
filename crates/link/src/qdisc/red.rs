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
            return Err((
                "min",
                format!("{} with max {}: accepted min < max", ByteSize::new(min), ByteSize::new(max)),
            ));
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
            return Err(("burst", format!("{burst}: too large (no weight 2^-1 to 2^-31 fits); accepted a smaller burst")));
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
        let p = cfg
            .resolve(limit)
            .or_else(|_| RedConfig::default().resolve(limit))
            .unwrap_or(RedParams { min: 5000.0, max: 15000.0, max_p: 0.02, burst: 8, wlog: 9, xmit_time: 0.0008 });
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
