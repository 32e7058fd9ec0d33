//! Linux `tcp_sack_new_ofo_skb` under SACK compression: a segment that starts a new SACK block while the
//! receiver already holds four (TCP_NUM_SACKS) sends the compressed ACK that is pending at once
//! (`tcp_sack_compress_send_ack`), so that no block goes unreported (docs/bbr.md § bbr-loss).

use super::*;

/// A hole at 50001; segments #1..#3 give the three duplicate ACKs that go at once, then #5, #7 and #9
/// start blocks two to four and are compressed. #11 starts a fifth: the ACK goes at once, its first block
/// the new one. #12, extending that block, is compressed again.
#[test]
fn test_established_a_fifth_sack_block_sends_the_compressed_ack() {
    let mut c = client_established(TcpConfig { comp_sack_nr: 44, ..cfg() });
    let seg = |i: u32| 50_001 + i * 1448;
    for k in 1..=3 {
        send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
        assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "duplicate ACK {k} goes at once");
    }
    for k in [5, 7, 9] {
        send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
        assert!(transmit_all(&mut c, at(20)).is_empty(), "#{k} is compressed");
    }
    send!(c, time 20, peer(seg(11), 10_001, ACK, 1448, 20, 11));
    let acks = transmit_all(&mut c, at(20));
    assert_eq!(acks.len(), 1);
    let blocks = acks[0].options.sack.as_slice();
    assert_eq!((blocks[0].left, blocks[0].right), (SeqNumber(seg(11)), SeqNumber(seg(12))));
    assert_eq!(c.estats().AcksCompressed, 3);
    send!(c, time 20, peer(seg(12), 10_001, ACK, 1448, 20, 11));
    assert!(transmit_all(&mut c, at(20)).is_empty(), "#12 extends the block: compressed");
}

/// Linux's SACK array holds each block once, the latest touched first: holes at #0, #3, #4, #6 and #8;
/// #1, #2 and #5 go at once, #7 and #9 are compressed; #3 then arrives (a repair: block #1..#3 grows) and
/// #10..#13 extend the top block. The compressed ACK reports the top block, then the repaired one, then
/// the next: the repair is not hidden behind four arrivals in one block.
#[test]
fn test_established_a_compressed_ack_reports_the_block_a_repair_grew() {
    let mut c = client_established(TcpConfig { comp_sack_nr: 44, ..cfg() });
    let seg = |i: u32| 50_001 + i * 1448;
    for k in [1, 2, 5] {
        send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
        assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "duplicate ACK for #{k} goes at once");
    }
    for k in [7, 9, 3, 10, 11, 12, 13] {
        send!(c, time 20, peer(seg(k), 10_001, ACK, 1448, 20, 11));
        assert!(transmit_all(&mut c, at(20)).is_empty(), "#{k} is compressed");
    }
    let due = c.poll_timeout().unwrap();
    c.on_timeout(due);
    let acks = transmit_all(&mut c, due);
    assert_eq!(acks.len(), 1);
    let blocks: Vec<(u32, u32)> = acks[0].options.sack.as_slice().iter().map(|b| (b.left.0, b.right.0)).collect();
    assert_eq!(blocks, [(seg(9), seg(14)), (seg(1), seg(4)), (seg(7), seg(8))]);
}
