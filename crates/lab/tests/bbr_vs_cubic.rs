//! One BBR and one CUBIC flow on the shipped `bbr-vs-cubic` dumbbell (issue 27): their shares of the
//! bottleneck against the depth of its drop-tail buffer.
//!
//! The physics measured on real stacks: BBR v1 takes most of a bottleneck whose buffer is about one BDP or
//! less, and a loss-based flow takes more as the buffer deepens (Hock, Bless and Zitterbart, "Experimental
//! Evaluation of BBR Congestion Control", ICNP 2017; Ware, Mukerjee, Seshan and Sherry, "Modeling BBR's
//! Interactions with Loss-Based Congestion Control", IMC 2019, whose model holds BBR to its in-flight cap
//! of 2 × its BDP estimate while CUBIC fills the rest of the buffer). In a shallow buffer CUBIC's losses
//! come from BBR's probing, which does not back off; in a deep one BBR's 2-BDP cap leaves the rest of
//! the queue to CUBIC, and PROBE_RTT (cwnd 4 for 200 ms every 10 s) gives CUBIC more.

use tcplab_lab::result::Point;
use tcplab_lab::run_point;
use tcplab_lab::{load, Source, SHIPPED};

/// The shipped scenario with its buffer at `bdp` × 65 frames (20 Mbit/s × 40 ms = 100 kB), `duration`.
fn run(bdp: f64, duration: &str) -> Point {
    let text = SHIPPED.iter().find(|s| s.name == "bbr-vs-cubic").expect("shipped").text;
    let set = [format!("dumbbell.bottleneck.queue={}pkt", (65.0 * bdp).round()), format!("test.duration={duration}")];
    let s = load(&Source { name: "bbr-vs-cubic.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"));
    run_point(&s, s.seed).expect("the flows come up").point
}

/// BBR's share of the two flows' goodput, and the pair's total, bit/s.
fn bbr_share(p: &Point) -> (f64, f64) {
    assert_eq!(p.flows.len(), 2);
    assert_eq!((p.flows[0].congestion_control.as_str(), p.flows[1].congestion_control.as_str()), ("bbr", "cubic"));
    let (b, c) = (p.flows[0].goodput_bps, p.flows[1].goodput_bps);
    (b / (b + c), b + c)
}

#[test]
fn bbr_takes_a_shallow_buffer_and_cubic_gains_as_it_deepens() {
    let shares: Vec<(f64, f64)> = [0.5, 1.0, 8.0]
        .iter()
        .map(|&bdp| {
            let (share, total) = bbr_share(&run(bdp, "30s"));
            eprintln!("buffer {bdp} BDP: BBR's share {share:.2}, together {:.2} Mbit/s", total / 1e6);
            // Together they keep the bottleneck busy: above 90% of its payload rate (18.8 Mbit/s).
            assert!(total > 0.9 * 20e6 * 1448.0 / 1538.0, "{bdp} BDP: {total}");
            (bdp, share)
        })
        .collect();
    // At half a BDP and at one BDP BBR takes more than its half, by far (0.88 and 0.88 over 30 s).
    for &(bdp, share) in &shares[..2] {
        assert!(share > 0.75, "{bdp} BDP: BBR's share {share}");
    }
    // At 8 BDP CUBIC has the larger share (BBR 0.25 over 60 s, 0.16 over these 30 s), and CUBIC's share grew
    // by more than half of the link from the shallow buffer.
    let deep = shares[2].1;
    assert!(deep < 0.5, "8 BDP: BBR's share {deep}");
    assert!(shares[0].1 - deep > 0.5, "{shares:?}");
}
