//! Reno/NewReno window growth and decrease: RFC 5681 §3.1 (slow start, congestion avoidance), §3.2
//! (fast retransmit/recovery), RFC 3465 (byte counting). NewReno's partial-ACK handling (RFC 6582) is
//! recovery, not window growth, and lives in the connection.

use super::{Abc, AckInfo, CongestionControl, CongestionEvent, Growth, INFINITE_SSTHRESH};
use crate::config::CwndUnit;
use tcplab_units::Instant;

#[derive(Debug, Clone)]
pub struct Reno {
    cwnd: u32,
    ssthresh: u32,
    abc: Abc,
    abc_ca: bool,
    unit: CwndUnit,
    /// Linux `snd_cwnd_cnt`: ACKed segments toward the next one-segment increase (packet counting).
    cwnd_cnt: u32,
    /// (cwnd, ssthresh) before the last congestion event, for undo.
    prior: Option<(u32, u32)>,
    /// RFC 3465 §2.1 bytes_acked, for byte counting in congestion avoidance.
    bytes_acked: u32,
}

impl Reno {
    /// `abc` limits slow-start growth per ACK; `abc_ca` turns on byte counting in congestion avoidance.
    pub fn new(initial_window: u32, abc: Abc, abc_ca: bool) -> Self {
        Reno {
            cwnd: initial_window,
            ssthresh: INFINITE_SSTHRESH,
            abc,
            abc_ca,
            unit: CwndUnit::Bytes,
            cwnd_cnt: 0,
            prior: None,
            bytes_acked: 0,
        }
    }

    /// Keeps cwnd as a whole number of segments, grown as Linux does (`tcp_slow_start`,
    /// `tcp_cong_avoid_ai`): +1 segment per ACK in slow start (more with `abc`), and in congestion
    /// avoidance +1 segment once cwnd ACKs (or, with `abc_ca`, cwnd ACKed segments) have arrived.
    pub fn in_packets(mut self) -> Self {
        self.unit = CwndUnit::Packets;
        self
    }

    fn on_ack_packets(&mut self, a: &AckInfo) -> Growth {
        let smss = a.smss.max(1);
        let mut pkts = (self.cwnd / smss).max(1);
        let acked = (a.acked / smss).max(1);
        if self.cwnd < self.ssthresh {
            pkts += match self.abc {
                Abc::Off => 1,
                _ if a.after_rto => 1,
                Abc::L1 => acked.min(1),
                Abc::L2 => acked.min(2),
                Abc::Unlimited => acked,
            };
            self.cwnd = pkts * smss;
            return Growth::SlowStart;
        }
        self.cwnd_cnt += if self.abc_ca { acked } else { 1 };
        let grew = self.cwnd_cnt >= pkts;
        if grew {
            self.cwnd_cnt -= pkts;
            pkts += 1;
        }
        self.cwnd = pkts * smss;
        Growth::CongAvoid { grew }
    }
}

impl CongestionControl for Reno {
    fn window(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    fn on_ack(&mut self, _now: Instant, a: &AckInfo) -> Growth {
        if self.unit == CwndUnit::Packets {
            return self.on_ack_packets(a);
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 (2); RFC 3465 §2.2 limits the increase per ACK to L, §2.3 to 1 SMSS after an RTO.
            self.cwnd = self.cwnd.saturating_add(self.abc.slow_start_increase(a, self.cwnd, self.ssthresh));
            return Growth::SlowStart;
        }
        let before = self.cwnd;
        match self.abc_ca {
            // RFC 5681 (3): cwnd += SMSS*SMSS/cwnd per ACK, at least 1 byte.
            false => self.cwnd += (a.smss as u64 * a.smss as u64 / self.cwnd as u64).max(1) as u32,
            // RFC 3465 §2.1: one SMSS per cwnd of acknowledged bytes.
            true => {
                self.bytes_acked = self.bytes_acked.saturating_add(a.acked);
                if self.bytes_acked >= self.cwnd {
                    self.bytes_acked -= self.cwnd;
                    self.cwnd += a.smss;
                }
            }
        }
        Growth::CongAvoid { grew: self.cwnd > before }
    }

    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, flight_size: u32, smss: u32) {
        if !matches!(event, CongestionEvent::Timeout { first: false }) {
            self.prior = Some((self.cwnd, self.ssthresh));
        }
        // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2*SMSS); held on a repeated timeout.
        if !matches!(event, CongestionEvent::Timeout { first: false }) {
            self.ssthresh = (flight_size / 2).max(2 * smss);
            if self.unit == CwndUnit::Packets {
                self.ssthresh -= self.ssthresh % smss.max(1);
            }
        }
        self.cwnd = match event {
            CongestionEvent::FastRetransmit => self.ssthresh,
            // RFC 5681 §3.1: LW = 1 SMSS.
            CongestionEvent::Timeout { .. } => smss,
        };
        self.bytes_acked = 0;
        self.cwnd_cnt = 0;
    }

    fn on_recovery_exit(&mut self, _now: Instant, flight_size: u32, smss: u32) {
        // RFC 6582 §3.2 step 3, option (1): min(ssthresh, max(FlightSize, SMSS) + SMSS).
        self.cwnd = self.ssthresh.min(flight_size.max(smss) + smss);
        if self.unit == CwndUnit::Packets {
            self.cwnd = (self.cwnd - self.cwnd % smss.max(1)).max(smss);
        }
        self.bytes_acked = 0;
    }

    fn on_spurious_congestion_event(&mut self) {
        // RFC 4015 §3: restore; keep whatever the window grew to since.
        if let Some((cwnd, ssthresh)) = self.prior.take() {
            self.cwnd = self.cwnd.max(cwnd);
            self.ssthresh = ssthresh;
        }
    }

    fn set_window(&mut self, cwnd: u32) {
        self.cwnd = cwnd;
        self.bytes_acked = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;
    fn ack(acked: u32, after_rto: bool) -> AckInfo {
        AckInfo { acked, smss: MSS, flight_size: 10 * MSS, after_rto, srtt: None, rtt_sample: None }
    }

    #[test]
    fn slow_start_limits_by_abc() {
        let t = Instant::ZERO;
        let mut off = Reno::new(2 * MSS, Abc::Off, false);
        let mut l1 = Reno::new(2 * MSS, Abc::L1, false);
        let mut l2 = Reno::new(2 * MSS, Abc::L2, false);
        for cc in [&mut off, &mut l1, &mut l2] {
            assert_eq!(cc.on_ack(t, &ack(2 * MSS, false)), Growth::SlowStart);
        }
        assert_eq!(off.window(), 3 * MSS); // one SMSS per ACK
        assert_eq!(l1.window(), 3 * MSS); // min(N, SMSS)
        assert_eq!(l2.window(), 4 * MSS); // min(N, 2 SMSS)
        l2.on_ack(t, &ack(2 * MSS, true));
        assert_eq!(l2.window(), 5 * MSS, "L = 1 SMSS after an RTO");
        let mut off = Reno::new(2 * MSS, Abc::Off, false);
        off.on_ack(t, &ack(100, false));
        assert_eq!(off.window(), 3 * MSS, "packet counting ignores how much was acked");
    }

    #[test]
    fn congestion_avoidance_adds_one_smss_per_window() {
        let t = Instant::ZERO;
        let mut cc = Reno::new(10 * MSS, Abc::L1, true);
        cc.on_congestion_event(t, CongestionEvent::FastRetransmit, 20 * MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (10 * MSS, 10 * MSS));
        for _ in 0..10 {
            cc.on_ack(t, &ack(MSS, false));
        }
        assert_eq!(cc.window(), 11 * MSS);
        let mut cc = Reno::new(10 * MSS, Abc::Off, false);
        cc.on_congestion_event(t, CongestionEvent::FastRetransmit, 20 * MSS, MSS);
        for _ in 0..10 {
            cc.on_ack(t, &ack(MSS, false));
        }
        // Σ MSS²/cwnd over 10 ACKs is a little under one MSS.
        assert!(cc.window() > 10 * MSS + 900 && cc.window() < 11 * MSS, "{}", cc.window());
    }

    #[test]
    fn packet_counting_grows_whole_segments() {
        let t = Instant::ZERO;
        let mut cc = Reno::new(4 * MSS, Abc::Off, false).in_packets();
        cc.on_ack(t, &ack(3 * MSS, false));
        assert_eq!(cc.window(), 5 * MSS, "slow start: +1 segment per ACK however much it covers");
        cc.on_congestion_event(t, CongestionEvent::FastRetransmit, 21 * MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (10 * MSS, 10 * MSS), "ssthresh a whole number of segments");
        for i in 1..=10 {
            cc.on_ack(t, &ack(MSS, false));
            assert_eq!(cc.window(), if i < 10 { 10 * MSS } else { 11 * MSS }, "ACK {i}");
        }
    }

    #[test]
    fn timeouts_set_loss_window_and_hold_ssthresh_on_repeat() {
        let t = Instant::ZERO;
        let mut cc = Reno::new(10 * MSS, Abc::L1, false);
        cc.on_congestion_event(t, CongestionEvent::Timeout { first: true }, 30 * MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 15 * MSS));
        cc.on_congestion_event(t, CongestionEvent::Timeout { first: false }, MSS, MSS);
        assert_eq!((cc.window(), cc.ssthresh()), (MSS, 15 * MSS));
        cc.on_congestion_event(t, CongestionEvent::Timeout { first: true }, MSS, MSS);
        assert_eq!(cc.ssthresh(), 2 * MSS, "floor of 2 SMSS");
    }
}
