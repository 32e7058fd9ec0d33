//! Packet traces of runs with more than two hosts (a `[dumbbell]`, a network of `[[host]]` and `[[link]]`
//! tables): every packet of every flow as it enters the traced link directions, with its real end hosts.
//!
//! Where: on links, not hosts. What a dumbbell's user looks at is the bottleneck, where the flows meet,
//! queue and are dropped; a tap there (both directions: data and ACKs) holds every flow's conversation in one
//! file, as a tap on that cable would. A host's NIC would show only its own flows. `--pcap-at` names the
//! directions as `links.directions` does (`bottleneck`, `reverse`, `link[2].forward`,
//! `flow[0].sender_access.backward`), or a link (`link[2]`, `flow[0].sender_access`) for both its
//! directions; by default the link shown as `links.up`, both ways ([`default_taps`]).
//!
//! Addresses: each host its own ([`crate::pcap::host_addr`], in the engine's host order: a dumbbell's
//! senders, then its receivers, then its left and right routers; a network's hosts as the file lists them).
//! The IPv4 source and destination are the packet's end hosts; the Ethernet source and destination the
//! hosts at the ends of the traced link (a router's MAC on the bottleneck), as a capture on that link shows.
//! A packet's end hosts follow from the host that sent it and its ports ([`tcplab_lab::topology::flow_ends`]:
//! a dumbbell's hosts carry one flow each, a network's flows have their own ports); at a router, the
//! engine says them ([`tcplab_sim::Transit`]).
//!
//! A packet is written when it enters a traced direction: when its sender's NIC puts it on the wire (the
//! first hop) or when a router forwards it; packets the direction then loses are included, as on the
//! two-host `up` and `down` taps. Records are written in time order (a first hop's packets are known before
//! they depart: they wait in a small buffer until the simulation's clock reaches them).
//!
//! The IPv4 identification is the sending host's counter, carried from direction to direction in order
//! (each direction is FIFO); under a queue discipline that drops from the head (CoDel) the ids of later
//! packets at a downstream tap may be off by the drops, as with the two-host taps. Addresses and ports do
//! not depend on it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::path::Path;

use tcplab_lab::Scenario;
use tcplab_sim::{DirId, Fragment, HostId, LinkSpec, PacketEvent, Probe, Routes, Transit};
use tcplab_transport::Transport;
use tcplab_units::Instant;
use tcplab_wire::codec::Ipv4Payload;

use crate::pcap::{FrameHosts, PcapProbe, Tap};

/// The directions of `s` a trace can tap, in [`DirId`] order: the names `links.directions` gives them.
pub fn direction_names(s: &Scenario) -> Vec<String> {
    tcplab_lab::queues::names(s).into_iter().map(|(name, ..)| name).collect()
}

/// The directions `--pcap-at` names (comma-separated direction names, or link names for both directions),
/// or why not, with the accepted names.
pub fn parse_taps(s: &Scenario, at: &str) -> Result<Vec<DirId>, String> {
    let names = direction_names(s);
    let mut dirs = Vec::new();
    for want in at.split(',').map(str::trim) {
        let found: Vec<DirId> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                n.as_str() == want || n.strip_suffix(".forward").or_else(|| n.strip_suffix(".backward")) == Some(want)
            })
            .map(|(d, _)| DirId(d as u32))
            .collect();
        if found.is_empty() {
            return Err(format!(
                "--pcap-at {want:?}: no link direction of the scenario has that name; {}",
                accepted(&names)
            ));
        }
        dirs.extend(found);
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// The accepted names, shortened past a dozen directions.
fn accepted(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(12).map(String::as_str).collect();
    let more = if names.len() > shown.len() { format!(", … ({} in all)", names.len()) } else { String::new() };
    format!(
        "accepted: link directions as links.directions names them ({}{more}), a link's name for both its \
         directions, separated by commas",
        shown.join(", ")
    )
}

/// The taps when `--pcap-at` is not given: the link shown as `links.up` (a dumbbell's bottleneck, a
/// network's slowest direction), both ways.
pub fn default_taps(s: &Scenario) -> Vec<DirId> {
    let shown = tcplab_lab::topology::place(s).shown;
    let mut dirs = vec![shown, DirId(shown.0 ^ 1)];
    dirs.sort();
    dirs
}

/// A pending record: the frame and when it enters its direction.
struct Pending {
    at: Instant,
    seq: u64,
    frame: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A probe that writes the packets entering some link directions of a run of any shape to a pcap file.
pub struct NetPcapProbe<S: Ipv4Payload> {
    out: PcapProbe<S>,
    tapped: Vec<bool>,
    /// Per direction, the hosts at its two ends.
    ends: Vec<(HostId, HostId)>,
    /// (host, port) → the other end, for packets a flow's sender sends to its receiver's port and for those
    /// its receiver sends from it.
    to_port: HashMap<(HostId, u16), HostId>,
    from_port: HashMap<(HostId, u16), HostId>,
    routes: Routes,
    next_id: Vec<u16>,
    fragmenting_id: Vec<u16>,
    in_flight: Vec<VecDeque<u16>>,
    pending: BinaryHeap<Reverse<Pending>>,
    seq: u64,
}

impl<S: Ipv4Payload> NetPcapProbe<S> {
    /// Starts a trace of `s`'s packets entering the directions `taps` (created at [`NetPcapProbe::finish`]).
    pub fn create(path: &Path, s: &Scenario, taps: &[DirId], snaplen: u32) -> std::io::Result<NetPcapProbe<S>> {
        let placed = tcplab_lab::topology::place(s);
        let links: &[LinkSpec] = &placed.spec.links;
        let hosts = placed.spec.hosts.len();
        let ends: Vec<(HostId, HostId)> = links.iter().flat_map(|l| [(l.a, l.b), (l.b, l.a)]).collect();
        let mut tapped = vec![false; ends.len()];
        for d in taps {
            tapped[d.index()] = true;
        }
        let (mut to_port, mut from_port) = (HashMap::new(), HashMap::new());
        for (sender, receiver, port) in tcplab_lab::topology::flow_ends(s) {
            to_port.insert((sender, port), receiver);
            from_port.insert((receiver, port), sender);
        }
        Ok(NetPcapProbe {
            // The two-host tap is never consulted: every record goes through `record`.
            out: PcapProbe::create(path, Tap::Up, snaplen)?,
            tapped,
            routes: Routes::new(hosts, links),
            in_flight: vec![VecDeque::new(); ends.len()],
            ends,
            to_port,
            from_port,
            next_id: vec![0; hosts],
            fragmenting_id: vec![0; hosts],
            pending: BinaryHeap::new(),
            seq: 0,
        })
    }

    /// Encodes the segments with `codec`.
    pub fn with_codec(mut self, codec: S::Codec) -> NetPcapProbe<S> {
        self.out = self.out.with_codec(codec);
        self
    }

    /// Writes what is still pending, flushes the trace and renames it into place; returns the number of
    /// packets.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.flush(Instant::FAR_FUTURE);
        self.out.finish()
    }

    /// The host a packet sent by `host` with ports `(from, to)` goes to.
    fn peer(&self, host: HostId, (from, to): (u16, u16)) -> Option<HostId> {
        self.to_port.get(&(host, to)).or_else(|| self.from_port.get(&(host, from))).copied()
    }

    /// The IPv4 identification of a packet host `h` sends: a new one per datagram, shared by its fragments.
    fn take_id(&mut self, h: HostId, frag: Option<Fragment>) -> u16 {
        let h = h.index();
        if frag.is_some_and(|f| f.offset > 0) {
            return self.fragmenting_id[h];
        }
        let id = self.next_id[h];
        self.next_id[h] = id.wrapping_add(1);
        self.fragmenting_id[h] = id;
        id
    }

    /// Queues the record of `seg` entering `dir` at `at` from `src` to `dst`, if `dir` is traced.
    #[allow(clippy::too_many_arguments)]
    fn enter(&mut self, at: Instant, dir: DirId, src: HostId, dst: HostId, id: u16, seg: &S, frag: Option<Fragment>) {
        if !self.tapped[dir.index()] {
            return;
        }
        let (link_from, link_to) = self.ends[dir.index()];
        if self.out.encode(seg, FrameHosts { src, dst, link_from, link_to }, id, frag) {
            self.seq += 1;
            self.pending.push(Reverse(Pending { at, seq: self.seq, frame: self.out.frame().to_vec() }));
        }
    }

    /// Writes every pending record entering at or before `now`: nothing later can come before them.
    fn flush(&mut self, now: Instant) {
        while self.pending.peek().is_some_and(|p| p.0.at <= now) {
            let Reverse(p) = self.pending.pop().expect("peeked");
            self.out.record(p.at, &p.frame);
        }
    }

    fn on_event(&mut self, now: Instant, ev: PacketEvent, seg: &S, frag: Option<Fragment>) {
        match ev {
            PacketEvent::Sent { host, departs } => {
                let id = self.take_id(host, frag);
                let first = self
                    .peer(host, seg.ports())
                    .and_then(|dst| self.routes.route(host, dst).ok().map(|r| (dst, self.routes.get(r).hops[0])));
                match first {
                    Some((dst, dir)) => {
                        self.in_flight[dir.index()].push_back(id);
                        self.enter(departs, dir, host, dst, id, seg, frag);
                    }
                    None => {
                        let (a, b) = seg.ports();
                        self.out.fail(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("a packet from host {} with ports {a}→{b} belongs to no flow", host.0),
                        ));
                    }
                }
            }
            PacketEvent::NicDropped { host } => {
                // Refused before it got on the wire; the id is not reused, as on a real host.
                self.take_id(host, frag);
            }
            PacketEvent::LinkDropped { dir, .. } => {
                self.in_flight[dir.index()].pop_back();
            }
            PacketEvent::Delivered { dir } => {
                self.in_flight[dir.index()].pop_front();
            }
            PacketEvent::NoSocket { .. } => {}
        }
        self.flush(now);
    }

    fn on_transit(&mut self, now: Instant, hop: Transit, seg: &S, frag: Option<Fragment>) {
        let id = self.in_flight[hop.from.index()].pop_front().unwrap_or(0);
        self.in_flight[hop.to.index()].push_back(id);
        self.enter(now, hop.to, hop.src, hop.dst, id, seg, frag);
        self.flush(now);
    }
}

/// A trace of any transport whose segment encodes as an IPv4 payload.
impl<T: Transport> Probe<T> for NetPcapProbe<T::Segment>
where
    T::Segment: Ipv4Payload,
{
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment) {
        self.on_event(now, ev, seg, None);
    }
    fn on_fragment(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment, frag: Fragment) {
        self.on_event(now, ev, seg, Some(frag));
    }
    fn on_forward(&mut self, now: Instant, hop: Transit, seg: &T::Segment, frag: Option<Fragment>) {
        self.on_transit(now, hop, seg, frag);
    }
}
