//! Packets that reach a host at one instant are all processed before its application runs (crates/sim,
//! *One instant*). On classic/dsl-rr-nodelay (`linux` at both ends, Nagle, burst 8, no CPU model) two
//! client segments reach the server in one dummynet tick at 790 ms: a 768-byte request and the pure ACK of
//! the server's last short segment. Linux 6.18's server processes both in its receive path before
//! netserver's recv returns, so Minshall's Nagle finds no short segment unacknowledged and the 456 bytes
//! left of a response leave alone, before the new responses are written; the kernel gives 20.2
//! transactions/s. When the engine ran the server's application after the first segment, the responses
//! joined the tail and the run gave 21.6 (docs/classic.md § Today beside then, "Burst 8, traced").

use crate::common;

use tcplab_lab::Tcp;
use tcplab_sim::{PacketEvent, Probe, SERVER, UP};
use tcplab_tcp::Connection;
use tcplab_transport::{Segment, Transport};
use tcplab_units::Instant;

/// At the server: each segment delivered to it (time, payload bytes) and each it sent (time, payload).
#[derive(Default)]
struct ServerSide {
    delivered: Vec<(Instant, u32)>,
    sent: Vec<(Instant, u32)>,
}

impl Probe<Connection> for ServerSide {
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &<Connection as Transport>::Segment) {
        match ev {
            PacketEvent::Delivered { dir } if dir == UP => self.delivered.push((now, seg.payload_len())),
            PacketEvent::Sent { host, .. } if host == SERVER => self.sent.push((now, seg.payload_len())),
            _ => {}
        }
    }
}

fn burst8(probe: &mut ServerSide) -> f64 {
    let text = common::shipped_one_point_without_cpu_model("classic/dsl-rr-nodelay");
    let set: Vec<&str> = common::DSL_TODAY.into_iter().chain(["test.nodelay=false", "test.burst=8"]).collect();
    let s = common::scenario(&text, &set);
    let run = tcplab_lab::run_point_on::<Tcp>(&s, 1, Some(probe)).expect("runs");
    common::rr(&run.point).transactions_per_s
}

/// Full segments' payload on this path: MSS 1460 less 12 bytes of timestamps.
const FULL: u32 = 1448;

#[test]
fn a_request_and_an_ack_of_one_instant_both_reach_the_server_before_its_application() {
    let mut p = ServerSide::default();
    let tps = burst8(&mut p);
    // Instants at which a request and then a pure ACK reached the server, and what it sent then.
    let mut pairs = 0;
    let mut tails_alone = 0;
    for w in p.delivered.windows(2) {
        let ((t, first), (t2, second)) = (w[0], w[1]);
        if t != t2 || first == 0 || second != 0 {
            continue;
        }
        pairs += 1;
        let sent: Vec<u32> = p.sent.iter().filter(|(at, _)| *at == t).map(|&(_, n)| n).collect();
        eprintln!("{t:?}: {first} then an ACK; the server sent {sent:?}");
        if sent.len() > 1 && sent[0] < FULL && sent[1] == FULL {
            tails_alone += 1;
        }
    }
    assert!(pairs > 0, "no instant brought the server a request and a pure ACK");
    assert!(tails_alone > 0, "a short tail never left alone ahead of the new responses");
    assert!((tps - 20.2).abs() < 0.05, "{tps} transactions/s, the kernel 20.2");
}
