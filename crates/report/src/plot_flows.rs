//! `--plot` of flows and queues (docs/outputs.md § `--plot DIR`): each flow's goodput over time and an rr
//! flow's transaction time (`points[].flow_series`), each flow's goodput against a swept key
//! (`points[].flows`), and the queue length and sojourn time of the sampled link directions over time
//! (`points[].links.queue_series`). Built as [`Chart`]s and drawn by the same code as every other plot.

use serde_json::Value;

use crate::names;
use crate::plot::{largest, rescale, scenario_name, Chart, Line, TIME_AXIS};

/// More lines than this on one chart are a tangle: the rest are left out with a note.
const MAX_LINES: usize = 10;

/// A flow's legend label: "flow 0: linux/bbr", "flow 2: rr".
fn flow_label(p: &Value, i: usize) -> String {
    let f = &p["flows"][i];
    match (f["kind"].as_str(), f["stack"].as_str(), f["congestion_control"].as_str()) {
        (Some("rr"), ..) => format!("flow {i}: rr"),
        (Some(kind), Some(stack), Some(cc)) => {
            let kind = if kind == "stream" { String::new() } else { format!("{kind}, ") };
            format!("flow {i}: {kind}{stack}/{cc}")
        }
        _ => format!("flow {i}"),
    }
}

/// The measurement window of a series object as a band, when some sample lies outside it.
fn band(series: &Value) -> Option<(f64, f64, String)> {
    let (start, end) = (series["measure_start_s"].as_f64()?, series["measure_end_s"].as_f64()?);
    let t = series["t_s"].as_array()?;
    t.iter().filter_map(Value::as_f64).any(|x| x < start || x > end).then(|| (start, end, "measurement window".into()))
}

/// `(t, value)` of the samples that have a value.
fn samples(t: &[Value], values: &Value) -> Vec<(f64, f64)> {
    let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
    t.iter().zip(values).filter_map(|(t, v)| Some((t.as_f64()?, v.as_f64()?))).collect()
}

/// Per point with `flow_series`: `flows-goodput` (stream and msg flows, and their sum) and
/// `flows-latency` (rr flows' mean transaction time per interval).
pub fn flow_series_charts(doc: &Value, p: &Value, notes: &mut Vec<String>) -> Vec<(String, Chart)> {
    let Some(fs) = p.get("flow_series") else { return Vec::new() };
    let t = fs["t_s"].as_array().map(Vec::as_slice).unwrap_or_default();
    let flows = fs["flows"].as_array().map(Vec::as_slice).unwrap_or_default();
    let name = scenario_name(doc);
    let mut out = Vec::new();
    for (metric, file) in [("goodput_mbps", "flows-goodput"), ("latency_ms", "flows-latency")] {
        let of: Vec<&Value> = flows.iter().filter(|f| f["metric"] == metric).collect();
        if of.is_empty() {
            continue;
        }
        if of.len() > MAX_LINES {
            notes.push(format!("{file}: {} of {} flows drawn", MAX_LINES, of.len()));
        }
        let mut lines: Vec<Line> = of
            .iter()
            .take(MAX_LINES)
            .map(|f| {
                let i = f["flow"].as_u64().unwrap_or(0) as usize;
                Line { label: flow_label(p, i), points: samples(t, &f["values"]), ..Line::default() }
            })
            .collect();
        let chart = if metric == "goodput_mbps" {
            if of.len() > 1 {
                let mut sum = vec![0.0; t.len()];
                for f in &of {
                    for (k, v) in f["values"].as_array().into_iter().flatten().enumerate() {
                        sum[k] += v.as_f64().unwrap_or(0.0);
                    }
                }
                let points = t.iter().zip(sum).filter_map(|(t, s)| Some((t.as_f64()?, s))).collect();
                lines.push(Line { label: "all stream flows".into(), points, ..Line::default() });
            }
            // Drawn from Mbit/s: the unit is chosen from the largest rate in bit/s.
            let shown = names::metric("throughput_bps", largest(&lines) * 1e6);
            rescale(&mut lines, shown.scale * 1e6);
            Chart {
                title: format!("{name}: goodput of each flow per interval"),
                x_label: TIME_AXIS.into(),
                y_label: format!("goodput ({})", shown.unit),
                lines,
                ..Chart::default()
            }
        } else {
            let shown = names::variable("SmoothedRTT", largest(&lines));
            rescale(&mut lines, shown.scale);
            Chart {
                title: format!("{name}: transaction time of each rr flow per interval"),
                x_label: TIME_AXIS.into(),
                y_label: format!("mean transaction time ({})", shown.unit),
                lines,
                ..Chart::default()
            }
        };
        out.push((file.to_string(), Chart { band: band(fs), ..chart }));
    }
    out
}

/// Per point with `links.queue_series`: `queue` (packets waiting) and `sojourn` (ms) of every sampled
/// direction that held a packet at some sample (an idle direction's flat zero, the ACKs' way of a bulk
/// transfer, is left out).
pub fn queue_charts(doc: &Value, p: &Value, notes: &mut Vec<String>) -> Vec<(String, Chart)> {
    let Some(qs) = p["links"].get("queue_series") else { return Vec::new() };
    let t = qs["t_s"].as_array().map(Vec::as_slice).unwrap_or_default();
    let dirs = qs["directions"].as_array().map(Vec::as_slice).unwrap_or_default();
    let busy: Vec<&Value> = dirs
        .iter()
        .filter(|d| d["backlog_packets"].as_array().is_some_and(|v| v.iter().any(|n| n.as_u64() > Some(0))))
        .collect();
    if busy.is_empty() {
        notes.push("queue, sojourn: not drawn: no sampled link direction ever held a packet".into());
        return Vec::new();
    }
    if busy.len() > MAX_LINES {
        notes.push(format!("queue, sojourn: {} of {} directions drawn", MAX_LINES, busy.len()));
    }
    let name = scenario_name(doc);
    let label = |d: &Value| d["direction"].as_str().unwrap_or("").to_string();
    let queue: Vec<Line> = busy
        .iter()
        .take(MAX_LINES)
        .map(|d| Line { label: label(d), points: samples(t, &d["backlog_packets"]), ..Line::default() })
        .collect();
    let mut sojourn: Vec<Line> = busy
        .iter()
        .take(MAX_LINES)
        .map(|d| Line { label: label(d), points: samples(t, &d["sojourn_ms"]), ..Line::default() })
        .collect();
    let shown = names::variable("SmoothedRTT", largest(&sojourn));
    rescale(&mut sojourn, shown.scale);
    let band = band(qs);
    vec![
        (
            "queue".into(),
            Chart {
                title: format!("{name}: queue length of each link direction"),
                x_label: TIME_AXIS.into(),
                y_label: "packets waiting".into(),
                lines: queue,
                band: band.clone(),
                ..Chart::default()
            },
        ),
        (
            "sojourn".into(),
            Chart {
                title: format!("{name}: sojourn time in each link direction's queue"),
                x_label: TIME_AXIS.into(),
                y_label: format!("sojourn time ({})", shown.unit),
                lines: sojourn,
                band,
                ..Chart::default()
            },
        ),
    ]
}

/// Across the points of a flows sweep: each flow's goodput against the first swept key (categories for
/// values that are not numbers, in order of appearance), one line per flow. With a second swept key,
/// one line per flow and value of it.
pub fn sweep_flows_chart(doc: &Value, notes: &mut Vec<String>) -> Option<(String, Chart)> {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    if points.len() < 2 || points.iter().any(|p| p["flows"].as_array().is_none_or(Vec::is_empty)) {
        return None;
    }
    let axes: Vec<String> = points[0]["params"].as_object()?.keys().cloned().collect();
    let x_axis = axes.first()?;
    let line_axis = axes.get(1);
    let xs: Vec<&Value> = points.iter().map(|p| &p["params"][x_axis]).collect();
    let numeric = xs.iter().all(|v| v.is_number());
    let mut cats: Vec<String> = Vec::new();
    for v in &xs {
        let l = names::value_text(v);
        if !numeric && !cats.contains(&l) {
            cats.push(l);
        }
    }
    let x_of = |v: &Value| {
        if numeric {
            v.as_f64().unwrap_or(f64::NAN)
        } else {
            cats.iter().position(|c| *c == names::value_text(v)).unwrap_or(0) as f64
        }
    };
    // One line per (flow, value of the second axis), in order of appearance.
    let mut keys: Vec<(usize, String)> = Vec::new();
    for p in points {
        let second = line_axis.map(|a| names::value_text(&p["params"][a])).unwrap_or_default();
        for i in 0..p["flows"].as_array().map_or(0, Vec::len) {
            if !keys.contains(&(i, second.clone())) {
                keys.push((i, second.clone()));
            }
        }
    }
    if keys.len() > MAX_LINES {
        notes.push(format!("sweep-flows-goodput: {} of {} lines drawn", MAX_LINES, keys.len()));
    }
    let mut lines = Vec::new();
    for (i, second) in keys.iter().take(MAX_LINES) {
        let mut pts = Vec::new();
        let mut label = String::new();
        for p in points {
            if line_axis.is_some_and(|a| names::value_text(&p["params"][a]) != *second) {
                continue;
            }
            let Some(g) = p["flows"][*i]["goodput_bps"].as_f64() else { continue };
            pts.push((x_of(&p["params"][x_axis]), g));
            if label.is_empty() {
                label = flow_label(p, *i);
                if let Some(a) = line_axis {
                    label = format!("{label}, {} = {second}", names::key_name(a));
                }
            }
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        lines.push(Line { label, points: pts, markers: true, ..Line::default() });
    }
    let shown = names::metric("throughput_bps", largest(&lines));
    rescale(&mut lines, shown.scale);
    let name = scenario_name(doc);
    Some((
        "sweep-flows-goodput".into(),
        Chart {
            title: format!("{name}: goodput of each flow against {}", names::key_name(x_axis)),
            x_label: names::key_label(x_axis),
            y_label: format!("goodput ({})", shown.unit),
            lines,
            x_categories: (!numeric).then_some(cats),
            ..Chart::default()
        },
    ))
}
