//! crates/cli's command-line tests on libtest's harness, as one test binary: each file beside this one is a
//! module here (`#[path]`, so the files keep their names), and a test is named `FILE::TEST`
//! (`cargo test -p tcplab-cli --test commands sweeps::`). One binary instead of one per file: each linked
//! the command's crates again (docs/testing.md § How long CI takes). Binaries of their own: the files on
//! tcplab-testkit's harness (root, the Linux backend, outside tools, the README's commands) and
//! `baseline.rs`, which the benchmark rounds run alone in release (`cargo test --release -p tcplab-cli --test
//! baseline`, docs/benchmarks.md).

#[path = "aqm.rs"]
mod aqm;
#[path = "bench_dumbbell.rs"]
mod bench_dumbbell;
#[path = "cli.rs"]
mod cli;
#[path = "flows.rs"]
mod flows;
#[path = "getting_started.rs"]
mod getting_started;
#[path = "help_examples.rs"]
mod help_examples;
#[path = "inputs.rs"]
mod inputs;
#[path = "outputs.rs"]
mod outputs;
#[path = "packetdrill.rs"]
mod packetdrill;
#[path = "render.rs"]
mod render;
#[path = "sweeps.rs"]
mod sweeps;
#[path = "tables.rs"]
mod tables;
