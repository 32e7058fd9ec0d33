//! Queue disciplines: the first stage of a link direction's pipeline (qdisc → serializer → propagation →
//! loss). A qdisc decides on enqueue whether a packet may wait, and on dequeue which packet the serializer
//! takes next, dropping or CE-marking at the head where its algorithm says so (CoDel, RFC 8289, judges a
//! packet by its sojourn time when it leaves).
//!
//! The engine owns the packets; a qdisc holds them as opaque items `T` beside the [`PacketMeta`] it decides
//! on. The engine asks [`Qdisc::dequeue`] only when the serializer is free, so a direction needs one
//! departure event at a time however long its queue is.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use tcplab_units::Instant;

use crate::config::QueueLimit;
use crate::queue::DropReason;

mod codel;
mod fq_codel;
#[cfg(test)]
mod harness;
mod pie;
mod red;

pub use codel::{Codel, CodelConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use pie::{Pie, PieConfig};
pub use red::{Red, RedConfig};

/// What a qdisc may read about a packet, and the one thing it may change (`ce`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketMeta {
    /// Bytes the packet occupies on the wire (IP datagram plus framing): what byte limits and DRR count.
    pub wire_len: u32,
    /// The flow the packet belongs to (FQ-CoDel's classifier, RFC 8290 §4.1.1); the engine's flow id.
    pub flow: u32,
    /// The IP header says ECN-capable transport (ECT(0) or ECT(1), RFC 3168 §5).
    pub ect: bool,
    /// Congestion Experienced: set by a qdisc that marks instead of dropping (only when `ect`).
    pub ce: bool,
    /// When the packet entered the qdisc (set by the qdisc on enqueue; its sojourn time starts here).
    pub enqueued: Instant,
}

/// Counters every qdisc keeps (reported per link direction).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QdiscStats {
    pub enqueued: u64,
    pub dequeued: u64,
    /// Dropped on arrival because the hard limit was reached.
    pub drops_overlimit: u64,
    /// Dropped by the AQM's decision (RED/PIE on enqueue, CoDel on dequeue).
    pub drops_aqm: u64,
    /// CE-marked instead of dropped.
    pub marks: u64,
    pub max_packets: u32,
    pub max_bytes: u64,
    /// Sojourn time of dequeued packets, nanoseconds: sum and maximum (the mean is sum / dequeued).
    pub sojourn_sum_ns: u128,
    pub sojourn_max_ns: u64,
}

/// A queue discipline over items `T`.
pub trait Qdisc<T> {
    /// Offers a packet at `now`. On refusal the item comes back with the reason.
    fn enqueue(&mut self, now: Instant, meta: PacketMeta, item: T) -> Result<(), (T, DropReason)>;
    /// The serializer is free at `now`: the next packet to send, if any. Packets the algorithm drops at the
    /// head on the way are pushed to `dropped` (the engine counts and traces them).
    fn dequeue(&mut self, now: Instant, dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn stats(&self) -> &QdiscStats;
    /// Packets already queued that the last `enqueue` pushed out: FQ-CoDel, when full, accepts the arrival
    /// and drops from the head of its fattest flow (RFC 8290 §4.1; Linux `fq_codel_drop`). The engine calls
    /// this after `enqueue` to count them at the instant they were dropped; what it leaves is handed over by
    /// the next `dequeue` with the head drops.
    fn take_dropped(&mut self, dropped: &mut Vec<(PacketMeta, T, DropReason)>) {
        let _ = dropped;
    }
    /// The probability with which the algorithm drops or marks an arrival at `now` (RED: p_b at its
    /// average queue; PIE: drop_prob, after the periodic updates due by `now`), for series and
    /// explanation; `None` for the qdiscs that have none. Reading it changes no decision.
    fn drop_probability(&mut self, now: Instant) -> Option<f64> {
        let _ = now;
        None
    }
}

/// A link direction's queue discipline, as a scenario names it (`qdisc = { kind = "codel", target = "5ms" }`);
/// the hard limit is the direction's `queue`. Each variant's parameters, defaults and their sources are in
/// its config struct; docs/qdisc.md has them in one table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscConfig {
    /// Drop-tail FIFO (Linux pfifo/bfifo): today's queue.
    /// (A struct variant: serde lets a tagged unit variant ignore extra keys.)
    Fifo {},
    /// Random Early Detection (Floyd & Jacobson 1993), gentle variant; parameters as tc-red(8).
    Red(RedConfig),
    /// Controlled Delay (RFC 8289); parameters as Linux sch_codel.
    Codel(CodelConfig),
    /// Flow-queue CoDel (RFC 8290); parameters as Linux sch_fq_codel.
    FqCodel(FqCodelConfig),
    /// Proportional Integral controller Enhanced (RFC 8033); parameters as Linux sch_pie.
    Pie(PieConfig),
}

impl Default for QdiscConfig {
    fn default() -> Self {
        QdiscConfig::Fifo {}
    }
}

impl QdiscConfig {
    /// The scenario's word for the variant (`kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            QdiscConfig::Fifo {} => "fifo",
            QdiscConfig::Red(_) => "red",
            QdiscConfig::Codel(_) => "codel",
            QdiscConfig::FqCodel(_) => "fq_codel",
            QdiscConfig::Pie(_) => "pie",
        }
    }

    /// Today's drop-tail queue (what a file without `qdisc` gets; a writer may skip the key then).
    pub fn is_fifo(&self) -> bool {
        matches!(self, QdiscConfig::Fifo {})
    }

    /// The limit Linux gives the qdisc when `tc` is not told one (pfifo: txqueuelen 1000; sch_codel 1000
    /// packets; sch_fq_codel 10240 packets; sch_pie 1000 packets; tc-red has none and requires `limit`).
    /// The lab takes the hard limit from the direction's `queue`; this says what to set for Linux's.
    pub fn linux_default_limit(&self) -> Option<QueueLimit> {
        match self {
            QdiscConfig::Fifo {} | QdiscConfig::Codel(_) | QdiscConfig::Pie(_) => Some(QueueLimit::Packets(1000)),
            QdiscConfig::FqCodel(_) => Some(QueueLimit::Packets(10240)),
            QdiscConfig::Red(_) => None,
        }
    }

    /// Checks the parameters against each other and the hard `limit`; the error names the parameter (the
    /// key under `qdisc`) and says what is accepted.
    pub fn validate(&self, limit: QueueLimit) -> Result<(), (&'static str, String)> {
        match self {
            QdiscConfig::Fifo {} => Ok(()),
            QdiscConfig::Red(c) => c.validate(limit),
            QdiscConfig::Codel(c) => c.validate(),
            QdiscConfig::FqCodel(c) => c.validate(),
            QdiscConfig::Pie(c) => c.validate(),
        }
    }
}

/// Builds the qdisc `cfg` names, with `limit` as its hard limit; `seed` feeds the algorithms that draw
/// random numbers (RED's and PIE's drop decisions, FQ-CoDel's hash perturbation). `cfg` is expected to have
/// passed [`QdiscConfig::validate`].
pub fn build<T: 'static>(cfg: &QdiscConfig, limit: QueueLimit, seed: u64) -> Box<dyn Qdisc<T>> {
    match cfg {
        QdiscConfig::Fifo {} => Box::new(Fifo::new(limit)),
        QdiscConfig::Red(c) => Box::new(Red::new(c, limit, seed)),
        QdiscConfig::Codel(c) => Box::new(Codel::new(c, limit)),
        QdiscConfig::FqCodel(c) => Box::new(FqCodel::new(c, limit, seed)),
        QdiscConfig::Pie(c) => Box::new(Pie::new(c, limit, seed)),
    }
}

/// Whether a packet of `wire_len` bytes finds a queue of `packets` and `bytes` full. Packet limits count
/// the packets waiting, as Linux's `qdisc_qlen(sch) >= sch->limit`; byte limits refuse what would exceed
/// them, as bfifo.
pub(crate) fn over_limit(limit: QueueLimit, packets: usize, bytes: u64, wire_len: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => packets as u64 >= n as u64,
        QueueLimit::Bytes(b) => bytes + wire_len as u64 > b,
    }
}

/// Sets CE on an ECN-capable packet (RFC 3168 §5: a router marks only ECT packets, and CE stays CE);
/// false when the packet is not ECN-capable and must be dropped instead (Linux `INET_ECN_set_ce`).
pub(crate) fn mark_ce(meta: &mut PacketMeta) -> bool {
    if meta.ect || meta.ce {
        meta.ce = true;
        true
    } else {
        false
    }
}

/// Records a packet entering a qdisc (its sojourn starts now) in the counters.
pub(crate) fn note_arrival(stats: &mut QdiscStats, meta: &mut PacketMeta, now: Instant, packets: usize, bytes: u64) {
    meta.enqueued = now;
    stats.enqueued += 1;
    stats.max_packets = stats.max_packets.max(packets as u32);
    stats.max_bytes = stats.max_bytes.max(bytes);
}

/// Drop-tail FIFO limited in packets (pfifo) or bytes (bfifo).
#[derive(Debug)]
pub struct Fifo<T> {
    limit: QueueLimit,
    queue: VecDeque<(PacketMeta, T)>,
    bytes: u64,
    stats: QdiscStats,
}

impl<T> Fifo<T> {
    pub fn new(limit: QueueLimit) -> Self {
        Fifo { limit, queue: VecDeque::new(), bytes: 0, stats: QdiscStats::default() }
    }
}

/// Records a packet leaving a qdisc at `now` in its sojourn statistics.
pub(crate) fn note_departure(stats: &mut QdiscStats, meta: &PacketMeta, now: Instant) {
    let sojourn = now.saturating_since(meta.enqueued).as_nanos();
    stats.dequeued += 1;
    stats.sojourn_sum_ns += sojourn as u128;
    stats.sojourn_max_ns = stats.sojourn_max_ns.max(sojourn);
}

impl<T> Qdisc<T> for Fifo<T> {
    fn enqueue(&mut self, now: Instant, mut meta: PacketMeta, item: T) -> Result<(), (T, DropReason)> {
        let full = over_limit(self.limit, self.queue.len(), self.bytes, meta.wire_len);
        if full {
            self.stats.drops_overlimit += 1;
            return Err((item, DropReason::QueueFull));
        }
        self.bytes += meta.wire_len as u64;
        note_arrival(&mut self.stats, &mut meta, now, self.queue.len() + 1, self.bytes);
        self.queue.push_back((meta, item));
        Ok(())
    }

    fn dequeue(&mut self, now: Instant, _dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)> {
        let (meta, item) = self.queue.pop_front()?;
        self.bytes -= meta.wire_len as u64;
        note_departure(&mut self.stats, &meta, now);
        Some((meta, item))
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_units::Duration;

    fn meta(wire_len: u32) -> PacketMeta {
        PacketMeta { wire_len, flow: 0, ect: false, ce: false, enqueued: Instant::ZERO }
    }

    #[test]
    fn fifo_drops_at_the_tail_and_measures_sojourn() {
        let mut q: Box<dyn Qdisc<u32>> = build(&QdiscConfig::Fifo {}, QueueLimit::Packets(2), 1);
        let t0 = Instant::ZERO;
        assert!(q.enqueue(t0, meta(1538), 1).is_ok());
        assert!(q.enqueue(t0, meta(1538), 2).is_ok());
        assert_eq!(q.enqueue(t0, meta(1538), 3).unwrap_err(), (3, DropReason::QueueFull));
        let mut dropped = Vec::new();
        let t1 = t0 + Duration::from_millis(3);
        assert_eq!(q.dequeue(t1, &mut dropped).map(|(_, i)| i), Some(1));
        assert_eq!(q.dequeue(t1 + Duration::from_millis(1), &mut dropped).map(|(_, i)| i), Some(2));
        assert!(q.dequeue(t1, &mut dropped).is_none() && dropped.is_empty());
        let s = q.stats();
        assert_eq!((s.enqueued, s.dequeued, s.drops_overlimit, s.max_packets), (2, 2, 1, 2));
        assert_eq!((s.sojourn_sum_ns, s.sojourn_max_ns), (7_000_000, 4_000_000));
    }

    /// Parses `qdisc = { ... }` as a scenario writes it.
    fn parse(text: &str) -> Result<QdiscConfig, String> {
        #[derive(Deserialize)]
        struct Dir {
            qdisc: QdiscConfig,
        }
        toml::from_str::<Dir>(&format!("qdisc = {text}")).map(|d| d.qdisc).map_err(|e| e.to_string())
    }

    #[test]
    fn configs_parse_with_units_and_defaults_from_their_sources() {
        assert_eq!(parse(r#"{ kind = "fifo" }"#).unwrap(), QdiscConfig::Fifo {});
        assert_eq!(parse(r#"{ kind = "codel" }"#).unwrap(), QdiscConfig::Codel(CodelConfig::default()));
        let c = parse(r#"{ kind = "codel", target = "10ms", interval = "200ms", ecn = true, ce_threshold = "1ms" }"#);
        assert_eq!(
            c.unwrap(),
            QdiscConfig::Codel(CodelConfig {
                target: Duration::from_millis(10),
                interval: Duration::from_millis(200),
                ecn: true,
                ce_threshold: Some(Duration::from_millis(1)),
            })
        );
        let fq = parse(r#"{ kind = "fq_codel", quantum = "300B", flows = 64 }"#).unwrap();
        let QdiscConfig::FqCodel(fq) = fq else { panic!("{fq:?}") };
        assert_eq!((fq.quantum.bytes(), fq.flows, fq.ecn, fq.drop_batch), (300, 64, true, 64));
        let pie = parse(r#"{ kind = "pie", target = "20ms", alpha = 0.25 }"#).unwrap();
        assert_eq!(
            pie,
            QdiscConfig::Pie(PieConfig { target: Duration::from_millis(20), alpha: 0.25, ..PieConfig::default() })
        );
        let red = parse(r#"{ kind = "red", min = "30KiB", max = "90KiB", probability = 0.1, bandwidth = "100mbit" }"#);
        let QdiscConfig::Red(red) = red.unwrap() else { panic!() };
        assert_eq!((red.min.unwrap().bytes(), red.max.unwrap().bytes(), red.gentle), (30 * 1024, 90 * 1024, true));
        // Round trip: what a result echoes parses back to the same.
        for cfg in [QdiscConfig::Red(red), QdiscConfig::FqCodel(fq), QdiscConfig::Codel(CodelConfig::default())] {
            #[derive(Serialize)]
            struct Dir<'a> {
                qdisc: &'a QdiscConfig,
            }
            let text = toml::to_string(&Dir { qdisc: &cfg }).unwrap();
            let back: toml::Table = toml::from_str(&text).unwrap();
            let again: QdiscConfig = back["qdisc"].clone().try_into().unwrap();
            assert_eq!(again, cfg, "{text}");
        }
    }

    #[test]
    fn bad_configs_are_refused_naming_the_key() {
        let e = parse(r#"{ kind = "codel", targte = "5ms" }"#).unwrap_err();
        assert!(e.contains("targte") && e.contains("target"), "{e}");
        let e = parse(r#"{ kind = "fifo", target = "5ms" }"#).unwrap_err();
        assert!(e.contains("target"), "{e}");
        let e = parse(r#"{ kind = "sfq" }"#).unwrap_err();
        assert!(e.contains("fq_codel") && e.contains("pie"), "{e}");
        let e = parse(r#"{ kind = "codel", target = "5" }"#).unwrap_err();
        assert!(e.contains("unit"), "{e}");
        let limit = QueueLimit::Packets(1000);
        let zero = QdiscConfig::Codel(CodelConfig { target: Duration::ZERO, ..CodelConfig::default() });
        assert_eq!(zero.validate(limit).unwrap_err().0, "target");
        let flows = QdiscConfig::FqCodel(FqCodelConfig { flows: 0, ..FqCodelConfig::default() });
        assert!(flows.validate(limit).unwrap_err().1.contains("accepted 1 to 65536"));
        let alpha = QdiscConfig::Pie(PieConfig { alpha: 3.0, ..PieConfig::default() });
        assert_eq!(alpha.validate(limit).unwrap_err().0, "alpha");
        for ok in [QdiscConfig::Fifo {}, QdiscConfig::Red(RedConfig::default()), QdiscConfig::Pie(PieConfig::default())]
        {
            assert_eq!(ok.validate(limit), Ok(()), "{ok:?}");
        }
    }

    /// Every qdisc under the same Poisson overload: the same seed gives the same packet-by-packet
    /// history; every packet offered is accounted for (sent, dropped or still queued), and the counters
    /// agree with what the bench saw.
    #[test]
    fn every_qdisc_is_deterministic_and_loses_no_packet() {
        use harness::{ms, Bench, Source};
        let all = [
            QdiscConfig::Fifo {},
            QdiscConfig::Red(RedConfig { bandwidth: tcplab_units::Rate::from_bps(10_000_000), ..RedConfig::default() }),
            QdiscConfig::Codel(CodelConfig::default()),
            QdiscConfig::FqCodel(FqCodelConfig::default()),
            QdiscConfig::Pie(PieConfig::default()),
        ];
        for cfg in all {
            let run = |seed: u64| {
                let sources = (0..4).map(|f| Source::poisson(f, 538 + 300 * f, 3_500_000, seed + f as u64)).collect();
                let mut b = Bench::new(&cfg, QueueLimit::Packets(200), seed, 10_000_000, sources);
                b.run_until(ms(3_000));
                let history: Vec<(u64, u32, bool)> =
                    b.departures.iter().map(|d| (d.at.as_nanos(), d.flow, d.ce)).collect();
                let drops: Vec<(u64, u32)> = b.drops.iter().map(|d| (d.at.as_nanos(), d.flow)).collect();
                let s = *b.q.stats();
                assert_eq!(b.offered, (b.departures.len() + b.drops.len() + b.q.len_packets()) as u64, "{cfg:?}");
                assert_eq!(s.dequeued, b.departures.len() as u64);
                assert_eq!(s.drops_aqm + s.drops_overlimit, b.drops.len() as u64, "{cfg:?}");
                (history, drops)
            };
            let a = run(11);
            assert_eq!(a, run(11), "{cfg:?}");
            assert!(!a.1.is_empty() || cfg.is_fifo(), "{cfg:?} dropped nothing at 140% load");
            assert_ne!(a, run(12), "{cfg:?}");
        }
    }

    #[test]
    fn byte_limited_fifo_counts_wire_bytes() {
        let mut q = Fifo::new(QueueLimit::Bytes(3000));
        assert!(q.enqueue(Instant::ZERO, meta(1538), ()).is_ok());
        assert!(q.enqueue(Instant::ZERO, meta(1538), ()).is_err());
        assert!(q.enqueue(Instant::ZERO, meta(1400), ()).is_ok());
        assert_eq!(q.len_bytes(), 2938);
    }
}
