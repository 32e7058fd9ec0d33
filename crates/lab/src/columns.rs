//! The column names of the series tables a result document holds. They sit here, below the result types
//! and the backends, so that the document's reader (`result`), the validation (`scenario`) and the budget
//! name them without naming the backends that fill the tables (docs/architecture.md § Inside the lab).

/// The columns of a TCP run's `series`: time, then the sender's gauges in RFC 4898 names and units.
pub const SERIES_COLUMNS: [&str; 7] =
    ["t_s", "CurCwnd", "CurSsthresh", "PipeSize", "SmoothedRTT", "ThruOctetsAcked", "SegsRetrans"];

/// The columns of an RDP run's `series`: time, then the sender's RFC 4898-style variables (docs/results.md).
pub const RDP_SERIES_COLUMNS: [&str; 8] =
    ["t_s", "SmoothedRTT", "CurRTO", "RttSamples", "RttSamplesDiscarded", "SegsRetrans", "DataSegsOut", "Timeouts"];

/// The columns of `rtt_samples`: every RTT measurement of the sender, taken or discarded.
pub const RTT_SAMPLE_COLUMNS: [&str; 5] = ["t_s", "rtt_ms", "taken", "SmoothedRTT", "CurRTO"];
