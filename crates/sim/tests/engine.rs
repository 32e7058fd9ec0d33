//! The engine's hosts, listeners, applications and probes, on whole runs.

use crate::common;

use tcplab_link::DropReason;
use tcplab_sim::{run, run_with, PacketEvent, Probe, SimSpec, CLIENT, DOWN, SERVER, UP};
use tcplab_tcp::{Connection, TcpConfig};
use tcplab_units::{Duration, Rate};
use tcplab_wire::TcpSegment;
use tcplab_workload::Report;

fn window_bytes(r: &Report) -> u64 {
    match r {
        Report::Stream(s) => s.window_bytes,
        other => panic!("not a bulk transfer: {other:?}"),
    }
}

fn total_bytes(r: &Report) -> u64 {
    match r {
        Report::Stream(s) => s.total_bytes,
        other => panic!("not a bulk transfer: {other:?}"),
    }
}

/// Goodput bound of a 10 Mbit/s Ethernet link for full-sized segments with timestamps: 1448 payload bytes in
/// 1448 + 52 (IPv4, TCP, timestamps) + 38 (framing) bytes on the wire.
fn bound_bps(rate_bps: f64) -> f64 {
    rate_bps * 1448.0 / (1448.0 + 52.0 + 38.0)
}

#[test]
fn two_workloads_on_one_host_share_the_path_each_way() {
    // The client runs a sender (STREAM, up) and a receiver (MAERTS, down) at once, to two server ports.
    let spec = SimSpec::two_hosts(
        common::link("10mbit", "10ms", 100, 0.0),
        common::link("10mbit", "10ms", 100, 0.0),
        [common::host(256 << 10), common::host(256 << 10)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (SERVER, common::acceptor(5002, Some(16384), true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
            (CLIENT, common::opener(5002, Duration::ZERO, None, true)),
        ],
        Duration::from_secs(10),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    let up = window_bytes(&r.apps[0].report()) as f64 * 8.0 / 10.0;
    let down = window_bytes(&r.apps[3].report()) as f64 * 8.0 / 10.0;
    // Each direction carries one flow's data and the other's ACKs, in one queue: neither flow exceeds the
    // bound, and ACKs queued behind data (two-way traffic's ACK compression) cost the pair some of it.
    for (name, got) in [("up", up), ("down", down)] {
        assert!(got <= bound_bps(10e6), "{name}: {got} above the bound");
        assert!(got > 0.2 * bound_bps(10e6), "{name}: {got} bit/s");
    }
    // Whatever each link direction delivered (data, ACKs, handshakes) fit in its capacity.
    let run_s = r.end_time.as_secs_f64();
    for d in [UP, DOWN] {
        assert!(r.links[d].bytes_delivered as f64 * 8.0 <= 10e6 * run_s, "dir {d}");
    }
    assert_eq!(r.endpoints.len(), 4);
    // Every end closed in order: the client ends wait in TIME-WAIT (active close) or closed after it.
    for ep in &r.endpoints {
        assert!(ep.state == "CLOSED" || ep.state == "TIME-WAIT", "{}: {}", ep.local_port, ep.state);
    }
}

#[test]
fn a_connection_opened_mid_run_is_accepted_carries_data_and_closes() {
    // The measured flow runs 10 s; a second client application connects to a listener at 4 s, sends until
    // the measurement ends, and closes.
    let spec = SimSpec::two_hosts(
        common::link("10mbit", "10ms", 100, 0.0),
        common::link("10mbit", "10ms", 100, 0.0),
        [common::host(256 << 10), common::host(256 << 10)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (SERVER, common::acceptor(6000, None, false)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
            (CLIENT, common::opener(6000, Duration::from_secs(4), Some(16384), false)),
        ],
        Duration::from_secs(10),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    let late: Vec<_> = r.endpoints.iter().filter(|e| e.app == 1 || e.app == 3).collect();
    assert_eq!(late.len(), 2, "one end opened by the client, one accepted by the listener");
    let accepted = late.iter().find(|e| e.host == SERVER).unwrap();
    assert_eq!(accepted.local_port, 6000);
    assert!(accepted.id > 1, "created mid-run, after the first connection's ends");
    let got = window_bytes(&r.apps[1].report());
    assert!(got > 1_000_000, "the late connection carried {got} bytes in the window");
    let total = total_bytes(&r.apps[1].report());
    assert_eq!(total, total_bytes(&r.apps[3].report()), "everything written was read");
    assert_eq!(accepted.state, "CLOSED");
    // Two flows share the up link from 4 s on: the measured flow got less than the whole link.
    let first = window_bytes(&r.apps[0].report()) as f64 * 8.0 / 10.0;
    assert!(first < 0.95 * bound_bps(10e6), "{first}");
    assert!(first + got as f64 * 8.0 / 10.0 <= bound_bps(10e6) * 1.01);
}

#[test]
fn a_segment_for_no_connection_and_no_listener_is_counted() {
    let spec = SimSpec::two_hosts(
        common::link("10mbit", "10ms", 100, 0.0),
        common::link("10mbit", "10ms", 100, 0.0),
        [common::host(256 << 10), common::host(256 << 10)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
            // Nobody listens on 7000: its SYNs are discarded at the server, and retried.
            (CLIENT, common::opener(7000, Duration::ZERO, Some(16384), false)),
        ],
        Duration::from_secs(2),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    assert!(r.no_socket[SERVER] >= 2, "the SYN and its retransmission: {:?}", r.no_socket);
    assert_eq!(r.no_socket[CLIENT], 0);
}

/// A connection whose ACKs are all lost after the handshake never finishes (its ends retransmit with
/// growing timeouts): the run stops at the first event past `DRAIN_LIMIT` after the measurement's end, not
/// before it and not at the next retransmission but one.
#[test]
fn the_drain_stops_the_run_at_its_limit() {
    let mut down = common::link("10mbit", "10ms", 100, 0.0);
    // The SYN-ACK is the direction's frame 0; everything after it is lost.
    down.loss = tcplab_link::LossModel::Scripted { drop: (1..100_000).collect(), packets: Default::default() };
    let spec = SimSpec::two_hosts(
        common::link("10mbit", "10ms", 100, 0.0),
        down,
        [common::host(256 << 10), common::host(256 << 10)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
        ],
        Duration::from_secs(2),
    );
    let r = run::<Connection>(&spec, 1).unwrap();
    // The measurement starts after the handshake (20 ms) and lasts 2 s; the retransmission timeout backs
    // off to at most 120 s.
    let end = r.end_time.as_secs_f64();
    let limit = tcplab_sim::DRAIN_LIMIT.as_secs_f64();
    assert!(end > 2.02 + limit, "stopped at {end} s, within the drain limit");
    assert!(end < 2.1 + limit + 120.0, "stopped at {end} s, long after the drain limit");
    assert!(r.endpoints.iter().all(|e| e.state != "CLOSED" && e.state != "TIME-WAIT"), "{:?}", r.endpoints);
}

/// Counts packets at every tap.
#[derive(Default)]
struct Taps {
    sent: [u64; 2],
    nic_dropped: [u64; 2],
    queue_dropped: [u64; 2],
    lost: [u64; 2],
    delivered: [u64; 2],
    delivered_bytes: [u64; 2],
}

impl Probe<Connection> for Taps {
    fn on_packet(&mut self, _now: tcplab_units::Instant, ev: PacketEvent, seg: &TcpSegment) {
        match ev {
            PacketEvent::Sent { host, .. } => self.sent[host] += 1,
            PacketEvent::NicDropped { host } => self.nic_dropped[host] += 1,
            PacketEvent::LinkDropped { dir, reason: DropReason::QueueFull } => self.queue_dropped[dir] += 1,
            PacketEvent::LinkDropped { dir, reason: DropReason::RandomLoss } => self.lost[dir] += 1,
            PacketEvent::LinkDropped { dir, reason: DropReason::Aqm } => self.queue_dropped[dir] += 1,
            PacketEvent::Delivered { dir } => {
                self.delivered[dir] += 1;
                self.delivered_bytes[dir] += seg.ip_len() as u64 + 38; // Ethernet framing
            }
            PacketEvent::NoSocket { .. } => {}
        }
    }
}

fn check_taps(spec: &SimSpec<TcpConfig>) -> Taps {
    let mut taps = Taps::default();
    let r = run_with::<Connection, _>(spec, 3, &mut taps).unwrap();
    for d in [UP, DOWN] {
        let l = r.links[d];
        assert_eq!(taps.sent[d], r.nics[d].frames_sent, "dir {d}: NIC frames");
        assert_eq!(taps.sent[d], l.frames_in, "dir {d}: frames into the link");
        assert_eq!(taps.queue_dropped[d], l.drops_queue_full, "dir {d}");
        assert_eq!(taps.lost[d], l.drops_random_loss, "dir {d}");
        assert_eq!(taps.delivered[d], l.frames_delivered, "dir {d}");
        assert_eq!(taps.delivered_bytes[d], l.bytes_delivered, "dir {d}");
        assert_eq!(taps.nic_dropped[d], r.nics[d].refused_full, "dir {d}");
    }
    taps
}

fn bulk(client: tcplab_sim::HostSpec<TcpConfig>, up: tcplab_link::LinkConfig) -> SimSpec<TcpConfig> {
    SimSpec::two_hosts(
        up,
        common::link("100mbit", "20ms", 100, 0.01),
        [client, common::host(1 << 20)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
        ],
        Duration::from_secs(10),
    )
}

#[test]
fn a_probe_counting_packets_per_tap_agrees_with_the_link_and_nic_counters() {
    // A NIC slower than the path, with a short queue that drops when full (the NIC taps), and loss.
    let mut client = common::host(1 << 20);
    client.nic_rate = Some(Rate::from_bps(10_000_000));
    client.txqueuelen = 5;
    client.transport = TcpConfig { ifq_full: tcplab_tcp::config::IfqFull::Drop, ..client.transport };
    let taps = check_taps(&bulk(client, common::link("100mbit", "20ms", 100, 0.005)));
    assert!(taps.nic_dropped[CLIENT] > 0 && taps.lost[UP] > 0, "{:?} {:?}", taps.nic_dropped, taps.lost);
    // A short path queue (the link's queue tap), and loss both ways.
    let taps = check_taps(&bulk(common::host(1 << 20), common::link("10mbit", "20ms", 10, 0.005)));
    assert!(taps.queue_dropped[UP] > 0 && taps.lost[DOWN] > 0, "{:?} {:?}", taps.queue_dropped, taps.lost);
}
