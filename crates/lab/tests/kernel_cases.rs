//! The kernel cases (docs/tcp.md § Measured against Linux): `linux` on both ends against Linux 6.18's own
//! TCP run through the Linux backend on the same paths — where slow start ends, how many segments are
//! retransmitted, the goodput under 1% loss (at 100 and at 10 Mbit/s), and request/response under Nagle on a
//! DSL-like path.

use crate::common;
use common::{estats, rr, run_scenario, scenario, stream};

/// Case A: 100 Mbit/s, 20 ms each way, a 500 KB queue; 6 MiB buffers, 64 KiB writes, 20 s.
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
duration = "20s"
message = "64KiB"
send_buffer = "6MiB"
recv_buffer = "6MiB"
"#;

/// Case B: case A's setup on 10 Mbit/s, 50 ms each way, a 100 KB queue, 30 s.
fn case_b() -> tcplab_lab::Scenario {
    scenario(
        CASE_A,
        &[
            "path.up.rate=\"10mbit\"",
            "path.down.rate=\"10mbit\"",
            "path.up.delay=\"50ms\"",
            "path.down.delay=\"50ms\"",
            "path.up.queue=\"100KB\"",
            "test.duration=\"30s\"",
        ],
    )
}

/// `got` within a factor of two of `kernel`.
fn within_2x(got: u64, kernel: u64) -> bool {
    2 * got >= kernel && got <= 2 * kernel
}

#[test]
fn case_a_leaves_slow_start_by_the_ack_train_and_retransmits_as_the_kernel() {
    // A 1514-byte frame takes 121 µs at 100 Mbit/s and the receiver ACKs every segment while its window
    // grows, so a round's ACKs come back 121 µs apart (well inside hystart_ack_delta = 2 ms) and the train
    // passes delay_min / 2 ≈ 20.1 ms after ≈ 166 segments are acknowledged in the round. Rounds start at
    // IW · 2^n = 10, 20, …, 160, 320 segments: the 160 round's whole train lasts 19.4 ms, so the 320 round
    // is the first to fire, at cwnd ≈ 320 + 166 = 486. Linux 6.18: ACK train at 489 (the issue: 445–492).
    let doc = run_scenario(&scenario(CASE_A, &[]), 1);
    let e = estats(&doc.points[0].connections[0]);
    assert_eq!(e.HystartTrainDetect, 1, "the ACK-train detector ends slow start");
    assert_eq!(e.HystartDelayDetect, 0);
    let cwnd_pkts = e.HystartTrainCwnd / e.CurMSS;
    assert!((489 * 3 / 4..=489 * 5 / 4).contains(&cwnd_pkts), "exit at {cwnd_pkts} packets");
    assert_eq!(e.Timeouts, 0, "no timeout");
    // After the exit CUBIC grows 5% per RTT until the first loss (Linux's cnt ≤ 20), reaches the path's
    // 650 packets within half a second and loses a few dozen segments there, then 2–4 at each later
    // congestion event. Linux 6.18: 39 and 41 retransmissions in two runs (the issue: 58).
    assert!(within_2x(e.SegsRetrans, 41), "{} retransmissions, the kernel 41", e.SegsRetrans);
    let goodput = stream(&doc.points[0]).throughput_bps;
    assert!((goodput / 93.27e6 - 1.0).abs() < 0.02, "goodput {goodput} b/s, the kernel 93.27 Mbit/s");
}

#[test]
fn case_b_leaves_slow_start_by_the_ack_train_where_the_kernel_did() {
    // At 10 Mbit/s a frame takes 1.23 ms: only ACKs of every segment (the receiver's window is still
    // growing) keep the train inside 2 ms. The round begun at 82 segments passes delay_min / 2 ≈ 50.5 ms
    // after ≈ 41 ACKs: exit at ≈ 123. Linux 6.18: ACK train at 122, 26 retransmissions.
    let doc = run_scenario(&case_b(), 1);
    let e = estats(&doc.points[0].connections[0]);
    assert_eq!((e.HystartTrainDetect, e.HystartDelayDetect), (1, 0), "the ACK train ends slow start");
    let cwnd_pkts = e.HystartTrainCwnd / e.CurMSS;
    assert!((122 * 3 / 4..=122 * 5 / 4).contains(&cwnd_pkts), "exit at {cwnd_pkts} packets");
    assert!(within_2x(e.SegsRetrans, 26), "{} retransmissions, the kernel 26", e.SegsRetrans);
}

#[test]
fn case_c_goodput_under_one_percent_loss_is_the_kernels() {
    // Case A with 1% random loss on the data path, averaged over seeds (the issue: 3.50 Mbit/s; Linux
    // 6.18 here: 3.34 over 8 runs, 2.78–4.05; tcplab 3.26 over these 8 seeds).
    let s = scenario(CASE_A, &["path.up.loss={ model = \"bernoulli\", p = 0.01 }"]);
    let seeds = 1..=8u64;
    let n = seeds.clone().count() as f64;
    let mean = seeds.map(|seed| stream(&run_scenario(&s, seed).points[0]).throughput_bps).sum::<f64>() / n;
    assert!((mean / 3.50e6 - 1.0).abs() < 0.10, "mean goodput {mean} b/s, the kernel 3.50 Mbit/s");
}

/// A shipped scenario's text (`scenarios/NAME.toml`).
fn shipped(name: &str) -> &'static str {
    tcplab_lab::SHIPPED.iter().find(|s| s.name == name).expect("shipped").text
}

/// The shipped `rr-dsl` (2 Mbit/s up, 8 Mbit/s down, 15 ms each way; 32 B requests, 1000 B responses; Nagle
/// at the client) with `linux` on both ends, so Nagle at both; its sweep is not run, `set` picks the burst.
#[test]
fn rr_under_nagle_runs_at_the_kernels_transaction_rate() {
    // Linux 6.18 here (`tcplab run … --backend linux`, 10 s): 243.3 and 244.8 transactions/s with 17 in
    // flight, 99.0–99.9 with 9, 74.0 with 5, 31.0 with 2 and NODELAY at the client only, 472.8 with 33.
    // Its traces show what the personality must do: an ACK that releases data Nagle held sends it at once,
    // before the application's reply to the segment that carried the ACK can join it (kernel event trace:
    // the 128-byte segment leaves in the softirq of the arriving response, the application's 32-byte
    // write follows 100 µs later and is held); Nagle is Minshall's; a read that drains a short request
    // outside pingpong mode sends its ACK within the read, ahead of the reply (`tcp_cleanup_rbuf`); and the
    // delayed-ACK and pingpong clocks run in 4 ms jiffies (HZ = 250). Without the last two, 9 in flight ran
    // at 86.4 (−13%).
    for (set, kernel) in [
        (&["test.burst=16"][..], 244.0),
        (&["test.burst=8"][..], 99.5),
        (&["test.burst=4"][..], 74.0),
        (&["test.burst=1", "client.tcp.nodelay=true"][..], 31.0),
        (&["test.burst=32"][..], 472.8),
    ] {
        let set: Vec<&str> =
            ["client.stack=\"linux\"", "server.stack=\"linux\""].into_iter().chain(set.iter().copied()).collect();
        let got = rr(&run_scenario(&scenario(shipped("rr-dsl"), &set), 1).points[0]).transactions_per_s;
        eprintln!("{set:?}: {got} transactions/s, Linux {kernel}");
        assert!((got / kernel - 1.0).abs() < 0.05, "{set:?}: {got} vs the kernel's {kernel}");
    }
}

#[test]
fn random_loss_at_ten_megabits_costs_what_it_costs_the_kernel() {
    // The shipped lossy-10m (10 Mbit/s, 20 ms each way, 1% loss on the data path, 60 s) with `linux` on
    // both ends. The emulator seeds its loss streams as the simulator does (`tcplab_link::stream_seed`), so
    // one seed drops the same frames, by index, on both backends, and the runs are compared seed by seed:
    // `tcplab compare lossy-10m --runs 6` on Linux 6.18 here, 29 Nov 2026 (seed 3's kernel run was invalid,
    // a 47 ms stall of the emulator). Windows of 10–15 segments, so how a loss rounds the window matters:
    // the kernel's packet-counted CUBIC sets ssthresh = ⌊⌊cwnd⌋·717/1024⌋ packets (cubic.whole_segments);
    // in bytes, as RFC 9438 writes it, the personality ran 11% faster. Unpaired (each backend its own
    // draws) the seeds' goodput spreads by 0.2 Mbit/s with the count of losses drawn, which a 3-run mean
    // of the kernel's did not average out: that, not a mechanism, was the 5% once recorded here.
    let text = shipped("lossy-10m");
    let s = scenario(text, &["client.stack=\"linux\"", "server.stack=\"linux\""]);
    let kernel = [(1u64, 2.8259e6), (2, 2.8738e6), (4, 2.9813e6), (5, 2.8369e6), (6, 3.2248e6)];
    let mut ratios = Vec::new();
    for (seed, linux) in kernel {
        let got = stream(&run_scenario(&s, seed).points[0]).throughput_bps;
        eprintln!("seed {seed}: {got} b/s, the kernel {linux}");
        // Measured: −0.3% to +1.0% per seed.
        assert!((got / linux - 1.0).abs() < 0.02, "seed {seed}: {got} b/s against the kernel's {linux}");
        ratios.push(got / linux);
    }
    let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
    assert!((mean - 1.0).abs() < 0.01, "the mean ratio {mean}");
    // RFC 9438 throughout: the reduction in bytes and the growth by fractions.
    let rfc = scenario(
        text,
        &[
            "client.stack=\"linux\"",
            "server.stack=\"linux\"",
            "client.tcp.cubic.whole_segments=false",
            "client.tcp.cubic.bictcp=false",
        ],
    );
    let bytes = stream(&run_scenario(&rfc, 1).points[0]).throughput_bps;
    let whole = stream(&run_scenario(&s, 1).points[0]).throughput_bps;
    assert!(bytes > 1.08 * whole, "RFC 9438's reduction in bytes: {bytes} against {whole} b/s");
}
