//! Units with their unit in the type: virtual time in nanoseconds ([`Instant`], [`Duration`]), link rates in
//! bits per second ([`Rate`]) and sizes in bytes ([`ByteSize`]), plus the text forms scenario files and flags
//! use (`100ms`, `2.5s`, `1gbit`, `384kbit`, `64KiB`, `1460B`).
//!
//! Parsing is exact where it can be: decimal fractions are parsed digit by digit, never through `f64`,
//! so `2.5s` is exactly 2_500_000_000 ns and `1.544mbit` exactly 1_544_000 bit/s.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

mod parse;
pub use parse::ParseError;

/// A point in virtual time, in nanoseconds since the start of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

/// A span of virtual time, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    /// Later than every instant a simulation reaches; used for "never".
    pub const FAR_FUTURE: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// The first multiple of `tick` at or after `self` (`tick` zero leaves the instant alone).
    pub fn ceil_to(self, tick: Duration) -> Instant {
        if tick.0 == 0 {
            return self;
        }
        Instant(self.0.div_ceil(tick.0).saturating_mul(tick.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * 1_000_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Self {
        Duration((s * 1e9).round().max(0.0) as u64)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Panics in debug builds if `earlier` is later; use [`Instant::saturating_since`] when that can happen.
    fn sub(self, earlier: Instant) -> Duration {
        debug_assert!(earlier.0 <= self.0, "time went backwards");
        Duration(self.0.wrapping_sub(earlier.0))
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, o: Duration) -> Duration {
        Duration(self.0.saturating_add(o.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, o: Duration) {
        self.0 = self.0.saturating_add(o.0);
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, o: Duration) -> Duration {
        Duration(self.0.saturating_sub(o.0))
    }
}

/// A data rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next nanosecond.
    /// A zero rate is not constructible from text; callers validate before.
    #[inline]
    pub fn tx_time(self, bytes: u64) -> Duration {
        // A frame's bit-nanoseconds fit 64 bits up to 2 GiB: one 64-bit division on the per-packet path
        // rather than a 128-bit one (the same quotient).
        if let Some(bits) = bytes.checked_mul(8 * 1_000_000_000) {
            return Duration(bits.div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Duration(bits.div_ceil(self.0 as u128) as u64)
    }
}

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(u64);

impl ByteSize {
    pub const fn new(bytes: u64) -> Self {
        ByteSize(bytes)
    }
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Duration {
    /// The largest unit that shows the value exactly: `100ms`, `2500us`, `3s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return f.write_str("0s");
        }
        for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
            if ns.is_multiple_of(scale) {
                return write!(f, "{}{}", ns / scale, unit);
            }
        }
        write!(f, "{ns}ns")
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", Duration(self.0))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, scale) in
            [("tbit", 1_000_000_000_000), ("gbit", 1_000_000_000), ("mbit", 1_000_000), ("kbit", 1_000)]
        {
            if b >= scale && b.is_multiple_of(scale) {
                return write!(f, "{}{}", b / scale, unit);
            }
        }
        write!(f, "{b}bit")
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, scale) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
            if b >= scale && b.is_multiple_of(scale) {
                return write!(f, "{}{}", b / scale, unit);
            }
        }
        write!(f, "{b}B")
    }
}

macro_rules! text_serde {
    ($t:ty, $expecting:expr) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
text_serde!(Duration, "a duration with a unit, such as \"100ms\", \"2.5s\", \"250us\"");
text_serde!(Rate, "a rate with a unit, such as \"10mbit\", \"1gbit\", \"384kbit\"");
text_serde!(ByteSize, "a size with a unit, such as \"64KiB\", \"1460B\", \"1MiB\"");

#[cfg(test)]
mod tx_time_tests {
    use super::*;

    /// The 64-bit path gives the 128-bit quotient, rounded up, at the edge where it stops applying too.
    #[test]
    fn tx_time_is_the_rounded_up_bit_time_on_both_paths() {
        let wide = |r: u64, b: u64| ((b as u128 * 8_000_000_000).div_ceil(r as u128)) as u64;
        let edge = u64::MAX / 8_000_000_000;
        for r in [1, 7, 56_000, 1_000_000_000, 999_999_937, 10_000_000_000, u64::MAX] {
            for b in [0, 1, 40, 1538, 65_535, edge, edge + 1, 1 << 40] {
                assert_eq!(Rate::from_bps(r).tx_time(b).as_nanos(), wide(r, b), "rate {r} bytes {b}");
            }
        }
        assert_eq!(Rate::from_bps(1_000_000_000).tx_time(1538).as_nanos(), 12_304);
        assert_eq!(Rate::from_bps(3).tx_time(1).as_nanos(), 2_666_666_667);
    }
}
