//! Stack personalities: named presets of [`TcpConfig`]. Any knob can be set on top of one.

use crate::config::TcpConfig;

/// The stack personalities: named presets of [`TcpConfig`], with why each value is what it is
/// (docs/personalities.md has the sources).
pub const PERSONALITIES: &[(&str, &str)] = &[("rfc", "the standards as written: RFC 5681/6582/6675 NewReno with SACK, RFC 3390 IW, RFC 6298 RTO (1 s minimum), delayed ACK every 2 segments or 200 ms")];

impl TcpConfig {
    /// The preset called `name`, if there is one.
    pub fn personality(name: &str) -> Option<TcpConfig> {
        match name {
            "rfc" => Some(TcpConfig::default()),
            _ => None,
        }
    }
}
