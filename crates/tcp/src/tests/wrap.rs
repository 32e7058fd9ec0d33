//! Sequence number wraparound (RFC 9293 §3.4: arithmetic modulo 2^32) over long transfers.

use super::pair::{Fate, Pair, Side};
use super::*;

const MIB: u64 = 1 << 20;

/// Jumbo segments (MSS 65495 → 65483 payload bytes with timestamps) and 16 MiB buffers (window scale 9),
/// so that gigabytes take few segments.
fn cfg_jumbo() -> TcpConfig {
    TcpConfig { mss: cfg_bytes(65_495), send_buffer: cfg_bytes(16 * MIB), recv_buffer: cfg_bytes(16 * MIB), ..cfg() }
}

/// Asserts that a one-way bulk transfer of `total` bytes went through without a single retransmission,
/// duplicate or out-of-order segment: every byte acknowledged and received exactly once.
fn assert_clean(p: &Pair, total: u64) {
    let (c, s) = (p.client.estats(), p.server.estats());
    assert_eq!(c.ThruOctetsAcked, total);
    assert_eq!(s.ThruOctetsReceived, total);
    assert_eq!(s.DataOctetsIn, total, "no byte arrived twice");
    assert_eq!(p.read[1], total);
    assert_eq!((c.SegsRetrans, c.Timeouts, c.FastRetran, c.DupAcksIn, s.DupAcksOut), (0, 0, 0, 0, 0));
}

/// Both directions across the wrap with the pair driver (1 ms one-way delay, default config): the
/// client's ISS is 2^32 − 1001, so its first segment (seq 2^32 − 1000, 1448 bytes) already straddles
/// 2^32; the server's ISS is 2^32 − 4 MiB − 1, so its stream wraps after 4 MiB. 8 MiB each way, then
/// both close. Everything is delivered and acknowledged once, no retransmission, and the final
/// sequence numbers are the ISS + 1 + 8 MiB + 1 (FIN), modulo 2^32.
#[test]
fn test_established_seq_wraparound() {
    let client_iss = u32::MAX - 1000;
    let server_iss = u32::MAX - (4 * MIB) as u32;
    let total = 8 * MIB;
    let mut p = Pair::with_iss(cfg(), cfg(), dur_ms(1), client_iss, server_iss);
    p.establish();
    p.to_write = [total, total];
    p.close_when_written = [true, true];
    p.run_to_idle();

    assert_eq!((p.client.state(), p.server.state()), (State::Closed, State::Closed));
    assert_eq!(p.read, [total, total]);
    for (me, other, iss) in [(&p.client, &p.server, client_iss), (&p.server, &p.client, server_iss)] {
        let (e, o) = (me.estats(), other.estats());
        assert_eq!(e.ThruOctetsAcked, total);
        assert_eq!(o.ThruOctetsReceived, total);
        assert_eq!(o.DataOctetsIn, total);
        assert_eq!((e.SegsRetrans, e.Timeouts, e.FastRetran, e.DupAcksIn), (0, 0, 0, 0));
        let end = SeqNumber(iss) + 1 + total as u32 + 1;
        assert_eq!((me.snd_una(), me.snd_nxt(), other.rcv_nxt()), (end, end, end));
    }
    // The client's first data segment straddles 2^32; the server's stream has segments on both sides.
    let first = p.sent_by(Side::Client).find(|s| s.seg.payload_len > 0).unwrap().seg;
    assert_eq!(first.seq, SeqNumber(u32::MAX - 999));
    assert!((first.seq + first.payload_len).0 < first.seq.0, "wraps inside the segment");
    let server_seqs: Vec<u32> =
        p.sent_by(Side::Server).filter(|s| s.seg.payload_len > 0).map(|s| s.seg.seq.0).collect();
    assert!(server_seqs.iter().any(|&s| s > u32::MAX - 2 * MIB as u32));
    assert!(server_seqs.iter().any(|&s| s < 2 * MIB as u32));
}

/// More than 2^32 bytes (4 GiB + 1 MiB) in one direction: the whole sequence space goes by once and
/// then some, so every sequence number is reused. Jumbo segments keep this to ~66 000 segments.
#[test]
fn test_established_transfer_beyond_4gib() {
    let total = (1u64 << 32) + MIB;
    let iss = u32::MAX - 1000;
    let mut p = Pair::with_iss(cfg_jumbo(), cfg_jumbo(), dur_ms(1), iss, REMOTE_ISS);
    p.record = false;
    p.establish();
    assert_eq!(p.client.smss(), 65_483);
    p.to_write[0] = total;
    p.run_to_idle();
    assert_clean(&p, total);
    let end = SeqNumber(iss) + 1 + total as u32; // (iss + 1 + total) mod 2^32
    assert_eq!((p.client.snd_una(), p.server.rcv_nxt()), (end, end));
}

/// One segment dropped after `drop_after` bytes of a `total`-byte jumbo transfer (ISS 2^32 − 1001).
fn jumbo_drop(total: u64, drop_after: u64) -> Pair {
    let iss = u32::MAX - 1000;
    let mut p = Pair::with_iss(cfg_jumbo(), cfg_jumbo(), dur_ms(1), iss, REMOTE_ISS);
    p.record = false;
    p.establish();
    let first_byte = iss.wrapping_add(1);
    let mut done = false;
    p.set_filter(move |side, seg| {
        let offset = seg.seq.0.wrapping_sub(first_byte) as u64;
        if side == Side::Client && seg.payload_len > 0 && !done && offset >= drop_after {
            done = true;
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.to_write[0] = total;
    p.run_to_idle();
    assert_eq!(p.client.estats().ThruOctetsAcked, total);
    assert_eq!(p.read[1], total);
    p
}

/// Control for the test below: a segment lost after 1 GiB is repaired by fast retransmit.
#[test]
fn test_established_fast_retransmit_after_1gib() {
    let p = jumbo_drop((1 << 30) + 64 * MIB, (1 << 30) + 16 * MIB);
    let e = p.client.estats();
    assert_eq!((e.FastRetran, e.Timeouts), (1, 0));
}

/// A segment lost after 2 GiB must be repaired by fast retransmit just the same (RFC 5681 §3.2, RFC 6582
/// §3.2 step 1: fast retransmit when the cumulative ACK "covers more than recover"). `recover` is
/// initialised to the ISS (RFC 6582 §3.2) and never moves while no loss happens; once SND.UNA is 2^31
/// or more beyond it, the modulo-2^32 comparison SND.UNA > recover turns false (RFC 9293 §3.4: only
/// numbers less than 2^31 apart compare meaningfully), and the loss waits for the RTO instead.
#[test]
fn test_established_fast_retransmit_after_2gib() {
    let p = jumbo_drop((1 << 31) + 64 * MIB, (1 << 31) + 16 * MIB);
    let e = p.client.estats();
    assert_eq!((e.FastRetran, e.Timeouts), (1, 0));
}

/// Minshall's Nagle holds a short segment while an earlier short one is unacknowledged, and finds that out
/// from SND.SML, the end of the last short segment sent. A bulk transfer sends none until its tail, so after
/// 2 GiB SND.SML (still the ISS) compares modulo 2^32 as beyond SND.UNA: the tail was held for good and
/// the connection never closed. Linux's `tcp_minshall_check` asks that SND.SML lie between SND.UNA and
/// SND.NXT, which a stale one does not.
#[test]
fn test_established_minshall_sends_the_short_tail_after_2gib() {
    // A send buffer of whole segments: every segment but the tail is full-sized.
    let total = (1u64 << 31) + 64 * MIB + 1000;
    let cfg = TcpConfig { minshall: true, send_buffer: cfg_bytes(256 * 65_483), ..cfg_jumbo() };
    let mut p = Pair::with_iss(cfg.clone(), cfg, dur_ms(1), 1000, REMOTE_ISS);
    p.record = false;
    p.establish();
    p.to_write[0] = total;
    p.close_when_written[0] = true;
    p.run_to_idle();
    assert_clean(&p, total);
    assert_eq!(p.client.state(), State::FinWait2, "the FIN went after the short tail and was acknowledged");
}
