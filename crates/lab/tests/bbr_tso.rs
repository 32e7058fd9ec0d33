//! BBR's super-packets (issue 27): Linux sizes them from BBR's own pacing rate, about 1 ms of it
//! (`sk_pacing_rate >> sk_pacing_shift`), with BBR's floor of two segments above 1.2 Mbit/s
//! (`tcp_tso_autosize` with `bbr_min_tso_segs`), and paces each whole (`tcp_update_skb_after_send`): the
//! segments of one leave together, the next after the whole super-packet's time at the rate.

use crate::common;

use common::{estats, run_scenario, scenario};

fn path(rate: &str, queue: &str) -> String {
    format!(
        "name = \"bbr-tso\"\nseed = 1\n[path.up]\nrate = \"{rate}\"\ndelay = \"20ms\"\nqueue = \"{queue}\"\n\
         framing = \"ethernet\"\n[path.down]\nrate = \"{rate}\"\ndelay = \"20ms\"\nqueue = \"{queue}\"\n\
         framing = \"ethernet\"\n[client]\nstack = \"linux\"\ntcp.congestion_control = \"bbr\"\n[server]\n\
         stack = \"linux\"\n[test]\nkind = \"tcp_stream\"\nduration = \"10s\"\nmessage = \"64KiB\"\n\
         send_buffer = \"4MiB\"\nrecv_buffer = \"4MiB\"\n"
    )
}

/// Segments per super-packet and goodput, bit/s.
fn burst(rate: &str, queue: &str) -> (f64, f64) {
    let doc = run_scenario(&scenario(&path(rate, queue), &[]), 1);
    let e = estats(&doc.points[0].connections[0]);
    (e.DataSegsOut as f64 / e.X_TsoBursts as f64, common::stream(&doc.points[0]).throughput_bps)
}

/// 10 Mbit/s: BBR paces at about 1.2 MB/s, 1.2 kB per ms, less than a segment: every super-packet is
/// BBR's floor of two. 100 Mbit/s: 12 MB/s, 12 kB per ms (15 kB in the 5/4 phase): 8 to 10 segments
/// where cwnd and the window leave room (fewer where they do not: at STARTUP's end, in PROBE_RTT).
/// Sending whole super-packets costs no goodput: the pacing rate still holds over each.
#[test]
fn bbr_sizes_super_packets_from_its_own_pacing_rate() {
    let (ten, g10) = burst("10mbit", "65pkt");
    assert!((1.95..=2.0).contains(&ten), "10 Mbit/s: {ten:.3} segments per super-packet");
    let (hundred, g100) = burst("100mbit", "650pkt");
    assert!((5.0..=10.0).contains(&hundred), "100 Mbit/s: {hundred:.3} segments per super-packet");
    // Payload rates 9.41 and 94.1 Mbit/s; BBR keeps 98 % of them (1 % pacing margin, PROBE_RTT, STARTUP).
    assert!(g10 > 0.97 * 9.41e6 && g100 > 0.95 * 94.1e6, "goodput {g10} and {g100} b/s");
}
