//! Which ACKs give RTT samples (`rtt_sampling`), beside the estimators of [`crate::rtt`] that turn the
//! samples into an RTO.
//!
//! Read RFC 6298 §3 (Karn's algorithm: never time a retransmitted segment; one timed segment per RTT when
//! there is no better source), RFC 7323 §4.1 (with timestamps, every ACK of new data gives a sample from
//! its echo, retransmissions included, since the echo tells which transmission it answers). Every policy
//! samples only on an ACK that advances SND.UNA, so an ACK that arrives behind a later one never does.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};
use tcplab_wire::SeqNumber;

use crate::config::RttSampling;

/// The sampling state of one connection.
#[derive(Debug, Clone)]
pub(crate) struct RttSampler {
    policy: RttSampling,
    /// The timed segment (Karn): one past its end, and when it was sent.
    timed: Option<(SeqNumber, Instant)>,
    /// Under `every_ack`: one past each new segment, and when it was first sent.
    sent: VecDeque<(SeqNumber, Instant)>,
}

impl RttSampler {
    pub fn new(policy: RttSampling) -> Self {
        RttSampler { policy, timed: None, sent: VecDeque::new() }
    }

    /// Whether the timestamp echo is the sample source (`auto` with timestamps negotiated).
    fn by_timestamps(&self, ts_ok: bool) -> bool {
        ts_ok && self.policy == RttSampling::Auto
    }

    /// The first SYN (or SYN-ACK) went out: it is timed, up to `end` = ISS + 1.
    pub fn on_syn_sent(&mut self, end: SeqNumber, now: Instant) {
        self.timed = Some((end, now));
    }

    /// New data ending at `end` went out at `now`.
    pub fn on_data_sent(&mut self, end: SeqNumber, now: Instant, ts_ok: bool) {
        if self.timed.is_none() && !self.by_timestamps(ts_ok) {
            self.timed = Some((end, now));
        }
        if self.policy == RttSampling::EveryAck {
            self.sent.push_back((end, now));
        }
    }

    /// Karn's rule: a retransmission (or a timeout, or a recovery) leaves no timed segment.
    pub fn forget_timed(&mut self) {
        self.timed = None;
    }

    /// The ACK that completes the handshake: the echo of the SYN's timestamp (`ts_rtt`) if there is one,
    /// else the timed SYN unless it was retransmitted (Karn).
    pub fn on_handshake_ack(
        &mut self,
        now: Instant,
        ts_rtt: Option<Duration>,
        syn_retransmitted: bool,
    ) -> Option<Duration> {
        if ts_rtt.is_some() {
            return ts_rtt;
        }
        let (_, sent) = self.timed.take()?;
        (!syn_retransmitted).then(|| now - sent)
    }

    /// An ACK of new data up to `ack` at `now`; `ts_rtt` is the elapsed time its timestamp echo gives, if
    /// timestamps were negotiated and it echoes one. Returns the sample, if the policy takes one.
    pub fn on_ack(&mut self, ack: SeqNumber, now: Instant, ts_rtt: Option<Duration>, ts_ok: bool) -> Option<Duration> {
        let mut sample = None;
        let mut sampled = false;
        if self.policy == RttSampling::EveryAck {
            // Every ACK, timed from the first transmission of the newest segment it covers, retransmitted or
            // not: Karn's ambiguity left in on purpose.
            let mut first_sent = None;
            while let Some(&(end, t)) = self.sent.front() {
                if end > ack {
                    break;
                }
                first_sent = Some(t);
                self.sent.pop_front();
            }
            sample = first_sent.map(|t| now - t);
            sampled = true;
        }
        if self.by_timestamps(ts_ok) && !sampled && ts_rtt.is_some() {
            sample = ts_rtt;
            sampled = true;
        }
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                if !sampled {
                    sample = Some(now - sent);
                }
                self.timed = None;
            }
        }
        sample
    }
}
