//! BBR at 10% random loss on `bbr-loss`'s path (issue 27, docs/bbr.md § bbr-loss), over several seeds:
//! the figure that the shipped scenario's one seed gave (26.4 Mbit/s) was one run whose STARTUP ended at
//! 3 Mbit/s, from which PROBE_BW climbs by 25% per gain cycle. Linux's `tcp_time_to_recover` (a segment
//! still marked lost starts the next recovery in the ACK that ended the last, so that BBR sees one
//! recovery, not a restore and a new packet-conservation cut each round) keeps that climb from being cut
//! every round trip.

use crate::common;

use common::{run_scenario, scenario, stream};

/// `bbr-loss`'s path: 100 Mbit/s, 40 ms RTT, a 1-BDP queue, `linux` stacks, 15 s, BBR at the client.
fn bbr_at(p: f64, seed: u64) -> f64 {
    let text = format!(
        "name = \"bbr-heavy-loss\"\nseed = 1\n[path.up]\nrate = \"100mbit\"\ndelay = \"20ms\"\nqueue = \"330pkt\"\n\
         framing = \"ethernet\"\nloss = {{ model = \"bernoulli\", p = {p} }}\n[path.down]\nrate = \"100mbit\"\n\
         delay = \"20ms\"\nqueue = \"330pkt\"\nframing = \"ethernet\"\n[client]\nstack = \"linux\"\n\
         [server]\nstack = \"linux\"\n[test]\nkind = \"tcp_stream\"\nduration = \"15s\"\nmessage = \"64KiB\"\n\
         send_buffer = \"16MiB\"\nrecv_buffer = \"16MiB\"\n"
    );
    let s = scenario(&text, &["client.tcp.congestion_control=\"bbr\""]);
    stream(&run_scenario(&s, seed).points[0]).throughput_bps
}

/// Payload rate of 100 Mbit/s in 1538-byte Ethernet frames of 1448 bytes of payload: 94.1 Mbit/s.
const PAYLOAD: f64 = 100e6 * 1448.0 / 1538.0;

/// Expectation: BBR v1 sets its rate from the delivery rate it measures, and at random loss p a probe at
/// 1.25× delivers 1.25 (1 − p) of the estimate, more than it while p < 20%: Cardwell et al., "BBR:
/// Congestion-Based Congestion Control" (ACM Queue 14(5), 2016), show v1 near the link rate up to about
/// 15% loss on a 100 Mbit/s, 100 ms path. Here the run includes STARTUP and one PROBE_RTT, and each loss
/// is repaired; this kernel's BBR on the same path gave 74.2, 74.2 and 69.0 Mbit/s at seeds 1–3 (`tcplab
/// compare`, docs/bbr.md § bbr-loss), 73–79% of the payload rate. Asserted: the median of five seeds above
/// 70% of the payload rate (76% measured, 71.3 Mbit/s), and
/// no seed below 40% (the one whose STARTUP ends at 3 Mbit/s: 43.9 Mbit/s; 26.4 before the rule).
#[test]
fn bbr_keeps_most_of_the_bottleneck_at_ten_percent_loss() {
    let mut rates: Vec<f64> = (1..=5).map(|seed| bbr_at(0.1, seed)).collect();
    eprintln!("10% loss, seeds 1-5: {:?} Mbit/s", rates.iter().map(|r| (r / 1e5).round() / 10.0).collect::<Vec<_>>());
    rates.sort_by(f64::total_cmp);
    assert!(rates[2] > 0.70 * PAYLOAD, "median {:.1} Mbit/s under 70% of {:.1}", rates[2] / 1e6, PAYLOAD / 1e6);
    assert!(rates[0] > 0.40 * PAYLOAD, "a seed at {:.1} Mbit/s, under 40% of {:.1}", rates[0] / 1e6, PAYLOAD / 1e6);
}
