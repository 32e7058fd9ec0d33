//! RDP on the simulator: `rdp_stream` becomes a [`SimSpec`] of [`RdpConfig`] hosts with the stream
//! applications, run by `tcplab_sim::run_with::<RdpConnection>`, and its figures become a point with
//! [`RdpStreamMetrics`].

use tcplab_rdp::{RdpConfig, RdpConnection, RdpStats};
use tcplab_sim::{HostSpec, PacketEvent, Probe, SimError, SimSpec, CLIENT, SERVER};
use tcplab_transport::{Segment, Transport};
use tcplab_units::{Duration, Instant};
use tcplab_wire::RdpSegment;
use tcplab_workload::{App, Opening, Report, Role, Stream, StreamConfig};

use crate::result::{ConnectionResult, EngineCounters, Links, Metrics, Point, PointRun, RdpStreamMetrics};
use crate::scenario::Scenario;
use crate::sim_backend::{ip_counters, link_counters, nic_counters, SERVER_PORT};

/// The simulator's input for an RDP scenario.
pub fn sim_spec(s: &Scenario) -> SimSpec<RdpConfig> {
    let host = |h: &crate::scenario::Host| HostSpec {
        transport: h.rdp.clone().expect("an RDP test resolves every host's RDP knobs"),
        nic_rate: h.host.nic_rate,
        txqueuelen: h.host.txqueuelen,
        ephemeral_ports: (h.host.ephemeral_ports.low, h.host.ephemeral_ports.high),
        cpu: None,
        fragment_ttl: h.host.fragment_ttl,
    };
    let n = s.test.parallel.max(1);
    let ports = n.div_ceil(s.client.host.ephemeral_ports.len()) as u16;
    // An RDP SYN with its options is 20 + 24 octets of IP.
    let spacing = match s.test.start_spread {
        Some(spread) => Duration::from_nanos(spread.as_nanos() / n.max(1) as u64),
        None => s.path.up.rate.tx_time(s.path.up.framing.wire_len(44) as u64),
    };
    let message = s.test.message.bytes();
    let (send, receive) = match s.test.messages {
        Some(calls) => (Role::SendCalls { message, calls }, Role::ReceiveToEof),
        None => (Role::Send { message }, Role::Receive),
    };
    let client = StreamConfig {
        opening: Opening::Connect { connections: n, port: SERVER_PORT, ports, at: Instant::ZERO, spacing },
        role: send,
        gates_measurement: true,
    };
    let server = StreamConfig {
        opening: Opening::Accept { port: SERVER_PORT, ports, connections: n },
        role: receive,
        gates_measurement: true,
    };
    SimSpec {
        up: s.path.up.clone(),
        down: s.path.down.clone(),
        hosts: [host(&s.client), host(&s.server)],
        apps: vec![(SERVER, App::Stream(Stream::new(server))), (CLIENT, App::Stream(Stream::new(client)))],
        measure: s.test.duration,
    }
}

/// Counts the data segments that did not arrive (dropped by a link or a full NIC): Part C's drops_data.
#[derive(Default)]
struct DataDrops(u64);

impl Probe<RdpConnection> for DataDrops {
    #[inline]
    fn on_packet(&mut self, _now: Instant, ev: PacketEvent, seg: &RdpSegment) {
        if matches!(ev, PacketEvent::LinkDropped { .. } | PacketEvent::NicDropped { .. }) && seg.payload_len() > 0 {
            self.0 += 1;
        }
    }
}

/// Runs an RDP scenario's point on the simulator.
pub fn run_point(s: &Scenario, seed: u64) -> Result<PointRun, SimError> {
    let spec = sim_spec(s);
    let mut drops = DataDrops::default();
    let r = tcplab_sim::run_with::<RdpConnection, _>(&spec, seed, &mut drops)?;
    let sum = |f: fn(&RdpStats) -> u64| r.endpoints.iter().map(|e| f(&e.stats)).sum::<u64>();
    let (delivered, elapsed) = r
        .apps
        .iter()
        .filter_map(|a| match a.report() {
            Report::Stream(st) if st.role.receives() => Some((st.window_bytes, st.elapsed)),
            _ => None,
        })
        .fold((0, tcplab_units::Duration::ZERO), |(b, d), (wb, we)| (b + wb, d.max(we)));
    let secs = elapsed.as_secs_f64();
    let metrics = RdpStreamMetrics {
        throughput_bps: if elapsed.is_zero() { 0.0 } else { delivered as f64 * 8.0 / secs },
        delivered_bytes: delivered,
        messages_delivered: r.endpoints.iter().filter(|e| e.host == SERVER).map(|e| e.stats.MessagesDelivered).sum(),
        retransmissions: sum(|e| e.SegsRetrans),
        duplicates_received: sum(|e| e.DupSegsIn),
        data_drops: drops.0,
        timeouts: sum(|e| e.Timeouts),
        elapsed_s: secs,
    };
    // Each client end followed by its server end.
    let mut ends: Vec<_> = r.endpoints.iter().collect();
    ends.sort_by_key(|e| {
        let (c, srv) = if e.host == CLIENT { (e.local_port, e.remote_port) } else { (e.remote_port, e.local_port) };
        (c, srv, e.host)
    });
    let connections = ends
        .into_iter()
        .map(|e| ConnectionResult {
            side: if e.host == CLIENT { "client" } else { "server" },
            protocol: RdpConnection::PROTOCOL,
            state: e.state.clone(),
            estats: serde_json::to_value(&e.stats).expect("statistics serialize"),
        })
        .collect();
    let point = Point {
        params: serde_json::Map::new(),
        iterations: 1,
        metrics: Metrics::Rdp(metrics),
        connections,
        series: None,
        logvars: None,
        links: Links {
            up: link_counters(r.links[0]),
            down: link_counters(r.links[1]),
            nic_client: nic_counters(r.nics[0]),
            nic_server: nic_counters(r.nics[1]),
            ip_client: ip_counters(s, r.ip)[0],
            ip_server: ip_counters(s, r.ip)[1],
        },
        health: None,
        confidence: None,
    };
    Ok(PointRun { point, engine: EngineCounters { events: r.events, data_segments: r.data_segments } })
}
