//! Runs a script against tcplab's TCP on virtual time: the "local" stack is one simulated Linux-like
//! host (sockets over [`tcplab_tcp::Connection`]s), the script is the remote peer.
//!
//! packetdrill's rules, as its `run.c`, `run_packet.c` and `run_system_call.c` apply them:
//! - A relative time (`+t`) counts from the moment the previous event finished (for an outbound packet,
//!   when it was sent; for a blocking call, when it started), except that an inbound packet after an
//!   inbound packet counts from that packet's script time. The tolerance is max(`tolerance_usecs`,
//!   `tolerance_percent` of the gap since the previous event's script time).
//! - Sequence numbers are relative: the local ISN is learnt from the stack's SYN (or SYN-ACK), the
//!   remote one is the interpreter's choice ([`REMOTE_ISN`]); ACK fields and SACK blocks are offset by
//!   the other side's ISN. An inbound TS ecr names an outbound TS val the script wrote, and is translated
//!   to the value the stack actually sent; outbound TS vals are checked only with `tcp_ts_tick_usecs`.
//! - Without `--strict_segments`, consecutive outbound segments are joined until they carry the payload
//!   the script expects (a TSO super-packet in the script, MSS-sized segments here): the sequence number
//!   from the first, flags, options, window and time from the last.
//! - A packet the stack sends that the script does not expect is found by the next outbound event (as
//!   a mismatch); one left at the end of the script is not an error.
//! - A blocking call runs "in another thread": the script goes on with the next events, and the call's
//!   return (value and time, `+0...0.2`) is checked when it completes.

use std::collections::{BTreeMap, HashMap, VecDeque};

use tcplab_tcp::{reset_for, ConnError, Connection, State, TcpConfig, TcpInfo, TxRoom};
use tcplab_units::{ByteSize, Instant};
use tcplab_wire::{SackBlock, SackBlocks, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

use crate::ast::*;
use crate::code;
use crate::lex::Loc;
use crate::sysctl::{self, Settings};

/// The live ISN of the script's side.
pub const REMOTE_ISN: u32 = 0x5eed_0000;
/// The port the script's connections are made to or from.
const LOCAL_PORT: u16 = 8080;
const REMOTE_PORT_BASE: u16 = 48_000;
/// packetdrill's sniff timeout beyond the expected time of an outbound packet.
const SNIFF_TIMEOUT_US: i64 = 2_000_000;
/// The stack gets this long after a blocking call's expected return before the call counts as hung.
const BLOCK_LIMIT_US: i64 = 60_000_000;

/// The verdict on one script.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Pass,
    /// The first mismatch: where, what, and at which script time (µs).
    Fail {
        loc: Loc,
        msg: String,
        time_us: i64,
    },
    /// The script needs a feature the interpreter or the stack does not model, named.
    Skip(String),
}

/// Header options (`--name=value`) that change the run.
#[derive(Debug, Clone)]
struct RunOptions {
    tolerance_usecs: i64,
    tolerance_percent: f64,
    tcp_ts_tick_usecs: i64,
    strict_segments: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        // packetdrill config.c defaults.
        RunOptions { tolerance_usecs: 4000, tolerance_percent: 12.5, tcp_ts_tick_usecs: 0, strict_segments: false }
    }
}

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
];

fn tcpi_values(i: &TcpInfo) -> [i64; 30] {
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
    ]
}

/// The system calls the socket layer implements.
pub const SYSCALLS: &[&str] = &[
    "socket",
    "bind",
    "listen",
    "accept",
    "connect",
    "write",
    "send",
    "sendto",
    "read",
    "recv",
    "recvfrom",
    "setsockopt",
    "getsockopt",
    "close",
    "shutdown",
    "fcntl",
];

/// Socket options setsockopt accepts (level, name).
const SETSOCKOPTS: &[&str] = &[
    "SO_REUSEADDR",
    "SO_REUSEPORT",
    "SO_SNDBUF",
    "SO_RCVBUF",
    "SO_LINGER",
    "TCP_NODELAY",
    "TCP_CORK",
    "TCP_MAXSEG",
    "TCP_CONGESTION",
    "IP_MTU_DISCOVER",
];
const GETSOCKOPTS: &[&str] = &["SO_ERROR", "TCP_NODELAY", "TCP_CORK", "TCP_MAXSEG"];

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
    let mut opts = RunOptions::default();
    for (name, value, loc) in &script.options {
        if let Err(reason) = header_option(&mut opts, name, value.as_deref()) {
            let _ = loc;
            return Verdict::Skip(reason);
        }
    }
    let mut settings = sysctl::kernel_defaults(base.clone());
    for (cmd, _) in &script.setup {
        if let Err(reason) = sysctl::run_commands(cmd, &mut settings) {
            return Verdict::Skip(reason);
        }
    }
    if let Some(reason) = unsupported(script, &settings) {
        return Verdict::Skip(reason);
    }
    let mut r = Runner::new(opts, settings);
    match r.run(&script.events) {
        Ok(()) => Verdict::Pass,
        Err(f) => Verdict::Fail { loc: f.loc, msg: f.msg, time_us: f.time_us },
    }
}

fn header_option(o: &mut RunOptions, name: &str, value: Option<&str>) -> Result<(), String> {
    let num = |v: Option<&str>| -> Result<f64, String> {
        v.and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| format!("option --{name} needs a number"))
    };
    match name {
        "tolerance_usecs" => o.tolerance_usecs = num(value)? as i64,
        "tolerance_percent" => o.tolerance_percent = num(value)?,
        "tcp_ts_tick_usecs" => o.tcp_ts_tick_usecs = num(value)? as i64,
        "strict_segments" => o.strict_segments = true,
        "ip_version" => match value {
            Some("ipv4") | Some("ipv4-mapped-ipv6") => {}
            Some(v) => return Err(format!("option --ip_version={v}: only IPv4 is modelled")),
            None => return Err("option --ip_version needs a value".into()),
        },
        // Addresses and ports: the simulated hosts have no addresses to choose.
        "local_ip" | "remote_ip" | "gateway_ip" | "netmask_ip" | "bind_port" | "connect_port" | "verbose" => {}
        "mtu" if value == Some("1500") => {}
        // The size packetdrill's TUN device cuts large inbound packets into (as GSO): the kernel takes
        // them as one super-packet, and the simulated stack takes them whole, alike.
        "mss" if value.is_some_and(|v| v.parse::<u32>().is_ok()) => {}
        _ => return Err(format!("option --{name} is not supported")),
    }
    Ok(())
}

/// The first feature the script needs that the interpreter does not model, found before running, so
/// that no script is skipped because it failed.
fn unsupported(script: &Script, settings: &Settings) -> Option<String> {
    let mut s = settings.clone();
    for e in &script.events {
        match &e.kind {
            EventKind::Packet(p) => {
                if let Some(u) = &p.unsupported {
                    return Some(u.clone());
                }
                if p.flags & 0xe0 != 0 {
                    return Some("ECN and urgent flags (E, W, U)".into());
                }
            }
            EventKind::Syscall(c) => {
                if !SYSCALLS.contains(&c.name.as_str()) {
                    return Some(format!("system call {}()", c.name));
                }
                let arg_name = |i: usize| match c.args.get(i) {
                    Some(Expr::Ident(n)) => n.clone(),
                    Some(other) => format!("{other:?}"),
                    None => String::new(),
                };
                // Buffers are not modelled: only `...` (any valid buffer) is, not a NULL or bad pointer.
                if matches!(c.name.as_str(), "write" | "send" | "sendto" | "read" | "recv" | "recvfrom")
                    && !matches!(c.args.get(1), Some(Expr::Ellipsis))
                {
                    return Some(format!("{}() buffer argument {:?} (only `...` is modelled)", c.name, c.args.get(1)));
                }
                match c.name.as_str() {
                    "setsockopt" if !SETSOCKOPTS.contains(&arg_name(2).as_str()) => {
                        return Some(format!("setsockopt {}", arg_name(2)));
                    }
                    "getsockopt" if !GETSOCKOPTS.contains(&arg_name(2).as_str()) => {
                        return Some(format!("getsockopt {}", arg_name(2)));
                    }
                    "send" | "sendto" | "recv" | "recvfrom" => {
                        if let Some(f) = c.args.get(3) {
                            if !matches!(f, Expr::Int(0)) {
                                return Some(format!("{}() flags {f:?}", c.name));
                            }
                        }
                    }
                    "fcntl" => {
                        let cmd = arg_name(1);
                        if cmd != "F_SETFL" && cmd != "F_GETFL" {
                            return Some(format!("fcntl {cmd}"));
                        }
                    }
                    _ => {}
                }
            }
            EventKind::Shell(cmd) => {
                if let Err(reason) = sysctl::run_commands(cmd, &mut s) {
                    return Some(reason);
                }
            }
            EventKind::Code(text) => {
                for n in code::names(text) {
                    if n.starts_with("tcpi_") && !TCPI_FIELDS.contains(&n.as_str()) {
                        return Some(format!("tcp_info field {n}"));
                    }
                }
            }
        }
    }
    None
}

/// A failure inside the run.
struct Fail {
    loc: Loc,
    msg: String,
    time_us: i64,
}

/// One TCP connection of the local stack, with the script's view of its sequence spaces.
struct Conn {
    c: Connection,
    remote_port: u16,
    /// Script-space and live ISNs of each side (packetdrill `socket->script` / `socket->live`).
    script_local_isn: u32,
    script_remote_isn: u32,
    /// Outbound TS val as the script wrote it → as the stack sent it.
    ts_map: HashMap<u32, u32>,
    first_ts: Option<(u32, u32)>,
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
struct Pending {
    loc: Loc,
    call: Syscall,
    /// Script times (µs) at which it may return.
    end_lo: i64,
    end_hi: i64,
    tolerance: i64,
}

/// What a system call did.
enum CallResult {
    Done(i64, Option<&'static str>),
    WouldBlock,
}

struct Outbound {
    at_us: i64,
    conn: usize,
    seg: TcpSegment,
}

struct Runner {
    opts: RunOptions,
    settings: Settings,
    now_us: i64,
    conns: Vec<Conn>,
    socks: BTreeMap<i32, Sock>,
    /// The connection the script's packets belong to (packetdrill's socket under test).
    under_test: Option<usize>,
    out: VecDeque<Outbound>,
    /// The previous event: its script time and whether it was an inbound packet.
    last: Option<(i64, bool)>,
    pending: Option<Pending>,
    env: code::Env,
    next_iss: u32,
    next_port: u16,
    loc: Loc,
    /// `TCPLAB_PACKETDRILL_TRACE` set: each event and each segment sent goes to stderr.
    trace: bool,
}

fn ns(us: i64) -> Instant {
    Instant::from_nanos((us.max(0) as u64).saturating_mul(1000))
}

fn flags_text(f: u8) -> String {
    let mut s = String::new();
    for (bit, c) in [(0x02, 'S'), (0x01, 'F'), (0x04, 'R'), (0x08, 'P'), (0x20, 'U'), (0x40, 'E'), (0x80, 'W')] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    if f & 0x10 != 0 {
        s.push('.');
    }
    s
}

fn opts_text(o: &[TcpOpt]) -> String {
    let items: Vec<String> = o
        .iter()
        .map(|o| match o {
            TcpOpt::Nop => "nop".into(),
            TcpOpt::Eol => "eol".into(),
            TcpOpt::Mss(m) => format!("mss {m}"),
            TcpOpt::WindowScale(w) => format!("wscale {w}"),
            TcpOpt::SackPermitted => "sackOK".into(),
            TcpOpt::Sack(b) => {
                let v: Vec<String> = b.iter().map(|(l, r)| format!("{l}:{r}")).collect();
                format!("sack {}", v.join(" "))
            }
            TcpOpt::Timestamp { val, ecr } => format!("TS val {val} ecr {ecr}"),
            TcpOpt::Unsupported(n) => n.clone(),
        })
        .collect();
    format!("<{}>", items.join(","))
}

/// A packet line in the script's notation.
fn packet_text(
    dir: Direction,
    flags: u8,
    seq: u32,
    len: u32,
    ack: Option<u32>,
    win: Option<u32>,
    o: &Options,
) -> String {
    let mut s = format!(
        "{} {} {}:{}({})",
        if dir == Direction::Inbound { "<" } else { ">" },
        flags_text(flags),
        seq,
        seq.wrapping_add(len),
        len
    );
    if let Some(a) = ack {
        s += &format!(" ack {a}");
    }
    if let Some(w) = win {
        s += &format!(" win {w}");
    }
    match o {
        Options::None => {}
        Options::Any => s += " <...>",
        Options::List(l) => s += &format!(" {}", opts_text(l)),
    }
    s
}

/// The options as they are on the wire (Linux's layout, through the codec), in the script's terms.
fn wire_options(seg: &TcpSegment) -> Vec<TcpOpt> {
    let mut buf = Vec::new();
    let s = TcpSegment { payload_len: 0, ..*seg };
    if tcplab_wire::codec::emit_tcp(&s, [0; 4], [0; 4], tcplab_wire::codec::PayloadFill::Zeros, &mut buf).is_err() {
        return vec![TcpOpt::Unsupported("options longer than 40 bytes".into())];
    }
    let hl = ((buf.get(12).copied().unwrap_or(0x50) >> 4) as usize * 4).min(buf.len());
    let o = &buf[20.min(hl)..hl];
    let mut out = Vec::new();
    let mut i = 0;
    let be32 = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    while i < o.len() {
        match o[i] {
            0 => {
                out.push(TcpOpt::Eol);
                i += 1;
            }
            1 => {
                out.push(TcpOpt::Nop);
                i += 1;
            }
            kind => {
                let len = o.get(i + 1).copied().unwrap_or(2).max(2) as usize;
                let d = &o[(i + 2).min(o.len())..(i + len).min(o.len())];
                out.push(match (kind, d.len()) {
                    (2, 2) => TcpOpt::Mss(u16::from_be_bytes([d[0], d[1]])),
                    (3, 1) => TcpOpt::WindowScale(d[0]),
                    (4, 0) => TcpOpt::SackPermitted,
                    (8, 8) => TcpOpt::Timestamp { val: be32(&d[0..4]), ecr: be32(&d[4..8]) },
                    (5, n) if n % 8 == 0 => {
                        TcpOpt::Sack(d.chunks(8).map(|c| (be32(&c[0..4]), be32(&c[4..8]))).collect())
                    }
                    _ => TcpOpt::Unsupported(format!("kind {kind}")),
                });
                i += len;
            }
        }
    }
    out
}

fn errno_of(e: ConnError) -> &'static str {
    match e {
        ConnError::Reset => "ECONNRESET",
        ConnError::Refused => "ECONNREFUSED",
        ConnError::TimedOut => "ETIMEDOUT",
    }
}

fn errno_value(name: &str) -> i64 {
    match name {
        "EPIPE" => 32,
        "EAGAIN" => 11,
        "ECONNRESET" => 104,
        "ECONNREFUSED" => 111,
        "ETIMEDOUT" => 110,
        "EINPROGRESS" => 115,
        "ENOTCONN" => 107,
        "EBADF" => 9,
        "EINVAL" => 22,
        _ => 0,
    }
}

/// The integer a `[v]` or `v` argument holds.
fn int_arg(e: Option<&Expr>) -> Option<i64> {
    match e? {
        Expr::Int(v) => Some(*v),
        Expr::List(l) if l.len() == 1 => int_arg(l.first()),
        _ => None,
    }
}

impl Runner {
    fn new(opts: RunOptions, settings: Settings) -> Self {
        Runner {
            opts,
            settings,
            now_us: 0,
            conns: Vec::new(),
            socks: BTreeMap::new(),
            under_test: None,
            out: VecDeque::new(),
            last: None,
            pending: None,
            env: code::Env::new(),
            next_iss: 0x1000_0000,
            next_port: 40_000,
            loc: Loc::default(),
            trace: std::env::var_os("TCPLAB_PACKETDRILL_TRACE").is_some(),
        }
    }

    fn fail<T>(&self, msg: impl Into<String>) -> Result<T, Fail> {
        Err(Fail { loc: self.loc, msg: msg.into(), time_us: self.now_us })
    }

    fn run(&mut self, events: &[Event]) -> Result<(), Fail> {
        let trace = self.trace;
        for e in events {
            self.loc = e.loc;
            if trace {
                eprintln!("[{:.6}] line {}: {:?}", self.now_us as f64 / 1e6, e.loc.line, e.kind);
            }
            let inbound = matches!(&e.kind, EventKind::Packet(p) if p.dir == Direction::Inbound);
            // packetdrill adjust_relative_event_times.
            let offset = match self.last {
                Some((t, true)) if inbound => t,
                _ => self.now_us,
            };
            let (start, end) = match e.time {
                Time::Absolute(t) => (t, t),
                Time::Relative(d) => (offset.saturating_add(d), offset.saturating_add(d)),
                Time::AbsoluteRange(a, b) => (a, b),
                Time::RelativeRange(a, b) => (offset.saturating_add(a), offset.saturating_add(b)),
                Time::Any => (self.now_us, i64::MAX / 4),
            };
            let mut tolerance = self.opts.tolerance_usecs;
            if let Some((last, _)) = self.last {
                let dynamic = (self.opts.tolerance_percent / 100.0 * start.saturating_sub(last) as f64) as i64;
                tolerance = tolerance.max(dynamic);
            }
            match &e.kind {
                EventKind::Packet(p) if p.dir == Direction::Inbound => {
                    self.advance_to(start)?;
                    self.inject(p)?;
                }
                EventKind::Packet(p) => {
                    let at = self.expect_outbound(p, start, end, tolerance, e.time == Time::Any)?;
                    self.now_us = self.now_us.max(at);
                }
                EventKind::Syscall(c) => {
                    self.await_pending()?;
                    self.advance_to(start)?;
                    self.check_time(start, end, tolerance, self.now_us, "system call start")?;
                    // packetdrill: a relative end counts from the same point as the start.
                    let (end_lo, end_hi) = match c.end {
                        None => (start, start),
                        Some(Time::Relative(d)) if matches!(e.time, Time::Relative(_)) => {
                            (offset.saturating_add(d), offset.saturating_add(d))
                        }
                        Some(Time::Relative(d)) | Some(Time::Absolute(d)) => (d, d),
                        Some(_) => (start, start),
                    };
                    let p = Pending { loc: e.loc, call: c.clone(), end_lo, end_hi, tolerance };
                    self.pending = Some(p);
                    self.try_pending()?;
                }
                EventKind::Shell(cmd) => {
                    self.advance_to(start)?;
                    if let Err(e) = sysctl::run_commands(cmd, &mut self.settings) {
                        return self.fail(e);
                    }
                }
                EventKind::Code(text) => {
                    self.await_pending()?;
                    self.advance_to(start)?;
                    self.run_code(text)?;
                }
            }
            self.last = Some((start, inbound));
        }
        self.await_pending()?;
        Ok(())
    }

    fn check_time(&self, lo: i64, hi: i64, tol: i64, actual: i64, what: &str) -> Result<(), Fail> {
        if actual < lo.saturating_sub(tol) || actual > hi.saturating_add(tol) {
            let expected = if lo == hi {
                format!("{:.6}", lo as f64 / 1e6)
            } else {
                format!("{:.6}~{:.6}", lo as f64 / 1e6, hi as f64 / 1e6)
            };
            return Err(Fail {
                loc: self.loc,
                msg: format!(
                    "timing error: expected {what} at {expected} s but it happened at {:.6} s (tolerance {:.6} s)",
                    actual as f64 / 1e6,
                    tol as f64 / 1e6
                ),
                time_us: actual,
            });
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------------------
    // Virtual time
    // ---------------------------------------------------------------------------------------------

    fn next_timer_us(&self) -> Option<i64> {
        self.conns.iter().filter_map(|c| c.c.poll_timeout()).min().map(|t| (t.as_nanos().div_ceil(1000)) as i64)
    }

    /// Runs the stack's timers up to `t` (µs); the clock ends at `t` (or stays, if already later).
    fn advance_to(&mut self, t: i64) -> Result<(), Fail> {
        let mut guard = 0;
        while let Some(next) = self.next_timer_us() {
            if next > t {
                break;
            }
            self.step_timers(next)?;
            guard += 1;
            if guard > 1_000_000 {
                return self.fail("the stack's timers do not advance (a timer keeps firing at one instant)");
            }
        }
        self.now_us = self.now_us.max(t);
        Ok(())
    }

    /// Fires the timers due at `t` and collects what the stack sends.
    fn step_timers(&mut self, t: i64) -> Result<(), Fail> {
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
            let o = Outbound { at_us: self.now_us, conn: i, seg };
            if self.trace {
                eprintln!("[{:.6}]   sent {}", self.now_us as f64 / 1e6, self.actual_text(&o, None));
            }
            self.out.push_back(o);
        }
        if let Some(e) = self.conns[i].c.error() {
            if self.conns[i].error_pending.is_none() && !matches!(self.conns[i].c.state(), State::TimeWait) {
                self.conns[i].error_pending.get_or_insert(e);
            }
        }
    }

    /// After anything happened: completed handshakes join their listener's queue; a blocking call may return.
    fn after_step(&mut self) -> Result<(), Fail> {
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
        self.try_pending()
    }

    // ---------------------------------------------------------------------------------------------
    // Packets
    // ---------------------------------------------------------------------------------------------

    fn inject(&mut self, p: &Packet) -> Result<(), Fail> {
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
            self.conns.push(Conn {
                c: Connection::listen(cfg, LOCAL_PORT, iss),
                remote_port: port,
                script_local_isn: 0,
                script_remote_isn: p.seq,
                ts_map: HashMap::new(),
                first_ts: None,
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
            let seg = self.inbound_segment(None, p)?;
            if let Some(r) = reset_for(&seg) {
                self.out.push_back(Outbound { at_us: self.now_us, conn: usize::MAX, seg: r });
            }
            return Ok(());
        };
        if self.conns[i].c.state() == State::SynSent && p.flags & 0x02 != 0 {
            // The SYN-ACK tells the script's ISN.
            self.conns[i].script_remote_isn = p.seq;
        }
        let seg = self.inbound_segment(Some(i), p)?;
        let now = ns(self.now_us);
        if self.conns[i].c.state() == State::Closed {
            // The kernel keeps no record of a closed connection: a reset answers (RFC 9293 §3.10.7.1).
            if let Some(r) = reset_for(&seg) {
                self.out.push_back(Outbound { at_us: self.now_us, conn: i, seg: r });
            }
            return self.after_step();
        }
        self.conns[i].c.on_segment(now, &seg);
        self.flush(i);
        self.after_step()
    }

    /// The live segment for a script packet.
    fn inbound_segment(&self, i: Option<usize>, p: &Packet) -> Result<TcpSegment, Fail> {
        let (remote_port, seq_off, ack_off) = match i {
            Some(i) => {
                let c = &self.conns[i];
                let iss = c.c_iss();
                (c.remote_port, REMOTE_ISN.wrapping_sub(c.script_remote_isn), iss.wrapping_sub(c.script_local_isn))
            }
            None => (REMOTE_PORT_BASE, REMOTE_ISN, 0),
        };
        let mut seg = TcpSegment {
            src_port: remote_port,
            dst_port: LOCAL_PORT,
            seq: SeqNumber(p.seq.wrapping_add(seq_off)),
            ack: SeqNumber(p.ack.unwrap_or(0).wrapping_add(if p.flags & 0x10 != 0 { ack_off } else { 0 })),
            flags: TcpFlags(p.flags),
            window: p.win.unwrap_or(0) as u16,
            options: TcpOptions::default(),
            payload_len: p.len,
        };
        if let Options::List(list) = &p.options {
            for o in list {
                match o {
                    TcpOpt::Mss(m) => seg.options.mss = Some(*m),
                    TcpOpt::WindowScale(w) => seg.options.window_scale = Some(*w),
                    TcpOpt::SackPermitted => seg.options.sack_permitted = true,
                    TcpOpt::Timestamp { val, ecr } => {
                        let mut live_ecr = *ecr;
                        if p.flags & 0x10 != 0 {
                            let c = i.map(|i| &self.conns[i]);
                            match c.and_then(|c| c.ts_map.get(ecr)) {
                                Some(v) => live_ecr = *v,
                                None => {
                                    return self.fail(format!(
                                        "unable to infer live TS ecr for script TS ecr {ecr}: no matching or \
                                         preceding outbound TS val"
                                    ))
                                }
                            }
                        }
                        seg.options.timestamps = Some(Timestamps { tsval: *val, tsecr: live_ecr });
                    }
                    TcpOpt::Sack(blocks) => {
                        let mut sb = SackBlocks::default();
                        for (l, r) in blocks {
                            if !sb.push(SackBlock {
                                left: SeqNumber(l.wrapping_add(ack_off)),
                                right: SeqNumber(r.wrapping_add(ack_off)),
                            }) {
                                return self.fail("more than 4 SACK blocks");
                            }
                        }
                        seg.options.sack = sb;
                    }
                    TcpOpt::Nop | TcpOpt::Eol => {}
                    TcpOpt::Unsupported(n) => return self.fail(format!("TCP option `{n}` is not modelled")),
                }
            }
        }
        Ok(seg)
    }

    fn take_iss(&mut self) -> u32 {
        let iss = self.next_iss;
        self.next_iss = self.next_iss.wrapping_add(0x0100_0000);
        iss
    }

    /// Waits for the stack to send what the script expects; returns when it was sent (µs).
    fn expect_outbound(&mut self, p: &Packet, start: i64, end: i64, tol: i64, any: bool) -> Result<i64, Fail> {
        let deadline = if any {
            self.now_us.saturating_add(BLOCK_LIMIT_US)
        } else {
            end.max(start).saturating_add(SNIFF_TIMEOUT_US)
        };
        let mut got: Vec<Outbound> = Vec::new();
        let mut payload = 0u32;
        loop {
            let Some(o) = self.next_outbound(deadline)? else {
                let msg = if got.is_empty() {
                    format!(
                        "expected outbound packet {} but the stack sent nothing by {:.6} s",
                        packet_text(p.dir, p.flags, p.seq, p.len, p.ack, p.win, &p.options),
                        deadline as f64 / 1e6
                    )
                } else {
                    format!("live packet payload: expected {} bytes vs actual {payload} bytes", p.len)
                };
                return Err(Fail { loc: self.loc, msg, time_us: self.now_us });
            };
            // A reset sent for no socket belongs to the script only while no connection is under test.
            let connless = o.conn == usize::MAX && self.under_test.is_none();
            if Some(o.conn) != self.under_test && !connless {
                let text = self.actual_text(&o, None);
                return self.fail(format!("packet is not for the expected socket: {text}"));
            }
            payload += o.seg.payload_len;
            got.push(o);
            if payload >= p.len || self.opts.strict_segments {
                break;
            }
        }
        let first = got.first().map(|o| o.seg.seq).unwrap_or_default();
        let last = got.pop().expect("at least one segment");
        let i = last.conn;
        // Learn the local ISN from the stack's SYN or SYN-ACK.
        if p.flags & 0x02 != 0 {
            if let Some(c) = self.conns.get_mut(i) {
                c.script_local_isn = p.seq;
            }
        }
        let mut actual = last.seg;
        actual.seq = first;
        actual.payload_len = payload;
        // TS val mapping (before the comparison, as packetdrill's map_outbound_live_packet).
        let actual_opts = wire_options(&actual);
        if let (Options::List(l), Some(ts)) = (&p.options, actual.options.timestamps) {
            if let Some(TcpOpt::Timestamp { val, .. }) = l.iter().find(|o| matches!(o, TcpOpt::Timestamp { .. })) {
                if let Some(c) = self.conns.get_mut(i) {
                    c.ts_map.insert(*val, ts.tsval);
                    c.first_ts.get_or_insert((*val, ts.tsval));
                }
            }
        }
        let text = self.actual_text(&Outbound { at_us: last.at_us, conn: i, seg: actual }, Some(p));
        let expected = packet_text(p.dir, p.flags, p.seq, p.len, p.ack, p.win, &p.options);
        let mismatch = |what: String| -> Result<i64, Fail> {
            Err(Fail {
                loc: self.loc,
                msg: format!("{what}: expected `{expected}`, actual `{text}` at {:.6} s", last.at_us as f64 / 1e6),
                time_us: last.at_us,
            })
        };
        // Connection-less resets map with zero ISNs (their SEQ is the script's own ACK field).
        let (iss, script_local, script_remote, first_ts) = match self.conns.get(i) {
            Some(c) => (c.c_iss(), c.script_local_isn, c.script_remote_isn, c.first_ts),
            None => (0, 0, 0, None),
        };
        let seq = actual.seq.0.wrapping_sub(iss).wrapping_add(script_local);
        let ack = actual.ack.0.wrapping_sub(REMOTE_ISN).wrapping_add(script_remote);
        if actual.flags.0 != p.flags {
            return mismatch(format!("bad flags {} (expected {})", flags_text(actual.flags.0), flags_text(p.flags)));
        }
        if seq != p.seq {
            return mismatch(format!("bad sequence number {seq} (expected {})", p.seq));
        }
        if payload != p.len {
            return mismatch(format!("live packet payload: expected {} bytes vs actual {payload} bytes", p.len));
        }
        if p.flags & 0x10 != 0 && Some(ack) != p.ack {
            return mismatch(format!("bad ACK {ack} (expected {})", p.ack.unwrap_or(0)));
        }
        if let Some(w) = p.win {
            if actual.window as u32 != w {
                return mismatch(format!("bad window {} (expected {w})", actual.window));
            }
        }
        match &p.options {
            Options::Any => {}
            Options::None => {
                if !actual_opts.is_empty() {
                    return mismatch("bad outbound TCP options (none expected)".into());
                }
            }
            Options::List(want) => {
                if want.len() != actual_opts.len() {
                    return mismatch("bad outbound TCP options".into());
                }
                for (w, a) in want.iter().zip(&actual_opts) {
                    let ok = match (w, a) {
                        (TcpOpt::Timestamp { val: wv, .. }, TcpOpt::Timestamp { val: av, .. }) => {
                            let tick = self.opts.tcp_ts_tick_usecs;
                            if tick == 0 {
                                true
                            } else {
                                let (sv, lv) = first_ts.unwrap_or((*wv, *av));
                                let mapped = sv.wrapping_add(av.wrapping_sub(lv));
                                // Cumulative tolerance since the script's start (verify_outbound_tcp_option).
                                let t = self
                                    .opts
                                    .tolerance_usecs
                                    .max((self.opts.tolerance_percent / 100.0 * start as f64) as i64);
                                (mapped.wrapping_sub(*wv) as i32).unsigned_abs() as i64 * tick <= t
                            }
                        }
                        (TcpOpt::Sack(wb), TcpOpt::Sack(ab)) => {
                            wb.len() == ab.len()
                                && wb.iter().zip(ab).all(|((wl, wr), (al, ar))| {
                                    let m = |x: u32| x.wrapping_sub(REMOTE_ISN).wrapping_add(script_remote);
                                    m(*al) == *wl && m(*ar) == *wr
                                })
                        }
                        (w, a) => w == a,
                    };
                    if !ok {
                        return mismatch("bad outbound TCP options".into());
                    }
                }
            }
        }
        self.check_time(start, end, tol, last.at_us, "outbound packet").map_err(|mut f| {
            f.msg = format!("{}: expected `{expected}`, actual `{text}`", f.msg);
            f
        })?;
        Ok(last.at_us)
    }

    /// The next segment the stack sends, running its timers up to `deadline` if it has sent none yet.
    fn next_outbound(&mut self, deadline: i64) -> Result<Option<Outbound>, Fail> {
        loop {
            if let Some(o) = self.out.pop_front() {
                return Ok(Some(o));
            }
            match self.next_timer_us() {
                Some(t) if t <= deadline => self.step_timers(t)?,
                _ => return Ok(None),
            }
        }
    }

    /// An actual segment in the script's notation (sequence numbers relative, options as on the wire).
    fn actual_text(&self, o: &Outbound, p: Option<&Packet>) -> String {
        let s = &o.seg;
        let (seq, ack) = match self.conns.get(o.conn) {
            Some(c) => (
                s.seq.0.wrapping_sub(c.c_iss()).wrapping_add(c.script_local_isn),
                s.ack.0.wrapping_sub(REMOTE_ISN).wrapping_add(c.script_remote_isn),
            ),
            None => (s.seq.0, s.ack.0.wrapping_sub(REMOTE_ISN)),
        };
        let mut opts = wire_options(s);
        if let Some(c) = self.conns.get(o.conn) {
            for op in &mut opts {
                if let TcpOpt::Sack(b) = op {
                    for (l, r) in b.iter_mut() {
                        *l = l.wrapping_sub(REMOTE_ISN).wrapping_add(c.script_remote_isn);
                        *r = r.wrapping_sub(REMOTE_ISN).wrapping_add(c.script_remote_isn);
                    }
                }
            }
        }
        let _ = p;
        let options = if opts.is_empty() { Options::None } else { Options::List(opts) };
        packet_text(
            Direction::Outbound,
            s.flags.0,
            seq,
            s.payload_len,
            s.flags.ack().then_some(ack),
            Some(s.window as u32),
            &options,
        )
    }

    // ---------------------------------------------------------------------------------------------
    // System calls
    // ---------------------------------------------------------------------------------------------

    /// Before the next system call or code block: a blocking call must have returned (packetdrill waits
    /// for its syscall thread to go idle), so run time forward until it does.
    fn await_pending(&mut self) -> Result<(), Fail> {
        while let Some(p) = &self.pending {
            let limit = p.end_hi.saturating_add(p.tolerance).saturating_add(BLOCK_LIMIT_US);
            match self.next_timer_us() {
                Some(t) if t <= limit => self.step_timers(t)?,
                _ => {
                    self.loc = p.loc;
                    return self.fail(format!("{}() did not return (it still blocks)", p.call.name));
                }
            }
        }
        Ok(())
    }

    /// Completes the pending call if it can return now, and checks its result and time.
    fn try_pending(&mut self) -> Result<(), Fail> {
        let Some(p) = self.pending.take() else { return Ok(()) };
        let saved = self.loc;
        self.loc = p.loc;
        match self.syscall(&p.call)? {
            CallResult::WouldBlock => {
                self.pending = Some(p);
            }
            CallResult::Done(ret, errno) => {
                self.check_result(&p.call, ret, errno)?;
                self.check_time(p.end_lo, p.end_hi, p.tolerance, self.now_us, &format!("{}() to return", p.call.name))?;
            }
        }
        self.loc = saved;
        Ok(())
    }

    fn check_result(&self, c: &Syscall, ret: i64, errno: Option<&str>) -> Result<(), Fail> {
        let want = match &c.ret {
            Expr::Ellipsis => return Ok(()),
            Expr::Int(v) => *v,
            other => return self.fail(format!("{}(): the expected return value {other:?} is not an integer", c.name)),
        };
        if c.name == "socket" || c.name == "accept" {
            // The value names the script's file descriptor; the run's own numbering is not compared.
            if ret >= 0 && want >= 0 {
                return Ok(());
            }
        }
        if want != ret {
            let actual = match errno {
                Some(e) if ret < 0 => format!("{ret} {e}"),
                _ => ret.to_string(),
            };
            return self.fail(format!(
                "{}() returned {actual}, expected {want}{}",
                c.name,
                c.errno.as_ref().map(|e| format!(" {e}")).unwrap_or_default()
            ));
        }
        if want < 0 {
            if let Some(e) = &c.errno {
                if Some(e.as_str()) != errno {
                    return self.fail(format!(
                        "{}() failed with errno {}, expected {e}",
                        c.name,
                        errno.unwrap_or("none")
                    ));
                }
            }
        }
        Ok(())
    }

    fn fd_arg(&self, c: &Syscall) -> Result<i32, Fail> {
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
        self.conns.push(Conn {
            c,
            remote_port: LOCAL_PORT,
            script_local_isn: 0,
            script_remote_isn: 0,
            ts_map: HashMap::new(),
            first_ts: None,
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
    fn syscall(&mut self, c: &Syscall) -> Result<CallResult, Fail> {
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

    fn setsockopt(&mut self, fd: i32, c: &Syscall) -> Result<CallResult, Fail> {
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
                    // Linux doubles the value for its bookkeeping; about half of it carries payload.
                    cfg.send_buffer = ByteSize::new(b.max(2048) as u64);
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

    fn getsockopt(&mut self, fd: i32, c: &Syscall) -> Result<CallResult, Fail> {
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

    fn run_code(&mut self, text: &str) -> Result<(), Fail> {
        let info = match self.under_test {
            Some(i) => self.conns[i].c.tcp_info(ns(self.now_us)),
            None => return self.fail("a %{ }% block needs a socket under test (none was opened yet)"),
        };
        for (name, v) in TCPI_FIELDS.iter().zip(tcpi_values(&info)) {
            self.env.vars.insert(name.to_string(), code::Value::Int(v));
        }
        match code::run(text, &mut self.env) {
            Ok(()) => Ok(()),
            Err(code::CodeError::Assertion { statement, message }) => self.fail(format!(
                "assertion failed: `{statement}`{}",
                message.map(|m| format!(" (value: {m})")).unwrap_or_default()
            )),
            Err(code::CodeError::Error { line, msg }) => {
                self.fail(format!("error in the %{{ }}% block (its line {line}): {msg}"))
            }
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

impl Conn {
    /// The stack's own ISN (the live local ISN).
    fn c_iss(&self) -> u32 {
        self.c.iss().0
    }
}
