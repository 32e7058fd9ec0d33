//! Flows scenarios on the simulator: a `[dumbbell]` (N flows, each from its sender through its own access
//! link to the left router, across the shared bottleneck to the right router and on to its receiver;
//! docs/topology.md § Flows that share a bottleneck) or a network of `[[host]]` and `[[link]]` tables with
//! flows between any two hosts (§ Networks).

use tcplab_link::{LinkConfig, QueueLimit};
use tcplab_sim::{AppSpec, DirId, FlowId, HostId, LinkId, LinkSpec, Routes, SimError, SimSpec};
use tcplab_tcp::{Connection, TcpConfig};
use tcplab_transport::{Stats, Transport};
use tcplab_units::{Duration, Instant};
use tcplab_workload::{
    App, MsgBook, MsgReceiver, MsgReceiverConfig, MsgSender, MsgSenderConfig, Opening, Report, Role, RrClient,
    RrClientConfig, RrServer, RrServerConfig, Stream, StreamConfig,
};

pub use crate::result::{jain_index, FlowResult, FlowSamples, FlowSeries, FlowsAggregate};
use crate::result::{BackendRun, ConnectionResult, EngineCounters, Links};
use crate::scenario::{Dumbbell, Flow, FlowKind, Scenario};
use crate::sim_backend::{host_spec, link_counters, nic_counters, SERVER_PORT};

/// Samples every flow's measured end on every tick (see [`FlowSeries`]).
struct FlowSeriesProbe {
    interval: Duration,
    last_tick: Instant,
    /// Per flow: the host and port of the end it measures (the receiver's listening port, or an rr
    /// client's peer port), whether that is an rr client, and the bytes its application read so far.
    ends: Vec<(HostId, u16, bool)>,
    /// Bytes read so far by each connection end (by id), and the response size of rr flows.
    read: Vec<u64>,
    response: Vec<u64>,
    /// Per flow: the last tick at which an rr flow had completed a transaction.
    last_done: Vec<Option<Instant>>,
    series: FlowSeries,
    /// The declared link directions' queues, on the same ticks.
    queues: crate::queues::QueueProbe,
}

impl tcplab_sim::Probe<Connection> for FlowSeriesProbe {
    fn tick_interval(&self) -> Option<Duration> {
        Some(self.interval)
    }

    fn on_measure_start(&mut self, now: Instant) {
        self.series.axis.measure_start_s = Some(crate::probes::exact_secs(now.as_nanos()));
        tcplab_sim::Probe::<Connection>::on_measure_start(&mut self.queues, now);
    }

    fn on_measure_stop(&mut self, now: Instant) {
        self.series.axis.measure_end_s = Some(crate::probes::exact_secs(now.as_nanos()));
        tcplab_sim::Probe::<Connection>::on_measure_stop(&mut self.queues, now);
    }

    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, tcplab_wire::TcpSegment>) {
        tcplab_sim::Probe::<Connection>::on_link_tick(&mut self.queues, now, links);
    }

    fn on_tick(&mut self, now: Instant, endpoints: tcplab_sim::Endpoints<'_, Connection>) {
        let span = now.saturating_since(self.last_tick);
        if span.is_zero() {
            return;
        }
        self.last_tick = now;
        let secs = span.as_secs_f64();
        let mut step = vec![0u64; self.ends.len()];
        for ep in endpoints.iter() {
            let id = ep.id as usize;
            if id >= self.read.len() {
                self.read.resize(id + 1, 0);
            }
            let e = ep.conn.estats_at(now);
            let read = crate::probes::delivered_to_app(ep.conn, &e);
            let d = read.saturating_sub(self.read[id]);
            self.read[id] = read;
            let flow = self.ends.iter().position(|&(h, port, rr)| {
                h == ep.host && if rr { ep.remote_port == port } else { ep.local_port == port }
            });
            if let Some(f) = flow {
                step[f] += d;
            }
        }
        self.series.axis.t_s.push(crate::probes::exact_secs(now.as_nanos()));
        for (f, out) in self.series.flows.iter_mut().enumerate() {
            let rr = self.ends[f].2;
            out.values.push(if rr {
                // One transaction at a time, each starting as the last one ends: the n completed since
                // the last tick that saw one took the time since then (to within a tick).
                let n = step[f] / self.response[f].max(1);
                if n == 0 {
                    None
                } else {
                    let since = self.last_done[f].map_or(span, |t| now.saturating_since(t));
                    self.last_done[f] = Some(now);
                    Some(since.as_secs_f64() * 1e3 / n as f64)
                }
            } else {
                Some(step[f] as f64 * 8.0 / secs / 1e6)
            });
        }
    }
}

/// Host ids of the dumbbell: sender i, receiver i, the routers.
struct Layout {
    n: u32,
}

impl Layout {
    fn sender(&self, i: u32) -> HostId {
        HostId(i)
    }
    fn receiver(&self, i: u32) -> HostId {
        HostId(self.n + i)
    }
    fn left(&self) -> HostId {
        HostId(2 * self.n)
    }
    fn right(&self) -> HostId {
        HostId(2 * self.n + 1)
    }
}

/// An access link: the bottleneck's framing and a queue deep enough never to be the one that fills.
fn access(d: &Dumbbell, delay: Duration) -> LinkConfig {
    LinkConfig {
        rate: d.access_rate,
        delay,
        queue: QueueLimit::Packets(10_000),
        framing: d.bottleneck.framing,
        loss: Default::default(),
        mtu: None,
        tick: None,
        idle_credit: d.bottleneck.idle_credit,
        qdisc: Default::default(),
        jitter: None,
        reorder: false,
    }
}

/// A flows scenario as the engine runs it: its spec (apps 2i and 2i + 1 are flow i's receiver-side and
/// sender-side applications), each flow's round-trip propagation delay, and the link direction shown as
/// the point's `links.up` (its opposite as `links.down`).
pub struct Placed {
    pub spec: SimSpec<TcpConfig>,
    pub base_rtt_ms: Vec<f64>,
    pub shown: DirId,
    /// The hosts whose NICs are shown as the client's and the server's (flow 0's ends).
    pub nics: (HostId, HostId),
}

/// Flow `i`'s two applications: the receiver-side one (a stream's reader, an rr flow's server) listening
/// on `port`, and the sender-side one, which connects to it.
fn flow_apps(f: &Flow, i: u32, sender: HostId, receiver: HostId, port: u16) -> [AppSpec; 2] {
    // A flow starting at 0 s holds the measurement until it is connected; a later one joins it.
    let gates = f.start.is_zero();
    let start = Instant::ZERO + f.start;
    let (server, client) = match f.kind {
        FlowKind::Stream => (
            App::Stream(Stream::new(StreamConfig {
                opening: Opening::Accept { port, ports: 1, connections: 1 },
                role: Role::Receive,
                gates_measurement: gates,
            })),
            App::Stream(Stream::new(StreamConfig {
                opening: Opening::Connect { connections: 1, port, ports: 1, at: start, spacing: Duration::ZERO },
                role: Role::Send { message: f.message.map_or(1, |m| m.bytes()) },
                gates_measurement: gates,
            })),
        ),
        FlowKind::Rr => {
            let (request, response) = (f.request.map_or(1, |b| b.bytes()), f.response.map_or(1, |b| b.bytes()));
            (
                App::RrServer(RrServer::new(RrServerConfig {
                    port,
                    ports: 1,
                    connections: u32::from(gates),
                    request,
                    response,
                })),
                App::RrClient(RrClient::new(RrClientConfig {
                    connections: 1,
                    port,
                    ports: 1,
                    at: start,
                    spacing: Duration::ZERO,
                    request,
                    response,
                    burst: 0,
                    per_transaction: false,
                    port_retry: crate::sim_backend::CRR_PORT_RETRY,
                })),
            )
        }
        FlowKind::Msg => {
            // A book per flow and per spec: this flow's writer stamps reach this flow's reader only.
            let book = MsgBook::default();
            let message = f.message.map_or(1, |m| m.bytes());
            (
                App::MsgReceiver(MsgReceiver::new(MsgReceiverConfig {
                    port,
                    ports: 1,
                    connections: u32::from(gates),
                    message,
                    count: None,
                    book: book.clone(),
                })),
                App::MsgSender(MsgSender::new(MsgSenderConfig {
                    connections: 1,
                    port,
                    ports: 1,
                    at: start,
                    spacing: Duration::ZERO,
                    message,
                    count: None,
                    interval: f.interval,
                    book,
                })),
            )
        }
    };
    [
        AppSpec { host: receiver, peer: sender, flow: FlowId(i), app: server },
        AppSpec { host: sender, peer: receiver, flow: FlowId(i), app: client },
    ]
}

/// The simulator's input for a `[dumbbell]` scenario. Link 0 is the bottleneck (its forward direction is
/// the senders' data); apps 2i and 2i + 1 are flow i's receiver-side and sender-side applications.
pub fn dumbbell_spec(s: &Scenario) -> SimSpec<TcpConfig> {
    place_dumbbell(s).spec
}

fn place_dumbbell(s: &Scenario) -> Placed {
    let d = s.dumbbell.as_ref().expect("a [dumbbell] scenario");
    let n = s.flow.len() as u32;
    let at = Layout { n };
    let mut links =
        vec![LinkSpec { a: at.left(), b: at.right(), forward: d.bottleneck.clone(), backward: d.reverse.clone() }];
    let mut hosts = Vec::with_capacity(2 * n as usize + 2);
    let mut apps = Vec::with_capacity(2 * n as usize);
    let mut base_rtt_ms = Vec::with_capacity(n as usize);
    for (i, f) in s.flow.iter().enumerate() {
        let i = i as u32;
        let a = access(d, f.access_delay);
        links.push(LinkSpec { a: at.sender(i), b: at.left(), forward: a.clone(), backward: a });
        let a = access(d, Duration::ZERO);
        links.push(LinkSpec { a: at.right(), b: at.receiver(i), forward: a.clone(), backward: a });
        apps.extend(flow_apps(f, i, at.sender(i), at.receiver(i), SERVER_PORT));
        base_rtt_ms.push(
            (2 * f.access_delay.as_nanos() + d.bottleneck.delay.as_nanos() + d.reverse.delay.as_nanos()) as f64 / 1e6,
        );
    }
    let flow_host = |f: &crate::scenario::Flow| {
        host_spec(&crate::scenario::Host {
            stack: f.stack.clone(),
            transports: crate::host_transports::HostTransports::new(f.tcp.clone()),
            host: crate::scenario::Nic::default(),
        })
    };
    hosts.extend(s.flow.iter().map(flow_host));
    hosts.extend(s.flow.iter().map(flow_host));
    // The routers run no application: their stack is never used.
    hosts.push(host_spec(&s.client));
    hosts.push(host_spec(&s.client));
    Placed {
        spec: SimSpec { hosts, links, apps, measure: s.test.duration },
        base_rtt_ms,
        shown: LinkId(0).forward(),
        nics: (at.sender(0), at.receiver(0)),
    }
}

/// The simulator's input for a network of `[[host]]` and `[[link]]` tables: host i and link i as the file
/// lists them, flow i's receiver listening on port 5001 + i (two flows may end on one host), and each
/// flow's base RTT the delays of its route there and back (the engine's routes: fewest hops, then the
/// lowest link ids). The direction shown as `links.up` is the slowest (the first of equals).
pub fn place_network(s: &Scenario) -> Placed {
    let hosts: Vec<_> = s
        .host
        .iter()
        .map(|h| {
            host_spec(&crate::scenario::Host {
                stack: h.stack.clone(),
                transports: crate::host_transports::HostTransports::new(h.tcp.clone()),
                host: crate::scenario::Nic::default(),
            })
        })
        .collect();
    let id = |name: &str| HostId(s.host_index(name).expect("a resolved network names its hosts") as u32);
    let links: Vec<LinkSpec> = s
        .link
        .iter()
        .map(|l| LinkSpec { a: id(&l.a), b: id(&l.b), forward: l.forward.clone(), backward: l.backward.clone() })
        .collect();
    let mut routes = Routes::new(hosts.len(), &links);
    let mut apps = Vec::with_capacity(2 * s.flow.len());
    let mut base_rtt_ms = Vec::with_capacity(s.flow.len());
    let dir = |d: DirId| {
        if d.index().is_multiple_of(2) {
            &links[d.link().index()].forward
        } else {
            &links[d.link().index()].backward
        }
    };
    for (i, f) in s.flow.iter().enumerate() {
        let (src, dst) = (id(f.from.as_deref().unwrap_or_default()), id(f.to.as_deref().unwrap_or_default()));
        apps.extend(flow_apps(f, i as u32, src, dst, flow_port(s, i)));
        let mut rtt = 0u64;
        for (a, b) in [(src, dst), (dst, src)] {
            if let Ok(r) = routes.route(a, b) {
                rtt += routes.get(r).hops.iter().map(|&d| dir(d).delay.as_nanos()).sum::<u64>();
            }
        }
        base_rtt_ms.push(rtt as f64 / 1e6);
    }
    let shown =
        (0..2 * links.len() as u32).map(DirId).min_by_key(|&d| (dir(d).rate.bps(), d.0)).expect("a network has links");
    let f0 = &s.flow[0];
    let nics = (id(f0.from.as_deref().unwrap_or_default()), id(f0.to.as_deref().unwrap_or_default()));
    Placed { spec: SimSpec { hosts, links, apps, measure: s.test.duration }, base_rtt_ms, shown, nics }
}

/// The engine's input for a flows scenario of either shape.
pub fn place(s: &Scenario) -> Placed {
    if s.is_network() {
        place_network(s)
    } else {
        place_dumbbell(s)
    }
}

/// The opposite direction of `d` on its link.
fn opposite(d: DirId) -> DirId {
    DirId(d.0 ^ 1)
}

/// Per flow, in flow order: its sender's host, its receiver's host and the port the receiver listens on.
/// A packet's hosts follow from one of them and its ports (a packet trace's addresses): a dumbbell's hosts
/// each carry one flow, a network's flows each have their own port.
pub fn flow_ends(s: &Scenario) -> Vec<(HostId, HostId, u16)> {
    let placed = place(s);
    (0..s.flow.len())
        .map(|i| (placed.spec.apps[2 * i + 1].host, placed.spec.apps[2 * i].host, flow_port(s, i)))
        .collect()
}

/// The flows' series probe and a caller's (a packet trace), one after the other.
struct Tee<'a, 'b> {
    series: Option<&'a mut FlowSeriesProbe>,
    extra: Option<&'a mut (dyn tcplab_sim::Probe<Connection> + 'b)>,
}

impl tcplab_sim::Probe<Connection> for Tee<'_, '_> {
    fn on_packet(&mut self, now: Instant, ev: tcplab_sim::PacketEvent, seg: &tcplab_wire::TcpSegment) {
        if let Some(x) = self.extra.as_mut() {
            x.on_packet(now, ev, seg);
        }
    }
    fn on_fragment(
        &mut self,
        now: Instant,
        ev: tcplab_sim::PacketEvent,
        seg: &tcplab_wire::TcpSegment,
        frag: tcplab_sim::Fragment,
    ) {
        if let Some(x) = self.extra.as_mut() {
            x.on_fragment(now, ev, seg, frag);
        }
    }
    fn on_forward(
        &mut self,
        now: Instant,
        hop: tcplab_sim::Transit,
        seg: &tcplab_wire::TcpSegment,
        frag: Option<tcplab_sim::Fragment>,
    ) {
        if let Some(x) = self.extra.as_mut() {
            x.on_forward(now, hop, seg, frag);
        }
    }
    fn tick_interval(&self) -> Option<Duration> {
        self.series.as_ref().map(|s| s.interval)
    }
    fn on_tick(&mut self, now: Instant, endpoints: tcplab_sim::Endpoints<'_, Connection>) {
        if let Some(s) = self.series.as_mut() {
            s.on_tick(now, endpoints);
        }
    }
    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, tcplab_wire::TcpSegment>) {
        if let Some(s) = self.series.as_mut() {
            s.on_link_tick(now, links);
        }
    }
    fn on_measure_start(&mut self, now: Instant) {
        if let Some(s) = self.series.as_mut() {
            s.on_measure_start(now);
        }
    }
    fn on_measure_stop(&mut self, now: Instant) {
        if let Some(s) = self.series.as_mut() {
            s.on_measure_stop(now);
        }
    }
}

/// Runs a flows point (`[dumbbell]` or a network): the backend's run (the shown link's directions as
/// `links.up`/`links.down`, flow 0's hosts as the client and server NICs), the figures per flow, and with
/// `test.series` every flow over time; `extra` (a packet trace), when given, is told every packet event too.
pub fn run_with(
    s: &Scenario,
    seed: u64,
    extra: Option<&mut dyn tcplab_sim::Probe<Connection>>,
) -> Result<(BackendRun, Vec<FlowResult>, Option<FlowSeries>), SimError> {
    let placed = place(s);
    let spec = &placed.spec;
    let mut probe = s.test.series.map(|interval| {
        let ends = s
            .flow
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (server, client) = (&spec.apps[2 * i], &spec.apps[2 * i + 1]);
                let port = match &server.app {
                    App::Stream(_) | App::RrServer(_) | App::MsgReceiver(_) => flow_port(s, i),
                    _ => unreachable!("app 2i is flow i's receiver side"),
                };
                match f.kind {
                    FlowKind::Rr => (client.host, port, true),
                    FlowKind::Stream | FlowKind::Msg => (server.host, port, false),
                }
            })
            .collect();
        FlowSeriesProbe {
            interval,
            last_tick: Instant::ZERO,
            ends,
            read: Vec::new(),
            last_done: vec![None; s.flow.len()],
            response: s.flow.iter().map(|f| f.response.map_or(1, |b| b.bytes())).collect(),
            series: FlowSeries {
                axis: crate::queues::SeriesAxis::new(interval),
                flows: s
                    .flow
                    .iter()
                    .enumerate()
                    .map(|(i, f)| FlowSamples {
                        flow: i as u32,
                        metric: if f.kind == FlowKind::Rr { "latency_ms" } else { "goodput_mbps" }.into(),
                        values: Vec::new(),
                    })
                    .collect(),
            },
            queues: crate::queues::QueueProbe::new(interval, crate::queues::declared(s)),
        }
    });
    let r = match (probe.as_mut(), extra) {
        (Some(p), None) => tcplab_sim::run_with::<Connection, _>(spec, seed, p)?,
        (None, None) => tcplab_sim::run::<Connection>(spec, seed)?,
        // Only a traced run goes through the tee.
        (series, extra) => tcplab_sim::run_with::<Connection, _>(spec, seed, &mut Tee { series, extra })?,
    };
    let mut flows = Vec::with_capacity(s.flow.len());
    // Each application's endpoints, in the engine's order, looked up once (a scan per flow was quadratic).
    let mut by_app: Vec<Vec<usize>> = vec![Vec::new(); 2 * s.flow.len()];
    for (k, e) in r.endpoints.iter().enumerate() {
        if let Some(v) = by_app.get_mut(e.app) {
            v.push(k);
        }
    }
    for (i, f) in s.flow.iter().enumerate() {
        let ends = || by_app[2 * i].iter().chain(&by_app[2 * i + 1]).map(|&k| &r.endpoints[k]);
        let retransmissions = ends().map(|e| e.stats.segs_retrans()).sum();
        let smoothed_rtt_ms = ends().find(|e| e.app == 2 * i + 1).map_or(0.0, |e| e.stats.SmoothedRTT);
        let mut fr = FlowResult {
            flow: i as u32,
            kind: f.kind.key().into(),
            stack: f.stack.clone(),
            congestion_control: serde_json::to_value(f.tcp.congestion_control)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            base_rtt_ms: placed.base_rtt_ms[i],
            goodput_bps: 0.0,
            delivered_bytes: 0,
            retransmissions,
            smoothed_rtt_ms,
            transactions_per_s: None,
            latency_us: None,
            messages_per_s: None,
        };
        match (r.apps[2 * i].report(), r.apps[2 * i + 1].report()) {
            (Report::Stream(rx), _) => {
                let secs = rx.elapsed.as_secs_f64();
                fr.delivered_bytes = rx.window_bytes;
                fr.goodput_bps = if rx.elapsed.is_zero() { 0.0 } else { rx.window_bytes as f64 * 8.0 / secs };
            }
            (_, Report::Rr(c)) => {
                let secs = c.elapsed.as_secs_f64();
                let per_s = |x: f64| if c.elapsed.is_zero() { 0.0 } else { x / secs };
                let bytes = c.transactions * (f.request.map_or(1, |b| b.bytes()) + f.response.map_or(1, |b| b.bytes()));
                fr.delivered_bytes = bytes;
                fr.goodput_bps = per_s(bytes as f64 * 8.0);
                fr.transactions_per_s = Some(per_s(c.transactions as f64));
                fr.latency_us = Some(c.latency.into());
            }
            (Report::Msg(rx), _) if rx.receiver => {
                let secs = rx.elapsed.as_secs_f64();
                let per_s = |x: f64| if rx.elapsed.is_zero() { 0.0 } else { x / secs };
                fr.delivered_bytes = rx.window_bytes;
                fr.goodput_bps = per_s(rx.window_bytes as f64 * 8.0);
                fr.messages_per_s = Some(per_s(rx.messages as f64));
                fr.latency_us = Some(rx.latency.into());
            }
            (a, b) => unreachable!("flow {i}: reports {a:?} and {b:?}"),
        }
        flows.push(fr);
    }
    let retransmissions = r.endpoints.iter().map(|e| e.stats.segs_retrans()).sum();
    // Apps 2i + 1 are the flows' senders (the clients), apps 2i their receivers.
    let side = |app: usize| if app % 2 == 1 { "client" } else { "server" };
    let connections = r
        .endpoints
        .iter()
        .map(|e| ConnectionResult {
            side: side(e.app),
            protocol: Connection::PROTOCOL,
            state: e.state.clone(),
            estats: crate::result::EndStats::tcp(e.stats.clone()),
        })
        .collect();
    let (fw, bw) = (placed.shown.index(), opposite(placed.shown).index());
    let run = BackendRun {
        apps: r.apps.iter().enumerate().map(|(i, a)| (side(i), a.report())).collect(),
        connections,
        retransmissions,
        links: Links {
            up: link_counters(r.links[fw], r.qdiscs[fw]),
            down: link_counters(r.links[bw], r.qdiscs[bw]),
            nic_client: nic_counters(r.nics[placed.nics.0.index()]),
            nic_server: nic_counters(r.nics[placed.nics.1.index()]),
            ip_client: None,
            ip_server: None,
            directions: crate::queues::directions(s, r.links.iter().zip(&r.qdiscs).map(|(l, q)| link_counters(*l, *q))),
            queue_series: None,
        },
        series: None,
        logvars: None,
        engine: EngineCounters {
            events: r.events,
            data_segments: r.data_segments,
            simulated: r.end_time.saturating_since(Instant::ZERO),
        },
        cpu: [None, None],
    };
    let (flow_series, queue_series) = match probe {
        Some(p) => (Some(p.series), Some(p.queues.into_series())),
        None => (None, None),
    };
    let mut run = run;
    run.links.queue_series = queue_series;
    Ok((run, flows, flow_series))
}

/// The port flow `i`'s receiver listens on: 5001 in a dumbbell (each flow its own hosts), 5001 + i in a
/// network (flows may share hosts).
fn flow_port(s: &Scenario, i: usize) -> u16 {
    if s.is_network() {
        SERVER_PORT + i as u16
    } else {
        SERVER_PORT
    }
}

/// Why the Linux backend refuses a network of `[[host]]` and `[[link]]` tables (its emulator runs one path
/// between two namespaces): the key, the value and the reason, or `None` for the other shapes.
pub fn linux_refusal(s: &Scenario) -> Option<(&'static str, String, String)> {
    s.is_network().then(|| {
        (
            "link",
            format!("{} links, {} hosts", s.link.len(), s.host.len()),
            "the Linux backend runs the two-host shape (a client and a server on one emulated path); a network \
             of [[host]] and [[link]] tables runs on the simulator only (docs/topology.md)"
                .into(),
        )
    })
}

/// The aggregate over the stream flows.
pub fn aggregate(flows: &[FlowResult]) -> FlowsAggregate {
    let x: Vec<f64> = flows.iter().filter(|f| f.kind == "stream").map(|f| f.goodput_bps).collect();
    FlowsAggregate { stream_flows: x.len() as u32, goodput_bps: x.iter().sum(), jain_index: jain_index(&x) }
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]), 1.0);
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(jain_index(&[]), 0.0);
    }
}
