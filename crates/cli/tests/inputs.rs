//! Honest at the edges of the input (issue 22, items 8, 10, 11): runs that would eat the machine are
//! estimated and refused before they start; values that would fail or hang later are refused at
//! validation with their accepted range, or accepted with a warning; flags and names cannot mislead.

use std::path::Path;
use std::time::Instant;

fn tcplab() -> std::process::Command {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("tcplab"))
}

const BASE: &str =
    "name = \"probe\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"10s\"\n";

fn scenario(dir: &Path, text: &str) -> String {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Runs tcplab; (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = tcplab().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Item 8: a million-point sweep is checked at once, with its estimate, and its run refused at once
/// (exit 2, the estimate and the budget, the way out) instead of planning for minutes in silence.
#[test]
fn a_million_point_sweep_is_estimated_and_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    let sweep = ["--sweep", "seed=1..=1000", "--sweep", "test.parallel=1..=1000"];
    let started = Instant::now();
    let (code, out, err) = run(&[&["check", &s][..], &sweep].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("1000000 points") && out.contains("estimate: 1000000 point(s)"), "{out}");
    assert!(out.contains("combinations are validated as each point starts"), "{out}");
    assert!(out.contains("over the budget") && out.contains("--force"), "{out}");
    assert!(started.elapsed().as_secs_f64() < 15.0, "check took {:?}", started.elapsed());
    let started = Instant::now();
    let (code, _, err) = run(&[&["run", &s, "--quiet"][..], &sweep].concat());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the run is estimated to need about") && err.contains("over the budget of 2.0 GiB"), "{err}");
    assert!(err.contains("over the budget of 60 min") && err.contains("--force"), "{err}");
    assert!(started.elapsed().as_secs_f64() < 15.0, "refused after {:?}", started.elapsed());
}

/// Item 8: 100,000 connections (3 GiB and more) and a 100 us series rendered to CSV over 600 s are
/// refused with the part that dominates; `check` shows the same estimate.
#[test]
fn memory_over_the_budget_is_refused_with_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    let (code, _, err) = run(&["run", &s, "--quiet", "--set", "test.parallel=100000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("100000 connection(s)") && err.contains("of memory"), "{err}");
    let csv = dir.path().join("csv");
    let series = ["--set", "test.series=\"100us\"", "--set", "test.duration=\"600s\""];
    let (code, _, err) = run(&[&["run", &s, "--quiet", "--csv", csv.to_str().unwrap()][..], &series].concat());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the JSON tree of --csv/--plot/--report/--flent"), "{err}");
    assert!(!csv.exists(), "nothing is written for a refused run");
    let (code, out, _) = run(&[&["check", &s][..], &series].concat());
    assert_eq!(code, Some(0));
    assert!(out.contains("estimate: 1 point(s), 1 run(s)") && out.contains("peak memory about"), "{out}");
}

/// Item 8: --force runs what the estimate refuses. A single message with a 100 us series is estimated
/// over the whole day `test.messages` allows (8.6e8 samples) but ends when the message arrives.
#[test]
fn force_runs_over_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let text = BASE
        .replace("kind = \"tcp_stream\"\nduration = \"10s\"", "kind = \"tcp_msg\"\nmessages = 1\nseries = \"100us\"");
    let s = scenario(dir.path(), &text);
    let (code, _, err) = run(&["run", &s, "--quiet"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = run(&["run", &s, "--force"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("--force: running over the budget"), "{err}");
}

/// Item 8: the table of a run with a long series costs no more memory than the run: it was drawn from a
/// JSON tree of every sample (7.5 times the run's memory for 600 s at 100 us).
#[test]
fn the_table_does_not_copy_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    let peak_kib = |quiet: bool| {
        let mut cmd = tcplab();
        cmd.args(["run", &s, "--set", "test.series=\"100us\"", "--set", "test.duration=\"120s\""]);
        if quiet {
            cmd.arg("--quiet");
        }
        // Reaped by wait4 below, which also gives this child's own peak memory.
        #[allow(clippy::zombie_processes)]
        let child = cmd.stdout(std::process::Stdio::null()).spawn().unwrap();
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value to be filled in; wait4 reaps our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
        assert_eq!(pid, child.id() as i32);
        assert_eq!(status, 0);
        usage.ru_maxrss
    };
    let (quiet, table) = (peak_kib(true), peak_kib(false));
    assert!(table < quiet + quiet / 4, "table run {table} KiB, quiet run {quiet} KiB");
}

/// Item 10: each value that passed validation and then failed or hung is refused at validation, with
/// the key, where it was written, and the accepted range (or accepted with a warning saying what will
/// happen).
#[test]
fn values_that_cannot_run_are_refused_at_validation() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    let file = |key: &str, value: &str| {
        let text = BASE.replace("[test]\n", &format!("[test]\n{key} = {value}\n"));
        (key.to_string(), text)
    };
    for (set, wants) in [
        ("path.up.rate=\"1bit\"", "path.up.rate: 1bit: accepted 300bit to 1tbit"),
        ("path.up.rate=\"1000000tbit\"", "path.up.rate: 1000000tbit: accepted 300bit to 1tbit"),
        ("path.up.delay=\"1000000000s\"", "path.up.delay: 1000000000s: accepted 0s to 60s"),
        ("client.host.nic_rate=\"1bit\"", "client.host.nic_rate: 1bit: accepted 300bit to 1tbit"),
        ("client.tcp.tick=\"18446744073s\"", "client.tcp.tick: 18446744073s: accepted 0s to 1s"),
        ("test.duration=\"1ns\"", "test.duration: 1ns: accepted 1ms to 86400s"),
        ("client.tcp.rto_max=\"1000h\"", "client.tcp.rto_max"),
    ] {
        let started = Instant::now();
        let (code, _, err) = run(&["run", &s, "--quiet", "--set", set]);
        assert_eq!(code, Some(2), "{set}: {err}");
        assert!(err.contains(&format!("--set {set}: {wants}")), "{set}: {err}");
        assert!(started.elapsed().as_secs_f64() < 5.0, "{set}");
    }
    // tcp_msg paced every nanosecond: 10^9 send calls per simulated second.
    let msg = BASE.replace("kind = \"tcp_stream\"", "kind = \"tcp_msg\"\ninterval = \"1ns\"");
    let s2 = dir.path().join("msg.toml");
    std::fs::write(&s2, msg).unwrap();
    let (code, _, err) = run(&["check", s2.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("msg.toml:7: test.interval: 1ns: accepted 1us to 3600s"), "{err}");
    // In the file: the line of the key.
    let (_, text) = file("start_spread", "\"1ms\"");
    let text = text.replace("delay = \"20ms\"", "delay = \"61s\"");
    let s3 = dir.path().join("far.toml");
    std::fs::write(&s3, text).unwrap();
    let (code, _, err) = run(&["check", s3.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("far.toml:4: path.up.delay: 61s: accepted 0s to 60s"), "{err}");
    // A handshake that cannot fit the 180 s the connections get: 60 s each way, three crossings.
    let (code, _, err) = run(&["check", &s, "--set", "path.up.delay=\"60s\""]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the handshake takes") && err.contains("180s"), "{err}");
}

/// Item 10: a bufferless queue and a measurement shorter than a round trip run, after a warning that
/// says what will happen (also under --quiet; `check` says it too).
#[test]
fn valid_but_empty_runs_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    let (code, _, err) = run(&["run", &s, "--quiet", "--set", "path.up.queue=\"0pkt\""]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning: --set path.up.queue=\"0pkt\": path.up.queue: 0pkt: no full-size frame can wait"),
        "{err}"
    );
    assert_eq!(err.matches("warning").count(), 1, "one warning for a path without down: {err}");
    let (code, _, err) = run(&["check", &s, "--set", "test.duration=\"10ms\""]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("10ms is shorter than one round trip of the path"), "{err}");
}

/// Item 11: control characters of a scenario's name are shown escaped wherever it is printed.
#[test]
fn control_characters_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), &BASE.replace("\"probe\"", "\"x\\u001b[2Jy\\rz\\u202e\""));
    let (code, out, _) = run(&["check", &s]);
    assert_eq!(code, Some(0));
    assert!(!out.contains('\u{1b}') && !out.contains('\r') && !out.contains('\u{202e}'), "{out:?}");
    assert!(out.contains("x\\u{1b}[2Jy\\u{d}z\\u{202e}"), "{out:?}");
    let (code, out, _) = run(&["run", &s]);
    assert_eq!(code, Some(0));
    assert!(!out.contains('\u{1b}') && !out.contains('\r'), "{out:?}");
    let (_, _, err) = run(&["check", &s, "--set", "test.kind=\"\u{1b}[31m\""]);
    assert!(!err.contains('\u{1b}') && err.contains("\\u{1b}"), "{err:?}");
}

/// Item 11: --sweep and --set errors name the flag and its value; an empty item or a second flag on one
/// path is refused, not dropped or overwritten; --confidence levels are fractions in (0.5, 1) or
/// percentages.
#[test]
fn flags_say_what_they_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(dir.path(), BASE);
    for (args, wants) in [
        (&["--sweep", "test.parallel=1,,2"][..], "--sweep test.parallel=1,,2: value 2 of 3 is empty"),
        (&["--sweep", "test.parallel=1,2,"][..], "--sweep test.parallel=1,2,: value 3 of 3 is empty"),
        (
            &["--sweep", "test.parallel=1,2", "--sweep", "test.parallel=3"][..],
            "--sweep test.parallel=3: test.parallel is swept by --sweep test.parallel=1,2 already",
        ),
        (&["--set", "path=[1,2]"][..], "--set path=[1,2]: path[0]: invalid type: integer `1`, expected a table"),
        (&["--confidence", "1.5,0.05"][..], "--confidence 1.5,0.05: accepted LEVEL,WIDTH"),
        (&["--confidence", "0.3,0.05"][..], "LEVEL 0.3 is outside (0.5, 1)"),
        (&["--confidence", "99,5%"][..], "LEVEL 99 is outside (0.5, 1)"),
    ] {
        let (code, _, err) = run(&[&["check", &s][..], args].concat());
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(wants), "{args:?}: {err}");
    }
    let (code, _, err) = run(&["check", &s, "--confidence", "95%,5%"]);
    assert_eq!(code, Some(0), "{err}");
    // The examples `run --help` gives for --confidence are accepted (it once showed `99,5%`, refused).
    let (_, help, _) = run(&["run", "--help"]);
    let line = help.lines().find(|l| l.trim_start().starts_with("--confidence")).expect("--confidence in --help");
    let examples = line.split_once("e.g. ").expect("examples after e.g.").1.trim_end_matches('.');
    let examples: Vec<&str> = examples.split(" or ").collect();
    assert_eq!(examples.len(), 2, "{line}");
    for ex in examples {
        let (code, _, err) = run(&["check", &s, "--confidence", ex]);
        assert_eq!(code, Some(0), "--help's example --confidence {ex}: {err}");
    }
    let (code, _, err) = run(&["check", &s, "--confidence", "0.99,0.05"]);
    assert_eq!(code, Some(0), "{err}");
}

/// Item 11: every output path is tried before the run (exit 2 at once, the user's path, never a
/// temporary's name): a directory that takes no files, a --csv or --plot directory that is a file or
/// under one.
#[test]
fn output_paths_are_tried_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let text = BASE.replace("10s", "600s");
    let s = scenario(dir.path(), &text);
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("sub");
    for (flag, path, wants) in [
        ("--json", "/proc/r.json".to_string(), "cannot create a file in /proc"),
        ("--report", "/proc/r.html".to_string(), "cannot create a file in /proc"),
        ("--csv", file.display().to_string(), "it exists and is not a directory"),
        ("--plot", under.display().to_string(), "is not a directory"),
        ("--csv", "/proc/csv".to_string(), "cannot create a file in /proc"),
    ] {
        let started = Instant::now();
        let (code, _, err) = run(&["run", &s, "--quiet", flag, &path]);
        assert_eq!(code, Some(2), "{flag} {path}: {err}");
        assert!(err.contains(&format!("{flag} {path}: cannot write: ")) && err.contains(wants), "{err}");
        assert!(!err.contains(".tcplab-") && !err.contains(".part"), "{err}");
        assert!(started.elapsed().as_secs_f64() < 5.0, "{flag}: refused only after the run");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// A loss model's table takes only that model's keys: `model = "none"` with a probability is refused at
/// its line, not run silently without loss (serde lets a tagged unit variant ignore other keys).
#[test]
fn the_none_loss_model_refuses_other_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(
        dir.path(),
        &BASE.replace("delay = \"20ms\"\n", "delay = \"20ms\"\nloss = { model = \"none\", p = 0.1 }\n"),
    );
    let (code, _, err) = run(&["check", &s]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(":5:") && err.contains("path.up.loss") && err.contains("unknown field `p`"), "{err}");
}
