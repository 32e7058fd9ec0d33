//! Shared by the Linux-backend tests: they need Linux and root, and run under tcplab-testkit's harness,
//! which reports a test that cannot run here as ignored with its reason (a failure under CI=true).
#![allow(dead_code)] // each test binary uses its own subset

use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};
use tcplab_testkit::{need, skip, Outcome};

/// The Linux backend can run here (Linux, root, the capabilities, `ip`); else a skip saying what is missing.
pub fn ready() -> Outcome {
    need(tcplab_emu::check_environment())
}

/// `program` can be started, whatever it answers: iputils' `ping` has no `--version` (it exits 2), so
/// `tcplab_testkit::need_tool` cannot ask it.
pub fn need_program(program: &str, install: &str) -> Outcome {
    match std::process::Command::new(program).arg("-V").output() {
        Ok(_) => Ok(()),
        Err(_) => Err(skip(format!("{program} is not on the PATH: {install}"))),
    }
}

pub fn link(rate: &str, delay: &str, queue: &str) -> LinkConfig {
    LinkConfig {
        rate: rate.parse().unwrap(),
        delay: delay.parse().unwrap(),
        queue: queue.parse::<QueueLimit>().unwrap(),
        framing: Framing::Ethernet,
        loss: LossModel::None {},
        mtu: None,
        tick: None,
        idle_credit: tcplab_link::IdleCredit::Dropped,
        qdisc: Default::default(),
        jitter: None,
        reorder: false,
    }
}

/// The most TCP payload a link of `bps` can carry: every 1448-byte segment (MSS 1460 minus the 12-byte
/// timestamp option) costs a 1500-byte IPv4 datagram plus 38 bytes of Ethernet framing on the wire.
pub fn bound_bps(bps: f64) -> f64 {
    bps * 1448.0 / 1538.0
}

/// Starts this test binary again with `env` set, which its `main` takes for the body of a child that
/// builds a testbed, prints `NAMES CLIENT SERVER` and waits to be signalled or killed; returns it with the
/// namespaces' names once it has printed them.
pub fn start_child_testbed(env: (&str, &std::ffi::OsStr)) -> (std::process::Child, Vec<String>) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::current_exe().unwrap())
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
