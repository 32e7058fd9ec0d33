//! Latency statistics: exact count, mean, standard deviation, minimum and maximum, and percentiles from an
//! HDR histogram with 3 significant digits (a percentile is within 0.1% of the exact order statistic).

use hdrhistogram::Histogram;
use tcplab_units::Duration;

/// Collects durations (nanoseconds).
#[derive(Debug, Clone)]
pub struct Latency {
    hist: Histogram<u64>,
    n: u64,
    /// Welford's running mean and sum of squared deviations, ns.
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: Histogram::new(3).expect("3 significant digits are supported"),
            n: 0,
            mean: 0.0,
            m2: 0.0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Latency {
    pub fn record(&mut self, d: Duration) {
        self.record_n(d, 1);
    }

    /// Records `count` samples of the same duration.
    pub fn record_n(&mut self, d: Duration, count: u64) {
        if count == 0 {
            return;
        }
        let v = d.as_nanos();
        // The histogram resizes itself; it only fails past u64 range, which a duration cannot reach.
        self.hist.record_n(v, count).expect("an auto-resizing histogram takes any u64");
        // Welford for a batch of equal values (Chan et al.'s combination with a zero-variance batch).
        let n0 = self.n as f64;
        let n1 = count as f64;
        let delta = v as f64 - self.mean;
        let n = n0 + n1;
        self.mean += delta * n1 / n;
        self.m2 += delta * delta * n0 * n1 / n;
        self.n += count;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The figures, in microseconds; all zero without samples.
    pub fn summary(&self) -> LatencySummary {
        if self.n == 0 {
            return LatencySummary::default();
        }
        let us = |ns: f64| ns / 1e3;
        // The histogram answers with the highest value equivalent to the bucket: clamp it into [min, max].
        let q = |q: f64| us(self.hist.value_at_quantile(q).clamp(self.min, self.max) as f64);
        LatencySummary {
            count: self.n,
            mean: us(self.mean),
            stddev: us((self.m2 / self.n as f64).sqrt()),
            min: us(self.min as f64),
            p50: q(0.50),
            p90: q(0.90),
            p99: q(0.99),
            p99_9: q(0.999),
            max: us(self.max as f64),
        }
    }
}

/// Statistics of a set of durations, microseconds. `stddev` is the population standard deviation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub stddev: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_moments_and_percentiles_within_three_digits() {
        let mut l = Latency::default();
        for i in 1..=10_000u64 {
            l.record(Duration::from_nanos(i * 1000)); // 1 us .. 10 ms
        }
        let s = l.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.mean - 5000.5).abs() < 1e-6);
        // Population stddev of 1..=N is sqrt((N^2 - 1) / 12).
        let sd = ((10_000f64 * 10_000.0 - 1.0) / 12.0).sqrt();
        assert!((s.stddev - sd).abs() < 1e-6, "{} vs {sd}", s.stddev);
        assert_eq!((s.min, s.max), (1.0, 10_000.0));
        for (got, exact) in [(s.p50, 5000.0), (s.p90, 9000.0), (s.p99, 9900.0), (s.p99_9, 9990.0)] {
            assert!((got - exact).abs() / exact <= 1e-3, "{got} vs {exact}");
        }
    }

    #[test]
    fn batches_equal_single_records() {
        let (mut a, mut b) = (Latency::default(), Latency::default());
        for (v, n) in [(7u64, 3u64), (100, 1), (3, 5)] {
            a.record_n(Duration::from_micros(v), n);
            for _ in 0..n {
                b.record(Duration::from_micros(v));
            }
        }
        let (sa, sb) = (a.summary(), b.summary());
        assert!((sa.mean - sb.mean).abs() < 1e-9 && (sa.stddev - sb.stddev).abs() < 1e-9);
        assert_eq!((sa.min, sa.p50, sa.max), (sb.min, sb.p50, sb.max));
    }
}
