//! Safe as root (issue 22, items 2-5): the trace's temporaries are created exclusively with names no one
//! can plant in advance; SIGINT/SIGTERM/SIGHUP remove them and a SIGKILLed run's are removed by the next
//! run; the sweep of leftover namespaces removes only those this program provably made and kills
//! nothing; root without CAP_SYS_ADMIN or CAP_NET_ADMIN is told which is missing before anything starts.

// Uses `Testbed`, which exists on Linux only.

mod common;

use std::os::unix::fs::symlink;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};

use tcplab_emu::{existing_namespaces, PcapSpec, PcapTap, Testbed, TestbedSpec};
use tcplab_testkit::{test, Outcome};

const CHILD_PCAP: &str = "TCPLAB_EMU_SAFETY_CHILD_PCAP";
const CHILD_CAPS: &str = "TCPLAB_EMU_SAFETY_CHILD_CAPS";

fn spec_with_pcap(path: &Path) -> TestbedSpec {
    let mut spec = TestbedSpec::symmetric(common::link("10mbit", "5ms", "100pkt"));
    spec.emulator.pcap = Some(PcapSpec { path: path.to_path_buf(), tap: PcapTap::Client, snaplen: 65_535 });
    spec
}

/// Files in `dir` named like tcplab's temporaries.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| tcplab_files::parse_temp_name(n).is_some())
        .collect();
    v.sort();
    v
}

/// A pid that ran and is gone.
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

/// Item 2: links planted at the names the backend's parts used to have (`FILE.tcplab-PID-K.part`,
/// `FILE.tcplab-PID.part`) made a root run overwrite the files they pointed to. The parts now have
/// unpredictable names created exclusively; the planted links and their victims are untouched, the
/// trace is a regular file, and no part is left. A stale part of a dead run in the same directory is
/// removed; a file merely named like one (wrong pattern) is not.
fn planted_links_at_part_names_are_never_followed() -> Outcome {
    common::ready()?;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.pcap");
    let pid = std::process::id();
    let mut victims = Vec::new();
    for (i, suffix) in ["-0.part", "-3.part", ".part"].iter().enumerate() {
        let victim = dir.path().join(format!("victim-{i}"));
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, dir.path().join(format!("trace.pcap.tcplab-{pid}{suffix}"))).unwrap();
        victims.push(victim);
    }
    let stale = dir.path().join(format!(".tcplab-{}-1-abcdefABCDEF.part", dead_pid()));
    std::fs::write(&stale, "stale part of a SIGKILLed run").unwrap();
    let lookalike = dir.path().join(format!(".tcplab-{}-1-short.part", dead_pid()));
    std::fs::write(&lookalike, "not ours").unwrap();

    let mut tb = Testbed::start(&spec_with_pcap(&trace)).unwrap();
    tb.ping(3, "0.2").ok();
    tb.finish().unwrap();
    drop(tb);

    for v in &victims {
        assert_eq!(std::fs::read_to_string(v).unwrap(), "precious", "{} was written through", v.display());
    }
    for (i, suffix) in ["-0.part", "-3.part", ".part"].iter().enumerate() {
        let l = dir.path().join(format!("trace.pcap.tcplab-{pid}{suffix}"));
        assert_eq!(std::fs::read_link(&l).unwrap(), victims[i], "the planted link changed");
    }
    let m = std::fs::symlink_metadata(&trace).unwrap();
    assert!(m.file_type().is_file(), "the trace is a regular file");
    let bytes = std::fs::read(&trace).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[0..4].try_into().unwrap()), 0xa1b2_3c4d, "a pcap file");
    assert!(!stale.exists(), "the dead run's stale part was not removed");
    assert!(lookalike.exists(), "a file not matching the pattern exactly was removed");
    assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "parts left behind");
    Ok(())
}

/// Not a test of its own: a process holding a testbed whose trace is being taken (into `path`), for the
/// tests below to signal.
fn child_taking_a_trace(path: &str) {
    let tb = Testbed::start(&spec_with_pcap(Path::new(path))).unwrap();
    let [c, s] = tb.names();
    println!("NAMES {c} {s}");
    std::thread::sleep(std::time::Duration::from_secs(600));
    drop(tb);
}

fn start_child(trace: &Path) -> (Child, Vec<String>) {
    common::start_child_testbed((CHILD_PCAP, trace.as_os_str()))
}

/// Item 3: SIGINT, SIGTERM and SIGHUP remove the trace's temporaries (and the namespaces) before the
/// process dies of the signal; after SIGKILL they stay until the next run into the directory removes
/// them.
fn interrupted_runs_leave_no_parts() -> Outcome {
    common::ready()?;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.pcap");
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let (mut child, names) = start_child(&trace);
        // The client tap needs two record streams, and the trace's own temporary: three files.
        assert_eq!(temporaries(dir.path()).len(), 3, "{:?}", temporaries(dir.path()));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "the child should die of signal {sig}");
        assert_eq!(temporaries(dir.path()), Vec::<String>::new(), "signal {sig} left parts behind");
        assert!(!trace.exists(), "an interrupted run left a trace");
        let left = existing_namespaces();
        assert!(names.iter().all(|n| !left.contains(n)), "signal {sig} left namespaces: {left:?}");
    }
    let (mut child, _) = start_child(&trace);
    child.kill().unwrap(); // SIGKILL: nothing runs
    child.wait().unwrap();
    assert_eq!(temporaries(dir.path()).len(), 3, "SIGKILL leaves the parts (nothing can run)");
    let mut tb = Testbed::start(&spec_with_pcap(&dir.path().join("next.pcap"))).unwrap();
    assert_eq!(temporaries(dir.path()).len(), 3, "the next run removed the stale parts and made its own 3");
    tb.finish().unwrap();
    drop(tb);
    assert_eq!(temporaries(dir.path()), Vec::<String>::new());
    assert!(dir.path().join("next.pcap").exists());
    Ok(())
}

fn ip(args: &[&str]) -> std::process::Output {
    Command::new("ip").args(args).output().unwrap()
}

/// Item 4: a namespace named like tcplab's by someone else (`ip netns add tcplab-1-0-mine`) with a
/// process inside, one named exactly like a dead run's but made by hand, and one with a marker whose
/// namespace was replaced since, all survive the next run, and the process inside keeps running.
fn the_sweep_leaves_foreign_namespaces_and_their_processes_alone() -> Outcome {
    common::ready()?;
    let dead = dead_pid();
    let foreign = ["tcplab-1-0-mine".to_string(), format!("tcplab-{dead}-1-0-c"), format!("tcplab-{dead}-1-1-c")];
    for n in &foreign {
        let _ = ip(&["netns", "del", n]);
        assert!(ip(&["netns", "add", n]).status.success(), "ip netns add {n}");
    }
    // A marker for the third, as a dead run of ours would have left, but for another namespace (its
    // inode does not match the namespace now at that name).
    std::fs::create_dir_all("/run/tcplab/netns").unwrap();
    let marker = format!("/run/tcplab/netns/{}", foreign[2]);
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    std::fs::write(
        &marker,
        format!("tcplab netns marker 1\npid={dead}\nstart=1\nboot={}\ndev=1\nino=1\n", boot.trim()),
    )
    .unwrap();
    let mut inside = Command::new("ip").args(["netns", "exec", &foreign[0], "sleep", "600"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));

    let removed = tcplab_emu::sweep_leftovers();
    let tb = Testbed::start(&TestbedSpec::symmetric(common::link("10mbit", "5ms", "100pkt"))).unwrap();
    drop(tb);

    let list = String::from_utf8(ip(&["netns", "list"]).stdout).unwrap();
    let alive = inside.try_wait().unwrap().is_none();
    let _ = inside.kill();
    let _ = inside.wait();
    for n in &foreign {
        let _ = ip(&["netns", "del", n]);
    }
    for n in &foreign {
        assert!(!removed.contains(n), "the sweep removed {n}");
        assert!(list.contains(n.as_str()), "{n} was removed: {list}");
    }
    assert!(alive, "the process inside tcplab-1-0-mine was killed");
    assert!(!Path::new(&marker).exists(), "a marker that does not match its namespace is dropped");
    Ok(())
}

/// Not a test of its own: prints what `check_environment` says in a process started with a capability
/// dropped from its bounding set.
fn child_checking_capabilities() {
    match tcplab_emu::check_environment() {
        Ok(()) => println!("CHECK ok"),
        Err(e) => println!("CHECK {e}"),
    }
}

/// Item 5: root without CAP_SYS_ADMIN or without CAP_NET_ADMIN is told which one it lacks (and what
/// for) before anything is created, instead of a mount error later.
fn root_without_a_needed_capability_is_told_which() -> Outcome {
    common::ready()?;
    for (cap, name, other) in [(21, "CAP_SYS_ADMIN", "CAP_NET_ADMIN"), (12, "CAP_NET_ADMIN", "CAP_SYS_ADMIN")] {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.env(CHILD_CAPS, "1").stderr(Stdio::null());
        // SAFETY: prctl is async-signal-safe. Root's exec gives it the bounding set, now without `cap`.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.split_once("CHECK ").map(|(_, r)| r))
            .unwrap_or_else(|| panic!("no CHECK line: {text}"));
        assert!(line.contains(&format!("lacks {name} (not in the effective set")), "{line}");
        assert!(!line.contains(&format!("lacks {other}")), "{line}");
        assert!(line.contains("--cap-add"), "{line}");
    }
    // The parsing on its own: a full set, and an empty one naming both.
    let full = "Name:\tx\nCapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";
    assert_eq!(tcplab_emu::netns::missing_capabilities(full), Vec::<String>::new());
    let none = "CapEff:\t0000000000000000\nCapBnd:\t000001ffffffffff\n";
    let m = tcplab_emu::netns::missing_capabilities(none);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(m[0].starts_with("CAP_SYS_ADMIN") && m[1].starts_with("CAP_NET_ADMIN"), "{m:?}");
    Ok(())
}

fn main() -> ExitCode {
    // The children the tests start: this binary again, told which by its environment.
    if let Some(path) = std::env::var_os(CHILD_PCAP) {
        child_taking_a_trace(path.to_str().expect("a UTF-8 trace path"));
        return ExitCode::SUCCESS;
    }
    if std::env::var_os(CHILD_CAPS).is_some() {
        child_checking_capabilities();
        return ExitCode::SUCCESS;
    }
    tcplab_testkit::run(vec![
        test("planted_links_at_part_names_are_never_followed", planted_links_at_part_names_are_never_followed),
        test("interrupted_runs_leave_no_parts", interrupted_runs_leave_no_parts),
        test(
            "the_sweep_leaves_foreign_namespaces_and_their_processes_alone",
            the_sweep_leaves_foreign_namespaces_and_their_processes_alone,
        ),
        test("root_without_a_needed_capability_is_told_which", root_without_a_needed_capability_is_told_which),
    ])
}
