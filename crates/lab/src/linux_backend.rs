//! The Linux backend: the scenario's TCP_STREAM on the kernel's TCP in two network namespaces, through
//! tcplab's own link emulator (crates/emu, docs/linux-backend.md). Its report becomes a [`BackendRun`] like
//! the simulator's, with the run's health beside it.

use tcplab_emu::{EmuError, EmuRun, EmuSpec};
use tcplab_units::Duration;
use tcplab_workload::{Report, Role, StreamReport};

use crate::result::{BackendRun, ConnectionResult, EngineCounters, LinkCounters, Links, NicCounters};
use crate::scenario::{Scenario, TestKind};

/// Why the Linux backend cannot run a scenario.
#[derive(Debug)]
pub enum LinuxError {
    /// What the backend does not run yet (a test kind, an option): bad input, exit status 2.
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
const ATTEMPTS: u32 = 3;

/// Runs the scenario's point on the Linux backend.
pub fn run(s: &Scenario, seed: u64) -> Result<(BackendRun, serde_json::Value), LinuxError> {
    if s.test.kind != TestKind::TcpStream {
        return Err(LinuxError::Unsupported(format!(
            "--backend linux runs test.kind = \"tcp_stream\" so far, not {:?} (docs/linux-backend.md)",
            s.test.kind.key()
        )));
    }
    if s.test.parallel != 1 {
        return Err(LinuxError::Unsupported(format!(
            "--backend linux runs one connection so far: test.parallel = {}; accepted: 1",
            s.test.parallel
        )));
    }
    for (key, link) in [("path.up", &s.path.up), ("path.down", &s.path.down)] {
        if link.mtu.is_some() {
            return Err(LinuxError::Unsupported(format!(
                "{key}.mtu: IP fragmentation is simulated only; --backend linux does not emulate a path MTU yet"
            )));
        }
    }
    let mut spec = EmuSpec::new(s.path.up.clone(), s.test.duration);
    spec.down = s.path.down.clone();
    spec.client = s.client.tcp.clone();
    spec.server = s.server.tcp.clone();
    spec.message = s.test.message;
    spec.seed = seed;
    let run = tcplab_emu::run_stream_until_valid(&spec, ATTEMPTS).map_err(|e| match e {
        EmuError::Knob { .. } if s.client.stack != "linux" || s.server.stack != "linux" => LinuxError::Unsupported(
            format!(
                "{e} (the Linux backend runs the kernel's TCP: use client.stack = \"linux\" and server.stack = \"linux\", \
                 or `tcplab compare`, which does)"
            ),
        ),
        e => LinuxError::Emu(e),
    })?;
    let health = serde_json::to_value(&run.health).expect("health serializes");
    Ok((backend_run(&run), health))
}

fn backend_run(r: &EmuRun) -> BackendRun {
    let st = &r.stream;
    let elapsed = Duration::from_secs_f64(st.elapsed_s);
    let receiver = StreamReport {
        role: Role::Receive,
        window_bytes: st.bytes_received,
        elapsed,
        total_bytes: st.bytes_received,
        calls: 0,
        connections: 1,
    };
    let sender = StreamReport {
        role: Role::Send { message: 0 },
        window_bytes: st.bytes_sent,
        elapsed,
        total_bytes: st.bytes_sent,
        calls: 0,
        connections: 1,
    };
    let retrans = |e: &tcplab_emu::kstats::Estats| e.get("SegsRetrans").copied().unwrap_or(0.0) as u64;
    let conn = |side: &'static str, e: &tcplab_emu::kstats::Estats| ConnectionResult {
        side,
        protocol: "tcp",
        state: "kernel".into(),
        estats: serde_json::to_value(e).expect("statistics serialize"),
    };
    let link = |d: &tcplab_emu::DirectionHealth| LinkCounters {
        frames_in: d.link.frames_in,
        frames_delivered: d.link.frames_delivered,
        bytes_delivered: d.link.bytes_delivered,
        drops_queue_full: d.link.drops_queue_full,
        drops_random_loss: d.link.drops_random_loss,
        max_queue_frames: d.link.max_queue_frames,
    };
    let nic = |frames: u64| NicCounters { frames_sent: frames, refused_full: 0, max_queue_frames: 0 };
    BackendRun {
        apps: vec![("server", Report::Stream(receiver)), ("client", Report::Stream(sender))],
        connections: vec![conn("client", &st.client_estats), conn("server", &st.server_estats)],
        retransmissions: retrans(&st.client_estats) + retrans(&st.server_estats),
        links: Links {
            up: link(&r.health.up),
            down: link(&r.health.down),
            nic_client: nic(r.health.up.link.frames_in),
            nic_server: nic(r.health.down.link.frames_in),
            ip_client: None,
            ip_server: None,
        },
        series: None,
        logvars: None,
        engine: EngineCounters::default(),
        cpu: [None, None],
    }
}
