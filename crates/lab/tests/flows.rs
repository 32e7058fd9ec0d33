//! Flows that share a bottleneck, from scenario files (`[dumbbell]` and `[[flow]]`, issue 24): the physics
//! of the shipped scenarios and of identical flows, and the errors of a bad flow.

use crate::common;

use tcplab_lab::result::Point;
use tcplab_lab::run_point;
use tcplab_lab::{load, Scenario, Source, SHIPPED};

fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: "flows.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped")).text
}

fn run(s: &Scenario) -> Point {
    run_point(s, s.seed).expect("the flows come up").point
}

fn error(text: &str) -> String {
    load(&Source { name: "flows.toml", text }, &[]).expect_err("refused").to_string()
}

const FOUR_CUBIC: &str = r#"
name = "four-cubic"
[dumbbell]
bottleneck = { rate = "100mbit", delay = "10ms", queue = "244pkt" }
[test]
duration = "60s"
"#;

#[test]
fn four_identical_cubic_flows_share_fairly() {
    // Equal RTTs (2 x (5 + 10) ms), a one-BDP buffer (30 ms x 100 Mbit/s = 244 full frames), 60 s.
    let flow = "[[flow]]\nkind = \"stream\"\ntcp = { congestion_control = \"cubic\", send_buffer = \"8MiB\", \
                recv_buffer = \"8MiB\" }\naccess_delay = \"5ms\"\n";
    let text = format!("{FOUR_CUBIC}{}", flow.repeat(4));
    let p = run(&scenario(&text, &[]));
    assert_eq!(p.flows.len(), 4);
    let a = p.aggregate.as_ref().expect("an aggregate");
    assert_eq!(a.stream_flows, 4);
    // The bottleneck is used: its payload share of 100 Mbit/s (1448 of 1538 bytes a frame), within 10%.
    assert!(a.goodput_bps > 0.9 * 100e6 * 1448.0 / 1538.0, "{a:?}");
    assert!(a.jain_index >= 0.98, "Jain's index {}: {:?}", a.jain_index, p.flows);
    // The aggregate is the flows' sum and the stream metrics say the same.
    let sum: f64 = p.flows.iter().map(|f| f.goodput_bps).sum();
    assert!((sum - a.goodput_bps).abs() < 1e-6 * sum);
    match &p.metrics {
        tcplab_lab::result::Metrics::Stream(m) => assert!((m.throughput_bps - sum).abs() < 1e-6 * sum),
        other => panic!("{other:?}"),
    }
    for f in &p.flows {
        assert_eq!((f.kind.as_str(), f.congestion_control.as_str(), f.base_rtt_ms), ("stream", "cubic", 30.0));
        // A standing queue of at most one BDP: SRTT between the base RTT and twice it.
        assert!((30.0..=60.0).contains(&f.smoothed_rtt_ms), "{f:?}");
    }
}

/// The rr flow's latency percentiles (µs) of bufferbloat under `qdisc`.
fn bufferbloat(qdisc: &str) -> (f64, f64) {
    let p = run(&scenario(shipped("bufferbloat"), &[&format!("dumbbell.bottleneck.qdisc.kind={qdisc}")]));
    let rr = p.flows.iter().find(|f| f.kind == "rr").expect("an rr flow");
    let l = rr.latency_us.as_ref().expect("rr latency");
    assert!(rr.transactions_per_s.unwrap() > 0.0);
    let bulk = &p.flows[0];
    // The bulk flow keeps the link busy under every qdisc: above 80% of 10 Mbit/s.
    assert!(bulk.goodput_bps > 8e6, "{qdisc}: {bulk:?}");
    (l.p50, l.p99)
}

#[test]
fn bufferbloat_rr_latency_rises_by_the_fifo_drain_time_and_falls_under_codel_and_fq_codel() {
    // The idle transaction: the rr flow alone on the same path (2 x 10 ms of propagation).
    let alone = shipped("bufferbloat").replacen("[[flow]]\nkind = \"stream\"", "[[flow]]\nkind = \"rr\"", 1);
    let alone =
        alone.replace("tcp = { congestion_control = \"cubic\", send_buffer = \"8MiB\", recv_buffer = \"8MiB\" }\n", "");
    let idle = run(&scenario(&alone, &["dumbbell.bottleneck.qdisc.kind=fifo"]));
    let base = idle.flows[1].latency_us.as_ref().unwrap().p50;
    assert!((20_000.0..21_500.0).contains(&base), "idle rr latency {base} us");
    // A full 1000-packet FIFO at 10 Mbit/s drains in 1000 x 1538 B x 8 / 10 Mbit/s = 1.2304 s.
    let drain_us = 1000.0 * 1538.0 * 8.0 / 10e6 * 1e6;
    let (_, fifo) = bufferbloat("fifo");
    let rise = fifo - base;
    assert!((rise - drain_us).abs() < 0.05 * drain_us, "p99 rise {rise:.0} us against the drain {drain_us:.0} us");
    let (_, codel) = bufferbloat("codel");
    assert!(codel < fifo / 10.0, "CoDel p99 {codel} us against the FIFO's {fifo} us");
    // FQ-CoDel gives the rr flow's packets their own queue: no wait behind the bulk flow's.
    let (_, fq) = bufferbloat("fq_codel");
    assert!(fq < codel, "FQ-CoDel p99 {fq} us against CoDel's {codel} us");
    assert!(fq < base + 2_000.0, "FQ-CoDel p99 {fq} us against the idle {base} us");
}

#[test]
fn reno_shares_by_the_power_of_the_rtt_ratio_its_loss_episodes_give() {
    // Reno's sawtooth (Lakshman & Madhow, IEEE/ACM ToN 5(3), 1997, §V; the same model as Mathis et al.,
    // CCR 27(3), 1997, with the loss rate counted per second instead of per packet): a flow that halves
    // λ times a second and grows by a fixed amount each RTT averages a throughput ∝ 1/(λ RTT²), RTT the
    // mean RTT it sees (propagation plus queue). Synchronized drop-tail losses (equal λ) give k = 2;
    // losses independent of the flow (λ ∝ throughput) give k = 1. Here neither holds: each overflow of
    // the 25-frame queue costs the 20 ms flow a loss and the 80 ms flow about one time in three (docs/
    // topology.md § RTT fairness), so k = 2 - ln(λ_short/λ_long)/ln(RTT_long/RTT_short).
    let p = run(&scenario(shipped("rtt-fairness"), &[]));
    assert_eq!((p.flows[0].base_rtt_ms, p.flows[1].base_rtt_ms), (20.0, 80.0));
    let senders: Vec<_> = p.connections.iter().filter(|c| c.side == "client").map(common::estats).collect();
    let (short, long) = (&senders[0], &senders[1]);
    assert_eq!((short.MinRTT, long.MinRTT), (20.0, 80.0), "the senders in flow order");
    let mean_rtt = |e: &tcplab_tcp::Estats| e.SumRTT / e.CountRTT as f64;
    let rtt_ratio = mean_rtt(long) / mean_rtt(short);
    // The queue (3 ms at most) adds little: the mean RTTs are the propagation's within 2.5 ms.
    assert!(mean_rtt(short) < 22.5 && mean_rtt(long) < 82.5, "{} {}", mean_rtt(short), mean_rtt(long));
    let episodes = short.CongSignals as f64 / long.CongSignals as f64;
    let ratio = p.flows[0].goodput_bps / p.flows[1].goodput_bps;
    // Partly synchronized: the long flow loses in fewer episodes than the short one (not k = 2), and
    // the short flow's loss episodes do not grow with its share of the packets (not k = 1).
    assert!(episodes > 1.5 && episodes < ratio / 1.5, "episodes {episodes:.2}, ratio {ratio:.2}");
    let k = 2.0 - episodes.ln() / rtt_ratio.ln();
    let predicted = rtt_ratio.powf(k);
    assert!(
        (ratio / predicted - 1.0).abs() <= 0.25,
        "ratio {ratio:.2} against (RTT ratio {rtt_ratio:.2})^{k:.2} = {predicted:.2}"
    );
    // Neither pure regime is within 25 %.
    for pure in [1.0, 2.0] {
        assert!((ratio / rtt_ratio.powf(pure) - 1.0).abs() > 0.25, "k = {pure} fits too: {ratio:.2}");
    }
}

#[test]
fn cubic_takes_more_than_reno_at_one_bdp() {
    let p = run(&scenario(shipped("cubic-vs-reno"), &["test.duration=\"20s\""]));
    let (cubic, reno) = (&p.flows[0], &p.flows[1]);
    assert_eq!((cubic.congestion_control.as_str(), reno.congestion_control.as_str()), ("cubic", "reno"));
    assert!(cubic.goodput_bps > reno.goodput_bps, "{cubic:?} {reno:?}");
    assert!(p.aggregate.unwrap().jain_index < 0.98);
}

#[test]
fn a_flow_starting_later_joins_the_measurement() {
    let text = format!(
        "{FOUR_CUBIC}[[flow]]\nkind = \"stream\"\naccess_delay = \"5ms\"\n[[flow]]\nkind = \"stream\"\n\
         access_delay = \"5ms\"\nstart = \"5s\"\n"
    );
    let p = run(&scenario(&text, &["test.duration=\"10s\""]));
    assert!(p.flows[1].goodput_bps > 0.0, "{:?}", p.flows[1]);
    assert!(p.flows[1].delivered_bytes < p.flows[0].delivered_bytes, "{:?}", p.flows);
}

const BASE: &str = "name = \"bad\"\n[dumbbell]\nbottleneck = { rate = \"10mbit\" }\n[test]\nduration = \"1s\"\n";

#[test]
fn a_bad_flow_key_is_named_with_its_line_and_the_accepted_values() {
    // Line 8: the second flow's misspelt key.
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\n[[flow]]\nacess_delay = \"5ms\"\nkind = \"rr\"\n"));
    assert!(e.starts_with("flows.toml:9: flow[1].acess_delay"), "{e}");
    assert!(e.contains("access_delay") && e.contains("start"), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"bulk\"\n"));
    assert!(e.starts_with("flows.toml:7: flow[0].kind"), "{e}");
    assert!(e.contains("`stream`") && e.contains("`rr`"), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"rr\"\nmessage = \"1KiB\"\n"));
    assert!(e.starts_with("flows.toml:8: flow[0].message"), "{e}");
    assert!(e.contains("accepted with kind = \"stream\""), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\ntcp = {{ congestion_control = \"vegas\" }}\n"));
    assert!(e.starts_with("flows.toml:8: flow[0].tcp.congestion_control"), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\nstart = \"1s\"\n"));
    assert!(e.starts_with("flows.toml:8: flow[0].start") && e.contains("less than test.duration"), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\nstack = \"bsd\"\n"));
    assert!(e.starts_with("flows.toml:8: flow[0].stack") && e.contains("\"linux\""), "{e}");
}

#[test]
fn two_host_keys_beside_a_dumbbell_are_refused() {
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\n[path.up]\nrate = \"1mbit\"\n"));
    assert!(e.contains("path") && e.contains("not used with [dumbbell]"), "{e}");
    let e = error(&BASE.replace("duration = \"1s\"", "kind = \"tcp_rr\"\nduration = \"1s\""));
    assert!(
        e.starts_with("flows.toml:5: test.kind") && e.contains("accepted in [test] beside [dumbbell]: duration"),
        "{e}"
    );
    let e = error(&format!("{BASE}[client]\nstack = \"linux\"\n[[flow]]\nkind = \"stream\"\n"));
    assert!(e.contains("client") && e.contains("not used with [dumbbell]"), "{e}");
    let e = error(BASE);
    assert!(e.contains("dumbbell") && e.contains("[[flow]]"), "{e}");
    let e = error("name = \"x\"\n[path.up]\nrate = \"1mbit\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n[[flow]]\nkind = \"rr\"\n");
    assert!(e.contains("flow") && e.contains("needs a [dumbbell]"), "{e}");
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\n").replace("[test]\nduration = \"1s\"\n", ""));
    assert!(e.contains("test.duration") && e.contains("missing"), "{e}");
}

#[test]
fn the_linux_backend_refuses_a_dumbbell_by_name() {
    let s = scenario(shipped("bufferbloat"), &[]);
    let Err(tcplab_lab::linux_backend::LinuxError::Refused(r)) = tcplab_lab::linux_backend::check(&s) else {
        panic!("a dumbbell is refused on the kernel")
    };
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].key, "dumbbell");
    assert!(r[0].reason.contains("simulator only"), "{}", r[0].reason);
}

#[test]
fn two_host_points_have_no_flows() {
    let s = scenario(shipped("bulk-10m"), &["test.duration=\"1s\""]);
    let p = run(&s);
    assert!(p.flows.is_empty() && p.aggregate.is_none());
    let v = serde_json::to_value(&p).unwrap();
    assert!(v.get("flows").is_none() && v.get("aggregate").is_none());
}

#[test]
fn numbers_out_of_range_are_reported_at_the_dumbbell_and_flow_keys() {
    let e = error(&format!("{BASE}[[flow]]\nkind = \"stream\"\n").replace("\"10mbit\"", "\"100bit\""));
    assert!(e.starts_with("flows.toml:3: dumbbell.bottleneck.rate: 100bit: accepted 300bit"), "{e}");
    let e = error(&format!(
        "{BASE}[[flow]]\nkind = \"stream\"\n[[flow]]\nkind = \"stream\"\ntcp = {{ recv_window_ratio = 9.0 }}\n"
    ));
    assert!(e.starts_with("flows.toml:10: flow[1].tcp.recv_window_ratio"), "{e}");
}
