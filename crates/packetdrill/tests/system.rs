//! crates/packetdrill's test files on tcplab-testkit's harness (they need root, network namespaces or an outside
//! tool), as one test binary: each file beside this one is a module here (`#[path]`, so the files keep their
//! names) listing its tests in `tcplab_testkit::tests!`, and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-packetdrill --test system kernel_all::`). The files run one after another, each as its own binary did (its tests
//! at once or one at a time), so no file's testbeds share the machine with another's. One binary instead of
//! one per file: each linked everything it uses again (docs/testing.md § How long CI takes).

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "kernel.rs"]
mod kernel;
#[path = "kernel_all.rs"]
mod kernel_all;
#[path = "kernel_interp.rs"]
mod kernel_interp;

tcplab_testkit::main!(files: kernel, kernel_all, kernel_interp);
