//! TCP knobs in whole runs: the effect each is documented to have, on a small scenario.

use crate::common;

use tcplab_lab::ResultDoc;

fn run(text: &str, set: &[&str]) -> ResultDoc {
    common::run_scenario(&common::scenario(text, set), 1)
}

const STREAM_10M: &str = r#"
name = "stream-10m"
[path.up]
rate = "10mbit"
delay = "20ms"
queue = "1000pkt"
[test]
kind = "tcp_stream"
duration = "30s"
message = "64KiB"
send_buffer = "1MiB"
recv_buffer = "1MiB"
"#;

#[test]
fn ack_avoidance_sends_one_ack_per_k_segments() {
    for k in [4u32, 8] {
        let max = format!("server.tcp.deferred_ack_max={k}");
        let doc = run(STREAM_10M, &["server.tcp.ack_policy=\"avoidance\"", &max]);
        let p = &doc.points[0];
        let (client, server) = (&common::estats(&p.connections[0]), &common::estats(&p.connections[1]));
        let ratio = server.SegsOut as f64 / client.DataSegsOut as f64;
        let want = 1.0 / k as f64;
        assert!((ratio - want).abs() < 0.15 * want, "K = {k}: {ratio:.4} ACKs per data segment, expected {want:.4}");
    }
    let doc = run(STREAM_10M, &[]);
    let p = &doc.points[0];
    let ratio = common::estats(&p.connections[1]).SegsOut as f64 / common::estats(&p.connections[0]).DataSegsOut as f64;
    assert!((ratio - 0.5).abs() < 0.02, "delayed ACK: {ratio} ACKs per data segment, expected 1/2");
}

const NIC_LIMITED: &str = r#"
name = "sendstall"
description = "The sender's NIC runs at the path rate with a short txqueuelen: its queue is the bottleneck"
[path.up]
rate = "100mbit"
delay = "10ms"
queue = "10000pkt"
[client]
host = { nic_rate = "100mbit", txqueuelen = 20 }
[test]
kind = "tcp_stream"
duration = "20s"
message = "64KiB"
send_buffer = "4MiB"
recv_buffer = "4MiB"
"#;

#[test]
fn full_interface_queue_under_cwr_is_a_congestion_signal_without_network_loss() {
    let doc = run(NIC_LIMITED, &["client.tcp.ifq_full=\"cwr\""]);
    let p = &doc.points[0];
    let e = &common::estats(&p.connections[0]);
    assert!(e.SendStall > 0 && e.CongSignals > 0, "SendStall {} CongSignals {}", e.SendStall, e.CongSignals);
    assert_eq!(p.links.up.drops_queue_full + p.links.up.drops_random_loss, 0, "no network loss");
    assert_eq!(e.FastRetran + e.Timeouts, 0, "nothing was lost");
    assert_eq!(e.CongSignals, e.SendStall.min(e.CongSignals), "every signal here is a stall");
    assert!(e.SndLimTimeCwnd > 0.0);

    // `block` waits for room: stalls, but no congestion signal and full speed.
    let doc = run(NIC_LIMITED, &["client.tcp.ifq_full=\"block\""]);
    let p = &doc.points[0];
    let e = &common::estats(&p.connections[0]);
    assert!(e.SendStall > 0);
    assert_eq!(e.CongSignals, 0);
    let bound = 100e6 * 1448.0 / 1538.0;
    assert!(common::stream(p).throughput_bps > 0.98 * bound, "{} vs {bound}", common::stream(p).throughput_bps);

    // `drop` sends into the full queue: the NIC drops, and loss recovery repairs it.
    let doc = run(NIC_LIMITED, &["client.tcp.ifq_full=\"drop\""]);
    let p = &doc.points[0];
    let e = &common::estats(&p.connections[0]);
    assert_eq!(e.SendStall, 0);
    assert!(p.links.nic_client.refused_full > 0 && e.SegsRetrans > 0 && e.CongSignals > 0);
}

#[test]
fn reductions_are_counted_under_their_cause() {
    // Each cwnd reduction lands in the counter of its cause: losses in CongSignals (one per fast
    // retransmit or timeout), moderation in OtherReductions. (That every reduction is counted at all is
    // checked event by event in crates/tcp, test_established_every_cwnd_reduction_is_counted.)
    let lossy = ["path.up.loss={model=\"bernoulli\",p=0.002}", "path.up.queue=\"100pkt\""];
    let doc = run(STREAM_10M, &lossy);
    let e = &common::estats(&doc.points[0].connections[0]);
    assert!(e.CongSignals > 0);
    assert_eq!(e.CongSignals, e.FastRetran + e.Timeouts, "loss signals only");
    assert_eq!(e.OtherReductions, 0, "no validation, no moderation, no idle");
    // Moderation (2.4's tcp_moderate_cwnd, from tcp_try_to_open) runs on dubious ACKs, such as the
    // duplicate ACKs before fast retransmit: with a 32 KiB receive window the flight stays far below a
    // cwnd that grew unchecked (no validation here), and those ACKs clamp it to in flight + 3 segments.
    let mut set = lossy.to_vec();
    set.extend(["client.tcp.max_burst=3", "test.recv_buffer=\"32KiB\""]);
    let doc = run(STREAM_10M, &set);
    let e = &common::estats(&doc.points[0].connections[0]);
    assert_eq!(e.CongSignals, e.FastRetran + e.Timeouts);
    assert!(e.OtherReductions > 0, "moderation clamps a cwnd the window-limited flight left unused");
}

#[test]
fn sender_limit_states_account_for_the_whole_transfer() {
    // A window-limited transfer is Rwin-limited nearly all the time.
    let doc = run(STREAM_10M, &["test.recv_buffer=\"16KiB\""]);
    let e = &common::estats(&doc.points[0].connections[0]);
    let total = e.SndLimTimeRwin + e.SndLimTimeCwnd + e.SndLimTimeSnd;
    assert!(e.SndLimTimeRwin > 0.9 * total, "Rwin {} of {total} ms", e.SndLimTimeRwin);
    assert!(total > 30_000.0, "the states cover the run: {total} ms");
}

#[test]
fn congestion_window_validation_stops_growth_the_sender_cannot_use() {
    // A 32 KiB receive window on a 100 Mbit/s, 100 ms RTT path: the sender never uses more than 32 KiB.
    let text = include_str!("../../../scenarios/window-limited.toml");
    let cwnd = |cwv: &str| {
        let set = format!("client.tcp.cwv=\"{cwv}\"");
        let doc = run(text, &[&set]);
        (common::estats(&doc.points[0].connections[0]).CurCwnd, common::stream(&doc.points[0]).throughput_bps)
    };
    let window = 32_768;
    let (off, t_off) = cwnd("off");
    let (rfc2861, t2861) = cwnd("rfc2861");
    let (rfc7661, t7661) = cwnd("rfc7661");
    assert!(off > 20 * window, "without validation cwnd grows on every ACK: {off}");
    assert!(rfc2861 <= window + 2 * 1448, "RFC 2861: no growth beyond what is used: {rfc2861}");
    // RFC 7661 stops growth once pipeACK < cwnd/2; a slow-start round can overshoot that by one doubling.
    assert!(rfc7661 <= 4 * window, "RFC 7661: {rfc7661}");
    for t in [t2861, t7661] {
        assert!((t - t_off).abs() / t_off < 0.01, "validation does not change a window-limited transfer's rate");
    }
}

#[test]
fn a_txqueuelen_without_a_nic_rate_is_an_error_saying_to_set_one() {
    let text = "name = \"q\"\n[path.up]\nrate = \"1gbit\"\ndelay = \"1ms\"\n[client]\nhost = { txqueuelen = 100 }\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n";
    let e = tcplab_lab::load(&tcplab_lab::Source { name: "q.toml", text }, &[]).unwrap_err().to_string();
    assert!(e.starts_with("q.toml:6: client.host.txqueuelen") && e.contains("nic_rate"), "{e}");
    let set = vec!["client.host.nic_rate=\"1gbit\"".to_string()];
    assert!(tcplab_lab::load(&tcplab_lab::Source { name: "q.toml", text }, &set).is_ok());
}

#[test]
fn a_start_spread_keeps_many_flows_from_losing_their_initial_windows_together() {
    // 200 flows into a 100-packet queue: started together, their initial windows overflow it at once and
    // many flows wait for a retransmission timeout; spread over 20 ms (100 us apart), nearly none do.
    let text = r#"
name = "spread"
[path.up]
rate = "1gbit"
delay = "5ms"
queue = "100pkt"
[test]
kind = "tcp_stream"
duration = "2s"
message = "64KiB"
send_buffer = "256KiB"
recv_buffer = "256KiB"
parallel = 200
"#;
    let timeouts = |set: &[&str]| {
        let doc = run(text, set);
        doc.points[0].connections.iter().map(|c| common::estats(c).Timeouts).sum::<u64>()
    };
    let together = timeouts(&[]);
    let spread = timeouts(&["test.start_spread=\"20ms\""]);
    assert!(together >= 20 && spread * 10 <= together, "timeouts: {together} together, {spread} spread");
}

#[test]
fn receive_coalescing_defaults_by_personality_and_refuses_a_hold_beyond_10ms() {
    let text = "name = \"g\"\n[path.up]\nrate = \"1gbit\"\ndelay = \"1ms\"\n[server]\nstack = \"linux\"\nhost = { rx_coalesce = \"20ms\" }\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n";
    let load = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        tcplab_lab::load(&tcplab_lab::Source { name: "g.toml", text }, &set)
    };
    let e = load(&[]).unwrap_err().to_string();
    assert!(e.starts_with("g.toml:7: server.host.rx_coalesce") && e.contains("0s (off) to 10ms"), "{e}");
    let s = load(&["server.host.rx_coalesce=\"0s\""]).unwrap();
    assert_eq!(s.server.host.rx_coalesce(), tcplab_units::Duration::ZERO);
    // Unset: `linux` hosts coalesce for 50 us, the older personalities not at all.
    let s = load(&["server.host={}"]).unwrap();
    assert_eq!(s.server.host.rx_coalesce(), tcplab_units::Duration::from_micros(50));
    assert_eq!(s.client.host.rx_coalesce(), tcplab_units::Duration::ZERO);
}

#[test]
fn a_coalescing_receiver_acks_each_batch_of_a_saturated_gigabit_path() {
    // Frames 12.3 us apart, a 50 us hold: batches of 5 frames, one ACK each (the default ACKs every 2).
    let text = r#"
name = "gro"
[path.up]
rate = "1gbit"
delay = "1ms"
queue = "100pkt"
[test]
kind = "tcp_stream"
duration = "2s"
message = "64KiB"
send_buffer = "16MiB"
recv_buffer = "16MiB"
"#;
    let per_ack = |set: &[&str]| {
        let doc = run(text, set);
        let ends = &doc.points[0].connections;
        let rx = ends.iter().find(|c| c.side == "server").expect("the server's end");
        rx.estats["DataSegsIn"].as_f64().unwrap() / rx.estats["SegsOut"].as_f64().unwrap()
    };
    let plain = per_ack(&[]);
    let gro = per_ack(&["server.host.rx_coalesce=\"50us\""]);
    assert!((1.95..=2.0).contains(&plain), "{plain}");
    assert!((4.5..=5.0).contains(&gro), "{gro} data segments per ACK");
}
