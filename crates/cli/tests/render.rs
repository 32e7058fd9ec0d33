//! `run --csv/--plot/--report/--flent` and `report RESULT.json`: the same files from a run and from its
//! saved result; bad input exits 2.

use std::path::Path;

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

const SCENARIO: &str = "name = \"render\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
    loss = { model = \"bernoulli\", p = 0.01 }\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n\
    series = { interval = \"100ms\", vars = [\"CurCwnd\", \"CurSsthresh\", \"SmoothedRTT\"] }\n";

/// Every file under `dir`, by relative path, with its bytes.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            out.extend(tree(&p).into_iter().map(|(n, b)| (format!("{name}/{n}"), b)));
        } else {
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn report_from_a_saved_result_writes_what_the_run_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    tcplab()
        .args(["run", "--quiet", "--json"])
        .arg(a.join("r.json"))
        .arg(&s)
        .arg("--csv")
        .arg(a.join("csv"))
        .assert()
        .success();
    tcplab().arg("report").arg(a.join("r.json")).arg("--csv").arg(b.join("csv")).assert().success();
    let ta = tree(&a.join("csv"));
    let tb = tree(&b.join("csv"));
    assert_eq!(
        ta.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["logvars-0-client.csv", "logvars-1-server.csv", "points.csv"]
    );
    assert_eq!(ta, tb);
}

#[test]
fn report_refuses_what_is_not_a_result_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"other/1\"}").unwrap();
    let out = tcplab().arg("report").arg(&bad).arg("--csv").arg(dir.path().join("c")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("accepted: \"tcplab.result/2\", \"tcplab.result/1\""));
    std::fs::write(&bad, "not json").unwrap();
    let out = tcplab().arg("report").arg(&bad).arg("--csv").arg(dir.path().join("c")).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("c").exists());
}

#[test]
fn the_html_report_of_a_saved_result_is_the_runs_but_for_the_provenance() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(&s, SCENARIO).unwrap();
    let json = dir.path().join("r.json");
    let (a, b) = (dir.path().join("a.html"), dir.path().join("b.html"));
    tcplab().args(["run", "--quiet", "--json"]).arg(&json).arg(&s).arg("--report").arg(&a).assert().success();
    tcplab().arg("report").arg(&json).arg("--report").arg(&b).assert().success();
    let (a, b) = (std::fs::read_to_string(a).unwrap(), std::fs::read_to_string(b).unwrap());
    let cut = |h: &str| h.split("<h2>Provenance</h2>").next().unwrap().to_string();
    assert_eq!(cut(&a), cut(&b));
    assert!(a.contains("<dt>command line</dt>") && a.contains("--report"));
    assert!(b.contains("<dt>rendered from</dt>") && b.contains("r.json"));
    // cwnd, rtt, throughput; queue and sojourn of the path (links.queue_series).
    assert_eq!(a.matches("<svg").count(), 5);
}

/// A swept RR scenario with the CPU cost model on both hosts and two iterations per point: every part
/// of the table (sweep columns, latency, confidence notes, CPU utilization and service demand).
const SWEPT_CPU: &str = "name = \"swept-cpu\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n\
    loss = { model = \"bernoulli\", p = 0.01 }\n\
    [client.host.cpu]\nper_segment_in = \"20us\"\nper_segment_out = \"10us\"\nper_call = \"2us\"\n\
    [server.host.cpu]\ncores = 2\nper_segment_in = \"15us\"\nper_kb_copy = \"1us\"\n\
    [test]\nkind = \"tcp_rr\"\nduration = \"1s\"\nrequest = \"100B\"\nresponse = \"2KiB\"\n\
    [sweep]\n\"test.burst\" = [0, 3]\n\"client.tcp.nodelay\" = [false, true]\n\
    [repeat]\nmin = 2\nmax = 2\n";

#[test]
fn report_prints_the_table_the_run_printed_for_a_swept_cpu_model_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(&s, SWEPT_CPU).unwrap();
    let json = dir.path().join("r.json");
    let run = tcplab().arg("run").arg(&s).arg("--json").arg(&json).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let run = String::from_utf8(run.stdout).unwrap();
    let report = tcplab().arg("report").arg(&json).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert_eq!(String::from_utf8(report.stdout).unwrap(), run);
    // The table has every part: the swept columns, one row per point, the iterations and the CPU columns.
    assert!(run.contains("test.burst  client.tcp.nodelay"), "{run}");
    assert_eq!(run.matches("mean of 2 iterations").count(), 4, "{run}");
    assert!(run.contains("CPU (modeled)") && run.contains("us/Tr"), "{run}");
    // The point's row in the test's table and in the CPU table, each led by the swept values.
    assert_eq!(run.lines().filter(|l| l.starts_with("3 ") && l.contains("true")).count(), 2, "{run}");
    // --quiet with nothing to write is a mistake.
    let out = tcplab().arg("report").arg(&json).arg("--quiet").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
