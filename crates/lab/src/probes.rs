//! The lab's probes: per-interval samples of RFC 4898 variables of every connection end (web100's
//! "logvars"), with the bytes delivered to each end's application per interval.

use tcplab_sim::{Endpoints, Probe, CLIENT};
use tcplab_tcp::{Connection, Estats};
use tcplab_transport::Transport;
use tcplab_units::{Duration, Instant};

pub use crate::columns::estats_vars;
pub use crate::result::{exact_secs, EndSeries, LogVars};

/// Samples `vars` of every connection end on every tick.
pub struct LogVarsProbe {
    interval: Duration,
    vars: Vec<String>,
    /// The previous sample's instant (the start of the run before the first).
    last_tick: Instant,
    pub logvars: LogVars,
}

impl LogVarsProbe {
    pub fn new(interval: Duration, vars: Vec<String>) -> LogVarsProbe {
        let mut columns = vec!["t_s".to_string()];
        columns.extend(vars.iter().cloned());
        columns.extend(["delivered_bytes".to_string(), "throughput_bps".to_string()]);
        LogVarsProbe {
            interval,
            vars,
            last_tick: Instant::ZERO,
            logvars: LogVars {
                interval_s: exact_secs(interval.as_nanos()),
                measure_start_s: None,
                measure_end_s: None,
                columns,
                ends: Vec::new(),
            },
        }
    }
}

/// Bytes the end's application has read: what arrived in order, less what still waits to be read.
pub fn delivered_to_app(conn: &Connection, e: &Estats) -> u64 {
    e.ThruOctetsReceived.saturating_sub(Transport::readable(conn))
}

impl Probe<Connection> for LogVarsProbe {
    fn tick_interval(&self) -> Option<Duration> {
        Some(self.interval)
    }

    fn on_measure_start(&mut self, now: Instant) {
        self.logvars.measure_start_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_measure_stop(&mut self, now: Instant) {
        self.logvars.measure_end_s = Some(exact_secs(now.as_nanos()));
    }

    fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, Connection>) {
        // The interval this sample closes: the tick interval, except the one that ends where the
        // measurement starts (ticks are re-phased to the window there).
        let span = now.saturating_since(self.last_tick);
        if span.is_zero() {
            return;
        }
        self.last_tick = now;
        for ep in endpoints.iter() {
            let i = ep.id as usize;
            if i >= self.logvars.ends.len() {
                self.logvars.ends.push(EndSeries {
                    id: ep.id,
                    side: if ep.host == CLIENT { "client" } else { "server" },
                    local_port: ep.local_port,
                    remote_port: ep.remote_port,
                    rows: Vec::new(),
                    delivered: 0,
                });
            }
            let e = ep.conn.estats_at(now);
            let values = serde_json::to_value(&e).expect("statistics serialize");
            let end = &mut self.logvars.ends[i];
            let mut row = Vec::with_capacity(self.vars.len() + 3);
            row.push(exact_secs(now.as_nanos()));
            for v in &self.vars {
                row.push(values.get(v).and_then(|x| x.as_f64()).unwrap_or(f64::NAN));
            }
            let delivered = delivered_to_app(ep.conn, &e);
            let step = delivered.saturating_sub(end.delivered);
            end.delivered = delivered;
            row.push(step as f64);
            row.push(step as f64 * 8.0 / exact_secs(span.as_nanos()));
            end.rows.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{load, Source};
    use tcplab_workload::Report;

    const BULK: &str = "name = \"bulk\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
        loss = { model = \"bernoulli\", p = 0.01 }\n[test]\nkind = \"tcp_stream\"\nduration = \"2s\"\n\
        parallel = 3\nseries = { interval = \"10ms\", vars = [\"CurCwnd\", \"CurSsthresh\", \"SmoothedRTT\"] }\n";

    /// The lab's probe, and beside it the senders' cwnd read straight from the connections.
    struct Direct {
        inner: LogVarsProbe,
        cwnd: Vec<(u64, u32, u32)>,
    }

    impl Probe<Connection> for Direct {
        fn tick_interval(&self) -> Option<Duration> {
            self.inner.tick_interval()
        }
        fn on_tick(&mut self, now: Instant, endpoints: Endpoints<'_, Connection>) {
            for ep in endpoints.iter() {
                self.cwnd.push((now.as_nanos(), ep.id, ep.conn.cwnd()));
            }
            self.inner.on_tick(now, endpoints);
        }
    }

    #[test]
    fn every_end_is_sampled_and_cwnd_samples_are_the_connections_cwnd() {
        let s = load(&Source { name: "bulk.toml", text: BULK }, &[]).unwrap();
        let spec = crate::sim_backend::sim_spec(&s);
        let mut p = Direct {
            inner: LogVarsProbe::new(s.test.series.unwrap(), s.test.series_vars.clone().unwrap()),
            cwnd: vec![],
        };
        let r = tcplab_sim::run_with::<Connection, _>(&spec, 1, &mut p).unwrap();
        let lv = &p.inner.logvars;
        assert_eq!(lv.ends.len(), 6);
        assert_eq!(lv.ends.len(), r.endpoints.len());
        assert_eq!(lv.ends.iter().filter(|e| e.side == "client").count(), 3);
        let col = lv.columns.iter().position(|c| c == "CurCwnd").unwrap();
        let mut checked = 0;
        for (t, id, cwnd) in &p.cwnd {
            let end = &lv.ends[*id as usize];
            let row = end.rows.iter().find(|r| (r[0] * 1e9).round() as u64 == *t).unwrap();
            assert_eq!(row[col], *cwnd as f64, "end {id} at {t} ns");
            checked += 1;
        }
        assert!(checked > 6 * 100);
    }

    #[test]
    fn per_interval_delivered_bytes_sum_to_what_the_receiving_application_read() {
        let s = load(&Source { name: "bulk.toml", text: BULK }, &[]).unwrap();
        let run = crate::sim_backend::run_with(&s, 1, None).unwrap();
        let lv = run.logvars.unwrap();
        let col = lv.columns.iter().position(|c| c == "delivered_bytes").unwrap();
        let tput = lv.columns.iter().position(|c| c == "throughput_bps").unwrap();
        let read: u64 = run
            .apps
            .iter()
            .filter_map(|(side, r)| match r {
                Report::Stream(s) if *side == "server" => Some(s.total_bytes),
                _ => None,
            })
            .sum();
        assert!(read > 1_000_000);
        let sampled: f64 =
            lv.ends.iter().filter(|e| e.side == "server").flat_map(|e| e.rows.iter().map(|r| r[col])).sum();
        assert_eq!(sampled as u64, read);
        // The senders read nothing.
        assert!(lv.ends.iter().filter(|e| e.side == "client").all(|e| e.rows.iter().all(|r| r[col] == 0.0)));
        // Throughput is over the interval the sample closes: 10 ms, but for the sample at the start of the
        // measurement, which closes the part of an interval since the tick before it.
        let ticks: Vec<f64> = lv.ends[0].rows.iter().map(|r| r[0]).collect();
        for e in &lv.ends {
            for r in &e.rows {
                let i = ticks.iter().position(|&t| t == r[0]).unwrap();
                let prev = if i == 0 { 0.0 } else { ticks[i - 1] };
                let span = ((r[0] - prev) * 1e9).round() / 1e9;
                assert_eq!(r[tput], r[col] * 8.0 / span, "end {} at {}", e.id, r[0]);
            }
        }
    }

    #[test]
    fn ticks_fall_on_clock_edges_of_the_measurement_window_and_print_as_exact_decimals() {
        let s = load(
            &Source { name: "bulk.toml", text: BULK },
            &["test.series={interval=\"100ms\",vars=[\"CurCwnd\"]}".into()],
        )
        .unwrap();
        let run = crate::sim_backend::run_with(&s, 1, None).unwrap();
        let lv = run.logvars.unwrap();
        let start = lv.measure_start_s.unwrap();
        let end = lv.measure_end_s.unwrap();
        // The handshake takes a round trip (40 ms plus serializations): the window opens off the 100 ms grid.
        let start_ns = (start * 1e9).round() as u64;
        assert!(!start_ns.is_multiple_of(100_000_000) && start > 0.04 && start < 0.1, "{start}");
        assert_eq!(((end - start) * 1e9).round() as u64, 2_000_000_000);
        let t: Vec<u64> = lv.ends[0].rows.iter().map(|r| (r[0] * 1e9).round() as u64).collect();
        // Before the window: none (it opens before the first tick at 100 ms); from it: start + k·100 ms, the
        // first at the start itself, with no gap and no repeat.
        assert_eq!(t[0], start_ns);
        for (k, &x) in t.iter().enumerate() {
            assert_eq!(x, start_ns + k as u64 * 100_000_000, "sample {k}");
        }
        assert!(t.len() > 20);
        // Every time is the exact decimal of its nanoseconds: it prints with at most 9 decimals.
        let json = serde_json::to_string(&lv).unwrap();
        for r in &lv.ends[0].rows {
            let text = serde_json::to_string(&r[0]).unwrap();
            assert!(text.split('.').nth(1).is_none_or(|d| d.len() <= 9), "{text}");
        }
        assert!(json.contains("\"interval_s\":0.1,"), "{}", &json[..80]);
    }
}
