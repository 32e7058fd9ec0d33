//! The latency distribution of request/response tests (`latency_us.cdf`): a CDF whose steps agree with
//! the percentiles beside it, a single step at the transaction time on an idle deterministic path, and a
//! spread with a tail under loss; the JSON form reads back to the same steps.

use crate::common;

use common::{rr, run_scenario, scenario};
use tcplab_lab::result::{LatencyMetrics, Metrics};

const IDLE: &str = r#"
name = "rr-idle"
[path.up]
rate = "10mbit"
delay = "10ms"
queue = "100pkt"
[path.down]
rate = "20mbit"
delay = "10ms"
queue = "100pkt"
[test]
kind = "tcp_rr"
duration = "5s"
request = "100B"
response = "1000B"
"#;

/// The smallest step value whose fraction reaches `q`: the q-quantile the CDF gives.
fn quantile(l: &LatencyMetrics, q: f64) -> f64 {
    l.cdf.iter().find(|s| s.1 >= q).map(|s| s.0).expect("the CDF reaches 1")
}

/// What every latency CDF must satisfy: values and fractions increasing, the last step (max, 1), and the
/// percentiles of `latency_us` are the CDF's quantiles.
fn check(l: &LatencyMetrics) {
    let st = &l.cdf;
    assert!(!st.is_empty() && st.len() <= tcplab_workload::CDF_MAX_STEPS);
    for w in st.windows(2) {
        assert!(w[0].0 < w[1].0 && w[0].1 <= w[1].1, "not monotone: {w:?}");
    }
    assert_eq!(*st.last().unwrap(), (l.max, 1.0));
    assert!(st[0].0 >= l.min && st[0].1 > 0.0);
    for (p, q) in [(l.p50, 0.5), (l.p90, 0.9), (l.p99, 0.99), (l.p99_9, 0.999)] {
        assert_eq!(quantile(l, q), p, "the {q} quantile of the CDF is latency_us' percentile");
    }
}

#[test]
fn an_idle_deterministic_path_gives_one_step_at_the_transaction_time() {
    let doc = run_scenario(&scenario(IDLE, &[]), 1);
    let m = rr(&doc.points[0]);
    // One transaction in flight: the request's serialization up, the response's down, and the round trip.
    // Frames carry 52 bytes of IPv4/TCP/timestamp headers and 38 of Ethernet framing:
    //   (100 + 90) · 8 / 10 Mbit/s = 152 us, (1000 + 90) · 8 / 20 Mbit/s = 436 us, + 20 ms = 20 588 us.
    // Nothing else varies (no loss, no queue, ACKs ride on the data), so every transaction takes exactly
    // that: min = max, and the CDF is a single step to 1 there.
    let t_us = 20_000.0 + 152.0 + 436.0;
    let l = &m.latency_us;
    assert!(m.transactions > 200, "{} transactions", m.transactions);
    assert_eq!((l.min, l.max), (t_us, t_us), "every transaction takes the analytic time");
    assert_eq!(l.cdf, [(t_us, 1.0)]);
    check(l);
}

#[test]
fn a_lossy_path_spreads_the_distribution_and_the_percentiles_are_its_quantiles() {
    // 2% loss both ways: most transactions take the round trip, those that lose a segment wait for a
    // retransmission (a fast retransmit needs 3 duplicates, which one transaction in flight never makes,
    // so they wait for the RTO: at least 200 ms more).
    let s = scenario(
        IDLE,
        &[
            "path.up.loss={model=\"bernoulli\",p=0.02}",
            "path.down.loss={model=\"bernoulli\",p=0.02}",
            "test.duration=\"20s\"",
        ],
    );
    let doc = run_scenario(&s, 3);
    let m = rr(&doc.points[0]);
    let l = &m.latency_us;
    check(l);
    assert!(l.cdf.len() > 2, "{:?}", l.cdf);
    // The body is the idle transaction time; the tail (a few % of transactions) is an RTO later.
    assert_eq!(l.p50, l.cdf[0].0);
    assert!((l.p50 - 20_588.0).abs() / 20_588.0 < 1e-3, "p50 {}", l.p50);
    let slow = l.cdf.iter().find(|s| s.0 > 200_000.0).map(|s| s.1).unwrap();
    let below = 1.0 - l.cdf.iter().rev().find(|s| s.0 < 200_000.0).map(|s| s.1).unwrap();
    assert!(below > 0.01 && below < 0.15, "{below} of the transactions waited for an RTO (slow step at {slow})");
}

#[test]
fn the_cdf_survives_the_json_form() {
    let s = scenario(IDLE, &["path.up.loss={model=\"bernoulli\",p=0.02}"]);
    let doc = run_scenario(&s, 3);
    let v = serde_json::to_value(&doc.points[0].metrics).unwrap();
    let cdf = v["latency_us"]["cdf"].as_array().unwrap();
    assert!(cdf.iter().all(|s| s.as_array().is_some_and(|p| p.len() == 2)));
    let back: Metrics = serde_json::from_value(v).unwrap();
    let Metrics::Rr(back) = back else { panic!("an RR result reads back as RR") };
    assert_eq!(back.latency_us.cdf, rr(&doc.points[0]).latency_us.cdf);
    // A CDF whose values decrease is refused, with the accepted form.
    let mut bad = serde_json::to_value(&doc.points[0].metrics).unwrap();
    bad["latency_us"]["cdf"] = serde_json::json!([[2.0, 0.5], [1.0, 1.0]]);
    let e = serde_json::from_value::<tcplab_lab::result::RrMetrics>(bad).unwrap_err().to_string();
    assert!(e.contains("values increasing"), "{e}");
}
