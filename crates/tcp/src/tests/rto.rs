//! The retransmission timer (RFC 6298): exponential backoff (5.5) capped at rto_max (2.5), the timer
//! restarted on ACKs of new data (5.3), RFC 4898 Timeouts / SubsequentTimeouts, and Karn's algorithm
//! (RFC 6298 §3): the backed-off RTO stays until a valid RTT sample collapses it.
//!
//! Client fixture: one 10 ms RTT sample, so RTO = max(10 + 4·5, rto_min 1 s) = 1 s.

use super::*;

/// Two segments sent at t=20, nothing ever acknowledged. The timer (armed at 20 + 1 s) fires at 1020,
/// then after 2, 4, 8, 16, 32 s, then 60 s (64 s capped at rto_max), 60 s. Each expiry retransmits
/// only the first segment (cwnd = 1 SMSS after a timeout, RFC 5681 §3.1), without PSH.
/// RFC 4898: Timeouts counts the first expiry, SubsequentTimeouts the backed-off ones.
#[test]
fn test_established_rto_backoff() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(2 * 1448), 2 * 1448);
    recv!(c, time 20, [
        out(10_001, 50_001, ACK, 32_768, 1448).ts(21, pts(10)),
        out(11_449, 50_001, PSH_ACK, 32_768, 1448).ts(21, pts(10)),
    ]);
    let expiries = [1_020u64, 3_020, 7_020, 15_020, 31_020, 63_020, 123_020, 183_020];
    for (k, &t) in expiries.iter().enumerate() {
        fire(&mut c, t);
        recv!(c, time t, [out(10_001, 50_001, ACK, 32_768, 1448).ts(ts(t), pts(10))]);
        let n = k as u64 + 1;
        let e = c.estats();
        assert_eq!((e.Timeouts, e.SubsequentTimeouts, e.CurTimeoutCount, e.SegsRetrans), (1, n - 1, n, n));
        // The next expiry: RTO · 2^n, at most 60 s.
        let rto_ms = (1000u64 << n).min(60_000);
        assert_eq!(e.CurRTO, rto_ms as f64);
        assert_eq!(c.poll_timeout(), Some(at(t + rto_ms)));
    }
    // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2·SMSS) = max(1448, 2896) at the first timeout, held
    // on the later ones; cwnd = loss window = 1 SMSS.
    assert_eq!((c.ssthresh(), c.cwnd()), (2896, 1448));
    assert_eq!(c.estats().CongSignals, 1, "one congestion signal for the whole timeout episode");
}

/// A new RTT sample resets the backoff (RFC 6298 §5, last paragraph: the RTO "collapses"). After three
/// expiries (the next one due at 7020 + 8 s), the ACK of the first segment echoes the retransmission's
/// TSval 7021 — timestamps make the sample unambiguous (RFC 7323 §4): 7031 − 7021 = 10 ms. RTO is 1 s
/// again: the restarted timer (RFC 6298 (5.3)) is due at 7030 + 1 s, not 7030 + 8 s. The second
/// segment goes again at once (go-back-N after the timeout; slow start after the RTO allows 2 SMSS).
#[test]
fn test_established_rto_sample_resets_backoff() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(2 * 1448), 2 * 1448);
    recv!(c, time 20, [
        out(10_001, 50_001, ACK, 32_768, 1448).ts(21, pts(10)),
        out(11_449, 50_001, PSH_ACK, 32_768, 1448).ts(21, pts(10)),
    ]);
    for t in [1_020, 3_020, 7_020] {
        fire(&mut c, t);
        recv!(c, time t, [out(10_001, 50_001, ACK, 32_768, 1448).ts(ts(t), pts(10))]);
    }
    assert_eq!(c.poll_timeout(), Some(at(15_020)));
    send!(c, time 7030, peer(50_001, 11_449, ACK, 0, 7030, 7021));
    assert_eq!(c.estats().SampleRTT, 10.0);
    assert_eq!(c.poll_timeout(), Some(at(8_030)));
    assert_eq!(c.estats().CurRTO, 1000.0);
    assert_eq!(c.cwnd(), 2896);
    // The last segment of the write keeps its PSH when it goes again (as BSD's tcp_output and Linux's
    // retransmitted skb do).
    recv!(c, time 7030, [out(11_449, 50_001, PSH_ACK, 32_768, 1448).ts(7031, pts(7030))]);
    let e = c.estats();
    assert_eq!((e.Timeouts, e.SubsequentTimeouts, e.CurTimeoutCount), (1, 2, 0));
    send!(c, time 7040, peer(50_001, 12_897, ACK, 0, 7040, 7031));
    assert_eq!(c.poll_timeout(), None, "all acknowledged (RFC 6298 (5.2))");
}

/// Karn's algorithm without timestamps (RFC 6298 §3, §5): the ACK of a retransmitted segment gives no
/// sample, so the backed-off RTO (8 s after three expiries) stays — also for new data — until a segment
/// sent once is acknowledged; that sample brings RTO back to 1 s.
#[test]
fn test_established_rto_karn_without_timestamps() {
    let mut c = client_established(cfg_no_ts());
    assert_eq!(c.smss(), 1460);
    assert_eq!(c.send(2 * 1460), 2 * 1460);
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 1460), out(11_461, 50_001, PSH_ACK, 32_768, 1460)]);
    for t in [1_020, 3_020, 7_020] {
        fire(&mut c, t);
        recv!(c, time t, [out(10_001, 50_001, ACK, 32_768, 1460)]);
    }
    // ACK of the retransmitted segment: no sample; timer restarted with the backed-off 8 s.
    send!(c, time 7030, inp(50_001, 11_461, ACK, REMOTE_WINDOW, 0));
    assert_eq!(c.estats().CountRTT, 1, "only the handshake's sample");
    assert_eq!(c.poll_timeout(), Some(at(15_030)));
    recv!(c, time 7030, [out(11_461, 50_001, PSH_ACK, 32_768, 1460)]);
    send!(c, time 7040, inp(50_001, 12_921, ACK, REMOTE_WINDOW, 0));
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(c.estats().CountRTT, 1);
    // New data, timed: still the backed-off RTO.
    assert_eq!(c.send(1460), 1460);
    recv!(c, time 7050, [out(12_921, 50_001, PSH_ACK, 32_768, 1460)]);
    assert_eq!(c.poll_timeout(), Some(at(15_050)));
    // Its ACK is a valid sample (10 ms): backoff gone.
    send!(c, time 7060, inp(50_001, 14_381, ACK, REMOTE_WINDOW, 0));
    assert_eq!((c.estats().CountRTT, c.estats().SampleRTT), (2, 10.0));
    assert_eq!(c.send(1460), 1460);
    recv!(c, time 7070, [out(14_381, 50_001, PSH_ACK, 32_768, 1460)]);
    assert_eq!(c.poll_timeout(), Some(at(8_070)));
}

/// RFC 6298 (5.3): every ACK of new data restarts the timer at now + RTO (not from the first send).
#[test]
fn test_established_rto_restarted_by_ack() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(2 * 1448), 2 * 1448);
    recv!(c, time 20, [
        out(10_001, 50_001, ACK, 32_768, 1448).ts(21, pts(10)),
        out(11_449, 50_001, PSH_ACK, 32_768, 1448).ts(21, pts(10)),
    ]);
    assert_eq!(c.poll_timeout(), Some(at(1_020)));
    send!(c, time 500, peer(50_001, 11_449, ACK, 0, 500, 21));
    assert_eq!(c.poll_timeout(), Some(at(1_500)));
    recv_nothing!(c, time 500);
}

/// RFC 7323 §4.3: TS.Recent comes from the oldest segment not yet acknowledged, so an ACK the receiver
/// delays carries the delay into the sender's sample, on purpose (the RTO must cover it). `rfc` on both
/// sides, 20 ms each way: a lone segment waits for the 200 ms delayed-ACK timer and its sample is
/// 40 + 200 ms; two segments draw an immediate ACK (every second full segment) and a 40 ms sample. Sent
/// once each: Karn's rule has nothing to filter. (`rtt-fairness`'s MaxRTT of 221 and 280 ms is the first
/// case, its last full segment: docs/topology.md § RTT fairness.)
#[test]
fn a_delayed_ack_lengthens_the_timestamp_sample_by_its_hold() {
    use super::pair::{Pair, Side};
    let mut p = Pair::new(TcpConfig::default(), TcpConfig::default(), dur_ms(20));
    p.establish();
    let start = p.now;
    p.to_write[0] = 1448;
    p.run_while(|p| p.client.estats().ThruOctetsAcked < 1448 && p.now < start + dur_ms(2_000));
    let e = p.client.estats();
    assert_eq!((e.SegsRetrans, e.Timeouts), (0, 0));
    assert_eq!(e.SampleRTT, 240.0, "40 ms path + the 200 ms hold");
    let ack_at = p.sent_by(Side::Server).last().unwrap().at;
    assert_eq!(ack_at - start, dur_ms(20 + 200), "the ACK left when the delayed-ACK timer fired");
    let start = p.now;
    p.to_write[0] += 2 * 1448;
    p.run_while(|p| p.client.estats().ThruOctetsAcked < 3 * 1448 && p.now < start + dur_ms(2_000));
    let e = p.client.estats();
    assert_eq!(e.SampleRTT, 40.0, "the second full segment is ACKed at once");
    assert_eq!(e.MaxRTT, 240.0);
}
