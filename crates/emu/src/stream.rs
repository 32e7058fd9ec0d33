//! TCP_STREAM on real sockets: the client writes `message`-sized sends for `duration`, the server reads
//! everything. Sockets are created inside their namespaces and then driven from ordinary threads (a
//! socket keeps the namespace it was created in).

use serde::Serialize;
use tcplab_units::{ByteSize, Duration};

use crate::kstats::{Estats, NetCounters};

#[cfg(target_os = "linux")]
pub use os::{connect_pair, run_stream_on};

/// The bulk test.
#[derive(Debug, Clone)]
pub struct StreamSpec {
    pub duration: Duration,
    /// Bytes per send() call (netperf `-m`).
    pub message: ByteSize,
    /// TCP_INFO of the sender is sampled on each edge of this clock (0: only at the end).
    pub sample_interval: Duration,
}

/// One TCP_INFO sample of the sender.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    /// Since the connection was established, s.
    pub t_s: f64,
    pub estats: Estats,
}

/// What a stream run measured.
#[derive(Debug, Clone, Serialize)]
pub struct StreamResult {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// From the connection's establishment to the last byte received, s.
    pub elapsed_s: f64,
    /// Goodput at the receiver: bytes received × 8 / elapsed_s.
    pub throughput_bps: f64,
    /// (t since establishment in s, bytes received so far), on each sample-clock edge and at the end.
    pub received: Vec<(f64, u64)>,
    /// The congestion control each socket ran (getsockopt TCP_CONGESTION).
    pub client_congestion: String,
    pub server_congestion: String,
    /// RFC 4898 statistics from TCP_INFO at the end (after all data was acknowledged).
    pub client_estats: Estats,
    pub server_estats: Estats,
    /// The sender's samples on the clock edges.
    pub samples: Vec<Sample>,
    /// The receiver's samples, taken when a read returns after an edge.
    pub server_samples: Vec<Sample>,
    /// /proc/net/netstat and /proc/net/snmp deltas of each namespace over the run (system-wide within it).
    pub client_netstat: NetCounters,
    pub server_netstat: NetCounters,
}

impl StreamResult {
    /// Goodput between `from_s` and `to_s` (seconds since establishment), from the received series.
    pub fn goodput_between(&self, from_s: f64, to_s: f64) -> Option<f64> {
        let at = |t: f64| self.received.iter().rfind(|(s, _)| *s <= t).copied();
        let (t0, b0) = at(from_s)?;
        let (t1, b1) = at(to_s)?;
        (t1 > t0).then(|| (b1 - b0) as f64 * 8.0 / (t1 - t0))
    }
}

/// The driver (Linux only).
#[cfg(target_os = "linux")]
pub(crate) mod os {
    use std::io;
    use std::net::TcpStream;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    use super::{Sample, StreamResult, StreamSpec};
    use crate::error::EmuError;
    use crate::knobs::SockOpts;
    use crate::kstats::{self, Estats, NetCounters, TcpInfo};
    use crate::netns::Netns;
    use crate::sys::{self, cvt};
    use crate::testbed::{Side, Testbed, SERVER_ADDR};

    const PORT: u16 = 5001;

    /// Bytes received, instant of the last byte, received series, final estats, congestion control.
    type ServerOutcome = (u64, u64, Vec<(f64, u64)>, Estats, String, Vec<Sample>);

    pub(crate) fn tcp_socket(ns: &Netns, o: &SockOpts) -> Result<OwnedFd, EmuError> {
        let o = o.clone();
        ns.enter(move || {
            // SAFETY: plain syscall; the fd is owned right after.
            let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
            // SAFETY: just created.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            apply_sockopts(fd.as_raw_fd(), &o)?;
            Ok(fd)
        })
        .map_err(|e| EmuError::os(format!("creating a socket in {}", ns.name), e))
    }

    pub(crate) fn apply_sockopts(fd: RawFd, o: &SockOpts) -> io::Result<()> {
        let clamp = |b: u64| b.min(i32::MAX as u64 / 2) as i32;
        sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, clamp(o.sndbuf))?;
        sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, clamp(o.rcvbuf))?;
        sys::setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, o.nodelay as i32)?;
        sys::setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_CORK, o.cork as i32)?;
        if let Some(m) = o.maxseg {
            sys::setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as i32)?;
        }
        sys::setsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, o.congestion.as_bytes())
            .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {}: {e}", o.congestion)))?;
        Ok(())
    }

    pub(crate) fn congestion_of(fd: RawFd) -> String {
        let mut b = [0u8; 32];
        match sys::getsockopt_buf(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut b) {
            Ok(n) => String::from_utf8_lossy(&b[..n]).trim_end_matches('\0').to_string(),
            Err(_) => String::new(),
        }
    }

    pub(crate) fn sockaddr(addr: [u8; 4], port: u16) -> libc::sockaddr_in {
        libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(addr) },
            sin_zero: [0; 8],
        }
    }

    /// A listening socket on the server's address, with the server's knobs.
    pub(crate) fn listen_on(tb: &Testbed, port: u16) -> Result<OwnedFd, EmuError> {
        let listener = tcp_socket(tb.netns(Side::Server), &tb.tcp(Side::Server).sockopts)?;
        let lfd = listener.as_raw_fd();
        let os = |what: &'static str| move |e: io::Error| EmuError::os(what, e);
        sys::setsockopt_int(lfd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1).map_err(os("SO_REUSEADDR"))?;
        let sa = sockaddr(SERVER_ADDR, port);
        let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: `sa` is a valid sockaddr_in of `salen` bytes.
        cvt(unsafe { libc::bind(lfd, (&sa as *const libc::sockaddr_in).cast(), salen) }).map_err(os("bind"))?;
        // SAFETY: plain syscall.
        cvt(unsafe { libc::listen(lfd, 1024) }).map_err(os("listen"))?;
        Ok(listener)
    }

    /// A connected (client, server) pair of blocking sockets across the testbed, each with its side's knobs
    /// applied (SO_SNDBUF/SO_RCVBUF, TCP_NODELAY, TCP_CORK, TCP_MAXSEG, TCP_CONGESTION): the building block
    /// for workloads other than TCP_STREAM. Set them non-blocking for an epoll loop if needed.
    pub fn connect_pair(tb: &Testbed, port: u16) -> Result<(TcpStream, TcpStream), EmuError> {
        let listener = listen_on(tb, port)?;
        let client = tcp_socket(tb.netns(Side::Client), &tb.tcp(Side::Client).sockopts)?;
        let sa = sockaddr(SERVER_ADDR, port);
        let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: `sa` is valid; blocking connect.
        cvt(unsafe { libc::connect(client.as_raw_fd(), (&sa as *const libc::sockaddr_in).cast(), salen) })
            .map_err(|e| EmuError::os("connect", e))?;
        // SAFETY: accept on a listening socket; peer address not wanted.
        let fd = cvt(unsafe {
            libc::accept4(listener.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC)
        })
        .map_err(|e| EmuError::os("accept", e))?;
        // SAFETY: just accepted, owned from here on.
        let server = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok((TcpStream::from(client), TcpStream::from(server)))
    }

    pub(crate) fn counters(ns: &Netns) -> Result<NetCounters, EmuError> {
        ns.enter(kstats::read_net_counters).map_err(|e| EmuError::os("reading /proc/net/netstat", e))
    }

    /// Runs TCP_STREAM over a started testbed.
    pub fn run_stream_on(tb: &Testbed, spec: &StreamSpec) -> Result<StreamResult, EmuError> {
        let os = |what: &str| {
            let what = what.to_string();
            move |e: io::Error| EmuError::os(what, e)
        };
        let (cns, sns) = (tb.netns(Side::Client), tb.netns(Side::Server));
        let listener = listen_on(tb, PORT)?;
        let lfd = listener.as_raw_fd();
        let sa = sockaddr(SERVER_ADDR, PORT);
        let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let client_sock = tcp_socket(cns, &tb.tcp(Side::Client).sockopts)?;
        let cfd = client_sock.as_raw_fd();

        let c_before = counters(cns)?;
        let s_before = counters(sns)?;
        let interval = spec.sample_interval.as_nanos();

        // SAFETY: `sa` is valid; blocking connect.
        cvt(unsafe { libc::connect(cfd, (&sa as *const libc::sockaddr_in).cast(), salen) }).map_err(os("connect"))?;
        let t_conn = sys::monotonic_ns();

        let outcome = std::thread::scope(|s| {
            let srv = s.spawn(move || -> io::Result<ServerOutcome> {
                // SAFETY: accept on a listening socket; peer address not wanted.
                let fd =
                    cvt(unsafe { libc::accept4(lfd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) })?;
                // SAFETY: just accepted.
                let conn = unsafe { OwnedFd::from_raw_fd(fd) };
                let mut buf = vec![0u8; 1 << 18];
                let (mut total, mut last) = (0u64, t_conn);
                let mut series = vec![(0.0, 0)];
                let mut samples = Vec::new();
                let mut edge = t_conn + interval;
                loop {
                    // SAFETY: `buf` is valid for its length.
                    let n = unsafe { libc::read(conn.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        if e.kind() == io::ErrorKind::Interrupted {
                            continue;
                        }
                        return Err(e);
                    }
                    let now = sys::monotonic_ns();
                    if n == 0 {
                        break;
                    }
                    total += n as u64;
                    last = now;
                    if interval > 0 && now >= edge {
                        series.push(((now - t_conn) as f64 * 1e-9, total));
                        samples.push(Sample {
                            t_s: (now - t_conn) as f64 * 1e-9,
                            estats: TcpInfo::read(conn.as_raw_fd())?.estats(),
                        });
                        edge = now - (now - t_conn) % interval + interval;
                    }
                }
                series.push(((last - t_conn) as f64 * 1e-9, total));
                let info = TcpInfo::read(conn.as_raw_fd())?;
                Ok((total, last, series, info.estats(), congestion_of(conn.as_raw_fd()), samples))
            });

            // The client: write until the duration is over, sampling TCP_INFO on clock edges.
            let run = || -> io::Result<(u64, Vec<Sample>, Estats, String)> {
                let tv = libc::timeval { tv_sec: 0, tv_usec: 50_000 };
                // SAFETY: SO_SNDTIMEO takes a timeval.
                cvt(unsafe {
                    libc::setsockopt(
                        cfd,
                        libc::SOL_SOCKET,
                        libc::SO_SNDTIMEO,
                        (&tv as *const libc::timeval).cast(),
                        std::mem::size_of::<libc::timeval>() as _,
                    )
                })?;
                let msg = vec![0x5au8; spec.message.bytes().max(1) as usize];
                let end = t_conn + spec.duration.as_nanos();
                let mut sent = 0u64;
                let mut samples = Vec::new();
                let mut edge = t_conn + interval;
                loop {
                    let now = sys::monotonic_ns();
                    if interval > 0 && now >= edge {
                        samples
                            .push(Sample { t_s: (now - t_conn) as f64 * 1e-9, estats: TcpInfo::read(cfd)?.estats() });
                        edge += interval * ((now - edge) / interval + 1);
                    }
                    if now >= end {
                        break;
                    }
                    // SAFETY: `msg` is valid for its length.
                    let n = unsafe { libc::send(cfd, msg.as_ptr().cast(), msg.len(), libc::MSG_NOSIGNAL) };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) {
                            continue;
                        }
                        return Err(e);
                    }
                    sent += n as u64;
                }
                // SAFETY: plain syscall.
                cvt(unsafe { libc::shutdown(cfd, libc::SHUT_WR) })?;
                // Wait (at most 30 s) until everything, FIN included, is acknowledged, then take the final sample.
                let deadline = sys::monotonic_ns() + 30_000_000_000;
                loop {
                    let info = TcpInfo::read(cfd)?;
                    if info.bytes_acked().is_some_and(|a| a >= sent) || sys::monotonic_ns() > deadline {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                let fin = TcpInfo::read(cfd)?;
                Ok((sent, samples, fin.estats(), congestion_of(cfd)))
            };
            let client = run();
            if client.is_err() {
                // Unblock the server's accept/read so the scope can end.
                // SAFETY: plain syscalls on fds we own.
                unsafe {
                    libc::shutdown(lfd, libc::SHUT_RDWR);
                    libc::shutdown(cfd, libc::SHUT_RDWR);
                }
            }
            let server = srv.join().unwrap_or_else(|_| Err(io::Error::other("server thread panicked")));
            (client, server)
        });
        let (client, server) = outcome;
        let (sent, samples, client_estats, client_congestion) = client.map_err(os("client"))?;
        let (received, last, received_series, server_estats, server_congestion, server_samples) =
            server.map_err(os("server"))?;
        let elapsed_s = (last - t_conn) as f64 * 1e-9;
        Ok(StreamResult {
            bytes_sent: sent,
            bytes_received: received,
            elapsed_s,
            throughput_bps: if elapsed_s > 0.0 { received as f64 * 8.0 / elapsed_s } else { 0.0 },
            received: received_series,
            client_congestion,
            server_congestion,
            client_estats,
            server_estats,
            samples,
            server_samples,
            client_netstat: kstats::delta(&c_before, &counters(cns)?),
            server_netstat: kstats::delta(&s_before, &counters(sns)?),
        })
    }
}
