//! `connect_pair`, the building block for request/response workloads: one-byte transactions over a
//! 20 ms-each-way path take one round trip each.

// Uses `Testbed`, which exists on Linux only.

use crate::common;

use std::io::{Read, Write};

use tcplab_emu::{connect_pair, Testbed, TestbedSpec};
use tcplab_testkit::Outcome;

fn one_byte_transactions_take_one_round_trip() -> Outcome {
    common::ready()?;
    let mut spec = TestbedSpec::symmetric(common::link("100mbit", "20ms", "1000pkt"));
    spec.client.nodelay = true;
    spec.server.nodelay = true;
    let mut tb = Testbed::start(&spec).unwrap();
    let (mut client, mut server) = connect_pair(&tb, 5003).unwrap();
    assert!(client.nodelay().unwrap() && server.nodelay().unwrap(), "the knobs' socket options are applied");
    let n = 25;
    let echo = std::thread::spawn(move || {
        let mut b = [0u8; 1];
        for _ in 0..n {
            server.read_exact(&mut b).unwrap();
            server.write_all(&b).unwrap();
        }
    });
    let t0 = std::time::Instant::now();
    let mut b = [7u8; 1];
    for _ in 0..n {
        client.write_all(&b).unwrap();
        client.read_exact(&mut b).unwrap();
    }
    let per_transaction_ms = t0.elapsed().as_secs_f64() * 1000.0 / n as f64;
    echo.join().unwrap();
    let health = tb.finish().unwrap();
    eprintln!("{per_transaction_ms:.3} ms per transaction; health {health:?}");
    // 41-byte datagrams: (46 + 38) × 8 bits = 6.72 µs of serialization each way on top of 40 ms.
    assert!(per_transaction_ms >= 40.0, "{per_transaction_ms}");
    assert!(per_transaction_ms < 41.0, "{per_transaction_ms}");
    assert_eq!(health.hidden_drops, 0);
    Ok(())
}

tcplab_testkit::tests!(one_byte_transactions_take_one_round_trip);
