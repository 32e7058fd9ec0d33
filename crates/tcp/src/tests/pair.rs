//! A tiny driver wiring two [`Connection`]s together: every segment one side transmits arrives at the
//! other a fixed one-way latency later (plus an optional extra delay), unless the filter drops it.
//! Nothing else: no link rate, no queue, no reordering except what a filter asks for.
//!
//! One step of virtual time, at the earliest pending event `now`:
//! 1. every segment due at `now` is delivered, in the order it was sent, and after each one the receiving
//!    side is serviced (3 and 4 below), so that each arrival gets its own response as on a real host;
//! 2. both connections run the timers due at `now`;
//! 3. each side's application writes what it still has to write and (with `auto_read`) reads all;
//! 4. both connections transmit until quiet; each segment is recorded in `trace` with its fate.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};
use tcplab_wire::TcpSegment;

use super::{LOCAL_ISS, LOCAL_PORT, REMOTE_ISS, REMOTE_PORT};
use crate::{Connection, State, TcpConfig, TxRoom};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

/// What the network does with one transmitted segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    Deliver,
    Drop,
    /// Delivered `latency + extra` after it was sent.
    Delay(Duration),
    /// Delivered with the IP ECN field CE, as a marking queue would (RFC 3168 §5); a Not-ECT segment is
    /// dropped instead, as such a queue must.
    MarkCe,
}

/// One transmitted segment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent {
    pub at: Instant,
    pub from: Side,
    pub seg: TcpSegment,
    pub fate: Fate,
}

/// One delivered segment; `trace_len` is how many transmissions had been recorded before it arrived
/// (so `trace[trace_len..]` was sent after it was processed).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    pub at: Instant,
    pub to: Side,
    pub seg: TcpSegment,
    pub trace_len: usize,
}

type Filter = Box<dyn FnMut(Side, &TcpSegment) -> Fate>;

pub(crate) struct Pair {
    pub now: Instant,
    pub client: Connection,
    pub server: Connection,
    pub latency: Duration,
    /// Every segment transmitted, when `record` is on.
    pub trace: Vec<Sent>,
    /// Every segment delivered, when `record` is on.
    pub arrivals: Vec<Arrival>,
    pub record: bool,
    /// Bytes each side's application still wants to write ([client, server]).
    pub to_write: [u64; 2],
    /// Whether each side's application reads everything as soon as it can.
    pub auto_read: [bool; 2],
    /// Bytes each side's application has read.
    pub read: [u64; 2],
    /// Close each side once everything in `to_write` was handed to the connection.
    pub close_when_written: [bool; 2],
    filter: Filter,
    /// (arrival, destination, segment), sorted by arrival, ties in sending order.
    queue: VecDeque<(Instant, Side, TcpSegment)>,
    steps: u64,
}

impl Pair {
    /// A client (port 4000, ISS `client_iss`) actively opening to a listening server (port 5000, ISS
    /// `server_iss`) at t = 0. Both applications read everything as soon as it arrives.
    pub fn with_iss(
        client_cfg: TcpConfig,
        server_cfg: TcpConfig,
        latency: Duration,
        client_iss: u32,
        server_iss: u32,
    ) -> Pair {
        assert!(!latency.is_zero());
        Pair {
            now: Instant::ZERO,
            client: Connection::connect(client_cfg, LOCAL_PORT, REMOTE_PORT, client_iss),
            server: Connection::listen(server_cfg, REMOTE_PORT, server_iss),
            latency,
            trace: Vec::new(),
            arrivals: Vec::new(),
            record: true,
            to_write: [0, 0],
            auto_read: [true, true],
            read: [0, 0],
            close_when_written: [false, false],
            filter: Box::new(|_, _| Fate::Deliver),
            queue: VecDeque::new(),
            steps: 0,
        }
    }

    pub fn new(client_cfg: TcpConfig, server_cfg: TcpConfig, latency: Duration) -> Pair {
        Pair::with_iss(client_cfg, server_cfg, latency, LOCAL_ISS, REMOTE_ISS)
    }

    pub fn set_filter(&mut self, f: impl FnMut(Side, &TcpSegment) -> Fate + 'static) {
        self.filter = Box::new(f);
    }

    pub fn conn(&mut self, side: Side) -> &mut Connection {
        match side {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    /// Runs the handshake to completion (both ESTABLISHED), then returns.
    pub fn establish(&mut self) {
        self.run_while(|p| p.client.state() != State::Established || p.server.state() != State::Established);
    }

    fn next_event(&self) -> Option<Instant> {
        [self.queue.front().map(|e| e.0), self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Lets the applications act and both connections transmit at `self.now`.
    fn service(&mut self) {
        self.service_side(Side::Client);
        self.service_side(Side::Server);
    }

    fn service_side(&mut self, side: Side) {
        let i = side as usize;
        let now = self.now;
        if self.to_write[i] > 0 {
            let want = self.to_write[i];
            let n = self.conn(side).send(want);
            self.to_write[i] -= n;
        }
        if self.close_when_written[i] && self.to_write[i] == 0 {
            self.close_when_written[i] = false;
            self.conn(side).close();
        }
        if self.auto_read[i] {
            let n = self.conn(side).recv(u64::MAX);
            self.read[i] += n;
        }
        let mut n = 0;
        while let Some(seg) = self.conn(side).poll_transmit(now, TxRoom::Free) {
            n += 1;
            assert!(n < 100_000, "poll_transmit never returns None");
            let fate = (self.filter)(side, &seg);
            if self.record {
                self.trace.push(Sent { at: now, from: side, seg, fate });
            }
            let mut seg = seg;
            let arrival = match fate {
                Fate::Deliver => now + self.latency,
                Fate::Drop => continue,
                Fate::Delay(extra) => now + self.latency + extra,
                Fate::MarkCe if seg.mark_ce() => now + self.latency,
                Fate::MarkCe => continue,
            };
            let to = if side == Side::Client { Side::Server } else { Side::Client };
            let pos = self.queue.iter().rposition(|e| e.0 <= arrival).map_or(0, |p| p + 1);
            self.queue.insert(pos, (arrival, to, seg));
        }
    }

    /// One step at the next event; false when nothing is pending.
    pub fn step(&mut self) -> bool {
        let Some(next) = self.next_event() else { return false };
        assert!(next >= self.now, "event in the past");
        self.now = next;
        self.steps += 1;
        assert!(self.steps < 50_000_000, "runaway simulation");
        while self.queue.front().is_some_and(|e| e.0 <= next) {
            let (_, to, seg) = self.queue.pop_front().unwrap();
            if self.record {
                self.arrivals.push(Arrival { at: next, to, seg, trace_len: self.trace.len() });
            }
            self.conn(to).on_segment(next, &seg);
            self.service_side(to);
        }
        for side in [Side::Client, Side::Server] {
            if self.conn(side).poll_timeout().is_some_and(|t| t <= next) {
                self.conn(side).on_timeout(next);
            }
        }
        self.service();
        true
    }

    /// Runs every event up to and including `t`, then sets the clock to `t` and lets the applications
    /// act at `t`.
    pub fn run_until(&mut self, t: Instant) {
        self.service();
        while self.next_event().is_some_and(|e| e <= t) {
            self.step();
        }
        self.now = self.now.max(t);
        self.service();
    }

    /// Runs while `cond` holds and something is pending.
    pub fn run_while(&mut self, mut cond: impl FnMut(&Pair) -> bool) {
        self.service();
        while cond(self) {
            if !self.step() {
                break;
            }
        }
    }

    /// Runs until nothing is pending (timers included, so TIME-WAIT runs out).
    pub fn run_to_idle(&mut self) {
        self.run_while(|_| true);
    }

    /// The recorded segments sent by `side`.
    pub fn sent_by(&self, side: Side) -> impl Iterator<Item = &Sent> + '_ {
        self.trace.iter().filter(move |s| s.from == side)
    }
}

/// The recorded trace from `since` on, as (time, sender, segment).
pub(crate) fn log_since(p: &Pair, since: Instant) -> Vec<(Instant, Side, TcpSegment)> {
    p.trace.iter().filter(|s| s.at >= since).map(|s| (s.at, s.from, s.seg)).collect()
}

/// Asserts a trace excerpt exactly: (time in ms, sender, segment).
#[track_caller]
pub(crate) fn assert_log(got: &[(Instant, Side, TcpSegment)], want: &[(u64, Side, TcpSegment)]) {
    let want: Vec<(Instant, Side, TcpSegment)> = want.iter().map(|&(t, s, g)| (super::at(t), s, g)).collect();
    if got != want.as_slice() {
        let line = |e: Option<&(Instant, Side, TcpSegment)>| {
            e.map_or("-".to_string(), |(t, s, g)| format!("{t} {s:?} {}", super::describe(g)))
        };
        let mut msg = format!("trace has {} segment(s), expected {}\n", got.len(), want.len());
        for i in 0..got.len().max(want.len()) {
            let mark = if got.get(i) == want.get(i) { "  " } else { "!!" };
            msg += &format!("{mark} #{i}\n     got:  {}\n     want: {}\n", line(got.get(i)), line(want.get(i)));
        }
        panic!("{msg}");
    }
}
