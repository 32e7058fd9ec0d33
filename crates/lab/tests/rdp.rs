//! RDP in the lab: the December 1986 experiment (50,000 messages, 4 % loss on data, max 4 outstanding,
//! EACKs on and off) and RTT feedback, as scenarios. Expected values are Part C of the RDP engineering note
//! (docs/rdp.md summarizes them): N = 50,000, p = 0.04, q = 0.96, W = 4.

mod common;

use common::scenario;
use tcplab_lab::result::{Metrics, RdpStreamMetrics};
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
        Metrics::Rdp(m) => m,
        other => panic!("not an RDP transfer: {other:?}"),
    }
}

fn ends(d: &ResultDoc) -> (RdpStats, RdpStats) {
    let c = &d.points[0].connections;
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].side, c[1].side), ("client", "server"));
    assert!(c.iter().all(|e| e.protocol == "rdp"));
    let s = |i: usize| serde_json::from_value::<RdpStats>(c[i].estats.clone()).expect("RDP estats");
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
