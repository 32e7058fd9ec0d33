//! Running a scenario and the result document.

use serde::Serialize;
use tcplab_link::{LinkStats, NicStats};
use tcplab_sim::{ConnectionResult, Direction, HostSpec, RunResult, Series, SimError, SimSpec, TestSpec};

use crate::scenario::{Scenario, TestKind};

/// The result document (`--json`), schema `tcplab.result/1`.
#[derive(Debug, Clone, Serialize)]
pub struct ResultDoc {
    pub schema: &'static str,
    pub tcplab: &'static str,
    pub backend: &'static str,
    pub seed: u64,
    pub scenario: Scenario,
    pub points: Vec<Point>,
}

/// One point of the scenario (one set of parameters); a sweep has several.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The sweep coordinates of this point (empty without a sweep).
    pub params: serde_json::Map<String, serde_json::Value>,
    pub iterations: u32,
    pub metrics: Metrics,
    pub connections: Vec<ConnectionResult>,
    /// The first sender's gauges over time, when `test.series` asked for them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    pub links: Links,
}

/// Figures of merit; a metric that does not apply to the test is absent, not zero.
#[derive(Debug, Clone, Serialize)]
pub struct Metrics {
    /// Payload bits per second delivered to the receiving application during the measurement.
    pub throughput_bps: f64,
    /// Payload bytes delivered during the measurement.
    pub delivered_bytes: u64,
    /// Segments retransmitted by all endpoints during the whole run (SYN and FIN retransmissions included).
    pub retransmissions: u64,
    /// Length of the measurement, seconds.
    pub elapsed_s: f64,
}

/// Link and NIC counters of the point.
#[derive(Debug, Clone, Serialize)]
pub struct Links {
    pub up: LinkStats,
    pub down: LinkStats,
    pub nic_client: NicStats,
    pub nic_server: NicStats,
}

/// The simulator's input for a scenario.
pub fn sim_spec(s: &Scenario) -> SimSpec {
    let host = |h: &crate::scenario::Host| HostSpec {
        tcp: h.tcp.clone(),
        nic_rate: h.host.nic_rate,
        txqueuelen: h.host.txqueuelen,
    };
    SimSpec {
        up: s.path.up.clone(),
        down: s.path.down.clone(),
        client: host(&s.client),
        server: host(&s.server),
        test: TestSpec {
            direction: match s.test.kind {
                TestKind::TcpMaerts => Direction::ServerToClient,
                _ => Direction::ClientToServer,
            },
            duration: s.test.duration,
            message: s.test.message.bytes(),
            parallel: s.test.parallel,
            series_interval: s.test.series,
        },
    }
}

/// Runs the scenario on the simulator with `seed`.
pub fn run_scenario(s: &Scenario, seed: u64) -> Result<ResultDoc, SimError> {
    let r: RunResult = tcplab_sim::run(&sim_spec(s), seed)?;
    let point = Point {
        params: serde_json::Map::new(),
        iterations: 1,
        metrics: Metrics {
            throughput_bps: r.throughput_bps,
            delivered_bytes: r.delivered_bytes,
            retransmissions: r.retransmissions,
            elapsed_s: r.elapsed_s,
        },
        connections: r.connections,
        series: r.series,
        links: Links { up: r.link_up, down: r.link_down, nic_client: r.nic_client, nic_server: r.nic_server },
    };
    Ok(ResultDoc {
        schema: "tcplab.result/1",
        tcplab: env!("CARGO_PKG_VERSION"),
        backend: "sim",
        seed,
        scenario: s.clone(),
        points: vec![point],
    })
}
