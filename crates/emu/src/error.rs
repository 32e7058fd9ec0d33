use std::fmt;

/// Why a Linux-backend run could not be made. `Unsupported` and `Knob` are the caller's input (exit 2 in the
/// CLI); the rest are run failures (exit 1).
#[derive(Debug)]
pub enum EmuError {
    /// Not Linux, or not root (the backend creates namespaces and TUN devices).
    Unsupported(String),
    /// A knob whose value Linux cannot express. `side` is `client` or `server`.
    Knob { side: &'static str, knob: String, value: String, reason: String },
    /// An operating-system step failed: `what` says which.
    Os { what: String, source: std::io::Error },
    /// A helper program (`ip`, `iperf3`, `ping`) failed or printed something unexpected.
    Tool { what: String, detail: String },
}

impl EmuError {
    pub(crate) fn os(what: impl Into<String>, source: std::io::Error) -> EmuError {
        EmuError::Os { what: what.into(), source }
    }
    pub(crate) fn tool(what: impl Into<String>, detail: impl Into<String>) -> EmuError {
        EmuError::Tool { what: what.into(), detail: detail.into() }
    }
    /// True for errors in the caller's input or environment (the CLI's exit status 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, EmuError::Unsupported(_) | EmuError::Knob { .. })
    }
}

impl fmt::Display for EmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmuError::Unsupported(m) => write!(f, "the Linux backend cannot run here: {m}"),
            EmuError::Knob { side, knob, value, reason } => {
                write!(f, "{side}.tcp.{knob} = {value}: the Linux backend cannot honour it: {reason}")
            }
            EmuError::Os { what, source } => write!(f, "{what}: {source}"),
            EmuError::Tool { what, detail } => write!(f, "{what}: {detail}"),
        }
    }
}

impl std::error::Error for EmuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmuError::Os { source, .. } => Some(source),
            _ => None,
        }
    }
}
