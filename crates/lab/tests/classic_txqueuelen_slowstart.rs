//! `classic/txqueuelen` (docs/classic.md § 5): web100's SlowStart under Linux 2.4's own slow-start test.
//! 2.4's `reno_cong_avoid` grows cwnd by slow start while `snd_cwnd <= snd_ssthresh`, and every CWR that a
//! full interface queue starts ends in `tcp_complete_cwr` with cwnd = min(cwnd, ssthresh), so the next
//! cwnd-limited ACK finds cwnd = ssthresh and is a slow-start step (`slow_start_at_ssthresh`, on in
//! `linux-2.4`). SlowStart is then the initial slow start (about the queue in segments) plus one per
//! stall: high at small queues, where stalls are many, falling as they thin out, and rising again with
//! the initial slow start at large queues — the report's "high number of slow starts for small
//! txqueuelens, which dip between the range 15-200 ... then increases to a mid level".

use crate::common;

use common::txqueuelen_sender as sender;

#[test]
fn every_stall_adds_one_slow_start_step() {
    for q in [10, 25] {
        let e = sender(q, &[]);
        eprintln!("txqueuelen {q}: SendStall {} SlowStart {}", e.SendStall, e.SlowStart);
        assert!(e.SendStall > 100, "txqueuelen {q}: {}", e.SendStall);
        // The initial slow start runs to the queue plus the path (a few more than q segments from IW 3).
        let initial = e.SlowStart.checked_sub(e.SendStall).expect("at least one step per stall");
        assert!((q as u64..=q as u64 + 10).contains(&initial), "txqueuelen {q}: {initial} steps beside the stalls");
    }
}

#[test]
fn slow_start_is_high_at_small_queues_dips_and_rises_again() {
    let steps: Vec<(u32, u64)> = [10, 50, 100, 200, 1000].iter().map(|&q| (q, sender(q, &[]).SlowStart)).collect();
    eprintln!("SlowStart by txqueuelen (1 s): {steps:?}");
    let (min_q, min) = *steps.iter().min_by_key(|(_, s)| *s).unwrap();
    assert!((15..=200).contains(&min_q), "the dip is at txqueuelen {min_q}");
    assert!(steps[0].1 > 3 * min, "high at 10: {:?}", steps);
    assert!(steps[4].1 > 3 * min, "higher again at 1000: {:?}", steps);
    // With a cap on the flight below the queue (the 400 KB what-if, § 5) the level above the dip is flat:
    // no stalls there, only the initial slow start to the window (276 segments less the initial window).
    let capped: Vec<u64> = [300, 1000].iter().map(|&q| sender(q, &["test.recv_buffer=\"400KB\""]).SlowStart).collect();
    assert_eq!(capped[0], capped[1]);
    assert!((270..=276).contains(&capped[0]) && capped[0] > min, "{capped:?} beside the dip {min}");
}
