//! crates/cli's test files on tcplab-testkit's harness (they need root, network namespaces or an outside
//! tool), as one test binary: each file beside this one is a module here (`#[path]`, so the files keep their
//! names) listing its tests in `tcplab_testkit::tests!`, and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-cli --test system linux_qdisc::`). The files run one after another, each as its own binary did (its tests
//! at once or one at a time), so no file's testbeds share the machine with another's. One binary instead of
//! one per file: each linked everything it uses again (docs/testing.md § How long CI takes).
//! Binaries of their own: `readme.rs` (its own \`main\`) and `progress.rs`.

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "compare.rs"]
mod compare;
#[path = "linux_backend_scenarios.rs"]
mod linux_backend_scenarios;
#[path = "linux_conn_series.rs"]
mod linux_conn_series;
#[path = "linux_qdisc.rs"]
mod linux_qdisc;
#[path = "linux_queue_series.rs"]
mod linux_queue_series;
#[path = "safety.rs"]
mod safety;

tcplab_testkit::main!(files: compare, linux_backend_scenarios, linux_conn_series, linux_qdisc, linux_queue_series, safety);
