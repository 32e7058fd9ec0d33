//! Round-trip time estimation and the retransmission timeout, shared by tcplab's transports.
//!
//! This is `tcplab_tcp::rtt` moved out of the TCP crate with the same API ([`RtoModel`], [`RtoParams`],
//! [`RttEstimator`]), so that RDP and TCP use one set of estimators; [`RttEstimator::seed`] is the one
//! addition (a start other than the first sample: RDP's SYN-seeded estimate, and the RFC 889/793 worked
//! examples that start from a given SRTT).
//!
//! Four estimators, chosen by [`RtoModel`] (RFC 6298 by default); each turns RTT samples into SRTT and an RTO
//! clamped to [`min_rto`, `max_rto`]. §5.5 exponential backoff is applied by the caller through
//! [`RttEstimator::rto_backed_off`], the same for every model.
//!
//! - [`RtoModel::Rfc6298`]: RFC 6298 §2: SRTT and RTTVAR from samples, RTO = SRTT + max(G, K·RTTVAR).
//! - [`RtoModel::Linux`]: Linux's `tcp_rtt_estimator()` / `tcp_set_rto()` (net/ipv4/tcp_input.c,
//!   include/net/tcp.h): Jacobson's estimator with a finer deviation gain when the RTT falls, and an RTTVAR that
//!   holds the largest deviation of the last round trip and never drops below `min_rto`, so RTO ≥ SRTT + `min_rto`.
//! - [`RtoModel::Rfc793`]: RFC 793 §3.7: SRTT = α·SRTT + (1−α)·RTT, RTO = min(UBOUND, max(LBOUND, β·SRTT)).
//! - [`RtoModel::Mills`]: RFC 889 (D. Mills, "Internet Delay Experiments"): RFC 793's estimator with an
//!   asymmetric gain, following an increase in delay faster than a decrease.
//!
//! Gains are configured as decimal fractions ([`RtoParams`]) and applied in exact integer arithmetic on
//! nanoseconds at a resolution of 10⁻⁹ (parts per billion), so runs are bit-for-bit reproducible.

use serde::{Deserialize, Serialize};
use tcplab_units::{Duration, Instant};

/// The RTO estimator (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoModel {
    /// RFC 6298 §2 (the standard; the default).
    #[default]
    Rfc6298,
    /// Linux `tcp_rtt_estimator()`: per-round-trip maximum of the mean deviation, floored at `min_rto`.
    Linux,
    /// RFC 793 §3.7: exponential smoothing, RTO = β·SRTT between LBOUND (`min_rto`) and UBOUND (`max_rto`).
    Rfc793,
    /// RFC 889: RFC 793 with a faster gain when the sample is above SRTT than when below.
    Mills,
}

/// Tunables of the RTO models. Every field has a default; fields a model does not use are ignored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtoParams {
    /// RFC 6298 (2.3) α: the gain of SRTT, SRTT ← (1−α)·SRTT + α·R'. A fraction in (0, 1]; default 1/8 = 0.125.
    pub rfc6298_alpha: f64,
    /// RFC 6298 (2.3) β: the gain of RTTVAR, RTTVAR ← (1−β)·RTTVAR + β·|SRTT−R'|. A fraction in (0, 1];
    /// default 1/4 = 0.25.
    pub rfc6298_beta: f64,
    /// RFC 6298 (2.2)/(2.3) K: the multiple of RTTVAR in RTO = SRTT + max(G, K·RTTVAR). A count; default 4.
    pub rfc6298_k: u32,
    /// RFC 793 §3.7 ALPHA, the "smoothing factor": the weight of the old SRTT in
    /// SRTT = ALPHA·SRTT + (1−ALPHA)·RTT. A fraction in [0, 1), RFC 793 suggests 0.8 to 0.9; default 0.875
    /// (the gain 1/8 later standardised by RFC 6298). [`RtoModel::Mills`] has its own gains instead
    /// ([`RtoParams::mills_gain_up`], [`RtoParams::mills_gain_down`]).
    pub rfc793_alpha: f64,
    /// RFC 793 §3.7 BETA, the "delay variance factor": RTO = min(UBOUND, max(LBOUND, BETA·SRTT)), with
    /// LBOUND = `min_rto` and UBOUND = `max_rto`. A factor ≥ 1, RFC 793 suggests 1.3 to 2.0; default 2.0.
    /// [`RtoModel::Mills`] computes its RTO with the same formula and factor.
    pub rfc793_beta: f64,
    /// RFC 889 (D. Mills, "Internet Delay Experiments", December 1983) gain when the sample exceeds SRTT:
    /// SRTT ← SRTT + gain_up·(RTT−SRTT). A fraction in (0, 1]; default 1/4 = 0.25, Mills' F2 = 3/4 (his
    /// E ← F·E + (1−F)·R with F = F2 when R ≥ E), the "fast attack" of his peak detector (the test
    /// `worked_example_b46` replays his figures). A larger gain overshot on glitches in his measurements.
    pub mills_gain_up: f64,
    /// RFC 889 gain when the sample is below SRTT: SRTT ← SRTT − gain_down·(SRTT−RTT). A fraction in (0, 1];
    /// default 1/16 = 0.0625, Mills' F1 = 15/16 (F when R < E), the "slow decay" (see `mills_gain_up`).
    pub mills_gain_down: f64,
}

impl Default for RtoParams {
    fn default() -> Self {
        RtoParams {
            rfc6298_alpha: 0.125,
            rfc6298_beta: 0.25,
            rfc6298_k: 4,
            rfc793_alpha: 0.875,
            rfc793_beta: 2.0,
            mills_gain_up: 0.25,
            mills_gain_down: 0.0625,
        }
    }
}

impl RtoParams {
    /// Checks the ranges documented on each field. The message names the field and what is accepted.
    /// [`RttEstimator::with_model`] does not call this; out-of-range values are clamped there.
    pub fn validate(&self) -> Result<(), String> {
        let gains = [
            ("rfc6298_alpha", self.rfc6298_alpha),
            ("rfc6298_beta", self.rfc6298_beta),
            ("mills_gain_up", self.mills_gain_up),
            ("mills_gain_down", self.mills_gain_down),
        ];
        for (name, g) in gains {
            let fraction = g > 0.0 && g <= 1.0;
            if !fraction {
                return Err(format!("{name} = {g}: need a fraction in (0, 1]"));
            }
        }
        if !(0.0..1.0).contains(&self.rfc793_alpha) {
            return Err(format!("rfc793_alpha = {}: need a fraction in [0, 1)", self.rfc793_alpha));
        }
        let factor = self.rfc793_beta >= 1.0 && self.rfc793_beta.is_finite();
        if !factor {
            return Err(format!("rfc793_beta = {}: need a finite factor >= 1", self.rfc793_beta));
        }
        Ok(())
    }
}

/// One part per billion: gains are integers scaled by this.
const PPB: u64 = 1_000_000_000;

/// `v` as parts per billion, rounded; NaN and negatives give 0, and the result is at most `max`.
fn ppb(v: f64, max: u64) -> u64 {
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    // `as` saturates at u64::MAX for huge values.
    ((v * PPB as f64).round() as u64).min(max)
}

/// ⌊x·g⌋ for a gain `g` in parts per billion, saturating. With g = 1/2ⁿ this is exactly `x >> n`.
fn mul(x: u64, g: u64) -> u64 {
    // An RTT's nanoseconds times a gain fit 64 bits (up to 18 s at g = 1): a division by a constant the
    // compiler turns into a multiplication, where the 128-bit one is a library call per sample.
    if let Some(p) = x.checked_mul(g) {
        return p / PPB;
    }
    let p = x as u128 * g as u128 / PPB as u128;
    u64::try_from(p).unwrap_or(u64::MAX)
}

/// RFC 6298's gain `g` (parts per billion), applied as the shift that is exact when `g` is 1/2ⁿ (α = 1/8 and
/// β = 1/4, Jacobson's arithmetic): ⌊x·g⌋ is then `x >> n`, where the general product needs a
/// multiplication, an overflow test and a division by 10⁹ on every ACK's sample.
/// Eight bytes, as the plain gain was (a connection's size counts).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Gain {
    /// At most [`PPB`].
    ppb: u32,
    shift: Option<u8>,
}

impl Gain {
    fn new(ppb: u64) -> Gain {
        let shift = (0..=9u8).find(|&n| ppb == PPB >> n);
        Gain { ppb: ppb.min(PPB) as u32, shift }
    }

    /// ⌊x·g⌋, as [`mul`].
    #[inline]
    fn of(self, x: u64) -> u64 {
        match self.shift {
            Some(n) => x >> n,
            None => mul(x, self.ppb as u64),
        }
    }
}

/// The integer forms of [`RtoParams`]' gains, as [`RttEstimator::with_model`] stores them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Derived {
    alpha: Gain,
    beta: Gain,
    rfc793_gain: u64,
    rfc793_beta: u64,
    mills_up: u64,
    mills_down: u64,
}

impl Derived {
    /// `Derived::of(&RtoParams::default())`, written out (the test `default_params_derive_their_constants`).
    const DEFAULT: Derived = Derived {
        alpha: Gain { ppb: 125_000_000, shift: Some(3) },
        beta: Gain { ppb: 250_000_000, shift: Some(2) },
        rfc793_gain: 125_000_000,
        rfc793_beta: 2_000_000_000,
        mills_up: 250_000_000,
        mills_down: 62_500_000,
    };

    fn of(params: &RtoParams) -> Derived {
        Derived {
            alpha: Gain::new(ppb(params.rfc6298_alpha, PPB)),
            beta: Gain::new(ppb(params.rfc6298_beta, PPB)),
            rfc793_gain: PPB - ppb(params.rfc793_alpha, PPB),
            rfc793_beta: ppb(params.rfc793_beta, u64::MAX),
            mills_up: ppb(params.mills_gain_up, PPB),
            mills_down: ppb(params.mills_gain_down, PPB),
        }
    }
}

/// Moves `s` toward `r` by the fraction `g` (parts per billion) of the gap, rounding toward `s`.
fn toward(s: u64, r: u64, g: u64) -> u64 {
    if r >= s {
        s + mul(r - s, g)
    } else {
        s - mul(s - r, g)
    }
}

/// The Linux state, in Linux's scaling (`struct tcp_sock`): `srtt8` is 8·SRTT (`srtt_us`), `mdev4` is 4 times
/// the mean deviation (`mdev_us`), `mdev_max4` its maximum over the current round trip (`mdev_max_us`) and
/// `rttvar4` the smoothed maximum added to SRTT for the RTO (`rttvar_us`), all in nanoseconds instead of µs.
#[derive(Debug, Clone, Default)]
struct LinuxState {
    srtt8: i64,
    mdev4: i64,
    mdev_max4: i64,
    rttvar4: i64,
    /// When the current round trip began (Linux: `rtt_seq`), if it was started by a timed sample.
    round_start: Option<Instant>,
}

/// Samples beyond this (≈ 18 years) are cut to it so that 8·R fits the signed Linux arithmetic.
const LINUX_MAX_SAMPLE_NS: u64 = 1 << 59;

/// The arithmetic a sample takes: the model's, with RFC 6298 under its own constants (α = 1/8, β = 1/4,
/// K = 4) apart, so that a sample dispatches once where the model's match was followed by a test of the
/// gains (~10 instructions a sample; every ACK of new data with timestamps takes one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Jacobson,
    Rfc6298,
    Linux,
    Rfc793,
    Mills,
}

/// The RTT estimator and RTO of one connection.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    model: RtoModel,
    step: Step,
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    latest: Option<Duration>,
    // Gains in parts per billion, factors as plain numbers.
    rfc6298_alpha: Gain,
    rfc6298_beta: Gain,
    rfc6298_k: u64,
    rfc793_gain: u64,
    rfc793_beta: u64,
    mills_up: u64,
    mills_down: u64,
    linux: LinuxState,
}

impl RttEstimator {
    /// The RFC 6298 estimator with its standard constants: `with_model(RtoModel::Rfc6298, RtoParams::default(), …)`.
    /// `initial_rto` is used until the first sample (RFC 6298 (2.1): 1 s).
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration, granularity: Duration) -> Self {
        Self::with_model(RtoModel::Rfc6298, RtoParams::default(), initial_rto, min_rto, max_rto, granularity)
    }

    /// An estimator of `model` with tunables `params` (see [`RtoParams::validate`]; gains outside [0, 1] are
    /// clamped into it). `initial_rto` is the RTO until the first sample, `min_rto`/`max_rto` bound every RTO
    /// (RFC 793's LBOUND/UBOUND; Linux's `rto_min`/`rto_max`), and `granularity` is RFC 6298's clock
    /// granularity G (the other models do not use it).
    pub fn with_model(
        model: RtoModel,
        params: RtoParams,
        initial_rto: Duration,
        min_rto: Duration,
        max_rto: Duration,
        granularity: Duration,
    ) -> Self {
        // The default tunables (every connection of a scenario that sets none): their integer forms as
        // constants, where the general conversion rounds six floats through the library and searches the
        // shifts (~400 instructions a connection; rr-1000 opens 2,000).
        let g = if params == RtoParams::default() { Derived::DEFAULT } else { Derived::of(&params) };
        debug_assert_eq!(g, Derived::of(&params));
        let (alpha, beta) = (g.alpha, g.beta);
        let step = match model {
            RtoModel::Rfc6298 if alpha.shift == Some(3) && beta.shift == Some(2) && params.rfc6298_k == 4 => {
                Step::Jacobson
            }
            RtoModel::Rfc6298 => Step::Rfc6298,
            RtoModel::Linux => Step::Linux,
            RtoModel::Rfc793 => Step::Rfc793,
            RtoModel::Mills => Step::Mills,
        };
        RttEstimator {
            model,
            step,
            srtt: None,
            rttvar: Duration::ZERO,
            rto: initial_rto.max(min_rto).min(max_rto),
            min_rto,
            max_rto,
            granularity,
            latest: None,
            rfc6298_alpha: alpha,
            rfc6298_beta: beta,
            rfc6298_k: u64::from(params.rfc6298_k),
            rfc793_gain: g.rfc793_gain,
            rfc793_beta: g.rfc793_beta,
            mills_up: g.mills_up,
            mills_down: g.mills_down,
            linux: LinuxState::default(),
        }
    }

    pub fn model(&self) -> RtoModel {
        self.model
    }

    /// Feeds one RTT measurement `r` taken without a clock reading.
    ///
    /// RFC 6298, RFC 793 and Mills do not use time, so this is the same as [`RttEstimator::on_sample_at`]
    /// (and for RFC 6298 exactly what this estimator always did). Linux decays RTTVAR once per round trip;
    /// without a time this call counts as the end of one, which is right when one segment per round trip is
    /// timed (Karn's timed segment) and too fast when every ACK is sampled (timestamps): use
    /// [`RttEstimator::on_sample_at`] then.
    pub fn on_sample(&mut self, r: Duration) {
        self.sample(None, r);
    }

    /// Feeds one RTT measurement `r` taken at `now`.
    ///
    /// Only [`RtoModel::Linux`] uses `now`: Linux ends a round trip, and decays RTTVAR toward the largest mean
    /// deviation seen in it, when SND.UNA passes the SND.NXT recorded at the previous decay (`rtt_seq`). This
    /// estimator has no sequence numbers, so a round trip ends with the first sample taken at least one SRTT
    /// (as updated by that sample) after the previous round trip ended. Untimed [`RttEstimator::on_sample`]
    /// calls may be mixed in: each ends a round trip without moving its start.
    #[inline(always)]
    pub fn on_sample_at(&mut self, now: Instant, r: Duration) {
        self.sample(Some(now), r);
    }

    // Inline: a TCP sender samples on every ACK with timestamps, and the RFC 6298 step is a few shifts and
    // adds, cheaper than the call that saved and restored the registers around it. `#[inline]` alone left
    // it a call (16 instructions of register saves a sample); the other models stay out of line.
    #[inline(always)]
    fn sample(&mut self, now: Option<Instant>, r: Duration) {
        // The default step tested first: one comparison, not the jump table's six instructions.
        if self.step == Step::Jacobson {
            self.sample_jacobson(r);
            self.latest = Some(r);
            return;
        }
        match self.step {
            Step::Jacobson => self.sample_jacobson(r),
            Step::Rfc6298 => self.sample_rfc6298(r),
            Step::Linux => self.sample_linux(now, r),
            Step::Rfc793 => self.sample_rfc793(r, self.rfc793_gain, self.rfc793_gain),
            Step::Mills => self.sample_rfc793(r, self.mills_up, self.mills_down),
        }
        self.latest = Some(r);
    }

    /// RFC 6298 §2 with its own constants (α = 1/8, β = 1/4, K = 4): the shift arithmetic of Jacobson's
    /// code, bit for bit what [`Self::sample_rfc6298`] computes for them (`Gain::of` is `x >> n` at a
    /// gain of 1/2ⁿ, and K·RTTVAR saturates alike).
    #[inline(always)]
    fn sample_jacobson(&mut self, r: Duration) {
        let r_ns = r.as_nanos();
        let (srtt, rttvar) = match self.srtt {
            // RFC 6298 (2.2)
            None => (r_ns, r_ns / 2),
            // RFC 6298 (2.3): RTTVAR first, with the old SRTT.
            Some(srtt) => {
                let s = srtt.as_nanos();
                let v = self.rttvar.as_nanos();
                let err = s.abs_diff(r_ns);
                (s - (s >> 3) + (r_ns >> 3), v - (v >> 2) + (err >> 2))
            }
        };
        self.srtt = Some(Duration::from_nanos(srtt));
        self.rttvar = Duration::from_nanos(rttvar);
        let var_term = Duration::from_nanos(rttvar.saturating_mul(4)).max(self.granularity);
        // RFC 6298 (2.4), (2.5)
        self.rto = (Duration::from_nanos(srtt) + var_term).max(self.min_rto).min(self.max_rto);
    }

    /// RFC 6298 §2 with other gains or K.
    #[inline(never)]
    fn sample_rfc6298(&mut self, r: Duration) {
        let r_ns = r.as_nanos();
        match self.srtt {
            // RFC 6298 (2.2)
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration::from_nanos(r_ns / 2);
            }
            // RFC 6298 (2.3): RTTVAR first, with the old SRTT.
            Some(srtt) => {
                let s = srtt.as_nanos();
                let v = self.rttvar.as_nanos();
                let err = s.abs_diff(r_ns);
                let (a, b) = (self.rfc6298_alpha, self.rfc6298_beta);
                self.rttvar = Duration::from_nanos(v - b.of(v) + b.of(err));
                self.srtt = Some(Duration::from_nanos(s - a.of(s) + a.of(r_ns)));
            }
        }
        let srtt = self.srtt.unwrap_or_default();
        let var_term =
            Duration::from_nanos(self.rfc6298_k.saturating_mul(self.rttvar.as_nanos())).max(self.granularity);
        // RFC 6298 (2.4), (2.5)
        self.rto = (srtt + var_term).max(self.min_rto).min(self.max_rto);
    }

    /// RFC 793 §3.7 (`up == down == 1−ALPHA`) and RFC 889 (`up` > `down`): SRTT moves toward the sample by
    /// `up` of the difference when the sample is larger, by `down` when smaller (rounded toward SRTT). The
    /// first sample becomes SRTT (RFC 793 leaves SRTT's start open; this is RFC 6298 (2.2)'s choice).
    /// RTO = min(UBOUND, max(LBOUND, BETA·SRTT)). There is no variance estimate: RTTVAR stays zero.
    #[inline(never)]
    fn sample_rfc793(&mut self, r: Duration, up: u64, down: u64) {
        let r_ns = r.as_nanos();
        let s = match self.srtt {
            None => r_ns,
            Some(srtt) => {
                let s = srtt.as_nanos();
                toward(s, r_ns, if r_ns > s { up } else { down })
            }
        };
        self.srtt = Some(Duration::from_nanos(s));
        self.rto = Duration::from_nanos(mul(s, self.rfc793_beta)).max(self.min_rto).min(self.max_rto);
    }

    /// Linux `tcp_rtt_estimator()` then `tcp_set_rto()`, statement for statement, in ns instead of µs.
    #[inline(never)]
    fn sample_linux(&mut self, now: Option<Instant>, r: Duration) {
        let rto_min = self.min_rto.as_nanos().min(LINUX_MAX_SAMPLE_NS) as i64; // tcp_rto_min_us()
        let mut m = r.as_nanos().min(LINUX_MAX_SAMPLE_NS) as i64;
        let l = &mut self.linux;
        let mut srtt = l.srtt8;
        if self.srtt.is_some() {
            m -= srtt >> 3; // m is now the error in the RTT estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m; // |error|
                m -= l.mdev4 >> 2;
                // The RTT fell: where |error| exceeds mdev (the sample is below srtt − mdev) the deviation
                // grows with the finer gain 1/32 (α·β, "similar to one of Eifel findings").
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= l.mdev4 >> 2;
            }
            l.mdev4 += m; // mdev = 3/4 mdev + 1/4 new
            if l.mdev4 > l.mdev_max4 {
                l.mdev_max4 = l.mdev4;
                if l.mdev_max4 > l.rttvar4 {
                    l.rttvar4 = l.mdev_max4;
                }
            }
            // Linux: `if (after(tp->snd_una, tp->rtt_seq))`, once per round trip.
            let round_over = match (now, l.round_start) {
                (Some(now), Some(start)) => now.saturating_since(start).as_nanos() >= (srtt.max(1) >> 3) as u64,
                _ => true,
            };
            if round_over {
                if l.mdev_max4 < l.rttvar4 {
                    l.rttvar4 -= (l.rttvar4 - l.mdev_max4) >> 2;
                }
                if now.is_some() {
                    l.round_start = now;
                }
                l.mdev_max4 = rto_min;
            }
        } else {
            // No previous measure.
            srtt = m << 3; // take the measured time to be rtt
            l.mdev4 = m << 1; // make sure rto = 3*rtt
            l.rttvar4 = l.mdev4.max(rto_min);
            l.mdev_max4 = l.rttvar4;
            l.round_start = now;
        }
        l.srtt8 = srtt.max(1);
        // What Linux reports (tcp_get_info(): tcpi_rtt = srtt_us >> 3, tcpi_rttvar = mdev_us >> 2).
        self.srtt = Some(Duration::from_nanos((l.srtt8 >> 3) as u64));
        self.rttvar = Duration::from_nanos((l.mdev4 >> 2) as u64);
        // __tcp_set_rto(): (srtt_us >> 3) + rttvar_us; tcp_bound_rto(): at most rto_max. The lower clamp never
        // bites (rttvar4 >= rto_min), as tcp_set_rto()'s comment says.
        let rto = Duration::from_nanos(((l.srtt8 >> 3) + l.rttvar4) as u64);
        self.rto = rto.max(self.min_rto).min(self.max_rto);
    }

    /// RFC 6298 (5.7): after a SYN timed out, data transmission starts with an RTO of 3 s (`rto`) unless
    /// an RTT sample has been taken.
    pub fn reinitialize_if_unsampled(&mut self, rto: Duration) {
        if self.srtt.is_none() {
            self.rto = rto.max(self.min_rto).min(self.max_rto);
        }
    }

    /// Sets the state as if earlier samples had produced `srtt` and `rttvar`, and recomputes the RTO by the
    /// model's formula. For RDP's SYN-seeded start (Zhang, as used by Partridge 1986) and for starting the
    /// worked examples of RFC 793 / RFC 889 from a given SRTT. [`RtoModel::Linux`] takes `rttvar` as its
    /// mean deviation and per-round maximum.
    pub fn seed(&mut self, srtt: Duration, rttvar: Duration) {
        self.srtt = Some(srtt);
        self.rttvar = rttvar;
        self.rto = match self.model {
            RtoModel::Rfc6298 => {
                let var = Duration::from_nanos(self.rfc6298_k.saturating_mul(rttvar.as_nanos())).max(self.granularity);
                srtt + var
            }
            RtoModel::Rfc793 | RtoModel::Mills => Duration::from_nanos(mul(srtt.as_nanos(), self.rfc793_beta)),
            RtoModel::Linux => {
                let l = &mut self.linux;
                l.srtt8 = (srtt.as_nanos().min(LINUX_MAX_SAMPLE_NS) as i64 * 8).max(1);
                l.mdev4 = rttvar.as_nanos().min(LINUX_MAX_SAMPLE_NS) as i64 * 4;
                l.rttvar4 = l.mdev4.max(self.min_rto.as_nanos().min(LINUX_MAX_SAMPLE_NS) as i64);
                l.mdev_max4 = l.rttvar4;
                l.round_start = None;
                Duration::from_nanos((l.srtt8 >> 3) as u64 + l.rttvar4 as u64)
            }
        }
        .max(self.min_rto)
        .min(self.max_rto);
    }

    /// The smoothed RTT, `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// The RTT variation: RFC 6298's RTTVAR; for Linux the mean deviation it reports as `tcpi_rttvar`
    /// (`mdev_us >> 2`), not the per-round maximum in its RTO; zero for RFC 793 and Mills, which have none.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    /// The RTO before backoff.
    pub fn rto(&self) -> Duration {
        self.rto
    }
    /// RFC 6298 (5.5): the RTO doubled `backoff` times, at most `max_rto`.
    pub fn rto_backed_off(&self, backoff: u32) -> Duration {
        // No backoff (the restart after every ACK of new data): no shift, multiplication or overflow test.
        if backoff == 0 {
            return self.rto.min(self.max_rto);
        }
        let factor = 1u64.checked_shl(backoff.min(32)).unwrap_or(u64::MAX);
        self.rto.saturating_mul(factor).min(self.max_rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default tunables' constants are what the general conversion gives them, and tunables one
    /// part per billion off the default take the general conversion.
    #[test]
    fn default_params_derive_their_constants() {
        assert_eq!(Derived::DEFAULT, Derived::of(&RtoParams::default()));
        let near = RtoParams { rfc6298_alpha: 0.125 + 1e-9, ..RtoParams::default() };
        let e = RttEstimator::with_model(
            RtoModel::Rfc6298,
            near,
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::from_secs(60),
            Duration::ZERO,
        );
        assert_eq!(e.rfc6298_alpha, Gain { ppb: 125_000_001, shift: None });
        assert_eq!(e.step, Step::Rfc6298);
    }

    #[test]
    fn rto_backed_off_doubles_from_the_rto_up_to_max_rto() {
        let mut e = RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(3),
            Duration::ZERO,
        );
        assert_eq!(e.rto_backed_off(0), Duration::from_secs(1));
        assert_eq!(e.rto_backed_off(1), Duration::from_secs(2));
        assert_eq!(e.rto_backed_off(2), Duration::from_secs(3));
        e.on_sample_at(Instant::from_nanos(0), Duration::from_millis(100));
        assert_eq!(e.rto_backed_off(0), e.rto());
        assert_eq!(e.rto_backed_off(1), e.rto().saturating_mul(2));
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }
    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }
    fn at(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }
    fn model(m: RtoModel, min_rto: Duration) -> RttEstimator {
        RttEstimator::with_model(
            m,
            RtoParams::default(),
            Duration::from_secs(1),
            min_rto,
            Duration::from_secs(60),
            ms(1),
        )
    }

    #[test]
    fn a_gain_of_one_over_a_power_of_two_shifts_as_it_multiplies() {
        let xs = [0, 1, 7, 8, 999, 1_000_000_007, 18_000_000_000, u64::MAX / PPB + 1, u64::MAX - 1, u64::MAX];
        for n in 0..=9 {
            let g = Gain::new(PPB >> n);
            assert_eq!(g.shift, Some(n as u8));
            for x in xs {
                assert_eq!(g.of(x), mul(x, PPB >> n), "x = {x}, gain 1/2^{n}");
            }
        }
        assert_eq!(Gain::new(PPB / 3).shift, None);
        assert_eq!(Gain::new(0).shift, None);
    }

    /// The 64-bit product gives the 128-bit one's quotient, on both sides of where it stops fitting.
    #[test]
    fn mul_is_the_wide_floor_on_both_paths() {
        let wide = |x: u64, g: u64| u64::try_from(x as u128 * g as u128 / PPB as u128).unwrap_or(u64::MAX);
        for g in [0, 1, 125_000_000, 250_000_000, 999_999_999, PPB, 4 * PPB, u64::MAX] {
            for x in [0, 1, 7, 2_000_000, 18_446_744_073, 18_446_744_074, 1 << 40, u64::MAX] {
                assert_eq!(mul(x, g), wide(x, g), "x {x} g {g}");
            }
        }
        assert_eq!(mul(1_000_000, 125_000_000), 125_000);
    }

    /// Worked through RFC 6298 §2 by hand with G = 1 ms, min RTO 1 s.
    #[test]
    fn rfc6298_vectors() {
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::from_secs(1), Duration::from_secs(60), ms(1));
        assert_eq!(e.rto(), Duration::from_secs(1)); // (2.1)
        e.on_sample(ms(100)); // SRTT 100, RTTVAR 50, RTO = 100 + 200 = 300 → 1 s floor
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(ms(200)); // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));

        // Without the 1 s floor the RTO formula shows: 112.5 + 4·62.5 = 362.5 ms.
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::ZERO, Duration::from_secs(60), ms(1));
        e.on_sample(ms(100));
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(200));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        // G dominates when the variance vanishes: constant samples drive RTTVAR toward 0, RTO → SRTT + G.
        let mut e = RttEstimator::new(Duration::from_secs(1), Duration::ZERO, Duration::from_secs(60), ms(10));
        for _ in 0..200 {
            e.on_sample(ms(50));
        }
        assert_eq!(e.srtt(), Some(ms(50)));
        assert_eq!(e.rto(), ms(60));
    }

    /// The worked example of the RDP engineering note (B.4.6): start SRTT = 1 s (Jacobson: D = 0.25 s),
    /// samples 2.0 s then 0.5 s; RFC 793 with α = 7/8, β = 2; RFC 889 with F1 = 15/16 (falling),
    /// F2 = 3/4 (rising), G = 2; Jacobson with g = 1/8, h = 1/4, RTO = A + 4D.
    #[test]
    fn worked_example_b46() {
        let est = |m, p| RttEstimator::with_model(m, p, ms(3000), Duration::ZERO, Duration::from_secs(60), ms(1));
        let mut r793 = est(RtoModel::Rfc793, RtoParams::default());
        // RFC 889's constants are the defaults.
        let mut mills = est(RtoModel::Mills, RtoParams::default());
        let mut jac = est(RtoModel::Rfc6298, RtoParams::default());
        r793.seed(ms(1000), Duration::ZERO);
        mills.seed(ms(1000), Duration::ZERO);
        jac.seed(ms(1000), ms(250));
        assert_eq!((r793.rto(), mills.rto(), jac.rto()), (ms(2000), ms(2000), ms(2000)));

        for e in [&mut r793, &mut mills, &mut jac] {
            e.on_sample(ms(2000));
        }
        assert_eq!((r793.srtt(), r793.rto()), (Some(ms(1125)), ms(2250)));
        assert_eq!((mills.srtt(), mills.rto()), (Some(ms(1250)), ms(2500)));
        assert_eq!((jac.srtt(), jac.rttvar(), jac.rto()), (Some(ms(1125)), us(437_500), ms(2875)));

        for e in [&mut r793, &mut mills, &mut jac] {
            e.on_sample(ms(500));
        }
        assert_eq!((r793.srtt(), r793.rto()), (Some(us(1_046_875)), us(2_093_750)));
        assert_eq!((mills.srtt(), mills.rto()), (Some(us(1_203_125)), us(2_406_250)));
        assert_eq!((jac.srtt(), jac.rttvar(), jac.rto()), (Some(us(1_046_875)), us(484_375), us(2_984_375)));
    }

    #[test]
    fn seed_respects_bounds() {
        let mut e = model(RtoModel::Rfc6298, ms(1000));
        e.seed(ms(10), ms(5)); // 10 + 4·5 = 30 ms, below the 1 s floor
        assert_eq!((e.srtt(), e.rto()), (Some(ms(10)), ms(1000)));
        let mut l = model(RtoModel::Linux, ms(200));
        l.seed(ms(100), ms(50)); // Linux's first-sample state for R = 100 ms (see linux_first_sample)
        let mut r = model(RtoModel::Linux, ms(200));
        r.on_sample(ms(100));
        assert_eq!((l.srtt(), l.rto()), (r.srtt(), r.rto()));
        l.on_sample(ms(300));
        r.on_sample(ms(300));
        assert_eq!((l.srtt(), l.rto()), (r.srtt(), r.rto()));
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let e = RttEstimator::new(Duration::from_secs(1), Duration::from_secs(1), Duration::from_secs(60), ms(1));
        assert_eq!(e.rto_backed_off(0), Duration::from_secs(1));
        assert_eq!(e.rto_backed_off(3), Duration::from_secs(8));
        assert_eq!(e.rto_backed_off(6), Duration::from_secs(60));
        assert_eq!(e.rto_backed_off(100), Duration::from_secs(60));
    }

    /// The estimator as it was before models existed, kept verbatim as the reference for bit-identity.
    struct Reference {
        srtt: Option<u64>,
        rttvar: u64,
        rto: u64,
    }
    impl Reference {
        fn on_sample(&mut self, r_ns: u64, min_rto: u64, max_rto: u64, g: u64) {
            match self.srtt {
                None => {
                    self.srtt = Some(r_ns);
                    self.rttvar = r_ns / 2;
                }
                Some(s) => {
                    let v = self.rttvar;
                    let err = s.abs_diff(r_ns);
                    self.rttvar = v - (v >> 2) + (err >> 2);
                    self.srtt = Some(s - (s >> 3) + (r_ns >> 3));
                }
            }
            self.rto = (self.srtt.unwrap() + (4 * self.rttvar).max(g)).max(min_rto).min(max_rto);
        }
    }

    proptest::proptest! {
        /// `new` and the default model reproduce the pre-model estimator exactly, timed or not.
        #[test]
        fn rfc6298_default_is_bit_identical(
            samples in proptest::collection::vec(0u64..5_000_000_000, 1..60),
            min_rto in 0u64..2_000_000_000,
            g in 0u64..100_000_000,
        ) {
            let max_rto = 60_000_000_000;
            let d = Duration::from_nanos;
            let mut old = Reference { srtt: None, rttvar: 0, rto: 1_000_000_000 };
            let mut new = RttEstimator::new(Duration::from_secs(1), d(min_rto), d(max_rto), d(g));
            let mut timed = RttEstimator::with_model(
                RtoModel::Rfc6298, RtoParams::default(), Duration::from_secs(1), d(min_rto), d(max_rto), d(g),
            );
            for (i, &r) in samples.iter().enumerate() {
                old.on_sample(r, min_rto, max_rto, g);
                new.on_sample(d(r));
                timed.on_sample_at(Instant::from_nanos(i as u64 * 7_000_000), d(r));
                for e in [&new, &timed] {
                    proptest::prop_assert_eq!(e.srtt(), old.srtt.map(d));
                    proptest::prop_assert_eq!(e.rttvar(), d(old.rttvar));
                    proptest::prop_assert_eq!(e.rto(), d(old.rto));
                    proptest::prop_assert_eq!(e.latest(), Some(d(r)));
                }
            }
        }
    }

    /// Other RFC 6298 constants, by hand: α = 1/4, β = 1/2, K = 2, G = 1 ms, no floor.
    #[test]
    fn rfc6298_tunables() {
        let p = RtoParams { rfc6298_alpha: 0.25, rfc6298_beta: 0.5, rfc6298_k: 2, ..RtoParams::default() };
        let mut e = RttEstimator::with_model(
            RtoModel::Rfc6298,
            p,
            Duration::from_secs(1),
            Duration::ZERO,
            Duration::MAX,
            ms(1),
        );
        e.on_sample(ms(100)); // SRTT 100, RTTVAR 50 ((2.2) is independent of β), RTO = 100 + 2·50 = 200
        assert_eq!(e.rto(), ms(200));
        e.on_sample(ms(200)); // RTTVAR = 1/2·50 + 1/2·100 = 75; SRTT = 3/4·100 + 1/4·200 = 125; RTO = 125 + 150
        assert_eq!(e.rttvar(), ms(75));
        assert_eq!(e.srtt(), Some(ms(125)));
        assert_eq!(e.rto(), ms(275));
    }

    /// RFC 793 §3.7 by hand: SRTT = ALPHA·SRTT + (1−ALPHA)·RTT, RTO = min(UBOUND, max(LBOUND, BETA·SRTT)).
    #[test]
    fn rfc793_example() {
        // Defaults ALPHA = 0.875, BETA = 2; LBOUND 100 ms, UBOUND 60 s (RFC 793's "e.g., 1 minute").
        let mut e = model(RtoModel::Rfc793, ms(100));
        e.on_sample(ms(100)); // SRTT = 100 (first sample), RTO = 2·100 = 200
        assert_eq!((e.srtt(), e.rto(), e.rttvar()), (Some(ms(100)), ms(200), Duration::ZERO));
        e.on_sample(ms(500)); // SRTT = 0.875·100 + 0.125·500 = 87.5 + 62.5 = 150, RTO = 300
        assert_eq!((e.srtt(), e.rto()), (Some(ms(150)), ms(300)));
        e.on_sample(ms(900)); // SRTT = 0.875·150 + 0.125·900 = 131.25 + 112.5 = 243.75, RTO = 487.5
        assert_eq!((e.srtt(), e.rto()), (Some(us(243_750)), us(487_500)));
        e.on_sample(ms(3)); // SRTT = 0.875·243.75 + 0.125·3 = 213.28125 + 0.375 = 213.65625, RTO = 427.3125
        assert_eq!((e.srtt(), e.rto()), (Some(Duration::from_nanos(213_656_250)), Duration::from_nanos(427_312_500)));

        // The other end of RFC 793's ranges, ALPHA = 0.9 and BETA = 1.3, with LBOUND 1 s ("e.g., 1 second").
        let p = RtoParams { rfc793_alpha: 0.9, rfc793_beta: 1.3, ..RtoParams::default() };
        let mut e = RttEstimator::with_model(RtoModel::Rfc793, p, ms(3000), ms(1000), ms(60_000), ms(1));
        assert_eq!(e.rto(), ms(3000)); // initial RTO until a sample
        e.on_sample(ms(1000)); // SRTT = 1000, RTO = 1.3·1000 = 1300
        assert_eq!(e.rto(), ms(1300));
        e.on_sample(ms(2000)); // SRTT = 0.9·1000 + 0.1·2000 = 1100, RTO = 1430
        assert_eq!((e.srtt(), e.rto()), (Some(ms(1100)), ms(1430)));
        e.on_sample(ms(100)); // SRTT = 990 + 10 = 1000, RTO = 1300
        assert_eq!((e.srtt(), e.rto()), (Some(ms(1000)), ms(1300)));
        for _ in 0..100 {
            e.on_sample(ms(10)); // SRTT → 10 ms, 1.3·SRTT below LBOUND
        }
        assert_eq!(e.rto(), ms(1000));
        e.on_sample(ms(500_000)); // SRTT = 0.9·~10 + 50_000 ≈ 50 s, 1.3·SRTT above UBOUND
        assert_eq!(e.rto(), ms(60_000));
    }

    /// RFC 889: a step up is followed with gain 1/4 (F2 = 3/4), a step down with gain 1/16 (F1 = 15/16), the
    /// defaults, by hand.
    #[test]
    fn mills_asymmetric_response() {
        let mut up = model(RtoModel::Mills, Duration::ZERO);
        up.on_sample(ms(100)); // SRTT 100, RTO = 2·100
        assert_eq!((up.srtt(), up.rto()), (Some(ms(100)), ms(200)));
        // ns: SRTT += (200 − SRTT)/4: 125, 143.75, 157.8125, 168.359375 ms.
        let want = [125_000_000, 143_750_000, 157_812_500, 168_359_375];
        for w in want {
            up.on_sample(ms(200));
            assert_eq!(up.srtt(), Some(Duration::from_nanos(w)));
            assert_eq!(up.rto(), Duration::from_nanos(2 * w));
        }

        let mut down = model(RtoModel::Mills, Duration::ZERO);
        down.on_sample(ms(200));
        // SRTT −= (SRTT − 100)/16: 200 − 6.25 = 193.75; 193.75 − 5.859375 = 187.890625; then
        // ⌊87_890_625/16⌋ = 5_493_164 ns off (rounded toward the old SRTT): 182.397461 ms.
        let want = [193_750_000, 187_890_625, 182_397_461];
        for w in want {
            down.on_sample(ms(100));
            assert_eq!(down.srtt(), Some(Duration::from_nanos(w)));
        }
        // Four samples up cover 68 % of the 100 ms step, three down only 18 %.
        assert_eq!(up.srtt().unwrap() - ms(100), Duration::from_nanos(68_359_375));
        assert!(ms(200) - down.srtt().unwrap() < ms(18));

        // Equal gains make Mills RFC 793.
        let p = RtoParams { mills_gain_up: 0.125, mills_gain_down: 0.125, ..RtoParams::default() };
        let mut m = RttEstimator::with_model(RtoModel::Mills, p, ms(1000), ms(100), ms(60_000), ms(1));
        let mut r = model(RtoModel::Rfc793, ms(100));
        for s in [100, 500, 900, 3, 40, 40, 1000] {
            m.on_sample(ms(s));
            r.on_sample(ms(s));
            assert_eq!((m.srtt(), m.rto()), (r.srtt(), r.rto()));
        }
    }

    /// Linux, first sample (tcp_rtt_estimator(), "no previous measure"), rto_min 200 ms:
    /// srtt = R, mdev = 2R (scaled by 4: 4·R/2), rttvar = max(mdev, rto_min), RTO = srtt + rttvar.
    #[test]
    fn linux_first_sample() {
        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample(ms(100)); // srtt 100, mdev 200 (= 4·50), rttvar max(200, 200) = 200, RTO 300
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(ms(100)), ms(50), ms(300)));

        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample(ms(50)); // mdev 100, rttvar max(100, 200) = 200, RTO 250 (RFC 6298: max(50 + 100, 200) = 200)
        assert_eq!(e.rto(), ms(250));
        let mut r = model(RtoModel::Rfc6298, ms(200));
        r.on_sample(ms(50));
        assert_eq!(r.rto(), ms(200));

        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample(ms(400)); // mdev 800 > rto_min: RTO = 400 + 800 = 3·R ("make sure rto = 3*rtt")
        assert_eq!(e.rto(), ms(1200));
    }

    /// Linux on a steady path: mdev decays to nothing but rttvar stays at rto_min, so RTO = SRTT + 200 ms.
    #[test]
    fn linux_steady_path_floor() {
        for r in [1, 10, 100, 1000] {
            let mut e = model(RtoModel::Linux, ms(200));
            let mut rfc = model(RtoModel::Rfc6298, ms(200));
            for i in 0..2000 {
                e.on_sample_at(at(i * r / 4), ms(r)); // four samples per round trip
                rfc.on_sample(ms(r));
                assert!(e.rto() >= e.srtt().unwrap() + ms(200));
            }
            assert_eq!(e.srtt(), Some(ms(r)));
            assert_eq!(e.rttvar(), Duration::ZERO);
            if 2 * r <= 200 {
                // The first rttvar, max(2R, 200), is the floor itself and nothing ever exceeds it.
                assert_eq!(e.rto(), ms(r + 200));
            } else {
                // rttvar decayed from 2R to the floor, short of it by at most 3 ns (⌊excess/4⌋ = 0).
                assert!(e.rto() - ms(r + 200) <= Duration::from_nanos(3), "{}", e.rto());
            }
            // RFC 6298 with the same floor goes down to max(SRTT + G, 200 ms).
            assert_eq!(rfc.rto(), ms(r + 1).max(ms(200)));
        }
    }

    /// Linux's mdev gain is 1/4, but 1/32 when the sample falls below srtt − mdev. By hand (real units,
    /// mdev as the mean deviation; Linux keeps 4·mdev, whose updates are Jacobson's m − mdev/4 terms).
    #[test]
    fn linux_falling_rtt_uses_finer_gain() {
        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample(ms(100)); // srtt 100, mdev 50
        e.on_sample(ms(20)); // error −80; srtt 90; |80| − 50 = 30 > 0 → 30/8: mdev = 50 + 3.75/4 = 50.9375
        assert_eq!(e.srtt(), Some(ms(90)));
        assert_eq!(e.rttvar(), Duration::from_nanos(50_937_500));
        // rttvar (4·mdev) rose to the new maximum 203.75: RTO = 90 + 203.75.
        assert_eq!(e.rto(), us(293_750));
        // RFC 6298's gain for the same samples: RTTVAR = 3/4·50 + 1/4·80 = 57.5.
        let mut r = model(RtoModel::Rfc6298, Duration::ZERO);
        r.on_sample(ms(100));
        r.on_sample(ms(20));
        assert_eq!(r.rttvar(), us(57_500));

        // Below srtt but not below srtt − mdev (90 − 50.9375): the normal gain, shrinking mdev.
        e.on_sample(ms(60)); // error −30; srtt 86.25; 30 − 50.9375 < 0 → mdev = 50.9375 − 20.9375/4 = 45.703125
        assert_eq!(e.srtt(), Some(us(86_250)));
        assert_eq!(e.rttvar(), Duration::from_nanos(45_703_125));

        // A rise gets the full 1/4: from srtt 100, mdev 50, a sample of 300 gives error 200, srtt 125,
        // mdev = 50 + (200 − 50)/4 = 87.5; rttvar = 4·87.5 = 350; RTO = 475.
        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample(ms(100));
        e.on_sample(ms(300));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(ms(125)), us(87_500), ms(475)));
    }

    /// Linux's rttvar holds the largest mdev of the round trip and decays by a quarter of its excess over the
    /// round's maximum (at least rto_min) when a round ends. Values are 4·mdev as Linux keeps them, in ms.
    #[test]
    fn linux_rttvar_decays_once_per_round_trip() {
        let mut e = model(RtoModel::Linux, ms(200));
        e.on_sample_at(at(0), ms(80)); // srtt 80, mdev 160, rttvar max(160, 200) = 200; RTO 280; round from 0
        assert_eq!(e.rto(), ms(280));
        e.on_sample_at(at(1), ms(400)); // err 320: srtt 120; mdev 160 + 320 − 40 = 440 = max = rttvar; RTO 560
        assert_eq!((e.srtt(), e.rto()), (Some(ms(120)), ms(560)));
        e.on_sample_at(at(2), ms(120)); // err 0: mdev 440 − 110 = 330; 2 ms < srtt: same round, rttvar held
        assert_eq!(e.rto(), ms(560));
        e.on_sample_at(at(200), ms(120)); // mdev 247.5; 200 ms ≥ srtt: round ends, max 440 = rttvar: no decay,
        assert_eq!(e.rto(), ms(560)); // the new round's max starts at rto_min 200
        e.on_sample_at(at(210), ms(120)); // mdev 185.625 < 200; same round
        assert_eq!(e.rto(), ms(560));
        e.on_sample_at(at(400), ms(120)); // round ends with max 200: rttvar −= (440 − 200)/4 = 60 → 380
        assert_eq!(e.rto(), ms(500));
        e.on_sample_at(at(600), ms(120)); // rttvar −= (380 − 200)/4 = 45 → 335
        assert_eq!(e.rto(), ms(455));
        // Each round removes ⌊excess/4⌋, so rttvar approaches rto_min but, as in Linux (in µs there), keeps an
        // excess of up to 3 ns once ⌊excess/4⌋ is 0.
        for i in 4..200 {
            e.on_sample_at(at(i * 200), ms(120));
        }
        assert!(e.rto() >= ms(320) && e.rto() - ms(320) <= Duration::from_nanos(3), "{}", e.rto());

        // Untimed samples each end a round trip, so the same samples decay rttvar from the third one on:
        // after 400, rttvar = max = 440 and the max restarts at 200; after 120, mdev 330 is the round's max and
        // rttvar −= (440 − 330)/4 = 27.5 → 412.5; after the next 120, mdev 247.5 is the max and
        // rttvar −= (412.5 − 247.5)/4 = 41.25 → 371.25. RTO = 120 + 371.25.
        let mut u = model(RtoModel::Linux, ms(200));
        for r in [80, 400, 120, 120] {
            u.on_sample(ms(r));
        }
        assert_eq!(u.rto(), us(120_000 + 371_250));
    }

    #[test]
    fn linux_respects_max_and_reinitialize() {
        let mut e = RttEstimator::with_model(
            RtoModel::Linux,
            RtoParams::default(),
            ms(1000),
            ms(200),
            ms(2000),
            Duration::ZERO,
        );
        e.reinitialize_if_unsampled(ms(3000));
        assert_eq!(e.rto(), ms(2000)); // capped at max_rto
        e.on_sample(ms(1500)); // 1500 + 3000 → tcp_bound_rto()
        assert_eq!(e.rto(), ms(2000));
        e.reinitialize_if_unsampled(ms(3000)); // sampled: no effect
        assert_eq!(e.rto_backed_off(1), ms(2000));
        assert_eq!(e.latest(), Some(ms(1500)));
    }

    #[test]
    fn serde_names_and_defaults() {
        #[derive(Deserialize, Serialize)]
        struct W {
            model: RtoModel,
            #[serde(default)]
            params: RtoParams,
        }
        for (name, m) in [
            ("rfc6298", RtoModel::Rfc6298),
            ("linux", RtoModel::Linux),
            ("rfc793", RtoModel::Rfc793),
            ("mills", RtoModel::Mills),
        ] {
            let w: W = toml::from_str(&format!("model = \"{name}\"")).unwrap();
            assert_eq!(w.model, m);
            assert_eq!(w.params, RtoParams::default());
            assert!(toml::to_string(&w).unwrap().contains(&format!("model = \"{name}\"")));
        }
        assert_eq!(RtoModel::default(), RtoModel::Rfc6298);
        let w: W = toml::from_str("model = \"rfc793\"\n[params]\nrfc793_alpha = 0.9\nrfc793_beta = 1.3\n").unwrap();
        assert_eq!(w.params, RtoParams { rfc793_alpha: 0.9, rfc793_beta: 1.3, ..RtoParams::default() });
        assert!(toml::from_str::<W>("model = \"bsd\"").is_err());
        assert!(toml::from_str::<W>("model = \"linux\"\n[params]\nalpha = 0.1\n").is_err());
        let back: RtoParams = toml::from_str(&toml::to_string(&RtoParams::default()).unwrap()).unwrap();
        assert_eq!(back, RtoParams::default());
    }

    #[test]
    fn params_validate() {
        assert_eq!(RtoParams::default().validate(), Ok(()));
        let bad = [
            RtoParams { rfc6298_alpha: 0.0, ..RtoParams::default() },
            RtoParams { rfc6298_beta: 1.5, ..RtoParams::default() },
            RtoParams { rfc793_alpha: 1.0, ..RtoParams::default() },
            RtoParams { rfc793_beta: 0.5, ..RtoParams::default() },
            RtoParams { mills_gain_up: f64::NAN, ..RtoParams::default() },
            RtoParams { mills_gain_down: -0.1, ..RtoParams::default() },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }
}
