//! The simulator backend: one run of one test for one seed, on virtual time.
//!
//! Topology: a client host and a server host joined by a path with an `up` direction (client → server)
//! and a `down` direction. Each host has a NIC transmit queue in front of its direction of the path. A test
//! opens `parallel` TCP connections from client to server and runs a netperf-style workload over them.
//!
//! Events (see [`queue::Class`]) are ordered by (time, class, source, sequence). Packets are not events
//! until they reach the head of their link direction: a direction keeps its packets in flight in arrival
//! order (FIFO with constant delay), and only its head sits in the event queue. Nothing is allocated
//! per packet once queues have grown to their working size.
//!
//! Parallel connections open one after another, spaced by the time a SYN frame takes on the up link
//! (what a NIC at line rate would do), and data flows once all of them are established: the measurement
//! starts then, for all of them at once.
//!
//! Random streams: every random component draws from its own stream, seeded by [`stream_seed`] from the
//! run seed and the component's id (link up 1, link down 2, endpoint `e`'s ISS 1000 + e and its own stream
//! 2,000,000 + e), so adding a component
//! does not shift the draws of another.

pub mod queue;

use std::collections::VecDeque;

use serde::Serialize;
use tcplab_link::{LinkConfig, LinkDirection, LinkStats, NicQueue, NicStats, Verdict};
use tcplab_tcp::{Connection, Estats, TcpConfig, TxRoom};
use tcplab_units::{Duration, Instant, Rate};
use tcplab_wire::TcpSegment;
use tcplab_workload::{BulkReceiver, BulkSender};

use queue::{Class, EventQueue};

/// A host's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpec {
    pub tcp: TcpConfig,
    /// Line rate of the host's NIC; `None` = faster than the path (the NIC queue never fills).
    pub nic_rate: Option<Rate>,
    /// NIC transmit queue length, packets (Linux `txqueuelen`).
    pub txqueuelen: u32,
}

/// Which way a bulk test moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// TCP_STREAM: client to server.
    ClientToServer,
    /// TCP_MAERTS: server to client.
    ServerToClient,
}

/// The test to run.
#[derive(Debug, Clone, PartialEq)]
pub struct TestSpec {
    pub direction: Direction,
    /// Measurement length, from connection establishment.
    pub duration: Duration,
    /// Send call size, bytes (netperf `-m`).
    pub message: u64,
    /// Concurrent connections between the two hosts.
    pub parallel: u32,
    /// Sample the first sender's RFC 4898 gauges every this often (from the start of the run).
    pub series_interval: Option<Duration>,
}

/// Sampled RFC 4898 gauges of the first sending connection.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Series {
    pub interval_s: f64,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<f64>>,
}

/// The columns of [`Series`]: time, then the sender's gauges in RFC 4898 names and units.
pub const SERIES_COLUMNS: [&str; 7] =
    ["t_s", "CurCwnd", "CurSsthresh", "PipeSize", "SmoothedRTT", "ThruOctetsAcked", "SegsRetrans"];

/// Everything one simulation needs, units resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct SimSpec {
    pub up: LinkConfig,
    pub down: LinkConfig,
    pub client: HostSpec,
    pub server: HostSpec,
    pub test: TestSpec,
}

/// Statistics of one connection end.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionResult {
    pub side: &'static str,
    pub protocol: &'static str,
    pub state: String,
    pub estats: Estats,
}

/// The outcome of one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// Payload bytes delivered to the receiving application during the measurement.
    pub delivered_bytes: u64,
    /// delivered_bytes · 8 / duration.
    pub throughput_bps: f64,
    /// Length of the measurement, seconds.
    pub elapsed_s: f64,
    /// Segments the sender retransmitted (sum over connections).
    pub retransmissions: u64,
    /// Virtual time at which the simulation stopped.
    pub end_time_s: f64,
    pub connections: Vec<ConnectionResult>,
    pub link_up: LinkStats,
    pub link_down: LinkStats,
    pub nic_client: NicStats,
    pub nic_server: NicStats,
    /// Events the engine processed (for benchmarks).
    #[serde(skip)]
    pub events: u64,
    /// Data-carrying segments sent by all endpoints (for benchmarks).
    #[serde(skip)]
    pub data_segments: u64,
    /// Sampled gauges, when the test asked for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
}

/// The seed of a component's random stream: SplitMix64 of the run seed mixed with the component id.
pub fn stream_seed(seed: u64, component: u64) -> u64 {
    fn splitmix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    splitmix(seed ^ splitmix(component))
}

/// After the measurement, how long the connections get to close before the run stops regardless.
const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// How long connections get to come up (Linux gives up a connect after about 127 s of SYN retries).
pub const CONNECT_LIMIT: Duration = Duration::from_secs(180);

/// Why a run produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// Not every connection was established within [`CONNECT_LIMIT`] (e.g. a path that loses everything).
    NotEstablished { established: usize, connections: usize },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::NotEstablished { established, connections } => write!(
                f,
                "only {established} of {connections} connection ends were established after {CONNECT_LIMIT} of simulated time"
            ),
        }
    }
}

impl std::error::Error for SimError {}

const CLIENT: usize = 0;
const SERVER: usize = 1;
const SERVER_PORT: u16 = 5001;

struct InFlight {
    arrival: Instant,
    to: u32,
    seg: TcpSegment,
}

/// The engine and its world.
struct World {
    now: Instant,
    queue: EventQueue,
    /// Endpoint `2i` is connection i's client end, `2i + 1` its server end.
    conns: Vec<Connection>,
    senders: Vec<BulkSender>,
    receivers: Vec<BulkReceiver>,
    direction: Direction,
    /// Per endpoint: the earliest timer event in the queue for it.
    timer_scheduled: Vec<Option<Instant>>,
    timer_seq: Vec<u64>,
    /// Per host: NIC, link of its direction, packets in flight on that direction.
    nics: [NicQueue; 2],
    links: [LinkDirection; 2],
    in_flight: [VecDeque<InFlight>; 2],
    arrival_seq: [u64; 2],
    /// Per host: endpoints waiting for room in the NIC queue, and whether a room event is queued.
    nic_waiters: [VecDeque<u32>; 2],
    waiting: Vec<bool>,
    nic_room_scheduled: [bool; 2],
    nic_room_seq: [u64; 2],
    control_seq: u64,
    /// Per endpoint: established once (counted), and closed (CLOSED or TIME-WAIT).
    established: Vec<bool>,
    established_count: usize,
    closed: Vec<bool>,
    closed_count: usize,
    measure_start: Option<Instant>,
    measure_end: Option<Instant>,
    delivered_at_start: u64,
    delivered_at_end: u64,
    data_segments: u64,
    series: Option<Series>,
}

impl World {
    fn host_of(e: u32) -> usize {
        (e % 2) as usize
    }

    fn is_sender(&self, e: u32) -> bool {
        match self.direction {
            Direction::ClientToServer => Self::host_of(e) == CLIENT,
            Direction::ServerToClient => Self::host_of(e) == SERVER,
        }
    }

    fn delivered(&self) -> u64 {
        self.receivers.iter().map(|r| r.bytes_read).sum()
    }

    /// Lets the application and the transport of endpoint `e` act on whatever just happened.
    fn service(&mut self, e: u32) {
        let i = (e / 2) as usize;
        let sender = self.is_sender(e);
        let conn = &mut self.conns[e as usize];
        if sender {
            if self.measure_start.is_some() {
                self.senders[i].on_writable(conn);
            }
        } else {
            self.receivers[i].on_readable(conn);
        }
        self.transmit(e);
        self.sync_timer(e);
        self.update_state(e);
    }

    fn update_state(&mut self, e: u32) {
        use tcplab_tcp::State;
        let (up, state) = (self.conns[e as usize].is_established(), self.conns[e as usize].state());
        if !self.closed[e as usize] && matches!(state, State::Closed | State::TimeWait) {
            self.closed[e as usize] = true;
            self.closed_count += 1;
        }
        if !self.established[e as usize] && up {
            self.established[e as usize] = true;
            self.established_count += 1;
            if self.established_count == self.conns.len() {
                self.start_measurement();
            }
        }
    }

    /// Every connection is up: the senders start writing and the clock starts.
    fn start_measurement(&mut self) {
        self.measure_start = Some(self.now);
        self.delivered_at_start = self.delivered();
        for i in 0..self.senders.len() {
            self.service(self.sender_endpoint(i));
        }
    }

    fn sender_endpoint(&self, i: usize) -> u32 {
        match self.direction {
            Direction::ClientToServer => 2 * i as u32,
            Direction::ServerToClient => 2 * i as u32 + 1,
        }
    }

    fn transmit(&mut self, e: u32) {
        if self.waiting[e as usize] {
            return; // it will be served, in turn, when the NIC has room
        }
        let h = Self::host_of(e);
        loop {
            let room = if self.nics[h].is_full(self.now) { TxRoom::Full } else { TxRoom::Free };
            let conn = &mut self.conns[e as usize];
            match conn.poll_transmit(self.now, room) {
                Some(seg) => self.send_packet(h, e, seg),
                None => {
                    if conn.stalled() {
                        self.wait_for_nic(h, e);
                    }
                    break;
                }
            }
        }
    }

    fn wait_for_nic(&mut self, h: usize, e: u32) {
        self.waiting[e as usize] = true;
        self.nic_waiters[h].push_back(e);
        if !self.nic_room_scheduled[h] {
            if let Some(t) = self.nics[h].room_at(self.now) {
                self.nic_room_scheduled[h] = true;
                self.nic_room_seq[h] += 1;
                self.queue.push(t, Class::NicRoom, h as u32, self.nic_room_seq[h]);
            }
        }
    }

    fn send_packet(&mut self, h: usize, e: u32, seg: TcpSegment) {
        if seg.payload_len > 0 {
            self.data_segments += 1;
        }
        let ip_len = seg.ip_len();
        // Only under `ifq_full = "drop"` does a connection send into a full NIC: the frame is lost there.
        let Some(departs) = self.nics[h].send(self.now, ip_len) else { return };
        if let Verdict::Deliver(arrival) = self.links[h].send(departs, ip_len) {
            let q = &mut self.in_flight[h];
            q.push_back(InFlight { arrival, to: e ^ 1, seg });
            if q.len() == 1 {
                self.arrival_seq[h] += 1;
                self.queue.push(arrival, Class::Arrival, h as u32, self.arrival_seq[h]);
            }
        }
    }

    fn sync_timer(&mut self, e: u32) {
        let Some(want) = self.conns[e as usize].poll_timeout() else { return };
        let slot = &mut self.timer_scheduled[e as usize];
        if slot.is_none_or(|s| want < s) {
            *slot = Some(want);
            self.timer_seq[e as usize] += 1;
            self.queue.push(want, Class::Timer, e, self.timer_seq[e as usize]);
        }
    }

    fn on_arrival(&mut self, dir: usize) {
        let p = self.in_flight[dir].pop_front().expect("an arrival event has a packet");
        debug_assert_eq!(p.arrival, self.now);
        if let Some(next) = self.in_flight[dir].front() {
            self.arrival_seq[dir] += 1;
            self.queue.push(next.arrival, Class::Arrival, dir as u32, self.arrival_seq[dir]);
        }
        self.conns[p.to as usize].on_segment(self.now, &p.seg);
        self.service(p.to);
    }

    fn on_timer(&mut self, e: u32) {
        let slot = &mut self.timer_scheduled[e as usize];
        if *slot == Some(self.now) {
            *slot = None;
        }
        let conn = &mut self.conns[e as usize];
        if conn.poll_timeout().is_some_and(|t| t <= self.now) {
            conn.on_timeout(self.now);
            self.service(e);
        } else {
            self.sync_timer(e);
        }
    }

    fn on_nic_room(&mut self, h: usize) {
        self.nic_room_scheduled[h] = false;
        let n = self.nic_waiters[h].len();
        for _ in 0..n {
            let Some(e) = self.nic_waiters[h].pop_front() else { break };
            self.waiting[e as usize] = false;
            self.service(e);
        }
    }

    fn on_measurement_end(&mut self) {
        self.measure_end = Some(self.now);
        self.delivered_at_end = self.delivered();
        for i in 0..self.senders.len() {
            let e = self.sender_endpoint(i);
            self.senders[i].stop(&mut self.conns[e as usize]);
            self.service(e);
        }
    }

    fn sample(&mut self) {
        let e = self.conns[self.sender_endpoint(0) as usize].estats_at(self.now);
        let Some(series) = self.series.as_mut() else { return };
        series.rows.push(vec![
            self.now.as_secs_f64(),
            e.CurCwnd as f64,
            e.CurSsthresh.map_or(f64::NAN, |s| s as f64),
            e.PipeSize as f64,
            e.SmoothedRTT,
            e.ThruOctetsAcked as f64,
            e.SegsRetrans as f64,
        ]);
    }

    fn all_closed(&self) -> bool {
        self.closed_count == self.conns.len()
    }
}

/// Runs one simulation. Pure: the same spec and seed give the same result, bit for bit.
pub fn run(spec: &SimSpec, seed: u64) -> Result<RunResult, SimError> {
    let n = spec.test.parallel.max(1) as usize;
    let mut conns = Vec::with_capacity(2 * n);
    let client_tcp = std::sync::Arc::new(spec.client.tcp.clone());
    let server_tcp = std::sync::Arc::new(spec.server.tcp.clone());
    for i in 0..n {
        let client_port = 40_000u16.wrapping_add(i as u16);
        let e = 2 * i as u64;
        let iss_c = stream_seed(seed, 1000 + e) as u32;
        let iss_s = stream_seed(seed, 1000 + e + 1) as u32;
        let mut client = Connection::connect(client_tcp.clone(), client_port, SERVER_PORT, iss_c);
        let mut server = Connection::listen(server_tcp.clone(), SERVER_PORT, iss_s);
        client.set_random_seed(stream_seed(seed, 2_000_000 + e));
        server.set_random_seed(stream_seed(seed, 2_000_000 + e + 1));
        conns.push(client);
        conns.push(server);
    }
    let hosts = [&spec.client, &spec.server];
    let link_cfgs = [&spec.up, &spec.down];
    let mut w = World {
        now: Instant::ZERO,
        queue: EventQueue::new(),
        senders: vec![BulkSender::new(spec.test.message); n],
        receivers: vec![BulkReceiver::default(); n],
        direction: spec.test.direction,
        timer_scheduled: vec![None; 2 * n],
        timer_seq: vec![0; 2 * n],
        nics: [0, 1].map(|h| NicQueue::new(hosts[h].nic_rate, link_cfgs[h].framing, hosts[h].txqueuelen)),
        links: [0, 1].map(|h| LinkDirection::new(link_cfgs[h], stream_seed(seed, 1 + h as u64))),
        in_flight: [VecDeque::with_capacity(1024), VecDeque::with_capacity(1024)],
        arrival_seq: [0; 2],
        nic_waiters: [VecDeque::new(), VecDeque::new()],
        waiting: vec![false; 2 * n],
        nic_room_scheduled: [false; 2],
        nic_room_seq: [0; 2],
        control_seq: 0,
        established: vec![false; 2 * n],
        established_count: 0,
        closed: vec![false; 2 * n],
        closed_count: 0,
        measure_start: None,
        measure_end: None,
        delivered_at_start: 0,
        delivered_at_end: 0,
        data_segments: 0,
        series: spec.test.series_interval.map(|d| Series {
            interval_s: d.as_secs_f64(),
            columns: SERIES_COLUMNS.to_vec(),
            rows: Vec::new(),
        }),
        conns,
    };
    // Connection i opens i SYN-frame times after the first (a SYN with all options is 60 bytes of IP).
    let syn_gap = spec.up.rate.tx_time(spec.up.framing.wire_len(60) as u64);
    for i in 0..n {
        w.queue.push(Instant::ZERO + syn_gap.saturating_mul(i as u64), Class::Open, i as u32, 0);
    }
    if let Some(d) = spec.test.series_interval {
        w.control_seq += 1;
        w.queue.push(Instant::ZERO + d, Class::Control, 1, w.control_seq);
    }
    let mut end_scheduled = false;
    while let Some(ev) = w.queue.pop() {
        w.now = ev.time;
        match ev.class {
            Class::Arrival => w.on_arrival(ev.source as usize),
            Class::Timer => w.on_timer(ev.source),
            Class::NicRoom => w.on_nic_room(ev.source as usize),
            Class::Open => w.service(2 * ev.source),
            // Control source 0 ends the measurement; source 1 takes a sample and schedules the next.
            Class::Control if ev.source == 1 => {
                w.sample();
                if let Some(d) = spec.test.series_interval {
                    w.control_seq += 1;
                    w.queue.push(w.now + d, Class::Control, 1, w.control_seq);
                }
            }
            Class::Control => w.on_measurement_end(),
        }
        if !end_scheduled {
            if let Some(start) = w.measure_start {
                end_scheduled = true;
                w.control_seq += 1;
                w.queue.push(start + spec.test.duration, Class::Control, 0, w.control_seq);
            }
        }
        if let Some(end) = w.measure_end {
            if w.all_closed() || w.now.saturating_since(end) > DRAIN_LIMIT {
                break;
            }
        }
        if w.measure_start.is_none() && w.now > Instant::ZERO + CONNECT_LIMIT {
            return Err(SimError::NotEstablished { established: w.established_count, connections: w.conns.len() });
        }
    }
    if w.measure_start.is_none() {
        return Err(SimError::NotEstablished { established: w.established_count, connections: w.conns.len() });
    }
    if w.measure_end.is_none() {
        // Everything went quiet before the end of the measurement (the senders' data was all delivered).
        w.measure_end = Some(w.now);
        w.delivered_at_end = w.delivered();
    }
    let start = w.measure_start.unwrap_or(Instant::ZERO);
    let elapsed = w.measure_end.unwrap_or(start).saturating_since(start);
    let delivered = w.delivered_at_end - w.delivered_at_start;
    let connections: Vec<ConnectionResult> = w
        .conns
        .iter()
        .enumerate()
        .map(|(e, c)| ConnectionResult {
            side: if e % 2 == 0 { "client" } else { "server" },
            protocol: "tcp",
            state: c.state().to_string(),
            estats: c.estats_at(w.now),
        })
        .collect();
    let retransmissions = connections.iter().map(|c| c.estats.SegsRetrans).sum();
    Ok(RunResult {
        delivered_bytes: delivered,
        throughput_bps: if elapsed.is_zero() { 0.0 } else { delivered as f64 * 8.0 / elapsed.as_secs_f64() },
        elapsed_s: elapsed.as_secs_f64(),
        retransmissions,
        end_time_s: w.now.as_secs_f64(),
        connections,
        link_up: w.links[0].stats(),
        link_down: w.links[1].stats(),
        nic_client: w.nics[0].stats(),
        nic_server: w.nics[1].stats(),
        events: w.queue.popped(),
        data_segments: w.data_segments,
        series: w.series,
    })
}
