//! The Linux backend: the scenario's test on the kernel's TCP in two network namespaces, through tcplab's own
//! link emulator (crates/emu, docs/linux-backend.md). The applications are the simulator's own (built by
//! [`crate::sim_backend::sim_spec`]), driven over real sockets by `tcplab_emu::run_apps`; their reports
//! become a [`BackendRun`] like the simulator's, with the run's health and the machine's measured CPU
//! beside it.

use tcplab_emu::{AppsRun, ConnEnd, EmuError, Health, PcapSpec, Side, TestbedSpec};
use tcplab_units::Duration;

use crate::error::{Origin, ScenarioError};
use crate::result::{BackendRun, ConnectionResult, EngineCounters, LinkCounters, Links, NicCounters};
use crate::scenario::{Protocol, Scenario, TestKind};
use crate::sim_backend::sim_spec;
use tcplab_tcp::TcpConfig;

/// Why the Linux backend cannot run a scenario.
#[derive(Debug)]
pub enum LinuxError {
    /// What the scenario asks for and the kernel cannot do: every such key at once, bad input (exit
    /// status 2).
    Refused(Vec<Refusal>),
    /// From crates/emu: usage errors (not root, not Linux, a knob Linux cannot express) are bad input.
    Emu(EmuError),
    /// A sweep point that does not validate (built as the plan is translated for the kernel): bad input.
    Point(crate::ScenarioError),
}

impl LinuxError {
    /// Bad input (exit status 2) rather than a failed run.
    pub fn is_usage(&self) -> bool {
        match self {
            LinuxError::Refused(_) => true,
            LinuxError::Emu(e) => e.is_usage(),
            LinuxError::Point(_) => true,
        }
    }
}

impl std::fmt::Display for LinuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinuxError::Refused(r) => {
                let n = r.len();
                write!(
                    f,
                    "the kernel cannot honour {} the scenario sets (docs/linux-backend.md § Scenarios on the \
                     kernel):",
                    if n == 1 { "one value".to_string() } else { format!("{n} values") }
                )?;
                for r in r {
                    write!(f, "\n  {r}")?;
                }
                Ok(())
            }
            LinuxError::Emu(e) => write!(f, "{e}"),
            LinuxError::Point(e) => write!(f, "{e}"),
        }
    }
}

/// A value the scenario sets that the kernel cannot honour: where it was written, the key, the value
/// and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The file and line, or the flag (`--set`, `--sweep`); `None` for a combination no one key made.
    pub origin: Option<Origin>,
    /// The scenario key as written (`client.tcp.time_wait`, `sweep.client.stack`, `test.kind`).
    pub key: String,
    /// The value as the scenario spells it; for a swept key, the values refused.
    pub value: String,
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = ScenarioError {
            origin: self.origin.clone().unwrap_or(Origin::Cli { flag: "scenario".into() }),
            key: String::new(),
            message: String::new(),
        };
        write!(f, "{}{} = {}: {}", at, self.key, self.value, self.reason)
    }
}

/// A default of a host's personality that the kernel replaces with its own value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// `client` or `server`.
    pub side: &'static str,
    /// The personality the value came from.
    pub stack: String,
    /// The knob under the host (`tcp.recv_window_ratio`, `tcp.cubic.hystart`, `host.rx_coalesce`).
    pub knob: String,
    /// The personality's value and the kernel's, as the scenario file spells them.
    pub from: String,
    pub to: String,
}

/// The defaults the kernel replaces, as one warning: a line per host (hosts with the same list share
/// one), or `None` when the scenario's stacks are the kernel's.
pub fn replaced_warning(replaced: &[Replaced]) -> Option<String> {
    if replaced.is_empty() {
        return None;
    }
    let mut lines: Vec<(Vec<&'static str>, String, String)> = Vec::new();
    for side in ["client", "server"] {
        let mine: Vec<&Replaced> = replaced.iter().filter(|r| r.side == side).collect();
        let Some(first) = mine.first() else { continue };
        let list: Vec<String> = mine.iter().map(|r| format!("{} {} -> {}", r.knob, r.from, r.to)).collect();
        let list = list.join(", ");
        match lines.iter_mut().find(|(_, stack, l)| *stack == first.stack && *l == list) {
            Some((sides, _, _)) => sides.push(side),
            None => lines.push((vec![side], first.stack.clone(), list)),
        }
    }
    let mut out = String::from(
        "--backend linux runs the kernel's own TCP: what the scenario leaves to its hosts' personalities is the \
         kernel's instead (set a knob to keep its value; the kernel's refusals are named):",
    );
    for (sides, stack, list) in lines {
        let mut line = format!("\n  {} (stack {stack:?}):", sides.join(" and "));
        // Wrapped at 100 columns, continued with a deeper indent.
        let mut width = line.len() - 1;
        for item in list.split(", ") {
            if width + item.len() + 2 > 100 {
                line += "\n     ";
                width = 5;
            }
            line += " ";
            line += item;
            line += ",";
            width += item.len() + 2;
        }
        out += line.trim_end_matches(',');
    }
    Some(out)
}

/// The scenario as the kernel runs it, with the defaults replaced: each host is the `linux` personality
/// (the kernel's own TCP) with every value the scenario sets on top of it (its `client.tcp`/`server.tcp`
/// keys, `test.send_buffer`, `test.recv_buffer`, `test.nodelay`, `host.rx_coalesce`). The values the
/// kernel cannot honour are left for [`check`] to refuse; what replaced a personality's default is
/// returned beside.
pub fn on_kernel(s: &Scenario) -> (Scenario, Vec<Replaced>) {
    let mut k = s.clone();
    let mut replaced = Vec::new();
    let (sender, receiver) = if s.test.kind == TestKind::Maerts { ("server", "client") } else { ("client", "server") };
    for (side, host) in [("client", &mut k.client), ("server", &mut k.server)] {
        // The knobs (within `tcp`) the scenario sets for this host.
        let prefix = format!("{side}.tcp.");
        let mut set: Vec<String> =
            s.explicit.keys().filter_map(|key| key.strip_prefix(&prefix)).map(str::to_string).collect();
        for (key, knob, applies) in [
            ("test.send_buffer", "send_buffer", side == sender),
            ("test.recv_buffer", "recv_buffer", side == receiver),
            ("test.nodelay", "nodelay", true),
        ] {
            if applies && s.explicit.contains_key(key) {
                set.push(knob.into());
            }
        }
        let linux = TcpConfig::personality("linux").expect("the linux personality exists");
        let mine = serde_json::to_value(host.tcp()).expect("a TcpConfig serializes");
        let mut tcp = serde_json::to_value(&linux).expect("a TcpConfig serializes");
        for knob in &set {
            let path: Vec<&str> = knob.split('.').collect();
            if let (Some(v), Some(slot)) = (leaf(&mine, &path), leaf_mut(&mut tcp, &path)) {
                *slot = v.clone();
            }
        }
        let tcp: TcpConfig = serde_json::from_value(tcp).expect("a TcpConfig's own values deserialize");
        if host.stack != "linux" {
            let (theirs, ours) = (serde_json::to_value(&tcp).unwrap_or_default(), mine);
            for (knob, _) in tcplab_tcp::config::KNOBS {
                let mut diff = Vec::new();
                differing(knob, ours.get(*knob), theirs.get(*knob), &mut diff);
                for (knob, from, to) in diff {
                    replaced.push(Replaced { side, stack: host.stack.clone(), knob: format!("tcp.{knob}"), from, to });
                }
            }
        }
        *host.tcp_mut() = tcp;
        if !s.explicit.contains_key(&format!("{side}.host.rx_coalesce")) {
            let kernel = crate::scenario::default_rx_coalesce("linux");
            if host.host.rx_coalesce() != kernel {
                replaced.push(Replaced {
                    side,
                    stack: host.stack.clone(),
                    knob: "host.rx_coalesce".into(),
                    from: format!("{:?}", host.host.rx_coalesce().to_string()),
                    to: format!("{:?}", kernel.to_string()),
                });
            }
            host.host.rx_coalesce = Some(kernel);
        }
        host.stack = "linux".into();
    }
    (k, replaced)
}

fn leaf<'a>(v: &'a serde_json::Value, path: &[&str]) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn leaf_mut<'a>(v: &'a mut serde_json::Value, path: &[&str]) -> Option<&'a mut serde_json::Value> {
    path.iter().try_fold(v, |v, k| v.get_mut(k))
}

/// The leaves that differ between two knobs' values (a table of knobs field by field), as (dotted path,
/// ours, theirs).
fn differing(
    path: &str,
    ours: Option<&serde_json::Value>,
    theirs: Option<&serde_json::Value>,
    out: &mut Vec<(String, String, String)>,
) {
    use serde_json::Value;
    match (ours, theirs) {
        (Some(Value::Object(o)), Some(Value::Object(t))) => {
            for (k, v) in o {
                differing(&format!("{path}.{k}"), Some(v), t.get(k), out);
            }
        }
        (o, t) if o != t => {
            let show = |v: Option<&Value>| v.map_or_else(|| "(none)".to_string(), Value::to_string);
            out.push((path.to_string(), show(o), show(t)))
        }
        _ => {}
    }
}

/// Where the scenario set the knob `knob` (within `tcp`, e.g. `cubic.c`) of `side`: the key as written
/// and its origin.
fn knob_origin(s: &Scenario, side: &str, knob: &str) -> Option<(String, Origin)> {
    let key = format!("{side}.tcp.{knob}");
    if let Some(o) = s.explicit.get(&key) {
        return Some((key, o.clone()));
    }
    if let Some((k, o)) = s.explicit.iter().find(|(k, _)| k.starts_with(&format!("{key}."))) {
        return Some((k.clone(), o.clone()));
    }
    let (sender, receiver) = if s.test.kind == TestKind::Maerts { ("server", "client") } else { ("client", "server") };
    let test = match knob {
        "send_buffer" if side == sender => "test.send_buffer",
        "recv_buffer" if side == receiver => "test.recv_buffer",
        "nodelay" => "test.nodelay",
        _ => return None,
    };
    s.explicit.get(test).map(|o| (test.to_string(), o.clone()))
}

/// Refusals in the order of the file's lines; flags after the file, in the order given.
pub(crate) fn in_file_order(r: &mut [Refusal]) {
    r.sort_by_key(|r| match &r.origin {
        Some(Origin::File { line, .. }) => (0, line.unwrap_or(usize::MAX)),
        _ => (1, 0),
    });
}

/// Where the scenario set `key`, or the first key under it (`client.host.cpu` for `client.host.cpu.cores`).
fn origin_at(s: &Scenario, key: &str) -> Option<Origin> {
    let under = format!("{key}.");
    s.explicit.get(key).or_else(|| s.explicit.iter().find(|(k, _)| k.starts_with(&under)).map(|(_, o)| o)).cloned()
}

/// What the Linux backend runs, or every value the scenario sets that the kernel cannot honour, at once
/// (each with where it was written). Defaults of the hosts' personalities are not refused: the kernel
/// replaces them ([`on_kernel`]).
pub fn check(s: &Scenario) -> Result<(), LinuxError> {
    let mut refusals = refusals(s);
    in_file_order(&mut refusals);
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(LinuxError::Refused(refusals))
    }
}

/// Every value `s` sets that the kernel cannot honour.
pub fn refusals(s: &Scenario) -> Vec<Refusal> {
    if let Some((key, value, reason)) = crate::topology::linux_refusal(s) {
        return vec![Refusal { origin: origin_at(s, key), key: key.into(), value, reason }];
    }
    let mut out = Vec::new();
    let mut refuse = |key: &str, value: String, reason: String| {
        out.push(Refusal { origin: origin_at(s, key), key: key.into(), value, reason });
    };
    // Topologies beyond two hosts (issue 24): the emulator runs one path between two namespaces.
    if s.dumbbell.is_some() {
        refuse(
            "dumbbell",
            format!("{} flows", s.flow.len()),
            "the Linux backend runs the two-host shape (a client and a server on one emulated path); a \
             [dumbbell] of flows sharing a bottleneck runs on the simulator only (docs/topology.md)"
                .into(),
        );
        return out;
    }
    // The kernel runs TCP only: any other transport is refused by name.
    if s.test.transport != Protocol::TCP {
        refuse(
            "test.kind",
            format!("{:?}", s.test.kind_name()),
            format!(
                "the kernel has no {}; the Linux backend runs \"tcp_stream\", \"tcp_maerts\", \"tcp_rr\", \
                 \"tcp_crr\" and \"tcp_msg\"",
                s.test.transport.key().to_uppercase()
            ),
        );
    }
    // `test.series` samples the connections' TCP_INFO (docs/linux-backend.md § Connections over time): a
    // variable the kernel has no source for, asked by `vars` or drawn by a `[[plot]]`, is refused by name.
    if let Some(d) = s.test.series {
        // What a series may ask for is the simulator's names (the scenario checks them): the kernel's
        // among those.
        let sim = crate::columns::estats_vars();
        let kernel: Vec<&str> =
            tcplab_emu::kstats::kernel_vars().into_iter().filter(|v| sim.iter().any(|s| s == v)).collect();
        let derived = ["t_s", "delivered_bytes", "throughput_bps"];
        let mut missing: Vec<&str> = Vec::new();
        let asked =
            s.test.series_vars.iter().flatten().chain(s.plot.iter().filter_map(|p| p.series.as_ref()).flatten());
        for v in asked {
            if !kernel.contains(&v.as_str()) && !derived.contains(&v.as_str()) && !missing.contains(&v.as_str()) {
                missing.push(v);
            }
        }
        if !missing.is_empty() {
            let value = match &s.test.series_vars {
                Some(vars) => format!("{{ interval = {:?}, vars = {vars:?} }}", d.to_string()),
                None => format!("{:?}", d.to_string()),
            };
            refuse(
                "test.series",
                value,
                format!(
                    "the kernel's TCP_INFO and TCP_CC_INFO have no {} (the simulator's TCP only); on the Linux \
                     backend a series (`vars`, or a [[plot]] of `series`) samples {}",
                    missing.join(", "),
                    kernel.join(", ")
                ),
            );
        }
    }
    for (key, link) in [("path.up", &s.path.up), ("path.down", &s.path.down)] {
        if let Some(mtu) = link.mtu {
            refuse(
                &format!("{key}.mtu"),
                format!("{:?}", mtu.to_string()),
                "IP fragmentation is simulated only; the TUN devices' MTU is 1500".into(),
            );
        }
    }
    for (side, h) in [("client", &s.client), ("server", &s.server)] {
        if let Some(rate) = h.host.nic_rate {
            refuse(
                &format!("{side}.host.nic_rate"),
                format!("{:?}", rate.to_string()),
                "the Linux backend has no NIC model (the TUN device is faster than the path); put the rate on \
                 the path"
                    .into(),
            );
        }
        if !h.host.nic_frame_time.is_zero() {
            refuse(
                &format!("{side}.host.nic_frame_time"),
                format!("{:?}", h.host.nic_frame_time.to_string()),
                "the Linux backend has no NIC model (the TUN device takes no time per frame)".into(),
            );
        }
        let key = format!("{side}.host.txqueuelen");
        if s.explicit.contains_key(&key) {
            refuse(
                &key,
                h.host.txqueuelen.to_string(),
                "the transmit queue of the NIC model, which the Linux backend does not have".into(),
            );
        }
        if let Some(cpu) = &h.host.cpu {
            refuse(
                &format!("{side}.host.cpu"),
                toml::Value::try_from(cpu).map_or_else(|_| "{ … }".into(), |v| v.to_string()),
                "the simulator's CPU cost model; on the Linux backend the machine's own CPU does the work, and is \
                 measured (/proc/stat)"
                    .into(),
            );
        }
    }
    if s.server.host.ephemeral_ports != crate::scenario::PortRange::default() {
        refuse(
            "server.host.ephemeral_ports",
            format!("{:?}", s.server.host.ephemeral_ports.to_string()),
            "the server opens no connections; only client.host.ephemeral_ports is used".into(),
        );
    }
    // The TCP knobs, on the hosts as the kernel runs them: what is left to refuse was set by the scenario.
    let (k, _) = on_kernel(s);
    for (side, h) in [("client", &k.client), ("server", &k.server)] {
        let Err(errors) = tcplab_emu::linux_tcp_all(h.tcp(), side) else { continue };
        for e in errors {
            let EmuError::Knob { knob, value, reason, .. } = e else { continue };
            let (key, origin) = match knob_origin(s, side, &knob) {
                Some((key, o)) if key.starts_with("test.") => (key, Some(o)),
                Some((_, o)) => (format!("{side}.tcp.{knob}"), Some(o)),
                None if knob.is_empty() => (format!("{side}.tcp"), None),
                None => (format!("{side}.tcp.{knob}"), None),
            };
            out.push(Refusal { origin, key, value, reason });
        }
    }
    out
}

/// How many times a run whose health is bad (late releases, hidden drops) is repeated before it is reported
/// as it is, marked invalid.
pub const ATTEMPTS: u32 = 3;

/// One point on the Linux backend.
pub struct LinuxRun {
    pub run: BackendRun,
    /// The health of the run reported (the last attempt's).
    pub health: Health,
    /// Runs made to get it (a run whose health was bad is repeated).
    pub attempts: u32,
    /// `/proc/net/netstat` and `/proc/net/snmp` deltas of the client's and the server's namespace.
    pub netstat: [tcplab_emu::kstats::NetCounters; 2],
    /// Whether the applications' thread ran at a real-time priority.
    pub apps_realtime: bool,
    /// With `test.series`: what sampling the connections cost and how late its readings were.
    pub series_sampling: Option<SeriesSampling>,
}

/// The cost and timing of the connections' series on the kernel (`health.series_sampling`).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct SeriesSampling {
    /// Ticks sampled, and ticks passed over because the applications' loop reached them more than an
    /// interval late.
    pub ticks: u64,
    pub ticks_missed: u64,
    /// How long after its tick's edge a reading was taken: the mean and the largest, µs.
    pub late_us_mean: f64,
    pub late_us_max: f64,
    /// The applications' thread's time spent reading, ms in all and µs per tick.
    pub cost_ms: f64,
    pub cost_us_per_tick: f64,
    /// `getsockopt` calls made (TCP_INFO and TCP_CC_INFO per end and tick).
    pub reads: u64,
}

fn sampling(c: &tcplab_emu::ConnSeries) -> SeriesSampling {
    let ticks = c.ticks_ns.len() as u64;
    let per_tick = |ns: u64| if ticks == 0 { 0.0 } else { ns as f64 / ticks as f64 / 1e3 };
    SeriesSampling {
        ticks,
        ticks_missed: c.ticks_missed,
        late_us_mean: per_tick(c.late_ns_sum),
        late_us_max: c.late_ns_max as f64 / 1e3,
        cost_ms: c.cost_ns as f64 / 1e6,
        cost_us_per_tick: per_tick(c.cost_ns),
        reads: c.reads,
    }
}

/// The connections' series as the simulator's document holds them: `series` (the first sending end's
/// default columns) for `test.series = "INTERVAL"`, `logvars` (every end, the variables asked for) for
/// the `{ interval, vars }` form.
fn conn_series(
    c: &tcplab_emu::ConnSeries,
    r: &AppsRun,
    logvars: bool,
    sender: &str,
) -> (Option<crate::result::Series>, Option<crate::result::LogVars>) {
    use crate::result::exact_secs;
    let at = |tick: u32| exact_secs(c.ticks_ns[tick as usize]);
    let interval_s = exact_secs(c.interval_ns);
    let window = |ns: u64| (r.measure_stop_ns > 0 || ns > 0).then(|| exact_secs(ns));
    let (measure_start_s, measure_end_s) = (window(r.measure_start_ns), window(r.measure_stop_ns));
    if !logvars {
        let rows = c
            .ends
            .iter()
            .find(|e| e.side == sender)
            .map(|e| {
                e.rows
                    .iter()
                    .map(|(tick, v, _)| std::iter::once(at(*tick)).chain(v.iter().copied()).collect())
                    .collect()
            })
            .unwrap_or_default();
        let series = crate::result::Series {
            interval_s,
            measure_start_s,
            measure_end_s,
            columns: crate::columns::SERIES_COLUMNS.to_vec(),
            rows,
        };
        return (Some(series), None);
    }
    let mut columns = vec!["t_s".to_string()];
    columns.extend(c.vars.iter().cloned());
    columns.extend(["delivered_bytes".to_string(), "throughput_bps".to_string()]);
    let ends = c
        .ends
        .iter()
        .map(|e| {
            let mut delivered = 0;
            let rows = e
                .rows
                .iter()
                .map(|(tick, v, read)| {
                    // The interval this sample closes: since the tick before (the window's opening closes a
                    // shorter one), as the simulator's probe counts it.
                    let t = c.ticks_ns[*tick as usize];
                    let before = tick.checked_sub(1).map_or(0, |k| c.ticks_ns[k as usize]);
                    let span = exact_secs(t.saturating_sub(before));
                    let step = read.saturating_sub(delivered);
                    delivered = *read;
                    let mut row = vec![exact_secs(t)];
                    row.extend(v.iter().copied());
                    row.push(step as f64);
                    row.push(if span > 0.0 { step as f64 * 8.0 / span } else { 0.0 });
                    row
                })
                .collect();
            crate::result::EndSeries {
                id: e.id,
                side: e.side,
                local_port: e.local_port,
                remote_port: e.remote_port,
                rows,
                delivered,
            }
        })
        .collect();
    let lv = crate::result::LogVars { interval_s, measure_start_s, measure_end_s, columns, ends };
    (None, Some(lv))
}

/// Runs the scenario's point on the Linux backend as the kernel runs it ([`on_kernel`]: the hosts'
/// personalities' defaults are the kernel's), repeating a run whose health is bad (up to [`ATTEMPTS`]
/// runs); `pcap` takes a trace from the emulator's tap.
pub fn run(s: &Scenario, seed: u64, pcap: Option<PcapSpec>) -> Result<LinuxRun, LinuxError> {
    check(s)?;
    let (k, _) = on_kernel(s);
    let s = &k;
    let spec = sim_spec(s);
    let lin = LinuxError::Emu;
    let ports = &s.client.host.ephemeral_ports;
    let tb = TestbedSpec {
        up: s.path.up.clone(),
        down: s.path.down.clone(),
        client: s.client.tcp().clone(),
        server: s.server.tcp().clone(),
        seed,
        up_drop_frames: Vec::new(),
        down_drop_frames: Vec::new(),
        // Each direction coalesces as the host it delivers to: up for the server, down for the client.
        emulator: tcplab_emu::EmulatorConfig {
            pcap,
            queue_series: s.test.series,
            coalesce: [s.server.host.rx_coalesce(), s.client.host.rx_coalesce()],
            ..Default::default()
        },
        limits: Default::default(),
        client_ports: (*ports != crate::scenario::PortRange::default()).then_some((ports.low, ports.high)),
    };
    let mut attempt = 0;
    loop {
        attempt += 1;
        let apps = spec
            .apps
            .iter()
            .map(|a| (if a.host == tcplab_sim::CLIENT { Side::Client } else { Side::Server }, a.app.clone()))
            .collect();
        let mut apps = tcplab_emu::AppsSpec::new(apps, spec.measure);
        // TCP_CRR makes two ends per transaction: keep the first ones' statistics, as the simulator does.
        if s.test.kind == TestKind::Crr {
            apps.keep_connections = 2 * s.test.parallel.max(1) as usize;
        }
        apps.series = s.test.series.map(|interval| tcplab_emu::SeriesSpec {
            interval,
            vars: match &s.test.series_vars {
                Some(vars) => vars.clone(),
                None => crate::columns::SERIES_COLUMNS[1..].iter().map(|c| c.to_string()).collect(),
            },
        });
        let (run, health) = run_once(&tb, apps).map_err(lin)?;
        if health.valid || attempt >= ATTEMPTS {
            let sender = if s.test.kind == TestKind::Maerts { "server" } else { "client" };
            return Ok(LinuxRun {
                series_sampling: run.series.as_ref().map(sampling),
                run: backend_run(&run, &health, s.test.series, s.test.series_vars.is_some(), sender),
                health,
                attempts: attempt,
                netstat: [run.client_netstat, run.server_netstat],
                apps_realtime: run.realtime,
            });
        }
    }
}

#[cfg(target_os = "linux")]
fn run_once(tb: &TestbedSpec, apps: tcplab_emu::AppsSpec) -> Result<(AppsRun, Health), EmuError> {
    let mut bed = tcplab_emu::Testbed::start(tb)?;
    let run = tcplab_emu::run_apps(&bed, apps)?;
    let health = bed.finish()?;
    Ok((run, health))
}

#[cfg(not(target_os = "linux"))]
fn run_once(_: &TestbedSpec, _: tcplab_emu::AppsSpec) -> Result<(AppsRun, Health), EmuError> {
    Err(tcplab_emu::check_environment().expect_err("the Linux backend needs Linux"))
}

/// Connection ends paired as the simulator lists them: each client end followed by its server end (the
/// server end whose remote port is the client end's local port); unpaired ends after.
fn paired(ends: &[ConnEnd]) -> Vec<&ConnEnd> {
    let mut out = Vec::new();
    let mut used = vec![false; ends.len()];
    for (i, c) in ends.iter().enumerate().filter(|(_, e)| e.side == "client") {
        used[i] = true;
        out.push(c);
        if let Some(j) = ends.iter().enumerate().position(|(j, e)| {
            !used[j] && e.side == "server" && e.remote_port == c.local_port && e.local_port == c.remote_port
        }) {
            used[j] = true;
            out.push(&ends[j]);
        }
    }
    out.extend(ends.iter().enumerate().filter(|(i, _)| !used[*i]).map(|(_, e)| e));
    out
}

fn backend_run(r: &AppsRun, h: &Health, series: Option<Duration>, logvars: bool, sender: &str) -> BackendRun {
    let conn = |e: &ConnEnd| ConnectionResult {
        side: e.side,
        protocol: "tcp",
        state: e.state.clone(),
        estats: serde_json::to_value(&e.estats).expect("statistics serialize").into(),
    };
    // The qdisc's counters as the simulator reports them (present on the generic path only).
    let link = |d: &tcplab_emu::DirectionHealth| LinkCounters {
        drops_random_loss: d.link.drops_random_loss + d.drops_scripted,
        ..crate::sim_backend::link_counters(d.link, d.qdisc)
    };
    let nic = |frames: u64| NicCounters { frames_sent: frames, refused_full: 0, max_queue_frames: 0 };
    let tables = r.series.as_ref().map_or((None, None), |c| conn_series(c, r, logvars, sender));
    // The machine's CPU, measured over the window, stands for both ends (they share it), as netperf's
    // system-wide figures do when both ends run on one host.
    let cpu = r.cpu.map(|c| tcplab_sim::CpuReport {
        cores: c.cpus,
        busy_window: Duration::from_secs_f64(c.busy_s),
        busy_total: Duration::from_secs_f64(c.busy_s),
    });
    BackendRun {
        apps: r
            .apps
            .iter()
            .map(|(side, a)| (if *side == Side::Client { "client" } else { "server" }, a.report()))
            .collect(),
        connections: paired(&r.connections).into_iter().map(conn).collect(),
        retransmissions: r.retransmissions,
        links: Links {
            up: link(&h.up),
            down: link(&h.down),
            nic_client: nic(h.up.link.frames_in),
            nic_server: nic(h.down.link.frames_in),
            ip_client: None,
            ip_server: None,
            directions: crate::queues::two_hosts(link(&h.up), link(&h.down)),
            queue_series: series.map(|interval| {
                let at = tcplab_units::Instant::from_nanos;
                crate::queues::from_emulator(
                    interval,
                    &h.up.queue_ticks,
                    &h.down.queue_ticks,
                    (at(r.measure_start_ns), at(r.measure_stop_ns)),
                    at(r.end_ns),
                )
            }),
        },
        series: tables.0,
        logvars: tables.1,
        engine: EngineCounters::default(),
        cpu: [cpu, cpu],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{load, Source};

    const FILE: &str = "name = \"t\"\n\
        [path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n\
        [client]\nstack = \"rfc\"\ntcp = { rto_min = \"300ms\", nagle_last_sent = true }\n\
        [server.tcp]\ntime_wait = \"1s\"\n\
        [test]\nkind = \"tcp_stream\"\nduration = \"1s\"\nsend_buffer = \"256KiB\"\nrecv_buffer = \"128KiB\"\n";

    fn scenario(set: &[&str]) -> Scenario {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        load(&Source { name: "t.toml", text: FILE }, &set).unwrap()
    }

    #[test]
    fn the_kernel_keeps_what_the_scenario_sets_and_replaces_the_rest() {
        let s = scenario(&[]);
        let (k, replaced) = on_kernel(&s);
        let linux = TcpConfig::personality("linux").unwrap();
        assert_eq!((k.client.stack.as_str(), k.server.stack.as_str()), ("linux", "linux"));
        // Set by the scenario: kept (test.send_buffer on the sender, test.recv_buffer on the receiver).
        assert_eq!(k.client.tcp().rto_min, Duration::from_millis(300));
        assert_eq!(k.client.tcp().send_buffer.bytes(), 256 << 10);
        assert_eq!(k.server.tcp().recv_buffer.bytes(), 128 << 10);
        assert!(k.client.tcp().nagle_last_sent);
        // Left to "rfc": the kernel's.
        assert_eq!(k.server.tcp().rto_min, linux.rto_min);
        assert_eq!(k.client.tcp().recv_window_ratio, linux.recv_window_ratio);
        assert_eq!(k.client.tcp().congestion_control, linux.congestion_control);
        assert_eq!(k.client.host.rx_coalesce(), Duration::from_micros(50));
        let has = |side: &str, knob: &str| replaced.iter().any(|r| r.side == side && r.knob == knob);
        assert!(has("client", "tcp.recv_window_ratio") && has("server", "tcp.rto_min"));
        assert!(has("client", "host.rx_coalesce") && has("client", "tcp.cubic.hystart"));
        assert!(!has("client", "tcp.rto_min"), "the scenario set it");
        let w = replaced_warning(&replaced).unwrap();
        assert!(w.contains("tcp.recv_window_ratio 1.0 -> 1.25"), "{w}");
        // Running the kernel's scenario again changes nothing.
        assert_eq!(on_kernel(&k).0, k);
        assert!(on_kernel(&k).1.is_empty());
    }

    #[test]
    fn qdiscs_and_jitter_run_on_the_kernel_and_a_dumbbell_is_refused_by_name() {
        let s = scenario(&[
            "client.tcp.nagle_last_sent=false",
            "server.tcp.time_wait=\"60s\"",
            "path.up.qdisc={kind=\"codel\", ecn=true}",
            "path.up.jitter=\"1ms\"",
            "path.up.reorder=true",
        ]);
        check(&s).unwrap();
        let text = "name = \"d\"\n[dumbbell]\nbottleneck = { rate = \"10mbit\", delay = \"10ms\" }\n\
            [test]\nduration = \"1s\"\n[[flow]]\nkind = \"stream\"\n[[flow]]\nkind = \"stream\"\n";
        let d = load(&Source { name: "d.toml", text }, &[]).unwrap();
        let Err(LinuxError::Refused(r)) = check(&d) else { panic!("refused") };
        assert_eq!(r.len(), 1);
        assert!(
            r[0].to_string().starts_with("d.toml:3: dumbbell = 2 flows: the Linux backend runs the two-host shape"),
            "{}",
            r[0]
        );
    }

    /// `test.series` samples the connections on the kernel too; a variable the kernel has no source for,
    /// asked by `vars` or drawn by a `[[plot]]`, is refused by name with the ones it has.
    #[test]
    fn connection_series_run_on_the_kernel_and_the_simulators_own_variables_are_refused() {
        let ok = ["client.tcp.nagle_last_sent=false", "server.tcp.time_wait=\"60s\""];
        let with = |extra: &[&str]| scenario(&[&ok[..], extra].concat());
        check(&with(&["test.series=\"100ms\""])).unwrap();
        check(&with(&["test.series={interval=\"100ms\",vars=[\"CurCwnd\",\"X_BbrMode\",\"X_PacingRate\"]}"])).unwrap();
        let asked = "test.series={interval=\"100ms\",vars=[\"CurCwnd\",\"X_BbrRounds\",\"SendStall\"]}";
        let Err(LinuxError::Refused(r)) = check(&with(&[asked])) else { panic!("refused") };
        assert_eq!(r.len(), 1, "{r:?}");
        assert_eq!(r[0].key, "test.series");
        assert!(r[0].reason.contains("have no X_BbrRounds, SendStall ("), "{}", r[0]);
        assert!(r[0].reason.contains("CurCwnd") && r[0].reason.contains("X_BbrMode"), "{}", r[0]);
        assert!(!r[0].reason.contains("CurAppWQueue"), "not a name a series can ask for: {}", r[0]);
        let plotted = format!("{FILE}series = \"100ms\"\n[[plot]]\nseries = [\"SmoothedRTT\"]\n");
        let s = load(&Source { name: "p.toml", text: &plotted }, &ok.map(String::from)).unwrap();
        check(&s).unwrap();
        let plotted = format!(
            "{FILE}series = {{ interval = \"100ms\", vars = [\"SendStall\"] }}\n[[plot]]\nseries = [\"SendStall\"]\n"
        );
        let s = load(&Source { name: "p.toml", text: &plotted }, &ok.map(String::from)).unwrap();
        let Err(LinuxError::Refused(r)) = check(&s) else { panic!("refused") };
        assert!(r.len() == 1 && r[0].key == "test.series" && r[0].reason.contains("no SendStall ("), "{r:?}");
    }

    /// The kernel's series offers the simulator's names; the few it has beyond them cannot be asked for
    /// (`test.series.vars` takes the simulator's), and are listed in docs/linux-backend.md.
    #[test]
    fn the_kernels_variables_are_the_simulators_names() {
        let sim = crate::columns::estats_vars();
        let kernel = tcplab_emu::kstats::kernel_vars();
        let beyond: Vec<&str> = kernel.iter().copied().filter(|v| !sim.iter().any(|s| s == v)).collect();
        assert_eq!(beyond, ["CurAppWQueue", "RetranThresh"], "{kernel:?}");
        for v in ["CurCwnd", "CurSsthresh", "PipeSize", "SmoothedRTT", "RTTVar", "CurRTO", "X_PacingRate"] {
            assert!(kernel.contains(&v), "{v}");
        }
        for v in ["X_DeliveryRate", "X_BbrMode", "X_BbrBtlBw", "X_BbrMinRTT", "X_BbrProbeRttEpisodes"] {
            assert!(kernel.contains(&v), "{v}");
        }
    }

    #[test]
    fn every_value_the_kernel_cannot_honour_is_refused_at_once_where_it_was_written() {
        let s = scenario(&["client.tcp.rto_initial=\"3s\"", "client.host.nic_rate=\"1gbit\""]);
        let Err(LinuxError::Refused(r)) = check(&s) else { panic!("refused") };
        let shown: Vec<String> = r.iter().map(|r| r.to_string()).collect();
        let find = |key: &str| shown.iter().find(|l| l.contains(key)).unwrap_or_else(|| panic!("{key}: {shown:?}"));
        assert!(find("client.tcp.nagle_last_sent").starts_with("t.toml:7: client.tcp.nagle_last_sent = true: "));
        assert!(find("server.tcp.time_wait").starts_with("t.toml:9: server.tcp.time_wait = \"1s\": "));
        assert!(find("client.tcp.rto_initial").starts_with("--set client.tcp.rto_initial=\"3s\": "));
        assert!(find("client.host.nic_rate").contains("no NIC model"));
        assert_eq!(r.len(), 4, "{shown:?}");
        // A value equal to the kernel's passes.
        let s = scenario(&[
            "client.tcp.nagle_last_sent=false",
            "server.tcp.time_wait=\"60s\"",
            "client.tcp.rto_initial=\"1s\"",
        ]);
        check(&s).unwrap();
    }
}
