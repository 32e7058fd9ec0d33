//! A sweep's points start longest first on a pool of threads (the cost estimate orders them), and the
//! document keeps the plan's order whatever the threads did.

use tcplab_lab::sweep::{plan, run_plan, Plan, RepeatFlags, RunOptions};
use tcplab_lab::Source;

const BULK: &str = r#"
name = "balance"
[path.up]
rate = "10mbit"
delay = "5ms"
[test]
kind = "tcp_stream"
duration = "1s"
[sweep]
"test.duration" = ["1s", "4s", "2s"]
"path.up.rate" = ["10mbit", "40mbit"]
"#;

fn bulk_plan(sweeps: &[&str]) -> Plan {
    let sweeps: Vec<String> = sweeps.iter().map(|s| s.to_string()).collect();
    plan(&Source { name: "balance.toml", text: BULK }, &[], &sweeps, &RepeatFlags::default()).unwrap()
}

#[test]
fn the_cost_estimate_follows_duration_and_rate() {
    let p = bulk_plan(&[]);
    assert_eq!(p.len(), 6);
    let cost: Vec<f64> = (0..p.len()).map(|i| p.point_cost(i)).collect();
    // Points (duration, rate): 0 (1s, 10), 1 (1s, 40), 2 (4s, 10), 3 (4s, 40), 4 (2s, 10), 5 (2s, 40).
    assert!(cost.iter().all(|c| *c > 0.0), "{cost:?}");
    assert!(cost[2] > 3.0 * cost[0] && cost[4] > 1.5 * cost[0], "duration scales the cost: {cost:?}");
    assert!(cost[1] > 2.0 * cost[0] && cost[3] > 2.0 * cost[2], "rate scales the cost: {cost:?}");
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
    assert_eq!(order[0], 3, "the 4 s, 40 Mbit/s point is the longest: {cost:?}");
}

#[test]
fn a_lazily_planned_sweep_scales_point_zero_by_each_axis() {
    // Over FULL_CHECK points the plan validates the base and each axis value on its own; a point's cost is
    // point 0's times each axis's ratio at its value.
    let p = bulk_plan(&["seed=1..=1700"]);
    if p.fully_checked() {
        return; // the threshold moved above this sweep: nothing lazy to test
    }
    let full = bulk_plan(&[]);
    // The first axis (duration) varies slowest: point i·(n/3) has duration value i and every other axis at 0.
    let stride = p.len() / 3;
    for (k, i) in [(0usize, 0usize), (2, 2 * stride), (1, stride)] {
        let ratio = p.point_cost(i) / p.point_cost(0);
        let expect = full.point_cost(2 * k) / full.point_cost(0);
        assert!((ratio - expect).abs() < 0.05 * expect, "duration value {k}: {ratio} against {expect}");
    }
}

#[test]
fn results_keep_the_plan_order_on_two_threads() {
    let p = bulk_plan(&[]);
    let one = run_plan(&p, RunOptions { jobs: 1, ..Default::default() }, &|_, _| {}).unwrap().0;
    let two = run_plan(&p, RunOptions { jobs: 2, ..Default::default() }, &|_, _| {}).unwrap().0;
    assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&two).unwrap());
    let durations: Vec<&str> = one.points.iter().map(|pt| pt.params["test.duration"].as_str().unwrap()).collect();
    assert_eq!(durations, ["1s", "1s", "4s", "4s", "2s", "2s"]);
}
