//! Statistics of one RDP endpoint, named as RFC 4898 names the same figures for TCP, plus RDP's own.
//! Times are milliseconds, fractional, as in `tcplab_tcp::Estats`.
#![allow(non_snake_case)]

use serde::{Deserialize, Serialize};
use tcplab_units::{Duration, Instant};

/// One RTT measurement as the sampling policy (`rtt_sampling`) saw it: the time from the acknowledged
/// segment's first transmission (or the opening exchange) to the acknowledgement, whether the estimator took
/// it, and the estimator's state after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RttRecord {
    /// When the acknowledgement arrived.
    pub at: Instant,
    /// The measured round trip (for a resent SYN under `syn_seed`: the SYN timeout in force, which is what
    /// the estimator is given).
    pub rtt: Duration,
    /// Fed to the estimator (false: discarded by the sampling policy).
    pub taken: bool,
    /// SmoothedRTT after this measurement (`None` before the first sample taken).
    pub srtt: Option<Duration>,
    /// CurRTO after this measurement.
    pub rto: Duration,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RdpStats {
    /// Segments sent, of every kind, retransmissions included.
    pub SegsOut: u64,
    /// Segments received, duplicates and bare ACKs included.
    pub SegsIn: u64,
    /// Sent segments carrying data, retransmissions included.
    pub DataSegsOut: u64,
    /// Received segments carrying data, duplicates included.
    pub DataSegsIn: u64,
    /// Data octets sent, retransmissions included.
    pub DataOctetsOut: u64,
    /// Data octets received, duplicates included.
    pub DataOctetsIn: u64,
    /// Data segments sent whose sequence number had been sent before (Part C's R).
    pub SegsRetrans: u64,
    /// Data octets retransmitted.
    pub OctetsRetrans: u64,
    /// Data segments received whose number was at or below RCV.CUR or already held out of sequence
    /// (Part C's D).
    pub DupSegsIn: u64,
    /// Segments sent carrying an EACK list.
    pub EacksOut: u64,
    /// Segments received carrying an EACK list.
    pub EacksIn: u64,
    /// Timer events at which at least one data segment was due for retransmission (Part C's T).
    pub Timeouts: u64,
    /// Messages delivered to the application (sequenced or in arrival order).
    pub MessagesDelivered: u64,
    /// RTT samples fed to the estimator.
    pub RttSamples: u64,
    /// Acknowledgements that newly acknowledged segments but gave no sample under the sampling policy.
    pub RttSamplesDiscarded: u64,
    /// Smoothed RTT, ms (0 before the first sample).
    pub SmoothedRTT: f64,
    /// Largest SmoothedRTT seen, ms.
    pub MaxSmoothedRTT: f64,
    /// Largest RTT sample taken, ms.
    pub MaxRTT: f64,
    /// Smallest RTT sample taken, ms.
    pub MinRTT: f64,
    /// The current retransmission timeout, ms (before any per-segment backoff).
    pub CurRTO: f64,
    /// The opening exchange's round trip, ms: from the first transmission of our SYN (SYN+ACK on the passive
    /// side) to the segment that acknowledged it; 0 until then. Measured whether or not `syn_seed` uses it.
    pub SynRTT: f64,
    /// Retransmissions of our SYN (SYN+ACK on the passive side).
    pub SynRetrans: u64,
    /// CurRTO when the connection became OPEN, ms: the timeout the first data segment is given (before tick
    /// rounding) — the SYN-seeded estimate with `syn_seed`, `initial_rto` without.
    pub InitialRTO: f64,
    /// Every RTT measurement of the run, taken or discarded, when `record_rtt_samples` is set (not serialized:
    /// the lab's `test.series` reports it as `rtt_samples`).
    #[serde(skip)]
    pub rtt_log: Vec<RttRecord>,
}

impl tcplab_transport::Stats for RdpStats {
    fn segs_retrans(&self) -> u64 {
        self.SegsRetrans
    }
}
