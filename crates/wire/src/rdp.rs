//! The RDP segment as the simulator carries it ([`RdpSegment`]); its real encoding is in
//! [`crate::codec::rdp`].
//!
//! Read first: RFC 908 §4 (header format, version 1), RFC 1151 §2–3 (version 2: 16-bit ports, the TCP
//! checksum). Both fixed headers are 18 octets; the Header Length field counts 16-bit words including the
//! variable area: 9 plain, 12 with SYN options, 9 + 2n with n EACK entries.

use crate::seq::SeqNumber;

/// Bytes of the fixed RDP header, both versions (RFC 908 §4.1, RFC 1151 §2).
pub const RDP_HEADER_LEN: u32 = 18;
/// Bytes of the SYN variable area: max outstanding, max segment size, options flags (RFC 908 §4.2).
pub const RDP_SYN_OPTIONS_LEN: u32 = 6;
/// Most EACK entries a header can hold: the 8-bit Header Length allows 510 octets, (510 − 18) / 4 = 123.
pub const RDP_MAX_EACKS: usize = 123;
/// Span of sequence numbers an [`EackList`] can name, starting at its lowest entry. A receiver's acceptance
/// window is 2·RCV.MAX numbers (RFC 1151 §3), so every list tcplab generates fits when RCV.MAX ≤ 64.
pub const EACK_SPAN: u32 = 128;

/// Protocol version, the low two bits of the first octet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RdpVersion {
    /// RFC 908: 8-bit ports, 32-bit nonlinear checksum.
    V1,
    /// RFC 1151: 16-bit ports, 16-bit TCP checksum.
    #[default]
    V2,
}

impl RdpVersion {
    pub const fn number(self) -> u8 {
        match self {
            RdpVersion::V1 => 1,
            RdpVersion::V2 => 2,
        }
    }
}

/// The control bits of the first octet (RFC 908 §4.1: bit 0, the most significant, is SYN).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RdpFlags(pub u8);

impl RdpFlags {
    pub const SYN: RdpFlags = RdpFlags(0x80);
    pub const ACK: RdpFlags = RdpFlags(0x40);
    pub const EACK: RdpFlags = RdpFlags(0x20);
    pub const RST: RdpFlags = RdpFlags(0x10);
    pub const NUL: RdpFlags = RdpFlags(0x08);
    /// Every defined flag; bit 5 (0x04) is unused and sent as 0, bits 6–7 are the version.
    pub const ALL: RdpFlags = RdpFlags(0xF8);

    pub const fn contains(self, other: RdpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
    pub fn eack(self) -> bool {
        self.contains(Self::EACK)
    }
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    pub fn nul(self) -> bool {
        self.contains(Self::NUL)
    }
}

impl std::ops::BitOr for RdpFlags {
    type Output = RdpFlags;
    fn bitor(self, o: RdpFlags) -> RdpFlags {
        RdpFlags(self.0 | o.0)
    }
}

impl std::fmt::Debug for RdpFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (flag, name) in
            [(Self::SYN, "SYN"), (Self::ACK, "ACK"), (Self::EACK, "EACK"), (Self::RST, "RST"), (Self::NUL, "NUL")]
        {
            if self.contains(flag) {
                parts.push(name);
            }
        }
        write!(f, "[{}]", parts.join(","))
    }
}

/// The SYN variable area (RFC 908 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SynOptions {
    /// Max Outstanding Segments: how many unacknowledged segments the SYN's sender is willing to receive.
    pub max_outstanding: u16,
    /// Max Segment Size, octets, counting IP header, RDP header and data.
    pub max_segment_size: u16,
    /// The SDM bit of the options flags: sequenced delivery requested.
    pub sequenced: bool,
}

/// The sequence numbers of an EACK variable area, ascending and distinct, held as a bitmap over
/// [`EACK_SPAN`] numbers from `base` so that a segment stays `Copy` and a send allocates nothing.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EackList {
    base: SeqNumber,
    bits: u128,
}

impl EackList {
    /// An empty list whose entries may lie in `[base, base + EACK_SPAN)`.
    pub const fn new(base: SeqNumber) -> Self {
        EackList { base, bits: 0 }
    }
    /// Adds `seq`; false (list unchanged) when it lies outside the list's span.
    pub fn insert(&mut self, seq: SeqNumber) -> bool {
        let off = seq.0.wrapping_sub(self.base.0);
        if off >= EACK_SPAN {
            return false;
        }
        self.bits |= 1u128 << off;
        true
    }
    pub fn contains(&self, seq: SeqNumber) -> bool {
        let off = seq.0.wrapping_sub(self.base.0);
        off < EACK_SPAN && self.bits & (1u128 << off) != 0
    }
    pub fn len(&self) -> usize {
        self.bits.count_ones() as usize
    }
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }
    /// Keeps the lowest `n` entries.
    pub fn truncate(&mut self, n: usize) {
        while self.len() > n {
            self.bits &= !(1u128 << (127 - self.bits.leading_zeros()));
        }
    }
    /// The entries, ascending.
    pub fn iter(&self) -> impl Iterator<Item = SeqNumber> + '_ {
        let (base, mut bits) = (self.base, self.bits);
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let off = bits.trailing_zeros();
            bits &= bits - 1;
            Some(base + off)
        })
    }
    /// Compares by entries (the base is only a representation detail).
    pub fn same_entries(&self, other: &EackList) -> bool {
        self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for EackList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An RDP segment without its data bytes: header fields and the data length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct RdpSegment {
    pub version: RdpVersion,
    /// SYN, ACK, EACK, RST, NUL. EACK is set exactly when `eacks` is non-empty (the codec enforces it).
    pub flags: RdpFlags,
    /// Ports: 8 bits in version 1 (RFC 908 §4.1), 16 in version 2 (RFC 1151 §2).
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNumber,
    /// The last segment received in sequence (RFC 908 §3.4; not TCP's next expected). Valid iff ACK.
    pub ack: SeqNumber,
    /// Present exactly on SYN segments.
    pub syn: Option<SynOptions>,
    /// Out-of-sequence acknowledgements (RFC 908 §3.7.2), when EACK is set.
    pub eacks: EackList,
    /// Data Length: octets of data after the header (at most 65535).
    pub data_len: u32,
}

impl RdpSegment {
    /// Header Length in 16-bit words, variable area included (RFC 908 §4.1).
    pub fn header_words(&self) -> u32 {
        let mut words = RDP_HEADER_LEN / 2;
        if self.syn.is_some() {
            words += RDP_SYN_OPTIONS_LEN / 2;
        }
        if self.flags.eack() {
            words += 2 * self.eacks.len() as u32;
        }
        words
    }
    /// Header bytes, variable area included.
    pub fn header_len(&self) -> u32 {
        2 * self.header_words()
    }
    /// Bytes of the IPv4 datagram (no IP options).
    pub fn ip_len(&self) -> u32 {
        crate::IPV4_HEADER_LEN + self.header_len() + self.data_len
    }
    /// Whether the segment consumes a sequence number (RFC 908 §3.4; A.3.8: SYN, data and NUL do, a bare
    /// ACK and an RST do not).
    pub fn consumes_seq(&self) -> bool {
        self.flags.syn() || self.flags.nul() || (self.data_len > 0 && !self.flags.rst())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lengths_in_words() {
        let plain = RdpSegment { flags: RdpFlags::ACK, ..RdpSegment::default() };
        assert_eq!(plain.header_words(), 9);
        let syn = RdpSegment { flags: RdpFlags::SYN, syn: Some(SynOptions::default()), ..RdpSegment::default() };
        assert_eq!(syn.header_words(), 12);
        let mut eacks = EackList::new(SeqNumber(104));
        for s in [104, 105, 106] {
            assert!(eacks.insert(SeqNumber(s)));
        }
        let eack = RdpSegment { flags: RdpFlags::ACK | RdpFlags::EACK, eacks, ..RdpSegment::default() };
        assert_eq!(eack.header_words(), 9 + 2 * 3);
        assert_eq!(eack.ip_len(), 20 + 30);
    }

    #[test]
    fn eack_list_is_ascending_and_bounded_by_its_span() {
        let mut l = EackList::new(SeqNumber(u32::MAX - 1));
        assert!(l.insert(SeqNumber(3)));
        assert!(l.insert(SeqNumber(u32::MAX)));
        assert!(!l.insert(SeqNumber(200)));
        assert!(l.insert(SeqNumber(5)));
        assert_eq!(l.iter().map(|s| s.0).collect::<Vec<_>>(), vec![u32::MAX, 3, 5]);
        l.truncate(2);
        assert_eq!(l.iter().map(|s| s.0).collect::<Vec<_>>(), vec![u32::MAX, 3]);
    }
}
