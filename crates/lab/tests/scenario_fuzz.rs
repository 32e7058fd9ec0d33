//! A structured scenario fuzzer: instead of random text (parser_fuzz.rs), it writes scenario documents of
//! the right shape — every test kind, link rates, delays, queues and loss models, every personality, and a
//! spread of TCP knob values including extreme ones the validation accepts — and runs each for a short
//! simulated time. Every document must end in either an error that names the offending key, or a result
//! whose invariants hold:
//!
//! - goodput ≤ the bottleneck's capacity for payload: rate × (largest payload per frame / frame bytes on
//!   the wire), plus what the path may have held when the measurement opened (the largest queue and the
//!   longest delay's worth of data), spread over the measurement; and bytes delivered to the receiving
//!   application ≤ bytes the link delivered;
//! - bytes acknowledged ≤ bytes put on the wire for the first time (ThruOctetsAcked ≤ DataOctetsOut −
//!   OctetsRetrans at every end);
//! - retransmitted segments ≤ segments sent (SYNs included), at every end;
//! - frames delivered by a link ≤ frames offered to it;
//! - a second run with the same seed gives byte-identical JSON (a run is a pure function of scenario and seed).
//!
//! Cases: `TCPLAB_FUZZ_CASES` (default 64, a few seconds in a debug build); each case is a few simulated
//! seconds at most. `TCPLAB_FUZZ_CASES=2000 cargo test --release -p tcplab-lab --test scenarios scenario_fuzz::` for a
//! longer local hunt; proptest prints the failing document's choices and shrinks them.

use proptest::prelude::*;
use tcplab_lab::{load, Origin, Source};

const KINDS: &[&str] = &["tcp_stream", "tcp_maerts", "tcp_rr", "tcp_crr"];
const STACKS: &[&str] = &["rfc", "linux", "linux-2.4", "linux-2.2", "hpux-11", "bsd-4.4"];
const RATES: &[(&str, u64)] = &[
    ("56kbit", 56_000),
    ("1mbit", 1_000_000),
    ("10mbit", 10_000_000),
    ("100mbit", 100_000_000),
    ("1gbit", 1_000_000_000),
    ("10gbit", 10_000_000_000),
];
const DELAYS: &[&str] = &["0s", "50us", "1ms", "20ms", "100ms", "400ms"];
const QUEUES: &[&str] = &["0pkt", "1pkt", "4pkt", "100pkt", "10000pkt", "3KB", "64KiB", "4MB"];
const LOSSES: &[&str] = &[
    r#"{ model = "none" }"#,
    r#"{ model = "bernoulli", p = 0.001 }"#,
    r#"{ model = "bernoulli", p = 0.05 }"#,
    r#"{ model = "bernoulli", p = 0.3 }"#,
    r#"{ model = "bernoulli", p = 0.1, packets = "data" }"#,
    r#"{ model = "gilbert_elliott", p = 0.01, r = 0.3 }"#,
    r#"{ model = "scripted", drop = [0, 1, 2, 3, 10, 11] }"#,
    r#"{ model = "scripted", drop = [3, 5, 7, 9], packets = "data" }"#,
];

/// TCP knobs and values to draw from: defaults' neighbours, the extremes the validation accepts, and a
/// few it refuses (which must come back as an error naming the key).
const KNOBS: &[(&str, &[&str])] = &[
    ("mss", &["\"88B\"", "\"536B\"", "\"1460B\"", "\"9000B\"", "\"65495B\"", "\"20B\""]),
    // 1 GiB is accepted, but a sender closes with its buffer full and the run drains it for up to 30 s at
    // the link rate: the fuzzer offers 2 GiB, which the validation refuses.
    ("send_buffer", &["\"1KiB\"", "\"16KiB\"", "\"4MiB\"", "\"2GiB\""]),
    ("recv_buffer", &["\"1KiB\"", "\"8KiB\"", "\"64KiB\"", "\"1GiB\""]),
    ("window_scaling", &["true", "false"]),
    ("timestamps", &["true", "false"]),
    ("timestamp_tick", &["\"1us\"", "\"1ms\"", "\"500ms\"", "\"1s\""]),
    ("sack", &["true", "false"]),
    ("nodelay", &["true", "false"]),
    ("minshall", &["true", "false"]),
    ("cork", &["true", "false"]),
    ("ack_policy", &["\"every\"", "\"delayed\"", "\"bsd\"", "\"linux\"", "\"avoidance\"", "\"never\""]),
    ("ack_every", &["1", "2", "64", "65"]),
    ("delayed_ack_timeout", &["\"1ms\"", "\"200ms\"", "\"499ms\""]),
    ("deferred_ack_max", &["2", "64"]),
    ("ato_min", &["\"0s\"", "\"40ms\"", "\"400ms\""]),
    ("quickack_on_reorder", &["true", "false"]),
    ("comp_sack_nr", &["0", "44", "1000"]),
    ("comp_sack_delay", &["\"0s\"", "\"1ms\"", "\"100ms\""]),
    ("ack_immediate_p", &["0.0", "0.5", "1.0", "1.5"]),
    ("initial_window", &["\"rfc3390\"", "\"rfc6928\"", "\"1seg\"", "\"1000seg\"", "\"4380B\"", "\"1B\""]),
    ("congestion_control", &["\"reno\"", "\"newreno\"", "\"cubic\""]),
    (
        "cubic",
        &[
            "{ c = 0.01 }",
            "{ c = 40.0, beta = 0.99 }",
            "{ beta = 0.05, fast_convergence = false }",
            "{ hystart = true }",
            "{ hystart = true, hystart_ack_delta = \"50ms\" }",
            "{ reno_friendly = false, alpha_switch = true }",
        ],
    ),
    ("abc", &["\"off\"", "\"l1\"", "\"l2\"", "\"unlimited\""]),
    ("abc_ca", &["true", "false"]),
    ("dupthresh", &["1", "3", "50", "0"]),
    ("slow_start_after_idle", &["true", "false"]),
    ("prr", &["true", "false"]),
    ("prr_cwr", &["true", "false"]),
    ("undo", &["true", "false"]),
    ("lost_retransmit_detection", &["true", "false"]),
    ("limited_transmit", &["true", "false"]),
    ("ssthresh_from_cwnd", &["true", "false"]),
    ("rto_rearm_on_retransmit", &["true", "false"]),
    ("keep_sack_on_rto", &["true", "false"]),
    ("rack", &["true", "false"]),
    ("tlp", &["true", "false"]),
    ("tlp_max_ack_delay", &["\"0s\"", "\"200ms\"", "\"2s\""]),
    ("rto_model", &["\"rfc6298\"", "\"linux\"", "\"rfc793\"", "\"mills\""]),
    (
        "rto_params",
        &[
            "{ rfc6298_k = 0 }",
            "{ rfc6298_alpha = 1.0, rfc6298_beta = 1.0 }",
            "{ rfc793_alpha = 0.0, rfc793_beta = 1.0 }",
            "{ mills_gain_up = 1.0 }",
        ],
    ),
    ("rtt_sampling", &["\"auto\"", "\"karn\"", "\"every_ack\"", "\"linux\""]),
    ("rto_initial", &["\"1ms\"", "\"1s\"", "\"100s\""]),
    ("rto_min", &["\"1us\"", "\"200ms\"", "\"1s\""]),
    ("rto_max", &["\"10ms\"", "\"60s\"", "\"1h\""]),
    ("clock_granularity", &["\"0s\"", "\"1ms\"", "\"500ms\""]),
    ("ifq_full", &["\"block\"", "\"cwr\"", "\"linux-2.4\"", "\"drop\""]),
    ("cwv", &["\"off\"", "\"rfc2861\"", "\"rfc7661\"", "\"linux\"", "\"linux-2.4\""]),
    ("max_burst", &["0", "1", "3", "1000"]),
    ("cwnd_unit", &["\"bytes\"", "\"packets\""]),
    ("tick", &["\"0s\"", "\"1ms\"", "\"10ms\"", "\"500ms\""]),
    ("time_wait", &["\"0s\"", "\"60s\""]),
];

/// One end's TCP table: a handful of knobs with values picked by index.
fn tcp_table(picks: &[(usize, usize)]) -> String {
    let mut seen = std::collections::BTreeMap::new();
    for &(k, v) in picks {
        let (key, values) = KNOBS[k % KNOBS.len()];
        seen.insert(key, values[v % values.len()]);
    }
    let body: Vec<String> = seen.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{ {} }}", body.join(", "))
}

#[derive(Debug, Clone)]
struct Doc {
    text: String,
    /// The up and down rates, bit/s.
    rates: (u64, u64),
    /// The test kind.
    kind: &'static str,
}

fn doc() -> impl Strategy<Value = Doc> {
    let link = (0..RATES.len(), 0..DELAYS.len(), 0..QUEUES.len(), 0..LOSSES.len());
    let knobs = proptest::collection::vec((0..KNOBS.len(), 0..8usize), 0..6);
    (
        0..KINDS.len(),
        (0..STACKS.len(), 0..STACKS.len()),
        link.clone(),
        proptest::option::of(link),
        (knobs.clone(), knobs),
        (0..4usize, 0..4usize, 0..3usize, any::<bool>()),
    )
        .prop_map(|(kind, (cs, ss), up, down, (ck, sk), (dur, msg, par, nic))| {
            let kind = KINDS[kind];
            let mut t = String::from("name = \"fuzz\"\nseed = 7\n");
            let link = |t: &mut String, name: &str, (r, d, q, l): (usize, usize, usize, usize)| {
                t.push_str(&format!(
                    "[path.{name}]\nrate = \"{}\"\ndelay = \"{}\"\nqueue = \"{}\"\nloss = {}\n",
                    RATES[r].0, DELAYS[d], QUEUES[q], LOSSES[l]
                ));
            };
            link(&mut t, "up", up);
            if let Some(down) = down {
                link(&mut t, "down", down);
            }
            t.push_str(&format!("[client]\nstack = \"{}\"\ntcp = {}\n", STACKS[cs], tcp_table(&ck)));
            if nic {
                t.push_str("host = { nic_rate = \"20mbit\", txqueuelen = 8 }\n");
            }
            t.push_str(&format!("[server]\nstack = \"{}\"\ntcp = {}\n", STACKS[ss], tcp_table(&sk)));
            // Receive coalescing long enough to batch frames at every rate here, on half of the cases.
            if (dur + msg) % 2 == 1 {
                t.push_str("host = { rx_coalesce = \"2ms\" }\n");
            }
            // A few simulated seconds, but no more than ~40 Mbit through the faster direction, so that a
            // case stays well under a second in a debug build.
            let fastest = RATES[up.0].1.max(down.map_or(0, |d| RATES[d.0].1));
            let ms = [200u64, 1000, 2000, 3000][dur].min(40_000_000_000 / fastest).max(5);
            t.push_str(&format!("[test]\nkind = \"{kind}\"\nduration = \"{ms}ms\"\n"));
            match kind {
                "tcp_rr" | "tcp_crr" => {
                    let (req, rsp) = [("1B", "1B"), ("100B", "20KiB"), ("64KiB", "1B"), ("3000B", "3000B")][msg];
                    t.push_str(&format!("request = \"{req}\"\nresponse = \"{rsp}\"\n"));
                    if kind == "tcp_rr" && par == 2 {
                        t.push_str("burst = 3\n");
                    }
                }
                _ => {
                    let m = ["1B", "100B", "16KiB", "1MiB"][msg];
                    t.push_str(&format!("message = \"{m}\"\n"));
                }
            }
            t.push_str(&format!("parallel = {}\n", [1, 2, 5][par]));
            let rate = |l: (usize, usize, usize, usize)| RATES[l.0].1;
            Doc { text: t, rates: (rate(up), down.map_or(rate(up), rate)), kind }
        })
}

/// The checks of the module documentation, on one document.
fn check(d: &Doc) {
    let scenario = match load(&Source { name: "fuzz.toml", text: &d.text }, &[]) {
        Ok(s) => s,
        Err(e) => {
            // A refusal names the file, the line of the key and the key.
            let shown = e.to_string();
            assert!(matches!(e.origin, Origin::File { .. }), "{shown}");
            assert!(shown.starts_with("fuzz.toml"), "{shown}");
            assert!(!e.key.is_empty() && !e.message.is_empty(), "an error names its key: {shown}");
            // The key, or a key the message names beside it (a pair of knobs that contradict each other,
            // one from the personality), is one the document sets.
            let set = |k: &str| d.text.contains(&format!("{k} = "));
            let leaf = e.key.rsplit('.').next().unwrap();
            let named =
                e.message.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w.len() > 2 && set(w));
            assert!(set(leaf) || named, "the error names a key of the document:\n{}\n{shown}", d.text);
            return;
        }
    };
    let doc = match tcplab_lab::run_scenario(&scenario, 7) {
        Ok(doc) => doc,
        // A path that loses every handshake (or a 56 kbit/s path with a 400 ms RTO ceiling) may never
        // establish: that is a clear error, not a panic.
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let json = serde_json::to_string(&doc).unwrap();
    let again = serde_json::to_string(&tcplab_lab::run_scenario(&scenario, 7).unwrap()).unwrap();
    assert!(json == again, "the same seed gave different JSON:\n{}", d.text);

    let p = &doc.points[0];
    let links = &p.links;
    for l in [&links.up, &links.down] {
        assert!(l.frames_delivered <= l.frames_in, "{}", d.text);
    }
    for c in &p.connections {
        let e: tcplab_tcp::Estats = serde_json::from_value((*c.estats).clone()).unwrap();
        assert!(e.SegsRetrans <= e.SegsOut, "retransmissions ≤ segments out:\n{}", d.text);
        assert!(
            e.OctetsRetrans <= e.DataOctetsOut,
            "retransmitted bytes ≤ data bytes out ({} > {}):\n{}",
            e.OctetsRetrans,
            e.DataOctetsOut,
            d.text
        );
        assert!(
            e.ThruOctetsAcked <= e.DataOctetsOut - e.OctetsRetrans,
            "acknowledged ≤ sent once ({} > {} − {}):\n{}",
            e.ThruOctetsAcked,
            e.DataOctetsOut,
            e.OctetsRetrans,
            d.text
        );
    }
    if let tcplab_lab::result::Metrics::Stream(m) = &p.metrics {
        // Data flows up for tcp_stream, down for tcp_maerts. The largest payload share of a frame any
        // accepted MSS gives is 65495 / (65495 + 40 header bytes + 38 Ethernet framing bytes).
        let rate = if d.kind == "tcp_maerts" { d.rates.1 } else { d.rates.0 };
        let best_ratio = 65_495.0 / (65_495.0 + 40.0 + 38.0);
        let bound = rate as f64 * best_ratio * 1.0001 + 1.0;
        let elapsed = m.elapsed_s.max(1e-9);
        // What was queued on the path when the measurement opened arrives inside it: at most the
        // largest queue (4 MB) plus the bandwidth-delay product of the slowest 400 ms delay.
        let head_start = (4_000_000.0 + rate as f64 / 8.0 * 0.4) * 8.0 / elapsed;
        assert!(
            m.throughput_bps <= bound + head_start,
            "goodput {} bit/s above the link's {} bit/s:\n{}",
            m.throughput_bps,
            rate,
            d.text
        );
        // Delivered bytes came over the link: no more than the link delivered in the whole run.
        let link = if d.kind == "tcp_maerts" { &links.down } else { &links.up };
        assert!(m.delivered_bytes <= link.bytes_delivered, "{}", d.text);
    }
}

fn cases() -> u32 {
    std::env::var("TCPLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn structured_scenarios_run_or_fail_clearly(d in doc()) {
        check(&d);
    }
}

/// Found by the fuzzer: a Linux client's request/response over a 1 Mbit/s path with no delay.
#[test]
fn regression_rr_linux_client_on_a_zero_delay_path() {
    let text = "name = \"fuzz\"\nseed = 7\n[path.up]\nrate = \"1mbit\"\ndelay = \"0s\"\nqueue = \"100pkt\"\nloss = { model = \"none\" }\n[client]\nstack = \"linux\"\ntcp = {  }\n[server]\nstack = \"rfc\"\ntcp = {  }\n[test]\nkind = \"tcp_rr\"\nduration = \"200ms\"\nrequest = \"100B\"\nresponse = \"20KiB\"\nparallel = 1\n";
    check(&Doc { text: text.into(), rates: (1_000_000, 1_000_000), kind: "tcp_rr" });
}

/// Found by the fuzzer: `linux-2.4` counts cwnd in packets, and a CUBIC set on top of it was refused at
/// `cwnd_unit` by a message that did not name the key the document set.
#[test]
fn regression_cubic_on_a_packet_counting_personality_names_both_keys() {
    let text = "name = \"fuzz\"\nseed = 7\n[path.up]\nrate = \"56kbit\"\ndelay = \"0s\"\nqueue = \"0pkt\"\nloss = { model = \"none\" }\n[client]\nstack = \"linux-2.4\"\ntcp = { congestion_control = \"cubic\" }\n[server]\nstack = \"rfc\"\ntcp = {  }\n[test]\nkind = \"tcp_stream\"\nduration = \"200ms\"\nmessage = \"1B\"\nparallel = 1\n";
    check(&Doc { text: text.into(), rates: (56_000, 56_000), kind: "tcp_stream" });
}

/// Found by the fuzzer: a send buffer above 1 GiB was refused at `test.message` (which defaults to it, and
/// which a request/response test does not even use) instead of at the key the document set.
#[test]
fn regression_an_oversized_send_buffer_is_refused_at_its_key() {
    let text = "name = \"fuzz\"\nseed = 7\n[path.up]\nrate = \"56kbit\"\n[client]\ntcp = { send_buffer = \"2GiB\" }\n[test]\nkind = \"tcp_rr\"\nduration = \"200ms\"\n";
    let e = load(&Source { name: "fuzz.toml", text }, &[]).unwrap_err();
    assert_eq!(e.key, "client.tcp.send_buffer", "{e}");
    check(&Doc { text: text.into(), rates: (56_000, 56_000), kind: "tcp_rr" });
}

/// Found by the fuzzer (CI): a `bsd-4.4` receiver of 1-byte messages from a `linux` sender over a lossy
/// 1 Mbit/s path with no delay.
#[test]
fn regression_maerts_bsd_receiver_of_one_byte_messages_on_a_lossy_path() {
    let text = "name = \"fuzz\"\nseed = 7\n[path.up]\nrate = \"1mbit\"\ndelay = \"0s\"\nqueue = \"100pkt\"\nloss = { model = \"bernoulli\", p = 0.05 }\n[client]\nstack = \"bsd-4.4\"\ntcp = {  }\n[server]\nstack = \"linux\"\ntcp = {  }\n[test]\nkind = \"tcp_maerts\"\nduration = \"3000ms\"\nmessage = \"1B\"\nparallel = 1\n";
    check(&Doc { text: text.into(), rates: (1_000_000, 1_000_000), kind: "tcp_maerts" });
}
