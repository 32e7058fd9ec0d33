//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod pcap;

use std::io::Write;
use std::path::Path;

use tcplab_lab::result::Metrics;
use tcplab_lab::{ResultDoc, TestKind};

/// netperf's classic TCP_STREAM table, one row per point, with units in the headers.
pub fn table(doc: &ResultDoc) -> String {
    let s = &doc.scenario;
    let (sender, receiver) = match s.test.kind {
        TestKind::TcpMaerts => (&s.server, &s.client),
        _ => (&s.client, &s.server),
    };
    let dir = if s.test.kind == TestKind::TcpMaerts { "server to client" } else { "client to server" };
    let mut out = String::new();
    out += &format!(
        "{} TEST from {dir}: {} (up {} {}, down {} {}; simulated, seed {})\n",
        s.test.kind.netperf_name(),
        s.name,
        s.path.up.rate,
        s.path.up.delay,
        s.path.down.rate,
        s.path.down.delay,
        doc.seed
    );
    out += "Recv     Send     Send\n";
    out += "Socket   Socket   Message  Elapsed\n";
    out += "Size     Size     Size     Time     Throughput    Retrans\n";
    out += "bytes    bytes    bytes    secs.    10^6bits/sec  segments\n\n";
    for p in &doc.points {
        let Metrics::Stream(m) = &p.metrics;
        out += &format!(
            "{:<8} {:<8} {:<8} {:<8.2} {:<13.2} {}\n",
            receiver.tcp.recv_buffer.bytes(),
            sender.tcp.send_buffer.bytes(),
            s.test.message.bytes(),
            m.elapsed_s,
            m.throughput_bps / 1e6,
            m.retransmissions
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
    tmp.as_file().sync_all()?;
    tmp.persist(target).map_err(|e| e.error)?;
    Ok(())
}
