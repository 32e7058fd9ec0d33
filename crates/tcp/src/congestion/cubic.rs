//! CUBIC window growth and decrease (RFC 9438), with an optional HyStart delay detector (Linux `tcp_cubic.c`).
//!
//! Read RFC 9438 §4.1 (constants and variables), §4.2 (the window increase function W_cubic, K, the per-ACK
//! target), §4.3 (Reno-friendly region, W_est and α_cubic), §4.4–§4.5 (concave and convex regions), §4.6
//! (multiplicative decrease), §4.7 (fast convergence), §4.8 (timeout), §4.10 (slow start) and §5.8
//! (application-limited flows). HyStart: Ha and Rhee, "Taming the elephants" (2011) and Linux
//! `net/ipv4/tcp_cubic.c` (`hystart_update`); RFC 9406 (HyStart++) §4.2 for the per-round comparison.
//!
//! The RFC's formulas count segments and seconds; this controller keeps its state in bytes and converts with
//! the SMSS each event carries: W_cubic in bytes is C·SMSS·(t − K)³ + W_max, and K = ∛((W_max − cwnd_epoch)
//! / (C·SMSS)) is the same number of seconds. cwnd is kept as an `f64` number of bytes so that per-ACK
//! increments smaller than a byte add up; [`CongestionControl::window`] reports it rounded down. All time
//! comes from the `now` arguments; nothing here reads a clock, and the arithmetic is plain `f64`.
//!
//! Choices the RFC leaves open, or that the trait forces:
//! - ssthresh = max(FlightSize·β, 2·SMSS) from the flight size the connection passes (§4.6; RFC 5681 (4)
//!   likewise starts from FlightSize; a connection that passes cwnd gets the cwnd-based variant §4.6 also
//!   describes); cwnd = ssthresh after a fast retransmit.
//! - Leaving recovery sets cwnd = ssthresh (§4.6 gives no other formula; RFC 6582's
//!   min(ssthresh, FlightSize + SMSS) is NewReno's and is not used here).
//! - The Reno-friendly rule "cwnd = W_est when W_cubic(t) < W_est" (§4.3) never lowers cwnd on an ACK.
//! - Idle and application-limited time does not count in t (§5.8): the controller only sees the ACKs it is
//!   told about, so when two consecutive ACKs are further apart than one smoothed RTT, the excess moves
//!   t_epoch forward (the exact idle time when a sender restarts after idling: its first ACK comes one RTT
//!   after it resumed sending).
//! - Without an RTT estimate (`srtt` is `None`) the target is W_cubic(t), i.e. RTT = 0.

use serde::{Deserialize, Serialize};

use super::{Abc, AckInfo, CongestionControl, CongestionEvent, Growth, SlowStartExit, INFINITE_SSTHRESH, MAX_CWND};
use tcplab_units::{Duration, Instant};

/// CUBIC's parameters (RFC 9438 §4.1.1, §4.3, §4.7; HyStart from Linux `tcp_cubic.c`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// C, the aggressiveness of the cubic window increase function W_cubic(t) = C·(t − K)³ + W_max, in
    /// segments per second³. Default 0.4 (RFC 9438 §4.1.1, §4.2).
    pub c: f64,
    /// β_cubic, the multiplicative window decrease factor: ssthresh = FlightSize·β after a congestion event.
    /// Dimensionless, in (0, 1). Default 0.7 (RFC 9438 §4.1.1, §4.6). It also sets the Reno-friendly
    /// additive increase α_cubic = 3(1 − β)/(1 + β) (§4.3).
    pub beta: f64,
    /// Fast convergence: on a congestion event below the previous W_max, remember only
    /// W_max = cwnd·(1 + β)/2, releasing bandwidth to newer flows. Default on (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Reno-friendly region: track the window W_est an AIMD(α_cubic, β) flow would have and never grow slower
    /// than it (cwnd = W_est when W_cubic(t) < W_est). Default on (RFC 9438 §4.3).
    pub reno_friendly: bool,
    /// HyStart as Linux `tcp_cubic.c` runs it (both detectors, `hystart_detect` = 3; RFC 9438 §4.10 allows
    /// a slow-start variant): once cwnd ≥ 16 segments, slow start ends (ssthresh = cwnd) when the round's
    /// ACK train — ACKs at most `hystart_ack_delta` apart since the round's first ACK — lasts longer than
    /// half the connection's minimum RTT, or when the round's minimum RTT, after 8 samples, exceeds the
    /// connection's minimum RTT by clamp(min / 8, 4 ms, 16 ms). Needs [`AckInfo::rtt_sample`]. Counted in
    /// HystartTrainDetect / HystartDelayDetect. Default off.
    pub hystart: bool,
    /// The largest gap between two ACKs of HyStart's ACK train (Linux `hystart_ack_delta_us`). Default 2ms.
    pub hystart_ack_delta: Duration,
    /// Whether W_est's additive increase becomes 1 segment per RTT once W_est reaches cwnd_prior (RFC 9438
    /// §4.3). Linux (`tcp_friendliness`) keeps α = 3(1 − β)/(1 + β) throughout. Default on (the RFC).
    pub alpha_switch: bool,
    /// Until the first congestion event, and again after a timeout, congestion avoidance grows cwnd by at
    /// least one segment per 20 acknowledged (5% per RTT) however flat W_cubic is there: Linux
    /// `bictcp_update` caps `cnt` at 20 while `last_max_cwnd` is 0 ("the initial growth of cubic function
    /// may be too conservative when the available bandwidth is still unknown"), which matters after HyStart
    /// ends slow start without loss (W_max = cwnd_epoch, K = 0, RFC 9438 §4.10). Not in RFC 9438.
    /// Default off.
    pub growth_floor_before_loss: bool,
    /// A congestion event computes in whole segments, as Linux's `bictcp_recalc_ssthresh` does with its
    /// packet-counted cwnd: ssthresh = max(⌊⌊cwnd/SMSS⌋ · β₁₀₂₄ / 1024⌋, 2) segments and W_max =
    /// ⌊cwnd/SMSS⌋ (with fast convergence ⌊⌊cwnd/SMSS⌋ · (1024 + β₁₀₂₄) / 2048⌋) segments, where β₁₀₂₄ is β
    /// in 1/1024 units (0.7 → 717, Linux's `beta`). After recovery cwnd = ssthresh is then a whole number of
    /// segments, and growth restarts from there: at windows of 10–15 segments that costs about 0.5 segment
    /// a cycle against RFC 9438 §4.6's FlightSize·β in bytes (−11% goodput at 10 Mbit/s, 20 ms, 1% loss;
    /// docs/tcp.md). Default off (the RFC).
    pub whole_segments: bool,
    /// Congestion avoidance in Linux's integer arithmetic (`bictcp_update`, `tcp_cong_avoid_ai`), in whole
    /// packets and timer ticks (`TcpConfig::tick`, the jiffy): the target is the origin point (W_max, or
    /// cwnd when the stage starts at or above it) ± C·(t − K)³ with t the ticks since the stage began plus
    /// the minimum RTT, in 1/1024 s, and K an integer cube root; cwnd grows by one packet per `cnt` =
    /// cwnd / (target − cwnd) packets ACKed, `cnt` at least 2 (1.5× per RTT), at most 20 before the first
    /// loss, at most cwnd / (W_est − cwnd) behind a Reno estimate that gains a packet per cwnd·15/8
    /// packets ACKed (`beta_scale`); `cnt` is recomputed at most once a tick, and not within HZ/32 while
    /// cwnd stays. So growth comes in whole packets at the ACKs where the count fills, where RFC 9438's
    /// W_cubic(t + SRTT) in bytes grows cwnd by a fraction on every ACK. Linux's cube root is a table
    /// lookup and a Newton step; this one is exact (they differ by a fraction of a percent of K). Default
    /// off (the RFC).
    #[serde(skip_serializing_if = "is_false")]
    pub bictcp: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: false,
            hystart_ack_delta: Duration::from_millis(2),
            alpha_switch: true,
            growth_floor_before_loss: false,
            whole_segments: false,
            bictcp: false,
        }
    }
}

impl CubicConfig {
    /// α_cubic = 3(1 − β)/(1 + β) (RFC 9438 §4.3, eq. 4): the Reno-friendly additive increase in segments per
    /// RTT, ≈ 0.529 for β = 0.7.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// Checks the ranges the formulas need: C > 0 and 0 < β < 1 (both finite).
    pub fn validate(&self) -> Result<(), &'static str> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err("cubic c must be a positive number");
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err("cubic beta must be between 0 and 1 (exclusive)");
        }
        Ok(())
    }
}

/// HyStart: below this many segments of cwnd the delay detector stays quiet (Linux `hystart_low_window`).
const HYSTART_LOW_WINDOW: u32 = 16;
/// HyStart: RTT samples a round needs before its minimum is trusted (Linux `HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// HyStart: bounds of the RTT increase that ends slow start (Linux `HYSTART_DELAY_MIN`/`MAX`, RFC 9406 §4.2).
const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// HyStart: what the ACK train's threshold adds to the minimum RTT (Linux 5.7+ `hystart_ack_delay`:
/// min(1 ms, 2·`sk_gso_max_segs` segments at the pacing rate), 1 ms below ~130 Gbit/s with GSO_MAX_SEGS).
const HYSTART_ACK_DELAY: Duration = Duration::from_millis(1);

/// CUBIC (RFC 9438) as a [`CongestionControl`]. See the module documentation for the choices it makes.
#[derive(Debug, Clone)]
pub struct Cubic {
    cfg: CubicConfig,
    abc: Abc,
    /// Congestion window, bytes (fractional: sub-byte per-ACK increments accumulate).
    cwnd: f64,
    ssthresh: u32,
    /// W_max (RFC 9438 §4.1.2), bytes: the window before the last reduction, lowered by fast convergence.
    /// `None` before the first congestion event and after a timeout: the next congestion-avoidance stage then
    /// takes its starting window (§4.8, §4.10).
    w_max: Option<f64>,
    /// cwnd_prior (§4.1.2), bytes: cwnd when ssthresh was last set; W_est's α_cubic becomes 1 there (§4.3).
    cwnd_prior: f64,
    /// The current congestion-avoidance stage, begun by its first ACK; `None` outside one.
    epoch: Option<Epoch>,
    /// When the previous ACK arrived, to keep idle time out of t (§5.8).
    last_ack: Option<Instant>,
    hystart: HyStart,
    /// (cwnd, ssthresh, W_max, cwnd_prior) before the last congestion event, for undo (§4.9).
    prior: Option<(f64, u32, Option<f64>, f64)>,
    /// No fast retransmit since the start or the last timeout (Linux `last_max_cwnd` = 0), for
    /// `growth_floor_before_loss`.
    no_loss_yet: bool,
    /// Under `bictcp`: Linux's `struct bictcp` counters, and the tick they count time in.
    bic: Bic,
    tick: Duration,
    /// The connection is paced (fq, or a pacing rate set): HyStart's ACK train waits twice as long.
    paced: bool,
}

/// Linux's `bictcp_update` state (`bictcp`), in packets; the stage's start is [`Epoch::start`].
#[derive(Debug, Clone, Copy, Default)]
struct Bic {
    /// Packets ACKed per packet of growth (`cnt`), and the growth credit (`snd_cwnd_cnt`).
    cnt: u32,
    cwnd_cnt: u32,
    /// cwnd and the tick when `cnt` was last computed.
    last_cwnd: u32,
    last_time: u64,
    /// The stage's origin point, packets, and K, 1/1024 s.
    origin: u32,
    k: u64,
    /// The Reno-friendly estimate, packets, and the packets ACKed toward its next increment.
    tcp_cwnd: u32,
    ack_cnt: u32,
}

/// One congestion-avoidance stage (RFC 9438 §4.2).
#[derive(Debug, Clone, Copy)]
struct Epoch {
    /// t_epoch, moved forward by idle time.
    start: Instant,
    /// K, seconds (§4.2 eq. 2); negative when the stage starts above W_max.
    k: f64,
    /// W_max for this stage, bytes.
    w_max: f64,
    /// W_est (§4.3), bytes.
    w_est: f64,
}

/// Linux HyStart (`tcp_cubic.c`: `bictcp_hystart_reset`, `hystart_update`, `bictcp_acked`), with rounds
/// counted in bytes: a round ends with the ACK that takes SND.UNA past everything that was outstanding
/// when it began (Linux: `after(snd_una, end_seq)`, `end_seq` = SND.NXT at the round's first ACK). Rounds
/// run from the first slow-start ACK; the detectors look only from cwnd = 16 segments on (Linux 6.13,
/// "tcp_cubic: fix incorrect HyStart round start detection": before it, rounds too began only at 16, and
/// a round begun there ran past the RTT round it started in).
#[derive(Debug, Clone, Copy, Default)]
struct HyStart {
    /// Bytes of the current round still to be acknowledged; below zero the round is over, and the ACK
    /// that took it there begins the next one.
    round_left: i64,
    /// When the round's first ACK arrived, and the last ACK of the round's unbroken ACK train.
    round_start: Option<Instant>,
    last_ack: Option<Instant>,
    /// Minimum RTT sample of the current round (`curr_rtt`), and how many samples it has seen.
    round_min: Option<Duration>,
    samples: u32,
    /// The smallest RTT sample of the connection (`delay_min`), the base both detectors compare with.
    delay_min: Option<Duration>,
    /// HyStart ended slow start; it stays quiet until a timeout (Linux `found`).
    found: bool,
    /// The detector that fired, until the connection has counted it.
    exit: Option<SlowStartExit>,
}

impl HyStart {
    /// `bictcp_acked`: every RTT sample lowers `delay_min`, except in the first second of a
    /// congestion-avoidance stage (Linux discards those right after a recovery).
    fn on_rtt_sample(&mut self, rtt: Duration) {
        self.delay_min = Some(self.delay_min.map_or(rtt, |m| m.min(rtt)));
    }

    /// `hystart_update` for one slow-start ACK with cwnd (before this ACK's growth); true when slow start
    /// should end.
    /// `paced`: the connection is paced (Linux's `sk_pacing_status` not NONE), which makes the ACK train's
    /// threshold twice as long.
    fn on_ack(&mut self, now: Instant, a: &AckInfo, cwnd: u32, ack_delta: Duration, paced: bool) -> bool {
        if self.found {
            return false;
        }
        self.round_left -= a.acked as i64;
        if self.round_left < 0 || self.round_start.is_none() {
            // bictcp_hystart_reset: a new round, to end past SND.NXT (the flight after this ACK).
            self.round_left = a.flight_size.saturating_sub(a.acked) as i64;
            self.round_start = Some(now);
            self.last_ack = Some(now);
            self.round_min = None;
            self.samples = 0;
        }
        if cwnd < HYSTART_LOW_WINDOW.saturating_mul(a.smss) {
            return false;
        }
        let Some(delay_min) = self.delay_min else { return false };
        // ACK train: ACKs no more than `ack_delta` apart since the round began; once the train is longer
        // than delay_min plus `hystart_ack_delay` (1 ms at any rate below ~100 Gbit/s), halved for an
        // unpaced connection, cwnd is about to fill the path.
        if let (Some(start), Some(last)) = (self.round_start, self.last_ack) {
            if now.saturating_since(last) <= ack_delta {
                self.last_ack = Some(now);
                let threshold = delay_min + HYSTART_ACK_DELAY;
                let threshold = if paced { threshold } else { Duration::from_nanos(threshold.as_nanos() / 2) };
                if now.saturating_since(start) > threshold {
                    self.found = true;
                    self.exit = Some(SlowStartExit::AckTrain);
                    return true;
                }
            }
        }
        // Delay: the round's minimum RTT over more than HYSTART_MIN_SAMPLES samples exceeds delay_min by
        // clamp(delay_min / 8, 4 ms, 16 ms).
        let Some(rtt) = a.rtt_sample else { return false };
        self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
        if self.samples < HYSTART_MIN_SAMPLES {
            self.samples += 1;
            return false;
        }
        let eta = Duration::from_nanos(delay_min.as_nanos() / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
        if self.round_min.is_some_and(|cur| cur > delay_min + eta) {
            self.found = true;
            self.exit = Some(SlowStartExit::Delay);
        }
        self.found
    }
}

impl Cubic {
    /// A controller starting in slow start at `initial_window` bytes with an infinite ssthresh; `abc` limits
    /// the slow-start increase per ACK exactly as for [`super::Reno`]. The SMSS comes with every event.
    /// Panics if `cfg` fails [`CubicConfig::validate`].
    pub fn new(initial_window: u32, abc: Abc, cfg: CubicConfig) -> Self {
        if let Err(e) = cfg.validate() {
            panic!("{e}");
        }
        Cubic {
            cfg,
            abc,
            cwnd: initial_window as f64,
            ssthresh: INFINITE_SSTHRESH,
            w_max: None,
            cwnd_prior: 0.0,
            epoch: None,
            last_ack: None,
            hystart: HyStart::default(),
            prior: None,
            no_loss_yet: true,
            bic: Bic::default(),
            tick: Duration::ZERO,
            paced: false,
        }
    }

    /// The connection is paced whatever the controller asks (the fq qdisc, `max_pacing_rate`).
    pub fn paced(mut self, paced: bool) -> Self {
        self.paced = paced;
        self
    }

    /// Under `bictcp`, time counts in ticks of `tick` (Linux's jiffy; 1 ms when zero).
    pub fn with_tick(mut self, tick: Duration) -> Self {
        self.tick = tick;
        self
    }

    /// The parameters this controller runs with.
    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// W_max in bytes (RFC 9438 §4.1.2), `None` until a congestion event and between a timeout and the next
    /// congestion-avoidance stage.
    pub fn w_max(&self) -> Option<u32> {
        self.w_max.map(|w| w as u32)
    }

    /// K of the current congestion-avoidance stage, the time from its start until W_cubic reaches W_max
    /// (RFC 9438 §4.2 eq. 2); zero when the stage started at or above W_max, `None` outside a stage.
    pub fn k(&self) -> Option<Duration> {
        if self.cfg.bictcp {
            return self.epoch.map(|_| Duration::from_nanos(self.bic.k * 1_000_000_000 / 1024));
        }
        self.epoch.map(|e| Duration::from_secs_f64(e.k.max(0.0)))
    }

    /// A congestion-avoidance stage starts with this ACK (§4.2): t_epoch = now, cwnd_epoch = cwnd, W_est =
    /// cwnd_epoch (§4.3); without a W_max (after a timeout, or a slow start ended without loss) W_max =
    /// cwnd_epoch and K = 0 (§4.8, §4.10).
    fn start_epoch(&mut self, now: Instant, smss: f64) -> Epoch {
        let cwnd = self.cwnd;
        let w_max = *self.w_max.get_or_insert(cwnd);
        Epoch { start: now, k: ((w_max - cwnd) / (self.cfg.c * smss)).cbrt(), w_max, w_est: cwnd }
    }

    /// Slow start as Reno: RFC 5681 §3.1 (2) with RFC 3465 byte counting. HyStart looks at the ACK first,
    /// as Linux's `pkts_acked` hook runs before `cong_avoid`; when it ends slow start (ssthresh = cwnd) this
    /// ACK grows nothing.
    fn slow_start(&mut self, now: Instant, a: &AckInfo) -> Growth {
        self.epoch = None;
        if self.cfg.hystart && self.hystart.on_ack(now, a, self.window(), self.cfg.hystart_ack_delta, self.paced) {
            self.ssthresh = self.window();
            self.cwnd_prior = self.cwnd;
            return Growth::None;
        }
        self.cwnd = (self.cwnd
            + self.abc.slow_start_increase(a.acked, a.smss, a.after_rto, self.window(), self.ssthresh) as f64)
            .min(MAX_CWND as f64);
        Growth::SlowStart
    }
}

impl Cubic {
    /// The tick `bictcp` counts time in (1 ms when the connection's timers have none).
    fn tick_len(&self) -> Duration {
        if self.tick.is_zero() {
            Duration::from_millis(1)
        } else {
            self.tick
        }
    }

    /// Congestion avoidance as Linux's `cubictcp_cong_avoid` after slow start: `bictcp_update`, then
    /// `tcp_cong_avoid_ai` (the `bictcp` knob). Idle time leaves the stage through `on_idle_restart`
    /// (Linux moves `epoch_start` when it sends again), not through the gap between ACKs.
    fn bictcp_avoid(&mut self, now: Instant, a: &AckInfo) -> Growth {
        let smss = a.smss.max(1);
        let cwnd = (self.window() / smss).max(1);
        let acked = a.acked.div_ceil(smss);
        let tick = self.tick_len();
        let hz = (1_000_000_000 / tick.as_nanos()).max(1);
        let ticks = |t: Instant| t.as_nanos() / tick.as_nanos();
        let now_t = ticks(now);
        let last_max = if self.no_loss_yet { 0 } else { self.w_max.map_or(0, |w| (w / smss as f64) as u32) };
        let delay_min = self.hystart.delay_min.unwrap_or(Duration::ZERO);
        let cube_rtt_scale = (self.cfg.c * 1024.0).round() as u64;
        let beta = (self.cfg.beta * 1024.0).round() as u32;
        let b = &mut self.bic;
        b.ack_cnt = b.ack_cnt.saturating_add(acked);
        let same = b.last_cwnd == cwnd && now_t.saturating_sub(b.last_time) <= hz / 32;
        if !same {
            if self.epoch.is_none() || now_t != b.last_time {
                b.last_cwnd = cwnd;
                b.last_time = now_t;
                let ep = *self.epoch.get_or_insert_with(|| {
                    b.ack_cnt = acked;
                    b.tcp_cwnd = cwnd;
                    if last_max <= cwnd {
                        (b.k, b.origin) = (0, cwnd);
                    } else {
                        // K = ∛((W_max − cwnd) / C) seconds, in 1/1024 s: ∛((W_max − cwnd) · 2^40 / (1024·C)).
                        let factor = (1u64 << 40) / cube_rtt_scale.max(1);
                        (b.k, b.origin) = (cube_root(factor.saturating_mul((last_max - cwnd) as u64)), last_max);
                    }
                    Epoch { start: now, k: 0.0, w_max: 0.0, w_est: 0.0 }
                });
                let rtt_ticks = delay_min.as_nanos().div_ceil(tick.as_nanos());
                let t = ((now_t.saturating_sub(ticks(ep.start)) + rtt_ticks) << 10) / hz;
                let offs = t.abs_diff(b.k) as u128;
                let delta = ((cube_rtt_scale as u128 * offs * offs * offs) >> 40).min(u32::MAX as u128) as u32;
                let target = if t < b.k { b.origin.saturating_sub(delta) } else { b.origin.saturating_add(delta) };
                b.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
                if self.cfg.growth_floor_before_loss && last_max == 0 {
                    b.cnt = b.cnt.min(20);
                }
            }
            if self.cfg.reno_friendly {
                // W_est in packets: one more every cwnd · beta_scale / 8 packets ACKed, where beta_scale =
                // 8(1024 + β)/3/(1024 − β) (15 for β = 717) makes its slope 3(1 − β)/(1 + β) per RTT.
                let beta_scale = 8 * (1024 + beta) / 3 / (1024 - beta).max(1);
                let per = ((cwnd * beta_scale) >> 3).max(1);
                if b.ack_cnt > per {
                    let n = (b.ack_cnt - 1) / per;
                    b.ack_cnt -= n * per;
                    b.tcp_cwnd += n;
                }
                if b.tcp_cwnd > cwnd {
                    b.cnt = b.cnt.min(cwnd / (b.tcp_cwnd - cwnd));
                }
            }
            b.cnt = b.cnt.max(2);
        }
        // tcp_cong_avoid_ai: credit left from a larger `cnt` is spent first.
        let mut grown = cwnd;
        if b.cwnd_cnt >= b.cnt {
            b.cwnd_cnt = 0;
            grown += 1;
        }
        b.cwnd_cnt += acked;
        if b.cwnd_cnt >= b.cnt {
            let n = b.cwnd_cnt / b.cnt;
            b.cwnd_cnt -= n * b.cnt;
            grown += n;
        }
        self.cwnd = (grown as f64 * smss as f64).min(MAX_CWND as f64);
        Growth::CongAvoid { grew: grown > cwnd }
    }
}

/// ⌊∛x⌋.
fn cube_root(x: u64) -> u64 {
    let mut r = (x as f64).cbrt() as u64;
    while r > 0 && (r as u128).pow(3) > x as u128 {
        r -= 1;
    }
    while ((r + 1) as u128).pow(3) <= x as u128 {
        r += 1;
    }
    r
}

impl CongestionControl for Cubic {
    fn window(&self) -> u32 {
        self.cwnd as u32
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    fn on_ack(&mut self, now: Instant, a: &AckInfo) -> Growth {
        let gap = self.last_ack.map(|t| now.saturating_since(t));
        self.last_ack = Some(now);
        if let Some(rtt) = a.rtt_sample {
            let settling = self.epoch.is_some_and(|e| now.saturating_since(e.start) < Duration::from_secs(1));
            if !settling {
                self.hystart.on_rtt_sample(rtt);
            }
        }
        if self.window() < self.ssthresh {
            let before = self.window();
            let growth = self.slow_start(now, a);
            if !self.cfg.bictcp || self.window() < self.ssthresh {
                return growth;
            }
            // Linux: `tcp_slow_start` hands back what it did not use once cwnd reaches ssthresh, and when
            // HyStart ends slow start (in `pkts_acked`, before `cong_avoid`) the whole ACK is left; either
            // way `bictcp_update` takes the rest on the same ACK.
            let rest = a.acked.saturating_sub(self.window().saturating_sub(before));
            if rest == 0 {
                return growth;
            }
            return self.bictcp_avoid(now, &AckInfo { acked: rest, ..*a });
        }
        if self.cfg.bictcp {
            return self.bictcp_avoid(now, a);
        }
        let smss = a.smss.max(1) as f64;
        let mut ep = match self.epoch {
            Some(mut ep) => {
                // §5.8: time without ACKs beyond one RTT was idle or application-limited; it does not count.
                if let (Some(gap), Some(srtt)) = (gap, a.srtt) {
                    if gap > srtt {
                        ep.start += gap - srtt;
                    }
                }
                ep
            }
            None => self.start_epoch(now, smss),
        };
        let cwnd = self.cwnd;
        let cfg = self.cfg;
        let w_cubic = |t: f64| {
            let d = t - ep.k;
            cfg.c * smss * d * d * d + ep.w_max
        };
        let t = now.saturating_since(ep.start).as_secs_f64();
        let rtt = a.srtt.map_or(0.0, Duration::as_secs_f64);
        // The fraction of a window this ACK covers: (acked / SMSS) segments over cwnd / SMSS segments.
        let frac = (a.acked as f64 / cwnd).min(1.0);
        if cfg.reno_friendly {
            // §4.3 eq. 4: W_est += α_cubic · segments_acked / cwnd, α_cubic = 1 from cwnd_prior on.
            let alpha = if cfg.alpha_switch && ep.w_est >= self.cwnd_prior { 1.0 } else { cfg.alpha() };
            ep.w_est += alpha * smss * frac;
        }
        if cfg.reno_friendly && w_cubic(t) < ep.w_est {
            // §4.3: Reno-friendly region.
            self.cwnd = cwnd.max(ep.w_est);
        } else {
            // §4.4, §4.5: target = W_cubic(t + RTT) within [cwnd, 1.5·cwnd]; cwnd += (target − cwnd)/cwnd
            // per acknowledged segment.
            let target = w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            self.cwnd = cwnd + (target - cwnd) * frac;
        }
        if cfg.growth_floor_before_loss && self.no_loss_yet {
            self.cwnd = self.cwnd.max(cwnd + a.acked as f64 / 20.0);
        }
        self.cwnd = self.cwnd.min(MAX_CWND as f64);
        self.epoch = Some(ep);
        Growth::CongAvoid { grew: self.cwnd as u32 > cwnd as u32 }
    }

    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, flight_size: u32, smss: u32) {
        self.epoch = None;
        // Linux zeroes `snd_cwnd_cnt` as a reduction or a loss begins (`tcp_init_cwnd_reduction`,
        // `tcp_enter_loss`).
        self.bic.cwnd_cnt = 0;
        if event == (CongestionEvent::Timeout { first: false }) {
            // A repeated timeout of the same segment: loss window again, ssthresh and W_max held.
            self.cwnd = smss as f64;
            return;
        }
        self.prior = Some((self.cwnd, self.ssthresh, self.w_max, self.cwnd_prior));
        let cwnd = self.cwnd;
        let beta = self.cfg.beta;
        // §4.7: a congestion event below the previous W_max remembers less of it.
        let converging = matches!(self.w_max, Some(w) if self.cfg.fast_convergence && cwnd < w);
        if self.cfg.whole_segments {
            // Linux: `bictcp_recalc_ssthresh` on the packet count, integer arithmetic throughout.
            let beta_1024 = (beta * 1024.0).round() as u64;
            let (segs, flight_segs) = ((cwnd / smss as f64) as u64, (flight_size / smss.max(1)) as u64);
            let w_max = if converging { segs * (1024 + beta_1024) / 2048 } else { segs };
            self.w_max = Some((w_max * smss as u64) as f64);
            self.ssthresh = ((flight_segs * beta_1024 / 1024).max(2) * smss as u64).min(MAX_CWND as u64) as u32;
        } else {
            self.w_max = Some(if converging { cwnd * (1.0 + beta) / 2.0 } else { cwnd });
            // §4.6: ssthresh = max(FlightSize·β, 2 SMSS); cwnd_prior = cwnd.
            self.ssthresh = ((flight_size as f64 * beta).round() as u32).max(2 * smss);
        }
        self.cwnd_prior = cwnd;
        match event {
            CongestionEvent::FastRetransmit => {
                self.cwnd = self.ssthresh as f64;
                self.no_loss_yet = false;
            }
            CongestionEvent::Timeout { .. } => {
                // Linux resets CUBIC on entering TCP_CA_Loss (`bictcp_reset`: last_max_cwnd = 0).
                self.no_loss_yet = true;
                // §4.8: loss window of 1 SMSS as Reno (RFC 5681 §3.1); the next congestion-avoidance stage
                // starts from its own window (W_max = cwnd_epoch, K = 0).
                self.cwnd = smss as f64;
                self.w_max = None;
                self.hystart = HyStart::default();
            }
        }
    }

    fn on_spurious_congestion_event(&mut self) {
        // RFC 9438 §4.9: back to cwnd, ssthresh, W_max and cwnd_prior as they were before the event.
        if let Some((cwnd, ssthresh, w_max, cwnd_prior)) = self.prior.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = ssthresh;
            self.w_max = w_max;
            self.cwnd_prior = cwnd_prior;
            self.epoch = None;
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant, _flight_size: u32, _smss: u32) {
        // §4.6 leaves cwnd at ssthresh (not RFC 6582's FlightSize + SMSS); a new stage starts at the next ACK.
        self.cwnd = self.ssthresh as f64;
        self.epoch = None;
    }

    fn take_slow_start_exit(&mut self) -> Option<SlowStartExit> {
        self.hystart.exit.take()
    }

    fn set_ssthresh(&mut self, ssthresh: u32) {
        self.ssthresh = ssthresh;
    }

    fn on_idle_restart(&mut self, now: Instant, last_sent: Instant) {
        // `bictcp_cwnd_event`: the stage's start moves by the idle time, in ticks, at most to now.
        if !self.cfg.bictcp {
            return;
        }
        let tick = self.tick_len().as_nanos();
        if let Some(ep) = self.epoch.as_mut() {
            let idle = (now.as_nanos() / tick).saturating_sub(last_sent.as_nanos() / tick);
            let start = (ep.start.as_nanos() / tick + idle).min(now.as_nanos() / tick);
            ep.start = Instant::from_nanos(start * tick);
        }
    }

    fn set_window(&mut self, cwnd: u32) {
        self.cwnd = cwnd.min(MAX_CWND) as f64;
        // A reduction from outside (cwnd validation, moderation, restart) also caps the Reno estimate, so that
        // the next ACK does not jump back to it; the cubic target is limited to 1.5·cwnd per RTT anyway.
        if let Some(ep) = &mut self.epoch {
            ep.w_est = ep.w_est.min(self.cwnd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    const RTT: Duration = Duration::from_millis(100);

    fn ack(acked: u32, flight: u32, rtt: Option<Duration>) -> AckInfo {
        AckInfo { acked, smss: MSS, flight_size: flight, after_rto: false, srtt: rtt, rtt_sample: rtt }
    }

    fn segs(bytes: u32) -> f64 {
        bytes as f64 / MSS as f64
    }

    /// A controller in congestion avoidance just after a fast retransmit at `w_max` segments (and the end of
    /// that recovery), cwnd-limited, with nothing before that.
    fn after_loss(w_max: u32, cfg: CubicConfig) -> Cubic {
        let mut cc = Cubic::new(10 * MSS, Abc::L1, cfg);
        cc.set_window(w_max * MSS);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, w_max * MSS, MSS);
        cc.on_recovery_exit(Instant::ZERO, 0, MSS);
        cc
    }

    /// A cwnd-limited sender: each RTT brings one ACK of one SMSS for every segment cwnd held when the RTT
    /// began, spread evenly over it. Runs from `start` while `now < end` and returns the next ACK time;
    /// `probe` sees the controller after every ACK.
    fn drive(
        cc: &mut Cubic,
        start: Instant,
        end: Instant,
        rtt: Duration,
        mut probe: impl FnMut(Instant, &Cubic),
    ) -> Instant {
        let mut round = start;
        while round < end {
            let n = (cc.window() / MSS).max(1) as u64;
            for i in 0..n {
                let now = round + Duration::from_nanos(rtt.as_nanos() * i / n);
                if now >= end {
                    return now;
                }
                cc.on_ack(now, &ack(MSS, cc.window(), Some(rtt)));
                probe(now, cc);
            }
            round += rtt;
        }
        round
    }

    /// Slow start ended without loss at 500 segments (as HyStart ends it: ssthresh = cwnd), then one
    /// second of congestion avoidance at RTT 100 ms. RFC 9438 §4.10 starts the stage with W_max = cwnd and
    /// K = 0, so W_cubic stays flat (0.4·t³ segments) and the Reno-friendly estimate adds one segment per
    /// RTT (α = 1 past cwnd_prior): 510. Linux grows at least one segment per 20 acknowledged until the
    /// first loss: 500 · 1.05^10 ≈ 814. After a fast retransmit the floor is gone; after a timeout it is back.
    #[test]
    fn growth_floor_before_the_first_loss() {
        let after_1s = |floor: bool, event: Option<CongestionEvent>| {
            let cfg = CubicConfig { growth_floor_before_loss: floor, ..CubicConfig::default() };
            let mut cc = Cubic::new(10 * MSS, Abc::L1, cfg);
            if let Some(e) = event {
                cc.set_window(700 * MSS);
                cc.on_congestion_event(Instant::ZERO, e, 700 * MSS, MSS);
            }
            cc.set_window(500 * MSS);
            cc.set_ssthresh(500 * MSS);
            let start = Instant::from_nanos(1_000_000_000);
            drive(&mut cc, start, start + Duration::from_secs(1), RTT, |_, _| {});
            segs(cc.window())
        };
        let rfc = after_1s(false, None);
        assert!((509.0..511.0).contains(&rfc), "RFC 9438: {rfc} segments");
        let linux = after_1s(true, None);
        assert!((500.0 * 1.05f64.powi(10) * 0.98..500.0 * 1.05f64.powi(10) * 1.02).contains(&linux), "{linux}");
        let fr = Some(CongestionEvent::FastRetransmit);
        assert_eq!(after_1s(true, fr), after_1s(false, fr), "no floor after a fast retransmit");
        let after_rto = after_1s(true, Some(CongestionEvent::Timeout { first: true }));
        assert!((linux * 0.99..linux * 1.01).contains(&after_rto), "after a timeout: {after_rto} segments");
    }

    #[test]
    fn reduction_is_beta_times_flight() {
        // RFC 9438 §4.6: ssthresh = cwnd·β_cubic, cwnd = ssthresh (FlightSize = cwnd here).
        let cc = after_loss(100, CubicConfig::default());
        assert_eq!((cc.window(), cc.ssthresh()), (70 * MSS, 70 * MSS));
        assert_eq!(cc.w_max(), Some(100 * MSS));
        let mut cc = Cubic::new(10 * MSS, Abc::L1, CubicConfig::default());
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 2 * MSS, MSS);
        assert_eq!(cc.ssthresh(), 2 * MSS, "floor of 2 SMSS");
    }

    #[test]
    fn whole_segments_reduce_as_linux_counts() {
        // Linux `bictcp_recalc_ssthresh` on a packet count, β = 717/1024: cwnd 13.5 segments counts as 13,
        // ssthresh ⌊13·717/1024⌋ = 9 segments (RFC: 13.5·0.7 = 9.45); 8 → 5 (5.6); 2 → 2 (the floor).
        let cfg = CubicConfig { whole_segments: true, ..CubicConfig::default() };
        for (cwnd, ssthresh, rfc) in [(13_500, 9 * MSS, 9_450), (8 * MSS, 5 * MSS, 5_600), (2 * MSS, 2 * MSS, 2 * MSS)]
        {
            let mut cc = Cubic::new(10 * MSS, Abc::L1, cfg);
            cc.set_window(cwnd);
            cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, cwnd, MSS);
            assert_eq!((cc.ssthresh(), cc.window()), (ssthresh, ssthresh), "cwnd {cwnd}");
            assert_eq!(cc.w_max(), Some(cwnd / MSS * MSS), "cwnd {cwnd}");
            let mut rfc_cc = Cubic::new(10 * MSS, Abc::L1, CubicConfig::default());
            rfc_cc.set_window(cwnd);
            rfc_cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, cwnd, MSS);
            assert_eq!(rfc_cc.ssthresh(), rfc, "RFC 9438 at cwnd {cwnd}");
        }
        // Fast convergence in whole segments: a loss at 90 below W_max 100 remembers ⌊90·1741/2048⌋ = 76.
        let mut cc = after_loss(100, cfg);
        cc.set_window(90 * MSS + 600);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 90 * MSS + 600, MSS);
        assert_eq!(cc.w_max(), Some(76 * MSS));
        assert_eq!(cc.ssthresh(), 63 * MSS);
    }

    /// `bictcp`, in Linux's numbers: a loss at 10 packets (W_max 10, ssthresh ⌊10·717/1024⌋ = 7), minimum RTT
    /// 100 ms, 4 ms ticks. The stage's first ACK computes K = ⌊∛(3·2⁴⁰/410)⌋ = 2003/1024 s and, at t = 25
    /// ticks (the RTT) = 102/1024 s, target = 10 − ⌊410·1901³/2⁴⁰⌋ = 8, so `cnt` = 7/(8 − 7) = 7: cwnd
    /// becomes 8 at the 7th packet ACKed and not before, where RFC 9438's bytes grow a fraction every ACK.
    /// Much later, past K, the target is far above cwnd and `cnt` is its floor 2: one packet of growth per
    /// two packets ACKed.
    #[test]
    fn bictcp_counts_packets_as_linux() {
        let cfg = CubicConfig { whole_segments: true, bictcp: true, ..CubicConfig::default() };
        let mut cc = Cubic::new(10 * MSS, Abc::L1, cfg).with_tick(Duration::from_millis(4));
        cc.on_ack(Instant::ZERO, &ack(MSS, 10 * MSS, Some(RTT)));
        cc.set_window(10 * MSS);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 10 * MSS, MSS);
        cc.on_recovery_exit(Instant::ZERO, 0, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (7 * MSS, 7 * MSS));
        let start = Instant::from_nanos(2_000_000_000);
        let mut seen = Vec::new();
        for i in 0..8u64 {
            cc.on_ack(start + Duration::from_micros(100 * i), &ack(MSS, 7 * MSS, Some(RTT)));
            seen.push(cc.window() / MSS);
        }
        assert_eq!(seen, [7, 7, 7, 7, 7, 7, 8, 8]);
        assert_eq!(cc.k(), Some(Duration::from_nanos(2003 * 1_000_000_000 / 1024)));
        // An ACK every 10 ms for 10 s, then 6 more: far past K the target runs away and `cnt` is 2.
        let mut now = start;
        for _ in 0..1000 {
            now += Duration::from_millis(10);
            cc.on_ack(now, &ack(MSS, cc.window(), Some(RTT)));
        }
        let before = cc.window() / MSS;
        for _ in 0..6 {
            now += Duration::from_millis(10);
            cc.on_ack(now, &ack(MSS, cc.window(), Some(RTT)));
        }
        assert_eq!(cc.window() / MSS, before + 3);

        let rfc = CubicConfig { whole_segments: true, ..CubicConfig::default() };
        let mut cc = after_loss(10, rfc);
        cc.on_ack(Instant::ZERO, &ack(MSS, 7 * MSS, Some(RTT)));
        cc.on_ack(start, &ack(MSS, 7 * MSS, Some(RTT)));
        assert!(cc.cwnd > 7.0 * MSS as f64 && cc.window() < 8 * MSS, "RFC 9438 grows a fraction: {}", cc.cwnd);
    }

    /// cwnd in segments at the first ACK at or after each of `checks` seconds into the stage that starts
    /// after a loss at 100 segments, RTT 100 ms.
    fn trajectory(cfg: CubicConfig, checks: &[f64]) -> Vec<(f64, f64)> {
        let mut cc = after_loss(100, cfg);
        let mut seen = Vec::new();
        let start = Instant::from_nanos(1_000_000_000);
        let end = start + Duration::from_secs_f64(checks[checks.len() - 1] + 0.5);
        drive(&mut cc, start, end, RTT, |now, cc| {
            let t = now.saturating_since(start).as_secs_f64();
            if seen.len() < checks.len() && t >= checks[seen.len()] {
                seen.push((t, segs(cc.window())));
            }
        });
        assert_eq!(seen.len(), checks.len());
        seen
    }

    #[test]
    fn window_follows_the_cubic_function() {
        // RFC 9438 §4.2: W_cubic(t) = C(t − K)³ + W_max with K = ∛(W_max(1 − β)/C) after a reduction to β·W_max.
        let cfg = CubicConfig::default();
        let k = (100.0 * (1.0 - cfg.beta) / cfg.c).cbrt();
        assert!((k - 4.2172).abs() < 1e-4, "K = {k}");
        let w_cubic = |t: f64| cfg.c * (t - k).powi(3) + 100.0;
        let checks = [0.5 * k, k, 1.5 * k, 2.0 * k];
        let close = |got: f64, want: f64| (got - want).abs() <= (0.02 * want).max(1.0);
        // The cubic function alone (§4.4 concave, §4.5 convex).
        let cubic_only = CubicConfig { reno_friendly: false, ..cfg };
        for (t, cwnd) in trajectory(cubic_only, &checks) {
            assert!(close(cwnd, w_cubic(t)), "t = {t:.3} s: cwnd {cwnd:.2}, W_cubic {:.2}", w_cubic(t));
        }
        // With the Reno-friendly region (§4.3), cwnd = max(W_cubic, W_est): W_est grows α_cubic per RTT from
        // 70 to cwnd_prior = 100 segments (by 5.67 s), then 1 per RTT, and leads W_cubic from about 5.9 s to
        // 8.2 s, so at 1.5·K (6.33 s) cwnd is W_est ≈ 106.6 segments rather than W_cubic = 103.75.
        let rtts = |t: f64| t / RTT.as_secs_f64();
        let t_prior = 30.0 / cfg.alpha() * RTT.as_secs_f64();
        let w_est = |t: f64| if t < t_prior { 70.0 + cfg.alpha() * rtts(t) } else { 100.0 + rtts(t - t_prior) };
        for (t, cwnd) in trajectory(cfg, &checks) {
            let want = w_cubic(t).max(w_est(t));
            assert!(
                close(cwnd, want),
                "t = {t:.3} s: cwnd {cwnd:.2}, W_cubic {:.2}, W_est {:.2}",
                w_cubic(t),
                w_est(t)
            );
        }
        assert!(w_est(1.5 * k) > w_cubic(1.5 * k) + 2.0);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        // RFC 9438 §4.7: a loss at cwnd < W_max remembers W_max = cwnd·(1 + β)/2.
        let mut cc = after_loss(100, CubicConfig::default());
        cc.set_window(90 * MSS);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 90 * MSS, MSS);
        assert_eq!(cc.w_max(), Some(76_500));
        assert_eq!(cc.window(), 63 * MSS);
        // And K follows from it: ∛((76.5 − 63)/0.4) s.
        cc.on_recovery_exit(Instant::ZERO, 0, MSS);
        cc.on_ack(Instant::ZERO, &ack(MSS, 63 * MSS, Some(RTT)));
        let k = cc.k().unwrap().as_secs_f64();
        assert!((k - (13.5f64 / 0.4).cbrt()).abs() < 1e-6, "K = {k}");

        let cfg = CubicConfig { fast_convergence: false, ..CubicConfig::default() };
        let mut cc = after_loss(100, cfg);
        cc.set_window(90 * MSS);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 90 * MSS, MSS);
        assert_eq!(cc.w_max(), Some(90 * MSS), "without fast convergence W_max = cwnd");
        // A loss above the previous W_max sets W_max = cwnd with fast convergence too.
        let mut cc = after_loss(100, CubicConfig::default());
        cc.set_window(120 * MSS);
        cc.on_congestion_event(Instant::ZERO, CongestionEvent::FastRetransmit, 120 * MSS, MSS);
        assert_eq!(cc.w_max(), Some(120 * MSS));
    }

    #[test]
    fn reno_friendly_region_dominates_at_short_rtt() {
        // RFC 9438 §4.3: with a small window and a short RTT, W_est grows α_cubic ≈ 0.53 segments per RTT up
        // to cwnd_prior, then 1 segment per RTT, far faster than W_cubic.
        let rtt = Duration::from_millis(10);
        let cfg = CubicConfig::default();
        let run = |cfg: CubicConfig| {
            let mut cc = after_loss(30, cfg);
            let mut at = Vec::new();
            let mut now = Instant::ZERO;
            for _ in 0..40 {
                at.push(segs(cc.window()));
                now = drive(&mut cc, now, now + rtt, rtt, |_, _| {});
            }
            at
        };
        let w = run(cfg);
        assert_eq!(w[0], 21.0);
        let per_rtt = (w[10] - w[0]) / 10.0;
        assert!((per_rtt - cfg.alpha()).abs() < 0.05, "{per_rtt:.3} segments per RTT, α = {:.3}", cfg.alpha());
        // Past cwnd_prior = 30 segments, α_cubic = 1.
        assert!(w[25] > 30.0);
        let per_rtt = (w[39] - w[25]) / 14.0;
        assert!((per_rtt - 1.0).abs() < 0.05, "{per_rtt:.3} segments per RTT");
        // Without the Reno-friendly region, W_cubic alone grows much more slowly here.
        let w = run(CubicConfig { reno_friendly: false, ..cfg });
        assert!(w[10] - w[0] < 1.5, "{:.3}", w[10] - w[0]);
    }

    #[test]
    fn timeouts_set_loss_window_and_hold_ssthresh_on_repeat() {
        // RFC 9438 §4.8: cwnd = 1 SMSS as Reno, ssthresh = β·FlightSize.
        let t = Instant::ZERO;
        let mut cc = Cubic::new(10 * MSS, Abc::L1, CubicConfig::default());
        cc.set_window(100 * MSS);
        cc.on_congestion_event(t, CongestionEvent::Timeout { first: true }, 100 * MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 70 * MSS));
        cc.on_congestion_event(t, CongestionEvent::Timeout { first: false }, MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 70 * MSS));
        // Slow start back to ssthresh; the congestion-avoidance stage then starts with W_max = cwnd_epoch and
        // K = 0 (convex from its start).
        let mut now = t;
        while cc.window() < cc.ssthresh() {
            now += Duration::from_millis(1);
            assert_eq!(cc.on_ack(now, &ack(MSS, cc.window(), Some(RTT))), Growth::SlowStart);
        }
        let cwnd_epoch = cc.window();
        assert!(matches!(cc.on_ack(now, &ack(MSS, cc.window(), Some(RTT))), Growth::CongAvoid { .. }));
        assert_eq!(cc.w_max(), Some(cwnd_epoch));
        assert_eq!(cc.k(), Some(Duration::ZERO));
    }

    #[test]
    fn config_defaults_and_ranges() {
        let cfg = CubicConfig::default();
        assert_eq!(
            (cfg.c, cfg.beta, cfg.fast_convergence, cfg.reno_friendly, cfg.hystart, cfg.alpha_switch),
            (0.4, 0.7, true, true, false, true)
        );
        assert_eq!(cfg.hystart_ack_delta, Duration::from_millis(2));
        assert!((cfg.alpha() - 0.5294).abs() < 1e-4, "α_cubic = 3(1 − β)/(1 + β)");
        assert!(cfg.validate().is_ok());
        assert!(CubicConfig { beta: 1.0, ..cfg }.validate().is_err());
        assert!(CubicConfig { c: 0.0, ..cfg }.validate().is_err());
    }

    #[test]
    fn slow_start_limits_by_abc() {
        let t = Instant::ZERO;
        let mk = |abc| Cubic::new(2 * MSS, abc, CubicConfig::default());
        let (mut off, mut l1, mut l2) = (mk(Abc::Off), mk(Abc::L1), mk(Abc::L2));
        for cc in [&mut off, &mut l1, &mut l2] {
            assert_eq!(cc.on_ack(t, &ack(2 * MSS, 2 * MSS, None)), Growth::SlowStart);
        }
        assert_eq!((off.window(), l1.window(), l2.window()), (3 * MSS, 3 * MSS, 4 * MSS));
        l2.on_ack(t, &AckInfo { after_rto: true, ..ack(2 * MSS, 2 * MSS, None) });
        assert_eq!(l2.window(), 5 * MSS, "L = 1 SMSS after an RTO");
        off.on_ack(t, &ack(100, 3 * MSS, None));
        assert_eq!(off.window(), 4 * MSS, "packet counting ignores how much was acked");
    }

    #[test]
    fn idle_time_is_not_counted() {
        // RFC 9438 §5.8: t must not include idle periods, or W_cubic(t) would be far above cwnd on restart.
        let cfg = CubicConfig::default();
        let one_run = |idle: Duration| {
            let mut cc = after_loss(100, cfg);
            let mid = Instant::from_nanos(1_000_000_000);
            let now = drive(&mut cc, Instant::ZERO, mid, RTT, |_, _| {});
            drive(&mut cc, now + idle, now + idle + Duration::from_secs(2), RTT, |_, _| {});
            segs(cc.window())
        };
        let (busy, idle) = (one_run(Duration::ZERO), one_run(Duration::from_secs(30)));
        assert!((busy - idle).abs() < 1.0, "busy {busy:.2}, after idling {idle:.2}");
    }

    /// Rounds of slow start from IW 10 with ACK L1 counting (+1 segment per ACK): round k carries as many
    /// ACKs as cwnd held at its start, `spacing` apart, starting k·RTT in (or `spacing` after the previous
    /// round's last ACK, if that is later); from round 4 on the RTT is RTT + `bump`. Returns (cwnd,
    /// ssthresh, round) at the first ACK after slow start ended, and the detector that ended it.
    fn hystart_run(cfg: CubicConfig, spacing: Duration, bump: Duration) -> (u32, u32, u32, Option<SlowStartExit>) {
        hystart_run_paced(cfg, spacing, bump, false)
    }

    fn hystart_run_paced(
        cfg: CubicConfig,
        spacing: Duration,
        bump: Duration,
        paced: bool,
    ) -> (u32, u32, u32, Option<SlowStartExit>) {
        let mut cc = Cubic::new(10 * MSS, Abc::L1, cfg).paced(paced);
        let mut exit = None;
        let mut last = Instant::ZERO;
        for round in 0..8u32 {
            let rtt = if round >= 4 { RTT + bump } else { RTT };
            let n = cc.window() / MSS;
            let start = (Instant::ZERO + RTT.saturating_mul(round as u64 + 1)).max(last + spacing);
            for i in 0..n {
                if cc.window() >= cc.ssthresh() {
                    return (cc.window() / MSS, cc.ssthresh() / MSS, round, exit);
                }
                let now = start + spacing.saturating_mul(i as u64);
                last = now;
                cc.on_ack(now, &ack(MSS, cc.window(), Some(rtt)));
                exit = exit.or(cc.take_slow_start_exit());
            }
        }
        (cc.window() / MSS, INFINITE_SSTHRESH, 8, exit)
    }

    #[test]
    fn hystart_delay_detector_against_the_minimum_rtt() {
        // Linux hystart_update: after 8 samples in the round, a round minimum above delay_min +
        // clamp(delay_min / 8, 4 ms, 16 ms) = 100 + 12.5 ms ends slow start. ACKs 3 ms apart never form a
        // train (2 ms limit). HyStart's rounds run from the first ACK, each ending past what was in flight
        // at its start: here the RTT rounds. Round 4 starts at cwnd 160; its 9th ACK (cwnd 168) fires, and
        // grows nothing.
        let on = CubicConfig { hystart: true, ..CubicConfig::default() };
        let spaced = Duration::from_millis(3);
        let got = hystart_run(on, spaced, Duration::from_millis(13));
        assert_eq!(got, (168, 168, 4, Some(SlowStartExit::Delay)));
        assert_eq!(hystart_run(on, spaced, Duration::from_millis(12)).1, INFINITE_SSTHRESH, "below the threshold");
        assert_eq!(hystart_run(CubicConfig::default(), spaced, Duration::from_millis(13)).1, INFINITE_SSTHRESH);
    }

    #[test]
    fn hystart_ack_train_detector() {
        // ACKs 1 ms apart: a round's train passes (delay_min + 1 ms) / 2 = 50.5 ms at its 52nd ACK (51 ms
        // after the first). Round 3 starts at cwnd 80: exit at 80 + 51 = 131 segments, before any delay
        // increase. Rounds 0-2 (10, 20, 40 ACKs) are too short.
        let on = CubicConfig { hystart: true, ..CubicConfig::default() };
        let got = hystart_run(on, Duration::from_millis(1), Duration::ZERO);
        assert_eq!(got, (131, 131, 3, Some(SlowStartExit::AckTrain)));
        // 3 ms gaps break the train under the 2 ms limit; with a 3 ms limit they form one, and round 1
        // (20 ACKs over 57 ms, cwnd past 16 segments) passes 50.5 ms at its 18th ACK: 20 + 17 = 37.
        assert_eq!(hystart_run(on, Duration::from_millis(3), Duration::ZERO).1, INFINITE_SSTHRESH);
        let wide = CubicConfig { hystart_ack_delta: Duration::from_millis(3), ..on };
        let got = hystart_run(wide, Duration::from_millis(3), Duration::ZERO);
        assert_eq!(got, (37, 37, 1, Some(SlowStartExit::AckTrain)));
        // Paced (fq), Linux waits for a train of the whole delay_min + 1 ms = 101 ms: round 3's 80 ACKs are
        // too few, round 4 (cwnd 160) passes 101 ms at its 103rd ACK: 160 + 102 = 262.
        let got = hystart_run_paced(on, Duration::from_millis(1), Duration::ZERO, true);
        assert_eq!(got, (262, 262, 4, Some(SlowStartExit::AckTrain)));
    }

    #[test]
    fn cwnd_saturates_at_the_cap() {
        // As Reno: a flow whose cwnd is never validated stops growing at MAX_CWND, in slow start and in
        // congestion avoidance.
        let mut cc = Cubic::new(10 * MSS, Abc::Unlimited, CubicConfig::default());
        let mut now = Instant::ZERO;
        for i in 0..4_000 {
            now += Duration::from_millis(1);
            if i == 2_000 {
                assert_eq!(cc.window(), MAX_CWND, "slow start stops at the cap");
                cc.on_congestion_event(now, CongestionEvent::FastRetransmit, MAX_CWND, MSS);
            }
            cc.on_ack(now, &ack(1 << 20, 1 << 20, Some(RTT)));
            assert!(cc.window() <= MAX_CWND, "ACK {i}: {}", cc.window());
        }
    }
}
