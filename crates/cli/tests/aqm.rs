//! The shipped `aqm-compare` scenario (issue 24): bufferbloat behind a 1000-packet FIFO and what each AQM
//! makes of it, asserted as the physics and the RFCs say.

use assert_cmd::Command;
use serde_json::Value;

#[test]
fn aqm_compare_shows_bufferbloat_and_its_cures() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("aqm.json");
    let out = Command::cargo_bin("tcplab")
        .unwrap()
        .args(["run", "aqm-compare", "--quiet", "--json", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let point = |kind: &str| {
        doc["points"].as_array().unwrap().iter().find(|p| p["params"]["path.up.qdisc.kind"] == kind).unwrap().clone()
    };
    let srtt_ms = |p: &Value| {
        let ends = p["connections"].as_array().unwrap();
        let client = ends.iter().find(|c| c["side"] == "client").unwrap();
        client["estats"]["SmoothedRTT"].as_f64().unwrap()
    };
    let sojourn_ms = |p: &Value| p["links"]["up"]["qdisc"]["sojourn_mean_ms"].as_f64().unwrap();
    let bound = 10e6 * 1448.0 / 1538.0;

    // The FIFO fills: 1000 frames of 1538 B drain in 1.23 s at 10 Mbit/s, on top of the 40 ms round trip.
    let fifo = point("fifo");
    assert_eq!(fifo["links"]["up"]["max_queue_frames"], 1000);
    assert!((1.1e3..1.3e3).contains(&srtt_ms(&fifo)), "FIFO smoothed RTT {} ms", srtt_ms(&fifo));
    assert!(fifo["metrics"]["throughput_bps"].as_f64().unwrap() > 0.98 * bound);

    // CoDel (RFC 8289) and FQ-CoDel (RFC 8290; one flow: CoDel alone) keep the queue under 4 × the 5 ms
    // target: the round trip falls more than tenfold, for a few drops.
    for kind in ["codel", "fq_codel"] {
        let p = point(kind);
        assert!(sojourn_ms(&p) < 20.0, "{kind}: mean sojourn {} ms", sojourn_ms(&p));
        assert!(srtt_ms(&p) < srtt_ms(&fifo) / 10.0, "{kind}: smoothed RTT {} ms", srtt_ms(&p));
        assert!(p["links"]["up"]["qdisc"]["drops_aqm"].as_u64().unwrap() > 0);
        assert!(p["metrics"]["throughput_bps"].as_f64().unwrap() > 0.85 * bound, "{kind} keeps the link busy");
    }
    // PIE (RFC 8033) holds its 15 ms target delay within 2×.
    let pie = point("pie");
    assert!((7.5..30.0).contains(&sojourn_ms(&pie)), "PIE mean sojourn {} ms", sojourn_ms(&pie));
    // RED keeps the average between its thresholds (a quarter of the limit and a third of that: 250 and 83
    // frames, 0.31 s and 0.10 s at 10 Mbit/s) or below: well under the FIFO's full queue.
    let red = point("red");
    assert!(sojourn_ms(&red) < 310.0, "RED mean sojourn {} ms", sojourn_ms(&red));
}
