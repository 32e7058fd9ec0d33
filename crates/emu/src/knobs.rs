//! From a `TcpConfig` to what Linux offers: per-namespace sysctls, options on the route to the peer, and
//! socket options. A knob Linux has a setting for is translated; a knob it has no setting for is accepted
//! only at the value the `linux` personality gives it (the project's statement of what the kernel does),
//! and refused with an error naming it otherwise. Knobs added to `TcpConfig` later are therefore refused
//! away from the `linux` value until someone maps them here.

use serde_json::Value;
use tcplab_tcp::config::AckPolicy;
use tcplab_tcp::{CongestionControlKind, EcnMode, InitialWindow, TcpConfig};
use tcplab_units::Duration;

use crate::error::EmuError;

/// The Linux settings of one endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinuxTcp {
    /// Written inside the endpoint's namespace.
    pub sysctls: Vec<(&'static str, String)>,
    /// Appended to `ip route add PEER/24 dev tcplab0` (`initcwnd 10`, `congctl cubic`, ...).
    pub route: Vec<(&'static str, String)>,
    /// Socket options on every socket of the endpoint.
    pub sockopts: SockOpts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SockOpts {
    /// TCP_CONGESTION (set with CAP_NET_ADMIN, so the global allowed list does not apply).
    pub congestion: &'static str,
    pub nodelay: bool,
    pub cork: bool,
    /// SO_SNDBUFFORCE / SO_RCVBUFFORCE values (the kernel doubles them for bookkeeping).
    pub sndbuf: u64,
    pub rcvbuf: u64,
    /// TCP_MAXSEG, when the MSS is below what the 1500-byte MTU gives.
    pub maxseg: Option<u32>,
}

/// Knobs translated here; every other knob must equal the `linux` personality's value.
const TRANSLATED: &[&str] = &[
    "mss",
    "send_buffer",
    "recv_buffer",
    "window_scaling",
    "timestamps",
    "sack",
    "nodelay",
    "cork",
    "initial_window",
    "congestion_control",
    "cubic",
    "dupthresh",
    "slow_start_after_idle",
    "rto_min",
    "rto_max",
    "ack_policy",
    "rack",
    "tlp",
    "comp_sack_nr",
    "comp_sack_delay",
    "comp_sack_slack",
    "ecn",
    "limit_output_bytes",
    "pacing_ss_ratio",
    "pacing_ca_ratio",
];

/// Whether the running kernel offers congestion control `name` (`tcp_available_congestion_control`).
fn kernel_offers(name: &str) -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .is_ok_and(|s| s.split_whitespace().any(|n| n == name))
}

/// The MTU of the TUN devices.
pub const MTU: u32 = 1500;

/// Translates one endpoint's knobs; `side` names it in errors. The first knob refused, if any
/// ([`linux_tcp_all`] gives every one).
pub fn linux_tcp(cfg: &TcpConfig, side: &'static str) -> Result<LinuxTcp, EmuError> {
    linux_tcp_all(cfg, side).map_err(|mut refused| refused.swap_remove(0))
}

/// The leaves of `mine` that differ from `theirs`, as dotted paths (`cubic.c`) with both values: a table
/// of knobs (`cubic`, `rto_params`) is compared field by field, so a refusal names the field.
fn differing(prefix: &str, mine: &Value, theirs: Option<&Value>, out: &mut Vec<(String, Value, Option<Value>)>) {
    match (mine, theirs) {
        (Value::Object(m), Some(Value::Object(t))) => {
            for (k, v) in m {
                differing(&format!("{prefix}.{k}"), v, t.get(k), out);
            }
        }
        (m, t) if Some(m) != t => out.push((prefix.to_string(), m.clone(), t.cloned())),
        _ => {}
    }
}

/// Translates one endpoint's knobs, or gives every knob Linux cannot honour (each an
/// [`EmuError::Knob`]), so that a caller can report them all at once.
pub fn linux_tcp_all(cfg: &TcpConfig, side: &'static str) -> Result<LinuxTcp, Vec<EmuError>> {
    let refuse = |knob: &str, value: String, reason: String| EmuError::Knob { side, knob: knob.into(), value, reason };
    cfg.validate().map_err(|e| vec![refuse("", String::new(), e)])?;
    let linux = TcpConfig::personality("linux").expect("the linux personality exists");
    let mut refused = Vec::new();

    // Knobs without a Linux setting: the kernel behaves as the linux personality says.
    let mine = serde_json::to_value(cfg).expect("TcpConfig serializes");
    let theirs = serde_json::to_value(&linux).expect("TcpConfig serializes");
    if let (Value::Object(mine), Value::Object(theirs)) = (&mine, &theirs) {
        for (knob, v) in mine {
            if TRANSLATED.contains(&knob.as_str()) {
                continue;
            }
            if knob == "ack_every" && cfg.ack_policy == AckPolicy::Every {
                continue; // quickack: every segment is acknowledged, whatever ack_every says
            }
            let mut diff = Vec::new();
            differing(knob, v, theirs.get(knob), &mut diff);
            for (path, v, t) in diff {
                refused.push(refuse(
                    &path,
                    v.to_string(),
                    format!(
                        "Linux has no setting for it; the kernel always behaves as {} (the linux personality's value)",
                        t.map(|t| t.to_string()).unwrap_or_default()
                    ),
                ));
            }
        }
    }

    let mut sysctls = vec![
        ("net.ipv4.tcp_ecn", ecn_sysctl(cfg.ecn).to_string()),
        ("net.ipv4.tcp_window_scaling", bit(cfg.window_scaling)),
        ("net.ipv4.tcp_timestamps", bit(cfg.timestamps)),
        ("net.ipv4.tcp_sack", bit(cfg.sack)),
        ("net.ipv4.tcp_slow_start_after_idle", bit(cfg.slow_start_after_idle)),
        ("net.ipv4.tcp_reordering", cfg.dupthresh.to_string()),
        ("net.ipv4.tcp_rto_min_us", cfg.rto_min.as_micros().to_string()),
        // RACK is bit 0 of tcp_recovery (RFC 8985 loss detection; without it Linux counts DupThresh).
        ("net.ipv4.tcp_recovery", bit(cfg.rack)),
        // tcp_early_retrans: 3 = tail loss probes (RFC 8985 §7) on, 0 = off.
        ("net.ipv4.tcp_early_retrans", if cfg.tlp { "3" } else { "0" }.to_string()),
        ("net.ipv4.tcp_comp_sack_nr", cfg.comp_sack_nr.to_string()),
        ("net.ipv4.tcp_comp_sack_delay_ns", cfg.comp_sack_delay.as_nanos().to_string()),
        ("net.ipv4.tcp_comp_sack_slack_ns", cfg.comp_sack_slack.as_nanos().to_string()),
        ("net.ipv4.tcp_pacing_ss_ratio", cfg.pacing_ss_ratio.to_string()),
        ("net.ipv4.tcp_pacing_ca_ratio", cfg.pacing_ca_ratio.to_string()),
    ];
    // TCP Small Queues cannot be turned off in Linux; 0 here means off, so only a size maps.
    let tsq = cfg.limit_output_bytes.bytes();
    if tsq == 0 || tsq > i32::MAX as u64 {
        refused.push(refuse(
            "limit_output_bytes",
            format!("\"{}\"", cfg.limit_output_bytes),
            "Linux's tcp_limit_output_bytes always applies: accepted 1B to 2GiB (linux: 4MiB)".into(),
        ));
    } else {
        sysctls.push(("net.ipv4.tcp_limit_output_bytes", tsq.to_string()));
    }
    if cfg.comp_sack_nr > 255 {
        refused.push(refuse("comp_sack_nr", cfg.comp_sack_nr.to_string(), "Linux accepts 0 to 255".into()));
    }
    // tcp_rto_max_ms accepts 1 s to 120 s (Linux 6.15+).
    let rto_max_ms = cfg.rto_max.as_millis();
    if !cfg.rto_max.as_nanos().is_multiple_of(1_000_000) || !(1000..=120_000).contains(&rto_max_ms) {
        refused.push(refuse(
            "rto_max",
            format!("\"{}\"", cfg.rto_max),
            "Linux's tcp_rto_max_ms takes whole milliseconds from 1s to 120s".into(),
        ));
    }
    sysctls.push(("net.ipv4.tcp_rto_max_ms", rto_max_ms.to_string()));
    if cfg.rto_min < Duration::from_micros(1) || cfg.rto_min > Duration::from_secs(120) {
        refused.push(refuse("rto_min", format!("\"{}\"", cfg.rto_min), "Linux accepts 1us to 120s".into()));
    }

    let mut route = Vec::new();
    let congestion = match cfg.congestion_control {
        CongestionControlKind::Cubic => {
            let mine = serde_json::to_value(cfg.cubic).expect("CUBIC's knobs serialize");
            let theirs = serde_json::to_value(linux.cubic).expect("CUBIC's knobs serialize");
            let mut diff = Vec::new();
            differing("cubic", &mine, Some(&theirs), &mut diff);
            for (path, v, t) in diff {
                refused.push(refuse(
                    &path,
                    v.to_string(),
                    format!(
                        "Linux's CUBIC parameters are module-wide (/sys/module/tcp_cubic/parameters), not per \
                         namespace; accepted: {}",
                        t.map(|t| t.to_string()).unwrap_or_default()
                    ),
                ));
            }
            "cubic"
        }
        // Linux "reno" is the AIMD window; its loss recovery (NewReno partial ACKs, or SACK) is the stack's.
        CongestionControlKind::NewReno => "reno",
        CongestionControlKind::Reno => {
            refused.push(refuse(
                "congestion_control",
                "\"reno\"".into(),
                "Linux recovery always handles partial ACKs as NewReno does (RFC 6582); accepted: \"newreno\", \
                 \"cubic\""
                    .into(),
            ));
            "reno"
        }
        CongestionControlKind::Bbr => {
            if !kernel_offers("bbr") {
                refused.push(refuse(
                    "congestion_control",
                    "\"bbr\"".into(),
                    "this kernel lists no bbr in /proc/sys/net/ipv4/tcp_available_congestion_control (load it: \
                     modprobe tcp_bbr); accepted: \"newreno\", \"cubic\""
                        .into(),
                ));
            }
            "bbr"
        }
    };
    route.push(("congctl", congestion.to_string()));

    let max_mss = MTU - 40;
    let mss = cfg.mss.bytes() as u32;
    if mss > max_mss {
        refused.push(refuse(
            "mss",
            format!("\"{}\"", cfg.mss),
            format!("the TUN devices' MTU is {MTU}: at most {max_mss}B"),
        ));
    }
    let maxseg = (mss < max_mss).then_some(mss);
    if let Some(m) = maxseg {
        route.push(("advmss", m.to_string()));
    }
    // The sender's SMSS: the MSS minus the timestamp option when timestamps are on (both ends must agree).
    let smss = mss.min(max_mss) - if cfg.timestamps { 12 } else { 0 };
    let iw_bytes = cfg.initial_window.bytes(smss);
    let iw_segments = match cfg.initial_window {
        InitialWindow::Segments(n) => n,
        // RFC 3390/6928 are written for segment-counting stacks: the window is the whole segments they allow.
        InitialWindow::Rfc3390 | InitialWindow::Rfc6928 => (iw_bytes / smss).max(1),
        InitialWindow::Bytes(b) if b % smss == 0 => b / smss,
        InitialWindow::Bytes(b) => {
            refused.push(refuse(
                "initial_window",
                format!("\"{b}B\""),
                format!(
                    "Linux counts the initial window in segments; use a multiple of the SMSS ({smss}B) or \"Nseg\""
                ),
            ));
            (b / smss).max(1)
        }
    };
    route.push(("initcwnd", iw_segments.to_string()));
    match cfg.ack_policy {
        AckPolicy::Linux => {}
        AckPolicy::Every => route.push(("quickack", "1".into())),
        other => refused.push(refuse(
            "ack_policy",
            serde_json::to_value(other).map_or_else(|_| format!("{other:?}"), |v| v.to_string()),
            "Linux's receiver is \"linux\" (quickack/pingpong, ATO 40–200 ms) or, with the quickack route \
             option, \"every\""
                .into(),
        )),
    }
    if !refused.is_empty() {
        return Err(refused);
    }

    Ok(LinuxTcp {
        sysctls,
        route,
        sockopts: SockOpts {
            congestion,
            nodelay: cfg.nodelay,
            cork: cfg.cork,
            sndbuf: cfg.send_buffer.bytes(),
            rcvbuf: cfg.recv_buffer.bytes(),
            maxseg,
        },
    })
}

fn bit(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

/// `net.ipv4.tcp_ecn` for the `ecn` knob (Documentation/networking/ip-sysctl.rst: 0 off, 1 request and
/// accept, 2 accept only).
fn ecn_sysctl(ecn: EcnMode) -> u8 {
    match ecn {
        EcnMode::Off => 0,
        EcnMode::On => 1,
        EcnMode::Accept => 2,
    }
}

/// Knob names the Linux backend honours (translated, or fixed at the linux personality's value), for
/// `tcplab explain`.
pub fn honoured_knobs() -> &'static [&'static str] {
    TRANSLATED
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_units::ByteSize;

    #[test]
    fn the_linux_personality_translates() {
        let cfg = TcpConfig::personality("linux").unwrap();
        let l = linux_tcp(&cfg, "client").unwrap();
        assert_eq!(l.sockopts.congestion, "cubic");
        assert!(l.route.contains(&("initcwnd", "10".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_rto_min_us", "200000".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_rto_max_ms", "120000".into())));
        assert_eq!(l.sockopts.maxseg, None);
        assert!(l.sysctls.contains(&("net.ipv4.tcp_recovery", "1".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_early_retrans", "3".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_comp_sack_nr", "44".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_comp_sack_delay_ns", "1000000".into())));
        assert!(l.sysctls.contains(&("net.ipv4.tcp_comp_sack_slack_ns", "100000".into())));
    }

    #[test]
    fn a_knob_linux_lacks_is_refused_by_name() {
        let cfg = TcpConfig { rto_initial: Duration::from_secs(3), ..TcpConfig::personality("linux").unwrap() };
        let e = linux_tcp(&cfg, "server").unwrap_err().to_string();
        assert!(e.contains("server.tcp.rto_initial") && e.contains("no setting"), "{e}");
        let cfg = TcpConfig::personality("bsd-4.4").unwrap();
        let e = linux_tcp(&cfg, "client").unwrap_err().to_string();
        assert!(e.contains("client.tcp."), "{e}");
    }

    #[test]
    fn every_knob_linux_lacks_is_refused_at_once_each_field_by_name() {
        let linux = TcpConfig::personality("linux").unwrap();
        let cfg = TcpConfig {
            rto_initial: Duration::from_secs(3),
            time_wait: Duration::from_secs(1),
            ack_policy: AckPolicy::Delayed,
            cubic: tcplab_tcp::congestion::CubicConfig { c: 0.5, ..linux.cubic },
            ..linux
        };
        let e: Vec<String> = linux_tcp_all(&cfg, "client").unwrap_err().iter().map(|e| e.to_string()).collect();
        for knob in ["rto_initial = \"3s\"", "time_wait = \"1s\"", "ack_policy = \"delayed\"", "cubic.c = 0.5"] {
            assert!(e.iter().any(|l| l.starts_with(&format!("client.tcp.{knob}: "))), "{knob}: {e:?}");
        }
        assert_eq!(e.len(), 4, "{e:?}");
    }

    #[test]
    fn translated_knobs() {
        let cfg = TcpConfig {
            mss: ByteSize::new(1000),
            initial_window: InitialWindow::Rfc3390,
            ack_policy: AckPolicy::Every,
            ..TcpConfig::personality("linux").unwrap()
        };
        let l = linux_tcp(&cfg, "client").unwrap();
        assert_eq!(l.sockopts.maxseg, Some(1000));
        assert!(l.route.contains(&("advmss", "1000".into())));
        // RFC 3390 with SMSS 988: min(4·988, max(2·988, 4380)) = 3952 bytes = 4 segments.
        assert!(l.route.contains(&("initcwnd", "4".into())));
        assert!(l.route.contains(&("quickack", "1".into())));
        let odd = TcpConfig { initial_window: InitialWindow::Bytes(5000), ..cfg };
        assert!(linux_tcp(&odd, "client").unwrap_err().to_string().contains("initial_window"));
    }
}
