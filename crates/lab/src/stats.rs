//! Statistics for repetitions: Student's t quantiles (computed, not tabulated) and the confidence
//! interval of a mean, as netperf's `-I` uses it.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error below 1e-13 on the range used here).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz), for x < (a + 1) / (a + b + 2).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=1000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The mean (`stat = "mean"`) or the population standard deviation (any other `stat`) of `values`; none
/// for no values. What a `client.VAR.mean` / `.stddev` column or published figure reads from a series.
pub fn series_stat(values: &[f64], stat: &str) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    match stat {
        "mean" => Some(mean),
        _ => Some((values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()),
    }
}

/// The regularized incomplete beta function I_x(a, b).
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The two-sided Student t quantile for a confidence `level` (e.g. 0.95): the t with
/// P(−t ≤ T ≤ t) = level, i.e. the (1 + level) / 2 quantile. Found by bisection on the CDF, to 1e-12.
pub fn t_quantile(level: f64, df: u32) -> f64 {
    assert!(level > 0.0 && level < 1.0 && df >= 1, "0 < level < 1 and df >= 1");
    let p = (1.0 + level) / 2.0;
    let df = df as f64;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    while hi - lo > 1e-12 * hi.max(1.0) {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The mean of `values` and their sample standard deviation (n − 1 in the denominator; at least 2 values).
pub fn mean_and_sample_stddev(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    (mean, (ss / (n - 1) as f64).sqrt())
}

/// The confidence interval of the mean of `values` (at least 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator).
    pub stddev: f64,
    /// Half the interval's width: t · s / √n.
    pub half_width: f64,
}

impl Interval {
    /// The interval at `level` of the mean of `values`.
    pub fn of(values: &[f64], level: f64) -> Interval {
        let n = values.len();
        assert!(n >= 2, "a confidence interval needs two values or more");
        let (mean, stddev) = mean_and_sample_stddev(values);
        let half_width = t_quantile(level, n as u32 - 1) * stddev / (n as f64).sqrt();
        Interval { mean, stddev, half_width }
    }

    /// The whole width of the interval as a fraction of the mean (0 when there is no spread).
    pub fn relative_width(&self) -> f64 {
        if self.half_width == 0.0 {
            0.0
        } else if self.mean == 0.0 {
            f64::INFINITY
        } else {
            2.0 * self.half_width / self.mean.abs()
        }
    }

    /// netperf's rule: the interval is narrower than `width` of the mean (an interval of no spread is).
    pub fn met(&self, width: f64) -> bool {
        self.half_width == 0.0 || self.relative_width() < width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Published two-sided critical values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2), 3 decimals.
    #[test]
    fn t_quantiles_match_published_tables() {
        for (level, df, t) in [
            (0.95, 1, 12.706),
            (0.99, 1, 63.657),
            (0.95, 2, 4.303),
            (0.95, 4, 2.776),
            (0.99, 4, 4.604),
            (0.95, 9, 2.262),
            (0.99, 9, 3.250),
            (0.95, 30, 2.042),
            (0.99, 30, 2.750),
            (0.95, 100, 1.984),
            (0.90, 10, 1.812),
        ] {
            let q = t_quantile(level, df);
            assert!(close(q, t, 0.0005), "t({level}, df={df}) = {q}, published {t}");
        }
        // Large df tends to the normal quantile.
        assert!(close(t_quantile(0.95, 100_000), 1.959_964, 1e-4));
    }

    #[test]
    fn interval_of_known_values() {
        // mean 10, s = sqrt(2.5), n = 5: half width = 2.776445 * 1.581139 / 2.236068 = 1.963243
        let i = Interval::of(&[8.0, 9.0, 10.0, 11.0, 12.0], 0.95);
        assert!(close(i.mean, 10.0, 1e-12));
        assert!(close(i.half_width, 1.963_243, 1e-5), "{i:?}");
        assert!(close(i.relative_width(), 0.392_649, 1e-5));
        assert!(i.met(0.40) && !i.met(0.39));
        let flat = Interval::of(&[5.0, 5.0], 0.99);
        assert_eq!(flat.half_width, 0.0);
        assert!(flat.met(0.01));
    }
}
