//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time) as mainline Linux runs it
//! (`net/ipv4/tcp_bbr.c`, unchanged in substance from 4.9 to 6.18): a model of the path, not a reaction to
//! loss. The bottleneck bandwidth is the windowed maximum of the delivery rate over 10 round trips, the
//! propagation delay the minimum RTT over 10 s; the sender paces at a gain times the bandwidth and keeps
//! cwnd at a gain times the bandwidth-delay product.
//!
//! Read: Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00 (BBR v1's algorithm in prose);
//! draft-cheng-iccrg-delivery-rate-estimation (the rate samples, the connection's `DeliveryRate`).
//!
//! Modes: STARTUP (pacing and cwnd gain 2/ln 2 ≈ 2.885, which doubles the rate every round) until the
//! bandwidth estimate stops growing by 25% for 3 rounds; DRAIN (pacing gain ln 2 / 2) until what is in
//! flight falls to one BDP; PROBE_BW, cycling the pacing gain over 8 phases (5/4, 3/4, then six of 1; the
//! first phase drawn at random, never the 3/4 one) with cwnd gain 2; PROBE_RTT (cwnd 4 packets for at least
//! 200 ms and one round) when the minimum RTT was not refreshed for 10 s. Long-term ("policer") sampling:
//! two intervals of 4–16 rounds with a loss rate of 20% or more and the same delivery rate (within 1/8
//! or 4 kbit/s) set the bandwidth to their average for 48 rounds. ACK aggregation: the data ACKed beyond
//! what the estimate explains, maximum over 5–10 rounds, is added to cwnd (at most 100 ms of the
//! bandwidth). Recovery: the first round of fast recovery sends one packet per packet delivered (packet
//! conservation), later rounds at most two; on leaving recovery cwnd returns to its value before it.
//!
//! Linux counts packets, and so does this model's window (cwnd, the BDP and its quanta in whole segments
//! of SMSS); the bandwidth is kept in bytes per second, from the byte counts of the delivery-rate
//! sampler, where Linux keeps packets per µs << 24. Gains are Linux's fixed-point values (×256).

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use tcplab_units::{Duration, Instant};

use super::{
    AckContext, AckInfo, CaState, CongestionControl, CongestionEvent, Controller, ControllerFactory, Growth,
    ModelStats, RateSample, INFINITE_SSTHRESH, MAX_CWND,
};

/// Gains are fractions of this (Linux `BBR_UNIT`).
const UNIT: u32 = 256;
/// 2/ln 2 (Linux `bbr_high_gain`): the smallest gain that doubles the sending rate every round.
const HIGH_GAIN: u32 = UNIT * 2885 / 1000 + 1;
/// ln 2 / 2 (`bbr_drain_gain`): drains in about one round the queue STARTUP built.
const DRAIN_GAIN: u32 = UNIT * 1000 / 2885;
/// The steady-state cwnd gain (`bbr_cwnd_gain`): room for delayed and stretched ACKs.
const CWND_GAIN: u32 = UNIT * 2;
/// PROBE_BW's pacing gains, one phase per minimum RTT (`bbr_pacing_gain`).
const PACING_GAIN: [u32; CYCLE_LEN] = [UNIT * 5 / 4, UNIT * 3 / 4, UNIT, UNIT, UNIT, UNIT, UNIT, UNIT];
const CYCLE_LEN: usize = 8;
/// The first phase is drawn from the last 7 (`bbr_cycle_rand`), so a flow never starts by draining.
const CYCLE_RAND: u32 = 7;
/// The bandwidth filter's window, rounds (`bbr_bw_rtts` = CYCLE_LEN + 2).
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// The minimum-RTT filter's window (`bbr_min_rtt_win_sec`).
const MIN_RTT_WIN: Duration = Duration::from_secs(10);
/// The least time in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// The smallest cwnd BBR keeps, and PROBE_RTT's, packets (`bbr_cwnd_min_target`).
const CWND_MIN_TARGET: u32 = 4;
/// Growth that counts as "still filling the pipe" (`bbr_full_bw_thresh`, 5/4), and the rounds without it
/// that end STARTUP (`bbr_full_bw_cnt`).
const FULL_BW_THRESH: u64 = UNIT as u64 * 5 / 4;
const FULL_BW_CNT: u32 = 3;
/// Linux `TCP_INIT_CWND`: the cap on cwnd before an RTT sample, packets.
const INIT_CWND: u32 = 10;
/// Long-term sampling (`bbr_lt_*`): the shortest interval, rounds; the loss rate that makes it lossy
/// (50/256 ≈ 20%); "the same rate" within 1/8 or 4 kbit/s; how long the policed rate is used, rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = UNIT as u64 / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;
/// ACK aggregation: the window of the extra-ACKed maximum (rounds, two halves), the cap on the cwnd it
/// adds (time at the estimated bandwidth) and the epoch reset threshold, packets.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const EXTRA_ACKED_MAX: Duration = Duration::from_millis(100);
const ACK_EPOCH_ACKED_RESET: u32 = 1 << 20;
/// The pacing rate is 1% below the estimate (`bbr_pacing_margin_percent`), to drain queues others build.
const PACING_MARGIN_PERCENT: u64 = 1;
/// Below this pacing rate a TSO burst is one segment (`bbr_min_tso_rate`, 1.2 Mbit/s), bytes/s.
const MIN_TSO_RATE: u64 = 1_200_000 / 8;
/// `sk_pacing_shift`: a TSO burst is about 2^-10 s of the pacing rate; and the largest GSO size less the
/// headers Linux reserves (`GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER`, 65536 − 1 − 320).
const PACING_SHIFT: u32 = 10;
const GSO_MAX_PAYLOAD: u64 = 65_536 - 1 - 320;

/// BBR's modes, numbered as Linux's `enum bbr_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BbrMode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// BBR takes no knobs of its own: Linux's module has none (its constants are compile-time).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BbrFactory;

impl ControllerFactory for BbrFactory {
    fn build(&self, initial_window: u32, smss: u32, seed: u64) -> Controller {
        Controller::Bbr(Box::new(Bbr::new(initial_window, smss, seed)))
    }
}

/// Kathleen Nichols' windowed maximum over the three best samples of a sliding window (Linux
/// `lib/win_minmax.c`): the best, the best since a quarter of the window, the best since half of it.
#[derive(Debug, Clone, Copy, Default)]
struct MaxFilter {
    s: [(u64, u64); 3],
}

impl MaxFilter {
    fn get(&self) -> u64 {
        self.s[0].1
    }
    fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }
    /// Takes sample `v` at time `t` (rounds) into a window of `win`.
    fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        // Age the kept samples: the best left the window, or the second and third are stale.
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = (t, v);
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = (t, v);
            self.s[2] = (t, v);
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = (t, v);
        }
        self.s[0].1
    }
}

/// One connection's BBR.
#[derive(Debug, Clone)]
pub struct Bbr {
    smss: u32,
    /// cwnd, packets; ssthresh, bytes (infinite until DRAIN sets it).
    cwnd: u32,
    ssthresh: u32,
    /// `sk_pacing_rate`, bytes per second.
    pacing_rate: u64,
    mode: BbrMode,
    /// Windowed maximum delivery rate, bytes per second, over `BW_RTTS` rounds.
    bw: MaxFilter,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Instant,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    probe_rtt_episodes: u64,
    /// Packet-timed rounds, and the delivered count (bytes) that ends the current one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    cycle_idx: usize,
    cycle_stamp: Instant,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    /// cwnd before recovery or PROBE_RTT, packets.
    prior_cwnd: u32,
    // Long-term (policer) sampling.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp: Instant,
    lt_last_lost: u64,
    // ACK aggregation, packets.
    ack_epoch_stamp: Instant,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// The connection's counts at the last ACK: a timeout samples the long-term rate with them.
    last: Option<AckContext>,
    rng: Xoshiro256PlusPlus,
}

impl Bbr {
    /// `bbr_init`: STARTUP, the pacing rate from the initial window over a nominal 1 ms RTT.
    pub fn new(initial_window: u32, smss: u32, seed: u64) -> Self {
        let smss = smss.max(1);
        let mut b = Bbr {
            smss,
            cwnd: initial_window.div_ceil(smss).max(1),
            ssthresh: INFINITE_SSTHRESH,
            pacing_rate: 0,
            mode: BbrMode::Startup,
            bw: MaxFilter::default(),
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_episodes: 0,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_idx: 0,
            cycle_stamp: Instant::ZERO,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: Instant::ZERO,
            lt_last_lost: 0,
            ack_epoch_stamp: Instant::ZERO,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            last: None,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        };
        b.init_pacing_rate(None);
        b
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The bandwidth estimate in use, bytes/s: the policed rate while it applies, else the filter's maximum.
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }

    /// `bw` × `gain`, less the pacing margin, bytes/s (`bbr_rate_bytes_per_sec`).
    fn rate(bw: u64, gain: u32) -> u64 {
        (bw as u128 * gain as u128 / UNIT as u128 * (100 - PACING_MARGIN_PERCENT) as u128 / 100) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / SRTT (1 ms before a sample).
    fn init_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rtt = match srtt {
            Some(r) if !r.is_zero() => {
                self.has_seen_rtt = true;
                r
            }
            _ => Duration::from_millis(1),
        };
        let bw = self.cwnd as u128 * self.smss as u128 * 1_000_000_000 / rtt.as_nanos().max(1) as u128;
        self.pacing_rate = Self::rate(bw.min(u64::MAX as u128) as u64, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower before the pipe is full (STARTUP's estimate only grows).
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, srtt: Option<Duration>) {
        let rate = Self::rate(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// Segments per TSO burst BBR budgets for (`bbr_tso_segs_goal`): about 1 ms at the pacing rate.
    fn tso_segs_goal(&self) -> u32 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(GSO_MAX_PAYLOAD);
        let min = if self.pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
        ((bytes / self.smss as u64) as u32).max(min)
    }

    /// ⌈bw × min_rtt × gain⌉ in packets (`bbr_bdp`); the initial window's cap before an RTT sample.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        let Some(rtt) = self.min_rtt else { return INIT_CWND };
        let num = bw as u128 * rtt.as_nanos() as u128 * gain as u128;
        let den = 1_000_000_000u128 * UNIT as u128 * self.smss as u128;
        num.div_ceil(den).min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: three TSO bursts for the end hosts, an even count for delayed ACKs,
    /// and two more in the 5/4 phase so that small BDPs still probe.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_segs_goal());
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.smss as u64).min(u32::MAX as u64) as u32
    }

    /// `bbr_packets_in_net_at_edt`: what will still be in the network when the next paced segment leaves.
    fn packets_in_net_at_edt(&self, inflight_now: u32, now: Instant, cx: &AckContext) -> u32 {
        let wait = cx.next_departure.saturating_since(now);
        let delivered = (self.bw() as u128 * wait.as_nanos() as u128 / 1_000_000_000 / self.smss as u128) as u32;
        let mut at_edt = inflight_now;
        if self.pacing_gain > UNIT {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(delivered)
    }

    /// `bbr_save_cwnd`: remember a cwnd that recovery or PROBE_RTT is about to cut.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        // A uniform draw below CYCLE_RAND (`get_random_u32_below`), by multiply-shift.
        let draw = ((self.rng.next_u32() as u64 * CYCLE_RAND as u64) >> 32) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - draw;
        self.advance_cycle_phase_at(self.cycle_stamp_source());
    }

    /// The delivered stamp a new phase is timed from (kept from the last ACK).
    fn cycle_stamp_source(&self) -> Instant {
        self.last.map_or(self.cycle_stamp, |c| c.delivered_at)
    }

    fn advance_cycle_phase_at(&mut self, delivered_at: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = delivered_at;
    }

    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn reset_lt_interval(&mut self, cx: &AckContext) {
        self.lt_last_stamp = cx.delivered_at;
        self.lt_last_delivered = cx.delivered;
        self.lt_last_lost = cx.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt(&mut self, cx: Option<&AckContext>) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        if let Some(cx) = cx {
            self.reset_lt_interval(cx);
        } else {
            self.lt_rtt_cnt = 0;
        }
    }

    /// `bbr_lt_bw_interval_done`: a second lossy interval at the first one's rate means a policer.
    fn lt_interval_done(&mut self, bw: u64, cx: &AckContext) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * UNIT as u64 <= LT_BW_RATIO * self.lt_bw || Self::rate(diff, UNIT) <= LT_BW_DIFF {
                self.lt_bw = (bw + self.lt_bw) / 2;
                self.lt_use_bw = true;
                self.pacing_gain = UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_interval(cx);
    }

    /// `bbr_lt_bw_sampling`: long-term delivery rate over lossy intervals, to find a token-bucket policer.
    fn lt_sampling(&mut self, losses: bool, app_limited: bool, cx: &AckContext) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt(Some(cx));
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Sampling starts at a loss, once the policer's tokens are spent.
        if !self.lt_is_sampling {
            if !losses {
                return;
            }
            self.reset_lt_interval(cx);
            self.lt_is_sampling = true;
        }
        if app_limited {
            self.reset_lt(Some(cx));
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt(Some(cx));
            return;
        }
        // The interval ends at a loss.
        if !losses {
            return;
        }
        let lost = cx.lost.saturating_sub(self.lt_last_lost);
        let delivered = cx.delivered.saturating_sub(self.lt_last_delivered);
        if delivered == 0 || lost * (UNIT as u64) < LT_LOSS_THRESH * delivered {
            return;
        }
        // Linux times the interval in whole milliseconds.
        let t_ms = cx.delivered_at.saturating_since(self.lt_last_stamp).as_nanos() / 1_000_000;
        if t_ms < 1 {
            return;
        }
        let bw = delivered as u128 * 1000 / t_ms as u128;
        self.lt_interval_done(bw.min(u64::MAX as u128) as u64, cx);
    }

    /// `bbr_update_bw`: rounds, and the delivery-rate sample into the max filter.
    fn update_bw(&mut self, rs: &RateSample, cx: &AckContext) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cx.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_sampling(rs.losses > 0, rs.is_app_limited, cx);
        let bw = (delivered as u128 * 1_000_000_000 / interval.as_nanos().max(1) as u128).min(u64::MAX as u128) as u64;
        // An app-limited sample counts only when it is no lower than the estimate.
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: data ACKed beyond what the estimate explains since the epoch began.
    fn update_ack_aggregation(&mut self, rs: &RateSample, cx: &AckContext) {
        if rs.acked_sacked == 0 || rs.delivered.is_none() || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = cx.delivered_at.saturating_since(self.ack_epoch_stamp);
        let mut expected = (self.bw() as u128 * epoch.as_nanos() as u128 / 1_000_000_000 / self.smss as u128)
            .min(u32::MAX as u128) as u32;
        let acked = self.packets(rs.acked_sacked);
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked.saturating_add(acked) >= ACK_EPOCH_ACKED_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = cx.delivered_at;
            expected = 0;
        }
        self.ack_epoch_acked = self.ack_epoch_acked.saturating_add(acked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected.min(self.ack_epoch_acked)).min(self.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    fn is_next_cycle_phase(&self, now: Instant, rs: &RateSample, cx: &AckContext) -> bool {
        let full_length = self.min_rtt.is_none_or(|m| cx.delivered_at.saturating_since(self.cycle_stamp) > m);
        if self.pacing_gain == UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(self.packets(rs.prior_in_flight as u64), now, cx);
        let bw = self.bw.get();
        if self.pacing_gain > UNIT {
            // Probe until in flight reaches gain × BDP, or a loss says it may not fit.
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        // Drain until in flight is down to one BDP.
        full_length || inflight <= self.inflight(bw, UNIT)
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * FULL_BW_THRESH as u128 / UNIT as u128) as u64;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, now: Instant, cx: &AckContext) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            let bdp = self.inflight(self.bw.get(), UNIT);
            self.ssthresh = bdp.saturating_mul(self.smss).min(MAX_CWND);
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(self.packets(cx.in_flight as u64), now, cx)
                <= self.inflight(self.bw.get(), UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`: the 10 s minimum, and PROBE_RTT when it expired. Linux keeps the RTT in whole
    /// microseconds (`rs->rtt_us`), as here, and takes a sample equal to the minimum as a fresh one
    /// (`<=`). Here only a lower one is: on the simulator's paths, which have no timing noise, every
    /// sample taken at an empty queue equals the minimum to the microsecond, which on a real path (and
    /// through the emulator, whose release times vary by tens of µs) is rare. With `<=` PROBE_RTT vanished
    /// from paced flows at 50 Mbit/s and above (0 episodes in 30 s against the kernel's 2, docs/bbr.md
    /// § Against the kernel); on a path with jitter the two rules agree.
    fn update_min_rtt(&mut self, now: Instant, rs: &RateSample, cx: &AckContext) {
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            let rtt = Duration::from_micros(rtt.as_nanos() / 1000);
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
            self.probe_rtt_episodes += 1;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Hold the minimum flight for max(200 ms, one round).
            if self.probe_rtt_done.is_none() && self.packets(cx.in_flight as u64) <= CWND_MIN_TARGET {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = cx.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => (if self.lt_use_bw { UNIT } else { PACING_GAIN[self.cycle_idx] }, CWND_GAIN),
            BbrMode::ProbeRtt => (UNIT, UNIT),
        };
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in recovery's first round, the saved
    /// cwnd when it ends. Returns the cwnd and whether conservation decides it.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u32, cx: &AckContext) -> (u32, bool) {
        let mut cwnd = self.cwnd;
        let (prev, state) = (self.prev_ca_state, cx.ca_state);
        let in_flight = self.packets(cx.in_flight as u64);
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(self.packets(rs.losses)).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = cx.delivered;
            cwnd = in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, rs: &RateSample, acked: u32, bw: u64, gain: u32, cx: &AckContext) {
        let mut cwnd = self.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, acked, cx);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target = target.saturating_add(self.ack_aggregation_cwnd());
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || cx.delivered < INIT_CWND as u64 * self.smss as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        self.cwnd = cwnd.min(MAX_CWND / self.smss);
        if self.mode == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_ack_aggregation_cwnd`: the extra-ACKed maximum, once the pipe is full, at most 100 ms of bw.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max = (self.bw() as u128 * EXTRA_ACKED_MAX.as_nanos() as u128 / 1_000_000_000 / self.smss as u128) as u32;
        self.extra_acked[0].max(self.extra_acked[1]).min(max)
    }
}

impl CongestionControl for Bbr {
    fn window(&self) -> u32 {
        self.cwnd.saturating_mul(self.smss).min(MAX_CWND)
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    /// BBR grows cwnd in `on_rate_sample`.
    fn on_ack(&mut self, _now: Instant, _ack: &AckInfo) -> Growth {
        Growth::None
    }
    /// `bbr_ssthresh` (save cwnd, leave ssthresh) on entering recovery; a timeout also cuts cwnd to what is
    /// in flight plus one, one packet (`tcp_enter_loss`), and restarts full-pipe detection and long-term
    /// sampling as a loss (`bbr_set_state(TCP_CA_Loss)`).
    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, _flight_size: u32, _smss: u32) {
        match event {
            CongestionEvent::FastRetransmit => self.save_cwnd(),
            CongestionEvent::Timeout { first } => {
                if first {
                    self.save_cwnd();
                }
                self.cwnd = 1;
                self.prev_ca_state = CaState::Loss;
                self.full_bw = 0;
                self.round_start = true;
                if let Some(cx) = self.last {
                    self.lt_sampling(true, false, &cx);
                }
            }
        }
    }
    fn on_recovery_exit(&mut self, _now: Instant, _flight_size: u32, _smss: u32) {}
    fn set_window(&mut self, cwnd: u32) {
        self.cwnd = cwnd.div_ceil(self.smss).max(1);
    }
    fn set_ssthresh(&mut self, ssthresh: u32) {
        self.ssthresh = ssthresh;
    }
    /// `bbr_undo_cwnd`: the slow-down was spurious; full-pipe detection and long-term sampling restart.
    fn on_spurious_congestion_event(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        let last = self.last;
        self.reset_lt(last.as_ref());
    }

    fn owns_window(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample, cx: &AckContext) {
        self.smss = cx.smss.max(1);
        self.update_bw(rs, cx);
        self.update_ack_aggregation(rs, cx);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(now, rs, cx) {
            self.advance_cycle_phase_at(cx.delivered_at);
        }
        self.check_full_bw_reached(rs);
        self.last = Some(*cx);
        self.check_drain(now, cx);
        self.update_min_rtt(now, rs, cx);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, cx.srtt);
        let acked = self.packets(rs.acked_sacked);
        self.set_cwnd(rs, acked, bw, self.cwnd_gain, cx);
    }

    /// `bbr_cwnd_event_tx_start`: restarting from idle while app-limited, pace at the estimate.
    fn on_tx_start(&mut self, now: Instant, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.ack_epoch_stamp = now;
        self.ack_epoch_acked = 0;
        match self.mode {
            BbrMode::ProbeBw => {
                let bw = self.bw();
                self.set_pacing_rate(bw, UNIT, None);
            }
            BbrMode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }

    fn marks_app_limited(&self) -> bool {
        self.mode == BbrMode::ProbeRtt
    }

    fn model(&self) -> Option<ModelStats> {
        Some(ModelStats {
            mode: self.mode as u8,
            btl_bw: self.bw(),
            min_rtt: self.min_rtt,
            pacing_gain: self.pacing_gain as f64 / UNIT as f64,
            cwnd_gain: self.cwnd_gain as f64 / UNIT as f64,
            probe_rtt_rounds: self.probe_rtt_episodes,
            rounds: self.rtt_cnt,
            lt_use_bw: self.lt_use_bw,
        })
    }

    fn set_random_seed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gains_are_linux_fixed_point() {
        assert_eq!(HIGH_GAIN, 739, "2/ln2 × 256, rounded up");
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(PACING_GAIN.iter().sum::<u32>(), 8 * UNIT, "the cycle averages a gain of 1");
    }

    /// The windowed maximum forgets a peak once it is older than the window, keeping the best later one.
    #[test]
    fn max_filter_windows_by_rounds() {
        let mut f = MaxFilter::default();
        assert_eq!(f.update(10, 0, 100), 100);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50 + t), 100, "round {t}");
        }
        assert_eq!(f.update(10, 11, 40), 60, "the peak of round 0 aged out; the best kept later sample is back");
        assert_eq!(f.update(10, 12, 200), 200);
    }

    fn cx(delivered: u64, at: Instant, in_flight: u32) -> AckContext {
        AckContext {
            smss: 1000,
            in_flight,
            ca_state: CaState::Open,
            delivered,
            delivered_at: at,
            lost: 0,
            srtt: Some(Duration::from_millis(100)),
            next_departure: at,
        }
    }

    /// The minimum in whole microseconds, refreshed by a lower sample only: samples 900 ns above it are the
    /// same microsecond and no refresh (PROBE_RTT after 10 s); samples a microsecond lower every second are.
    #[test]
    fn only_a_lower_rtt_sample_refreshes_the_minimum() {
        let same_us = |_: u64| Duration::from_nanos(40_000_900);
        let lower = |s: u64| Duration::from_micros(40_000 - s);
        // The same µs: the filter expires, takes the sample (`filter_expired`) and PROBE_RTT begins.
        for (name, later, probes, min) in
            [("same", &same_us as &dyn Fn(u64) -> Duration, true, 40_000), ("lower", &lower, false, 39_988)]
        {
            let mut b = Bbr::new(10_000, 1000, 1);
            let mut rs =
                RateSample { rtt: Some(Duration::from_micros(40_000)), acked_sacked: 1000, ..Default::default() };
            let t0 = Instant::ZERO + Duration::from_millis(1);
            b.on_rate_sample(t0, &rs, &cx(1000, t0, 10_000));
            for s in 1..=12u64 {
                rs.rtt = Some(later(s));
                let t = t0 + Duration::from_secs(s);
                b.on_rate_sample(t, &rs, &cx(1000 * (s + 1), t, 10_000));
            }
            assert_eq!(b.min_rtt, Some(Duration::from_micros(min)), "{name}");
            assert_eq!(b.probe_rtt_episodes > 0, probes, "{name}");
        }
    }

    /// STARTUP doubles the delivered rate per round; three rounds without 25% growth fill the pipe and BBR
    /// drains, then cruises in PROBE_BW with cwnd about 2 BDP (plus quanta). A steady ACK clock: one ACK
    /// per packet, each sample the last RTT's delivery.
    #[test]
    fn startup_fills_the_pipe_then_probes() {
        let mss = 1000u64;
        let mut b = Bbr::new(10_000, 1000, 7);
        let rtt = Duration::from_millis(100);
        let cap = 1_000_000u64; // 1 MB/s bottleneck: BDP 100 packets
        let mut delivered = 0u64;
        let mut t = Instant::ZERO;
        let mut rate = 100_000u64; // 10 packets per RTT to begin with
        let mut startup_rounds = 0;
        // The packets ACKed in one iteration were sent in the previous one, while `delivered` went from
        // `prev_start` on: each sample's `prior_delivered` lies there.
        let (mut prev_start, mut prev_acks) = (0u64, 1u64);
        for _ in 0..40 {
            let r = rate.min(cap);
            let per_rtt = r * rtt.as_nanos() / 1_000_000_000;
            let acks = (per_rtt / mss).max(1);
            let round_start_delivered = delivered;
            for k in 0..acks {
                let prior_delivered = prev_start + k.min(prev_acks - 1) * mss;
                t += Duration::from_nanos(rtt.as_nanos() / acks);
                delivered += mss;
                let rs = RateSample {
                    delivered: Some(per_rtt),
                    interval: Some(rtt),
                    prior_delivered,
                    acked_sacked: mss,
                    losses: 0,
                    prior_in_flight: per_rtt as u32,
                    rtt: Some(rtt),
                    is_app_limited: false,
                };
                b.on_rate_sample(t, &rs, &cx(delivered, t, per_rtt as u32));
            }
            (prev_start, prev_acks) = (round_start_delivered, acks);
            if b.mode == BbrMode::Startup {
                startup_rounds = b.rtt_cnt;
            }
            rate = b.pacing_rate;
        }
        assert_eq!(b.bw(), cap);
        assert_eq!(b.min_rtt, Some(rtt));
        assert_eq!(b.mode, BbrMode::ProbeBw);
        // log2(100 / 10) ≈ 3.3 rounds to reach the bottleneck, plus 3 rounds to see it stopped growing.
        assert!((5..=9).contains(&startup_rounds), "{startup_rounds}");
        let quanta = 3 * b.tso_segs_goal() as u64;
        assert_eq!(b.ssthresh() as u64, (100 + quanta).div_ceil(2) * 2 * mss, "DRAIN: one BDP + quanta");
        let w = b.window() / 1000;
        assert!((200..=212).contains(&w), "cwnd {w} packets: 2 BDP + quanta");
    }
}
