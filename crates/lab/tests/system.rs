//! crates/lab's test files on tcplab-testkit's harness (they need root, network namespaces or an outside
//! tool), as one test binary: each file beside this one is a module here (`#[path]`, so the files keep their
//! names) listing its tests in `tcplab_testkit::tests!`, and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-lab --test system classic_kernel::`). The files run one after another, each as its own binary did (its tests
//! at once or one at a time), so no file's testbeds share the machine with another's. One binary instead of
//! one per file: each linked everything it uses again (docs/testing.md § How long CI takes).

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "classic_kernel.rs"]
mod classic_kernel;
#[path = "linux.rs"]
mod linux;

tcplab_testkit::main!(files: classic_kernel, linux);
