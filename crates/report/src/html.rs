//! `--report FILE.html`: one self-contained page of a result (docs/outputs.md): no scripts, no network,
//! the plots inline as SVG.

use serde_json::Value;

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
    let Some(links) = p["links"].as_object() else { return String::new() };
    let mut cols: Vec<&str> = Vec::new();
    for l in links.values() {
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
    for (name, l) in links {
        out += &format!("<tr><th>{}</th>", esc(name));
        for c in &cols {
            out += &format!("<td>{}</td>", l.get(*c).map(cell).unwrap_or_default());
        }
        out += "</tr>";
    }
    out + "</tbody></table>"
}

const STYLE: &str = "body{font-family:system-ui,'DejaVu Sans',sans-serif;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#222;line-height:1.4}h1{margin-bottom:.2em}h2{border-bottom:2px solid #1f77b4;\
padding-bottom:.2em;margin-top:2em}pre{background:#f5f7fa;border:1px solid #dde3ea;padding:1em;overflow-x:auto;\
font-size:13px}figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;border:1px solid #e3e3e3}\
figcaption{color:#555;font-size:14px}table{border-collapse:collapse;font-size:13px;margin:1em 0}\
th,td{border:1px solid #dde3ea;padding:3px 8px}thead th{background:#eef3f8}tbody th{text-align:left;\
font-weight:normal;background:#fafbfc}table.num td{text-align:right;font-variant-numeric:tabular-nums}\
dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1.5em}dt{font-weight:bold}dd{margin:0}\
.notes{color:#8a5a00}details summary{cursor:pointer;color:#1f77b4}";

/// The page: description, the table, the plots, per point the RFC 4898 counters of every connection
/// end and the link counters, the scenario as run, and the provenance. `table` is the netperf-style
/// table ([`crate::table`]); the plots are [`crate::plot::plots`]'.
pub fn page(doc: &Value, table: &str, prov: &Provenance) -> String {
    let s = &doc["scenario"];
    let name = s["name"].as_str().unwrap_or("tcplab result");
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>tcplab: {}</title><style>{STYLE}</style></head><body>\n",
        esc(name)
    );
    h += &format!("<h1>{}</h1>\n", esc(name));
    if let Some(d) = s["description"].as_str() {
        h += &format!("<p>{}</p>\n", esc(d));
    }
    h += &format!("<h2>Result</h2>\n<pre class=\"table\">{}</pre>\n", esc(table));
    let (plots, notes) = crate::plot::plots(doc);
    h += "<h2>Plots</h2>\n";
    for p in &plots {
        h += &format!("<figure id=\"plot-{}\" title=\"{}\">{}</figure>\n", esc(&p.name), esc(&p.title), p.svg);
    }
    if plots.is_empty() {
        h += "<p>No plots.</p>\n";
    }
    if !notes.is_empty() {
        h += "<ul class=\"notes\">";
        for n in &notes {
            h += &format!("<li>{}</li>", esc(n));
        }
        h += "</ul>\n";
    }
    let points = doc["points"].as_array().map(Vec::as_slice).unwrap_or_default();
    h += "<h2>Connections: RFC 4898 statistics at the end of the run</h2>\n";
    for (i, p) in points.iter().enumerate() {
        if points.len() > 1 {
            h += &format!("<h3>Point {i}: <code>{}</code></h3>\n", esc(&p["params"].to_string()));
        }
        h += &estats_table(p);
        h += "\n<h3>Links and NICs</h3>\n";
        h += &links_table(p);
        h += "\n";
    }
    let (form, text) = scenario_text(doc);
    h += &format!("<h2>Scenario as run ({form})</h2>\n<pre class=\"scenario\">{}</pre>\n", esc(&text));
    h += "<h2>Provenance</h2>\n<dl>";
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
    h += "</dl>\n</body></html>\n";
    h
}
