//! Extracts the doc comment of every `RdpConfig` field from src/config.rs into `knobs.rs`, so that
//! `tcplab explain` prints the same text as the API docs (as crates/tcp/build.rs does for `TcpConfig`).
//! Fields marked `#[serde(skip)]` are not scenario knobs and are left out.

use std::fmt::Write;

fn main() {
    println!("cargo:rerun-if-changed=src/config.rs");
    let src = std::fs::read_to_string("src/config.rs").expect("src/config.rs is readable");
    let body = src
        .split_once("pub struct RdpConfig {")
        .and_then(|(_, rest)| rest.split_once("\n}"))
        .map(|(body, _)| body)
        .expect("src/config.rs defines `pub struct RdpConfig { ... }`");
    let mut out =
        String::from("/// Every `RdpConfig` knob: (name, doc comment).\npub const KNOBS: &[(&str, &str)] = &[\n");
    let mut doc = Vec::new();
    let mut skip = false;
    for line in body.lines().map(str::trim) {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.trim().to_string());
        } else if let Some(field) = line.strip_prefix("pub ") {
            let name = field.split(':').next().unwrap_or("").trim();
            if !skip {
                writeln!(out, "    ({name:?}, {:?}),", doc.join(" ")).unwrap();
            }
            doc.clear();
            skip = false;
        } else if line.starts_with("#[") {
            skip |= line.contains("serde(skip)");
        } else {
            doc.clear();
        }
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("knobs.rs");
    std::fs::write(dest, out).unwrap();
}
