//! Today beside then (docs/classic.md § Today beside then): the 2002 DSL request/response experiment
//! (`classic/dsl-rr`) on this machine's kernel through the Linux backend, beside the simulator's `linux`
//! personality on the same path. The kernel's figures are the `[[published]]` "today, kernel" series of the
//! shipped scenario.
//!
//! It needs Linux and root; elsewhere it is reported as ignored with the reason, except under CI=true,
//! where it fails (tcplab-testkit's harness). Two points of 5 s each: about 12 s.

use crate::common;

use tcplab_lab::result::Metrics;
use tcplab_lab::{load, Scenario, Source};
use tcplab_testkit::{need, Outcome};

/// The shipped `classic/dsl-rr` as the kernel can run it: `linux` at both ends (Minshall's Nagle, so
/// `nagle_last_sent` false; timestamps on, the kernel's default) and no CPU cost model (the kernel's own
/// CPU does the work, so the service-demand plot goes too). The dummynet path, on its 10 ms clock, the
/// buffers, the MSS and the 128/8192-byte exchange are the shipped scenario's.
fn kernel_ready(burst: u32) -> Scenario {
    // The sweep's one axis goes too: each test point sets its burst.
    let text = common::shipped_one_point_without_cpu_model("classic/dsl-rr");
    let set: Vec<String> = common::DSL_TODAY
        .into_iter()
        .chain(["test.duration=\"5s\""])
        .map(String::from)
        .chain([format!("test.burst={burst}")])
        .collect();
    load(&Source { name: "dsl-rr-kernel.toml", text: &text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn transactions_per_s(doc: &tcplab_lab::ResultDoc) -> f64 {
    let Metrics::Rr(m) = &doc.points[0].metrics else { panic!("a request/response test") };
    m.transactions_per_s
}

fn the_kernel_runs_the_dsl_experiment_at_the_personalitys_rate() -> Outcome {
    need(tcplab_emu::check_environment())?;
    for burst in [0, 1] {
        let s = kernel_ready(burst);
        let kernel = transactions_per_s(&tcplab_lab::run_scenario_linux(&s, 1).expect("the kernel runs it"));
        let sim = transactions_per_s(&tcplab_lab::run_scenario(&s, 1).expect("the simulator runs it"));
        eprintln!("burst {burst}: kernel {kernel} transactions/s, the linux personality {sim}");
        // A 5 s run counts whole transactions: the two agree to one transaction (0.2/s).
        assert!((kernel - sim).abs() <= 0.2 + 1e-9, "burst {burst}: kernel {kernel}, personality {sim}");
        if burst == 0 {
            // One transaction in flight: 100 ms of propagation, the request's 168 bytes at 128 kbit/s
            // (10.5 ms) and the response's 8192 bytes in 6 segments with 40-byte headers at 384 kbit/s
            // (175.7 ms) give at most 1 / 0.2862 s = 3.494/s; the 10 ms clock rounds each leg up.
            assert!((3.0..=3.494).contains(&kernel), "burst 0: {kernel}/s, one in flight allows 3.494");
        } else {
            // Two in flight keep the down line busy: its ceiling is 5.703/s (docs/classic.md § 1).
            assert!((5.2..=5.703).contains(&kernel), "burst 1: {kernel}/s, the line's ceiling 5.703");
        }
    }
    Ok(())
}

tcplab_testkit::tests!(the_kernel_runs_the_dsl_experiment_at_the_personalitys_rate);
