//! A deterministic bench for the qdisc tests: packet sources (constant bit rate, Poisson, or bursts) feed
//! a qdisc, and a serializer at a fixed rate takes a packet whenever it is free, as the engine will. Every
//! departure, drop and mark is logged with its time, so tests can assert what the algorithms promise.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tcplab_units::{Duration, Instant, Rate};

use super::{build, PacketMeta, Qdisc, QdiscConfig};
use crate::config::QueueLimit;
use crate::queue::DropReason;

/// When a source sends.
pub(crate) enum Pattern {
    /// One packet every `every`.
    Cbr { every: Duration },
    /// Exponential gaps with mean `mean`.
    Poisson { mean: Duration, rng: Xoshiro256PlusPlus },
    /// `n` packets at once, every `every`.
    Bursts { every: Duration, n: u32 },
}

pub(crate) struct Source {
    pub flow: u32,
    pub wire_len: u32,
    pub ect: bool,
    pattern: Pattern,
    next: Instant,
    stop: Instant,
}

impl Source {
    /// Sends at `bits_per_s` in packets of `wire_len` bytes from `start`.
    pub fn cbr(flow: u32, wire_len: u32, bits_per_s: u64, start: Instant) -> Self {
        let every = Rate::from_bps(bits_per_s).tx_time(wire_len as u64);
        Source { flow, wire_len, ect: false, pattern: Pattern::Cbr { every }, next: start, stop: Instant::FAR_FUTURE }
    }

    pub fn every(flow: u32, wire_len: u32, every: Duration, start: Instant) -> Self {
        Source { flow, wire_len, ect: false, pattern: Pattern::Cbr { every }, next: start, stop: Instant::FAR_FUTURE }
    }

    pub fn poisson(flow: u32, wire_len: u32, bits_per_s: u64, seed: u64) -> Self {
        let mean = Rate::from_bps(bits_per_s).tx_time(wire_len as u64);
        let mut s = Source {
            flow,
            wire_len,
            ect: false,
            pattern: Pattern::Poisson { mean, rng: Xoshiro256PlusPlus::seed_from_u64(seed) },
            next: Instant::ZERO,
            stop: Instant::FAR_FUTURE,
        };
        s.next = Instant::ZERO + s.gap();
        s
    }

    pub fn bursts(flow: u32, wire_len: u32, n: u32, every: Duration, start: Instant) -> Self {
        Source {
            flow,
            wire_len,
            ect: false,
            pattern: Pattern::Bursts { every, n },
            next: start,
            stop: Instant::FAR_FUTURE,
        }
    }

    pub fn ect(mut self) -> Self {
        self.ect = true;
        self
    }

    pub fn until(mut self, stop: Instant) -> Self {
        self.stop = stop;
        self
    }

    fn gap(&mut self) -> Duration {
        match &mut self.pattern {
            Pattern::Cbr { every } | Pattern::Bursts { every, .. } => *every,
            Pattern::Poisson { mean, rng } => {
                let u = ((rng.next_u64() >> 11) as f64 + 1.0) * (1.0 / (1u64 << 53) as f64);
                Duration::from_nanos((-u.ln() * mean.as_nanos() as f64) as u64)
            }
        }
    }

    fn burst(&self) -> u32 {
        match self.pattern {
            Pattern::Bursts { n, .. } => n,
            _ => 1,
        }
    }
}

/// A packet that left the qdisc.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Departure {
    pub at: Instant,
    pub flow: u32,
    pub wire_len: u32,
    pub sojourn: Duration,
    pub ce: bool,
}

/// A packet the qdisc dropped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Drop {
    pub at: Instant,
    pub flow: u32,
    pub reason: DropReason,
}

/// What the bench's packets carry through the qdisc: (flow, sequence number).
pub(crate) type Item = (u32, u64);

pub(crate) struct Bench<Q: Qdisc<Item> + ?Sized = dyn Qdisc<Item>> {
    pub q: Box<Q>,
    rate: Rate,
    sources: Vec<Source>,
    now: Instant,
    busy_until: Instant,
    seq: u64,
    pub offered: u64,
    pub departures: Vec<Departure>,
    pub drops: Vec<Drop>,
    scratch: Vec<(PacketMeta, Item, DropReason)>,
}

impl Bench {
    pub fn new(cfg: &QdiscConfig, limit: QueueLimit, seed: u64, rate_bps: u64, sources: Vec<Source>) -> Self {
        Bench::with(build(cfg, limit, seed), rate_bps, sources)
    }
}

impl<Q: Qdisc<Item> + ?Sized> Bench<Q> {
    pub fn with(q: Box<Q>, rate_bps: u64, sources: Vec<Source>) -> Self {
        Bench {
            q,
            rate: Rate::from_bps(rate_bps),
            sources,
            now: Instant::ZERO,
            busy_until: Instant::ZERO,
            seq: 0,
            offered: 0,
            departures: Vec::new(),
            drops: Vec::new(),
            scratch: Vec::new(),
        }
    }

    fn log_drops(&mut self, at: Instant) {
        for (meta, (flow, _), reason) in self.scratch.drain(..) {
            debug_assert_eq!(meta.flow, flow);
            self.drops.push(Drop { at, flow, reason });
        }
    }

    /// Runs until `end` (events at `end` included).
    pub fn run_until(&mut self, end: Instant) {
        loop {
            let next_arrival =
                self.sources.iter().filter(|s| s.next < s.stop).map(|s| s.next).min().unwrap_or(Instant::FAR_FUTURE);
            let next_send = if self.q.len_packets() > 0 { self.busy_until.max(self.now) } else { Instant::FAR_FUTURE };
            let t = next_arrival.min(next_send);
            if t > end {
                self.now = end;
                return;
            }
            self.now = t;
            for i in 0..self.sources.len() {
                if self.sources[i].next != t || t >= self.sources[i].stop {
                    continue;
                }
                for _ in 0..self.sources[i].burst() {
                    let s = &self.sources[i];
                    let meta = PacketMeta { wire_len: s.wire_len, flow: s.flow, ect: s.ect, ce: false, enqueued: t };
                    self.seq += 1;
                    self.offered += 1;
                    if let Err(((flow, _), reason)) = self.q.enqueue(t, meta, (s.flow, self.seq)) {
                        self.drops.push(Drop { at: t, flow, reason });
                    }
                    self.q.take_dropped(&mut self.scratch);
                    self.log_drops(t);
                }
                let gap = self.sources[i].gap();
                self.sources[i].next = t + gap;
            }
            if self.busy_until <= t && self.q.len_packets() > 0 {
                let out = self.q.dequeue(t, &mut self.scratch);
                self.log_drops(t);
                match out {
                    Some((meta, (flow, _))) => {
                        self.busy_until = t + self.rate.tx_time(meta.wire_len as u64);
                        self.departures.push(Departure {
                            at: t,
                            flow,
                            wire_len: meta.wire_len,
                            sojourn: t.saturating_since(meta.enqueued),
                            ce: meta.ce,
                        });
                    }
                    None => assert_eq!(self.q.len_packets(), 0, "a qdisc with packets returned none"),
                }
            }
        }
    }

    /// Departures of `flow` from `from` on.
    pub fn departed(&self, flow: u32, from: Instant) -> impl Iterator<Item = &Departure> {
        self.departures.iter().filter(move |d| d.flow == flow && d.at >= from)
    }

    /// Mean and maximum sojourn of the departures from `from` on, seconds.
    pub fn sojourn(&self, from: Instant) -> (f64, f64) {
        let s: Vec<f64> = self.departures.iter().filter(|d| d.at >= from).map(|d| d.sojourn.as_secs_f64()).collect();
        let max = s.iter().cloned().fold(0.0, f64::max);
        (s.iter().sum::<f64>() / s.len().max(1) as f64, max)
    }
}

pub(crate) fn ms(n: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(n)
}
