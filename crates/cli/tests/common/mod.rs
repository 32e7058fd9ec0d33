//! What the Linux-backend tests of the binary share: whether the backend can run here, and a run that
//! must leave no namespace of its own behind.

use std::process::{Command, Output, Stdio};

use tcplab_testkit::{need, Outcome};

/// The Linux backend can run here; else a skip saying why not.
pub fn linux_ready() -> Outcome {
    need(tcplab_emu::check_environment())
}

/// The namespaces a finished tcplab process (its pid) left behind: none, when clean-up did its work.
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let prefix = format!("tcplab-{pid}-");
    std::fs::read_dir("/run/netns")
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with(&prefix)).collect())
        .unwrap_or_default()
}

/// Runs tcplab to the end and checks that it left no namespace of its own.
pub fn run_clean(args: &[&str]) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_tcplab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcplab starts");
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(namespaces_of(pid), Vec::<String>::new(), "namespaces left by {args:?}");
    out
}
