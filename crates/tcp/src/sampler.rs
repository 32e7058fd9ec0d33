//! The sender's samplers: which ACKs give RTT samples (`rtt_sampling`, [`RttSampler`]), beside the
//! estimators of [`crate::rtt`] that turn the samples into an RTO; and the delivery rate each ACK
//! measures ([`DeliveryRate`], Linux's `tcp_rate.c`), which model-based congestion control (BBR) runs on.
//!
//! Read RFC 6298 §3 (Karn's algorithm: never time a retransmitted segment; one timed segment per RTT when
//! there is no better source), RFC 7323 §4.1 (with timestamps, every ACK of new data gives a sample from
//! its echo, retransmissions included, since the echo tells which transmission it answers). Every policy
//! samples only on an ACK that advances SND.UNA, so an ACK that arrives behind a later one never does.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};
use tcplab_wire::SeqNumber;

use crate::config::RttSampling;
use crate::congestion::RateSample;
use crate::ranges::WalkedBlocks;

/// One transmission of new data, under `every_ack` and `linux`.
#[derive(Debug, Clone, Copy)]
struct Sent {
    /// One past the segment's end.
    end: SeqNumber,
    /// When it was first sent.
    at: Instant,
    /// Under `linux`: sent again since (Linux `TCPCB_EVER_RETRANS`): never a sample.
    retransmitted: bool,
    /// Under `linux`: SACKed already, so a later cumulative ACK takes no sample from it.
    sacked: bool,
}

/// The sampling state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct RttSampler {
    policy: RttSampling,
    /// The timed segment (Karn): one past its end, and when it was sent.
    timed: Option<(SeqNumber, Instant)>,
    /// Under `every_ack` and `linux`: each new segment, oldest first.
    sent: VecDeque<Sent>,
}

/// Under `linux`: the earliest and latest first transmission of the never-retransmitted segments an ACK's
/// SACK blocks newly cover (`first_sackt`, `last_sackt` of `tcp_sacktag_one`).
pub(crate) type SackedSent = Option<(Instant, Instant)>;

/// Under `linux`, an ACK's sample: what the estimator takes (`seq_rtt_us`), and the RTT of the newest
/// segment behind it, which HyStart and the minimum RTT read (`ca_rtt_us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinuxSample {
    pub rtt: Duration,
    pub ca_rtt: Duration,
}

impl RttSampler {
    pub fn new(policy: RttSampling) -> Self {
        RttSampler { policy, timed: None, sent: VecDeque::new() }
    }

    /// Whether the samples come from the segments' send times as Linux takes them (`linux`).
    #[inline]
    pub fn linux(&self) -> bool {
        self.policy == RttSampling::Linux
    }

    /// Whether the timestamp echo is the sample source (`auto` with timestamps negotiated).
    fn by_timestamps(&self, ts_ok: bool) -> bool {
        ts_ok && self.policy == RttSampling::Auto
    }

    /// The first SYN (or SYN-ACK) went out: it is timed, up to `end` = ISS + 1.
    pub fn on_syn_sent(&mut self, end: SeqNumber, now: Instant) {
        self.timed = Some((end, now));
    }

    /// New data ending at `end` went out at `now`.
    pub fn on_data_sent(&mut self, end: SeqNumber, now: Instant, ts_ok: bool) {
        // (Under `linux` the timed segment is never read after the handshake.)
        if self.timed.is_none() && !self.by_timestamps(ts_ok) {
            self.timed = Some((end, now));
        }
        if matches!(self.policy, RttSampling::EveryAck | RttSampling::Linux) {
            self.sent.push_back(Sent { end, at: now, retransmitted: false, sacked: false });
        }
    }

    /// Under `linux`: `[start, end)` was sent again; the segments it overlaps never give a sample.
    #[inline]
    pub fn on_retransmit(&mut self, start: SeqNumber, end: SeqNumber) {
        if self.linux() {
            self.mark_retransmitted(start, end);
        }
    }

    fn mark_retransmitted(&mut self, start: SeqNumber, end: SeqNumber) {
        let mut i = self.sent.partition_point(|s| s.end <= start);
        let mut from = if i == 0 { None } else { Some(self.sent[i - 1].end) };
        while let Some(s) = self.sent.get_mut(i) {
            if from.is_some_and(|f| f >= end) {
                break;
            }
            s.retransmitted = true;
            from = Some(s.end);
            i += 1;
        }
    }

    /// Under `linux`: a SACK block newly covers `[left, right)` (above SND.UNA); the never-retransmitted
    /// segments it covers whole and SACKs for the first time join the ACK's SACK sample, `sacked`.
    #[inline]
    pub fn on_sack(&mut self, left: SeqNumber, right: SeqNumber, sacked: &mut SackedSent) {
        if self.linux() {
            self.mark_sacked(left, right, sacked);
        }
    }

    fn mark_sacked(&mut self, left: SeqNumber, right: SeqNumber, sacked: &mut SackedSent) {
        let mut i = self.sent.partition_point(|s| s.end <= left);
        let mut start = if i == 0 { None } else { Some(self.sent[i - 1].end) };
        while let Some(s) = self.sent.get_mut(i) {
            if s.end > right {
                break;
            }
            if start.is_some_and(|st| st >= left) && !s.sacked {
                s.sacked = true;
                if !s.retransmitted {
                    let (first, last) = sacked.get_or_insert((s.at, s.at));
                    *first = (*first).min(s.at);
                    *last = (*last).max(s.at);
                }
            }
            start = Some(s.end);
            i += 1;
        }
    }

    /// Under `linux`: an ACK that moved SND.UNA nowhere samples from the segments its SACK blocks newly
    /// covered, `sacked` (Linux samples on every ACK: `tcp_clean_rtx_queue` → `tcp_ack_update_rtt` with
    /// `sack_rtt_us`).
    pub fn sack_sample(now: Instant, sacked: SackedSent) -> Option<LinuxSample> {
        let (first, last) = sacked?;
        Some(LinuxSample { rtt: now - first, ca_rtt: now - last })
    }

    /// Karn's rule: a retransmission (or a timeout, or a recovery) leaves no timed segment.
    pub fn forget_timed(&mut self) {
        self.timed = None;
    }

    /// The ACK that completes the handshake: the echo of the SYN's timestamp (`ts_rtt`) if there is one,
    /// else the timed SYN unless it was retransmitted (Karn).
    pub fn on_handshake_ack(
        &mut self,
        now: Instant,
        ts_rtt: Option<Duration>,
        syn_retransmitted: bool,
    ) -> Option<Duration> {
        if ts_rtt.is_some() {
            return ts_rtt;
        }
        let (_, sent) = self.timed.take()?;
        (!syn_retransmitted).then(|| now - sent)
    }

    /// Under `linux`, the ACK that completes the handshake: the SYN's (or SYN-ACK's) send time unless it
    /// was retransmitted, else the timestamp echo (`tcp_synack_rtt_meas`, `tcp_ack_update_rtt`).
    pub fn on_handshake_ack_linux(
        &mut self,
        now: Instant,
        ts_rtt: Option<Duration>,
        syn_retransmitted: bool,
    ) -> Option<Duration> {
        let timed = self.timed.take().filter(|_| !syn_retransmitted).map(|(_, sent)| now - sent);
        timed.or(ts_rtt)
    }

    /// An ACK of new data up to `ack` at `now`; `ts_rtt` is the elapsed time its timestamp echo gives, if
    /// timestamps were negotiated and it echoes one. Returns the sample, if the policy takes one.
    pub fn on_ack(&mut self, ack: SeqNumber, now: Instant, ts_rtt: Option<Duration>, ts_ok: bool) -> Option<Duration> {
        // Timestamps the source and no segment timed (only a SYN is, until its ACK): the echo is the
        // sample, what the steps below give, in two tests (every ACK of new data with timestamps).
        if self.timed.is_none() && self.by_timestamps(ts_ok) {
            return ts_rtt;
        }
        let mut sample = None;
        let mut sampled = false;
        if self.policy == RttSampling::EveryAck {
            // Every ACK, timed from the first transmission of the newest segment it covers, retransmitted or
            // not: Karn's ambiguity left in on purpose.
            let mut first_sent = None;
            while let Some(&Sent { end, at, .. }) = self.sent.front() {
                if end > ack {
                    break;
                }
                first_sent = Some(at);
                self.sent.pop_front();
            }
            sample = first_sent.map(|t| now - t);
            sampled = true;
        }
        if self.by_timestamps(ts_ok) && !sampled && ts_rtt.is_some() {
            sample = ts_rtt;
            sampled = true;
        }
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                if !sampled {
                    sample = Some(now - sent);
                }
                self.timed = None;
            }
        }
        sample
    }

    /// Linux's sample (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): from the first transmission of the
    /// oldest segment the ACK acknowledges, unless a retransmitted one is among them (Karn, per segment);
    /// else from the oldest it newly SACKed; else from the timestamp echo. `ca_rtt` is the newest such
    /// segment's instead of the oldest (the SACKed one's when there is one). `sacked`: what the ACK's SACK
    /// blocks newly covered.
    #[inline(never)]
    pub fn on_ack_linux(
        &mut self,
        ack: SeqNumber,
        now: Instant,
        ts_rtt: Option<Duration>,
        sacked: SackedSent,
    ) -> Option<LinuxSample> {
        let mut acked: Option<(Instant, Instant)> = None;
        let mut retransmitted = false;
        while let Some(&s) = self.sent.front() {
            if s.end > ack {
                break;
            }
            self.sent.pop_front();
            if s.retransmitted {
                retransmitted = true;
            } else if !s.sacked {
                acked = Some(acked.map_or((s.at, s.at), |(first, _)| (first, s.at)));
            }
        }
        let seq = acked.filter(|_| !retransmitted);
        // The estimator's from the oldest acknowledged, `ca_rtt` from the newest SACKed if any.
        let (first, last) = match (seq, sacked) {
            (Some((first, _)), Some((_, last))) => (first, last),
            (Some(times), None) | (None, Some(times)) => times,
            (None, None) => {
                let ts = ts_rtt?;
                return Some(LinuxSample { rtt: ts, ca_rtt: ts });
            }
        };
        Some(LinuxSample { rtt: now - first, ca_rtt: now - last })
    }
}

/// The time average of a gauge that changes at instants: each value weighted by how long it held, from the
/// first value to the last change (what held after the last change is not counted, so a figure read long
/// after a connection went quiet is not pulled toward its last value).
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeMean {
    /// The first value's instant, the latest value and its instant.
    first: Option<Instant>,
    last: Instant,
    value: Duration,
    /// ∑ value × time held, in ns².
    integral: f64,
}

impl TimeMean {
    /// The gauge is `value` from `now` on.
    pub fn set(&mut self, now: Instant, value: Duration) {
        if self.first.is_none() {
            self.first = Some(now);
        } else {
            self.integral += self.value.as_nanos() as f64 * now.saturating_since(self.last).as_nanos() as f64;
        }
        self.last = now;
        self.value = value;
    }

    /// The mean in ms: the only value where no time has passed since the first, `None` before any.
    pub fn mean_ms(&self) -> Option<f64> {
        let span = self.last.saturating_since(self.first?).as_nanos() as f64;
        Some(if span > 0.0 { self.integral / span } else { self.value.as_nanos() as f64 } / 1e6)
    }
}

/// What one transmission of a segment knew when it left (Linux's `tcp_skb_cb.tx`): the connection's
/// delivered count and its time then, the start of the send interval, whether the sender was
/// application-limited.
#[derive(Debug, Clone, Copy)]
struct TxRecord {
    start: SeqNumber,
    end: SeqNumber,
    /// When this (re)transmission went.
    sent: Instant,
    /// The rank of that transmission among the connection's, modulo 2^32: what orders two transmissions
    /// of the same instant (see [`DeliveryRate::sample_from`]). It fits the record's padding.
    order: u32,
    /// `first_tx_mstamp` at the send: the start of the send interval the segment closes.
    first_tx: Instant,
    /// `delivered_mstamp` at the send.
    delivered_at: Instant,
    /// `delivered` at the send, bytes.
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
    /// SACKed already: counted as delivered once, and never sampled again (Linux clears
    /// `tx.delivered_mstamp`).
    sacked: bool,
}

/// The delivery-rate estimator of Linux's `tcp_rate.c` (draft-cheng-iccrg-delivery-rate-estimation),
/// in bytes: every transmission records the connection's `delivered` count and time; the ACK that
/// delivers the newest of them measures `delivered` now minus then over max(the send interval, the ACK
/// interval). The send interval guards against ACK compression, the ACK interval against a burst sent
/// faster than the bottleneck. Samples taken while the application left the window unused are marked
/// app-limited, and a controller keeps them only when they raise its estimate.
#[derive(Debug, Clone)]
pub struct DeliveryRate {
    /// The transmissions not yet cumulatively acknowledged, in sequence order.
    records: VecDeque<TxRecord>,
    /// Transmissions so far (modulo 2^32): the rank of the latest.
    sent: u32,
    /// Bytes delivered (ACKed or SACKed, each once) over the connection's life (`tp->delivered`).
    delivered: u64,
    /// When `delivered` last grew (`tp->delivered_mstamp`).
    delivered_at: Instant,
    /// The send time of the newest segment delivered (`tp->first_tx_mstamp`): the next send interval's start.
    first_tx: Instant,
    /// While application-limited: the `delivered` count at which that phase ends; 0 when not
    /// (`tp->app_limited`).
    app_limited_until: u64,
    /// Bytes marked lost over the connection's life (`tp->lost`), and at the last ACK. Where RACK marks
    /// losses the connection reports each mark (`on_marked_lost`, Linux's `tcp_mark_skb_lost`), so that an
    /// ACK's sample carries the losses it found; elsewhere a retransmission counts as its segment's loss.
    lost: u64,
    lost_at_last_ack: u64,
    /// Whether the connection reports RACK's marks (`on_marked_lost`) rather than retransmissions.
    pub losses_at_marks: bool,
    /// The sample being built by the ACK being processed.
    cur: Option<(TxRecord, Duration)>,
    acked_sacked: u64,
    /// What the ACK being processed knows of its RTT, as `tcp_clean_rtx_queue` and `tcp_sacktag_one`
    /// gather it for `tcp_ack_update_rtt`'s `ca_rtt_us`: the send time of the highest segment it newly
    /// SACKed that was never retransmitted (`last_sackt`), of the highest it cumulatively acknowledged
    /// that was neither SACKed before nor ever retransmitted (`last_ackt`), whether it cumulatively
    /// acknowledged any segment ever retransmitted (`FLAG_RETRANS_DATA_ACKED`, Karn), and the RTT its
    /// timestamp echo gives when it advanced SND.UNA.
    last_sackt: Option<(SeqNumber, Instant)>,
    last_ackt: Option<Instant>,
    retrans_acked: bool,
    ts_rtt: Option<Duration>,
    /// The last sample that counts for `tcpi_delivery_rate` (`tp->rate_delivered`, `rate_interval_us`,
    /// `rate_app_limited`).
    rate: Option<(u64, Duration, bool)>,
    /// The SACK blocks walked lately, whose records are all marked (a repeated block is walked only past them).
    walked: WalkedBlocks,
    /// The smoothed RTT's time average (`X_SmoothedRTTMean`). Kept here, where BBR runs, because BBR's RTT
    /// swings within its gain cycle (±7 %), so that one reading at the end says little; the Linux backend
    /// reports the same figure for a BBR socket from `tcpi_rtt` read every 10 ms (docs/bbr.md § The matrix).
    pub srtt_mean: TimeMean,
}

impl Default for DeliveryRate {
    fn default() -> Self {
        DeliveryRate {
            records: VecDeque::new(),
            sent: 0,
            delivered: 0,
            delivered_at: Instant::ZERO,
            first_tx: Instant::ZERO,
            app_limited_until: 0,
            lost: 0,
            lost_at_last_ack: 0,
            losses_at_marks: false,
            cur: None,
            acked_sacked: 0,
            last_sackt: None,
            last_ackt: None,
            retrans_acked: false,
            ts_rtt: None,
            rate: None,
            walked: WalkedBlocks::default(),
            srtt_mean: TimeMean::default(),
        }
    }
}

impl DeliveryRate {
    /// Bytes delivered so far (`tp->delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// When the last byte was delivered (`tp->delivered_mstamp`).
    pub fn delivered_at(&self) -> Instant {
        self.delivered_at
    }
    /// Bytes marked lost so far (`tp->lost`).
    pub fn lost(&self) -> u64 {
        self.lost
    }
    /// `bytes` newly marked lost (Linux `tcp_notify_skb_loss_event`: `tp->lost`), counted here when
    /// `losses_at_marks`.
    pub fn on_marked_lost(&mut self, bytes: u64) {
        if self.losses_at_marks {
            self.lost += bytes;
        }
    }
    /// Whether the sender is in an application-limited phase (`tp->app_limited != 0`).
    pub fn app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// `tcp_rate_skb_sent`: `[start, end)` left at `now`, a retransmission if `retransmitted`. With nothing
    /// in flight (`idle`) the send and delivery clocks restart here, so an idle gap is not counted.
    pub fn on_sent(&mut self, start: SeqNumber, end: SeqNumber, now: Instant, idle: bool, retransmitted: bool) {
        if end <= start {
            return;
        }
        if idle {
            self.first_tx = now;
            self.delivered_at = now;
        }
        self.sent = self.sent.wrapping_add(1);
        let snap = TxRecord {
            start,
            end,
            sent: now,
            order: self.sent,
            first_tx: self.first_tx,
            delivered_at: self.delivered_at,
            delivered: self.delivered,
            app_limited: self.app_limited_until != 0,
            retransmitted,
            sacked: false,
        };
        if retransmitted {
            if !self.losses_at_marks {
                self.lost += (end - start) as u64;
            }
            // The records the retransmission covers take its snapshot (Linux restamps the skb).
            let from = self.records.partition_point(|r| r.end <= start);
            for r in self.records.range_mut(from..) {
                if r.start >= end {
                    break;
                }
                *r = TxRecord { start: r.start, end: r.end, sacked: r.sacked, ..snap };
            }
            return;
        }
        self.records.push_back(snap);
    }

    /// `tcp_rate_skb_delivered` for one record: the newest transmission delivered decides the sample
    /// (`tcp_skb_sent_after`: a later send time, or at the same time a later sequence number). In the
    /// simulator a connection's sends at one instant all share it, where a kernel's clock moves between
    /// them, so the tie is broken by the order of transmission, and by sequence number only within one
    /// transmission (the records of one retransmitted run). By sequence number alone a retransmission sent
    /// after new data of the same instant (a second ACK of that instant finding the loss) counted as the
    /// older, and the sample took the new data's snapshot of `delivered`, from before that ACK.
    fn sample_from(&mut self, r: TxRecord) {
        let newer = match self.cur {
            None => true,
            Some((c, _)) => {
                let later = r.order.wrapping_sub(c.order) as i32;
                r.sent > c.sent || (r.sent == c.sent && (later > 0 || (later == 0 && r.end > c.end)))
            }
        };
        if newer {
            self.cur = Some((r, r.sent.saturating_since(r.first_tx)));
            self.first_tx = r.sent;
        }
    }

    /// The receiver SACKed `[start, end)`: the records it wholly covers are delivered.
    pub fn on_sacked(&mut self, start: SeqNumber, end: SeqNumber) {
        let walk_from = self.walked.walk_from(start, end);
        let mut i = self.records.partition_point(|r| r.end <= walk_from);
        while i < self.records.len() {
            let r = self.records[i];
            if r.start >= end {
                break;
            }
            if !r.sacked && r.start >= start && r.end <= end {
                self.records[i].sacked = true;
                self.delivered += (r.end - r.start) as u64;
                self.acked_sacked += (r.end - r.start) as u64;
                if !r.retransmitted && self.last_sackt.is_none_or(|(e, _)| r.end > e) {
                    self.last_sackt = Some((r.end, r.sent));
                }
                self.sample_from(r);
            }
            i += 1;
        }
        debug_assert!(self.records.iter().all(|r| r.sacked || r.start < start || r.end > end));
        self.walked.walked(start, end);
    }

    /// SND.UNA moved to `una`: the records below it leave, those not SACKed before delivered now; a
    /// record partly covered is delivered in part and stays (Linux's partly acknowledged skb).
    pub fn on_cumulative_ack(&mut self, una: SeqNumber) {
        self.walked.on_cumulative_ack(una);
        while let Some(&r) = self.records.front() {
            if r.start >= una {
                break;
            }
            let covered = if r.end <= una { r.end - r.start } else { una - r.start };
            self.retrans_acked |= r.retransmitted;
            if !r.sacked {
                self.delivered += covered as u64;
                self.acked_sacked += covered as u64;
                if !r.retransmitted {
                    self.last_ackt = Some(r.sent);
                }
                self.sample_from(r);
            }
            if r.end <= una {
                self.records.pop_front();
            } else {
                self.records[0].start = una;
                break;
            }
        }
    }

    /// The ACK being processed advanced SND.UNA and its timestamp echo gives `rtt` (RFC 7323 §4.3's RTTM
    /// rule, which Linux applies only there).
    pub fn on_ts_rtt(&mut self, rtt: Duration) {
        self.ts_rtt = Some(rtt);
    }

    /// `rs->rtt_us` of the ACK just processed (`tcp_ack_update_rtt`'s `ca_rtt_us`): the newest segment
    /// it newly SACKed, else the newest it cumulatively acknowledged unless it acknowledged a
    /// retransmission (Karn: `FLAG_RETRANS_DATA_ACKED`), else the timestamp echo, in the timestamp
    /// clock's ticks (milliseconds in Linux), when it advanced SND.UNA. So an ACK of a retransmission
    /// that fills a hole still gives BBR and RACK an RTT, whole milliseconds, which may be below the
    /// path's microseconds (Linux 6.18 `net/ipv4/tcp_input.c`).
    fn take_rtt(&mut self, now: Instant) -> Option<Duration> {
        let (sackt, ackt) = (self.last_sackt.take(), self.last_ackt.take());
        let (retrans, ts) = (std::mem::take(&mut self.retrans_acked), self.ts_rtt.take());
        match (sackt, ackt) {
            (Some((_, t)), _) => Some(now.saturating_since(t)),
            (None, Some(t)) if !retrans => Some(now.saturating_since(t)),
            _ => ts,
        }
    }

    /// `tcp_rate_gen`: the sample of the ACK just processed, at `now`; `prior_in_flight` bytes were in
    /// flight before it, `min_rtt` is the connection's minimum RTT.
    pub fn on_ack_done(&mut self, now: Instant, prior_in_flight: u32, min_rtt: Option<Duration>) -> RateSample {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let acked_sacked = std::mem::take(&mut self.acked_sacked);
        if acked_sacked > 0 {
            self.delivered_at = now;
        }
        let losses = self.lost - self.lost_at_last_ack;
        self.lost_at_last_ack = self.lost;
        let rtt = self.take_rtt(now);
        let mut rs = RateSample { acked_sacked, losses, prior_in_flight, rtt, ..RateSample::default() };
        let Some((r, send_interval)) = self.cur.take() else { return rs };
        rs.prior_delivered = r.delivered;
        rs.is_app_limited = r.app_limited;
        let delivered = self.delivered - r.delivered;
        let ack_interval = now.saturating_since(r.delivered_at);
        let interval = send_interval.max(ack_interval);
        rs.delivered = Some(delivered);
        // Shorter than the minimum RTT: ACK compression or a stretched clock, not a rate (`tcp_rate_gen`).
        if min_rtt.is_some_and(|m| interval < m) || interval.is_zero() {
            return rs;
        }
        rs.interval = Some(interval);
        // `tcpi_delivery_rate`: an app-limited sample counts only when it is higher than the last.
        let keep = match self.rate {
            None => true,
            Some((d, i, _)) => {
                !r.app_limited || delivered as u128 * i.as_nanos() as u128 >= d as u128 * interval.as_nanos() as u128
            }
        };
        if keep {
            self.rate = Some((delivered, interval, r.app_limited));
        }
        rs
    }

    /// `tcp_rate_check_app_limited`: the application wrote while less than a segment is unsent, cwnd is
    /// not filled and no loss waits for repair (`limited`): the samples until what is in flight now
    /// (`in_flight` bytes) is delivered describe the application, not the path.
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited_until = (self.delivered + in_flight as u64).max(1);
    }

    /// `tcpi_delivery_rate`, bytes per second, and whether its sample was app-limited.
    pub fn delivery_rate(&self) -> Option<(u64, bool)> {
        let (d, i, app) = self.rate?;
        (i.as_nanos() > 0).then(|| ((d as u128 * 1_000_000_000 / i.as_nanos() as u128) as u64, app))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn ms(n: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(n)
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Four segments sent 100 µs apart; `linux` samples every ACK without timestamps, the estimator from the
    /// oldest segment it acknowledges and `ca_rtt` from the newest, where Karn's rule times one segment a
    /// round trip; a timestamp echo is not used while the send times give a sample.
    #[test]
    fn linux_samples_every_ack_from_the_send_times() {
        let iss = SeqNumber(0);
        let send_four = |p: &mut RttSampler| {
            for i in 0..4u32 {
                p.on_data_sent(iss + (i + 1) * MSS, ms(0) + us(100 * i as u64), false);
            }
        };
        let mut linux = RttSampler::new(RttSampling::Linux);
        send_four(&mut linux);
        let echo = Some(Duration::from_millis(7));
        let first = linux.on_ack_linux(iss + 2 * MSS, ms(10), echo, None);
        assert_eq!(first, Some(LinuxSample { rtt: us(10_000), ca_rtt: us(9_900) }));
        let second = linux.on_ack_linux(iss + 4 * MSS, ms(11), None, None);
        assert_eq!(second, Some(LinuxSample { rtt: us(10_800), ca_rtt: us(10_700) }));

        let mut karn = RttSampler::new(RttSampling::Auto);
        send_four(&mut karn);
        assert_eq!(karn.on_ack(iss + 2 * MSS, ms(10), None, false), Some(us(10_000)));
        assert_eq!(karn.on_ack(iss + 4 * MSS, ms(11), None, false), None, "one timed segment per round trip");
    }

    /// Karn's rule per segment: an ACK that covers a retransmitted segment takes nothing from the send
    /// times (the timestamp echo if there is one); a SACK of never-retransmitted segments gives the sample
    /// on an ACK that advances nothing, and the SACKed segments add nothing when the cumulative ACK later
    /// covers them.
    #[test]
    fn linux_skips_retransmitted_segments_and_samples_sacks() {
        let iss = SeqNumber(0);
        let mut p = RttSampler::new(RttSampling::Linux);
        for i in 0..4u32 {
            p.on_data_sent(iss + (i + 1) * MSS, ms(i as u64), false);
        }
        p.on_retransmit(iss, iss + MSS);
        let mut sacked = None;
        p.on_sack(iss + 2 * MSS, iss + 4 * MSS, &mut sacked);
        assert_eq!(sacked, Some((ms(2), ms(3))));
        assert_eq!(RttSampler::sack_sample(ms(20), sacked), Some(LinuxSample { rtt: us(18_000), ca_rtt: us(17_000) }));
        // The same block again SACKs nothing new.
        let mut again = None;
        p.on_sack(iss + 2 * MSS, iss + 4 * MSS, &mut again);
        assert_eq!(again, None);
        // The retransmission's ACK: segment 1 retransmitted, segment 2 not, 3 and 4 SACKed before.
        assert_eq!(p.on_ack_linux(iss + 4 * MSS, ms(30), None, None), None);
        let ts = Some(us(9_000));
        p.on_data_sent(iss + 5 * MSS, ms(31), false);
        p.on_retransmit(iss + 4 * MSS, iss + 5 * MSS);
        assert_eq!(
            p.on_ack_linux(iss + 5 * MSS, ms(40), ts, None),
            Some(LinuxSample { rtt: us(9_000), ca_rtt: us(9_000) })
        );
    }

    /// A sender that sends a window of 10 segments back to back at t = 0, then each ACK arrives 1 ms apart
    /// after a 100 ms RTT: the rate is what the ACK clock measures, 10 segments over ~100 ms for the
    /// first, then one segment per ms (1 MB/s) once the send interval is short.
    #[test]
    fn ack_clock_measures_the_bottleneck() {
        let mut d = DeliveryRate::default();
        let iss = SeqNumber(0);
        for i in 0..10 {
            d.on_sent(iss + i * MSS, iss + (i + 1) * MSS, ms(0), i == 0, false);
        }
        let mut rates = Vec::new();
        for i in 0..10u32 {
            d.on_cumulative_ack(iss + (i + 1) * MSS);
            let rs = d.on_ack_done(ms(100 + i as u64), (10 - i) * MSS, Some(Duration::from_millis(100)));
            assert_eq!(rs.acked_sacked, MSS as u64);
            // Each segment re-sent when acked, one per ms, keeps the pipe full.
            d.on_sent(iss + (10 + i) * MSS, iss + (11 + i) * MSS, ms(100 + i as u64), false, false);
            rates.push(rs.rate());
        }
        // The first ACK: 1 segment over 100 ms (the ACK interval from the start, send interval 0).
        assert_eq!(rates[0], Some(10_000));
        // The 10th: 10 segments delivered since t = 0 over 109 ms.
        assert_eq!(rates[9], Some(10 * MSS as u64 * 1000 / 109));
        // A segment of the second window: delivered between its send and its ACK over 100 ms.
        for i in 0..10u32 {
            d.on_cumulative_ack(iss + (11 + i) * MSS);
            let rs = d.on_ack_done(ms(200 + i as u64), 10 * MSS, Some(Duration::from_millis(100)));
            assert_eq!(rs.prior_delivered, ((i + 1) * MSS) as u64);
            // 10 segments over the send interval, which starts at the first window's send (t = 0):
            // 100 kB/s for the first, a little less for the later ones (Linux's `first_tx_mstamp`).
            assert_eq!(rs.rate(), Some(10 * MSS as u64 * 1000 / (100 + i as u64)), "ACK {i}");
        }
        assert_eq!(d.delivered(), 20 * MSS as u64);
    }

    /// SACKed data counts once, when SACKed; the cumulative ACK that later covers it adds nothing.
    #[test]
    fn sacked_bytes_are_delivered_once() {
        let mut d = DeliveryRate::default();
        let iss = SeqNumber(0);
        for i in 0..4 {
            d.on_sent(iss + i * MSS, iss + (i + 1) * MSS, ms(0), i == 0, false);
        }
        d.on_sacked(iss + MSS, iss + 3 * MSS);
        let rs = d.on_ack_done(ms(50), 4 * MSS, None);
        assert_eq!((rs.acked_sacked, d.delivered()), (2 * MSS as u64, 2 * MSS as u64));
        d.on_sent(iss, iss + MSS, ms(50), false, true);
        assert_eq!(d.lost(), MSS as u64);
        d.on_cumulative_ack(iss + 3 * MSS);
        let rs = d.on_ack_done(ms(100), 2 * MSS, None);
        assert_eq!(rs.acked_sacked, MSS as u64, "only the retransmitted head is new");
        assert_eq!(rs.losses, MSS as u64);
        assert_eq!(d.delivered(), 3 * MSS as u64);
    }

    /// Where RACK marks losses, an ACK's sample carries the losses marked while it was processed, before
    /// any retransmission leaves (Linux's `tp->lost` from `tcp_mark_skb_lost`); a retransmission adds
    /// nothing, and a paced one held for later ACKs does not move the losses onto them.
    #[test]
    fn losses_are_counted_when_marked_where_rack_marks_them() {
        let mut d = DeliveryRate { losses_at_marks: true, ..DeliveryRate::default() };
        let iss = SeqNumber(0);
        for i in 0..6 {
            d.on_sent(iss + i * MSS, iss + (i + 1) * MSS, ms(0), i == 0, false);
        }
        // The ACK SACKing the last four marks the first two lost.
        d.on_sacked(iss + 2 * MSS, iss + 6 * MSS);
        d.on_marked_lost(2 * MSS as u64);
        let rs = d.on_ack_done(ms(50), 6 * MSS, None);
        assert_eq!(rs.losses, 2 * MSS as u64, "the marking ACK carries both");
        // Their retransmissions leave after it, one of them only after the next ACK (paced).
        d.on_sent(iss, iss + MSS, ms(51), false, true);
        let rs = d.on_ack_done(ms(52), 2 * MSS, None);
        assert_eq!(rs.losses, 0, "a retransmission is no new loss");
        d.on_sent(iss + MSS, iss + 2 * MSS, ms(53), false, true);
        assert_eq!(d.lost(), 2 * MSS as u64);
        // The same retransmissions with the count at retransmission: one ACK later, one per send.
        let mut e = DeliveryRate::default();
        for i in 0..6 {
            e.on_sent(iss + i * MSS, iss + (i + 1) * MSS, ms(0), i == 0, false);
        }
        e.on_sacked(iss + 2 * MSS, iss + 6 * MSS);
        e.on_marked_lost(2 * MSS as u64);
        assert_eq!(e.on_ack_done(ms(50), 6 * MSS, None).losses, 0);
        e.on_sent(iss, iss + MSS, ms(51), false, true);
        assert_eq!(e.on_ack_done(ms(52), 2 * MSS, None).losses, MSS as u64);
    }

    /// An app-limited phase marks the samples of what is sent during it, and ends once more than what
    /// was in flight at the mark is delivered (Linux's `after(tp->delivered, tp->app_limited)`).
    #[test]
    fn app_limited_marks_until_the_flight_is_delivered() {
        let mut d = DeliveryRate::default();
        let iss = SeqNumber(0);
        d.on_sent(iss, iss + MSS, ms(0), true, false);
        d.mark_app_limited(MSS);
        d.on_sent(iss + MSS, iss + 2 * MSS, ms(1), false, false);
        d.on_cumulative_ack(iss + MSS);
        let rs = d.on_ack_done(ms(100), 2 * MSS, None);
        assert!(!rs.is_app_limited, "sent before the mark");
        assert!(d.app_limited(), "delivered 1000, not beyond the mark at 1000");
        d.on_cumulative_ack(iss + 2 * MSS);
        let rs = d.on_ack_done(ms(101), MSS, None);
        assert!(rs.is_app_limited, "sent while app-limited");
        assert!(!d.app_limited(), "delivered beyond the mark");
    }

    /// Segment `i` of MSS bytes from sequence number 0.
    fn seg(i: u32) -> (SeqNumber, SeqNumber) {
        (SeqNumber(i * MSS), SeqNumber((i + 1) * MSS))
    }

    /// Segments 0..5 sent at 0 ms, the first from idle; segment 1 SACKed (the ACK not yet done).
    fn five_sent_second_sacked() -> DeliveryRate {
        let mut d = DeliveryRate::default();
        for i in 0..5 {
            d.on_sent(seg(i).0, seg(i).1, ms(0), i == 0, false);
        }
        d.on_sacked(seg(1).0, seg(1).1);
        d
    }

    /// Two ACKs at one instant: the first releases new data (segment 5), the second SACKs more and the
    /// retransmission of the lost segment 0 goes after the new data, at the same instant. The ACK that
    /// delivers both samples the retransmission, the later transmission, whose snapshot of `delivered` is
    /// from after the second ACK (a kernel's clock, moving between the two sends, orders them so); by
    /// sequence number the new data would decide and count the second ACK's SACKed bytes again.
    #[test]
    fn a_retransmission_after_new_data_of_its_instant_is_the_newer() {
        let mut d = five_sent_second_sacked();
        d.on_ack_done(ms(50), 5 * MSS, None);
        d.on_sent(seg(5).0, seg(5).1, ms(50), false, false);
        d.on_sacked(seg(2).0, seg(4).1);
        d.on_ack_done(ms(50), 5 * MSS, None);
        d.on_sent(seg(0).0, seg(0).1, ms(50), false, true);
        d.on_cumulative_ack(seg(5).1);
        let rs = d.on_ack_done(ms(100), 2 * MSS, None);
        assert_eq!(rs.prior_delivered, 4 * MSS as u64, "the retransmission's snapshot, not segment 5's (1000)");
        assert_eq!(rs.delivered, Some(2 * MSS as u64));
        assert_eq!(rs.rate(), Some(2 * MSS as u64 * 1000 / 50));
    }

    /// `rs->rtt_us` as `tcp_ack_update_rtt`'s `ca_rtt_us`: segments 0..4 sent at 0 ms, segment 0 lost and
    /// retransmitted at 50 ms. The ACK that SACKs segment 1 times it (40 ms) though nothing new is
    /// cumulatively acknowledged; the ACK of the retransmission, which also acknowledges the SACKed
    /// segment 1 and the never-SACKed segment 2, gives no sequence RTT (Karn) and takes the timestamp
    /// echo's whole milliseconds; without an echo it gives none; a plain ACK of new data times its
    /// newest segment.
    #[test]
    fn the_rtt_of_an_ack_of_a_retransmission_is_the_timestamp_echo() {
        let mut d = five_sent_second_sacked();
        let rs = d.on_ack_done(ms(40), 5 * MSS, None);
        assert_eq!(rs.rtt, Some(Duration::from_millis(40)));
        d.on_sent(seg(0).0, seg(0).1, ms(50), false, true);
        // The receiver echoes the retransmission's TSval: 40 ms on a clock of whole ms, where the
        // sequence time of the retransmission would be 40.3.
        d.on_cumulative_ack(seg(2).1);
        d.on_ts_rtt(Duration::from_millis(40));
        let rs = d.on_ack_done(ms(90) + Duration::from_micros(300), 3 * MSS, None);
        assert_eq!(rs.rtt, Some(Duration::from_millis(40)));
        assert_eq!(rs.acked_sacked, 2 * MSS as u64, "segments 0 and 2, not the SACKed 1 again");
        // The same ACK without a timestamp echo: no RTT at all.
        let mut e = DeliveryRate::default();
        e.on_sent(seg(0).0, seg(0).1, ms(0), true, false);
        e.on_sent(seg(1).0, seg(1).1, ms(0), false, false);
        e.on_sent(seg(0).0, seg(0).1, ms(50), false, true);
        e.on_cumulative_ack(seg(1).1);
        assert_eq!(e.on_ack_done(ms(90), 2 * MSS, None).rtt, None);
        // New data acknowledged alone: its own send time, the echo not used.
        d.on_cumulative_ack(seg(3).1);
        d.on_ts_rtt(Duration::from_millis(99));
        assert_eq!(d.on_ack_done(ms(95), MSS, None).rtt, Some(Duration::from_millis(95)));
    }
}
