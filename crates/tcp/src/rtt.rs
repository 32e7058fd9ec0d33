//! Round-trip time estimation and the retransmission timeout.
//!
//! RFC 6298 §2: SRTT and RTTVAR from samples, RTO = SRTT + max(G, K·RTTVAR), clamped to
//! [`min_rto`, `max_rto`]; §5.5 exponential backoff is applied by the caller through [`RttEstimator::rto_backed_off`].

use tcplab_units::Duration;

/// RFC 6298 (2.3): α = 1/8, β = 1/4, K = 4.
const ALPHA_SHIFT: u32 = 3;
const BETA_SHIFT: u32 = 2;
const K: u64 = 4;

/// The RFC 6298 estimator.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
    latest: Option<Duration>,
}

impl RttEstimator {
    /// `initial_rto` is used until the first sample (RFC 6298 (2.1): 1 s).
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration, granularity: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            rto: initial_rto,
            min_rto,
            max_rto,
            granularity,
            latest: None,
        }
    }

    /// Feeds one RTT measurement `r`.
    pub fn on_sample(&mut self, r: Duration) {
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
                self.rttvar = Duration::from_nanos(v - (v >> BETA_SHIFT) + (err >> BETA_SHIFT));
                self.srtt = Some(Duration::from_nanos(s - (s >> ALPHA_SHIFT) + (r_ns >> ALPHA_SHIFT)));
            }
        }
        self.latest = Some(r);
        let srtt = self.srtt.unwrap_or_default();
        let var_term = Duration::from_nanos(K * self.rttvar.as_nanos()).max(self.granularity);
        // RFC 6298 (2.4), (2.5)
        self.rto = (srtt + var_term).max(self.min_rto).min(self.max_rto);
    }

    /// RFC 6298 (5.7): after a SYN timed out, data transmission starts with an RTO of 3 s (`rto`) unless
    /// an RTT sample has been taken.
    pub fn reinitialize_if_unsampled(&mut self, rto: Duration) {
        if self.srtt.is_none() {
            self.rto = rto.min(self.max_rto);
        }
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
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
        let factor = 1u64.checked_shl(backoff.min(32)).unwrap_or(u64::MAX);
        self.rto.saturating_mul(factor).min(self.max_rto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
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

    #[test]
    fn backoff_doubles_and_caps() {
        let e = RttEstimator::new(Duration::from_secs(1), Duration::from_secs(1), Duration::from_secs(60), ms(1));
        assert_eq!(e.rto_backed_off(0), Duration::from_secs(1));
        assert_eq!(e.rto_backed_off(3), Duration::from_secs(8));
        assert_eq!(e.rto_backed_off(6), Duration::from_secs(60));
        assert_eq!(e.rto_backed_off(100), Duration::from_secs(60));
    }
}
