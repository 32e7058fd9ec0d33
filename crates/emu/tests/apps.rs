//! The simulator's applications (`tcplab_workload`) on kernel sockets through the emulator: TCP_RR with and
//! without a first burst, TCP_CRR and TCP_MAERTS against their analytic figures.

// Uses `Testbed` and `run_apps`, which exist on Linux only.

use crate::common;

use tcplab_emu::{run_apps, AppsRun, AppsSpec, Health, Side, Testbed, TestbedSpec};
use tcplab_testkit::{realtime, Outcome, Rerun, Skip};
use tcplab_units::{ByteSize, Duration, Instant};
use tcplab_workload::{
    App, Opening, Report, Role, RrClient, RrClientConfig, RrReport, RrServer, RrServerConfig, Stream, StreamConfig,
};

const PORT: u16 = 5001;

/// Runs the applications over a fresh testbed until a run's health is valid (up to 4 runs; none valid:
/// the test is inconclusive, `tcplab_testkit::realtime`).
fn run(spec: &TestbedSpec, apps: Vec<(Side, App)>, measure: Duration) -> Result<(AppsRun, Health), Skip> {
    realtime("the applications through the emulator", 4, |attempt| {
        let (run, health) = run_once(spec, apps.clone(), measure);
        eprintln!("attempt {attempt}; realtime {}; health {health:?}", run.realtime);
        if health.valid {
            Ok((run, health))
        } else {
            Err(Rerun::Unfit(health.invalid_reasons.join("; ")))
        }
    })
}

/// One run of the applications over a fresh testbed, whatever its health.
fn run_once(spec: &TestbedSpec, apps: Vec<(Side, App)>, measure: Duration) -> (AppsRun, Health) {
    let mut tb = Testbed::start(spec).unwrap();
    let run = run_apps(&tb, AppsSpec::new(apps, measure)).unwrap();
    let health = tb.finish().unwrap();
    (run, health)
}

fn rr_apps(request: u64, response: u64, burst: u32, crr: bool) -> Vec<(Side, App)> {
    let client = RrClientConfig {
        connections: 1,
        port: PORT,
        ports: 1,
        at: Instant::ZERO,
        spacing: Duration::ZERO,
        request,
        response,
        burst,
        per_transaction: crr,
        port_retry: Duration::from_millis(1),
    };
    let server = RrServerConfig { port: PORT, ports: 1, connections: if crr { 0 } else { 1 }, request, response };
    vec![(Side::Server, App::RrServer(RrServer::new(server))), (Side::Client, App::RrClient(RrClient::new(client)))]
}

fn client_report(run: &AppsRun) -> RrReport {
    run.apps
        .iter()
        .find_map(|(_, a)| match a.report() {
            Report::Rr(r) if r.client => Some(r),
            _ => None,
        })
        .unwrap()
}

/// 100 Mbit/s, 20 ms each way, Ethernet framing, a queue no test here fills; TCP_NODELAY on both ends.
fn rr_path() -> TestbedSpec {
    let mut spec = TestbedSpec::symmetric(common::link("100mbit", "20ms", "1000pkt"));
    spec.client.nodelay = true;
    spec.server.nodelay = true;
    spec
}

/// Serialization of a segment carrying `payload` bytes at 100 Mbit/s: IPv4 20 + TCP 20 + timestamps 12 +
/// payload, plus 38 bytes of Ethernet framing.
fn ser_s(payload: u64) -> f64 {
    (20 + 20 + 12 + payload + 38) as f64 * 8.0 / 100e6
}

fn rr_one_transaction_in_flight_completes_one_per_round_trip() -> Outcome {
    common::ready()?;
    let (run, health) = run(&rr_path(), rr_apps(1, 1, 0, false), Duration::from_secs(4))?;
    let r = client_report(&run);
    eprintln!("{r:?}");
    // One transaction takes the round trip plus the two one-byte segments' serializations:
    // 40 ms + 2 × 91 B × 8 / 100 Mbit/s = 40.01456 ms, i.e. 24.991 transactions/s.
    let per = 0.040 + 2.0 * ser_s(1);
    let rate = r.transactions as f64 / r.elapsed.as_secs_f64();
    assert!(rate <= 1.0 / per * 1.001, "faster than the path allows: {rate}/s");
    assert!(rate >= 0.97 / per, "{rate}/s is more than 3% below {:.3}/s", 1.0 / per);
    assert!(r.latency.min >= per * 1e6, "a transaction faster than physics: {} us", r.latency.min);
    assert!(r.latency.p50 <= per * 1e6 * 1.03, "median {} us", r.latency.p50);
    assert_eq!(run.retransmissions, 0);
    assert_eq!(health.hidden_drops, 0);
    Ok(())
}

fn rr_with_a_first_burst_keeps_burst_plus_one_in_flight() -> Outcome {
    common::ready()?;
    // burst 3: four one-byte transactions in flight, each still one round trip long, so four per round trip
    // (the server answers each request as it comes; with TCP_NODELAY nothing waits for an ACK).
    let (run, health) = run(&rr_path(), rr_apps(1, 1, 3, false), Duration::from_secs(4))?;
    let r = client_report(&run);
    eprintln!("{r:?}");
    let per = 0.040 + 2.0 * ser_s(1);
    let rate = r.transactions as f64 / r.elapsed.as_secs_f64();
    assert!(rate <= 4.0 / per * 1.001, "{rate}/s");
    assert!(rate >= 0.97 * 4.0 / per, "{rate}/s is more than 3% below {:.3}/s", 4.0 / per);
    assert!(r.latency.min >= per * 1e6, "{} us", r.latency.min);
    assert_eq!(health.hidden_drops, 0);
    Ok(())
}

fn crr_costs_one_round_trip_more_than_rr() -> Outcome {
    common::ready()?;
    let spec = rr_path();
    // TCP_RR: one round trip plus the 100-byte request and 1000-byte response serializations.
    // TCP_CRR adds the handshake before the request: a round trip plus the SYN and SYN-ACK (IPv4 20 + TCP 20
    // + 20 bytes of options, + 38 of framing each: 7.84 us), so one round trip and 15.7 us more.
    let rr_per = 0.040 + ser_s(100) + ser_s(1000);
    let extra = 0.040 + 2.0 * (60 + 38) as f64 * 8.0 / 100e6;
    let crr_per = rr_per + extra;
    // Wake-ups on a 2-vCPU VM in a slow phase add a millisecond to the connection churn (measured: 41.3 ms
    // instead of 40.0): a pair of runs that misses 3% is repeated (up to three), as the backend's docs say.
    let mut diffs = Vec::new();
    let (crr, crr_r, health) = loop {
        let (rr, _) = run(&spec, rr_apps(100, 1000, 0, false), Duration::from_secs(4))?;
        let (crr, health) = run(&spec, rr_apps(100, 1000, 0, true), Duration::from_secs(4))?;
        let (rr, crr_r) = (client_report(&rr), client_report(&crr));
        eprintln!("rr {rr:?}\ncrr {crr_r:?}");
        assert!(rr.latency.min >= rr_per * 1e6 && crr_r.latency.min >= crr_per * 1e6, "faster than physics");
        let d = (crr_r.latency.mean - rr.latency.mean) / 1e6;
        if (d - extra).abs() <= 0.03 * extra {
            break (crr, crr_r, health);
        }
        diffs.push(d * 1e3);
        assert!(diffs.len() < 3, "CRR − RR = {diffs:?} ms in three runs, expected {:.3} ms", extra * 1e3);
    };
    let rate = crr_r.transactions as f64 / crr_r.elapsed.as_secs_f64();
    assert!(rate >= 0.97 / crr_per && rate <= 1.001 / crr_per, "{rate}/s against {:.3}/s", 1.0 / crr_per);
    assert_eq!(crr.connection_ends, 2 * crr_r.connections_opened, "both ends of every connection closed");
    assert_eq!(crr.retransmissions, 0);
    assert_eq!(health.hidden_drops, 0);
    Ok(())
}

/// One connection of 64 KiB writes from `sender` to the other side, which reads everything.
fn stream_apps(sender: Side) -> Vec<(Side, App)> {
    let role = |side: Side| if side == sender { Role::Send { message: 64 * 1024 } } else { Role::Receive };
    let client = StreamConfig {
        opening: Opening::Connect { connections: 1, port: PORT, ports: 1, at: Instant::ZERO, spacing: Duration::ZERO },
        role: role(Side::Client),
        gates_measurement: true,
    };
    let server = StreamConfig {
        opening: Opening::Accept { port: PORT, ports: 1, connections: 1 },
        role: role(Side::Server),
        gates_measurement: true,
    };
    vec![(Side::Server, App::Stream(Stream::new(server))), (Side::Client, App::Stream(Stream::new(client)))]
}

/// The stream report of the application on `side`.
fn stream_report(run: &AppsRun, side: Side) -> tcplab_workload::StreamReport {
    run.apps
        .iter()
        .find_map(|(s, a)| match a.report() {
            Report::Stream(r) if *s == side => Some(r),
            _ => None,
        })
        .unwrap()
}

fn maerts_reaches_the_analytic_bound_server_to_client() -> Outcome {
    common::ready()?;
    // Data flows down (server to client): a 1-BDP queue on down (100 Mbit/s × 40 ms = 500 kB ≈ 325 frames),
    // 4 MiB buffers. Goodput over 10 s from establishment, slow start included (about 0.2 s of a 10 s window
    // at well under full rate), must be within 3% of the bound 100 Mbit/s × 1448 / 1538.
    let mut spec = TestbedSpec::symmetric(common::link("100mbit", "20ms", "325pkt"));
    spec.server.send_buffer = ByteSize::new(4 << 20);
    spec.client.recv_buffer = ByteSize::new(4 << 20);
    // HyStart's delay detector ends slow start when the first eight RTT samples of a round exceed the round
    // trip by more than 5 ms (delay_min / 8). The queue is empty then, so only a stall of this VM does that,
    // and CUBIC then climbs to the BDP from wherever it fired: once at cwnd 28 (76.8 Mbit/s). Such a run is
    // repeated (up to three), as the Linux backend's docs say of a kernel's exit moved by timing.
    let mut early = Vec::new();
    let (run, health) = loop {
        let (run, health) = run(&spec, stream_apps(Side::Server), Duration::from_secs(10))?;
        let delay_exit = run.server_netstat.get("TcpExt.TCPHystartDelayDetect").copied().unwrap_or(0) > 0;
        let at = run.server_netstat.get("TcpExt.TCPHystartDelayCwnd").copied().unwrap_or(0);
        if !delay_exit || at >= 200 || early.len() == 2 {
            break (run, health);
        }
        early.push(at);
    };
    let received = stream_report(&run, Side::Client);
    let goodput = received.window_bytes as f64 * 8.0 / received.elapsed.as_secs_f64();
    let bound = common::bound_bps(100e6);
    eprintln!("runs repeated for an early delay exit (cwnd at the exit): {early:?}");
    eprintln!("goodput {:.2} Mbit/s, bound {:.2}; {:?}", goodput / 1e6, bound / 1e6, run.server_netstat);
    assert!(goodput <= bound * 1.005, "faster than the wire allows: {goodput}");
    assert!(goodput >= bound * 0.97, "{goodput} more than 3% below {bound}");
    // The server sends: its retransmissions are exactly the down queue's drops, nothing else was lost.
    assert_eq!(run.retransmissions, health.down.link.drops_queue_full + health.up.link.drops_queue_full);
    assert_eq!(health.hidden_drops, 0);
    let server = run.connections.iter().find(|c| c.side == "server").unwrap();
    assert_eq!(server.congestion, "cubic");
    let client = run.connections.iter().find(|c| c.side == "client").unwrap();
    assert_eq!(client.estats["DataSegsOut"], 0.0, "the client only receives");
    assert!(server.estats["DataOctetsOut"] >= received.total_bytes as f64);
    Ok(())
}

/// One loop drives both ends, so a bulk writer's turn is bounded (64 KiB per event) and the receiving end
/// reads in between, as netserver does in a process of its own. Linux acknowledges at once only what its
/// application has read (or while the window still opens), so a reader held back answers with one ACK for
/// everything that arrived meanwhile and the sender releases a whole window at once. On 1 Gbit/s, 1 ms
/// each way with a 100-frame queue (0.6 BDP: such bursts overflow it) the loop must reach what the
/// threaded driver (`run_stream`: sender and receiver on threads of their own) reaches on the same path,
/// within 10%. Measured over 3 s: threaded 830–903 Mbit/s; the loop 878–881 with the bounded turn, 523–544
/// when a writer could copy a third of its 16 MiB buffer (about 5 MB) in one turn (the test failed then).
fn a_bulk_writer_leaves_its_reader_the_loop_at_one_gigabit() -> Outcome {
    common::ready()?;
    let link = common::link("1gbit", "1ms", "100pkt");
    let mut threaded = tcplab_emu::EmuSpec::new(link.clone(), Duration::from_secs(3));
    threaded.client.send_buffer = ByteSize::new(16 << 20);
    threaded.server.recv_buffer = ByteSize::new(16 << 20);
    let mut spec = TestbedSpec::symmetric(link);
    spec.client.send_buffer = ByteSize::new(16 << 20);
    spec.server.recv_buffer = ByteSize::new(16 << 20);
    let apps = stream_apps(Side::Client);
    // Both figures move with the machine's load from run to run: a pair that misses is measured again. The
    // two drivers are compared with each other, side by side on the same machine, so a run is judged
    // whatever its health (at 1 Gbit/s the stall limit is 1.23 ms, which this VM often exceeds: CI once
    // had four such runs in a row).
    let mut pairs = Vec::new();
    for _ in 0..3 {
        let t = tcplab_emu::run_stream(&threaded).unwrap().stream.throughput_bps;
        let (run, _) = run_once(&spec, apps.clone(), Duration::from_secs(3));
        let received = stream_report(&run, Side::Server);
        let one_loop = received.window_bytes as f64 * 8.0 / received.elapsed.as_secs_f64();
        eprintln!("threaded {:.1} Mbit/s, one loop {:.1}", t / 1e6, one_loop / 1e6);
        pairs.push((t, one_loop));
        if one_loop >= 0.9 * t {
            return Ok(());
        }
    }
    panic!("the one-loop driver stayed more than 10% below the threaded one (bit/s): {pairs:?}");
}

tcplab_testkit::tests!(
    one_at_a_time:
    rr_one_transaction_in_flight_completes_one_per_round_trip,
    rr_with_a_first_burst_keeps_burst_plus_one_in_flight,
    crr_costs_one_round_trip_more_than_rr,
    maerts_reaches_the_analytic_bound_server_to_client,
    a_bulk_writer_leaves_its_reader_the_loop_at_one_gigabit,
);
