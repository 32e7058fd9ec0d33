//! The scenario file: parsing, `--set` overrides, personalities, and validation.
//!
//! Errors are reported against the text the user wrote: a value that came from the file is located by
//! its key path in the TOML document (file and line); one that came from `--set` names the flag.

use serde::{Deserialize, Serialize};
use tcplab_link::LinkConfig;
use tcplab_tcp::TcpConfig;
use tcplab_units::{ByteSize, Duration, Rate};

use crate::error::{Origin, ScenarioError};
pub use crate::host_transports::{HostTransports, TransportConfig};

mod checks;
pub use checks::{cross_checks, Findings};

/// A scenario, fully resolved: every knob has its value, units are typed. It reads back from its echo in
/// a result document (`scenario`), not from a scenario file (`load` does that, with personalities).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub path: PathSpec,
    pub client: Host,
    pub server: Host,
    pub test: Test,
    /// The plots the scenario asks for (`[[plot]]`), drawn by `--plot` and the HTML report besides the
    /// default ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plot: Vec<PlotSpec>,
    /// Published or measured reference figures (`[[published]]`), compared with the lab's at every point
    /// they apply to and drawn on the plots of their metric.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<crate::published::PublishedSeries>,
    /// Every key the file or a `--set` gives (dotted paths of the values written, `client.tcp.nodelay`,
    /// `test.send_buffer`), with where it was written. A value absent here came from a default (most
    /// often the host's personality): the Linux backend refuses a value the scenario chose and the kernel
    /// cannot honour, naming this place, but only warns about a default it replaces with the kernel's
    /// own (docs/linux-backend.md § Scenarios on the kernel). Not part of the result document.
    #[serde(skip)]
    pub explicit: std::collections::BTreeMap<String, Origin>,
    /// The figures the table `run` prints shows besides netperf's columns (`[table]`); absent: those of
    /// the `[[plot]]`s that netperf's columns do not show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<TableSpec>,
    /// What validation found valid but worth saying before the run (`cross_checks`: a
    /// bufferless queue, a measurement shorter than a round trip), each located as an error would be
    /// (`FILE:LINE: KEY: …`). Not part of the document.
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// `[dumbbell]` (docs/topology.md § Flows that share a bottleneck): the flows of `flow` share this
    /// bottleneck instead of the client-server path. With it, `path` is the bottleneck (both directions)
    /// and `test` a `tcp_stream` of `test.duration` (the one `[test]` key a dumbbell takes), filled in so that sweeps, limits and the budget
    /// read one shape; the run is the dumbbell's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dumbbell: Option<Dumbbell>,
    /// `[[flow]]`: the flows through the dumbbell, in order (flow 0 is sender 0 to receiver 0), or
    /// between the hosts of a network (each flow's `from` and `to`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow: Vec<Flow>,
    /// `[[host]]` (docs/topology.md § Networks): the hosts of a network, routers included. With
    /// `[[link]]` it replaces the client-server path as `[dumbbell]` does: `path` is then the network's
    /// slowest link direction and `client`/`server` the hosts of flow 0, filled in for the same reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host: Vec<NetHost>,
    /// `[[link]]`: the duplex links joining the hosts; routes are the engine's (fewest hops).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link: Vec<NetLink>,
}

impl Scenario {
    /// Whether the scenario runs `[[flow]]`s (a `[dumbbell]` or a network) rather than the client-server test.
    pub fn has_flows(&self) -> bool {
        !self.flow.is_empty()
    }

    /// Whether the scenario is a network of `[[host]]` and `[[link]]` tables.
    pub fn is_network(&self) -> bool {
        !self.link.is_empty()
    }

    /// The index of the host named `name` in a network.
    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.host.iter().position(|h| h.name == name)
    }
}

/// `[[host]]`: one host of a network. A router is a host no flow starts or ends at; every host forwards
/// what is not addressed to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetHost {
    /// What links and flows call the host (letters, digits, `-`, `_`, `.`).
    pub name: String,
    /// The personality of the host's TCP, with `tcp` on top: every flow end on the host runs it.
    pub stack: String,
    pub tcp: TcpConfig,
}

/// `[[link]]`: a duplex link between the hosts named `a` and `b`, each direction with its own rate,
/// delay, queue, qdisc, loss, MTU and framing (the keys of `path.up`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetLink {
    pub a: String,
    pub b: String,
    /// From `a` to `b`.
    pub forward: LinkConfig,
    /// From `b` to `a`; default: a copy of `forward`.
    pub backward: LinkConfig,
}

/// `[dumbbell]`: N senders on the left, each on its own access link to the left router, the bottleneck
/// between the routers, N receivers behind the right router (the shape of ns-3's dumbbell helper and of
/// the shared-bottleneck experiments of Floyd 1991, Jain's fairness, bufferbloat).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// The left router to the right router: the senders' data crosses it (keys as `path.up`).
    pub bottleneck: LinkConfig,
    /// The right router to the left router (the ACKs' and responses' way); default: as `bottleneck`.
    pub reverse: LinkConfig,
    /// The rate of every access link (sender to left router, right router to receiver), both ways; it
    /// should be well above the bottleneck's so that only the bottleneck queues.
    pub access_rate: Rate,
}

/// What a flow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// A bulk transfer from the sender to the receiver (netperf TCP_STREAM).
    Stream,
    /// One request/response transaction at a time from the sender (netperf TCP_RR).
    Rr,
    /// Messages of `message` bytes, one send call each, back to back or one every `interval`; the receiver
    /// times each whole message (the `tcp_msg` test's workload).
    Msg,
}

impl FlowKind {
    pub fn key(self) -> &'static str {
        match self {
            FlowKind::Stream => "stream",
            FlowKind::Rr => "rr",
            FlowKind::Msg => "msg",
        }
    }
}

/// `[[flow]]`: one flow through the dumbbell, its two hosts with their own stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub kind: FlowKind,
    /// The personality of both of the flow's hosts, with `tcp` on top.
    pub stack: String,
    pub tcp: TcpConfig,
    /// One-way delay of the sender's access link: the flow's RTT is 2 × (access_delay + the bottleneck's
    /// delays).
    pub access_delay: Duration,
    /// When the sender opens its connection (flows starting later do not hold up the measurement, which
    /// they join as they connect).
    pub start: Duration,
    /// `stream`: send call size; default 16 KiB. `msg`: the message's size, one send call each; default
    /// 1 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<ByteSize>,
    /// `msg`: one message every `interval` from the start of the measurement; absent: back to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// `rr`: request and response sizes; default 1 byte each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<ByteSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ByteSize>,
    /// In a network: the host the flow's sender (the client: it connects, and writes a stream's data or
    /// an rr flow's requests) runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// In a network: the host the flow's receiver (the server) runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// `[table]` (docs/scenario.md § Table): the columns added to the table `run` and `report` print, each a
/// metric as `[[plot]] y` names it (`client.SendStall`, `latency_us.p90`, `client.CurCwnd.mean`), shown
/// with its unit after netperf's columns. `columns = []` adds none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub columns: Vec<String>,
}

/// The most columns `[table]` adds (a table wider than a terminal helps nobody).
pub const TABLE_MAX_COLUMNS: usize = 8;

/// One `[[plot]]` table (docs/scenario.md § Plots): a metric against a swept key (`x`, `y`, and `lines` for
/// one line per value of a second swept key), or time series of sampled variables (`series`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// The file's name without `.svg` (letters, digits, `-`, `_`); default `plot-N`, N counting from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The title, after the scenario's name; default: what is drawn against what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A key path of the scenario on the x axis (`"test.burst"`): a swept key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// The metric on the y axis, a key of `points[].metrics` (`"transactions_per_s"`, `"latency_us.p99"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<String>,
    /// A second swept key path: one line per value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<String>,
    /// Sampled variables (`test.series`) against time, one line per variable and connection end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<String>>,
    /// A horizontal reference line on an `x`/`y` plot, in `y`'s own unit (`{ value = 5.517, label = "the
    /// line's ceiling" }`): an analytic bound drawn beside the measured points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<PlotReference>,
}

/// `[[plot]] reference`: a constant `value` of the plot's `y` (as the result stores it: bit/s, 1/s, µs …),
/// named by `label`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotReference {
    pub value: f64,
    pub label: String,
}

/// The metrics a run of `s` reports, as dotted keys of `points[].metrics` (what `[[plot]] y` accepts):
/// the transport's for the workload (its config's `TransportConfig::metric_names`), then the CPU model's
/// figures where the transport runs it; `None` for a test kind whose metrics are not listed.
pub fn metric_names(s: &Scenario) -> Option<Vec<&'static str>> {
    let transport = crate::host_transports::registration(s.test.transport.key())?;
    let mut names = (transport.metric_names)(s.test.kind.key())?;
    if !transport.cpu_model {
        return Some(names);
    }
    let sides = [(s.client.host.cpu.is_some(), "local"), (s.server.host.cpu.is_some(), "remote")];
    if sides.iter().any(|(on, _)| *on) {
        let rr = s.test.kind.is_rr();
        for (on, side) in sides {
            if !on {
                continue;
            }
            let local = side == "local";
            names.push(if local { "cpu_util_percent.local" } else { "cpu_util_percent.remote" });
            names.push(if local { "service_demand_us_per_kb.local" } else { "service_demand_us_per_kb.remote" });
            if rr {
                names.push(if local { "service_demand_us_per_tr.local" } else { "service_demand_us_per_tr.remote" });
            }
        }
    }
    Some(names)
}

/// The unit of a sampled variable (in `crate::columns`, below the scenario and the result).
pub use crate::columns::series_unit;

/// Both directions of the path between client and server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    /// Client to server.
    pub up: LinkConfig,
    /// Server to client (the same as `up` unless given).
    pub down: LinkConfig,
}

/// One host: its TCP personality with overrides, the knobs of the transports it runs, and its NIC.
///
/// A scenario file and a result document write one table per transport (`tcp`, `rdp`) between `stack`
/// and `host`, as `Host`'s (de)serialization below spells them; the tables a host may have are the
/// transports registered in [`crate::host_transports::REGISTERED`], not fields here.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// The personality the TCP knobs start from.
    pub stack: String,
    /// TCP's knobs (the personality with the host's `tcp` table on top), always; the knobs of the test's
    /// transport when it is another (`RdpConfig::default()` with the host's `rdp` table on top).
    pub transports: HostTransports,
    pub host: Nic,
}

impl Host {
    /// TCP's knobs, which every host carries.
    pub fn tcp(&self) -> &TcpConfig {
        self.transports.tcp()
    }

    pub fn tcp_mut(&mut self) -> &mut TcpConfig {
        self.transports.tcp_mut()
    }

    /// The knobs of the transport whose config is `C`, if the host carries them (RDP's: in the RDP tests).
    pub fn config<C: TransportConfig>(&self) -> Option<&C> {
        self.transports.get()
    }
}

/// A host's keys: `stack`, one table per registered transport, `host` (the accepted keys of an error).
fn host_keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut k = vec!["stack"];
        k.extend(crate::host_transports::REGISTERED.iter().map(|r| r.table));
        k.push("host");
        k
    })
}

impl Serialize for Host {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let n = self.transports.iter().count();
        let mut m = s.serialize_map(Some(n + 2))?;
        m.serialize_entry("stack", &self.stack)?;
        for c in self.transports.iter() {
            m.serialize_entry(c.table(), &c.to_json())?;
        }
        m.serialize_entry("host", &self.host)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for Host {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Host;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a host: stack, a table per transport, host")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Host, A::Error> {
                use serde::de::Error;
                let (mut stack, mut nic, mut configs) = (None, None, Vec::new());
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "stack" => stack = Some(map.next_value::<String>()?),
                        "host" => nic = Some(map.next_value::<Nic>()?),
                        k => match crate::host_transports::registration(k) {
                            Some(r) => {
                                let v: serde_json::Value = map.next_value()?;
                                configs.push((r.from_json)(v).map_err(|e| A::Error::custom(format!("{k}: {e}")))?);
                            }
                            None => return Err(A::Error::unknown_field(k, host_keys())),
                        },
                    }
                }
                let stack = stack.ok_or_else(|| A::Error::missing_field("stack"))?;
                let host = nic.ok_or_else(|| A::Error::missing_field("host"))?;
                let tcp = configs
                    .iter()
                    .find_map(|c| c.as_any().downcast_ref::<TcpConfig>().cloned())
                    .ok_or_else(|| A::Error::missing_field("tcp"))?;
                let mut transports = HostTransports::new(tcp);
                for c in configs.into_iter().filter(|c| c.table() != TcpConfig::TABLE) {
                    transports.insert_any(c);
                }
                Ok(Host { stack, transports, host })
            }
        }
        d.deserialize_map(V)
    }
}

/// The host's network interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    /// Transmit queue length, packets (Linux `txqueuelen`, default 1000). Matters only with `nic_rate`.
    #[serde(default = "default_txqueuelen")]
    pub txqueuelen: u32,
    /// Line rate of the NIC (`"1gbit"`). Unset: the NIC is faster than the path and never queues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_rate: Option<Rate>,
    /// Local ports for the connections the host opens (Linux `ip_local_port_range`), `"32768-60999"`.
    #[serde(default, skip_serializing_if = "PortRange::is_default")]
    pub ephemeral_ports: PortRange,
    /// The CPU cost model (docs/scenario.md § CPU cost model); absent: the host is infinitely fast.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// IP reassembly timeout (`"30s"`, Linux `ipfrag_time`; RFC 1122 §3.3.2): an incomplete datagram whose
    /// first fragment arrived this long ago is discarded (`ReasmFails`). Matters only with a link `mtu`.
    #[serde(default = "default_fragment_ttl", skip_serializing_if = "is_default_fragment_ttl")]
    pub fragment_ttl: Duration,
    /// Receive coalescing (GRO behind the NIC's interrupt moderation, `"50us"`): how long an arriving
    /// segment waits for the segments that continue it, to reach TCP with them as one packet. Absent: the
    /// personality's default ([`default_rx_coalesce`]), filled in when the scenario is resolved (so a
    /// result echoes the hold that applied, `"0s"` included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_coalesce: Option<Duration>,
    /// The NIC's own processing of each frame sent or received, one at a time on one processor shared by
    /// both directions (`"15us"`; a firmware-driven NIC such as the Alteon Tigon-2: docs/scenario.md).
    /// `"0s"` (the default): the NIC takes no time.
    #[serde(default, skip_serializing_if = "is_zero_time")]
    pub nic_frame_time: Duration,
}

impl Nic {
    /// The receive coalescing hold (resolved: the scenario's value or its personality's default).
    pub fn rx_coalesce(&self) -> Duration {
        self.rx_coalesce.unwrap_or_default()
    }
}

/// The receive coalescing of a host with personality `stack` unless its scenario says: 50 µs for `linux`
/// (GRO, in Linux since 2.6.29, behind a common interrupt-coalescing delay; the Linux backend's emulator
/// coalesces the same way), none for the older stacks, whose hosts predate GRO.
pub fn default_rx_coalesce(stack: &str) -> Duration {
    if stack == "linux" {
        Duration::from_micros(50)
    } else {
        Duration::ZERO
    }
}

pub use crate::limits::MAX_RX_COALESCE;

/// The largest `host.nic_frame_time` accepted (1 ms a frame is 1,000 frames per second, slower than any NIC).
pub const MAX_NIC_FRAME_TIME: Duration = Duration::from_millis(1);

fn is_zero_time(d: &Duration) -> bool {
    d.is_zero()
}

fn default_fragment_ttl() -> Duration {
    tcplab_sim::FRAGMENT_TTL
}

fn is_default_fragment_ttl(d: &Duration) -> bool {
    *d == tcplab_sim::FRAGMENT_TTL
}

/// `host.cpu`: what each kind of work costs the host, as a time per unit (absent keys cost nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    /// Cores that process the host's network work in parallel.
    #[serde(default = "one_core")]
    pub cores: u32,
    /// Sending a segment that carries data.
    #[serde(default)]
    pub per_segment_out: Duration,
    /// Receiving a segment that carries data.
    #[serde(default)]
    pub per_segment_in: Duration,
    /// Receiving a segment without data (a pure ACK).
    #[serde(default)]
    pub per_ack_in: Duration,
    /// Sending a segment without data.
    #[serde(default)]
    pub per_ack_out: Duration,
    /// Copying one KB (1024 bytes) between the application and the socket.
    #[serde(default)]
    pub per_kb_copy: Duration,
    /// A send or receive call that moved data.
    #[serde(default)]
    pub per_call: Duration,
    /// A protocol timer that fired.
    #[serde(default)]
    pub per_timer: Duration,
}

fn one_core() -> u32 {
    1
}

impl Default for Nic {
    fn default() -> Self {
        Nic {
            txqueuelen: default_txqueuelen(),
            nic_rate: None,
            ephemeral_ports: PortRange::default(),
            cpu: None,
            fragment_ttl: default_fragment_ttl(),
            rx_coalesce: None,
            nic_frame_time: Duration::ZERO,
        }
    }
}

/// An inclusive range of ports, written `"LOW-HIGH"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub low: u16,
    pub high: u16,
}

impl Default for PortRange {
    fn default() -> Self {
        let (low, high) = tcplab_sim::EPHEMERAL_PORTS;
        PortRange { low, high }
    }
}

impl PortRange {
    fn is_default(&self) -> bool {
        *self == PortRange::default()
    }

    /// How many ports the range holds.
    pub fn len(&self) -> u32 {
        (self.high - self.low) as u32 + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.low, self.high)
    }
}

impl std::str::FromStr for PortRange {
    type Err = String;
    fn from_str(t: &str) -> Result<Self, String> {
        let bad = || format!("{t:?}: accepted \"LOW-HIGH\" with 1 <= LOW <= HIGH <= 65535, e.g. \"32768-60999\"");
        let (a, b) = t.split_once('-').ok_or_else(bad)?;
        let (low, high): (u16, u16) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
        if low == 0 || low > high {
            return Err(bad());
        }
        Ok(PortRange { low, high })
    }
}

impl Serialize for PortRange {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PortRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = String::deserialize(d)?;
        t.parse().map_err(serde::de::Error::custom)
    }
}

fn default_txqueuelen() -> u32 {
    1000
}

/// The workload of a test: what the applications do, whichever transport carries it (netperf's tests
/// without their protocol prefix). The transport is [`Test::transport`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Bulk transfer client → server (netperf TCP_STREAM; RDP: messages client → server, `messages` or
    /// `duration`, the 1986 experiment's test).
    Stream,
    /// Bulk transfer server → client (netperf TCP_MAERTS).
    Maerts,
    /// Request/response on long-lived connections (netperf TCP_RR; RDP: a request of `request` bytes, one
    /// RDP message or several when it exceeds the peer's max segment size, then the whole response).
    Rr,
    /// A new connection per transaction (netperf TCP_CRR).
    Crr,
    /// A one-way stream of small messages, back to back or paced, timed per message.
    Msg,
}

/// The transport protocol a test runs: the name of a transport the lab registers (its config's
/// `TransportConfig::TABLE`, one of [`crate::host_transports::REGISTERED`]), which
/// `crate::transport::dispatch` maps to its `LabTransport`. An id, not a list: the transports are the
/// registration's (docs/architecture.md § How to add a transport). TCP is the one the lab names itself:
/// every host's `stack` is a TCP personality, and the flows scenarios and the Linux backend run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Protocol(&'static str);

impl Default for Protocol {
    fn default() -> Protocol {
        Protocol::TCP
    }
}

impl Protocol {
    /// The lab's TCP (crates/tcp).
    pub const TCP: Protocol = Protocol(<TcpConfig as TransportConfig>::TABLE);

    /// The transport whose table is `table`: a registered one's name (a `LabTransport`'s `NAME`).
    pub const fn named(table: &'static str) -> Protocol {
        Protocol(table)
    }

    /// Every registered transport, in the registration's order.
    pub fn all() -> Vec<Protocol> {
        crate::host_transports::REGISTERED.iter().map(|r| Protocol(r.table)).collect()
    }

    /// The name used in scenario files (`test.transport`) and as the prefix of a test's full name.
    pub fn key(self) -> &'static str {
        self.0
    }

    /// The transport's registration (its config's declarations).
    pub fn registration(self) -> &'static crate::host_transports::Registration {
        crate::host_transports::registration(self.0).expect("a Protocol names a registered transport")
    }

    /// The workloads the transport runs (those its config names metrics for), in `TestKind::ALL`'s order.
    pub fn workloads(self) -> Vec<TestKind> {
        let r = self.registration();
        TestKind::ALL.into_iter().filter(|k| (r.metric_names)(k.key()).is_some()).collect()
    }

    pub fn parse(s: &str) -> Option<Protocol> {
        crate::host_transports::registration(s).map(|r| Protocol(r.table))
    }
}

impl Serialize for Protocol {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Protocol::parse(&s).ok_or_else(|| {
            // serde's own wording for an unknown variant, with the names from the registration.
            static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
            let names = NAMES.get_or_init(|| crate::host_transports::REGISTERED.iter().map(|r| r.table).collect());
            serde::de::Error::unknown_variant(&s, names.as_slice())
        })
    }
}

/// A test with `messages` and no `duration` (a workload in its transport's `TestDecl::messages`:
/// `tcp_msg`, …): the most simulated time the transfer may take.
pub const MESSAGES_LIMIT: Duration = Duration::from_secs(86_400);

impl TestKind {
    pub const ALL: [TestKind; 5] = [TestKind::Stream, TestKind::Maerts, TestKind::Rr, TestKind::Crr, TestKind::Msg];

    /// A request/response test (`rr`, `crr`): its metrics are transactions and latency.
    pub fn is_rr(self) -> bool {
        matches!(self, TestKind::Rr | TestKind::Crr)
    }

    /// The workload's name in scenario files (`test.kind = "rr"`, with `test.transport`).
    pub fn key(self) -> &'static str {
        match self {
            TestKind::Stream => "stream",
            TestKind::Maerts => "maerts",
            TestKind::Rr => "rr",
            TestKind::Crr => "crr",
            TestKind::Msg => "msg",
        }
    }

    fn parse(s: &str) -> Option<TestKind> {
        TestKind::ALL.into_iter().find(|k| k.key() == s)
    }

    /// netperf's name of the test without the protocol (`"TCP "` + this is netperf's banner).
    fn netperf_name(self) -> &'static str {
        match self {
            TestKind::Stream => "STREAM",
            TestKind::Maerts => "MAERTS",
            TestKind::Rr => "REQUEST/RESPONSE",
            TestKind::Crr => "Connect/Request/Response",
            TestKind::Msg => "small-message stream",
        }
    }
}

/// A test's full name, `PROTOCOL_WORKLOAD` (`"tcp_stream"`, `"rdp_rr"`): how scenario files have always
/// spelled `test.kind` and how result documents record it.
pub fn full_kind_name(protocol: Protocol, kind: TestKind) -> String {
    format!("{}_{}", protocol.key(), kind.key())
}

/// Every full test name a registered transport runs, in order (`tcp_stream`, …, `rdp_rr`).
pub fn full_kind_names() -> Vec<String> {
    Protocol::all().into_iter().flat_map(|p| p.workloads().into_iter().map(move |k| full_kind_name(p, k))).collect()
}

/// `test.kind` as written: a workload (`"stream"`), or a full name (`"tcp_stream"`) that also names the
/// transport.
fn parse_kind_spelling(s: &str) -> Option<(TestKind, Option<Protocol>)> {
    if let Some(k) = TestKind::parse(s) {
        return Some((k, None));
    }
    let (p, k) = s.split_once('_')?;
    Some((TestKind::parse(k)?, Some(Protocol::parse(p)?)))
}

/// Every spelling `test.kind` accepts: the workloads, then the full names.
fn kind_spellings() -> Vec<String> {
    TestKind::ALL.iter().map(|k| k.key().to_string()).chain(full_kind_names()).collect()
}

/// `test.kind` in a scenario file or a document: a spelling of [`parse_kind_spelling`], refused with the
/// accepted ones; written as the full name (the transport defaults to TCP).
#[derive(Debug, Clone, Copy)]
struct KindSpelling(TestKind, Option<Protocol>);

impl Serialize for KindSpelling {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&full_kind_name(self.1.unwrap_or_default(), self.0))
    }
}

impl<'de> Deserialize<'de> for KindSpelling {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match parse_kind_spelling(&s) {
            Some((k, p)) => Ok(KindSpelling(k, p)),
            None => {
                let accepted: Vec<String> = kind_spellings().iter().map(|k| format!("`{k}`")).collect();
                // serde's own wording for an unknown variant, with the list built from the registry.
                Err(serde::de::Error::custom(format_args!(
                    "unknown variant `{s}`, expected one of {}",
                    accepted.join(", ")
                )))
            }
        }
    }
}

/// The test and its netperf options. A document records the workload and the transport as one full name,
/// `kind = "tcp_stream"` (the spelling results have always had), through `TestRepr`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "TestRepr", from = "TestRepr")]
pub struct Test {
    /// The workload.
    pub kind: TestKind,
    /// The transport protocol that carries it (`test.transport`; a full `test.kind` such as `"rdp_rr"`
    /// names it too). Default: `tcp`.
    pub transport: Protocol,
    /// Measurement length from connection establishment (netperf `-l`).
    pub duration: Duration,
    /// Send call size (netperf `-m`). Default: the sender's send buffer, as netperf.
    pub message: ByteSize,
    /// Concurrent connections.
    pub parallel: u32,
    /// Open the `parallel` connections evenly over this long (`"10ms"`), instead of one SYN-frame time
    /// apart, so that many flows do not lose their initial windows together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_spread: Option<Duration>,
    /// Sample the first sender's cwnd, ssthresh, pipe, SRTT and progress this often (`"10ms"`); absent: no
    /// time series.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Duration>,
    /// Request and response sizes (netperf `-r req,rsp`), TCP_RR and TCP_CRR only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<ByteSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<ByteSize>,
    /// Messages to send (`rdp_stream`, `tcp_msg`): the test ends when the receiver has them all (or at
    /// `duration`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// `tcp_msg`: each connection writes one message this often (`"1ms"`); absent: back to back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Extra transactions in flight at the start (netperf `-b`), TCP_RR only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// netperf `-D`: TCP_NODELAY on both ends. netperf 2.2 sets `loc_nodelay` and `rem_nodelay` together
    /// (netperf.c/nettest_bsd.c, tag netperf-2.2pl4), the remote one through the test request to
    /// netserver. When set, it overrides `client.tcp.nodelay` and `server.tcp.nodelay`; absent: each
    /// host's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodelay: Option<bool>,
    /// With `test.series = { interval, vars }`: the RFC 4898 variables sampled on every connection end
    /// (docs/results.md, `logvars`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series_vars: Option<Vec<String>>,
}

impl Test {
    /// The test's full name, `PROTOCOL_WORKLOAD` (`"tcp_stream"`, `"rdp_rr"`), as documents record it.
    pub fn kind_name(&self) -> String {
        full_kind_name(self.transport, self.kind)
    }

    /// netperf's banner name of the test (`"TCP STREAM"`, `"RDP REQUEST/RESPONSE"`).
    pub fn netperf_name(&self) -> String {
        format!("{} {}", self.transport.key().to_uppercase(), self.kind.netperf_name())
    }
}

/// [`Test`] as a document holds it: the same fields, with the workload and the transport as one full
/// name in `kind`. Destructured whole both ways, so a field added to `Test` fails to compile here until it
/// is added.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestRepr {
    kind: KindSpelling,
    duration: Duration,
    message: ByteSize,
    parallel: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_spread: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    series: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request: Option<ByteSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response: Option<ByteSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    interval: Option<Duration>,
    #[serde(skip_serializing_if = "Option::is_none")]
    burst: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodelay: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    series_vars: Option<Vec<String>>,
}

impl From<Test> for TestRepr {
    fn from(t: Test) -> TestRepr {
        let kind = KindSpelling(t.kind, Some(t.transport));
        let Test {
            kind: _,
            transport: _,
            duration,
            message,
            parallel,
            start_spread,
            series,
            request,
            response,
            messages,
            interval,
            burst,
            nodelay,
            series_vars,
        } = t;
        TestRepr {
            kind,
            duration,
            message,
            parallel,
            start_spread,
            series,
            request,
            response,
            messages,
            interval,
            burst,
            nodelay,
            series_vars,
        }
    }
}

impl From<TestRepr> for Test {
    fn from(r: TestRepr) -> Test {
        let TestRepr {
            kind,
            duration,
            message,
            parallel,
            start_spread,
            series,
            request,
            response,
            messages,
            interval,
            burst,
            nodelay,
            series_vars,
        } = r;
        let KindSpelling(kind, transport) = kind;
        let transport = transport.unwrap_or_default();
        Test {
            kind,
            transport,
            duration,
            message,
            parallel,
            start_spread,
            series,
            request,
            response,
            messages,
            interval,
            burst,
            nodelay,
            series_vars,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "default_seed")]
    seed: u64,
    path: Option<RawPath>,
    #[serde(default)]
    client: RawHost,
    #[serde(default)]
    server: RawHost,
    test: Option<RawTest>,
    dumbbell: Option<RawDumbbell>,
    #[serde(default)]
    flow: Vec<RawFlow>,
    #[serde(default)]
    host: Vec<RawNetHost>,
    #[serde(default)]
    link: Vec<RawNetLink>,
    #[serde(default)]
    plot: Vec<PlotSpec>,
    #[serde(default)]
    published: Vec<crate::published::PublishedSeries>,
    #[serde(default)]
    table: Option<TableSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDumbbell {
    bottleneck: LinkConfig,
    reverse: Option<LinkConfig>,
    access_rate: Option<Rate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFlow {
    kind: FlowKind,
    stack: Option<String>,
    tcp: Option<toml::Table>,
    access_delay: Option<Duration>,
    #[serde(default)]
    start: Duration,
    message: Option<ByteSize>,
    request: Option<ByteSize>,
    response: Option<ByteSize>,
    interval: Option<Duration>,
    from: Option<String>,
    to: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetHost {
    name: String,
    #[serde(default = "default_stack")]
    stack: String,
    #[serde(default)]
    tcp: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetLink {
    a: String,
    b: String,
    forward: LinkConfig,
    backward: Option<LinkConfig>,
}

/// The most hosts and the most links a network takes.
pub const MAX_NET_HOSTS: usize = 4096;
pub const MAX_NET_LINKS: usize = 8192;

/// The most flows a `[dumbbell]` takes (two hosts and two access links each): 10,000, the largest of
/// `tcplab bench`'s dumbbells (1.4 GiB at 10,000 flows: docs/benchmarks.md).
pub const MAX_FLOWS: usize = 10_000;

fn default_seed() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    up: LinkConfig,
    down: Option<LinkConfig>,
}

/// A host as a scenario file writes it: `stack`, a table per registered transport (`tcp`, `rdp`), `host`.
struct RawHost {
    stack: String,
    /// (table, knobs) in the file's order; a table only once (the TOML parser refuses a second).
    tables: Vec<(&'static str, toml::Table)>,
    host: Nic,
}

impl RawHost {
    /// A host of `stack` with a `tcp` table only (a flow's or a network host's).
    fn tcp_only(stack: String, tcp: toml::Table) -> RawHost {
        RawHost { stack, tables: vec![(TcpConfig::TABLE, tcp)], host: Nic::default() }
    }
}

impl Default for RawHost {
    fn default() -> Self {
        RawHost { stack: default_stack(), tables: Vec::new(), host: Nic::default() }
    }
}

impl<'de> Deserialize<'de> for RawHost {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawHost;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of keys")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawHost, A::Error> {
                let mut raw = RawHost::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "stack" => raw.stack = map.next_value()?,
                        "host" => raw.host = map.next_value()?,
                        k => match crate::host_transports::registration(k) {
                            Some(r) => raw.tables.push((r.table, map.next_value()?)),
                            None => return Err(serde::de::Error::unknown_field(k, host_keys())),
                        },
                    }
                }
                Ok(raw)
            }
        }
        d.deserialize_map(V)
    }
}

fn default_stack() -> String {
    "rfc".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTest {
    kind: KindSpelling,
    /// The transport protocol that carries the workload: `"tcp"` or `"rdp"`. Default: the one a full
    /// `kind` names (`"rdp_rr"`), else `"tcp"`.
    transport: Option<Protocol>,
    duration: Option<Duration>,
    message: Option<ByteSize>,
    messages: Option<u64>,
    /// SO_SNDBUF of the sending side (netperf `-s`/`-S`); overrides its `tcp.send_buffer`.
    send_buffer: Option<ByteSize>,
    /// SO_RCVBUF of the receiving side; overrides its `tcp.recv_buffer`.
    recv_buffer: Option<ByteSize>,
    #[serde(default = "default_parallel")]
    parallel: u32,
    series: Option<RawSeries>,
    start_spread: Option<Duration>,
    request: Option<ByteSize>,
    response: Option<ByteSize>,
    burst: Option<u32>,
    interval: Option<Duration>,
    nodelay: Option<bool>,
}

/// `test.series`: `"100ms"` (the first sender's default columns) or `{ interval = "100ms", vars = [...] }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawSeries {
    Interval(Duration),
    Vars(RawSeriesVars),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeriesVars {
    interval: Duration,
    vars: Vec<String>,
}

fn default_parallel() -> u32 {
    1
}

/// The text of a scenario and the name to report errors against.
pub struct Source<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

struct Ctx<'a> {
    src: &'a Source<'a>,
    doc: Option<toml_edit::ImDocument<&'a str>>,
    /// Key paths set by `--set`, with the flag text.
    flags: Vec<(String, String)>,
}

impl Ctx<'_> {
    fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let message = message.into();
        // `a` is `b` or a part of it: `path.up` of `path`, `path[0]` (an array's item) of `path`.
        let within = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|r| r.is_empty() || r.starts_with(['.', '[']));
        if let Some((_, flag)) = self.flags.iter().rev().find(|(p, _)| within(key, p) || within(p, key)) {
            return ScenarioError { origin: Origin::Flag { flag: flag.clone() }, key: key.into(), message };
        }
        let line = self.doc.as_ref().and_then(|d| line_of(d, self.src.text, key));
        ScenarioError { origin: Origin::File { file: self.src.name.into(), line }, key: key.into(), message }
    }

    /// Deserializes `value` as `T`, reporting the failing key under `prefix`.
    fn deserialize<T: serde::de::DeserializeOwned>(
        &self,
        prefix: &str,
        value: toml::Value,
    ) -> Result<T, ScenarioError> {
        serde_path_to_error::deserialize(value).map_err(|e| self.path_error(prefix, e))
    }

    /// A deserialization error of the value under `prefix`, at its failing key.
    fn path_error(&self, prefix: &str, e: serde_path_to_error::Error<toml::de::Error>) -> ScenarioError {
        {
            let mut key = join(prefix, &e.path().to_string());
            // The TOML deserializer appends "in `path`"; the key is reported on its own.
            let mut message = e.inner().to_string().lines().next().unwrap_or_default().trim().to_string();
            if let Some(field) = unknown_field(&message) {
                if !key.ends_with(&field) {
                    key = join(&key, &field);
                }
                message = message.replace(&format!("unknown field `{field}`, expected"), "unknown key; accepted:");
            } else if message.starts_with("missing field") {
                message = message.replacen("missing field", "missing key", 1);
            }
            // serde's "expected struct LinkConfig" names a Rust type; the user wrote TOML.
            if let Some((head, _)) = message.split_once(", expected struct ") {
                message = format!("{head}, expected a table of keys");
            }
            if message.starts_with("unknown variant") {
                message = message.replacen("expected one of", "accepted:", 1).replacen("expected", "accepted:", 1);
            }
            self.error(key.trim_matches('.'), message)
        }
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty() || b == ".") {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}.{b}"),
    }
}

fn unknown_field(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// The 1-based line of the deepest part of `key` present in the document.
pub(crate) fn line_of(doc: &toml_edit::ImDocument<&str>, text: &str, key: &str) -> Option<usize> {
    use toml_edit::{Item, Value};
    enum Node<'a> {
        Table(&'a toml_edit::Table),
        Inline(&'a toml_edit::InlineTable),
        Leaf,
    }
    let mut node = Node::Table(doc.as_table());
    let mut span = None;
    for part in key.split('.') {
        // `plot[1]`: the second table of an array of tables (or of an inline array).
        if let Some((name, idx)) = part.strip_suffix(']').and_then(|p| p.split_once('[')) {
            let Ok(idx) = idx.parse::<usize>() else { break };
            let item = match node {
                Node::Table(t) => t.get(name),
                Node::Inline(_) | Node::Leaf => None,
            };
            let next = match item {
                Some(Item::ArrayOfTables(a)) => a.get(idx).map(|t| (t.span(), Node::Table(t))),
                Some(Item::Value(Value::Array(a))) => a
                    .get(idx)
                    .map(|v| (v.span(), if let Value::InlineTable(i) = v { Node::Inline(i) } else { Node::Leaf })),
                _ => None,
            };
            let Some((s, n)) = next else { break };
            span = s.or(span);
            node = n;
            continue;
        }
        let (k, next) = match node {
            Node::Table(t) => match t.get_key_value(part) {
                Some((k, item)) => (
                    k.span(),
                    match item {
                        Item::Table(t) => Node::Table(t),
                        Item::Value(Value::InlineTable(i)) => Node::Inline(i),
                        _ => Node::Leaf,
                    },
                ),
                None => break,
            },
            Node::Inline(t) => match t.get_key_value(part) {
                Some((k, v)) => {
                    (k.span(), if let Item::Value(Value::InlineTable(i)) = v { Node::Inline(i) } else { Node::Leaf })
                }
                None => break,
            },
            Node::Leaf => break,
        };
        span = k.or(span);
        node = next;
    }
    span.map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1)
}

/// Parses a scenario and applies `--set PATH=VALUE` overrides (VALUE is a TOML value; a bare word is a
/// string).
pub fn load(src: &Source, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let file_error = |line: Option<usize>, message: String| ScenarioError {
        origin: Origin::File { file: src.name.into(), line },
        key: String::new(),
        message,
    };
    let mut table: toml::Table = toml::from_str(src.text).map_err(|e| {
        let line = e.span().map(|s| src.text[..s.start.min(src.text.len())].matches('\n').count() + 1);
        file_error(line, format!("not valid TOML: {}", e.message().trim()))
    })?;
    // `[sweep]` and `[repeat]` say how the scenario is run, not what it is: crate::sweep reads them.
    table.remove("sweep");
    table.remove("repeat");
    let doc = toml_edit::ImDocument::parse(src.text).ok();
    let mut ctx = Ctx { src, doc, flags: Vec::new() };
    for flag in overrides {
        let (path, value) = parse_override(flag)?;
        if let Some(table @ ("sweep" | "repeat")) = path.split('.').next() {
            return Err(ScenarioError {
                origin: Origin::Flag { flag: flag.clone() },
                key: path.clone(),
                message: format!(
                    "[{table}] says how the scenario is run, not what it is, and --set does not reach it; \
                     accepted: --no-sweep (run without the file's [sweep]), --sweep PATH=VALUES (add or replace \
                     an axis), --iterations and --confidence (repetitions)"
                ),
            });
        }
        set_path(&mut table, &path, value).map_err(|message| ScenarioError {
            origin: Origin::Flag { flag: flag.clone() },
            key: path.clone(),
            message,
        })?;
        ctx.flags.push((path, flag.clone()));
    }
    // A NIC without a rate is faster than the path and never queues: a txqueuelen there would do nothing.
    for side in ["client", "server"] {
        let host = table.get(side).and_then(|h| h.get("host")).and_then(|h| h.as_table());
        if let Some(h) = host {
            if h.contains_key("txqueuelen") && !h.contains_key("nic_rate") {
                return Err(ctx.error(
                    &format!("{side}.host.txqueuelen"),
                    format!(
                        "has no effect without {side}.host.nic_rate (a NIC without a rate never queues); \
                         set nic_rate too, e.g. the link's rate for back-to-back hosts"
                    ),
                ));
            }
        }
    }
    // A dumbbell's links and hosts are its own: a two-host key beside it would be silently ignored. Of
    // `[test]` it takes the measurement's length only.
    let mut dumbbell_duration = None;
    let mut flows_series = None;
    // A network of [[host]] and [[link]] tables takes the same keys as a dumbbell.
    let shape = if table.contains_key("dumbbell") {
        Some((
            "[dumbbell]",
            "its links are dumbbell.bottleneck, dumbbell.reverse and each flow's access_delay; its \
                            hosts are the [[flow]] tables",
            "flow",
        ))
    } else if table.contains_key("link") || table.contains_key("host") {
        Some((
            "[[host]]/[[link]]",
            "its links are the [[link]] tables and its hosts the [[host]] tables",
            "host, link, flow",
        ))
    } else {
        None
    };
    if let Some((shape, own, tables)) = shape {
        if let Some(test) = table.remove("test") {
            let toml::Value::Table(mut test) = test else {
                return Err(ctx.error("test", format!("expected a table; beside {shape} it takes duration only")));
            };
            if let Some(k) = test.keys().find(|k| *k != "duration" && *k != "series") {
                return Err(ctx.error(
                    &format!("test.{k}"),
                    format!(
                        "not used with {shape} (each [[flow]] says what it runs); accepted in [test] beside \
                         {shape}: duration, series (every flow over time, an interval such as \"100ms\")"
                    ),
                ));
            }
            dumbbell_duration = test.remove("duration");
            flows_series = test.remove("series");
        }
        for key in ["path", "client", "server"] {
            if table.contains_key(key) {
                return Err(ctx.error(
                    key,
                    format!(
                        "not used with {shape} ({own}); accepted beside {shape}: name, description, seed, \
                         test.duration, {tables}, plot, published, table"
                    ),
                ));
            }
        }
    }
    let mut explicit = std::collections::BTreeMap::new();
    written(&ctx, "", &table, &mut explicit);
    let raw: RawScenario = ctx.deserialize("", toml::Value::Table(table))?;
    let mut scenario = resolve(&ctx, raw, dumbbell_duration)?;
    // `test.series` beside [[flow]]: every flow sampled at this interval (crate::topology::FlowSeries).
    if let Some(v) = flows_series {
        let d: Duration = ctx.deserialize("test.series", v)?;
        if d < Duration::from_millis(1) || d > scenario.test.duration {
            return Err(ctx.error(
                "test.series",
                format!(
                    "{d}: accepted 1ms to test.duration ({}); beside [[flow]] an interval only",
                    scenario.test.duration
                ),
            ));
        }
        scenario.test.series = Some(d);
    }
    Ok(Scenario { explicit, ..scenario })
}

/// The dotted path of every value in `table` (tables are walked, an array is one value) with where it was
/// written; the plots, reference figures and labels are not knobs and are left out.
fn written(ctx: &Ctx, prefix: &str, table: &toml::Table, out: &mut std::collections::BTreeMap<String, Origin>) {
    for (k, v) in table {
        let key = join(prefix, k);
        if prefix.is_empty() && matches!(k.as_str(), "name" | "description" | "plot" | "published") {
            continue;
        }
        match v {
            toml::Value::Table(t) => written(ctx, &key, t, out),
            _ => {
                let origin = ctx.error(&key, "").origin;
                out.insert(key, origin);
            }
        }
    }
}

fn parse_override(flag: &str) -> Result<(String, toml::Value), ScenarioError> {
    let bad = |message: &str| ScenarioError {
        origin: Origin::Flag { flag: flag.into() },
        key: String::new(),
        message: message.into(),
    };
    let (path, value) = flag.split_once('=').ok_or_else(|| bad("expected PATH=VALUE, e.g. test.duration=\"10s\""))?;
    let path = path.trim();
    if path.is_empty() || path.split('.').any(|p| p.is_empty()) {
        return Err(bad("expected a dotted key path before '=', e.g. path.up.rate=\"10mbit\""));
    }
    let value = value.trim();
    let parsed = toml::from_str::<toml::Table>(&format!("v = {value}")).ok().and_then(|mut t| t.remove("v"));
    Ok((canonical_path(path), parsed.unwrap_or_else(|| toml::Value::String(value.to_string()))))
}

/// A `--set`/`--sweep` path with an array's item as errors name it: `flow.1.start` is `flow[1].start`
/// (both spellings are accepted; a part of digits indexes the array before it).
pub fn canonical_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    for part in path.split('.') {
        if !out.is_empty() && !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) && !out.ends_with(']') {
            out.push('[');
            out.push_str(part);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(part);
        }
    }
    out
}

/// `name[i]`: the array `name` and the index `i`.
fn indexed(part: &str) -> Option<(&str, &str)> {
    part.strip_suffix(']').and_then(|p| p.split_once('['))
}

fn set_path(table: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut t = table;
    for (i, part) in parts[..parts.len() - 1].iter().enumerate() {
        // `flow[1]`: an item of an array of tables the file has (a flag changes one, it adds none).
        if let Some((name, idx)) = indexed(part) {
            let len = t.get(name).and_then(|v| v.as_array()).map(Vec::len);
            let Some(len) = len else {
                return Err(format!(
                    "{name}[{idx}]: the scenario has no [[{name}]] tables; --set changes an item, it adds none"
                ));
            };
            let item = idx.parse::<usize>().ok().filter(|&k| k < len).ok_or_else(|| {
                format!(
                    "{name}[{idx}]: the scenario has {len} [[{name}]] tables, {name}[0] to {name}[{}]; --set changes an \
                     item, it adds none",
                    len.saturating_sub(1)
                )
            })?;
            let entry = &mut t.get_mut(name).and_then(|v| v.as_array_mut()).expect("an array")[item];
            t = entry.as_table_mut().ok_or_else(|| format!("{} is not a table", parts[..=i].join(".")))?;
            continue;
        }
        let entry = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry.as_table_mut().ok_or_else(|| format!("{} is not a table", parts[..=i].join(".")))?;
    }
    let last = parts[parts.len() - 1];
    if indexed(last).is_some() {
        return Err(format!("{path}: a whole [[table]] cannot be set; set one of its keys ({path}.KEY=VALUE)"));
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// A link's own checks, reported under `key` (`path.up`, `dumbbell.bottleneck`).
fn check_link(ctx: &Ctx, key: &str, link: &LinkConfig) -> Result<(), ScenarioError> {
    if let Err(m) = link.loss.validate() {
        let param = m.split([' ', ':']).next().unwrap_or("");
        return Err(ctx.error(&format!("{key}.loss.{param}"), m));
    }
    if let Err((field, m)) = link.validate_tick() {
        return Err(ctx.error(&format!("{key}.{field}"), m));
    }
    if let Err((field, m)) = link.validate_stages() {
        return Err(ctx.error(&format!("{key}.{field}"), m));
    }
    // RFC 791: every internet module must be able to forward a datagram of 68 octets.
    if let Some(mtu) = link.mtu {
        if !(68..=65535).contains(&mtu.bytes()) {
            return Err(ctx.error(
                &format!("{key}.mtu"),
                format!(
                    "{mtu}: accepted 68B to 65535B (RFC 791: IPv4 needs at least 68; its length field ends at 65535)"
                ),
            ));
        }
    }
    Ok(())
}

/// The send call size of a stream flow without `message`.
pub const FLOW_DEFAULT_MESSAGE: u64 = 16 * 1024;
/// The message size of a msg flow without `message`.
pub const FLOW_DEFAULT_MSG_MESSAGE: u64 = 1024;

/// A flows scenario's `test.duration` (`shape`: `[dumbbell]`, `[[host]]/[[link]]`), the one `[test]` key
/// it takes.
fn flows_duration(ctx: &Ctx, shape: &str, duration: Option<toml::Value>) -> Result<Duration, ScenarioError> {
    let Some(duration) = duration else {
        return Err(ctx.error(
            "test.duration",
            format!("missing key; a {shape} measures for [test] duration, a duration such as \"30s\""),
        ));
    };
    let duration: Duration = ctx.deserialize("test.duration", duration)?;
    if duration.is_zero() || duration > Duration::from_secs(86_400) {
        return Err(ctx.error("test.duration", format!("{duration}: accepted more than 0s, at most 1 day")));
    }
    Ok(duration)
}

/// The checks every flow gets in either shape: the keys of its kind, its sizes and its start; returns its
/// `message`, `request` and `response` with their defaults filled in.
#[allow(clippy::type_complexity)]
fn flow_sizes(
    ctx: &Ctx,
    at: &str,
    f: &RawFlow,
    duration: Duration,
) -> Result<(Option<ByteSize>, Option<ByteSize>, Option<ByteSize>), ScenarioError> {
    let kind = f.kind;
    for (key, given, accepted) in [
        ("message", f.message.is_some(), &["stream", "msg"][..]),
        ("request", f.request.is_some(), &["rr"]),
        ("response", f.response.is_some(), &["rr"]),
        ("interval", f.interval.is_some(), &["msg"]),
    ] {
        if given && !accepted.contains(&kind.key()) {
            let with: Vec<String> = accepted.iter().map(|k| format!("kind = {k:?}")).collect();
            return Err(ctx.error(
                &format!("{at}.{key}"),
                format!("not used by kind = {:?}; accepted with {}", kind.key(), with.join(" or ")),
            ));
        }
    }
    if let Some(i) = f.interval {
        if i.is_zero() || i > Duration::from_secs(3600) {
            return Err(ctx.error(&format!("{at}.interval"), format!("{i}: accepted more than 0s, at most 1 hour")));
        }
    }
    for (key, size) in [("message", f.message), ("request", f.request), ("response", f.response)] {
        if let Some(b) = size {
            if b.bytes() == 0 || b.bytes() > 1 << 30 {
                return Err(ctx.error(&format!("{at}.{key}"), format!("{b}: accepted 1B to 1GiB")));
            }
        }
    }
    if f.start >= duration {
        return Err(ctx.error(
            &format!("{at}.start"),
            format!("{}: accepted 0s to less than test.duration ({duration})", f.start),
        ));
    }
    Ok(match kind {
        FlowKind::Stream => (Some(f.message.unwrap_or(ByteSize::new(FLOW_DEFAULT_MESSAGE))), None, None),
        FlowKind::Rr => {
            (None, Some(f.request.unwrap_or(ByteSize::new(1))), Some(f.response.unwrap_or(ByteSize::new(1))))
        }
        FlowKind::Msg => (Some(f.message.unwrap_or(ByteSize::new(FLOW_DEFAULT_MSG_MESSAGE))), None, None),
    })
}

/// A flows scenario with `path`, `client`, `server` and `test` filled in (see [`Scenario::dumbbell`]).
fn flows_scenario(raw: &RawScenario, path: PathSpec, first: Host, flows: usize, duration: Duration) -> Scenario {
    Scenario {
        name: raw.name.clone(),
        description: raw.description.clone(),
        seed: raw.seed,
        path,
        client: first.clone(),
        server: first,
        plot: Vec::new(),
        published: Vec::new(),
        explicit: Default::default(),
        table: None,
        warnings: Vec::new(),
        test: Test {
            kind: TestKind::Stream,
            transport: Protocol::TCP,
            duration,
            message: ByteSize::new(FLOW_DEFAULT_MESSAGE),
            parallel: flows as u32,
            start_spread: None,
            messages: None,
            interval: None,
            series: None,
            series_vars: None,
            request: None,
            response: None,
            burst: None,
            nodelay: None,
        },
        dumbbell: None,
        flow: Vec::new(),
        host: Vec::new(),
        link: Vec::new(),
    }
}

/// A flows scenario's plots, reference figures and table, checked and set.
fn flows_extras(ctx: &Ctx, scenario: &mut Scenario, raw: RawScenario) -> Result<(), ScenarioError> {
    check_plots(ctx, scenario, &raw.plot)?;
    scenario.plot = raw.plot;
    check_published(ctx, scenario, &raw.published)?;
    scenario.published = raw.published;
    if let Some(t) = &raw.table {
        check_table(ctx, scenario, t)?;
    }
    scenario.table = raw.table;
    Ok(())
}

/// A `[dumbbell]` scenario: its links and flows checked, and `path`/`test`/`client`/`server` filled in
/// from them (see [`Scenario::dumbbell`]).
fn resolve_dumbbell(
    ctx: &Ctx,
    mut raw: RawScenario,
    d: RawDumbbell,
    duration: Option<toml::Value>,
) -> Result<Scenario, ScenarioError> {
    let duration = flows_duration(ctx, "[dumbbell]", duration)?;
    let reverse = d.reverse.clone().unwrap_or_else(|| d.bottleneck.clone());
    check_link(ctx, "dumbbell.bottleneck", &d.bottleneck)?;
    check_link(ctx, "dumbbell.reverse", &reverse)?;
    if raw.flow.is_empty() {
        return Err(
            ctx.error("dumbbell", "has no flows; add one [[flow]] table per flow (kind = \"stream\" or \"rr\")")
        );
    }
    if raw.flow.len() > MAX_FLOWS {
        return Err(ctx.error("flow", format!("{} flows: accepted 1 to {MAX_FLOWS}", raw.flow.len())));
    }
    let mut flows = Vec::with_capacity(raw.flow.len());
    let mut hosts: Vec<Host> = Vec::with_capacity(raw.flow.len());
    for (i, f) in std::mem::take(&mut raw.flow).into_iter().enumerate() {
        let at = format!("flow[{i}]");
        for (key, given) in [("from", f.from.is_some()), ("to", f.to.is_some())] {
            if given {
                return Err(ctx.error(
                    &format!("{at}.{key}"),
                    "not used with [dumbbell] (flow i goes from sender i to receiver i); from and to name the \
                     hosts of a [[host]]/[[link]] network",
                ));
            }
        }
        let raw_host =
            RawHost::tcp_only(f.stack.clone().unwrap_or_else(default_stack), f.tcp.clone().unwrap_or_default());
        let host = resolve_host(ctx, &at, raw_host, Protocol::TCP)?;
        host.tcp().validate().map_err(|m| {
            let knob = m.split([' ', ',', ':']).next().unwrap_or("");
            ctx.error(&format!("{at}.tcp.{knob}"), m)
        })?;
        let access_delay = f.access_delay.unwrap_or_default();
        let (message, request, response) = flow_sizes(ctx, &at, &f, duration)?;
        if access_delay > Duration::from_secs(60) {
            return Err(ctx.error(&format!("{at}.access_delay"), format!("{access_delay}: accepted 0s to 60s")));
        }
        flows.push(Flow {
            kind: f.kind,
            stack: host.stack.clone(),
            tcp: host.tcp().clone(),
            access_delay,
            start: f.start,
            message,
            interval: f.interval,
            request,
            response,
            from: None,
            to: None,
        });
        hosts.push(host);
    }
    let access_rate = d.access_rate.unwrap_or_else(|| "1gbit".parse().expect("a rate"));
    if access_rate.bps() == 0 {
        return Err(ctx.error("dumbbell.access_rate", "a rate must be positive"));
    }
    let path = PathSpec { up: d.bottleneck.clone(), down: reverse.clone() };
    let mut scenario = flows_scenario(&raw, path, hosts[0].clone(), flows.len(), duration);
    scenario.dumbbell = Some(Dumbbell { bottleneck: d.bottleneck, reverse, access_rate });
    scenario.flow = flows;
    flows_extras(ctx, &mut scenario, raw)?;
    // Every number within its range (crate::limits), each flow's knobs checked as a host's, all reported
    // at the keys the file names: the filled-in path is the bottleneck, the client and server the flow.
    // The first probe checks everything; the others differ from it only in the hosts, so they leave the
    // flows out (each probe carrying all of them made loading quadratic: 47 s for 1000 flows), and a host
    // written as one checked before passes as it did.
    let bare = Scenario { flow: Vec::new(), ..scenario.clone() };
    let mut seen = std::collections::HashSet::new();
    for (i, h) in hosts.into_iter().enumerate() {
        if !seen.insert(serde_json::to_string(&h).unwrap_or_default()) {
            continue;
        }
        let others = if i == 0 { &scenario } else { &bare };
        let probe = Scenario { client: h.clone(), server: h, ..others.clone() };
        crate::limits::check(&probe).map_err(|e| {
            let key = if let Some(k) = e.key.strip_prefix("path.up.") {
                format!("dumbbell.bottleneck.{k}")
            } else if let Some(k) = e.key.strip_prefix("path.down.") {
                format!("dumbbell.reverse.{k}")
            } else if let Some(k) = e.key.strip_prefix("client.").or_else(|| e.key.strip_prefix("server.")) {
                format!("flow[{i}].{k}")
            } else {
                e.key.clone()
            };
            ctx.error(&key, e.message)
        })?;
    }
    Ok(scenario)
}

/// A host name as links and flows spell it.
fn valid_host_name(n: &str) -> bool {
    !n.is_empty() && n.len() <= 64 && n.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A network of `[[host]]` and `[[link]]` tables: hosts named once, links between named hosts, each flow
/// from one host to another with a route both ways; `path` is the slowest link direction (the budget's
/// and the cross-checks' estimate of the rate), `client`/`server` flow 0's hosts.
fn resolve_network(ctx: &Ctx, mut raw: RawScenario, duration: Option<toml::Value>) -> Result<Scenario, ScenarioError> {
    const SHAPE: &str = "[[host]]/[[link]]";
    let duration = flows_duration(ctx, "network of [[host]] and [[link]] tables", duration)?;
    if raw.host.len() < 2 {
        return Err(ctx.error(
            "host",
            format!(
                "{} [[host]] tables; a network has two hosts at least (name = \"...\"), joined by [[link]] tables",
                raw.host.len()
            ),
        ));
    }
    if raw.host.len() > MAX_NET_HOSTS {
        return Err(ctx.error("host", format!("{} hosts: accepted 2 to {MAX_NET_HOSTS}", raw.host.len())));
    }
    if raw.link.is_empty() || raw.link.len() > MAX_NET_LINKS {
        return Err(ctx.error(
            "link",
            format!("{} [[link]] tables: accepted 1 to {MAX_NET_LINKS} (a = \"HOST\", b = \"HOST\", forward = {{ rate = ... }})", raw.link.len()),
        ));
    }
    let mut names: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut hosts = Vec::with_capacity(raw.host.len());
    let mut resolved = Vec::with_capacity(raw.host.len());
    for (i, h) in std::mem::take(&mut raw.host).into_iter().enumerate() {
        let at = format!("host[{i}]");
        if !valid_host_name(&h.name) {
            return Err(ctx.error(
                &format!("{at}.name"),
                format!("{:?}: accepted 1 to 64 letters, digits, '-', '_' or '.'", h.name),
            ));
        }
        if let Some(j) = names.insert(h.name.clone(), i) {
            return Err(ctx.error(
                &format!("{at}.name"),
                format!("{:?} names host[{j}] already; each host its own name", h.name),
            ));
        }
        let host = resolve_host(ctx, &at, RawHost::tcp_only(h.stack, h.tcp), Protocol::TCP)?;
        host.tcp().validate().map_err(|m| {
            let knob = m.split([' ', ',', ':']).next().unwrap_or("");
            ctx.error(&format!("{at}.tcp.{knob}"), m)
        })?;
        hosts.push(NetHost { name: h.name, stack: host.stack.clone(), tcp: host.tcp().clone() });
        resolved.push(host);
    }
    let accepted = || {
        let mut v: Vec<String> = hosts.iter().take(12).map(|h| format!("{:?}", h.name)).collect();
        if hosts.len() > 12 {
            v.push(format!("... ({} hosts)", hosts.len()));
        }
        v.join(", ")
    };
    let lookup = |key: &str, name: &str| {
        names
            .get(name)
            .copied()
            .ok_or_else(|| ctx.error(key, format!("{name:?}: no [[host]] has that name; accepted: {}", accepted())))
    };
    let mut links = Vec::with_capacity(raw.link.len());
    let mut specs = Vec::with_capacity(raw.link.len());
    for (i, l) in std::mem::take(&mut raw.link).into_iter().enumerate() {
        let at = format!("link[{i}]");
        let a = lookup(&format!("{at}.a"), &l.a)?;
        let b = lookup(&format!("{at}.b"), &l.b)?;
        if a == b {
            return Err(ctx.error(&format!("{at}.b"), format!("{:?}: a link joins two different hosts", l.b)));
        }
        let backward = l.backward.unwrap_or_else(|| l.forward.clone());
        check_link(ctx, &format!("{at}.forward"), &l.forward)?;
        check_link(ctx, &format!("{at}.backward"), &backward)?;
        specs.push(tcplab_sim::LinkSpec {
            a: tcplab_sim::HostId(a as u32),
            b: tcplab_sim::HostId(b as u32),
            forward: l.forward.clone(),
            backward: backward.clone(),
        });
        links.push(NetLink { a: l.a, b: l.b, forward: l.forward, backward });
    }
    if raw.flow.is_empty() {
        return Err(ctx.error(
            "flow",
            "a network has no flows; add one [[flow]] table per flow (kind = \"stream\" or \"rr\", from = \"HOST\", \
             to = \"HOST\")",
        ));
    }
    if raw.flow.len() > MAX_FLOWS {
        return Err(ctx.error("flow", format!("{} flows: accepted 1 to {MAX_FLOWS}", raw.flow.len())));
    }
    let mut routes = tcplab_sim::Routes::new(hosts.len(), &specs);
    let mut flows = Vec::with_capacity(raw.flow.len());
    for (i, f) in std::mem::take(&mut raw.flow).into_iter().enumerate() {
        let at = format!("flow[{i}]");
        let in_network =
            |key: &str, why: &str| ctx.error(&format!("{at}.{key}"), format!("not used in a {SHAPE} network: {why}"));
        if f.access_delay.is_some() {
            return Err(in_network(
                "access_delay",
                "the delays are the [[link]]s' (a flow's own access link is a [[link]] to its host)",
            ));
        }
        if f.stack.is_some() || f.tcp.is_some() {
            let key = if f.stack.is_some() { "stack" } else { "tcp" };
            return Err(in_network(key, "each [[host]] has its stack and tcp, which every flow end on it runs"));
        }
        let (Some(from), Some(to)) = (f.from.clone(), f.to.clone()) else {
            let key = if f.from.is_none() { "from" } else { "to" };
            return Err(ctx.error(
                &format!("{at}.{key}"),
                format!("missing key; a flow in a network goes from one [[host]] to another; accepted: {}", accepted()),
            ));
        };
        let (src, dst) = (lookup(&format!("{at}.from"), &from)?, lookup(&format!("{at}.to"), &to)?);
        if src == dst {
            return Err(ctx.error(&format!("{at}.to"), format!("{to:?}: a flow goes to another host than its own")));
        }
        let (hs, hd) = (tcplab_sim::HostId(src as u32), tcplab_sim::HostId(dst as u32));
        if routes.route(hs, hd).is_err() || routes.route(hd, hs).is_err() {
            return Err(ctx.error(
                &format!("{at}.to"),
                format!(
                    "{to:?}: no path of [[link]]s joins it to {from:?} (within {} hops)",
                    tcplab_sim::graph::MAX_HOPS
                ),
            ));
        }
        let (message, request, response) = flow_sizes(ctx, &at, &f, duration)?;
        let sender = &resolved[src];
        flows.push(Flow {
            kind: f.kind,
            stack: sender.stack.clone(),
            tcp: sender.tcp().clone(),
            access_delay: Duration::ZERO,
            start: f.start,
            message,
            interval: f.interval,
            request,
            response,
            from: Some(from),
            to: Some(to),
        });
    }
    // The slowest direction (the first of equals), as `path`.
    let slowest =
        links.iter().flat_map(|l| [&l.forward, &l.backward]).min_by_key(|c| c.rate.bps()).cloned().expect("a link");
    let path = PathSpec { up: slowest.clone(), down: slowest };
    let first = resolved[names[flows[0].from.as_deref().expect("a network flow")]].clone();
    let mut scenario = flows_scenario(&raw, path, first, flows.len(), duration);
    scenario.flow = flows;
    scenario.host = hosts;
    scenario.link = links;
    flows_extras(ctx, &mut scenario, raw)?;
    // Every number within its range (crate::limits), each link direction checked as a path's and each
    // host as a client, reported at the keys the file names.
    let dirs = scenario.link.iter().enumerate().flat_map(|(i, l)| {
        [(format!("link[{i}].forward"), l.forward.clone()), (format!("link[{i}].backward"), l.backward.clone())]
    });
    for (key, dir) in dirs {
        let probe = Scenario { path: PathSpec { up: dir.clone(), down: dir }, ..scenario.clone() };
        crate::limits::check(&probe).map_err(|e| {
            let k = e.key.strip_prefix("path.up.").or_else(|| e.key.strip_prefix("path.down."));
            ctx.error(&k.map_or_else(|| e.key.clone(), |k| format!("{key}.{k}")), e.message)
        })?;
    }
    for (i, h) in resolved.into_iter().enumerate() {
        let probe = Scenario { client: h.clone(), server: h, ..scenario.clone() };
        crate::limits::check(&probe).map_err(|e| {
            let k = e.key.strip_prefix("client.").or_else(|| e.key.strip_prefix("server."));
            ctx.error(&k.map_or_else(|| e.key.clone(), |k| format!("host[{i}].{k}")), e.message)
        })?;
    }
    Ok(scenario)
}

/// `dumbbell_duration`: a `[dumbbell]` scenario's `test.duration`, the one key of `[test]` it takes (taken
/// out of the table by `load`).
fn resolve(ctx: &Ctx, mut raw: RawScenario, dumbbell_duration: Option<toml::Value>) -> Result<Scenario, ScenarioError> {
    if !raw.link.is_empty() || !raw.host.is_empty() {
        if raw.dumbbell.is_some() {
            return Err(ctx.error(
                "dumbbell",
                "a scenario is a [dumbbell] or a network of [[host]] and [[link]] tables, not both",
            ));
        }
        return resolve_network(ctx, raw, dumbbell_duration);
    }
    if let Some(d) = raw.dumbbell.take() {
        return resolve_dumbbell(ctx, raw, d, dumbbell_duration);
    }
    if !raw.flow.is_empty() {
        return Err(ctx.error(
            "flow",
            "[[flow]] needs a [dumbbell] (the bottleneck the flows share) or a network of [[host]] and [[link]] \
             tables; the client-server test is [test]",
        ));
    }
    let Some(raw_path) = raw.path.take() else { return Err(ctx.error("", "missing key `path`")) };
    let Some(raw_test) = raw.test.take() else { return Err(ctx.error("", "missing key `test`")) };
    let down = raw_path.down.clone().unwrap_or_else(|| raw_path.up.clone());
    for (key, link) in [("path.up", &raw_path.up), ("path.down", &down)] {
        check_link(ctx, key, link)?;
    }
    let t = raw_test;
    let KindSpelling(kind, named) = t.kind;
    let transport = match (named, t.transport) {
        (Some(a), Some(b)) if a != b => {
            return Err(ctx.error(
                "test.transport",
                format!(
                    "{:?}: test.kind = {:?} names the transport {:?}; accepted: {:?}, or test.kind = {:?} (the \
                     workload alone)",
                    b.key(),
                    full_kind_name(a, kind),
                    a.key(),
                    a.key(),
                    kind.key()
                ),
            ))
        }
        (a, b) => b.or(a).unwrap_or_default(),
    };
    let name = full_kind_name(transport, kind);
    if !transport.workloads().contains(&kind) {
        let runs: Vec<String> =
            transport.workloads().iter().map(|k| format!("{:?}", full_kind_name(transport, *k))).collect();
        return Err(ctx.error(
            "test.kind",
            format!(
                "{name:?}: {} does not run the {:?} workload; accepted: {}",
                transport.key(),
                kind.key(),
                runs.join(", ")
            ),
        ));
    }
    // What the test's transport declares of the test keys (`TransportConfig::TEST`).
    let decl = transport.registration().test;
    let mut client = resolve_host(ctx, "client", raw.client, transport)?;
    let mut server = resolve_host(ctx, "server", raw.server, transport)?;
    let msg = kind == TestKind::Msg;
    let by_messages = decl.messages.contains(&kind.key());
    if t.messages.is_some() && !by_messages {
        let mut with: Vec<String> = Protocol::all()
            .into_iter()
            .flat_map(|p| {
                let r = p.registration();
                r.test.messages.iter().filter_map(move |w| TestKind::parse(w).map(|k| full_kind_name(p, k)))
            })
            .map(|n| format!("{n:?}"))
            .collect();
        with.sort();
        return Err(ctx
            .error("test.messages", format!("not used by test.kind = {:?}; accepted with {}", name, with.join(", "))));
    }
    if t.interval.is_some() && !msg {
        return Err(
            ctx.error("test.interval", format!("not used by test.kind = {:?}; accepted with \"tcp_msg\"", name))
        );
    }
    if let Some(d) = t.interval {
        if d.is_zero() || d > Duration::from_secs(3600) {
            return Err(ctx.error(
                "test.interval",
                format!("{d}: accepted more than 0s, at most 1h (absent: messages back to back)"),
            ));
        }
    }
    for (key, why) in decl.refused {
        let given = match *key {
            "test.send_buffer" => t.send_buffer.is_some(),
            "test.recv_buffer" => t.recv_buffer.is_some(),
            "test.nodelay" => t.nodelay.is_some(),
            other => unreachable!("{other}: a transport refuses a test key the validation does not know"),
        };
        if given {
            return Err(ctx.error(
                key,
                format!(
                    "not used by test.kind = {:?} ({why}); accepted with the {}_* kinds",
                    name,
                    Protocol::TCP.key()
                ),
            ));
        }
    }
    if let (Some(RawSeries::Vars(_)), Some(instead)) = (&t.series, decl.series_vars_refused) {
        return Err(ctx.error(
            "test.series",
            format!(
                "the {{ interval, vars }} form (TCP's RFC 4898 variables of every end) is not used by test.kind = \
                 {:?}; accepted: {instead}",
                name
            ),
        ));
    }
    if let (true, Some(n)) = (by_messages, t.messages) {
        if !(1..=100_000_000).contains(&n) {
            return Err(ctx.error("test.messages", format!("{n}: accepted 1 to 100000000")));
        }
    }
    let duration = match (t.duration, t.messages) {
        (Some(d), _) => d,
        (None, Some(_)) => MESSAGES_LIMIT,
        (None, None) => {
            let also = if by_messages { " (or test.messages)" } else { "" };
            return Err(ctx.error("test.duration", format!("missing key{also}; accepted a duration such as \"10s\"")));
        }
    };
    let rr = kind.is_rr();
    // The registered tests of the workloads `with`, quoted: what a workload's key is accepted with.
    let accepted_with = |with: fn(TestKind) -> bool| -> String {
        let names: Vec<String> = Protocol::all()
            .into_iter()
            .flat_map(|p| {
                p.workloads().into_iter().filter(|&k| with(k)).map(move |k| format!("{:?}", full_kind_name(p, k)))
            })
            .collect();
        names.join(", ")
    };
    for (key, given) in [("test.request", t.request.is_some()), ("test.response", t.response.is_some())] {
        if given && !rr {
            let kinds = accepted_with(TestKind::is_rr);
            return Err(ctx.error(key, format!("not used by test.kind = {:?}; accepted with {kinds}", name)));
        }
    }
    if t.burst.is_some() && kind != TestKind::Rr {
        let kinds = accepted_with(|k| k == TestKind::Rr);
        return Err(ctx.error("test.burst", format!("not used by test.kind = {:?}; accepted with {kinds}", name)));
    }
    for (key, size) in [("test.request", t.request), ("test.response", t.response)] {
        if let Some(b) = size {
            if b.bytes() == 0 || b.bytes() > 1 << 30 {
                return Err(ctx.error(key, format!("{b}: accepted 1B to 1GiB")));
            }
        }
    }
    if let Some(b) = t.burst {
        if b > 100_000 {
            return Err(ctx.error("test.burst", format!("{b}: accepted 0 to 100000 extra transactions")));
        }
    }
    let (request, response, burst) = match kind {
        TestKind::Rr => (
            Some(t.request.unwrap_or(ByteSize::new(1))),
            Some(t.response.unwrap_or(ByteSize::new(1))),
            Some(t.burst.unwrap_or(0)),
        ),
        TestKind::Crr => {
            (Some(t.request.unwrap_or(ByteSize::new(1))), Some(t.response.unwrap_or(ByteSize::new(1))), None)
        }
        _ => (None, None, None),
    };
    if duration.is_zero() || duration > Duration::from_secs(86_400) {
        return Err(ctx.error("test.duration", format!("{duration}: accepted more than 0s, at most 1 day")));
    }
    let (series, series_vars) = match t.series {
        None => (None, None),
        Some(RawSeries::Interval(d)) => (Some(d), None),
        Some(RawSeries::Vars(v)) => {
            let accepted = crate::columns::estats_vars();
            if let Some(bad) = v.vars.iter().find(|n| !accepted.contains(n)) {
                return Err(ctx.error(
                    "test.series.vars",
                    format!("{bad:?}: not an RFC 4898 variable of tcplab; accepted: {}", accepted.join(", ")),
                ));
            }
            (Some(v.interval), Some(v.vars))
        }
    };
    if let Some(d) = series {
        if d < Duration::from_micros(100) {
            return Err(ctx.error("test.series", format!("{d}: accepted 100us or more")));
        }
    }
    if !(1..=100_000).contains(&t.parallel) {
        return Err(ctx.error("test.parallel", format!("{}: accepted 1 to 100000 connections", t.parallel)));
    }
    if let Some(d) = t.start_spread {
        if d >= duration {
            return Err(ctx.error("test.start_spread", format!("{d}: accepted less than test.duration ({duration})")));
        }
    }
    if kind == TestKind::Crr && t.parallel > client.host.ephemeral_ports.len() {
        return Err(ctx.error(
            "test.parallel",
            format!(
                "{}: accepted 1 to {} (the client's ephemeral ports, client.host.ephemeral_ports = \"{}\")",
                t.parallel,
                client.host.ephemeral_ports.len(),
                client.host.ephemeral_ports
            ),
        ));
    }
    let (sender, receiver) = match kind {
        TestKind::Maerts => (&mut server, &mut client),
        _ => (&mut client, &mut server),
    };
    for (key, b, host) in
        [("test.send_buffer", t.send_buffer, &*sender), ("test.recv_buffer", t.recv_buffer, &*receiver)]
    {
        if let Some(b) = b {
            if b < host.tcp().mss || b.bytes() > 1 << 30 {
                return Err(ctx.error(key, format!("{b}: accepted one MSS ({}) to 1GiB", host.tcp().mss)));
            }
        }
    }
    if let Some(b) = t.send_buffer {
        sender.tcp_mut().send_buffer = b;
    }
    if let Some(b) = t.recv_buffer {
        receiver.tcp_mut().recv_buffer = b;
    }
    if let Some(nd) = t.nodelay {
        // netperf -D: both ends (loc_nodelay and rem_nodelay).
        sender.tcp_mut().nodelay = nd;
        receiver.tcp_mut().nodelay = nd;
    }
    let message = t.message.unwrap_or_else(|| {
        (transport.registration().default_message)(kind.key()).map_or(sender.tcp().send_buffer, ByteSize::new)
    });
    if let Some(r) = receiver.transports.of_table(transport.key()) {
        r.check_message_any(kind.key(), message.bytes())
            .map_err(|m| ctx.error("test.message", format!("{message}: {m}")))?;
    }
    // A message defaulted from the send buffer is checked with the buffer (`tcp.send_buffer`), below.
    if t.message.is_some() && (message.bytes() == 0 || message.bytes() > 1 << 30) {
        return Err(ctx.error("test.message", format!("{message}: accepted 1B to 1GiB")));
    }
    for (side, h) in [("client", &client), ("server", &server)] {
        for c in h.transports.iter() {
            c.validate_any().map_err(|m| {
                let knob = m.split([' ', ',', ':']).next().unwrap_or("");
                ctx.error(&format!("{side}.{}.{knob}", c.table()), m)
            })?;
        }
    }
    let mut scenario = Scenario {
        name: raw.name,
        description: raw.description,
        seed: raw.seed,
        path: PathSpec { up: raw_path.up, down },
        client,
        server,
        plot: Vec::new(),
        published: Vec::new(),
        explicit: Default::default(),
        table: None,
        warnings: Vec::new(),
        dumbbell: None,
        flow: Vec::new(),
        test: Test {
            kind,
            transport,
            duration,
            message,
            parallel: t.parallel,
            start_spread: t.start_spread,
            messages: t.messages,
            interval: t.interval,
            series,
            series_vars,
            request,
            response,
            burst,
            nodelay: t.nodelay,
        },
        host: Vec::new(),
        link: Vec::new(),
    };
    check_plots(ctx, &scenario, &raw.plot)?;
    scenario.plot = raw.plot;
    check_published(ctx, &scenario, &raw.published)?;
    scenario.published = raw.published;
    if let Some(t) = &raw.table {
        check_table(ctx, &scenario, t)?;
    }
    scenario.table = raw.table;
    // Every number within its sane range (crate::limits), then the combinations that cannot run.
    crate::limits::check(&scenario).map_err(|e| ctx.error(&e.key, e.message))?;
    let found = cross_checks(&scenario);
    if let Some(e) = found.refuse {
        return Err(ctx.error(&e.key, e.message));
    }
    scenario.warnings = found.warnings.into_iter().map(|w| ctx.error(&w.key, w.message).to_string()).collect();
    Ok(scenario)
}

/// Whether `path` (`test.burst`) names a key of the resolved scenario: what `--set` and `[sweep]` take.
fn is_scenario_key(s: &Scenario, path: &str) -> bool {
    let Ok(v) = serde_json::to_value(s) else { return false };
    path.split('.').try_fold(&v, |v, k| v.get(k)).is_some_and(|leaf| !leaf.is_object())
}

/// Validates the `[[plot]]` tables against the resolved scenario: every name refers to something the run
/// will have.
fn check_plots(ctx: &Ctx, s: &Scenario, plots: &[PlotSpec]) -> Result<(), ScenarioError> {
    let mut names: Vec<String> = Vec::new();
    for (i, p) in plots.iter().enumerate() {
        let key = |field: &str| if field.is_empty() { format!("plot[{i}]") } else { format!("plot[{i}].{field}") };
        let name = p.name.clone().unwrap_or_else(|| format!("plot-{}", i + 1));
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(ctx.error(
                &key("name"),
                format!("{name:?}: accepted letters, digits, '-' and '_' (the file is NAME.svg)"),
            ));
        }
        if names.contains(&name) {
            return Err(
                ctx.error(&key("name"), format!("{name:?} names another plot already; accepted a name of its own"))
            );
        }
        names.push(name);
        if let Some(r) = &p.reference {
            if p.y.is_none() {
                return Err(ctx.error(&key("reference"), "accepted on a plot with x and y only (a metric's bound)"));
            }
            if !r.value.is_finite() {
                return Err(ctx.error(&key("reference.value"), "accepted a finite number in y's unit"));
            }
        }
        match (&p.series, &p.x, &p.y) {
            (Some(vars), None, None) if p.lines.is_none() => check_series_plot(ctx, s, vars, &key("series"))?,
            (Some(_), _, _) => {
                return Err(ctx.error(
                    &key(""),
                    "series with x, y or lines: accepted either series = [...] (variables over time) or x, y and \
                     optionally lines (a metric against swept keys)",
                ))
            }
            (None, Some(x), Some(y)) => {
                for (field, path) in [("x", Some(x)), ("lines", p.lines.as_ref())] {
                    let Some(path) = path else { continue };
                    if !is_scenario_key(s, path) {
                        return Err(ctx.error(
                            &key(field),
                            format!(
                                "{path:?}: not a key of the scenario; accepted a key path as --set and [sweep] take \
                                 it, e.g. \"test.burst\", \"client.tcp.nodelay\", \"path.up.rate\""
                            ),
                        ));
                    }
                }
                if p.lines.as_ref() == Some(x) {
                    return Err(ctx.error(&key("lines"), format!("{x:?} is x already; accepted another swept key")));
                }
                check_metric(ctx, s, y, &key("y"))?;
            }
            (None, None, _) | (None, _, None) => {
                let missing = if p.x.is_none() && p.y.is_none() {
                    ""
                } else if p.x.is_none() {
                    "x"
                } else {
                    "y"
                };
                return Err(ctx.error(
                    &key(missing),
                    "missing key; accepted x = \"KEY\" and y = \"METRIC\" (and optionally lines = \"KEY\"), or \
                     series = [\"VAR\", ...]",
                ));
            }
        }
    }
    Ok(())
}

/// Checks that `y` names something every point of the run will have: a metric of the test kind, an RFC
/// 4898 variable of one side (`client.VAR`), or a statistic of a sampled one (`client.VAR.mean`); or a
/// metric of the test kind after `iteration_stddev.`, which a point has when it is repeated (`[repeat]`).
fn check_metric(ctx: &Ctx, s: &Scenario, y: &str, key: &str) -> Result<(), ScenarioError> {
    let (between, y) = match y.strip_prefix(crate::published::BETWEEN_ITERATIONS) {
        Some(m) => (true, m),
        None => (false, y),
    };
    // `client.VAR` / `server.VAR`: an RFC 4898 variable of that side's TCP connection ends, summed.
    // ... or `client.VAR.mean` / `.stddev`: a statistic of that side's samples of a variable
    // `test.series = { vars }` samples, over the measurement window.
    // The ends' statistics are the transport's (`TransportConfig::stats_vars`: TCP's RFC 4898 variables,
    // RDP's `RdpStats`); only a test that samples variables (TCP's `test.series = { vars }`) has `.mean`.
    let sampled = s.test.series_vars.as_deref().unwrap_or_default();
    let transport = crate::host_transports::registration(s.test.transport.key());
    let counter = !between
        && y.split_once('.').filter(|(side, _)| *side == "client" || *side == "server").is_some_and(
            |(_, var)| match var.rsplit_once('.') {
                Some((v, "mean" | "stddev")) => sampled.iter().any(|x| x == v),
                _ => transport.is_some_and(|t| (t.stats_vars)().iter().any(|v| v == var)),
            },
        );
    if let Some(accepted) = metric_names(s) {
        if !counter && !accepted.contains(&y) {
            let counters = transport.map_or("", |t| t.stats_hint);
            return Err(ctx.error(
                key,
                format!(
                    "{y:?}: not a metric of test.kind = {:?}; accepted: {}{counters}",
                    s.test.kind_name(),
                    accepted.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Validates `[table] columns`: each a metric every point of the run will have (as `[[plot]] y`), once,
/// at most [`TABLE_MAX_COLUMNS`].
fn check_table(ctx: &Ctx, s: &Scenario, t: &TableSpec) -> Result<(), ScenarioError> {
    if t.columns.len() > TABLE_MAX_COLUMNS {
        return Err(
            ctx.error("table.columns", format!("{} columns; accepted at most {TABLE_MAX_COLUMNS}", t.columns.len()))
        );
    }
    for (i, c) in t.columns.iter().enumerate() {
        let key = format!("table.columns[{i}]");
        if t.columns[..i].contains(c) {
            return Err(ctx.error(&key, format!("{c:?} is listed already; accepted each metric once")));
        }
        check_metric(ctx, s, c, &key)?;
    }
    Ok(())
}

/// Validates the `[[published]]` tables (docs/scenario.md § Published figures): a metric the run has, a
/// unit that converts to the metric's, keys of the scenario, one finite figure per x value.
fn check_published(
    ctx: &Ctx,
    s: &Scenario,
    published: &[crate::published::PublishedSeries],
) -> Result<(), ScenarioError> {
    use crate::published::{metric_unit, units_of};
    for (i, p) in published.iter().enumerate() {
        let key = |field: &str| format!("published[{i}].{field}");
        if p.source.trim().is_empty() {
            return Err(
                ctx.error(&key("source"), "empty; accepted the source in words, e.g. \"the 2002 DSL TCP_RR report\"")
            );
        }
        check_metric(ctx, s, &p.metric, &key("metric"))?;
        let units = units_of(metric_unit(&p.metric));
        if !units.iter().any(|(u, _)| *u == p.unit) {
            let names: Vec<String> = units.iter().map(|(u, _)| format!("{u:?}")).collect();
            return Err(ctx.error(
                &key("unit"),
                format!("{:?}: not a unit of {}; accepted: {}", p.unit, p.metric, names.join(", ")),
            ));
        }
        let not_key = |path: &str| {
            format!(
                "{path:?}: not a key of the scenario; accepted a key path as --set and [sweep] take it, e.g. \
                 \"test.burst\", \"client.tcp.nodelay\""
            )
        };
        for k in p.at.keys() {
            if !is_scenario_key(s, k) {
                return Err(ctx.error(&key("where"), not_key(k)));
            }
        }
        match &p.x {
            Some(x) => {
                if !is_scenario_key(s, x) {
                    return Err(ctx.error(&key("x"), not_key(x)));
                }
                if p.x_values.is_empty() || p.x_values.len() != p.y_values.len() {
                    return Err(ctx.error(
                        &key("y_values"),
                        format!(
                            "{} figures for {} x_values; accepted one figure per value of x",
                            p.y_values.len(),
                            p.x_values.len()
                        ),
                    ));
                }
                if let Some(v) = p.x_values.iter().find(|v| !(v.is_number() || v.is_string() || v.is_boolean())) {
                    return Err(ctx.error(&key("x_values"), format!("{v}: accepted numbers, strings or booleans")));
                }
            }
            None => {
                if !p.x_values.is_empty() {
                    return Err(ctx.error(&key("x_values"), "given without x; accepted with x = \"KEY\" only"));
                }
                if p.y_values.len() != 1 {
                    return Err(ctx.error(
                        &key("y_values"),
                        format!(
                            "{} figures without x; accepted exactly one (it applies to every point)",
                            p.y_values.len()
                        ),
                    ));
                }
            }
        }
        if let Some(y) = p.y_values.iter().find(|y| !y.is_finite()) {
            return Err(ctx.error(&key("y_values"), format!("{y}: accepted finite numbers")));
        }
    }
    Ok(())
}

/// A `[[plot]] series = [...]`: every variable is sampled by `test.series`, and all share one unit.
fn check_series_plot(ctx: &Ctx, s: &Scenario, vars: &[String], key: &str) -> Result<(), ScenarioError> {
    let sampled: Vec<String> = match (&s.test.series, &s.test.series_vars) {
        (None, _) => {
            return Err(ctx.error(
                key,
                "needs test.series; accepted with test.series = { interval = \"100ms\", vars = [...] } naming the \
                 variables",
            ))
        }
        (Some(_), Some(v)) => v.iter().cloned().chain(["delivered_bytes".into(), "throughput_bps".into()]).collect(),
        (Some(_), None) => crate::columns::SERIES_COLUMNS[1..].iter().map(|c| c.to_string()).collect(),
    };
    if vars.is_empty() {
        return Err(ctx.error(key, format!("empty; accepted the sampled variables: {}", sampled.join(", "))));
    }
    for v in vars {
        if !sampled.contains(v) {
            return Err(
                ctx.error(key, format!("{v:?} is not sampled by test.series; accepted: {}", sampled.join(", ")))
            );
        }
    }
    let unit = series_unit(&vars[0]);
    if let Some(other) = vars.iter().find(|v| series_unit(v) != unit) {
        return Err(ctx.error(
            key,
            format!(
                "{:?} is in {unit}, {other:?} in {}: one plot has one y unit; accepted variables of one unit (put \
                 the others in a [[plot]] of their own)",
                vars[0],
                series_unit(other)
            ),
        ));
    }
    Ok(())
}

fn resolve_host(ctx: &Ctx, side: &str, raw: RawHost, transport: Protocol) -> Result<Host, ScenarioError> {
    let base = TcpConfig::personality(&raw.stack).ok_or_else(|| {
        let names: Vec<String> =
            tcplab_tcp::personality::PERSONALITIES.iter().map(|(n, _)| format!("\"{n}\"")).collect();
        ctx.error(
            &format!("{side}.stack"),
            format!("unknown personality {:?}; accepted: {}", raw.stack, names.join(", ")),
        )
    })?;
    // TCP's knobs always (the stack is a TCP personality), and the test's transport's when it is another;
    // a table of a third transport is refused by name.
    let mut transports = HostTransports::new(base);
    let mut tables = raw.tables;
    if transport.key() != TcpConfig::TABLE && !tables.iter().any(|(t, _)| *t == transport.key()) {
        tables.push((transport.key(), toml::Table::new()));
    }
    for (table, over) in tables {
        if table != TcpConfig::TABLE && table != transport.key() {
            let runs: Vec<String> =
                Protocol::all().iter().filter(|p| p.key() == table).map(|p| format!("{:?}", p.key())).collect();
            return Err(ctx.error(
                &format!("{side}.{table}"),
                format!(
                    "{} knobs with a {} test; accepted with test.transport = {}",
                    table.to_uppercase(),
                    transport.key().to_uppercase(),
                    runs.join(" or ")
                ),
            ));
        }
        let r = crate::host_transports::registration(table).expect("a raw host's tables are registered");
        let mut merged = if table == TcpConfig::TABLE {
            toml::Value::try_from(transports.tcp()).expect("a TcpConfig serializes to TOML")
        } else {
            (r.base)(&raw.stack).expect("a transport other than TCP has a base for every stack")
        };
        if let Some(t) = merged.as_table_mut() {
            merge(t, over);
        }
        let prefix = format!("{side}.{table}");
        transports.insert_any((r.from_toml)(merged).map_err(|e| ctx.path_error(&prefix, e))?);
    }
    if let Some(cpu) = &raw.host.cpu {
        if !(1..=1024).contains(&cpu.cores) {
            return Err(ctx.error(&format!("{side}.host.cpu.cores"), format!("{}: accepted 1 to 1024", cpu.cores)));
        }
    }
    if let Some(r) = raw.host.nic_rate {
        if r.bps() == 0 {
            return Err(ctx.error(&format!("{side}.host.nic_rate"), "a rate must be positive"));
        }
    }
    if raw.host.fragment_ttl.is_zero() {
        return Err(ctx.error(
            &format!("{side}.host.fragment_ttl"),
            "accepted a positive time, e.g. \"30s\" (a zero timeout would discard every fragmented datagram)",
        ));
    }
    if raw.host.rx_coalesce.is_some_and(|d| d > MAX_RX_COALESCE) {
        return Err(ctx.error(
            &format!("{side}.host.rx_coalesce"),
            format!(
                "{}: accepted 0s (off) to {MAX_RX_COALESCE} (a NIC's interrupt-coalescing delay, e.g. \"50us\")",
                raw.host.rx_coalesce.unwrap_or_default()
            ),
        ));
    }
    if raw.host.nic_frame_time > MAX_NIC_FRAME_TIME {
        return Err(ctx.error(
            &format!("{side}.host.nic_frame_time"),
            format!(
                "{}: accepted 0s (off) to {MAX_NIC_FRAME_TIME} (a NIC's processing time per frame, e.g. \"15us\")",
                raw.host.nic_frame_time
            ),
        ));
    }
    let rx_coalesce = raw.host.rx_coalesce.unwrap_or_else(|| default_rx_coalesce(&raw.stack));
    if !raw.host.nic_frame_time.is_zero() && !rx_coalesce.is_zero() {
        return Err(ctx.error(
            &format!("{side}.host.nic_frame_time"),
            format!(
                "not with receive coalescing ({side}.host.rx_coalesce = {rx_coalesce}, the {} default if unset): \
                 accepted with rx_coalesce = \"0s\"",
                raw.stack
            ),
        ));
    }
    let host = Nic { rx_coalesce: Some(rx_coalesce), ..raw.host };
    Ok(Host { stack: raw.stack, transports, host })
}

/// Lays `over` on `base`; nested tables (`cubic = { c = 0.5 }`) change only the keys they name.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// A scenario shipped with tcplab.
pub struct Shipped {
    pub name: &'static str,
    pub text: &'static str,
}

/// The scenarios in `scenarios/`, built into the binary so that `tcplab run NAME` works anywhere.
pub const SHIPPED: &[Shipped] = &[
    Shipped { name: "bulk-10m", text: include_str!("../../../scenarios/bulk-10m.toml") },
    Shipped { name: "bulk-1g", text: include_str!("../../../scenarios/bulk-1g.toml") },
    Shipped { name: "lossy-10m", text: include_str!("../../../scenarios/lossy-10m.toml") },
    Shipped { name: "window-limited", text: include_str!("../../../scenarios/window-limited.toml") },
    Shipped { name: "maerts-dsl", text: include_str!("../../../scenarios/maerts-dsl.toml") },
    Shipped { name: "rr-dsl", text: include_str!("../../../scenarios/rr-dsl.toml") },
    Shipped { name: "crr-ports", text: include_str!("../../../scenarios/crr-ports.toml") },
    Shipped { name: "rdp-loopback", text: include_str!("../../../scenarios/rdp-loopback.toml") },
    Shipped { name: "msg-100m", text: include_str!("../../../scenarios/msg-100m.toml") },
    Shipped { name: "rdp-rr-satellite", text: include_str!("../../../scenarios/rdp-rr-satellite.toml") },
    Shipped { name: "aqm-compare", text: include_str!("../../../scenarios/aqm-compare.toml") },
    Shipped { name: "bbr-startup", text: include_str!("../../../scenarios/bbr-startup.toml") },
    Shipped { name: "bbr-loss", text: include_str!("../../../scenarios/bbr-loss.toml") },
    Shipped { name: "bbr-vs-cubic", text: include_str!("../../../scenarios/bbr-vs-cubic.toml") },
    Shipped { name: "cubic-vs-reno", text: include_str!("../../../scenarios/cubic-vs-reno.toml") },
    Shipped { name: "rtt-fairness", text: include_str!("../../../scenarios/rtt-fairness.toml") },
    Shipped { name: "bufferbloat", text: include_str!("../../../scenarios/bufferbloat.toml") },
    Shipped { name: "parking-lot", text: include_str!("../../../scenarios/parking-lot.toml") },
    Shipped { name: "rrul", text: include_str!("../../../scenarios/rrul.toml") },
    Shipped { name: "classic/dsl-rr", text: include_str!("../../../scenarios/classic/dsl-rr.toml") },
    Shipped { name: "classic/dsl-rr-nodelay", text: include_str!("../../../scenarios/classic/dsl-rr-nodelay.toml") },
    Shipped {
        name: "classic/gige-ack-avoidance",
        text: include_str!("../../../scenarios/classic/gige-ack-avoidance.toml"),
    },
    Shipped { name: "classic/small-messages", text: include_str!("../../../scenarios/classic/small-messages.toml") },
    Shipped { name: "classic/rdp-eack", text: include_str!("../../../scenarios/classic/rdp-eack.toml") },
    Shipped {
        name: "classic/rdp-rtt-feedback",
        text: include_str!("../../../scenarios/classic/rdp-rtt-feedback.toml"),
    },
    Shipped {
        name: "classic/rdp-rtt-feedback-random",
        text: include_str!("../../../scenarios/classic/rdp-rtt-feedback-random.toml"),
    },
    Shipped { name: "classic/txqueuelen", text: include_str!("../../../scenarios/classic/txqueuelen.toml") },
];

/// The one-line description of a shipped scenario (its `description` key).
pub fn shipped_description(s: &Shipped) -> String {
    toml::from_str::<toml::Table>(s.text)
        .ok()
        .and_then(|t| t.get("description").and_then(|d| d.as_str()).map(str::to_string))
        .unwrap_or_default()
}
