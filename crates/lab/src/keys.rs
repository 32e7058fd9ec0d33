//! The registry of scenario keys: every key a scenario file, `--set` and `[sweep]` take, with its type,
//! unit, default (per personality where the personality decides it), what is accepted, its documentation
//! and where that comes from. One registry serves `tcplab explain`, error messages (`suggest`) and the
//! check of docs/scenario.md's tables (crates/lab/tests/keys.rs).
//!
//! The documentation is the doc comment of the field that holds the key: a registered transport's config
//! through its `KNOBS` (with what else the transport declares of its table, `TransportConfig::KEYS`,
//! crate::host_transports), the other structs through this crate's build.rs (`FIELD_DOCS`). Keys without a
//! field of their own (the top level, the loss models' parameters, the host's tables) are described here.
//! Defaults come from resolving a minimal scenario under every personality, so they are what a run uses.
//! What is accepted comes from the parser and the validation themselves ([`accepted`]): a key is given a
//! value no key accepts, and the error's "accepted" clause is what the registry shows.
//!
//! Paths are written as `--set` takes them, with `{client,server}` and `{up,down}` where a key exists
//! once per host or per direction (`client.tcp.nodelay`, `server.tcp.nodelay` are one entry,
//! `{client,server}.tcp.nodelay`). Arrays of tables are written `plot[]`.

use std::sync::OnceLock;

use serde_json::Value;

use crate::host_transports::{Registration, REGISTERED};
use crate::scenario::{full_kind_name, load, Protocol, Source, TestKind};

include!(concat!(env!("OUT_DIR"), "/field_docs.rs"));

/// One scenario key.
#[derive(Debug, Clone, PartialEq)]
pub struct Key {
    /// The dotted path, `{client,server}` / `{up,down}` for a key of each host / direction.
    pub path: String,
    /// `bool`, `integer`, `float`, `string`, `duration`, `size`, `rate`, `table`, `array`, or a specific
    /// form (`"Npkt" or size`).
    pub ty: &'static str,
    /// What an integer or float counts (`packets`, `segments`); empty when the type says it.
    pub unit: &'static str,
    pub default: DefaultValue,
    /// One paragraph.
    pub doc: String,
    /// Where the key is defined and its documentation comes from (`TcpConfig::nodelay, crates/tcp/src/config.rs`).
    pub source: String,
}

/// A key's default.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// The scenario must give it.
    Required,
    /// A value, the same whatever the hosts' personalities.
    Value(String),
    /// The value under each personality (`stack`), in `PERSONALITIES` order, where they differ.
    PerStack(Vec<(&'static str, String)>),
    /// Said in words (absent keys whose absence means something, values resolved from other keys).
    Text(&'static str),
}

impl DefaultValue {
    /// Short: the value most personalities have, then the others (`0s; linux 50us`).
    pub fn short(&self) -> String {
        let DefaultValue::PerStack(v) = self else { return self.line() };
        let count = |x: &String| v.iter().filter(|(_, y)| y == x).count();
        let Some(common) = v.iter().map(|(_, x)| x).max_by_key(|x| count(x)) else { return String::new() };
        let others: Vec<String> = v.iter().filter(|(_, x)| x != common).map(|(p, x)| format!("{p} {x}")).collect();
        format!("{common}; {}", others.join(", "))
    }

    /// One line: `false`, `rfc 200ms, linux 40ms, ...`, `required`.
    pub fn line(&self) -> String {
        match self {
            DefaultValue::Required => "required".into(),
            DefaultValue::Value(v) => v.clone(),
            DefaultValue::PerStack(v) => v.iter().map(|(p, x)| format!("{p} {x}")).collect::<Vec<_>>().join(", "),
            DefaultValue::Text(t) => t.to_string(),
        }
    }
}

impl Key {
    /// Every concrete path of the key (`client.tcp.nodelay`, `server.tcp.nodelay`).
    pub fn concrete(&self) -> Vec<String> {
        let mut out = vec![String::new()];
        for part in self.path.split('.') {
            let alts: Vec<&str> = match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                Some(inner) => inner.split(',').collect(),
                None => vec![part],
            };
            out = out
                .iter()
                .flat_map(|prefix| {
                    alts.iter().map(move |a| if prefix.is_empty() { a.to_string() } else { format!("{prefix}.{a}") })
                })
                .collect();
        }
        out
    }

    /// The path without its host or direction (`tcp.nodelay`, `path.rate`): how a user names the key
    /// for either side.
    pub fn generic(&self) -> String {
        self.path.split('.').filter(|p| !p.starts_with('{')).collect::<Vec<_>>().join(".")
    }

    /// Whether `query` names this key: a concrete path, the generic path, or a trailing part of either
    /// (`nodelay`, `tcp.nodelay`, `client.tcp.nodelay`, `rate`, `up.rate`, `path.rate`).
    pub fn is_named_by(&self, query: &str) -> bool {
        let q = query.replace("[]", "");
        let mut forms = self.concrete();
        forms.push(self.generic());
        forms.iter().any(|f| {
            let f = f.replace("[]", "");
            f == q || f.ends_with(&format!(".{q}"))
        })
    }

    /// Whether the key is a table of other keys.
    pub fn is_table(&self) -> bool {
        self.ty == "table" || self.ty == "array of tables"
    }

    /// The key's parent path (`{client,server}.tcp` for `{client,server}.tcp.nodelay`), empty at the top.
    pub fn parent(&self) -> &str {
        self.path.rsplit_once('.').map_or("", |(p, _)| p)
    }

    /// The last part of the path (`nodelay`).
    pub fn name(&self) -> &str {
        self.path.rsplit('.').next().unwrap_or(&self.path)
    }
}

const HOSTS: &str = "{client,server}";
const DIRS: &str = "path.{up,down}";

/// Every scenario key, in the order of docs/scenario.md.
pub fn registry() -> &'static [Key] {
    static KEYS: OnceLock<Vec<Key>> = OnceLock::new();
    KEYS.get_or_init(build)
}

/// The doc comment of `strukt.field` (build.rs), or `None`.
fn field_doc(strukt: &str, field: &str) -> Option<&'static str> {
    FIELD_DOCS.iter().find(|(s, f, d)| *s == strukt && *f == field && !d.is_empty()).map(|(_, _, d)| *d)
}

fn field_doc_or(strukt: &str, field: &str, text: &'static str) -> String {
    field_doc(strukt, field).unwrap_or(text).to_string()
}

/// Units of the lab's integer and float keys whose type does not say what they count (a transport's
/// knobs' are its `KeysDecl::units`).
pub const LAB_UNITS: &[(&str, &str)] = &[
    ("txqueuelen", "packets"),
    ("cores", "cores"),
    ("parallel", "connections"),
    ("burst", "transactions"),
    ("messages", "messages"),
];

fn unit_of(name: &str) -> &'static str {
    LAB_UNITS.iter().find(|(k, _)| *k == name).map_or("", |(_, u)| u)
}

/// The minimal scenario the defaults are read from (and [`accepted`] probes), with `stack` on both hosts.
fn minimal(kind: &str, stack: &str) -> String {
    format!(
        "name = \"keys\"\n[path.up]\nrate = \"10mbit\"\n[client]\nstack = \"{stack}\"\n[server]\nstack = \"{stack}\"\n\
         [test]\nkind = \"{kind}\"\nduration = \"1s\"\n"
    )
}

/// The resolved minimal scenario under each personality, as JSON (`None` for a personality that does not
/// resolve, which a test rules out).
fn resolved(kind: &str) -> Vec<(&'static str, Value)> {
    tcplab_tcp::personality::PERSONALITIES
        .iter()
        .filter_map(|(p, _)| {
            let text = minimal(kind, p);
            let s = load(&Source { name: "keys", text: &text }, &[]).ok()?;
            let mut v = serde_json::to_value(&s).ok()?;
            // Knobs left out of documents at their default are shown with it.
            for r in REGISTERED {
                let Some(Value::Object(table)) = v.pointer_mut(&format!("/client/{}", r.table)) else { continue };
                for (knob, value) in r.omitted_at_default.iter().filter(|(_, v)| !v.is_empty()) {
                    let value: toml::Value = toml::from_str(&format!("v = {value}")).ok()?;
                    let value = serde_json::to_value(&value["v"]).ok()?;
                    // `cubic.bictcp`: a field of a table knob.
                    match knob.split_once('.') {
                        Some((t, field)) => {
                            if let Some(Value::Object(inner)) = table.get_mut(t) {
                                inner.entry(field.to_string()).or_insert(value);
                            }
                        }
                        None => {
                            table.entry(knob.to_string()).or_insert(value);
                        }
                    }
                }
            }
            Some((*p, v))
        })
        .collect()
}

/// A JSON leaf as a scenario file writes it (strings without quotes).
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        v => v.to_string(),
    }
}

/// The default of `path` (a JSON pointer into the resolved scenario) under every personality.
fn default_at(resolved: &[(&'static str, Value)], pointer: &str, absent: &'static str) -> DefaultValue {
    let vals: Vec<(&'static str, Option<String>)> = resolved
        .iter()
        .map(|(p, v)| (*p, v.pointer(pointer).filter(|x| !x.is_object() && !x.is_null()).map(show)))
        .collect();
    match vals.first() {
        None => DefaultValue::Text(absent),
        Some((_, first)) if vals.iter().all(|(_, v)| v == first) => match first {
            Some(v) => DefaultValue::Value(v.clone()),
            None => DefaultValue::Text(absent),
        },
        _ => DefaultValue::PerStack(
            vals.into_iter().map(|(p, v)| (p, v.unwrap_or_else(|| absent.to_string()))).collect(),
        ),
    }
}

/// The type of a key from its value: numbers and booleans as JSON has them, strings by what parses them.
fn type_of(v: Option<&Value>) -> &'static str {
    match v {
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(n)) if n.is_f64() => "float",
        Some(Value::Number(_)) => "integer",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "table",
        Some(Value::String(s)) if s.parse::<tcplab_units::Duration>().is_ok() => "duration",
        Some(Value::String(s)) if s.parse::<tcplab_units::ByteSize>().is_ok() => "size",
        Some(Value::String(s)) if s.parse::<tcplab_units::Rate>().is_ok() => "rate",
        Some(Value::String(_)) => "string",
        _ => "string",
    }
}

/// A table knob's default is its fields'.
fn table_default(value: Option<&Value>, default: DefaultValue) -> DefaultValue {
    match value {
        Some(Value::Object(_)) => DefaultValue::Text("the defaults of its keys"),
        _ => default,
    }
}

struct Builder {
    keys: Vec<Key>,
}

impl Builder {
    fn add(&mut self, path: String, ty: &'static str, default: DefaultValue, doc: String, source: String) {
        let name = path.rsplit('.').next().unwrap_or("").to_string();
        self.keys.push(Key { path, ty, unit: unit_of(&name), default, doc, source });
    }
}

fn build() -> Vec<Key> {
    let tcp = resolved("tcp_stream");
    let mut b = Builder { keys: Vec::new() };
    let scen = |what: &str| format!("{what}, crates/lab/src/scenario.rs");
    let text = |s: &'static str| s.to_string();

    // The top level (`RawScenario`).
    b.add(
        text("name"),
        "string",
        DefaultValue::Required,
        text("The scenario's name, printed in the table's header and kept in the result."),
        scen("RawScenario::name"),
    );
    b.add(
        text("description"),
        "string",
        DefaultValue::Value("\"\"".into()),
        text("One line about the scenario; `tcplab list` shows it."),
        scen("RawScenario::description"),
    );
    b.add(text("seed"), "integer", DefaultValue::Value("1".into()), text("The seed of the run (u64); `tcplab run --seed N` overrides it. Every random stream of the simulation is derived from it and a component's id, so the same scenario and seed give byte-identical results."), scen("RawScenario::seed"));
    b.add(text("path"), "table", DefaultValue::Required, text("The path between the hosts: `up` (client to server, required) and `down` (server to client; absent: a copy of `up`, loss model included)."), scen("RawPath"));
    for dir in ["up", "down"] {
        let (default, doc) = if dir == "up" {
            (DefaultValue::Required, "Client to server: one direction of the path.")
        } else {
            (
                DefaultValue::Text("a copy of path.up, loss model included"),
                "Server to client: one direction of the path.",
            )
        };
        b.add(format!("path.{dir}"), "table", default, text(doc), text("LinkConfig, crates/link/src/config.rs"));
    }

    // One direction of the path (`LinkConfig`).
    let link_src = |f: &str| format!("LinkConfig::{f}, crates/link/src/config.rs");
    for (field, ty) in [
        ("rate", "rate"),
        ("delay", "duration"),
        ("queue", "\"Npkt\" or size"),
        ("framing", "\"ethernet\", \"none\" or size"),
        ("mtu", "size"),
        ("loss", "table"),
        ("tick", "duration"),
        ("idle_credit", "\"dropped\" or \"kept\""),
        ("qdisc", "table"),
        ("jitter", "duration"),
        ("reorder", "bool"),
    ] {
        let default = if field == "rate" {
            DefaultValue::Required
        } else {
            default_at(&tcp, &format!("/path/up/{field}"), "unset")
        };
        let default = if field == "loss" { DefaultValue::Value("{ model = \"none\" }".into()) } else { default };
        let default = match field {
            "qdisc" => DefaultValue::Value("{ kind = \"fifo\" }".into()),
            "reorder" => DefaultValue::Value("false".into()),
            _ => default,
        };
        b.add(format!("{DIRS}.{field}"), ty, default, field_doc_or("LinkConfig", field, ""), link_src(field));
    }
    let loss_src = text("LossModel, crates/link/src/config.rs");
    for (field, ty, default, doc) in [
        ("model", "string", DefaultValue::Value("none".into()), "The loss model: `none`, `bernoulli` (each frame lost with probability `p`), `scripted` (the frames whose indices `drop` lists), `gilbert_elliott` (two-state burst loss with `p`, `r`, `h`, `k`). A bad parameter is reported at its key, e.g. `path.up.loss.p`."),
        ("packets", "string", DefaultValue::Value("all".into()), "The frames the model sees: `all`, or `data` (frames carrying transport payload only; ACKs, SYNs and other control segments are then never lost, take no random draw and no index)."),
        ("p", "float", DefaultValue::Required, "`bernoulli`: the probability that a selected frame is lost, 0 ≤ p < 1. `gilbert_elliott`: the probability of moving from Good to Bad per selected frame."),
        ("drop", "array", DefaultValue::Required, "`scripted`: the indices of the selected frames that are lost, counted from 0 over the frames offered to this direction (before the queue: a frame the queue drops still takes its index)."),
        ("r", "float", DefaultValue::Required, "`gilbert_elliott`: the probability of moving from Bad to Good per selected frame (a burst of losses lasts 1/r frames on average with h = 0)."),
        ("h", "float", DefaultValue::Value("0".into()), "`gilbert_elliott`: the probability that a frame is delivered in the Bad state (Gilbert's model: 0)."),
        ("k", "float", DefaultValue::Value("1".into()), "`gilbert_elliott`: the probability that a frame is delivered in the Good state (Gilbert's model: 1)."),
    ] {
        b.add(format!("{DIRS}.loss.{field}"), ty, default, text(doc), loss_src.clone());
    }

    // The hosts (`RawHost`).
    let names: Vec<String> = tcplab_tcp::personality::PERSONALITIES.iter().map(|(n, _)| format!("`{n}`")).collect();
    // The registered transports' tables, TCP's first (its knobs lie on the personality).
    let tables: Vec<String> = REGISTERED
        .iter()
        .map(|r| match r.table {
            t if t == Protocol::TCP.key() => format!("{} knobs on top (`{t}`)", t.to_uppercase()),
            t => format!("{} knobs (`{t}`)", t.to_uppercase()),
        })
        .collect();
    b.add(
        text(HOSTS),
        "table",
        DefaultValue::Text("stack = \"rfc\", no overrides, the default NIC"),
        format!("One host: its TCP personality (`stack`), {} and NIC (`host`).", tables.join(", ")),
        scen("RawHost"),
    );
    b.add(format!("{HOSTS}.stack"), "string", DefaultValue::Value("rfc".into()), format!("The personality the host's TCP knobs start from, a named preset of every knob (docs/personalities.md): {}. Knobs set under `tcp` apply on top; `tcplab explain` lists each personality's values.", names.join(", ")), scen("RawHost::stack"));

    // Each registered transport's table and knobs, in the registration's order.
    for r in REGISTERED {
        transport_keys(&mut b, r);
    }

    // The host's NIC (`Nic`) and CPU model (`Cpu`).
    b.add(format!("{HOSTS}.host"), "table", DefaultValue::Text("the default NIC"), text("The host's network interface: its transmit queue and rate, ephemeral ports, IP reassembly, receive coalescing, and the CPU cost model."), scen("Nic"));
    for (field, ty) in [
        ("nic_rate", "rate"),
        ("txqueuelen", "integer"),
        ("ephemeral_ports", "\"LOW-HIGH\""),
        ("fragment_ttl", "duration"),
        ("rx_coalesce", "duration"),
        ("nic_frame_time", "duration"),
        ("cpu", "table"),
    ] {
        let default = match field {
            "ephemeral_ports" => DefaultValue::Value(crate::scenario::PortRange::default().to_string()),
            "fragment_ttl" => DefaultValue::Value(tcplab_sim::FRAGMENT_TTL.to_string()),
            "txqueuelen" => DefaultValue::Value("1000".into()),
            _ => default_at(&tcp, &format!("/client/host/{field}"), "unset"),
        };
        b.add(
            format!("{HOSTS}.host.{field}"),
            ty,
            default,
            field_doc_or("Nic", field, ""),
            scen(&format!("Nic::{field}")),
        );
    }
    for field in [
        "cores",
        "per_segment_out",
        "per_segment_in",
        "per_ack_in",
        "per_ack_out",
        "per_kb_copy",
        "per_call",
        "per_timer",
    ] {
        let (ty, default) = if field == "cores" { ("integer", "1") } else { ("duration", "0s") };
        b.add(
            format!("{HOSTS}.host.cpu.{field}"),
            ty,
            DefaultValue::Value(default.into()),
            field_doc_or("Cpu", field, ""),
            scen(&format!("Cpu::{field}")),
        );
    }

    // The test (`RawTest`, resolved into `Test`).
    b.add(
        text("test"),
        "table",
        DefaultValue::Required,
        text("The netperf-style test: its kind, length, sizes and options."),
        scen("RawTest"),
    );
    // The full names and what each transport's tests do, from the registration (`KeysDecl::kinds`).
    let full: Vec<&str> = REGISTERED.iter().map(|r| r.keys.kinds).collect();
    let kinds = format!(
        "the workload, `stream`, `maerts`, `rr`, `crr` or `msg`, carried by `test.transport`; or the full name, which names the transport too: {}.",
        full.join(", ")
    );
    // An example of a full name that names another transport than TCP (the last registered one's last).
    let example = Protocol::all()
        .into_iter()
        .rev()
        .find_map(|p| p.workloads().last().map(|&k| full_kind_name(p, k)).filter(|_| p != Protocol::TCP))
        .unwrap_or_else(|| full_kind_name(Protocol::TCP, TestKind::Rr));
    let transport_default = format!("the one a full kind names (`{example}`), else tcp");
    // The tests that send a number of messages, and their message sizes when not given.
    let mut by_messages: Vec<(String, Option<u64>)> = Protocol::all()
        .into_iter()
        .flat_map(|p| {
            let r = p.registration();
            p.workloads()
                .into_iter()
                .filter(|k| r.test.messages.contains(&k.key()))
                .map(move |k| (full_kind_name(p, k), (r.default_message)(k.key())))
        })
        .collect();
    by_messages.sort();
    let names: Vec<&str> = by_messages.iter().map(|(n, _)| n.as_str()).collect();
    let duration_default = format!("required ({}: or messages)", names.join(", "));
    let sizes: Vec<String> = by_messages.iter().filter_map(|(n, m)| Some(format!("{n} {}B", (*m)?))).collect();
    let message_default = format!("the sender's send buffer; {}", sizes.join("; "));
    let rr: Vec<String> = Protocol::all()
        .into_iter()
        .flat_map(|p| {
            p.workloads().into_iter().filter(|k| k.is_rr()).map(move |k| format!("`{}`", full_kind_name(p, k)))
        })
        .collect();
    let rr = match rr.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => rr.join(""),
    };
    for (field, ty, default) in [
        ("kind", "string", DefaultValue::Required),
        ("transport", "string", DefaultValue::Text(transport_default.leak())),
        ("duration", "duration", DefaultValue::Text(duration_default.leak())),
        ("messages", "integer", DefaultValue::Text("absent")),
        ("interval", "duration", DefaultValue::Text("absent: back to back")),
        ("message", "size", DefaultValue::Text(message_default.leak())),
        ("send_buffer", "size", DefaultValue::Text("the sending side's tcp.send_buffer")),
        ("recv_buffer", "size", DefaultValue::Text("the receiving side's tcp.recv_buffer")),
        ("parallel", "integer", DefaultValue::Value("1".into())),
        ("start_spread", "duration", DefaultValue::Text("absent: one SYN-frame time apart")),
        ("request", "size", DefaultValue::Value("1B".into())),
        ("response", "size", DefaultValue::Value("1B".into())),
        ("burst", "integer", DefaultValue::Value("0".into())),
        ("nodelay", "bool", DefaultValue::Text("absent: each host's own tcp.nodelay")),
        ("series", "duration or table", DefaultValue::Text("absent: no time series")),
    ] {
        let doc = match field {
            "kind" => format!("The test: {kinds}"),
            "response" => format!("Response size (netperf `-r ,rsp`), {rr} only."),
            _ => field_doc("RawTest", field).or_else(|| field_doc("Test", field)).unwrap_or("").to_string(),
        };
        b.add(format!("test.{field}"), ty, default, doc, scen(&format!("RawTest::{field}")));
    }
    b.add(
        text("test.series.interval"),
        "duration",
        DefaultValue::Required,
        text("With `test.series = { interval, vars }`: how often the variables are sampled (100us or more)."),
        scen("RawSeriesVars::interval"),
    );
    b.add(
        text("test.series.vars"),
        "array",
        DefaultValue::Required,
        field_doc_or("Test", "series_vars", ""),
        scen("RawSeriesVars::vars"),
    );

    // How the scenario is run: `[sweep]` and `[repeat]` (crates/lab/src/sweep.rs).
    b.add(text("sweep"), "table", DefaultValue::Text("absent: one point"), text("Axes of a sweep: `\"key.path\" = [values]` or `= \"A..=B\"`, one axis per key; the points are the cartesian product, each validated before any runs (docs/sweeps.md). `--sweep PATH=VALUES` adds axes."), text("sweep::plan, crates/lab/src/sweep.rs"));
    b.add(text("repeat"), "table", DefaultValue::Text("absent: one run per point"), text("Repetitions of every point until a Student t confidence interval of the main metric is met (netperf `-i`, `-I`): `min`, `max`, `level`, `width` (docs/sweeps.md)."), text("Repeat, crates/lab/src/sweep.rs"));
    for (field, ty, default, fallback) in [
        ("min", "integer", "3", "The fewest repetitions, 1 to 1000."),
        ("max", "integer", "10", "The most repetitions, 1 to 1000."),
        ("level", "float", "0.99", ""),
        ("width", "float", "0.05", ""),
    ] {
        b.add(
            format!("repeat.{field}"),
            ty,
            DefaultValue::Value(default.into()),
            field_doc_or("Repeat", field, fallback),
            format!("Repeat::{field}, crates/lab/src/sweep.rs"),
        );
    }

    // `[[plot]]` and `[[published]]`.
    b.add(text("plot[]"), "array of tables", DefaultValue::Text("absent: the default plots"), text("Plots the scenario asks for besides the default ones, drawn by `--plot` and the HTML report: a metric against a swept key (`x`, `y`, `lines`) or sampled variables over time (`series`); docs/scenario.md § Plots."), scen("PlotSpec"));
    for (field, ty) in [
        ("name", "string"),
        ("title", "string"),
        ("x", "string"),
        ("y", "string"),
        ("lines", "string"),
        ("series", "array"),
        ("reference", "table"),
    ] {
        b.add(
            format!("plot[].{field}"),
            ty,
            DefaultValue::Text("absent"),
            field_doc_or("PlotSpec", field, ""),
            scen(&format!("PlotSpec::{field}")),
        );
    }
    for (field, ty) in [("value", "float"), ("label", "string")] {
        let doc = match field {
            "value" => "The reference line's value, in the plot's `y` unit as the result stores it (bit/s, 1/s, µs …).",
            _ => "The reference line's name on the plot.",
        };
        b.add(format!("plot[].reference.{field}"), ty, DefaultValue::Required, text(doc), scen("PlotReference"));
    }
    b.add(text("published[]"), "array of tables", DefaultValue::Text("absent"), text("Published or measured reference figures, compared with the lab's at every point they apply to and drawn on the plots of their metric; docs/scenario.md § Published figures."), text("PublishedSeries, crates/lab/src/published.rs"));
    for (field, ty, default) in [
        ("source", "string", DefaultValue::Required),
        ("year", "integer", DefaultValue::Text("absent")),
        ("label", "string", DefaultValue::Text("absent")),
        ("metric", "string", DefaultValue::Required),
        ("unit", "string", DefaultValue::Required),
        ("x", "string", DefaultValue::Text("absent: one figure for every point")),
        ("x_values", "array", DefaultValue::Text("absent")),
        ("y_values", "array", DefaultValue::Required),
        ("where", "table", DefaultValue::Text("absent: every point")),
        ("note", "string", DefaultValue::Text("absent")),
    ] {
        b.add(
            format!("published[].{field}"),
            ty,
            default,
            field_doc_or("PublishedSeries", field, ""),
            format!("PublishedSeries::{field}, crates/lab/src/published.rs"),
        );
    }

    // `[table]`.
    b.add(
        text("table"),
        "table",
        DefaultValue::Text("absent: the plots' metrics netperf's columns do not show"),
        text("Columns the table `run` and `report` print adds after netperf's; docs/scenario.md § Table."),
        scen("TableSpec"),
    );
    b.add(text("table.columns"), "array of strings", DefaultValue::Required, text("The added columns, each a metric as `[[plot]] y` names it (`client.SendStall`, `latency_us.p90`, `client.CurCwnd.mean`), shown with its unit; at most 8; `[]` adds none."), text("TableSpec::columns, crates/lab/src/scenario.rs"));
    dumbbell_keys(&mut b);
    network_keys(&mut b);
    b.keys
}

/// A transport's table on both hosts (`{client,server}.TABLE`): its row, one entry per knob (from its
/// crate's `KNOBS`), one per field of a table knob; defaults read from its `probe_kind`'s minimal scenario
/// under every personality, units from its declaration.
fn transport_keys(b: &mut Builder, r: &Registration) {
    let d = &r.keys;
    let (config, file) = d.config;
    let table = r.table;
    b.add(
        format!("{HOSTS}.{table}"),
        "table",
        DefaultValue::Text(d.default),
        d.doc.to_string(),
        format!("{config}, {file}"),
    );
    let resolved = resolved(d.probe_kind);
    let unit = |knob: &str| d.units.iter().find(|(k, _)| *k == knob).map_or("", |(_, u)| u);
    for (knob, doc) in r.knobs {
        let pointer = format!("/client/{table}/{knob}");
        let value = resolved.first().and_then(|(_, v)| v.pointer(&pointer)).filter(|v| !v.is_null());
        let ty = match value {
            None => d.optional.iter().find(|(k, _)| k == knob).map_or(type_of(None), |(_, ty)| ty),
            Some(_) => type_of(value),
        };
        let default = table_default(value, default_at(&resolved, &pointer, "unset"));
        let path = format!("{HOSTS}.{table}.{knob}");
        b.keys.push(Key {
            path,
            ty,
            unit: unit(knob),
            default,
            doc: doc.to_string(),
            source: format!("{config}::{knob}, {file}"),
        });
        if let Some(Value::Object(fields)) = value {
            let (strukt, file) =
                d.nested.iter().find(|(k, _, _)| k == knob).map_or((config, file), |(_, s, f)| (*s, *f));
            for (f, v) in fields {
                let p = format!("{pointer}/{f}");
                b.keys.push(Key {
                    path: format!("{HOSTS}.{table}.{knob}.{f}"),
                    ty: type_of(Some(v)),
                    unit: unit(f),
                    default: default_at(&resolved, &p, "unset"),
                    doc: field_doc_or(strukt, f, doc),
                    source: format!("{strukt}::{f}, {file}"),
                });
            }
        }
    }
}

/// `[[host]]`, `[[link]]` and a network flow's `from`/`to` (docs/topology.md § Networks): a link's
/// directions take a path direction's keys, a host's `tcp` a client's.
fn network_keys(b: &mut Builder) {
    let text = |s: &'static str| s.to_string();
    let src = |what: &str| format!("{what}, crates/lab/src/scenario.rs");
    let doc = |strukt: &str, field: &str| field_doc_or(strukt, field, "");
    b.add(
        text("host[]"),
        "array of tables",
        DefaultValue::Text("absent: the client-server path"),
        text("A host of a network (with `[[link]]`): its `name`, `stack` and `tcp`; a router is a host no flow starts or ends at. Refuses `path`, `client`, `server`, `[dumbbell]` and `[test]` keys other than `duration` (docs/topology.md § Networks)."),
        src("NetHost"),
    );
    b.add(text("host[].name"), "string", DefaultValue::Required, doc("NetHost", "name"), src("NetHost::name"));
    b.add(
        text("host[].stack"),
        "string",
        DefaultValue::Value("rfc".into()),
        doc("NetHost", "stack"),
        src("NetHost::stack"),
    );
    b.add(
        text("host[].tcp"),
        "table",
        DefaultValue::Text("{} (the personality's values)"),
        text("TCP knobs of the host on top of its personality, the keys of `client.tcp`."),
        text("TcpConfig, crates/tcp/src/config.rs"),
    );
    let tcp_keys: Vec<Key> = b.keys.iter().filter(|k| k.path.starts_with("{client,server}.tcp.")).cloned().collect();
    for k in tcp_keys {
        let rest = &k.path["{client,server}.tcp.".len()..];
        b.keys.push(Key { path: format!("host[].tcp.{rest}"), ..k });
    }
    b.add(
        text("link[]"),
        "array of tables",
        DefaultValue::Text("absent; one at least with [[host]]"),
        text("A duplex link of a network between the hosts named `a` and `b`: `forward` (a to b) and `backward` (b to a; default a copy of `forward`), each a path direction's keys (docs/topology.md § Networks)."),
        src("NetLink"),
    );
    b.add(
        text("link[].a"),
        "string",
        DefaultValue::Required,
        text("The name of the host at the link's one end."),
        src("NetLink::a"),
    );
    b.add(
        text("link[].b"),
        "string",
        DefaultValue::Required,
        text("The name of the host at the link's other end (not `a`)."),
        src("NetLink::b"),
    );
    let dirs = [
        ("forward", DefaultValue::Required, doc("NetLink", "forward")),
        ("backward", DefaultValue::Text("a copy of forward"), doc("NetLink", "backward")),
    ];
    let link_keys: Vec<Key> = b.keys.iter().filter(|k| k.path.starts_with("path.{up,down}.")).cloned().collect();
    for (dir, default, d) in dirs {
        b.add(format!("link[].{dir}"), "table", default, d, src(&format!("NetLink::{dir}")));
        for k in &link_keys {
            let rest = &k.path["path.{up,down}.".len()..];
            let default = match (&k.default, dir) {
                (DefaultValue::Required, "forward") => DefaultValue::Required,
                (_, "forward") => DefaultValue::Text("as path.up"),
                _ => DefaultValue::Text("forward's"),
            };
            b.keys.push(Key { path: format!("link[].{dir}.{rest}"), default, ..k.clone() });
        }
    }
    b.add(
        text("flow[].interval"),
        "duration",
        DefaultValue::Text("absent: back to back (msg)"),
        doc("Flow", "interval"),
        src("Flow::interval"),
    );
    b.add(
        text("flow[].from"),
        "string",
        DefaultValue::Text("absent; required in a network"),
        doc("Flow", "from"),
        src("Flow::from"),
    );
    b.add(
        text("flow[].to"),
        "string",
        DefaultValue::Text("absent; required in a network"),
        doc("Flow", "to"),
        src("Flow::to"),
    );
}

/// `[dumbbell]` and `[[flow]]` (docs/topology.md § Flows that share a bottleneck): the bottleneck's
/// directions take a path direction's keys, a flow's `tcp` a host's. Their defaults are said in words: a
/// `[dumbbell]` refuses the client-server keys the registry's defaults are checked against.
fn dumbbell_keys(b: &mut Builder) {
    let text = |s: &'static str| s.to_string();
    let src = |what: &str| format!("{what}, crates/lab/src/scenario.rs");
    let doc = |strukt: &str, field: &str| field_doc_or(strukt, field, "");
    b.add(
        text("dumbbell"),
        "table",
        DefaultValue::Text("absent: the client-server path"),
        text("Flows that share a bottleneck instead of the client-server path: N senders on access links to a router, the bottleneck, a router and N receivers; each `[[flow]]` one pair. Refuses `path`, `client`, `server` and `[test]` keys other than `duration` (docs/topology.md)."),
        src("Dumbbell"),
    );
    let dirs = [
        ("bottleneck", DefaultValue::Required, doc("Dumbbell", "bottleneck")),
        ("reverse", DefaultValue::Text("a copy of dumbbell.bottleneck"), doc("Dumbbell", "reverse")),
    ];
    let link_keys: Vec<Key> = b.keys.iter().filter(|k| k.path.starts_with("path.{up,down}.")).cloned().collect();
    for (dir, default, d) in dirs {
        b.add(format!("dumbbell.{dir}"), "table", default, d, src(&format!("Dumbbell::{dir}")));
        for k in &link_keys {
            let rest = &k.path["path.{up,down}.".len()..];
            let default = match (&k.default, dir) {
                (DefaultValue::Required, "bottleneck") => DefaultValue::Required,
                (_, "bottleneck") => DefaultValue::Text("as path.up"),
                _ => DefaultValue::Text("dumbbell.bottleneck's"),
            };
            b.keys.push(Key { path: format!("dumbbell.{dir}.{rest}"), default, ..k.clone() });
        }
    }
    b.add(
        text("dumbbell.access_rate"),
        "rate",
        DefaultValue::Text("1gbit"),
        doc("Dumbbell", "access_rate"),
        src("Dumbbell::access_rate"),
    );
    b.add(
        text("flow[]"),
        "array of tables",
        DefaultValue::Text("absent; required with [dumbbell]"),
        text("One flow through the `[dumbbell]`: what it runs (`kind`), its hosts' stack and TCP knobs, its access delay and start time."),
        src("Flow"),
    );
    b.add(text("flow[].kind"), "string", DefaultValue::Required, text("`stream` (a bulk transfer from the sender, netperf TCP_STREAM), `rr` (request/response transactions one at a time, netperf TCP_RR) or `msg` (messages of `message` bytes, back to back or one every `interval`, the `tcp_msg` workload)."), src("Flow::kind"));
    b.add(text("flow[].stack"), "string", DefaultValue::Value("rfc".into()), doc("Flow", "stack"), src("Flow::stack"));
    b.add(text("flow[].tcp"), "table", DefaultValue::Text("{} (the personality's values)"), text("TCP knobs of the flow's two hosts on top of its personality, the keys of `client.tcp` (`congestion_control = \"reno\"`)."), text("TcpConfig, crates/tcp/src/config.rs"));
    let tcp_keys: Vec<Key> = b.keys.iter().filter(|k| k.path.starts_with("{client,server}.tcp.")).cloned().collect();
    for k in tcp_keys {
        let rest = &k.path["{client,server}.tcp.".len()..];
        b.keys.push(Key { path: format!("flow[].tcp.{rest}"), ..k });
    }
    b.add(
        text("flow[].access_delay"),
        "duration",
        DefaultValue::Value("0s".into()),
        doc("Flow", "access_delay"),
        src("Flow::access_delay"),
    );
    b.add(text("flow[].start"), "duration", DefaultValue::Value("0s".into()), doc("Flow", "start"), src("Flow::start"));
    b.add(
        text("flow[].message"),
        "size",
        DefaultValue::Text("16KiB (stream), 1KiB (msg)"),
        doc("Flow", "message"),
        src("Flow::message"),
    );
    b.add(text("flow[].request"), "size", DefaultValue::Text("1B (rr)"), doc("Flow", "request"), src("Flow::request"));
    b.add(
        text("flow[].response"),
        "size",
        DefaultValue::Text("1B (rr)"),
        text("`rr`: the response size; default 1 byte."),
        src("Flow::response"),
    );
}

/// What `tcplab explain QUERY` finds.
#[derive(Debug)]
pub enum Lookup {
    /// One key, and the keys under it when it is a table.
    One(&'static Key, Vec<&'static Key>),
    /// Several keys have that name (`rate`, `nodelay`): the user picks one.
    Ambiguous(Vec<&'static Key>),
    /// No key has that name; these mention every word of it in their path or documentation.
    Mentions(Vec<&'static Key>),
    /// Nothing.
    Nothing,
}

/// Finds the keys `query` names: a path in any spelling a user would try (`client.tcp.nodelay`,
/// `tcp.nodelay`, `nodelay`, `path.up.rate`, `path.rate`, `cubic.beta`, `rdp.eack`, `rdp`), else the keys
/// that mention all of its words.
pub fn lookup(query: &str) -> Lookup {
    let keys = registry();
    let q = query.trim().trim_end_matches('.');
    // The dumbbell's link keys and a flow's TCP knobs repeat a path direction's and a host's: a short name
    // (`rate`, `tcp.nodelay`) means the original unless only a copy has it (`bottleneck.rate`).
    let copy = |k: &Key| {
        k.path.starts_with("dumbbell.bottleneck.")
            || k.path.starts_with("dumbbell.reverse.")
            || k.path.starts_with("flow[].tcp.")
            || k.path.starts_with("host[].tcp.")
            || k.path.starts_with("link[].forward.")
            || k.path.starts_with("link[].backward.")
    };
    let originals = |found: Vec<&'static Key>| {
        if found.iter().any(|k| !copy(k)) {
            found.into_iter().filter(|k| !copy(k)).collect()
        } else {
            found
        }
    };
    let named: Vec<&Key> = originals(keys.iter().filter(|k| k.is_named_by(q)).collect());
    // A name that is both a table and a key beneath other tables (`rdp`: the host table; `cubic`) names
    // the table when only one table has it.
    let pick = |found: Vec<&'static Key>| {
        let under = |t: &Key| keys.iter().filter(|k| k.parent() == t.path).collect::<Vec<_>>();
        match found.as_slice() {
            [one] => Lookup::One(one, under(one)),
            _ => Lookup::Ambiguous(found),
        }
    };
    if !named.is_empty() {
        return pick(named);
    }
    let words: Vec<String> = q.split_whitespace().map(|w| w.to_lowercase().replace('_', " ")).collect();
    if words.is_empty() {
        return Lookup::Nothing;
    }
    let hits: Vec<&Key> = keys
        .iter()
        .filter(|k| {
            let text = format!("{} {}", k.path, k.doc).to_lowercase().replace('_', " ");
            words.iter().all(|w| text.contains(w.as_str()))
        })
        .collect();
    let hits = originals(hits);
    if hits.is_empty() {
        Lookup::Nothing
    } else {
        Lookup::Mentions(hits)
    }
}

/// The key of a concrete path (`client.tcp.nodelay`, `plot[0].x`), if the registry has it.
pub fn find(path: &str) -> Option<&'static Key> {
    let bare = strip_indices(path);
    registry().iter().find(|k| k.concrete().iter().any(|c| c.replace("[]", "") == bare))
}

fn strip_indices(path: &str) -> String {
    let mut out = String::new();
    let mut skip = false;
    for c in path.chars() {
        match c {
            '[' => skip = true,
            ']' => skip = false,
            c if !skip => out.push(c),
            _ => {}
        }
    }
    out
}

/// For an unknown key path, the nearest known one (`client.tcp.nodely` → `client.tcp.nodelay`), for an
/// error message's "did you mean". `None` when nothing is close.
pub fn suggest(path: &str) -> Option<String> {
    let bare = strip_indices(path);
    registry()
        .iter()
        .flat_map(|k| k.concrete())
        .map(|c| c.replace("[]", ""))
        .map(|c| (edit_distance(&c, &bare), c))
        .filter(|(d, c)| *d > 0 && *d <= 2.max(c.len() / 8))
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The test kind under which a key of `[test]` is used, to ask the validation about it.
fn kind_for(path: &str) -> &'static str {
    let transport = REGISTERED.iter().find(|r| path.contains(&format!(".{}.", r.table)));
    match path {
        _ if transport.is_some() => transport.map_or("tcp_stream", |r| r.keys.probe_kind),
        "test.messages" | "test.interval" => "tcp_msg",
        "test.request" | "test.response" | "test.burst" => "tcp_rr",
        _ => "tcp_stream",
    }
}

/// What the parser and the validation accept for `key`, in their own words: the key is set to values no
/// key accepts (a word, zero, a huge number) on a minimal scenario, and the first error's "accepted …"
/// clause is returned. `None` when they accept all of them or do not say (free text, tables, arrays).
pub fn accepted(key: &Key) -> Option<String> {
    if key.is_table() || key.ty == "array" || key.path.contains("[]") || key.path.starts_with("repeat") {
        return None;
    }
    let path = key.concrete().into_iter().next()?;
    // Out of range at either end first (what validation says), then of the wrong form (what the parser
    // says).
    let probes: &[&str] = match key.ty {
        "bool" => &["\"x\""],
        "integer" => &["0", "4294967295", "\"x\""],
        "float" => &["-1.0", "2.0", "\"x\""],
        "duration" => &["\"0s\"", "\"1000000000s\"", "\"\u{1}\""],
        "size" => &["\"0B\"", "\"1000000GiB\"", "\"\u{1}\""],
        _ => &["\"\u{1}\""],
    };
    let mut text = minimal(kind_for(&path), "rfc");
    if path.contains(".loss.") {
        // A loss parameter is checked under the model it belongs to.
        let model = match key.name() {
            "drop" => "scripted",
            "r" | "h" | "k" => "gilbert_elliott",
            _ => "bernoulli",
        };
        let rest = match model {
            "scripted" => "drop = [1]",
            "gilbert_elliott" => "p = 0.1, r = 0.5",
            _ => "p = 0.1",
        };
        text = text
            .replace("rate = \"10mbit\"\n", &format!("rate = \"10mbit\"\nloss = {{ model = \"{model}\", {rest} }}\n"));
    }
    let mut clauses: Vec<String> = Vec::new();
    for value in probes {
        let flag = format!("{path}={value}");
        if let Err(e) = load(&Source { name: "keys", text: &text }, &[flag]) {
            // Only what is said about this key (a probe may trip another key's check).
            if e.key != path {
                continue;
            }
            if let Some(i) = e.message.find("accepted") {
                let clause = e.message[i..].trim_start_matches("accepted").trim_start_matches([':', ' ']);
                let clause = clause.trim_end_matches('.').to_string();
                if !clauses.contains(&clause) {
                    clauses.push(clause);
                }
            }
        }
    }
    (!clauses.is_empty()).then(|| clauses.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let nodelay = find("client.tcp.nodelay").unwrap();
        for q in ["nodelay", "tcp.nodelay", "client.tcp.nodelay", "server.tcp.nodelay"] {
            assert!(nodelay.is_named_by(q), "{q}");
        }
        assert!(!nodelay.is_named_by("delay"));
        let rate = find("path.down.rate").unwrap();
        assert!(rate.is_named_by("path.rate") && rate.is_named_by("up.rate") && rate.is_named_by("rate"));
        assert!(find("plot[2].x").is_some_and(|k| k.path == "plot[].x"));
        assert!(matches!(lookup("tcp.nodelay"), Lookup::One(k, _) if k.path == "{client,server}.tcp.nodelay"));
        assert!(matches!(lookup("nodelay"), Lookup::Ambiguous(v) if v.len() == 2));
        assert!(matches!(lookup("cubic.beta"), Lookup::One(k, _) if k.ty == "float"));
        assert!(matches!(lookup("rdp"), Lookup::One(k, under) if k.path == "{client,server}.rdp" && under.len() > 10));
        assert!(matches!(lookup("rate"), Lookup::One(k, _) if k.path == "path.{up,down}.rate"));
        assert!(matches!(lookup("delayed ack"), Lookup::Mentions(v) if v.iter().any(|k| k.name() == "ack_policy")));
        assert!(matches!(lookup("warp_drive"), Lookup::Nothing));
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("client.tcp.nodely").as_deref(), Some("client.tcp.nodelay"));
        assert_eq!(suggest("path.up.rtae").as_deref(), Some("path.up.rate"));
        assert_eq!(suggest("completely.different"), None);
    }

    #[test]
    fn defaults_and_accepted_come_from_the_model() {
        let ack = find("client.tcp.ack_policy").unwrap();
        assert!(matches!(&ack.default, DefaultValue::PerStack(v) if v[0] == ("rfc", "delayed".to_string())), "{ack:?}");
        assert!(accepted(ack).unwrap().contains("`mentat`"), "{:?}", accepted(ack));
        let coalesce = find("server.host.rx_coalesce").unwrap();
        assert!(coalesce.default.line().contains("linux 50us"), "{}", coalesce.default.line());
        assert_eq!(coalesce.default.short(), "0s; linux 50us");
        assert_eq!(find("test.parallel").unwrap().unit, "connections");
        assert!(accepted(find("test.parallel").unwrap()).unwrap().contains("100000"));
        assert!(accepted(find("path.up.loss.p").unwrap()).is_some());
        assert_eq!(find("client.tcp.nodelay").unwrap().default, DefaultValue::Value("false".into()));
    }
}
