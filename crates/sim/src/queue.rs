//! The event queue. Every event has a key (time, class, source, sequence) and the queue yields keys in
//! increasing order, so a run is a pure function of its inputs. Equal keys cannot occur: the sequence
//! number is per source and only grows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tcplab_units::Instant;

/// Event classes, in the order they run at equal times. The order is significant: a packet that arrives
/// at the instant a timer expires is seen first (the timer may then find its work done), and test control
/// (the end of the measurement) sees everything that happened at its instant. The packets that reach one
/// host at one instant (`Arrival`, `NicRx`) come out one after another, and the engine hands them all to
/// their transports before that host's applications hear of any (the crate's doc, *One instant*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Class {
    /// A packet reaches the far end of a link direction. Source: the direction.
    Arrival = 0,
    /// The receiving NIC's processor finished the frame at the head of a direction's receive queue
    /// (`HostSpec::nic_frame_time`): the packet reaches the host. Source: the direction. Right after
    /// `Arrival`: the NIC hands a frame on as soon as it has it.
    NicRx = 1,
    /// A link direction on the generic path (a qdisc other than drop-tail FIFO, or jitter): its serializer
    /// is free or a packet reaches its qdisc, and the qdisc is asked for the next packet. Source: the
    /// direction. After the arrivals at its instant, so that a packet that reaches a router then is in the
    /// qdisc when the serializer chooses.
    Depart = 2,
    /// A host's CPU finished processing the segment at the head of its receive backlog (the CPU cost
    /// model). Source: the host.
    Cpu = 3,
    /// A connection's protocol timer. Source: the endpoint.
    Timer = 4,
    /// A host's NIC transmit queue has room again. Source: the host.
    NicRoom = 5,
    /// An application's timer. Source: the application.
    App = 6,
    /// Test control: the end of the measurement (source 0), a probe's sampling tick (source 1).
    Control = 7,
    /// A host's IP reassembly timer: the oldest incomplete datagram may have expired. Source: the host.
    Reassembly = 8,
    /// An application's send or receive call may have completed on a host's core (the CPU cost model): its
    /// effect follows. Source: host << 11 | core. Last, so that the call's end sees what happened at its
    /// instant (a segment processed then was processed first, as the interrupt that preempts a copy).
    Call = 9,
}

/// The class of each value of a key's four class bits (those above `Call` never occur). A table: the match it
/// replaces clamped the bits to `Call` with a compare and a conditional move before the event loop's
/// dispatch on the class (issue 25).
const CLASSES: [Class; 16] = {
    use Class::*;
    [Arrival, NicRx, Depart, Cpu, Timer, NicRoom, App, Control, Reassembly, Call, Call, Call, Call, Call, Call, Call]
};

impl Class {
    #[inline(always)]
    fn from_bits(b: u64) -> Class {
        CLASSES[(b & 15) as usize]
    }
}

const SOURCE_BITS: u32 = 24;
const SEQ_BITS: u32 = 36;

/// A popped event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: Instant,
    pub class: Class,
    pub source: u32,
    pub seq: u64,
}

#[inline(always)]
fn decode(key: u128) -> Event {
    let low = key as u64;
    Event {
        time: Instant::from_nanos((key >> 64) as u64),
        class: Class::from_bits(low >> (SOURCE_BITS + SEQ_BITS)),
        source: ((low >> SEQ_BITS) & ((1 << SOURCE_BITS) - 1)) as u32,
        seq: low & ((1 << SEQ_BITS) - 1),
    }
}

/// Packed keys, time in the high 64 bits and class·source·seq in the low 64: 16 bytes per entry, no payload,
/// no allocation once grown to its working size, and one integer comparison per step (a tuple's
/// lexicographic comparison costs more on the per-packet path).
///
/// Two stores. While few events are pending (a bulk run keeps two link-direction heads and a handful of
/// timers) they all sit in `few`, an array sorted latest first: a pop takes the last entry, and a push moves
/// up the entries earlier than it (an insertion sort's one step; a new event is seldom earlier than more than
/// a few of them). A binary heap's pop sifts down to the bottom and back up, which at that size cost more
/// than the rest of the queue (issue 25's profile: 153 instructions per data segment of bulk-1g). When a push
/// finds `FEW` entries there, the heap takes all but the link directions' events (`Arrival`, `NicRx`,
/// `Depart`: a packet's every hop, one pending per direction), which stay sorted in `few` while it has room;
/// a pop then takes the earlier of the two heads. So a thousand connections' timers (flows-1000, rr-1000)
/// stay O(log n) in the heap, while the arrival that every packet makes does not sift through them (it did
/// before 27 Nov 2026: 16 % of flows-1000's instructions were the heap). When the heap is empty again,
/// `few` takes every class. Keys are unique, so the stores hand out one order whichever holds a key.
#[derive(Debug)]
pub struct EventQueue {
    /// `few[0]` is `NONE`, later than every key: a push's scan stops there, and the earliest entry
    /// `few[few_len]` is `NONE` when the store is empty, with no test.
    few: [u128; FEW + 1],
    /// Entries of `few` in use: `few[1..=few_len]`, latest first.
    few_len: usize,
    heap: BinaryHeap<Reverse<u128>>,
    /// The time of the heap's earliest key, `u64::MAX` when it is empty. A pop or a look at the head whose
    /// sorted store's earliest entry comes strictly before it needs nothing from the heap, with one 64-bit
    /// comparison: asking the heap tested its length and, in use (a many-connection run's timers),
    /// compared 128-bit keys on every event (issue 25: flows-1000 ~8 instructions an event).
    heap_time: u64,
    popped: u64,
}

/// The most entries kept sorted before they move into the heap: a push scans at most this many.
const FEW: usize = 16;

/// No key: above every key (a key's class is at most `Call`, 9, so its class bits are never all ones).
const NONE: u128 = u128::MAX;

impl Default for EventQueue {
    fn default() -> Self {
        let mut few = [0; FEW + 1];
        few[0] = NONE;
        EventQueue { few, few_len: 0, heap: BinaryHeap::new(), heap_time: u64::MAX, popped: 0 }
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules an event. `seq` must be unique per (class, source) and below 2^36; `source` below 2^24.
    // Always inlined: a call's entry and exit cost as much as the sorted store's work (issue 25).
    #[inline(always)]
    pub fn push(&mut self, time: Instant, class: Class, source: u32, seq: u64) {
        debug_assert!(source < 1 << SOURCE_BITS && seq < 1 << SEQ_BITS);
        let low = (class as u64) << (SOURCE_BITS + SEQ_BITS) | (source as u64) << SEQ_BITS | seq;
        let key = (time.as_nanos() as u128) << 64 | low as u128;
        if self.few_len < FEW && (self.heap.is_empty() || class <= Class::Depart) {
            self.push_few(key);
        } else {
            self.push_heap(key, class <= Class::Depart);
        }
    }

    #[inline(always)]
    fn push_few(&mut self, key: u128) {
        let mut i = self.few_len + 1;
        while self.few[i - 1] < key {
            self.few[i] = self.few[i - 1];
            i -= 1;
        }
        self.few[i] = key;
        self.few_len += 1;
    }

    /// Into the heap (`link`: the key is a link direction's): it is in use and `few` is full, or the sorted
    /// store is full and the heap takes all of it but the link directions' keys first.
    #[inline(never)]
    fn push_heap(&mut self, key: u128, link: bool) {
        if self.heap.is_empty() {
            let mut kept = 0;
            for i in 1..=self.few_len {
                let k = self.few[i];
                if k as u64 >> (SOURCE_BITS + SEQ_BITS) <= Class::Depart as u64 {
                    kept += 1;
                    self.few[kept] = k;
                } else {
                    self.heap.push(Reverse(k));
                }
            }
            self.few_len = kept;
            if link && kept < FEW {
                self.push_few(key);
            } else {
                self.heap.push(Reverse(key));
            }
        } else {
            self.heap.push(Reverse(key));
        }
        self.note_heap_time();
    }

    #[inline(always)]
    fn note_heap_time(&mut self) {
        self.heap_time = self.heap.peek().map_or(u64::MAX, |r| (r.0 >> 64) as u64);
    }

    /// The earliest key, or `NONE` when the queue is empty.
    #[inline(always)]
    fn head(&self) -> u128 {
        debug_assert_eq!(self.heap_time, self.heap.peek().map_or(u64::MAX, |r| (r.0 >> 64) as u64));
        let few = self.few[self.few_len];
        if ((few >> 64) as u64) < self.heap_time {
            return few;
        }
        match self.heap.peek() {
            Some(&Reverse(h)) => few.min(h),
            None => few,
        }
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<Event> {
        debug_assert_eq!(self.heap_time, self.heap.peek().map_or(u64::MAX, |r| (r.0 >> 64) as u64));
        let n = self.few_len;
        let few = self.few[n];
        // Before the heap's earliest time, the store's earliest is the head (and the store is not empty:
        // `NONE`'s time is `u64::MAX`).
        let key = if ((few >> 64) as u64) < self.heap_time {
            self.few_len = n - 1;
            few
        } else {
            match self.heap.peek() {
                Some(&Reverse(h)) if h < few => self.pop_heap(),
                // The count, not the 128-bit `NONE`, says whether the store is empty: one test less a pop.
                _ if n > 0 => {
                    self.few_len = n - 1;
                    few
                }
                _ => return None,
            }
        };
        debug_assert!(self.peek_key().is_none_or(|k| k > key), "two events with one key, or out of order");
        self.popped += 1;
        Some(decode(key))
    }

    // Inlined into the one `pop`, as the heap's pop was before the sorted store: a call per event would cost
    // a many-connection run (rr-1000) what the store saves a bulk one.
    #[inline]
    fn pop_heap(&mut self) -> u128 {
        let Reverse(key) = self.heap.pop().expect("called with the heap in use");
        self.note_heap_time();
        key
    }

    /// The next event, left in the queue.
    #[inline(always)]
    pub fn peek(&self) -> Option<Event> {
        self.peek_key().map(decode)
    }

    #[inline(always)]
    fn peek_key(&self) -> Option<u128> {
        let k = self.head();
        (k != NONE).then_some(k)
    }

    /// The source of the next event if it is of a class up to `last` at `time` (the engine asks after each
    /// packet whether another reaches the host at the instant): the key's bits compared as they are, with
    /// no event decoded.
    #[inline(always)]
    pub fn next_at(&self, time: Instant, last: Class) -> Option<u32> {
        let k = self.head();
        let low = k as u64;
        let hit = (k >> 64) as u64 == time.as_nanos() && low >> (SOURCE_BITS + SEQ_BITS) <= last as u64;
        // `NONE`'s class bits are all ones, above every class: it never hits.
        hit.then_some(((low >> SEQ_BITS) & ((1 << SOURCE_BITS) - 1)) as u32)
    }

    pub fn peek_time(&self) -> Option<Instant> {
        self.peek_key().map(|k| Instant::from_nanos((k >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.few_len
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.few_len == 0
    }
    /// Events handed out so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_come_out_by_class_then_source_then_seq() {
        let mut q = EventQueue::new();
        let t = Instant::from_nanos(500);
        q.push(t, Class::Control, 0, 0);
        q.push(t, Class::Timer, 7, 1);
        q.push(t, Class::Timer, 3, 9);
        q.push(t, Class::Arrival, 1, 5);
        q.push(t, Class::Timer, 3, 2);
        q.push(Instant::from_nanos(499), Class::Control, 0, 1);
        q.push(t, Class::NicRoom, 0, 0);
        let order: Vec<_> =
            std::iter::from_fn(|| q.pop()).map(|e| (e.time.as_nanos(), e.class, e.source, e.seq)).collect();
        assert_eq!(
            order,
            vec![
                (499, Class::Control, 0, 1),
                (500, Class::Arrival, 1, 5),
                (500, Class::Timer, 3, 2),
                (500, Class::Timer, 3, 9),
                (500, Class::Timer, 7, 1),
                (500, Class::NicRoom, 0, 0),
                (500, Class::Control, 0, 0),
            ]
        );
    }

    #[test]
    fn every_class_decodes_from_its_bits() {
        use Class::*;
        for c in [Arrival, NicRx, Depart, Cpu, Timer, NicRoom, App, Control, Reassembly, Call] {
            assert_eq!(Class::from_bits(c as u64), c);
        }
    }

    #[test]
    fn keys_round_trip_at_their_limits() {
        let mut q = EventQueue::new();
        let t = Instant::from_nanos(u64::MAX - 1);
        q.push(t, Class::Control, (1 << SOURCE_BITS) - 1, (1 << SEQ_BITS) - 1);
        let e = q.pop().unwrap();
        assert_eq!((e.time, e.class, e.source, e.seq), (t, Class::Control, (1 << 24) - 1, (1 << 36) - 1));
    }

    /// The sorted store and the heap, and the moves between them, hand out exactly the order a plain binary
    /// heap gives: pushes and pops interleaved at random, with the pending count swinging from empty to past
    /// `FEW` and back, so that the queue moves into the heap, drains it, and starts sorted again, many times.
    #[test]
    fn the_sorted_store_and_the_heap_give_one_order() {
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut now, mut seq, mut moved_to_heap, mut max_len) = (0u64, 0u64, 0, 0);
        for round in 0..200_000u64 {
            // Phases of growth and of draining, so that the pending count crosses FEW both ways.
            let grow = (round / 500) % 2 == 0;
            if rand() % 100 < if grow { 60 } else { 35 } {
                seq += 1;
                let t = Instant::from_nanos(now + rand() % 1_000);
                let class = Class::from_bits(rand() % 10);
                let source = (rand() % 5) as u32;
                q.push(t, class, source, seq);
                reference.push(Reverse((t, class, source, seq)));
            } else {
                let was_heap = !q.heap.is_empty();
                let got = q.pop().map(|e| (e.time, e.class, e.source, e.seq));
                let want = reference.pop().map(|Reverse(k)| k);
                assert_eq!(got, want, "round {round}");
                if let Some((t, ..)) = got {
                    now = t.as_nanos();
                }
                moved_to_heap += usize::from(was_heap && q.heap.is_empty());
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(q.peek_time(), reference.peek().map(|Reverse(k)| k.0));
            assert_eq!(q.peek().map(|e| (e.time, e.class, e.source, e.seq)), reference.peek().map(|Reverse(k)| *k));
            let head = reference.peek().map(|Reverse(k)| *k);
            for last in [Class::Arrival, Class::NicRx, Class::Call] {
                let at = head.map_or(Instant::ZERO, |k| k.0);
                assert_eq!(q.next_at(at, last), head.filter(|k| k.1 <= last).map(|k| k.2), "round {round}");
                assert_eq!(q.next_at(Instant::from_nanos(at.as_nanos() + 1), last), None);
            }
            max_len = max_len.max(q.len());
        }
        assert!(max_len > 4 * FEW, "the heap was exercised: at most {max_len} pending");
        assert!(moved_to_heap > 10, "the heap drained and the sorted store took over again {moved_to_heap} times");
    }

    /// A many-connection run's shape: a thousand timers keep the heap in use while two link directions
    /// hand on one arrival after another. The arrivals stay in the sorted array (the heap holds timers
    /// only), and the order is a plain binary heap's.
    #[test]
    fn link_heads_stay_sorted_while_timers_fill_the_heap() {
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        for e in 0..1000u32 {
            let t = Instant::from_nanos(1_000_000 + 997 * e as u64 % 200_000);
            q.push(t, Class::Timer, e, 1);
            reference.push(Reverse((t, Class::Timer, e, 1u64)));
        }
        let mut seq = [0u64; 2];
        for dir in 0..2u32 {
            seq[dir as usize] += 1;
            let t = Instant::from_nanos(10 + dir as u64);
            q.push(t, Class::Arrival, dir, seq[dir as usize]);
            reference.push(Reverse((t, Class::Arrival, dir, seq[dir as usize])));
        }
        assert_eq!(q.heap.len(), 1000, "the timers moved into the heap, the link heads did not");
        while let Some(e) = q.pop() {
            let want = reference.pop().map(|Reverse(k)| k);
            assert_eq!(Some((e.time, e.class, e.source, e.seq)), want);
            // Each arrival brings the next on its direction, 1 µs later, for the first 5,000 of them.
            if e.class == Class::Arrival && seq[e.source as usize] < 2_500 {
                seq[e.source as usize] += 1;
                let t = Instant::from_nanos(e.time.as_nanos() + 1_000);
                q.push(t, Class::Arrival, e.source, seq[e.source as usize]);
                reference.push(Reverse((t, Class::Arrival, e.source, seq[e.source as usize])));
                assert!(q.heap.len() <= 1000, "an arrival went into the heap");
            }
        }
        assert!(reference.is_empty());
        assert_eq!(seq, [2_500, 2_500]);
    }
}
