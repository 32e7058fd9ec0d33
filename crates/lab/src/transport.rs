//! The transports the lab runs, behind one trait. A transport implements [`LabTransport`] once: which
//! test kinds run it, how a point runs on the simulator (its spec, its statistics mapped to metrics), and
//! what its packets need to be written to a trace. [`dispatch`] is the one registration: a new transport
//! adds its module, its implementation here and a line there (docs/architecture.md § How to add).
//!
//! This module sits above the backends (`sim_backend`, `topology`, `rdp_backend`) and below the run path
//! (`crate::run`), which is generic over the trait: no backend depends on it.

use tcplab_sim::Probe;

use crate::result::{Point, PointRun, RunError};
use crate::scenario::{Protocol, Scenario};

/// A transport protocol as the lab runs it.
pub trait LabTransport {
    /// The sans-IO endpoint the simulator runs (its segments are what a packet trace sees).
    type Conn: tcplab_transport::Transport;
    /// The protocol's name in results (`connections[].protocol`).
    const PROTOCOL: &'static str = <Self::Conn as tcplab_transport::Transport>::PROTOCOL;

    /// The transport's name in scenario files (`test.transport`), which [`dispatch`] maps to it.
    const NAME: Protocol;

    /// Whether a test whose transport is `p` runs this transport.
    fn runs(p: Protocol) -> bool {
        p == Self::NAME
    }
    /// Why the packets of `s` cannot be written to a packet trace, if they cannot (a header too small
    /// for the simulator's ports), said after `--pcap: `.
    fn untraceable(_s: &Scenario) -> Option<String> {
        None
    }
    /// One point of `s` on the simulator with `seed`; `probe`, a packet trace of the caller's, is told
    /// every packet event. `s` is a test of a kind this transport [`runs`](LabTransport::runs).
    fn run_point(s: &Scenario, seed: u64, probe: Option<&mut dyn Probe<Self::Conn>>) -> Result<PointRun, RunError>;
}

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
    const NAME: Protocol = Protocol::Tcp;

    fn run_point(
        s: &Scenario,
        seed: u64,
        probe: Option<&mut dyn Probe<tcplab_tcp::Connection>>,
    ) -> Result<PointRun, RunError> {
        if s.has_flows() {
            if probe.is_some() {
                return Err(RunError::Unsupported(
                    "a [dumbbell] or [[link]] scenario has no packet trace yet (--pcap takes the client-server scenarios)"
                        .into(),
                ));
            }
            let (run, flows, flow_series) = crate::topology::run(s, seed).map_err(RunError::Sim)?;
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
    const NAME: Protocol = Protocol::Rdp;

    fn untraceable(s: &Scenario) -> Option<String> {
        // RDP version 1 has 8-bit ports; the simulator's (5001, ephemeral 32768 and up) do not fit its header.
        [&s.client, &s.server].iter().any(|h| h.rdp.as_ref().is_some_and(|r| r.version.number() == 1)).then(|| {
            "RDP version 1 has 8-bit ports, which the simulated connections' ports (5001, 32768 and up) do not \
             fit; accepted: rdp.version = 2 on both hosts"
                .to_string()
        })
    }

    fn run_point(
        s: &Scenario,
        seed: u64,
        probe: Option<&mut dyn Probe<tcplab_rdp::RdpConnection>>,
    ) -> Result<PointRun, RunError> {
        crate::rdp_backend::run_point(s, seed, probe).map_err(RunError::Sim)
    }
}
