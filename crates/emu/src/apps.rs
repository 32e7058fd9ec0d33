//! The simulator's applications on real sockets: the sans-IO state machines of `tcplab_workload` (TCP_STREAM,
//! TCP_MAERTS, TCP_RR with its first burst, TCP_CRR, the small messages of `tcp_msg`; `App`) driven through
//! their `Sockets` interface by non-blocking kernel sockets and one epoll loop.
//!
//! One thread runs every application of both hosts, as the simulator's engine does. It lives in the
//! client's namespace, so the client's sockets are created there directly (TCP_CRR creates one per
//! transaction); a socket keeps the namespace it was created in, so the server's listening sockets are
//! created from a helper thread inside the server's namespace and then served from the same loop.
//!
//! How the `Sockets` calls map to the kernel:
//!
//! | call | kernel |
//! |---|---|
//! | `connect(port)` | `socket` (the side's socket options) and a non-blocking `connect`; `Established` when it completes; `EADDRNOTAVAIL` (no ephemeral port) is `NoFreePort` |
//! | `listen(port)` | a listening socket on the server's address; each `accept4` brings `Established` |
//! | `send(c, n)` | one non-blocking `send` of `n` bytes (zeros: payload is counted, not carried); a short write is the buffer full, the rest is the application's next call |
//! | `push(c)` | nothing (the kernel pushes at the end of each send call); "full" after 64 messages in one event: the writer yields the loop and hears `Writable` on the next round |
//! | `recv(c, max)` | `read` until the socket is empty or `max` bytes; a read of 0 is the peer's close (`is_eof`) |
//! | `close(c)` | `shutdown(SHUT_WR)`: the FIN follows the queued data; the descriptor is closed once the peer's FIN was read and ours acknowledged |
//! | `set_timer(at)` | a CLOCK_MONOTONIC timerfd at the earliest deadline asked for |
//! | `ready()`, `end_measurement()` | the measurement opens when every application is ready (`MeasureStart` to all) and closes `measure` later (`MeasureStop`), or at `end_measurement` |
//!
//! Readiness is edge-triggered: a connection is marked readable or writable by epoll and unmarked when a
//! read or a send would block; the application hears `Readable`/`Writable` only when it wants them
//! (`App::wants_readable`, `wants_writable`), as in the simulator. A connection whose application has
//! closed it and does not read is drained by the driver, so that the peer's close is seen.
//!
//! The run ends when the measurement is over and every connection is closed both ways (each end's statistics
//! are read from `TCP_INFO` then), or `drain` after the measurement.

use serde::Serialize;
use tcplab_units::Duration;
use tcplab_workload::App;

use crate::kstats::{Estats, NetCounters};
use crate::testbed::Side;

#[cfg(target_os = "linux")]
pub use os::run_apps;

/// What to run over a testbed.
#[derive(Debug, Clone)]
pub struct AppsSpec {
    /// The applications and the host each runs on, in the order they start (servers first, as the lab
    /// builds them for the simulator).
    pub apps: Vec<(Side, App)>,
    /// Length of the measurement window.
    pub measure: Duration,
    /// How long after the measurement the connections may take to close (the simulator's 30 s).
    pub drain: Duration,
    /// How long the applications may take to become ready (every connection up) before the run fails.
    pub ready_limit: Duration,
    /// Connection ends whose final statistics are kept, in the order they closed (the retransmission total
    /// counts every end).
    pub keep_connections: usize,
    /// Run the applications' thread at SCHED_FIFO priority 40 (below the emulator's 50), so that other
    /// work on a shared machine does not delay the applications' reactions (a request/response test
    /// measures them). Default true; `AppsRun::realtime` says whether it was granted.
    pub realtime: bool,
    /// Sample every connection end's `TCP_INFO` over time (`AppsRun::series`); default none.
    pub series: Option<SeriesSpec>,
}

/// What the connections' series samples: `vars` (names of [`crate::kstats::kernel_vars`]) of every
/// connection end, every `interval`, on the simulator's ticks: multiples of `interval` from the
/// applications' start until the measurement opens, a sample at its opening, then multiples of `interval`
/// from there until the run ends.
#[derive(Debug, Clone)]
pub struct SeriesSpec {
    pub interval: Duration,
    pub vars: Vec<String>,
}

/// The connections over time (`AppsSpec::series`). Read on the applications' thread between its I/O: at
/// the top of the loop's turn that reaches a tick's instant (the loop sleeps until the next tick at the
/// latest), every live connection end's `TCP_INFO` (and `TCP_CC_INFO`) is read, with no I/O of the
/// applications in between.
#[derive(Debug, Clone, Default)]
pub struct ConnSeries {
    pub interval_ns: u64,
    pub vars: Vec<String>,
    /// Each tick's instant (its clock edge), ns from the applications' start.
    pub ticks_ns: Vec<u64>,
    /// The connection ends in creation order (`id` is the index among every end the run made), each from
    /// the first tick after it was created until its statistics were read and its socket closed.
    pub ends: Vec<EndSamples>,
    /// How late the readings were taken after their tick's edge: the sum and the largest, ns.
    pub late_ns_sum: u64,
    pub late_ns_max: u64,
    /// Ticks passed over because the loop reached them more than an interval late (the next edge is
    /// sampled instead: a sample is never taken twice from one reading).
    pub ticks_missed: u64,
    /// The applications' thread's time spent reading the statistics, ns: the sampling's cost.
    pub cost_ns: u64,
    /// `getsockopt` calls made.
    pub reads: u64,
}

/// One connection end's samples.
#[derive(Debug, Clone)]
pub struct EndSamples {
    pub id: u32,
    pub side: &'static str,
    pub local_port: u16,
    pub remote_port: u16,
    /// (tick index into `ticks_ns`, `vars` in order (NaN: no value, such as an infinite ssthresh or a
    /// BBR figure of a CUBIC socket), bytes the application had read from it by then).
    pub rows: Vec<(u32, Vec<f64>, u64)>,
}

impl AppsSpec {
    pub fn new(apps: Vec<(Side, App)>, measure: Duration) -> AppsSpec {
        AppsSpec {
            apps,
            measure,
            drain: Duration::from_secs(30),
            ready_limit: Duration::from_secs(60),
            keep_connections: usize::MAX,
            realtime: true,
            series: None,
        }
    }
}

/// One connection end at the end of its life (or of the run).
#[derive(Debug, Clone, Serialize)]
pub struct ConnEnd {
    pub side: &'static str,
    pub local_port: u16,
    pub remote_port: u16,
    /// TCP state when the statistics were read (`TIME-WAIT`, `LAST-ACK`, `CLOSED`, ...).
    pub state: String,
    pub congestion: String,
    pub estats: Estats,
}

/// CPU utilization of the whole machine over the measurement window, from `/proc/stat` as netperf's "S"
/// method measures it: the share of ticks that were not idle, over all CPUs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct SystemCpu {
    /// Busy fraction of all CPUs, 0–1 (every state but `idle` counts as busy, `steal` and `iowait`
    /// included, as in netperf).
    pub util: f64,
    /// Online CPUs (`cpuN` lines).
    pub cpus: u32,
    /// Busy CPU time over the window, summed over CPUs, seconds (`util` × `cpus` × window).
    pub busy_s: f64,
}

/// What [`run_apps`] measured.
#[derive(Debug, Clone)]
pub struct AppsRun {
    /// The applications after the run (their `report()` holds the figures), in the order given.
    pub apps: Vec<(Side, App)>,
    /// Kept connection ends, in creation order.
    pub connections: Vec<ConnEnd>,
    /// Every connection end created, and their retransmitted segments (`tcpi_total_retrans`) summed.
    pub connection_ends: u64,
    pub retransmissions: u64,
    /// `/proc/net/netstat` and `/proc/net/snmp` deltas of each namespace over the run.
    pub client_netstat: NetCounters,
    pub server_netstat: NetCounters,
    /// Over the measurement window (absent when /proc/stat cannot be read).
    pub cpu: Option<SystemCpu>,
    /// The measurement window's length as it ran, s.
    pub measure_s: f64,
    /// When the measurement opened and closed, and when the run ended (every connection closed, or the
    /// drain over), ns from the applications' start (the origin of the queue series).
    pub measure_start_ns: u64,
    pub measure_stop_ns: u64,
    pub end_ns: u64,
    /// Whether the applications' thread got SCHED_FIFO.
    pub realtime: bool,
    /// With `AppsSpec::series`.
    pub series: Option<ConnSeries>,
}

/// Ticks of the aggregate `cpu` line of /proc/stat: (all, idle), and the number of `cpuN` lines.
pub fn parse_proc_stat(text: &str) -> Option<(u64, u64, u32)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice: already inside user and nice]
    let all: u64 = v.iter().take(8).sum();
    let idle = *v.get(3)?;
    let cpus = text.lines().filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit));
    Some((all, idle, cpus.count() as u32))
}

/// The utilization between two /proc/stat readings over `window_s`.
pub fn system_cpu(before: (u64, u64, u32), after: (u64, u64, u32), window_s: f64) -> Option<SystemCpu> {
    let all = after.0.checked_sub(before.0)?;
    let idle = after.1.checked_sub(before.1)?;
    if all == 0 {
        return None;
    }
    let util = (all - idle.min(all)) as f64 / all as f64;
    Some(SystemCpu { util, cpus: after.2, busy_s: util * after.2 as f64 * window_s })
}

/// The driver (Linux only).
#[cfg(target_os = "linux")]
mod os {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    use tcplab_units::Instant;
    use tcplab_workload::{App, ConnId, ConnectError, Event, Sockets};

    use super::{parse_proc_stat, system_cpu, AppsRun, AppsSpec, ConnEnd, ConnSeries, EndSamples};
    use crate::error::EmuError;
    use crate::knobs::SockOpts;
    use crate::kstats::{self, TcpInfo};
    use crate::stream::os::{apply_sockopts, congestion_of, counters, listen_on, sockaddr};
    use crate::sys::{self, cvt};
    use crate::testbed::{Side, Testbed, SERVER_ADDR};

    /// The most one send call offers (a larger `Sockets::send` is taken in part, as a short write): a
    /// scenario's messages and buffers are at most 1 GiB (docs/scenario.md).
    const MAX_SEND: u64 = 1 << 30;
    /// Epoll tokens: connections are their index; listeners and the timer are above this.
    const LISTENER: u64 = 1 << 40;
    const TIMER: u64 = 1 << 41;
    /// While connections wait for their FIN to be acknowledged they are polled this often, ns.
    const LINGER_POLL_NS: u64 = 1_000_000;
    /// Messages a writer completes in one turn (`Sockets::push` calls within one event) before it yields
    /// the loop to the other applications and to the kernel's readiness; it hears `Writable` again on the
    /// next round. Without it a back-to-back `tcp_msg` writer, whose 1-byte sends Nagle appends to one
    /// segment (a byte of send buffer each), would spend seconds filling its buffer while the reader, on
    /// the same thread, waits.
    const WRITE_TURN: u32 = 64;
    /// Bytes a writer hands to its sockets in one turn before it yields the loop, as [`WRITE_TURN`] does
    /// for messages. netperf's sender and receiver are separate processes; here one thread drives both
    /// ends, and a bulk writer woken by a third of a 16 MiB send buffer freed used to copy ~5 MB (80 calls
    /// of 64 KiB) before the receiving end could read. Linux acknowledges at once only what the
    /// application has read, or while the window still opens (`__tcp_ack_snd_check`), so the receiver
    /// answered that wait with one ACK for 20–45 segments, the sender released a whole window at once, and
    /// at 1 Gbit/s a 100-packet queue overflowed at cwnd 116, below the path's 172 (traced with
    /// `tcp:tcp_probe` and `net:net_dev_queue`; bulk-1g 3 s: 520–560 Mbit/s, 350–660 retransmissions).
    /// One 64 KiB call per turn: 760–900 Mbit/s, 95–150.
    const WRITE_TURN_BYTES: u64 = 64 * 1024;

    struct Conn {
        fd: Option<OwnedFd>,
        app: usize,
        side: Side,
        connecting: bool,
        /// `Established` is due.
        established: bool,
        readable: bool,
        writable: bool,
        eof: bool,
        closed: bool,
        /// Waiting for our FIN to be acknowledged before the statistics are read.
        lingering: bool,
        /// In the list of connections to look at.
        queued: bool,
        /// BBR's PROBE_RTT episodes and time-averaged RTT, from TCP_CC_INFO and TCP_INFO read as the loop
        /// turns (kstats.rs).
        probe_rtt: kstats::BbrSampler,
        /// Bytes the application read from it.
        read_bytes: u64,
        /// Its entry in the series' `ends`, from its first sample.
        series_end: Option<usize>,
    }

    struct Listener {
        fd: OwnedFd,
        app: usize,
    }

    /// Everything but the applications, so that an application can be lent the host while it runs.
    struct Host {
        ep: sys::EpollSet,
        timer: sys::TimerFd,
        armed: u64,
        t0: u64,
        opts: [SockOpts; 2],
        conns: Vec<Conn>,
        listeners: Vec<Listener>,
        /// Connections to look at (new readiness, closed by their application).
        queue: Vec<usize>,
        /// Writers that used up their turn: queued again after the next look at epoll.
        yielded: Vec<usize>,
        /// `Sockets::push` calls in the current event.
        pushes: u32,
        /// Bytes sent in the current event.
        turn_bytes: u64,
        lingering: Vec<usize>,
        /// Per application: the deadlines it asked for.
        timers: Vec<Vec<u64>>,
        ready: Vec<bool>,
        measuring: bool,
        stopped: bool,
        stop_at: u64,
        frozen: Option<u64>,
        buf: Vec<u8>,
        /// Payload of every send, grown to the largest call: the applications count bytes, the bytes
        /// themselves do not matter.
        zeros: Vec<u8>,
        ends: Vec<ConnEnd>,
        ends_total: u64,
        retrans: u64,
        keep: usize,
        error: Option<EmuError>,
    }

    fn side_name(s: Side) -> &'static str {
        match s {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    const CONN_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;

    impl Host {
        fn now(&self) -> u64 {
            sys::monotonic_ns() - self.t0
        }

        /// The instant the applications see: the measurement's own instant while `MeasureStart` or
        /// `MeasureStop` goes round (so every application's window is the same, as in the simulator, however
        /// long the first ones take to react), the clock otherwise.
        fn app_now(&self) -> u64 {
            self.frozen.unwrap_or_else(|| self.now())
        }

        fn fail(&mut self, e: EmuError) {
            self.error.get_or_insert(e);
        }

        fn add_conn(&mut self, fd: OwnedFd, app: usize, side: Side, connecting: bool) -> Option<usize> {
            let i = self.conns.len();
            if let Err(e) = self.ep.add(fd.as_raw_fd(), CONN_EVENTS, i as u64) {
                self.fail(EmuError::os("epoll_ctl", e));
                return None;
            }
            self.conns.push(Conn {
                fd: Some(fd),
                app,
                side,
                connecting,
                established: !connecting,
                readable: false,
                writable: false,
                eof: false,
                closed: false,
                lingering: false,
                queued: false,
                probe_rtt: Default::default(),
                read_bytes: 0,
                series_end: None,
            });
            Some(i)
        }

        fn enqueue(&mut self, i: usize) {
            if !self.conns[i].queued {
                self.conns[i].queued = true;
                self.queue.push(i);
            }
        }

        fn fd(&self, i: usize) -> Option<RawFd> {
            self.conns.get(i)?.fd.as_ref().map(|f| f.as_raw_fd())
        }

        /// A non-blocking socket of `side`, connecting to the server's `port`.
        fn connect(&mut self, app: usize, side: Side, port: u16) -> Result<usize, ConnectError> {
            if side != Side::Client {
                // The loop lives in the client's namespace; only the client connects in every test.
                self.fail(EmuError::tool("apps", "an application on the server opened a connection"));
                return Err(ConnectError::NoFreePort);
            }
            let fd = match new_socket(&self.opts[0]) {
                Ok(fd) => fd,
                Err(e) => {
                    self.fail(EmuError::os("creating a client socket", e));
                    return Err(ConnectError::NoFreePort);
                }
            };
            let sa = sockaddr(SERVER_ADDR, port);
            let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            // SAFETY: `sa` is a valid sockaddr_in of `salen` bytes.
            let r = unsafe { libc::connect(fd.as_raw_fd(), (&sa as *const libc::sockaddr_in).cast(), salen) };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINPROGRESS) => {}
                    Some(libc::EADDRNOTAVAIL) => return Err(ConnectError::NoFreePort),
                    _ => {
                        self.fail(EmuError::os("connect", e));
                        return Err(ConnectError::NoFreePort);
                    }
                }
            }
            self.add_conn(fd, app, side, true).ok_or(ConnectError::NoFreePort)
        }

        fn send(&mut self, i: usize, bytes: u64) -> u64 {
            let Some(fd) = self.fd(i).filter(|_| !self.conns[i].connecting && !self.conns[i].closed) else {
                return 0;
            };
            // One send call, as the application's one write (a `tcp_msg` message is one call, and the kernel
            // pushes at the end of each: `tcp_sendmsg` → `tcp_push`); a short write leaves the rest for the
            // application's next call, once the socket is writable again.
            if self.turn_bytes >= WRITE_TURN_BYTES {
                // The turn is over: the application hears `Writable` again on the next round.
                self.yielded.push(i);
                return 0;
            }
            let n = bytes.min(MAX_SEND) as usize;
            if self.zeros.len() < n {
                self.zeros = vec![0; n.next_power_of_two().min(MAX_SEND as usize)];
            }
            loop {
                // SAFETY: `zeros` is valid for `n` bytes.
                let r =
                    unsafe { libc::send(fd, self.zeros.as_ptr().cast(), n, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::Interrupted => continue,
                        io::ErrorKind::WouldBlock => self.conns[i].writable = false,
                        _ => self.fail(EmuError::os("send", e)),
                    }
                    return 0;
                }
                if (r as usize) < n {
                    self.conns[i].writable = false;
                }
                self.turn_bytes += r as u64;
                return r as u64;
            }
        }

        fn recv(&mut self, i: usize, max: u64) -> u64 {
            let Some(fd) = self.fd(i).filter(|_| !self.conns[i].connecting) else { return 0 };
            if self.conns[i].eof {
                // Nothing comes after the peer's close (the socket stays readable for ever).
                self.conns[i].readable = false;
                return 0;
            }
            let mut got = 0u64;
            while got < max && !self.conns[i].eof {
                let n = (max - got).min(self.buf.len() as u64) as usize;
                // SAFETY: `buf` is valid for `n` bytes.
                let r = unsafe { libc::read(fd, self.buf.as_mut_ptr().cast(), n) };
                if r < 0 {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::Interrupted => continue,
                        io::ErrorKind::WouldBlock => self.conns[i].readable = false,
                        // A reset is the end of the stream as far as the application can tell; the
                        // statistics show the kernel's view.
                        io::ErrorKind::ConnectionReset => self.conns[i].eof = true,
                        _ => self.fail(EmuError::os("read", e)),
                    }
                    break;
                }
                if r == 0 {
                    self.conns[i].eof = true;
                    self.conns[i].readable = false;
                    break;
                }
                got += r as u64;
            }
            self.conns[i].read_bytes += got;
            if self.conns[i].eof {
                // Closed both ways now, perhaps: look at it again.
                self.enqueue(i);
            }
            got
        }

        fn close(&mut self, i: usize) {
            let Some(fd) = self.fd(i) else { return };
            if self.conns[i].closed {
                return;
            }
            self.conns[i].closed = true;
            // SAFETY: plain syscall on an fd we own. ENOTCONN (never connected) changes nothing.
            unsafe { libc::shutdown(fd, libc::SHUT_WR) };
            self.enqueue(i);
        }

        /// Reads the end's statistics and closes it, or keeps it until our FIN is acknowledged.
        fn settle(&mut self, i: usize, force: bool) {
            let Some(fd) = self.fd(i) else { return };
            let info = TcpInfo::read(fd).ok();
            let unacked = info.as_ref().and_then(|t| t.unacked()).unwrap_or(0);
            if unacked > 0 && !force {
                if !self.conns[i].lingering {
                    self.conns[i].lingering = true;
                    self.lingering.push(i);
                }
                return;
            }
            self.conns[i].lingering = false;
            self.ends_total += 1;
            if let Some(info) = info {
                self.retrans += info.total_retrans().unwrap_or(0);
                if self.ends.len() < self.keep {
                    let (local_port, remote_port) = sys::socket_ports(fd).unwrap_or((0, 0));
                    self.ends.push(ConnEnd {
                        side: side_name(self.conns[i].side),
                        local_port,
                        remote_port,
                        state: info.state().unwrap_or("CLOSED").to_string(),
                        congestion: congestion_of(fd),
                        estats: {
                            let mut e = info.estats();
                            self.conns[i].probe_rtt.put(&mut e);
                            e
                        },
                    });
                }
            }
            self.conns[i].fd = None;
        }

        fn live(&self) -> usize {
            self.conns.iter().filter(|c| c.fd.is_some()).count()
        }

        fn accept(&mut self, l: usize) {
            loop {
                let lfd = self.listeners[l].fd.as_raw_fd();
                // SAFETY: accept on a listening socket; the peer's address is not wanted.
                let fd = unsafe {
                    libc::accept4(
                        lfd,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                    )
                };
                if fd < 0 {
                    let e = io::Error::last_os_error();
                    match e.kind() {
                        io::ErrorKind::WouldBlock => return,
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted => continue,
                        _ => return self.fail(EmuError::os("accept", e)),
                    }
                }
                // SAFETY: just accepted; owned from here on.
                let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                let app = self.listeners[l].app;
                if let Some(i) = self.add_conn(fd, app, Side::Server, false) {
                    self.enqueue(i);
                }
            }
        }

        fn arm(&mut self, at: u64) {
            if at != self.armed {
                self.armed = at;
                if let Err(e) = self.timer.set_abs(self.t0 + at) {
                    self.fail(EmuError::os("timerfd", e));
                }
            }
        }
    }

    /// A non-blocking TCP socket in the calling thread's namespace with `o` applied.
    fn new_socket(o: &SockOpts) -> io::Result<OwnedFd> {
        // SAFETY: plain syscall; the fd is owned right after.
        let fd = cvt(unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0)
        })?;
        // SAFETY: just created.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        apply_sockopts(fd.as_raw_fd(), o)?;
        Ok(fd)
    }

    /// The `Sockets` of one application: the host, lent for one event.
    struct Ctx<'a> {
        host: &'a mut Host,
        app: usize,
        side: Side,
        tb: &'a Testbed,
    }

    impl Sockets for Ctx<'_> {
        fn now(&self) -> Instant {
            Instant::from_nanos(self.host.app_now())
        }
        fn connect(&mut self, remote_port: u16) -> Result<ConnId, ConnectError> {
            self.host.connect(self.app, self.side, remote_port).map(|i| ConnId(i as u32))
        }
        fn listen(&mut self, port: u16) {
            let fd = match self.side {
                Side::Server => listen_on(self.tb, port),
                Side::Client => Err(EmuError::tool("apps", "an application on the client listened")),
            };
            let fd = match fd {
                Ok(fd) => fd,
                Err(e) => return self.host.fail(e),
            };
            // SAFETY: plain fcntl on an fd we own.
            unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
            let token = LISTENER + self.host.listeners.len() as u64;
            if let Err(e) = self.host.ep.add(fd.as_raw_fd(), libc::EPOLLIN as u32, token) {
                return self.host.fail(EmuError::os("epoll_ctl", e));
            }
            self.host.listeners.push(Listener { fd, app: self.app });
        }
        fn send(&mut self, c: ConnId, bytes: u64) -> u64 {
            self.host.send(c.0 as usize, bytes)
        }
        /// The kernel pushed at the end of the send call already; "full" here is the writer's turn used up
        /// ([`WRITE_TURN`]): `Writable` follows on the next round of the loop.
        fn push(&mut self, c: ConnId) -> bool {
            self.host.pushes += 1;
            let i = c.0 as usize;
            if self.host.pushes < WRITE_TURN || !self.host.conns.get(i).is_some_and(|x| x.writable) {
                return false;
            }
            self.host.yielded.push(i);
            true
        }
        fn recv(&mut self, c: ConnId, max: u64) -> u64 {
            self.host.recv(c.0 as usize, max)
        }
        fn close(&mut self, c: ConnId) {
            self.host.close(c.0 as usize)
        }
        fn is_eof(&self, c: ConnId) -> bool {
            self.host.conns.get(c.0 as usize).is_some_and(|x| x.eof)
        }
        fn ports(&self, c: ConnId) -> (u16, u16) {
            let fd = self.host.conns.get(c.0 as usize).and_then(|x| x.fd.as_ref());
            fd.and_then(|fd| crate::sys::socket_ports(fd.as_raw_fd()).ok()).unwrap_or((0, 0))
        }
        fn set_timer(&mut self, at: Instant) {
            self.host.timers[self.app].push(at.as_nanos());
        }
        fn ready(&mut self) {
            self.host.ready[self.app] = true;
        }
        fn end_measurement(&mut self) {
            if self.host.measuring && !self.host.stopped {
                self.host.stop_at = self.host.now();
            }
        }
    }

    struct Driver<'a> {
        host: Host,
        apps: Vec<(Side, App)>,
        tb: &'a Testbed,
        series: Option<Sampler>,
    }

    /// The connections' series being taken.
    struct Sampler {
        interval: u64,
        /// The next tick's edge, ns from `t0`.
        next_ns: u64,
        out: ConnSeries,
    }

    impl Sampler {
        /// Reads every live connection end now, for the tick at `edge` (at or before now).
        fn sample(&mut self, host: &mut Host, edge: u64) {
            let t = sys::monotonic_ns();
            let now = t - host.t0;
            if self.out.ticks_ns.last() == Some(&edge) {
                return;
            }
            let tick = self.out.ticks_ns.len() as u32;
            self.out.ticks_ns.push(edge);
            let late = now.saturating_sub(edge);
            self.out.late_ns_sum += late;
            self.out.late_ns_max = self.out.late_ns_max.max(late);
            for (id, c) in host.conns.iter_mut().enumerate() {
                let Some(fd) = c.fd.as_ref().map(|f| f.as_raw_fd()) else { continue };
                let Ok(info) = TcpInfo::read(fd) else { continue };
                self.out.reads += 2;
                let e = info.estats();
                let bbr = info.bbr();
                if bbr.is_some() {
                    c.probe_rtt.observe(bbr);
                }
                let values = self
                    .out
                    .vars
                    .iter()
                    .map(|v| match v.as_str() {
                        "X_BbrMode" => bbr.and_then(|b| b.mode()).map_or(f64::NAN, |m| m as f64),
                        "X_BbrProbeRttEpisodes" => bbr.map_or(f64::NAN, |_| c.probe_rtt.episodes() as f64),
                        v => e.get(v).copied().unwrap_or(f64::NAN),
                    })
                    .collect();
                let k = *c.series_end.get_or_insert_with(|| {
                    let (local_port, remote_port) = sys::socket_ports(fd).unwrap_or((0, 0));
                    self.out.ends.push(EndSamples {
                        id: id as u32,
                        side: side_name(c.side),
                        local_port,
                        remote_port,
                        rows: Vec::new(),
                    });
                    self.out.ends.len() - 1
                });
                let end = &mut self.out.ends[k];
                if end.local_port == 0 || end.remote_port == 0 {
                    // Not connected yet when first read (SYN-SENT has no peer name): named once it is.
                    (end.local_port, end.remote_port) = sys::socket_ports(fd).unwrap_or((0, 0));
                }
                end.rows.push((tick, values, c.read_bytes));
            }
            self.out.cost_ns += sys::monotonic_ns() - t;
        }

        /// The tick due at `now`, if any: the earliest edge not yet sampled, or, past an interval late,
        /// the latest edge (the ones in between are counted missed).
        fn due(&mut self, now: u64) -> Option<u64> {
            if now < self.next_ns {
                return None;
            }
            let behind = (now - self.next_ns) / self.interval;
            self.out.ticks_missed += behind;
            let edge = self.next_ns + behind * self.interval;
            self.next_ns = edge + self.interval;
            Some(edge)
        }
    }

    impl Driver<'_> {
        fn deliver(&mut self, a: usize, ev: Event) {
            let (side, app) = &mut self.apps[a];
            self.host.pushes = 0;
            self.host.turn_bytes = 0;
            let mut ctx = Ctx { host: &mut self.host, app: a, side: *side, tb: self.tb };
            app.on_event(ev, &mut ctx);
        }

        /// Delivers what each queued connection is due, and settles the ones closed both ways.
        fn dispatch(&mut self) {
            let mut k = 0;
            while k < self.host.queue.len() {
                let i = self.host.queue[k];
                k += 1;
                self.host.conns[i].queued = false;
                if self.host.conns[i].fd.is_none() {
                    continue;
                }
                let a = self.host.conns[i].app;
                let c = ConnId(i as u32);
                if self.host.conns[i].established {
                    self.host.conns[i].established = false;
                    self.deliver(a, Event::Established(c));
                }
                if self.host.conns[i].readable {
                    if self.apps[a].1.wants_readable() {
                        self.deliver(a, Event::Readable(c));
                    } else if self.host.conns[i].closed {
                        // Nobody reads it any more: drain it to see the peer's close.
                        self.host.recv(i, u64::MAX);
                    }
                }
                if self.host.conns[i].writable && self.apps[a].1.wants_writable() {
                    self.deliver(a, Event::Writable(c));
                }
                let conn = &self.host.conns[i];
                if conn.closed && conn.eof && conn.fd.is_some() && !conn.lingering {
                    self.host.settle(i, false);
                }
            }
            self.host.queue.clear();
        }

        fn fire_timers(&mut self) {
            let now = self.host.now();
            for a in 0..self.apps.len() {
                let t = &mut self.host.timers[a];
                if t.iter().any(|&d| d <= now) {
                    t.retain(|&d| d > now);
                    self.deliver(a, Event::Timer);
                }
            }
        }

        fn next_deadline(&self) -> Option<u64> {
            let mut next = self.host.timers.iter().flatten().copied().min();
            let mut at = |t: u64| next = Some(next.map_or(t, |n: u64| n.min(t)));
            if self.host.measuring && !self.host.stopped {
                at(self.host.stop_at);
            }
            if !self.host.lingering.is_empty() {
                at(self.host.now() + LINGER_POLL_NS);
            }
            if let Some(s) = &self.series {
                at(s.next_ns);
            }
            next
        }

        /// Returns the measurement window (start, stop) and the end of the run, ns from `t0`, and the CPU.
        fn run(&mut self, spec: &AppsSpec) -> Result<([u64; 3], Option<super::SystemCpu>), EmuError> {
            let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
            for a in 0..self.apps.len() {
                self.deliver(a, Event::Start);
            }
            let ready_limit = spec.ready_limit.as_nanos();
            let (mut start_ns, mut stop_ns) = (0u64, 0u64);
            let mut cpu0 = None;
            let mut cpu = None;
            let mut drain_until = u64::MAX;
            loop {
                self.dispatch();
                self.fire_timers();
                self.dispatch();
                let now = self.host.now();
                for c in self.host.conns.iter_mut() {
                    if let Some(fd) = &c.fd {
                        c.probe_rtt.sample(fd.as_raw_fd(), now);
                    }
                }
                if let Some(s) = self.series.as_mut() {
                    if let Some(edge) = s.due(now) {
                        s.sample(&mut self.host, edge);
                    }
                }
                if !self.host.measuring && self.host.ready.iter().all(|&r| r) {
                    // /proc/stat first, then the instant the applications see: the two windows agree.
                    cpu0 = read_proc_stat();
                    let now = self.host.now();
                    self.host.measuring = true;
                    self.host.stop_at = now + spec.measure.as_nanos();
                    start_ns = now;
                    self.tb.series_phase(self.host.t0 + now);
                    // The ticks re-phased to the window, its first at its opening (as the simulator's).
                    if let Some(s) = self.series.as_mut() {
                        s.next_ns = now + s.interval;
                        s.sample(&mut self.host, now);
                    }
                    self.host.frozen = Some(now);
                    for a in 0..self.apps.len() {
                        self.deliver(a, Event::MeasureStart);
                    }
                    self.host.frozen = None;
                    continue;
                }
                if !self.host.measuring && now > ready_limit {
                    return Err(EmuError::tool(
                        "the test",
                        format!("its connections were not all up after {}", spec.ready_limit),
                    ));
                }
                if self.host.measuring && !self.host.stopped && now >= self.host.stop_at {
                    self.host.stopped = true;
                    stop_ns = now;
                    drain_until = now + spec.drain.as_nanos();
                    self.host.frozen = Some(now);
                    for a in 0..self.apps.len() {
                        self.deliver(a, Event::MeasureStop);
                    }
                    self.host.frozen = None;
                    if let (Some(a), Some(b)) = (cpu0, read_proc_stat()) {
                        cpu = system_cpu(a, b, (stop_ns - start_ns) as f64 * 1e-9);
                    }
                    continue;
                }
                if let Some(e) = self.host.error.take() {
                    return Err(e);
                }
                // Connections waiting for the acknowledgement of their FIN.
                let lingering = std::mem::take(&mut self.host.lingering);
                for i in lingering {
                    self.host.conns[i].lingering = false;
                    self.host.settle(i, false);
                }
                if self.host.stopped && (self.host.live() == 0 || now >= drain_until) {
                    break;
                }
                let timeout = match self.next_deadline() {
                    _ if !self.host.yielded.is_empty() => 0,
                    Some(t) if t <= self.host.now() => 0,
                    Some(t) => {
                        self.host.arm(t);
                        -1
                    }
                    None => -1,
                };
                // Never sleep past the drain deadline or the readiness limit.
                let cap = if self.host.stopped {
                    drain_until
                } else if !self.host.measuring {
                    ready_limit
                } else {
                    u64::MAX
                };
                let timeout = if timeout == -1 && cap != u64::MAX {
                    ((cap.saturating_sub(self.host.now())) / 1_000_000 + 1).min(i32::MAX as u64) as i32
                } else {
                    timeout
                };
                let n = self.host.ep.wait(&mut events, timeout).map_err(|e| EmuError::os("epoll_wait", e))?;
                for i in std::mem::take(&mut self.host.yielded) {
                    self.host.enqueue(i);
                }
                for ev in &events[..n] {
                    let (token, bits) = (ev.u64, ev.events);
                    if token == TIMER {
                        self.host.timer.drain();
                        self.host.armed = 0;
                    } else if token >= LISTENER {
                        self.host.accept((token - LISTENER) as usize);
                    } else {
                        let i = token as usize;
                        let Some(fd) = self.host.fd(i) else { continue };
                        let c = &mut self.host.conns[i];
                        if c.connecting {
                            if bits & (libc::EPOLLOUT | libc::EPOLLERR | libc::EPOLLHUP) as u32 == 0 {
                                continue;
                            }
                            match sys::socket_error(fd) {
                                Ok(0) => {
                                    c.connecting = false;
                                    c.established = true;
                                }
                                Ok(err) => {
                                    return Err(EmuError::os("connect", io::Error::from_raw_os_error(err)));
                                }
                                Err(e) => return Err(EmuError::os("SO_ERROR", e)),
                            }
                        }
                        if bits & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
                            c.readable = true;
                        }
                        if bits & libc::EPOLLOUT as u32 != 0 {
                            c.writable = true;
                        }
                        self.host.enqueue(i);
                    }
                }
            }
            for i in 0..self.host.conns.len() {
                if self.host.conns[i].fd.is_some() {
                    self.host.settle(i, true);
                }
            }
            Ok(([start_ns, stop_ns, self.host.now()], cpu))
        }
    }

    fn read_proc_stat() -> Option<(u64, u64, u32)> {
        parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Runs the applications over a started testbed: the client's and server's sockets with their sides'
    /// knobs (`Testbed::tcp`), until the measurement is over and every connection has closed (or
    /// `spec.drain` after the measurement).
    pub fn run_apps(tb: &Testbed, spec: AppsSpec) -> Result<AppsRun, EmuError> {
        let (cns, sns) = (tb.netns(Side::Client), tb.netns(Side::Server));
        let c_before = counters(cns)?;
        let s_before = counters(sns)?;
        let n = spec.apps.len();
        let apps = spec.apps.clone();
        let outcome = cns
            .enter(|| {
                let host = Host {
                    ep: sys::EpollSet::new()?,
                    timer: sys::TimerFd::new()?,
                    armed: 0,
                    t0: sys::monotonic_ns(),
                    opts: [tb.tcp(Side::Client).sockopts.clone(), tb.tcp(Side::Server).sockopts.clone()],
                    conns: Vec::new(),
                    listeners: Vec::new(),
                    queue: Vec::new(),
                    yielded: Vec::new(),
                    pushes: 0,
                    turn_bytes: 0,
                    lingering: Vec::new(),
                    timers: vec![Vec::new(); n],
                    ready: vec![false; n],
                    measuring: false,
                    stopped: false,
                    stop_at: u64::MAX,
                    frozen: None,
                    buf: vec![0; 1 << 18],
                    zeros: Vec::new(),
                    ends: Vec::new(),
                    ends_total: 0,
                    retrans: 0,
                    keep: spec.keep_connections,
                    error: None,
                };
                tb.series_origin(host.t0);
                sys::set_timer_slack_1ns();
                let realtime = spec.realtime && sys::try_sched_fifo(40);
                host.ep.add(host.timer.raw(), libc::EPOLLIN as u32, TIMER)?;
                let series = spec.series.as_ref().map(|s| Sampler {
                    interval: s.interval.as_nanos().max(1),
                    // The simulator's first tick is one interval after the start, as here.
                    next_ns: s.interval.as_nanos().max(1),
                    out: ConnSeries {
                        interval_ns: s.interval.as_nanos(),
                        vars: s.vars.clone(),
                        ..ConnSeries::default()
                    },
                });
                let mut d = Driver { host, apps, tb, series };
                let r = d.run(&spec);
                let series = d.series.map(|s| s.out);
                Ok(r.map(|(window, cpu)| {
                    (d.apps, d.host.ends, d.host.ends_total, d.host.retrans, window, cpu, realtime, series)
                }))
            })
            .map_err(|e| EmuError::os("running the applications", e))??;
        let (apps, connections, connection_ends, retransmissions, [start, stop, end], cpu, realtime, series) = outcome;
        Ok(AppsRun {
            apps,
            connections,
            connection_ends,
            retransmissions,
            client_netstat: kstats::delta(&c_before, &counters(cns)?),
            server_netstat: kstats::delta(&s_before, &counters(sns)?),
            cpu,
            measure_s: (stop - start) as f64 * 1e-9,
            measure_start_ns: start,
            measure_stop_ns: stop,
            end_ns: end,
            realtime,
            series,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_busy_share_counts_everything_but_idle() {
        let a =
            "cpu  100 0 50 800 10 5 5 30 0 0\ncpu0 50 0 25 400 5 2 3 15 0 0\ncpu1 50 0 25 400 5 3 2 15 0 0\nintr 1\n";
        let b = "cpu  200 0 150 1400 20 5 5 40 7 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\n";
        let (x, y) = (parse_proc_stat(a).unwrap(), parse_proc_stat(b).unwrap());
        assert_eq!(x, (1000, 800, 2));
        // Δall = 1820 - 1000 = 820 (the guest 7 is inside user already), Δidle = 600: busy 220/820, steal
        // (30 → 40) counted busy.
        let c = system_cpu(x, y, 10.0).unwrap();
        assert!((c.util - 220.0 / 820.0).abs() < 1e-12);
        assert_eq!(c.cpus, 2);
        assert!((c.busy_s - 220.0 / 820.0 * 2.0 * 10.0).abs() < 1e-9);
    }
}
