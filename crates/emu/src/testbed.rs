//! A testbed: the run's two namespaces, a TUN device in each, the kernel configured from the knobs, and the
//! emulator forwarding between the devices. Everything is removed when it is dropped.
//!
//! ```text
//!  netns …-c: lo, tcplab0 198.18.0.1/32, route 198.18.1.0/24 dev tcplab0 congctl … initcwnd …
//!        │ fd                                                     fd │
//!        └──── up: loss → queue → rate+framing → delay ────────────►─┤
//!        ┌◄─── down: the same model for the other direction ─────────┘
//!  netns …-s: lo, tcplab0 198.18.1.1/32, route 198.18.0.0/24 dev tcplab0 …
//! ```

use serde::Serialize;
use tcplab_link::{LinkConfig, QueueLimit};
use tcplab_tcp::TcpConfig;
use tcplab_units::Duration;

use crate::emulator::{DirectionHealth, EmulatorConfig};
use crate::tun::DevStats;

#[cfg(target_os = "linux")]
pub use os::Testbed;

/// The client's address; the client namespace routes 198.18.1.0/24 to its TUN device.
pub const CLIENT_ADDR: [u8; 4] = [198, 18, 0, 1];
/// The server's address; the server namespace routes 198.18.0.0/24 to its TUN device.
pub const SERVER_ADDR: [u8; 4] = [198, 18, 1, 1];

/// Which endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// What a testbed is built from.
#[derive(Debug, Clone)]
pub struct TestbedSpec {
    /// Client → server.
    pub up: LinkConfig,
    /// Server → client.
    pub down: LinkConfig,
    pub client: TcpConfig,
    pub server: TcpConfig,
    /// Seeds the two directions' loss and qdisc streams as the simulator seeds them from a run seed
    /// (`tcplab_link::stream_seed`): with the same seed, the n-th frame offered to a direction meets the
    /// same loss verdict on both backends.
    pub seed: u64,
    /// Frames to drop in each direction, by index (see [`DirectionSpec::drop_frames`]).
    pub up_drop_frames: Vec<u64>,
    pub down_drop_frames: Vec<u64>,
    pub emulator: EmulatorConfig,
    pub limits: HealthLimits,
    /// The client's ephemeral ports (`net.ipv4.ip_local_port_range` in its namespace); `None`: Linux's
    /// default, 32768–60999.
    pub client_ports: Option<(u16, u16)>,
}

impl TestbedSpec {
    /// A symmetric path with the `linux` personality on both ends.
    pub fn symmetric(link: LinkConfig) -> TestbedSpec {
        let linux = TcpConfig::personality("linux").expect("the linux personality exists");
        TestbedSpec {
            up: link.clone(),
            down: link,
            client: linux.clone(),
            server: linux,
            seed: 1,
            up_drop_frames: Vec::new(),
            down_drop_frames: Vec::new(),
            emulator: EmulatorConfig::default(),
            limits: HealthLimits::default(),
            client_ports: None,
        }
    }
}

/// When a run's health makes its figures untrustworthy.
#[derive(Debug, Clone, Copy)]
pub struct HealthLimits {
    /// Largest acceptable 99th-percentile release lateness (either direction).
    pub max_p99_lateness: Duration,
    /// Largest acceptable number of hidden drops (kernel-side TUN drops and errors, failed writes).
    pub max_hidden_drops: u64,
    /// Longest acceptable stall of an emulator thread (its longest wake-up lateness, either direction).
    /// `None`: [`default_stall_limit`] of the path.
    pub max_stall: Option<Duration>,
}

impl Default for HealthLimits {
    fn default() -> Self {
        HealthLimits { max_p99_lateness: Duration::from_millis(1), max_hidden_drops: 0, max_stall: None }
    }
}

/// The longest emulator stall a run on this path tolerates by default: the time the faster-draining
/// direction's queue, full, takes to empty at its rate (1500-byte datagrams for a queue counted in
/// packets), kept between 1 ms (the heartbeat's resolution, with room) and 20 ms (an outage on any path).
/// While a thread stalls, the sender's packets wait unseen in its TUN queue and then enter the model in one
/// burst: a burst the path's own queue could have held at worst moves losses a little, a longer one makes
/// losses the path would not have made.
pub fn default_stall_limit(up: &LinkConfig, down: &LinkConfig) -> Duration {
    let drain = |l: &LinkConfig| {
        let bytes = match l.queue {
            QueueLimit::Packets(n) => n as u64 * l.framing.wire_len(crate::knobs::MTU) as u64,
            QueueLimit::Bytes(b) => b,
        };
        l.rate.tx_time(bytes)
    };
    let d = drain(up).min(drain(down));
    d.max(Duration::from_millis(1)).min(Duration::from_millis(20))
}

/// Run health: what the emulator saw, what the kernel dropped behind its back, and whether the run counts.
#[derive(Debug, Clone, Serialize)]
pub struct Health {
    pub up: DirectionHealth,
    pub down: DirectionHealth,
    /// Counters of the client's and server's TUN devices.
    pub client_dev: DevStats,
    pub server_dev: DevStats,
    /// Drops the model did not decide: TUN drops and errors on both devices, failed writes.
    pub hidden_drops: u64,
    /// False when a limit was exceeded; `invalid_reasons` says which.
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
}

/// Idle round-trip times from ping, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PingRtt {
    pub min_ms: f64,
    pub avg_ms: f64,
    pub max_ms: f64,
}

fn parse_ping(text: &str) -> Option<PingRtt> {
    let line = text.lines().find(|l| l.contains("min/avg/max"))?;
    let nums: Vec<f64> =
        line.split('=').nth(1)?.trim().split('/').filter_map(|x| x.trim_end_matches(" ms").parse().ok()).collect();
    Some(PingRtt { min_ms: *nums.first()?, avg_ms: *nums.get(1)?, max_ms: *nums.get(2)? })
}

pub(crate) fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn sorted(v: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// The testbed itself (Linux only).
#[cfg(target_os = "linux")]
mod os {
    use std::os::fd::OwnedFd;
    use std::process::Command;

    use tcplab_link::{direction_stream, qdisc_stream, stream_seed};
    use tcplab_units::Duration;

    use super::{
        default_stall_limit, dotted, parse_ping, sorted, Health, HealthLimits, PingRtt, Side, TestbedSpec, CLIENT_ADDR,
        SERVER_ADDR,
    };
    use crate::emulator::{DirectionSpec, Emulator};
    use crate::error::EmuError;
    use crate::knobs::{linux_tcp, LinuxTcp};
    use crate::netns::{Netns, Run};
    use crate::tun::{self, DevStats};

    /// The live testbed. Dropping it stops the emulator and removes the namespaces.
    pub struct Testbed {
        // Field order is drop order: the emulator stops before the namespaces go.
        emu: Option<Emulator>,
        run: Run,
        pub client_tcp: LinuxTcp,
        pub server_tcp: LinuxTcp,
        limits: HealthLimits,
        max_stall: Duration,
    }

    impl Testbed {
        pub fn start(spec: &TestbedSpec) -> Result<Testbed, EmuError> {
            let client_tcp = linux_tcp(&spec.client, "client")?;
            let server_tcp = linux_tcp(&spec.server, "server")?;
            let run = Run::create()?;
            if let Some((low, high)) = spec.client_ports {
                run.client.sysctl("net.ipv4.ip_local_port_range", &format!("{low} {high}"))?;
            }
            let c = setup_side(&run.client, "client", &client_tcp, CLIENT_ADDR, SERVER_ADDR, spec.emulator.gso)?;
            let s = setup_side(&run.server, "server", &server_tcp, SERVER_ADDR, CLIENT_ADDR, spec.emulator.gso)?;
            let up = DirectionSpec {
                link: spec.up.clone(),
                seed: stream_seed(spec.seed, direction_stream(0)),
                qdisc_seed: stream_seed(spec.seed, qdisc_stream(0)),
                drop_frames: sorted(&spec.up_drop_frames),
                dst_prefix: (SERVER_ADDR, 24),
            };
            let down = DirectionSpec {
                link: spec.down.clone(),
                seed: stream_seed(spec.seed, direction_stream(1)),
                qdisc_seed: stream_seed(spec.seed, qdisc_stream(1)),
                drop_frames: sorted(&spec.down_drop_frames),
                dst_prefix: (CLIENT_ADDR, 24),
            };
            let emu = Emulator::start(c, s, up, down, &spec.emulator)?;
            let max_stall = spec.limits.max_stall.unwrap_or_else(|| default_stall_limit(&spec.up, &spec.down));
            Ok(Testbed { emu: Some(emu), run, client_tcp, server_tcp, limits: spec.limits, max_stall })
        }

        pub fn netns(&self, side: Side) -> &Netns {
            match side {
                Side::Client => &self.run.client,
                Side::Server => &self.run.server,
            }
        }

        pub fn tcp(&self, side: Side) -> &LinuxTcp {
            match side {
                Side::Client => &self.client_tcp,
                Side::Server => &self.server_tcp,
            }
        }

        /// Names of the two namespaces.
        pub fn names(&self) -> [&str; 2] {
            self.run.names()
        }

        /// A command running `program` inside a side's namespace.
        pub fn command(&self, side: Side, program: &str) -> Command {
            self.netns(side).command(program)
        }

        /// Pings the server from the client namespace: (min, avg, max) RTT.
        pub fn ping(&self, count: u32, interval: &str) -> Result<PingRtt, EmuError> {
            let out = self
                .command(Side::Client, "ping")
                .args(["-q", "-n", "-c", &count.to_string(), "-i", interval, &dotted(SERVER_ADDR)])
                .output()
                .map_err(|e| EmuError::os("running ping (install iputils-ping)", e))?;
            let text = String::from_utf8_lossy(&out.stdout);
            parse_ping(&text)
                .ok_or_else(|| EmuError::tool("ping", format!("{text}{}", String::from_utf8_lossy(&out.stderr))))
        }

        /// The queue series' origin and the measurement's start (CLOCK_MONOTONIC ns): its ticks fall on
        /// multiples of `EmulatorConfig::queue_series` from the one, then from the other.
        pub fn series_origin(&self, at_ns: u64) {
            if let Some(e) = &self.emu {
                e.series_origin(at_ns);
            }
        }

        pub fn series_phase(&self, at_ns: u64) {
            if let Some(e) = &self.emu {
                e.series_phase(at_ns);
            }
        }

        /// Stops the emulator and reports the run's health (the namespaces go when the testbed is dropped).
        pub fn finish(&mut self) -> Result<Health, EmuError> {
            let client_dev = dev_stats(&self.run.client)?;
            let server_dev = dev_stats(&self.run.server)?;
            let (up, down) = match self.emu.take() {
                Some(e) => e.stop()?,
                None => return Err(EmuError::tool("testbed", "finish called twice")),
            };
            let hidden_drops =
                client_dev.hidden_drops() + server_dev.hidden_drops() + up.write_errors + down.write_errors;
            let mut invalid_reasons = Vec::new();
            if hidden_drops > self.limits.max_hidden_drops {
                invalid_reasons.push(format!("{hidden_drops} hidden drops (limit {})", self.limits.max_hidden_drops));
            }
            for (name, d) in [("up", &up), ("down", &down)] {
                let p99 = Duration::from_nanos(d.lateness.p99_ns);
                if p99 > self.limits.max_p99_lateness {
                    invalid_reasons
                        .push(format!("{name}: p99 release lateness {} (limit {})", p99, self.limits.max_p99_lateness));
                }
                let stall = Duration::from_nanos(d.wake_lateness.max_ns);
                if stall > self.max_stall {
                    invalid_reasons.push(format!(
                        "{name}: the emulator thread stalled for {:.2} ms (its latest wake-up; limit {:.2} ms)",
                        stall.as_secs_f64() * 1e3,
                        self.max_stall.as_secs_f64() * 1e3
                    ));
                }
            }
            Ok(Health {
                up,
                down,
                client_dev,
                server_dev,
                hidden_drops,
                valid: invalid_reasons.is_empty(),
                invalid_reasons,
            })
        }
    }

    fn setup_side(
        ns: &Netns,
        side: &'static str,
        tcp: &LinuxTcp,
        me: [u8; 4],
        peer: [u8; 4],
        gso: bool,
    ) -> Result<OwnedFd, EmuError> {
        let mut route = tcp.route.clone();
        for (k, v) in &tcp.sysctls {
            // Two of them are recent (Linux 6.x); an older kernel gets the route option, or its fixed value.
            let exists = std::path::Path::new("/proc/sys").join(k.replace('.', "/")).exists();
            match (*k, exists) {
                (_, true) => ns.sysctl(k, v)?,
                ("net.ipv4.tcp_rto_min_us", false) => {
                    let us: u64 = v.parse().unwrap_or(200_000);
                    if !us.is_multiple_of(1000) {
                        return Err(EmuError::Knob {
                            side,
                            knob: "rto_min".into(),
                            value: format!("{us}us"),
                            reason: "this kernel has no tcp_rto_min_us; the route's rto_min takes whole ms".into(),
                        });
                    }
                    route.push(("rto_min", format!("{}ms", us / 1000)));
                }
                ("net.ipv4.tcp_rto_max_ms", false) if v == "120000" => {}
                ("net.ipv4.tcp_rto_max_ms", false) => {
                    return Err(EmuError::Knob {
                        side,
                        knob: "rto_max".into(),
                        value: format!("{v}ms"),
                        reason: "this kernel has no tcp_rto_max_ms (Linux 6.15+): its maximum is fixed at 120s".into(),
                    })
                }
                _ => ns.sysctl(k, v)?,
            }
        }
        let fd = ns.enter(|| tun::open(tun::DEVICE, gso)).map_err(|e| EmuError::os("creating the TUN device", e))?;
        let mtu = crate::knobs::MTU.to_string();
        ns.ip(&["link", "set", tun::DEVICE, "mtu", &mtu, "txqueuelen", "500", "up"])?;
        ns.ip(&["addr", "add", &format!("{}/32", dotted(me)), "dev", tun::DEVICE])?;
        let peer_net = format!("{}.{}.{}.0/24", peer[0], peer[1], peer[2]);
        let mut args: Vec<String> =
            ["route", "add", &peer_net, "dev", tun::DEVICE, "src", &dotted(me)].iter().map(|s| s.to_string()).collect();
        for (k, v) in &route {
            args.push(k.to_string());
            args.push(v.clone());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ns.ip(&args)?;
        Ok(fd)
    }

    fn dev_stats(ns: &Netns) -> Result<DevStats, EmuError> {
        let text = ns
            .enter(|| std::fs::read_to_string("/proc/thread-self/net/dev"))
            .map_err(|e| EmuError::os("reading /proc/net/dev", e))?;
        tun::parse_dev_stats(&text, tun::DEVICE).ok_or_else(|| EmuError::tool("/proc/net/dev", "no tcplab0 line"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(rate: &str, queue: &str) -> LinkConfig {
        serde_json::from_value(serde_json::json!({ "rate": rate, "queue": queue })).unwrap()
    }

    #[test]
    fn stall_limit_is_the_faster_draining_queue() {
        // 100 frames of 1538 wire bytes at 1 Gbit/s: 1.2304 ms; the 1000-frame ACK direction drains in 12.3 ms.
        let l = default_stall_limit(&link("1gbit", "100pkt"), &link("1gbit", "1000pkt"));
        assert_eq!(l.as_nanos(), 1_230_400);
        // 1650 frames at 1 Gbit/s: 20.3 ms up, but the other direction's 1000 frames drain in 12.3 ms.
        let l = default_stall_limit(&link("1gbit", "1650pkt"), &link("1gbit", "1000pkt"));
        assert_eq!(l.as_nanos(), 12_304_000);
        // A byte-sized queue: 64 KiB at 100 Mbit/s is 5.24288 ms.
        let l = default_stall_limit(&link("100mbit", "64KiB"), &link("100mbit", "1000pkt"));
        assert_eq!(l.as_nanos(), 5_242_880);
    }

    #[test]
    fn stall_limit_is_kept_between_1ms_and_20ms() {
        // 10 frames at 1 Gbit/s drain in 123 us: a stall the heartbeat can barely see; 1 ms instead.
        assert_eq!(default_stall_limit(&link("1gbit", "10pkt"), &link("1gbit", "10pkt")).as_millis(), 1);
        // 1000 frames at 10 Mbit/s drain in 1.23 s: no path forgives a stall that long; 20 ms instead.
        assert_eq!(default_stall_limit(&link("10mbit", "1000pkt"), &link("10mbit", "1000pkt")).as_millis(), 20);
    }

    #[test]
    fn ping_summary_parses() {
        let t = "--- 198.18.1.1 ping statistics ---\n5 packets transmitted, 5 received, 0% packet loss, time 801ms\n\
                 rtt min/avg/max/mdev = 40.064/40.091/40.120/0.020 ms\n";
        let r = parse_ping(t).unwrap();
        assert_eq!((r.min_ms, r.avg_ms, r.max_ms), (40.064, 40.091, 40.12));
    }
}
