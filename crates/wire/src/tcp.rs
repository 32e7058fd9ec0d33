//! The TCP segment as the simulator carries it ([`TcpSegment`]), and (in [`crate::codec`]) its real
//! on-the-wire encoding.
//!
//! Option layout follows what Linux emits, so header lengths (and hence goodput bounds) are the ones
//! measured on real links: MSS 4 bytes; window scale padded with a NOP to 4; timestamps as NOP NOP TS
//! (12); SACK-permitted shares the 12 bytes with timestamps when both are on (else NOP NOP SACK-perm, 4);
//! SACK blocks as NOP NOP SACK (4 + 8 per block). The 40 bytes of option room allow 4 SACK blocks, or 3
//! with timestamps (RFC 2018 §3).

use crate::seq::SeqNumber;

/// The control bits of the TCP header (RFC 9293 §3.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);

    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn union(self, other: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | other.0)
    }
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, o: TcpFlags) -> TcpFlags {
        self.union(o)
    }
}

impl std::fmt::Debug for TcpFlags {
    /// tcpdump spelling: `[S.]` is SYN+ACK, `[P.]` PSH+ACK, `[F.]` FIN+ACK.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::from("[");
        for (flag, c) in [
            (Self::SYN, 'S'),
            (Self::FIN, 'F'),
            (Self::RST, 'R'),
            (Self::PSH, 'P'),
            (Self::URG, 'U'),
            (Self::ECE, 'E'),
            (Self::CWR, 'W'),
        ] {
            if self.contains(flag) {
                s.push(c);
            }
        }
        if self.ack() {
            s.push('.');
        }
        s.push(']');
        f.write_str(&s)
    }
}

/// The RFC 7323 timestamps option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Timestamps {
    pub tsval: u32,
    pub tsecr: u32,
}

/// One SACK block: the bytes `[left, right)` were received (RFC 2018 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SackBlock {
    pub left: SeqNumber,
    pub right: SeqNumber,
}

/// Up to four SACK blocks, first block first (the most recently changed, or a D-SACK block).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SackBlocks {
    len: u8,
    blocks: [SackBlock; 4],
}

impl SackBlocks {
    pub const MAX: usize = 4;

    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Appends a block; returns false (and keeps the list) when four are already there.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = b;
            self.len += 1;
            true
        } else {
            false
        }
    }
    /// Keeps at most `n` blocks.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n.min(Self::MAX) as u8);
        // Clear what was cut, so that the derived equality and hash see only the blocks in use.
        for b in &mut self.blocks[self.len as usize..] {
            *b = SackBlock::default();
        }
    }
}

impl std::fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice().iter().map(|b| (b.left, b.right))).finish()
    }
}

/// The TCP options tcplab understands. Unknown options are skipped by the decoder (RFC 9293 §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TcpOptions {
    /// Maximum segment size (kind 2), SYN only.
    pub mss: Option<u16>,
    /// Window scale shift (kind 3), SYN only; values above 14 are treated as 14 (RFC 7323 §2.3).
    pub window_scale: Option<u8>,
    /// SACK-permitted (kind 4), SYN only.
    pub sack_permitted: bool,
    /// Timestamps (kind 8).
    pub timestamps: Option<Timestamps>,
    /// SACK blocks (kind 5).
    pub sack: SackBlocks,
}

impl TcpOptions {
    /// Bytes the options occupy in the header, padded as Linux pads them (see the module docs).
    pub fn encoded_len(&self) -> u32 {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.window_scale.is_some() {
            n += 4;
        }
        if self.timestamps.is_some() {
            n += 12;
        } else if self.sack_permitted {
            n += 4;
        }
        if !self.sack.is_empty() {
            n += 4 + 8 * self.sack.len() as u32;
        }
        n
    }
}

/// The ECN field of the IP header that carries a segment: the two low bits of the former TOS octet
/// (RFC 3168 §5). A sender marks the datagrams of an ECN-capable transport ECT(0) or ECT(1); a router
/// that would drop such a datagram to signal congestion may set CE instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum EcnCodepoint {
    /// Not-ECT (0b00): the transport does not take part in ECN; a congested router drops.
    #[default]
    NotEct = 0b00,
    /// ECT(1) (0b01).
    Ect1 = 0b01,
    /// ECT(0) (0b10): what RFC 3168 §6.1.2 senders (and Linux, `INET_ECN_xmit`) set.
    Ect0 = 0b10,
    /// CE (0b11), Congestion Experienced: set by a router on an ECT datagram instead of dropping it.
    Ce = 0b11,
}

impl EcnCodepoint {
    /// The codepoint in the two low bits of `tos` (the other six, the DSCP, are ignored).
    pub const fn from_tos(tos: u8) -> EcnCodepoint {
        match tos & 0b11 {
            0b00 => EcnCodepoint::NotEct,
            0b01 => EcnCodepoint::Ect1,
            0b10 => EcnCodepoint::Ect0,
            _ => EcnCodepoint::Ce,
        }
    }
    /// The two bits, as they sit in the TOS octet.
    pub const fn bits(self) -> u8 {
        self as u8
    }
    /// ECT(0) or ECT(1): a router may mark the datagram CE instead of dropping it (RFC 3168 §5).
    pub const fn is_ect(self) -> bool {
        matches!(self, EcnCodepoint::Ect0 | EcnCodepoint::Ect1)
    }
    pub const fn is_ce(self) -> bool {
        matches!(self, EcnCodepoint::Ce)
    }
}

/// A TCP segment without its payload bytes: the header fields and the payload length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TcpSegment {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNumber,
    /// Meaningful only when the ACK flag is set.
    pub ack: SeqNumber,
    pub flags: TcpFlags,
    /// The raw 16-bit window field, before window scaling.
    pub window: u16,
    pub options: TcpOptions,
    pub payload_len: u32,
    /// The ECN field of the IP header the segment travels in (RFC 3168 §5). The TCP sets it when it
    /// sends (ECT(0) on new data of an ECN connection, else Not-ECT); on the way a queue may turn ECT
    /// into CE ([`TcpSegment::mark_ce`]), and the receiving TCP reads it.
    pub ecn: EcnCodepoint,
}

impl TcpSegment {
    /// Sequence space the segment occupies: payload plus one each for SYN and FIN (RFC 9293 §3.4).
    pub fn seq_len(&self) -> u32 {
        self.payload_len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
    /// TCP header length in bytes, options included.
    pub fn header_len(&self) -> u32 {
        crate::TCP_HEADER_LEN + self.options.encoded_len()
    }
    /// Length of the IPv4 datagram carrying this segment.
    pub fn ip_len(&self) -> u32 {
        crate::IPV4_HEADER_LEN + self.header_len() + self.payload_len
    }
    /// A congested queue marks the datagram instead of dropping it (RFC 3168 §5): CE when it is ECT;
    /// returns false, changing nothing, when it is not (the queue must drop it instead).
    pub fn mark_ce(&mut self) -> bool {
        if self.ecn.is_ect() || self.ecn.is_ce() {
            self.ecn = EcnCodepoint::Ce;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_sack_lists_compare_by_their_blocks() {
        let b = |l: u32| SackBlock { left: SeqNumber(l), right: SeqNumber(l + 10) };
        let mut long = SackBlocks::default();
        long.push(b(1));
        long.push(b(100));
        long.truncate(1);
        let mut short = SackBlocks::default();
        short.push(b(1));
        assert_eq!(long, short);
    }
}
