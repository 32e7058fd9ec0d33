//! Statistics of one RDP endpoint, named as RFC 4898 names the same figures for TCP, plus RDP's own.
//! Times are milliseconds, fractional, as in `tcplab_tcp::Estats`.
#![allow(non_snake_case)]

use serde::{Deserialize, Serialize};

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
}

impl tcplab_transport::Stats for RdpStats {
    fn segs_retrans(&self) -> u64 {
        self.SegsRetrans
    }
}
