//! A parsed script: header options and a list of timed events, each with its position.

use crate::lex::Loc;

/// When an event happens, in microseconds of script time (packetdrill's `event_time_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Time {
    /// `0.100`: since the script's start.
    Absolute(i64),
    /// `+0.1`: since the previous event.
    Relative(i64),
    /// `0.1~0.2`: any time in the range, since the start.
    AbsoluteRange(i64, i64),
    /// `+0.1~+0.2`: any time in the range, since the previous event.
    RelativeRange(i64, i64),
    /// `*`: any time.
    Any,
}

/// Which way a packet goes, seen from the stack under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `<`: the script injects it.
    Inbound,
    /// `>`: the stack must send it.
    Outbound,
}

/// One TCP option as the script writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcpOpt {
    Nop,
    Eol,
    Mss(u16),
    WindowScale(u8),
    SackPermitted,
    Sack(Vec<(u32, u32)>),
    Timestamp {
        val: u32,
        ecr: u32,
    },
    /// An option the interpreter does not model (`FO`, `md5`, `exp-tfo`, AccECN...): the script is skipped.
    Unsupported(String),
}

/// A packet line's ECN field (`[noecn]`, `[ect0]`, `[ect1]`, `[ce]`, `[ect01]`): what an inbound packet's IP
/// header carries, and what an outbound one's must (packetdrill's `TOS_CHECK_ECN`, `TOS_CHECK_ECN_ECT01`).
/// A line without one injects Not-ECT and checks nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpEcn {
    NotEct,
    Ect0,
    Ect1,
    Ce,
    /// ECT(0) or ECT(1): outbound packets only.
    Ect01,
}

impl IpEcn {
    /// The script's word for it.
    pub fn word(self) -> &'static str {
        match self {
            IpEcn::NotEct => "noecn",
            IpEcn::Ect0 => "ect0",
            IpEcn::Ect1 => "ect1",
            IpEcn::Ce => "ce",
            IpEcn::Ect01 => "ect01",
        }
    }
}

/// The options list of a packet line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Options {
    /// No `<...>` at all: the packet carries no options.
    None,
    /// `<...>`: any options (not checked).
    Any,
    List(Vec<TcpOpt>),
}

/// A TCP packet line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    pub dir: Direction,
    /// The flags as `TcpFlags` bits (FIN 0x01 … CWR 0x80; `.` is ACK).
    pub flags: u8,
    /// `start:end(len)`: the relative sequence numbers and payload length.
    pub seq: u32,
    pub end: u32,
    pub len: u32,
    pub ack: Option<u32>,
    /// `win N`; `None` leaves an outbound window unchecked (an inbound one defaults to 65535... as written).
    pub win: Option<u32>,
    pub options: Options,
    /// The ECN field, when the line names one.
    pub ecn: Option<IpEcn>,
    /// Features of the line this interpreter does not model (`[tos 0x4]`, `urg`, a non-TCP packet...).
    pub unsupported: Option<String>,
}

/// An argument or return value of a system call: packetdrill's expression grammar.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64),
    /// `...`: anything.
    Ellipsis,
    /// A symbolic constant (`SOCK_STREAM`, `TCP_NODELAY`).
    Ident(String),
    Str(String),
    /// `a|b`.
    Or(Vec<Expr>),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{name=value, ...}`.
    Struct(Vec<(String, Expr)>),
    /// `name(args)`, as `htons(8080)` or `msg_iov(1)`.
    Call(String, Vec<Expr>),
}

/// A system call line.
#[derive(Debug, Clone, PartialEq)]
pub struct Syscall {
    pub name: String,
    pub args: Vec<Expr>,
    /// The expected return value (`-1` for an error), or `...`.
    pub ret: Expr,
    /// The expected errno name, with `-1`.
    pub errno: Option<String>,
    /// `+0...0.2`: a blocking call expected to return at this time (same kind as the start: relative to it,
    /// or absolute).
    pub end: Option<Time>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    Packet(Packet),
    Syscall(Syscall),
    /// A backquoted shell command run at this point in the script.
    Shell(String),
    /// A `%{ }%` block evaluated at this point.
    Code(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub loc: Loc,
    pub time: Time,
    pub kind: EventKind,
}

/// A whole script.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    /// `--name=value` lines before the first event, with their positions.
    pub options: Vec<(String, Option<String>, Loc)>,
    /// Backquoted commands before the first timed event (the script's set-up).
    pub setup: Vec<(String, Loc)>,
    pub events: Vec<Event>,
}
