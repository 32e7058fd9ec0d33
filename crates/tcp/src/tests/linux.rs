//! What a current Linux does that the RFCs do not require: SACK compression and no quick-ACK refill on
//! out-of-order data at the receiver (4.18+); the RTO re-armed by the head's retransmission, SACK marks
//! kept across a timeout, and RFC 2861 decay with Linux's floors at the sender.

use super::pair::{Pair, Side};
use super::*;
use crate::config::{AckPolicy, Cwv};
use crate::InitialWindow;

/// Linux `__tcp_ack_snd_check`: with a hole at 50001, segments #2..#6 arrive at t = 20 ms. The first
/// three duplicate ACKs go at once (TCP_FASTRETRANS_THRESH), #5 and #6 are merged into one ACK sent
/// min(comp_sack_delay 1 ms, SRTT/20 = 10 ms / 20) = 0.5 ms later, carrying the whole block.
#[test]
fn test_established_sack_compression() {
    let mut c = client_established(TcpConfig { comp_sack_nr: 44, ..cfg() });
    let seg = |i: u32| 50_001 + i * 1448;
    let dup = |k: u32| out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10)).sack(&[(seg(1), seg(k))]);
    for k in 2..=4 {
        send!(c, time 20, peer(seg(k - 1), 10_001, ACK, 1448, 20, 11));
        recv!(c, time 20, [dup(k)]);
    }
    for k in 5..=6 {
        send!(c, time 20, peer(seg(k - 1), 10_001, ACK, 1448, 20, 11));
        recv_nothing!(c, time 20);
    }
    let due = at(20) + Duration::from_micros(500);
    assert_eq!(c.poll_timeout(), Some(due));
    c.on_timeout(due);
    assert_segments(&transmit_all(&mut c, due), &[dup(6)]);
    let e = c.estats();
    assert_eq!((e.AcksCompressed, e.DupAcksOut), (2, 4));
    // Without compression every out-of-order segment is ACKed at once (RFC 5681 §4.2).
    let mut c = client_established(cfg());
    for k in 2..=6 {
        send!(c, time 20, peer(seg(k - 1), 10_001, ACK, 1448, 20, 11));
        recv!(c, time 20, [dup(k)]);
    }
}

/// Linux 5.8+ arms the compressed-SACK timer with a range of `tcp_comp_sack_slack_ns` (100 µs) after the
/// delay, and a ranged hrtimer fires at the range's end: the merged ACK of the test above leaves at
/// 0.5 + 0.1 ms, not 0.5 ms, and nothing goes before.
#[test]
fn test_established_sack_compression_timer_slack() {
    let slack = Duration::from_micros(100);
    let mut c = client_established(TcpConfig { comp_sack_nr: 44, comp_sack_slack: slack, ..cfg() });
    let seg = |i: u32| 50_001 + i * 1448;
    let dup = |k: u32| out(10_001, 50_001, ACK, 32_768, 0).ts(21, pts(10)).sack(&[(seg(1), seg(k))]);
    for k in 2..=6 {
        send!(c, time 20, peer(seg(k - 1), 10_001, ACK, 1448, 20, 11));
        transmit_all(&mut c, at(20));
    }
    let due = at(20) + Duration::from_micros(500) + slack;
    assert_eq!(c.poll_timeout(), Some(due));
    let early = at(20) + Duration::from_nanos(599_999);
    c.on_timeout(early);
    assert!(transmit_all(&mut c, early).is_empty(), "nothing before the range's end");
    c.on_timeout(due);
    assert_segments(&transmit_all(&mut c, due), &[dup(6)]);
    assert_eq!(c.estats().AcksCompressed, 2);
}

/// Under the Linux ACK policy the receiver starts with a quick-ACK allowance (16 here) and then delays
/// ACKs to every second full segment. Before 4.18 out-of-order data refilled the allowance, so the
/// segments after a repaired hole were ACKed one by one; since then they are not.
#[test]
fn test_established_linux_quickack_refill_on_reorder() {
    let acks_after_hole = |refill: bool| {
        let mut c =
            client_established(TcpConfig { ack_policy: AckPolicy::Linux, quickack_on_reorder: refill, ..cfg() });
        let seg = |i: u32| 50_001 + i * 1448;
        let mut t = 20;
        // 40 in-order segments use up the allowance.
        for i in 0..40 {
            send!(c, time t, peer(seg(i), 10_001, ACK, 1448, t, 11));
            transmit_all(&mut c, at(t));
            c.recv(u64::MAX);
            t += 1;
        }
        // #41 arrives before #40, then #40, then ten more in order.
        send!(c, time t, peer(seg(41), 10_001, ACK, 1448, t, 11));
        transmit_all(&mut c, at(t));
        send!(c, time t, peer(seg(40), 10_001, ACK, 1448, t, 11));
        transmit_all(&mut c, at(t));
        let mut acks = 0;
        for i in 42..52 {
            t += 1;
            send!(c, time t, peer(seg(i), 10_001, ACK, 1448, t, 11));
            acks += transmit_all(&mut c, at(t)).len();
            c.recv(u64::MAX);
        }
        acks
    };
    assert_eq!(acks_after_hole(true), 10, "quick ACKs refilled: one ACK per segment");
    assert_eq!(acks_after_hole(false), 5, "delayed ACKs: one per two segments");
}

/// Linux `tcp_grow_window`: with the default 64 KiB buffer offering up to 1.99 times that (130,416 B, so
/// the window scale stays 1), the window starts at 64 KiB and opens by 2 × 1448 B with each in-order
/// segment while room is left: 65,536 + 2,896·k after segment k ≤ 21, then 128,968 (the largest window less
/// the segment not yet read). Each segment that opens it is ACKed at once; the first 16 would have been
/// anyway (the quick-ACK allowance), so 22 ACKs for the first 22 segments, then one per two: 22 + 38 / 2 =
/// 41. With no room to grow (a window ratio of 1) the receiver sends 16 + 44 / 2 = 38.
#[test]
fn test_established_linux_grow_window_acks_each_segment_while_the_window_opens() {
    let run = |ratio: f64| {
        let mut c = client_established(TcpConfig {
            ack_policy: AckPolicy::Linux,
            recv_window_ratio: ratio,
            grow_window: true,
            ..cfg()
        });
        let seg = |i: u32| 50_001 + i * 1448;
        let (mut acks, mut windows) = (0, Vec::new());
        for i in 0..60u32 {
            let t = 20 + i as u64;
            send!(c, time t, peer(seg(i), 10_001, ACK, 1448, t, 11));
            acks += transmit_all(&mut c, at(t)).len();
            windows.push(c.estats().CurRwinSent);
            c.recv(u64::MAX);
        }
        (acks, windows)
    };
    let (acks, windows) = run(1.99);
    assert_eq!(acks, 41);
    let opening: Vec<u64> = (1..=60).map(|k| if k <= 21 { 65_536 + 2_896 * k } else { 128_968 }).collect();
    assert_eq!(windows, opening);
    let (acks, windows) = run(1.0);
    assert_eq!(acks, 38);
    assert!(windows.iter().all(|&w| w == 64_088), "{windows:?}");
}

/// Linux TSO sizing and deferral (`tso`): IW 100, SRTT 10 ms, the peer's window 181 segments. A
/// super-packet holds about 1 ms of the pacing rate, 2 × cwnd / SRTT in slow start: 0.1953 · cwnd, 19
/// segments for cwnd = 101. The first flight leaves as 19 × 5 + 5 (nothing is due back for 10 ms, so the
/// tail goes too). Then an ACK of one segment every 100 µs from t = 30 ms frees two segments each (one
/// acknowledged, one of slow-start growth): the first ACK after 10 ms of silence sends its 2 at once, the
/// next ten are held (less than a super-packet and a third of the window, the oldest segment's ACK is due,
/// data went out less than 1 ms ago) until the ACK at 31.1 ms finds the last send more than 1 ms old and
/// sends 21 (0.1953 · 112 segments) of the 22 allowed; the last one waits again. Without `tso` each ACK
/// sends its two.
#[test]
fn test_established_tso_defers_to_fill_super_packets() {
    let run = |tso: bool| {
        let mut c = client_established(TcpConfig {
            tso,
            rack: true,
            initial_window: InitialWindow::Segments(100),
            send_buffer: ByteSize::new(1 << 20),
            ..cfg()
        });
        send!(c, time 15, inp(50_001, 10_001, ACK, 65_535, 0).ts(pts(15), ts(10)));
        transmit_all(&mut c, at(15));
        assert_eq!(c.send(1 << 20), 1 << 20);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 100);
        let first = c.estats().X_TsoBursts;
        let mut sent = Vec::new();
        for i in 0..12u64 {
            let now = at(30) + Duration::from_micros(100 * i);
            let ack = 10_001 + 1448 * (i as u32 + 1);
            c.on_segment(now, &inp(50_001, ack, ACK, 65_535, 0).ts(pts(30), ts(20)));
            sent.push(transmit_all(&mut c, now).iter().filter(|s| s.payload_len > 0).count());
        }
        let e = c.estats();
        (first, sent, e.X_TsoDeferrals)
    };
    let (bursts, sent, deferrals) = run(true);
    assert_eq!(bursts, 6, "19 × 5 + 5");
    assert_eq!(sent, [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 21]);
    assert_eq!(deferrals, 11);
    let (bursts, sent, deferrals) = run(false);
    assert_eq!((bursts, deferrals), (0, 0));
    assert_eq!(sent, [2; 12]);
}

/// Ten segments at t=20, the first lost; three SACKing duplicate ACKs at t=30..32 start recovery and
/// the head is retransmitted at t=32. RFC 6298 (5.3) leaves the timer where the last ACK of new data
/// (none here: the send at t=20) put it, 1 s later; Linux restarts it from the retransmission.
#[test]
fn test_established_rto_rearmed_by_head_retransmission() {
    let deadline = |rearm: bool| {
        let mut c = client_established(TcpConfig {
            rto_rearm_on_retransmit: rearm,
            initial_window: InitialWindow::Segments(10),
            ..cfg()
        });
        assert_eq!(c.send(10 * 1448), 10 * 1448);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 10);
        for (t, k) in [(30, 2), (31, 3), (32, 4)] {
            send!(c, time t, peer(50_001, 10_001, ACK, 0, t, 21).sack(&[(11_449, 10_001 + k * 1448)]));
            transmit_all(&mut c, at(t));
        }
        assert_eq!(c.estats().SegsRetrans, 1);
        c.poll_timeout()
    };
    assert_eq!(deadline(false), Some(at(1020)));
    assert_eq!(deadline(true), Some(at(1032)));
}

/// Four segments at t=20; #1 is lost and #3, #4 are SACKed (two duplicate ACKs: no recovery). The RTO
/// fires at 1020 and retransmits #1; its ACK (1031) acknowledges #1 and #2 without repeating the SACK
/// block (a receiver reports at most 3 or 4 blocks, so with more holes the older ones drop out). Linux
/// keeps the SACK marks across the timeout, so the go-back-N skips #3 and #4; RFC 6675 §5.1 discards
/// them and resends #3 first.
#[test]
fn test_established_sack_marks_kept_across_rto() {
    let after_rto = |keep: bool| {
        let mut c = client_established(TcpConfig {
            keep_sack_on_rto: keep,
            initial_window: InitialWindow::Segments(4),
            ..cfg()
        });
        let seg = |i: u32| 10_001 + i * 1448;
        assert_eq!(c.send(8 * 1448), 8 * 1448);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 4);
        send!(c, time 30, peer(50_001, seg(0), ACK, 0, 30, 21).sack(&[(seg(2), seg(3))]));
        send!(c, time 31, peer(50_001, seg(0), ACK, 0, 31, 21).sack(&[(seg(2), seg(4))]));
        assert!(transmit_all(&mut c, at(31)).iter().all(|s| s.seq >= SeqNumber(seg(4))), "limited transmit only");
        fire(&mut c, 1020);
        let rtx = transmit_all(&mut c, at(1020));
        assert_eq!(rtx.iter().map(|s| s.seq).collect::<Vec<_>>(), vec![SeqNumber(seg(0))]);
        send!(c, time 1031, peer(50_001, seg(2), ACK, 0, 1031, 1021));
        transmit_all(&mut c, at(1031)).iter().map(|s| s.seq).collect::<Vec<_>>()
    };
    let keep = after_rto(true);
    assert!(!keep.contains(&SeqNumber(10_001 + 2 * 1448)), "SACKed #3 not resent: {keep:?}");
    let discard = after_rto(false);
    assert_eq!(discard.first(), Some(&SeqNumber(10_001 + 2 * 1448)), "#3 resent: {discard:?}");
}

/// RFC 2861 decay as Linux's `tcp_cwnd_application_limited` does it: a bulk transfer grows cwnd, then
/// the application writes one small message per second. Each RTO of idle-ish sending halves the gap
/// between cwnd and what was used, but never below IW, and ssthresh keeps ¾ of the cwnd decayed.
/// The RFC 2861 knob alone lets cwnd fall to one segment and leaves ssthresh alone.
#[test]
fn test_established_linux_cwnd_validation_floors() {
    let run = |cwv: Cwv| {
        let cfg = TcpConfig {
            cwv,
            initial_window: InitialWindow::Segments(10),
            send_buffer: cfg_bytes(1 << 20),
            recv_buffer: cfg_bytes(1 << 20),
            ..cfg()
        };
        let mut p = Pair::new(cfg.clone(), cfg, dur_ms(10));
        p.record = false;
        p.establish();
        p.to_write[0] = 400 * SMSS_TS as u64;
        p.run_while(|p| p.read[1] < 400 * SMSS_TS as u64);
        let grown = p.client.cwnd();
        for _ in 0..20 {
            p.to_write[0] = 100;
            let t = p.now + Duration::from_secs(1);
            p.run_until(t);
        }
        (grown, p.client.cwnd(), p.client.ssthresh())
    };
    let (grown, cwnd, ssthresh) = run(Cwv::Linux);
    assert!(grown > 100 * SMSS_TS, "{grown}");
    assert_eq!(cwnd, 10 * SMSS_TS, "decayed to IW, not below");
    assert!(ssthresh >= grown / 2 + grown / 4, "ssthresh {ssthresh} keeps ¾ of {grown}");
    let (_, cwnd, ssthresh) = run(Cwv::Rfc2861);
    assert!(cwnd < 2 * SMSS_TS, "RFC 2861 as configured decays toward what was used: {cwnd}");
    assert_eq!(ssthresh, u32::MAX);
}

/// Linux's congestion modules set ssthresh from cwnd (`tcp_reno_ssthresh`: cwnd/2), RFC 5681 (4) from
/// FlightSize. IW 10 segments, the application writes only 5; the first is lost and three SACKing
/// duplicate ACKs start recovery: FlightSize 7240 gives ssthresh 3620, cwnd 14480 gives 7240.
#[test]
fn test_established_ssthresh_from_cwnd() {
    let ssthresh = |from_cwnd: bool| {
        let mut c = client_established(TcpConfig {
            ssthresh_from_cwnd: from_cwnd,
            initial_window: InitialWindow::Segments(10),
            ..cfg()
        });
        assert_eq!(c.send(5 * 1448), 5 * 1448);
        assert_eq!(transmit_all(&mut c, at(20)).len(), 5);
        for (t, k) in [(30, 2), (31, 3), (32, 4)] {
            send!(c, time t, peer(50_001, 10_001, ACK, 0, t, 21).sack(&[(11_449, 10_001 + k * 1448)]));
            transmit_all(&mut c, at(t));
        }
        assert_eq!(c.estats().FastRetran, 1);
        c.ssthresh()
    };
    assert_eq!(ssthresh(false), 3620);
    assert_eq!(ssthresh(true), 7240);
}

/// Gaps between the arrivals of `n` one-byte messages at the receiver, when the application writes the
/// next message as soon as the previous one has left (Nagle on), over a LAN-like pair (50 µs one way).
fn one_byte_message_gaps(personality: &str, n: usize) -> Vec<Duration> {
    let cfg = TcpConfig::personality(personality).unwrap();
    let mut p = Pair::new(cfg.clone(), cfg, Duration::from_micros(50));
    p.establish();
    let first = p.client.snd_nxt();
    let mut written = 0u32;
    let mut guard = 0;
    while (written as usize) < n || p.client.snd_una() != first + written {
        if p.client.snd_nxt() == first + written && (written as usize) < n {
            p.to_write[0] = 1;
            written += 1;
            let now = p.now;
            p.run_until(now); // the application writes now
        }
        assert!(p.step(), "stalled for good");
        guard += 1;
        assert!(guard < 1_000_000);
    }
    let t: Vec<Instant> =
        p.arrivals.iter().filter(|a| a.to == Side::Server && a.seg.payload_len > 0).map(|a| a.at).collect();
    t.windows(2).map(|w| w[1].saturating_since(w[0])).collect()
}

/// Linux 2.2 delays the ACK of a short segment by its ATO and sends no ACK when the application reads
/// it; with Nagle the sender waits for that ACK before the next message. The ATO (`tcp_delack_estimator`,
/// in jiffies: half the old one plus the interarrival time) settles at one jiffy once messages arrive one
/// jiffy apart, and the delayed-ACK timer fires at the next tick: every message after the first waits for
/// a 10 ms tick, 100 messages a second over a 100 µs round trip. Linux 2.4 ACKs a short pushed segment as
/// soon as the application drains it (`tcp_cleanup_rbuf`), so each message costs one round trip.
#[test]
fn test_established_linux22_one_byte_messages_stall_on_delayed_acks() {
    let tick = Duration::from_millis(10);
    let gaps = one_byte_message_gaps("linux-2.2", 100);
    assert_eq!(gaps.len(), 99, "each message in its own segment");
    // The first message is ACKed at once (quick ACK mode); the second waits for the tick after it.
    assert!(gaps[0] < Duration::from_millis(1), "{gaps:?}");
    assert!(gaps[1..].iter().all(|g| *g >= tick - Duration::from_micros(300) && *g <= tick), "{gaps:?}");
    let gaps = one_byte_message_gaps("linux-2.4", 100);
    assert_eq!(gaps.len(), 99);
    assert!(gaps.iter().all(|g| *g <= Duration::from_micros(200)), "one RTT per message: {gaps:?}");
}

/// With cwnd counted in packets (`linux-2.4`), every reduction the connection makes on its own — RFC 2861
/// decay while application-limited, moderation to in-flight + 3 — leaves a whole number of segments, as
/// Linux's packet arithmetic does. A bulk phase, then an odd-sized message every 300 ms.
#[test]
fn test_established_packet_cwnd_stays_whole_after_validation_and_moderation() {
    let cfg = TcpConfig {
        send_buffer: cfg_bytes(1 << 20),
        recv_buffer: cfg_bytes(1 << 20),
        ..TcpConfig::personality("linux-2.4").unwrap()
    };
    let mut p = Pair::new(cfg.clone(), cfg, dur_ms(10));
    p.record = false;
    p.establish();
    p.to_write[0] = 300 * SMSS_TS as u64;
    p.run_while(|p| p.read[1] < 300 * SMSS_TS as u64);
    let mut seen = Vec::new();
    for k in 0..30u64 {
        p.to_write[0] = 700 + 37 * k;
        let t = p.now + dur_ms(300);
        p.run_until(t);
        seen.push(p.client.cwnd());
    }
    let e = p.client.estats();
    assert!(e.OtherReductions >= 3, "decayed and moderated: {}", e.OtherReductions);
    assert!(seen.iter().all(|w| w % SMSS_TS == 0), "whole segments: {seen:?}");
}

/// Linux `tcp_cleanup_rbuf`: a read that drains a short pushed segment outside pingpong mode sends its
/// ACK within the read (`tcp_send_ack` inside `recvmsg`), so the ACK leaves as a pure segment ahead of the
/// reply the application writes next — the kernel's rr-dsl trace shows this order. Once data has gone
/// out within the ATO of data arriving, the connection is interactive (pingpong): the next request's ACK
/// waits and rides on the reply.
#[test]
fn test_established_linux_a_read_acks_ahead_of_the_reply() {
    let mut c = client_established(TcpConfig { ack_policy: AckPolicy::Linux, ..cfg() });
    send!(c, time 20, peer(50_001, 10_001, PSH_ACK, 100, 20, 11));
    assert!(c.poll_transmit_before_app(at(20), TxRoom::Free).is_none(), "no pure ACK before the read");
    assert_eq!(c.recv(u64::MAX), 100);
    assert_eq!(c.send(200), 200);
    let got = transmit_all(&mut c, at(20));
    let shape: Vec<(u32, u32, u32)> = got.iter().map(|s| (s.seq.0, s.ack.0, s.payload_len)).collect();
    assert_eq!(
        shape,
        [(10_001, 50_101, 0), (10_001, 50_101, 200)],
        "{:?}",
        got.iter().map(describe).collect::<Vec<_>>()
    );

    // Pingpong now (the reply left 0 ms after the request came): the next request's ACK rides on the reply.
    send!(c, time 50, peer(50_101, 10_201, PSH_ACK, 100, 50, 21));
    assert_eq!(c.recv(u64::MAX), 100);
    assert_eq!(c.send(200), 200);
    let got = transmit_all(&mut c, at(50));
    let shape: Vec<(u32, u32, u32)> = got.iter().map(|s| (s.seq.0, s.ack.0, s.payload_len)).collect();
    assert_eq!(shape, [(10_201, 50_201, 200)], "{:?}", got.iter().map(describe).collect::<Vec<_>>());
}
