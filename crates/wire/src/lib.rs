//! Segment representations. The simulator moves [`TcpSegment`] values (header fields and a payload
//! *length*; payload bytes are never materialized), and the byte-level codec in [`codec`] turns them into
//! real IPv4/TCP headers for pcap traces and real devices.
//!
//! Read first: RFC 9293 §3.1 (header format), RFC 7323 (window scale, timestamps), RFC 2018 (SACK); for
//! RDP ([`RdpSegment`], IP protocol 27) RFC 908 §4 and RFC 1151 §2.

pub mod codec;
pub mod rdp;
mod seq;
pub mod tcp;

pub use rdp::{EackList, RdpFlags, RdpSegment, RdpVersion, SynOptions};
pub use seq::SeqNumber;
pub use tcp::{EcnCodepoint, SackBlock, SackBlocks, TcpFlags, TcpOptions, TcpSegment, Timestamps};

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER_LEN: u32 = 20;
/// Bytes of a TCP header without options.
pub const TCP_HEADER_LEN: u32 = 20;
