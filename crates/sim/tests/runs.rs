//! crates/sim's whole-run tests, as one test binary: each file beside this one is a module here
//! (`#[path]`, so the files keep their names), and a test is named `FILE::TEST` (`cargo test -p tcplab-sim
//! --test runs topology::`). One binary instead of one per file: each linked the engine and everything under
//! it again (docs/testing.md § How long CI takes). `allocations.rs` is a binary of its own: its counting
//! allocator is the process's, so another file's run at the same time would count into it.

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "cpu.rs"]
mod cpu;
#[path = "ecn_aqm.rs"]
mod ecn_aqm;
#[path = "engine.rs"]
mod engine;
#[path = "gro.rs"]
mod gro;
#[path = "sharing.rs"]
mod sharing;
#[path = "topology.rs"]
mod topology;
