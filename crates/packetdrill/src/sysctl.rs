//! The script's set-up commands mapped to tcplab knobs. packetdrill scripts configure the kernel with
//! backquoted shell lines (`defaults.sh`, `sysctl -q k=v`, `set_sysctls.py /proc/sys/...=v`, `ethtool`,
//! `tc`); the simulator has no shell, so each recognised command is translated through [`SYSCTLS`], and
//! anything else makes the script a skip naming the command. docs/packetdrill.md prints the table.

use tcplab_tcp::config::Pacing;
use tcplab_tcp::{CongestionControlKind, EcnMode, TcpConfig};
use tcplab_units::ByteSize;

/// How one sysctl maps onto the simulated stack.
pub struct Sysctl {
    /// The name under `net.ipv4.`.
    pub name: &'static str,
    /// What the value sets, for the documentation.
    pub effect: &'static str,
    /// Applies a value to the stack's settings; `Err` names why the value is not supported.
    pub apply: fn(&str, &mut Settings) -> Result<(), String>,
}

/// The stack's settings a script may change before its sockets exist: the TCP knobs, plus the
/// window-scale space (Linux chooses the scale from `tcp_rmem[2]`).
#[derive(Debug, Clone)]
pub struct Settings {
    pub tcp: TcpConfig,
}

fn int(v: &str) -> Result<i64, String> {
    let v = v.trim().trim_matches('"');
    let parsed = if let Some(h) = v.strip_prefix("0x") { i64::from_str_radix(h, 16).ok() } else { v.parse().ok() };
    parsed.ok_or_else(|| format!("`{v}` is not an integer"))
}

/// An integer within `lo..=hi`, else an error giving the accepted range.
fn int_in(v: &str, lo: i64, hi: i64) -> Result<i64, String> {
    let n = int(v)?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(format!("value {n}: accepted {lo} to {hi}"))
    }
}

fn bool01(v: &str) -> Result<bool, String> {
    match int(v)? {
        0 => Ok(false),
        1 => Ok(true),
        n => Err(format!("value {n}: accepted 0 or 1")),
    }
}

/// `"min default max"`, bytes.
fn triple(v: &str) -> Result<[u64; 3], String> {
    let parts: Vec<&str> = v.trim().trim_matches('"').split_whitespace().collect();
    let nums: Result<Vec<u64>, _> = parts.iter().map(|p| p.parse::<u64>()).collect();
    match nums {
        Ok(n) if n.len() == 3 => Ok([n[0], n[1], n[2]]),
        _ => Err(format!("`{v}`: expected three byte counts \"min default max\"")),
    }
}

/// Only `want` is modelled (the simulated stack's fixed behaviour).
fn only(v: &str, want: i64, what: &str) -> Result<(), String> {
    let n = int(v)?;
    if n == want {
        Ok(())
    } else {
        Err(format!("value {n}: only {want} is modelled ({what})"))
    }
}

/// Every sysctl the interpreter understands, in the order docs/packetdrill.md lists them.
pub const SYSCTLS: &[Sysctl] = &[
    Sysctl {
        name: "tcp_rmem",
        effect: "`recv_buffer` = half the default (middle) value: Linux's `tcp_init_sock` takes `sk_rcvbuf` = \
                 `tcp_rmem[1]` as it is, where SO_RCVBUF sets twice its value (`sk_setsockopt`), and \
                 `recv_buffer` counts in SO_RCVBUF's units (the `linux` personality's `recv_window_ratio` \
                 applies the doubling), so the SYN-ACK offers 64240 for 131072 as Linux's \
                 `tcp_select_initial_window` does; the window scale is chosen for the max (third) value, as \
                 `tcp_select_initial_window` does too (`wscale_space`)",
        apply: |v, s| {
            let [_, def, max] = triple(v)?;
            s.tcp.recv_buffer = ByteSize::new(rmem_to_recv_buffer(def).clamp(s.tcp.mss.bytes(), 1 << 30));
            s.tcp.wscale_space = ByteSize::new(max);
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_wmem",
        effect: "`send_buffer` = the default (middle) value",
        apply: |v, s| {
            let [_, def, _] = triple(v)?;
            s.tcp.send_buffer = ByteSize::new(def.max(1));
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_timestamps",
        effect: "`timestamps` (0 or 1)",
        apply: |v, s| {
            s.tcp.timestamps = bool01(v)?;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_sack",
        effect: "`sack` (0 or 1)",
        apply: |v, s| {
            s.tcp.sack = bool01(v)?;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_dsack",
        effect: "1 only: the stack always reports D-SACK",
        apply: |v, _| only(v, 1, "D-SACK on"),
    },
    Sysctl {
        name: "tcp_fack",
        effect: "accepted, no effect: FACK left Linux in 4.15 and the value has been ignored since",
        apply: |v, _| int(v).map(|_| ()),
    },
    Sysctl {
        name: "tcp_reordering",
        effect: "`dupthresh`",
        apply: |v, s| {
            let n = int_in(v, 1, 300)?;
            s.tcp.dupthresh = n as u32;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_congestion_control",
        effect: "`congestion_control`: `cubic` or `reno` (Linux's reno is NewReno with SACK)",
        apply: |v, s| {
            s.tcp.congestion_control = match v.trim() {
                "cubic" => CongestionControlKind::Cubic,
                "reno" => CongestionControlKind::NewReno,
                other => return Err(format!("`{other}`: accepted cubic or reno")),
            };
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_slow_start_after_idle",
        effect: "`slow_start_after_idle` (0 or 1)",
        apply: |v, s| {
            s.tcp.slow_start_after_idle = bool01(v)?;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_early_retrans",
        effect:
            "`tlp`: 3 or 4 turn the tail loss probe on, 0 off (1 and 2, the old early retransmit, are not modelled)",
        apply: |v, s| {
            s.tcp.tlp = match int(v)? {
                0 => false,
                3 | 4 => true,
                n => return Err(format!("value {n}: accepted 0, 3 or 4")),
            };
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_recovery",
        effect: "`rack`: bit 0 (RACK loss detection); bits 1 and 2 (no static reordering window, no RACK for \
                 lost retransmissions) are not modelled",
        apply: |v, s| {
            let n = int(v)?;
            if n & !1 != 0 {
                return Err(format!("value {n}: accepted 0 or 1"));
            }
            s.tcp.rack = n & 1 != 0;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_tso_win_divisor",
        effect: "`tso_win_divisor` (0 to 1000): the share of the window whose room ends a TSO deferral",
        apply: |v, s| {
            s.tcp.tso_win_divisor = int_in(v, 0, 1000)? as u32;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_min_tso_segs",
        effect: "`min_tso_segs` (1 to 255): the fewest segments a super-packet is sized for",
        apply: |v, s| {
            s.tcp.min_tso_segs = int_in(v, 1, 255)? as u32;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_pacing_ss_ratio",
        effect: "200 only (the TSO autosizing ratio in slow start)",
        apply: |v, _| only(v, 200, "a constant of the stack"),
    },
    Sysctl {
        name: "tcp_pacing_ca_ratio",
        effect: "120 only (the TSO autosizing ratio in congestion avoidance)",
        apply: |v, _| only(v, 120, "a constant of the stack"),
    },
    Sysctl {
        name: "tcp_ecn",
        effect: "`ecn`: 0 `off`, 1 `on`, 2 `accept` (3 and up are AccECN: not modelled)",
        apply: |v, s| {
            s.tcp.ecn = [EcnMode::Off, EcnMode::On, EcnMode::Accept][int_in(v, 0, 2)? as usize];
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_ecn_option",
        effect: "accepted, no effect: the AccECN option is used only with tcp_ecn=3",
        apply: |v, _| int(v).map(|_| ()),
    },
    Sysctl {
        name: "tcp_notsent_lowat",
        effect: "4294967295 (no limit) only",
        apply: |v, _| only(v, 4_294_967_295, "TCP_NOTSENT_LOWAT is not modelled"),
    },
    Sysctl {
        name: "tcp_fastopen",
        effect: "accepted, no effect: a script that uses Fast Open (TCP_FASTOPEN, MSG_FASTOPEN, a cookie option) \
                 is skipped for that",
        apply: |_, _| Ok(()),
    },
    Sysctl { name: "tcp_fastopen_key", effect: "accepted, no effect (as tcp_fastopen)", apply: |_, _| Ok(()) },
    Sysctl {
        name: "tcp_syncookies",
        effect: "accepted, no effect: SYN cookies are sent only when the SYN queue overflows, which the scripts \
                 in scope never do",
        apply: |v, _| int(v).map(|_| ()),
    },
    Sysctl {
        name: "tcp_syn_retries",
        effect: "`syn_retries`",
        apply: |v, s| {
            let n = int_in(v, 1, 127)?;
            s.tcp.syn_retries = n as u32;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_synack_retries",
        effect: "`syn_retries` for the passive side (one knob serves both)",
        apply: |v, s| {
            let n = int_in(v, 1, 127)?;
            s.tcp.syn_retries = n as u32;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_syn_linear_timeouts",
        effect: "0 only: every SYN (and SYN-ACK) retransmission doubles the timeout; the linear timeouts of \
                 Linux 6.18 (default 4: the first retransmissions 1 s apart) are not modelled",
        apply: |v, _| only(v, 0, "linear SYN timeouts are not modelled"),
    },
    Sysctl {
        name: "tcp_frto",
        effect: "`frto`: 0 off, any other value on (since Linux 3.10 every nonzero value is RFC 5682's \
                 SACK-enhanced F-RTO)",
        apply: |v, s| {
            s.tcp.frto = int(v)? != 0;
            Ok(())
        },
    },
    Sysctl {
        name: "tcp_mtu_probing",
        effect: "0 only: path MTU probing is not modelled",
        apply: |v, _| only(v, 0, "MTU probing off"),
    },
];

/// `recv_buffer` for a `tcp_rmem[1]` of `rmem` bytes. Linux starts a socket's `sk_rcvbuf` at `tcp_rmem[1]`
/// (`tcp_init_sock`) but at twice the value for SO_RCVBUF (`sk_setsockopt`: the doubling pays for skb
/// overhead), and offers its share of that as the window (`tcp_full_space`, half by the default
/// `scaling_ratio`). `recv_buffer` is in SO_RCVBUF's units, so the sysctl's value is halved.
pub fn rmem_to_recv_buffer(rmem: u64) -> u64 {
    rmem / 2
}

/// The kernel's defaults before any script command: Linux's `tcp_rmem` = 4096 131072 6291456 and
/// `tcp_wmem` = 4096 16384 4194304 on top of the chosen personality.
pub fn kernel_defaults(mut tcp: TcpConfig) -> Settings {
    tcp.recv_buffer = ByteSize::new(rmem_to_recv_buffer(131_072));
    tcp.wscale_space = ByteSize::new(6_291_456);
    tcp.send_buffer = ByteSize::new(16_384);
    Settings { tcp }
}

/// What packetdrill's `defaults.sh` sets (both corpora's copies set these values).
pub const DEFAULTS_SH: &[(&str, &str)] = &[
    ("tcp_rmem", "4096 540000 15728640"),
    ("tcp_wmem", "4096 262144 4194304"),
    ("tcp_timestamps", "1"),
    ("tcp_syn_retries", "5"),
    ("tcp_synack_retries", "5"),
    ("tcp_frto", "2"),
    ("tcp_sack", "1"),
    ("tcp_dsack", "1"),
    ("tcp_fack", "0"),
    ("tcp_reordering", "3"),
    ("tcp_congestion_control", "cubic"),
    ("tcp_slow_start_after_idle", "0"),
    ("tcp_early_retrans", "4"),
    ("tcp_recovery", "1"),
    ("tcp_tso_win_divisor", "3"),
    ("tcp_ecn", "0"),
    ("tcp_pacing_ss_ratio", "200"),
    ("tcp_pacing_ca_ratio", "120"),
    ("tcp_notsent_lowat", "4294967295"),
    ("tcp_fastopen", "0x70403"),
    ("tcp_syncookies", "1"),
];

/// Applies one `name=value` (name with or without `net.ipv4.`, or as `/proc/sys/net/ipv4/name`).
pub fn apply(assignment: &str, s: &mut Settings) -> Result<(), String> {
    let Some((k, v)) = assignment.split_once('=') else {
        return Err(format!("`{assignment}`: expected name=value"));
    };
    let k = k.trim();
    let name = k
        .strip_prefix("/proc/sys/net/ipv4/")
        .or_else(|| k.strip_prefix("net.ipv4."))
        .ok_or_else(|| format!("sysctl `{k}` is not supported (only net.ipv4.tcp_* are)"))?;
    let Some(sc) = SYSCTLS.iter().find(|s| s.name == name) else {
        return Err(format!("sysctl `net.ipv4.{name}` is not supported"));
    };
    (sc.apply)(v.trim().trim_matches('"').trim_matches('\''), s).map_err(|e| format!("sysctl net.ipv4.{name}: {e}"))
}

/// One recognised set-up command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd {
    /// A sysctl by its dotted name (`net.ipv4.tcp_sack`) and value.
    Sysctl(String, String),
    /// `ethtool -K tun0 tso|gso on|off`: segmentation offload of the device under test (`tso`: the
    /// feature is TSO, not GSO; `on`: turned on).
    Offload { tso: bool, on: bool },
    /// `echo N > /sys/module/tcp_cubic/parameters/hystart_detect`: CUBIC's HyStart detectors (a module
    /// parameter, global to the host): 0 none, 3 both (the ACK train and the delay), as modelled.
    HystartDetect(u8),
    /// `tc qdisc replace dev tun0 root fq`: the fq qdisc on the device under test, which paces every
    /// connection of the host (`SK_PACING_FQ`).
    FqQdisc,
    /// A command with nothing to do in a fresh stack (`tc ... root pfifo`, `ip tcp_metrics flush`, the
    /// restore script `set_sysctls.py` writes).
    Nothing,
}

/// `/proc/sys/net/ipv4/x`, `net/ipv4/x` (sysctl(8) takes either separator) or `net.ipv4.x` as the dotted
/// name.
fn dotted(k: &str) -> String {
    k.strip_prefix("/proc/sys/").unwrap_or(k).replace('/', ".")
}

/// Parses a backquoted command block: one command per line (`\` continues a line). `Err` is a skip reason.
pub fn parse_commands(text: &str) -> Result<Vec<Cmd>, String> {
    let mut out = Vec::new();
    let joined = text.replace("\\\n", " ");
    for line in joined.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let words = shell_words(line);
        let Some(cmd) = words.first() else { continue };
        let base = cmd.rsplit('/').next().unwrap_or(cmd);
        let assign = |w: &str| -> Result<Cmd, String> {
            let (k, v) = w.split_once('=').ok_or_else(|| format!("`{w}`: expected name=value"))?;
            Ok(Cmd::Sysctl(dotted(k.trim()), v.trim().trim_matches('"').trim_matches('\'').to_string()))
        };
        match base {
            "defaults.sh" => {
                for (k, v) in DEFAULTS_SH {
                    out.push(Cmd::Sysctl(format!("net.ipv4.{k}"), v.to_string()));
                }
            }
            "sysctl" => {
                for w in words[1..].iter().filter(|w| !w.starts_with('-')) {
                    out.push(assign(w)?);
                }
            }
            "set_sysctls.py" => {
                for w in &words[1..] {
                    out.push(assign(w)?);
                }
            }
            _ if cmd.starts_with("/tmp/sysctl_restore") => out.push(Cmd::Nothing),
            "ethtool" if words.len() >= 4 && words[1] == "-K" => {
                for pair in words[3..].chunks(2) {
                    match pair {
                        [f, v] if matches!(f.as_str(), "tso" | "gso") => {
                            out.push(Cmd::Offload { tso: f == "tso", on: v == "on" })
                        }
                        _ => return Err(format!("command `{line}`: only tso/gso on|off are modelled")),
                    }
                }
            }
            "tc" if line.ends_with("root pfifo") => out.push(Cmd::Nothing), // a FIFO already
            "tc" if words.join(" ") == "tc qdisc replace dev tun0 root fq" => out.push(Cmd::FqQdisc),
            "ip" if line.starts_with("ip tcp_metrics flush") => out.push(Cmd::Nothing), // none kept yet
            "echo" if line.ends_with("> /sys/module/tcp_cubic/parameters/hystart_detect") => {
                match words.get(1).map(String::as_str) {
                    Some("0") => out.push(Cmd::HystartDetect(0)),
                    Some("3") => out.push(Cmd::HystartDetect(3)),
                    _ => return Err(format!("command `{line}`: only 0 and 3 (both detectors) are modelled")),
                }
            }
            _ => return Err(format!("command `{line}` is not supported")),
        }
    }
    Ok(out)
}

/// The block's commands, each line parsed when it is reached.
pub fn commands_in_order(text: &str) -> impl Iterator<Item = Result<Cmd, String>> + '_ {
    text.replace("\\\n", " ")
        .lines()
        .map(|l| parse_commands(l).map(Vec::into_iter))
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|r| match r {
            Ok(cmds) => cmds.map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        })
}

/// Runs a backquoted command block on the simulator's settings. `Err` is a skip reason.
pub fn run_commands(text: &str, s: &mut Settings) -> Result<(), String> {
    // Line by line, so that the first line the simulator cannot follow names the skip.
    for c in commands_in_order(text) {
        let c = c?;
        match c {
            Cmd::Sysctl(k, v) => apply(&format!("{k}={v}"), s)?,
            // Turning the device's offloads off leaves Linux's TCP building GSO packets all the same:
            // `sk_setup_caps` gives every TCP socket NETIF_F_GSO whatever the device has, and software
            // GSO segments them (measured on 6.18 through the kernel backend: with the script's `tso off
            // gso off`, a write of 4000 or 8000 bytes leaves as 2-segment packets, PSH on each second
            // segment, as `tcp_nagle_https_client` expects). So only `on` changes the stack.
            Cmd::Offload { on, .. } => s.tcp.tso |= on,
            Cmd::HystartDetect(d) => s.tcp.cubic.hystart = d == 3,
            // fq paces every connection at its pacing rate, whatever its congestion control.
            Cmd::FqQdisc => s.tcp.pacing = Pacing::Fq,
            Cmd::Nothing => {}
        }
    }
    Ok(())
}

/// Splits a command line into words, with single and double quotes (`"4096 540000 $((15*1024*1024))"`
/// arithmetic is expanded for the products defaults.sh uses).
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(expand(&std::mem::take(&mut cur)));
                    any = false;
                }
            }
            (None, '>') => break,         // a redirection ends the command's words
            (None, '#') if !any => break, // so does a comment
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(expand(&cur));
    }
    out
}

/// `$((15*1024*1024))` → 15728640, `$((256*1024))` → 262144: products of integers only.
fn expand(w: &str) -> String {
    let mut out = String::new();
    let mut rest = w;
    while let Some(i) = rest.find("$((") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i..].find("))") else {
            out.push_str(&rest[i..]);
            return out;
        };
        let expr = &rest[i + 3..i + j];
        let v =
            expr.split('*').map(|f| f.trim().parse::<u64>().ok()).try_fold(1u64, |a, f| f.map(|f| a.saturating_mul(f)));
        match v {
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&rest[i..i + j + 2]),
        }
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        kernel_defaults(TcpConfig::personality("linux").unwrap())
    }

    /// CUBIC's HyStart module parameter: 0 and 3 (both detectors, what the model runs) are read; one
    /// detector alone is a named skip.
    #[test]
    fn hystart_detect_module_parameter() {
        let mut s = settings();
        run_commands("echo 0 > /sys/module/tcp_cubic/parameters/hystart_detect", &mut s).unwrap();
        assert!(!s.tcp.cubic.hystart);
        run_commands("echo 3 > /sys/module/tcp_cubic/parameters/hystart_detect", &mut s).unwrap();
        assert!(s.tcp.cubic.hystart);
        let e = run_commands("echo 2 > /sys/module/tcp_cubic/parameters/hystart_detect", &mut s).unwrap_err();
        assert!(e.contains("only 0 and 3"), "{e}");
    }

    #[test]
    fn defaults_and_sysctls() {
        let mut s = settings();
        run_commands("../common/defaults.sh\nethtool -K tun0 tso off gso off", &mut s).unwrap();
        assert_eq!(s.tcp.recv_buffer.bytes(), 270_000, "tcp_rmem[1] is a doubled SO_RCVBUF");
        assert_eq!(s.tcp.wscale_space.bytes(), 15 << 20);
        assert!(s.tcp.tso, "Linux's TCP keeps software GSO with the device's offloads off");
        let mut rfc = kernel_defaults(TcpConfig::personality("rfc").unwrap());
        run_commands("ethtool -K tun0 tso off gso off", &mut rfc).unwrap();
        assert!(!rfc.tcp.tso);
        run_commands("ethtool -K tun0 tso on", &mut rfc).unwrap();
        assert!(rfc.tcp.tso);
        run_commands("../common/set_sysctls.py /proc/sys/net/ipv4/tcp_timestamps=0", &mut s).unwrap();
        assert!(!s.tcp.timestamps);
        run_commands("sysctl -q net.ipv4.tcp_rmem=\"4096 $((256*1024)) $((15*1024*1024))\"", &mut s).unwrap();
        assert_eq!(s.tcp.recv_buffer.bytes(), 131_072);
        assert_eq!((s.tcp.min_tso_segs, s.tcp.tso_win_divisor), (2, 3));
        run_commands(
            "sysctl -q net.ipv4.tcp_tso_win_divisor=100\n\
             ../common/set_sysctls.py /proc/sys/net/ipv4/tcp_min_tso_segs=10",
            &mut s,
        )
        .unwrap();
        assert_eq!((s.tcp.min_tso_segs, s.tcp.tso_win_divisor), (10, 100));
        // sysctl(8) takes slashes as well as dots.
        run_commands("sysctl -q net/ipv4/tcp_tso_win_divisor=7", &mut s).unwrap();
        assert_eq!(s.tcp.tso_win_divisor, 7);
        let e = run_commands("sysctl -q net.ipv4.tcp_min_tso_segs=0", &mut s).unwrap_err();
        assert!(e.contains("tcp_min_tso_segs") && e.contains("1 to 255"), "{e}");
    }

    #[test]
    fn unknown_things_are_named() {
        let mut s = settings();
        run_commands("sysctl -q net.ipv4.tcp_ecn=1", &mut s).unwrap();
        assert_eq!(s.tcp.ecn, EcnMode::On);
        let e = run_commands("sysctl -q net.ipv4.tcp_ecn=3", &mut s).unwrap_err();
        assert!(e.contains("tcp_ecn") && e.contains("0 to 2"), "AccECN is not modelled: {e}");
        let e = run_commands("sysctl -q net.ipv4.tcp_wat=1", &mut s).unwrap_err();
        assert!(e.contains("net.ipv4.tcp_wat") && e.contains("not supported"), "{e}");
        let e = run_commands("tc qdisc replace dev tun0 root fq_codel", &mut s).unwrap_err();
        assert!(e.contains("not supported"), "{e}");
        run_commands("tc qdisc replace dev tun0 root fq", &mut s).unwrap();
        assert_eq!(s.tcp.pacing, Pacing::Fq);
    }
}
