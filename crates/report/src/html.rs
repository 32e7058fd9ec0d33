//! `--report FILE.html`: one self-contained page of a result (docs/outputs.md): no scripts, no network,
//! the plots inline as SVG.

use serde_json::Value;
use tcplab_lab::published::point_value;

use crate::names;

/// Where the page came from, besides what the result itself says (version, seed, backend).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// The command that wrote the page, as typed (`tcplab run … --report r.html`).
    pub command_line: Vec<String>,
    /// The result file rendered, for `tcplab report RESULT.json`; `None` for a run.
    pub result_file: Option<String>,
}

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A shell word, quoted when it needs to be, for showing a command line.
fn shell_word(w: &str) -> String {
    if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The scenario as run, as TOML (the form scenario files have); JSON if it has no TOML form.
pub fn scenario_text(doc: &Value) -> (&'static str, String) {
    match toml::Value::try_from(&doc["scenario"]).ok().and_then(|t| toml::to_string_pretty(&t).ok()) {
        Some(t) => ("TOML", t),
        None => ("JSON", serde_json::to_string_pretty(&doc["scenario"]).unwrap_or_default()),
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "\u{2013}".into(),
        Value::String(s) => esc(s),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(f)) if f.fract() != 0.0 => format!("{f:.3}").trim_end_matches('0').to_string(),
            _ => n.to_string(),
        },
        other => esc(&other.to_string()),
    }
}

/// The RFC 4898 variables of every connection end of a point: a row per variable, a column per end.
fn estats_table(p: &Value) -> String {
    let conns = p["connections"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut vars: Vec<&str> = Vec::new();
    for c in conns {
        for k in c["estats"].as_object().into_iter().flat_map(|m| m.keys()) {
            if !vars.contains(&k.as_str()) {
                vars.push(k);
            }
        }
    }
    let mut out = String::from("<table class=\"num\"><thead><tr><th>variable</th>");
    for (i, c) in conns.iter().enumerate() {
        out += &format!(
            "<th>#{i} {}<br><small>{} {}</small></th>",
            esc(c["side"].as_str().unwrap_or("")),
            esc(c["protocol"].as_str().unwrap_or("")),
            esc(c["state"].as_str().unwrap_or(""))
        );
    }
    out += "</tr></thead><tbody>";
    for v in vars {
        out += &format!("<tr><th>{}</th>", esc(v));
        for c in conns {
            out += &format!("<td>{}</td>", cell(&c["estats"][v]));
        }
        out += "</tr>";
    }
    out + "</tbody></table>"
}

/// Link and NIC counters of a point: a row per queue, a column per counter.
fn links_table(p: &Value) -> String {
    let rows = link_rows(p);
    let mut cols: Vec<&str> = Vec::new();
    for (_, l) in &rows {
        for k in l.as_object().into_iter().flat_map(|m| m.keys()) {
            if !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    let mut out = String::from("<table class=\"num\"><thead><tr><th></th>");
    for c in &cols {
        out += &format!("<th>{}</th>", esc(c));
    }
    out += "</tr></thead><tbody>";
    for (name, l) in &rows {
        out += &format!("<tr><th>{}</th>", esc(name));
        for c in &cols {
            out += &format!("<td>{}</td>", l.get(*c).map(cell).unwrap_or_default());
        }
        out += "</tr>";
    }
    out + "</tbody></table>"
}

/// The rows of the links table: every link direction (`links.directions` of `tcplab.result/2`, named with
/// its ends; `up` and `down` of a /1 document), then the NICs and IP counters. The queue series is
/// plotted, not tabulated.
fn link_rows(p: &Value) -> Vec<(String, &Value)> {
    let Some(links) = p["links"].as_object() else { return Vec::new() };
    let dirs = links.get("directions").and_then(Value::as_array);
    let mut rows: Vec<(String, &Value)> = Vec::new();
    for d in dirs.into_iter().flatten() {
        let name = format!(
            "{} ({} \u{2192} {})",
            d["direction"].as_str().unwrap_or(""),
            d["from"].as_str().unwrap_or(""),
            d["to"].as_str().unwrap_or("")
        );
        rows.push((name, &d["counters"]));
    }
    for (name, l) in links {
        let skip = matches!(name.as_str(), "directions" | "queue_series")
            || (dirs.is_some() && matches!(name.as_str(), "up" | "down"));
        if !skip {
            rows.push((name.clone(), l));
        }
    }
    rows
}

const STYLE: &str = "body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#222;line-height:1.4}h1{margin-bottom:.2em}h2{border-bottom:2px solid #1f77b4;\
padding-bottom:.2em;margin-top:2em}pre{background:#f5f7fa;border:1px solid #dde3ea;padding:1em;overflow-x:auto;\
font-size:13px}figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #e3e3e3}\
figcaption{color:#555;font-size:14px}table{border-collapse:collapse;font-size:13px;margin:1em 0}\
th,td{border:1px solid #dde3ea;padding:3px 8px}thead th{background:#eef3f8}tbody th{text-align:left;\
font-weight:normal;background:#fafbfc}table.num td{text-align:right;font-variant-numeric:tabular-nums}\
dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1.5em}dt{font-weight:bold}dd{margin:0}\
.notes{color:#8a5a00}details{margin:.4em 0}details summary{cursor:pointer;color:#1f77b4}\
nav.toc{background:#f5f7fa;border:1px solid #dde3ea;padding:.5em 1.5em;font-size:14px}\
nav.toc ol{margin:.3em 0;padding-left:1.5em}nav.toc ol ol{columns:2;font-size:13px}\
section.point{border-top:1px solid #dde3ea;margin-top:1em}section.point h3{margin-bottom:.3em}\
a.top{font-size:12px;color:#888}div.wide{overflow-x:auto}table.summary thead th{vertical-align:bottom}";

/// The metrics a point's summary row shows: the test kind's main ones, then the metrics the scenario's
/// own `[[plot]]` tables draw (at most [`SUMMARY_METRICS`] in all), each only if some point has it.
fn summary_metrics(doc: &Value) -> Vec<String> {
    // The full name, `TRANSPORT_WORKLOAD`: a transport's own metrics name their main ones (`OwnMetrics::headline`),
    // a workload's are the workload's whichever transport carries it.
    let (transport, workload) =
        doc["scenario"]["test"]["kind"].as_str().unwrap_or("").split_once('_').unwrap_or_default();
    let own = tcplab_lab::Protocol::parse(transport)
        .and_then(|p| p.registration().own_metrics.iter().find(|o| o.workload == workload));
    let main: &[&str] = match (own, workload) {
        (Some(o), _) => o.headline,
        (None, "rr" | "crr") => &["transactions_per_s", "latency_us.mean", "latency_us.p99", "retransmissions"],
        (None, "msg") => &["messages_per_s", "time_per_message_us.mean", "time_per_message_us.p99", "retransmissions"],
        (None, _) => &["throughput_bps", "retransmissions"],
    };
    let plotted = doc["scenario"]["plot"].as_array().into_iter().flatten().filter_map(|p| p["y"].as_str());
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for m in main.iter().copied().chain(plotted) {
        if out.len() < SUMMARY_METRICS
            && !out.iter().any(|o| o == m)
            && points.iter().any(|p| point_value(p, m).is_some())
        {
            out.push(m.to_string());
        }
    }
    out
}

/// Most metric columns in the summary of the points.
const SUMMARY_METRICS: usize = 10;

/// The decimals a column of figures is shown with: none when every figure is whole, else enough for
/// four significant digits of the largest.
fn decimals(values: &[f64]) -> usize {
    let finite = || values.iter().filter(|v| v.is_finite());
    if finite().all(|v| v.fract() == 0.0) {
        return 0;
    }
    match finite().map(|v| v.abs()).fold(0.0, f64::max) {
        a if a >= 1000.0 => 0,
        a if a >= 100.0 => 1,
        a if a >= 10.0 => 2,
        a if a >= 1.0 => 3,
        _ => 4,
    }
}

/// The summary of the points: a row per point, linking to its section, with the swept values and the
/// main metrics in the units the plots use.
fn summary_table(doc: &Value) -> String {
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let keys: Vec<String> =
        points.first().and_then(|p| p["params"].as_object()).map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let metrics: Vec<(String, names::Shown)> =
        summary_metrics(doc).into_iter().map(|m| (m.clone(), crate::plot::shown_metric(doc, &m))).collect();
    let mut h = String::from("<div class=\"wide\"><table class=\"num summary\"><thead><tr><th>point</th>");
    for k in &keys {
        h += &format!("<th title=\"{}\">{}</th>", esc(k), esc(&names::key_label(k)));
    }
    for (m, shown) in &metrics {
        h += &format!("<th title=\"{}\">{}</th>", esc(m), esc(&shown.label()));
    }
    h += "</tr></thead><tbody>";
    let columns: Vec<Vec<Option<f64>>> = metrics
        .iter()
        .map(|(m, shown)| points.iter().map(|p| point_value(p, m).map(|v| v * shown.scale)).collect())
        .collect();
    let places: Vec<usize> =
        columns.iter().map(|c| decimals(&c.iter().flatten().copied().collect::<Vec<_>>())).collect();
    for (i, p) in points.iter().enumerate() {
        h += &format!("<tr><th><a href=\"#point-{i}\">p{i}</a></th>");
        for k in &keys {
            h += &format!("<td>{}</td>", esc(&names::value_text(&p["params"][k.as_str()])));
        }
        for (column, &d) in columns.iter().zip(&places) {
            h += &match column[i] {
                Some(v) if v.is_finite() => format!("<td>{v:.d$}</td>"),
                _ => "<td>\u{2013}</td>".to_string(),
            };
        }
        h += "</tr>";
    }
    h + "</tbody></table></div>\n"
}

/// A plot as a figure with its anchor.
fn figure_html(p: &crate::plot::Plot) -> String {
    format!("<figure id=\"plot-{}\" title=\"{}\">{}</figure>\n", esc(&p.name), esc(&p.title), p.svg)
}

/// The page: description; a table of contents; the netperf-style table; with several points, a summary
/// row per point linking to its section; the plots across points, and what was not drawn and why; per
/// point, its own plots and the RFC 4898 counters of every connection end and the link counters, each
/// collapsed (`<details>`); the scenario as run, and the provenance. One file with no scripts and nothing
/// fetched. `table` is the netperf-style table ([`crate::table`]); the plots are [`crate::plot::plots`]'.
pub fn page(doc: &Value, table: &str, prov: &Provenance) -> String {
    let s = &doc["scenario"];
    let name = s["name"].as_str().unwrap_or("tcplab result");
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    let several = points.len() > 1;
    let (plots, notes) = crate::plot::plots(doc);
    let (across, own): (Vec<_>, Vec<_>) = plots.iter().partition(|p| p.point.is_none() || !several);
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>tcplab: {}</title><style>{STYLE}</style></head><body>\n",
        esc(name)
    );
    h += &format!("<h1 id=\"top\">{}</h1>\n", esc(name));
    if let Some(d) = s["description"].as_str() {
        h += &format!("<p>{}</p>\n", esc(d));
    }
    // Contents.
    h += "<nav class=\"toc\" id=\"contents\"><strong>Contents</strong><ol>\n<li><a href=\"#result\">Result</a></li>\n";
    if several {
        h += &format!("<li><a href=\"#summary\">Summary of the {} points</a></li>\n", points.len());
    }
    h += &format!("<li><a href=\"#plots\">Plots</a> ({})", across.len());
    if !across.is_empty() {
        h += "<ol>";
        for p in &across {
            h += &format!("<li><a href=\"#plot-{}\">{}</a></li>", esc(&p.name), esc(&p.title));
        }
        h += "</ol>";
    }
    h += "</li>\n<li><a href=\"#points\">Connections, links and each point's plots</a>";
    if several {
        h += "<ol>";
        for (i, p) in points.iter().enumerate() {
            h += &format!("<li><a href=\"#point-{i}\">p{i}: {}</a></li>", esc(&names::params_text(&p["params"])));
        }
        h += "</ol>";
    }
    h += "</li>\n<li><a href=\"#scenario\">Scenario as run</a></li>\n<li><a href=\"#provenance\">Provenance</a></li>\n";
    h += "</ol></nav>\n";
    h += &format!("<h2 id=\"result\">Result</h2>\n<pre class=\"table\">{}</pre>\n", esc(table));
    if several {
        h += "<h2 id=\"summary\">Summary of the points</h2>\n";
        h += "<p>Each row links to the point's section, with its connections' counters and its own plots.</p>\n";
        h += &summary_table(doc);
    }
    h += "<h2 id=\"plots\">Plots</h2>\n";
    for p in &across {
        h += &figure_html(p);
    }
    if across.is_empty() {
        h += "<p>No plots across the points.</p>\n";
    }
    if !own.is_empty() {
        h += &format!(
            "<p>{} more plots of single points (time series, CDFs) are in each point's section.</p>\n",
            own.len()
        );
    }
    if !notes.is_empty() {
        h += "<ul class=\"notes\">";
        for n in &notes {
            h += &format!("<li>{}</li>", esc(n));
        }
        h += "</ul>\n";
    }
    h += "<h2 id=\"points\">Connections: RFC 4898 statistics at the end of the run, links and NICs</h2>\n";
    for (i, p) in points.iter().enumerate() {
        h += &format!("<section class=\"point\" id=\"point-{i}\">\n");
        if several {
            h += &format!(
                "<h3>p{i}: {} <a class=\"top\" href=\"#contents\">contents</a></h3>\n<p><code>{}</code></p>\n",
                esc(&names::params_text(&p["params"])),
                esc(&p["params"].to_string())
            );
        }
        let mine: Vec<_> = own.iter().filter(|q| q.point == Some(i)).collect();
        if !mine.is_empty() {
            h += &format!("<details><summary>Plots of this point ({})</summary>\n", mine.len());
            for q in mine {
                h += &figure_html(q);
            }
            h += "</details>\n";
        }
        let (vars, ends) = estats_size(p);
        h += &format!(
            "<details><summary>RFC 4898 statistics: {vars} variables of {ends} connection end{}</summary>\n",
            if ends == 1 { "" } else { "s" }
        );
        h += &estats_table(p);
        h += "\n</details>\n";
        let links = link_rows(p).len();
        h += &format!(
            "<details><summary>Links and NICs: {links} queue{}</summary>\n",
            if links == 1 { "" } else { "s" }
        );
        h += &links_table(p);
        h += "\n</details>\n</section>\n";
    }
    let (form, text) = scenario_text(doc);
    h += &format!(
        "<h2 id=\"scenario\">Scenario as run ({form})</h2>\n<details><summary>{} lines</summary>\n\
         <pre class=\"scenario\">{}</pre>\n</details>\n",
        text.lines().count(),
        esc(&text)
    );
    h += "<section id=\"provenance\"><h2>Provenance</h2>\n<dl>";
    let mut row = |k: &str, v: String| h += &format!("<dt>{k}</dt><dd>{v}</dd>");
    row("tcplab", esc(&doc["tcplab"].as_str().map_or_else(|| doc["tcplab"].to_string(), String::from)));
    row("schema", esc(doc["schema"].as_str().unwrap_or("")));
    row("backend", esc(doc["backend"].as_str().unwrap_or("")));
    row("seed", cell(&doc["seed"]));
    let cmd: Vec<String> = prov.command_line.iter().map(|w| shell_word(w)).collect();
    match &prov.result_file {
        Some(f) => {
            row("rendered from", format!("<code>{}</code>", esc(f)));
            row("rendered by", format!("<code>{}</code>", esc(&cmd.join(" "))));
        }
        None => row("command line", format!("<code>{}</code>", esc(&cmd.join(" ")))),
    }
    row("rendered by tcplab", esc(env!("CARGO_PKG_VERSION")));
    h += "</dl></section>\n</body></html>\n";
    h
}

/// How many RFC 4898 variables and connection ends a point's statistics table has.
fn estats_size(p: &Value) -> (usize, usize) {
    let conns = p["connections"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut vars: Vec<&str> = Vec::new();
    for k in conns.iter().flat_map(|c| c["estats"].as_object().into_iter().flat_map(|m| m.keys())) {
        if !vars.contains(&k.as_str()) {
            vars.push(k);
        }
    }
    (vars.len(), conns.len())
}
