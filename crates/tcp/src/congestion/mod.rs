//! Congestion control, behind a small trait named after the events that drive it (RFC 5681 §3).
//!
//! The controller owns cwnd and ssthresh; loss detection and recovery stay in the connection, which only
//! reports verdicts (an ACK of new data, a congestion event, the end of recovery). A model-based controller
//! (BBR) also takes every ACK's delivery-rate sample (`on_rate_sample`), sets cwnd itself in recovery too
//! (`owns_window`, Linux's `cong_control`) and asks for pacing (`pacing_rate`).
//!
//! This module knows nothing of the connection's configuration: `TcpConfig::controller_factory` picks the
//! factory, so the dependency runs one way (config → congestion).

mod bbr;
mod cubic;
mod reno;

pub use bbr::{Bbr, BbrFactory, BbrMode};
pub use cubic::{Cubic, CubicConfig};
pub use reno::Reno;

use serde::{Deserialize, Serialize};
use tcplab_units::{Duration, Instant};

/// Builds the controller of one connection: each algorithm's configuration is its factory (quinn-proto's
/// `ControllerFactory`), so that the connection knows the [`CongestionControl`] trait only and a new
/// algorithm touches its own module, one registration (`TcpConfig::controller_factory`) and a variant of
/// [`Controller`].
pub trait ControllerFactory: std::fmt::Debug + Send + Sync {
    /// A controller starting at `initial_window` bytes for a sender MSS of `smss`. `seed` seeds the
    /// controller's own random stream (BBR's first gain-cycle phase), so that a run is reproducible.
    fn build(&self, initial_window: u32, smss: u32, seed: u64) -> Controller;
}

/// The connection's controller: one of the algorithms above, dispatched by a `match` rather than a
/// virtual call, so that the per-ACK growth (a few tests and an add for Reno) inlines into the ACK path
/// instead of costing four calls per ACK. Each algorithm stays boxed, so that a connection is no
/// larger than with a trait object and a Reno flow does not carry BBR's state.
#[derive(Debug)]
pub enum Controller {
    Reno(Box<Reno>),
    Cubic(Box<Cubic>),
    Bbr(Box<Bbr>),
}

/// Forwards a method to the algorithm the controller holds.
macro_rules! dispatch {
    ($self:ident, $cc:ident => $call:expr) => {
        match $self {
            Controller::Reno($cc) => $call,
            Controller::Cubic($cc) => $call,
            Controller::Bbr($cc) => $call,
        }
    };
}

impl Controller {
    /// [`CongestionControl::on_ack`], with Reno's growth inline from the three facts it reads; `info`
    /// builds the whole [`AckInfo`] (SRTT, the RTT sample, FlightSize) only for the controllers that
    /// read it.
    #[inline(always)]
    pub fn on_ack_with(
        &mut self,
        now: Instant,
        acked: u32,
        smss: u32,
        after_rto: bool,
        info: impl FnOnce() -> AckInfo,
    ) -> Growth {
        match self {
            Controller::Reno(cc) => cc.grow(acked, smss, after_rto),
            cc => cc.on_ack(now, &info()),
        }
    }
}

impl CongestionControl for Controller {
    #[inline]
    fn window(&self) -> u32 {
        dispatch!(self, cc => cc.window())
    }
    #[inline]
    fn ssthresh(&self) -> u32 {
        dispatch!(self, cc => cc.ssthresh())
    }
    #[inline]
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) -> Growth {
        dispatch!(self, cc => cc.on_ack(now, ack))
    }
    fn on_congestion_event(&mut self, now: Instant, event: CongestionEvent, flight_size: u32, smss: u32) {
        dispatch!(self, cc => cc.on_congestion_event(now, event, flight_size, smss))
    }
    fn on_recovery_exit(&mut self, now: Instant, flight_size: u32, smss: u32) {
        dispatch!(self, cc => cc.on_recovery_exit(now, flight_size, smss))
    }
    fn set_window(&mut self, cwnd: u32) {
        dispatch!(self, cc => cc.set_window(cwnd))
    }
    fn set_ssthresh(&mut self, ssthresh: u32) {
        dispatch!(self, cc => cc.set_ssthresh(ssthresh))
    }
    #[inline]
    fn take_slow_start_exit(&mut self) -> Option<SlowStartExit> {
        dispatch!(self, cc => cc.take_slow_start_exit())
    }
    fn on_spurious_congestion_event(&mut self) {
        dispatch!(self, cc => cc.on_spurious_congestion_event())
    }
    #[inline]
    fn owns_window(&self) -> bool {
        dispatch!(self, cc => cc.owns_window())
    }
    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, cx: &AckContext) {
        dispatch!(self, cc => cc.on_rate_sample(now, rs, cx))
    }
    fn on_tx_start(&mut self, now: Instant, app_limited: bool) {
        dispatch!(self, cc => cc.on_tx_start(now, app_limited))
    }
    fn on_idle_restart(&mut self, now: Instant, last_sent: Instant) {
        dispatch!(self, cc => cc.on_idle_restart(now, last_sent))
    }
    fn pacing_rate(&self) -> Option<u64> {
        dispatch!(self, cc => cc.pacing_rate())
    }
    fn marks_app_limited(&self) -> bool {
        dispatch!(self, cc => cc.marks_app_limited())
    }
    fn model(&self) -> Option<ModelStats> {
        dispatch!(self, cc => cc.model())
    }
    fn set_random_seed(&mut self, seed: u64) {
        dispatch!(self, cc => cc.set_random_seed(seed))
    }
}

/// Reno and NewReno (RFC 5681, RFC 6582): `rfc5681_exit` ends fast recovery at ssthresh (Reno), else
/// with RFC 6582's FlightSize rule; `packets` keeps cwnd in whole segments as Linux does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenoFactory {
    pub abc: Abc,
    pub abc_ca: bool,
    pub rfc5681_exit: bool,
    pub packets: bool,
    /// Slow start at cwnd = ssthresh too (`TcpConfig::slow_start_at_ssthresh`).
    pub slow_start_at_ssthresh: bool,
}

impl ControllerFactory for RenoFactory {
    fn build(&self, initial_window: u32, _smss: u32, _seed: u64) -> Controller {
        let mut reno = Reno::new(initial_window, self.abc, self.abc_ca);
        if self.rfc5681_exit {
            reno = reno.rfc5681_exit();
        }
        if self.packets {
            reno = reno.in_packets();
        }
        if self.slow_start_at_ssthresh {
            reno = reno.slow_start_at_ssthresh();
        }
        Controller::Reno(Box::new(reno))
    }
}

/// CUBIC (RFC 9438) with its parameters and the slow-start byte counting it shares with Reno.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicFactory {
    pub abc: Abc,
    pub cubic: CubicConfig,
    /// The timer tick, which `bictcp` counts time in (`TcpConfig::tick`).
    pub tick: Duration,
    /// The connection is paced whatever its controller asks (`pacing = "fq"` or `max_pacing_rate`).
    pub paced: bool,
}

impl ControllerFactory for CubicFactory {
    fn build(&self, initial_window: u32, _smss: u32, _seed: u64) -> Controller {
        let cubic = Cubic::new(initial_window, self.abc, self.cubic).with_tick(self.tick).paced(self.paced);
        Controller::Cubic(Box::new(cubic))
    }
}

/// "Infinite" initial ssthresh (RFC 5681 §3.1: arbitrarily high).
pub const INFINITE_SSTHRESH: u32 = u32::MAX;

/// The largest congestion window, bytes: the largest window a peer can offer, 65535 << 14 (RFC 7323
/// §2.3). A cwnd beyond it can never be used, and a receive-window-limited flow whose cwnd is not
/// validated grows it on every ACK. Linux likewise stops at `snd_cwnd_clamp`. Staying below 2^30 keeps
/// cwnd plus an ACK's worth of growth, and NewReno's inflation, far from u32 overflow.
pub const MAX_CWND: u32 = 65_535 << 14;

/// What an ACK did to cwnd; the connection counts it as RFC 4898 `SlowStart` or `CongAvoid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    SlowStart,
    /// A congestion-avoidance step was taken; `grew` says whether cwnd actually increased
    /// (web100 counted every call; RFC 4898 `CongAvoid` follows web100).
    CongAvoid {
        grew: bool,
    },
    None,
}

/// Which detector ended slow start without a loss (Linux HyStart; RFC 4898-style counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowStartExit {
    /// The ACK train of a round lasted longer than half the minimum RTT.
    AckTrain,
    /// A round's minimum RTT rose above the minimum RTT by the delay threshold.
    Delay,
}

/// What caused a multiplicative decrease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Fast retransmit / entry to loss recovery (RFC 5681 §3.2 step 2).
    FastRetransmit,
    /// Retransmission timeout (RFC 5681 §3.1 eq. 4 and cwnd = LW). `first` is false for a repeated
    /// timeout of the same segment, which leaves ssthresh alone.
    Timeout { first: bool },
}

/// Facts about an ACK the controller needs.
#[derive(Debug, Clone, Copy)]
pub struct AckInfo {
    /// Newly acknowledged bytes.
    pub acked: u32,
    pub smss: u32,
    /// Bytes outstanding before this ACK.
    pub flight_size: u32,
    /// True in the slow start that follows a retransmission timeout (RFC 3465 §2.3: L = 1 SMSS).
    pub after_rto: bool,
    /// Smoothed round-trip time (RFC 6298 SRTT) including this ACK's sample; `None` before the first sample.
    /// CUBIC aims at W_cubic(t + RTT) with it (RFC 9438 §4.2).
    pub srtt: Option<Duration>,
    /// The RTT sample this ACK produced (RFC 6298 §3, RFC 7323 §4.1), `None` when it gave none (Karn's
    /// algorithm without timestamps). CUBIC's HyStart delay detector uses it.
    pub rtt_sample: Option<Duration>,
}

/// Appropriate Byte Counting in slow start (RFC 3465 §2.2): how much one ACK may grow cwnd.
/// Byte counting in congestion avoidance is the separate knob `abc_ca`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Abc {
    /// Classic packet counting: +1 SMSS per ACK of new data, however much the ACK covers.
    Off,
    /// RFC 5681 §3.1 (2) and RFC 3465 with L = 1 SMSS: cwnd += min(N, SMSS).
    #[default]
    L1,
    /// RFC 3465 §2.2 with L = 2 SMSS (the most RFC 3465 allows).
    L2,
    /// No limit on the slow-start increase per ACK (Linux since 4.x, "stretch ACK" handling).
    Unlimited,
}

impl Abc {
    /// The slow-start increase for one ACK of new data, bytes. `Unlimited` stops at ssthresh, as Linux's
    /// `tcp_slow_start` does (the rest of the ACK counts toward congestion avoidance there; here it is
    /// dropped, a difference of at most one ACK's worth).
    pub fn slow_start_increase(self, acked: u32, smss: u32, after_rto: bool, cwnd: u32, ssthresh: u32) -> u32 {
        match self.limit(smss) {
            None => smss,
            // RFC 3465 §2.3: L = 1 SMSS in the slow start that follows an RTO.
            Some(_) if after_rto => acked.min(smss),
            Some(u32::MAX) => acked.min(ssthresh.saturating_sub(cwnd)),
            Some(l) => acked.min(l),
        }
    }

    /// The per-ACK slow-start increase limit L in bytes, or `None` when byte counting is off.
    pub fn limit(self, smss: u32) -> Option<u32> {
        match self {
            Abc::Off => None,
            Abc::L1 => Some(smss),
            Abc::L2 => Some(2 * smss),
            Abc::Unlimited => Some(u32::MAX),
        }
    }
}

/// Linux's congestion-avoidance state (`icsk_ca_state`), as a window-owning controller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// Duplicate ACKs or SACKed data seen, no recovery yet.
    Disorder,
    /// cwnd reduced for a local cause or ECN.
    Cwr,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// The delivery-rate sample of one ACK (Linux `struct rate_sample`, `tcp_rate.c`), in bytes where Linux
/// counts packets. Built by the connection's delivery-rate sampler.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over `interval` (`rs->delivered`); `None` when the ACK gives no valid sample.
    pub delivered: Option<u64>,
    /// max(send interval, ACK interval) of the sample (`rs->interval_us`); `None` when invalid, or shorter
    /// than the minimum RTT (an ACK-compression artefact, `tcp_rate_gen`).
    pub interval: Option<Duration>,
    /// `delivered` at the send of the newest segment this ACK delivered (`rs->prior_delivered`): a round
    /// ends when it reaches the delivered count at the round's start.
    pub prior_delivered: u64,
    /// Bytes newly ACKed or SACKed by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes newly marked lost since the last ACK (`rs->losses`; here: retransmitted since).
    pub losses: u64,
    /// Bytes in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u32,
    /// The RTT this ACK measured (`rs->rtt_us`, `tcp_ack_update_rtt`'s `ca_rtt_us`): the newest segment it
    /// newly SACKed, else the newest it acknowledged unless one was retransmitted, else its timestamp echo.
    pub rtt: Option<Duration>,
    /// The newest segment delivered was sent while application-limited (`rs->is_app_limited`).
    pub is_app_limited: bool,
}

impl RateSample {
    /// The delivery rate, bytes per second, of a valid sample.
    pub fn rate(&self) -> Option<u64> {
        let (d, i) = (self.delivered?, self.interval?);
        (i.as_nanos() > 0).then(|| (d as u128 * 1_000_000_000 / i.as_nanos() as u128).min(u64::MAX as u128) as u64)
    }
}

/// What the connection knows when a window-owning controller takes an ACK (Linux's `tcp_sock` fields
/// `tcp_bbr.c` reads).
#[derive(Debug, Clone, Copy)]
pub struct AckContext {
    pub smss: u32,
    /// Bytes in flight after the ACK (`tcp_packets_in_flight`: RFC 6675 pipe).
    pub in_flight: u32,
    pub ca_state: CaState,
    /// Bytes delivered over the connection's life (`tp->delivered`) and when the last was (`delivered_mstamp`).
    pub delivered: u64,
    pub delivered_at: Instant,
    /// Bytes marked lost over the connection's life (`tp->lost`).
    pub lost: u64,
    /// Smoothed RTT, `None` before a sample.
    pub srtt: Option<Duration>,
    /// When the next data segment may leave under pacing (`tp->tcp_wstamp_ns`); `now` or earlier when it may now.
    pub next_departure: Instant,
}

/// The model a model-based controller keeps (BBR), for statistics and time series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelStats {
    /// The mode's number (BBR: STARTUP 0, DRAIN 1, PROBE_BW 2, PROBE_RTT 3, as `enum bbr_mode`).
    pub mode: u8,
    /// The bottleneck bandwidth estimate, bytes per second.
    pub btl_bw: u64,
    /// The minimum RTT estimate, `None` before a sample.
    pub min_rtt: Option<Duration>,
    /// Pacing and cwnd gains (1.0 = the estimate itself).
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// PROBE_RTT episodes entered, rounds counted, and whether the long-term (policer) estimate is in use.
    pub probe_rtt_rounds: u64,
    pub rounds: u64,
    pub lt_use_bw: bool,
}

/// The events a congestion controller reacts to (the small-trait style of quinn-proto's `Controller`).
pub trait CongestionControl {
    /// Congestion window in bytes.
    fn window(&self) -> u32;
    /// Slow-start threshold in bytes ([`INFINITE_SSTHRESH`] until the first congestion event).
    fn ssthresh(&self) -> u32;
    /// An ACK of new data outside loss recovery.
    fn on_ack(&mut self, now: Instant, ack: &AckInfo) -> Growth;
    /// A multiplicative decrease.
    fn on_congestion_event(&mut self, now: Instant, event: CongestionEvent, flight_size: u32, smss: u32);
    /// Loss recovery ended with a full ACK; `flight_size` is what is still outstanding.
    fn on_recovery_exit(&mut self, now: Instant, flight_size: u32, smss: u32);
    /// A reduction the controller did not decide (cwnd validation, moderation, restart after idle).
    fn set_window(&mut self, cwnd: u32);
    /// A threshold the controller did not decide: RFC 2861 §3 keeps ssthresh at least ¾ of the cwnd it
    /// decays, so that slow start regains it.
    fn set_ssthresh(&mut self, ssthresh: u32);
    /// Why slow start just ended without a loss, once: the connection counts it.
    fn take_slow_start_exit(&mut self) -> Option<SlowStartExit> {
        None
    }
    /// The last congestion event was spurious (RFC 3708 detection): return to the state before it
    /// (RFC 4015 for Reno, RFC 9438 §4.9 for CUBIC). Without a remembered event, nothing happens.
    fn on_spurious_congestion_event(&mut self);

    /// The controller sets cwnd on every ACK itself, in recovery too, from delivery-rate samples (Linux's
    /// `cong_control`, BBR): the connection then feeds [`CongestionControl::on_rate_sample`], applies no
    /// PRR, no cwnd validation and no restart after idle (`tcp_cwnd_validate` and
    /// `tcp_slow_start_after_idle_check` skip such a controller).
    fn owns_window(&self) -> bool {
        false
    }
    /// Every ACK that is not older than SND.UNA, after loss detection (`tcp_cong_control` in `tcp_ack`).
    fn on_rate_sample(&mut self, _now: Instant, _rs: &RateSample, _cx: &AckContext) {}
    /// New data leaves with nothing in flight (`CA_EVENT_TX_START`); `app_limited` as the sampler says.
    fn on_tx_start(&mut self, _now: Instant, _app_limited: bool) {}
    /// New data leaves with nothing in flight, the last data having left at `last_sent` (CUBIC's
    /// `CA_EVENT_TX_START` with `lsndtime`); every connection reports it, paced or not.
    fn on_idle_restart(&mut self, _now: Instant, _last_sent: Instant) {}
    /// The pacing rate the controller sets, bytes per second (`sk_pacing_rate`); `Some` also asks for
    /// pacing (`SK_PACING_NEEDED`). `None`: the connection derives the rate from cwnd and SRTT.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the samples now describe the controller, not the path (BBR's PROBE_RTT sets
    /// `tp->app_limited`): the connection marks its sampler app-limited after the ACK.
    fn marks_app_limited(&self) -> bool {
        false
    }
    /// The controller's model, for a model-based one.
    fn model(&self) -> Option<ModelStats> {
        None
    }
    /// Seeds the controller's random stream again (the connection's seed changed).
    fn set_random_seed(&mut self, _seed: u64) {}
}
