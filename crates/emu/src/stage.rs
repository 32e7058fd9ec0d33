//! The emulator's generic path: a direction whose `qdisc` is not the drop-tail FIFO, or whose delay has
//! `jitter`, runs the simulator's pipeline stage by stage, as the engine's generic path does
//! (crates/sim): qdisc (`tcplab_link::Qdisc`, enqueue on arrival, dequeue when the serializer is free) →
//! serializer → propagation delay (± jitter, in order unless `reorder`) → loss.
//!
//! The stage keeps its own clock (the instant of the last event it handled) and serves the qdisc at the
//! model's instants, never at the instants the thread happens to wake: a dequeue due when the serializer
//! went free happens at that instant, even when the thread runs later. So CoDel's sojourn times and
//! control law see the model's times, and a late wake-up only delays the release (measured as lateness).
//!
//! Sans-IO: [`Staged`] decides, the thread in `emulator.rs` moves the bytes. A CE mark is applied to the
//! real packet on release ([`set_ce`]: the IPv4 ECN field and the header checksum).

use tcplab_link::qdisc::{self, PacketMeta, Qdisc};
use tcplab_link::{DropReason, LinkConfig, LinkDirection, QdiscStats, Verdict};
use tcplab_units::Instant;

/// A wire frame waiting in the qdisc: which packet of the emulator's slab and which segment of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Item {
    pub pkt: u32,
    pub seg: u32,
    /// The `drop_frames` script names it: it takes its serialization slot and is not delivered.
    pub scripted: bool,
    /// It carries TCP payload (what a `packets = "data"` loss filter selects).
    pub carries_data: bool,
}

/// What became of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It reaches the far end at `at` (the model's clock), CE-marked if `ce`.
    Deliver { item: Item, at: Instant, ce: bool },
    /// The qdisc refused it (`QueueFull` at the hard limit, `Aqm` for RED/PIE) or dropped it at the head
    /// (CoDel, `Aqm`), or the loss model lost it on the wire (`RandomLoss`); `scripted` for the script.
    Drop { item: Item, reason: DropReason, scripted: bool },
}

/// One direction's qdisc and delay stage.
pub(crate) struct Staged {
    qdisc: Box<dyn Qdisc<Item>>,
    dropped: Vec<(PacketMeta, Item, DropReason)>,
    /// The instant of the last event handled (an arrival, or a dequeue when the serializer went free).
    clock: Instant,
    /// The last arrival on the delay line, which a frame may not overtake unless `reorder`.
    last_arrival: Instant,
    reorder: bool,
}

impl Staged {
    /// The stage of a direction `cfg` with `cfg.is_staged()`; `seed` feeds the qdisc's draws (RED, PIE,
    /// FQ-CoDel's hash perturbation).
    pub(crate) fn new(cfg: &LinkConfig, seed: u64) -> Staged {
        Staged {
            qdisc: qdisc::build(&cfg.qdisc, cfg.queue, seed),
            dropped: Vec::new(),
            clock: Instant::ZERO,
            last_arrival: Instant::ZERO,
            reorder: cfg.reorder,
        }
    }

    /// A frame reaches the qdisc at `t` (not before the last event): first the dequeues due before it,
    /// then the arrival, then a dequeue at `t` if the serializer is free.
    pub(crate) fn offer(
        &mut self,
        link: &mut LinkDirection,
        t: Instant,
        meta: PacketMeta,
        item: Item,
        out: &mut Vec<Fate>,
    ) {
        self.advance(link, t, out);
        self.clock = self.clock.max(t);
        link.count_offer();
        match self.qdisc.enqueue(self.clock, meta, item) {
            Ok(()) => link.note_queue(self.qdisc.len_packets()),
            Err((item, reason)) => {
                // As the simulator counts it: every refusal on arrival is the direction's queue drop; the
                // qdisc's own counters tell the hard limit from the AQM.
                link.count_refused();
                out.push(Fate::Drop { item, reason, scripted: false });
            }
        }
        self.qdisc.take_dropped(&mut self.dropped);
        self.flush_dropped(out);
        self.advance(link, t, out);
    }

    /// Serves the qdisc up to `t`: each time the serializer goes free with a packet waiting, at that
    /// instant, the qdisc gives the next packet (dropping or marking at the head as its algorithm says).
    pub(crate) fn advance(&mut self, link: &mut LinkDirection, t: Instant, out: &mut Vec<Fate>) {
        while let Some(at) = self.next_dequeue(link) {
            if at > t {
                break;
            }
            self.clock = at;
            let next = self.qdisc.dequeue(at, &mut self.dropped);
            self.flush_dropped(out);
            let Some((meta, item)) = next else { break };
            match link.transmit(at, meta.wire_len, item.carries_data) {
                Verdict::Deliver(_) if item.scripted => {
                    out.push(Fate::Drop { item, reason: DropReason::RandomLoss, scripted: true })
                }
                Verdict::Deliver(arrival) => {
                    let arrival = if self.reorder { arrival } else { arrival.max(self.last_arrival) };
                    self.last_arrival = self.last_arrival.max(arrival);
                    out.push(Fate::Deliver { item, at: arrival, ce: meta.ce });
                }
                Verdict::Drop(reason) => out.push(Fate::Drop { item, reason, scripted: false }),
            }
        }
    }

    /// When the serializer next takes a packet from the qdisc (`None`: the qdisc is empty).
    pub(crate) fn next_dequeue(&self, link: &LinkDirection) -> Option<Instant> {
        (self.qdisc.len_packets() > 0).then(|| link.busy_until().max(self.clock))
    }

    pub(crate) fn stats(&self) -> QdiscStats {
        *self.qdisc.stats()
    }

    /// Packets and wire bytes waiting in the qdisc (not the one on the wire).
    pub(crate) fn len_packets(&self) -> usize {
        self.qdisc.len_packets()
    }

    pub(crate) fn len_bytes(&self) -> u64 {
        self.qdisc.len_bytes()
    }

    fn flush_dropped(&mut self, out: &mut Vec<Fate>) {
        out.extend(self.dropped.drain(..).map(|(_, item, reason)| Fate::Drop { item, reason, scripted: false }));
    }
}

/// The ECN field of an IPv4 header (RFC 3168 §5): ECN-capable (ECT(0), ECT(1) or CE) and CE.
pub(crate) fn ecn_of(ip: &[u8]) -> (bool, bool) {
    let ecn = ip[1] & 0x03;
    (ecn != 0, ecn == 0x03)
}

/// Marks an IPv4 packet Congestion Experienced (ECN field 11) and recomputes its header checksum, as a
/// router's `INET_ECN_set_ce` does. A packet already CE is left as it is.
pub(crate) fn set_ce(ip: &mut [u8]) {
    if ip.len() < 20 || ip[1] & 0x03 == 0x03 {
        return;
    }
    let ihl = ((ip[0] & 0x0f) as usize * 4).clamp(20, ip.len());
    ip[1] |= 0x03;
    ip[10..12].copy_from_slice(&[0, 0]);
    let c = !crate::emulator::fold(crate::emulator::sum16(&ip[..ihl], 0));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The flow a packet belongs to, for FQ-CoDel's classifier (RFC 8290 §4.1.1: a hash of the 5-tuple):
/// addresses, protocol and, for TCP and UDP, ports, mixed by SplitMix64's finalizer.
pub(crate) fn flow_of(ip: &[u8]) -> u32 {
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let word = |o: usize| u32::from_be_bytes([ip[o], ip[o + 1], ip[o + 2], ip[o + 3]]) as u64;
    let mut key = word(12) << 32 | word(16);
    key ^= (ip[9] as u64) << 56;
    if matches!(ip[9], 6 | 17) && ip.len() >= ihl + 4 {
        key = key.rotate_left(17) ^ word(ihl);
    }
    let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::{fold, sum16};
    use tcplab_link::qdisc::{CodelConfig, QdiscConfig};
    use tcplab_link::QueueLimit;
    use tcplab_units::Duration;

    /// 10 Mbit/s, 10 ms, a 1000-packet limit, Ethernet framing.
    fn link(qdisc: QdiscConfig) -> LinkConfig {
        let mut l: LinkConfig =
            serde_json::from_value(serde_json::json!({ "rate": "10mbit", "delay": "10ms" })).expect("a link");
        assert_eq!(l.queue, QueueLimit::Packets(1000));
        l.qdisc = qdisc;
        l
    }

    fn meta(ect: bool) -> PacketMeta {
        PacketMeta { wire_len: 1538, flow: 1, ect, ce: false, enqueued: Instant::ZERO }
    }

    /// Offers 1500-byte datagrams at `per_s` packets a second for `secs`, then serves the queue out.
    fn drive(cfg: &LinkConfig, ect: bool, per_s: u64, secs: u64) -> (Vec<Fate>, QdiscStats) {
        let mut l = LinkDirection::new(cfg, 1);
        let mut st = Staged::new(cfg, 1);
        let mut out = Vec::new();
        let n = per_s * secs;
        for k in 0..n {
            let t = Instant::from_nanos(k * 1_000_000_000 / per_s);
            let item = Item { pkt: k as u32, seg: 0, scripted: false, carries_data: true };
            st.offer(&mut l, t, meta(ect), item, &mut out);
        }
        st.advance(&mut l, Instant::from_nanos(1_000_000_000 * (secs + 10)), &mut out);
        (out, st.stats())
    }

    #[test]
    fn codel_drops_at_the_head_and_bounds_the_sojourn_a_fifo_lets_grow() {
        // 1000 packets/s of 1538 wire bytes is 12.3 Mbit/s into 10 Mbit/s: a standing queue.
        let (fifo, fs) = drive(&link(QdiscConfig::Fifo {}), false, 1000, 5);
        assert!(fifo.iter().all(|f| matches!(f, Fate::Deliver { .. })), "1000 packets fit the FIFO");
        let (codel, cs) = drive(&link(QdiscConfig::Codel(CodelConfig::default())), false, 1000, 5);
        let dropped: Vec<u32> = codel
            .iter()
            .filter_map(|f| match f {
                Fate::Drop { item, reason: DropReason::Aqm, .. } => Some(item.pkt),
                _ => None,
            })
            .collect();
        assert!(!dropped.is_empty() && cs.drops_aqm == dropped.len() as u64, "{cs:?}");
        // From the head: when CoDel drops a packet, every packet that arrived before it has already left
        // (delivered or dropped), while later arrivals are still waiting behind it.
        let mut left = vec![false; 5000];
        for f in &codel {
            match f {
                Fate::Deliver { item, .. } => left[item.pkt as usize] = true,
                Fate::Drop { item, .. } => {
                    let k = item.pkt as usize;
                    assert!(left[..k].iter().all(|l| *l), "packet {k} dropped at the head");
                    assert!(!left[k + 1..].iter().any(|l| *l), "nothing behind packet {k} has left");
                    left[k] = true;
                }
            }
        }
        assert!(left.iter().all(|l| *l), "every packet accounted for");
        assert_eq!(cs.drops_overlimit, 0);
        // A FIFO's sojourn grows with the 23% excess (1.15 s after 5 s); CoDel's is bounded by its control
        // law against traffic that does not slow down (docs/qdisc.md: below about 0.45 s at this excess).
        assert!(fs.sojourn_max_ns > 1_000_000_000, "{fs:?}");
        assert!(cs.sojourn_max_ns < 450_000_000, "{cs:?}");
    }

    #[test]
    fn codel_with_ecn_marks_ect_packets_instead_of_dropping_them() {
        let cfg = link(QdiscConfig::Codel(CodelConfig { ecn: true, ..CodelConfig::default() }));
        let (out, s) = drive(&cfg, true, 1000, 3);
        let marked = out.iter().filter(|f| matches!(f, Fate::Deliver { ce: true, .. })).count() as u64;
        assert!(marked > 0 && marked == s.marks && s.drops_aqm == 0, "{s:?}");
        assert!(out.iter().all(|f| matches!(f, Fate::Deliver { .. })));
        // Not ECN-capable: the same algorithm drops.
        let (_, s) = drive(&cfg, false, 1000, 3);
        assert!(s.marks == 0 && s.drops_aqm > 0, "{s:?}");
    }

    #[test]
    fn jitter_keeps_order_unless_reorder_is_set() {
        let mut cfg = link(QdiscConfig::Fifo {});
        cfg.jitter = Some(Duration::from_millis(5));
        let at = |out: &[Fate]| -> Vec<u64> {
            out.iter()
                .filter_map(|f| match f {
                    Fate::Deliver { at, .. } => Some(at.as_nanos()),
                    _ => None,
                })
                .collect()
        };
        let (out, _) = drive(&cfg, false, 500, 1);
        let a = at(&out);
        assert!(a.windows(2).all(|w| w[0] <= w[1]), "in order");
        let spread = a.iter().zip(0..).map(|(t, k)| t - k * 2_000_000).collect::<Vec<_>>();
        assert!(spread.iter().any(|d| *d > 15_000_000), "some frames are delayed beyond 10 ms + serialization");
        cfg.reorder = true;
        let (out, _) = drive(&cfg, false, 500, 1);
        assert!(at(&out).windows(2).any(|w| w[0] > w[1]), "some frames overtake");
    }

    #[test]
    fn a_ce_mark_sets_the_ecn_field_and_keeps_the_header_checksum_valid() {
        let mut ip = [0u8; 40];
        ip[0] = 0x45;
        ip[1] = 0x02; // ECT(0)
        ip[2..4].copy_from_slice(&40u16.to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[198, 18, 0, 1]);
        ip[16..20].copy_from_slice(&[198, 18, 1, 1]);
        let c = !fold(sum16(&ip[..20], 0));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(ecn_of(&ip), (true, false));
        set_ce(&mut ip);
        assert_eq!(ip[1] & 0x03, 0x03);
        assert_eq!(ecn_of(&ip), (true, true));
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff, "the header checksum verifies");
        assert_eq!(ip[0], 0x45, "nothing else changes");
        // Not ECN-capable packets are never marked by a qdisc, and the field is the only change set_ce makes.
        let mut plain = ip;
        plain[1] = 0;
        assert_eq!(ecn_of(&plain), (false, false));
    }

    #[test]
    fn flows_differ_by_port_and_are_stable() {
        let mut a = [0u8; 40];
        a[0] = 0x45;
        a[9] = 6;
        a[20..22].copy_from_slice(&40000u16.to_be_bytes());
        a[22..24].copy_from_slice(&12865u16.to_be_bytes());
        let mut b = a;
        b[21] ^= 1;
        assert_eq!(flow_of(&a), flow_of(&a));
        assert_ne!(flow_of(&a), flow_of(&b));
    }
}
