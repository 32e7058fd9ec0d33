//! Rendering results: the netperf-style table for stdout, and result files written so that a reader
//! never sees a partial one.

pub mod csv;
pub mod pcap;
pub mod plot;
pub mod render;

use std::io::Write;
use std::path::Path;

use tcplab_lab::result::Metrics;
use tcplab_lab::{ResultDoc, TestKind};

/// netperf's classic table for the test kind, one row per point, with units in the headers.
pub fn table(doc: &ResultDoc) -> String {
    match doc.scenario.test.kind {
        TestKind::TcpRr | TestKind::TcpCrr => rr_table(doc),
        _ => stream_table(doc),
    }
}

/// netperf's TCP_RR / TCP_CRR table (local send/recv socket sizes, request and response sizes, elapsed,
/// transaction rate), then the latency statistics of each point, and a second line with the remote
/// socket sizes as netperf prints it.
fn rr_table(doc: &ResultDoc) -> String {
    let s = &doc.scenario;
    let mut out = String::new();
    let burst = s.test.burst.filter(|&b| b > 0).map(|b| format!(", first burst {b}")).unwrap_or_default();
    out += &format!(
        "{} TEST from client to server: {} (up {} {}, down {} {}; simulated, seed {}{burst})\n",
        s.test.kind.netperf_name(),
        s.name,
        s.path.up.rate,
        s.path.up.delay,
        s.path.down.rate,
        s.path.down.delay,
        doc.seed
    );
    out += "Local /Remote\n";
    out += "Socket Size   Request  Resp.   Elapsed  Trans.     Latency usec/Tran\n";
    out += "Send   Recv   Size     Size    Time     Rate       mean     p50      p99      max\n";
    out += "bytes  Bytes  bytes    bytes   secs.    per sec\n\n";
    for p in &doc.points {
        let Metrics::Rr(m) = &p.metrics else { continue };
        let l = &m.latency_us;
        out += &format!(
            "{:<6} {:<6} {:<8} {:<7} {:<8.2} {:<10.2} {:<8.1} {:<8.1} {:<8.1} {:.1}\n",
            s.client.tcp.send_buffer.bytes(),
            s.client.tcp.recv_buffer.bytes(),
            s.test.request.map_or(0, |b| b.bytes()),
            s.test.response.map_or(0, |b| b.bytes()),
            m.elapsed_s,
            m.transactions_per_s,
            l.mean,
            l.p50,
            l.p99,
            l.max
        );
        out += &format!("{:<6} {}\n", s.server.tcp.send_buffer.bytes(), s.server.tcp.recv_buffer.bytes());
        if let (Some(opened), Some(waits)) = (m.connections_opened, m.port_waits) {
            out += &format!("connections opened {opened}, waits for a free port {waits}\n");
        }
    }
    out
}

/// netperf's classic TCP_STREAM table.
fn stream_table(doc: &ResultDoc) -> String {
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
        let Metrics::Stream(m) = &p.metrics else { continue };
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
