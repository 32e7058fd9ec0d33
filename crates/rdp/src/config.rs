//! [`RdpConfig`]: every knob of an RDP endpoint, with its meaning, unit, default and RFC section.
//!
//! The defaults are RFC 1151 RDP with the tcplab decisions of the engineering note where the RFCs are silent
//! (EACKs on, span window, ACK on arrival, a fixed 2 s RTO on a 500 ms tick as the 1986 BBN code had).

use serde::{Deserialize, Serialize};
use tcplab_rtt::{RtoModel, RtoParams};
use tcplab_units::Duration;
use tcplab_wire::codec::rdp::RdpCodec;
use tcplab_wire::RdpVersion;

// `KNOBS`: every scenario knob's doc comment, extracted by build.rs (for `tcplab explain`).
include!(concat!(env!("OUT_DIR"), "/knobs.rs"));

/// How "max outstanding" limits the sender (RFC 908 reads two ways; A.7.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowPolicy {
    /// RFC 908 §3.7 SEND pseudo-code: a new segment only while SND.NXT < SND.UNA + SND.MAX. EACKed segments
    /// still occupy the span until SND.UNA passes them.
    #[default]
    Span,
    /// RFC 908 prose: at most SND.MAX segments neither cumulatively nor EACK-acknowledged, and never a
    /// number at or beyond SND.UNA + 2·SND.MAX (the peer's acceptance window, RFC 1151 §3).
    Count,
}

/// Where the retransmission timeout comes from. RFC 908 §3.7 asks only for "roughly the round-trip time".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoChoice {
    /// Always [`RdpConfig::initial_rto`]; samples still feed an RFC 793 estimator for the statistics.
    #[default]
    Fixed,
    /// RFC 793 §3.7.
    Rfc793,
    /// RFC 889 (Mills): fast attack, slow decay.
    Mills,
    /// Jacobson / RFC 6298.
    Rfc6298,
    /// Linux's estimator.
    Linux,
}

impl RtoChoice {
    /// The estimator model behind the choice (RFC 793 for `Fixed`, which only reports SRTT).
    pub fn model(self) -> RtoModel {
        match self {
            RtoChoice::Fixed | RtoChoice::Rfc793 => RtoModel::Rfc793,
            RtoChoice::Mills => RtoModel::Mills,
            RtoChoice::Rfc6298 => RtoModel::Rfc6298,
            RtoChoice::Linux => RtoModel::Linux,
        }
    }
}

/// Which acknowledgements yield an RTT sample (Karn & Partridge 1987; Partridge, tcp-ip list, Dec 1986).
/// At most one sample is taken per arriving acknowledgement: from the highest-numbered segment it newly
/// acknowledges (cumulatively or by EACK) that the policy admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    /// Karn's rule: only segments transmitted once.
    #[default]
    Karn,
    /// Every acknowledged segment, measured from its first transmission, retransmitted or not (what fed
    /// "RTT feedback" in 1986).
    Every,
    /// Like `Every`, except that a segment acknowledged after a higher-numbered one gives no sample.
    DiscardOutOfOrder,
}

/// The configuration of an RDP endpoint (shared by all of a host's connections).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RdpConfig {
    /// Header version: 1 (RFC 908: 8-bit ports, 32-bit checksum) or 2 (RFC 1151). Default 2. The simulator
    /// carries header lengths only, identical in both; the version matters to the codec.
    #[serde(with = "version_serde")]
    pub version: RdpVersion,
    /// Max Outstanding Segments we advertise in our SYN (RFC 908 §3.5): RCV.MAX, the peer's send window.
    /// Segments; default 4 (the 1986 experiment). At most 64, so that the 2·RCV.MAX acceptance window fits
    /// every EACK list (A.7.4).
    pub max_outstanding: u16,
    /// Max Segment Size we advertise (RFC 908 §3.5): the largest segment we accept, counting IP header, RDP
    /// header and data. Octets; default 1500. It also bounds our messages until the peer's SYN tells its own.
    pub max_segment_size: u16,
    /// Sequenced delivery (SDM, RFC 908 §3.2): deliver messages in sequence-number order rather than in
    /// arrival order. Each side applies its own setting to what it receives; the SYN's SDM bit is
    /// informative (tcplab decision A-3). Default true.
    pub sequenced: bool,
    /// Send EACKs (RFC 908 §3.7.2): every ACK sent while segments are held out of sequence lists all of
    /// them, ascending (A.7.4). Default true. The receiver buffers out-of-sequence segments either way.
    pub eack: bool,
    /// Honour received EACKs: release the segments they name and never retransmit them (RFC 908 §3.7.2).
    /// Default true.
    pub eack_honour: bool,
    /// Most EACK entries in one header. Default 123, all a header can hold (RFC 908 §4.1).
    pub eack_max_entries: u16,
    /// Send window reading (A.7.2, tcplab decision A-5). Default span.
    pub window_policy: WindowPolicy,
    /// Messages the application may queue beyond those in flight (the socket's send buffer, in segments).
    /// Default 64.
    pub send_queue: u32,
    /// Retransmission timer granularity G (RFC 908 §3.7 gives none; the BBN code ran 0.5 s BSD ticks): a
    /// segment sent at t expires at tick ⌊t/G⌋ + max(1, ⌈RTO/G⌉) (A.9, A-12). Zero means exact timers
    /// (expiry at t + RTO). Default 500 ms.
    pub tick: Duration,
    /// Where the RTO comes from (A.9, A-8). Default fixed.
    pub rto_model: RtoChoice,
    /// The RTO until the first RTT sample, and always under `rto_model = "fixed"`; also the first SYN timeout.
    /// Default 2 s (the BBN floor, 4 ticks).
    pub initial_rto: Duration,
    /// Lower bound of an estimated RTO (RFC 793 LBOUND). Default 0: the tick is the floor.
    pub min_rto: Duration,
    /// Upper bound of every RTO, backed off or not (RFC 793 UBOUND). Default 60 s.
    pub max_rto: Duration,
    /// Gains of the estimators (see `tcplab_rtt::RtoParams`).
    pub rto_params: RtoParams,
    /// Double a data segment's timeout at each retransmission of it (RFC 908 gives no backoff; Karn's part
    /// 2). Default false, as in the BBN code. SYNs always back off (Partridge 1986).
    pub backoff: bool,
    /// Which acknowledgements give RTT samples. Default Karn.
    pub rtt_sampling: RttSampling,
    /// Seed the estimator from the opening exchange (SYN → its ACK; Zhang, as Partridge used it in 1986):
    /// the SYN's round trip is the first sample, or, if the SYN was resent, the timeout in force when the ACK
    /// came. Default false (RFC 908 has no such rule; the first data ACK gives the first sample).
    pub syn_seed: bool,
    /// How long a closed connection stays in CLOSE-WAIT, discarding everything, before its record is freed
    /// (RFC 908 §3.3). Default 60 s (BBN).
    pub close_wait: Duration,
    /// Send a NUL after this long with nothing to send or acknowledge (RFC 908 §3.6 keep-alive). `None`
    /// (default) never sends one; NULs received are always acknowledged.
    pub nul_idle: Option<Duration>,
    /// Header encoding choices where the RFCs are open (v2 checksum pseudo-header, SDM bit); for the codec
    /// only.
    #[serde(skip)]
    pub codec: RdpCodec,
    /// Keep a record of every RTT measurement, taken or discarded by `rtt_sampling`, with SmoothedRTT and
    /// CurRTO after it ([`crate::RttRecord`], in the end-of-run statistics). Set by the lab for `test.series`;
    /// not a scenario knob. Default false (nothing is recorded, nothing allocated).
    #[serde(skip)]
    pub record_rtt_samples: bool,
}

impl Default for RdpConfig {
    fn default() -> Self {
        RdpConfig {
            version: RdpVersion::V2,
            max_outstanding: 4,
            max_segment_size: 1500,
            sequenced: true,
            eack: true,
            eack_honour: true,
            eack_max_entries: tcplab_wire::rdp::RDP_MAX_EACKS as u16,
            window_policy: WindowPolicy::Span,
            send_queue: 64,
            tick: Duration::from_millis(500),
            rto_model: RtoChoice::Fixed,
            initial_rto: Duration::from_secs(2),
            min_rto: Duration::ZERO,
            max_rto: Duration::from_secs(60),
            rto_params: RtoParams::default(),
            backoff: false,
            rtt_sampling: RttSampling::Karn,
            syn_seed: false,
            close_wait: Duration::from_secs(60),
            nul_idle: None,
            codec: RdpCodec::default(),
            record_rtt_samples: false,
        }
    }
}

impl RdpConfig {
    /// Checks the ranges documented on the fields.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_outstanding == 0 || self.max_outstanding > 64 {
            return Err(format!("max_outstanding = {}: need 1 to 64", self.max_outstanding));
        }
        let min_mss = tcplab_wire::IPV4_HEADER_LEN + tcplab_wire::rdp::RDP_HEADER_LEN + 1;
        if u32::from(self.max_segment_size) < min_mss {
            return Err(format!("max_segment_size = {}: need at least {min_mss}", self.max_segment_size));
        }
        if self.send_queue == 0 {
            return Err("send_queue = 0: need at least one message".into());
        }
        if self.initial_rto.is_zero() {
            return Err("initial_rto = 0".into());
        }
        self.rto_params.validate()
    }
}

mod version_serde {
    use serde::{Deserialize, Deserializer, Serializer};
    use tcplab_wire::RdpVersion;

    pub fn serialize<S: Serializer>(v: &RdpVersion, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(v.number())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RdpVersion, D::Error> {
        match u8::deserialize(d)? {
            1 => Ok(RdpVersion::V1),
            2 => Ok(RdpVersion::V2),
            v => Err(serde::de::Error::custom(format!("RDP version {v}: need 1 or 2"))),
        }
    }
}

#[cfg(test)]
mod knob_tests {
    use super::*;

    /// Every knob a scenario can set (what `RdpConfig` serializes) has its documentation in `KNOBS`.
    #[test]
    fn every_knob_is_documented() {
        let v = toml::Value::try_from(RdpConfig::default()).unwrap();
        let fields: Vec<&String> = v.as_table().unwrap().keys().collect();
        let listed: Vec<&str> = KNOBS.iter().map(|(n, _)| *n).collect();
        for f in &fields {
            assert!(listed.contains(&f.as_str()), "{f} has no entry in KNOBS");
        }
        for (name, doc) in KNOBS {
            assert!(!doc.is_empty(), "{name} has no doc comment");
        }
    }
}
