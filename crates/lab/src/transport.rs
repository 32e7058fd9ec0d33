//! The transports the lab runs, behind one trait. A transport implements [`LabTransport`] once: which
//! test kinds run it, how a point runs on the simulator (its spec, its statistics mapped to metrics), and
//! what its packets need to be written to a trace. [`dispatch`] is the one registration: a new transport
//! adds its module, its implementation here and a line there (docs/architecture.md § How to add).
//!
//! This module sits above the backends (`sim_backend`, `topology`, `rdp_backend`) and below the run path
//! (`crate::run`), which is generic over the trait: no backend depends on it.

use tcplab_sim::Probe;
use tcplab_wire::codec::Ipv4Payload;

use crate::host_transports::TransportConfig;
use crate::result::{Point, PointRun, RunError};
use crate::scenario::{Protocol, Scenario};

/// A transport protocol as the lab runs it.
pub trait LabTransport {
    /// The sans-IO endpoint the simulator runs; its segments are what a packet trace sees, each written as
    /// an IPv4 datagram by its [`Ipv4Payload`] encoding (no trace writer branches on the protocol).
    type Conn: tcplab_transport::Transport<Segment: Ipv4Payload>;
    /// The protocol's name in results (`connections[].protocol`).
    const PROTOCOL: &'static str = <Self::Conn as tcplab_transport::Transport>::PROTOCOL;

    /// The transport's name in scenario files (`test.transport`), which [`dispatch`] maps to it.
    const NAME: Protocol;

    /// The transport's knobs as a host carries them (`Host::config::<T::Config>()`), registered in
    /// `crate::host_transports::REGISTERED`: the host has no field per transport.
    type Config: TransportConfig;

    /// The host's table of the transport's knobs in scenario files (`client.KNOB_TABLE.KNOB`).
    const KNOB_TABLE: &'static str = <Self::Config as TransportConfig>::TABLE;
    /// Every knob of the transport's config: (name, doc comment), from its crate (`tcplab explain`).
    const KNOBS: &'static [(&'static str, &'static str)];

    /// The config's defaults as a scenario file spells them, knob → value (`tcplab explain`).
    fn knob_defaults() -> toml::Table;

    /// Whether a test whose transport is `p` runs this transport.
    fn runs(p: Protocol) -> bool {
        p == Self::NAME
    }
    /// Why the packets of `s` cannot be written to a packet trace, if they cannot (a header too small
    /// for the simulator's ports), said after `--pcap: `.
    fn untraceable(_s: &Scenario) -> Option<String> {
        None
    }
    /// How a packet trace of `s` encodes the segments (the protocol's open choices); by default the
    /// encoding's own default.
    fn trace_codec(_s: &Scenario) -> Codec<Self> {
        Default::default()
    }
    /// One point of `s` on the simulator with `seed`; `probe`, a packet trace of the caller's, is told
    /// every packet event. `s` is a test of a kind this transport [`runs`](LabTransport::runs).
    fn run_point(s: &Scenario, seed: u64, probe: Option<&mut dyn Probe<Self::Conn>>) -> Result<PointRun, RunError>;
}

/// The packet trace encoding's choices for the segments of `T`.
pub type Codec<T> = <Segment<T> as Ipv4Payload>::Codec;
/// The segment type of the transport `T`.
pub type Segment<T> = <<T as LabTransport>::Conn as tcplab_transport::Transport>::Segment;

/// Calls back with the transport a test kind runs: [`dispatch`]'s caller, generic over the transport.
pub trait WithTransport {
    type Output;
    fn with<T: LabTransport>(self) -> Self::Output;
}

/// The registration of the transports: the one named `p`, handed to `w`.
pub fn dispatch<W: WithTransport>(p: Protocol, w: W) -> W::Output {
    match p {
        Protocol::Tcp => w.with::<Tcp>(),
        Protocol::Rdp => w.with::<Rdp>(),
    }
}

/// The lab's TCP (crates/tcp) on the simulator: the client-server scenarios through `sim_backend`, the
/// flows scenarios (`[dumbbell]`, `[[link]]`) through `topology`.
#[derive(Debug, Clone, Copy)]
pub struct Tcp;

impl LabTransport for Tcp {
    type Conn = tcplab_tcp::Connection;
    type Config = tcplab_tcp::TcpConfig;
    const NAME: Protocol = Protocol::Tcp;
    const KNOBS: &'static [(&'static str, &'static str)] = tcplab_tcp::config::KNOBS;

    /// The `rfc` personality's (a host's default `stack`).
    fn knob_defaults() -> toml::Table {
        let cfg = tcplab_tcp::TcpConfig::personality("rfc").expect("the rfc personality exists");
        toml::Table::try_from(cfg).expect("a TcpConfig serializes to TOML")
    }

    fn run_point(
        s: &Scenario,
        seed: u64,
        probe: Option<&mut dyn Probe<tcplab_tcp::Connection>>,
    ) -> Result<PointRun, RunError> {
        if s.has_flows() {
            let (run, flows, flow_series) = crate::topology::run_with(s, seed, probe).map_err(RunError::Sim)?;
            let aggregate = Some(crate::topology::aggregate(&flows));
            let point = Point {
                params: serde_json::Map::new(),
                iterations: 1,
                metrics: crate::metrics::metrics(&s.test, &run),
                confidence: None,
                connections: run.connections,
                series: None,
                rtt_samples: None,
                logvars: None,
                links: run.links,
                health: None,
                published: Vec::new(),
                flows,
                aggregate,
                flow_series,
            };
            return Ok(PointRun { point, engine: run.engine });
        }
        let run = crate::sim_backend::run_with(s, seed, probe).map_err(RunError::Sim)?;
        let point = Point {
            params: serde_json::Map::new(),
            iterations: 1,
            metrics: crate::metrics::metrics(&s.test, &run),
            confidence: None,
            connections: run.connections,
            series: run.series,
            rtt_samples: None,
            logvars: run.logvars,
            links: run.links,
            health: None,
            published: Vec::new(),
            flows: Vec::new(),
            aggregate: None,
            flow_series: None,
        };
        Ok(PointRun { point, engine: run.engine })
    }
}

/// RDP (RFC 908, RFC 1151; crates/rdp) on the simulator, through `rdp_backend`.
#[derive(Debug, Clone, Copy)]
pub struct Rdp;

impl LabTransport for Rdp {
    type Conn = tcplab_rdp::RdpConnection;
    type Config = tcplab_rdp::RdpConfig;
    const NAME: Protocol = Protocol::Rdp;
    const KNOBS: &'static [(&'static str, &'static str)] = tcplab_rdp::config::KNOBS;

    fn knob_defaults() -> toml::Table {
        toml::Table::try_from(tcplab_rdp::RdpConfig::default()).expect("an RdpConfig serializes to TOML")
    }

    fn untraceable(s: &Scenario) -> Option<String> {
        // RDP version 1 has 8-bit ports; the simulator's (5001, ephemeral 32768 and up) do not fit its header.
        [&s.client, &s.server].iter().any(|h| h.config::<Self::Config>().is_some_and(|r| r.version.number() == 1)).then(
            || {
                "RDP version 1 has 8-bit ports, which the simulated connections' ports (5001, 32768 and up) do not \
             fit; accepted: rdp.version = 2 on both hosts"
                    .to_string()
            },
        )
    }

    fn run_point(
        s: &Scenario,
        seed: u64,
        probe: Option<&mut dyn Probe<tcplab_rdp::RdpConnection>>,
    ) -> Result<PointRun, RunError> {
        crate::rdp_backend::run_point(s, seed, probe).map_err(RunError::Sim)
    }
}
