//! `tcplab compare` and `run --backend linux` refuse what the Linux backend cannot run before anything runs,
//! with the key named (exit status 2). These need neither root nor Linux: the refusals come first.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

fn stderr_of(args: &[&str]) -> String {
    let out = tcplab().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty(), "nothing ran, nothing printed");
    String::from_utf8(out.stderr).unwrap()
}

fn a_knob_linux_cannot_express_is_refused_before_the_simulator_runs() {
    // crr-ports shortens TIME-WAIT to 1 s; the kernel's is fixed at 60 s.
    let e = stderr_of(&["compare", "crr-ports"]);
    assert!(e.contains("client.tcp.time_wait") && e.contains("60s"), "{e}");
}

fn what_the_backend_lacks_is_named() {
    let e = stderr_of(&["compare", "bulk-10m", "--set", "client.host.nic_rate=\"1gbit\""]);
    assert!(e.contains("client.host.nic_rate"), "{e}");
    let e = stderr_of(&["compare", "rdp-loopback"]);
    assert!(e.contains("test.kind") && e.contains("tcp_crr"), "{e}");
    // A variable the kernel has no source for (the simulator's only); CurCwnd beside it is sampled.
    let e = stderr_of(&[
        "compare",
        "bulk-10m",
        "--set",
        "test.series={interval=\"100ms\",vars=[\"CurCwnd\",\"SendStall\"]}",
    ]);
    assert!(e.contains("test.series") && e.contains("no SendStall"), "{e}");
    let e = stderr_of(&["compare", "bulk-10m", "--runs", "0"]);
    assert!(e.contains("--runs"), "{e}");
}

/// Case A of the kernel cases (docs/tcp.md) with 64 ms each way: 100 Mbit/s, a 500 KB queue, 6 MiB buffers.
/// Linux 6.18 leaves slow start by HyStart's ACK train at 1,162-1,178 packets, because its receiver ACKs every
/// segment while the window opens; the personality's exit is 1,162. `compare` puts the personality's exit
/// beside the kernel's counter. Needs root and Linux (reported as ignored with the reason elsewhere, failed
/// under CI=true).
fn compare_shows_the_slow_start_exit_beside_the_kernels() -> tcplab_testkit::Outcome {
    tcplab_testkit::need(tcplab_emu::check_environment())?;
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("case-a-128ms.toml");
    std::fs::write(
        &scenario,
        "name = \"case-a-128ms\"\n[path.up]\nrate = \"100mbit\"\ndelay = \"64ms\"\nqueue = \"500KB\"\n[path.down]\n\
         rate = \"100mbit\"\ndelay = \"64ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"2s\"\nmessage = \"64KiB\"\n\
         send_buffer = \"6MiB\"\nrecv_buffer = \"6MiB\"\n",
    )
    .unwrap();
    let json = dir.path().join("cmp.json");
    // The kernel's exit depends on the VM's timing (docs/tcp.md § the kernel cases): a gap of more than 2 ms
    // between two ACKs breaks the train, and a stall of the first eight ACKs of a round past the delay
    // threshold (delay_min / 8, clamped to 4-16 ms) fires the delay detector first. The 128 ms round trip
    // puts that threshold at its 16 ms ceiling and the ACKs 121 us apart; 18 runs of 22 took the train
    // here, against 5 of 10 for case B (10 Mbit/s, 1.23 ms between ACKs, a 12.5 ms threshold), which CI's
    // machine once missed three times out of three. On another day 15 of 32 took it, and a CI run here saw
    // four in a row break theirs. A run whose train broke is repeated (up to eight: 3.4 s each), as the Linux
    // backend's docs tell callers to do.
    let mut exits = Vec::new();
    for _ in 0..8 {
        let out = tcplab().arg("compare").arg(&scenario).arg("--json").arg(&json).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let row = |name: &str| {
            let r = doc["summary"].as_array().unwrap().iter().find(|r| r["figure"] == name).unwrap_or_else(|| {
                panic!("no row {name}: {}", doc["summary"]);
            });
            (r["sim"].as_f64(), r["linux"].as_f64())
        };
        // The simulator is deterministic: its exit is the ACK train's, at the same cwnd, every time.
        assert_eq!(row("client TCPHystartTrainDetect").0, Some(1.0));
        let trains = row("client TCPHystartTrainDetect").1;
        let (Some(sim), linux) = row("client TCPHystartTrainCwnd") else { panic!("the simulator counts the exit") };
        if trains == Some(1.0) && linux.is_some_and(|l| (sim / l - 1.0).abs() <= 0.05) {
            return Ok(());
        }
        exits.push((sim, trains, linux));
    }
    panic!("slow-start exits (simulator cwnd, kernel train exits, kernel cwnd), eight runs: {exits:?}");
}

tcplab_testkit::tests!(
    a_knob_linux_cannot_express_is_refused_before_the_simulator_runs,
    what_the_backend_lacks_is_named,
    compare_shows_the_slow_start_exit_beside_the_kernels,
);
