//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod csv;
pub mod flent;
pub mod html;
pub mod pcap;
pub mod plot;
pub mod render;
mod saved;
pub mod schema;

pub use saved::table_json;

use std::io::Write;
use std::path::Path;

use tcplab_lab::ResultDoc;

/// netperf's classic table for the test kind, one row per point, with units in the headers: the swept
/// values, the iterations' confidence notes, the CPU columns and the run health included. Rendered from the
/// document's JSON form ([`table_json`]), so that `tcplab report RESULT.json` prints what the run printed.
pub fn table(doc: &ResultDoc) -> String {
    table_json(&serde_json::to_value(doc).expect("a result document serializes"))
}

/// What the banner of a small-message stream adds: Nagle or NODELAY, and back to back or paced.
pub(crate) fn msg_banner_extra(nodelay: bool, interval: Option<String>) -> String {
    let nagle = if nodelay { "NODELAY" } else { "Nagle on" };
    match interval {
        Some(i) => format!(", {nagle}, one message every {i} per connection"),
        None => format!(", {nagle}, messages back to back"),
    }
}

/// The header of the small-message table, after the sweep columns' header `ph` (and `pad` under it).
pub(crate) fn msg_header(ph: &str, pad: &str) -> String {
    let mut out = format!(
        "{pad}Message  Messages   Elapsed  Messages     Time per message usec               One-way latency usec\n"
    );
    out += &format!("{pad}Size     delivered  Time     per sec      mean      p50       p99.9     max       mean      p50       p99       max\n");
    out + &format!("{ph}bytes               secs.\n\n")
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

/// `tcplab compare`: the simulator's and the kernel's figures side by side, with the relative difference
/// (linux − sim) / linux, for the metrics and the RFC 4898 counters both backends report.
pub fn compare_table(sim: &ResultDoc, linux: &ResultDoc) -> String {
    let s = &sim.scenario;
    let mut out = format!(
        "{} on both backends: {} (up {} {}, down {} {}; seed {})\n\n",
        s.test.kind.netperf_name(),
        s.name,
        s.path.up.rate,
        s.path.up.delay,
        s.path.down.rate,
        s.path.down.delay,
        sim.seed
    );
    out += &format!("{:<32} {:>16} {:>16} {:>10}\n", "figure", "simulator", "linux", "diff");
    let mut row = |name: &str, a: Option<f64>, b: Option<f64>| {
        if a.is_none() && b.is_none() {
            return;
        }
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        let d = match (a, b) {
            (Some(a), Some(b)) if b != 0.0 => format!("{:+.1}%", (a - b) / b * 100.0),
            _ => "-".into(),
        };
        out += &format!("{name:<32} {:>16} {:>16} {:>10}\n", f(a), f(b), d);
    };
    let metric = |d: &ResultDoc, k: &str| serde_json::to_value(&d.points.first()?.metrics).ok()?.get(k)?.as_f64();
    let stat = |d: &ResultDoc, side: usize, k: &str| d.points.first()?.connections.get(side)?.estats.get(k)?.as_f64();
    row(
        "throughput, Mbit/s",
        metric(sim, "throughput_bps").map(|v| v / 1e6),
        metric(linux, "throughput_bps").map(|v| v / 1e6),
    );
    row("transactions/s", metric(sim, "transactions_per_s"), metric(linux, "transactions_per_s"));
    row("retransmitted segments", metric(sim, "retransmissions"), metric(linux, "retransmissions"));
    for k in ["SegsOut", "DataSegsOut", "SegsRetrans", "FastRetran", "Timeouts", "CongSignals", "SmoothedRTT"] {
        row(&format!("client {k}"), stat(sim, 0, k), stat(linux, 0, k));
    }
    for k in ["SegsOut", "DataSegsIn"] {
        row(&format!("server {k}"), stat(sim, 1, k), stat(linux, 1, k));
    }
    out += &saved::health_lines(&serde_json::to_value(linux).unwrap_or_default());
    out
}
