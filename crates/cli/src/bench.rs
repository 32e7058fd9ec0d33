//! `tcplab bench`: fixed workloads, each run in a fresh child process (so its peak memory is its own),
//! reporting wall time, simulated data segments and events per wall second, and peak RSS.
//! With `--jobs N` the repetitions of a workload run on N threads, and the serial run is done too so
//! that speedup, efficiency and identity of results can be reported. A sweep workload (a scenario with a
//! `[sweep]`) runs its points through the lab's work-stealing pool (`tcplab run`'s path) on all cores, or
//! `--jobs N` threads, and on one thread, and reports the same figures.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant as WallClock;

use clap::Args;
use serde::{Deserialize, Serialize};
use tcplab_lab::{load, Source};

/// The benchmark workloads, as scenario files in bench/workloads/ (docs/benchmarks.md describes them).
pub const WORKLOADS: &[(&str, &str)] = &[
    ("bulk-1g", include_str!("../../../scenarios/bulk-1g.toml")),
    ("bulk-1g-bbr", include_str!("../../../bench/workloads/bulk-1g-bbr.toml")),
    ("bulk-100m-loss", include_str!("../../../bench/workloads/bulk-100m-loss.toml")),
    ("flows-1000", include_str!("../../../bench/workloads/flows-1000.toml")),
    ("flows-100k", include_str!("../../../bench/workloads/flows-100k.toml")),
    ("rr-1000", include_str!("../../../bench/workloads/rr-1000.toml")),
    ("rdp-loopback", include_str!("../../../scenarios/rdp-loopback.toml")),
    ("sweep-rr", include_str!("../../../bench/workloads/sweep-rr.toml")),
];

/// Workloads written by [`dumbbell_workload`] rather than kept as files: N flows through one
/// bottleneck (issue 24's engine benchmarks), as many flows as the name says.
const DUMBBELLS: &[(&str, usize)] = &[("dumbbell-100", 100), ("dumbbell-10k", 10_000)];

/// Every workload's name, files first.
fn all_workloads() -> Vec<&'static str> {
    WORKLOADS.iter().map(|(w, _)| *w).chain(DUMBBELLS.iter().map(|(w, _)| *w)).collect()
}

/// A workload's scenario text.
fn workload_text(name: &str) -> Option<std::borrow::Cow<'static, str>> {
    if let Some((_, text)) = WORKLOADS.iter().find(|(w, _)| *w == name) {
        return Some(std::borrow::Cow::Borrowed(text));
    }
    DUMBBELLS.iter().find(|(w, _)| *w == name).map(|&(w, n)| std::borrow::Cow::Owned(dumbbell_workload(w, n)))
}

/// `n` Reno bulk flows (`rfc` stacks) through a 1 Gbit/s, 5 ms bottleneck with a 1000-frame drop-tail
/// queue, for 10 s: flow i's access delay is 1 + (i mod 10) ms (RTTs 12 to 30 ms, so the flows do not
/// move in lockstep) and it starts i µs after the first (the first windows do not all land in the queue
/// at one instant). Buffers of 25 MiB / n, 16 KiB to 1 MiB, several times a flow's share of the
/// bandwidth-delay product: what the flows hold when the measurement ends drains after it (1 MiB each
/// would be 80 s more of simulated time for 10,000 flows). Written out, since a dumbbell names each flow.
pub fn dumbbell_workload(name: &str, n: usize) -> String {
    use std::fmt::Write;
    let buffer_kib = (25 * 1024 / n.max(1)).clamp(16, 1024);
    let message_kib = buffer_kib.min(64);
    let mut t = format!(
        "name = \"{name}\"\n\
         description = \"{n} bulk flows through a 1 Gbit/s, 5 ms dumbbell bottleneck, 10 s (tcplab bench)\"\n\
         [dumbbell]\n\
         bottleneck = {{ rate = \"1gbit\", delay = \"5ms\", queue = \"1000pkt\" }}\n\
         [test]\nduration = \"10s\"\n"
    );
    for i in 0..n {
        let _ = write!(
            t,
            "[[flow]]\nkind = \"stream\"\nstack = \"rfc\"\nmessage = \"{message_kib}KiB\"\n\
             tcp = {{ send_buffer = \"{buffer_kib}KiB\", recv_buffer = \"{buffer_kib}KiB\" }}\n\
             access_delay = \"{}ms\"\nstart = \"{i}us\"\n",
            1 + i % 10
        );
    }
    t
}

/// The workloads `tcplab bench` runs when none is named.
const DEFAULT_WORKLOADS: &[&str] = &["bulk-1g", "bulk-1g-bbr", "bulk-100m-loss", "flows-1000", "rr-1000"];

#[derive(Args)]
pub struct BenchArgs {
    /// Workload to run (repeatable): bulk-1g, bulk-1g-bbr, bulk-100m-loss, flows-1000, flows-100k, rr-1000, rdp-loopback,
    /// sweep-rr, dumbbell-100, dumbbell-10k.
    /// Default: bulk-1g, bulk-1g-bbr, bulk-100m-loss, flows-1000, rr-1000.
    #[arg(long = "workload", value_name = "NAME")]
    workloads: Vec<String>,
    #[command(flatten)]
    runs: RunOpts,
    /// Write the results (schema tcplab.bench/1) to FILE, or "-" for stdout.
    #[arg(long, value_name = "FILE|-")]
    json: Option<String>,
}

#[derive(Args)]
pub struct BenchOneArgs {
    name: String,
    #[command(flatten)]
    runs: RunOpts,
}

/// How a workload is run; the parent passes these on to its child process.
#[derive(Args, Clone)]
struct RunOpts {
    /// Runs (seeds 1..=N) per workload.
    #[arg(long, default_value_t = 1)]
    repeat: u64,
    /// Threads running the repetitions; above 1 the serial run is measured too. A sweep workload runs its
    /// points on this many threads, or on every core when it is 1, and always serially too.
    #[arg(long, default_value_t = 1)]
    jobs: u64,
    /// Override the simulated duration (e.g. "5s") for a quick look.
    #[arg(long)]
    duration: Option<String>,
}

/// One workload's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadResult {
    pub name: String,
    /// Simulated seconds per run (mean over the repetitions; a sweep: of all its points), handshake and close
    /// included.
    pub simulated_s: f64,
    /// A sweep workload: its points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub points: Option<usize>,
    pub repeat: u64,
    pub jobs: u64,
    /// Wall time of all repetitions.
    pub wall_s: f64,
    pub wall_per_run_s: f64,
    /// Data-carrying TCP segments simulated, all repetitions.
    pub data_segments: u64,
    pub segments_per_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    /// Mean goodput of a run, Mbit/s (a sanity check that the work was real).
    pub goodput_mbps: f64,
    /// Request/response workloads: mean transactions per second of a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transactions_per_s: Option<f64>,
    /// Peak resident memory of the process, bytes (VmHWM).
    pub peak_rss_bytes: u64,
    /// Connections of one run (flows of a dumbbell, `test.parallel` otherwise); absent for a sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u64>,
    /// (Peak resident memory − resident memory before the first run) / flows, bytes: what one flow (its two
    /// endpoints, and in a dumbbell its two hosts and access links) costs. Only with `--jobs 1`, where one
    /// run at a time holds memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_flow: Option<u64>,
    /// With jobs > 1: the same repetitions on one thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_wall_s: Option<f64>,
    /// serial_wall_s / wall_s / jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_efficiency: Option<f64>,
    /// Whether every repetition gave the same result in parallel as serially.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identical_to_serial: Option<bool>,
}

#[derive(Serialize)]
struct BenchDoc {
    schema: &'static str,
    tcplab: &'static str,
    machine: Machine,
    workloads: Vec<WorkloadResult>,
}

#[derive(Serialize)]
struct Machine {
    cpus: usize,
    cpu_model: String,
}

/// Bad flags (exit status 2), or a failed run (1).
pub enum BenchError {
    BadInput(String),
    Run(String),
}

impl From<String> for BenchError {
    fn from(m: String) -> Self {
        BenchError::Run(m)
    }
}

pub fn bench(args: &BenchArgs) -> Result<(), BenchError> {
    let names: Vec<String> = if args.workloads.is_empty() {
        DEFAULT_WORKLOADS.iter().map(|s| s.to_string()).collect()
    } else {
        args.workloads.clone()
    };
    for n in &names {
        if !all_workloads().contains(&n.as_str()) {
            return Err(BenchError::BadInput(format!("--workload {n}: accepted: {}", all_workloads().join(", "))));
        }
    }
    if let Some(path) = args.json.as_deref().filter(|p| *p != "-") {
        crate::check_output_file("--json", std::path::Path::new(path)).map_err(|e| match e {
            crate::Failure::BadInput(m) | crate::Failure::Run(m) => BenchError::BadInput(m),
        })?;
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the tcplab binary: {e}"))?;
    let quiet = args.json.as_deref() == Some("-");
    if !quiet {
        println!(
            "{:<15} {:>9} {:>5} {:>9} {:>12} {:>14} {:>14} {:>10} {:>9}",
            "workload", "sim (s)", "runs", "wall (s)", "Mbit|tr/s", "data segs/s", "events/s", "peak MiB", "efficiency"
        );
    }
    let mut results = Vec::new();
    for name in &names {
        let mut cmd = Command::new(&exe);
        cmd.args(["bench-one", name, "--repeat", &args.runs.repeat.to_string(), "--jobs", &args.runs.jobs.to_string()]);
        if let Some(d) = &args.runs.duration {
            cmd.args(["--duration", d]);
        }
        let out = cmd.output().map_err(|e| format!("cannot run the benchmark child: {e}"))?;
        if !out.status.success() {
            return Err(format!("workload {name} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        let r: WorkloadResult =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("workload {name}: bad child output: {e}"))?;
        if !quiet {
            println!(
                "{:<15} {:>9.1} {:>5} {:>9.3} {:>12.1} {:>14.0} {:>14.0} {:>10.1} {:>9}",
                r.name,
                r.simulated_s,
                r.repeat,
                r.wall_s,
                r.transactions_per_s.unwrap_or(r.goodput_mbps),
                r.segments_per_s,
                r.events_per_s,
                r.peak_rss_bytes as f64 / (1024.0 * 1024.0),
                r.parallel_efficiency.map(|e| format!("{:.0}%", e * 100.0)).unwrap_or_else(|| "-".into())
            );
            if let (Some(flows @ 2..), Some(b)) = (r.flows, r.bytes_per_flow) {
                println!(
                    "  memory per flow: {:.2} KiB over {flows} flows (peak less the process before the run)",
                    b as f64 / 1024.0
                );
            }
            if r.identical_to_serial == Some(false) {
                println!("  !! parallel results differ from the serial run");
            }
        }
        results.push(r);
    }
    if let Some(path) = &args.json {
        let doc = BenchDoc {
            schema: "tcplab.bench/1",
            tcplab: env!("CARGO_PKG_VERSION"),
            machine: machine(),
            workloads: results,
        };
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        tcplab_report::write_atomic(path, &text).map_err(|e| format!("{path}: cannot write: {e}"))?;
    }
    Ok(())
}

fn machine() -> Machine {
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    Machine { cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1), cpu_model }
}

/// What one repetition produced, to compare a parallel run with the serial one.
#[derive(Debug, Clone, PartialEq)]
struct RunDigest {
    seed: u64,
    delivered: u64,
    events: u64,
    data_segments: u64,
    /// Virtual time the run simulated (an RDP transfer of `test.messages` stops long before its 1-day bound).
    simulated_ns: u64,
    throughput_bps: f64,
    transactions_per_s: Option<f64>,
}

fn run_all(scenario: &tcplab_lab::Scenario, repeat: u64, jobs: u64) -> Result<(f64, Vec<RunDigest>), String> {
    let next = AtomicU64::new(1);
    let done = Mutex::new(Vec::with_capacity(repeat as usize));
    let failed: Mutex<Option<String>> = Mutex::new(None);
    let t0 = WallClock::now();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed > repeat {
                    break;
                }
                let r = match tcplab_lab::run_point(scenario, seed) {
                    Ok(r) => r,
                    Err(e) => {
                        failed.lock().expect("no thread panicked while holding the lock").get_or_insert(e.to_string());
                        break;
                    }
                };
                let (delivered, throughput_bps, transactions_per_s) = match &r.point.metrics {
                    tcplab_lab::result::Metrics::Stream(m) => (m.delivered_bytes, m.throughput_bps, None),
                    tcplab_lab::result::Metrics::Rr(m) => (m.transactions, 0.0, Some(m.transactions_per_s)),
                    // A transport's own metrics: a transfer's figures by their names.
                    m @ tcplab_lab::result::Metrics::Own(_) => {
                        let v = serde_json::to_value(m).unwrap_or_default();
                        let num = |k: &str| v.get(k).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
                        (num("delivered_bytes") as u64, num("throughput_bps"), None)
                    }
                    tcplab_lab::result::Metrics::Msg(m) => (m.delivered_bytes, m.throughput_bps, None),
                };
                let d = RunDigest {
                    seed,
                    delivered,
                    events: r.engine.events,
                    data_segments: r.engine.data_segments,
                    simulated_ns: r.engine.simulated.as_nanos(),
                    throughput_bps,
                    transactions_per_s,
                };
                done.lock().expect("no thread panicked while holding the lock").push(d);
            });
        }
    });
    let wall = t0.elapsed().as_secs_f64();
    let mut v = done.into_inner().expect("no thread panicked while holding the lock");
    v.sort_by_key(|d| d.seed);
    if let Some(e) = failed.into_inner().expect("no thread panicked while holding the lock") {
        return Err(e);
    }
    Ok((wall, v))
}

pub fn bench_one(args: &BenchOneArgs) -> Result<(), String> {
    let text = workload_text(&args.name).ok_or_else(|| format!("no workload {}", args.name))?;
    let text = text.as_ref();
    let mut set = Vec::new();
    if let Some(d) = &args.runs.duration {
        set.push(format!("test.duration=\"{d}\""));
    }
    let src = Source { name: &args.name, text };
    let plan = tcplab_lab::sweep::plan(&src, &set, &[], &Default::default()).map_err(|e| e.to_string())?;
    if !plan.axes.is_empty() {
        return bench_sweep(args, &plan);
    }
    let scenario = load(&src, &set).map_err(|e| e.to_string())?;
    let flows =
        if scenario.flow.is_empty() { scenario.test.parallel.max(1) as u64 } else { scenario.flow.len() as u64 };
    // What the process holds before any run (the binary, the parsed scenario): the runs' memory is above it.
    let before_runs = resident();
    let repeat = args.runs.repeat.max(1);
    let (wall, runs) = run_all(&scenario, repeat, args.runs.jobs)?;
    let (serial_wall_s, parallel_efficiency, identical_to_serial) = if args.runs.jobs > 1 {
        let (serial, serial_runs) = run_all(&scenario, repeat, 1)?;
        (Some(serial), Some(serial / wall / args.runs.jobs as f64), Some(serial_runs == runs))
    } else {
        (None, None, None)
    };
    let data_segments: u64 = runs.iter().map(|r| r.data_segments).sum();
    let events: u64 = runs.iter().map(|r| r.events).sum();
    let result = WorkloadResult {
        name: args.name.clone(),
        // The time actually simulated, mean of the runs (not the scenario's duration, which for a transfer of
        // `test.messages` is only an upper bound).
        simulated_s: runs.iter().map(|r| r.simulated_ns as f64 / 1e9).sum::<f64>() / repeat as f64,
        points: None,
        repeat,
        jobs: args.runs.jobs,
        wall_s: wall,
        wall_per_run_s: wall * args.runs.jobs.max(1).min(repeat) as f64 / repeat as f64,
        data_segments,
        segments_per_s: data_segments as f64 / wall,
        events,
        events_per_s: events as f64 / wall,
        goodput_mbps: runs.iter().map(|r| r.throughput_bps).sum::<f64>() / repeat as f64 / 1e6,
        transactions_per_s: runs.iter().map(|r| r.transactions_per_s).sum::<Option<f64>>().map(|t| t / repeat as f64),
        peak_rss_bytes: peak_rss(),
        flows: Some(flows),
        bytes_per_flow: (args.runs.jobs <= 1).then(|| peak_rss().saturating_sub(before_runs) / flows),
        serial_wall_s,
        parallel_efficiency,
        identical_to_serial,
    };
    println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
    Ok(())
}

/// One pass over a sweep workload: `repeat` whole runs of the plan (seeds 1..=repeat) on `jobs` threads.
/// Returns the wall time, each run's document as JSON text, and the engine's counters over all of them.
fn run_sweep(
    plan: &tcplab_lab::sweep::Plan,
    repeat: u64,
    jobs: usize,
) -> Result<(f64, Vec<String>, tcplab_lab::result::EngineCounters), String> {
    let mut docs = Vec::new();
    let mut engine = tcplab_lab::result::EngineCounters::default();
    let t0 = WallClock::now();
    for seed in 1..=repeat {
        let opts = tcplab_lab::sweep::RunOptions { seed: Some(seed), jobs, shard: None };
        let (doc, _, e) = tcplab_lab::sweep::run_plan_counted(plan, opts, &|_, _| {}).map_err(|e| e.to_string())?;
        engine.events += e.events;
        engine.data_segments += e.data_segments;
        docs.push(serde_json::to_string(&doc).map_err(|e| e.to_string())?);
    }
    Ok((t0.elapsed().as_secs_f64(), docs, engine))
}

/// A sweep workload: its points on the lab's pool (all cores, or `--jobs`), then on one thread; parallel
/// efficiency = serial wall time / (threads × parallel wall time), and whether the documents are
/// byte-identical.
fn bench_sweep(args: &BenchOneArgs, plan: &tcplab_lab::sweep::Plan) -> Result<(), String> {
    let repeat = args.runs.repeat.max(1);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let jobs = if args.runs.jobs > 1 { args.runs.jobs as usize } else { cores };
    let (wall, docs, engine) = run_sweep(plan, repeat, jobs)?;
    let (serial_wall_s, parallel_efficiency, identical_to_serial) = if jobs > 1 {
        let (serial, serial_docs, _) = run_sweep(plan, repeat, 1)?;
        (Some(serial), Some(serial / wall / jobs as f64), Some(serial_docs == docs))
    } else {
        (None, None, None)
    };
    // The mean over runs and points of the main figure: throughput, or the transaction rate.
    let mut bps = Vec::new();
    let mut tps = Vec::new();
    for d in &docs {
        let v: serde_json::Value = serde_json::from_str(d).map_err(|e| e.to_string())?;
        for p in v["points"].as_array().into_iter().flatten() {
            bps.extend(p["metrics"]["throughput_bps"].as_f64());
            tps.extend(p["metrics"]["transactions_per_s"].as_f64());
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let points = plan.len();
    let mut simulated_s = 0.0;
    for i in 0..points {
        simulated_s += plan.point(i).map_err(|e| e.to_string())?.scenario.test.duration.as_secs_f64();
    }
    let result = WorkloadResult {
        name: args.name.clone(),
        simulated_s,
        points: Some(points),
        repeat,
        jobs: jobs as u64,
        wall_s: wall,
        wall_per_run_s: wall / repeat as f64,
        data_segments: engine.data_segments,
        segments_per_s: engine.data_segments as f64 / wall,
        events: engine.events,
        events_per_s: engine.events as f64 / wall,
        goodput_mbps: mean(&bps).unwrap_or(0.0) / 1e6,
        transactions_per_s: mean(&tps),
        peak_rss_bytes: peak_rss(),
        flows: None,
        bytes_per_flow: None,
        serial_wall_s,
        parallel_efficiency,
        identical_to_serial,
    };
    println!("{}", serde_json::to_string(&result).map_err(|e| e.to_string())?);
    Ok(())
}

/// VmHWM of this process from /proc/self/status, bytes (0 where /proc is not there).
fn peak_rss() -> u64 {
    status_kib("VmHWM:")
}

/// VmRSS of this process, bytes (0 where /proc is not there).
fn resident() -> u64 {
    status_kib("VmRSS:")
}

/// A `kB` line of /proc/self/status, in bytes.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}
