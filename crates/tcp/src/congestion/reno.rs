//! Reno/NewReno window growth and decrease: RFC 5681 §3.1 (slow start, congestion avoidance), §3.2
//! (fast retransmit/recovery), RFC 3465 (byte counting). NewReno's partial-ACK handling (RFC 6582) is
//! recovery, not window growth, and lives in the connection.

use super::{Abc, AckInfo, CongestionControl, CongestionEvent, Growth, INFINITE_SSTHRESH, MAX_CWND};
use tcplab_units::Instant;

#[derive(Debug, Clone)]
pub struct Reno {
    cwnd: u32,
    ssthresh: u32,
    abc: Abc,
    abc_ca: bool,
    /// cwnd is a whole number of segments, grown as Linux grows it (`in_packets`).
    packets: bool,
    /// Slow start at cwnd = ssthresh as well as below (Linux 2.2/2.4 `snd_cwnd <= snd_ssthresh`).
    ss_at_ssthresh: bool,
    /// Linux `snd_cwnd_cnt`: ACKed segments toward the next one-segment increase (packet counting).
    cwnd_cnt: u32,
    /// (cwnd, ssthresh) before the last congestion event, for undo.
    prior: Option<(u32, u32)>,
    /// RFC 3465 §2.1 bytes_acked, for byte counting in congestion avoidance.
    bytes_acked: u32,
    /// cwnd when fast recovery ends.
    exit: RecoveryExit,
}

/// The window at the end of fast recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecoveryExit {
    /// RFC 5681 §3.2 step 6 (Reno): cwnd = ssthresh.
    Ssthresh,
    /// RFC 6582 §3.2 step 3 option (1) (NewReno): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), so
    /// that a full ACK leaving little outstanding does not release a burst.
    FlightSize,
}

impl Reno {
    /// `abc` limits slow-start growth per ACK; `abc_ca` turns on byte counting in congestion avoidance.
    /// Fast recovery ends as NewReno's does (RFC 6582 §3.2 step 3); see [`Reno::rfc5681_exit`].
    pub fn new(initial_window: u32, abc: Abc, abc_ca: bool) -> Self {
        Reno {
            cwnd: initial_window,
            ssthresh: INFINITE_SSTHRESH,
            abc,
            abc_ca,
            packets: false,
            ss_at_ssthresh: false,
            cwnd_cnt: 0,
            prior: None,
            bytes_acked: 0,
            exit: RecoveryExit::FlightSize,
        }
    }

    /// Ends fast recovery as RFC 5681 §3.2 step 6 does for Reno: cwnd = ssthresh.
    pub fn rfc5681_exit(mut self) -> Self {
        self.exit = RecoveryExit::Ssthresh;
        self
    }

    /// Keeps cwnd as a whole number of segments, grown as Linux does (`tcp_slow_start`,
    /// `tcp_cong_avoid_ai`): +1 segment per ACK in slow start (more with `abc`), and in congestion
    /// avoidance +1 segment once cwnd ACKs (or, with `abc_ca`, cwnd ACKed segments) have arrived.
    pub fn in_packets(mut self) -> Self {
        self.packets = true;
        self
    }

    /// Slow start while cwnd ≤ ssthresh rather than < (Linux 2.2 `tcp_cong_avoid`, 2.4 `reno_cong_avoid`).
    pub fn slow_start_at_ssthresh(mut self) -> Self {
        self.ss_at_ssthresh = true;
        self
    }

    /// Whether this ACK grows cwnd by slow start.
    #[inline]
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh || (self.ss_at_ssthresh && self.cwnd == self.ssthresh)
    }

    /// [`CongestionControl::on_ack`] from the three facts of the ACK that Reno reads (of [`AckInfo`]):
    /// the connection calls it inline on every ACK of new data, without building the whole `AckInfo`.
    #[inline(always)]
    pub(crate) fn grow(&mut self, acked: u32, smss: u32, after_rto: bool) -> Growth {
        if self.packets {
            return self.on_ack_packets(acked, smss, after_rto);
        }
        if self.in_slow_start() {
            // RFC 5681 (2); RFC 3465 §2.2 limits the increase per ACK to L, §2.3 to 1 SMSS after an RTO.
            let inc = self.abc.slow_start_increase(acked, smss, after_rto, self.cwnd, self.ssthresh);
            self.cwnd = self.cwnd.saturating_add(inc).min(MAX_CWND);
            return Growth::SlowStart;
        }
        let before = self.cwnd;
        match self.abc_ca {
            // RFC 5681 (3): cwnd += SMSS*SMSS/cwnd per ACK, at least 1 byte.
            false => {
                let inc = (smss as u64 * smss as u64 / self.cwnd.max(1) as u64).max(1) as u32;
                self.cwnd = self.cwnd.saturating_add(inc).min(MAX_CWND);
            }
            // RFC 3465 §2.1: one SMSS per cwnd of acknowledged bytes.
            true => {
                self.bytes_acked = self.bytes_acked.saturating_add(acked);
                if self.bytes_acked >= self.cwnd {
                    self.bytes_acked -= self.cwnd;
                    self.cwnd = self.cwnd.saturating_add(smss).min(MAX_CWND);
                }
            }
        }
        Growth::CongAvoid { grew: self.cwnd > before }
    }

    fn on_ack_packets(&mut self, acked: u32, smss: u32, after_rto: bool) -> Growth {
        let smss = smss.max(1);
        // Linux snd_cwnd_clamp: the whole number of segments that fits MAX_CWND.
        let clamp = (MAX_CWND / smss).max(1);
        let mut pkts = (self.cwnd / smss).max(1);
        let acked = (acked / smss).max(1);
        if self.in_slow_start() {
            pkts = pkts.saturating_add(match self.abc {
                Abc::Off => 1,
                _ if after_rto => 1,
                Abc::L1 => acked.min(1),
                Abc::L2 => acked.min(2),
                Abc::Unlimited => acked,
            });
            self.cwnd = pkts.min(clamp) * smss;
            return Growth::SlowStart;
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(if self.abc_ca { acked } else { 1 });
        let grew = self.cwnd_cnt >= pkts && pkts < clamp;
        if grew {
            self.cwnd_cnt -= pkts;
            pkts += 1;
        }
        self.cwnd = pkts.min(clamp) * smss;
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
        self.grow(a.acked, a.smss, a.after_rto)
    }

    fn on_congestion_event(&mut self, _now: Instant, event: CongestionEvent, flight_size: u32, smss: u32) {
        if !matches!(event, CongestionEvent::Timeout { first: false }) {
            self.prior = Some((self.cwnd, self.ssthresh));
        }
        // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2*SMSS); held on a repeated timeout.
        if !matches!(event, CongestionEvent::Timeout { first: false }) {
            self.ssthresh = (flight_size / 2).max(2 * smss);
            if self.packets {
                self.ssthresh -= self.ssthresh % smss.max(1);
            }
        }
        self.cwnd = match event {
            CongestionEvent::FastRetransmit => self.ssthresh.min(MAX_CWND),
            // RFC 5681 §3.1: LW = 1 SMSS.
            CongestionEvent::Timeout { .. } => smss,
        };
        self.bytes_acked = 0;
        self.cwnd_cnt = 0;
    }

    fn on_recovery_exit(&mut self, _now: Instant, flight_size: u32, smss: u32) {
        self.cwnd = match self.exit {
            // RFC 5681 §3.2 step 6: "set cwnd to ssthresh" (deflating the window).
            RecoveryExit::Ssthresh => self.ssthresh,
            // RFC 6582 §3.2 step 3, option (1): min(ssthresh, max(FlightSize, SMSS) + SMSS).
            RecoveryExit::FlightSize => self.ssthresh.min(flight_size.max(smss).saturating_add(smss)),
        };
        if self.packets {
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

    fn set_ssthresh(&mut self, ssthresh: u32) {
        self.ssthresh = ssthresh;
    }

    fn set_window(&mut self, cwnd: u32) {
        self.cwnd = cwnd.min(MAX_CWND);
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

    /// Linux 2.2/2.4 slow start at cwnd = ssthresh: the ACK that finds them equal adds a whole segment and
    /// is a slow-start step; then congestion avoidance. Without the rule that ACK only counts toward CA.
    #[test]
    fn slow_start_at_ssthresh_takes_one_step_at_equality() {
        let t = Instant::ZERO;
        for at_ssthresh in [false, true] {
            let reno = Reno::new(4 * MSS, Abc::Off, false).in_packets();
            let mut cc = if at_ssthresh { reno.slow_start_at_ssthresh() } else { reno };
            cc.on_congestion_event(t, CongestionEvent::FastRetransmit, 20 * MSS, MSS);
            assert_eq!((cc.window(), cc.ssthresh()), (10 * MSS, 10 * MSS));
            let growth = cc.on_ack(t, &ack(MSS, false));
            if at_ssthresh {
                assert_eq!((growth, cc.window()), (Growth::SlowStart, 11 * MSS));
                assert!(matches!(cc.on_ack(t, &ack(MSS, false)), Growth::CongAvoid { grew: false }));
            } else {
                assert_eq!((growth, cc.window()), (Growth::CongAvoid { grew: false }, 10 * MSS));
            }
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

    /// A receive-window-limited flow without cwnd validation keeps growing cwnd on every ACK. It must
    /// saturate at [`MAX_CWND`] in slow start and in congestion avoidance, in bytes and in packets, and
    /// never wrap (issue 11: cwnd 4,294,846,228 wrapped to 272,224 in congestion avoidance).
    #[test]
    fn cwnd_saturates_at_the_cap() {
        let t = Instant::ZERO;
        let smss = 1448;
        let ack = |acked| AckInfo { acked, smss, flight_size: 1 << 20, after_rto: false, srtt: None, rtt_sample: None };
        for packets in [false, true] {
            for abc_ca in [false, true] {
                let reno = Reno::new(10 * smss, Abc::Unlimited, abc_ca);
                let mut cc = if packets { reno.in_packets() } else { reno };
                // Slow start: 1 MiB per ACK reaches the cap within 1024 ACKs and stays there.
                for _ in 0..2_000 {
                    cc.on_ack(t, &ack(1 << 20));
                    assert!(cc.window() <= MAX_CWND);
                }
                assert!(cc.window() > MAX_CWND - smss, "packets {packets}: {}", cc.window());
                // Congestion avoidance just below the cap.
                cc.on_congestion_event(t, CongestionEvent::FastRetransmit, MAX_CWND, smss);
                cc.set_window((MAX_CWND / smss - 1) * smss);
                let mut last = cc.window();
                for i in 0..1_000_000u32 {
                    cc.on_ack(t, &ack(1 << 20));
                    assert!(cc.window() >= last, "cwnd fell from {last} to {} at ACK {i}", cc.window());
                    assert!(cc.window() <= MAX_CWND);
                    last = cc.window();
                }
                if abc_ca {
                    assert!(cc.window() > MAX_CWND - smss, "packets {packets}: {}", cc.window());
                }
            }
        }
    }
}
