//! The receiver's ACK policy and its state, one variant per policy (`ack_policy`): when in-order data is
//! acknowledged at once, when the delayed ACK is due, and what each policy remembers to decide it.
//!
//! Read RFC 1122 §4.2.3.2 and RFC 5681 §4.2 (delayed ACK: at least every second full-sized segment, within
//! 500 ms; out-of-order data at once). The stacks: 4.4BSD's fast timer (TCP/IP Illustrated vol. 2 §25.4),
//! HP-UX ACK avoidance (`tcp_deferred_ack_max`), Linux `tcp_input.c` (`tcp_event_data_recv`,
//! `__tcp_ack_snd_check`, `tcp_send_delayed_ack`, `tcp_cleanup_rbuf`, `tcp_delack_timer_handler`) and Linux
//! 2.2's `tcp_delack_estimator` / `tcp_remember_ack`. Out-of-order data, hole fills and duplicates are
//! acknowledged at once under every policy; the connection does that, and tells the state.

use tcplab_units::{Duration, Instant};

use crate::config::{AckPolicy, TcpConfig};
use crate::rtt::RttEstimator;

/// What an ACK decision needs to know about the receive side of the connection. (The RTO and SRTT, which
/// only the Linux policies read, come as the estimator itself: a view is built for every data segment.)
#[derive(Debug, Clone, Copy)]
pub(crate) struct RcvView {
    /// RCV.NXT − Last.ACK.sent: bytes received in order and not yet acknowledged.
    pub unacked: u32,
    /// The peer's full-sized segment as seen so far.
    pub rcv_mss: u32,
    /// The window still open, RCV.ADV − RCV.NXT.
    pub window: u32,
    /// The largest window the receive buffer can offer, bytes.
    pub recv_limit: u64,
}

impl RcvView {
    /// Linux `tcp_incr_quickack`: min(rcv_wnd / (2·rcv_mss), 16) quick ACKs, at least 2.
    fn quickack_budget(&self) -> u32 {
        (self.recv_limit / (2 * self.rcv_mss.max(1) as u64)).clamp(2, 16) as u32
    }
}

/// The ACK policy's state.
#[derive(Debug, Clone)]
pub(crate) enum AckState {
    /// Every segment at once.
    Every,
    /// RFC 1122 delayed ACK: every `ack_every` full-sized segments, or a per-connection timer.
    Delayed {
        full_segs: u32,
    },
    /// 4.4BSD: as `Delayed`, but the timer is the global fast timer, phase-locked to its period.
    Bsd {
        full_segs: u32,
    },
    /// HP-UX-style ACK avoidance: the deferral `defer_k` ramps from 2 to `deferred_ack_max` segments.
    Avoidance {
        full_segs: u32,
        defer_k: u32,
    },
    Linux(LinuxAck),
    Linux22(Linux22Ack),
    /// Mentat's deferred ACK (Solaris 2.5.1 `tcp.c`), in bytes as that code counts.
    Mentat(MentatAck),
}

/// Mentat's receiver: `tcp_rack_cur_max` and `tcp_rack_abs_max`, bytes.
#[derive(Debug, Clone)]
pub(crate) struct MentatAck {
    /// Unacknowledged bytes that force an ACK now; 0 until the first segment (`tcp_rwnd_set` clears it),
    /// then one MSS more with every ACK it forces, up to `abs_max`.
    cur_max: u32,
    /// The ceiling of `cur_max`; 0 until the first segment sets it from the window and the MSS.
    abs_max: u32,
}

impl MentatAck {
    /// `tcp_rwnd_set`: (rwnd / mss / 2) segments, here also at most `deferred_ack_max` (illumos caps it by
    /// `tcps_deferred_acks_max`).
    fn abs_max(&mut self, v: &RcvView, cfg: &TcpConfig) -> u32 {
        if self.abs_max == 0 {
            let mss = v.rcv_mss.max(1) as u64;
            let segs = (v.recv_limit / mss / 2).clamp(1, cfg.deferred_ack_max as u64);
            self.abs_max = (segs * mss) as u32;
        }
        self.abs_max
    }
}

/// Linux's receiver (2.4 and later).
#[derive(Debug, Clone)]
pub(crate) struct LinuxAck {
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// Interactive (pingpong) mode: data is sent soon after data arrives.
    pingpong: bool,
    /// The delayed-ACK timeout estimate (`icsk_ack.ato`).
    ato: Duration,
    /// When data last arrived (`icsk_ack.lrcvtime`).
    last_rcv: Option<Instant>,
    /// ICSK_ACK_PUSHED / PUSHED2: short segments received since the last ACK, at most 2.
    pushed: u8,
}

/// Linux 2.2's receiver.
#[derive(Debug, Clone)]
pub(crate) struct Linux22Ack {
    /// Quick ACK mode (the top bit of 2.2's `tp->ato`): set by the first segment only.
    quick: bool,
    /// The delayed-ACK timeout, a whole number of ticks.
    ato: Duration,
    last_rcv: Option<Instant>,
}

impl AckState {
    pub fn new(cfg: &TcpConfig) -> AckState {
        match cfg.ack_policy {
            AckPolicy::Every => AckState::Every,
            AckPolicy::Delayed => AckState::Delayed { full_segs: 0 },
            AckPolicy::Bsd => AckState::Bsd { full_segs: 0 },
            AckPolicy::Avoidance => AckState::Avoidance { full_segs: 0, defer_k: 2 },
            AckPolicy::Linux => {
                AckState::Linux(LinuxAck { quick: 0, pingpong: false, ato: cfg.ato_min, last_rcv: None, pushed: 0 })
            }
            AckPolicy::Linux22 => AckState::Linux22(Linux22Ack { quick: false, ato: cfg.ato_min, last_rcv: None }),
            AckPolicy::Mentat => AckState::Mentat(MentatAck { cur_max: 0, abs_max: 0 }),
        }
    }

    /// The delayed-ACK timer runs on the global 4.4BSD fast timer, already phase-locked (no `tick` rounding).
    pub fn phase_locked(&self) -> bool {
        matches!(self, AckState::Bsd { .. })
    }

    /// In-order data of `len` bytes arrived (a hole fill included): the ATO estimators. `view` builds the
    /// receive view for the policies that read it (the RFC ones, on every data segment, do not).
    #[inline(always)]
    pub fn on_data_arrival(
        &mut self,
        now: Instant,
        len: u32,
        psh: bool,
        view: impl FnOnce() -> RcvView,
        rtt: &RttEstimator,
        cfg: &TcpConfig,
    ) {
        match self {
            AckState::Linux(l) => {
                let v = &view();
                l.on_data(now, v, rtt.rto(), cfg);
                if len < v.rcv_mss {
                    l.pushed = (l.pushed + 1).min(2); // tcp_measure_rcv_mss
                }
            }
            AckState::Linux22(l) => l.on_data(now, len, psh, &view(), rtt.rto(), cfg),
            _ => {}
        }
    }

    /// The offered window grew (`grow_window`); true when that alone calls for an ACK now. Linux sets one
    /// quick ACK (`icsk_ack.quick |= 1` in `tcp_grow_window`), which pingpong mode still suppresses; under
    /// other policies the larger window is announced at once.
    pub fn on_window_grown(&mut self) -> bool {
        match self {
            AckState::Linux(l) => {
                l.quick = l.quick.max(1);
                false
            }
            _ => true,
        }
    }

    /// A segment filled a hole (acknowledged at once): ACK avoidance starts its ramp again.
    pub fn on_hole_filled(&mut self, v: &RcvView) {
        match self {
            AckState::Avoidance { defer_k, .. } => *defer_k = 2,
            AckState::Mentat(m) => m.cur_max = v.rcv_mss,
            _ => {}
        }
    }

    /// Linux `tcp_enter_quickack_mode(sk, max)` (ECN's `tcp_ecn_check_ce`): at least min(budget, `max`)
    /// quick ACKs, out of pingpong mode, the ATO back to its minimum. The other policies have no such mode.
    pub fn enter_quickack(&mut self, max: u32, v: &RcvView, cfg: &TcpConfig) {
        if let AckState::Linux(l) = self {
            l.enter_quickack(max, v, cfg);
        }
    }

    /// Out-of-order data arrived (acknowledged at once).
    pub fn on_out_of_order(&mut self, v: &RcvView, cfg: &TcpConfig) {
        match self {
            AckState::Avoidance { defer_k, .. } => *defer_k = 2,
            // Mentat: an unacceptable or out-of-order segment means ACKs came too seldom.
            AckState::Mentat(m) => m.cur_max = v.rcv_mss,
            // Linux before 4.18: tcp_enter_quickack_mode in tcp_data_queue.
            AckState::Linux(l) if cfg.quickack_on_reorder => l.quick = v.quickack_budget(),
            _ => {}
        }
    }

    /// Whether in-order data (not a hole fill) of `len` bytes, `full` when it is a full-sized segment,
    /// must be acknowledged now. The view `view` builds (for the policies that read it) already counts the
    /// segment in `unacked`.
    #[inline(always)]
    pub fn ack_now(
        &mut self,
        len: u32,
        full: bool,
        psh: bool,
        view: impl FnOnce() -> RcvView,
        cfg: &TcpConfig,
    ) -> bool {
        match self {
            // Solaris 2.5.1 tcp_rput: rack_cnt (bytes since the last ACK) against rack_cur_max; then the
            // short-segment rule on the bytes unacknowledged before this one (rnxt - rack).
            AckState::Mentat(m) => {
                let v = &view();
                let abs_max = m.abs_max(v, cfg);
                let mss = v.rcv_mss.max(1);
                if v.unacked >= m.cur_max {
                    m.cur_max = (m.cur_max + mss).min(abs_max);
                    true
                } else if len < mss {
                    let before = v.unacked.saturating_sub(len);
                    before != 0 && !before.is_multiple_of(mss)
                } else {
                    false
                }
            }
            AckState::Every => true,
            AckState::Delayed { full_segs } | AckState::Bsd { full_segs } => {
                *full_segs += full as u32;
                *full_segs >= cfg.ack_every
            }
            // Linux 2.2 __tcp_ack_snd_check: two full frames unacknowledged, or quick ACK mode.
            AckState::Linux22(l) => {
                let v = view();
                v.unacked >= 2 * v.rcv_mss || l.quick
            }
            // Linux __tcp_ack_snd_check: more than one full segment unacknowledged, or quickack mode.
            AckState::Linux(l) => {
                let v = view();
                v.unacked > v.rcv_mss || (l.quick > 0 && !l.pingpong)
            }
            AckState::Avoidance { full_segs, defer_k } => {
                *full_segs += full as u32;
                if !full || psh {
                    *defer_k = 2;
                }
                if *full_segs >= *defer_k {
                    *defer_k = (*defer_k + 1).min(cfg.deferred_ack_max);
                    true
                } else {
                    let v = view();
                    v.unacked as u64 >= (cfg.deferred_ack_max as u64 * v.rcv_mss as u64).min(v.window as u64 / 2 + 1)
                }
            }
        }
    }

    /// When the delayed ACK is due, armed at the first unacknowledged arrival.
    pub fn deadline(&self, now: Instant, rtt: &RttEstimator, cfg: &TcpConfig) -> Instant {
        match self {
            // 4.4BSD: the fast timer ticks globally; the ACK goes at the next tick, 0 to 200 ms away.
            AckState::Bsd { .. } => (now + Duration::from_nanos(1)).ceil_to(cfg.delayed_ack_timeout),
            // Linux tcp_send_delayed_ack: the ATO, bounded by 500 ms (200 ms in pingpong), by the smoothed
            // RTT (at least ATO_MIN) and by TCP_DELACK_MAX.
            AckState::Linux(l) => {
                let mut ato = l.ato;
                if ato > cfg.ato_min {
                    let mut max_ato = if l.pingpong { Duration::from_millis(200) } else { Duration::from_millis(500) };
                    if let Some(srtt) = rtt.srtt() {
                        max_ato = max_ato.min(srtt.max(cfg.ato_min));
                    }
                    ato = ato.min(max_ato);
                }
                now + ato.min(cfg.delayed_ack_timeout)
            }
            // Linux 2.2: `jiffies + ato` (at most HZ/2, here `delayed_ack_timeout`), a whole number of ticks
            // from the current tick.
            AckState::Linux22(l) => {
                let tick = jiffy(cfg);
                Instant::from_nanos(now.as_nanos() / tick.as_nanos() * tick.as_nanos())
                    + l.ato.min(cfg.delayed_ack_timeout)
            }
            _ => now + cfg.delayed_ack_timeout,
        }
    }

    /// Linux 2.2 `tcp_send_delayed_ack` moves a pending timer to an earlier deadline; the others keep the
    /// deadline set at the first unacknowledged arrival.
    pub fn moves_timer_earlier(&self) -> bool {
        matches!(self, AckState::Linux22(_))
    }

    /// The delayed-ACK timer fired.
    pub fn on_delayed_ack_timeout(&mut self, v: &RcvView, rtt: &RttEstimator, cfg: &TcpConfig) {
        match self {
            AckState::Avoidance { defer_k, .. } => *defer_k = 2,
            // Solaris 2.5.1 tcp_timer: more than an MSS held until the timer means the sender is out of
            // step with the deferral: fall back toward ACK-every-other-segment, for good.
            AckState::Mentat(m) => {
                let mss = v.rcv_mss.max(1);
                if v.unacked > mss {
                    let abs_max = m.abs_max(v, cfg);
                    if abs_max > 2 * mss {
                        m.abs_max = abs_max - mss;
                    }
                    m.cur_max = mss;
                }
            }
            // Linux tcp_delack_timer_handler: leave pingpong, or back the ATO off.
            AckState::Linux(l) => {
                if l.pingpong {
                    l.pingpong = false;
                    l.ato = cfg.ato_min;
                } else {
                    l.ato = l.ato.saturating_mul(2).min(rtt.rto());
                }
            }
            _ => {}
        }
    }

    /// An ACK went out (on its own or on data).
    pub fn on_ack_sent(&mut self, cfg: &TcpConfig) {
        match self {
            AckState::Delayed { full_segs } | AckState::Bsd { full_segs } | AckState::Avoidance { full_segs, .. } => {
                *full_segs = 0
            }
            AckState::Linux(l) => {
                l.pushed = 0;
                if l.quick > 0 {
                    l.quick -= 1; // Linux tcp_dec_quickack_mode
                    if l.quick == 0 {
                        l.ato = cfg.ato_min;
                    }
                }
            }
            AckState::Every | AckState::Linux22(_) | AckState::Mentat(_) => {}
        }
    }

    /// Data went out at `now`: Linux `tcp_event_data_sent` takes data sent soon after data arrived for an
    /// interactive exchange (pingpong).
    pub fn on_data_sent(&mut self, now: Instant, cfg: &TcpConfig) {
        if let AckState::Linux(l) = self {
            // In whole ticks when the timers have one (Linux compares jiffies).
            if l.last_rcv.is_some_and(|t| ticks_between(cfg, t, now) < l.ato) {
                l.pingpong = true;
            }
        }
    }

    /// Linux `tcp_fin` on an established connection: `inet_csk_enter_pingpong_mode`. True when the ACK of
    /// the FIN may wait for the delayed-ACK timer: data has been received, so the ATO is set
    /// (`tcp_event_data_recv`); before any, Linux's ATO is 0 and the ACK leaves at once.
    pub fn on_fin(&mut self) -> bool {
        match self {
            AckState::Linux(l) if l.last_rcv.is_some() => {
                l.pingpong = true;
                true
            }
            _ => false,
        }
    }

    /// Linux `tcp_cleanup_rbuf`: a read that empties the receive queue after a short pushed segment is
    /// ACKed at once, unless the connection is interactive (pingpong) and only one such segment came.
    pub fn ack_on_drain(&self) -> bool {
        match self {
            AckState::Linux(l) => l.pushed >= 2 || l.pushed == 1 && !l.pingpong,
            _ => false,
        }
    }
}

impl LinuxAck {
    /// In-order data (not a hole fill) of `len` bytes: [`AckState::on_data_arrival`], the quick ACKs of
    /// ECN's CE (`quickack`), a grown window's one (`grew`), and whether to ACK now
    /// ([`AckState::ack_now`]), on one view.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn on_in_order_data(
        &mut self,
        now: Instant,
        len: u32,
        v: &RcvView,
        rto: Duration,
        quickack: bool,
        grew: bool,
        cfg: &TcpConfig,
    ) -> bool {
        self.on_data(now, v, rto, cfg);
        if len < v.rcv_mss {
            self.pushed = (self.pushed + 1).min(2); // tcp_measure_rcv_mss
        }
        if quickack {
            self.enter_quickack(2, v, cfg);
        }
        if grew {
            self.quick = self.quick.max(1);
        }
        v.unacked > v.rcv_mss || (self.quick > 0 && !self.pingpong)
    }

    fn enter_quickack(&mut self, max: u32, v: &RcvView, cfg: &TcpConfig) {
        self.quick = self.quick.max(v.quickack_budget().min(max));
        self.pingpong = false;
        self.ato = cfg.ato_min;
    }

    /// Linux tcp_event_data_recv: the ATO follows the spacing of arriving data.
    fn on_data(&mut self, now: Instant, v: &RcvView, rto: Duration, cfg: &TcpConfig) {
        let half_min = Duration::from_nanos(cfg.ato_min.as_nanos() / 2);
        match self.last_rcv {
            None => {
                self.quick = v.quickack_budget();
                self.ato = cfg.ato_min;
            }
            Some(last) => {
                let m = ticks_between(cfg, last, now);
                let half_ato = halve(cfg, self.ato);
                if m <= half_min {
                    self.ato = half_ato + half_min;
                } else if m < self.ato {
                    self.ato = (half_ato + m).min(rto);
                } else if m > rto {
                    self.quick = v.quickack_budget();
                }
            }
        }
        self.last_rcv = Some(now);
    }
}

impl Linux22Ack {
    /// Linux 2.2 `tcp_delack_estimator` and `tcp_remember_ack`, in jiffies: the first segment enters
    /// quick ACK mode with an ATO of one tick; after it, the ATO is half the previous one plus the
    /// interarrival time (at least one tick), or the RTO when the gap exceeds it; a short pushed segment
    /// (under half an MSS) caps it at `ato_min` (HZ/50).
    fn on_data(&mut self, now: Instant, len: u32, psh: bool, v: &RcvView, rto: Duration, cfg: &TcpConfig) {
        let tick = jiffy(cfg).as_nanos();
        let jiffies = |t: Instant| t.as_nanos() / tick;
        match self.last_rcv {
            None => {
                self.ato = jiffy(cfg);
                self.quick = true;
            }
            Some(last) => {
                let m = Duration::from_nanos((jiffies(now) - jiffies(last)).max(1) * tick);
                self.ato = if m > rto { rto } else { Duration::from_nanos(self.ato.as_nanos() / tick / 2 * tick) + m };
                self.quick = false;
            }
        }
        self.last_rcv = Some(now);
        if psh && len < v.rcv_mss / 2 {
            self.ato = self.ato.min(cfg.ato_min);
        }
    }
}

/// The time from `a` to `b`, in whole timer ticks when the timers have one (Linux counts jiffies:
/// `tcp_jiffies32 - lrcvtime`), exact otherwise.
fn ticks_between(cfg: &TcpConfig, a: Instant, b: Instant) -> Duration {
    let tick = cfg.tick.as_nanos();
    if tick == 0 {
        return b.saturating_since(a);
    }
    Duration::from_nanos((b.as_nanos() / tick).saturating_sub(a.as_nanos() / tick) * tick)
}

/// Half of `d`, rounded down to whole ticks when the timers have one (`ato >> 1` in jiffies).
fn halve(cfg: &TcpConfig, d: Duration) -> Duration {
    let tick = cfg.tick.as_nanos();
    if tick == 0 {
        return Duration::from_nanos(d.as_nanos() / 2);
    }
    Duration::from_nanos(d.as_nanos() / tick / 2 * tick)
}

/// The Linux 2.2 jiffy: the timer tick (1 ms when `tick` is 0).
fn jiffy(cfg: &TcpConfig) -> Duration {
    if cfg.tick.is_zero() {
        Duration::from_millis(1)
    } else {
        cfg.tick
    }
}

#[cfg(test)]
mod mentat_tests {
    use super::*;

    fn view(unacked: u32) -> RcvView {
        RcvView { unacked, rcv_mss: 1460, window: 57344, recv_limit: 57344 }
    }

    #[test]
    fn test_mentat_cur_max_ramps_one_mss_per_forced_ack_up_to_half_the_window() {
        let cfg = TcpConfig { ack_policy: AckPolicy::Mentat, ..TcpConfig::default() };
        let mut a = AckState::new(&cfg);
        // cur_max starts at 0 (tcp_rwnd_set): the first segment is ACKed at once, and so is the next
        // (cur_max one MSS), then every 2nd, 3rd, ... segment.
        let mut acks = Vec::new();
        let mut held = 0;
        for _ in 0..30 {
            held += 1460;
            if a.ack_now(1460, true, false, || view(held), &cfg) {
                acks.push(held / 1460);
                held = 0;
            }
        }
        assert_eq!(acks, vec![1, 1, 2, 3, 4, 5, 6, 7]);
        // The ceiling: 57344 / 1460 / 2 = 19 segments.
        let AckState::Mentat(m) = &a else { unreachable!() };
        assert_eq!(m.abs_max, 19 * 1460);
    }

    #[test]
    fn test_mentat_short_segment_on_a_multiple_of_the_mss_only_starts_the_timer() {
        let cfg = TcpConfig { ack_policy: AckPolicy::Mentat, ..TcpConfig::default() };
        // Two full segments held, then the 952-byte tail of a response: 2920 bytes before it, a multiple
        // of the MSS: wait for the response, which carries the ACK.
        let mut b = AckState::Mentat(MentatAck { cur_max: 4 * 1460, abs_max: 19 * 1460 });
        assert!(!b.ack_now(952, false, true, || view(2 * 1460 + 952), &cfg));
        // A short segment after a short one (unacknowledged bytes not a multiple of the MSS): ACK now.
        assert!(b.ack_now(128, false, true, || view(2 * 1460 + 952 + 128), &cfg));
        // Nothing held before a lone request: the timer only.
        let mut c = AckState::Mentat(MentatAck { cur_max: 4 * 1460, abs_max: 19 * 1460 });
        assert!(!c.ack_now(128, false, true, || view(128), &cfg));
    }
}
