//! `tcplab`: run, check and list scenarios; run the benchmarks.
//!
//! Exit status: 0 success, 2 bad input (scenario or flags), 1 run failure. Errors go to stderr.

mod bench;

use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tcplab_lab::{load, scenario::shipped_description, Scenario, ScenarioError, Source, SHIPPED};

#[derive(Parser)]
#[command(name = "tcplab", version, about = "A laboratory for transport-protocol experiments")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (a file, or the name of a shipped scenario) and print a netperf-style table.
    Run {
        /// Scenario file (TOML) or shipped scenario name (see `tcplab list`).
        scenario: String,
        /// Override a scenario value: PATH=VALUE, VALUE a TOML value (a bare word is a string).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
        /// Seed of the run (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Backend: only `sim` (the simulator) so far.
        #[arg(long, default_value = "sim")]
        backend: String,
        /// Write the result document (schema tcplab.result/1) to FILE, or "-" for stdout.
        #[arg(long, value_name = "FILE|-")]
        json: Option<String>,
        /// Print nothing but errors (and the JSON if it goes to stdout).
        #[arg(long)]
        quiet: bool,
    },
    /// Validate a scenario without running it.
    Check {
        scenario: String,
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// List the shipped scenarios.
    List,
    /// Run the performance benchmarks (docs/benchmarks.md).
    Bench(bench::BenchArgs),
    /// Internal: one benchmark workload in a fresh process, so that its peak memory is its own.
    #[command(hide = true)]
    BenchOne(bench::BenchOneArgs),
}

enum Failure {
    BadInput(String),
    Run(String),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let outcome = match cli.command {
        Command::Run { scenario, set, seed, backend, json, quiet } => {
            run(&scenario, &set, seed, &backend, json.as_deref(), quiet)
        }
        Command::Check { scenario, set } => check(&scenario, &set),
        Command::List => {
            for s in SHIPPED {
                println!("{:<16} {}", s.name, shipped_description(s));
            }
            Ok(())
        }
        Command::Bench(args) => bench::bench(&args).map_err(Failure::Run),
        Command::BenchOne(args) => bench::bench_one(&args).map_err(Failure::Run),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::BadInput(m)) => {
            eprintln!("tcplab: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Run(m)) => {
            eprintln!("tcplab: {m}");
            ExitCode::from(1)
        }
    }
}

/// Reads a scenario from a file, or from the shipped set by name.
fn read_scenario(arg: &str, set: &[String]) -> Result<Scenario, Failure> {
    let (name, text) = if Path::new(arg).exists() {
        let text = std::fs::read_to_string(arg).map_err(|e| Failure::BadInput(format!("{arg}: cannot read: {e}")))?;
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
    load(&Source { name: &name, text: &text }, set).map_err(|e: ScenarioError| Failure::BadInput(e.to_string()))
}

fn check(arg: &str, set: &[String]) -> Result<(), Failure> {
    let s = read_scenario(arg, set)?;
    println!("{arg}: ok ({}: {})", s.name, s.test.kind.netperf_name());
    Ok(())
}

fn run(
    arg: &str,
    set: &[String],
    seed: Option<u64>,
    backend: &str,
    json: Option<&str>,
    quiet: bool,
) -> Result<(), Failure> {
    if backend != "sim" {
        return Err(Failure::BadInput(format!("--backend {backend}: accepted: sim")));
    }
    let s = read_scenario(arg, set)?;
    let seed = seed.unwrap_or(s.seed);
    let doc = tcplab_lab::run_scenario(&s, seed);
    if !quiet && json != Some("-") {
        print!("{}", tcplab_report::table(&doc));
    }
    if let Some(path) = json {
        tcplab_report::write_json(&doc, path).map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
    }
    Ok(())
}
