//! The Linux backend: the scenario's test on the kernel's TCP in two network namespaces, through tcplab's own
//! link emulator (crates/emu, docs/linux-backend.md). The applications are the simulator's own (built by
//! [`crate::sim_backend::sim_spec`]), driven over real sockets by `tcplab_emu::run_apps`; their reports
//! become a [`BackendRun`] like the simulator's, with the run's health and the machine's measured CPU
//! beside it.

use tcplab_emu::{AppsRun, ConnEnd, EmuError, Health, PcapSpec, Side, TestbedSpec};
use tcplab_units::Duration;

use crate::result::{BackendRun, ConnectionResult, EngineCounters, LinkCounters, Links, NicCounters};
use crate::scenario::{Scenario, TestKind};
use crate::sim_backend::sim_spec;

/// Why the Linux backend cannot run a scenario.
#[derive(Debug)]
pub enum LinuxError {
    /// What the backend does not run (a test kind, an option): bad input, exit status 2.
    Unsupported(String),
    /// From crates/emu: usage errors (not root, not Linux, a knob Linux cannot express) are bad input.
    Emu(EmuError),
}

impl LinuxError {
    /// Bad input (exit status 2) rather than a failed run.
    pub fn is_usage(&self) -> bool {
        match self {
            LinuxError::Unsupported(_) => true,
            LinuxError::Emu(e) => e.is_usage(),
        }
    }
}

impl std::fmt::Display for LinuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinuxError::Unsupported(m) => f.write_str(m),
            LinuxError::Emu(e) => write!(f, "{e}"),
        }
    }
}

/// How many times a run whose health is bad (late releases, hidden drops) is repeated before it is reported
/// as it is, marked invalid.
pub const ATTEMPTS: u32 = 3;

/// What the Linux backend runs, or why not (bad input: the message names the scenario key).
pub fn check(s: &Scenario) -> Result<(), LinuxError> {
    let unsupported = |m: String| Err(LinuxError::Unsupported(m));
    match s.test.kind {
        TestKind::TcpStream | TestKind::TcpMaerts | TestKind::TcpRr | TestKind::TcpCrr | TestKind::TcpMsg => {}
        other => {
            return unsupported(format!(
                "test.kind = {:?}: the Linux backend runs \"tcp_stream\", \"tcp_maerts\", \"tcp_rr\", \"tcp_crr\" and \
                 \"tcp_msg\" (docs/linux-backend.md)",
                other.key()
            ))
        }
    }
    if s.test.series.is_some() || s.test.series_vars.is_some() {
        return unsupported(
            "test.series: time series are the simulator's so far; the Linux backend reports TCP_INFO at the end \
             of each connection (remove test.series)"
                .into(),
        );
    }
    for (key, link) in [("path.up", &s.path.up), ("path.down", &s.path.down)] {
        if link.mtu.is_some() {
            return unsupported(format!(
                "{key}.mtu: IP fragmentation is simulated only; --backend linux does not emulate a path MTU yet"
            ));
        }
    }
    for (side, h) in [("client", &s.client), ("server", &s.server)] {
        if let Some(rate) = h.host.nic_rate {
            return unsupported(format!(
                "{side}.host.nic_rate = {rate}: the Linux backend has no NIC model (the TUN device is faster than \
                 the path); remove it, or put the rate on the path"
            ));
        }
        if !h.host.nic_frame_time.is_zero() {
            return unsupported(format!(
                "{side}.host.nic_frame_time = {}: the Linux backend has no NIC model (the TUN device takes no \
                 time per frame); remove it",
                h.host.nic_frame_time
            ));
        }
    }
    // Knobs Linux cannot express are refused before anything runs (the testbed translates them again).
    for (side, h) in [("client", &s.client), ("server", &s.server)] {
        tcplab_emu::linux_tcp(&h.tcp, side).map_err(LinuxError::Emu)?;
    }
    if s.server.host.ephemeral_ports != crate::scenario::PortRange::default() {
        return unsupported(
            "server.host.ephemeral_ports: the server opens no connections; only client.host.ephemeral_ports \
             is used"
                .into(),
        );
    }
    Ok(())
}

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
}

/// Runs the scenario's point on the Linux backend, repeating a run whose health is bad (up to
/// [`ATTEMPTS`] runs); `pcap` takes a trace from the emulator's tap.
pub fn run(s: &Scenario, seed: u64, pcap: Option<PcapSpec>) -> Result<LinuxRun, LinuxError> {
    check(s)?;
    let spec = sim_spec(s);
    let lin = |e: EmuError| match e {
        EmuError::Knob { .. } if s.client.stack != "linux" || s.server.stack != "linux" => {
            LinuxError::Unsupported(format!(
                "{e} (the Linux backend runs the kernel's TCP: use client.stack = \"linux\" and server.stack = \
                 \"linux\", or `tcplab compare`, which does)"
            ))
        }
        e => LinuxError::Emu(e),
    };
    let ports = &s.client.host.ephemeral_ports;
    let tb = TestbedSpec {
        up: s.path.up.clone(),
        down: s.path.down.clone(),
        client: s.client.tcp.clone(),
        server: s.server.tcp.clone(),
        seed,
        up_drop_frames: Vec::new(),
        down_drop_frames: Vec::new(),
        // Each direction coalesces as the host it delivers to: up for the server, down for the client.
        emulator: tcplab_emu::EmulatorConfig {
            pcap,
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
            .map(|(h, a)| (if *h == tcplab_sim::CLIENT { Side::Client } else { Side::Server }, a.clone()))
            .collect();
        let mut apps = tcplab_emu::AppsSpec::new(apps, spec.measure);
        // TCP_CRR makes two ends per transaction: keep the first ones' statistics, as the simulator does.
        if s.test.kind == TestKind::TcpCrr {
            apps.keep_connections = 2 * s.test.parallel.max(1) as usize;
        }
        let (run, health) = run_once(&tb, apps).map_err(lin)?;
        if health.valid || attempt >= ATTEMPTS {
            return Ok(LinuxRun {
                run: backend_run(&run, &health),
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

fn backend_run(r: &AppsRun, h: &Health) -> BackendRun {
    let conn = |e: &ConnEnd| ConnectionResult {
        side: e.side,
        protocol: "tcp",
        state: e.state.clone(),
        estats: serde_json::to_value(&e.estats).expect("statistics serialize"),
    };
    let link = |d: &tcplab_emu::DirectionHealth| LinkCounters {
        frames_in: d.link.frames_in,
        frames_delivered: d.link.frames_delivered,
        bytes_delivered: d.link.bytes_delivered,
        drops_queue_full: d.link.drops_queue_full,
        drops_random_loss: d.link.drops_random_loss + d.drops_scripted,
        max_queue_frames: d.link.max_queue_frames,
    };
    let nic = |frames: u64| NicCounters { frames_sent: frames, refused_full: 0, max_queue_frames: 0 };
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
        },
        series: None,
        logvars: None,
        engine: EngineCounters::default(),
        cpu: [cpu, cpu],
    }
}
