//! Shared by the Linux-backend tests: they need Linux and root. Elsewhere they print why and pass, except
#![allow(dead_code)] // each test binary uses its own subset
//! under CI=true, where a missing requirement is a failure.

use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};

pub fn ready() -> bool {
    match tcplab_emu::check_environment() {
        Ok(()) => true,
        Err(e) => skip(&e.to_string()),
    }
}

/// Skips (prints the reason) outside CI; fails under CI=true.
pub fn skip(reason: &str) -> bool {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("CI=true and this test cannot run: {reason}");
    }
    eprintln!("skipping: {reason}");
    false
}

pub fn program_exists(p: &str) -> bool {
    std::process::Command::new(p).arg("--version").output().is_ok()
}

pub fn link(rate: &str, delay: &str, queue: &str) -> LinkConfig {
    LinkConfig {
        rate: rate.parse().unwrap(),
        delay: delay.parse().unwrap(),
        queue: queue.parse::<QueueLimit>().unwrap(),
        framing: Framing::Ethernet,
        loss: LossModel::None,
        mtu: None,
        tick: None,
        idle_credit: tcplab_link::IdleCredit::Dropped,
    }
}

/// The most TCP payload a link of `bps` can carry: every 1448-byte segment (MSS 1460 minus the 12-byte
/// timestamp option) costs a 1500-byte IPv4 datagram plus 38 bytes of Ethernet framing on the wire.
pub fn bound_bps(bps: f64) -> f64 {
    bps * 1448.0 / 1538.0
}

/// Starts this test binary again running only `test` with `env` set (a child that builds a testbed,
/// prints `NAMES CLIENT SERVER` and waits to be signalled or killed); returns it with the namespaces'
/// names once it has printed them.
#[allow(dead_code)]
pub fn start_child_testbed(test: &str, env: (&str, &std::ffi::OsStr)) -> (std::process::Child, Vec<String>) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut names = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some((_, rest)) = line.split_once("NAMES ") {
            names = rest.split_whitespace().map(String::from).collect();
            break;
        }
    }
    assert_eq!(names.len(), 2, "the child did not start a testbed");
    (child, names)
}
