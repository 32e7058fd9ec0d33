//! Item 3 of issue 22: SIGINT, SIGTERM and SIGHUP remove every temporary before the process dies (of
//! the signal, as before), and run the hooks registered for them.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_DIR: &str = "TCPLAB_FILES_SIGNAL_CHILD_DIR";

fn hook() {
    if let Ok(dir) = std::env::var(CHILD_DIR) {
        let _ = std::fs::write(Path::new(&dir).join("hook-ran"), "yes");
    }
}

/// Not a test of its own: the child the test below signals. It holds two outputs and a bare temporary
/// half written, as a run does in the middle of writing its JSON and its trace.
#[test]
fn child_writing_outputs() {
    let Ok(dir) = std::env::var(CHILD_DIR) else { return };
    let dir = Path::new(&dir);
    tcplab_files::on_exit_signal(hook);
    let mut json = tcplab_files::Output::create(&dir.join("result.json")).unwrap();
    json.write_all(&vec![b' '; 8 << 20]).unwrap();
    let mut pcap = tcplab_files::Output::create(&dir.join("trace.pcap")).unwrap();
    pcap.write_all(b"partial").unwrap();
    let _part = tcplab_files::Temp::new_in(dir).unwrap();
    println!("READY");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(60));
    unreachable!("the signal should have ended this process");
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    v.sort();
    v
}

#[test]
fn exit_signals_remove_every_temporary() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_writing_outputs", "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let ready = BufReader::new(out).lines().map_while(Result::ok).any(|l| l.contains("READY"));
        assert!(ready, "the child did not get ready");
        assert_eq!(
            entries(dir.path()).iter().filter(|n| n.starts_with(tcplab_files::TEMP_PREFIX)).count(),
            3,
            "the child's temporaries should exist before the signal: {:?}",
            entries(dir.path())
        );
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "the child should still die of signal {sig}");
        assert_eq!(entries(dir.path()), vec!["hook-ran".to_string()], "signal {sig} left files behind");
    }
}
