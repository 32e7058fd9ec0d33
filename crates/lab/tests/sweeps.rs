//! Sweeps and repetitions: every point validated up front, results independent of the number of
//! threads, shards that merge into the whole run byte for byte, and netperf's stopping rule.

use tcplab_lab::sweep::{plan, run_plan, Plan, RepeatFlags, RunOptions};
use tcplab_lab::{Origin, Source};

const RR: &str = r#"
name = "sw"
[path.up]
rate = "10mbit"
delay = "5ms"
[test]
kind = "tcp_rr"
duration = "1s"
request = "32B"
response = "1000B"
[sweep]
"test.burst" = "0..=3"
client.tcp.nodelay = [false, true]
"#;

fn rr_plan(sweeps: &[&str], flags: RepeatFlags) -> Plan {
    let sweeps: Vec<String> = sweeps.iter().map(|s| s.to_string()).collect();
    plan(&Source { name: "sw.toml", text: RR }, &[], &sweeps, &flags).unwrap()
}

fn json(p: &Plan, opts: RunOptions) -> String {
    serde_json::to_string_pretty(&run_plan(p, opts, &|_, _| {}).unwrap().0).unwrap()
}

#[test]
fn the_cartesian_product_in_order_with_params() {
    let p = rr_plan(&[], RepeatFlags::default());
    assert_eq!(p.len(), 8);
    let coords: Vec<String> =
        (0..p.len()).map(|i| serde_json::Value::Object(p.point(i).unwrap().params).to_string()).collect();
    assert_eq!(coords[0], r#"{"test.burst":0,"client.tcp.nodelay":false}"#);
    assert_eq!(coords[1], r#"{"test.burst":0,"client.tcp.nodelay":true}"#);
    assert_eq!(coords[7], r#"{"test.burst":3,"client.tcp.nodelay":true}"#);
    assert_eq!(p.point(5).unwrap().scenario.test.burst, Some(2));
    assert!(p.point(5).unwrap().scenario.client.tcp().nodelay);
    // A flag replaces the file's axis in place and adds new ones at the end.
    let p = rr_plan(&["test.burst=7", "path.up.rate=1mbit,2mbit"], RepeatFlags::default());
    assert_eq!(p.len(), 4);
    assert_eq!(p.point(3).unwrap().scenario.path.up.rate.bps(), 2_000_000);
    assert!((0..p.len()).all(|i| p.point(i).unwrap().scenario.test.burst == Some(7)));
}

#[test]
fn an_invalid_point_names_its_axis_and_value_before_anything_runs() {
    let flags = RepeatFlags::default();
    let e =
        plan(&Source { name: "sw.toml", text: RR }, &[], &["test.burst=99999..=100001".into()], &flags).unwrap_err();
    assert_eq!(e.origin, Origin::Sweep { flag: "test.burst=99999..=100001".into() });
    assert_eq!(e.key, "test.burst");
    assert!(e.message.starts_with("value 100001: "), "{e}");
    let e = plan(&Source { name: "sw.toml", text: RR }, &["test.kind=tcp_crr".into()], &[], &flags).unwrap_err();
    assert_eq!(e.origin, Origin::File { file: "sw.toml".into(), line: Some(12) });
    assert_eq!(e.key, "sweep.test.burst");
    let bad = RR.replace("\"0..=3\"", "\"0..=x\"");
    let e = plan(&Source { name: "sw.toml", text: &bad }, &[], &[], &flags).unwrap_err();
    assert!(e.message.contains("neither an array nor a range"), "{e}");
}

#[test]
fn parallel_and_sharded_runs_are_byte_identical_to_a_serial_run() {
    let p = rr_plan(&[], RepeatFlags::default());
    let serial = json(&p, RunOptions { jobs: 1, ..Default::default() });
    assert_eq!(json(&p, RunOptions { jobs: 4, ..Default::default() }), serial);
    let shards: Vec<(String, serde_json::Value)> = [2, 0, 1]
        .iter()
        .map(|&i| {
            let text = json(&p, RunOptions { jobs: 2, shard: Some((i, 3)), ..Default::default() });
            (format!("s{i}"), serde_json::from_str(&text).unwrap())
        })
        .collect();
    let merged = tcplab_lab::merge::merge(&shards).unwrap();
    assert_eq!(serde_json::to_string_pretty(&merged).unwrap(), serial);
    assert!(tcplab_lab::merge::merge(&shards[..2]).unwrap_err().contains("shards missing: 1/3"));
    // A single unswept run through the plan is the document `run_scenario` gives.
    let one = rr_plan(&["test.burst=2", "client.tcp.nodelay=true"], RepeatFlags::default());
    let direct = tcplab_lab::run_scenario(&one.point(0).unwrap().scenario, 1).unwrap();
    let mut via_plan: serde_json::Value = serde_json::from_str(&json(&one, RunOptions::default())).unwrap();
    via_plan.as_object_mut().unwrap().remove("sweep");
    via_plan["points"][0]["params"] = serde_json::json!({});
    via_plan["scenario"] = serde_json::to_value(&direct.scenario).unwrap();
    assert_eq!(via_plan, serde_json::to_value(&direct).unwrap());
}

const LOSSY: &str = r#"
name = "noisy"
[path.up]
rate = "10mbit"
delay = "10ms"
queue = "50pkt"
loss = { model = "bernoulli", p = 0.02 }
[path.down]
rate = "10mbit"
delay = "10ms"
[test]
kind = "tcp_stream"
duration = "2s"
[repeat]
min = 3
max = 8
level = 0.95
width = 0.02
"#;

#[test]
fn a_deterministic_point_stops_at_min_and_a_noisy_one_runs_on() {
    let flags = RepeatFlags::default();
    let quiet = LOSSY.replace("loss = { model = \"bernoulli\", p = 0.02 }", "");
    let p = plan(&Source { name: "q.toml", text: &quiet }, &[], &[], &flags).unwrap();
    let (doc, unmet) = run_plan(&p, RunOptions::default(), &|_, _| {}).unwrap();
    let pt = &doc.points[0];
    assert_eq!(pt.iterations, 3);
    let c = pt.confidence.as_ref().unwrap();
    assert!(c.met && c.interval == 0.0 && c.metric == "throughput_bps");
    assert!(unmet.is_empty());

    let p = plan(&Source { name: "n.toml", text: LOSSY }, &[], &[], &flags).unwrap();
    let (doc, _) = run_plan(&p, RunOptions { jobs: 2, ..Default::default() }, &|_, _| {}).unwrap();
    let pt = &doc.points[0];
    assert!(pt.iterations > 3, "a noisy point needs more than min iterations: {}", pt.iterations);
    // The stopping rule, recomputed from the iterations themselves.
    let xs: Vec<f64> = (0..pt.iterations)
        .map(|k| {
            let seed = tcplab_lab::sweep::iteration_seed(1, k);
            tcplab_lab::sweep::main_metric(
                &tcplab_lab::run_point(&p.point(0).unwrap().scenario, seed).unwrap().point.metrics,
            )
            .1
        })
        .collect();
    for n in 3..xs.len() {
        assert!(!tcplab_lab::stats::Interval::of(&xs[..n], 0.95).met(0.02), "should have stopped at {n}");
    }
    let last = tcplab_lab::stats::Interval::of(&xs, 0.95);
    let c = pt.confidence.as_ref().unwrap();
    assert_eq!(c.met, last.met(0.02));
    assert!(c.met || pt.iterations == 8);
    assert!((c.interval - last.relative_width()).abs() < 1e-12);
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    assert_eq!(tcplab_lab::sweep::main_metric(&pt.metrics).1, mean);
}
