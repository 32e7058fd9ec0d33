//! Extracts the doc comment of every field of the structs a scenario file is made of (its tables, in this
//! crate and the crates that own them) into `field_docs.rs`, so that the key registry (src/keys.rs, which
//! `tcplab explain` prints) says what the API docs say: one source for each key's documentation.
//! `TcpConfig` and `RdpConfig` have their own extraction (`KNOBS`, crates/tcp/build.rs, crates/rdp/build.rs).

use std::fmt::Write;

/// (file relative to this crate, struct): the structs whose fields are scenario keys.
const STRUCTS: &[(&str, &str)] = &[
    ("src/scenario.rs", "Nic"),
    ("src/scenario.rs", "Cpu"),
    ("src/scenario.rs", "Test"),
    ("src/scenario.rs", "RawTest"),
    ("src/scenario.rs", "Dumbbell"),
    ("src/scenario.rs", "Flow"),
    ("src/scenario.rs", "NetHost"),
    ("src/scenario.rs", "NetLink"),
    ("src/scenario.rs", "PlotSpec"),
    ("src/scenario.rs", "PlotReference"),
    ("src/result.rs", "Repeat"),
    ("src/published.rs", "PublishedSeries"),
    ("../link/src/config.rs", "LinkConfig"),
    ("../tcp/src/congestion/cubic.rs", "CubicConfig"),
    ("../rtt/src/lib.rs", "RtoParams"),
];

fn main() {
    let mut out = String::from(
        "/// Every field of the scenario's structs: (struct, key as a scenario spells it, doc comment).\n\
         pub(crate) const FIELD_DOCS: &[(&str, &str, &str)] = &[\n",
    );
    for (file, name) in STRUCTS {
        println!("cargo:rerun-if-changed={file}");
        let src = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let body = src
            .split_once(&format!("struct {name} {{"))
            .and_then(|(_, rest)| rest.split_once("\n}"))
            .map(|(body, _)| body)
            .unwrap_or_else(|| panic!("{file} defines `struct {name} {{ ... }}`"));
        let mut doc: Vec<String> = Vec::new();
        let mut rename: Option<String> = None;
        for line in body.lines().map(str::trim) {
            if let Some(d) = line.strip_prefix("///") {
                doc.push(d.trim().to_string());
            } else if line.starts_with("#[") {
                // `#[serde(rename = "where")]`: the key is what the file says, not the field's name.
                if let Some(r) = line.split("rename = \"").nth(1).and_then(|r| r.split('"').next()) {
                    rename = Some(r.to_string());
                }
            } else if let Some((field, _)) = line.strip_prefix("pub ").unwrap_or(line).split_once(':') {
                let field = field.trim();
                if !field.is_empty() && field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    let key = rename.take().unwrap_or_else(|| field.to_string());
                    writeln!(out, "    ({name:?}, {key:?}, {:?}),", doc.join(" ")).unwrap();
                }
                doc.clear();
                rename = None;
            } else if !line.starts_with("//") {
                doc.clear();
            }
        }
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("field_docs.rs");
    std::fs::write(dest, out).unwrap();
}
