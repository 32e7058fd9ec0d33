//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod csv;
pub mod flent;
pub mod html;
pub mod pcap;
pub mod plot;
pub mod render;
pub mod schema;

use std::io::Write;
use std::path::Path;

use serde_json::Value;
use tcplab_lab::{ResultDoc, TestKind};
use tcplab_units::ByteSize;

/// netperf's classic table for the test kind, one row per point, with units in the headers.
pub fn table(doc: &ResultDoc) -> String {
    table_json(&serde_json::to_value(doc).expect("a result document serializes"))
}

/// [`table`] from the result's JSON form (`tcplab report RESULT.json` renders a saved result with it).
pub fn table_json(doc: &Value) -> String {
    match serde_json::from_value::<TestKind>(doc["scenario"]["test"]["kind"].clone()) {
        Ok(TestKind::TcpRr | TestKind::TcpCrr) => rr_table(doc),
        _ => stream_table(doc),
    }
}

/// A size of the scenario echo (`"64KiB"`) in bytes; 0 when absent.
fn bytes(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse::<ByteSize>().ok()).map_or(0, |b| b.bytes())
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), String::from)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

/// The first line: test, scenario, path, seed, and what `extra` adds.
fn banner(doc: &Value, dir: &str, extra: &str) -> String {
    let s = &doc["scenario"];
    let kind = serde_json::from_value::<TestKind>(s["test"]["kind"].clone()).map_or("TCP", |k| k.netperf_name());
    format!(
        "{kind} TEST from {dir}: {} (up {} {}, down {} {}; simulated, seed {}{extra})\n",
        text(&s["name"]),
        text(&s["path"]["up"]["rate"]),
        text(&s["path"]["up"]["delay"]),
        text(&s["path"]["down"]["rate"]),
        text(&s["path"]["down"]["delay"]),
        doc["seed"]
    )
}

fn points(doc: &Value) -> &[Value] {
    doc["points"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// netperf's TCP_RR / TCP_CRR table (local send/recv socket sizes, request and response sizes, elapsed,
/// transaction rate), then the latency statistics of each point, and a second line with the remote
/// socket sizes as netperf prints it.
fn rr_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let burst =
        s["test"]["burst"].as_u64().filter(|&b| b > 0).map(|b| format!(", first burst {b}")).unwrap_or_default();
    let mut out = banner(doc, "client to server", &burst);
    out += "Local /Remote\n";
    out += "Socket Size   Request  Resp.   Elapsed  Trans.     Latency usec/Tran\n";
    out += "Send   Recv   Size     Size    Time     Rate       mean     p50      p99      max\n";
    out += "bytes  Bytes  bytes    bytes   secs.    per sec\n\n";
    for p in points(doc) {
        let m = &p["metrics"];
        if m.get("transactions_per_s").is_none() {
            continue;
        }
        let l = &m["latency_us"];
        out += &format!(
            "{:<6} {:<6} {:<8} {:<7} {:<8.2} {:<10.2} {:<8.1} {:<8.1} {:<8.1} {:.1}\n",
            bytes(&s["client"]["tcp"]["send_buffer"]),
            bytes(&s["client"]["tcp"]["recv_buffer"]),
            bytes(&s["test"]["request"]),
            bytes(&s["test"]["response"]),
            f(&m["elapsed_s"]),
            f(&m["transactions_per_s"]),
            f(&l["mean"]),
            f(&l["p50"]),
            f(&l["p99"]),
            f(&l["max"])
        );
        out += &format!(
            "{:<6} {}\n",
            bytes(&s["server"]["tcp"]["send_buffer"]),
            bytes(&s["server"]["tcp"]["recv_buffer"])
        );
        if let (Some(opened), Some(waits)) = (m["connections_opened"].as_u64(), m["port_waits"].as_u64()) {
            out += &format!("connections opened {opened}, waits for a free port {waits}\n");
        }
    }
    out
}

/// netperf's classic TCP_STREAM table.
fn stream_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let maerts = s["test"]["kind"] == "tcp_maerts";
    let (sender, receiver) = if maerts { (&s["server"], &s["client"]) } else { (&s["client"], &s["server"]) };
    let dir = if maerts { "server to client" } else { "client to server" };
    let mut out = banner(doc, dir, "");
    out += "Recv     Send     Send\n";
    out += "Socket   Socket   Message  Elapsed\n";
    out += "Size     Size     Size     Time     Throughput    Retrans\n";
    out += "bytes    bytes    bytes    secs.    10^6bits/sec  segments\n\n";
    for p in points(doc) {
        let m = &p["metrics"];
        if m.get("throughput_bps").is_none() {
            continue;
        }
        out += &format!(
            "{:<8} {:<8} {:<8} {:<8.2} {:<13.2} {}\n",
            bytes(&receiver["tcp"]["recv_buffer"]),
            bytes(&sender["tcp"]["send_buffer"]),
            bytes(&s["test"]["message"]),
            f(&m["elapsed_s"]),
            f(&m["throughput_bps"]) / 1e6,
            m["retransmissions"]
        );
    }
    out
}

/// Writes `doc` as pretty JSON to `path` ("-" for stdout). The file appears complete or not at all:
/// it is written to a temporary file beside the target and renamed into place.
pub fn write_json(doc: &ResultDoc, path: &str) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(doc).map_err(std::io::Error::other)?;
    text.push('\n');
    write_atomic(path, &text)
}

/// Writes `text` to `path` ("-" for stdout) through a temporary file renamed into place.
pub fn write_atomic(path: &str, text: &str) -> std::io::Result<()> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
    let target = Path::new(path);
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    // A temporary file is private (0600); a result is an ordinary file (0644, less the umask's bits
    // is the shell's business: we cannot read the umask without changing it).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}
