//! Every shell example of README.md runs as written (issue 22, item 17): one test per line of its `sh`
//! blocks, in order, in one scratch directory (so `tcplab show bulk-10m > my.toml` makes the `my.toml` the
//! next line checks), with `tcplab` on the PATH as the binary under test. Each must exit 0. Lines that
//! cannot run here are reported as ignored with the reason (tcplab-testkit; failures under CI=true):
//! `sudo` lines without root or the Linux backend. `cargo test --workspace` is this suite itself: it is
//! not run again, but checked to be exactly the command `.ci/run` runs; `cargo run --release -p
//! tcplab-cli --` is the binary under test. Three long examples are shortened, visibly: `tcplab bench` gets
//! `--duration 1s`, `tcplab compare` `--set test.duration="2s"`, a run on the Linux backend (a sweep: 14
//! points of real time) `--set test.duration="500ms"`.
//! The table the README shows for `tcplab run bulk-10m` must be what that command prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use tcplab_testkit::{skip, Outcome};

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap()
}

/// The fenced blocks of `md`: (info string, body).
fn blocks(md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in md.lines() {
        match (&mut cur, line.strip_prefix("```")) {
            (None, Some(info)) => cur = Some((info.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.extend(cur.take()),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// The README's shell commands, one per line, in order.
fn commands(md: &str) -> Vec<String> {
    blocks(md)
        .into_iter()
        .filter(|(info, _)| info == "sh")
        .flat_map(|(_, body)| {
            body.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect::<Vec<_>>()
        })
        .collect()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A directory holding `tcplab`: a link to the binary under test.
fn bin_dir(scratch: &Path) -> PathBuf {
    let dir = scratch.join(".bin");
    if !dir.exists() {
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("tcplab"), dir.join("tcplab")).unwrap();
    }
    dir
}

/// Runs one README line in `scratch`, as written but for the substitutions the file's doc lists.
fn run_line(line: &str, scratch: &Path) -> Outcome {
    let mut cmd = line.replace("cargo run --release -p tcplab-cli --", "tcplab");
    if let Some(rest) = cmd.strip_prefix("sudo ") {
        if !is_root() {
            return Err(skip("needs root (a sudo line)"));
        }
        cmd = rest.to_string();
    }
    // Shortened where the command has a duration to shorten (the README's form runs for minutes).
    let (command, comment) = match cmd.split_once(" # ") {
        Some((c, k)) => (c.trim_end().to_string(), format!(" # {k}")),
        None => (cmd.clone(), String::new()),
    };
    let command = if command.starts_with("tcplab bench") {
        format!("{command} --duration 1s")
    } else if command.starts_with("tcplab compare") {
        tcplab_testkit::need(tcplab_emu::check_environment())?;
        format!("{command} --set test.duration=\\\"2s\\\"")
    } else if command.contains("--backend linux") {
        format!("{command} --set test.duration=\\\"500ms\\\"")
    } else {
        command
    };
    let path = format!("{}:{}", bin_dir(scratch).display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", &format!("{command}{comment}")])
        .current_dir(scratch)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "README example failed ({:?}): {command}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(())
}

/// The README's sample output (the block that starts with `$ tcplab ...`) is what the command prints.
fn the_readme_table_is_what_tcplab_prints() {
    let md = readme();
    let (_, body) = blocks(&md).into_iter().find(|(_, b)| b.starts_with("$ tcplab ")).expect("a sample output");
    let (first, shown) = body.split_once('\n').unwrap();
    let args: Vec<&str> = first.trim_start_matches("$ tcplab ").split_whitespace().collect();
    let out = Command::new(assert_cmd::cargo::cargo_bin("tcplab")).args(&args).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), shown, "README.md shows another table than `{first}` prints");
}

/// The README's test command is the suite this file belongs to, so it is not run from here; CI runs it, and
/// it must be the very command `.ci/run` ends with.
fn the_readme_test_command_is_what_ci_runs() {
    let tests: Vec<String> = commands(&readme()).into_iter().filter(|l| l.starts_with("cargo test")).collect();
    assert_eq!(tests.len(), 1, "the README should show one test command, found {tests:?}");
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/run")).unwrap();
    let last = ci.lines().rev().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap();
    assert_eq!(last, tests[0], ".ci/run must end with the README's test command");
}

fn main() -> std::process::ExitCode {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    let mut tests =
        vec![tcplab_testkit::test("the_readme_table_is_what_tcplab_prints", the_readme_table_is_what_tcplab_prints)];
    // The lines depend on each other's files: one test, in README order, per line, run by one thread.
    let lines = commands(&readme());
    assert!(lines.len() > 20, "the README's examples were not found");
    tests
        .push(tcplab_testkit::test("the_readme_test_command_is_what_ci_runs", the_readme_test_command_is_what_ci_runs));
    for (i, line) in lines.iter().enumerate().filter(|(_, l)| !l.starts_with("cargo test")) {
        let (line, dir) = (line.clone(), dir.clone());
        let name = format!("readme_line_{:02}: {}", i + 1, line.split(" # ").next().unwrap_or(&line).trim());
        tests.push(tcplab_testkit::test(name, move || run_line(&line, &dir)));
    }
    // Lines run in order on one thread: later lines read what earlier ones wrote.
    let mut args = tcplab_testkit::libtest_mimic::Arguments::from_args();
    args.test_threads = Some(1);
    let code = tcplab_testkit::libtest_mimic::run(&args, tests).exit_code();
    drop(scratch);
    code
}
