//! RDP in the lab: the December 1986 experiment (50,000 messages, 4 % loss on data, max 4 outstanding,
//! EACKs on and off) and RTT feedback, as scenarios. Expected values are Part C of the RDP engineering note
//! (docs/rdp.md summarizes them): N = 50,000, p = 0.04, q = 0.96, W = 4.

use crate::common;

use common::scenario;
use tcplab_lab::result::Metrics;
use tcplab_lab::transport::rdp::RdpStreamMetrics;
use tcplab_lab::{Origin, ResultDoc, SHIPPED};
use tcplab_rdp::RdpStats;

fn loopback() -> &'static str {
    SHIPPED.iter().find(|s| s.name == "rdp-loopback").expect("rdp-loopback is shipped").text
}

const EACK_OFF: [&str; 4] =
    ["client.rdp.eack=false", "server.rdp.eack=false", "client.rdp.eack_honour=false", "server.rdp.eack_honour=false"];

fn run(set: &[&str], seed: u64) -> ResultDoc {
    tcplab_lab::run_scenario(&scenario(loopback(), set), seed).expect("the connection comes up")
}

fn metrics(d: &ResultDoc) -> &RdpStreamMetrics {
    match &d.points[0].metrics {
        Metrics::Own(m) if m.get::<RdpStreamMetrics>().is_some() => m.get().unwrap(),
        other => panic!("not an RDP transfer: {other:?}"),
    }
}

fn ends(d: &ResultDoc) -> (RdpStats, RdpStats) {
    let c = &d.points[0].connections;
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].side, c[1].side), ("client", "server"));
    assert!(c.iter().all(|e| e.protocol == "rdp"));
    let s = |i: usize| serde_json::from_value::<RdpStats>((*c[i].estats).clone()).expect("RDP estats");
    (s(0), s(1))
}

/// Invariants 1–3 of C.6: every message delivered once, data transmissions = N + R, and R = D + drops_data,
/// for every seed, with and without EACKs, with loss on data only and on both directions (E2: ACKs lost too).
#[test]
fn retransmissions_equal_duplicates_plus_data_drops_for_every_seed() {
    let both = "path.down.loss={model=\"bernoulli\",p=0.04}";
    for (arm, set) in [
        ("E1a", vec!["test.messages=10000"]),
        ("E1b", [&EACK_OFF[..], &["test.messages=10000"]].concat()),
        ("E2a", vec!["test.messages=10000", both]),
        ("E2b", [&EACK_OFF[..], &["test.messages=10000", both]].concat()),
    ] {
        for seed in 1..=4 {
            let d = run(&set, seed);
            let m = metrics(&d);
            let (client, server) = ends(&d);
            assert_eq!(m.messages_delivered, 10_000, "{arm} seed {seed}");
            assert_eq!(server.MessagesDelivered, 10_000, "{arm} seed {seed}");
            assert_eq!(client.DataSegsOut, 10_000 + m.retransmissions, "{arm} seed {seed}");
            assert!(m.retransmissions > 0);
            assert_eq!(
                m.retransmissions,
                m.duplicates_received + m.data_drops,
                "{arm} seed {seed}: R = D + drops_data"
            );
            assert_eq!(m.retransmissions, client.SegsRetrans, "{arm} seed {seed}");
            assert_eq!(m.duplicates_received, server.DupSegsIn, "{arm} seed {seed}");
        }
    }
}

/// E1a: with EACKs and loss on data only, no segment that arrived is ever resent: D = 0 exactly, R = data
/// drops, and R ≈ N·p/q (each message takes a geometric number of transmissions), Var[R] = N·p/q².
#[test]
fn with_eacks_and_data_loss_duplicates_are_zero_and_retransmissions_are_np_over_q() {
    let seeds = 1..=8u64;
    let mut total = 0u64;
    for seed in seeds.clone() {
        let d = run(&[], seed);
        let m = metrics(&d);
        assert_eq!(m.messages_delivered, 50_000);
        assert_eq!(m.duplicates_received, 0, "seed {seed}");
        assert_eq!(m.retransmissions, m.data_drops, "seed {seed}");
        // C.6 single-run bound (≈ 4 sd).
        assert!((1_893..=2_273).contains(&m.retransmissions), "seed {seed}: R {}", m.retransmissions);
        // The ACK direction loses nothing and the data loss counts only data packets.
        assert_eq!(d.points[0].links.down.drops_random_loss, 0);
        assert_eq!(d.points[0].links.up.drops_random_loss, m.data_drops);
        total += m.retransmissions;
    }
    let n = seeds.count() as f64;
    let mean = total as f64 / n;
    let (want, sd) = (50_000.0 * 0.04 / 0.96, (50_000.0 * 0.04f64).sqrt() / 0.96);
    // The mean of 8 runs: sd/√8 = 16.5; 4 of them.
    assert!((mean - want).abs() < 4.0 * sd / n.sqrt(), "mean R {mean:.1}, N·p/q = {want:.1}");
}

/// E1b: without EACKs each timeout resends the whole frozen window, three of four copies spurious. C.6: mean R
/// = 7,472.4 (sd 159 per run), mean D = 5,173.5 (sd 112), D/R in [0.681, 0.703] for any run, and R_off/R_on in
/// [3.15, 4.05]. Seed-averaged band for 8 seeds: 4·sd/√8 plus the note's 0.3 % model allowance.
#[test]
fn without_eacks_retransmissions_and_duplicates_fall_in_the_analysed_bands() {
    let seeds = 1..=8u64;
    let (mut r, mut dup) = (0u64, 0u64);
    for seed in seeds.clone() {
        let d = run(&EACK_OFF, seed);
        let m = metrics(&d);
        assert_eq!(m.messages_delivered, 50_000);
        let ratio = m.duplicates_received as f64 / m.retransmissions as f64;
        assert!((0.681..=0.703).contains(&ratio), "seed {seed}: D/R {ratio:.4}");
        assert!((6_840..=8_110).contains(&m.retransmissions), "seed {seed}: R {}", m.retransmissions);
        assert!((4_725..=5_625).contains(&m.duplicates_received), "seed {seed}: D {}", m.duplicates_received);
        // C.6 invariant 5: R ≤ 4T and D ≤ R − T.
        assert!(m.retransmissions <= 4 * m.timeouts);
        assert!(m.duplicates_received <= m.retransmissions - m.timeouts);
        let on = metrics(&run(&[], seed + 100)).retransmissions as f64;
        let pair = m.retransmissions as f64 / on;
        assert!((3.15..=4.05).contains(&pair), "seed {seed}: R_off/R_on {pair:.3}");
        r += m.retransmissions;
        dup += m.duplicates_received;
    }
    let n = seeds.count() as f64;
    let (mr, md) = (r as f64 / n, dup as f64 / n);
    assert!((mr - 7_472.4).abs() < 4.0 * 159.0 / n.sqrt() + 0.003 * 7_472.4, "mean R {mr:.1}");
    assert!((md - 5_173.5).abs() < 4.0 * 112.0 / n.sqrt() + 0.003 * 5_173.5, "mean D {md:.1}");
}

#[test]
fn the_shipped_scenario_is_deterministic_and_seeds_differ() {
    let a = serde_json::to_string(&run(&["test.messages=5000"], 3)).unwrap();
    let b = serde_json::to_string(&run(&["test.messages=5000"], 3)).unwrap();
    assert_eq!(a, b);
    let c = serde_json::to_string(&run(&["test.messages=5000"], 4)).unwrap();
    assert_ne!(a, c);
}

/// RTT feedback on a 1.2 s RTT path with Mills smoothing (fast to rise) and a scripted burst: data packets
/// 20, 22, 24, 26 and 28 are lost, each with later segments of its window arriving (and EACKed). Measured
/// from the first transmission, every repaired segment's "RTT" includes its timeout, so `every` drives
/// SmoothedRTT far above every real RTT. `discard_out_of_order` drops those samples (each repaired segment is
/// acknowledged after a higher-numbered one) and Karn drops them as retransmitted: SmoothedRTT stays within
/// the RTTs observed.
#[test]
fn rtt_feedback_every_sample_inflates_srtt_discarding_out_of_order_or_karn_does_not() {
    let base = [
        "path.up.delay=\"600ms\"",
        "path.down.delay=\"600ms\"",
        "path.up.loss={model=\"scripted\",drop=[20,22,24,26,28],packets=\"data\"}",
        "test.messages=200",
        "client.rdp.rto_model=\"mills\"",
    ];
    let sender = |sampling: &str| {
        let set = format!("client.rdp.rtt_sampling=\"{sampling}\"");
        let d = run(&[&base[..], &[set.as_str()]].concat(), 1);
        assert_eq!(metrics(&d).retransmissions, 5, "{sampling}: the five scripted drops, each resent once");
        ends(&d).0
    };
    let karn = sender("karn");
    // The real round trips: 1.2 s of propagation plus serialization, nothing queued.
    assert!(karn.MinRTT >= 1_200.0 && karn.MaxRTT < 1_210.0, "karn saw {}..{} ms", karn.MinRTT, karn.MaxRTT);
    for (name, s) in [("karn", &karn), ("discard_out_of_order", &sender("discard_out_of_order"))] {
        assert!(
            s.MaxSmoothedRTT <= s.MaxRTT && s.MaxSmoothedRTT >= s.MinRTT,
            "{name}: MaxSmoothedRTT {} outside the observed {}..{}",
            s.MaxSmoothedRTT,
            s.MinRTT,
            s.MaxRTT
        );
        assert!(s.MaxRTT < 1_210.0, "{name}: no inflated sample was taken");
        assert!(s.RttSamplesDiscarded >= 3, "{name}: the repaired segments gave no sample");
    }
    let every = sender("every");
    assert_eq!(every.RttSamplesDiscarded, 0);
    assert!(
        every.MaxSmoothedRTT > 3.0 * karn.MaxRTT,
        "every: MaxSmoothedRTT {} not far above the real RTT {}",
        every.MaxSmoothedRTT,
        karn.MaxRTT
    );
}

/// `discard_out_of_order` helps only when something later in the window got through: when a whole window
/// (20–23) is lost, the repairs are acknowledged in order and their inflated samples are taken.
#[test]
fn discarding_out_of_order_samples_does_not_help_when_the_whole_window_is_lost() {
    let d = run(
        &[
            "path.up.delay=\"600ms\"",
            "path.down.delay=\"600ms\"",
            "path.up.loss={model=\"scripted\",drop=[20,21,22,23],packets=\"data\"}",
            "test.messages=200",
            "client.rdp.rto_model=\"mills\"",
            "client.rdp.rtt_sampling=\"discard_out_of_order\"",
        ],
        1,
    );
    let s = ends(&d).0;
    assert_eq!(s.RttSamplesDiscarded, 0);
    assert!(s.MaxSmoothedRTT > 2.0 * s.MinRTT, "MaxSmoothedRTT {} MinRTT {}", s.MaxSmoothedRTT, s.MinRTT);
}

#[test]
fn rdp_knobs_and_test_keys_are_validated_at_their_key() {
    let bad = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        tcplab_lab::load(&tcplab_lab::Source { name: "rdp-loopback.toml", text: loopback() }, &set).unwrap_err()
    };
    let e = bad(&["client.rdp.max_outstanding=65"]);
    assert_eq!(e.key, "client.rdp.max_outstanding");
    assert!(e.message.contains("1 to 64"), "{e}");
    let e = bad(&["server.rdp.window_policy=\"wide\""]);
    assert_eq!(e.key, "server.rdp.window_policy");
    assert!(e.message.contains("span") && e.message.contains("count"), "{e}");
    let e = bad(&["client.rdp.bogus=1"]);
    assert_eq!(e.key, "client.rdp.bogus");
    let e = bad(&["test.message=\"2000B\""]);
    assert_eq!(e.key, "test.message");
    assert!(e.message.contains("1462B"), "{e}");
    let e = bad(&["path.up.loss={model=\"gilbert_elliott\",p=0.1,r=2.0}"]);
    assert_eq!(e.key, "path.up.loss.r");
    let e = bad(&["path.up.loss={model=\"bursty\",p=0.1}"]);
    assert_eq!(e.key, "path.up.loss.model");
    assert!(e.message.contains("gilbert_elliott") && e.message.contains("scripted"), "{e}");
    let e = bad(&["path.up.loss={model=\"bernoulli\",p=0.1,packets=\"acks\"}"]);
    assert!(e.message.contains("data"), "{e}");
    // A file error names the file and line.
    let text = loopback().replace(
        "max_outstanding = 4\neack = true\n\n[server.rdp]",
        "max_outstanding = 0\neack = true\n\n[server.rdp]",
    );
    let e = tcplab_lab::load(&tcplab_lab::Source { name: "x.toml", text: &text }, &[]).unwrap_err();
    assert_eq!(e.key, "client.rdp.max_outstanding");
    let line = text.lines().position(|l| l == "max_outstanding = 0").unwrap() + 1;
    assert_eq!(e.origin, Origin::File { file: "x.toml".into(), line: Some(line) });
    // RDP keys with a TCP test, TCP keys with an RDP test.
    let e = bad(&["test.kind=\"tcp_stream\"", "test.duration=\"1s\""]);
    assert!(e.key == "client.rdp" || e.key == "test.messages", "{e}");
    let e = bad(&["test.send_buffer=\"64KiB\""]);
    assert_eq!(e.key, "test.send_buffer");
}

// ---- rdp_rr ---------------------------------------------------------------------------------------------

/// A 10 Mbit/s, 10 ms path without framing, idle but for one RDP request/response connection.
const RR: &str = "name = \"rdp-rr\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"10ms\"\nframing = \"none\"\n\
    [test]\nkind = \"rdp_rr\"\nduration = \"10s\"\nrequest = \"100B\"\nresponse = \"1000B\"\n";

/// Serialization of `ip_bytes` at 10 Mbit/s, seconds (0.8 us per octet).
fn ser(ip_bytes: u64) -> f64 {
    ip_bytes as f64 * 8.0 / 10e6
}

fn rr_metrics(d: &ResultDoc) -> &tcplab_lab::result::RrMetrics {
    common::rr(&d.points[0])
}

/// One transaction in flight on an idle path: the request's segments cross, the server answers at once (its
/// response carries the ACK) and the client's next request carries the ACK of the response, so one transaction
/// takes τ = 2 × 10 ms + the serializations of the request's and the response's segments (each message plus
/// 38 octets of IPv4 and RDP headers; no framing), and the rate is 1/τ (the count of whole transactions in
/// 10 s: within τ/10 s = 0.2 %). A 3000-byte request is cut into messages of at most 1500 − 38 = 1462 octets
/// (1462, 1462, 76): three segments sent back to back inside the window of 4, whose serializations add up
/// (docs/rdp.md § Messages on a byte socket).
#[test]
fn rdp_rr_with_one_transaction_in_flight_runs_at_one_over_rtt_plus_serializations() {
    for (request, response, segs_out) in [(100u64, 1000u64, 1u64), (3000, 1, 3)] {
        let set = [format!("test.request=\"{request}B\""), format!("test.response=\"{response}B\"")];
        let set: Vec<&str> = set.iter().map(String::as_str).collect();
        let d = tcplab_lab::run_scenario(&scenario(RR, &set), 1).unwrap();
        let m = rr_metrics(&d);
        let tau = 0.020 + ser(request + 38 * segs_out) + ser(response + 38);
        let want = 1.0 / tau;
        assert!(
            (m.transactions_per_s - want).abs() / want < 0.01,
            "{request}/{response}: {} transactions/s, 1/τ = {want:.3}",
            m.transactions_per_s
        );
        // Every transaction takes exactly τ: mean, min and max are exact figures.
        for (name, v) in [("mean", m.latency_us.mean), ("min", m.latency_us.min), ("max", m.latency_us.max)] {
            assert!((v - tau * 1e6).abs() < 0.01, "{request}/{response}: latency {name} {v} us, τ = {} us", tau * 1e6);
        }
        assert_eq!(m.retransmissions, 0);
        let (client, server) = ends(&d);
        // The client wrote `segs_out` segments per request; the server one per response.
        assert_eq!(client.DataSegsOut % segs_out, 0);
        assert!(client.DataSegsOut / segs_out >= m.transactions);
        assert!(server.DataSegsOut >= m.transactions);
        assert_eq!(client.DupSegsIn + server.DupSegsIn, 0);
    }
}

/// One lost request (scripted: the 11th data packet of the up direction, request 10), the 500 ms tick and
/// the fixed 2 s RTO. The measurement starts when the server is OPEN: SYN (44 octets, 35.2 us) + 10 ms, the
/// SYN+ACK back (35.2 us + 10 ms), the client's ACK (38 octets, 30.4 us + 10 ms): T0 = 30.1008 ms. Request k
/// goes at T0 + k·τ, so request 10 at t = 239.5088 ms; its timer expires at tick ⌊t/G⌋ + 4 = 2.000 s, when it
/// is resent, and its transaction takes 2.000 s − t + τ = 1,781.432 ms. Response 9, acknowledged only by the
/// lost request, is resent by the server at the same tick (sent at 228.7 ms, same tick period) and arrives
/// as a duplicate: R = 2, D = 1. Every other transaction takes τ.
#[test]
fn rdp_rr_a_lost_request_waits_for_its_retransmission_tick() {
    let d = tcplab_lab::run_scenario(
        &scenario(
            RR,
            &[
                "path.up.loss={model=\"scripted\",drop=[10],packets=\"data\"}",
                // The down direction would copy the up one, loss included.
                "path.down={rate=\"10mbit\",delay=\"10ms\",framing=\"none\"}",
            ],
        ),
        1,
    )
    .unwrap();
    let m = rr_metrics(&d);
    let tau = 0.020 + ser(138) + ser(1038);
    let t0 = ser(44) + 0.010 + ser(44) + 0.010 + ser(38) + 0.010;
    let t10 = t0 + 10.0 * tau;
    let g = 0.5;
    let late = g * ((t10 / g).floor() + 4.0) - t10 + tau;
    assert!((late - 1.781432).abs() < 1e-9, "{late}");
    assert!((m.latency_us.max - late * 1e6).abs() < 0.01, "max {} us, analytic {} us", m.latency_us.max, late * 1e6);
    assert!((m.latency_us.min - tau * 1e6).abs() < 0.01);
    let n = m.transactions as f64;
    let mean = ((n - 1.0) * tau + late) / n;
    assert!((m.latency_us.mean - mean * 1e6).abs() < 0.01, "mean {} us, analytic {} us", m.latency_us.mean, mean * 1e6);
    assert_eq!(m.retransmissions, 2, "the lost request and the response it acknowledged");
    let (client, server) = ends(&d);
    assert_eq!((client.SegsRetrans, server.SegsRetrans), (1, 1));
    assert_eq!((client.DupSegsIn, server.DupSegsIn), (1, 0));
}

/// Bernoulli loss of 2 % of the data packets both ways: a transaction whose request or response is lost
/// (probability 1 − 0.98² = 3.96 %) waits for the lost segment's tick, D = G·(⌊t/G⌋ + 4) − t ∈ (1.5, 2.0] s
/// after it was sent, so its latency falls in (1.5 s, 2 s + τ]; a second loss of the copy adds exactly 2 s
/// (4 ticks from a tick). So p50 and p90 are τ, p99 lies in the first tick band, the maximum in one of the
/// bands k·2 s − 0.5 s < L ≤ k·2 s + τ, and the mean exceeds τ by about 3.96 % × 1.75 s = 69 ms (sd of the
/// mean of ~2,200 transactions ≈ 7 ms; bounds at ±4 sd and a little model allowance).
#[test]
fn rdp_rr_latency_tail_under_loss_shows_the_retransmission_ticks() {
    let lossy = [
        "test.duration=\"200s\"",
        "path.up.loss={model=\"bernoulli\",p=0.02,packets=\"data\"}",
        "path.down={rate=\"10mbit\",delay=\"10ms\",framing=\"none\",loss={model=\"bernoulli\",p=0.02,packets=\"data\"}}",
    ];
    let tau = 0.020 + ser(138) + ser(1038);
    for seed in 1..=3 {
        let d = tcplab_lab::run_scenario(&scenario(RR, &lossy), seed).unwrap();
        let m = rr_metrics(&d);
        let l = &m.latency_us;
        let near = |v: f64| (v - tau * 1e6).abs() < 0.001 * tau * 1e6; // the histogram's 3 digits
        assert!(near(l.p50) && near(l.p90), "seed {seed}: p50 {} p90 {} us, τ {} us", l.p50, l.p90, tau * 1e6);
        // Percentiles are the histogram's bucket tops, at most 0.1 % above the latency (hence `slack`).
        let band = |v: f64, slack: f64| {
            (1..=4).find(|k| v > (*k as f64 * 2.0 - 0.5) * 1e6 && v / slack <= (*k as f64 * 2.0 + tau) * 1e6)
        };
        assert_eq!(band(l.p99, 1.001), Some(1), "seed {seed}: p99 {} us outside (1.5 s, 2 s + τ]", l.p99);
        assert!(band(l.max, 1.0).is_some(), "seed {seed}: max {} us in no tick band", l.max);
        let extra = l.mean / 1e6 - tau;
        assert!((0.035..=0.105).contains(&extra), "seed {seed}: mean exceeds τ by {extra:.4} s");
        assert!(m.retransmissions > 0);
    }
}

// ---- SYN-seeded initial timeout (Zhang; Partridge 1986) -------------------------------------------------

/// A satellite path: 600 ms each way (1.2 s RTT), 10 Mbit/s, no framing, no loss; RFC 793's estimator
/// (α 7/8, β 2) on the sender.
const SATELLITE: &str = "name = \"satellite\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"600ms\"\nframing = \"none\"\n\
    [client.rdp]\nrto_model = \"rfc793\"\n[test]\nkind = \"rdp_stream\"\nmessages = 40\nmessage = \"512B\"\n";

fn satellite(set: &[&str]) -> (RdpStats, RdpStats, RdpStreamMetrics) {
    let d = tcplab_lab::run_scenario(&scenario(SATELLITE, set), 1).unwrap();
    assert_eq!(metrics(&d).messages_delivered, 40);
    let (c, s) = ends(&d);
    (c, s, metrics(&d).clone())
}

/// The path RTT of the opening exchange is 1.2 s + two 44-octet SYNs (35.2 us each) = 1,200.0704 ms. "Within
/// 2× of the path RTT" is RTT ≤ first timeout ≤ 2·RTT: above it, or the first segments are resent before
/// their ACK can come back; at most twice it, or the first loss costs more than an extra round trip.
///
/// With a guess of 3 s (RFC 1122 §4.2.3.1's initial RTO), the first data segment's timeout (InitialRTO) is
/// that guess, 2.5 × RTT, without the seed; the SYN-seeded one is β·SynRTT = 2 × RTT exactly. With a guess
/// of 1 s (RFC 6298 §2.1's), below the RTT: the SYN is resent at 1 s with its timeout doubled to 2 s, and
/// without the seed the first data segments time out before their ACK — spurious retransmissions on a path
/// that loses nothing (R = D). With the seed (Partridge: the SYN timeout in force when the ACK came, 2 s,
/// within a factor 2 of the RTT) the first timeout is 4 s, above the RTT, and nothing is resent.
#[test]
fn syn_seeded_first_timeout_is_within_twice_the_path_rtt_where_the_guess_is_not() {
    let rtt = 1200.0704;
    let within = |rto: f64| (rtt..=2.0 * rtt).contains(&rto);

    let (guess, _, m) = satellite(&["client.rdp.initial_rto=\"3s\""]);
    assert_eq!(guess.SynRetrans, 0);
    assert!((guess.SynRTT - rtt).abs() < 1e-9, "SynRTT {}", guess.SynRTT);
    assert_eq!(guess.InitialRTO, 3000.0);
    assert!(!within(guess.InitialRTO), "the 3 s guess is {:.2} × RTT", guess.InitialRTO / rtt);
    assert_eq!(m.retransmissions, 0);

    let (seeded, _, m) = satellite(&["client.rdp.initial_rto=\"3s\"", "client.rdp.syn_seed=true"]);
    assert!((seeded.SynRTT - rtt).abs() < 1e-9);
    assert!((seeded.InitialRTO - 2.0 * rtt).abs() < 1e-6, "InitialRTO {} = β·SynRTT", seeded.InitialRTO);
    assert!(within(seeded.InitialRTO));
    assert_eq!(m.retransmissions, 0);

    let (short, server, m) = satellite(&["client.rdp.initial_rto=\"1s\""]);
    assert_eq!(short.SynRetrans, 1);
    assert_eq!(short.InitialRTO, 1000.0);
    assert!(short.InitialRTO < rtt);
    assert!(m.retransmissions > 0, "the first data segments time out before their ACK");
    assert_eq!(m.data_drops, 0);
    assert_eq!(m.retransmissions, server.DupSegsIn, "every retransmission spurious: R = D");

    let (seeded, _, m) = satellite(&["client.rdp.initial_rto=\"1s\"", "client.rdp.syn_seed=true"]);
    assert_eq!(seeded.SynRetrans, 1);
    // The seed: the SYN timeout in force at the ACK, 2 s, within a factor 2 of the RTT; RTO = β × 2 s.
    assert!((rtt / 2.0..=2.0 * rtt).contains(&2000.0));
    assert_eq!(seeded.InitialRTO, 4000.0);
    assert!(seeded.InitialRTO > rtt);
    assert_eq!(m.retransmissions, 0, "no timer fires before its ACK");
}

// ---- test.series for RDP ---------------------------------------------------------------------------------

/// The RTT-feedback run of `rtt_feedback_every_sample_inflates_srtt…` with `test.series = "100ms"`: the
/// sender's SmoothedRTT on every tick, and beside it every RTT measurement, taken or discarded. The two agree
/// (the SmoothedRTT of a tick is the one after the last measurement taken before it), every measurement is
/// there (as many rows as RttSamples + RttSamplesDiscarded), and the figure the 1986 experiment is about
/// shows: with `every`, the samples taken after the timeouts include each repair's timeout and SmoothedRTT
/// climbs far above the real RTT (1.2 s); with `discard_out_of_order` exactly those measurements (> 1.21 s)
/// are the discarded ones and every SmoothedRTT stays within the real RTTs taken.
#[test]
fn rdp_series_shows_smoothed_rtt_beside_every_rtt_sample_taken_and_discarded() {
    let base = [
        "path.up.delay=\"600ms\"",
        "path.down.delay=\"600ms\"",
        "path.up.loss={model=\"scripted\",drop=[20,22,24,26,28],packets=\"data\"}",
        "test.messages=200",
        "client.rdp.rto_model=\"mills\"",
        "test.series=\"100ms\"",
    ];
    for sampling in ["every", "discard_out_of_order"] {
        let set = format!("client.rdp.rtt_sampling=\"{sampling}\"");
        let d = run(&[&base[..], &[set.as_str()]].concat(), 1);
        let p = &d.points[0];
        let series = p.series.as_ref().expect("test.series asks for the series");
        let samples = p.rtt_samples.as_ref().expect("an RDP series comes with its RTT samples");
        let col = |cols: &[&str], name: &str| cols.iter().position(|c| *c == name).unwrap();
        let (st, ss) = (col(&series.columns, "t_s"), col(&series.columns, "SmoothedRTT"));
        let (rt, rv, rk, rs) = (
            col(&samples.columns, "t_s"),
            col(&samples.columns, "rtt_ms"),
            col(&samples.columns, "taken"),
            col(&samples.columns, "SmoothedRTT"),
        );
        let (client, _) = ends(&d);
        assert_eq!(samples.rows.len() as u64, client.RttSamples + client.RttSamplesDiscarded, "{sampling}");
        assert_eq!(samples.rows.iter().filter(|r| r[rk] == 1.0).count() as u64, client.RttSamples);
        // Ticks every 100 ms from 100 ms until the measurement opens, then on the window's clock edges
        // (its start and every 100 ms after it); the series' SmoothedRTT is the one after the last sample
        // taken.
        assert!(series.rows.len() > 10);
        let start = series.measure_start_s.expect("the window opened");
        let on_edge = |t: f64, from: f64| (((t - from) / 0.1).round() * 0.1 + from - t).abs() < 1e-9;
        for (i, row) in series.rows.iter().enumerate() {
            let t = row[st];
            assert!(if t < start { on_edge(t, 0.0) } else { on_edge(t, start) }, "{sampling}: tick {i} at {t}");
            let last = samples.rows.iter().rev().find(|r| r[rt] <= row[st] && r[rk] == 1.0);
            assert_eq!(row[ss], last.map_or(0.0, |r| r[rs]), "{sampling}: SmoothedRTT at {} s", row[st]);
        }
        let peak = series.rows.iter().map(|r| r[ss]).fold(0.0, f64::max);
        let inflated = |r: &&Vec<f64>| r[rv] > 1_210.0;
        match sampling {
            "every" => {
                assert!(samples.rows.iter().filter(inflated).all(|r| r[rk] == 1.0));
                // One sample per acknowledgement: an ACK that covers several repairs gives one.
                let n = samples.rows.iter().filter(inflated).count();
                assert!((1..=5).contains(&n), "{n} samples include a repair's timeout");
                assert!(peak > 3.0 * 1_210.0, "{sampling}: SmoothedRTT peaks at {peak} ms");
            }
            _ => {
                let discarded: Vec<&Vec<f64>> = samples.rows.iter().filter(|r| r[rk] == 0.0).collect();
                assert!(!discarded.is_empty());
                assert!(discarded.iter().all(inflated), "{sampling}: only inflated samples are discarded");
                assert!(samples.rows.iter().filter(|r| r[rk] == 1.0).all(|r| (1_200.0..=1_210.0).contains(&r[rv])));
                assert!((1_200.0..=1_210.0).contains(&peak), "{sampling}: SmoothedRTT peaks at {peak} ms");
            }
        }
    }
}

/// The shipped `rdp-rr-satellite`: at 1 Mbit/s (8 us per octet) a transaction takes τ = 1.2 s + the request
/// (512 + 38 octets: 4.4 ms) + the three response messages (1462 + 1462 + 1172 data octets, 38 each: 4,210
/// octets, 33.68 ms) = 1,238.08 ms, the median latency; the client's first timeout is the SYN-seeded
/// 2 × SynRTT, SynRTT = 1.2 s + two 44-octet SYNs (0.704 ms).
#[test]
fn the_shipped_satellite_rr_runs_at_the_analysed_round_trip() {
    let text = SHIPPED.iter().find(|s| s.name == "rdp-rr-satellite").expect("shipped").text;
    let d = tcplab_lab::run_scenario(&scenario(text, &["test.duration=\"120s\""]), 1).unwrap();
    let m = rr_metrics(&d);
    let tau_us = (1.2 + 550.0 * 8e-6 + 4210.0 * 8e-6) * 1e6;
    assert!((m.latency_us.min - tau_us).abs() < 0.01, "min {} us, τ {tau_us} us", m.latency_us.min);
    assert!((m.latency_us.p50 - tau_us).abs() < 0.001 * tau_us, "p50 {} us", m.latency_us.p50);
    let (client, _) = ends(&d);
    assert!((client.SynRTT - 1200.704).abs() < 1e-9, "SynRTT {}", client.SynRTT);
    assert!((client.InitialRTO - 2.0 * client.SynRTT).abs() < 1e-6);
    assert_eq!(client.SynRetrans, 0);
}
