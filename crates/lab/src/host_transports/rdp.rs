//! RDP (RFC 908, RFC 1151; crates/rdp) as the scenario layer knows it: the host's `rdp` table, its keys,
//! the bounds of its knobs and the metrics its tests report. Its run on the simulator is
//! `crate::transport::rdp`.

use tcplab_rdp::RdpConfig;

use super::{KeysDecl, TransportConfig, LATENCY_US};
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
        crate::columns::rdp_stats_vars()
    }

    const STATS_HINT: &'static str = ", or client.VAR / server.VAR with a statistic of RDP's connection ends (e.g. \
                 \"client.MaxSmoothedRTT\", \"client.SegsRetrans\")";

    const SERIES_COLUMNS: &'static [&'static str] = &crate::columns::RDP_SERIES_COLUMNS;
}
