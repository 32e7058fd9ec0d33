//! RDP (RFC 908, RFC 1151; crates/rdp) as the scenario layer knows it: the host's `rdp` table, its keys,
//! the bounds of its knobs and the metrics its tests report. Its run on the simulator is
//! `crate::transport::rdp`.

use tcplab_rdp::RdpConfig;

use super::{BudgetShape, KeysDecl, TestDecl, TransportConfig, LATENCY_US};
use crate::bounds::{ms, s, Limit, Range, HOUR, TICK_WHY, TIMER_WHY};
use tcplab_units::Duration;

impl TransportConfig for RdpConfig {
    const TABLE: &'static str = "rdp";
    const KNOBS: &'static [(&'static str, &'static str)] = tcplab_rdp::config::KNOBS;

    /// RDP has no personalities: every host starts from the RFC's defaults.
    fn base(_stack: &str) -> Option<Self> {
        Some(tcplab_rdp::RdpConfig::default())
    }
    fn validate(&self) -> Result<(), String> {
        tcplab_rdp::RdpConfig::validate(self)
    }

    const KEYS: KeysDecl = KeysDecl {
        probe_kind: "rdp_stream",
        config: ("RdpConfig", "crates/rdp/src/config.rs"),
        default: "{} (RdpConfig's defaults); an error with a TCP test",
        doc: "RDP knobs for the RDP tests (`rdp_stream`, `rdp_rr`) only: `RdpConfig`'s defaults with the keys given on top (docs/rdp.md). A TCP test refuses them.",
        nested: &[("rto_params", "RtoParams", "crates/rtt/src/lib.rs")],
        // Absent by default: its type is the only one an option has.
        optional: &[("nul_idle", "duration")],
        units: &[
            ("max_outstanding", "segments"),
            ("max_segment_size", "octets"),
            ("eack_max_entries", "EACKs per segment"),
            ("send_queue", "messages"),
            ("rfc6298_k", "multiple of RTTVAR"),
        ],
        kinds: "`rdp_stream` (RDP messages client → server), `rdp_rr` (request/response over RDP)",
    };

    /// Each knob's bounds (crates/rdp's validate checks the rest).
    const LIMITS: &'static [Limit] = &[
        Limit { key: "*.rdp.version", range: Range::Count(1, 2), why: "RFC 908 and RFC 1151" },
        Limit { key: "*.rdp.max_outstanding", range: Range::Count(1, 64), why: "segments" },
        Limit { key: "*.rdp.max_segment_size", range: Range::Count(1, 65535), why: "a 16-bit field" },
        Limit { key: "*.rdp.eack_max_entries", range: Range::Count(0, 65535), why: "a 16-bit count" },
        Limit { key: "*.rdp.send_queue", range: Range::Count(1, 1_000_000), why: "messages" },
        Limit { key: "*.rdp.tick", range: Range::Time(ms(1), s(10)), why: TICK_WHY },
        Limit { key: "*.rdp.initial_rto", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
        Limit { key: "*.rdp.min_rto", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
        Limit { key: "*.rdp.max_rto", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
        Limit { key: "*.rdp.rto_params.*", range: Range::Real(0.0, 100.0), why: "estimator gains and multipliers" },
        Limit { key: "*.rdp.close_wait", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
        Limit { key: "*.rdp.nul_idle", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    ];

    /// The RDP backend runs no CPU model: its tests report no CPU figures.
    const CPU_MODEL: bool = false;

    fn metric_names(workload: &str) -> Option<Vec<&'static str>> {
        Some(match workload {
            "stream" => vec![
                "throughput_bps",
                "delivered_bytes",
                "messages_delivered",
                "retransmissions",
                "duplicates_received",
                "data_drops",
                "timeouts",
                "elapsed_s",
            ],
            "rr" => {
                let mut v = vec!["transactions_per_s", "transactions"];
                v.extend(LATENCY_US);
                v.extend(["retransmissions", "elapsed_s"]);
                v
            }
            _ => return None,
        })
    }

    /// `RdpStats`' numbers (`client.MaxSmoothedRTT`), not sampled ones.
    fn stats_vars() -> Vec<String> {
        match serde_json::to_value(tcplab_rdp::RdpStats::default()) {
            Ok(serde_json::Value::Object(m)) => m.into_iter().filter(|(_, v)| v.is_number()).map(|(k, _)| k).collect(),
            _ => Vec::new(),
        }
    }

    const STATS_HINT: &'static str = ", or client.VAR / server.VAR with a statistic of RDP's connection ends (e.g. \
                 \"client.MaxSmoothedRTT\", \"client.SegsRetrans\")";

    /// Time, then the sender's RFC 4898-style variables (docs/results.md).
    const SERIES_COLUMNS: &'static [&'static str] = &[
        "t_s",
        "SmoothedRTT",
        "CurRTO",
        "RttSamples",
        "RttSamplesDiscarded",
        "SegsRetrans",
        "DataSegsOut",
        "Timeouts",
    ];

    const TEST: TestDecl = TestDecl {
        refused: &[
            ("test.send_buffer", "RDP has no socket buffers in bytes; its send queue is client.rdp.send_queue"),
            ("test.recv_buffer", "RDP has no socket buffers in bytes; its send queue is client.rdp.send_queue"),
            ("test.nodelay", "RDP has no Nagle algorithm"),
        ],
        series_vars_refused: Some(
            "test.series = \"INTERVAL\" (the RDP sender's SmoothedRTT, CurRTO, … and every RTT sample, docs/rdp.md)",
        ),
        // The 1986 experiment's test: a number of messages, timed until the last is delivered.
        messages: &["stream"],
    };

    /// Part C of the RDP note: 512 octets.
    fn default_message(_workload: &str) -> Option<u64> {
        Some(512)
    }

    /// One send call is one message: at most the receiver's max segment size less the IP and RDP headers.
    fn check_message(&self, workload: &str, message: u64) -> Result<(), String> {
        if workload != "stream" {
            return Ok(());
        }
        let max = u64::from(self.max_segment_size)
            - u64::from(tcplab_wire::IPV4_HEADER_LEN + tcplab_wire::rdp::RDP_HEADER_LEN);
        if message == 0 || message > max {
            return Err(format!(
                "accepted 1B to {max}B (one RDP message: server.rdp.max_segment_size {} less 38 octets of IP and \
                 RDP headers)",
                self.max_segment_size
            ));
        }
        Ok(())
    }

    /// A stream's segment carries one message; the sender keeps `max_outstanding` segments in flight; the
    /// sender keeps every RTT measurement with `test.series`.
    fn budget(&self, receiver: &Self, workload: &str, message: u64) -> Option<BudgetShape> {
        let mss = f64::from(receiver.max_segment_size).max(1.0);
        let payload = if workload == "stream" { (message as f64).min(mss).max(1.0) } else { mss };
        Some(BudgetShape { mss, payload, window: f64::from(self.max_outstanding) * payload, rtt_samples: true })
    }
}
