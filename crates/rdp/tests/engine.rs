//! Whole runs through the engine: RDP between two hosts over a lossy path.

use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};
use tcplab_rdp::{RdpConfig, RdpConnection, RdpStats};
use tcplab_sim::{run_with, HostSpec, PacketEvent, Probe, SimSpec, CLIENT, EPHEMERAL_PORTS, FRAGMENT_TTL, SERVER};
use tcplab_transport::Transport;
use tcplab_units::{Duration, Instant};
use tcplab_wire::RdpSegment;
use tcplab_workload::{App, Opening, Role, Stream, StreamConfig};

fn link(loss: f64) -> LinkConfig {
    LinkConfig {
        rate: "10mbit".parse().unwrap(),
        delay: "1ms".parse().unwrap(),
        queue: QueueLimit::Packets(1000),
        framing: Framing::Ethernet,
        loss: if loss > 0.0 {
            LossModel::Bernoulli { p: loss, packets: tcplab_link::LossFilter::All }
        } else {
            LossModel::None {}
        },
        mtu: None,
        tick: None,
        idle_credit: tcplab_link::IdleCredit::Dropped,
        qdisc: Default::default(),
        jitter: None,
        reorder: false,
    }
}

fn host(cfg: &RdpConfig) -> HostSpec<RdpConfig> {
    HostSpec {
        transport: cfg.clone(),
        nic_rate: None,
        txqueuelen: 1000,
        ephemeral_ports: EPHEMERAL_PORTS,
        cpu: None,
        fragment_ttl: FRAGMENT_TTL,
        rx_coalesce: Duration::ZERO,
        nic_frame_time: Duration::ZERO,
    }
}

fn spec(cfg: &RdpConfig, up_loss: f64, down_loss: f64, secs: u64) -> SimSpec<RdpConfig> {
    let sender = App::Stream(Stream::new(StreamConfig {
        opening: Opening::Connect { connections: 1, port: 5001, ports: 1, at: Instant::ZERO, spacing: Duration::ZERO },
        role: Role::Send { message: 512 },
        gates_measurement: true,
    }));
    let receiver = App::Stream(Stream::new(StreamConfig {
        opening: Opening::Accept { port: 5001, ports: 1, connections: 1 },
        role: Role::Receive,
        gates_measurement: true,
    }));
    SimSpec::two_hosts(
        link(up_loss),
        link(down_loss),
        [host(cfg), host(cfg)],
        vec![(SERVER, receiver), (CLIENT, sender)],
        Duration::from_secs(secs),
    )
}

/// Counts data packets the path dropped, by direction.
#[derive(Default)]
struct Drops {
    data: u64,
    other: u64,
}

impl Probe<RdpConnection> for Drops {
    fn on_packet(&mut self, _now: Instant, ev: PacketEvent, seg: &RdpSegment) {
        if let PacketEvent::LinkDropped { .. } = ev {
            if seg.data_len > 0 {
                self.data += 1;
            } else {
                self.other += 1;
            }
        }
    }
}

struct Outcome {
    sender: RdpStats,
    receiver: RdpStats,
    drops: Drops,
}

fn run(cfg: &RdpConfig, up_loss: f64, down_loss: f64, secs: u64, seed: u64) -> Outcome {
    let mut drops = Drops::default();
    let r = run_with::<RdpConnection, _>(&spec(cfg, up_loss, down_loss, secs), seed, &mut drops).unwrap();
    assert_eq!(r.endpoints.len(), 2);
    let sender = r.endpoints.iter().find(|e| e.host == CLIENT).unwrap().stats.clone();
    let receiver = r.endpoints.iter().find(|e| e.host == SERVER).unwrap().stats.clone();
    Outcome { sender, receiver, drops }
}

#[test]
fn a_clean_path_delivers_every_message_once_without_retransmission() {
    let o = run(&RdpConfig::default(), 0.0, 0.0, 5, 1);
    assert!(o.sender.DataSegsOut > 1000, "{}", o.sender.DataSegsOut);
    assert_eq!(o.sender.SegsRetrans, 0);
    assert_eq!(o.receiver.DupSegsIn, 0);
    assert_eq!(o.receiver.MessagesDelivered, o.sender.DataSegsOut);
    assert_eq!(o.receiver.DataOctetsIn, 512 * o.sender.DataSegsOut);
    assert_eq!(o.drops.data + o.drops.other, 0);
    assert_eq!(RdpConnection::PROTOCOL, "rdp");
}

/// Part C's identity: every retransmission is either needed (its previous copy was dropped) or spurious
/// (the copy arrives as a duplicate, or is dropped). With RTO (2 s) ≫ RTT (≈ 3 ms) and a path that never
/// reorders or duplicates, R = D + data drops exactly, EACKs or not, whether or not ACKs are lost too.
#[test]
fn retransmissions_equal_duplicates_plus_data_drops_for_every_seed() {
    for eack in [true, false] {
        let cfg = RdpConfig { eack, eack_honour: eack, ..RdpConfig::default() };
        for seed in 1..=4 {
            let o = run(&cfg, 0.04, 0.04, 20, seed);
            let (r, d) = (o.sender.SegsRetrans, o.receiver.DupSegsIn);
            assert!(r > 0, "eack {eack} seed {seed}: no loss?");
            assert_eq!(r, d + o.drops.data, "eack {eack} seed {seed}: R {r}, D {d}, drops {}", o.drops.data);
            // Every message arrived exactly once.
            assert_eq!(o.receiver.MessagesDelivered, o.sender.DataSegsOut - r, "eack {eack} seed {seed}");
        }
    }
}

/// Loss on the data direction only (every ACK arrives): with EACKs no segment that arrived is ever resent, so D = 0 and
/// R = data drops, and R ≈ N·p/(1−p) (each message needs a geometric number of transmissions).
#[test]
fn with_eacks_and_data_loss_only_nothing_arrives_twice() {
    let cfg = RdpConfig::default();
    let p = 0.04;
    let (mut n_total, mut r_total) = (0u64, 0u64);
    for seed in 1..=4 {
        let o = run(&cfg, p, 0.0, 30, seed);
        let r = o.sender.SegsRetrans;
        assert_eq!(o.receiver.DupSegsIn, 0, "seed {seed}");
        assert_eq!(r, o.drops.data, "seed {seed}");
        // The up direction also carries the client's SYN, its handshake ACK and closing RST, which the
        // link may drop (no loss filter yet); the reverse direction, all ACKs and EACKs, loses nothing.
        n_total += o.receiver.MessagesDelivered;
        r_total += r;
    }
    let want = n_total as f64 * p / (1.0 - p);
    eprintln!("N {n_total}, R {r_total}, N·p/q {want:.1}");
    // sd = √(N·p)/(1−p); allow 4 sd.
    let sd = (n_total as f64 * p).sqrt() / (1.0 - p);
    assert!((r_total as f64 - want).abs() < 4.0 * sd, "R {r_total}, expected {want:.1} ± {sd:.1} for N {n_total}");
}

/// Without EACKs the same data loss makes the go-back copies of segments that had arrived into duplicates.
#[test]
fn without_eacks_segments_behind_a_hole_are_resent_and_arrive_twice() {
    let cfg = RdpConfig { eack: false, eack_honour: false, ..RdpConfig::default() };
    let o = run(&cfg, 0.04, 0.0, 30, 1);
    let (r, d) = (o.sender.SegsRetrans, o.receiver.DupSegsIn);
    assert_eq!(r, d + o.drops.data);
    // Part C.5: D/R ≈ (W−1)q²/W ≈ 0.69 for W = 4.
    let ratio = d as f64 / r as f64;
    eprintln!("R {r}, D {d}, drops {}, D/R {ratio:.3}", o.drops.data);
    assert!((0.6..0.78).contains(&ratio), "D/R = {ratio}, R {r}, D {d}");
}
