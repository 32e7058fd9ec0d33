//! Run isolation: two network namespaces per run, named `tcplab-<pid>-<start>-<n>-c` and `-s`, removed on
//! success, error, panic and SIGINT/SIGTERM/SIGHUP; leftovers of a killed run (whose process is gone) are
//! removed by the next run. Nothing here touches the host's interfaces, routes, firewall or sysctls: every
//! setting is written from a thread that has entered the run's own namespace.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::{Mutex, Once};

use crate::error::EmuError;
use crate::sys;

/// Every namespace name this backend creates starts with this.
pub const PREFIX: &str = "tcplab-";
const NETNS_DIR: &str = "/run/netns";

/// Namespaces of live runs of this process, removed by the signal and panic hooks.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// One run at a time per process: runs share the CPU and would disturb each other's timing.
static RUN_LOCK: Mutex<()> = Mutex::new(());
static HOOKS: Once = Once::new();

/// Fails with a clear message unless this is Linux, we are root, and the tools exist.
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
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Err(EmuError::Unsupported("/dev/net/tun is missing (load the tun module)".into()));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err(EmuError::Unsupported("the `ip` program (iproute2) is not installed".into()));
    }
    Ok(())
}

/// One of the run's two namespaces.
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
        check_environment()?;
        let lock = RUN_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        install_hooks();
        sweep_leftovers();
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tag = format!("{PREFIX}{}-{}-{n}", std::process::id(), start_time(std::process::id()).unwrap_or(0));
        let run =
            Run { client: Netns { name: format!("{tag}-c") }, server: Netns { name: format!("{tag}-s") }, _lock: lock };
        for ns in [&run.client, &run.server] {
            LIVE.lock().unwrap_or_else(|p| p.into_inner()).push(ns.name.clone());
            run_ip(&["netns", "add", &ns.name])?;
            for key in [
                "net.ipv6.conf.all.disable_ipv6",
                "net.ipv6.conf.default.disable_ipv6",
                "net.ipv6.conf.lo.disable_ipv6",
            ] {
                ns.sysctl(key, "1")?;
            }
            ns.ip(&["link", "set", "lo", "up"])?;
        }
        Ok(run)
    }

    pub fn names(&self) -> [&str; 2] {
        [&self.client.name, &self.server.name]
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        for ns in [&self.client.name, &self.server.name] {
            remove_netns(ns);
            live.retain(|n| n != ns);
        }
    }
}

/// Kills every process inside the namespace and removes it.
fn remove_netns(name: &str) {
    let path = format!("{NETNS_DIR}/{name}");
    if let Ok(meta) = std::fs::metadata(&path) {
        for pid in pids_in_netns(meta.ino()) {
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

/// Field 22 of /proc/PID/stat: the process start time in clock ticks since boot (tells a reused pid apart).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = stat.rsplit_once(')')?.1;
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

/// Removes namespaces `tcplab-<pid>-<start>-...` whose process is gone (or whose pid now names another
/// process). Returns the names removed.
pub fn sweep_leftovers() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else { return Vec::new() };
    let mut removed = Vec::new();
    for name in dir.filter_map(|e| e.ok()?.file_name().into_string().ok()) {
        let Some(rest) = name.strip_prefix(PREFIX) else { continue };
        let mut parts = rest.split('-');
        let (Some(pid), Some(start)) = (parts.next(), parts.next()) else { continue };
        let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else { continue };
        let alive = start_time(pid) == Some(start);
        if !alive {
            remove_netns(&name);
            removed.push(name);
        }
    }
    removed
}

fn cleanup_live() {
    // try_lock: a signal may arrive while this thread holds the lock; then the Drop in progress cleans up.
    let names = match LIVE.try_lock() {
        Ok(mut l) => std::mem::take(&mut *l),
        Err(_) => return,
    };
    for n in names {
        remove_netns(&n);
    }
}

static mut SIGNAL_PIPE_WR: libc::c_int = -1;

extern "C" fn on_signal(sig: libc::c_int) {
    let b = sig as u8;
    // SAFETY: write(2) is async-signal-safe; the fd is set once before the handler is installed.
    unsafe { libc::write(SIGNAL_PIPE_WR, (&b as *const u8).cast(), 1) };
}

/// On SIGINT/SIGTERM/SIGHUP a helper thread removes the live namespaces, restores the default action and
/// raises the signal again, so the process still dies of it. With `panic = "abort"` (no unwinding, so no
/// Drop) the panic hook removes them too.
fn install_hooks() {
    HOOKS.call_once(|| {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for two fds.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        // SAFETY: written once, before any handler that reads it is installed.
        unsafe { SIGNAL_PIPE_WR = fds[1] };
        let rd = fds[0];
        std::thread::Builder::new()
            .name("tcplab-emu-signals".into())
            .spawn(move || loop {
                let mut b = 0u8;
                // SAFETY: reads one byte into `b`.
                let n = unsafe { libc::read(rd, (&mut b as *mut u8).cast(), 1) };
                if n == 1 {
                    cleanup_live();
                    // SAFETY: restoring the default disposition and re-raising is the documented way to die
                    // of a signal after handling it.
                    unsafe {
                        libc::signal(b as libc::c_int, libc::SIG_DFL);
                        libc::raise(b as libc::c_int);
                    }
                }
            })
            .ok();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` only calls write(2).
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        if cfg!(panic = "abort") {
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                cleanup_live();
                prev(info);
            }));
        }
    });
}

/// Names of this backend's namespaces that exist now (for tests and `tcplab` diagnostics).
pub fn existing_namespaces() -> Vec<String> {
    std::fs::read_dir(NETNS_DIR)
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with(PREFIX)).collect())
        .unwrap_or_default()
}
