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

#[test]
fn a_knob_linux_cannot_express_is_refused_before_the_simulator_runs() {
    // crr-ports shortens TIME-WAIT to 1 s; the kernel's is fixed at 60 s.
    let e = stderr_of(&["compare", "crr-ports"]);
    assert!(e.contains("client.tcp.time_wait") && e.contains("60s"), "{e}");
}

#[test]
fn what_the_backend_lacks_is_named() {
    let e = stderr_of(&["compare", "bulk-10m", "--set", "client.host.nic_rate=\"1gbit\""]);
    assert!(e.contains("client.host.nic_rate"), "{e}");
    let e = stderr_of(&["compare", "rdp-loopback"]);
    assert!(e.contains("test.kind") && e.contains("tcp_crr"), "{e}");
    let e = stderr_of(&["compare", "bulk-10m", "--set", "test.series=\"100ms\""]);
    assert!(e.contains("test.series"), "{e}");
    let e = stderr_of(&["compare", "bulk-10m", "--runs", "0"]);
    assert!(e.contains("--runs"), "{e}");
}
