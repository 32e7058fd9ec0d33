//! The event queue. Every event has a key (time, class, source, sequence) and the queue yields keys in
//! increasing order, so a run is a pure function of its inputs. Equal keys cannot occur: the sequence
//! number is per source and only grows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tcplab_units::Instant;

/// Event classes, in the order they run at equal times. The order is significant: a packet that arrives
/// at the instant a timer expires is seen first (the timer may then find its work done), and test control
/// (the end of the measurement) sees everything that happened at its instant.
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

impl Class {
    fn from_bits(b: u64) -> Class {
        match b {
            0 => Class::Arrival,
            1 => Class::NicRx,
            2 => Class::Depart,
            3 => Class::Cpu,
            4 => Class::Timer,
            5 => Class::NicRoom,
            6 => Class::App,
            7 => Class::Control,
            8 => Class::Reassembly,
            _ => Class::Call,
        }
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

/// A binary heap of packed keys, time in the high 64 bits and class·source·seq in the low 64: 16 bytes per
/// entry, no payload, no allocation once it has grown to its working size, and one integer comparison per
/// step of the heap (a tuple's lexicographic comparison costs more on the per-packet path).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<u128>>,
    /// Next sequence number per (class, source) is kept by the caller's sources; this counts all pushes.
    pushed: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules an event. `seq` must be unique per (class, source) and below 2^36; `source` below 2^24.
    #[inline]
    pub fn push(&mut self, time: Instant, class: Class, source: u32, seq: u64) {
        debug_assert!(source < 1 << SOURCE_BITS && seq < 1 << SEQ_BITS);
        let low = (class as u64) << (SOURCE_BITS + SEQ_BITS) | (source as u64) << SEQ_BITS | seq;
        self.heap.push(Reverse((time.as_nanos() as u128) << 64 | low as u128));
        self.pushed += 1;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let Reverse(key) = self.heap.pop()?;
        debug_assert!(self.heap.peek().is_none_or(|Reverse(k)| *k != key), "two events with one key");
        let (t, low) = ((key >> 64) as u64, key as u64);
        self.popped += 1;
        Some(Event {
            time: Instant::from_nanos(t),
            class: Class::from_bits(low >> (SOURCE_BITS + SEQ_BITS)),
            source: ((low >> SEQ_BITS) & ((1 << SOURCE_BITS) - 1)) as u32,
            seq: low & ((1 << SEQ_BITS) - 1),
        })
    }

    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse(k)| Instant::from_nanos((*k >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
    fn keys_round_trip_at_their_limits() {
        let mut q = EventQueue::new();
        let t = Instant::from_nanos(u64::MAX - 1);
        q.push(t, Class::Control, (1 << SOURCE_BITS) - 1, (1 << SEQ_BITS) - 1);
        let e = q.pop().unwrap();
        assert_eq!((e.time, e.class, e.source, e.seq), (t, Class::Control, (1 << 24) - 1, (1 << 36) - 1));
    }
}
