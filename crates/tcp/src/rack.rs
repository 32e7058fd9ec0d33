//! RACK-TLP loss detection (RFC 8985): time-based loss inference from per-segment transmit times and
//! SACK (RACK, §6), with a reordering window that adapts to D-SACK (§6.2 step 4), and the tail loss
//! probe (TLP, §7) that makes the receiver ACK the tail of a flight so that RACK can see its losses
//! without waiting for the retransmission timeout.
//!
//! Read RFC 8985 §6.1–§6.3 (RACK: the per-segment state, `RACK_update`, `RACK_detect_reordering`,
//! `RACK_update_reo_wnd`, `RACK_detect_loss`), §7.2–§7.4 (TLP: when to arm the PTO, what to send, how a
//! probe's ACK tells a repaired loss), and Linux `net/ipv4/tcp_recovery.c` (`tcp_rack_detect_loss`,
//! `tcp_rack_reo_wnd`, `tcp_rack_update_reo_wnd`) and `tcp_input.c` (`tcp_process_tlp_ack`).
//!
//! This module keeps RACK's state and the transmission record of every segment in [SND.UNA, SND.NXT);
//! the connection tells it what it sends and what the peer acknowledges, asks it which segments are
//! lost, and owns the timers. Choices:
//! - The records are kept in sequence order. Original transmissions are in sequence order in time as
//!   well, and a retransmission is later than its original, so the scan of §6.2 step 5 (in transmit
//!   order) can stop at the first never-retransmitted segment sent after RACK.xmit_ts and only has to
//!   skip retransmitted ones.
//! - Segments count as SACKed once a SACK block covers them whole (receivers SACK whole segments).
//! - RACK.min_RTT is the minimum RTT sample of the connection (Linux keeps a 5-minute windowed minimum).
//! - The DupThresh of §6.2 step 4 is the connection's `dupthresh`. Linux's `tp->reordering` starts
//!   there and grows with the reordering SACKs show (`tcp_check_sack_reordering`); it is kept here as
//!   `reordering` for `tcpi_reordering` and does not feed the reordering window, which Linux consults
//!   it for only while no reordering was seen (where it still equals `dupthresh`, except when one ACK
//!   SACKs blocks out of order: not modelled). Its lowering after an RTO in Disorder
//!   (`tcp_enter_loss`) is not modelled either.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};
use tcplab_wire::SeqNumber;

use crate::ranges::WalkedBlocks;

/// RFC 8985 §6.2 step 4: recoveries without D-SACK after which the reordering window multiplier
/// returns to 1 (Linux `TCP_RACK_RECOVERY_THRESH`).
const REO_WND_PERSIST: u32 = 16;

/// The most `reordering` grows to (Linux `sysctl_tcp_max_reordering`'s default).
const MAX_REORDERING: u32 = 300;

/// What RACK remembers about one transmitted segment (RFC 8985 §6.1, per-segment variables).
#[derive(Debug, Clone, Copy)]
struct Seg {
    start: SeqNumber,
    /// One past the segment's last sequence number (its FIN included).
    end: SeqNumber,
    /// Segment.xmit_ts: its latest transmission.
    xmit: Instant,
    /// The rank of that transmission among the connection's, modulo 2^32 (compared as sequence numbers
    /// are: a window holds far fewer than 2^31 transmissions): what orders two segments sent at the same
    /// instant (see [`Rack::sent_after`]). 32 bits fit the record's padding: it stays 24 bytes.
    order: u32,
    /// Retransmitted at least once (Linux `TCPCB_EVER_RETRANS`): its ACK is ambiguous.
    ever_rtx: bool,
    /// A retransmission of it is in flight (RFC 8985 Segment.retransmitted; Linux `TCPCB_SACKED_RETRANS`).
    rtx: bool,
    /// Marked lost (RFC 8985 Segment.lost; Linux `TCPCB_LOST`).
    lost: bool,
    sacked: bool,
}

impl Seg {
    /// What the segment adds to the pipe (Linux `tcp_packets_in_flight`, in bytes): nothing once SACKed,
    /// else its bytes once unless marked lost, and once more while a retransmission of it is in flight.
    #[inline]
    fn in_flight(&self) -> u32 {
        if self.sacked {
            0
        } else {
            (self.end - self.start) * (!self.lost as u32 + self.rtx as u32)
        }
    }

    /// Lost and not retransmitted since (nor SACKed): NextSeg's candidate.
    #[inline]
    fn awaits_retransmission(&self) -> bool {
        self.lost && !self.rtx && !self.sacked
    }
}

/// Sums over RACK's segments, each changed by removing a segment's part before its marks change and adding
/// it back after.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    /// Σ `Seg::in_flight`: the pipe.
    pipe: u32,
    /// Segments that `next_lost` may return (lost, not retransmitted since, not SACKed).
    lost_waiting: u32,
    /// Segments marked lost and not SACKed, retransmitted or not (Linux `lost_out`).
    lost_out: u32,
}

impl Marks {
    #[inline]
    fn add(&mut self, s: &Seg) {
        self.pipe += s.in_flight();
        self.lost_waiting += s.awaits_retransmission() as u32;
        self.lost_out += (s.lost && !s.sacked) as u32;
    }
    #[inline]
    fn remove(&mut self, s: &Seg) {
        self.pipe -= s.in_flight();
        self.lost_waiting -= s.awaits_retransmission() as u32;
        self.lost_out -= (s.lost && !s.sacked) as u32;
    }
}

/// RACK and TLP state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Rack {
    segs: VecDeque<Seg>,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment known delivered, and its
    /// transmission's rank.
    xmit_ts: Option<Instant>,
    end_seq: SeqNumber,
    xmit_order: u32,
    /// Transmissions so far (modulo 2^32): the rank of the latest.
    sent: u32,
    /// RACK.rtt: the RTT of that segment.
    rtt: Duration,
    min_rtt: Option<Duration>,
    /// RACK.fack: the highest sequence number delivered (cumulatively or selectively), and its value
    /// before the ACK being processed.
    fack: SeqNumber,
    prior_fack: SeqNumber,
    reordering_seen: bool,
    /// RACK.reo_wnd_mult, RACK.reo_wnd_persist, RACK.dsack_round.
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<SeqNumber>,
    /// SACKed segments (RACK.segs_sacked).
    segs_sacked: u32,
    /// The SACK blocks walked lately, whose segments are all SACKed (a repeated block is walked only past them).
    walked: WalkedBlocks,
    /// TLP.end_seq and TLP.is_retrans: the outstanding probe, if any (RFC 8985 §7.3).
    tlp_end: Option<SeqNumber>,
    tlp_is_retrans: bool,
    /// The pipe and the count of lost segments, kept as the marks change: a recovery asks for both on
    /// every send and ACK, and a walk over every segment in flight made a large window's recovery cost
    /// its square.
    marks: Marks,
    /// No segment that `next_lost` would return starts below this: the walk for it starts here.
    lost_from: SeqNumber,
    /// The knob `rack_rtt_every_delivery`: RACK.rtt is the RTT of the last segment the ACK's processing
    /// delivers, not of the most recently sent one (see `delivered`).
    pub rtt_every_delivery: bool,
    /// The reordering degree in segments (Linux `tp->reordering`), and how often reordering was seen
    /// (`tp->reord_seen`).
    reordering: u32,
    reord_seen: u32,
    /// The lowest start of a never-retransmitted segment this ACK delivered below data delivered
    /// before it (Linux `state->reord` of `tcp_sacktag_one`, `reord` of `tcp_clean_rtx_queue`).
    reord_low: Option<SeqNumber>,
}

/// What one run of the loss detection found.
pub(crate) struct Detection {
    /// Segments newly marked lost.
    pub newly_lost: u32,
    /// Their bytes, a lost retransmission counted again (Linux `tcp_mark_skb_lost` →
    /// `tcp_notify_skb_loss_event`: `tp->lost`).
    pub newly_lost_bytes: u64,
    /// When to run the detection again (the RACK reordering timer), if some segment is not yet overdue.
    pub timer: Option<Instant>,
}

impl Rack {
    pub fn new(iss: SeqNumber, reordering: u32) -> Self {
        Rack {
            segs: VecDeque::new(),
            xmit_ts: None,
            end_seq: iss,
            xmit_order: 0,
            sent: 0,
            rtt: Duration::ZERO,
            min_rtt: None,
            fack: iss,
            prior_fack: iss,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: REO_WND_PERSIST,
            dsack_round: None,
            segs_sacked: 0,
            walked: WalkedBlocks::default(),
            tlp_end: None,
            tlp_is_retrans: false,
            marks: Marks::default(),
            lost_from: iss,
            rtt_every_delivery: false,
            reordering,
            reord_seen: 0,
            reord_low: None,
        }
    }

    /// New data `[start, end)` was sent at `now`.
    pub fn on_send(&mut self, start: SeqNumber, end: SeqNumber, now: Instant) {
        self.sent = self.sent.wrapping_add(1);
        let s =
            Seg { start, end, xmit: now, order: self.sent, ever_rtx: false, rtx: false, lost: false, sacked: false };
        self.marks.add(&s);
        self.segs.push_back(s);
    }

    /// `[start, end)` was retransmitted at `now`: every segment it overlaps has a new transmit time.
    pub fn on_retransmit(&mut self, start: SeqNumber, end: SeqNumber, now: Instant) {
        // The first lost segment is the one retransmitted (NextSeg): the next one starts beyond it.
        let first_lost = self.next_lost().is_some_and(|(s, _)| s == start);
        self.sent = self.sent.wrapping_add(1);
        let i = self.segs.partition_point(|s| s.end <= start);
        for s in self.segs.range_mut(i..) {
            if s.start >= end {
                break;
            }
            self.marks.remove(s);
            s.xmit = now;
            s.order = self.sent;
            s.ever_rtx = true;
            s.rtx = true;
            self.marks.add(s);
        }
        if first_lost {
            self.lost_from = end;
        }
    }

    /// An RTT sample of the connection (RACK.min_RTT).
    pub fn on_rtt_sample(&mut self, r: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// An ACK is about to be processed.
    pub fn begin_ack(&mut self) {
        self.prior_fack = self.fack;
        self.reord_low = None;
    }

    /// The ACK's SACK blocks and cumulative ACK were applied (Linux `tcp_check_sack_reordering`):
    /// a never-retransmitted segment delivered below RACK.fack shows reordering of fack − its start,
    /// and `reordering` grows to that many `smss` segments when it is more than it was.
    pub fn end_ack(&mut self, smss: u32) {
        let Some(low) = self.reord_low.take() else { return };
        if low >= self.fack || smss == 0 {
            return;
        }
        let metric = self.fack - low;
        if metric > self.reordering.saturating_mul(smss) {
            self.reordering = metric.div_ceil(smss).min(MAX_REORDERING);
        }
        self.reord_seen = self.reord_seen.saturating_add(1);
    }

    /// The reordering degree in segments (`tcpi_reordering`) and the count of reorderings seen
    /// (`tcpi_reord_seen`).
    pub fn reordering(&self) -> (u32, u32) {
        (self.reordering, self.reord_seen)
    }

    /// RFC 8985 §6.2 steps 2 and 3 for one newly delivered segment: advance RACK.xmit_ts/end_seq and
    /// RACK.rtt, and note reordering.
    fn delivered(&mut self, s: Seg, now: Instant) {
        if !s.ever_rtx && s.start < self.fack && self.reord_low.is_none_or(|l| s.start < l) {
            self.reord_low = Some(s.start);
        }
        if s.end > self.fack {
            self.fack = s.end;
        } else if s.end < self.prior_fack && !s.ever_rtx {
            self.reordering_seen = true; // delivered below data delivered earlier: reordering
        }
        // RFC 8985 §6.2 step 2 walks the delivered segments in transmit order, so RACK.rtt ends as the
        // RTT of the most recently sent one and moves with RACK.xmit_ts only. An ACK delivers segments in
        // sequence order here, and the cumulative ACK that a repaired hole lets through covers originals
        // sent rounds earlier: taking their RTT would stretch every deadline of the next detection. Linux
        // (`tcp_rack_advance`, the knob `rtt_every_delivery`) does take it: it sets RACK.rtt for every
        // segment the ACK delivers, SACKed blocks first and then the cumulatively acknowledged ones, each
        // in sequence order, and advances only RACK.xmit_ts and RACK.end_seq conditionally.
        let newer = self.xmit_ts.is_none_or(|t| Self::sent_after(&s, t, self.xmit_order, self.end_seq));
        if !newer && !self.rtt_every_delivery {
            return;
        }
        let rtt = now.saturating_since(s.xmit);
        // A retransmitted segment's delivery is ambiguous: it may be the original's. Linux
        // (`tcp_rack_advance`) trusts it unless the RTT is below the path's minimum. RFC 8985 also
        // rejects it when the timestamp echo predates the retransmission, but a receiver echoes the
        // TSval of the segment that last advanced RCV.NXT (RFC 7323 §4.3), so the SACK of a probe
        // that lands above a hole always echoes an older TSval: that test would keep a probe from
        // ever uncovering the hole below it.
        if s.ever_rtx && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.rtt = rtt;
        if newer {
            self.xmit_ts = Some(s.xmit);
            self.end_seq = s.end;
            self.xmit_order = s.order;
        }
    }

    /// RFC 8985's "sent after" (Linux `tcp_rack_sent_after`): a later transmit time, or at the same time a
    /// later sequence number. In the simulator a connection's sends at one instant all share it, where a
    /// kernel's clock moves between them (a retransmission goes out after the new data an earlier ACK of
    /// the same instant released); the tie is broken by the order of transmission, and by sequence number
    /// only within one transmission (the segments of one retransmitted run). By sequence number alone a
    /// retransmission sent after new data of the same instant counted as sent before it, and the SACK of
    /// that data one round trip later marked the retransmission lost (reordering window 0 in recovery): a
    /// spurious second retransmission, reported by D-SACK.
    #[inline]
    fn sent_after(s: &Seg, xmit: Instant, order: u32, end: SeqNumber) -> bool {
        let later = s.order.wrapping_sub(order) as i32;
        s.xmit > xmit || (s.xmit == xmit && (later > 0 || (later == 0 && s.end > end)))
    }

    /// A SACK block `[left, right)` arrived: the segments it covers whole are delivered.
    pub fn on_sack(&mut self, left: SeqNumber, right: SeqNumber, now: Instant) {
        let walk_from = self.walked.walk_from(left, right);
        let mut i = self.segs.partition_point(|s| s.end <= walk_from);
        while i < self.segs.len() && self.segs[i].start < right {
            let s = self.segs[i];
            if !s.sacked && s.start >= left && s.end <= right {
                self.marks.remove(&s);
                self.segs[i].sacked = true;
                self.segs_sacked += 1;
                self.delivered(s, now);
            }
            i += 1;
        }
        debug_assert!(self.segs.iter().all(|s| s.sacked || s.start < left || s.end > right));
        self.walked.walked(left, right);
    }

    /// The part of `[left, right)` made of whole segments: from the first segment that starts in it to
    /// the last that ends in it, `None` when it covers no segment whole.
    pub fn whole_segments(&self, left: SeqNumber, right: SeqNumber) -> Option<(SeqNumber, SeqNumber)> {
        let first = self.segs.partition_point(|s| s.start < left);
        let past = self.segs.partition_point(|s| s.end <= right);
        (first < past).then(|| (self.segs[first].start, self.segs[past - 1].end))
    }

    /// Packets a cumulative ACK to `una` delivers that no SACK delivered before (`cwnd_growth_packets`):
    /// each transmitted segment counts ⌈bytes / `smss`⌉ packets (Linux `tcp_skb_pcount`), and one that
    /// `una` cuts counts the packets its acknowledged head takes off that count (`tcp_tso_acked`).
    pub fn packets_acked(&self, una: SeqNumber, smss: u32) -> u32 {
        let pcount = |bytes: u32| bytes.div_ceil(smss.max(1));
        let mut packets = 0;
        for s in self.segs.iter().take_while(|s| s.start < una) {
            if s.sacked {
                continue;
            }
            let len = s.end - s.start;
            packets += if s.end <= una { pcount(len) } else { pcount(len) - pcount(s.end - una) };
        }
        packets
    }

    /// The cumulative ACK moved to `una`: the segments below it are delivered and forgotten.
    pub fn on_cumulative_ack(&mut self, una: SeqNumber, now: Instant) {
        self.walked.on_cumulative_ack(una);
        while let Some(&s) = self.segs.front() {
            if s.end > una {
                if s.start < una {
                    let head = &mut self.segs[0];
                    self.marks.remove(head);
                    head.start = una;
                    self.marks.add(head);
                }
                break;
            }
            self.segs.pop_front();
            self.marks.remove(&s);
            if s.sacked {
                self.segs_sacked -= 1;
            } else {
                self.delivered(s, now);
            }
        }
        if self.fack < una {
            self.fack = una;
        }
        // Within the window, so that the comparison stays meaningful as sequence numbers wrap.
        if self.lost_from < una {
            self.lost_from = una;
        }
    }

    /// A D-SACK `[left, right)` arrived (RFC 8985 §6.2 step 4): the reordering window grows by one step
    /// per round trip that sees one. `of_probe`: it reports the outstanding tail loss probe.
    ///
    /// `after_reordering` (Linux since 5.15; the knob `rack_dsack_after_reordering`): the window grows
    /// only if reordering was seen before this ACK and the D-SACK is not the probe's (`tcp_dsack_seen`),
    /// and the D-SACK itself shows reordering only for a retransmitted segment above SND.UNA that was
    /// SACKed before (`tcp_sacktag_one`: the original arrived after the retransmission left). Otherwise
    /// RFC 8985 as written: every D-SACK round grows the window, and a D-SACK below RACK.fack shows
    /// reordering. On a lossy path without reordering the difference is the whole of a recovery's
    /// timing: a segment the receiver had but never SACKed (its block fell out of the ACK's three or
    /// four) is retransmitted needlessly once, its D-SACK below SND.UNA then set `reordering_seen` for
    /// good and widened the window round after round up to SRTT, and every later loss was found about
    /// RACK.rtt + SRTT after it was sent (two round trips) where Linux finds it after one.
    pub fn on_dsack(
        &mut self,
        left: SeqNumber,
        right: SeqNumber,
        snd_una: SeqNumber,
        snd_nxt: SeqNumber,
        of_probe: bool,
        after_reordering: bool,
    ) {
        if !after_reordering || (self.reordering_seen && !of_probe) {
            if self.dsack_round.is_some_and(|r| snd_una >= r) {
                self.dsack_round = None;
            }
            if self.dsack_round.is_none() {
                self.dsack_round = Some(snd_nxt);
                self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
                self.reo_wnd_persist = REO_WND_PERSIST;
            }
        }
        if !after_reordering {
            if right <= self.fack {
                self.reordering_seen = true;
            }
            return;
        }
        if right <= snd_una {
            return;
        }
        let fack = self.fack;
        let i = self.segs.partition_point(|s| s.end <= left);
        let late_original = self
            .segs
            .range(i..)
            .take_while(|s| s.start < right)
            .any(|s| s.start >= left && s.end <= right && s.sacked && s.ever_rtx && s.start < fack);
        if late_original {
            self.reordering_seen = true;
        }
    }

    /// A fast or RTO recovery ended (RFC 8985 §6.2 step 4): after 16 without D-SACK the reordering
    /// window multiplier returns to 1.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RACK.reo_wnd (RFC 8985 §6.2 step 4, Linux `tcp_rack_reo_wnd`): zero while no reordering was seen
    /// and the sender is in recovery or DupThresh segments are SACKed; else min_RTT/4 times the
    /// multiplier, at most SRTT.
    pub fn reo_wnd(&self, in_recovery: bool, dupthresh: u32, srtt: Option<Duration>) -> Duration {
        if !self.reordering_seen && (in_recovery || self.segs_sacked >= dupthresh) {
            return Duration::ZERO;
        }
        let quarter = Duration::from_nanos(self.min_rtt.unwrap_or(Duration::ZERO).as_nanos() / 4);
        let w = quarter.saturating_mul(self.reo_wnd_mult as u64);
        srtt.map_or(w, |s| w.min(s))
    }

    /// RFC 8985 §6.2 step 5 (`RACK_detect_loss`): every segment sent before the most recently delivered
    /// one, and more than RACK.rtt + `reo_wnd` ago, is lost.
    pub fn detect_loss(&mut self, now: Instant, reo_wnd: Duration) -> Detection {
        let mut d = Detection { newly_lost: 0, newly_lost_bytes: 0, timer: None };
        let Some(rack_xmit) = self.xmit_ts else { return d };
        let (rack_end, rack_order, rtt) = (self.end_seq, self.xmit_order, self.rtt);
        for s in self.segs.iter_mut() {
            let after = Self::sent_after(s, rack_xmit, rack_order, rack_end);
            if after {
                if s.ever_rtx {
                    continue; // a retransmission out of sequence order; later originals may be older
                }
                break; // originals go out in sequence order: everything beyond was sent later
            }
            if s.sacked || (s.lost && !s.rtx) {
                continue;
            }
            let deadline = s.xmit + rtt + reo_wnd;
            if deadline <= now {
                self.marks.remove(s);
                s.lost = true;
                s.rtx = false;
                self.marks.add(s);
                self.lost_from = self.lost_from.min(s.start);
                d.newly_lost += 1;
                d.newly_lost_bytes += (s.end - s.start) as u64;
            } else {
                d.timer = Some(d.timer.map_or(deadline, |t: Instant| t.max(deadline)));
            }
        }
        d
    }

    /// After a retransmission timeout every unSACKed segment is lost (Linux `tcp_timeout_mark_lost`);
    /// an outstanding probe is forgotten.
    /// Returns the bytes newly marked lost: those not marked before and retransmissions
    /// (`tcp_timeout_mark_lost` → `tcp_mark_skb_lost`).
    pub fn on_rto(&mut self) -> u64 {
        let mut newly = 0;
        for s in self.segs.iter_mut().filter(|s| !s.sacked) {
            if !s.lost || s.rtx {
                newly += (s.end - s.start) as u64;
            }
            self.marks.remove(s);
            s.lost = true;
            s.rtx = false;
            self.marks.add(s);
            self.lost_from = self.lost_from.min(s.start);
        }
        self.tlp_end = None;
        newly
    }

    /// A timeout proved spurious (F-RTO): the segments it marked lost are not (Linux
    /// `tcp_undo_cwnd_reduction` with `unmark_loss`, which clears every `TCPCB_LOST`).
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut().filter(|s| s.lost) {
            self.marks.remove(s);
            s.lost = false;
            self.marks.add(s);
        }
    }

    /// The SACK scoreboard was dropped (RFC 6675 §5.1 after a timeout): forget the SACK marks too.
    pub fn clear_sacked(&mut self) {
        self.walked.clear();
        for s in self.segs.iter_mut() {
            self.marks.remove(s);
            s.sacked = false;
            self.marks.add(s);
            self.lost_from = self.lost_from.min(s.start);
        }
        self.segs_sacked = 0;
    }

    /// The first segment marked lost and not retransmitted since (RFC 6675 NextSeg rule 1, with
    /// RACK's verdict as IsLost): its range.
    pub fn next_lost(&self) -> Option<(SeqNumber, SeqNumber)> {
        let found = if self.marks.lost_waiting == 0 {
            None
        } else {
            let i = self.segs.partition_point(|s| s.start < self.lost_from);
            self.segs.range(i..).find(|s| s.awaits_retransmission()).map(|s| (s.start, s.end))
        };
        debug_assert_eq!(found, self.segs.iter().find(|s| s.awaits_retransmission()).map(|s| (s.start, s.end)));
        found
    }

    /// Bytes in flight by RACK's marks (Linux `tcp_packets_in_flight`: outstanding − SACKed − lost +
    /// retransmitted), the pipe of a RACK recovery.
    pub fn pipe(&self) -> u32 {
        debug_assert_eq!(self.marks.pipe, self.segs.iter().map(Seg::in_flight).sum::<u32>());
        self.marks.pipe
    }

    /// Segments marked lost and neither SACKed nor cumulatively acknowledged since, whether or not a
    /// retransmission of them is in flight (Linux `lost_out`, which `tcp_time_to_recover` tests).
    pub fn lost_out(&self) -> u32 {
        debug_assert_eq!(self.marks.lost_out, self.segs.iter().filter(|s| s.lost && !s.sacked).count() as u32);
        self.marks.lost_out
    }

    /// Retransmitted segments neither SACKed nor cumulatively acknowledged since (Linux `retrans_out`).
    /// A walk: only `tcp_info` asks.
    pub fn retrans_out(&self) -> u32 {
        self.segs.iter().filter(|s| s.rtx && !s.sacked).count() as u32
    }

    /// When the oldest outstanding segment was last sent (Linux: the head of the retransmit queue).
    pub fn head_xmit(&self) -> Option<Instant> {
        self.segs.front().map(|s| s.xmit)
    }

    /// The last segment sent, for a probe that retransmits (RFC 8985 §7.3).
    pub fn last_segment(&self) -> Option<(SeqNumber, SeqNumber)> {
        self.segs.back().map(|s| (s.start, s.end))
    }

    /// Whether a probe is outstanding (RFC 8985 §7.2: at most one per flight).
    pub fn tlp_outstanding(&self) -> bool {
        self.tlp_end.is_some()
    }

    /// A probe went out; SND.NXT is `snd_nxt` after it.
    pub fn on_probe_sent(&mut self, snd_nxt: SeqNumber, is_retrans: bool) {
        self.tlp_end = Some(snd_nxt);
        self.tlp_is_retrans = is_retrans;
    }

    /// RFC 8985 §7.4.2 (`TLP_process_ack`, Linux `tcp_process_tlp_ack`): true when the ACK shows the
    /// probe repaired a loss, which the sender must answer with a congestion response.
    pub fn tlp_on_ack(&mut self, ack: SeqNumber, dsack_of_probe: bool, pure_dup_ack: bool) -> bool {
        let Some(end) = self.tlp_end else { return false };
        if ack < end {
            return false;
        }
        if !self.tlp_is_retrans || dsack_of_probe || pure_dup_ack {
            // New data delivered, or the original and the probe both arrived: no loss.
            self.tlp_end = None;
            false
        } else if ack > end {
            self.tlp_end = None;
            true
        } else {
            false
        }
    }

    /// The probe's range, to match a D-SACK against it.
    pub fn tlp_end(&self) -> Option<SeqNumber> {
        self.tlp_end
    }

    /// Forgets an outstanding probe (a recovery or timeout takes over).
    pub fn clear_tlp(&mut self) {
        self.tlp_end = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk the incremental pipe replaced, and the plain search for the first lost segment.
    fn walked(r: &Rack) -> (u32, Option<(SeqNumber, SeqNumber)>) {
        let pipe =
            r.segs.iter().filter(|s| !s.sacked).map(|s| (s.end - s.start) * (!s.lost as u32 + s.rtx as u32)).sum();
        let lost = r.segs.iter().find(|s| s.lost && !s.rtx && !s.sacked).map(|s| (s.start, s.end));
        (pipe, lost)
    }

    /// RACK.rtt is the RTT of the most recently sent segment delivered (Linux `tcp_rack_advance`): segments
    /// sent at 0, 10 and 20 ms; the SACK of the third at 50 ms makes RACK.rtt 30 ms; the cumulative ACK of
    /// the first at 60 ms (sent before RACK's segment, its RTT 60 ms) leaves it there, so the second,
    /// sent at 10 ms, is lost at 10 + 30 ms, not at 10 + 60.
    #[test]
    fn an_older_segment_delivered_later_does_not_set_rack_rtt() {
        let iss = SeqNumber(1);
        let mut r = Rack::new(iss, 3);
        let ms = |n: u64| Instant::ZERO + Duration::from_millis(n);
        for i in 0..3u32 {
            r.on_send(iss + i * 1000, iss + (i + 1) * 1000, ms(10 * i as u64));
        }
        r.begin_ack();
        r.on_sack(iss + 2000, iss + 3000, ms(50));
        r.begin_ack();
        r.on_cumulative_ack(iss + 1000, ms(60));
        assert_eq!(r.rtt, Duration::from_millis(30));
        let d = r.detect_loss(ms(60), Duration::ZERO);
        assert_eq!(d.newly_lost, 1);
        assert_eq!(r.next_lost(), Some((iss + 1000, iss + 2000)));
    }

    /// Under `rtt_every_delivery` (Linux `tcp_rack_advance`) the same ACKs leave RACK.rtt at the RTT of the
    /// last segment delivered (60 ms) while RACK.xmit_ts stays the third segment's: the second, sent at
    /// 10 ms, is not yet lost at 60 ms (10 + 60 > 60) but is at 70 ms.
    #[test]
    fn linux_takes_rack_rtt_from_every_delivered_segment() {
        let iss = SeqNumber(1);
        let mut r = Rack::new(iss, 3);
        r.rtt_every_delivery = true;
        let ms = |n: u64| Instant::ZERO + Duration::from_millis(n);
        for i in 0..3u32 {
            r.on_send(iss + i * 1000, iss + (i + 1) * 1000, ms(10 * i as u64));
        }
        r.begin_ack();
        r.on_sack(iss + 2000, iss + 3000, ms(50));
        assert_eq!(r.rtt, Duration::from_millis(30));
        r.begin_ack();
        r.on_cumulative_ack(iss + 1000, ms(60));
        assert_eq!(r.rtt, Duration::from_millis(60));
        assert_eq!(r.xmit_ts, Some(ms(20)));
        let d = r.detect_loss(ms(60), Duration::ZERO);
        assert_eq!(d.newly_lost, 0);
        assert_eq!(d.timer, Some(ms(70)));
        let d = r.detect_loss(ms(70), Duration::ZERO);
        assert_eq!(d.newly_lost, 1);
    }

    /// A sender's life across the sequence-number wrap: sends, SACKs, losses, retransmissions of what
    /// `next_lost` names, cumulative ACKs, timeouts and a dropped scoreboard; after every step the kept pipe
    /// and the first lost segment are what a walk over every segment finds.
    #[test]
    fn the_kept_pipe_and_first_lost_segment_match_a_walk() {
        let iss = SeqNumber(u32::MAX - 300_000);
        let mut r = Rack::new(iss, 3);
        let (mut una, mut nxt) = (iss, iss);
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut now = Instant::ZERO;
        let (mut lost_seen, mut rtx_seen) = (0, 0);
        for step in 0..4000 {
            now += Duration::from_micros(100);
            match draw(10) {
                0..=3 => {
                    let len = 500 + draw(1000) as u32;
                    r.on_send(nxt, nxt + len, now);
                    nxt += len;
                }
                4 | 5 if nxt > una => {
                    let left = una + draw((nxt - una) as u64) as u32;
                    let right = left + draw((nxt - left) as u64 + 1) as u32;
                    r.on_sack(left, right, now);
                }
                6 => {
                    let d = r.detect_loss(now, Duration::from_micros(draw(500)));
                    lost_seen += d.newly_lost;
                }
                7 => {
                    if let Some((s, e)) = r.next_lost() {
                        r.on_retransmit(s, e, now);
                        rtx_seen += 1;
                    }
                }
                8 if nxt > una => {
                    una = una + draw((nxt - una) as u64 / 4 + 1) as u32;
                    r.on_cumulative_ack(una, now);
                }
                _ if step % 500 == 499 => {
                    r.on_rto();
                }
                _ if step % 700 == 699 => r.clear_sacked(),
                _ => {}
            }
            assert_eq!((r.pipe(), r.next_lost()), walked(&r), "step {step}");
        }
        assert!(
            lost_seen > 50 && rtx_seen > 50,
            "the run exercised losses ({lost_seen}) and retransmissions ({rtx_seen})"
        );
        assert!(una.0 < iss.0, "the run crossed the wrap");
    }
}
