use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};
use tcplab_sim::{run, Direction, HostSpec, SimSpec, TestSpec};
use tcplab_tcp::TcpConfig;
use tcplab_units::{ByteSize, Duration};

#[test]
fn smoke() {
    let rate = std::env::var("RATE").unwrap_or("10mbit".into());
    let delay = std::env::var("DELAY").unwrap_or("20ms".into());
    let secs: u64 = std::env::var("SECS").unwrap_or("10".into()).parse().unwrap();
    let link = LinkConfig {
        rate: rate.parse().unwrap(),
        delay: delay.parse().unwrap(),
        queue: QueueLimit::Packets(100),
        framing: Framing::Ethernet,
        loss: LossModel::None,
    };
    let mut tcp = TcpConfig::default();
    tcp.send_buffer = ByteSize::new(16 << 20);
    tcp.recv_buffer = ByteSize::new(16 << 20);
    let host = HostSpec { tcp, nic_rate: None, txqueuelen: 1000 };
    let spec = SimSpec {
        up: link.clone(),
        down: link,
        client: host.clone(),
        server: host,
        test: TestSpec {
            direction: Direction::ClientToServer,
            duration: Duration::from_secs(secs),
            message: 16384,
            parallel: 1,
        },
    };
    let t = std::time::Instant::now();
    let r = run(&spec, 1);
    let wall = t.elapsed();
    println!(
        "wall {:?} thr {} events {} dsegs {} retr {}",
        wall, r.throughput_bps, r.events, r.data_segments, r.retransmissions
    );
    println!("{:?}", r.connections[0].estats);
}
