//! A transport that exists only in the lab's unit tests: the proof that a transport is its own files and
//! one registration line (issue #24 item 4, docs/architecture.md § How to add a transport). Everything
//! here is what any transport writes: its config's declarations (`impl TransportConfig`) and its run
//! (`impl LabTransport`); it is registered by the `#[cfg(test)]` line of `register_transports!` in lib.rs
//! and declared by `mod toy;` in transport.rs. No other file names it, and its tests run it end to end:
//! scenario file, validation, key registry, limits, dispatch, result document and its reading back.
//!
//! The toy is TCP with one knob of its own under another name (`test.transport = "toy"`, `[client.toy]`):
//! a real transport brings its crate (its endpoint, segment and statistics); reusing TCP's keeps the
//! proof about the lab's seam, not about a protocol.

use serde::{Deserialize, Serialize};
use tcplab_sim::Probe;
use tcplab_units::ByteSize;

use super::{LabTransport, Tcp};
use crate::bounds::{Limit, Range};
use crate::host_transports::{KeysDecl, TestDecl, TransportConfig};
use crate::result::{PointRun, RunError};
use crate::scenario::{Protocol, Scenario};

/// The toy's knobs (`[client.toy]`, `[server.toy]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToyConfig {
    /// The largest segment's payload the host sends and advertises (TCP's `mss` under the toy). Default
    /// 536B, RFC 9293 §3.7.1's default send MSS.
    pub segment: ByteSize,
}

impl Default for ToyConfig {
    fn default() -> ToyConfig {
        ToyConfig { segment: ByteSize::new(536) }
    }
}

impl TransportConfig for ToyConfig {
    const TABLE: &'static str = "toy";
    const KNOBS: &'static [(&'static str, &'static str)] = &[(
        "segment",
        "The largest segment's payload the host sends and advertises (TCP's `mss` under the toy). Default \
         536B, RFC 9293 §3.7.1's default send MSS.",
    )];
    const KEYS: KeysDecl = KeysDecl {
        probe_kind: "toy_stream",
        config: ("ToyConfig", "crates/lab/src/transport/toy.rs"),
        default: "{} (ToyConfig's defaults)",
        doc: "The test-only toy transport's knobs.",
        nested: &[],
        optional: &[],
        units: &[],
        kinds: "`toy_stream` (TCP's bulk transfer under the toy's name)",
    };
    const LIMITS: &'static [Limit] =
        &[Limit { key: "*.toy.segment", range: Range::Size(88, 65495), why: "TCP's mss range" }];
    const CPU_MODEL: bool = true;
    fn metric_names(workload: &str) -> Option<Vec<&'static str>> {
        (workload == "stream").then(|| vec!["throughput_bps", "delivered_bytes", "retransmissions", "elapsed_s"])
    }
    fn stats_vars() -> Vec<String> {
        crate::columns::estats_vars()
    }
    const STATS_HINT: &'static str = ", or client.VAR / server.VAR with an RFC 4898 variable";
    const SERIES_COLUMNS: &'static [&'static str] = &crate::columns::SERIES_COLUMNS;
    fn base(_stack: &str) -> Option<Self> {
        Some(ToyConfig::default())
    }
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
    const TEST: TestDecl = TestDecl {
        refused: &[("test.nodelay", "the toy has no Nagle knob")],
        series_vars_refused: None,
        messages: &[],
    };
    fn default_message(_workload: &str) -> Option<u64> {
        None
    }
}

/// The toy on the simulator: TCP's run with each host's `mss` from its `toy.segment`.
#[derive(Debug, Clone, Copy)]
pub struct Toy;

impl LabTransport for Toy {
    type Conn = tcplab_tcp::Connection;
    type Config = ToyConfig;

    fn knob_defaults() -> toml::Table {
        toml::Table::try_from(ToyConfig::default()).expect("a ToyConfig serializes to TOML")
    }

    fn run_point(
        s: &Scenario,
        seed: u64,
        probe: Option<&mut dyn Probe<tcplab_tcp::Connection>>,
    ) -> Result<PointRun, RunError> {
        let mut tcp = s.clone();
        for h in [&mut tcp.client, &mut tcp.server] {
            let segment = h.config::<ToyConfig>().expect("a toy test resolves every host's toy knobs").segment;
            h.tcp_mut().mss = segment;
        }
        tcp.test.transport = Protocol::TCP;
        Tcp::run_point(&tcp, seed, probe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_transports::REGISTERED;
    use crate::{load, run_scenario, ResultDoc, Source};

    fn scenario(extra: &str) -> Result<Scenario, crate::ScenarioError> {
        let text = format!(
            "name = \"toy\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"stream\"\n\
             transport = \"toy\"\nduration = \"300ms\"\n{extra}"
        );
        load(&Source { name: "toy.toml", text: &text }, &[])
    }

    #[test]
    fn the_registration_line_registers_it_everywhere() {
        assert_eq!(REGISTERED.last().map(|r| r.table), Some("toy"));
        assert_eq!(Protocol::parse("toy"), Some(Toy::NAME));
        assert!(crate::keys::registry().iter().any(|k| k.path == "{client,server}.toy.segment"));
        assert!(crate::limits::table().iter().any(|l| l.key == "*.toy.segment"));
        assert!(crate::scenario::full_kind_names().contains(&"toy_stream".to_string()));
    }

    #[test]
    fn a_toy_stream_runs_end_to_end_and_reads_back() {
        let s = scenario("[client.toy]\nsegment = \"1000B\"\n[server.toy]\nsegment = \"1000B\"\n").unwrap();
        assert_eq!(s.test.kind_name(), "toy_stream");
        let d = run_scenario(&s, 1).unwrap();
        let json = serde_json::to_string(&d).unwrap();
        assert!(json.contains("\"kind\":\"toy_stream\""), "the document records the test's full name");
        assert!(json.contains("\"toy\":{\"segment\":\"1000B\"}"), "each host writes its toy table");
        let back = ResultDoc::from_json(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        let bps = d.points[0].value("throughput_bps").unwrap();
        assert!(bps > 5e6 && bps < 10e6, "a 10 Mbit/s path: {bps}");
        // Its knob reached the run: 1000-byte segments less the timestamps option's 12 bytes, not the
        // personality's MSS.
        let mss = d.points[0].value("client.CurMSS").unwrap();
        assert_eq!(mss, 1000.0 - 12.0);
    }

    #[test]
    fn its_refusals_and_bounds_name_the_key() {
        let e = scenario("nodelay = true\n").unwrap_err().to_string();
        assert!(e.contains("test.nodelay") && e.contains("the toy has no Nagle knob"), "{e}");
        let e = scenario("[client.toy]\nsegment = \"10B\"\n").unwrap_err().to_string();
        assert!(e.contains("client.toy.segment") && e.contains("88B"), "{e}");
        let e = scenario("[client.toy]\nsegmetn = \"1000B\"\n").unwrap_err().to_string();
        assert!(e.contains("toy.toml") && e.contains("segmetn") && e.contains("segment"), "{e}");
        let e = scenario("").map(|_| ()).and_then(|_| {
            load(
                &Source {
                    name: "t.toml",
                    text: "name=\"t\"\n[path.up]\nrate=\"1mbit\"\n[test]\nkind=\"toy_rr\"\nduration=\"1s\"\n",
                },
                &[],
            )
            .map(|_| ())
        });
        let e = e.unwrap_err().to_string();
        assert!(e.contains("\"toy_stream\""), "the toy runs streams only: {e}");
    }
}
