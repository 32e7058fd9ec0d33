//! The congestion window as the connection uses it: the congestion controller (which owns cwnd and
//! ssthresh and decides every increase and multiplicative decrease) wrapped with the reductions it does
//! not decide — congestion window validation (RFC 2861 §3, RFC 7661, Linux's
//! `tcp_cwnd_application_limited`), Linux 2.4's cwnd moderation, the restart after idle (RFC 5681 §4.1)
//! and the initial window. [`Cwnd`] is the one caller of the controller's `set_window` and
//! `set_ssthresh`.
//!
//! Read RFC 2861 §3 (decay while application-limited, no growth while not cwnd-limited), RFC 7661 §4
//! (pipeACK, the non-validated phase and its loss response), RFC 5681 §4.1.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};
use tcplab_wire::SeqNumber;

use crate::config::{CwndUnit, Cwv, TcpConfig};
use crate::congestion::{
    AckContext, AckInfo, CongestionControl, CongestionEvent, Controller, Growth, ModelStats, RateSample, SlowStartExit,
};

/// RFC 7661 state: bytes ACKed in the current RTT and since when; the largest per-RTT sample in the
/// current and the previous sampling period; when that period began; since when the phase is
/// non-validated.
#[derive(Debug, Clone, Copy)]
struct NewCwv {
    acked: u64,
    rtt_start: Instant,
    cur: u64,
    prev: u64,
    period_start: Instant,
    nvp_since: Option<Instant>,
}

/// Which validation runs (`cwv`), with its state.
#[derive(Debug, Clone, Copy)]
enum Validation {
    Off,
    /// RFC 2861 §3, or Linux's variant of it (`linux`, and 2.4's with `linux24`): the largest flight
    /// used since `stamp`.
    Rfc2861 {
        linux: bool,
        linux24: bool,
        used: u32,
        stamp: Instant,
    },
    Rfc7661(NewCwv),
}

/// The controller and the window reductions it does not decide.
pub(crate) struct Cwnd {
    cc: Controller,
    /// The controller's cwnd as of its last call: the send path asks for it several times an ACK, and
    /// `window()` is a dispatch on the algorithm each time. Every call that may change it refreshes it.
    window: u32,
    validation: Validation,
    /// cwnd counts whole segments (`cwnd_unit = "packets"`).
    packets: bool,
    /// With `packets`: the segments sent as new data and not yet wholly acknowledged, by the sequence
    /// number that ends each (Linux `packets_out`: a partly acknowledged skb stays on the retransmission
    /// queue, `tcp_clean_rtx_queue`). Empty otherwise.
    packets_out: VecDeque<SeqNumber>,
    /// Linux 2.4 `tcp_cwnd_down`'s count of ACKs in CWR (its `snd_cwnd_cnt`): a segment per two.
    cwr_acks: u8,
    /// The controller owns the window (asked once: the send path tests it on every call).
    owns: bool,
    /// PRR applies: `prr`, unless the controller owns the window (Linux's `cong_control` skips
    /// `tcp_cwnd_reduction`).
    prr: bool,
}

impl Cwnd {
    /// The controller `cfg` asks for (`TcpConfig::controller_factory`), at its initial window for SMSS
    /// `smss`, its random stream seeded with `seed`.
    pub fn new(cfg: &TcpConfig, smss: u32, seed: u64) -> Self {
        let validation = match cfg.cwv {
            Cwv::Off => Validation::Off,
            Cwv::Rfc2861 | Cwv::Linux | Cwv::Linux24 => Validation::Rfc2861 {
                linux: cfg.cwv != Cwv::Rfc2861,
                linux24: cfg.cwv == Cwv::Linux24,
                used: 0,
                stamp: Instant::ZERO,
            },
            Cwv::Rfc7661 => Validation::Rfc7661(NewCwv {
                acked: 0,
                rtt_start: Instant::ZERO,
                cur: 0,
                prev: 0,
                period_start: Instant::ZERO,
                nvp_since: None,
            }),
        };
        let cc = cfg.controller_factory().build(cfg.initial_window.bytes(smss), smss, seed);
        Cwnd {
            window: cc.window(),
            owns: cc.owns_window(),
            prr: cfg.prr && !cc.owns_window(),
            cc,
            validation,
            packets: cfg.cwnd_unit == CwndUnit::Packets,
            packets_out: VecDeque::new(),
            cwr_acks: 0,
        }
    }

    /// The controller sets cwnd on every ACK itself (BBR; Linux `cong_control`).
    #[inline]
    pub fn owns_window(&self) -> bool {
        self.owns
    }
    /// Whether PRR applies (see the field).
    #[inline]
    pub fn prr(&self) -> bool {
        self.prr
    }
    pub fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, cx: &AckContext) {
        self.cc.on_rate_sample(now, rs, cx);
        self.refresh();
    }
    pub fn on_tx_start(&mut self, now: Instant, app_limited: bool) {
        self.cc.on_tx_start(now, app_limited);
        self.refresh();
    }
    pub fn on_idle_restart(&mut self, now: Instant, last_sent: Instant) {
        self.cc.on_idle_restart(now, last_sent);
    }
    pub fn pacing_rate(&self) -> Option<u64> {
        self.cc.pacing_rate()
    }
    pub fn marks_app_limited(&self) -> bool {
        self.cc.marks_app_limited()
    }
    pub fn model(&self) -> Option<ModelStats> {
        self.cc.model()
    }
    pub fn set_random_seed(&mut self, seed: u64) {
        self.cc.set_random_seed(seed);
    }

    /// Sets cwnd (the controller may bound it).
    #[inline]
    fn set_window(&mut self, cwnd: u32) {
        self.cc.set_window(cwnd);
        self.refresh();
    }

    /// After a call into the controller that may have changed cwnd.
    #[inline]
    fn refresh(&mut self) {
        self.window = self.cc.window();
    }

    /// Whether cwnd counts packets (`cwnd_unit = "packets"`).
    #[inline]
    pub fn counts_packets(&self) -> bool {
        self.packets
    }

    /// New data `[start, end)` left as one segment (counted only when cwnd counts packets).
    #[inline]
    pub fn on_segment_sent(&mut self, end: SeqNumber) {
        if self.packets {
            self.packets_out.push_back(end);
        }
    }

    /// SND.UNA moved to `una`: the segments it wholly covers leave the count.
    #[inline]
    pub fn on_cumulative_ack(&mut self, una: SeqNumber) {
        while self.packets_out.front().is_some_and(|&end| end <= una) {
            self.packets_out.pop_front();
        }
    }

    /// Segments of new data in flight (Linux `packets_out`), when cwnd counts packets.
    #[inline]
    pub fn packets_out(&self) -> u32 {
        self.packets_out.len() as u32
    }

    #[inline]
    pub fn window(&self) -> u32 {
        debug_assert_eq!(self.window, self.cc.window(), "cwnd changed without a refresh");
        self.window
    }
    #[inline]
    pub fn ssthresh(&self) -> u32 {
        self.cc.ssthresh()
    }

    /// The initial window, once the handshake has fixed SMSS (RFC 5681 §3.1).
    pub fn set_initial(&mut self, iw: u32) {
        self.set_window(iw);
    }

    /// An ACK of new data the controller may grow cwnd on (see [`Cwnd::growth_allowed`]): `acked` bytes,
    /// SMSS, whether slow start follows an RTO; `info` builds the rest for controllers other than Reno
    /// ([`Controller::on_ack_with`]).
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: Instant,
        acked: u32,
        smss: u32,
        after_rto: bool,
        info: impl FnOnce() -> AckInfo,
    ) -> Growth {
        let growth = self.cc.on_ack_with(now, acked, smss, after_rto, info);
        self.refresh();
        growth
    }
    #[inline]
    pub fn take_slow_start_exit(&mut self) -> Option<SlowStartExit> {
        self.cc.take_slow_start_exit()
    }
    pub fn on_congestion_event(&mut self, now: Instant, event: CongestionEvent, flight_size: u32, smss: u32) {
        self.cc.on_congestion_event(now, event, flight_size, smss);
        self.refresh();
    }
    pub fn on_recovery_exit(&mut self, now: Instant, flight_size: u32, smss: u32) {
        self.cc.on_recovery_exit(now, flight_size, smss);
        self.refresh();
    }
    pub fn on_spurious_congestion_event(&mut self) {
        self.cc.on_spurious_congestion_event();
        self.refresh();
    }

    /// Whether an ACK may grow cwnd: RFC 2861 §3 (and Linux `tcp_is_cwnd_limited`) grows only a window
    /// the sender fills; Linux 2.4's `tcp_ack` only when the packets in flight before the ACK were at
    /// least cwnd; RFC 7661 §4.3 not in the non-validated phase. `flight_size` is what was outstanding
    /// before the ACK.
    #[inline]
    pub fn growth_allowed(&self, flight_size: u32, smss: u32) -> bool {
        match self.validation {
            Validation::Off => true,
            Validation::Rfc2861 { linux24: true, .. } => {
                // Both in packets: a short segment in flight is one, cwnd its whole segments.
                let smss = smss.max(1);
                flight_size.div_ceil(smss) >= self.window / smss
            }
            Validation::Rfc2861 { .. } => {
                let cwnd = self.window;
                if cwnd < self.cc.ssthresh() {
                    cwnd < 2 * flight_size
                } else {
                    flight_size + smss >= cwnd
                }
            }
            Validation::Rfc7661(n) => n.nvp_since.is_none(),
        }
    }

    /// RFC 7661 §4.3: pipeACK samples (data ACKed per RTT, on ACKs outside recovery) and the validated
    /// phase; `srtt` is SRTT (the RTO before a sample) and `iw` the initial window. Returns true when
    /// the unused window was taken away (§4.4.2), for OtherReductions.
    pub fn on_open_ack(&mut self, now: Instant, acked: u32, srtt: Duration, iw: u32) -> bool {
        let Validation::Rfc7661(n) = &mut self.validation else { return false };
        n.acked += acked as u64;
        if now.saturating_since(n.rtt_start) >= srtt {
            n.cur = n.cur.max(n.acked);
            n.acked = 0;
            n.rtt_start = now;
        }
        // The sampling period is max(3·SRTT, 1 s); pipeACK is the largest sample of this period and the last.
        let period = srtt.saturating_mul(3).max(Duration::from_secs(1));
        if now.saturating_since(n.period_start) >= period {
            n.prev = n.cur;
            n.cur = 0;
            n.period_start = now;
        }
        let pipe_ack = n.cur.max(n.prev);
        let cwnd = self.window as u64;
        if pipe_ack == 0 || pipe_ack * 2 >= cwnd {
            n.nvp_since = None;
            return false;
        }
        let since = *n.nvp_since.get_or_insert(now);
        // §4.4.2: after the non-validated period (5 minutes) the unused window goes.
        if now.saturating_since(since) > Duration::from_secs(300) {
            n.nvp_since = Some(now);
            self.set_window((cwnd / 2).max(iw as u64) as u32);
            return true;
        }
        false
    }

    /// RFC 7661 §4.4.3: a loss in the non-validated phase reduces from what was used, not from cwnd:
    /// max(pipeACK, FlightSize) less the data presumed lost (`lost`, asked only then), at least 2·SMSS.
    pub fn loss_flight(&self, flight: u32, smss: u32, lost: impl FnOnce() -> u32) -> u32 {
        match self.validation {
            Validation::Rfc7661(n) if n.nvp_since.is_some() => {
                let pipe_ack = n.cur.max(n.prev).min(u32::MAX as u64) as u32;
                pipe_ack.max(flight).saturating_sub(lost()).max(2 * smss)
            }
            _ => flight,
        }
    }

    /// Recovery began: RFC 7661 leaves the non-validated phase.
    pub fn on_recovery_start(&mut self) {
        if let Validation::Rfc7661(n) = &mut self.validation {
            n.nvp_since = None;
        }
    }

    /// Whether RFC 2861 decay runs (`cwv = "rfc2861"` or `"linux"`).
    #[inline]
    pub fn decays(&self) -> bool {
        matches!(self.validation, Validation::Rfc2861 { .. })
    }

    /// The window is in use now: what was used since the stamp is forgotten and the stamp is now (Linux
    /// `tcp_cwnd_validate` when `tcp_is_cwnd_limited`: `snd_cwnd_used` = 0, `snd_cwnd_stamp` = now).
    pub fn fed(&mut self, now: Instant) {
        if let Validation::Rfc2861 { used, stamp, .. } = &mut self.validation {
            *used = 0;
            *stamp = now;
        }
    }

    /// RFC 2861 §3: once per RTO while the application leaves cwnd unused, decay it toward what was used
    /// (`flight` is in flight now). Returns true when cwnd was reduced, for OtherReductions.
    ///
    /// Under `cwv = "linux"`, as `tcp_cwnd_application_limited` does it: the window used counts as at least
    /// IW (`iw`, so cwnd never decays below it), ssthresh keeps ¾ of the cwnd being decayed (RFC 2861 §3,
    /// `tcp_current_ssthresh`), cwnd stays a whole number of segments when counted in packets, and
    /// nothing decays while the application is blocked on a full send buffer (`send_buffer_full`,
    /// Linux `SOCK_NOSPACE`).
    #[inline(never)]
    pub fn decay(
        &mut self,
        now: Instant,
        flight: u32,
        rto: Duration,
        iw: u32,
        smss: u32,
        send_buffer_full: bool,
    ) -> bool {
        // Linux's `tcp_cwnd_validate` leaves a window-owning controller (BBR) alone.
        if self.owns {
            return false;
        }
        let Validation::Rfc2861 { linux, linux24, used, stamp } = &mut self.validation else { return false };
        let (linux, linux24) = (*linux, *linux24);
        *used = (*used).max(flight);
        if now.saturating_since(*stamp) < rto {
            return false;
        }
        let cwnd = self.window;
        // 2.4: win_used = max(snd_cwnd_used, 2); later kernels floor it at the initial window.
        let window_used = match (linux, linux24) {
            (_, true) => (*used).max(2 * smss),
            (true, false) => (*used).max(iw),
            (false, false) => *used,
        };
        *used = flight;
        *stamp = now;
        let reduced = window_used < cwnd && !(linux && send_buffer_full);
        if reduced {
            let mut target = ((cwnd as u64 + window_used as u64) / 2) as u32;
            if linux {
                let three_quarters = (cwnd / 2).saturating_add(cwnd / 4);
                if self.cc.ssthresh() < three_quarters {
                    self.cc.set_ssthresh(three_quarters);
                }
            }
            if self.packets {
                target -= target % smss; // Linux halves a packet count
            }
            self.set_window(target.max(smss));
        }
        reduced
    }

    /// Linux 2.4 `tcp_moderate_cwnd`: cwnd at most `flight` plus `max_burst` segments (a short segment
    /// in flight counts as a whole one when cwnd counts packets). Returns true when cwnd was reduced.
    pub fn moderate(&mut self, flight: u32, max_burst: u32, smss: u32) -> bool {
        let flight = if self.packets { flight.div_ceil(smss).saturating_mul(smss) } else { flight };
        let limit = flight.saturating_add(max_burst * smss);
        if self.window > limit {
            self.set_window(limit);
            return true;
        }
        false
    }

    /// Linux 2.4 `tcp_enter_cwr` (`ifq_full = "linux-2.4"`), from the open state: ssthresh =
    /// max(cwnd/2, 2 segments) (`tcp_recalc_ssthresh`), cwnd = min(cwnd, in flight + 1 segment), and
    /// `tcp_cwnd_down`'s ACK count restarts (`snd_cwnd_cnt = 0`). `flight` is in flight now.
    pub fn enter_cwr_linux24(&mut self, flight: u32, smss: u32) {
        let cwnd = self.window;
        let half = (cwnd / 2).max(2 * smss);
        self.cc.set_ssthresh(if self.packets { half - half % smss } else { half });
        self.set_window(cwnd.min(self.in_flight_plus(flight, smss)));
        self.cwr_acks = 0;
    }

    /// Linux 2.4 `tcp_cwnd_down`, on every ACK while in CWR: one segment off cwnd per two ACKs while
    /// cwnd is above ssthresh/2, and cwnd at most in flight (`flight`, after the ACK) + 1 segment.
    pub fn cwnd_down_linux24(&mut self, flight: u32, smss: u32) {
        self.cwr_acks += 1;
        let decrement = self.cwr_acks / 2;
        self.cwr_acks %= 2;
        let mut cwnd = self.window;
        if decrement > 0 && cwnd > self.cc.ssthresh() / 2 {
            cwnd = cwnd.saturating_sub(smss).max(smss);
        }
        self.set_window(cwnd.min(self.in_flight_plus(flight, smss)));
    }

    /// Linux 2.4 `tcp_complete_cwr`, when CWR ends: cwnd = min(cwnd, ssthresh). A cwnd that
    /// `tcp_cwnd_down` took below ssthresh then grows back in slow start.
    pub fn complete_cwr_linux24(&mut self) {
        let cwnd = self.window.min(self.cc.ssthresh());
        self.set_window(cwnd);
    }

    /// `tcp_packets_in_flight() + 1` in bytes: whole segments when cwnd counts packets, at least one.
    fn in_flight_plus(&self, flight: u32, smss: u32) -> u32 {
        let flight = if self.packets { flight.div_ceil(smss).saturating_mul(smss) } else { flight };
        flight.saturating_add(smss)
    }

    /// RFC 5681 §4.1 restart after idle: cwnd = min(RW, cwnd). Returns true when cwnd was reduced.
    pub fn restart(&mut self, rw: u32) -> bool {
        // `tcp_slow_start_after_idle_check` skips a window-owning controller (BBR restarts by itself).
        if rw < self.window && !self.owns {
            self.set_window(rw);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn linux24(segments: u32) -> Cwnd {
        let cfg = TcpConfig::personality("linux-2.4").unwrap();
        let mut c = Cwnd::new(&cfg, MSS, 0);
        c.set_initial(segments * MSS);
        c
    }

    /// 2.4's `tcp_enter_cwr`, `tcp_cwnd_down` and `tcp_complete_cwr` (tcp_input.c): ssthresh = cwnd/2,
    /// then one segment per two ACKs down to ssthresh/2, never above in flight + 1, and at the end cwnd =
    /// min(cwnd, ssthresh), which can leave it below ssthresh for slow start to grow back.
    #[test]
    fn linux24_cwr_takes_a_segment_per_two_acks_down_to_half_ssthresh() {
        let mut c = linux24(40);
        c.enter_cwr_linux24(39 * MSS, MSS);
        assert_eq!((c.window(), c.ssthresh()), (40 * MSS, 20 * MSS));
        c.cwnd_down_linux24(39 * MSS, MSS);
        assert_eq!(c.window(), 40 * MSS, "the first ACK only counts");
        c.cwnd_down_linux24(39 * MSS, MSS);
        assert_eq!(c.window(), 39 * MSS);
        for _ in 0..100 {
            c.cwnd_down_linux24(39 * MSS, MSS);
        }
        assert_eq!(c.window(), 10 * MSS, "floor ssthresh/2");
        c.cwnd_down_linux24(4 * MSS, MSS);
        assert_eq!(c.window(), 5 * MSS, "at most in flight + 1");
        c.complete_cwr_linux24();
        assert_eq!((c.window(), c.ssthresh()), (5 * MSS, 20 * MSS));
    }

    /// 2.4's `tcp_ack` calls `tcp_cong_avoid` only when `prior_in_flight >= snd_cwnd`, in packets.
    #[test]
    fn linux24_grows_only_a_filled_window() {
        let c = linux24(40);
        assert!(c.growth_allowed(40 * MSS, MSS));
        assert!(c.growth_allowed(39 * MSS + 1, MSS), "a short segment in flight counts as one");
        assert!(!c.growth_allowed(39 * MSS, MSS));
    }
}
