//! The real-time link emulator: one thread per direction reads the sender's TUN device, asks
//! `tcplab_link::LinkDirection` for each frame's fate and arrival instant (loss → drop-tail queue → rate
//! server with framing → delay line), and writes the frame to the receiver's TUN device at that instant.
//! A direction with another `qdisc`, or with `jitter`, runs the simulator's stages one by one instead
//! (`crate::stage`: the qdisc holds the frames and is served whenever the serializer goes free, CoDel
//! dropping at the head and marking CE on the real packet, then delay ± jitter and loss).
//!
//! Times are CLOCK_MONOTONIC nanoseconds. A frame's departure and arrival are computed by the model from
//! the instant it was read, never from when the thread happened to wake, so the emulated rate and queueing
//! are exact; waking late only delays the release, and that lateness is measured for every frame.
//!
//! GSO: with `gso` on, the kernel may hand over a TCP super-packet (up to 64 KiB with a virtio-net header).
//! It is split into wire-size frames (headers + `gso_size` bytes of payload each) that the model serves and
//! may drop one by one. On release, the consecutive frames of one super-packet that are due together are
//! written back as one GSO write (the original packet untouched when all of it is due; otherwise a rebuilt
//! sub-packet with its IPv4 length, ID and checksum, TCP sequence number and flags adjusted).

use serde::Serialize;
use tcplab_link::{LinkConfig, LinkStats};
use tcplab_units::Duration;

use crate::tun::{GSO_NONE, VNET_HDR_LEN};

#[cfg(target_os = "linux")]
pub use os::Emulator;

/// One direction of the emulated path.
#[derive(Debug, Clone)]
pub struct DirectionSpec {
    pub link: LinkConfig,
    /// Seed of this direction's loss stream (the simulator's for the same run seed: `tcplab_link::stream_seed`).
    pub seed: u64,
    /// Seed of its qdisc's own stream, apart from the loss model's (as the simulator keeps them apart).
    pub qdisc_seed: u64,
    /// Frames to drop on the wire regardless of the loss model, by 0-based index among the frames that
    /// entered this direction (a super-packet counts one per wire frame). A scripted drop uses its
    /// serialization slot, as a random loss does. Ascending.
    pub drop_frames: Vec<u64>,
    /// Destination prefix this direction forwards (address, prefix length); anything else is dropped and
    /// counted as foreign, so no packet can be forwarded anywhere but the peer namespace.
    pub dst_prefix: ([u8; 4], u8),
}

/// How the emulator threads run.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Accept GSO super-packets (IFF_VNET_HDR with TSO offload) and re-batch on delivery.
    pub gso: bool,
    /// Ask for SCHED_FIFO (priority 50) for the emulator threads.
    pub realtime: bool,
    /// Busy-poll instead of sleeping when the next release is this close. 0: always sleep on the timerfd.
    pub spin: Duration,
    /// Receive coalescing, as a NIC's GRO does, per direction (up: at the server, down: at the client;
    /// a scenario's `host.rx_coalesce`): the first frame of a super-packet may be held this long for the
    /// following frames of the same super-packet, so that they reach the receiver in one write. Frames are
    /// never released early; the hold shows in the lateness figures. 0: every frame at its own instant.
    /// Default 50us both ways (a common NIC interrupt-coalescing delay): at 100 Mbit/s, where frames are
    /// 123 us apart, nothing is held; at 1 Gbit/s it cuts the emulator's writes (and the receiver's
    /// per-packet work) about fourfold.
    pub coalesce: [Duration; 2],
    /// A packet trace from the emulator's own tap ([`PcapSpec`]). Default none.
    pub pcap: Option<PcapSpec>,
    /// Sample each direction's queue at this interval of the run's clock ([`QueueTick`]; a scenario's
    /// `test.series`, docs/outputs.md § Queues over time). Default none: no sampling, no cost.
    pub queue_series: Option<Duration>,
}

/// The clock the queue samples follow, shared by the applications and the emulator threads: the ticks
/// fall on multiples of the interval from the applications' start (`origin`) and, once the measurement
/// opens, from its start (`phase`), the first at its very start — the simulator's ticks. CLOCK_MONOTONIC
/// ns; 0 while unset (the threads sample nothing before the origin).
#[derive(Debug, Default)]
pub struct SeriesClock {
    pub origin: std::sync::atomic::AtomicU64,
    pub phase: std::sync::atomic::AtomicU64,
}

/// One direction's queue at a tick of the series, read at the model's instant of the tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueueTick {
    /// The tick, ns since the series' origin (the applications' start).
    pub t_ns: u64,
    /// Frames and wire bytes waiting (in the qdisc, or the FIFO's backlog), not counting the one on the wire.
    pub backlog_packets: u64,
    pub backlog_bytes: u64,
    /// The serializer's remaining time: on the FIFO's path, how long a frame arriving at the tick would
    /// wait (its sojourn time).
    pub wait_ns: u64,
    /// On the generic path, the qdisc's dequeued count and sojourn sum so far (a series diffs them).
    pub qdisc: Option<(u64, u128)>,
}

/// Where the trace is taken, as `tcplab run --pcap-at` names the taps of the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PcapTap {
    /// The client's interface: frames the client sends, at the instant the emulator read them from its TUN
    /// device (the model's input instant, dropped frames included), and frames delivered to the client, at
    /// the model's arrival instant.
    Client,
    /// The server's interface, likewise.
    Server,
    /// Frames entering the up direction (client to server) at their input instant, dropped ones included.
    Up,
    /// Frames entering the down direction.
    Down,
}

impl PcapTap {
    /// Which record streams the tap needs: (up entered, up delivered, down entered, down delivered).
    fn streams(self) -> [bool; 4] {
        match self {
            PcapTap::Client => [true, false, false, true],
            PcapTap::Server => [false, true, true, false],
            PcapTap::Up => [true, false, false, false],
            PcapTap::Down => [false, false, true, false],
        }
    }
}

/// A packet trace: classic pcap, nanosecond timestamps, LINKTYPE_RAW (IPv4). Every frame is timestamped by
/// the model (its input or arrival instant on a wall clock whose origin is the run's start), never by the
/// instant a thread wrote it; a super-packet appears as its wire frames, with complete checksums. The
/// records of the two directions are merged in time order when the emulator stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcapSpec {
    pub path: std::path::PathBuf,
    pub tap: PcapTap,
    /// Bytes of each frame kept (the record's original length stays the frame's).
    pub snaplen: u32,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            gso: true,
            realtime: true,
            spin: Duration::ZERO,
            coalesce: [Duration::from_micros(50); 2],
            pcap: None,
            queue_series: None,
        }
    }
}

/// The longest a direction thread sleeps, even with nothing due: the resolution at which
/// [`DirectionHealth::wake_lateness`] sees a stall.
pub const HEARTBEAT: Duration = Duration::from_micros(500);

/// Lateness percentiles over a run's samples, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Lateness {
    pub frames: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Lateness {
    fn from_samples(mut v: Vec<u32>) -> Lateness {
        if v.is_empty() {
            return Lateness::default();
        }
        v.sort_unstable();
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize] as u64;
        Lateness { frames: v.len() as u64, p50_ns: at(0.5), p99_ns: at(0.99), max_ns: *v.last().unwrap() as u64 }
    }
}

/// What one direction's thread saw and did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DirectionHealth {
    /// The model's counters (frames in, delivered, queue drops, random losses, deepest queue).
    pub link: LinkStats,
    /// The qdisc's counters (drops by reason, CE marks, sojourn times) when the direction takes the generic
    /// path (a qdisc other than the FIFO, or jitter); `None` on the FIFO's path, as on the simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<tcplab_link::QdiscStats>,
    /// Frames dropped by the `drop_frames` script.
    pub drops_scripted: u64,
    /// Packets that were not IPv4 to the peer's prefix (dropped, never forwarded).
    pub foreign: u64,
    /// Reads from the input device, and how many of them were GSO super-packets.
    pub reads: u64,
    pub super_packets: u64,
    /// Wake-ups that read the most packets one wake-up may read (64) without emptying the input device:
    /// packets were waiting in the kernel's TUN queue, a delay the model does not see. Near zero in a
    /// healthy run; large when the emulator falls behind the sender.
    pub reads_at_cap: u64,
    /// Writes to the output device, and how many failed (a failed write is a hidden drop).
    pub writes: u64,
    pub write_errors: u64,
    /// Release lateness: each frame's write instant minus the model's arrival instant.
    pub lateness: Lateness,
    /// How late the thread woke for its timer (a release instant, or the heartbeat it keeps every
    /// [`HEARTBEAT`] while it waits for input), over every expiry. The longest is the longest time the
    /// emulator could not act: a CPU the hypervisor took away, or an idle vCPU whose wake-up came late.
    /// Release lateness misses such a stall when no frame was due; the sender's packets then wait unseen
    /// in its TUN queue and reach the model in one burst when the thread runs again.
    pub wake_lateness: Lateness,
    /// CPU time of the thread (user + system; includes the receiver's kernel work done inside `write`), s.
    pub cpu_s: f64,
    /// Whether SCHED_FIFO was granted.
    pub realtime: bool,
    /// Frames the model had accepted but whose arrival instant had not come when the emulator stopped
    /// (counted in `link.frames_delivered`, never written).
    pub in_flight_at_stop: u64,
    /// The queue at each tick of the series (with [`EmulatorConfig::queue_series`]), in time order.
    #[serde(skip)]
    pub queue_ticks: Vec<QueueTick>,
}

/// A packet read from the input device, waiting in the delay line as one or more frames.
struct Pkt {
    buf: Vec<u8>,
    len: usize,
    /// IPv4 + TCP header bytes (for splitting); 0 for a packet that is not split.
    hdrs: usize,
    gso_size: usize,
    nseg: u32,
    /// Frames of it still in the delay line.
    pending: u32,
}

const BUF_LEN: usize = VNET_HDR_LEN + 65_536;
/// Builds segments `first..first+count` of super-packet `p` into `out`; returns its length.
fn build_subpacket(p: &Pkt, first: u32, count: u32, out: &mut [u8]) -> usize {
    let ip_len = p.len - VNET_HDR_LEN;
    let payload_total = ip_len - p.hdrs;
    let from = first as usize * p.gso_size;
    let to = ((first + count) as usize * p.gso_size).min(payload_total);
    let last = first + count == p.nseg;
    let h = VNET_HDR_LEN;
    out[..h + p.hdrs].copy_from_slice(&p.buf[..h + p.hdrs]);
    let seg_payload = to - from;
    out[h + p.hdrs..h + p.hdrs + seg_payload].copy_from_slice(&p.buf[h + p.hdrs + from..h + p.hdrs + to]);
    let new_ip_len = p.hdrs + seg_payload;
    // virtio-net header: a single frame is no longer GSO.
    if count == 1 {
        out[1] = GSO_NONE;
        out[4..6].copy_from_slice(&0u16.to_le_bytes());
    }
    out[2..4].copy_from_slice(&(p.hdrs as u16).to_le_bytes());
    let ip = &mut out[h..h + new_ip_len];
    let ihl = (ip[0] & 0x0f) as usize * 4;
    ip[2..4].copy_from_slice(&(new_ip_len as u16).to_be_bytes());
    let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(first as u16);
    ip[4..6].copy_from_slice(&id.to_be_bytes());
    ip[10..12].copy_from_slice(&[0, 0]);
    let c = !fold(sum16(&ip[..ihl], 0));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let tcp = ihl;
    let seq = u32::from_be_bytes([ip[tcp + 4], ip[tcp + 5], ip[tcp + 6], ip[tcp + 7]]).wrapping_add(from as u32);
    ip[tcp + 4..tcp + 8].copy_from_slice(&seq.to_be_bytes());
    if first > 0 {
        ip[tcp + 13] &= !0x80; // CWR only on the first segment
    }
    if !last {
        ip[tcp + 13] &= !(0x01 | 0x08); // FIN and PSH only on the last
    }
    let tcp_len = (new_ip_len - ihl) as u32;
    let mut pseudo = sum16(&ip[12..20], 0);
    pseudo += 6 + tcp_len;
    let needs_csum = out[0] & 1 != 0;
    let ip = &mut out[h..h + new_ip_len];
    if needs_csum {
        // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum; the rest is the receiver's.
        ip[tcp + 16..tcp + 18].copy_from_slice(&fold(pseudo).to_be_bytes());
    } else {
        ip[tcp + 16..tcp + 18].copy_from_slice(&[0, 0]);
        let c = !fold(sum16(&ip[tcp..], pseudo));
        ip[tcp + 16..tcp + 18].copy_from_slice(&c.to_be_bytes());
    }
    h + new_ip_len
}

/// The pcap global header: nanosecond-resolution magic, version 2.4, snaplen 65535, LINKTYPE_RAW (101).
fn pcap_header(snaplen: u32) -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_3c4du32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&snaplen.to_le_bytes());
    h[20..24].copy_from_slice(&101u32.to_le_bytes());
    h
}

/// Appends frame `seg` of `p` as a pcap record at `ts_ns` (since the epoch), completing a partial checksum
/// and keeping at most `snaplen` bytes.
fn pcap_record(out: &mut Vec<u8>, ts_ns: u64, p: &Pkt, seg: u32, scratch: &mut [u8], snaplen: u32) {
    let n = if p.nseg == 1 {
        scratch[..p.len].copy_from_slice(&p.buf[..p.len]);
        p.len
    } else {
        build_subpacket(p, seg, 1, scratch)
    };
    if scratch[0] & 1 != 0 {
        // VIRTIO_NET_HDR_F_NEEDS_CSUM: sum from csum_start (which already holds the pseudo-header sum in
        // the checksum field) and store the complement at csum_start + csum_offset.
        let start = VNET_HDR_LEN + u16::from_le_bytes([scratch[6], scratch[7]]) as usize;
        let at = start + u16::from_le_bytes([scratch[8], scratch[9]]) as usize;
        if at + 2 <= n {
            let c = !fold(sum16(&scratch[start..n], 0));
            scratch[at..at + 2].copy_from_slice(&c.to_be_bytes());
        }
    }
    let ip = &scratch[VNET_HDR_LEN..n];
    out.extend_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
    out.extend_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
    let cap = ip.len().min(snaplen as usize);
    out.extend_from_slice(&(cap as u32).to_le_bytes());
    out.extend_from_slice(&(ip.len() as u32).to_le_bytes());
    out.extend_from_slice(&ip[..cap]);
}

/// Merges pcap record streams (each without a file header, each in time order) into `out` in time order;
/// at equal instants the earlier stream goes first.
fn merge_records(mut inputs: Vec<Box<dyn std::io::Read>>, out: &mut dyn std::io::Write) -> std::io::Result<u64> {
    fn next(r: &mut dyn std::io::Read) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        let mut h = [0u8; 16];
        match r.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let w = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]) as u64;
        let mut rec = vec![0u8; 16 + w(8) as usize];
        rec[..16].copy_from_slice(&h);
        r.read_exact(&mut rec[16..])?;
        Ok(Some((w(0) * 1_000_000_000 + w(4), rec)))
    }
    let mut heads = Vec::new();
    for r in inputs.iter_mut() {
        heads.push(next(r.as_mut())?);
    }
    let mut n = 0;
    loop {
        let best = heads.iter().enumerate().filter_map(|(i, h)| h.as_ref().map(|(t, _)| (*t, i))).min().map(|(_, i)| i);
        let Some(i) = best else { return Ok(n) };
        let (_, rec) = heads[i].take().expect("chosen above");
        out.write_all(&rec)?;
        n += 1;
        heads[i] = next(inputs[i].as_mut())?;
    }
}

pub(crate) fn sum16(b: &[u8], mut acc: u32) -> u32 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        acc = acc.wrapping_add(u16::from_be_bytes([c[0], c[1]]) as u32);
    }
    if let [x] = chunks.remainder() {
        acc = acc.wrapping_add((*x as u32) << 8);
    }
    acc
}

pub(crate) fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The threads themselves (Linux only).
#[cfg(target_os = "linux")]
mod os {
    use std::collections::VecDeque;
    use std::io;
    use std::os::fd::{AsRawFd, OwnedFd, RawFd};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    use std::thread::JoinHandle;

    use tcplab_link::{DropReason, LinkDirection, PacketMeta, Verdict};
    use tcplab_units::Instant;

    use std::io::Write;

    use super::{
        build_subpacket, merge_records, pcap_header, pcap_record, DirectionHealth, DirectionSpec, EmulatorConfig,
        Lateness, PcapSpec, Pkt, QueueTick, SeriesClock, BUF_LEN, HEARTBEAT,
    };
    use crate::error::EmuError;
    use crate::stage::{ecn_of, flow_of, set_ce, Fate, Item, Staged};
    use crate::sys;
    use crate::tun::{GSO_ECN, GSO_TCPV4, VNET_HDR_LEN};

    /// The two running direction threads. Dropping it stops them.
    pub struct Emulator {
        stop: Arc<AtomicBool>,
        threads: Vec<JoinHandle<io::Result<DirectionHealth>>>,
        pub t0_ns: u64,
        /// The trace asked for, where it goes, and the temporaries of its record streams (up entered, up
        /// delivered, down entered, down delivered; `None` for a stream the tap does not need).
        pcap: Option<Trace>,
        /// The queue series' clock (set by the applications through [`Emulator::series_origin`] and
        /// [`Emulator::series_phase`]).
        series: Arc<SeriesClock>,
    }

    /// The files of a trace being taken: every one is a registered temporary of `tcplab_files`, created
    /// exclusively with an unpredictable name, removed on drop, on SIGINT/SIGTERM/SIGHUP, and by the
    /// next run after SIGKILL.
    struct Trace {
        spec: PcapSpec,
        out: tcplab_files::Output,
        parts: Vec<Option<tcplab_files::Temp>>,
    }

    impl Emulator {
        /// Starts forwarding: `up` from `client_tun` to `server_tun`, `down` back.
        pub fn start(
            client_tun: OwnedFd,
            server_tun: OwnedFd,
            up: DirectionSpec,
            down: DirectionSpec,
            cfg: &EmulatorConfig,
        ) -> Result<Emulator, EmuError> {
            let c = Arc::new(client_tun);
            let s = Arc::new(server_tun);
            let stop = Arc::new(AtomicBool::new(false));
            let t0_ns = sys::monotonic_ns();
            let wall0_ns = sys::realtime_ns();
            // One temporary per record stream, beside the trace (or in the temporary directory when the
            // trace goes to a device or descriptor); they are merged in time order when the emulator stops.
            let mut trace = None;
            let mut taps: Vec<Option<Tap>> = (0..4).map(|_| None).collect();
            if let Some(p) = &cfg.pcap {
                let at = |e: io::Error| EmuError::os(format!("writing {}", p.path.display()), e);
                let out = tcplab_files::Output::create(&p.path).map_err(at)?;
                let mut parts: Vec<Option<tcplab_files::Temp>> = (0..4).map(|_| None).collect();
                for (k, on) in p.tap.streams().into_iter().enumerate() {
                    if !on {
                        continue;
                    }
                    let part = tcplab_files::Temp::new_in(&out.scratch_dir()).map_err(at)?;
                    let f = part.file().try_clone().map_err(at)?;
                    taps[k] = Some(Tap {
                        out: io::BufWriter::with_capacity(1 << 20, f),
                        wall0_ns,
                        snaplen: p.snaplen,
                        rec: Vec::with_capacity(BUF_LEN + 16),
                        err: None,
                    });
                    parts[k] = Some(part);
                }
                trace = Some(Trace { spec: p.clone(), out, parts });
            }
            let series = Arc::new(SeriesClock::default());
            let mut emu =
                Emulator { stop: stop.clone(), threads: Vec::new(), t0_ns, pcap: trace, series: series.clone() };
            let mut taps = taps.into_iter();
            for (k, (name, input, output, spec)) in
                [("up", c.clone(), s.clone(), up), ("down", s, c, down)].into_iter().enumerate()
            {
                let stop = stop.clone();
                let cfg = cfg.clone();
                let (entered, delivered) = (taps.next().flatten(), taps.next().flatten());
                let series = series.clone();
                let h = std::thread::Builder::new()
                    .name(format!("tcplab-emu-{name}"))
                    .spawn(move || {
                        let mut d = Direction::new(spec, &cfg, t0_ns, entered, delivered, series);
                        d.run(input.as_raw_fd(), output.as_raw_fd(), &stop, &cfg, cfg.coalesce[k])
                    })
                    .map_err(|e| EmuError::os("starting an emulator thread", e))?;
                emu.threads.push(h);
            }
            Ok(emu)
        }

        /// The queue series starts: ticks fall on multiples of its interval from `at_ns` (CLOCK_MONOTONIC).
        pub fn series_origin(&self, at_ns: u64) {
            self.series.origin.store(at_ns.max(1), Ordering::Release);
        }

        /// The measurement opens at `at_ns`: the ticks re-phase to it, the first at that very instant.
        pub fn series_phase(&self, at_ns: u64) {
            self.series.phase.store(at_ns.max(1), Ordering::Release);
        }

        /// Stops both threads; returns (up, down) health.
        pub fn stop(mut self) -> Result<(DirectionHealth, DirectionHealth), EmuError> {
            self.stop.store(true, Ordering::SeqCst);
            let mut out = Vec::new();
            for h in self.threads.drain(..) {
                match h.join() {
                    Ok(Ok(health)) => out.push(health),
                    Ok(Err(e)) => return Err(EmuError::os("emulator thread", e)),
                    Err(_) => return Err(EmuError::tool("emulator thread", "panicked")),
                }
            }
            let down = out.pop().unwrap_or_default();
            let up = out.pop().unwrap_or_default();
            if let Some(trace) = self.pcap.take() {
                let path = trace.spec.path.clone();
                write_trace(trace).map_err(|e| EmuError::os(format!("writing {}", path.display()), e))?;
            }
            Ok((up, down))
        }
    }

    /// The trace file: the header, then the streams' records merged in time order (a regular file is
    /// written beside the target and renamed into place, so a reader never sees a partial trace). The
    /// parts are read back through the descriptors they were written with, never reopened by name.
    fn write_trace(trace: Trace) -> io::Result<()> {
        use std::io::Seek;
        let Trace { spec, out, parts } = trace;
        let mut inputs: Vec<Box<dyn io::Read>> = Vec::new();
        for p in parts.iter().flatten() {
            let mut f = p.file().try_clone()?;
            f.seek(io::SeekFrom::Start(0))?;
            inputs.push(Box::new(io::BufReader::with_capacity(1 << 20, f)));
        }
        let mut out = io::BufWriter::with_capacity(1 << 20, out);
        out.write_all(&pcap_header(spec.snaplen))?;
        merge_records(inputs, &mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.commit()
        // `parts` are dropped here: their files are removed.
    }

    impl Drop for Emulator {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::SeqCst);
            for h in self.threads.drain(..) {
                let _ = h.join();
            }
            // Dropping the trace removes its temporaries.
            self.pcap.take();
        }
    }

    #[derive(Clone, Copy)]
    struct Frame {
        at_ns: u64,
        pkt: u32,
        seg: u32,
        /// A qdisc marked it Congestion Experienced: set on the packet when it is written.
        ce: bool,
    }

    const READS_PER_WAKEUP: usize = 64;

    struct Direction {
        link: LinkDirection,
        /// The generic path (a qdisc, or jitter); `None`: the drop-tail FIFO decides at arrival.
        staged: Option<Staged>,
        fates: Vec<Fate>,
        drop_frames: Vec<u64>,
        next_drop: usize,
        prefix: (u32, u32),
        t0_ns: u64,
        slab: Vec<Pkt>,
        free: Vec<u32>,
        line: VecDeque<Frame>,
        scratch: Vec<u8>,
        pcap_scratch: Vec<u8>,
        late: Vec<u32>,
        /// How late each timer expiry was noticed, ns.
        wake_late: Vec<u32>,
        h: DirectionHealth,
        /// Trace records of the frames entering this direction, and of those it delivers.
        entered: Option<Tap>,
        delivered: Option<Tap>,
        sampler: Option<Sampler>,
    }

    /// The queue series of one direction: when its next tick falls, and the samples taken.
    struct Sampler {
        every: u64,
        clock: Arc<SeriesClock>,
        /// The next tick, CLOCK_MONOTONIC ns (0: the origin is not set yet).
        next: u64,
        /// The last tick taken (0: none).
        last: u64,
        phased: bool,
        ticks: Vec<QueueTick>,
    }

    impl Sampler {
        /// The next tick at or before `now`, if one is due, moving past it.
        fn due(&mut self, now: u64) -> Option<u64> {
            let load = |a: &AtomicU64| a.load(Ordering::Acquire);
            if self.next == 0 {
                let origin = load(&self.clock.origin);
                if origin == 0 {
                    return None;
                }
                self.next = origin + self.every;
            }
            if !self.phased {
                let phase = load(&self.clock.phase);
                if phase != 0 {
                    self.phased = true;
                    // The first tick at the measurement's start, unless one was already taken at or past it
                    // (the threads see the phase a little after the applications set it).
                    let k = if self.last < phase { 0 } else { (self.last - phase) / self.every + 1 };
                    self.next = phase + k * self.every;
                }
            }
            (self.next <= now).then(|| {
                let at = self.next;
                self.last = at;
                self.next += self.every;
                at
            })
        }

        /// When the thread must wake for the next tick (none before the origin is set).
        fn wake_at(&self) -> Option<u64> {
            (self.next != 0).then_some(self.next)
        }
    }

    /// One record stream of the trace, in time order.
    pub(super) struct Tap {
        out: io::BufWriter<std::fs::File>,
        wall0_ns: u64,
        snaplen: u32,
        rec: Vec<u8>,
        /// The first failed write: the trace is then incomplete, and the run says so when it stops.
        err: Option<io::Error>,
    }

    impl Tap {
        /// Frame `seg` of `p` at `at_ns` of the model's clock (since the run's start); `ce`: as a qdisc
        /// marked it (Congestion Experienced in its IPv4 header).
        fn record(&mut self, at_ns: u64, p: &Pkt, seg: u32, scratch: &mut [u8], ce: bool) {
            if self.err.is_some() {
                return;
            }
            self.rec.clear();
            pcap_record(&mut self.rec, self.wall0_ns + at_ns, p, seg, scratch, self.snaplen);
            // The record's IPv4 header follows its 16-byte record header.
            if ce && self.rec.len() >= 16 + 20 {
                set_ce(&mut self.rec[16..]);
            }
            if let Err(e) = self.out.write_all(&self.rec) {
                self.err = Some(e);
            }
        }

        fn finish(&mut self) -> io::Result<()> {
            match self.err.take() {
                Some(e) => Err(e),
                None => self.out.flush(),
            }
        }
    }

    impl Direction {
        fn new(
            spec: DirectionSpec,
            cfg: &EmulatorConfig,
            t0_ns: u64,
            entered: Option<Tap>,
            delivered: Option<Tap>,
            series: Arc<SeriesClock>,
        ) -> Direction {
            let (addr, len) = spec.dst_prefix;
            let mask = if len == 0 { 0 } else { u32::MAX << (32 - len as u32) };
            Direction {
                link: LinkDirection::new(&spec.link, spec.seed),
                staged: spec.link.is_staged().then(|| Staged::new(&spec.link, spec.qdisc_seed)),
                fates: Vec::new(),
                drop_frames: spec.drop_frames,
                next_drop: 0,
                prefix: (u32::from_be_bytes(addr) & mask, mask),
                t0_ns,
                slab: Vec::new(),
                free: Vec::new(),
                line: VecDeque::with_capacity(4096),
                scratch: vec![0; BUF_LEN],
                pcap_scratch: if entered.is_some() || delivered.is_some() { vec![0; BUF_LEN] } else { Vec::new() },
                late: Vec::with_capacity(1 << 16),
                wake_late: Vec::with_capacity(1 << 16),
                h: DirectionHealth::default(),
                entered,
                delivered,
                sampler: cfg.queue_series.filter(|d| !d.is_zero()).map(|d| Sampler {
                    every: d.as_nanos(),
                    clock: series,
                    next: 0,
                    last: 0,
                    phased: false,
                    ticks: Vec::new(),
                }),
            }
        }

        /// Takes every tick of the queue series due by `now`, each at the model's instant of the tick: the
        /// generic path is served up to it first, and nothing that entered after it has been offered yet
        /// (the ticks are taken before each frame read is admitted).
        fn sample(&mut self, now: u64) {
            while let Some(at) = self.sampler.as_mut().and_then(|s| s.due(now)) {
                let t = Instant::from_nanos(at.saturating_sub(self.t0_ns));
                let (backlog_packets, backlog_bytes, qdisc) = match self.staged.as_mut() {
                    Some(st) => {
                        st.advance(&mut self.link, t, &mut self.fates);
                        let q = st.stats();
                        (st.len_packets() as u64, st.len_bytes(), Some((q.dequeued, q.sojourn_sum_ns)))
                    }
                    None => {
                        let (n, b) = self.link.backlog_at(t);
                        (n as u64, b, None)
                    }
                };
                self.settle();
                let s = self.sampler.as_mut().expect("sampling");
                let origin = s.clock.origin.load(Ordering::Acquire);
                s.ticks.push(QueueTick {
                    t_ns: at - origin,
                    backlog_packets,
                    backlog_bytes,
                    wait_ns: self.link.wait_at(t).as_nanos(),
                    qdisc,
                });
            }
        }

        fn run(
            &mut self,
            input: RawFd,
            output: RawFd,
            stop: &AtomicBool,
            cfg: &EmulatorConfig,
            coalesce: tcplab_units::Duration,
        ) -> io::Result<DirectionHealth> {
            sys::set_timer_slack_1ns();
            self.h.realtime = cfg.realtime && sys::try_sched_fifo(50);
            let cpu0 = sys::thread_cpu_ns();
            let timer = sys::TimerFd::new()?;
            let ep = sys::Epoll::new()?;
            ep.add_in(input)?;
            ep.add_in(timer.raw())?;
            let spin = cfg.spin.as_nanos();
            let hold = coalesce.as_nanos();
            let heartbeat = HEARTBEAT.as_nanos();
            // The instant the timer is set for; 0 once it has fired.
            let mut armed = 0u64;
            while !stop.load(Ordering::Relaxed) {
                self.sample(sys::monotonic_ns());
                self.read_some(input)?;
                let now = sys::monotonic_ns();
                self.sample(now);
                let serve = self.serve(now);
                let next = self.release(output, now, hold);
                let next = [next, serve, self.sampler.as_ref().and_then(Sampler::wake_at)].into_iter().flatten().min();
                let now = sys::monotonic_ns();
                if next.is_some_and(|at| at <= now + spin) {
                    continue;
                }
                // Even with nothing due the thread wakes every HEARTBEAT, so that a stall while it waits for
                // input shows as a late wake-up (below), not only as a burst at the receiver.
                let deadline = next.map_or(now + heartbeat, |at| at.min(now + heartbeat));
                if armed == 0 || deadline < armed {
                    timer.set_abs(deadline)?;
                    armed = deadline;
                }
                ep.wait(20)?;
                let woke = sys::monotonic_ns();
                if armed != 0 && armed <= woke {
                    self.wake_late.push(woke.saturating_sub(armed).min(u32::MAX as u64) as u32);
                    timer.drain();
                    armed = 0;
                }
            }
            for tap in [&mut self.entered, &mut self.delivered].into_iter().flatten() {
                tap.finish()?;
            }
            self.h.link = self.link.stats();
            self.h.qdisc = self.staged.as_ref().map(Staged::stats);
            self.h.in_flight_at_stop = self.line.len() as u64;
            self.h.queue_ticks = self.sampler.take().map(|s| s.ticks).unwrap_or_default();
            self.h.lateness = Lateness::from_samples(std::mem::take(&mut self.late));
            self.h.wake_lateness = Lateness::from_samples(std::mem::take(&mut self.wake_late));
            self.h.cpu_s = (sys::thread_cpu_ns() - cpu0) as f64 * 1e-9;
            Ok(self.h.clone())
        }

        fn alloc(&mut self) -> u32 {
            if let Some(i) = self.free.pop() {
                return i;
            }
            self.slab.push(Pkt { buf: vec![0; BUF_LEN], len: 0, hdrs: 0, gso_size: 0, nseg: 0, pending: 0 });
            (self.slab.len() - 1) as u32
        }

        fn read_some(&mut self, input: RawFd) -> io::Result<()> {
            for _ in 0..READS_PER_WAKEUP {
                let i = self.alloc();
                let n = match sys::read_nb(input, &mut self.slab[i as usize].buf)? {
                    Some(n) => n,
                    None => {
                        self.free.push(i);
                        return Ok(());
                    }
                };
                let now = sys::monotonic_ns();
                self.h.reads += 1;
                self.sample(now);
                self.admit(i, n, now);
            }
            self.h.reads_at_cap += 1;
            Ok(())
        }

        /// Splits packet `i` into frames and offers each to the model.
        fn admit(&mut self, i: u32, n: usize, now: u64) {
            let p = &mut self.slab[i as usize];
            p.len = n;
            p.pending = 0;
            let b = &p.buf[..n];
            if n < VNET_HDR_LEN + 20 || b[VNET_HDR_LEN] >> 4 != 4 {
                self.h.foreign += 1;
                self.free.push(i);
                return;
            }
            let ip = &b[VNET_HDR_LEN..];
            let dst = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]);
            if dst & self.prefix.1 != self.prefix.0 {
                self.h.foreign += 1;
                self.free.push(i);
                return;
            }
            let gso_type = b[1] & !GSO_ECN;
            let gso_size = u16::from_le_bytes([b[4], b[5]]) as usize;
            let ip_len = n - VNET_HDR_LEN;
            let ihl = (ip[0] & 0x0f) as usize * 4;
            let (hdrs, nseg) = if gso_type == GSO_TCPV4 && gso_size > 0 && ip_len > ihl + 20 {
                let doff = (ip[ihl + 12] >> 4) as usize * 4;
                let hdrs = ihl + doff;
                let payload = ip_len.saturating_sub(hdrs);
                (hdrs, payload.div_ceil(gso_size).max(1) as u32)
            } else {
                (0, 1)
            };
            if nseg > 1 {
                self.h.super_packets += 1;
            }
            p.hdrs = hdrs;
            p.gso_size = gso_size;
            p.nseg = nseg;
            // Whether the datagram carries TCP payload (for data-only loss filters): a super-packet always
            // does; otherwise IPv4 total length beyond the IP and TCP headers.
            let carries_data = nseg > 1 || {
                let tcp = ip.len() > ihl + 12 && ip[9] == 6;
                tcp && ip_len > ihl + (ip[ihl + 12] >> 4) as usize * 4
            };
            let t = Instant::from_nanos(now.saturating_sub(self.t0_ns));
            if self.staged.is_some() {
                let (ect, ce) = ecn_of(ip);
                let flow = flow_of(ip);
                self.slab[i as usize].pending = nseg;
                for seg in 0..nseg {
                    if let Some(tap) = &mut self.entered {
                        tap.record(t.as_nanos(), &self.slab[i as usize], seg, &mut self.pcap_scratch, false);
                    }
                    let frame_len =
                        if nseg == 1 { ip_len } else { hdrs + gso_size.min(ip_len - hdrs - seg as usize * gso_size) };
                    let index = self.link.stats().frames_in;
                    let scripted = self.drop_frames.get(self.next_drop) == Some(&index);
                    if scripted {
                        self.next_drop += 1;
                    }
                    let meta =
                        PacketMeta { wire_len: self.link.wire_len(frame_len as u32), flow, ect, ce, enqueued: t };
                    let item = Item { pkt: i, seg, scripted, carries_data };
                    let st = self.staged.as_mut().expect("checked");
                    st.offer(&mut self.link, t, meta, item, &mut self.fates);
                    self.settle();
                }
                return;
            }
            let mut pending = 0;
            for seg in 0..nseg {
                if let Some(tap) = &mut self.entered {
                    tap.record(t.as_nanos(), &self.slab[i as usize], seg, &mut self.pcap_scratch, false);
                }
                let frame_len =
                    if nseg == 1 { ip_len } else { hdrs + gso_size.min(ip_len - hdrs - seg as usize * gso_size) };
                let index = self.link.stats().frames_in;
                let verdict = self.link.send(t, frame_len as u32, carries_data);
                let scripted = self.drop_frames.get(self.next_drop) == Some(&index);
                if scripted {
                    self.next_drop += 1;
                }
                match verdict {
                    Verdict::Deliver(_) if scripted => self.h.drops_scripted += 1,
                    Verdict::Deliver(at) => {
                        self.line.push_back(Frame { at_ns: self.t0_ns + at.as_nanos(), pkt: i, seg, ce: false });
                        pending += 1;
                    }
                    Verdict::Drop(DropReason::QueueFull | DropReason::RandomLoss | DropReason::Aqm) => {}
                }
            }
            self.slab[i as usize].pending = pending;
            if pending == 0 {
                self.free.push(i);
            }
        }

        /// The generic path: serves the qdisc up to `now` (at the model's instants); returns when the
        /// serializer next takes a frame from it.
        fn serve(&mut self, now: u64) -> Option<u64> {
            let st = self.staged.as_mut()?;
            let t = Instant::from_nanos(now.saturating_sub(self.t0_ns));
            st.advance(&mut self.link, t, &mut self.fates);
            let next = st.next_dequeue(&self.link).map(|at| self.t0_ns + at.as_nanos());
            self.settle();
            next
        }

        /// Moves what the stage decided onto the delay line (in arrival order: a frame that overtakes, with
        /// `reorder`, goes ahead of later ones) or back to the slab.
        fn settle(&mut self) {
            let mut fates = std::mem::take(&mut self.fates);
            for f in fates.drain(..) {
                let item = match f {
                    Fate::Deliver { item, at, ce } => {
                        let at_ns = self.t0_ns + at.as_nanos();
                        let pos = self.line.iter().rposition(|g| g.at_ns <= at_ns).map_or(0, |k| k + 1);
                        self.line.insert(pos, Frame { at_ns, pkt: item.pkt, seg: item.seg, ce });
                        continue;
                    }
                    Fate::Drop { item, scripted, .. } => {
                        if scripted {
                            self.h.drops_scripted += 1;
                        }
                        item
                    }
                };
                let p = &mut self.slab[item.pkt as usize];
                p.pending -= 1;
                if p.pending == 0 {
                    self.free.push(item.pkt);
                }
            }
            self.fates = fates;
        }

        /// Writes every frame due by `now`, coalescing consecutive frames of one super-packet (those due within
        /// `hold` of the first are waited for). Returns when to call again.
        fn release(&mut self, output: RawFd, now: u64, hold: u64) -> Option<u64> {
            while let Some(&first) = self.line.front() {
                if first.at_ns > now {
                    return Some(first.at_ns);
                }
                let mut count = 1u32;
                let mut last_at = first.at_ns;
                for f in self.line.iter().skip(1) {
                    let due = if hold > 0 { first.at_ns + hold } else { now };
                    if f.pkt != first.pkt || f.seg != first.seg + count || f.at_ns > due || f.ce != first.ce {
                        break;
                    }
                    count += 1;
                    last_at = f.at_ns;
                }
                if last_at > now {
                    return Some(last_at);
                }
                for _ in 0..count {
                    let f = self.line.pop_front().expect("counted above");
                    self.record_late(now, f.at_ns);
                    if let Some(tap) = &mut self.delivered {
                        let at = f.at_ns - self.t0_ns;
                        tap.record(at, &self.slab[f.pkt as usize], f.seg, &mut self.pcap_scratch, f.ce);
                    }
                }
                let p = &mut self.slab[first.pkt as usize];
                let r = if p.nseg == count {
                    if first.ce {
                        set_ce(&mut p.buf[VNET_HDR_LEN..p.len]);
                    }
                    sys::write_all(output, &p.buf[..p.len])
                } else {
                    let n = build_subpacket(p, first.seg, count, &mut self.scratch);
                    if first.ce {
                        set_ce(&mut self.scratch[VNET_HDR_LEN..n]);
                    }
                    sys::write_all(output, &self.scratch[..n])
                };
                self.h.writes += 1;
                if r.is_err() {
                    self.h.write_errors += 1;
                }
                let p = &mut self.slab[first.pkt as usize];
                p.pending -= count;
                if p.pending == 0 {
                    self.free.push(first.pkt);
                }
            }
            None
        }

        fn record_late(&mut self, now: u64, at: u64) {
            self.late.push(now.saturating_sub(at).min(u32::MAX as u64) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tun::GSO_TCPV4;

    /// A GSO super-packet of three 100-byte segments (IPv4 20 B + TCP 20 B headers).
    fn superpacket() -> Pkt {
        let mut buf = vec![0u8; BUF_LEN];
        let payload = 250;
        buf[0] = 1; // NEEDS_CSUM
        buf[1] = GSO_TCPV4;
        buf[4..6].copy_from_slice(&100u16.to_le_bytes());
        let ip = &mut buf[VNET_HDR_LEN..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((40 + payload) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&7u16.to_be_bytes());
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[198, 18, 0, 1]);
        ip[16..20].copy_from_slice(&[198, 18, 1, 1]);
        ip[24..28].copy_from_slice(&1000u32.to_be_bytes());
        ip[32] = 5 << 4;
        ip[33] = 0x18 | 0x01; // PSH ACK FIN
        for (k, b) in ip[40..40 + payload].iter_mut().enumerate() {
            *b = k as u8;
        }
        Pkt { buf, len: VNET_HDR_LEN + 40 + payload, hdrs: 40, gso_size: 100, nseg: 3, pending: 3 }
    }

    #[test]
    fn a_middle_segment_becomes_a_plain_packet_with_its_own_sequence_number() {
        let p = superpacket();
        let mut out = vec![0u8; BUF_LEN];
        let n = build_subpacket(&p, 1, 1, &mut out);
        assert_eq!(n, VNET_HDR_LEN + 140);
        assert_eq!(out[1], GSO_NONE);
        let ip = &out[VNET_HDR_LEN..n];
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 140);
        assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 8);
        assert_eq!(fold(sum16(&ip[..20], 0)), 0xffff, "IPv4 header checksum verifies");
        assert_eq!(u32::from_be_bytes([ip[24], ip[25], ip[26], ip[27]]), 1100);
        assert_eq!(ip[33], 0x10, "no PSH or FIN before the last segment");
        assert_eq!(ip[40], 100u8, "payload starts at byte 100 of the original");
    }

    #[test]
    fn the_tail_keeps_fin_and_its_short_length() {
        let p = superpacket();
        let mut out = vec![0u8; BUF_LEN];
        let n = build_subpacket(&p, 1, 2, &mut out);
        let ip = &out[VNET_HDR_LEN..n];
        assert_eq!(out[1], GSO_TCPV4, "two segments stay one GSO write");
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 40 + 150);
        assert_eq!(ip[33], 0x19);
        // The partial checksum field holds the pseudo-header sum for the new length.
        let pseudo = fold(sum16(&ip[12..20], 0) + 6 + 170);
        assert_eq!(u16::from_be_bytes([ip[36], ip[37]]), pseudo);
    }

    #[test]
    fn lateness_percentiles() {
        let l = Lateness::from_samples((1..=100).collect());
        assert_eq!((l.frames, l.p50_ns, l.p99_ns, l.max_ns), (100, 51, 99, 100));
    }
}
