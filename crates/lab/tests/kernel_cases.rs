//! Issue 11's kernel cases (docs/tcp.md § Measured against Linux 6.x): where `linux` on both ends leaves
//! slow start, against the exit the kernel's HyStart counters recorded on the same path.

mod common;
use common::{estats, run_scenario, scenario};

/// Case A: 100 Mbit/s, 20 ms each way, a 500 KB queue; 6 MiB buffers, 64 KiB writes. The exit happens in
/// the first second; 2 s of measurement are enough to see it.
const CASE_A: &str = r#"
name = "case-a"
[path.up]
rate = "100mbit"
delay = "20ms"
queue = "500KB"
[path.down]
rate = "100mbit"
delay = "20ms"
[client]
stack = "linux"
[server]
stack = "linux"
[test]
kind = "tcp_stream"
duration = "2s"
message = "64KiB"
send_buffer = "6MiB"
recv_buffer = "6MiB"
"#;

#[test]
fn case_a_leaves_slow_start_by_the_ack_train_where_the_kernel_did() {
    // A 1514-byte frame takes 121 µs at 100 Mbit/s, so a round's ACKs come back at that spacing (two
    // segments per ACK: 242 µs, well inside hystart_ack_delta = 2 ms) and the train passes
    // delay_min / 2 ≈ 20.1 ms after ≈ 166 segments are acknowledged in the round. Rounds start at
    // IW · 2^n = 10, 20, …, 160, 320 segments: the 160 round's whole train lasts 19.4 ms, so the 320 round
    // is the first to fire, at cwnd ≈ 320 + 166 = 486 — inside the kernel's 445–492 (HystartTrainCwnd),
    // and asserted within 25 % of that band.
    let doc = run_scenario(&scenario(CASE_A, &[]), 1);
    let e = estats(&doc.points[0].connections[0]);
    assert_eq!(e.HystartTrainDetect, 1, "the ACK-train detector ends slow start");
    assert_eq!(e.HystartDelayDetect, 0);
    let cwnd_pkts = e.HystartTrainCwnd / e.CurMSS;
    assert!((445 * 3 / 4..=492 * 5 / 4).contains(&cwnd_pkts), "exit at {cwnd_pkts} packets");
    assert_eq!(e.Timeouts, 0, "no timeout after the exit");
}
