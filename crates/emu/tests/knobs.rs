//! The knobs reach the kernel: a connection made by ordinary sockets (std::net, no tcplab socket options)
//! inside the namespaces shows the negotiated options, initial window, MSS, RTO floor and congestion
//! control that `TcpConfig` asked for, through the namespace sysctls and route options alone.

// Uses `Testbed`, which exists on Linux only.

use crate::common;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

use tcplab_emu::kstats::TcpInfo;
use tcplab_emu::{Side, Testbed, TestbedSpec};
use tcplab_tcp::InitialWindow;
use tcplab_testkit::Outcome;
use tcplab_units::{ByteSize, Duration};

fn congestion(fd: i32) -> String {
    let mut b = [0u8; 16];
    let mut len = b.len() as libc::socklen_t;
    // SAFETY: `b` is valid for `len` bytes.
    unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, b.as_mut_ptr().cast(), &mut len) };
    String::from_utf8_lossy(&b[..len as usize]).trim_end_matches('\0').to_string()
}

fn sysctls_and_route_options_shape_a_connection_we_did_not_configure() -> Outcome {
    common::ready()?;
    let mut spec = TestbedSpec::symmetric(common::link("100mbit", "20ms", "1000pkt"));
    spec.client.initial_window = InitialWindow::Segments(4);
    spec.client.sack = false;
    spec.client.timestamps = false;
    spec.client.mss = ByteSize::new(1000);
    spec.client.rto_min = Duration::from_millis(300);
    let mut tb = Testbed::start(&spec).unwrap();
    let listener = tb.netns(Side::Server).enter(|| TcpListener::bind("198.18.1.1:5002")).unwrap();
    let client = tb.netns(Side::Client).enter(|| TcpStream::connect("198.18.1.1:5002")).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    let c = TcpInfo::read(client.as_raw_fd()).unwrap();
    let s = TcpInfo::read(server.as_raw_fd()).unwrap();
    let (ce, se) = (c.estats(), s.estats());
    eprintln!("client {ce:?}\nserver {se:?}");
    // SACK and timestamps were refused by the client's namespace; window scaling was not.
    assert_eq!(c.options().unwrap() & 0b111, 0b100);
    assert_eq!(s.options().unwrap() & 0b111, 0b100);
    // Route initcwnd 4 on the client's route; the server keeps the linux personality's 10.
    assert_eq!(c.snd_cwnd(), Some(4));
    assert_eq!(s.snd_cwnd(), Some(10));
    // Route advmss 1000: the server sends 1000-byte segments to the client (no timestamp option).
    assert_eq!(se["CurMSS"], 1000.0);
    // tcp_rto_min_us: Linux's RTO after the handshake's RTT sample is SRTT + max(mdev, rto_min).
    assert!(ce["CurRTO"] >= 340.0 && ce["CurRTO"] < 360.0, "client RTO {}", ce["CurRTO"]);
    assert!(se["CurRTO"] >= 240.0 && se["CurRTO"] < 260.0, "server RTO {}", se["CurRTO"]);
    // Route congctl, though neither socket asked for a congestion control.
    assert_eq!(congestion(client.as_raw_fd()), "cubic");
    assert_eq!(congestion(server.as_raw_fd()), "cubic");
    drop(client);
    let mut rest = Vec::new();
    server.read_to_end(&mut rest).unwrap();
    let health = tb.finish().unwrap();
    assert_eq!(health.hidden_drops, 0);
    Ok(())
}

fn a_knob_linux_cannot_express_is_refused_by_name() {
    let mut spec = TestbedSpec::symmetric(common::link("100mbit", "20ms", "1000pkt"));
    spec.server.rto_initial = Duration::from_secs(3);
    let err = Testbed::start(&spec).err().expect("refused");
    assert!(err.is_usage());
    assert!(err.to_string().contains("server.tcp.rto_initial"), "{err}");
}

tcplab_testkit::tests!(
    sysctls_and_route_options_shape_a_connection_we_did_not_configure,
    a_knob_linux_cannot_express_is_refused_by_name,
);
