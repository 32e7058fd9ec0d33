//! The metrics of a test from what a backend reported ([`BackendRun`]): goodput, transactions, message
//! times and the CPU figures, the same whichever backend ran the point.

use tcplab_workload::{Report, Role};

use crate::result::{BackendRun, CpuMetrics, Metrics, MsgMetrics, RrMetrics, Sides, StreamMetrics};
use crate::scenario::TestKind;

/// The CPU figures of a window of `elapsed` that moved `bytes` in `transactions` (0 for bulk tests).
fn cpu_metrics(
    cpu: &[Option<tcplab_sim::CpuReport>; 2],
    elapsed: tcplab_units::Duration,
    bytes: u64,
    transactions: Option<u64>,
) -> Option<CpuMetrics> {
    if cpu.iter().all(Option::is_none) {
        return None;
    }
    let side = |f: &dyn Fn(&tcplab_sim::CpuReport) -> f64| Sides {
        local: cpu[0].as_ref().map(f),
        remote: cpu[1].as_ref().map(f),
    };
    let busy_us = |c: &tcplab_sim::CpuReport| c.busy_window.as_nanos() as f64 / 1e3;
    let per = |n: f64| move |c: &tcplab_sim::CpuReport| if n > 0.0 { busy_us(c) / n } else { f64::NAN };
    Some(CpuMetrics {
        cpu_source: "modeled".into(),
        cpu_scope: None,
        cpu_util_percent: side(&|c| {
            100.0 * c.busy_window.as_nanos() as f64 / (elapsed.as_nanos() as f64 * c.cores as f64).max(1.0)
        }),
        service_demand_us_per_kb: side(&per(bytes as f64 / 1024.0)),
        service_demand_us_per_tr: transactions.map(|t| side(&per(t as f64))),
    })
}

/// The metrics of the test kind from what the backend reported (the applications' reports, the stack's
/// retransmissions, the CPU model's figures): TCP on the simulator and on the Linux backend.
pub fn metrics(test: &crate::scenario::Test, run: &BackendRun) -> Metrics {
    let kind = test.kind;
    match kind {
        TestKind::Stream | TestKind::Maerts => {
            // Goodput is what the receiving application read during the window.
            let (delivered, elapsed) = run
                .apps
                .iter()
                .filter_map(|(_, r)| match r {
                    Report::Stream(s) if s.role == Role::Receive => Some((s.window_bytes, s.elapsed)),
                    _ => None,
                })
                .fold((0, tcplab_units::Duration::ZERO), |(b, d), (wb, we)| (b + wb, d.max(we)));
            let secs = elapsed.as_secs_f64();
            Metrics::Stream(StreamMetrics {
                throughput_bps: if elapsed.is_zero() { 0.0 } else { delivered as f64 * 8.0 / secs },
                delivered_bytes: delivered,
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                cpu: cpu_metrics(&run.cpu, elapsed, delivered, None),
            })
        }
        TestKind::Rr | TestKind::Crr => {
            let client = run
                .apps
                .iter()
                .find_map(|(_, r)| match r {
                    Report::Rr(r) if r.client => Some(r),
                    _ => None,
                })
                .expect("a request/response test has a client");
            let secs = client.elapsed.as_secs_f64();
            let crr = kind == TestKind::Crr;
            Metrics::Rr(RrMetrics {
                transactions_per_s: if client.elapsed.is_zero() { 0.0 } else { client.transactions as f64 / secs },
                transactions: client.transactions,
                latency_us: client.latency.into(),
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                connections_opened: crr.then_some(client.connections_opened),
                port_waits: crr.then_some(client.port_waits),
                cpu: cpu_metrics(
                    &run.cpu,
                    client.elapsed,
                    client.transactions
                        * (test.request.map_or(1, |b| b.bytes()) + test.response.map_or(1, |b| b.bytes())),
                    Some(client.transactions),
                ),
            })
        }
        TestKind::Msg => {
            let r = run
                .apps
                .iter()
                .find_map(|(_, r)| match r {
                    Report::Msg(r) if r.receiver => Some(r),
                    _ => None,
                })
                .expect("a message test has a receiver");
            let secs = r.elapsed.as_secs_f64();
            let per_s = |x: f64| if r.elapsed.is_zero() { 0.0 } else { x / secs };
            Metrics::Msg(MsgMetrics {
                messages_per_s: per_s(r.messages as f64),
                messages: r.messages,
                throughput_bps: per_s(r.window_bytes as f64 * 8.0),
                delivered_bytes: r.window_bytes,
                time_per_message_us: r.time_per_message.into(),
                latency_us: r.latency.into(),
                retransmissions: run.retransmissions,
                elapsed_s: secs,
                cpu: cpu_metrics(&run.cpu, r.elapsed, r.window_bytes, None),
            })
        }
    }
}
