//! Running script files and reporting on them: per script pass, fail (the line, what was expected and
//! what happened, the script time) or skip (the unsupported feature), with totals; JSON schema
//! `tcplab.packetdrill/1`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tcplab_tcp::TcpConfig;

use crate::sim::{self, Verdict};

/// The outcome of one script.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptReport {
    pub path: String,
    /// `pass`, `fail` or `skip`.
    pub status: &'static str,
    /// For a failure: the script line and column of the event that failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// For a failure, what went wrong (expected and actual); for a skip, the feature not modelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a failure, the script time of the mismatch, seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub backend: &'static str,
    pub stack: String,
    pub totals: Totals,
    pub scripts: Vec<ScriptReport>,
}

/// Where scripts run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The simulator's TCP on virtual time.
    Sim,
    /// This machine's kernel through a TUN device in a namespace of its own (Linux, root).
    Linux,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Sim => "sim",
            BackendKind::Linux => "linux",
        }
    }
}

/// Runs one script text as `path` on the simulator.
pub fn run_text(path: &str, text: &str, base: &TcpConfig) -> ScriptReport {
    run_text_on(BackendKind::Sim, path, text, base)
}

/// Runs one script text as `path` on `backend` (`base`: the simulator's personality).
pub fn run_text_on(backend: BackendKind, path: &str, text: &str, base: &TcpConfig) -> ScriptReport {
    let mut r =
        ScriptReport { path: path.to_string(), status: "pass", line: None, column: None, reason: None, time_s: None };
    let verdict = match backend {
        BackendKind::Sim => sim::run(text, base),
        #[cfg(target_os = "linux")]
        BackendKind::Linux => crate::kernel::run(text),
        #[cfg(not(target_os = "linux"))]
        BackendKind::Linux => Verdict::Skip("the kernel backend needs Linux".into()),
    };
    match verdict {
        Verdict::Pass => {}
        Verdict::Skip(why) => {
            r.status = "skip";
            r.reason = Some(why);
        }
        Verdict::Fail { loc, msg, time_us } => {
            r.status = "fail";
            r.line = Some(loc.line);
            r.column = Some(loc.col);
            r.reason = Some(msg);
            r.time_s = Some(time_us as f64 / 1e6);
        }
    }
    r
}

/// Every `.pkt` file under `dir`, sorted by path.
pub fn collect(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "pkt") {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Runs the files against the personality `stack` (already checked to exist) on the simulator.
pub fn run_files(files: &[PathBuf], stack: &str, base: &TcpConfig) -> Result<Report, String> {
    run_files_on(BackendKind::Sim, files, stack, base)
}

/// Runs the files on `backend`; `stack` names the personality (the simulator's) or the kernel.
pub fn run_files_on(backend: BackendKind, files: &[PathBuf], stack: &str, base: &TcpConfig) -> Result<Report, String> {
    let mut scripts = Vec::new();
    let mut totals = Totals::default();
    for f in files {
        let text = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let text = String::from_utf8_lossy(&text);
        let r = run_text_on(backend, &f.display().to_string(), &text, base);
        match r.status {
            "pass" => totals.pass += 1,
            "fail" => totals.fail += 1,
            _ => totals.skip += 1,
        }
        scripts.push(r);
    }
    Ok(Report { schema: "tcplab.packetdrill/1", backend: backend.name(), stack: stack.to_string(), totals, scripts })
}
