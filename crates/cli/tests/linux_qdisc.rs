//! The Linux backend's emulator runs the simulator's stages (issue 24 item 5): a CoDel bottleneck on the
//! kernel's TCP keeps the standing sojourn near its target, its CE marks reach the kernel on real packets,
//! and `tcplab compare` sets two streams sharing the bottleneck side by side, with a FIFO and with CoDel.
//!
//! Every test needs root and Linux: elsewhere it is reported as ignored with the reason, except under
//! CI=true, where it fails (tcplab-testkit's harness). Each run is a few seconds at 10 Mbit/s, gentle on a
//! small machine.

use crate::common;

use common::{linux_ready, run_on, TWO_STREAMS};
use std::process::Output;

use serde_json::Value;
use tcplab_testkit::Outcome;

/// [`TWO_STREAMS`] (two CUBIC streams filling a 1000-packet FIFO) with `tcplab CMD` and `extra` flags.
fn tcplab(cmd: &str, extra: &[&str]) -> Output {
    run_on(cmd, TWO_STREAMS, extra)
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).expect("a JSON document on stdout")
}

fn codel_on_the_kernel_keeps_the_sojourn_near_target() -> Outcome {
    linux_ready()?;
    let doc = json(&tcplab(
        "run",
        &["--backend", "linux", "--set", "path.up.qdisc={kind=\"codel\"}", "--json", "-", "--quiet"],
    ));
    let p = &doc["points"][0];
    let q = &p["links"]["up"]["qdisc"];
    assert!(q.is_object(), "the qdisc's counters, as the simulator reports them: {}", p["links"]);
    // CoDel (target 5 ms) dropped at the head, never at the limit, and held the mean sojourn within
    // [target/2, 4 x target] while the streams had more than a megabyte of window each.
    assert!(q["drops_aqm"].as_u64().unwrap() > 0, "{q}");
    assert_eq!(q["drops_overlimit"], 0, "{q}");
    let sojourn = q["sojourn_mean_ms"].as_f64().unwrap();
    assert!((2.5..=20.0).contains(&sojourn), "mean sojourn {sojourn} ms: {q}");
    assert_eq!(p["links"]["up"]["drops_queue_full"], 0);
    // The senders see it: their smoothed RTT near the 40 ms path's, not a standing queue's.
    for c in p["connections"].as_array().unwrap().iter().filter(|c| c["side"] == "client") {
        let srtt = c["estats"]["SmoothedRTT"].as_f64().unwrap();
        assert!(srtt < 80.0, "sender SmoothedRTT {srtt} ms");
    }
    let goodput = p["metrics"]["throughput_bps"].as_f64().unwrap();
    assert!(goodput > 0.85 * 10e6 * 1448.0 / 1538.0, "{goodput} bit/s");
    Ok(())
}

fn codel_marks_reach_the_kernel_as_ce_on_real_packets() -> Outcome {
    linux_ready()?;
    let doc = json(&tcplab(
        "run",
        &[
            "--backend",
            "linux",
            "--set",
            "path.up.qdisc={kind=\"codel\", ecn=true}",
            "--set",
            "client.tcp.ecn=\"on\"",
            "--set",
            "server.tcp.ecn=\"on\"",
            "--json",
            "-",
            "--quiet",
        ],
    ));
    let p = &doc["points"][0];
    let q = &p["links"]["up"]["qdisc"];
    // Marked instead of dropped: the kernel took the marked packets (their IPv4 checksum verifies, or they
    // would be lost and resent) and slowed down on the echoed ECE.
    assert!(q["marks"].as_u64().unwrap() > 0, "{q}");
    assert_eq!(q["drops_aqm"], 0, "{q}");
    assert_eq!(p["metrics"]["retransmissions"], 0, "{}", p["metrics"]);
    assert_eq!(p["health"]["hidden_drops"], 0, "{}", p["health"]);
    let sojourn = q["sojourn_mean_ms"].as_f64().unwrap();
    assert!((2.5..=20.0).contains(&sojourn), "mean sojourn {sojourn} ms: {q}");
    Ok(())
}

/// The `summary` rows of `tcplab compare --json -`, by figure.
fn summary(doc: &Value) -> impl Fn(&str) -> (f64, f64) + '_ {
    move |figure: &str| {
        let row = doc["summary"].as_array().unwrap().iter().find(|r| r["figure"] == figure);
        let row = row.unwrap_or_else(|| panic!("no row {figure:?}: {}", doc["summary"]));
        (row["sim"].as_f64().unwrap(), row["linux"].as_f64().unwrap())
    }
}

fn compare_sets_two_streams_side_by_side_with_a_fifo_and_with_codel() -> Outcome {
    linux_ready()?;
    let fifo = json(&tcplab("compare", &["--set", "test.duration=\"3s\"", "--json", "-"]));
    let codel = json(&tcplab(
        "compare",
        &["--set", "test.duration=\"3s\"", "--set", "path.up.qdisc={kind=\"codel\"}", "--json", "-"],
    ));
    for doc in [&fifo, &codel] {
        let row = summary(doc);
        let (sim, linux) = row("throughput, Mbit/s");
        let (s1, l1) = row("stream 1 goodput, Mbit/s");
        let (s2, l2) = row("stream 2 goodput, Mbit/s");
        // The streams share the measured throughput, ranked by goodput on each backend.
        assert!((s1 + s2 - sim).abs() < 1e-6 * sim && (l1 + l2 - linux).abs() < 1e-6 * linux);
        assert!(s1 >= s2 && l1 >= l2);
        let (js, jl) = row("Jain's index of the streams");
        assert!((0.5..=1.0).contains(&js) && (0.5..=1.0).contains(&jl), "{js} {jl}");
        row("stream 2 sender SmoothedRTT");
        row("up queue drops");
        assert_eq!(doc["linux"][0]["backend"], "linux");
    }
    // With CoDel both backends report its counters; its queue keeps the RTT far below the FIFO's.
    let row = summary(&codel);
    let (sim_drops, linux_drops) = row("up qdisc AQM drops");
    assert!(sim_drops > 0.0 && linux_drops > 0.0, "{sim_drops} {linux_drops}");
    let (_, codel_rtt) = row("stream 1 sender SmoothedRTT");
    let (_, fifo_rtt) = summary(&fifo)("stream 1 sender SmoothedRTT");
    assert!(fifo_rtt > 3.0 * codel_rtt, "FIFO {fifo_rtt} ms against CoDel {codel_rtt} ms");
    assert!(fifo["summary"].as_array().unwrap().iter().all(|r| r["figure"] != "up qdisc AQM drops"));
    Ok(())
}

tcplab_testkit::tests!(
    codel_on_the_kernel_keeps_the_sojourn_near_target,
    codel_marks_reach_the_kernel_as_ce_on_real_packets,
    compare_sets_two_streams_side_by_side_with_a_fifo_and_with_codel,
);
