//! `tcplab bench`'s dumbbell workloads (issue 24): the flows run, share the bottleneck, and the memory per
//! flow is reported.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").unwrap()
}

#[test]
fn dumbbell_100_runs_its_flows_through_the_gigabit_bottleneck_and_reports_memory_per_flow() {
    let out =
        tcplab().args(["bench", "--workload", "dumbbell-100", "--duration", "1s", "--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "dumbbell-100");
    assert_eq!(w["flows"], 100);
    let goodput = w["goodput_mbps"].as_f64().unwrap();
    // 100 flows share 1 Gbit/s of Ethernet frames: at most 949 Mbit/s of TCP payload, and a loaded
    // bottleneck after the first second.
    assert!((500.0..=949.0).contains(&goodput), "aggregate goodput {goodput} Mbit/s");
    let per_flow = w["bytes_per_flow"].as_u64().unwrap();
    assert!((1_000..10_000_000).contains(&per_flow), "{per_flow} bytes per flow");
}

#[test]
fn an_unknown_workload_is_refused_naming_the_dumbbells() {
    let out = tcplab().args(["bench", "--workload", "dumbbell-7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dumbbell-100") && err.contains("dumbbell-10k"), "{err}");
}
