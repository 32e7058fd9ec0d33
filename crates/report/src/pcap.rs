//! Packet traces: every packet of a run as seen at one tap, written as a classic pcap file
//! (nanosecond timestamps, link type Ethernet) that Wireshark and tcpdump read.
//!
//! The file format is the plain libpcap format (draft-ietf-opsawg-pcap): a 24-byte file header
//! with the nanosecond magic `0xa1b23c4d`, then per packet a 16-byte record header (seconds,
//! nanoseconds, captured length, original length) and the captured bytes. Each packet is an
//! Ethernet II frame (14 bytes, no FCS, no padding) carrying the IPv4/TCP datagram that
//! [`tcplab_wire::codec::emit_ipv4_tcp`] encodes, checksums included and computed over the whole
//! payload (zeros), so that the captured prefix is exactly what a real capture with that snap length
//! would hold. Timestamps are the simulated time since the start of the run (so the trace starts at
//! the Unix epoch).
//!
//! The writer is generic over the segment ([`PcapProbe<S>`], `S: `[`Ipv4Payload`]): each transport's
//! segment encodes itself as an IPv4 payload, so the writer branches on no protocol. RDP runs (`rdp_stream`,
//! `rdp_rr`) are traced the same way: each packet is an IPv4 datagram of protocol 27 carrying the RDP
//! segment as [`tcplab_wire::codec::rdp::emit_ipv4_rdp`] encodes it (version 2: 16-bit ports
//! and the TCP checksum over the pseudo-header, tcplab's default reading of RFC 1151; header, SYN options and
//! EACK list as sent). Version 1 has 8-bit ports, which the simulator's ports (5001, 32768 and up) do not fit:
//! such a trace stops at the first packet with an error.
//!
//! Addresses: host i of a run is 198.18.0.0 + i + 1 (RFC 2544's benchmarking range, 198.18.0.0/15) with
//! the locally administered MAC 02:00 followed by i + 1 in 32 bits ([`host_addr`], [`host_mac`]): the client
//! is 198.18.0.1 (02:00:00:00:00:01) and the server 198.18.0.2 (02:00:00:00:00:02). The IPv4
//! identification is a per-sending-host counter, so a packet carries the same id at every tap. Runs of more
//! than two hosts (a `[dumbbell]`, a network) are traced on their links by [`crate::pcap_net`].

use std::collections::VecDeque;
use std::io::{BufWriter, Write};
use std::path::Path;

use tcplab_sim::{Fragment, HostId, PacketEvent, Probe, CLIENT, DOWN, SERVER, UP};
use tcplab_transport::Transport;
use tcplab_units::Instant;
use tcplab_wire::codec::{emit_ipv4_fragment, Ipv4Payload, PayloadFill, WireError};
use tcplab_wire::TcpSegment;

/// IPv4 addresses of the client and the server ([`host_addr`] of hosts 0 and 1).
pub const ADDRS: [[u8; 4]; 2] = [[198, 18, 0, 1], [198, 18, 0, 2]];

/// The first address of RFC 2544's benchmarking range 198.18.0.0/15, as a number.
const BENCHMARK_NET: u32 = u32::from_be_bytes([198, 18, 0, 0]);

/// The IPv4 address of host `h` of a run: 198.18.0.0 + h + 1, inside 198.18.0.0/15 for the hosts a
/// scenario may have (at most 20,002, a 10,000-flow dumbbell's).
pub fn host_addr(h: HostId) -> [u8; 4] {
    (BENCHMARK_NET + h.0 + 1).to_be_bytes()
}

/// The Ethernet address of host `h`: locally administered, unicast, 02:00 then h + 1 in 32 bits.
pub fn host_mac(h: HostId) -> [u8; 6] {
    let n = (h.0 + 1).to_be_bytes();
    [2, 0, n[0], n[1], n[2], n[3]]
}

/// Who a frame is between: the IPv4 source and destination are the packet's end hosts; the Ethernet
/// source and destination the hosts at the two ends of the link it is on (the same in the two-host run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHosts {
    pub src: HostId,
    pub dst: HostId,
    pub link_from: HostId,
    pub link_to: HostId,
}

impl FrameHosts {
    /// A frame on the link between its own end hosts.
    pub fn direct(src: HostId, dst: HostId) -> FrameHosts {
        FrameHosts { src, dst, link_from: src, link_to: dst }
    }
}
/// Ethernet addresses of the client and the server (locally administered, unicast).
pub const MACS: [[u8; 6]; 2] = [[2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]];
/// The pcap magic number of a file with nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The default snap length: tcpdump's (whole packets).
pub const DEFAULT_SNAPLEN: u32 = 262_144;
/// Ethernet II header: destination, source, EtherType.
pub const ETH_HEADER_LEN: usize = 14;

/// Where packets are seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tap {
    /// The client's NIC: packets the client hands to it (at the hand-off) and packets delivered to the
    /// client (at delivery). Packets its NIC refuses are not seen, as with a capture on Linux.
    Client,
    /// The server's NIC, likewise.
    Server,
    /// Packets entering the up direction of the path (client to server), when the client's NIC puts
    /// them on the wire; packets the path then loses are included.
    Up,
    /// Packets entering the down direction (server to client).
    Down,
}

impl Tap {
    /// The names `--pcap-at` accepts.
    pub const NAMES: [&'static str; 4] = ["client", "server", "up", "down"];

    pub fn parse(s: &str) -> Option<Tap> {
        match s {
            "client" => Some(Tap::Client),
            "server" => Some(Tap::Server),
            "up" => Some(Tap::Up),
            "down" => Some(Tap::Down),
            _ => None,
        }
    }
}

/// The bytes of the pcap file header.
pub fn file_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone 0, sigfigs 0
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
    h
}

/// Bytes of the Ethernet II header every frame starts with.
const ETHERNET_HEADER: usize = 14;

/// Appends one Ethernet frame carrying `seg` (encoded with `codec`) from host `src` to host `1 - src` to
/// `buf`; leaves `buf` as it was when the segment cannot be encoded (RDP version 1 ports above 255).
pub fn encode_frame<S: Ipv4Payload>(
    seg: &S,
    src: usize,
    ip_id: u16,
    codec: &S::Codec,
    buf: &mut Vec<u8>,
) -> Result<(), WireError> {
    let hosts = FrameHosts::direct(HostId(src as u32), HostId(1 - src as u32));
    encode_frame_between(seg, hosts, ip_id, codec, buf)
}

/// Appends one Ethernet frame carrying `seg` between `hosts` to `buf`; leaves `buf` as it was when the
/// segment cannot be encoded.
pub fn encode_frame_between<S: Ipv4Payload>(
    seg: &S,
    hosts: FrameHosts,
    ip_id: u16,
    codec: &S::Codec,
    buf: &mut Vec<u8>,
) -> Result<(), WireError> {
    let start = buf.len();
    buf.extend_from_slice(&host_mac(hosts.link_to));
    buf.extend_from_slice(&host_mac(hosts.link_from));
    buf.extend_from_slice(&0x0800u16.to_be_bytes());
    let (src, dst) = (host_addr(hosts.src), host_addr(hosts.dst));
    seg.emit_ipv4(src, dst, ip_id, codec, PayloadFill::Zeros, buf).map(|_| ()).inspect_err(|_| {
        buf.truncate(start);
    })
}

/// A probe that writes the packets seen at one tap to a pcap file, through tcplab's one writer
/// ([`tcplab_files::Output`]): a regular file is written beside its target under a temporary name and
/// renamed into place by [`PcapProbe::finish`], so that a file at the target path is always complete; a
/// FIFO or a descriptor path (`/dev/stdout`) receives the packets as they come. `S` is the segment of the
/// transport traced (a probe of any `Transport` whose segment it is).
pub struct PcapProbe<S: Ipv4Payload = TcpSegment> {
    tap: Tap,
    snaplen: u32,
    out: Option<BufWriter<tcplab_files::Output>>,
    err: Option<std::io::Error>,
    /// The next IPv4 identification of each host, and the one of the datagram whose fragments it is sending
    /// (a host sends a datagram's fragments one after another).
    next_id: [u16; 2],
    fragmenting_id: [u16; 2],
    /// The ids of the packets in flight on each direction, in order (the path is FIFO).
    in_flight: [VecDeque<u16>; 2],
    packets: u64,
    frame: Vec<u8>,
    /// A fragment being cut from `frame`.
    fragment: Vec<u8>,
    /// How the segments are encoded (the protocol's open choices: RDP's checksum and SDM bit).
    codec: S::Codec,
}

impl<S: Ipv4Payload> PcapProbe<S> {
    /// Starts a trace for `path` (created at [`PcapProbe::finish`]).
    pub fn create(path: &Path, tap: Tap, snaplen: u32) -> std::io::Result<PcapProbe<S>> {
        let mut out = BufWriter::new(tcplab_files::Output::create(path)?);
        out.write_all(&file_header(snaplen))?;
        Ok(PcapProbe {
            tap,
            snaplen,
            out: Some(out),
            err: None,
            next_id: [0; 2],
            fragmenting_id: [0; 2],
            in_flight: [VecDeque::new(), VecDeque::new()],
            packets: 0,
            frame: Vec::with_capacity(2048),
            fragment: Vec::with_capacity(2048),
            codec: S::Codec::default(),
        })
    }

    /// Encodes the segments with `codec` (RDP's default: the v2 checksum over the pseudo-header, SDM bit
    /// 0x8000).
    pub fn with_codec(mut self, codec: S::Codec) -> PcapProbe<S> {
        self.codec = codec;
        self
    }

    /// Packets written so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Flushes the trace and renames it into place; returns the number of packets.
    pub fn finish(mut self) -> std::io::Result<u64> {
        if let Some(e) = self.err.take() {
            return Err(e);
        }
        let out = self.out.take().expect("finish is called once");
        out.into_inner().map_err(|e| e.into_error())?.commit()?;
        Ok(self.packets)
    }

    fn write(&mut self, at: Instant, seg: &S, src: usize, ip_id: u16, frag: Option<Fragment>) {
        let hosts = FrameHosts::direct(HostId(src as u32), HostId(1 - src as u32));
        if self.encode(seg, hosts, ip_id, frag) {
            let frame = std::mem::take(&mut self.frame);
            self.record(at, &frame);
            self.frame = frame;
        }
    }

    /// Fails the trace with `e` (the first error is the one reported by [`PcapProbe::finish`]).
    pub(crate) fn fail(&mut self, e: std::io::Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
    }

    /// The frame of the last [`PcapProbe::encode`].
    pub(crate) fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// Encodes `seg` (or the fragment `frag` of its datagram) between `hosts` into the probe's frame buffer;
    /// false, with the error kept for [`PcapProbe::finish`], when it cannot be encoded or the trace already
    /// failed.
    pub(crate) fn encode(&mut self, seg: &S, hosts: FrameHosts, ip_id: u16, frag: Option<Fragment>) -> bool {
        if self.out.is_none() || self.err.is_some() {
            return false;
        }
        self.frame.clear();
        if let Err(e) = encode_frame_between(seg, hosts, ip_id, &self.codec, &mut self.frame) {
            let (from, to) = seg.ports();
            self.err = Some(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} segment {from}→{to} cannot be encoded: {e:?}", S::NAME),
            ));
            return false;
        }
        if let Some(f) = frag {
            // The Ethernet header, then the fragment cut from the whole datagram behind it.
            self.fragment.clear();
            self.fragment.extend_from_slice(&self.frame[..ETHERNET_HEADER]);
            let cut = emit_ipv4_fragment(
                &self.frame[ETHERNET_HEADER..],
                f.offset as usize,
                f.len as usize,
                f.more,
                &mut self.fragment,
            );
            if let Err(e) = cut {
                self.err = Some(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("fragment at {} of {} bytes cannot be cut: {e}", f.offset, f.len),
                ));
                return false;
            }
            std::mem::swap(&mut self.frame, &mut self.fragment);
        }
        true
    }

    /// Writes one record: `frame` seen at `at`, cut to the snap length.
    pub(crate) fn record(&mut self, at: Instant, frame: &[u8]) {
        let Some(out) = self.out.as_mut() else { return };
        if self.err.is_some() {
            return;
        }
        let orig = frame.len() as u32;
        let incl = orig.min(self.snaplen);
        let ns = at.as_nanos();
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&incl.to_le_bytes());
        rec[12..16].copy_from_slice(&orig.to_le_bytes());
        let r = out.write_all(&rec).and_then(|_| out.write_all(&frame[..incl as usize]));
        match r {
            Ok(()) => self.packets += 1,
            Err(e) => self.err = Some(e),
        }
    }
}

impl<S: Ipv4Payload> PcapProbe<S> {
    /// What every packet event does to the trace, whatever the transport.
    fn on_event(&mut self, now: Instant, ev: PacketEvent, seg: &S, frag: Option<Fragment>) {
        match ev {
            PacketEvent::Sent { host: at, departs } => {
                // The two-host shape: host `h` (client 0, server 1) sends on direction `h` (up 0, down 1).
                let host = at.index();
                let id = self.take_id(host, frag);
                self.in_flight[host].push_back(id);
                match (self.tap, at) {
                    (Tap::Client, CLIENT) | (Tap::Server, SERVER) => self.write(now, seg, host, id, frag),
                    (Tap::Up, CLIENT) | (Tap::Down, SERVER) => self.write(departs, seg, host, id, frag),
                    _ => {}
                }
            }
            PacketEvent::NicDropped { host } => {
                // Refused before it got on the wire; the id is not reused, as on a real host.
                self.take_id(host.index(), frag);
            }
            PacketEvent::LinkDropped { dir, .. } => {
                // The path decides at once: the packet just sent on `dir` is the last one queued.
                self.in_flight[dir.index()].pop_back();
            }
            PacketEvent::Delivered { dir } => {
                let id = self.in_flight[dir.index()].pop_front().unwrap_or(0);
                match (self.tap, dir) {
                    (Tap::Client, DOWN) | (Tap::Server, UP) => self.write(now, seg, dir.index(), id, frag),
                    _ => {}
                }
            }
            PacketEvent::NoSocket { .. } => {}
        }
    }

    /// The IPv4 identification of a packet host `h` sends: a new one per datagram, shared by its fragments.
    fn take_id(&mut self, host: usize, frag: Option<Fragment>) -> u16 {
        if frag.is_some_and(|f| f.offset > 0) {
            return self.fragmenting_id[host];
        }
        let id = self.next_id[host];
        self.next_id[host] = id.wrapping_add(1);
        self.fragmenting_id[host] = id;
        id
    }
}

/// A trace of any transport whose segment encodes as an IPv4 payload.
impl<T: Transport> Probe<T> for PcapProbe<T::Segment>
where
    T::Segment: Ipv4Payload,
{
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment) {
        self.on_event(now, ev, seg, None);
    }
    fn on_fragment(&mut self, now: Instant, ev: PacketEvent, seg: &T::Segment, frag: Fragment) {
        self.on_event(now, ev, seg, Some(frag));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_is_the_nanosecond_little_endian_header() {
        let h = file_header(128);
        assert_eq!(&h[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u16::from_le_bytes([h[4], h[5]]), 2);
        assert_eq!(u16::from_le_bytes([h[6], h[7]]), 4);
        assert_eq!(u32::from_le_bytes([h[16], h[17], h[18], h[19]]), 128);
        assert_eq!(u32::from_le_bytes([h[20], h[21], h[22], h[23]]), 1);
    }

    /// Hosts 0 and 1 keep the two-host run's addresses; every host a scenario may have (a 10,000-flow
    /// dumbbell's 20,002) stays inside 198.18.0.0/15, each its own.
    #[test]
    fn host_addresses_are_the_benchmark_range_one_per_host() {
        assert_eq!([host_addr(CLIENT), host_addr(SERVER)], ADDRS);
        assert_eq!([host_mac(CLIENT), host_mac(SERVER)], MACS);
        assert_eq!(host_addr(HostId(255)), [198, 18, 1, 0]);
        assert_eq!(host_addr(HostId(20_001)), [198, 18, 78, 34]);
        let last = u32::from_be_bytes(host_addr(HostId(131_070)));
        assert_eq!(last >> 17, u32::from_be_bytes([198, 18, 0, 0]) >> 17, "the last host of a /15");
        assert_eq!(host_mac(HostId(0x0102_0304 - 1)), [2, 0, 1, 2, 3, 4]);
    }

    /// A frame between two hosts of a larger run: IPv4 addresses of the end hosts, Ethernet of the link's.
    #[test]
    fn a_forwarded_frame_carries_its_end_hosts_and_its_links_macs() {
        let seg = TcpSegment {
            src_port: 32768,
            dst_port: 5001,
            seq: tcplab_wire::SeqNumber(1),
            ack: tcplab_wire::SeqNumber(1),
            flags: tcplab_wire::TcpFlags::ACK,
            window: 1000,
            options: Default::default(),
            payload_len: 100,
            ecn: tcplab_wire::EcnCodepoint::NotEct,
        };
        let hosts = FrameHosts { src: HostId(1), dst: HostId(3), link_from: HostId(4), link_to: HostId(5) };
        let mut buf = Vec::new();
        encode_frame_between(&seg, hosts, 9, &(), &mut buf).unwrap();
        assert_eq!(&buf[0..6], &host_mac(HostId(5)));
        assert_eq!(&buf[6..12], &host_mac(HostId(4)));
        let (info, back) = tcplab_wire::codec::parse_ipv4_tcp(&buf[ETH_HEADER_LEN..]).unwrap();
        assert_eq!((info.src, info.dst, info.ident), ([198, 18, 0, 2], [198, 18, 0, 4], 9));
        assert_eq!(back, seg);
    }

    #[test]
    fn frames_parse_back_with_valid_checksums() {
        let seg = TcpSegment {
            src_port: 40000,
            dst_port: 5001,
            seq: tcplab_wire::SeqNumber(7),
            ack: tcplab_wire::SeqNumber(9),
            flags: tcplab_wire::TcpFlags::ACK,
            window: 1000,
            options: Default::default(),
            payload_len: 1448,
            ecn: tcplab_wire::EcnCodepoint::Ce,
        };
        let mut buf = Vec::new();
        encode_frame(&seg, CLIENT.index(), 3, &(), &mut buf).unwrap();
        assert_eq!(buf.len(), ETH_HEADER_LEN + seg.ip_len() as usize);
        assert_eq!(&buf[12..14], &[0x08, 0x00]);
        let (info, back) = tcplab_wire::codec::parse_ipv4_tcp(&buf[ETH_HEADER_LEN..]).unwrap();
        assert_eq!(back, seg);
        assert_eq!(info.src, ADDRS[CLIENT]);
        assert_eq!(info.dst, ADDRS[SERVER]);
        assert_eq!(info.ident, 3);
        assert_eq!(info.tos & 0b11, 0b11, "the ECN field (RFC 3168 §5) in the TOS octet");
    }
}
