//! What a run will cost, estimated from the scenario before it runs, and the budget beyond which
//! `tcplab run` refuses without `--force` (docs/scenario.md § Limits and budget).
//!
//! Accepted values can still ask for more than a machine has: a series sampled every 100 us over 600 s
//! is 6 million rows, 100,000 parallel connections hold 100,000 connections' state, a million-point
//! sweep holds a million results. The model is deliberately simple, an upper bound of the same order as
//! what a run measures (checked against measured runs in this module's tests):
//!
//! - **segments**: the fewest of what the path can carry (rate × duration / frame size, each direction),
//!   what the windows allow (connections × window / round trip × duration), and what the workload offers
//!   (transactions ≤ connections × (1 + burst) × duration / round trip; paced messages = connections ×
//!   duration / interval; `test.messages`);
//! - **events** ≈ [`EVENTS_PER_SEGMENT`] × segments, plus one per paced send and per series sample, plus
//!   [`EVENTS_PER_CONNECTION`] per connection;
//!   **CPU time** = events / [`EVENTS_PER_SECOND`]; **wall time** = CPU time over the worker threads;
//! - **memory** = a run's state (connections × [`CONNECTION_BYTES`], series samples × (columns × 8 +
//!   [`ROW_BYTES`])) for each run at once, plus every point's result until the end, plus the JSON tree the
//!   files of `--csv`, `--plot`, `--report`, `--flent` are drawn from ([`TREE_BYTES_PER_NUMBER`] a number).

use tcplab_units::Duration;

use crate::scenario::{Protocol, Scenario, TestKind};

/// Engine events per CPU second, the low end of `tcplab bench` on a loaded 2-vCPU VM (2.8 to 9 million a
/// second, docs/benchmarks.md), so that the time estimate errs long.
pub const EVENTS_PER_SECOND: f64 = 2.0e6;
/// Events per data segment: its send, its queueing and serialization, its arrival, and its share of an
/// ACK (bulk-1g: 1.5 measured).
pub const EVENTS_PER_SEGMENT: f64 = 2.0;
/// Events' worth of work per connection whatever the duration (its handshake, state, result entry):
/// bulk-10m with 8,000 connections took 0.41 s on an idle 2-vCPU VM for 5 s and 20 s alike, some 50 µs
/// a connection, 100 events at [`EVENTS_PER_SECOND`]; 125, so that the estimate errs long.
pub const EVENTS_PER_CONNECTION: f64 = 125.0;
/// A connection's state in a run (both ends, buffers' bookkeeping, estimators): 27 KiB measured with
/// 10,000 connections.
pub const CONNECTION_BYTES: f64 = 32.0 * 1024.0;
/// A connection's entry in the result (its RFC 4898 counters of both ends).
pub const CONNECTION_RESULT_BYTES: f64 = 4.0 * 1024.0;
/// A point's result without its connections and series (metrics, links, parameters).
pub const POINT_RESULT_BYTES: f64 = 8.0 * 1024.0;
/// A series row's own cost beside its numbers (its vector's header and allocation).
pub const ROW_BYTES: f64 = 32.0;
/// A number in the JSON tree the rendered files are drawn from, with what they write from it: 80 bytes
/// measured (`--csv` of 42 million series numbers: 3.4 GB beside the run).
pub const TREE_BYTES_PER_NUMBER: f64 = 80.0;
/// What the process needs before any run.
pub const PROCESS_BYTES: f64 = 16.0 * 1024.0 * 1024.0;

/// The budget: beyond it `tcplab run` refuses (exit 2) unless `--force`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Peak memory, bytes.
    pub memory_bytes: f64,
    /// Wall time on the worker threads, seconds.
    pub wall_s: f64,
}

/// 2 GiB and one hour: a run beyond either is rarely meant on a shared lab machine, and `--force` says it
/// is.
pub const BUDGET: Budget = Budget { memory_bytes: 2.0 * (1u64 << 30) as f64, wall_s: 3600.0 };

/// What one run of one point costs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PointEstimate {
    /// Data segments (all directions).
    pub segments: f64,
    /// Engine events.
    pub events: f64,
    /// The run's own state at its peak, bytes.
    pub run_bytes: f64,
    /// The point's result, kept until the document is written, bytes.
    pub result_bytes: f64,
    /// Numbers in the point's series (`series`, `logvars`, `rtt_samples`).
    pub series_numbers: f64,
    /// Connections, over the whole run (`tcp_crr` opens one per transaction).
    pub connections: f64,
}

fn secs(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e9
}

/// Estimates one run of `s` (see the module's documentation for the model).
pub fn point(s: &Scenario) -> PointEstimate {
    let t = &s.test;
    let d = secs(t.duration);
    let parallel = f64::from(t.parallel);
    let maerts = t.kind == TestKind::Maerts;
    let (sender, receiver) = if maerts { (&s.server, &s.client) } else { (&s.client, &s.server) };
    let (data_link, back_link) = if maerts { (&s.path.down, &s.path.up) } else { (&s.path.up, &s.path.down) };
    let message = t.message.bytes() as f64;
    // The transport's own shape where its knobs set it (`TransportConfig::budget`), else TCP's.
    let table = t.transport.key();
    let own = match (sender.transports.of_table(table), receiver.transports.of_table(table)) {
        (Some(snd), Some(rcv)) if t.transport != Protocol::TCP => snd.budget_any(rcv, t.kind.key(), t.message.bytes()),
        _ => None,
    };
    let mss = own.map_or(sender.tcp().mss.bytes() as f64, |o| o.mss);
    let payload = match (own, t.kind) {
        (Some(o), _) => o.payload,
        (None, TestKind::Msg) => message.min(mss).max(1.0),
        (None, _) => mss,
    };
    let rate = |l: &tcplab_link::LinkConfig, nic: Option<tcplab_units::Rate>| {
        let r = l.rate.bps() as f64;
        nic.map_or(r, |n| r.min(n.bps() as f64))
    };
    let frame_bits = |l: &tcplab_link::LinkConfig, bytes: f64| f64::from(l.framing.wire_len(bytes as u32 + 40)) * 8.0;
    // What the path carries in the measurement, in each direction, in frames of the data's size.
    let line = rate(data_link, sender.host.nic_rate) * d / frame_bits(data_link, payload);
    let line_back = rate(back_link, receiver.host.nic_rate) * d / frame_bits(back_link, payload);
    let rtt = secs(s.path.up.delay + s.path.down.delay).max(1e-6);
    let window = match own {
        Some(o) => o.window,
        None => (sender.tcp().send_buffer.bytes() as f64)
            .min(receiver.tcp().recv_buffer.bytes() as f64 * receiver.tcp().recv_window_ratio)
            .max(mss),
    };
    let by_window = parallel * window / payload * d / rtt;
    let mut connections = parallel;
    let mut app_events = 0.0;
    let mut segments = line.min(by_window);
    if t.kind.is_rr() {
        let req = t.request.map_or(1.0, |b| b.bytes() as f64);
        let rsp = t.response.map_or(1.0, |b| b.bytes() as f64);
        let per = (req / mss).ceil() + (rsp / mss).ceil();
        let transactions = parallel * (1.0 + f64::from(t.burst.unwrap_or(0))) * d / rtt;
        let mut segs = (transactions * per).min(line + line_back);
        if t.kind == TestKind::Crr {
            // SYN, SYN-ACK, ACK, two FINs and their ACKs.
            segs += (segs / per) * 7.0;
            connections = (segs / (per + 7.0)).max(parallel);
        }
        segments = segs;
    }
    if let Some(i) = t.interval {
        let sends = parallel * d / secs(i).max(1e-9);
        app_events += sends;
        segments = segments.min(sends * (message / mss).ceil());
    }
    if let Some(n) = t.messages {
        segments = segments.min(n as f64 * (message / payload).ceil());
    }
    let mut events = EVENTS_PER_SEGMENT * segments + app_events + EVENTS_PER_CONNECTION * connections;
    let mut series_numbers = 0.0;
    let mut series_rows = 0.0;
    if let Some(interval) = t.series {
        let samples = d / secs(interval);
        events += samples;
        let (rows, cols) = match &t.series_vars {
            // Every connection end, its variables with the time, delivered bytes and throughput.
            Some(vars) => (samples * 2.0 * connections, vars.len() as f64 + 3.0),
            None => (samples, crate::columns::SERIES_COLUMNS.len() as f64),
        };
        series_rows += rows;
        series_numbers += rows * cols;
        if own.is_some_and(|o| o.rtt_samples) {
            // Every RTT measurement: about one per segment acknowledged, five columns.
            series_rows += segments;
            series_numbers += segments * 5.0;
        }
    }
    let series_bytes = series_numbers * 8.0 + series_rows * ROW_BYTES;
    PointEstimate {
        segments,
        events,
        run_bytes: connections.min(parallel.max(1.0)) * CONNECTION_BYTES + series_bytes,
        result_bytes: POINT_RESULT_BYTES + parallel * CONNECTION_RESULT_BYTES + series_bytes,
        series_numbers,
        connections,
    }
}

/// What a whole run costs: every point, each repeated up to the plan's most iterations, on `threads`
/// worker threads.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub points: u64,
    /// Runs: points × the most iterations each may take.
    pub runs: u64,
    pub events: f64,
    pub cpu_s: f64,
    pub threads: usize,
    pub wall_s: f64,
    pub memory_bytes: f64,
    /// The largest shares of `memory_bytes`, largest first, in words.
    pub memory_parts: Vec<(String, f64)>,
}

/// What the files asked for add to the memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outputs {
    /// `--csv`, `--plot`, `--report` or `--flent`: drawn from the document's JSON tree, series included.
    pub renders: bool,
}

/// Combines per-point estimates: `total` points whose mean is `mean` and whose largest run is `largest`,
/// each run up to `iterations` times, on `threads` threads.
pub fn combine(
    total: u64,
    mean: &PointEstimate,
    largest: &PointEstimate,
    iterations: u32,
    threads: usize,
    out: Outputs,
) -> Estimate {
    let runs = total.saturating_mul(u64::from(iterations.max(1)));
    let events = mean.events * runs as f64;
    let cpu_s = events / EVENTS_PER_SECOND;
    let threads = threads.max(1);
    let at_once = (threads as u64).min(runs.max(1)) as f64;
    let wall_s = cpu_s / at_once;
    let mut parts = vec![
        ("the process".to_string(), PROCESS_BYTES),
        (
            format!(
                "{} run(s) at once, {:.0} connection(s) and {} series numbers each",
                at_once,
                largest.connections,
                count(largest.series_numbers)
            ),
            at_once * largest.run_bytes,
        ),
        (format!("{total} point result(s) until the document is written"), mean.result_bytes * total as f64),
    ];
    if out.renders {
        parts.push((
            format!(
                "the JSON tree of --csv/--plot/--report/--flent ({} series numbers)",
                count(mean.series_numbers * total as f64)
            ),
            (mean.series_numbers * TREE_BYTES_PER_NUMBER + mean.result_bytes) * total as f64,
        ));
    }
    let memory_bytes = parts.iter().map(|(_, b)| b).sum();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    Estimate { points: total, runs, events, cpu_s, threads, wall_s, memory_bytes, memory_parts: parts }
}

impl Estimate {
    /// Why the estimate is over `budget`, in words with both figures; `None` within it.
    pub fn over(&self, budget: &Budget) -> Option<String> {
        let mut why = Vec::new();
        if self.memory_bytes > budget.memory_bytes {
            let (what, b) = &self.memory_parts[0];
            why.push(format!(
                "about {} of memory (largest: {what}, {}), over the budget of {}",
                bytes(self.memory_bytes),
                bytes(*b),
                bytes(budget.memory_bytes)
            ));
        }
        if self.wall_s > budget.wall_s {
            why.push(format!(
                "about {} of wall time ({} events, {} of CPU on {} thread(s)), over the budget of {}",
                time(self.wall_s),
                count(self.events),
                time(self.cpu_s),
                self.threads,
                time(budget.wall_s)
            ));
        }
        (!why.is_empty()).then(|| why.join("; and "))
    }
}

impl std::fmt::Display for Estimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} point(s), {} run(s), {} events: about {} of CPU, {} on {} thread(s); peak memory about {} (largest: {})",
            self.points,
            self.runs,
            count(self.events),
            time(self.cpu_s),
            time(self.wall_s),
            self.threads,
            bytes(self.memory_bytes),
            self.memory_parts[0].0
        )
    }
}

/// `12.3 MiB`, `2.0 GiB`.
pub fn bytes(b: f64) -> String {
    let units = [("GiB", (1u64 << 30) as f64), ("MiB", (1u64 << 20) as f64), ("KiB", 1024.0)];
    for (u, scale) in units {
        if b >= scale {
            return format!("{:.1} {u}", b / scale);
        }
    }
    format!("{b:.0} B")
}

/// `0.4 s`, `12 min`, `3.1 h`.
pub fn time(s: f64) -> String {
    if s >= 7200.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// `1.2e9`, `34,000`.
fn count(n: f64) -> String {
    if n >= 1e7 {
        format!("{n:.1e}")
    } else {
        let s = format!("{:.0}", n);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Source};

    fn est(sets: &[&str]) -> PointEstimate {
        let text = "name = \"e\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\n\
                    duration = \"10s\"\n";
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        point(&load(&Source { name: "e.toml", text }, &sets).unwrap())
    }

    /// The model against runs measured on this VM (release build): a 10 Mbit/s bulk transfer is
    /// window-bound at 64 KiB / 40 ms (~13 Mbit/s > the line), so the line bounds it: 8,127 frames/s.
    #[test]
    fn bulk_is_line_bound() {
        let e = est(&[]);
        assert!((e.segments - 10e6 * 10.0 / (1538.0 * 8.0)).abs() < 1.0, "{e:?}");
        // 600 s sampled every 100 us: 6 million rows of 7 numbers; measured 521 MB (--quiet).
        let e = est(&["test.duration=\"600s\"", "test.series=\"100us\""]);
        assert!((5.0e8..6.0e8).contains(&e.run_bytes), "{e:?}");
        // 10,000 connections: measured 273 MB peak for the whole run.
        let e = est(&["test.parallel=10000"]);
        assert!((2.5e8..4.0e8).contains(&e.run_bytes), "{e:?}");
        // Their set-up whatever the duration: 8,000 took 0.41 s; the estimate errs long, within 4x.
        let e = est(&["test.parallel=8000", "test.duration=\"5s\""]);
        let cpu_s = e.events / EVENTS_PER_SECOND;
        assert!((0.41..1.64).contains(&cpu_s), "{cpu_s} s: {e:?}");
    }

    #[test]
    fn paced_messages_count_every_send() {
        let e = est(&["test.kind=tcp_msg", "test.interval=\"1us\"", "test.duration=\"2s\""]);
        assert!(e.events >= 2e6, "{e:?}");
        let whole = combine(1, &e, &e, 1, 1, Outputs::default());
        assert!(whole.over(&BUDGET).is_none());
    }

    #[test]
    fn over_budget_says_both_figures() {
        let e = est(&[
            "test.duration=\"86400s\"",
            "test.series=\"100us\"",
            "path.up.rate=\"1gbit\"",
            "client.tcp.send_buffer=\"16MiB\"",
            "server.tcp.recv_buffer=\"16MiB\"",
        ]);
        let whole = combine(1, &e, &e, 1, 2, Outputs { renders: true });
        let why = whole.over(&BUDGET).unwrap();
        assert!(why.contains("of memory") && why.contains("over the budget of 2.0 GiB"), "{why}");
        assert!(why.contains("of wall time") && why.contains("over the budget of 60 min"), "{why}");
    }

    /// Every shipped scenario, swept or not, is within the budget.
    #[test]
    fn shipped_scenarios_are_within_budget() {
        for s in crate::scenario::SHIPPED {
            let plan =
                crate::sweep::plan(&Source { name: s.name, text: s.text }, &[], &[], &Default::default()).unwrap();
            let e = plan.estimate(None, 2, Outputs { renders: true });
            assert!(e.over(&BUDGET).is_none(), "{}: {e}", s.name);
        }
    }
}
