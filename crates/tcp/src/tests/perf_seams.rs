//! What the engine's hot path relies on from the connection (issue 25): the unsent bytes that decide
//! whether a send call pushes its data out at once, and RFC 4898's MinRTO / MaxRTO, kept in nanoseconds
//! per ACK and converted only when the statistics are read.

use super::*;

/// Written data counts as unsent until a segment first carries it: before the SYN is answered, past cwnd
/// once established. A timeout's retransmission is not unsent data (SND.NXT does not move back).
#[test]
fn unsent_bytes_run_from_snd_nxt_to_the_end_of_the_send_buffer() {
    let mut c = client_syn_sent(cfg());
    assert_eq!(c.unsent_bytes(), 0, "the SYN is not data");
    assert_eq!(c.send(1000), 1000);
    assert_eq!(c.unsent_bytes(), 1000, "data written in SYN-SENT waits for the handshake");

    let mut c = client_established(cfg());
    assert_eq!(c.unsent_bytes(), 0);
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    assert_eq!(c.unsent_bytes(), 10 * 1448);
    let sent: u32 = transmit_all(&mut c, at(20)).iter().map(|s| s.payload_len).sum();
    assert!(sent > 0 && sent < 10 * 1448, "the initial window sends part of it: {sent}");
    assert_eq!(c.unsent_bytes(), (10 * 1448 - sent) as u64);

    fire(&mut c, 1020);
    let resent = transmit_all(&mut c, at(1020));
    assert_eq!(resent.first().map(|s| s.seq), Some(SeqNumber(LOCAL_ISS + 1)), "the head goes again");
    assert_eq!(c.unsent_bytes(), (10 * 1448 - sent) as u64);
}

/// Every restart of the retransmission timer is a RetranTimeout value: MinRTO is the 1 s first armed,
/// MaxRTO the backed-off 4 s after two expiries, in milliseconds as RFC 4898 counts them.
#[test]
fn min_and_max_rto_are_the_extremes_of_the_timeouts_armed() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(1448), 1448);
    transmit_all(&mut c, at(20));
    fire(&mut c, 1020);
    transmit_all(&mut c, at(1020));
    fire(&mut c, 3020);
    transmit_all(&mut c, at(3020));
    let e = c.estats();
    assert_eq!((e.MinRTO, e.MaxRTO), (1000.0, 4000.0));
}
