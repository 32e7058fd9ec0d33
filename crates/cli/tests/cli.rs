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
    assert_eq!(v["schema"], "tcplab.result/2");
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

/// `sim (s)` is the simulated time a run took, not the scenario's bound: rdp-loopback sends 50,000 messages
/// with `test.duration` at its 1-day default, and its transfer takes about 1,868 timeouts × 2 s + 30 s
/// ≈ 3,740 s (Part C of the RDP note, C.5; single runs within ±10 %).
#[test]
fn bench_reports_the_simulated_time_an_rdp_transfer_took() {
    let out = tcplab().args(["bench", "--workload", "rdp-loopback", "--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sim = v["workloads"][0]["simulated_s"].as_f64().unwrap();
    assert!((3_366.0..=4_114.0).contains(&sim), "simulated {sim} s");
}

#[test]
fn bench_runs_the_sweep_workload_in_parallel_and_serially_with_the_same_documents() {
    let out = tcplab()
        .args(["bench", "--workload", "sweep-rr", "--duration", "1s", "--jobs", "2", "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "sweep-rr");
    // 16 bursts × Nagle/NODELAY, 1 s each.
    assert_eq!(w["points"], 32);
    assert_eq!(w["simulated_s"], 32.0);
    assert_eq!(w["jobs"], 2);
    assert_eq!(w["identical_to_serial"], true, "the pool gives the serial documents byte for byte");
    let e = w["parallel_efficiency"].as_f64().unwrap();
    let (serial, wall) = (w["serial_wall_s"].as_f64().unwrap(), w["wall_s"].as_f64().unwrap());
    assert!((e - serial / wall / 2.0).abs() < 1e-9, "efficiency = serial / (jobs × parallel)");
    // Every point runs transactions: the mean rate over the points is at least one transaction per
    // round trip (30 ms + serializations), the rate without a burst.
    assert!(w["transactions_per_s"].as_f64().unwrap() > 25.0);
    assert!(w["data_segments"].as_u64().unwrap() > 32 * 25);
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
        ["ack_policy", "delayed", "linux", "linux", "linux-2.2", "mentat", "bsd"]
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

/// The captured frames of a classic pcap file (after its 24-byte header, each record's 16-byte header
/// and the captured length it gives); the records must end exactly at the file's end.
fn pcap_records(bytes: &[u8]) -> Vec<&[u8]> {
    let (mut at, mut frames) = (24, Vec::new());
    while at < bytes.len() {
        let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        frames.push(&bytes[at + 16..at + 16 + incl]);
        at += 16 + incl;
    }
    assert_eq!(at, bytes.len(), "records end at the file's end");
    frames
}

/// Runs `tcplab run ARGS` traced at the path's up direction into `pcap`; returns the frames that
/// direction took in, from the run's JSON.
fn traced_up(dir: &tempfile::TempDir, args: &[&str], pcap: &std::path::Path) -> u64 {
    let json = dir.path().join("traced.json");
    let out = tcplab()
        .arg("run")
        .args(args)
        .args(["--pcap-at", "up", "--quiet", "--pcap"])
        .arg(pcap)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc["points"][0]["links"]["up"]["frames_in"].as_u64().unwrap()
}

/// `--pcap` of an RDP run writes IPv4 protocol-27 packets (crates/report/tests/pcap_tshark.rs reads them back
/// with tshark): the file holds the pcap header and one record per packet of the tap, as many as the path's
/// up direction took in. Version 1 RDP (8-bit ports) cannot carry the simulator's ports and is bad input.
#[test]
fn pcap_of_an_rdp_run_holds_every_packet_of_the_tap() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("rdp.pcap");
    let frames_in = traced_up(&dir, &["rdp-loopback", "--set", "test.messages=500"], &pcap);
    let bytes = std::fs::read(&pcap).unwrap();
    let records = pcap_records(&bytes);
    for (i, frame) in records.iter().enumerate() {
        // Ethernet II, IPv4, protocol 27.
        assert_eq!(&frame[12..14], &[0x08, 0x00]);
        assert_eq!(frame[14 + 9], 27, "record {i}: IP protocol");
    }
    assert_eq!(records.len() as u64, frames_in);
    let v1 = tcplab()
        .args(["run", "rdp-loopback", "--set", "client.rdp.version=1", "--pcap"])
        .arg(dir.path().join("v1.pcap"))
        .output()
        .unwrap();
    assert_eq!(v1.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&v1.stderr).contains("8-bit ports"), "{}", String::from_utf8_lossy(&v1.stderr));
}

/// A scenario that repeats its points (`[repeat]`) is one run under `--iterations 1`, and `--pcap` traces
/// it: every frame the up direction took in is a record. Without the flag the refusal names it.
#[test]
fn pcap_of_a_repeated_scenario_needs_one_iteration_and_traces_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{GOOD}[repeat]\nmin = 3\nmax = 5\n").replace("duration = \"2s\"", "duration = \"1s\"");
    let scenario = write(&dir, "repeated.toml", &text);
    let pcap = dir.path().join("one.pcap");
    let refused = tcplab().args(["run", &scenario, "--pcap"]).arg(&pcap).output().unwrap();
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("[repeat]") && err.contains("up to 5 times") && err.contains("--iterations 1"), "{err}");
    assert!(!pcap.exists(), "no trace left by a refused run");
    let frames_in = traced_up(&dir, &[&scenario, "--iterations", "1"], &pcap);
    assert_eq!(pcap_records(&std::fs::read(&pcap).unwrap()).len() as u64, frames_in);
    // 10 Mbit/s carries 813 full frames a second; slow start over 40 ms rounds fills it within 0.3 s.
    assert!((400..=813).contains(&frames_in), "frames in 1 s at 10 Mbit/s: {frames_in}");
}

#[test]
fn the_msg_table_shows_the_time_per_message_from_a_run_and_from_its_saved_result() {
    // msg-100m with NODELAY: one 84-byte frame per message, 6.72 us at 100 Mbit/s.
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("msg.json");
    let out = tcplab()
        .args(["run", "msg-100m", "--set", "client.tcp.nodelay=true", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(table.starts_with("TCP small-message stream TEST from client to server: msg-100m"), "{table}");
    assert!(table.contains("NODELAY, messages back to back") && table.contains("Time per message usec"), "{table}");
    let row = table.lines().find(|l| l.starts_with("1 ")).expect("a row for the point");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cells[0], cells[1], cells[4]), ("1", "100000", "6.720"), "{row}");
    // The HTML page of the saved document (`tcplab report`) renders the same row from the JSON.
    let html = dir.path().join("msg.html");
    let saved = tcplab().args(["report", json.to_str().unwrap(), "--report", html.to_str().unwrap()]).output().unwrap();
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(row), "the saved result's table has the row {row:?}");
}

/// `--csv` and `--plot` write several files: "-" is refused before anything runs (it used to create a
/// directory named "-").
#[test]
fn directory_outputs_refuse_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write(&dir, "ok.toml", GOOD);
    for flag in ["--csv", "--plot"] {
        let out = tcplab().current_dir(dir.path()).args(["run", &scenario, flag, "-", "--quiet"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag) && err.contains("directory"), "{err}");
        assert!(!dir.path().join("-").exists(), "{flag} created \"-\"");
    }
}
