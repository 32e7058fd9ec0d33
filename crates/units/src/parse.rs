//! Text forms of the units. Every error message lists the accepted units, because it is what a person
//! reads when a scenario file says `rate = "fast"`.

use crate::{ByteSize, Duration, Rate};
use std::fmt;
use std::str::FromStr;

/// Why a text value is not a valid duration, rate or size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub input: String,
    pub reason: String,
    pub accepted: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}; accepted: {}", self.input, self.reason, self.accepted)
    }
}
impl std::error::Error for ParseError {}

const DURATION_UNITS: &str = "a number with a unit ns, us, ms, s, min, h (e.g. \"100ms\", \"2.5s\", \"6h\")";
const RATE_UNITS: &str =
    "a number with a unit bit, kbit, mbit, gbit, tbit (bits per second, SI prefixes; e.g. \"10mbit\", \"1gbit\")";
const SIZE_UNITS: &str =
    "a number with a unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024) (e.g. \"64KiB\", \"1460B\")";

/// Splits `"2.5ms"` into the decimal number and its unit, and scales the number exactly.
fn scaled(input: &str, units: &[(&str, u128)], accepted: &'static str, base: &str) -> Result<u64, ParseError> {
    let err = |reason: String| ParseError { input: input.to_string(), reason, accepted };
    let s = input.trim();
    if s.starts_with('-') {
        return Err(err("must not be negative".into()));
    }
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(err("expected a number first".into()));
    }
    if unit.is_empty() {
        return Err(err("missing unit".into()));
    }
    let scale = units
        .iter()
        .find(|(u, _)| u.eq_ignore_ascii_case(unit))
        .map(|&(_, k)| k)
        .ok_or_else(|| err(format!("unknown unit {unit:?}")))?;
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return Err(err("malformed number".into()));
    }
    if frac.len() > 18 {
        return Err(err("too many decimal places".into()));
    }
    let digits: u128 = format!("{int}{frac}").parse().map_err(|_| err("number too large".into()))?;
    let denom = 10u128.pow(frac.len() as u32);
    let total = digits.checked_mul(scale).ok_or_else(|| err("number too large".into()))?;
    if total % denom != 0 {
        return Err(err(format!("is not a whole number of {base}")));
    }
    u64::try_from(total / denom).map_err(|_| err("number too large".into()))
}

impl FromStr for Duration {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        const UNITS: &[(&str, u128)] = &[
            ("ns", 1),
            ("us", 1_000),
            ("µs", 1_000),
            ("ms", 1_000_000),
            ("s", 1_000_000_000),
            ("sec", 1_000_000_000),
            ("min", 60_000_000_000),
            // A long soak ("6h") reads as it is meant; `Display` still prints seconds, so documents that
            // echo a duration do not change with the spelling of the input.
            ("h", 3_600_000_000_000),
        ];
        scaled(s, UNITS, DURATION_UNITS, "nanoseconds").map(Duration)
    }
}

impl FromStr for Rate {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        const UNITS: &[(&str, u128)] =
            &[("bit", 1), ("kbit", 1_000), ("mbit", 1_000_000), ("gbit", 1_000_000_000), ("tbit", 1_000_000_000_000)];
        let lower = s.trim().to_ascii_lowercase();
        if lower.ends_with("bps") {
            return Err(ParseError {
                input: s.to_string(),
                reason: "\"bps\" is ambiguous (tc reads it as bytes per second); write bits per second as \"kbit\", \"mbit\", \"gbit\"".into(),
                accepted: RATE_UNITS,
            });
        }
        let bps = scaled(s, UNITS, RATE_UNITS, "bits per second")?;
        if bps == 0 {
            return Err(ParseError {
                input: s.to_string(),
                reason: "a rate must be positive".into(),
                accepted: RATE_UNITS,
            });
        }
        Ok(Rate(bps))
    }
}

impl FromStr for ByteSize {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        const UNITS: &[(&str, u128)] = &[
            ("B", 1),
            ("KB", 1_000),
            ("MB", 1_000_000),
            ("GB", 1_000_000_000),
            ("KiB", 1 << 10),
            ("MiB", 1 << 20),
            ("GiB", 1 << 30),
        ];
        scaled(s, UNITS, SIZE_UNITS, "bytes").map(ByteSize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_exactly() {
        assert_eq!("100ms".parse::<Duration>().unwrap(), Duration::from_millis(100));
        assert_eq!("2.5s".parse::<Duration>().unwrap(), Duration::from_nanos(2_500_000_000));
        assert_eq!("250us".parse::<Duration>().unwrap(), Duration::from_micros(250));
        assert_eq!("1min".parse::<Duration>().unwrap(), Duration::from_secs(60));
        assert_eq!("6h".parse::<Duration>().unwrap(), Duration::from_secs(6 * 3600));
        assert_eq!("1.5H".parse::<Duration>().unwrap(), Duration::from_secs(5400));
        assert_eq!("0.25 h".parse::<Duration>().unwrap(), Duration::from_secs(900));
        // 2^64 ns is 5 124 095.58 hours: the largest whole number of hours that fits, and the first that does not.
        assert_eq!("5124095h".parse::<Duration>().unwrap(), Duration::from_secs(5_124_095 * 3600));
        assert!("5124096h".parse::<Duration>().unwrap_err().reason.contains("too large"));
        assert_eq!("0s".parse::<Duration>().unwrap(), Duration::ZERO);
        assert_eq!("0.000000001s".parse::<Duration>().unwrap(), Duration::from_nanos(1));
    }

    #[test]
    fn rates_and_sizes_parse_exactly() {
        assert_eq!("1gbit".parse::<Rate>().unwrap().bps(), 1_000_000_000);
        assert_eq!("1.544mbit".parse::<Rate>().unwrap().bps(), 1_544_000);
        assert_eq!("384kbit".parse::<Rate>().unwrap().bps(), 384_000);
        assert_eq!("10Mbit".parse::<Rate>().unwrap().bps(), 10_000_000);
        assert_eq!("64KiB".parse::<ByteSize>().unwrap().bytes(), 65_536);
        assert_eq!("1460B".parse::<ByteSize>().unwrap().bytes(), 1460);
        assert_eq!("64KB".parse::<ByteSize>().unwrap().bytes(), 64_000);
    }

    #[test]
    fn bad_values_name_the_accepted_units() {
        for bad in ["fast", "-5ms", "10", "5 parsecs", "1.2.3s", "", "0.5ns"] {
            let e = bad.parse::<Duration>().unwrap_err();
            assert!(e.to_string().contains("accepted: a number with a unit ns"), "{e}");
            assert!(e.accepted.contains("min, h "), "{e}");
        }
        for bad in ["6hr", "6hours", "1d", "6m"] {
            let e = bad.parse::<Duration>().unwrap_err();
            assert!(e.reason.contains("unknown unit"), "{bad}: {e}");
        }
        let e = "10mbps".parse::<Rate>().unwrap_err();
        assert!(e.reason.contains("ambiguous"), "{e}");
        assert!("0mbit".parse::<Rate>().is_err());
        assert!("99999999999999999999GiB".parse::<ByteSize>().is_err());
    }

    #[test]
    fn display_round_trips() {
        for s in ["100ms", "2500ms", "3s", "7ns", "250us"] {
            assert_eq!(s.parse::<Duration>().unwrap().to_string(), s);
        }
        // Minutes and hours print as seconds: result documents echo durations, and a scenario written
        // `"6h"` or `"21600s"` is the same scenario with the same document.
        assert_eq!("6h".parse::<Duration>().unwrap().to_string(), "21600s");
        assert_eq!("2min".parse::<Duration>().unwrap().to_string(), "120s");
        for s in ["1gbit", "384kbit", "1544kbit", "7bit"] {
            assert_eq!(s.parse::<Rate>().unwrap().to_string(), s);
        }
        for s in ["64KiB", "1460B", "16MiB"] {
            assert_eq!(s.parse::<ByteSize>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn tx_time_is_exact_to_the_nanosecond() {
        let r = Rate::from_bps(1_000_000_000);
        assert_eq!(r.tx_time(1538).as_nanos(), 12_304);
        let r = Rate::from_bps(3);
        assert_eq!(r.tx_time(1).as_nanos(), 2_666_666_667); // 8/3 s rounded up
    }

    proptest::proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,24}") {
            let _ = s.parse::<Duration>();
            let _ = s.parse::<Rate>();
            let _ = s.parse::<ByteSize>();
        }

        /// Every unit scales exactly: `N.F<unit>` is N·scale + F·scale/10^len(F) nanoseconds, whatever the
        /// unit's case and the blanks around it.
        #[test]
        fn durations_scale_exactly_in_every_unit(
            int in 0u64..100_000,
            frac in "[0-9]{0,3}",
            unit in proptest::sample::select(vec![
                ("ns", 1u128), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000),
                ("sec", 1_000_000_000), ("min", 60_000_000_000), ("h", 3_600_000_000_000),
            ]),
            upper in proptest::bool::ANY,
            blank in proptest::bool::ANY,
        ) {
            let (name, scale) = unit;
            let name = if upper && name.is_ascii() { name.to_ascii_uppercase() } else { name.to_string() };
            let text = if frac.is_empty() { format!("{int}") } else { format!("{int}.{frac}") };
            let input = format!(" {text}{}{name} ", if blank { " " } else { "" });
            let denom = 10u128.pow(frac.len() as u32);
            let exact = (int as u128 * denom + frac.parse::<u128>().unwrap_or(0)) * scale;
            match input.parse::<Duration>() {
                Ok(d) => {
                    proptest::prop_assert!(exact.is_multiple_of(denom));
                    proptest::prop_assert_eq!(d.as_nanos() as u128, exact / denom);
                }
                Err(e) => {
                    proptest::prop_assert!(
                        !exact.is_multiple_of(denom) || exact / denom > u64::MAX as u128,
                        "{input}: {e}"
                    );
                    proptest::prop_assert!(e.accepted.contains("min, h"));
                }
            }
        }

        #[test]
        fn duration_display_parses_back(ns in 0u64..u64::MAX / 2) {
            let d = Duration::from_nanos(ns);
            proptest::prop_assert_eq!(d.to_string().parse::<Duration>().unwrap(), d);
        }
    }
}
