use serde::{Deserialize, Serialize};
use tcplab_units::{ByteSize, Duration, Rate};

use crate::qdisc::QdiscConfig;

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
    /// The direction's MTU: the largest IP datagram it carries (`"576B"`; at least 68 bytes, RFC 791). A
    /// larger datagram is sent as IPv4 fragments (RFC 791 §3.2), each queued, serialized and lost on its
    /// own; the receiving host reassembles it. Unset: no limit (no fragmentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<ByteSize>,
    /// Serve the direction on the ticks of a kernel clock, as a dummynet pipe is (`"10ms"`: HZ = 100;
    /// `"1ms"`: HZ = 1000). dummynet (Rizzo; FreeBSD 4.x `sys/netinet/ip_dummynet.c`) does all its work in
    /// `dummynet()`, run once per tick: a fixed-rate pipe earns `rate / HZ` bits of credit a tick while
    /// packets wait (`ready_event`: `numbytes += (curr_time − sched_time)·bandwidth`, a packet costing
    /// `len·8·hz`), a packet leaves the bandwidth queue on the first tick its credit covers it (`SET_TICKS`,
    /// at least one tick after it arrived at an idle pipe; credit left when the queue empties is dropped),
    /// enters the delay line stamped `output_time = curr_time + delay` with `delay` in whole ticks
    /// (`config_pipe`: `delay·hz/1000`), and is released on that tick (`transmit_event`). So every arrival
    /// is a tick instant, and `delay` must be a whole number of ticks. The queue limit counts, as
    /// dummynet's `q->len` does, every packet not yet moved to the delay line (the one waiting for credit
    /// too); a byte limit drops a packet when the bytes already queued exceed it (`q->len_bytes > qsize`).
    /// Unset: a continuous serializer and a constant delay (netem-like, to the nanosecond).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<Duration>,
    /// With `tick`: what the pipe does with the credit left when its queue empties. `"dropped"` (default):
    /// dummynet from FreeBSD `ip_dummynet.c` rev 1.24.2.22 (RELENG_4, 2003) on, `ready_event` sets
    /// `q->numbytes = 0`, so a packet that finds the queue empty waits at least one tick. `"kept"`: rev
    /// 1.24.2.11 (RELENG_4, 2001) and before, where the leftover stays in `numbytes` (less than one tick's
    /// worth); a packet that finds the queue empty and is covered by it gets `SET_TICKS` = 0 and moves to
    /// the delay line at once, stamped with the tick already past, so it is held `delay − tick` to `delay`.
    #[serde(default, skip_serializing_if = "IdleCredit::is_dropped")]
    pub idle_credit: IdleCredit,
    /// The queue discipline in front of the serializer (`qdisc = { kind = "codel" }`; the kinds and their
    /// parameters are in docs/qdisc.md), with `queue` as its hard limit. Default: a drop-tail FIFO, which
    /// decides a packet's fate as it enters (no event per packet); any other qdisc is asked for the next
    /// packet each time the serializer is free (one departure event per direction at a time).
    #[serde(default, skip_serializing_if = "is_fifo")]
    pub qdisc: QdiscConfig,
    /// Variation of the propagation delay: each frame's delay is drawn uniformly from `delay − jitter` to
    /// `delay + jitter` (netem's `delay D J` without a distribution table draws from that span too). At
    /// most `delay`. Frames keep their order unless `reorder` is set: a frame whose draw would arrive before
    /// the frame ahead of it arrives with it (as a link that cannot overtake). Unset: a constant delay.
    /// Set (even to `"0s"`), the direction takes the generic path, packet by packet through its qdisc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Duration>,
    /// With `jitter`: let a frame overtake the frames ahead of it when its draw says so (netem reorders
    /// this way, its tfifo sorting by time to send). Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub reorder: bool,
}

fn is_fifo(q: &QdiscConfig) -> bool {
    matches!(q, QdiscConfig::Fifo {})
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What a ticked (dummynet) pipe does with its credit when the queue empties; see [`LinkConfig::idle_credit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleCredit {
    #[default]
    Dropped,
    Kept,
}

impl IdleCredit {
    pub fn is_dropped(&self) -> bool {
        *self == IdleCredit::Dropped
    }
}

impl LinkConfig {
    /// The shortest and longest `tick` accepted: HZ from 1 to 100,000.
    pub const TICK_RANGE: (Duration, Duration) = (Duration::from_micros(10), Duration::from_secs(1));

    /// Checks the delay stage and what the generic (dequeue-side) path supports; the error names the key.
    pub fn validate_stages(&self) -> Result<(), (&'static str, String)> {
        if let Some(j) = self.jitter {
            if j > self.delay {
                return Err(("jitter", format!("{j}: more than the delay ({}); accepted: 0 to the delay", self.delay)));
            }
        }
        if self.reorder && self.jitter.is_none_or(|j| j.is_zero()) {
            return Err(("reorder", "has no effect without jitter; set jitter too, e.g. jitter = \"2ms\"".into()));
        }
        if self.reorder && self.mtu.is_some() {
            return Err((
                "reorder",
                "not with mtu (fragments keep their order on a direction); accepted: false".into(),
            ));
        }
        if self.tick.is_some() && (!is_fifo(&self.qdisc) || self.jitter.is_some()) {
            return Err((
                "tick",
                "a dummynet pipe serves a drop-tail FIFO with a fixed delay; accepted with qdisc fifo and no jitter"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether the direction needs the generic path (a qdisc asked on dequeue, a variable delay) rather than
    /// the drop-tail FIFO's decide-at-enqueue one.
    pub fn is_staged(&self) -> bool {
        !is_fifo(&self.qdisc) || self.jitter.is_some()
    }

    /// Checks `tick` and the `delay` it quantizes; the error names the key (`tick` or `delay`), the value and
    /// what is accepted.
    pub fn validate_tick(&self) -> Result<(), (&'static str, String)> {
        let Some(tick) = self.tick else {
            if !self.idle_credit.is_dropped() {
                return Err((
                    "idle_credit",
                    "has no effect without tick (only a ticked pipe keeps credit); set tick too, e.g. tick = \"10ms\""
                        .into(),
                ));
            }
            return Ok(());
        };
        let (lo, hi) = Self::TICK_RANGE;
        if tick < lo || tick > hi {
            return Err((
                "tick",
                format!("{tick}: accepted {lo} to {hi} (a kernel clock of HZ 100,000 down to 1; dummynet ran at HZ 100 or 1000)"),
            ));
        }
        if !self.delay.as_nanos().is_multiple_of(tick.as_nanos()) {
            let floored = Duration::from_nanos(self.delay.as_nanos() / tick.as_nanos() * tick.as_nanos());
            return Err((
                "delay",
                format!(
                    "{}: not a whole number of ticks of {tick}; dummynet would keep {floored} (delay·HZ/1000 whole \
                     ticks); accepted: a multiple of the tick",
                    self.delay
                ),
            ));
        }
        Ok(())
    }
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

/// Loss on a link direction: the frame uses its serialization slot but does not arrive.
///
/// Every model takes `packets`: `"all"` (default) or `"data"` (only packets that carry transport payload;
/// ACKs, SYNs, RSTs and other control packets are never lost and do not advance the model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// No loss. A struct variant with no fields rather than a unit variant: serde lets an internally
    /// tagged unit variant ignore other keys, so `{ model = "none", p = 0.1 }` would pass silently.
    None {},
    /// Each selected frame is lost independently with probability `p` (0 ≤ p < 1).
    Bernoulli {
        p: f64,
        #[serde(default, skip_serializing_if = "LossFilter::is_all")]
        packets: LossFilter,
    },
    /// Exactly the selected frames whose index is listed in `drop` are lost. Indices count from 0 over the
    /// frames of the `packets` class offered to this direction (before the queue: a frame the queue drops
    /// still takes its index).
    Scripted {
        drop: Vec<u64>,
        #[serde(default, skip_serializing_if = "LossFilter::is_all")]
        packets: LossFilter,
    },
    /// Gilbert-Elliott two-state burst loss (Gilbert 1960, Elliott 1963; parameters as in Hasslinger &
    /// Hohlfeld, "The Gilbert-Elliott Model for Packet Loss in Real Time Services on the Internet", MMB 2008,
    /// and Linux netem's `loss gemodel p r 1-h 1-k`). Per selected frame the chain moves Good → Bad with
    /// probability `p` and Bad → Good with `r`; a frame is delivered with probability `k` in Good and `h` in
    /// Bad. Defaults h = 0, k = 1 (Gilbert's model: every frame in Bad is lost, none in Good).
    GilbertElliott {
        p: f64,
        r: f64,
        #[serde(default)]
        h: f64,
        #[serde(default = "one")]
        k: f64,
        #[serde(default, skip_serializing_if = "LossFilter::is_all")]
        packets: LossFilter,
    },
}

fn one() -> f64 {
    1.0
}

impl LossModel {
    /// Which frames the model sees.
    pub fn filter(&self) -> LossFilter {
        match self {
            LossModel::None {} => LossFilter::All,
            LossModel::Bernoulli { packets, .. }
            | LossModel::Scripted { packets, .. }
            | LossModel::GilbertElliott { packets, .. } => *packets,
        }
    }

    /// Checks the parameter ranges; the error names the parameter and what is accepted.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} = {v}: accepted 0 <= {name} <= 1"))
            }
        };
        match self {
            LossModel::None {} => Ok(()),
            LossModel::Bernoulli { p, .. } => {
                if (0.0..1.0).contains(p) {
                    Ok(())
                } else {
                    Err(format!("p = {p}: accepted 0 <= p < 1"))
                }
            }
            LossModel::Scripted { drop, .. } => {
                if drop.len() > 10_000_000 {
                    Err(format!("drop: {} indices; accepted at most 10000000", drop.len()))
                } else {
                    Ok(())
                }
            }
            LossModel::GilbertElliott { p, r, h, k, .. } => {
                unit("p", *p)?;
                unit("r", *r)?;
                unit("h", *h)?;
                unit("k", *k)?;
                if *p > 0.0 && *r == 0.0 && *h == 0.0 {
                    return Err(format!(
                        "r = 0 with p = {p} and h = 0: the link would lose everything once Bad; accepted r > 0"
                    ));
                }
                Ok(())
            }
        }
    }
}

impl Default for LossModel {
    fn default() -> Self {
        LossModel::None {}
    }
}

/// Which frames a loss model applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossFilter {
    /// Every frame.
    #[default]
    All,
    /// Frames carrying transport payload only.
    Data,
}

impl LossFilter {
    pub fn is_all(&self) -> bool {
        *self == LossFilter::All
    }
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
