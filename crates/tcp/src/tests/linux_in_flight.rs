//! The `linux` personality counts what is in flight as Linux does for every congestion control
//! (`tcp_packets_in_flight`: outstanding less SACKed and lost, plus retransmitted), outside recovery too,
//! and without RFC 3042's limited transmit on top (a SACKed segment leaving the count is Linux's way of
//! letting new data out on duplicate ACKs).

use super::pair::{Fate, Pair, Side};
use super::*;

/// CUBIC, IW 10, 20 ms each way, the 9th data segment lost. The 10th arrives out of order and its ACK
/// SACKs it; one SACKed segment is below DupThresh, so RACK waits its reordering window and the
/// connection is still outside recovery. Linux's count leaves the SACKed segment out of what is in
/// flight; RFC 5681's FlightSize counted it.
#[test]
fn test_established_sacked_data_leaves_the_count_outside_recovery() {
    let mut p = Pair::new(linux_4mib_no_tso(), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    let mut n = 0;
    p.set_filter(move |side, seg| {
        if side == Side::Client && seg.payload_len > 0 {
            n += 1;
            if n == 9 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.to_write[0] = 100 * 1448;
    p.run_while(|p| p.client.estats().SACKsRcvd == 0 && p.now < at(2_000));
    let e = p.client.estats();
    assert_eq!((e.SACKsRcvd, e.FastRetran, e.SegsRetrans), (1, 0, 0), "one SACK, no recovery yet");
    let outstanding = e.DataOctetsOut - e.ThruOctetsAcked;
    assert!(outstanding > 2 * 1448, "new data went on the cumulative ACK: {outstanding} bytes out");
    assert_eq!(e.PipeSize, outstanding - 1448, "outstanding {outstanding} bytes less the SACKed segment");
    // Then RACK's window passes, the hole is retransmitted, and one recovery repairs it.
    p.run_while(|p| p.client.estats().SegsRetrans == 0 && p.now < at(2_000));
    let e = p.client.estats();
    assert_eq!((e.SegsRetrans, e.FastRetran, e.Timeouts), (1, 1, 0));
}
