//! The simulator backend: one run of one scenario point for one seed, on virtual time.
//!
//! Topology ([`graph`]): hosts joined by duplex links, each direction its own link model, and static
//! shortest-path routes; every host forwards what is not addressed to it. The two-host scenario is the
//! smallest graph: a client and a server joined by one link whose directions are `up` (client → server) and
//! `down` ([`SimSpec::two_hosts`]). A [`Host`] has a NIC transmit queue in front of its direction of the path,
//! a port table that delivers each arriving segment to its connection (or to a listener, which accepts a
//! new connection), ephemeral ports, and the applications ([`tcplab_workload::App`]) running on it. A
//! connection end is a [`Transport`] (TCP, RDP); the engine is generic over it, so nothing on the
//! per-packet path is a virtual call or an allocation.
//!
//! Events (see [`queue::Class`]) are ordered by (time, class, source, sequence). Packets are not events
//! until they reach the head of their link direction: a direction keeps its packets in flight in arrival
//! order, and only its head sits in the event queue. A direction is a pipeline, qdisc → serializer →
//! propagation delay → loss. With a drop-tail FIFO and a constant delay (every shipped two-host scenario)
//! a packet's fate is decided as it enters (`LinkDirection::send`); any other qdisc, or a delay with
//! jitter, takes the generic path: the qdisc holds the packets and is asked for the next one each time the
//! serializer is free, by one departure event per direction at a time (`Class::Depart`).
//!
//! *One instant.* Packets that arrive at one host at the same virtual nanosecond (a link served on a clock's
//! ticks, as dummynet's, releases its due packets together; two directions into the host may deliver at
//! once) reach their transports one after another, and the host's applications hear of them only when the
//! instant's arrivals at the host are all in: a kernel's receive path processes the batch its NIC handed it
//! before the reader it woke is scheduled. Other hosts' arrivals at the instant do not wait or hold it.
//! Each segment's own output (data an ACK released, an ACK it made due) leaves as it is processed; the
//! applications' wake-ups, and what their calls give the service to send, follow in the order of the
//! endpoints' first segments.
//! Arrivals a nanosecond apart are two instants (a host without a CPU model runs its application in no
//! time between them), and nothing else waits: timers, NIC room and application timers at the instant run
//! after its arrivals, by their class, as before.
//!
//! The measurement window is the applications': once every application said it is ready, all of them get
//! `MeasureStart`, and `MeasureStop` follows after the spec's `measure` duration, or as soon as an
//! application calls `Sockets::end_measurement` (a transfer of a fixed number of messages). After that the run lasts
//! until every connection end is finished (closed or in TIME-WAIT), or [`DRAIN_LIMIT`].
//!
//! Random streams: every random component draws from its own stream, seeded by [`stream_seed`] from the
//! run seed and the component's id (link direction `d` 1 + d, so up 1 and down 2; its qdisc 3,000,000 + d; endpoint `e`'s ISS 1000 + e and its own stream
//! 2,000,000 + e, where endpoints are numbered from 0 in the order they are created), so adding a
//! component does not shift the draws of another.

pub mod cpu;
pub mod graph;
pub mod probe;
pub mod progress;
pub mod queue;
mod ring;

use std::collections::VecDeque;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use tcplab_link::{
    qdisc, DropReason, LinkConfig, LinkDirection, LinkStats, NicQueue, NicStats, PacketMeta, Qdisc, QdiscStats, Verdict,
};
use tcplab_transport::{Endpoint, Segment, Transport, TxRoom};
use tcplab_units::{Duration, Instant, Rate};
use tcplab_workload::{App, ConnId, ConnectError, Event, Sockets};

use cpu::Cpu;
pub use cpu::CpuSpec;
pub use graph::{DirId, FlowId, HostId, LinkId, LinkSpec, NoRoute, Route, Routes, CLIENT, DOWN, SERVER, UP};
pub use probe::{EndpointView, Fragment, PacketEvent, Probe, Transit};
use queue::{Class, EventQueue};
use ring::Ring;

/// Bytes of an IPv4 header without options: every fragment has one.
const IPV4_HEADER: u32 = 20;

/// A host's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpec<C> {
    /// The transport configuration shared by the host's connections.
    pub transport: C,
    /// Line rate of the host's NIC; `None` = faster than the path (the NIC queue never fills).
    pub nic_rate: Option<Rate>,
    /// NIC transmit queue length, packets (Linux `txqueuelen`).
    pub txqueuelen: u32,
    /// Local ports for connections the host opens (Linux `ip_local_port_range`), inclusive.
    pub ephemeral_ports: (u16, u16),
    /// The CPU cost model; `None`: the host is infinitely fast.
    pub cpu: Option<CpuSpec>,
    /// IP reassembly timeout: an incomplete datagram is discarded this long after its first fragment
    /// arrived ([`FRAGMENT_TTL`] by default).
    pub fragment_ttl: Duration,
    /// Receive coalescing (a NIC's GRO behind its interrupt moderation): a segment is held this long at most
    /// for the segments that continue it (`Segment::coalesces`), and the batch reaches the transport as one
    /// packet when its last segment has arrived. Zero: each segment on its own.
    pub rx_coalesce: Duration,
    /// The NIC's own processing of each frame it sends or receives, one frame at a time on one processor
    /// shared by both directions (a firmware-driven NIC such as the Alteon Tigon-2, whose released firmware
    /// runs on one of its two embedded processors: Kim, Pai and Rixner, PPoPP 2003). A sent frame leaves
    /// when the processor has done it; a received frame reaches the host when the processor has done it.
    /// Zero: the NIC takes no time (not combined with `rx_coalesce`).
    pub nic_frame_time: Duration,
}

/// The largest packet receive coalescing builds, IP header included (Linux `gro_max_size`, 64 KiB).
pub const GRO_MAX_SIZE: u32 = 65_536;

/// Linux's IP reassembly timeout (`net.ipv4.ipfrag_time`, 30 s); RFC 1122 §3.3.2 recommends 60 to 120 s,
/// RFC 791 an initial timer of 15 s.
pub const FRAGMENT_TTL: Duration = Duration::from_secs(30);

/// A host's IP fragmentation and reassembly counters, named as RFC 4293's `ipSystemStats` table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IpStats {
    /// Datagrams that had to be fragmented to fit the MTU of the host's direction.
    pub out_frag_reqds: u64,
    /// Fragments created.
    pub out_frag_creates: u64,
    /// Fragments received that needed reassembly.
    pub reasm_reqds: u64,
    /// Datagrams reassembled and handed to their transport.
    pub reasm_oks: u64,
    /// Incomplete datagrams discarded when their reassembly timer expired.
    pub reasm_fails: u64,
}

/// What a host's CPU did (with the cost model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuReport {
    pub cores: u32,
    /// Core time charged during the measurement window (summed over cores).
    pub busy_window: Duration,
    /// Core time charged over the whole run.
    pub busy_total: Duration,
}

/// Linux's default `ip_local_port_range`.
pub const EPHEMERAL_PORTS: (u16, u16) = (32768, 60999);

/// Everything one simulation needs, units resolved.
#[derive(Debug, Clone)]
pub struct SimSpec<C> {
    /// Hosts and routers, indexed by [`HostId`].
    pub hosts: Vec<HostSpec<C>>,
    /// Duplex links, indexed by [`LinkId`]; link `l`'s directions are `l.forward()` and `l.backward()`.
    pub links: Vec<LinkSpec>,
    /// The applications, in the order they start.
    pub apps: Vec<AppSpec>,
    /// Length of the measurement window.
    pub measure: Duration,
}

/// An application, the host it runs on, and the host its connections go to.
#[derive(Debug, Clone)]
pub struct AppSpec {
    pub host: HostId,
    /// Where `Sockets::connect` opens connections (ignored by an application that only listens).
    pub peer: HostId,
    /// The flow the application belongs to (results are grouped by it).
    pub flow: FlowId,
    pub app: App,
}

impl<C> SimSpec<C> {
    /// The two-host shape: a client and a server joined by one link, `up` from client to server and `down`
    /// back; each application's peer is the other host, and all belong to flow 0.
    pub fn two_hosts(
        up: LinkConfig,
        down: LinkConfig,
        [client, server]: [HostSpec<C>; 2],
        apps: Vec<(HostId, App)>,
        measure: Duration,
    ) -> Self {
        SimSpec {
            hosts: vec![client, server],
            links: vec![LinkSpec { a: CLIENT, b: SERVER, forward: up, backward: down }],
            apps: apps
                .into_iter()
                .map(|(host, app)| AppSpec {
                    host,
                    peer: if host == CLIENT { SERVER } else { CLIENT },
                    flow: FlowId(0),
                    app,
                })
                .collect(),
            measure,
        }
    }

    /// The configuration of direction `d`.
    pub fn link(&self, d: DirId) -> &LinkConfig {
        let l = &self.links[d.link().index()];
        if d == d.link().forward() {
            &l.forward
        } else {
            &l.backward
        }
    }
}

/// Statistics of one connection end at the end of the run.
#[derive(Debug, Clone)]
pub struct EndpointReport<S> {
    pub id: u32,
    pub host: HostId,
    /// The host at the other end of the connection.
    pub peer: HostId,
    pub local_port: u16,
    pub remote_port: u16,
    /// The application the endpoint belonged to (index into [`SimSpec::apps`]).
    pub app: usize,
    pub state: String,
    pub stats: S,
}

/// The outcome of one run: what the applications measured and what the stack and the path counted.
#[derive(Debug, Clone)]
pub struct SimRun<S> {
    /// The applications as they ended (their reports hold the figures).
    pub apps: Vec<App>,
    /// Every connection end, in the order they were created.
    pub endpoints: Vec<EndpointReport<S>>,
    /// Per link direction ([`DirId`]).
    pub links: Vec<LinkStats>,
    /// Per link direction, its qdisc's counters when it takes the generic path (`None`: the drop-tail
    /// FIFO's fast path, whose counters are all in `links`).
    pub qdiscs: Vec<Option<QdiscStats>>,
    /// Per host ([`HostId`]).
    pub nics: Vec<NicStats>,
    /// Per host, segments that found no connection and no listener.
    pub no_socket: Vec<u64>,
    /// Per host, IP fragmentation and reassembly.
    pub ip: Vec<IpStats>,
    /// Per host, with the CPU cost model.
    pub cpu: Vec<Option<CpuReport>>,
    /// Virtual time at which the simulation stopped.
    pub end_time: Instant,
    /// Events the engine processed (for benchmarks).
    pub events: u64,
    /// Data-carrying segments sent by all endpoints (for benchmarks).
    pub data_segments: u64,
}

/// The seed of a component's random stream (the link crate's, which the Linux backend's emulator uses too).
pub use tcplab_link::stream_seed;

/// After the measurement, how long the connections get to close before the run stops regardless.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// How long the applications get to become ready (Linux gives up a connect after about 127 s of SYN
/// retries).
pub const CONNECT_LIMIT: Duration = Duration::from_secs(180);

/// Why a run produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// The applications were not all ready within [`CONNECT_LIMIT`] (e.g. a path that loses everything).
    NotEstablished { established: usize, created: usize },
    /// An application's peer cannot be reached: no links join the two hosts.
    NoRoute { from: HostId, to: HostId },
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::NotEstablished { established, created } => write!(
                f,
                "the test's connections were not all established after {CONNECT_LIMIT} of simulated time \
                 ({established} of {created} connection ends established)"
            ),
            SimError::NoRoute { from, to } => write!(f, "no links join {from} to {to} (an application's peer)"),
        }
    }
}

impl std::error::Error for SimError {}

/// Every link direction of the run, as a probe sees them at a tick (queue-length and sojourn series).
pub struct Links<'a, S> {
    paths: &'a [Path<S>],
    now: Instant,
}

/// One link direction at a probe's tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkView {
    pub dir: DirId,
    /// Packets and wire bytes waiting (in the qdisc, or the FIFO's backlog), not counting the one on the wire.
    pub backlog_packets: usize,
    pub backlog_bytes: u64,
    /// The serializer's remaining time: on the FIFO, how long a packet arriving now would wait (its sojourn
    /// time); on the generic path only the frame on the wire's rest (the qdisc's sojourn is in `qdisc`).
    pub wait: Duration,
    pub stats: LinkStats,
    /// The qdisc's counters on the generic path (sojourn sums: a probe diffs them between ticks).
    pub qdisc: Option<QdiscStats>,
}

impl<S> Links<'_, S> {
    pub fn iter(&self) -> impl Iterator<Item = LinkView> + '_ {
        self.paths.iter().enumerate().map(|(d, p)| {
            let (backlog_packets, backlog_bytes, wait) = match &p.staged {
                None => {
                    let (n, b) = p.link.backlog_at(self.now);
                    (n, b, p.link.wait_at(self.now))
                }
                Some(st) => (st.qdisc.len_packets(), st.qdisc.len_bytes(), p.link.wait_at(self.now)),
            };
            LinkView {
                dir: DirId(d as u32),
                backlog_packets,
                backlog_bytes,
                wait,
                stats: p.link.stats(),
                qdisc: p.staged.as_ref().map(|st| *st.qdisc.stats()),
            }
        })
    }
}

/// Every connection end of the run, as a probe sees them at a tick.
pub struct Endpoints<'a, T> {
    eps: &'a [Ep<T>],
}

impl<'a, T> Endpoints<'a, T> {
    /// The endpoints in the order they were created.
    pub fn iter(&self) -> impl Iterator<Item = EndpointView<'a, T>> + 'a {
        self.eps.iter().enumerate().map(|(i, ep)| EndpointView {
            id: i as u32,
            host: ep.host,
            peer: ep.peer,
            local_port: ep.local_port,
            remote_port: ep.remote_port,
            conn: &ep.conn,
        })
    }
}

/// One connection end and the engine's bookkeeping for it.
struct Ep<T> {
    conn: T,
    host: HostId,
    peer: HostId,
    /// The first direction of the route its packets take to `peer`.
    first_dir: DirId,
    /// Where a whole packet it sends starts: its route, on that route's first direction (and whether that
    /// direction is all of the route).
    start: Place,
    app: u32,
    local_port: u16,
    remote_port: u16,
    /// Its host's NIC has a rate, so that it can be full (`NicQueue::has_rate`): without one the sender's
    /// every poll is told there is room without a look at the host.
    nic_rate: bool,
    /// Its host's NIC has neither a rate nor a frame time: a frame it sends leaves at once, and the send
    /// path counts it here (`nic_frames`, added to the NIC's count in the results) without a look at the
    /// host (issue 25: ~10 instructions a packet).
    nic_plain: bool,
    /// The first direction of its route has an MTU (`LinkConfig::mtu`), past which a packet is fragmented:
    /// without one the send path skips the size test and the direction it would read it from (issue 25).
    mtu_limited: bool,
    nic_frames: u64,
    /// The earliest timer event in the queue for it (`Instant::FAR_FUTURE`: none, so that the per-service
    /// test is one comparison), and its sequence counter.
    timer_scheduled: Instant,
    timer_seq: u64,
    /// The endpoint at the other end, as named by the last packet from it that took the arrival path
    /// (`u32::MAX`: none yet). The packets this one sends carry it, and their arrival takes it instead of
    /// asking the port table while it holds its ports (is not released): the per-packet port key and lookup
    /// cost more than the test (issue 25: bulk-1g −0.24 %, rr-1000 −0.92 %).
    peer_ep: u32,
    /// Waiting in its host's queue for NIC room.
    waiting: bool,
    /// An application acted on it: it must be serviced.
    touched: bool,
    established: bool,
    finished: bool,
    released: bool,
}

/// A host's stack: NIC, ports, listeners.
struct Host<C> {
    cfg: Arc<C>,
    nic: NicQueue,
    /// Endpoints waiting for room in the NIC queue, and whether a room event is queued.
    nic_waiters: VecDeque<u32>,
    nic_room_scheduled: bool,
    nic_room_seq: u64,
    /// (remote host, local port, remote port) as [`port_key`] packs them → endpoint. An entry lives until
    /// the endpoint is CLOSED, so a port in TIME-WAIT stays taken.
    ports: FxHashMap<u64, u32>,
    /// The (port key, endpoint) of the last lookup that found one: consecutive segments mostly belong to one
    /// connection, and this spares the hash. Cleared when an entry leaves `ports`.
    last_demux: Option<(u64, u32)>,
    /// Listening port → application.
    listeners: FxHashMap<u16, u32>,
    ephemeral: (u16, u16),
    next_ephemeral: u16,
    no_socket: u64,
    /// IP reassembly: fragments received so far per datagram id, and the datagrams' deadlines in the order
    /// their first fragments came (one timeout for all, so the order is the deadlines' order).
    reasm: FxHashMap<u32, u32>,
    reasm_deadlines: VecDeque<(Instant, u32)>,
    reasm_seq: u64,
    fragment_ttl: Duration,
    ip: IpStats,
    /// The id of the next datagram the host fragments.
    next_ip_id: u32,
    /// The NIC's frame processor (`HostSpec::nic_frame_time`): its time per frame, and when the frames
    /// given to it so far are done (it takes them in the order they come, sent and received alike).
    nic_frame_time: Duration,
    nic_busy: Instant,
}

impl<C> Host<C> {
    /// The endpoint whose port key ([`port_key`]) is `key`, if any.
    #[inline(always)]
    fn demux(&mut self, key: u64) -> Option<u32> {
        match self.last_demux {
            Some((k, e)) if k == key => Some(e),
            _ => {
                let e = self.ports.get(&key).copied();
                if let Some(e) = e {
                    self.last_demux = Some((key, e));
                }
                e
            }
        }
    }

    /// Gives the NIC's frame processor a frame that is ready for it at `at`; returns when it is done (`at`
    /// itself when the NIC takes no time).
    #[inline(always)]
    fn nic_process(&mut self, at: Instant) -> Instant {
        if self.nic_frame_time.is_zero() {
            return at;
        }
        self.nic_busy = self.nic_busy.max(at) + self.nic_frame_time;
        self.nic_busy
    }
}

/// Where a packet is on its way. Eight bytes, which the send path copies whole from its endpoint's
/// [`Ep::start`] (built field by field, they were some eight instructions a packet: issue 25).
#[derive(Clone, Copy)]
struct Place {
    /// The packet's route ([`Routes::get`]), the index of the direction it is on in the route's hops, and
    /// whether that is the last (so that the per-packet path of a one-hop route never looks the route up).
    route: u32,
    hop: u8,
    last_hop: bool,
    /// A fragment of the segment's datagram, not the whole datagram: its description is the head of the
    /// path's `fragments` (kept apart so that the common, unfragmented packet stays small).
    fragment: bool,
}

#[derive(Clone)]
struct InFlight<S> {
    arrival: Instant,
    seg: S,
    at: Place,
    /// The sending endpoint (its host keys the receiving host's port table), and the endpoint it is for as
    /// the sender last heard from it ([`Ep::peer_ep`]).
    from: u32,
    to: u32,
}

impl<S: Segment> InFlight<S> {
    /// The flow a qdisc classifies the packet by (FQ-CoDel's hash of the 5-tuple, RFC 8290 §4.1.1): its
    /// route (source and destination hosts) and ports, mixed so that nearby values spread.
    fn flow(&self) -> u32 {
        let key = (self.at.route as u64) << 32 | (self.seg.src_port() as u64) << 16 | self.seg.dst_port() as u64;
        (stream_seed(0, key) >> 32) as u32
    }
}

/// A packet waiting in a generic-path qdisc, with what the delay line needs when it leaves.
struct Queued<S> {
    p: InFlight<S>,
    frag: Option<Fragment>,
    ip_len: u32,
}

/// A direction on the generic path: its qdisc, the packets its host's NIC has sent but that reach the qdisc
/// later (`ingress`, by time), and the one departure event in the queue.
struct Staged<S> {
    qdisc: Box<dyn Qdisc<Queued<S>>>,
    ingress: VecDeque<(Instant, Queued<S>)>,
    /// The departure event in the queue (its time and seq; an event with another seq is stale).
    scheduled: Option<Instant>,
    seq: u64,
    dropped: Vec<(PacketMeta, Queued<S>, DropReason)>,
    /// The last arrival on the delay line, which a frame may not overtake unless `reorder`.
    last_arrival: Instant,
    reorder: bool,
}

/// One link direction and the packets in flight on it.
struct Path<S> {
    link: LinkDirection,
    /// The host it delivers to.
    to: HostId,
    /// `None`: the drop-tail FIFO's fast path.
    staged: Option<Box<Staged<S>>>,
    in_flight: Ring<InFlight<S>>,
    /// The fragments among `in_flight`, in the same order.
    fragments: VecDeque<Fragment>,
    arrival_seq: u64,
    /// The largest datagram the direction carries (`u32::MAX`: no limit).
    mtu: u32,
    /// Receive coalescing at the host the direction delivers to: its hold (zero: off), the segments held
    /// for the batch being gathered, and how many more arrivals complete it.
    gro_hold: Duration,
    gro_held: Vec<S>,
    gro_left: u32,
    /// The receiving host takes a whole packet straight to its transport: no coalescing, no NIC frame time
    /// and no CPU model (one test on the per-packet path for the three).
    plain_rx: bool,
    /// Frames that reached the receiving host's NIC and wait for its frame processor, each with the instant
    /// it is done (`HostSpec::nic_frame_time`), and the sequence of their events.
    nic_rx: VecDeque<(Instant, InFlight<S>)>,
    nic_rx_seq: u64,
}

impl<S: Segment> Path<S> {
    /// How many of the packets in flight behind `first` (which has just arrived) join it in one coalesced
    /// packet: those that continue it and arrive within the hold, up to `GRO_MAX_SIZE`.
    fn gro_batch(&self, first: &InFlight<S>) -> u32 {
        let until = first.arrival + self.gro_hold;
        let mut size = first.seg.ip_len();
        let mut prev = &first.seg;
        let mut n = 0;
        for f in self.in_flight.iter() {
            if f.arrival > until
                || f.at.fragment
                || f.at.route != first.at.route
                || !S::coalesces(&first.seg, prev, &f.seg)
            {
                break;
            }
            size += f.seg.payload_len();
            if size > GRO_MAX_SIZE {
                break;
            }
            n += 1;
            prev = &f.seg;
        }
        n
    }
}

/// A host's CPU model, its backlog holding each segment with the host that sent it.
type HostCpu<S> = Cpu<(HostId, S)>;

/// What the per-packet path needs besides the endpoints: the clock, the event queue, the hosts, the path, the
/// CPU models and the probe. Kept apart from the endpoints so that an endpoint and these borrow side by side.
struct Io<T: Transport, P> {
    now: Instant,
    queue: EventQueue,
    hosts: Vec<Host<T::Config>>,
    paths: Vec<Path<T::Segment>>,
    routes: Routes,
    /// Per host, with the CPU cost model: its cores and its receive backlog.
    cpus: Vec<Option<HostCpu<T::Segment>>>,
    /// Either host has a CPU model: one test on the per-packet path when neither does.
    any_cpu: bool,
    data_segments: u64,
    probe: P,
}

/// The network: everything but the applications, which borrow it through [`Ctx`].
struct Net<T: Transport, P> {
    seed: u64,
    eps: Vec<Ep<T>>,
    io: Io<T, P>,
    /// Per host with a CPU model, its busy time at the window's ends.
    cpu_busy_at: Vec<[Duration; 2]>,
    /// Per application, the route to its peer (for the connections it opens).
    app_route: Vec<u32>,
    /// Endpoints an application acted on, in order; serviced after the application returns. The endpoint
    /// whose event is being handled (`current`) is serviced anyway and not recorded.
    touched: Vec<u32>,
    /// `touched` is not empty, or the measurement has not started: after an event, the touched endpoints
    /// are serviced and readiness is looked at (`World::service_touched`). One flag for the two tests
    /// after every event (issue 25).
    service_after: bool,
    current: u32,
    apps_ready: Vec<bool>,
    ready_count: usize,
    app_timer_seq: Vec<u64>,
    established_count: usize,
    finished_count: usize,
    /// An application asked to end the measurement now (handled after the event).
    end_requested: bool,
    /// What the event loop looks at after the event ([`World::attend`]): nothing for nearly every event of
    /// a run (one test instead of four), only the drain's end after the measurement, or everything.
    attention: Attention,
    /// Per application, on a host with a CPU model: the call it is in.
    calls: Vec<AppCall>,
}

/// What the event loop looks at after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attention {
    None,
    /// The measurement has ended and nothing else waits: only whether the drain is over. Half of
    /// flows-1000's events come after the measurement, and the full look at them cost a percent of its
    /// instructions (issue 25).
    Drain,
    /// The measurement has not started, endpoints wait to be woken, or an application asked to end.
    All,
}

/// A send or a receive call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Send,
    Recv,
}

/// An application's call whose work is still running on a core: its effect on the connection (the bytes
/// entering the send buffer or leaving the receive buffer) waits for the end of that work.
#[derive(Debug, Clone, Copy)]
struct Pending {
    conn: u32,
    op: Op,
    bytes: u64,
}

/// An application on a host with a CPU model is one thread: while a call of it runs, it makes no other
/// (a further call moves nothing and the connection is noted, as is any event it could not act on), and the
/// closes it asks for follow the call. When the call returns, the application hears of what it missed.
#[derive(Debug, Clone, Default)]
struct AppCall {
    pending: Option<Pending>,
    missed: Vec<u32>,
    closes: Vec<u32>,
}

/// The source of a host's call-completion events for core `k`.
fn call_source(h: HostId, k: usize) -> u32 {
    h.0 << 11 | k as u32
}

/// An application's view of its host.
struct Ctx<'a, T: Transport, P> {
    net: &'a mut Net<T, P>,
    host: HostId,
    app: u32,
}

impl<T: Transport, P: Probe<T>> Sockets for Ctx<'_, T, P> {
    fn now(&self) -> Instant {
        self.net.io.now
    }

    fn connect(&mut self, remote_port: u16) -> Result<ConnId, ConnectError> {
        let route = self.net.app_route[self.app as usize];
        let peer = self.net.io.routes.get(route).dst;
        let h = &mut self.net.io.hosts[self.host.index()];
        let (lo, hi) = h.ephemeral;
        let span = (hi - lo) as u32 + 1;
        for _ in 0..span {
            let p = h.next_ephemeral;
            h.next_ephemeral = if p >= hi { lo } else { p + 1 };
            if !h.ports.contains_key(&port_key(peer, p, remote_port)) {
                let e = self.net.create(self.host, self.app, (peer, route), p, remote_port, None);
                self.net.touch(e);
                return Ok(ConnId(e));
            }
        }
        Err(ConnectError::NoFreePort)
    }

    fn listen(&mut self, port: u16) {
        self.net.io.hosts[self.host.index()].listeners.insert(port, self.app);
    }

    #[inline(always)]
    fn send(&mut self, c: ConnId, bytes: u64) -> u64 {
        self.net.touch(c.0);
        if self.net.io.any_cpu && self.net.io.cpus[self.host.index()].is_some() {
            return self.net.call(self.host, self.app, c.0, Op::Send, bytes);
        }
        let conn = &mut self.net.eps[c.0 as usize].conn;
        let idle = conn.unsent_bytes() == 0;
        let n = conn.send(bytes);
        if idle {
            self.net.push_call(c.0, n);
        }
        n
    }

    #[inline(always)]
    fn recv(&mut self, c: ConnId, max: u64) -> u64 {
        self.net.touch(c.0);
        if self.net.io.any_cpu && self.net.io.cpus[self.host.index()].is_some() {
            return self.net.call(self.host, self.app, c.0, Op::Recv, max);
        }
        self.net.eps[c.0 as usize].conn.recv(max)
    }

    #[inline(always)]
    fn recv_to_eof(&mut self, c: ConnId, max: u64) -> (u64, bool) {
        // Under the CPU model the read is a call (`recv` makes it); else the connection is found once.
        if self.net.io.any_cpu {
            let n = self.recv(c, max);
            return (n, self.is_eof(c));
        }
        self.net.touch(c.0);
        let conn = &mut self.net.eps[c.0 as usize].conn;
        (conn.recv(max), conn.is_eof())
    }

    /// Services the endpoint now (what `after_io` does once the application returns), then reports whether
    /// the NIC is full for it; if it is, the endpoint joins the NIC's waiters so that the application hears
    /// `Writable` when the NIC has room. Off the per-packet path: only a writer that pushes calls it.
    fn push(&mut self, c: ConnId) -> bool {
        let e = c.0;
        self.net.service(e);
        let now = self.net.io.now;
        let ep = &mut self.net.eps[e as usize];
        if !ep.waiting && self.net.io.hosts[self.host.index()].nic.is_full(now) {
            self.net.io.wait_for_nic(ep, e);
        }
        ep.waiting
    }

    fn ports(&self, c: ConnId) -> (u16, u16) {
        let ep = &self.net.eps[c.0 as usize];
        (ep.local_port, ep.remote_port)
    }

    fn close(&mut self, c: ConnId) {
        self.net.touch(c.0);
        // In a call (CPU model): the close follows it, after the data the call is still writing.
        if self.net.io.any_cpu {
            let st = &mut self.net.calls[self.app as usize];
            if st.pending.is_some() {
                st.closes.push(c.0);
                return;
            }
        }
        self.net.eps[c.0 as usize].conn.close()
    }

    #[inline(always)]
    fn is_eof(&self, c: ConnId) -> bool {
        self.net.eps[c.0 as usize].conn.is_eof()
    }

    #[inline(always)]
    fn has_input(&self, c: ConnId) -> bool {
        self.net.eps[c.0 as usize].conn.has_input()
    }

    fn set_timer(&mut self, at: Instant) {
        let a = self.app as usize;
        self.net.app_timer_seq[a] += 1;
        self.net.io.queue.push(at.max(self.net.io.now), Class::App, self.app, self.net.app_timer_seq[a]);
    }

    fn ready(&mut self) {
        let a = self.app as usize;
        if !self.net.apps_ready[a] {
            self.net.apps_ready[a] = true;
            self.net.ready_count += 1;
        }
    }

    fn end_measurement(&mut self) {
        self.net.end_requested = true;
        self.net.attention = Attention::All;
    }
}

/// A connection's key in its host's port table: the remote host and both ports (two hosts may use the same
/// ephemeral port towards one server).
#[inline(always)]
fn port_key(remote: HostId, local: u16, remote_port: u16) -> u64 {
    (remote.0 as u64) << 32 | (local as u64) << 16 | remote_port as u64
}

impl<T: Transport, P: Probe<T>> Net<T, P> {
    /// A new endpoint on `host` for application `app` towards `peer` over `route`: an active open, or (with
    /// `syn`) a listener's child.
    fn create(
        &mut self,
        host: HostId,
        app: u32,
        (peer, route): (HostId, u32),
        local_port: u16,
        remote_port: u16,
        syn: Option<&T::Segment>,
    ) -> u32 {
        let id = self.eps.len() as u32;
        let ep = Endpoint {
            local_port,
            remote_port,
            iss: stream_seed(self.seed, 1000 + id as u64) as u32,
            random_seed: stream_seed(self.seed, 2_000_000 + id as u64),
        };
        let cfg = self.io.hosts[host.index()].cfg.clone();
        let conn = match syn {
            None => T::connect(cfg, ep),
            Some(seg) => match T::accept(cfg, ep, seg) {
                Ok(c) => c,
                Err(_) => return u32::MAX,
            },
        };
        self.io.hosts[host.index()].ports.insert(port_key(peer, local_port, remote_port), id);
        let hops = &self.io.routes.get(route).hops;
        let (first_dir, one_hop) = (hops[0], hops.len() == 1);
        let nic_rate = self.io.hosts[host.index()].nic.has_rate();
        let nic_plain = !nic_rate && self.io.hosts[host.index()].nic_frame_time.is_zero();
        let mtu_limited = self.io.paths[first_dir.index()].mtu != u32::MAX;
        self.eps.push(Ep {
            conn,
            host,
            peer,
            first_dir,
            start: Place { route, hop: 0, last_hop: one_hop, fragment: false },
            app,
            local_port,
            remote_port,
            nic_rate,
            nic_plain,
            mtu_limited,
            nic_frames: 0,
            timer_scheduled: Instant::FAR_FUTURE,
            timer_seq: 0,
            peer_ep: u32::MAX,
            waiting: false,
            touched: false,
            established: false,
            finished: false,
            released: false,
        });
        id
    }

    /// Notes that an application acted on endpoint `e`. The endpoint whose event is being handled needs no
    /// note (it is serviced anyway): the test is inline, the note out of line.
    #[inline(always)]
    fn touch(&mut self, e: u32) {
        if e != self.current {
            self.touch_other(e);
        }
    }

    #[inline(never)]
    fn touch_other(&mut self, e: u32) {
        let ep = &mut self.eps[e as usize];
        if !ep.touched {
            ep.touched = true;
            self.touched.push(e);
            self.service_after = true;
        }
    }

    /// Application `a`, in a call (CPU model), could not hear of endpoint `e`: it will when the call returns.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, a: u32, e: u32) {
        let missed = &mut self.calls[a as usize].missed;
        if !missed.contains(&e) {
            missed.push(e);
        }
    }

    /// Application `app` on host `h` (which has a CPU model) calls send or receive on endpoint `e`: the call
    /// is sized now (what the buffer would give), its work queued on a core, and its effect applied when
    /// that work completes (`World::on_call`). Returns the bytes the call moves, 0 if it would block or the
    /// application is already in a call. A call whose cost is zero takes effect at once.
    #[cold]
    #[inline(never)]
    fn call(&mut self, h: HostId, app: u32, e: u32, op: Op, bytes: u64) -> u64 {
        let st = &mut self.calls[app as usize];
        if st.pending.is_some() {
            if !st.missed.contains(&e) {
                st.missed.push(e);
            }
            return 0;
        }
        let conn = &mut self.eps[e as usize].conn;
        let n = match op {
            Op::Send => conn.send_room(bytes),
            Op::Recv => conn.readable().min(bytes),
        };
        if n == 0 {
            return 0;
        }
        let now = self.io.now;
        let cpu = self.io.cpus[h.index()].as_mut().expect("a call is charged to its host's CPU model");
        let cost = cpu.spec.call(n);
        if cost.is_zero() {
            return match op {
                Op::Send => {
                    let idle = conn.unsent_bytes() == 0;
                    let n = conn.send(n);
                    if idle {
                        self.push_call(e, n);
                    }
                    n
                }
                Op::Recv => conn.recv(n),
            };
        }
        let (core, done) = cpu.call(now, app, cost);
        if let Some(t) = done {
            cpu.call_seq += 1;
            self.io.queue.push(t, Class::Call, call_source(h, core), cpu.call_seq);
        }
        st.pending = Some(Pending { conn: e, op, bytes: n });
        n
    }

    /// The end of a send call that moved `n` bytes into endpoint `e`'s buffer: the data it may send leaves
    /// now, before the application's next call. Each call is a `tcp_sendmsg` of its own, which ends in
    /// `tcp_push` (Linux net/ipv4/tcp.c; BSD's `sosend` calls `tcp_output` per call through
    /// `pru_send`): netperf's first burst of eight 128-byte requests leaves as one 128-byte segment and
    /// seven that Nagle holds, not as one 1024-byte segment. Data only, with any due ACK riding on it; a
    /// pure ACK waits for the application's return, as `tcp_sendmsg` sends none (docs/classic.md § Today).
    /// Callers push only when the endpoint had nothing unsent before the call ([`Transport::unsent_bytes`]):
    /// a call that joins unsent data changes nothing the return's service would not send at the same
    /// instant, and a bulk writer's call per ACK would otherwise poll a full window each time.
    #[inline(always)]
    fn push_call(&mut self, e: u32, n: u64) {
        let ep = &mut self.eps[e as usize];
        if n > 0 && !ep.waiting {
            self.io.transmit(ep, e, true);
        }
    }

    /// Lets endpoint `e` send what it can, keeps its timer in the queue, and notes its state changes.
    #[inline(always)]
    fn service(&mut self, e: u32) {
        // One lookup of the endpoint for the whole service: the per-packet path is short enough that
        // repeated indexing shows in the instruction count.
        let ep = &mut self.eps[e as usize];
        ep.touched = false;
        if !ep.waiting {
            self.io.transmit(ep, e, false);
        }
        self.io.sync_timer(ep, e);
        // An open connection tests one flag and its state here; its end is noted out of line.
        if !ep.released && (ep.conn.is_finished() || ep.conn.is_closed()) {
            self.note_end(e);
        }
    }

    /// Endpoint `e` has finished (no more data either way) or is closed: it counts as finished, and once
    /// closed its port is free.
    #[cold]
    #[inline(never)]
    fn note_end(&mut self, e: u32) {
        let ep = &mut self.eps[e as usize];
        if !ep.finished && ep.conn.is_finished() {
            ep.finished = true;
            self.finished_count += 1;
            // Whether all are finished is asked in the full look after the event, which the drain's one
            // test leaves out ([`World::attend`]).
            self.attention = Attention::All;
        }
        if ep.conn.is_closed() {
            ep.released = true;
            let key = port_key(ep.peer, ep.local_port, ep.remote_port);
            let host = &mut self.io.hosts[ep.host.index()];
            if host.ports.get(&key) == Some(&e) {
                host.ports.remove(&key);
                host.last_demux = None;
            }
        }
    }
}

impl<T: Transport, P: Probe<T>> Io<T, P> {
    /// Charges work to host `h`'s CPU (which it has). Out of line: the cost model is off in most runs, and
    /// its code should not weigh on the per-packet path that runs without it.
    #[cold]
    #[inline(never)]
    fn charge(&mut self, h: HostId, cost: impl Fn(&CpuSpec) -> Duration) {
        let cpu = self.cpus[h.index()].as_mut().expect("only hosts with a CPU model are charged");
        let c = cost(&cpu.spec);
        cpu.charge(self.now, c);
    }

    /// A segment reached host `h`, which has a CPU model: `Some(seg)` if it takes effect now, `None` if it
    /// waits in the receive backlog. A coalesced batch costs one packet's processing (its `first` segment's);
    /// the others take effect with it.
    #[cold]
    #[inline(never)]
    fn cpu_receive(&mut self, h: HostId, src: HostId, seg: T::Segment, first: bool, last: bool) -> Option<T::Segment> {
        let now = self.now;
        let cpu = self.cpus[h.index()].as_mut().expect("only hosts with a CPU model have a backlog");
        let cost = match (first, seg.payload_len() > 0) {
            (false, _) => Duration::ZERO,
            (true, true) => cpu.spec.per_segment_in,
            (true, false) => cpu.spec.per_ack_in,
        };
        let done = cpu.receive(now, cost);
        if done == now && cpu.backlog.is_empty() {
            return Some(seg);
        }
        cpu.backlog.push_back((done, (src, seg), last));
        if cpu.backlog.len() == 1 {
            cpu.seq += 1;
            self.queue.push(done, Class::Cpu, h.0, cpu.seq);
        }
        None
    }

    /// Sends what endpoint `e` (`ep`, not waiting for NIC room) has to send; `before_app`: only what the
    /// event itself released, before the application runs (no pure ACK; `Transport::poll_transmit_before_app`).
    #[inline(always)]
    fn transmit(&mut self, ep: &mut Ep<T>, e: u32, before_app: bool) {
        let h = ep.host;
        loop {
            let full = ep.nic_rate && self.hosts[h.index()].nic.is_full(self.now);
            let room = if full { TxRoom::Full } else { TxRoom::Free };
            let seg = if before_app {
                ep.conn.poll_transmit_before_app(self.now, room)
            } else {
                ep.conn.poll_transmit(self.now, room)
            };
            match seg {
                Some(seg) => {
                    // The NIC's transmit completion, for TCP Small Queues.
                    let bytes = seg.ip_len();
                    match self.send_packet(h, ep, e, seg, bytes) {
                        Some(departs) if departs > self.now => ep.conn.on_departure(self.now, departs, bytes),
                        _ => {}
                    }
                    if before_app && ep.conn.before_app_done() {
                        break;
                    }
                }
                None => {
                    if ep.conn.stalled() {
                        self.wait_for_nic(ep, e);
                    }
                    break;
                }
            }
        }
    }

    /// Endpoint `e` found its host's NIC full: it waits for room. Out of line: most NICs never fill.
    #[cold]
    #[inline(never)]
    fn wait_for_nic(&mut self, ep: &mut Ep<T>, e: u32) {
        ep.waiting = true;
        let h = ep.host;
        let host = &mut self.hosts[h.index()];
        host.nic_waiters.push_back(e);
        if !host.nic_room_scheduled {
            if let Some(t) = host.nic.room_at(self.now) {
                host.nic_room_scheduled = true;
                host.nic_room_seq += 1;
                self.queue.push(t, Class::NicRoom, h.0, host.nic_room_seq);
            }
        }
    }

    /// Host `h` sends `seg` (`ip_len` bytes) of endpoint `ep` over its route. Returns when the packet leaves
    /// the host's NIC, if it was queued there whole.
    #[inline(always)]
    fn send_packet(&mut self, h: HostId, ep: &mut Ep<T>, e: u32, seg: T::Segment, ip_len: u32) -> Option<Instant> {
        if seg.payload_len() > 0 {
            self.data_segments += 1;
        }
        if self.any_cpu && self.cpus[h.index()].is_some() {
            let data = seg.payload_len() > 0;
            self.charge(h, |spec| if data { spec.per_segment_out } else { spec.per_ack_out });
        }
        let dir = ep.first_dir;
        if ep.mtu_limited && ip_len > self.paths[dir.index()].mtu {
            self.send_fragments(h, (ep.start.route, ep.start.last_hop), (e, ep.peer_ep), seg, ip_len);
            return None;
        }
        let departs = if ep.nic_plain {
            ep.nic_frames += 1;
            self.now
        } else {
            // Only under a drop-on-full reaction does a transport send into a full NIC: the frame is lost there.
            let host = &mut self.hosts[h.index()];
            let Some(departs) = host.nic.send(self.now, ip_len) else {
                self.probe.on_packet(self.now, PacketEvent::NicDropped { host: h }, &seg);
                return None;
            };
            host.nic_process(departs)
        };
        self.probe.on_packet(self.now, PacketEvent::Sent { host: h, departs }, &seg);
        let p = InFlight { arrival: departs, seg, at: ep.start, from: e, to: ep.peer_ep };
        self.offer(dir, ip_len, p, None);
        Some(departs)
    }

    /// Packet `p` (`ip_len` bytes, `frag` if a fragment) enters direction `dir` at `p.arrival` (when the
    /// sending NIC has sent it, or when it reached the forwarding host).
    #[inline(always)]
    fn offer(&mut self, dir: DirId, ip_len: u32, mut p: InFlight<T::Segment>, frag: Option<Fragment>) {
        let path = &mut self.paths[dir.index()];
        if path.staged.is_some() {
            self.offer_staged(dir, ip_len, p, frag);
            return;
        }
        match path.link.send(p.arrival, ip_len, p.seg.payload_len() > 0) {
            Verdict::Deliver(arrival) => {
                p.arrival = arrival;
                p.at.fragment = frag.is_some();
                path.in_flight.push_back(p);
                if let Some(frag) = frag {
                    path.fragments.push_back(frag);
                }
                if path.in_flight.len() == 1 {
                    path.arrival_seq += 1;
                    self.queue.push(arrival, Class::Arrival, dir.0, path.arrival_seq);
                }
            }
            Verdict::Drop(reason) => self.probe_drop(dir, reason, &p.seg, frag),
        }
    }

    #[inline(always)]
    fn probe_drop(&mut self, dir: DirId, reason: DropReason, seg: &T::Segment, frag: Option<Fragment>) {
        let ev = PacketEvent::LinkDropped { dir, reason };
        match frag {
            None => self.probe.on_packet(self.now, ev, seg),
            Some(f) => self.probe.on_fragment(self.now, ev, seg, f),
        }
    }

    /// The generic path's offer: the packet waits for its instant in `ingress` if it is not there yet, then
    /// the direction is pumped.
    #[inline(never)]
    fn offer_staged(&mut self, dir: DirId, ip_len: u32, p: InFlight<T::Segment>, frag: Option<Fragment>) {
        let path = &mut self.paths[dir.index()];
        path.link.count_offer();
        let st = path.staged.as_mut().expect("a staged direction");
        let at = p.arrival;
        // In time order: a forwarded packet may come at `now` behind a host's packet its NIC sends later.
        let pos = st.ingress.iter().rposition(|(t, _)| *t <= at).map_or(0, |i| i + 1);
        st.ingress.insert(pos, (at, Queued { p, frag, ip_len }));
        self.pump(dir);
    }

    /// Direction `dir` on the generic path at `now`: what has reached it enters the qdisc, the serializer, if
    /// free, takes what the qdisc gives, and the one departure event is set for the next instant either can
    /// act (the serializer's end, or the next packet due to reach the qdisc).
    fn pump(&mut self, dir: DirId) {
        let now = self.now;
        let path = &mut self.paths[dir.index()];
        let st = path.staged.as_mut().expect("a staged direction");
        while st.ingress.front().is_some_and(|(t, _)| *t <= now) {
            let (at, q) = st.ingress.pop_front().expect("checked");
            let meta = PacketMeta {
                wire_len: path.link.wire_len(q.ip_len),
                flow: q.p.flow(),
                ect: q.p.seg.ect() || q.p.seg.ce(),
                ce: q.p.seg.ce(),
                enqueued: at,
            };
            match st.qdisc.enqueue(at, meta, q) {
                Ok(()) => path.link.note_queue(st.qdisc.len_packets()),
                Err((q, reason)) => {
                    path.link.count_refused();
                    st.dropped.push((meta, q, reason));
                }
            }
        }
        while path.link.busy_until() <= now {
            let Some((meta, mut q)) = st.qdisc.dequeue(now, &mut st.dropped) else { break };
            // The mark travels in the segment (the receiving transport reads it) and in `ecn` (the next
            // qdisc on the route reads it).
            if meta.ce {
                q.p.seg.mark_ce();
            }
            match path.link.transmit(now, meta.wire_len, q.p.seg.payload_len() > 0) {
                Verdict::Deliver(arrival) => {
                    q.p.arrival = if st.reorder { arrival } else { arrival.max(st.last_arrival) };
                    st.last_arrival = st.last_arrival.max(q.p.arrival);
                    q.p.at.fragment = q.frag.is_some();
                    if let Some(f) = q.frag {
                        path.fragments.push_back(f);
                    }
                    // Sorted by arrival (equal arrivals in the order sent); a new head gets its own event.
                    let at = q.p.arrival;
                    let pos = path.in_flight.iter().rposition(|f| f.arrival <= at).map_or(0, |i| i + 1);
                    path.in_flight.insert(pos, q.p);
                    if pos == 0 {
                        path.arrival_seq += 1;
                        self.queue.push(at, Class::Arrival, dir.0, path.arrival_seq);
                    }
                }
                Verdict::Drop(reason) => st.dropped.push((meta, q, reason)),
            }
        }
        let mut dropped = std::mem::take(&mut st.dropped);
        let next = match (st.ingress.front(), st.qdisc.len_packets() > 0) {
            (Some(&(t, _)), true) => Some(t.min(path.link.busy_until()).max(now)),
            (Some(&(t, _)), false) => Some(t.max(path.link.busy_until())),
            (None, true) => Some(path.link.busy_until()),
            (None, false) => None,
        };
        if next != st.scheduled {
            st.scheduled = next;
            if let Some(t) = next {
                st.seq += 1;
                self.queue.push(t, Class::Depart, dir.0, st.seq);
            }
        }
        for (_, q, reason) in dropped.drain(..) {
            self.probe_drop(dir, reason, &q.p.seg, q.frag);
        }
        let st = self.paths[dir.index()].staged.as_mut().expect("a staged direction");
        st.dropped = dropped;
    }

    /// The departure event of `dir` (stale if the direction has rescheduled since).
    fn on_depart(&mut self, dir: DirId, seq: u64) {
        let st = self.paths[dir.index()].staged.as_mut().expect("a departure event has a staged direction");
        if st.seq != seq {
            return;
        }
        st.scheduled = None;
        self.pump(dir);
    }

    /// Sends a datagram larger than host `h`'s direction's MTU as IPv4 fragments (RFC 791 §3.2): payload cut
    /// at multiples of 8 bytes, each fragment with its own 20-byte header, queued in the NIC, serialized and
    /// lost on its own. Out of line: most paths have no MTU.
    #[cold]
    #[inline(never)]
    fn send_fragments(
        &mut self,
        h: HostId,
        (route, last_hop): (u32, bool),
        (from, to): (u32, u32),
        seg: T::Segment,
        ip_len: u32,
    ) {
        let now = self.now;
        let dir = self.routes.get(route).hops[0];
        let path = &self.paths[dir.index()];
        let payload = ip_len - IPV4_HEADER;
        let chunk = (path.mtu - IPV4_HEADER) / 8 * 8;
        let count = payload.div_ceil(chunk);
        let id = self.hosts[h.index()].next_ip_id;
        self.hosts[h.index()].next_ip_id = id.wrapping_add(1);
        let ip = &mut self.hosts[h.index()].ip;
        ip.out_frag_reqds += 1;
        ip.out_frag_creates += count as u64;
        for i in 0..count {
            let offset = i * chunk;
            let len = chunk.min(payload - offset);
            let frag = Fragment { id, offset, len, more: i + 1 < count, count };
            let Some(departs) = self.hosts[h.index()].nic.send(now, IPV4_HEADER + len) else {
                self.probe.on_fragment(now, PacketEvent::NicDropped { host: h }, &seg, frag);
                continue;
            };
            let departs = self.hosts[h.index()].nic_process(departs);
            self.probe.on_fragment(now, PacketEvent::Sent { host: h, departs }, &seg, frag);
            let at = Place { route, hop: 0, last_hop, fragment: true };
            let p = InFlight { arrival: departs, seg: seg.clone(), at, from, to };
            self.offer(dir, IPV4_HEADER + len, p, Some(frag));
        }
    }

    /// A fragment reached host `h`: `true` when it completes its datagram (RFC 791 §3.2 reassembly; a
    /// path direction is FIFO, so fragments never arrive twice).
    #[cold]
    #[inline(never)]
    fn reassemble(&mut self, h: HostId, frag: Fragment) -> bool {
        let now = self.now;
        let host = &mut self.hosts[h.index()];
        host.ip.reasm_reqds += 1;
        let got = host.reasm.entry(frag.id).or_insert(0);
        *got += 1;
        if *got == 1 && frag.count > 1 {
            host.reasm_deadlines.push_back((now + host.fragment_ttl, frag.id));
            if host.reasm_deadlines.len() == 1 {
                host.reasm_seq += 1;
                self.queue.push(now + host.fragment_ttl, Class::Reassembly, h.0, host.reasm_seq);
            }
        }
        if *got < frag.count {
            return false;
        }
        host.reasm.remove(&frag.id);
        host.ip.reasm_oks += 1;
        true
    }

    /// Host `h`'s reassembly timer: discards the datagrams whose time ran out incomplete.
    fn on_reassembly_timer(&mut self, h: HostId) {
        let now = self.now;
        let host = &mut self.hosts[h.index()];
        while let Some(&(deadline, id)) = host.reasm_deadlines.front() {
            if deadline > now {
                host.reasm_seq += 1;
                self.queue.push(deadline, Class::Reassembly, h.0, host.reasm_seq);
                break;
            }
            host.reasm_deadlines.pop_front();
            if host.reasm.remove(&id).is_some() {
                host.ip.reasm_fails += 1;
            }
        }
    }

    /// Another packet arrives at host `h` at this instant: the next event is an arrival or a NIC's hand-over
    /// (`Class::NicRx`) at `now` on a direction that ends at `h` (*One instant*).
    #[inline(always)]
    fn more_arrive_now(&self, h: HostId) -> bool {
        self.queue.next_at(self.now, Class::NicRx).is_some_and(|dir| self.paths[dir as usize].to == h)
    }

    /// Keeps the earliest deadline of endpoint `e` (`ep`) in the queue.
    #[inline(always)]
    fn sync_timer(&mut self, ep: &mut Ep<T>, e: u32) {
        // None as the end of time, which no scheduled event is later than: TCP's unarmed deadline is that
        // value already, and the test for `None` compiles away (issue 25).
        let want = ep.conn.poll_timeout().unwrap_or(Instant::FAR_FUTURE);
        if want < ep.timer_scheduled {
            ep.timer_scheduled = want;
            ep.timer_seq += 1;
            self.queue.push(want, Class::Timer, e, ep.timer_seq);
        }
    }
}

/// The engine: the network and the applications.
struct World<T: Transport, P> {
    net: Net<T, P>,
    apps: Vec<App>,
    app_host: Vec<HostId>,
    measure: Duration,
    measure_start: Option<Instant>,
    measure_end: Option<Instant>,
    /// The measurement's end plus [`DRAIN_LIMIT`]: the run stops after the first event past it.
    drain_deadline: Instant,
    control_seq: u64,
    /// The probe's sampling interval, and the seq of the one tick event that is current (an earlier one
    /// still queued when the ticks were re-phased to the measurement's start is skipped).
    tick: Option<Duration>,
    tick_seq: u64,
    /// Endpoints of one host that took a segment at this instant while more packets reach the host at it, in
    /// the order of their first: their applications hear of it once the instant's arrivals at the host are
    /// all in (*One instant*).
    woken: Vec<u32>,
}

impl<T: Transport, P: Probe<T>> World<T, P> {
    #[inline(always)]
    fn app_event(&mut self, a: u32, host: HostId, ev: Event) {
        let mut cx = Ctx { net: &mut self.net, host, app: a };
        self.apps[a as usize].on_event(ev, &mut cx);
    }

    /// Something happened to endpoint `e` (a segment, a timer, room in the NIC): tell its application what
    /// changed, then let it and whatever its application touched send.
    #[inline(always)]
    fn after_io(&mut self, e: u32) {
        self.net.current = e;
        // One lookup of the endpoint until the application runs: the per-packet path is short enough that
        // each repeated index shows in the instruction count.
        let mut ep = &mut self.net.eps[e as usize];
        if !ep.established {
            self.check_established(e);
            ep = &mut self.net.eps[e as usize];
        }
        let (a, host, established) = (ep.app, ep.host, ep.established);
        Self::before_app(&mut self.net.io, ep, e);
        self.after_app(a, host, e, established);
    }

    /// The stack sends what the event released before the application runs (a reply the application
    /// writes cannot join data that was free to go): `Transport::poll_transmit_before_app`.
    #[inline(always)]
    fn before_app(io: &mut Io<T, P>, ep: &mut Ep<T>, e: u32) {
        if !ep.waiting && ep.conn.may_send_before_app() {
            io.transmit(ep, e, true);
        }
    }

    /// The rest of [`World::after_io`]: the application (of an `established` endpoint) hears of it, then
    /// the endpoint and whatever the application touched send.
    #[inline(always)]
    fn after_app(&mut self, a: u32, host: HostId, e: u32, established: bool) {
        if established {
            self.app_io(a, host, e);
        }
        self.net.current = u32::MAX;
        self.net.service(e);
        debug_assert_eq!(self.net.service_after, !self.net.touched.is_empty() || self.measure_start.is_none());
        if self.net.service_after {
            self.service_touched();
        }
    }

    /// Endpoint `e` that was not established may be now: its application hears of it.
    #[cold]
    #[inline(never)]
    fn check_established(&mut self, e: u32) {
        let ep = &mut self.net.eps[e as usize];
        if ep.conn.is_established() {
            ep.established = true;
            self.net.established_count += 1;
            let (a, host) = (ep.app, ep.host);
            self.app_event(a, host, Event::Established(ConnId(e)));
        }
    }

    /// Tells application `a` (on `host`) that its established endpoint `e` may be readable or writable; an
    /// application in a call (CPU model) hears of it when the call returns.
    #[inline(always)]
    fn app_io(&mut self, a: u32, host: HostId, e: u32) {
        if self.net.io.any_cpu && self.net.calls[a as usize].pending.is_some() {
            self.net.miss(a, e);
            return;
        }
        let mut cx = Ctx { net: &mut self.net, host, app: a };
        self.apps[a as usize].on_io(ConnId(e), &mut cx);
    }

    /// Core `k` of the host in `source`'s completion event: if its head call is done (protocol work may have
    /// preempted it, then it is due later), the call takes effect, the application returns from it (its
    /// closes follow) and hears of what it missed meanwhile.
    #[cold]
    #[inline(never)]
    fn on_call(&mut self, source: u32) {
        let (h, k) = ((source >> 11) as usize, (source & 0x7ff) as usize);
        let now = self.net.io.now;
        let io = &mut self.net.io;
        let cpu = io.cpus[h].as_mut().expect("a call event has a CPU");
        let a = match cpu.complete(k, now) {
            Ok(a) => a,
            Err(later) => {
                cpu.call_seq += 1;
                io.queue.push(later, Class::Call, source, cpu.call_seq);
                return;
            }
        };
        if let Some(t) = cpu.next_done(k, now) {
            cpu.call_seq += 1;
            io.queue.push(t, Class::Call, source, cpu.call_seq);
        }
        let st = &mut self.net.calls[a as usize];
        let p = st.pending.take().expect("a completed call is its application's");
        let closes = std::mem::take(&mut st.closes);
        let mut missed = std::mem::take(&mut st.missed);
        let conn = &mut self.net.eps[p.conn as usize].conn;
        // Sized when it was issued: the buffer can only have gained room or data since, unless the
        // connection was reset meanwhile.
        let _moved = match p.op {
            Op::Send => conn.send(p.bytes),
            Op::Recv => conn.recv(p.bytes),
        };
        self.net.touch(p.conn);
        for c in closes {
            self.net.eps[c as usize].conn.close();
            self.net.touch(c);
        }
        if !missed.contains(&p.conn) {
            missed.insert(0, p.conn);
        }
        let host = self.app_host_of(a);
        for e in missed {
            if self.net.eps[e as usize].established {
                self.app_io(a, host, e);
            }
        }
        self.service_touched();
    }

    fn service_touched(&mut self) {
        let mut i = 0;
        while i < self.net.touched.len() {
            let e = self.net.touched[i];
            if self.net.eps[e as usize].touched {
                self.net.service(e);
            }
            i += 1;
        }
        self.net.touched.clear();
        if self.measure_start.is_none() && self.net.ready_count == self.apps.len() {
            self.start_measurement();
        }
        self.net.service_after = !self.net.touched.is_empty() || self.measure_start.is_none();
    }

    /// Every application is ready: the window opens for all of them at once.
    fn start_measurement(&mut self) {
        self.measure_start = Some(self.net.io.now);
        self.snapshot_cpu(0);
        self.control_seq += 1;
        self.net.io.queue.push(self.net.io.now + self.measure, Class::Control, 0, self.control_seq);
        self.broadcast(Event::MeasureStart);
        self.net.io.probe.on_measure_start(self.net.io.now);
        // Ticks from now on fall on multiples of the interval from the start of the measurement (clock edges
        // of the window), the first at its very start.
        if self.tick.is_some() {
            self.control_seq += 1;
            self.tick_seq = self.control_seq;
            self.net.io.queue.push(self.net.io.now, Class::Control, 1, self.tick_seq);
        }
    }

    /// The measurement is over (its length has passed, or an application ended it); once only.
    fn end_measurement(&mut self) {
        if self.measure_end.is_none() {
            self.measure_end = Some(self.net.io.now);
            self.drain_deadline = self.net.io.now + DRAIN_LIMIT;
            self.net.attention = Attention::All;
            self.snapshot_cpu(1);
            self.broadcast(Event::MeasureStop);
            self.net.io.probe.on_measure_stop(self.net.io.now);
        }
    }

    fn snapshot_cpu(&mut self, end: usize) {
        for (h, cpu) in self.net.io.cpus.iter().enumerate() {
            if let Some(cpu) = cpu {
                self.net.cpu_busy_at[h][end] = cpu.executed_by(self.net.io.now);
            }
        }
    }

    fn broadcast(&mut self, ev: Event) {
        for a in 0..self.apps.len() as u32 {
            let host = self.app_host_of(a);
            self.app_event(a, host, ev);
        }
        self.service_touched();
    }

    fn app_host_of(&self, a: u32) -> HostId {
        self.app_host[a as usize]
    }

    /// The packet at the head of `dir` arrives. The common packet (whole, at the end of its route, at a host
    /// whose NIC, coalescing and CPU take no part) reaches its transport where it lies in the direction's
    /// queue, and leaves the queue once its connection has taken it: a copy of the ~100-byte record out of
    /// the queue was a tenth of the engine's instructions per packet. Inlined into the event loop: as a call
    /// it saved and restored six registers and a 472-byte frame a packet (issue 25: bulk-1g −2.6 %). It was
    /// kept out of line while inlining it left the transport's calls it makes (`poll_timeout`,
    /// `may_send_before_app`) out of line instead; those are pinned inline now.
    #[inline(always)]
    fn on_arrival(&mut self, dir: DirId, seq: u64) {
        let io = &mut self.net.io;
        let now = io.now;
        let path = &mut io.paths[dir.index()];
        // A reordering direction gives a packet that overtook the head its own event; the old one is stale.
        if seq != path.arrival_seq {
            return;
        }
        let p = path.in_flight.front().expect("an arrival event has a packet");
        debug_assert_eq!(p.arrival, now);
        if let Some(next) = path.in_flight.get(1) {
            path.arrival_seq += 1;
            io.queue.push(next.arrival, Class::Arrival, dir.0, path.arrival_seq);
        }
        if !(p.at.last_hop && !p.at.fragment && path.plain_rx) {
            self.arrive_other(dir);
            return;
        }
        let h = path.to;
        io.probe.on_packet(now, PacketEvent::Delivered { dir }, &p.seg);
        #[cfg(debug_assertions)]
        let sender = self.net.eps[p.from as usize].host;
        // The endpoint the sender named holds the packet's ports on `h` unless released (then they may be
        // another's); else the port table answers.
        let (e, ep) = match self.net.eps.get_mut(p.to as usize) {
            Some(ep) if !ep.released => (p.to, ep),
            _ => {
                let src = self.net.eps[p.from as usize].host;
                let Some(e) = io.hosts[h.index()].demux(port_key(src, p.seg.dst_port(), p.seg.src_port())) else {
                    // A listener's or no socket's: out of the queue, then as any other packet.
                    let p = path.in_flight.pop_front().expect("an arrival event has a packet");
                    self.deliver(h, src, &p.seg, true);
                    return;
                };
                (e, &mut self.net.eps[e as usize])
            }
        };
        // What the port table answers for the packet's sender and ports (the sender read apart, in debug
        // builds only: the per-packet path indexes the endpoints once).
        #[cfg(debug_assertions)]
        assert_eq!(io.hosts[h.index()].ports.get(&port_key(sender, p.seg.dst_port(), p.seg.src_port())), Some(&e));
        ep.peer_ep = p.from;
        ep.conn.on_segment(now, &p.seg);
        path.in_flight.discard_front();
        // `after_segment` and `after_io` for an established endpoint, with the endpoint at hand: indexed
        // again there, it cost ~7 instructions a packet (issue 25).
        if self.woken.is_empty() && ep.established && !io.more_arrive_now(h) {
            self.net.current = e;
            let (a, host) = (ep.app, ep.host);
            Self::before_app(io, ep, e);
            self.after_app(a, host, e, true);
        } else {
            self.after_segment(h, e);
        }
    }

    /// Any other packet at the head of `dir`: on to the next direction of its route, into the receiving
    /// NIC's processor, or through reassembly, coalescing or a CPU model to its transport.
    #[inline(never)]
    fn arrive_other(&mut self, dir: DirId) {
        let io = &mut self.net.io;
        let path = &mut io.paths[dir.index()];
        let p = path.in_flight.pop_front().expect("an arrival event has a packet");
        if !p.at.last_hop {
            self.forward(dir, p);
            return;
        }
        if !io.hosts[path.to.index()].nic_frame_time.is_zero() {
            self.nic_receive(dir, p);
            return;
        }
        self.reach_host(dir, p);
    }

    /// A packet reached a host on its way: it goes on to the next direction of its route at once (a router
    /// with no queue of its own but the direction's qdisc). Out of line: the two-host shape has no transit.
    #[inline(never)]
    fn forward(&mut self, dir: DirId, mut p: InFlight<T::Segment>) {
        let io = &mut self.net.io;
        let frag = if p.at.fragment { io.paths[dir.index()].fragments.pop_front() } else { None };
        p.at.hop += 1;
        let hops = &io.routes.get(p.at.route).hops;
        let next = hops[p.at.hop as usize];
        p.at.last_hop = p.at.hop as usize + 1 == hops.len();
        let ip_len = match frag {
            Some(f) => IPV4_HEADER + f.len,
            None => p.seg.ip_len(),
        };
        p.arrival = io.now;
        let dst = io.paths[hops[hops.len() - 1].index()].to;
        let src = self.net.eps[p.from as usize].host;
        io.probe.on_forward(io.now, probe::Transit { src, dst, from: dir, to: next }, &p.seg, frag);
        io.offer(next, ip_len, p, frag);
    }

    /// A frame reached the NIC of the host at the end of `dir`, whose frame processor takes time: it waits
    /// for the processor. Out of line: most hosts' NICs take no time.
    #[inline(never)]
    fn nic_receive(&mut self, dir: DirId, p: InFlight<T::Segment>) {
        let io = &mut self.net.io;
        let path = &mut io.paths[dir.index()];
        let done = io.hosts[path.to.index()].nic_process(io.now);
        path.nic_rx.push_back((done, p));
        if path.nic_rx.len() == 1 {
            path.nic_rx_seq += 1;
            io.queue.push(done, Class::NicRx, dir.0, path.nic_rx_seq);
        }
    }

    /// The frame processor of the NIC at the end of `dir` finished the head of its receive queue.
    fn on_nic_rx(&mut self, dir: DirId) {
        let io = &mut self.net.io;
        let path = &mut io.paths[dir.index()];
        let (_, p) = path.nic_rx.pop_front().expect("a NIC event has a frame");
        if let Some(&(next, _)) = path.nic_rx.front() {
            path.nic_rx_seq += 1;
            io.queue.push(next, Class::NicRx, dir.0, path.nic_rx_seq);
        }
        self.reach_host(dir, p);
    }

    /// Packet `p` from `dir` reaches its host past the NIC: reassembly, receive coalescing, the CPU, TCP.
    #[inline(always)]
    fn reach_host(&mut self, dir: DirId, p: InFlight<T::Segment>) {
        let path = &mut self.net.io.paths[dir.index()];
        let now = self.net.io.now;
        let h = path.to;
        let src = self.net.eps[p.from as usize].host;
        if p.at.fragment {
            let frag = path.fragments.pop_front().expect("a fragment in flight is described");
            self.net.io.probe.on_fragment(now, PacketEvent::Delivered { dir }, &p.seg, frag);
            if !self.net.io.reassemble(h, frag) {
                return;
            }
        } else {
            self.net.io.probe.on_packet(now, PacketEvent::Delivered { dir }, &p.seg);
            if !path.gro_hold.is_zero() {
                if path.gro_left > 0 {
                    path.gro_held.push(p.seg);
                    path.gro_left -= 1;
                    if path.gro_left == 0 {
                        self.receive_batch(dir, src);
                    }
                    return;
                }
                let n = path.gro_batch(&p);
                if n > 0 {
                    path.gro_held.push(p.seg);
                    path.gro_left = n;
                    return;
                }
            }
        }
        if self.net.io.any_cpu && self.net.io.cpus[h.index()].is_some() {
            if let Some(seg) = self.net.io.cpu_receive(h, src, p.seg, true, true) {
                self.deliver(h, src, &seg, true);
            }
        } else {
            self.deliver(h, src, &p.seg, true);
        }
    }

    /// The batch the host at the end of `dir` gathered is complete: its segments reach the transport as one
    /// packet (charged to a CPU model as one). Out of line: most runs do not coalesce.
    #[inline(never)]
    fn receive_batch(&mut self, dir: DirId, src: HostId) {
        let h = self.net.io.paths[dir.index()].to;
        let mut held = std::mem::take(&mut self.net.io.paths[dir.index()].gro_held);
        let n = held.len();
        for (i, seg) in held.drain(..).enumerate() {
            let last = i + 1 == n;
            if self.net.io.any_cpu && self.net.io.cpus[h.index()].is_some() {
                if let Some(seg) = self.net.io.cpu_receive(h, src, seg, i == 0, last) {
                    self.deliver(h, src, &seg, last);
                }
            } else {
                self.deliver(h, src, &seg, last);
            }
        }
        self.net.io.paths[dir.index()].gro_held = held;
    }

    /// A host's CPU finished the head of its receive backlog: the segment reaches its transport.
    fn on_cpu(&mut self, h: HostId) {
        let cpu = self.net.io.cpus[h.index()].as_mut().expect("a CPU event has a CPU");
        let (_, (src, seg), last) = cpu.backlog.pop_front().expect("a CPU event has a segment");
        if let Some(&(next, _, _)) = cpu.backlog.front() {
            cpu.seq += 1;
            self.net.io.queue.push(next, Class::Cpu, h.0, cpu.seq);
        }
        self.deliver(h, src, &seg, last);
    }

    /// Hands a segment to the connection its ports name, or to a listener; counts it if there is neither.
    /// `last`: the packet's last segment (a coalesced batch's others only update the connection), after which
    /// the connection and its application act.
    fn deliver(&mut self, h: HostId, from: HostId, seg: &T::Segment, last: bool) {
        let now = self.net.io.now;
        let (dst, src) = (seg.dst_port(), seg.src_port());
        let key = port_key(from, dst, src);
        let e = match self.net.io.hosts[h.index()].demux(key) {
            Some(e) => e,
            None => {
                let listener = self.net.io.hosts[h.index()].listeners.get(&seg.dst_port()).copied();
                match listener {
                    Some(a) if seg.opens_connection() => {
                        let route = self.net.io.routes.route(h, from).expect("the reverse of a route is a route");
                        self.net.create(h, a, (from, route), seg.dst_port(), seg.src_port(), Some(seg))
                    }
                    _ => u32::MAX,
                }
            }
        };
        if e == u32::MAX {
            self.net.io.hosts[h.index()].no_socket += 1;
            self.net.io.probe.on_packet(now, PacketEvent::NoSocket { host: h }, seg);
            return;
        }
        self.net.eps[e as usize].conn.on_segment(now, seg);
        if last {
            self.after_segment(h, e);
        }
    }

    /// Endpoint `e` of host `h` took a packet's last segment: it and its application act now, or after the
    /// instant's other arrivals at `h` (*One instant*).
    #[inline(always)]
    fn after_segment(&mut self, h: HostId, e: u32) {
        if self.woken.is_empty() && !self.net.io.more_arrive_now(h) {
            self.after_io(e);
        } else {
            self.defer_app(e);
        }
    }

    /// Endpoint `e` took a segment while more packets arrive at this instant. As a kernel's receive path
    /// (the softirq) processes the whole batch the NIC has before the woken reader runs, each segment with
    /// its own output (`tcp_rcv_established` ends in `tcp_data_snd_check` and `tcp_ack_snd_check`), the
    /// endpoint is serviced now (what the segment released, an ACK it made due), and the application hears
    /// of it after the instant's last arrival ([`World::wake_deferred`]). Out of line: most packets arrive
    /// alone.
    #[cold]
    #[inline(never)]
    fn defer_app(&mut self, e: u32) {
        self.net.service(e);
        if !self.woken.contains(&e) {
            self.woken.push(e);
        }
        self.net.attention = Attention::All;
    }

    /// The instant's arrivals are all in: each endpoint that took a segment among them is serviced and its
    /// application told, in the order of their first segments.
    #[cold]
    #[inline(never)]
    fn wake_deferred(&mut self) {
        let mut woken = std::mem::take(&mut self.woken);
        for &e in &woken {
            self.after_io(e);
        }
        woken.clear();
        self.woken = woken;
    }

    fn on_timer(&mut self, e: u32) {
        let now = self.net.io.now;
        let ep = &mut self.net.eps[e as usize];
        if ep.timer_scheduled == now {
            ep.timer_scheduled = Instant::FAR_FUTURE;
        }
        if ep.conn.poll_timeout().is_some_and(|t| t <= now) {
            ep.conn.on_timeout(now);
            let h = ep.host;
            if self.net.io.any_cpu && self.net.io.cpus[h.index()].is_some() {
                self.net.io.charge(h, |spec| spec.per_timer);
            }
            self.after_io(e);
        } else {
            self.net.io.sync_timer(ep, e);
        }
    }

    fn on_nic_room(&mut self, h: HostId) {
        let host = &mut self.net.io.hosts[h.index()];
        host.nic_room_scheduled = false;
        let n = host.nic_waiters.len();
        for _ in 0..n {
            let Some(e) = self.net.io.hosts[h.index()].nic_waiters.pop_front() else { break };
            self.net.eps[e as usize].waiting = false;
            self.after_io(e);
        }
    }

    fn tick(&mut self) {
        self.net.io.probe.on_tick(self.net.io.now, Endpoints { eps: &self.net.eps });
        let io = &mut self.net.io;
        io.probe.on_link_tick(io.now, Links { paths: &io.paths, now: io.now });
    }

    /// What the event loop looks at after an event while `Net::attention` is set: the instant's deferred
    /// wake-ups once its arrivals are in, an end an application asked for, the drain after the measurement
    /// and the connect limit. Returns whether the run is over.
    #[inline(always)]
    fn attend(&mut self) -> bool {
        if self.net.attention == Attention::Drain {
            debug_assert!(self.woken.is_empty() && !self.net.end_requested && self.measure_start.is_some());
            // Only the deadline: the count of finished endpoints grows in `note_end` alone, which sets
            // `Attention::All` (one test less on half of flows-1000's events: issue 25).
            let now = self.net.io.now;
            let over = now > self.drain_deadline;
            debug_assert!(!self.all_finished());
            debug_assert_eq!(over, self.measure_end.is_some_and(|end| now.saturating_since(end) > DRAIN_LIMIT));
            return over;
        }
        self.attend_all()
    }

    #[inline(never)]
    fn attend_all(&mut self) -> bool {
        if !self.woken.is_empty() && !self.net.io.more_arrive_now(self.net.eps[self.woken[0] as usize].host) {
            self.wake_deferred();
        }
        if self.net.end_requested {
            self.net.end_requested = false;
            if self.measure_start.is_some() {
                self.end_measurement();
            }
        }
        if let Some(end) = self.measure_end {
            if self.all_finished() || self.net.io.now.saturating_since(end) > DRAIN_LIMIT {
                return true;
            }
        }
        if self.measure_start.is_none() && self.net.io.now > Instant::ZERO + CONNECT_LIMIT {
            return true;
        }
        self.net.attention = if !self.woken.is_empty() || self.measure_start.is_none() {
            Attention::All
        } else if self.measure_end.is_some() {
            Attention::Drain
        } else {
            Attention::None
        };
        false
    }

    fn all_finished(&self) -> bool {
        self.net.finished_count == self.net.eps.len()
    }
}

/// Runs one simulation with no probe. Pure: the same spec and seed give the same result, bit for bit.
pub fn run<T: Transport>(spec: &SimSpec<T::Config>, seed: u64) -> Result<SimRun<T::Stats>, SimError>
where
    T::Config: Clone,
{
    run_with::<T, ()>(spec, seed, &mut ())
}

/// Runs one simulation, telling `probe` what happens.
pub fn run_with<T: Transport, P: Probe<T>>(
    spec: &SimSpec<T::Config>,
    seed: u64,
    probe: &mut P,
) -> Result<SimRun<T::Stats>, SimError>
where
    T::Config: Clone,
{
    // A host's NIC frames as the first link it is attached to does.
    let mut first_out: Vec<Option<DirId>> = vec![None; spec.hosts.len()];
    for (l, link) in spec.links.iter().enumerate() {
        let l = LinkId(l as u32);
        for (h, d) in [(link.a, l.forward()), (link.b, l.backward())] {
            first_out[h.index()].get_or_insert(d);
        }
    }
    let host = |h: usize| {
        let s = &spec.hosts[h];
        let framing = first_out[h].map_or(tcplab_link::Framing::Ethernet, |d| spec.link(d).framing);
        Host {
            cfg: Arc::new(s.transport.clone()),
            nic: NicQueue::new(s.nic_rate, framing, s.txqueuelen),
            nic_waiters: VecDeque::new(),
            nic_room_scheduled: false,
            nic_room_seq: 0,
            ports: FxHashMap::default(),
            last_demux: None,
            listeners: FxHashMap::default(),
            ephemeral: s.ephemeral_ports,
            next_ephemeral: s.ephemeral_ports.0,
            no_socket: 0,
            reasm: FxHashMap::default(),
            reasm_deadlines: VecDeque::new(),
            reasm_seq: 0,
            fragment_ttl: s.fragment_ttl,
            ip: IpStats::default(),
            next_ip_id: 0,
            nic_frame_time: s.nic_frame_time,
            nic_busy: Instant::ZERO,
        }
    };
    let routes = Routes::new(spec.hosts.len(), &spec.links);
    let path = |d: usize| {
        let dir = DirId(d as u32);
        let cfg = spec.link(dir);
        let to = routes.to(dir);
        Path {
            link: LinkDirection::new(cfg, stream_seed(seed, tcplab_link::direction_stream(d as u64))),
            to,
            staged: cfg.is_staged().then(|| {
                Box::new(Staged {
                    qdisc: qdisc::build(&cfg.qdisc, cfg.queue, stream_seed(seed, tcplab_link::qdisc_stream(d as u64))),
                    ingress: VecDeque::new(),
                    scheduled: None,
                    seq: 0,
                    dropped: Vec::new(),
                    last_arrival: Instant::ZERO,
                    reorder: cfg.reorder,
                })
            }),
            // The two-host shape's directions carry every packet of the run: room up front spares regrowth.
            in_flight: Ring::with_capacity(if spec.links.len() == 1 { 1024 } else { 16 }),
            fragments: VecDeque::new(),
            arrival_seq: 0,
            mtu: cfg.mtu.map_or(u32::MAX, |m| {
                assert!(m.bytes() >= 68, "an MTU below RFC 791's 68 bytes (the lab refuses it)");
                m.bytes().min(u32::MAX as u64) as u32
            }),
            gro_hold: spec.hosts[to.index()].rx_coalesce,
            gro_held: Vec::new(),
            gro_left: 0,
            plain_rx: {
                let h = &spec.hosts[to.index()];
                h.rx_coalesce.is_zero() && h.nic_frame_time.is_zero() && h.cpu.is_none()
            },
            nic_rx: VecDeque::new(),
            nic_rx_seq: 0,
        }
    };
    let paths: Vec<_> = (0..2 * spec.links.len()).map(path).collect();
    let mut routes = routes;
    let mut app_route = Vec::with_capacity(spec.apps.len());
    for a in &spec.apps {
        // An application that only listens has no use for a route; one that connects needs it.
        app_route.push(routes.route(a.host, a.peer).map_err(|e| SimError::NoRoute { from: e.from, to: e.to })?);
    }
    let n_apps = spec.apps.len();
    let mut w: World<T, &mut P> = World {
        net: Net {
            seed,
            eps: Vec::new(),
            io: Io {
                now: Instant::ZERO,
                queue: EventQueue::new(),
                hosts: (0..spec.hosts.len()).map(host).collect(),
                paths,
                routes,
                cpus: spec.hosts.iter().map(|h| h.cpu.clone().map(Cpu::new)).collect(),
                any_cpu: spec.hosts.iter().any(|h| h.cpu.is_some()),
                data_segments: 0,
                probe,
            },
            cpu_busy_at: vec![[Duration::ZERO; 2]; spec.hosts.len()],
            app_route,
            touched: Vec::new(),
            service_after: true,
            current: u32::MAX,
            apps_ready: vec![false; n_apps],
            ready_count: 0,
            app_timer_seq: vec![0; n_apps],
            established_count: 0,
            finished_count: 0,
            end_requested: false,
            attention: Attention::All,
            calls: vec![AppCall::default(); n_apps],
        },
        apps: spec.apps.iter().map(|a| a.app.clone()).collect(),
        app_host: spec.apps.iter().map(|a| a.host).collect(),
        measure: spec.measure,
        measure_start: None,
        measure_end: None,
        drain_deadline: Instant::FAR_FUTURE,
        control_seq: 0,
        tick: None,
        tick_seq: 0,
        woken: Vec::new(),
    };
    let tick = w.net.io.probe.tick_interval().filter(|d| !d.is_zero());
    w.tick = tick;
    if let Some(d) = tick {
        w.control_seq += 1;
        w.tick_seq = w.control_seq;
        w.net.io.queue.push(Instant::ZERO + d, Class::Control, 1, w.control_seq);
    }
    w.broadcast(Event::Start);
    while let Some(ev) = w.net.io.queue.pop() {
        w.net.io.now = ev.time;
        if w.net.io.queue.popped().is_multiple_of(progress::EVERY) {
            progress::publish(ev.time);
        }
        match ev.class {
            Class::Arrival => w.on_arrival(DirId(ev.source), ev.seq),
            Class::NicRx => w.on_nic_rx(DirId(ev.source)),
            Class::Depart => w.net.io.on_depart(DirId(ev.source), ev.seq),
            Class::Timer => w.on_timer(ev.source),
            Class::NicRoom => w.on_nic_room(HostId(ev.source)),
            Class::App => {
                let host = w.app_host_of(ev.source);
                w.app_event(ev.source, host, Event::Timer);
                w.service_touched();
            }
            // Control source 0 ends the measurement; source 1 is a probe's tick, which schedules the next
            // (a tick superseded when the measurement started is dropped).
            Class::Control if ev.source == 1 => {
                if ev.seq == w.tick_seq {
                    w.tick();
                    if let Some(d) = tick {
                        w.control_seq += 1;
                        w.tick_seq = w.control_seq;
                        w.net.io.queue.push(w.net.io.now + d, Class::Control, 1, w.control_seq);
                    }
                }
            }
            Class::Control => w.end_measurement(),
            Class::Cpu => w.on_cpu(HostId(ev.source)),
            Class::Reassembly => w.net.io.on_reassembly_timer(HostId(ev.source)),
            Class::Call => w.on_call(ev.source),
        }
        if w.net.attention != Attention::None && w.attend() {
            break;
        }
    }
    if w.measure_start.is_none() {
        return Err(SimError::NotEstablished { established: w.net.established_count, created: w.net.eps.len() });
    }
    // Everything went quiet before the end of the measurement (the senders' data was all delivered).
    w.end_measurement();
    let now = w.net.io.now;
    let endpoints = w
        .net
        .eps
        .iter()
        .enumerate()
        .map(|(i, ep)| EndpointReport {
            id: i as u32,
            host: ep.host,
            peer: ep.peer,
            local_port: ep.local_port,
            remote_port: ep.remote_port,
            app: ep.app as usize,
            state: ep.conn.state_name(),
            stats: ep.conn.stats(now),
        })
        .collect();
    let cpu = (w.net.io.cpus.iter().zip(&w.net.cpu_busy_at))
        .map(|(c, at)| {
            c.as_ref().map(|c| CpuReport {
                cores: c.spec.cores.max(1),
                busy_window: at[1].saturating_sub(at[0]),
                busy_total: c.busy,
            })
        })
        .collect();
    let hosts = &w.net.io.hosts;
    let paths = &w.net.io.paths;
    // The frames of plain NICs were counted by their endpoints.
    let mut nic_stats: Vec<_> = hosts.iter().map(|h| h.nic.stats()).collect();
    for ep in &w.net.eps {
        nic_stats[ep.host.index()].frames_sent += ep.nic_frames;
    }
    Ok(SimRun {
        apps: w.apps,
        endpoints,
        links: paths.iter().map(|p| p.link.stats()).collect(),
        qdiscs: paths.iter().map(|p| p.staged.as_ref().map(|s| *s.qdisc.stats())).collect(),
        nics: nic_stats,
        no_socket: hosts.iter().map(|h| h.no_socket).collect(),
        ip: hosts.iter().map(|h| h.ip).collect(),
        cpu,
        end_time: now,
        events: w.net.io.queue.popped(),
        data_segments: w.net.io.data_segments,
    })
}
