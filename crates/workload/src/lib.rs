//! netperf-style tests as sans-IO applications. An application lives on one host, owns the connections it
//! opens or accepts, and is driven by [`Event`]s; it acts through [`Sockets`], its host's socket interface.
//! It never reads a clock (time comes from [`Sockets::now`]) and never touches I/O, so the simulator drives
//! it over simulated transports and the Linux backend over real sockets.
//!
//! Applications own their measurement: a test's measurement window opens with [`Event::MeasureStart`] (sent
//! to every application once all of them said [`Sockets::ready`]) and closes with [`Event::MeasureStop`];
//! each application reports its own figures in [`Report`].
//!
//! So far: the bulk transfer of TCP_STREAM and TCP_MAERTS ([`Stream`]), the request/response of TCP_RR
//! and TCP_CRR ([`RrClient`], [`RrServer`]), and the small-message stream of `tcp_msg` ([`MsgSender`],
//! [`MsgReceiver`]).

mod conns;
mod msg;
mod rr;
mod stats;
mod stream;

pub use msg::{MsgBook, MsgReceiver, MsgReceiverConfig, MsgReport, MsgSender, MsgSenderConfig};
pub use rr::{RrClient, RrClientConfig, RrReport, RrServer, RrServerConfig};
pub use stats::{Cdf, Latency, LatencySummary, CDF_MAX_STEPS};
pub use stream::{Opening, Role, Stream, StreamConfig};
use tcplab_units::{Duration, Instant};

/// A connection as an application knows it: a handle its host gave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u32);

/// What happens to an application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The run begins: open connections, listen.
    Start,
    /// A connection of the application (opened or accepted) is established. The first event an accepted
    /// connection brings.
    Established(ConnId),
    /// The connection may have data to read, or the peer's close to notice.
    Readable(ConnId),
    /// The connection's send buffer has room.
    Writable(ConnId),
    /// A deadline asked for with [`Sockets::set_timer`] may have come.
    Timer,
    /// Every application is ready: the measurement starts now.
    MeasureStart,
    /// The measurement is over.
    MeasureStop,
}

/// Why a connection could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectError {
    /// Every ephemeral port is bound to the destination (in use or held in TIME-WAIT).
    NoFreePort,
}

/// A host's socket interface as an application uses it; payload is counted in bytes, never materialized.
pub trait Sockets {
    /// The current time.
    fn now(&self) -> Instant;
    /// Opens a connection to `remote_port` on the peer host from a free ephemeral port.
    fn connect(&mut self, remote_port: u16) -> Result<ConnId, ConnectError>;
    /// Accepts connections on `port`; they arrive as [`Event::Established`].
    fn listen(&mut self, port: u16);
    /// Queues up to `bytes` for sending; returns how many the send buffer took. The transport sends after the
    /// application's event, so several calls within one event gather in the send buffer first (a writer
    /// faster than the wire); [`Sockets::push`] sends at once.
    fn send(&mut self, c: ConnId, bytes: u64) -> u64;
    /// Hands what the application wrote on `c` to the transport now, as Linux's `tcp_push` does at the end of
    /// every `sendmsg`: what the transport may send (Nagle, cwnd, the peer's window and the interface
    /// allowing) leaves before the application's next call. Returns whether the host's interface queue has
    /// no room for the connection now; the backend then sends [`Event::Writable`] when it has, so a writer
    /// that blocks on the interface waits for that. A backend whose send calls push by themselves and
    /// whose interface the application cannot see (real sockets) keeps this default: nothing to do, never
    /// full.
    fn push(&mut self, c: ConnId) -> bool {
        let _ = c;
        false
    }
    /// The connection's (local port, remote port).
    fn ports(&self, c: ConnId) -> (u16, u16);
    /// Reads up to `max` bytes; returns how many were read.
    fn recv(&mut self, c: ConnId, max: u64) -> u64;
    /// `recv`, then whether the peer's close has been read (`is_eof` after the read): a reader's two
    /// questions in one call, for a backend that finds the connection once (issue 25).
    fn recv_to_eof(&mut self, c: ConnId, max: u64) -> (u64, bool) {
        let n = self.recv(c, max);
        (n, self.is_eof(c))
    }
    /// Closes the sending direction (the transport's close follows the queued data).
    fn close(&mut self, c: ConnId);
    /// The peer closed and everything before its close was read.
    fn is_eof(&self, c: ConnId) -> bool;
    /// The connection has bytes to read or its peer's close to notice. A backend that cannot tell keeps
    /// this default: the application then reads and finds nothing.
    fn has_input(&self, c: ConnId) -> bool {
        let _ = c;
        true
    }
    /// Asks for an [`Event::Timer`] at `at` (or as soon after as the backend can).
    fn set_timer(&mut self, at: Instant);
    /// The application is ready for the measurement (e.g. all its connections are established).
    fn ready(&mut self);
    /// The application's work is done: the measurement ends now rather than at its set length (a transfer
    /// of a fixed size). A backend that cannot end it early ignores this.
    fn end_measurement(&mut self) {}
}

/// Every kind of application, so that a backend dispatches without a virtual call per event. A tag byte of
/// its own: decoding the tag from a niche in `Stream`'s configuration cost two instructions more per dispatch.
#[derive(Debug, Clone)]
#[repr(u8)]
pub enum App {
    Stream(Stream),
    RrClient(RrClient),
    RrServer(RrServer),
    MsgSender(MsgSender),
    MsgReceiver(MsgReceiver),
}

impl App {
    // Always inlined: at the engine's call sites the event's variant is known, and the match on it folds away
    // (per-packet Readable/Writable dispatch is a measurable share of a bulk run).
    #[inline(always)]
    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match self {
            App::Stream(a) => a.on_event(ev, s),
            App::RrClient(a) => a.on_event(ev, s),
            App::RrServer(a) => a.on_event(ev, s),
            App::MsgSender(a) => a.on_event(ev, s),
            App::MsgReceiver(a) => a.on_event(ev, s),
        }
    }

    /// Connection `c` may have changed (a segment it took, a timer, room in the interface): the application
    /// hears [`Event::Readable`] if it reads and `c` has input ([`Sockets::has_input`]), then
    /// [`Event::Writable`] if it writes ("may have room": its send finds out, a free-space check here would
    /// be repeated by that send). Both are asked before either is told. One dispatch on the kind of
    /// application for the questions and the events: a backend calls this for every segment an endpoint
    /// takes.
    #[inline(always)]
    pub fn on_io<S: Sockets>(&mut self, c: ConnId, s: &mut S) {
        macro_rules! io {
            ($a:expr) => {{
                let (readable, writable) = ($a.wants_readable() && s.has_input(c), $a.wants_writable());
                if readable {
                    $a.on_event(Event::Readable(c), s);
                }
                if writable {
                    $a.on_event(Event::Writable(c), s);
                }
            }};
        }
        match self {
            App::Stream(a) => io!(a),
            App::RrClient(a) => io!(a),
            App::RrServer(a) => io!(a),
            App::MsgSender(a) => io!(a),
            App::MsgReceiver(a) => io!(a),
        }
    }

    /// Whether [`Event::Readable`] would interest the application now (a backend may skip it otherwise).
    #[inline]
    pub fn wants_readable(&self) -> bool {
        match self {
            App::Stream(a) => a.wants_readable(),
            App::RrClient(a) => a.wants_readable(),
            App::RrServer(a) => a.wants_readable(),
            App::MsgSender(a) => a.wants_readable(),
            App::MsgReceiver(a) => a.wants_readable(),
        }
    }

    /// Whether [`Event::Writable`] would interest the application now.
    #[inline]
    pub fn wants_writable(&self) -> bool {
        match self {
            App::Stream(a) => a.wants_writable(),
            App::RrClient(a) => a.wants_writable(),
            App::RrServer(a) => a.wants_writable(),
            App::MsgSender(a) => a.wants_writable(),
            App::MsgReceiver(a) => a.wants_writable(),
        }
    }

    /// The application's figures.
    pub fn report(&self) -> Report {
        match self {
            App::Stream(a) => Report::Stream(a.report()),
            App::RrClient(a) => Report::Rr(a.report()),
            App::RrServer(a) => Report::Rr(a.report()),
            App::MsgSender(a) => Report::Msg(a.report()),
            App::MsgReceiver(a) => Report::Msg(a.report()),
        }
    }
}

/// What an application measured. (A request/response report carries its latency CDF inline, 4 KiB: a
/// report is made once per application per run, so its size does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    Stream(StreamReport),
    Rr(RrReport),
    Msg(MsgReport),
}

/// A bulk transfer's figures, from one end.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamReport {
    pub role: Role,
    /// Bytes written (sender) or read (receiver) during the measurement window.
    pub window_bytes: u64,
    /// Length of the measurement window (zero if it never opened).
    pub elapsed: Duration,
    /// Bytes written or read over the whole run.
    pub total_bytes: u64,
    /// Completed send calls (sender).
    pub calls: u64,
    /// Connections the application opened or accepted.
    pub connections: u32,
}

/// Counts bytes and the instants at which the measurement window opens and closes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamMeter {
    pub bytes: u64,
    start: Option<(Instant, u64)>,
    stop: Option<(Instant, u64)>,
}

impl StreamMeter {
    pub fn add(&mut self, n: u64) {
        self.bytes += n;
    }
    pub fn start(&mut self, now: Instant) {
        self.start.get_or_insert((now, self.bytes));
    }
    pub fn stop(&mut self, now: Instant) {
        if self.start.is_some() {
            self.stop.get_or_insert((now, self.bytes));
        }
    }
    /// (bytes in the window, its length).
    pub fn window(&self) -> (u64, Duration) {
        match (self.start, self.stop) {
            (Some((t0, b0)), Some((t1, b1))) => (b1 - b0, t1.saturating_since(t0)),
            _ => (0, Duration::ZERO),
        }
    }
}
