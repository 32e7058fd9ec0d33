//! The bulk transfer of TCP_STREAM (client sends) and TCP_MAERTS (server sends). netperf's `-m` is the
//! send call size (`message`); the socket buffers (`-s`/`-S`) are the transport's.

use tcplab_units::{Duration, Instant};

use crate::conns::ConnTable;
use crate::{ConnId, Event, Sockets, StreamMeter, StreamReport};

/// How the application gets its connections.
#[derive(Debug, Clone, PartialEq)]
pub enum Opening {
    /// Opens `connections`, the first at `at` and the next ones `spacing` apart (a NIC at line rate puts one
    /// SYN frame after another), spread round-robin over the peer's ports `port .. port + ports` (one
    /// client address has only so many ephemeral ports per destination).
    Connect { connections: u32, port: u16, ports: u16, at: Instant, spacing: Duration },
    /// Listens on `port .. port + ports` and expects `connections`.
    Accept { port: u16, ports: u16, connections: u32 },
}

/// Which way the application moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Writes `message`-byte calls back to back, as netperf's send loop with a blocking socket (a call that
    /// does not fit waits for room), from the start of the measurement until its end; then closes.
    Send { message: u64 },
    /// Reads everything as it arrives; closes after the peer's close.
    Receive,
    /// Writes `calls` calls of `message` bytes from the start of the measurement, then closes (each
    /// connection). A message transport (RDP) makes each call one message.
    SendCalls { message: u64, calls: u64 },
    /// As `Receive`, and once every connection it expects has reached the end of its data (the peer closed
    /// and everything was read), ends the measurement ([`Sockets::end_measurement`]): the partner of
    /// `SendCalls`, whose test lasts as long as the transfer.
    ReceiveToEof,
}

impl Role {
    /// The application reads (`Receive`, `ReceiveToEof`).
    pub fn receives(self) -> bool {
        matches!(self, Role::Receive | Role::ReceiveToEof)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StreamConfig {
    pub opening: Opening,
    pub role: Role,
    /// The measurement waits for this application's connections (netperf's). An application that does not
    /// gate it (background traffic) still counts its window.
    pub gates_measurement: bool,
}

/// One connection's progress.
#[derive(Debug, Clone)]
struct Conn {
    id: ConnId,
    /// Bytes of the current send call not yet taken.
    left_in_call: u64,
    /// Complete calls (`SendCalls`).
    calls_done: u64,
    closed: bool,
}

/// A bulk-transfer end (see [`Role`]).
#[derive(Debug, Clone)]
pub struct Stream {
    cfg: StreamConfig,
    conns: ConnTable<Conn>,
    /// The role reads (else it writes): asked at every segment's arrival, so kept apart from the role.
    reads: bool,
    opened: u32,
    established: u32,
    measuring: bool,
    /// Senders: the connections start writing this far apart after the measurement opens (0: together),
    /// in the order they were opened; `writing` of them have started.
    write_spread: Duration,
    writing: usize,
    measure_start: Instant,
    stopped: bool,
    meter: StreamMeter,
    calls: u64,
}

impl Stream {
    pub fn new(cfg: StreamConfig) -> Self {
        if let Role::Send { message } | Role::SendCalls { message, .. } = cfg.role {
            assert!(message > 0, "a send call of zero bytes");
        }
        Stream {
            reads: cfg.role.receives(),
            cfg,
            conns: ConnTable::default(),
            opened: 0,
            established: 0,
            measuring: false,
            write_spread: Duration::ZERO,
            writing: 0,
            measure_start: Instant::ZERO,
            stopped: false,
            meter: StreamMeter::default(),
            calls: 0,
        }
    }

    /// A sender whose connections start writing `spread` apart once the measurement opens, so that many
    /// flows do not send their initial windows at the same instant (`test.start_spread`).
    pub fn with_write_spread(mut self, spread: Duration) -> Self {
        self.write_spread = spread;
        self
    }

    /// Lets every connection whose turn has come start writing; asks for a timer for the next one.
    fn start_writers<S: Sockets>(&mut self, s: &mut S) {
        while self.writing < self.conns.len() {
            let due = self.measure_start + self.write_spread.saturating_mul(self.writing as u64);
            if due > s.now() {
                s.set_timer(due);
                return;
            }
            self.writing += 1;
            self.write(self.writing - 1, s);
        }
    }

    fn expected(&self) -> u32 {
        match self.cfg.opening {
            Opening::Connect { connections, .. } | Opening::Accept { connections, .. } => connections,
        }
    }

    fn adopt(&mut self, c: ConnId) -> usize {
        self.conns.adopt(c, || Conn { id: c, left_in_call: 0, calls_done: 0, closed: false })
    }

    /// Opens every connection due by now; asks for a timer for the next one.
    fn open_due<S: Sockets>(&mut self, s: &mut S) {
        let Opening::Connect { connections, port, ports, at, spacing } = self.cfg.opening else { return };
        while self.opened < connections {
            let due = at + spacing.saturating_mul(self.opened as u64);
            if due > s.now() {
                s.set_timer(due);
                return;
            }
            let remote = port + (self.opened % ports.max(1) as u32) as u16;
            match s.connect(remote) {
                Ok(c) => {
                    self.adopt(c);
                    self.opened += 1;
                }
                // A bulk test opens few connections; more than the ports allow is refused by validation.
                Err(_) => return,
            }
        }
    }

    #[inline(always)]
    fn write<S: Sockets>(&mut self, i: usize, s: &mut S) {
        let (message, limit) = match self.cfg.role {
            Role::Send { message } => (message, None),
            Role::SendCalls { message, calls } => (message, Some(calls)),
            Role::Receive | Role::ReceiveToEof => return,
        };
        if !self.measuring || self.stopped || i >= self.writing {
            return;
        }
        let connections = self.conns.len() as u64;
        let conn = &mut self.conns[i];
        if conn.closed {
            return;
        }
        loop {
            if conn.left_in_call == 0 {
                if let Some(calls) = limit {
                    // Calls are counted per application; with several connections each gets its share.
                    let share = calls / connections + u64::from((i as u64) < calls % connections);
                    if conn.calls_done >= share {
                        conn.closed = true;
                        s.close(conn.id);
                        return;
                    }
                }
                conn.left_in_call = message;
            }
            let n = s.send(conn.id, conn.left_in_call);
            conn.left_in_call -= n;
            self.meter.add(n);
            if conn.left_in_call == 0 {
                self.calls += 1;
                if limit.is_some() {
                    conn.calls_done += 1;
                }
            }
            // A call the send buffer took only part of (or none of) would block: the buffer is full.
            if conn.left_in_call > 0 {
                break;
            }
        }
    }

    #[inline(always)]
    fn read<S: Sockets>(&mut self, i: usize, s: &mut S) {
        let conn = &mut self.conns[i];
        let (n, eof) = s.recv_to_eof(conn.id, u64::MAX);
        self.meter.add(n);
        if !conn.closed && eof {
            conn.closed = true;
            s.close(conn.id);
            if self.cfg.role == Role::ReceiveToEof
                && self.measuring
                && self.conns.len() as u32 == self.expected()
                && self.conns.iter().all(|c| c.closed)
            {
                s.end_measurement();
            }
        }
    }

    #[inline]
    pub fn wants_readable(&self) -> bool {
        self.reads
    }

    #[inline]
    pub fn wants_writable(&self) -> bool {
        !self.reads && self.measuring && !self.stopped
    }

    #[inline(always)]
    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Start => {
                if let Opening::Accept { port, ports, .. } = self.cfg.opening {
                    for p in 0..ports.max(1) {
                        s.listen(port + p);
                    }
                }
                if !self.cfg.gates_measurement {
                    s.ready();
                }
                self.open_due(s);
            }
            Event::Timer => {
                self.open_due(s);
                if self.measuring && !self.stopped {
                    self.start_writers(s);
                }
            }
            Event::Established(c) => {
                self.adopt(c);
                self.established += 1;
                if self.cfg.gates_measurement && self.established == self.expected() {
                    s.ready();
                }
                if self.measuring && !self.stopped {
                    self.start_writers(s);
                }
            }
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
            Event::MeasureStart => {
                self.measuring = true;
                self.measure_start = s.now();
                self.meter.start(s.now());
                self.start_writers(s);
            }
            Event::MeasureStop => {
                self.meter.stop(s.now());
                if let Role::Send { .. } | Role::SendCalls { .. } = self.cfg.role {
                    if !self.stopped {
                        self.stopped = true;
                        for conn in self.conns.iter_mut() {
                            if !conn.closed {
                                conn.closed = true;
                                s.close(conn.id);
                            }
                        }
                    }
                }
            }
        }
    }

    pub fn report(&self) -> StreamReport {
        let (window_bytes, elapsed) = self.meter.window();
        StreamReport {
            role: self.cfg.role,
            window_bytes,
            elapsed,
            total_bytes: self.meter.bytes,
            calls: self.calls,
            connections: self.conns.len() as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host with sockets of a fixed-size buffer that a test fills and drains by hand.
    #[derive(Default)]
    struct Fake {
        now: Instant,
        room: u64,
        readable: u64,
        eof: bool,
        closed: Vec<ConnId>,
        connected: Vec<u16>,
        listening: Vec<u16>,
        timer: Option<Instant>,
        ready: u32,
        recvs: u32,
    }
    impl Sockets for Fake {
        fn now(&self) -> Instant {
            self.now
        }
        fn connect(&mut self, remote_port: u16) -> Result<ConnId, crate::ConnectError> {
            self.connected.push(remote_port);
            Ok(ConnId(self.connected.len() as u32 - 1))
        }
        fn listen(&mut self, port: u16) {
            self.listening.push(port);
        }
        fn send(&mut self, _: ConnId, b: u64) -> u64 {
            let n = b.min(self.room);
            self.room -= n;
            n
        }
        fn recv(&mut self, _: ConnId, max: u64) -> u64 {
            self.recvs += 1;
            let n = self.readable.min(max);
            self.readable -= n;
            n
        }
        fn close(&mut self, c: ConnId) {
            self.closed.push(c);
        }
        fn is_eof(&self, _: ConnId) -> bool {
            self.eof
        }
        fn has_input(&self, _: ConnId) -> bool {
            self.readable > 0 || self.eof
        }
        fn set_timer(&mut self, at: Instant) {
            self.timer = Some(at);
        }
        fn ready(&mut self) {
            self.ready += 1;
        }
        fn ports(&self, c: ConnId) -> (u16, u16) {
            (40000 + c.0 as u16, 5001)
        }
    }

    fn sender(connections: u32, message: u64) -> Stream {
        Stream::new(StreamConfig {
            opening: Opening::Connect {
                connections,
                port: 5001,
                ports: 2,
                at: Instant::ZERO,
                spacing: Duration::from_micros(10),
            },
            role: Role::Send { message },
            gates_measurement: true,
        })
    }

    #[test]
    fn connections_open_spaced_and_spread_over_ports() {
        let mut s = sender(3, 1000);
        let mut h = Fake::default();
        s.on_event(Event::Start, &mut h);
        assert_eq!(h.connected, vec![5001]);
        assert_eq!(h.timer, Some(Instant::ZERO + Duration::from_micros(10)));
        h.now = Instant::ZERO + Duration::from_micros(25);
        s.on_event(Event::Timer, &mut h);
        assert_eq!(h.connected, vec![5001, 5002, 5001], "two were due by 25 us, round-robin over two ports");
        for c in 0..3 {
            assert_eq!(h.ready, 0);
            s.on_event(Event::Established(ConnId(c)), &mut h);
        }
        assert_eq!(h.ready, 1, "ready once every connection is up");
    }

    #[test]
    fn sender_writes_only_while_measuring_in_message_calls_and_resumes_mid_call() {
        let mut s = sender(1, 1000);
        let mut h = Fake { room: 2500, ..Fake::default() };
        s.on_event(Event::Start, &mut h);
        s.on_event(Event::Established(ConnId(0)), &mut h);
        s.on_event(Event::Writable(ConnId(0)), &mut h);
        assert_eq!(h.room, 2500, "no writes before the measurement");
        s.on_event(Event::MeasureStart, &mut h);
        assert_eq!((s.meter.bytes, s.calls), (2500, 2));
        h.room = 700;
        s.on_event(Event::Writable(ConnId(0)), &mut h);
        assert_eq!((s.meter.bytes, s.calls), (3200, 3)); // the half call completes, then 200 of the next
        h.now = Instant::ZERO + Duration::from_secs(2);
        s.on_event(Event::MeasureStop, &mut h);
        assert_eq!(h.closed, vec![ConnId(0)]);
        h.room = 10_000;
        s.on_event(Event::Writable(ConnId(0)), &mut h);
        assert_eq!(s.meter.bytes, 3200, "no writes after the end");
        let r = s.report();
        assert_eq!((r.window_bytes, r.elapsed), (3200, Duration::from_secs(2)));
    }

    #[test]
    fn receiver_listens_reads_all_closes_on_eof_and_counts_only_the_window() {
        let mut r = Stream::new(StreamConfig {
            opening: Opening::Accept { port: 5001, ports: 1, connections: 1 },
            role: Role::Receive,
            gates_measurement: true,
        });
        let mut h = Fake { readable: 5000, ..Fake::default() };
        r.on_event(Event::Start, &mut h);
        assert_eq!(h.listening, vec![5001]);
        r.on_event(Event::Established(ConnId(7)), &mut h);
        assert_eq!(h.ready, 1);
        r.on_event(Event::Readable(ConnId(7)), &mut h);
        r.on_event(Event::MeasureStart, &mut h);
        h.readable = 3000;
        r.on_event(Event::Readable(ConnId(7)), &mut h);
        r.on_event(Event::MeasureStop, &mut h);
        h.readable = 100;
        h.eof = true;
        r.on_event(Event::Readable(ConnId(7)), &mut h);
        assert_eq!(h.closed, vec![ConnId(7)]);
        let rep = r.report();
        assert_eq!((rep.window_bytes, rep.total_bytes), (3000, 8100));
    }

    #[test]
    fn on_io_reads_only_input_and_writes_only_while_measuring() {
        let mut app = crate::App::Stream(Stream::new(StreamConfig {
            opening: Opening::Accept { port: 5001, ports: 1, connections: 1 },
            role: Role::Receive,
            gates_measurement: true,
        }));
        let mut h = Fake::default();
        app.on_event(Event::Established(ConnId(0)), &mut h);
        app.on_io(ConnId(0), &mut h);
        assert_eq!(h.recvs, 0, "no data and no close: no read");
        h.readable = 1000;
        app.on_io(ConnId(0), &mut h);
        assert_eq!((h.recvs, h.readable), (1, 0));
        h.eof = true;
        app.on_io(ConnId(0), &mut h);
        assert_eq!(h.closed, vec![ConnId(0)], "the peer's close is input");

        let mut app = crate::App::Stream(sender(1, 1000));
        let mut h = Fake { room: 1500, readable: 100, ..Fake::default() };
        app.on_event(Event::Start, &mut h);
        app.on_event(Event::Established(ConnId(0)), &mut h);
        app.on_io(ConnId(0), &mut h);
        assert_eq!((h.room, h.recvs), (1500, 0), "a writer reads nothing, and writes only once measuring");
        app.on_event(Event::MeasureStart, &mut h);
        assert_eq!(h.room, 0);
        h.room = 600;
        app.on_io(ConnId(0), &mut h);
        assert_eq!((h.room, h.recvs), (0, 0), "the room is taken: 500 to end the call, 100 of the next");
    }
}
