//! Defects found in review (issue 11), each shown by a test that failed before its fix. The doc comment
//! on each test says what the RFC requires and how the numbers follow.

use super::pair::Pair;
use super::*;
use crate::config::CongestionControlKind;
use crate::InitialWindow;

/// RFC 6675 §2: with SACK, a DupAck is an ACK that brings SACK information about data above SND.UNA
/// not SACKed before. A D-SACK block (RFC 2883) reports a duplicate below the cumulative ACK: it says
/// nothing about the outstanding data, so three ACKs that carry only a D-SACK must not start a fast
/// retransmit. Script: three segments at t=20 (IW 4380); the ACK of the first at t=30 lets more go;
/// then three pure ACKs of 11449, each reporting a duplicate of the first segment (10001..11449).
#[test]
fn test_established_dsack_only_acks_are_not_duplicate_acks() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 3);
    send!(c, time 30, peer(50_001, 11_449, ACK, 0, 30, 21));
    assert!(!transmit_all(&mut c, at(30)).is_empty());
    for t in 31..=33 {
        send!(c, time t, peer(50_001, 11_449, ACK, 0, t, 21).sack(&[(10_001, 11_449)]));
        recv_nothing!(c, time t);
    }
    let e = c.estats();
    assert_eq!((e.DSACKDups, e.DupAcksIn, e.FastRetran, e.SegsRetrans), (3, 0, 0, 0));
}

/// RFC 6937 §3: DeliveredData = Δsnd.una + ΔSACKd, where ΔSACKd is the change in SACKed bytes — net of
/// those that leave the scoreboard because the cumulative ACK now covers them. 20 segments of 1448
/// bytes (10001 + 1448·i), segments 0 and 5 lost, PRR on. The dup ACKs SACK segments 1–4, then 6–19;
/// the retransmission of segment 0 arrives and the partial ACK 17241 covers segments 0–4, of which 1–4
/// were SACKed: Δsnd.una = 7240, ΔSACKd = −5792, DeliveredData = 1448 (the retransmission).
#[test]
fn test_established_prr_delivered_data_nets_out_sacked_bytes() {
    let mut c = client_established(TcpConfig { prr: true, initial_window: InitialWindow::Segments(20), ..cfg() });
    assert_eq!(c.send(20 * 1448), 20 * 1448);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 20);
    let seg = |i: u32| 10_001 + i * 1448;
    for (t, k) in [(30, 2), (31, 3), (32, 4)] {
        send!(c, time t, peer(50_001, seg(0), ACK, 0, t, 21).sack(&[(seg(1), seg(k))]));
        transmit_all(&mut c, at(t));
    }
    assert_eq!(c.estats().FastRetran, 1);
    send!(c, time 33, peer(50_001, seg(0), ACK, 0, 33, 21).sack(&[(seg(6), seg(20)), (seg(1), seg(5))]));
    transmit_all(&mut c, at(33));
    let before = c.prr_delivered();
    send!(c, time 40, peer(50_001, seg(5), ACK, 0, 40, 33).sack(&[(seg(6), seg(20))]));
    assert_eq!(c.prr_delivered() - before, 1448);
}

/// RFC 7323 §5.4 allows a timestamp clock as coarse as 1 s. An echo from the current tick gives an
/// elapsed time of zero ticks; Linux (`tcp_rtt_tsopt_us`) rounds that up to one tick, because the real
/// RTT lies anywhere within it. Taken as 0, it collapses the RTO to its minimum below the real RTT.
/// A 300 ms path with no loss must see no timeout and no retransmission.
#[test]
fn test_established_coarse_timestamp_tick_gives_no_spurious_timeouts() {
    let cfg = TcpConfig {
        timestamp_tick: Duration::from_secs(1),
        rto_min: Duration::from_millis(200),
        send_buffer: cfg_bytes(1 << 20),
        recv_buffer: cfg_bytes(1 << 20),
        ..cfg()
    };
    let mut p = Pair::new(cfg.clone(), cfg, dur_ms(150));
    p.record = false;
    p.establish();
    p.to_write[0] = 2_000 * 1448;
    p.run_while(|p| p.read[1] < 2_000 * 1448);
    let e = p.client.estats();
    assert_eq!((e.Timeouts, e.SegsRetrans), (0, 0));
    assert!(e.MinRTT >= 1000.0, "every sample is at least one tick: {}", e.MinRTT);
}

/// RFC 2883 §4.2: a duplicate of a segment held out of order is reported with a D-SACK block for the
/// duplicate, followed by the SACK block that contains it, so that the sender can tell it is a D-SACK.
/// Segments #2 and #3 arrive (hole at 50001), then #2 again.
#[test]
fn test_established_recv_duplicate_above_rcv_nxt_is_dsacked() {
    let mut c = client_established(cfg());
    send!(c, time 20, peer(51_449, 10_001, ACK, 1448, 20, 11));
    recv!(c, time 20, [out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10)).sack(&[(51_449, 52_897)])]);
    send!(c, time 21, peer(52_897, 10_001, ACK, 1448, 21, 11));
    recv!(c, time 21, [out(10_001, 50_001, ACK, 32_768, 0).ts(22, pts(10)).sack(&[(51_449, 54_345)])]);
    send!(c, time 22, peer(51_449, 10_001, ACK, 1448, 22, 11));
    recv!(c, time 22, [out(10_001, 50_001, ACK, 32_768, 0)
        .ts(23, pts(10))
        .sack(&[(51_449, 52_897), (51_449, 54_345)])]);
    // A duplicate of the whole block repeats the block after the D-SACK: the sender still sees the
    // first block inside the second (RFC 2883 §4.2).
    send!(c, time 23, peer(51_449, 10_001, ACK, 2896, 23, 11));
    recv!(c, time 23, [out(10_001, 50_001, ACK, 32_768, 0)
        .ts(24, pts(10))
        .sack(&[(51_449, 54_345), (51_449, 54_345)])]);
}

/// RFC 6298 (2.4), (2.5): every RTO, the initial one included, lies within [rto_min, rto_max].
/// `rto_initial = 100ms` with the RFC's 1 s minimum arms the SYN timer at 1 s.
#[test]
fn test_syn_sent_initial_rto_is_clamped_to_rto_min() {
    let cfg = TcpConfig { rto_initial: dur_ms(100), ..cfg() };
    // client_syn_sent asserts the SYN and a timer at 1000 ms.
    let c = client_syn_sent(cfg);
    assert_eq!(c.estats().MinRTO, 1000.0);
    let cfg = TcpConfig { rto_initial: Duration::from_secs(300), ..super::cfg() };
    let mut c = Connection::connect(cfg, LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
    transmit_all(&mut c, at(0));
    assert_eq!(c.poll_timeout(), Some(at(60_000)), "rto_max 60 s");
}

/// RFC 5681 §3.2 step 6 (Reno): the first ACK of new data ends fast recovery with cwnd = ssthresh.
/// RFC 6582's min(ssthresh, FlightSize + SMSS) belongs to NewReno. IW 10 segments, SACK off, the
/// first lost: dup ACKs 1 and 2 send one new segment each (limited transmit), dup ACK 3 sets ssthresh
/// = 14480 / 2 = 7240 (the limited-transmit segments are not in FlightSize, RFC 5681 §3.2 step 2).
/// The ACK of the ten original segments leaves the two limited-transmit ones outstanding: Reno's cwnd
/// is 7240, where NewReno's formula would give min(7240, 2896 + 1448) = 4344.
#[test]
fn test_established_reno_leaves_fast_recovery_at_ssthresh() {
    let cfg = TcpConfig {
        sack: false,
        congestion_control: CongestionControlKind::Reno,
        initial_window: InitialWindow::Segments(10),
        ..cfg()
    };
    let mut c = client_established(cfg);
    assert_eq!(c.send(20 * 1448), 20 * 1448);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
    for t in 30..=32 {
        send!(c, time t, peer(50_001, 10_001, ACK, 0, t, 21));
        transmit_all(&mut c, at(t));
    }
    assert_eq!(c.ssthresh(), 7240);
    send!(c, time 40, peer(50_001, 10_001 + 10 * 1448, ACK, 0, 40, 33));
    assert_eq!((c.cwnd(), c.ssthresh()), (7240, 7240));
}
