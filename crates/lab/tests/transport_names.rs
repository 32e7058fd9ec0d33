//! A transport lives in its own files (issue #24 item 4, docs/architecture.md § How to add a transport):
//! the code of the lab, the report and the CLI names a registered transport other than TCP only in that
//! transport's files and in the few places listed below, each with why. TCP is the lab's own (every
//! host's `stack` is a TCP personality; the flows scenarios and the Linux backend run it), so it is not
//! checked. The names come from the registration, so a third transport is checked as soon as it is
//! registered.

use std::path::{Path, PathBuf};

use tcplab_lab::host_transports::REGISTERED;
use tcplab_lab::Protocol;

/// The crates whose sources are read, from the workspace root.
const CHECKED: [&str; 3] = ["crates/lab/src", "crates/report/src", "crates/cli/src"];

/// A transport's own files (NAME is its table, `test.transport`): its declarations for the scenario
/// layer, its run (and its backend, `transport/NAME/`), and its optional table in the report.
fn own(name: &str, file: &str) -> bool {
    [
        format!("crates/lab/src/host_transports/{name}.rs"),
        format!("crates/lab/src/transport/{name}.rs"),
        format!("crates/report/src/saved/{name}.rs"),
    ]
    .iter()
    .any(|f| f == file)
        || file.starts_with(&format!("crates/lab/src/transport/{name}/"))
}

/// Lines outside a transport's files that may name it: (file, what the line holds, why). Each is a
/// module declaration Rust needs beside its own files, or the one registration line.
const ALLOWED: &[(&str, &str, &str)] = &[
    ("crates/lab/src/lib.rs", "transport::NAME_TYPE,", "the registration: one line per transport"),
    ("crates/lab/src/host_transports.rs", "mod NAME;", "Rust declares a module in its parent"),
    ("crates/lab/src/transport.rs", "pub mod NAME;", "Rust declares a module in its parent"),
    ("crates/lab/src/transport.rs", "pub use NAME::NAME_TYPE;", "the transport's type at transport::NAME_TYPE"),
    ("crates/report/src/saved.rs", "mod NAME;", "its optional table of a saved result: its module"),
    (
        "crates/report/src/saved.rs",
        "const TRANSPORT_TABLES: &[(&str, TableFn)] = &[(\"NAME\", NAME::table)];",
        "its optional table (the report sits above the lab, so the lab's registration cannot name it)",
    ),
];

/// A source's code: comments, and the unit tests at the end of a file, left out.
fn code(text: &str) -> Vec<(usize, String)> {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| {
            // A trailing comment, where the `//` is outside a string literal.
            let cut = l.match_indices("//").map(|(at, _)| at).find(|&at| l[..at].matches('"').count() % 2 == 0);
            (i + 1, cut.map_or(l, |at| &l[..at]).to_string())
        })
        .collect()
}

/// Whether `line` names the transport `name` (any case), other than in a shipped scenario's file name
/// (`rdp-loopback`, `classic/rdp-eack.toml`: data, the scenarios it ships, not code about it).
fn names(line: &str, name: &str) -> bool {
    let lower = line.to_lowercase();
    lower.match_indices(name).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + name.len()..].chars().next();
        let in_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        let scenario_file = after == Some('-');
        // `rdp` inside a longer identifier counts (`RdpConfig`, `rdp_stream`); inside a word of letters
        // that merely contains it (none today) would not: a letter before it.
        !scenario_file && !in_word(before)
    })
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every line of the checked crates that names `name` outside its files and the allowed lines.
fn strays(name: &str, type_name: &str) -> Vec<String> {
    let mut files = Vec::new();
    for c in CHECKED {
        sources(&root().join(c), &mut files);
    }
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root()).unwrap().to_string_lossy().replace('\\', "/");
        if own(name, &rel) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in code(&text) {
            if !names(&line, name) {
                continue;
            }
            let allowed = ALLOWED.iter().any(|(file, holds, _)| {
                *file == rel && line.trim() == holds.replace("NAME_TYPE", type_name).replace("NAME", name)
            });
            if !allowed {
                out.push(format!("{rel}:{n}: {}", line.trim()));
            }
        }
    }
    out
}

/// The transport's type name, as `register_transports!` and `transport.rs` spell it (`Rdp`).
fn type_name(name: &str) -> String {
    let mut c = name.chars();
    c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
}

#[test]
fn no_transport_is_named_outside_its_files_and_its_registration() {
    let mut checked = 0;
    for p in Protocol::all().into_iter().filter(|&p| p != Protocol::TCP) {
        let stray = strays(p.key(), &type_name(p.key()));
        assert!(
            stray.is_empty(),
            "{} is named outside its files (crates/lab/src/host_transports/{0}.rs, transport/{0}.rs, \
             transport/{0}/, crates/report/src/saved/{0}.rs) and the registration:\n{}",
            p.key(),
            stray.join("\n")
        );
        checked += 1;
    }
    assert!(checked >= 1, "a transport besides TCP is registered (RDP), so the check checks something");
    assert_eq!(REGISTERED.len(), checked + 1);
}

#[test]
fn the_check_sees_a_stray_name() {
    // A line of code naming a transport is caught; a comment, a scenario's file name and a word that only
    // contains the letters are not.
    assert!(names("let m = Metrics::Rdp(x);", "rdp"));
    assert!(names("(\"test.request\", \"rdp_rr\")", "rdp"));
    assert!(!names("Shipped { name: \"rdp-loopback\" }", "rdp"));
    assert!(!names("let ordp = 1;", "rdp"));
    let c = code("let a = 1; // RDP's\n// rdp\nlet s = \"http://rdp\";\n");
    assert_eq!(c.len(), 2);
    assert!(!names(&c[0].1, "rdp"));
    assert!(names(&c[1].1, "rdp"), "a `//` inside a string is no comment");
}

#[test]
fn every_allowed_line_is_there() {
    // An allow-list row that no longer matches a line is removed, not kept as a blank cheque.
    for (file, holds, why) in ALLOWED {
        let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let found = Protocol::all().into_iter().filter(|&p| p != Protocol::TCP).any(|p| {
            let want = holds.replace("NAME_TYPE", &type_name(p.key())).replace("NAME", p.key());
            text.lines().any(|l| l.trim() == want)
        });
        assert!(found, "{file}: no line {holds:?} ({why})");
    }
}
