//! The harness of the test files whose tests need root, Linux network namespaces or an outside tool
//! (`tshark`, `chromium`, `flent`, `iperf3`, `ping`). libtest has no way for a running test to say "I
//! cannot run here": such a test used to print its reason into the captured output and pass, so
//! `cargo test` showed "ok" for something it never checked. Under this harness (libtest-mimic) a test
//! returns [`Outcome`]: `Err(Skip)` is reported as **ignored, with its reason**, in the ordinary summary
//! (`test every_tap_reads_back_whole_and_clean ... ignored (tshark is not on the PATH: install Debian's tshark)`, and
//! `N ignored` in the totals); under `CI=true` it is a failure instead, so CI never passes a check it
//! did not make.
//!
//! A test file adopts it with `harness = false` for its target in Cargo.toml, plain functions (no
//! `#[test]`), and a list at its end (docs/testing.md):
//!
//! ```text
//! fn trace_reads_back() -> tcplab_testkit::Outcome {
//!     tcplab_testkit::need_tool("tshark", "install Debian's tshark")?;
//!     // ... the test, asserting as usual ...
//!     Ok(())
//! }
//! fn parses() { /* a test that always runs may return () */ }
//! tcplab_testkit::main!(trace_reads_back, parses);
//! ```
//!
//! The command line is libtest's (`--exact NAME`, `--test-threads`, `--list`, `--ignored`, filters).
//! Output is not captured: what a test prints shows as it runs.

use std::fmt;

pub use libtest_mimic;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// Why a test did not check anything here: it cannot run on this machine (a missing tool, not root, no
/// network namespaces), or it ran but no run was fit to judge ([`inconclusive`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub reason: String,
    /// The test ran, but this machine could not keep the real time its measurement needs in any of its
    /// runs: reported as ignored under CI too (the machine, not a missing install, is at fault).
    pub inconclusive: bool,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What a test that may not be able to run returns: `Ok(())` when it ran (its asserts passed), `Err(Skip)`
/// when it could not run here.
pub type Outcome = Result<(), Skip>;

/// A test that cannot run here, for the reason given.
pub fn skip(reason: impl Into<String>) -> Skip {
    Skip { reason: reason.into(), inconclusive: false }
}

/// A test that ran but whose every run the machine spoiled (the emulator's health invalid: releases late, a
/// thread stalled), for the reason given: reported as ignored, with "inconclusive: " before the reason,
/// under CI as elsewhere. Only [`realtime`] should need it.
pub fn inconclusive(reason: impl Into<String>) -> Skip {
    Skip { reason: reason.into(), inconclusive: true }
}

/// Why a real-time run is not the one [`realtime`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rerun {
    /// The machine did not keep real time (the emulator's health names why): the run measured the VM.
    Unfit(String),
    /// The run was fit to judge and missed a bound that a busy machine can still make it miss (a
    /// wake-up of the test's own threads, which the emulator's health does not see): run again, and fail if
    /// no run makes it.
    Missed(String),
}

/// Runs a real-time measurement (`run(attempt)`, attempts from 1) until one run is fit and passes, up to
/// `attempts` runs, 1 s apart so that a short slow phase of a shared VM can pass.
/// Returns that run's value. When none passes: a failure naming every run's reason if any run was fit
/// to judge ([`Rerun::Missed`]), else [`inconclusive`] — the machine never kept time, so the test checked
/// nothing, and says so instead of judging a spoiled run.
pub fn realtime<T>(what: &str, attempts: u32, mut run: impl FnMut(u32) -> Result<T, Rerun>) -> Result<T, Skip> {
    let mut reasons = Vec::new();
    for attempt in 1..=attempts {
        if attempt > 1 {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        match run(attempt) {
            Ok(value) => return Ok(value),
            Err(rerun) => {
                eprintln!("{what}: run {attempt} of {attempts} not kept: {rerun:?}");
                reasons.push(rerun);
            }
        }
    }
    let missed: Vec<&String> =
        reasons.iter().filter_map(|r| if let Rerun::Missed(m) = r { Some(m) } else { None }).collect();
    assert!(
        missed.is_empty(),
        "{what}: no run of {attempts} passed; the fit ones missed: {missed:?} (all: {reasons:?})"
    );
    Err(inconclusive(format!("{what}: the machine kept real time in none of {attempts} runs ({reasons:?})")))
}

/// Whether the tests run under CI (`CI=true`), where a test that cannot run is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `Ok` as root (effective uid 0), else a skip that says so and why `what` needs it.
pub fn need_root(what: &str) -> Outcome {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        Ok(())
    } else {
        Err(skip(format!("needs root ({what})")))
    }
}

/// `Ok` when `program --version` runs and succeeds, else a skip naming the program and how to install it.
pub fn need_tool(program: &str, install: &str) -> Outcome {
    let ok = std::process::Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    if ok {
        Ok(())
    } else {
        Err(skip(format!("{program} is not on the PATH: {install}")))
    }
}

/// A check of the environment (`tcplab_emu::check_environment()`), as an outcome: its error is the reason.
pub fn need<E: fmt::Display>(check: Result<(), E>) -> Outcome {
    check.map_err(|e| skip(e.to_string()))
}

/// What a test function may return: nothing (it always runs) or an [`Outcome`].
pub trait IntoOutcome {
    fn into_outcome(self) -> Outcome;
}

impl IntoOutcome for () {
    fn into_outcome(self) -> Outcome {
        Ok(())
    }
}

impl IntoOutcome for Outcome {
    fn into_outcome(self) -> Outcome {
        self
    }
}

/// One test of the list: `name` as libtest would name it.
pub fn test<R: IntoOutcome>(name: impl Into<String>, f: impl FnOnce() -> R + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || completion(f().into_outcome(), in_ci()))
}

/// A test's outcome as the harness reports it: a skip is "ignored" with its reason, or, under CI, a
/// failure that gives the reason; an inconclusive run is "ignored" everywhere.
fn completion(outcome: Outcome, ci: bool) -> Result<Completion, Failed> {
    match outcome {
        Ok(()) => Ok(Completion::Completed),
        Err(Skip { reason, inconclusive: true }) => Ok(Completion::ignored_with(format!("inconclusive: {reason}"))),
        Err(Skip { reason, .. }) if ci => Err(format!("CI=true and this test cannot run: {reason}").into()),
        Err(Skip { reason, .. }) => Ok(Completion::ignored_with(reason)),
    }
}

/// Runs `tests` with libtest's command line and exits with its status (101 if any failed).
pub fn run(tests: Vec<Trial>) -> std::process::ExitCode {
    libtest_mimic::run(&Arguments::from_args(), tests).exit_code()
}

/// Runs `tests` like [`run`], but one at a time unless `--test-threads` says otherwise: for a file whose
/// tests each drive the real-time emulator. Its direction threads run SCHED_FIFO, so on a 2-vCPU machine
/// two testbeds at once take the CPU that the other test's applications and sampler need on time (measured:
/// a 10 ms series sampler missing 10 ticks of 400, an RR client 6% below its round trip, both runs' releases
/// late enough to be invalid), and the timing each test asserts becomes the neighbour's load.
pub fn run_one_at_a_time(tests: Vec<Trial>) -> std::process::ExitCode {
    libtest_mimic::run(&one_at_a_time(Arguments::from_args()), tests).exit_code()
}

/// `args` with one test thread unless the command line named a number.
fn one_at_a_time(mut args: Arguments) -> Arguments {
    args.test_threads.get_or_insert(1);
    args
}

/// The tests of one file of a crate's `system` binary (its files on this harness as modules, so that the
/// crate links one test binary for them instead of one each): what the file's own binary used to run.
pub struct FileTests {
    trials: Vec<Trial>,
    one_at_a_time: bool,
}

impl FileTests {
    /// The file's tests, named `FILE::TEST` as libtest names a module's (`module` is `module_path!()`).
    pub fn new(module: &str, one_at_a_time: bool, tests: Vec<(&str, TestFn)>) -> FileTests {
        let file = module.split_once("::").map_or(module, |(_, rest)| rest);
        let trials = tests.into_iter().map(|(name, f)| test(format!("{file}::{}", name.replace(' ', "")), f)).collect();
        FileTests { trials, one_at_a_time }
    }
}

/// A test function of [`tests!`]'s list, whatever it returns.
pub type TestFn = Box<dyn FnOnce() -> Outcome + Send>;

/// `f` as a [`TestFn`].
pub fn test_fn<R: IntoOutcome>(f: impl FnOnce() -> R + Send + 'static) -> TestFn {
    Box::new(move || f().into_outcome())
}

/// Runs each file's tests as its own binary did, one file after another ([`run`] or
/// [`run_one_at_a_time`]): a file's testbeds never share the machine with another file's, as before. A file
/// whose tests the command line's filter and `--skip` all leave out (libtest-mimic's own test) is not run,
/// so `--test system apps::` prints one summary. Fails if any file's run failed.
pub fn run_files(files: Vec<FileTests>) -> std::process::ExitCode {
    let args = Arguments::from_args();
    let mut failed = false;
    for file in files {
        if file.trials.iter().all(|t| args.is_filtered_out(t)) {
            continue;
        }
        let file_args = if file.one_at_a_time { one_at_a_time(args.clone()) } else { args.clone() };
        failed |= libtest_mimic::run(&file_args, file.trials).has_failed();
    }
    if failed {
        std::process::ExitCode::from(101)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// The `main` of a test file: every test function, by name (`main!(a, b, module::c)`);
/// `main!(one_at_a_time: a, b)` runs them one at a time ([`run_one_at_a_time`]); `main!(files: a, b)` is a
/// crate's `system` binary, whose files `a` and `b` are modules that list their tests in [`tests!`].
#[macro_export]
macro_rules! main {
    (files: $($file:ident),* $(,)?) => {
        fn main() -> std::process::ExitCode {
            $crate::run_files(vec![$($file::tests()),*])
        }
    };
    (one_at_a_time: $($test:path),* $(,)?) => {
        fn main() -> std::process::ExitCode {
            $crate::run_one_at_a_time(vec![$($crate::test(stringify!($test).replace(' ', ""), $test)),*])
        }
    };
    ($($test:path),* $(,)?) => {
        fn main() -> std::process::ExitCode {
            $crate::run(vec![$($crate::test(stringify!($test).replace(' ', ""), $test)),*])
        }
    };
}

/// A file's list of tests inside a crate's `system` binary (see [`main!`]'s `files:`): `tests!(a, b)` or
/// `tests!(one_at_a_time: a, b)`, as the file's `main!` was.
#[macro_export]
macro_rules! tests {
    (one_at_a_time: $($test:path),* $(,)?) => {
        pub(crate) fn tests() -> $crate::FileTests {
            $crate::FileTests::new(module_path!(), true, vec![$((stringify!($test), $crate::test_fn($test))),*])
        }
    };
    ($($test:path),* $(,)?) => {
        pub(crate) fn tests() -> $crate::FileTests {
            $crate::FileTests::new(module_path!(), false, vec![$((stringify!($test), $crate::test_fn($test))),*])
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_tests_are_named_file_then_test_and_filtered_by_that_name() {
        let file = FileTests::new("system::apps", true, vec![("rr_once", test_fn(|| ())), ("crr", test_fn(|| ()))]);
        let names: Vec<&str> = file.trials.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["apps::rr_once", "apps::crr"]);
        assert!(file.one_at_a_time);
        let args = Arguments::from_iter(["system", "apps::"]);
        assert!(!file.trials.iter().any(|t| args.is_filtered_out(t)));
        let args = Arguments::from_iter(["system", "rr::"]);
        assert!(file.trials.iter().all(|t| args.is_filtered_out(t)), "rr:: selects no test of apps");
        assert_eq!(one_at_a_time(Arguments::from_iter(["system"])).test_threads, Some(1));
        assert_eq!(one_at_a_time(Arguments::from_iter(["system", "--test-threads", "2"])).test_threads, Some(2));
    }

    #[test]
    fn a_skip_is_ignored_with_its_reason_and_fails_under_ci() {
        assert!(matches!(completion(Ok(()), false), Ok(Completion::Completed)));
        match completion(Err(skip("tshark is not on the PATH")), false) {
            Ok(Completion::Ignored { reason }) => assert_eq!(reason.as_deref(), Some("tshark is not on the PATH")),
            _ => panic!("a skip outside CI is ignored with its reason"),
        }
        let Err(failed) = completion(Err(skip("needs root")), true) else { panic!("a skip under CI fails") };
        assert_eq!(failed.message(), Some("CI=true and this test cannot run: needs root"));
        assert!(need_tool("tcplab-no-such-program", "it does not exist")
            .unwrap_err()
            .reason
            .contains("not on the PATH"));
    }

    #[test]
    fn an_inconclusive_test_is_ignored_under_ci_too() {
        for ci in [false, true] {
            match completion(Err(inconclusive("no run kept real time")), ci) {
                Ok(Completion::Ignored { reason }) => {
                    assert_eq!(reason.as_deref(), Some("inconclusive: no run kept real time"))
                }
                _ => panic!("an inconclusive test is ignored (CI {ci})"),
            }
        }
    }

    #[test]
    fn realtime_returns_the_first_fit_run_and_fails_only_on_a_fit_miss() {
        let mut runs = 0;
        let value = realtime("t", 3, |attempt| {
            runs += 1;
            if attempt == 1 {
                Err(Rerun::Unfit("late".into()))
            } else {
                Ok(attempt)
            }
        });
        assert_eq!((value, runs), (Ok(2), 2));
        let all_unfit = realtime("t", 2, |_| Err::<(), _>(Rerun::Unfit("stalled".into()))).unwrap_err();
        assert!(all_unfit.inconclusive && all_unfit.reason.contains("none of 2 runs"), "{all_unfit:?}");
        let missed = std::panic::catch_unwind(|| {
            let mut first = true;
            realtime("t", 2, |_| {
                let r = if first { Rerun::Missed("p90 6 ms".into()) } else { Rerun::Unfit("late".into()) };
                first = false;
                Err::<(), _>(r)
            })
        });
        assert!(missed.is_err(), "a fit run that missed fails the test even when the others were unfit");
    }
}
