//! Per-state tests with scripted segments (A.14), numbers from RFC 908 §5 where it gives them.

use std::sync::Arc;

use tcplab_transport::TxRoom;
use tcplab_units::{Duration, Instant};
use tcplab_wire::{EackList, RdpFlags, RdpSegment, SeqNumber, SynOptions};

use crate::{RdpConfig, RdpConnection, RttSampling, State};

const A: u16 = 1000;
const B: u16 = 5001;

fn t(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

fn cfg() -> Arc<RdpConfig> {
    Arc::new(RdpConfig::default())
}

fn out(c: &mut RdpConnection, now: Instant) -> Option<RdpSegment> {
    c.poll_transmit(now, TxRoom::Free)
}

fn all_out(c: &mut RdpConnection, now: Instant) -> Vec<RdpSegment> {
    std::iter::from_fn(|| out(c, now)).collect()
}

/// Queues `n` messages of 512 octets (one send call each: one segment each).
fn msgs(c: &mut RdpConnection, n: u32) {
    for _ in 0..n {
        assert_eq!(c.send(512), 512);
    }
}

fn seg(flags: RdpFlags, seq: u32, ack: u32) -> RdpSegment {
    RdpSegment { flags, src_port: B, dst_port: A, seq: SeqNumber(seq), ack: SeqNumber(ack), ..RdpSegment::default() }
}

fn syn(seq: u32, ack: Option<u32>) -> RdpSegment {
    let flags = if ack.is_some() { RdpFlags::SYN | RdpFlags::ACK } else { RdpFlags::SYN };
    RdpSegment {
        syn: Some(SynOptions { max_outstanding: 4, max_segment_size: 1500, sequenced: true }),
        ..seg(flags, seq, ack.unwrap_or(0))
    }
}

fn data(seq: u32, ack: u32, len: u32) -> RdpSegment {
    RdpSegment { data_len: len, ..seg(RdpFlags::ACK, seq, ack) }
}

fn eack(ack: u32, list: &[u32]) -> RdpSegment {
    let mut l = EackList::new(SeqNumber(list[0]));
    for &s in list {
        l.insert(SeqNumber(s));
    }
    RdpSegment { eacks: l, ..seg(RdpFlags::ACK | RdpFlags::EACK, 201, ack) }
}

/// RFC 908 §5.1: A (ISS 100) opens to B (ISS 200). A is OPEN with SND.UNA = SEG.ACK + 1 = 101.
fn open_a(c: Arc<RdpConfig>) -> RdpConnection {
    let mut a = RdpConnection::connect(c, A, B, 100);
    let s = out(&mut a, t(0)).unwrap();
    assert!(s.flags.syn() && !s.flags.ack());
    assert_eq!((s.seq.0, s.header_words()), (100, 12));
    assert_eq!(a.state(), State::SynSent);
    a.on_segment(t(10), &syn(200, Some(100)));
    assert_eq!(a.state(), State::Open);
    let ack = out(&mut a, t(10)).unwrap();
    // The bare ACK carries the next unused number (101) and does not consume it.
    assert_eq!((ack.flags, ack.seq.0, ack.ack.0), (RdpFlags::ACK, 101, 200));
    a
}

#[test]
fn test_rfc908_5_1_normal_open_and_first_data() {
    let mut a = open_a(cfg());
    assert_eq!(a.send(100), 100);
    let d = out(&mut a, t(11)).unwrap();
    assert_eq!((d.seq.0, d.ack.0, d.data_len), (101, 200, 100));
    // B acks 101: SND.UNA = 102 (RFC 1151: SEG.ACK + 1), nothing left.
    a.on_segment(t(20), &seg(RdpFlags::ACK, 201, 101));
    assert_eq!(a.poll_timeout(), None);

    // B's side: LISTEN → SYN-RCVD → OPEN on A's ACK.
    let mut b = RdpConnection::listen(cfg(), B, 200);
    let mut s = syn(100, None);
    s.src_port = A;
    b.on_segment(t(0), &s);
    assert_eq!(b.state(), State::SynRcvd);
    let sa = out(&mut b, t(0)).unwrap();
    assert_eq!((sa.flags, sa.seq.0, sa.ack.0, sa.dst_port), (RdpFlags::SYN | RdpFlags::ACK, 200, 100, A));
    // a duplicate SYN gets the SYN+ACK again.
    b.on_segment(t(1), &s);
    assert!(out(&mut b, t(1)).unwrap().flags.syn());
    b.on_segment(t(10), &seg(RdpFlags::ACK, 101, 200));
    assert_eq!(b.state(), State::Open);
    b.on_segment(t(11), &data(101, 200, 100));
    assert_eq!(b.readable(), 100);
    let ack = out(&mut b, t(11)).unwrap();
    assert_eq!((ack.seq.0, ack.ack.0, ack.data_len), (201, 101, 0));
}

#[test]
fn test_simultaneous_open() {
    let mut a = RdpConnection::connect(cfg(), A, B, 100);
    let mut b = RdpConnection::connect(cfg(), B, A, 200);
    let sa = out(&mut a, t(0)).unwrap();
    let sb = out(&mut b, t(0)).unwrap();
    a.on_segment(t(5), &sb);
    b.on_segment(t(5), &sa);
    assert_eq!((a.state(), b.state()), (State::SynRcvd, State::SynRcvd));
    // Each resends its SYN with ACK; each SYN+ACK fails the receiver's acceptance test and draws an ACK.
    let sa2 = out(&mut a, t(5)).unwrap();
    let sb2 = out(&mut b, t(5)).unwrap();
    assert!(sa2.flags.syn() && sa2.flags.ack() && sa2.seq.0 == 100);
    a.on_segment(t(10), &sb2);
    b.on_segment(t(10), &sa2);
    let aa = out(&mut a, t(10)).unwrap();
    let ab = out(&mut b, t(10)).unwrap();
    assert_eq!((aa.flags, aa.ack.0, ab.ack.0), (RdpFlags::ACK, 200, 100));
    a.on_segment(t(15), &ab);
    b.on_segment(t(15), &aa);
    assert_eq!((a.state(), b.state()), (State::Open, State::Open));
}

/// RFC 908 §5.3: 101 lost, 102 and 103 EACKed; at expiry only 101 is resent, then ACK 103.
#[test]
fn test_rfc908_5_3_eacked_segments_are_never_resent() {
    let mut a = open_a(cfg());
    msgs(&mut a, 3);
    let sent = all_out(&mut a, t(20));
    assert_eq!(sent.iter().map(|s| s.seq.0).collect::<Vec<_>>(), vec![101, 102, 103]);
    a.on_segment(t(30), &eack(200, &[102]));
    a.on_segment(t(31), &eack(200, &[102, 103]));
    // Sent at 20 ms: expiry at tick ⌊20/500⌋ + 4 = 2000 ms.
    assert_eq!(a.poll_timeout(), Some(t(2000)));
    a.on_timeout(t(2000));
    let re = all_out(&mut a, t(2000));
    assert_eq!(re.iter().map(|s| s.seq.0).collect::<Vec<_>>(), vec![101]);
    a.on_segment(t(2010), &seg(RdpFlags::ACK, 201, 103));
    assert_eq!(a.poll_timeout(), None);
    let st = a.stats();
    assert_eq!((st.SegsRetrans, st.EacksIn, st.Timeouts), (1, 2, 1));
}

#[test]
fn test_without_eacks_every_segment_behind_the_hole_is_resent_on_the_same_tick() {
    let mut a = open_a(Arc::new(RdpConfig { eack: false, eack_honour: false, ..RdpConfig::default() }));
    msgs(&mut a, 4);
    assert_eq!(all_out(&mut a, t(20)).len(), 4);
    // Span window: SND.NXT (105) = SND.UNA (101) + 4, no fifth segment.
    a.send(512);
    assert!(out(&mut a, t(21)).is_none());
    a.on_segment(t(30), &eack(200, &[102, 103, 104]));
    a.on_timeout(t(2000));
    assert_eq!(all_out(&mut a, t(2000)).iter().map(|s| s.seq.0).collect::<Vec<_>>(), vec![101, 102, 103, 104]);
    a.on_segment(t(2010), &seg(RdpFlags::ACK, 201, 104));
    assert_eq!(out(&mut a, t(2010)).unwrap().seq.0, 105);
}

#[test]
fn test_open_acceptance_window_edges_and_eack_generation() {
    let mut b = RdpConnection::listen(cfg(), B, 200);
    b.on_segment(t(0), &syn(100, None));
    out(&mut b, t(0));
    b.on_segment(t(1), &seg(RdpFlags::ACK, 101, 200));
    assert_eq!(b.state(), State::Open);
    // RCV.CUR = 100, RCV.MAX = 4: 101..=108 acceptable, 109 is outside (RFC 1151 §3).
    b.on_segment(t(2), &data(109, 200, 10));
    let a = out(&mut b, t(2)).unwrap();
    assert_eq!((a.ack.0, a.flags.eack()), (100, false));
    b.on_segment(t(3), &data(108, 200, 10));
    let a = out(&mut b, t(3)).unwrap();
    assert_eq!(a.eacks.iter().map(|s| s.0).collect::<Vec<_>>(), vec![108]);
    b.on_segment(t(4), &data(104, 200, 10));
    b.on_segment(t(4), &data(105, 200, 10));
    let acks = all_out(&mut b, t(4));
    // RFC 908 §5.6: the list grows, ascending; one ACK per arriving data segment.
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[1].eacks.iter().map(|s| s.0).collect::<Vec<_>>(), vec![104, 105, 108]);
    // A held duplicate and an old duplicate both count and are answered.
    b.on_segment(t(5), &data(105, 200, 10));
    b.on_segment(t(5), &data(100, 200, 10));
    assert_eq!(b.stats().DupSegsIn, 2);
    assert_eq!(all_out(&mut b, t(5)).len(), 2);
    // Sequenced delivery waits for 101..103.
    assert_eq!(b.readable(), 0);
    for s in 101..=103 {
        b.on_segment(t(6), &data(s, 200, 10));
    }
    // 101..105 in sequence; 108 waits for 106 and 107.
    assert_eq!(b.readable(), 50);
    assert_eq!(b.stats().MessagesDelivered, 5);
}

#[test]
fn test_open_nul_consumes_a_number_and_is_acked() {
    let mut b = RdpConnection::listen(cfg(), B, 200);
    b.on_segment(t(0), &syn(100, None));
    out(&mut b, t(0));
    b.on_segment(t(1), &seg(RdpFlags::ACK, 101, 200));
    b.on_segment(t(2), &seg(RdpFlags::NUL | RdpFlags::ACK, 101, 200));
    assert_eq!(out(&mut b, t(2)).unwrap().ack.0, 101);
    assert_eq!(b.readable(), 0);
    b.on_segment(t(3), &data(102, 200, 7));
    assert_eq!(b.readable(), 7);
}

#[test]
fn test_rst_in_every_state() {
    // LISTEN: dropped.
    let mut l = RdpConnection::listen(cfg(), B, 200);
    l.on_segment(t(0), &seg(RdpFlags::RST, 5, 0));
    assert_eq!((l.state(), out(&mut l, t(0))), (State::Listen, None));
    // LISTEN, an ACK: RST(seq = SEG.ACK + 1).
    l.on_segment(t(0), &seg(RdpFlags::ACK, 5, 77));
    let r = out(&mut l, t(0)).unwrap();
    assert_eq!((r.flags, r.seq.0), (RdpFlags::RST, 78));
    // SYN-SENT: RST without ACK dropped; RST+ACK refuses.
    let mut a = RdpConnection::connect(cfg(), A, B, 100);
    out(&mut a, t(0));
    a.on_segment(t(1), &seg(RdpFlags::RST, 0, 0));
    assert_eq!(a.state(), State::SynSent);
    a.on_segment(t(1), &seg(RdpFlags::RST | RdpFlags::ACK, 0, 100));
    assert_eq!(a.state(), State::Closed);
    // SYN-SENT, ACK of the wrong number: RST and free the record (RFC 1151, A-10).
    let mut a = RdpConnection::connect(cfg(), A, B, 100);
    out(&mut a, t(0));
    a.on_segment(t(1), &seg(RdpFlags::ACK, 0, 55));
    assert_eq!((a.state(), out(&mut a, t(1)).unwrap().seq.0), (State::Closed, 56));
    // SYN-RCVD from a passive open: RST returns to LISTEN.
    let mut b = RdpConnection::listen(cfg(), B, 200);
    b.on_segment(t(0), &syn(100, None));
    b.on_segment(t(1), &seg(RdpFlags::RST, 101, 0));
    assert_eq!(b.state(), State::Listen);
    // OPEN: RST → CLOSE-WAIT, which discards everything and stays, until its timer.
    let mut a = open_a(cfg());
    a.on_segment(t(20), &seg(RdpFlags::RST, 201, 0));
    assert_eq!(a.state(), State::CloseWait);
    assert!(a.is_eof());
    a.on_segment(t(21), &data(201, 101, 10));
    a.on_segment(t(21), &seg(RdpFlags::RST, 201, 0));
    assert_eq!((a.state(), out(&mut a, t(21)), a.readable()), (State::CloseWait, None, 0));
    assert_eq!(a.poll_timeout(), Some(t(20) + Duration::from_secs(60)));
    a.on_timeout(t(60_020));
    assert_eq!(a.state(), State::Closed);
    // CLOSED: a segment without ACK draws RST+ACK acknowledging SEG.SEQ (RFC 1151).
    a.on_segment(t(60_021), &RdpSegment { data_len: 1, ..seg(RdpFlags(0), 300, 0) });
    let r = out(&mut a, t(60_021)).unwrap();
    assert_eq!((r.flags, r.seq.0, r.ack.0), (RdpFlags::RST | RdpFlags::ACK, 0, 300));
}

#[test]
fn test_close_sends_rst_after_everything_is_acknowledged() {
    let mut a = open_a(cfg());
    a.send(512);
    out(&mut a, t(20));
    a.close();
    assert_eq!((a.state(), out(&mut a, t(21))), (State::Open, None));
    a.on_segment(t(30), &seg(RdpFlags::ACK, 201, 101));
    let r = out(&mut a, t(30)).unwrap();
    assert_eq!((r.flags, r.seq.0), (RdpFlags::RST, 102));
    assert_eq!(a.state(), State::CloseWait);
}

#[test]
fn test_eack_outside_the_send_range_releases_nothing() {
    let mut a = open_a(cfg());
    msgs(&mut a, 2);
    all_out(&mut a, t(20));
    a.on_segment(t(30), &eack(200, &[99, 100, 103, 104]));
    a.on_timeout(t(2000));
    assert_eq!(all_out(&mut a, t(2000)).len(), 2);
}

#[test]
fn test_count_window_lets_eacked_segments_free_slots() {
    let c = RdpConfig { window_policy: crate::WindowPolicy::Count, ..RdpConfig::default() };
    let mut a = open_a(Arc::new(c));
    msgs(&mut a, 8);
    assert_eq!(all_out(&mut a, t(20)).len(), 4);
    a.on_segment(t(30), &eack(200, &[102, 103, 104]));
    // Three EACKed: three more may go, up to SND.UNA + 2·SND.MAX − 1 = 108.
    assert_eq!(all_out(&mut a, t(30)).iter().map(|s| s.seq.0).collect::<Vec<_>>(), vec![105, 106, 107]);
}

/// RTT feedback (Karn & Partridge 1987): the hole's repair is acknowledged 2 s after its first copy.
#[test]
fn test_sampling_policies_on_a_repaired_hole() {
    for (policy, want_max) in
        [(RttSampling::Karn, 10.0), (RttSampling::Every, 2010.0 - 20.0), (RttSampling::DiscardOutOfOrder, 10.0)]
    {
        let c = RdpConfig { rto_model: crate::RtoChoice::Mills, rtt_sampling: policy, ..RdpConfig::default() };
        let mut a = open_a(Arc::new(c));
        msgs(&mut a, 2);
        all_out(&mut a, t(20));
        a.on_segment(t(30), &eack(200, &[102])); // sample 10 ms from 102 in every policy
        a.on_timeout(t(2000));
        all_out(&mut a, t(2000));
        a.on_segment(t(2010), &seg(RdpFlags::ACK, 201, 102));
        assert_eq!(a.stats().MaxRTT, want_max, "{policy:?}");
    }
}

#[test]
fn test_syn_seeded_rto() {
    let c = RdpConfig { rto_model: crate::RtoChoice::Rfc6298, syn_seed: true, ..RdpConfig::default() };
    let mut a = RdpConnection::connect(Arc::new(c), A, B, 100);
    out(&mut a, t(0));
    a.on_segment(t(1200), &syn(200, Some(100)));
    // SRTT = 1.2 s from the SYN exchange; RFC 6298: RTO = 1.2 + 4·0.6 = 3.6 s.
    assert_eq!((a.stats().SmoothedRTT, a.stats().CurRTO), (1200.0, 3600.0));
}

#[test]
fn config_reads_from_toml_with_defaults() {
    let c: RdpConfig = toml::from_str(
        "version = 1\nmax_outstanding = 8\neack = false\nwindow_policy = \"count\"\nrto_model = \"mills\"\n\
         rtt_sampling = \"discard_out_of_order\"\ntick = \"1ms\"\n",
    )
    .unwrap();
    assert_eq!(c.version, tcplab_wire::RdpVersion::V1);
    assert_eq!((c.max_outstanding, c.eack, c.eack_honour), (8, false, true));
    assert_eq!((c.window_policy, c.rto_model), (crate::WindowPolicy::Count, crate::RtoChoice::Mills));
    assert_eq!((c.rtt_sampling, c.tick), (RttSampling::DiscardOutOfOrder, Duration::from_millis(1)));
    assert_eq!(c.validate(), Ok(()));
    assert!(toml::from_str::<RdpConfig>("version = 3").is_err());
    assert!(toml::from_str::<RdpConfig>("windw = 3").is_err());
    assert!(RdpConfig { max_outstanding: 65, ..RdpConfig::default() }.validate().is_err());
    let back: RdpConfig = toml::from_str(&toml::to_string(&RdpConfig::default()).unwrap()).unwrap();
    assert_eq!(back, RdpConfig::default());
}
