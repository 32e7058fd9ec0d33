//! The series and per-flow tables of a point, as the document holds them: a link direction's queue over
//! time (`links.queue_series`), every flow's figures and samples (`flows`, `aggregate`, `flow_series`), the
//! connection ends' sampled variables (`logvars`). Types only; the probes that fill them live with the
//! backends (`crate::queues`, `crate::topology`, `crate::probes`), above the document.

use serde::{Deserialize, Serialize};
use tcplab_units::Duration;

use super::LatencyMetrics;

/// Seconds since the start of the run, as the exact decimal of the nanoseconds (`0.3`, not the
/// `0.30000000000000004` of multiplying by 1e-9): the division of two exactly represented integers rounds
/// once, to the `f64` nearest the decimal, which prints as that decimal.
pub fn exact_secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Samples of every connection end (docs/results.md, `logvars`).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogVars {
    pub interval_s: f64,
    /// When the measurement window opened and closed, s from the start of the run (absent if it never did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_end_s: Option<f64>,
    /// `t_s`, the variables asked for, then `delivered_bytes` and `throughput_bps`.
    pub columns: Vec<String>,
    /// The connection ends in the order they were created.
    pub ends: Vec<EndSeries>,
}

/// The samples of one connection end, from the first tick after it was created.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndSeries {
    pub id: u32,
    #[serde(deserialize_with = "super::de::side")]
    pub side: super::Name,
    pub local_port: u16,
    pub remote_port: u16,
    /// One row per sample; `null` in JSON (a gauge that was infinite) reads back as NaN.
    #[serde(deserialize_with = "super::de::rows")]
    pub rows: Vec<Vec<f64>>,
    /// Bytes delivered to the application up to the last sample (not serialized).
    #[serde(skip)]
    pub(crate) delivered: u64,
}

/// The time axis a series object opens with (`links.queue_series`, `flow_series`): its interval, the
/// measurement window and the instant of each sample.
///
/// Serialized by hand into the object that holds it, before that object's own list ([`with_axis`]): serde's
/// `flatten` would take the fields apart, but it cannot be combined with `deny_unknown_fields`, which every
/// result type keeps so that a misspelled field in a saved document is an error, not a silent default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesAxis {
    pub interval_s: f64,
    /// When the measurement window opened and closed, s from the start of the run (absent if it never did).
    pub measure_start_s: Option<f64>,
    pub measure_end_s: Option<f64>,
    /// The instant of each sample, s from the start of the run.
    pub t_s: Vec<f64>,
}

impl SeriesAxis {
    /// An axis of samples `interval` apart, none taken yet.
    pub fn new(interval: Duration) -> SeriesAxis {
        SeriesAxis { interval_s: exact_secs(interval.as_nanos()), ..SeriesAxis::default() }
    }
}

/// Serde for a series object: [`SeriesAxis`]'s fields (the windows' absent when unknown), then one list
/// under its own name (`directions`, `flows`); any other field is an error.
pub mod with_axis {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::{self, MapAccess, Visitor};
    use serde::ser::SerializeStruct;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::SeriesAxis;

    pub fn serialize<S: Serializer, R: Serialize>(
        s: S,
        name: &'static str,
        axis: &SeriesAxis,
        field: &'static str,
        rest: &R,
    ) -> Result<S::Ok, S::Error> {
        let n = 3 + axis.measure_start_s.is_some() as usize + axis.measure_end_s.is_some() as usize;
        let mut m = s.serialize_struct(name, n)?;
        m.serialize_field("interval_s", &axis.interval_s)?;
        for (key, v) in [("measure_start_s", axis.measure_start_s), ("measure_end_s", axis.measure_end_s)] {
            match v {
                Some(v) => m.serialize_field(key, &v)?,
                None => m.skip_field(key)?,
            }
        }
        m.serialize_field("t_s", &axis.t_s)?;
        m.serialize_field(field, rest)?;
        m.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>, R: Deserialize<'de>>(
        d: D,
        name: &'static str,
        fields: &'static [&'static str; 5],
    ) -> Result<(SeriesAxis, R), D::Error> {
        struct V<R>(&'static str, &'static [&'static str; 5], PhantomData<R>);
        impl<'de, R: Deserialize<'de>> Visitor<'de> for V<R> {
            type Value = (SeriesAxis, R);
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "struct {}", self.0)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut interval, mut start, mut end, mut t, mut rest) = (None, None, None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "interval_s" => interval = Some(map.next_value()?),
                        "measure_start_s" => start = map.next_value()?,
                        "measure_end_s" => end = map.next_value()?,
                        "t_s" => t = Some(map.next_value()?),
                        k if k == self.1[4] => rest = Some(map.next_value()?),
                        k => return Err(de::Error::unknown_field(k, self.1)),
                    }
                }
                let axis = SeriesAxis {
                    interval_s: interval.ok_or_else(|| de::Error::missing_field("interval_s"))?,
                    measure_start_s: start,
                    measure_end_s: end,
                    t_s: t.ok_or_else(|| de::Error::missing_field("t_s"))?,
                };
                Ok((axis, rest.ok_or_else(|| de::Error::missing_field(self.1[4]))?))
            }
        }
        d.deserialize_struct(name, fields, V(name, fields, PhantomData))
    }
}

/// Sampled link directions' queues (`points[].links.queue_series`).
#[derive(Debug, Clone)]
pub struct QueueSeries {
    pub axis: SeriesAxis,
    /// One per sampled direction (every direction the scenario file declares: `up` and `down`, a
    /// dumbbell's `bottleneck` and `reverse`, each `link[i].forward` and `link[i].backward` of a network).
    pub directions: Vec<QueueSamples>,
}

const QUEUE_SERIES_FIELDS: &[&str; 5] = &["interval_s", "measure_start_s", "measure_end_s", "t_s", "directions"];

impl Serialize for QueueSeries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        with_axis::serialize(s, "QueueSeries", &self.axis, "directions", &self.directions)
    }
}

impl<'de> Deserialize<'de> for QueueSeries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (axis, directions) = with_axis::deserialize(d, "QueueSeries", QUEUE_SERIES_FIELDS)?;
        Ok(QueueSeries { axis, directions })
    }
}

/// One link direction's queue at each sample.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSamples {
    /// The direction's name, as `links.directions[].direction` spells it.
    pub direction: String,
    /// Packets waiting at the sample instant (in the qdisc, or the FIFO's backlog), not counting the one
    /// being serialized.
    pub backlog_packets: Vec<u64>,
    /// Their wire bytes (framing included).
    pub backlog_bytes: Vec<u64>,
    /// Sojourn time, ms: on the drop-tail FIFO's fast path, the wait of a packet arriving at the sample
    /// instant (exact: a FIFO fixes it on arrival); on a qdisc, the mean sojourn (enqueue to dequeue) of
    /// the packets dequeued since the previous sample, `null` when none was.
    pub sojourn_ms: Vec<Option<f64>>,
}

/// One flow's figures in a point (`flows[i]` of the result document).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowResult {
    /// The flow's index among the scenario's `[[flow]]` tables.
    pub flow: u32,
    /// `stream`, `rr` or `msg`.
    pub kind: String,
    /// The flow's personality and congestion controller (`linux`, `cubic`).
    pub stack: String,
    pub congestion_control: String,
    /// The round-trip propagation delay of the flow's path, ms: 2 × (access delay + the bottleneck's
    /// one-way delay), the reverse direction's delay for the way back.
    pub base_rtt_ms: f64,
    /// Payload bits per second the flow's receiving application read during the measurement (a stream
    /// flow; for an rr flow, the request and response bytes of its completed transactions).
    pub goodput_bps: f64,
    /// Payload bytes read by the receiver (stream) during the measurement.
    pub delivered_bytes: u64,
    /// Segments the flow's two connection ends retransmitted over the whole run.
    pub retransmissions: u64,
    /// The sender's smoothed RTT at the end of the run, ms (RFC 4898 SmoothedRTT).
    pub smoothed_rtt_ms: f64,
    /// `rr`: transactions completed in the measurement, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions_per_s: Option<f64>,
    /// `rr`: per-transaction latency, µs (request written to response read). `msg`: each message's
    /// one-way latency, µs (the send call that starts it to the read of its last byte).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<LatencyMetrics>,
    /// `msg`: whole messages read in the measurement, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_per_s: Option<f64>,
}

/// Every flow over time (`test.series` beside `[[flow]]`): per tick, a stream or msg flow's goodput at
/// its receiver and an rr flow's mean transaction time (one transaction at a time, so the interval over
/// the transactions it completed), the figures flent's RRUL plots draw.
#[derive(Debug, Clone)]
pub struct FlowSeries {
    /// `t_s`: the end of each sample's interval, s from the start of the run.
    pub axis: SeriesAxis,
    /// One per flow, in the order of the `[[flow]]` tables.
    pub flows: Vec<FlowSamples>,
}

const FLOW_SERIES_FIELDS: &[&str; 5] = &["interval_s", "measure_start_s", "measure_end_s", "t_s", "flows"];

impl Serialize for FlowSeries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        with_axis::serialize(s, "FlowSeries", &self.axis, "flows", &self.flows)
    }
}

impl<'de> Deserialize<'de> for FlowSeries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (axis, flows) = with_axis::deserialize(d, "FlowSeries", FLOW_SERIES_FIELDS)?;
        Ok(FlowSeries { axis, flows })
    }
}

/// One flow's samples.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSamples {
    pub flow: u32,
    /// `goodput_mbps` (stream, msg: payload read by the receiving application, Mbit/s) or `latency_ms`
    /// (rr: the mean time of the transactions completed in the interval, ms, as the time since the last
    /// sample that saw one complete over their number, to within an interval; `null` when none completed).
    pub metric: String,
    pub values: Vec<Option<f64>>,
}

/// What all the stream flows got together.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsAggregate {
    /// Stream flows counted.
    pub stream_flows: u32,
    /// Their goodputs summed, bit/s.
    pub goodput_bps: f64,
    /// Jain's fairness index of their goodputs: (Σx)² / (n·Σx²), 1 when all are equal, 1/n when one
    /// flow has everything (Jain, Chiu and Hawe, DEC-TR-301, 1984). 0 without stream flows.
    pub jain_index: f64,
}

/// Jain's fairness index of `x` (see [`FlowsAggregate::jain_index`]).
pub fn jain_index(x: &[f64]) -> f64 {
    let (s, s2): (f64, f64) = (x.iter().sum(), x.iter().map(|v| v * v).sum());
    if x.is_empty() || s2 == 0.0 {
        return 0.0;
    }
    s * s / (x.len() as f64 * s2)
}
