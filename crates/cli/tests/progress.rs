//! The progress bar of a single long run shows simulated time against the test's duration, not
//! `0/1 points, eta 0s` (issue 22, item 17). The bar is drawn only on a terminal: the run gets one from
//! util-linux's `script` (a test that cannot run without it is reported as ignored, with the reason).

use tcplab_testkit::{need_tool, Outcome};

fn a_single_run_shows_simulated_time_against_the_duration() -> Outcome {
    need_tool("script", "install util-linux")?;
    let bin = assert_cmd::cargo::cargo_bin("tcplab");
    // A run of several seconds however fast the machine (200 s of gigabit TCP is about 2.5 s of a release
    // build): the bar appears after one.
    let cmd = format!("{} run bulk-1g --set test.duration=\\\"200s\\\"", bin.display());
    let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("s of 200.0s simulated"), "no simulated time in the bar: {text}");
    assert!(!text.contains("0/1 points"), "{text}");
    assert!(text.contains("TCP STREAM TEST"), "the table follows the bar: {text}");
    Ok(())
}

/// Without a terminal there is no bar at all.
fn no_terminal_no_bar() {
    let out = assert_cmd::Command::cargo_bin("tcplab").unwrap().args(["run", "bulk-10m"]).output().unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Issue 22, item 8: a sweep of a million points (run with --force) is planned lazily, so its first
/// points run and the bar shows them at once, where planning it took minutes of silence. The run is
/// interrupted after 15 s: a debug build on a loaded 2-core CI machine (load 12) took over 5 s for its
/// first 10 s point, which is not what the test is about; 1 s points and 15 s still tell "at once" from the
/// minutes planning took.
fn a_million_point_sweep_starts_at_once_and_shows_progress() -> Outcome {
    need_tool("script", "install util-linux")?;
    need_tool("timeout", "install coreutils")?;
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.toml");
    std::fs::write(
        &s,
        "name = \"probe\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("tcplab");
    let cmd = format!(
        "timeout -s INT 15 {} run {} --sweep seed=1..=1000 --sweep test.parallel=1..=1000 --force",
        bin.display(),
        s.display()
    );
    let out = std::process::Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--force: running over the budget"), "{text}");
    let done = text
        .split("/1000000 points")
        .filter_map(|before| before.rsplit(|c: char| !c.is_ascii_digit()).next()?.parse::<u64>().ok())
        .max();
    assert!(done.is_some_and(|n| n >= 1), "no point done within 15 s: {text}");
    Ok(())
}

tcplab_testkit::main!(
    a_single_run_shows_simulated_time_against_the_duration,
    no_terminal_no_bar,
    a_million_point_sweep_starts_at_once_and_shows_progress,
);
