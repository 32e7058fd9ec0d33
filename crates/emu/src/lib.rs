//! tcplab's Linux backend: the same path and knobs as the simulator, on the kernel's own TCP.
//!
//! A run gets two network namespaces (client and server), each with loopback, IPv6 off and one TUN device
//! (`IFF_TUN | IFF_NO_PI | IFF_VNET_HDR`) with an address from 198.18.0.0/15 and a route to the peer's
//! prefix. Between the two devices runs tcplab's own link emulator ([`emulator`]), which reuses
//! `tcplab_link::LinkDirection` in real time, so the kernel's packets see exactly the model the simulator
//! uses (a direction with a qdisc or jitter runs the simulator's stages: `stage`). The kernel is configured from `TcpConfig` ([`knobs`]), and a refusal names the knob Linux cannot
//! express. Statistics come from `TCP_INFO` (RFC 4898 names) and `/proc/net/{netstat,snmp}` ([`kstats`]).
//!
//! Nothing outside the two namespaces is touched: no host interface, route, firewall rule or sysctl. See
//! docs/linux-backend.md.
//!
//! Entry points: [`run_stream`] for a whole TCP_STREAM run; [`Testbed`] for anything else (start it, run
//! programs or sockets in [`Testbed::netns`], then [`Testbed::finish`] for the run's health).

//! Off Linux the crate still builds and keeps its data types, so callers need no `cfg`: [`run_stream`]
//! and [`check_environment`] return [`EmuError::Unsupported`]. [`Testbed`], [`netns`] and
//! [`run_stream_on`] exist on Linux only.

// Off Linux the packet code is kept (and unit-tested) but nothing calls it.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

pub mod apps;
pub mod emulator;
mod error;
pub mod knobs;
pub mod kstats;
#[cfg(target_os = "linux")]
pub mod netns;
mod stage;
pub mod stream;
#[cfg(target_os = "linux")]
mod sys;
pub mod testbed;
pub mod tun;

#[cfg(target_os = "linux")]
pub use apps::run_apps;
pub use apps::{AppsRun, AppsSpec, ConnEnd, ConnSeries, EndSamples, SeriesSpec, SystemCpu};
pub use emulator::{DirectionHealth, EmulatorConfig, Lateness, PcapSpec, PcapTap, QueueTick, HEARTBEAT};
pub use error::EmuError;
pub use knobs::{honoured_knobs, linux_tcp, linux_tcp_all, LinuxTcp};
#[cfg(target_os = "linux")]
pub use netns::{check_environment, existing_namespaces, sweep_leftovers};
#[cfg(target_os = "linux")]
pub use stream::{connect_pair, run_stream_on};
pub use stream::{Sample, StreamResult, StreamSpec};
#[cfg(target_os = "linux")]
pub use testbed::Testbed;
pub use testbed::{default_stall_limit, Health, HealthLimits, PingRtt, Side, TestbedSpec, CLIENT_ADDR, SERVER_ADDR};

use serde::Serialize;
use tcplab_link::LinkConfig;
use tcplab_tcp::TcpConfig;
use tcplab_units::{ByteSize, Duration};

/// One TCP_STREAM run on the Linux backend.
#[derive(Debug, Clone)]
pub struct EmuSpec {
    /// Client → server and server → client.
    pub up: LinkConfig,
    pub down: LinkConfig,
    /// Knobs of each endpoint; `send_buffer` and `recv_buffer` become SO_SNDBUF/SO_RCVBUF.
    pub client: TcpConfig,
    pub server: TcpConfig,
    pub duration: Duration,
    /// Bytes per send() call.
    pub message: ByteSize,
    pub seed: u64,
    /// TCP_INFO sampling clock of the sender (0: only at the end).
    pub sample_interval: Duration,
    /// Frames to drop in each direction by index, on top of the loss model (see
    /// [`emulator::DirectionSpec::drop_frames`]).
    pub up_drop_frames: Vec<u64>,
    pub down_drop_frames: Vec<u64>,
    pub emulator: EmulatorConfig,
    pub limits: HealthLimits,
}

impl EmuSpec {
    /// The `linux` personality on both ends of a symmetric path, 64 KiB messages, 100 ms samples.
    pub fn new(link: LinkConfig, duration: Duration) -> EmuSpec {
        let linux = TcpConfig::personality("linux").expect("the linux personality exists");
        EmuSpec {
            up: link.clone(),
            down: link,
            client: linux.clone(),
            server: linux,
            duration,
            message: ByteSize::new(64 * 1024),
            seed: 1,
            sample_interval: Duration::from_millis(100),
            up_drop_frames: Vec::new(),
            down_drop_frames: Vec::new(),
            emulator: EmulatorConfig::default(),
            limits: HealthLimits::default(),
        }
    }

    /// The testbed this run needs.
    pub fn testbed(&self) -> TestbedSpec {
        TestbedSpec {
            up: self.up.clone(),
            down: self.down.clone(),
            client: self.client.clone(),
            server: self.server.clone(),
            seed: self.seed,
            up_drop_frames: self.up_drop_frames.clone(),
            down_drop_frames: self.down_drop_frames.clone(),
            emulator: self.emulator.clone(),
            limits: self.limits,
            client_ports: None,
        }
    }
}

/// The result of [`run_stream`]: the workload's figures and the run's health.
#[derive(Debug, Clone, Serialize)]
pub struct EmuRun {
    pub stream: StreamResult,
    pub health: Health,
    /// How many runs were made to get this one (see [`run_stream_until_valid`]).
    pub attempts: u32,
}

/// Runs TCP_STREAM on the kernel through the emulator. Errors: not Linux or not root
/// ([`EmuError::Unsupported`]), a knob Linux cannot express ([`EmuError::Knob`]), or an OS failure.
#[cfg(target_os = "linux")]
pub fn run_stream(spec: &EmuSpec) -> Result<EmuRun, EmuError> {
    let mut tb = Testbed::start(&spec.testbed())?;
    let stream = run_stream_on(
        &tb,
        &StreamSpec { duration: spec.duration, message: spec.message, sample_interval: spec.sample_interval },
    )?;
    let health = tb.finish()?;
    Ok(EmuRun { stream, health, attempts: 1 })
}

/// Runs [`run_stream`] up to `attempts` times until the run's health is valid (the rule: repeat a
/// run whose health is bad rather than report it). Returns the first valid run, or the last run (with
/// `health.valid == false`) when none was; `EmuRun::attempts` says how many were made.
pub fn run_stream_until_valid(spec: &EmuSpec, attempts: u32) -> Result<EmuRun, EmuError> {
    let mut n = 0;
    loop {
        n += 1;
        let mut run = run_stream(spec)?;
        run.attempts = n;
        if run.health.valid || n >= attempts.max(1) {
            return Ok(run);
        }
    }
}

/// Off Linux: always [`EmuError::Unsupported`].
#[cfg(not(target_os = "linux"))]
pub fn run_stream(_spec: &EmuSpec) -> Result<EmuRun, EmuError> {
    check_environment().map(|()| unreachable!("check_environment fails off Linux"))
}

/// Off Linux: the backend cannot run; the error says why.
#[cfg(not(target_os = "linux"))]
pub fn check_environment() -> Result<(), EmuError> {
    Err(EmuError::Unsupported(format!(
        "it needs Linux (network namespaces and TUN devices); this is {}",
        std::env::consts::OS
    )))
}

/// Off Linux there are no namespaces.
#[cfg(not(target_os = "linux"))]
pub fn existing_namespaces() -> Vec<String> {
    Vec::new()
}

/// Off Linux there is nothing to sweep.
#[cfg(not(target_os = "linux"))]
pub fn sweep_leftovers() -> Vec<String> {
    Vec::new()
}
