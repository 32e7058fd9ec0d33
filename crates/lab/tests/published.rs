//! `[[published]]` tables: checked at load (errors at file, line and field with what is accepted), matched
//! to the points of a sweep by x and `where`, converted from the source's unit, and compared: the
//! difference is the lab's figure against the published one.

use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{load, Source};

/// A 10 Mbit/s bulk transfer, swept over the receive buffer and the client's Nagle.
const STREAM: &str = "name = \"pub\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\nqueue = \"100pkt\"\n\
    [test]\nkind = \"tcp_stream\"\nduration = \"2s\"\n\
    [sweep]\n\"server.tcp.recv_buffer\" = [\"16KiB\", \"64KiB\"]\n\"client.tcp.nodelay\" = [false, true]\n";

fn load_with(tables: &str) -> Result<tcplab_lab::Scenario, String> {
    let text = format!("{STREAM}{tables}");
    load(&Source { name: "pub.toml", text: &text }, &[]).map_err(|e| e.to_string())
}

fn line_of(tables: &str, needle: &str) -> usize {
    format!("{STREAM}{tables}").lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn bad_published_tables_are_errors_at_file_line_and_field_with_what_is_accepted() {
    let ok = "[[published]]\nsource = \"a report\"\nmetric = \"throughput_bps\"\nunit = \"Mbit/s\"\n";
    let cases: &[(String, &str, &str, &[&str])] = &[
        (format!("{ok}y_values = [1.0, 2.0]\n"), "y_values", "published[0].y_values", &["2 figures without x", "exactly one"]),
        (
            "[[published]]\nsource = \"a report\"\nmetric = \"goodput\"\nunit = \"Mbit/s\"\ny_values = [1.0]\n".into(),
            "goodput",
            "published[0].metric",
            &["\"goodput\"", "accepted: throughput_bps"],
        ),
        (
            "[[published]]\nsource = \"a report\"\nmetric = \"throughput_bps\"\nunit = \"furlongs\"\ny_values = [1.0]\n"
                .into(),
            "furlongs",
            "published[0].unit",
            &["\"furlongs\"", "\"Mbit/s\"", "\"10^6bits/s\""],
        ),
        (
            format!("{ok}x = \"test.recv_bufer\"\nx_values = [1]\ny_values = [1.0]\n"),
            "recv_bufer",
            "published[0].x",
            &["not a key of the scenario"],
        ),
        (
            format!("{ok}x = \"server.tcp.recv_buffer\"\nx_values = [\"16KiB\"]\ny_values = [1.0, 2.0]\n"),
            "y_values",
            "published[0].y_values",
            &["2 figures for 1 x_values", "one figure per value of x"],
        ),
        (
            format!("{ok}y_values = [1.0]\nwhere = {{ \"client.tcp.nodelya\" = true }}\n"),
            "where",
            "published[0].where",
            &["\"client.tcp.nodelya\"", "not a key"],
        ),
        (format!("{ok}y_values = [1.0]\nyaer = 2002\n"), "yaer", "published[0].yaer", &["unknown key", "`year`"]),
        (
            "[[published]]\nsource = \" \"\nmetric = \"throughput_bps\"\nunit = \"Mbit/s\"\ny_values = [1.0]\n".into(),
            "source",
            "published[0].source",
            &["empty"],
        ),
    ];
    for (tables, marker, field, says) in cases {
        let e = load_with(tables).unwrap_err();
        let want = format!("pub.toml:{}: {field}: ", line_of(tables, marker));
        assert!(e.starts_with(&want), "{tables}\n{e}\nwanted {want}");
        for s in *says {
            assert!(e.contains(s), "{e}\nshould say {s}");
        }
    }
}

/// Figures follow x and `where` to exactly the points they name, in the metric's own unit, and the
/// difference is the lab's against the publication's; the table shows both in the source's unit.
#[test]
fn published_figures_are_matched_to_their_points_and_compared() {
    let tables = "[[published]]\nsource = \"a made-up report\"\nyear = 1999\nlabel = \"Nagle\"\n\
        metric = \"throughput_bps\"\nunit = \"Mbit/s\"\nx = \"server.tcp.recv_buffer\"\nx_values = [\"16KiB\", \"64KiB\"]\n\
        y_values = [9.0, 10.0]\nwhere = { \"client.tcp.nodelay\" = false }\n\
        [[published]]\nsource = \"a second report\"\nmetric = \"retransmissions\"\nunit = \"segments\"\ny_values = [0]\n";
    let text = format!("{STREAM}{tables}");
    let src = Source { name: "pub.toml", text: &text };
    let plan = plan(&src, &[], &[], &RepeatFlags::default()).unwrap();
    let (doc, _) = run_plan(&plan, RunOptions { jobs: 2, ..RunOptions::default() }, &|_, _| {}).unwrap();
    assert_eq!(doc.points.len(), 4);
    for p in &doc.points {
        let nagle = p.params["client.tcp.nodelay"] == false;
        let first = p.published.iter().find(|c| c.series == 0);
        assert_eq!(first.is_some(), nagle, "series 0 applies to the Nagle points only: {:?}", p.params);
        let goodput = common_goodput(p);
        if let Some(c) = first {
            let want = if p.params["server.tcp.recv_buffer"] == "16KiB" { 9.0 } else { 10.0 };
            assert_eq!(c.as_published, want);
            assert_eq!(c.unit, "Mbit/s");
            assert_eq!(c.published, want * 1e6);
            assert_eq!(c.lab, goodput);
            let d = c.difference.unwrap();
            assert!((d - (goodput - want * 1e6) / (want * 1e6)).abs() < 1e-12);
        }
        // The figure without x applies everywhere; published 0 has no relative difference.
        let second = p.published.iter().find(|c| c.series == 1).expect("applies to every point");
        assert_eq!(second.published, 0.0);
        assert_eq!(second.difference, None);
    }
    // Byte-identical JSON on a second run: the comparison is a pure function of the run.
    let (again, _) = run_plan(&plan, RunOptions { jobs: 1, ..RunOptions::default() }, &|_, _| {}).unwrap();
    assert_eq!(serde_json::to_string(&doc).unwrap(), serde_json::to_string(&again).unwrap());
}

fn common_goodput(p: &tcplab_lab::result::Point) -> f64 {
    match &p.metrics {
        tcplab_lab::result::Metrics::Stream(m) => m.throughput_bps,
        other => panic!("not a stream: {other:?}"),
    }
}
