//! The lab: scenario files, validation, and running a scenario on a backend into a result document
//! (`schema: "tcplab.result/2"`, docs/results.md).

pub mod bounds;
pub mod budget;
pub mod columns;
pub mod error;
pub mod host_transports;
pub mod keys;
pub mod limits;
pub mod linux_backend;
pub mod merge;
mod metrics;
pub mod migrate;
pub mod probes;
pub mod published;
pub mod queues;
pub mod result;
pub mod run;
pub mod scenario;
mod sim_backend;
pub mod stats;
pub mod sweep;
pub mod topology;
pub mod transport;

pub use error::{Origin, ScenarioError};
pub use result::{PointRun, ResultDoc, RunError};
pub use run::{run_point, run_point_on, run_scenario, run_scenario_linux, run_scenario_linux_with, run_scenario_on};
pub use scenario::{load, Protocol, Scenario, Source, TestKind, SHIPPED};
pub use transport::{LabTransport, Tcp};

/// Registers the transports the lab runs: their configs in `host_transports::REGISTERED` (the scenario
/// layer's declarations), their runs in `transport::dispatch`. Here, at the crate root, because the list
/// names each `LabTransport` (above the backends) and the scenario layer below reads it: the root is where
/// the layers meet, no layer of its own (crates/lab/tests/module_graph.rs reads the modules).
macro_rules! register_transports {
    ($($(#[$attr:meta])* $t:ty),+ $(,)?) => {
        /// The registered transports, in the order given to `register_transports!`.
        pub(crate) const REGISTERED: &[host_transports::Registration] =
            &[$($(#[$attr])* transport::registration::<$t>()),+];

        /// The arm of `transport::dispatch` for each registered transport.
        pub(crate) fn dispatch_registered<W: transport::WithTransport>(p: Protocol, w: W) -> W::Output {
            $(
                $(#[$attr])*
                if p == <$t as transport::LabTransport>::NAME {
                    return w.with::<$t>();
                }
            )+
            unreachable!("{p:?}: a Protocol names a registered transport")
        }
    };
}

// The transports, in the order a result document writes a host's tables: TCP first (every host carries
// it; its `stack` is a TCP personality). A new transport: its crate, `host_transports/NAME.rs`,
// `transport/NAME.rs`, and its line here (docs/architecture.md § How to add a transport).
register_transports! {
    transport::Tcp,
    transport::Rdp,
    #[cfg(test)]
    transport::toy::Toy,
}
