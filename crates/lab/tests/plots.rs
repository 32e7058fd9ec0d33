//! `[[plot]]` tables: checked at load against the resolved scenario, errors naming the file, the line,
//! the field and what is accepted; the metric names offered are exactly the keys a run's metrics have.

use tcplab_lab::{load, run_scenario, Source};

const RR: &str = "name = \"rr\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n\
    [test]\nkind = \"tcp_rr\"\nduration = \"1s\"\nseries = { interval = \"100ms\", vars = [\"CurCwnd\", \"SmoothedRTT\"] }\n";

fn load_with(plots: &str) -> Result<tcplab_lab::Scenario, String> {
    let text = format!("{RR}{plots}");
    load(&Source { name: "p.toml", text: &text }, &[]).map_err(|e| e.to_string())
}

/// The 1-based line of `needle` in the text `load_with(plots)` loads.
fn line_of(plots: &str, needle: &str) -> usize {
    format!("{RR}{plots}").lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn good_plots_load_and_are_echoed_in_the_scenario() {
    let plots =
        "[[plot]]\nx = \"test.burst\"\ny = \"latency_us.p99\"\nlines = \"client.tcp.nodelay\"\ntitle = \"tail\"\n\
        [[plot]]\nname = \"srtt\"\nseries = [\"SmoothedRTT\"]\n";
    let s = load_with(plots).unwrap();
    assert_eq!(s.plot.len(), 2);
    assert_eq!(s.plot[0].y.as_deref(), Some("latency_us.p99"));
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["plot"][1]["series"][0], "SmoothedRTT");
    assert_eq!(v["plot"][1]["name"], "srtt");
    // No [[plot]]: no `plot` in the echo.
    assert!(serde_json::to_value(load_with("").unwrap()).unwrap().get("plot").is_none());
}

#[test]
fn bad_plots_are_errors_at_file_line_and_field_with_what_is_accepted() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        // (the tables, the line's marker, the field, what the message must say)
        ("[[plot]]\nx = \"test.burst\"\ny = \"goodput\"\n", "goodput", "plot[0].y", &["\"goodput\"", "accepted: transactions_per_s", "latency_us.p99_9"]),
        ("[[plot]]\nx = \"test.burts\"\ny = \"transactions_per_s\"\n", "burts", "plot[0].x", &["not a key of the scenario", "test.burst"]),
        ("[[plot]]\nx = \"test.burst\"\ny = \"transactions_per_s\"\n[[plot]]\nx = \"test.burst\"\ny = \"transactions\"\nlines = \"client.tcp.nodle\"\n", "nodle", "plot[1].lines", &["not a key"]),
        ("[[plot]]\nseries = [\"CurCwnd\", \"SmoothedRTT\"]\n", "series = [", "plot[0].series", &["in bytes", "in ms", "of one unit"]),
        ("[[plot]]\nseries = [\"SendStall\"]\n", "SendStall", "plot[0].series", &["not sampled", "accepted: CurCwnd, SmoothedRTT, delivered_bytes, throughput_bps"]),
        ("[[plot]]\ny = \"transactions\"\n", "[[plot]]", "plot[0].x", &["missing key", "x = \"KEY\""]),
        ("[[plot]]\nx = \"test.burst\"\ny = \"transactions\"\nseries = [\"CurCwnd\"]\n", "[[plot]]", "plot[0]", &["either series"]),
        ("[[plot]]\nname = \"a b\"\nseries = [\"CurCwnd\"]\n", "a b", "plot[0].name", &["letters, digits"]),
        ("[[plot]]\nseries = [\"CurCwnd\"]\ncolour = \"red\"\n", "colour", "plot[0].colour", &["unknown key", "series", "lines"]),
    ];
    for (plots, marker, field, says) in cases {
        let e = load_with(plots).unwrap_err();
        let want = format!("p.toml:{}: {field}: ", line_of(plots, marker));
        assert!(e.starts_with(&want), "{plots}\n{e}\nwanted {want}");
        for s in *says {
            assert!(e.contains(s), "{e}\nshould say {s}");
        }
    }
    // Series plots need test.series.
    let text = RR.replace("series = { interval = \"100ms\", vars = [\"CurCwnd\", \"SmoothedRTT\"] }\n", "")
        + "[[plot]]\nseries = [\"CurCwnd\"]\n";
    let e = load(&Source { name: "p.toml", text: &text }, &[]).unwrap_err().to_string();
    assert!(e.contains("plot[0].series: needs test.series"), "{e}");
}

#[test]
fn the_metric_names_offered_are_the_keys_of_a_runs_metrics() {
    let cpu = "[client.host.cpu]\nper_segment_in = \"10us\"\n[server.host.cpu]\nper_call = \"1us\"\n";
    let texts = [
        format!("{RR}{cpu}"),
        RR.replace("tcp_rr", "tcp_crr"),
        "name = \"s\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n"
            .to_string(),
    ];
    for text in texts {
        let s = load(&Source { name: "m.toml", text: &text }, &[]).unwrap();
        let doc = run_scenario(&s, 1).unwrap();
        let m = serde_json::to_value(&doc.points[0].metrics).unwrap();
        let mut keys = Vec::new();
        flatten("", &m, &mut keys);
        keys.retain(|k| k != "cpu_source" && !k.ends_with(".cdf"));
        let mut names: Vec<String> =
            tcplab_lab::result::metric_names(&s).unwrap().into_iter().map(String::from).collect();
        keys.sort();
        names.sort();
        assert_eq!(names, keys, "{}", s.test.kind_name());
    }
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, x, out);
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// `y = "client.VAR"` / `"server.VAR"`: an RFC 4898 variable of that side's ends (crates/report/tests/plot.rs
/// checks what is drawn).
#[test]
fn counter_plots_take_rfc_4898_variables_of_a_side() {
    let plots = "[sweep]\n\"test.burst\" = [0, 4]\n[[plot]]\nx = \"test.burst\"\ny = \"client.SegsOut\"\n";
    load_with(plots).unwrap();
    load_with(&plots.replace("client.SegsOut", "server.DupAcksOut")).unwrap();
    for (bad, says) in [("client.SegOut", "client.VAR / server.VAR"), ("peer.SegsOut", "accepted: transactions_per_s")]
    {
        let e = load_with(&plots.replace("client.SegsOut", bad)).unwrap_err();
        assert!(e.contains("plot[0].y") && e.contains(says), "{e}");
    }
    // A reference line belongs to an x/y plot.
    let reference = "reference = { value = 100.0, label = \"bound\" }\n";
    load_with(&format!("{plots}{reference}")).unwrap();
    let e = load_with(&format!("[[plot]]\nseries = [\"CurCwnd\"]\n{reference}")).unwrap_err();
    assert!(e.contains("plot[0].reference") && e.contains("x and y only"), "{e}");
}
