//! The classic experiments of `scenarios/classic/` (docs/classic.md), shortened: each test runs a few
//! points of the shipped scenario with `--set` overrides and asserts what physics and the protocols dictate,
//! with the analytic figure derived beside the assertion.

use crate::common;

use common::{estats, run_scenario, scenario, stream};
use tcplab_lab::result::{Metrics, Point};
use tcplab_lab::SHIPPED;

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped")).text
}

/// The single point of a shipped scenario with these overrides.
fn point(name: &str, set: &[&str]) -> Point {
    run_scenario(&scenario(shipped(name), set), 1).points.remove(0)
}

/// A connection end's statistics as JSON (RDP ends are not `Estats`).
fn end<'a>(p: &'a Point, side: &str) -> &'a serde_json::Value {
    &p.connections.iter().find(|c| c.side == side).unwrap_or_else(|| panic!("a {side} end")).estats
}

// classic/dsl-rr and classic/dsl-rr-nodelay: crates/lab/tests/classic_dsl.rs.

#[test]
fn txqueuelen_stalls_vanish_once_the_queue_outgrows_the_window_and_goodput_is_the_line_rate() {
    // Goodput on gigabit Ethernet with 1500-byte frames: 1448 bytes of payload per 1538 bytes on the wire
    // (52 of IP and TCP with timestamps, 38 of Ethernet framing), 941.48 Mbit/s.
    let line = 1e9 * 1448.0 / 1538.0;
    let stalls = |q: u32| {
        let p = point("classic/txqueuelen", &[&format!("client.host.txqueuelen={q}"), "test.duration=\"500ms\""]);
        let g = stream(&p).throughput_bps;
        assert!((g / line - 1.0).abs() < 0.002, "txqueuelen {q}: {g} vs {line}");
        let client = p.connections.iter().find(|c| c.side == "client").unwrap();
        estats(client).SendStall
    };
    let (s10, s100, s2000) = (stalls(10), stalls(100), stalls(2000));
    eprintln!("SendStall: txqueuelen 10: {s10}, 100: {s100}, 2000: {s2000}");
    assert!(s10 > s100 && s100 > 0, "{s10} {s100}");
    // cwnd never exceeds the 2 MB receive window, 2,000,000 / 1448 = 1381 segments: a queue of 2000
    // frames cannot fill.
    assert_eq!(s2000, 0);
}

// classic/small-messages: crates/lab/tests/classic_small_messages.rs.

#[test]
fn rdp_eack_retransmits_n_p_over_1_minus_p_with_no_duplicates() {
    // 5,000 messages, each transmission lost with p = 0.04: a message is sent a geometric number of
    // times, so retransmissions R have mean N·p/(1 − p) = 208.3 and sd √(N·p)/(1 − p) = 14.7. With EACKs
    // only the lost ones are resent, and none arrives twice.
    let rdp = |set: &[&str]| match point("classic/rdp-eack", set).metrics {
        Metrics::Own(m) => m.get::<tcplab_lab::transport::rdp::RdpStreamMetrics>().cloned().expect("RDP's metrics"),
        other => panic!("not RDP: {other:?}"),
    };
    let on = rdp(&["test.messages=5000"]);
    let (n, p) = (5000.0_f64, 0.04_f64);
    let (mean, sd) = (n * p / (1.0 - p), (n * p).sqrt() / (1.0 - p));
    eprintln!("EACK on: R {} D {} (expected {mean:.1} ± {sd:.1})", on.retransmissions, on.duplicates_received);
    assert!((on.retransmissions as f64 - mean).abs() < 4.0 * sd, "{}", on.retransmissions);
    assert_eq!(on.duplicates_received, 0);
    assert_eq!(on.messages_delivered, 5000);
    // Without them the segments queued behind a lost one share its timer and are resent with it: several
    // times the retransmissions, most of them duplicates.
    let off = rdp(&["test.messages=5000", "server.rdp.eack=false", "client.rdp.eack_honour=false"]);
    eprintln!("EACK off: R {} D {}", off.retransmissions, off.duplicates_received);
    assert!(off.retransmissions as f64 > 3.0 * on.retransmissions as f64);
    assert!(off.duplicates_received as f64 > 0.6 * off.retransmissions as f64);
}

#[test]
fn rdp_rtt_feedback_inflates_srtt_unless_out_of_order_samples_are_discarded() {
    // The real RTT is 1.2 s (600 ms each way plus 70.4 us of serialization for two 44-octet segments).
    // Measured from its first transmission, a repaired segment's sample includes its timeout (2.4 s, from
    // the SYN-seeded β·SRTT): `every` feeds those into Mills' estimator, which rises fast (RFC 889's gain 1/4,
    // falling by 1/16).
    let run = |sampling: &str| point("classic/rdp-rtt-feedback", &[&format!("client.rdp.rtt_sampling=\"{sampling}\"")]);
    let every = run("every");
    let discard = run("discard_out_of_order");
    let max_srtt = |p: &Point| end(p, "client")["MaxSmoothedRTT"].as_f64().unwrap();
    eprintln!("MaxSmoothedRTT: every {} ms, discard {} ms", max_srtt(&every), max_srtt(&discard));
    assert!(max_srtt(&every) > 3.0 * 1200.0);
    // Each repaired segment is acknowledged after a later one: discarding those samples keeps SRTT within
    // the RTTs actually seen.
    assert!(max_srtt(&discard) < 1210.0);
    assert_eq!(end(&discard, "client")["RttSamplesDiscarded"].as_u64(), Some(3));
    assert_eq!(end(&every, "client")["SynRTT"].as_f64().map(|r| (r - 1200.0704).abs() < 1e-3), Some(true));
}
