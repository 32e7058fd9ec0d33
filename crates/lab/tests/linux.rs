//! A scenario on the Linux backend through the lab: the packet trace of the emulator's tap read back by
//! Wireshark's `tshark` (no malformed frames or bad checksums, retransmissions = the kernel's on a scripted
//! loss), and the CPU figures measured from /proc/stat.
//!
//! They need Linux, root and `tshark`; elsewhere they are reported as ignored with the reason, except under
//! CI=true, where they fail (tcplab-testkit's harness).

use std::path::Path;
use std::process::Command;

use tcplab_lab::result::Metrics;
use tcplab_lab::{load, ResultDoc, Source};
use tcplab_testkit::{need, need_tool, Outcome, Rerun};

/// The Linux backend can run here; else a skip saying why not.
fn ready() -> Outcome {
    need(tcplab_emu::check_environment())
}

/// 100 Mbit/s, 20 ms each way, a queue the window cannot fill (4 MiB buffers: at most about 2,900 frames in
/// flight against BDP 325 + queue 3000), and data frames 2000, 5000 and 8000 of the up direction lost by
/// script: isolated losses after slow start, each repaired by a fast retransmission that Wireshark can tie
/// to its duplicate ACKs (it calls a retransmission it cannot tie to them, such as the second of two adjacent
/// losses, or one during slow start, when every ACK also moves the window, "out-of-order").
const SCRIPTED: &str = "name = \"scripted\"\nseed = 1\n[path.up]\nrate = \"100mbit\"\ndelay = \"20ms\"\n\
    queue = \"3000pkt\"\nloss = { model = \"scripted\", drop = [2000, 5000, 8000], packets = \"data\" }\n\
    [path.down]\nrate = \"100mbit\"\ndelay = \"20ms\"\nqueue = \"3000pkt\"\n\
    [client]\nstack = \"linux\"\n[server]\nstack = \"linux\"\n\
    [test]\nkind = \"tcp_stream\"\nduration = \"3s\"\nsend_buffer = \"4MiB\"\nrecv_buffer = \"4MiB\"\n";

/// Frames Wireshark finds malformed or with a bad checksum.
const BAD: &str = "_ws.malformed || _ws.expert.group == \"Malformed\" || _ws.expert.group == \"Checksum\" \
    || tcp.checksum.status == 0 || ip.checksum.status == 0";

fn count(file: &Path, filter: &str) -> usize {
    let out = Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-r"])
        .arg(file)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("appears to be damaged") && !err.contains("cut short"), "tshark: {err}");
    String::from_utf8(out.stdout).unwrap().lines().count()
}

fn estat(doc: &ResultDoc, side: &str, var: &str) -> f64 {
    let c = doc.points[0].connections.iter().find(|c| c.side == side).unwrap();
    c.estats[var].as_f64().unwrap()
}

fn the_clients_trace_shows_exactly_the_kernels_retransmissions() -> Outcome {
    ready()?;
    need_tool("tshark", "install Debian's tshark")?;
    let s = load(&Source { name: "scripted.toml", text: SCRIPTED }, &[]).unwrap();
    let file = std::env::temp_dir().join(format!("tcplab-linux-{}.pcap", std::process::id()));
    let pcap = tcplab_emu::PcapSpec { path: file.clone(), tap: tcplab_emu::PcapTap::Client, snaplen: 65_535 };
    let doc = tcplab_lab::run_scenario_linux_with(&s, 1, Some(pcap)).unwrap();
    let p = &doc.points[0];
    eprintln!("{}", serde_json::to_string(&p.metrics).unwrap());
    let frames = count(&file, "frame");
    let bad = count(&file, BAD);
    let retrans = count(&file, "tcp.analysis.retransmission");
    let lost_seen = count(&file, "tcp.analysis.lost_segment");
    let ooo = count(&file, "tcp.analysis.out_of_order");
    std::fs::remove_file(&file).unwrap();
    eprintln!("frames {frames}, bad {bad}, tshark retransmissions {retrans}, lost-segment marks {lost_seen}");
    // The client's tap holds what the client sent (at its input instant, dropped frames included: the
    // trace never has a hole) and what was delivered to it.
    let (up, down) = (&p.links.up, &p.links.down);
    assert_eq!(up.drops_random_loss, 3, "the script dropped its three frames");
    assert_eq!(up.drops_queue_full + down.drops_queue_full, 0);
    let in_flight = p.health.as_ref().unwrap()["down"]["in_flight_at_stop"].as_u64().unwrap();
    assert_eq!(frames as u64, up.frames_in + down.frames_delivered - in_flight);
    assert_eq!(bad, 0, "malformed frames or bad checksums");
    assert_eq!(lost_seen, 0, "a capture at the sender has no holes");
    assert_eq!(ooo, 0, "every retransmission tied to its duplicate ACKs");
    // Each scripted drop is retransmitted once, and Wireshark sees exactly the kernel's retransmissions.
    let kernel = estat(&doc, "client", "SegsRetrans");
    assert_eq!(kernel, 3.0, "one retransmission per dropped frame");
    assert_eq!(retrans as f64, kernel);
    let Metrics::Stream(m) = &p.metrics else { panic!("a stream test") };
    assert_eq!(m.retransmissions, 3);
    assert_eq!(p.health.as_ref().unwrap()["hidden_drops"], 0);
    Ok(())
}

fn cpu_is_measured_system_wide_over_the_window() -> Outcome {
    ready()?;
    let text = SCRIPTED.replace("tcp_stream", "tcp_maerts");
    let s = load(&Source { name: "maerts.toml", text: &text }, &[]).unwrap();
    let doc = tcplab_lab::run_scenario_linux(&s, 1).unwrap();
    let Metrics::Stream(m) = &doc.points[0].metrics else { panic!("a stream test") };
    let cpu = m.cpu.as_ref().expect("the Linux backend measures CPU");
    eprintln!("{}", serde_json::to_string(&m).unwrap());
    assert_eq!(cpu.cpu_source, "measured");
    assert_eq!(cpu.cpu_scope.as_deref(), Some("system"));
    let (u, d) = (cpu.cpu_util_percent.local.unwrap(), cpu.service_demand_us_per_kb.local.unwrap());
    assert!(u > 0.0 && u <= 100.0, "{u}");
    // netperf's service demand: utilization × CPUs × window per KB delivered.
    let cpus = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    let expect = u / 100.0 * cpus as f64 * m.elapsed_s * 1e6 / (m.delivered_bytes as f64 / 1024.0);
    assert!((d - expect).abs() <= 1e-6 * expect, "{d} vs {expect}");
    assert_eq!(cpu.cpu_util_percent.remote, cpu.cpu_util_percent.local, "one machine: the same figure");
    // The scenario's knobs: the server sent (MAERTS), the client only acknowledged.
    assert_eq!(estat(&doc, "client", "DataSegsOut"), 0.0);
    // The data-only script on the up direction finds nothing to drop: only ACKs go up in MAERTS.
    assert_eq!(doc.points[0].links.up.drops_random_loss, 0);
    assert_eq!(estat(&doc, "server", "SegsRetrans"), 0.0);
    Ok(())
}

/// `tcp_msg` on kernel sockets: 100 Mbit/s, 20 ms each way, two connections, 1 MiB buffers.
fn msg_scenario(test: &str, nodelay: bool) -> tcplab_lab::Scenario {
    let text = format!(
        "name = \"msg\"\nseed = 1\n[path.up]\nrate = \"100mbit\"\ndelay = \"20ms\"\nqueue = \"1000pkt\"\n\
         [path.down]\nrate = \"100mbit\"\ndelay = \"20ms\"\nqueue = \"1000pkt\"\n\
         [client]\nstack = \"linux\"\n[client.tcp]\nnodelay = {nodelay}\n\
         [server]\nstack = \"linux\"\n[server.tcp]\nnodelay = {nodelay}\n\
         [test]\nkind = \"tcp_msg\"\nmessage = \"1B\"\nparallel = 2\nsend_buffer = \"1MiB\"\n\
         recv_buffer = \"1MiB\"\n{test}"
    );
    load(&Source { name: "msg.toml", text: &text }, &[]).unwrap()
}

fn paced_small_messages_arrive_one_way_delay_and_one_frame_later_at_the_writers_rate() -> Outcome {
    ready()?;
    let s = msg_scenario("duration = \"3s\"\ninterval = \"1ms\"\n", true);
    // One 1-byte segment per message (NODELAY, one send call each, nothing unacknowledged holds it): 20 + 32
    // (the `linux` personality's timestamps) + 1 = 53 bytes of IP, 91 on the wire, 7.28 us at 100 Mbit/s;
    // then 20 ms of propagation. Both connections write at the same instant, so one of the two frames
    // waits one frame more.
    assert!(s.client.tcp().timestamps && s.server.tcp().timestamps);
    let frame = s.path.up.rate.tx_time(s.path.up.framing.wire_len(53) as u64).as_nanos() as f64 / 1e3;
    let wire = 20_000.0 + frame;
    // The median within 0.5 ms of the wire (the Linux backend's requirement). The writer's and reader's
    // wake-ups on a 2-vCPU VM add one to a few milliseconds to a tenth of the messages, more in the VM's
    // slow phases (measured: p90 21.2–22.4 ms in three runs in a row, idle ping 40.4–40.9 ms then), so the
    // 90th percentile is held to 5 ms; a run that misses either is repeated (up to three runs, each of which
    // the backend itself repeats while its health is invalid), as the backend's docs tell callers to do.
    let doc = tcplab_testkit::realtime("paced messages on the Linux backend", 3, |_| {
        let doc = tcplab_lab::run_scenario_linux(&s, 1).unwrap();
        let p = &doc.points[0];
        let Metrics::Msg(m) = &p.metrics else { panic!("a message test") };
        eprintln!("{}", serde_json::to_string(&m).unwrap());
        let l = &m.latency_us;
        assert!(l.min >= wire, "nothing arrives before the wire allows: min {} us < {wire} us", l.min);
        let health = p.health.as_ref().unwrap();
        if l.p50 - wire <= 500.0 && l.p90 - wire <= 5_000.0 {
            Ok(doc)
        } else if health["valid"] == false {
            Err(Rerun::Unfit(health["invalid_reasons"].to_string()))
        } else {
            Err(Rerun::Missed(format!("one-way latency p50 {} us, p90 {} us, the wire's {wire} us", l.p50, l.p90)))
        }
    })?;
    let p = &doc.points[0];
    let Metrics::Msg(m) = &p.metrics else { panic!("a message test") };
    assert_eq!(p.health.as_ref().unwrap()["hidden_drops"], 0);
    assert_eq!(m.retransmissions, 0, "an idle path loses nothing");
    let l = &m.latency_us;
    // Except at the start: Linux counts cwnd in packets, and a 1-byte segment is a packet. The initial
    // window (10) lets messages 0-9 of each connection go at 0-9 ms; message 10, written at 10 ms, waits for
    // the first ACK, one round trip (40 ms) after message 0, so it arrives at 40 ms + 20 ms: 50 ms after it
    // was written. Slow start then grows cwnd by one per ACK until it covers the 40 messages per round trip.
    // Less 1 ms: a writer that wakes late for message 10 (as above, a millisecond on this VM) measures it
    // from its late write (49.68 ms in one CI run).
    assert!(l.max >= 49_000.0, "the initial window holds the eleventh message: max {} us", l.max);
    // Each connection writes one message per ms from the start of the window; those written in its last
    // 20 ms are still on the wire at its end: (3 s - 20 ms) / 3 s = 99.3% of 2 x 1000/s.
    let expect = 2.0 * 1000.0;
    assert!((m.messages_per_s - expect).abs() <= 0.02 * expect, "{} messages/s", m.messages_per_s);
    assert!(m.messages_per_s <= expect, "no more than the writer wrote: {} messages/s", m.messages_per_s);
    Ok(())
}

fn back_to_back_messages_under_nagle_coalesce_below_one_minimum_frame_each() -> Outcome {
    ready()?;
    let s = msg_scenario("duration = \"2s\"\n", false);
    let doc = tcplab_lab::run_scenario_linux(&s, 1).unwrap();
    let p = &doc.points[0];
    let Metrics::Msg(m) = &p.metrics else { panic!("a message test") };
    eprintln!("{}", serde_json::to_string(&m).unwrap());
    // A message per segment could arrive no faster than one minimum frame per message: 20 + 20 + 1 = 41
    // bytes of IP padded to 46, 84 on the wire, 6.72 us at 100 Mbit/s. Nagle holds the writer's bytes while
    // a segment is unacknowledged, so they leave gathered into full segments (up to 1448 messages per
    // 123 us frame): the mean time per message must be below one minimum frame's time.
    let min_frame = s.path.up.rate.tx_time(s.path.up.framing.wire_len(41) as u64).as_nanos() as f64 / 1e3;
    let t = m.time_per_message_us.mean;
    assert!(m.messages > 0);
    assert!(t < min_frame, "{t} us per message, one minimum frame takes {min_frame} us");
    // Data segments the client sent carried several messages each on average.
    let segs: f64 = doc.points[0]
        .connections
        .iter()
        .filter(|c| c.side == "client")
        .map(|c| c.estats["DataSegsOut"].as_f64().unwrap())
        .sum();
    let bytes = m.delivered_bytes as f64;
    assert!(bytes > 10.0 * segs, "{bytes} messages in {segs} data segments: not coalesced");
    Ok(())
}

tcplab_testkit::tests!(
    the_clients_trace_shows_exactly_the_kernels_retransmissions,
    cpu_is_measured_system_wide_over_the_window,
    paced_small_messages_arrive_one_way_delay_and_one_frame_later_at_the_writers_rate,
    back_to_back_messages_under_nagle_coalesce_below_one_minimum_frame_each,
);
