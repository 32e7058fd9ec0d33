//! The command-line contract: exit statuses, error messages that name file, line, key and accepted
//! values, and result files that are complete or absent.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const GOOD: &str =
    "name = \"ok\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"2s\"\n";

/// (scenario text, what stderr must contain)
const BROKEN: &[(&str, &[&str])] = &[
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\nspeed = 3\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":5:", "path.up.speed", "unknown key", "`rate`"],
    ),
    (
        "name = \"x\"\n[path.up]\nrate = \"fast\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":3:", "path.up.rate", "\"fast\"", "accepted", "mbit"],
    ),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"-5ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":4:", "path.up.delay", "negative", "accepted"],
    ),
    ("name = \"x\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n", &["missing key `test`"]),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\n[client]\ntcp = { nodelay = \"yes\" }\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":5:", "client.tcp.nodelay", "boolean"],
    ),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\n[test]\nkind = \"tcp_teleport\"\nduration = \"1s\"\n",
        &[":5:", "test.kind", "tcp_stream"],
    ),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\nloss = { model = \"bernoulli\", p = 1.5 }\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":4:", "path.up.loss", "0 <= p < 1"],
    ),
    ("name = \"x\"\n[path.up\n", &[":2:", "not valid TOML"]),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\n[client]\nstack = \"windows-95\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
        &[":5:", "client.stack", "\"rfc\""],
    ),
    (
        "name = \"x\"\n[path.up]\nrate = \"10mbit\"\n[test]\nkind = \"tcp_stream\"\nduration = \"0s\"\n",
        &[":6:", "test.duration", "accepted"],
    ),
];

#[test]
fn broken_scenarios_exit_2_with_a_clear_error_and_leave_no_result_file() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, wants)) in BROKEN.iter().enumerate() {
        let path = write(&dir, &format!("bad{i}.toml"), text);
        for cmd in ["check", "run"] {
            let json = dir.path().join(format!("bad{i}.json"));
            let mut c = tcplab();
            c.arg(cmd).arg(&path);
            if cmd == "run" {
                c.arg("--json").arg(&json);
            }
            let out = c.output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd} bad{i}: {stderr}");
            assert!(stderr.contains(&format!("bad{i}.toml")), "{cmd} bad{i} names the file: {stderr}");
            for w in *wants {
                assert!(stderr.contains(w), "{cmd} bad{i}: expected {w:?} in {stderr}");
            }
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert!(!json.exists(), "no result file after bad input");
        }
    }
}

#[test]
fn bad_overrides_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "good.toml", GOOD);
    let out = tcplab().args(["check", &path, "--set", "path.up.queue=lots"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("--set path.up.queue=lots") && stderr.contains("100pkt"), "{stderr}");
    let out = tcplab().args(["check", &path, "--set", "novalue"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = tcplab().args(["run", "no-such-scenario"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bulk-10m"));
}

#[test]
fn run_prints_the_table_and_writes_identical_json_for_one_seed() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "good.toml", GOOD);
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    let out = tcplab()
        .args(["run", &path, "--set", "path.up.loss={model=\"bernoulli\",p=0.01}", "--json"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("10^6bits/sec") && table.contains("TCP STREAM TEST"), "{table}");
    tcplab()
        .args(["run", &path, "--set", "path.up.loss={model=\"bernoulli\",p=0.01}", "--quiet", "--json"])
        .arg(&b)
        .assert()
        .success()
        .stdout("");
    let (ja, jb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(ja, jb, "same scenario and seed, byte-identical JSON");
    let v: serde_json::Value = serde_json::from_slice(&ja).unwrap();
    assert_eq!(v["schema"], "tcplab.result/1");
    assert_eq!(v["backend"], "sim");
    assert!(v["points"][0]["metrics"]["throughput_bps"].as_f64().unwrap() > 1e6);
    assert!(v["points"][0]["connections"][0]["estats"]["SegsOut"].as_u64().unwrap() > 100);
    let other = tcplab()
        .args(["run", &path, "--set", "path.up.loss={model=\"bernoulli\",p=0.01}", "--seed", "2", "--json", "-"])
        .output()
        .unwrap();
    assert_ne!(other.stdout, ja, "another seed on a lossy path gives another result");
}

#[test]
fn list_shows_the_shipped_scenarios_and_each_one_checks() {
    let out = tcplab().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success());
    let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(names.contains(&"bulk-10m") && names.len() >= 4, "{text}");
    for n in names {
        tcplab().args(["check", n]).assert().success();
    }
}

#[test]
fn bench_runs_a_short_workload_and_reports_its_figures() {
    let out = tcplab()
        .args(["bench", "--workload", "bulk-1g", "--duration", "1s", "--repeat", "2", "--jobs", "2", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "tcplab.bench/1");
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "bulk-1g");
    assert_eq!(w["identical_to_serial"], true, "parallel repetitions give the serial results");
    // 1 s of a saturated gigabit link is about 81,000 full-sized segments per run; after it the sender
    // drains what its 16 MiB buffer holds (at most 11,600 segments more). Two runs.
    let segs = w["data_segments"].as_u64().unwrap();
    assert!((2 * 73_000..2 * 93_000).contains(&segs), "{segs} data segments");
    assert!(w["peak_rss_bytes"].as_u64().unwrap() > 0);
    let bad = tcplab().args(["bench", "--workload", "nope"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2), "an unknown workload is bad input");
}

#[test]
fn series_samples_the_sender_and_a_dead_path_is_a_run_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "good.toml", GOOD);
    let out = tcplab().args(["run", &path, "--set", "test.series=\"100ms\"", "--json", "-"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["points"][0]["series"];
    assert_eq!(s["columns"][1], "CurCwnd");
    let rows = s["rows"].as_array().unwrap();
    // 2 s of measurement after a 40 ms handshake, sampled every 100 ms, until the run ends.
    assert!(rows.len() >= 20, "{} rows", rows.len());
    // Samples fall on the 100 ms clock edges of the measurement window (which opens after the 40 ms
    // handshake, before the first edge from time 0), and never claim more acknowledged bytes than the
    // sender's final count.
    let start = s["measure_start_s"].as_f64().unwrap();
    assert!(start > 0.04 && start < 0.1, "the window opens at {start} s");
    for (k, r) in rows.iter().enumerate() {
        let t = r[0].as_f64().unwrap();
        assert!((t - (start + 0.1 * k as f64)).abs() < 1e-9, "sample {k} at {t} s");
    }
    let last_acked = rows.last().unwrap()[5].as_f64().unwrap();
    let final_acked = v["points"][0]["connections"][0]["estats"]["ThruOctetsAcked"].as_f64().unwrap();
    assert!(last_acked > 0.0 && last_acked <= final_acked, "{last_acked} sampled, {final_acked} at the end");

    let out = tcplab()
        .args(["run", &path, "--set", "path.up.loss={model=\"bernoulli\",p=0.9999999}", "--json"])
        .arg(dir.path().join("dead.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a run that cannot connect fails");
    assert!(String::from_utf8_lossy(&out.stderr).contains("established"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("dead.json").exists());
}

#[test]
fn explain_lists_every_knob_per_personality() {
    let out = tcplab().arg("explain").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success());
    for name in ["rfc", "linux", "linux-2.2", "linux-2.4", "hpux-11", "bsd-4.4"] {
        assert!(text.lines().nth(2).unwrap().contains(name), "header names {name}");
    }
    let ack = text.lines().find(|l| l.starts_with("ack_policy ")).unwrap();
    assert_eq!(
        ack.split_whitespace().collect::<Vec<_>>(),
        ["ack_policy", "delayed", "linux", "linux", "linux-2.2", "avoidance", "bsd"]
    );
    assert!(text.lines().any(|l| l.starts_with("cubic.hystart ")));
    let one = tcplab().args(["explain", "abc"]).output().unwrap();
    assert!(String::from_utf8_lossy(&one.stdout).contains("RFC 3465"));
    assert_eq!(tcplab().args(["explain", "warp_drive"]).output().unwrap().status.code(), Some(2));
    // Words that are no knob's name find the knobs whose documentation mentions them.
    let nagle = tcplab().args(["explain", "nagle"]).output().unwrap();
    let text = String::from_utf8_lossy(&nagle.stdout);
    assert!(nagle.status.success() && text.contains("nodelay") && text.contains("minshall"), "{text}");
    let delack = tcplab().args(["explain", "delayed ack"]).output().unwrap();
    let text = String::from_utf8_lossy(&delack.stdout);
    assert!(text.contains("delayed_ack_timeout") && text.contains("ack_policy"), "{text}");
    assert!(!text.contains("  mss "), "only knobs that mention both words: {text}");
    let sack = String::from_utf8_lossy(&tcplab().args(["explain", "SACK"]).output().unwrap().stdout).to_string();
    assert!(sack.contains("prr") || sack.contains("dupthresh") || sack.contains("lost_retransmit_detection"), "{sack}");
}
