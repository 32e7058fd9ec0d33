//! crates/emu's test files on tcplab-testkit's harness (they need root, network namespaces or an outside
//! tool), as one test binary: each file beside this one is a module here (`#[path]`, so the files keep their
//! names) listing its tests in `tcplab_testkit::tests!`, and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-emu --test system apps::`). The files run one after another, each as its own binary did (its tests
//! at once or one at a time), so no file's testbeds share the machine with another's. One binary instead of
//! one per file: each linked everything it uses again (docs/testing.md § How long CI takes).
//! Binaries of their own: `bench.rs` (the benchmark, run by name) and the files whose children are
//! this binary again (`cleanup.rs`, `safety.rs`).

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "apps.rs"]
mod apps;
#[path = "gigabit.rs"]
mod gigabit;
#[path = "iperf.rs"]
mod iperf;
#[path = "knobs.rs"]
mod knobs;
#[path = "loss.rs"]
mod loss;
#[path = "path.rs"]
mod path;
#[path = "pcap.rs"]
mod pcap;
#[path = "rr.rs"]
mod rr;

tcplab_testkit::main!(files: apps, gigabit, iperf, knobs, loss, path, pcap, rr);
