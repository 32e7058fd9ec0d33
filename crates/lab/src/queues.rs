//! Link directions in the result: their names, and their queues over time (`links.queue_series`, with
//! `test.series`; docs/outputs.md § Queues over time). The engine hands a probe every direction's backlog
//! and counters at each tick ([`tcplab_sim::Probe::on_link_tick`]); a run without `test.series` has no
//! tick and no probe, so sampling costs nothing then.

use tcplab_sim::{DirId, Probe};
use tcplab_transport::Transport;
use tcplab_units::{Duration, Instant};

use crate::probes::exact_secs;
use crate::result::{DirectionCounters, LinkCounters};
use crate::scenario::Scenario;

pub use crate::result::{with_axis, QueueSamples, QueueSeries, SeriesAxis};

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
                axis: SeriesAxis::new(interval),
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
        self.series.axis.measure_start_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_measure_stop(&mut self, now: Instant) {
        self.series.axis.measure_end_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_link_tick(&mut self, now: Instant, links: tcplab_sim::Links<'_, T::Segment>) {
        self.push(
            now,
            links.iter().map(|v| {
                let q = v.qdisc.map(|q| (q.dequeued, q.sojourn_sum_ns));
                (
                    v.dir,
                    QueueReading {
                        backlog_packets: v.backlog_packets as u64,
                        backlog_bytes: v.backlog_bytes,
                        wait: v.wait,
                        qdisc: q,
                    },
                )
            }),
        );
    }
}

/// One direction's queue at a tick, as a backend reads it (the simulator's `LinkView`, the emulator's
/// `QueueTick`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueReading {
    pub backlog_packets: u64,
    pub backlog_bytes: u64,
    /// How long a packet arriving at the tick would wait for the serializer (the FIFO's sojourn).
    pub wait: Duration,
    /// On the generic path, the qdisc's dequeued count and sojourn sum (ns) so far.
    pub qdisc: Option<(u64, u128)>,
}

impl QueueProbe {
    /// The sample at tick `now`: every direction's reading (those not sampled are skipped).
    pub fn push(&mut self, now: Instant, readings: impl IntoIterator<Item = (DirId, QueueReading)>) {
        // The ticks re-phase to the measurement's start, which may fall on a tick already taken.
        if self.last_tick.replace(now) == Some(now) {
            return;
        }
        self.series.axis.t_s.push(exact_secs(now.as_nanos()));
        for (dir, v) in readings {
            let Some(&Some(k)) = self.slot.get(dir.index()) else { continue };
            let out = &mut self.series.directions[k];
            out.backlog_packets.push(v.backlog_packets);
            out.backlog_bytes.push(v.backlog_bytes);
            out.sojourn_ms.push(match v.qdisc {
                None => Some(v.wait.as_nanos() as f64 / 1e6),
                Some((dequeued, sojourn_sum_ns)) => {
                    let (n, sum) = std::mem::replace(&mut self.last[k], (dequeued, sojourn_sum_ns));
                    let dn = dequeued - n;
                    (dn > 0).then(|| (sojourn_sum_ns - sum) as f64 / dn as f64 / 1e6)
                }
            });
        }
    }

    /// The measurement window, when a backend knows it only at the end (the Linux backend).
    pub fn set_window(&mut self, start: Instant, end: Instant) {
        self.series.axis.measure_start_s = Some(exact_secs(start.as_nanos()));
        self.series.axis.measure_end_s = Some(exact_secs(end.as_nanos()));
    }
}

/// `links.queue_series` of a Linux run: the emulator's ticks of `up` and `down` (the two-host shape),
/// those both directions took at the same instants up to the end of the run (`end`, from the
/// applications' start; a thread may take one tick more before it stops).
pub fn from_emulator(
    interval: Duration,
    up: &[tcplab_emu::QueueTick],
    down: &[tcplab_emu::QueueTick],
    window: (Instant, Instant),
    end: Instant,
) -> QueueSeries {
    let dirs = vec![(DirId(0), "up".to_string()), (DirId(1), "down".to_string())];
    let mut p = QueueProbe::new(interval, dirs);
    p.set_window(window.0, window.1);
    let reading = |q: &tcplab_emu::QueueTick| QueueReading {
        backlog_packets: q.backlog_packets,
        backlog_bytes: q.backlog_bytes,
        wait: Duration::from_nanos(q.wait_ns),
        qdisc: q.qdisc,
    };
    for (u, d) in up.iter().zip(down).take_while(|(u, d)| u.t_ns == d.t_ns && u.t_ns <= end.as_nanos()) {
        p.push(Instant::from_nanos(u.t_ns), [(DirId(0), reading(u)), (DirId(1), reading(d))]);
    }
    p.into_series()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_emu::QueueTick;

    fn samples(direction: &str) -> QueueSamples {
        QueueSamples {
            direction: direction.into(),
            backlog_packets: vec![3],
            backlog_bytes: vec![4614],
            sojourn_ms: vec![None],
        }
    }

    /// The hand-written serde writes the fields a derive wrote, in its order, the absent window left out,
    /// and reads them back refusing any other field.
    #[test]
    fn a_series_axis_is_written_in_place_and_read_back_strictly() {
        let mut q = QueueSeries { axis: SeriesAxis::new(Duration::from_millis(100)), directions: vec![samples("up")] };
        q.axis.t_s = vec![0.1];
        let text = serde_json::to_string(&q).unwrap();
        assert_eq!(
            text,
            r#"{"interval_s":0.1,"t_s":[0.1],"directions":[{"direction":"up","backlog_packets":[3],"backlog_bytes":[4614],"sojourn_ms":[null]}]}"#
        );
        q.axis.measure_start_s = Some(0.05);
        q.axis.measure_end_s = Some(2.05);
        let text = serde_json::to_string(&q).unwrap();
        assert!(text.starts_with(r#"{"interval_s":0.1,"measure_start_s":0.05,"measure_end_s":2.05,"t_s":[0.1],"#));
        let back: QueueSeries = serde_json::from_str(&text).unwrap();
        assert_eq!(back.axis, q.axis);
        assert_eq!(back.directions[0].backlog_bytes, vec![4614]);
        let e = serde_json::from_str::<QueueSeries>(&text.replace("\"t_s\"", "\"t_ms\"")).unwrap_err().to_string();
        assert!(e.contains("unknown field `t_ms`") && e.contains("directions"), "{e}");
        let e = serde_json::from_str::<QueueSeries>(r#"{"interval_s":0.1,"t_s":[]}"#).unwrap_err().to_string();
        assert!(e.contains("missing field `directions`"), "{e}");
    }

    fn tick(t_ms: u64, backlog: u64, qdisc: Option<(u64, u128)>) -> QueueTick {
        QueueTick {
            t_ns: t_ms * 1_000_000,
            backlog_packets: backlog,
            backlog_bytes: backlog * 1538,
            wait_ns: 1_230_400,
            qdisc,
        }
    }

    /// The emulator's ticks become the simulator's schema: the ticks both directions took, up to the end of
    /// the run; the FIFO's sojourn is the wait at the tick, a qdisc's the mean over the packets dequeued
    /// since the previous tick.
    #[test]
    fn the_emulators_ticks_make_the_same_series_as_the_simulators() {
        let up = [tick(100, 2, None), tick(200, 5, None), tick(300, 1, None), tick(400, 0, None)];
        let down =
            [tick(100, 0, Some((0, 0))), tick(200, 1, Some((10, 50_000_000))), tick(300, 0, Some((10, 50_000_000)))];
        let ms = Instant::from_nanos;
        let q = from_emulator(Duration::from_millis(100), &up, &down, (ms(50), ms(250)), ms(1_000_000_000));
        assert_eq!(q.axis.t_s, vec![0.1, 0.2, 0.3]);
        assert_eq!((q.axis.measure_start_s, q.axis.measure_end_s), (Some(5e-8), Some(2.5e-7)));
        let (u, d) = (&q.directions[0], &q.directions[1]);
        assert_eq!((u.direction.as_str(), d.direction.as_str()), ("up", "down"));
        assert_eq!(u.backlog_packets, vec![2, 5, 1]);
        assert_eq!(u.backlog_bytes, vec![2 * 1538, 5 * 1538, 1538]);
        assert_eq!(u.sojourn_ms, vec![Some(1.2304); 3]);
        assert_eq!(d.sojourn_ms, vec![None, Some(5.0), None]);
        // A tick after the end of the run is left out.
        let q = from_emulator(Duration::from_millis(100), &up, &up, (ms(0), ms(0)), ms(250_000_000));
        assert_eq!(q.axis.t_s, vec![0.1, 0.2]);
    }
}
