//! crates/report's tests on libtest's harness, as one test binary: each file beside this one is a module
//! here (`#[path]`, so the files keep their names), and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-report --test outputs plot::`). One binary instead of one per file: each linked the report and
//! the lab under it again (docs/testing.md § How long CI takes). Binaries of their own: the files on
//! tcplab-testkit's harness, which need an outside tool (tshark, flent, chromium).

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "csv.rs"]
mod csv;
#[path = "html_navigation.rs"]
mod html_navigation;
#[path = "plot.rs"]
mod plot;
#[path = "plot_legends.rs"]
mod plot_legends;
#[path = "plot_published_colours.rs"]
mod plot_published_colours;
#[path = "published.rs"]
mod published;
#[path = "result_versions.rs"]
mod result_versions;
#[path = "schema.rs"]
mod schema;
#[path = "typed.rs"]
mod typed;
