//! The key registry (crates/lab/src/keys.rs) against the parser and the docs (issue 22, item 15): every key
//! the parser accepts is in the registry and every registry key is accepted by the parser (asked table by
//! table with a key no table has: the error lists what the table accepts); every key of a resolved
//! scenario is in the registry; the key tables of docs/scenario.md (and docs/rdp.md for the RDP knobs)
//! document every registry key and nothing else.
//! A field added to the scenario model without a registry entry, or without its row in the docs, fails here.

use std::collections::BTreeSet;

use tcplab_lab::keys::{find, registry, DefaultValue, Key};
use tcplab_lab::{load, Source, SHIPPED};

const BASE: &str = "name = \"keys\"\n[path.up]\nrate = \"10mbit\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n";

fn rdp_base() -> String {
    BASE.replace("tcp_stream", "rdp_stream")
}

/// The backticked names after "accepted" in an unknown-key error (`accepted: one of `a`, `b``).
fn accepted_names(message: &str) -> Vec<String> {
    let rest = &message[message.find("accepted").unwrap_or_else(|| panic!("no accepted list in {message:?}"))..];
    rest.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// What the parser accepts in the table at `table` (a concrete path): it is given `no_such_key`.
fn parser_keys(text: &str, table: &str, set: &str) -> Vec<String> {
    let e = load(&Source { name: "probe.toml", text }, &[set.to_string()]).expect_err(set);
    assert!(e.message.contains("unknown key"), "{table}: {e}");
    accepted_names(&e.message)
}

/// The registry's keys directly under `parent` (a registry path), by name.
fn registry_keys(parent: &str) -> BTreeSet<String> {
    let names = |k: &Key| -> Vec<String> {
        let n = k.name().replace("[]", "");
        match n.strip_prefix('{').and_then(|n| n.strip_suffix('}')) {
            Some(alts) => alts.split(',').map(str::to_string).collect(),
            None => vec![n],
        }
    };
    registry().iter().filter(|k| k.parent() == parent).flat_map(names).collect()
}

#[test]
fn the_registry_has_exactly_the_keys_the_parser_accepts() {
    let rdp = rdp_base();
    // (registry table, scenario text, the --set that adds an unknown key to it)
    let tables: Vec<(&str, &str, String)> = vec![
        ("", BASE, "no_such_key=1".into()),
        ("path", BASE, "path.no_such_key=1".into()),
        ("path.{up,down}", BASE, "path.up.no_such_key=1".into()),
        ("path.{up,down}", BASE, "path.down.no_such_key=1".into()),
        ("{client,server}", BASE, "client.no_such_key=1".into()),
        ("{client,server}.tcp", BASE, "server.tcp.no_such_key=1".into()),
        ("{client,server}.tcp.cubic", BASE, "client.tcp.cubic.no_such_key=1".into()),
        ("{client,server}.tcp.rto_params", BASE, "client.tcp.rto_params.no_such_key=1".into()),
        ("{client,server}.rdp", &rdp, "client.rdp.no_such_key=1".into()),
        ("{client,server}.rdp.rto_params", &rdp, "client.rdp.rto_params.no_such_key=1".into()),
        ("{client,server}.host", BASE, "client.host.no_such_key=1".into()),
        ("{client,server}.host.cpu", BASE, "client.host.cpu={no_such_key=1}".into()),
        ("test", BASE, "test.no_such_key=1".into()),
    ];
    for (parent, text, set) in &tables {
        let mut parser: BTreeSet<String> = parser_keys(text, parent, set).into_iter().collect();
        if parent.is_empty() {
            // `[sweep]` and `[repeat]` say how the scenario is run; crate::sweep reads them before `load`.
            parser.extend(["sweep".to_string(), "repeat".to_string()]);
        }
        assert_eq!(registry_keys(parent), parser, "{parent}: the registry's keys against the parser's ({set})");
    }
    // A loss model's parameters depend on the model (the tag, `model`, is the same for all).
    let mut loss = BTreeSet::from(["model".to_string()]);
    for m in ["{model=\"bernoulli\",p=0.1", "{model=\"scripted\",drop=[1]", "{model=\"gilbert_elliott\",p=0.1,r=0.5"] {
        loss.extend(parser_keys(BASE, "loss", &format!("path.up.loss={m},no_such_key=1}}")));
    }
    assert_eq!(registry_keys("path.{up,down}.loss"), loss);
    // `[repeat]`, `[[plot]]`, `[[published]]` (arrays of tables: written into the file).
    let e = tcplab_lab::sweep::plan(
        &Source { name: "probe.toml", text: &format!("{BASE}[repeat]\nno_such_key = 1\n") },
        &[],
        &[],
        &tcplab_lab::sweep::RepeatFlags::default(),
    )
    .expect_err("repeat");
    assert_eq!(registry_keys("repeat"), accepted_names(&e.message).into_iter().collect());
    let plot = format!("{BASE}[[plot]]\nno_such_key = 1\n");
    let e = load(&Source { name: "probe.toml", text: &plot }, &[]).expect_err("plot");
    assert_eq!(registry_keys("plot[]"), accepted_names(&e.message).into_iter().collect());
    let reference = format!("{BASE}[[plot]]\nreference = {{ value = 1.0, label = \"l\", no_such_key = 1 }}\n");
    let e = load(&Source { name: "probe.toml", text: &reference }, &[]).expect_err("reference");
    assert_eq!(registry_keys("plot[].reference"), accepted_names(&e.message).into_iter().collect());
    let published = format!("{BASE}[[published]]\nno_such_key = 1\n");
    let e = load(&Source { name: "probe.toml", text: &published }, &[]).expect_err("published");
    assert_eq!(registry_keys("published[]"), accepted_names(&e.message).into_iter().collect());
    // `test.series` is a duration or `{ interval, vars }` (an untagged enum, whose error lists nothing).
    assert_eq!(registry_keys("test.series"), BTreeSet::from(["interval".to_string(), "vars".to_string()]));
    let ok = "test.series={interval=\"10ms\",vars=[\"CurCwnd\"]}".to_string();
    load(&Source { name: "probe.toml", text: BASE }, &[ok]).unwrap();
}

/// Every leaf of every shipped scenario, resolved (so with every default filled in), and of a scenario
/// that sets the optional keys, is a registry key: what a run echoes in its result is explained.
#[test]
fn every_key_of_a_resolved_scenario_is_in_the_registry() {
    fn walk(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match v {
            // `where` is keyed by scenario paths, not a table of the model.
            serde_json::Value::Object(m) if !m.is_empty() && !path.ends_with(".where") => {
                for (k, x) in m {
                    walk(x, &if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out)
                }
            }
            serde_json::Value::Array(a) if a.iter().all(|x| x.is_object()) && !a.is_empty() => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), out)
                }
            }
            _ => out.push(path.to_string()),
        }
    }
    let full = format!(
        "{BASE}[client.host]\nnic_rate = \"1gbit\"\ntxqueuelen = 10\ncpu = {{ per_call = \"1us\" }}\n\
         [path.down]\nrate = \"1mbit\"\nmtu = \"576B\"\nloss = {{ model = \"bernoulli\", p = 0.1, packets = \"data\" }}\n"
    )
    .replace("duration = \"1s\"\n", "duration = \"1s\"\nstart_spread = \"1ms\"\nnodelay = true\nseries = { interval = \"10ms\", vars = [\"CurCwnd\"] }\n");
    let mut texts: Vec<(String, String)> = SHIPPED.iter().map(|s| (s.name.to_string(), s.text.to_string())).collect();
    texts.push(("full".into(), full));
    for (name, text) in texts {
        let s = load(&Source { name: &name, text: &text }, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut leaves = Vec::new();
        walk(&serde_json::to_value(&s).unwrap(), "", &mut leaves);
        for leaf in leaves {
            // The resolved test keeps `series_vars` beside `series`: the file's `test.series.vars`.
            let leaf = leaf.replace("test.series_vars", "test.series.vars");
            assert!(find(&leaf).is_some(), "{name}: {leaf} is in the scenario model but not in the registry");
        }
    }
}

#[test]
fn every_key_has_a_doc_a_source_and_a_default_of_its_type() {
    for k in registry() {
        assert!(!k.doc.trim().is_empty(), "{}: no documentation", k.path);
        assert!(k.source.contains("crates/"), "{}: source {:?}", k.path, k.source);
        if let DefaultValue::Value(v) = &k.default {
            // A default as the file writes it must be accepted back.
            if k.is_table() || k.path.contains("[]") || k.path.starts_with("repeat") || k.path.contains(".loss.") {
                continue;
            }
            let path = k.concrete()[0].clone();
            let kind = match path.as_str() {
                _ if path.contains(".rdp.") => "rdp_stream",
                "test.request" | "test.response" | "test.burst" => "tcp_rr",
                "test.messages" | "test.interval" => "tcp_msg",
                _ => "tcp_stream",
            };
            let text = BASE.replace("tcp_stream", kind);
            let value = match k.ty {
                "bool" | "integer" | "float" => v.clone(),
                _ => format!("{v:?}"),
            };
            let value = if path.contains(".host.txqueuelen") { "1000".into() } else { value };
            let mut sets = vec![format!("{path}={value}")];
            if path.contains(".host.txqueuelen") {
                sets.push(path.replace("txqueuelen", "nic_rate=\"1gbit\""));
            }
            load(&Source { name: "probe.toml", text: &text }, &sets)
                .unwrap_or_else(|e| panic!("{}: default: {e}", k.path));
        }
    }
}

/// A markdown section: its heading and its text up to the next heading.
struct Section {
    heading: String,
    text: String,
}

fn sections(md: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_code = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with('#') {
            out.push(Section { heading: line.trim_start_matches('#').trim().to_string(), text: String::new() });
        } else if let Some(s) = out.last_mut() {
            s.text.push_str(line);
            s.text.push('\n');
        }
    }
    out
}

/// The registry prefix of the keys a section's table rows name.
fn prefix_of(heading: &str) -> Option<&'static str> {
    [
        ("Top level", ""),
        ("`[path.up]` and `[path.down]`", "path.{up,down}."),
        ("`[client]` and `[server]`", "{client,server}."),
        ("TCP knobs", "{client,server}.tcp."),
        ("NIC (`host", "{client,server}.host."),
        ("`[test]`", "test."),
        ("Sweeps and repetitions", ""),
        ("RDP knobs", "{client,server}.rdp."),
        ("Table", "table."),
    ]
    .iter()
    .find(|(h, _)| heading.starts_with(h))
    .map(|(_, p)| *p)
}

/// The registry path a row's key names under `prefix`.
fn row_path(prefix: &str, name: &str) -> String {
    match (prefix, name) {
        ("", "client" | "server") => "{client,server}".into(),
        ("", "plot" | "published" | "flow" | "host" | "link") => format!("{name}[]"),
        ("", n) if n.starts_with("sweep.") => "sweep".into(),
        (p, n) => format!("{p}{n}"),
    }
}

/// A markdown table row for `k`, as docs/scenario.md's key tables have them (printed by a failure, to
/// paste).
fn row(k: &Key) -> String {
    let ty = if k.unit.is_empty() { k.ty.to_string() } else { format!("{} ({})", k.ty, k.unit) };
    // The tables give the `rfc` personality's default and leave out what the unit's type says.
    let accepted = tcplab_lab::keys::accepted(k).unwrap_or_default();
    let accepted: Vec<&str> = accepted.split("; ").filter(|c| !c.starts_with("a number with a unit")).collect();
    let default = match &k.default {
        DefaultValue::PerStack(v) => v[0].1.clone(),
        d => d.line(),
    };
    format!("| `{}` | {ty} | `{default}` | {} | {} |", k.name(), accepted.join("; "), k.doc)
}

#[test]
fn the_docs_tables_document_every_key_and_no_other() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let md = std::fs::read_to_string(root.join("docs/scenario.md")).unwrap();
    let rdp_md = std::fs::read_to_string(root.join("docs/rdp.md")).unwrap();
    let secs: Vec<Section> = sections(&md).into_iter().chain(sections(&rdp_md)).collect();
    // Rows: (registry path, the section it is in).
    let mut rows: Vec<(String, usize)> = Vec::new();
    for (i, s) in secs.iter().enumerate() {
        let Some(prefix) = prefix_of(&s.heading) else { continue };
        // Rows of the tables whose first column is `key` (not the loss models', the ACK policies' ...).
        let mut key_table = false;
        for line in s.text.lines() {
            key_table = line.starts_with("| key |") || (key_table && line.starts_with('|'));
            if !key_table || !line.starts_with("| `") {
                continue;
            }
            let cell = line.split('|').nth(1).unwrap_or("");
            for name in cell.split('`').skip(1).step_by(2) {
                rows.push((row_path(prefix, name), i));
            }
        }
    }
    // `TCPLAB_KEY_ROWS=PREFIX cargo test -p tcplab-lab --test scenarios keys::docs -- --nocapture` prints the rows of
    // the keys under PREFIX, for whoever writes a new table.
    if let Ok(prefix) = std::env::var("TCPLAB_KEY_ROWS") {
        for k in registry().iter().filter(|k| k.path.starts_with(&prefix)) {
            println!("{}", row(k));
        }
    }
    let mut wrong = Vec::new();
    for (path, _) in &rows {
        if !registry().iter().any(|k| &k.path == path) {
            wrong.push(format!("docs/scenario.md or docs/rdp.md documents {path}, which is no scenario key"));
        }
    }
    let mentioned = |text: &str, name: &str| {
        text.contains(&format!("`{name}`"))
            || text.contains(&format!("`{name} "))
            || text.contains(&format!("\n{name} ="))
    };
    // A key is documented by its row, or, in an inline table (`cubic`, `loss`, `cpu`, `[[plot]]`,
    // `reference` ...), by its name in the text about a table that is documented itself.
    fn documented(path: &str, rows: &[(String, usize)], mentioned: &dyn Fn(&str) -> bool) -> bool {
        if rows.iter().any(|(p, _)| p == path) {
            return true;
        }
        let Some((parent, name)) = path.rsplit_once('.') else { return false };
        mentioned(name.trim_end_matches("[]")) && documented(parent, rows, mentioned)
    }
    let mut missing = Vec::new();
    for k in registry() {
        if !documented(&k.path, &rows, &|name| mentioned(&md, name)) {
            missing.push(row(k));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(missing.is_empty(), "keys without a row in docs/scenario.md (rows to paste):\n{}", missing.join("\n"));
}
