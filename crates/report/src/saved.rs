//! The netperf-style table rendered from a result document's JSON form.

use serde_json::Value;
use tcplab_lab::TestKind;
use tcplab_units::ByteSize;

/// The table of a saved result (`tcplab report RESULT.json`, and the HTML page): the JSON form has no typed
/// document to render from, so this reads the fields it needs. It shows the netperf columns of one point per
/// row; `crate::table`, from a run, also has the sweep, CPU and health columns.
pub fn table_json(doc: &Value) -> String {
    match serde_json::from_value::<TestKind>(doc["scenario"]["test"]["kind"].clone()) {
        Ok(TestKind::TcpRr | TestKind::TcpCrr | TestKind::RdpRr) => rr_table(doc),
        Ok(TestKind::TcpMsg) => msg_table(doc),
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
