//! The small-message stream (`tcp_msg`): the client writes messages of `message` bytes, one send call each,
//! either back to back or one every `interval`; the server reads everything as it arrives and times every
//! whole message.
//!
//! **The writer.** Each message is its own send call, and the stack transmits what it may at the end of
//! the call (Linux `tcp_sendmsg` ends in `tcp_push`; [`Sockets::push`]). Bytes then gather into larger
//! segments only where the stack holds them for its own reasons — Nagle, cwnd, the peer's window — as in
//! Linux, where the next write is appended to the unsent tail segment. A writer faster than the wire must
//! also be held somewhere: the back-to-back writer waits while the host's interface queue has no room for
//! its connection (it blocks on the interface; [`Sockets::push`] says when), so with nothing else holding
//! data every message leaves as a segment of its own at the interface's pace. (Linux reaches the same
//! state by another road: its send buffer charges every queued segment its whole buffer (`truesize`, about
//! 2 KB even for 1 byte), so a 1-byte writer blocks on memory after some tens of segments, each its own.
//! tcplab's send buffer counts payload bytes only.)
//!
//! **The figures** (receiver side, for the messages whose last byte is read during the measurement):
//! *time per message*, the gaps between successive deliveries of whole messages to the receiving
//! application (a read that completes k messages gives one gap and k − 1 gaps of zero; the first gap runs
//! from the start of the measurement, so the mean is the time to the last delivery over the count, the
//! figure classic reports quote); and the *one-way latency* of each message, from the send call that
//! starts it to the read of its last byte. The write instants travel in a [`MsgBook`] the writer and the
//! reader share, the simulator's stand-in for a timestamp carried in the message (one clock serves both
//! hosts).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tcplab_units::{Duration, Instant};

use crate::conns::ConnTable;
use crate::stats::{Latency, LatencySummary};
use crate::{ConnId, Event, Sockets};

/// The write instants of the messages in flight on every connection of a `tcp_msg` test, keyed by the
/// connection's (client port, server port): the writer stamps each message as its send call starts, the
/// reader takes the stamps in order as messages complete (TCP delivers in order). Consecutive messages
/// written at one instant share one entry, so the book holds at most one entry per write event in flight.
///
/// Clones share the book: the writer and the reader of one run hold clones of one book (the simulator
/// clones a spec's applications for each run, so the runs of one `SimSpec` must not overlap in time; the
/// lab builds a spec, and a book, per run). A connection's entry is reset when its writer opens it, so a
/// spec run again starts clean.
#[derive(Debug, Clone, Default)]
pub struct MsgBook(Arc<Mutex<Stamps>>);

/// Per connection (client port, server port): runs of (messages, the instant their send calls started).
type Stamps = HashMap<(u16, u16), VecDeque<(u64, Instant)>>;

impl MsgBook {
    fn with<R>(&self, f: impl FnOnce(&mut Stamps) -> R) -> R {
        // A poisoned lock means another run panicked while holding it; the data is still consistent
        // (every update is one push or pop), so go on with it.
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// The writer opened connection `key`: its stamps start empty.
    fn open(&self, key: (u16, u16)) {
        self.with(|m| m.insert(key, VecDeque::new()));
    }

    /// A message's send call starts at `at` on `key`.
    fn stamp(&self, key: (u16, u16), at: Instant) {
        self.with(|m| {
            let q = m.entry(key).or_default();
            match q.back_mut() {
                Some((n, t)) if *t == at => *n += 1,
                _ => q.push_back((1, at)),
            }
        });
    }

    /// The next `n` messages of `key` completed: calls `f(count, write instant)` for each run of them.
    /// Messages without a stamp (none should be) are skipped.
    fn take(&self, key: (u16, u16), mut n: u64, mut f: impl FnMut(u64, Instant)) {
        self.with(|m| {
            let Some(q) = m.get_mut(&key) else { return };
            while n > 0 {
                let Some((k, t)) = q.front_mut() else { return };
                let used = (*k).min(n);
                f(used, *t);
                *k -= used;
                n -= used;
                if *k == 0 {
                    q.pop_front();
                }
            }
        });
    }
}

/// The writer's configuration (the client).
#[derive(Debug, Clone)]
pub struct MsgSenderConfig {
    /// Connections; the first opens at `at`, the next ones `spacing` apart, round-robin over the server's
    /// ports `port .. port + ports`.
    pub connections: u32,
    pub port: u16,
    pub ports: u16,
    pub at: Instant,
    pub spacing: Duration,
    /// Bytes per message (one send call each).
    pub message: u64,
    /// Messages to write in all (shared out over the connections: the first `count % connections` get one
    /// more), after which each connection closes; `None`: until the end of the measurement.
    pub count: Option<u64>,
    /// Paced: each connection writes one message every `interval` from the start of the measurement;
    /// `None`: back to back.
    pub interval: Option<Duration>,
    pub book: MsgBook,
}

/// The reader's configuration (the server).
#[derive(Debug, Clone)]
pub struct MsgReceiverConfig {
    pub port: u16,
    pub ports: u16,
    /// Connections to wait for before the measurement.
    pub connections: u32,
    pub message: u64,
    /// With a count: the measurement ends when this many messages have been read.
    pub count: Option<u64>,
    pub book: MsgBook,
}

/// One connection of the writer.
#[derive(Debug, Clone)]
struct Out {
    id: ConnId,
    key: (u16, u16),
    /// Bytes of the message being written that the send buffer has not taken yet.
    left: u64,
    /// Messages started.
    started: u64,
    /// The most messages this connection writes.
    share: u64,
    /// Paced: messages due and not started.
    due: u64,
    closed: bool,
}

/// The writer of `tcp_msg`.
#[derive(Debug, Clone)]
pub struct MsgSender {
    cfg: MsgSenderConfig,
    conns: ConnTable<Out>,
    opened: u32,
    established: u32,
    measuring: bool,
    stopped: bool,
    /// Paced: when the next round of messages is due.
    next_due: Instant,
    /// Messages started over the run (all connections).
    written: u64,
}

impl MsgSender {
    pub fn new(cfg: MsgSenderConfig) -> Self {
        assert!(cfg.message > 0, "a message carries at least a byte");
        MsgSender {
            cfg,
            conns: ConnTable::default(),
            opened: 0,
            established: 0,
            measuring: false,
            stopped: false,
            next_due: Instant::ZERO,
            written: 0,
        }
    }

    #[inline]
    pub fn wants_readable(&self) -> bool {
        false
    }

    #[inline]
    pub fn wants_writable(&self) -> bool {
        self.measuring && !self.stopped
    }

    fn open_due<S: Sockets>(&mut self, s: &mut S) {
        while self.opened < self.cfg.connections {
            let due = self.cfg.at + self.cfg.spacing.saturating_mul(self.opened as u64);
            if due > s.now() {
                s.set_timer(due);
                return;
            }
            let remote = self.cfg.port + (self.opened % self.cfg.ports.max(1) as u32) as u16;
            let Ok(c) = s.connect(remote) else { return }; // validation keeps connections within the ports
            let n = self.cfg.connections as u64;
            let k = self.opened as u64;
            let share = self.cfg.count.map_or(u64::MAX, |count| count / n + u64::from(k < count % n));
            self.conns.adopt(c, || Out { id: c, key: (0, 0), left: 0, started: 0, share, due: 0, closed: false });
            self.opened += 1;
        }
    }

    /// Writes on connection `i` what is due, one message per send call with a push after each, until the
    /// send buffer is full, the interface has no room, or nothing is due.
    fn write<S: Sockets>(&mut self, i: usize, s: &mut S) {
        if !self.measuring || self.stopped || self.conns[i].closed {
            return;
        }
        let paced = self.cfg.interval.is_some();
        loop {
            let c = &mut self.conns[i];
            if c.left > 0 {
                c.left -= s.send(c.id, c.left);
                if c.left > 0 {
                    return; // the send buffer is full: Writable follows when it has room
                }
            }
            if c.started >= c.share {
                c.closed = true;
                s.close(c.id);
                return;
            }
            if paced && c.due == 0 {
                s.push(c.id);
                return;
            }
            // The previous message goes out now if it may; the next one waits while the interface is full.
            if s.push(c.id) {
                return;
            }
            let now = s.now();
            self.cfg.book.stamp(c.key, now);
            c.started += 1;
            c.due = c.due.saturating_sub(1);
            c.left = self.cfg.message;
            self.written += 1;
        }
    }

    /// Paced: the rounds due by now; asks for a timer for the next one.
    fn pace<S: Sockets>(&mut self, s: &mut S) {
        let Some(interval) = self.cfg.interval else { return };
        let now = s.now();
        while self.next_due <= now {
            for c in self.conns.iter_mut() {
                if c.started + c.due < c.share {
                    c.due += 1;
                }
            }
            self.next_due += interval;
        }
        if self.conns.iter().any(|c| !c.closed && c.started + c.due < c.share) {
            s.set_timer(self.next_due);
        }
        for i in 0..self.conns.len() {
            self.write(i, s);
        }
    }

    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Start => self.open_due(s),
            Event::Timer => {
                self.open_due(s);
                if self.measuring && !self.stopped {
                    self.pace(s);
                }
            }
            Event::Established(c) => {
                if let Some(i) = self.conns.slot(c) {
                    let key = s.ports(c);
                    self.conns[i].key = key;
                    self.cfg.book.open(key);
                }
                self.established += 1;
                if self.established == self.cfg.connections {
                    s.ready();
                }
            }
            Event::Writable(c) => {
                if let Some(i) = self.conns.slot(c) {
                    self.write(i, s);
                }
            }
            Event::Readable(_) => {}
            Event::MeasureStart => {
                self.measuring = true;
                if self.cfg.interval.is_some() {
                    self.next_due = s.now();
                    self.pace(s);
                } else {
                    for i in 0..self.conns.len() {
                        self.write(i, s);
                    }
                }
            }
            Event::MeasureStop => {
                self.stopped = true;
                for c in self.conns.iter_mut() {
                    if !c.closed {
                        c.closed = true;
                        s.close(c.id);
                    }
                }
            }
        }
    }

    pub fn report(&self) -> MsgReport {
        MsgReport {
            receiver: false,
            messages: 0,
            total_messages: self.written,
            window_bytes: 0,
            elapsed: Duration::ZERO,
            time_per_message: LatencySummary::default(),
            latency: LatencySummary::default(),
            connections: self.conns.len() as u32,
        }
    }
}

/// One connection of the reader.
#[derive(Debug, Clone)]
struct In {
    id: ConnId,
    key: (u16, u16),
    /// Bytes read over the run.
    got: u64,
    /// Whole messages read over the run.
    msgs: u64,
    closed: bool,
}

/// The reader of `tcp_msg`: reads everything as it arrives, times every whole message.
#[derive(Debug, Clone)]
pub struct MsgReceiver {
    cfg: MsgReceiverConfig,
    conns: ConnTable<In>,
    measuring: bool,
    stopped: bool,
    window: (Instant, Instant),
    /// The last delivery of a whole message in the window (the start of the window before the first).
    last: Instant,
    gaps: Latency,
    latency: Latency,
    messages: u64,
    window_bytes: u64,
    total_messages: u64,
}

impl MsgReceiver {
    pub fn new(cfg: MsgReceiverConfig) -> Self {
        assert!(cfg.message > 0, "a message carries at least a byte");
        MsgReceiver {
            cfg,
            conns: ConnTable::default(),
            measuring: false,
            stopped: false,
            window: (Instant::ZERO, Instant::ZERO),
            last: Instant::ZERO,
            gaps: Latency::default(),
            latency: Latency::default(),
            messages: 0,
            window_bytes: 0,
            total_messages: 0,
        }
    }

    #[inline]
    pub fn wants_readable(&self) -> bool {
        true
    }

    #[inline]
    pub fn wants_writable(&self) -> bool {
        false
    }

    fn read<S: Sockets>(&mut self, i: usize, s: &mut S) {
        let id = self.conns[i].id;
        let n = s.recv(id, u64::MAX);
        let now = s.now();
        let in_window = self.measuring && !self.stopped;
        let c = &mut self.conns[i];
        c.got += n;
        let whole = c.got / self.cfg.message;
        let done = whole - c.msgs;
        c.msgs = whole;
        self.total_messages += done;
        if in_window {
            self.window_bytes += n;
        }
        if done > 0 {
            let key = c.key;
            if in_window {
                self.messages += done;
                self.gaps.record(now.saturating_since(self.last));
                self.gaps.record_n(Duration::ZERO, done - 1);
                self.last = now;
                let latency = &mut self.latency;
                self.cfg.book.take(key, done, |k, t| latency.record_n(now.saturating_since(t), k));
            } else {
                self.cfg.book.take(key, done, |_, _| {});
            }
            if in_window && self.cfg.count.is_some_and(|count| self.messages >= count) {
                s.end_measurement();
            }
        }
        let c = &mut self.conns[i];
        if !c.closed && s.is_eof(id) {
            c.closed = true;
            s.close(id);
        }
    }

    pub fn on_event<S: Sockets>(&mut self, ev: Event, s: &mut S) {
        match ev {
            Event::Start => {
                for p in 0..self.cfg.ports.max(1) {
                    s.listen(self.cfg.port + p);
                }
            }
            Event::Established(c) => {
                let (local, remote) = s.ports(c);
                self.conns.adopt(c, || In { id: c, key: (remote, local), got: 0, msgs: 0, closed: false });
                if self.conns.len() as u32 == self.cfg.connections {
                    s.ready();
                }
            }
            Event::Readable(c) => {
                if let Some(i) = self.conns.slot(c) {
                    self.read(i, s);
                }
            }
            Event::MeasureStart => {
                self.measuring = true;
                self.window.0 = s.now();
                self.last = s.now();
            }
            Event::MeasureStop => {
                if self.measuring && !self.stopped {
                    self.window.1 = s.now();
                }
                self.stopped = true;
            }
            Event::Writable(_) | Event::Timer => {}
        }
    }

    pub fn report(&self) -> MsgReport {
        MsgReport {
            receiver: true,
            messages: self.messages,
            total_messages: self.total_messages,
            window_bytes: self.window_bytes,
            elapsed: if self.stopped { self.window.1.saturating_since(self.window.0) } else { Duration::ZERO },
            time_per_message: self.gaps.summary(),
            latency: self.latency.summary(),
            connections: self.conns.len() as u32,
        }
    }
}

/// A `tcp_msg` end's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct MsgReport {
    /// The reader (which measures); the writer counts the messages it started only.
    pub receiver: bool,
    /// Whole messages read during the measurement.
    pub messages: u64,
    /// Messages read (reader) or started (writer) over the whole run.
    pub total_messages: u64,
    /// Payload bytes read during the measurement.
    pub window_bytes: u64,
    /// Length of the measurement window.
    pub elapsed: Duration,
    /// The gaps between successive deliveries of whole messages in the window.
    pub time_per_message: LatencySummary,
    /// One-way latency of the messages delivered in the window: start of the send call to the read of the
    /// last byte.
    pub latency: LatencySummary,
    pub connections: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two hosts' sockets by hand: sends always fit, the interface never fills, reads return what the test
    /// puts there.
    #[derive(Default)]
    struct Fake {
        now: Instant,
        readable: u64,
        ports: Vec<(u16, u16)>,
        pushes: u32,
        timers: Vec<Instant>,
        ended: bool,
    }
    impl Sockets for Fake {
        fn now(&self) -> Instant {
            self.now
        }
        fn connect(&mut self, remote_port: u16) -> Result<ConnId, crate::ConnectError> {
            self.ports.push((40000 + self.ports.len() as u16, remote_port));
            Ok(ConnId(self.ports.len() as u32 - 1))
        }
        fn listen(&mut self, _: u16) {}
        fn send(&mut self, _: ConnId, b: u64) -> u64 {
            b
        }
        fn push(&mut self, _: ConnId) -> bool {
            self.pushes += 1;
            false
        }
        fn recv(&mut self, _: ConnId, max: u64) -> u64 {
            std::mem::take(&mut self.readable).min(max)
        }
        fn close(&mut self, _: ConnId) {}
        fn is_eof(&self, _: ConnId) -> bool {
            false
        }
        fn set_timer(&mut self, at: Instant) {
            self.timers.push(at);
        }
        fn ready(&mut self) {}
        fn end_measurement(&mut self) {
            self.ended = true;
        }
        fn ports(&self, c: ConnId) -> (u16, u16) {
            self.ports[c.0 as usize]
        }
    }

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(n)
    }

    #[test]
    fn each_reader_takes_its_own_writers_stamps_and_gaps_sum_to_the_last_delivery() {
        let book = MsgBook::default();
        let mut w = MsgSender::new(MsgSenderConfig {
            connections: 2,
            port: 5001,
            ports: 1,
            at: Instant::ZERO,
            spacing: Duration::ZERO,
            message: 10,
            count: Some(5),
            interval: Some(Duration::from_micros(100)),
            book: book.clone(),
        });
        let mut r = MsgReceiver::new(MsgReceiverConfig {
            port: 5001,
            ports: 1,
            connections: 2,
            message: 10,
            count: Some(5),
            book,
        });
        let mut client = Fake::default();
        w.on_event(Event::Start, &mut client);
        w.on_event(Event::Established(ConnId(0)), &mut client);
        w.on_event(Event::Established(ConnId(1)), &mut client);
        // The server's ends are numbered the other way round: its connection 0 is the client's 1.
        let mut server = Fake { ports: vec![(5001, 40001), (5001, 40000)], ..Fake::default() };
        r.on_event(Event::Start, &mut server);
        r.on_event(Event::Established(ConnId(0)), &mut server);
        r.on_event(Event::Established(ConnId(1)), &mut server);
        // Paced at 100 us: both connections write at 0, 100 and (the first only: 3 of 5) 200 us.
        for t in [0, 100, 200] {
            client.now = us(t);
            server.now = us(t);
            let ev = if t == 0 { Event::MeasureStart } else { Event::Timer };
            w.on_event(ev, &mut client);
            if t == 0 {
                r.on_event(Event::MeasureStart, &mut server);
            }
        }
        // A push before each message (5), and one for the last message of a round that did not close its
        // connection (rounds 0 and 100 us of connection 0, round 0 of connection 1; a close sends anyway).
        assert_eq!(client.pushes, 5 + 3);
        assert_eq!(w.report().total_messages, 5);
        // The client's connection 0 (the server's 1) delivers its three messages at 250 us in one read:
        // latencies 250, 150, 50.
        server.now = us(250);
        server.readable = 30;
        r.on_event(Event::Readable(ConnId(1)), &mut server);
        // The client's connection 1 (the server's 0): 15 bytes at 300 us (one message and a half), the
        // rest at 320 us: latencies 300 and 220.
        server.now = us(300);
        server.readable = 15;
        r.on_event(Event::Readable(ConnId(0)), &mut server);
        assert!(!server.ended);
        server.now = us(320);
        server.readable = 5;
        r.on_event(Event::Readable(ConnId(0)), &mut server);
        assert!(server.ended, "the fifth message ends the measurement");
        r.on_event(Event::MeasureStop, &mut server);
        let rep = r.report();
        assert_eq!((rep.messages, rep.window_bytes, rep.elapsed), (5, 50, Duration::from_micros(320)));
        assert_eq!((rep.latency.min, rep.latency.max), (50.0, 300.0));
        assert!((rep.latency.mean - (250.0 + 150.0 + 50.0 + 300.0 + 220.0) / 5.0).abs() < 1e-9);
        // Gaps: 250 (from the start), 0, 0, 50, 20: their sum is the last delivery, 320 us.
        assert!((rep.time_per_message.mean * 5.0 - 320.0).abs() < 1e-9);
        assert_eq!((rep.time_per_message.min, rep.time_per_message.max), (0.0, 250.0));
    }
}
