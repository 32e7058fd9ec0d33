//! What a reader of a classic scenario's plot needs from its published figures (issue 21): each series of
//! crosses in the colour of the lab's line it is compared with, the lab's lines one curve per combination
//! of the swept keys, and the source's year named once.

use serde_json::{json, Value};
use tcplab_report::plot::{colours, draw, scenario_charts, Chart, Line};

/// A result of a sweep of `test.burst` (x) by `client.stack` and `server.stack`, transactions/s = burst +
/// 10 × (which stacks), with a scenario `[[plot]]` whose lines axis is the server's stack only.
fn doc(published: Value) -> Value {
    let mut points = Vec::new();
    for (ci, client) in ["linux-2.2", "linux-2.4"].iter().enumerate() {
        for (si, server) in ["linux-2.2", "linux-2.4"].iter().enumerate() {
            for burst in [0, 1, 2] {
                points.push(json!({
                    "params": {"client.stack": client, "server.stack": server, "test.burst": burst},
                    "iterations": 1,
                    "metrics": {"transactions_per_s": burst as f64 + 10.0 * (2 * ci + si) as f64},
                }));
            }
        }
    }
    json!({
        "schema": "tcplab.result/1",
        "scenario": {
            "name": "pub-colours", "test": {"kind": "tcp_rr"},
            "plot": [{"name": "tps", "x": "test.burst", "y": "transactions_per_s", "lines": "server.stack"}],
            "published": published,
        },
        "points": points,
    })
}

fn chart(doc: &Value) -> Chart {
    scenario_charts(doc, &mut Vec::new()).remove(0).1
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[test]
fn points_that_differ_in_a_swept_key_the_plot_does_not_name_are_separate_lines() {
    // classic/small-messages drew the client's two stacks as one line per server stack: two lab points at
    // each x, joined by a vertical stroke.
    let c = chart(&doc(json!([])));
    let lab: Vec<&Line> = c.lines.iter().filter(|l| !l.published).collect();
    assert_eq!(lab.len(), 4, "{:?}", c.lines.iter().map(|l| &l.label).collect::<Vec<_>>());
    for l in &lab {
        let xs: Vec<f64> = l.points.iter().map(|p| p.0).collect();
        assert_eq!(xs, [0.0, 1.0, 2.0], "{}: one point per x", l.label);
    }
    assert_eq!(lab[0].label, "server stack = linux-2.2, client stack = linux-2.2");
    assert_eq!(lab[1].label, "server stack = linux-2.4, client stack = linux-2.2");
}

#[test]
fn published_crosses_take_the_colour_of_the_lab_line_their_where_picks() {
    let series = |label: &str, stack: &str| {
        json!({"source": "a report", "year": 2001, "label": label, "metric": "transactions_per_s",
               "unit": "trans/s", "x": "test.burst", "x_values": [0, 1], "y_values": [5.0, 6.0],
               "where": {"client.stack": stack, "server.stack": stack}})
    };
    let c = chart(&doc(json!([series("2.2", "linux-2.2"), series("2.4", "linux-2.4")])));
    let col = colours(&c);
    let idx = |label: &str| c.lines.iter().position(|l| l.label == label).unwrap_or_else(|| panic!("{label}"));
    let lab22 = idx("server stack = linux-2.2, client stack = linux-2.2");
    let lab24 = idx("server stack = linux-2.4, client stack = linux-2.4");
    assert_eq!(col[idx("a report (2001): 2.2")], col[lab22]);
    assert_eq!(col[idx("a report (2001): 2.4")], col[lab24]);
    assert_ne!(col[lab22], col[lab24]);
    // The SVG draws the 2.4 crosses in that line's colour.
    let svg = draw(&c).unwrap();
    let want = format!("stroke=\"{}\"", hex(col[lab24]));
    assert!(svg.lines().filter(|l| l.contains("<line") && l.contains(&want)).count() >= 4, "{want}");
}

#[test]
fn beside_one_lab_line_and_a_reference_the_crosses_are_the_lab_lines_colour_and_the_year_is_not_repeated() {
    // classic/dsl-rr: one lab line and the down line's ceiling; the report's crosses were drawn in a third
    // colour, matching neither, and "the 2003 txqueuelen report (2003)" named its year twice.
    let mut d = doc(json!([{"source": "the 2002 DSL report", "year": 2002, "metric": "transactions_per_s",
                            "unit": "trans/s", "x": "test.burst", "x_values": [0, 1, 2], "y_values": [3.4, 5.5, 5.5]}]));
    for p in d["points"].as_array_mut().unwrap() {
        p["params"] = json!({"test.burst": p["params"]["test.burst"]});
    }
    d["points"].as_array_mut().unwrap().truncate(3);
    d["scenario"]["plot"] = json!([{"name": "tps", "x": "test.burst", "y": "transactions_per_s",
                                    "reference": {"value": 5.7, "label": "the ceiling"}}]);
    let c = chart(&d);
    let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["tcplab", "the ceiling", "the 2002 DSL report"]);
    let col = colours(&c);
    assert_eq!(col[2], col[0], "the report's crosses in the lab line's colour");
    assert_ne!(col[1], col[0]);
    let svg = draw(&c).unwrap();
    assert!(svg.contains("the 2002 DSL report"), "the legend names the source");
    assert!(!svg.contains("(2002)"), "the year once");
}

#[test]
fn colour_of_names_the_colour_the_line_got_not_the_palettes_entry_at_its_index() {
    // A dashed line takes the colour of the line before it, so line 2's colour is the palette's second, not
    // its third: a cross that names line 2 must get that.
    let l =
        |label: &str, dashed: bool| Line { label: label.into(), points: vec![(0.0, 1.0)], dashed, ..Line::default() };
    let mut cross = l("report", false);
    cross.published = true;
    cross.colour_of = Some(2);
    let c = Chart { lines: vec![l("cwnd", false), l("ssthresh", true), l("rtt", false), cross], ..Chart::default() };
    let col = colours(&c);
    assert_eq!(col[1], col[0]);
    assert_eq!(col[3], col[2]);
}

#[test]
fn a_figure_without_x_is_a_cross_at_every_x_of_its_lab_line_in_its_colour() {
    // classic/rdp-rtt-feedback-random's ~35 s (the worst of five transfers, which names none) and
    // classic/txqueuelen's ~941 Mbit/s were not drawn at all.
    let c = chart(&doc(json!([{"source": "a report", "year": 1986, "label": "worst", "metric": "transactions_per_s",
                               "unit": "trans/s", "y_values": [35.0],
                               "where": {"client.stack": "linux-2.4", "server.stack": "linux-2.2"}}])));
    let level = c.lines.iter().position(|l| l.label == "a report (1986): worst").expect("drawn");
    let l = &c.lines[level];
    assert!(l.published);
    assert_eq!(l.points, [(0.0, 35.0), (1.0, 35.0), (2.0, 35.0)], "at every point it is compared with");
    let lab = c.lines.iter().position(|l| l.label == "server stack = linux-2.2, client stack = linux-2.4").unwrap();
    assert_eq!(colours(&c)[level], colours(&c)[lab]);
    let svg = draw(&c).unwrap();
    assert!(svg.contains("a report (1986): worst"), "named in the legend");
}

/// The texts of an SVG's `<text>` elements.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim().to_string()))
        .collect()
}

#[test]
fn a_count_over_a_short_range_is_labelled_at_whole_numbers_only() {
    // classic/txqueuelen's DupAcksIn is 1 at every point: its axis read 0, 0.1, 0.2 … 1.
    let flat =
        Line { label: "DupAcksIn".into(), points: vec![(10.0, 1.0), (2000.0, 1.0)], markers: true, ..Line::default() };
    let c = Chart {
        title: "t".into(),
        x_label: "x".into(),
        y_label: "DupAcksIn".into(),
        lines: vec![flat.clone()],
        ..Chart::default()
    };
    let t = texts(&draw(&c).unwrap());
    assert!(t.iter().any(|s| s == "1") && t.iter().any(|s| s == "0"), "{t:?}");
    assert!(!t.iter().any(|s| s.starts_with("0.")), "no fractional tick on a count: {t:?}");
    // A quantity that takes fractions keeps its fractional ticks.
    let mut frac = flat;
    frac.points[1].1 = 0.5;
    let c = Chart { lines: vec![frac], ..c };
    let t = texts(&draw(&c).unwrap());
    assert!(t.iter().any(|s| s.starts_with("0.")), "{t:?}");
}
