//! Running a scenario into a result document: which backend runs a point, and the metrics of the test
//! kind from what the backend reported ([`BackendRun`]). The document's types are in [`crate::result`],
//! which knows no backend, so that the backends and this dispatch sit above it (docs/architecture.md).

use tcplab_workload::{Report, Role};

use crate::result::{
    BackendRun, CpuMetrics, Metrics, MsgMetrics, Point, PointRun, ResultDoc, RrMetrics, RunError, Sides,
    StreamMetrics, SCHEMA,
};
use crate::scenario::{Scenario, TestKind};

/// The CPU figures of a window of `elapsed` that moved `bytes` in `transactions` (0 for bulk tests).
fn cpu_metrics(
    cpu: &[Option<tcplab_sim::CpuReport>; 2],
    elapsed: tcplab_units::Duration,
    bytes: u64,
    transactions: Option<u64>,
) -> Option<CpuMetrics> {
    if cpu.iter().all(Option::is_none) {
        return None;
    }
    let side = |f: &dyn Fn(&tcplab_sim::CpuReport) -> f64| Sides {
        local: cpu[0].as_ref().map(f),
        remote: cpu[1].as_ref().map(f),
    };
    let busy_us = |c: &tcplab_sim::CpuReport| c.busy_window.as_nanos() as f64 / 1e3;
    let per = |n: f64| move |c: &tcplab_sim::CpuReport| if n > 0.0 { busy_us(c) / n } else { f64::NAN };
    Some(CpuMetrics {
        cpu_source: "modeled".into(),
        cpu_scope: None,
        cpu_util_percent: side(&|c| {
            100.0 * c.busy_window.as_nanos() as f64 / (elapsed.as_nanos() as f64 * c.cores as f64).max(1.0)
        }),
        service_demand_us_per_kb: side(&per(bytes as f64 / 1024.0)),
        service_demand_us_per_tr: transactions.map(|t| side(&per(t as f64))),
    })
}

/// The metrics of `kind` from what the backend reported.
fn metrics(test: &crate::scenario::Test, run: &BackendRun) -> Metrics {
    let kind = test.kind;
    match kind {
        TestKind::TcpStream | TestKind::TcpMaerts => {
            // Goodput is what the receiving application read during the window.
            let (delivered, elapsed) = run
                .apps
                .iter()
                .filter_map(|(_, r)| match r {
                    Report::Stream(s) if s.role == Role::Receive => Some((s.window_bytes, s.elapsed)),
                    _ => None,
                })
                .fold((0, tcplab_units::Duration::ZERO), |(b, d), (wb, we)| (b + wb, d.max(we)));
            let secs = elapsed.as_secs_f64();
            Metrics::Stream(StreamMetrics {
                throughput_bps: if elapsed.is_zero() { 0.0 } else { delivered as f64 * 8.0 / secs },
                delivered_bytes: delivered,
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                cpu: cpu_metrics(&run.cpu, elapsed, delivered, None),
            })
        }
        TestKind::TcpRr | TestKind::TcpCrr => {
            let client = run
                .apps
                .iter()
                .find_map(|(_, r)| match r {
                    Report::Rr(r) if r.client => Some(r),
                    _ => None,
                })
                .expect("a request/response test has a client");
            let secs = client.elapsed.as_secs_f64();
            let crr = kind == TestKind::TcpCrr;
            Metrics::Rr(RrMetrics {
                transactions_per_s: if client.elapsed.is_zero() { 0.0 } else { client.transactions as f64 / secs },
                transactions: client.transactions,
                latency_us: client.latency.into(),
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                connections_opened: crr.then_some(client.connections_opened),
                port_waits: crr.then_some(client.port_waits),
                cpu: cpu_metrics(
                    &run.cpu,
                    client.elapsed,
                    client.transactions
                        * (test.request.map_or(1, |b| b.bytes()) + test.response.map_or(1, |b| b.bytes())),
                    Some(client.transactions),
                ),
            })
        }
        TestKind::TcpMsg => {
            let r = run
                .apps
                .iter()
                .find_map(|(_, r)| match r {
                    Report::Msg(r) if r.receiver => Some(r),
                    _ => None,
                })
                .expect("a message test has a receiver");
            let secs = r.elapsed.as_secs_f64();
            let per_s = |x: f64| if r.elapsed.is_zero() { 0.0 } else { x / secs };
            Metrics::Msg(MsgMetrics {
                messages_per_s: per_s(r.messages as f64),
                messages: r.messages,
                throughput_bps: per_s(r.window_bytes as f64 * 8.0),
                delivered_bytes: r.window_bytes,
                time_per_message_us: r.time_per_message.into(),
                latency_us: r.latency.into(),
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                cpu: cpu_metrics(&run.cpu, r.elapsed, r.window_bytes, None),
            })
        }
        TestKind::RdpStream | TestKind::RdpRr => unreachable!("RDP runs through crate::rdp_backend"),
    }
}

/// Runs one point of the scenario on the simulator with `seed`.
pub fn run_point(s: &Scenario, seed: u64) -> Result<PointRun, RunError> {
    run_point_with(s, seed, None)
}

/// [`run_point`], with a probe of the caller's (a packet trace) told every packet event.
pub fn run_point_with(
    s: &Scenario,
    seed: u64,
    probe: Option<&mut dyn tcplab_sim::Probe<tcplab_tcp::Connection>>,
) -> Result<PointRun, RunError> {
    if s.test.kind.is_rdp() {
        if probe.is_some() {
            return Err(RunError::Unsupported(format!(
                "test.kind = {:?} runs RDP: its packet trace is a probe of RDP segments (run_scenario_with_rdp)",
                s.test.kind.key()
            )));
        }
        return crate::rdp_backend::run_point(s, seed, None).map_err(RunError::Sim);
    }
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
            metrics: metrics(&s.test, &run),
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
        metrics: metrics(&s.test, &run),
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

/// Runs the scenario on the simulator with `seed`.
pub fn run_scenario(s: &Scenario, seed: u64) -> Result<ResultDoc, RunError> {
    run_scenario_with(s, seed, None)
}

/// [`run_scenario`], with a probe of the caller's told every packet event.
pub fn run_scenario_with(
    s: &Scenario,
    seed: u64,
    probe: Option<&mut dyn tcplab_sim::Probe<tcplab_tcp::Connection>>,
) -> Result<ResultDoc, RunError> {
    let p = run_point_with(s, seed, probe)?;
    Ok(single_point_doc(s, seed, p))
}

/// [`run_scenario`] of an RDP test (`rdp_stream`, `rdp_rr`), with a probe of the caller's told every packet
/// event (RDP segments: a pcap trace of protocol 27).
pub fn run_scenario_with_rdp(
    s: &Scenario,
    seed: u64,
    probe: Option<&mut dyn tcplab_sim::Probe<tcplab_rdp::RdpConnection>>,
) -> Result<ResultDoc, RunError> {
    if !s.test.kind.is_rdp() {
        return Err(RunError::Unsupported(format!(
            "test.kind = {:?} runs TCP: its packet trace is a probe of TCP segments (run_scenario_with)",
            s.test.kind.key()
        )));
    }
    let p = crate::rdp_backend::run_point(s, seed, probe).map_err(RunError::Sim)?;
    Ok(single_point_doc(s, seed, p))
}

/// The document of one point run on the simulator.
fn single_point_doc(s: &Scenario, seed: u64, mut p: PointRun) -> ResultDoc {
    p.point.compare_published(s);
    ResultDoc {
        schema: SCHEMA,
        tcplab: env!("CARGO_PKG_VERSION").into(),
        backend: "sim",
        seed,
        scenario: s.clone(),
        sweep: None,
        repeat: None,
        points: vec![p.point],
        shard: None,
    }
}

/// Runs the scenario on the Linux backend (root and Linux required): the kernel's TCP through tcplab's link
/// emulator. The point carries the run's `health`; a run whose health stayed bad after a few attempts is
/// reported with `health.valid = false`.
pub fn run_scenario_linux(s: &Scenario, seed: u64) -> Result<ResultDoc, crate::linux_backend::LinuxError> {
    run_scenario_linux_with(s, seed, None)
}

/// [`run_scenario_linux`], with a packet trace from the emulator's tap. The CPU figures are measured
/// (system-wide, from /proc/stat); the health also records how many runs were made (`attempts`), whether
/// the applications ran at a real-time priority (`apps_realtime`) and each namespace's kernel counters
/// (`netstat`: `client`, `server`).
pub fn run_scenario_linux_with(
    s: &Scenario,
    seed: u64,
    pcap: Option<tcplab_emu::PcapSpec>,
) -> Result<ResultDoc, crate::linux_backend::LinuxError> {
    let point = run_point_linux(s, seed, pcap)?;
    Ok(ResultDoc {
        schema: SCHEMA,
        tcplab: env!("CARGO_PKG_VERSION").into(),
        backend: "linux",
        seed,
        scenario: crate::linux_backend::on_kernel(s).0,
        points: vec![point],
        sweep: None,
        repeat: None,
        shard: None,
    })
}

/// One point of `s` on the Linux backend (as [`run_scenario_linux_with`]), compared with the scenario's
/// published figures.
pub fn run_point_linux(
    s: &Scenario,
    seed: u64,
    pcap: Option<tcplab_emu::PcapSpec>,
) -> Result<Point, crate::linux_backend::LinuxError> {
    let lr = crate::linux_backend::run(s, seed, pcap)?;
    let run = lr.run;
    let mut health = serde_json::to_value(&lr.health).expect("health serializes");
    health["attempts"] = lr.attempts.into();
    health["apps_realtime"] = lr.apps_realtime.into();
    health["netstat"] = serde_json::json!({ "client": lr.netstat[0], "server": lr.netstat[1] });
    let mut metrics = metrics(&s.test, &run);
    if let Metrics::Stream(StreamMetrics { cpu: Some(c), .. })
    | Metrics::Rr(RrMetrics { cpu: Some(c), .. })
    | Metrics::Msg(MsgMetrics { cpu: Some(c), .. }) = &mut metrics
    {
        c.cpu_source = "measured".into();
        c.cpu_scope = Some("system".into());
    }
    let point = Point {
        params: serde_json::Map::new(),
        iterations: 1,
        metrics,
        connections: run.connections,
        series: None,
        rtt_samples: None,
        logvars: None,
        links: run.links,
        health: Some(health),
        confidence: None,
        published: Vec::new(),
        flows: Vec::new(),
        aggregate: None,
        flow_series: None,
    };
    let mut point = point;
    point.compare_published(s);
    Ok(point)
}
