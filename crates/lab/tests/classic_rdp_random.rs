//! `classic/rdp-rtt-feedback-random` (docs/classic.md § 4): the 1986 RDP report's RTT-feedback runs with
//! drops at random (4% of data packets, five seeds) beside the scripted ones. Asserts the mechanism (every
//! sample taken feeds timeouts back into SmoothedRTT; discarding out-of-order samples keeps it on the
//! path's 1.2 s unless a repair is the one segment in flight) and what the lab gives against the report's
//! "~35 s": below it at this rate.

use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{Source, SHIPPED};

#[test]
fn random_drops_feed_timeouts_into_srtt_only_when_every_sample_is_taken() {
    let s = SHIPPED.iter().find(|s| s.name == "classic/rdp-rtt-feedback-random").expect("shipped");
    let plan = plan(&Source { name: s.name, text: s.text }, &[], &[], &RepeatFlags::default()).unwrap();
    let (doc, _) = run_plan(&plan, RunOptions { jobs: 2, seed: None, shard: None }, &|_, _| {}).unwrap();
    assert_eq!(doc.points.len(), 10);
    // The path's round trip: 600 ms each way plus a 64 + 38 octet message and a 38 octet ACK at 10 Mbit/s.
    let rtt_ms = 1200.0 + (102.0 + 38.0) * 8.0 / 10e6 * 1e3;
    let mut every = Vec::new();
    for p in &doc.points {
        let client = &p.connections.iter().find(|c| c.side == "client").unwrap().estats;
        let max_srtt = client["MaxSmoothedRTT"].as_f64().unwrap();
        let retrans = client["SegsRetrans"].as_u64().unwrap();
        let mode = p.params["client.rdp.rtt_sampling"].as_str().unwrap();
        // Every message arrives once, and every drop was repaired (data drops = retransmissions).
        let m = serde_json::to_value(&p.metrics).unwrap();
        assert_eq!(m["messages_delivered"], 100);
        assert_eq!(m["data_drops"].as_u64().unwrap(), retrans, "{:?}", p.params);
        assert!(retrans > 0, "4% of ~100 transmissions: some drop in every seed");
        if mode == "every" {
            // A repair's sample holds its timeout (RTO = 2 SRTT >= 2.4 s), 3.6 s or more, and RFC 889's gain
            // of 1/4 lifts SRTT by a quarter of its excess: to 1.5 times the RTT at least.
            assert!(max_srtt > 1.5 * rtt_ms, "{:?}: {max_srtt}", p.params);
            every.push(max_srtt);
            // The report's ~35 s is not reached with independent drops at 4% (docs/classic.md § 4).
            assert!(max_srtt < 35_000.0, "{:?}: {max_srtt}", p.params);
            let c = &p.published[0];
            assert_eq!((c.published, c.lab), (35_000.0, max_srtt));
        } else {
            // Out-of-order samples discarded: SRTT stays on the path's RTT, but for a repair that was the
            // only segment in flight (in order: its sample is kept), bounded by one timeout's feedback.
            assert!(max_srtt < 2.5 * rtt_ms, "{:?}: {max_srtt}", p.params);
            assert!(p.published.is_empty(), "the published figure is for every sample taken");
        }
    }
    let on_path = doc.points.iter().filter(|p| p.params["client.rdp.rtt_sampling"] == "discard_out_of_order");
    let kept = on_path
        .filter(|p| {
            let c = &p.connections.iter().find(|c| c.side == "client").unwrap().estats;
            c["MaxSmoothedRTT"].as_f64().unwrap() < rtt_ms + 1.0
        })
        .count();
    assert!(kept >= 4, "{kept} of 5 transfers keep SRTT on the path's RTT");
    assert_eq!(every.len(), 5);
}
