//! A `tcp_info` snapshot (Linux `include/uapi/linux/tcp.h`, filled by `tcp_get_info`): the fields a
//! socket's owner reads with getsockopt(TCP_INFO), in Linux's units (packets for the windows and the
//! queues, microseconds for times). packetdrill scripts assert on them.

use tcplab_units::Instant;

use super::{Connection, State};
use crate::congestion::INFINITE_SSTHRESH;
use crate::recovery::Phase;

/// Linux `TCP_INFINITE_SSTHRESH`: what `tcpi_snd_ssthresh` reads before the first loss.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// The `tcp_info` fields tcplab models, named as Linux names them (without the `tcpi_` prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TcpInfo {
    /// `TCP_ESTABLISHED` = 1 … `TCP_CLOSING` = 11 (Linux `enum tcp_state`).
    pub state: u8,
    /// Open 0, Disorder 1 (duplicate ACKs or SACKed data seen, no recovery yet), CWR 2, Recovery 3, Loss 4.
    pub ca_state: u8,
    /// Consecutive retransmission timeouts without progress (`icsk_retransmits`).
    pub retransmits: u8,
    /// Zero-window probes sent without an answer (`icsk_probes_out`).
    pub probes: u8,
    /// The exponential backoff of the RTO (`icsk_backoff`).
    pub backoff: u8,
    /// `TCPI_OPT_TIMESTAMPS` 1 | `TCPI_OPT_SACK` 2 | `TCPI_OPT_WSCALE` 4 | `TCPI_OPT_ECN` 8 (ECN negotiated)
    /// | `TCPI_OPT_ECN_SEEN` 16 (an ECT or CE segment received).
    pub options: u8,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    /// The retransmission timeout with backoff, µs.
    pub rto: u32,
    /// Payload bytes per full segment sent (`mss_cache`).
    pub snd_mss: u32,
    /// The peer's segment size as estimated by the receiver.
    pub rcv_mss: u32,
    /// Segments outstanding (`packets_out`), full-sized segments counted from bytes.
    pub unacked: u32,
    /// Segments the peer SACKed (`sacked_out`).
    pub sacked: u32,
    /// Segments marked lost and neither SACKed nor acknowledged since, retransmitted or not (`lost_out`).
    /// RACK's marks (RFC 8985, `tcp_timeout_mark_lost` after an RTO): 0 where RACK does not run
    /// (`rack` off or no SACK), where Linux would count NewReno's marks.
    pub lost: u32,
    /// Retransmitted segments neither SACKed nor acknowledged since (`retrans_out`); RACK's, as `lost`.
    pub retrans: u32,
    /// Smoothed RTT and its variation, µs.
    pub rtt: u32,
    pub rttvar: u32,
    /// Slow-start threshold and congestion window, segments ([`TCP_INFINITE_SSTHRESH`] before a loss).
    pub snd_ssthresh: u32,
    /// Linux's `snd_cwnd`: while PRR sizes the sends of a recovery or CWR reduction, in flight plus what
    /// PRR allows (`tcp_cwnd_reduction`), else the window.
    pub snd_cwnd: u32,
    /// The MSS this endpoint advertised.
    pub advmss: u32,
    /// The reordering degree in segments (`tp->reordering`): the configured `dupthresh`, grown by the
    /// reordering RACK's SACK processing sees (`tcp_check_sack_reordering`) where RACK runs.
    pub reordering: u32,
    /// How often reordering was seen (`tp->reord_seen`; 0 where RACK does not run).
    pub reord_seen: u32,
    /// The window the receiver is willing to grow to (`rcv_ssthresh`), bytes.
    pub rcv_ssthresh: u32,
    /// Retransmitted segments over the connection's life.
    pub total_retrans: u32,
    pub segs_out: u32,
    pub segs_in: u32,
    pub data_segs_out: u32,
    pub data_segs_in: u32,
    /// Bytes cumulatively acknowledged by the peer, and received in order from it.
    pub bytes_acked: u64,
    pub bytes_received: u64,
    /// Bytes written and not yet sent.
    pub notsent_bytes: u32,
    /// The smallest RTT sample, µs (`~0` before any).
    pub min_rtt: u32,
    /// Milliseconds since data was last sent (0 before any).
    pub last_data_sent: u32,
    /// Milliseconds since in-order data last arrived, or since the connection was established before
    /// any (Linux `icsk_ack.lrcvtime`: set by `tcp_finish_connect` and `tcp_create_openreq_child`, then
    /// by `tcp_event_data_recv`, which out-of-order data does not reach); counted from time zero before
    /// establishment (Linux: from jiffies 0).
    pub last_data_recv: u32,
}

fn linux_state(s: State) -> u8 {
    match s {
        State::Established => 1,
        State::SynSent => 2,
        State::SynReceived => 3,
        State::FinWait1 => 4,
        State::FinWait2 => 5,
        State::TimeWait => 6,
        State::Closed => 7,
        State::CloseWait => 8,
        State::LastAck => 9,
        State::Listen => 10,
        State::Closing => 11,
    }
}

impl Connection {
    /// The `tcp_info` snapshot at `now`.
    pub fn tcp_info(&self, now: Instant) -> TcpInfo {
        let smss = self.smss.max(1);
        let us = |d: tcplab_units::Duration| (d.as_nanos() / 1000).min(u32::MAX as u64) as u32;
        let sacked_bytes = self.rec.scoreboard.bytes_within(self.snd_una, self.snd_nxt);
        let in_flight = self.snd_nxt.diff(self.snd_una).max(0) as u32;
        let ca_state = match self.rec.phase {
            Phase::Open if self.rec.dupacks > 0 || sacked_bytes > 0 => 1,
            Phase::Open => 0,
            Phase::Cwr { .. } => 2,
            Phase::NewReno { .. } | Phase::Sack { .. } => 3,
            Phase::Loss { .. } => 4,
        };
        let ss = self.cwnd.ssthresh();
        let ms = |t: Option<Instant>| t.map_or(0, |t| (now.saturating_since(t).as_nanos() / 1_000_000) as u32);
        let (lost, retrans, (reordering, reord_seen)) = match &self.rack {
            Some(r) if self.rack_on() => (r.lost_out(), r.retrans_out(), r.reordering()),
            _ => (0, 0, (self.cfg.dupthresh, 0)),
        };
        let st = &self.st;
        TcpInfo {
            state: linux_state(self.state),
            ca_state,
            retransmits: self.backoff.min(255) as u8,
            probes: self.persist_backoff.min(255) as u8,
            backoff: self.backoff.min(255) as u8,
            options: (self.ts_ok as u8)
                | (self.sack_ok as u8) << 1
                | (self.wscale_ok as u8) << 2
                | (self.ecn.ok() as u8) << 3
                | (self.ecn.seen() as u8) << 4,
            snd_wscale: self.snd_wscale,
            rcv_wscale: self.rcv_wscale,
            rto: us(self.rtt.rto_backed_off(self.backoff)),
            snd_mss: self.smss,
            rcv_mss: self.rcv_mss,
            unacked: in_flight.div_ceil(smss),
            sacked: sacked_bytes.div_ceil(smss),
            lost,
            retrans,
            rtt: self.rtt.srtt().map_or(0, us),
            rttvar: us(self.rtt.rttvar()),
            snd_ssthresh: if ss == INFINITE_SSTHRESH { TCP_INFINITE_SSTHRESH } else { ss / smss },
            snd_cwnd: self.linux_snd_cwnd() / smss,
            advmss: self.cfg.mss.bytes() as u32,
            reordering,
            reord_seen,
            rcv_ssthresh: self.rcv_ssthresh.min(u32::MAX as u64) as u32,
            total_retrans: st.SegsRetrans as u32,
            segs_out: st.SegsOut as u32,
            segs_in: st.SegsIn as u32,
            data_segs_out: st.DataSegsOut as u32,
            data_segs_in: st.DataSegsIn as u32,
            bytes_acked: st.ThruOctetsAcked,
            bytes_received: st.ThruOctetsReceived,
            notsent_bytes: self.write_end.diff(self.snd_nxt).max(0) as u32,
            min_rtt: if st.CountRTT == 0 { u32::MAX } else { (st.MinRTT * 1000.0) as u32 },
            last_data_sent: ms(self.last_data_sent),
            last_data_recv: ((now.as_nanos() / 1_000_000) as u32).wrapping_sub(self.last_data_recv_ms),
        }
    }
}
