//! Networks of `[[host]]` and `[[link]]` tables with flows between any two hosts (issue 24 item 1): a
//! parking lot's physics, a dumbbell written as a network giving the dumbbell's figures, and the errors of
//! a bad network, each naming its file, line and key.

use tcplab_lab::result::Point;
use tcplab_lab::run_point;
use tcplab_lab::{load, Scenario, Source, SHIPPED};

fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: "net.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped")).text
}

fn run(s: &Scenario) -> Point {
    run_point(s, s.seed).expect("the flows come up").point
}

fn error(text: &str) -> String {
    load(&Source { name: "net.toml", text }, &[]).expect_err("refused").to_string()
}

/// The payload a saturated 10 Mbit/s Ethernet-framed link carries: 1448 bytes of every 1538-byte frame
/// (1500-byte datagrams with timestamps, 38 bytes of framing).
const PAYLOAD_10M: f64 = 10e6 * 1448.0 / 1538.0;

#[test]
fn parking_lot_fills_every_hop_and_beats_the_long_flow_down() {
    let s = scenario(shipped("parking-lot"), &["test.duration=\"30s\""]);
    let p = run(&s);
    assert_eq!(p.flows.len(), 4);
    let long = &p.flows[0];
    // The long flow crosses 3 hops of 10 ms and two access links of 1 ms each way; a cross flow one hop.
    assert_eq!(long.base_rtt_ms, 64.0);
    for cross in &p.flows[1..] {
        assert_eq!(cross.base_rtt_ms, 24.0);
        // Each hop carries the long flow and its cross flow: together they fill it, within 2% of the
        // payload rate and never beyond it.
        let total = long.goodput_bps + cross.goodput_bps;
        assert!(total > 0.98 * PAYLOAD_10M && total <= PAYLOAD_10M * 1.001, "hop total {total}: {:?}", p.flows);
        // The long flow gets less than a max-min fair half of the hop, and less than a third of the cross
        // flow: its RTT is 2.7 times longer and it meets three drop points (Floyd 1991, § 4).
        assert!(long.goodput_bps < 0.5 * total, "long {} against cross {}", long.goodput_bps, cross.goodput_bps);
        assert!(long.goodput_bps < cross.goodput_bps / 3.0, "{long:?} {cross:?}");
    }
    // Yet it is not starved: it keeps a few percent of the hop.
    assert!(long.goodput_bps > 0.02 * PAYLOAD_10M, "{long:?}");
    let a = p.aggregate.as_ref().unwrap();
    assert_eq!(a.stream_flows, 4);
    assert!(a.jain_index < 0.9, "{a:?}");
}

/// rtt-fairness's dumbbell, written out as hosts and links in the order the dumbbell builds them.
const RTT_FAIRNESS_AS_NETWORK: &str = r#"
name = "rtt-fairness-as-network"
[test]
duration = "20s"
[[host]]
name = "s0"
tcp = { congestion_control = "reno", send_buffer = "8MiB", recv_buffer = "8MiB" }
[[host]]
name = "s1"
tcp = { congestion_control = "reno", send_buffer = "8MiB", recv_buffer = "8MiB" }
[[host]]
name = "d0"
tcp = { congestion_control = "reno", send_buffer = "8MiB", recv_buffer = "8MiB" }
[[host]]
name = "d1"
tcp = { congestion_control = "reno", send_buffer = "8MiB", recv_buffer = "8MiB" }
[[host]]
name = "left"
[[host]]
name = "right"
[[link]]
a = "left"
b = "right"
forward = { rate = "100mbit", delay = "1ms", queue = "25pkt" }
[[link]]
a = "s0"
b = "left"
forward = { rate = "1gbit", delay = "9ms", queue = "10000pkt" }
[[link]]
a = "right"
b = "d0"
forward = { rate = "1gbit", delay = "0s", queue = "10000pkt" }
[[link]]
a = "s1"
b = "left"
forward = { rate = "1gbit", delay = "39ms", queue = "10000pkt" }
[[link]]
a = "right"
b = "d1"
forward = { rate = "1gbit", delay = "0s", queue = "10000pkt" }
[[flow]]
kind = "stream"
from = "s0"
to = "d0"
[[flow]]
kind = "stream"
from = "s1"
to = "d1"
"#;

#[test]
fn a_dumbbell_written_as_a_network_gives_the_dumbbells_figures() {
    let net = run(&scenario(RTT_FAIRNESS_AS_NETWORK, &[]));
    let bell = run(&scenario(shipped("rtt-fairness"), &["test.duration=\"20s\""]));
    let key = |p: &Point| -> Vec<(f64, u64, u64, f64)> {
        p.flows.iter().map(|f| (f.base_rtt_ms, f.delivered_bytes, f.retransmissions, f.smoothed_rtt_ms)).collect()
    };
    assert_eq!(key(&net), key(&bell));
    assert_eq!(net.links.up.bytes_delivered, bell.links.up.bytes_delivered, "links.up is the bottleneck");
}

#[test]
fn the_backward_direction_is_its_own_and_routes_take_the_fewest_hops() {
    // A triangle: a - b direct (the short way) and a - c - b; the flow's data goes the direct way, whose
    // forward direction is 10 Mbit/s, while the way back (ACKs) has 40 ms of delay of its own.
    let text = r#"
name = "triangle"
[test]
duration = "10s"
[[host]]
name = "a"
tcp = { send_buffer = "4MiB", recv_buffer = "4MiB" }
[[host]]
name = "b"
tcp = { send_buffer = "4MiB", recv_buffer = "4MiB" }
[[host]]
name = "c"
[[link]]
a = "a"
b = "c"
forward = { rate = "100mbit", delay = "1ms" }
[[link]]
a = "c"
b = "b"
forward = { rate = "100mbit", delay = "1ms" }
[[link]]
a = "a"
b = "b"
forward = { rate = "10mbit", delay = "10ms", queue = "100pkt" }
backward = { rate = "10mbit", delay = "40ms" }
[[flow]]
kind = "stream"
from = "a"
to = "b"
"#;
    let p = run(&scenario(text, &[]));
    let f = &p.flows[0];
    assert_eq!(f.base_rtt_ms, 50.0, "10 ms there, 40 ms back on the direct link");
    assert!(f.goodput_bps > 0.95 * PAYLOAD_10M && f.goodput_bps <= PAYLOAD_10M * 1.001, "{f:?}");
    // links.up is the slowest direction (the first of the 10 Mbit/s ones): the direct link's forward.
    assert!(p.links.up.frames_delivered > 10_000, "{:?}", p.links.up);
}

const NET: &str = "name = \"bad\"\n[test]\nduration = \"1s\"\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n";
const LINK: &str = "[[link]]\na = \"a\"\nb = \"b\"\nforward = { rate = \"10mbit\" }\n";
const FLOW: &str = "[[flow]]\nkind = \"stream\"\nfrom = \"a\"\nto = \"b\"\n";

#[test]
fn a_bad_network_is_named_with_its_file_line_and_key() {
    // Lines: 1 name, 2 [test], 3 duration, 4-5 host a, 6-7 host b, 8 [[link]], 9 a, 10 b, 11 forward.
    let ok = format!("{NET}{LINK}{FLOW}");
    scenario(&ok, &[]);
    let e = error(&ok.replace("b = \"b\"", "b = \"x\""));
    assert!(e.starts_with("net.toml:10: link[0].b: \"x\": no [[host]] has that name; accepted: \"a\", \"b\""), "{e}");
    let e = error(&ok.replace("b = \"b\"", "b = \"a\""));
    assert!(e.starts_with("net.toml:10: link[0].b") && e.contains("two different hosts"), "{e}");
    let e = error(&ok.replace("name = \"b\"", "name = \"a\""));
    assert!(e.starts_with("net.toml:7: host[1].name") && e.contains("names host[0] already"), "{e}");
    let e = error(&ok.replace("forward = { rate = \"10mbit\" }", "forward = { rate = \"10mbit\", jitter = \"1ms\" }"));
    assert!(e.starts_with("net.toml:11: link[0].forward.jitter"), "{e}");
    let e = error(&ok.replace("{ rate = \"10mbit\" }", "{ rate = \"100bit\" }"));
    assert!(e.starts_with("net.toml:11: link[0].forward.rate: 100bit: accepted 300bit"), "{e}");
    let e = error(&format!("{ok}backward = {{ rate = \"10mbit\", qdisc = {{ kind = \"blue\" }} }}\n"));
    assert!(e.contains("link[0].backward.qdisc") || e.contains("kind"), "{e}");
    let e = error(&ok.replace("to = \"b\"", "to = \"nowhere\""));
    assert!(e.starts_with("net.toml:15: flow[0].to") && e.contains("no [[host]] has that name"), "{e}");
    let e = error(&ok.replace("to = \"b\"\n", ""));
    assert!(e.contains("flow[0].to: missing key"), "{e}");
    let e = error(&format!("{ok}access_delay = \"5ms\"\n"));
    assert!(e.starts_with("net.toml:16: flow[0].access_delay") && e.contains("[[link]]"), "{e}");
    let e = error(&format!("{ok}tcp = {{ congestion_control = \"reno\" }}\n"));
    assert!(e.starts_with("net.toml:16: flow[0].tcp") && e.contains("each [[host]] has its stack"), "{e}");
    let e = error(&format!("{NET}[[host]]\nname = \"c\"\n{LINK}[[flow]]\nkind = \"rr\"\nfrom = \"a\"\nto = \"c\"\n"));
    assert!(e.starts_with("net.toml:17: flow[0].to") && e.contains("no path of [[link]]s joins it"), "{e}");
    let e = error(&format!("{NET}{FLOW}"));
    assert!(e.contains("link") && e.contains("accepted 1 to"), "{e}");
    let e = error(&format!("{NET}{LINK}"));
    assert!(e.contains("flow") && e.contains("a network has no flows"), "{e}");
    let e = error(&format!("{ok}[path.up]\nrate = \"1mbit\"\n"));
    assert!(e.contains("path") && e.contains("not used with [[host]]/[[link]]"), "{e}");
    let e = error(&format!("{ok}[dumbbell]\nbottleneck = {{ rate = \"1mbit\" }}\n"));
    assert!(e.contains("dumbbell") && e.contains("not both"), "{e}");
    let e = error(&ok.replace("name = \"a\"", "name = \"a b\""));
    assert!(e.starts_with("net.toml:5: host[0].name") && e.contains("letters, digits"), "{e}");
    let e = error(&ok.replace("name = \"a\"\n", "name = \"a\"\nstack = \"bsd\"\n"));
    assert!(e.starts_with("net.toml:6: host[0].stack") && e.contains("\"linux\""), "{e}");
    let e = error(&ok.replace("duration = \"1s\"", "kind = \"tcp_rr\""));
    assert!(e.starts_with("net.toml:3: test.kind") && e.contains("beside [[host]]/[[link]]: duration"), "{e}");
    // A dumbbell's flows do not name hosts.
    let e = error(&format!(
        "name = \"x\"\n[dumbbell]\nbottleneck = {{ rate = \"1mbit\" }}\n[test]\nduration = \"1s\"\n{FLOW}"
    ));
    assert!(e.starts_with("net.toml:8: flow[0].from") && e.contains("not used with [dumbbell]"), "{e}");
}

#[test]
fn the_linux_backend_refuses_a_network_by_name() {
    let s = scenario(shipped("parking-lot"), &[]);
    let Err(tcplab_lab::linux_backend::LinuxError::Refused(r)) = tcplab_lab::linux_backend::check(&s) else {
        panic!("a network is refused on the kernel")
    };
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].key, "link");
    assert!(r[0].reason.contains("simulator only"), "{}", r[0].reason);
}
