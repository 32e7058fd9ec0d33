//! The lab's TCP on the simulator: how a point runs (its knobs, keys and limits are declared by
//! `TcpConfig`, crate::host_transports).

use tcplab_sim::Probe;

use super::LabTransport;
use crate::result::{Point, PointRun, RunError};
use crate::scenario::Scenario;

/// The lab's TCP (crates/tcp) on the simulator: the client-server scenarios through `sim_backend`, the
/// flows scenarios (`[dumbbell]`, `[[link]]`) through `topology`.
#[derive(Debug, Clone, Copy)]
pub struct Tcp;

impl LabTransport for Tcp {
    type Conn = tcplab_tcp::Connection;
    type Config = tcplab_tcp::TcpConfig;

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
        // A flows scenario's backend run carries no series or logvars of its own (its flows' series are
        // `flow_series`), so one point shape serves both.
        let (run, flows, flow_series) = if s.has_flows() {
            crate::topology::run_with(s, seed, probe).map_err(RunError::Sim)?
        } else {
            (crate::sim_backend::run_with(s, seed, probe).map_err(RunError::Sim)?, Vec::new(), None)
        };
        let aggregate = s.has_flows().then(|| crate::topology::aggregate(&flows));
        let point = Point {
            params: serde_json::Map::new(),
            iterations: 1,
            metrics: crate::metrics::metrics(&s.test, &run),
            confidence: None,
            iteration_stddev: None,
            connections: run.connections,
            series: run.series,
            rtt_samples: None,
            logvars: run.logvars,
            links: run.links,
            health: None,
            published: Vec::new(),
            flows,
            aggregate,
            flow_series,
        };
        Ok(PointRun { point, engine: run.engine })
    }
}
