//! The column names of the series tables a result document holds. They sit here, below the result types
//! and the backends, so that the document's reader (`result`), the validation (`scenario`) and the budget
//! name them without naming the backends that fill the tables (docs/architecture.md § Inside the lab); so
//! do the variables a series may sample and their units. A leaf: it names no other lab module.

/// The columns of a TCP run's `series` (each transport declares its own, `TransportConfig::SERIES_COLUMNS`): time, then the sender's gauges in RFC 4898 names and units.
pub const SERIES_COLUMNS: [&str; 7] =
    ["t_s", "CurCwnd", "CurSsthresh", "PipeSize", "SmoothedRTT", "ThruOctetsAcked", "SegsRetrans"];

/// The columns of `rtt_samples`: every RTT measurement of the sender, taken or discarded (a transport's
/// runs with `test.series` whose sender keeps its measurements, `BudgetShape::rtt_samples`).
pub const RTT_SAMPLE_COLUMNS: [&str; 5] = ["t_s", "rtt_ms", "taken", "SmoothedRTT", "CurRTO"];

/// The names `test.series.vars` accepts: every numeric RFC 4898 variable tcplab keeps, as in `estats`.
pub fn estats_vars() -> Vec<String> {
    let mut e = tcplab_tcp::Estats::default();
    // An optional gauge is absent from the JSON until it has a value.
    e.CurSsthresh = Some(0);
    // So are pacing's, TSQ's and BBR's, on connections without them.
    e.paced = Some(Box::new(tcplab_tcp::estats::PacedEstats::all()));
    match serde_json::to_value(e) {
        Ok(serde_json::Value::Object(m)) => {
            m.into_iter().filter(|(_, v)| v.is_number() || v.is_null()).map(|(k, _)| k).collect()
        }
        _ => Vec::new(),
    }
}

/// The unit of a sampled variable (an RFC 4898 name of `estats`, or a `logvars` column): `"bytes"`, `"ms"`,
/// `"bit/s"` or `"count"`. One `[[plot]]` of series draws variables of one unit.
pub fn series_unit(var: &str) -> &'static str {
    let bytes = ["Octets", "Cwnd", "Ssthresh", "MSS", "PipeSize", "Rwin"];
    if var == "throughput_bps" {
        "bit/s"
    } else if var == "delivered_bytes" {
        "bytes"
    } else if var == "CountRTT" || var.starts_with("ZeroRwin") || var.starts_with("Hystart") && !var.ends_with("Cwnd") {
        "count"
    } else if var.contains("RTT") || var.contains("RTO") || var.starts_with("SndLimTime") {
        "ms"
    } else if bytes.iter().any(|b| var.contains(b)) {
        "bytes"
    } else {
        "count"
    }
}
