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

/// The TSval of each segment is the clock's tick at its instant, though `ts_now` keeps the tick it found
/// last: the last nanosecond of a tick and the first of the next, a tick well later, and the tick changed
/// by a knob at the same instant (10 ms: TSval 21 ms / 10 ms + 1) all give the clock's value.
#[test]
fn tsval_is_the_tick_of_each_instant_though_the_tick_is_kept() {
    let mut c = client_established(TcpConfig { nodelay: true, ..cfg() });
    let tsval_at = |c: &mut Connection, ns: u64| {
        assert_eq!(c.send(100), 100);
        let sent = transmit_all(c, Instant::from_nanos(ns));
        assert_eq!(sent.len(), 1);
        sent[0].options.timestamps.expect("timestamps").tsval
    };
    assert_eq!(tsval_at(&mut c, 20_999_999), 21);
    assert_eq!(tsval_at(&mut c, 20_999_999), 21);
    assert_eq!(tsval_at(&mut c, 21_000_000), 22);
    assert_eq!(tsval_at(&mut c, 21_999_999), 22);
    assert_eq!(tsval_at(&mut c, 25_000_001), 26);
    c.config_mut().timestamp_tick = Duration::from_millis(10);
    assert_eq!(tsval_at(&mut c, 25_000_001), 3);
    assert_eq!(tsval_at(&mut c, 30_000_000), 4);
}
