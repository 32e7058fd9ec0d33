use super::*;
use crate::SackBlocks;
use proptest::prelude::*;

const SRC: [u8; 4] = [10, 0, 0, 1];
const DST: [u8; 4] = [10, 0, 0, 2];
const IP_ID: u16 = 7;

fn sack(blocks: &[(u32, u32)]) -> SackBlocks {
    let mut s = SackBlocks::default();
    for &(left, right) in blocks {
        assert!(s.push(SackBlock { left: SeqNumber(left), right: SeqNumber(right) }));
    }
    s
}

fn ts(tsval: u32, tsecr: u32) -> Option<Timestamps> {
    Some(Timestamps { tsval, tsecr })
}

fn syn() -> TcpSegment {
    TcpSegment {
        src_port: 40_000,
        dst_port: 5201,
        seq: SeqNumber(0x1234_5678),
        ack: SeqNumber(0),
        flags: TcpFlags::SYN,
        window: 64_240,
        options: TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            timestamps: ts(1000, 0),
            sack: SackBlocks::default(),
        },
        payload_len: 0,
        ecn: crate::EcnCodepoint::NotEct,
    }
}

fn ack() -> TcpSegment {
    TcpSegment {
        src_port: 5201,
        dst_port: 40_000,
        seq: SeqNumber(0x0bad_cafe),
        ack: SeqNumber(0x1234_5679),
        flags: TcpFlags::ACK,
        window: 502,
        options: TcpOptions { timestamps: ts(0xdead_beef, 1000), ..TcpOptions::default() },
        payload_len: 0,
        ecn: crate::EcnCodepoint::NotEct,
    }
}

/// Emits `seg`, checks the lengths and both parsers, and returns the datagram.
fn round_trip(seg: &TcpSegment) -> Vec<u8> {
    let mut bytes = Vec::new();
    let n = emit_ipv4_tcp(seg, SRC, DST, IP_ID, PayloadFill::SeqLowByte, &mut bytes).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(n as u32, seg.ip_len());

    let ip = Ipv4Packet::new_checked(&bytes[..]).unwrap();
    let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
    assert_eq!(tcp.header_len() as u32, seg.header_len());
    assert_eq!(tcp.payload().len() as u32, seg.payload_len);
    assert!(ip.verify_checksum());
    assert!(tcp.verify_checksum(SRC, DST));

    let (info, parsed) = parse_ipv4_tcp(&bytes).unwrap();
    assert_eq!(parsed, *seg);
    let expected_info = Ipv4Info {
        src: SRC,
        dst: DST,
        ident: IP_ID,
        ttl: DEFAULT_TTL,
        dont_fragment: true,
        tos: 0,
        header_len: 20,
        total_len: n as u16,
    };
    assert_eq!(info, expected_info);

    let mut tcp_only = vec![0xaa];
    let m = emit_tcp(seg, SRC, DST, PayloadFill::SeqLowByte, &mut tcp_only).unwrap();
    assert_eq!(m + 1, tcp_only.len());
    assert_eq!(tcp_only[1..], bytes[20..]);
    assert_eq!(parse_tcp(&tcp_only[1..], SRC, DST), Ok(*seg));
    bytes
}

/// The option bytes of an emitted datagram (no IP options).
fn option_bytes(datagram: &[u8]) -> Vec<u8> {
    let ip = Ipv4Packet::new_checked(datagram).unwrap();
    TcpPacket::new_checked(ip.payload()).unwrap().options().to_vec()
}

/// Recomputes both checksums of whatever `bytes` holds, as far as its lengths allow.
fn refresh_checksums(bytes: &mut [u8]) {
    let Ok(mut ip) = Ipv4Packet::new_checked(&mut bytes[..]) else {
        return;
    };
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    if let Ok(mut tcp) = TcpPacket::new_checked(ip.payload_mut()) {
        tcp.fill_checksum(src, dst);
    }
    ip.fill_checksum();
}

/// A valid datagram (correct checksums) whose TCP option area is `raw`, with 5 payload bytes.
fn with_raw_options(raw: &[u8]) -> Vec<u8> {
    assert!(raw.len() & 3 == 0 && raw.len() <= MAX_OPTIONS_LEN);
    let total = 20 + 20 + raw.len() + 5;
    let mut bytes = vec![0u8; total];
    let mut ip = Ipv4Packet::new_unchecked(&mut bytes[..]);
    ip.set_version_and_header_len(20);
    ip.set_total_len(total as u16);
    ip.set_unfragmented(true);
    ip.set_ttl(64);
    ip.set_protocol(IP_PROTO_TCP);
    ip.set_src_addr(SRC);
    ip.set_dst_addr(DST);
    let mut tcp = TcpPacket::new_unchecked(ip.payload_mut());
    tcp.set_src_port(1);
    tcp.set_dst_port(2);
    tcp.set_header_len(20 + raw.len());
    tcp.set_flags(TcpFlags::ACK);
    tcp.set_window(100);
    tcp.options_mut().copy_from_slice(raw);
    refresh_checksums(&mut bytes);
    bytes
}

fn parse_raw_options(raw: &[u8]) -> Result<TcpOptions, WireError> {
    parse_ipv4_tcp(&with_raw_options(raw)).map(|(_, seg)| seg.options)
}

/// Internet checksum computed differently from the code under test: byte by byte, folding the
/// carry at every step, odd trailing byte as the high half of a word.
fn reference_checksum(chunks: &[&[u8]]) -> u16 {
    let bytes: Vec<u8> = chunks.concat();
    let mut sum: u32 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        sum += if i % 2 == 0 { u32::from(b) << 8 } else { u32::from(b) };
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

// ---------------------------------------------------------------------------------------------
// Round trips and option layout.

#[test]
fn syn_with_all_options_uses_the_linux_layout() {
    let bytes = round_trip(&syn());
    // mss 1460, sackOK, TS val 1000 ecr 0, nop, wscale 7 -- tcpdump's view of a Linux SYN.
    #[rustfmt::skip]
    let expected = [
        2, 4, 0x05, 0xb4,
        4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0,
        1, 3, 3, 7,
    ];
    assert_eq!(option_bytes(&bytes), expected);
    assert_eq!(syn().header_len(), 40);
}

#[test]
fn syn_ack_without_timestamps() {
    let seg = TcpSegment {
        flags: TcpFlags::SYN | TcpFlags::ACK,
        ack: SeqNumber(0x1234_5679),
        options: TcpOptions { mss: Some(1400), window_scale: Some(9), sack_permitted: true, ..TcpOptions::default() },
        ..syn()
    };
    let bytes = round_trip(&seg);
    assert_eq!(option_bytes(&bytes), [2, 4, 0x05, 0x78, 1, 1, 4, 2, 1, 3, 3, 9]);
    assert_eq!(seg.header_len(), 32);
}

#[test]
fn syn_ack_with_all_options() {
    let seg = TcpSegment {
        flags: TcpFlags::SYN | TcpFlags::ACK,
        ack: SeqNumber(0x1234_5679),
        options: TcpOptions { timestamps: ts(77, 1000), ..syn().options },
        ..syn()
    };
    round_trip(&seg);
}

#[test]
fn pure_ack_with_timestamps() {
    let bytes = round_trip(&ack());
    assert_eq!(option_bytes(&bytes), [1, 1, 8, 10, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0x03, 0xe8]);
    assert_eq!(bytes.len(), 52);
}

#[test]
fn ack_with_one_to_three_sack_blocks_and_timestamps() {
    let blocks = [(1000, 2000), (3000, 4000), (5000, 6000)];
    for n in 1..=3 {
        let mut seg = ack();
        seg.options.sack = sack(&blocks[..n]);
        let bytes = round_trip(&seg);
        assert_eq!(seg.header_len() as usize, 20 + 12 + 4 + 8 * n);
        let opts = option_bytes(&bytes);
        assert_eq!(opts[12..16], [1, 1, 5, 2 + 8 * n as u8]);
        assert_eq!(opts[16..24], [0, 0, 0x03, 0xe8, 0, 0, 0x07, 0xd0]);
    }
}

#[test]
fn four_sack_blocks_without_timestamps() {
    let seg = TcpSegment {
        options: TcpOptions { sack: sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]), ..TcpOptions::default() },
        ..ack()
    };
    let bytes = round_trip(&seg);
    assert_eq!(seg.header_len(), 56);
    assert_eq!(option_bytes(&bytes)[..4], [1, 1, 5, 34]);
}

#[test]
fn data_segment_with_fin() {
    let seg = TcpSegment { flags: TcpFlags::PSH | TcpFlags::ACK | TcpFlags::FIN, payload_len: 1000, ..ack() };
    let bytes = round_trip(&seg);
    let ip = Ipv4Packet::new_checked(&bytes[..]).unwrap();
    let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
    for (i, &b) in tcp.payload().iter().enumerate() {
        assert_eq!(b, (seg.seq + i as u32).0 as u8);
    }
}

#[test]
fn payload_fills() {
    let seg = TcpSegment { payload_len: 9, ..ack() };
    for (fill, expect) in [(PayloadFill::Zeros, 0u8), (PayloadFill::Byte(0x5a), 0x5a)] {
        let mut bytes = Vec::new();
        emit_ipv4_tcp(&seg, SRC, DST, 1, fill, &mut bytes).unwrap();
        assert!(bytes[bytes.len() - 9..].iter().all(|&b| b == expect));
        assert_eq!(parse_ipv4_tcp(&bytes).unwrap().1, seg);
    }
    // On a SYN the first payload byte has sequence number seq + 1.
    let syn_data = TcpSegment { seq: SeqNumber(0x1ff), payload_len: 3, ..syn() };
    let bytes = round_trip(&syn_data);
    assert_eq!(bytes[bytes.len() - 3..], [0x00, 0x01, 0x02]);
}

#[test]
fn every_option_combination_has_the_documented_length() {
    let mut fitting = 0;
    for mss in [None, Some(536)] {
        for window_scale in [None, Some(0), Some(14)] {
            for sack_permitted in [false, true] {
                for timestamps in [None, ts(u32::MAX, 1)] {
                    for n in 0..=4 {
                        let options = TcpOptions {
                            mss,
                            window_scale,
                            sack_permitted,
                            timestamps,
                            sack: sack(&[(10, 20), (30, 40), (50, 60), (70, 80)][..n]),
                        };
                        let seg = TcpSegment { options, payload_len: 3, ..ack() };
                        let expected = 4 * u32::from(mss.is_some())
                            + 4 * u32::from(window_scale.is_some())
                            + if timestamps.is_some() { 12 } else { 4 * u32::from(sack_permitted) }
                            + if n > 0 { 4 + 8 * n as u32 } else { 0 };
                        assert_eq!(options.encoded_len(), expected);
                        if expected as usize > MAX_OPTIONS_LEN {
                            let mut buf = vec![1, 2, 3];
                            let r = emit_ipv4_tcp(&seg, SRC, DST, 0, PayloadFill::Zeros, &mut buf);
                            assert_eq!(r, Err(WireError::OptionsTooLong(expected)));
                            assert_eq!(buf, [1, 2, 3]);
                            continue;
                        }
                        fitting += 1;
                        let bytes = round_trip(&seg);
                        assert_eq!(option_bytes(&bytes).len() as u32, expected);
                    }
                }
            }
        }
    }
    assert!(fitting > 50, "only {fitting} combinations fit");
}

#[test]
fn sequence_numbers_near_wraparound() {
    let seg = TcpSegment {
        seq: SeqNumber(u32::MAX - 2),
        ack: SeqNumber(u32::MAX),
        flags: TcpFlags::ACK | TcpFlags::PSH,
        options: TcpOptions {
            timestamps: ts(u32::MAX, u32::MAX - 1),
            sack: sack(&[(u32::MAX - 100, 50), (u32::MAX, 0)]),
            ..TcpOptions::default()
        },
        payload_len: 6,
        ..ack()
    };
    let bytes = round_trip(&seg);
    assert_eq!(bytes[bytes.len() - 6..], [0xfd, 0xfe, 0xff, 0x00, 0x01, 0x02]);
    assert_eq!(bytes[24..28], [0xff, 0xff, 0xff, 0xfd]);
}

#[test]
fn odd_payload_lengths_checksum_like_the_reference() {
    for payload_len in [1, 3, 7, 1461] {
        let seg = TcpSegment { payload_len, ..ack() };
        let bytes = round_trip(&seg);
        let tcp = &bytes[20..];
        let len = (tcp.len() as u16).to_be_bytes();
        let pseudo: &[u8] = &[&SRC[..], &DST[..], &[0, IP_PROTO_TCP], &len[..]].concat();
        let zeroed = [&tcp[..16], &[0, 0], &tcp[18..]].concat();
        let expect = reference_checksum(&[pseudo, &zeroed]);
        assert_eq!(TcpPacket::new_checked(tcp).unwrap().checksum(), expect);
        let ip_zeroed = [&bytes[..10], &[0, 0], &bytes[12..20]].concat();
        let ip_expect = reference_checksum(&[&ip_zeroed]);
        assert_eq!(Ipv4Packet::new_checked(&bytes[..]).unwrap().checksum(), ip_expect);
    }
}

// ---------------------------------------------------------------------------------------------
// Known answers.

/// A TCP ACK with timestamps captured from a Linux host (172.22.104.109:44831 → 74.125.159.103:80),
/// published in hex on Mark Mayfield's TCP header tutorial
/// (mark.kandm-solutions.com, "headertable", checksum page). It is exactly what the codec emits for
/// the same segment: TTL 64, DF, TOS 0, and NOP NOP TS.
///
/// Checksums re-verified by hand:
/// * IPv4: the header words with the checksum zeroed sum to 0x3b146; folding gives
///   0xb146 + 0x3 = 0xb149, whose complement is 0x4eb6.
/// * TCP: the pseudo-header ac16 + 686d + 4a7d + 9f67 + 0006 + 0020 sums to 0x1fe8d; the 32 segment
///   bytes with the checksum zeroed sum to 0x5c9c5; together 0x7c852, folded 0xc852 + 0x7 = 0xc859,
///   complement 0x37a6.
#[rustfmt::skip]
const CAPTURED_ACK: [u8; 52] = [
    0x45, 0x00, 0x00, 0x34, 0xed, 0xa5, 0x40, 0x00, 0x40, 0x06, 0x4e, 0xb6, 0xac, 0x16, 0x68, 0x6d,
    0x4a, 0x7d, 0x9f, 0x67, 0xaf, 0x1f, 0x00, 0x50, 0xe8, 0x33, 0x8b, 0x62, 0xfc, 0x13, 0xda, 0x66,
    0x80, 0x10, 0x00, 0x5c, 0x37, 0xa6, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a, 0x04, 0xb8, 0x66, 0xf7,
    0x4a, 0xdd, 0x90, 0x45,
];

#[test]
fn known_answer_captured_linux_ack() {
    let (info, seg) = parse_ipv4_tcp(&CAPTURED_ACK).unwrap();
    let src = [172, 22, 104, 109];
    let dst = [74, 125, 159, 103];
    assert_eq!(
        info,
        Ipv4Info { src, dst, ident: 0xeda5, ttl: 64, dont_fragment: true, tos: 0, header_len: 20, total_len: 52 }
    );
    let expected = TcpSegment {
        src_port: 44_831,
        dst_port: 80,
        seq: SeqNumber(0xe833_8b62),
        ack: SeqNumber(0xfc13_da66),
        flags: TcpFlags::ACK,
        window: 92,
        options: TcpOptions { timestamps: ts(0x04b8_66f7, 0x4add_9045), ..TcpOptions::default() },
        payload_len: 0,
        ecn: crate::EcnCodepoint::NotEct,
    };
    assert_eq!(seg, expected);

    let mut out = Vec::new();
    emit_ipv4_tcp(&expected, src, dst, 0xeda5, PayloadFill::Zeros, &mut out).unwrap();
    assert_eq!(out, CAPTURED_ACK);
    assert_eq!(reference_checksum(&[&CAPTURED_ACK[..20]]), 0);
}

/// The IPv4 header-checksum example of the Wikipedia article "Internet checksum" (a UDP datagram
/// 192.168.0.1 → 192.168.0.199, checksum 0xb861), recomputed by hand with the same fold.
#[test]
fn known_answer_ipv4_header_checksum() {
    #[rustfmt::skip]
    let mut header = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
        0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];
    let mut ip = Ipv4Packet::new_unchecked(&mut header[..]);
    assert!(!ip.verify_checksum());
    ip.fill_checksum();
    assert_eq!(ip.checksum(), 0xb861);
    assert!(ip.verify_checksum());
    // Only the header is here, so the total length (0x73) runs past the buffer.
    assert_eq!(Ipv4Packet::new_checked(&header[..]), Err(WireError::Truncated));
}

// ---------------------------------------------------------------------------------------------
// Malformed input.

#[test]
fn every_truncation_is_reported() {
    let bytes = round_trip(&TcpSegment { payload_len: 10, ..syn() });
    for end in 0..bytes.len() {
        assert_eq!(parse_ipv4_tcp(&bytes[..end]), Err(WireError::Truncated), "{end}");
    }
    let tcp = &bytes[20..];
    for end in 0..20 {
        assert_eq!(parse_tcp(&tcp[..end], SRC, DST), Err(WireError::Truncated));
    }
    for end in 20..40 {
        assert_eq!(parse_tcp(&tcp[..end], SRC, DST), Err(WireError::BadDataOffset(10)));
    }
}

#[test]
fn bytes_after_the_total_length_are_ignored() {
    let seg = TcpSegment { payload_len: 4, ..ack() };
    let mut bytes = round_trip(&seg);
    bytes.extend_from_slice(&[0xee; 6]);
    assert_eq!(parse_ipv4_tcp(&bytes).unwrap().1, seg);
}

#[test]
fn bad_checksums_are_reported_unless_ignored() {
    let seg = TcpSegment { payload_len: 4, ..ack() };
    let good = round_trip(&seg);

    let mut bad_ip = good.clone();
    bad_ip[8] = 1; // TTL
    assert_eq!(parse_ipv4_tcp(&bad_ip), Err(WireError::BadIpChecksum));
    let (info, parsed) = parse_ipv4_tcp_with(&bad_ip, Checksums::Ignore).unwrap();
    assert_eq!((info.ttl, parsed), (1, seg));

    let mut bad_tcp = good.clone();
    *bad_tcp.last_mut().unwrap() ^= 0x40;
    assert_eq!(parse_ipv4_tcp(&bad_tcp), Err(WireError::BadTcpChecksum));
    assert_eq!(parse_tcp(&bad_tcp[20..], SRC, DST), Err(WireError::BadTcpChecksum));
    assert_eq!(parse_ipv4_tcp_with(&bad_tcp, Checksums::Ignore).unwrap().1, seg);
    // The pseudo-header is covered: the same segment from another address fails.
    assert_eq!(parse_tcp(&good[20..], [10, 0, 0, 3], DST), Err(WireError::BadTcpChecksum));
}

#[test]
fn bad_ipv4_headers_are_reported() {
    let good = round_trip(&ack());
    let case = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        edit(&mut b);
        refresh_checksums(&mut b);
        parse_ipv4_tcp(&b)
    };
    assert_eq!(case(&|b| b[0] = 0x65), Err(WireError::BadIpVersion(6)));
    assert_eq!(case(&|b| b[0] = 0x44), Err(WireError::BadIpHeaderLen(4)));
    assert_eq!(case(&|b| b[2..4].copy_from_slice(&[0, 19])), Err(WireError::BadIpTotalLen(19)));
    assert_eq!(case(&|b| b[2..4].copy_from_slice(&[0, 53])), Err(WireError::Truncated));
    assert_eq!(case(&|b| b[9] = 17), Err(WireError::NotTcp(17)));
    assert_eq!(case(&|b| b[6] = 0x60), Err(WireError::Fragmented)); // DF + MF
    assert_eq!(case(&|b| b[7] = 0x01), Err(WireError::Fragmented)); // offset 8
                                                                    // A header length of 15 words runs past the 52-byte total length.
    assert_eq!(case(&|b| b[0] = 0x4f), Err(WireError::BadIpTotalLen(52)));
    // The TCP data offset: below 5, or past the end of the segment.
    assert_eq!(case(&|b| b[32] = 0x40), Err(WireError::BadDataOffset(4)));
    assert_eq!(case(&|b| b[32] = 0xf0), Err(WireError::BadDataOffset(15)));
}

#[test]
fn ipv4_options_are_skipped() {
    let seg = TcpSegment { payload_len: 3, ..ack() };
    let plain = round_trip(&seg);
    // Insert four bytes of IPv4 options (NOP NOP NOP EOL) and grow IHL and the total length.
    let mut bytes = plain[..20].to_vec();
    bytes.extend_from_slice(&[1, 1, 1, 0]);
    bytes.extend_from_slice(&plain[20..]);
    bytes[0] = 0x46;
    bytes[2..4].copy_from_slice(&(plain.len() as u16 + 4).to_be_bytes());
    refresh_checksums(&mut bytes);
    let (info, parsed) = parse_ipv4_tcp(&bytes).unwrap();
    assert_eq!(info.header_len, 24);
    assert_eq!(parsed, seg);
}

#[test]
fn option_decoding_policy() {
    use WireError::{BadOptionLen, TruncatedOption};
    let mss = |v| TcpOptions { mss: Some(v), ..TcpOptions::default() };
    // Illegal lengths.
    assert_eq!(parse_raw_options(&[2, 0, 0, 0]), Err(BadOptionLen { kind: 2, len: 0 }));
    assert_eq!(parse_raw_options(&[0xfe, 1, 0, 0]), Err(BadOptionLen { kind: 0xfe, len: 1 }));
    // Missing length byte; option running past the data offset.
    assert_eq!(parse_raw_options(&[1, 1, 1, 8]), Err(TruncatedOption { kind: 8 }));
    assert_eq!(parse_raw_options(&[8, 10, 0, 0]), Err(TruncatedOption { kind: 8 }));
    // Wrong lengths for known kinds.
    assert_eq!(parse_raw_options(&[2, 3, 5, 0]), Err(BadOptionLen { kind: 2, len: 3 }));
    assert_eq!(parse_raw_options(&[3, 4, 7, 0]), Err(BadOptionLen { kind: 3, len: 4 }));
    assert_eq!(parse_raw_options(&[4, 3, 0, 0]), Err(BadOptionLen { kind: 4, len: 3 }));
    assert_eq!(parse_raw_options(&[8, 8, 0, 0, 0, 0, 0, 0]), Err(BadOptionLen { kind: 8, len: 8 }));
    assert_eq!(parse_raw_options(&[5, 2, 0, 0]), Err(BadOptionLen { kind: 5, len: 2 }));
    assert_eq!(parse_raw_options(&[5, 6, 0, 0, 0, 0, 0, 0]), Err(BadOptionLen { kind: 5, len: 6 }));
    // A SACK option claiming five blocks cannot fit in 40 bytes.
    let mut five = vec![1, 1, 5, 42];
    five.resize(40, 0);
    assert_eq!(parse_raw_options(&five), Err(TruncatedOption { kind: 5 }));
    // Unknown options are skipped; EOL ends the list even if garbage follows.
    assert_eq!(parse_raw_options(&[0xfd, 4, 0xaa, 0xbb, 2, 4, 5, 0xb4]), Ok(mss(1460)));
    assert_eq!(parse_raw_options(&[2, 4, 5, 0xb4, 0, 0xff, 1, 0]), Ok(mss(1460)));
    assert_eq!(parse_raw_options(&[0, 2, 4, 0]), Ok(TcpOptions::default()));
    // Repeated options: the last wins.
    assert_eq!(parse_raw_options(&[2, 4, 0, 1, 2, 4, 0, 2]), Ok(mss(2)));
    let two_sacks = [1, 1, 5, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 5, 10, 0, 0, 0, 3, 0, 0, 0, 4];
    assert_eq!(parse_raw_options(&two_sacks).unwrap().sack, sack(&[(3, 4)]));
    // Window scale above 14 is kept as given.
    let ws = parse_raw_options(&[1, 3, 3, 15]).unwrap();
    assert_eq!(ws.window_scale, Some(15));
    // Any order, no padding.
    let packed = parse_raw_options(&[3, 3, 2, 4, 2, 2, 4, 0x05, 0xb4, 1, 1, 0]).unwrap();
    let expect = TcpOptions { mss: Some(1460), window_scale: Some(2), sack_permitted: true, ..TcpOptions::default() };
    assert_eq!(packed, expect);
}

#[test]
fn emit_rejects_what_does_not_fit() {
    let too_many_options = TcpOptions { sack: sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]), ..syn().options };
    let seg = TcpSegment { options: too_many_options, ..ack() };
    let mut buf = vec![9];
    assert_eq!(emit_ipv4_tcp(&seg, SRC, DST, 0, PayloadFill::Zeros, &mut buf), Err(WireError::OptionsTooLong(56)));
    assert_eq!(emit_tcp(&seg, SRC, DST, PayloadFill::Zeros, &mut buf), Err(WireError::OptionsTooLong(56)));

    let huge = TcpSegment { payload_len: u32::MAX, ..ack() };
    let limit = u64::from(u32::MAX) + 32;
    assert_eq!(emit_ipv4_tcp(&huge, SRC, DST, 0, PayloadFill::Zeros, &mut buf), Err(WireError::TooLong(limit + 20)));
    assert_eq!(emit_tcp(&huge, SRC, DST, PayloadFill::Zeros, &mut buf), Err(WireError::TooLong(limit)));
    assert_eq!(buf, [9]);

    // The largest datagram: 65535 bytes in all.
    let max = TcpSegment { payload_len: 65_535 - 20 - 32, ..ack() };
    let bytes = round_trip(&max);
    assert_eq!(bytes.len(), 65_535);
    let over = TcpSegment { payload_len: max.payload_len + 1, ..max };
    assert_eq!(emit_ipv4_tcp(&over, SRC, DST, 0, PayloadFill::Zeros, &mut buf), Err(WireError::TooLong(65_536)));
    // Without the IPv4 header, the segment alone may use the 20 bytes.
    let tcp_max = TcpSegment { payload_len: 65_535 - 32, ..ack() };
    let mut tcp = Vec::new();
    assert_eq!(emit_tcp(&tcp_max, SRC, DST, PayloadFill::Zeros, &mut tcp), Ok(65_535));
    assert_eq!(parse_tcp(&tcp, SRC, DST), Ok(tcp_max));
    tcp.push(0);
    assert_eq!(parse_tcp(&tcp, SRC, DST), Err(WireError::TooLong(65_536)));
}

#[test]
fn errors_display_and_are_std_errors() {
    let all = [
        WireError::Truncated,
        WireError::BadIpVersion(6),
        WireError::BadIpHeaderLen(3),
        WireError::BadIpTotalLen(10),
        WireError::Fragmented,
        WireError::NotTcp(17),
        WireError::BadIpChecksum,
        WireError::BadDataOffset(2),
        WireError::BadTcpChecksum,
        WireError::TruncatedOption { kind: 8 },
        WireError::BadOptionLen { kind: 2, len: 3 },
        WireError::OptionsTooLong(56),
        WireError::TooLong(70_000),
    ];
    for e in all {
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(!boxed.to_string().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Properties.

/// Options as the simulator may produce them: anything, with SACK blocks only as many as fit.
fn arb_options() -> impl Strategy<Value = TcpOptions> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(any::<u8>()),
        any::<bool>(),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4),
    )
        .prop_map(|(mss, window_scale, sack_permitted, timestamps, blocks)| {
            let mut options = TcpOptions {
                mss,
                window_scale,
                sack_permitted,
                timestamps: timestamps.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                sack: SackBlocks::default(),
            };
            for (left, right) in blocks {
                let mut more = options;
                more.sack.push(SackBlock { left: SeqNumber(left), right: SeqNumber(right) });
                if more.encoded_len() as usize > MAX_OPTIONS_LEN {
                    break;
                }
                options = more;
            }
            options
        })
}

fn arb_segment() -> impl Strategy<Value = TcpSegment> {
    (
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>()),
        (any::<u8>(), any::<u16>(), arb_options()),
        prop_oneof![8 => 0..1600u32, 1 => 1600..70_000u32],
    )
        .prop_map(|((src_port, dst_port, seq, ack), (flags, window, options), payload)| {
            let mut seg = TcpSegment {
                src_port,
                dst_port,
                seq: SeqNumber(seq),
                ack: SeqNumber(ack),
                flags: TcpFlags(flags),
                window,
                options,
                payload_len: 0,
                ecn: crate::EcnCodepoint::NotEct,
            };
            seg.payload_len = payload.min(65_535 - 20 - seg.header_len());
            seg
        })
}

/// Option areas built from plausible pieces (known kinds, small lengths) so the decoder's deeper
/// branches are reached more often than by uniform bytes.
fn arb_option_area() -> impl Strategy<Value = Vec<u8>> {
    let piece = (
        prop_oneof![Just(0u8), Just(1), Just(2), Just(3), Just(4), Just(5), Just(8), any::<u8>()],
        prop_oneof![0..=12u8, Just(18), Just(26), Just(34), any::<u8>()],
        proptest::collection::vec(any::<u8>(), 0..12),
    )
        .prop_map(|(kind, len, body)| {
            let mut v = vec![kind, len];
            v.extend(body);
            v
        });
    proptest::collection::vec(piece, 0..6).prop_map(|pieces| {
        let mut area = pieces.concat();
        area.truncate(MAX_OPTIONS_LEN);
        area
    })
}

fn parse_everything(bytes: &[u8]) {
    let _ = parse_ipv4_tcp(bytes);
    let _ = parse_ipv4_tcp_with(bytes, Checksums::Ignore);
    let _ = parse_tcp(bytes, SRC, DST);
    if let Ok(ip) = Ipv4Packet::new_checked(bytes) {
        let _ = (ip.verify_checksum(), ip.payload(), ip.frag_offset(), ip.tos());
    }
    if let Ok(tcp) = TcpPacket::new_checked(bytes) {
        let _ = (tcp.verify_checksum(SRC, DST), tcp.options(), tcp.payload(), tcp.urgent());
        let _ = tcp.to_segment();
    }
}

proptest! {
    #[test]
    fn prop_emit_then_parse_is_identity(seg in arb_segment()) {
        let mut bytes = Vec::new();
        let n = emit_ipv4_tcp(&seg, SRC, DST, 3, PayloadFill::SeqLowByte, &mut bytes).unwrap();
        prop_assert_eq!(n as u32, seg.ip_len());
        let ip = Ipv4Packet::new_checked(&bytes[..]).unwrap();
        prop_assert_eq!(TcpPacket::new_checked(ip.payload()).unwrap().header_len() as u32,
            seg.header_len());
        prop_assert_eq!(parse_ipv4_tcp(&bytes).map(|(_, s)| s), Ok(seg));
        prop_assert_eq!(parse_tcp(&bytes[20..], SRC, DST), Ok(seg));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn prop_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..160)) {
        parse_everything(&bytes);
        let _ = decode_options(&bytes);
        // Also with a plausible first byte, so the IPv4 checks get past the version.
        let mut v4 = bytes.clone();
        if let Some(b) = v4.first_mut() {
            *b = 0x45;
        }
        parse_everything(&v4);
    }

    #[test]
    fn prop_option_areas_never_panic(area in arb_option_area()) {
        let _ = decode_options(&area);
        let mut padded = area.clone();
        padded.resize(area.len().div_ceil(4) * 4, 0);
        let parsed = parse_raw_options(&padded);
        prop_assert_eq!(parsed, decode_options(&padded));
    }

    /// Valid datagrams with a few bytes overwritten, optionally with the checksums repaired so
    /// the damage reaches the option decoder. Whatever parses re-emits without panicking, and
    /// re-parses to the same segment when its options fit the Linux layout.
    #[test]
    fn prop_mutated_datagrams_never_panic(
        seg in arb_segment(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        fix in any::<bool>(),
    ) {
        let seg = TcpSegment { payload_len: seg.payload_len.min(64), ..seg };
        let mut bytes = Vec::new();
        emit_ipv4_tcp(&seg, SRC, DST, 3, PayloadFill::Zeros, &mut bytes).unwrap();
        // Concentrate the edits on the headers.
        let headers = (20 + seg.header_len() as usize).min(bytes.len());
        for (at, value) in edits {
            bytes[at.index(headers)] = value;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        if fix {
            refresh_checksums(&mut bytes);
        }
        parse_everything(&bytes);
        if let Ok((_, parsed)) = parse_ipv4_tcp_with(&bytes, Checksums::Ignore) {
            let mut again = Vec::new();
            match emit_ipv4_tcp(&parsed, SRC, DST, 3, PayloadFill::Zeros, &mut again) {
                Ok(_) => prop_assert_eq!(parse_ipv4_tcp(&again).map(|(_, s)| s), Ok(parsed)),
                Err(e) => prop_assert!(matches!(e, WireError::OptionsTooLong(_)), "{e}"),
            }
        }
    }
}

#[test]
fn fragments_carry_the_datagram_payload_in_8_byte_units_and_parse_back_reassembled() {
    // A 1460-byte segment with timestamps: 1512 bytes of IP, so 1492 bytes of payload; over a 576-byte
    // MTU each fragment but the last carries (576 - 20) / 8 * 8 = 552 bytes: 552 + 552 + 388.
    let seg = TcpSegment { payload_len: 1460, ..ack() };
    let datagram = round_trip(&seg);
    let (chunk, payload) = (552usize, datagram.len() - 20);
    let mut joined = datagram[..20].to_vec();
    let mut offset = 0;
    let mut lens = Vec::new();
    while offset < payload {
        let len = chunk.min(payload - offset);
        let more = offset + len < payload;
        let mut f = Vec::new();
        assert_eq!(emit_ipv4_fragment(&datagram, offset, len, more, &mut f), Ok(20 + len));
        let ip = Ipv4Packet::new_checked(&f[..]).unwrap();
        assert!(ip.verify_checksum());
        assert_eq!((ip.total_len() as usize, ip.frag_offset() as usize, ip.more_fragments()), (20 + len, offset, more));
        assert_eq!(ip.ident(), IP_ID);
        // A fragment is not a TCP segment to a parser that does not reassemble.
        assert_eq!(parse_ipv4_tcp(&f).unwrap_err(), WireError::Fragmented);
        joined.extend_from_slice(&f[20..]);
        lens.push(len);
        offset += len;
    }
    assert_eq!(lens, [552, 552, 388]);
    assert_eq!(joined, datagram, "the fragments' payloads are the datagram's, in order");
    // Bad requests leave the buffer alone.
    let mut f = vec![1u8];
    assert_eq!(emit_ipv4_fragment(&datagram, 4, 552, true, &mut f), Err(WireError::BadFragment));
    assert_eq!(emit_ipv4_fragment(&datagram, 0, 550, true, &mut f), Err(WireError::BadFragment));
    assert_eq!(emit_ipv4_fragment(&datagram, 1104, 400, false, &mut f), Err(WireError::Truncated));
    assert_eq!(emit_ipv4_fragment(&datagram[..100], 0, 8, true, &mut f), Err(WireError::Truncated));
    assert_eq!(f, [1]);
}
