//! `--csv`: the files hold exactly the JSON's values.

use crate::common;

use common::*;
use serde_json::Value;

/// Every cell of a series CSV equals the JSON's value (`null` as an empty cell).
fn assert_table_equals(text: &str, columns: &Value, rows: &Value) {
    let (header, cells) = parse_csv(text);
    let cols: Vec<&str> = columns.as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(header, cols);
    let rows = rows.as_array().unwrap();
    assert_eq!(cells.len(), rows.len(), "a CSV row per JSON row");
    assert!(!rows.is_empty());
    for (c, r) in cells.iter().zip(rows) {
        for (cell, v) in c.iter().zip(r.as_array().unwrap()) {
            assert_eq!(num(cell), v.as_f64(), "cell {cell:?} vs {v}");
        }
    }
}

#[test]
fn logvars_give_one_csv_per_connection_end_equal_to_the_json() {
    let (doc, v) = run(&bulk(LOGVARS));
    let files = tcplab_report::csv::files(&doc);
    let lv = &v["points"][0]["logvars"];
    let ends = lv["ends"].as_array().unwrap();
    assert_eq!(ends.len(), 4);
    assert_eq!(files.len(), 1 + ends.len());
    for e in ends {
        let name = format!("logvars-{}-{}.csv", e["id"], e["side"].as_str().unwrap());
        let f = files.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{name} is written"));
        assert_table_equals(&f.text, &lv["columns"], &e["rows"]);
    }
    // CurSsthresh is null before the first loss: those cells are empty, and there are some.
    let f = files.iter().find(|f| f.name == "logvars-0-client.csv").unwrap();
    assert!(f.text.lines().nth(1).unwrap().split(',').nth(2).unwrap().is_empty());
}

#[test]
fn the_old_series_gives_series_csv_equal_to_the_json() {
    let (doc, v) = run(&bulk("\"100ms\""));
    let files = tcplab_report::csv::files(&doc);
    assert_eq!(files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["points.csv", "series.csv"]);
    let s = &v["points"][0]["series"];
    assert_table_equals(&files[1].text, &s["columns"], &s["rows"]);
}

#[test]
fn points_csv_holds_every_metric_flattened_with_the_json_values() {
    for text in [bulk("\"100ms\""), RR.to_string()] {
        let (doc, v) = run(&text);
        let (header, rows) = parse_csv(&tcplab_report::csv::points_csv(&doc));
        assert_eq!(rows.len(), 1);
        let mut flat = Vec::new();
        tcplab_report::csv::flatten("", &v["points"][0]["metrics"], &mut flat);
        let mut want = vec!["iterations".to_string()];
        want.extend(flat.iter().map(|(k, _)| k.clone()));
        assert_eq!(header, want);
        assert_eq!(num(&rows[0][0]), Some(1.0));
        for ((k, jv), cell) in flat.iter().zip(&rows[0][1..]) {
            assert_eq!(num(cell), jv.as_f64(), "{k}");
        }
        if text == RR {
            assert!(header.contains(&"latency_us.p99".to_string()));
            assert!(header.contains(&"transactions_per_s".to_string()));
        } else {
            assert!(header.contains(&"throughput_bps".to_string()));
        }
    }
}

#[test]
fn write_dir_writes_every_file_whole_and_nothing_else() {
    let (doc, _) = run(&bulk(LOGVARS));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("csv");
    let written = tcplab_report::csv::write_dir(&doc, &out).unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut want: Vec<String> = tcplab_report::csv::files(&doc).into_iter().map(|f| f.name).collect();
    want.sort();
    assert_eq!(names, want);
    for (p, f) in written.iter().zip(tcplab_report::csv::files(&doc)) {
        assert_eq!(std::fs::read_to_string(p).unwrap(), f.text);
    }
}

#[test]
fn the_latency_cdf_of_an_rr_point_is_cdf_csv_equal_to_the_json_and_not_a_points_column() {
    let (doc, v) = run(RR);
    let files = tcplab_report::csv::files(&doc);
    assert_eq!(files.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["points.csv", "cdf.csv"]);
    let steps = v["points"][0]["metrics"]["latency_us"]["cdf"].as_array().unwrap();
    let (header, rows) = parse_csv(&files[1].text);
    assert_eq!(header, ["latency_us", "fraction"]);
    assert_eq!(rows.len(), steps.len());
    for (r, s) in rows.iter().zip(steps) {
        assert_eq!((num(&r[0]), num(&r[1])), (s[0].as_f64(), s[1].as_f64()));
    }
    assert_eq!(num(&rows.last().unwrap()[1]), Some(1.0));
    let (header, _) = parse_csv(&files[0].text);
    assert!(!header.iter().any(|h| h.contains("cdf")), "{header:?}");
}
