//! The netperf-style table, rendered from the typed result document: a run's table and a saved result's
//! (`tcplab report RESULT.json`, read back through the same model) are the same text by construction.
//!
//! Every table leads with the point's swept values; a column whose value comes from the scenario (a
//! socket size, EACK on or off) is shown only when no swept key changes it, since the document holds the
//! unswept scenario: its values are then in the leading columns. Columns are as wide as their contents.

use serde::Serialize;
use tcplab_lab::result::{LatencyMetrics, Metrics, Point, ResultDoc, Sides};
use tcplab_lab::scenario::{Host, Scenario};
use tcplab_lab::TestKind;

mod rdp;

/// The transports whose tests have a table of their own, by `test.transport`, each in its module here
/// (`saved/NAME.rs`), optional: another transport's tests get their workload's table (TCP's), or where
/// its metrics are its own (`Metrics::Own`), a column per metric (`own_table`).
const TRANSPORT_TABLES: &[(&str, TableFn)] = &[("rdp", rdp::table)];

/// A transport's table of a result.
type TableFn = fn(&Tables) -> String;
use tcplab_link::{LinkConfig, LossFilter, LossModel};

/// The table of a result: the banner with everything that shapes the path, netperf's columns for the test
/// kind with one row per point (the swept values first, then the scenario's `[table]` columns), the
/// iterations' confidence notes, the CPU columns of the cost model, the published figures, and the Linux
/// backend's run health.
pub fn table(doc: &ResultDoc) -> String {
    let t = Tables { doc, swept: doc.sweep.iter().flatten().map(|a| a.path.as_str()).collect() };
    if doc.scenario.has_flows() {
        return t.flows_banner() + &t.flows_table() + &t.iteration_notes() + &t.published_table();
    }
    let mut out = t.banner();
    let own = doc.points.iter().any(|p| matches!(p.metrics, Metrics::Own(_)));
    out += &match (t.transport_table(), doc.scenario.test.kind) {
        (Some(table), _) => table(&t),
        (None, _) if own => t.own_table(),
        (None, TestKind::Rr | TestKind::Crr) => t.rr_table(),
        (None, TestKind::Msg) => t.msg_table(),
        (None, TestKind::Stream | TestKind::Maerts) => t.stream_table(),
    };
    out += &t.iteration_notes();
    out += &t.cpu_table();
    out += &t.published_table();
    out += &health_lines(doc);
    out
}

/// One table: columns of header lines (top to bottom, the unit last, aligned at the bottom) and rows of
/// cells, each column as wide as its widest cell or header line, two spaces apart. A header line made with
/// [`span`] (a title over a group of columns: `Latency usec/Tran`) does not widen its column: it runs on
/// over the columns to its right, whose lines there are empty. A text row (a note under a point) spans the
/// table.
struct Grid {
    head: Vec<Vec<String>>,
    rows: Vec<Row>,
}

enum Row {
    Cells(Vec<String>),
    Text(String),
}

/// Marks a header line as a title over the columns to its right.
const SPAN: char = '\u{1}';

fn span(title: &str) -> String {
    format!("{SPAN}{title}")
}

impl Grid {
    fn new() -> Grid {
        Grid { head: Vec::new(), rows: Vec::new() }
    }

    /// Adds a column header (its lines, top to bottom).
    fn column<S: AsRef<str>>(&mut self, head: &[S]) {
        self.head.push(head.iter().map(|h| h.as_ref().to_string()).collect());
    }

    fn render(&self) -> String {
        let n = self.head.len();
        let mut widths: Vec<usize> = self
            .head
            .iter()
            .map(|h| h.iter().filter(|l| !l.starts_with(SPAN)).map(|l| l.chars().count()).max().unwrap_or(0))
            .collect();
        for r in &self.rows {
            if let Row::Cells(c) = r {
                for (w, cell) in widths.iter_mut().zip(c) {
                    *w = (*w).max(cell.chars().count());
                }
            }
        }
        // A column with nothing in it (no sweep) takes no room.
        let line = |cells: &[&str]| {
            let mut l = String::new();
            let mut k = 0;
            while k < n {
                let w = widths[k];
                let text = cells[k].trim_start_matches(SPAN);
                k += 1;
                if w == 0 && text.is_empty() {
                    continue;
                }
                // A title runs on over the following columns until it fits.
                let mut room = w;
                while text.chars().count() > room && k < n {
                    room += 2 + widths[k];
                    k += 1;
                }
                l += &format!("{text:<room$}  ");
            }
            l.trim_end().to_string() + "\n"
        };
        let height = self.head.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = String::new();
        for i in 0..height {
            let cells: Vec<&str> = self
                .head
                .iter()
                .map(|h| {
                    let skip = height - h.len();
                    if i < skip {
                        ""
                    } else {
                        h[i - skip].as_str()
                    }
                })
                .collect();
            out += &line(&cells);
        }
        out += "\n";
        for r in &self.rows {
            match r {
                Row::Cells(c) => {
                    debug_assert_eq!(c.len(), n);
                    out += &line(&c.iter().map(String::as_str).collect::<Vec<_>>());
                }
                Row::Text(t) => out += &format!("{t}\n"),
            }
        }
        out
    }
}

/// A figure with `decimals`, or "-" when the document has none (NaN: JSON's null).
fn fx(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "-".into()
    }
}

fn bytes(b: tcplab_units::ByteSize) -> String {
    b.bytes().to_string()
}

/// A value of the scenario as a scenario file writes it (`"10mbit"`, `"100pkt"`).
fn echo<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(v) => v.to_string(),
        Err(_) => "?".into(),
    }
}

/// A swept value as a cell: strings as they are, anything else as JSON writes it.
fn param(v: Option<&serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

struct Tables<'a> {
    doc: &'a ResultDoc,
    swept: Vec<&'a str>,
}

impl Tables<'_> {
    fn s(&self) -> &Scenario {
        &self.doc.scenario
    }

    /// The table of the test's transport, if it has its own ([`TRANSPORT_TABLES`]).
    fn transport_table(&self) -> Option<TableFn> {
        let name = self.s().test.transport.key();
        TRANSPORT_TABLES.iter().find(|(t, _)| *t == name).map(|(_, table)| *table)
    }

    /// Whether a swept key changes the scenario value at `key` (the key itself, a table around it, or a
    /// knob inside it).
    fn touched(&self, key: &str) -> bool {
        self.swept.iter().any(|p| {
            *p == key
                || key.strip_prefix(*p).is_some_and(|r| r.starts_with('.'))
                || p.strip_prefix(key).is_some_and(|r| r.starts_with('.'))
        })
    }

    /// Whether none of `keys` is swept: a scenario column that holds for every point.
    fn fixed(&self, keys: &[&str]) -> bool {
        !keys.iter().any(|k| self.touched(k))
    }

    /// The swept keys' columns, the first of every table.
    fn sweep_columns(&self, g: &mut Grid) -> usize {
        for p in &self.swept {
            g.column(&[p]);
        }
        self.swept.len()
    }

    fn sweep_cells(&self, p: &Point) -> Vec<String> {
        self.swept.iter().map(|k| param(p.params.get(*k))).collect()
    }

    fn backend_name(&self) -> &'static str {
        match self.doc.backend {
            "linux" => "Linux kernel TCP through tcplab's emulator",
            _ => "simulated",
        }
    }

    /// The first lines: test, direction, scenario, backend, seed and what the test adds; then everything
    /// that shapes the path (per direction: rate, delay, queue, framing, MTU, loss) and the hosts' NIC
    /// queues when a NIC has a rate. A swept knob says so instead of the unswept value.
    fn banner(&self) -> String {
        let s = self.s();
        let (dir, extra) = match s.test.kind {
            // A transport with its own table says what its test adds there.
            _ if self.transport_table().is_some() => ("client to server", String::new()),
            TestKind::Maerts => ("server to client", String::new()),
            TestKind::Rr | TestKind::Crr => ("client to server", self.burst_extra()),
            TestKind::Msg => ("client to server", self.msg_extra()),
            _ => ("client to server", String::new()),
        };
        let mut out = format!(
            "{} TEST from {dir}: {} ({}, seed {}{extra})\n",
            s.test.netperf_name(),
            s.name,
            self.backend_name(),
            self.doc.seed
        );
        let (up, down) = (self.link("path.up", &s.path.up), self.link("path.down", &s.path.down));
        if up == down && !self.touched("path") {
            out += &format!("path up and down: {up}\n");
        } else {
            out += &format!("path up: {up}\npath down: {down}\n");
        }
        let nics: Vec<String> =
            [("client", &s.client), ("server", &s.server)].iter().filter_map(|(side, h)| self.nic(side, h)).collect();
        if !nics.is_empty() {
            out += &format!("{}\n", nics.join("; "));
        }
        out
    }

    /// One direction: `10mbit, 20ms, queue 1000pkt, ethernet framing, no loss`.
    fn link(&self, at: &str, l: &LinkConfig) -> String {
        let field =
            |k: &str, text: String| if self.touched(&format!("{at}.{k}")) { format!("{k} swept") } else { text };
        let mut parts = vec![
            field("rate", echo(&l.rate)),
            field("delay", format!("{} delay", echo(&l.delay))),
            field("queue", format!("queue {}", echo(&l.queue))),
        ];
        if self.touched(&format!("{at}.qdisc")) {
            parts.push("qdisc swept".into());
        } else if !l.qdisc.is_fifo() {
            parts.push(format!("{} qdisc", l.qdisc.kind()));
        }
        if let Some(j) = l.jitter {
            parts.push(field("jitter", format!("jitter ±{}{}", echo(&j), if l.reorder { ", reordering" } else { "" })));
        }
        parts.extend([field(
            "framing",
            match echo(&l.framing).as_str() {
                "none" => "no framing bytes".to_string(),
                f => format!("{f} framing"),
            },
        )]);
        if let Some(m) = l.mtu {
            parts.push(field("mtu", format!("MTU {}", echo(&m))));
        } else if self.touched(&format!("{at}.mtu")) {
            parts.push("mtu swept".into());
        }
        parts.push(field("loss", loss(&l.loss)));
        parts.join(", ")
    }

    /// A host's NIC transmit queue, when it has a rate (without one it never queues).
    fn nic(&self, side: &str, h: &Host) -> Option<String> {
        let key = |k: &str| format!("{side}.host.{k}");
        let rate = match h.host.nic_rate {
            Some(r) if !self.touched(&key("nic_rate")) => echo(&r),
            _ if self.touched(&key("nic_rate")) => "rate swept".into(),
            _ => return None,
        };
        let txq = if self.touched(&key("txqueuelen")) {
            "txqueuelen swept".to_string()
        } else {
            format!("txqueuelen {}", h.host.txqueuelen)
        };
        Some(format!("{side} NIC: {rate}, {txq}"))
    }

    /// What a request/response banner adds: the first burst, unless it is swept.
    fn burst_extra(&self) -> String {
        match self.s().test.burst {
            Some(b) if b > 0 && self.fixed(&["test.burst"]) => format!(", first burst {b}"),
            _ => String::new(),
        }
    }

    /// What the small-message banner adds: Nagle or NODELAY (unless swept), and back to back or paced.
    fn msg_extra(&self) -> String {
        let s = self.s();
        // TCP_NODELAY is the application's socket option, not a personality knob (no `stack` sets it,
        // `nagle_is_not_a_personality_knob`): a swept stack leaves it as the scenario says.
        let nagle = if !self.fixed(&["client.tcp.nodelay", "test.nodelay"]) {
            "Nagle swept"
        } else if s.test.nodelay.unwrap_or(s.client.tcp().nodelay) {
            "NODELAY"
        } else {
            "Nagle on"
        };
        match s.test.interval {
            _ if self.touched("test.interval") => format!(", {nagle}, interval swept"),
            Some(i) => format!(", {nagle}, one message every {i} per connection"),
            None => format!(", {nagle}, messages back to back"),
        }
    }

    /// The figures the scenario's table adds after netperf's columns: `[table] columns`, else the metrics
    /// of its `[[plot]]`s that netperf's columns (`shown`) and the CPU table do not have.
    fn extra_metrics(&self, shown: &[&str]) -> Vec<String> {
        let s = self.s();
        if let Some(t) = &s.table {
            return t.columns.clone();
        }
        let mut out: Vec<String> = Vec::new();
        for y in s.plot.iter().filter_map(|p| p.y.as_deref()) {
            let cpu = y.starts_with("cpu_util_percent") || y.starts_with("service_demand_");
            if !cpu && !shown.contains(&y) && !out.iter().any(|o| o == y) {
                out.push(y.to_string());
            }
        }
        out.truncate(tcplab_lab::scenario::TABLE_MAX_COLUMNS);
        out
    }

    /// Adds the extra metrics' columns (name over unit); returns the metrics and how to show each.
    fn extra_columns(&self, g: &mut Grid, shown: &[&str]) -> Vec<(String, f64, usize)> {
        self.extra_metrics(shown)
            .into_iter()
            .map(|m| {
                let (unit, scale) = match tcplab_lab::published::metric_unit(&m) {
                    "bit/s" => ("10^6bits/sec", 1e-6),
                    "us" => ("usec", 1.0),
                    "us/KB" => ("usec/KB", 1.0),
                    "us/transaction" => ("usec/Tr", 1.0),
                    "s" => ("secs.", 1.0),
                    u => (u, 1.0),
                };
                // A spread between runs reads as such over its metric's name, not as one long key.
                match m.strip_prefix("iteration_stddev.") {
                    Some(of) => g.column(&["σ between runs of", of, unit]),
                    None => g.column(&[&m, unit]),
                }
                (m, scale, 2)
            })
            .collect()
    }

    fn extra_cells(p: &Point, extra: &[(String, f64, usize)]) -> Vec<String> {
        extra
            .iter()
            .map(|(m, scale, decimals)| match p.value(m) {
                // Counts as counts; anything else with its decimals.
                Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{:.0}", v * scale),
                Some(v) => fx(v * scale, *decimals),
                None => "-".into(),
            })
            .collect()
    }

    /// netperf's classic TCP_STREAM table.
    fn stream_table(&self) -> String {
        let s = self.s();
        let maerts = s.test.kind == TestKind::Maerts;
        let (snd, rcv) = if maerts { ("server", "client") } else { ("client", "server") };
        let (sender, receiver) = if maerts { (&s.server, &s.client) } else { (&s.client, &s.server) };
        let recv_keys = [format!("{rcv}.tcp.recv_buffer"), "test.recv_buffer".into(), format!("{rcv}.stack")];
        let send_keys = [format!("{snd}.tcp.send_buffer"), "test.send_buffer".into(), format!("{snd}.stack")];
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        let recv = self.fixed(&recv_keys.iter().map(String::as_str).collect::<Vec<_>>());
        let send = self.fixed(&send_keys.iter().map(String::as_str).collect::<Vec<_>>());
        let msg = send && self.fixed(&["test.message"]);
        if recv {
            g.column(&["Recv", "Socket", "Size", "bytes"]);
        }
        if send {
            g.column(&["Send", "Socket", "Size", "bytes"]);
        }
        if msg {
            g.column(&["Send", "Message", "Size", "bytes"]);
        }
        g.column(&["Elapsed", "Time", "secs."]);
        g.column(&["Throughput", "10^6bits/sec"]);
        g.column(&["Retrans", "segments"]);
        let extra = self.extra_columns(&mut g, &["throughput_bps", "elapsed_s", "retransmissions"]);
        for p in &self.doc.points {
            let Metrics::Stream(m) = &p.metrics else { continue };
            let mut c = self.sweep_cells(p);
            if recv {
                c.push(bytes(receiver.tcp().recv_buffer));
            }
            if send {
                c.push(bytes(sender.tcp().send_buffer));
            }
            if msg {
                c.push(bytes(s.test.message));
            }
            c.extend([fx(m.elapsed_s, 2), fx(m.throughput_bps / 1e6, 2), m.retransmissions.to_string()]);
            c.extend(Self::extra_cells(p, &extra));
            g.rows.push(Row::Cells(c));
        }
        g.render()
    }

    /// The points of a transport's own metrics (`Metrics::Own`) whose transport has no table here: the
    /// swept values, then every metric, named as the document names it.
    fn own_table(&self) -> String {
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        let names: Vec<String> = self
            .doc
            .points
            .iter()
            .find_map(|p| match serde_json::to_value(&p.metrics) {
                Ok(serde_json::Value::Object(m)) => Some(m.keys().cloned().collect()),
                _ => None,
            })
            .unwrap_or_default();
        for n in &names {
            g.column(&[n]);
        }
        for p in &self.doc.points {
            let mut c = self.sweep_cells(p);
            c.extend(names.iter().map(|n| p.value(n).map_or(String::new(), |v| format!("{v}"))));
            g.rows.push(Row::Cells(c));
        }
        g.render()
    }

    /// A `[dumbbell]` scenario's first lines: the scenario, the bottleneck's directions, the access links.
    fn flows_banner(&self) -> String {
        let s = self.s();
        if s.is_network() {
            return self.network_banner();
        }
        let Some(d) = &s.dumbbell else { return String::new() };
        let mut out = format!(
            "FLOWS TEST through a dumbbell: {} ({}, seed {}), {} flows\n",
            s.name,
            self.backend_name(),
            self.doc.seed,
            s.flow.len()
        );
        let (fw, bw) = (self.link("dumbbell.bottleneck", &d.bottleneck), self.link("dumbbell.reverse", &d.reverse));
        // Without `reverse` the way back is the bottleneck's own configuration, swept with it.
        if d.bottleneck == d.reverse {
            out += &format!("bottleneck both ways: {fw}\n");
        } else {
            out += &format!("bottleneck: {fw}\nbottleneck back: {bw}\n");
        }
        out += &format!("access links: {}\n", echo(&d.access_rate));
        out
    }

    /// A network's first lines: the scenario, then each link with its two directions.
    fn network_banner(&self) -> String {
        let s = self.s();
        let mut out = format!(
            "FLOWS TEST through a network: {} ({}, seed {}), {} flows, {} hosts, {} links\n",
            s.name,
            self.backend_name(),
            self.doc.seed,
            s.flow.len(),
            s.host.len(),
            s.link.len()
        );
        for (i, l) in s.link.iter().enumerate() {
            let fw = self.link(&format!("link[{i}].forward"), &l.forward);
            if l.forward == l.backward {
                out += &format!("link {i} {} <-> {}: {fw}\n", l.a, l.b);
            } else {
                let bw = self.link(&format!("link[{i}].backward"), &l.backward);
                out += &format!("link {i} {} -> {}: {fw}\nlink {i} {} -> {}: {bw}\n", l.a, l.b, l.b, l.a);
            }
        }
        out
    }

    /// One row per flow of every point (the swept values first), then the point's aggregate over its
    /// stream flows with Jain's fairness index.
    fn flows_table(&self) -> String {
        let mut g = Grid::new();
        let params = self.sweep_columns(&mut g);
        g.column(&["Flow"]);
        g.column(&["Kind"]);
        g.column(&["Stack/cc"]);
        g.column(&["Base", "RTT", "ms"]);
        g.column(&["Goodput", "10^6bits/sec"]);
        g.column(&["Retrans", "segments"]);
        g.column(&["Smoothed", "RTT", "ms"]);
        g.column(&["Trans.", "Rate", "per sec"]);
        g.column(&["Latency", "p50", "ms"]);
        g.column(&["Latency", "p99", "ms"]);
        g.column(&["Jain's", "index"]);
        for (k, p) in self.doc.points.iter().enumerate() {
            if k > 0 && params > 0 {
                g.rows.push(Row::Text(String::new()));
            }
            for f in &p.flows {
                let mut c = self.sweep_cells(p);
                let lat =
                    |q: fn(&LatencyMetrics) -> f64| f.latency_us.as_ref().map_or("-".into(), |l| fx(q(l) / 1e3, 2));
                c.extend([
                    f.flow.to_string(),
                    f.kind.clone(),
                    format!("{}/{}", f.stack, f.congestion_control),
                    fx(f.base_rtt_ms, 1),
                    if f.kind == "rr" { "-".into() } else { fx(f.goodput_bps / 1e6, 3) },
                    f.retransmissions.to_string(),
                    fx(f.smoothed_rtt_ms, 1),
                    f.transactions_per_s.or(f.messages_per_s).map_or("-".into(), |t| fx(t, 2)),
                    lat(|l| l.p50),
                    lat(|l| l.p99),
                    "-".into(),
                ]);
                g.rows.push(Row::Cells(c));
            }
            if let Some(a) = &p.aggregate {
                let mut c = self.sweep_cells(p);
                c.extend([
                    "all".into(),
                    format!("{} stream", a.stream_flows),
                    "-".into(),
                    "-".into(),
                    fx(a.goodput_bps / 1e6, 3),
                    p.metrics_retransmissions().to_string(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    fx(a.jain_index, 4),
                ]);
                g.rows.push(Row::Cells(c));
            }
        }
        g.render()
    }

    /// netperf's TCP_RR / TCP_CRR table (local send/recv socket sizes, request and response sizes, elapsed,
    /// transaction rate), the latency statistics of each point, and a second line with the remote socket
    /// sizes as netperf prints it.
    fn rr_table(&self) -> String {
        let s = self.s();
        let mut g = Grid::new();
        let params = self.sweep_columns(&mut g);
        let local = self.fixed(&[
            "client.tcp.send_buffer",
            "client.tcp.recv_buffer",
            "client.stack",
            "test.send_buffer",
            "test.recv_buffer",
        ]);
        let remote = self.fixed(&[
            "server.tcp.send_buffer",
            "server.tcp.recv_buffer",
            "server.stack",
            "test.send_buffer",
            "test.recv_buffer",
        ]);
        let sockets = local && remote;
        let req = self.fixed(&["test.request"]);
        let rsp = self.fixed(&["test.response"]);
        if sockets {
            g.column(&[span("Local /Remote"), span("Socket Size"), "Send".into(), "bytes".into()]);
            g.column(&["", "", "Recv", "Bytes"]);
        }
        if req {
            g.column(&["Request", "Size", "bytes"]);
        }
        if rsp {
            g.column(&["Resp.", "Size", "bytes"]);
        }
        g.column(&["Elapsed", "Time", "secs."]);
        g.column(&["Trans.", "Rate", "per sec"]);
        latency_columns(&mut g, "Latency usec/Tran", &["mean", "p50", "p99", "max"]);
        let extra = self.extra_columns(
            &mut g,
            &[
                "transactions_per_s",
                "elapsed_s",
                "latency_us.mean",
                "latency_us.p50",
                "latency_us.p99",
                "latency_us.max",
            ],
        );
        let width = g.head.len();
        for p in &self.doc.points {
            let Metrics::Rr(m) = &p.metrics else { continue };
            let mut c = self.sweep_cells(p);
            if sockets {
                c.extend([bytes(s.client.tcp().send_buffer), bytes(s.client.tcp().recv_buffer)]);
            }
            if req {
                c.push(s.test.request.map_or("-".into(), bytes));
            }
            if rsp {
                c.push(s.test.response.map_or("-".into(), bytes));
            }
            c.extend([fx(m.elapsed_s, 2), fx(m.transactions_per_s, 2)]);
            c.extend(latency_cells(&m.latency_us, &["mean", "p50", "p99", "max"]));
            c.extend(Self::extra_cells(p, &extra));
            g.rows.push(Row::Cells(c));
            if sockets {
                let mut remote = vec![String::new(); params];
                remote.extend([bytes(s.server.tcp().send_buffer), bytes(s.server.tcp().recv_buffer)]);
                remote.resize(width, String::new());
                g.rows.push(Row::Cells(remote));
            }
            if let (Some(opened), Some(waits)) = (m.connections_opened, m.port_waits) {
                g.rows.push(Row::Text(format!("connections opened {opened}, waits for a free port {waits}")));
            }
        }
        g.render()
    }

    /// The small-message stream: messages delivered and their rate, the time per message and the one-way
    /// latency per message.
    fn msg_table(&self) -> String {
        let s = self.s();
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        let msg = self.fixed(&["test.message", "client.tcp.send_buffer", "test.send_buffer", "client.stack"]);
        if msg {
            g.column(&["Message", "Size", "bytes"]);
        }
        g.column(&["Messages", "delivered", ""]);
        g.column(&["Elapsed", "Time", "secs."]);
        g.column(&["Messages", "per sec", ""]);
        latency_columns(&mut g, "Time per message usec", &["mean", "p50", "p99.9", "max"]);
        latency_columns(&mut g, "One-way latency usec", &["mean", "p50", "p99", "max"]);
        let shown = [
            "messages",
            "elapsed_s",
            "messages_per_s",
            "time_per_message_us.mean",
            "time_per_message_us.p50",
            "time_per_message_us.p99_9",
            "time_per_message_us.max",
            "latency_us.mean",
            "latency_us.p50",
            "latency_us.p99",
            "latency_us.max",
        ];
        let extra = self.extra_columns(&mut g, &shown);
        for p in &self.doc.points {
            let Metrics::Msg(m) = &p.metrics else { continue };
            let mut c = self.sweep_cells(p);
            if msg {
                c.push(bytes(s.test.message));
            }
            c.extend([m.messages.to_string(), fx(m.elapsed_s, 3), fx(m.messages_per_s, 1)]);
            let g3 = |v: f64| fx(v, 3);
            let t = &m.time_per_message_us;
            c.extend([g3(t.mean), g3(t.p50), g3(t.p99_9), g3(t.max)]);
            c.extend(latency_cells(&m.latency_us, &["mean", "p50", "p99", "max"]));
            c.extend(Self::extra_cells(p, &extra));
            g.rows.push(Row::Cells(c));
        }
        g.render()
    }

    /// A line per point that aggregates iterations: how many, and the confidence interval; apart from the
    /// table's rows by an empty line, so that they do not read as rows.
    fn iteration_notes(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.doc.points.iter().enumerate() {
            let Some(c) = &p.confidence else { continue };
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
        if !out.is_empty() {
            out.insert(0, '\n');
        }
        out
    }

    /// With the CPU cost model or on the Linux backend: netperf's utilization and service demand columns,
    /// one row per point led by its swept values, marked as modeled or measured.
    fn cpu_table(&self) -> String {
        let cpus: Vec<(&Point, &tcplab_lab::result::CpuMetrics)> =
            self.doc.points.iter().filter_map(|p| p.metrics.cpu().map(|c| (p, c))).collect();
        let Some((_, first)) = cpus.first() else { return String::new() };
        let per_tr = cpus.iter().any(|(_, c)| c.service_demand_us_per_tr.is_some());
        // The simulator's cost model, or the Linux backend's /proc/stat (the whole machine: both ends share it).
        let label = match first.cpu_source.as_str() {
            "measured" => "measured, whole machine: /proc/stat",
            _ => "modeled",
        };
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        g.column(&[span("Utilization"), "local".into(), "%".into()]);
        g.column(&["", "remote", "%"]);
        g.column(&[span("Service Demand"), "local".into(), "us/KB".into()]);
        g.column(&["", "remote", "us/KB"]);
        if per_tr {
            g.column(&["", "local", "us/Tr"]);
            g.column(&["", "remote", "us/Tr"]);
        }
        let side = |s: &Sides| [s.local, s.remote].map(|v| v.map_or("-".to_string(), |v| fx(v, 3)));
        for (p, c) in &cpus {
            let mut cells = self.sweep_cells(p);
            cells.extend(side(&c.cpu_util_percent));
            cells.extend(side(&c.service_demand_us_per_kb));
            if per_tr {
                cells.extend(c.service_demand_us_per_tr.as_ref().map_or(["-".to_string(), "-".to_string()], side));
            }
            g.rows.push(Row::Cells(cells));
        }
        format!("\nCPU ({label})\n{}", g.render())
    }

    /// The published figures beside the lab's (`points[].published`, from the scenario's `[[published]]`):
    /// one row per figure with the point's swept values, the metric, both figures in the source's unit
    /// and the difference; then the sources.
    fn published_table(&self) -> String {
        let series = &self.s().published;
        if series.is_empty() {
            return String::new();
        }
        let mut g = Grid::new();
        self.sweep_columns(&mut g);
        for h in ["metric", "published", "lab", "difference", "source"] {
            g.column(&[h]);
        }
        for p in &self.doc.points {
            for c in &p.published {
                let factor = tcplab_lab::published::factor(&c.metric, &c.unit);
                let shown = serde_json::to_string(&c.as_published).unwrap_or_default();
                let decimals = shown.split_once('.').map_or(0, |(_, d)| d.len());
                let lab = c.lab / factor;
                // A percentage's difference is in percentage points; any other figure's relative.
                let diff = if c.unit == "%" {
                    format!("{:+.1} pp", lab - c.as_published)
                } else {
                    c.difference.map_or_else(|| "-".into(), |d| format!("{:+.1}%", d * 100.0))
                };
                let mut cells = self.sweep_cells(p);
                cells.extend([
                    c.metric.clone(),
                    format!("{} {}", figure(c.as_published, decimals), c.unit),
                    format!("{} {}", figure(lab, decimals), c.unit),
                    diff,
                    format!("[{}]", c.series + 1),
                ]);
                g.rows.push(Row::Cells(cells));
            }
        }
        let mut out = String::from("\nPublished figures beside the lab's\n");
        let text = g.render();
        // The header, without the blank line under it that the other tables have.
        let mut lines = text.lines();
        out += lines.next().unwrap_or_default();
        out += "\n";
        if g.rows.is_empty() {
            out += "(no point of this run is one the sources give a figure for)\n";
        }
        for l in lines.skip(1) {
            out += l;
            out += "\n";
        }
        for (i, s) in series.iter().enumerate() {
            let note = s.note.as_ref().map(|n| format!("; {n}")).unwrap_or_default();
            out += &format!("[{}] {}{note}\n", i + 1, s.name());
        }
        out
    }
}

/// A group of latency columns under one title (`Latency usec/Tran`: mean, p50, p99, max).
fn latency_columns(g: &mut Grid, title: &str, stats: &[&str]) {
    for (i, st) in stats.iter().enumerate() {
        g.column(&[if i == 0 { span(title) } else { String::new() }, st.to_string(), String::new()]);
    }
}

fn latency_cells(l: &LatencyMetrics, stats: &[&str]) -> Vec<String> {
    stats
        .iter()
        .map(|st| {
            let v = match *st {
                "mean" => l.mean,
                "p50" => l.p50,
                "p90" => l.p90,
                "p99" => l.p99,
                "p99.9" => l.p99_9,
                "max" => l.max,
                _ => f64::NAN,
            };
            fx(v, 1)
        })
        .collect()
}

/// A loss model in words: `no loss`, `loss 1% random (data packets)`.
fn loss(l: &LossModel) -> String {
    let which = |f: &LossFilter| if *f == LossFilter::Data { " (data packets only)" } else { "" };
    match l {
        LossModel::None {} => "no loss".into(),
        LossModel::Bernoulli { p, packets } => format!("random loss {}%{}", p * 100.0, which(packets)),
        LossModel::Scripted { drop, packets } => format!("scripted loss of {} frames{}", drop.len(), which(packets)),
        LossModel::GilbertElliott { p, r, h, k, packets } => {
            format!("Gilbert-Elliott loss p {p} r {r} h {h} k {k}{}", which(packets))
        }
    }
}

/// Linux backend: a point whose run health was bad is marked, with the reasons.
fn health_lines(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for (i, p) in doc.points.iter().enumerate() {
        let Some(h) = &p.health else { continue };
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

#[cfg(test)]
mod tests {
    use tcplab_tcp::personality::PERSONALITIES;
    use tcplab_tcp::TcpConfig;

    /// The message stream's banner reads Nagle from the scenario alone when only `client.stack` is swept.
    #[test]
    fn nagle_is_not_a_personality_knob() {
        for (name, _) in PERSONALITIES {
            let cfg = TcpConfig::personality(name).expect("a listed personality");
            assert!(!cfg.nodelay, "personality {name} sets TCP_NODELAY");
        }
    }
}
