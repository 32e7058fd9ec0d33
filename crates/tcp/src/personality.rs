//! Stack personalities: named presets of [`TcpConfig`]. Any knob can be set on top of one.
//! docs/personalities.md gives each value with its source.

use tcplab_units::{ByteSize, Duration};

use crate::config::{
    AckPolicy, CongestionControlKind, CwndUnit, Cwv, DupAcksIn, EcnMode, IfqFull, InitialWindow, RttSampling, TcpConfig,
};
use crate::congestion::{Abc, CubicConfig};
use crate::rtt::RtoModel;

/// The stack personalities, with one line on each.
pub const PERSONALITIES: &[(&str, &str)] = &[
    (
        "rfc",
        "the standards as written: RFC 5681 with RFC 6582 NewReno and RFC 6675 SACK, RFC 3390 IW, RFC 6298 RTO \
         (1 s minimum), delayed ACK every 2 segments or 200 ms",
    ),
    (
        "linux",
        "a current Linux: CUBIC with HyStart, IW 10, SACK with RACK-TLP and PRR, timestamps, quickack/pingpong \
         ACKs, Linux RTO estimator with a 200 ms minimum, unlimited slow-start byte counting, interface stall -> CWR",
    ),
    (
        "linux-2.4",
        "Linux 2.4: packet-counted cwnd grown only when filled, NewReno+SACK, interface stall -> 2.4's CWR \
         (one segment per two ACKs), cwnd moderation (3 segments) on dubious ACKs, RFC 2861 validation, HZ=100 \
         timers, 200 ms minimum RTO, quickack/pingpong ACKs",
    ),
    (
        "linux-2.2",
        "Linux 2.2: packet-counted Reno/NewReno with SACK, IW 2, HZ=100 timers and timestamps, 200 ms minimum \
         RTO, 2.2's delayed ACK (ATO from data interarrival in 10 ms ticks, no ACK on read)",
    ),
    (
        "hpux-11",
        "HP-UX 11 (Mentat STREAMS TCP): byte-counted cwnd, IW 4 segments, Mentat deferred ACKs (ramp to half \
         the window, 50 ms timer, a sub-MSS tail only starts the timer), no SACK between two HP-UX hosts, 500 ms minimum RTO",
    ),
    (
        "bsd-4.4",
        "4.4BSD-Lite: Reno without SACK, IW 1 segment, 200 ms global delayed-ACK timer, 500 ms slow timer, \
         one SMSS per ACK (no byte counting)",
    ),
];

impl TcpConfig {
    /// The preset called `name`, if there is one.
    pub fn personality(name: &str) -> Option<TcpConfig> {
        let rfc = TcpConfig::default();
        match name {
            "rfc" => Some(rfc),
            "linux" => Some(TcpConfig {
                congestion_control: CongestionControlKind::Cubic,
                cubic: CubicConfig {
                    hystart: true,
                    alpha_switch: false,
                    growth_floor_before_loss: true,
                    whole_segments: true,
                    bictcp: true,
                    ..CubicConfig::default()
                },
                initial_window: InitialWindow::Segments(10),
                minshall: true,
                ack_policy: AckPolicy::Linux,
                tick: Duration::from_millis(4),
                ato_min: Duration::from_millis(40),
                delayed_ack_timeout: Duration::from_millis(200),
                rto_model: RtoModel::Linux,
                // Samples from the segments' send times on every ACK, whatever the options.
                rtt_sampling: RttSampling::Linux,
                rto_min: Duration::from_millis(200),
                rto_max: Duration::from_secs(120),
                abc: Abc::Unlimited,
                abc_ca: true,
                ifq_full: IfqFull::Cwr,
                cwv: Cwv::Linux,
                lost_retransmit_detection: true,
                rto_rearm_on_retransmit: true,
                ssthresh_from_cwnd: true,
                keep_sack_on_rto: true,
                quickack_on_reorder: false,
                comp_sack_nr: 44,
                comp_sack_delay: Duration::from_millis(1),
                sack_blocks_expected: 2,
                recv_window_ratio: 1.25,
                grow_window: true,
                tso: true,
                rack: true,
                tlp: true,
                rack_dsack_after_reordering: true,
                rack_rtt_every_delivery: true,
                prr: true,
                undo: true,
                syn_retries: 6,
                fin_delayed_ack: true,
                dsack_covered_ooo: true,
                // net.ipv4.tcp_ecn = 2: ECN when the peer asks (Linux's default since 2.6.31).
                ecn: EcnMode::Accept,
                fin_ends_nagle: true,
                fin_ignores_cwnd: true,
                sack_whole_segments: true,
                cork_ceiling_rto: true,
                ts_recent_needs_valid_ack: true,
                initial_recv_window_whole_mss: true,
                whole_segment_past_window: true,
                fin_past_window: true,
                cwnd_growth_delivered: true,
                cwnd_growth_packets: true,
                cwnd_growth_at_reduction_end: true,
                prr_ssrb_advance_only: true,
                prr_cwr: true,
                prr_packets: true,
                limit_output_bytes: ByteSize::new(4 << 20),
                rcv_mss_estimate_from_536: true,
                rcv_ssthresh_from_initial_window: true,
                grow_window_out_of_order: true,
                too_old_ack_challenged: true,
                // net.ipv4.tcp_frto = 2 (the default since 2.6.24): SACK-enhanced F-RTO, RFC 5682 §3.
                frto: true,
                // Receive memory by skb truesize (6.x `tcp_win_from_space` with a measured
                // `scaling_ratio`): 2304 bytes for a 1448-byte segment, the 160/256 measured on 6.18.
                rcv_mem_truesize: true,
                rcv_skb_overhead: ByteSize::new(856),
                // net.ipv4.tcp_comp_sack_slack_ns = 100000: the compressed-SACK timer's range.
                comp_sack_slack: Duration::from_micros(100),
                // TCP_TIMEOUT_MIN_US: the loss probe's and the reordering timer's 2 ms.
                timeout_min: Duration::from_millis(2),
                ..rfc.clone()
            }),
            "linux-2.4" => Some(TcpConfig {
                congestion_control: CongestionControlKind::NewReno,
                cwnd_unit: CwndUnit::Packets,
                // reno_cong_avoid: slow start while snd_cwnd <= snd_ssthresh.
                slow_start_at_ssthresh: true,
                abc: Abc::Off,
                abc_ca: false,
                ack_policy: AckPolicy::Linux,
                ato_min: Duration::from_millis(40),
                delayed_ack_timeout: Duration::from_millis(200),
                ifq_full: IfqFull::Linux24,
                // The 2003 measurements of this stack read web100 2.x's counters.
                dup_acks_in: DupAcksIn::Web100,
                max_burst: 3,
                cwv: Cwv::Linux24,
                tick: Duration::from_millis(10),
                clock_granularity: Duration::from_millis(10),
                rto_min: Duration::from_millis(200),
                rto_max: Duration::from_secs(120),
                rto_model: RtoModel::Linux,
                ..rfc
            }),
            "linux-2.2" => Some(TcpConfig {
                congestion_control: CongestionControlKind::NewReno,
                cwnd_unit: CwndUnit::Packets,
                // tcp_cong_avoid: slow start while snd_cwnd <= snd_ssthresh.
                slow_start_at_ssthresh: true,
                // tcp_recalc_ssthresh: max(min(snd_wnd in segments, snd_cwnd) / 2, 2), on a fast
                // retransmit and on a timeout alike.
                ssthresh_from_cwnd: true,
                ssthresh_within_window: true,
                // 2.2-stable tcp_ipv4.c 1.175.2.13 (1999): `snd_cwnd = 2` in tcp_v4_init_sock and
                // tcp_create_openreq_child, "so many TCP implementations out there (incorrectly) count
                // the initial SYN frame"; the ACK of the SYN does not count as data acked.
                initial_window: InitialWindow::Segments(2),
                abc: Abc::Off,
                abc_ca: false,
                ack_policy: AckPolicy::Linux22,
                // tcp_do_sendmsg: an MSS-sized skb per new segment, charged against SO_SNDBUF (65535, the
                // 2.2 wmem default) by its truesize: MAX_TCP_HEADER + 15 + MSS, aligned, + struct sk_buff.
                send_buffer_truesize: ByteSize::new(1800),
                ato_min: Duration::from_millis(20),
                delayed_ack_timeout: Duration::from_millis(200),
                ifq_full: IfqFull::Cwr,
                limited_transmit: false,
                tick: Duration::from_millis(10),
                clock_granularity: Duration::from_millis(10),
                timestamp_tick: Duration::from_millis(10),
                rto_min: Duration::from_millis(200),
                rto_max: Duration::from_secs(120),
                rto_model: RtoModel::Linux,
                ..rfc.clone()
            }),
            "hpux-11" => Some(TcpConfig {
                cwnd_unit: CwndUnit::Bytes,
                initial_window: InitialWindow::Segments(4),
                // Mentat's deferred ACK and Nagle (Solaris 2.5.1 tcp.c; docs/personalities.md).
                ack_policy: AckPolicy::Mentat,
                delayed_ack_timeout: Duration::from_millis(50),
                // tcp_sack_enable = 2 (HP-UX default): accepted, never initiated, so two HP-UX hosts use
                // none. (tcp_ts_enable = 2 likewise; timestamps stay on here until
                // classic/gige-ack-avoidance, calibrated with them, is revisited: docs/personalities.md.)
                sack: false,
                deferred_ack_max: 22,
                abc: Abc::Off,
                rto_min: Duration::from_millis(500),
                ..rfc
            }),
            "bsd-4.4" => Some(TcpConfig {
                congestion_control: CongestionControlKind::Reno,
                sack: false,
                initial_window: InitialWindow::Segments(1),
                ack_policy: AckPolicy::Bsd,
                delayed_ack_timeout: Duration::from_millis(200),
                tick: Duration::from_millis(500),
                clock_granularity: Duration::from_millis(500),
                rto_min: Duration::from_secs(1),
                rto_max: Duration::from_secs(64),
                rto_initial: Duration::from_secs(3),
                abc: Abc::Off,
                abc_ca: false,
                limited_transmit: false,
                mss: ByteSize::new(1460),
                ..rfc
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_personality_exists_and_validates() {
        for (name, _) in PERSONALITIES {
            let cfg = TcpConfig::personality(name).unwrap_or_else(|| panic!("{name} is listed but missing"));
            cfg.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(TcpConfig::personality("windows-95").is_none());
    }
}
