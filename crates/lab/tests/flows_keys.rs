//! `msg` flows (the `tcp_msg` workload as a flow kind) and flow keys set and swept from the command line
//! (`--set flow[1].tcp.congestion_control=cubic`, `--sweep flow.1.access_delay=9ms,39ms`; issue 24 item 3).

use tcplab_lab::result::Point;
use tcplab_lab::run_point;
use tcplab_lab::sweep::{plan, RepeatFlags};
use tcplab_lab::{load, Scenario, Source, SHIPPED};

fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: "keys.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped")).text
}

fn run(s: &Scenario) -> Point {
    run_point(s, s.seed).expect("the flows come up").point
}

fn set_error(text: &str, set: &str) -> String {
    load(&Source { name: "keys.toml", text }, &[set.to_string()]).expect_err(set).to_string()
}

/// a - r - b: 100 Mbit/s and 5 ms, then 10 Mbit/s and 15 ms; one-way 20 ms.
const PATH: &str = r#"
name = "msg"
[test]
duration = "10s"
[[host]]
name = "a"
tcp = { nodelay = true, send_buffer = "8MiB", recv_buffer = "8MiB" }
[[host]]
name = "r"
[[host]]
name = "b"
tcp = { nodelay = true, send_buffer = "8MiB", recv_buffer = "8MiB" }
[[link]]
a = "a"
b = "r"
forward = { rate = "100mbit", delay = "5ms" }
[[link]]
a = "r"
b = "b"
forward = { rate = "10mbit", delay = "15ms", queue = "1000pkt" }
"#;

#[test]
fn a_paced_msg_flow_delivers_every_message_after_the_one_way_delay() {
    let text =
        format!("{PATH}[[flow]]\nkind = \"msg\"\nfrom = \"a\"\nto = \"b\"\nmessage = \"1KiB\"\ninterval = \"10ms\"\n");
    let p = run(&scenario(&text, &[]));
    let f = &p.flows[0];
    assert_eq!(f.kind, "msg");
    // One message every 10 ms: 100 per second, 1024 bytes each.
    let rate = f.messages_per_s.expect("a msg flow's rate");
    assert!((rate - 100.0).abs() < 1.0, "{f:?}");
    assert!((f.goodput_bps - 100.0 * 1024.0 * 8.0).abs() < 0.01 * 819_200.0, "{f:?}");
    // Each message is one segment on an idle path (TCP_NODELAY: Nagle would hold a message until the
    // last one is acknowledged): 20 ms of propagation, its frame's serialization at 100 and 10 Mbit/s
    // (1090 bytes: 0.09 + 0.87 ms), no queueing.
    let l = f.latency_us.as_ref().expect("one-way latency");
    // (A few messages wait longer: the window of an application-limited sender stays small, and
    // delayed ACKs hold it at times; p90 and below are the idle figure.)
    assert!((20_900.0..21_500.0).contains(&l.p50) && l.p90 < 21_500.0, "{l:?}");
    assert!(p.aggregate.as_ref().unwrap().stream_flows == 0);
}

#[test]
fn a_msg_flow_beside_a_bulk_flow_waits_for_the_fifo() {
    // The bulk flow keeps the 1000-frame FIFO filled (CUBIC's sawtooth between about half and all of it):
    // the median message waits most of its drain time, 1000 x 1538 B x 8 / 10 Mbit/s = 1.23 s, on top of
    // the idle latency.
    let text = format!(
        "{PATH}[[flow]]\nkind = \"stream\"\nfrom = \"a\"\nto = \"b\"\n[[flow]]\nkind = \"msg\"\nfrom = \"a\"\nto = \"b\"\n\
         message = \"100B\"\ninterval = \"50ms\"\n"
    );
    let p = run(&scenario(&text, &["test.duration=\"20s\""]));
    let msg = &p.flows[1];
    let l = msg.latency_us.as_ref().unwrap();
    let drain_us = 1000.0 * 1538.0 * 8.0 / 10e6 * 1e6;
    assert!(l.p50 > 20_000.0 + 0.5 * drain_us && l.p50 < 20_000.0 + 1.1 * drain_us, "p50 {} us", l.p50);
    assert!(p.flows[0].goodput_bps > 9e6, "{:?}", p.flows[0]);
}

#[test]
fn msg_keys_are_checked_by_kind() {
    let base = format!("{PATH}[[flow]]\nkind = \"stream\"\nfrom = \"a\"\nto = \"b\"\n");
    let e =
        load(&Source { name: "keys.toml", text: &format!("{base}interval = \"1ms\"\n") }, &[]).unwrap_err().to_string();
    assert!(e.contains("flow[0].interval") && e.contains("accepted with kind = \"msg\""), "{e}");
    let e = set_error(&base.replace("\"stream\"", "\"msg\""), "flow[0].interval=\"0s\"");
    assert!(e.contains("flow[0].interval") && e.contains("more than 0s"), "{e}");
    let e = set_error(&base, "flow[0].kind=bulk");
    assert!(e.contains("flow[0].kind") && e.contains("`msg`"), "{e}");
}

#[test]
fn set_reaches_a_flows_keys_in_either_spelling() {
    let text = shipped("cubic-vs-reno");
    let s = scenario(text, &["flow[1].tcp.congestion_control=cubic", "flow.0.start=\"1s\""]);
    let cc = |f: &tcplab_lab::scenario::Flow| serde_json::to_value(f.tcp.congestion_control).unwrap();
    assert_eq!((cc(&s.flow[0]), cc(&s.flow[1])), (serde_json::json!("cubic"), serde_json::json!("cubic")));
    assert_eq!(s.flow[0].start, "1s".parse().unwrap());
    // The flag is named in an error of the value it set, at the flow's key.
    let e = set_error(text, "flow.1.tcp.congestion_control=vegas");
    assert!(e.contains("flow.1.tcp.congestion_control=vegas") && e.contains("flow[1].tcp.congestion_control"), "{e}");
    let e = set_error(text, "flow[2].start=\"1s\"");
    assert!(e.contains("flow[2]: the scenario has 2 [[flow]] tables, flow[0] to flow[1]"), "{e}");
    let e = set_error(shipped("bulk-10m"), "flow[0].start=\"1s\"");
    assert!(e.contains("no [[flow]] tables"), "{e}");
    let e = set_error(text, "flow[0]=1");
    assert!(e.contains("cannot be set"), "{e}");
    // A network's hosts and links are reached the same way.
    let s =
        scenario(shipped("parking-lot"), &["link[1].forward.rate=\"5mbit\"", "host.4.tcp.congestion_control=cubic"]);
    assert_eq!(s.link[1].forward.rate, "5mbit".parse().unwrap());
    assert_eq!(s.link[1].backward.rate, "5mbit".parse().unwrap(), "backward is a copy of forward");
    assert_eq!(s.host[4].name, "l0");
    assert_eq!(serde_json::to_value(s.host[4].tcp.congestion_control).unwrap(), serde_json::json!("cubic"));
    assert_eq!(serde_json::to_value(s.flow[0].tcp.congestion_control).unwrap(), serde_json::json!("cubic"));
}

#[test]
fn a_sweep_of_a_flows_access_delay_moves_its_share() {
    let sweeps = vec!["flow.1.access_delay=9ms,39ms".to_string()];
    let p = plan(
        &Source { name: "rtt-fairness.toml", text: shipped("rtt-fairness") },
        &["test.duration=\"20s\"".to_string()],
        &sweeps,
        &RepeatFlags::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.len(), 2);
    let pts: Vec<Point> = (0..2).map(|i| run(&p.point(i).unwrap().scenario)).collect();
    assert_eq!(pts[0].flows[1].base_rtt_ms, 20.0);
    assert_eq!(pts[1].flows[1].base_rtt_ms, 80.0);
    // Equal RTTs share about evenly; at 4 times the RTT flow 1 gets far less than flow 0.
    let share = |p: &Point| p.flows[1].goodput_bps / p.flows[0].goodput_bps;
    assert!(share(&pts[0]) > 0.5 && share(&pts[0]) < 2.0, "{:?}", pts[0].flows);
    assert!(share(&pts[1]) < 0.5, "{:?}", pts[1].flows);
    // A bad value is reported at the axis.
    let bad = vec!["flow[1].access_delay=9ms,99s".to_string()];
    let e = plan(&Source { name: "r.toml", text: shipped("rtt-fairness") }, &[], &bad, &RepeatFlags::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("flow[1].access_delay") && e.contains("99s"), "{e}");
}
