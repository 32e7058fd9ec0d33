//! A client nobody here wrote: Debian's iperf3 through the same emulator agrees with tcplab's own
//! TCP_STREAM driver on real sockets.

// Uses `Testbed`, which exists on Linux only.

use crate::common;

use std::process::Stdio;

use tcplab_emu::{run_stream, EmuSpec, Side, Testbed, TestbedSpec};
use tcplab_testkit::{need_tool, Outcome};
use tcplab_units::{ByteSize, Duration};

fn link() -> tcplab_link::LinkConfig {
    common::link("100mbit", "20ms", "325pkt")
}

/// One iperf3 run and one run of our driver on the same path: (iperf3's bit/s, its congestion control, the
/// emulator's hidden drops, ours, whether the emulator kept time in both runs).
fn iperf3_and_ours(seconds: u64) -> (f64, String, u64, f64, bool) {
    let mut tb = Testbed::start(&TestbedSpec::symmetric(link())).unwrap();
    let mut server = tb
        .command(Side::Server, "iperf3")
        .args(["-s", "-1", "-B", "198.18.1.1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = None;
    for _ in 0..50 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let o = tb
            .command(Side::Client, "iperf3")
            .args(["-c", "198.18.1.1", "-t", &seconds.to_string(), "-J"])
            .output()
            .unwrap();
        if o.status.success() {
            out = Some(o);
            break;
        }
    }
    let _ = server.wait();
    let health = tb.finish().unwrap();
    drop(tb);
    let json: serde_json::Value = serde_json::from_slice(&out.expect("iperf3 client never connected").stdout).unwrap();
    let iperf_bps = json["end"]["sum_received"]["bits_per_second"].as_f64().unwrap();
    let iperf_cc = json["end"]["sender_tcp_congestion"].as_str().unwrap_or("").to_string();

    // The same path, with buffers like iperf3's (kernel defaults scale past the 500 kB BDP).
    let mut spec = EmuSpec::new(link(), Duration::from_secs(seconds));
    spec.client.send_buffer = ByteSize::new(4 << 20);
    spec.server.recv_buffer = ByteSize::new(4 << 20);
    spec.message = ByteSize::new(128 * 1024); // iperf3's default TCP block
    let ours = run_stream(&spec).unwrap();
    let valid = health.valid && ours.health.valid;
    (iperf_bps, iperf_cc, health.hidden_drops, ours.stream.throughput_bps, valid)
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0), |(s, n), x| (s + x, n + 1));
    sum / n as f64
}

fn iperf3_agrees_with_the_stream_driver_within_2_percent() -> Outcome {
    common::ready()?;
    need_tool("iperf3", "apt-get install iperf3")?;
    // One 5 s run of CUBIC on this path holds only a few loss epochs, so two runs of the same program differ
    // by up to 10 % with where the losses fall (CI saw 83–91 Mbit/s for both programs): the programs are
    // compared by the mean of each over pairs run in turn, until the means agree within 2 % (up to five
    // pairs whose emulator kept time; a pair it did not is run again, as the backend's docs tell callers).
    // In this VM's phases of vCPU steal most pairs are disturbed (p99 release lateness 1.3–7 ms, stalls of
    // 34 ms: 8 of 8 in one CI run, 7 of 8 and 4 of 5 in two runs alone right after), so up to 16 pairs are
    // run to find the on-time ones. Every run must be cubic, without hidden drops and under the analytic bound.
    let mut pairs = Vec::new();
    let mut attempts = 0;
    while pairs.len() < 5 && attempts < 16 {
        attempts += 1;
        let (iperf_bps, iperf_cc, hidden, ours_bps, valid) = iperf3_and_ours(5);
        eprintln!(
            "iperf3 {:.2} Mbit/s ({iperf_cc}, hidden drops {hidden}), tcplab {:.2} Mbit/s, emulator {}",
            iperf_bps / 1e6,
            ours_bps / 1e6,
            if valid { "on time" } else { "disturbed: run again" }
        );
        assert_eq!(iperf_cc, "cubic", "the route's congctl applies to programs we did not write");
        assert_eq!(hidden, 0);
        assert!(iperf_bps < common::bound_bps(100e6));
        assert!(ours_bps < common::bound_bps(100e6));
        if !valid {
            continue;
        }
        pairs.push((iperf_bps, ours_bps));
        let (iperf, ours) = (mean(pairs.iter().map(|p| p.0)), mean(pairs.iter().map(|p| p.1)));
        if (iperf - ours).abs() / ours < 0.02 {
            return Ok(());
        }
    }
    panic!("the means of iperf3's and our runs (bit/s) differ by 2% or more over every prefix of {pairs:?}");
}

tcplab_testkit::tests!(iperf3_agrees_with_the_stream_driver_within_2_percent);
