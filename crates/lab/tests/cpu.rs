//! `host.cpu` in a scenario: the cost model's figures in the metrics, and its validation.

use crate::common;

use tcplab_lab::result::Metrics;

const BULK: &str = r#"
name = "cpu"
[path.up]
rate = "100mbit"
delay = "1ms"
queue = "100pkt"
[client]
stack = "rfc"
tcp = { ack_policy = "every" }
[server]
stack = "rfc"
tcp = { ack_policy = "every" }
host = { cpu = { cores = 2, per_segment_in = "20us", per_ack_out = "2us", per_kb_copy = "1us" } }
[test]
kind = "tcp_stream"
duration = "5s"
send_buffer = "1MiB"
recv_buffer = "1MiB"
"#;

#[test]
fn service_demand_and_utilization_come_from_the_configured_costs() {
    let doc = common::run_scenario(&common::scenario(BULK, &[]), 1);
    let Metrics::Stream(m) = &doc.points[0].metrics else { panic!("a stream test") };
    let cpu = m.cpu.as_ref().expect("the server has a CPU model");
    assert_eq!(cpu.cpu_source, "modeled");
    assert!(cpu.cpu_util_percent.local.is_none(), "the client has no model");
    // Per full segment (ACK for every segment): 20 us in + 2 us ACK out, and 1 us per KB of copy.
    let expected = 22.0 / (1448.0 / 1024.0) + 1.0;
    let got = cpu.service_demand_us_per_kb.remote.unwrap();
    assert!((got / expected - 1.0).abs() < 0.02, "{got} us/KB vs {expected}");
    // Utilization: that demand at the measured goodput, over two cores.
    let util = expected * (m.throughput_bps / 8.0 / 1024.0) / 1e6 / 2.0 * 100.0;
    let got = cpu.cpu_util_percent.remote.unwrap();
    assert!((got / util - 1.0).abs() < 0.02, "{got}% vs {util}%");
}

#[test]
fn without_a_model_there_are_no_cpu_figures_in_the_json() {
    let doc = common::run_scenario(&common::scenario(BULK, &["server.host={}"]), 1);
    let json = serde_json::to_value(&doc.points[0].metrics).unwrap();
    assert!(json.get("cpu_util_percent").is_none() && json.get("service_demand_us_per_kb").is_none(), "{json}");
}

#[test]
fn bad_cpu_keys_are_errors_at_their_key() {
    let bad = |set: &str| {
        let set = vec![set.to_string()];
        tcplab_lab::load(&tcplab_lab::Source { name: "cpu.toml", text: BULK }, &set).unwrap_err().to_string()
    };
    let e = bad("server.host.cpu.cores=0");
    assert!(e.contains("server.host.cpu.cores") && e.contains("accepted 1 to 1024"), "{e}");
    let e = bad("server.host.cpu.per_packet=\"1us\"");
    assert!(e.contains("per_packet") && e.contains("per_segment_in"), "{e}");
    let e = bad("server.host.cpu.per_call=\"fast\"");
    assert!(e.contains("server.host.cpu.per_call"), "{e}");
}

/// A call takes time: a receiver bound by its copy (10 us per KB, one core) behind a 10 Gbit/s path reads
/// later, its buffer fills, the window closes and the host sets the rate, 1024 x 8 bit / 10 us = 819.2
/// Mbit/s, with a service demand of the configured 10 us/KB and a utilization of at most 100 %.
#[test]
fn a_copy_bound_receiver_sets_the_rate_and_its_service_demand_is_the_copy() {
    let text = r#"
name = "copy"
[path.up]
rate = "10gbit"
delay = "50us"
queue = "1000pkt"
[client]
stack = "linux"
[server]
stack = "linux"
host = { cpu = { cores = 1, per_kb_copy = "10us" } }
[test]
kind = "tcp_stream"
duration = "1s"
send_buffer = "1MiB"
recv_buffer = "1MiB"
"#;
    let doc = common::run_scenario(&common::scenario(text, &[]), 1);
    let Metrics::Stream(m) = &doc.points[0].metrics else { panic!("a stream test") };
    let cpu = m.cpu.as_ref().expect("the server has a CPU model");
    let (util, demand) = (cpu.cpu_util_percent.remote.unwrap(), cpu.service_demand_us_per_kb.remote.unwrap());
    assert!((m.throughput_bps / 819.2e6 - 1.0).abs() < 0.02, "{} bit/s", m.throughput_bps);
    assert!((demand / 10.0 - 1.0).abs() < 0.02, "{demand} us/KB");
    assert!(util <= 100.0 && util > 98.0, "{util} %");
}
