//! Request/response: TCP_RR (transactions on long-lived connections, netperf `-r req,rsp` and first burst
//! `-b`) and TCP_CRR (a new connection per transaction: connect, request, response, close by the client).
//!
//! A transaction is one request written and the whole response read. Its latency runs from the request's
//! write (TCP_CRR: from the connect call) to the read of the response's last byte. A transaction counts in
//! the measurement when its response completes inside the window.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};

use crate::conns::ConnTable;
use crate::stats::{Latency, LatencySummary};
use crate::{ConnId, ConnectError, Event, Sockets};

/// The client's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RrClientConfig {
    /// Concurrent connections (TCP_CRR: concurrent transaction loops, each on its own connection).
    pub connections: u32,
    /// The server's first port, and how many ports the connections are spread over round-robin.
    pub port: u16,
    pub ports: u16,
    /// TCP_RR: the first connection opens at `at`, the next ones `spacing` apart.
    pub at: Instant,
    pub spacing: Duration,
    pub request: u64,
    pub response: u64,
    /// TCP_RR: extra transactions put in flight at the start (netperf `-b`), so `burst + 1` are outstanding.
    pub burst: u32,
    /// TCP_CRR: a new connection per transaction.
    pub per_transaction: bool,
    /// TCP_CRR: how long to wait before trying again when no ephemeral port is free.
    pub port_retry: Duration,
}

/// The server's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RrServerConfig {
    pub port: u16,
    pub ports: u16,
    /// TCP_RR: the connections to wait for before the measurement; 0 (TCP_CRR): none.
    pub connections: u32,
    pub request: u64,
    pub response: u64,
}

/// One connection's progress.
#[derive(Debug, Clone)]
struct Conn {
    id: ConnId,
    /// Bytes of requests (client) or responses (server) written by the application but not yet taken.
    to_send: u64,
    /// Bytes read of the message being received.
    got: u64,
    /// Client: the start instants of the outstanding transactions, oldest first.
    outstanding: VecDeque<Instant>,
    /// The application closed its side (client: transaction loop moved on).
    closed: bool,
    /// TCP_CRR: the transaction loop the connection belongs to.
    slot: u32,
}

impl Conn {
    fn new(id: ConnId, slot: u32) -> Self {
        Conn { id, to_send: 0, got: 0, outstanding: VecDeque::new(), closed: false, slot }
    }
}

/// Writes what the send buffer takes of `conn.to_send`; keeps `blocked` (connections with bytes left).
fn flush<S: Sockets>(conn: &mut Conn, blocked: &mut u32, s: &mut S) {
    let was_blocked = conn.to_send > 0;
    if was_blocked {
        conn.to_send -= s.send(conn.id, conn.to_send);
    }
    match (was_blocked, conn.to_send > 0) {
        (false, true) => *blocked += 1,
        (true, false) => *blocked -= 1,
        _ => {}
    }
}

/// The client end of TCP_RR / TCP_CRR.
#[derive(Debug, Clone)]
pub struct RrClient {
    cfg: RrClientConfig,
    conns: ConnTable<Conn>,
    opened: u32,
    established: u32,
    measuring: bool,
    stopped: bool,
    window: Option<(Instant, Option<Instant>)>,
    latency: Latency,
    /// Transactions completed over the whole run.
    total: u64,
    /// Connections with request bytes the send buffer has not taken.
    blocked: u32,
    /// TCP_CRR: loops waiting for a free port (their start instant), and whether a retry timer is set.
    waiting: Vec<(u32, Instant)>,
    port_waits: u64,
    connections_opened: u64,
}

impl RrClient {
    pub fn new(cfg: RrClientConfig) -> Self {
        assert!(cfg.request > 0 && cfg.response > 0, "requests and responses carry at least a byte");
        RrClient {
            cfg,
            conns: ConnTable::default(),
            opened: 0,
            established: 0,
            measuring: false,
            stopped: false,
            window: None,
            latency: Latency::default(),
            total: 0,
            blocked: 0,
            waiting: Vec::new(),
            port_waits: 0,
            connections_opened: 0,
        }
    }

    #[inline]
    pub fn wants_readable(&self) -> bool {
        true
    }

    #[inline]
    pub fn wants_writable(&self) -> bool {
        self.blocked > 0
    }

    fn write<S: Sockets>(&mut self, i: usize, s: &mut S) {
        flush(&mut self.conns[i], &mut self.blocked, s);
    }

    /// Starts a transaction on connection `i` whose clock started at `t0`: writes its request.
    fn request<S: Sockets>(&mut self, i: usize, t0: Instant, s: &mut S) {
        let c = &mut self.conns[i];
        c.outstanding.push_back(t0);
        let was_blocked = c.to_send > 0;
        c.to_send += self.cfg.request;
        c.to_send -= s.send(c.id, c.to_send);
        match (was_blocked, c.to_send > 0) {
            (false, true) => self.blocked += 1,
            (true, false) => self.blocked -= 1,
            _ => {}
        }
    }

    /// Opens the TCP_RR connections due by now; asks for a timer for the next one.
    fn open_due<S: Sockets>(&mut self, s: &mut S) {
        while self.opened < self.cfg.connections {
            let due = self.cfg.at + self.cfg.spacing.saturating_mul(self.opened as u64);
            if due > s.now() {
                s.set_timer(due);
                return;
            }
            let remote = self.cfg.port + (self.opened % self.cfg.ports.max(1) as u32) as u16;
            match s.connect(remote) {
                Ok(c) => {
                    self.conns.adopt(c, || Conn::new(c, self.opened));
                    self.opened += 1;
                    self.connections_opened += 1;
                }
                // Validation keeps the connections within the ports.
                Err(ConnectError::NoFreePort) => return,
            }
        }
    }

    /// TCP_CRR: loop `slot` starts a transaction on a new connection (or waits for a port).
    fn crr_open<S: Sockets>(&mut self, slot: u32, t0: Instant, s: &mut S) {
        let remote = self.cfg.port + (slot % self.cfg.ports.max(1) as u32) as u16;
        match s.connect(remote) {
            Ok(c) => {
                let i = self.conns.adopt(c, || Conn::new(c, slot));
                self.conns[i].outstanding.push_back(t0);
                self.connections_opened += 1;
            }
            Err(ConnectError::NoFreePort) => {
                if self.waiting.is_empty() {
                    s.set_timer(s.now() + self.cfg.port_retry);
                }
                self.waiting.push((slot, t0));
                self.port_waits += 1;
            }
        }
    }

    /// TCP_CRR: the loops that wait for a port try again, in order.
    fn retry_ports<S: Sockets>(&mut self, s: &mut S) {
        if self.waiting.is_empty() {
            return;
        }
        let waiting = std::mem::take(&mut self.waiting);
        let mut it = waiting.into_iter();
        for (slot, t0) in it.by_ref() {
            if self.stopped {
                break;
            }
            let remote = self.cfg.port + (slot % self.cfg.ports.max(1) as u32) as u16;
            match s.connect(remote) {
                Ok(c) => {
                    let i = self.conns.adopt(c, || Conn::new(c, slot));
                    self.conns[i].outstanding.push_back(t0);
                    self.connections_opened += 1;
                }
                Err(ConnectError::NoFreePort) => {
                    self.waiting.push((slot, t0));
                    break;
                }
            }
        }
        if self.stopped {
            self.waiting.clear();
            return;
        }
        self.waiting.extend(it);
        if !self.waiting.is_empty() {
            s.set_timer(s.now() + self.cfg.port_retry);
        }
    }

    /// Reads what connection `i` has. Most reads (one per data segment of a response) complete nothing:
    /// they take the bytes and notice a close; the rest is out of line.
    #[inline(always)]
    fn read<S: Sockets>(&mut self, i: usize, s: &mut S) {
        let id = self.conns[i].id;
        let n = s.recv(id, u64::MAX);
        let c = &mut self.conns[i];
        c.got += n;
        if c.got >= self.cfg.response || self.cfg.per_transaction {
            self.complete(i, s);
            return;
        }
        if !c.closed && s.is_eof(id) {
            c.closed = true;
            s.close(id);
        }
    }

    /// After a read on connection `i`: completes the transactions whose responses are in, starts the
    /// next ones (TCP_CRR: closes and opens the next connection), and closes after the peer's close.
    #[inline(never)]
    fn complete<S: Sockets>(&mut self, i: usize, s: &mut S) {
        let id = self.conns[i].id;
        let now = s.now();
        let resp = self.cfg.response;
        let c = &mut self.conns[i];
        let mut completed = 0;
        while c.got >= resp {
            let Some(t0) = c.outstanding.pop_front() else { break };
            c.got -= resp;
            completed += 1;
            self.total += 1;
            if self.window.is_some_and(|(start, stop)| now >= start && stop.is_none_or(|e| now < e)) {
                self.latency.record(now.saturating_since(t0));
            }
        }
        let eof = s.is_eof(id);
        if self.cfg.per_transaction {
            let c = &mut self.conns[i];
            if completed > 0 && !c.closed {
                c.closed = true;
                let slot = c.slot;
                s.close(id);
                if self.measuring && !self.stopped {
                    self.crr_open(slot, now, s);
                }
            } else if eof && !c.closed {
                c.closed = true;
                s.close(id);
            }
            return;
        }
        if self.measuring && !self.stopped {
            for _ in 0..completed {
                self.request(i, now, s);
            }
        }
        let c = &mut self.conns[i];
        if eof && !c.closed {
            c.closed = true;
            s.close(id);
        }
    }

    /// Inlined where the engine tells of data or room (per segment); the other events are out of line.
    #[inline(always)]
    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Writable(c) => {
                if let Some(i) = self.conns.slot(c) {
                    self.write(i, s);
                }
            }
            Event::Readable(c) => {
                if let Some(i) = self.conns.slot(c) {
                    self.read(i, s);
                }
            }
            _ => self.on_control(ev, s),
        }
    }

    /// The events that come once a connection or once a run: start, timers, establishment, the measurement's
    /// edges.
    #[inline(never)]
    fn on_control<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Start => {
                if self.cfg.per_transaction {
                    s.ready();
                } else {
                    self.open_due(s);
                }
            }
            Event::Timer => {
                if self.cfg.per_transaction {
                    self.retry_ports(s);
                } else {
                    self.open_due(s);
                }
            }
            Event::Established(c) => {
                if self.cfg.per_transaction {
                    if let Some(i) = self.conns.slot(c) {
                        let t0 = self.conns[i].outstanding.pop_back().expect("a CRR connection has a transaction");
                        self.request(i, t0, s);
                    }
                    return;
                }
                self.established += 1;
                if self.established == self.cfg.connections {
                    s.ready();
                }
            }
            Event::Writable(_) | Event::Readable(_) => unreachable!("on_event handles data and room"),
            Event::MeasureStart => {
                let now = s.now();
                self.measuring = true;
                self.window = Some((now, None));
                if self.cfg.per_transaction {
                    for slot in 0..self.cfg.connections {
                        self.crr_open(slot, now, s);
                    }
                } else {
                    for i in 0..self.conns.len() {
                        for _ in 0..=self.cfg.burst {
                            self.request(i, now, s);
                        }
                    }
                }
            }
            Event::MeasureStop => {
                let now = s.now();
                if let Some((start, None)) = self.window {
                    self.window = Some((start, Some(now)));
                }
                self.stopped = true;
                self.waiting.clear();
                if !self.cfg.per_transaction {
                    for c in self.conns.iter_mut() {
                        if !c.closed {
                            c.closed = true;
                            s.close(c.id);
                        }
                    }
                }
            }
        }
    }

    pub fn report(&self) -> RrReport {
        let elapsed = match self.window {
            Some((a, Some(b))) => b.saturating_since(a),
            _ => Duration::ZERO,
        };
        RrReport {
            client: true,
            transactions: self.latency.count(),
            total_transactions: self.total,
            elapsed,
            latency: self.latency.summary(),
            connections_opened: self.connections_opened,
            port_waits: self.port_waits,
        }
    }
}

/// The server end: answers every whole request with a response; closes after the client's close.
#[derive(Debug, Clone)]
pub struct RrServer {
    cfg: RrServerConfig,
    conns: ConnTable<Conn>,
    established: u32,
    blocked: u32,
    total: u64,
}

impl RrServer {
    pub fn new(cfg: RrServerConfig) -> Self {
        assert!(cfg.request > 0 && cfg.response > 0, "requests and responses carry at least a byte");
        RrServer { cfg, conns: ConnTable::default(), established: 0, blocked: 0, total: 0 }
    }

    #[inline]
    pub fn wants_readable(&self) -> bool {
        true
    }

    #[inline]
    pub fn wants_writable(&self) -> bool {
        self.blocked > 0
    }

    fn write<S: Sockets>(&mut self, i: usize, s: &mut S) {
        flush(&mut self.conns[i], &mut self.blocked, s);
    }

    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Start => {
                for p in 0..self.cfg.ports.max(1) {
                    s.listen(self.cfg.port + p);
                }
                if self.cfg.connections == 0 {
                    s.ready();
                }
            }
            Event::Established(c) => {
                self.conns.adopt(c, || Conn::new(c, 0));
                self.established += 1;
                if self.established == self.cfg.connections {
                    s.ready();
                }
            }
            Event::Readable(c) => {
                let Some(i) = self.conns.slot(c) else { return };
                let n = s.recv(c, u64::MAX);
                let conn = &mut self.conns[i];
                conn.got += n;
                let k = conn.got / self.cfg.request;
                conn.got %= self.cfg.request;
                self.total += k;
                // Undo the count of a connection still blocked: `flush` counts it again.
                if conn.to_send > 0 {
                    self.blocked -= 1;
                }
                conn.to_send += k * self.cfg.response;
                if conn.to_send > 0 {
                    conn.to_send -= s.send(c, conn.to_send);
                    if conn.to_send > 0 {
                        self.blocked += 1;
                    }
                }
                let conn = &mut self.conns[i];
                if !conn.closed && s.is_eof(c) {
                    conn.closed = true;
                    s.close(c);
                }
            }
            Event::Writable(c) => {
                if let Some(i) = self.conns.slot(c) {
                    self.write(i, s);
                }
            }
            Event::Timer | Event::MeasureStart | Event::MeasureStop => {}
        }
    }

    pub fn report(&self) -> RrReport {
        RrReport {
            client: false,
            transactions: 0,
            total_transactions: self.total,
            elapsed: Duration::ZERO,
            latency: LatencySummary::default(),
            connections_opened: 0,
            port_waits: 0,
        }
    }
}

/// A request/response end's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RrReport {
    /// The client end (which measures); a server end counts requests answered only.
    pub client: bool,
    /// Transactions whose response completed in the measurement window.
    pub transactions: u64,
    /// Transactions completed (client) or requests answered (server) over the whole run.
    pub total_transactions: u64,
    pub elapsed: Duration,
    /// Latency of the transactions of the window.
    pub latency: LatencySummary,
    /// Connections the client opened.
    pub connections_opened: u64,
    /// Times a TCP_CRR loop found no free ephemeral port and had to wait.
    pub port_waits: u64,
}
