//! `classic/gige-ack-avoidance` (docs/classic.md § 2), shortened to 1 s per point: the 2003 gigabit
//! ACK-avoidance report's throughputs, CPU utilizations and service demands. Calibrated on its
//! deferred_ack_max 2 and 32 points only (the NIC's time per frame on the throughputs, the per-packet CPU
//! costs on the service demands); 4, 8 and 16 are predictions.

use crate::common;

use common::{estats, run_scenario, scenario, stream};
use tcplab_lab::SHIPPED;

/// The published figures: (deferred_ack_max, Mbit/s, receiver %, sender %, receiver µs/KB, sender µs/KB).
const PUBLISHED: [(u32, f64, f64, f64, f64, f64); 5] = [
    (2, 478.13, 65.54, 56.35, 11.230, 9.654),
    (4, 570.90, 71.26, 59.77, 10.226, 8.577),
    (8, 641.37, 72.45, 63.95, 9.253, 8.168),
    (16, 680.75, 77.98, 63.46, 9.384, 7.637),
    (32, 693.86, 74.57, 66.05, 8.804, 7.798),
];

/// The scenario's NIC time per frame, µs.
const NIC_FRAME_US: f64 = 16.0;

struct Fig {
    bps: f64,
    util: (f64, f64),
    sdem: (f64, f64),
    acks_per_segment: f64,
}

fn run(k: u32, extra: &[&str]) -> Fig {
    let text = SHIPPED.iter().find(|s| s.name == "classic/gige-ack-avoidance").expect("shipped").text;
    let mut set = vec![format!("client.tcp.deferred_ack_max={k}"), "test.duration=\"1s\"".to_string()];
    set.extend(extra.iter().map(|s| s.to_string()));
    let set: Vec<&str> = set.iter().map(|s| s.as_str()).collect();
    let p = run_scenario(&scenario(text, &set), 1).points.remove(0);
    let m = stream(&p);
    let cpu = m.cpu.as_ref().expect("both hosts have a CPU model");
    let client = estats(p.connections.iter().find(|c| c.side == "client").unwrap());
    Fig {
        bps: m.throughput_bps,
        util: (cpu.cpu_util_percent.local.unwrap(), cpu.cpu_util_percent.remote.unwrap()),
        sdem: (cpu.service_demand_us_per_kb.local.unwrap(), cpu.service_demand_us_per_kb.remote.unwrap()),
        acks_per_segment: (client.SegsOut - client.DataSegsOut) as f64 / client.DataSegsIn as f64,
    }
}

/// The bands at every point: throughput within 5 %, utilization within 10 percentage points,
/// service demands within 10 %. And the mechanism: the NICs, not the CPUs, set the rate — each NIC handles
/// one frame per NIC_FRAME_US, data segments and ACKs alike, so the rate is one data segment per
/// NIC_FRAME_US × (1 + ACKs per data segment), with both CPUs partly idle.
#[test]
fn every_published_figure_within_its_band_and_the_nic_sets_the_rate() {
    let mut last_acks = f64::INFINITY;
    for (k, mbit, util_r, util_s, sdem_r, sdem_s) in PUBLISHED {
        let f = run(k, &[]);
        eprintln!(
            "K = {k}: {:.1} Mbit/s (published {mbit}), util {:.1}/{:.1} % ({util_r}/{util_s}), {:.3}/{:.3} us/KB \
             ({sdem_r}/{sdem_s}), {:.4} ACKs/seg",
            f.bps / 1e6,
            f.util.0,
            f.util.1,
            f.sdem.0,
            f.sdem.1,
            f.acks_per_segment
        );
        assert!((f.bps / 1e6 / mbit - 1.0).abs() < 0.05, "K = {k}: {} Mbit/s vs {mbit}", f.bps / 1e6);
        assert!((f.util.0 - util_r).abs() < 10.0, "K = {k}: receiver {} % vs {util_r}", f.util.0);
        assert!((f.util.1 - util_s).abs() < 10.0, "K = {k}: sender {} % vs {util_s}", f.util.1);
        assert!((f.sdem.0 / sdem_r - 1.0).abs() < 0.10, "K = {k}: receiver {} us/KB vs {sdem_r}", f.sdem.0);
        assert!((f.sdem.1 / sdem_s - 1.0).abs() < 0.10, "K = {k}: sender {} us/KB vs {sdem_s}", f.sdem.1);
        // Neither CPU is the limit (the published hosts were idle 22 to 44 % of the time).
        assert!(f.util.0 < 90.0 && f.util.1 < 90.0, "K = {k}: {:?}", f.util);
        // The NIC's frame rate: 1448 payload bytes per NIC_FRAME_US × (1 + ACKs/segment), within 2 %.
        let nic_rate = 1448.0 * 8.0 / (NIC_FRAME_US * 1e-6 * (1.0 + f.acks_per_segment));
        assert!((f.bps / nic_rate - 1.0).abs() < 0.02, "K = {k}: {} vs the NIC's {nic_rate}", f.bps);
        // At least one ACK per K segments; fewer as K grows.
        assert!(f.acks_per_segment * k as f64 > 0.95, "K = {k}: {}", f.acks_per_segment);
        assert!(f.acks_per_segment < last_acks, "K = {k}: {}", f.acks_per_segment);
        last_acks = f.acks_per_segment;
    }
}

/// Without the NIC's time per frame the receiver's CPU is the limit (the state before the NIC model): busy
/// all the time, the rate its CPU rate up to the line rate, 36 to 53 % above the published throughputs.
#[test]
fn without_the_nic_model_the_receiver_cpu_is_saturated() {
    let off = ["client.host.nic_frame_time=\"0s\"", "server.host.nic_frame_time=\"0s\""];
    let line = 1e9 * 1448.0 / 1538.0;
    for k in [2, 32] {
        let f = run(k, &off);
        let cpu_rate = 8.0 * 1024.0 / (f.sdem.0 * 1e-6);
        assert!(f.util.0 > 99.0 && f.util.0 <= 100.0, "K = {k}: {}", f.util.0);
        assert!(f.bps <= line * 1.001, "K = {k}: {} above the line rate", f.bps);
        assert!((f.bps / cpu_rate.min(line) - 1.0).abs() < 0.02, "K = {k}: {} vs CPU rate {cpu_rate}", f.bps);
        let published = PUBLISHED.iter().find(|p| p.0 == k).unwrap().1 * 1e6;
        assert!(f.bps > published * 1.3, "K = {k}: {} not far above {published}", f.bps);
    }
}

/// The knob is validated: a bound, and not together with receive coalescing.
#[test]
fn nic_frame_time_is_validated() {
    let text = SHIPPED.iter().find(|s| s.name == "classic/gige-ack-avoidance").expect("shipped").text;
    let try_load = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        tcplab_lab::scenario::load(&tcplab_lab::scenario::Source { name: "g.toml", text }, &set)
    };
    let e = try_load(&["client.host.nic_frame_time=\"2ms\""]).unwrap_err().to_string();
    assert!(e.contains("client.host.nic_frame_time") && e.contains("0s (off) to 1ms"), "{e}");
    let e = try_load(&["client.host.rx_coalesce=\"50us\""]).unwrap_err().to_string();
    assert!(e.contains("client.host.nic_frame_time") && e.contains("rx_coalesce"), "{e}");
    assert!(try_load(&["client.host.nic_frame_time=\"0s\"", "client.host.rx_coalesce=\"50us\""]).is_ok());
}
