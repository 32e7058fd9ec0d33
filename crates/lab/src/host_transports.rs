//! The transports' knobs a host carries (`client.tcp`, `server.rdp`, …), one table per transport, kept
//! by the table's name, and what the scenario layer knows of each transport: its keys, the bounds of its
//! knobs and the metrics its tests report. A transport declares all of it once, in its module here
//! (`host_transports/NAME.rs`: `impl TransportConfig`), and registers it with one line in [`REGISTERED`];
//! `Host` has no field per transport, and the key registry (`crate::keys`), the limits table
//! (`crate::limits`) and the metric names (`crate::scenario::metric_names`) gather the registered
//! transports' rows beside the lab's own (docs/architecture.md § How to add a transport).
//!
//! Near the leaves of the lab: it names only leaves (`crate::bounds`, the limits' vocabulary, and
//! `crate::columns`, the series' and statistics' names), so the scenario's
//! types (above it), the key registry, the limits table and the transports' seam (`crate::transport`,
//! which ties a `LabTransport` to its config) all stand on it.

use std::any::Any;
use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::bounds::Limit;

mod rdp;
mod tcp;

/// One transport's knobs as the lab keeps them on a host (its crate's documented config struct), and
/// what the scenario layer knows of the transport.
pub trait TransportConfig: Any + Clone + Debug + PartialEq + Serialize + DeserializeOwned + Send + Sync {
    /// The host's table of these knobs in scenario files and result documents (`client.TABLE.KNOB`); the
    /// transport's `test.transport` name.
    const TABLE: &'static str;

    /// Every knob of the config: (name, doc comment), from its crate (the key registry, `tcplab explain`).
    const KNOBS: &'static [(&'static str, &'static str)];

    /// The knobs a result document leaves out at their default, with that default as TOML (TCP's
    /// `OMITTED_AT_DEFAULT`): the key registry shows them with it.
    const OMITTED_AT_DEFAULT: &'static [(&'static str, &'static str)] = &[];

    /// What the key registry (`crate::keys`) says of the table beyond `KNOBS`.
    const KEYS: KeysDecl;

    /// The bounds of the knobs: rows `*.TABLE.KNOB` of the limits table (`crate::limits`), every numeric
    /// knob bounded (`limits::every_numeric_key_is_bounded`).
    const LIMITS: &'static [Limit];

    /// Whether the hosts' CPU model runs under the transport: its tests then report the CPU figures
    /// (`cpu_util_percent.local`, …) after [`metric_names`](TransportConfig::metric_names)'.
    const CPU_MODEL: bool;

    /// The metrics a test of the workload `workload` (`TestKind::key`: `stream`, `rr`, …) reports over the
    /// transport, as dotted keys of `points[].metrics` (what `[[plot]] y` accepts), without the CPU
    /// figures; `None` for a workload the transport does not run.
    fn metric_names(workload: &str) -> Option<Vec<&'static str>>;

    /// The numeric statistics of one connection end, as a result document's `connections[].estats` holds
    /// them: what `client.VAR` / `server.VAR` name in `[[plot]] y` and `[table] columns` for its tests.
    fn stats_vars() -> Vec<String>;

    /// How an error about such a metric names them, after the metric names (`, or client.VAR / …`).
    const STATS_HINT: &'static str;

    /// The columns of its runs' `series` table, time first, as a result document holds them (the
    /// document's reader accepts each registered transport's).
    const SERIES_COLUMNS: &'static [&'static str];

    /// The knobs a host starts from before its table is laid on top: TCP's from the host's `stack`
    /// personality, `None` when the stack is not one (reported at `stack` by the scenario's validation).
    fn base(stack: &str) -> Option<Self>;

    /// Checks values no field type can rule out; the message starts with the knob's name.
    fn validate(&self) -> Result<(), String>;

    /// What a test over the transport makes of the test keys not every transport uses.
    const TEST: TestDecl;

    /// `test.message` when the scenario does not give it, bytes, for a test of `workload`; `None`: the
    /// sender's send buffer (netperf's default, TCP's `send_buffer`).
    fn default_message(workload: &str) -> Option<u64>;

    /// Checks `test.message` (bytes) against the receiver's knobs (`self`) for a test of `workload`; the
    /// error says what is accepted, after the value.
    fn check_message(&self, _workload: &str, _message: u64) -> Result<(), String> {
        Ok(())
    }

    /// The cost model's shape of a run (`crate::budget`) where the transport's knobs decide it; `None`:
    /// TCP's (the sender's send buffer and the receiver's window, MSS-sized segments).
    fn budget(&self, _receiver: &Self, _workload: &str, _message: u64) -> Option<BudgetShape> {
        None
    }
}

/// What the validation of a test (`crate::scenario`) asks of its transport beyond the workload.
#[derive(Debug, Clone, Copy)]
pub struct TestDecl {
    /// Test keys a test over the transport refuses, each with why, said in the error in parentheses
    /// before "accepted with the tcp_* kinds" (`("test.nodelay", "RDP has no Nagle algorithm")`).
    pub refused: &'static [(&'static str, &'static str)],
    /// What is accepted instead of `test.series = { interval, vars }` (TCP's RFC 4898 variables of every
    /// end), if the transport refuses that form.
    pub series_vars_refused: Option<&'static str>,
    /// The workloads whose sender sends `test.messages` messages and stops (`test.duration` then bounds
    /// the run at a day).
    pub messages: &'static [&'static str],
}

/// A run's shape as the cost model sees it (`crate::budget`), for a transport whose knobs set it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetShape {
    /// The largest data segment's payload, bytes.
    pub mss: f64,
    /// A data segment's payload in this test, bytes.
    pub payload: f64,
    /// Data one connection keeps in flight, bytes.
    pub window: f64,
    /// Whether `test.series` keeps every RTT measurement too (about one per segment, five columns).
    pub rtt_samples: bool,
}

/// What the key registry says of a transport's table (`{client,server}.TABLE`) beyond its knobs' names
/// and docs: where its defaults are read, its source, its own row, its nested tables and its units.
#[derive(Debug, Clone, Copy)]
pub struct KeysDecl {
    /// The test kind whose minimal scenario carries the table (`tcp_stream`): the registry reads the
    /// knobs' defaults from it and asks its validation what a knob accepts.
    pub probe_kind: &'static str,
    /// The config struct and its file, the source of every knob (`("TcpConfig", "crates/tcp/src/config.rs")`).
    pub config: (&'static str, &'static str),
    /// The table's own row: its default, in words, and its documentation.
    pub default: &'static str,
    pub doc: &'static str,
    /// Table knobs whose fields are keys too: (knob, struct, file); each field's doc is the struct's
    /// (crates/lab/build.rs lists the struct).
    pub nested: &'static [(&'static str, &'static str, &'static str)],
    /// Knobs absent by default (an `Option`), with the type of their value.
    pub optional: &'static [(&'static str, &'static str)],
    /// Units of the integer and float knobs whose type does not say what they count.
    pub units: &'static [(&'static str, &'static str)],
    /// Its tests' full names, each with what it does, as `test.kind`'s doc lists them
    /// (`` `rdp_rr` (request/response over RDP) ``).
    pub kinds: &'static str,
}

/// The latency statistics of a request/response or message test, as `points[].metrics` keys.
pub const LATENCY_US: [&str; 8] = [
    "latency_us.mean",
    "latency_us.stddev",
    "latency_us.min",
    "latency_us.p50",
    "latency_us.p90",
    "latency_us.p99",
    "latency_us.p99_9",
    "latency_us.max",
];

/// A failure to read a config from TOML, with the failing key's path.
pub type TomlError = serde_path_to_error::Error<toml::de::Error>;

/// A registered transport's config, its type erased so a host keeps any of them in one list.
#[derive(Clone, Copy)]
pub struct Registration {
    /// [`TransportConfig::TABLE`].
    pub table: &'static str,
    /// The base knobs of a host of `stack`, as TOML to lay the host's table on.
    pub base: fn(stack: &str) -> Option<toml::Value>,
    /// Reads the knobs from a scenario file's merged table (the error carries the failing key's path).
    pub from_toml: fn(toml::Value) -> Result<Box<dyn AnyConfig>, TomlError>,
    /// Reads the knobs from a result document's echo of the scenario.
    pub from_json: fn(serde_json::Value) -> Result<Box<dyn AnyConfig>, serde_json::Error>,
    /// [`TransportConfig::KNOBS`].
    pub knobs: &'static [(&'static str, &'static str)],
    /// [`TransportConfig::OMITTED_AT_DEFAULT`].
    pub omitted_at_default: &'static [(&'static str, &'static str)],
    /// [`TransportConfig::KEYS`].
    pub keys: KeysDecl,
    /// [`TransportConfig::LIMITS`].
    pub limits: &'static [Limit],
    /// [`TransportConfig::CPU_MODEL`].
    pub cpu_model: bool,
    /// [`TransportConfig::metric_names`].
    pub metric_names: fn(workload: &str) -> Option<Vec<&'static str>>,
    /// [`TransportConfig::stats_vars`].
    pub stats_vars: fn() -> Vec<String>,
    /// [`TransportConfig::STATS_HINT`].
    pub stats_hint: &'static str,
    /// [`TransportConfig::SERIES_COLUMNS`].
    pub series_columns: &'static [&'static str],
    /// [`TransportConfig::TEST`].
    pub test: TestDecl,
    /// [`TransportConfig::default_message`].
    pub default_message: fn(workload: &str) -> Option<u64>,
    /// The metrics of a workload whose figures are the transport's own (no workload's `Metrics`): how a
    /// result document's reader recognizes and reads them back. Set by the transport's `LabTransport`
    /// (`crate::transport::registration`), above the result types.
    pub own_metrics: &'static [OwnMetrics],
}

/// A transport's own metrics for one workload (RDP's stream: messages delivered, duplicates, …), read back
/// from a result document by a field only they have.
#[derive(Clone, Copy)]
pub struct OwnMetrics {
    /// The workload (`TestKind::key`).
    pub workload: &'static str,
    /// The field only these metrics have among every test's (`messages_delivered`).
    pub marker: &'static str,
    /// The main ones, which a report's summary of the points shows first.
    pub headline: &'static [&'static str],
    /// Reads them back, every field checked and no other accepted.
    pub read: fn(&serde_json::Value) -> Result<Box<dyn AnyMetrics>, String>,
}

/// A transport's own metrics (`OwnMetrics`), their type erased: the result keeps them as written.
pub trait AnyMetrics: Debug + Send + Sync + Any {
    fn as_any(&self) -> &dyn Any;
    fn clone_box(&self) -> Box<dyn AnyMetrics>;
    /// The metrics as the result document writes them (field order kept).
    fn to_json(&self) -> serde_json::Value;
}

impl<M: Debug + Clone + Serialize + Send + Sync + Any> AnyMetrics for M {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyMetrics> {
        Box::new(self.clone())
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("metrics serialize to JSON")
    }
}

impl Registration {
    pub const fn of<C: TransportConfig>() -> Registration {
        Registration {
            table: C::TABLE,
            base: |stack| {
                C::base(stack).map(|c| toml::Value::try_from(c).expect("a transport config serializes to TOML"))
            },
            from_toml: |v| serde_path_to_error::deserialize::<_, C>(v).map(|c| Box::new(c) as Box<dyn AnyConfig>),
            from_json: |v| serde_json::from_value::<C>(v).map(|c| Box::new(c) as Box<dyn AnyConfig>),
            knobs: C::KNOBS,
            omitted_at_default: C::OMITTED_AT_DEFAULT,
            keys: C::KEYS,
            limits: C::LIMITS,
            cpu_model: C::CPU_MODEL,
            metric_names: C::metric_names,
            stats_vars: C::stats_vars,
            stats_hint: C::STATS_HINT,
            series_columns: C::SERIES_COLUMNS,
            test: C::TEST,
            default_message: C::default_message,
            own_metrics: &[],
        }
    }
}

/// The registered transports, in the order a result document writes a host's tables (and the key
/// registry and the limits table list them). TCP's comes first: every host carries it (its `stack` is a
/// TCP personality). The list is the crate root's (`crate::register_transports!` in lib.rs), where the
/// layers meet: one line per transport names its `LabTransport`, whose config is registered here and
/// whose run `crate::transport::dispatch` finds.
pub const REGISTERED: &[Registration] = crate::REGISTERED;

/// The registration of the table `name`, if a transport registers it.
pub fn registration(name: &str) -> Option<&'static Registration> {
    REGISTERED.iter().find(|r| r.table == name)
}

fn rank(table: &str) -> usize {
    REGISTERED.iter().position(|r| r.table == table).expect("a kept config is registered")
}

/// A [`TransportConfig`] with its type erased.
pub trait AnyConfig: Debug + Send + Sync {
    fn table(&self) -> &'static str;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn clone_box(&self) -> Box<dyn AnyConfig>;
    fn eq_any(&self, other: &dyn AnyConfig) -> bool;
    /// The knobs as the result document writes them (field order kept: serde_json's `preserve_order`).
    fn to_json(&self) -> serde_json::Value;
    fn validate_any(&self) -> Result<(), String>;
    /// [`TransportConfig::check_message`].
    fn check_message_any(&self, workload: &str, message: u64) -> Result<(), String>;
    /// [`TransportConfig::budget`], with the receiver's config of the same transport.
    fn budget_any(&self, receiver: &dyn AnyConfig, workload: &str, message: u64) -> Option<BudgetShape>;
}

impl<C: TransportConfig> AnyConfig for C {
    fn table(&self) -> &'static str {
        C::TABLE
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn clone_box(&self) -> Box<dyn AnyConfig> {
        Box::new(self.clone())
    }
    fn eq_any(&self, other: &dyn AnyConfig) -> bool {
        other.as_any().downcast_ref::<C>() == Some(self)
    }
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a transport config serializes to JSON")
    }
    fn validate_any(&self) -> Result<(), String> {
        self.validate()
    }
    fn check_message_any(&self, workload: &str, message: u64) -> Result<(), String> {
        self.check_message(workload, message)
    }
    fn budget_any(&self, receiver: &dyn AnyConfig, workload: &str, message: u64) -> Option<BudgetShape> {
        self.budget(receiver.as_any().downcast_ref::<C>()?, workload, message)
    }
}

/// The configs one host carries: TCP's always, another transport's when the test runs it. Kept in
/// [`REGISTERED`]'s order, one per table.
#[derive(Debug)]
pub struct HostTransports {
    configs: Vec<Box<dyn AnyConfig>>,
}

impl HostTransports {
    /// A host with TCP's knobs only.
    pub fn new(tcp: tcplab_tcp::TcpConfig) -> HostTransports {
        HostTransports { configs: vec![Box::new(tcp)] }
    }

    /// Adds (or replaces) one transport's knobs.
    pub fn insert_any(&mut self, c: Box<dyn AnyConfig>) {
        self.configs.retain(|k| k.table() != c.table());
        let at = self.configs.partition_point(|k| rank(k.table()) < rank(c.table()));
        self.configs.insert(at, c);
    }

    pub fn insert<C: TransportConfig>(&mut self, c: C) {
        self.insert_any(Box::new(c));
    }

    /// The knobs of the transport whose config is `C`, if the host carries them.
    pub fn get<C: TransportConfig>(&self) -> Option<&C> {
        self.configs.iter().find_map(|c| c.as_any().downcast_ref::<C>())
    }

    pub fn get_mut<C: TransportConfig>(&mut self) -> Option<&mut C> {
        self.configs.iter_mut().find_map(|c| c.as_any_mut().downcast_mut::<C>())
    }

    /// The knobs of the transport whose table is `table`, if the host carries them.
    pub fn of_table(&self, table: &str) -> Option<&dyn AnyConfig> {
        self.iter().find(|c| c.table() == table)
    }

    /// Every config the host carries, as (table, knobs), in [`REGISTERED`]'s order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn AnyConfig> {
        self.configs.iter().map(|c| &**c)
    }

    /// TCP's knobs, which every host carries.
    pub fn tcp(&self) -> &tcplab_tcp::TcpConfig {
        self.get().expect("every host carries TCP's knobs")
    }

    pub fn tcp_mut(&mut self) -> &mut tcplab_tcp::TcpConfig {
        self.get_mut().expect("every host carries TCP's knobs")
    }
}

impl Clone for HostTransports {
    fn clone(&self) -> Self {
        HostTransports { configs: self.configs.iter().map(|c| c.clone_box()).collect() }
    }
}

impl PartialEq for HostTransports {
    fn eq(&self, other: &Self) -> bool {
        self.configs.len() == other.configs.len()
            && self.configs.iter().zip(&other.configs).all(|(a, b)| a.eq_any(&**b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_rdp::RdpConfig;
    use tcplab_tcp::TcpConfig;

    #[test]
    fn tables_are_unique_and_tcp_comes_first() {
        assert_eq!(REGISTERED[0].table, "tcp");
        for (i, r) in REGISTERED.iter().enumerate() {
            assert!(REGISTERED[..i].iter().all(|o| o.table != r.table), "{} registered twice", r.table);
        }
    }

    #[test]
    fn configs_keep_the_registered_order_whatever_the_insertion_order() {
        let mut h = HostTransports::new(TcpConfig::default());
        h.insert(RdpConfig::default());
        h.insert(TcpConfig { nodelay: true, ..TcpConfig::default() });
        assert_eq!(h.iter().map(|c| c.table()).collect::<Vec<_>>(), ["tcp", "rdp"]);
        assert!(h.tcp().nodelay, "insert replaces the table's knobs");
        assert!(h.get::<RdpConfig>().is_some());
        let mut other = h.clone();
        assert_eq!(h, other);
        other.get_mut::<RdpConfig>().unwrap().max_outstanding += 1;
        assert_ne!(h, other);
    }

    #[test]
    fn a_config_reads_back_from_its_json() {
        for r in REGISTERED {
            let base = (r.base)("linux").expect("every registered transport has a base for the linux stack");
            let c = (r.from_toml)(base).unwrap();
            let back = (r.from_json)(c.to_json()).unwrap();
            assert!(c.eq_any(&*back), "{}", r.table);
        }
    }
}
