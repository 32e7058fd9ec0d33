//! `--flent`: the file is flent's version-4 format, its series are the result's, and flent itself
//! (`flent -i FILE -f summary`, from `pip install flent`) loads it. Without `flent` on the PATH the flent
//! test is reported as ignored, with the reason, except under `CI=true`, where it fails (docs/testing.md).

use crate::common;

use std::io::Read;
use std::process::Command;

use common::*;
use tcplab_testkit::{need_tool, Outcome};

fn write(v: &tcplab_lab::ResultDoc, dir: &std::path::Path) -> (std::path::PathBuf, serde_json::Value) {
    let path = dir.join("run.flent.gz");
    tcplab_report::flent::write(v, &path).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
    (path, serde_json::from_str(&text).unwrap())
}

fn the_file_is_version_4_with_the_results_series_and_the_upload_total() {
    let (doc, v) = run(&bulk(LOGVARS));
    let dir = tempfile::tempdir().unwrap();
    let (_, f) = write(&doc, dir.path());
    assert_eq!(f["version"], 4);
    assert_eq!(f["metadata"]["NAME"], "tcp_1up");
    let n = f["x_values"].as_array().unwrap().len();
    let results = f["results"].as_object().unwrap();
    // 4 ends × (4 variables + delivered_bytes + throughput_bps), and flent's "TCP upload".
    assert_eq!(results.len(), 4 * 6 + 1);
    for (name, ys) in results {
        assert_eq!(ys.as_array().unwrap().len(), n, "{name}: a value (or null) per x");
    }
    // TCP upload: the receiving ends' throughput summed, Mbit/s.
    let lv = &v["points"][0]["logvars"];
    let col = lv["columns"].as_array().unwrap().iter().position(|c| c == "throughput_bps").unwrap();
    let want: f64 = lv["ends"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["side"] == "server")
        .flat_map(|e| e["rows"].as_array().unwrap().iter().map(|r| r[col].as_f64().unwrap()))
        .sum();
    let got: f64 = f["raw_values"]["TCP upload"].as_array().unwrap().iter().map(|r| r["val"].as_f64().unwrap()).sum();
    assert!((got * 1e6 - want).abs() < 1e-3 * want, "{got} Mbit/s vs {want} bit/s");
    assert!(f["raw_values"]["TCP upload"][5]["tcp_rtt"].as_f64().unwrap() > 0.0);
}

fn a_result_without_series_has_no_flent_file() {
    let (doc, _) = run(RR);
    let dir = tempfile::tempdir().unwrap();
    let err = tcplab_report::flent::write(&doc, &dir.path().join("x.flent.gz")).unwrap_err();
    assert!(err.contains("test.series"), "{err}");
    assert!(!dir.path().join("x.flent.gz").exists());
}

fn flent_loads_it_and_summarises_every_series() -> Outcome {
    need_tool("flent", "pip install flent")?;
    let (doc, _) = run(&bulk(LOGVARS));
    let dir = tempfile::tempdir().unwrap();
    let (path, f) = write(&doc, dir.path());
    let out = Command::new("flent").arg("-i").arg(&path).args(["-f", "summary"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "flent failed: {}{stdout}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains("Traceback") && !String::from_utf8_lossy(&out.stderr).contains("ERROR"));
    assert!(stdout.contains("Summary of tcp_1up test run"), "{stdout}");
    let n = f["raw_values"]["TCP upload"].as_array().unwrap().len();
    let line = stdout.lines().find(|l| l.trim_start().starts_with("TCP upload")).expect("TCP upload summarised");
    assert!(line.contains("Mbits/s") && line.trim_end().ends_with(&n.to_string()), "{line}");
    for name in f["results"].as_object().unwrap().keys() {
        assert!(stdout.contains(name.as_str()), "{name} summarised");
    }
    Ok(())
}

tcplab_testkit::tests!(
    the_file_is_version_4_with_the_results_series_and_the_upload_total,
    a_result_without_series_has_no_flent_file,
    flent_loads_it_and_summarises_every_series,
);
