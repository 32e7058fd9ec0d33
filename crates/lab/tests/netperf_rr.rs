//! TCP_RR and TCP_CRR against analytic results: the transaction time of one transaction in flight on an
//! idle path, the bottleneck's ceiling under a first burst, Nagle against NODELAY, the handshake's extra
//! round trip, and the ephemeral-port bound of connection churn.

use crate::common;

use common::{rr, run_scenario, scenario};

/// IPv4 20 + TCP 20 + timestamps 12 bytes of header per segment, and 38 bytes of Ethernet framing.
const HEADERS: f64 = 52.0;
const FRAMING: f64 = 38.0;

/// Seconds to serialize a segment of `payload` bytes at `bps`.
fn frame_time(payload: f64, bps: f64) -> f64 {
    (payload + HEADERS + FRAMING) * 8.0 / bps
}

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
duration = "20s"
request = "100B"
response = "1000B"
"#;

#[test]
fn one_transaction_in_flight_takes_a_round_trip_plus_both_serializations() {
    let doc = run_scenario(&scenario(IDLE, &[]), 1);
    let m = rr(&doc.points[0]);
    // The response (1000 B) fits the initial window: no slow-start round. The server's ACK of a request
    // rides on the response, the client's ACK of a response on the next request.
    let t = 0.020 + frame_time(100.0, 10e6) + frame_time(1000.0, 20e6);
    let predicted = 1.0 / t;
    eprintln!("rr idle: {} tps, predicted {predicted}, latency {:?}", m.transactions_per_s, m.latency_us);
    assert!((m.transactions_per_s - predicted).abs() / predicted < 0.01, "{} vs {predicted}", m.transactions_per_s);
    assert!(
        (m.latency_us.mean - t * 1e6).abs() / (t * 1e6) < 0.01,
        "latency {} us vs {} us",
        m.latency_us.mean,
        t * 1e6
    );
    assert_eq!(m.retransmissions, 0);
}

const DSL: &str = r#"
name = "rr-dsl"
[path.up]
rate = "2mbit"
delay = "15ms"
queue = "200pkt"
[path.down]
rate = "8mbit"
delay = "15ms"
queue = "200pkt"
[test]
kind = "tcp_rr"
duration = "10s"
request = "32B"
response = "1000B"
"#;

fn rate(set: &[&str]) -> f64 {
    rr(&run_scenario(&scenario(DSL, set), 1).points[0]).transactions_per_s
}

/// With b extra transactions in flight the rate rises towards the down link's ceiling and never passes
/// it; NODELAY gets there with fewer in flight than Nagle, which holds small requests back while one is
/// unacknowledged and so sends them in clumps.
#[test]
fn first_burst_rises_to_the_down_links_ceiling_sooner_with_nodelay() {
    let bursts = [0u32, 1, 2, 4, 8, 16, 24, 32, 48, 64, 80, 128];
    // Hard bound: every response byte crosses the 8 Mbit/s down link, with at least the headers and
    // framing of full segments (1448 payload bytes per 90 bytes of overhead) when responses coalesce.
    let hard = 8e6 / (8.0 * 1000.0 * (1448.0 + HEADERS + FRAMING) / 1448.0);
    // One response per frame: the ceiling an uncoalesced closed loop reaches.
    let one_frame = 1.0 / frame_time(1000.0, 8e6);
    let mut saturated_at = Vec::new();
    for nodelay in [false, true] {
        let rates: Vec<f64> = bursts
            .iter()
            .map(|b| rate(&[&format!("test.burst={b}"), &format!("client.tcp.nodelay={nodelay}")]))
            .collect();
        eprintln!("nodelay {nodelay}: {rates:?} (ceilings {one_frame:.1} / {hard:.1})");
        for (b, r) in bursts.iter().zip(&rates) {
            assert!(*r <= hard, "burst {b}: {r} transactions/s exceed the down link's ceiling {hard}");
        }
        // One in flight: a round trip and both serializations.
        let t0 = 0.030 + frame_time(32.0, 2e6) + frame_time(1000.0, 8e6);
        assert!((rates[0] - 1.0 / t0).abs() * t0 < 0.01, "burst 0: {} vs {}", rates[0], 1.0 / t0);
        let sat = bursts.iter().zip(&rates).position(|(_, r)| *r >= 0.995 * one_frame).expect("saturates");
        // Rises up to saturation (more in flight, more transactions per round trip) and stays there.
        assert!(rates[sat] > 20.0 * rates[0]);
        assert!(rates[sat..].iter().all(|r| *r >= 0.99 * one_frame), "stays at the ceiling: {rates:?}");
        if nodelay {
            // Each send() call pushes its own segment (tcp_push per call), so at the ceiling every NODELAY
            // request crosses alone and the server's Nagle meets them one by one: 0.3 % under the ceiling
            // at 129 in flight (928.9 against 932.0 transactions/s at 17–65).
            assert!(rates.windows(2).all(|w| w[1] >= w[0] * 0.995), "NODELAY: monotone {rates:?}");
        }
        saturated_at.push(bursts[sat]);
    }
    eprintln!("saturating burst: Nagle {}, NODELAY {}", saturated_at[0], saturated_at[1]);
    assert!(saturated_at[1] < saturated_at[0], "NODELAY saturates at a smaller burst: {saturated_at:?}");
}

/// The server's Nagle against two transactions in flight (first burst 1, NODELAY only at the client): the
/// second response waits for the first one's ACK, which rides on the client's next request. A stack sends
/// what that ACK released before the server application reads the request (BSD `tcp_input` ends in
/// `tcp_output`, Linux runs `tcp_data_snd_check` in softirq), so the held response crosses alone and the
/// new one is held in turn: one response per round trip, the rate of one transaction in flight. Were the
/// application's reply to join the held response first, both would go in one segment pair and the rate
/// would be a third higher (41.6/s). With NODELAY at the server too, both transactions are in flight.
#[test]
fn nagle_at_the_server_lets_one_response_cross_per_round_trip() {
    let t0 = 0.030 + frame_time(32.0, 2e6) + frame_time(1000.0, 8e6);
    let nagle = rate(&["test.burst=1", "client.tcp.nodelay=true"]);
    eprintln!("burst 1, server Nagle: {nagle} tps, one per round trip {}", 1.0 / t0);
    assert!((nagle * t0 - 1.0).abs() < 0.01, "{nagle} vs {}", 1.0 / t0);
    let nodelay = rate(&["test.burst=1", "client.tcp.nodelay=true", "server.tcp.nodelay=true"]);
    eprintln!("burst 1, NODELAY both ends: {nodelay} tps, two per round trip {}", 2.0 / t0);
    assert!((nodelay * t0 / 2.0 - 1.0).abs() < 0.02, "{nodelay} vs {}", 2.0 / t0);
}

#[test]
fn crr_costs_one_handshake_more_per_transaction() {
    let rr_doc = run_scenario(&scenario(IDLE, &[]), 1);
    let crr_doc = run_scenario(&scenario(IDLE, &["test.kind=\"tcp_crr\""]), 1);
    let (r, c) = (rr(&rr_doc.points[0]), rr(&crr_doc.points[0]));
    // The handshake: a SYN up and a SYN-ACK down (IPv4 20 + TCP 20 + MSS, SACK-permitted, timestamps and
    // window scale options 20 = 60 bytes each), and the round trip between them.
    let t_rr = 1.0 / r.transactions_per_s;
    let t_crr = t_rr + 0.020 + (60.0 + FRAMING) * 8.0 / 10e6 + (60.0 + FRAMING) * 8.0 / 20e6;
    eprintln!("rr {} tps, crr {} tps, predicted {}", r.transactions_per_s, c.transactions_per_s, 1.0 / t_crr);
    assert!((c.transactions_per_s * t_crr - 1.0).abs() < 0.01, "{} vs {}", c.transactions_per_s, 1.0 / t_crr);
    assert!(c.connections_opened.unwrap() >= c.transactions);
    assert_eq!(c.port_waits, Some(0));
    assert_eq!(crr_doc.points[0].connections.len(), 2, "one pair per loop in the document");
}

#[test]
fn crr_with_few_ports_and_a_long_time_wait_is_bounded_by_ports_over_time_wait() {
    let set = ["test.kind=\"tcp_crr\"", "client.host.ephemeral_ports=\"40000-40003\"", "client.tcp.time_wait=\"1s\""];
    let doc = run_scenario(&scenario(IDLE, &set), 1);
    let c = rr(&doc.points[0]);
    let t_crr = 1.0 / rr(&run_scenario(&scenario(IDLE, &["test.kind=\"tcp_crr\""]), 1).points[0]).transactions_per_s;
    // A port is busy for the transaction, then until the server's FIN comes back (a round trip after the
    // client's close), then TIME-WAIT; the waiting client retries every millisecond.
    let cycle = t_crr + 0.020 + 1.0;
    let bound = 4.0 / 1.0;
    eprintln!(
        "crr 4 ports / 1 s: {} tps ({} port waits), ports/time_wait {bound}, ports/cycle {}",
        c.transactions_per_s,
        c.port_waits.unwrap(),
        4.0 / cycle
    );
    assert!(c.transactions_per_s <= bound * (1.0 + 1.0 / 20.0), "{} vs {bound}", c.transactions_per_s);
    assert!((c.transactions_per_s * cycle / 4.0 - 1.0).abs() < 0.03, "{} vs {}", c.transactions_per_s, 4.0 / cycle);
    assert!(c.port_waits.unwrap() > 0);
}

#[test]
fn same_seed_same_document_for_the_shipped_request_response_scenarios() {
    for name in ["rr-dsl", "crr-ports"] {
        let text = tcplab_lab::SHIPPED.iter().find(|s| s.name == name).expect("shipped").text;
        let json = || serde_json::to_string(&run_scenario(&scenario(text, &[]), 7)).expect("serializes");
        assert_eq!(json(), json(), "{name}");
    }
}
