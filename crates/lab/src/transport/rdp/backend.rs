//! RDP on the simulator: `rdp_stream` and `rdp_rr` become a [`SimSpec`] of [`RdpConfig`] hosts with the
//! workload crate's applications, run by `tcplab_sim::run_with::<RdpConnection>`, and their figures become a
//! point with [`RdpStreamMetrics`] or [`RrMetrics`].
//!
//! The applications count bytes; RDP's socket side cuts a send call into messages of at most the peer's max
//! segment size less 38 octets (docs/rdp.md § Messages on a byte socket). So an `rdp_rr` request of at most
//! that size is one message, one segment; a larger one is several messages, and the transaction still runs
//! from the request's write to the read of the response's last byte.

use tcplab_rdp::{RdpConfig, RdpConnection, RdpStats};
use tcplab_sim::{Endpoints, HostId, HostSpec, PacketEvent, Probe, SimError, SimSpec, CLIENT, SERVER};
use tcplab_transport::{Segment, Transport};
use tcplab_units::{Duration, Instant};
use tcplab_wire::RdpSegment;
use tcplab_workload::{App, Report, Role, RrClient, RrClientConfig, RrServer, RrServerConfig};

use serde::{Deserialize, Serialize};

use crate::result::de;
use crate::result::{
    ConnectionResult, EngineCounters, Metrics, OwnMetricsValue, Point, PointRun, RrMetrics, RttSamples, Series,
};
use crate::scenario::{Scenario, TestKind};
use crate::sim_backend::SERVER_PORT;

/// The figures of an RDP transfer (`rdp_stream`), RDP's own metrics (`Metrics::Own`, registered by
/// `super::Rdp`'s `OWN_METRICS`). Counts are over the whole run, all connection ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RdpStreamMetrics {
    /// Payload bits per second delivered to the receiving application during the measurement.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub throughput_bps: f64,
    /// Payload bytes delivered during the measurement.
    pub delivered_bytes: u64,
    /// Messages delivered to the receiving application (`MessagesDelivered`), each exactly once.
    pub messages_delivered: u64,
    /// Data segments sent whose sequence number had been sent before (`SegsRetrans`).
    pub retransmissions: u64,
    /// Data segments received at or below RCV.CUR or already held out of sequence (`DupSegsIn`).
    pub duplicates_received: u64,
    /// Data segments that did not arrive: lost on a link (queue or loss model) or refused by a NIC.
    pub data_drops: u64,
    /// Timer events at which at least one data segment was due for retransmission (`Timeouts`).
    pub timeouts: u64,
    /// Length of the measurement, seconds: from establishment to the end of the transfer (with
    /// `test.messages`, the receiver seeing the sender's close) or `test.duration`.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub elapsed_s: f64,
}

/// The simulator's input for an RDP scenario.
pub fn sim_spec(s: &Scenario) -> SimSpec<RdpConfig> {
    let series = s.test.series.is_some();
    let host = |h: &crate::scenario::Host| HostSpec {
        transport: RdpConfig {
            // The series reports every RTT measurement of the sender.
            record_rtt_samples: series,
            ..h.config::<tcplab_rdp::RdpConfig>().cloned().expect("an RDP test resolves every host's RDP knobs")
        },
        nic_rate: h.host.nic_rate,
        txqueuelen: h.host.txqueuelen,
        ephemeral_ports: (h.host.ephemeral_ports.low, h.host.ephemeral_ports.high),
        cpu: None,
        fragment_ttl: h.host.fragment_ttl,
        rx_coalesce: h.host.rx_coalesce(),
        nic_frame_time: h.host.nic_frame_time,
    };
    let n = s.test.parallel.max(1);
    let ports = n.div_ceil(s.client.host.ephemeral_ports.len()) as u16;
    // An RDP SYN with its options is 20 + 24 octets of IP.
    let spacing = match s.test.start_spread {
        Some(spread) => Duration::from_nanos(spread.as_nanos() / n.max(1) as u64),
        None => s.path.up.rate.tx_time(s.path.up.framing.wire_len(44) as u64),
    };
    let apps = if let (TestKind::Rr, Some(request), Some(response)) = (s.test.kind, s.test.request, s.test.response) {
        let client = RrClientConfig {
            connections: n,
            port: SERVER_PORT,
            ports,
            at: Instant::ZERO,
            spacing,
            request: request.bytes(),
            response: response.bytes(),
            burst: s.test.burst.unwrap_or(0),
            per_transaction: false,
            port_retry: crate::sim_backend::CRR_PORT_RETRY,
        };
        let server = RrServerConfig {
            port: SERVER_PORT,
            ports,
            connections: n,
            request: request.bytes(),
            response: response.bytes(),
        };
        vec![(SERVER, App::RrServer(RrServer::new(server))), (CLIENT, App::RrClient(RrClient::new(client)))]
    } else {
        let message = s.test.message.bytes();
        let (send, receive) = match s.test.messages {
            Some(calls) => (Role::SendCalls { message, calls }, Role::ReceiveToEof),
            None => (Role::Send { message }, Role::Receive),
        };
        crate::sim_backend::stream_apps(n, ports, spacing, (send, receive), Duration::ZERO)
    };
    SimSpec::two_hosts(
        s.path.up.clone(),
        s.path.down.clone(),
        [host(&s.client), host(&s.server)],
        apps,
        s.test.duration,
    )
}

pub use crate::columns::RTT_SAMPLE_COLUMNS;

/// What the lab watches during an RDP run: the data segments that did not arrive (Part C's drops_data), the
/// sender's variables on every tick of `test.series`, and a caller's probe (a packet trace).
struct RdpProbes<'a> {
    data_drops: u64,
    series: Option<Series>,
    interval: Option<Duration>,
    queues: Option<crate::queues::QueueProbe>,
    extra: Option<&'a mut dyn Probe<RdpConnection>>,
}

impl Probe<RdpConnection> for RdpProbes<'_> {
    #[inline]
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &RdpSegment) {
        if matches!(ev, PacketEvent::LinkDropped { .. } | PacketEvent::NicDropped { .. }) && seg.payload_len() > 0 {
            self.data_drops += 1;
        }
        if let Some(x) = self.extra.as_mut() {
            x.on_packet(now, ev, seg);
        }
    }

    /// Fragments are not counted in `data_drops` (Part C counts whole data packets): with a path `mtu` a
    /// datagram lost in pieces shows as the receiver's `reasm_fails`, and R = D + drops does not hold.
    fn on_fragment(&mut self, now: Instant, ev: PacketEvent, seg: &RdpSegment, frag: tcplab_sim::Fragment) {
        if let Some(x) = self.extra.as_mut() {
            x.on_fragment(now, ev, seg, frag);
        }
    }

    fn tick_interval(&self) -> Option<Duration> {
        self.interval
    }

    fn on_measure_start(&mut self, now: Instant) {
        if let Some(series) = self.series.as_mut() {
            series.measure_start_s = Some(crate::probes::exact_secs(now.as_nanos()));
        }
        if let Some(q) = self.queues.as_mut() {
            Probe::<RdpConnection>::on_measure_start(q, now);
        }
    }

    fn on_measure_stop(&mut self, now: Instant) {
        if let Some(series) = self.series.as_mut() {
            series.measure_end_s = Some(crate::probes::exact_secs(now.as_nanos()));
        }
        if let Some(q) = self.queues.as_mut() {
            Probe::<RdpConnection>::on_measure_stop(q, now);
        }
    }

    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, RdpSegment>) {
        if let Some(q) = self.queues.as_mut() {
            Probe::<RdpConnection>::on_link_tick(q, now, links);
        }
    }

    /// Samples the client's first connection end (the sender of `rdp_stream`, the requester of `rdp_rr`).
    fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, RdpConnection>) {
        let Some(series) = self.series.as_mut() else { return };
        let Some(ep) = endpoints.iter().find(|ep| ep.host == CLIENT) else { return };
        let e = ep.conn.stats();
        series.rows.push(vec![
            crate::probes::exact_secs(now.as_nanos()),
            e.SmoothedRTT,
            e.CurRTO,
            e.RttSamples as f64,
            e.RttSamplesDiscarded as f64,
            e.SegsRetrans as f64,
            e.DataSegsOut as f64,
            e.Timeouts as f64,
        ]);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

fn side(h: HostId) -> &'static str {
    if h == CLIENT {
        "client"
    } else {
        "server"
    }
}

/// Runs an RDP scenario's point on the simulator, telling `extra` (when given) every packet event.
pub fn run_point(s: &Scenario, seed: u64, extra: Option<&mut dyn Probe<RdpConnection>>) -> Result<PointRun, SimError> {
    let spec = sim_spec(s);
    let mut probes = RdpProbes {
        data_drops: 0,
        series: s.test.series.map(|d| Series {
            interval_s: d.as_secs_f64(),
            columns: <tcplab_rdp::RdpConfig as crate::host_transports::TransportConfig>::SERIES_COLUMNS.to_vec(),
            rows: Vec::new(),
            measure_start_s: None,
            measure_end_s: None,
        }),
        interval: s.test.series,
        queues: crate::queues::QueueProbe::of(s),
        extra,
    };
    let r = tcplab_sim::run_with::<RdpConnection, _>(&spec, seed, &mut probes)?;
    let sum = |f: fn(&RdpStats) -> u64| r.endpoints.iter().map(|e| f(&e.stats)).sum::<u64>();
    let metrics = if s.test.kind == TestKind::Rr {
        let client = r
            .apps
            .iter()
            .find_map(|a| match a.report() {
                Report::Rr(r) if r.client => Some(r),
                _ => None,
            })
            .expect("a request/response test has a client");
        let secs = client.elapsed.as_secs_f64();
        Metrics::Rr(RrMetrics {
            transactions_per_s: if client.elapsed.is_zero() { 0.0 } else { client.transactions as f64 / secs },
            transactions: client.transactions,
            latency_us: client.latency.into(),
            retransmissions: sum(|e| e.SegsRetrans),
            elapsed_s: secs,
            connections_opened: None,
            port_waits: None,
            cpu: None,
        })
    } else {
        let (delivered, elapsed) = r
            .apps
            .iter()
            .filter_map(|a| match a.report() {
                Report::Stream(st) if st.role.receives() => Some((st.window_bytes, st.elapsed)),
                _ => None,
            })
            .fold((0, Duration::ZERO), |(b, d), (wb, we)| (b + wb, d.max(we)));
        let secs = elapsed.as_secs_f64();
        Metrics::Own(OwnMetricsValue::new(
            s.test.transport,
            TestKind::Stream,
            RdpStreamMetrics {
                throughput_bps: if elapsed.is_zero() { 0.0 } else { delivered as f64 * 8.0 / secs },
                delivered_bytes: delivered,
                messages_delivered: r
                    .endpoints
                    .iter()
                    .filter(|e| e.host == SERVER)
                    .map(|e| e.stats.MessagesDelivered)
                    .sum(),
                retransmissions: sum(|e| e.SegsRetrans),
                duplicates_received: sum(|e| e.DupSegsIn),
                data_drops: probes.data_drops,
                timeouts: sum(|e| e.Timeouts),
                elapsed_s: secs,
            },
        ))
    };
    // Every RTT measurement of the sampled end (the first client end), from its end-of-run statistics.
    let rtt_samples = probes.series.is_some().then(|| RttSamples {
        columns: RTT_SAMPLE_COLUMNS.to_vec(),
        rows: r
            .endpoints
            .iter()
            .find(|e| e.host == CLIENT)
            .map(|e| {
                e.stats
                    .rtt_log
                    .iter()
                    .map(|x| {
                        vec![
                            x.at.as_secs_f64(),
                            ms(x.rtt),
                            if x.taken { 1.0 } else { 0.0 },
                            x.srtt.map_or(0.0, ms),
                            ms(x.rto),
                        ]
                    })
                    .collect()
            })
            .unwrap_or_default(),
    });
    // Each client end followed by its server end.
    let mut ends: Vec<_> = r.endpoints.iter().collect();
    ends.sort_by_key(|e| {
        let (c, srv) = if e.host == CLIENT { (e.local_port, e.remote_port) } else { (e.remote_port, e.local_port) };
        (c, srv, e.host)
    });
    let connections = ends
        .into_iter()
        .map(|e| ConnectionResult {
            side: side(e.host),
            protocol: RdpConnection::PROTOCOL,
            state: e.state.clone(),
            estats: serde_json::to_value(&e.stats).expect("statistics serialize").into(),
        })
        .collect();
    let point = Point {
        params: serde_json::Map::new(),
        iterations: 1,
        metrics,
        connections,
        series: probes.series,
        rtt_samples,
        logvars: None,
        links: crate::sim_backend::two_host_links(
            s,
            &r,
            probes.queues.take().map(crate::queues::QueueProbe::into_series),
        ),
        health: None,
        published: Vec::new(),
        confidence: None,
        iteration_stddev: None,
        flows: Vec::new(),
        aggregate: None,
        flow_series: None,
    };
    let engine = EngineCounters {
        events: r.events,
        data_segments: r.data_segments,
        simulated: r.end_time.saturating_since(Instant::ZERO),
    };
    Ok(PointRun { point, engine })
}
