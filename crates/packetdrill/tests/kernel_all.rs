//! Every script of ours (crates/packetdrill/scripts) against this machine's kernel: each states what
//! Linux does, so each must pass there as it passes on the simulator (tests/scripts.rs). Wall-clock
//! timing on a loaded machine is the one thing retried: a script that fails with a timing error runs
//! again, at most twice more; any other failure, or a third timing error, fails the test. Needs root and
//! /dev/net/tun (skipped with the reason otherwise; a failure under CI=true). Off Linux the file has no
//! tests.

#[cfg(not(target_os = "linux"))]
tcplab_testkit::tests!();
#[cfg(target_os = "linux")]
tcplab_testkit::tests!(every_script_of_ours_passes_on_the_kernel);

#[cfg(target_os = "linux")]
use on_linux::*;

#[cfg(target_os = "linux")]
mod on_linux {
    use std::path::Path;

    use tcplab_packetdrill::report::{run_text_on, BackendKind};
    use tcplab_tcp::TcpConfig;
    use tcplab_testkit::{skip, Outcome};

    /// Runs of a script that failed with a timing error, in all (the retry policy of docs/packetdrill.md).
    const TIMING_ATTEMPTS: usize = 3;

    pub fn every_script_of_ours_passes_on_the_kernel() -> Outcome {
        if let Some(why) = tcplab_packetdrill::kernel::unavailable() {
            return Err(skip(format!("the kernel backend cannot run here: {why}")));
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("the scripts folder is readable")
            .map(|e| e.expect("a folder entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "pkt"))
            .collect();
        names.sort();
        assert!(names.len() >= 40, "only {} scripts", names.len());
        let base = TcpConfig::personality("linux").expect("the linux personality exists");
        let mut failures = Vec::new();
        for path in &names {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(path).expect("a script is readable");
            let mut r = run_text_on(BackendKind::Linux, &name, &text, &base);
            for _ in 1..TIMING_ATTEMPTS {
                let timing = r.status == "fail" && r.reason.as_deref().is_some_and(|m| m.starts_with("timing error"));
                if !timing {
                    break;
                }
                r = run_text_on(BackendKind::Linux, &name, &text, &base);
            }
            if r.status != "pass" {
                failures.push(format!("{name}: {} at line {:?}: {:?}", r.status, r.line, r.reason));
            }
        }
        assert!(failures.is_empty(), "on the kernel:\n{}", failures.join("\n"));
        Ok(())
    }
}
