//! Latency statistics: exact count, mean, standard deviation, minimum and maximum, and percentiles from an
//! HDR histogram with 3 significant digits (a percentile is within 0.1% of the exact order statistic); and
//! the distribution itself, as a bounded list of CDF steps ([`Cdf`]).

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
        let buckets = self.buckets();
        let q = |q: f64| us(buckets[self.bucket_at_quantile(&buckets, q)].0 as f64);
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
            cdf: self.cdf_of(&buckets),
        }
    }

    /// (value ns, samples at or below it), one per recorded bucket: the value is the bucket's highest
    /// equivalent (the histogram's answer for a quantile in it) clamped into [min, max]. Distinct buckets have
    /// increasing highest equivalents, and clamping keeps them apart: a bucket's highest equivalent is at
    /// least the samples in it, so at least min, and only the last bucket's can exceed max.
    fn buckets(&self) -> Vec<(u64, u64)> {
        let mut cum = 0u64;
        self.hist
            .iter_recorded()
            .map(|b| {
                cum += b.count_at_value();
                (b.value_iterated_to().clamp(self.min, self.max), cum)
            })
            .collect()
    }

    /// The bucket `Histogram::value_at_quantile(q)` answers with (for 0 < q), found among the recorded
    /// buckets rather than by a walk over the histogram's every count (a hundred and forty walks of
    /// tens of thousands of counts for a CDF): the first whose cumulative count reaches ⌈q·n⌉, at least 1,
    /// computed as the histogram computes it.
    fn bucket_at_quantile(&self, buckets: &[(u64, u64)], q: f64) -> usize {
        debug_assert!(q > 0.0, "the lowest equivalent answers q = 0");
        let target = ((q.min(1.0) * self.n as f64).ceil() as u64).max(1);
        let i = buckets.partition_point(|b| b.1 < target).min(buckets.len() - 1);
        debug_assert_eq!(buckets[i].0, self.hist.value_at_quantile(q).clamp(self.min, self.max));
        i
    }

    /// The distribution as CDF steps (value µs, fraction of the samples at or below it), values increasing,
    /// the last fraction exactly 1. A value is its histogram bucket's highest equivalent value (3 significant
    /// digits) clamped into [min, max], as the percentiles of [`Latency::summary`] are, so every percentile
    /// of the summary is a step's value and is the smallest step value whose fraction reaches its quantile.
    ///
    /// Every recorded bucket is a step when there are at most [`CDF_MAX_STEPS`]; otherwise the steps are the
    /// first bucket and the buckets of the quantiles 0.01, 0.02, …, 1 and 0.991 … 0.999, 0.9991 … 0.9999, …
    /// down to 0.999991 … 0.999999 (137 at most: the body in percent, the tail in decades of nines).
    pub fn cdf(&self) -> Cdf {
        if self.n == 0 {
            return Cdf::default();
        }
        self.cdf_of(&self.buckets())
    }

    fn cdf_of(&self, buckets: &[(u64, u64)]) -> Cdf {
        let mut out = Cdf::default();
        let n = self.n as f64;
        let mut push = |(v, c): (u64, u64)| {
            // Values increase from bucket to bucket ([`Latency::buckets`]); a quantile landing on the bucket
            // already pushed adds nothing.
            if out.steps().last().is_none_or(|&(last, _)| last < v as f64 / 1e3) {
                out.push(v as f64 / 1e3, c as f64 / n);
            }
        };
        if buckets.len() <= CDF_MAX_STEPS {
            buckets.iter().copied().for_each(push);
        } else {
            push(buckets[0]);
            for q in cdf_quantiles() {
                push(buckets[self.bucket_at_quantile(buckets, q)]);
            }
        }
        out
    }
}

/// The quantiles [`Latency::cdf`] keeps when a distribution has more buckets than [`CDF_MAX_STEPS`]: k/100
/// for k = 1..=100, then 0.991..0.999, 0.9991..0.9999, down to 0.999991..0.999999. Each is an integer over
/// a power of ten, so 0.5, 0.9, 0.99 and 0.999 are the very `f64`s the summary's percentiles use.
fn cdf_quantiles() -> Vec<f64> {
    let body = (1..=100u32).map(|k| k as f64 / 100.0);
    let tail = (3..=6u32).flat_map(|m| {
        let d = 10u64.pow(m);
        (1..=9u64).map(move |j| (d - 10 + j) as f64 / d as f64)
    });
    let mut q: Vec<f64> = body.chain(tail).collect();
    q.sort_by(f64::total_cmp);
    q
}

/// Most steps a [`Cdf`] holds.
pub const CDF_MAX_STEPS: usize = 256;

/// A latency distribution as at most [`CDF_MAX_STEPS`] steps `(value µs, cumulative fraction)` (see
/// [`Latency::cdf`]). Fixed capacity, so that [`LatencySummary`] stays a plain `Copy` value.
#[derive(Clone, Copy, PartialEq)]
pub struct Cdf {
    len: u16,
    steps: [(f64, f64); CDF_MAX_STEPS],
}

impl Default for Cdf {
    fn default() -> Self {
        Cdf { len: 0, steps: [(0.0, 0.0); CDF_MAX_STEPS] }
    }
}

impl std::fmt::Debug for Cdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.steps()).finish()
    }
}

impl Cdf {
    /// The steps, values increasing.
    pub fn steps(&self) -> &[(f64, f64)] {
        &self.steps[..self.len as usize]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, value_us: f64, fraction: f64) {
        self.steps[self.len as usize] = (value_us, fraction);
        self.len += 1;
    }

    /// A CDF read back from its steps (a saved result); `None` when there are more than [`CDF_MAX_STEPS`],
    /// or the values do not increase, or a fraction is outside (0, 1] or decreases.
    pub fn from_steps(steps: &[(f64, f64)]) -> Option<Cdf> {
        if steps.len() > CDF_MAX_STEPS {
            return None;
        }
        let mut out = Cdf::default();
        for &(v, f) in steps {
            let ok =
                v.is_finite() && f > 0.0 && f <= 1.0 && out.steps().last().is_none_or(|&(lv, lf)| lv < v && lf <= f);
            if !ok {
                return None;
            }
            out.push(v, f);
        }
        Some(out)
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
    /// The distribution ([`Latency::cdf`]); empty without samples.
    pub cdf: Cdf,
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

    /// The smallest step value whose fraction reaches `q`.
    fn quantile_of(c: &Cdf, q: f64) -> f64 {
        c.steps().iter().find(|s| s.1 >= q).map(|s| s.0).unwrap()
    }

    fn check_cdf(l: &Latency) {
        let s = l.summary();
        let steps = s.cdf.steps();
        assert!(!steps.is_empty() && steps.len() <= CDF_MAX_STEPS);
        for w in steps.windows(2) {
            assert!(w[0].0 < w[1].0 && w[0].1 <= w[1].1, "not monotone: {w:?}");
        }
        assert_eq!(steps.last().unwrap().1, 1.0);
        assert_eq!(steps.last().unwrap().0, s.max);
        assert!(steps[0].0 >= s.min && steps[0].1 > 0.0);
        for (p, q) in [(s.p50, 0.5), (s.p90, 0.9), (s.p99, 0.99), (s.p99_9, 0.999)] {
            assert_eq!(quantile_of(&s.cdf, q), p, "quantile {q}");
        }
    }

    #[test]
    fn a_small_distribution_keeps_every_bucket_with_exact_fractions() {
        // 3 × 10 us, 1 × 20 us, 6 × 50 us: F(10) = 0.3, F(20) = 0.4, F(50) = 1. A value is its bucket's top,
        // at most 0.1% above the samples (3 significant digits).
        let mut l = Latency::default();
        l.record_n(Duration::from_micros(10), 3);
        l.record_n(Duration::from_micros(20), 1);
        l.record_n(Duration::from_micros(50), 6);
        let c = l.summary().cdf;
        let st = c.steps();
        assert_eq!(st.len(), 3);
        let near = |got: f64, exact: f64| got >= exact && (got - exact) / exact <= 1e-3;
        assert!(near(st[0].0, 10.0) && st[0].1 == 0.3, "{st:?}");
        assert!(near(st[1].0, 20.0) && st[1].1 == 0.4, "{st:?}");
        // The last bucket's top is clamped to the exact maximum.
        assert_eq!((st[2].0, st[2].1), (50.0, 1.0));
        check_cdf(&l);
    }

    #[test]
    fn a_wide_distribution_is_cut_to_the_quantile_grid_and_keeps_its_percentiles() {
        // 1 us .. 10 ms in 1 us steps: about 4 000 buckets at 3 digits, far more than the cap.
        let mut l = Latency::default();
        for i in 1..=10_000u64 {
            l.record(Duration::from_nanos(i * 1000));
        }
        let c = l.summary().cdf;
        assert!(c.steps().len() <= 137, "{} steps", c.steps().len());
        // A uniform distribution: F(v) ≈ v / 10 ms at every step (the bucket's top is within 0.1% of v).
        for &(v, f) in c.steps() {
            assert!((f - v / 10_000.0).abs() <= 2e-3, "F({v}) = {f}");
        }
        check_cdf(&l);
    }

    #[test]
    fn a_long_tail_keeps_its_nines() {
        // 999 000 fast transactions near 100 us, 1 000 slow ones spread over 10..100 ms.
        let mut l = Latency::default();
        for i in 0..999_000u64 {
            l.record(Duration::from_nanos(100_000 + (i % 1000) * 50));
        }
        for i in 0..1000u64 {
            l.record(Duration::from_micros(10_000 + i * 90));
        }
        check_cdf(&l);
        let c = l.summary().cdf;
        // Steps above 0.999 exist and lie in the slow tail.
        assert!(c.steps().iter().filter(|s| s.1 > 0.999 && s.0 >= 10_000.0).count() >= 9);
    }

    #[test]
    fn no_samples_no_cdf_and_steps_read_back() {
        assert!(Latency::default().summary().cdf.is_empty());
        let c = Cdf::from_steps(&[(1.0, 0.5), (2.0, 1.0)]).unwrap();
        assert_eq!(c.steps(), &[(1.0, 0.5), (2.0, 1.0)]);
        assert!(Cdf::from_steps(&[(2.0, 0.5), (1.0, 1.0)]).is_none());
        assert!(Cdf::from_steps(&[(1.0, 0.5), (2.0, 0.4)]).is_none());
        assert!(Cdf::from_steps(&[(1.0, 1.5)]).is_none());
        assert!(Cdf::from_steps(&vec![(1.0, 1.0); CDF_MAX_STEPS + 1]).is_none());
    }
}
