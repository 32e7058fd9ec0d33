//! Linux enters loss recovery whenever loss detection holds a segment marked lost (`tcp_time_to_recover`
//! in `net/ipv4/tcp_input.c`: `lost_out`), and `tcp_fastretrans_alert` asks it in the same ACK that ended
//! the recovery before: a segment above the old recovery point, marked lost during that recovery and not
//! yet acknowledged, starts the next one at once. RFC 6582's `recover` guard (a new recovery only on a new
//! loss past the last recovery point) is not Linux's with SACK.

use super::pair::{Fate, Pair, Side};
use super::*;

/// CUBIC, IW 10, 20 ms each way. The 9th data segment is lost, and so is its first retransmission; the
/// first new segment sent after that retransmission is lost too. RACK marks the retransmission and that
/// segment lost from the same SACKs and both go again; the second retransmission of the 9th is
/// acknowledged first, which passes the first recovery's point and ends it while the other is still
/// marked lost (its retransmission in flight). Linux starts the second recovery in that ACK; the model
/// waited for a segment newly marked lost, and there was none, so it stayed in one.
#[test]
fn a_segment_still_marked_lost_when_recovery_ends_starts_the_next_at_once() {
    let mut p = Pair::new(linux_4mib_no_tso(), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    let (mut first, mut highest) = (None, None);
    let (mut ninth_sent, mut drop_next_new) = (0, false);
    p.set_filter(move |side, seg| {
        if side != Side::Client || seg.payload_len == 0 {
            return Fate::Deliver;
        }
        let s0 = *first.get_or_insert(seg.seq);
        let ninth = s0 + 8 * 1448;
        if seg.seq == ninth {
            ninth_sent += 1;
            if ninth_sent == 2 {
                drop_next_new = true;
            }
            if ninth_sent <= 2 {
                return Fate::Drop;
            }
        }
        let new = highest.is_none_or(|h: tcplab_wire::SeqNumber| seg.seq > h);
        if new {
            highest = Some(seg.seq);
            if drop_next_new && seg.seq > ninth {
                drop_next_new = false;
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.to_write[0] = 300 * 1448;
    p.run_while(|p| p.client.estats().ThruOctetsAcked < 300 * 1448 && p.now < at(5_000));
    let e = p.client.estats();
    assert_eq!(e.ThruOctetsAcked, 300 * 1448, "everything delivered");
    assert_eq!(e.Timeouts, 0, "repaired by recovery, no timeout");
    assert_eq!(e.SegsRetrans, 3, "the 9th twice, the later segment once");
    assert_eq!(e.FastRetran, 2, "the second recovery started when the first ended, its segment still lost");
}
