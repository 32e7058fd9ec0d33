//! Writing tcplab's output files safely, as root on a shared machine.
//!
//! One writer for every file tcplab produces (`--json`, `--csv`, `--plot`, `--report`, `--flent`, the
//! simulator's and the Linux backend's pcap traces), so that the rules below hold everywhere:
//!
//! - **Where the bytes go** ([`resolve`]). A path naming an open descriptor (`/dev/stdout`, `/dev/stderr`,
//!   `/dev/fd/N`, `/proc/self/fd/N`, `/proc/PID/fd/N` of this process) is written through that descriptor,
//!   as a shell redirection would: `--json /dev/stdout >out` appends to whatever fd 1 is, and never
//!   replaces the node `/dev/stdout`. A character device or a FIFO (`/dev/null`, `mkfifo`) is written
//!   into. A symbolic link is followed to what it names (a missing destination is created in its existing
//!   directory), and the file there is replaced atomically; the link stays a link. Like the kernel's
//!   `fs.protected_symlinks` (Documentation/admin-guide/sysctl/fs.rst), a link in a sticky world-writable
//!   directory (`/tmp`) is followed only when this user or the directory's owner owns it: root does not
//!   write through a link another user planted. A directory, a block device and a socket are refused.
//! - **Complete or absent** ([`Output`]). A regular file is written to a temporary beside its target and
//!   renamed over it when complete, so a reader never sees a partial result.
//! - **Temporaries** ([`Temp`]). Created exclusively (`O_CREAT|O_EXCL`: an existing name, a planted
//!   symlink included, fails the creation rather than being followed), mode 0600, named
//!   `.tcplab-<pid>-<start>-<12 random characters>.part` where `<start>` is this process's start time
//!   (field 22 of `/proc/self/stat`), so that the name is unpredictable and its owner can be told apart
//!   from a later process with the same pid.
//! - **Clean-up** ([`install_signal_cleanup`], [`sweep_stale`]). Every live temporary is in a registry; on
//!   SIGINT, SIGTERM or SIGHUP a handler thread (signal-hook) removes them all, runs the hooks others
//!   registered ([`on_exit_signal`]: the Linux backend's namespaces), and lets the signal kill the process
//!   as it would have. After SIGKILL, the next process creating a temporary in the same directory removes
//!   the stale ones: only names that match the pattern exactly, whose process (pid and start time) is
//!   gone, that are regular files owned by this user; links are never followed.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// Where a path's bytes go once links and descriptor names are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// An open descriptor of this process (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`): written through.
    Fd(i32),
    /// A character device or FIFO: opened and written into (a rename would replace the node).
    Stream(PathBuf),
    /// A regular file, existing or to be created, at this path (links resolved): replaced atomically.
    File(PathBuf),
}

fn refused(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

/// The descriptor a path names, when it is one of this process's descriptor aliases.
fn fd_alias(p: &Path) -> Option<i32> {
    let s = p.to_str()?;
    let own = format!("/proc/{}/fd/", std::process::id());
    let n = ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", own.as_str()]
        .iter()
        .find_map(|prefix| s.strip_prefix(prefix))?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

fn parent_of(p: &Path) -> &Path {
    p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Resolves `path` to where a result written there must go (see the crate's documentation). Errors say
/// why a path is refused, without the path itself (callers prefix it).
pub fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut p = path.to_path_buf();
    let mut via_link = false;
    // Linux's own limit on links followed in one lookup (MAXSYMLINKS, include/linux/namei.h).
    for _ in 0..40 {
        if let Some(fd) = fd_alias(&p) {
            return Ok(Resolved::Fd(fd));
        }
        let meta = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = parent_of(&p);
                return match std::fs::metadata(dir) {
                    Ok(m) if m.is_dir() => Ok(Resolved::File(p)),
                    Ok(_) => Err(refused(format!("{} is not a directory", dir.display()))),
                    Err(e) if via_link => Err(refused(format!(
                        "it is a symbolic link to {}, whose directory is missing: {e}",
                        p.display()
                    ))),
                    Err(e) => Err(io::Error::new(e.kind(), format!("directory {}: {e}", dir.display()))),
                };
            }
            Err(e) => return Err(e),
            Ok(m) => m,
        };
        let ft = meta.file_type();
        if ft.is_symlink() {
            check_link_owner(&p, &meta)?;
            let dest = std::fs::read_link(&p)?;
            p = if dest.is_absolute() { dest } else { parent_of(&p).join(dest) };
            via_link = true;
            continue;
        }
        if ft.is_file() {
            return Ok(Resolved::File(p));
        }
        if ft.is_dir() {
            let at = if via_link { format!(" (the link leads to {})", p.display()) } else { String::new() };
            return Err(refused(format!("is a directory{at}; accepted: a file, a FIFO, a character device, -")));
        }
        #[cfg(unix)]
        {
            if ft.is_char_device() || ft.is_fifo() {
                return Ok(Resolved::Stream(p));
            }
            if ft.is_block_device() {
                return Err(refused(format!(
                    "{} is a block device: refused, a result written there would overwrite the disk",
                    p.display()
                )));
            }
            if ft.is_socket() {
                return Err(refused(format!("{} is a socket, which cannot be opened for writing", p.display())));
            }
        }
        return Err(refused(format!("{} is not a file, FIFO or character device", p.display())));
    }
    Err(refused("too many levels of symbolic links (40 followed)".into()))
}

/// The kernel's `fs.protected_symlinks` rule, applied whoever we are: in a sticky, world-writable
/// directory, follow a link only if we or the directory's owner own it.
fn check_link_owner(link: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = parent_of(link);
        let Ok(d) = std::fs::metadata(dir) else { return Ok(()) };
        let sticky_world = d.mode() & 0o1002 == 0o1002;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if sticky_world && meta.uid() != me && meta.uid() != d.uid() {
            return Err(refused(format!(
                "it is a symbolic link owned by uid {} in the shared directory {} (sticky, world-writable): \
                 refused, as the kernel's fs.protected_symlinks would; give the destination's path instead",
                meta.uid(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// A result being written for a target path; it appears there complete on [`Output::commit`], or, when
/// dropped uncommitted, not at all (a stream target has had whatever was written).
pub struct Output {
    target: Resolved,
    /// The temporary of a regular-file target.
    temp: Option<Temp>,
    /// The descriptor of a stream or fd target.
    direct: Option<File>,
    /// The mode the file gets: an existing file's, else 0644.
    mode: u32,
}

impl Output {
    /// Prepares to write `path` (see [`resolve`]). A stream or descriptor is opened now (opening a FIFO
    /// waits for its reader); a regular file's temporary is created in its directory now.
    pub fn create(path: &Path) -> io::Result<Output> {
        let target = resolve(path)?;
        let mut out = Output { target: target.clone(), temp: None, direct: None, mode: 0o644 };
        match &target {
            Resolved::Fd(fd) => out.direct = Some(dup_fd(*fd)?),
            Resolved::Stream(p) => out.direct = Some(open_stream(p)?),
            Resolved::File(p) => {
                #[cfg(unix)]
                if let Ok(m) = std::fs::symlink_metadata(p) {
                    out.mode = m.mode() & 0o777;
                }
                out.temp = Some(Temp::new_in(parent_of(p))?);
            }
        }
        Ok(out)
    }

    /// Where the bytes go.
    pub fn target(&self) -> &Resolved {
        &self.target
    }

    /// A directory for scratch files that belong with this output: a regular file's own directory (so a
    /// rename stays on one file system), else the system's temporary directory.
    pub fn scratch_dir(&self) -> PathBuf {
        match &self.target {
            Resolved::File(p) => parent_of(p).to_path_buf(),
            _ => std::env::temp_dir(),
        }
    }

    fn file(&mut self) -> &mut File {
        match (&mut self.direct, &mut self.temp) {
            (Some(f), _) => f,
            (None, Some(t)) => &mut t.file,
            (None, None) => unreachable!("an output has a file until it is committed"),
        }
    }

    /// Finishes the output: a regular file is synced and renamed over its target (the directory entry is
    /// replaced; nothing at the old name is written through); a stream is flushed.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(mut f) = self.direct.take() {
            return f.flush();
        }
        let Resolved::File(target) = &self.target else { unreachable!("only files have temporaries") };
        let temp = self.temp.take().expect("a file output has its temporary");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.file.set_permissions(std::fs::Permissions::from_mode(self.mode))?;
        }
        temp.file.sync_all()?;
        temp.rename_to(target)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `path` through an [`Output`].
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut out = Output::create(path)?;
    out.write_all(bytes)?;
    out.commit()
}

fn dup_fd(fd: i32) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor we own, or -1.
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if new < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("descriptor {fd} is not open: {e}")));
        }
        // SAFETY: `new` is a fresh descriptor owned by nothing else.
        Ok(unsafe { File::from_raw_fd(new) })
    }
    #[cfg(not(unix))]
    Err(refused(format!("descriptor {fd}: not supported here")))
}

fn open_stream(p: &Path) -> io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The node was checked without following links: do not follow one swapped in since, and do not
        // make a terminal our controlling one.
        o.custom_flags(libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_CLOEXEC);
    }
    let f = o.open(p)?;
    #[cfg(unix)]
    {
        let ft = f.metadata()?.file_type();
        if !(ft.is_char_device() || ft.is_fifo()) {
            return Err(refused(format!("{} changed while it was being opened", p.display())));
        }
    }
    Ok(f)
}

/// Reads an input file (a scenario, a result document) as UTF-8 text: only a regular file, reached
/// through links or not, of at most `limit` bytes. A device or FIFO (`/dev/zero`, `/dev/stdin`) is
/// refused, since it could be read without end; so is a file that grows past `limit` while being read.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<String> {
    use std::io::Read;
    let not_regular = || {
        refused(
            "not a regular file (a device, FIFO or directory could be read without end); accepted: a regular file"
                .into(),
        )
    };
    let too_big = |size: String| refused(format!("{size} bytes, over the limit of {limit} bytes for this input"));
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO swapped in since the check must not block the open.
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let f = o.open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(not_regular());
    }
    if m.len() > limit {
        return Err(too_big(m.len().to_string()));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(format!("more than {limit}")));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("not UTF-8 text: {e}")))
}

// ---------------------------------------------------------------------------------------------------
// Temporaries and their registry

/// Names of temporaries start with this.
pub const TEMP_PREFIX: &str = ".tcplab-";
/// ... and end with this.
pub const TEMP_SUFFIX: &str = ".part";
/// Random characters in a temporary's name (62 possible each: 71 bits).
const TEMP_RANDOM: usize = 12;

/// Paths of this process's live temporaries, by id: removed by the signal handler.
static LIVE: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Directories already swept by this process.
static SWEPT: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

fn live() -> MutexGuard<'static, BTreeMap<u64, PathBuf>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A temporary file of this process, created exclusively in a directory, removed when dropped, on
/// SIGINT/SIGTERM/SIGHUP (once [`install_signal_cleanup`] has run), or by a later process after SIGKILL.
pub struct Temp {
    file: File,
    path: PathBuf,
    id: u64,
}

impl Temp {
    /// Creates a temporary in `dir`, after removing the stale temporaries of dead processes there.
    pub fn new_in(dir: &Path) -> io::Result<Temp> {
        install_signal_cleanup();
        let fresh = SWEPT.lock().unwrap_or_else(|p| p.into_inner()).insert(dir.to_path_buf());
        if fresh {
            sweep_stale(dir);
        }
        let prefix = format!("{TEMP_PREFIX}{}-{}-", std::process::id(), own_start_time());
        // Registered under the lock: the signal handler holds it while it removes, so a temporary is
        // either created and registered before, or not at all.
        let mut reg = live();
        let t = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(TEMP_SUFFIX)
            .rand_bytes(TEMP_RANDOM)
            .tempfile_in(dir)
            .map_err(|e| {
            // tempfile's message ends with " at path <the temporary's name>", which the user never asked
            // for: keep the system's reason ("No such file or directory (os error 2)") and say what
            // failed in the directory they named.
            let text = e.to_string();
            let why = match text.rsplit_once(" at path ") {
                Some((why, _)) => why.to_string(),
                None => std::io::Error::from(e.kind()).to_string(),
            };
            io::Error::new(e.kind(), format!("cannot create a file in {}: {why}", dir.display()))
        })?;
        // The file is ours to remove (registry, Drop), not tempfile's.
        let (file, tpath) = t.into_parts();
        let path = tpath.keep().map_err(|e| e.error)?;
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        reg.insert(id, path.clone());
        Ok(Temp { file, path, id })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn file_mut(&mut self) -> &mut File {
        &mut self.file
    }

    /// Renames the temporary over `target` (same directory), replacing the entry there.
    pub fn rename_to(self, target: &Path) -> io::Result<()> {
        let mut reg = live();
        std::fs::rename(&self.path, target)?;
        reg.remove(&self.id);
        drop(reg);
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        let mut reg = live();
        let _ = std::fs::remove_file(&self.path);
        reg.remove(&self.id);
    }
}

/// Field 22 of /proc/PID/stat: the process's start time in clock ticks since boot, which tells a reused
/// pid apart (proc(5)). `None` when there is no such process.
pub fn process_start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces and ')'.
    let after_comm = stat.rsplit_once(')')?.1;
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

fn own_start_time() -> u64 {
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *START.get_or_init(|| process_start_time(std::process::id()).unwrap_or(0))
}

/// The (pid, start time) a temporary's file name belongs to, if the name is exactly one of ours.
pub fn parse_temp_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let mut it = rest.splitn(3, '-');
    let (pid, start, random) = (it.next()?, it.next()?, it.next()?);
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(start) {
        return None;
    }
    if random.len() != TEMP_RANDOM || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Removes from `dir` the temporaries left by dead tcplab processes (killed with SIGKILL, or by a
/// power cut): names that match [`parse_temp_name`] exactly, whose process (pid with that start time)
/// no longer runs, that are regular files owned by this user; links are never followed. Returns what
/// was removed.
pub fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    // SAFETY: geteuid has no preconditions.
    #[cfg(unix)]
    let me = unsafe { libc::geteuid() };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, start)) = name.to_str().and_then(parse_temp_name) else { continue };
        if process_start_time(pid) == Some(start) {
            continue; // its process still runs
        }
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else { continue };
        if !m.file_type().is_file() {
            continue;
        }
        #[cfg(unix)]
        if m.uid() != me {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

// ---------------------------------------------------------------------------------------------------
// Signals

/// Hooks run by the signal handler after the temporaries are removed.
static HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

/// Runs `hook` when SIGINT, SIGTERM or SIGHUP arrives (after the temporaries are removed, before the
/// signal kills the process), and on a panic when panics abort. Installs the handler if needed.
pub fn on_exit_signal(hook: fn()) {
    install_signal_cleanup();
    let mut hooks = HOOKS.lock().unwrap_or_else(|p| p.into_inner());
    if !hooks.contains(&hook) {
        hooks.push(hook);
    }
}

/// Removes every live temporary and runs the hooks. Keeps the registry locked until the process ends
/// when `hold` is set, so that no new temporary appears behind it.
fn cleanup(hold: bool) {
    let mut reg = if hold {
        live()
    } else {
        // A panic may come while this thread holds the lock.
        match LIVE.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        }
    };
    for p in reg.values() {
        let _ = std::fs::remove_file(p);
    }
    reg.clear();
    let hooks: Vec<fn()> = match HOOKS.try_lock() {
        Ok(h) => h.clone(),
        Err(_) => Vec::new(),
    };
    for h in hooks {
        h();
    }
    if hold {
        std::mem::forget(reg);
    }
}

/// Installs (once) a handler for SIGINT, SIGTERM and SIGHUP: a thread removes every live temporary,
/// runs the [`on_exit_signal`] hooks, then restores the signal's default action and raises it again, so
/// the process still dies of it (a shell sees 130 for Ctrl-C). With `panic = "abort"` (no unwinding, so
/// no `Drop`) a panic hook does the same clean-up.
pub fn install_signal_cleanup() {
    INSTALL.call_once(|| {
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
            let spawned = std::thread::Builder::new().name("tcplab-signals".into()).spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    cleanup(true);
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    // Not reached for these signals (their default action ends the process).
                    std::process::exit(128 + sig);
                }
            });
            if spawned.is_err() {
                return;
            }
        }
        if cfg!(panic = "abort") {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                cleanup(false);
                prev(info);
            }));
        }
    });
}

#[cfg(all(test, unix))]
mod tests;
