//! Small scenarios run for the output tests, and their results as JSON values.
#![allow(dead_code)]

use serde_json::Value;
use tcplab_lab::{load, run_scenario, ResultDoc, Source};

/// A 2 s bulk transfer over a lossy 10 Mbit/s path, 2 connections, with `series` as given (TOML).
pub fn bulk(series: &str) -> String {
    format!(
        "name = \"bulk-test\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
         loss = {{ model = \"bernoulli\", p = 0.01 }}\n[test]\nkind = \"tcp_stream\"\nduration = \"2s\"\n\
         parallel = 2\nseries = {series}\n"
    )
}

pub const LOGVARS: &str =
    "{ interval = \"50ms\", vars = [\"CurCwnd\", \"CurSsthresh\", \"SmoothedRTT\", \"SendStall\"] }";

pub const RR: &str = "name = \"rr-test\"\n[path.up]\nrate = \"2mbit\"\ndelay = \"15ms\"\n[path.down]\nrate = \"8mbit\"\n\
    delay = \"15ms\"\n[test]\nkind = \"tcp_rr\"\nduration = \"2s\"\nrequest = \"32B\"\nresponse = \"1000B\"\nburst = 4\n";

pub fn run(text: &str) -> (ResultDoc, Value) {
    let s = load(&Source { name: "test.toml", text }, &[]).expect("the test scenario loads");
    let doc = run_scenario(&s, 1).expect("the test scenario runs");
    let v = serde_json::to_value(&doc).unwrap();
    (doc, v)
}

/// Parses CSV without quoted cells (what numeric tables are): header and rows.
pub fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    assert!(text.ends_with('\n'), "the file ends with a newline");
    let mut lines = text.lines();
    let header = lines.next().expect("a header").split(',').map(String::from).collect::<Vec<_>>();
    let rows = lines.map(|l| l.split(',').map(String::from).collect::<Vec<_>>()).collect::<Vec<_>>();
    for r in &rows {
        assert_eq!(r.len(), header.len(), "every row has a cell per column");
    }
    (header, rows)
}

/// The number a CSV cell holds, `None` when empty.
pub fn num(cell: &str) -> Option<f64> {
    (!cell.is_empty()).then(|| cell.parse::<f64>().unwrap_or_else(|_| panic!("{cell:?} is a number")))
}

/// Frames Wireshark finds malformed or with a bad checksum.
pub const BAD: &str = "_ws.malformed || _ws.expert.group == \"Malformed\" || _ws.expert.group == \"Checksum\" \
    || tcp.checksum.status == 0 || ip.checksum.status == 0";

/// tshark's output lines for `args` on `file`, checksum validation on.
pub fn tshark(file: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = std::process::Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-r"])
        .arg(file)
        .args(args)
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// How many frames of `file` match the display filter.
pub fn count(file: &std::path::Path, filter: &str) -> usize {
    tshark(file, &["-Y", filter, "-T", "fields", "-e", "frame.number"]).len()
}
