//! `tcplab run --help` ends with examples; each of its lines that starts with `tcplab ` runs here as written
//! by `sh` in a scratch directory, with `tcplab` on the PATH as the binary under test, shortened visibly:
//! `--quiet --set 'test.duration="1s"'` appended (a later `--set` of a key wins). Each must exit 0, and a
//! `--pcap FILE` example must leave a trace behind. An example that rots (a renamed flag, key or scenario)
//! fails here.

use std::path::Path;
use std::process::Command;

fn help() -> String {
    let out = Command::new(assert_cmd::cargo::cargo_bin("tcplab")).args(["run", "--help"]).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The example command lines of the help text, in order.
fn examples(help: &str) -> Vec<String> {
    let after = help.split_once("\nExamples:\n").expect("run --help has an Examples section").1;
    after.lines().map(str::trim).filter(|l| l.starts_with("tcplab ")).map(String::from).collect()
}

/// What the brief of the examples asks them to show: an axis of the file's sweep replaced, a nested key
/// set, a duration in hours, a trace of a flows scenario.
#[test]
fn run_help_shows_the_examples_a_newcomer_needs() {
    let ex = examples(&help());
    let has = |s: &str| ex.iter().any(|l| l.contains(s));
    assert!(has("rr-dsl --sweep 'test.burst=0..=63'"), "{ex:#?}");
    assert!(has("--set 'client.tcp.congestion_control="), "{ex:#?}");
    assert!(has("test.duration=6h"), "{ex:#?}");
    assert!(has("cubic-vs-reno --pcap"), "{ex:#?}");
}

#[test]
fn every_run_help_example_runs() {
    let scratch = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("tcplab");
    let bin_dir = bin.parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let ex = examples(&help());
    assert!(ex.len() >= 6, "{ex:#?}");
    for line in ex {
        let shortened = format!("{line} --quiet --set 'test.duration=\"1s\"'");
        let out = Command::new("sh")
            .args(["-c", &shortened])
            .current_dir(scratch.path())
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{shortened}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        if let Some(file) = line.split_whitespace().skip_while(|w| *w != "--pcap").nth(1) {
            let len = std::fs::metadata(scratch.path().join(file)).map(|m| m.len()).unwrap_or(0);
            assert!(len > 24, "`{line}`: {file} holds no packet ({len} bytes)");
        }
    }
    assert!(!Path::new(scratch.path()).join("6h").exists());
}
