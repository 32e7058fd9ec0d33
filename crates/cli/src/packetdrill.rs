//! `tcplab packetdrill`: packetdrill scripts against the simulator's TCP (docs/packetdrill.md).

use std::path::PathBuf;

use tcplab_packetdrill::report;
use tcplab_tcp::TcpConfig;

use crate::Failure;

#[derive(clap::Args)]
pub struct PacketdrillArgs {
    /// Scripts to run (.pkt).
    #[arg(value_name = "FILE.pkt")]
    files: Vec<PathBuf>,
    /// Run every .pkt file under DIR too (recursively, in path order).
    #[arg(long, value_name = "DIR")]
    corpus: Vec<PathBuf>,
    /// The stack personality under test (`tcplab explain` lists them).
    #[arg(long, default_value = "linux")]
    stack: String,
    /// Where the scripts run: `sim` (the simulator's TCP, `--stack` chooses the personality) or `linux`
    /// (this machine's kernel through a TUN device in a namespace of its own; root).
    #[arg(long, default_value = "sim")]
    backend: String,
    /// Write the report (schema tcplab.packetdrill/1) to FILE, or "-" for stdout.
    #[arg(long, value_name = "FILE|-")]
    json: Option<String>,
    /// Print failures and skips only, and the totals.
    #[arg(long)]
    quiet: bool,
}

pub fn packetdrill(a: &PacketdrillArgs) -> Result<(), Failure> {
    let backend = match a.backend.as_str() {
        "sim" => report::BackendKind::Sim,
        "linux" => report::BackendKind::Linux,
        other => return Err(Failure::BadInput(format!("--backend {other}: accepted `sim`, `linux`"))),
    };
    #[cfg(target_os = "linux")]
    if backend == report::BackendKind::Linux {
        if let Some(why) = tcplab_packetdrill::kernel::unavailable() {
            return Err(Failure::Run(format!("--backend linux cannot run: {why}")));
        }
    }
    let Some(base) = TcpConfig::personality(&a.stack) else {
        let names: Vec<&str> = tcplab_tcp::personality::PERSONALITIES.iter().map(|(n, _)| *n).collect();
        return Err(Failure::BadInput(format!("--stack {}: accepted {}", a.stack, names.join(", "))));
    };
    let mut files = a.files.clone();
    for d in &a.corpus {
        files.extend(report::collect(d).map_err(|e| Failure::BadInput(format!("--corpus {}: {e}", d.display())))?);
    }
    if files.is_empty() {
        return Err(Failure::BadInput("no scripts: give FILE.pkt arguments or --corpus DIR".into()));
    }
    for f in &files {
        if !f.is_file() {
            return Err(Failure::BadInput(format!("{}: no such script file", f.display())));
        }
    }
    // The report's path is tried before the scripts run (a bad one is found at once, not after them).
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::check_output_file("--json", std::path::Path::new(j))?;
    }
    let stack = if backend == report::BackendKind::Linux { kernel_name() } else { a.stack.clone() };
    let rep = report::run_files_on(backend, &files, &stack, &base).map_err(Failure::BadInput)?;
    let to_stdout = a.json.as_deref() == Some("-");
    if !to_stdout {
        for s in &rep.scripts {
            match s.status {
                "pass" if a.quiet => {}
                "pass" => println!("pass  {}", s.path),
                "skip" => println!("skip  {}: {}", s.path, s.reason.as_deref().unwrap_or("")),
                _ => println!(
                    "FAIL  {}:{}:{}: {} (t={:.6} s)",
                    s.path,
                    s.line.unwrap_or(0),
                    s.column.unwrap_or(0),
                    s.reason.as_deref().unwrap_or(""),
                    s.time_s.unwrap_or(0.0)
                ),
            }
        }
        println!(
            "{} scripts on {} ({}): {} pass, {} fail, {} skip",
            rep.scripts.len(),
            rep.stack,
            rep.backend,
            rep.totals.pass,
            rep.totals.fail,
            rep.totals.skip
        );
    }
    if let Some(j) = &a.json {
        let text = serde_json::to_string_pretty(&rep).map_err(|e| Failure::Run(e.to_string()))? + "\n";
        if to_stdout {
            print!("{text}");
        } else {
            // Through the safe writer, as every other output (#22 item 1): a plain `FILE.tmp` renamed over
            // FILE replaced a symlink (as root, `--json /dev/stdout` the system's /dev/stdout) and
            // followed a link planted at the predictable temporary's name.
            tcplab_files::write_file(std::path::Path::new(j), text.as_bytes())
                .map_err(|e| Failure::Run(format!("--json {j}: cannot write: {e}")))?;
        }
    }
    if rep.totals.fail > 0 {
        return Err(Failure::Run(format!("{} of {} scripts failed", rep.totals.fail, rep.scripts.len())));
    }
    Ok(())
}

/// `linux <release>` of this machine's kernel, for the report's `stack`.
fn kernel_name() -> String {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("linux {}", release.trim())
}
