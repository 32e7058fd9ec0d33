//! The layering of the lab and of the TCP crate, read from their sources (issue #24 item 4): the run path
//! (`run.rs`, `transport.rs`) sits above the result types and the backends, nothing below reaches back
//! into it, the lab's modules form no circle, and the TCP crate's modules form no circle (the congestion controllers are built through
//! `ControllerFactory`, so `congestion` never names `config`). docs/architecture.md § Layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's source without comments and without its unit tests (`#[cfg(test)] mod tests` at the end).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string literal ("http://") is rare in these crates; none names a module.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate-level modules `src` names (`crate::NAME`, `use crate::{NAME, ...}`), among `known`.
fn edges(src: &str, own: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end].split(',').map(|n| n.trim().split("::").next().unwrap_or("")).collect()
        } else {
            vec![rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("")]
        };
        for n in names {
            if n != own && known.contains(n) {
                out.insert(n.to_string());
            }
        }
    }
    out
}

/// Module name → the modules it names. A directory module (`congestion/`) is one node: its files together.
fn graph(src_dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(src_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "tests" {
            continue;
        }
        // `conn.rs` and `conn/`: one module.
        let text = sources.entry(name).or_default();
        if path.is_dir() {
            // Its files at any depth (`transport/rdp/backend.rs` is part of `transport`).
            let mut dirs = vec![path.clone()];
            while let Some(dir) = dirs.pop() {
                for f in std::fs::read_dir(&dir).unwrap() {
                    let f = f.unwrap().path();
                    if f.is_dir() {
                        dirs.push(f);
                    } else if f.extension().is_some_and(|e| e == "rs") {
                        *text += &code(&f);
                    }
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            *text += &code(&path);
        }
    }
    let known: BTreeSet<String> = sources.keys().cloned().collect();
    sources.iter().map(|(m, s)| (m.clone(), edges(s, m, &known))).collect()
}

/// The modules `from` reaches.
fn reach(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for n in g.get(&m).into_iter().flatten() {
            if seen.insert(n.clone()) {
                todo.push(n.clone());
            }
        }
    }
    seen
}

fn crate_src(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

#[test]
fn the_edge_reader_sees_single_and_grouped_names() {
    let known: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let e = edges("use crate::a::X;\nuse crate::{b, c::Y};\nlet z = crate::a::f();", "c", &known);
    assert_eq!(e.into_iter().collect::<Vec<_>>(), ["a", "b"]);
}

#[test]
fn nothing_below_the_run_path_names_it() {
    let g = graph(&crate_src("lab"));
    for top in ["run", "transport"] {
        assert!(g.contains_key(top), "crates/lab/src/{top}.rs exists");
    }
    // sweep runs a plan's points through crate::run: it is the one module above the run path.
    let above: BTreeSet<&str> = ["run", "transport", "sweep"].into();
    for (m, to) in &g {
        if above.contains(m.as_str()) {
            continue;
        }
        for top in ["run", "transport"] {
            assert!(!to.contains(top), "crates/lab/src/{m}.rs names crate::{top}; the run path must sit above it");
        }
    }
    // The run path goes through the seam, and the seam does not name the run path.
    assert!(g["run"].contains("transport"));
    assert!(!g["transport"].contains("run"));
}

/// A circle through `m`, if `m` reaches itself: the modules on the way, `m` first and last.
fn circle(g: &BTreeMap<String, BTreeSet<String>>, m: &str) -> Option<Vec<String>> {
    // Breadth-first from m's successors, keeping each module's predecessor, until m comes back.
    let mut before: BTreeMap<String, String> = BTreeMap::new();
    let mut todo: std::collections::VecDeque<String> = g[m].iter().cloned().collect();
    for n in &todo {
        before.insert(n.clone(), m.to_string());
    }
    while let Some(n) = todo.pop_front() {
        if n == m {
            let mut path = vec![m.to_string()];
            let mut at = before[m].clone();
            while at != m {
                path.push(at.clone());
                at = before[&at].clone();
            }
            path.push(m.to_string());
            path.reverse();
            return Some(path);
        }
        for next in g.get(&n).into_iter().flatten() {
            if !before.contains_key(next) {
                before.insert(next.clone(), n.clone());
                todo.push_back(next.clone());
            }
        }
    }
    None
}

#[test]
fn the_circle_finder_names_the_modules_on_the_way() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), ["a".to_string()].into());
    g.insert("d".into(), ["a".to_string()].into());
    assert_eq!(circle(&g, "a").unwrap(), ["a", "b", "c", "a"]);
    assert_eq!(circle(&g, "d"), None);
    g.get_mut("c").unwrap().clear();
    assert_eq!(circle(&g, "a"), None);
}

#[test]
fn the_lab_modules_form_no_circle() {
    // Every dependency among the lab's modules points one way (docs/architecture.md § Inside the lab): the
    // leaves, the scenario and its validation, the document's types, the backends, the seam, the run path,
    // the sweep. A module and its directory (`scenario.rs` with `scenario/`) are one node.
    let g = graph(&crate_src("lab"));
    for m in g.keys() {
        if let Some(path) = circle(&g, m) {
            panic!("crates/lab/src: a circle of modules: {}", path.join(" -> "));
        }
    }
}

#[test]
fn the_lab_layers_point_down() {
    let g = graph(&crate_src("lab"));
    // Leaves: what the scenario, the document and the backends stand on.
    for leaf in ["error", "columns", "stats", "bounds"] {
        assert!(g[leaf].is_empty(), "crates/lab/src/{leaf}.rs is a leaf; it names {:?}", g[leaf]);
    }
    // The transports' declarations (keys, limits, metric names) and the limits table gathered from them
    // stand on the leaves only: the scenario's validation reads both.
    let names = |m: &str| g[m].iter().map(String::as_str).collect::<Vec<_>>();
    assert_eq!(
        names("host_transports"),
        ["bounds", "columns"],
        "crates/lab/src/host_transports names more than leaves"
    );
    assert_eq!(
        names("limits"),
        ["bounds", "host_transports"],
        "crates/lab/src/limits.rs names more than its rows' sources"
    );
    // The scenario (types, parsing, validation) names neither the document nor anything that runs.
    let above_scenario =
        ["result", "run", "transport", "sweep", "sim_backend", "linux_backend", "topology", "queues", "probes"];
    for m in above_scenario {
        assert!(!g["scenario"].contains(m), "crates/lab/src/scenario.rs names crate::{m}");
    }
    assert!(!g["published"].contains("scenario"), "published.rs compares figures over JSON, below the scenario");
    // The document's types hold what the backends fill, and name none of them.
    for m in ["run", "transport", "sweep", "sim_backend", "linux_backend", "topology", "queues", "probes", "migrate"] {
        assert!(!g["result"].contains(m), "crates/lab/src/result.rs names crate::{m}");
    }
    // The backends do not name the sweep that plans their points.
    for m in ["sim_backend", "linux_backend", "topology"] {
        assert!(!g[m].contains("sweep"), "crates/lab/src/{m}.rs names crate::sweep");
    }
}

#[test]
fn the_document_types_and_the_validation_name_no_backend() {
    // The series column names live in `columns`, below them: the reader of a document, the scenario's
    // validation and the budget do not name the backends that fill the tables.
    let g = graph(&crate_src("lab"));
    for m in ["result", "scenario", "budget", "columns", "metrics", "probes", "keys", "limits"] {
        for backend in ["sim_backend", "linux_backend", "transport"] {
            assert!(!g[m].contains(backend), "crates/lab/src/{m}.rs names crate::{backend}");
        }
    }
    assert!(g["columns"].is_empty(), "columns.rs is a leaf: {:?}", g["columns"]);
}

#[test]
fn the_result_types_run_no_backend() {
    let src = code(&crate_src("lab").join("result.rs"));
    for call in ["run_point", "run_with", "run_scenario", "::run(", "linux_backend"] {
        assert!(
            !src.contains(call),
            "crates/lab/src/result.rs names {call:?}: result.rs holds the document's types only"
        );
    }
}

#[test]
fn the_tcp_modules_form_no_circle() {
    let g = graph(&crate_src("tcp"));
    assert!(g.contains_key("congestion") && g.contains_key("config"));
    assert!(
        !g["congestion"].contains("config"),
        "crates/tcp/src/congestion names crate::config: controllers are built through ControllerFactory"
    );
    for m in g.keys() {
        assert!(!reach(&g, m).contains(m), "crates/tcp/src/{m} reaches itself: {:?}", g);
    }
}
