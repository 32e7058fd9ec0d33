//! Each send() call is a write of its own (docs/classic.md § Today beside then): netperf's TCP_RR first
//! burst makes `burst + 1` send() calls of one request each at one instant, and a kernel's `tcp_sendmsg`
//! ends every call in `tcp_push`, so the first request leaves alone and Nagle holds the others until the
//! first ACK. The simulator without a CPU model makes the calls at one instant too; before each call
//! pushed its own output, the eight 128-byte requests of burst 7 left as one 1024-byte segment, and the
//! requests travelled in other groups for the whole run (the `linux` personality 7.8 % over the kernel
//! at burst 7 of classic/dsl-rr-nodelay).

use crate::common;

use tcplab_lab::{load, Scenario, Source, Tcp};
use tcplab_sim::{PacketEvent, Probe, CLIENT};
use tcplab_tcp::Connection;
use tcplab_transport::{Segment, Transport};
use tcplab_units::Instant;

/// The payload of every data segment the client handed its NIC, in order.
#[derive(Default)]
struct ClientData(Vec<u32>);

impl Probe<Connection> for ClientData {
    fn on_packet(&mut self, _now: Instant, ev: PacketEvent, seg: &<Connection as Transport>::Segment) {
        if matches!(ev, PacketEvent::Sent { host, .. } if host == CLIENT) && seg.payload_len() > 0 {
            self.0.push(seg.payload_len());
        }
    }
}

/// The shipped `classic/dsl-rr-nodelay` (384 kbit/s up, 1500 kbit/s down, 100 ms RTT, 128-byte requests),
/// without the CPU model (whose per-call cost already spaces the calls), one burst, 1 s.
fn dsl(stack: &str, burst: u32, nodelay: bool) -> Scenario {
    let text = common::shipped_one_point_without_cpu_model("classic/dsl-rr-nodelay");
    let mut set = vec![
        format!("client.stack={stack:?}"),
        format!("server.stack={stack:?}"),
        format!("test.burst={burst}"),
        format!("test.nodelay={nodelay}"),
        "test.duration=\"1s\"".into(),
    ];
    if stack == "linux" {
        set.extend(["client.tcp.nagle_last_sent=false".into(), "server.tcp.nagle_last_sent=false".into()]);
    }
    load(&Source { name: "dsl-send-calls.toml", text: &text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn first_client_segments(s: &Scenario, n: usize) -> Vec<u32> {
    let mut probe = ClientData::default();
    tcplab_lab::run_point_on::<Tcp>(s, 1, Some(&mut probe)).expect("runs");
    probe.0.into_iter().take(n).collect()
}

#[test]
fn the_first_request_of_a_burst_leaves_alone_and_nagle_holds_the_rest() {
    // Burst 7: eight requests written at one instant. Linux (Minshall's Nagle) and HP-UX (Mentat's: a
    // short last segment holds the next) both send the first call's 128 bytes at once and the other
    // seven calls' 896 bytes together once the first is acknowledged.
    for stack in ["linux", "hpux-11"] {
        let segs = first_client_segments(&dsl(stack, 7, false), 2);
        assert_eq!(segs, [128, 896], "{stack}: the first two request segments on the wire");
    }
}

#[test]
fn with_nodelay_every_call_is_its_own_segment() {
    // TCP_NODELAY: each call's push sends its request at once, eight 128-byte segments, not one.
    let segs = first_client_segments(&dsl("linux", 7, true), 8);
    assert_eq!(segs, [128; 8]);
}

#[test]
fn one_call_in_flight_is_unchanged() {
    // Burst 0: one request per call and per round trip, as before.
    let segs = first_client_segments(&dsl("linux", 0, false), 3);
    assert_eq!(segs, [128; 3]);
}
