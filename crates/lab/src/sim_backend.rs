//! The simulator as a backend: a scenario point becomes a [`SimSpec`] with the test's applications, and
//! the engine's report becomes a [`BackendRun`].

use tcplab_link::{LinkStats, NicStats};
use tcplab_sim::{EndpointReport, Endpoints, HostId, HostSpec, Probe, SimError, SimSpec, CLIENT, DOWN, SERVER, UP};
use tcplab_tcp::{Connection, Estats, TcpConfig};
use tcplab_transport::{Stats, Transport};
use tcplab_units::{Duration, Instant};
use tcplab_workload::{
    App, MsgBook, MsgReceiver, MsgReceiverConfig, MsgSender, MsgSenderConfig, Opening, Role, RrClient, RrClientConfig,
    RrServer, RrServerConfig, Stream, StreamConfig,
};

use crate::probes::{exact_secs, LogVarsProbe};
use crate::result::{
    BackendRun, ConnectionResult, EndStats, EngineCounters, IpCounters, LinkCounters, Links, NicCounters,
    QdiscCounters, Series,
};
use crate::scenario::{Scenario, TestKind};

/// The port the test's server listens on (netperf's data connection).
pub const SERVER_PORT: u16 = 5001;

/// TCP_CRR: how long a transaction that found no free ephemeral port waits before trying again.
pub const CRR_PORT_RETRY: Duration = Duration::from_millis(1);

/// A host of the scenario as the simulator takes it.
pub(crate) fn host_spec(h: &crate::scenario::Host) -> HostSpec<TcpConfig> {
    HostSpec {
        transport: h.tcp().clone(),
        nic_rate: h.host.nic_rate,
        txqueuelen: h.host.txqueuelen,
        ephemeral_ports: (h.host.ephemeral_ports.low, h.host.ephemeral_ports.high),
        cpu: h.host.cpu.as_ref().map(|c| tcplab_sim::CpuSpec {
            cores: c.cores,
            per_segment_out: c.per_segment_out,
            per_segment_in: c.per_segment_in,
            per_ack_in: c.per_ack_in,
            per_ack_out: c.per_ack_out,
            per_kb_copy: c.per_kb_copy,
            per_call: c.per_call,
            per_timer: c.per_timer,
        }),
        fragment_ttl: h.host.fragment_ttl,
        rx_coalesce: h.host.rx_coalesce(),
        nic_frame_time: h.host.nic_frame_time,
    }
}

/// The simulator's input for a scenario.
pub fn sim_spec(s: &Scenario) -> SimSpec<TcpConfig> {
    let host = host_spec;
    let n = s.test.parallel.max(1);
    // One client address has only so many ephemeral ports per server port: spread over more server ports.
    let ports = n.div_ceil(s.client.host.ephemeral_ports.len()) as u16;
    // Connection i opens i SYN-frame times after the first (a SYN with all options is 60 bytes of IP).
    let spacing = match s.test.start_spread {
        Some(spread) => Duration::from_nanos(spread.as_nanos() / n.max(1) as u64),
        None => s.path.up.rate.tx_time(s.path.up.framing.wire_len(60) as u64),
    };
    let hosts = [host(&s.client), host(&s.server)];
    if s.test.kind == TestKind::Msg {
        // A book per spec: the writer's stamps reach the reader of this run only.
        let book = MsgBook::default();
        let message = s.test.message.bytes();
        let client = MsgSenderConfig {
            connections: n,
            port: SERVER_PORT,
            ports,
            at: Instant::ZERO,
            spacing,
            message,
            count: s.test.messages,
            interval: s.test.interval,
            book: book.clone(),
        };
        let server =
            MsgReceiverConfig { port: SERVER_PORT, ports, connections: n, message, count: s.test.messages, book };
        return SimSpec::two_hosts(
            s.path.up.clone(),
            s.path.down.clone(),
            hosts,
            vec![
                (SERVER, App::MsgReceiver(MsgReceiver::new(server))),
                (CLIENT, App::MsgSender(MsgSender::new(client))),
            ],
            s.test.duration,
        );
    }
    if let (Some(request), Some(response)) = (s.test.request, s.test.response) {
        let crr = s.test.kind == TestKind::Crr;
        let client = RrClientConfig {
            connections: n,
            port: SERVER_PORT,
            ports: if crr { 1 } else { ports },
            at: Instant::ZERO,
            spacing,
            request: request.bytes(),
            response: response.bytes(),
            burst: s.test.burst.unwrap_or(0),
            per_transaction: crr,
            port_retry: CRR_PORT_RETRY,
        };
        let server = RrServerConfig {
            port: SERVER_PORT,
            ports: if crr { 1 } else { ports },
            connections: if crr { 0 } else { n },
            request: request.bytes(),
            response: response.bytes(),
        };
        return SimSpec::two_hosts(
            s.path.up.clone(),
            s.path.down.clone(),
            hosts,
            vec![(SERVER, App::RrServer(RrServer::new(server))), (CLIENT, App::RrClient(RrClient::new(client)))],
            s.test.duration,
        );
    }
    let (client_role, server_role) = match s.test.kind {
        TestKind::Maerts => (Role::Receive, Role::Send { message: s.test.message.bytes() }),
        _ => (Role::Send { message: s.test.message.bytes() }, Role::Receive),
    };
    // With test.start_spread the senders also start writing that far apart (the connections all come up
    // before the measurement, as netperf's do, so staggered SYNs alone would not stagger the data).
    let write_spread = if s.test.start_spread.is_some() { spacing } else { Duration::ZERO };
    SimSpec::two_hosts(
        s.path.up.clone(),
        s.path.down.clone(),
        hosts,
        stream_apps(n, ports, spacing, (client_role, server_role), write_spread),
        s.test.duration,
    )
}

/// The two ends of a bulk transfer (TCP or RDP): the client opens `n` connections `spacing` apart over
/// `ports` server ports and the server accepts them, in the roles given (client's, server's); writers start
/// `write_spread` apart once the measurement opens.
pub(crate) fn stream_apps(
    n: u32,
    ports: u16,
    spacing: Duration,
    (client_role, server_role): (Role, Role),
    write_spread: Duration,
) -> Vec<(HostId, App)> {
    let client = StreamConfig {
        opening: Opening::Connect { connections: n, port: SERVER_PORT, ports, at: Instant::ZERO, spacing },
        role: client_role,
        gates_measurement: true,
    };
    let server = StreamConfig {
        opening: Opening::Accept { port: SERVER_PORT, ports, connections: n },
        role: server_role,
        gates_measurement: true,
    };
    vec![
        (SERVER, App::Stream(Stream::new(server).with_write_spread(write_spread))),
        (CLIENT, App::Stream(Stream::new(client).with_write_spread(write_spread))),
    ]
}

pub use crate::columns::SERIES_COLUMNS;

/// Samples the first sending connection end's gauges on every tick.
struct SeriesProbe {
    interval: Duration,
    sender: HostId,
    series: Series,
    last_tick: Option<Instant>,
}

impl Probe<Connection> for SeriesProbe {
    fn tick_interval(&self) -> Option<Duration> {
        Some(self.interval)
    }

    fn on_measure_start(&mut self, now: Instant) {
        self.series.measure_start_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_measure_stop(&mut self, now: Instant) {
        self.series.measure_end_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, Connection>) {
        if self.last_tick.replace(now) == Some(now) {
            return;
        }
        let Some(ep) = endpoints.iter().find(|ep| ep.host == self.sender) else { return };
        let e = ep.conn.estats_at(now);
        self.series.rows.push(vec![
            exact_secs(now.as_nanos()),
            e.CurCwnd as f64,
            e.CurSsthresh.map_or(f64::NAN, |s| s as f64),
            e.PipeSize as f64,
            e.SmoothedRTT,
            e.ThruOctetsAcked as f64,
            e.SegsRetrans as f64,
        ]);
    }
}

fn side(h: HostId) -> &'static str {
    if h == CLIENT {
        "client"
    } else {
        "server"
    }
}

/// Each client end followed by its server end (the peer with the mirrored ports), then any unpaired end.
fn paired(eps: Vec<EndpointReport<Estats>>) -> Vec<EndpointReport<Estats>> {
    let mut server_of = std::collections::HashMap::new();
    for (i, ep) in eps.iter().enumerate() {
        if ep.host == SERVER {
            server_of.insert((ep.local_port, ep.remote_port), i);
        }
    }
    let mut taken = vec![false; eps.len()];
    let mut order = Vec::with_capacity(eps.len());
    for (i, ep) in eps.iter().enumerate() {
        if ep.host == CLIENT {
            order.push(i);
            taken[i] = true;
            if let Some(&j) = server_of.get(&(ep.remote_port, ep.local_port)) {
                if !taken[j] {
                    order.push(j);
                    taken[j] = true;
                }
            }
        }
    }
    order.extend((0..eps.len()).filter(|&i| !taken[i]));
    let mut slots: Vec<Option<EndpointReport<Estats>>> = eps.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

pub(crate) fn link_counters(l: LinkStats, q: Option<tcplab_link::QdiscStats>) -> LinkCounters {
    LinkCounters {
        frames_in: l.frames_in,
        frames_delivered: l.frames_delivered,
        bytes_delivered: l.bytes_delivered,
        drops_queue_full: l.drops_queue_full,
        drops_random_loss: l.drops_random_loss,
        max_queue_frames: l.max_queue_frames,
        qdisc: q.map(|q| QdiscCounters {
            enqueued: q.enqueued,
            dequeued: q.dequeued,
            drops_overlimit: q.drops_overlimit,
            drops_aqm: q.drops_aqm,
            marks: q.marks,
            max_packets: q.max_packets,
            max_bytes: q.max_bytes,
            sojourn_mean_ms: if q.dequeued == 0 { 0.0 } else { q.sojourn_sum_ns as f64 / q.dequeued as f64 / 1e6 },
            sojourn_max_ms: q.sojourn_max_ns as f64 / 1e6,
        }),
    }
}

/// Both hosts' IP counters when the scenario can fragment (a direction has an MTU).
pub(crate) fn ip_counters(s: &Scenario, ip: &[tcplab_sim::IpStats]) -> [Option<IpCounters>; 2] {
    let fragmenting = s.path.up.mtu.is_some() || s.path.down.mtu.is_some();
    [ip[CLIENT.index()], ip[SERVER.index()]].map(|i| {
        fragmenting.then_some(IpCounters {
            out_frag_reqds: i.out_frag_reqds,
            out_frag_creates: i.out_frag_creates,
            reasm_reqds: i.reasm_reqds,
            reasm_oks: i.reasm_oks,
            reasm_fails: i.reasm_fails,
        })
    })
}

/// The two-host shape's link tables from a run of any transport: each direction's counters, the NICs, the
/// IP layers, the per-direction queue tables and the queue series.
pub(crate) fn two_host_links<S>(
    s: &Scenario,
    r: &tcplab_sim::SimRun<S>,
    queue_series: Option<crate::result::QueueSeries>,
) -> Links {
    let ip = ip_counters(s, &r.ip);
    Links {
        up: link_counters(r.links[UP], r.qdiscs[UP]),
        down: link_counters(r.links[DOWN], r.qdiscs[DOWN]),
        nic_client: nic_counters(r.nics[CLIENT.index()]),
        nic_server: nic_counters(r.nics[SERVER.index()]),
        ip_client: ip[0],
        ip_server: ip[1],
        directions: crate::queues::directions(s, r.links.iter().zip(&r.qdiscs).map(|(l, q)| link_counters(*l, *q))),
        queue_series,
    }
}

pub(crate) fn nic_counters(n: NicStats) -> NicCounters {
    NicCounters { frames_sent: n.frames_sent, refused_full: n.refused_full, max_queue_frames: n.max_queue_frames }
}

/// The lab's own probes (the series) and a caller's (a packet trace), one after the other.
struct Tee<'a> {
    series: Option<SeriesProbe>,
    logvars: Option<LogVarsProbe>,
    queues: Option<crate::queues::QueueProbe>,
    extra: Option<&'a mut dyn Probe<Connection>>,
}

impl Probe<Connection> for Tee<'_> {
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
    fn tick_interval(&self) -> Option<Duration> {
        self.series.as_ref().map(|s| s.interval).or_else(|| self.logvars.as_ref().and_then(|l| l.tick_interval()))
    }
    fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, Connection>) {
        if let Some(s) = self.series.as_mut() {
            s.on_tick(now, endpoints);
        } else if let Some(l) = self.logvars.as_mut() {
            l.on_tick(now, endpoints);
        }
    }
    fn on_measure_start(&mut self, now: Instant) {
        if let Some(s) = self.series.as_mut() {
            s.on_measure_start(now);
        }
        if let Some(l) = self.logvars.as_mut() {
            l.on_measure_start(now);
        }
        if let Some(q) = self.queues.as_mut() {
            Probe::<Connection>::on_measure_start(q, now);
        }
    }
    fn on_measure_stop(&mut self, now: Instant) {
        if let Some(s) = self.series.as_mut() {
            s.on_measure_stop(now);
        }
        if let Some(l) = self.logvars.as_mut() {
            l.on_measure_stop(now);
        }
        if let Some(q) = self.queues.as_mut() {
            Probe::<Connection>::on_measure_stop(q, now);
        }
    }
    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, tcplab_wire::TcpSegment>) {
        if let Some(q) = self.queues.as_mut() {
            Probe::<Connection>::on_link_tick(q, now, links);
        }
    }
}

/// Runs the scenario's point on the simulator, telling `extra` (when given) every packet event. The
/// extra probe's own `tick_interval` is not consulted: ticks are the series'.
pub fn run_with(s: &Scenario, seed: u64, extra: Option<&mut dyn Probe<Connection>>) -> Result<BackendRun, SimError> {
    let spec = sim_spec(s);
    let sender = if s.test.kind == TestKind::Maerts { SERVER } else { CLIENT };
    let (series, logvars) = match (s.test.series, &s.test.series_vars) {
        (Some(interval), Some(vars)) => (None, Some(LogVarsProbe::new(interval, vars.clone()))),
        (Some(interval), None) => (
            Some(SeriesProbe {
                interval,
                sender,
                series: Series {
                    interval_s: exact_secs(interval.as_nanos()),
                    columns: SERIES_COLUMNS.to_vec(),
                    ..Series::default()
                },
                last_tick: None,
            }),
            None,
        ),
        (None, _) => (None, None),
    };
    let queues = crate::queues::QueueProbe::of(s);
    let (r, series, logvars, queue_series) =
        if series.is_none() && logvars.is_none() && queues.is_none() && extra.is_none() {
            (tcplab_sim::run::<Connection>(&spec, seed)?, None, None, None)
        } else {
            let mut tee = Tee { series, logvars, queues, extra };
            let r = tcplab_sim::run_with::<Connection, _>(&spec, seed, &mut tee)?;
            (
                r,
                tee.series.map(|p| p.series),
                tee.logvars.map(|p| p.logvars),
                tee.queues.map(crate::queues::QueueProbe::into_series),
            )
        };
    let retransmissions = r.endpoints.iter().map(|e| e.stats.segs_retrans()).sum();
    // TCP_CRR creates two ends per transaction: the document keeps the first transaction of each loop
    // (the first 2 × parallel ends); the metrics count them all.
    let keep = if s.test.kind == TestKind::Crr { 2 * s.test.parallel as usize } else { usize::MAX };
    let links = two_host_links(s, &r, queue_series);
    let connections = paired(r.endpoints)
        .into_iter()
        .take(keep)
        .map(|e| ConnectionResult {
            side: side(e.host),
            protocol: Connection::PROTOCOL,
            state: e.state,
            estats: EndStats::tcp(e.stats),
        })
        .collect();
    Ok(BackendRun {
        apps: r.apps.iter().zip(&spec.apps).map(|(a, spec)| (side(spec.host), a.report())).collect(),
        connections,
        retransmissions,
        links,
        series,
        logvars,
        engine: EngineCounters {
            events: r.events,
            data_segments: r.data_segments,
            simulated: r.end_time.saturating_since(Instant::ZERO),
        },
        cpu: [r.cpu[CLIENT.index()], r.cpu[SERVER.index()]],
    })
}
