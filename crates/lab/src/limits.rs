//! The sane range of every numeric key of a scenario, checked in one place (docs/scenario.md § Limits).
//!
//! A value can have the right type and still make a run fail or never end: a path of 1 bit/s never
//! carries a SYN, a one-way delay of 31 years outlasts the 180 s the connections get to come up, a timer
//! tick of 584 years means no timer ever fires, a rate of 10^6 Tbit/s is below the clock's nanosecond.
//! Each key's field checks its own type; this table bounds every number (counts, durations, rates,
//! sizes) of the resolved scenario, and the table is tested to cover every numeric leaf the scenario
//! serializes, so a new knob cannot arrive unbounded. Beyond the table, the scenario's `cross_checks`
//! (crates/lab/src/scenario/checks.rs) refuses combinations that cannot run and warns about ones that
//! will run and measure little or nothing.
//!
//! The table is the lab's own rows ([`LAB_LIMITS`]) and each registered transport's (its config's
//! `TransportConfig::LIMITS`, crate::host_transports), gathered by [`table`]. It names only the limits'
//! vocabulary (crate::bounds) and the registration: [`check`] reads a scenario through its serialized
//! keys, so the scenario's validation (above) calls it without a circle.
//!
//! The table runs after the fields' own checks, so a knob with a more specific message (`tcp.mss`,
//! `test.parallel`) keeps it; its ranges are never narrower than those.

use serde_json::Value;
use tcplab_units::Duration;

use crate::bounds::{ms, s, DAY, GIB, HOUR, RATE_WHY};
pub use crate::bounds::{Limit, Range, MAX_RATE, MIN_RATE};
use crate::host_transports::REGISTERED;

/// The largest `host.rx_coalesce` accepted (NICs' interrupt-coalescing settings stay below a millisecond).
pub const MAX_RX_COALESCE: Duration = Duration::from_millis(10);

/// The lab's own rows: every numeric key of a resolved scenario but the transports' knobs (each
/// transport's rows are its config's `TransportConfig::LIMITS`, all `*.TABLE.KNOB`, gathered by
/// [`table`]).
pub const LAB_LIMITS: &[Limit] = &[
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

/// The whole table: the lab's rows, then each registered transport's (crate::host_transports::REGISTERED),
/// in the registration's order. A transport's rows bound its own table only (`*.TABLE.…`), which no lab
/// row matches, so the order decides nothing between them.
pub fn table() -> &'static [Limit] {
    static TABLE: std::sync::OnceLock<Vec<Limit>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| LAB_LIMITS.iter().chain(REGISTERED.iter().flat_map(|r| r.limits)).copied().collect())
}

/// The first row of [`table`] whose pattern matches `key`. Remembered per key: a sweep validates the
/// same two hundred keys at every point.
pub fn limit_of(key: &str) -> Option<&'static Limit> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<String, Option<usize>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
    let rows = table();
    if let Some(i) = seen.get(key) {
        return i.map(|i| &rows[i]);
    }
    let i = rows.iter().position(|l| matches(l.key, key));
    seen.insert(key.to_string(), i);
    i.map(|i| &rows[i])
}

/// Whether `key` matches `pattern` segment by segment, a `*` segment matching any one segment. A walk over
/// the bytes: a run's start-up asks this of about two hundred keys times a hundred rows, and splitting
/// both strings at every dot was 3% of the instructions of a 1 s gigabit run.
pub fn matches(pattern: &str, key: &str) -> bool {
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

/// A value outside its key's range: the key path and the message.
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    pub key: String,
    pub message: String,
}

/// Calls `f` with every key [`table`] bounds and its value: the whole scenario but its free text and its
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

/// Checks every key of `s` against [`table`]; the first value outside its range.
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
    use tcplab_units::{ByteSize, Rate};

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
    /// personality, the RDP knobs, a CPU, a series, a message stream) has a row in the table, and every
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
        assert!(unbounded.is_empty(), "numeric keys without a row in the limits table: {unbounded:?}");
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
