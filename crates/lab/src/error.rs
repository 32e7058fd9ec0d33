//! Errors in scenario input. Every error names where the bad value is (file and line, or the `--set`
//! flag it came from), the key, what is wrong, and what would be accepted.

use std::fmt;

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A scenario file, with the 1-based line of the key when it could be found.
    File { file: String, line: Option<usize> },
    /// A `--set PATH=VALUE` flag.
    Flag { flag: String },
    /// A `--sweep PATH=VALUES` flag.
    Sweep { flag: String },
    /// Another command-line option, shown as given (`--iterations 3,x`).
    Cli { flag: String },
}

/// A problem with a scenario or its overrides; the CLI prints it and exits with status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub origin: Origin,
    /// Dotted key path, e.g. `path.up.rate`; empty for whole-file problems.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.origin {
            Origin::File { file, line: Some(l) } => write!(f, "{file}:{l}: ")?,
            Origin::File { file, line: None } => write!(f, "{file}: ")?,
            Origin::Flag { flag } => write!(f, "--set {flag}: ")?,
            Origin::Sweep { flag } => write!(f, "--sweep {flag}: ")?,
            Origin::Cli { flag } => write!(f, "{flag}: ")?,
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}
