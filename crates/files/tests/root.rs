//! What the safe writer does as root among other users' files (issue 22, item 1): run under
//! tcplab-testkit's harness, so that without root the test shows as ignored with its reason.

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::PathBuf;

use tcplab_files::{sweep_stale, write_file};
use tcplab_testkit::{need_root, Outcome};

/// As root: another user's stale temporary is not ours to remove, and a link another user planted in
/// a sticky world-writable directory is not followed (fs.protected_symlinks).
fn root_does_not_follow_or_remove_what_other_users_planted() -> Outcome {
    need_root("lchown to another user")?;
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let planted = shared.join("result.json");
    symlink(&victim, &planted).unwrap();
    std::os::unix::fs::lchown(&planted, Some(65534), Some(65534)).unwrap();
    let err = write_file(&planted, b"x").unwrap_err();
    assert!(err.to_string().contains("fs.protected_symlinks"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    // Root's own link there is followed.
    let own = shared.join("own.json");
    symlink(&victim, &own).unwrap();
    write_file(&own, b"mine").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
    // Another user's stale temporary stays.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let theirs = shared.join(format!(".tcplab-{dead}-1-abcdefghijkl.part"));
    std::fs::write(&theirs, "theirs").unwrap();
    std::os::unix::fs::lchown(&theirs, Some(65534), Some(65534)).unwrap();
    assert_eq!(sweep_stale(&shared), Vec::<PathBuf>::new());
    assert!(theirs.exists());
    Ok(())
}

tcplab_testkit::main!(root_does_not_follow_or_remove_what_other_users_planted);
