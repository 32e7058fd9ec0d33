//! The classic experiments of `scenarios/classic/` (docs/classic.md), shortened: each test runs a few
//! points of the shipped scenario with `--set` overrides and asserts what physics and the protocols dictate,
//! with the analytic figure derived beside the assertion.

mod common;

use common::{estats, rr, run_scenario, scenario, stream};
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

/// The ceiling of a TCP_RR whose responses fill the down link: every response is 8192 bytes of payload in
/// full 1448-byte segments (MSS 1460 less 12 of timestamps), each carried in 1448 + 52 bytes of IP and 38 of
/// Ethernet framing, so the link carries 8192 × 1538 / 1448 = 8701.3 wire bytes per transaction (8732 if
/// every response were its own six segments; back-to-back responses share segments, so the ceiling uses
/// the smaller figure). Transactions per second = rate / (8 × 8701.3).
fn rr_ceiling(down_bps: f64) -> f64 {
    down_bps / (8.0 * 8192.0 * 1538.0 / 1448.0)
}

#[test]
fn dsl_rr_never_exceeds_the_down_links_ceiling_and_saturates_with_one_extra_transaction() {
    // 384 kbit/s down: 5.517 transactions/s. A 60 s window makes the start (the first response is
    // complete about 0.3 s in, and the window opens from IW 4) a small share.
    let ceiling = rr_ceiling(384_000.0);
    let tps = |burst: u32| {
        let p = point("classic/dsl-rr", &[&format!("test.burst={burst}"), "test.duration=\"60s\""]);
        rr(&p).transactions_per_s
    };
    let (b0, b1, b4) = (tps(0), tps(1), tps(4));
    eprintln!("dsl-rr: ceiling {ceiling:.3}/s, burst 0: {b0}, 1: {b1}, 4: {b4}");
    for t in [b0, b1, b4] {
        assert!(t <= ceiling, "{t} above the ceiling {ceiling}");
    }
    // One transaction at a time cannot fill the line: each waits a round trip (100 ms) plus the request's
    // serialization (218 B at 128 kbit/s, 13.6 ms) besides the response's 181.3 ms, so at most
    // 1 / 0.295 s = 3.39/s, 61 % of the ceiling.
    assert!(b0 < 0.62 * ceiling, "{b0}");
    // Two in flight keep the down link busy: a response is 181 ms on the wire, more than the 114 ms the
    // next request needs to reach the server, so the rate is the ceiling.
    assert!(b1 > 0.97 * ceiling && b4 > 0.97 * ceiling, "{b1} {b4} against {ceiling}");
}

#[test]
fn dsl_rr_nodelay_saturates_at_a_smaller_burst_than_nagle() {
    // 1500 kbit/s down: 21.55 transactions/s. With Nagle the client's back-to-back requests leave one
    // segment per round trip (a short segment waits while another is unacknowledged), so more must be in
    // flight before the responses fill the line. Saturated: at least 90 % of the ceiling in 10 s.
    let ceiling = rr_ceiling(1_500_000.0);
    let first_saturated = |nodelay: bool| {
        (0..=8u32)
            .find(|b| {
                let set = [&format!("test.burst={b}"), &format!("client.tcp.nodelay={nodelay}")[..]];
                let t = rr(&point("classic/dsl-rr-nodelay", &set)).transactions_per_s;
                assert!(t <= ceiling, "{t} above {ceiling}");
                t >= 0.9 * ceiling
            })
            .expect("saturates by burst 8")
    };
    let (nagle, nodelay) = (first_saturated(false), first_saturated(true));
    eprintln!("dsl-rr-nodelay: saturated from burst {nodelay} with NODELAY, {nagle} with Nagle");
    assert!(nodelay < nagle, "NODELAY {nodelay}, Nagle {nagle}");
}

/// The receiver's CPU per full data segment in classic/gige-ack-avoidance, microseconds: 15 to take the
/// segment in, 4 per KB to copy its 1448 bytes to the application (5.656), 5 for the receive call that
/// reads it, and one 10 us ACK per K segments.
fn receiver_us_per_segment(k: f64) -> f64 {
    15.0 + 4.0 * 1448.0 / 1024.0 + 5.0 + 10.0 / k
}

#[test]
fn gige_ack_avoidance_acks_one_segment_in_k_and_the_cpu_bound_receiver_speeds_up() {
    let mut last = 0.0;
    for k in [2u32, 8, 32] {
        let p =
            point("classic/gige-ack-avoidance", &[&format!("client.tcp.deferred_ack_max={k}"), "test.duration=\"1s\""]);
        let m = stream(&p);
        let (client, server) = (estats(&p.connections[0]), estats(&p.connections[1]));
        let (client, server) = if p.connections[0].side == "client" { (client, server) } else { (server, client) };
        // ACKs per data segment: the receiver's segments without data over the sender's data segments.
        let acks = (client.SegsOut - client.DataSegsOut) as f64 / server.DataSegsOut as f64;
        // The receiver's one core is the bottleneck: it moves 1448 bytes per receiver_us_per_segment(K).
        let expected = 1448.0 * 8.0 / receiver_us_per_segment(k as f64) * 1e6;
        let cpu = m.cpu.as_ref().expect("both hosts have a CPU model");
        eprintln!(
            "K = {k}: {acks:.4} ACKs per segment, {:.1} Mbit/s (model {:.1}), {cpu:?}",
            m.throughput_bps / 1e6,
            expected / 1e6
        );
        // 1/K, within the ramp from 2 (31 ACKs for the first 527 segments at K = 32), the handshake and the
        // close.
        assert!((acks * k as f64 - 1.0).abs() < 0.08, "K = {k}: {acks}");
        assert!((m.throughput_bps / expected - 1.0).abs() < 0.02, "K = {k}: {} vs {expected}", m.throughput_bps);
        assert!(cpu.cpu_util_percent.local.unwrap() > 99.0, "the receiver is CPU-bound");
        assert!(m.throughput_bps > last, "throughput rises with K");
        last = m.throughput_bps;
    }
}

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
        Metrics::Rdp(m) => m,
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
    // the SYN-seeded β·SRTT): `every` feeds those into Mills' estimator, which rises fast (gain 1/2).
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
