//! Byte-level encoding of [`TcpSegment`]s as real IPv4 datagrams (RFC 791 §3.1) carrying TCP
//! (RFC 9293 §3.1), for pcap traces and real devices.
//!
//! # Layers
//!
//! * [`Ipv4Packet`] and [`TcpPacket`] are zero-copy views over a byte buffer (`T: AsRef<[u8]>`),
//!   one accessor per header field; the byte ranges are named in the private `field` module.
//!   Setters exist when the buffer is also `AsMut<[u8]>`.
//! * [`emit_ipv4_tcp`] / [`emit_tcp`] and [`parse_ipv4_tcp`] / [`parse_tcp`] convert between those
//!   bytes and the simulator's [`TcpSegment`], which plays the role of a "repr" (the high-level,
//!   owned form of the header).
//!
//! # No-panic contract
//!
//! * [`Ipv4Packet::new_checked`] and [`TcpPacket::new_checked`] validate every length that the
//!   accessors rely on. Once they return `Ok`, no method of the view panics (for `Ipv4Packet`,
//!   as long as the buffer is not mutated through a setter into an inconsistent state).
//!   `new_unchecked` skips that validation; its accessors panic if the buffer is too short.
//! * [`parse_ipv4_tcp`], [`parse_ipv4_tcp_with`], [`parse_tcp`] and [`TcpPacket::to_segment`] never
//!   panic, for any input: every malformation is reported as a [`WireError`].
//! * [`emit_ipv4_tcp`] and [`emit_tcp`] never panic (short of allocation failure). They validate the
//!   segment first (options at most 40 bytes, lengths that fit the 16-bit length fields) and leave
//!   `buf` untouched when they return an error.
//!
//! # What is emitted
//!
//! IPv4: version 4, IHL 5 (no IP options), TOS: DSCP 0 and the segment's ECN field (RFC 3168 §5), identification as given, DF set,
//! fragment offset 0, TTL [`DEFAULT_TTL`], protocol 6, header checksum. TCP: every [`TcpSegment`]
//! field (the acknowledgment number is written even when ACK is clear, so that it round-trips),
//! reserved bits 0, urgent pointer 0, options in the Linux layout described in the [`crate::tcp`]
//! module docs (so the header is exactly [`TcpSegment::header_len`] bytes), the payload as chosen by
//! [`PayloadFill`], and the checksum over the RFC 9293 §3.1 pseudo-header.
//!
//! Parsing accepts more than emitting produces: IPv4 options are skipped, and the urgent pointer,
//! the reserved bits and unknown TCP options are not represented in [`TcpSegment`], so re-emitting
//! such a packet is not byte-identical.
//!
//! # Option decoding policy
//!
//! * EOL (kind 0) ends the list; NOP (kind 1) is skipped; options may appear in any order.
//! * Unknown kinds are skipped using their length byte (RFC 9293 §3.2, MUST-6).
//! * A length byte below 2, a missing length byte, or an option running past the data offset is an
//!   error ([`WireError::BadOptionLen`], [`WireError::TruncatedOption`]; RFC 9293 §3.2, MUST-7).
//! * A known kind with a length other than its fixed one (MSS 4, window scale 3, SACK-permitted 2,
//!   timestamps 10) or a SACK option whose length is not `2 + 8n` with `n >= 1` is
//!   [`WireError::BadOptionLen`].
//! * A repeated option replaces the earlier occurrence (for SACK: the blocks of the last SACK option).
//! * A window scale above 14 is kept as received; the TCP layer clamps it (RFC 7323 §2.3).
//! * More than four SACK blocks cannot occur: the option area is at most 40 bytes, so a SACK option
//!   holds at most `(40 - 2) / 8 = 4` blocks, and a length byte claiming more runs past the option
//!   area ([`WireError::TruncatedOption`]). Nothing is ever silently truncated.

use std::fmt;
use std::ops::Range;

use crate::{EcnCodepoint, SackBlock, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

/// IP protocol number of TCP (RFC 791 §3.1, "Protocol"; IANA protocol numbers).
pub const IP_PROTO_TCP: u8 = 6;
/// Time to live of emitted datagrams (the Linux default, `net.ipv4.ip_default_ttl`).
pub const DEFAULT_TTL: u8 = 64;
/// Room for TCP options: the data offset is 4 bits of 32-bit words, 15 * 4 - 20 = 40 bytes.
pub const MAX_OPTIONS_LEN: usize = 40;

const IPV4_HEADER_LEN: usize = crate::IPV4_HEADER_LEN as usize;
const TCP_HEADER_LEN: usize = crate::TCP_HEADER_LEN as usize;
/// Largest value of the 16-bit IPv4 total length and of the pseudo-header TCP length.
const MAX_LEN16: usize = u16::MAX as usize;

/// Why bytes could not be parsed, or a segment could not be emitted.
///
/// Variants carry the offending raw field value where there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WireError {
    /// The buffer ends before a fixed header does (20 bytes of IPv4 or TCP), or before the end
    /// the IPv4 total length announces.
    Truncated,
    /// The IPv4 version field (RFC 791 §3.1) is not 4; carries the version.
    BadIpVersion(u8),
    /// The IPv4 header length (IHL, in 32-bit words) is below the minimum of 5; carries the IHL.
    BadIpHeaderLen(u8),
    /// The IPv4 total length is smaller than the IPv4 header length; carries the total length.
    BadIpTotalLen(u16),
    /// The datagram is a fragment (more-fragments set or non-zero fragment offset, RFC 791 §3.2);
    /// the TCP header cannot be decoded without reassembly.
    Fragmented,
    /// A fragment to emit does not start at a multiple of 8 bytes, or a fragment other than the last
    /// does not carry a multiple of 8 bytes (RFC 791 §3.2).
    BadFragment,
    /// The IPv4 protocol is not TCP (6); carries the protocol number.
    NotTcp(u8),
    /// The IPv4 header checksum (RFC 791 §3.1) does not verify.
    BadIpChecksum,
    /// The TCP data offset (RFC 9293 §3.1, in 32-bit words) is below 5 or points past the end of
    /// the segment; carries the data offset.
    BadDataOffset(u8),
    /// The TCP checksum over the pseudo-header, header and payload (RFC 9293 §3.1) does not verify.
    BadTcpChecksum,
    /// A TCP option's length byte is missing, or the option runs past the end of the option area.
    TruncatedOption {
        /// The option kind.
        kind: u8,
    },
    /// A TCP option's length byte is below 2, or wrong for its (known) kind.
    BadOptionLen {
        /// The option kind.
        kind: u8,
        /// The length byte as received.
        len: u8,
    },
    /// Emit only: the options would take this many bytes, more than [`MAX_OPTIONS_LEN`].
    OptionsTooLong(u32),
    /// The TCP segment (for [`emit_tcp`] / [`parse_tcp`]) or the IPv4 datagram (for
    /// [`emit_ipv4_tcp`]) would be, or is, this many bytes, more than the 65535 that the 16-bit
    /// length fields can express.
    TooLong(u64),
    /// The IPv4 protocol is not RDP (27); carries the protocol number.
    NotRdp(u8),
    /// The RDP version bits (RFC 908 §4.1) are neither 1 nor 2; carries them.
    BadRdpVersion(u8),
    /// The RDP Header Length (16-bit words) is below 9, runs past the buffer, or leaves a variable area
    /// that is not whole SYN options or EACK entries; carries the field.
    BadRdpHeaderLen(u8),
    /// The RDP checksum (v1: RFC 908 §4.1 nonlinear; v2: RFC 1151 §2 TCP checksum) does not verify.
    BadRdpChecksum,
    /// The RDP header is well formed but says something tcplab cannot represent or emit (the text says
    /// what: a v1 port above 255, a SYN flag without options, EACK entries spread over more than 128
    /// numbers).
    BadRdp(&'static str),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WireError::Truncated => f.write_str("packet truncated"),
            WireError::BadIpVersion(v) => write!(f, "IP version {v}, expected 4"),
            WireError::BadIpHeaderLen(ihl) => write!(f, "IPv4 header length {ihl} words, below 5"),
            WireError::BadIpTotalLen(len) => {
                write!(f, "IPv4 total length {len} is shorter than the header")
            }
            WireError::Fragmented => f.write_str("IPv4 fragment"),
            WireError::BadFragment => f.write_str("IPv4 fragment offset or length not a multiple of 8 bytes"),
            WireError::NotTcp(p) => write!(f, "IP protocol {p}, expected TCP (6)"),
            WireError::BadIpChecksum => f.write_str("bad IPv4 header checksum"),
            WireError::BadDataOffset(off) => write!(f, "bad TCP data offset {off} words"),
            WireError::BadTcpChecksum => f.write_str("bad TCP checksum"),
            WireError::TruncatedOption { kind } => write!(f, "TCP option kind {kind} truncated"),
            WireError::BadOptionLen { kind, len } => {
                write!(f, "TCP option kind {kind} has bad length {len}")
            }
            WireError::OptionsTooLong(n) => {
                write!(f, "TCP options need {n} bytes, more than {MAX_OPTIONS_LEN}")
            }
            WireError::TooLong(n) => write!(f, "{n} bytes exceed the 16-bit length field"),
            WireError::NotRdp(p) => write!(f, "IP protocol {p}, expected RDP (27)"),
            WireError::BadRdpVersion(v) => write!(f, "RDP version {v}, expected 1 or 2"),
            WireError::BadRdpHeaderLen(w) => write!(f, "bad RDP header length {w} words"),
            WireError::BadRdpChecksum => f.write_str("bad RDP checksum"),
            WireError::BadRdp(what) => write!(f, "RDP: {what}"),
        }
    }
}

impl std::error::Error for WireError {}

/// Whether the parsers verify checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Checksums {
    /// Verify the IPv4 header checksum and the TCP checksum (the default).
    #[default]
    Verify,
    /// Skip both checks, e.g. for packets captured on a host with checksum offload, whose outgoing
    /// packets are captured before the NIC fills the checksum in.
    Ignore,
}

/// The payload bytes [`emit_ipv4_tcp`] / [`emit_tcp`] write (the simulator carries only a length).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PayloadFill {
    /// Every payload byte is 0.
    #[default]
    Zeros,
    /// Every payload byte is the given value.
    Byte(u8),
    /// The byte at sequence number `n` is `n mod 256` (the low byte of `n`). The first payload byte
    /// has sequence number `seq`, or `seq + 1` on a SYN (RFC 9293 §3.4). Retransmissions therefore
    /// carry the same bytes as the original, and a receiver can check any byte against its
    /// sequence number.
    SeqLowByte,
}

/// The IPv4 header fields of a parsed datagram that [`TcpSegment`] does not carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Ipv4Info {
    /// Source address (RFC 791 §3.1).
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Identification.
    pub ident: u16,
    /// Time to live.
    pub ttl: u8,
    /// The don't-fragment flag.
    pub dont_fragment: bool,
    /// The former type-of-service byte: DSCP in the upper six bits (RFC 2474), ECN in the lower two
    /// (RFC 3168).
    pub tos: u8,
    /// Header length in bytes, IPv4 options included.
    pub header_len: u8,
    /// Total length of the datagram in bytes. Bytes of the buffer beyond it (e.g. Ethernet padding)
    /// are ignored.
    pub total_len: u16,
}

/// Byte ranges of the header fields.
mod field {
    pub type Field = std::ops::Range<usize>;

    /// IPv4 header, RFC 791 §3.1.
    pub mod ipv4 {
        use super::Field;
        /// Version (upper 4 bits) and IHL, the header length in 32-bit words (lower 4 bits).
        pub const VER_IHL: usize = 0;
        /// Type of service; today DSCP (RFC 2474) and ECN (RFC 3168).
        pub const TOS: usize = 1;
        /// Total length of the datagram in bytes, header included.
        pub const TOTAL_LEN: Field = 2..4;
        /// Identification, for reassembly.
        pub const IDENT: Field = 4..6;
        /// Flags (reserved, DF, MF; upper 3 bits) and fragment offset in 8-byte units (13 bits).
        pub const FLAGS_FRAG: Field = 6..8;
        /// Time to live.
        pub const TTL: usize = 8;
        /// Protocol of the payload (6 for TCP).
        pub const PROTOCOL: usize = 9;
        /// Header checksum: one's complement of the one's complement sum of the header words.
        pub const CHECKSUM: Field = 10..12;
        /// Source address.
        pub const SRC: Field = 12..16;
        /// Destination address.
        pub const DST: Field = 16..20;
    }

    /// TCP header, RFC 9293 §3.1.
    pub mod tcp {
        use super::Field;
        /// Source port.
        pub const SRC_PORT: Field = 0..2;
        /// Destination port.
        pub const DST_PORT: Field = 2..4;
        /// Sequence number.
        pub const SEQ: Field = 4..8;
        /// Acknowledgment number.
        pub const ACK: Field = 8..12;
        /// Data offset in 32-bit words (upper 4 bits) and reserved bits (lower 4).
        pub const DATA_OFF: usize = 12;
        /// Control bits CWR ECE URG ACK PSH RST SYN FIN.
        pub const FLAGS: usize = 13;
        /// Window, before window scaling (RFC 7323 §2).
        pub const WINDOW: Field = 14..16;
        /// Checksum over pseudo-header, header and payload.
        pub const CHECKSUM: Field = 16..18;
        /// Urgent pointer.
        pub const URGENT: Field = 18..20;
        /// Start of the options; they end at the data offset.
        pub const OPTIONS: usize = 20;
    }
}

/// TCP option kinds (IANA "TCP Option Kind Numbers").
mod kind {
    /// End of option list (RFC 9293 §3.2).
    pub const EOL: u8 = 0;
    /// No-operation, used as padding (RFC 9293 §3.2).
    pub const NOP: u8 = 1;
    /// Maximum segment size, length 4 (RFC 9293 §3.2).
    pub const MSS: u8 = 2;
    /// Window scale, length 3 (RFC 7323 §2.2).
    pub const WINDOW_SCALE: u8 = 3;
    /// SACK permitted, length 2 (RFC 2018 §2).
    pub const SACK_PERMITTED: u8 = 4;
    /// SACK blocks, length 2 + 8n (RFC 2018 §3).
    pub const SACK: u8 = 5;
    /// Timestamps, length 10 (RFC 7323 §3.2).
    pub const TIMESTAMPS: u8 = 8;
}

fn get_u16(data: &[u8], f: Range<usize>) -> u16 {
    let b = &data[f];
    u16::from_be_bytes([b[0], b[1]])
}

fn get_u32(data: &[u8], f: Range<usize>) -> u32 {
    let b = &data[f];
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn get_addr(data: &[u8], f: Range<usize>) -> [u8; 4] {
    let b = &data[f];
    [b[0], b[1], b[2], b[3]]
}

/// Internet checksum arithmetic (RFC 1071): one's complement sums of 16-bit big-endian words.
mod checksum {
    /// Adds `data` as big-endian 16-bit words to `acc`, padding an odd last byte with a zero.
    /// Unfolded; a `u64` cannot overflow for any slice that fits in memory.
    pub fn add(acc: u64, data: &[u8]) -> u64 {
        let mut chunks = data.chunks_exact(2);
        let mut sum = acc;
        for c in &mut chunks {
            sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
        }
        if let [last] = chunks.remainder() {
            sum += u64::from(u16::from_be_bytes([*last, 0]));
        }
        sum
    }

    /// Folds the carries back in, giving the 16-bit one's complement sum.
    pub fn fold(mut sum: u64) -> u16 {
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u16
    }

    /// The sum of the IPv4 pseudo-header (RFC 9293 §3.1): source, destination, zero, protocol, and
    /// the TCP length (header plus payload, at most 65535).
    pub fn pseudo_header(src: [u8; 4], dst: [u8; 4], protocol: u8, len: u16) -> u64 {
        let sum = add(add(0, &src), &dst);
        sum + u64::from(protocol) + u64::from(len)
    }
}

/// A view of an IPv4 header (RFC 791 §3.1) and its payload in a byte buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps a buffer without checks; accessors panic if it is too short for what they read.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len); then no accessor panics.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that the buffer holds a fixed header, that the version is 4, and that
    /// `20 <= header length <= total length <= buffer length`.
    pub fn check_len(&self) -> Result<(), WireError> {
        let data = self.buffer.as_ref();
        if data.len() < IPV4_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 4 {
            return Err(WireError::BadIpVersion(self.version()));
        }
        let header_len = self.header_len();
        if header_len < IPV4_HEADER_LEN {
            return Err(WireError::BadIpHeaderLen(data[field::ipv4::VER_IHL] & 0x0f));
        }
        let total_len = self.total_len();
        if usize::from(total_len) < header_len {
            return Err(WireError::BadIpTotalLen(total_len));
        }
        if usize::from(total_len) > data.len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The version field (4 for IPv4).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::ipv4::VER_IHL] >> 4
    }

    /// The header length in bytes (IHL times 4), options included.
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::ipv4::VER_IHL] & 0x0f) * 4
    }

    /// The type-of-service byte (DSCP and ECN).
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::ipv4::TOS]
    }

    /// The total length of the datagram in bytes.
    pub fn total_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ipv4::TOTAL_LEN)
    }

    /// The identification field.
    pub fn ident(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ipv4::IDENT)
    }

    /// The don't-fragment flag.
    pub fn dont_fragment(&self) -> bool {
        get_u16(self.buffer.as_ref(), field::ipv4::FLAGS_FRAG) & 0x4000 != 0
    }

    /// The more-fragments flag.
    pub fn more_fragments(&self) -> bool {
        get_u16(self.buffer.as_ref(), field::ipv4::FLAGS_FRAG) & 0x2000 != 0
    }

    /// The fragment offset in bytes.
    pub fn frag_offset(&self) -> u16 {
        (get_u16(self.buffer.as_ref(), field::ipv4::FLAGS_FRAG) & 0x1fff) << 3
    }

    /// The time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::ipv4::TTL]
    }

    /// The protocol number of the payload.
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::ipv4::PROTOCOL]
    }

    /// The header checksum field.
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ipv4::CHECKSUM)
    }

    /// The source address.
    pub fn src_addr(&self) -> [u8; 4] {
        get_addr(self.buffer.as_ref(), field::ipv4::SRC)
    }

    /// The destination address.
    pub fn dst_addr(&self) -> [u8; 4] {
        get_addr(self.buffer.as_ref(), field::ipv4::DST)
    }

    /// Whether the header checksum verifies: the one's complement sum of all header words,
    /// checksum included, is 0xffff.
    pub fn verify_checksum(&self) -> bool {
        let header = &self.buffer.as_ref()[..self.header_len()];
        checksum::fold(checksum::add(0, header)) == 0xffff
    }

    /// The payload: the bytes after the header, up to the total length.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..usize::from(self.total_len())]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets the version to 4 and the header length (a multiple of 4, from 20 to 60 bytes).
    pub fn set_version_and_header_len(&mut self, header_len: usize) {
        debug_assert!(header_len & 3 == 0 && (20..=60).contains(&header_len));
        self.buffer.as_mut()[field::ipv4::VER_IHL] = 0x40 | ((header_len / 4) as u8 & 0x0f);
    }

    /// Sets the type-of-service byte.
    pub fn set_tos(&mut self, tos: u8) {
        self.buffer.as_mut()[field::ipv4::TOS] = tos;
    }

    /// Sets the total length.
    pub fn set_total_len(&mut self, len: u16) {
        self.buffer.as_mut()[field::ipv4::TOTAL_LEN].copy_from_slice(&len.to_be_bytes());
    }

    /// Sets the identification.
    pub fn set_ident(&mut self, ident: u16) {
        self.buffer.as_mut()[field::ipv4::IDENT].copy_from_slice(&ident.to_be_bytes());
    }

    /// Sets the flags to DF (or none) and the fragment offset to 0.
    pub fn set_unfragmented(&mut self, dont_fragment: bool) {
        let v: u16 = if dont_fragment { 0x4000 } else { 0 };
        self.buffer.as_mut()[field::ipv4::FLAGS_FRAG].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the time to live.
    /// Sets the flags and fragment offset field (RFC 791 §3.1): DF clear, MF as given, the offset in
    /// bytes (a multiple of 8, below 65536).
    pub fn set_fragment(&mut self, more: bool, offset: u16) {
        let v: u16 = if more { 0x2000 } else { 0 } | (offset >> 3);
        self.buffer.as_mut()[field::ipv4::FLAGS_FRAG].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_ttl(&mut self, ttl: u8) {
        self.buffer.as_mut()[field::ipv4::TTL] = ttl;
    }

    /// Sets the protocol number.
    pub fn set_protocol(&mut self, protocol: u8) {
        self.buffer.as_mut()[field::ipv4::PROTOCOL] = protocol;
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, checksum: u16) {
        self.buffer.as_mut()[field::ipv4::CHECKSUM].copy_from_slice(&checksum.to_be_bytes());
    }

    /// Sets the source address.
    pub fn set_src_addr(&mut self, addr: [u8; 4]) {
        self.buffer.as_mut()[field::ipv4::SRC].copy_from_slice(&addr);
    }

    /// Sets the destination address.
    pub fn set_dst_addr(&mut self, addr: [u8; 4]) {
        self.buffer.as_mut()[field::ipv4::DST].copy_from_slice(&addr);
    }

    /// Computes the header checksum (over the header length's worth of bytes) and stores it.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let header = &self.buffer.as_ref()[..self.header_len()];
        let sum = !checksum::fold(checksum::add(0, header));
        self.set_checksum(sum);
    }

    /// The payload, mutably: the bytes after the header, up to the total length.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let range = self.header_len()..usize::from(self.total_len());
        &mut self.buffer.as_mut()[range]
    }
}

/// A view of a TCP segment (RFC 9293 §3.1): header, options and payload, in a byte buffer that
/// holds exactly the segment (its length is the "TCP length" of the pseudo-header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Wraps a buffer without checks; accessors panic if it is too short for what they read.
    pub const fn new_unchecked(buffer: T) -> Self {
        TcpPacket { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len); then no accessor panics.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let packet = Self::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that `20 <= data offset * 4 <= buffer length <= 65535`.
    pub fn check_len(&self) -> Result<(), WireError> {
        let data = self.buffer.as_ref();
        if data.len() < TCP_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if data.len() > MAX_LEN16 {
            return Err(WireError::TooLong(data.len() as u64));
        }
        let header_len = self.header_len();
        if header_len < TCP_HEADER_LEN || header_len > data.len() {
            return Err(WireError::BadDataOffset(data[field::tcp::DATA_OFF] >> 4));
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The source port.
    pub fn src_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::tcp::SRC_PORT)
    }

    /// The destination port.
    pub fn dst_port(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::tcp::DST_PORT)
    }

    /// The sequence number.
    pub fn seq(&self) -> SeqNumber {
        SeqNumber(get_u32(self.buffer.as_ref(), field::tcp::SEQ))
    }

    /// The acknowledgment number.
    pub fn ack(&self) -> SeqNumber {
        SeqNumber(get_u32(self.buffer.as_ref(), field::tcp::ACK))
    }

    /// The header length in bytes (data offset times 4), options included.
    pub fn header_len(&self) -> usize {
        usize::from(self.buffer.as_ref()[field::tcp::DATA_OFF] >> 4) * 4
    }

    /// The control bits.
    pub fn flags(&self) -> TcpFlags {
        TcpFlags(self.buffer.as_ref()[field::tcp::FLAGS])
    }

    /// The window field, unscaled.
    pub fn window(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::tcp::WINDOW)
    }

    /// The checksum field.
    pub fn checksum(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::tcp::CHECKSUM)
    }

    /// The urgent pointer.
    pub fn urgent(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::tcp::URGENT)
    }

    /// The raw option bytes (between the fixed header and the data offset).
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::tcp::OPTIONS..self.header_len()]
    }

    /// The payload (after the data offset).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }

    /// Whether the checksum verifies over the pseudo-header for `src` → `dst`, header and payload.
    pub fn verify_checksum(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        let data = self.buffer.as_ref();
        // `check_len` bounds the length by 65535; saturate rather than wrap if unchecked.
        let len = u16::try_from(data.len()).unwrap_or(u16::MAX);
        let sum = checksum::pseudo_header(src, dst, IP_PROTO_TCP, len);
        checksum::fold(checksum::add(sum, data)) == 0xffff
    }

    /// Decodes the header into a [`TcpSegment`], without verifying the checksum. Fails only on
    /// malformed options (see the module docs for the policy); never panics on a checked view. The ECN
    /// field is the IP header's: Not-ECT here, set by [`parse_ipv4_tcp`].
    pub fn to_segment(&self) -> Result<TcpSegment, WireError> {
        Ok(TcpSegment {
            src_port: self.src_port(),
            dst_port: self.dst_port(),
            seq: self.seq(),
            ack: self.ack(),
            flags: self.flags(),
            window: self.window(),
            options: decode_options(self.options())?,
            payload_len: self.payload().len() as u32,
            ecn: EcnCodepoint::NotEct,
        })
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, port: u16) {
        self.buffer.as_mut()[field::tcp::SRC_PORT].copy_from_slice(&port.to_be_bytes());
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, port: u16) {
        self.buffer.as_mut()[field::tcp::DST_PORT].copy_from_slice(&port.to_be_bytes());
    }

    /// Sets the sequence number.
    pub fn set_seq(&mut self, seq: SeqNumber) {
        self.buffer.as_mut()[field::tcp::SEQ].copy_from_slice(&seq.0.to_be_bytes());
    }

    /// Sets the acknowledgment number.
    pub fn set_ack(&mut self, ack: SeqNumber) {
        self.buffer.as_mut()[field::tcp::ACK].copy_from_slice(&ack.0.to_be_bytes());
    }

    /// Sets the data offset from a header length (a multiple of 4, from 20 to 60 bytes) and clears
    /// the reserved bits.
    pub fn set_header_len(&mut self, header_len: usize) {
        debug_assert!(header_len & 3 == 0 && (20..=60).contains(&header_len));
        self.buffer.as_mut()[field::tcp::DATA_OFF] = ((header_len / 4) as u8) << 4;
    }

    /// Sets the control bits.
    pub fn set_flags(&mut self, flags: TcpFlags) {
        self.buffer.as_mut()[field::tcp::FLAGS] = flags.0;
    }

    /// Sets the window field.
    pub fn set_window(&mut self, window: u16) {
        self.buffer.as_mut()[field::tcp::WINDOW].copy_from_slice(&window.to_be_bytes());
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, checksum: u16) {
        self.buffer.as_mut()[field::tcp::CHECKSUM].copy_from_slice(&checksum.to_be_bytes());
    }

    /// Sets the urgent pointer.
    pub fn set_urgent(&mut self, urgent: u16) {
        self.buffer.as_mut()[field::tcp::URGENT].copy_from_slice(&urgent.to_be_bytes());
    }

    /// The raw option bytes, mutably (as far as the data offset says).
    pub fn options_mut(&mut self) -> &mut [u8] {
        let end = self.header_len();
        &mut self.buffer.as_mut()[field::tcp::OPTIONS..end]
    }

    /// The payload, mutably.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }

    /// Computes the checksum over the pseudo-header for `src` → `dst`, header and payload, and
    /// stores it. The buffer must be at most 65535 bytes long (as `check_len` ensures).
    pub fn fill_checksum(&mut self, src: [u8; 4], dst: [u8; 4]) {
        self.set_checksum(0);
        let data = self.buffer.as_ref();
        let len = u16::try_from(data.len()).unwrap_or(u16::MAX);
        let sum = checksum::pseudo_header(src, dst, IP_PROTO_TCP, len);
        let sum = !checksum::fold(checksum::add(sum, data));
        self.set_checksum(sum);
    }
}

/// Decodes an option area (RFC 9293 §3.2) following the policy in the module docs.
///
/// The `deny` below (also on the `parse_*` functions) makes clippy reject any indexing, slicing,
/// `unwrap` or `panic!` here, backing the no-panic contract mechanically.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
fn decode_options(mut rest: &[u8]) -> Result<TcpOptions, WireError> {
    let mut out = TcpOptions::default();
    while let Some((&kind, after_kind)) = rest.split_first() {
        match kind {
            kind::EOL => break,
            kind::NOP => {
                rest = after_kind;
                continue;
            }
            _ => {}
        }
        let Some(&len) = after_kind.first() else {
            return Err(WireError::TruncatedOption { kind });
        };
        if len < 2 {
            return Err(WireError::BadOptionLen { kind, len });
        }
        let (Some(body), Some(next)) = (rest.get(2..usize::from(len)), rest.get(usize::from(len)..)) else {
            return Err(WireError::TruncatedOption { kind });
        };
        let bad_len = WireError::BadOptionLen { kind, len };
        match kind {
            kind::MSS => match *body {
                [a, b] => out.mss = Some(u16::from_be_bytes([a, b])),
                _ => return Err(bad_len),
            },
            kind::WINDOW_SCALE => match *body {
                [shift] => out.window_scale = Some(shift),
                _ => return Err(bad_len),
            },
            kind::SACK_PERMITTED => match *body {
                [] => out.sack_permitted = true,
                _ => return Err(bad_len),
            },
            kind::TIMESTAMPS => match *body {
                [a, b, c, d, e, f, g, h] => {
                    out.timestamps = Some(Timestamps {
                        tsval: u32::from_be_bytes([a, b, c, d]),
                        tsecr: u32::from_be_bytes([e, f, g, h]),
                    })
                }
                _ => return Err(bad_len),
            },
            kind::SACK => {
                if body.is_empty() || body.len() % 8 != 0 {
                    return Err(bad_len);
                }
                out.sack = Default::default();
                for block in body.chunks_exact(8) {
                    if let [a, b, c, d, e, f, g, h] = *block {
                        // At most four blocks fit in the option area (module docs), so `push`
                        // never refuses one here.
                        out.sack.push(SackBlock {
                            left: SeqNumber(u32::from_be_bytes([a, b, c, d])),
                            right: SeqNumber(u32::from_be_bytes([e, f, g, h])),
                        });
                    }
                }
            }
            _ => {} // Unknown: skipped (RFC 9293 §3.2, MUST-6).
        }
        rest = next;
    }
    Ok(out)
}

/// Encodes `opts` in the Linux layout (see the [`crate::tcp`] module docs):
///
/// ```text
/// MSS                         02 04 mm mm
/// timestamps (+SACK-perm)     01 01 08 0a <tsval> <tsecr>   or   04 02 08 0a <tsval> <tsecr>
/// SACK-perm without TS        01 01 04 02
/// window scale                01 03 03 ss
/// SACK blocks                 01 01 05 <2+8n> (<left> <right>)*n
/// ```
///
/// `out` must be exactly `opts.encoded_len()` bytes (the caller checked that it is at most 40).
fn encode_options(opts: &TcpOptions, out: &mut [u8]) {
    let mut pos = 0;
    let mut put = |bytes: &[u8]| {
        out[pos..pos + bytes.len()].copy_from_slice(bytes);
        pos += bytes.len();
    };
    if let Some(mss) = opts.mss {
        put(&[kind::MSS, 4]);
        put(&mss.to_be_bytes());
    }
    if let Some(ts) = opts.timestamps {
        if opts.sack_permitted {
            put(&[kind::SACK_PERMITTED, 2]);
        } else {
            put(&[kind::NOP, kind::NOP]);
        }
        put(&[kind::TIMESTAMPS, 10]);
        put(&ts.tsval.to_be_bytes());
        put(&ts.tsecr.to_be_bytes());
    } else if opts.sack_permitted {
        put(&[kind::NOP, kind::NOP, kind::SACK_PERMITTED, 2]);
    }
    if let Some(shift) = opts.window_scale {
        put(&[kind::NOP, kind::WINDOW_SCALE, 3, shift]);
    }
    if !opts.sack.is_empty() {
        put(&[kind::NOP, kind::NOP, kind::SACK, 2 + 8 * opts.sack.len() as u8]);
        for block in opts.sack.as_slice() {
            put(&block.left.0.to_be_bytes());
            put(&block.right.0.to_be_bytes());
        }
    }
    debug_assert_eq!(pos, out.len(), "encode_options disagrees with TcpOptions::encoded_len");
}

/// Checks the segment's options against the 40-byte limit and returns the TCP length (header
/// plus payload) if it, plus `ip_overhead` header bytes, is at most 65535. Computed in `u64` so
/// no input overflows.
fn checked_tcp_len(seg: &TcpSegment, ip_overhead: u64) -> Result<usize, WireError> {
    let options = seg.options.encoded_len();
    if options as usize > MAX_OPTIONS_LEN {
        return Err(WireError::OptionsTooLong(options));
    }
    let tcp_len = TCP_HEADER_LEN as u64 + u64::from(options) + u64::from(seg.payload_len);
    if tcp_len + ip_overhead > MAX_LEN16 as u64 {
        return Err(WireError::TooLong(tcp_len + ip_overhead));
    }
    Ok(tcp_len as usize)
}

/// Writes the whole segment into `out`, which is exactly the TCP length `checked_tcp_len` returned.
fn write_tcp(seg: &TcpSegment, src_ip: [u8; 4], dst_ip: [u8; 4], fill: PayloadFill, out: &mut [u8]) {
    let header_len = TCP_HEADER_LEN + seg.options.encoded_len() as usize;
    let mut tcp = TcpPacket::new_unchecked(out);
    tcp.set_src_port(seg.src_port);
    tcp.set_dst_port(seg.dst_port);
    tcp.set_seq(seg.seq);
    tcp.set_ack(seg.ack);
    tcp.set_header_len(header_len);
    tcp.set_flags(seg.flags);
    tcp.set_window(seg.window);
    tcp.set_urgent(0);
    encode_options(&seg.options, tcp.options_mut());
    let payload = tcp.payload_mut();
    match fill {
        PayloadFill::Zeros => payload.fill(0),
        PayloadFill::Byte(b) => payload.fill(b),
        PayloadFill::SeqLowByte => {
            let first = (seg.seq + u32::from(seg.flags.syn())).0;
            for (i, byte) in payload.iter_mut().enumerate() {
                *byte = first.wrapping_add(i as u32) as u8;
            }
        }
    }
    tcp.fill_checksum(src_ip, dst_ip);
}

/// Appends the TCP segment `seg` (header, options, payload; checksummed for `src_ip` → `dst_ip`)
/// to `buf` and returns the number of bytes appended, `seg.header_len() + seg.payload_len`.
///
/// Errors (leaving `buf` untouched): [`WireError::OptionsTooLong`] when the options exceed 40
/// bytes, [`WireError::TooLong`] when the segment exceeds 65535 bytes.
pub fn emit_tcp(
    seg: &TcpSegment,
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    payload: PayloadFill,
    buf: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let tcp_len = checked_tcp_len(seg, 0)?;
    let start = buf.len();
    buf.resize(start + tcp_len, 0);
    write_tcp(seg, src_ip, dst_ip, payload, &mut buf[start..]);
    Ok(tcp_len)
}

/// Appends a complete IPv4 datagram carrying `seg` to `buf` and returns the number of bytes
/// appended, `seg.ip_len()`. See the module docs for the fixed IPv4 fields; `ip_id` is the
/// identification field.
///
/// Errors (leaving `buf` untouched): [`WireError::OptionsTooLong`] when the options exceed 40
/// bytes, [`WireError::TooLong`] when the datagram exceeds 65535 bytes.
pub fn emit_ipv4_tcp(
    seg: &TcpSegment,
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    ip_id: u16,
    payload: PayloadFill,
    buf: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let tcp_len = checked_tcp_len(seg, IPV4_HEADER_LEN as u64)?;
    let total_len = IPV4_HEADER_LEN + tcp_len;
    let start = buf.len();
    buf.resize(start + total_len, 0);
    let (header, tcp) = buf[start..].split_at_mut(IPV4_HEADER_LEN);
    write_tcp(seg, src_ip, dst_ip, payload, tcp);
    let mut ip = Ipv4Packet::new_unchecked(header);
    ip.set_version_and_header_len(IPV4_HEADER_LEN);
    ip.set_tos(seg.ecn.bits());
    ip.set_total_len(total_len as u16);
    ip.set_ident(ip_id);
    ip.set_unfragmented(true);
    ip.set_ttl(DEFAULT_TTL);
    ip.set_protocol(IP_PROTO_TCP);
    ip.set_src_addr(src_ip);
    ip.set_dst_addr(dst_ip);
    ip.fill_checksum();
    Ok(total_len)
}

/// Appends to `buf` the fragment of `datagram` (a whole IPv4 datagram with a 20-byte header, as the
/// `emit_ipv4_*` functions write it) that carries `len` bytes of its payload from `offset` (RFC 791 §3.2):
/// the datagram's header with the total length, the more-fragments flag (`more`) and the fragment offset
/// set, don't-fragment clear, and the checksum refilled. Returns the bytes appended.
///
/// Errors (leaving `buf` untouched): [`WireError::Truncated`] when `datagram` is not a whole datagram or
/// the range is outside its payload, [`WireError::BadFragment`] when `offset` is not a multiple of 8 or a
/// fragment that is not the last has a length that is not.
pub fn emit_ipv4_fragment(
    datagram: &[u8],
    offset: usize,
    len: usize,
    more: bool,
    buf: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let ip = Ipv4Packet::new_checked(datagram)?;
    if ip.header_len() != IPV4_HEADER_LEN || ip.total_len() as usize != datagram.len() {
        return Err(WireError::Truncated);
    }
    let payload = &datagram[IPV4_HEADER_LEN..];
    let end = offset.checked_add(len).filter(|&e| e <= payload.len()).ok_or(WireError::Truncated)?;
    if !offset.is_multiple_of(8) || (more && !len.is_multiple_of(8)) || offset > 0xffff {
        return Err(WireError::BadFragment);
    }
    let start = buf.len();
    buf.extend_from_slice(&datagram[..IPV4_HEADER_LEN]);
    buf.extend_from_slice(&payload[offset..end]);
    let mut h = Ipv4Packet::new_unchecked(&mut buf[start..start + IPV4_HEADER_LEN]);
    h.set_total_len((IPV4_HEADER_LEN + len) as u16);
    h.set_fragment(more, offset as u16);
    h.fill_checksum();
    Ok(IPV4_HEADER_LEN + len)
}

/// Parses `bytes`, exactly one TCP segment sent from `src_ip` to `dst_ip`, verifying the checksum.
/// Never panics.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub fn parse_tcp(bytes: &[u8], src_ip: [u8; 4], dst_ip: [u8; 4]) -> Result<TcpSegment, WireError> {
    let tcp = TcpPacket::new_checked(bytes)?;
    if !tcp.verify_checksum(src_ip, dst_ip) {
        return Err(WireError::BadTcpChecksum);
    }
    tcp.to_segment()
}

/// Parses an IPv4 datagram carrying a TCP segment, verifying both checksums. Bytes after the
/// IPv4 total length are ignored. Never panics.
pub fn parse_ipv4_tcp(bytes: &[u8]) -> Result<(Ipv4Info, TcpSegment), WireError> {
    parse_ipv4_tcp_with(bytes, Checksums::Verify)
}

/// The checks every IPv4 parse starts with (lengths and version, header checksum as chosen, no fragment) and
/// the header's fields; the caller checks the protocol. Never panics.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub(crate) fn open_ipv4(bytes: &[u8], checksums: Checksums) -> Result<(Ipv4Packet<&[u8]>, Ipv4Info), WireError> {
    let ip = Ipv4Packet::new_checked(bytes)?;
    if checksums == Checksums::Verify && !ip.verify_checksum() {
        return Err(WireError::BadIpChecksum);
    }
    if ip.more_fragments() || ip.frag_offset() != 0 {
        return Err(WireError::Fragmented);
    }
    let info = Ipv4Info {
        src: ip.src_addr(),
        dst: ip.dst_addr(),
        ident: ip.ident(),
        ttl: ip.ttl(),
        dont_fragment: ip.dont_fragment(),
        tos: ip.tos(),
        header_len: ip.header_len() as u8,
        total_len: ip.total_len(),
    };
    Ok((ip, info))
}

/// [`parse_ipv4_tcp`], with checksum verification as chosen. Checks, in order: IPv4 lengths and
/// version, IPv4 checksum, fragmentation, protocol, TCP data offset, TCP checksum, options.
/// Never panics.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub fn parse_ipv4_tcp_with(bytes: &[u8], checksums: Checksums) -> Result<(Ipv4Info, TcpSegment), WireError> {
    let verify = checksums == Checksums::Verify;
    let (ip, info) = open_ipv4(bytes, checksums)?;
    if ip.protocol() != IP_PROTO_TCP {
        return Err(WireError::NotTcp(ip.protocol()));
    }
    let tcp = TcpPacket::new_checked(ip.payload())?;
    if verify && !tcp.verify_checksum(info.src, info.dst) {
        return Err(WireError::BadTcpChecksum);
    }
    let mut seg = tcp.to_segment()?;
    seg.ecn = EcnCodepoint::from_tos(info.tos);
    Ok((info, seg))
}

pub mod rdp;

/// A transport's segment as the payload of an IPv4 datagram, as a packet trace writes it. A transport
/// implements it once for its segment type (TCP and RDP here; a new transport in its own crate), so that a
/// trace writer is generic over the segment and branches on no protocol.
pub trait Ipv4Payload {
    /// The encoding's open choices (RDP's reading of the RFCs' checksum and SDM bit); `()` where the
    /// protocol leaves none.
    type Codec: Default;
    /// The protocol's name in an error (`"TCP"`, `"RDP"`).
    const NAME: &'static str;

    /// Appends the IPv4 datagram carrying the segment to `buf` and returns its length; on an error `buf`
    /// is left as it was.
    fn emit_ipv4(
        &self,
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
        ip_id: u16,
        codec: &Self::Codec,
        payload: PayloadFill,
        buf: &mut Vec<u8>,
    ) -> Result<usize, WireError>;

    /// The segment's (source, destination) ports, to name it in an error.
    fn ports(&self) -> (u16, u16);
}

impl Ipv4Payload for TcpSegment {
    type Codec = ();
    const NAME: &'static str = "TCP";

    fn emit_ipv4(
        &self,
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
        ip_id: u16,
        _codec: &(),
        payload: PayloadFill,
        buf: &mut Vec<u8>,
    ) -> Result<usize, WireError> {
        emit_ipv4_tcp(self, src_ip, dst_ip, ip_id, payload, buf)
    }

    fn ports(&self) -> (u16, u16) {
        (self.src_port, self.dst_port)
    }
}

impl Ipv4Payload for crate::RdpSegment {
    type Codec = rdp::RdpCodec;
    const NAME: &'static str = "RDP";

    fn emit_ipv4(
        &self,
        src_ip: [u8; 4],
        dst_ip: [u8; 4],
        ip_id: u16,
        codec: &rdp::RdpCodec,
        payload: PayloadFill,
        buf: &mut Vec<u8>,
    ) -> Result<usize, WireError> {
        rdp::emit_ipv4_rdp(self, src_ip, dst_ip, ip_id, codec, payload, buf)
    }

    fn ports(&self) -> (u16, u16) {
        (self.src_port, self.dst_port)
    }
}

#[cfg(test)]
mod tests;
