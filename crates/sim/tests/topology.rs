//! The engine as a graph (issue 24): several hosts joined through routers, routes over several links, the
//! generic (dequeue-side) path of a link direction against the drop-tail FIFO's fast path, and jitter with
//! and without reordering.

use crate::common;

use tcplab_link::LinkConfig;
use tcplab_sim::{
    run, run_with, AppSpec, DirId, FlowId, HostId, LinkId, LinkSpec, PacketEvent, Probe, SimError, SimSpec, CLIENT,
    DOWN, SERVER, UP,
};
use tcplab_tcp::{Connection, TcpConfig};
use tcplab_transport::Segment;
use tcplab_units::{Duration, Instant};
use tcplab_wire::TcpSegment;
use tcplab_workload::Report;

fn window_bytes(r: &Report) -> u64 {
    match r {
        Report::Stream(s) => s.window_bytes,
        other => panic!("not a bulk transfer: {other:?}"),
    }
}

fn duplex(a: u32, b: u32, cfg: LinkConfig) -> LinkSpec {
    LinkSpec { a: HostId(a), b: HostId(b), forward: cfg.clone(), backward: cfg }
}

/// A dumbbell: senders 0..n, receivers n..2n, routers 2n (left) and 2n+1 (right); access links of 1 Gbit/s
/// with the given one-way delays, a `bottleneck` between the routers. Sender i sends to receiver n+i, all
/// to port 5001 (so the receivers' port tables only tell the flows apart by host).
fn dumbbell(access_delays: &[&str], bottleneck: LinkConfig, secs: u64) -> SimSpec<TcpConfig> {
    let n = access_delays.len() as u32;
    let (left, right) = (2 * n, 2 * n + 1);
    let mut links = vec![duplex(left, right, bottleneck)];
    for (i, d) in access_delays.iter().enumerate() {
        let i = i as u32;
        links.push(duplex(i, left, common::link("1gbit", d, 1000, 0.0)));
        links.push(duplex(right, n + i, common::link("1gbit", "0s", 1000, 0.0)));
    }
    let mut apps = Vec::new();
    for i in 0..n {
        let (s, r) = (HostId(i), HostId(n + i));
        apps.push(AppSpec { host: r, peer: s, flow: FlowId(i), app: common::acceptor(5001, None, true) });
        apps.push(AppSpec {
            host: s,
            peer: r,
            flow: FlowId(i),
            app: common::opener(5001, Duration::ZERO, Some(16384), true),
        });
    }
    SimSpec {
        hosts: (0..2 * n + 2).map(|_| common::host(4 << 20)).collect(),
        links,
        apps,
        measure: Duration::from_secs(secs),
    }
}

#[test]
fn two_flows_through_a_dumbbell_share_the_bottleneck() {
    let spec = dumbbell(&["5ms", "5ms"], common::link("20mbit", "10ms", 100, 0.0), 20);
    let r = run::<Connection>(&spec, 1).unwrap();
    // Both senders open from the same ephemeral port to the same server port: the receivers' port tables
    // are keyed by the remote host too, so each connection reaches its own receiver.
    let ports: Vec<_> = r.endpoints.iter().map(|e| (e.host, e.peer, e.local_port, e.remote_port)).collect();
    assert_eq!(r.endpoints.len(), 4, "{ports:?}");
    let got: Vec<f64> = [0, 2].iter().map(|&a| window_bytes(&r.apps[a].report()) as f64 * 8.0 / 20.0).collect();
    let bound = 20e6 * 1448.0 / 1538.0;
    let sum: f64 = got.iter().sum();
    assert!(sum <= bound * 1.001 && sum > 0.9 * bound, "sum {sum} bit/s of {bound}: {got:?}");
    // Equal RTTs, one bottleneck: neither starves (the fairness tests sit in the lab, over longer runs).
    assert!(got.iter().all(|&g| g > 0.25 * bound), "{got:?}");
    // The bottleneck's forward direction carried all the data; the access links' did not drop.
    let fwd = LinkId(0).forward();
    assert!(r.links[fwd].bytes_delivered as f64 * 8.0 >= sum * 20.0 * 0.99);
    for l in 1..spec.links.len() as u32 {
        assert_eq!(r.links[LinkId(l).forward()].drops_queue_full, 0, "access link {l}");
    }
    assert!(r.no_socket.iter().all(|&n| n == 0), "{:?}", r.no_socket);
}

#[test]
fn a_route_crosses_every_link_of_a_parking_lot() {
    // Routers 0-1-2-3 in a row; host 4 on router 0 sends to host 5 on router 3: 5 hops, delays add up.
    let hop = |d| common::link("100mbit", d, 100, 0.0);
    let links = vec![
        duplex(0, 1, hop("1ms")),
        duplex(1, 2, hop("2ms")),
        duplex(2, 3, hop("3ms")),
        duplex(4, 0, hop("0s")),
        duplex(3, 5, hop("0s")),
    ];
    let apps = vec![
        AppSpec { host: HostId(5), peer: HostId(4), flow: FlowId(0), app: common::acceptor(5001, None, true) },
        AppSpec {
            host: HostId(4),
            peer: HostId(5),
            flow: FlowId(0),
            app: common::opener(5001, Duration::ZERO, Some(16384), true),
        },
    ];
    let spec = SimSpec {
        hosts: (0..6).map(|_| common::host(1 << 20)).collect(),
        links,
        apps,
        measure: Duration::from_secs(2),
    };
    let r = run::<Connection>(&spec, 1).unwrap();
    let sender = r.endpoints.iter().find(|e| e.host == HostId(4)).unwrap();
    // The handshake's RTT: 2 × 6 ms of propagation plus serialization on five hops each way.
    let srtt = sender.stats.MinRTT;
    assert!((12.0..13.0).contains(&srtt), "min RTT {srtt} ms");
    for l in 0..5 {
        assert!(r.links[LinkId(l).forward()].frames_delivered > 1000, "link {l} carried the data");
    }
}

#[test]
fn hosts_with_no_links_between_them_are_refused() {
    let mut spec = dumbbell(&["1ms"], common::link("10mbit", "1ms", 100, 0.0), 1);
    spec.hosts.push(common::host(1 << 20));
    spec.apps[1].peer = HostId(4);
    match run::<Connection>(&spec, 1) {
        Err(SimError::NoRoute { from, to }) => assert_eq!((from, to), (HostId(0), HostId(4))),
        other => panic!("{:?}", other.map(|r| r.end_time)),
    }
}

fn two_hosts(up: LinkConfig, secs: u64) -> SimSpec<TcpConfig> {
    SimSpec::two_hosts(
        up,
        common::link("10mbit", "10ms", 100, 0.0),
        [common::host(1 << 20), common::host(1 << 20)],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(16384), true)),
        ],
        Duration::from_secs(secs),
    )
}

#[test]
fn the_generic_path_with_a_fifo_reproduces_the_fast_path() {
    // `jitter = "0s"` sends the direction through the qdisc packet by packet, with the same physics: every
    // figure of the run but the engine's event count must agree.
    let fast = two_hosts(common::link("10mbit", "10ms", 30, 0.0), 10);
    let mut staged = fast.clone();
    staged.links[0].forward.jitter = Some(Duration::ZERO);
    let (a, b) = (run::<Connection>(&fast, 1).unwrap(), run::<Connection>(&staged, 1).unwrap());
    assert!(a.links[UP].drops_queue_full > 0, "the queue overflows, so the limit is exercised");
    assert_eq!(a.links[UP], b.links[UP]);
    assert_eq!(a.links[DOWN], b.links[DOWN]);
    assert_eq!(a.end_time, b.end_time);
    for (x, y) in a.endpoints.iter().zip(&b.endpoints) {
        assert_eq!(format!("{:?}", x.stats), format!("{:?}", y.stats));
    }
    assert!(a.qdiscs[UP].is_none());
    let q = b.qdiscs[UP].expect("the generic path reports its qdisc");
    assert_eq!(q.drops_overlimit, b.links[UP].drops_queue_full);
    assert_eq!(q.dequeued, b.links[UP].frames_delivered);
    assert!(q.sojourn_max_ns > 0 && q.max_packets == 30, "{q:?}");
}

/// Sequence numbers of delivered data segments, per direction, in delivery order.
#[derive(Default)]
struct Order {
    seqs: Vec<u32>,
}

impl Probe<Connection> for Order {
    fn on_packet(&mut self, _now: Instant, ev: PacketEvent, seg: &TcpSegment) {
        if let PacketEvent::Delivered { dir } = ev {
            if dir == DirId(0) && seg.payload_len() > 0 {
                self.seqs.push(seg.seq.0);
            }
        }
    }
}

fn reordered(seqs: &[u32]) -> usize {
    seqs.windows(2).filter(|w| (w[1].wrapping_sub(w[0]) as i32) < 0).count()
}

#[test]
fn jitter_keeps_order_unless_reordering_is_asked_for() {
    let mut link = common::link("10mbit", "20ms", 1000, 0.0);
    link.jitter = Some(Duration::from_millis(5));
    let mut inorder = Order::default();
    let r = run_with::<Connection, _>(&two_hosts(link.clone(), 5), 1, &mut inorder).unwrap();
    assert!(inorder.seqs.len() > 1000);
    // Retransmissions aside (none: no loss, a queue deep enough), delivery order is sending order.
    assert_eq!(r.links[UP].drops_queue_full, 0);
    assert_eq!(reordered(&inorder.seqs), 0);
    link.reorder = true;
    let mut shuffled = Order::default();
    let r = run_with::<Connection, _>(&two_hosts(link, 5), 1, &mut shuffled).unwrap();
    // Back-to-back frames 1.2 ms apart with ±5 ms of jitter overtake each other often.
    let n = reordered(&shuffled.seqs);
    assert!(n > shuffled.seqs.len() / 10, "{n} of {}", shuffled.seqs.len());
    let sender = &r.endpoints.iter().find(|e| e.host == CLIENT).unwrap().stats;
    assert!(sender.DupAcksIn > 0, "the receiver saw holes");
}

/// Samples the up direction's backlog at every tick.
#[derive(Default)]
struct Backlog {
    samples: Vec<(usize, u64, Duration)>,
}

impl Probe<Connection> for Backlog {
    fn tick_interval(&self) -> Option<Duration> {
        Some(Duration::from_millis(100))
    }
    fn on_link_tick(&mut self, _now: Instant, links: tcplab_sim::Links<'_, TcpSegment>) {
        let up = links.iter().find(|l| l.dir == UP).expect("the two-host shape has an up direction");
        self.samples.push((up.backlog_packets, up.backlog_bytes, up.wait));
    }
}

#[test]
fn a_probe_samples_each_directions_backlog_on_both_paths() {
    // A 1 MiB window into a 100-frame queue at 10 Mbit/s: the queue fills.
    let fast = two_hosts(common::link("10mbit", "10ms", 100, 0.0), 10);
    let mut staged = fast.clone();
    staged.links[0].forward.jitter = Some(Duration::ZERO);
    let mut series = Vec::new();
    for spec in [fast, staged] {
        let mut b = Backlog::default();
        run_with::<Connection, _>(&spec, 1, &mut b).unwrap();
        assert!(b.samples.iter().any(|s| s.0 == 100), "the queue fills: {:?}", &b.samples[..10]);
        for &(n, bytes, wait) in &b.samples {
            assert!(n <= 100 && bytes <= 100 * 1538, "{n} frames, {bytes} B");
            if spec.links[0].forward.jitter.is_none() {
                // On the FIFO the wait is the backlog's serialization plus the rest of the frame on the wire.
                let backlog_ns = bytes * 8 * 100; // 10 Mbit/s: 100 ns a bit
                assert!(wait.as_nanos() >= backlog_ns && wait.as_nanos() <= backlog_ns + 1538 * 800, "{wait} {bytes}");
            }
        }
        series.push(b.samples.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>());
    }
    // The qdisc's backlog on the generic path is the FIFO's, tick for tick.
    assert_eq!(series[0], series[1]);
}
