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

use tcplab_lab::result::Metrics;
use tcplab_lab::{ResultDoc, TestKind};

/// netperf's classic table for the test kind, one row per point, with units in the headers.
pub fn table(doc: &ResultDoc) -> String {
    let mut out = main_table(doc);
    out += &cpu_table(doc);
    out += &health_lines(doc);
    out
}

/// The first line: test, direction, scenario, path, backend, seed, and what `extra` adds.
fn banner(doc: &ResultDoc, dir: &str, extra: &str) -> String {
    let s = &doc.scenario;
    format!(
        "{} TEST from {dir}: {} (up {} {}, down {} {}; {}, seed {}{extra})\n",
        s.test.kind.netperf_name(),
        s.name,
        s.path.up.rate,
        s.path.up.delay,
        s.path.down.rate,
        s.path.down.delay,
        backend_name(doc),
        doc.seed
    )
}

fn backend_name(doc: &ResultDoc) -> &'static str {
    match doc.backend {
        "linux" => "Linux kernel TCP through tcplab's emulator",
        _ => "simulated",
    }
}

/// Linux backend: a point whose run health was bad is marked, with the reasons.
fn health_lines(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for (i, p) in doc.points.iter().enumerate() {
        let Some(h) = &p.health else { continue };
        if h.get("valid").and_then(|v| v.as_bool()) == Some(false) {
            let reasons: Vec<&str> = h
                .get("invalid_reasons")
                .and_then(|r| r.as_array())
                .map(|a| a.iter().filter_map(|r| r.as_str()).collect())
                .unwrap_or_default();
            out += &format!("!! point {i}: INVALID run (emulator health): {}\n", reasons.join("; "));
        } else {
            let hidden = h.get("hidden_drops").and_then(|v| v.as_u64()).unwrap_or(0);
            out += &format!("run health: valid (hidden drops {hidden})\n");
        }
    }
    out
}

fn main_table(doc: &ResultDoc) -> String {
    match doc.scenario.test.kind {
        TestKind::TcpRr | TestKind::TcpCrr => rr_table(doc),
        TestKind::RdpStream => rdp_table(doc),
        _ => stream_table(doc),
    }
}

/// The swept values of each point as leading columns: (header, one cell per point), padded alike.
fn param_columns(doc: &ResultDoc) -> (String, Vec<String>) {
    let Some(axes) = &doc.sweep else { return (String::new(), vec![String::new(); doc.points.len()]) };
    let show = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    let mut header = String::new();
    let mut cells = vec![String::new(); doc.points.len()];
    for a in axes {
        let vals: Vec<String> = doc.points.iter().map(|p| show(p.params.get(&a.path))).collect();
        let w = vals.iter().map(|v| v.chars().count()).chain([a.path.chars().count()]).max().unwrap_or(0);
        header += &format!("{:<w$} ", a.path);
        for (c, v) in cells.iter_mut().zip(vals) {
            *c += &format!("{v:<w$} ");
        }
    }
    (header, cells)
}

/// A line per point that aggregates iterations: how many, and the confidence interval.
fn iteration_notes(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for (i, p) in doc.points.iter().enumerate() {
        if let Some(c) = &p.confidence {
            out += &format!(
                "point {i}: mean of {} iterations; {}% confidence interval of {} {:.2}% of the mean ({} {:.2}%)\n",
                p.iterations,
                c.level * 100.0,
                c.metric,
                c.interval * 100.0,
                if c.met { "met:" } else { "NOT met:" },
                c.width * 100.0
            );
        }
    }
    out
}

/// netperf's TCP_RR / TCP_CRR table (local send/recv socket sizes, request and response sizes, elapsed,
/// transaction rate), then the latency statistics of each point, and a second line with the remote
/// socket sizes as netperf prints it.
fn rr_table(doc: &ResultDoc) -> String {
    let s = &doc.scenario;
    let burst = s.test.burst.filter(|&b| b > 0).map(|b| format!(", first burst {b}")).unwrap_or_default();
    let mut out = banner(doc, "client to server", &burst);
    let (ph, cells) = param_columns(doc);
    let pad = " ".repeat(ph.chars().count());
    out += &format!("{pad}Local /Remote\n");
    out += &format!("{pad}Socket Size   Request  Resp.   Elapsed  Trans.     Latency usec/Tran\n");
    out += &format!("{pad}Send   Recv   Size     Size    Time     Rate       mean     p50      p99      max\n");
    out += &format!("{ph}bytes  Bytes  bytes    bytes   secs.    per sec\n\n");
    for (p, cell) in doc.points.iter().zip(&cells) {
        let Metrics::Rr(m) = &p.metrics else { continue };
        out += cell;
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
        out += &format!("{pad}{:<6} {}\n", s.server.tcp.send_buffer.bytes(), s.server.tcp.recv_buffer.bytes());
        if let (Some(opened), Some(waits)) = (m.connections_opened, m.port_waits) {
            out += &format!("{pad}connections opened {opened}, waits for a free port {waits}\n");
        }
    }
    out + &iteration_notes(doc)
}

/// netperf's classic TCP_STREAM table.
fn stream_table(doc: &ResultDoc) -> String {
    let s = &doc.scenario;
    let (sender, receiver) = match s.test.kind {
        TestKind::TcpMaerts => (&s.server, &s.client),
        _ => (&s.client, &s.server),
    };
    let dir = if s.test.kind == TestKind::TcpMaerts { "server to client" } else { "client to server" };
    let mut out = banner(doc, dir, "");
    let (ph, cells) = param_columns(doc);
    let pad = " ".repeat(ph.chars().count());
    out += &format!("{pad}Recv     Send     Send\n");
    out += &format!("{pad}Socket   Socket   Message  Elapsed\n");
    out += &format!("{pad}Size     Size     Size     Time     Throughput    Retrans\n");
    out += &format!("{ph}bytes    bytes    bytes    secs.    10^6bits/sec  segments\n\n");
    for (p, cell) in doc.points.iter().zip(&cells) {
        let Metrics::Stream(m) = &p.metrics else { continue };
        out += cell;
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
    out + &iteration_notes(doc)
}

/// The RDP transfer: message size, the sender's window, elapsed, throughput, and Part C's counts
/// (docs/rdp.md).
fn rdp_table(doc: &ResultDoc) -> String {
    let s = &doc.scenario;
    let mut out = banner(doc, "client to server", "");
    out += "Message  Max   EACK  Elapsed    Throughput    Messages   Retrans  Dup.     Data   Timeouts\n";
    out += "Size     Out.        Time                     delivered  segs     recvd    drops\n";
    out += "bytes    segs        secs.      10^6bits/sec\n\n";
    let rdp = s.server.rdp.clone().unwrap_or_default();
    let eack = if rdp.eack { "on" } else { "off" };
    for p in &doc.points {
        let Metrics::Rdp(m) = &p.metrics else { continue };
        out += &format!(
            "{:<8} {:<5} {:<5} {:<10.2} {:<13.4} {:<10} {:<8} {:<8} {:<6} {}\n",
            s.test.message.bytes(),
            rdp.max_outstanding,
            eack,
            m.elapsed_s,
            m.throughput_bps / 1e6,
            m.messages_delivered,
            m.retransmissions,
            m.duplicates_received,
            m.data_drops,
            m.timeouts
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

/// With the CPU cost model: netperf's utilization and service demand columns, one row per point, marked as
/// modeled (the simulator's cost model, not a measurement).
fn cpu_table(doc: &ResultDoc) -> String {
    let cpus: Vec<&tcplab_lab::result::CpuMetrics> = doc
        .points
        .iter()
        .filter_map(|p| match &p.metrics {
            Metrics::Stream(m) => m.cpu.as_ref(),
            Metrics::Rr(m) => m.cpu.as_ref(),
            Metrics::Rdp(_) => None,
        })
        .collect();
    if cpus.is_empty() {
        return String::new();
    }
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let per_tr = cpus.iter().any(|c| c.service_demand_us_per_tr.is_some());
    let label = match cpus[0].cpu_source.as_str() {
        "measured" => "measured, whole machine: /proc/stat",
        _ => "modeled",
    };
    let mut out = format!("\nCPU ({label})\nUtilization       Service Demand\n");
    out += "local    remote   local    remote";
    out += if per_tr { "   local    remote\n" } else { "\n" };
    out += "%        %        us/KB    us/KB";
    out += if per_tr { "    us/Tr    us/Tr\n" } else { "\n" };
    for c in cpus {
        let u = c.cpu_util_percent;
        let d = c.service_demand_us_per_kb;
        out += &format!("{:<8} {:<8} {:<8} {:<8}", f(u.local), f(u.remote), f(d.local), f(d.remote));
        if let Some(t) = c.service_demand_us_per_tr {
            out += &format!(" {:<8} {}", f(t.local), f(t.remote));
        }
        out = out.trim_end().to_string() + "\n";
    }
    out
}
