//! Published and measured reference figures beside the lab's (`[[published]]`, docs/scenario.md
//! § Published figures): a series of figures from a report, in the report's own units, matched to the
//! points of a run and compared metric by metric.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `[[published]]` table: figures of one metric from one source, against a swept key (`x` and
/// `x_values`) or a single figure for every point, at the points whose keys equal `where`'s values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishedSeries {
    /// Where the figures come from, in words (`"the 2002 DSL TCP_RR report"`).
    pub source: String,
    /// The year of the source, shown beside it on plots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub year: Option<u32>,
    /// What distinguishes this series from the source's others (`"TCP_NODELAY"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The lab's metric the figures are compared with: what `[[plot]] y` takes (`"transactions_per_s"`,
    /// `"service_demand_us_per_kb.local"`, `"client.SendStall"`).
    pub metric: String,
    /// The unit the source gives its figures in (`"Mbit/s"`, `"trans/s"`, `"us/KB"`, `"%"`); converted to
    /// the metric's own unit for comparison ([`units_of`]).
    pub unit: String,
    /// A scenario key path the figures follow (`"test.burst"`); absent: one figure for every point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// The values of `x` the figures belong to, as `[sweep]` writes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x_values: Vec<Value>,
    /// The figures, in `unit`: one per `x_values` entry, or exactly one without `x`.
    pub y_values: Vec<f64>,
    /// Other scenario keys and the values they must have at a point for the figures to apply
    /// (`{ "client.tcp.nodelay" = true }`).
    #[serde(default, rename = "where", skip_serializing_if = "BTreeMap::is_empty")]
    pub at: BTreeMap<String, Value>,
    /// A remark shown with the series (how a figure was read off a graph, what the source's setup was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl PublishedSeries {
    /// The series' name on a plot's legend and in tables: source, year and label.
    pub fn name(&self) -> String {
        let mut s = self.source.clone();
        // A source that names its year already ("the 2003 txqueuelen report") is not followed by it again.
        if let Some(y) = self.year.filter(|y| !self.source.contains(&y.to_string())) {
            s += &format!(" ({y})");
        }
        if let Some(l) = &self.label {
            s += &format!(": {l}");
        }
        s
    }
}

/// One published figure beside the lab's at a point (`points[].published`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The index of the series in the scenario's `published`.
    pub series: usize,
    /// The metric compared (the series' `metric`).
    pub metric: String,
    /// The published figure as the source gives it, in `unit`.
    pub as_published: f64,
    pub unit: String,
    /// The published figure in the metric's own unit (as `points[].metrics` holds it).
    pub published: f64,
    /// The lab's figure, in the metric's own unit.
    pub lab: f64,
    /// `(lab − published) / published`; absent when the published figure is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
}

/// The prefix of a metric's standard deviation between a repeated point's iterations
/// (`points[].iteration_stddev`): `iteration_stddev.time_per_message_us.mean` is how much the mean time
/// per message differs from run to run, in the metric's own unit.
pub const BETWEEN_ITERATIONS: &str = "iteration_stddev.";

/// The unit a metric is held in (`points[].metrics`, or an RFC 4898 variable's unit for `client.VAR`).
pub fn metric_unit(metric: &str) -> &'static str {
    let metric = metric.strip_prefix(BETWEEN_ITERATIONS).unwrap_or(metric);
    if let Some((_, var)) = metric.split_once('.').filter(|(side, _)| *side == "client" || *side == "server") {
        let var = var.strip_suffix(".mean").or_else(|| var.strip_suffix(".stddev")).unwrap_or(var);
        return crate::columns::series_unit(var);
    }
    if metric.ends_with("_bps") {
        "bit/s"
    } else if metric.starts_with("cpu_util_percent") {
        "%"
    } else if metric.starts_with("service_demand_us_per_kb") {
        "us/KB"
    } else if metric.starts_with("service_demand_us_per_tr") {
        "us/transaction"
    } else if metric.contains("_us") {
        "us"
    } else if metric.ends_with("_per_s") {
        "1/s"
    } else if metric.ends_with("_s") {
        "s"
    } else if metric.ends_with("_bytes") {
        "bytes"
    } else {
        "count"
    }
}

/// The units accepted for figures of a metric held in `unit`, each with its factor to `unit`.
pub fn units_of(unit: &str) -> &'static [(&'static str, f64)] {
    match unit {
        "bit/s" => &[("bit/s", 1.0), ("kbit/s", 1e3), ("Mbit/s", 1e6), ("10^6bits/s", 1e6), ("Gbit/s", 1e9)],
        "1/s" => &[("1/s", 1.0), ("trans/s", 1.0), ("transactions/s", 1.0), ("messages/s", 1.0)],
        "us" => &[("ns", 1e-3), ("us", 1.0), ("µs", 1.0), ("ms", 1e3), ("s", 1e6)],
        "ms" => &[("us", 1e-3), ("µs", 1e-3), ("ms", 1.0), ("s", 1e3)],
        "s" => &[("ms", 1e-3), ("s", 1.0)],
        "%" => &[("%", 1.0)],
        "us/KB" => &[("us/KB", 1.0), ("µs/KB", 1.0)],
        "us/transaction" => &[("us/Tr", 1.0), ("us/transaction", 1.0), ("µs/transaction", 1.0)],
        "bytes" => &[("bytes", 1.0), ("B", 1.0), ("KiB", 1024.0), ("KB", 1000.0), ("MB", 1e6)],
        _ => &[("count", 1.0), ("segments", 1.0), ("packets", 1.0)],
    }
}

/// The factor from `unit` (one of [`units_of`] for the metric's unit) to `metric`'s own unit; 1 for a
/// unit not in the table (validation refuses those).
pub fn factor(metric: &str, unit: &str) -> f64 {
    units_of(metric_unit(metric)).iter().find(|(u, _)| *u == unit).map_or(1.0, |(_, f)| *f)
}

/// The value at a dotted path (`test.burst`, `latency_us.p99`) of a JSON object.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// A point's value of `metric` (its JSON form): a dotted path in `metrics` (`latency_us.p99`), or
/// `client.VAR` / `server.VAR`, an RFC 4898 variable summed over that side's connection ends
/// (`connections[].estats`), or `client.VAR.mean` / `.stddev` over that side's samples (`logvars`), or
/// [`BETWEEN_ITERATIONS`] and a path in `metrics`, from `iteration_stddev` (a repeated point only).
pub fn point_value(p: &Value, metric: &str) -> Option<f64> {
    if let Some(between) = metric.strip_prefix(BETWEEN_ITERATIONS) {
        return at(&p["iteration_stddev"], between).and_then(Value::as_f64);
    }
    if let Some((side, var)) = metric.split_once('.').filter(|(side, _)| *side == "client" || *side == "server") {
        if let Some((var, stat @ ("mean" | "stddev"))) = var.rsplit_once('.') {
            return series_statistic(p, side, var, stat);
        }
        let ends = p["connections"].as_array()?.iter().filter(|c| c["side"] == side);
        let values: Vec<f64> = ends.filter_map(|c| c["estats"][var].as_f64()).collect();
        return (!values.is_empty()).then(|| values.iter().sum());
    }
    at(&p["metrics"], metric).and_then(Value::as_f64)
}

/// The mean or (population) standard deviation of the samples `points[].logvars` holds of `var` at `side`'s
/// ends, within the measurement window.
fn series_statistic(p: &Value, side: &str, var: &str, stat: &str) -> Option<f64> {
    let lv = &p["logvars"];
    let col = lv["columns"].as_array()?.iter().position(|c| c == var)?;
    let (start, end) = (lv["measure_start_s"].as_f64()?, lv["measure_end_s"].as_f64()?);
    let values: Vec<f64> = lv["ends"]
        .as_array()?
        .iter()
        .filter(|e| e["side"] == side)
        .flat_map(|e| e["rows"].as_array().into_iter().flatten())
        .filter(|r| r[0].as_f64().is_some_and(|t| t >= start && t <= end))
        .filter_map(|r| r[col].as_f64())
        .collect();
    crate::stats::series_stat(&values, stat)
}

/// Whether a scenario's value equals a value a `[[published]]` table names: numbers by value (`4` and
/// `4.0`), anything else as written.
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The figures of `published` (a resolved scenario's `[[published]]`) that apply to a point run from that
/// scenario (`sv`, its JSON form), beside the point's own (`point`, its JSON form). A figure whose metric
/// the point lacks is left out. The scenario comes as JSON so that this module stays below it.
pub fn compare(published: &[PublishedSeries], sv: &Value, point: &Value) -> Vec<Comparison> {
    let mut out = Vec::new();
    // A key's value at the point: as the sweep wrote it (`params`), or as the resolved scenario has it.
    let values = |key: &str| [point["params"].get(key), at(sv, key)].into_iter().flatten();
    for (i, series) in published.iter().enumerate() {
        if !series.at.iter().all(|(k, v)| values(k).any(|have| same_value(have, v))) {
            continue;
        }
        let figure = match &series.x {
            None => series.y_values.first().copied(),
            Some(x) => series
                .x_values
                .iter()
                .position(|v| values(x).any(|have| same_value(have, v)))
                .map(|k| series.y_values[k]),
        };
        let (Some(figure), Some(lab)) = (figure, point_value(point, &series.metric)) else { continue };
        let published = figure * factor(&series.metric, &series.unit);
        out.push(Comparison {
            series: i,
            metric: series.metric.clone(),
            as_published: figure,
            unit: series.unit.clone(),
            published,
            lab,
            difference: (published != 0.0).then(|| (lab - published) / published),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn units_convert_to_the_metrics_own() {
        assert_eq!(metric_unit("throughput_bps"), "bit/s");
        assert_eq!(metric_unit("service_demand_us_per_kb.local"), "us/KB");
        assert_eq!(metric_unit("time_per_message_us.mean"), "us");
        assert_eq!(metric_unit("client.SendStall"), "count");
        assert_eq!(metric_unit("client.SmoothedRTT"), "ms");
        assert_eq!(metric_unit("client.CurCwnd.mean"), "bytes");
        let mbit = units_of("bit/s").iter().find(|u| u.0 == "Mbit/s").unwrap().1;
        assert_eq!(478.13 * mbit, 478.13e6);
        assert_eq!(units_of("us").iter().find(|u| u.0 == "ms").unwrap().1, 1e3);
    }

    #[test]
    fn values_compare_as_numbers_or_as_written() {
        assert!(same_value(&json!(4), &json!(4.0)));
        assert!(!same_value(&json!(4), &json!(5)));
        assert!(same_value(&json!("linux-2.2"), &json!("linux-2.2")));
        assert!(!same_value(&json!(true), &json!(1)));
    }

    #[test]
    fn a_point_value_reads_metrics_and_counters() {
        let p = json!({
            "metrics": { "throughput_bps": 9.4e6, "latency_us": { "p99": 120.0 } },
            "connections": [
                { "side": "client", "estats": { "SendStall": 3 } },
                { "side": "client", "estats": { "SendStall": 4 } },
                { "side": "server", "estats": { "SendStall": 100 } }
            ]
        });
        assert_eq!(point_value(&p, "throughput_bps"), Some(9.4e6));
        assert_eq!(point_value(&p, "latency_us.p99"), Some(120.0));
        assert_eq!(point_value(&p, "client.SendStall"), Some(7.0));
        assert_eq!(point_value(&p, "server.Nothing"), None);
    }
}
