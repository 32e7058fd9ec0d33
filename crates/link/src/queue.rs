use std::collections::VecDeque;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use tcplab_units::{Duration, Instant, Rate};

use crate::config::{Framing, LinkConfig, LossModel, QueueLimit};

/// Why a link did not deliver a frame. Every drop is counted under its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The drop-tail queue was full when the frame arrived.
    QueueFull,
    /// The loss model removed the frame on the wire.
    RandomLoss,
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
    /// Loss threshold on a uniform u64 draw: lost iff draw < threshold.
    loss_threshold: u64,
    rng: Xoshiro256PlusPlus,
    /// When the serializer finishes the last accepted frame.
    busy_until: Instant,
    /// Start-of-transmission instants and wire sizes of frames still waiting at the last call.
    waiting: VecDeque<(Instant, u32)>,
    waiting_bytes: u64,
    stats: LinkStats,
}

impl LinkDirection {
    /// `seed` is this direction's own random stream (derived by the engine from the run seed and the link id).
    pub fn new(cfg: &LinkConfig, seed: u64) -> Self {
        let loss_threshold = match cfg.loss {
            LossModel::None => 0,
            LossModel::Bernoulli { p } => probability_threshold(p),
        };
        LinkDirection {
            rate: cfg.rate,
            delay: cfg.delay,
            limit: cfg.queue,
            framing: cfg.framing,
            loss_threshold,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            busy_until: Instant::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            stats: LinkStats::default(),
        }
    }

    /// Offers an IP datagram of `ip_len` bytes at `now`.
    #[inline(always)]
    pub fn send(&mut self, now: Instant, ip_len: u32) -> Verdict {
        self.stats.frames_in += 1;
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
        let wire = self.framing.wire_len(ip_len);
        let start = now.max(self.busy_until);
        if start > now {
            let full = match self.limit {
                QueueLimit::Packets(n) => self.waiting.len() as u64 >= n as u64,
                QueueLimit::Bytes(b) => self.waiting_bytes + wire as u64 > b,
            };
            if full {
                self.stats.drops_queue_full += 1;
                return Verdict::Drop(DropReason::QueueFull);
            }
            self.waiting.push_back((start, wire));
            self.waiting_bytes += wire as u64;
            self.stats.max_queue_frames = self.stats.max_queue_frames.max(self.waiting.len() as u32);
        }
        self.busy_until = start + self.rate.tx_time(wire as u64);
        if self.loss_threshold != 0 && self.rng.next_u64() < self.loss_threshold {
            self.stats.drops_random_loss += 1;
            return Verdict::Drop(DropReason::RandomLoss);
        }
        self.stats.frames_delivered += 1;
        self.stats.bytes_delivered += wire as u64;
        Verdict::Deliver(self.busy_until + self.delay)
    }

    /// Frames waiting (not counting the one on the wire) as of the last `send`.
    pub fn queued_frames(&self) -> usize {
        self.waiting.len()
    }

    pub fn stats(&self) -> LinkStats {
        self.stats
    }
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

    /// Whether an offer at `now` would be refused.
    #[inline]
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.expire(now);
        self.rate.is_some() && self.waiting.len() as u64 >= self.txqueuelen as u64
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
            loss: LossModel::None,
        }
    }

    #[test]
    fn arrival_is_serialization_plus_delay_to_the_nanosecond() {
        let mut l = LinkDirection::new(&link("10mbit", "20ms", "10pkt"), 1);
        let t0 = Instant::from_nanos(1_000);
        // 1500-byte datagram + 38 bytes of Ethernet framing = 12304 bits = 1,230,400 ns at 10 Mbit/s.
        assert_eq!(l.send(t0, 1500), Verdict::Deliver(Instant::from_nanos(1_000 + 1_230_400 + 20_000_000)));
        // A second frame at the same instant waits for the first.
        assert_eq!(l.send(t0, 1500), Verdict::Deliver(Instant::from_nanos(1_000 + 2 * 1_230_400 + 20_000_000)));
        // A bare 40-byte ACK is padded to 46 bytes: (46 + 38) * 8 bits = 67,200 ns.
        let later = Instant::from_nanos(10_000_000);
        assert_eq!(l.send(later, 40), Verdict::Deliver(Instant::from_nanos(10_000_000 + 67_200 + 20_000_000)));
    }

    #[test]
    fn full_queue_drops_and_counts() {
        let mut l = LinkDirection::new(&link("1mbit", "1ms", "3pkt"), 1);
        let t = Instant::from_nanos(0);
        // One frame on the wire plus three waiting fit; the fifth is dropped.
        for _ in 0..4 {
            assert!(matches!(l.send(t, 1000), Verdict::Deliver(_)));
        }
        assert_eq!(l.send(t, 1000), Verdict::Drop(DropReason::QueueFull));
        assert_eq!(l.stats().drops_queue_full, 1);
        assert_eq!(l.stats().max_queue_frames, 3);
        // Once the first frame has left the wire there is room again.
        let after_first = Rate::from_bps(1_000_000).tx_time(1038);
        assert!(matches!(l.send(Instant::ZERO + after_first, 1000), Verdict::Deliver(_)));
    }

    #[test]
    fn byte_limited_queue_counts_wire_bytes() {
        let mut l = LinkDirection::new(&link("1mbit", "0s", "3000B"), 1);
        let t = Instant::ZERO;
        assert!(matches!(l.send(t, 1000), Verdict::Deliver(_))); // on the wire
        assert!(matches!(l.send(t, 1000), Verdict::Deliver(_))); // 1038 waiting
        assert!(matches!(l.send(t, 1000), Verdict::Deliver(_))); // 2076 waiting
        assert_eq!(l.send(t, 1000), Verdict::Drop(DropReason::QueueFull)); // 3114 > 3000
        assert!(matches!(l.send(t, 500), Verdict::Deliver(_))); // 2614 fits
    }

    #[test]
    fn bernoulli_loss_rate_matches_p() {
        let mut cfg = link("1gbit", "0s", "100000pkt");
        cfg.loss = LossModel::Bernoulli { p: 0.04 };
        let mut l = LinkDirection::new(&cfg, 7);
        let n = 200_000;
        for i in 0..n {
            l.send(Instant::from_nanos(i * 100_000), 1500);
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
}
