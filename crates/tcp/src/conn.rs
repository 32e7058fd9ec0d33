//! The connection: RFC 9293 state machine, send and receive sequence spaces, flow control, ACK
//! generation, congestion control hooks and loss recovery.

use std::fmt;
use std::sync::Arc;

use tcplab_units::{Duration, Instant};
use tcplab_wire::{EcnCodepoint, SackBlock, SackBlocks, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::ack::{AckState, RcvView};
use crate::config::{CongestionControlKind, Cwv, DupAcksIn, IfqFull, TcpConfig};
use crate::congestion::{AckContext, AckInfo, CaState, CongestionEvent, Growth, SlowStartExit, INFINITE_SSTHRESH};
use crate::cwnd::Cwnd;
use crate::ecn::{EcnState, Outgoing};
use crate::estats::Estats;
use crate::estats::PacedEstats;
use crate::pacing::Pace;
use crate::rack::Rack;
use crate::ranges::RangeSet;
use crate::recovery::{AckVerdict, FrtoVerdict, NextSeg, Phase, Recovery, Snd};
use crate::rtt::RttEstimator;
use crate::sampler::DeliveryRate;
use crate::sampler::{RttSampler, SackedSent};
use rcv_mem::RcvMem;

mod info;
mod rcv_mem;
pub use info::{TcpInfo, TCP_INFINITE_SSTHRESH};

/// Connection states, named and printed as in RFC 9293 §3.3.2. Declared in this order on purpose: the
/// three before SYN-RECEIVED come first, so that `on_segment` tells every other state by one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        })
    }
}

pub use tcplab_transport::TxRoom;

/// Why a connection ended before an orderly close: what a socket reports as its error (SO_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnError {
    /// The peer reset an established connection (ECONNRESET).
    Reset,
    /// The peer answered the SYN with a reset (ECONNREFUSED).
    Refused,
    /// The SYN went unanswered `syn_retries` times (ETIMEDOUT).
    TimedOut,
}

/// RFC 9293 §3.10.7.1: the reset that answers `seg` when no connection exists for it (or the one it
/// reached was aborted): `<SEQ=SEG.ACK><CTL=RST>` for a segment with ACK, else
/// `<SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>`; none for a reset. Ports are swapped.
pub fn reset_for(seg: &TcpSegment) -> Option<TcpSegment> {
    if seg.flags.rst() {
        return None;
    }
    let mut r = TcpSegment { src_port: seg.dst_port, dst_port: seg.src_port, ..TcpSegment::default() };
    if seg.flags.ack() {
        r.seq = seg.ack;
        r.flags = TcpFlags::RST;
    } else {
        r.ack = seg.seq + seg.seq_len();
        r.flags = TcpFlags::RST | TcpFlags::ACK;
    }
    Some(r)
}

/// Whole timestamp ticks of `tick` nanoseconds at `now`, for a tick other than 1 ms ([`Connection`]'s
/// `ts_now`): out of line, so that the 1 ms tick keeps its division by a constant.
#[inline(never)]
fn ticks_of(now: Instant, tick: u64) -> u64 {
    now.as_nanos() / tick
}

/// Protocol timers, one deadline each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Retransmit = 0,
    DelayedAck = 1,
    Persist = 2,
    TimeWait = 3,
    Cork = 4,
    /// RFC 8985 §6.3: the RACK reordering timer.
    Reorder = 5,
    /// RFC 8985 §7.2: the tail loss probe timer (PTO).
    LossProbe = 6,
    /// Linux SACK compression: the compressed ACK goes when this fires.
    CompressedAck = 7,
    /// Pacing's earliest departure time, or the TX completion TCP Small Queues waits for (Linux's pacing
    /// hrtimer and TSQ handler): the sender tries again when it fires.
    Pacing = 8,
}
const TIMERS: usize = 9;
/// A disarmed timer.
const NO_TIMER: u64 = u64::MAX;
/// Linux `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, percent of cwnd/SRTT: the pacing rate that sizes
/// super-packets in slow start (below ssthresh/2) and otherwise.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

/// RFC 4898 §3 sender-limit states: what stopped the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SndLim {
    /// The receiver's window.
    Rwin,
    /// The congestion window (and RTO waits).
    Cwnd,
    /// Everything else: no data from the application, Nagle, the interface.
    Snd,
}

/// What the sender will put in its next segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Syn,
    SynAck,
    Retransmit {
        seq: SeqNumber,
        len: u32,
        fin: bool,
    },
    NewData {
        len: u32,
        fin: bool,
    },
    ZeroWindowProbe,
    Ack,
    /// The reset in `Connection::rst`.
    Reset,
}

/// Whether the segment chosen leaves the windows less than a full segment (`Notes::FILLS`), so that the
/// call after it would find them closed (`Connection::settle_closed_windows`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fills {
    No,
    /// A full segment of the plain new-data rule (`Connection::plain_segment_goes`), with the rooms in the
    /// peer's window and in cwnd that the rule found before it, bytes.
    Plain {
        wnd_room: u32,
        cwnd_room: u32,
    },
    Yes,
}

/// What choosing a segment found out on the way, which [`Connection::poll_transmit`] settles whether
/// or not the segment can go (the interface may be full). Choosing changes nothing; the state changes
/// of an actual send are in `emit`. A bit set: the common case, nothing, costs one test.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Notes(u16);

impl Notes {
    /// Enter the RFC 4898 sender-limit state `Rwin`, `Cwnd` or `Snd` (at most one is set).
    const LIM_RWIN: u16 = 1 << 0;
    const LIM_CWND: u16 = 1 << 1;
    const LIM_SND: u16 = 1 << 2;
    /// The application or (under Linux) the receiver leaves cwnd unused: RFC 2861 validation is due.
    const VALIDATE: u16 = 1 << 3;
    /// Data waits for a zero window: arm the persist timer if nothing else runs.
    const PERSIST: u16 = 1 << 4;
    /// A short segment is held by the cork: arm its 200 ms ceiling.
    const CORK: u16 = 1 << 5;
    /// The pending fast retransmit of the head found nothing left to retransmit.
    const HEAD_DONE: u16 = 1 << 6;
    /// The pending tail loss probe found nothing to probe with.
    const TLP_DONE: u16 = 1 << 7;
    /// `tso`: the sender waits for more ACKs to fill a larger super-packet.
    const TSO_DEFER: u16 = 1 << 8;
    /// Pacing or TCP Small Queues held a segment back: arm the pacing timer.
    const PACED: u16 = 1 << 9;
    /// The new-data segment chosen leaves the windows less than a full segment and data unsent: the
    /// choice after it may find them closed (`next_segment` then settles that choice with this one).
    /// Not settled: `next_choice` takes it out.
    const FILLS: u16 = 1 << 10;

    #[inline]
    fn set(&mut self, bit: u16) {
        self.0 |= bit;
    }
    #[inline]
    fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }
    /// Whether `bit` is set, clearing it.
    #[inline]
    fn take(&mut self, bit: u16) -> bool {
        let set = self.has(bit);
        self.0 &= !bit;
        set
    }
    #[inline]
    fn limit(&mut self, lim: SndLim) {
        self.0 &= !(Self::LIM_RWIN | Self::LIM_CWND | Self::LIM_SND);
        self.0 |= match lim {
            SndLim::Rwin => Self::LIM_RWIN,
            SndLim::Cwnd => Self::LIM_CWND,
            SndLim::Snd => Self::LIM_SND,
        };
    }
}

/// One TCP endpoint.
pub struct Connection {
    /// Shared by the connections a host opens with the same knobs (a few hundred bytes each otherwise).
    cfg: Arc<TcpConfig>,
    state: State,
    local_port: u16,
    remote_port: u16,

    // Negotiated at the handshake.
    /// Payload bytes per full-sized segment we send (Eff.snd.MSS, RFC 9293 §3.7.1, minus option room).
    smss: u32,
    /// Our estimate of the peer's full-sized segment (drives "every second full-sized segment").
    rcv_mss: u32,
    /// The segment size of the GRO super-packet being processed (`on_segment_gro`), else 0.
    rx_gso_size: u16,
    ts_ok: bool,
    sack_ok: bool,
    /// Both ends offered window scaling (RFC 7323 §2.2).
    wscale_ok: bool,
    snd_wscale: u8,
    rcv_wscale: u8,

    // Send sequence space (RFC 9293 §3.3.1).
    iss: SeqNumber,
    snd_una: SeqNumber,
    /// Next new sequence number; everything below it has been sent at least once (HighData + 1).
    snd_nxt: SeqNumber,
    snd_wnd: u32,
    snd_wl1: SeqNumber,
    snd_wl2: SeqNumber,
    max_snd_wnd: u32,
    /// One past the last byte the application wrote; the FIN, once queued, takes this number.
    write_end: SeqNumber,
    fin_queued: bool,
    /// The RTT sample the ACK being processed produced, for the congestion controller (HyStart).
    ack_rtt_sample: Option<Duration>,
    /// Karn's rule for the handshake: no RTT sample from a repeated SYN.
    syn_retransmitted: bool,
    syn_resend: bool,

    // Congestion control and loss recovery.
    /// The congestion controller, behind cwnd validation (the one caller of its `set_window`).
    cwnd: Cwnd,
    /// The recovery phase and its state, the SACK scoreboard, `recover`, duplicate ACKs.
    rec: Recovery,
    /// Pacing and TCP Small Queues (`pacing`, `limit_output_bytes`), when either can hold a segment back.
    pace: Option<Box<Pace>>,
    /// The delivery-rate sampler (Linux `tcp_rate.c`), for a controller that owns the window (BBR).
    rate: Option<Box<DeliveryRate>>,
    /// RACK-TLP state and the transmission records (RFC 8985), when `rack` is on.
    rack: Option<Box<Rack>>,
    /// The PTO fired: the next segment is a tail loss probe (RFC 8985 §7.3).
    tlp_pending: bool,
    /// When data was last sent (for restart after idle).
    last_data_sent: Option<Instant>,
    /// When in-order data last arrived, or the connection was established, in milliseconds since
    /// `Instant::ZERO`, wrapping (`tcpi_last_data_recv`: Linux keeps `lrcvtime` in 32-bit jiffies).
    /// Milliseconds in 32 bits, not an `Instant`: the connection's size budget (tests::knobs).
    last_data_recv_ms: u32,
    /// The end of the super-packet being sent under `tso`; new data below it goes without a new decision.
    tso_burst_end: SeqNumber,
    /// The super-packet being sent holds two segments or more: Linux's GSO packets of more than one
    /// segment reach the wire with PSH on their last segment (measured on 6.18 through a TUN device:
    /// `tcp_min_tso_segs` = 1 gives no PSH inside a write, 2 and 4 give PSH every 2 and 4 segments).
    tso_burst_multi: bool,
    /// Under `cwv = "linux"`: a send of the current window found cwnd full (Linux `is_cwnd_limited`, kept
    /// by `tcp_cwnd_validate` with `max_flight` below): cwnd grows while it holds, and it holds until a
    /// send after the window that does not fill cwnd, so the ACKs of the last data still grow cwnd.
    cwnd_limited: bool,
    /// SND.NXT when `tso` last held data back for cwnd: until SND.UNA passes it the sender counts as
    /// cwnd-limited for cwnd growth, as Linux's deferral sets `is_cwnd_limited`.
    tso_cwnd_limited_until: SeqNumber,
    /// Under `cwv = "linux"`: the largest flight (bytes) sent in the current window and the SND.NXT that
    /// window ends at (Linux `max_packets_out` and `cwnd_usage_seq`, kept by `tcp_cwnd_validate`). Slow
    /// start grows cwnd while it is below twice that (`tcp_is_cwnd_limited`), so an application-limited
    /// flight of 10 still grows cwnd to 20 as its ACKs come back, though fewer are in flight by then.
    max_flight: u32,
    max_flight_until: SeqNumber,

    // RTT and timers.
    rtt: RttEstimator,
    /// Which ACKs give RTT samples (`rtt_sampling`).
    sampler: RttSampler,
    backoff: u32,
    persist_backoff: u32,
    /// Deadlines in ns of virtual time, [`NO_TIMER`] when disarmed: a plain array whose minimum is cheap,
    /// as the event loop asks for it after every event.
    timers: [u64; TIMERS],
    probe_pending: bool,

    // Receive sequence space.
    irs: SeqNumber,
    rcv_nxt: SeqNumber,
    /// Right edge of the window we advertised; never moves left (RFC 9293 §3.8.6.2.2).
    rcv_adv: SeqNumber,
    /// The window we are willing to offer while it grows (Linux rcv_ssthresh, `grow_window`), bytes.
    rcv_ssthresh: u64,
    /// The largest window the receive buffer can offer: `recv_buffer` × `recv_window_ratio`, bytes.
    recv_window_max: u64,
    /// Receive memory by skb truesize (`rcv_mem_truesize`).
    rcv_mem: Option<Box<RcvMem>>,
    /// Next byte the application will read.
    app_read: SeqNumber,
    /// The peer's FIN sequence number, once seen.
    fin_rcvd: Option<SeqNumber>,
    ooo: RangeSet,
    /// Starting sequence numbers of recently received out-of-order segments, newest first (RFC 2018 §4).
    sack_recent: [Option<SeqNumber>; 4],
    dsack: Option<SackBlock>,
    ack_now: bool,
    /// The application's read called for the pending ACK (a window update, Linux `tcp_cleanup_rbuf`): a
    /// stack sends it within the read (BSD `PRU_RCVD` → `tcp_output`, Linux `tcp_send_ack`), so it leaves
    /// as a pure ACK ahead of anything the application writes next.
    ack_on_read: bool,
    /// The next ACK repeats RCV.NXT because of out-of-order or duplicate data.
    dup_ack_pending: bool,
    /// SACK compression (Linux `compressed_ack_rcv_nxt`, `dup_ack_counter`, `compressed_ack`): the
    /// RCV.NXT the immediate duplicate ACKs were counted for, how many went, and how many ACKs the
    /// pending compressed one replaces.
    comp_rcv_nxt: SeqNumber,
    comp_dup_acks: u8,
    comp_pending: u32,
    last_ack_was_dup: bool,
    ts_recent: u32,
    last_ack_sent: SeqNumber,

    stalled: bool,
    /// The next choice can find an ACK at most, its notes settled already: `poll_transmit_before_app`
    /// found cwnd or the peer's window closed (the `poll_transmit` after the application, same instant,
    /// same windows), or a pure ACK just went with nothing else to send. Cleared by everything that may
    /// make something sendable: input, timers, a write behind nothing unsent, close, abort, a knob.
    windows_closed: bool,
    /// One past the last short segment sent (Minshall's rule).
    snd_sml: SeqNumber,
    /// Payload of the last new-data segment sent (Mentat `tcp_last_sent_len`, for `nagle_last_sent`).
    last_sent_len: u32,
    /// The cork's 200 ms ceiling passed: a short segment may go.
    cork_released: bool,
    /// RFC 4898 sender-limit state and when it was entered.
    snd_lim: Option<(SndLim, Instant)>,
    /// The receiver's ACK policy and what it remembers (`ack_policy`).
    ack: AckState,
    /// The window field [`Self::advertise_window`] found unchanged last time, until the receive side
    /// changes (data or a FIN arrives, the application reads): a bulk sender's every segment.
    adv_field: Option<u16>,
    /// ECN negotiation, marking and echo (RFC 3168, `ecn`).
    ecn: EcnState,
    rng: Xoshiro256PlusPlus,
    st: Estats,
    /// This end sent the first SYN: its SYN counts in the bytes acknowledged (`too_old_ack_challenged`).
    active_open: bool,
    /// A reset to send: after an abort, or in answer to a segment (RFC 9293 §3.10.7.1, §3.10.7.3). Boxed:
    /// rare, and a segment inline is 72 bytes of every connection (flows-100k's memory per flow).
    rst: Option<Box<TcpSegment>>,
    /// Why the connection ended abnormally, once it did.
    error: Option<ConnError>,
    /// The application will read no more (close, or shutdown for reading): new data is answered with a
    /// reset, as Linux's `tcp_rcv_state_process` does after close (RFC 9293 §3.10.7.4 leaves it open).
    read_closed: bool,
    /// [`Self::recv_buffer_limit`], kept: its inputs (the buffer's largest window, window scaling and our
    /// scale) are fixed once the handshake has negotiated them, and every segment sent or received asks.
    recv_limit: u64,
    /// A bit for each of `timers` that may be armed (set when one is set, cleared when it is disarmed):
    /// the minimum after every event looks at those only, one or two of the nine as a rule.
    timers_armed: u16,
    // p14emit:
    /// The RTO last counted in the RFC 4898 MinRTO and MaxRTO gauges (zero before the first timer start).
    rto_gauged: Duration,
    /// The timestamp clock's tick that [`Self::ts_now`] last found: its start (ns), its length (0: none yet,
    /// or a tick too long to keep) and its TSval. A sender's segments and ACKs fall in the same tick for
    /// many in a row (a bulk sender's every one in a millisecond), so the division is made once a tick.
    ts_tick_start: u64,
    ts_tick_len: u32,
    ts_tick_val: u32,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("state", &self.state)
            .field("snd_una", &self.snd_una)
            .field("snd_nxt", &self.snd_nxt)
            .field("rcv_nxt", &self.rcv_nxt)
            .field("cwnd", &self.cwnd.window())
            .finish_non_exhaustive()
    }
}

/// [`Connection::rcv_view`] from the fields it reads, so that a closure `|| rcv_view!(self)` borrows
/// those fields alone and can be handed to the ACK policy beside `&mut self.ack`.
macro_rules! rcv_view {
    ($c:expr) => {
        RcvView {
            unacked: $c.rcv_nxt - $c.last_ack_sent,
            rcv_mss: $c.rcv_mss,
            window: if $c.rcv_adv > $c.rcv_nxt { $c.rcv_adv - $c.rcv_nxt } else { 0 },
            recv_limit: $c.recv_limit,
        }
    };
}

impl Connection {
    fn new(cfg: Arc<TcpConfig>, local_port: u16, remote_port: u16, iss: u32, state: State) -> Self {
        let iss = SeqNumber(iss);
        let rtt = RttEstimator::with_model(
            cfg.rto_model,
            cfg.rto_params,
            cfg.rto_initial,
            cfg.rto_min,
            cfg.rto_max,
            cfg.clock_granularity,
        );
        let mss = cfg.mss.bytes() as u32;
        let cwnd = Cwnd::new(&cfg, mss, iss.0 as u64);
        let max_pacing = cfg.max_pacing_rate.map(|r| r.bps() / 8);
        let paced = cfg.pacing == crate::config::Pacing::Fq || max_pacing.is_some() || cwnd.pacing_rate().is_some();
        let mut pace =
            Pace::new(paced, max_pacing, cfg.pacing_ss_ratio, cfg.pacing_ca_ratio, cfg.limit_output_bytes.bytes());
        if let Some(r) = cwnd.pacing_rate() {
            pace.set_rate(r);
        }
        let pace = pace.active().then(|| Box::new(pace));
        let rate = cwnd.owns_window().then(Box::<DeliveryRate>::default);
        let mut c = Connection {
            state,
            local_port,
            remote_port,
            smss: mss,
            rcv_mss: mss,
            rx_gso_size: 0,
            ts_ok: false,
            sack_ok: false,
            wscale_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_wnd: 0,
            snd_wl1: SeqNumber(0),
            snd_wl2: iss,
            max_snd_wnd: 0,
            write_end: iss + 1,
            fin_queued: false,
            ack_rtt_sample: None,
            syn_retransmitted: false,
            syn_resend: false,
            cwnd,
            pace,
            rate,
            rec: Recovery::new(iss, cfg.dupthresh),
            rack: cfg.rack.then(|| {
                let mut rack = Box::new(Rack::new(iss, cfg.dupthresh));
                rack.rtt_every_delivery = cfg.rack_rtt_every_delivery;
                rack
            }),
            tlp_pending: false,
            last_data_sent: None,
            last_data_recv_ms: 0,
            tso_burst_end: iss,
            tso_burst_multi: false,
            tso_cwnd_limited_until: iss,
            cwnd_limited: false,
            max_flight: 0,
            max_flight_until: iss,
            rtt,
            sampler: RttSampler::new(cfg.rtt_sampling),
            backoff: 0,
            persist_backoff: 0,
            timers: [NO_TIMER; TIMERS],
            probe_pending: false,
            irs: SeqNumber(0),
            rcv_nxt: SeqNumber(0),
            rcv_adv: SeqNumber(0),
            rcv_ssthresh: if cfg.grow_window { cfg.recv_buffer.bytes() } else { u64::MAX },
            recv_window_max: (cfg.recv_buffer.bytes() as f64 * cfg.recv_window_ratio) as u64,
            rcv_mem: cfg
                .rcv_mem_truesize
                .then(|| Box::new(RcvMem::new(cfg.recv_buffer.bytes(), cfg.rcv_skb_overhead.bytes()))),
            app_read: SeqNumber(0),
            fin_rcvd: None,
            ooo: RangeSet::default(),
            sack_recent: [None; 4],
            dsack: None,
            ack_now: false,
            ack_on_read: false,
            dup_ack_pending: false,
            comp_rcv_nxt: SeqNumber(0),
            comp_dup_acks: 0,
            comp_pending: 0,
            last_ack_was_dup: false,
            ts_recent: 0,
            last_ack_sent: SeqNumber(0),
            stalled: false,
            windows_closed: false,
            snd_sml: iss,
            last_sent_len: 0,
            cork_released: false,
            snd_lim: None,
            ack: AckState::new(&cfg),
            adv_field: None,
            ecn: EcnState::default(),
            rng: Xoshiro256PlusPlus::seed_from_u64(iss.0 as u64),
            st: Estats::default(),
            active_open: false,
            rst: None,
            error: None,
            read_closed: false,
            recv_limit: 0,
            timers_armed: 0,
            rto_gauged: Duration::ZERO,
            ts_tick_start: 0,
            ts_tick_len: 0,
            ts_tick_val: 0,
            cfg,
        };
        c.set_recv_limit();
        c
    }

    /// An active open (RFC 9293 §3.10.1): the SYN goes out at the next `poll_transmit`.
    /// `iss` is the initial send sequence number, chosen by the caller (from its random stream).
    pub fn connect(cfg: impl Into<Arc<TcpConfig>>, local_port: u16, remote_port: u16, iss: u32) -> Self {
        let mut c = Connection::new(cfg.into(), local_port, remote_port, iss, State::SynSent);
        c.rcv_wscale = c.wscale_for_buffer();
        c.set_recv_limit();
        c.active_open = true;
        c
    }

    /// A passive open: waits in LISTEN for a SYN.
    pub fn listen(cfg: impl Into<Arc<TcpConfig>>, local_port: u16, iss: u32) -> Self {
        Connection::new(cfg.into(), local_port, 0, iss, State::Listen)
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// True once the handshake completed (and until the connection is fully closed).
    pub fn is_established(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent | State::SynReceived)
    }
    /// Payload bytes per full-sized segment this endpoint sends.
    pub fn smss(&self) -> u32 {
        self.smss
    }
    pub fn cwnd(&self) -> u32 {
        self.cwnd.window()
    }
    pub fn ssthresh(&self) -> u32 {
        self.cwnd.ssthresh()
    }
    /// The initial send sequence number.
    pub fn iss(&self) -> SeqNumber {
        self.iss
    }
    pub fn snd_una(&self) -> SeqNumber {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> SeqNumber {
        self.snd_nxt
    }
    pub fn rcv_nxt(&self) -> SeqNumber {
        self.rcv_nxt
    }
    /// RFC 6937 prr_delivered: bytes delivered to the receiver since the current recovery began.
    #[cfg(test)]
    pub(crate) fn prr_delivered(&self) -> u64 {
        self.rec.prr_delivered()
    }
    /// Internal state the property test checks: the right edge of the advertised window, one past the
    /// last byte written (the FIN's number once queued), whether the FIN is queued, and the SACK
    /// scoreboard.
    #[cfg(test)]
    pub(crate) fn invariant_state(&self) -> (SeqNumber, SeqNumber, bool, Vec<(SeqNumber, SeqNumber)>) {
        (self.rcv_adv, self.write_end, self.fin_queued, self.rec.scoreboard.iter().collect())
    }

    // ----------------------------------------------------------------------------------------------
    // Application interface
    // ----------------------------------------------------------------------------------------------

    /// The next `poll_transmit_before_app` would find nothing: the windows closed behind the segment
    /// just sent (or a call before found them closed), and no ACK is due.
    #[inline]
    pub fn before_app_done(&self) -> bool {
        self.windows_closed && !self.ack_now
    }

    /// The last `poll_transmit` had a segment ready but the interface was full.
    pub fn stalled(&self) -> bool {
        self.stalled
    }

    /// Free room in the send buffer, bytes.
    pub fn send_buffer_free(&self) -> u64 {
        // Before the SYN is acknowledged SND.UNA is the ISS, one short of the first data byte.
        let first_unacked = if self.is_established() { self.snd_una } else { self.iss + 1 };
        // Once the FIN is acknowledged SND.UNA is one past the end of written data: nothing is queued.
        let queued = self.write_end.diff(first_unacked).max(0) as u64;
        let free = self.cfg.send_buffer.bytes().saturating_sub(queued);
        let truesize = self.cfg.send_buffer_truesize.bytes();
        if truesize == 0 {
            return free;
        }
        free.min(self.skb_room(first_unacked, truesize))
    }

    /// Under `send_buffer_truesize`: the bytes the application may still write, Linux 2.2/2.4 style: the
    /// room left in the unsent tail skb, plus a whole SMSS for each new skb it may still take (one is
    /// taken while the charges stay below `send_buffer`).
    #[inline(never)]
    fn skb_room(&self, first_unacked: SeqNumber, truesize: u64) -> u64 {
        let smss = self.smss.max(1) as u64;
        let sent_end = if self.snd_nxt > first_unacked { self.snd_nxt } else { first_unacked };
        let sent = if self.cwnd.counts_packets() {
            self.cwnd.packets_out() as u64
        } else {
            ((sent_end - first_unacked) as u64).div_ceil(smss)
        };
        let unsent = self.write_end.diff(sent_end).max(0) as u64;
        let charged = (sent + unsent.div_ceil(smss)) * truesize;
        let tail_room = if unsent.is_multiple_of(smss) { 0 } else { smss - unsent % smss };
        let sndbuf = self.cfg.send_buffer.bytes();
        let new_skbs = if charged < sndbuf { (sndbuf - charged).div_ceil(truesize) } else { 0 };
        tail_room + new_skbs * smss
    }

    /// How many of `bytes` [`Connection::send`] would take now (nothing after the application's close, or
    /// in a state that takes no data).
    pub fn send_room(&self, bytes: u64) -> u64 {
        if self.fin_queued
            || !matches!(self.state, State::SynSent | State::SynReceived | State::Established | State::CloseWait)
        {
            return 0;
        }
        bytes.min(self.send_buffer_free())
    }

    /// Data bytes written and never sent: SND.NXT to the end of the send buffer (before the SYN is sent,
    /// from the first data byte). Retransmissions are not counted: SND.NXT never moves back here (the
    /// scoreboard says what to send again).
    #[inline]
    pub fn unsent_bytes(&self) -> u64 {
        let from = if self.snd_nxt > self.iss + 1 { self.snd_nxt } else { self.iss + 1 };
        self.write_end.diff(from).max(0) as u64
    }

    /// The application writes `bytes`; returns how many the send buffer took.
    #[inline(always)]
    pub fn send(&mut self, bytes: u64) -> u64 {
        if self.rate.is_some() {
            self.check_app_limited();
        }
        let n = self.send_room(bytes);
        // New data behind a pure ACK that found nothing else to send (a window closed behind queued
        // data stays closed).
        self.windows_closed &= self.snd_nxt < self.write_end;
        self.write_end += n as u32;
        n
    }

    /// Bytes the application can read now.
    pub fn readable(&self) -> u64 {
        let end = match self.fin_rcvd {
            Some(fin) if self.rcv_nxt > fin => fin,
            _ => self.rcv_nxt,
        };
        if self.state == State::Listen || self.state == State::SynSent {
            return 0;
        }
        (end - self.app_read) as u64
    }

    /// The application reads up to `max` bytes; returns how many it got.
    #[inline(always)]
    pub fn recv(&mut self, max: u64) -> u64 {
        let readable = self.readable();
        let n = readable.min(max);
        if n == 0 {
            return 0;
        }
        let window_before = self.rcv_adv - self.rcv_nxt;
        self.app_read += n as u32;
        self.adv_field = None;
        // What is left to read: the read moved only APP.READ (and a state that has data to read counts
        // all of it).
        let left = readable - n;
        // Window update (RFC 1122 §4.2.3.3 receiver SWS avoidance): announce the opened window only when
        // it has grown by a full segment and at least doubled, so reads do not each cost an ACK.
        let free = self.recv_free_of(left);
        if free >= window_before as u64 + self.rcv_mss as u64 && free >= 2 * window_before as u64 {
            self.ack_now = true;
            self.ack_on_read = true;
        }
        // Linux tcp_cleanup_rbuf: a read that empties the receive queue after a short pushed segment is
        // ACKed at once, unless the connection is interactive (pingpong) and only one such segment came.
        if self.ack.ack_on_drain() && left == 0 && self.rcv_nxt != self.last_ack_sent {
            self.ack_now = true;
            self.ack_on_read = true;
        }
        n
    }

    /// True when the peer's FIN was received and all data before it has been read.
    pub fn is_eof(&self) -> bool {
        matches!(self.fin_rcvd, Some(fin) if self.rcv_nxt > fin && self.app_read == fin)
    }

    /// `readable() > 0 || is_eof()` in one comparison: APP.READ stops at a received FIN, so RCV.NXT past
    /// APP.READ means bytes to read or, once RCV.NXT is past the FIN, either bytes or the close to notice.
    #[inline(always)]
    pub fn has_input(&self) -> bool {
        let input = self.rcv_nxt != self.app_read && !matches!(self.state, State::Listen | State::SynSent);
        debug_assert_eq!(input, self.readable() > 0 || self.is_eof());
        input
    }

    /// The application closes its sending side (RFC 9293 §3.10.4). The FIN follows the queued data.
    pub fn close(&mut self) {
        // The FIN may go at the call after a pure ACK that found nothing else to send.
        self.windows_closed = false;
        match self.state {
            State::Listen | State::SynSent => self.state = State::Closed,
            State::SynReceived | State::Established => {
                self.fin_queued = true;
                self.state = State::FinWait1;
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.state = State::LastAck;
            }
            _ => {}
        }
    }

    /// Aborts the connection (RFC 9293 §3.10.5 ABORT; Linux `tcp_send_active_reset` on close with unread
    /// data or a zero linger): a synchronized connection sends `<SEQ=SND.NXT><ACK=RCV.NXT><CTL=RST,ACK>` at
    /// the next `poll_transmit`, and is CLOSED at once.
    pub fn abort(&mut self, now: Instant) {
        if matches!(
            self.state,
            State::SynReceived | State::Established | State::FinWait1 | State::FinWait2 | State::CloseWait
        ) {
            let mut r = TcpSegment {
                src_port: self.local_port,
                dst_port: self.remote_port,
                seq: self.snd_nxt,
                ack: self.rcv_nxt,
                flags: TcpFlags::RST | TcpFlags::ACK,
                // The window last advertised (not a new choice: `advertise_window` has one caller, the
                // output path, where it is inlined).
                window: (self.rcv_adv.diff(self.rcv_nxt).max(0) as u32 >> self.rcv_wscale).min(65_535) as u16,
                ..TcpSegment::default()
            };
            // It leaves through the ordinary output path (tcp_transmit_skb): with the timestamps option.
            if self.ts_ok {
                r.options.timestamps = Some(Timestamps { tsval: self.ts_now(now), tsecr: self.ts_recent });
            }
            self.rst = Some(Box::new(r));
        }
        self.state = State::Closed;
        self.disarm_all();
        // The reset goes at the next `poll_transmit`, even when the call before the application found
        // the windows closed.
        self.windows_closed = false;
    }

    /// The application will read no more (shutdown for reading, or close): data that arrives from now on
    /// resets the connection.
    pub fn shutdown_read(&mut self) {
        self.read_closed = true;
    }

    /// Why the connection ended abnormally, if it did.
    pub fn error(&self) -> Option<ConnError> {
        self.error
    }

    /// The knobs, for a change during the connection (a socket option: TCP_NODELAY, TCP_CORK,
    /// SO_SNDBUF...). The connection gets its own copy of a shared configuration on the first change.
    pub fn config_mut(&mut self) -> &mut TcpConfig {
        // A changed knob may change what the call after the application chooses: it chooses in full.
        self.windows_closed = false;
        // The timestamp tick may change with it.
        self.ts_tick_len = 0;
        Arc::make_mut(&mut self.cfg)
    }

    // ----------------------------------------------------------------------------------------------
    // Timers
    // ----------------------------------------------------------------------------------------------

    /// The earliest instant at which [`Connection::on_timeout`] has work to do.
    // Always inlined: the engine asks after every event, and as a call (which LLVM chose once the engine's
    // arrival path grew) it cost ~3 instructions more a call (issue 25).
    #[inline(always)]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let (mut armed, mut next) = (self.timers_armed, NO_TIMER);
        while armed != 0 {
            next = next.min(self.timers[armed.trailing_zeros() as usize]);
            armed &= armed - 1;
        }
        debug_assert_eq!(next, self.timers.iter().fold(NO_TIMER, |m, &t| m.min(t)));
        (next != NO_TIMER).then(|| Instant::from_nanos(next))
    }

    fn arm(&mut self, t: Timer, at: Instant) {
        // The BSD delayed ACK runs on its own 200 ms fast timer, already phase-locked.
        let bsd_fast = t == Timer::DelayedAck && self.ack.phase_locked();
        self.set_timer(t, if bsd_fast { at } else { at.ceil_to(self.cfg.tick) }.as_nanos());
    }
    fn disarm(&mut self, t: Timer) {
        self.timers[t as usize] = NO_TIMER;
        self.timers_armed &= !(1 << t as u16);
    }
    fn set_timer(&mut self, t: Timer, at: u64) {
        self.timers[t as usize] = at;
        self.timers_armed |= 1 << t as u16;
    }
    fn disarm_all(&mut self) {
        self.timers = [NO_TIMER; TIMERS];
        self.timers_armed = 0;
    }
    fn armed(&self, t: Timer) -> bool {
        self.timers[t as usize] != NO_TIMER
    }
    fn restart_rto(&mut self, now: Instant) {
        let rto = self.rtt.rto_backed_off(self.backoff);
        // The gauges hold already what the RTO they last counted gives (max and min are idempotent), and
        // most restarts (every ACK of new data) start the timer with that RTO again: the conversion to
        // milliseconds and the NaN-aware max and min are skipped then.
        if rto != self.rto_gauged {
            self.rto_gauged = rto;
            let ms = rto.as_nanos() as f64 / 1e6;
            self.st.MaxRTO = self.st.MaxRTO.max(ms);
            self.st.MinRTO = if self.st.MinRTO == 0.0 { ms } else { self.st.MinRTO.min(ms) };
        }
        self.arm(Timer::Retransmit, now + rto);
    }

    /// Runs every timer that is due at `now`.
    pub fn on_timeout(&mut self, now: Instant) {
        self.windows_closed = false;
        let due = |t: u64| t <= now.as_nanos();
        if due(self.timers[Timer::TimeWait as usize]) {
            self.disarm(Timer::TimeWait);
            self.state = State::Closed;
            return;
        }
        if due(self.timers[Timer::DelayedAck as usize]) {
            self.disarm(Timer::DelayedAck);
            self.ack_now = true;
            let v = self.rcv_view();
            self.ack.on_delayed_ack_timeout(&v, &self.rtt, &self.cfg);
        }
        if due(self.timers[Timer::CompressedAck as usize]) {
            self.disarm(Timer::CompressedAck);
            self.ack_now = true;
        }
        if due(self.timers[Timer::Cork as usize]) {
            self.disarm(Timer::Cork);
            self.cork_released = true;
        }
        if due(self.timers[Timer::Persist as usize]) {
            self.disarm(Timer::Persist);
            self.probe_pending = true;
            self.persist_backoff += 1;
        }
        if due(self.timers[Timer::Reorder as usize]) {
            self.disarm(Timer::Reorder);
            self.rack_detect_loss(now);
        }
        if due(self.timers[Timer::Pacing as usize]) {
            // The sender tries again at the next poll_transmit.
            self.disarm(Timer::Pacing);
        }
        if due(self.timers[Timer::LossProbe as usize]) {
            self.disarm(Timer::LossProbe);
            if self.tlp_allowed() {
                self.tlp_pending = true;
                // RFC 8985 §7.3: after the probe the RTO is armed again (from now), so that a PTO that
                // coincides with the RTO sends the probe, not a timeout's retransmission.
                self.restart_rto(now);
            }
        }
        if due(self.timers[Timer::Retransmit as usize]) {
            self.disarm(Timer::Retransmit);
            self.on_rto(now);
        }
    }

    /// Whether the connection runs RACK: configured, and SACK negotiated.
    fn rack_on(&self) -> bool {
        self.sack_ok && self.rack.is_some()
    }

    /// RFC 8985 §7.2 conditions for a loss probe: TLP on, not in loss recovery, data outstanding, no
    /// probe outstanding.
    fn tlp_allowed(&self) -> bool {
        self.cfg.tlp
            && self.rack_on()
            && self.rec.open_or_cwr()
            && self.snd_nxt != self.snd_una
            && self.rack.as_ref().is_some_and(|r| !r.tlp_outstanding())
    }

    /// RFC 8985 §7.2: (re)arms the PTO after new data is sent or an ACK arrives: 2·SRTT, plus the
    /// worst-case delayed ACK when a single segment is in flight (else Linux's `timeout_min`), 1 s
    /// before any RTT sample; never later than the RTO.
    fn arm_tlp(&mut self, now: Instant) {
        if !self.tlp_allowed() {
            self.disarm(Timer::LossProbe);
            return;
        }
        let mut pto = self.rtt.srtt().map_or(Duration::from_secs(1), |s| s.saturating_mul(2));
        if self.snd_nxt - self.snd_una <= self.smss {
            pto += self.cfg.tlp_max_ack_delay;
        } else if self.rtt.srtt().is_some() {
            pto += self.cfg.timeout_min;
        }
        let mut at = now + pto;
        if self.armed(Timer::Retransmit) {
            at = at.min(Instant::from_nanos(self.timers[Timer::Retransmit as usize]));
        }
        self.arm(Timer::LossProbe, at);
    }

    /// RFC 8985 §6.2 step 5 and §6.3: marks what RACK finds lost, arms the reordering timer for what
    /// is not yet overdue, and starts fast recovery when something is lost (Linux `tcp_time_to_recover`
    /// with RACK: `lost_out`). A timeout's recovery retransmits everything anyway.
    fn rack_detect_loss(&mut self, now: Instant) {
        if !self.rack_on() || self.rec.after_rto() {
            self.disarm(Timer::Reorder);
            return;
        }
        let in_recovery = self.rec.in_sack_recovery();
        let srtt = self.rtt.srtt();
        let dupthresh = self.cfg.dupthresh;
        let Some(rack) = self.rack.as_mut() else { return };
        let reo_wnd = rack.reo_wnd(in_recovery, dupthresh, srtt);
        let d = rack.detect_loss(now, reo_wnd);
        let lost_out = rack.lost_out();
        if let Some(rate) = self.rate.as_mut() {
            rate.on_marked_lost(d.newly_lost_bytes);
        }
        self.st.RackMarkedLost += d.newly_lost as u64;
        match d.timer {
            Some(at) => self.arm(Timer::Reorder, at + self.cfg.timeout_min),
            None => self.disarm(Timer::Reorder),
        }
        // Linux `tcp_time_to_recover` with RACK: recovery starts whenever a segment is marked lost
        // (`lost_out`), newly or left from a recovery that ended with its retransmission still unacknowledged,
        // and `tcp_fastretrans_alert` tests it in the same ACK that ended the previous recovery. RFC 6582's
        // `recover` guard is NewReno's (Linux keeps it for Reno only): without SACK the sender cannot tell
        // a new loss from the old; RACK can, and a lost segment left in the Open state waits for no
        // retransmission at all (only recovery retransmits).
        if lost_out > 0 && self.rec.open_or_cwr() {
            self.enter_recovery(now);
        }
    }

    /// RFC 6298 §5.4–5.6 and RFC 5681 §3.1 on a retransmission timeout.
    fn on_rto(&mut self, now: Instant) {
        let first = self.backoff == 0;
        if first {
            self.st.Timeouts += 1;
        } else {
            self.st.SubsequentTimeouts += 1;
        }
        self.st.CurTimeoutCount += 1;
        self.sampler.forget_timed();
        if matches!(self.state, State::SynSent | State::SynReceived) {
            if self.cfg.syn_retries > 0 && self.backoff >= self.cfg.syn_retries {
                // Linux tcp_write_timeout: the open fails once the retries are spent.
                self.state = State::Closed;
                self.error = Some(ConnError::TimedOut);
                self.disarm_all();
                return;
            }
            self.syn_retransmitted = true;
            self.syn_resend = true;
            self.backoff += 1;
            self.restart_rto(now);
            return;
        }
        if self.snd_una == self.snd_nxt {
            return;
        }
        if self.rec.is_open() && self.rec.dupacks == 0 && self.rec.scoreboard.is_empty() {
            self.st.AbruptTimeouts += 1;
        }
        // One signal per episode; a repeated timeout counts again only if slow start had regrown cwnd, so
        // that every cwnd reduction is counted in CongSignals or OtherReductions.
        if !self.rec.after_rto() || self.cwnd.window() > self.smss {
            self.count_congestion_signal();
        }
        // FlightSize without what the receiver has SACKed: that data has left the network, and after a
        // recovery that kept sending new data it can be most of the window.
        let sacked = self.rec.scoreboard.bytes_within(self.snd_una, self.snd_nxt);
        let flight = self.snd_nxt - self.snd_una - sacked;
        let flight = self.reduction_base(flight);
        self.cwnd.on_congestion_event(now, CongestionEvent::Timeout { first }, flight, self.smss);
        // Linux `tcp_enter_loss`: F-RTO unless the timeout interrupts a fast recovery (RFC 5682 §3.2 keeps
        // it for a repeated timeout of the same segment).
        let frto = self.cfg.frto && (self.rec.open_or_cwr() || !first);
        let s = self.snd();
        self.rec.on_timeout(s, self.cfg.keep_sack_on_rto, frto);
        if let Some(rack) = self.rack.as_mut() {
            let newly = rack.on_rto();
            if let Some(rate) = self.rate.as_mut() {
                rate.on_marked_lost(newly);
            }
            if !self.cfg.keep_sack_on_rto {
                rack.clear_sacked();
            }
        }
        self.tlp_pending = false;
        self.disarm(Timer::LossProbe);
        self.disarm(Timer::Reorder);
        self.backoff += 1;
        self.restart_rto(now);
    }

    /// What a multiplicative decrease starts from: FlightSize (RFC 5681 (4), RFC 9438 §4.6), or cwnd as
    /// Linux's `ssthresh` hooks do (`ssthresh_from_cwnd`).
    fn reduction_base(&self, flight: u32) -> u32 {
        let base = if self.cfg.ssthresh_from_cwnd { self.cwnd.window() } else { flight };
        if self.cfg.ssthresh_within_window {
            // Linux 2.2 `tcp_recalc_ssthresh`: the window counted in whole segments.
            base.min(self.snd_wnd / self.smss.max(1) * self.smss)
        } else {
            base
        }
    }

    /// Every multiplicative decrease passes here, so it also queues ECN's CWR (RFC 3168 §6.1.2).
    fn count_congestion_signal(&mut self) {
        self.st.CongSignals += 1;
        self.st.PreCongSumCwnd += self.cwnd.window() as u64;
        self.ecn.on_window_reduced();
    }

    // ----------------------------------------------------------------------------------------------
    // Receiving segments (RFC 9293 §3.10.7)
    // ----------------------------------------------------------------------------------------------

    /// Processes a GRO super-packet: `seg` carries the payload of consecutive segments of `gso_size`
    /// bytes each, received as one (what a receiver's GRO, or a packetdrill script's `--mss`, hands
    /// TCP). It is processed as one segment, except that the peer's segment size is measured from
    /// `gso_size`, as Linux's `tcp_measure_rcv_mss` takes `skb_shinfo(skb)->gso_size` before `skb->len`.
    pub fn on_segment_gro(&mut self, now: Instant, seg: &TcpSegment, gso_size: u16) {
        self.rx_gso_size = gso_size;
        self.on_segment(now, seg);
        self.rx_gso_size = 0;
    }

    /// Processes one segment addressed to this connection.
    pub fn on_segment(&mut self, now: Instant, seg: &TcpSegment) {
        self.windows_closed = false;
        self.st.SegsIn += 1;
        if seg.payload_len > 0 {
            self.st.DataSegsIn += 1;
            self.st.DataOctetsIn += seg.payload_len as u64;
            // Data moves RCV.NXT, the memory held and the window's growth.
            self.adv_field = None;
        }
        if seg.ecn.is_ce() {
            self.st.CERcvd += 1;
        }
        // web100 counted at arrival, before tcp_ack could move SND.UNA (`web100_update_segrecv`).
        if self.cfg.dup_acks_in == DupAcksIn::Web100
            && seg.payload_len == 0
            && seg.flags.ack()
            && seg.ack == self.snd_una
            && !matches!(self.state, State::Closed | State::Listen | State::SynSent)
        {
            self.st.DupAcksIn += 1;
        }
        // The synchronized states follow the three others in the declaration: one comparison, where the
        // match tested the three one by one before the common case.
        if self.state as u8 > State::SynSent as u8 {
            self.on_segment_synchronized(now, seg);
            return;
        }
        match self.state {
            State::Listen => self.on_segment_listen(now, seg),
            State::SynSent => self.on_segment_syn_sent(now, seg),
            _ => debug_assert_eq!(self.state, State::Closed),
        }
    }

    fn on_segment_listen(&mut self, now: Instant, seg: &TcpSegment) {
        if seg.flags.rst() || seg.flags.ack() || !seg.flags.syn() {
            return;
        }
        self.remote_port = seg.src_port;
        self.irs = seg.seq;
        self.rcv_nxt = seg.seq + 1;
        self.app_read = self.rcv_nxt;
        self.adv_field = None;
        self.negotiate(seg);
        self.ecn.on_syn(self.cfg.ecn, seg);
        self.snd_wnd = seg.window as u32; // never scaled in a SYN (RFC 7323 §2.2)
        self.snd_wl1 = seg.seq;
        self.max_snd_wnd = self.snd_wnd;
        if let Some(ts) = seg.options.timestamps {
            self.ts_recent = ts.tsval;
        }
        self.state = State::SynReceived;
        let _ = now;
    }

    fn on_segment_syn_sent(&mut self, now: Instant, seg: &TcpSegment) {
        let ack_ok = seg.flags.ack() && seg.ack == self.iss + 1;
        if seg.flags.ack() && !ack_ok {
            // RFC 9293 §3.10.7.3: an unacceptable ACK is answered with <SEQ=SEG.ACK><CTL=RST>.
            self.rst = reset_for(seg).map(Box::new);
            return;
        }
        if seg.flags.rst() {
            if ack_ok {
                self.state = State::Closed;
                self.error = Some(ConnError::Refused);
                self.disarm_all();
            }
            return;
        }
        if !seg.flags.syn() {
            return;
        }
        self.irs = seg.seq;
        self.rcv_nxt = seg.seq + 1;
        self.app_read = self.rcv_nxt;
        self.adv_field = None;
        self.negotiate(seg);
        self.ecn.on_syn_answer(seg);
        if let Some(ts) = seg.options.timestamps {
            self.ts_recent = ts.tsval;
        }
        self.snd_wnd = seg.window as u32;
        self.snd_wl1 = seg.seq;
        self.snd_wl2 = seg.ack;
        self.max_snd_wnd = self.snd_wnd;
        if ack_ok {
            self.snd_una = seg.ack;
            self.rtt_sample_from_handshake(now, seg);
            self.after_handshake_timeout();
            self.disarm(Timer::Retransmit);
            self.backoff = 0;
            self.st.CurTimeoutCount = 0;
            self.state = State::Established;
            self.last_data_recv_ms = (now.as_nanos() / 1_000_000) as u32;
            self.ack_now = true;
        } else {
            self.state = State::SynReceived; // simultaneous open
        }
    }

    /// Option negotiation from the peer's SYN (or SYN-ACK).
    fn negotiate(&mut self, seg: &TcpSegment) {
        let o = &seg.options;
        let ours = self.cfg.mss.bytes() as u32;
        // RFC 9293 §3.7.1: 536 when the peer sends no MSS option.
        let peer_mss = o.mss.map(u32::from).unwrap_or(536);
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.wscale_ok = self.cfg.window_scaling && o.window_scale.is_some();
        if self.wscale_ok {
            self.snd_wscale = o.window_scale.unwrap_or(0).min(14);
            if self.rcv_wscale == 0 {
                self.rcv_wscale = self.wscale_for_buffer();
            }
        } else {
            self.snd_wscale = 0;
            self.rcv_wscale = 0;
        }
        self.set_recv_limit();
        let ts_room = if self.ts_ok { 12 } else { 0 };
        self.smss = peer_mss.min(ours) - ts_room;
        self.rcv_mss = peer_mss.min(ours) - ts_room;
        self.cwnd.set_initial(self.cfg.initial_window.bytes(self.smss));
        self.st.CurMSS = self.smss as u64;
        // The window our SYN or SYN-ACK offers, unscaled (RFC 7323 §2.2).
        let passive = self.state == State::Listen;
        let rcv_wnd = self.initial_recv_window(passive);
        self.rcv_adv = self.rcv_nxt + rcv_wnd;
        if self.cfg.rcv_mss_estimate_from_536 {
            self.rcv_mss = ours.min(self.smss).min(rcv_wnd / 2).clamp(88, 536);
        }
        if self.cfg.rcv_ssthresh_from_initial_window && self.cfg.grow_window {
            // tcp_init_buffer_space's one-segment reservation, on the space before any data was measured.
            // rcv_ssthresh starts at tp->rcv_wnd, which since Linux 6.10 (378979e94e95) is the whole
            // space: only the SYN's window field is held to 64 KiB, by __tcp_transmit_skb.
            let clamp = self.cfg.recv_buffer.bytes().saturating_sub(ours as u64).max(2 * ours as u64);
            self.rcv_ssthresh = self.initial_recv_space(passive).min(clamp);
            if let Some(m) = self.rcv_mem.as_mut() {
                m.window_clamp = clamp;
            }
        }
    }

    /// The window a SYN (`passive` false) or SYN-ACK offers, bytes: [`Self::initial_recv_space`] held
    /// to the unscaled field's 65535 (RFC 7323 §2.2).
    fn initial_recv_window(&self, passive: bool) -> u32 {
        self.initial_recv_space(passive).min(65_535) as u32
    }

    /// The receive space at the handshake, bytes (Linux's tp->rcv_wnd after `tcp_select_initial_window`).
    /// Under `initial_recv_window_whole_mss` it is rounded down to whole segments of the size this end
    /// expects, as Linux does: only a passive open knows then whether timestamps will take room in them.
    fn initial_recv_space(&self, passive: bool) -> u64 {
        let space = self.cfg.recv_buffer.bytes();
        if !self.cfg.initial_recv_window_whole_mss {
            return space;
        }
        let ts_room = if passive && self.ts_ok { 12 } else { 0 };
        let seg = self.cfg.mss.bytes().saturating_sub(ts_room).max(1);
        if space > seg {
            space / seg * seg
        } else {
            space
        }
    }

    fn wscale_for_buffer(&self) -> u8 {
        if !self.cfg.window_scaling {
            return 0;
        }
        let space = match self.cfg.wscale_space.bytes() {
            0 => self.recv_window_max,
            n => n,
        };
        let mut s = 0u8;
        while (space >> s) > 65_535 && s < 14 {
            s += 1;
        }
        s
    }

    fn rtt_sample_from_handshake(&mut self, now: Instant, seg: &TcpSegment) {
        // Karn: no sample if the SYN was retransmitted, unless the timestamp echo identifies it.
        let ts_rtt = self.ts_rtt(now, seg);
        let sample = if self.sampler.linux() {
            self.sampler.on_handshake_ack_linux(now, ts_rtt, self.syn_retransmitted)
        } else {
            self.sampler.on_handshake_ack(now, ts_rtt, self.syn_retransmitted)
        };
        if let Some(r) = sample {
            self.rtt_sample(now, r, r);
        }
    }

    /// The RTT a segment's timestamp echo gives, when timestamps were negotiated and it echoes one.
    fn ts_rtt(&mut self, now: Instant, seg: &TcpSegment) -> Option<Duration> {
        let ts = seg.options.timestamps.filter(|t| self.ts_ok && t.tsecr != 0)?;
        Some(self.ts_elapsed(now, ts.tsecr))
    }

    /// RFC 6298 (5.7): a handshake that needed a retransmission starts data with a 3 s RTO.
    fn after_handshake_timeout(&mut self) {
        if self.syn_retransmitted {
            self.rtt.reinitialize_if_unsampled(Duration::from_secs(3));
        }
    }

    fn on_segment_synchronized(&mut self, now: Instant, seg: &TcpSegment) {
        if self.in_order_data_predicted(seg) {
            self.on_in_order_data(now, seg);
            return;
        }
        if self.new_ack_predicted(seg) {
            self.on_new_ack_predicted(now, seg);
            return;
        }
        let mut seq = seg.seq;
        if seg.flags.syn() {
            if self.state == State::SynReceived && seg.seq == self.irs && !seg.flags.ack() {
                self.syn_resend = true; // the peer did not hear our SYN-ACK; send it again
                return;
            }
            // RFC 5961 §4: a SYN in a synchronized state gets a challenge ACK.
            self.ack_now = true;
            return;
        }
        // PAWS (RFC 7323 §5.3).
        if self.ts_ok && !seg.flags.rst() {
            if let Some(ts) = seg.options.timestamps {
                if (ts.tsval.wrapping_sub(self.ts_recent) as i32) < 0 {
                    // R1: drop and ACK. Data already received is reported with D-SACK (RFC 2883 §4, as
                    // Linux's tcp_send_dupack does): a late original overtaken by its retransmission
                    // carries the older TSval, and without the D-SACK the sender could not tell that the
                    // retransmission was needless.
                    if seg.payload_len > 0 && seg.seq < self.rcv_nxt {
                        let end = (seg.seq + seg.payload_len).min(self.rcv_nxt);
                        self.dsack = Some(SackBlock { left: seg.seq, right: end });
                        self.dup_ack_pending = true;
                    }
                    self.ack_now = true;
                    return;
                }
            }
        }
        if !self.acceptable(seg) {
            if !seg.flags.rst() {
                if seg.payload_len > 0 && seg.seq + seg.payload_len <= self.rcv_nxt {
                    // A duplicate: report it with D-SACK (RFC 2883 §4) in an immediate ACK.
                    self.dsack = Some(SackBlock { left: seg.seq, right: seg.seq + seg.payload_len });
                    self.dup_ack_pending = true;
                }
                self.ack_now = true;
            }
            // The ACK field of an unacceptable segment may still carry news (e.g. zero-window probes' replies).
            if seg.flags.ack() && !seg.flags.rst() && self.is_established() {
                let _ = self.process_ack(now, seg);
            }
            return;
        }
        if seg.flags.rst() {
            // RFC 5961 §3.2: reset only on an exact match, challenge otherwise.
            if seg.seq == self.rcv_nxt {
                self.state = State::Closed;
                self.error = Some(ConnError::Reset);
                self.disarm_all();
            } else {
                self.ack_now = true;
            }
            return;
        }
        if !seg.flags.ack() {
            return;
        }
        // RFC 7323 §4.3: TS.Recent from a segment that covers Last.ACK.sent (`ts_recent_needs_valid_ack`:
        // and whose ACK is not beyond SND.NXT).
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            let ack_valid =
                (!self.cfg.ts_recent_needs_valid_ack || seg.ack.diff(self.snd_nxt) <= 0) && !self.too_old_ack(seg.ack);
            if seg.seq <= self.last_ack_sent && ack_valid {
                self.ts_recent = ts.tsval;
            }
        }
        if self.state == State::SynReceived {
            if seg.ack.diff(self.snd_una) > 0 && seg.ack <= self.snd_nxt {
                self.state = State::Established;
                self.last_data_recv_ms = (now.as_nanos() / 1_000_000) as u32;
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = seg.ack;
                self.rtt_sample_from_handshake(now, seg);
                self.after_handshake_timeout();
                self.backoff = 0;
                self.st.CurTimeoutCount = 0;
                self.snd_una = seg.ack;
                self.snd_wnd = (seg.window as u32) << self.snd_wscale;
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.disarm(Timer::Retransmit);
            } else {
                return;
            }
        }
        if !self.process_ack(now, seg) || self.state == State::Closed {
            return;
        }
        if seg.payload_len > 0 && matches!(self.state, State::Established | State::FinWait1 | State::FinWait2) {
            if self.state != State::Established && self.abort_on_data(seg) {
                return;
            }
            self.process_data(now, seg);
        }
        if seg.flags.fin() {
            seq += seg.payload_len;
            if self.cfg.fin_past_window && seg.payload_len == 0 && seq == self.rcv_nxt && self.rcv_adv == seq {
                // A bare FIN to a closed window: taken (`tcp_data_queue`), and since the full buffer fails
                // `tcp_try_rmem_schedule`, ACKed at once (ICSK_ACK_NOW) with the window still 0.
                self.fin_rcvd = Some(seq);
                self.consume_fin(now);
                self.ack_now = true;
                return;
            }
            self.fin_rcvd = Some(seq);
            // A FIN taken in order is ACKed by consume_fin's rules; one that waits for data is not.
            if self.rcv_nxt != seq {
                self.ack_now = true;
            }
        }
        self.consume_fin(now);
    }

    /// Header prediction (Linux `tcp_rcv_established`'s fast path, after Van Jacobson): in ESTABLISHED, a
    /// segment whose data starts at RCV.NXT and ends inside the advertised window, with ACK and no SYN,
    /// RST or FIN, a timestamp that passes PAWS, no out-of-order data queued, and an acknowledgement of
    /// SND.UNA that can tell the sender nothing but the window ([`Self::ack_of_nothing`]). For such a segment the steps
    /// of [`Self::on_segment_synchronized`] that [`Self::on_in_order_data`] leaves out all provably do
    /// nothing: it is acceptable, needs no RST or SYN handling, and its ACK is not beyond SND.NXT.
    #[inline]
    fn in_order_data_predicted(&self, seg: &TcpSegment) -> bool {
        #[cfg(test)]
        if crate::tests::slow_path_only() {
            return false;
        }
        let unexpected = TcpFlags(TcpFlags::SYN.0 | TcpFlags::RST.0 | TcpFlags::FIN.0);
        self.state == State::Established
            && seg.payload_len > 0
            && seg.seq == self.rcv_nxt
            && seg.seq + seg.payload_len <= self.rcv_adv
            && seg.flags.ack()
            && (seg.flags.0 & unexpected.0) == 0
            && (!self.ts_ok
                || seg.options.timestamps.is_some_and(|ts| (ts.tsval.wrapping_sub(self.ts_recent) as i32) >= 0))
            && self.ooo.is_empty()
            // Nothing is outstanding (`ack_of_nothing`), so an ACK of SND.UNA is neither beyond SND.NXT nor
            // too old: one comparison for the two tests (an older ACK takes the slow path).
            && seg.ack == self.snd_una
            && self.ack_of_nothing(seg)
    }

    /// The predicted segment's processing: what [`Self::on_segment_synchronized`] does for it, in the same
    /// order (TS.Recent, the acknowledgement, the data, a FIN that waited for this data).
    fn on_in_order_data(&mut self, now: Instant, seg: &TcpSegment) {
        #[cfg(test)]
        crate::tests::note_predicted();
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            // The ACK is SND.UNA = SND.NXT: valid whatever `ts_recent_needs_valid_ack` says.
            debug_assert!(seg.ack == self.snd_nxt);
            if seg.seq <= self.last_ack_sent {
                self.ts_recent = ts.tsval;
            }
        }
        self.on_ack_of_nothing(now, seg);
        self.process_data_in_order(now, seg);
        self.consume_fin(now);
    }

    /// Header prediction at the sender (Linux `tcp_rcv_established`'s fast path for a pure ACK): in a
    /// synchronized state other than SYN-RECEIVED (ESTABLISHED, and the closing states: a sender that
    /// closed with data still queued takes its ACKs in FIN-WAIT-1, half of flows-1000's ACKs of new data),
    /// a segment at RCV.NXT with ACK and no SYN, RST or FIN, a timestamp that passes PAWS, that
    /// acknowledges new data (SND.UNA < SEG.ACK <= SND.NXT) with no SACK blocks and no ECN-Echo, on a
    /// connection in the Open phase that runs neither RACK nor pacing; with no data, or (in ESTABLISHED)
    /// with data in order ([`Self::data_in_order`]: a request or response that acknowledges the peer's
    /// last one; in rr-1000 13,000 segments a second, a quarter of those that missed both predictions).
    /// Such a segment is acceptable, needs no RST, SYN or FIN step, and of [`Self::process_ack`]'s steps
    /// only the window update, [`Self::on_new_ack`] and the FIN-acknowledged step act on it: the SACK,
    /// F-RTO, PRR, RACK, ECN and pacing steps all test a condition excluded here; its data takes
    /// [`Self::process_data`]'s in-order body, as on the slow path.
    #[inline]
    fn new_ack_predicted(&self, seg: &TcpSegment) -> bool {
        #[cfg(test)]
        if crate::tests::slow_path_only() {
            return false;
        }
        let unexpected = TcpFlags(TcpFlags::SYN.0 | TcpFlags::RST.0 | TcpFlags::FIN.0);
        // Only synchronized states come here; SYN-RECEIVED's ACK completes the handshake.
        self.state != State::SynReceived
            && seg.seq == self.rcv_nxt
            && (seg.payload_len == 0 || (self.state == State::Established && self.data_in_order(seg)))
            && seg.flags.ack()
            && (seg.flags.0 & unexpected.0) == 0
            && seg.ack > self.snd_una
            && seg.ack.diff(self.snd_nxt) <= 0
            && seg.options.sack.is_empty()
            && self.rec.is_open()
            && self.rack.is_none()
            && self.pace.is_none()
            && !self.ecn.echoed(seg)
            && (!self.ts_ok
                || seg.options.timestamps.is_some_and(|ts| (ts.tsval.wrapping_sub(self.ts_recent) as i32) >= 0))
    }

    /// The predicted ACK's processing: what [`Self::on_segment_synchronized`] and [`Self::process_ack`] do
    /// for it, in the same order (TS.Recent, the window, the new acknowledgement, our FIN acknowledged,
    /// the data, a FIN that waited for it).
    fn on_new_ack_predicted(&mut self, now: Instant, seg: &TcpSegment) {
        #[cfg(test)]
        crate::tests::note_ack_predicted(self.state != State::Established, seg.payload_len > 0);
        debug_assert!(self.acceptable(seg) && !self.ack_of_nothing(seg) && !self.too_old_ack(seg.ack));
        // The ACK lies in (SND.UNA, SND.NXT]: valid for TS.Recent whatever `ts_recent_needs_valid_ack` says.
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if seg.seq <= self.last_ack_sent {
                self.ts_recent = ts.tsval;
            }
        }
        self.update_send_window(seg);
        self.on_new_ack(now, seg, 0, None);
        self.on_fin_acked(now);
        if seg.payload_len > 0 {
            // `process_data` takes its in-order body for this segment; out of line, as on the slow path.
            self.process_data(now, seg);
            self.consume_fin(now);
        } else {
            // The slow path's last step, `consume_fin`, waits for data: RCV.NXT did not move.
            debug_assert!(self.fin_rcvd != Some(self.rcv_nxt));
        }
    }

    /// Linux `tcp_rcv_state_process` (TCPAbortOnData): in FIN-WAIT-1/2, new data for an application that
    /// reads no more resets the connection. True when it did.
    #[cold]
    #[inline(never)]
    fn abort_on_data(&mut self, seg: &TcpSegment) -> bool {
        if !self.read_closed || seg.seq + seg.payload_len <= self.rcv_nxt {
            return false;
        }
        self.rst = reset_for(seg).map(Box::new);
        self.state = State::Closed;
        self.error = Some(ConnError::Reset);
        self.disarm_all();
        true
    }

    /// RFC 9293 §3.10.7.4, the four cases of segment acceptability.
    fn acceptable(&self, seg: &TcpSegment) -> bool {
        let wnd = self.rcv_adv - self.rcv_nxt;
        let len = seg.payload_len + seg.flags.fin() as u32;
        let in_window = |s: SeqNumber| s >= self.rcv_nxt && s.diff(self.rcv_nxt) < wnd as i32;
        match (len, wnd) {
            (0, 0) => seg.seq == self.rcv_nxt,
            (0, _) => in_window(seg.seq),
            // `fin_past_window`: a bare FIN at RCV.NXT (Linux `tcp_sequence` checks the end less the FIN).
            (1, 0) if seg.flags.fin() && self.cfg.fin_past_window => seg.seq == self.rcv_nxt,
            (_, 0) => false,
            (_, _) => {
                in_window(seg.seq)
                    || in_window(seg.seq + (len - 1))
                    || (seg.seq < self.rcv_nxt && seg.seq + len > self.rcv_nxt)
            }
        }
    }

    /// The FIN is processed once everything before it arrived (RFC 9293 §3.10.7.4 "eighth").
    // The first test inline: every segment that took data asks, and nearly none follows a FIN.
    #[inline(always)]
    fn consume_fin(&mut self, now: Instant) {
        if self.fin_rcvd.is_some() {
            self.take_fin(now);
        }
    }

    fn take_fin(&mut self, now: Instant) {
        let Some(fin) = self.fin_rcvd else { return };
        if self.rcv_nxt != fin {
            return;
        }
        self.rcv_nxt = fin + 1;
        self.adv_field = None;
        // A FIN right at the window's edge is taken (it needs no buffer space; Linux and BSD take it
        // too): the edge moves over it so that RCV.NXT never passes the advertised edge, which the
        // window arithmetic (acceptability, window updates on read) relies on.
        if self.rcv_adv < self.rcv_nxt {
            self.rcv_adv = self.rcv_nxt;
        }
        if self.state == State::Established && self.cfg.fin_delayed_ack && self.ack.on_fin() {
            self.delay_ack_of_fin(now);
        } else {
            self.ack_now = true;
        }
        match self.state {
            State::SynReceived | State::Established => self.state = State::CloseWait,
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    /// Linux `__tcp_ack_snd_check` after `tcp_fin` (`fin_delayed_ack`): in pingpong mode the FIN is ACKed
    /// at once only when more than a segment is unacknowledged, else by `tcp_send_delayed_ack` (an earlier
    /// pending deadline kept).
    #[cold]
    #[inline(never)]
    fn delay_ack_of_fin(&mut self, now: Instant) {
        let v = self.rcv_view();
        if v.unacked > v.rcv_mss {
            self.ack_now = true;
            return;
        }
        let at = self.ack.deadline(now, &self.rtt, &self.cfg);
        if !self.armed(Timer::DelayedAck) || at.as_nanos() < self.timers[Timer::DelayedAck as usize] {
            self.arm(Timer::DelayedAck, at);
        }
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.state = State::TimeWait;
        self.disarm_all();
        self.arm(Timer::TimeWait, now + self.cfg.time_wait);
    }

    /// Returns false when the segment must be dropped (it acknowledges data not yet sent).
    fn process_ack(&mut self, now: Instant, seg: &TcpSegment) -> bool {
        let ack = seg.ack;
        if ack.diff(self.snd_nxt) > 0 {
            self.ack_now = true; // acknowledges something not yet sent: ACK and drop (RFC 9293 §3.10.7.4)
            return false;
        }
        if self.too_old_ack(ack) {
            self.ack_now = true; // the challenge ACK (RFC 5961 §5.2)
            return false;
        }
        if self.ack_of_nothing(seg) {
            self.on_ack_of_nothing(now, seg);
            return true;
        }
        let una_before = self.snd_una;
        let prior_in_flight = if self.pace.is_some() { self.pipe() } else { 0 };
        let prr_any = self.prr_on();
        let prr = prr_any && self.sack_ok;
        let sacked_before = if prr { self.rec.scoreboard.bytes_within(self.snd_una, self.snd_nxt) } else { 0 };
        let lost_before = self.st.RackMarkedLost;
        if let Some(rack) = self.rack.as_mut() {
            rack.begin_ack();
        }
        let frto = self.cfg.frto && self.rec.after_rto();
        let orig_sacked_before = if frto { self.rec.frto_orig_sacked(self.snd_una) } else { 0 };
        let (sacked, dsack_of_probe, sacked_sent) =
            if self.sack_ok { self.process_sack_blocks(now, seg) } else { (0, false, None) };
        let new_sack = sacked > 0;
        if new_sack {
            self.detect_lost_retransmissions();
        }
        let old_wnd = self.snd_wnd;
        let window = self.update_send_window(seg);
        if frto {
            self.frto_on_ack(seg, new_sack, orig_sacked_before);
        }
        if ack == self.snd_una {
            // Linux samples the RTT on every ACK (`tcp_clean_rtx_queue`): one that moves SND.UNA nowhere
            // from the segments its SACK blocks newly cover (one below SND.UNA never gets that far).
            if let Some(s) = RttSampler::sack_sample(now, sacked_sent) {
                self.rtt_sample(now, s.rtt, s.ca_rtt);
            }
        }
        if ack > self.snd_una {
            self.on_new_ack(now, seg, sacked as u32, sacked_sent);
        } else if ack == self.snd_una && self.snd_nxt != self.snd_una {
            // Without SACK, RFC 5681 §2's duplicate ACK. With SACK, RFC 6675 §2's DupAck: an ACK whose
            // SACK blocks tell of data above SND.UNA not SACKed before. A D-SACK-only ACK reports a
            // duplicate and says nothing about the outstanding data, so it is not one.
            let dup = if self.sack_ok {
                new_sack
            } else {
                seg.payload_len == 0 && !seg.flags.syn() && !seg.flags.fin() && window == old_wnd
            };
            if dup {
                self.on_dup_ack(now);
            }
            // 2.4's tcp_ack_is_dubious: an ACK with no data, no new acknowledgement and no larger
            // window (FLAG_NOT_DUP unset: tcp_may_update_window false), or with new SACK information,
            // goes to tcp_try_to_open.
            if (seg.payload_len == 0 && window <= old_wnd) || new_sack {
                self.moderate_cwnd();
            }
        }
        if self.rack_on() {
            let smss = self.smss;
            if let Some(rack) = self.rack.as_mut() {
                rack.end_ack(smss);
            }
            let pure_dup = ack == una_before && !new_sack && seg.payload_len == 0;
            let repaired = self.rack.as_mut().is_some_and(|r| r.tlp_on_ack(ack, dsack_of_probe, pure_dup));
            if repaired && self.rec.open_or_cwr() {
                // RFC 8985 §7.4.2: the probe repaired a loss; Linux answers with a cwnd reduction
                // completed at once (tcp_init_cwnd_reduction, tcp_end_cwnd_reduction).
                self.st.LossProbeRecoveries += 1;
                self.count_congestion_signal();
                let flight = self.reduction_base(self.snd_nxt - self.snd_una);
                self.cwnd.on_congestion_event(now, CongestionEvent::FastRetransmit, flight, self.smss);
            }
            self.rack_detect_loss(now);
            // RFC 8985 §7.2 and Linux (`FLAG_SET_XMIT_TIMER`, set by `tcp_clean_rtx_queue` on FLAG_ACKED):
            // the PTO restarts on an ACK that cumulatively acknowledges data; a duplicate ACK leaves it
            // where it was (it only goes when loss probes are no longer allowed).
            if ack > una_before || !self.tlp_allowed() {
                self.arm_tlp(now);
            }
        }
        if self.ecn.echoed(seg) {
            self.on_ecn_echo(now);
        }
        // After the ECN-Echo's reduction: the ACK that starts a CWR reduction feeds it (Linux's
        // `tcp_cong_control` runs `tcp_cwnd_reduction` after `tcp_fastretrans_alert` entered CA_CWR).
        if prr_any
            && ((prr && self.rec.in_sack_recovery())
                || (matches!(self.rec.phase, Phase::Cwr { .. }) && self.prr_cwr_on()))
        {
            // RFC 6937 §3: DeliveredData = Δsnd.una + ΔSACKd, ΔSACKd net of the SACKed bytes the
            // cumulative ACK took off the scoreboard (counting them again would deliver them twice).
            let sacked_after =
                if self.sack_ok { self.rec.scoreboard.bytes_within(self.snd_una, self.snd_nxt) as i64 } else { 0 };
            let delivered = self.snd_una.diff(una_before).max(0) as i64 + sacked_after - sacked_before as i64;
            let (s, ssthresh, pipe) = (self.snd(), self.cwnd.ssthresh(), self.pipe());
            // Linux adds the bound's extra segment only when SND.UNA advanced and nothing was newly lost.
            let extra = !self.cfg.prr_ssrb_advance_only || (ack > una_before && self.st.RackMarkedLost == lost_before);
            self.rec.prr_on_ack(delivered.max(0) as u64, s, ssthresh, pipe, extra, self.cfg.prr_packets);
        }
        if self.pace.is_some() && ack >= una_before {
            self.after_ack_paced(now, prior_in_flight);
        }
        self.on_fin_acked(now);
        true
    }

    /// Nothing outstanding, nothing reported: of the steps of [`Self::process_ack`] only the window update
    /// and RACK's per-ACK reset act (no SACK blocks, no new or duplicate ACK, no loss to find: RACK disarms
    /// its reordering timer and, with no data out, the loss probe), and the FIN's state change.
    #[inline(always)]
    fn on_ack_of_nothing(&mut self, now: Instant, seg: &TcpSegment) {
        self.update_send_window(seg);
        // RACK's steps after the window's (they share no state), behind one test of the option.
        if let Some(rack) = self.rack.as_mut() {
            rack.begin_ack();
            if self.sack_ok {
                debug_assert!(self.rack.as_ref().is_some_and(|r| r.lost_out() == 0 && r.pipe() == 0));
                self.disarm(Timer::Reorder);
                self.disarm(Timer::LossProbe);
            }
        }
        self.on_fin_acked(now);
    }

    /// Whether `seg`'s acknowledgement can tell the sender nothing but the window: no data outstanding,
    /// no SACK blocks, no ECN-Echo, no loss probe to settle, not paced, no SACK recovery's PRR to feed.
    #[inline(always)]
    fn ack_of_nothing(&self, seg: &TcpSegment) -> bool {
        self.snd_una == self.snd_nxt
            && seg.options.sack.is_empty()
            && self.pace.is_none()
            && !self.rec.in_sack_recovery()
            && !self.ecn.echoed(seg)
            && self.rack.as_ref().is_none_or(|r| !r.tlp_outstanding())
    }

    /// `too_old_ack_challenged`: `ack` lies more than min(max window, bytes acknowledged) below SND.UNA
    /// (Linux `tcp_ack`, where `bytes_acked` counts sequence space: the SYN of an active open, data, FIN).
    #[inline(always)]
    fn too_old_ack(&self, ack: SeqNumber) -> bool {
        // Every segment asks; only an ACK below SND.UNA needs the bound.
        ack < self.snd_una && self.cfg.too_old_ack_challenged && self.below_too_old_bound(ack)
    }

    #[inline(never)]
    fn below_too_old_bound(&self, ack: SeqNumber) -> bool {
        let bytes_acked = self.st.ThruOctetsAcked + self.active_open as u64 + self.state_fin_acked() as u64;
        let bound = (self.max_snd_wnd as u64).min(bytes_acked);
        self.snd_una.diff(ack) as u64 > bound
    }

    /// RFC 9293 §3.10.7.4: the send window from a newer segment (or one that acknowledges new data).
    /// Returns the segment's window, scaled.
    #[inline]
    fn update_send_window(&mut self, seg: &TcpSegment) -> u32 {
        let (ack, old_wnd) = (seg.ack, self.snd_wnd);
        let window = (seg.window as u32) << self.snd_wscale;
        if self.snd_wl1 < seg.seq || (self.snd_wl1 == seg.seq && self.snd_wl2 <= ack) || ack > self.snd_una {
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = ack;
            // The window last recorded again (every data segment of a steady transfer, at the receiver):
            // the maxima hold it already, and a window above zero cleared the persist state when it came
            // (the persist timer is armed only on a zero window).
            if window == old_wnd && window as u64 == self.st.CurRwinRcvd {
                debug_assert!(self.max_snd_wnd >= window && self.st.MaxRwinRcvd >= window as u64);
                debug_assert!(
                    window == 0 || (!self.armed(Timer::Persist) && self.persist_backoff == 0 && !self.probe_pending)
                );
                return window;
            }
            self.snd_wnd = window;
            self.max_snd_wnd = self.max_snd_wnd.max(window);
            self.st.CurRwinRcvd = window as u64;
            self.st.MaxRwinRcvd = self.st.MaxRwinRcvd.max(window as u64);
            if window == 0 && old_wnd != 0 {
                self.st.ZeroRwinRcvd += 1;
            }
            if window > 0 {
                self.disarm(Timer::Persist);
                self.persist_backoff = 0;
                self.probe_pending = false;
            }
        }
        window
    }

    /// Our FIN acknowledged: the closing states move on.
    #[inline]
    fn on_fin_acked(&mut self, now: Instant) {
        if self.state_fin_acked() {
            match self.state {
                State::FinWait1 => self.state = State::FinWait2,
                State::Closing => self.enter_time_wait(now),
                State::LastAck => {
                    self.state = State::Closed;
                    self.disarm_all();
                }
                _ => {}
            }
        }
    }

    fn state_fin_acked(&self) -> bool {
        self.fin_queued && self.snd_una == self.write_end + 1
    }

    /// Updates the scoreboard (and RACK) from the SACK option; returns the bytes newly SACKed, whether a
    /// D-SACK reports the last tail loss probe as a duplicate, and under `rtt_sampling = "linux"` the send
    /// times the SACK sample takes.
    fn process_sack_blocks(&mut self, now: Instant, seg: &TcpSegment) -> (u64, bool, SackedSent) {
        let blocks = seg.options.sack.as_slice();
        if blocks.is_empty() {
            return (0, false, None);
        }
        let mut sacked_sent = None;
        let mut dsack_of_probe = false;
        self.st.SACKsRcvd += 1;
        self.st.SACKBlocksRcvd += blocks.len() as u64;
        let mut new = 0u64;
        for (i, b) in blocks.iter().enumerate() {
            if b.right <= b.left {
                continue;
            }
            // RFC 2883 §4: a first block below the cumulative ACK, or inside the second block, is a D-SACK.
            let dsack = i == 0
                && (b.right <= seg.ack || blocks.get(1).is_some_and(|b2| b2.left <= b.left && b.right <= b2.right));
            if dsack {
                self.st.DSACKDups += 1;
                self.on_dsack(*b);
                let (una, nxt) = (self.snd_una, self.snd_nxt);
                let after_reordering = self.cfg.rack_dsack_after_reordering;
                if let Some(rack) = self.rack.as_mut() {
                    let of_probe = rack.tlp_end() == Some(b.right);
                    dsack_of_probe |= of_probe;
                    rack.on_dsack(b.left, b.right, una, nxt, of_probe, after_reordering);
                }
                continue;
            }
            let (mut left, mut right) = (b.left.max(self.snd_una), b.right.min(self.snd_nxt));
            if self.cfg.sack_whole_segments {
                // Linux `tcp_match_skb_to_sack`: a block marks only the segments it covers whole.
                match self.rack.as_ref().map(|r| r.whole_segments(left, right)) {
                    Some(Some((l, r))) => (left, right) = (l, r),
                    Some(None) => continue,
                    None => {}
                }
            }
            if right > left {
                new += self.rec.scoreboard.insert(left, right) as u64;
                self.sampler.on_sack(left, right, &mut sacked_sent);
                if let Some(rate) = self.rate.as_mut() {
                    rate.on_sacked(left, right);
                }
                if let Some(rack) = self.rack.as_mut() {
                    rack.on_sack(left, right, now);
                }
            }
        }
        (new, dsack_of_probe, sacked_sent)
    }

    /// `newly_sacked`: the bytes this ACK's SACK blocks newly SACKed.
    /// `sacked_sent`: under `rtt_sampling = "linux"`, what the SACK blocks newly covered (the SACK sample).
    fn on_new_ack(&mut self, now: Instant, seg: &TcpSegment, newly_sacked: u32, sacked_sent: SackedSent) {
        let ack = seg.ack;
        self.ack_rtt_sample = None;
        // The handshake paths move SND.UNA past the SYN themselves, so everything here is data (or the FIN).
        let data_acked = ack.min(self.write_end).diff(self.snd_una).max(0) as u32;
        // Most connections run neither RACK nor the delivery-rate sampler (BBR's): one test an ACK for
        // both, where each of their six steps tested its own option (~15 instructions an ACK).
        let optional = self.rate.is_some() || self.rack.is_some();
        let rack_growth = match self.rack_active().filter(|_| optional && self.cfg.cwnd_growth_packets) {
            Some(rack) => Some(rack.packets_acked(ack, self.smss)),
            None => None,
        };
        let growth = match rack_growth {
            Some(packets) => packets.saturating_mul(self.smss) + newly_sacked,
            None if self.cfg.cwnd_growth_delivered => self.newly_delivered(ack, data_acked, newly_sacked),
            None => data_acked,
        };
        let flight_before = self.cwnd_flight();
        self.st.ThruOctetsAcked += data_acked as u64;
        self.snd_una = ack;
        self.cwnd.on_cumulative_ack(ack);
        self.rec.on_cumulative_ack(ack);
        self.st.CurTimeoutCount = 0;

        // RTT sample: every ACK of new data with timestamps (RFC 7323 §4.1), else the timed segment (Karn);
        // under `linux`, every ACK from the segments' send times.
        let ts_rtt = self.ts_rtt(now, seg);
        let sample = if self.sampler.linux() {
            let s = self.sampler.on_ack_linux(ack, now, ts_rtt, sacked_sent);
            if let Some(s) = s {
                self.rtt_sample_own(now, s.rtt);
                // HyStart and RACK's minimum read the newest segment's RTT (`ca_rtt_us`).
                self.ack_rtt_sample = Some(s.ca_rtt);
            }
            s.map(|s| s.ca_rtt)
        } else {
            let sample = self.sampler.on_ack(ack, now, ts_rtt, self.ts_ok);
            if let Some(r) = sample {
                self.rtt_sample_own(now, r);
            }
            sample
        };
        if optional {
            self.options_on_new_ack(now, ack, ts_rtt, sample);
        }

        // Open (nearly every ACK) is answered before the phase's own match, and the other phases' steps are
        // out of line: the two matches, on the phase and then on its verdict, were two jump tables an ACK.
        let restart_timer = if self.rec.is_open() {
            if self.cfg.cwv == Cwv::Rfc7661 {
                let srtt = self.rtt.srtt().unwrap_or(self.rtt.rto());
                let iw = self.cfg.initial_window.bytes(self.smss);
                if self.cwnd.on_open_ack(now, data_acked, srtt, iw) {
                    self.st.OtherReductions += 1;
                }
            }
            // Under `prr_cwr` an ACK that starts a CWR reduction grows nothing: Linux's `tcp_cong_control`
            // either reduces (the state is CWR once `tcp_fastretrans_alert` saw the ECN-Echo) or grows.
            if !(self.ecn.echoed(seg) && self.prr_cwr_on() && self.ecn.may_react(ack)) {
                self.grow_cwnd(now, growth, flight_before);
            }
            true
        } else {
            self.new_ack_outside_open(now, ack, data_acked, growth, flight_before)
        };

        if self.snd_una == self.snd_nxt {
            self.disarm(Timer::Retransmit); // RFC 6298 (5.2)
            self.disarm(Timer::Reorder);
        } else if restart_timer {
            self.restart_rto(now); // RFC 6298 (5.3)
        }
    }

    /// [`Self::on_new_ack`]'s congestion steps outside the Open phase (recovery, CWR, after an RTO);
    /// returns whether the retransmission timer restarts.
    #[inline(never)]
    fn new_ack_outside_open(
        &mut self,
        now: Instant,
        ack: SeqNumber,
        data_acked: u32,
        growth: u32,
        flight_before: u32,
    ) -> bool {
        let mut restart_timer = true;
        let reno = self.cfg.congestion_control == CongestionControlKind::Reno;
        match self.rec.on_new_ack(ack, data_acked, self.smss, reno) {
            AckVerdict::FastRecoveryEnd => {
                let flight = self.snd_nxt - self.snd_una;
                let before = self.cwnd.window();
                self.cwnd.on_recovery_exit(now, flight, self.smss);
                // RFC 6582's exit below ssthresh clamps a burst, as Linux's moderation after Reno
                // recovery did; web100 counted that in OtherReductions.
                if self.cwnd.window() < before {
                    self.st.OtherReductions += 1;
                }
                // 2.4's ACK that ends recovery goes on to tcp_try_to_open (its state is Open again).
                self.moderate_cwnd();
            }
            AckVerdict::PartialAck { restart_rto } => restart_timer = restart_rto,
            AckVerdict::Reducing { sack, ended } => {
                if sack && ended {
                    if let Some(rack) = self.rack.as_mut() {
                        rack.on_recovery_exit();
                    }
                    self.moderate_cwnd();
                }
                if ended && self.cfg.cwnd_growth_at_reduction_end {
                    self.grow_cwnd(now, growth, flight_before);
                }
                if !sack && self.cfg.ifq_full == IfqFull::Linux24 {
                    // 2.4's tcp_fastretrans_alert in CWR: tcp_cwnd_down on each ACK, or, on the ACK that
                    // ends it, tcp_complete_cwr and then tcp_try_to_open's moderation.
                    let flight = self.snd_nxt - self.snd_una;
                    if ended {
                        self.cwnd.complete_cwr_linux24();
                        self.moderate_cwnd();
                    } else {
                        self.cwnd.cwnd_down_linux24(flight, self.smss);
                    }
                }
            }
            AckVerdict::AfterTimeout { ended } => {
                if ended {
                    if let Some(rack) = self.rack.as_mut() {
                        rack.on_recovery_exit();
                    }
                }
                self.grow_cwnd(now, growth, flight_before);
                if ended {
                    self.moderate_cwnd();
                }
            }
            AckVerdict::Open => unreachable!("the phase's own match answers Open only in the Open phase"),
        }
        restart_timer
    }

    /// Charges the time since the last change to the old sender-limit state and enters `lim`
    /// (web100 `web100_state_update`).
    fn set_snd_lim(&mut self, now: Instant, lim: SndLim) {
        match self.snd_lim {
            Some((old, _)) if old == lim => return,
            Some((old, since)) => self.charge_snd_lim(old, now.saturating_since(since)),
            None => {}
        }
        match lim {
            SndLim::Rwin => self.st.SndLimTransRwin += 1,
            SndLim::Cwnd => self.st.SndLimTransCwnd += 1,
            SndLim::Snd => self.st.SndLimTransSnd += 1,
        }
        self.snd_lim = Some((lim, now));
    }

    fn charge_snd_lim(&mut self, lim: SndLim, d: Duration) {
        let ms = d.as_nanos() as f64 / 1e6;
        match lim {
            SndLim::Rwin => self.st.SndLimTimeRwin += ms,
            SndLim::Cwnd => self.st.SndLimTimeCwnd += ms,
            SndLim::Snd => self.st.SndLimTimeSnd += ms,
        }
    }

    /// The send sequence space as loss recovery sees it.
    #[inline]
    fn snd(&self) -> Snd {
        Snd { una: self.snd_una, nxt: self.snd_nxt, smss: self.smss }
    }

    /// RACK's state when the connection runs RACK (configured and SACK negotiated).
    #[inline]
    fn rack_active(&self) -> Option<&Rack> {
        self.rack.as_deref().filter(|_| self.sack_ok)
    }

    /// RFC 2861 §3 decay of an unused cwnd (`cwv = "rfc2861"` or `"linux"`), outside recovery; see
    /// [`Cwnd::decay`].
    #[inline]
    fn cwnd_validate(&mut self, now: Instant) {
        // Linux calls `tcp_cwnd_application_limited` only under tcp_slow_start_after_idle
        // (`tcp_cwnd_validate`): with it off an application-limited cwnd never decays.
        // Linux runs `tcp_cwnd_validate` from `tcp_write_xmit` after it sent data (or found cwnd full),
        // not when an ACK or a closed window finds nothing to send.
        if self.cfg.cwv == Cwv::Linux && self.last_data_sent != Some(now) {
            return;
        }
        let linux_off = self.cfg.cwv == Cwv::Linux && !self.cfg.slow_start_after_idle;
        // Linux `tcp_is_cwnd_limited`: in slow start a cwnd below twice the largest flight of the window
        // counts as used, so `tcp_cwnd_validate` restamps it ("network is feed fully") and no decay runs
        // within an RTO of that.
        if self.cfg.cwv == Cwv::Linux
            && self.cwnd.window() < self.cwnd.ssthresh()
            && (self.cwnd_limited || (self.cwnd.window() as u64) < 2 * self.max_flight as u64)
        {
            self.cwnd.fed(now);
            return;
        }
        if self.cwnd.decays() && self.rec.is_open() && !linux_off {
            self.cwnd_decay(now);
        }
    }

    #[inline(never)]
    fn cwnd_decay(&mut self, now: Instant) {
        let flight = self.cwnd_flight();
        let iw = self.cfg.initial_window.bytes(self.smss);
        let send_buffer_full = self.send_buffer_free() < self.smss as u64;
        if self.cwnd.decay(now, flight, self.rtt.rto(), iw, self.smss, send_buffer_full) {
            self.st.OtherReductions += 1;
        }
    }

    /// The interface refused a segment: count the stall and, under `ifq_full = "cwr"`, reduce cwnd once per
    /// window (at once to ssthresh, or spread by PRR under `prr_cwr`); under `"linux-2.4"` as 2.4's
    /// `tcp_enter_cwr`, whose every call web100 counted in CongSignals, the reduction itself made one
    /// segment per two ACKs (`tcp_cwnd_down`).
    fn on_send_stall(&mut self, now: Instant) {
        self.st.SendStall += 1;
        match self.cfg.ifq_full {
            IfqFull::Cwr if self.rec.is_open() => {
                self.count_congestion_signal();
                let cwnd = self.cwnd.window();
                let recover_fs = self.recover_fs();
                self.cwnd.on_congestion_event(now, CongestionEvent::FastRetransmit, cwnd, self.smss);
                self.rec.enter_cwr(self.snd(), recover_fs);
            }
            IfqFull::Linux24 => {
                self.count_congestion_signal();
                if self.rec.is_open() {
                    let (flight, recover_fs) = (self.cwnd_flight(), self.recover_fs());
                    self.cwnd.enter_cwr_linux24(flight, self.smss);
                    self.rec.enter_cwr(self.snd(), recover_fs);
                }
            }
            _ => {}
        }
    }

    /// An ACK carried ECN-Echo (RFC 3168 §6.1.2): treated as a loss would be, cwnd and ssthresh reduced
    /// as at a fast retransmit, but at most once per window of data and not during loss recovery, which
    /// has reduced already; no retransmission. Linux `tcp_enter_cwr` from `tcp_try_to_open`: only in the
    /// Open or Disorder state, ssthresh from the controller, CA_CWR until SND.NXT of then is passed: under
    /// `prr_cwr` what may be sent meanwhile is PRR's (`tcp_cwnd_reduction`), else cwnd is ssthresh at once.
    fn on_ecn_echo(&mut self, now: Instant) {
        self.st.ECNsignals += 1;
        if !self.rec.is_open() || !self.ecn.may_react(self.snd_una) {
            return;
        }
        self.count_congestion_signal();
        let recover_fs = self.recover_fs();
        let flight = self.reduction_base(self.snd_nxt - self.snd_una);
        self.cwnd.on_congestion_event(now, CongestionEvent::FastRetransmit, flight, self.smss);
        self.rec.enter_cwr(self.snd(), recover_fs);
        self.ecn.on_reduced(self.snd_nxt);
    }

    /// Linux 2.4 `tcp_moderate_cwnd` (`max_burst`), where `tcp_try_to_open` calls it; counted in
    /// OtherReductions when it lowers cwnd.
    fn moderate_cwnd(&mut self) {
        if self.cfg.max_burst != 0 && self.rec.is_open() {
            let flight = self.cwnd_flight();
            if self.cwnd.moderate(flight, self.cfg.max_burst, self.smss) {
                self.st.OtherReductions += 1;
            }
        }
    }

    /// `cwnd_growth_delivered`: what an ACK up to `ack` newly delivered of the `data_acked` bytes it
    /// acknowledges (Linux's `acked_sacked`), before SND.UNA and the scoreboard move. With SACK: the
    /// acknowledged bytes not SACKed before, plus what this ACK's blocks newly SACKed. Without: one
    /// segment per duplicate ACK was counted as delivered when it came (`tcp_add_reno_sack`), so the
    /// advance counts the rest, at least one segment (`tcp_remove_reno_sacks`).
    #[inline(never)]
    fn newly_delivered(&self, ack: SeqNumber, data_acked: u32, newly_sacked: u32) -> u32 {
        if self.sack_ok {
            let sacked_below = self.rec.scoreboard.bytes_within(self.snd_una, ack);
            data_acked.saturating_sub(sacked_below) + newly_sacked
        } else {
            let counted = self.rec.dupacks.saturating_mul(self.smss);
            data_acked.saturating_sub(counted).max(data_acked.min(self.smss))
        }
    }

    // Inlined: once per ACK of new data, where the call cost about as much as Reno's growth.
    #[inline(always)]
    fn grow_cwnd(&mut self, now: Instant, acked: u32, flight_size: u32) {
        if acked == 0 || self.cwnd.owns_window() {
            return;
        }
        // Under `tso` a deferral leaves the window unfilled on purpose: growth stays allowed up to the last
        // cwnd-limited SND.NXT. Without it that mark is never set, and a comparison with it (an ISS) would
        // flip once 2^31 bytes have been sent.
        let tso_limited = self.cfg.tso && self.snd_una <= self.tso_cwnd_limited_until;
        // Linux `tcp_is_cwnd_limited`: the window's flag, else in slow start twice its largest flight.
        let used = match self.cfg.cwv {
            Cwv::Linux if self.cwnd_limited => self.cwnd.window(),
            Cwv::Linux => flight_size.max(self.max_flight),
            _ => flight_size,
        };
        if !self.cwnd.growth_allowed(used, self.smss) && !tso_limited {
            return;
        }
        let (smss, after_rto) = (self.smss, self.rec.after_rto());
        let info =
            || AckInfo { acked, smss, flight_size, after_rto, srtt: self.rtt.srtt(), rtt_sample: self.ack_rtt_sample };
        let in_ss = self.cwnd.window() < self.cwnd.ssthresh();
        match self.cwnd.on_ack(now, acked, smss, after_rto, info) {
            Growth::SlowStart => self.st.SlowStart += 1,
            Growth::CongAvoid { grew } => {
                self.st.CongAvoid += 1;
                self.st.X_CongAvoidSteps += grew as u64;
            }
            Growth::None => {}
        }
        match self.cwnd.take_slow_start_exit() {
            Some(SlowStartExit::AckTrain) => {
                self.st.HystartTrainDetect += 1;
                self.st.HystartTrainCwnd += self.cwnd.window() as u64;
            }
            Some(SlowStartExit::Delay) => {
                self.st.HystartDelayDetect += 1;
                self.st.HystartDelayCwnd += self.cwnd.window() as u64;
            }
            None => {}
        }
        let w = self.cwnd.window() as u64;
        if in_ss {
            self.st.MaxSsCwnd = self.st.MaxSsCwnd.max(w);
        } else {
            self.st.MaxCaCwnd = self.st.MaxCaCwnd.max(w);
        }
    }

    fn on_dup_ack(&mut self, now: Instant) {
        if self.cfg.dup_acks_in == DupAcksIn::Rfc5681 {
            self.st.DupAcksIn += 1;
        }
        let rack = self.rack_on();
        if self.rec.on_dup_ack(self.snd_una, self.smss, self.sack_ok, rack) {
            self.enter_recovery(now);
        }
    }

    /// Fast retransmit and the start of loss recovery (RFC 5681 §3.2, RFC 6582 §3.2, RFC 6675 §5).
    fn enter_recovery(&mut self, now: Instant) {
        self.st.FastRetran += 1;
        let recover_fs = self.recover_fs();
        // Within a CWR reduction the window is reduced already: no second decrease, no second CWR flag.
        if !self.rec.reduced_already() {
            self.count_congestion_signal();
            // RFC 5681 §3.2 step 2 (and RFC 6675 §5 step 4.2): limited-transmit segments MUST NOT count.
            let flight = (self.snd_nxt - self.snd_una) - self.rec.limited_sent;
            let flight = self.cwnd.loss_flight(flight, self.smss, || {
                // RFC 7661 §4.4.3's "data presumed lost": unSACKed bytes below IsLost's boundary (one
                // segment when nothing IsLost yet).
                self.rec.lost_below(self.smss).map_or(self.smss, |l| {
                    let l = l.max(self.snd_una);
                    (l - self.snd_una) - self.rec.scoreboard.bytes_within(self.snd_una, l)
                })
            });
            let flight = self.reduction_base(flight);
            self.cwnd.on_congestion_event(now, CongestionEvent::FastRetransmit, flight, self.smss);
        }
        self.cwnd.on_recovery_start();
        let (s, rack) = (self.snd(), self.rack_on());
        let prr_cwr = self.prr_cwr_on();
        self.rec.enter_fast_recovery(s, self.sack_ok, rack, prr_cwr, recover_fs);
        if let Some(rack) = self.rack.as_mut() {
            rack.clear_tlp();
        }
        self.tlp_pending = false;
        self.disarm(Timer::LossProbe);
        self.sampler.forget_timed();
    }

    /// Lost retransmissions (Linux `tcp_mark_lost_retrans`, before RACK): see
    /// [`Recovery::detect_lost_retransmissions`]. Off in `rfc` (RFC 6675 leaves them to the RTO); RACK
    /// finds lost retransmissions by their transmit time.
    fn detect_lost_retransmissions(&mut self) {
        if self.cfg.lost_retransmit_detection && !self.rack_on() {
            let s = self.snd();
            self.rec.detect_lost_retransmissions(s);
        }
    }

    /// F-RTO after a timeout ([`Recovery::frto_on_ack`]). A spurious timeout is undone as Linux's
    /// `tcp_try_undo_loss` does (`tcp_undo_cwnd_reduction` with the loss marks cleared): cwnd and
    /// ssthresh as before the timeout, the Open state, counted in CongOverCount.
    fn frto_on_ack(&mut self, seg: &TcpSegment, new_sack: bool, orig_sacked_before: u32) {
        let ack = seg.ack;
        let dupack = ack == self.snd_una && self.snd_nxt != self.snd_una && seg.payload_len == 0;
        let can_send_new = self.write_end > self.snd_nxt && ack.max(self.snd_una) + self.snd_wnd > self.snd_nxt;
        let s = self.snd();
        if self.rec.frto_on_ack(s, ack, dupack, new_sack, orig_sacked_before, can_send_new) == FrtoVerdict::Spurious {
            self.cwnd.on_spurious_congestion_event();
            if let Some(rack) = self.rack.as_mut() {
                rack.unmark_lost();
            }
            self.st.CongOverCount += 1;
        }
    }

    /// RFC 3708 §3 with `undo`: when D-SACK shows every retransmission of the fast-recovery episode
    /// needless, the congestion response is undone (Linux `tcp_try_undo_dsack`), counted in CongOverCount.
    fn on_dsack(&mut self, b: SackBlock) {
        if self.cfg.undo && self.rec.on_dsack(b, self.smss) {
            self.cwnd.on_spurious_congestion_event();
            self.st.CongOverCount += 1;
        }
    }

    /// What is in flight as cwnd counts it: bytes, or with `cwnd_unit = "packets"` whole segments (Linux
    /// `tcp_packets_in_flight`: a 1-byte segment takes a whole packet of cwnd), as bytes of SMSS each.
    #[inline]
    fn cwnd_flight(&self) -> u32 {
        if self.cwnd.counts_packets() {
            self.cwnd.packets_out().saturating_mul(self.smss)
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    /// PRR applies (`prr`), unless the controller owns the window (Linux's `cong_control` skips
    /// `tcp_cwnd_reduction`).
    #[inline]
    fn prr_on(&self) -> bool {
        self.cwnd.prr()
    }

    /// A CWR reduction is spread by PRR (`prr_cwr`, under `prr`: not when the controller owns the window),
    /// unless 2.4's own reduction runs the CWR phase (`ifq_full = "linux-2.4"`: `tcp_cwnd_down`).
    #[inline]
    fn prr_cwr_on(&self) -> bool {
        self.prr_on() && self.cfg.prr_cwr && self.cfg.ifq_full != IfqFull::Linux24
    }

    /// PRR's RecoverFS for a reduction starting now, taken before the window is reduced: the flight
    /// (RFC 6937 §3), or under `prr_packets` the window (Linux's `prior_cwnd`).
    fn recover_fs(&self) -> u32 {
        if self.cfg.prr_packets {
            self.cwnd.window()
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    /// Linux's `snd_cwnd`, bytes, as `tcp_info` and the RFC 4898 `CurCwnd` report it: while PRR governs
    /// what is sent (a SACK recovery under `prr`, a CWR reduction under `prr_cwr`) what is in flight plus
    /// what PRR still allows, as `tcp_cwnd_reduction` sets it on every ACK (snd_cwnd = in_flight + sndcnt,
    /// each send then taking one from the allowance and adding one to the flight); else the window
    /// (`cwnd`), to which the reduction's end sets it.
    pub(crate) fn linux_snd_cwnd(&self) -> u32 {
        match self.rec.prr_allowance(self.prr_on(), self.prr_cwr_on()) {
            Some(allowance) => self.pipe().saturating_add(allowance.min(u32::MAX as u64) as u32),
            None => self.cwnd.window(),
        }
    }

    /// Linux's `icsk_ca_state` from the recovery phase.
    fn ca_state(&self) -> CaState {
        match self.rec.phase {
            Phase::Open if self.rec.dupacks > 0 || !self.rec.scoreboard.is_empty() => CaState::Disorder,
            Phase::Open => CaState::Open,
            Phase::Cwr { .. } => CaState::Cwr,
            Phase::NewReno { .. } | Phase::Sack { .. } => CaState::Recovery,
            Phase::Loss { .. } => CaState::Loss,
        }
    }

    /// The end of an ACK on a paced (or TSQ-limited) connection: the rate sample for a window-owning
    /// controller, else `tcp_update_pacing_rate`; `prior_in_flight` was in flight before the ACK.
    #[cold]
    #[inline(never)]
    fn after_ack_paced(&mut self, now: Instant, prior_in_flight: u32) {
        if self.rate.is_some() {
            self.on_rate_sample(now, prior_in_flight);
            return;
        }
        let (cwnd, ssthresh, flight, srtt) =
            (self.cwnd.window(), self.cwnd.ssthresh(), self.snd_nxt - self.snd_una, self.rtt.srtt());
        if let Some(pace) = self.pace.as_mut() {
            pace.update_from_cwnd(cwnd, ssthresh, flight, srtt);
        }
    }

    /// `tcp_rate_gen` and `tcp_cong_control` for a window-owning controller, at the end of an ACK;
    /// `prior_in_flight` was in flight before it.
    fn on_rate_sample(&mut self, now: Instant, prior_in_flight: u32) {
        let min_rtt = (self.st.CountRTT > 0).then(|| Duration::from_nanos((self.st.MinRTT * 1e6) as u64));
        let Some(rate) = self.rate.as_mut() else { return };
        let rs = rate.on_ack_done(now, prior_in_flight, min_rtt);
        let (delivered, delivered_at, lost) = (rate.delivered(), rate.delivered_at(), rate.lost());
        let cx = AckContext {
            smss: self.smss,
            in_flight: self.pipe(),
            ca_state: self.ca_state(),
            delivered,
            delivered_at,
            lost,
            srtt: self.rtt.srtt(),
            next_departure: self.pace.as_ref().map_or(now, |p| p.next),
        };
        self.cwnd.on_rate_sample(now, &rs, &cx);
        if let (Some(r), Some(pace)) = (self.cwnd.pacing_rate(), self.pace.as_mut()) {
            pace.set_rate(r);
        }
        if self.cwnd.marks_app_limited() {
            let in_flight = cx.in_flight;
            if let Some(rate) = self.rate.as_mut() {
                rate.mark_app_limited(in_flight);
            }
        }
    }

    /// `tcp_rate_check_app_limited`, when the application writes: less than a segment unsent, cwnd not
    /// filled, no loss waiting for repair, nothing in the host's queue.
    fn check_app_limited(&mut self) {
        let unsent = if self.write_end > self.snd_nxt { self.write_end - self.snd_nxt } else { 0 };
        let pipe = self.pipe();
        if unsent < self.smss && pipe < self.cwnd.window() && self.rec.is_open() {
            if let Some(rate) = self.rate.as_mut() {
                rate.mark_app_limited(pipe);
            }
        }
    }

    /// Bytes in flight: where RACK runs (the `linux` personality), Linux's `tcp_packets_in_flight` in
    /// every phase; otherwise by the rule of the current recovery phase.
    ///
    /// Without RACK and outside the phases that count their own pipe (SACK recovery, after a timeout), that
    /// rule is FlightSize: answered here, inline, since every send asks and the full rule does not inline.
    #[inline]
    fn pipe(&self) -> u32 {
        if self.rack.is_none() && !self.rec.retransmits() {
            let flight = self.snd_nxt - self.snd_una;
            debug_assert_eq!(flight, self.pipe_by_phase());
            return flight;
        }
        // RACK's count (the `linux` personality's every call) is kept: a load, not a call.
        if let Some(p) = self.pipe_linux() {
            return p;
        }
        self.pipe_by_phase()
    }

    #[inline(never)]
    fn pipe_by_phase(&self) -> u32 {
        match self.pipe_linux() {
            Some(p) => p,
            None => self.rec.pipe(self.snd(), || self.rack_active()),
        }
    }

    /// Linux counts what is in flight one way in every state and for every congestion control
    /// (`tcp_packets_in_flight`: outstanding less SACKed and lost, plus retransmitted), where RFC 5681
    /// outside recovery counts FlightSize, SACKed data included. RACK's marks are that count, kept as they
    /// change. For BBR, whose cwnd and PROBE_RTT are sized in packets in the network, the difference is
    /// large: with a hole at SND.UNA and the rest of a window SACKed, FlightSize stays at the window, and
    /// cwnd 4 in PROBE_RTT (or a packet-conservation cwnd) lets nothing out, so that no later segment is
    /// SACKed and RACK never finds the hole until PROBE_RTT ends (docs/bbr.md § bbr-loss). After a
    /// timeout too: `tcp_enter_loss` marks every unSACKed segment lost, so what counts is what was
    /// retransmitted since and new data sent past the timeout's SND.NXT, each until SACKed or
    /// acknowledged. (RFC 6675's count after an RTO keeps SACKed new data in the pipe, which holds back
    /// the retransmissions those SACKs call for.) `None` where RACK does not run.
    #[inline]
    fn pipe_linux(&self) -> Option<u32> {
        self.rack_active().map(|r| r.pipe())
    }

    /// The window the sender may fill: cwnd, NewReno's inflation, and RFC 3042 limited transmit. Under
    /// Linux's count no limited transmit: a SACKed segment leaves the count, which is Linux's way of
    /// letting new data out on duplicate ACKs (allowing both would send each freed segment twice over).
    #[inline]
    fn send_window(&self) -> u32 {
        let limited_transmit = self.cfg.limited_transmit && self.pipe_linux().is_none();
        self.rec.send_window(self.cwnd.window(), self.smss, limited_transmit)
    }

    /// The estimator takes `r`; congestion control and RACK's minimum `ca_rtt` (Linux's `ca_rtt_us`, the
    /// newest segment's RTT, under `rtt_sampling = "linux"`; `r` otherwise).
    fn rtt_sample(&mut self, now: Instant, r: Duration, ca_rtt: Duration) {
        self.rtt_sample_own(now, r);
        self.ack_rtt_sample = Some(ca_rtt);
        self.options_on_rtt_sample(now, ca_rtt);
    }

    /// [`Self::on_new_ack`]'s steps for RACK and the delivery-rate sampler, in each one's own order (the
    /// two, the estimator and the RTT sampler share no state, so these may follow the sample).
    #[inline(never)]
    fn options_on_new_ack(&mut self, now: Instant, ack: SeqNumber, ts_rtt: Option<Duration>, sample: Option<Duration>) {
        if let Some(rate) = self.rate.as_mut() {
            rate.on_cumulative_ack(ack);
            if let Some(r) = ts_rtt {
                rate.on_ts_rtt(r);
            }
        }
        if let Some(rack) = self.rack.as_mut().filter(|_| self.sack_ok) {
            rack.on_cumulative_ack(ack, now);
        }
        if let Some(r) = sample {
            self.options_on_rtt_sample(now, r);
        }
    }

    /// An RTT sample's steps for the delivery-rate sampler and RACK, after the estimator took it.
    #[inline(always)]
    fn options_on_rtt_sample(&mut self, now: Instant, r: Duration) {
        if let (Some(rate), Some(srtt)) = (self.rate.as_mut(), self.rtt.srtt()) {
            rate.srtt_mean.set(now, srtt);
        }
        if let Some(rack) = self.rack.as_mut() {
            rack.on_rtt_sample(r);
        }
    }

    /// An RTT sample: the estimator and RFC 4898's RTT gauges.
    #[inline(always)]
    fn rtt_sample_own(&mut self, now: Instant, r: Duration) {
        self.rtt.on_sample_at(now, r);
        self.ack_rtt_sample = Some(r);
        self.backoff = 0;
        // Through i64: one conversion instruction where u64's takes five; the same value below 2^63 ns.
        debug_assert!(r.as_nanos() < 1 << 63);
        let ms = r.as_nanos() as i64 as f64 / 1e6;
        self.st.SampleRTT = ms;
        // Plain comparisons, not `f64::min`/`max` (which test for NaN): a sample is never NaN.
        if self.st.CountRTT == 0 || ms < self.st.MinRTT {
            self.st.MinRTT = ms;
        }
        if ms > self.st.MaxRTT {
            self.st.MaxRTT = ms;
        }
        self.st.SumRTT += ms;
        self.st.CountRTT += 1;
    }

    /// TSval at `now`: the tick found last time while `now` is in it (a subtraction and a comparison),
    /// else [`Self::ts_tick`]'s division, kept with the tick's bounds.
    #[inline(always)]
    fn ts_now(&mut self, now: Instant) -> u32 {
        // Exact for any `now`: one before the tick's start wraps to a large offset and misses.
        if now.as_nanos().wrapping_sub(self.ts_tick_start) < self.ts_tick_len as u64 {
            debug_assert_eq!(self.ts_tick_val, self.ts_tick(now));
            return self.ts_tick_val;
        }
        let tick = self.cfg.timestamp_tick.as_nanos();
        let ticks = Self::ticks(now, tick);
        let val = ticks as u32 + 1;
        if let Ok(len) = u32::try_from(tick) {
            self.ts_tick_start = ticks * tick;
            self.ts_tick_len = len;
            self.ts_tick_val = val;
        }
        val
    }

    /// TSval at `now`, from the clock. Offset by one so that no timestamp is zero: TSecr = 0 means "no
    /// echo" in practice.
    fn ts_tick(&self, now: Instant) -> u32 {
        Self::ticks(now, self.cfg.timestamp_tick.as_nanos()) as u32 + 1
    }

    /// Whole ticks of `tick` ns at `now`. The usual 1 ms tick divides by a constant, a multiplication. Any
    /// other tick divides out of line: inline, the compiler folded the two arms back into one division by
    /// the tick, a `div` behind a zero test and a 32-bit test.
    #[inline(always)]
    fn ticks(now: Instant, tick: u64) -> u64 {
        match tick {
            1_000_000 => now.as_nanos() / 1_000_000,
            tick => ticks_of(now, tick),
        }
    }
    /// The RTT a timestamp echo measures. An echo from the current tick is rounded up to one tick, as
    /// Linux's `tcp_rtt_tsopt_us` does: the real RTT lies anywhere in it, and 0 would pull the RTO
    /// below the path's RTT when the tick is coarse (RFC 7323 §5.4 allows up to 1 s).
    fn ts_elapsed(&mut self, now: Instant, tsecr: u32) -> Duration {
        let ticks = self.ts_now(now).wrapping_sub(tsecr).max(1);
        // The usual 1 ms tick times 32-bit ticks cannot saturate: a multiplication by a constant, not a
        // load, a multiplication and an overflow test (every ACK of new data asks).
        match self.cfg.timestamp_tick.as_nanos() {
            1_000_000 => Duration::from_nanos(ticks as u64 * 1_000_000),
            _ => self.cfg.timestamp_tick.saturating_mul(ticks as u64),
        }
    }

    /// The receive side as the ACK policy sees it.
    #[inline]
    fn rcv_view(&self) -> RcvView {
        debug_assert_eq!(self.recv_limit, self.recv_limit_now());
        rcv_view!(self)
    }

    /// A uniform draw in [0, 1) from the connection's own random stream.
    fn draw(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Seeds the connection's random stream (probabilistic ACKs). By default it is seeded from the ISS.
    pub fn set_random_seed(&mut self, seed: u64) {
        self.rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        self.cwnd.set_random_seed(seed);
    }

    /// In-sequence data and the out-of-order queue (RFC 9293 §3.10.7.4 "seventh"; RFC 5681 §4.2 ACKs).
    fn process_data(&mut self, now: Instant, seg: &TcpSegment) {
        if self.data_in_order(seg) {
            // A segment header prediction missed for its acknowledgement (a request, a response's first
            // segment) takes the same short body as a predicted one.
            self.process_data_in_order(now, seg);
            return;
        }
        let len = seg.payload_len;
        let start = seg.seq;
        let mut end = (seg.seq + len).min(self.rcv_adv);
        let past_edge = self.cfg.whole_segment_past_window && end < seg.seq + len && self.takes_past_window(start);
        if past_edge {
            end = seg.seq + len;
            self.rcv_adv = end; // the window is used up: it reads 0 (Linux clamps tcp_receive_window so)
        } else if self.cfg.whole_segment_past_window && end < seg.seq + len && start < self.rcv_adv {
            if !self.queues_ooo_whole(start) {
                // Linux `tcp_sequence`: with data waiting to be read, a segment that ends past the window
                // is dropped whole (SKB_DROP_REASON_TCP_INVALID_END_SEQUENCE) and answered with a
                // duplicate ACK (`tcp_send_dupack`), not trimmed.
                self.ack_now = true;
                return;
            }
            end = seg.seq + len;
        }
        self.measure_rcv_mss(len);
        let ecn = self.ecn_on_data(seg, end > self.rcv_nxt);
        if end <= self.rcv_nxt {
            return;
        }
        if start <= self.rcv_nxt {
            if start < self.rcv_nxt {
                self.dsack = Some(SackBlock { left: start, right: self.rcv_nxt });
                self.ack_now = true;
            }
            self.st.ThruOctetsReceived += (end - self.rcv_nxt) as u64;
            let new_bytes = (end - self.rcv_nxt) as u64;
            self.rcv_nxt = end;
            self.last_data_recv_ms = (now.as_nanos() / 1_000_000) as u32;
            let had_holes = !self.ooo.is_empty();
            if had_holes && self.cfg.dsack_covered_ooo {
                self.dsack_covered_ooo(end);
            }
            while let Some((s, e)) = self.ooo.pop_if_starts_by(self.rcv_nxt) {
                if let Some(m) = self.rcv_mem.as_mut() {
                    m.ooo_bytes -= (e - s) as u64;
                }
                if e > self.rcv_nxt {
                    self.st.ThruOctetsReceived += (e - self.rcv_nxt) as u64;
                    self.rcv_nxt = e;
                }
            }
            let psh = seg.flags.contains(TcpFlags::PSH);
            self.note_data_queued(now, len, new_bytes, psh, ecn.quickack);
            if had_holes {
                self.ack_now = true; // RFC 5681 §4.2: a segment that fills a hole is ACKed at once
                let v = self.rcv_view();
                self.ack.on_hole_filled(&v);
                if !self.ooo.is_empty() {
                    self.dup_ack_pending = false;
                }
                return;
            }
            if past_edge {
                // Measured on Linux 6.18: such a segment is not quick-ACKed; the delayed-ACK timer sends
                // its ACK (ATO 40 ms, where 1000 or 10000 bytes inside the window are ACKed at once).
                if !self.armed(Timer::DelayedAck) {
                    let at = self.ack.deadline(now, &self.rtt, &self.cfg);
                    self.arm(Timer::DelayedAck, at);
                }
                return;
            }
            self.ack_in_order_data(now, len, psh);
        } else {
            // Out of order: queue it and send a duplicate ACK at once (RFC 5681 §4.2).
            let v = self.rcv_view();
            self.ack.on_out_of_order(&v, &self.cfg);
            if ecn.quickack {
                self.ack.enter_quickack(2, &v, &self.cfg);
            }
            // RFC 2883 §4.2: data we already hold out of order is reported in a D-SACK block, followed
            // by the SACK block that contains it.
            if let Some((_, r)) = self.ooo.containing(start) {
                self.dsack = Some(SackBlock { left: start, right: end.min(r) });
            } else if let Some((l, _)) = self.ooo.containing(end + u32::MAX) {
                self.dsack = Some(SackBlock { left: l, right: end });
            }
            // Linux `tcp_sack_new_ofo_skb`: a segment that starts a new block while the receiver holds
            // `sack_blocks_expected` blocks, or extends one that far down its SACK array, sends a
            // compressed ACK that is pending first (`tcp_sack_compress_send_ack`), so that compression
            // never keeps a block from being reported. Here that ACK goes at once and carries the new
            // segment's block too (it is built after the segment is queued), which reports the blocks it
            // pushes down as well. Without any flush, at 10 % loss a third of the blocks were never
            // reported (591 D-SACKs in bbr-loss's 15 s at 10 %, the kernel none); with the flush only at a
            // full array of four, 23 were (docs/bbr.md).
            let flush = self.comp_pending > 0 && self.sack_flush_due(start, end);
            let added = self.ooo.insert(start, end) as u64;
            if self.cfg.comp_sack_nr > 0 {
                self.sack_array_touch(start);
            } else {
                self.sack_recent.copy_within(0..3, 1);
                self.sack_recent[0] = Some(start);
            }
            self.dup_ack_pending = true;
            let grew = self.cfg.grow_window_out_of_order
                && self.cfg.grow_window
                && self.sack_ok
                && self.grow_rcv_ssthresh(len);
            if grew {
                self.ack.on_window_grown();
            }
            if self.rcv_mem.is_some() {
                // `tcp_data_queue_ofo` grows the window before the skb is charged (`skb_set_owner_r`).
                let held = self.rcv_held();
                if let Some(m) = self.rcv_mem.as_mut() {
                    m.charge(held, len, added);
                    m.ooo_bytes += added;
                }
            }
            // Linux's quick-ACK mode overrides SACK compression (`__tcp_ack_snd_check`).
            if flush {
                self.ack_now = true;
            } else if !ecn.quickack && !grew && self.compress_sack(now) {
                self.st.AcksCompressed += 1;
            } else {
                self.ack_now = true;
            }
        }
    }

    /// Data that starts at RCV.NXT and ends inside the window, with nothing queued out of order: the
    /// common case, for which [`Self::process_data_in_order`] is the whole of [`Self::process_data`].
    #[inline(always)]
    fn data_in_order(&self, seg: &TcpSegment) -> bool {
        #[cfg(test)]
        if crate::tests::slow_path_only() {
            return false;
        }
        seg.seq == self.rcv_nxt && seg.seq + seg.payload_len <= self.rcv_adv && self.ooo.is_empty()
    }

    /// [`Self::process_data`] for data in order ([`Self::data_in_order`]; every segment header prediction
    /// takes is): none of the rule's trimming, D-SACK, reassembly or hole-filling steps applies, and what
    /// is left runs in the same order (`header_prediction_matches_the_slow_path` compares the two).
    #[inline(always)]
    fn process_data_in_order(&mut self, now: Instant, seg: &TcpSegment) {
        let len = seg.payload_len;
        let end = seg.seq + len;
        debug_assert!(len > 0 && seg.seq == self.rcv_nxt && end <= self.rcv_adv && self.ooo.is_empty());
        self.measure_rcv_mss(len);
        let ecn = self.ecn_on_data(seg, true);
        self.st.ThruOctetsReceived += len as u64;
        self.rcv_nxt = end;
        self.last_data_recv_ms = (now.as_nanos() / 1_000_000) as u32;
        let psh = seg.flags.contains(TcpFlags::PSH);
        self.charge_rcv_mem(len, len as u64);
        let grew = self.grow_window(len);
        // The two policies the benchmarks run, RFC 1122's delayed ACK (the default) and Linux's, matched
        // once a segment, where the general body matched the policy five times (arrival, quick ACK, grown
        // window, verdict, deadline).
        match &mut self.ack {
            AckState::Delayed { full_segs } => {
                *full_segs += (len >= self.rcv_mss) as u32;
                let now_by_policy = *full_segs >= self.cfg.ack_every;
                if grew {
                    self.ack_now = true;
                }
                let at = now + self.cfg.delayed_ack_timeout;
                debug_assert_eq!(at, self.ack.deadline(now, &self.rtt, &self.cfg));
                self.ack_or_delay(now_by_policy, |_| at);
            }
            AckState::Linux(l) => {
                let v = rcv_view!(self);
                let now_by_policy = l.on_in_order_data(now, len, &v, self.rtt.rto(), ecn.quickack, grew, &self.cfg);
                self.ack_or_delay(now_by_policy, |c| c.ack.deadline(now, &c.rtt, &c.cfg));
            }
            _ => {
                self.policy_on_data(now, len, psh, ecn.quickack, grew);
                self.ack_in_order_data(now, len, psh);
            }
        }
    }

    /// Receive memory charged for `len` bytes queued, `new_bytes` of them past the old RCV.NXT.
    #[inline(always)]
    fn charge_rcv_mem(&mut self, len: u32, new_bytes: u64) {
        if self.rcv_mem.is_some() {
            let held = self.rcv_held().saturating_sub(new_bytes);
            if let Some(m) = self.rcv_mem.as_mut() {
                m.charge(held, len, new_bytes);
            }
        }
    }

    /// In-order data's ACK verdict carried out: an ACK now by the policy (`now_by_policy`) or by chance
    /// (`ack_immediate_p`), else the delayed-ACK timer at `deadline` (RFC 1122 §4.2.3.2), which a pending
    /// timer keeps unless the policy moves it earlier (Linux 2.2, [`AckState::moves_timer_earlier`]).
    #[inline(always)]
    fn ack_or_delay(&mut self, now_by_policy: bool, deadline: impl FnOnce(&Self) -> Instant) {
        let now_by_chance = self.cfg.ack_immediate_p > 0.0 && self.draw() < self.cfg.ack_immediate_p;
        if now_by_policy || now_by_chance {
            self.ack_now = true;
        } else if !self.armed(Timer::DelayedAck) {
            let at = deadline(self);
            self.arm(Timer::DelayedAck, at);
        } else if self.ack.moves_timer_earlier() {
            let at = deadline(self);
            if at.as_nanos() < self.timers[Timer::DelayedAck as usize] {
                self.arm(Timer::DelayedAck, at);
            }
        }
    }

    /// Data of `len` bytes (`new_bytes` of them past the old RCV.NXT) queued for the application: receive
    /// memory charged, the ACK policy's arrival estimator told, the window grown, in Linux's order
    /// (`tcp_queue_rcv` charges the skb before `tcp_event_data_recv` and `tcp_grow_window`). The receive view
    /// is built only where the policy reads it: a closure over the fields it names, beside `&mut self.ack`.
    #[inline(always)]
    fn note_data_queued(&mut self, now: Instant, len: u32, new_bytes: u64, psh: bool, quickack: bool) {
        self.charge_rcv_mem(len, new_bytes);
        let grew = self.grow_window(len);
        self.policy_on_data(now, len, psh, quickack, grew);
    }

    /// [`Self::note_data_queued`]'s policy steps, the window already grown (`grew`): growing reads no
    /// policy state and the arrival and quick-ACK steps read nothing it writes, so it may go first.
    #[inline(always)]
    fn policy_on_data(&mut self, now: Instant, len: u32, psh: bool, quickack: bool, grew: bool) {
        self.ack.on_data_arrival(now, len, psh, || rcv_view!(self), &self.rtt, &self.cfg);
        if quickack {
            let v = self.rcv_view();
            self.ack.enter_quickack(2, &v, &self.cfg);
        }
        if grew && self.ack.on_window_grown() {
            self.ack_now = true;
        }
    }

    /// The peer's segment size as the receiver learns it (Linux `tcp_measure_rcv_mss`): the largest
    /// segment seen, or a GRO batch's own segment size.
    #[inline(always)]
    fn measure_rcv_mss(&mut self, len: u32) {
        // The common segment, no larger than the estimate, changes nothing below: the estimate only grows
        // (from 536 it is capped at our MSS, which it never exceeds: `validate` keeps the MSS at 88 or more).
        // A GRO batch's segment size is at most its length, so the length decides this before it is read.
        debug_assert!(!self.cfg.rcv_mss_estimate_from_536 || self.rcv_mss <= self.cfg.mss.bytes() as u32);
        if len <= self.rcv_mss {
            return;
        }
        let seg_size = if self.rx_gso_size > 0 { (self.rx_gso_size as u32).min(len) } else { len };
        if seg_size <= self.rcv_mss {
            return;
        }
        if self.rcv_mem.is_some() {
            self.measure_scaling_ratio(len);
        }
        self.rcv_mss =
            if self.cfg.rcv_mss_estimate_from_536 { seg_size.min(self.cfg.mss.bytes() as u32) } else { seg_size };
    }

    /// In-order data of `len` bytes that filled no hole: the policy's verdict, then [`Self::ack_or_delay`]
    /// ([`Self::process_data_in_order`] asks the two common policies itself).
    #[inline(always)]
    fn ack_in_order_data(&mut self, now: Instant, len: u32, psh: bool) {
        let full = len >= self.rcv_mss;
        let now_by_policy = self.ack.ack_now(len, full, psh, || rcv_view!(self), &self.cfg);
        self.ack_or_delay(now_by_policy, |c| c.ack.deadline(now, &c.rtt, &c.cfg));
    }

    /// `whole_segment_past_window`: an in-order segment in an open window, with nothing waiting to be
    /// read, is taken past the right edge (Linux `tcp_sequence`, then `tcp_data_queue`).
    #[cold]
    #[inline(never)]
    fn takes_past_window(&self, start: SeqNumber) -> bool {
        start <= self.rcv_nxt && self.rcv_adv > self.rcv_nxt && self.unread() == 0
    }

    /// `whole_segment_past_window`, out of order: a segment that begins inside the window above RCV.NXT
    /// and ends past it is queued whole when no data waits to be read (Linux `tcp_sequence`: "Only
    /// accept this packet if receive queue is empty"; `tcp_data_queue_ofo` then keeps the skb as it
    /// came), while what is held out of order is below the largest window (the memory check,
    /// `tcp_try_rmem_schedule`, drops nothing until `sk_rmem_alloc` exceeds `sk_rcvbuf`).
    #[cold]
    #[inline(never)]
    fn queues_ooo_whole(&self, start: SeqNumber) -> bool {
        if let Some(m) = self.rcv_mem.as_ref() {
            return start > self.rcv_nxt
                && self.unread() == 0
                && m.rmem(self.rcv_held()) <= 2 * self.cfg.recv_buffer.bytes();
        }
        let held: u64 = self.ooo.iter().map(|(l, r)| (r - l) as u64).sum();
        start > self.rcv_nxt && self.unread() == 0 && held < self.recv_buffer_limit()
    }

    /// The receiver's side of ECN for a data segment (`new_data` when some of it was not received before):
    /// the echo starts or ends (RFC 3168 §6.1.3). Under the `linux` ACK policy a CWR segment is ACKed at
    /// once and the verdict's quick-ACK cue is the caller's to apply (`tcp_ecn_check_ce`,
    /// `tcp_ecn_accept_cwr`); the RFC asks for neither.
    fn ecn_on_data(&mut self, seg: &TcpSegment, new_data: bool) -> crate::ecn::RcvVerdict {
        if !self.ecn.ok() {
            return crate::ecn::RcvVerdict::default();
        }
        let (mut v, began) = self.ecn.on_data(seg, new_data);
        if began {
            self.st.ECESent += 1;
        }
        if self.cfg.ack_policy != crate::config::AckPolicy::Linux {
            v = crate::ecn::RcvVerdict::default();
        }
        if v.ack_now {
            self.ack_now = true;
        }
        v
    }

    /// `dsack_covered_ooo`, Linux `tcp_ofo_queue`: the first out-of-order range that the in-order segment
    /// ending at `end` (the RCV.NXT the queue is drained from) delivered again is a duplicate, reported
    /// up to `end`; `tcp_dsack_extend` joins it to a D-SACK already pending (the segment's own old part)
    /// only when the two touch.
    #[cold]
    #[inline(never)]
    fn dsack_covered_ooo(&mut self, end: SeqNumber) {
        let Some((l, r)) = self.ooo.iter().next() else { return };
        if l >= end {
            return;
        }
        let dup = SackBlock { left: l, right: r.min(end) };
        self.dsack = match self.dsack {
            Some(d) if dup.left <= d.right && d.left <= dup.right => {
                Some(SackBlock { left: d.left.min(dup.left), right: d.right.max(dup.right) })
            }
            Some(d) => Some(d),
            None => Some(dup),
        };
    }

    /// Linux's SACK array (`selective_acks`, TCP_NUM_SACKS = 4, `tcp_sack_new_ofo_skb`), kept where its SACK
    /// compression is (`comp_sack_nr`, the `linux` personality): the block the segment at `start` went into
    /// moves to the front and each block is there once, so a block that grew before a run of arrivals in
    /// another is still among the blocks the next (compressed) ACK reports. A list of the last four
    /// arrivals held the top block four times after four in-order arrivals above a repaired hole, and a
    /// compressed ACK then reported the repair in no block: the sender's RACK took the retransmission for
    /// lost and sent it again, and each D-SACK of those widened RACK's reordering window to SRTT, so that
    /// every loss was repaired two round trips after its send where the kernel takes one (docs/bbr.md).
    fn sack_array_touch(&mut self, start: SeqNumber) {
        let block = self.ooo.containing(start);
        let mut kept = [Some(start), None, None, None];
        let mut n = 1;
        for s in self.sack_recent.iter().flatten() {
            let b = self.ooo.containing(*s);
            if n < kept.len()
                && b.is_some()
                && b != block
                && !kept[..n].iter().flatten().any(|k| self.ooo.containing(*k) == b)
            {
                kept[n] = Some(*s);
                n += 1;
            }
        }
        self.sack_recent = kept;
    }

    /// Whether the out-of-order segment `[start, end)` extends a block at position `sack_blocks_expected`
    /// or later of the SACK array, or starts a new block while that many are held (Linux
    /// `tcp_sack_new_ofo_skb`'s test before `tcp_sack_compress_send_ack`).
    fn sack_flush_due(&self, start: SeqNumber, end: SeqNumber) -> bool {
        let expected = self.cfg.sack_blocks_expected as usize;
        let mut held = 0;
        for s in self.sack_recent.iter().flatten() {
            let Some((l, r)) = self.ooo.containing(*s) else { continue };
            if r >= start && l <= end {
                return held >= expected;
            }
            held += 1;
        }
        held >= expected
    }

    /// Linux `__tcp_ack_snd_check` with SACK compression: true when the duplicate ACK this out-of-order
    /// segment calls for is merged into a later one. The first 3 for one RCV.NXT go at once
    /// (TCP_FASTRETRANS_THRESH: the sender's DupThresh), and at most `comp_sack_nr` are merged.
    fn compress_sack(&mut self, now: Instant) -> bool {
        if self.cfg.comp_sack_nr == 0 || !self.sack_ok || self.comp_pending >= self.cfg.comp_sack_nr {
            return false;
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.comp_dup_acks = 0;
        }
        if self.comp_dup_acks < 3 {
            self.comp_dup_acks += 1;
            return false;
        }
        self.comp_pending += 1;
        if !self.armed(Timer::CompressedAck) {
            // 5% of the RTT, at most comp_sack_delay (Linux uses the receiver's RTT estimate).
            let srtt = self.rtt.srtt().unwrap_or(self.cfg.comp_sack_delay.saturating_mul(20));
            let delay = self.cfg.comp_sack_delay.min(Duration::from_nanos(srtt.as_nanos() / 20));
            self.set_timer(Timer::CompressedAck, (now + delay + self.cfg.comp_sack_slack).as_nanos());
        }
        true
    }

    // ----------------------------------------------------------------------------------------------
    // Sending segments
    // ----------------------------------------------------------------------------------------------

    /// The next segment to put on the wire, if any. Call until it returns `None`; call again after
    /// every input. With `TxRoom::Full` nothing is sent; if something was ready it counts as a
    /// `SendStall` and the caller should call again when the interface has room.
    pub fn poll_transmit(&mut self, now: Instant, room: TxRoom) -> Option<TcpSegment> {
        // The windows stopped the call before the application and no ACK is due (a bulk sender's every
        // ACK): nothing to choose, and no need to enter the code that chooses.
        if self.windows_closed && !self.ack_now {
            debug_assert!(self.choose(now, &mut Notes::default()).is_none());
            self.stalled = false;
            self.windows_closed = false;
            return None;
        }
        // Nothing but an ACK could go and none is due (every other data segment at a bulk receiver), and no
        // idle restart is pending: `choose` would find nothing and note the sender application-limited
        // (`Notes::LIM_SND | Notes::VALIDATE`); that bookkeeping without the code that chooses.
        if !self.ack_now
            && self.only_an_ack_could_go()
            && !(self.cfg.slow_start_after_idle && self.snd_una == self.snd_nxt && self.last_data_sent.is_some())
        {
            debug_assert!({
                let mut notes = Notes::default();
                self.choose(now, &mut notes).is_none() && notes.0 == Notes::LIM_SND | Notes::VALIDATE
            });
            return self.nothing_to_send(now);
        }
        self.next_segment(now, room, false)
    }

    /// What `settle` does for a choice that found nothing to send: the sender is application-limited.
    /// Out of line and returning the `None` itself, so that `poll_transmit` ends in a jump on every path
    /// and saves no registers (~15 instructions a call, and most calls find nothing).
    #[inline(never)]
    fn nothing_to_send(&mut self, now: Instant) -> Option<TcpSegment> {
        self.stalled = false;
        self.set_snd_lim(now, SndLim::Snd);
        self.cwnd_validate(now);
        None
    }

    /// [`Connection::poll_transmit`] before the application hears of the event just processed: anything
    /// but a pure ACK, which waits for the application's read and reply (see
    /// [`tcplab_transport::Transport::poll_transmit_before_app`]).
    pub fn poll_transmit_before_app(&mut self, now: Instant, room: TxRoom) -> Option<TcpSegment> {
        // The segment before found the windows closed behind it (`settle_closed_windows`), or a call
        // before did: nothing but an ACK could go, and none goes before the application.
        if self.before_app_done() {
            debug_assert!(self.choose(now, &mut Notes::default()).is_none());
            self.stalled = false;
            return None;
        }
        if self.only_an_ack_could_go() {
            debug_assert!(matches!(self.choose(now, &mut Notes::default()), None | Some(Choice::Ack)));
            self.stalled = false;
            return None;
        }
        self.next_segment(now, room, true)
    }

    /// Nothing but an ACK can be chosen: a synchronized connection with no unsent data or FIN, no
    /// retransmission, loss probe or zero-window probe due (what `choose` would find, in a few tests).
    #[inline(always)]
    pub(crate) fn only_an_ack_could_go(&self) -> bool {
        let fin_unsent = self.fin_queued && self.snd_nxt <= self.write_end;
        self.is_synchronized()
            && self.snd_nxt >= self.write_end
            && !fin_unsent
            && !self.tlp_pending
            && !self.probe_pending
            && !self.rec.retransmit_head
            && !self.rec.retransmits()
    }

    // One copy, so that `choose`, `settle` and `emit` inline into it (as into a single `poll_transmit`).
    #[inline(never)]
    fn next_segment(&mut self, now: Instant, room: TxRoom, hold_ack: bool) -> Option<TcpSegment> {
        // A call that finds nothing (a bulk sender's every third) returns before a segment exists: an
        // `Option` built on every call and copied out at the end cost ~20 instructions a call.
        let (choice, fills) = self.next_choice(now, room, hold_ack)?;
        let mut seg = TcpSegment { src_port: self.local_port, dst_port: self.remote_port, ..TcpSegment::default() };
        self.emit(now, choice, &mut seg);
        match fills {
            Fills::No => {}
            Fills::Plain { wnd_room, cwnd_room } => self.settle_closed_plain(now, wnd_room, cwnd_room),
            Fills::Yes => self.settle_closed_windows(now),
        }
        Some(seg)
    }

    /// After a new-data segment that left the windows less than a full segment (a bulk sender's last
    /// segment for an ACK): when the call after it, at the same instant with nothing in between, would
    /// find the windows closed, that call's work done now (its notes settled, `windows_closed` set), so
    /// that it returns at once or, before the application, is not made (`Transport::before_app_done`).
    /// That call reaches the new-data rule when nothing ahead of it in `choose` applies: no ACK due, no
    /// loss probe, head or recovery retransmission, or zero-window probe pending, and data outstanding
    /// (no restart after idle); the rule is then [`Self::choose_new_data`] itself, on the state the
    /// segment left. Saves the rest of the choice, and the call, ~45,000 times a second in bulk-1g.
    #[inline(never)]
    fn settle_closed_windows(&mut self, now: Instant) {
        if self.ack_now
            || self.tlp_pending
            || self.probe_pending
            || self.rec.retransmit_head
            || self.rec.retransmits()
            || self.snd_una == self.snd_nxt
        {
            return;
        }
        let unsent = self.write_end.diff(self.snd_nxt);
        match self.plain_rooms() {
            Some((wnd_room, cwnd_room)) if self.plain_rule_closes(wnd_room, cwnd_room, unsent) => {
                self.close_plain_windows(now, wnd_room, cwnd_room)
            }
            _ => {
                let mut notes = Notes::default();
                if self.choose_new_data(now, &mut notes).is_some()
                    || !notes.has(Notes::LIM_CWND | Notes::LIM_RWIN)
                    || notes.has(Notes::TSO_DEFER)
                {
                    return;
                }
                self.close_windows(now, notes);
            }
        }
    }

    /// [`Self::settle_closed_windows`] after a full segment the plain rule chose
    /// ([`Self::plain_segment_goes`]), with the rooms that rule found less the segment: sending it changed
    /// none of the rule's conditions (no RACK, pacing or TSO; the ACK it carries cleared `ack_now`; no
    /// recovery phase), so the rooms need not be found again, nor the tests ahead of the new-data rule
    /// asked again but the zero-window probe's (~25 instructions a bulk sender's ACK).
    #[inline(never)]
    fn settle_closed_plain(&mut self, now: Instant, wnd_room: u32, cwnd_room: u32) {
        let (wnd_room, cwnd_room) = (wnd_room - self.smss, cwnd_room - self.smss);
        debug_assert_eq!(self.plain_rooms(), Some((wnd_room, cwnd_room)));
        debug_assert!(!(self.ack_now || self.tlp_pending || self.rec.retransmit_head || self.rec.retransmits()));
        debug_assert!(self.snd_una != self.snd_nxt);
        if self.probe_pending {
            return;
        }
        let unsent = self.write_end.diff(self.snd_nxt);
        if self.plain_rule_closes(wnd_room, cwnd_room, unsent) {
            self.close_plain_windows(now, wnd_room, cwnd_room);
        } else {
            self.settle_closed_windows(now);
        }
    }

    /// The plain rule with less than a segment of room and more data than that (the common case): the
    /// smaller window stops the sender unless sender SWS avoidance lets a short segment go
    /// ([`Self::close_plain_windows`]); a short segment empties no queue here.
    #[inline(always)]
    fn plain_rule_closes(&self, wnd_room: u32, cwnd_room: u32, unsent: i32) -> bool {
        let room = wnd_room.min(cwnd_room);
        !self.cfg.cork && room < self.smss && unsent > room as i32
    }

    /// The smaller window is the limit, and nothing goes unless the room is not zero and sender SWS
    /// avoidance lets a segment of half the largest window go.
    #[inline(always)]
    fn close_plain_windows(&mut self, now: Instant, wnd_room: u32, cwnd_room: u32) {
        let room = wnd_room.min(cwnd_room);
        if room > 0 && room as u64 * 2 >= self.max_snd_wnd as u64 && self.max_snd_wnd > 0 {
            return;
        }
        let mut notes = Notes::default();
        notes.limit(if wnd_room <= cwnd_room { SndLim::Rwin } else { SndLim::Cwnd });
        if room == 0 {
            notes.set(Notes::PERSIST);
            if self.cfg.cwv == Cwv::Linux && wnd_room < cwnd_room {
                notes.set(Notes::VALIDATE);
            }
        }
        self.close_windows(now, notes);
    }

    /// The call after this one would find the windows closed and note `notes`: settled now, and that call
    /// returns at once (`windows_closed`).
    #[inline(always)]
    fn close_windows(&mut self, now: Instant, notes: Notes) {
        debug_assert!({
            let mut full = Notes::default();
            self.choose(now, &mut full).is_none() && full == notes
        });
        self.settle(now, notes);
        self.windows_closed = true;
    }

    /// What [`Self::next_segment`] sends, if anything, with what the choice noted settled, and whether
    /// it fills the windows (`Notes::FILLS`).
    #[inline(always)]
    fn next_choice(&mut self, now: Instant, room: TxRoom, hold_ack: bool) -> Option<(Choice, Fills)> {
        self.stalled = false;
        if !hold_ack && std::mem::take(&mut self.windows_closed) && !self.ack_now {
            debug_assert!(self.choose(now, &mut Notes::default()).is_none());
            return None;
        }
        // The idle time tested here, not behind the call: with nothing outstanding between a request and
        // its reply (every call of a request-response connection's server), the connection is rarely idle.
        if self.cfg.slow_start_after_idle
            && self.snd_una == self.snd_nxt
            && self.last_data_sent.is_some_and(|t| now.saturating_since(t) > self.rtt.rto())
            && self.is_synchronized()
        {
            self.restart_after_idle();
        }
        if let Some((choice, fills)) = self.plain_segment_goes() {
            debug_assert!({
                let mut full = Notes::default();
                self.choose(now, &mut full) == Some(choice)
                    && full.0 == if fills == Fills::No { 0 } else { Notes::FILLS }
            });
            if room == TxRoom::Full && self.cfg.ifq_full != IfqFull::Drop {
                self.on_send_stall(now);
                self.stalled = true;
                return None;
            }
            return Some((choice, fills));
        }
        let mut notes = Notes::default();
        let choice = self.choose(now, &mut notes);
        let fills = if notes.take(Notes::FILLS) { Fills::Yes } else { Fills::No };
        // Before the application, a pure ACK or nothing is held back. If the windows stopped the sender,
        // nothing the application does opens them: that is settled now, and the call after the application
        // looks for an ACK only (a bulk sender's every ACK). Otherwise that call settles what was found
        // (sender-limit state, cwnd validation, a TSO deferral, a probe with nothing to send).
        let hold = hold_ack && matches!(choice, None | Some(Choice::Ack));
        let windows_closed =
            hold && choice.is_none() && notes.has(Notes::LIM_CWND | Notes::LIM_RWIN) && !notes.has(Notes::TSO_DEFER);
        if (!hold || windows_closed) && notes != Notes::default() {
            self.settle(now, notes);
        }
        if hold {
            self.windows_closed = windows_closed;
            return None;
        }
        let choice = choice?;
        if room == TxRoom::Full && self.cfg.ifq_full != IfqFull::Drop {
            self.on_send_stall(now);
            self.stalled = true;
            return None;
        }
        // A pure ACK with nothing else to send (a receiver's every ACK): the call after it would find
        // nothing and note the application limit again (`nothing_to_send`), which changes nothing: the
        // sender-limit state is that already, and cwnd validation repeats itself at the same instant and,
        // at a later call with no event between, does nothing unless it decays cwnd by the clock (RFC 2861
        // outside Linux's rule, which validates only in the instant data went). So that call returns at once.
        self.windows_closed = choice == Choice::Ack
            && notes.0 == Notes::LIM_SND | Notes::VALIDATE
            && (self.cfg.cwv == Cwv::Linux || !self.cwnd.decays());
        Some((choice, fills))
    }

    /// A segment of new data goes, with nothing ahead of it in the rule and nothing to note but whether
    /// it fills the windows, where the new-data rule is plain ([`Self::plain_rooms`]). What
    /// [`Self::choose`] finds then, in fewer tests. `Some((choice, fills))`: `fills` not [`Fills::No`] when
    /// the segment leaves less than a full segment in the windows (`Notes::FILLS`), with the rooms found.
    ///
    /// A full segment (a bulk sender's every one): more than a segment unsent and both windows open by a
    /// segment or more; no Nagle or SWS test, no FIN before the last byte. The last segment of what is
    /// queued (a request's or a reply's end, every message of a request-response connection): it fits
    /// both windows; a short one passes Nagle without the cork when TCP_NODELAY is set or nothing is
    /// outstanding (in every Nagle variant), and the FIN goes with it when queued. It empties the queue,
    /// so fills nothing.
    #[inline(always)]
    fn plain_segment_goes(&self) -> Option<(Choice, Fills)> {
        let unsent = self.write_end.diff(self.snd_nxt);
        if unsent > self.smss as i32 {
            let (wnd_room, cwnd_room) = self.plain_rooms()?;
            let room = wnd_room.min(cwnd_room);
            if room < self.smss {
                return None;
            }
            let fills = if room - self.smss < self.smss { Fills::Plain { wnd_room, cwnd_room } } else { Fills::No };
            return Some((Choice::NewData { len: self.smss, fin: false }, fills));
        }
        if unsent <= 0 {
            return None;
        }
        self.last_segment_goes(unsent as u32).map(|c| (c, Fills::No))
    }

    /// [`Self::plain_segment_goes`] for the last `unsent` bytes (no more than a segment).
    #[inline(always)]
    fn last_segment_goes(&self, unsent: u32) -> Option<Choice> {
        let nagle_ok = unsent == self.smss || (!self.cfg.cork && (self.cfg.nodelay || self.snd_nxt == self.snd_una));
        if !nagle_ok {
            return None;
        }
        let (wnd_room, cwnd_room) = self.plain_rooms()?;
        (wnd_room.min(cwnd_room) >= unsent).then_some(Choice::NewData { len: unsent, fin: self.fin_queued })
    }

    /// The peer's window's and cwnd's room for new data beyond SND.NXT, where nothing ahead of new data
    /// applies and the rule's windows are plain: no ACK due on a read, loss probe or fast retransmit
    /// pending, outside recovery and limited transmit, on a connection that neither paces, defers for
    /// TSO, counts cwnd in packets nor runs RACK (FlightSize is the pipe, cwnd the send window).
    #[inline(always)]
    fn plain_rooms(&self) -> Option<(u32, u32)> {
        // RACK and pacing first: a connection with either (the `linux` personality, BBR) never applies.
        if self.rack.is_some()
            || self.pace.is_some()
            || self.rec.phase != Phase::Open
            || self.rec.dupacks > 0
            || self.rec.retransmit_head
            || self.tlp_pending
            || (self.ack_now && self.ack_on_read)
            || !self.is_synchronized()
            || self.cfg.tso
            || self.cwnd.counts_packets()
        {
            return None;
        }
        let wnd_edge = self.snd_una + self.snd_wnd;
        let wnd_room = if wnd_edge > self.snd_nxt { wnd_edge - self.snd_nxt } else { 0 };
        let cwnd_room = self.cwnd.window().max(self.smss).saturating_sub(self.snd_nxt - self.snd_una);
        Some((wnd_room, cwnd_room))
    }

    /// A synchronized state in which data may flow (RFC 9293 §3.3.2).
    #[inline]
    fn is_synchronized(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::TimeWait | State::SynSent | State::SynReceived)
    }

    /// RFC 5681 §4.1: after an idle period longer than the RTO (nothing outstanding, no data sent for
    /// longer than the RTO, which the caller found), sending restarts from RW = min(IW, cwnd) (counted in
    /// OtherReductions).
    #[inline(never)]
    fn restart_after_idle(&mut self) {
        // "Before beginning transmission": a closed window begins none (a window probe is not data), so
        // the restart waits for the window to open, as Linux's `tcp_slow_start_after_idle_check` runs on
        // a write and on a window update, not on a zero-window probe.
        if self.snd_wnd == 0 {
            return;
        }
        if self.cwnd.restart(self.cfg.initial_window.bytes(self.smss)) {
            self.st.OtherReductions += 1;
        }
        self.last_data_sent = None;
    }

    /// What to send next (a pure choice), noting in `notes` what the sender learned on the way.
    fn choose(&self, now: Instant, notes: &mut Notes) -> Option<Choice> {
        match self.state {
            State::Closed | State::Listen | State::TimeWait => {
                if self.rst.is_some() {
                    return Some(Choice::Reset);
                }
                return self.ack_now.then_some(Choice::Ack);
            }
            State::SynSent => {
                if self.rst.is_some() {
                    return Some(Choice::Reset);
                }
                return (self.snd_nxt == self.iss || self.syn_resend).then_some(Choice::Syn);
            }
            State::SynReceived => {
                return (self.snd_nxt == self.iss || self.syn_resend).then_some(Choice::SynAck);
            }
            _ => {}
        }
        if self.ack_now {
            if self.ack_on_read {
                return Some(Choice::Ack);
            }
            // Nothing but the ACK could go (a bulk receiver's every ACK): the rule below would find no data,
            // note the sender application-limited and take the ACK; that without the rule.
            if self.only_an_ack_could_go() {
                notes.set(Notes::LIM_SND | Notes::VALIDATE);
                debug_assert!({
                    let mut full = Notes::default();
                    matches!(self.choose_synchronized(now, &mut full), Some(Choice::Ack)) && full == *notes
                });
                return Some(Choice::Ack);
            }
        }
        self.choose_synchronized(now, notes)
    }

    /// [`Self::choose`] in a synchronized state with no ACK due on a read.
    #[inline(always)]
    fn choose_synchronized(&self, now: Instant, notes: &mut Notes) -> Option<Choice> {
        if self.tlp_pending {
            match self.choose_loss_probe() {
                Some(c) => return Some(c),
                None => notes.set(Notes::TLP_DONE),
            }
        }
        if let Some(c) = self.choose_data(now, notes) {
            if self.pace.is_none() || self.pace_allows(now, c) {
                return Some(c);
            }
            notes.set(Notes::PACED);
        }
        if self.probe_pending {
            return Some(Choice::ZeroWindowProbe);
        }
        self.ack_now.then_some(Choice::Ack)
    }

    /// Whether pacing and TCP Small Queues let data choice `c` go now.
    #[inline(never)]
    fn pace_allows(&self, now: Instant, c: Choice) -> bool {
        let (len, retransmit) = match c {
            Choice::Retransmit { len, .. } => (len, true),
            // Linux paces skbs, not segments: the segments of one super-packet leave together, and the
            // departure time after it is the whole super-packet's length at the rate
            // (`tcp_update_skb_after_send`). With BBR's two-segment minimum (`bbr_min_tso_segs`) a
            // bottleneck at the pacing rate queues every second segment behind the first.
            Choice::NewData { .. } if self.cfg.tso && self.snd_nxt < self.tso_burst_end => return true,
            Choice::NewData { len, .. } => (len, false),
            _ => return true,
        };
        let single = self.snd_nxt - self.snd_una <= self.smss;
        self.pace.as_ref().is_none_or(|p| p.allows(now, len.max(self.smss) + 40, retransmit, single))
    }

    /// The bookkeeping a choice calls for whether or not a segment goes (the interface may be full):
    /// the sender-limit state, cwnd validation, the persist and cork timers, and the pending fast
    /// retransmit or loss probe that found nothing to send.
    #[inline(always)]
    fn settle(&mut self, now: Instant, notes: Notes) {
        // Nearly every choice notes a sender limit and cwnd validation only: the rarer notes are each
        // tested behind one test for their group.
        if notes.has(Notes::TLP_DONE | Notes::TSO_DEFER | Notes::HEAD_DONE) {
            if notes.has(Notes::TLP_DONE) {
                self.tlp_pending = false;
            }
            if notes.has(Notes::TSO_DEFER) {
                self.st.X_TsoDeferrals += 1;
                if notes.has(Notes::LIM_CWND) {
                    self.tso_cwnd_limited_until = self.snd_nxt;
                }
            }
            if notes.has(Notes::HEAD_DONE) {
                self.rec.retransmit_head = false;
            }
        }
        if notes.has(Notes::LIM_RWIN) {
            self.set_snd_lim(now, SndLim::Rwin);
        } else if notes.has(Notes::LIM_CWND) {
            self.set_snd_lim(now, SndLim::Cwnd);
        } else if notes.has(Notes::LIM_SND) {
            self.set_snd_lim(now, SndLim::Snd);
        }
        if notes.has(Notes::PERSIST | Notes::CORK) {
            if notes.has(Notes::PERSIST) {
                self.maybe_arm_persist(now);
            }
            if notes.has(Notes::CORK) && !self.armed(Timer::Cork) {
                // Linux has no cork timer of its own: with nothing in flight `tcp_check_probe_timer` arms
                // the zero-window probe timer at max(RTO, TCP_RTO_MIN), whose probe sends the corked
                // segment (`tcp_write_wakeup`); TCP_RTO_MIN is tcp(7)'s "200 millisecond ceiling".
                let ceiling = if self.cfg.cork_ceiling_rto {
                    self.rtt.rto_backed_off(0).max(self.cfg.rto_min)
                } else {
                    Duration::from_millis(200)
                };
                self.arm(Timer::Cork, now + ceiling);
            }
        }
        if notes.has(Notes::VALIDATE) {
            self.cwnd_validate(now);
        }
        if notes.has(Notes::PACED) {
            let Some(pace) = self.pace.as_mut() else { return };
            let at = pace.wakeup(now);
            if !(pace.on && pace.next > now) {
                pace.throttled += 1;
            }
            if let Some(at) = at {
                // A high-resolution timer: no tick rounding.
                if at.as_nanos() < self.timers[Timer::Pacing as usize] {
                    self.set_timer(Timer::Pacing, at.as_nanos());
                }
            }
        }
    }

    /// RFC 8985 §7.3: the tail loss probe is one new segment if there is data and the peer's window
    /// allows it, else the last segment sent again; either goes regardless of cwnd (and Nagle).
    fn choose_loss_probe(&self) -> Option<Choice> {
        if self.snd_nxt == self.snd_una || !self.rec.open_or_cwr() {
            return None;
        }
        let fin_seq = self.write_end;
        let unsent = if fin_seq > self.snd_nxt { fin_seq - self.snd_nxt } else { 0 };
        let wnd_edge = self.snd_una + self.snd_wnd;
        let wnd_room = if wnd_edge > self.snd_nxt { wnd_edge - self.snd_nxt } else { 0 };
        if unsent > 0 && wnd_room > 0 {
            let len = unsent.min(self.smss).min(wnd_room);
            return Some(Choice::NewData { len, fin: self.fin_queued && len == unsent });
        }
        let (start, end) = self.rack.as_ref()?.last_segment()?;
        let data_end = end.min(fin_seq);
        let s = if data_end > start { start.max(data_end + self.smss.wrapping_neg()) } else { start };
        let len = if data_end > s { data_end - s } else { 0 };
        let fin = self.fin_queued && end == fin_seq + 1;
        Some(Choice::Retransmit { seq: s, len, fin })
    }

    /// Data to send: a pending fast retransmit, what the recovery phase retransmits, or new data (and
    /// the FIN) within the windows, Nagle and the cork. Notes in `plan` what holds the sender back.
    fn choose_data(&self, now: Instant, notes: &mut Notes) -> Option<Choice> {
        let fin_seq = self.write_end;

        // Fast retransmit of the first unacknowledged segment, regardless of cwnd (RFC 5681 §3.2 step 3).
        if self.rec.retransmit_head {
            match self.rec.head_retransmit(self.snd(), fin_seq, self.fin_queued) {
                Some((len, fin)) => return Some(Choice::Retransmit { seq: self.snd_una, len, fin }),
                None => notes.set(Notes::HEAD_DONE),
            }
        }

        if self.rec.retransmits() {
            let (s, cwnd, pipe) = (self.snd(), self.send_window(), self.pipe());
            match self.rec.next_seg(s, fin_seq, self.fin_queued, cwnd, pipe, self.prr_on(), self.rack_active()) {
                NextSeg::Retransmit { seq, len, fin } => return Some(Choice::Retransmit { seq, len, fin }),
                NextSeg::Blocked => {
                    notes.limit(SndLim::Cwnd);
                    return None;
                }
                NextSeg::None => {}
            }
        }
        self.choose_new_data(now, notes)
    }

    /// New data (and the FIN after it), within cwnd and the peer's window, Nagle and the cork.
    #[inline(always)]
    fn choose_new_data(&self, now: Instant, notes: &mut Notes) -> Option<Choice> {
        let fin_seq = self.write_end;
        let fin_pending = self.fin_queued && self.snd_nxt <= fin_seq;
        let unsent = if fin_seq > self.snd_nxt { fin_seq - self.snd_nxt } else { 0 };
        if unsent == 0 && !fin_pending {
            notes.limit(SndLim::Snd);
            notes.set(Notes::VALIDATE);
            return None;
        }
        // The windows only now: a receiver with nothing to send (every data segment at a bulk receiver)
        // stops above without the pipe's phase rule.
        let (cwnd, pipe) = (self.send_window(), self.pipe());
        let (wnd_room, cwnd_room) = self.new_data_rooms(cwnd, pipe);
        let len = unsent.min(self.smss).min(wnd_room).min(cwnd_room);
        if unsent > 0 && len < unsent.min(self.smss) {
            // Stopped (or about to send short) by a window: the smaller one is the limit (RFC 4898 §3 SndLim).
            notes.limit(if wnd_room <= cwnd_room { SndLim::Rwin } else { SndLim::Cwnd });
        }
        if unsent > 0 && len == 0 {
            notes.set(Notes::PERSIST);
            if self.cfg.cwv == Cwv::Linux && wnd_room < cwnd_room {
                notes.set(Notes::VALIDATE); // Linux: "limited by application or receiver window"
            }
            return None;
        }
        let all_queued = len == unsent;
        let fin = fin_pending && all_queued;
        if len < self.smss && unsent > 0 {
            // Sender SWS avoidance and Nagle (RFC 1122 §4.2.3.4): a short segment only when it empties
            // the queue and, with Nagle, nothing is outstanding; or when it fills half the largest window.
            // Minshall: only a short segment outstanding holds the next one. Cork holds any short segment
            // until close or its 200 ms ceiling.
            // Minshall (Linux `tcp_minshall_check`): a short segment is outstanding when SND.SML lies in
            // (SND.UNA, SND.NXT]; one left behind 2^31 bytes ago compares as ahead of SND.UNA, not as sent.
            let short_outstanding = self.snd_sml > self.snd_una && self.snd_sml <= self.snd_nxt;
            // Mentat (`nagle_last_sent`): only a short *last* segment holds the next one, acknowledged or
            // not, and only while something is unacknowledged.
            let nagle_ok = if self.cfg.nagle_last_sent {
                self.snd_nxt == self.snd_una || self.last_sent_len >= self.smss
            } else if self.cfg.minshall {
                !short_outstanding
            } else {
                self.snd_nxt == self.snd_una
            };
            let corked = self.cfg.cork && !self.fin_queued && !self.cork_released;
            // Linux `tcp_nagle_test`: the segment that carries the FIN is never held (close() pushes it).
            let fin_goes = fin && self.cfg.fin_ends_nagle;
            let ok = !corked
                && ((all_queued && (self.cfg.nodelay || nagle_ok || fin_goes))
                    || len as u64 * 2 >= self.max_snd_wnd as u64 && self.max_snd_wnd > 0);
            if !ok {
                if corked {
                    notes.set(Notes::CORK);
                }
                if len == unsent.min(self.smss) {
                    notes.limit(SndLim::Snd);
                }
                return None;
            }
        }
        if len == 0
            && fin
            && !self.cfg.fin_ignores_cwnd
            && pipe as u64 + 1 > cwnd as u64
            && self.snd_nxt != self.snd_una
        {
            return None;
        }
        if self.cfg.tso
            && self.snd_nxt >= self.tso_burst_end
            && unsent > self.smss
            && self.tso_defers(now, wnd_room.min(cwnd_room), cwnd)
        {
            notes.limit(if wnd_room < cwnd_room { SndLim::Rwin } else { SndLim::Cwnd });
            notes.set(Notes::TSO_DEFER);
            return None;
        }
        if !all_queued && wnd_room.min(cwnd_room) - len < self.smss {
            notes.set(Notes::FILLS);
        }
        Some(Choice::NewData { len, fin })
    }

    /// Room for new data: what the peer's window and what cwnd (or PRR) allow beyond SND.NXT, bytes.
    #[inline]
    fn new_data_rooms(&self, cwnd: u32, pipe: u32) -> (u32, u32) {
        let wnd_edge = self.snd_una + self.snd_wnd;
        let wnd_room = if wnd_edge > self.snd_nxt { wnd_edge - self.snd_nxt } else { 0 };
        let cwnd_room = match self.rec.prr_allowance(self.prr_on(), self.prr_cwr_on()) {
            Some(allowance) => allowance.min(u32::MAX as u64) as u32,
            // Linux `tcp_snd_test` (2.2, 2.4): outside recovery a segment goes while fewer packets than
            // cwnd are in flight, whatever their size; it may then carry a whole SMSS.
            None if self.cwnd.counts_packets() && self.rec.is_open() => {
                if self.cwnd.packets_out() < cwnd / self.smss.max(1) {
                    self.smss
                } else {
                    0
                }
            }
            None => (cwnd as i64 - pipe as i64).max(0) as u32,
        };
        (wnd_room, cwnd_room)
    }

    /// Linux `tcp_tso_autosize`: the most bytes one super-packet carries, about 1 ms (2⁻¹⁰ s) of the
    /// pacing rate (`tcp_update_pacing_rate`), plus a share of `tso_max_size` on short paths
    /// (`tcp_tso_rtt_log` = 9: halved for every 512 µs of minimum RTT), at least `min_tso_segs` segments.
    #[inline(never)]
    fn tso_burst_max(&self, cwnd: u32) -> u32 {
        if let Some(rate) = self.cwnd.pacing_rate() {
            return self.tso_burst_max_at(rate);
        }
        let Some(srtt) = self.rtt.srtt().filter(|d| d.as_nanos() > 0) else {
            return self.cfg.min_tso_segs * self.smss;
        };
        let flight = (self.snd_nxt - self.snd_una) as u64;
        let ratio = if cwnd < self.cwnd.ssthresh() / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        // bytes per 2^-10 s = max(cwnd, flight) / SRTT × ratio / 1024
        let mut bytes =
            (cwnd as u64).max(flight) as u128 * ratio as u128 * 1_000_000_000 / (srtt.as_nanos() as u128 * 100 * 1024);
        if self.st.CountRTT > 0 {
            let shift = (self.st.MinRTT * 1000.0) as u64 >> 9;
            if shift < 32 {
                bytes += (self.cfg.tso_max_size.bytes() >> shift) as u128;
            }
        }
        let bytes = bytes.min(self.cfg.tso_max_size.bytes() as u128) as u32;
        (bytes / self.smss).max(self.cfg.min_tso_segs) * self.smss
    }

    /// `tcp_tso_autosize` for a controller that sets the pacing rate itself (BBR): `sk_pacing_rate` is
    /// its rate (capped by `max_pacing_rate`, as `bbr_bw_to_pacing_rate` caps it), and the fewest segments
    /// its `min_tso_segs` hook's (`bbr_min_tso_segs`: 1 below 1.2 Mbit/s, else 2), not the sysctl.
    #[cold]
    #[inline(never)]
    fn tso_burst_max_at(&self, rate: u64) -> u32 {
        let rate = self.pace.as_ref().map_or(rate, |p| rate.min(p.max_rate));
        let min_segs = if rate < 1_200_000 / 8 { 1 } else { 2 };
        let mut bytes = (rate >> 10) as u128;
        if self.st.CountRTT > 0 {
            let shift = (self.st.MinRTT * 1000.0) as u64 >> 9;
            if shift < 32 {
                bytes += (self.cfg.tso_max_size.bytes() >> shift) as u128;
            }
        }
        let bytes = bytes.min(self.cfg.tso_max_size.bytes() as u128) as u32;
        (bytes / self.smss).max(min_segs) * self.smss
    }

    /// A super-packet starts at SND.NXT with a segment of `len` bytes: it holds what the windows allow now,
    /// at most `tso_burst_max`, and at most half of cwnd (Linux `tcp_cwnd_test` since 3.18, "ensure we
    /// have at least 2 GSO packets in flight"), whole segments, at least one.
    #[inline(never)]
    fn start_tso_burst(&mut self, len: u32) {
        let cwnd = self.send_window();
        let (wnd_room, cwnd_room) = self.new_data_rooms(cwnd, self.pipe());
        let unsent = if self.write_end > self.snd_nxt { self.write_end - self.snd_nxt } else { 0 };
        let smss = self.smss.max(1);
        let half_cwnd = (cwnd / smss / 2).max(1) * smss;
        let burst = wnd_room.min(cwnd_room).min(half_cwnd).min(self.tso_burst_max(cwnd)).min(unsent).max(len);
        self.tso_burst_end = self.snd_nxt + burst;
        self.tso_burst_multi = burst > len;
        self.st.X_TsoBursts += 1;
    }

    /// Linux `tcp_tso_should_defer`: whether to wait for more ACKs rather than start a super-packet of
    /// `limit` bytes (what cwnd and the peer's window allow now).
    #[inline(never)]
    fn tso_defers(&self, now: Instant, limit: u32, cwnd: u32) -> bool {
        if !self.rec.open_or_cwr() || limit == 0 {
            return false;
        }
        // Only while sending is recent (1 ms): an old write would make the deferral a burst of its own.
        match self.last_data_sent {
            Some(t) if now.saturating_since(t) <= Duration::from_millis(1) => {}
            _ => return false,
        }
        // A full super-packet goes. (Linux also sends a queued skb that fits whole when it is not the queue's
        // tail; here the send queue is one byte stream cut into super-packets of at most this size, so that
        // rule is this one.)
        if limit >= self.tso_burst_max(cwnd) {
            return false;
        }
        let enough = match self.cfg.tso_win_divisor {
            0 => limit > 3 * self.smss, // `tcp_max_tso_deferred_mss`: do not wait past one delayed ACK
            d => limit >= self.snd_wnd.min(cwnd) / d,
        };
        if enough {
            return false;
        }
        let (Some(srtt), Some(head)) = (self.rtt.srtt(), self.rack.as_ref().and_then(|r| r.head_xmit())) else {
            return false;
        };
        // Defer only when the next ACK is due soon: within min(SRTT/2, 1 ms).
        let due = head + srtt;
        let threshold = Duration::from_nanos(srtt.as_nanos() / 2).min(Duration::from_millis(1));
        due.saturating_since(now) <= threshold
    }

    fn maybe_arm_persist(&mut self, now: Instant) {
        if self.snd_wnd == 0
            && self.snd_una == self.snd_nxt
            && !self.armed(Timer::Persist)
            && !self.armed(Timer::Retransmit)
        {
            let t = self.rtt.rto_backed_off(self.persist_backoff);
            self.arm(Timer::Persist, now + t);
        }
    }

    /// Fills `seg`, a new segment with only its ports set, with `choice`.
    fn emit(&mut self, now: Instant, choice: Choice, seg: &mut TcpSegment) {
        let mut retransmit = false;
        // The payload, the FIN and the SYN, as locals: what follows asks them of every segment, and `seg` is
        // in memory; the SYN from the arm that knows it, not from `choice` again.
        let (len, fin, syn) = match choice {
            Choice::Syn | Choice::SynAck => {
                seg.seq = self.iss;
                seg.flags = if matches!(choice, Choice::Syn) { TcpFlags::SYN } else { TcpFlags::SYN | TcpFlags::ACK };
                retransmit = self.snd_nxt != self.iss;
                if !retransmit {
                    self.sampler.on_syn_sent(self.iss + 1, now);
                }
                self.snd_nxt = self.iss + 1;
                self.syn_resend = false;
                (0, false, true)
            }
            Choice::Retransmit { seq, len, fin } => {
                seg.seq = seq;
                seg.payload_len = len;
                seg.flags = if fin { TcpFlags::ACK | TcpFlags::FIN } else { TcpFlags::ACK };
                // The segment keeps the PSH it was first sent with (Linux retransmits the skb as queued).
                if len > 0 && seq + len == self.write_end {
                    seg.flags = seg.flags | TcpFlags::PSH;
                }
                retransmit = true;
                let end = seq + len + fin as u32;
                // Linux tcp_xmit_retransmit_queue: the RTO runs from the head's retransmission.
                if seq == self.snd_una
                    && self.cfg.rto_rearm_on_retransmit
                    && matches!(self.rec.phase, Phase::Sack { .. } | Phase::NewReno { .. })
                {
                    self.restart_rto(now);
                }
                if let Some(rack) = self.rack.as_mut() {
                    rack.on_retransmit(seq, end, now);
                }
                self.sampler.on_retransmit(seq, end);
                let s = self.snd();
                self.rec.on_retransmit_sent(seq, end, s, len > 0);
                (len, fin, false)
            }
            Choice::NewData { len, fin } => {
                if self.cfg.tso && self.snd_nxt >= self.tso_burst_end {
                    self.start_tso_burst(len);
                }
                seg.seq = self.snd_nxt;
                seg.payload_len = len;
                seg.flags = TcpFlags::ACK;
                let ends_burst = self.cfg.tso && self.tso_burst_multi && self.snd_nxt + len == self.tso_burst_end;
                if len > 0 && (self.snd_nxt + len == self.write_end || ends_burst) {
                    seg.flags = seg.flags | TcpFlags::PSH;
                }
                if fin {
                    seg.flags = seg.flags | TcpFlags::FIN;
                }
                if let Some(rack) = self.rack.as_mut().filter(|_| len + fin as u32 > 0) {
                    rack.on_send(self.snd_nxt, self.snd_nxt + len + fin as u32, now);
                }
                self.snd_nxt += len + fin as u32;
                if len + fin as u32 > 0 {
                    self.cwnd.on_segment_sent(self.snd_nxt);
                }
                if self.cfg.cwv == Cwv::Linux {
                    // `tcp_cwnd_validate`: a window's first send, a send that fills cwnd, or a larger flight
                    // while not cwnd-limited starts the record again.
                    let flight = self.snd_nxt - self.snd_una;
                    let limited = flight + self.smss > self.cwnd.window();
                    if self.snd_una >= self.max_flight_until
                        || limited
                        || (!self.cwnd_limited && flight > self.max_flight)
                    {
                        self.cwnd_limited = limited;
                        self.max_flight = flight;
                        self.max_flight_until = self.snd_nxt;
                    }
                }
                // RFC 3042: a segment that goes beyond cwnd on a duplicate ACK is limited transmit.
                if self.rec.is_open() && self.rec.dupacks > 0 && self.snd_nxt - self.snd_una > self.cwnd.window() {
                    self.rec.limited_sent += len;
                }
                if len < self.smss {
                    self.snd_sml = self.snd_nxt;
                }
                if len > 0 {
                    self.last_sent_len = len; // Mentat tcp_last_sent_len
                }
                self.cork_released = false;
                self.disarm(Timer::Cork);
                if len > 0 {
                    self.ack.on_data_sent(now, &self.cfg);
                    self.sampler.on_data_sent(self.snd_nxt, now, self.ts_ok);
                    if seg.seq == self.snd_una {
                        self.after_idle(now);
                    }
                }
                (len, fin, false)
            }
            Choice::ZeroWindowProbe => {
                // An old sequence number draws an ACK with the current window (as Linux's probe0).
                seg.seq = self.snd_una + u32::MAX;
                seg.flags = TcpFlags::ACK;
                self.probe_pending = false;
                let t = self.rtt.rto_backed_off(self.persist_backoff);
                self.arm(Timer::Persist, now + t);
                (0, false, false)
            }
            Choice::Ack => {
                seg.seq = self.snd_nxt;
                seg.flags = TcpFlags::ACK;
                (0, false, false)
            }
            Choice::Reset => {
                self.st.SegsOut += 1;
                *seg = self.rst.take().map(|r| *r).unwrap_or_default();
                return;
            }
        };
        debug_assert_eq!(syn, matches!(choice, Choice::Syn | Choice::SynAck));
        let ack = !syn || matches!(choice, Choice::SynAck);
        let seq_len = len + syn as u32 + fin as u32;
        debug_assert_eq!((len, syn, ack, seq_len), (seg.payload_len, seg.flags.syn(), seg.flags.ack(), seg.seq_len()));
        if len > 0 {
            self.last_data_sent = Some(now);
            self.rec.on_payload_sent(len);
        }
        if retransmit {
            self.sampler.forget_timed(); // Karn's rule
            self.st.SegsRetrans += 1;
            self.st.OctetsRetrans += len as u64;
        }
        if syn {
            // A SYN-ACK offers what the SYN's options settled on (RCV.ADV, set by `negotiate`).
            seg.window =
                if ack { (self.rcv_adv - self.rcv_nxt) as u16 } else { self.initial_recv_window(false) as u16 };
            seg.options = self.syn_options(ack);
        } else {
            seg.window = self.advertise_window();
        }
        if ack {
            seg.ack = self.rcv_nxt;
            if self.sack_ok && !syn {
                self.sack_blocks(&mut seg.options.sack);
            }
            // A pure ACK: no payload, SYN or FIN.
            self.on_ack_sent(seq_len == 0);
        }
        // ECN sets nothing on a segment of a connection without it but its SYN (the segment is built Not-ECT):
        // the call, and telling the segment apart for it, only then (~7 instructions a segment).
        debug_assert_eq!(seg.ecn, EcnCodepoint::NotEct);
        if syn || self.ecn.ok() {
            let what = match choice {
                Choice::Syn => Outgoing::Syn { retransmit },
                Choice::SynAck => Outgoing::SynAck,
                Choice::NewData { .. } => Outgoing::NewData,
                _ => Outgoing::Other,
            };
            self.ecn.on_emit(self.cfg.ecn, seg, what);
        }
        if self.ts_ok && !syn {
            seg.options.timestamps = Some(Timestamps { tsval: self.ts_now(now), tsecr: self.ts_recent });
        } else if syn && self.cfg.timestamps && (!ack || self.ts_ok) {
            let tsecr = if ack { self.ts_recent } else { 0 };
            seg.options.timestamps = Some(Timestamps { tsval: self.ts_now(now), tsecr });
        }
        self.st.SegsOut += 1;
        if len > 0 {
            self.st.DataSegsOut += 1;
            self.st.DataOctetsOut += len as u64;
        }
        if self.pace.is_some() {
            self.on_sent_paced(now, seg, retransmit);
        }
        if seq_len > 0 && !self.armed(Timer::Retransmit) {
            self.restart_rto(now); // RFC 6298 (5.1)
        }
        if self.rack.is_some() && seq_len > 0 {
            if self.tlp_pending {
                // This segment is the tail loss probe (RFC 8985 §7.3).
                self.tlp_pending = false;
                self.st.LossProbes += 1;
                let nxt = self.snd_nxt;
                if let Some(rack) = self.rack.as_mut() {
                    rack.on_probe_sent(nxt, retransmit);
                }
            } else if matches!(choice, Choice::NewData { .. }) {
                self.arm_tlp(now); // RFC 8985 §7.2: after new data is sent
            }
        }
        if seq_len > 0 {
            let pipe = self.pipe() as u64;
            self.st.MaxPipeSize = self.st.MaxPipeSize.max(pipe);
        }
    }

    /// A segment left a paced (or TSQ-limited) connection: its departure time, and for a window-owning
    /// controller `tcp_rate_skb_sent` and `CA_EVENT_TX_START` (new data leaving with nothing in flight).
    #[cold]
    #[inline(never)]
    fn on_sent_paced(&mut self, now: Instant, seg: &TcpSegment, retransmit: bool) {
        let data_segs_out = self.st.DataSegsOut;
        if let Some(pace) = self.pace.as_mut() {
            pace.on_sent(now, seg.payload_len, data_segs_out);
        }
        if seg.seq_len() == 0 || seg.flags.syn() {
            return;
        }
        // Nothing was outstanding before this segment (Linux `packets_out == 0`): new data from SND.UNA.
        let idle = !retransmit && seg.seq == self.snd_una;
        let marks = self.rack_on();
        let Some(rate) = self.rate.as_mut() else { return };
        rate.losses_at_marks = marks;
        rate.on_sent(seg.seq, seg.seq + seg.seq_len(), now, idle, retransmit);
        let app_limited = rate.app_limited();
        if idle && !retransmit {
            self.cwnd.on_tx_start(now, app_limited);
            if let (Some(r), Some(pace)) = (self.cwnd.pacing_rate(), self.pace.as_mut()) {
                pace.set_rate(r);
            }
        }
    }

    /// New data leaves with nothing outstanding (Linux `CA_EVENT_TX_START`): congestion control learns the
    /// idle time since the last data sent (`lsndtime`), which `last_data_sent` still holds.
    #[inline(never)]
    fn after_idle(&mut self, now: Instant) {
        if let Some(last) = self.last_data_sent {
            self.cwnd.on_idle_restart(now, last);
        }
    }

    /// The engine's report that the segment last returned leaves the host at `departs` (`bytes` on the
    /// wire): TCP Small Queues counts it as in the host until then.
    #[inline]
    pub fn on_departure(&mut self, now: Instant, departs: Instant, bytes: u32) {
        if let Some(pace) = self.pace.as_mut() {
            pace.on_departure(now, departs, bytes);
        }
    }

    fn syn_options(&self, is_syn_ack: bool) -> TcpOptions {
        let mut o = TcpOptions { mss: Some(self.cfg.mss.bytes() as u16), ..TcpOptions::default() };
        // In a SYN-ACK only the options the peer offered (RFC 7323 §2.2, RFC 2018 §2).
        if self.cfg.window_scaling && (!is_syn_ack || self.wscale_ok) {
            o.window_scale = Some(self.rcv_wscale);
        }
        o.sack_permitted = self.cfg.sack && (!is_syn_ack || self.sack_ok);
        o
    }

    /// An ACK went out, `pure` when the segment carries no payload, SYN or FIN.
    fn on_ack_sent(&mut self, pure: bool) {
        if self.dup_ack_pending && pure {
            self.st.DupAcksOut += 1;
            if !self.last_ack_was_dup {
                self.st.DupAckEpisodes += 1;
            }
            self.last_ack_was_dup = true;
        } else {
            self.last_ack_was_dup = false;
        }
        self.dup_ack_pending = false;
        self.ack_now = false;
        self.ack_on_read = false;
        self.comp_pending = 0;
        // Neither ACK timer runs at most segments (a bulk sender's every one): one test of the armed bits,
        // not two disarms' stores.
        if self.timers_armed & (1 << Timer::CompressedAck as u16 | 1 << Timer::DelayedAck as u16) != 0 {
            self.disarm(Timer::CompressedAck);
            self.disarm(Timer::DelayedAck);
        }
        self.ack.on_ack_sent(&self.cfg);
        self.dsack = None;
        self.last_ack_sent = self.rcv_nxt;
    }

    /// Data received in order but not yet read, bytes.
    fn unread(&self) -> u64 {
        let end = match self.fin_rcvd {
            Some(fin) if self.rcv_nxt > fin => fin,
            _ => self.rcv_nxt,
        };
        (end - self.app_read) as u64
    }

    /// The largest window the receive buffer can offer: its window, at most what the window field can
    /// carry at our scale.
    #[inline]
    fn recv_buffer_limit(&self) -> u64 {
        debug_assert_eq!(self.recv_limit, self.recv_limit_now());
        self.recv_limit
    }

    fn set_recv_limit(&mut self) {
        self.recv_limit = self.recv_limit_now();
    }

    fn recv_limit_now(&self) -> u64 {
        let buf = self.recv_window_max;
        if !self.wscale_ok {
            buf.min(65_535)
        } else {
            buf.min(65_535u64 << self.rcv_wscale)
        }
    }

    /// What the window may offer now: the free buffer, and at most rcv_ssthresh while it grows (Linux
    /// `__tcp_select_window`).
    fn recv_free(&self) -> u64 {
        self.recv_free_of(self.unread())
    }

    /// [`Self::recv_free`] with the unread bytes known to the caller.
    #[inline(always)]
    fn recv_free_of(&self, unread: u64) -> u64 {
        debug_assert_eq!(unread, self.unread());
        if self.rcv_mem.is_some() {
            return self.recv_free_mem();
        }
        self.recv_buffer_limit().saturating_sub(unread).min(self.rcv_ssthresh)
    }

    /// Payload bytes the receive memory holds: unread in order, and out of order.
    fn rcv_held(&self) -> u64 {
        self.unread() + self.rcv_mem.as_ref().map_or(0, |m| m.ooo_bytes)
    }

    /// `tcp_space` under `rcv_mem_truesize`, held to what the window field can carry.
    fn recv_space_mem(&self) -> u64 {
        let m = self.rcv_mem.as_ref().expect("rcv_mem_truesize");
        m.space(self.rcv_held()).min(self.recv_window_field_max())
    }

    /// The largest window the 16-bit field carries at our scale (RFC 7323 §2.3).
    fn recv_window_field_max(&self) -> u64 {
        if self.wscale_ok {
            65_535u64 << self.rcv_wscale
        } else {
            65_535
        }
    }

    /// `__tcp_select_window` under `rcv_mem_truesize`: the free space, at most rcv_ssthresh; below half
    /// the full space it is rounded down to the scale, and offered as 0 when less than an MSS or 1/16
    /// of the memory's full window (so the window closes before the memory runs out).
    #[cold]
    #[inline(never)]
    fn recv_free_mem(&self) -> u64 {
        let m = self.rcv_mem.as_ref().expect("rcv_mem_truesize");
        let allowed = m.full_space().min(self.recv_window_field_max());
        let full = m.window_clamp.min(allowed);
        let mut free = self.recv_space_mem();
        if free < full / 2 {
            free = free >> self.rcv_wscale << self.rcv_wscale;
            if free < allowed / 16 || free < (self.rcv_mss as u64).min(full) {
                return 0;
            }
        }
        free.min(self.rcv_ssthresh)
    }

    /// `tcp_measure_rcv_mss` → `scaling_ratio` and `tcp_set_window_clamp`: a grown clamp lifts
    /// rcv_ssthresh to the window last offered, a smaller one lowers it to the clamp.
    #[cold]
    #[inline(never)]
    fn measure_scaling_ratio(&mut self, len: u32) {
        let rcv_wnd = if self.rcv_adv > self.last_ack_sent { (self.rcv_adv - self.last_ack_sent) as u64 } else { 0 };
        let Some(m) = self.rcv_mem.as_mut() else { return };
        if let Some((clamp, grew)) = m.measure(len) {
            if !self.cfg.grow_window {
                return;
            }
            self.rcv_ssthresh =
                if grew { self.rcv_ssthresh.max(rcv_wnd.min(clamp)) } else { self.rcv_ssthresh.min(clamp) };
        }
    }

    /// `tcp_grow_window` under `rcv_mem_truesize`: room up to min(`window_clamp`, `tcp_space`), and an
    /// increase only for a segment whose truesize the window could carry.
    #[cold]
    #[inline(never)]
    fn grow_rcv_ssthresh_mem(&mut self, len: u32) -> bool {
        let m = self.rcv_mem.as_ref().expect("rcv_mem_truesize");
        let room = m.window_clamp.min(self.recv_space_mem()).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        let ts_room = if self.ts_ok { 12 } else { 0 };
        let advmss = (self.cfg.mss.bytes() as u32).saturating_sub(ts_room);
        let rmem_max = match self.cfg.wscale_space.bytes() {
            0 => 2 * self.cfg.recv_buffer.bytes(),
            n => n,
        };
        let incr = m.grow_incr(len, advmss, self.rcv_mss, self.rcv_ssthresh, rmem_max);
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// Linux `tcp_grow_window`: an in-order segment of at least 128 bytes grows rcv_ssthresh by twice its
    /// size (or the MSS), while room is left below the largest window and the free buffer; true when it grew.
    #[inline]
    fn grow_window(&mut self, len: u32) -> bool {
        if !self.cfg.grow_window || len < 128 {
            return false;
        }
        self.grow_rcv_ssthresh(len)
    }

    #[inline]
    fn grow_rcv_ssthresh(&mut self, len: u32) -> bool {
        if self.rcv_mem.is_some() {
            return self.grow_rcv_ssthresh_mem(len);
        }
        let room = self.recv_buffer_limit().saturating_sub(self.unread()).saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(2 * len.max(self.rcv_mss) as u64);
        true
    }

    /// The window field for the next segment. The right edge moves right only by at least
    /// min(buffer/2, MSS) at a time (RFC 1122 §4.2.3.3) and never moves left (RFC 9293 §3.8.6.2.2).
    fn advertise_window(&mut self) -> u16 {
        if let Some(field) = self.adv_field {
            debug_assert_eq!(self.window_field_unchanged(), Some(field));
            return field;
        }
        let buf = self.recv_buffer_limit();
        let free = self.recv_free();
        let edge = self.rcv_nxt + free as u32;
        let s = self.rcv_wscale as u32;
        // The window of the last segment again, its edge where it was (a bulk sender's every segment:
        // nothing arrived, nothing was read): the rule would leave RCV.ADV and the gauges as they are, and
        // the field is the bytes last sent, scaled (a multiple of the scale, at most 65,535 scaled, as the
        // scale is fixed from the handshake on).
        if edge == self.rcv_adv && free == self.st.CurRwinSent {
            debug_assert!(free & ((1 << s) - 1) == 0 && free >> s <= 65_535);
            // The same again until the receive side changes.
            self.adv_field = Some((free >> s) as u16);
            return (free >> s) as u16;
        }
        if edge > self.rcv_adv {
            let inc = (edge - self.rcv_adv) as u64;
            if inc >= (buf / 2).min(self.rcv_mss as u64) || self.rcv_adv <= self.rcv_nxt && inc == buf {
                self.rcv_adv = edge;
            }
        }
        let wnd = if self.rcv_adv > self.rcv_nxt { self.rcv_adv - self.rcv_nxt } else { 0 };
        // The window rounded up to the scale: a shift, not `div_ceil`'s division (~10 instructions a segment).
        let field = ((wnd as u64 + (1 << s) - 1) >> s).min(65_535) as u32;
        self.rcv_adv = self.rcv_nxt + (field << s);
        let bytes = (field << s) as u64;
        if bytes == 0 && self.st.CurRwinSent != 0 {
            self.st.ZeroRwinSent += 1;
        }
        self.st.CurRwinSent = bytes;
        self.st.MaxRwinSent = self.st.MaxRwinSent.max(bytes);
        field as u16
    }

    /// The window field when [`Self::advertise_window`] would find the last window again (its edge and
    /// size as sent), for the debug check of [`Self::adv_field`].
    fn window_field_unchanged(&self) -> Option<u16> {
        let free = self.recv_free();
        let edge = self.rcv_nxt + free as u32;
        (edge == self.rcv_adv && free == self.st.CurRwinSent).then_some((free >> self.rcv_wscale) as u16)
    }

    /// SACK blocks for an outgoing ACK, into `out` (empty): a D-SACK block first, then the block holding
    /// the most recent arrival, then other recent blocks (RFC 2018 §4, RFC 2883 §4).
    fn sack_blocks(&self, out: &mut SackBlocks) {
        // Nothing held out of order and no duplicate reported: the common ACK (and every data segment a
        // bulk sender sends) carries no block, and the segment's empty list is not written again.
        if self.dsack.is_none() && self.ooo.is_empty() {
            return;
        }
        let max = if self.ts_ok { 3 } else { 4 };
        if let Some(d) = self.dsack {
            out.push(d);
        }
        // The D-SACK block may equal the block that contains it, which must follow it all the same
        // (RFC 2883 §4.2): repeats are checked among the SACK blocks only.
        let first = self.dsack.is_some() as usize;
        let add = |out: &mut SackBlocks, (l, r): (SeqNumber, SeqNumber)| {
            if out.len() < max && !out.as_slice()[first..].iter().any(|b| b.left == l && b.right == r) {
                out.push(SackBlock { left: l, right: r });
            }
        };
        for s in self.sack_recent.iter().flatten() {
            if let Some(range) = self.ooo.containing(*s) {
                add(out, range);
            }
        }
        for range in self.ooo.iter().rev() {
            add(out, range);
        }
    }

    /// RFC 4898 statistics as of `now`: like [`Connection::estats`], with the current sender-limit state's
    /// open interval charged up to `now`.
    pub fn estats_at(&self, now: Instant) -> Estats {
        let mut e = self.estats();
        if let Some((lim, since)) = self.snd_lim {
            let ms = now.saturating_since(since).as_nanos() as f64 / 1e6;
            match lim {
                SndLim::Rwin => e.SndLimTimeRwin += ms,
                SndLim::Cwnd => e.SndLimTimeCwnd += ms,
                SndLim::Snd => e.SndLimTimeSnd += ms,
            }
        }
        e
    }

    /// Pacing, TCP Small Queues and BBR statistics.
    #[cold]
    fn paced_estats(&self) -> PacedEstats {
        let mut x = PacedEstats::default();
        if let Some(pace) = self.pace.as_ref() {
            if pace.on {
                x.X_PacingRate = Some(if pace.rate == u64::MAX { 0 } else { pace.rate });
            }
            if pace.tsq_limit > 0 {
                x.X_TsqThrottled = Some(pace.throttled);
            }
        }
        if let Some(rate) = self.rate.as_ref() {
            x.X_DeliveryRate = Some(rate.delivery_rate().map_or(0, |(r, _)| r));
            x.X_SmoothedRTTMean = rate.srtt_mean.mean_ms();
        }
        if let Some(m) = self.cwnd.model() {
            x.X_BbrMode = Some(m.mode as u64);
            x.X_BbrBtlBw = Some(m.btl_bw);
            x.X_BbrMinRTT = Some(m.min_rtt.map_or(0.0, |d| d.as_nanos() as f64 / 1e6));
            x.X_BbrPacingGain = Some(m.pacing_gain);
            x.X_BbrCwndGain = Some(m.cwnd_gain);
            x.X_BbrProbeRttEpisodes = Some(m.probe_rtt_rounds);
            x.X_BbrRounds = Some(m.rounds);
            x.X_BbrLtUseBw = Some(m.lt_use_bw as u64);
        }
        x
    }

    /// RFC 4898 statistics, gauges filled in as of now.
    pub fn estats(&self) -> Estats {
        let mut e = self.st.clone();
        e.CurCwnd = self.linux_snd_cwnd() as u64;
        let ss = self.cwnd.ssthresh();
        e.CurSsthresh = (ss != INFINITE_SSTHRESH).then_some(ss as u64);
        e.CurMSS = self.smss as u64;
        e.PipeSize = self.pipe() as u64;
        if let Some(srtt) = self.rtt.srtt() {
            e.SmoothedRTT = srtt.as_nanos() as f64 / 1e6;
        }
        e.RTTVar = self.rtt.rttvar().as_nanos() as f64 / 1e6;
        e.CurRTO = self.rtt.rto_backed_off(self.backoff).as_nanos() as f64 / 1e6;
        if self.pace.is_some() || self.rate.is_some() {
            e.paced = Some(Box::new(self.paced_estats()));
        }
        e
    }
}
