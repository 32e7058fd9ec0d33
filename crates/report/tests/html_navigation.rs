//! `--report` of a sweep: a table of contents with one link per point, a summary row per point linking to
//! its section, the full tables and each point's own plots collapsed in `<details>`, and still one
//! self-contained file.

use serde_json::Value;
use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::Source;
use tcplab_report::html::{page, Provenance};

/// A five-point sweep of an RR test over a DSL-like path (each point with a latency CDF of its own).
const SWEEP: &str = "name = \"nav\"\n[path.up]\nrate = \"2mbit\"\ndelay = \"15ms\"\n[path.down]\nrate = \"8mbit\"\n\
    delay = \"15ms\"\n[test]\nkind = \"tcp_rr\"\nduration = \"1s\"\nrequest = \"100B\"\nresponse = \"2KiB\"\n\
    [sweep]\n\"test.burst\" = [0, 1, 2, 4, 8]\n";

fn report(text: &str) -> (Value, String) {
    let plan = plan(&Source { name: "nav.toml", text }, &[], &[], &RepeatFlags::default()).unwrap();
    let (doc, _) = run_plan(&plan, RunOptions { jobs: 0, seed: None, shard: None }, &|_, _| {}).unwrap();
    let prov = Provenance { command_line: vec!["tcplab".into(), "run".into(), "nav.toml".into()], result_file: None };
    let html = page(&serde_json::to_value(&doc).unwrap(), &tcplab_report::table(&doc), &prov);
    (serde_json::to_value(doc).unwrap(), html)
}

/// The text between `from` and the next `to` after it.
fn between<'a>(s: &'a str, from: &str, to: &str) -> &'a str {
    let a = s.find(from).unwrap_or_else(|| panic!("{from} is not on the page")) + from.len();
    &s[a..a + s[a..].find(to).unwrap_or_else(|| panic!("{to} does not follow {from}"))]
}

#[test]
fn a_sweeps_page_has_contents_a_summary_per_point_and_collapsed_tables() {
    let (doc, html) = report(SWEEP);
    let n = doc["points"].as_array().unwrap().len();
    assert_eq!(n, 5);
    // Contents: one link per point, to a section that exists, each once.
    let toc = between(&html, "<nav class=\"toc\" id=\"contents\">", "</nav>");
    for i in 0..n {
        assert_eq!(toc.matches(&format!("href=\"#point-{i}\"")).count(), 1, "point {i} in the contents");
        assert_eq!(html.matches(&format!("id=\"point-{i}\"")).count(), 1, "point {i}'s section");
    }
    assert_eq!(toc.matches("href=\"#point-").count(), n);
    for part in ["#result", "#summary", "#plots", "#points", "#scenario", "#provenance"] {
        let id = format!("id=\"{}\"", &part[1..]);
        assert!(toc.contains(&format!("href=\"{part}\"")) && html.contains(&id), "{part}");
    }
    assert!(toc.contains("p3: first burst = 4"), "points named by their swept values in words: {toc}");
    // The summary: a row per point, its swept value and main metrics in the plots' units, linking to it.
    let summary = between(&html, "<table class=\"num summary\">", "</table>");
    assert!(summary.contains("<th title=\"test.burst\">first burst (transactions)</th>"), "{summary}");
    assert!(summary.contains("transaction rate (transactions/s)</th>") && summary.contains("mean latency (ms)</th>"));
    let rows: Vec<&str> = summary.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), n);
    for (i, (row, p)) in rows.iter().zip(doc["points"].as_array().unwrap()).enumerate() {
        assert!(
            row.starts_with(&format!("<th><a href=\"#point-{i}\">p{i}</a></th><td>{}</td>", p["params"]["test.burst"])),
            "{row}"
        );
        let cells: Vec<f64> =
            row.split("<td>").skip(1).map(|c| c.split('<').next().unwrap().parse().unwrap()).collect();
        let tps = p["metrics"]["transactions_per_s"].as_f64().unwrap();
        let mean_ms = p["metrics"]["latency_us"]["mean"].as_f64().unwrap() / 1e3;
        assert!((cells[1] - tps).abs() <= 1e-3 * tps.max(1.0), "{tps}: {row}");
        assert!((cells[2] - mean_ms).abs() <= 1e-3 * mean_ms, "{mean_ms} ms: {row}");
    }
    // Every point's full tables and own plots are collapsed; nothing of them is outside a <details>.
    for i in 0..n {
        let section = between(&html, &format!("<section class=\"point\" id=\"point-{i}\">"), "</section>");
        assert_eq!(section.matches("<details>").count(), 3, "plots, RFC 4898, links: {section:.300}");
        assert_eq!(section.matches("<details>").count(), section.matches("</details>").count());
        let outside: String = section.split("<details>").map(|s| s.split("</details>").last().unwrap()).collect();
        assert!(!outside.contains("<table") && !outside.contains("<svg"), "point {i}: {outside}");
        assert!(section.contains("<summary>RFC 4898 statistics: ") && section.contains("2 connection ends</summary>"));
        assert!(section.contains(&format!("<figure id=\"plot-p{i}-cdf\"")), "point {i}'s CDF is in its section");
    }
    // The plots across points come first, uncollapsed; the page has each plot once.
    let plots = between(&html, "<h2 id=\"plots\">", "<h2 id=\"points\">");
    assert!(plots.contains("<figure id=\"plot-sweep-transactions_per_s\"") && !plots.contains("<details"));
    assert_eq!(html.matches("<svg").count(), 3 + n, "two sweep plots, the CDFs overlaid, a CDF per point");
    // The scenario as run is collapsed too.
    assert!(between(&html, "<h2 id=\"scenario\">", "</pre>").contains("<details><summary>"));
}

#[test]
fn the_page_stays_one_self_contained_file() {
    let (_, html) = report(SWEEP);
    for bad in ["<script", "http://", "https://", "<link", "src=", "@import", "url(", "<iframe", "<object"] {
        let hits: Vec<&str> = html
            .match_indices(bad)
            .map(|(i, _)| &html[i.saturating_sub(40)..(i + 60).min(html.len())])
            .filter(|h| !h.contains("xmlns"))
            .collect();
        assert!(hits.is_empty(), "{bad}: {hits:?}");
    }
    // Links are anchors within the page, each to an id that exists.
    for href in html.split("href=\"").skip(1).map(|h| h.split('"').next().unwrap()) {
        assert!(href.starts_with('#'), "{href} leaves the page");
        assert!(html.contains(&format!("id=\"{}\"", &href[1..])), "{href} has no target");
    }
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
}

#[test]
fn a_single_points_page_keeps_its_plots_in_view_and_its_tables_collapsed() {
    let text = SWEEP.split("[sweep]").next().unwrap();
    let (_, html) = report(text);
    assert!(!html.contains("id=\"summary\""), "no summary for one point");
    let plots = between(&html, "<h2 id=\"plots\">", "<h2 id=\"points\">");
    assert!(plots.contains("<figure id=\"plot-cdf\""), "the one point's CDF is with the plots");
    let section = between(&html, "<section class=\"point\" id=\"point-0\">", "</section>");
    assert_eq!(section.matches("<details>").count(), 2, "RFC 4898 and links, collapsed");
}
