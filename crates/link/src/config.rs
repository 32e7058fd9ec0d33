use serde::{Deserialize, Serialize};
use tcplab_units::{ByteSize, Duration, Rate};

/// One direction of a path (RFC-free: this is the emulator's model, documented in docs/scenario.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Serialization rate of the bottleneck, bits per second (`"10mbit"`, `"1gbit"`).
    pub rate: Rate,
    /// One-way propagation delay (`"20ms"`), added after serialization.
    #[serde(default)]
    pub delay: Duration,
    /// Drop-tail queue in front of the serializer: `"100pkt"` (packets waiting, not counting the one being
    /// sent, as Linux pfifo counts) or a byte size (`"64KiB"`). Default `"1000pkt"`, Linux's txqueuelen.
    #[serde(default)]
    pub queue: QueueLimit,
    /// Per-frame bytes on the wire beyond the IP datagram: `"ethernet"` (38 bytes of preamble, header, FCS
    /// and inter-frame gap, and frames padded to the 46-byte minimum payload), `"none"`, or `"24B"`.
    #[serde(default)]
    pub framing: Framing,
    /// Random loss on the wire: the frame uses its serialization slot but does not arrive.
    #[serde(default)]
    pub loss: LossModel,
}

/// How many packets or bytes the drop-tail queue holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl Default for QueueLimit {
    fn default() -> Self {
        QueueLimit::Packets(1000)
    }
}

impl std::fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueueLimit::Packets(n) => write!(f, "{n}pkt"),
            QueueLimit::Bytes(b) => write!(f, "{}", ByteSize::new(*b)),
        }
    }
}

impl std::str::FromStr for QueueLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Some(n) = t.strip_suffix("pkt").or_else(|| t.strip_suffix("pkts")) {
            return n.trim().parse::<u32>().map(QueueLimit::Packets).map_err(|_| {
                format!("{s:?}: accepted: a whole number of packets such as \"100pkt\", or a size such as \"64KiB\"")
            });
        }
        t.parse::<ByteSize>().map(|b| QueueLimit::Bytes(b.bytes())).map_err(|e| {
            format!(
                "{s:?}: {}; accepted: a number of packets such as \"100pkt\", or a size such as \"64KiB\"",
                e.reason
            )
        })
    }
}

/// Bytes a frame occupies on the wire beyond the IP datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// IEEE 802.3: 38 bytes per frame (preamble+SFD 8, header 14, FCS 4, inter-frame gap 12), and the
    /// IP datagram padded to the 46-byte minimum payload.
    #[default]
    Ethernet,
    /// Nothing: the IP datagram alone is serialized.
    None,
    /// A fixed number of bytes per frame.
    Bytes(u32),
}

impl Framing {
    /// Bytes serialized for an IP datagram of `ip_len` bytes.
    pub fn wire_len(self, ip_len: u32) -> u32 {
        match self {
            Framing::Ethernet => ip_len.max(46) + 38,
            Framing::None => ip_len,
            Framing::Bytes(n) => ip_len + n,
        }
    }
}

impl std::fmt::Display for Framing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Framing::Ethernet => f.write_str("ethernet"),
            Framing::None => f.write_str("none"),
            Framing::Bytes(n) => write!(f, "{n}B"),
        }
    }
}

impl std::str::FromStr for Framing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "ethernet" => Ok(Framing::Ethernet),
            "none" => Ok(Framing::None),
            t => t.parse::<ByteSize>().ok().and_then(|b| u32::try_from(b.bytes()).ok()).map(Framing::Bytes).ok_or_else(
                || format!("{s:?}: accepted: \"ethernet\" (38 B per frame), \"none\", or a byte count such as \"24B\""),
            ),
        }
    }
}

/// Random loss on a link direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum LossModel {
    #[default]
    None,
    /// Each frame is lost independently with probability `p` (0 ≤ p < 1).
    Bernoulli { p: f64 },
}

macro_rules! text_serde {
    ($t:ty, $expecting:expr) => {
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $t;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$t, E> {
                        v.parse().map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
text_serde!(QueueLimit, "a queue limit such as \"100pkt\" or \"64KiB\"");
text_serde!(Framing, "\"ethernet\", \"none\", or a byte count such as \"24B\"");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_framing_pads_short_frames() {
        assert_eq!(Framing::Ethernet.wire_len(1500), 1538);
        assert_eq!(Framing::Ethernet.wire_len(40), 84); // 46 + 38: a bare ACK is padded
        assert_eq!(Framing::None.wire_len(40), 40);
        assert_eq!("24B".parse::<Framing>().unwrap().wire_len(100), 124);
    }

    #[test]
    fn queue_limits_parse() {
        assert_eq!("100pkt".parse::<QueueLimit>().unwrap(), QueueLimit::Packets(100));
        assert_eq!("64KiB".parse::<QueueLimit>().unwrap(), QueueLimit::Bytes(65536));
        assert!("lots".parse::<QueueLimit>().unwrap_err().contains("accepted"));
    }
}
