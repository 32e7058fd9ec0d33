//! Link models, sans-IO. A [`LinkDirection`] is one direction of a path: a drop-tail queue in front of a
//! serializer running at `rate`, then `delay` of propagation, with random loss on the wire. A [`NicQueue`]
//! is the sending host's interface transmit queue (`txqueuelen`), which tells the transport when it is full.
//!
//! A direction may instead run on dummynet's tick clock (`LinkConfig::tick`): credit per tick, moves and
//! releases on ticks. That is FIFO too, and a packet's tick is fixed by the packets ahead of it.
//!
//! Both are FIFO with a constant delay, so a packet's whole fate is decided when it enters: the caller gets
//! the arrival instant at once and no per-packet events are needed inside the link. That is what keeps the
//! simulator at one event per packet per hop. (A reordering or jitter stage, when added, breaks FIFO and
//! will need its own ordered structure.)
//!
//! Reading: netem and dummynet semantics are summarized in docs/scenario.md; Ethernet framing is IEEE 802.3
//! (preamble 7 + SFD 1 + header 14 + FCS 4 + inter-frame gap 12 = 38 bytes, minimum payload 46 bytes).

mod config;
pub mod qdisc;
mod queue;

pub use config::{Framing, IdleCredit, LinkConfig, LossFilter, LossModel, QueueLimit};
pub use qdisc::{PacketMeta, Qdisc, QdiscConfig, QdiscStats};
pub use queue::{DropReason, LinkDirection, LinkStats, NicQueue, NicStats, Verdict};
