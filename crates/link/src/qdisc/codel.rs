//! CoDel, Controlled Delay (RFC 8289): judges each packet by its sojourn time when it leaves the queue.
//! While the sojourn time has stayed at or above `target` for a whole `interval`, CoDel drops (or
//! CE-marks) at the head, spacing the drops `interval/√count` apart (the control law, RFC 8289 §3.3), so
//! the drop rate rises until the standing queue falls below target.
//!
//! Reading: RFC 8289 §3 (the algorithm), §4 (parameters), §5 (the pseudocode this follows); Linux
//! `include/net/codel.h`, `include/net/codel_impl.h` and `net/sched/sch_codel.c` (read for the defaults and
//! the order of the steps, not copied). Deviations: the control law is computed exactly (`f64` √, rounded
//! down to the nanosecond) where Linux keeps a Newton-iterated reciprocal square root; "one MTU" in the
//! rule that never drops the last packet is the largest packet seen (RFC 8289 §5's MAXPACKET), where Linux
//! reads the device MTU.

use serde::{Deserialize, Serialize};
use tcplab_units::{Duration, Instant};

use super::{mark_ce, note_arrival, note_departure, over_limit, PacketMeta, Qdisc, QdiscStats};
use crate::config::QueueLimit;
use crate::queue::DropReason;

/// CoDel's parameters (RFC 8289 §4; Linux `codel_params_init`, tc-codel(8)). The hard limit is the link
/// direction's `queue` (sch_codel's default is 1000 packets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodelConfig {
    /// The acceptable standing queue delay: CoDel starts dropping when the sojourn time has stayed at or
    /// above it for `interval`. Default 5ms (RFC 8289 §4.4; Linux `MS2TIME(5)`).
    pub target: Duration,
    /// How long the sojourn time must stay above `target` before the first drop, and the base of the
    /// drop spacing `interval/√count`; of the order of the worst-case RTT through the bottleneck. Default
    /// 100ms (RFC 8289 §4.3; Linux `MS2TIME(100)`).
    pub interval: Duration,
    /// CE-mark ECN-capable packets where CoDel would drop them (RFC 8289 §4.5; tc-codel `ecn`); packets that
    /// are not ECN-capable are still dropped. Default false (sch_codel; fq_codel defaults to true).
    pub ecn: bool,
    /// CE-mark every ECN-capable packet whose sojourn time exceeds this, whatever the control law says (a
    /// shallow step threshold for DCTCP-style senders; tc-codel `ce_threshold`). Default unset: off (Linux
    /// `CODEL_DISABLED_THRESHOLD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Duration>,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
            ce_threshold: None,
        }
    }
}

/// Longest `target`, `interval` or `ce_threshold` accepted (far beyond any queue a link holds).
const MAX_TIME: Duration = Duration::from_secs(60);

pub(crate) fn validate_times(
    target: Duration,
    interval: Duration,
    ce_threshold: Option<Duration>,
) -> Result<(), (&'static str, String)> {
    let check = |key: &'static str, d: Duration| {
        if d.is_zero() || d > MAX_TIME {
            Err((key, format!("{d}: accepted more than 0s and at most {MAX_TIME}")))
        } else {
            Ok(())
        }
    };
    check("target", target)?;
    check("interval", interval)?;
    if let Some(ce) = ce_threshold {
        check("ce_threshold", ce)?;
    }
    Ok(())
}

impl CodelConfig {
    pub(crate) fn validate(&self) -> Result<(), (&'static str, String)> {
        validate_times(self.target, self.interval, self.ce_threshold)
    }

    pub(crate) fn params(&self) -> CodelParams {
        CodelParams { target: self.target, interval: self.interval, ecn: self.ecn, ce_threshold: self.ce_threshold }
    }
}

/// The parameters one CoDel instance runs with (CoDel's own, or FQ-CoDel's for every flow).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CodelParams {
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub ce_threshold: Option<Duration>,
}

/// The queue CoDel serves: the whole qdisc (CoDel) or one flow's queue (FQ-CoDel).
pub(crate) trait CodelSource<T> {
    /// Removes the head packet.
    fn pop(&mut self) -> Option<(PacketMeta, T)>;
    /// Bytes left in the qdisc after the last pop: RFC 8289 §5's `bytes()`; Linux passes the qdisc's
    /// whole backlog, in FQ-CoDel too.
    fn backlog(&self) -> u64;
}

/// One CoDel state machine (RFC 8289 §5's variables).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CodelVars {
    /// Drops (and marks) since entering the dropping state; the control law's `count`.
    pub count: u32,
    /// `count` when the dropping state was last entered, for the re-entry rule.
    lastcount: u32,
    pub dropping: bool,
    /// When the sojourn time, above target since just before, will have been above it for `interval`;
    /// `None` while it is below target.
    first_above_time: Option<Instant>,
    /// When the next drop is due in the dropping state.
    pub drop_next: Instant,
    /// The sojourn time of the packet last looked at.
    ldelay: Duration,
}

/// RFC 8289 §3.3: the next drop `interval/√count` after `t`.
pub(crate) fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
    let spacing = interval.as_nanos() as f64 / (count.max(1) as f64).sqrt();
    t + Duration::from_nanos(spacing as u64)
}

impl CodelVars {
    /// RFC 8289 §5 `dodequeue`'s test: has the packet at hand (just removed, `backlog` bytes left behind)
    /// seen a sojourn at or above target for a whole interval?
    fn should_drop(
        &mut self,
        p: &CodelParams,
        head: Option<&PacketMeta>,
        backlog: u64,
        maxpacket: u64,
        now: Instant,
    ) -> bool {
        let Some(meta) = head else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now.saturating_since(meta.enqueued);
        // Below target, or too little queue left to be worth a drop (less than one full packet).
        if self.ldelay < p.target || backlog <= maxpacket {
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                self.first_above_time = Some(now + p.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// RFC 8289 §5 `dequeue`: the next packet to send from `q`, dropping (or marking) at the head as the
    /// state machine says. Drops go to `dropped` and are counted in `stats` (the caller counts the
    /// departure).
    pub(crate) fn dequeue<T, Q: CodelSource<T>>(
        &mut self,
        p: &CodelParams,
        q: &mut Q,
        maxpacket: u64,
        now: Instant,
        dropped: &mut Vec<(PacketMeta, T, DropReason)>,
        stats: &mut QdiscStats,
    ) -> Option<(PacketMeta, T)> {
        let mut cur = q.pop();
        if cur.is_none() {
            // An empty queue ends the dropping state (RFC 8289 §5).
            self.dropping = false;
            self.first_above_time = None;
            return None;
        }
        let drop = self.should_drop(p, cur.as_ref().map(|c| &c.0), q.backlog(), maxpacket, now);
        if self.dropping {
            if !drop {
                // The sojourn time went below target: leave the dropping state.
                self.dropping = false;
            } else {
                // Every drop that fell due since the last dequeue, each spaced by the control law.
                while self.dropping && now >= self.drop_next {
                    self.count = self.count.saturating_add(1);
                    let Some((mut meta, item)) = cur.take() else { break };
                    if p.ecn && mark_ce(&mut meta) {
                        stats.marks += 1;
                        self.drop_next = control_law(self.drop_next, p.interval, self.count);
                        cur = Some((meta, item));
                        break;
                    }
                    stats.drops_aqm += 1;
                    dropped.push((meta, item, DropReason::Aqm));
                    cur = q.pop();
                    if self.should_drop(p, cur.as_ref().map(|c| &c.0), q.backlog(), maxpacket, now) {
                        self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    } else {
                        self.dropping = false;
                    }
                }
            }
        } else if drop {
            if let Some((mut meta, item)) = cur.take() {
                if p.ecn && mark_ce(&mut meta) {
                    stats.marks += 1;
                    cur = Some((meta, item));
                } else {
                    stats.drops_aqm += 1;
                    dropped.push((meta, item, DropReason::Aqm));
                    cur = q.pop();
                    // For its effect on first_above_time and ldelay (RFC 8289 §5 calls dodequeue again).
                    self.should_drop(p, cur.as_ref().map(|c| &c.0), q.backlog(), maxpacket, now);
                }
            }
            self.dropping = true;
            // RFC 8289 §5: if the queue went above target again soon after leaving the dropping state,
            // start from the drop rate that controlled it last time (the drops of the last cycle) rather
            // than from 1.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if delta > 1 && now.saturating_since(self.drop_next) < p.interval.saturating_mul(16) {
                delta
            } else {
                1
            };
            self.lastcount = self.count;
            self.drop_next = control_law(now, p.interval, self.count);
        }
        if let (Some((meta, _)), Some(threshold)) = (cur.as_mut(), p.ce_threshold) {
            if self.ldelay > threshold && mark_ce(meta) {
                stats.marks += 1;
            }
        }
        cur
    }
}

/// The packets of a single-queue qdisc, in arrival order.
#[derive(Debug)]
pub(crate) struct FifoQueue<T> {
    pub packets: std::collections::VecDeque<(PacketMeta, T)>,
    pub bytes: u64,
}

impl<T> CodelSource<T> for FifoQueue<T> {
    fn pop(&mut self) -> Option<(PacketMeta, T)> {
        let head = self.packets.pop_front()?;
        self.bytes -= head.0.wire_len as u64;
        Some(head)
    }
    fn backlog(&self) -> u64 {
        self.bytes
    }
}

/// CoDel over one FIFO (Linux sch_codel): drop-tail at the hard limit on arrival, CoDel at the head.
#[derive(Debug)]
pub struct Codel<T> {
    params: CodelParams,
    vars: CodelVars,
    limit: QueueLimit,
    queue: FifoQueue<T>,
    /// The largest packet seen, bytes (RFC 8289 §5's MAXPACKET).
    maxpacket: u64,
    stats: QdiscStats,
}

impl<T> Codel<T> {
    pub fn new(cfg: &CodelConfig, limit: QueueLimit) -> Self {
        Codel {
            params: cfg.params(),
            vars: CodelVars::default(),
            limit,
            queue: FifoQueue { packets: Default::default(), bytes: 0 },
            maxpacket: 0,
            stats: QdiscStats::default(),
        }
    }

    /// Drops and marks since the dropping state was entered (the control law's `count`).
    pub fn count(&self) -> u32 {
        self.vars.count
    }

    /// Whether CoDel is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.vars.dropping
    }
}

impl<T> Qdisc<T> for Codel<T> {
    fn enqueue(&mut self, now: Instant, mut meta: PacketMeta, item: T) -> Result<(), (T, DropReason)> {
        if over_limit(self.limit, self.queue.packets.len(), self.queue.bytes, meta.wire_len) {
            self.stats.drops_overlimit += 1;
            return Err((item, DropReason::QueueFull));
        }
        self.maxpacket = self.maxpacket.max(meta.wire_len as u64);
        self.queue.bytes += meta.wire_len as u64;
        note_arrival(&mut self.stats, &mut meta, now, self.queue.packets.len() + 1, self.queue.bytes);
        self.queue.packets.push_back((meta, item));
        Ok(())
    }

    fn dequeue(&mut self, now: Instant, dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)> {
        let out = self.vars.dequeue(&self.params, &mut self.queue, self.maxpacket, now, dropped, &mut self.stats)?;
        note_departure(&mut self.stats, &out.0, now);
        Some(out)
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
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, Bench, Item, Source};
    use super::super::QdiscConfig;
    use super::*;

    const TX_1538_10M: f64 = 1538.0 * 8.0 / 10e6;

    fn codel(cfg: CodelConfig) -> QdiscConfig {
        QdiscConfig::Codel(cfg)
    }

    /// An unresponsive 12 Mbit/s into 10 Mbit/s: a FIFO's sojourn grows without bound (a packet that
    /// arrives at t leaves at 1.2·t). CoDel's is bounded, by the control law: the excess is r = 2 Mbit/s / 12,304 bit = 162.5
    /// packets/s. Above target the queue grows for one `interval` before the first drop (I·r packets);
    /// then the drop rate √count/I rises linearly in time (count(t) = (t/2I)², rate t/2I²), reaching r
    /// after 2I²r, by when the queue has grown by a further ∫(r − t/2I²)dt = (I·r)² packets. So the
    /// sojourn never exceeds target + (I·r + (I·r)²)·tx + tx = 351 ms, however long the overload lasts,
    /// and what CoDel drops in the long run is the excess, 1/6 of the arrivals. Against unresponsive
    /// traffic this is all CoDel promises: the re-entry rule restarts each cycle from the drops of the
    /// last one, and the sojourn cycles between about 20 and 130 ms (mean about 80 ms); it sits near target
    /// with senders that slow down when dropped (TCP), which the lab's scenarios show.
    #[test]
    fn codel_bounds_an_unresponsive_overload_where_a_fifo_grows_without_bound() {
        let src = || vec![Source::cbr(1, 1538, 12_000_000, Instant::ZERO)];
        let limit = QueueLimit::Packets(100_000);
        let mut fifo = Bench::new(&QdiscConfig::Fifo {}, limit, 1, 10_000_000, src());
        fifo.run_until(ms(30_000));
        // A packet that arrives at t leaves at 1.2·t: at 30 s the one leaving waited 30/6 s.
        let last = fifo.departures.last().unwrap().sojourn.as_secs_f64();
        assert!((last - 30.0 / 6.0).abs() < 0.01, "FIFO sojourn at 30 s: {last} s");

        let mut b = Bench::new(&codel(CodelConfig::default()), limit, 1, 10_000_000, src());
        b.run_until(ms(10_000));
        let (offered0, drops0) = (b.offered, b.q.stats().drops_aqm);
        b.run_until(ms(30_000));
        let r: f64 = 2e6 / (1538.0 * 8.0);
        let ir = 0.1 * r;
        let bound = 0.005 + (ir + ir * ir) * TX_1538_10M + TX_1538_10M;
        let (mean, max) = b.sojourn(Instant::ZERO);
        assert!(max <= bound, "max sojourn {max} s, bound from the control law {bound} s");
        let (late_mean, late_max) = b.sojourn(ms(10_000));
        assert!(late_max < 0.15 && late_mean < 0.1, "steady state: mean {late_mean} s, max {late_max} s");
        assert!(mean < last / 20.0);
        let frac = (b.q.stats().drops_aqm - drops0) as f64 / (b.offered - offered0) as f64;
        assert!((frac - 1.0 / 6.0).abs() < 0.01, "dropped {frac} of the arrivals; the excess is 1/6");
        assert_eq!(b.q.stats().drops_overlimit, 0);
    }

    /// Bursts that leave every sojourn below target are never dropped, nor is a burst whose sojourn is
    /// above target for less than an interval (RFC 8289 §3.2: a good queue).
    #[test]
    fn codel_drops_nothing_below_target_or_above_it_for_less_than_an_interval() {
        // 4 packets every 20 ms: the last waits 3 × 1.23 = 3.7 ms.
        let src = vec![Source::bursts(1, 1538, 4, Duration::from_millis(20), Instant::ZERO)];
        let mut b = Bench::new(&codel(CodelConfig::default()), QueueLimit::Packets(1000), 1, 10_000_000, src);
        b.run_until(ms(5_000));
        let (_, max) = b.sojourn(Instant::ZERO);
        assert!(max < 0.005 && b.drops.is_empty(), "max sojourn {max}, drops {}", b.drops.len());
        // 40 packets every second: the sojourn rises to 48 ms but is above 5 ms for only 43 ms.
        let src = vec![Source::bursts(1, 1538, 40, Duration::from_millis(1000), Instant::ZERO)];
        let mut b = Bench::new(&codel(CodelConfig::default()), QueueLimit::Packets(1000), 1, 10_000_000, src);
        b.run_until(ms(4_900));
        let (_, max) = b.sojourn(Instant::ZERO);
        assert!(max > 0.04 && b.drops.is_empty(), "max sojourn {max}, drops {}", b.drops.len());
        assert_eq!(b.q.stats().dequeued, 200);
    }

    /// Asserts that events at `times` follow the control law from the first: the k-th gap is interval/√k,
    /// late by less than one packet time (drops happen at dequeues, one per `tx`).
    fn assert_control_law(times: &[Instant], tx: f64, what: &str) {
        assert!(times.len() >= 40, "only {} {what}", times.len());
        // The schedule is drop_next(k+1) = drop_next(k) + I/√k from the first; each event is at the first
        // dequeue at or after its slot.
        let mut due = times[0].as_secs_f64();
        for (k, w) in times.windows(2).enumerate() {
            due += (0.1e9 / ((k + 1) as f64).sqrt()).floor() * 1e-9;
            let at = w[1].as_secs_f64();
            assert!(at >= due - 1e-9 && at < due + tx + 1e-9, "{what} {}: at {at} s, due {due} s", k + 2);
        }
    }

    /// RFC 8289 §3.3: in the dropping state the k-th drop follows the (k−1)-th by interval/√(k−1).
    #[test]
    fn codel_spaces_drops_by_interval_over_sqrt_count() {
        let src = vec![Source::cbr(1, 1538, 200_000_000, Instant::ZERO).until(ms(2_000))];
        let mut b = Bench::new(&codel(CodelConfig::default()), QueueLimit::Packets(100_000), 1, 100_000_000, src);
        b.run_until(ms(2_000));
        let times: Vec<Instant> = b.drops.iter().map(|d| d.at).collect();
        assert!(b.drops.iter().all(|d| d.reason == DropReason::Aqm));
        assert!(times.len() > 80, "{} drops", times.len());
        // The first drop: the sojourn (half the departure time at twice the link's rate) reached target at
        // 10 ms and stayed above it for an interval.
        let first = times[0].as_secs_f64();
        assert!((0.110..0.1102).contains(&first), "first drop at {first} s");
        assert_control_law(&times, 1538.0 * 8.0 / 100e6, "drop");
    }

    /// RFC 8289 §5's re-entry rule: back above target soon (within 16 intervals) after leaving the
    /// dropping state, CoDel starts from count = the drops of the last cycle (minus the first), not 1; after
    /// a long quiet spell, from 1.
    #[test]
    fn codel_reentering_soon_resumes_the_last_drop_rate_and_later_starts_over() {
        for (restart, soon) in [(2_300, true), (6_000, false)] {
            let src = vec![
                Source::cbr(1, 1538, 200_000_000, Instant::ZERO).until(ms(1_000)),
                Source::cbr(2, 1538, 200_000_000, ms(restart)),
            ];
            let q: Box<Codel<Item>> = Box::new(Codel::new(&CodelConfig::default(), QueueLimit::Packets(100_000)));
            let mut b = Bench::with(q, 100_000_000, src);
            b.run_until(ms(restart));
            assert!(!b.q.dropping(), "the first cycle ended before the restart");
            let n = b.drops.len() as u32;
            b.run_until(ms(restart + 400));
            let again: Vec<f64> = b.drops[n as usize..].iter().map(|d| d.at.as_secs_f64()).collect();
            let gap = again[1] - again[0];
            let count = if soon { n - 1 } else { 1 };
            let want = 0.1 / (count as f64).sqrt();
            let tx = 1538.0 * 8.0 / 100e6;
            assert!(
                gap >= want - 1e-9 && gap < want + tx,
                "restart at {restart} ms: gap {gap}, want {want} (count {count})"
            );
        }
    }

    /// With `ecn`, ECN-capable packets are marked where they would have been dropped (on the same
    /// schedule); packets that are not ECN-capable are still dropped.
    #[test]
    fn codel_with_ecn_marks_ect_packets_instead_of_dropping_them() {
        let cfg = codel(CodelConfig { ecn: true, ..CodelConfig::default() });
        let src = vec![Source::cbr(1, 1538, 200_000_000, Instant::ZERO).until(ms(2_000)).ect()];
        let mut b = Bench::new(&cfg, QueueLimit::Packets(100_000), 1, 100_000_000, src);
        b.run_until(ms(2_000));
        let s = *b.q.stats();
        assert_eq!((s.drops_aqm, s.drops_overlimit), (0, 0));
        let marks: Vec<Instant> = b.departures.iter().filter(|d| d.ce).map(|d| d.at).collect();
        assert_eq!(marks.len() as u64, s.marks);
        assert_control_law(&marks, 1538.0 * 8.0 / 100e6, "mark");

        let src = vec![Source::cbr(1, 1538, 200_000_000, Instant::ZERO).until(ms(1_000))];
        let mut b = Bench::new(&cfg, QueueLimit::Packets(100_000), 1, 100_000_000, src);
        b.run_until(ms(1_000));
        assert!(b.q.stats().drops_aqm > 20 && b.q.stats().marks == 0);
    }

    /// `ce_threshold` marks every ECN-capable packet whose sojourn exceeds it, and no other.
    #[test]
    fn codel_ce_threshold_marks_by_sojourn_alone() {
        let cfg = codel(CodelConfig { ce_threshold: Some(Duration::from_millis(2)), ..CodelConfig::default() });
        let src = vec![Source::bursts(1, 1538, 4, Duration::from_millis(20), Instant::ZERO).ect()];
        let mut b = Bench::new(&cfg, QueueLimit::Packets(1000), 1, 10_000_000, src);
        b.run_until(ms(1_000));
        assert!(b.drops.is_empty());
        for d in &b.departures {
            assert_eq!(d.ce, d.sojourn > Duration::from_millis(2), "{d:?}");
        }
        assert_eq!(b.q.stats().marks, 100); // the 3rd and 4th of each burst wait 2.46 and 3.69 ms
    }
}
