//! Two Linux rules behind the `linux` personality's recovery timing at heavy random loss (docs/bbr.md
//! § bbr-loss, fifth round): the receiver's SACK compression sends its pending ACK before a block can move
//! past the second position of its array (`sack_blocks_expected`, Linux 5.8's TCP_SACK_BLOCKS_EXPECTED),
//! and a D-SACK widens RACK's reordering window only after reordering was seen
//! (`rack_dsack_after_reordering`, Linux 5.15's `tcp_dsack_seen`).

use super::*;
use crate::rack::Rack;

fn ms(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

/// A hole at 50001; #1..#3 give the three duplicate ACKs that go at once; #5 starts a second block and
/// is compressed. #7 starts a third: with two blocks held, Linux (5.8 on) sends the pending ACK at once;
/// the pre-5.8 rule (a full array of four) compresses it as well.
#[test]
fn test_established_a_third_sack_block_sends_the_compressed_ack_when_two_are_expected() {
    let run = |expected: u32| {
        let mut c = client_established(TcpConfig { comp_sack_nr: 44, sack_blocks_expected: expected, ..cfg() });
        let seg = |i: u32| 50_001 + i * 1448;
        for k in 1..=3 {
            send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
            assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "duplicate ACK {k} goes at once");
        }
        send!(c, time 20, peer(seg(5), 10_001, ACK, 1448, 20, 11));
        assert!(transmit_all(&mut c, at(20)).is_empty(), "#5 (a second block) is compressed");
        send!(c, time 20, peer(seg(7), 10_001, ACK, 1448, 20, 11));
        let acks = transmit_all(&mut c, at(20));
        acks.first().map(|a| a.options.sack.as_slice().iter().map(|b| (b.left.0, b.right.0)).collect::<Vec<_>>())
    };
    let seg = |i: u32| 50_001 + i * 1448;
    assert_eq!(run(2), Some(vec![(seg(7), seg(8)), (seg(5), seg(6)), (seg(1), seg(4))]));
    assert_eq!(run(4), None, "before 5.8: compressed until the array is full");
}

/// With two expected, extending the block in the third position of the array sends the pending ACK too
/// (the block moves to the front and is reported there).
#[test]
fn test_established_extending_the_third_block_sends_the_compressed_ack() {
    let mut c = client_established(TcpConfig { comp_sack_nr: 44, sack_blocks_expected: 2, ..cfg() });
    let seg = |i: u32| 50_001 + i * 1448;
    for k in [1, 4, 7] {
        send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
        assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "duplicate ACK for #{k} goes at once");
    }
    // The array is [#7, #4, #1]; #8 extends the top block and is compressed.
    send!(c, time 20, peer(seg(8), 10_001, ACK, 1448, 20, 11));
    assert!(transmit_all(&mut c, at(20)).is_empty(), "#8 extends the first block: compressed");
    // #2 extends #1's block, third in the array: the ACK goes at once, that block first.
    send!(c, time 20, peer(seg(2), 10_001, ACK, 1448, 20, 11));
    let acks = transmit_all(&mut c, at(20));
    assert_eq!(acks.len(), 1);
    let blocks: Vec<(u32, u32)> = acks[0].options.sack.as_slice().iter().map(|b| (b.left.0, b.right.0)).collect();
    assert_eq!(blocks, [(seg(1), seg(3)), (seg(7), seg(9)), (seg(4), seg(5))]);
}

/// Three segments sent at 0, a needless retransmission of the first at 10 ms, all cumulatively ACKed at
/// 41 ms, then a D-SACK of the first below SND.UNA. RFC 8985 as written counts it as reordering (below
/// RACK.fack) and widens the window: in recovery RACK then waits min_RTT/4 × 2 = 20 ms beyond RACK.rtt.
/// Linux: no reordering seen, so the window stays zero in recovery.
#[test]
fn rack_a_dsack_below_snd_una_shows_no_reordering_under_linux() {
    let window = |after_reordering: bool| {
        let mut r = Rack::new(SeqNumber(0), 3);
        for i in 0..3 {
            r.on_send(SeqNumber(i * 1000), SeqNumber(i * 1000 + 1000), ms(0));
        }
        r.on_rtt_sample(Duration::from_millis(40));
        r.on_retransmit(SeqNumber(0), SeqNumber(1000), ms(10));
        r.begin_ack();
        r.on_cumulative_ack(SeqNumber(3000), ms(41));
        r.begin_ack();
        r.on_dsack(SeqNumber(0), SeqNumber(1000), SeqNumber(3000), SeqNumber(3000), false, after_reordering);
        r.reo_wnd(true, 3, Some(Duration::from_millis(40)))
    };
    assert_eq!(window(false), Duration::from_millis(20));
    assert_eq!(window(true), Duration::ZERO);
}

/// A D-SACK above SND.UNA of a retransmitted segment already SACKed (the original came late) is reordering
/// under both rules; under Linux's it widens the window only on a later D-SACK round, and a D-SACK of the
/// tail loss probe never does.
#[test]
fn rack_a_dsack_of_a_late_original_is_reordering_and_widens_from_the_next_round() {
    let mut r = Rack::new(SeqNumber(0), 3);
    for i in 0..4 {
        r.on_send(SeqNumber(i * 1000), SeqNumber(i * 1000 + 1000), ms(0));
    }
    r.on_rtt_sample(Duration::from_millis(40));
    r.on_retransmit(SeqNumber(1000), SeqNumber(2000), ms(10));
    r.begin_ack();
    r.on_sack(SeqNumber(1000), SeqNumber(3000), ms(41));
    let srtt = Some(Duration::from_millis(40));
    assert_eq!(r.reo_wnd(true, 3, srtt), Duration::ZERO, "nothing reordered yet");
    r.begin_ack();
    r.on_dsack(SeqNumber(1000), SeqNumber(2000), SeqNumber(0), SeqNumber(4000), false, true);
    assert_eq!(r.reo_wnd(true, 3, srtt), Duration::from_millis(10), "reordering seen: min_RTT/4, not widened");
    r.begin_ack();
    r.on_dsack(SeqNumber(1000), SeqNumber(2000), SeqNumber(0), SeqNumber(4000), true, true);
    assert_eq!(r.reo_wnd(true, 3, srtt), Duration::from_millis(10), "the probe's D-SACK does not widen");
    r.begin_ack();
    r.on_dsack(SeqNumber(1000), SeqNumber(2000), SeqNumber(0), SeqNumber(4000), false, true);
    assert_eq!(r.reo_wnd(true, 3, srtt), Duration::from_millis(20), "a D-SACK after reordering widens");
}
