//! Clean-up is part of correctness: a run killed with SIGKILL leaves namespaces behind (its TUN devices
//! die with its fds) and the next run removes them; SIGINT (Ctrl-C) cleans up at once; nothing ever
//! appears among the host's own interfaces.

// Uses `Testbed`, which exists on Linux only.

mod common;

use std::process::{Child, Command, ExitCode};

use tcplab_emu::{existing_namespaces, Side, Testbed, TestbedSpec};
use tcplab_testkit::{test, Outcome};

const CHILD_ENV: &str = "TCPLAB_EMU_CLEANUP_CHILD";

/// Not a test of its own: the body of the child process the tests below start and kill (this binary
/// again, with `CHILD_ENV` set).
fn child_process_holding_a_testbed() {
    let tb = Testbed::start(&TestbedSpec::symmetric(common::link("10mbit", "5ms", "100pkt"))).unwrap();
    // A process inside the server namespace, as a workload's server would be.
    let mut sleeper = tb.command(Side::Server, "sleep").arg("600").spawn().unwrap();
    let [c, s] = tb.names();
    println!("NAMES {c} {s}");
    std::thread::sleep(std::time::Duration::from_secs(600));
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

fn start_child() -> (Child, Vec<String>) {
    common::start_child_testbed((CHILD_ENV, "1".as_ref()))
}

fn ip_netns_list() -> String {
    String::from_utf8(Command::new("ip").args(["netns", "list"]).output().unwrap().stdout).unwrap()
}

fn host_links() -> String {
    String::from_utf8(Command::new("ip").args(["-o", "link"]).output().unwrap().stdout).unwrap()
}

fn a_sigkilled_run_is_removed_by_the_next_run() -> Outcome {
    common::ready()?;
    let links_before = host_links();
    let (mut child, names) = start_child();
    for n in &names {
        assert!(ip_netns_list().contains(n.as_str()));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    for n in &names {
        assert!(existing_namespaces().contains(n), "{n} should be left over until the next run");
    }
    // The next run sweeps the leftovers before creating its own namespaces.
    let tb = Testbed::start(&TestbedSpec::symmetric(common::link("10mbit", "5ms", "100pkt"))).unwrap();
    let list = ip_netns_list();
    for n in &names {
        assert!(!list.contains(n.as_str()), "{n} survived the next run: {list}");
    }
    drop(tb);
    assert_eq!(host_links(), links_before, "the host's interfaces changed");
    let mine = format!("tcplab-{}-", std::process::id());
    assert!(!ip_netns_list().contains(&mine), "this run's namespaces survived: {}", ip_netns_list());
    // The process that was inside the killed run's namespace is gone too.
    let ps = Command::new("pgrep").args(["-f", "^sleep 600$"]).output().map(|o| o.stdout).unwrap_or_default();
    assert!(ps.is_empty(), "a process from the killed run survived");
    Ok(())
}

fn ctrl_c_removes_the_run_at_once() -> Outcome {
    common::ready()?;
    let (mut child, names) = start_child();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "the child should still die of the signal");
    let list = ip_netns_list();
    for n in &names {
        assert!(!list.contains(n.as_str()), "{n} left behind after SIGINT: {list}");
    }
    Ok(())
}

fn main() -> ExitCode {
    if std::env::var_os(CHILD_ENV).is_some() {
        child_process_holding_a_testbed();
        return ExitCode::SUCCESS;
    }
    tcplab_testkit::run(vec![
        test("a_sigkilled_run_is_removed_by_the_next_run", a_sigkilled_run_is_removed_by_the_next_run),
        test("ctrl_c_removes_the_run_at_once", ctrl_c_removes_the_run_at_once),
    ])
}
