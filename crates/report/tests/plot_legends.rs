//! Facts about the drawn SVG of every plot of every shipped scenario (shortened to 1 s): the legend sits
//! below the plotting area and covers no point, line or label; no legend entry is empty; axis labels are
//! words with the unit once, never a metric's key; published figures are drawn, on top, and named.
//! Then the label strings and the empty-label cases on hand-made charts.

use serde_json::{json, Value};
use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{Source, SHIPPED};
use tcplab_report::plot::{draw, plots, Chart, Line};

/// An SVG element's attribute as a number.
fn attr(el: &str, name: &str) -> Option<f64> {
    let at = el.find(&format!(" {name}=\""))? + name.len() + 3;
    el[at..].split('"').next()?.parse().ok()
}

/// Every coordinate an element puts on the page: polyline points, circle centres, line ends, rect
/// corners, text anchors.
fn coordinates(el: &str) -> Vec<(f64, f64)> {
    if el.starts_with("<polyline") || el.starts_with("<polygon") {
        let at = el.find(" points=\"").map(|i| i + 9).unwrap_or(el.len());
        return el[at..]
            .split('"')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|p| p.split_once(','))
            .filter_map(|(x, y)| Some((x.parse().ok()?, y.parse().ok()?)))
            .collect();
    }
    let pairs: &[(&str, &str)] = if el.starts_with("<circle") {
        &[("cx", "cy")]
    } else if el.starts_with("<line") {
        &[("x1", "y1"), ("x2", "y2")]
    } else {
        &[("x", "y")]
    };
    let mut out: Vec<(f64, f64)> = pairs.iter().filter_map(|(x, y)| Some((attr(el, x)?, attr(el, y)?))).collect();
    if el.starts_with("<rect") {
        if let (Some(&(x, y)), Some(w), Some(h)) = (out.first(), attr(el, "width"), attr(el, "height")) {
            out.push((x + w, y + h));
        }
    }
    out
}

/// A drawn plot taken apart: the elements outside the legend, the legend's frame and its entries' texts.
struct Drawn {
    elements: Vec<String>,
    legend: Option<(f64, f64, f64, f64)>,
    legend_texts: Vec<String>,
    texts: Vec<String>,
    height: f64,
}

fn take_apart(svg: &str) -> Drawn {
    let (chart, legend) = match svg.find("<g class=\"legend\">") {
        Some(i) => {
            let end = svg[i..].find("\n</g>\n").map(|e| i + e).expect("the legend group is closed");
            (format!("{}{}", &svg[..i], &svg[end + 5..]), Some(&svg[i..end]))
        }
        None => (svg.to_string(), None),
    };
    assert_eq!(svg.matches("<g class=\"legend\">").count(), usize::from(legend.is_some()), "one legend at most");
    let elements: Vec<String> = chart
        .split('<')
        .skip(1)
        .filter(|e| !e.starts_with('/') && !e.starts_with("svg") && !e.starts_with("title"))
        .map(|e| format!("<{e}"))
        .collect();
    let texts_of = |s: &str| -> Vec<String> {
        s.split("<text")
            .skip(1)
            .map(|t| t.split_once('>').unwrap().1.split('<').next().unwrap().trim().to_string())
            .collect()
    };
    let frame = legend.map(|l| {
        let rect = &l[l.find("<rect").expect("the legend has a frame")..];
        let (x, y, w, h) = (
            attr(rect, "x").unwrap(),
            attr(rect, "y").unwrap(),
            attr(rect, "width").unwrap(),
            attr(rect, "height").unwrap(),
        );
        (x, y, x + w, y + h)
    });
    let height = attr(svg, "height").expect("the SVG has a height");
    Drawn {
        elements,
        legend: frame,
        legend_texts: legend.map(texts_of).unwrap_or_default(),
        texts: texts_of(&chart),
        height,
    }
}

/// The axis labels of a drawn chart: its rotated text (y) and the text just above the legend (x).
fn axis_labels(c: &Chart) -> [&str; 2] {
    [c.x_label.as_str(), c.y_label.as_str()]
}

/// Every shipped scenario run for 1 s (sweeps point by point), as its JSON document.
fn shipped_results() -> Vec<(&'static str, Value)> {
    SHIPPED
        .iter()
        .map(|s| {
            let set = ["test.duration=\"1s\"".to_string()];
            let plan = plan(&Source { name: s.name, text: s.text }, &set, &[], &RepeatFlags::default())
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
            let (doc, _) = run_plan(&plan, RunOptions { jobs: 0, seed: None, shard: None }, &|_, _| {})
                .unwrap_or_else(|e| panic!("{}: {e}", s.name));
            (s.name, serde_json::to_value(doc).unwrap())
        })
        .collect()
}

const PALETTE_HEX: [&str; 10] =
    ["#1F77B4", "#FF7F0E", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F", "#BCBD22", "#17BECF"];

#[test]
fn every_shipped_plot_keeps_its_legend_off_the_data_names_every_entry_and_labels_axes_in_words() {
    let mut checked = 0;
    let mut with_published = 0;
    for (name, doc) in shipped_results() {
        // The metrics' keys that are not words (`latency_us`, `transactions_per_s`).
        let metric_keys: Vec<String> =
            doc["points"][0]["metrics"].as_object().unwrap().keys().filter(|k| k.contains('_')).cloned().collect();
        let (ps, _) = plots(&doc);
        // Each plot its own file: a [[plot]] named as a built-in plot is must not replace it.
        let mut names: Vec<&str> = ps.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "{name}: two plots share a file name");
        for p in &ps {
            let what = format!("{name}/{}.svg", p.name);
            let d = take_apart(&p.svg);
            // Two or more lines of data need a legend to tell them apart (and it is ours, not one drawn
            // in the plotting area).
            let data_lines = d
                .elements
                .iter()
                .filter(|e| e.starts_with("<polyline") && PALETTE_HEX.iter().any(|h| e.contains(h)))
                .count();
            assert!(data_lines < 2 || d.legend.is_some(), "{what}: {data_lines} lines and no legend below the plot");
            if let Some((x0, y0, x1, y1)) = d.legend {
                assert!(y1 <= d.height && x0 >= 0.0 && x1 <= 960.0, "{what}: the legend is on the page");
                // Nothing of the chart (points, lines, markers, crosses, grid, tick and axis labels) lies in
                // or below the legend's top edge: the legend is under the plotting area, not over it.
                for el in &d.elements {
                    for (x, y) in coordinates(el) {
                        let inside = x >= x0 && x <= x1 && y >= y0 && y <= y1;
                        assert!(!inside, "{what}: ({x}, {y}) of {el} is under the legend {:?}", d.legend);
                        if !el.starts_with("<rect x=\"0\" y=\"0\"") {
                            assert!(y < y0, "{what}: {el} reaches below the legend's top {y0}");
                        }
                    }
                }
                assert!(!d.legend_texts.is_empty(), "{what}: a legend with no entries");
                for t in &d.legend_texts {
                    assert!(!t.is_empty(), "{what}: an empty legend entry among {:?}", d.legend_texts);
                }
            }
            // No empty legend entry can hide elsewhere either: every text of the chart says something,
            // but for the blank ticks between categories.
            assert!(d.texts.iter().filter(|t| t.is_empty()).count() <= 8, "{what}: {:?}", d.texts);
            checked += 1;
        }
        // Axis labels: words, the unit once, never a metric's key.
        let mut notes = Vec::new();
        let charts = tcplab_report::plot::scenario_charts(&doc, &mut notes)
            .into_iter()
            .chain(tcplab_report::plot::sweep_charts(&doc))
            .chain(tcplab_report::plot::cdf_charts(&doc));
        for (n, c) in charts {
            for label in axis_labels(&c) {
                assert!(label.matches('(').count() <= 1, "{name}/{n}: the unit more than once: {label}");
                for k in &metric_keys {
                    assert!(!label.contains(k.as_str()), "{name}/{n}: the axis label {label:?} names the key {k}");
                }
                assert!(
                    !label.contains("client.") && !label.contains("server.") && !label.contains("test."),
                    "{name}/{n}: {label}"
                );
            }
        }
        // Published figures: crosses in the plotting area, drawn after the lab's lines, named in the legend.
        let published = doc["scenario"]["published"].as_array().cloned().unwrap_or_default();
        for series in &published {
            let metric = series["metric"].as_str().unwrap();
            // A series against a swept key is drawn on the plots of its metric against that key.
            let Some(spec) =
                doc["scenario"]["plot"].as_array().unwrap().iter().find(|s| s["y"] == metric && s["x"] == series["x"])
            else {
                continue;
            };
            let plot = ps.iter().find(|p| Some(p.name.as_str()) == spec["name"].as_str()).unwrap();
            let d = take_apart(&plot.svg);
            let source = series["source"].as_str().unwrap();
            assert!(
                d.legend_texts.iter().any(|t| t.starts_with(source)),
                "{name}/{}: {source} is not in the legend",
                plot.name
            );
            let crosses: Vec<usize> = d
                .elements
                .iter()
                .enumerate()
                .filter(|(_, e)| {
                    e.starts_with("<line")
                        && e.contains("stroke-width=\"3\"")
                        && PALETTE_HEX.iter().any(|h| e.contains(h))
                })
                .map(|(i, _)| i)
                .collect();
            assert!(!crosses.is_empty(), "{name}/{}: no published cross drawn", plot.name);
            let last_lab = d.elements.iter().rposition(|e| {
                (e.starts_with("<polyline") || e.starts_with("<circle")) && PALETTE_HEX.iter().any(|h| e.contains(h))
            });
            assert!(
                last_lab < crosses.first().copied(),
                "{name}/{}: a lab line is drawn over a published cross",
                plot.name
            );
            let (_, top, _, _) = d.legend.unwrap();
            for &i in &crosses {
                assert!(
                    coordinates(&d.elements[i]).iter().all(|&(_, y)| y < top),
                    "{name}/{}: a cross under the legend",
                    plot.name
                );
            }
            with_published += 1;
        }
    }
    assert!(checked > 100, "{checked} plots checked");
    assert!(with_published >= 8, "{with_published} published series checked");
}

/// A sweep of an RR test over two keys, as in tests/plot.rs.
fn sweep_doc() -> Value {
    let mut points = Vec::new();
    for nodelay in [false, true] {
        for burst in [0, 2, 4, 8] {
            points.push(json!({
                "params": {"test.burst": burst, "client.tcp.nodelay": nodelay},
                "iterations": 1,
                "metrics": {"transactions_per_s": 100.0 * (burst as f64 + 1.0),
                            "latency_us": {"mean": 900.0, "p99": 1000.0 + burst as f64 * 50.0}},
            }));
        }
    }
    json!({"schema": "tcplab.result/1", "scenario": {"name": "rr-sweep", "test": {"kind": "tcp_rr"}}, "points": points})
}

#[test]
fn axis_labels_are_words_with_the_unit_once_and_legends_name_the_swept_value() {
    let charts = tcplab_report::plot::sweep_charts(&sweep_doc());
    let (_, tps) = &charts[0];
    assert_eq!(tps.x_label, "first burst (transactions)");
    assert_eq!(tps.y_label, "transaction rate (transactions/s)");
    assert_eq!(tps.title, "rr-sweep: transaction rate against first burst");
    assert_eq!(tps.lines[0].label, "client TCP_NODELAY = off");
    assert_eq!(charts[1].1.y_label, "99th percentile latency (\u{b5}s)");
    // A scenario's plot of a mean latency of tens of ms: in ms, named in words.
    let mut doc = sweep_doc();
    for p in doc["points"].as_array_mut().unwrap() {
        p["metrics"]["latency_us"]["mean"] = json!(25_000.0);
    }
    doc["scenario"]["plot"] =
        json!([{"name": "m", "x": "test.burst", "y": "latency_us.mean", "lines": "client.tcp.nodelay"}]);
    let (_, c) = &tcplab_report::plot::scenario_charts(&doc, &mut Vec::new())[0];
    assert_eq!(c.y_label, "mean latency (ms)");
    assert_eq!(c.lines[0].points[0].1, 25.0);
    let svg = draw(c).unwrap();
    let d = take_apart(&svg);
    assert!(d.texts.iter().any(|t| t == "mean latency (ms)"), "{:?}", d.texts);
    assert_eq!(d.legend_texts, ["client TCP_NODELAY = off", "client TCP_NODELAY = on"]);
}

#[test]
fn a_line_without_a_label_has_no_legend_entry_and_a_lone_one_no_legend() {
    let line = |label: &str, y: f64| Line { label: label.into(), points: vec![(0.0, y), (1.0, y)], ..Line::default() };
    let chart = |lines: Vec<Line>| Chart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        lines,
        ..Chart::default()
    };
    let d = take_apart(&draw(&chart(vec![line("", 1.0)])).unwrap());
    assert!(d.legend.is_none(), "one unlabelled line needs no legend");
    let d = take_apart(&draw(&chart(vec![line("", 1.0), line("ceiling", 2.0), line("  ", 3.0)])).unwrap());
    assert_eq!(d.legend_texts, ["ceiling"]);
    // The lab's line beside a reference in a scenario's plot is named, and a reference with an empty
    // label is named by its value.
    let mut doc = sweep_doc();
    // One value of the second swept key: points that differ in it would be lines of their own.
    doc["points"].as_array_mut().unwrap().retain(|p| p["params"]["client.tcp.nodelay"] == false);
    doc["scenario"]["plot"] = json!([{"name": "r", "x": "test.burst", "y": "transactions_per_s", "reference": {"value": 500.0, "label": ""}}]);
    let (_, c) = &tcplab_report::plot::scenario_charts(&doc, &mut Vec::new())[0];
    let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["tcplab", "reference, 500 transactions/s"]);
    // A measurement window is named in the legend, not written over the data.
    let mut c = chart(vec![line("cwnd, client", 1.0)]);
    c.band = Some((0.2, 0.8, "measurement window".into()));
    let d = take_apart(&draw(&c).unwrap());
    assert_eq!(d.legend_texts, ["cwnd, client", "measurement window"]);
    assert!(!d.texts.iter().any(|t| t.contains("measurement")));
}

#[test]
fn a_long_title_wraps_and_long_legends_grow_the_plot_downwards() {
    let lines: Vec<Line> = (0..9)
        .map(|i| Line {
            label: format!("a rather long label for line number {i} of nine"),
            points: vec![(0.0, i as f64), (1.0, 1.0)],
            ..Line::default()
        })
        .collect();
    let title = "scenario: latency CDF, client stack = linux-2.2, server stack = linux-2.2, server immediate-ACK probability = 0.125".to_string();
    let c = Chart { title, x_label: "x".into(), y_label: "y".into(), lines, ..Chart::default() };
    let svg = draw(&c).unwrap();
    let d = take_apart(&svg);
    assert_eq!(d.legend_texts.len(), 9);
    assert!(d.height > 540.0 + 4.0 * 22.0, "{}", d.height);
    let title_lines: Vec<&String> =
        d.texts.iter().filter(|t| t.contains("stack") || t.contains("probability")).collect();
    assert_eq!(title_lines.len(), 2, "{:?}", d.texts);
    assert!(title_lines.iter().all(|t| t.chars().count() <= 84));
}
