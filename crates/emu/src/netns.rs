//! Run isolation: two network namespaces per run, named `tcplab-<pid>-<start>-<n>-c` and `-s`, removed on
//! success, error, panic and SIGINT/SIGTERM/SIGHUP; leftovers of a killed run (whose process is gone) are
//! removed by the next run. Nothing here touches the host's interfaces, routes, firewall or sysctls: every
//! setting is written from a thread that has entered the run's own namespace.
//!
//! A name proves nothing (anyone can `ip netns add tcplab-1-0-mine`), so each namespace this backend
//! creates gets a marker, `/run/tcplab/netns/<name>` (a directory only root can write), recording the
//! creating process's pid and start time, the boot, and the namespace's own identity (the device and
//! inode of `/run/netns/<name>`, which the kernel gives each namespace). The sweep of leftovers removes a
//! namespace only when its marker says a process that is gone made it and the namespace at that name is
//! still the one it made; it never kills: the processes a run starts die with it (`PR_SET_PDEATHSIG`),
//! and any other process inside is left running (the namespace lives on, unnamed, until it exits).
//! A run's own clean-up kills only processes inside its namespaces that descend from this process.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::{Mutex, Once};

use crate::error::EmuError;
use crate::sys;

/// Every namespace name this backend creates starts with this.
pub const PREFIX: &str = "tcplab-";
const NETNS_DIR: &str = "/run/netns";
/// Where the markers of the namespaces this backend made are kept (root-only, like /run/netns).
const MARKER_PARENT: &str = "/run/tcplab";
const MARKER_DIR: &str = "/run/tcplab/netns";
/// The first line of a marker.
const MARKER_MAGIC: &str = "tcplab netns marker 1";

/// Namespaces of live runs of this process, removed by the signal and panic hooks.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// One run at a time per process: runs share the CPU and would disturb each other's timing.
static RUN_LOCK: Mutex<()> = Mutex::new(());
static HOOKS: Once = Once::new();

/// Linux capability numbers (include/uapi/linux/capability.h) the backend needs, with what for.
const NEEDED_CAPS: [(u32, &str, &str); 2] = [
    (21, "CAP_SYS_ADMIN", "network namespaces: `ip netns add`/`exec`, setns(2), mounts"),
    (12, "CAP_NET_ADMIN", "TUN devices, addresses, routes and sysctls inside the namespaces"),
];

/// The needed capabilities missing from the `CapEff` (this process) or `CapBnd` (the `ip` programs it
/// starts: root's children get the bounding set) lines of a /proc/PID/status text, with which set.
pub fn missing_capabilities(status: &str) -> Vec<String> {
    let set = |key: &str| {
        status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    let mut missing = Vec::new();
    for (key, what) in [("CapEff:", "effective set"), ("CapBnd:", "bounding set")] {
        let Some(bits) = set(key) else {
            missing.push(format!("{key} unreadable in /proc/self/status"));
            continue;
        };
        for (bit, name, _) in NEEDED_CAPS {
            if bits & (1 << bit) == 0 && !missing.iter().any(|m: &String| m.starts_with(name)) {
                missing.push(format!("{name} (not in the {what}, {key} {bits:016x})"));
            }
        }
    }
    missing
}

/// Fails with a clear message unless this is Linux, we are root with the capabilities the backend
/// needs (CAP_SYS_ADMIN, CAP_NET_ADMIN), and the tools exist.
pub fn check_environment() -> Result<(), EmuError> {
    if !cfg!(target_os = "linux") {
        return Err(EmuError::Unsupported(format!(
            "it needs Linux (network namespaces and TUN devices); this is {}",
            std::env::consts::OS
        )));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(EmuError::Unsupported(
            "it needs root (it creates network namespaces and TUN devices); run as root or under sudo".into(),
        ));
    }
    // Root in a container or under `capsh --drop` may lack them; without this check the run would fail
    // later with a mount or ioctl error.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let missing = missing_capabilities(&status);
    if !missing.is_empty() {
        let needs: Vec<String> = NEEDED_CAPS.iter().map(|(_, n, why)| format!("{n} ({why})")).collect();
        return Err(EmuError::Unsupported(format!(
            "it needs {}; this root process lacks {}. Run it as root with those capabilities (a container \
             needs --cap-add SYS_ADMIN --cap-add NET_ADMIN, or --privileged)",
            needs.join(" and "),
            missing.join(", ")
        )));
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Unsupported("/dev/net/tun is missing (load the tun module)".into()));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(EmuError::Unsupported("the `ip` program (iproute2) is not installed".into()));
    }
    Ok(())
}

/// A namespace of a run ([`Run`]'s two, or [`Single`]'s one).
#[derive(Debug, Clone)]
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn path(&self) -> String {
        format!("{NETNS_DIR}/{}", self.name)
    }

    /// Runs `f` on a thread that has entered this namespace (sockets and TUN devices created there belong to
    /// it; `/proc/sys/net` and `/proc/thread-self/net` show it).
    pub fn enter<T: Send>(&self, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
        let path = self.path();
        std::thread::scope(|s| {
            s.spawn(move || {
                sys::setns_net(&path)?;
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("a thread inside the namespace panicked")))
        })
    }

    /// Writes `value` to `/proc/sys/<key with dots as slashes>` inside this namespace.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), EmuError> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        self.enter(|| std::fs::write(&path, value))
            .map_err(|e| EmuError::os(format!("setting {key} = {value} in namespace {}", self.name), e))
    }

    /// Reads a sysctl inside this namespace.
    pub fn read_sysctl(&self, key: &str) -> Result<String, EmuError> {
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        self.enter(|| std::fs::read_to_string(&path))
            .map(|s| s.trim().to_string())
            .map_err(|e| EmuError::os(format!("reading {key} in namespace {}", self.name), e))
    }

    /// Runs `ip -n NAME ARGS...`.
    pub fn ip(&self, args: &[&str]) -> Result<(), EmuError> {
        let mut full = vec!["-n", self.name.as_str()];
        full.extend_from_slice(args);
        run_ip(&full)
    }

    /// A command that runs `program` inside this namespace (`ip netns exec`), killed if this thread dies.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; it only asks for SIGKILL when the parent thread exits.
        unsafe {
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        c
    }
}

fn run_ip(args: &[&str]) -> Result<(), EmuError> {
    let out = Command::new("ip").args(args).output().map_err(|e| EmuError::os("running ip", e))?;
    if !out.status.success() {
        return Err(EmuError::tool(
            format!("ip {}", args.join(" ")),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(())
}

/// The isolation guard of one run: the client and server namespaces. Dropping it removes both (and kills
/// any process still inside them).
pub struct Run {
    pub client: Netns,
    pub server: Netns,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl Run {
    /// Creates the two namespaces with loopback up and IPv6 off, after removing leftovers of dead runs.
    pub fn create() -> Result<Run, EmuError> {
        let (mut made, lock) = open(&["c", "s"])?;
        let server = made.pop().expect("two namespaces");
        let client = made.pop().expect("two namespaces");
        Ok(Run { client, server, _lock: lock })
    }

    pub fn names(&self) -> [&str; 2] {
        [&self.client.name, &self.server.name]
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        close(&[&self.client, &self.server]);
    }
}

/// The isolation guard of a run that needs one namespace (`tcplab packetdrill --backend linux`): named,
/// marked, swept and cleaned up on signals exactly as [`Run`]'s two. Dropping it removes the namespace.
pub struct Single {
    pub ns: Netns,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl Single {
    /// Creates the namespace (`tcplab-<pid>-<start>-<n>-<suffix>`) with loopback up and IPv6 off, after
    /// removing leftovers of dead runs.
    pub fn create(suffix: &str) -> Result<Single, EmuError> {
        let (mut made, lock) = open(&[suffix])?;
        Ok(Single { ns: made.pop().expect("one namespace"), _lock: lock })
    }
}

impl Drop for Single {
    fn drop(&mut self) {
        close(&[&self.ns]);
    }
}

/// Creates one namespace per suffix (`tcplab-<pid>-<start>-<n>-<suffix>`, `n` counted over every guard
/// of this process so no two names meet), each recorded as live and marked before anything else, with
/// loopback up and IPv6 off; holds the run lock and first removes leftovers of dead runs. On a failure
/// the namespaces made so far are removed before the error returns.
fn open(suffixes: &[&str]) -> Result<(Vec<Netns>, std::sync::MutexGuard<'static, ()>), EmuError> {
    check_environment()?;
    let lock = RUN_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    install_hooks();
    sweep_leftovers();
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tag = format!("{PREFIX}{}-{}-{n}", std::process::id(), start_time(std::process::id()).unwrap_or(0));
    let markers = marker_dir()?;
    let mut made: Vec<Netns> = Vec::new();
    for suffix in suffixes {
        let ns = Netns { name: format!("{tag}-{suffix}") };
        LIVE.lock().unwrap_or_else(|p| p.into_inner()).push(ns.name.clone());
        made.push(ns.clone());
        let set_up = || -> Result<(), EmuError> {
            run_ip(&["netns", "add", &ns.name])?;
            write_marker(markers, &ns.name)?;
            for key in [
                "net.ipv6.conf.all.disable_ipv6",
                "net.ipv6.conf.default.disable_ipv6",
                "net.ipv6.conf.lo.disable_ipv6",
            ] {
                ns.sysctl(key, "1")?;
            }
            ns.ip(&["link", "set", "lo", "up"])
        };
        if let Err(e) = set_up() {
            close(&made.iter().collect::<Vec<_>>());
            return Err(e);
        }
    }
    Ok((made, lock))
}

/// Removes the namespaces a guard made, their markers, and their names from the live list.
fn close(namespaces: &[&Netns]) {
    let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
    for ns in namespaces {
        remove_netns(&ns.name);
        remove_marker(&ns.name);
        live.retain(|n| n != &ns.name);
    }
}

/// Removes one of this run's namespaces, after killing the processes inside it that this process
/// started (its descendants); any other process inside keeps running.
fn remove_netns(name: &str) {
    let path = format!("{NETNS_DIR}/{name}");
    if let Ok(meta) = std::fs::metadata(&path) {
        let me = std::process::id() as i32;
        for pid in pids_in_netns(meta.ino()).into_iter().filter(|&p| descends_from(p, me)) {
            // SAFETY: sending a signal has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let _ = sys::remove_netns_mount(&path);
}

/// Processes whose network namespace has inode `ino`.
fn pids_in_netns(ino: u64) -> Vec<i32> {
    let want = format!("net:[{ino}]");
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|l| l.to_string_lossy() == want))
        .collect()
}

/// Whether `ancestor` is `pid`'s parent, grandparent, ... (field 4 of /proc/PID/stat).
fn descends_from(pid: i32, ancestor: i32) -> bool {
    let mut p = pid;
    for _ in 0..4096 {
        let Some(parent) = std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse::<i32>().ok())
        else {
            return false;
        };
        if parent == ancestor {
            return true;
        }
        if parent <= 1 {
            return false;
        }
        p = parent;
    }
    false
}

/// Field 22 of /proc/PID/stat: the process start time in clock ticks since boot (tells a reused pid apart).
fn start_time(pid: u32) -> Option<u64> {
    tcplab_files::process_start_time(pid)
}

/// This boot's id (proc(5)): a marker from another boot names a namespace that cannot exist any more.
fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// A directory only root can have made and written: exists (or is made, 0700), is not a link, is owned
/// by root and writable by no one else.
fn root_only_dir(path: &str) -> Result<(), EmuError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(EmuError::os(format!("creating {path}"), e)),
    }
    let m = std::fs::symlink_metadata(path).map_err(|e| EmuError::os(format!("checking {path}"), e))?;
    if !m.file_type().is_dir() || m.uid() != 0 || m.permissions().mode() & 0o022 != 0 {
        return Err(EmuError::Unsupported(format!(
            "{path} must be a directory owned by root and writable by root only (it keeps the markers of the \
             namespaces tcplab made); it is not: remove it"
        )));
    }
    Ok(())
}

fn marker_dir() -> Result<&'static str, EmuError> {
    root_only_dir(MARKER_PARENT)?;
    root_only_dir(MARKER_DIR)?;
    Ok(MARKER_DIR)
}

/// What a marker records.
#[derive(Debug, PartialEq, Eq)]
struct Marker {
    pid: u32,
    start: u64,
    boot: String,
    dev: u64,
    ino: u64,
}

impl Marker {
    fn parse(text: &str) -> Option<Marker> {
        let mut lines = text.lines();
        if lines.next()? != MARKER_MAGIC {
            return None;
        }
        let mut kv = std::collections::BTreeMap::new();
        for l in lines {
            let (k, v) = l.split_once('=')?;
            kv.insert(k, v);
        }
        Some(Marker {
            pid: kv.get("pid")?.parse().ok()?,
            start: kv.get("start")?.parse().ok()?,
            boot: kv.get("boot")?.to_string(),
            dev: kv.get("dev")?.parse().ok()?,
            ino: kv.get("ino")?.parse().ok()?,
        })
    }

    fn text(&self) -> String {
        format!(
            "{MARKER_MAGIC}\npid={}\nstart={}\nboot={}\ndev={}\nino={}\n",
            self.pid, self.start, self.boot, self.dev, self.ino
        )
    }
}

/// Records that this process made namespace `name` (just created by `ip netns add`).
fn write_marker(dir: &str, name: &str) -> Result<(), EmuError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let path = format!("{NETNS_DIR}/{name}");
    let m = std::fs::metadata(&path).map_err(|e| EmuError::os(format!("checking {path}"), e))?;
    let pid = std::process::id();
    let marker = Marker { pid, start: start_time(pid).unwrap_or(0), boot: boot_id(), dev: m.dev(), ino: m.ino() };
    let at = format!("{dir}/{name}");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&at)
        .map_err(|e| EmuError::os(format!("creating the marker {at}"), e))?;
    f.write_all(marker.text().as_bytes()).map_err(|e| EmuError::os(format!("writing the marker {at}"), e))
}

fn remove_marker(name: &str) {
    let _ = std::fs::remove_file(format!("{MARKER_DIR}/{name}"));
}

/// Removes the namespaces of dead runs of this program: those whose marker in /run/tcplab/netns says a
/// process that is gone (pid and start time) made them, this boot, and whose `/run/netns/<name>` is still
/// that namespace (device and inode). Kills nothing. A namespace without a marker — another program's,
/// or one named like ours by hand — is never touched. Returns the names removed.
pub fn sweep_leftovers() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(MARKER_DIR) else { return Vec::new() };
    // Markers are trusted only in a directory that only root could have written.
    let Ok(d) = std::fs::symlink_metadata(MARKER_DIR) else { return Vec::new() };
    if !d.file_type().is_dir() || d.uid() != 0 || d.mode() & 0o022 != 0 {
        return Vec::new();
    }
    let boot = boot_id();
    let mut removed = Vec::new();
    for name in dir.filter_map(|e| e.ok()?.file_name().into_string().ok()) {
        if !name.starts_with(PREFIX) || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            continue;
        }
        let at = format!("{MARKER_DIR}/{name}");
        let Ok(m) = std::fs::symlink_metadata(&at) else { continue };
        if !m.file_type().is_file() || m.uid() != 0 {
            continue;
        }
        let Some(marker) = std::fs::read_to_string(&at).ok().as_deref().and_then(Marker::parse) else { continue };
        if marker.boot == boot && start_time(marker.pid) == Some(marker.start) {
            continue; // its run is alive
        }
        let path = format!("{NETNS_DIR}/{name}");
        let same = std::fs::metadata(&path).is_ok_and(|n| n.dev() == marker.dev && n.ino() == marker.ino);
        if marker.boot == boot && same {
            let _ = sys::remove_netns_mount(&path);
            removed.push(name.clone());
        }
        // The marker has served (or names a namespace that is gone or no longer ours).
        let _ = std::fs::remove_file(&at);
    }
    removed
}

fn cleanup_live() {
    // Another thread holds the lock only for a moment (a push, or a namespace's removal); a panic hook
    // may run on the thread that holds it, so wait a bounded time rather than for ever.
    let mut names = None;
    for _ in 0..200 {
        match LIVE.try_lock() {
            Ok(mut l) => names = Some(std::mem::take(&mut *l)),
            Err(std::sync::TryLockError::Poisoned(p)) => names = Some(std::mem::take(&mut *p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
        if names.is_some() {
            break;
        }
    }
    let Some(names) = names else { return };
    for n in names {
        remove_netns(&n);
        remove_marker(&n);
    }
}

/// On SIGINT/SIGTERM/SIGHUP (and a panic when panics abort), `tcplab_files`' handler removes the live
/// temporaries and calls [`cleanup_live`], then the process dies of the signal as before.
fn install_hooks() {
    HOOKS.call_once(|| tcplab_files::on_exit_signal(cleanup_live));
}

/// Names of this backend's namespaces that exist now (for tests and `tcplab` diagnostics).
pub fn existing_namespaces() -> Vec<String> {
    std::fs::read_dir(NETNS_DIR)
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with(PREFIX)).collect())
        .unwrap_or_default()
}
