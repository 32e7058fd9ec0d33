//! What the Linux-backend tests of the binary share: whether the backend can run here, a run that
//! must leave no namespace of its own behind, and the two-stream bottleneck scenario the qdisc and the
//! queue-series tests run.

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

/// Two CUBIC streams through 10 Mbit/s and 20 ms each way, a 1000-packet limit, 1 MiB socket buffers:
/// enough window to fill a FIFO (bufferbloat), so that an AQM has a queue to manage and the queue over
/// time shows it. 4 s; a test sets its own duration, `test.series` or qdisc with `--set`.
pub const TWO_STREAMS: &str = "name = \"two-streams\"
[path.up]
rate = \"10mbit\"
delay = \"20ms\"
queue = \"1000pkt\"
[client]
stack = \"linux\"
[server]
stack = \"linux\"
[test]
kind = \"tcp_stream\"
duration = \"4s\"
parallel = 2
message = \"16KiB\"
send_buffer = \"1MiB\"
recv_buffer = \"1MiB\"
";

/// Runs `tcplab CMD FILE EXTRA...` through [`run_clean`] on a file holding `text`, and checks that it
/// succeeded.
pub fn run_on(cmd: &str, text: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    let mut args = vec![cmd, file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run_clean(&args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}
