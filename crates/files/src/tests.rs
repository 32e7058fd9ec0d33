use super::*;
use std::io::Read;
use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};

fn temps_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(TEMP_PREFIX))
        .collect()
}

/// Item 1 of issue 22: `--json link.json` with link.json → real.json replaced the link and left
/// real.json alone. Now the file the link names is replaced, atomically there, and the link stays.
#[test]
fn a_symlink_is_written_through_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    symlink("real.json", &link).unwrap();
    write_file(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640, "the file's mode is kept");
    // A chain of links, and a link whose destination does not exist yet (created in its directory).
    let chain = dir.path().join("chain");
    symlink(&link, &chain).unwrap();
    write_file(&chain, b"third").unwrap();
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "third");
    let dangling = dir.path().join("dangling");
    symlink("made.json", &dangling).unwrap();
    write_file(&dangling, b"made").unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("made.json")).unwrap(), "made");
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    // A new file is 0644; no temporary is left anywhere.
    write_file(&dir.path().join("fresh.json"), b"x").unwrap();
    assert_eq!(std::fs::metadata(dir.path().join("fresh.json")).unwrap().permissions().mode() & 0o777, 0o644);
    assert_eq!(temps_in(dir.path()), Vec::<String>::new());
}

/// A link into a missing directory, a directory, a loop: refused with a reason.
#[test]
fn what_cannot_hold_a_result_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_file(dir.path(), b"x").unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    let to_dir = dir.path().join("to-dir");
    symlink(dir.path(), &to_dir).unwrap();
    let err = write_file(&to_dir, b"x").unwrap_err();
    assert!(err.to_string().contains("is a directory (the link leads to"), "{err}");
    let nowhere = dir.path().join("nowhere");
    symlink("/nonexistent-tcplab-dir/x.json", &nowhere).unwrap();
    let err = write_file(&nowhere, b"x").unwrap_err();
    assert!(err.to_string().contains("symbolic link to /nonexistent-tcplab-dir/x.json"), "{err}");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    symlink(&b, &a).unwrap();
    symlink(&a, &b).unwrap();
    let err = write_file(&a, b"x").unwrap_err();
    assert!(err.to_string().contains("too many levels"), "{err}");
    let err = write_file(&dir.path().join("no-such-dir/x.json"), b"x").unwrap_err();
    assert!(err.to_string().contains("no-such-dir"), "{err}");
    // A block device, where one exists to look at (nothing is opened).
    let block = std::fs::read_dir("/dev").ok().and_then(|d| {
        d.flatten()
            .find(|e| std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.file_type().is_block_device()))
            .map(|e| e.path())
    });
    match block {
        Some(b) => {
            let err = resolve(&b).unwrap_err();
            assert!(err.to_string().contains("block device"), "{err}");
        }
        None => eprintln!("note: no block device in /dev to check the refusal on"),
    }
    assert_eq!(temps_in(dir.path()), Vec::<String>::new());
}

/// `/dev/stdout`, `/dev/fd/N` and `/proc/self/fd/N` name a descriptor: the bytes go through it (a pipe
/// here) and nothing is created or renamed.
#[test]
fn descriptor_paths_are_written_through_the_descriptor() {
    assert_eq!(resolve(Path::new("/dev/stdout")).unwrap(), Resolved::Fd(1));
    assert_eq!(resolve(Path::new("/dev/stderr")).unwrap(), Resolved::Fd(2));
    assert_eq!(resolve(Path::new(&format!("/proc/{}/fd/7", std::process::id()))).unwrap(), Resolved::Fd(7));
    for form in ["/dev/fd/{}", "/proc/self/fd/{}"] {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for two descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors are fresh and owned here.
        let (mut rd, wr) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        let path = form.replace("{}", &fds[1].to_string());
        write_file(Path::new(&path), b"through the pipe\n").unwrap();
        drop(wr);
        let mut text = String::new();
        rd.read_to_string(&mut text).unwrap();
        assert_eq!(text, "through the pipe\n", "{path}");
    }
    let err = write_file(Path::new("/dev/fd/987654"), b"x").unwrap_err();
    assert!(err.to_string().contains("descriptor 987654 is not open"), "{err}");
}

/// A FIFO (reached through a link too) is written into and stays a FIFO; so does /dev/null.
#[test]
fn a_fifo_and_a_character_device_are_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let link = dir.path().join("to-fifo");
    symlink(&fifo, &link).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            File::open(fifo).unwrap().read_to_string(&mut text).unwrap();
            text
        })
    };
    write_file(&link, b"{\"a\": 1}\n").unwrap();
    assert_eq!(reader.join().unwrap(), "{\"a\": 1}\n");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    write_file(Path::new("/dev/null"), b"discarded").unwrap();
    assert!(std::fs::symlink_metadata("/dev/null").unwrap().file_type().is_char_device());
    assert_eq!(temps_in(dir.path()), Vec::<String>::new());
}

/// An output dropped before `commit` leaves nothing: neither the target nor its temporary.
#[test]
fn an_uncommitted_output_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("r.json");
    let mut out = Output::create(&target).unwrap();
    out.write_all(b"half").unwrap();
    assert_eq!(temps_in(dir.path()).len(), 1);
    drop(out);
    assert!(!target.exists());
    assert_eq!(temps_in(dir.path()), Vec::<String>::new());
}

/// Item 2: temporaries are named unpredictably and created exclusively; their names parse back to this
/// process, and near misses are not taken for ours.
#[test]
fn temporaries_have_unpredictable_recognisable_names() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (Temp::new_in(dir.path()).unwrap(), Temp::new_in(dir.path()).unwrap());
    assert_ne!(a.path(), b.path());
    let name = a.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(parse_temp_name(name), Some((std::process::id(), own_start_time())), "{name}");
    assert_eq!(std::fs::metadata(a.path()).unwrap().permissions().mode() & 0o777, 0o600);
    for bad in [
        ".tcplab-12-34-abcdefghijk.part",   // 11 random characters
        ".tcplab-12-34-abcdefghijkl.partx", // suffix
        ".tcplab-12-34-abcdefghij-l.part",  // not alphanumeric
        "x.tcplab-12-34-abcdefghijkl.part", // prefix
        ".tcplab-12--abcdefghijkl.part",    // no start time
        ".tcplab-1x-34-abcdefghijkl.part",  // pid not a number
        "real.json.tcplab-12-0.part",       // the old predictable names are not ours to judge
    ] {
        assert_eq!(parse_temp_name(bad), None, "{bad}");
    }
    assert_eq!(parse_temp_name(".tcplab-12-34-abcdefghijkl.part"), Some((12, 34)));
    drop((a, b));
    assert_eq!(temps_in(dir.path()), Vec::<String>::new());
}

/// Item 3 (after SIGKILL): stale temporaries of a dead process are removed by the next one; a live
/// process's, a link, a directory and near-miss names are left alone.
#[test]
fn stale_temporaries_of_dead_processes_are_swept_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A pid that ran and is gone now.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = d.join(format!(".tcplab-{dead}-1-abcdefghijkl.part"));
    std::fs::write(&stale, "stale").unwrap();
    let mine = d.join(format!(".tcplab-{}-{}-abcdefghijkl.part", std::process::id(), own_start_time()));
    std::fs::write(&mine, "live").unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let link = d.join(format!(".tcplab-{dead}-1-linklinklink.part"));
    symlink(&victim, &link).unwrap();
    let sub = d.join(format!(".tcplab-{dead}-1-dirdirdirdir.part"));
    std::fs::create_dir(&sub).unwrap();
    let near = d.join(format!(".tcplab-{dead}-1-short.part"));
    std::fs::write(&near, "x").unwrap();
    let removed = sweep_stale(d);
    assert_eq!(removed, vec![stale.clone()]);
    assert!(!stale.exists());
    for kept in [&mine, &victim, &sub, &near] {
        assert!(kept.exists(), "{} was removed", kept.display());
    }
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// Item 6: inputs are regular files of bounded size; /dev/zero, a FIFO and a directory are refused
/// without reading them.
#[test]
fn inputs_are_bounded_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s.toml");
    std::fs::write(&f, "name = \"x\"\n").unwrap();
    assert_eq!(read_regular(&f, 100).unwrap(), "name = \"x\"\n");
    let link = dir.path().join("link.toml");
    symlink(&f, &link).unwrap();
    assert_eq!(read_regular(&link, 100).unwrap(), "name = \"x\"\n");
    let err = read_regular(&f, 5).unwrap_err();
    assert!(err.to_string().contains("11 bytes, over the limit of 5 bytes"), "{err}");
    for p in [Path::new("/dev/zero"), dir.path()] {
        let err = read_regular(p, 1 << 20).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{}: {err}", p.display());
    }
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let err = read_regular(&fifo, 1 << 20).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    std::fs::write(&f, [0xff, 0xfe]).unwrap();
    assert!(read_regular(&f, 100).unwrap_err().to_string().contains("not UTF-8"));
}

/// Item 11: a directory that takes no new files is reported by its own name and the system's reason,
/// never by the temporary's name (which the user never gave).
#[test]
fn a_directory_that_takes_no_files_is_named_with_the_reason() {
    let err = Output::create(Path::new("/proc/r.json")).err().expect("/proc takes no new files");
    let text = err.to_string();
    assert!(text.starts_with("cannot create a file in /proc: "), "{text}");
    assert!(text.contains("(os error "), "the system's reason is kept: {text}");
    assert!(!text.contains(TEMP_PREFIX) && !text.contains(TEMP_SUFFIX), "{text}");
}
