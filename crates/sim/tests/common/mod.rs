//! What the engine's whole-run tests share: a path, hosts, and bulk-transfer applications.

use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};
use tcplab_sim::{HostSpec, EPHEMERAL_PORTS, FRAGMENT_TTL};
use tcplab_tcp::TcpConfig;
use tcplab_units::{ByteSize, Duration, Instant};
use tcplab_workload::{App, Opening, Role, Stream, StreamConfig};

pub fn link(rate: &str, delay: &str, queue: u32, loss: f64) -> LinkConfig {
    LinkConfig {
        rate: rate.parse().unwrap(),
        delay: delay.parse().unwrap(),
        queue: QueueLimit::Packets(queue),
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

pub fn host(buffer: u64) -> HostSpec<TcpConfig> {
    let tcp =
        TcpConfig { send_buffer: ByteSize::new(buffer), recv_buffer: ByteSize::new(buffer), ..TcpConfig::default() };
    HostSpec {
        transport: tcp,
        nic_rate: None,
        txqueuelen: 1000,
        ephemeral_ports: EPHEMERAL_PORTS,
        cpu: None,
        fragment_ttl: FRAGMENT_TTL,
        rx_coalesce: Duration::ZERO,
        nic_frame_time: Duration::ZERO,
    }
}

/// An application that opens one connection to `port` at `at` and sends (`Some(message)`) or receives.
pub fn opener(port: u16, at: Duration, send: Option<u64>, gates: bool) -> App {
    App::Stream(Stream::new(StreamConfig {
        opening: Opening::Connect { connections: 1, port, ports: 1, at: Instant::ZERO + at, spacing: Duration::ZERO },
        role: send.map_or(Role::Receive, |message| Role::Send { message }),
        gates_measurement: gates,
    }))
}

/// An application that accepts one connection on `port` and sends or receives.
pub fn acceptor(port: u16, send: Option<u64>, gates: bool) -> App {
    App::Stream(Stream::new(StreamConfig {
        opening: Opening::Accept { port, ports: 1, connections: 1 },
        role: send.map_or(Role::Receive, |message| Role::Send { message }),
        gates_measurement: gates,
    }))
}
