//! The result document's types. The lab owns the schema (`tcplab.result/1`, docs/results.md): a backend
//! reports what its applications measured and what its stack counted ([`BackendRun`]), and `crate::run`
//! maps that to the metrics of the test kind. Nothing here runs a backend.

use serde::{Deserialize, Serialize};
use tcplab_workload::Report;

use crate::error::Origin;
use crate::host_transports::AnyMetrics;
use crate::scenario::{full_kind_name, Protocol, Scenario, TestKind};
use crate::stats::Interval;

mod series;
pub use series::*;

/// The schema this lab writes and reads.
pub const SCHEMA: &str = "tcplab.result/2";

/// The schema before it, still read (`tcplab report`, `merge`): the same document without
/// `links.directions` and `links.queue_series` (docs/outputs.md § From tcplab.result/1 to /2).
pub const SCHEMA_V1: &str = "tcplab.result/1";

/// A name from a fixed set the lab writes (`"sim"`, `"client"`, a series column), read back as the
/// lab's own string. (An alias, so that serde does not take the field for one borrowed from the input.)
pub type Name = &'static str;

/// The result document (`--json`), schema `tcplab.result/1`. It reads back ([`ResultDoc::from_json`]) into
/// the same values, so a saved document re-serializes byte for byte; a document that does not fit is
/// refused, naming the field.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultDoc {
    #[serde(deserialize_with = "de::schema")]
    pub schema: Name,
    /// The version of tcplab that wrote the document (this one's, `env!("CARGO_PKG_VERSION")`, for a run).
    pub tcplab: std::borrow::Cow<'static, str>,
    #[serde(deserialize_with = "de::backend")]
    pub backend: Name,
    pub seed: u64,
    pub scenario: Scenario,
    /// The sweep's axes, in order (absent without a sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<Axis>>,
    /// The repetition rule (absent with one run per point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    pub points: Vec<Point>,
    /// A shard of a sweep (`--shard i/n`); `tcplab merge` joins shards into the whole document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
}

impl ResultDoc {
    /// Reads a saved document (`run --json`, `merge`): every field is checked against the typed model and
    /// the whole against itself ([`ResultDoc::check`]); the error names the field (`points[2].metrics:
    /// throughput_bps: invalid type: string "fast", expected f64 at line 120 column 30`).
    pub fn from_json(text: &str) -> Result<ResultDoc, String> {
        let mut de = serde_json::Deserializer::from_str(text);
        let doc = Self::read(&mut de)?;
        de.end().map_err(|e| e.to_string())?;
        doc.check()?;
        Ok(doc)
    }

    /// [`ResultDoc::from_json`] of a document already parsed as JSON.
    pub fn from_value(v: &serde_json::Value) -> Result<ResultDoc, String> {
        let doc = Self::read(v)?;
        doc.check()?;
        Ok(doc)
    }

    fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ResultDoc, String> {
        serde_path_to_error::deserialize(d).map_err(|e| {
            let path = e.path().to_string();
            if path == "." {
                e.inner().to_string()
            } else {
                format!("{path}: {}", e.inner())
            }
        })
    }

    /// What the fields' types cannot say: every point has the metrics of the scenario's test kind and the
    /// sweep's coordinates, and a shard holds the points its index gives it.
    pub fn check(&self) -> Result<(), String> {
        check_version(self)?;
        let kind = (self.scenario.test.transport, self.scenario.test.kind);
        let axes: Vec<&str> = self.sweep.iter().flatten().map(|a| a.path.as_str()).collect();
        for (i, p) in self.points.iter().enumerate() {
            if !p.metrics.kinds().contains(&kind) {
                let of: Vec<String> = p.metrics.kinds().iter().map(|&(p, k)| full_kind_name(p, k)).collect();
                return Err(format!(
                    "points[{i}].metrics: the metrics of test.kind {}, but scenario.test.kind = {:?}",
                    of.join(" or "),
                    self.scenario.test.kind_name()
                ));
            }
            let keys: Vec<&str> = p.params.keys().map(String::as_str).collect();
            if keys != axes {
                return Err(format!(
                    "points[{i}].params: keys [{}]; accepted the sweep's axes in order: [{}]",
                    keys.join(", "),
                    axes.join(", ")
                ));
            }
            if p.iterations == 0 {
                return Err(format!("points[{i}].iterations: 0; accepted at least 1"));
            }
        }
        if let Some(sh) = self.shard {
            if sh.count == 0 || sh.index >= sh.count {
                return Err(format!("shard: index {} of {}; accepted 0 <= index < count", sh.index, sh.count));
            }
            let expect = (sh.points as u64 + sh.count as u64 - 1 - sh.index as u64) / sh.count as u64;
            if self.points.len() as u64 != expect {
                return Err(format!(
                    "points: {} points; shard {}/{} of {} points holds {expect}",
                    self.points.len(),
                    sh.index,
                    sh.count,
                    sh.points
                ));
            }
        }
        self.check_coordinates()
    }

    /// The points are the sweep's, each once and in the order the run makes them (row-major, the last
    /// axis fastest; a shard's every `count`-th from its `index`): a point dropped from, repeated in or
    /// moved within a saved document would otherwise be reported as if it had been run that way.
    fn check_coordinates(&self) -> Result<(), String> {
        let axes = self.sweep.as_deref().unwrap_or_default();
        if let Some(a) = axes.iter().find(|a| a.values.is_empty()) {
            return Err(format!("sweep: {} has no values; accepted at least one per axis", a.path));
        }
        let Some(total) = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len())) else {
            return Err("sweep: the axes make more points than a document can hold".into());
        };
        let (first, step) = match self.shard {
            Some(sh) if sh.points != total => {
                return Err(format!(
                    "shard.points: {}; the sweep's axes make {total} points ({})",
                    sh.points,
                    axes.iter()
                        .map(|a| format!("{} values of {}", a.values.len(), a.path))
                        .collect::<Vec<_>>()
                        .join(" x ")
                ));
            }
            Some(sh) => (sh.index as usize, sh.count as usize),
            None if self.points.len() != total => {
                let what = if axes.is_empty() {
                    "a run without a sweep has 1".to_string()
                } else {
                    format!("the sweep's axes make {total}")
                };
                return Err(format!("points: {} points; {what}", self.points.len()));
            }
            None => (0, 1),
        };
        for (k, p) in self.points.iter().enumerate() {
            let mut rest = first + k * step;
            for a in axes.iter().rev() {
                let want = toml_to_json(&a.values[rest % a.values.len()]);
                rest /= a.values.len();
                if p.params.get(&a.path) != Some(&want) {
                    let got = p.params.get(&a.path).map_or("nothing".to_string(), |v| v.to_string());
                    return Err(format!(
                        "points[{k}].params.{}: {got}; point {} of the sweep has {want} (points are in the sweep's order, each once)",
                        a.path,
                        first + k * step
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Which points a shard holds: those whose index is `index` modulo `count`, of `points` in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
    pub points: usize,
}

/// The confidence interval of a point's main metric over its iterations.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confidence {
    /// The metric the interval is about (`throughput_bps`, `transactions_per_s`).
    #[serde(deserialize_with = "de::confidence_metric")]
    pub metric: Name,
    pub level: f64,
    /// The width asked for, a fraction of the mean.
    pub width: f64,
    /// The interval's whole width as a fraction of the mean (0 with no spread).
    pub interval: f64,
    /// Whether `interval < width`.
    pub met: bool,
}

/// One point of the scenario (one set of parameters); a sweep has several.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// The sweep coordinates of this point (empty without a sweep).
    pub params: serde_json::Map<String, serde_json::Value>,
    pub iterations: u32,
    pub metrics: Metrics,
    /// With repetitions: the interval of the main metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// With repetitions: each numeric metric's sample standard deviation between the iterations, in the
    /// shape of `metrics` (`iteration_stddev.time_per_message_us.mean`: how much the mean time per
    /// message differs from run to run, the spread a report of repeated runs quotes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_stddev: Option<serde_json::Value>,
    pub connections: Vec<ConnectionResult>,
    /// The first sender's gauges over time, when `test.series` asked for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Series>,
    /// RDP tests with `test.series`: every RTT measurement of the sampled end, taken or discarded, beside
    /// `series` (docs/results.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_samples: Option<RttSamples>,
    /// Every connection end's RFC 4898 variables over time, when `test.series` named them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logvars: Option<LogVars>,
    pub links: Links,
    /// Linux backend: the run's health (emulator lateness, hidden drops, whether the run is valid); an
    /// object with at least `valid` (docs/linux-backend.md § Run health).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de::health")]
    pub health: Option<serde_json::Value>,
    /// The scenario's published figures that apply to this point, beside the lab's (`[[published]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<crate::published::Comparison>,
    /// A `[dumbbell]` scenario: each flow's figures, in the order of its `[[flow]]` tables (docs/results.md
    /// § Flows). Absent for the client-server scenarios.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowResult>,
    /// A `[dumbbell]` scenario: the stream flows' goodputs summed and Jain's fairness index over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<FlowsAggregate>,
    /// A flows scenario with `test.series`: every flow over time (goodput, or an rr flow's transaction
    /// time), what `--flent` writes as flent's RRUL series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_series: Option<FlowSeries>,
}

impl Point {
    /// Segments retransmitted by all connection ends over the run, whatever the test kind.
    pub fn metrics_retransmissions(&self) -> u64 {
        match &self.metrics {
            Metrics::Own(m) => m.number("retransmissions") as u64,
            Metrics::Msg(m) => m.retransmissions,
            Metrics::Stream(m) => m.retransmissions,
            Metrics::Rr(m) => m.retransmissions,
        }
    }

    /// The point's value of `metric`, as `[[plot]] y`, `[[published]] metric` and `[table] columns` name
    /// it: a dotted path in `metrics` (`latency_us.p99`); `iteration_stddev.` and such a path, its standard
    /// deviation between the point's iterations; `client.VAR` / `server.VAR`, an RFC 4898
    /// variable summed over that side's connection ends; or `client.VAR.mean` / `.stddev` over that side's
    /// samples of VAR (`logvars`) within the measurement window.
    pub fn value(&self, metric: &str) -> Option<f64> {
        if let Some((side, var)) = metric.split_once('.').filter(|(side, _)| *side == "client" || *side == "server") {
            if let Some((var, stat @ ("mean" | "stddev"))) = var.rsplit_once('.') {
                return self.series_statistic(side, var, stat);
            }
            let values: Vec<f64> = self
                .connections
                .iter()
                .filter(|c| c.side == side)
                .filter_map(|c| c.estats.get(var).and_then(serde_json::Value::as_f64))
                .collect();
            return (!values.is_empty()).then(|| values.iter().sum());
        }
        if let Some(between) = metric.strip_prefix(crate::published::BETWEEN_ITERATIONS) {
            let s = self.iteration_stddev.as_ref()?;
            return between.split('.').try_fold(s, |v, k| v.get(k)).and_then(serde_json::Value::as_f64);
        }
        let m = serde_json::to_value(&self.metrics).ok()?;
        metric.split('.').try_fold(&m, |v, k| v.get(k)).and_then(serde_json::Value::as_f64)
    }

    fn series_statistic(&self, side: &str, var: &str, stat: &str) -> Option<f64> {
        let lv = self.logvars.as_ref()?;
        let col = lv.columns.iter().position(|c| c == var)?;
        let (start, end) = (lv.measure_start_s?, lv.measure_end_s?);
        let values: Vec<f64> = lv
            .ends
            .iter()
            .filter(|e| e.side == side)
            .flat_map(|e| &e.rows)
            .filter(|r| r.first().is_some_and(|t| *t >= start && *t <= end))
            .filter_map(|r| r.get(col).copied().filter(|v| v.is_finite()))
            .collect();
        crate::stats::series_stat(&values, stat)
    }

    /// Sets `published` from the `[[published]]` figures of `s`, the point's own resolved scenario, that
    /// apply to it; called once the point's metrics are final (after its iterations are averaged).
    pub fn compare_published(&mut self, s: &Scenario) {
        if s.published.is_empty() {
            return;
        }
        let json = serde_json::to_value(&*self).expect("a point serializes");
        let Ok(sv) = serde_json::to_value(s) else { return };
        self.published = crate::published::compare(&s.published, &sv, &json);
    }
}

/// Figures of merit, one type per kind of test; a metric that does not apply is absent, not zero.
///
/// Read back by the field that only its kind has (a transport's own metrics' marker, `messages_per_s`,
/// `transactions_per_s`, else a bulk transfer's), every field checked and no other field accepted, so that
/// an error names the field rather than "no variant matched".
#[derive(Debug, Clone)]
pub enum Metrics {
    /// A transport's own figures for a workload whose metrics are no other's (its `LabTransport`'s
    /// `OWN_METRICS`, e.g. RDP's stream).
    Own(OwnMetricsValue),
    Msg(MsgMetrics),
    Stream(StreamMetrics),
    Rr(RrMetrics),
}

/// A transport's own metrics in a point: the test they are of and the transport's value, written as it
/// writes itself.
#[derive(Debug)]
pub struct OwnMetricsValue {
    pub transport: Protocol,
    pub workload: TestKind,
    pub value: Box<dyn AnyMetrics>,
}

impl Clone for OwnMetricsValue {
    fn clone(&self) -> Self {
        OwnMetricsValue { transport: self.transport, workload: self.workload, value: self.value.clone_box() }
    }
}

impl OwnMetricsValue {
    pub fn new<M: AnyMetrics>(transport: Protocol, workload: TestKind, value: M) -> OwnMetricsValue {
        OwnMetricsValue { transport, workload, value: Box::new(value) }
    }

    /// The transport's metrics type, if they are `M`.
    pub fn get<M: AnyMetrics>(&self) -> Option<&M> {
        self.value.as_any().downcast_ref::<M>()
    }

    /// A figure every test's metrics have (`retransmissions`, `elapsed_s`), NaN where absent.
    fn number(&self, name: &str) -> f64 {
        self.value.to_json().get(name).and_then(serde_json::Value::as_f64).unwrap_or(f64::NAN)
    }
}

impl Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Metrics::Own(m) => m.value.to_json().serialize(s),
            Metrics::Msg(m) => m.serialize(s),
            Metrics::Stream(m) => m.serialize(s),
            Metrics::Rr(m) => m.serialize(s),
        }
    }
}

impl Metrics {
    /// The tests (transport, workload) whose points carry metrics of this form.
    pub fn kinds(&self) -> Vec<(Protocol, TestKind)> {
        let runs = |k: &[TestKind]| {
            Protocol::all()
                .into_iter()
                .flat_map(|p| k.iter().filter(move |w| p.workloads().contains(w)).map(move |&w| (p, w)))
                // A workload's metrics unless the transport has its own for it.
                .filter(|(p, w)| p.registration().own_metrics.iter().all(|o| o.workload != w.key()))
                .collect()
        };
        match self {
            Metrics::Own(m) => vec![(m.transport, m.workload)],
            Metrics::Msg(_) => runs(&[TestKind::Msg]),
            Metrics::Stream(_) => runs(&[TestKind::Stream, TestKind::Maerts]),
            Metrics::Rr(_) => runs(&[TestKind::Rr, TestKind::Crr]),
        }
    }

    /// The CPU figures, with the cost model or on the Linux backend.
    pub fn cpu(&self) -> Option<&CpuMetrics> {
        match self {
            Metrics::Msg(m) => m.cpu.as_ref(),
            Metrics::Stream(m) => m.cpu.as_ref(),
            Metrics::Rr(m) => m.cpu.as_ref(),
            Metrics::Own(_) => None,
        }
    }

    /// The metrics' elapsed time, seconds.
    pub fn elapsed_s(&self) -> f64 {
        match self {
            Metrics::Own(m) => m.number("elapsed_s"),
            Metrics::Msg(m) => m.elapsed_s,
            Metrics::Stream(m) => m.elapsed_s,
            Metrics::Rr(m) => m.elapsed_s,
        }
    }
}

/// Reads `v` as `T`, every field checked and every field the input has one `T` writes back: an unknown
/// (misspelt, foreign) metric is refused, not dropped. The error names the field.
pub(crate) fn strict_metrics<T: serde::de::DeserializeOwned + Serialize>(v: &serde_json::Value) -> Result<T, String> {
    let t: T = serde_path_to_error::deserialize(v).map_err(|e| match e.path().to_string() {
        p if p == "." => e.inner().to_string(),
        p => format!("{p}: {}", e.inner()),
    })?;
    let back = serde_json::to_value(&t).map_err(|e| e.to_string())?;
    if let (Some(a), Some(b)) = (v.as_object(), back.as_object()) {
        if let Some(k) = a.keys().find(|k| !b.contains_key(*k)) {
            let known: Vec<&str> = b.keys().map(String::as_str).collect();
            return Err(format!("{k}: unknown metric; accepted: {}", known.join(", ")));
        }
    }
    Ok(t)
}

impl<'de> Deserialize<'de> for Metrics {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        let obj =
            v.as_object().ok_or_else(|| D::Error::custom(format!("{}: not an object of metrics", de::kind_of(&v))))?;
        let own = crate::host_transports::REGISTERED.iter().find_map(|r| {
            let o = r.own_metrics.iter().find(|o| obj.contains_key(o.marker))?;
            Some((Protocol::named(r.table), o))
        });
        let m = if let Some((transport, o)) = own {
            let workload = TestKind::ALL.into_iter().find(|k| k.key() == o.workload).expect("a workload's key");
            (o.read)(&v).map(|value| Metrics::Own(OwnMetricsValue { transport, workload, value }))
        } else if obj.contains_key("messages_per_s") {
            strict_metrics(&v).map(Metrics::Msg)
        } else if obj.contains_key("transactions_per_s") {
            strict_metrics(&v).map(Metrics::Rr)
        } else if obj.contains_key("throughput_bps") {
            strict_metrics(&v).map(Metrics::Stream)
        } else {
            let mut markers: Vec<&str> = vec!["throughput_bps", "transactions_per_s", "messages_per_s"];
            markers.extend(crate::host_transports::REGISTERED.iter().flat_map(|r| r.own_metrics).map(|o| o.marker));
            Err(format!("none of {}: not the metrics of any test kind", markers.join(", ")))
        };
        m.map_err(D::Error::custom)
    }
}

/// The figures of a small-message stream (`tcp_msg`), from the receiving application, over the messages
/// whose last byte it read during the measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MsgMetrics {
    /// `messages / elapsed_s`.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub messages_per_s: f64,
    /// Whole messages read by the receiving application during the measurement.
    pub messages: u64,
    /// Payload bits read during the measurement per second (goodput): `delivered_bytes × 8 / elapsed_s`.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub throughput_bps: f64,
    /// Payload bytes read during the measurement.
    pub delivered_bytes: u64,
    /// The gaps between successive deliveries of whole messages to the receiving application, µs (a read
    /// that completes k messages: one gap and k − 1 of zero; the first from the start of the measurement).
    /// The mean is the time to the last delivery over `messages`.
    pub time_per_message_us: LatencyMetrics,
    /// One-way latency per message, µs: from the send call that starts it to the read of its last byte.
    pub latency_us: LatencyMetrics,
    /// Segments retransmitted by all endpoints during the whole run.
    pub retransmissions: u64,
    /// Length of the measurement, seconds: `test.duration`, or with `test.messages` until the last one was
    /// read.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub elapsed_s: f64,
    /// With the CPU cost model.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuMetrics>,
}

/// The figures of a request/response test (TCP_RR, TCP_CRR).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RrMetrics {
    /// Transactions completed during the measurement, per second.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub transactions_per_s: f64,
    /// Transactions completed during the measurement (their response's last byte was read in it).
    pub transactions: u64,
    /// Per-transaction latency: request write (TCP_CRR: connect call) to the response's last byte read.
    pub latency_us: LatencyMetrics,
    /// Segments retransmitted by all endpoints during the whole run.
    pub retransmissions: u64,
    /// Length of the measurement, seconds.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub elapsed_s: f64,
    /// TCP_CRR: connections the client opened over the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_opened: Option<u64>,
    /// TCP_CRR: times a transaction found no free ephemeral port and waited for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_waits: Option<u64>,
    /// With the CPU cost model.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuMetrics>,
}

/// Statistics of a set of latencies, microseconds: mean, population standard deviation, minimum and
/// maximum exact; percentiles from an HDR histogram with 3 significant digits; and the distribution as
/// at most 256 CDF steps (docs/results.md § Metrics).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatencyMetrics {
    #[serde(deserialize_with = "de::f64_or_null")]
    pub mean: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub stddev: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub min: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub p50: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub p90: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub p99: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub p99_9: f64,
    #[serde(deserialize_with = "de::f64_or_null")]
    pub max: f64,
    /// `[[value_us, fraction], …]`: the fraction of the transactions whose latency is at most the value
    /// (`tcplab_workload::Latency::cdf`); absent without transactions.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "cdf_json")]
    pub cdf: Vec<(f64, f64)>,
}

/// CDF steps in JSON: an array of `[value_us, fraction]` pairs, checked as [`tcplab_workload::Cdf`] is.
mod cdf_json {
    use serde::{Deserialize, Deserializer, Serializer};
    use tcplab_workload::Cdf;

    pub fn serialize<S: Serializer>(c: &[(f64, f64)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(c.iter().map(|&(v, f)| [v, f]))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f64, f64)>, D::Error> {
        let steps: Vec<[f64; 2]> = Vec::deserialize(d)?;
        let steps: Vec<(f64, f64)> = steps.into_iter().map(|[v, f]| (v, f)).collect();
        Cdf::from_steps(&steps).map(|c| c.steps().to_vec()).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "latency_us.cdf: accepted at most {} steps [value_us, fraction] with values increasing and \
                 fractions in (0, 1], not decreasing",
                tcplab_workload::CDF_MAX_STEPS
            ))
        })
    }
}

impl From<tcplab_workload::LatencySummary> for LatencyMetrics {
    fn from(s: tcplab_workload::LatencySummary) -> Self {
        LatencyMetrics {
            mean: s.mean,
            stddev: s.stddev,
            min: s.min,
            p50: s.p50,
            p90: s.p90,
            p99: s.p99,
            p99_9: s.p99_9,
            max: s.max,
            cdf: s.cdf.steps().to_vec(),
        }
    }
}

/// The figures of a bulk transfer (TCP_STREAM, TCP_MAERTS).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamMetrics {
    /// Payload bits per second delivered to the receiving application during the measurement.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub throughput_bps: f64,
    /// Payload bytes delivered during the measurement.
    pub delivered_bytes: u64,
    /// Segments retransmitted by all endpoints during the whole run (SYN and FIN retransmissions included).
    pub retransmissions: u64,
    /// Length of the measurement, seconds.
    #[serde(deserialize_with = "de::f64_or_null")]
    pub elapsed_s: f64,
    /// With the CPU cost model.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuMetrics>,
}

/// CPU figures from the cost model (netperf's `-c`/`-C`), `local` = the client, `remote` = the server; a
/// side without a model is absent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CpuMetrics {
    /// Where the CPU figures come from: `"modeled"` (the simulator's cost model) or `"measured"` (the Linux
    /// backend: /proc/stat over the window, as netperf measures it).
    #[serde(deserialize_with = "de::cpu_source")]
    pub cpu_source: String,
    /// Measured figures: `"system"`, the whole machine (both ends and the emulator share it, so local and
    /// remote are the same figure). Absent for modeled figures, which are per host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_scope: Option<String>,
    /// Busy core time over the window's length times the cores, percent.
    pub cpu_util_percent: Sides,
    /// Busy core time per KB (1024 bytes) moved during the window, microseconds (netperf's service demand).
    pub service_demand_us_per_kb: Sides,
    /// Busy core time per transaction, microseconds (request/response tests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_demand_us_per_tr: Option<Sides>,
}

/// A figure for each end of the test.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sides {
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de::opt_f64_or_null")]
    pub local: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "de::opt_f64_or_null")]
    pub remote: Option<f64>,
}

/// Reading a document back: the fields the writer fills from fixed sets (`schema`, `backend`, a side, a
/// series' columns) accept exactly those, so that a foreign or damaged value is named where it is; and a
/// float the writer could not spell (NaN or infinite: JSON's `null`) reads back as NaN, so that it is
/// written as `null` again.
pub(crate) mod de {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    use super::Protocol;

    /// `v`'s JSON type, for messages.
    pub fn kind_of(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// One of `accepted`, as its static string.
    fn one_of<'de, D: Deserializer<'de>>(d: D, accepted: &[&'static str]) -> Result<&'static str, D::Error> {
        let s = String::deserialize(d)?;
        accepted.iter().copied().find(|a| *a == s).ok_or_else(|| {
            let list: Vec<String> = accepted.iter().map(|a| format!("{a:?}")).collect();
            D::Error::custom(format!("{s:?}: accepted: {}", list.join(", ")))
        })
    }

    pub fn schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, &[super::SCHEMA, super::SCHEMA_V1])
    }

    pub fn backend<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, &["sim", "linux"])
    }

    pub fn side<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, &["client", "server"])
    }

    /// A connection's protocol: a registered transport's name.
    pub fn protocol<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, &Protocol::all().into_iter().map(Protocol::key).collect::<Vec<_>>())
    }

    pub fn confidence_metric<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
        one_of(d, &["throughput_bps", "transactions_per_s", "messages_per_s"])
    }

    pub fn cpu_source<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        one_of(d, &["modeled", "measured"]).map(String::from)
    }

    fn columns<'de, D: Deserializer<'de>>(d: D, sets: &[&[&'static str]]) -> Result<Vec<&'static str>, D::Error> {
        let names = Vec::<String>::deserialize(d)?;
        let known: Vec<&'static str> = sets.iter().flat_map(|s| s.iter().copied()).collect();
        names
            .iter()
            .map(|n| {
                known
                    .iter()
                    .copied()
                    .find(|k| k == n)
                    .ok_or_else(|| D::Error::custom(format!("column {n:?}: accepted: {}", known.join(", "))))
            })
            .collect()
    }

    pub fn series_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<&'static str>, D::Error> {
        let sets: Vec<&[&'static str]> = crate::host_transports::REGISTERED.iter().map(|r| r.series_columns).collect();
        columns(d, &sets)
    }

    pub fn rtt_columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<&'static str>, D::Error> {
        columns(d, &[&crate::columns::RTT_SAMPLE_COLUMNS])
    }

    pub fn f64_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    /// Absent is `None` (with `#[serde(default)]`); `null` is a figure that was NaN.
    pub fn opt_f64_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Some(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN)))
    }

    pub fn rows<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<f64>>, D::Error> {
        let rows = Vec::<Vec<Option<f64>>>::deserialize(d)?;
        Ok(rows.into_iter().map(|r| r.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect()).collect())
    }

    /// An object of RFC 4898 variables: numbers (`null` for a gauge that was infinite).
    pub fn estats<'de, D: Deserializer<'de>>(d: D) -> Result<super::EndStats, D::Error> {
        let v = Value::deserialize(d)?;
        let obj = v.as_object().ok_or_else(|| D::Error::custom(format!("{}: accepted an object", kind_of(&v))))?;
        if let Some((k, x)) = obj.iter().find(|(_, x)| !(x.is_number() || x.is_null())) {
            return Err(D::Error::custom(format!("{k}: {}: accepted a number", kind_of(x))));
        }
        Ok(v.into())
    }

    /// The Linux backend's run health: an object with `valid` (a boolean), `invalid_reasons` (strings)
    /// and `hidden_drops` (a count) where present; the rest is the backend's own (docs/linux-backend.md).
    pub fn health<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        let v = Value::deserialize(d)?;
        let obj = v.as_object().ok_or_else(|| D::Error::custom(format!("{}: accepted an object", kind_of(&v))))?;
        if !obj.get("valid").is_some_and(Value::is_boolean) {
            return Err(D::Error::custom("valid: missing or not a boolean"));
        }
        if obj.get("hidden_drops").is_some_and(|h| !h.is_u64()) {
            return Err(D::Error::custom("hidden_drops: accepted a count"));
        }
        if let Some(r) = obj.get("invalid_reasons") {
            if !r.as_array().is_some_and(|a| a.iter().all(Value::is_string)) {
                return Err(D::Error::custom("invalid_reasons: accepted an array of strings"));
            }
        }
        Ok(Some(v))
    }
}

pub use crate::scenario::metric_names;

/// What the version promises: a /2 document reports every point's link directions; a /1 document has
/// none of /2's fields.
pub fn check_version(doc: &ResultDoc) -> Result<(), String> {
    for (i, p) in doc.points.iter().enumerate() {
        let l = &p.links;
        if doc.schema == SCHEMA_V1 {
            if !l.directions.is_empty() || l.queue_series.is_some() {
                let field = if l.directions.is_empty() { "queue_series" } else { "directions" };
                return Err(format!(
                    "points[{i}].links.{field}: a field of {SCHEMA}, but the document's schema is {SCHEMA_V1:?}"
                ));
            }
        } else if l.directions.is_empty() {
            return Err(format!(
                "points[{i}].links.directions: missing; {SCHEMA} reports every link direction (a {SCHEMA_V1} \
                 document has none: its schema says so)"
            ));
        }
    }
    Ok(())
}

// The sweep's axes and repetitions as the document records them (`sweep`, `repeat`); the sweep
// (crate::sweep) plans and runs them.

/// One axis of a sweep: a scenario key path and the values it takes, in order.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub path: String,
    #[serde(serialize_with = "values_as_json")]
    pub values: Vec<toml::Value>,
    /// Where the axis was given; an axis read back from a result document has none to report.
    #[serde(skip, default = "AxisOrigin::saved")]
    pub(crate) origin: AxisOrigin,
}

impl Axis {
    /// Where the axis was written: its `[sweep]` entry's file and line, or its `--sweep` flag.
    pub fn origin(&self) -> Origin {
        match &self.origin {
            AxisOrigin::File { file, line } => Origin::File { file: file.clone(), line: *line },
            AxisOrigin::Flag(flag) => Origin::Sweep { flag: flag.clone() },
        }
    }
}

impl AxisOrigin {
    fn saved() -> AxisOrigin {
        AxisOrigin::Flag("the result document's sweep".into())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AxisOrigin {
    File { file: String, line: Option<usize> },
    Flag(String),
}

fn values_as_json<S: serde::Serializer>(v: &[toml::Value], s: S) -> Result<S::Ok, S::Error> {
    let json: Vec<serde_json::Value> = v.iter().map(toml_to_json).collect();
    json.serialize(s)
}

pub(crate) fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Repetitions of every point (netperf `-i max,min`, `-I level,width`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub min: u32,
    pub max: u32,
    /// Confidence level of the interval, e.g. 0.99.
    pub level: f64,
    /// The interval's whole width must be narrower than this fraction of the mean, e.g. 0.05.
    pub width: f64,
}

impl Repeat {
    /// netperf's defaults when `-I` or `-i` is given: `-i 10,3`, `-I 99,5`.
    pub const DEFAULT: Repeat = Repeat { min: 3, max: 10, level: 0.99, width: 0.05 };

    /// The confidence interval of the main metric over `runs` (none below two).
    pub fn interval(&self, runs: &[Point]) -> Option<Interval> {
        let xs: Vec<f64> = runs.iter().map(|r| main_metric(&r.metrics).1).collect();
        (xs.len() >= 2).then(|| Interval::of(&xs, self.level))
    }

    /// Whether `runs` are enough: the main metric's interval met, or `max` reached.
    pub fn done(&self, runs: &[Point]) -> bool {
        runs.len() as u32 >= self.max || self.interval(runs).is_some_and(|i| i.met(self.width))
    }
}

/// The main metric of a point's metrics: the message rate for `tcp_msg`, throughput for bulk tests, the
/// transaction rate for RR/CRR.
pub fn main_metric(m: &Metrics) -> (&'static str, f64) {
    let v = serde_json::to_value(m).unwrap_or_default();
    for name in ["messages_per_s", "throughput_bps", "transactions_per_s"] {
        if let Some(x) = v.get(name).and_then(|x| x.as_f64()) {
            return (name, x);
        }
    }
    ("", 0.0)
}

/// Statistics of one connection end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionResult {
    /// `client` or `server`: the host the end is on.
    #[serde(deserialize_with = "de::side")]
    pub side: Name,
    /// The transport's name (`tcp`, `rdp`: `Protocol::key`).
    #[serde(deserialize_with = "de::protocol")]
    pub protocol: Name,
    /// The state at the end of the run, spelled as the protocol's RFC does.
    pub state: String,
    /// The protocol's RFC 4898-style variables: an object of numbers (and the few named states and
    /// flags the protocol keeps as strings or booleans).
    #[serde(deserialize_with = "de::estats")]
    pub estats: EndStats,
}

/// A connection end's variables as [`ConnectionResult::estats`] holds them: the simulated TCP's own
/// record until something reads a variable by name, then also as the JSON object, built once. As a JSON
/// object for every end at once (an ordered map of 67 named numbers, 11 KiB an end), flows-100k's
/// 200,000 ends held 2.9 GiB at the end of the run against 0.4 GiB for the simulation itself; the record
/// is the 600 bytes the connection keeps. The document is written from whichever is there, the same
/// bytes either way (the object is the record's serialization).
#[derive(Debug, Clone)]
pub struct EndStats {
    tcp: Option<Box<tcplab_tcp::Estats>>,
    value: std::sync::OnceLock<serde_json::Value>,
}

impl EndStats {
    /// The simulated TCP's record, serialized only when written or read by name.
    pub fn tcp(stats: tcplab_tcp::Estats) -> EndStats {
        EndStats { tcp: Some(Box::new(stats)), value: std::sync::OnceLock::new() }
    }
}

impl From<serde_json::Value> for EndStats {
    fn from(v: serde_json::Value) -> EndStats {
        EndStats { tcp: None, value: v.into() }
    }
}

impl std::ops::Deref for EndStats {
    type Target = serde_json::Value;
    fn deref(&self) -> &serde_json::Value {
        self.value.get_or_init(|| serde_json::to_value(self.tcp.as_deref()).expect("statistics serialize"))
    }
}

impl Serialize for EndStats {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (&self.tcp, self.value.get()) {
            (Some(tcp), _) => tcp.serialize(s),
            (None, v) => v.serialize(s),
        }
    }
}

/// Sampled RFC 4898 gauges of the first sending connection.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Series {
    pub interval_s: f64,
    /// When the measurement window opened and closed, s from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_end_s: Option<f64>,
    #[serde(deserialize_with = "de::series_columns")]
    pub columns: Vec<Name>,
    /// One row per sample; `null` in JSON (an infinite `CurSsthresh`) reads back as NaN.
    #[serde(deserialize_with = "de::rows")]
    pub rows: Vec<Vec<f64>>,
}

/// Every RTT measurement of an RDP end: when, the value, whether the sampling policy took it, and the
/// estimator after it (columns `t_s`, `rtt_ms`, `taken` (1 or 0), `SmoothedRTT`, `CurRTO`; times in ms).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RttSamples {
    #[serde(deserialize_with = "de::rtt_columns")]
    pub columns: Vec<Name>,
    #[serde(deserialize_with = "de::rows")]
    pub rows: Vec<Vec<f64>>,
}

/// Link and NIC counters of the point.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    pub up: LinkCounters,
    pub down: LinkCounters,
    pub nic_client: NicCounters,
    pub nic_server: NicCounters,
    /// IP fragmentation and reassembly per host, present when a path direction has an `mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_client: Option<IpCounters>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_server: Option<IpCounters>,
    /// Every link direction's counters, named (`tcplab.result/2`; absent in a /1 document, whose `up` and
    /// `down` are the only directions it reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<DirectionCounters>,
    /// With `test.series` (simulator): the queue length and sojourn time of every link direction the
    /// scenario declares, over time (`tcplab.result/2`; docs/outputs.md § Queues over time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_series: Option<QueueSeries>,
}

/// A host's IP fragmentation and reassembly counters (RFC 4293 `ipSystemStatsOutFragReqds`,
/// `…OutFragCreates`, `…ReasmReqds`, `…ReasmOKs`, `…ReasmFails`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpCounters {
    /// Datagrams the host had to fragment.
    pub out_frag_reqds: u64,
    /// Fragments it created.
    pub out_frag_creates: u64,
    /// Fragments it received that needed reassembly.
    pub reasm_reqds: u64,
    /// Datagrams it reassembled.
    pub reasm_oks: u64,
    /// Incomplete datagrams it discarded when their reassembly timer (`host.fragment_ttl`) expired.
    pub reasm_fails: u64,
}

/// Counters of one direction of the path.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCounters {
    pub frames_in: u64,
    pub frames_delivered: u64,
    pub bytes_delivered: u64,
    pub drops_queue_full: u64,
    pub drops_random_loss: u64,
    /// Highest number of frames waiting in the queue (not counting the one on the wire).
    pub max_queue_frames: u32,
    /// The direction's queue discipline when it is not the drop-tail FIFO (or the delay has jitter): its
    /// counters. Absent for the FIFO, whose figures are the ones above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscCounters>,
}

/// One link direction's counters, with its name and ends (`links.directions[]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionCounters {
    /// `up`/`down` (two hosts), `bottleneck`/`reverse` and `flow[i].sender_access.forward`, ... (a
    /// dumbbell), `link[i].forward`/`link[i].backward` (a network).
    pub direction: String,
    /// The hosts it carries packets from and to (`client`, a `[[host]]`'s name, `sender[0]`, `left`).
    pub from: String,
    pub to: String,
    pub counters: LinkCounters,
}

/// Counters of a link direction's queue discipline (`tcplab_link::QdiscStats`), sojourn times in ms.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QdiscCounters {
    pub enqueued: u64,
    pub dequeued: u64,
    /// Refused on arrival at the hard limit (`queue`).
    pub drops_overlimit: u64,
    /// Dropped by the algorithm's decision (RED/PIE on enqueue, CoDel at the head).
    pub drops_aqm: u64,
    /// CE-marked instead of dropped (RFC 3168).
    pub marks: u64,
    pub max_packets: u32,
    pub max_bytes: u64,
    /// Mean and largest time a packet waited in the qdisc, ms.
    pub sojourn_mean_ms: f64,
    pub sojourn_max_ms: f64,
}

/// Counters of a host's NIC transmit queue.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicCounters {
    pub frames_sent: u64,
    /// Offers refused because `txqueuelen` frames were already waiting.
    pub refused_full: u64,
    pub max_queue_frames: u32,
}

/// What a backend reports for one run of one point, before the lab turns it into metrics.
#[derive(Debug, Clone)]
pub struct BackendRun {
    /// Each application's side (`client`/`server`) and report.
    pub apps: Vec<(&'static str, Report)>,
    /// Connection ends, each client end followed by its server end.
    pub connections: Vec<ConnectionResult>,
    /// Retransmitted segments, all connection ends.
    pub retransmissions: u64,
    pub links: Links,
    pub series: Option<Series>,
    pub logvars: Option<LogVars>,
    pub engine: EngineCounters,
    /// Per host (client, server), with the CPU cost model.
    pub cpu: [Option<tcplab_sim::CpuReport>; 2],
}

/// The simulator's own figures (for benchmarks; not in the result document).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineCounters {
    pub events: u64,
    pub data_segments: u64,
    /// Virtual time the simulation ran, handshake and close included (a transfer of `test.messages` stops
    /// when it is done, long before its 1-day bound).
    pub simulated: tcplab_units::Duration,
}

/// Why a point produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The simulator could not run the point (connections never came up).
    Sim(tcplab_sim::SimError),
    /// The run asked for something this test kind does not offer yet.
    Unsupported(String),
    /// The Linux backend could not run the point (crates/emu's error, as text).
    Linux(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Sim(e) => e.fmt(f),
            RunError::Unsupported(m) => f.write_str(m),
            RunError::Linux(m) => write!(f, "--backend linux: {m}"),
        }
    }
}

impl std::error::Error for RunError {}

/// One point, run: the document's point and the engine's counters.
#[derive(Debug, Clone)]
pub struct PointRun {
    pub point: Point,
    pub engine: EngineCounters,
}
