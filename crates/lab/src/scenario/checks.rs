//! Combinations of keys that each passed the limits table (`crate::limits::check`): whether the
//! connections can come up within the 180 s the simulator gives them, and whether the path carries
//! anything within `test.duration`. Part of the scenario's validation; it reads the resolved `Scenario`.

use tcplab_units::{ByteSize, Duration};

use crate::limits::OutOfRange;
use crate::scenario::Scenario;

/// What [`cross_checks`] found: a combination that cannot run (refused), or warnings about what will
/// happen, each with the key to report it at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    pub refuse: Option<OutOfRange>,
    pub warnings: Vec<OutOfRange>,
}

/// A derived duration in words (`100.000157s` reads worse than `100.0 s`).
fn human(d: Duration) -> String {
    let s = d.as_nanos() as f64 / 1e9;
    if s >= 1.0 {
        format!("{s:.1} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.1} us", s * 1e6)
    }
}

/// The IP and TCP headers of a SYN with options (20 + 40 bytes at most).
const SYN_LEN: u32 = 60;

/// Checks combinations of keys that each passed [`check`]: whether the connections can come up within
/// the 180 s the simulator gives them (`tcplab_sim::CONNECT_LIMIT`), and whether the path carries
/// anything within `test.duration` (warnings, since the run is valid and the figures will say so).
pub fn cross_checks(s: &Scenario) -> Findings {
    let mut f = Findings::default();
    let connect = tcplab_sim::CONNECT_LIMIT;
    let dirs = [("path.up", &s.path.up), ("path.down", &s.path.down)];
    // One crossing of the handshake: a SYN's serialization (at the NIC too, when it has a rate) and the
    // propagation delay.
    let crossing = |key: &str, l: &tcplab_link::LinkConfig| {
        let nic = if key == "path.up" { s.client.host.nic_rate } else { s.server.host.nic_rate };
        let wire = u64::from(l.framing.wire_len(SYN_LEN));
        l.delay + l.rate.tx_time(wire) + nic.map_or(Duration::ZERO, |r| r.tx_time(wire))
    };
    let (up, down) = (crossing("path.up", &s.path.up), crossing("path.down", &s.path.down));
    // SYN up, SYN-ACK down, ACK up: the server's end is established after three crossings.
    let handshake = up + down + up;
    if handshake >= connect {
        let (key, l) = if up >= down { dirs[0] } else { dirs[1] };
        f.refuse = Some(OutOfRange {
            key: format!("{key}.delay"),
            message: format!(
                "{} one way at {}: the handshake takes {} (three crossings with serialization), at least \
                 the {connect} the connections get to come up; accepted a path whose handshake fits (a shorter \
                 delay or a faster rate)",
                l.delay,
                l.rate,
                human(handshake)
            ),
        });
        return f;
    }
    let duration = s.test.duration;
    let rtt = up + down;
    if s.test.messages.is_none() && duration < rtt {
        f.warnings.push(OutOfRange {
            key: "test.duration".into(),
            message: format!(
                "{duration} is shorter than one round trip of the path ({}): nothing sent in the measurement \
                 can be acknowledged within it, so its figures will be zero",
                human(rtt)
            ),
        });
    }
    // A path without `down` has the up direction's copy: its findings would repeat up's, at up's line.
    let distinct = if s.path.down == s.path.up { &dirs[..1] } else { &dirs[..] };
    for &(key, l) in distinct {
        let mss = s.client.tcp().mss.bytes().max(s.server.tcp().mss.bytes());
        let full = u64::from(l.framing.wire_len(mss as u32 + 40));
        let frame = l.rate.tx_time(full);
        if s.test.messages.is_none() && frame > duration {
            f.warnings.push(OutOfRange {
                key: format!("{key}.rate"),
                message: format!(
                    "{}: one full-size frame ({full}B) takes {} to serialize, longer than test.duration = \
                     {duration}: the figures will be near zero",
                    l.rate,
                    human(frame)
                ),
            });
        }
        let empty = match l.queue {
            tcplab_link::QueueLimit::Packets(0) => Some("0pkt".to_string()),
            tcplab_link::QueueLimit::Bytes(b) if b < full => Some(ByteSize::new(b).to_string()),
            _ => None,
        };
        if let Some(q) = empty {
            f.warnings.push(OutOfRange {
                key: format!("{key}.queue"),
                message: format!(
                    "{q}: no full-size frame can wait, so every data frame that arrives while another is being \
                     serialized is dropped (a bufferless link; expect heavy loss)"
                ),
            });
        }
    }
    for side in ["client", "server"] {
        let h = if side == "client" { &s.client } else { &s.server };
        if h.host.nic_rate.is_some() && h.host.txqueuelen == 0 {
            f.warnings.push(OutOfRange {
                key: format!("{side}.host.txqueuelen"),
                message: "0 with a nic_rate: no frame can wait at the NIC, so the sender's stack is throttled \
                          frame by frame (ifq_full) or drops"
                    .into(),
            });
        }
    }
    f
}
