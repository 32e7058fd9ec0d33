//! PIE, Proportional Integral controller Enhanced (RFC 8033): drops (or CE-marks) arrivals at random with a
//! probability a PI controller updates every `tupdate` from the queue delay: up by `alpha` per second of
//! delay above `target`, and by `beta` per second the delay grew since the last update.
//!
//! Reading: RFC 8033 §4 (the algorithm: §4.1 random drop, §4.2 drop-probability calculation with the
//! auto-tuning of alpha and beta by ranges of the probability, §4.3 latency calculation, §4.4 burst
//! tolerance), §5.1 (de-randomization); Linux `net/sched/sch_pie.c` and `include/net/pie.h` (defaults and
//! the order of the steps; read, not copied).
//!
//! Choices where the RFC leaves one, all as Linux does unless said:
//! - Queue delay from per-packet timestamps (RFC 8033 §4.3's alternative; Linux's default,
//!   `dq_rate_estimator` off): the sojourn time of the packet last dequeued, zero once the queue is empty.
//!   The departure-rate estimator is not implemented.
//! - De-randomization (RFC 8033 §5.1, optional there) on by default, as Linux always does; `derandomize =
//!   false` gives the plain Bernoulli drop.
//! - The burst allowance runs down by the time between dequeues (Linux); the RFC runs it down by `tupdate`
//!   per update. Both spend it only while packets flow.
//! - The probability is an `f64` in [0, 1] (Linux: a 56-bit fixed point); the decay when the delay has been
//!   zero for two updates is `p -= p/64` (Linux; the RFC's 0.98), and the 2% boost above 250 ms of delay is
//!   Linux's.
//! - "Two MTU-sized packets" (below which PIE never drops) uses the largest packet seen as the MTU.
//! - The periodic update: Linux runs it from a timer. A qdisc here runs only when the engine offers or asks
//!   for a packet, so every call first performs, in order, the updates that fell due at `k·tupdate` (k ≥ 1,
//!   from the start of the run) up to and including `now`. Between two calls nothing the update reads
//!   changes (the backlog, the last delay), so this is exactly the timer's result, whatever the spacing of
//!   the calls; once an update leaves the state unchanged the rest are skipped (they would change nothing).

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use tcplab_units::{Duration, Instant};

use super::codel::FifoQueue;
use super::{mark_ce, note_arrival, note_departure, over_limit, PacketMeta, Qdisc, QdiscStats};
use crate::config::QueueLimit;
use crate::queue::DropReason;

/// PIE's parameters (RFC 8033 §4 and §5; Linux `pie_params_init`, tc-pie(8)). The hard limit is the link
/// direction's `queue` (sch_pie's default is 1000 packets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PieConfig {
    /// The queue delay PIE steers to (QDELAY_REF). Default 15ms (RFC 8033 §4.2 and §5; Linux).
    pub target: Duration,
    /// How often the drop probability is recalculated (T_UPDATE). Default 15ms (RFC 8033 §4.2; Linux).
    pub tupdate: Duration,
    /// Gain on the delay's distance from target, per second (Hz): p grows by alpha × (delay − target)
    /// each update, scaled down while p is small (RFC 8033 §4.2). Default 0.125 (RFC 8033 §4.2; Linux
    /// `alpha 2` in sixteenths). Accepted 0 to 2 (Linux: 0 to 32 sixteenths).
    pub alpha: f64,
    /// Gain on the delay's change since the last update, per second (Hz). Default 1.25 (RFC 8033 §4.2;
    /// Linux `beta 20` in sixteenths). Accepted 0 to 2.
    pub beta: f64,
    /// How long after the queue starts to build PIE lets bursts through without random drops
    /// (MAX_BURST). Default 150ms (RFC 8033 §4.4; Linux).
    pub max_burst: Duration,
    /// CE-mark ECN-capable packets instead of dropping them while the drop probability is at most 10%
    /// (RFC 8033 §5.1; tc-pie `ecn`); above that, drop. Default false (Linux).
    pub ecn: bool,
    /// Scale the probability by packet size (size / MTU) so small packets are dropped less (tc-pie
    /// `bytemode`; RFC 8033 §4.1 allows it). Default false (Linux).
    pub bytemode: bool,
    /// Space drops evenly rather than independently: the probabilities of arrivals add up, and a drop is
    /// drawn only once the sum reaches 0.85 and forced when it reaches 8.5 (RFC 8033 §5.1, optional there).
    /// Default true (Linux always does).
    pub derandomize: bool,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            target: Duration::from_millis(15),
            tupdate: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            ecn: false,
            bytemode: false,
            derandomize: true,
        }
    }
}

impl PieConfig {
    pub(crate) fn validate(&self) -> Result<(), (&'static str, String)> {
        let max = Duration::from_secs(60);
        for (key, d) in [("target", self.target), ("tupdate", self.tupdate)] {
            if d.is_zero() || d > max {
                return Err((key, format!("{d}: accepted more than 0s and at most {max}")));
            }
        }
        if self.max_burst > max {
            return Err(("max_burst", format!("{}: accepted 0s to {max}", self.max_burst)));
        }
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(0.0..=2.0).contains(&v) {
                return Err((key, format!("{v}: accepted 0 to 2 (per second; Linux's 0 to 32 sixteenths)")));
            }
        }
        Ok(())
    }
}

/// RFC 8033's state variables (Linux `struct pie_vars`, timestamp mode).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PieVars {
    /// The drop probability, 0 to 1.
    pub prob: f64,
    /// Accumulated probability since the last drop (de-randomization).
    pub accu_prob: f64,
    /// The current queue delay: the sojourn of the packet last dequeued.
    pub qdelay: Duration,
    /// The queue delay at the previous update.
    pub qdelay_old: Duration,
    /// Burst allowance left.
    pub burst_time: Duration,
    /// When the last packet was dequeued (`None` after a reset).
    dq_tstamp: Option<Instant>,
}

impl PieVars {
    fn new(max_burst: Duration) -> Self {
        PieVars {
            prob: 0.0,
            accu_prob: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_time: max_burst,
            dq_tstamp: None,
        }
    }

    /// Linux `pie_vars_init` (the measurement cycle restarts; qdelay and prob stay).
    fn reset(&mut self, max_burst: Duration) {
        self.burst_time = max_burst;
        self.dq_tstamp = None;
        self.accu_prob = 0.0;
    }

    /// RFC 8033 §4.2 (Linux `pie_calculate_probability`, timestamp mode): one periodic update with `backlog`
    /// bytes queued.
    pub(crate) fn update(&mut self, cfg: &PieConfig, backlog: u64) {
        let qdelay = self.qdelay;
        let qdelay_old = self.qdelay_old;
        // A queue with bytes but no measured delay yet is too small to judge: no decay this round.
        let mut decay = !(qdelay.is_zero() && backlog != 0);
        // RFC 8033 §4.2: while p is small, its steps are scaled down so that it starts gently, by 2 below
        // 10% and a further 4 per decade below 1% (to 2048 below 0.0001%).
        let mut scale = 1.0;
        if self.prob < 0.1 {
            scale = 0.5;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1_000_000.0 {
                scale /= 4.0;
                power *= 10.0;
            }
        }
        let secs = |d: Duration| d.as_nanos() as f64 * 1e-9;
        let mut delta =
            scale * (cfg.alpha * (secs(qdelay) - secs(cfg.target)) + cfg.beta * (secs(qdelay) - secs(qdelay_old)));
        // Above 10%, p rises by at most 2% per update (RFC 8033 §4.2).
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        // Linux: a delay above 250 ms pushes p up by a further 2% per update.
        if qdelay > Duration::from_millis(250) {
            delta += 0.02;
        }
        self.prob += delta;
        if self.prob >= 1.0 {
            if delta > 0.0 {
                decay = false;
            }
            self.prob = 1.0;
        }
        if self.prob < 0.0 {
            self.prob = 0.0;
        }
        // RFC 8033 §4.2: with no delay for two updates, p decays quickly (Linux: by 1/64 per update).
        if qdelay.is_zero() && qdelay_old.is_zero() && decay {
            self.prob -= self.prob / 64.0;
        }
        // RFC 8033 §4.4 / Linux: low delay twice and p zero: a new burst allowance.
        let half = Duration::from_nanos(cfg.target.as_nanos() / 2);
        if qdelay < half && qdelay_old < half && self.prob == 0.0 {
            self.reset(cfg.max_burst);
        }
        self.qdelay_old = qdelay;
    }
}

/// PIE over one FIFO (Linux sch_pie, timestamp mode).
#[derive(Debug)]
pub struct Pie<T> {
    cfg: PieConfig,
    vars: PieVars,
    limit: QueueLimit,
    queue: FifoQueue<T>,
    maxpacket: u64,
    /// When the next periodic update is due.
    next_update: Instant,
    rng: Xoshiro256PlusPlus,
    stats: QdiscStats,
}

impl<T> Pie<T> {
    pub fn new(cfg: &PieConfig, limit: QueueLimit, seed: u64) -> Self {
        Pie {
            cfg: cfg.clone(),
            vars: PieVars::new(cfg.max_burst),
            limit,
            queue: FifoQueue { packets: Default::default(), bytes: 0 },
            maxpacket: 0,
            next_update: Instant::ZERO + cfg.tupdate,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            stats: QdiscStats::default(),
        }
    }

    /// The queue delay PIE last measured.
    pub fn qdelay(&self) -> Duration {
        self.vars.qdelay
    }

    /// Burst allowance left.
    pub fn burst_allowance(&self) -> Duration {
        self.vars.burst_time
    }

    /// Performs the periodic updates due at or before `now` (see the module docs).
    fn catch_up(&mut self, now: Instant) {
        let step = self.cfg.tupdate;
        while self.next_update <= now {
            let before = self.vars.clone();
            self.vars.update(&self.cfg, self.queue.bytes);
            self.next_update += step;
            if self.vars == before && self.next_update <= now {
                // A fixed point: the remaining updates change nothing.
                let behind = (now - self.next_update).as_nanos() / step.as_nanos() + 1;
                self.next_update += step.saturating_mul(behind);
            }
        }
    }

    /// RFC 8033 §4.1 and §5.1 (Linux `pie_drop_early`): whether an arrival of `size` bytes is dropped.
    fn drop_early(&mut self, size: u64) -> bool {
        let v = &mut self.vars;
        if !v.burst_time.is_zero() {
            return false;
        }
        // Low delay and a low probability: the queue is not congested.
        if v.qdelay < Duration::from_nanos(self.cfg.target.as_nanos() / 2) && v.prob < 0.2 {
            return false;
        }
        // Fewer than two full packets queued: never drop (like RED's min threshold).
        if self.queue.bytes < 2 * self.maxpacket {
            return false;
        }
        let p = if self.cfg.bytemode && size <= self.maxpacket {
            v.prob * size as f64 / self.maxpacket as f64
        } else {
            v.prob
        };
        if self.cfg.derandomize {
            if p == 0.0 {
                v.accu_prob = 0.0;
            } else {
                v.accu_prob += p;
            }
            if v.accu_prob < 0.85 {
                return false;
            }
            if v.accu_prob >= 8.5 {
                return true;
            }
        }
        let u = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if u < p {
            v.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl<T> Qdisc<T> for Pie<T> {
    fn enqueue(&mut self, now: Instant, mut meta: PacketMeta, item: T) -> Result<(), (T, DropReason)> {
        self.catch_up(now);
        if over_limit(self.limit, self.queue.packets.len(), self.queue.bytes, meta.wire_len) {
            self.stats.drops_overlimit += 1;
            self.vars.accu_prob = 0.0;
            return Err((item, DropReason::QueueFull));
        }
        self.maxpacket = self.maxpacket.max(meta.wire_len as u64);
        if self.drop_early(meta.wire_len as u64) {
            // RFC 8033 §5.1: mark instead while p ≤ 10%; a higher p means marks are not working.
            if !(self.cfg.ecn && self.vars.prob <= 0.1 && mark_ce(&mut meta)) {
                self.stats.drops_aqm += 1;
                self.vars.accu_prob = 0.0;
                return Err((item, DropReason::Aqm));
            }
            self.stats.marks += 1;
        }
        self.queue.bytes += meta.wire_len as u64;
        note_arrival(&mut self.stats, &mut meta, now, self.queue.packets.len() + 1, self.queue.bytes);
        self.queue.packets.push_back((meta, item));
        Ok(())
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)> {
        self.catch_up(now);
        let (meta, item) = self.queue.packets.pop_front()?;
        self.queue.bytes -= meta.wire_len as u64;
        // Linux `pie_process_dequeue`, timestamp mode.
        let v = &mut self.vars;
        v.qdelay = if self.queue.bytes == 0 { Duration::ZERO } else { now.saturating_since(meta.enqueued) };
        let dtime = v.dq_tstamp.map_or(Duration::ZERO, |t| now.saturating_since(t));
        v.dq_tstamp = Some(now);
        v.burst_time = v.burst_time.saturating_sub(dtime);
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

    fn drop_probability(&mut self, now: Instant) -> Option<f64> {
        self.catch_up(now);
        Some(self.vars.prob)
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, Bench, Item, Source};
    use super::*;

    fn pie(cfg: &PieConfig, seed: u64) -> Box<Pie<Item>> {
        Box::new(Pie::new(cfg, QueueLimit::Packets(100_000), seed))
    }

    /// Under a steady unresponsive overload (12 Mbit/s into 10 Mbit/s) PIE's integral term drives the
    /// queue delay to its 15 ms target: every second of the steady state averages within 2× of it, and what
    /// it drops is the excess, 1/6 of the arrivals. When the load stops, the delay is zero for two updates
    /// and p decays (by 1/64 per update and the alpha term) to exactly 0, and the burst allowance returns.
    #[test]
    fn pie_holds_the_queue_delay_near_target_under_overload_and_then_decays() {
        let cfg = PieConfig::default();
        let mut b = Bench::with(
            pie(&cfg, 1),
            10_000_000,
            vec![Source::cbr(1, 1538, 12_000_000, Instant::ZERO).until(ms(20_000))],
        );
        // The burst allowance: no random drop in the first 150 ms of dequeues (from t = 0).
        b.run_until(ms(5_000));
        assert!(b.drops.iter().all(|d| d.at >= ms(150)), "first drop at {:?}", b.drops.first());
        let (offered, drops) = (b.offered, b.q.stats().drops_aqm);
        for s in 5..20 {
            b.run_until(ms((s + 1) * 1000));
            let (mean, _) = b.sojourn(ms(s * 1000));
            assert!((0.0075..=0.030).contains(&mean), "second {s}: mean queue delay {mean} s");
        }
        let frac = (b.q.stats().drops_aqm - drops) as f64 / (b.offered - offered) as f64;
        assert!((frac - 1.0 / 6.0).abs() < 0.01, "dropped {frac}");
        assert_eq!(b.q.stats().drops_overlimit, 0);
        // Decay: sampled every 100 ms after the load stops, p only falls, and reaches 0.
        let mut p = b.q.drop_probability(ms(20_000)).unwrap();
        assert!(p > 0.1, "{p}");
        for t in (20_100..=40_000).step_by(100) {
            b.run_until(ms(t));
            let now = b.q.drop_probability(ms(t)).unwrap();
            assert!(now <= p, "p rose from {p} to {now} at {t} ms");
            p = now;
        }
        assert_eq!(p, 0.0);
        assert_eq!(b.q.burst_allowance(), cfg.max_burst);
    }

    fn vars(prob: f64, qdelay_ms: u64, qdelay_old_ms: u64) -> PieVars {
        PieVars {
            prob,
            accu_prob: 0.0,
            qdelay: Duration::from_millis(qdelay_ms),
            qdelay_old: Duration::from_millis(qdelay_old_ms),
            burst_time: Duration::ZERO,
            dq_tstamp: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// RFC 8033 §4.2: p += α(qdelay − target) + β(qdelay − qdelay_old), the step divided by 2 while p <
    /// 10%, by 8 below 1%, 32 below 0.1%, 128 below 0.01%, 512 below 0.001% and 2048 below 0.0001%.
    #[test]
    fn pie_update_scales_its_step_by_the_range_of_p() {
        let cfg = PieConfig::default();
        // 25 ms against 15, and 5 ms more than last time: 0.125·0.010 + 1.25·0.005 = 0.0075.
        let raw = 0.125 * 0.010 + 1.25 * 0.005;
        for (p, div) in [
            (0.5, 1.0),
            (0.1, 1.0),
            (0.05, 2.0),
            (0.005, 8.0),
            (0.0005, 32.0),
            (0.00005, 128.0),
            (0.000005, 512.0),
            (0.0000005, 2048.0),
            (0.0, 2048.0),
        ] {
            let mut v = vars(p, 25, 20);
            v.update(&cfg, 100_000);
            assert!(close(v.prob, p + raw / div), "p {p}: {} want {}", v.prob, p + raw / div);
            assert_eq!(v.qdelay_old, Duration::from_millis(25));
        }
        // Falling delay lowers p the same way.
        let mut v = vars(0.5, 10, 30);
        v.update(&cfg, 100_000);
        assert!(close(v.prob, 0.5 + 0.125 * -0.005 + 1.25 * -0.020));
    }

    /// Above 10% p rises by at most 2% per update; above 250 ms of delay by a further 2% (Linux).
    #[test]
    fn pie_update_caps_the_rise_and_pushes_harder_above_250ms() {
        let cfg = PieConfig::default();
        let mut v = vars(0.3, 100, 20); // raw step 0.125·0.085 + 1.25·0.08 = 0.11
        v.update(&cfg, 100_000);
        assert!(close(v.prob, 0.32));
        let mut v = vars(0.3, 300, 300); // raw 0.125·0.285 = 0.0356: capped 0.02, plus 0.02
        v.update(&cfg, 100_000);
        assert!(close(v.prob, 0.34));
        let mut v = vars(0.99, 300, 300);
        v.update(&cfg, 100_000);
        assert_eq!(v.prob, 1.0);
    }

    /// With no delay for two updates p decays by 1/64 (after the alpha term), and once it is 0 with the
    /// delay low twice, the measurement cycle and the burst allowance restart (RFC 8033 §4.2, §4.4; Linux).
    #[test]
    fn pie_update_decays_p_when_the_queue_is_gone_and_restores_the_burst_allowance() {
        let cfg = PieConfig::default();
        let mut v = vars(0.5, 0, 0);
        v.update(&cfg, 0);
        let stepped: f64 = 0.5 - 0.125 * 0.015;
        assert!(close(v.prob, stepped - stepped / 64.0));
        // Not while packets are queued but none has been measured yet.
        let mut v = vars(0.5, 0, 0);
        v.update(&cfg, 3000);
        assert!(close(v.prob, stepped));
        let mut v = vars(0.000_000_1, 0, 0);
        v.update(&cfg, 0);
        assert_eq!(v.prob, 0.0);
        assert_eq!(v.burst_time, cfg.max_burst);
    }

    /// The updates a timer would have made are made, exactly, by the next call however late it comes: a
    /// qdisc brought up to date at every tick and one brought up to date once, 100 s later (most of the
    /// ticks skipped at the fixed point), end in the same state.
    #[test]
    fn pie_catches_up_on_the_updates_that_fell_due_exactly() {
        let cfg = PieConfig::default();
        let run = |every_tick: bool| {
            let mut q: Pie<u32> = Pie::new(&cfg, QueueLimit::Packets(100_000), 1);
            let meta = PacketMeta { wire_len: 1538, flow: 1, ect: false, ce: false, enqueued: Instant::ZERO };
            let mut t = Instant::ZERO;
            let mut dropped = Vec::new();
            for i in 0..2000u32 {
                // 2 arrivals per departure slot: a queue builds and PIE acts.
                t = Instant::from_nanos(i as u64 * 615_200);
                let _ = q.enqueue(t, meta, i);
                if i % 2 == 0 {
                    q.dequeue(t, &mut dropped);
                }
            }
            while q.dequeue(t, &mut dropped).is_some() {}
            let end = t + Duration::from_secs(100);
            if every_tick {
                while q.next_update <= end {
                    let tick = q.next_update;
                    q.catch_up(tick);
                }
            }
            q.catch_up(end);
            (q.vars.clone(), q.next_update, q.stats)
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a, b);
        assert!(a.2.drops_aqm > 0);
    }

    /// RFC 8033 §5.1: with `ecn`, ECN-capable packets are marked while p ≤ 10% and dropped above it.
    #[test]
    fn pie_marks_ect_packets_while_p_is_at_most_ten_percent() {
        for (p, marked) in [(0.05, true), (0.1, true), (0.3, false)] {
            let cfg = PieConfig { ecn: true, tupdate: Duration::from_secs(60), ..PieConfig::default() };
            let mut q: Pie<u32> = Pie::new(&cfg, QueueLimit::Packets(100_000), 1);
            let meta = PacketMeta { wire_len: 1538, flow: 1, ect: true, ce: false, enqueued: Instant::ZERO };
            for i in 0..10 {
                q.enqueue(Instant::ZERO, meta, i).unwrap();
            }
            q.vars = vars(p, 30, 30);
            let (mut marks, mut drops) = (0, 0);
            for i in 0..2000 {
                match q.enqueue(Instant::ZERO, meta, i) {
                    Ok(()) => {}
                    Err((_, reason)) => {
                        assert_eq!(reason, DropReason::Aqm);
                        drops += 1
                    }
                }
                marks = q.stats.marks;
            }
            if marked {
                assert!(marks > 0 && drops == 0, "p {p}: {marks} marks, {drops} drops");
                assert!(q.queue.packets.iter().filter(|(m, _)| m.ce).count() as u64 == marks);
            } else {
                assert!(marks == 0 && drops > 0, "p {p}: {marks} marks, {drops} drops");
            }
        }
    }

    /// RFC 8033 §5.1's de-randomization: with p = 10% held, drops come at least ⌈0.85/p⌉ = 9 arrivals
    /// apart and at most 8.5/p = 85; plain random drops come as close as back to back.
    #[test]
    fn pie_derandomization_keeps_drops_between_bounds() {
        let gaps = |derandomize: bool| {
            let cfg = PieConfig { derandomize, tupdate: Duration::from_secs(60), ..PieConfig::default() };
            let mut q: Pie<u32> = Pie::new(&cfg, QueueLimit::Packets(1_000_000), 5);
            let meta = PacketMeta { wire_len: 1538, flow: 1, ect: false, ce: false, enqueued: Instant::ZERO };
            for i in 0..10 {
                q.enqueue(Instant::ZERO, meta, i).unwrap();
            }
            q.vars = vars(0.1, 30, 30);
            let mut last = 0i64;
            let mut gaps = Vec::new();
            for i in 1..=20_000i64 {
                if q.enqueue(Instant::ZERO, meta, 0).is_err() {
                    gaps.push(i - last);
                    last = i;
                }
            }
            gaps
        };
        let g = gaps(true);
        assert!(g.len() > 100);
        assert!(g.iter().all(|&x| (9..=85).contains(&x)), "{:?}", (g.iter().min(), g.iter().max()));
        let plain = gaps(false);
        let mean = 20_000.0 / plain.len() as f64;
        assert!(*plain.iter().min().unwrap() == 1 && (mean - 10.0).abs() < 1.0, "mean gap {mean}");
    }
}
