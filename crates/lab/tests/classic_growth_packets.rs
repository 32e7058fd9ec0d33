//! The `linux` personality grows cwnd in packets (`cwnd_growth_packets`, Linux `tcp_skb_pcount` into
//! `tp->delivered`): on classic/dsl-rr-nodelay each 8192-byte response ends in a 952-byte segment, and
//! the ACK that covers it grew the server's cwnd by a whole segment on the kernel (Linux 6.18) where
//! byte counting grew it by 952 bytes; from 0.3 s on the server then had one segment more in flight and
//! its segments carried older ACK fields, so Minshall's Nagle held the client's requests a tick longer.
//! Bursts 3 and 7 (Nagle, no CPU model, 10 s) give the kernel's 13.6 and 20.0 transactions/s with it,
//! 13.8 and 21.6 without (20.1 at 7 before the engine processed each instant's arrivals before the
//! application; docs/classic.md § Today beside then, "Burst 8, traced").

use crate::common;

fn tps(burst: u32, growth_packets: bool) -> f64 {
    let text = common::shipped_one_point_without_cpu_model("classic/dsl-rr-nodelay");
    let burst = format!("test.burst={burst}");
    let growth = format!("server.tcp.cwnd_growth_packets={growth_packets}");
    let set: Vec<&str> =
        common::DSL_TODAY.into_iter().chain(["test.nodelay=false", burst.as_str(), growth.as_str()]).collect();
    let doc = common::run_scenario(&common::scenario(&text, &set), 1);
    common::rr(&doc.points[0]).transactions_per_s
}

#[test]
fn growth_in_packets_gives_the_kernels_bursts_3_and_7() {
    for (burst, kernel, bytes) in [(3, 13.6, 13.8), (7, 20.0, 21.6)] {
        let with = tps(burst, true);
        let without = tps(burst, false);
        assert!((with - kernel).abs() < 0.05, "burst {burst}: {with} trans/s, the kernel {kernel}");
        assert!((without - bytes).abs() < 0.05, "burst {burst} by bytes: {without} trans/s, expected {bytes}");
    }
}
