use std::collections::VecDeque;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use tcplab_units::{Duration, Instant, Rate};

use crate::config::{Framing, IdleCredit, LinkConfig, LossFilter, LossModel, QueueLimit};

/// Why a link did not deliver a frame. Every drop is counted under its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The drop-tail queue was full when the frame arrived.
    QueueFull,
    /// The loss model (random, burst or scripted) removed the frame on the wire.
    RandomLoss,
    /// The queue discipline's AQM dropped it: RED or PIE on arrival, CoDel/FQ-CoDel at the head by sojourn time.
    Aqm,
}

/// What happens to a frame handed to a [`LinkDirection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The frame arrives at the far end at this instant.
    Deliver(Instant),
    Drop(DropReason),
}

/// Counters of one link direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    pub frames_in: u64,
    pub frames_delivered: u64,
    pub bytes_delivered: u64,
    pub drops_queue_full: u64,
    pub drops_random_loss: u64,
    /// Highest number of frames waiting in the queue (not counting the one on the wire).
    pub max_queue_frames: u32,
}

/// One direction of a path: drop-tail queue → serializer at `rate` → propagation `delay`, with loss.
///
/// Frames must be offered in non-decreasing time order (the single sender of a direction guarantees it).
#[derive(Debug)]
pub struct LinkDirection {
    rate: Rate,
    delay: Duration,
    limit: QueueLimit,
    framing: Framing,
    /// Any loss model at all: the no-loss path tests this one flag.
    lossy: bool,
    /// The model sees data-carrying frames only.
    data_only: bool,
    loss: Loss,
    rng: Xoshiro256PlusPlus,
    /// When the serializer finishes the last accepted frame.
    busy_until: Instant,
    /// The last frame's wire bytes and serialization time: a direction mostly carries frames of one or two
    /// sizes back to back, and this spares a 64-bit division per frame.
    last_tx: (u32, Duration),
    /// The same for the last datagram `send` took, by its IP length: its wire bytes and serialization time
    /// (the framing's rule is not applied again either).
    last_frame: (u32, u32, Duration),
    /// Start-of-transmission instants and wire sizes of frames still waiting at the last call.
    waiting: Backlog,
    waiting_bytes: u64,
    /// Frames counted in `stats.frames_in` that were not delivered (dropped, or still in the generic path's
    /// qdisc): `stats()` derives `frames_delivered` from it, so that a delivered frame's counting on the
    /// per-packet path is its bytes alone (the delivered count and the bytes went as one vector add there
    /// that cost 6 instructions a frame, issue 25).
    undelivered: u64,
    /// dummynet's tick clock, when the direction is served on ticks (`tick`); `None`: continuous.
    clock: Option<TickClock>,
    /// The generic path's delay variation, nanoseconds either side of `delay` (0: none).
    jitter: u64,
    stats: LinkStats,
}

/// A direction's waiting frames, oldest first: a ring of its own, so that the per-packet push and pop are
/// inline (`VecDeque::push_back` stayed a call on the fast path: ~1 M instructions of bulk-1g's second).
/// Its capacity is a power of two (or zero), so a position wraps by a mask.
#[derive(Debug, Default)]
struct Backlog {
    slots: Vec<(Instant, u32)>,
    head: usize,
    len: usize,
}

impl Backlog {
    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn front(&self) -> Option<(Instant, u32)> {
        (self.len > 0).then(|| self.slots[self.head])
    }

    /// Removes the oldest frame (there is one).
    #[inline(always)]
    fn pop_front(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) & (self.slots.len() - 1);
        self.len -= 1;
    }

    #[inline(always)]
    fn push_back(&mut self, frame: (Instant, u32)) {
        if self.len == self.slots.len() {
            self.grow();
        }
        let i = (self.head + self.len) & (self.slots.len() - 1);
        self.slots[i] = frame;
        self.len += 1;
    }

    /// Doubles the ring (at least 16 slots), the frames in order from its start.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let cap = (2 * self.slots.len()).max(16);
        let mut slots = Vec::with_capacity(cap);
        slots.extend(self.iter());
        slots.resize(cap, (Instant::ZERO, 0));
        self.slots = slots;
        self.head = 0;
    }

    fn iter(&self) -> impl Iterator<Item = (Instant, u32)> + '_ {
        (0..self.len).map(move |k| self.slots[(self.head + k) & (self.slots.len() - 1)])
    }
}

/// A dummynet pipe's clock (FreeBSD 4.x `ip_dummynet.c`, read for the model, not copied): credit earned
/// per tick while backlogged, packets moved to the delay line on ticks, released `delay_ticks` later.
///
/// dummynet keeps its credit in units of bit·HZ (`numbytes`; a packet costs `len·8·hz`, a tick earns
/// `bandwidth` in bit/s). Multiplying both by the tick in ns gives the same ratio in integers the lab's
/// units hold exactly: a tick earns `rate·tick_ns`, a packet costs `8·bytes·10⁹`.
#[derive(Debug)]
struct TickClock {
    tick_ns: u64,
    /// The delay line in whole ticks (`config_pipe`: `delay·hz/1000`, floored).
    delay_ticks: u64,
    credit_per_tick: u128,
    /// The tick at which the current backlog began (`q->sched_time` when the packet found the queue empty).
    busy_start: u64,
    /// Credit the packets of the current backlog cost so far. While backlogged, dummynet's credit grows by
    /// `credit_per_tick` every tick and each head leaves on the first tick it is covered, so packet i of a
    /// backlog leaves on tick `busy_start + ⌈(cost of packets 1..=i − busy_credit) / credit_per_tick⌉`
    /// (not before `busy_start`).
    busy_cost: u128,
    /// Credit held when the backlog began: 0 when the pipe drops its leftover (`IdleCredit::Dropped`).
    busy_credit: u128,
    /// The tick the backlog's last packet moved on, for the leftover when the next backlog begins.
    last_move: u64,
    keep_credit: bool,
}

const BIT_NS: u128 = 8 * 1_000_000_000;

impl TickClock {
    /// The tick on which a packet of `wire` bytes arriving during tick `now_tick` moves to the delay line;
    /// `idle`: the bandwidth queue was empty (its credit reset, `q->numbytes = 0`).
    #[inline]
    fn serve(&mut self, now_tick: u64, wire: u32, idle: bool) -> u64 {
        if idle {
            // What the last backlog left (less than a tick's worth), kept by the 2001 code only.
            self.busy_credit = if self.keep_credit {
                (self.busy_credit + (self.last_move - self.busy_start) as u128 * self.credit_per_tick)
                    .saturating_sub(self.busy_cost)
            } else {
                0
            };
            self.busy_start = now_tick;
            self.busy_cost = 0;
        }
        self.busy_cost += wire as u128 * BIT_NS;
        // SET_TICKS rounds up what the credit does not cover: a positive shortfall waits for ready_event on a
        // later tick; none (kept credit only) moves the packet at once, on the tick already past.
        let short = self.busy_cost.saturating_sub(self.busy_credit);
        self.last_move = self.busy_start + short.div_ceil(self.credit_per_tick) as u64;
        self.last_move
    }
}

impl LinkDirection {
    /// `seed` is this direction's own random stream (derived by the engine from the run seed and the link id).
    pub fn new(cfg: &LinkConfig, seed: u64) -> Self {
        let loss = match &cfg.loss {
            LossModel::None {} => Loss::None,
            LossModel::Bernoulli { p, .. } => Loss::Bernoulli { threshold: probability_threshold(*p) },
            LossModel::Scripted { drop, .. } => {
                let mut drops = drop.clone();
                drops.sort_unstable();
                drops.dedup();
                Loss::Scripted { drops, next: 0, offered: 0, marked: false }
            }
            LossModel::GilbertElliott { p, r, h, k, .. } => Loss::GilbertElliott {
                to_bad: probability_threshold(*p),
                to_good: probability_threshold(*r),
                lose_good: probability_threshold(1.0 - k),
                lose_bad: probability_threshold(1.0 - h),
                bad: false,
            },
        };
        let lossy = match loss {
            Loss::None => false,
            Loss::Bernoulli { threshold } => threshold != 0,
            _ => true,
        };
        LinkDirection {
            rate: cfg.rate,
            delay: cfg.delay,
            limit: cfg.queue,
            framing: cfg.framing,
            lossy,
            data_only: cfg.loss.filter() == LossFilter::Data,
            loss,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            busy_until: Instant::ZERO,
            last_tx: (0, Duration::ZERO),
            last_frame: (0, cfg.framing.wire_len(0), cfg.rate.tx_time(cfg.framing.wire_len(0) as u64)),
            waiting: Backlog::default(),
            waiting_bytes: 0,
            undelivered: 0,
            clock: cfg.tick.map(|tick| TickClock {
                tick_ns: tick.as_nanos().max(1),
                delay_ticks: cfg.delay.as_nanos() / tick.as_nanos().max(1),
                credit_per_tick: cfg.rate.bps() as u128 * tick.as_nanos() as u128,
                busy_start: 0,
                busy_cost: 0,
                busy_credit: 0,
                last_move: 0,
                keep_credit: cfg.idle_credit == IdleCredit::Kept,
            }),
            jitter: cfg.jitter.map_or(0, |j| j.as_nanos().min(cfg.delay.as_nanos())),
            stats: LinkStats::default(),
        }
    }

    /// Offers an IP datagram of `ip_len` bytes at `now`; `carries_data` says whether it carries transport
    /// payload (what a `packets = "data"` loss filter selects).
    #[inline(always)]
    pub fn send(&mut self, now: Instant, ip_len: u32, carries_data: bool) -> Verdict {
        self.stats.frames_in += 1;
        if self.lossy {
            self.offer(carries_data);
        }
        while let Some((start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
        let (wire, tx) = self.frame(ip_len);
        if self.clock.is_some() {
            return self.send_on_ticks(now, wire, carries_data);
        }
        let start = now.max(self.busy_until);
        if start > now {
            let full = match self.limit {
                QueueLimit::Packets(n) => self.waiting.len() as u64 >= n as u64,
                QueueLimit::Bytes(b) => self.waiting_bytes + wire as u64 > b,
            };
            if full {
                self.stats.drops_queue_full += 1;
                self.undelivered += 1;
                return Verdict::Drop(DropReason::QueueFull);
            }
            self.waiting.push_back((start, wire));
            self.waiting_bytes += wire as u64;
            self.stats.max_queue_frames = self.stats.max_queue_frames.max(self.waiting.len() as u32);
        }
        self.busy_until = start + tx;
        if self.lossy && self.lose(carries_data) {
            self.stats.drops_random_loss += 1;
            self.undelivered += 1;
            return Verdict::Drop(DropReason::RandomLoss);
        }
        self.stats.bytes_delivered += wire as u64;
        Verdict::Deliver(self.busy_until + self.delay)
    }

    /// The wire bytes and serialization time of a frame that carries an IP datagram of `ip_len` bytes.
    #[inline(always)]
    fn frame(&mut self, ip_len: u32) -> (u32, Duration) {
        if ip_len != self.last_frame.0 {
            let wire = self.framing.wire_len(ip_len);
            self.last_frame = (ip_len, wire, self.rate.tx_time(wire as u64));
        }
        let (_, wire, tx) = self.last_frame;
        debug_assert_eq!((wire, tx), (self.framing.wire_len(ip_len), self.rate.tx_time(wire as u64)));
        (wire, tx)
    }

    /// The serialization time of a frame of `wire` bytes at the direction's rate.
    #[inline(always)]
    fn tx_time(&mut self, wire: u32) -> Duration {
        if wire != self.last_tx.0 {
            self.last_tx = (wire, self.rate.tx_time(wire as u64));
        }
        debug_assert_eq!(self.last_tx.1, self.rate.tx_time(wire as u64));
        self.last_tx.1
    }

    /// `send` for a direction on dummynet's clock: `waiting` holds every packet not yet moved to the delay
    /// line, with the instant of the tick that moves it.
    fn send_on_ticks(&mut self, now: Instant, wire: u32, carries_data: bool) -> Verdict {
        let full = match self.limit {
            QueueLimit::Packets(n) => self.waiting.len() as u64 >= n as u64,
            QueueLimit::Bytes(b) => self.waiting_bytes > b,
        };
        if full {
            self.stats.drops_queue_full += 1;
            self.undelivered += 1;
            return Verdict::Drop(DropReason::QueueFull);
        }
        let idle = self.waiting.is_empty();
        let clock = self.clock.as_mut().expect("called with a clock");
        let tick = clock.tick_ns;
        // The tick at `now` has run: a packet arriving on a tick instant waits for the next one.
        let moved = clock.serve(now.as_nanos() / tick, wire, idle);
        let released = Instant::from_nanos((moved + clock.delay_ticks).saturating_mul(tick));
        self.waiting.push_back((Instant::from_nanos(moved.saturating_mul(tick)), wire));
        self.waiting_bytes += wire as u64;
        // Counted as the continuous model counts: behind the packet being served.
        self.stats.max_queue_frames = self.stats.max_queue_frames.max(self.waiting.len() as u32 - 1);
        if self.lossy && self.lose(carries_data) {
            self.stats.drops_random_loss += 1;
            self.undelivered += 1;
            return Verdict::Drop(DropReason::RandomLoss);
        }
        self.stats.bytes_delivered += wire as u64;
        Verdict::Deliver(released)
    }

    /// Before the queue: a scripted model numbers the selected frame and marks it if listed.
    #[inline]
    fn offer(&mut self, carries_data: bool) {
        if let Loss::Scripted { drops, next, offered, marked } = &mut self.loss {
            *marked = false;
            if !self.data_only || carries_data {
                if drops.get(*next) == Some(offered) {
                    *marked = true;
                    *next += 1;
                }
                *offered += 1;
            }
        }
    }

    /// On the wire: whether the model loses this frame. Random models draw only for selected frames.
    #[inline]
    fn lose(&mut self, carries_data: bool) -> bool {
        if self.data_only && !carries_data {
            return false;
        }
        match &mut self.loss {
            Loss::None => false,
            Loss::Bernoulli { threshold } => self.rng.next_u64() < *threshold,
            Loss::Scripted { marked, .. } => std::mem::take(marked),
            Loss::GilbertElliott { to_bad, to_good, lose_good, lose_bad, bad } => {
                // The frame's fate is decided in the current state, then the chain moves.
                let lost = self.rng.next_u64() < if *bad { *lose_bad } else { *lose_good };
                let draw = self.rng.next_u64();
                *bad = if *bad { draw >= *to_good } else { draw < *to_bad };
                lost
            }
        }
    }

    /// Bytes a datagram of `ip_len` bytes occupies on this direction's wire.
    #[inline]
    pub fn wire_len(&self, ip_len: u32) -> u32 {
        self.framing.wire_len(ip_len)
    }

    /// When the serializer finishes the frame it is sending (the generic path asks its qdisc for the next
    /// frame then).
    #[inline]
    pub fn busy_until(&self) -> Instant {
        self.busy_until
    }

    /// The generic path: a frame was offered to the direction's qdisc.
    #[inline]
    pub fn count_offer(&mut self) {
        self.stats.frames_in += 1;
        self.undelivered += 1;
    }

    /// The generic path: the qdisc refused a frame at its hard limit.
    #[inline]
    pub fn count_refused(&mut self) {
        self.stats.drops_queue_full += 1;
    }

    /// The generic path: the serializer, free at `now`, takes a frame of `wire` bytes from the qdisc. The loss
    /// model numbers and judges it here, on the wire (frames an AQM dropped never reach it); the frame arrives
    /// after its serialization and a propagation delay drawn as `jitter` says.
    pub fn transmit(&mut self, now: Instant, wire: u32, carries_data: bool) -> Verdict {
        debug_assert!(now >= self.busy_until, "the serializer is busy");
        self.busy_until = now + self.tx_time(wire);
        if self.lossy {
            self.offer(carries_data);
            if self.lose(carries_data) {
                self.stats.drops_random_loss += 1;
                return Verdict::Drop(DropReason::RandomLoss);
            }
        }
        self.undelivered -= 1;
        self.stats.bytes_delivered += wire as u64;
        let delay = match self.jitter {
            0 => self.delay,
            j => {
                // Uniform on [delay − j, delay + j] in whole nanoseconds (the modulo's bias is below 2⁻³⁰).
                let span = 2 * j + 1;
                Duration::from_nanos(self.delay.as_nanos() - j + self.rng.next_u64() % span)
            }
        };
        Verdict::Deliver(self.busy_until + delay)
    }

    /// The generic path: the deepest the qdisc got, for the direction's counters.
    pub fn note_queue(&mut self, frames: usize) {
        self.stats.max_queue_frames = self.stats.max_queue_frames.max(frames as u32);
    }

    /// The fast path's backlog at `now` (frames and wire bytes waiting, not counting the one on the wire),
    /// for a probe's tick; `now` at or after the last `send`.
    pub fn backlog_at(&self, now: Instant) -> (usize, u64) {
        self.waiting.iter().filter(|(start, _)| *start > now).fold((0, 0), |(n, b), (_, w)| (n + 1, b + w as u64))
    }

    /// How long a frame arriving at `now` would wait for the serializer (the queueing delay a probe samples).
    pub fn wait_at(&self, now: Instant) -> Duration {
        self.busy_until.saturating_since(now)
    }

    /// Frames waiting (not counting the one on the wire) as of the last `send`.
    pub fn queued_frames(&self) -> usize {
        self.waiting.len()
    }

    pub fn stats(&self) -> LinkStats {
        LinkStats { frames_delivered: self.stats.frames_in - self.undelivered, ..self.stats }
    }
}

/// A loss model's state.
#[derive(Debug)]
enum Loss {
    None,
    Bernoulli {
        threshold: u64,
    },
    /// `drops` sorted; `next` the first not yet reached; `offered` selected frames numbered so far; `marked`
    /// whether the frame being offered is listed.
    Scripted {
        drops: Vec<u64>,
        next: usize,
        offered: u64,
        marked: bool,
    },
    /// Thresholds on uniform 64-bit draws; `bad` the current state.
    GilbertElliott {
        to_bad: u64,
        to_good: u64,
        lose_good: u64,
        lose_bad: u64,
        bad: bool,
    },
}

/// `p` as a threshold on a uniform 64-bit draw; exact for p = 0 and saturating near 1.
fn probability_threshold(p: f64) -> u64 {
    if p <= 0.0 {
        0
    } else if p >= 1.0 {
        u64::MAX
    } else {
        (p * 18_446_744_073_709_551_616.0) as u64
    }
}

/// Counters of a host's NIC transmit queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NicStats {
    pub frames_sent: u64,
    /// Offers refused because `txqueuelen` frames were already waiting.
    pub refused_full: u64,
    pub max_queue_frames: u32,
}

/// The sending host's interface transmit queue (Linux `txqueuelen`), in front of the first link.
///
/// With a `rate` the NIC serializes frames itself, and when `txqueuelen` frames wait the next offer is
/// refused: the transport is told at once, as `dev_queue_xmit` tells Linux TCP (NET_XMIT_DROP), and decides
/// what to do (its `SendStall` reaction). Without a rate the NIC is taken to be faster than the path and
/// hands frames straight on; the queue never fills.
#[derive(Debug)]
pub struct NicQueue {
    rate: Option<Rate>,
    framing: Framing,
    txqueuelen: u32,
    busy_until: Instant,
    waiting: VecDeque<Instant>,
    stats: NicStats,
}

impl NicQueue {
    pub fn new(rate: Option<Rate>, framing: Framing, txqueuelen: u32) -> Self {
        NicQueue {
            rate,
            framing,
            txqueuelen,
            busy_until: Instant::ZERO,
            waiting: VecDeque::new(),
            stats: NicStats::default(),
        }
    }

    /// Whether the NIC has a rate: without one nothing ever waits in it, and it is never full.
    pub fn has_rate(&self) -> bool {
        self.rate.is_some()
    }

    /// Whether an offer at `now` would be refused.
    #[inline]
    pub fn is_full(&mut self, now: Instant) -> bool {
        // Without a rate nothing ever waits: the test the engine makes before every send ends here.
        if self.rate.is_none() {
            return false;
        }
        self.expire(now);
        self.waiting.len() as u64 >= self.txqueuelen as u64
    }

    #[inline]
    fn expire(&mut self, now: Instant) {
        while self.waiting.front().is_some_and(|&s| s <= now) {
            self.waiting.pop_front();
        }
    }

    /// Offers a datagram of `ip_len` bytes; returns when it leaves the NIC, or `None` if the queue is full.
    #[inline(always)]
    pub fn send(&mut self, now: Instant, ip_len: u32) -> Option<Instant> {
        let Some(rate) = self.rate else {
            self.stats.frames_sent += 1;
            return Some(now);
        };
        if self.is_full(now) {
            self.stats.refused_full += 1;
            return None;
        }
        let start = now.max(self.busy_until);
        if start > now {
            self.waiting.push_back(start);
            self.stats.max_queue_frames = self.stats.max_queue_frames.max(self.waiting.len() as u32);
        }
        self.busy_until = start + rate.tx_time(self.framing.wire_len(ip_len) as u64);
        self.stats.frames_sent += 1;
        Some(self.busy_until)
    }

    /// When the NIC next has room, if it is full now (the transport retries then).
    pub fn room_at(&mut self, now: Instant) -> Option<Instant> {
        if self.is_full(now) {
            self.waiting.front().copied()
        } else {
            None
        }
    }

    pub fn stats(&self) -> NicStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rate: &str, delay: &str, queue: &str) -> LinkConfig {
        LinkConfig {
            rate: rate.parse().unwrap(),
            delay: delay.parse().unwrap(),
            queue: queue.parse().unwrap(),
            framing: Framing::Ethernet,
            loss: LossModel::None {},
            mtu: None,
            tick: None,
            idle_credit: IdleCredit::Dropped,
            qdisc: Default::default(),
            jitter: None,
            reorder: false,
        }
    }

    #[test]
    fn one_seed_gives_one_loss_pattern_by_frame_index() {
        // The emulator and the simulator each build a LinkDirection from the same stream seed: the n-th
        // frame offered meets the same verdict whatever the frames' timing.
        let cfg = LinkConfig {
            loss: LossModel::Bernoulli { p: 0.05, packets: LossFilter::All },
            ..link("10mbit", "20ms", "1000pkt")
        };
        let verdicts = |spacing_us: u64| {
            let mut dir = LinkDirection::new(&cfg, crate::stream_seed(3, crate::direction_stream(0)));
            (0..2000u64)
                .map(|i| {
                    let at = tcplab_units::Instant::from_nanos(i * spacing_us * 1000);
                    matches!(dir.send(at, 1500, true), Verdict::Drop(DropReason::RandomLoss))
                })
                .collect::<Vec<bool>>()
        };
        let (a, b) = (verdicts(1200), verdicts(5000));
        assert_eq!(a, b);
        let lost = a.iter().filter(|&&l| l).count();
        assert!((60..140).contains(&lost), "{lost} of 2000 at p = 0.05");
    }

    #[test]
    fn backlog_keeps_fifo_order_across_wraps_and_growth() {
        // Against `VecDeque`: pops and pushes interleaved so that the ring wraps, then grows while wrapped.
        let (mut ring, mut model) = (Backlog::default(), VecDeque::new());
        for i in 0..200u32 {
            let frame = (Instant::from_nanos(i as u64), i);
            ring.push_back(frame);
            model.push_back(frame);
            if i % 3 == 0 {
                ring.pop_front();
                model.pop_front();
            }
            assert_eq!(ring.front(), model.front().copied());
            assert_eq!(ring.len(), model.len());
            assert!(ring.iter().eq(model.iter().copied()));
        }
    }

    #[test]
    fn arrival_is_serialization_plus_delay_to_the_nanosecond() {
        let mut l = LinkDirection::new(&link("10mbit", "20ms", "10pkt"), 1);
        let t0 = Instant::from_nanos(1_000);
        // 1500-byte datagram + 38 bytes of Ethernet framing = 12304 bits = 1,230,400 ns at 10 Mbit/s.
        assert_eq!(l.send(t0, 1500, true), Verdict::Deliver(Instant::from_nanos(1_000 + 1_230_400 + 20_000_000)));
        // A second frame at the same instant waits for the first.
        assert_eq!(l.send(t0, 1500, true), Verdict::Deliver(Instant::from_nanos(1_000 + 2 * 1_230_400 + 20_000_000)));
        // A bare 40-byte ACK is padded to 46 bytes: (46 + 38) * 8 bits = 67,200 ns.
        let later = Instant::from_nanos(10_000_000);
        assert_eq!(l.send(later, 40, true), Verdict::Deliver(Instant::from_nanos(10_000_000 + 67_200 + 20_000_000)));
    }

    #[test]
    fn full_queue_drops_and_counts() {
        let mut l = LinkDirection::new(&link("1mbit", "1ms", "3pkt"), 1);
        let t = Instant::from_nanos(0);
        // One frame on the wire plus three waiting fit; the fifth is dropped.
        for _ in 0..4 {
            assert!(matches!(l.send(t, 1000, true), Verdict::Deliver(_)));
        }
        assert_eq!(l.send(t, 1000, true), Verdict::Drop(DropReason::QueueFull));
        assert_eq!(l.stats().drops_queue_full, 1);
        assert_eq!(l.stats().max_queue_frames, 3);
        // Once the first frame has left the wire there is room again.
        let after_first = Rate::from_bps(1_000_000).tx_time(1038);
        assert!(matches!(l.send(Instant::ZERO + after_first, 1000, true), Verdict::Deliver(_)));
    }

    #[test]
    fn byte_limited_queue_counts_wire_bytes() {
        let mut l = LinkDirection::new(&link("1mbit", "0s", "3000B"), 1);
        let t = Instant::ZERO;
        assert!(matches!(l.send(t, 1000, true), Verdict::Deliver(_))); // on the wire
        assert!(matches!(l.send(t, 1000, true), Verdict::Deliver(_))); // 1038 waiting
        assert!(matches!(l.send(t, 1000, true), Verdict::Deliver(_))); // 2076 waiting
        assert_eq!(l.send(t, 1000, true), Verdict::Drop(DropReason::QueueFull)); // 3114 > 3000
        assert!(matches!(l.send(t, 500, true), Verdict::Deliver(_))); // 2614 fits
    }

    /// `frames_delivered` is derived (frames in, less those not delivered): it equals the count of `Deliver`
    /// verdicts on the continuous path and on dummynet's ticks, with queue-full and random drops mixed in,
    /// and on the generic path, where a frame offered to the qdisc counts as delivered only once the
    /// serializer has carried it.
    #[test]
    fn delivered_count_matches_the_verdicts() {
        for tick in [None, Some(Duration::from_nanos(1_000_000))] {
            let mut cfg = link("10mbit", "1ms", "4pkt");
            cfg.loss = LossModel::Bernoulli { p: 0.2, packets: LossFilter::All };
            cfg.tick = tick;
            let mut l = LinkDirection::new(&cfg, 3);
            let mut delivered = 0;
            for i in 0..2_000u64 {
                // Bursts of three every 2 ms: the 4-frame queue overflows now and then.
                let t = Instant::from_nanos(i / 3 * 2_000_000);
                delivered += u64::from(matches!(l.send(t, 1500, true), Verdict::Deliver(_)));
            }
            let st = l.stats();
            assert!(st.drops_queue_full > 0 && st.drops_random_loss > 0, "{tick:?}: {st:?}");
            assert_eq!(st.frames_delivered, delivered, "{tick:?}");
            assert_eq!(st.frames_in, 2_000);
        }
        let mut cfg = link("10mbit", "1ms", "4pkt");
        cfg.loss = LossModel::Bernoulli { p: 0.2, packets: LossFilter::All };
        let mut l = LinkDirection::new(&cfg, 5);
        let (mut delivered, mut now) = (0, Instant::ZERO);
        for i in 0..1_000u64 {
            l.count_offer();
            if i % 4 == 3 {
                l.count_refused();
                continue;
            }
            now = now.max(l.busy_until());
            delivered += u64::from(matches!(l.transmit(now, 1538, true), Verdict::Deliver(_)));
            assert_eq!(l.stats().frames_delivered, delivered);
        }
        // Offered and not yet carried: not delivered.
        l.count_offer();
        let st = l.stats();
        assert_eq!((st.frames_in, st.frames_delivered), (1_001, delivered));
        assert!(st.drops_random_loss > 0);
    }

    #[test]
    fn bernoulli_loss_rate_matches_p() {
        let mut cfg = link("1gbit", "0s", "100000pkt");
        cfg.loss = LossModel::Bernoulli { p: 0.04, packets: LossFilter::All };
        let mut l = LinkDirection::new(&cfg, 7);
        let n = 200_000;
        for i in 0..n {
            l.send(Instant::from_nanos(i * 100_000), 1500, true);
        }
        let lost = l.stats().drops_random_loss as f64;
        // Binomial(200000, 0.04): sd = 87.6; 5 sd either side.
        assert!((lost - 8000.0).abs() < 440.0, "lost {lost}");
    }

    #[test]
    fn nic_refuses_when_txqueuelen_frames_wait() {
        let mut nic = NicQueue::new(Some("100mbit".parse().unwrap()), Framing::Ethernet, 2);
        let t = Instant::ZERO;
        assert!(nic.send(t, 1500).is_some()); // on the wire
        assert!(nic.send(t, 1500).is_some());
        assert!(nic.send(t, 1500).is_some());
        assert!(nic.is_full(t));
        assert_eq!(nic.send(t, 1500), None);
        assert_eq!(nic.stats().refused_full, 1);
        let room = nic.room_at(t).unwrap();
        assert_eq!(room.as_nanos(), 123_040); // the first waiting frame starts then
        assert!(nic.send(room, 1500).is_some());
    }

    #[test]
    fn rateless_nic_passes_frames_through() {
        let mut nic = NicQueue::new(None, Framing::Ethernet, 0);
        let t = Instant::from_nanos(5);
        for _ in 0..10 {
            assert_eq!(nic.send(t, 1500), Some(t));
        }
    }

    fn lossy(loss: LossModel) -> LinkDirection {
        let mut cfg = link("1gbit", "0s", "100000pkt");
        cfg.loss = loss;
        LinkDirection::new(&cfg, 11)
    }

    #[test]
    fn data_only_loss_never_drops_a_control_packet_and_draws_only_for_data() {
        let mut l = lossy(LossModel::Bernoulli { p: 0.5, packets: LossFilter::Data });
        let (mut data_lost, mut data) = (0, 0);
        for i in 0..20_000u64 {
            let t = Instant::from_nanos(i * 100_000);
            assert!(matches!(l.send(t, 40, false), Verdict::Deliver(_)), "control packet {i} dropped");
            data += 1;
            if l.send(t, 1500, true) == Verdict::Drop(DropReason::RandomLoss) {
                data_lost += 1;
            }
        }
        // Binomial(20000, 0.5): sd 70.7; 5 sd.
        assert!((data_lost as f64 - data as f64 / 2.0).abs() < 354.0, "{data_lost} of {data}");
        assert_eq!(l.stats().drops_random_loss, data_lost);
        // The same seed with only data frames draws the same stream: control frames take no draw.
        let mut m = lossy(LossModel::Bernoulli { p: 0.5, packets: LossFilter::Data });
        let mut l2 = lossy(LossModel::Bernoulli { p: 0.5, packets: LossFilter::All });
        for i in 0..1000u64 {
            let t = Instant::from_nanos(i * 100_000);
            m.send(t, 40, false);
            let drop = |v: Verdict| matches!(v, Verdict::Drop(_));
            assert_eq!(drop(m.send(t, 1500, true)), drop(l2.send(t, 1500, true)), "frame {i}");
        }
    }

    #[test]
    fn scripted_loss_drops_exactly_the_listed_indices() {
        // All packets: indices over every frame offered.
        let mut l = lossy(LossModel::Scripted { drop: vec![5, 0, 3, 3], packets: LossFilter::All });
        let lost: Vec<u64> = (0..10u64)
            .filter(|&i| {
                l.send(Instant::from_nanos(i * 100_000), 100, i % 2 == 0)
                    != Verdict::Deliver(Instant::from_nanos(i * 100_000 + 1_104))
            })
            .collect();
        assert_eq!(lost, vec![0, 3, 5]);
        // Data only: indices over data frames; control frames in between neither count nor drop.
        let mut l = lossy(LossModel::Scripted { drop: vec![1, 2], packets: LossFilter::Data });
        let mut lost = Vec::new();
        let mut data_index = 0;
        for i in 0..12u64 {
            let data = i % 3 != 0;
            let v = l.send(Instant::from_nanos(i * 100_000), 100, data);
            if data {
                if matches!(v, Verdict::Drop(_)) {
                    lost.push(data_index);
                }
                data_index += 1;
            } else {
                assert!(matches!(v, Verdict::Deliver(_)));
            }
        }
        assert_eq!(lost, vec![1, 2]);
        assert_eq!(l.stats().drops_random_loss, 2);
    }

    /// Gilbert-Elliott: stationary P(Bad) = p/(p+r); loss rate = (r(1−k) + p(1−h))/(p+r). With h = 0 and
    /// k = 1 (Gilbert), a loss burst is a stay in Bad, geometric with mean 1/r.
    #[test]
    fn gilbert_elliott_loss_rate_and_burst_length_match_the_model() {
        let n = 400_000u64;
        // Gilbert: p = 0.01, r = 0.25: rate 0.01/0.26 = 0.03846, mean burst 4.
        let (p, r) = (0.01, 0.25);
        let mut l = lossy(LossModel::GilbertElliott { p, r, h: 0.0, k: 1.0, packets: LossFilter::All });
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for i in 0..n {
            let dropped = matches!(l.send(Instant::from_nanos(i * 100_000), 1500, true), Verdict::Drop(_));
            lost += dropped as u64;
            bursts += (dropped && !prev) as u64;
            prev = dropped;
        }
        let rate = lost as f64 / n as f64;
        let want = p / (p + r);
        // Losses come in ~bursts of 4, so the count's variance is inflated: Var ≈ n·π(1−π)·(1+ρ)/(1−ρ) with
        // ρ = 1 − p − r = 0.74 → factor 6.7; sd of the rate ≈ 0.00079. Allow 5 sd.
        assert!((rate - want).abs() < 0.004, "rate {rate}, model {want}");
        let mean_burst = lost as f64 / bursts as f64;
        // About 1,540 bursts, geometric with sd √(1−r)/r = 3.46 each: sd of the mean ≈ 0.088. 5 sd.
        assert!((mean_burst - 1.0 / r).abs() < 0.45, "mean burst {mean_burst}, model {}", 1.0 / r);

        // The full model: h = 0.3 (70 % lost in Bad), k = 0.98 (2 % lost in Good).
        let (p, r, h, k) = (0.02, 0.2, 0.3, 0.98);
        let mut l = lossy(LossModel::GilbertElliott { p, r, h, k, packets: LossFilter::All });
        let lost = (0..n)
            .filter(|&i| matches!(l.send(Instant::from_nanos(i * 100_000), 1500, true), Verdict::Drop(_)))
            .count() as f64;
        let want = (r * (1.0 - k) + p * (1.0 - h)) / (p + r);
        assert!((lost / n as f64 - want).abs() < 0.004, "rate {}, model {want}", lost / n as f64);
    }

    /// A direction on dummynet's clock, without framing (a pipe charges the IP datagram).
    fn ticked(rate: &str, delay: &str, queue: &str, tick: &str) -> LinkDirection {
        let mut cfg = link(rate, delay, queue);
        cfg.framing = Framing::None;
        cfg.tick = Some(tick.parse().unwrap());
        LinkDirection::new(&cfg, 1)
    }

    fn at(l: &mut LinkDirection, ms: f64, bytes: u32) -> u64 {
        match l.send(Instant::from_nanos((ms * 1e6) as u64), bytes, true) {
            Verdict::Deliver(t) => t.as_nanos(),
            v => panic!("{v:?}"),
        }
    }

    const MS: u64 = 1_000_000;

    /// 1500 kbit/s at HZ 100 earns 15,000 bits a tick; a 1500-byte datagram costs 12,000. Five arriving
    /// together at 3 ms leave the bandwidth queue on ticks ⌈12000·i / 15000⌉ = 1, 2, 3, 4, 4 and the delay
    /// line (5 ticks) 50 ms later: the fifth shares the fourth's tick with the credit saved meanwhile.
    #[test]
    fn dummynet_moves_packets_on_the_tick_their_credit_covers_and_releases_them_delay_ticks_later() {
        let mut l = ticked("1500kbit", "50ms", "50pkt", "10ms");
        let released: Vec<u64> = (0..5).map(|_| at(&mut l, 3.0, 1500)).collect();
        assert_eq!(released, [60 * MS, 70 * MS, 80 * MS, 90 * MS, 90 * MS]);
        // Every release is a tick instant.
        assert!(released.iter().all(|t| t % (10 * MS) == 0));
    }

    /// A packet arriving at an idle pipe leaves the bandwidth queue on a later tick (`SET_TICKS` is at least
    /// one), so a packet that one tick's credit covers takes more than `delay` and at most `delay + tick`;
    /// one arriving on a tick instant finds that tick gone and waits the whole next one.
    #[test]
    fn an_idle_pipe_holds_a_small_packet_more_than_delay_and_at_most_delay_plus_a_tick() {
        for phase_us in (0..10_000).step_by(250) {
            let mut l = ticked("384kbit", "50ms", "50pkt", "10ms");
            let t = 1_000 * MS + phase_us * 1_000;
            let Verdict::Deliver(out) = l.send(Instant::from_nanos(t), 40, false) else { panic!() };
            let held = out.as_nanos() - t;
            assert!(held > 50 * MS && held <= 60 * MS, "arrival {phase_us} us into the tick: held {held} ns");
            assert_eq!(out.as_nanos() % (10 * MS), 0);
        }
        let mut l = ticked("384kbit", "50ms", "50pkt", "10ms");
        assert_eq!(at(&mut l, 20.0, 40), 80 * MS); // on tick 2: moved on tick 3, out on tick 8
    }

    /// Credit is earned only while packets wait and is dropped when the queue empties (`q->numbytes = 0`):
    /// 384 kbit/s earns 3,840 bits a tick. A 500-byte datagram at 0 ms (4,000 bits) leaves on tick 2 with
    /// 3,680 bits over. A 1500-byte one (12,000 bits) that arrives before tick 2 uses that credit and
    /// leaves on tick ⌈16000/3840⌉ = 5; one that arrives after it starts afresh: tick 2 + ⌈12000/3840⌉ = 6.
    #[test]
    fn credit_carries_within_a_backlog_and_is_dropped_when_the_queue_empties() {
        let mut l = ticked("384kbit", "0s", "50pkt", "10ms");
        assert_eq!(at(&mut l, 0.0, 500), 20 * MS);
        assert_eq!(at(&mut l, 15.0, 1500), 50 * MS);
        let mut l = ticked("384kbit", "0s", "50pkt", "10ms");
        assert_eq!(at(&mut l, 0.0, 500), 20 * MS);
        assert_eq!(at(&mut l, 25.0, 1500), 60 * MS);
    }

    /// The 2001 code keeps the leftover: after a 500-byte datagram (4,000 bits) leaves on tick 2 of a
    /// 384 kbit/s pipe, 3,680 bits stay. A 40-byte ACK (320 bits) arriving at 25 ms finds the queue empty
    /// and covered: it moves at once on tick 2, already past, so it leaves the 50 ms delay line at 70 ms,
    /// 45 ms after it came; the next ACK at 26 ms too (3,360 left), and a 1500-byte datagram then waits
    /// ⌈(12000 − 3040)/3840⌉ = 3 ticks. Under "dropped" the first ACK would wait for tick 3.
    #[test]
    fn kept_credit_lets_a_packet_that_finds_the_queue_empty_leave_on_the_tick_already_past() {
        let mut cfg = link("384kbit", "50ms", "50pkt");
        cfg.framing = Framing::None;
        cfg.tick = Some("10ms".parse().unwrap());
        cfg.idle_credit = IdleCredit::Kept;
        let mut l = LinkDirection::new(&cfg, 1);
        assert_eq!(at(&mut l, 0.0, 500), 70 * MS);
        assert_eq!(at(&mut l, 25.0, 40), 70 * MS);
        assert_eq!(at(&mut l, 26.0, 40), 70 * MS);
        assert_eq!(at(&mut l, 27.0, 1500), 100 * MS);
        // Over many arrivals at every phase of the tick, a small packet is held delay − tick to delay + tick.
        let mut l = LinkDirection::new(&cfg, 1);
        for i in 0..400u64 {
            let t = i * 37_000_000 + (i * 250_000) % (10 * MS);
            let Verdict::Deliver(out) = l.send(Instant::from_nanos(t), 40, false) else { panic!() };
            let held = out.as_nanos() - t;
            assert!(held > 40 * MS && held <= 60 * MS, "{held}");
            assert_eq!(out.as_nanos() % (10 * MS), 0);
        }
    }

    /// Over a long backlog the pipe delivers exactly its rate: at 384 kbit/s and HZ 100 the n-th 1500-byte
    /// datagram leaves on tick ⌈3.125·n⌉, so 1,000 of them (12 Mbit) take 3,125 ticks, 31.25 s: 384,000
    /// bit/s. At HZ 1000 the same.
    #[test]
    fn a_backlogged_pipe_runs_at_its_configured_rate() {
        for (tick, tick_ns) in [("10ms", 10 * MS), ("1ms", MS)] {
            let mut l = ticked("384kbit", "0s", "100000pkt", tick);
            let mut last = 0;
            for n in 1..=1000u64 {
                last = at(&mut l, 0.0, 1500);
                let credit = 384_000 * tick_ns as u128; // per tick, in bit·ns
                let want = (n as u128 * 12_000 * 1_000_000_000).div_ceil(credit) as u64 * tick_ns;
                assert_eq!(last, want, "packet {n} at tick {tick}");
            }
            assert_eq!(last, 31_250 * MS);
            let bits_per_s = 1000.0 * 12_000.0 / (last as f64 * 1e-9);
            assert!((bits_per_s - 384_000.0).abs() < 1e-6, "{bits_per_s}");
        }
    }

    /// dummynet's queue counts every packet not yet in the delay line, the one waiting for credit too
    /// (`q->len >= qsize` drops): a 3-slot pipe holds 3 where the continuous model holds 1 + 3. A byte
    /// limit drops when the bytes already queued exceed it (`q->len_bytes > qsize`).
    #[test]
    fn the_ticked_queue_counts_as_dummynet_does() {
        let mut l = ticked("128kbit", "0s", "3pkt", "10ms");
        for _ in 0..3 {
            assert!(matches!(l.send(Instant::ZERO, 1500, true), Verdict::Deliver(_)));
        }
        assert_eq!(l.send(Instant::ZERO, 1500, true), Verdict::Drop(DropReason::QueueFull));
        assert_eq!(l.stats().max_queue_frames, 2);
        // The first leaves on tick ⌈12000/1280⌉ = 10: from then on there is room for one more.
        assert_eq!(l.send(Instant::from_nanos(99 * MS), 1500, true), Verdict::Drop(DropReason::QueueFull));
        assert!(matches!(l.send(Instant::from_nanos(100 * MS), 1500, true), Verdict::Deliver(_)));

        let mut l = ticked("128kbit", "0s", "3000B", "10ms");
        assert!(matches!(l.send(Instant::ZERO, 1500, true), Verdict::Deliver(_))); // 1500 queued
        assert!(matches!(l.send(Instant::ZERO, 1500, true), Verdict::Deliver(_))); // 3000: not above
        assert!(matches!(l.send(Instant::ZERO, 1500, true), Verdict::Deliver(_))); // 4500
        assert_eq!(l.send(Instant::ZERO, 40, true), Verdict::Drop(DropReason::QueueFull));
    }

    /// Random loss keeps its meaning on ticks: the lost packet spends its credit, then does not arrive.
    #[test]
    fn a_lost_packet_on_ticks_still_spends_its_credit() {
        let mut cfg = link("1500kbit", "50ms", "50pkt");
        cfg.framing = Framing::None;
        cfg.tick = Some("10ms".parse().unwrap());
        cfg.loss = LossModel::Scripted { drop: vec![0], packets: LossFilter::All };
        let mut l = LinkDirection::new(&cfg, 1);
        assert_eq!(l.send(Instant::ZERO, 1500, true), Verdict::Drop(DropReason::RandomLoss));
        assert_eq!(at(&mut l, 0.0, 1500), 70 * MS); // second in the backlog: tick 2, out on tick 7
    }

    #[test]
    fn tick_and_the_delay_it_quantizes_are_validated() {
        let mut cfg = link("1mbit", "55ms", "50pkt");
        assert_eq!(cfg.validate_tick(), Ok(()), "no tick: any delay");
        cfg.tick = Some("10ms".parse().unwrap());
        let (key, msg) = cfg.validate_tick().unwrap_err();
        assert_eq!(key, "delay");
        assert!(msg.contains("50ms") && msg.contains("multiple of the tick"), "{msg}");
        cfg.delay = "50ms".parse().unwrap();
        assert_eq!(cfg.validate_tick(), Ok(()));
        cfg.tick = Some("2s".parse().unwrap());
        let (key, msg) = cfg.validate_tick().unwrap_err();
        assert_eq!(key, "tick");
        assert!(msg.contains("accepted"), "{msg}");
        cfg.tick = Some(Duration::ZERO);
        assert_eq!(cfg.validate_tick().unwrap_err().0, "tick");
        cfg.tick = None;
        cfg.idle_credit = IdleCredit::Kept;
        assert_eq!(cfg.validate_tick().unwrap_err().0, "idle_credit");
    }

    #[test]
    fn loss_parameters_are_validated() {
        assert!(LossModel::Bernoulli { p: 1.0, packets: LossFilter::All }
            .validate()
            .unwrap_err()
            .contains("0 <= p < 1"));
        let ge = LossModel::GilbertElliott { p: 0.1, r: 1.5, h: 0.0, k: 1.0, packets: LossFilter::All };
        assert!(ge.validate().unwrap_err().starts_with("r = 1.5"));
        let stuck = LossModel::GilbertElliott { p: 0.1, r: 0.0, h: 0.0, k: 1.0, packets: LossFilter::All };
        assert!(stuck.validate().is_err());
    }
}
