//! The netperf-style table, rendered from a result document's JSON form: a run's table (`crate::table`
//! serializes its document first) and a saved result's (`tcplab report RESULT.json`, the HTML page) are
//! the same text by construction.

use serde_json::Value;
use tcplab_lab::TestKind;
use tcplab_units::ByteSize;

/// The table of a result: netperf's columns for the test kind, one row per point with the swept values
/// first, the iterations' confidence notes, the CPU columns of the cost model, and the Linux backend's
/// run health.
pub fn table_json(doc: &Value) -> String {
    let mut out = match kind(doc) {
        Some(TestKind::TcpRr | TestKind::TcpCrr) => rr_table(doc),
        Some(TestKind::RdpRr) => rdp_rr_table(doc),
        Some(TestKind::TcpMsg) => msg_table(doc),
        Some(TestKind::RdpStream) => rdp_table(doc),
        _ => stream_table(doc),
    };
    out += &cpu_table(doc);
    out += &published_table(doc);
    out += &health_lines(doc);
    out
}

fn kind(doc: &Value) -> Option<TestKind> {
    serde_json::from_value::<TestKind>(doc["scenario"]["test"]["kind"].clone()).ok()
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

fn points(doc: &Value) -> &[Value] {
    doc["points"].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn backend_name(doc: &Value) -> &'static str {
    match doc["backend"].as_str() {
        Some("linux") => "Linux kernel TCP through tcplab's emulator",
        _ => "simulated",
    }
}

/// The first line: test, direction, scenario, path, backend, seed, and what `extra` adds.
fn banner(doc: &Value, dir: &str, extra: &str) -> String {
    let s = &doc["scenario"];
    format!(
        "{} TEST from {dir}: {} (up {} {}, down {} {}; {}, seed {}{extra})\n",
        kind(doc).map_or("TCP", |k| k.netperf_name()),
        text(&s["name"]),
        text(&s["path"]["up"]["rate"]),
        text(&s["path"]["up"]["delay"]),
        text(&s["path"]["down"]["rate"]),
        text(&s["path"]["down"]["delay"]),
        backend_name(doc),
        doc["seed"]
    )
}

/// The swept values of each point as leading columns: (header, one cell per point), padded alike.
fn param_columns(doc: &Value) -> (String, Vec<String>) {
    let pts = points(doc);
    let Some(axes) = doc["sweep"].as_array() else { return (String::new(), vec![String::new(); pts.len()]) };
    let show = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    let mut header = String::new();
    let mut cells = vec![String::new(); pts.len()];
    for a in axes {
        let path = a["path"].as_str().unwrap_or_default();
        let vals: Vec<String> = pts.iter().map(|p| show(p["params"].get(path))).collect();
        let w = vals.iter().map(|v| v.chars().count()).chain([path.chars().count()]).max().unwrap_or(0);
        header += &format!("{path:<w$} ");
        for (c, v) in cells.iter_mut().zip(vals) {
            *c += &format!("{v:<w$} ");
        }
    }
    (header, cells)
}

/// A line per point that aggregates iterations: how many, and the confidence interval.
fn iteration_notes(doc: &Value) -> String {
    let mut out = String::new();
    for (i, p) in points(doc).iter().enumerate() {
        let Some(c) = p.get("confidence").filter(|c| c.is_object()) else { continue };
        out += &format!(
            "point {i}: mean of {} iterations; {}% confidence interval of {} {:.2}% of the mean ({} {:.2}%)\n",
            p["iterations"],
            f(&c["level"]) * 100.0,
            text(&c["metric"]),
            f(&c["interval"]) * 100.0,
            if c["met"].as_bool() == Some(true) { "met:" } else { "NOT met:" },
            f(&c["width"]) * 100.0
        );
    }
    out
}

/// What a request/response banner adds: the first burst, unless it is swept (then it is in the table's
/// columns, and the banner's would be the unswept scenario's).
fn burst_extra(doc: &Value) -> String {
    let swept = doc["sweep"].as_array().is_some_and(|a| a.iter().any(|x| x["path"] == "test.burst"));
    doc["scenario"]["test"]["burst"]
        .as_u64()
        .filter(|&b| b > 0 && !swept)
        .map(|b| format!(", first burst {b}"))
        .unwrap_or_default()
}

/// netperf's TCP_RR / TCP_CRR table (local send/recv socket sizes, request and response sizes, elapsed,
/// transaction rate), then the latency statistics of each point, and a second line with the remote
/// socket sizes as netperf prints it.
fn rr_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let mut out = banner(doc, "client to server", &burst_extra(doc));
    let (ph, cells) = param_columns(doc);
    let pad = " ".repeat(ph.chars().count());
    out += &format!("{pad}Local /Remote\n");
    out += &format!("{pad}Socket Size   Request  Resp.   Elapsed  Trans.     Latency usec/Tran\n");
    out += &format!("{pad}Send   Recv   Size     Size    Time     Rate       mean     p50      p99      max\n");
    out += &format!("{ph}bytes  Bytes  bytes    bytes   secs.    per sec\n\n");
    for (p, cell) in points(doc).iter().zip(&cells) {
        let m = &p["metrics"];
        if m.get("transactions_per_s").is_none() {
            continue;
        }
        out += cell;
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
            "{pad}{:<6} {}\n",
            bytes(&s["server"]["tcp"]["send_buffer"]),
            bytes(&s["server"]["tcp"]["recv_buffer"])
        );
        if let (Some(opened), Some(waits)) = (m["connections_opened"].as_u64(), m["port_waits"].as_u64()) {
            out += &format!("{pad}connections opened {opened}, waits for a free port {waits}\n");
        }
    }
    out + &iteration_notes(doc)
}

/// RDP request/response: request and response sizes, the client's max outstanding, elapsed, the transaction
/// rate and the latency statistics, and the data segments retransmitted (docs/rdp.md).
fn rdp_rr_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let mut out = banner(doc, "client to server", &burst_extra(doc));
    let (ph, cells) = param_columns(doc);
    let pad = " ".repeat(ph.chars().count());
    out += &format!("{pad}Request  Resp.    Max   Elapsed  Trans.     Latency usec/Tran                   Retrans\n");
    out += &format!("{pad}Size     Size     Out.  Time     Rate       mean     p50      p99      max      segs\n");
    out += &format!("{ph}bytes    bytes    segs  secs.    per sec\n\n");
    let max_out = s["client"]["rdp"]["max_outstanding"].as_u64().unwrap_or_default();
    for (p, cell) in points(doc).iter().zip(&cells) {
        let m = &p["metrics"];
        if m.get("transactions_per_s").is_none() {
            continue;
        }
        let l = &m["latency_us"];
        out += cell;
        out += &format!(
            "{:<8} {:<8} {:<5} {:<8.2} {:<10.2} {:<8.1} {:<8.1} {:<8.1} {:<8.1} {}\n",
            bytes(&s["test"]["request"]),
            bytes(&s["test"]["response"]),
            max_out,
            f(&m["elapsed_s"]),
            f(&m["transactions_per_s"]),
            f(&l["mean"]),
            f(&l["p50"]),
            f(&l["p99"]),
            f(&l["max"]),
            m["retransmissions"]
        );
    }
    out + &iteration_notes(doc)
}

/// The small-message stream's table (`crate::msg_table` from a run).
fn msg_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let interval = s["test"]["interval"].as_str().map(String::from);
    let extra = crate::msg_banner_extra(s["client"]["tcp"]["nodelay"].as_bool() == Some(true), interval);
    let mut out = banner(doc, "client to server", &extra);
    out += &crate::msg_header("", "");
    for p in points(doc) {
        let m = &p["metrics"];
        if m.get("messages_per_s").is_none() {
            continue;
        }
        let (g, l) = (&m["time_per_message_us"], &m["latency_us"]);
        out += &format!(
            "{:<8} {:<10} {:<8.3} {:<12.1} {:<9.3} {:<9.3} {:<9.3} {:<9.3} {:<9.1} {:<9.1} {:<9.1} {:.1}\n",
            bytes(&s["test"]["message"]),
            m["messages"].as_u64().unwrap_or(0),
            f(&m["elapsed_s"]),
            f(&m["messages_per_s"]),
            f(&g["mean"]),
            f(&g["p50"]),
            f(&g["p99_9"]),
            f(&g["max"]),
            f(&l["mean"]),
            f(&l["p50"]),
            f(&l["p99"]),
            f(&l["max"])
        );
    }
    out
}

/// netperf's classic TCP_STREAM table.
fn stream_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let maerts = kind(doc) == Some(TestKind::TcpMaerts);
    let (sender, receiver) = if maerts { (&s["server"], &s["client"]) } else { (&s["client"], &s["server"]) };
    let dir = if maerts { "server to client" } else { "client to server" };
    let mut out = banner(doc, dir, "");
    let (ph, cells) = param_columns(doc);
    let pad = " ".repeat(ph.chars().count());
    out += &format!("{pad}Recv     Send     Send\n");
    out += &format!("{pad}Socket   Socket   Message  Elapsed\n");
    out += &format!("{pad}Size     Size     Size     Time     Throughput    Retrans\n");
    out += &format!("{ph}bytes    bytes    bytes    secs.    10^6bits/sec  segments\n\n");
    for (p, cell) in points(doc).iter().zip(&cells) {
        let m = &p["metrics"];
        if m.get("throughput_bps").is_none() {
            continue;
        }
        out += cell;
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
    out + &iteration_notes(doc)
}

/// The RDP transfer: message size, the sender's window, elapsed, throughput, and Part C's counts
/// (docs/rdp.md).
fn rdp_table(doc: &Value) -> String {
    let s = &doc["scenario"];
    let mut out = banner(doc, "client to server", "");
    out += "Message  Max   EACK  Elapsed    Throughput    Messages   Retrans  Dup.     Data   Timeouts\n";
    out += "Size     Out.        Time                     delivered  segs     recvd    drops\n";
    out += "bytes    segs        secs.      10^6bits/sec\n\n";
    // An RDP test's scenario always carries both hosts' resolved `rdp` knobs.
    let rdp = &s["server"]["rdp"];
    let max_outstanding = rdp["max_outstanding"].as_u64().map_or("-".to_string(), |n| n.to_string());
    let eack = match rdp["eack"].as_bool() {
        Some(true) => "on",
        Some(false) => "off",
        None => "-",
    };
    for p in points(doc) {
        let m = &p["metrics"];
        if m.get("messages_delivered").is_none() {
            continue;
        }
        out += &format!(
            "{:<8} {:<5} {:<5} {:<10.2} {:<13.4} {:<10} {:<8} {:<8} {:<6} {}\n",
            bytes(&s["test"]["message"]),
            max_outstanding,
            eack,
            f(&m["elapsed_s"]),
            f(&m["throughput_bps"]) / 1e6,
            m["messages_delivered"],
            m["retransmissions"],
            m["duplicates_received"],
            m["data_drops"],
            m["timeouts"]
        );
    }
    out
}

/// With the CPU cost model or on the Linux backend: netperf's utilization and service demand columns, one
/// row per point, marked as modeled or measured.
fn cpu_table(doc: &Value) -> String {
    let cpus: Vec<&Value> =
        points(doc).iter().map(|p| &p["metrics"]).filter(|m| m.get("cpu_source").is_some()).collect();
    if cpus.is_empty() {
        return String::new();
    }
    let cell = |v: &Value| v.as_f64().map_or("-".to_string(), |v| format!("{v:.3}"));
    let per_tr = cpus.iter().any(|m| m.get("service_demand_us_per_tr").is_some());
    // The simulator's cost model, or the Linux backend's /proc/stat (the whole machine: both ends share it).
    let label = match cpus[0]["cpu_source"].as_str() {
        Some("measured") => "measured, whole machine: /proc/stat",
        _ => "modeled",
    };
    let mut out = format!("\nCPU ({label})\nUtilization       Service Demand\n");
    out += "local    remote   local    remote";
    out += if per_tr { "   local    remote\n" } else { "\n" };
    out += "%        %        us/KB    us/KB";
    out += if per_tr { "    us/Tr    us/Tr\n" } else { "\n" };
    for m in cpus {
        let (u, d) = (&m["cpu_util_percent"], &m["service_demand_us_per_kb"]);
        out += &format!(
            "{:<8} {:<8} {:<8} {:<8}",
            cell(&u["local"]),
            cell(&u["remote"]),
            cell(&d["local"]),
            cell(&d["remote"])
        );
        if let Some(t) = m.get("service_demand_us_per_tr") {
            out += &format!(" {:<8} {}", cell(&t["local"]), cell(&t["remote"]));
        }
        out = out.trim_end().to_string() + "\n";
    }
    out
}

/// Linux backend: a point whose run health was bad is marked, with the reasons.
pub(crate) fn health_lines(doc: &Value) -> String {
    let mut out = String::new();
    for (i, p) in points(doc).iter().enumerate() {
        let Some(h) = p.get("health").filter(|h| h.is_object()) else { continue };
        if h["valid"].as_bool() == Some(false) {
            let reasons: Vec<&str> = h["invalid_reasons"]
                .as_array()
                .map(|a| a.iter().filter_map(|r| r.as_str()).collect())
                .unwrap_or_default();
            out += &format!("!! point {i}: INVALID run (emulator health): {}\n", reasons.join("; "));
        } else {
            let hidden = h["hidden_drops"].as_u64().unwrap_or(0);
            out += &format!("run health: valid (hidden drops {hidden})\n");
        }
    }
    out
}

/// A figure as a cell: with the decimals the published figure was given with, and at least as many as its
/// size asks for (2 below 10, 1 below 1000).
fn figure(v: f64, decimals: usize) -> String {
    let size = if v.abs() < 10.0 {
        2
    } else if v.abs() < 1000.0 {
        1
    } else {
        0
    };
    format!("{v:.*}", decimals.max(size))
}

/// The published figures beside the lab's (`points[].published`, from the scenario's `[[published]]`): one
/// row per figure with the point's swept values, the metric, both figures in the source's unit and the
/// difference; then the sources.
fn published_table(doc: &Value) -> String {
    let series = doc["scenario"]["published"].as_array().map(Vec::as_slice).unwrap_or_default();
    if series.is_empty() {
        return String::new();
    }
    let (ph, cells) = param_columns(doc);
    let mut rows: Vec<[String; 6]> = Vec::new();
    for (p, cell) in points(doc).iter().zip(&cells) {
        for c in p["published"].as_array().into_iter().flatten() {
            let unit = text(&c["unit"]);
            let published = f(&c["as_published"]);
            let metric = text(&c["metric"]);
            let factor = tcplab_lab::published::factor(&metric, &unit);
            let shown = c["as_published"].to_string();
            let decimals = shown.split_once('.').map_or(0, |(_, d)| d.len());
            let lab = f(&c["lab"]) / factor;
            // A percentage's difference is in percentage points; any other figure's relative.
            let diff = if unit == "%" {
                format!("{:+.1} pp", lab - published)
            } else {
                c["difference"].as_f64().map_or_else(|| "-".into(), |d| format!("{:+.1}%", d * 100.0))
            };
            let index = c["series"].as_u64().unwrap_or_default() + 1;
            rows.push([
                cell.clone(),
                metric,
                format!("{} {unit}", figure(published, decimals)),
                format!("{} {unit}", figure(lab, decimals)),
                diff,
                format!("[{index}]"),
            ]);
        }
    }
    let header = [
        ph.trim_end().to_string(),
        "metric".into(),
        "published".into(),
        "lab".into(),
        "difference".into(),
        "source".into(),
    ];
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.trim_end().chars().count());
        }
    }
    let line = |cells: &[String; 6]| {
        let mut l = String::new();
        for (k, (c, w)) in cells.iter().zip(widths).enumerate() {
            if k == 0 && w == 0 {
                continue;
            }
            l += &format!("{:<w$}  ", c.trim_end());
        }
        l.trim_end().to_string() + "\n"
    };
    let mut out = String::from("\nPublished figures beside the lab's\n");
    out += &line(&header);
    if rows.is_empty() {
        out += "(no point of this run is one the sources give a figure for)\n";
    }
    for r in &rows {
        out += &line(r);
    }
    for (i, s) in series.iter().enumerate() {
        let name = serde_json::from_value::<tcplab_lab::published::PublishedSeries>(s.clone())
            .map_or_else(|_| text(&s["source"]), |s| s.name());
        let note = s["note"].as_str().map(|n| format!("; {n}")).unwrap_or_default();
        out += &format!("[{}] {name}{note}\n", i + 1);
    }
    out
}
