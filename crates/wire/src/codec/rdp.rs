//! Byte-level encoding of [`RdpSegment`]s (RFC 908 §4, RFC 1151 §2) alone or in IPv4 datagrams of
//! protocol [`IP_PROTO_RDP`] (27), for pcap traces and real devices.
//!
//! # Choices where the RFCs are open
//!
//! * Version 1 checksum (RFC 908 §4.1 leaves the word order to the machine): 32-bit words read
//!   big-endian from the wire image, zero-padded to a multiple of 4 for the computation only.
//! * Version 2 checksum (RFC 1151 §2 says "the 16-bit TCP checksum" without saying whether the
//!   pseudo-header is included): included by default ([`RdpCodec::pseudo_header`]), with the RDP length
//!   (header plus data) and protocol 27, as TCP does over IP.
//! * SDM bit of the SYN options flags: "bit 0" in the RFC's drawing is the most significant bit, 0x8000;
//!   4.2BSD RDP used 0x0001 ([`SdmBit`]).
//!
//! # No-panic contract
//!
//! [`parse_rdp`] and [`parse_ipv4_rdp`] never panic, for any input: every malformation is a
//! [`WireError`]. [`emit_rdp`] and [`emit_ipv4_rdp`] never panic (short of allocation failure); they
//! validate the segment first and leave `buf` untouched when they return an error.
//!
//! # Decoding policy
//!
//! Bytes after header + Data Length are ignored (IP may pad). A variable area on a segment that is neither
//! SYN nor EACK is skipped. EACK entries are collected as a set: duplicates collapse and the order becomes
//! ascending, so only ascending distinct lists (the ones tcplab sends, A.7.4) re-encode byte for byte.

use super::checksum;
use super::{Checksums, Ipv4Info, Ipv4Packet, PayloadFill, WireError, DEFAULT_TTL};
use crate::rdp::{EACK_SPAN, RDP_HEADER_LEN, RDP_MAX_EACKS};
use crate::{EackList, RdpFlags, RdpSegment, RdpVersion, SeqNumber, SynOptions};

/// IP protocol number of RDP (IANA, assigned July 1984; RFC 908 printed "???").
pub const IP_PROTO_RDP: u8 = 27;

const IPV4_HEADER_LEN: usize = crate::IPV4_HEADER_LEN as usize;
const FIXED: usize = RDP_HEADER_LEN as usize;

/// Where the SDM (sequenced delivery mode) bit sits in the SYN options flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SdmBit {
    /// 0x8000: "bit 0" by the RFC's convention that bit 0 is the leftmost.
    #[default]
    Msb,
    /// 0x0001, as the BBN 4.2BSD implementation sent it.
    Lsb,
}

impl SdmBit {
    const fn mask(self) -> u16 {
        match self {
            SdmBit::Msb => 0x8000,
            SdmBit::Lsb => 0x0001,
        }
    }
}

/// How RDP headers are encoded and checked where the RFCs leave a choice (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RdpCodec {
    /// Version 2 checksum includes the TCP-style pseudo-header (default true).
    pub pseudo_header: bool,
    /// Position of the SDM bit (default [`SdmBit::Msb`]).
    pub sdm_bit: SdmBit,
}

impl Default for RdpCodec {
    fn default() -> Self {
        RdpCodec { pseudo_header: true, sdm_bit: SdmBit::Msb }
    }
}

/// The RFC 908 §4.1 version 1 checksum of `bytes` (the checksum field already zeroed): for each 32-bit
/// big-endian word, add modulo 2³² and rotate the sum left by one bit.
pub fn v1_checksum(bytes: &[u8]) -> u32 {
    let mut acc: u32 = 0;
    for chunk in bytes.chunks(4) {
        acc = acc.wrapping_add(word4(chunk)).rotate_left(1);
    }
    acc
}

/// The version 2 sum (not yet complemented) of `bytes`, with the pseudo-header when asked.
fn v2_sum(bytes: &[u8], src: [u8; 4], dst: [u8; 4], pseudo: bool) -> u16 {
    let start = if pseudo { checksum::pseudo_header(src, dst, IP_PROTO_RDP, bytes.len() as u16) } else { 0 };
    checksum::fold(checksum::add(start, bytes))
}

/// Validates `seg` for emission and returns the bytes of the RDP segment.
fn checked_len(seg: &RdpSegment, ip_overhead: usize) -> Result<usize, WireError> {
    if seg.version == RdpVersion::V1 && (seg.src_port > 0xff || seg.dst_port > 0xff) {
        return Err(WireError::BadRdp("version 1 ports are 8 bits"));
    }
    if seg.flags.syn() != seg.syn.is_some() {
        return Err(WireError::BadRdp("SYN options exactly on SYN segments"));
    }
    if seg.flags.eack() && seg.eacks.len() > RDP_MAX_EACKS {
        return Err(WireError::BadRdp("more than 123 EACK entries"));
    }
    let len = seg.header_len() as u64 + u64::from(seg.data_len);
    if seg.data_len > 0xffff || len + ip_overhead as u64 > 0xffff {
        return Err(WireError::TooLong(len + ip_overhead as u64));
    }
    Ok(len as usize)
}

/// Writes the segment into `out`, exactly `header_len + data_len` bytes, checksum included.
fn write_rdp(seg: &RdpSegment, src: [u8; 4], dst: [u8; 4], codec: &RdpCodec, fill: PayloadFill, out: &mut [u8]) {
    let hlen = seg.header_len() as usize;
    out[0] = (seg.flags.0 & RdpFlags::ALL.0) | seg.version.number();
    out[1] = seg.header_words() as u8;
    let rest = match seg.version {
        RdpVersion::V1 => {
            out[2] = seg.src_port as u8;
            out[3] = seg.dst_port as u8;
            &mut out[4..]
        }
        RdpVersion::V2 => {
            out[2..4].copy_from_slice(&seg.src_port.to_be_bytes());
            out[4..6].copy_from_slice(&seg.dst_port.to_be_bytes());
            &mut out[6..]
        }
    };
    rest[0..2].copy_from_slice(&(seg.data_len as u16).to_be_bytes());
    rest[2..6].copy_from_slice(&seg.seq.0.to_be_bytes());
    rest[6..10].copy_from_slice(&seg.ack.0.to_be_bytes());
    // Checksum field (4 octets in v1, 2 in v2) is zero while computing.
    rest[10..].iter_mut().take(FIXED - 4 - 10).for_each(|b| *b = 0);
    let mut at = FIXED;
    if let Some(o) = seg.syn {
        out[at..at + 2].copy_from_slice(&o.max_outstanding.to_be_bytes());
        out[at + 2..at + 4].copy_from_slice(&o.max_segment_size.to_be_bytes());
        let flags = if o.sequenced { codec.sdm_bit.mask() } else { 0 };
        out[at + 4..at + 6].copy_from_slice(&flags.to_be_bytes());
        at += 6;
    }
    if seg.flags.eack() {
        for s in seg.eacks.iter() {
            out[at..at + 4].copy_from_slice(&s.0.to_be_bytes());
            at += 4;
        }
    }
    debug_assert_eq!(at, hlen);
    for (i, b) in out[hlen..].iter_mut().enumerate() {
        *b = match fill {
            PayloadFill::Zeros => 0,
            PayloadFill::Byte(v) => v,
            // RDP numbers segments, not octets: the byte at offset i of segment `seq` is (seq + i) mod 256.
            PayloadFill::SeqLowByte => seg.seq.0.wrapping_add(i as u32) as u8,
        };
    }
    match seg.version {
        RdpVersion::V1 => {
            let c = v1_checksum(out);
            out[14..18].copy_from_slice(&c.to_be_bytes());
        }
        RdpVersion::V2 => {
            let c = !v2_sum(out, src, dst, codec.pseudo_header);
            out[16..18].copy_from_slice(&c.to_be_bytes());
        }
    }
}

/// Appends the RDP segment `seg` (header, variable area, data; checksummed) to `buf`; returns the bytes
/// appended, `seg.header_len() + seg.data_len`. `src_ip`/`dst_ip` feed the v2 pseudo-header.
///
/// Errors (leaving `buf` untouched): [`WireError::BadRdp`] for a segment the header cannot express,
/// [`WireError::TooLong`] above 65535 bytes.
pub fn emit_rdp(
    seg: &RdpSegment,
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    codec: &RdpCodec,
    payload: PayloadFill,
    buf: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let len = checked_len(seg, 0)?;
    let start = buf.len();
    buf.resize(start + len, 0);
    write_rdp(seg, src_ip, dst_ip, codec, payload, &mut buf[start..]);
    Ok(len)
}

/// Appends an IPv4 datagram (protocol 27, DF set, TTL [`DEFAULT_TTL`]) carrying `seg`; returns its length,
/// `seg.ip_len()`.
pub fn emit_ipv4_rdp(
    seg: &RdpSegment,
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    ip_id: u16,
    codec: &RdpCodec,
    payload: PayloadFill,
    buf: &mut Vec<u8>,
) -> Result<usize, WireError> {
    let len = checked_len(seg, IPV4_HEADER_LEN)?;
    let total = IPV4_HEADER_LEN + len;
    let start = buf.len();
    buf.resize(start + total, 0);
    let (header, rdp) = buf[start..].split_at_mut(IPV4_HEADER_LEN);
    write_rdp(seg, src_ip, dst_ip, codec, payload, rdp);
    let mut ip = Ipv4Packet::new_unchecked(header);
    ip.set_version_and_header_len(IPV4_HEADER_LEN);
    ip.set_tos(0);
    ip.set_total_len(total as u16);
    ip.set_ident(ip_id);
    ip.set_unfragmented(true);
    ip.set_ttl(DEFAULT_TTL);
    ip.set_protocol(IP_PROTO_RDP);
    ip.set_src_addr(src_ip);
    ip.set_dst_addr(dst_ip);
    ip.fill_checksum();
    Ok(total)
}

/// Up to four bytes as a big-endian word, zero-padded on the right.
fn word4(chunk: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    for (d, s) in w.iter_mut().zip(chunk) {
        *d = *s;
    }
    u32::from_be_bytes(w)
}

fn be16(b: &[u8], at: usize) -> Result<u16, WireError> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Ok(u16::from_be_bytes([x, y])),
        _ => Err(WireError::Truncated),
    }
}

fn be32(b: &[u8], at: usize) -> Result<u32, WireError> {
    match b.get(at..at + 4) {
        Some(&[w, x, y, z]) => Ok(u32::from_be_bytes([w, x, y, z])),
        _ => Err(WireError::Truncated),
    }
}

/// Parses one RDP segment sent from `src_ip` to `dst_ip`. Checks, in order: fixed header present,
/// version, header length, data length, checksum (unless `checksums` is `Ignore`), variable area.
/// Never panics.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub fn parse_rdp(
    bytes: &[u8],
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    codec: &RdpCodec,
    checksums: Checksums,
) -> Result<RdpSegment, WireError> {
    let first = *bytes.first().ok_or(WireError::Truncated)?;
    if bytes.len() < FIXED {
        return Err(WireError::Truncated);
    }
    let version = match first & 0x03 {
        1 => RdpVersion::V1,
        2 => RdpVersion::V2,
        v => return Err(WireError::BadRdpVersion(v)),
    };
    let flags = RdpFlags(first & RdpFlags::ALL.0);
    let words = *bytes.get(1).ok_or(WireError::Truncated)?;
    let hlen = 2 * usize::from(words);
    if hlen < FIXED || hlen > bytes.len() {
        return Err(WireError::BadRdpHeaderLen(words));
    }
    let (src_port, dst_port, rest) = match version {
        RdpVersion::V1 => (
            u16::from(*bytes.get(2).ok_or(WireError::Truncated)?),
            u16::from(*bytes.get(3).ok_or(WireError::Truncated)?),
            4,
        ),
        RdpVersion::V2 => (be16(bytes, 2)?, be16(bytes, 4)?, 6),
    };
    let data_len = be16(bytes, rest)?;
    let seq = SeqNumber(be32(bytes, rest + 2)?);
    let ack = SeqNumber(be32(bytes, rest + 6)?);
    let seg_bytes = bytes.get(..hlen + usize::from(data_len)).ok_or(WireError::Truncated)?;
    if checksums == Checksums::Verify {
        let ok = match version {
            RdpVersion::V1 => {
                let sent = be32(seg_bytes, 14)?;
                // `v1_checksum` with the checksum field (octets 14..18, straddling words 3 and 4) read as zero.
                let mut acc: u32 = 0;
                for (i, chunk) in seg_bytes.chunks(4).enumerate() {
                    let word = match i {
                        3 => word4(chunk) & 0xffff_0000,
                        4 => word4(chunk) & 0x0000_ffff,
                        _ => word4(chunk),
                    };
                    acc = acc.wrapping_add(word).rotate_left(1);
                }
                acc == sent
            }
            RdpVersion::V2 => v2_sum(seg_bytes, src_ip, dst_ip, codec.pseudo_header) == 0xffff,
        };
        if !ok {
            return Err(WireError::BadRdpChecksum);
        }
    }
    let mut at = FIXED;
    let syn = if flags.syn() {
        if hlen < FIXED + 6 {
            return Err(WireError::BadRdp("SYN without its options"));
        }
        let max_outstanding = be16(bytes, at)?;
        let max_segment_size = be16(bytes, at + 2)?;
        let sequenced = be16(bytes, at + 4)? & codec.sdm_bit.mask() != 0;
        at += 6;
        Some(SynOptions { max_outstanding, max_segment_size, sequenced })
    } else {
        None
    };
    let mut eacks = EackList::default();
    if flags.eack() {
        let area = bytes.get(at..hlen).ok_or(WireError::BadRdpHeaderLen(words))?;
        if area.len() % 4 != 0 {
            return Err(WireError::BadRdpHeaderLen(words));
        }
        let entries = area.chunks_exact(4).map(|c| SeqNumber(word4(c)));
        // The lowest entry in serial order, relative to the first one, is the list's base.
        let first = entries.clone().next();
        if let Some(first) = first {
            let base = entries.clone().fold(first, |m, s| if s.diff(m) < 0 { s } else { m });
            eacks = EackList::new(base);
            for s in entries {
                if s.0.wrapping_sub(base.0) >= EACK_SPAN || !eacks.insert(s) {
                    return Err(WireError::BadRdp("EACK entries spread over more than 128 numbers"));
                }
            }
        }
    }
    Ok(RdpSegment { version, flags, src_port, dst_port, seq, ack, syn, eacks, data_len: u32::from(data_len) })
}

/// Parses an IPv4 datagram carrying an RDP segment. Never panics.
#[deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub fn parse_ipv4_rdp(
    bytes: &[u8],
    codec: &RdpCodec,
    checksums: Checksums,
) -> Result<(Ipv4Info, RdpSegment), WireError> {
    let (ip, info) = super::open_ipv4(bytes, checksums)?;
    if ip.protocol() != IP_PROTO_RDP {
        return Err(WireError::NotRdp(ip.protocol()));
    }
    let seg = parse_rdp(ip.payload(), info.src, info.dst, codec, checksums)?;
    Ok((info, seg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SRC: [u8; 4] = [10, 0, 0, 1];
    const DST: [u8; 4] = [10, 0, 0, 2];

    fn eacks(list: &[u32]) -> EackList {
        let mut l = EackList::new(SeqNumber(list.first().copied().unwrap_or(0)));
        for &s in list {
            assert!(l.insert(SeqNumber(s)));
        }
        l
    }

    fn seg(version: RdpVersion, flags: RdpFlags) -> RdpSegment {
        RdpSegment {
            version,
            flags,
            src_port: 7,
            dst_port: 200,
            seq: SeqNumber(101),
            ack: SeqNumber(200),
            ..RdpSegment::default()
        }
    }

    /// Every segment kind of RFC 908 §3.4 / A.3.8, both versions.
    fn every_kind(version: RdpVersion) -> Vec<RdpSegment> {
        let opts = SynOptions { max_outstanding: 4, max_segment_size: 1500, sequenced: true };
        vec![
            RdpSegment { syn: Some(opts), ..seg(version, RdpFlags::SYN) },
            RdpSegment {
                syn: Some(SynOptions { sequenced: false, ..opts }),
                ..seg(version, RdpFlags::SYN | RdpFlags::ACK)
            },
            RdpSegment { data_len: 512, ..seg(version, RdpFlags::ACK) },
            seg(version, RdpFlags::ACK),
            RdpSegment { eacks: eacks(&[104, 105, 106]), ..seg(version, RdpFlags::ACK | RdpFlags::EACK) },
            RdpSegment { eacks: eacks(&[104]), data_len: 3, ..seg(version, RdpFlags::ACK | RdpFlags::EACK) },
            seg(version, RdpFlags::NUL | RdpFlags::ACK),
            seg(version, RdpFlags::RST),
            seg(version, RdpFlags::RST | RdpFlags::ACK),
        ]
    }

    #[test]
    fn every_kind_round_trips_in_both_versions() {
        for version in [RdpVersion::V1, RdpVersion::V2] {
            for s in every_kind(version) {
                let mut buf = Vec::new();
                let n = emit_rdp(&s, SRC, DST, &RdpCodec::default(), PayloadFill::SeqLowByte, &mut buf).unwrap();
                assert_eq!(n as u32, s.header_len() + s.data_len);
                assert_eq!(buf[0] & 3, version.number());
                // Header Length: 9 words plain, 12 with SYN options, 9 + 2n with n EACK entries (RFC 908 §4).
                let want_words = if s.flags.syn() { 12 } else { 9 + 2 * s.eacks.len() as u8 };
                assert_eq!(buf[1], want_words, "{s:?}");
                let back = parse_rdp(&buf, SRC, DST, &RdpCodec::default(), Checksums::Verify).unwrap();
                assert_eq!(back, s);
                let mut ip = Vec::new();
                emit_ipv4_rdp(&s, SRC, DST, 9, &RdpCodec::default(), PayloadFill::Zeros, &mut ip).unwrap();
                assert_eq!(ip.len() as u32, s.ip_len());
                assert_eq!(ip[9], 27); // IP protocol 27
                let (info, back) = parse_ipv4_rdp(&ip, &RdpCodec::default(), Checksums::Verify).unwrap();
                assert_eq!((info.src, info.dst, back), (SRC, DST, s));
            }
        }
    }

    #[test]
    fn first_octet_examples() {
        // A.3.2: v1 data with ACK = 0x41; v2 SYN = 0x82; v2 SYN+ACK = 0xC2; v2 ACK+EACK = 0x62.
        let k1 = every_kind(RdpVersion::V1);
        let k2 = every_kind(RdpVersion::V2);
        for (s, octet) in [(&k1[2], 0x41), (&k2[0], 0x82), (&k2[1], 0xC2), (&k2[4], 0x62)] {
            let mut buf = Vec::new();
            emit_rdp(s, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf).unwrap();
            assert_eq!(buf[0], octet);
        }
    }

    #[test]
    fn v1_checksum_known_vectors() {
        // Words 0x80000000, 0x80000000, 0x00000001: sum, rotate: 0x1, then 0x80000001 → 0x3, then 0x4 → 0x8.
        assert_eq!(v1_checksum(&[0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 1]), 0x8);
        // A v1 data segment, ACK, ports 1 → 2, 3 data octets "abc", seq 101, ack 200; the last word is
        // padded with a zero octet for the computation only (RFC 908 §4.1). Computed independently with the
        // reference algorithm of A.3.5.
        let s = RdpSegment {
            version: RdpVersion::V1,
            flags: RdpFlags::ACK,
            src_port: 1,
            dst_port: 2,
            seq: SeqNumber(101),
            ack: SeqNumber(200),
            data_len: 3,
            ..RdpSegment::default()
        };
        let mut buf = Vec::new();
        emit_rdp(&s, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf).unwrap();
        buf[18..].copy_from_slice(b"abc");
        buf[14..18].fill(0);
        assert_eq!(v1_checksum(&buf), 0x1531_c619);
        buf[14..18].copy_from_slice(&0x1531_c619u32.to_be_bytes());
        assert_eq!(parse_rdp(&buf, SRC, DST, &RdpCodec::default(), Checksums::Verify).unwrap().data_len, 3);
    }

    #[test]
    fn v2_checksum_is_tcp_style_with_or_without_pseudo_header() {
        let s = RdpSegment { data_len: 5, ..seg(RdpVersion::V2, RdpFlags::ACK) };
        for pseudo in [true, false] {
            let codec = RdpCodec { pseudo_header: pseudo, ..RdpCodec::default() };
            let mut buf = Vec::new();
            emit_rdp(&s, SRC, DST, &codec, PayloadFill::Byte(0xAB), &mut buf).unwrap();
            // One's complement sum over everything, checksum included, is all ones.
            let start = if pseudo { checksum::pseudo_header(SRC, DST, 27, buf.len() as u16) } else { 0 };
            assert_eq!(checksum::fold(checksum::add(start, &buf)), 0xffff);
            // The other reading of RFC 1151 rejects it.
            let other = RdpCodec { pseudo_header: !pseudo, ..codec };
            assert_eq!(parse_rdp(&buf, SRC, DST, &other, Checksums::Verify), Err(WireError::BadRdpChecksum));
            assert_eq!(parse_rdp(&buf, SRC, DST, &other, Checksums::Ignore).unwrap(), s);
        }
    }

    #[test]
    fn any_flipped_bit_fails_the_checksum() {
        for version in [RdpVersion::V1, RdpVersion::V2] {
            let s = RdpSegment { data_len: 9, ..seg(version, RdpFlags::ACK) };
            let mut buf = Vec::new();
            emit_rdp(&s, SRC, DST, &RdpCodec::default(), PayloadFill::SeqLowByte, &mut buf).unwrap();
            // Bits outside the version and header-length octets, which fail earlier checks.
            for bit in 16..buf.len() * 8 {
                let mut b = buf.clone();
                b[bit / 8] ^= 1 << (bit % 8);
                assert!(
                    parse_rdp(&b, SRC, DST, &RdpCodec::default(), Checksums::Verify).is_err(),
                    "{version:?} bit {bit}"
                );
            }
        }
    }

    #[test]
    fn sdm_bit_position_is_configurable() {
        let s = every_kind(RdpVersion::V2)[0];
        for (bit, word) in [(SdmBit::Msb, [0x80, 0]), (SdmBit::Lsb, [0, 1])] {
            let codec = RdpCodec { sdm_bit: bit, ..RdpCodec::default() };
            let mut buf = Vec::new();
            emit_rdp(&s, SRC, DST, &codec, PayloadFill::Zeros, &mut buf).unwrap();
            assert_eq!(buf[22..24], word);
            assert_eq!(&buf[18..22], &[0, 4, 0x05, 0xdc]); // max outstanding 4, max segment size 1500
        }
    }

    #[test]
    fn emit_rejects_what_the_header_cannot_say() {
        let mut buf = vec![1, 2, 3];
        let wide = RdpSegment { src_port: 256, ..seg(RdpVersion::V1, RdpFlags::ACK) };
        assert!(matches!(
            emit_rdp(&wide, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf),
            Err(WireError::BadRdp(_))
        ));
        let bare_syn = seg(RdpVersion::V2, RdpFlags::SYN);
        assert!(emit_rdp(&bare_syn, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf).is_err());
        let huge = RdpSegment { data_len: 70_000, ..seg(RdpVersion::V2, RdpFlags::ACK) };
        assert!(matches!(
            emit_rdp(&huge, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf),
            Err(WireError::TooLong(_))
        ));
        assert_eq!(buf, vec![1, 2, 3]);
    }

    #[test]
    fn parse_rejects_malformed_headers() {
        let c = RdpCodec::default();
        assert_eq!(parse_rdp(&[], SRC, DST, &c, Checksums::Verify), Err(WireError::Truncated));
        let mut buf = Vec::new();
        emit_rdp(&seg(RdpVersion::V2, RdpFlags::ACK), SRC, DST, &c, PayloadFill::Zeros, &mut buf).unwrap();
        let mut b = buf.clone();
        b[0] = (b[0] & !3) | 3;
        assert_eq!(parse_rdp(&b, SRC, DST, &c, Checksums::Ignore), Err(WireError::BadRdpVersion(3)));
        let mut b = buf.clone();
        b[1] = 8;
        assert_eq!(parse_rdp(&b, SRC, DST, &c, Checksums::Ignore), Err(WireError::BadRdpHeaderLen(8)));
        let mut b = buf.clone();
        b[7] = 1; // data length 1, but no data octet follows
        assert_eq!(parse_rdp(&b, SRC, DST, &c, Checksums::Ignore), Err(WireError::Truncated));
        let mut tcp = Vec::new();
        crate::codec::emit_ipv4_tcp(&crate::TcpSegment::default(), SRC, DST, 1, PayloadFill::Zeros, &mut tcp).unwrap();
        assert_eq!(parse_ipv4_rdp(&tcp, &c, Checksums::Verify), Err(WireError::NotRdp(6)));
    }

    fn any_segment() -> impl Strategy<Value = RdpSegment> {
        (
            any::<bool>(),
            0u8..6,
            any::<u16>(),
            any::<u16>(),
            any::<u32>(),
            any::<u32>(),
            (any::<u16>(), any::<u16>(), any::<bool>()),
            (any::<u32>(), proptest::collection::btree_set(0u32..128, 1..20)),
            0u32..2000,
        )
            .prop_map(|(v2, kind, sp, dp, seq, ack, (mo, mss, sdm), (base, offs), data)| {
                let version = if v2 { RdpVersion::V2 } else { RdpVersion::V1 };
                let (sp, dp) = if v2 { (sp, dp) } else { (sp & 0xff, dp & 0xff) };
                let mut s = RdpSegment {
                    version,
                    src_port: sp,
                    dst_port: dp,
                    seq: SeqNumber(seq),
                    ack: SeqNumber(ack),
                    ..RdpSegment::default()
                };
                match kind {
                    0 | 1 => {
                        s.flags = if kind == 0 { RdpFlags::SYN } else { RdpFlags::SYN | RdpFlags::ACK };
                        s.syn = Some(SynOptions { max_outstanding: mo, max_segment_size: mss, sequenced: sdm });
                    }
                    2 => {
                        s.flags = RdpFlags::ACK | RdpFlags::EACK;
                        let mut l = EackList::new(SeqNumber(base));
                        for o in offs {
                            l.insert(SeqNumber(base) + o);
                        }
                        s.eacks = l;
                        s.data_len = data;
                    }
                    3 => s.flags = RdpFlags::RST | RdpFlags::ACK,
                    4 => s.flags = RdpFlags::NUL,
                    _ => {
                        s.flags = RdpFlags::ACK;
                        s.data_len = data;
                    }
                }
                s
            })
    }

    proptest! {
        #[test]
        fn round_trip(s in any_segment(), pseudo in any::<bool>()) {
            let codec = RdpCodec { pseudo_header: pseudo, ..RdpCodec::default() };
            let mut buf = Vec::new();
            emit_ipv4_rdp(&s, SRC, DST, 3, &codec, PayloadFill::SeqLowByte, &mut buf).unwrap();
            let (_, back) = parse_ipv4_rdp(&buf, &codec, Checksums::Verify).unwrap();
            // Equal entries; the list's internal base is the lowest entry after a decode.
            prop_assert!(back.eacks.same_entries(&s.eacks));
            prop_assert_eq!(RdpSegment { eacks: s.eacks, ..back }, s);
        }

        /// The no-panic contract, on arbitrary bytes and on mutated valid segments.
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300), s in any_segment(), at in any::<usize>(), x in any::<u8>()) {
            let _ = parse_rdp(&bytes, SRC, DST, &RdpCodec::default(), Checksums::Verify);
            let _ = parse_rdp(&bytes, SRC, DST, &RdpCodec::default(), Checksums::Ignore);
            let _ = parse_ipv4_rdp(&bytes, &RdpCodec::default(), Checksums::Ignore);
            let mut buf = Vec::new();
            emit_rdp(&s, SRC, DST, &RdpCodec::default(), PayloadFill::Zeros, &mut buf).unwrap();
            let i = at % buf.len();
            buf[i] ^= x;
            let _ = parse_rdp(&buf, SRC, DST, &RdpCodec::default(), Checksums::Ignore);
            buf.truncate(at % (buf.len() + 1));
            let _ = parse_rdp(&buf, SRC, DST, &RdpCodec::default(), Checksums::Ignore);
        }
    }
}
