//! `tcplab compare SCENARIO`: the scenario on the simulator (both hosts with the `linux` personality) and on
//! the Linux backend, over one or more seeds, with the figures side by side and their relative differences —
//! how the `linux` personality is calibrated (docs/linux-backend.md § Comparison).

use serde_json::{json, Value};
use tcplab_lab::result::Metrics;
use tcplab_lab::{ResultDoc, ScenarioError, Source, TestKind};
use tcplab_report::plot::{Chart, Line};

use crate::Failure;

/// A figure's rule for a disagreement worth a note (the issue's: 5% on rates, 2× on retransmissions).
#[derive(Clone, Copy, PartialEq)]
enum Rule {
    /// Goodput or transaction rate: flagged beyond 5%.
    Rate,
    /// Retransmissions: flagged beyond a factor of 2.
    Count2x,
    /// BBR's PROBE_RTT episodes: flagged when they differ by more than one (issue 27).
    Within1,
    /// A BBR sender's time-averaged smoothed RTT: flagged beyond 10% (issue 27).
    Pct10,
    /// Shown, not judged.
    Info,
}

/// Linux's own counters shown as evidence for a disagreement (the sending namespace's `nstat` deltas), each
/// beside the simulator's RFC 4898 counter of the same event where it has one (summed over the side's ends).
const NSTAT: [(&str, Option<&str>); 8] = [
    ("TcpExt.TCPHystartTrainDetect", Some("HystartTrainDetect")),
    ("TcpExt.TCPHystartTrainCwnd", Some("HystartTrainCwnd")),
    ("TcpExt.TCPHystartDelayDetect", Some("HystartDelayDetect")),
    ("TcpExt.TCPSackRecovery", Some("FastRetran")),
    ("TcpExt.TCPLossProbes", Some("LossProbes")),
    ("TcpExt.TCPLossProbeRecovery", Some("LossProbeRecoveries")),
    ("TcpExt.TCPTimeouts", Some("Timeouts")),
    ("TcpExt.TCPSACKReorder", None),
];

/// The figures of one backend's result: (name, rule, value).
fn figures(d: &ResultDoc) -> Vec<(String, Rule, Option<f64>)> {
    let p = &d.points[0];
    let mut out = Vec::new();
    let kind = d.scenario.test.kind;
    // Connection ends of one side: counts summed, times averaged.
    let side_stat = |side: &str, k: &str| -> Option<f64> {
        let v: Vec<f64> =
            p.connections.iter().filter(|c| c.side == side).filter_map(|c| c.estats.get(k)?.as_f64()).collect();
        if v.is_empty() {
            return None;
        }
        let sum: f64 = v.iter().sum();
        Some(if k.ends_with("RTT") || k.ends_with("RTTMean") { sum / v.len() as f64 } else { sum })
    };
    match &p.metrics {
        Metrics::Stream(m) => {
            let (sender, receiver) = if kind == TestKind::Maerts { ("server", "client") } else { ("client", "server") };
            out.push(("throughput, Mbit/s".into(), Rule::Rate, Some(m.throughput_bps / 1e6)));
            out.push(("retransmitted segments".into(), Rule::Count2x, Some(m.retransmissions as f64)));
            for k in ["SegsOut", "DataSegsOut", "Timeouts", "FastRetran", "CongSignals", "SmoothedRTT", "MinRTT"] {
                out.push((format!("{sender} {k}"), Rule::Info, side_stat(sender, k)));
            }
            for k in ["SegsOut", "DataSegsIn"] {
                out.push((format!("{receiver} {k}"), Rule::Info, side_stat(receiver, k)));
            }
            // A BBR sender's own figures (the kernel's from TCP_CC_INFO and tcp_info, docs/bbr.md);
            // absent on both sides for other controllers, so no row.
            for (k, label, scale) in [
                ("X_BbrBtlBw", "BBR BtlBw, Mbit/s", 8e-6),
                ("X_BbrMinRTT", "BBR min RTT, ms", 1.0),
                ("X_PacingRate", "pacing rate, Mbit/s", 8e-6),
                ("X_DeliveryRate", "delivery rate, Mbit/s", 8e-6),
            ] {
                out.push((format!("{sender} {label}"), Rule::Info, side_stat(sender, k).map(|v| v * scale)));
            }
            // Averaged over time on both sides (BBR's RTT moves within its gain cycle, so the SmoothedRTT
            // of the end is one phase's); ms, as SmoothedRTT.
            out.push((format!("{sender} SmoothedRTT mean, ms"), Rule::Pct10, side_stat(sender, "X_SmoothedRTTMean")));
            let episodes = side_stat(sender, "X_BbrProbeRttEpisodes");
            out.push((format!("{sender} PROBE_RTT episodes"), Rule::Within1, episodes));
            nstat_rows(d, sender, &mut out);
            if d.scenario.test.parallel >= 2 {
                stream_rows(d, sender, receiver, m.throughput_bps, &mut out);
            }
            if d.scenario.test.parallel >= 2 || d.scenario.path.up.is_staged() || d.scenario.path.down.is_staged() {
                link_rows(d, &mut out);
            }
        }
        Metrics::Rr(m) => {
            out.push(("transactions/s".into(), Rule::Rate, Some(m.transactions_per_s)));
            let l = &m.latency_us;
            for (k, v) in [("mean", l.mean), ("p50", l.p50), ("p90", l.p90), ("p99", l.p99), ("p99.9", l.p99_9)] {
                out.push((format!("latency {k}, us"), Rule::Info, Some(v)));
            }
            out.push(("retransmitted segments".into(), Rule::Count2x, Some(m.retransmissions as f64)));
            if let Some(n) = m.connections_opened {
                out.push(("connections opened".into(), Rule::Info, Some(n as f64)));
            }
            for side in ["client", "server"] {
                out.push((format!("{side} SmoothedRTT"), Rule::Info, side_stat(side, "SmoothedRTT")));
            }
            nstat_rows(d, "client", &mut out);
            nstat_rows(d, "server", &mut out);
        }
        Metrics::Msg(m) => {
            out.push(("messages/s".into(), Rule::Rate, Some(m.messages_per_s)));
            out.push(("time per message mean, us".into(), Rule::Info, Some(m.time_per_message_us.mean)));
            let l = &m.latency_us;
            for (k, v) in [("mean", l.mean), ("p50", l.p50), ("p90", l.p90), ("p99", l.p99), ("max", l.max)] {
                out.push((format!("one-way latency {k}, us"), Rule::Info, Some(v)));
            }
            out.push(("retransmitted segments".into(), Rule::Count2x, Some(m.retransmissions as f64)));
            out.push(("client DataSegsOut".into(), Rule::Info, side_stat("client", "DataSegsOut")));
            nstat_rows(d, "client", &mut out);
        }
        // A transport's own metrics: the Linux backend runs TCP only (it refuses the others by name before
        // anything runs).
        Metrics::Own(_) => {}
    }
    out
}

/// The Linux backend's counters of `side`'s namespace (0 when they did not change); on the simulator the
/// matching RFC 4898 counters (HystartTrainCwnd in packets, as Linux counts it), absent where there is none.
fn nstat_rows(d: &ResultDoc, side: &str, out: &mut Vec<(String, Rule, Option<f64>)>) {
    let p = &d.points[0];
    let netstat = p.health.as_ref().and_then(|h| h.get("netstat")?.get(side).cloned());
    let sim = |k: &str| -> Option<f64> {
        let ends: Vec<&Value> = p.connections.iter().filter(|c| c.side == side).map(|c| &*c.estats).collect();
        let per_end = |e: &Value| {
            let v = e.get(k)?.as_f64()?;
            Some(if k == "HystartTrainCwnd" { v / e.get("CurMSS")?.as_f64()?.max(1.0) } else { v })
        };
        ends.iter().map(|e| per_end(e)).sum()
    };
    for (k, estat) in NSTAT {
        let v = match &netstat {
            Some(n) => Some(n.get(k).and_then(Value::as_f64).unwrap_or(0.0)),
            None if p.health.is_none() => estat.and_then(sim),
            None => None,
        };
        out.push((format!("{side} {}", k.trim_start_matches("TcpExt.")), Rule::Info, v));
    }
}

/// Streams that share the bottleneck (`test.parallel` connections between the two hosts): each stream's
/// goodput, its sender's smoothed RTT and retransmissions, and Jain's fairness index over the goodputs.
/// A stream's goodput is the test's throughput split in the ratio of the bytes each receiving end took in
/// over the run (RFC 4898 ThruOctetsReceived; TCP_INFO's `tcpi_bytes_received` on the kernel), so the
/// streams add up to the measured throughput. The streams are interchangeable (same hosts, same knobs,
/// opened together), so they are ranked by goodput on each backend and compared rank by rank: stream 1
/// is the one that got the most.
fn stream_rows(
    d: &ResultDoc,
    sender: &str,
    receiver: &str,
    throughput_bps: f64,
    out: &mut Vec<(String, Rule, Option<f64>)>,
) {
    let p = &d.points[0];
    let ends =
        |side: &str| -> Vec<&Value> { p.connections.iter().filter(|c| c.side == side).map(|c| &*c.estats).collect() };
    let get = |e: &Value, k: &str| e.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    // Connection ends are listed pair by pair (a client end, then its server end), on both backends.
    let mut streams: Vec<(f64, f64, f64)> = ends(receiver)
        .into_iter()
        .zip(ends(sender))
        .map(|(r, s)| (get(r, "ThruOctetsReceived"), get(s, "SmoothedRTT"), get(s, "SegsRetrans")))
        .collect();
    let total: f64 = streams.iter().map(|s| s.0).sum();
    if streams.len() < 2 || total <= 0.0 {
        return;
    }
    streams.sort_by(|a, b| b.0.total_cmp(&a.0));
    let goodputs: Vec<f64> = streams.iter().map(|s| throughput_bps * s.0 / total).collect();
    for (k, ((_, srtt, retrans), g)) in streams.iter().zip(&goodputs).enumerate() {
        let n = k + 1;
        out.push((format!("stream {n} goodput, Mbit/s"), Rule::Rate, Some(g / 1e6)));
        out.push((format!("stream {n} sender SmoothedRTT"), Rule::Info, Some(*srtt)));
        out.push((format!("stream {n} retransmitted segs"), Rule::Count2x, Some(*retrans)));
    }
    out.push(("Jain's index of the streams".into(), Rule::Rate, Some(tcplab_lab::topology::jain_index(&goodputs))));
}

/// The bottleneck's drops on both backends: each direction's queue drops (on the FIFO, the drop-tail's;
/// with a qdisc, every refusal on arrival) and, with a qdisc, its own counters (AQM drops, CE marks, the
/// mean sojourn time), as `links.up`/`links.down` report them.
fn link_rows(d: &ResultDoc, out: &mut Vec<(String, Rule, Option<f64>)>) {
    let links = &d.points[0].links;
    for (dir, l) in [("up", &links.up), ("down", &links.down)] {
        out.push((format!("{dir} queue drops"), Rule::Count2x, Some(l.drops_queue_full as f64)));
        if let Some(q) = &l.qdisc {
            out.push((format!("{dir} qdisc AQM drops"), Rule::Count2x, Some(q.drops_aqm as f64)));
            out.push((format!("{dir} qdisc CE marks"), Rule::Count2x, Some(q.marks as f64)));
            out.push((format!("{dir} qdisc sojourn mean, ms"), Rule::Info, Some(q.sojourn_mean_ms)));
        }
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// One row: the means over runs, the difference, and whether it is beyond the rule.
struct Row {
    name: String,
    sim: Option<f64>,
    linux: Option<f64>,
    diff: String,
    flagged: bool,
}

/// A row's difference as the table prints it, and whether it is beyond the row's rule.
fn difference(a: Option<f64>, b: Option<f64>, rule: Rule) -> (String, bool) {
    match (a, b, rule) {
        (Some(a), Some(b), Rule::Count2x) => {
            let (lo, hi) = (a.min(b), a.max(b));
            let flagged = hi > 2.0 * lo;
            (
                if b > 0.0 {
                    format!("x{:.2}", a / b)
                } else if a > 0.0 {
                    "x inf".into()
                } else {
                    "=".into()
                },
                flagged,
            )
        }
        (Some(a), Some(b), Rule::Within1) => (format!("{:+.0}", a - b), (a - b).abs() > 1.0),
        // Two figures that both print as 0.00 (an idle direction's sojourn) are the same to the table: a
        // ratio of their noise would read -100%.
        (Some(a), Some(b), Rule::Info) if a.abs() < 0.005 && b.abs() < 0.005 => ("=".into(), false),
        (Some(a), Some(b), _) if b != 0.0 => {
            let d = (a - b) / b;
            let flagged = match rule {
                Rule::Rate => d.abs() > 0.05,
                Rule::Pct10 => d.abs() > 0.10,
                _ => false,
            };
            (format!("{:+.1}%", d * 100.0), flagged)
        }
        _ => ("-".into(), false),
    }
}

fn rows(sim: &[ResultDoc], linux: &[ResultDoc]) -> Vec<Row> {
    let all = |docs: &[ResultDoc]| docs.iter().map(figures).collect::<Vec<_>>();
    let (s, l) = (all(sim), all(linux));
    // Names in the order of the Linux figures (they include the counters the simulator lacks).
    let names: Vec<(String, Rule)> = l[0].iter().map(|(n, r, _)| (n.clone(), *r)).collect();
    let avg = |figs: &[Vec<(String, Rule, Option<f64>)>], name: &str| {
        let v: Vec<f64> = figs.iter().filter_map(|f| f.iter().find(|(n, _, _)| n == name)?.2).collect();
        mean(&v)
    };
    names
        .into_iter()
        .map(|(name, rule)| {
            let (a, b) = (avg(&s, &name), avg(&l, &name));
            let (diff, flagged) = difference(a, b, rule);
            Row { name, sim: a, linux: b, diff, flagged }
        })
        .filter(|r| r.sim.is_some() || r.linux.is_some())
        .collect()
}

/// The seeds whose figures are compared: those whose Linux run is valid, or every seed when none is (the
/// table then says so). An invalid run's figures show the testbed, not the kernel.
fn judged(sim: &[ResultDoc], linux: &[ResultDoc]) -> (Vec<ResultDoc>, Vec<ResultDoc>, bool) {
    let valid: Vec<usize> = (0..linux.len()).filter(|&i| health(&linux[i], "valid") == Some(json!(true))).collect();
    if valid.is_empty() {
        return (sim.to_vec(), linux.to_vec(), false);
    }
    let (s, l) = valid.iter().map(|&i| (sim[i].clone(), linux[i].clone())).unzip();
    (s, l, true)
}

/// "1 run", "2 runs".
pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn table(sim_all: &[ResultDoc], linux: &[ResultDoc]) -> String {
    let (sim_j, linux_j, any_valid) = judged(sim_all, linux);
    let s = &sim_all[0].scenario;
    let seeds = if sim_all.len() == 1 {
        format!("seed {}", sim_all[0].seed)
    } else {
        let of = if sim_j.len() == sim_all.len() {
            plural(sim_j.len() as u64, "run")
        } else {
            let n = sim_j.len();
            format!("the {n} seed{} whose Linux run is valid", if n == 1 { "" } else { "s" })
        };
        format!("seeds {}..{}, means of {of}", sim_all[0].seed, sim_all[sim_all.len() - 1].seed)
    };
    // A qdisc other than the FIFO, and streams beyond one, are named after the direction's rate and delay.
    let qdisc = |fifo: bool, kind: &str| if fifo { String::new() } else { format!(" {kind}") };
    let streams = if s.test.parallel >= 2 { format!("{} streams; ", s.test.parallel) } else { String::new() };
    let mut out = format!(
        "{} on both backends: {} (up {} {}{}, down {} {}{}; {streams}{seeds})\n",
        s.test.netperf_name(),
        s.name,
        s.path.up.rate,
        s.path.up.delay,
        qdisc(s.path.up.qdisc.is_fifo(), s.path.up.qdisc.kind()),
        s.path.down.rate,
        s.path.down.delay,
        qdisc(s.path.down.qdisc.is_fifo(), s.path.down.qdisc.kind()),
    );
    out +=
        "diff = (simulator - linux) / linux; x = simulator / linux; !! beyond 5% (rates) or 2x (retransmissions), BBR's SmoothedRTT mean beyond 10%, PROBE_RTT episodes beyond +-1\n\n";
    out += &format!("{:<34} {:>14} {:>14} {:>9}\n", "figure", "simulator", "linux", "diff");
    let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    if !any_valid {
        out += "!! no Linux run was valid (below): these figures show the testbed as much as the kernel\n";
    }
    for r in rows(&sim_j, &linux_j) {
        let flag = if r.flagged { "  !!" } else { "" };
        out += &format!("{:<34} {:>14} {:>14} {:>9}{flag}\n", r.name, f(r.sim), f(r.linux), r.diff);
    }
    let valid = linux.iter().filter(|d| health(d, "valid") == Some(json!(true))).count();
    let attempts: u64 = linux.iter().filter_map(|d| health(d, "attempts")?.as_u64()).sum();
    let late = up_down(linux, "lateness", "p99_ns", 1e3, 0);
    let stalls = up_down(linux, "wake_lateness", "max_ns", 1e6, 2);
    out += &format!(
        "\nlinux run health: {valid} of {} valid ({} made); p99 release lateness up/down, us: {}; \
         longest emulator stall up/down, ms: {}\n",
        linux.len(),
        plural(attempts, "run"),
        late.join(", "),
        stalls.join(", ")
    );
    for (i, d) in linux.iter().enumerate() {
        if health(d, "valid") == Some(json!(false)) {
            out += &format!(
                "!! linux run {i} (seed {}) INVALID: {}\n",
                d.seed,
                health(d, "invalid_reasons").unwrap_or_default()
            );
        }
    }
    out
}

/// One health figure of each run, `up/down`, in ns divided by `scale`: `["66/19", "70/23"]`.
fn up_down(linux: &[ResultDoc], figure: &str, field: &str, scale: f64, decimals: usize) -> Vec<String> {
    let of = |d: &ResultDoc, dir: &str| Some(health(d, dir)?.get(figure)?.get(field)?.as_u64()? as f64 / scale);
    linux.iter().filter_map(|d| Some(format!("{:.decimals$}/{:.decimals$}", of(d, "up")?, of(d, "down")?))).collect()
}

fn health(d: &ResultDoc, k: &str) -> Option<Value> {
    d.points[0].health.as_ref()?.get(k).cloned()
}

/// One backend's samples of a point's connections: (line label, column names, rows with `t_s` first).
fn sampled(d: &ResultDoc, backend: &str) -> Vec<(String, Vec<String>, Vec<Vec<f64>>)> {
    let Some(p) = d.points.first() else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(s) = &p.series {
        out.push((backend.to_string(), s.columns.iter().map(|c| c.to_string()).collect(), s.rows.clone()));
    }
    if let Some(lv) = &p.logvars {
        // The first end of each side: the sender's and the receiver's view of one connection.
        for side in ["client", "server"] {
            if let Some(e) = lv.ends.iter().find(|e| e.side == side) {
                out.push((format!("{backend}, {side}"), lv.columns.clone(), e.rows.clone()));
            }
        }
    }
    out
}

/// The charts of `compare --plot`: for each variable the simulator's and the kernel's series share (the
/// first run's), one chart with a line per backend (and per side, with `test.series = { vars }`), in the
/// variable's unit, over the time since the start of the run.
pub(crate) fn series_charts(sim: &ResultDoc, linux: &ResultDoc) -> Vec<(String, Chart)> {
    let (a, b) = (sampled(sim, "simulator"), sampled(linux, "Linux kernel"));
    let mut vars: Vec<String> = Vec::new();
    for (_, cols, _) in &a {
        for c in cols.iter().skip(1) {
            let shared = b.iter().any(|(_, other, _)| other.contains(c));
            if shared && !vars.contains(c) {
                vars.push(c.clone());
            }
        }
    }
    let name = &sim.scenario.name;
    let mut out = Vec::new();
    for var in vars {
        let mut lines: Vec<Line> = Vec::new();
        for (label, cols, rows) in a.iter().chain(&b) {
            let Some(i) = cols.iter().position(|c| *c == var) else { continue };
            let points: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|r| Some((*r.first()?, *r.get(i)?)))
                .filter(|(t, v)| t.is_finite() && v.is_finite())
                .collect();
            if !points.is_empty() {
                lines.push(Line { label: label.clone(), points, ..Line::default() });
            }
        }
        if lines.len() < 2 {
            continue;
        }
        let shown = tcplab_report::names::variable(&var, tcplab_report::plot::largest(&lines));
        tcplab_report::plot::rescale(&mut lines, shown.scale);
        let chart = Chart {
            title: format!("{name}: {var}, the simulator and the Linux kernel"),
            x_label: tcplab_report::plot::TIME_AXIS.into(),
            y_label: shown.label(),
            lines,
            ..Chart::default()
        };
        out.push((format!("compare-{var}"), chart));
    }
    out
}

/// Writes [`series_charts`] into `dir` as `compare-VAR.svg`; returns the paths written.
fn write_plots(sim: &ResultDoc, linux: &ResultDoc, dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, Failure> {
    let bad = |e: &dyn std::fmt::Display| Failure::Run(format!("--plot {}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| bad(&e))?;
    let mut written = Vec::new();
    for (name, chart) in series_charts(sim, linux) {
        let svg = tcplab_report::plot::draw(&chart).map_err(|e| bad(&e))?;
        let path = dir.join(format!("{name}.svg"));
        tcplab_report::write_atomic(&path.to_string_lossy(), &svg).map_err(|e| bad(&e))?;
        written.push(path);
    }
    Ok(written)
}

/// Runs the comparison; `runs` seeds from `seed` (default the scenario's) upwards.
pub fn compare(
    arg: &str,
    set: &[String],
    seed: Option<u64>,
    runs: u32,
    json: Option<&str>,
    plot: Option<&std::path::Path>,
) -> Result<(), Failure> {
    if runs == 0 {
        return Err(Failure::BadInput("--runs 0: accepted: 1 or more".into()));
    }
    // The personality first, so that the user's own knobs still apply on top of it.
    let mut with_linux = vec!["client.stack=\"linux\"".to_string(), "server.stack=\"linux\"".to_string()];
    with_linux.extend(set.iter().cloned());
    let (name, text) = crate::scenario_text(arg)?;
    let s = tcplab_lab::load(&Source { name: &name, text: &text }, &with_linux)
        .map_err(|e: ScenarioError| Failure::BadInput(e.to_string()))?;
    tcplab_lab::linux_backend::check(&s).map_err(|e| Failure::BadInput(format!("{arg}: --backend linux: {e}")))?;
    if plot.is_some() && s.test.series.is_none() {
        return Err(Failure::BadInput(format!(
            "{arg}: --plot draws the connections over time, which test.series samples; accepted with \
             --set test.series=\"10ms\" (or a {{ interval, vars }} table)"
        )));
    }
    if let Some(path) = json.filter(|p| *p != "-") {
        crate::check_output_file("--json", std::path::Path::new(path))?;
    }
    let seed0 = seed.unwrap_or(s.seed);
    let (mut sims, mut linuxes) = (Vec::new(), Vec::new());
    for i in 0..runs as u64 {
        let seed = seed0 + i;
        sims.push(tcplab_lab::run_scenario(&s, seed).map_err(|e| Failure::Run(format!("{arg}: {e}")))?);
        linuxes.push(tcplab_lab::run_scenario_linux(&s, seed).map_err(|e| {
            let m = format!("{arg}: --backend linux: {e}");
            if e.is_usage() {
                Failure::BadInput(m)
            } else {
                Failure::Run(m)
            }
        })?);
    }
    if json != Some("-") {
        print!("{}", crate::terminal_safe(&table(&sims, &linuxes)));
    }
    if let Some(path) = json {
        let (sim_j, linux_j, _) = judged(&sims, &linuxes);
        let summary: Vec<Value> = rows(&sim_j, &linux_j)
            .into_iter()
            .map(|r| json!({ "figure": r.name, "sim": r.sim, "linux": r.linux, "diff": r.diff, "flagged": r.flagged }))
            .collect();
        let both = json!({ "runs": runs, "summary": summary, "sim": sims, "linux": linuxes });
        let mut text = serde_json::to_string_pretty(&both).map_err(|e| Failure::Run(e.to_string()))?;
        text.push('\n');
        tcplab_report::write_atomic(path, &text).map_err(|e| Failure::Run(format!("{path}: cannot write: {e}")))?;
    }
    if let Some(dir) = plot {
        let written = write_plots(&sims[0], &linuxes[0], dir)?;
        if written.is_empty() {
            eprintln!("tcplab: --plot: the two runs share no sampled variable; nothing drawn");
        }
        for p in written {
            eprintln!("tcplab: wrote {}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_follow_each_rows_rule() {
        assert_eq!(difference(Some(9.0), Some(10.0), Rule::Rate), ("-10.0%".to_string(), true));
        assert_eq!(difference(Some(10.2), Some(10.0), Rule::Rate), ("+2.0%".to_string(), false));
        assert_eq!(difference(Some(30.0), Some(10.0), Rule::Count2x), ("x3.00".to_string(), true));
        assert_eq!(difference(Some(3.0), Some(2.0), Rule::Within1), ("+1".to_string(), false));
        assert_eq!(difference(Some(10.9), Some(10.0), Rule::Pct10), ("+9.0%".to_string(), false));
        assert_eq!(difference(Some(8.9), Some(10.0), Rule::Pct10), ("-11.0%".to_string(), true));
        // Both print as 0.00: the same, not -100%.
        assert_eq!(difference(Some(0.0), Some(0.001), Rule::Info), ("=".to_string(), false));
        assert_eq!(difference(Some(0.5), Some(1.0), Rule::Info), ("-50.0%".to_string(), false));
        assert_eq!(difference(None, Some(1.0), Rule::Info), ("-".to_string(), false));
    }

    /// A real (simulated) result of seed `seed`, labelled with a Linux run's validity.
    fn doc(seed: u64, valid: bool) -> ResultDoc {
        let Ok((name, text)) = crate::scenario_text("bulk-10m") else { panic!("bulk-10m is shipped") };
        let s = tcplab_lab::load(&Source { name: &name, text: &text }, &["test.duration=\"1s\"".to_string()]).unwrap();
        let mut d = tcplab_lab::run_scenario(&s, seed).unwrap();
        d.points[0].health = Some(json!({
            "valid": valid,
            "invalid_reasons": ["up: stalled"],
            "up": { "lateness": { "p99_ns": 66_400 }, "wake_lateness": { "max_ns": 1_504_000 } },
            "down": { "lateness": { "p99_ns": 19_000 }, "wake_lateness": { "max_ns": 800_000 } },
        }));
        d
    }

    #[test]
    fn plots_draw_each_shared_series_variable_with_a_line_per_backend() {
        let Ok((name, text)) = crate::scenario_text("bulk-10m") else { panic!("bulk-10m is shipped") };
        let set = ["test.duration=\"1s\"".to_string(), "test.series=\"50ms\"".to_string()];
        let s = tcplab_lab::load(&Source { name: &name, text: &text }, &set).unwrap();
        let sim = tcplab_lab::run_scenario(&s, 1).unwrap();
        // The kernel's document as the Linux backend writes it: the same columns, other values; one
        // variable it did not sample.
        let mut linux = tcplab_lab::run_scenario(&s, 2).unwrap();
        let series = linux.points[0].series.as_mut().unwrap();
        let dropped = series.columns.pop().unwrap();
        for r in &mut series.rows {
            r.pop();
        }
        let charts = series_charts(&sim, &linux);
        // Every shared variable with a value on both backends: not the dropped one, nor `CurSsthresh`
        // while it is infinite (no loss in this run: `null` throughout, nothing to draw).
        let s0 = sim.points[0].series.as_ref().unwrap();
        let finite =
            |d: &ResultDoc, i: usize| d.points[0].series.as_ref().unwrap().rows.iter().any(|r| r[i].is_finite());
        let want: Vec<String> = (1..s0.columns.len())
            .filter(|&i| s0.columns[i] != dropped && finite(&sim, i) && finite(&linux, i))
            .map(|i| format!("compare-{}", s0.columns[i]))
            .collect();
        assert!(want.len() >= 4, "{want:?}");
        assert_eq!(charts.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(), want);
        for (n, c) in &charts {
            let labels: Vec<&str> = c.lines.iter().map(|l| l.label.as_str()).collect();
            assert_eq!(labels, ["simulator", "Linux kernel"], "{n}");
            assert!(c.lines.iter().all(|l| l.points.len() >= 10), "{n}: a point per sample");
            assert!(c.y_label.contains('('), "{n}: the unit in the axis label: {}", c.y_label);
            assert!(tcplab_report::plot::draw(c).unwrap().starts_with("<svg"));
        }
        let cwnd = &charts.iter().find(|(n, _)| n == "compare-CurCwnd").unwrap().1;
        assert!(cwnd.lines[0].points.iter().any(|p| p.1 > 0.0), "the simulator's cwnd is drawn");
    }

    #[test]
    fn means_are_over_the_seeds_whose_linux_run_is_valid() {
        let sim = [doc(1, true), doc(2, true), doc(3, true)];
        let (s, l, any) = judged(&sim, &[doc(1, false), doc(2, true), doc(3, false)]);
        assert!(any);
        assert_eq!(s.iter().map(|d| d.seed).collect::<Vec<_>>(), [2]);
        assert_eq!(l.iter().map(|d| d.seed).collect::<Vec<_>>(), [2]);
        let t = table(&sim, &[doc(1, false), doc(2, true), doc(3, false)]);
        assert!(t.contains("means of the 1 seed whose Linux run is valid"), "{t}");
        assert!(t.contains("!! linux run 0 (seed 1) INVALID"), "{t}");
        assert!(t.contains("p99 release lateness up/down, us: 66/19, 66/19, 66/19;"), "{t}");
        assert!(t.contains("longest emulator stall up/down, ms: 1.50/0.80, 1.50/0.80, 1.50/0.80"), "{t}");
    }

    #[test]
    fn parallel_streams_get_ranked_rows_that_add_up_and_a_qdisc_its_counters() {
        let Ok((name, text)) = crate::scenario_text("bulk-10m") else { panic!("bulk-10m is shipped") };
        let set =
            ["test.duration=\"2s\"", "test.parallel=2", "path.up.qdisc={kind=\"codel\"}", "path.up.queue=\"1000pkt\""];
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        let s = tcplab_lab::load(&Source { name: &name, text: &text }, &set).unwrap();
        let d = tcplab_lab::run_scenario(&s, 1).unwrap();
        let f = figures(&d);
        let get = |n: &str| f.iter().find(|(k, _, _)| k == n).and_then(|(_, _, v)| *v).unwrap_or_else(|| panic!("{n}"));
        let (g1, g2) = (get("stream 1 goodput, Mbit/s"), get("stream 2 goodput, Mbit/s"));
        assert!(g1 >= g2 && g2 > 0.0);
        assert!((g1 + g2 - get("throughput, Mbit/s")).abs() < 1e-9);
        let j = get("Jain's index of the streams");
        assert!((j - (g1 + g2).powi(2) / (2.0 * (g1 * g1 + g2 * g2))).abs() < 1e-12);
        assert!(get("up qdisc AQM drops") > 0.0 && get("up qdisc sojourn mean, ms") > 0.0);
        assert!(get("stream 1 sender SmoothedRTT") > 40.0);
        // One stream on a FIFO: the table of before, without these rows.
        let s = tcplab_lab::load(&Source { name: &name, text: &text }, &["test.duration=\"1s\"".to_string()]).unwrap();
        let f = figures(&tcplab_lab::run_scenario(&s, 1).unwrap());
        assert!(f.iter().all(|(k, _, _)| !k.starts_with("stream ") && !k.starts_with("up ")));
    }

    #[test]
    fn with_no_valid_run_every_seed_counts_and_the_table_says_so() {
        let sim = [doc(1, true), doc(2, true)];
        let linux = [doc(1, false), doc(2, false)];
        let (s, l, any) = judged(&sim, &linux);
        assert!(!any);
        assert_eq!((s.len(), l.len()), (2, 2));
        let t = table(&sim, &linux);
        assert!(t.contains("no Linux run was valid"), "{t}");
        assert!(t.contains("means of 2 runs"), "{t}");
    }
}
