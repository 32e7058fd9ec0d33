//! `--csv DIR`: the points and the time series of a result as CSV files (docs/outputs.md).
//!
//! Rendered from the typed result document, so that a saved result (read back through the same model)
//! renders the same as a fresh run. Numbers are written as the JSON writes them; a figure JSON writes as
//! `null` (NaN, an infinite gauge) is an empty cell.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tcplab_lab::result::{Metrics, ResultDoc};

/// One CSV file: its name in the directory and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvFile {
    pub name: String,
    pub text: String,
}

/// Key-value pairs in order.
type Flat = Vec<(String, Value)>;

/// Flattens a JSON object into `(dotted.key, value)` pairs, depth first, in the object's order. Arrays
/// (the latency CDF) are not cells: they have files of their own.
pub fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        Value::Array(_) => {}
        other => out.push((prefix.to_string(), other.clone())),
    }
}

/// The latency distribution of a point's metrics in JSON form, `latency_us.cdf` (or any `…_us.cdf` of a
/// test whose metrics carry latency statistics): the metric's name and its steps. (The plots read the
/// JSON form; [`cdfs`] is the typed one.)
pub fn latency_cdfs(metrics: &Value) -> Vec<(&str, &[Value])> {
    let Some(m) = metrics.as_object() else { return Vec::new() };
    m.iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.get("cdf")?.as_array()?.as_slice())))
        .filter(|(_, steps)| !steps.is_empty())
        .collect()
}

/// The latency distributions of a point's metrics, in the order the document has them: the metric's
/// name and its `(value_us, fraction)` steps.
pub fn cdfs(m: &Metrics) -> Vec<(&'static str, &[(f64, f64)])> {
    let all: Vec<(&'static str, &[(f64, f64)])> = match m {
        Metrics::Rr(r) => vec![("latency_us", &r.latency_us.cdf)],
        Metrics::Msg(r) => vec![("time_per_message_us", &r.time_per_message_us.cdf), ("latency_us", &r.latency_us.cdf)],
        Metrics::Stream(_) | Metrics::Own(_) => Vec::new(),
    };
    all.into_iter().filter(|(_, s)| !s.is_empty()).collect()
}

/// A cell: strings as they are, numbers as JSON spells them, `null` empty, quoted per RFC 4180 when needed.
fn cell(v: &Value) -> String {
    let s = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// A figure as JSON spells it; empty when JSON cannot (NaN, infinite).
fn num(v: f64) -> String {
    serde_json::Number::from_f64(v).map_or_else(String::new, |n| n.to_string())
}

fn line(cells: impl IntoIterator<Item = String>) -> String {
    let mut l = cells.into_iter().collect::<Vec<_>>().join(",");
    l.push('\n');
    l
}

/// Appends `keys` to `cols`, keeping the order of first appearance.
fn union(cols: &mut Vec<String>, keys: impl IntoIterator<Item = String>) {
    for k in keys {
        if !cols.contains(&k) {
            cols.push(k);
        }
    }
}

/// `points.csv`: one row per point; the swept parameters first (`params`, the union over the points in
/// order of appearance), then `iterations`, then every metric flattened (`latency_us.p99`). A column a
/// point lacks is empty in its row.
pub fn points_csv(doc: &ResultDoc) -> String {
    let mut params = Vec::new();
    let mut metrics = Vec::new();
    let rows: Vec<(Flat, Flat)> = doc
        .points
        .iter()
        .map(|p| {
            let pa: Flat = p.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let mut me = Vec::new();
            flatten("", &serde_json::to_value(&p.metrics).unwrap_or(Value::Null), &mut me);
            union(&mut params, pa.iter().map(|(k, _)| k.clone()));
            union(&mut metrics, me.iter().map(|(k, _)| k.clone()));
            (pa, me)
        })
        .collect();
    let mut out = line(params.iter().chain(std::iter::once(&"iterations".to_string())).chain(&metrics).cloned());
    for ((pa, me), p) in rows.iter().zip(&doc.points) {
        let get = |set: &[(String, Value)], k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| cell(v));
        let mut cells: Vec<String> = params.iter().map(|k| get(pa, k).unwrap_or_default()).collect();
        cells.push(p.iterations.to_string());
        cells.extend(metrics.iter().map(|k| get(me, k).unwrap_or_default()));
        out += &line(cells);
    }
    out
}

/// `flows.csv` (a `[dumbbell]` result): one row per flow of every point, the point's swept parameters
/// first, then the flow's figures flattened (`latency_us.p99`; empty for a stream flow) and the point's
/// `aggregate` (`jain_index`, the same on every row of the point).
pub fn flows_csv(doc: &ResultDoc) -> String {
    let mut params = Vec::new();
    let mut cols = Vec::new();
    let mut rows: Vec<(Flat, Flat)> = Vec::new();
    for p in &doc.points {
        let pa: Flat = p.params.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        union(&mut params, pa.iter().map(|(k, _)| k.clone()));
        let mut agg = Vec::new();
        flatten("aggregate", &serde_json::to_value(&p.aggregate).unwrap_or(Value::Null), &mut agg);
        for f in &p.flows {
            let mut fl = Vec::new();
            flatten("", &serde_json::to_value(f).unwrap_or(Value::Null), &mut fl);
            fl.extend(agg.iter().cloned());
            union(&mut cols, fl.iter().map(|(k, _)| k.clone()));
            rows.push((pa.clone(), fl));
        }
    }
    let mut out = line(params.iter().chain(&cols).cloned());
    for (pa, fl) in &rows {
        let get = |set: &[(String, Value)], k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| cell(v));
        let mut cells: Vec<String> = params.iter().map(|k| get(pa, k).unwrap_or_default()).collect();
        cells.extend(cols.iter().map(|k| get(fl, k).unwrap_or_default()));
        out += &line(cells);
    }
    out
}

/// A table of `columns` and `rows` (a `series` or one `logvars` end) as CSV.
fn table_csv<S: AsRef<str>>(columns: &[S], rows: &[Vec<f64>]) -> String {
    let mut out = line(columns.iter().map(|c| cell(&Value::String(c.as_ref().to_string()))));
    for r in rows {
        out += &line(r.iter().map(|v| num(*v)));
    }
    out
}

/// Every CSV of the result: `points.csv`, `flows.csv` with a `[dumbbell]`, then per point `series.csv` (the `series` form) or
/// `logvars-ID-SIDE.csv` per connection end (the `logvars` form), and `cdf.csv` (the latency
/// distribution, `latency_us,fraction`; another latency metric `X_us` gives `cdf-X_us.csv`). With several
/// points, the files of point `i` are prefixed `pI-`.
pub fn files(doc: &ResultDoc) -> Vec<CsvFile> {
    let mut out = vec![CsvFile { name: "points.csv".into(), text: points_csv(doc) }];
    if doc.points.iter().any(|p| !p.flows.is_empty()) {
        out.push(CsvFile { name: "flows.csv".into(), text: flows_csv(doc) });
    }
    let several = doc.points.len() > 1;
    for (i, p) in doc.points.iter().enumerate() {
        let prefix = if several { format!("p{i}-") } else { String::new() };
        if let Some(s) = &p.series {
            out.push(CsvFile { name: format!("{prefix}series.csv"), text: table_csv(&s.columns, &s.rows) });
        }
        for (metric, steps) in cdfs(&p.metrics) {
            let name = if metric == "latency_us" { "cdf.csv".to_string() } else { format!("cdf-{metric}.csv") };
            let mut text = line([metric.to_string(), "fraction".to_string()]);
            for (v, f) in steps {
                text += &line([num(*v), num(*f)]);
            }
            out.push(CsvFile { name: format!("{prefix}{name}"), text });
        }
        if let Some(lv) = &p.logvars {
            for e in &lv.ends {
                out.push(CsvFile {
                    name: format!("{prefix}logvars-{}-{}.csv", e.id, e.side),
                    text: table_csv(&lv.columns, &e.rows),
                });
            }
        }
    }
    out
}

/// Writes [`files`] into `dir` (created if missing), each file atomically; returns the paths written.
pub fn write_dir(doc: &ResultDoc, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for f in files(doc) {
        let path = dir.join(&f.name);
        crate::write_atomic(&path.to_string_lossy(), &f.text)?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_are_quoted_as_rfc_4180_says() {
        assert_eq!(cell(&json!("a,b")), "\"a,b\"");
        assert_eq!(cell(&json!("say \"hi\"")), "\"say \"\"hi\"\"\"");
        assert_eq!(cell(&json!(null)), "");
        assert_eq!(cell(&json!(2.0)), "2.0");
        assert_eq!(cell(&json!(true)), "true");
    }

    #[test]
    fn figures_are_spelt_as_json_spells_them_and_nan_is_empty() {
        assert_eq!(num(2.0), "2.0");
        assert_eq!(num(0.1), "0.1");
        assert_eq!(num(f64::NAN), "");
        assert_eq!(num(f64::INFINITY), "");
    }
}
