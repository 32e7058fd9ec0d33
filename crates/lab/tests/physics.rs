//! Whole runs checked against analytic results: the link's capacity, the window/RTT bound, and the
//! Mathis et al. loss–throughput relation. Each test is an experiment: a scenario, a prediction, a check.

use crate::common;

use common::{run_scenario, scenario};

/// IPv4 20 + TCP 20 + timestamps 12 bytes of header, and 38 bytes of Ethernet framing, per data segment.
const OVERHEAD: f64 = 52.0 + 38.0;
const PAYLOAD: f64 = 1448.0;

const SATURATED_10M: &str = r#"
name = "saturated-10m"
[path.up]
rate = "10mbit"
delay = "20ms"
queue = "100pkt"
[test]
kind = "tcp_stream"
duration = "60s"
message = "16KiB"
send_buffer = "512KiB"
recv_buffer = "128KiB"
"#;

#[test]
fn saturated_link_goodput_is_within_one_percent_of_the_analytic_bound() {
    let doc = run_scenario(&scenario(SATURATED_10M, &[]), 1);
    let got = common::stream(&doc.points[0]).throughput_bps;
    let bound = 10e6 * PAYLOAD / (PAYLOAD + OVERHEAD);
    assert!(got <= bound * 1.000_01, "{got} exceeds the link's capacity {bound}");
    assert!((bound - got) / bound < 0.01, "goodput {got} vs bound {bound}");
    // 128 KiB < BDP (50 KB) + queue (150 KB): no loss, no retransmission.
    assert_eq!(common::stream(&doc.points[0]).retransmissions, 0);
    assert_eq!(doc.points[0].links.up.drops_queue_full, 0);
}

#[test]
fn maerts_moves_data_the_other_way_at_the_down_rate() {
    let doc = run_scenario(
        &scenario(SATURATED_10M, &["test.kind=\"tcp_maerts\"", "path.down.rate=\"5mbit\"", "path.down.delay=\"20ms\""]),
        1,
    );
    let got = common::stream(&doc.points[0]).throughput_bps;
    let bound = 5e6 * PAYLOAD / (PAYLOAD + OVERHEAD);
    assert!((bound - got) / bound < 0.01 && got <= bound * 1.000_01, "goodput {got} vs bound {bound}");
    let server = &common::estats(&doc.points[0].connections[1]);
    assert!(server.DataSegsOut > 20_000 && common::estats(&doc.points[0].connections[0]).DataSegsOut == 0);
}

#[test]
fn window_limited_goodput_is_window_over_rtt() {
    let text = r#"
name = "window-limited"
[path.up]
rate = "100mbit"
delay = "50ms"
[test]
kind = "tcp_stream"
duration = "120s"
message = "16KiB"
send_buffer = "1MiB"
recv_buffer = "32KiB"
"#;
    let doc = run_scenario(&scenario(text, &[]), 1);
    let got = common::stream(&doc.points[0]).throughput_bps;
    // The sender fills the 32 KiB window with full segments only (sender SWS avoidance, RFC 1122
    // §4.2.3.4): 22 × 1448 bytes. RTT = 2 × 50 ms + a data frame's and an ACK frame's serialization.
    let window = (32768.0 / PAYLOAD).floor() * PAYLOAD;
    let rtt = 0.100 + (PAYLOAD + OVERHEAD) * 8.0 / 100e6 + (52.0 + 38.0) * 8.0 / 100e6;
    let predicted = window * 8.0 / rtt;
    assert!((got - predicted).abs() / predicted < 0.02, "goodput {got} vs window/RTT {predicted}");
}

/// Mathis, Semke, Mahdavi, Ott (1997): BW = (MSS/RTT) · C/√p with C = √(3/(2b)), b = 2 with delayed ACKs
/// (RFC 5681 (3) per-ACK growth in congestion avoidance, the `rfc` personality). Random loss lands a
/// little above the periodic-loss constant (the paper's random-loss fit is 0.93 against 0.87, and with
/// several losses per window one congestion signal covers them), so we see ratios near 1.2.
fn mathis(p: f64, rtt_s: f64) -> f64 {
    let c = (3.0f64 / 4.0).sqrt();
    PAYLOAD * 8.0 / rtt_s * c / p.sqrt()
}

fn mean_goodput_with_loss(p: f64, seeds: u64) -> (f64, f64) {
    let text = format!(
        r#"
name = "lossy"
[path.up]
rate = "1gbit"
delay = "50ms"
queue = "10000pkt"
loss = {{ model = "bernoulli", p = {p} }}
[path.down]
rate = "1gbit"
delay = "50ms"
[test]
kind = "tcp_stream"
duration = "300s"
message = "64KiB"
send_buffer = "64MiB"
recv_buffer = "64MiB"
"#
    );
    let s = scenario(&text, &[]);
    let mut sum = 0.0;
    let mut rtt = 0.0;
    for seed in 1..=seeds {
        let doc = run_scenario(&s, seed);
        sum += common::stream(&doc.points[0]).throughput_bps;
        let e = &common::estats(&doc.points[0].connections[0]);
        rtt += e.SumRTT / e.CountRTT as f64 / 1e3; // the mean RTT over the run, seconds
    }
    (sum / seeds as f64, rtt / seeds as f64)
}

#[test]
fn random_loss_goodput_follows_mathis() {
    for (p, seeds) in [(0.01, 6), (0.001, 6)] {
        let (got, rtt) = mean_goodput_with_loss(p, seeds);
        let predicted = mathis(p, rtt);
        let ratio = got / predicted;
        assert!(
            (0.7..=1.3).contains(&ratio),
            "p = {p}: goodput {got:.0} vs Mathis {predicted:.0} (ratio {ratio:.2}, RTT {rtt})"
        );
    }
}

#[test]
fn same_seed_gives_byte_identical_json_and_seeds_differ_on_a_lossy_path() {
    let s = scenario(SATURATED_10M, &["path.up.loss={model=\"bernoulli\",p=0.01}", "test.duration=\"5s\""]);
    let a = serde_json::to_string(&run_scenario(&s, 7)).unwrap();
    let b = serde_json::to_string(&run_scenario(&s, 7)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run_scenario(&s, 8)).unwrap();
    assert_ne!(a, c);
}
