//! RDP on the simulator: how a point runs and what a packet trace needs (its knobs, keys and limits are
//! declared by `RdpConfig`, crate::host_transports).

use tcplab_sim::Probe;

use super::LabTransport;
use crate::host_transports::OwnMetrics;
use crate::result::{strict_metrics, PointRun, RunError};
use crate::scenario::Scenario;

mod backend;

pub use backend::RdpStreamMetrics;

/// RDP (RFC 908, RFC 1151; crates/rdp) on the simulator, through its backend (`backend.rs` beside this file).
#[derive(Debug, Clone, Copy)]
pub struct Rdp;

impl LabTransport for Rdp {
    type Conn = tcplab_rdp::RdpConnection;
    type Config = tcplab_rdp::RdpConfig;

    /// A stream's figures count messages, duplicates and drops (`RdpStreamMetrics`); its rr's are the
    /// workload's (`RrMetrics`).
    const OWN_METRICS: &'static [OwnMetrics] = &[OwnMetrics {
        workload: "stream",
        marker: "messages_delivered",
        headline: &["throughput_bps", "retransmissions", "duplicates_received", "timeouts"],
        read: |v| strict_metrics::<RdpStreamMetrics>(v).map(|m| Box::new(m) as _),
    }];

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
        backend::run_point(s, seed, probe).map_err(RunError::Sim)
    }
}
