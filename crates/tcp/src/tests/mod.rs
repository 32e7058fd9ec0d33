//! Scripted, segment-by-segment tests of the connection (smoltcp style): put a segment in at time t,
//! expect exactly these segments out.
//!
//! Conventions used by every file here:
//!
//! * The connection under test is "local" (port [`LOCAL_PORT`], ISS [`LOCAL_ISS`]); the scripted peer is
//!   "remote" (port [`REMOTE_PORT`], ISS [`REMOTE_ISS`]). [`out`] builds a segment the connection sends,
//!   [`inp`] one the peer sends. In the two-connection tests the client is local and the server remote.
//! * Times are whole milliseconds of virtual time ([`at`]). With the default 1 ms timestamp tick the
//!   connection's TSval at `t` ms is `t + 1` ([`ts`]; conn.rs offsets the clock by one so no TSval is 0).
//!   The scripted peer's TSval at `t` ms is `REMOTE_TS0 + t` ([`pts`]).
//! * `send!(conn, time t, segment)` injects a segment; `recv!(conn, time t, [segments...])` polls the
//!   connection until it is quiet and asserts the exact list it emitted, every header field and option
//!   compared; `recv_nothing!(conn, time t)` asserts silence.
//! * Fixtures ([`client_syn_sent`], [`client_established`], [`server_syn_received`],
//!   [`server_established`]) script the handshake, asserting each segment on the way.
//! * [`pair::Pair`] wires two real connections together at a fixed one-way latency on virtual time, for
//!   the transfer, loss and flow-control tests.
//!
//! Tests are named `test_<state>_<event>`. Each asserts values worked out by hand from the RFCs; the doc
//! comment on each says how.

use tcplab_units::{ByteSize, Duration, Instant};
use tcplab_wire::{SackBlock, SackBlocks, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

use crate::{Connection, State, TcpConfig, TxRoom};

pub(crate) use fast_path::{note_ack_predicted, note_predicted, slow_path_only};

// ------------------------------------------------------------------------------------------------
// Macros (defined before the submodules so that they are in scope there).
// ------------------------------------------------------------------------------------------------

/// `send!(conn, time t_ms, segment)`: the connection receives `segment` at `t_ms`.
macro_rules! send {
    ($c:expr, time $t:expr, $seg:expr) => {
        $c.on_segment($crate::tests::at($t), &$seg)
    };
}

/// `recv!(conn, time t_ms, [seg, ...])`: everything the connection transmits at `t_ms`, exactly.
macro_rules! recv {
    ($c:expr, time $t:expr, [$($seg:expr),* $(,)?]) => {{
        let got = $crate::tests::transmit_all(&mut $c, $crate::tests::at($t));
        let want: Vec<tcplab_wire::TcpSegment> = vec![$($seg),*];
        $crate::tests::assert_segments(&got, &want);
    }};
}

/// `recv_nothing!(conn, time t_ms)`: the connection has nothing to send at `t_ms`.
macro_rules! recv_nothing {
    ($c:expr, time $t:expr) => {
        recv!($c, time $t, [])
    };
}

mod close;
mod data;
mod ecn;
mod fast_path;
mod flow;
mod fuzz;
mod handshake;
mod knobs;
mod linux;
mod linux_frto;
mod linux_growth_packets;
mod linux_in_flight;
mod linux_rack_dsack;
mod linux_rcv_space;
mod linux_rcv_truesize;
mod linux_recovery_reentry;
mod linux_sack_flush;
mod linux_too_old_ack;
mod loss;
mod pacing;
mod pair;
mod pdrill;
mod pdrill2;
mod pdrill3;
mod pdrill4;
mod pdrill5;
mod perf_seams;
mod rack;
mod review;
mod rto;
mod stacks;
mod web100_dup_acks_in;
mod wrap;

// ------------------------------------------------------------------------------------------------
// Constants
// ------------------------------------------------------------------------------------------------

pub(crate) const LOCAL_PORT: u16 = 4000;
pub(crate) const REMOTE_PORT: u16 = 5000;
/// ISS of the connection under test: its SYN is 10000, its first data byte 10001.
pub(crate) const LOCAL_ISS: u32 = 10_000;
/// ISS of the peer: its SYN is 50000, its first data byte 50001.
pub(crate) const REMOTE_ISS: u32 = 50_000;
/// The window scale the scripted peer offers: its window fields count 4-byte units.
pub(crate) const REMOTE_WSCALE: u8 = 2;
/// The scripted peer's SYN-ACK / SYN window (unscaled, as every SYN window is). Chosen as a multiple
/// of 4 so that the peer's later ACKs can repeat exactly the same window (16383 << 2 = 65532 bytes):
/// RFC 5681 §2 duplicate ACKs must carry an unchanged window.
pub(crate) const REMOTE_SYN_WINDOW: u16 = 65_532;
/// The window field of the scripted peer's ACKs after the handshake: 16383 << 2 = 65532 bytes.
pub(crate) const REMOTE_WINDOW: u16 = 16_383;
/// The scripted peer's timestamp clock at t = 0.
pub(crate) const REMOTE_TS0: u32 = 7_000_000;
/// Default MSS option 1460 minus 12 bytes of timestamps option (RFC 7323 §3.2, RFC 6691).
pub(crate) const SMSS_TS: u32 = 1448;

pub(crate) const SYN: TcpFlags = TcpFlags::SYN;
pub(crate) const SYN_ACK: TcpFlags = TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0);
pub(crate) const ACK: TcpFlags = TcpFlags::ACK;
pub(crate) const PSH_ACK: TcpFlags = TcpFlags(TcpFlags::PSH.0 | TcpFlags::ACK.0);
pub(crate) const FIN_ACK: TcpFlags = TcpFlags(TcpFlags::FIN.0 | TcpFlags::ACK.0);

// ------------------------------------------------------------------------------------------------
// Time
// ------------------------------------------------------------------------------------------------

/// `t_ms` milliseconds of virtual time.
pub(crate) fn at(t_ms: u64) -> Instant {
    Instant::from_nanos(t_ms * 1_000_000)
}

/// The connection's TSval at `t_ms` with the default 1 ms tick: `t_ms / 1ms + 1`.
pub(crate) fn ts(t_ms: u64) -> u32 {
    t_ms as u32 + 1
}

/// The scripted peer's TSval at `t_ms`.
pub(crate) fn pts(t_ms: u64) -> u32 {
    REMOTE_TS0 + t_ms as u32
}

/// Asserts that the connection's next timer is at `t_ms`, then runs it.
#[track_caller]
pub(crate) fn fire(c: &mut Connection, t_ms: u64) {
    assert_eq!(c.poll_timeout(), Some(at(t_ms)), "next timer");
    c.on_timeout(at(t_ms));
}

// ------------------------------------------------------------------------------------------------
// Segments
// ------------------------------------------------------------------------------------------------

fn segment(src: u16, dst: u16, seq: u32, ack: u32, flags: TcpFlags, window: u16, len: u32) -> TcpSegment {
    TcpSegment {
        src_port: src,
        dst_port: dst,
        seq: SeqNumber(seq),
        // The ACK field is only meaningful with the ACK flag; conn.rs leaves it 0 otherwise.
        ack: SeqNumber(if flags.ack() { ack } else { 0 }),
        flags,
        window,
        options: TcpOptions::default(),
        payload_len: len,
        ecn: tcplab_wire::EcnCodepoint::NotEct,
    }
}

/// A segment sent by the connection under test (local → remote).
pub(crate) fn out(seq: u32, ack: u32, flags: TcpFlags, window: u16, len: u32) -> TcpSegment {
    segment(LOCAL_PORT, REMOTE_PORT, seq, ack, flags, window, len)
}

/// A segment sent by the peer (remote → local).
pub(crate) fn inp(seq: u32, ack: u32, flags: TcpFlags, window: u16, len: u32) -> TcpSegment {
    segment(REMOTE_PORT, LOCAL_PORT, seq, ack, flags, window, len)
}

/// Option setters, chained onto [`out`] / [`inp`].
pub(crate) trait SegmentExt: Sized {
    fn ts(self, tsval: u32, tsecr: u32) -> Self;
    fn sack(self, blocks: &[(u32, u32)]) -> Self;
    fn mss(self, mss: u16) -> Self;
    fn wscale(self, shift: u8) -> Self;
    fn sack_permitted(self) -> Self;
}

impl SegmentExt for TcpSegment {
    fn ts(mut self, tsval: u32, tsecr: u32) -> Self {
        self.options.timestamps = Some(Timestamps { tsval, tsecr });
        self
    }
    fn sack(mut self, blocks: &[(u32, u32)]) -> Self {
        let mut s = SackBlocks::default();
        for &(l, r) in blocks {
            assert!(s.push(SackBlock { left: SeqNumber(l), right: SeqNumber(r) }));
        }
        self.options.sack = s;
        self
    }
    fn mss(mut self, mss: u16) -> Self {
        self.options.mss = Some(mss);
        self
    }
    fn wscale(mut self, shift: u8) -> Self {
        self.options.window_scale = Some(shift);
        self
    }
    fn sack_permitted(mut self) -> Self {
        self.options.sack_permitted = true;
        self
    }
}

/// Polls until the connection is quiet.
pub(crate) fn transmit_all(c: &mut Connection, now: Instant) -> Vec<TcpSegment> {
    let mut v = Vec::new();
    while let Some(s) = c.poll_transmit(now, TxRoom::Free) {
        v.push(s);
        assert!(v.len() <= 10_000, "poll_transmit never returns None");
    }
    v
}

#[track_caller]
pub(crate) fn assert_segments(got: &[TcpSegment], want: &[TcpSegment]) {
    if got != want {
        let mut msg = format!("emitted {} segment(s), expected {}\n", got.len(), want.len());
        for i in 0..got.len().max(want.len()) {
            let g = got.get(i).map_or("-".to_string(), describe);
            let w = want.get(i).map_or("-".to_string(), describe);
            let mark = if got.get(i) == want.get(i) { "  " } else { "!!" };
            msg += &format!("{mark} #{i}\n     got:  {g}\n     want: {w}\n");
        }
        panic!("{msg}");
    }
}

/// One line per segment, tcpdump-like, with every field `TcpSegment` compares.
pub(crate) fn describe(s: &TcpSegment) -> String {
    format!(
        "{}>{} {:?} seq {} ack {} win {} len {} {:?}",
        s.src_port, s.dst_port, s.flags, s.seq, s.ack, s.window, s.payload_len, s.options
    )
}

// ------------------------------------------------------------------------------------------------
// Configurations
// ------------------------------------------------------------------------------------------------

pub(crate) fn cfg() -> TcpConfig {
    TcpConfig::default()
}

pub(crate) fn cfg_no_ts() -> TcpConfig {
    TcpConfig { timestamps: false, ..TcpConfig::default() }
}

/// The `linux` personality with 4 MiB buffers (the window never limits a test's flight) and without
/// TSO (one segment per transmission, so a test's filter drops exactly the segment it counts).
pub(crate) fn linux_4mib_no_tso() -> TcpConfig {
    TcpConfig {
        send_buffer: ByteSize::new(4 << 20),
        recv_buffer: ByteSize::new(4 << 20),
        tso: false,
        ..TcpConfig::personality("linux").unwrap()
    }
}

pub(crate) fn cfg_bytes(b: u64) -> ByteSize {
    ByteSize::new(b)
}

pub(crate) fn dur_ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

// ------------------------------------------------------------------------------------------------
// Fixtures: the connection under test in a given state, reached by a scripted exchange.
// ------------------------------------------------------------------------------------------------

/// The SYN a default-configured (`cfg`) active opener sends at `t_ms` (its first or a repeated one).
/// 64 KiB receive buffer: 65536 >> 1 fits 16 bits, so window scale 1 (RFC 7323 §2.3); the SYN's own
/// window is never scaled, so it says min(65536, 65535) = 65535.
/// Under `initial_recv_window_whole_mss` (`linux`) the 65536 bytes are first rounded down to whole
/// segments of 1460: 44 × 1460 = 64240.
pub(crate) fn expected_syn(cfg: &TcpConfig, t_ms: u64) -> TcpSegment {
    let window = if cfg.initial_recv_window_whole_mss { 64_240 } else { 65_535 };
    let mut s = out(LOCAL_ISS, 0, SYN, window, 0).mss(1460);
    if cfg.window_scaling {
        s = s.wscale(1);
    }
    if cfg.sack {
        s = s.sack_permitted();
    }
    if cfg.timestamps {
        s = s.ts(ts(t_ms), 0);
    }
    s
}

/// An active opener that sent its SYN at t = 0 (asserted exactly). Retransmission timer: 1 s
/// (RFC 6298 (2.1) initial RTO).
pub(crate) fn client_syn_sent(cfg: TcpConfig) -> Connection {
    let mut c = Connection::connect(cfg.clone(), LOCAL_PORT, REMOTE_PORT, LOCAL_ISS);
    assert_eq!(c.state(), State::SynSent);
    recv!(c, time 0, [expected_syn(&cfg, 0)]);
    assert_eq!(c.poll_timeout(), Some(at(1000)));
    c
}

/// The peer's SYN-ACK at `t_ms`, answering the SYN of a `cfg` client: it offers back exactly what the
/// client offered (MSS 1460, window scale [`REMOTE_WSCALE`], SACK-permitted, timestamps echoing the
/// SYN's TSval 1).
pub(crate) fn peer_syn_ack(cfg: &TcpConfig, t_ms: u64) -> TcpSegment {
    let mut s = inp(REMOTE_ISS, LOCAL_ISS + 1, SYN_ACK, REMOTE_SYN_WINDOW, 0).mss(1460);
    if cfg.window_scaling {
        s = s.wscale(REMOTE_WSCALE);
    }
    if cfg.sack {
        s = s.sack_permitted();
    }
    if cfg.timestamps {
        s = s.ts(pts(t_ms), ts(0));
    }
    s
}

/// A client in ESTABLISHED: SYN at t = 0, the peer's SYN-ACK at t = 10 ms, the client's ACK at 10 ms.
///
/// After this (default config): SND.NXT = 10001, RCV.NXT = 50001, SND.WND = 65532 (the SYN-ACK's
/// unscaled window), SMSS 1448 (1460 − 12 with timestamps), cwnd = RFC 3390 IW = min(4·1448,
/// max(2·1448, 4380)) = 4380, one RTT sample of 10 ms (TSecr 1 echoed at TSval 11), so RTO = max(10 +
/// 4·5, 1 s) = 1 s. The ACK's window: 64 KiB buffer, scale 1 → 65536 >> 1 = 32768 (the right edge moves
/// from 50001 + 65535 by one byte: RCV.ADV only rounds up, never left).
pub(crate) fn client_established(cfg: TcpConfig) -> Connection {
    let mut c = client_syn_sent(cfg.clone());
    send!(c, time 10, peer_syn_ack(&cfg, 10));
    assert_eq!(c.state(), State::Established);
    // Under `initial_recv_window_whole_mss` the edge stays where the SYN's 64240 put it (the buffer's
    // 1296 more bytes are less than an MSS): 64240 >> 1.
    let window = match (cfg.window_scaling, cfg.initial_recv_window_whole_mss) {
        (true, false) => 32_768,
        (true, true) => 32_120,
        (false, _) => 65_535,
    };
    let with_ts = ack_ts(&cfg, 10, 10);
    recv!(c, time 10, [with_ts(out(LOCAL_ISS + 1, REMOTE_ISS + 1, ACK, window, 0))]);
    assert_eq!(c.poll_timeout(), None, "nothing outstanding, no timer");
    c
}

/// Adds timestamps `(ts(now), pts(echo))` to a local segment when `cfg` negotiated them.
fn ack_ts(cfg: &TcpConfig, now_ms: u64, echo_ms: u64) -> impl Fn(TcpSegment) -> TcpSegment {
    let on = cfg.timestamps;
    move |s| if on { s.ts(ts(now_ms), pts(echo_ms)) } else { s }
}

/// The peer's SYN at t = 0, offering what `cfg` would (MSS 1460, scale 2, SACK-permitted, TS).
pub(crate) fn peer_syn(cfg: &TcpConfig) -> TcpSegment {
    let mut s = inp(REMOTE_ISS, 0, SYN, REMOTE_SYN_WINDOW, 0).mss(1460);
    if cfg.window_scaling {
        s = s.wscale(REMOTE_WSCALE);
    }
    if cfg.sack {
        s = s.sack_permitted();
    }
    if cfg.timestamps {
        s = s.ts(pts(0), 0);
    }
    s
}

/// A passive opener that received the peer's SYN at t = 0 and answered with its SYN-ACK (asserted):
/// only the options the peer offered, window scale 1 for its 64 KiB buffer, TSecr = the SYN's TSval.
pub(crate) fn server_syn_received(cfg: TcpConfig) -> Connection {
    let mut c = Connection::listen(cfg.clone(), LOCAL_PORT, LOCAL_ISS);
    assert_eq!(c.state(), State::Listen);
    recv_nothing!(c, time 0);
    send!(c, time 0, peer_syn(&cfg));
    assert_eq!(c.state(), State::SynReceived);
    let mut want = out(LOCAL_ISS, REMOTE_ISS + 1, SYN_ACK, 65_535, 0).mss(1460);
    if cfg.window_scaling {
        want = want.wscale(1);
    }
    if cfg.sack {
        want = want.sack_permitted();
    }
    if cfg.timestamps {
        want = want.ts(ts(0), pts(0));
    }
    recv!(c, time 0, [want]);
    assert_eq!(c.poll_timeout(), Some(at(1000)), "SYN-ACK retransmission timer, initial RTO 1 s");
    c
}

/// A server in ESTABLISHED: the peer's ACK of the SYN-ACK arrives at t = 10 ms (window 16383 << 2 =
/// 65532). RTT sample 10 ms (TSecr 1 at TSval 11). The server has sent nothing since its SYN-ACK, which
/// offered 65535 bytes: RCV.ADV = 50001 + 65535.
pub(crate) fn server_established(cfg: TcpConfig) -> Connection {
    let mut c = server_syn_received(cfg.clone());
    let mut a = inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, REMOTE_WINDOW, 0);
    if cfg.timestamps {
        a = a.ts(pts(10), ts(0));
    }
    send!(c, time 10, a);
    assert_eq!(c.state(), State::Established);
    recv_nothing!(c, time 10);
    assert_eq!(c.poll_timeout(), None);
    c
}

/// The peer's pure ACK / data segment at `t_ms` with its timestamps (TSecr `echo`), window 65532.
pub(crate) fn peer(seq: u32, ack: u32, flags: TcpFlags, len: u32, t_ms: u64, echo: u32) -> TcpSegment {
    inp(seq, ack, flags, REMOTE_WINDOW, len).ts(pts(t_ms), echo)
}
