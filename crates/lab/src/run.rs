//! Running a scenario into a result document: one generic path over the transport
//! ([`run_point_on`], [`run_scenario_on`]; [`run_point`] and [`run_scenario`] pick the transport of the
//! test kind), and the Linux backend's. The document's types are in [`crate::result`], which knows no
//! backend, so that the backends and this dispatch sit above it (docs/architecture.md).

use crate::result::{Metrics, MsgMetrics, Point, PointRun, ResultDoc, RrMetrics, RunError, StreamMetrics, SCHEMA};
use crate::scenario::Scenario;
use crate::transport::{dispatch, LabTransport, WithTransport};

/// Runs one point of the scenario on the simulator with `seed`, on the transport its test kind runs.
pub fn run_point(s: &Scenario, seed: u64) -> Result<PointRun, RunError> {
    struct Job<'a>(&'a Scenario, u64);
    impl WithTransport for Job<'_> {
        type Output = Result<PointRun, RunError>;
        fn with<T: LabTransport>(self) -> Self::Output {
            run_point_on::<T>(self.0, self.1, None)
        }
    }
    dispatch(s.test.transport, Job(s, seed))
}

/// [`run_point`] on the transport `T`, with a probe of the caller's (a packet trace of `T`'s segments)
/// told every packet event. A test kind that `T` does not run is refused.
pub fn run_point_on<T: LabTransport>(
    s: &Scenario,
    seed: u64,
    probe: Option<&mut dyn tcplab_sim::Probe<T::Conn>>,
) -> Result<PointRun, RunError> {
    if !T::runs(s.test.transport) {
        return Err(RunError::Unsupported(format!(
            "test.kind = {:?} does not run {}: its packet trace is a probe of its own transport's segments",
            s.test.kind_name(),
            T::PROTOCOL
        )));
    }
    T::run_point(s, seed, probe)
}

/// Runs the scenario on the simulator with `seed`.
pub fn run_scenario(s: &Scenario, seed: u64) -> Result<ResultDoc, RunError> {
    Ok(single_point_doc(s, seed, run_point(s, seed)?))
}

/// [`run_scenario`] on the transport `T`, with a probe of the caller's told every packet event (a pcap
/// trace: TCP segments for [`Tcp`](crate::transport::Tcp), RDP segments, protocol 27, for
/// [`Rdp`](crate::transport::Rdp)).
pub fn run_scenario_on<T: LabTransport>(
    s: &Scenario,
    seed: u64,
    probe: Option<&mut dyn tcplab_sim::Probe<T::Conn>>,
) -> Result<ResultDoc, RunError> {
    Ok(single_point_doc(s, seed, run_point_on::<T>(s, seed, probe)?))
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
    if let Some(sampling) = lr.series_sampling {
        health["series_sampling"] = serde_json::to_value(sampling).expect("sampling serializes");
    }
    health["netstat"] = serde_json::json!({ "client": lr.netstat[0], "server": lr.netstat[1] });
    let mut metrics = crate::metrics::metrics(&s.test, &run);
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
        series: run.series,
        rtt_samples: None,
        logvars: run.logvars,
        links: run.links,
        health: Some(health),
        confidence: None,
        iteration_stddev: None,
        published: Vec::new(),
        flows: Vec::new(),
        aggregate: None,
        flow_series: None,
    };
    let mut point = point;
    point.compare_published(s);
    Ok(point)
}
