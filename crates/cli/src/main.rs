//! `tcplab`: run, check and list scenarios; run the benchmarks.
//!
//! Exit status: 0 success, 2 bad input (scenario or flags), 1 run failure. Errors go to stderr.

mod bench;
mod compare;
mod explain;
mod packetdrill;
mod suite;

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tcplab_lab::{scenario::shipped_description, ScenarioError, Source, SHIPPED};

#[derive(Parser)]
#[command(name = "tcplab", version, about = "A laboratory for transport-protocol experiments")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Run a scenario (a file, or the name of a shipped scenario) and print a netperf-style table.
    #[command(after_help = RUN_EXAMPLES)]
    Run {
        /// Scenario file (TOML) or shipped scenario name (see `tcplab list`).
        scenario: String,
        /// Override a scenario value: PATH=VALUE, VALUE a TOML value (a bare word is a string).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Seed of the run (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Backend: `sim` (the simulator) or `linux` (kernel TCP in network namespaces through tcplab's link
        /// emulator; root and Linux required; tcp_stream, tcp_maerts, tcp_rr, tcp_crr, tcp_msg).
        #[arg(long, default_value = "sim")]
        backend: String,
        /// Write the result document (schema tcplab.result/2) to FILE, or "-" for stdout.
        #[arg(long, value_name = "FILE|-")]
        json: Option<String>,
        /// Print nothing but errors (and the JSON if it goes to stdout).
        #[arg(long)]
        quiet: bool,
        /// Write every packet seen at the tap `--pcap-at` to FILE (pcap, nanosecond timestamps; on the Linux
        /// backend from the emulator's own tap, raw IPv4).
        #[arg(long, value_name = "FILE")]
        pcap: Option<String>,
        /// Where the trace is taken: client, server (a host's NIC), up, down (packets entering that
        /// direction of the path); default client. On a [dumbbell] or [[link]] scenario: link directions as
        /// links.directions names them (bottleneck, reverse, link[2].forward), or a link's name for both its
        /// directions, separated by commas; default the bottleneck (the link shown as links.up), both ways.
        #[arg(long, value_name = "TAP")]
        pcap_at: Option<String>,
        /// Bytes of each frame kept in the trace (lengths in the record headers stay real).
        #[arg(long, value_name = "BYTES", default_value_t = tcplab_report::pcap::DEFAULT_SNAPLEN)]
        pcap_snaplen: u32,
        /// Run even when the estimate of memory or time is over the budget (2 GiB, 1 hour; `tcplab check`
        /// prints the estimate; docs/scenario.md § Limits and budget).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        suite: suite::SuiteArgs,
        #[command(flatten)]
        render: RenderArgs,
    },
    /// Print the table of a saved result (`run --json FILE`) as the run printed it, and render the files of
    /// `run` (--csv, ...) from it, without rerunning.
    Report {
        /// A result document (schema tcplab.result/2, or /1).
        result: String,
        #[command(flatten)]
        render: RenderArgs,
        /// Do not print the table.
        #[arg(long)]
        quiet: bool,
    },
    /// Run a scenario on the simulator (both hosts with the `linux` personality) and on the Linux backend,
    /// and print the figures side by side with their relative differences (bulk and request/response tests).
    Compare {
        /// Scenario file (TOML) or shipped scenario name (see `tcplab list`): a tcp_stream, tcp_maerts,
        /// tcp_rr, tcp_crr or tcp_msg test without a sweep; both hosts' stacks are set to `linux`.
        scenario: String,
        /// Override a scenario value on both backends: PATH=VALUE, VALUE a TOML value (a bare word is a
        /// string), e.g. --set test.duration=\"10s\" (`tcplab explain KEY` for the keys).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// The first run's seed (default: the scenario's); run i uses seed + i on both backends.
        #[arg(long)]
        seed: Option<u64>,
        /// Runs per backend; the table shows the means.
        #[arg(long, default_value_t = 1)]
        runs: u32,
        /// Write {"runs", "summary": [the table's rows], "sim": [documents], "linux": [documents]} to FILE, or
        /// "-" for stdout.
        #[arg(long, value_name = "FILE|-")]
        json: Option<String>,
        /// Write SVG plots into DIR: each variable both backends sampled with `test.series` (the
        /// connections over time), the simulator and the kernel as two lines (the first run's).
        #[arg(long, value_name = "DIR")]
        plot: Option<std::path::PathBuf>,
    },
    /// Validate a scenario without running it (with a sweep: every point).
    Check {
        scenario: String,
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Also check what the backend can run: `linux` names every value the kernel cannot honour and
        /// warns of the defaults it replaces (no root needed).
        #[arg(long, default_value = "sim")]
        backend: String,
        #[command(flatten)]
        suite: suite::SuiteArgs,
    },
    /// Join the JSON documents of the shards of a sweep (`run --shard i/n`) into the whole run's.
    Merge {
        /// The shards' documents, in any order.
        #[arg(required = true)]
        shards: Vec<String>,
        /// Where to write the merged document ("-" for stdout).
        #[arg(long, value_name = "FILE|-", default_value = "-")]
        json: String,
    },
    /// List the shipped scenarios.
    List,
    /// Every scenario key: the TCP knobs per personality, the RDP knobs, the path, host and test keys. With
    /// KEY, its type, unit, default (per personality), accepted values, meaning and source.
    Explain {
        /// A key in any spelling: `client.tcp.nodelay`, `tcp.nodelay`, `ack_policy`, `cubic.beta`,
        /// `path.rate`, `rdp` (a table: its keys); or words to look for in the keys' names and
        /// documentation, e.g. `nagle` or "delayed ack".
        #[arg(value_name = "KEY")]
        knob: Option<String>,
    },
    /// Print a shipped scenario's TOML source, to start a scenario of your own from
    /// (`tcplab show bulk-10m > my.toml`).
    Show {
        /// A shipped scenario's name (`tcplab list`).
        name: String,
    },
    /// Run the performance benchmarks (docs/benchmarks.md).
    Bench(bench::BenchArgs),
    /// Run packetdrill scripts against the simulator's TCP (docs/packetdrill.md).
    Packetdrill(packetdrill::PacketdrillArgs),
    /// Internal: one benchmark workload in a fresh process, so that its peak memory is its own.
    #[command(hide = true)]
    BenchOne(bench::BenchOneArgs),
}

/// `tcplab run --help`'s examples: each line that starts with `tcplab ` runs as written in
/// `crates/cli/tests/help_examples.rs` (shortened there, visibly), so an example that rots fails a test.
const RUN_EXAMPLES: &str = "\
Examples:
  tcplab run bulk-10m --set test.duration=\\\"10s\\\"
      a shipped scenario with one value overridden (VALUE is TOML: a string keeps its quotes)
  tcplab run bulk-10m --set 'client.tcp.congestion_control=\"cubic\"'
      a nested key: the client's TCP knob (`tcplab explain KEY` for every key)
  tcplab run bulk-10m --set 'path.up.loss={model=\"bernoulli\",p=0.01}'
      a whole table at once
  tcplab run bulk-10m --set test.duration=6h --force
      durations take ns, us, ms, s, min, h; --force runs past the one-hour budget
  tcplab run rr-dsl --sweep 'test.burst=0..=63'
      replaces the file's test.burst axis in place; its other axis (client.tcp.nodelay) stays
  tcplab run rr-dsl --no-sweep --sweep 'test.burst=0..=63'
      only the flag's axis
  tcplab run cubic-vs-reno --pcap bottleneck.pcap --pcap-snaplen 128
      every flow's packets, headers only, at the dumbbell's bottleneck, both ways (--pcap-at names other
      links; tshark -r bottleneck.pcap -q -z conv,tcp lists the flows)
  tcplab run lossy-10m --pcap trace.pcap --pcap-at server
      a two-host run's trace at the server's NIC";
#[derive(clap::Args)]
struct RenderArgs {
    /// Write points.csv and one CSV per time series into DIR.
    #[arg(long, value_name = "DIR", value_parser = directory)]
    csv: Option<std::path::PathBuf>,
    /// Write SVG plots (time series, sweeps) into DIR.
    #[arg(long, value_name = "DIR", value_parser = directory)]
    plot: Option<std::path::PathBuf>,
    /// Write a self-contained HTML page (table, plots, RFC 4898 counters, scenario, provenance) to FILE.
    #[arg(long, value_name = "FILE.html")]
    report: Option<std::path::PathBuf>,
    /// Write the time series in flent's data format (version 4, gzipped JSON) to FILE.flent.gz.
    #[arg(long, value_name = "FILE.flent.gz")]
    flent: Option<std::path::PathBuf>,
}

/// A directory for several output files: "-" (stdout) cannot hold them.
fn directory(s: &str) -> Result<std::path::PathBuf, String> {
    if s == "-" {
        return Err(
            "a directory is needed for several files; \"-\" (stdout) takes one file only (--json, --report)".into()
        );
    }
    Ok(s.into())
}

impl RenderArgs {
    fn renders(&self, result_file: Option<&str>) -> tcplab_report::render::Renders {
        let provenance = tcplab_report::html::Provenance {
            command_line: std::env::args().collect(),
            result_file: result_file.map(String::from),
        };
        tcplab_report::render::Renders {
            csv: self.csv.clone(),
            plot: self.plot.clone(),
            report: self.report.clone(),
            flent: self.flent.clone(),
            provenance,
        }
    }
}

/// The largest scenario file read (a scenario is a few kilobytes of TOML).
const SCENARIO_LIMIT: u64 = 16 << 20;
/// The largest result document read by `report` and `merge` (a 600 s run with 100 us series writes
/// about 200 MB).
const RESULT_LIMIT: u64 = 1 << 30;

/// Reads an input file: a regular file (a device or FIFO such as /dev/zero could be read without end)
/// of at most `limit` bytes, else exit 2 with the reason.
fn read_input(path: &str, limit: u64) -> Result<String, Failure> {
    tcplab_files::read_regular(Path::new(path), limit)
        .map_err(|e| Failure::BadInput(format!("{path}: cannot read: {e}")))
}

/// `tcplab report RESULT.json`: the table and the files of `run` from a saved result.
fn report(path: &str, r: &RenderArgs, quiet: bool) -> Result<(), Failure> {
    let doc = read_result(path)?;
    let renders = r.renders(Some(path));
    if quiet && !renders.any() {
        return Err(Failure::BadInput(
            "report --quiet: nothing to do; accepted: --csv DIR, --plot DIR, --report FILE.html, --flent FILE.flent.gz"
                .into(),
        ));
    }
    if !quiet {
        print!("{}", terminal_safe(&tcplab_report::table(&doc)));
    }
    for note in tcplab_report::render::render(&doc, &renders).map_err(Failure::Run)? {
        eprintln!("tcplab: {}", terminal_safe(&note));
    }
    Ok(())
}

enum Failure {
    BadInput(String),
    Run(String),
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`tcplab explain | head`), as command-line tools do.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread or I/O exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // SIGINT, SIGTERM and SIGHUP remove every temporary file (and the Linux backend's namespaces) before
    // the process dies of the signal; a SIGKILLed run's temporaries are removed by the next run
    // (tcplab_files).
    tcplab_files::install_signal_cleanup();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let outcome = match cli.command {
        Command::Run {
            scenario,
            set,
            seed,
            backend,
            json,
            quiet,
            pcap,
            pcap_at,
            pcap_snaplen,
            force,
            suite,
            render,
        } => {
            let outputs = Outputs { json, pcap, pcap_at, pcap_snaplen, render: render.renders(None) };
            run(&scenario, &set, seed, &backend, &outputs, quiet, force, &suite)
        }
        Command::Report { result, render, quiet } => report(&result, &render, quiet),
        Command::Check { scenario, set, backend, suite } => check(&scenario, &set, &backend, &suite),
        Command::Compare { scenario, set, seed, runs, json, plot } => {
            compare::compare(&scenario, &set, seed, runs, json.as_deref(), plot.as_deref())
        }
        Command::Merge { shards, json } => merge(&shards, &json),
        Command::List => {
            let w = SHIPPED.iter().map(|s| s.name.chars().count()).max().unwrap_or(0);
            for s in SHIPPED {
                println!("{:<w$} {}", s.name, shipped_description(s));
            }
            Ok(())
        }
        Command::Explain { knob } => explain::explain(knob.as_deref()),
        Command::Show { name } => show_scenario(&name),
        Command::Bench(args) => bench::bench(&args).map_err(|e| match e {
            bench::BenchError::BadInput(m) => Failure::BadInput(m),
            bench::BenchError::Run(m) => Failure::Run(m),
        }),
        Command::BenchOne(args) => bench::bench_one(&args).map_err(Failure::Run),
        Command::Packetdrill(args) => packetdrill::packetdrill(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(m)) => {
            eprintln!("tcplab: {}", terminal_safe(&m));
            ExitCode::from(2)
        }
        Err(Failure::Run(m)) => {
            eprintln!("tcplab: {}", terminal_safe(&m));
            ExitCode::from(1)
        }
    }
}

/// Reads a scenario from a file, or from the shipped set by name, with its sweep and repetitions; every
/// point is validated.
fn read_plan(arg: &str, set: &[String], suite: &suite::SuiteArgs) -> Result<tcplab_lab::sweep::Plan, Failure> {
    let (name, text) = scenario_text(arg)?;
    let src = Source { name: &name, text: &text };
    tcplab_lab::sweep::plan_with(&src, set, &suite.sweep, &suite.repeat_flags(), suite.no_sweep)
        .map_err(|e: ScenarioError| Failure::BadInput(e.to_string()))
}

/// The name to report errors against and the text of a scenario file or shipped scenario.
fn scenario_text(arg: &str) -> Result<(String, String), Failure> {
    let (name, text) = if Path::new(arg).exists() {
        let text = read_input(arg, SCENARIO_LIMIT)?;
        (arg.to_string(), text)
    } else if let Some(s) = SHIPPED.iter().find(|s| s.name == arg) {
        (format!("scenarios/{}.toml", s.name), s.text.to_string())
    } else {
        let names: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
        return Err(Failure::BadInput(format!(
            "{arg}: no such file, and not a shipped scenario; shipped: {}",
            names.join(", ")
        )));
    };
    Ok((name, text))
}

/// Text for the terminal: control characters (ESC, CR, BEL, …) and Unicode's bidirectional overrides
/// are shown escaped (`\u{1b}`), so a scenario's name or a flag's value cannot move the cursor, recolour
/// or rewrite what the terminal shows; newlines and tabs stay.
pub(crate) fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return text.into();
    }
    text.chars()
        .map(|c| if unsafe_char(c) { c.escape_unicode().to_string() } else { c.to_string() })
        .collect::<String>()
        .into()
}

/// Prints the plan's validation warnings (`tcplab: warning: FILE:LINE: KEY: …`).
fn print_warnings(plan: &tcplab_lab::sweep::Plan) {
    for w in &plan.warnings {
        eprintln!("tcplab: warning: {}", terminal_safe(w));
    }
}

/// The estimate of a run of `plan` (tcplab_lab::budget) on the threads `jobs` gives.
fn estimate_of(
    plan: &tcplab_lab::sweep::Plan,
    shard: Option<(u32, u32)>,
    jobs: usize,
    renders: bool,
) -> tcplab_lab::budget::Estimate {
    let threads = match tcplab_lab::sweep::effective_jobs(jobs).0 {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    plan.estimate(shard, threads, tcplab_lab::budget::Outputs { renders })
}

fn check(arg: &str, set: &[String], backend: &str, suite: &suite::SuiteArgs) -> Result<(), Failure> {
    let plan = read_plan(arg, set, suite)?;
    match backend {
        "sim" => {}
        "linux" => {
            let (_, replaced) = tcplab_lab::sweep::plan_on_kernel(&plan)
                .map_err(|e| Failure::BadInput(format!("{arg}: --backend linux: {e}")))?;
            if let Some(w) = tcplab_lab::linux_backend::replaced_warning(&replaced) {
                eprintln!("tcplab: warning: {w}");
            }
        }
        other => return Err(Failure::BadInput(format!("--backend {other}: accepted: sim, linux"))),
    }
    let shard = suite.shard.as_deref().map(tcplab_lab::sweep::parse_shard).transpose().map_err(Failure::BadInput)?;
    let s = &plan.base;
    let points = if plan.len() > 1 { format!(", {} points", plan.len()) } else { String::new() };
    print_warnings(&plan);
    let what = match &s.dumbbell {
        Some(_) => format!("{} flows through a dumbbell", s.flow.len()),
        None if s.is_network() => {
            format!("{} flows through {} hosts and {} links", s.flow.len(), s.host.len(), s.link.len())
        }
        None => s.test.netperf_name().to_string(),
    };
    println!("{}: ok ({}: {what}{points})", terminal_safe(arg), terminal_safe(&s.name));
    if !plan.fully_checked() {
        println!(
            "  validated: the base and each of the sweep's values on a point of its own ({} points); the other \
             combinations are validated as each point starts",
            plan.checked()
        );
    }
    let estimate = estimate_of(&plan, shard, suite.jobs, false);
    println!("  estimate: {estimate}");
    if let Some(why) = estimate.over(&tcplab_lab::budget::BUDGET) {
        println!("  over the budget: {why}; `tcplab run` refuses it without --force");
    }
    Ok(())
}

fn merge(shards: &[String], out: &str) -> Result<(), Failure> {
    let mut docs = Vec::new();
    for path in shards {
        docs.push((path.clone(), read_result(path)?));
    }
    let merged = tcplab_lab::merge::merge_docs(docs).map_err(Failure::BadInput)?;
    tcplab_report::write_json(&merged, out).map_err(|e| Failure::Run(format!("{out}: cannot write: {e}")))
}

/// Reads a saved result document through the typed model: one that does not fit is refused (exit 2),
/// naming the file and the field.
fn read_result(path: &str) -> Result<tcplab_lab::ResultDoc, Failure> {
    let text = read_input(path, RESULT_LIMIT)?;
    tcplab_lab::ResultDoc::from_json(&text).map_err(|e| Failure::BadInput(format!("{path}: {e}")))
}

/// The files `run` writes besides the table.
struct Outputs {
    json: Option<String>,
    pcap: Option<String>,
    pcap_at: Option<String>,
    pcap_snaplen: u32,
    render: tcplab_report::render::Renders,
}

#[allow(clippy::too_many_arguments)]
fn run(
    arg: &str,
    set: &[String],
    seed: Option<u64>,
    backend: &str,
    out: &Outputs,
    quiet: bool,
    force: bool,
    suite: &suite::SuiteArgs,
) -> Result<(), Failure> {
    use tcplab_report::pcap::{PcapProbe, Tap};
    if backend != "sim" && backend != "linux" {
        return Err(Failure::BadInput(format!("--backend {backend}: accepted: sim, linux")));
    }
    let pcap_at = out.pcap_at.as_deref();
    // The two-host taps; a flows scenario's are its link directions, checked once the scenario is read.
    let two_host_tap = || {
        let at = pcap_at.unwrap_or("client");
        Tap::parse(at).ok_or_else(|| Failure::BadInput(format!("--pcap-at {at}: accepted: {}", Tap::NAMES.join(", "))))
    };
    // 68 bytes hold the Ethernet, IPv4 and TCP headers without options (tcpdump's old default).
    if out.pcap_snaplen < 68 {
        return Err(Failure::BadInput(format!("--pcap-snaplen {}: accepted: 68 or more", out.pcap_snaplen)));
    }
    let shard = suite.shard.as_deref().map(tcplab_lab::sweep::parse_shard).transpose().map_err(Failure::BadInput)?;
    let plan = read_plan(arg, set, suite)?;
    // Before running: what the kernel cannot honour (every value at once), whether the backend can run
    // here (root with CAP_SYS_ADMIN and CAP_NET_ADMIN), and whether each output file can be written where
    // it is asked for.
    let plan = if backend == "linux" {
        let (plan, replaced) = tcplab_lab::sweep::plan_on_kernel(&plan)
            .map_err(|e| Failure::BadInput(format!("{arg}: --backend linux: {e}")))?;
        if let (false, Some(w)) = (quiet, tcplab_lab::linux_backend::replaced_warning(&replaced)) {
            eprintln!("tcplab: warning: {w}");
        }
        tcplab_emu::check_environment().map_err(|e| Failure::BadInput(format!("--backend linux: {e}")))?;
        plan
    } else {
        plan
    };
    check_outputs(out)?;
    print_warnings(&plan);
    // What the run will cost, before it starts: refused beyond the budget unless --force.
    let estimate = estimate_of(&plan, shard, suite.jobs, out.render.any());
    if let Some(why) = estimate.over(&tcplab_lab::budget::BUDGET) {
        if !force {
            return Err(Failure::BadInput(format!(
                "{arg}: the run is estimated to need {why} ({estimate}); run it anyway with --force, or make it \
                 smaller (docs/scenario.md § Limits and budget)"
            )));
        }
        if !quiet {
            eprintln!("tcplab: note: --force: running over the budget: {why}");
        }
    }
    if backend == "linux" && out.pcap.is_some() {
        suite.single_run(&plan).map_err(Failure::BadInput)?;
        let s = plan.base;
        let tap = two_host_tap()?;
        let pcap = out.pcap.as_ref().map(|path| tcplab_emu::PcapSpec {
            path: path.into(),
            tap: match tap {
                Tap::Client => tcplab_emu::PcapTap::Client,
                Tap::Server => tcplab_emu::PcapTap::Server,
                Tap::Up => tcplab_emu::PcapTap::Up,
                Tap::Down => tcplab_emu::PcapTap::Down,
            },
            snaplen: out.pcap_snaplen,
        });
        let doc = tcplab_lab::run_scenario_linux_with(&s, seed.unwrap_or(s.seed), pcap).map_err(|e| {
            if e.is_usage() {
                Failure::BadInput(format!("{arg}: --backend linux: {e}"))
            } else {
                Failure::Run(format!("{arg}: --backend linux: {e}"))
            }
        })?;
        return emit(doc, out, quiet);
    }
    if out.pcap.is_none() {
        let outcome = if backend == "linux" {
            // Points run one at a time, each for seconds: a line per point, on any stderr.
            let opts = tcplab_lab::sweep::RunOptions { seed, jobs: 1, shard };
            let started = std::time::Instant::now();
            let runs = plan.repeat.map_or(String::new(), |r| format!(", up to {} runs each", r.max));
            let total = (0..plan.len()).filter(|p| shard.is_none_or(|(i, n)| p % n as usize == i as usize)).count();
            if !quiet && (total > 1 || plan.repeat.is_some()) {
                let points = if total == 1 { "1 point".to_string() } else { format!("{total} points one at a time") };
                eprintln!("tcplab: --backend linux: {points}{runs}");
            }
            let linux = tcplab_lab::sweep::Backend::Linux;
            tcplab_lab::sweep::run_plan_on(&plan, opts, linux, &|done, total| {
                if !quiet && (total > 1 || plan.repeat.is_some()) {
                    let spent = started.elapsed().as_secs_f64();
                    let left = spent / done as f64 * (total - done) as f64;
                    eprintln!(
                        "tcplab: --backend linux: point {done}/{total} done after {spent:.0} s, about {left:.0} s left"
                    );
                }
            })
            .map(|(doc, unmet, _)| (doc, unmet))
        } else {
            let (jobs, note) = tcplab_lab::sweep::effective_jobs(suite.jobs);
            if let Some(note) = note {
                eprintln!("tcplab: note: {note}");
            }
            let opts = tcplab_lab::sweep::RunOptions { seed, jobs, shard };
            let progress = suite::Progress::new(suite::Measure::of(&plan), quiet);
            let outcome = tcplab_lab::sweep::run_plan(&plan, opts, &|done, _| progress.set(done));
            progress.finish();
            outcome
        };
        let (doc, unmet) = outcome.map_err(|e| match e {
            tcplab_lab::sweep::PlanError::Point(e) => Failure::BadInput(e.to_string()),
            tcplab_lab::sweep::PlanError::Run(e) => Failure::Run(format!("{arg}: {e}")),
        })?;
        for u in &unmet {
            let at = if u.params.is_empty() {
                String::new()
            } else {
                format!(" {}", serde_json::Value::Object(u.params.clone()))
            };
            let c = &u.confidence;
            eprintln!(
                "tcplab: warning: point {}{at}: {}% confidence interval of {} is {:.2}% of the mean after {} iterations, not within {:.2}%",
                u.index,
                c.level * 100.0,
                c.metric,
                c.interval * 100.0,
                doc.points.iter().find(|p| p.params == u.params).map_or(0, |p| p.iterations),
                c.width * 100.0
            );
        }
        return emit(doc, out, quiet);
    }
    suite.single_run(&plan).map_err(Failure::BadInput)?;
    let s = plan.base;
    let seed = seed.unwrap_or(s.seed);
    let Some(path) = out.pcap.as_deref() else { unreachable!("the runs without --pcap returned above") };
    if s.has_flows() {
        return traced_flows(arg, &s, seed, path, pcap_at, out, quiet);
    }
    let tap = two_host_tap()?;
    // The trace is of the segments of the transport the test runs: one generic run, on the transport
    // the lab's registration picks.
    struct Traced<'a> {
        arg: &'a str,
        s: &'a tcplab_lab::Scenario,
        seed: u64,
        path: &'a str,
        tap: Tap,
        snaplen: u32,
    }
    impl tcplab_lab::transport::WithTransport for Traced<'_> {
        type Output = Result<tcplab_lab::ResultDoc, Failure>;
        fn with<T: tcplab_lab::LabTransport>(self) -> Self::Output {
            let Traced { arg, s, seed, path, tap, snaplen } = self;
            if let Some(why) = T::untraceable(s) {
                return Err(Failure::BadInput(format!("{arg}: --pcap: {why}")));
            }
            let mut pcap = PcapProbe::<tcplab_lab::transport::Segment<T>>::create(Path::new(path), tap, snaplen)
                .map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?
                .with_codec(T::trace_codec(s));
            let doc = tcplab_lab::run_scenario_on::<T>(s, seed, Some(&mut pcap as &mut dyn tcplab_sim::Probe<T::Conn>))
                .map_err(|e| Failure::Run(format!("{arg}: {e}")))?;
            pcap.finish().map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
            Ok(doc)
        }
    }
    let job = Traced { arg, s: &s, seed, path, tap, snaplen: out.pcap_snaplen };
    let doc = tcplab_lab::transport::dispatch(s.test.transport, job)?;
    emit(doc, out, quiet)
}

/// `run --pcap` of a `[dumbbell]` or a network: the packets entering the `--pcap-at` link directions
/// (docs/outputs.md § `--pcap` on more than two hosts).
fn traced_flows(
    arg: &str,
    s: &tcplab_lab::Scenario,
    seed: u64,
    path: &str,
    pcap_at: Option<&str>,
    out: &Outputs,
    quiet: bool,
) -> Result<(), Failure> {
    use tcplab_report::pcap_net::{default_taps, parse_taps, NetPcapProbe};
    let taps = match pcap_at {
        Some(at) => parse_taps(s, at).map_err(|e| Failure::BadInput(format!("{arg}: {e}")))?,
        None => default_taps(s),
    };
    let mut pcap = NetPcapProbe::<tcplab_lab::transport::Segment<tcplab_lab::transport::Tcp>>::create(
        Path::new(path),
        s,
        &taps,
        out.pcap_snaplen,
    )
    .map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
    let doc = tcplab_lab::run_scenario_on::<tcplab_lab::transport::Tcp>(
        s,
        seed,
        Some(&mut pcap as &mut dyn tcplab_sim::Probe<tcplab_tcp::Connection>),
    )
    .map_err(|e| Failure::Run(format!("{arg}: {e}")))?;
    pcap.finish().map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
    emit(doc, out, quiet)
}

/// Refuses, before a run, an output that cannot be written where it is asked for, so that the error
/// does not come after the whole run: a file's target must resolve (not a directory, a missing directory,
/// a block device, a dangling or foreign link: see tcplab_files::resolve) and its directory must take a
/// new file (a read-only file system, /proc); a directory of `--csv` or `--plot` must be one, or be
/// creatable under its nearest existing parent. Errors name the flag and the user's path.
fn check_outputs(out: &Outputs) -> Result<(), Failure> {
    use std::path::PathBuf;
    let refuse = |flag: &str, p: &Path, e: std::io::Error| {
        Failure::BadInput(format!("{flag} {}: cannot write: {e}", terminal_safe(&p.display().to_string())))
    };
    // A temporary created and removed at once: the directory takes new files.
    let probe = |dir: &Path| tcplab_files::Temp::new_in(dir).map(drop);
    let files = [
        ("--json", out.json.as_deref().filter(|p| *p != "-").map(PathBuf::from)),
        ("--pcap", out.pcap.as_deref().map(PathBuf::from)),
        ("--report", out.render.report.clone().filter(|p| p.as_os_str() != "-")),
        ("--flent", out.render.flent.clone()),
    ];
    for (flag, path) in files {
        let Some(p) = path else { continue };
        check_output_file(flag, &p)?;
    }
    for (flag, dir) in [("--csv", &out.render.csv), ("--plot", &out.render.plot)] {
        let Some(dir) = dir else { continue };
        let mut existing = dir.as_path();
        while std::fs::symlink_metadata(existing).is_err() {
            match existing.parent() {
                Some(up) if !up.as_os_str().is_empty() => existing = up,
                _ => {
                    existing = Path::new(".");
                    break;
                }
            }
        }
        let is_dir = std::fs::metadata(existing).map(|m| m.is_dir()).unwrap_or(false);
        if !is_dir {
            let what = if existing == dir.as_path() {
                "it exists and is not a directory".to_string()
            } else {
                format!("{} is not a directory", existing.display())
            };
            return Err(refuse(
                flag,
                dir,
                std::io::Error::other(format!("{what}; accepted: a directory (created if missing)")),
            ));
        }
        probe(existing).map_err(|e| refuse(flag, dir, e))?;
    }
    Ok(())
}

/// Refuses, before the work starts, an output file (`FLAG PATH`) that cannot be written: `PATH` must
/// resolve (tcplab_files::resolve) and, for a regular file, its directory must take a new file. A
/// descriptor, FIFO or character device is opened when written (a FIFO's open waits for a reader): only a
/// regular file's directory is tried now. Also used by `compare`, `bench` and `packetdrill`, whose
/// `--json` was found bad only after their runs.
pub(crate) fn check_output_file(flag: &str, p: &Path) -> Result<(), Failure> {
    let refuse = |e: std::io::Error| {
        Failure::BadInput(format!("{flag} {}: cannot write: {e}", terminal_safe(&p.display().to_string())))
    };
    if let tcplab_files::Resolved::File(target) = tcplab_files::resolve(p).map_err(refuse)? {
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        // A temporary created and removed at once: the directory takes new files.
        tcplab_files::Temp::new_in(dir).map(drop).map_err(refuse)?;
    }
    Ok(())
}

/// Prints the table (unless quiet or the JSON goes to stdout), writes the JSON and the rendered files.
fn emit(doc: tcplab_lab::ResultDoc, out: &Outputs, quiet: bool) -> Result<(), Failure> {
    let json = out.json.as_deref();
    if !quiet && json != Some("-") {
        print!("{}", terminal_safe(&tcplab_report::table(&doc)));
    }
    if let Some(path) = json {
        tcplab_report::write_json(&doc, path).map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
    }
    if out.render.any() {
        for note in tcplab_report::render::render(&doc, &out.render).map_err(Failure::Run)? {
            if !quiet {
                eprintln!("tcplab: {}", terminal_safe(&note));
            }
        }
    }
    Ok(())
}

/// `tcplab show NAME`: the shipped scenario's file, byte for byte.
fn show_scenario(name: &str) -> Result<(), Failure> {
    let Some(s) = SHIPPED.iter().find(|s| s.name == name) else {
        let names: Vec<&str> = SHIPPED.iter().map(|s| s.name).collect();
        return Err(Failure::BadInput(format!("{name}: not a shipped scenario; shipped: {}", names.join(", "))));
    };
    print!("{}", s.text);
    Ok(())
}
