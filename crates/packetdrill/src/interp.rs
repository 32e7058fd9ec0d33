//! The interpreter both backends share: the run loop (event times, tolerance, blocking calls), the
//! outbound-packet matcher, the checks of system call results and the `%{ }%` blocks. A [`Backend`]
//! supplies the stack: the simulator's TCP on virtual time ([`crate::sim`]) or this machine's kernel
//! through a TUN device ([`crate::kernel`]).
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

use std::collections::HashMap;

use tcplab_wire::{EcnCodepoint, SackBlock, SackBlocks, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

use crate::ast::*;
use crate::code;
use crate::lex::Loc;

/// The live ISN of the script's side (both backends).
pub const REMOTE_ISN: u32 = 0x5eed_0000;
/// The port the script's connections are made to (connect) or from (a listener's).
pub const LOCAL_PORT: u16 = 8080;
/// packetdrill's sniff timeout beyond the expected time of an outbound packet.
const SNIFF_TIMEOUT_US: i64 = 2_000_000;
/// How long packetdrill waits at the end of a script for a call that still blocks.
const EXIT_WAIT_US: i64 = 1_000_000;
/// The stack gets this long after a blocking call's expected return before the call counts as hung.
const BLOCK_LIMIT_US: i64 = 60_000_000;

/// The system calls both backends implement.
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
pub const SETSOCKOPTS: &[&str] = &[
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
pub const GETSOCKOPTS: &[&str] = &["SO_ERROR", "TCP_NODELAY", "TCP_CORK", "TCP_MAXSEG"];

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
pub(crate) struct RunOptions {
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

pub(crate) fn header_option(o: &mut RunOptions, name: &str, value: Option<&str>) -> Result<(), String> {
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
        // them as one super-packet, and the simulated stack takes them whole, alike, measuring the peer's
        // segment size from this (sim.rs, `Connection::on_segment_gro`).
        "mss" if value.is_some_and(|v| v.parse::<u32>().is_ok()) => {}
        _ => return Err(format!("option --{name} is not supported")),
    }
    Ok(())
}

/// The first feature the script needs that the interpreter does not model, found before running, so
pub(crate) fn unsupported(
    script: &Script,
    shell: &mut dyn FnMut(&str) -> Result<(), String>,
    tcpi_fields: &[&str],
) -> Option<String> {
    for e in &script.events {
        match &e.kind {
            EventKind::Packet(p) => {
                if let Some(u) = &p.unsupported {
                    return Some(u.clone());
                }
                if p.flags & 0x20 != 0 {
                    return Some("the urgent flag (U)".into());
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
                if let Err(reason) = shell(cmd) {
                    return Some(reason);
                }
            }
            EventKind::Code(text) => {
                for n in code::names(text) {
                    if n.starts_with("tcpi_") && !tcpi_fields.contains(&n.as_str()) {
                        return Some(format!("tcp_info field {n}"));
                    }
                    // packetdrill gives every block the socket's SO_MEMINFO too (code.c `write_so_meminfo`).
                    if n.starts_with("SK_MEMINFO_") && !tcpi_fields.contains(&n.as_str()) {
                        return Some(format!("SO_MEMINFO value {n}"));
                    }
                }
            }
        }
    }
    None
}

pub(crate) struct Fail {
    loc: Loc,
    msg: String,
    time_us: i64,
}

struct Pending {
    loc: Loc,
    call: Syscall,
    /// Script times (µs) at which it may return.
    end_lo: i64,
    end_hi: i64,
    /// The tolerance of the return time; `None` for a call written without `...`, whose return time
    /// packetdrill does not check (`verify_time` runs only for blocking calls, run_system_call.c).
    tolerance: Option<i64>,
}

/// What a system call did.
pub(crate) enum CallResult {
    Done(i64, Option<&'static str>),
    WouldBlock,
}

pub(crate) struct Outbound {
    /// When it was sent, µs of script time.
    pub at_us: i64,
    /// The backend's connection index, or [`NO_CONN`] for a reset sent for no socket.
    pub conn: usize,
    pub seg: TcpSegment,
    /// The options as they were on the wire, in order.
    pub opts: Vec<TcpOpt>,
}

/// [`Outbound::conn`] of a segment that belongs to no connection.
pub const NO_CONN: usize = usize::MAX;

/// The script's view of one connection's sequence spaces (packetdrill `socket->script` / `socket->live`).
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// The stack's own ISN, and the port of the script's side.
    pub live_local_isn: u32,
    pub remote_port: u16,
    /// The stack's port on this connection.
    pub local_port: u16,
    pub script_local_isn: u32,
    pub script_remote_isn: u32,
    /// Outbound TS val as the script wrote it → as the stack sent it.
    pub ts_map: HashMap<u32, u32>,
    pub first_ts: Option<(u32, u32)>,
}

/// A blocking call's return: its value, errno, and when it returned (µs of script time).
pub(crate) type Returned = (i64, Option<&'static str>, i64);
/// A backquoted command run against a backend's settings (`Err`: a skip reason).
pub(crate) type Shell = Box<dyn FnMut(&str) -> Result<(), String>>;

/// What a backend supplies: a stack with sockets, the packets it sends, and its clock.
pub(crate) trait Backend {
    /// The current script time, µs.
    fn now_us(&self) -> i64;
    /// Makes progress towards `until` (µs): fires the stack's next timer, or waits for the next thing to
    /// happen. `false` once nothing more happens by `until` (the clock then reads `until` or later).
    fn step(&mut self, until: i64) -> Result<bool, String>;
    /// Gives the stack the script's packet.
    fn inject(&mut self, p: &Packet) -> Result<(), String>;
    /// The oldest segment the stack has sent that the script has not yet looked at.
    fn pop_outbound(&mut self) -> Option<Outbound>;
    /// The connection the script's packets belong to (packetdrill's socket under test).
    fn under_test(&self) -> Option<usize>;
    fn view(&mut self, conn: usize) -> Option<&mut View>;
    /// Starts a system call: its result, or that it blocks.
    fn call(&mut self, c: &Syscall) -> Result<CallResult, String>;
    /// Whether the blocking call `c` has returned: its value, errno and return time (µs).
    fn poll_call(&mut self, c: &Syscall) -> Result<Option<Returned>, String>;
    /// The `tcpi_*` values of the socket under test (and, where the backend has them, its `SK_MEMINFO_*`
    /// values: packetdrill reads SO_MEMINFO for every block as well).
    fn tcp_info(&mut self) -> Result<Vec<(&'static str, i64)>, String>;
    /// A backquoted command in the middle of the script.
    fn shell(&mut self, cmd: &str) -> Result<(), String>;
    /// The script starts now: script time 0 (a wall clock starts here; virtual time already is 0).
    fn start(&mut self) {}
}
pub(crate) fn flags_text(f: u8) -> String {
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

/// The codepoint a line's ECN word names (`[ect01]`, outbound only, is checked apart).
fn ecn_codepoint(e: IpEcn) -> EcnCodepoint {
    match e {
        IpEcn::NotEct | IpEcn::Ect01 => EcnCodepoint::NotEct,
        IpEcn::Ect0 => EcnCodepoint::Ect0,
        IpEcn::Ect1 => EcnCodepoint::Ect1,
        IpEcn::Ce => EcnCodepoint::Ce,
    }
}

/// A packet line in the script's notation.
pub(crate) fn packet_text(p: &Packet) -> String {
    let ecn = p.ecn.map(|e| format!("[{}] ", e.word())).unwrap_or_default();
    let (ack, win, o) = (p.ack, p.win, &p.options);
    let mut s = format!(
        "{} {ecn}{} {}:{}({})",
        if p.dir == Direction::Inbound { "<" } else { ">" },
        flags_text(p.flags),
        p.seq,
        p.seq.wrapping_add(p.len),
        p.len
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

pub(crate) fn errno_value(name: &str) -> i64 {
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
pub(crate) fn int_arg(e: Option<&Expr>) -> Option<i64> {
    match e? {
        Expr::Int(v) => Some(*v),
        Expr::List(l) if l.len() == 1 => int_arg(l.first()),
        _ => None,
    }
}
/// The shared interpreter over one backend.
pub(crate) struct Interp<B: Backend> {
    pub b: B,
    opts: RunOptions,
    /// The previous event: its script time and whether it was an inbound packet.
    last: Option<(i64, bool)>,
    pending: Option<Pending>,
    env: code::Env,
    loc: Loc,
    /// `TCPLAB_PACKETDRILL_TRACE` set: each event and each segment sent goes to stderr.
    trace: bool,
}

/// Decodes TCP option bytes (the part of the header after the first 20 bytes) in the script's terms.
pub(crate) fn decode_options(o: &[u8]) -> Vec<TcpOpt> {
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

/// Runs a parsed script's header and set-up through `prepare` (which turns the set-up commands and the
/// run options into a backend, or a skip reason), checks for unsupported constructs, and runs it.
pub(crate) fn run_script<B: Backend>(
    script: &Script,
    prepare: impl FnOnce(&Script) -> Result<(B, Shell, &'static [&'static str]), String>,
) -> Verdict {
    let mut opts = RunOptions::default();
    for (name, value, _) in &script.options {
        if let Err(reason) = header_option(&mut opts, name, value.as_deref()) {
            return Verdict::Skip(reason);
        }
    }
    let (b, mut shell, fields) = match prepare(script) {
        Ok(x) => x,
        Err(reason) => return Verdict::Skip(reason),
    };
    if let Some(reason) = unsupported(script, &mut *shell, fields) {
        return Verdict::Skip(reason);
    }
    drop(shell);
    let mut r = Interp {
        b,
        opts,
        last: None,
        pending: None,
        env: code::Env::new(),
        loc: Loc::default(),
        trace: std::env::var_os("TCPLAB_PACKETDRILL_TRACE").is_some(),
    };
    r.b.start();
    match r.run(&script.events) {
        Ok(()) => Verdict::Pass,
        Err(f) => Verdict::Fail { loc: f.loc, msg: f.msg, time_us: f.time_us },
    }
}

impl<B: Backend> Interp<B> {
    /// A backend's error as a failure at the current event.
    fn lift<T>(&self, r: Result<T, String>) -> Result<T, Fail> {
        r.map_err(|msg| Fail { loc: self.loc, msg, time_us: self.b.now_us() })
    }

    /// Lets the backend run up to `t` (µs), returning blocking calls as they complete.
    fn advance_to(&mut self, t: i64) -> Result<(), Fail> {
        loop {
            let r = self.b.step(t);
            if !self.lift(r)? {
                return Ok(());
            }
            self.try_pending()?;
        }
    }

    fn fail<T>(&self, msg: impl Into<String>) -> Result<T, Fail> {
        Err(Fail { loc: self.loc, msg: msg.into(), time_us: self.b.now_us() })
    }

    fn run(&mut self, events: &[Event]) -> Result<(), Fail> {
        let trace = self.trace;
        for e in events {
            self.loc = e.loc;
            if trace {
                eprintln!("[{:.6}] line {}: {:?}", self.b.now_us() as f64 / 1e6, e.loc.line, e.kind);
            }
            let inbound = matches!(&e.kind, EventKind::Packet(p) if p.dir == Direction::Inbound);
            // packetdrill adjust_relative_event_times.
            let offset = match self.last {
                Some((t, true)) if inbound => t,
                _ => self.b.now_us(),
            };
            let (start, end) = match e.time {
                Time::Absolute(t) => (t, t),
                Time::Relative(d) => (offset.saturating_add(d), offset.saturating_add(d)),
                Time::AbsoluteRange(a, b) => (a, b),
                Time::RelativeRange(a, b) => (offset.saturating_add(a), offset.saturating_add(b)),
                Time::Any => (self.b.now_us(), i64::MAX / 4),
            };
            let mut tolerance = self.opts.tolerance_usecs;
            if let Some((last, _)) = self.last {
                let dynamic = (self.opts.tolerance_percent / 100.0 * start.saturating_sub(last) as f64) as i64;
                tolerance = tolerance.max(dynamic);
            }
            match &e.kind {
                EventKind::Packet(p) if p.dir == Direction::Inbound => {
                    self.advance_to(start)?;
                    let r = self.b.inject(p);
                    self.lift(r)?;
                    self.try_pending()?;
                }
                EventKind::Packet(p) => {
                    self.expect_outbound(p, start, end, tolerance, e.time == Time::Any)?;
                }
                EventKind::Syscall(c) => {
                    self.await_pending()?;
                    self.advance_to(start)?;
                    self.check_time(start, end, tolerance, self.b.now_us(), "system call start")?;
                    // packetdrill: a relative end counts from the same point as the start.
                    let (end_lo, end_hi) = match c.end {
                        None => (start, start),
                        Some(Time::Relative(d)) if matches!(e.time, Time::Relative(_)) => {
                            (offset.saturating_add(d), offset.saturating_add(d))
                        }
                        Some(Time::Relative(d)) | Some(Time::Absolute(d)) => (d, d),
                        Some(_) => (start, start),
                    };
                    // packetdrill: a blocking call's return gets max(tolerance_usecs, tolerance_percent of
                    // its expected duration), the duration taking the place of the gap since the last event.
                    let tolerance = c.end.as_ref().map(|_| {
                        let duration = end_lo.saturating_sub(start) as f64;
                        self.opts.tolerance_usecs.max((self.opts.tolerance_percent / 100.0 * duration) as i64)
                    });
                    let p = Pending { loc: e.loc, call: c.clone(), end_lo, end_hi, tolerance };
                    self.start_call(p)?;
                }
                EventKind::Shell(cmd) => {
                    self.advance_to(start)?;
                    let r = self.b.shell(cmd);
                    self.lift(r)?;
                }
                EventKind::Code(text) => {
                    self.await_pending()?;
                    self.advance_to(start)?;
                    self.run_code(text)?;
                }
            }
            self.last = Some((start, inbound));
        }
        self.await_pending_at_exit()
    }

    /// At the end of the script packetdrill waits at most 1 s for a call that still blocks, and fails the
    /// script if it has not returned by then (run_system_call.c `syscalls_free`, `await_idle_thread`).
    fn await_pending_at_exit(&mut self) -> Result<(), Fail> {
        let limit = self.b.now_us().saturating_add(EXIT_WAIT_US);
        while let Some(p) = &self.pending {
            let loc = p.loc;
            let r = self.b.step(limit);
            if !self.lift(r)? {
                self.loc = loc;
                return self.fail("exiting while a blocking system call is in progress".to_string());
            }
            self.try_pending()?;
        }
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

    fn expect_outbound(&mut self, p: &Packet, start: i64, end: i64, tol: i64, any: bool) -> Result<(), Fail> {
        let deadline = if any {
            self.b.now_us().saturating_add(BLOCK_LIMIT_US)
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
                        packet_text(p),
                        deadline as f64 / 1e6
                    )
                } else {
                    format!("live packet payload: expected {} bytes vs actual {payload} bytes", p.len)
                };
                return Err(Fail { loc: self.loc, msg, time_us: self.b.now_us() });
            };
            // A reset sent for no socket belongs to the script only while no connection is under test.
            let connless = o.conn == NO_CONN && self.b.under_test().is_none();
            if Some(o.conn) != self.b.under_test() && !connless {
                // packetdrill looks only at the socket under test: a packet of another connection (an
                // earlier one's reset at close(), say) matches no socket it tracks and is dropped unread
                // (run_packet.c `sniff_outbound_live_packet`, `find_socket_for_live_packet`).
                if self.trace {
                    eprintln!("ignored (not the connection under test): {}", self.actual_text(&o));
                }
                continue;
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
        // Learn the local ISN, script and live, from the stack's SYN or SYN-ACK.
        if p.flags & 0x02 != 0 && last.seg.flags.syn() {
            if let Some(c) = self.b.view(i) {
                c.script_local_isn = p.seq;
                c.live_local_isn = first.0;
            }
        }
        let mut actual = last.seg;
        actual.seq = first;
        actual.payload_len = payload;
        // TS val mapping (before the comparison, as packetdrill's map_outbound_live_packet).
        let actual_opts = last.opts.clone();
        if let (Options::List(l), Some(ts)) = (&p.options, actual.options.timestamps) {
            if let Some(TcpOpt::Timestamp { val, .. }) = l.iter().find(|o| matches!(o, TcpOpt::Timestamp { .. })) {
                if let Some(c) = self.b.view(i) {
                    c.ts_map.insert(*val, ts.tsval);
                    c.first_ts.get_or_insert((*val, ts.tsval));
                }
            }
        }
        let text = self.actual_text(&Outbound { at_us: last.at_us, conn: i, seg: actual, opts: actual_opts.clone() });
        let expected = packet_text(p);
        let mismatch = |what: String| -> Result<(), Fail> {
            Err(Fail {
                loc: self.loc,
                msg: format!("{what}: expected `{expected}`, actual `{text}` at {:.6} s", last.at_us as f64 / 1e6),
                time_us: last.at_us,
            })
        };
        // Connection-less resets map with zero ISNs (their SEQ is the script's own ACK field). A segment
        // with SYN is written with absolute numbers, any other relative to the ISNs (`script_isns`).
        let (iss, (script_local, script_remote), first_ts) = match self.b.view(i) {
            Some(c) => (c.live_local_isn, script_isns(c, actual.flags.syn()), c.first_ts),
            None => (0, (0, 0), None),
        };
        let seq = actual.seq.0.wrapping_sub(iss).wrapping_add(script_local);
        let ack = actual.ack.0.wrapping_sub(REMOTE_ISN).wrapping_add(script_remote);
        if actual.flags.0 != p.flags {
            return mismatch(format!("bad flags {} (expected {})", flags_text(actual.flags.0), flags_text(p.flags)));
        }
        // packetdrill's verify_outbound_live_tos: the ECN field of the last segment, when the line names one.
        let ecn_ok = match p.ecn {
            None => true,
            Some(IpEcn::Ect01) => matches!(actual.ecn, EcnCodepoint::Ect0 | EcnCodepoint::Ect1),
            Some(want) => ecn_codepoint(want) == actual.ecn,
        };
        if !ecn_ok {
            let want = p.ecn.map_or("", IpEcn::word);
            return mismatch(format!("bad ECN field {:?} (expected [{want}])", actual.ecn));
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
        Ok(())
    }

    /// The next segment the stack sends, letting the backend run up to `deadline` if it has sent none yet.
    fn next_outbound(&mut self, deadline: i64) -> Result<Option<Outbound>, Fail> {
        loop {
            if let Some(o) = self.b.pop_outbound() {
                if self.trace {
                    let text = self.actual_text(&o);
                    eprintln!("[{:.6}]   sent {text}", o.at_us as f64 / 1e6);
                }
                return Ok(Some(o));
            }
            let r = self.b.step(deadline);
            if !self.lift(r)? {
                return Ok(None);
            }
            self.try_pending()?;
        }
    }

    /// An actual segment in the script's notation (sequence numbers relative, options as on the wire).
    fn actual_text(&mut self, o: &Outbound) -> String {
        let s = &o.seg;
        let view = self.b.view(o.conn).map(|c| (c.live_local_isn, script_isns(c, s.flags.syn())));
        let (seq, ack) = match view {
            Some((iss, (sl, sr))) => {
                (s.seq.0.wrapping_sub(iss).wrapping_add(sl), s.ack.0.wrapping_sub(REMOTE_ISN).wrapping_add(sr))
            }
            None => (s.seq.0, s.ack.0.wrapping_sub(REMOTE_ISN)),
        };
        let mut opts = o.opts.clone();
        // SACK blocks (never on a SYN) are relative to the remote ISN.
        if view.is_some() {
            for op in &mut opts {
                if let TcpOpt::Sack(b) = op {
                    for (l, r) in b.iter_mut() {
                        *l = l.wrapping_sub(REMOTE_ISN);
                        *r = r.wrapping_sub(REMOTE_ISN);
                    }
                }
            }
        }
        let options = if opts.is_empty() { Options::None } else { Options::List(opts) };
        // The ECN field is shown when it is set (Not-ECT, the usual, is left out).
        let ecn = match s.ecn {
            EcnCodepoint::NotEct => None,
            EcnCodepoint::Ect0 => Some(IpEcn::Ect0),
            EcnCodepoint::Ect1 => Some(IpEcn::Ect1),
            EcnCodepoint::Ce => Some(IpEcn::Ce),
        };
        packet_text(&Packet {
            dir: Direction::Outbound,
            flags: s.flags.0,
            seq,
            end: seq.wrapping_add(s.payload_len),
            len: s.payload_len,
            ack: s.flags.ack().then_some(ack),
            win: Some(s.window as u32),
            options,
            ecn,
            unsupported: None,
        })
    }

    // ---------------------------------------------------------------------------------------------
    // System calls
    // ---------------------------------------------------------------------------------------------

    /// Before the next system call or code block: a blocking call must have returned (packetdrill waits
    /// for its syscall thread to go idle), so run time forward until it does.
    fn await_pending(&mut self) -> Result<(), Fail> {
        while let Some(p) = &self.pending {
            let limit = p
                .end_hi
                .saturating_add(p.tolerance.unwrap_or(self.opts.tolerance_usecs))
                .saturating_add(BLOCK_LIMIT_US);
            let (loc, name) = (p.loc, p.call.name.clone());
            let r = self.b.step(limit);
            if !self.lift(r)? {
                self.loc = loc;
                return self.fail(format!("{name}() did not return (it still blocks)"));
            }
            self.try_pending()?;
        }
        Ok(())
    }

    /// Starts a system call: a result now is checked now; a call that blocks becomes the pending one.
    fn start_call(&mut self, p: Pending) -> Result<(), Fail> {
        let r = self.b.call(&p.call);
        match self.lift(r)? {
            CallResult::WouldBlock => {
                self.pending = Some(p);
                Ok(())
            }
            CallResult::Done(ret, errno) => {
                let at = self.b.now_us();
                self.finish_call(p, ret, errno, at)
            }
        }
    }

    fn finish_call(&mut self, p: Pending, ret: i64, errno: Option<&str>, at: i64) -> Result<(), Fail> {
        let saved = self.loc;
        self.loc = p.loc;
        self.check_result(&p.call, ret, errno)?;
        if let Some(tolerance) = p.tolerance {
            self.check_time(p.end_lo, p.end_hi, tolerance, at, &format!("{}() to return", p.call.name))?;
        }
        self.loc = saved;
        Ok(())
    }

    /// Completes the pending call if it can return now, and checks its result and time.
    fn try_pending(&mut self) -> Result<(), Fail> {
        let Some(p) = self.pending.take() else { return Ok(()) };
        let saved = self.loc;
        self.loc = p.loc;
        let r = self.b.poll_call(&p.call);
        let done = self.lift(r)?;
        self.loc = saved;
        match done {
            None => {
                self.pending = Some(p);
                Ok(())
            }
            Some((ret, errno, at)) => self.finish_call(p, ret, errno, at),
        }
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

    fn run_code(&mut self, text: &str) -> Result<(), Fail> {
        let r = self.b.tcp_info();
        for (name, v) in self.lift(r)? {
            self.env.vars.insert(name.to_string(), code::Value::Int(v));
        }
        let r = code::run(text, &mut self.env);
        // What `print` wrote goes to stderr, as packetdrill's Python prints to its output.
        for line in self.env.printed.drain(..) {
            eprintln!("line {}: {line}", self.loc.line);
        }
        match r {
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

/// The script's (local, remote) ISNs that a packet's numbers are written from: packetdrill writes a segment
/// with SYN in absolute numbers and any other relative to the ISNs, as tcpdump prints them (socket.h,
/// `local_seq_script_to_live_offset`); so a script's SYN at 999000 is followed by `1:1(0)`.
fn script_isns(c: &View, syn: bool) -> (u32, u32) {
    if syn {
        (c.script_local_isn, c.script_remote_isn)
    } else {
        (0, 0)
    }
}

/// The live segment for a script packet on the connection `view` (or for no connection: from
/// `no_conn_port`, with the script's numbers as they are).
pub(crate) fn inbound_segment(view: Option<&View>, no_conn_port: u16, p: &Packet) -> Result<TcpSegment, String> {
    let (remote_port, local_port, seq_off, ack_off) = match view {
        Some(c) => {
            let (script_local, script_remote) = script_isns(c, p.flags & 0x02 != 0);
            (
                c.remote_port,
                c.local_port,
                REMOTE_ISN.wrapping_sub(script_remote),
                c.live_local_isn.wrapping_sub(script_local),
            )
        }
        None => (no_conn_port, LOCAL_PORT, REMOTE_ISN, 0),
    };
    {
        let mut seg = TcpSegment {
            src_port: remote_port,
            dst_port: local_port,
            seq: SeqNumber(p.seq.wrapping_add(seq_off)),
            ack: SeqNumber(p.ack.unwrap_or(0).wrapping_add(if p.flags & 0x10 != 0 { ack_off } else { 0 })),
            flags: TcpFlags(p.flags),
            window: p.win.unwrap_or(0) as u16,
            options: TcpOptions::default(),
            payload_len: p.len,
            ecn: p.ecn.map_or(EcnCodepoint::NotEct, ecn_codepoint),
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
                            match view.and_then(|c| c.ts_map.get(ecr)) {
                                Some(v) => live_ecr = *v,
                                None => {
                                    return Err(format!(
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
                                return Err("more than 4 SACK blocks".into());
                            }
                        }
                        seg.options.sack = sb;
                    }
                    TcpOpt::Nop | TcpOpt::Eol => {}
                    TcpOpt::Unsupported(n) => return Err(format!("TCP option `{n}` is not modelled")),
                }
            }
        }
        Ok(seg)
    }
}
