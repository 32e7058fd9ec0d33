//! What the whole-run tests share: a scenario from text with overrides, run for one seed.

use tcplab_lab::{load, ResultDoc, Scenario, Source};

pub fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: "test.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

#[allow(dead_code)]
pub fn run_scenario(s: &Scenario, seed: u64) -> ResultDoc {
    tcplab_lab::run_scenario(s, seed).expect("the connections come up")
}

/// A connection end's RFC 4898 statistics, read back from the result document.
#[allow(dead_code)]
pub fn estats(c: &tcplab_lab::result::ConnectionResult) -> tcplab_tcp::Estats {
    serde_json::from_value((*c.estats).clone()).expect("a TCP end's estats are Estats")
}

/// The bulk-transfer metrics of a point.
#[allow(dead_code)]
pub fn stream(p: &tcplab_lab::result::Point) -> &tcplab_lab::result::StreamMetrics {
    match &p.metrics {
        tcplab_lab::result::Metrics::Stream(m) => m,
        other => panic!("not a bulk transfer: {other:?}"),
    }
}

/// The request/response metrics of a point.
#[allow(dead_code)]
pub fn rr(p: &tcplab_lab::result::Point) -> &tcplab_lab::result::RrMetrics {
    match &p.metrics {
        tcplab_lab::result::Metrics::Rr(m) => m,
        other => panic!("not a request/response test: {other:?}"),
    }
}

/// The small-message metrics of a point.
#[allow(dead_code)]
pub fn msg(p: &tcplab_lab::result::Point) -> &tcplab_lab::result::MsgMetrics {
    match &p.metrics {
        tcplab_lab::result::Metrics::Msg(m) => m,
        other => panic!("not a small-message test: {other:?}"),
    }
}

/// The sender's RFC 4898 statistics from `classic/txqueuelen` run for 1 s at `txqueuelen`, with more
/// `--set`s (the classic_txqueuelen_* tests).
#[allow(dead_code)]
pub fn txqueuelen_sender(txqueuelen: u32, extra: &[&str]) -> tcplab_tcp::Estats {
    let text = tcplab_lab::SHIPPED.iter().find(|s| s.name == "classic/txqueuelen").expect("shipped").text;
    let q = format!("client.host.txqueuelen={txqueuelen}");
    let mut set = vec!["test.duration=\"1s\"", q.as_str()];
    set.extend_from_slice(extra);
    let mut doc = run_scenario(&scenario(text, &set), 1);
    let point = doc.points.remove(0);
    estats(point.connections.iter().find(|c| c.side == "client").expect("the sender's end"))
}

/// The DSL experiments as this machine's kernel runs them ("today", docs/classic.md): `linux` at both ends,
/// Minshall's check on the last small segment (`nagle_last_sent` off) and timestamps, as Linux 6.x does.
#[allow(dead_code)]
pub const DSL_TODAY: [&str; 6] = [
    "client.stack=\"linux\"",
    "server.stack=\"linux\"",
    "client.tcp.nagle_last_sent=false",
    "server.tcp.nagle_last_sent=false",
    "client.tcp.timestamps=true",
    "server.tcp.timestamps=true",
];

/// A shipped scenario's text without its CPU cost model (the `host = { cpu ... }` lines and the
/// service-demand plots that read it) and without its `[sweep]` (the header and its axis lines, the only
/// lines that start with a quoted key in the classic files): one point, as the kernel or a single-point
/// test runs it, the settings of each point left to `--set`.
#[allow(dead_code)]
pub fn shipped_one_point_without_cpu_model(name: &str) -> String {
    let shipped = tcplab_lab::SHIPPED.iter().find(|s| s.name == name).expect("a shipped scenario").text;
    let mut text = String::new();
    for block in shipped.split("\n[[") {
        let block = if text.is_empty() { block.to_string() } else { format!("\n[[{block}") };
        if !block.contains("service_demand") {
            text.push_str(&block);
        }
    }
    let text: String = text
        .lines()
        .filter(|l| !l.starts_with("host = { cpu") && !l.starts_with('"') && *l != "[sweep]")
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!text.contains("per_kb_copy") && !text.contains("[sweep]"), "{name}: the CPU model and sweep are out");
    text
}
