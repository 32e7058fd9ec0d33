//! FQ-CoDel, the FlowQueue-CoDel packet scheduler and AQM (RFC 8290): packets are hashed by flow into
//! `flows` queues, each with its own CoDel state; a deficit round robin with byte `quantum` serves them,
//! and a queue that was empty (a "new" flow: sparse traffic, a connection's first packets) is served
//! before the queues that stayed busy ("old" flows), so a sparse flow beside bulk traffic barely queues.
//!
//! Reading: RFC 8290 §4 (the algorithm: §4.1 enqueue and the overlimit drop, §4.2 dequeue and the two
//! lists), §5.2 (parameters); Linux `net/sched/sch_fq_codel.c` (defaults, the fattest-flow batch drop; read,
//! not copied).
//!
//! Flow → bucket: RFC 8290 §4.1.1 hashes the 5-tuple with a random perturbation so that flows collide by
//! chance, not by design. Here the engine's flow id (`PacketMeta::flow`) is mixed with a 64-bit
//! perturbation drawn from the qdisc's seed (SplitMix64's finalizer over `flow ^ perturbation`), and the
//! upper 32 bits are scaled onto `flows` buckets (`(h · flows) >> 32`, Linux's `reciprocal_scale`). So a
//! given seed maps flows to buckets the same way every run, two flows share a bucket with probability
//! 1/`flows`, and another seed moves the collisions.

use std::collections::VecDeque;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use tcplab_units::{ByteSize, Duration, Instant};

use super::codel::{validate_times, CodelParams, CodelSource, CodelVars};
use super::{note_departure, PacketMeta, Qdisc, QdiscStats};
use crate::config::QueueLimit;
use crate::queue::DropReason;

/// FQ-CoDel's parameters (RFC 8290 §5.2; Linux `fq_codel_init`, tc-fq_codel(8)). The packet (or byte) limit
/// is the link direction's `queue`; Linux's default is 10240 packets (`queue = "10240pkt"`), where the
/// lab's default queue is 1000 packets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Number of flow queues (buckets) packets are hashed into. Default 1024 (RFC 8290 §5.2.3; Linux).
    pub flows: u32,
    /// Bytes a flow may send per round of the deficit round robin; counted in wire bytes as the link
    /// counts them (`PacketMeta::wire_len`: with Ethernet framing a full frame is 1538 B where Linux counts
    /// 1514). Default 1514B (RFC 8290 §5.2.2: one MTU plus the Ethernet header; Linux `psched_mtu`).
    pub quantum: ByteSize,
    /// CoDel's target for every flow. Default 5ms (RFC 8290 §5.2.1, RFC 8289 §4.4; Linux).
    pub target: Duration,
    /// CoDel's interval for every flow. Default 100ms (RFC 8290 §5.2.1, RFC 8289 §4.3; Linux).
    pub interval: Duration,
    /// CE-mark ECN-capable packets instead of dropping them. Default true (RFC 8290 §5.2.7; Linux
    /// `q->cparams.ecn = true`).
    pub ecn: bool,
    /// CE-mark ECN-capable packets whose sojourn exceeds this, whatever CoDel says (tc-fq_codel
    /// `ce_threshold`). Default unset: off (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce_threshold: Option<Duration>,
    /// When the qdisc is over its limit, at most this many packets are dropped in one go from the head of
    /// the fattest flow (until half its bytes are gone). Default 64 (Linux `drop_batch_size`, tc-fq_codel
    /// `drop_batch`; RFC 8290 §4.1 drops from the fattest flow).
    pub drop_batch: u32,
    /// Bytes the qdisc may hold over all flows before it drops from the fattest flow, as the packet limit
    /// does. Counted in wire bytes (Linux counts the buffers' `truesize`, more than the packet). Default
    /// 32MiB (Linux `memory_limit`, tc-fq_codel).
    pub memory_limit: ByteSize,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            flows: 1024,
            quantum: ByteSize::new(1514),
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            ce_threshold: None,
            drop_batch: 64,
            memory_limit: ByteSize::new(32 << 20),
        }
    }
}

impl FqCodelConfig {
    pub(crate) fn validate(&self) -> Result<(), (&'static str, String)> {
        validate_times(self.target, self.interval, self.ce_threshold)?;
        if self.flows == 0 || self.flows > 65536 {
            return Err(("flows", format!("{}: accepted 1 to 65536 (Linux's range)", self.flows)));
        }
        if self.quantum.bytes() == 0 || self.quantum.bytes() > (1 << 20) {
            return Err(("quantum", format!("{}: accepted 1B to 1MiB (Linux's range)", self.quantum)));
        }
        if self.drop_batch == 0 || self.drop_batch > 1_000_000 {
            return Err(("drop_batch", format!("{}: accepted 1 to 1000000", self.drop_batch)));
        }
        if self.memory_limit.bytes() == 0 {
            return Err(("memory_limit", "0B: accepted a size of at least 1B, such as \"32MiB\"".into()));
        }
        Ok(())
    }
}

/// Which list a flow is on (RFC 8290 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct Flow<T> {
    packets: VecDeque<(PacketMeta, T)>,
    bytes: u64,
    /// DRR credit in bytes; the flow sends while it is positive.
    deficit: i64,
    codel: CodelVars,
    list: List,
}

/// One flow's queue as CoDel sees it, keeping the qdisc's totals in step.
struct FlowSource<'a, T> {
    packets: &'a mut VecDeque<(PacketMeta, T)>,
    flow_bytes: &'a mut u64,
    len: &'a mut usize,
    bytes: &'a mut u64,
}

impl<T> CodelSource<T> for FlowSource<'_, T> {
    fn pop(&mut self) -> Option<(PacketMeta, T)> {
        let head = self.packets.pop_front()?;
        let wire = head.0.wire_len as u64;
        *self.flow_bytes -= wire;
        *self.bytes -= wire;
        *self.len -= 1;
        Some(head)
    }
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

/// FQ-CoDel (Linux sch_fq_codel).
#[derive(Debug)]
pub struct FqCodel<T> {
    params: CodelParams,
    quantum: i64,
    drop_batch: u32,
    memory_limit: u64,
    limit: QueueLimit,
    perturbation: u64,
    flows: Vec<Flow<T>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    len: usize,
    bytes: u64,
    maxpacket: u64,
    /// Queued packets pushed out by an arrival, until the engine takes them.
    pending: Vec<(PacketMeta, T, DropReason)>,
    /// Flows that entered the new list (Linux `new_flow_count`).
    new_flow_count: u64,
    stats: QdiscStats,
}

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijective 64-bit mixer.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<T> FqCodel<T> {
    pub fn new(cfg: &FqCodelConfig, limit: QueueLimit, seed: u64) -> Self {
        let flows = cfg.flows.max(1);
        FqCodel {
            params: CodelParams {
                target: cfg.target,
                interval: cfg.interval,
                ecn: cfg.ecn,
                ce_threshold: cfg.ce_threshold,
            },
            quantum: cfg.quantum.bytes().max(1) as i64,
            drop_batch: cfg.drop_batch.max(1),
            memory_limit: cfg.memory_limit.bytes(),
            limit,
            perturbation: Xoshiro256PlusPlus::seed_from_u64(seed).next_u64(),
            flows: (0..flows)
                .map(|_| Flow {
                    packets: VecDeque::new(),
                    bytes: 0,
                    deficit: 0,
                    codel: CodelVars::default(),
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            len: 0,
            bytes: 0,
            maxpacket: 0,
            pending: Vec::new(),
            new_flow_count: 0,
            stats: QdiscStats::default(),
        }
    }

    /// The bucket a flow id is hashed to (see the module docs).
    pub fn bucket(&self, flow: u32) -> usize {
        let h = mix64(flow as u64 ^ self.perturbation) >> 32;
        ((h * self.flows.len() as u64) >> 32) as usize
    }

    /// How many times a flow entered the new list.
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }

    fn over(&self) -> bool {
        let packets_over = match self.limit {
            QueueLimit::Packets(n) => self.len as u64 > n as u64,
            QueueLimit::Bytes(b) => self.bytes > b,
        };
        packets_over || self.bytes > self.memory_limit
    }

    /// RFC 8290 §4.1 / Linux `fq_codel_drop`: drops from the head of the flow with the most bytes (the
    /// lowest index among equals) until half its bytes are gone or `drop_batch` packets, at least one.
    /// Returns the bucket it dropped from.
    fn drop_from_fattest(&mut self) -> usize {
        let mut fattest = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.bytes > self.flows[fattest].bytes {
                fattest = i;
            }
        }
        let flow = &mut self.flows[fattest];
        let threshold = flow.bytes / 2;
        let mut freed = 0u64;
        let mut n = 0;
        while let Some((meta, item)) = flow.packets.pop_front() {
            let wire = meta.wire_len as u64;
            flow.bytes -= wire;
            self.bytes -= wire;
            self.len -= 1;
            freed += wire;
            n += 1;
            self.stats.drops_overlimit += 1;
            self.pending.push((meta, item, DropReason::QueueFull));
            if n >= self.drop_batch || freed >= threshold {
                break;
            }
        }
        fattest
    }
}

impl<T> Qdisc<T> for FqCodel<T> {
    fn enqueue(&mut self, now: Instant, mut meta: PacketMeta, item: T) -> Result<(), (T, DropReason)> {
        let idx = self.bucket(meta.flow);
        meta.enqueued = now;
        let wire = meta.wire_len as u64;
        self.maxpacket = self.maxpacket.max(wire);
        let flow = &mut self.flows[idx];
        flow.packets.push_back((meta, item));
        flow.bytes += wire;
        if flow.list == List::None {
            // RFC 8290 §4.1: a flow with no queue joins the new list with a full quantum.
            flow.list = List::New;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        self.len += 1;
        self.bytes += wire;
        if self.over() {
            let from = self.drop_from_fattest();
            // The arrival itself went if its flow was emptied: it was that flow's last packet, and the
            // last one dropped. It comes back to the engine as a refusal.
            if from == idx && self.flows[idx].packets.is_empty() {
                if let Some((_, item, reason)) = self.pending.pop() {
                    return Err((item, reason));
                }
            }
        }
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.len as u32);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Ok(())
    }

    fn dequeue(&mut self, now: Instant, dropped: &mut Vec<(PacketMeta, T, DropReason)>) -> Option<(PacketMeta, T)> {
        dropped.append(&mut self.pending);
        loop {
            // RFC 8290 §4.2: new flows first, then old ones.
            let (from_new, idx) = match self.new_flows.front() {
                Some(&i) => (true, i as usize),
                None => (false, *self.old_flows.front()? as usize),
            };
            let list = if from_new { &mut self.new_flows } else { &mut self.old_flows };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                // Its quantum is spent: a new round's credit, and to the back of the old list.
                flow.deficit += self.quantum;
                list.pop_front();
                flow.list = List::Old;
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let Flow { packets, bytes: flow_bytes, codel, .. } = flow;
            let mut source = FlowSource { packets, flow_bytes, len: &mut self.len, bytes: &mut self.bytes };
            let Some(out) = codel.dequeue(&self.params, &mut source, self.maxpacket, now, dropped, &mut self.stats)
            else {
                // Empty (or emptied by CoDel). A new flow goes to the old list first, so that a flow
                // cannot keep its priority by sending one packet per round (RFC 8290 §4.2); an old one
                // leaves the lists.
                list.pop_front();
                if from_new && !self.old_flows.is_empty() {
                    flow.list = List::Old;
                    self.old_flows.push_back(idx as u32);
                } else {
                    flow.list = List::None;
                }
                continue;
            };
            flow.deficit -= out.0.wire_len as i64;
            note_departure(&mut self.stats, &out.0, now);
            return Some(out);
        }
    }

    fn len_packets(&self) -> usize {
        self.len
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn take_dropped(&mut self, dropped: &mut Vec<(PacketMeta, T, DropReason)>) {
        dropped.append(&mut self.pending);
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{ms, Bench, Item, Source};
    use super::super::{CodelConfig, QdiscConfig};
    use super::*;

    fn fq(cfg: FqCodelConfig, limit: QueueLimit, seed: u64) -> Box<FqCodel<Item>> {
        Box::new(FqCodel::new(&cfg, limit, seed))
    }

    /// The bucket map is a function of the seed: the same seed maps the same way, flows spread over all
    /// buckets, and another seed moves them.
    #[test]
    fn flows_hash_to_buckets_deterministically_per_seed() {
        let a: FqCodel<()> = FqCodel::new(&FqCodelConfig::default(), QueueLimit::Packets(100), 7);
        let b: FqCodel<()> = FqCodel::new(&FqCodelConfig::default(), QueueLimit::Packets(100), 7);
        let c: FqCodel<()> = FqCodel::new(&FqCodelConfig::default(), QueueLimit::Packets(100), 8);
        let map = |q: &FqCodel<()>| (0..10_000u32).map(|f| q.bucket(f)).collect::<Vec<_>>();
        assert_eq!(map(&a), map(&b));
        assert_ne!(map(&a), map(&c));
        // 10,000 flows into 1024 buckets: each bucket gets 9.8 on average; all are used.
        let mut per = vec![0u32; 1024];
        map(&a).into_iter().for_each(|i| per[i] += 1);
        assert!(per.iter().all(|&n| n > 0 && n < 30), "{:?}", per.iter().max());
    }

    /// RFC 8290 §4.2 / §1.3: a sparse flow (a 100-byte packet every 10 ms) beside a flow saturating the
    /// link finds its queue empty, joins the new list and is served next: it waits at most for the packet
    /// on the wire (1.23 ms at 10 Mbit/s). Under CoDel alone it waits in the bulk flow's standing queue.
    #[test]
    fn a_sparse_flow_beside_a_saturating_one_sees_almost_no_queue() {
        let sources = || {
            vec![
                Source::cbr(1, 1538, 12_000_000, Instant::ZERO),
                Source::every(2, 100, Duration::from_millis(10), ms(3)),
            ]
        };
        let q = fq(FqCodelConfig::default(), QueueLimit::Packets(10240), 1);
        assert_ne!(q.bucket(1), q.bucket(2));
        let mut b = Bench::with(q, 10_000_000, sources());
        b.run_until(ms(10_000));
        let sparse: Vec<f64> = b.departed(2, Instant::ZERO).map(|d| d.sojourn.as_secs_f64()).collect();
        assert_eq!(sparse.len(), 1000);
        let worst = sparse.iter().cloned().fold(0.0, f64::max);
        assert!(worst <= 1538.0 * 8.0 / 10e6, "sparse flow waited up to {worst} s");
        let bulk: Vec<f64> = b.departed(1, ms(2_000)).map(|d| d.sojourn.as_secs_f64()).collect();
        let bulk_mean = bulk.iter().sum::<f64>() / bulk.len() as f64;
        assert!(bulk_mean > 10.0 * worst, "bulk mean {bulk_mean}");
        assert!(b.drops.iter().all(|d| d.flow == 1), "only the bulk flow is dropped");

        let mut c = Bench::new(
            &QdiscConfig::Codel(CodelConfig::default()),
            QueueLimit::Packets(10240),
            1,
            10_000_000,
            sources(),
        );
        c.run_until(ms(10_000));
        let shared: f64 = c.departed(2, ms(2_000)).map(|d| d.sojourn.as_secs_f64()).sum::<f64>() / 800.0;
        assert!(shared > 10.0 * worst, "under CoDel the sparse flow waits {shared} s on average");
    }

    /// Deficit round robin (Shreedhar & Varghese 1996; RFC 8290 §4.2): two flows that stay backlogged get
    /// equal bytes whatever their packet sizes. With Linux's variant (a flow sends while its deficit is
    /// positive, then gets a quantum Q and goes to the back), each flow's bytes sent are its credit minus
    /// a deficit in (−M, Q] for packets of at most M bytes, and the credits differ by at most one Q, so
    /// the two flows' byte counts never drift apart by Q + 2M or more over any stretch.
    #[test]
    fn drr_gives_two_saturating_flows_equal_bytes() {
        let sources =
            vec![Source::cbr(1, 1538, 12_000_000, Instant::ZERO), Source::cbr(2, 538, 12_000_000, Instant::ZERO)];
        let q = fq(FqCodelConfig::default(), QueueLimit::Packets(10240), 1);
        assert_ne!(q.bucket(1), q.bucket(2));
        let mut b = Bench::with(q, 10_000_000, sources);
        b.run_until(ms(20_000));
        let (mut a, mut c, mut lo, mut hi) = (0i64, 0i64, i64::MAX, i64::MIN);
        let (mut na, mut nc) = (0u32, 0u32);
        for d in b.departures.iter().filter(|d| d.at >= ms(1_000)) {
            if d.flow == 1 {
                a += d.wire_len as i64;
                na += 1;
            } else {
                c += d.wire_len as i64;
                nc += 1;
            }
            lo = lo.min(a - c);
            hi = hi.max(a - c);
        }
        assert!(hi - lo < 1514 + 2 * 1538, "byte difference ranged over {lo}..{hi}");
        // Equal bytes means about 2.86 small packets for every large one.
        let ratio = nc as f64 / na as f64;
        assert!((ratio - 1538.0 / 538.0).abs() < 0.01, "{ratio}");
    }

    /// RFC 8290 §4.1 / Linux `fq_codel_drop`: over the limit, the arrival is accepted and the fattest
    /// flow loses packets from its head until half its bytes are gone (at most `drop_batch`); a thin flow
    /// loses nothing.
    #[test]
    fn overlimit_drops_come_from_the_head_of_the_fattest_flow() {
        for (batch, want) in [(64, 8), (3, 3)] {
            let cfg = FqCodelConfig { drop_batch: batch, ..FqCodelConfig::default() };
            let mut q = FqCodel::<u64>::new(&cfg, QueueLimit::Packets(20), 1);
            assert_ne!(q.bucket(1), q.bucket(2));
            let meta = |flow| PacketMeta { wire_len: 1538, flow, ect: false, ce: false, enqueued: Instant::ZERO };
            for i in 0..15 {
                q.enqueue(Instant::ZERO, meta(1), i).unwrap();
            }
            for i in 100..105 {
                q.enqueue(Instant::ZERO, meta(2), i).unwrap();
            }
            assert!(q.enqueue(Instant::ZERO, meta(2), 105).is_ok());
            let mut dropped = Vec::new();
            q.take_dropped(&mut dropped);
            // 15 packets: half is 7.5 packets' bytes, reached by the 8th.
            let items: Vec<u64> = dropped.iter().map(|d| d.1).collect();
            assert_eq!(items, (0..want).collect::<Vec<u64>>(), "drop_batch {batch}");
            assert!(dropped.iter().all(|d| d.0.flow == 1 && d.2 == DropReason::QueueFull));
            assert_eq!(q.len_packets(), 21 - want as usize);
            assert_eq!(q.stats().drops_overlimit, want);
        }
        // An arrival that is its fattest flow's only packet is the one dropped, and comes back refused.
        let mut q = FqCodel::<u64>::new(&FqCodelConfig::default(), QueueLimit::Packets(1), 1);
        let meta = |flow, wire_len| PacketMeta { wire_len, flow, ect: false, ce: false, enqueued: Instant::ZERO };
        q.enqueue(Instant::ZERO, meta(1, 1538), 1).unwrap();
        assert_eq!(q.enqueue(Instant::ZERO, meta(2, 3000), 2).unwrap_err(), (2, DropReason::QueueFull));
        let mut dropped = Vec::new();
        q.take_dropped(&mut dropped);
        assert!(dropped.is_empty());
        assert_eq!((q.len_packets(), q.stats().enqueued), (1, 1));
    }

    /// Drops the engine did not collect after `enqueue` come with the next `dequeue`.
    #[test]
    fn uncollected_overlimit_drops_come_with_the_next_dequeue() {
        let mut q = FqCodel::<u64>::new(&FqCodelConfig::default(), QueueLimit::Packets(2), 1);
        let meta = PacketMeta { wire_len: 1538, flow: 1, ect: false, ce: false, enqueued: Instant::ZERO };
        for i in 0..3 {
            q.enqueue(Instant::ZERO, meta, i).unwrap();
        }
        // Three packets over a limit of two: half of the flow's bytes is one and a half packets, so two go.
        let mut dropped = Vec::new();
        assert_eq!(q.dequeue(Instant::ZERO, &mut dropped).map(|p| p.1), Some(2));
        assert_eq!(dropped.iter().map(|d| d.1).collect::<Vec<_>>(), vec![0, 1]);
    }

    /// Each flow has its own CoDel: the bulk flow is held near its controlled state while the per-flow
    /// drops never touch the other; with `ecn` (on by default) ECN-capable packets are marked instead.
    #[test]
    fn per_flow_codel_marks_ect_flows_and_drops_the_others() {
        let sources =
            vec![Source::cbr(1, 1538, 8_000_000, Instant::ZERO).ect(), Source::cbr(2, 1538, 8_000_000, Instant::ZERO)];
        let q = fq(FqCodelConfig::default(), QueueLimit::Packets(10240), 3);
        assert_ne!(q.bucket(1), q.bucket(2));
        let mut b = Bench::with(q, 10_000_000, sources);
        b.run_until(ms(5_000));
        let s = *b.q.stats();
        assert!(s.marks > 0 && s.drops_aqm > 0);
        assert!(b.drops.iter().all(|d| d.flow == 2 && d.reason == DropReason::Aqm));
        assert!(b.departures.iter().all(|d| !d.ce || d.flow == 1));
        assert_eq!(s.marks as usize, b.departures.iter().filter(|d| d.ce).count());
    }
}
