//! RFC 4898 (TCP Extended Statistics MIB, the standardised web100 variables) for one connection.
//!
//! Field names are the RFC's object names (`tcpEStats` prefix dropped), so that JSON keys, docs and the
//! RFC read alike. Counters count from zero; gauges are filled in when a snapshot is taken. Times are
//! milliseconds as in the RFC, but fractional, because a gigabit LAN has sub-millisecond RTTs.
#![allow(non_snake_case)]

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Estats {
    // Perf table: segment and octet counters (RFC 4898 §3, tcpEStatsPerfTable).
    /// Segments sent, of every kind, retransmissions included.
    pub SegsOut: u64,
    /// Segments received, duplicates and pure ACKs included.
    pub SegsIn: u64,
    /// Sent segments carrying data, retransmissions included.
    pub DataSegsOut: u64,
    /// Received segments carrying data, duplicates included.
    pub DataSegsIn: u64,
    /// Payload bytes sent, retransmitted bytes included.
    pub DataOctetsOut: u64,
    /// Payload bytes received, duplicates included.
    pub DataOctetsIn: u64,
    /// Segments sent that carry at least one byte sent before.
    pub SegsRetrans: u64,
    /// Payload bytes retransmitted.
    pub OctetsRetrans: u64,
    /// Bytes by which SND.UNA advanced (the sender's goodput).
    pub ThruOctetsAcked: u64,
    /// Bytes by which RCV.NXT advanced (the receiver's goodput).
    pub ThruOctetsReceived: u64,

    // Congestion events.
    /// Multiplicative decreases: fast retransmit entries, first timeouts, local stalls treated as congestion.
    pub CongSignals: u64,
    /// Sum of cwnd (bytes) just before each congestion signal.
    pub PreCongSumCwnd: u64,
    /// Congestion responses backed out because they proved spurious (D-SACK undo).
    pub CongOverCount: u64,
    /// cwnd reductions not made by the congestion-control response (validation, moderation).
    pub OtherReductions: u64,
    /// Times the interface refused a segment (host transmit queue full).
    pub SendStall: u64,
    /// cwnd increases made by slow start.
    pub SlowStart: u64,
    /// Congestion-avoidance steps (every qualifying ACK, as web100 counted).
    pub CongAvoid: u64,
    /// Congestion-avoidance steps that actually grew cwnd (web100 `X_CongAvoidSteps`).
    pub X_CongAvoidSteps: u64,
    /// Fast retransmit invocations (entries to loss recovery), not segments.
    pub FastRetran: u64,
    /// RTO expiries while the backoff multiplier was 1.
    pub Timeouts: u64,
    /// RTO expiries after the RTO was already backed off.
    pub SubsequentTimeouts: u64,
    /// RTO expiries with no duplicate ACK or SACK seen in that window.
    pub AbruptTimeouts: u64,
    /// Consecutive expiries without an ACK of new data (gauge).
    pub CurTimeoutCount: u64,
    /// Duplicate ACKs received: RFC 5681's (or an ACK bringing new SACK information), or under
    /// `dup_acks_in = "web100"` web100's, every segment without payload whose ACK is SND.UNA on arrival.
    pub DupAcksIn: u64,
    /// Duplicate ACKs sent.
    pub DupAcksOut: u64,
    /// ACKs not sent because SACK compression merged them into a later one (Linux `TCPAckCompressed`).
    pub AcksCompressed: u64,
    /// Super-packets started under `tso` (Linux GSO/TSO skbs of new data).
    pub X_TsoBursts: u64,
    /// Sending opportunities left unused under `tso` to fill a larger super-packet (Linux
    /// `tcp_tso_should_defer` returning true).
    pub X_TsoDeferrals: u64,
    /// Runs of duplicate ACKs sent.
    pub DupAckEpisodes: u64,
    /// ACKs received carrying a SACK option.
    pub SACKsRcvd: u64,
    /// SACK blocks received.
    pub SACKBlocksRcvd: u64,
    /// Duplicate segments reported to us by D-SACK blocks.
    pub DSACKDups: u64,
    /// Segments RACK marked lost by time (RFC 8985 §6.2 step 5), outside a timeout's recovery
    /// (Linux counts them in `lost_out`; no MIB of its own).
    pub RackMarkedLost: u64,
    /// Slow starts ended by HyStart's ACK-train detector (Linux `TCPHystartTrainDetect`), and the sum of
    /// cwnd, bytes, at those exits (Linux `TCPHystartTrainCwnd`, in packets).
    pub HystartTrainDetect: u64,
    pub HystartTrainCwnd: u64,
    /// Slow starts ended by HyStart's delay detector (Linux `TCPHystartDelayDetect`), and the sum of cwnd,
    /// bytes, at those exits (Linux `TCPHystartDelayCwnd`, in packets).
    pub HystartDelayDetect: u64,
    pub HystartDelayCwnd: u64,
    /// Tail loss probes sent (RFC 8985 §7.3; Linux `TCPLossProbes`).
    pub LossProbes: u64,
    /// Probes whose ACK showed they repaired a loss, answered with a cwnd reduction (RFC 8985 §7.4;
    /// Linux `TCPLossProbeRecovery`).
    pub LossProbeRecoveries: u64,

    // ECN (RFC 3168), left out of the JSON while zero (a connection without ECN has none of them).
    /// Congestion signals delivered by ECN: segments received with ECE on a connection using ECN
    /// (tcpEStatsPathECNsignals), whether or not they reduced cwnd (CongSignals counts those that did).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ECNsignals: u64,
    /// Segments received with the IP ECN field CE (tcpEStatsPathCERcvd).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub CERcvd: u64,
    /// Times ECE was turned on because of a CE mark, once per echo episode however many segments carry it
    /// (tcpEStatsPathECESent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ECESent: u64,

    // Sender-limit states (RFC 4898 §3; web100 kept the times in µs, the RFC in ms).
    /// Entries into the receiver-window-limited state.
    pub SndLimTransRwin: u64,
    /// Entries into the congestion-window-limited state.
    pub SndLimTransCwnd: u64,
    /// Entries into the sender-limited state (no data, Nagle, interface).
    pub SndLimTransSnd: u64,
    /// Time limited by the receiver's window, ms.
    pub SndLimTimeRwin: f64,
    /// Time limited by cwnd (RTO waits included), ms.
    pub SndLimTimeCwnd: f64,
    /// Time limited by the sender itself, ms.
    pub SndLimTimeSnd: f64,

    // Gauges (bytes unless noted).
    pub CurCwnd: u64,
    /// Current ssthresh; absent while still "infinite".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub CurSsthresh: Option<u64>,
    pub MaxSsCwnd: u64,
    pub MaxCaCwnd: u64,
    pub CurMSS: u64,
    /// RFC 6675 pipe, bytes (flight size outside recovery).
    pub PipeSize: u64,
    pub MaxPipeSize: u64,
    /// The peer's most recent receive window, bytes (scaled).
    pub CurRwinRcvd: u64,
    pub MaxRwinRcvd: u64,
    /// Our most recently advertised receive window, bytes.
    pub CurRwinSent: u64,
    pub MaxRwinSent: u64,
    pub ZeroRwinRcvd: u64,
    pub ZeroRwinSent: u64,

    // RTT and RTO (ms).
    pub SampleRTT: f64,
    pub SmoothedRTT: f64,
    pub RTTVar: f64,
    pub MinRTT: f64,
    pub MaxRTT: f64,
    pub SumRTT: f64,
    pub CountRTT: u64,
    /// The RTO in force, backoff included, ms.
    pub CurRTO: f64,
    /// Smallest and largest RTO a retransmission timer was started with, ms.
    pub MinRTO: f64,
    pub MaxRTO: f64,

    /// Pacing, TCP Small Queues and BBR (web100-style extensions), present only where they apply, so
    /// that the documents of connections without them are as before; boxed, so that they cost a
    /// connection without them one pointer.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<Box<PacedEstats>>,
}

/// The statistics of a paced connection, of TCP Small Queues and of BBR (see [`Estats::paced`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PacedEstats {
    /// The pacing rate, bytes per second (Linux `tcpi_pacing_rate`), for a paced connection (0 before
    /// there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_PacingRate: Option<u64>,
    /// Times TCP Small Queues held the sender because too much of it waited in the host (Linux sets
    /// `TSQ_THROTTLED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_TsqThrottled: Option<u64>,
    /// The delivery rate of the last sample, bytes per second (Linux `tcpi_delivery_rate`), where the
    /// delivery-rate sampler runs (BBR).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_DeliveryRate: Option<u64>,
    /// The smoothed RTT averaged over time, ms: each value weighted by how long it held, from the first RTT
    /// sample to the last, where the delivery-rate sampler runs (BBR). The Linux backend reports the same
    /// for a BBR socket from `tcpi_rtt` read every 10 ms; BBR's RTT moves within its gain cycle, so this,
    /// not the SmoothedRTT of the connection's end, is the figure to compare (docs/bbr.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_SmoothedRTTMean: Option<f64>,
    /// BBR's mode: STARTUP 0, DRAIN 1, PROBE_BW 2, PROBE_RTT 3 (Linux `enum bbr_mode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrMode: Option<u64>,
    /// BBR's bottleneck-bandwidth estimate, bytes per second (`tcpi_bbr_bw_lo/hi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrBtlBw: Option<u64>,
    /// BBR's minimum-RTT estimate, ms (`tcpi_bbr_min_rtt`, µs there; 0 before a sample).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrMinRTT: Option<f64>,
    /// BBR's pacing and cwnd gains (`tcpi_bbr_pacing_gain`, `tcpi_bbr_cwnd_gain` / 256).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrPacingGain: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrCwndGain: Option<f64>,
    /// PROBE_RTT episodes entered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrProbeRttEpisodes: Option<u64>,
    /// Packet-timed rounds BBR counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrRounds: Option<u64>,
    /// 1 while BBR uses its long-term (policed) bandwidth estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub X_BbrLtUseBw: Option<u64>,
}

impl PacedEstats {
    /// Every field present (zero): the names a time series may ask for.
    pub fn all() -> Self {
        PacedEstats {
            X_PacingRate: Some(0),
            X_TsqThrottled: Some(0),
            X_DeliveryRate: Some(0),
            X_SmoothedRTTMean: Some(0.0),
            X_BbrMode: Some(0),
            X_BbrBtlBw: Some(0),
            X_BbrMinRTT: Some(0.0),
            X_BbrPacingGain: Some(0.0),
            X_BbrCwndGain: Some(0.0),
            X_BbrProbeRttEpisodes: Some(0),
            X_BbrRounds: Some(0),
            X_BbrLtUseBw: Some(0),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
