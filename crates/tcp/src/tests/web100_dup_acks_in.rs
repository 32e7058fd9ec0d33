//! `dup_acks_in = "web100"`: DupAcksIn as the web100 patch counted it (`web100_update_segrecv`, called
//! from `tcp_v4_rcv` before the segment is processed): every segment without payload whose ACK equals
//! SND.UNA on arrival, where RFC 5681 §2 counts only those that leave the window unchanged while data is
//! outstanding. The sender's behaviour is the same under both: only the counter differs.

use super::pair::{Fate, Pair, Side};
use super::*;
use crate::config::DupAcksIn;

/// The zero-window exchange of `flow::test_established_zero_window_probe` (a receiver with an 8-segment
/// buffer that does not read, then reads everything at 8160 ms), counted both ways. The sender's pure
/// ACKs at SND.UNA are the three answers to its window probes (window 0, nothing outstanding: no RFC 5681
/// duplicate) and the window update after the read (ACK 21585, window 11584: a changed window, no RFC
/// 5681 duplicate either). web100 counts all four; RFC 5681 none. Every other counter agrees.
fn zero_window_then_update(def: DupAcksIn) -> (crate::Estats, Vec<(u32, u16)>) {
    let client_cfg = TcpConfig { dup_acks_in: def, ..cfg() };
    let server_cfg = TcpConfig { recv_buffer: cfg_bytes(8 * 1448), dup_acks_in: def, ..cfg() };
    let mut p = Pair::new(client_cfg, server_cfg, dur_ms(10));
    p.auto_read[1] = false;
    p.establish();
    p.run_until(at(100));
    p.to_write[0] = 20 * 1448;
    p.run_until(at(8160));
    p.auto_read[1] = true;
    p.run_to_idle();
    assert_eq!(p.read[1], 20 * 1448);
    let acks =
        p.sent_by(Side::Server).filter(|s| s.at >= at(150)).map(|s| (s.seg.ack.0, s.seg.window)).take(5).collect();
    (p.client.estats(), acks)
}

#[test]
fn web100_counts_window_probe_answers_and_window_updates_rfc5681_does_not() {
    let (web100, acks) = zero_window_then_update(DupAcksIn::Web100);
    let (rfc, acks_rfc) = zero_window_then_update(DupAcksIn::Rfc5681);
    // The ACKs the sender receives from 150 ms: the one that closes the window, three probe answers, the
    // window update.
    assert_eq!(acks, [(21_585, 0), (21_585, 0), (21_585, 0), (21_585, 0), (21_585, 11_584)]);
    assert_eq!(acks, acks_rfc);
    assert_eq!((web100.DupAcksIn, rfc.DupAcksIn), (4, 0));
    let same = |e: &crate::Estats| crate::Estats { DupAcksIn: 0, ..e.clone() };
    assert_eq!(same(&web100), same(&rfc));
    assert_eq!((web100.FastRetran, web100.SegsRetrans), (0, 0));
}

/// Under `web100` the count is taken on arrival, before the ACK is processed, so an ACK that advances
/// SND.UNA is never one; real duplicates (the first segment lost, no SACK) are counted under both rules,
/// web100 also counting those whose window changed, and fast retransmit runs the same under both: only
/// the counter differs.
#[test]
fn a_lost_segment_gives_duplicates_under_both_and_the_same_recovery() {
    let run = |def: DupAcksIn| {
        let c = TcpConfig { sack: false, dup_acks_in: def, ..cfg() };
        let mut p = Pair::new(c.clone(), c, dur_ms(10));
        p.establish();
        p.run_until(at(100));
        let mut first = true;
        p.set_filter(move |side, seg| {
            if side == Side::Client && seg.seq == SeqNumber(10_001) && seg.payload_len > 0 && std::mem::take(&mut first)
            {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        p.client.send(8 * 1448);
        p.run_to_idle();
        assert_eq!(p.read[1], 8 * 1448);
        p.client.estats()
    };
    let (web100, rfc) = (run(DupAcksIn::Web100), run(DupAcksIn::Rfc5681));
    assert_eq!((web100.FastRetran, web100.SegsRetrans), (1, 1));
    assert!(rfc.DupAcksIn >= 3 && web100.DupAcksIn >= rfc.DupAcksIn, "{} {}", web100.DupAcksIn, rfc.DupAcksIn);
    let same = |e: &crate::Estats| crate::Estats { DupAcksIn: 0, ..e.clone() };
    assert_eq!(same(&web100), same(&rfc));
}
