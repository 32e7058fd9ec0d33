//! The sane range of every numeric key of a scenario, checked in one place (docs/scenario.md § Limits).
//!
//! A value can have the right type and still make a run fail or never end: a path of 1 bit/s never
//! carries a SYN, a one-way delay of 31 years outlasts the 180 s the connections get to come up, a timer
//! tick of 584 years means no timer ever fires, a rate of 10^6 Tbit/s is below the clock's nanosecond.
//! Each key's field checks its own type; this table bounds every number (counts, durations, rates,
//! sizes) of the resolved scenario, and [`LIMITS`] is tested to cover every numeric leaf the scenario
//! serializes, so a new knob cannot arrive unbounded. Beyond the table, the scenario's `cross_checks`
//! (crates/lab/src/scenario/checks.rs) refuses combinations that cannot run and warns about ones that
//! will run and measure little or nothing.
//!
//! A leaf of the lab: the table and [`check`] read a scenario through its serialized keys, so the
//! scenario's validation (above) calls them without a circle.
//!
//! The table runs after the fields' own checks, so a knob with a more specific message (`tcp.mss`,
//! `test.parallel`) keeps it; its ranges are never narrower than those.

use serde_json::Value;
use tcplab_units::{ByteSize, Duration, Rate};

/// The largest `host.rx_coalesce` accepted (NICs' interrupt-coalescing settings stay below a millisecond).
pub const MAX_RX_COALESCE: Duration = Duration::from_millis(10);

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

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}
const fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);
const GIB: u64 = 1 << 30;

/// The slowest and fastest links: a 300 bit/s modem (Bell 103) and 1 Tbit/s. The clock counts whole
/// nanoseconds and a frame's serialization time is rounded up to one, so above 1 Tbit/s the time of a
/// frame no longer follows the rate (any frame up to 125 bytes takes 1 ns at every rate beyond it).
pub const MIN_RATE: u64 = 300;
pub const MAX_RATE: u64 = 1_000_000_000_000;
const RATE_WHY: &str = "from a 300 bit/s modem to 1 Tbit/s: the clock counts whole nanoseconds, so beyond 1 Tbit/s \
                        a frame's time no longer follows the rate";
const TIMER_WHY: &str = "a protocol timer of more than an hour would never fire within a run";
const TICK_WHY: &str = "timers fire on multiples of the tick; a tick beyond a second (BSD's slow timer is 500ms) \
                        delays every timer past anything measured";

/// Every numeric key of a resolved scenario and its accepted range. Patterns are matched in order.
pub const LIMITS: &[Limit] = &[
    Limit { key: "seed", range: Range::Count(0, u64::MAX), why: "any 64-bit seed" },
    // The path.
    Limit { key: "path.*.rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
    Limit {
        key: "path.*.delay",
        range: Range::Time(Duration::ZERO, s(60)),
        why: "the connections get 180 s of simulated time to come up and a handshake crosses the path three times",
    },
    Limit {
        key: "path.*.jitter",
        range: Range::Time(Duration::ZERO, s(60)),
        why: "at most the delay (checked with it), which is at most 60 s",
    },
    Limit {
        key: "path.*.queue",
        range: Range::Queue { packets: 1_000_000, bytes: GIB },
        why: "up to a million packets or 1GiB waiting",
    },
    Limit { key: "path.*.framing", range: Range::Size(0, 1024), why: "bytes per frame beyond the IP datagram" },
    Limit { key: "path.*.mtu", range: Range::Size(68, 65535), why: "RFC 791: 68 bytes to the 16-bit length field" },
    Limit { key: "path.*.loss.drop", range: Range::Count(0, u64::MAX), why: "frame indices" },
    Limit { key: "path.*.loss.*", range: Range::Real(0.0, 1.0), why: "a probability" },
    // A dumbbell's bottleneck directions: as the path's (a flow's tcp knobs are checked as a host's).
    Limit { key: "dumbbell.*.rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
    Limit { key: "dumbbell.access_rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
    Limit {
        key: "dumbbell.*.delay",
        range: Range::Time(Duration::ZERO, s(60)),
        why: "the connections get 180 s of simulated time to come up and a handshake crosses the path three times",
    },
    Limit {
        key: "dumbbell.*.jitter",
        range: Range::Time(Duration::ZERO, s(60)),
        why: "at most the delay (checked with it), which is at most 60 s",
    },
    Limit {
        key: "dumbbell.*.queue",
        range: Range::Queue { packets: 1_000_000, bytes: GIB },
        why: "up to a million packets or 1GiB waiting",
    },
    Limit { key: "dumbbell.*.framing", range: Range::Size(0, 1024), why: "bytes per frame beyond the IP datagram" },
    Limit { key: "dumbbell.*.mtu", range: Range::Size(68, 65535), why: "RFC 791: 68 bytes to the 16-bit length field" },
    Limit { key: "dumbbell.*.loss.drop", range: Range::Count(0, u64::MAX), why: "frame indices" },
    Limit { key: "dumbbell.*.loss.*", range: Range::Real(0.0, 1.0), why: "a probability" },
    // The hosts' NICs and CPUs.
    Limit { key: "*.host.txqueuelen", range: Range::Count(0, 1_000_000), why: "Linux txqueuelen, packets" },
    Limit { key: "*.host.nic_rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
    Limit { key: "*.host.cpu.cores", range: Range::Count(1, 1024), why: "cores" },
    Limit {
        key: "*.host.cpu.*",
        range: Range::Time(Duration::ZERO, s(1)),
        why: "a cost per segment, KB, call or timer of more than a second leaves nothing to measure",
    },
    Limit { key: "*.host.fragment_ttl", range: Range::Time(ms(1), HOUR), why: "Linux ipfrag_time is 30 s" },
    Limit {
        key: "*.host.rx_coalesce",
        range: Range::Time(Duration::ZERO, MAX_RX_COALESCE),
        why: "a NIC's interrupt-coalescing delay",
    },
    // TCP (crates/tcp's validate checks the relations between knobs; these bound each one).
    Limit {
        key: "*.tcp.mss",
        range: Range::Size(88, 65495),
        why: "an IPv4 datagram holds at most 65495 bytes of TCP payload",
    },
    Limit { key: "*.tcp.send_buffer", range: Range::Size(1, GIB), why: "socket buffers up to 1GiB" },
    Limit { key: "*.tcp.recv_buffer", range: Range::Size(1, GIB), why: "socket buffers up to 1GiB" },
    Limit { key: "*.tcp.send_buffer_truesize", range: Range::Size(0, 1 << 20), why: "bookkeeping bytes per skb" },
    Limit { key: "*.tcp.recv_window_ratio", range: Range::Real(0.25, 4.0), why: "the window's share of the buffer" },
    Limit {
        key: "*.tcp.timestamp_tick",
        range: Range::Time(Duration::from_micros(1), s(1)),
        why: "RFC 7323 §5.4: the timestamp clock ticks between 1 ms and 1 s (1 us allowed for fast paths)",
    },
    Limit { key: "*.tcp.tso_max_size", range: Range::Size(1024, 1 << 20), why: "Linux's GSO limit is 64KiB" },
    Limit { key: "*.tcp.min_tso_segs", range: Range::Count(1, 255), why: "Linux tcp_min_tso_segs's range, segments" },
    Limit {
        key: "*.tcp.sack_blocks_expected",
        range: Range::Count(1, 4),
        why: "the receiver's SACK array holds 4 blocks (Linux TCP_NUM_SACKS)",
    },
    Limit {
        key: "*.tcp.tso_win_divisor",
        range: Range::Count(0, 1000),
        why: "Linux tcp_tso_win_divisor; 0 = 3 segments",
    },
    Limit { key: "*.tcp.ack_every", range: Range::Count(1, 64), why: "segments per delayed ACK" },
    Limit {
        key: "*.tcp.delayed_ack_timeout",
        range: Range::Time(Duration::ZERO, ms(500)),
        why: "RFC 1122 4.2.3.2: less than 500 ms",
    },
    Limit { key: "*.tcp.deferred_ack_max", range: Range::Count(2, 64), why: "segments" },
    Limit {
        key: "*.tcp.ato_min",
        range: Range::Time(Duration::ZERO, ms(500)),
        why: "RFC 1122 4.2.3.2: an ACK is delayed less than 500 ms",
    },
    Limit { key: "*.tcp.comp_sack_nr", range: Range::Count(0, 255), why: "Linux tcp_comp_sack_nr is a byte" },
    Limit { key: "*.tcp.comp_sack_delay", range: Range::Time(Duration::ZERO, ms(500)), why: "a delayed ACK's bound" },
    Limit { key: "*.tcp.ack_immediate_p", range: Range::Real(0.0, 1.0), why: "a probability" },
    Limit { key: "*.tcp.cubic.hystart_ack_delta", range: Range::Time(Duration::ZERO, s(1)), why: "a gap between ACKs" },
    Limit { key: "*.tcp.cubic.*", range: Range::Real(0.0, 100.0), why: "CUBIC's constants (RFC 9438 §5)" },
    Limit { key: "*.tcp.dupthresh", range: Range::Count(1, 1000), why: "duplicate ACKs" },
    Limit { key: "*.tcp.syn_retries", range: Range::Count(0, 255), why: "Linux tcp_syn_retries is a byte" },
    Limit { key: "*.tcp.pacing_ss_ratio", range: Range::Count(1, 10_000), why: "percent of cwnd per SRTT" },
    Limit { key: "*.tcp.pacing_ca_ratio", range: Range::Count(1, 10_000), why: "percent of cwnd per SRTT" },
    Limit { key: "*.tcp.max_pacing_rate", range: Range::Rate(MIN_RATE, MAX_RATE), why: RATE_WHY },
    Limit {
        key: "*.tcp.limit_output_bytes",
        range: Range::Size(0, 1 << 31),
        why: "Linux tcp_limit_output_bytes is an int (0: off)",
    },
    Limit {
        key: "*.tcp.tlp_max_ack_delay",
        range: Range::Time(Duration::ZERO, s(1)),
        why: "RFC 8985 §7.2: a delayed ACK's bound",
    },
    Limit { key: "*.tcp.rto_params.*", range: Range::Real(0.0, 100.0), why: "estimator gains and multipliers" },
    Limit { key: "*.tcp.rto_initial", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    Limit { key: "*.tcp.rto_min", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
    Limit { key: "*.tcp.rto_max", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    Limit { key: "*.tcp.clock_granularity", range: Range::Time(Duration::ZERO, s(1)), why: TICK_WHY },
    Limit { key: "*.tcp.max_burst", range: Range::Count(0, 1000), why: "segments per ACK (0: no limit)" },
    Limit { key: "*.tcp.tick", range: Range::Time(Duration::ZERO, s(1)), why: TICK_WHY },
    Limit { key: "*.tcp.time_wait", range: Range::Time(Duration::ZERO, HOUR), why: "RFC 9293: 2 MSL, 4 minutes" },
    // RDP (crates/rdp's validate checks the rest).
    Limit { key: "*.rdp.version", range: Range::Count(1, 2), why: "RFC 908 and RFC 1151" },
    Limit { key: "*.rdp.max_outstanding", range: Range::Count(1, 64), why: "segments" },
    Limit { key: "*.rdp.max_segment_size", range: Range::Count(1, 65535), why: "a 16-bit field" },
    Limit { key: "*.rdp.eack_max_entries", range: Range::Count(0, 65535), why: "a 16-bit count" },
    Limit { key: "*.rdp.send_queue", range: Range::Count(1, 1_000_000), why: "messages" },
    Limit { key: "*.rdp.tick", range: Range::Time(ms(1), s(10)), why: TICK_WHY },
    Limit { key: "*.rdp.initial_rto", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    Limit { key: "*.rdp.min_rto", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
    Limit { key: "*.rdp.max_rto", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    Limit { key: "*.rdp.rto_params.*", range: Range::Real(0.0, 100.0), why: "estimator gains and multipliers" },
    Limit { key: "*.rdp.close_wait", range: Range::Time(Duration::ZERO, HOUR), why: TIMER_WHY },
    Limit { key: "*.rdp.nul_idle", range: Range::Time(ms(1), HOUR), why: TIMER_WHY },
    // The test.
    Limit {
        key: "test.duration",
        range: Range::Time(ms(1), DAY),
        why: "a measurement under a millisecond holds no complete exchange; more than a day is not simulated",
    },
    Limit { key: "test.message", range: Range::Size(1, GIB), why: "one send call" },
    Limit { key: "test.request", range: Range::Size(1, GIB), why: "one request" },
    Limit { key: "test.response", range: Range::Size(1, GIB), why: "one response" },
    Limit { key: "test.parallel", range: Range::Count(1, 100_000), why: "connections" },
    Limit { key: "test.burst", range: Range::Count(0, 100_000), why: "extra transactions" },
    Limit { key: "test.messages", range: Range::Count(1, 100_000_000), why: "messages" },
    Limit {
        key: "test.interval",
        range: Range::Time(Duration::from_micros(1), HOUR),
        why: "an application's timer paces no finer than a microsecond (1ns would be 10^9 send calls per second)",
    },
    Limit {
        key: "test.series",
        range: Range::Time(Duration::from_micros(100), HOUR),
        why: "a sample every 100 us is 10,000 rows per simulated second",
    },
    Limit { key: "test.start_spread", range: Range::Time(Duration::ZERO, DAY), why: "less than test.duration" },
];

/// The first row of [`LIMITS`] whose pattern matches `key`. Remembered per key: a sweep validates the
/// same two hundred keys at every point.
pub fn limit_of(key: &str) -> Option<&'static Limit> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<String, Option<usize>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = seen.get(key) {
        return i.map(|i| &LIMITS[i]);
    }
    let i = LIMITS.iter().position(|l| matches(l.key, key));
    seen.insert(key.to_string(), i);
    i.map(|i| &LIMITS[i])
}

/// Whether `key` matches `pattern` segment by segment, a `*` segment matching any one segment. A walk over
/// the bytes: a run's start-up asks this of about two hundred keys times a hundred rows, and splitting
/// both strings at every dot was 3% of the instructions of a 1 s gigabit run.
fn matches(pattern: &str, key: &str) -> bool {
    let (p, k) = (pattern.as_bytes(), key.as_bytes());
    let (mut i, mut j) = (0, 0);
    loop {
        if p.get(i) == Some(&b'*') && p.get(i + 1).is_none_or(|&c| c == b'.') {
            while k.get(j).is_some_and(|&c| c != b'.') {
                j += 1;
            }
            i += 1;
        } else {
            while let Some(&c) = p.get(i).filter(|&&c| c != b'.') {
                if k.get(j) != Some(&c) {
                    return false;
                }
                i += 1;
                j += 1;
            }
            if k.get(j).is_some_and(|&c| c != b'.') {
                return false;
            }
        }
        match (i == p.len(), j == k.len()) {
            (true, true) => return true,
            (false, false) => (i, j) = (i + 1, j + 1),
            _ => return false,
        }
    }
}

impl Range {
    /// Whether `v` (a leaf of the scenario's JSON) is of this range's kind and inside it; `None` when the
    /// leaf is not of the kind (a `framing = "ethernet"`, a loss `model`).
    fn check(&self, v: &Value) -> Option<bool> {
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

/// A value outside its key's range: the key path and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub key: String,
    pub message: String,
}

/// Calls `f` with every key [`LIMITS`] bounds and its value: the whole scenario but its free text and its
/// plots' and published figures' tables (checked by their own validation). One key buffer, no copies:
/// a sweep validates every point this way.
fn for_each_leaf<E>(s: &impl serde::Serialize, mut f: impl FnMut(&str, &Value) -> Result<(), E>) -> Result<(), E> {
    fn walk<E>(key: &mut String, v: &Value, f: &mut impl FnMut(&str, &Value) -> Result<(), E>) -> Result<(), E> {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let len = key.len();
                    if len > 0 {
                        key.push('.');
                    }
                    key.push_str(k);
                    walk(key, x, f)?;
                    key.truncate(len);
                }
                Ok(())
            }
            leaf => f(key, leaf),
        }
    }
    let v = serde_json::to_value(s).unwrap_or_default();
    let Value::Object(m) = &v else { return Ok(()) };
    let mut key = String::with_capacity(64);
    for (k, x) in m {
        if matches!(k.as_str(), "name" | "description" | "plot" | "published") {
            continue;
        }
        key.clear();
        key.push_str(k);
        walk(&mut key, x, &mut f)?;
    }
    Ok(())
}

/// Checks every key of `s` against [`LIMITS`]; the first value outside its range.
pub fn check(s: &impl serde::Serialize) -> Result<(), OutOfRange> {
    for_each_leaf(s, |key, v| {
        let Some(limit) = limit_of(key) else { return Ok(()) };
        if limit.range.check(v) == Some(false) {
            let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            return Err(OutOfRange {
                key: key.to_string(),
                message: format!("{shown}: accepted {} ({})", limit.range, limit.why),
            });
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{cross_checks, Findings};
    use crate::scenario::{load, Source};

    const FULL: &str = r#"
name = "every key"
seed = 7
[path.up]
rate = "10mbit"
delay = "20ms"
queue = "64KiB"
framing = "24B"
mtu = "1500B"
loss = { model = "gilbert_elliott", p = 0.01, r = 0.5 }
[path.down]
rate = "10mbit"
delay = "20ms"
loss = { model = "scripted", drop = [3, 5] }
[client.host]
nic_rate = "1gbit"
txqueuelen = 100
fragment_ttl = "30s"
rx_coalesce = "50us"
cpu = { cores = 2, per_segment_out = "1us", per_segment_in = "1us", per_ack_in = "1us", per_ack_out = "1us", per_kb_copy = "1us", per_call = "1us", per_timer = "1us" }
[test]
kind = "tcp_stream"
duration = "1s"
parallel = 2
start_spread = "1ms"
series = { interval = "10ms", vars = ["CurCwnd"] }
"#;

    fn leaves(text: &str, sets: &[&str]) -> Vec<(String, Value)> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let s = load(&Source { name: "t.toml", text }, &sets).unwrap();
        let mut out = Vec::new();
        for_each_leaf(&s, |k, v| {
            out.push((k.to_string(), v.clone()));
            Ok::<(), ()>(())
        })
        .unwrap();
        out
    }

    /// Whether a leaf holds a number, in any of the scenario's spellings.
    fn is_numeric(v: &Value) -> bool {
        match v {
            Value::Number(_) => true,
            Value::Array(a) => a.iter().any(|x| x.is_number()),
            Value::String(t) => {
                t.parse::<Duration>().is_ok()
                    || t.parse::<Rate>().is_ok()
                    || t.parse::<ByteSize>().is_ok()
                    || t.strip_suffix("pkt").is_some_and(|n| n.parse::<u64>().is_ok())
            }
            _ => false,
        }
    }

    /// The class, not the instances: every numeric key of a scenario with every table filled in (each
    /// personality, the RDP knobs, a CPU, a series, a message stream) has a row in LIMITS, and every
    /// shipped scenario is inside the table.
    #[test]
    fn every_numeric_key_is_bounded() {
        let rr = ["test.kind=tcp_rr", "test.burst=1", "test.request=\"100B\"", "test.response=\"1KiB\""];
        let mut all = leaves(FULL, &rr);
        for (stack, _) in tcplab_tcp::personality::PERSONALITIES {
            all.extend(leaves(FULL, &[&format!("client.stack={stack}")]));
        }
        all.extend(leaves(FULL, &["test.kind=rdp_rr", "test.series=\"10ms\"", "client.rdp.nul_idle=\"1s\""]));
        all.extend(leaves(
            FULL,
            &["test.kind=tcp_msg", "test.messages=10", "test.interval=\"1ms\"", "test.message=\"10B\""],
        ));
        all.extend(leaves(
            FULL,
            &["test.send_buffer=\"64KiB\"", "test.recv_buffer=\"64KiB\"", "test.message=\"1KiB\""],
        ));
        let unbounded: Vec<&String> =
            all.iter().filter(|(k, v)| is_numeric(v) && limit_of(k).is_none()).map(|(k, _)| k).collect();
        assert!(unbounded.is_empty(), "numeric keys without a row in LIMITS: {unbounded:?}");
        for shipped in crate::scenario::SHIPPED {
            let s = load(&Source { name: shipped.name, text: shipped.text }, &[]).unwrap();
            assert_eq!(check(&s), Ok(()), "{}", shipped.name);
            assert_eq!(cross_checks(&s), Findings::default(), "{}", shipped.name);
        }
    }

    #[test]
    fn patterns() {
        assert!(matches("path.*.rate", "path.up.rate"));
        assert!(!matches("path.*.rate", "path.up.rate.x"));
        assert!(!matches("*.tcp.tick", "client.rdp.tick"));
        assert!(matches("*.tcp.tick", "client.tcp.tick") && matches("seed", "seed") && matches("a.*", "a."));
        for (p, k) in [("path.*.rate", "path.up"), ("path.*.rate", "path.up.rates"), ("seed", "see"), ("a.*", "a")] {
            assert!(!matches(p, k), "{p} {k}");
        }
        assert_eq!(limit_of("client.rdp.tick").unwrap().range, Range::Time(ms(1), s(10)));
        assert_eq!(limit_of("path.down.loss.drop").unwrap().range, Range::Count(0, u64::MAX));
    }
}
