//! What the plots and the HTML report call things: a metric (`points[].metrics` key, or `client.VAR`), a
//! swept scenario key, a parameter value, each in words with its unit once ("mean latency (ms)", "first
//! burst (transactions)", "client TCP_NODELAY = off"). One table, so that an axis, a legend and a column
//! header of the same quantity read the same.
//!
//! The unit a metric is *held* in comes from the lab ([`tcplab_lab::published::metric_unit`]); this module
//! only chooses the unit it is *shown* in, from the magnitude of the values (µs below 10 ms, else ms).

use serde_json::Value;

/// A quantity as shown: its name in words, the unit it is drawn in (empty for a plain count) and the
/// factor from the unit the result holds it in.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub name: String,
    pub unit: &'static str,
    pub scale: f64,
}

impl Shown {
    /// The axis label or column header: "mean latency (ms)"; a count is its own unit ("retransmissions").
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }
}

/// The metrics of `points[].metrics` in words (docs/results.md § Metrics). A family with statistics
/// (`latency_us.p99`) is named with the statistic in front ([`STATISTICS`]); one with sides
/// (`cpu_util_percent.local`) with the side after it ([`SIDES`]).
const METRICS: &[(&str, &str)] = &[
    ("throughput_bps", "throughput"),
    ("transactions_per_s", "transaction rate"),
    ("messages_per_s", "message rate"),
    ("transactions", "transactions"),
    ("messages", "messages"),
    ("messages_delivered", "messages delivered"),
    ("delivered_bytes", "payload delivered"),
    ("retransmissions", "retransmissions"),
    ("duplicates_received", "duplicates received"),
    ("data_drops", "data segments dropped"),
    ("timeouts", "retransmission timeouts"),
    ("elapsed_s", "measurement length"),
    ("connections_opened", "connections opened"),
    ("port_waits", "waits for a free port"),
    ("latency_us", "latency"),
    ("time_per_message_us", "time per message"),
    ("cpu_util_percent", "CPU utilization"),
    ("service_demand_us_per_kb", "service demand"),
    ("service_demand_us_per_tr", "service demand"),
];

/// The statistics of a latency family, as words before its name.
const STATISTICS: &[(&str, &str)] = &[
    ("mean", "mean"),
    ("stddev", "standard deviation of"),
    ("min", "minimum"),
    ("p50", "median"),
    ("p90", "90th percentile"),
    ("p99", "99th percentile"),
    ("p99_9", "99.9th percentile"),
    ("max", "maximum"),
];

/// netperf's sides of the CPU figures: `local` is the client (netperf), `remote` the server (netserver).
const SIDES: &[(&str, &str)] = &[("local", "client"), ("remote", "server")];

/// What the rate metrics count, for their unit ("transactions/s" rather than "1/s").
const RATES: &[(&str, &str)] = &[("transactions_per_s", "transactions/s"), ("messages_per_s", "messages/s")];

/// Swept scenario keys in words, by their last component (the knob's own name where it is a system's
/// name, `txqueuelen`, `deferred_ack_max`), with the unit of a numeric value. Keys not here are shown by
/// their last component.
const KEYS: &[(&str, &str, &str)] = &[
    ("burst", "first burst", "transactions"),
    ("nodelay", "TCP_NODELAY", ""),
    ("txqueuelen", "txqueuelen", "packets"),
    ("deferred_ack_max", "deferred_ack_max", "segments"),
    ("ack_immediate_p", "immediate-ACK probability", ""),
    ("eack", "EACKs sent", ""),
    ("eack_honour", "EACKs honoured", ""),
    ("rtt_sampling", "RTT sampling", ""),
    ("stack", "stack", ""),
    ("recv_buffer", "receive buffer", ""),
    ("send_buffer", "send buffer", ""),
    ("parallel", "connections", ""),
    ("request", "request size", ""),
    ("response", "response size", ""),
    ("message", "message size", ""),
    ("seed", "seed", ""),
    // A loss model's probability (`path.up.loss.p`, bbr-loss's axis): "up p" said nothing.
    ("p", "loss probability", ""),
];

/// How a metric of the result is shown, given the largest value any point has of it (in the held unit),
/// which picks the unit: bit/s in kbit/s, Mbit/s or Gbit/s; µs in ms from 10 ms and in s from 10 s;
/// bytes in KiB from 10 KiB and MiB from 10 MiB.
pub fn metric(metric: &str, largest: f64) -> Shown {
    let held = tcplab_lab::published::metric_unit(metric);
    let (unit, scale) = display_unit(held, largest);
    let unit = RATES.iter().find(|(k, _)| *k == metric).map_or(unit, |(_, u)| u);
    Shown { name: metric_name(metric), unit, scale }
}

/// A sampled RFC 4898 variable (a `series`/`logvars` column) as shown: its unit ([`tcplab_lab::scenario::
/// series_unit`]) chosen as [`metric`]'s is.
pub fn variable(var: &str, largest: f64) -> Shown {
    let (unit, scale) = display_unit(tcplab_lab::scenario::series_unit(var), largest);
    Shown { name: var.to_string(), unit, scale }
}

/// The unit a value held in `held` is shown in, and the factor to it.
fn display_unit(held: &str, largest: f64) -> (&'static str, f64) {
    let l = largest.abs();
    match held {
        "bit/s" if l >= 1e9 => ("Gbit/s", 1e-9),
        "bit/s" if l >= 1e6 => ("Mbit/s", 1e-6),
        "bit/s" if l >= 1e3 => ("kbit/s", 1e-3),
        "bit/s" => ("bit/s", 1.0),
        "us" if l >= 1e7 => ("s", 1e-6),
        "us" if l >= 1e4 => ("ms", 1e-3),
        "us" => ("\u{b5}s", 1.0),
        "ms" if l >= 1e4 => ("s", 1e-3),
        "ms" => ("ms", 1.0),
        "s" => ("s", 1.0),
        "%" => ("%", 1.0),
        "us/KB" => ("\u{b5}s/KB", 1.0),
        "us/transaction" => ("\u{b5}s/transaction", 1.0),
        "bytes" if l >= 10.0 * 1024.0 * 1024.0 => ("MiB", 1.0 / (1024.0 * 1024.0)),
        "bytes" if l >= 10.0 * 1024.0 => ("KiB", 1.0 / 1024.0),
        "bytes" => ("bytes", 1.0),
        "1/s" => ("1/s", 1.0),
        _ => ("", 1.0),
    }
}

/// A metric's name in words: "99th percentile latency", "service demand at the client", "mean CurCwnd
/// at the client"; a metric not in the table by its key with `_` as spaces.
pub fn metric_name(metric: &str) -> String {
    if let Some(m) = metric.strip_prefix(tcplab_lab::published::BETWEEN_ITERATIONS) {
        return format!("standard deviation between iterations of the {}", metric_name(m));
    }
    if let Some((side, var)) = metric.split_once('.').filter(|(s, _)| *s == "client" || *s == "server") {
        return match var.rsplit_once('.') {
            Some((var, "mean")) => format!("mean {var} at the {side}"),
            Some((var, "stddev")) => format!("standard deviation of {var} at the {side}"),
            _ => format!("{var} at the {side}"),
        };
    }
    let (family, rest) = metric.split_once('.').map_or((metric, None), |(f, r)| (f, Some(r)));
    let Some((_, name)) = METRICS.iter().find(|(k, _)| *k == family) else {
        return metric.replace(['_', '.'], " ");
    };
    match rest {
        None => name.to_string(),
        Some(r) => {
            if let Some((_, stat)) = STATISTICS.iter().find(|(k, _)| *k == r) {
                format!("{stat} {name}")
            } else if let Some((_, side)) = SIDES.iter().find(|(k, _)| *k == r) {
                format!("{name} at the {side}")
            } else {
                format!("{name} {}", r.replace('_', " "))
            }
        }
    }
}

/// A swept key in words: `client.host.txqueuelen` → "client txqueuelen", `test.burst` → "first burst",
/// `path.up.rate` → "up rate".
pub fn key_name(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    let last = parts.last().copied().unwrap_or(key);
    let knob =
        KEYS.iter().find(|(k, _, _)| *k == last).map_or_else(|| last.replace('_', " "), |(_, n, _)| n.to_string());
    match parts.first() {
        Some(&side @ ("client" | "server")) if parts.len() > 1 => format!("{side} {knob}"),
        Some(&"path") if parts.len() > 2 => format!("{} {knob}", parts[1]),
        // A dumbbell's link ("bottleneck queue", not a bare "queue" that could be any link's).
        Some(&"dumbbell") if parts.len() > 2 => format!("{} {knob}", parts[1..parts.len() - 1].join(" ")),
        _ => match item_of(key) {
            // An item of [[flow]], [[link]] or [[host]]: "flow 1 access delay", "link 1 forward rate".
            Some((item, middle)) => {
                let middle: Vec<&str> = middle.into_iter().filter(|m| !matches!(*m, "tcp" | "host")).collect();
                [item, middle.join(" "), knob].into_iter().filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
            }
            None => knob,
        },
    }
}

/// `flow[1].tcp.x` or `flow.1.tcp.x`: ("flow 1", the words between the index and the key).
fn item_of(key: &str) -> Option<(String, Vec<&str>)> {
    let (head, rest) = key.split_once(['[', '.'])?;
    if !matches!(head, "flow" | "link" | "host") {
        return None;
    }
    let (index, rest) = rest.split_once(['.', ']'])?;
    index.parse::<u32>().ok()?;
    let words: Vec<&str> = rest.trim_start_matches('.').split('.').collect();
    let middle = words[..words.len().saturating_sub(1)].to_vec();
    Some((format!("{head} {index}"), middle))
}

/// A swept key as an axis label: its name and, for a numeric key with one, its unit once.
pub fn key_label(key: &str) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    match KEYS.iter().find(|(k, _, _)| *k == last) {
        Some((_, _, unit)) if !unit.is_empty() => format!("{} ({unit})", key_name(key)),
        _ => key_name(key),
    }
}

/// A parameter's value as text: booleans as on/off, strings as written, numbers as JSON writes them.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Bool(true) => "on".into(),
        Value::Bool(false) => "off".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A point's swept values in words: "first burst = 3, client TCP_NODELAY = off".
pub fn params_text(params: &Value) -> String {
    params
        .as_object()
        .map(|m| m.iter().map(|(k, v)| format!("{} = {}", key_name(k), value_text(v))).collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_read_as_words_with_the_unit_once() {
        assert_eq!(metric("latency_us.mean", 20_000.0).label(), "mean latency (ms)");
        assert_eq!(metric("latency_us.p99", 900.0).label(), "99th percentile latency (\u{b5}s)");
        assert_eq!(metric("time_per_message_us.max", 2e7).label(), "maximum time per message (s)");
        assert_eq!(
            metric("iteration_stddev.time_per_message_us.mean", 0.5).label(),
            "standard deviation between iterations of the mean time per message (\u{b5}s)"
        );
        assert_eq!(metric("transactions_per_s", 5.0).label(), "transaction rate (transactions/s)");
        assert_eq!(metric("throughput_bps", 941e6).label(), "throughput (Mbit/s)");
        assert_eq!(metric("throughput_bps", 1200.0).label(), "throughput (kbit/s)");
        assert_eq!(
            metric("service_demand_us_per_tr.local", 1.0).label(),
            "service demand at the client (\u{b5}s/transaction)"
        );
        assert_eq!(metric("cpu_util_percent.remote", 1.0).label(), "CPU utilization at the server (%)");
        assert_eq!(metric("retransmissions", 9.0).label(), "retransmissions");
        assert_eq!(metric("client.SendStall", 9.0).label(), "SendStall at the client");
        assert_eq!(metric("client.CurCwnd.mean", 2e6).label(), "mean CurCwnd at the client (KiB)");
        assert_eq!(metric("client.MaxSmoothedRTT", 2400.0).label(), "MaxSmoothedRTT at the client (ms)");
        assert_eq!(metric("delivered_bytes", 5e7).label(), "payload delivered (MiB)");
        assert_eq!(metric("made_up.thing", 1.0).name, "made up thing");
    }

    #[test]
    fn keys_and_values_read_as_words() {
        assert_eq!(key_label("test.burst"), "first burst (transactions)");
        assert_eq!(key_label("client.host.txqueuelen"), "client txqueuelen (packets)");
        assert_eq!(key_name("server.tcp.ack_immediate_p"), "server immediate-ACK probability");
        assert_eq!(key_name("path.up.rate"), "up rate");
        // The axis of bbr-vs-cubic's shares plot: the bottleneck's queue, not any queue.
        assert_eq!(key_label("dumbbell.bottleneck.queue"), "bottleneck queue");
        assert_eq!(key_name("dumbbell.bottleneck.qdisc.kind"), "bottleneck qdisc kind");
        assert_eq!(key_name("flow[1].access_delay"), "flow 1 access delay");
        assert_eq!(key_name("flow.1.tcp.congestion_control"), key_name("flow[1].tcp.congestion_control"));
        assert_eq!(key_name("link[1].forward.rate"), "link 1 forward rate");
        assert_eq!(key_label("path.up.loss.p"), "up loss probability");
        assert_eq!(key_name("client.rdp.rtt_sampling"), "client RTT sampling");
        assert_eq!(value_text(&Value::Bool(false)), "off");
        let p = serde_json::json!({"test.burst": 3, "client.tcp.nodelay": true});
        assert_eq!(params_text(&p), "first burst = 3, client TCP_NODELAY = on");
    }
}
