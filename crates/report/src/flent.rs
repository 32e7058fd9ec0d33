//! `--flent FILE.flent.gz`: a time-series run in flent's data format (version 4: `x_values`,
//! `results`, `raw_values`, `metadata`, gzipped JSON), so that `flent -i FILE` reads and plots it
//! (docs/outputs.md).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Map, Value};
use tcplab_lab::ResultDoc;

/// flent's data-file format version this writes (flent's `resultset.FILEFORMAT_VERSION`).
pub const VERSION: u64 = 4;

/// The start of the run as flent's `T0` and `TIME`: simulated time has no date, so the Unix epoch, as in
/// the pcap traces.
const EPOCH: &str = "1970-01-01T00:00:00.000000Z";

/// One series: its name, unit, and (t_s, value) samples.
struct Series {
    name: String,
    units: &'static str,
    samples: Vec<(f64, Option<f64>)>,
}

fn unit_of(var: &str) -> (&'static str, f64) {
    match var {
        "throughput_bps" => ("Mbits/s", 1e-6),
        v if v.ends_with("RTT") || v.ends_with("RTO") || v.starts_with("SndLimTime") => ("ms", 1.0),
        "delivered_bytes" => ("bytes", 1.0),
        v if v.contains("Cwnd") || v.contains("Ssthresh") || v.contains("Rwin") || v.contains("Octets") => {
            ("bytes", 1.0)
        }
        v if v.contains("PipeSize") || v == "CurMSS" => ("bytes", 1.0),
        _ => ("", 1.0),
    }
}

/// The series of the first point: every column of every `logvars` end (`CurCwnd client 32768->5001`),
/// or of the old `series` (`CurCwnd`). A sample JSON writes as `null` (an infinite gauge) has no value.
fn series(doc: &ResultDoc) -> Vec<Series> {
    let Some(p) = doc.points.first() else { return Vec::new() };
    let mut out = Vec::new();
    let mut add = |label: &str, cols: &[&str], rows: &[Vec<f64>]| {
        for (i, c) in cols.iter().enumerate().filter(|(_, c)| **c != "t_s") {
            let (units, scale) = unit_of(c);
            let name = if label.is_empty() { c.to_string() } else { format!("{c} {label}") };
            let samples = rows
                .iter()
                .filter_map(|r| {
                    let t = r.first().copied().filter(|t| t.is_finite())?;
                    Some((t, r.get(i).copied().filter(|v| v.is_finite()).map(|v| v * scale)))
                })
                .collect();
            out.push(Series { name, units, samples });
        }
    };
    if let Some(lv) = &p.logvars {
        let cols: Vec<&str> = lv.columns.iter().map(String::as_str).collect();
        for e in &lv.ends {
            let label = format!("{} {}->{}", e.side, e.local_port, e.remote_port);
            add(&label, &cols, &e.rows);
        }
    } else if let Some(s) = &p.series {
        add("", &s.columns, &s.rows);
    }
    out
}

/// The flent document of a time-series run; `None` when the result has no series (nothing to plot),
/// with the reason.
pub fn document(doc: &ResultDoc) -> Result<Value, String> {
    if let Some(fs) = doc.points.first().and_then(|p| p.flow_series.as_ref()) {
        return flows_document(doc, fs);
    }
    let series = series(doc);
    if series.is_empty() {
        return Err("no time series in the result (set test.series)".into());
    }
    let first = &doc.points[0];
    let interval = first
        .logvars
        .as_ref()
        .map(|l| l.interval_s)
        .or_else(|| first.series.as_ref().map(|s| s.interval_s))
        .unwrap_or(0.1);
    // x: every tick any series has, in order (ends created later start later).
    let key = |t: f64| (t * 1e9).round() as i64;
    let mut ticks: Vec<i64> = series.iter().flat_map(|s| s.samples.iter().map(|p| key(p.0))).collect();
    ticks.sort_unstable();
    ticks.dedup();
    let x_values: Vec<f64> = ticks.iter().map(|&t| t as f64 / 1e9).collect();
    let mut results = Map::new();
    let mut raw = Map::new();
    let mut meta = Map::new();
    // flent's own series for its shipped test: the throughput delivered to the receiving applications
    // (all of the receiving side's ends summed), with the first sender's SRTT as netperf's `tcp_rtt`.
    let maerts = doc.scenario.test.kind == tcplab_lab::TestKind::Maerts;
    let (test, main, receiver, sender) = if maerts {
        ("tcp_1down", "TCP download", "client", "server")
    } else {
        ("tcp_1up", "TCP upload", "server", "client")
    };
    let mut total: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    let mut rtt: std::collections::HashMap<i64, f64> = std::collections::HashMap::new();
    for s in &series {
        if s.name.starts_with("throughput_bps ") && s.name.contains(&format!(" {receiver} ")) {
            for &(t, v) in &s.samples {
                *total.entry(key(t)).or_default() += v.unwrap_or(0.0);
            }
        }
    }
    if let Some(s) = series.iter().find(|s| {
        s.name.starts_with("SmoothedRTT") && (s.name == "SmoothedRTT" || s.name.contains(&format!(" {sender} ")))
    }) {
        rtt = s.samples.iter().filter_map(|&(t, v)| Some((key(t), v?))).collect();
    }
    if total.is_empty() {
        // The old form: what the first sender got acknowledged per interval.
        if let Some(s) = series.iter().find(|s| s.name == "ThruOctetsAcked") {
            for w in s.samples.windows(2) {
                if let (Some(a), Some(b)) = (w[0].1, w[1].1) {
                    total.insert(key(w[1].0), (b - a) * 8.0 / interval / 1e6);
                }
            }
        }
    }
    if !total.is_empty() {
        results.insert(main.into(), Value::Array(ticks.iter().map(|t| json!(total.get(t))).collect()));
        let r = total
            .iter()
            .map(|(&t, &v)| {
                let mut o = json!({"t": t as f64 / 1e9, "val": v});
                if let Some(r) = rtt.get(&t) {
                    o["tcp_rtt"] = json!(r);
                }
                o
            })
            .collect();
        raw.insert(main.into(), Value::Array(r));
        meta.insert(main.into(), json!({"UNITS": "Mbits/s"}));
    }
    for s in &series {
        let by_tick: std::collections::HashMap<i64, Option<f64>> = s.samples.iter().map(|p| (key(p.0), p.1)).collect();
        let ys: Vec<Value> = ticks.iter().map(|t| json!(by_tick.get(t).copied().flatten())).collect();
        results.insert(s.name.clone(), Value::Array(ys));
        let r: Vec<Value> = s.samples.iter().filter_map(|&(t, v)| v.map(|v| json!({"t": t, "val": v}))).collect();
        raw.insert(s.name.clone(), Value::Array(r));
        meta.insert(s.name.clone(), json!({"UNITS": s.units}));
    }
    let s = &doc.scenario;
    let length = first.metrics.elapsed_s();
    Ok(json!({
        "version": VERSION,
        "x_values": x_values,
        "results": results,
        "raw_values": raw,
        "metadata": {
            "NAME": test,
            "TITLE": s.name,
            "NOTE": s.description,
            "TIME": EPOCH,
            "T0": EPOCH,
            "LENGTH": length,
            "TOTAL_LENGTH": x_values.last().copied().unwrap_or(0.0),
            "STEP_SIZE": interval,
            "DELAY": 0,
            "HOSTS": ["198.18.0.2"],
            "LOCAL_HOST": "tcplab",
            "DATA_FILENAME": format!("tcplab-{}.flent.gz", s.name),
            "FLENT_VERSION": format!("tcplab {}", doc.tcplab),
            "TCPLAB_SEED": doc.seed,
            "SERIES_META": meta,
            "TCPLAB_TEST": s.test.kind_name(),
        },
    }))
}

/// A flows run's series as flent's `rrul` test names them, so that flent's RRUL plots (`download`,
/// `upload`, `ping`, `totals`, `all_scaled`) draw it: the stream flows leaving flow 0's sender are the
/// uploads, the others the downloads, named `TCP upload BE`, `BK`, `CS5`, `EF` (flent's four DSCP
/// classes; tcplab marks nothing) and `TCP upload 5`, ... beyond four; each rr flow is `Ping (ms) TCP rr
/// N` (a 1-byte transaction's time is the round trip flent's pings measure); the sums and averages flent
/// computes as it runs (`TCP upload sum`, `avg`, `TCP totals`, `Ping (ms) avg`) are computed here.
fn flows_document(doc: &ResultDoc, fs: &tcplab_lab::topology::FlowSeries) -> Result<Value, String> {
    let s = &doc.scenario;
    let first_from = s.flow.first().and_then(|f| f.from.clone());
    let classes = ["BE", "BK", "CS5", "EF"];
    let (mut up, mut down, mut rr) = (0usize, 0usize, 0usize);
    let mut named: Vec<(String, &'static str, &[Option<f64>])> = Vec::new();
    let mut groups: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
    for (f, samples) in s.flow.iter().zip(&fs.flows) {
        let (name, group, units) = match f.kind {
            tcplab_lab::scenario::FlowKind::Rr => {
                rr += 1;
                (format!("Ping (ms) TCP rr {rr}"), "Ping (ms)", "ms")
            }
            _ => {
                let upload = f.from == first_from;
                let (n, dir) = if upload { (&mut up, "upload") } else { (&mut down, "download") };
                *n += 1;
                let class = classes.get(*n - 1).map_or_else(|| n.to_string(), |c| c.to_string());
                (format!("TCP {dir} {class}"), if upload { "TCP upload" } else { "TCP download" }, "Mbits/s")
            }
        };
        groups.entry(group).or_default().push(named.len());
        named.push((name, units, &samples.values));
    }
    let n = fs.axis.t_s.len();
    let mut results = Map::new();
    let mut raw = Map::new();
    let mut meta = Map::new();
    let mut put = |name: &str, units: &str, ys: Vec<Option<f64>>| {
        let r: Vec<Value> =
            fs.axis.t_s.iter().zip(&ys).filter_map(|(&t, v)| v.map(|v| json!({"t": t, "val": v}))).collect();
        raw.insert(name.into(), Value::Array(r));
        results.insert(name.into(), Value::Array(ys.iter().map(|v| json!(v)).collect()));
        meta.insert(name.into(), json!({"UNITS": units}));
    };
    let combine = |idx: &[usize], avg: bool| -> Vec<Option<f64>> {
        (0..n)
            .map(|k| {
                let vals: Vec<f64> = idx.iter().filter_map(|&i| named[i].2.get(k).copied().flatten()).collect();
                if vals.is_empty() {
                    return None;
                }
                let sum: f64 = vals.iter().sum();
                Some(if avg { sum / vals.len() as f64 } else { sum })
            })
            .collect()
    };
    for (name, units, ys) in &named {
        put(name, units, ys.to_vec());
    }
    let mut tcp = Vec::new();
    for (group, idx) in &groups {
        if group.starts_with("TCP") {
            put(&format!("{group} sum"), "Mbits/s", combine(idx, false));
            put(&format!("{group} avg"), "Mbits/s", combine(idx, true));
            tcp.extend(idx.iter().copied());
        } else {
            put(&format!("{group} avg"), "ms", combine(idx, true));
        }
    }
    if !tcp.is_empty() {
        put("TCP totals", "Mbits/s", combine(&tcp, false));
    }
    Ok(json!({
        "version": VERSION,
        "x_values": fs.axis.t_s,
        "results": results,
        "raw_values": raw,
        "metadata": {
            "NAME": "rrul",
            "TITLE": s.name,
            "NOTE": s.description,
            "TIME": EPOCH,
            "T0": EPOCH,
            "LENGTH": s.test.duration.as_secs_f64(),
            "TOTAL_LENGTH": fs.axis.t_s.last().copied().unwrap_or(0.0),
            "STEP_SIZE": fs.axis.interval_s,
            "DELAY": 0,
            "HOSTS": ["198.18.0.2"],
            "LOCAL_HOST": "tcplab",
            "DATA_FILENAME": format!("tcplab-{}.flent.gz", s.name),
            "FLENT_VERSION": format!("tcplab {}", doc.tcplab),
            "TCPLAB_SEED": doc.seed,
            "SERIES_META": meta,
            "TCPLAB_TEST": "flows",
            "TCPLAB_NOTE": "Ping (ms) series are TCP flows of 1-byte request/response transactions (their mean \
                            transaction time per interval); TCP upload/download BE, BK, CS5, EF carry no DSCP mark",
        },
    }))
}

/// Writes [`document`] gzipped to `path`, atomically. The gzip header has no time or name, so the same
/// result gives the same bytes.
pub fn write(doc: &ResultDoc, path: &Path) -> Result<(), String> {
    let flent = document(doc)?;
    let text = serde_json::to_vec(&flent).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("{}: cannot write: {e}", path.display());
    let mut out = tcplab_files::Output::create(path).map_err(io)?;
    let mut gz = flate2::GzBuilder::new().mtime(0).write(&mut out, flate2::Compression::default());
    gz.write_all(&text).map_err(io)?;
    gz.finish().map_err(io)?;
    out.commit().map_err(io)
}
