//! The simulator backend: the "local" stack is one simulated Linux-like host (sockets over
//! [`tcplab_tcp::Connection`]s) on virtual time, the script is the remote peer. The run loop, the
//! matcher and the call checks are the shared interpreter's ([`crate::interp`]).

use std::collections::{BTreeMap, VecDeque};

use tcplab_tcp::{reset_for, ConnError, Connection, State, TcpConfig, TcpInfo, TxRoom};
use tcplab_units::{ByteSize, Instant};
use tcplab_wire::TcpSegment;

use crate::ast::*;
pub use crate::interp::Verdict;
pub use crate::interp::REMOTE_ISN;
use crate::interp::{self, errno_value, int_arg, Backend, CallResult, Outbound, View, LOCAL_PORT, NO_CONN};
use crate::sysctl::{self, Settings};

/// The port of the script's side of a connection the script opens to a listener.
const REMOTE_PORT_BASE: u16 = 48_000;

/// The `tcpi_*` names a `%{ }%` block may read.
pub const TCPI_FIELDS: &[&str] = &[
    "tcpi_state",
    "tcpi_ca_state",
    "tcpi_retransmits",
    "tcpi_probes",
    "tcpi_backoff",
    "tcpi_options",
    "tcpi_snd_wscale",
    "tcpi_rcv_wscale",
    "tcpi_rto",
    "tcpi_snd_mss",
    "tcpi_rcv_mss",
    "tcpi_unacked",
    "tcpi_sacked",
    "tcpi_rtt",
    "tcpi_rttvar",
    "tcpi_snd_ssthresh",
    "tcpi_snd_cwnd",
    "tcpi_advmss",
    "tcpi_reordering",
    "tcpi_rcv_ssthresh",
    "tcpi_total_retrans",
    "tcpi_segs_out",
    "tcpi_segs_in",
    "tcpi_data_segs_out",
    "tcpi_data_segs_in",
    "tcpi_bytes_acked",
    "tcpi_bytes_received",
    "tcpi_notsent_bytes",
    "tcpi_min_rtt",
    "tcpi_last_data_sent",
    "tcpi_lost",
    "tcpi_retrans",
    "tcpi_last_data_recv",
    "tcpi_reord_seen",
];

fn tcpi_values(i: &TcpInfo) -> [i64; 34] {
    [
        i.state as i64,
        i.ca_state as i64,
        i.retransmits as i64,
        i.probes as i64,
        i.backoff as i64,
        i.options as i64,
        i.snd_wscale as i64,
        i.rcv_wscale as i64,
        i.rto as i64,
        i.snd_mss as i64,
        i.rcv_mss as i64,
        i.unacked as i64,
        i.sacked as i64,
        i.rtt as i64,
        i.rttvar as i64,
        i.snd_ssthresh as i64,
        i.snd_cwnd as i64,
        i.advmss as i64,
        i.reordering as i64,
        i.rcv_ssthresh as i64,
        i.total_retrans as i64,
        i.segs_out as i64,
        i.segs_in as i64,
        i.data_segs_out as i64,
        i.data_segs_in as i64,
        i.bytes_acked as i64,
        i.bytes_received as i64,
        i.notsent_bytes as i64,
        i.min_rtt as i64,
        i.last_data_sent as i64,
        i.lost as i64,
        i.retrans as i64,
        i.last_data_recv as i64,
        i.reord_seen as i64,
    ]
}

/// Runs a script's text against a stack configured as `base` (a personality). Never panics.
/// Runs a script's text against a stack configured as `base` (a personality). Never panics.
pub fn run(src: &str, base: &TcpConfig) -> Verdict {
    let script = match crate::parse::parse(src) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail { loc: e.loc, msg: format!("parse error: {}", e.msg), time_us: 0 },
    };
    run_script(&script, base)
}

/// Runs a parsed script.
pub fn run_script(script: &Script, base: &TcpConfig) -> Verdict {
    interp::run_script(script, |script| {
        let mut settings = sysctl::kernel_defaults(base.clone());
        for (cmd, _) in &script.setup {
            sysctl::run_commands(cmd, &mut settings)?;
        }
        let mut check = settings.clone();
        let shell: interp::Shell = Box::new(move |cmd| sysctl::run_commands(cmd, &mut check));
        let mut sim = Sim::new(settings);
        // `--mss`: packetdrill's TUN device hands larger inbound packets to the kernel as GSO packets of
        // this segment size, which TCP measures as the peer's segment size (`tcp_measure_rcv_mss`).
        sim.gso_size = script
            .options
            .iter()
            .find(|(name, _, _)| name == "mss")
            .and_then(|(_, v, _)| v.as_deref()?.parse().ok())
            .unwrap_or(0);
        Ok((sim, shell, TCPI_FIELDS))
    })
}

struct Conn {
    c: Connection,
    /// The script's view of its sequence spaces.
    view: View,
    /// The listener this connection was made for, until accept() takes it.
    listener: Option<i32>,
    /// Queued for accept() (the handshake completed).
    queued: bool,
    /// The error the application has not yet been told of.
    error_pending: Option<ConnError>,
    /// The application shut down or closed the sending side.
    write_shut: bool,
    /// shutdown(SHUT_RD): reads return end-of-file once the queue is empty.
    read_shut: bool,
    linger_zero: bool,
}

enum Sock {
    /// socket() done; options gathered for the connection to come.
    Fresh {
        cfg: TcpConfig,
        nonblock: bool,
        linger_zero: bool,
    },
    Listening {
        cfg: TcpConfig,
        nonblock: bool,
        queue: VecDeque<usize>,
    },
    Connected {
        conn: usize,
        nonblock: bool,
    },
}

/// A blocking call that has not returned yet.
struct Sim {
    settings: Settings,
    now_us: i64,
    conns: Vec<Conn>,
    socks: BTreeMap<i32, Sock>,
    /// The connection the script's packets belong to (packetdrill's socket under test).
    under_test: Option<usize>,
    out: VecDeque<Outbound>,
    next_iss: u32,
    next_port: u16,
    /// Timer steps in a row at one instant (a stack whose timers do not advance).
    same_instant: u32,
    /// `--mss`: inbound packets with more payload are GRO super-packets of segments this size (0: none).
    gso_size: u16,
}

fn ns(us: i64) -> Instant {
    Instant::from_nanos((us.max(0) as u64).saturating_mul(1000))
}

fn wire_options(seg: &TcpSegment) -> Vec<TcpOpt> {
    let mut buf = Vec::new();
    let s = TcpSegment { payload_len: 0, ..*seg };
    if tcplab_wire::codec::emit_tcp(&s, [0; 4], [0; 4], tcplab_wire::codec::PayloadFill::Zeros, &mut buf).is_err() {
        return vec![TcpOpt::Unsupported("options longer than 40 bytes".into())];
    }
    let hl = ((buf.get(12).copied().unwrap_or(0x50) >> 4) as usize * 4).min(buf.len());
    interp::decode_options(&buf[20.min(hl)..hl])
}

fn errno_of(e: ConnError) -> &'static str {
    match e {
        ConnError::Reset => "ECONNRESET",
        ConnError::Refused => "ECONNREFUSED",
        ConnError::TimedOut => "ETIMEDOUT",
    }
}

impl Sim {
    fn new(settings: Settings) -> Self {
        Sim {
            settings,
            now_us: 0,
            conns: Vec::new(),
            socks: BTreeMap::new(),
            under_test: None,
            out: VecDeque::new(),
            next_iss: 0x1000_0000,
            next_port: 40_000,
            same_instant: 0,
            gso_size: 0,
        }
    }

    fn fail<T>(&self, msg: impl Into<String>) -> Result<T, String> {
        Err(msg.into())
    }

    fn next_timer_us(&self) -> Option<i64> {
        self.conns.iter().filter_map(|c| c.c.poll_timeout()).min().map(|t| (t.as_nanos().div_ceil(1000)) as i64)
    }

    /// Fires the timers due at `t` and collects what the stack sends.
    fn step_timers(&mut self, t: i64) -> Result<(), String> {
        self.now_us = self.now_us.max(t);
        let now = ns(self.now_us);
        for i in 0..self.conns.len() {
            if self.conns[i].c.poll_timeout().is_some_and(|d| d <= now) {
                self.conns[i].c.on_timeout(now);
                self.flush(i);
            }
        }
        self.after_step()
    }

    /// Collects the segments connection `i` has to send now.
    fn flush(&mut self, i: usize) {
        let now = ns(self.now_us);
        for _ in 0..100_000 {
            let Some(seg) = self.conns[i].c.poll_transmit(now, TxRoom::Free) else { break };
            self.out.push_back(Outbound { at_us: self.now_us, conn: i, seg, opts: wire_options(&seg) });
        }
        if let Some(e) = self.conns[i].c.error() {
            if self.conns[i].error_pending.is_none() && !matches!(self.conns[i].c.state(), State::TimeWait) {
                self.conns[i].error_pending.get_or_insert(e);
            }
        }
    }

    /// After anything happened: completed handshakes join their listener's queue.
    fn after_step(&mut self) -> Result<(), String> {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if let (Some(fd), false) = (c.listener, c.queued) {
                if c.c.is_established() {
                    if let Some(Sock::Listening { queue, .. }) = self.socks.get_mut(&fd) {
                        queue.push_back(i);
                    }
                    self.conns[i].queued = true;
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Packets
    // ---------------------------------------------------------------------------------------------

    fn inject(&mut self, p: &Packet) -> Result<(), String> {
        let syn_only = p.flags & 0x12 == 0x02;
        let listener = self.socks.iter().find(|(_, s)| matches!(s, Sock::Listening { .. })).map(|(fd, _)| *fd);
        // packetdrill: a SYN makes a new connection while the listener is the socket under test (after
        // listen(), before a SYN); any other packet, a SYN included, goes to the socket under test.
        if syn_only && listener.is_some() && self.under_test.is_none() {
            let (cfg, fd) = match listener.and_then(|fd| self.socks.get(&fd).map(|s| (fd, s))) {
                Some((fd, Sock::Listening { cfg, .. })) => (cfg.clone(), fd),
                _ => unreachable!("a listening socket was found"),
            };
            let iss = self.take_iss();
            let port = REMOTE_PORT_BASE + self.conns.len() as u16;
            let view = View {
                live_local_isn: iss,
                remote_port: port,
                local_port: LOCAL_PORT,
                script_remote_isn: p.seq,
                ..View::default()
            };
            self.conns.push(Conn {
                c: Connection::listen(cfg, LOCAL_PORT, iss),
                view,
                listener: Some(fd),
                queued: false,
                error_pending: None,
                write_shut: false,
                read_shut: false,
                linger_zero: false,
            });
            self.under_test = Some(self.conns.len() - 1);
        }
        let Some(i) = self.under_test else {
            // No socket: the kernel answers with a reset (RFC 9293 §3.10.7.1), from no connection.
            let seg = interp::inbound_segment(None, REMOTE_PORT_BASE, p)?;
            if let Some(r) = reset_for(&seg) {
                self.out.push_back(Outbound { at_us: self.now_us, conn: NO_CONN, seg: r, opts: wire_options(&r) });
            }
            return Ok(());
        };
        if self.conns[i].c.state() == State::SynSent && p.flags & 0x02 != 0 {
            // The SYN-ACK tells the script's ISN.
            self.conns[i].view.script_remote_isn = p.seq;
        }
        let seg = interp::inbound_segment(Some(&self.conns[i].view), REMOTE_PORT_BASE, p)?;
        let now = ns(self.now_us);
        if self.conns[i].c.state() == State::Closed {
            // The kernel keeps no record of a closed connection: a reset answers (RFC 9293 §3.10.7.1).
            if let Some(r) = reset_for(&seg) {
                self.out.push_back(Outbound { at_us: self.now_us, conn: i, seg: r, opts: wire_options(&r) });
            }
            return self.after_step();
        }
        if self.gso_size > 0 && seg.payload_len > self.gso_size as u32 {
            self.conns[i].c.on_segment_gro(now, &seg, self.gso_size);
        } else {
            self.conns[i].c.on_segment(now, &seg);
        }
        self.flush(i);
        self.after_step()
    }

    fn take_iss(&mut self) -> u32 {
        let iss = self.next_iss;
        self.next_iss = self.next_iss.wrapping_add(0x0100_0000);
        iss
    }

    fn fd_arg(&self, c: &Syscall) -> Result<i32, String> {
        match c.args.first() {
            Some(Expr::Int(v)) => Ok(*v as i32),
            _ => self.fail(format!("{}(): the first argument must be a file descriptor", c.name)),
        }
    }

    fn new_conn(&mut self, cfg: TcpConfig, active: bool, linger_zero: bool) -> usize {
        let iss = self.take_iss();
        let port = self.next_port;
        self.next_port = self.next_port.wrapping_add(1);
        let c = if active {
            Connection::connect(cfg, port, LOCAL_PORT, iss)
        } else {
            Connection::listen(cfg, LOCAL_PORT, iss)
        };
        let view = View { live_local_isn: iss, remote_port: LOCAL_PORT, local_port: LOCAL_PORT, ..View::default() };
        self.conns.push(Conn {
            c,
            view,
            listener: None,
            queued: false,
            error_pending: None,
            write_shut: false,
            read_shut: false,
            linger_zero,
        });
        self.conns.len() - 1
    }

    /// Runs one call now: its result, or that it would block.
    fn syscall(&mut self, c: &Syscall) -> Result<CallResult, String> {
        use CallResult::*;
        let name = c.name.as_str();
        if name == "socket" {
            let fd = match &c.ret {
                Expr::Int(v) if *v >= 0 => *v as i32,
                _ => 1000 + self.socks.len() as i32,
            };
            let cfg = self.settings.tcp.clone();
            self.socks.insert(fd, Sock::Fresh { cfg, nonblock: false, linger_zero: false });
            return Ok(Done(fd as i64, None));
        }
        let fd = self.fd_arg(c)?;
        let Some(sock) = self.socks.get_mut(&fd) else {
            return Ok(Done(-1, Some("EBADF")));
        };
        let now = ns(self.now_us);
        match (name, sock) {
            ("bind", Sock::Fresh { .. }) => Ok(Done(0, None)),
            ("listen", Sock::Fresh { cfg, nonblock, .. }) => {
                let (cfg, nonblock) = (cfg.clone(), *nonblock);
                self.socks.insert(fd, Sock::Listening { cfg, nonblock, queue: VecDeque::new() });
                self.under_test = None;
                Ok(Done(0, None))
            }
            ("listen", Sock::Listening { .. }) => Ok(Done(0, None)),
            ("accept", Sock::Listening { queue, nonblock, cfg }) => {
                let _ = cfg;
                match queue.pop_front() {
                    Some(i) => {
                        let new_fd = match &c.ret {
                            Expr::Int(v) if *v >= 0 => *v as i32,
                            _ => 1000 + self.socks.len() as i32,
                        };
                        self.conns[i].listener = None;
                        self.socks.insert(new_fd, Sock::Connected { conn: i, nonblock: false });
                        Ok(Done(new_fd as i64, None))
                    }
                    None if *nonblock => Ok(Done(-1, Some("EAGAIN"))),
                    None => Ok(WouldBlock),
                }
            }
            ("connect", Sock::Fresh { cfg, nonblock, linger_zero }) => {
                let (cfg, nonblock, lz) = (cfg.clone(), *nonblock, *linger_zero);
                let i = self.new_conn(cfg, true, lz);
                self.socks.insert(fd, Sock::Connected { conn: i, nonblock });
                self.under_test = Some(i);
                self.flush(i);
                if nonblock {
                    Ok(Done(-1, Some("EINPROGRESS")))
                } else {
                    Ok(WouldBlock)
                }
            }
            ("connect", Sock::Connected { conn, nonblock }) => {
                let (i, nonblock) = (*conn, *nonblock);
                let st = self.conns[i].c.state();
                if let Some(e) = self.conns[i].error_pending.take() {
                    return Ok(Done(-1, Some(errno_of(e))));
                }
                if st == State::SynSent {
                    return Ok(if nonblock { Done(-1, Some("EALREADY")) } else { WouldBlock });
                }
                if self.conns[i].c.is_established() {
                    // A blocking connect returns once established; a second connect says EISCONN.
                    return Ok(Done(0, None));
                }
                Ok(Done(-1, Some("ECONNREFUSED")))
            }
            ("write" | "send" | "sendto", Sock::Connected { conn, nonblock }) => {
                let (i, nonblock) = (*conn, *nonblock);
                let Some(n) = int_arg(c.args.get(2)) else {
                    return self.fail(format!("{name}(): the length (third argument) must be an integer"));
                };
                let k = &mut self.conns[i];
                if let Some(e) = k.error_pending.take() {
                    return Ok(Done(-1, Some(errno_of(e))));
                }
                if k.write_shut || matches!(k.c.state(), State::Closed | State::TimeWait) {
                    return Ok(Done(-1, Some("EPIPE")));
                }
                if matches!(k.c.state(), State::SynSent | State::SynReceived) {
                    return Ok(if nonblock { Done(-1, Some("EAGAIN")) } else { WouldBlock });
                }
                // A blocking write takes everything before it returns; here it returns once the whole
                // write fits the send buffer.
                let room = k.c.send_room(n as u64);
                if nonblock || room >= n as u64 {
                    let took = k.c.send(n as u64);
                    self.flush(i);
                    if took == 0 && n > 0 {
                        return Ok(Done(-1, Some("EAGAIN")));
                    }
                    return Ok(Done(took as i64, None));
                }
                Ok(WouldBlock)
            }
            ("read" | "recv" | "recvfrom", Sock::Connected { conn, nonblock }) => {
                let (i, nonblock) = (*conn, *nonblock);
                let Some(n) = int_arg(c.args.get(2)) else {
                    return self.fail(format!("{name}(): the length (third argument) must be an integer"));
                };
                let k = &mut self.conns[i];
                let got = k.c.recv(n.max(0) as u64);
                if got > 0 {
                    self.flush(i);
                    return Ok(Done(got as i64, None));
                }
                if let Some(e) = k.error_pending.take() {
                    return Ok(Done(-1, Some(errno_of(e))));
                }
                if k.c.is_eof() || k.read_shut || k.c.state() == State::Closed {
                    return Ok(Done(0, None));
                }
                Ok(if nonblock { Done(-1, Some("EAGAIN")) } else { WouldBlock })
            }
            ("close", _) => {
                let sock = self.socks.remove(&fd).expect("looked up");
                match sock {
                    Sock::Connected { conn: i, .. } => {
                        let k = &mut self.conns[i];
                        // Linux tcp_close: unread data, or a zero linger, aborts with a reset (RFC 2525 §2.17).
                        if k.c.readable() > 0 || k.linger_zero {
                            k.c.abort(now);
                        } else {
                            k.c.close();
                            k.c.shutdown_read();
                        }
                        self.flush(i);
                    }
                    Sock::Listening { queue, .. } => {
                        // Connections never accepted are reset (Linux inet_csk_listen_stop).
                        for i in queue {
                            self.conns[i].c.abort(now);
                            self.flush(i);
                        }
                        for i in 0..self.conns.len() {
                            if self.conns[i].listener == Some(fd) {
                                self.conns[i].listener = None;
                                self.conns[i].c.abort(now);
                                self.flush(i);
                            }
                        }
                    }
                    Sock::Fresh { .. } => {}
                }
                Ok(Done(0, None))
            }
            ("shutdown", Sock::Connected { conn, .. }) => {
                let i = *conn;
                let how = match c.args.get(1) {
                    Some(Expr::Ident(h)) => h.clone(),
                    Some(Expr::Int(v)) => {
                        ["SHUT_RD", "SHUT_WR", "SHUT_RDWR"].get(*v as usize).unwrap_or(&"?").to_string()
                    }
                    _ => String::new(),
                };
                let k = &mut self.conns[i];
                match how.as_str() {
                    "SHUT_RD" => {
                        k.c.shutdown_read();
                        k.read_shut = true;
                    }
                    "SHUT_WR" => {
                        k.c.close();
                        k.write_shut = true;
                    }
                    "SHUT_RDWR" => {
                        k.c.close();
                        k.c.shutdown_read();
                        k.write_shut = true;
                        k.read_shut = true;
                    }
                    other => return self.fail(format!("shutdown(): `{other}`: accepted SHUT_RD, SHUT_WR, SHUT_RDWR")),
                }
                self.flush(i);
                Ok(Done(0, None))
            }
            ("shutdown", _) => Ok(Done(-1, Some("ENOTCONN"))),
            ("fcntl", sock) => {
                let cmd = match c.args.get(1) {
                    Some(Expr::Ident(n)) => n.as_str(),
                    _ => "",
                };
                let nb = match sock {
                    Sock::Fresh { nonblock, .. }
                    | Sock::Listening { nonblock, .. }
                    | Sock::Connected { nonblock, .. } => nonblock,
                };
                if cmd == "F_GETFL" {
                    return Ok(Done(if *nb { 0x802 } else { 0x2 }, None));
                }
                let flags = flag_names(c.args.get(2));
                *nb = flags.iter().any(|f| f == "O_NONBLOCK");
                Ok(Done(0, None))
            }
            ("setsockopt", _) => self.setsockopt(fd, c),
            ("getsockopt", _) => self.getsockopt(fd, c),
            (_, _) => Ok(Done(-1, Some("EINVAL"))),
        }
    }

    fn setsockopt(&mut self, fd: i32, c: &Syscall) -> Result<CallResult, String> {
        let opt = match c.args.get(2) {
            Some(Expr::Ident(n)) => n.clone(),
            _ => return self.fail("setsockopt(): the option name must be a constant"),
        };
        let value = c.args.get(3);
        let v = int_arg(value);
        let now = ns(self.now_us);
        let sock = self.socks.get_mut(&fd).expect("checked by the caller");
        let conn = match sock {
            Sock::Connected { conn, .. } => Some(*conn),
            _ => None,
        };
        let mut linger = None;
        let mut edit = |cfg: &mut TcpConfig| -> Result<(), String> {
            match opt.as_str() {
                "SO_REUSEADDR" | "SO_REUSEPORT" | "IP_MTU_DISCOVER" => {}
                "TCP_NODELAY" => cfg.nodelay = v.ok_or("TCP_NODELAY needs [0] or [1]")? != 0,
                "TCP_CORK" => cfg.cork = v.ok_or("TCP_CORK needs [0] or [1]")? != 0,
                "TCP_MAXSEG" => {
                    let m = v.ok_or("TCP_MAXSEG needs [bytes]")?;
                    // Linux user_mss: clamps what is advertised (and so what is sent), 88 to 65495.
                    if !(88..=65495).contains(&m) {
                        return Err(format!("TCP_MAXSEG {m}: accepted 88 to 65495"));
                    }
                    cfg.mss = ByteSize::new(m as u64);
                }
                "SO_SNDBUF" => {
                    let b = v.ok_or("SO_SNDBUF needs [bytes]")?;
                    // Linux doubles the value (`sk_sndbuf`), and a bulk write's payload fills nearly all of
                    // it: skbs of up to 64 KB charge little beyond what they carry. Measured through the
                    // kernel backend on 6.18: SO_SNDBUF 100000, a nonblocking write of 300000 took 205000
                    // (Google's `cubic-bulk-166k` writes 400000 at once after SO_SNDBUF 200000).
                    cfg.send_buffer = ByteSize::new(2 * b.max(2048) as u64);
                }
                "SO_RCVBUF" => {
                    let b = v.ok_or("SO_RCVBUF needs [bytes]")?;
                    cfg.recv_buffer = ByteSize::new((b.max(2048) as u64).max(cfg.mss.bytes()));
                    // A locked buffer: the window scale follows it, not tcp_rmem[2].
                    cfg.wscale_space = ByteSize::new(0);
                }
                "TCP_CONGESTION" => {
                    cfg.congestion_control = match value {
                        Some(Expr::Str(s)) if s == "cubic" => tcplab_tcp::CongestionControlKind::Cubic,
                        Some(Expr::Str(s)) if s == "reno" => tcplab_tcp::CongestionControlKind::NewReno,
                        other => return Err(format!("TCP_CONGESTION {other:?}: accepted \"cubic\" or \"reno\"")),
                    }
                }
                "SO_LINGER" => {
                    if let Some(Expr::Struct(f)) = value {
                        let get = |n: &str| f.iter().find(|(k, _)| k == n).and_then(|(_, v)| int_arg(Some(v)));
                        linger = Some(get("l_onoff").unwrap_or(0) != 0 && get("l_linger").unwrap_or(1) == 0);
                    }
                }
                other => return Err(format!("setsockopt {other} is not modelled")),
            }
            Ok(())
        };
        let r = match (conn, sock) {
            (Some(i), _) => edit(self.conns[i].c.config_mut()),
            (None, Sock::Fresh { cfg, .. }) | (None, Sock::Listening { cfg, .. }) => edit(cfg),
            (None, Sock::Connected { .. }) => unreachable!(),
        };
        if let Err(e) = r {
            return self.fail(e);
        }
        if let Some(lz) = linger {
            match (conn, self.socks.get_mut(&fd)) {
                (Some(i), _) => self.conns[i].linger_zero = lz,
                (None, Some(Sock::Fresh { linger_zero, .. })) => *linger_zero = lz,
                _ => {}
            }
        }
        if let Some(i) = conn {
            // Clearing TCP_NODELAY's Nagle or TCP_CORK pushes what waits (tcp_push_pending_frames).
            let _ = now;
            self.flush(i);
        }
        Ok(CallResult::Done(0, None))
    }

    fn getsockopt(&mut self, fd: i32, c: &Syscall) -> Result<CallResult, String> {
        let opt = match c.args.get(2) {
            Some(Expr::Ident(n)) => n.clone(),
            _ => return self.fail("getsockopt(): the option name must be a constant"),
        };
        let conn = match self.socks.get(&fd) {
            Some(Sock::Connected { conn, .. }) => Some(*conn),
            _ => None,
        };
        let actual: i64 = match opt.as_str() {
            "SO_ERROR" => match conn.and_then(|i| self.conns[i].error_pending.take()) {
                Some(e) => errno_value(errno_of(e)),
                None => 0,
            },
            "TCP_NODELAY" | "TCP_CORK" | "TCP_MAXSEG" => {
                let cfg = match (conn, self.socks.get(&fd)) {
                    (Some(i), _) => self.conns[i].c.config().clone(),
                    (None, Some(Sock::Fresh { cfg, .. } | Sock::Listening { cfg, .. })) => cfg.clone(),
                    _ => self.settings.tcp.clone(),
                };
                match opt.as_str() {
                    "TCP_NODELAY" => cfg.nodelay as i64,
                    "TCP_CORK" => cfg.cork as i64,
                    _ => conn.map_or(cfg.mss.bytes() as i64, |i| self.conns[i].c.smss() as i64),
                }
            }
            other => return self.fail(format!("getsockopt {other} is not modelled")),
        };
        if let Some(want) = int_arg(c.args.get(3)) {
            if want != actual {
                return self.fail(format!("getsockopt {opt}: value {actual}, expected {want}"));
            }
        }
        Ok(CallResult::Done(0, None))
    }

    fn tcp_info_values(&self) -> Result<Vec<(&'static str, i64)>, String> {
        let info = match self.under_test {
            Some(i) => self.conns[i].c.tcp_info(ns(self.now_us)),
            None => return self.fail("a %{ }% block needs a socket under test (none was opened yet)"),
        };
        Ok(TCPI_FIELDS.iter().copied().zip(tcpi_values(&info)).collect())
    }
}

impl Backend for Sim {
    fn now_us(&self) -> i64 {
        self.now_us
    }

    fn step(&mut self, until: i64) -> Result<bool, String> {
        match self.next_timer_us() {
            Some(t) if t <= until => {
                self.same_instant = if t == self.now_us { self.same_instant + 1 } else { 0 };
                if self.same_instant > 1_000_000 {
                    return self.fail("the stack's timers do not advance (a timer keeps firing at one instant)");
                }
                self.step_timers(t)?;
                Ok(true)
            }
            _ => {
                self.now_us = self.now_us.max(until.min(i64::MAX / 4));
                Ok(false)
            }
        }
    }

    fn inject(&mut self, p: &Packet) -> Result<(), String> {
        Sim::inject(self, p)
    }

    fn pop_outbound(&mut self) -> Option<Outbound> {
        self.out.pop_front()
    }

    fn under_test(&self) -> Option<usize> {
        self.under_test
    }

    fn view(&mut self, conn: usize) -> Option<&mut View> {
        self.conns.get_mut(conn).map(|c| &mut c.view)
    }

    fn call(&mut self, c: &Syscall) -> Result<CallResult, String> {
        self.syscall(c)
    }

    fn poll_call(&mut self, c: &Syscall) -> Result<Option<interp::Returned>, String> {
        // The socket layer is sans-IO: asking again is how a blocked call learns it may return.
        Ok(match self.syscall(c)? {
            CallResult::WouldBlock => None,
            CallResult::Done(v, e) => Some((v, e, self.now_us)),
        })
    }

    fn tcp_info(&mut self) -> Result<Vec<(&'static str, i64)>, String> {
        self.tcp_info_values()
    }

    fn shell(&mut self, cmd: &str) -> Result<(), String> {
        sysctl::run_commands(cmd, &mut self.settings)
    }
}

fn flag_names(e: Option<&Expr>) -> Vec<String> {
    match e {
        Some(Expr::Ident(n)) => vec![n.clone()],
        Some(Expr::Or(v)) => v.iter().flat_map(|x| flag_names(Some(x))).collect(),
        _ => Vec::new(),
    }
}
