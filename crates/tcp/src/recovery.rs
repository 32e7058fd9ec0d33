//! Loss recovery: the sender's phase, with the state each phase carries, and the state shared by the
//! phases — the SACK scoreboard, RFC 6582's `recover`, the duplicate-ACK count, limited transmit, the
//! pending fast retransmit and the undo record.
//!
//! Read RFC 5681 §3.2 (fast retransmit and recovery), RFC 6582 §3.2 (NewReno: partial ACKs, window
//! inflation, `recover`), RFC 6675 §2–§5 (the scoreboard, IsLost, SetPipe, NextSeg, HighRxt, RecoveryPoint),
//! RFC 6937 §3 (PRR-SSRB), RFC 3042 (limited transmit), RFC 3708 §3 (D-SACK detection of a needless
//! recovery), RFC 5681 §3.1 and RFC 6298 §5 (the retransmission after a timeout).
//!
//! The connection decides *when* (it sees the ACKs and the timers, and talks to the congestion
//! controller and RACK); this module keeps *what is known* and answers the questions recovery asks: how
//! much is in flight (`pipe`), what to retransmit next (`next_seg`), how much PRR allows.

use tcplab_wire::{SackBlock, SeqNumber};

use crate::rack::Rack;
use crate::ranges::RangeSet;

/// The send sequence space as recovery needs it: SND.UNA, SND.NXT and SMSS.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snd {
    pub una: SeqNumber,
    pub nxt: SeqNumber,
    pub smss: u32,
}

/// RFC 6937 PRR state of one SACK recovery, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prr {
    /// prr_delivered: delivered to the receiver since recovery began.
    pub delivered: u64,
    /// prr_out: sent since recovery began.
    pub out: u64,
    /// RecoverFS: FlightSize when recovery began.
    pub recover_fs: u64,
    /// What the latest ACK allows to send (sndcnt, less what was sent since).
    pub allowance: u64,
}

impl Prr {
    /// The counters of a reduction that starts with RecoverFS = `recover_fs` bytes (RFC 6937: the flight;
    /// Linux: cwnd, `prior_cwnd`; the connection chooses by `prr_packets`).
    fn start(recover_fs: u32) -> Self {
        Prr { delivered: 0, out: 0, recover_fs: recover_fs as u64, allowance: 0 }
    }
}

/// The sender's recovery phase; each variant carries the state that lives only as long as it. In this
/// order, the two that retransmit (`Loss`, `Sack`) and the two whose data PRR counts (`Sack`, `Cwr`) are
/// neighbours: each question is one comparison of the tag on the per-segment path (issue 25).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Open,
    /// RFC 6582 NewReno fast recovery (or RFC 5681 Reno), without SACK: the window inflation (bytes,
    /// may go negative on deflation) and the partial ACKs seen.
    NewReno {
        inflation: i64,
        partial_acks: u32,
    },
    /// After a retransmission timeout, until `high` (SND.NXT at the timeout) is acknowledged: go-back-N
    /// retransmission from `rtx_next`, in the slow start that follows an RTO (RFC 3465 §2.3).
    Loss {
        high: SeqNumber,
        rtx_next: SeqNumber,
    },
    /// RFC 6675 SACK-based recovery until `point` (RecoveryPoint) is acknowledged. `high_rxt` is HighRxt
    /// (one past the highest byte retransmitted in this recovery), `rtx_marker` SND.NXT when the latest
    /// retransmission went (lost-retransmission detection), `prr` RFC 6937's counters.
    Sack {
        point: SeqNumber,
        high_rxt: SeqNumber,
        rtx_marker: SeqNumber,
        prr: Prr,
    },
    /// Congestion window reduced (an ECN-Echo, a full interface queue: Linux's CA_CWR) until `high` is
    /// acknowledged; cwnd does not grow meanwhile. Under `prr_cwr` the reduction is spread over the ACKs
    /// by `prr` (Linux `tcp_cwnd_reduction` in CA_CWR), else cwnd is at ssthresh from the start and the
    /// counters run unread. (Not an `Option`: in its niche the compiler kept the phase's variant, and
    /// every test of the phase on the per-segment path cost more; issue 25.)
    Cwr {
        high: SeqNumber,
        prr: Prr,
    },
}

/// A fast-recovery episode that D-SACK may still show needless (RFC 3708): its sequence range and the
/// retransmissions of it not yet reported as duplicates.
#[derive(Debug, Clone, Copy)]
struct Undo {
    start: SeqNumber,
    end: SeqNumber,
    retrans: i64,
}

/// What an ACK of new data means to the recovery phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckVerdict {
    /// Not in recovery: cwnd grows (and is validated).
    Open,
    /// NewReno's full ACK (RFC 6582 §3.2 step 3), or Reno leaving on any new ACK (RFC 5681 §3.2 step 6):
    /// fast recovery ended, the controller sets cwnd.
    FastRecoveryEnd,
    /// RFC 6582 §3.2 step 4 partial ACK: the next hole is retransmitted; the RTO restarts on the first
    /// partial ACK only ("Impatient").
    PartialAck { restart_rto: bool },
    /// In the slow start after a timeout, which grows cwnd; `ended` when this ACK covered its high mark.
    AfterTimeout { ended: bool },
    /// SACK recovery (`sack`) or CWR; `ended` when this ACK ended it.
    Reducing { sack: bool, ended: bool },
}

/// What recovery retransmits next, if anything (RFC 6675 NextSeg rule 1; go-back-N after a timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NextSeg {
    Retransmit {
        seq: SeqNumber,
        len: u32,
        fin: bool,
    },
    /// The window (or PRR) allows nothing now.
    Blocked,
    /// Nothing to retransmit: new data may go.
    None,
}

/// Loss recovery state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct Recovery {
    pub phase: Phase,
    /// RFC 6582 `recover`: HighData when the last recovery or timeout began.
    pub recover: SeqNumber,
    /// Duplicate ACKs since the last ACK of new data.
    pub dupacks: u32,
    /// Bytes of the segments sent beyond cwnd on duplicate ACKs by RFC 3042 limited transmit since the
    /// last ACK of new data: RFC 5681 §3.2 step 2 leaves them out of the FlightSize that sets ssthresh.
    pub limited_sent: u32,
    /// SACK scoreboard: SACKed ranges above SND.UNA (RFC 6675 §3).
    pub scoreboard: RangeSet,
    /// The first unacknowledged segment is to be retransmitted regardless of cwnd (RFC 5681 §3.2 step 3,
    /// RFC 6582 partial ACKs).
    pub retransmit_head: bool,
    undo: Option<Undo>,
    /// RFC 6675 DupThresh (`dupthresh`).
    dupthresh: u32,
    /// F-RTO (RFC 5682 §3 as Linux runs it, `tp->frto`): the current timeout may still prove spurious.
    frto: bool,
    /// One past the highest byte retransmitted since the timeout: above it, what is acknowledged went
    /// only once (Linux's `FLAG_ORIG_SACK_ACKED` test of `TCPCB_RETRANS`).
    rtx_end: SeqNumber,
    /// F-RTO step 2.b on the latest ACK: new data goes before any retransmission (Linux `REXMIT_NEW`).
    pub frto_send_new: bool,
}

/// What F-RTO makes of an ACK that advanced SND.UNA after a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrtoVerdict {
    /// Nothing F-RTO decides: conventional recovery goes on.
    None,
    /// Never-retransmitted data was acknowledged: the timeout was spurious, recovery is over (RFC 5682
    /// §3.1 step 3.b); the caller undoes the congestion response.
    Spurious,
}

impl Recovery {
    pub fn new(iss: SeqNumber, dupthresh: u32) -> Self {
        Recovery {
            phase: Phase::Open,
            recover: iss,
            dupacks: 0,
            limited_sent: 0,
            scoreboard: RangeSet::default(),
            retransmit_head: false,
            undo: None,
            dupthresh,
            frto: false,
            rtx_end: iss,
            frto_send_new: false,
        }
    }

    #[inline]
    pub fn is_open(&self) -> bool {
        self.phase == Phase::Open
    }
    /// A fast recovery starting now finds the window reduced already: a CWR reduction (an ECN-Echo, a local
    /// congestion signal) is under way, within the window of data outstanding when it began. RFC 3168
    /// §6.1.2: ssthresh SHOULD NOT be decreased again within a round trip; Linux (2.4's
    /// `tcp_fastretrans_alert`, 6.x `tcp_enter_recovery`) recalculates ssthresh only below CA_CWR.
    #[inline]
    pub fn reduced_already(&self) -> bool {
        matches!(self.phase, Phase::Cwr { .. })
    }
    /// Open or CWR: no loss recovery under way (a TLP may be sent, RACK may start a recovery).
    #[inline]
    pub fn open_or_cwr(&self) -> bool {
        matches!(self.phase, Phase::Open | Phase::Cwr { .. })
    }
    #[inline]
    pub fn in_sack_recovery(&self) -> bool {
        matches!(self.phase, Phase::Sack { .. })
    }
    /// In the slow start that follows a retransmission timeout (RFC 3465 §2.3: L = 1 SMSS).
    #[inline]
    pub fn after_rto(&self) -> bool {
        matches!(self.phase, Phase::Loss { .. })
    }
    /// RFC 6582 §3.2 step 1: a new recovery may start only once the ACK covers more than `recover`.
    #[inline]
    pub fn may_enter(&self, una: SeqNumber) -> bool {
        una.diff(self.recover) > 0
    }
    /// RFC 6937 prr_delivered of the current SACK recovery (0 outside one).
    #[cfg(test)]
    pub fn prr_delivered(&self) -> u64 {
        match self.phase {
            Phase::Sack { prr, .. } => prr.delivered,
            _ => 0,
        }
    }

    /// The cumulative ACK moved SND.UNA to `ack`: the scoreboard, HighRxt and the go-back-N pointer
    /// follow it, the duplicate-ACK count and limited transmit start again.
    pub fn on_cumulative_ack(&mut self, ack: SeqNumber) {
        self.scoreboard.trim_below(ack);
        match &mut self.phase {
            Phase::Loss { rtx_next, .. } if *rtx_next < ack => *rtx_next = ack,
            Phase::Sack { high_rxt, .. } if *high_rxt < ack => *high_rxt = ack,
            _ => {}
        }
        self.dupacks = 0;
        self.limited_sent = 0;
        // Keep `recover` within 2^31 of SND.UNA so the RFC 6582 comparison stays meaningful across
        // gigabytes: once the ACK covers it, recover = SND.UNA - 1 means the same.
        if self.phase == Phase::Open && ack.diff(self.recover) > 0 {
            self.recover = ack + u32::MAX;
        }
    }

    /// The phase's response to an ACK of new data up to `ack` (after `on_cumulative_ack`), `acked` data
    /// bytes of it; `reno` is RFC 5681 Reno (any new ACK ends fast recovery).
    pub fn on_new_ack(&mut self, ack: SeqNumber, acked: u32, smss: u32, reno: bool) -> AckVerdict {
        match &mut self.phase {
            Phase::Open => AckVerdict::Open,
            Phase::NewReno { inflation, partial_acks } => {
                if ack.diff(self.recover) > 0 || reno {
                    self.phase = Phase::Open;
                    AckVerdict::FastRecoveryEnd
                } else {
                    // Deflate by the amount acknowledged, add back one SMSS if a full segment was.
                    self.retransmit_head = true;
                    *inflation -= acked as i64;
                    if acked >= smss {
                        *inflation += smss as i64;
                    }
                    *partial_acks += 1;
                    AckVerdict::PartialAck { restart_rto: *partial_acks == 1 }
                }
            }
            Phase::Sack { point, .. } => {
                let ended = ack >= *point;
                if ended {
                    self.phase = Phase::Open;
                }
                AckVerdict::Reducing { sack: true, ended }
            }
            Phase::Loss { high, .. } => {
                let ended = ack >= *high;
                if ended {
                    self.phase = Phase::Open;
                }
                AckVerdict::AfterTimeout { ended }
            }
            Phase::Cwr { high, .. } => {
                let ended = ack >= *high;
                if ended {
                    self.phase = Phase::Open;
                }
                AckVerdict::Reducing { sack: false, ended }
            }
        }
    }

    /// A duplicate ACK (RFC 5681 §2, RFC 6675 §2). Returns true when it starts fast recovery: DupThresh
    /// of them, or (with SACK) the head IsLost. With RACK, recovery starts when RACK marks a segment
    /// lost instead. In NewReno recovery it inflates the window (RFC 6582 §3.2 step 4).
    pub fn on_dup_ack(&mut self, una: SeqNumber, smss: u32, sack: bool, rack: bool) -> bool {
        self.dupacks += 1;
        match &mut self.phase {
            Phase::Open | Phase::Cwr { .. } if !rack => {
                let lost_head = sack && self.lost_below(smss).is_some_and(|l| l > una);
                self.may_enter(una) && (self.dupacks >= self.dupthresh || lost_head)
            }
            Phase::NewReno { inflation, .. } => {
                *inflation += smss as i64;
                false
            }
            _ => false,
        }
    }

    /// Fast retransmit: recovery starts (RFC 5681 §3.2, RFC 6582 §3.2, RFC 6675 §5). SACK recovery
    /// until everything now outstanding is acknowledged, else NewReno with the window inflated by the
    /// three segments that left the network. RFC 5681 §3.2 step 3 retransmits the first unacknowledged
    /// segment; with RACK the first retransmission is of what RACK found lost, which need not be the head.
    /// From a CWR reduction the window is not reduced again ([`Recovery::reduced_already`]): nothing to
    /// undo, and when PRR ran that reduction (`prr_cwr`) it goes on with its counters (Linux
    /// `tcp_enter_recovery` calls `tcp_init_cwnd_reduction` only below CA_CWR); counters that did not
    /// govern it (their `delivered` never fed) start afresh.
    pub fn enter_fast_recovery(&mut self, s: Snd, sack: bool, rack: bool, prr_cwr: bool, recover_fs: u32) {
        let from_cwr = self.reduced_already();
        let carried = match self.phase {
            Phase::Cwr { prr, .. } if prr_cwr => Some(prr),
            _ => None,
        };
        self.undo = (!from_cwr).then_some(Undo { start: s.una, end: s.nxt, retrans: 0 });
        self.recover = s.nxt + u32::MAX; // HighData
        self.limited_sent = 0;
        self.retransmit_head = !rack;
        self.phase = if sack {
            let prr = carried.unwrap_or(Prr::start(recover_fs));
            Phase::Sack { point: s.nxt, high_rxt: s.una, rtx_marker: s.nxt, prr }
        } else {
            Phase::NewReno { inflation: 3 * s.smss as i64, partial_acks: 0 }
        };
    }

    /// A retransmission timeout (RFC 6298 (5.4)–(5.6)): go-back-N from SND.UNA. RFC 6675 §5.1 and
    /// RFC 2018 §8 say the receiver may have reneged, so old SACK state is not trusted unless
    /// `keep_sack` (Linux keeps it). With `frto` the timeout may be found spurious later
    /// ([`Recovery::frto_on_ack`]); no Eifel (timestamp) undo here.
    pub fn on_timeout(&mut self, s: Snd, keep_sack: bool, frto: bool) {
        self.phase = Phase::Loss { high: s.nxt, rtx_next: s.una };
        self.frto = frto;
        self.rtx_end = s.una;
        self.frto_send_new = false;
        self.undo = None;
        self.recover = s.nxt + u32::MAX; // HighData = SND.NXT - 1
        self.dupacks = 0;
        self.limited_sent = 0;
        self.retransmit_head = false;
        if !keep_sack {
            self.scoreboard.clear();
        }
    }

    /// A window reduction (an ECN-Echo, or the interface refused a segment under `ifq_full = "cwr"`) until
    /// SND.NXT is acknowledged, with PRR's counters from RecoverFS = `recover_fs` (they govern what is sent
    /// only under `prr_cwr`: [`Recovery::prr_allowance`]).
    pub fn enter_cwr(&mut self, s: Snd, recover_fs: u32) {
        self.phase = Phase::Cwr { high: s.nxt, prr: Prr::start(recover_fs) };
    }

    /// A segment `[seq, end)` was retransmitted (SND.NXT `nxt`): HighRxt or the go-back-N pointer moves
    /// past it; a retransmission of the head satisfies a pending fast retransmit.
    pub fn on_retransmit_sent(&mut self, seq: SeqNumber, end: SeqNumber, s: Snd, data: bool) {
        if seq == s.una {
            self.retransmit_head = false;
        }
        match &mut self.phase {
            Phase::Loss { rtx_next, .. } => {
                *rtx_next = (*rtx_next).max(end);
                self.rtx_end = self.rtx_end.max(end);
            }
            Phase::Sack { high_rxt, rtx_marker, .. } => {
                *high_rxt = (*high_rxt).max(end);
                *rtx_marker = s.nxt;
            }
            _ => {}
        }
        if let Some(u) = self.undo.as_mut().filter(|_| data) {
            u.retrans += 1;
        }
    }

    /// SACKed bytes of the data that went only once in an F-RTO episode: above everything retransmitted
    /// since the timeout and at or below the timeout's SND.NXT. Asked before and after an ACK's SACK
    /// blocks are applied, it tells whether the ACK SACKed such data (see [`Recovery::frto_on_ack`]).
    pub fn frto_orig_sacked(&self, una: SeqNumber) -> u32 {
        match self.phase {
            Phase::Loss { high, .. } if self.frto => {
                let from = self.rtx_end.max(una);
                if high > from {
                    self.scoreboard.bytes_within(from, high)
                } else {
                    0
                }
            }
            _ => 0,
        }
    }

    /// F-RTO (RFC 5682 §3.1, SACK-enhanced, as Linux's `tcp_process_loss`) on an ACK after a timeout,
    /// after its SACK blocks and before its cumulative part are applied: `ack` > SND.UNA when it
    /// advanced SND.UNA, `dupack` when it is a duplicate, `sacked` when it SACKed new data,
    /// `orig_sacked_before` [`Recovery::frto_orig_sacked`] before its SACK blocks, `can_send_new` when
    /// unsent data fits the peer's window. Step 3.b: an ACK that acknowledges or SACKs data that never
    /// went twice (above everything retransmitted since the timeout, at or below the timeout's SND.NXT,
    /// and not SACKed before) shows the timeout spurious: Linux's `FLAG_ORIG_SACK_ACKED`, which
    /// `tcp_clean_rtx_queue` sets for such data cumulatively acknowledged and `tcp_sacktag_one` for such
    /// data newly SACKed. Step 3.a: once new data went, a duplicate or SACKing ACK means the loss was
    /// real. Step 2.b: the first ACK advancing SND.UNA below the timeout's SND.NXT sends new data
    /// instead of retransmitting, if there is any to send; else (and step 2.a) conventional recovery.
    pub fn frto_on_ack(
        &mut self,
        s: Snd,
        ack: SeqNumber,
        dupack: bool,
        sacked: bool,
        orig_sacked_before: u32,
        can_send_new: bool,
    ) -> FrtoVerdict {
        self.frto_send_new = false;
        let Phase::Loss { high, .. } = self.phase else { return FrtoVerdict::None };
        if !self.frto {
            return FrtoVerdict::None;
        }
        let advanced = ack > s.una;
        let orig_end = ack.min(high);
        let orig_from = self.rtx_end.max(s.una);
        let orig_acked = advanced
            && orig_end > orig_from
            && self.scoreboard.bytes_within(orig_from, orig_end) < orig_end - orig_from;
        let orig_sacked = self.frto_orig_sacked(s.una) > orig_sacked_before;
        if orig_acked || orig_sacked {
            self.frto = false;
            self.phase = Phase::Open;
            self.undo = None;
            return FrtoVerdict::Spurious;
        }
        if s.nxt > high {
            if sacked || dupack {
                self.frto = false;
            }
        } else if advanced && ack < high {
            if can_send_new {
                self.frto_send_new = true;
            } else {
                self.frto = false;
            }
        }
        FrtoVerdict::None
    }

    /// `len` payload bytes left (new or retransmitted): PRR counts them (RFC 6937 prr_out).
    #[inline]
    pub fn on_payload_sent(&mut self, len: u32) {
        if let Phase::Sack { prr, .. } | Phase::Cwr { prr, .. } = &mut self.phase {
            prr.out += len as u64;
            prr.allowance = prr.allowance.saturating_sub(len as u64);
        }
    }

    /// RFC 3708 §3: a D-SACK for data retransmitted in the current fast-recovery episode shows that
    /// retransmission was unnecessary. Returns true when every one of them has been reported so: the
    /// congestion response is to be undone (Linux `tcp_try_undo_dsack`).
    pub fn on_dsack(&mut self, b: SackBlock, smss: u32) -> bool {
        let Some(u) = self.undo.as_mut() else { return false };
        if b.left < u.start || b.right > u.end {
            return false;
        }
        u.retrans -= (b.right - b.left).div_ceil(smss.max(1)) as i64;
        if u.retrans <= 0 {
            self.undo = None;
            return true;
        }
        false
    }

    /// RFC 6675 IsLost as a boundary: every unSACKed byte below the returned sequence number is lost
    /// (DupThresh SACKed blocks, or more than (DupThresh − 1)·SMSS SACKed bytes, lie above it).
    pub fn lost_below(&self, smss: u32) -> Option<SeqNumber> {
        let mut bytes = 0u64;
        let limit = (self.dupthresh as u64 - 1) * smss as u64;
        for (n, (s, e)) in self.scoreboard.iter().rev().enumerate() {
            bytes += (e - s) as u64;
            if n as u32 + 1 >= self.dupthresh || bytes > limit {
                return Some(s);
            }
        }
        None
    }

    /// RFC 6675 SetPipe: unSACKed bytes not presumed lost, plus retransmitted unSACKed bytes below
    /// `high_rxt`.
    fn set_pipe(&self, s: Snd, high_rxt: SeqNumber) -> u32 {
        let unsacked =
            |a: SeqNumber, b: SeqNumber| if b > a { (b - a) - self.scoreboard.bytes_within(a, b) } else { 0 };
        let lost = self.lost_below(s.smss).unwrap_or(s.una).max(s.una);
        unsacked(lost, s.nxt) + unsacked(s.una, high_rxt.min(s.nxt))
    }

    /// The pipe of a SACK recovery: RACK's marks when RACK runs (`rack`), else RFC 6675 SetPipe.
    #[inline(never)]
    fn sack_recovery_pipe(&self, s: Snd, high_rxt: SeqNumber, rack: Option<&Rack>) -> u32 {
        match rack {
            Some(rack) => rack.pipe(),
            None => self.set_pipe(s, high_rxt),
        }
    }

    /// Bytes in flight by the rule of the current phase; `rack` gives RACK's state when RACK runs (asked
    /// only in SACK recovery).
    #[inline]
    pub fn pipe<'a>(&self, s: Snd, rack: impl FnOnce() -> Option<&'a Rack>) -> u32 {
        match self.phase {
            Phase::Sack { high_rxt, .. } => self.sack_recovery_pipe(s, high_rxt, rack()),
            Phase::Loss { high, rtx_next } => {
                let rtx = if rtx_next > s.una { rtx_next - s.una } else { 0 };
                let sacked = self.scoreboard.bytes_within(s.una, rtx_next.max(s.una));
                rtx - sacked + (s.nxt - high)
            }
            // Outside recovery the RFC 5681 FlightSize; limited transmit (RFC 3042) is the only allowance
            // for duplicate ACKs, SACKed or not.
            _ => s.nxt - s.una,
        }
    }

    /// The window the sender may fill: cwnd, NewReno's inflation, and RFC 3042 limited transmit.
    #[inline]
    pub fn send_window(&self, cwnd: u32, smss: u32, limited_transmit: bool) -> u32 {
        let cwnd = cwnd as i64;
        let w = match self.phase {
            Phase::NewReno { inflation, .. } => cwnd + inflation,
            Phase::Open if limited_transmit && self.dupacks > 0 => cwnd + self.dupacks.min(2) as i64 * smss as i64,
            _ => cwnd,
        };
        w.max(smss as i64) as u32
    }

    /// What PRR allows to send now, when PRR runs this SACK recovery (`prr`) or this CWR reduction
    /// (`prr_cwr`); `None` otherwise.
    #[inline]
    pub fn prr_allowance(&self, prr: bool, prr_cwr: bool) -> Option<u64> {
        match self.phase {
            Phase::Sack { prr: p, .. } if prr => Some(p.allowance),
            Phase::Cwr { prr: p, .. } if prr_cwr => Some(p.allowance),
            _ => None,
        }
    }

    /// RFC 6937 §3 (PRR-SSRB): how much may be sent in response to an ACK that delivered `delivered`
    /// bytes, with the recovery's pipe (RACK's marks when RACK runs, else RFC 6675's, as `pipe`
    /// computes it). `extra`: whether the slow-start reduction bound adds its SMSS on this ACK (always
    /// under RFC 6937; see `prr_ssrb_advance_only`). In SACK recovery, and in a CWR reduction (the
    /// caller's under `prr_cwr`), where Linux's `tcp_cwnd_reduction` also lets one segment go on every ACK
    /// that delivers something until one has gone (its "force a fast retransmit", which in CA_CWR is new
    /// data) and an ACK that delivers nothing changes nothing.
    /// With `packets` (`prr_packets`) every quantity is counted in segments of SMSS as Linux counts them in
    /// packets (byte counts rounded up, ssthresh down), and the result is whole segments.
    pub fn prr_on_ack(&mut self, delivered: u64, s: Snd, ssthresh: u32, pipe: u32, extra: bool, packets: bool) {
        let (p, cwr) = match &mut self.phase {
            Phase::Sack { prr, .. } => (prr, false),
            Phase::Cwr { prr, .. } if delivered > 0 => (prr, true),
            _ => return,
        };
        let delivered_total = p.delivered + delivered;
        // In units of `unit` bytes: 1 (RFC 6937) or SMSS (Linux).
        let unit = if packets { s.smss.max(1) as u64 } else { 1 };
        let count = |bytes: u64| bytes.div_ceil(unit);
        let (pipe, ssthresh) = (count(pipe as u64), ssthresh as u64 / unit);
        let (total, out, now) = (count(delivered_total), count(p.out), count(delivered));
        let mut sndcnt = unit as i64
            * if pipe > ssthresh {
                // Proportional part: spread the reduction over the recovery, ceil(delivered · ssthresh / RecoverFS).
                ((total * ssthresh).div_ceil(count(p.recover_fs).max(1))) as i64 - out as i64
            } else {
                // Slow-start reduction bound: grow back toward ssthresh no faster than slow start.
                let extra = if extra { s.smss as u64 / unit } else { 0 };
                let limit = (total as i64 - out as i64).max(now as i64) + extra as i64;
                (ssthresh as i64 - pipe as i64).min(limit)
            };
        if cwr && p.out == 0 {
            sndcnt = sndcnt.max(s.smss as i64);
        }
        p.delivered = delivered_total;
        p.allowance = sndcnt.max(0) as u64;
    }

    /// Lost retransmissions (Linux `tcp_mark_lost_retrans`, before RACK): once DupThresh segments sent
    /// after the latest retransmission are SACKed while retransmitted bytes are still missing, those
    /// retransmissions were lost, and NextSeg starts again from SND.UNA. Only in SACK recovery.
    pub fn detect_lost_retransmissions(&mut self, s: Snd) {
        let Phase::Sack { high_rxt, rtx_marker, .. } = &mut self.phase else { return };
        let beyond = (*rtx_marker).max(s.una);
        let sacked_after = self.scoreboard.bytes_within(beyond, s.nxt);
        let missing = *high_rxt > s.una && self.scoreboard.bytes_within(s.una, *high_rxt) < *high_rxt - s.una;
        if missing && sacked_after as u64 >= self.dupthresh as u64 * s.smss as u64 {
            *high_rxt = s.una;
            *rtx_marker = s.nxt;
        }
    }

    /// The pending fast retransmit of the head: its length and FIN, or `None` when nothing is left to
    /// retransmit (`fin_seq` is the end of written data, the FIN's number once queued).
    #[inline]
    pub fn head_retransmit(&self, s: Snd, fin_seq: SeqNumber, fin_queued: bool) -> Option<(u32, bool)> {
        let len = (s.nxt - s.una).min(s.smss).min(fin_seq.diff(s.una).max(0) as u32);
        let fin = fin_queued && s.una + len == fin_seq && s.nxt == fin_seq + 1;
        (len > 0 || fin).then_some((len, fin))
    }

    /// Whether the phase retransmits by its own rule ([`Recovery::next_seg`]): SACK recovery or the
    /// go-back-N after a timeout.
    #[inline]
    pub fn retransmits(&self) -> bool {
        matches!(self.phase, Phase::Loss { .. } | Phase::Sack { .. })
    }

    /// What the phase retransmits next (a pure choice: nothing changes until the segment is sent).
    /// `cwnd` is the send window and `pipe` the phase's pipe; `prr` whether PRR runs; `rack` RACK's state
    /// when RACK runs.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn next_seg(
        &self,
        s: Snd,
        fin_seq: SeqNumber,
        fin_queued: bool,
        cwnd: u32,
        pipe: u32,
        prr: bool,
        rack: Option<&Rack>,
    ) -> NextSeg {
        match self.phase {
            // F-RTO step 2.b: this ACK sends new data, not retransmissions.
            Phase::Loss { .. } if self.frto_send_new => NextSeg::None,
            Phase::Loss { high, rtx_next } => {
                // Go-back-N from the pointer, skipping what the receiver holds.
                let mut seq = rtx_next.max(s.una);
                while let Some((_, e)) = self.scoreboard.containing(seq) {
                    seq = e;
                }
                if seq >= high {
                    return NextSeg::None;
                }
                let data_end = high.min(fin_seq);
                let mut len = if data_end > seq { (data_end - seq).min(s.smss) } else { 0 };
                if let Some((next_sacked, _)) = self.scoreboard.iter().find(|r| r.0 > seq) {
                    len = len.min(next_sacked - seq);
                }
                let fin = fin_queued && seq + len == fin_seq && high == fin_seq + 1;
                if (len > 0 || fin) && pipe as u64 + len.max(1) as u64 <= cwnd as u64 {
                    return NextSeg::Retransmit { seq, len, fin };
                }
                NextSeg::Blocked
            }
            Phase::Sack { high_rxt, prr: p, .. } => {
                let blocked = if prr { p.allowance < s.smss as u64 } else { pipe as u64 + s.smss as u64 > cwnd as u64 };
                // With RACK the fast retransmit is the first lost segment, sent whatever the window
                // says, as the head is under RFC 5681 §3.2 step 3 (Linux: PRR's sndcnt is at least 1
                // while nothing was sent in the recovery).
                let fast_retransmit = rack.is_some() && p.out == 0;
                if blocked && !fast_retransmit {
                    return NextSeg::Blocked;
                }
                if let Some(rack) = rack {
                    // NextSeg rule (1) with RACK's verdict as IsLost (RFC 8985 §6.2 step 5, §8).
                    if let Some((seq, e)) = rack.next_lost() {
                        let data_end = e.min(fin_seq);
                        let len = if data_end > seq { (data_end - seq).min(s.smss) } else { 0 };
                        let fin = fin_queued && e == fin_seq + 1 && seq + len == fin_seq;
                        return NextSeg::Retransmit { seq, len, fin };
                    }
                    if blocked {
                        return NextSeg::Blocked;
                    }
                } else if let Some(lost) = self.lost_below(s.smss) {
                    // NextSeg rule (1): the first unSACKed byte at or above HighRxt that IsLost.
                    let mut seq = high_rxt.max(s.una);
                    while let Some((_, e)) = self.scoreboard.containing(seq) {
                        seq = e;
                    }
                    if seq < lost {
                        let next_sacked = self.scoreboard.iter().find(|r| r.0 > seq).map(|r| r.0).unwrap_or(lost);
                        let len = (next_sacked.min(lost) - seq).min(s.smss);
                        if len > 0 {
                            return NextSeg::Retransmit { seq, len, fin: false };
                        }
                    }
                }
                NextSeg::None
            }
            _ => NextSeg::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PRR's share in packets (`prr_packets`, Linux's `tcp_cwnd_reduction`) against bytes (RFC 6937): an
    /// ACK delivering 2 of a 10-segment RecoverFS toward ssthresh 7 lets ceil(1.4) = 2 segments go where
    /// bytes let 1,400 (one segment, 400 carried); the next ACK of one segment then lets one more go under
    /// both (ceil(2.1) − 2 = 1; 2,100 − 1,000 bytes sent).
    #[test]
    fn prr_in_packets_rounds_the_share_up_to_a_segment() {
        let s = Snd { una: SeqNumber(2000), nxt: SeqNumber(10000), smss: 1000 };
        for (packets, first, second) in [(true, 2000, 1000), (false, 1400, 1100)] {
            let mut r = Recovery::new(SeqNumber(0), 3);
            r.enter_cwr(s, 10000);
            r.prr_on_ack(2000, s, 7000, 8000, true, packets);
            assert_eq!(r.prr_allowance(true, true), Some(first), "packets {packets}");
            r.on_payload_sent(1000);
            if packets {
                r.on_payload_sent(1000);
            }
            let s = Snd { una: SeqNumber(3000), nxt: SeqNumber(if packets { 12000 } else { 11000 }), ..s };
            let pipe = s.nxt - s.una;
            r.prr_on_ack(1000, s, 7000, pipe, true, packets);
            assert_eq!(r.prr_allowance(true, true), Some(second), "packets {packets}");
        }
    }

    /// A fast recovery entered from a CWR reduction keeps that reduction's PRR counters only when PRR ran
    /// it (`prr_cwr`): counters that only counted sends, never deliveries, would hold the recovery's
    /// sending back by everything sent during the reduction.
    #[test]
    fn recovery_from_cwr_carries_prr_counters_only_when_they_governed() {
        let s = Snd { una: SeqNumber(1000), nxt: SeqNumber(11000), smss: 1000 };
        for (prr_cwr, carried_out) in [(true, 2000), (false, 0)] {
            let mut r = Recovery::new(SeqNumber(0), 3);
            r.enter_cwr(s, 10000);
            r.on_payload_sent(1000);
            r.on_payload_sent(1000);
            r.enter_fast_recovery(Snd { nxt: SeqNumber(13000), ..s }, true, true, prr_cwr, 12000);
            let Phase::Sack { prr, .. } = r.phase else { panic!("SACK recovery: {:?}", r.phase) };
            assert_eq!(prr.out, carried_out, "prr_cwr {prr_cwr}");
            assert_eq!(prr.recover_fs, if prr_cwr { 10000 } else { 12000 });
            assert!(r.undo.is_none(), "nothing to undo from a CWR reduction");
        }
    }
}
