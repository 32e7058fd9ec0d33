//! The test files of the workspace and this harness (issue 22, item 18): a target with `harness = false`
//! has no `#[test]` left (libtest's attribute does nothing there: such a test would silently never run),
//! nor do the files it loads as modules, and names its tests in `tcplab_testkit::main!` (or its own `main`;
//! a module in `tcplab_testkit::tests!`); and no test file prints a skip
//! reason into captured output and passes.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn crates() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(root().join("crates")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    v.sort();
    v
}

/// The files of the `[[test]]` targets of a crate with `harness = false`, relative to the crate.
fn harnessless(manifest: &str) -> Vec<String> {
    targets(manifest).into_iter().filter(|(_, harness)| !harness).map(|(file, _)| file).collect()
}

/// The files a test target loads as modules (`#[path = "apps.rs"]`), relative to the target's directory.
fn path_modules(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.trim().strip_prefix("#[path = \"")?.strip_suffix("\"]").map(String::from)).collect()
}

#[test]
fn harnessless_targets_list_every_test_and_keep_no_test_attribute() {
    let mut seen = 0;
    for dir in crates() {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        for target in harnessless(&manifest) {
            let file = dir.join(&target);
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut files = vec![(file.clone(), text.clone())];
            for module in path_modules(&text) {
                let m = file.parent().unwrap().join(module);
                let t = std::fs::read_to_string(&m).unwrap_or_else(|e| panic!("{}: {e}", m.display()));
                assert!(t.contains("tcplab_testkit::tests!("), "{}: a module of {target} lists its tests", m.display());
                files.push((m, t));
            }
            for (file, text) in files {
                assert!(
                    !text.lines().any(|l| l.trim() == "#[test]"),
                    "{}: #[test] in a harness = false target never runs; list the function in tcplab_testkit::main!",
                    file.display()
                );
                seen += 1;
            }
            assert!(text.contains("tcplab_testkit::main!(") || text.contains("fn main("), "{target}");
        }
    }
    assert!(seen >= 5, "the harness's targets were not found ({seen})");
}

/// The file of every `[[test]]` target of a crate, relative to the crate, and whether it runs on libtest's
/// harness.
fn targets(manifest: &str) -> Vec<(String, bool)> {
    let t: toml::Table = toml::from_str(manifest).unwrap();
    t.get("test")
        .and_then(|x| x.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    let file = match x.get("path") {
                        Some(path) => path.as_str()?.to_string(),
                        None => format!("tests/{}.rs", x.get("name")?.as_str()?),
                    };
                    Some((file, x.get("harness").and_then(|h| h.as_bool()) != Some(false)))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// With `autotests = false` cargo builds only the listed targets: a file in `tests/` that is neither a
/// target nor a `#[path]` module of one would never be compiled, its tests never run.
#[test]
fn every_test_file_is_a_target_or_a_module_of_one() {
    let mut unlisted = Vec::new();
    let mut checked = 0;
    for dir in crates() {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let t: toml::Table = toml::from_str(&manifest).unwrap();
        let autotests = t.get("package").and_then(|p| p.get("autotests")).and_then(|a| a.as_bool()) != Some(false);
        if autotests {
            continue;
        }
        let mut listed: Vec<PathBuf> = Vec::new();
        for (target, _) in targets(&manifest) {
            let file = dir.join(&target);
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            listed.extend(path_modules(&text).into_iter().map(|m| file.parent().unwrap().join(m)));
            listed.push(file);
        }
        for e in std::fs::read_dir(dir.join("tests")).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                checked += 1;
                if !listed.contains(&p) {
                    unlisted.push(p.display().to_string());
                }
            }
        }
    }
    assert!(checked >= 50, "the crates' test files were not found ({checked})");
    assert!(unlisted.is_empty(), "{unlisted:?}: not a [[test]] target nor a #[path] module of one: never built");
}

#[test]
fn no_test_passes_silently_when_it_cannot_run() {
    let mut found = Vec::new();
    for dir in crates() {
        let tests = dir.join("tests");
        let mut stack = vec![tests];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else { continue };
            for e in entries {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    if text.contains("eprintln!(\"skipping") || text.contains("eprintln!(\"skipped") {
                        let rel = p.strip_prefix(root()).unwrap_or(&p).to_string_lossy().replace("crates/../", "");
                        found.push(rel.trim_start_matches("../").to_string());
                    }
                }
            }
        }
    }
    let rel: Vec<String> =
        found.iter().map(|f| f.split("crates/").last().map(|t| format!("crates/{t}")).unwrap_or_default()).collect();
    assert!(
        rel.is_empty(),
        "{rel:?} print a skip reason and pass: use tcplab_testkit (docs/testing.md) so that the skip shows"
    );
}
