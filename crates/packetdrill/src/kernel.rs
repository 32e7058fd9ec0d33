//! The kernel backend: the script runs against this machine's TCP, as packetdrill itself works. The run
//! gets a network namespace of its own (tcplab's, with its marker and clean-up: nothing survives the run
//! however it ends) holding a TUN device with the address pair [`LOCAL_ADDR`] (the kernel's sockets) and
//! [`REMOTE_ADDR`] (the script's peer). Inbound packets are written to the device at their script times,
//! outbound ones are read from it with the wall-clock time they appeared, and the system calls are made on
//! real sockets inside the namespace, on a thread of their own so that a blocking call blocks only it
//! (packetdrill's syscall thread: a call counts as blocked once that thread sleeps in the kernel).
//! Sysctls from the script are written inside the namespace; one the namespace does not have (a global
//! one) makes the script a skip. The interpreter, matcher and report are the simulator's ([`crate::interp`]).

use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant as WallInstant;

use tcplab_emu::netns::{Netns, Single};
use tcplab_wire::codec::{self, PayloadFill};
use tcplab_wire::TcpSegment;

use crate::ast::*;
use crate::interp::{self, Backend, CallResult, Outbound, View, LOCAL_PORT, NO_CONN};
use crate::sim::Verdict;
use crate::sysctl::{self, Cmd};

/// The kernel's side of the TUN device (198.18.0.0/15, RFC 2544's benchmarking block).
pub const LOCAL_ADDR: [u8; 4] = [198, 18, 0, 1];
/// The script's side.
pub const REMOTE_ADDR: [u8; 4] = [198, 18, 0, 2];
const REMOTE_PORT_BASE: u16 = 48_000;
const VNET_HDR_LEN: usize = tcplab_emu::tun::VNET_HDR_LEN;

/// The `tcpi_*` fields read from the kernel's `struct tcp_info` (include/uapi/linux/tcp.h), with their
/// byte offset and size (bytes; 0 and 1 for the two nibbles of byte 6).
const TCPI: &[(&str, usize, u8)] = &[
    ("tcpi_state", 0, 1),
    ("tcpi_ca_state", 1, 1),
    ("tcpi_retransmits", 2, 1),
    ("tcpi_probes", 3, 1),
    ("tcpi_backoff", 4, 1),
    ("tcpi_options", 5, 1),
    ("tcpi_snd_wscale", 6, 0x10),
    ("tcpi_rcv_wscale", 6, 0x11),
    ("tcpi_rto", 8, 4),
    ("tcpi_ato", 12, 4),
    ("tcpi_snd_mss", 16, 4),
    ("tcpi_rcv_mss", 20, 4),
    ("tcpi_unacked", 24, 4),
    ("tcpi_sacked", 28, 4),
    ("tcpi_lost", 32, 4),
    ("tcpi_retrans", 36, 4),
    ("tcpi_fackets", 40, 4),
    ("tcpi_last_data_sent", 44, 4),
    ("tcpi_last_ack_sent", 48, 4),
    ("tcpi_last_data_recv", 52, 4),
    ("tcpi_last_ack_recv", 56, 4),
    ("tcpi_pmtu", 60, 4),
    ("tcpi_rcv_ssthresh", 64, 4),
    ("tcpi_rtt", 68, 4),
    ("tcpi_rttvar", 72, 4),
    ("tcpi_snd_ssthresh", 76, 4),
    ("tcpi_snd_cwnd", 80, 4),
    ("tcpi_advmss", 84, 4),
    ("tcpi_reordering", 88, 4),
    ("tcpi_rcv_rtt", 92, 4),
    ("tcpi_rcv_space", 96, 4),
    ("tcpi_total_retrans", 100, 4),
    ("tcpi_pacing_rate", 104, 8),
    ("tcpi_max_pacing_rate", 112, 8),
    ("tcpi_bytes_acked", 120, 8),
    ("tcpi_bytes_received", 128, 8),
    ("tcpi_segs_out", 136, 4),
    ("tcpi_segs_in", 140, 4),
    ("tcpi_notsent_bytes", 144, 4),
    ("tcpi_min_rtt", 148, 4),
    ("tcpi_data_segs_in", 152, 4),
    ("tcpi_data_segs_out", 156, 4),
    ("tcpi_delivery_rate", 160, 8),
    ("tcpi_busy_time", 168, 8),
    ("tcpi_rwnd_limited", 176, 8),
    ("tcpi_sndbuf_limited", 184, 8),
    ("tcpi_delivered", 192, 4),
    ("tcpi_delivered_ce", 196, 4),
    ("tcpi_bytes_sent", 200, 8),
    ("tcpi_bytes_retrans", 208, 8),
    ("tcpi_dsack_dups", 216, 4),
    ("tcpi_reord_seen", 220, 4),
];

/// The `SK_MEMINFO_*` values of SO_MEMINFO, in the kernel's order (include/uapi/linux/sock_diag.h), which
/// packetdrill hands to every `%{ }%` block beside `tcp_info` (code.c `write_so_meminfo`).
const SK_MEMINFO: &[&str] = &[
    "SK_MEMINFO_RMEM_ALLOC",
    "SK_MEMINFO_RCVBUF",
    "SK_MEMINFO_WMEM_ALLOC",
    "SK_MEMINFO_SNDBUF",
    "SK_MEMINFO_FWD_ALLOC",
    "SK_MEMINFO_WMEM_QUEUED",
    "SK_MEMINFO_OPTMEM",
    "SK_MEMINFO_BACKLOG",
    "SK_MEMINFO_DROPS",
];

/// The names [`TCPI`] and [`SK_MEMINFO`] serve, for the check before running.
fn tcpi_names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| TCPI.iter().map(|(n, _, _)| *n).chain(SK_MEMINFO.iter().copied()).collect())
}

/// Why the kernel backend cannot run here, or `None` when it can (root, Linux, /dev/net/tun).
pub fn unavailable() -> Option<String> {
    if let Err(e) = tcplab_emu::check_environment() {
        return Some(e.to_string());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing (the tun module is not loaded)".into());
    }
    None
}

/// Runs a script's text against this machine's kernel. Never panics; the namespace is gone when it returns.
pub fn run(src: &str) -> Verdict {
    let script = match crate::parse::parse(src) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail { loc: e.loc, msg: format!("parse error: {}", e.msg), time_us: 0 },
    };
    if let Some(why) = unavailable() {
        return Verdict::Skip(format!("the kernel backend cannot run: {why}"));
    }
    let single = match Single::create("pd") {
        Ok(s) => s,
        Err(e) => return Verdict::Fail { loc: Default::default(), msg: format!("namespace: {e}"), time_us: 0 },
    };
    let ns = single.ns.clone();
    let r = single.ns.enter(|| Ok(run_inside(&script, &ns)));
    drop(single);
    r.unwrap_or_else(|e| Verdict::Fail { loc: Default::default(), msg: format!("namespace: {e}"), time_us: 0 })
}

/// Writes a dotted sysctl inside the namespace this thread is in; a name the namespace lacks is global.
fn write_sysctl(key: &str, value: &str) -> Result<(), String> {
    if !key.starts_with("net.") {
        return Err(format!("sysctl {key} is not per-namespace (the kernel backend changes nothing outside its own)"));
    }
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    if !std::path::Path::new(&path).exists() {
        return Err(format!(
            "sysctl {key} is not per-namespace on this kernel (the kernel backend changes nothing outside its own)"
        ));
    }
    // proc_dointvec reads decimal; defaults.sh writes tcp_fastopen in hex.
    let value = match value.strip_prefix("0x").map(|h| i64::from_str_radix(h, 16)) {
        Some(Ok(v)) => v.to_string(),
        _ => value.to_string(),
    };
    match std::fs::write(&path, &value) {
        // Outside the initial namespace the kernel lets only the algorithms the host's
        // tcp_allowed_congestion_control lists be the default (tcp_set_default_congestion_control), but
        // lets a socket with CAP_NET_ADMIN choose any: the run's sockets get it with TCP_CONGESTION as
        // they are made, which is what the default would have done.
        Err(e) if key == "net.ipv4.tcp_congestion_control" && e.raw_os_error() == Some(libc::EPERM) => {
            DEFAULT_CC.with(|c| *c.borrow_mut() = Some(value));
            Ok(())
        }
        Err(e) => Err(format!("sysctl {key}={value}: {e}")),
        Ok(()) => {
            if key == "net.ipv4.tcp_congestion_control" {
                DEFAULT_CC.with(|c| *c.borrow_mut() = None);
            }
            Ok(())
        }
    }
}

thread_local! {
    /// A default congestion control the namespace refused, set on each socket() instead.
    static DEFAULT_CC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn kernel_shell(cmd: &str, apply: bool, offload: &mut dyn FnMut(bool) -> Result<(), String>) -> Result<(), String> {
    for c in sysctl::commands_in_order(cmd) {
        match c? {
            Cmd::Sysctl(k, v) => {
                if apply {
                    write_sysctl(&k, &v)?;
                } else if !k.starts_with("net.")
                    || !std::path::Path::new(&format!("/proc/sys/{}", k.replace('.', "/"))).exists()
                {
                    return Err(format!(
                        "sysctl {k} is not per-namespace on this kernel (the kernel backend changes nothing outside \
                         its own)"
                    ));
                }
            }
            // TSO on the device decides whether the kernel hands it GSO packets whole (what packetdrill's
            // sniffer then sees) or segments them first. GSO alone does not: TCP's skbs stay GSO packets
            // whatever the device offers (`sk_setup_caps`), and a device without TSO gets their segments.
            Cmd::Offload { tso: true, on } if apply => offload(on)?,
            // A module parameter is the host's, not the namespace's: never written, only read, and the
            // script runs when it already has the value asked for.
            Cmd::HystartDetect(d) => {
                let path = "/sys/module/tcp_cubic/parameters/hystart_detect";
                let now = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                if now.trim() != d.to_string() {
                    return Err(format!(
                        "{path} is {} where the script asks {d}: a module parameter is global to the host and the \
                         kernel backend changes nothing outside its namespace",
                        now.trim()
                    ));
                }
            }
            // Not installed: the kernel backend sets up no qdisc (and this machine's kernel has no sch_fq).
            Cmd::FqQdisc => return Err("the fq qdisc: the kernel backend installs no qdisc".into()),
            Cmd::Offload { .. } | Cmd::Nothing => {}
        }
    }
    Ok(())
}

fn run_inside(script: &Script, ns: &Netns) -> Verdict {
    interp::run_script(script, |script| {
        // packetdrill's device takes checksum and TSO offload, like a typical Ethernet device (netdev.c
        // `set_device_offload_flags`), unless the set-up turns TSO off.
        let mut tso = true;
        for (cmd, _) in &script.setup {
            kernel_shell(cmd, true, &mut |on| {
                tso = on;
                Ok(())
            })?;
        }
        let tun = tcplab_emu::tun::open(tcplab_emu::tun::DEVICE, tso).map_err(|e| format!("TUN device: {e}"))?;
        let dev = tcplab_emu::tun::DEVICE;
        let local = format!("{}.{}.{}.{}", LOCAL_ADDR[0], LOCAL_ADDR[1], LOCAL_ADDR[2], LOCAL_ADDR[3]);
        let remote = format!("{}.{}.{}.{}", REMOTE_ADDR[0], REMOTE_ADDR[1], REMOTE_ADDR[2], REMOTE_ADDR[3]);
        ns.ip(&["addr", "add", &local, "peer", &remote, "dev", dev]).map_err(|e| e.to_string())?;
        ns.ip(&["link", "set", dev, "mtu", "1500", "up"]).map_err(|e| e.to_string())?;
        let sniff = sniffer(dev).map_err(|e| format!("the packet socket on {dev}: {e}"))?;
        let mut k = Kernel::new(tun, sniff).map_err(|e| format!("the system call thread: {e}"))?;
        k.gso_size = gso_size(script);
        let shell: interp::Shell = Box::new(|cmd| kernel_shell(cmd, false, &mut |_| Ok(())));
        Ok((k, shell, tcpi_names()))
    })
}

/// A result from the system call thread: value, errno, and when it returned.
type CallDone = (i64, Option<&'static str>, WallInstant);
type Job = Box<dyn FnOnce() -> (i64, Option<&'static str>) + Send>;

/// The thread that makes the system calls.
struct Worker {
    jobs: mpsc::Sender<Job>,
    done: mpsc::Receiver<CallDone>,
    tid: Arc<AtomicI32>,
    in_call: Arc<AtomicBool>,
}

struct Kernel {
    tun: OwnedFd,
    /// [`sniffer`]: the outbound packets and the kernel's time of each.
    sniff: OwnedFd,
    t0: WallInstant,
    /// CLOCK_REALTIME (ns) read together with `t0`: the kernel's packet stamps count from it.
    t0_real_ns: i128,
    worker: Worker,
    /// Script descriptor → kernel descriptor.
    fds: BTreeMap<i32, i32>,
    conns: Vec<View>,
    under_test: Option<usize>,
    /// The socket the `%{ }%` blocks read `tcp_info` from: the last accepted or connecting one.
    info_fd: Option<i32>,
    listening: bool,
    out: VecDeque<Outbound>,
    /// Outbound packets the packet socket saw, with the kernel's CLOCK_REALTIME stamp (ns), not yet
    /// read from the TUN device.
    sniffed: VecDeque<(i128, Vec<u8>)>,
    ip_id: u16,
    /// `--mss` (0: none): inbound packets with more payload go in as GSO packets of this segment size.
    gso_size: u16,
}

/// A packet socket on the device that sees what the kernel sends to it, each packet stamped by the kernel
/// as it passed the device's taps (`dev_queue_xmit_nit`; SO_TIMESTAMPNS), as packetdrill sniffs outbound
/// packets (packet_socket_linux.c, SIOCGSTAMP): the time a packet was sent is then the kernel's, not the
/// moment this process, woken on a busy machine, read it from the TUN device.
fn sniffer(dev: &str) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    let name = std::ffi::CString::new(dev).expect("a device name has no NUL");
    // SAFETY: name is a valid C string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let proto = (libc::ETH_P_IP as u16).to_be();
    // SAFETY: plain socket creation.
    let fd = unsafe {
        libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, proto as i32)
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd was just created and is owned from here on.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_ll is plain data; zeroed is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: sll is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Room for a whole window's burst between two reads (root may exceed rmem_max).
    let space: libc::c_int = 8 << 20;
    // SAFETY: an int option.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&space as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        )
    };
    let on: libc::c_int = 1;
    // SAFETY: an int option.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as u32,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd)
}

/// `ethtool -K tun0 tso on|off` in the middle of a script: the device's offloads (TUNSETOFFLOAD: checksum
/// always, TSO4 when on).
fn set_tso(tun: i32, on: bool) -> Result<(), String> {
    const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
    const TUN_F_CSUM: libc::c_ulong = 0x01;
    const TUN_F_TSO4: libc::c_ulong = 0x02;
    let flags = if on { TUN_F_CSUM | TUN_F_TSO4 } else { TUN_F_CSUM };
    // SAFETY: TUNSETOFFLOAD takes the flags by value.
    if unsafe { libc::ioctl(tun, TUNSETOFFLOAD as _, flags) } < 0 {
        return Err(format!("TUNSETOFFLOAD: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// CLOCK_REALTIME in ns, the clock SO_TIMESTAMPNS stamps with.
fn realtime_ns() -> i128 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
}

/// The script's `--mss`: packetdrill's `linux_tun_write` gives every inbound TCP packet a virtio-net
/// header with `gso_type` TCPV4 and `gso_size` = `--mss`, so the kernel takes a larger packet as one GSO
/// super-packet (as GRO would have built it) and measures the peer's segment size from `gso_size`.
fn gso_size(script: &Script) -> u16 {
    script
        .options
        .iter()
        .find(|(name, _, _)| name == "mss")
        .and_then(|(_, v, _)| v.as_deref()?.parse().ok())
        .unwrap_or(0)
}

/// The virtio-net header in front of an inbound packet (`struct virtio_net_hdr`, legacy layout: native
/// byte order). No checksum offload (`flags` 0): the packet carries full checksums, as packetdrill's do.
/// A packet no larger than `gso_size` gets a plain header: the kernel ignores a GSO type on a packet
/// that fits one segment (`virtio_net_hdr_to_skb`: "Too small packets are not really GSO ones").
fn vnet_header(gso_size: u16, payload_len: u32) -> [u8; VNET_HDR_LEN] {
    let mut h = [0u8; VNET_HDR_LEN];
    if gso_size > 0 && payload_len > gso_size as u32 {
        h[1] = tcplab_emu::tun::GSO_TCPV4;
        h[4..6].copy_from_slice(&gso_size.to_ne_bytes());
    }
    h
}

fn errno_name(e: i32) -> &'static str {
    match e {
        libc::EAGAIN => "EAGAIN",
        libc::EINPROGRESS => "EINPROGRESS",
        libc::EALREADY => "EALREADY",
        libc::ECONNRESET => "ECONNRESET",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::EPIPE => "EPIPE",
        libc::ENOTCONN => "ENOTCONN",
        libc::EBADF => "EBADF",
        libc::EINVAL => "EINVAL",
        libc::EISCONN => "EISCONN",
        libc::EADDRINUSE => "EADDRINUSE",
        libc::ENOPROTOOPT => "ENOPROTOOPT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EFAULT => "EFAULT",
        libc::EPERM => "EPERM",
        _ => "EOTHER",
    }
}

/// A libc return value with its errno, as the script sees it.
fn ret(r: isize) -> (i64, Option<&'static str>) {
    if r < 0 {
        (-1, Some(errno_name(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))))
    } else {
        (r as i64, None)
    }
}

fn sockaddr(addr: [u8; 4], port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr) },
        sin_zero: [0; 8],
    }
}

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

impl Kernel {
    fn new(tun: OwnedFd, sniff: OwnedFd) -> std::io::Result<Kernel> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (tx, done) = mpsc::channel::<CallDone>();
        let tid = Arc::new(AtomicI32::new(0));
        let in_call = Arc::new(AtomicBool::new(false));
        let (tid2, in_call2) = (tid.clone(), in_call.clone());
        // The thread is created from this one, so it is in the namespace too.
        std::thread::Builder::new().name("pd-syscalls".into()).spawn(move || {
            tid2.store(gettid(), Ordering::SeqCst);
            while let Ok(job) = rx.recv() {
                in_call2.store(true, Ordering::SeqCst);
                let (v, e) = job();
                in_call2.store(false, Ordering::SeqCst);
                let at = WallInstant::now();
                if tx.send((v, e, at)).is_err() {
                    break;
                }
            }
        })?;
        while tid.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        Ok(Kernel {
            tun,
            sniff,
            t0: WallInstant::now(),
            t0_real_ns: realtime_ns(),
            worker: Worker { jobs, done, tid, in_call },
            fds: BTreeMap::new(),
            conns: Vec::new(),
            under_test: None,
            info_fd: None,
            listening: false,
            out: VecDeque::new(),
            sniffed: VecDeque::new(),
            ip_id: 1,
            gso_size: 0,
        })
    }

    /// Whether the call may block: accept, connect, read and write on a blocking socket.
    fn may_block(&self, c: &Syscall) -> bool {
        let blocking_kind = matches!(
            c.name.as_str(),
            "accept" | "connect" | "write" | "send" | "sendto" | "read" | "recv" | "recvfrom" | "close"
        );
        let Ok(fd) = self.real_fd(c) else { return false };
        // SAFETY: F_GETFL has no argument.
        let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        blocking_kind && fl >= 0 && fl & libc::O_NONBLOCK == 0
    }

    /// Whether the system call thread sleeps inside a call (packetdrill: the call blocks).
    fn worker_blocked(&self) -> bool {
        let tid = self.worker.tid.load(Ordering::SeqCst);
        let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()).unwrap_or("");
        self.worker.in_call.load(Ordering::SeqCst) && (state == "S" || state == "D")
    }

    /// Reads every packet the kernel has sent so far.
    fn drain_tun(&mut self) -> bool {
        self.drain_sniffer();
        let mut any = false;
        let mut buf = vec![0u8; 65_536 + VNET_HDR_LEN];
        loop {
            // SAFETY: buf is valid for buf.len() bytes.
            let n = unsafe { libc::read(self.tun.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return any;
            }
            let pkt = &buf[VNET_HDR_LEN.min(n as usize)..n as usize];
            // The kernel's stamp of the same packet at the device's taps; the read time if it has none.
            let at = self.stamp_of(pkt).unwrap_or_else(|| self.now_us());
            let Ok((ip, seg)) = codec::parse_ipv4_tcp_with(pkt, codec::Checksums::Ignore) else { continue };
            let hl = (ip.header_len as usize).min(pkt.len());
            let tcp = &pkt[hl..];
            let thl = (((tcp.get(12).copied().unwrap_or(0x50)) >> 4) as usize * 4).clamp(20, tcp.len().max(20));
            let opts = interp::decode_options(tcp.get(20..thl).unwrap_or(&[]));
            any = true;
            let conn = self.conn_of_outbound(&seg);
            self.out.push_back(Outbound { at_us: at, conn, seg, opts });
        }
    }

    /// Takes what the packet socket has seen the kernel send, with the kernel's stamps.
    fn drain_sniffer(&mut self) {
        let mut buf = vec![0u8; 65_536];
        loop {
            // SAFETY: plain data; zeroed is a valid value for each.
            let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut ctrl = [0u64; 16];
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
            // SAFETY: as above.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = ctrl.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&ctrl) as _;
            // SAFETY: msg points at live buffers of the sizes it gives; the socket does not block.
            let n = unsafe { libc::recvmsg(self.sniff.as_raw_fd(), &mut msg, 0) };
            if n <= 0 {
                return;
            }
            if sll.sll_pkttype != libc::PACKET_OUTGOING {
                continue; // what the script injected
            }
            let mut stamp = None;
            // SAFETY: the control buffer was filled by recvmsg; the CMSG macros walk it within its length.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                        let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                        stamp = Some(ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128);
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            if let Some(ns) = stamp {
                self.sniffed.push_back((ns, buf[..n as usize].to_vec()));
            }
        }
    }

    /// The kernel's stamp (µs of script time) of the packet read from the TUN device: the same bytes
    /// seen at the taps, which come first (the taps see a packet before the device queues it).
    fn stamp_of(&mut self, pkt: &[u8]) -> Option<i64> {
        let i = self.sniffed.iter().position(|(_, b)| b == pkt)?;
        let (ns, _) = self.sniffed.drain(..=i).next_back().expect("a packet at i");
        Some(((ns - self.t0_real_ns) / 1000) as i64)
    }

    /// Which connection an outbound segment belongs to; a SYN from a new port opens one (connect()).
    fn conn_of_outbound(&mut self, seg: &TcpSegment) -> usize {
        if let Some(i) = self.conns.iter().position(|v| v.local_port == seg.src_port && v.remote_port == seg.dst_port) {
            return i;
        }
        if seg.flags.syn() && !seg.flags.ack() {
            self.conns.push(View {
                live_local_isn: seg.seq.0,
                remote_port: seg.dst_port,
                local_port: seg.src_port,
                ..View::default()
            });
            self.under_test = Some(self.conns.len() - 1);
            return self.conns.len() - 1;
        }
        NO_CONN
    }

    fn write_tun(&mut self, seg: &TcpSegment) -> Result<(), String> {
        let mut buf = vnet_header(self.gso_size, seg.payload_len).to_vec();
        self.ip_id = self.ip_id.wrapping_add(1);
        codec::emit_ipv4_tcp(seg, REMOTE_ADDR, LOCAL_ADDR, self.ip_id, PayloadFill::Zeros, &mut buf)
            .map_err(|e| format!("the inbound packet cannot be encoded: {e:?}"))?;
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::write(self.tun.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(format!("writing to the TUN device: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    fn real_fd(&self, c: &Syscall) -> Result<i32, String> {
        match c.args.first() {
            Some(Expr::Int(v)) => Ok(self.fds.get(&(*v as i32)).copied().unwrap_or(-1)),
            _ => Err(format!("{}(): the first argument must be a file descriptor", c.name)),
        }
    }

    /// The call as a job for the system call thread (`Err`: the script's call cannot be made).
    fn job(&mut self, c: &Syscall) -> Result<Job, String> {
        let name = c.name.as_str();
        if name == "socket" {
            let cc = DEFAULT_CC.with(|c| c.borrow().clone());
            return Ok(Box::new(move || {
                // SAFETY: plain socket(2).
                let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_TCP) };
                if let (Some(cc), true) = (cc, fd >= 0) {
                    // SAFETY: cc is valid for its length.
                    let r = unsafe {
                        libc::setsockopt(
                            fd,
                            libc::IPPROTO_TCP,
                            libc::TCP_CONGESTION,
                            cc.as_ptr().cast(),
                            cc.len() as u32,
                        )
                    };
                    if r < 0 {
                        return ret(r as isize);
                    }
                }
                ret(fd as isize)
            }));
        }
        let fd = self.real_fd(c)?;
        let n = interp::int_arg(c.args.get(2));
        Ok(match name {
            "bind" => Box::new(move || {
                let a = sockaddr(LOCAL_ADDR, LOCAL_PORT);
                // SAFETY: a is a valid sockaddr_in of the size given.
                ret(
                    unsafe { libc::bind(fd, (&a as *const libc::sockaddr_in).cast(), std::mem::size_of_val(&a) as u32) }
                        as isize,
                )
            }),
            "listen" => {
                let backlog = n.or(interp::int_arg(c.args.get(1))).unwrap_or(1) as i32;
                // SAFETY: plain listen(2).
                Box::new(move || ret(unsafe { libc::listen(fd, backlog) } as isize))
            }
            "accept" => Box::new(move || {
                // SAFETY: null address pointers are allowed.
                ret(unsafe { libc::accept(fd, std::ptr::null_mut(), std::ptr::null_mut()) } as isize)
            }),
            "connect" => Box::new(move || {
                let a = sockaddr(REMOTE_ADDR, LOCAL_PORT);
                // SAFETY: a is a valid sockaddr_in of the size given.
                ret(unsafe {
                    libc::connect(fd, (&a as *const libc::sockaddr_in).cast(), std::mem::size_of_val(&a) as u32)
                } as isize)
            }),
            "write" | "send" | "sendto" => {
                let n = n.ok_or_else(|| format!("{name}(): the length (third argument) must be an integer"))?;
                Box::new(move || {
                    let buf = vec![0u8; n.max(0) as usize];
                    // SAFETY: buf is valid for its length.
                    ret(unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) })
                })
            }
            "read" | "recv" | "recvfrom" => {
                let n = n.ok_or_else(|| format!("{name}(): the length (third argument) must be an integer"))?;
                Box::new(move || {
                    let mut buf = vec![0u8; n.max(0) as usize];
                    // SAFETY: buf is valid for its length.
                    ret(unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) })
                })
            }
            "close" => Box::new(move || ret(unsafe { libc::close(fd) } as isize)),
            "shutdown" => {
                let how = match c.args.get(1) {
                    Some(Expr::Ident(h)) if h == "SHUT_RD" => libc::SHUT_RD,
                    Some(Expr::Ident(h)) if h == "SHUT_WR" => libc::SHUT_WR,
                    Some(Expr::Ident(h)) if h == "SHUT_RDWR" => libc::SHUT_RDWR,
                    Some(Expr::Int(v)) => *v as i32,
                    other => return Err(format!("shutdown(): `{other:?}`: accepted SHUT_RD, SHUT_WR, SHUT_RDWR")),
                };
                // SAFETY: plain shutdown(2).
                Box::new(move || ret(unsafe { libc::shutdown(fd, how) } as isize))
            }
            "fcntl" => {
                let cmd = match c.args.get(1) {
                    Some(Expr::Ident(n)) if n == "F_GETFL" => libc::F_GETFL,
                    Some(Expr::Ident(n)) if n == "F_SETFL" => libc::F_SETFL,
                    other => return Err(format!("fcntl {other:?}: accepted F_GETFL, F_SETFL")),
                };
                let mut flags = 0;
                for f in flag_names(c.args.get(2)) {
                    flags |= match f.as_str() {
                        "O_NONBLOCK" => libc::O_NONBLOCK,
                        "O_RDWR" => libc::O_RDWR,
                        other => return Err(format!("fcntl flag {other}: accepted O_NONBLOCK, O_RDWR")),
                    };
                }
                // SAFETY: fcntl with an int argument.
                Box::new(move || ret(unsafe { libc::fcntl(fd, cmd, flags) } as isize))
            }
            "setsockopt" => {
                let (level, opt) = sockopt(c.args.get(2))?;
                let bytes: Vec<u8> = match c.args.get(3) {
                    Some(Expr::Str(s)) => s.as_bytes().to_vec(),
                    Some(Expr::Struct(f)) => {
                        let get = |n: &str| {
                            f.iter().find(|(k, _)| k == n).and_then(|(_, v)| interp::int_arg(Some(v))).unwrap_or(0)
                        };
                        let l = libc::linger { l_onoff: get("l_onoff") as i32, l_linger: get("l_linger") as i32 };
                        let mut b = l.l_onoff.to_ne_bytes().to_vec();
                        b.extend_from_slice(&l.l_linger.to_ne_bytes());
                        b
                    }
                    other => match interp::int_arg(other) {
                        Some(v) => (v as i32).to_ne_bytes().to_vec(),
                        None => return Err(format!("setsockopt value {other:?}: accepted [int], \"name\", {{...}}")),
                    },
                };
                Box::new(move || {
                    // SAFETY: bytes is valid for its length.
                    ret(unsafe { libc::setsockopt(fd, level, opt, bytes.as_ptr().cast(), bytes.len() as u32) } as isize)
                })
            }
            "getsockopt" => {
                let (level, opt) = sockopt(c.args.get(2))?;
                let want = interp::int_arg(c.args.get(3));
                // The value is compared on the thread; a mismatch comes back as -2 - value, which
                // `completed` turns into the failure (no call returns below -1 otherwise).
                Box::new(move || {
                    let mut v: i32 = 0;
                    let mut len = 4u32;
                    // SAFETY: v is valid for 4 bytes.
                    let r = ret(
                        unsafe { libc::getsockopt(fd, level, opt, (&mut v as *mut i32).cast(), &mut len) } as isize
                    );
                    match (r, want) {
                        ((0, None), Some(w)) if v as i64 != w => (-2 - v as i64, None),
                        _ => r,
                    }
                })
            }
            other => return Err(format!("system call {other}() is not implemented on the kernel backend")),
        })
    }

    fn completed(&mut self, c: &Syscall, v: i64, e: Option<&'static str>) -> Result<i64, String> {
        match c.name.as_str() {
            "socket" | "accept" if v >= 0 => {
                let script = match &c.ret {
                    Expr::Int(s) if *s >= 0 => *s as i32,
                    _ => 1000 + self.fds.len() as i32,
                };
                self.fds.insert(script, v as i32);
                if c.name == "accept" {
                    self.info_fd = Some(v as i32);
                }
                Ok(script as i64)
            }
            "getsockopt" if v <= -2 => Err(format!(
                "getsockopt {:?}: value {}, expected {:?}",
                c.args.get(2),
                -(v + 2),
                interp::int_arg(c.args.get(3))
            )),
            "close" if e.is_none() => {
                if let Some(Expr::Int(s)) = c.args.first() {
                    self.fds.remove(&(*s as i32));
                }
                Ok(v)
            }
            _ => Ok(v),
        }
    }
}

fn flag_names(e: Option<&Expr>) -> Vec<String> {
    match e {
        Some(Expr::Ident(n)) => vec![n.clone()],
        Some(Expr::Or(v)) => v.iter().flat_map(|x| flag_names(Some(x))).collect(),
        _ => Vec::new(),
    }
}

fn sockopt(e: Option<&Expr>) -> Result<(i32, i32), String> {
    let name = match e {
        Some(Expr::Ident(n)) => n.as_str(),
        other => return Err(format!("socket option {other:?}: must be a constant")),
    };
    Ok(match name {
        "SO_REUSEADDR" => (libc::SOL_SOCKET, libc::SO_REUSEADDR),
        "SO_REUSEPORT" => (libc::SOL_SOCKET, libc::SO_REUSEPORT),
        "SO_SNDBUF" => (libc::SOL_SOCKET, libc::SO_SNDBUF),
        "SO_RCVBUF" => (libc::SOL_SOCKET, libc::SO_RCVBUF),
        "SO_LINGER" => (libc::SOL_SOCKET, libc::SO_LINGER),
        "SO_ERROR" => (libc::SOL_SOCKET, libc::SO_ERROR),
        "TCP_NODELAY" => (libc::IPPROTO_TCP, libc::TCP_NODELAY),
        "TCP_CORK" => (libc::IPPROTO_TCP, libc::TCP_CORK),
        "TCP_MAXSEG" => (libc::IPPROTO_TCP, libc::TCP_MAXSEG),
        "TCP_CONGESTION" => (libc::IPPROTO_TCP, libc::TCP_CONGESTION),
        "TCP_QUICKACK" => (libc::IPPROTO_TCP, libc::TCP_QUICKACK),
        "IP_MTU_DISCOVER" => (libc::IPPROTO_IP, libc::IP_MTU_DISCOVER),
        other => return Err(format!("socket option {other} is not implemented on the kernel backend")),
    })
}

impl Backend for Kernel {
    fn now_us(&self) -> i64 {
        self.t0.elapsed().as_micros() as i64
    }

    fn step(&mut self, until: i64) -> Result<bool, String> {
        if self.drain_tun() {
            return Ok(true);
        }
        let now = self.now_us();
        if now >= until {
            return Ok(false);
        }
        // Wake for a packet, or at the latest after 1 ms (a blocking call may have returned).
        let wait = (until - now).clamp(0, 1000);
        let ts = libc::timespec { tv_sec: 0, tv_nsec: wait as libc::c_long * 1000 };
        let mut pfd = libc::pollfd { fd: self.tun.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd, a valid timespec, no signal mask.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        self.drain_tun();
        Ok(true)
    }

    fn inject(&mut self, p: &Packet) -> Result<(), String> {
        self.drain_tun();
        let syn_only = p.flags & 0x12 == 0x02;
        if syn_only && self.listening && self.under_test.is_none() {
            let port = REMOTE_PORT_BASE + self.conns.len() as u16;
            self.conns.push(View {
                remote_port: port,
                local_port: LOCAL_PORT,
                script_remote_isn: p.seq,
                ..View::default()
            });
            self.under_test = Some(self.conns.len() - 1);
        }
        let seg = match self.under_test {
            Some(i) => {
                if p.flags & 0x12 == 0x12 && self.conns[i].script_remote_isn == 0 {
                    // The SYN-ACK tells the script's ISN.
                    self.conns[i].script_remote_isn = p.seq;
                }
                interp::inbound_segment(Some(&self.conns[i]), REMOTE_PORT_BASE, p)?
            }
            None => interp::inbound_segment(None, REMOTE_PORT_BASE, p)?,
        };
        self.write_tun(&seg)
    }

    fn pop_outbound(&mut self) -> Option<Outbound> {
        self.drain_tun();
        self.out.pop_front()
    }

    fn under_test(&self) -> Option<usize> {
        self.under_test
    }

    fn view(&mut self, conn: usize) -> Option<&mut View> {
        self.conns.get_mut(conn)
    }

    fn call(&mut self, c: &Syscall) -> Result<CallResult, String> {
        let job = self.job(c)?;
        if c.name == "listen" {
            self.listening = true;
            self.under_test = None;
        }
        if c.name == "connect" {
            self.info_fd = self.real_fd(c).ok();
        }
        if !self.may_block(c) {
            // A call that cannot block is made here and now: handing it to the other thread would
            // only add the scheduler's delay to its time.
            let (v, e) = job();
            let v = self.completed(c, v, e)?;
            return Ok(CallResult::Done(v, e));
        }
        self.worker.jobs.send(job).map_err(|_| "the system call thread is gone".to_string())?;
        loop {
            if let Ok((v, e, _)) = self.worker.done.try_recv() {
                let v = self.completed(c, v, e)?;
                return Ok(CallResult::Done(v, e));
            }
            if self.worker_blocked() {
                return Ok(CallResult::WouldBlock);
            }
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
    }

    fn poll_call(&mut self, c: &Syscall) -> Result<Option<interp::Returned>, String> {
        match self.worker.done.try_recv() {
            Ok((v, e, at)) => {
                let v = self.completed(c, v, e)?;
                let at = at.saturating_duration_since(self.t0).as_micros() as i64;
                Ok(Some((v, e, at)))
            }
            Err(_) => Ok(None),
        }
    }

    fn tcp_info(&mut self) -> Result<Vec<(&'static str, i64)>, String> {
        let fd = self
            .info_fd
            .or_else(|| self.fds.values().last().copied())
            .ok_or("a %{ }% block needs a socket under test (none was opened yet)")?;
        let mut buf = [0u8; 256];
        let mut len = buf.len() as u32;
        // SAFETY: buf is valid for len bytes.
        let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, buf.as_mut_ptr().cast(), &mut len) };
        if r < 0 {
            return Err(format!("getsockopt TCP_INFO: {}", std::io::Error::last_os_error()));
        }
        let len = len as usize;
        let mut out = Vec::new();
        for (name, off, size) in TCPI {
            let v = match size {
                1 => buf[*off] as i64,
                0x10 => (buf[*off] & 0x0f) as i64,
                0x11 => (buf[*off] >> 4) as i64,
                4 if off + 4 <= len => u32::from_ne_bytes(buf[*off..off + 4].try_into().expect("4 bytes")) as i64,
                8 if off + 8 <= len => u64::from_ne_bytes(buf[*off..off + 8].try_into().expect("8 bytes")) as i64,
                _ => continue,
            };
            out.push((*name, v));
        }
        let mut mem = [0u32; 9];
        let mut len = std::mem::size_of_val(&mem) as u32;
        // SAFETY: mem is valid for len bytes.
        let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_MEMINFO, mem.as_mut_ptr().cast(), &mut len) };
        if r < 0 {
            return Err(format!("getsockopt SO_MEMINFO: {}", std::io::Error::last_os_error()));
        }
        let n = (len as usize / 4).min(SK_MEMINFO.len());
        out.extend(SK_MEMINFO[..n].iter().zip(mem).map(|(name, v)| (*name, v as i64)));
        Ok(out)
    }

    fn shell(&mut self, cmd: &str) -> Result<(), String> {
        let tun = self.tun.as_raw_fd();
        kernel_shell(cmd, true, &mut |on| set_tso(tun, on))
    }

    fn start(&mut self) {
        self.t0 = WallInstant::now();
        self.t0_real_ns = realtime_ns();
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // Descriptors the script left open; the namespace's removal then ends their connections.
        // A call still blocked on the system call thread is woken by the shutdown.
        for fd in self.fds.values() {
            // SAFETY: shutting down and closing descriptors this run opened.
            unsafe {
                libc::shutdown(*fd, libc::SHUT_RDWR);
                libc::close(*fd);
            }
        }
    }
}
