//! The emulator's benchmark figures for docs/benchmarks.md (ignored by default: they take ~30 s and their
//! figures depend on the machine). Run as root:
//!
//! ```text
//! cargo test -p tcplab-emu --test bench -- --ignored --nocapture
//! ```

mod common;

use tcplab_emu::{run_stream, EmuRun, EmuSpec, EmulatorConfig};
use tcplab_testkit::Outcome;
use tcplab_units::{ByteSize, Duration};

fn run(rate: &str, delay: &str, queue: &str, emulator: EmulatorConfig) -> EmuRun {
    let mut spec = EmuSpec::new(common::link(rate, delay, queue), Duration::from_secs(4));
    spec.client.send_buffer = ByteSize::new(32 << 20);
    spec.server.recv_buffer = ByteSize::new(32 << 20);
    spec.emulator = emulator;
    run_stream(&spec).unwrap()
}

fn row(label: &str, r: &EmuRun) {
    let (s, h) = (&r.stream, &r.health);
    let frames = (h.up.link.frames_in + h.down.link.frames_in) as f64;
    let us = |ns: u64| ns as f64 / 1000.0;
    println!(
        "| {label} | {:.3} | {:.0} | {:.0} | {} / {} | {:.0} / {:.0} / {:.0} | {:.2} / {:.2} | {} | {} |",
        s.goodput_between(1.0, 4.0).unwrap_or(s.throughput_bps) / 1e9,
        frames / s.elapsed_s,
        h.up.link.frames_in as f64 / h.up.reads.max(1) as f64,
        h.up.reads,
        h.up.writes,
        us(h.up.lateness.p50_ns),
        us(h.up.lateness.p99_ns),
        us(h.up.lateness.max_ns),
        h.up.cpu_s / s.elapsed_s,
        h.down.cpu_s / s.elapsed_s,
        h.hidden_drops,
        h.up.reads_at_cap,
    );
}

fn emulator_figures() -> Outcome {
    common::ready()?;
    let exact = EmulatorConfig { gso: false, coalesce: [Duration::ZERO; 2], ..EmulatorConfig::default() };
    let gso = EmulatorConfig::default();
    println!("| run | goodput Gbit/s (1–4 s) | frames/s (both directions) | frames per read (up) | reads / writes (up) | up lateness p50 / p99 / max µs | CPU up / down (cores) | hidden drops | reads at cap (up) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    row("ceiling, per-frame (no GSO), 40gbit 0 ms", &run("40gbit", "0s", "100000pkt", exact.clone()));
    row("ceiling, GSO + coalescing, 40gbit 0 ms", &run("40gbit", "0s", "100000pkt", gso.clone()));
    row("100mbit 20 ms, 1-BDP queue, GSO", &run("100mbit", "20ms", "325pkt", gso.clone()));
    row("100mbit 20 ms, 1-BDP queue, per-frame", &run("100mbit", "20ms", "325pkt", exact.clone()));
    row("1gbit 10 ms, 1-BDP queue, GSO + coalescing", &run("1gbit", "10ms", "1625pkt", gso));
    row("1gbit 10 ms, 1-BDP queue, per-frame", &run("1gbit", "10ms", "1625pkt", exact));
    Ok(())
}

fn main() -> std::process::ExitCode {
    // A benchmark, not a check: listed as ignored, run with --ignored (as root).
    tcplab_testkit::run(vec![tcplab_testkit::test("emulator_figures", emulator_figures).with_ignored_flag(true)])
}
