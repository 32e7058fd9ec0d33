//! The printed tables and the documents `report` and `merge` read, through the binary (#22 items 9, 12,
//! 13 and the run header of 16): damaged documents are refused naming the field; every sweep table leads
//! with the point's values, its columns stay aligned with latencies of seconds; classic/txqueuelen's table
//! shows the send stalls; the banner shows what shapes the path; `report` prints what the run printed.

use assert_cmd::Command;
use serde_json::{json, Value};

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

fn run_table(args: &[&str]) -> String {
    let out = tcplab().arg("run").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `report FILE` on `doc`: exit status and stderr.
fn report(doc: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.json");
    std::fs::write(&f, doc).unwrap();
    let out = tcplab().args(["report", f.to_str().unwrap()]).output().unwrap();
    assert!(out.stdout.is_empty(), "nothing printed for a refused document: {}", String::from_utf8_lossy(&out.stdout));
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The data rows of a table: the lines between the blank line under the header and the next blank line.
fn rows(table: &str) -> Vec<&str> {
    table.lines().skip_while(|l| !l.is_empty()).skip(1).take_while(|l| !l.is_empty()).collect()
}

/// Where each cell of a row starts (cells are two or more spaces apart).
fn starts(row: &str) -> Vec<usize> {
    let b = row.as_bytes();
    (0..b.len()).filter(|&i| b[i] != b' ' && (i == 0 || (i >= 2 && b[i - 1] == b' ' && b[i - 2] == b' '))).collect()
}

/// Every row's cells start where the first row's do, and no two cells touch.
fn assert_aligned(table: &str) {
    let rows = rows(table);
    assert!(rows.len() > 1, "{table}");
    let first = starts(rows[0]);
    for r in &rows {
        assert_eq!(starts(r), first, "misaligned row {r:?} in\n{table}");
        assert_eq!(r.split_whitespace().count(), first.len(), "cells run together in {r:?}:\n{table}");
    }
}

#[test]
fn report_refuses_documents_that_do_not_fit_naming_the_field() {
    let (code, err) = report(r#"{"schema":"tcplab.result/1"}"#);
    assert_eq!(code, Some(2));
    assert!(err.contains("r.json") && err.contains("missing field `tcplab`"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("bulk.json");
    tcplab().args(["run", "bulk-10m", "--set", "test.duration=\"1s\"", "--json"]).arg(&saved).assert().success();
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    let mut bad = good.clone();
    bad["points"][0]["metrics"]["throughput_bps"] = json!("9.4 Mbit/s");
    let (code, err) = report(&bad.to_string());
    assert_eq!(code, Some(2));
    assert!(
        err.contains("points[0].metrics: throughput_bps: invalid type: string \"9.4 Mbit/s\", expected f64"),
        "{err}"
    );
    let mut bad = good.clone();
    bad["points"][0]["metrics"] = json!({"transactions_per_s": 1.0});
    let (code, err) = report(&bad.to_string());
    assert_eq!(code, Some(2));
    assert!(err.contains("points[0].metrics: missing field `transactions`"), "{err}");
}

const SWEEP: &str = "name = \"sw\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_rr\"\n\
    duration = \"1s\"\n[sweep]\n\"test.burst\" = \"0..=3\"\n";

#[test]
fn merge_refuses_a_shard_whose_points_were_replaced_by_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let scn = dir.path().join("sw.toml");
    std::fs::write(&scn, SWEEP).unwrap();
    let path = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    for i in 0..2 {
        tcplab()
            .args(["run", scn.to_str().unwrap(), "--shard", &format!("{i}/2"), "--json", &path(&format!("s{i}.json"))])
            .assert()
            .success();
    }
    let mut s1: Value = serde_json::from_str(&std::fs::read_to_string(path("s1.json")).unwrap()).unwrap();
    s1["points"][1] = json!({"garbage": true});
    std::fs::write(path("s1.json"), s1.to_string()).unwrap();
    let out =
        tcplab().args(["merge", &path("s0.json"), &path("s1.json"), "--json", &path("all.json")]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("s1.json: points[1].garbage: unknown field `garbage`"), "{err}");
    assert!(!std::path::Path::new(&path("all.json")).exists(), "no merged file from a damaged shard");
}

/// rdp-eack printed four rows all saying "EACK on" (the unswept scenario's value) with counts run
/// together; the table now leads with each point's EACK and EACK-honour values.
#[test]
fn rdp_tables_show_each_points_values() {
    let table = run_table(&["classic/rdp-eack", "--set", "test.messages=2000"]);
    let data = rows(&table);
    let keys: Vec<(&str, &str)> = data
        .iter()
        .map(|r| {
            let c: Vec<&str> = r.split_whitespace().collect();
            (c[0], c[1])
        })
        .collect();
    assert_eq!(keys, [("true", "true"), ("true", "false"), ("false", "true"), ("false", "false")], "{table}");
    assert!(table.contains("server.rdp.eack") && table.contains("client.rdp.eack_honour"), "{table}");
    assert!(!data.iter().any(|r| r.contains(" on ")), "no base-scenario EACK column under a sweep of it:\n{table}");
    assert_aligned(&table);
    let table = run_table(&["classic/rdp-rtt-feedback"]);
    let firsts: Vec<&str> = rows(&table).iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(firsts, ["every", "discard_out_of_order", "karn"], "{table}");
    assert_aligned(&table);
}

/// dsl-rr's latencies reach 2.7 s (2.7·10^6 us): the columns stay in line, the CPU table leads with the
/// burst too, and the remote socket line sits under the local sizes.
#[test]
fn columns_stay_aligned_with_latencies_of_seconds_and_every_table_leads_with_the_sweep() {
    let table = run_table(&["classic/dsl-rr"]);
    let main: String = table.split("\nCPU").next().unwrap().to_string();
    let data: Vec<&str> = rows(&main).into_iter().filter(|r| !r.starts_with(' ')).collect();
    assert_eq!(data.len(), 15, "{table}");
    assert!(data.iter().any(|r| r.split_whitespace().any(|c| c.parse::<f64>().is_ok_and(|v| v >= 1e6))), "{table}");
    let first = starts(data[0]);
    for r in &data {
        assert_eq!(starts(r), first, "misaligned {r:?}:\n{table}");
    }
    let cpu = table.split("\nCPU (modeled)\n").nth(1).unwrap();
    let cpu_rows = rows(cpu);
    let bursts: Vec<&str> = cpu_rows.iter().map(|r| r.split_whitespace().next().unwrap()).collect();
    assert_eq!(bursts, (0..=14).map(|b| b.to_string()).collect::<Vec<_>>(), "{cpu}");
    assert_aligned(cpu);
    // gige-ack-avoidance's CPU table and small-messages' tables: one row per point, led by its values.
    // Five runs a point: after the table's rows, an empty line and a line per point on its iterations.
    let table = run_table(&["classic/small-messages", "--set", "test.duration=\"200ms\""]);
    assert_eq!(rows(&table).len(), 8, "{table}");
    assert_eq!(table.matches("mean of 5 iterations").count(), 8, "{table}");
    assert!(rows(&table)[0].starts_with("linux-2.2"), "{table}");
    assert_aligned(&table);
    let cpu = table.split("\nCPU (modeled)\n").nth(1).unwrap();
    assert_eq!(rows(cpu).len(), 8, "{cpu}");
    assert!(rows(cpu)[7].starts_with("linux-2.4"), "{cpu}");
}

/// txqueuelen printed ten identical rows; its `[table]` shows the send stalls falling to 0.
#[test]
fn the_txqueuelen_table_shows_the_send_stalls() {
    let table = run_table(&["classic/txqueuelen", "--set", "test.duration=\"3s\""]);
    let header: Vec<&str> = table.lines().take_while(|l| !l.is_empty()).collect();
    let col = header.iter().find_map(|l| l.find("client.SendStall")).expect("a SendStall column");
    let stalls = |r: &str| r[col..].split_whitespace().next().unwrap().parse::<u64>().unwrap();
    let data = rows(&table);
    assert_eq!(data.len(), 10);
    assert!(data[0].starts_with("10 ") && stalls(data[0]) > 100, "{table}");
    assert!(data[9].starts_with("2000 ") && stalls(data[9]) == 0, "{table}");
    assert!(header.last().unwrap().contains("count"), "the column's unit: {table}");
    assert_aligned(&table);
}

/// The banner names everything that shapes the path, and `report` on the saved document prints what the
/// run printed.
#[test]
fn the_banner_shows_the_path_and_report_prints_what_the_run_printed() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("lossy.json");
    let run = run_table(&[
        "lossy-10m",
        "--set",
        "test.duration=\"1s\"",
        "--set",
        "path.up.mtu=\"576B\"",
        "--json",
        saved.to_str().unwrap(),
    ]);
    let banner: Vec<&str> = run.lines().take(3).collect();
    assert!(banner[1].starts_with("path up: 10mbit, 20ms delay, queue "), "{run}");
    assert!(banner[1].contains("MTU 576B") && banner[1].ends_with("random loss 1%"), "{run}");
    assert!(banner[2].starts_with("path down: 10mbit") && banner[2].contains("no loss"), "{run}");
    let out = tcplab().args(["report", saved.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), run);
}

/// `[table] columns` is checked at load: a metric the run will not have is an error at its line, naming
/// what is accepted.
#[test]
fn table_columns_are_validated_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.toml");
    let text = "name = \"t\"\n[path.up]\nrate = \"10mbit\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n\
                [table]\ncolumns = [\"client.SendStall\", \"goodput\"]\n";
    std::fs::write(&f, text).unwrap();
    let out = tcplab().args(["check", f.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("t.toml:8") && err.contains("table.columns[1]") && err.contains("\"goodput\": not a metric"),
        "{err}"
    );
    assert!(err.contains("accepted: throughput_bps"), "{err}");
    std::fs::write(&f, text.replace(", \"goodput\"", "")).unwrap();
    tcplab().args(["check", f.to_str().unwrap()]).assert().success();
}
