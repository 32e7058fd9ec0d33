//! `tcp_msg` against analytic results: 1-byte messages back to back over 100 Mbit/s Ethernet (NODELAY and
//! every-segment ACKs: one minimum frame per message; Nagle: full segments, many messages per frame; Nagle
//! against a delayed ACK), the one-way latency of paced messages on an idle path, and the delayed-ACK stalls
//! of Linux 2.2 that Linux 2.4 does not have.

use crate::common;

use common::{msg, run_scenario, scenario};

/// Two hosts on 100 Mbit/s Ethernet: the sender's NIC runs at the link's rate, so it is the bottleneck
/// and its queue (100 frames, Linux 2.4's Ethernet default) is where a writer faster than the wire waits.
const LAN: &str = r#"
name = "msg-lan"
[path.up]
rate = "100mbit"
delay = "20us"
queue = "100pkt"
[client.host]
nic_rate = "100mbit"
txqueuelen = 100
[server.host]
nic_rate = "100mbit"
txqueuelen = 100
[test]
kind = "tcp_msg"
message = "1B"
messages = 100000
"#;

/// Nanoseconds to serialize `wire` bytes at 100 Mbit/s (80 ns a byte).
fn ns_at_100m(wire: u64) -> f64 {
    wire as f64 * 80.0
}

#[test]
fn nodelay_with_every_segment_acked_sends_one_minimum_frame_per_message() {
    // Without timestamps a 1-byte segment is 20 + 20 + 1 = 41 bytes of IP, padded to Ethernet's 46-byte
    // minimum payload, plus 38 bytes of preamble, header, FCS and gap: 84 bytes, 6.72 us at 100 Mbit/s.
    // Each message is its own send call and NODELAY sends it at once; nothing else holds it (cwnd counts
    // bytes here and every segment is ACKed), so the writer waits only for room in the NIC's queue and one
    // message leaves per frame time. Over N messages the time to the last delivery is N frame times plus
    // one link serialization and the propagation delay, so the mean gap is the frame time within
    // (6.72 + 20) us / N.
    let set = [
        "client.tcp.nodelay=true",
        "server.tcp.ack_policy=\"every\"",
        "client.tcp.timestamps=false",
        "server.tcp.timestamps=false",
    ];
    let doc = run_scenario(&scenario(LAN, &set), 1);
    let m = msg(&doc.points[0]);
    let frame_us = ns_at_100m(84) / 1e3;
    eprintln!("nodelay/every: {:?} {:?}", m.time_per_message_us, m.latency_us);
    assert_eq!(m.messages, 100_000);
    assert!((m.time_per_message_us.mean - frame_us).abs() / frame_us < 0.02, "{} us", m.time_per_message_us.mean);
    // Steady state: every gap is the frame time (to the HDR histogram's 3 digits).
    assert!((m.time_per_message_us.p50 - frame_us).abs() / frame_us < 1e-3);
    assert!((m.time_per_message_us.p99_9 - frame_us).abs() / frame_us < 1e-3);
    // mean = elapsed / N: the window ends at the last delivery.
    assert!((m.time_per_message_us.mean * 1e-6 * 1e5 - m.elapsed_s).abs() < 1e-9);
    // A message waits behind the 100 frames of the NIC's queue, then crosses the NIC and the link (one
    // frame time each) and 20 us of propagation.
    let latency = 100.0 * frame_us + 2.0 * frame_us + 20.0;
    assert!((m.latency_us.p50 - latency).abs() / latency < 2e-3, "{} vs {latency}", m.latency_us.p50);
    assert_eq!(m.retransmissions, 0);
    let client = common::estats(&doc.points[0].connections[0]);
    assert_eq!(client.DataSegsOut, 100_000, "one segment per message");
    // The writer waits for the NIC; TCP finds it full once: the last message leaves at its own send()
    // (tcp_push per call), so the FIN that close() queues next goes alone and finds the NIC full.
    assert!(client.SendStall <= 1, "the writer waits for the NIC: {} stalls", client.SendStall);

    // With timestamps (12 bytes of option) the frame is 53 + 38 = 91 bytes: 7.28 us.
    let doc = run_scenario(&scenario(LAN, &set[..2]), 1);
    let m = msg(&doc.points[0]);
    let frame_us = ns_at_100m(91) / 1e3;
    assert!((m.time_per_message_us.mean - frame_us).abs() / frame_us < 0.02, "{} us", m.time_per_message_us.mean);
}

#[test]
fn nagle_gathers_messages_into_full_segments_below_one_minimum_frame_each() {
    // With Nagle the first message leaves alone and the next ones wait in the send buffer while it is
    // unacknowledged; by the time its ACK is back the writer has queued more than an MSS, so from then on
    // every segment is full: 1448 messages (MSS 1460 less 12 bytes of timestamps) per 1538-byte frame,
    // 123.04 us, i.e. 0.085 us per message, far below the 7.28 us of a minimum frame. The start (one
    // round trip for the first ACK) and the end (the last partial segment) add little over 1,000,000
    // messages.
    let doc = run_scenario(&scenario(LAN, &["server.tcp.ack_policy=\"every\"", "test.messages=1000000"]), 1);
    let m = msg(&doc.points[0]);
    let per_message = ns_at_100m(1538) / 1448.0 / 1e3;
    eprintln!("nagle/every: {:?}", m.time_per_message_us);
    assert_eq!(m.messages, 1_000_000);
    assert!(m.time_per_message_us.mean < ns_at_100m(91) / 1e3 / 10.0);
    assert!(
        (m.time_per_message_us.mean - per_message).abs() / per_message < 0.02,
        "{} vs {per_message} us",
        m.time_per_message_us.mean
    );
    // Messages arrive 1448 at a time: most gaps are zero.
    assert_eq!(m.time_per_message_us.p50, 0.0);
}

#[test]
fn nagle_waits_out_the_delayed_ack_of_the_first_message() {
    // The `rfc` receiver ACKs every second full-sized segment or after 200 ms. The first message is one
    // byte: its ACK is delayed 200 ms, and Nagle holds everything written after it until then. So the
    // largest gap is the delayed-ACK timeout plus about a round trip.
    let doc = run_scenario(&scenario(LAN, &[]), 1);
    let m = msg(&doc.points[0]);
    eprintln!("nagle/delayed: {:?}", m.time_per_message_us);
    assert!(m.time_per_message_us.max > 200_000.0 && m.time_per_message_us.max < 201_000.0);
    assert!(m.elapsed_s > 0.2);
}

#[test]
fn paced_messages_on_an_idle_path_take_the_serializations_plus_the_delay() {
    // One message every millisecond on an idle path. With NODELAY each leaves at once; with Nagle too, as
    // long as the receiver ACKs every segment (the previous message's ACK is back within 0.1 ms). A 1-byte
    // segment with timestamps is 91 bytes on the wire: 7.28 us through the NIC, 7.28 us on the link, then
    // 20 us of propagation.
    for (nodelay, acks) in [("true", "delayed"), ("false", "every")] {
        let set = [
            "test.interval=\"1ms\"",
            "test.messages=200",
            &format!("client.tcp.nodelay={nodelay}"),
            &format!("server.tcp.ack_policy=\"{acks}\""),
        ];
        let doc = run_scenario(&scenario(LAN, &set), 1);
        let m = msg(&doc.points[0]);
        let latency = 2.0 * ns_at_100m(91) / 1e3 + 20.0;
        eprintln!("paced nodelay={nodelay}: {:?} {:?}", m.latency_us, m.time_per_message_us);
        assert_eq!(m.messages, 200);
        for l in [m.latency_us.min, m.latency_us.max, m.latency_us.mean] {
            assert!((l - latency).abs() < 1e-6, "{l} vs {latency} us");
        }
        // The gaps are the interval, but for the first, which runs from the start of the measurement.
        assert!((m.time_per_message_us.min - latency).abs() < 1e-6);
        assert!((m.time_per_message_us.max - 1000.0).abs() < 1e-6);
        assert!((m.time_per_message_us.mean - (199.0 * 1000.0 + latency) / 200.0).abs() < 1e-6);
        assert!((m.messages_per_s - 200.0 / m.elapsed_s).abs() < 1e-6);
    }
    // Nagle with the `rfc` receiver's delayed ACK: the first message's ACK comes 200 ms late, and the
    // messages written meanwhile wait for it (Nagle meets the delayed ACK even at 1000 messages/s).
    let set = ["test.interval=\"1ms\"", "test.messages=200"];
    let m = msg(&run_scenario(&scenario(LAN, &set), 1).points[0]).clone();
    assert!(m.latency_us.max > 199_000.0 && m.time_per_message_us.max > 200_000.0, "{:?}", m.latency_us);
}

#[test]
fn linux_2_2_delayed_acks_stall_a_slow_writer_for_a_tick_linux_2_4_does_not() {
    // The classic comparison: 1-byte messages from a writer that takes 10 us per send call (a CPU-bound
    // host of the time; tcplab's own writer is infinitely fast, so it is paced at that rate), Nagle on.
    // The writer never gathers a full segment within a round trip, so every segment is short and Nagle
    // sends the next one only when the previous one is ACKed. Linux 2.2's receiver does not ACK a short
    // segment when the application reads it: the delayed ACK fires on a 10 ms tick. Linux 2.4 ACKs a
    // short pushed segment as soon as the application has read it (tcp_cleanup_rbuf), about a round trip.
    let slow_writer = r#"
name = "msg-2.2-2.4"
[path.up]
rate = "100mbit"
delay = "20us"
queue = "100pkt"
[client.host]
nic_rate = "100mbit"
txqueuelen = 100
[test]
kind = "tcp_msg"
message = "1B"
interval = "10us"
duration = "1s"
"#;
    let run = |stack: &str| {
        let doc = run_scenario(
            &scenario(slow_writer, &[&format!("client.stack=\"{stack}\""), &format!("server.stack=\"{stack}\"")]),
            1,
        );
        msg(&doc.points[0]).clone()
    };
    let (old, new) = (run("linux-2.2"), run("linux-2.4"));
    eprintln!("linux-2.2: time per message {:?}, latency {:?}", old.time_per_message_us, old.latency_us);
    eprintln!("linux-2.4: time per message {:?}, latency {:?}", new.time_per_message_us, new.latency_us);
    // 2.2: deliveries come in batches a tick apart, and so late that the p99.9 gap is a stall too.
    assert!(old.time_per_message_us.max >= 9_000.0 && old.time_per_message_us.p99_9 >= 5_000.0);
    assert!(old.latency_us.mean > 1_000.0);
    // 2.4: no gap much beyond a round trip.
    assert!(new.time_per_message_us.max < 1_000.0 && new.latency_us.max < 1_000.0);
    // Both carry what the writer wrote: 100,000 messages a second.
    for m in [&old, &new] {
        assert!((m.messages_per_s - 100_000.0).abs() / 100_000.0 < 0.02, "{}", m.messages_per_s);
    }
}

#[test]
fn a_fast_writer_under_nagle_never_waits_for_an_ack_with_either_linux() {
    // The same comparison with tcplab's infinitely fast writer back to back: more than an MSS is queued
    // before the first ACK returns, every segment is full, and the receivers ACK every second one at once,
    // so neither stack stalls in steady state (tcp_msg for 20 ms, about 235,000 messages).
    let fast = LAN.replace("messages = 100000", "duration = \"20ms\"");
    for stack in ["linux-2.2", "linux-2.4"] {
        let doc = run_scenario(
            &scenario(&fast, &[&format!("client.stack=\"{stack}\""), &format!("server.stack=\"{stack}\"")]),
            1,
        );
        let m = msg(&doc.points[0]);
        eprintln!("{stack} fast writer: {:?}", m.time_per_message_us);
        assert!(m.time_per_message_us.max < 1_000.0, "{stack}: {:?}", m.time_per_message_us);
    }
}

#[test]
fn parallel_connections_share_the_count() {
    // Three paced connections on an idle path, 31 messages in all: 11, 10 and 10; every message has the
    // idle path's latency. (That the book pairs each reader with its own writer is a unit test in
    // crates/workload/src/msg.rs.)
    let set = ["test.interval=\"1ms\"", "test.messages=31", "test.parallel=3", "client.tcp.nodelay=true"];
    let doc = run_scenario(&scenario(LAN, &set), 1);
    let m = msg(&doc.points[0]);
    assert_eq!(m.messages, 31);
    assert!((m.latency_us.max - (2.0 * ns_at_100m(91) / 1e3 + 20.0)).abs() < 1e-6 + 2.0 * 7.28, "{:?}", m.latency_us);
    let conns = &doc.points[0].connections;
    assert_eq!(conns.len(), 6);
    let sent: Vec<u64> = conns.iter().step_by(2).map(|c| common::estats(c).DataOctetsOut).collect();
    assert_eq!(sent, vec![11, 10, 10]);
}

#[test]
fn the_same_seed_gives_the_same_document() {
    let s = scenario(LAN, &["test.messages=5000"]);
    let a = serde_json::to_string(&run_scenario(&s, 3)).unwrap();
    let b = serde_json::to_string(&run_scenario(&s, 3)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_msg_keys_are_errors_at_their_key() {
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let text = LAN.replace("messages = 100000", "duration = \"1s\"");
        tcplab_lab::load(&tcplab_lab::Source { name: "t.toml", text: &text }, &set).unwrap_err().to_string()
    };
    let e = err(&["test.interval=\"0s\""]);
    assert!(e.contains("test.interval") && e.contains("accepted more than 0s"), "{e}");
    let e = err(&["test.kind=\"tcp_stream\"", "test.interval=\"1ms\""]);
    assert!(e.contains("test.interval: not used by test.kind = \"tcp_stream\"; accepted with \"tcp_msg\""), "{e}");
    let e = err(&["test.kind=\"tcp_stream\"", "test.messages=5"]);
    assert!(
        e.contains("test.messages: not used by test.kind = \"tcp_stream\"; accepted with \"rdp_stream\", \"tcp_msg\""),
        "{e}"
    );
    let e = err(&["test.messages=0"]);
    assert!(e.contains("test.messages: 0: accepted 1 to 100000000"), "{e}");
    let e = err(&["test.message=\"0B\""]);
    assert!(e.contains("test.message"), "{e}");
    let e = err(&["test.request=\"10B\""]);
    assert!(e.contains("test.request: not used by test.kind = \"tcp_msg\""), "{e}");
}
