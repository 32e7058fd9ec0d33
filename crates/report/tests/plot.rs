//! `--plot`: which plots a result gives, what they show, and a sweep drawn from a hand-made document.

use crate::common;

use common::*;
use serde_json::json;
use tcplab_report::plot::{plots, sweep_charts};

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn a_run_with_logvars_gives_cwnd_rtt_and_throughput_plots_with_titles_and_units() {
    let (_, v) = run(&bulk(LOGVARS));
    let (ps, notes) = plots(&v);
    assert_eq!(
        ps.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
        ["cwnd", "rtt", "throughput", "queue", "sojourn"]
    );
    assert!(notes.is_empty(), "{notes:?}");
    for p in &ps {
        assert!(p.svg.starts_with("<svg") && p.svg.trim_end().ends_with("</svg>"), "{}: whole SVG", p.name);
        assert!(p.svg.contains("bulk-test"), "{}: the title names the scenario", p.name);
        assert!(p.svg.contains("time since the start of the run (s)"));
    }
    // Two senders: a cwnd and an ssthresh line each (the loss gives ssthresh a value), in the legend too.
    let cwnd = &ps[0].svg;
    assert!(cwnd.contains("cwnd and ssthresh (KiB)"));
    assert_eq!(count(cwnd, "cwnd, client"), 2);
    assert_eq!(count(cwnd, "ssthresh, client"), 2);
    assert!(ps[1].svg.contains("SmoothedRTT (ms)"));
    // Two receiving ends and their total.
    let tput = &ps[2].svg;
    assert!(tput.contains("throughput (Mbit/s)"));
    assert_eq!(count(tput, "delivered to server"), 2);
    assert_eq!(count(tput, "total delivered"), 1);
}

#[test]
fn an_rr_run_without_series_gives_the_latency_cdf_and_says_why_no_time_series() {
    let (_, v) = run(RR);
    let (ps, notes) = plots(&v);
    assert_eq!(ps.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["cdf"]);
    assert!(notes.iter().any(|n| n.contains("time series: not drawn")), "{notes:?}");
    let svg = &ps[0].svg;
    assert!(svg.contains("rr-test: latency CDF") && svg.contains("fraction of transactions at or below"));
    // The legend gives the percentiles of latency_us, in ms (they are tens of ms on this path).
    let l = &v["points"][0]["metrics"]["latency_us"];
    // One decimal, trailing zeros trimmed as the legend writes them (a median of exactly 94.0 ms is "94 ms").
    let ms = |k: &str| {
        let s = format!("{:.1}", l[k].as_f64().unwrap() / 1e3);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    assert!(svg.contains(&format!("median {} ms", ms("p50"))), "{}", ms("p50"));
}

#[test]
fn the_cdf_chart_is_the_staircase_of_the_steps_on_a_log_axis_when_they_span_a_decade() {
    let doc = |steps: serde_json::Value| {
        json!({"scenario": {"name": "c", "test": {"kind": "tcp_rr"}}, "points": [
            {"params": {}, "iterations": 1, "metrics": {"latency_us": {"p50": 1.0, "p99": 1.0, "cdf": steps}}}]})
    };
    let charts = tcplab_report::plot::cdf_charts(&doc(json!([[100.0, 0.25], [400.0, 1.0]])));
    assert_eq!(charts.len(), 1);
    let c = &charts[0].1;
    assert!(!c.log_x && c.x_label == "latency (\u{b5}s)");
    // Up from 0 at the first value, flat to the next value, up again: F is right-continuous.
    assert_eq!(c.lines[0].points, vec![(100.0, 0.0), (100.0, 0.0), (100.0, 0.25), (400.0, 0.25), (400.0, 1.0)]);
    let charts = tcplab_report::plot::cdf_charts(&doc(json!([[900.0, 0.5], [20000.0, 1.0]])));
    let c = &charts[0].1;
    assert!(c.log_x && c.x_label == "latency (ms), log scale", "{}", c.x_label);
    assert_eq!(c.lines[0].points.last(), Some(&(20.0, 1.0)));
    let svg = tcplab_report::plot::draw(c).unwrap();
    let texts: Vec<&str> = svg.split("</text>").filter_map(|t| t.rsplit_once('>').map(|(_, x)| x.trim())).collect();
    for label in ["0.5", "1", "2", "5", "10", "20", "50"] {
        assert!(texts.contains(&label), "tick {label}: {texts:?}");
    }
}

/// A sweep as the sweeps issue will produce it: two axes, a confidence interval on some points.
fn sweep_doc() -> serde_json::Value {
    let mut points = Vec::new();
    for nodelay in [false, true] {
        for burst in [0, 2, 4, 8] {
            let tps = 100.0 * (burst as f64 + 1.0) * if nodelay { 1.5 } else { 1.0 };
            points.push(json!({
                "params": {"test.burst": burst, "client.tcp.nodelay": nodelay},
                "iterations": 5,
                "metrics": {"transactions_per_s": tps, "latency_us": {"p99": 1000.0 + burst as f64 * 50.0}},
                // As the repetitions write it: the interval's whole width, a fraction of the mean.
                "confidence": {"metric": "transactions_per_s", "level": 0.99, "width": 0.05, "interval": 0.1, "met": false},
            }));
        }
    }
    json!({"schema": "tcplab.result/1", "scenario": {"name": "rr-sweep", "test": {"kind": "tcp_rr"}}, "points": points})
}

#[test]
fn a_sweep_draws_each_metric_against_the_first_axis_one_line_per_second_axis_value_with_error_bars() {
    let doc = sweep_doc();
    let charts = sweep_charts(&doc);
    assert_eq!(
        charts.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["sweep-transactions_per_s", "sweep-latency_us-p99"]
    );
    let (_, tps) = &charts[0];
    assert_eq!(tps.x_label, "first burst (transactions)");
    assert_eq!(tps.lines.len(), 2);
    assert_eq!(tps.lines[0].label, "client TCP_NODELAY = off");
    assert_eq!(tps.lines[1].points, vec![(0.0, 150.0), (2.0, 450.0), (4.0, 750.0), (8.0, 1350.0)]);
    assert_eq!(tps.lines[1].errors[3], (8.0, 1350.0 * 0.95, 1350.0 * 1.05));
    // The latency has no interval: no error bars.
    assert!(charts[1].1.lines.iter().all(|l| l.errors.is_empty()));
    let (ps, _) = plots(&doc);
    let svg = &ps.iter().find(|p| p.name == "sweep-transactions_per_s").unwrap().svg;
    assert!(svg.contains("rr-sweep: transaction rate against first burst"));
    assert!(svg.contains("client TCP_NODELAY = on"));
}

#[test]
fn a_sweep_over_words_uses_categories_in_order() {
    let points: Vec<_> = ["10mbit", "1mbit", "100mbit"]
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"params": {"path.up.rate": r}, "iterations": 1, "metrics": {"throughput_bps": 1e6 * (i + 1) as f64}}))
        .collect();
    let doc = json!({"scenario": {"name": "s", "test": {"kind": "tcp_stream"}}, "points": points});
    let charts = sweep_charts(&doc);
    assert_eq!(charts.len(), 1);
    let c = &charts[0].1;
    assert_eq!(c.x_categories.as_deref(), Some(&["10mbit".to_string(), "1mbit".into(), "100mbit".into()][..]));
    assert_eq!(c.lines[0].points, vec![(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]);
    let svg = tcplab_report::plot::draw(c).unwrap();
    let texts: Vec<&str> = svg.split("</text>").filter_map(|t| t.rsplit_once('>').map(|(_, x)| x.trim())).collect();
    for r in ["10mbit", "1mbit", "100mbit", "throughput (Mbit/s)"] {
        assert!(texts.contains(&r), "{r} is a label: {texts:?}");
    }
}

#[test]
fn sweep_plot_files_for_a_look() {
    // Written for a person to look at when TCPLAB_PLOT_DIR is set (docs/outputs.md); nothing otherwise.
    if let Ok(dir) = std::env::var("TCPLAB_PLOT_DIR") {
        tcplab_report::plot::write_dir(&sweep_doc(), std::path::Path::new(&dir)).unwrap();
    }
}

/// The hand-made sweep with the scenario's own plots.
fn sweep_with_plots(plots: serde_json::Value) -> serde_json::Value {
    let mut doc = sweep_doc();
    doc["scenario"]["plot"] = plots;
    doc
}

#[test]
fn the_scenarios_plots_replace_the_default_sweep_plots_and_say_what_cannot_be_drawn() {
    let doc = sweep_with_plots(json!([
        {"name": "tps", "x": "test.burst", "y": "transactions_per_s", "lines": "client.tcp.nodelay", "title": "rate"},
        {"x": "client.tcp.nodelay", "y": "latency_us.p99"},
        {"name": "flat", "x": "path.up.rate", "y": "transactions_per_s"},
        {"name": "oneline", "x": "test.burst", "y": "transactions_per_s", "lines": "seed"},
    ]));
    let (ps, notes) = plots(&doc);
    let names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["tps", "plot-2", "oneline"], "{notes:?}");
    let tps = &ps[0].svg;
    assert!(tps.contains("rr-sweep: rate") && tps.contains("transaction rate (transactions/s)"));
    assert!(tps.contains("client TCP_NODELAY = on"));
    // Booleans on x are categories; the p99 (at most 1350 us) stays in µs.
    assert!(ps[1].svg.contains("99th percentile latency (\u{b5}s)"));
    assert!(notes.iter().any(|n| n.contains("plot flat: not drawn: x = path.up.rate is not swept")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("plot oneline: lines = seed is not swept: drawn as one line")));
    // The error bars come from the points' confidence interval of the metric.
    let charts = tcplab_report::plot::scenario_charts(&doc, &mut Vec::new());
    let (_, c) = &charts[0];
    assert_eq!(c.lines[1].errors[3], (8.0, 1350.0 * 0.95, 1350.0 * 1.05));
    assert!(charts[1].1.lines[0].errors.is_empty(), "no interval about the latency");
}

#[test]
fn a_series_plot_draws_the_named_variables_of_each_end_with_the_measurement_window() {
    let text = bulk(LOGVARS) + "[[plot]]\nname = \"cwnd-only\"\nseries = [\"CurCwnd\", \"CurSsthresh\"]\n";
    let (_, v) = run(&text);
    let mut notes = Vec::new();
    let charts = tcplab_report::plot::scenario_charts(&v, &mut notes);
    assert_eq!(charts.len(), 1, "{notes:?}");
    let (name, c) = &charts[0];
    assert_eq!(name, "cwnd-only");
    assert_eq!(c.y_label, "CurCwnd, CurSsthresh (KiB)");
    // Every line is a named variable of an end, in KiB: the two senders' cwnd and ssthresh (and the
    // receivers' cwnd, which stays at its initial window, not 0).
    assert!(c.lines.iter().all(|l| l.label.starts_with("CurCwnd, ") || l.label.starts_with("CurSsthresh, ")));
    assert_eq!(c.lines.iter().filter(|l| l.label.starts_with("CurCwnd, client")).count(), 2);
    let lv = &v["points"][0]["logvars"];
    let cwnd0: Vec<f64> =
        lv["ends"][0]["rows"].as_array().unwrap().iter().map(|r| r[1].as_f64().unwrap() / 1024.0).collect();
    let drawn: Vec<f64> = c.lines[0].points.iter().map(|p| p.1).collect();
    assert_eq!(drawn, cwnd0);
    // The run samples the drain after the window: the window is marked.
    let (a, b, _) = c.band.clone().unwrap();
    assert_eq!((a, b), (lv["measure_start_s"].as_f64().unwrap(), lv["measure_end_s"].as_f64().unwrap()));
}

/// A `[[plot]]` with `y = "client.VAR"` draws, against the swept key, that RFC 4898 variable summed over the
/// client's connection ends of each point.
#[test]
fn a_counter_plot_draws_the_sides_sums_against_the_swept_key() {
    let text = "name = \"rr\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_rr\"\n\
        duration = \"1s\"\n[sweep]\n\"test.burst\" = [0, 4]\n[[plot]]\nname = \"segs\"\nx = \"test.burst\"\n\
        y = \"client.DataOctetsOut\"\nreference = { value = 2048.0, label = \"two KiB\" }\n";
    let flags = tcplab_lab::sweep::RepeatFlags::default();
    let plan = tcplab_lab::sweep::plan(&tcplab_lab::Source { name: "rr.toml", text }, &[], &[], &flags).unwrap();
    let run = tcplab_lab::sweep::run_plan(&plan, Default::default(), &|_, _| {}).unwrap().0;
    let doc = serde_json::to_value(run).unwrap();
    let mut notes = Vec::new();
    let charts = tcplab_report::plot::scenario_charts(&doc, &mut notes);
    assert!(notes.is_empty(), "{notes:?}");
    let (_, chart) = charts.iter().find(|(n, _)| n == "segs").expect("the counter plot is drawn");
    let want: Vec<(f64, f64)> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let ends = p["connections"].as_array().unwrap().iter().filter(|c| c["side"] == "client");
            (
                p["params"]["test.burst"].as_f64().unwrap(),
                ends.map(|c| c["estats"]["DataOctetsOut"].as_f64().unwrap()).sum(),
            )
        })
        .collect();
    // DataOctetsOut is in bytes, drawn in bytes below 10 KiB.
    assert!(chart.y_label.ends_with("(bytes)"), "{}", chart.y_label);
    assert_eq!(chart.lines[0].points, want);
    // The reference line: 2048 bytes across the swept range.
    assert_eq!(chart.lines[1].label, "two KiB");
    assert_eq!(chart.lines[1].points, [(0.0, 2048.0), (4.0, 2048.0)]);
    // Five requests in flight send more than one does, but not five times as much: each send() pushes its
    // own output (tcp_sendmsg ends in tcp_push), so a burst's first request leaves alone and Nagle holds
    // the rest until an ACK.
    assert!(
        want[1].1 > 2.0 * want[0].1,
        "five requests in flight send more bytes than one (Nagle holds all but the first for an ACK): {want:?}"
    );
}

/// `y = "client.VAR.mean"` / `.stddev`: the statistic of the client ends' samples of VAR within the
/// measurement window, computed here from `points[].logvars` by hand.
#[test]
fn a_series_statistic_plot_draws_the_window_samples_mean_and_spread() {
    let text = "name = \"s\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\nqueue = \"20pkt\"\n[test]\n\
        kind = \"tcp_stream\"\nduration = \"2s\"\nseries = { interval = \"100ms\", vars = [\"CurCwnd\"] }\n\
        [sweep]\n\"path.up.queue\" = [\"20pkt\", \"80pkt\"]\n\
        [[plot]]\nname = \"m\"\nx = \"path.up.queue\"\ny = \"client.CurCwnd.mean\"\n\
        [[plot]]\nname = \"sd\"\nx = \"path.up.queue\"\ny = \"client.CurCwnd.stddev\"\n";
    let flags = tcplab_lab::sweep::RepeatFlags::default();
    let plan = tcplab_lab::sweep::plan(&tcplab_lab::Source { name: "s.toml", text }, &[], &[], &flags).unwrap();
    let doc =
        serde_json::to_value(tcplab_lab::sweep::run_plan(&plan, Default::default(), &|_, _| {}).unwrap().0).unwrap();
    let mut notes = Vec::new();
    let charts = tcplab_report::plot::scenario_charts(&doc, &mut notes);
    assert!(notes.is_empty(), "{notes:?}");
    let drawn = |name: &str| charts.iter().find(|(n, _)| n == name).unwrap().1.lines[0].points.clone();
    let (means, sds) = (drawn("m"), drawn("sd"));
    for (k, p) in doc["points"].as_array().unwrap().iter().enumerate() {
        let lv = &p["logvars"];
        let (t0, t1) = (lv["measure_start_s"].as_f64().unwrap(), lv["measure_end_s"].as_f64().unwrap());
        let v: Vec<f64> = lv["ends"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["side"] == "client")
            .flat_map(|e| e["rows"].as_array().unwrap().iter())
            .filter(|r| (t0..=t1).contains(&r[0].as_f64().unwrap()))
            .map(|r| r[1].as_f64().unwrap())
            .collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        // Bytes are drawn in KiB.
        assert!((means[k].1 - mean / 1024.0).abs() < 1e-9, "point {k}: {} vs {mean}", means[k].1);
        assert!((sds[k].1 - sd / 1024.0).abs() < 1e-9);
    }
    // A longer queue holds a larger window: the mean cwnd grows with it.
    assert!(means[1].1 > means[0].1 * 1.5, "{means:?}");
}
