//! The vocabulary of the limits table (crate::limits): a key's accepted [`Range`], a row of the table
//! ([`Limit`]) and the bounds and reasons several rows share. The lab's own rows (crate::limits) and each
//! transport's rows (its `TransportConfig::LIMITS`, crate::host_transports) are written in it.
//!
//! A leaf of the lab: the transports' declarations (below the scenario) and the table (crate::limits)
//! both stand on it.

use serde_json::Value;
use tcplab_units::{ByteSize, Duration, Rate};

/// A key's accepted values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A duration, inclusive.
    Time(Duration, Duration),
    /// A rate in bits per second, inclusive.
    Rate(u64, u64),
    /// A size in bytes, inclusive.
    Size(u64, u64),
    /// A whole number, inclusive.
    Count(u64, u64),
    /// A real number, inclusive.
    Real(f64, f64),
    /// A drop-tail queue: packets (`"100pkt"`) or bytes (`"64KiB"`), inclusive.
    Queue { packets: u64, bytes: u64 },
}

/// One row of the table: a key pattern (`*` stands for one part: `client`/`server`, `up`/`down`), its
/// range, and why the range ends where it does.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    pub key: &'static str,
    pub range: Range,
    pub why: &'static str,
}

pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
pub const fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}
pub const HOUR: Duration = Duration::from_secs(3600);
pub const DAY: Duration = Duration::from_secs(86_400);
pub const GIB: u64 = 1 << 30;

/// The slowest and fastest links: a 300 bit/s modem (Bell 103) and 1 Tbit/s. The clock counts whole
/// nanoseconds and a frame's serialization time is rounded up to one, so above 1 Tbit/s the time of a
/// frame no longer follows the rate (any frame up to 125 bytes takes 1 ns at every rate beyond it).
pub const MIN_RATE: u64 = 300;
pub const MAX_RATE: u64 = 1_000_000_000_000;
pub const RATE_WHY: &str =
    "from a 300 bit/s modem to 1 Tbit/s: the clock counts whole nanoseconds, so beyond 1 Tbit/s \
                        a frame's time no longer follows the rate";
pub const TIMER_WHY: &str = "a protocol timer of more than an hour would never fire within a run";
pub const TICK_WHY: &str = "timers fire on multiples of the tick; a tick beyond a second (BSD's slow timer is 500ms) \
                        delays every timer past anything measured";

impl Range {
    /// Whether `v` (a leaf of the scenario's JSON) is of this range's kind and inside it; `None` when the
    /// leaf is not of the kind (a `framing = "ethernet"`, a loss `model`).
    pub fn check(&self, v: &Value) -> Option<bool> {
        let text = v.as_str();
        match *self {
            Range::Time(lo, hi) => text?.parse::<Duration>().ok().map(|d| d >= lo && d <= hi),
            Range::Rate(lo, hi) => text?.parse::<Rate>().ok().map(|r| (lo..=hi).contains(&r.bps())),
            Range::Size(lo, hi) => match v {
                Value::Number(n) => n.as_u64().map(|b| (lo..=hi).contains(&b)),
                _ => text?.parse::<ByteSize>().ok().map(|b| (lo..=hi).contains(&b.bytes())),
            },
            Range::Count(lo, hi) => match v {
                Value::Number(n) => Some(n.as_u64().is_some_and(|c| (lo..=hi).contains(&c))),
                Value::Array(a) => Some(a.iter().all(|x| x.as_u64().is_some_and(|c| (lo..=hi).contains(&c)))),
                _ => None,
            },
            Range::Real(lo, hi) => v.as_f64().map(|x| x.is_finite() && x >= lo && x <= hi),
            Range::Queue { packets, bytes } => {
                let t = text?.trim();
                match t.strip_suffix("pkt") {
                    Some(n) => n.trim().parse::<u64>().ok().map(|n| n <= packets),
                    None => t.parse::<ByteSize>().ok().map(|b| b.bytes() <= bytes),
                }
            }
        }
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Range::Time(lo, hi) => write!(f, "{lo} to {hi}"),
            Range::Rate(lo, hi) => write!(f, "{} to {}", Rate::from_bps(lo), Rate::from_bps(hi)),
            Range::Size(lo, hi) => write!(f, "{} to {}", ByteSize::new(lo), ByteSize::new(hi)),
            Range::Count(lo, hi) => write!(f, "{lo} to {hi}"),
            Range::Real(lo, hi) => write!(f, "{lo} to {hi}"),
            Range::Queue { packets, bytes } => write!(f, "0pkt to {packets}pkt, or 0B to {}", ByteSize::new(bytes)),
        }
    }
}
