//! TCP (crates/tcp) as the scenario layer knows it: the host's `tcp` table, its keys, the bounds of its
//! knobs and the metrics its tests report. Its run on the simulator is `crate::transport::tcp`.

use tcplab_tcp::TcpConfig;

use super::{KeysDecl, TestDecl, TransportConfig, LATENCY_US};
use crate::bounds::{ms, s, Limit, Range, GIB, HOUR, MAX_RATE, MIN_RATE, RATE_WHY, TICK_WHY, TIMER_WHY};
use tcplab_units::Duration;

impl TransportConfig for TcpConfig {
    const TABLE: &'static str = "tcp";
    const KNOBS: &'static [(&'static str, &'static str)] = tcplab_tcp::config::KNOBS;
    const OMITTED_AT_DEFAULT: &'static [(&'static str, &'static str)] = tcplab_tcp::config::OMITTED_AT_DEFAULT;

    fn base(stack: &str) -> Option<Self> {
        tcplab_tcp::TcpConfig::personality(stack)
    }
    fn validate(&self) -> Result<(), String> {
        tcplab_tcp::TcpConfig::validate(self)
    }

    const KEYS: KeysDecl = KeysDecl {
        probe_kind: "tcp_stream",
        config: ("TcpConfig", "crates/tcp/src/config.rs"),
        default: "{} (the personality's values)",
        doc: "TCP knobs set on top of the personality (`TcpConfig`); a nested table (`cubic`, `rto_params`) changes only the fields it names.",
        nested: &[
            ("cubic", "CubicConfig", "crates/tcp/src/congestion/cubic.rs"),
            ("rto_params", "RtoParams", "crates/rtt/src/lib.rs"),
        ],
        optional: &[],
        units: &[
            ("ack_every", "full-sized segments"),
            ("deferred_ack_max", "full-sized segments"),
            ("dupthresh", "duplicate ACKs"),
            ("max_burst", "segments"),
            ("ack_immediate_p", "probability"),
            ("rfc6298_k", "multiple of RTTVAR"),
        ],
        kinds: "`tcp_stream` (bulk transfer client → server, netperf TCP_STREAM), `tcp_maerts` (server → client, TCP_MAERTS), `tcp_rr` (request/response on long-lived connections, TCP_RR), `tcp_crr` (a connection per transaction, TCP_CRR), `tcp_msg` (a one-way stream of small messages, timed per message)",
    };

    /// Each knob's bounds (crates/tcp's validate checks the relations between knobs; these bound each one).
    /// A new knob's row goes at the end.
    const LIMITS: &'static [Limit] = &[
        Limit {
            key: "*.tcp.mss",
            range: Range::Size(88, 65495),
            why: "an IPv4 datagram holds at most 65495 bytes of TCP payload",
        },
        Limit { key: "*.tcp.send_buffer", range: Range::Size(1, GIB), why: "socket buffers up to 1GiB" },
        Limit { key: "*.tcp.recv_buffer", range: Range::Size(1, GIB), why: "socket buffers up to 1GiB" },
        Limit { key: "*.tcp.send_buffer_truesize", range: Range::Size(0, 1 << 20), why: "bookkeeping bytes per skb" },
        Limit {
            key: "*.tcp.recv_window_ratio",
            range: Range::Real(0.25, 4.0),
            why: "the window's share of the buffer",
        },
        Limit {
            key: "*.tcp.timestamp_tick",
            range: Range::Time(Duration::from_micros(1), s(1)),
            why: "RFC 7323 §5.4: the timestamp clock ticks between 1 ms and 1 s (1 us allowed for fast paths)",
        },
        Limit { key: "*.tcp.tso_max_size", range: Range::Size(1024, 1 << 20), why: "Linux's GSO limit is 64KiB" },
        Limit {
            key: "*.tcp.min_tso_segs",
            range: Range::Count(1, 255),
            why: "Linux tcp_min_tso_segs's range, segments",
        },
        Limit {
            key: "*.tcp.sack_blocks_expected",
            range: Range::Count(1, 4),
            why: "the receiver's SACK array holds 4 blocks (Linux TCP_NUM_SACKS)",
        },
        Limit {
            key: "*.tcp.tso_win_divisor",
            range: Range::Count(0, 1000),
            why: "Linux tcp_tso_win_divisor; 0 = 3 segments",
        },
        Limit { key: "*.tcp.ack_every", range: Range::Count(1, 64), why: "segments per delayed ACK" },
        Limit {
            key: "*.tcp.delayed_ack_timeout",
            range: Range::Time(Duration::ZERO, ms(500)),
            why: "RFC 1122 4.2.3.2: less than 500 ms",
        },
        Limit { key: "*.tcp.deferred_ack_max", range: Range::Count(2, 64), why: "segments" },
        Limit {
            key: "*.tcp.ato_min",
            range: Range::Time(Duration::ZERO, ms(500)),
            why: "RFC 1122 4.2.3.2: an ACK is delayed less than 500 ms",
        },
        Limit { key: "*.tcp.comp_sack_nr", range: Range::Count(0, 255), why: "Linux tcp_comp_sack_nr is a byte" },
        Limit {
            key: "*.tcp.comp_sack_delay",
            range: Range::Time(Duration::ZERO, ms(500)),
            why: "a delayed ACK's bound",
        },
        Limit { key: "*.tcp.ack_immediate_p", range: Range::Real(0.0, 1.0), why: "a probability" },
        Limit {
            key: "*.tcp.cubic.hystart_ack_delta",
            range: Range::Time(Duration::ZERO, s(1)),
            why: "a gap between ACKs",
        },
        Limit { key: "*.tcp.cubic.*", range: Range::Real(0.0, 100.0), why: "CUBIC's constants (RFC 9438 §5)" },
        Limit { key: "*.tcp.dupthresh", range: Range::Count(1, 1000), why: "duplicate ACKs" },
        Limit { key: "*.tcp.syn_retries", range: Range::Count(0, 255), why: "Linux tcp_syn_retries is a byte" },
        Limit { key: "*.tcp.pacing_ss_ratio", range: Range::Count(1, 10_000), why: "percent of cwnd per SRTT" },
        Limit { key: "*.tcp.pacing_ca_ratio", range: Range::Count(1, 10_000), why: "percent of cwnd per SRTT" },
        Limit { key: "*.tcp.max_pacing_rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
        Limit {
            key: "*.tcp.limit_output_bytes",
            range: Range::Size(0, 1 << 31),
            why: "Linux tcp_limit_output_bytes is an int (0: off)",
        },
        Limit {
            key: "*.tcp.tlp_max_ack_delay",
            range: Range::Time(Duration::ZERO, s(1)),
            why: "RFC 8985 §7.2: a delayed ACK's bound",
        },
        Limit { key: "*.tcp.rto_params.*", range: Range::Real(0.0, 100.0), why: "estimator gains and multipliers" },
        Limit { key: "*.tcp.rto_initial", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
        Limit { key: "*.tcp.rto_min", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
        Limit { key: "*.tcp.rto_max", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
        Limit { key: "*.tcp.clock_granularity", range: Range::Time(Duration::ZERO, s(1)), why: TICK_WHY },
        Limit { key: "*.tcp.max_burst", range: Range::Count(0, 1000), why: "segments per ACK (0: no limit)" },
        Limit { key: "*.tcp.tick", range: Range::Time(Duration::ZERO, s(1)), why: TICK_WHY },
        Limit { key: "*.tcp.time_wait", range: Range::Time(Duration::ZERO, HOUR), why: "RFC 9293: 2 MSL, 4 minutes" },
        Limit {
            key: "*.tcp.rcv_skb_overhead",
            range: Range::Size(0, 1 << 16),
            why: "bookkeeping bytes per received skb",
        },
        Limit { key: "*.tcp.timeout_min", range: Range::Time(Duration::ZERO, s(1)), why: TIMER_WHY },
        Limit {
            key: "*.tcp.comp_sack_slack",
            range: Range::Time(Duration::ZERO, ms(500)),
            why: "a delayed ACK's bound",
        },
    ];

    const CPU_MODEL: bool = true;

    fn metric_names(workload: &str) -> Option<Vec<&'static str>> {
        Some(match workload {
            "stream" | "maerts" => vec!["throughput_bps", "delivered_bytes", "retransmissions", "elapsed_s"],
            "rr" | "crr" => {
                let mut v = vec!["transactions_per_s", "transactions"];
                v.extend(LATENCY_US);
                v.extend(["retransmissions", "elapsed_s"]);
                if workload == "crr" {
                    v.extend(["connections_opened", "port_waits"]);
                }
                v
            }
            "msg" => {
                let mut v = vec!["messages_per_s", "messages", "throughput_bps", "delivered_bytes"];
                v.extend(LATENCY_US.map(|l| l.replacen("latency_us", "time_per_message_us", 1).leak() as &'static str));
                v.extend(LATENCY_US);
                v.extend(["retransmissions", "elapsed_s"]);
                v
            }
            _ => return None,
        })
    }

    /// Its RFC 4898 variables (`client.SendStall`).
    fn stats_vars() -> Vec<String> {
        crate::columns::estats_vars()
    }

    const STATS_HINT: &'static str =
        ", or client.VAR / server.VAR with an RFC 4898 variable of test.series' list (e.g. \
                 \"client.SendStall\"), or client.VAR.mean / .stddev of a variable test.series = { vars } \
                 samples";

    const SERIES_COLUMNS: &'static [&'static str] = &crate::columns::SERIES_COLUMNS;

    const TEST: TestDecl = TestDecl { refused: &[], series_vars_refused: None, messages: &["msg"] };

    /// `msg`: one byte, the small message of the classic experiments (and netperf's default request
    /// size); the others: the sender's send buffer, as netperf.
    fn default_message(workload: &str) -> Option<u64> {
        (workload == "msg").then_some(1)
    }
}
