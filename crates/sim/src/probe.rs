//! Probes: observers the engine calls where packets are sent, dropped and delivered, and on sampling
//! ticks. Time series, packet traces and counters are probes, so a new output never edits the engine.
//!
//! The engine is generic over its probe; the default `()` observes nothing and compiles away.

use tcplab_link::DropReason;
use tcplab_transport::Transport;
use tcplab_units::{Duration, Instant};

use crate::{DirId, Endpoints, HostId, Links};

/// Where a packet was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketEvent {
    /// A host handed the packet to its NIC, which will have put it on the wire by `departs`.
    Sent { host: HostId, departs: Instant },
    /// The host's NIC refused the packet (transmit queue full, under `ifq_full = "drop"`).
    NicDropped { host: HostId },
    /// The link direction lost the packet (its qdisc refused or dropped it, or the loss model on the wire).
    /// On the drop-tail FIFO's fast path this is the packet just sent on `dir`; a qdisc may drop one that
    /// waited (CoDel at the head).
    LinkDropped { dir: DirId, reason: DropReason },
    /// The packet reached the far end of the direction and was handed to the receiving host.
    Delivered { dir: DirId },
    /// The receiving host had no connection and no listener for it; it was discarded.
    NoSocket { host: HostId },
}

/// One IPv4 fragment of a datagram larger than its path direction's MTU (RFC 791 §3.2). Every fragment
/// carries the same segment; these fields say which part of the datagram's payload (the transport header
/// and data) it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// The datagram's identification, counted per sending host from 0 (the IPv4 header carries its low 16
    /// bits).
    pub id: u32,
    /// Where the fragment's data starts in the datagram's payload, bytes (a multiple of 8).
    pub offset: u32,
    /// Bytes of the datagram's payload the fragment carries; the fragment is 20 bytes longer.
    pub len: u32,
    /// More fragments follow (the MF flag).
    pub more: bool,
    /// How many fragments the datagram was cut into.
    pub count: u32,
}

/// A packet a host forwarded: it arrived on `from` and enters `to` now. Its sending and destination hosts
/// are in it, because no other event at a transit host tells them (a tap on a router's link needs them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transit {
    pub src: HostId,
    pub dst: HostId,
    pub from: DirId,
    pub to: DirId,
}

/// One end of a connection as a probe sees it.
pub struct EndpointView<'a, T> {
    /// The endpoint's id: endpoints are numbered in the order they were created.
    pub id: u32,
    pub host: HostId,
    /// The host at the other end.
    pub peer: HostId,
    pub local_port: u16,
    pub remote_port: u16,
    pub conn: &'a T,
}

/// An observer of a run. Every method has an empty default.
pub trait Probe<T: Transport> {
    fn on_packet(&mut self, _now: Instant, _ev: PacketEvent, _seg: &T::Segment) {}
    /// A fragment of `seg`'s datagram was seen (see [`Fragment`]). By default a fragment is a packet like
    /// any other: [`Probe::on_packet`] with the whole segment. A whole datagram handed to its transport after
    /// reassembly is not a packet event.
    fn on_fragment(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment, _frag: Fragment) {
        self.on_packet(now, ev, seg)
    }
    /// A host forwarded `seg` (or `frag` of its datagram) from one direction of its route to the next (see
    /// [`Transit`]). The two-host shape forwards nothing; a dropped or delivered packet is a
    /// [`PacketEvent`] as anywhere else.
    fn on_forward(&mut self, _now: Instant, _hop: Transit, _seg: &T::Segment, _frag: Option<Fragment>) {}
    /// Ask for [`Probe::on_tick`] at every multiple of this interval from the start of the run until the
    /// measurement starts, then at the measurement's start and every multiple of the interval after it.
    fn tick_interval(&self) -> Option<Duration> {
        None
    }
    fn on_tick(&mut self, _now: Instant, _endpoints: Endpoints<'_, T>) {}
    /// At the same ticks, right after [`Probe::on_tick`]: every link direction's backlog and counters.
    fn on_link_tick(&mut self, _now: Instant, _links: Links<'_, T::Segment>) {}
    /// Every application is ready: the measurement window opens now (before the tick at this instant).
    fn on_measure_start(&mut self, _now: Instant) {}
    /// The measurement window closes now.
    fn on_measure_stop(&mut self, _now: Instant) {}
}

impl<T: Transport> Probe<T> for () {}

/// A probe lent to the engine.
impl<T: Transport, P: Probe<T>> Probe<T> for &mut P {
    #[inline]
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment) {
        (**self).on_packet(now, ev, seg)
    }
    fn on_fragment(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment, frag: Fragment) {
        (**self).on_fragment(now, ev, seg, frag)
    }
    fn on_forward(&mut self, now: Instant, hop: Transit, seg: &T::Segment, frag: Option<Fragment>) {
        (**self).on_forward(now, hop, seg, frag)
    }
    fn tick_interval(&self) -> Option<Duration> {
        (**self).tick_interval()
    }
    fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, T>) {
        (**self).on_tick(now, endpoints)
    }
    fn on_link_tick(&mut self, now: Instant, links: Links<'_, T::Segment>) {
        (**self).on_link_tick(now, links)
    }
    fn on_measure_start(&mut self, now: Instant) {
        (**self).on_measure_start(now)
    }
    fn on_measure_stop(&mut self, now: Instant) {
        (**self).on_measure_stop(now)
    }
}
