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
mod rdp_backend;
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
pub use transport::{LabTransport, Rdp, Tcp};
