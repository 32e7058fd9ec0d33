//! `[dumbbell]` scenarios through the command line (issue 24): the flows table, `flows` in the JSON, the
//! CSV, a saved result's report, and the Linux backend's refusal.

use assert_cmd::Command;
use serde_json::Value;

fn tcplab(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("tcplab").unwrap().args(args).output().unwrap()
}

#[test]
fn a_dumbbell_prints_a_row_per_flow_and_writes_flows_in_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let csv = dir.path().join("csv");
    let out = tcplab(&[
        "run",
        "bufferbloat",
        "--set",
        "test.duration=\"5s\"",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("FLOWS TEST through a dumbbell: bufferbloat (simulated, seed 1), 2 flows\n"), "{table}");
    assert!(table.contains("Goodput") && table.contains("10^6bits/sec") && table.contains("Jain's"), "{table}");
    // One row per flow and an aggregate row per point: 4 qdiscs x 3.
    let rows: Vec<&str> =
        table.lines().filter(|l| ["fifo ", "codel ", "fq_codel ", "pie "].iter().any(|q| l.starts_with(q))).collect();
    assert_eq!(rows.len(), 12, "{table}");
    assert!(rows.iter().any(|r| r.contains(" rr ") && r.contains("rfc/newreno")), "{table}");
    assert!(rows.iter().filter(|r| r.contains(" all ")).all(|r| r.trim_end().ends_with("1.0000")), "{table}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for p in doc["points"].as_array().unwrap() {
        let flows = p["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2);
        assert_eq!(flows[0]["kind"], "stream");
        assert!(flows[1]["latency_us"]["p99"].as_f64().unwrap() > 20_000.0, "{}", flows[1]);
        assert_eq!(p["aggregate"]["stream_flows"], 1);
    }
    let flows_csv = std::fs::read_to_string(csv.join("flows.csv")).unwrap();
    let mut lines = flows_csv.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("dumbbell.bottleneck.qdisc.kind,flow,kind,stack,congestion_control,"), "{head}");
    assert!(head.contains("aggregate.jain_index") && head.contains("latency_us.p99"), "{head}");
    assert_eq!(lines.count(), 8);

    // The saved result prints the same table.
    let again = tcplab(&["report", json.to_str().unwrap()]);
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(String::from_utf8(again.stdout).unwrap(), table);
}

#[test]
fn the_linux_backend_refuses_a_dumbbell_naming_it() {
    let out = tcplab(&["run", "cubic-vs-reno", "--backend", "linux"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dumbbell = 2 flows") && err.contains("simulator only"), "{err}");
}

/// A dumbbell is traced on its links (crates/report/tests/pcap_net_tshark.rs reads the traces back); a
/// two-host tap name is refused as bad input before running, naming the dumbbell's links.
#[test]
fn a_packet_trace_of_a_dumbbell_takes_link_names_and_refuses_others_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("t.pcap");
    let out = tcplab(&["run", "cubic-vs-reno", "--pcap", pcap.to_str().unwrap(), "--pcap-at", "client"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--pcap-at \"client\"") && err.contains("accepted: ") && err.contains("bottleneck"), "{err}");
    assert!(!pcap.exists(), "no trace file is left behind");
    let out = tcplab(&[
        "run",
        "cubic-vs-reno",
        "--quiet",
        "--set",
        "test.duration=\"1s\"",
        "--pcap",
        pcap.to_str().unwrap(),
        "--pcap-at",
        "flow[1].sender_access",
        "--pcap-snaplen",
        "96",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::metadata(&pcap).unwrap().len() > 24, "the trace holds packets");
}
