//! crates/lab's scenario tests on libtest's harness, as one test binary: each file beside this one is a
//! module here (`#[path]`, so the files keep their names), and a test is named `FILE::TEST`
//! (`cargo test -p tcplab-lab --test scenarios classic_dsl::`). One binary instead of one per file: each
//! linked the lab and everything under it again, 54 of them some 490 CPU seconds of a fresh `cargo test`
//! (docs/testing.md § How long CI takes). Binaries of their own: the Linux backend's files (on
//! tcplab-testkit's harness) and `progress.rs`, whose watch of the published simulated time is the
//! process's, so another file's run at the same time would publish into it.

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "bbr.rs"]
mod bbr;
#[path = "bbr_heavy_loss.rs"]
mod bbr_heavy_loss;
#[path = "bbr_loss_jitter.rs"]
mod bbr_loss_jitter;
#[path = "bbr_startup_drops.rs"]
mod bbr_startup_drops;
#[path = "bbr_tso.rs"]
mod bbr_tso;
#[path = "bbr_vs_cubic.rs"]
mod bbr_vs_cubic;
#[path = "classic.rs"]
mod classic;
#[path = "classic_dsl.rs"]
mod classic_dsl;
#[path = "classic_dsl_instant.rs"]
mod classic_dsl_instant;
#[path = "classic_gige.rs"]
mod classic_gige;
#[path = "classic_growth_packets.rs"]
mod classic_growth_packets;
#[path = "classic_rdp_mills.rs"]
mod classic_rdp_mills;
#[path = "classic_rdp_random.rs"]
mod classic_rdp_random;
#[path = "classic_send_calls.rs"]
mod classic_send_calls;
#[path = "classic_small_messages.rs"]
mod classic_small_messages;
#[path = "classic_small_messages_22.rs"]
mod classic_small_messages_22;
#[path = "classic_small_messages_22_loss.rs"]
mod classic_small_messages_22_loss;
#[path = "classic_small_messages_stddev.rs"]
mod classic_small_messages_stddev;
#[path = "classic_txqueuelen.rs"]
mod classic_txqueuelen;
#[path = "classic_txqueuelen_24buffers.rs"]
mod classic_txqueuelen_24buffers;
#[path = "classic_txqueuelen_cap.rs"]
mod classic_txqueuelen_cap;
#[path = "classic_txqueuelen_clamp.rs"]
mod classic_txqueuelen_clamp;
#[path = "classic_txqueuelen_slowstart.rs"]
mod classic_txqueuelen_slowstart;
#[path = "classic_txqueuelen_web100.rs"]
mod classic_txqueuelen_web100;
#[path = "cpu.rs"]
mod cpu;
#[path = "ecn_shipped.rs"]
mod ecn_shipped;
#[path = "flows.rs"]
mod flows;
#[path = "flows_keys.rs"]
mod flows_keys;
#[path = "flows_network.rs"]
mod flows_network;
#[path = "fragmentation.rs"]
mod fragmentation;
#[path = "host_transports.rs"]
mod host_transports;
#[path = "kernel_cases.rs"]
mod kernel_cases;
#[path = "keys.rs"]
mod keys;
#[path = "knobs.rs"]
mod knobs;
#[path = "latency_cdf.rs"]
mod latency_cdf;
#[path = "module_graph.rs"]
mod module_graph;
#[path = "netperf_msg.rs"]
mod netperf_msg;
#[path = "netperf_rr.rs"]
mod netperf_rr;
#[path = "parser_fuzz.rs"]
mod parser_fuzz;
#[path = "physics.rs"]
mod physics;
#[path = "plots.rs"]
mod plots;
#[path = "published.rs"]
mod published;
#[path = "queue_series.rs"]
mod queue_series;
#[path = "rdp.rs"]
mod rdp;
#[path = "result_points.rs"]
mod result_points;
#[path = "scenario_fuzz.rs"]
mod scenario_fuzz;
#[path = "sweep_balance.rs"]
mod sweep_balance;
#[path = "sweeps.rs"]
mod sweeps;
#[path = "test_kind_split.rs"]
mod test_kind_split;
#[path = "transport_names.rs"]
mod transport_names;
#[path = "transport_refusals.rs"]
mod transport_refusals;
#[path = "transport_seam.rs"]
mod transport_seam;
#[path = "transport_tables.rs"]
mod transport_tables;
