//! `--csv DIR`: the points and the time series of a result as CSV files (docs/outputs.md).
//!
//! Rendered from the JSON form of the result (`serde_json::Value`), so that a saved result renders the
//! same as a fresh run. Numbers are written as the JSON writes them; `null` is an empty cell.

use std::path::{Path, PathBuf};

use serde_json::Value;

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

/// The latency distribution of a point's metrics, `latency_us.cdf` (or any `…_us.cdf` of a test whose
/// metrics carry latency statistics): the metric's name and its steps.
pub fn latency_cdfs(metrics: &Value) -> Vec<(&str, &[Value])> {
    let Some(m) = metrics.as_object() else { return Vec::new() };
    m.iter()
        .filter_map(|(k, v)| Some((k.as_str(), v.get("cdf")?.as_array()?.as_slice())))
        .filter(|(_, steps)| !steps.is_empty())
        .collect()
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
pub fn points_csv(doc: &Value) -> String {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut params = Vec::new();
    let mut metrics = Vec::new();
    let rows: Vec<(Flat, Flat)> = points
        .iter()
        .map(|p| {
            let mut pa = Vec::new();
            if let Some(m) = p["params"].as_object() {
                pa = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            }
            let mut me = Vec::new();
            flatten("", &p["metrics"], &mut me);
            union(&mut params, pa.iter().map(|(k, _)| k.clone()));
            union(&mut metrics, me.iter().map(|(k, _)| k.clone()));
            (pa, me)
        })
        .collect();
    let mut out = line(params.iter().chain(std::iter::once(&"iterations".to_string())).chain(&metrics).cloned());
    for ((pa, me), p) in rows.iter().zip(points) {
        let get = |set: &[(String, Value)], k: &str| set.iter().find(|(n, _)| n == k).map(|(_, v)| cell(v));
        let mut cells: Vec<String> = params.iter().map(|k| get(pa, k).unwrap_or_default()).collect();
        cells.push(cell(&p["iterations"]));
        cells.extend(metrics.iter().map(|k| get(me, k).unwrap_or_default()));
        out += &line(cells);
    }
    out
}

/// A table of `columns` and `rows` (a `series` or one `logvars` end) as CSV.
fn table_csv(columns: &Value, rows: &Value) -> String {
    let header = columns.as_array().map(Vec::as_slice).unwrap_or_default();
    let mut out = line(header.iter().map(cell));
    for r in rows.as_array().map(Vec::as_slice).unwrap_or_default() {
        out += &line(r.as_array().map(Vec::as_slice).unwrap_or_default().iter().map(cell));
    }
    out
}

/// Every CSV of the result: `points.csv`, then per point `series.csv` (the `series` form) or
/// `logvars-ID-SIDE.csv` per connection end (the `logvars` form), and `cdf.csv` (the latency
/// distribution, `latency_us,fraction`; another latency metric `X_us` gives `cdf-X_us.csv`). With several
/// points, the files of point `i` are prefixed `pI-`.
pub fn files(doc: &Value) -> Vec<CsvFile> {
    let mut out = vec![CsvFile { name: "points.csv".into(), text: points_csv(doc) }];
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (i, p) in points.iter().enumerate() {
        let prefix = if points.len() > 1 { format!("p{i}-") } else { String::new() };
        if let Some(s) = p.get("series") {
            out.push(CsvFile { name: format!("{prefix}series.csv"), text: table_csv(&s["columns"], &s["rows"]) });
        }
        for (metric, steps) in latency_cdfs(&p["metrics"]) {
            let name = if metric == "latency_us" { "cdf.csv".to_string() } else { format!("cdf-{metric}.csv") };
            let mut text = line([metric.to_string(), "fraction".to_string()]);
            for s in steps {
                text += &line(s.as_array().map(Vec::as_slice).unwrap_or_default().iter().map(cell));
            }
            out.push(CsvFile { name: format!("{prefix}{name}"), text });
        }
        if let Some(lv) = p.get("logvars") {
            for e in lv["ends"].as_array().map(Vec::as_slice).unwrap_or_default() {
                let side = e["side"].as_str().unwrap_or("end");
                out.push(CsvFile {
                    name: format!("{prefix}logvars-{}-{side}.csv", e["id"]),
                    text: table_csv(&lv["columns"], &e["rows"]),
                });
            }
        }
    }
    out
}

/// Writes [`files`] into `dir` (created if missing), each file atomically; returns the paths written.
pub fn write_dir(doc: &Value, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
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
    fn points_take_the_union_of_params_and_metrics_in_order() {
        let doc = json!({"points": [
            {"params": {"test.burst": 0}, "iterations": 1, "metrics": {"a": 1, "l": {"p50": 2.5}}},
            {"params": {"test.burst": 4, "x": "a,b"}, "iterations": 3, "metrics": {"a": 2, "b": null}}
        ]});
        assert_eq!(points_csv(&doc), "test.burst,x,iterations,a,l.p50,b\n0,,1,1,2.5,\n4,\"a,b\",3,2,,\n");
    }
}
