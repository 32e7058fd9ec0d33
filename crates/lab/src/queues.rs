//! Link directions in the result: their names, and their queues over time (`links.queue_series`, with
//! `test.series`; docs/outputs.md § Queues over time). The engine hands a probe every direction's backlog
//! and counters at each tick ([`tcplab_sim::Probe::on_link_tick`]); a run without `test.series` has no
//! tick and no probe, so sampling costs nothing then.

use serde::{Deserialize, Serialize};
use tcplab_sim::{DirId, Probe};
use tcplab_transport::Transport;
use tcplab_units::{Duration, Instant};

use crate::probes::exact_secs;
use crate::result::{DirectionCounters, LinkCounters};
use crate::scenario::Scenario;

/// Sampled link directions' queues (`points[].links.queue_series`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSeries {
    pub interval_s: f64,
    /// When the measurement window opened and closed, s from the start of the run (absent if it never did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_end_s: Option<f64>,
    /// The instant of each sample, s from the start of the run.
    pub t_s: Vec<f64>,
    /// One per sampled direction (every direction the scenario file declares: `up` and `down`, a
    /// dumbbell's `bottleneck` and `reverse`, each `link[i].forward` and `link[i].backward` of a network).
    pub directions: Vec<QueueSamples>,
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

/// Every link direction of `s`'s run, in [`DirId`] order: its name and the names of the hosts it carries
/// packets from and to.
pub fn names(s: &Scenario) -> Vec<(String, String, String)> {
    let both = |name: &str, a: String, b: String| {
        [(format!("{name}.forward"), a.clone(), b.clone()), (format!("{name}.backward"), b, a)]
    };
    if s.is_network() {
        s.link.iter().enumerate().flat_map(|(i, l)| both(&format!("link[{i}]"), l.a.clone(), l.b.clone())).collect()
    } else if s.has_flows() {
        // The dumbbell's links in the order `topology::place_dumbbell` makes them: the bottleneck, then
        // per flow its sender's access link and its receiver's.
        let mut out = vec![
            ("bottleneck".to_string(), "left".to_string(), "right".to_string()),
            ("reverse".to_string(), "right".to_string(), "left".to_string()),
        ];
        for i in 0..s.flow.len() {
            out.extend(both(&format!("flow[{i}].sender_access"), format!("sender[{i}]"), "left".into()));
            out.extend(both(&format!("flow[{i}].receiver_access"), "right".into(), format!("receiver[{i}]")));
        }
        out
    } else {
        vec![
            ("up".to_string(), "client".to_string(), "server".to_string()),
            ("down".to_string(), "server".to_string(), "client".to_string()),
        ]
    }
}

/// The link directions a shape declares, with their names, in the order the result lists them: the
/// ones `links.queue_series` samples. A dumbbell's access links are the lab's construction (deep queues
/// that never fill), so only its bottleneck is declared.
pub fn declared(s: &Scenario) -> Vec<(DirId, String)> {
    let all = names(s).into_iter().enumerate().map(|(d, (name, ..))| (DirId(d as u32), name));
    if s.has_flows() && !s.is_network() {
        all.take(2).collect()
    } else {
        all.collect()
    }
}

/// `links.directions` of the two-host shape (the Linux backend's): `up` and `down`.
pub fn two_hosts(up: LinkCounters, down: LinkCounters) -> Vec<DirectionCounters> {
    let names = [("up", "client", "server"), ("down", "server", "client")];
    names
        .into_iter()
        .zip([up, down])
        .map(|((d, from, to), counters)| DirectionCounters {
            direction: d.into(),
            from: from.into(),
            to: to.into(),
            counters,
        })
        .collect()
}

/// `links.directions`: every direction's counters, named (`counters[d]` is [`DirId`] `d`'s).
pub fn directions(s: &Scenario, counters: impl IntoIterator<Item = LinkCounters>) -> Vec<DirectionCounters> {
    names(s)
        .into_iter()
        .zip(counters)
        .map(|((direction, from, to), counters)| DirectionCounters { direction, from, to, counters })
        .collect()
}

/// Samples the chosen directions' queues on every tick of `test.series`.
pub struct QueueProbe {
    interval: Duration,
    /// Per direction index: where its samples go, if sampled.
    slot: Vec<Option<usize>>,
    /// Per sampled direction, the qdisc's dequeued count and sojourn sum at the previous sample.
    last: Vec<(u64, u128)>,
    last_tick: Option<Instant>,
    series: QueueSeries,
}

impl QueueProbe {
    pub fn new(interval: Duration, dirs: Vec<(DirId, String)>) -> QueueProbe {
        let mut slot = Vec::new();
        for (k, (d, _)) in dirs.iter().enumerate() {
            if slot.len() <= d.index() {
                slot.resize(d.index() + 1, None);
            }
            slot[d.index()] = Some(k);
        }
        QueueProbe {
            interval,
            slot,
            last: vec![(0, 0); dirs.len()],
            last_tick: None,
            series: QueueSeries {
                interval_s: exact_secs(interval.as_nanos()),
                measure_start_s: None,
                measure_end_s: None,
                t_s: Vec::new(),
                directions: dirs
                    .into_iter()
                    .map(|(_, direction)| QueueSamples {
                        direction,
                        backlog_packets: Vec::new(),
                        backlog_bytes: Vec::new(),
                        sojourn_ms: Vec::new(),
                    })
                    .collect(),
            },
        }
    }

    /// The probe of `s`'s declared directions, when `test.series` asks for samples.
    pub fn of(s: &Scenario) -> Option<QueueProbe> {
        s.test.series.map(|interval| QueueProbe::new(interval, declared(s)))
    }

    pub fn into_series(self) -> QueueSeries {
        self.series
    }
}

impl<T: Transport> Probe<T> for QueueProbe {
    fn tick_interval(&self) -> Option<Duration> {
        Some(self.interval)
    }

    fn on_measure_start(&mut self, now: Instant) {
        self.series.measure_start_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_measure_stop(&mut self, now: Instant) {
        self.series.measure_end_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, T::Segment>) {
        // The ticks re-phase to the measurement's start, which may fall on a tick already taken.
        if self.last_tick.replace(now) == Some(now) {
            return;
        }
        self.series.t_s.push(exact_secs(now.as_nanos()));
        for v in links.iter() {
            let Some(&Some(k)) = self.slot.get(v.dir.index()) else { continue };
            let out = &mut self.series.directions[k];
            out.backlog_packets.push(v.backlog_packets as u64);
            out.backlog_bytes.push(v.backlog_bytes);
            out.sojourn_ms.push(match v.qdisc {
                None => Some(v.wait.as_nanos() as f64 / 1e6),
                Some(q) => {
                    let (n, sum) = std::mem::replace(&mut self.last[k], (q.dequeued, q.sojourn_sum_ns));
                    let dn = q.dequeued - n;
                    (dn > 0).then(|| (q.sojourn_sum_ns - sum) as f64 / dn as f64 / 1e6)
                }
            });
        }
    }
}
