//! The RDP connection: RFC 908 §3 with the RFC 1151 corrections.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use tcplab_rtt::RttEstimator;
use tcplab_units::{Duration, Instant};
use tcplab_wire::rdp::RDP_HEADER_LEN;
use tcplab_wire::{EackList, RdpFlags, RdpSegment, SeqNumber, SynOptions, IPV4_HEADER_LEN};

use crate::config::{RdpConfig, RtoChoice, RttSampling, WindowPolicy};
use crate::stats::{RdpStats, RttRecord};

/// Connection states (RFC 908 §3.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynRcvd,
    Open,
    CloseWait,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynRcvd => "SYN-RCVD",
            State::Open => "OPEN",
            State::CloseWait => "CLOSE-WAIT",
        })
    }
}

/// A segment that took a sequence number and is not yet cumulatively acknowledged.
#[derive(Debug, Clone, Copy)]
struct Sent {
    len: u32,
    nul: bool,
    first_sent: Instant,
    /// Transmissions so far.
    tx: u32,
    /// When its retransmission timer expires (RFC 908 §3.7: one timer per segment).
    deadline: Instant,
    /// Named in an EACK: released, its timer cancelled (RFC 908 §3.7.2).
    eacked: bool,
    /// Its timer expired; it goes out again at the next transmit opportunity.
    resend: bool,
}

/// A message the application queued and RDP has not yet sent.
#[derive(Debug, Clone, Copy)]
struct Msg {
    len: u32,
    nul: bool,
}

/// One end of one RDP connection.
#[derive(Debug, Clone)]
pub struct RdpConnection {
    cfg: Arc<RdpConfig>,
    state: State,
    /// Opened passively: an RST in SYN-RCVD returns to LISTEN (RFC 908 §3.5).
    passive: bool,
    local_port: u16,
    remote_port: u16,

    // Send side (RFC 908 §3.2.4 connection record).
    iss: SeqNumber,
    snd_nxt: SeqNumber,
    snd_una: SeqNumber,
    /// SND.MAX: the peer's max outstanding, from its SYN.
    snd_max: u32,
    /// SBUF.MAX: the peer's max segment size, from its SYN.
    sbuf_max: u32,
    /// Segments SND.UNA.. SND.NXT−1, in order.
    out: VecDeque<Sent>,
    queue: VecDeque<Msg>,
    queued_bytes: u64,
    /// When our SYN was first sent, how often, and when its timer expires.
    syn_first_sent: Option<Instant>,
    syn_tx: u32,
    syn_deadline: Option<Instant>,
    syn_timeout: Duration,
    /// Our SYN (SYN+ACK in SYN-RCVD) is due for (re)transmission.
    syn_due: bool,
    /// An RST to send next (RFC 908 §3.4), already built.
    rst_due: Option<RdpSegment>,
    /// The application closed; the RST goes when everything sent is acknowledged.
    close_requested: bool,
    close_wait_until: Option<Instant>,
    /// Our closing RST is queued; CLOSE-WAIT's timer starts when it goes out.
    close_wait_on_rst: bool,
    last_activity: Instant,

    // Receive side.
    rcv_cur: SeqNumber,
    rcv_irs: SeqNumber,
    /// Segments RCV.CUR+1 … held, by offset from RCV.CUR+1: `Some(len)` once received (RCVDSEQNO).
    held: VecDeque<Option<(u32, bool)>>,
    readable: u64,
    /// ACKs owed: one per segment that asks for one (A.7.3; Part C: one per arriving data segment).
    acks_owed: u32,
    peer_closed: bool,

    rtt: RttEstimator,
    /// The highest number acknowledged so far (cumulatively or by EACK), for `discard_out_of_order`.
    highest_acked: Option<SeqNumber>,
    stats: RdpStats,
    /// Every RTT measurement, with `record_rtt_samples`.
    rtt_log: Vec<RttRecord>,
    stalled: bool,
}

/// Serial-arithmetic `a < b` (A.4).
fn lt(a: SeqNumber, b: SeqNumber) -> bool {
    a.diff(b) < 0
}

fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

impl RdpConnection {
    fn new(cfg: Arc<RdpConfig>, state: State, local_port: u16, remote_port: u16, iss: u32) -> Self {
        let rtt = RttEstimator::with_model(
            cfg.rto_model.model(),
            cfg.rto_params,
            cfg.initial_rto,
            cfg.min_rto,
            cfg.max_rto,
            cfg.tick,
        );
        let iss = SeqNumber(iss);
        RdpConnection {
            state,
            passive: state == State::Listen,
            local_port,
            remote_port,
            iss,
            snd_nxt: iss + 1,
            snd_una: iss,
            snd_max: 1,
            sbuf_max: u32::from(cfg.max_segment_size),
            out: VecDeque::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            syn_first_sent: None,
            syn_tx: 0,
            syn_deadline: None,
            syn_timeout: cfg.initial_rto,
            syn_due: state == State::SynSent,
            rst_due: None,
            close_requested: false,
            close_wait_until: None,
            close_wait_on_rst: false,
            last_activity: Instant::ZERO,
            rcv_cur: SeqNumber(0),
            rcv_irs: SeqNumber(0),
            held: VecDeque::new(),
            readable: 0,
            acks_owed: 0,
            peer_closed: false,
            rtt,
            highest_acked: None,
            stats: RdpStats::default(),
            rtt_log: Vec::new(),
            stalled: false,
            cfg,
        }
    }

    /// Active open (RFC 908 §3.5): the SYN goes out at the first [`RdpConnection::poll_transmit`].
    pub fn connect(cfg: Arc<RdpConfig>, local_port: u16, remote_port: u16, iss: u32) -> Self {
        Self::new(cfg, State::SynSent, local_port, remote_port, iss)
    }

    /// Passive open (RFC 908 §3.5): waits in LISTEN for a SYN; the peer's port is learned from it.
    pub fn listen(cfg: Arc<RdpConfig>, local_port: u16, iss: u32) -> Self {
        Self::new(cfg, State::Listen, local_port, 0, iss)
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn is_established(&self) -> bool {
        self.state == State::Open
    }
    /// The last [`RdpConnection::poll_transmit`] had a segment but the interface was full.
    pub fn stalled(&self) -> bool {
        self.stalled
    }

    // ---- The application side ------------------------------------------------------------------------

    /// Largest data length of one segment: the peer's max segment size less the IP and fixed RDP headers
    /// (RFC 908 §3.5: the size counts both headers). Before the peer's SYN, our own size stands in.
    pub fn max_message(&self) -> u32 {
        self.sbuf_max.saturating_sub(IPV4_HEADER_LEN + RDP_HEADER_LEN).max(1)
    }

    /// Queues `bytes` as messages and returns how many were taken. RFC 908 sends one segment per user SEND
    /// and rejects a message above the peer's size; on this byte-counting socket interface a call larger than
    /// [`RdpConnection::max_message`] is cut into messages of that size (the last one shorter), and a call
    /// that finds the queue ([`RdpConfig::send_queue`] messages) full is taken only in part, the rest
    /// becoming new messages when the caller resumes. A call of at most `max_message` bytes on a queue with
    /// room is exactly one message.
    pub fn send(&mut self, bytes: u64) -> u64 {
        let open = matches!(self.state, State::SynSent | State::SynRcvd | State::Open | State::Listen);
        if !open || self.close_requested {
            return 0;
        }
        let max = u64::from(self.max_message());
        let mut taken = 0;
        while taken < bytes && (self.queue.len() as u32) < self.cfg.send_queue {
            let n = (bytes - taken).min(max);
            self.queue.push_back(Msg { len: n as u32, nul: false });
            self.queued_bytes += n;
            taken += n;
        }
        taken
    }

    /// How many of `bytes` [`RdpConnection::send`] would take now: as many largest messages as there are
    /// free slots (nothing once closing or closed).
    pub fn send_room(&self, bytes: u64) -> u64 {
        let open = matches!(self.state, State::SynSent | State::SynRcvd | State::Open | State::Listen);
        if !open || self.close_requested {
            return 0;
        }
        bytes.min(self.send_buffer_free())
    }

    /// Room in the send queue, bytes (free message slots times the largest message).
    pub fn send_buffer_free(&self) -> u64 {
        u64::from(self.cfg.send_queue.saturating_sub(self.queue.len() as u32)) * u64::from(self.max_message())
    }

    pub fn readable(&self) -> u64 {
        self.readable
    }

    pub fn recv(&mut self, max: u64) -> u64 {
        let n = self.readable.min(max);
        self.readable -= n;
        n
    }

    /// The peer reset or closed the connection, and everything delivered before was read.
    pub fn is_eof(&self) -> bool {
        self.peer_closed && self.readable == 0
    }

    /// Closes the connection after every queued message is acknowledged. RDP has no orderly release
    /// (RFC 908 §3.3: CLOSE sends RST); waiting for the acknowledgements first is the confirmation the RFC
    /// leaves to applications.
    pub fn close(&mut self) {
        self.close_requested = true;
        match self.state {
            State::Listen => self.state = State::Closed,
            // RFC 908 §3.5: close in SYN-SENT/SYN-RCVD sends RST and frees the record.
            State::SynSent | State::SynRcvd => {
                self.rst_due = Some(self.seg(RdpFlags::RST, self.snd_nxt));
                self.state = State::Closed;
            }
            _ => self.try_close(),
        }
    }

    // ---- Timers --------------------------------------------------------------------------------------

    /// The RTO in force before per-segment backoff.
    fn rto(&self) -> Duration {
        if self.cfg.rto_model == RtoChoice::Fixed {
            self.cfg.initial_rto
        } else {
            self.rtt.rto()
        }
    }

    /// When a timer of length `rto` started at `now` expires: on the tick grid, ⌊now/G⌋ + max(1, ⌈rto/G⌉)
    /// ticks (A.9, A-12), or exactly `now + rto` when G = 0.
    fn deadline(&self, now: Instant, rto: Duration) -> Instant {
        let g = self.cfg.tick.as_nanos();
        if g == 0 {
            return now + rto;
        }
        let ticks = rto.as_nanos().div_ceil(g).max(1);
        Instant::from_nanos((now.as_nanos() / g + ticks).saturating_mul(g))
    }

    /// The earliest instant at which [`RdpConnection::on_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.syn_deadline;
        let mut take = |d: Option<Instant>| {
            if let Some(d) = d {
                t = Some(t.map_or(d, |t: Instant| t.min(d)));
            }
        };
        if self.state == State::Open {
            for s in &self.out {
                if !s.eacked && !s.resend {
                    take(Some(s.deadline));
                }
            }
            if let Some(idle) = self.cfg.nul_idle {
                if self.out.is_empty() && self.queue.is_empty() {
                    take(Some(self.last_activity + idle));
                }
            }
        }
        take(self.close_wait_until);
        t
    }

    /// Runs every timer due at `now`.
    pub fn on_timeout(&mut self, now: Instant) {
        if self.syn_deadline.is_some_and(|d| d <= now) {
            self.syn_deadline = None;
            self.syn_due = true;
        }
        if self.state == State::Open {
            let mut data_due = false;
            for s in self.out.iter_mut() {
                if !s.eacked && !s.resend && s.deadline <= now {
                    s.resend = true;
                    data_due |= s.len > 0;
                }
            }
            if data_due {
                self.stats.Timeouts += 1;
            }
            if let Some(idle) = self.cfg.nul_idle {
                if self.out.is_empty() && self.queue.is_empty() && now >= self.last_activity + idle {
                    // RFC 908 §3.6: a NUL takes the next number and is retransmitted like data.
                    self.queue.push_back(Msg { len: 0, nul: true });
                }
            }
        }
        if self.close_wait_until.is_some_and(|d| d <= now) {
            self.close_wait_until = None;
            self.state = State::Closed;
        }
    }

    // ---- Output --------------------------------------------------------------------------------------

    fn seg(&self, flags: RdpFlags, seq: SeqNumber) -> RdpSegment {
        RdpSegment {
            version: self.cfg.version,
            flags,
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            ..RdpSegment::default()
        }
    }

    fn syn_options(&self) -> SynOptions {
        SynOptions {
            max_outstanding: self.cfg.max_outstanding,
            max_segment_size: self.cfg.max_segment_size,
            sequenced: self.cfg.sequenced,
        }
    }

    /// ACK = RCV.CUR, plus the EACK list of every held number, ascending (A.7.4), cut to the configured
    /// entries and to what fits in the peer's max segment size with `data_len` octets of data.
    fn add_ack(&self, s: &mut RdpSegment) {
        s.flags = s.flags | RdpFlags::ACK;
        s.ack = self.rcv_cur;
        if !self.cfg.eack {
            return;
        }
        let mut list = EackList::new(self.rcv_cur + 1);
        for (i, h) in self.held.iter().enumerate() {
            if h.is_some() {
                list.insert(self.rcv_cur + 1 + i as u32);
            }
        }
        if list.is_empty() {
            return;
        }
        let room = self.sbuf_max.saturating_sub(IPV4_HEADER_LEN + RDP_HEADER_LEN + s.data_len) / 4;
        list.truncate((room as usize).min(usize::from(self.cfg.eack_max_entries)));
        if !list.is_empty() {
            s.flags = s.flags | RdpFlags::EACK;
            s.eacks = list;
        }
    }

    /// May a new segment (the next number) go out? (A.7.2)
    fn window_open(&self) -> bool {
        let max = self.snd_max;
        match self.cfg.window_policy {
            WindowPolicy::Span => lt(self.snd_nxt, self.snd_una + max),
            WindowPolicy::Count => {
                let unacked = self.out.iter().filter(|s| !s.eacked).count() as u32;
                unacked < max && lt(self.snd_nxt, self.snd_una + 2 * max)
            }
        }
    }

    fn has_output(&self) -> bool {
        self.has_output_besides_ack() || (self.acks_owed > 0 && matches!(self.state, State::Open | State::SynRcvd))
    }

    /// A RST, a SYN, a retransmission or new data is due (anything but a bare ACK).
    pub(crate) fn has_output_besides_ack(&self) -> bool {
        self.rst_due.is_some()
            || (self.syn_due && matches!(self.state, State::SynSent | State::SynRcvd))
            || (self.state == State::Open
                && (self.out.iter().any(|s| s.resend) || (!self.queue.is_empty() && self.window_open())))
    }

    /// [`RdpConnection::poll_transmit`] before the application hears of the event just processed: a bare
    /// ACK waits for the application's read and reply (`tcplab_transport::Transport::poll_transmit_before_app`).
    pub fn poll_transmit_before_app(&mut self, now: Instant, room: tcplab_transport::TxRoom) -> Option<RdpSegment> {
        if !self.has_output_besides_ack() {
            self.stalled = false;
            return None;
        }
        self.poll_transmit(now, room)
    }

    /// The next segment to send, if any. Order: RST, SYN, retransmissions (ascending), new data, a bare ACK.
    pub fn poll_transmit(&mut self, now: Instant, room: tcplab_transport::TxRoom) -> Option<RdpSegment> {
        self.stalled = false;
        if !self.has_output() {
            return None;
        }
        if room == tcplab_transport::TxRoom::Full {
            self.stalled = true;
            return None;
        }
        let seg = self.build(now);
        self.stats.SegsOut += 1;
        if seg.flags.eack() {
            self.stats.EacksOut += 1;
        }
        if seg.data_len > 0 {
            self.stats.DataSegsOut += 1;
            self.stats.DataOctetsOut += u64::from(seg.data_len);
        }
        self.last_activity = now;
        Some(seg)
    }

    fn build(&mut self, now: Instant) -> RdpSegment {
        if let Some(rst) = self.rst_due.take() {
            if std::mem::take(&mut self.close_wait_on_rst) {
                self.close_wait_until = Some(now + self.cfg.close_wait);
            }
            return rst;
        }
        if self.syn_due && matches!(self.state, State::SynSent | State::SynRcvd) {
            self.syn_due = false;
            let mut s = self.seg(RdpFlags::SYN, self.iss);
            s.syn = Some(self.syn_options());
            if self.state == State::SynRcvd {
                s.flags = s.flags | RdpFlags::ACK;
                s.ack = self.rcv_cur;
            }
            if self.syn_tx > 0 {
                // Partridge 1986: SYNs back off, so that the timeout in force tracks a long path.
                self.syn_timeout = self.syn_timeout.saturating_mul(2).min(self.cfg.max_rto);
            }
            self.syn_first_sent.get_or_insert(now);
            self.syn_tx += 1;
            self.syn_deadline = Some(self.deadline(now, self.syn_timeout));
            return s;
        }
        self.acks_owed = self.acks_owed.saturating_sub(1);
        if let Some(i) = self.out.iter().position(|s| s.resend) {
            let rto = self.rto();
            let backoff = self.cfg.backoff;
            let max_rto = self.cfg.max_rto;
            let seq = self.snd_una + i as u32;
            let e = &mut self.out[i];
            e.resend = false;
            e.tx += 1;
            let rto = if backoff { rto.saturating_mul(1 << (e.tx - 1).min(16)).min(max_rto) } else { rto };
            let (len, nul) = (e.len, e.nul);
            let deadline = self.deadline(now, rto);
            self.out[i].deadline = deadline;
            if len > 0 {
                self.stats.SegsRetrans += 1;
                self.stats.OctetsRetrans += u64::from(len);
            }
            return self.data_seg(seq, len, nul);
        }
        if self.state == State::Open && !self.queue.is_empty() && self.window_open() {
            let m = self.queue.pop_front().unwrap_or(Msg { len: 0, nul: true });
            self.queued_bytes -= u64::from(m.len);
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            let deadline = self.deadline(now, self.rto());
            self.out.push_back(Sent {
                len: m.len,
                nul: m.nul,
                first_sent: now,
                tx: 1,
                deadline,
                eacked: false,
                resend: false,
            });
            return self.data_seg(seq, m.len, m.nul);
        }
        // A bare ACK carries the next unused number and does not consume it (A.3.8).
        let mut s = self.seg(RdpFlags(0), self.snd_nxt);
        self.add_ack(&mut s);
        s
    }

    fn data_seg(&self, seq: SeqNumber, len: u32, nul: bool) -> RdpSegment {
        let mut s = self.seg(if nul { RdpFlags::NUL } else { RdpFlags(0) }, seq);
        s.data_len = len;
        self.add_ack(&mut s);
        s
    }

    // ---- Input ---------------------------------------------------------------------------------------

    /// Records the peer's SYN (RFC 908 §3.5: RCV.CUR = RCV.IRS = SEG.SEQ, SND.MAX, SBUF.MAX).
    fn take_syn(&mut self, seg: &RdpSegment) {
        self.rcv_cur = seg.seq;
        self.rcv_irs = seg.seq;
        self.remote_port = seg.src_port;
        if let Some(o) = seg.syn {
            self.snd_max = u32::from(o.max_outstanding).max(1);
            self.sbuf_max = u32::from(o.max_segment_size);
        }
    }

    /// Our SYN was acknowledged: the handshake's round trip may seed the estimator (Zhang; Partridge 1986).
    /// Records SynRTT, SynRetrans and the RTO the data phase starts with (InitialRTO).
    fn syn_acked(&mut self, now: Instant) {
        self.syn_deadline = None;
        self.syn_due = false;
        let rtt = self.syn_first_sent.map(|t| now.saturating_since(t));
        self.stats.SynRTT = rtt.map_or(0.0, ms);
        self.stats.SynRetrans = u64::from(self.syn_tx.saturating_sub(1));
        if self.cfg.syn_seed {
            let sample = match (self.syn_tx, rtt) {
                (1, Some(r)) => r,
                // Resent: measuring from the first SYN overestimates, from the last underestimates; take the
                // timeout in force when the ACK arrives (Partridge, "RTT's revisited", Nov 1986). With SYN
                // timeouts doubling from T0, the one in force when the first SYN's ACK comes back is within a
                // factor 2 of the round trip either way.
                _ => self.syn_timeout,
            };
            self.rtt_sample(now, sample);
        }
        self.stats.InitialRTO = ms(self.rto());
    }

    /// Notes a measurement in the log (with `record_rtt_samples`), with the estimator's state after it.
    fn log_rtt(&mut self, now: Instant, rtt: Duration, taken: bool) {
        if self.cfg.record_rtt_samples {
            let (srtt, rto) = (self.rtt.srtt(), self.rto());
            self.rtt_log.push(RttRecord { at: now, rtt, taken, srtt, rto });
        }
    }

    fn rtt_sample(&mut self, now: Instant, r: Duration) {
        self.rtt.on_sample(r);
        self.log_rtt(now, r, true);
        self.stats.RttSamples += 1;
        let r = ms(r);
        if self.stats.RttSamples == 1 || r < self.stats.MinRTT {
            self.stats.MinRTT = r;
        }
        self.stats.MaxRTT = self.stats.MaxRTT.max(r);
        let srtt = self.rtt.srtt().map_or(0.0, ms);
        self.stats.MaxSmoothedRTT = self.stats.MaxSmoothedRTT.max(srtt);
    }

    /// An RST for a segment that does not belong here (RFC 908 §3.5 / A.6): to an ACK or NUL, RST with
    /// seq = SEG.ACK + 1; otherwise RST+ACK acknowledging SEG.SEQ (RFC 1151 §3, "SEG.SEG" is a typo).
    fn reject(&mut self, seg: &RdpSegment) {
        if seg.flags.rst() {
            return;
        }
        let mut r = self.seg(RdpFlags::RST, seg.ack + 1);
        r.dst_port = seg.src_port;
        if !(seg.flags.ack() || seg.flags.nul()) {
            r.seq = SeqNumber(0);
            r.flags = RdpFlags::RST | RdpFlags::ACK;
            r.ack = seg.seq;
        }
        self.rst_due = Some(r);
    }

    /// Enters CLOSE-WAIT (RFC 908 §3.3): everything is discarded until the timer frees the record.
    fn enter_close_wait(&mut self, now: Instant) {
        self.state = State::CloseWait;
        self.close_wait_until = Some(now + self.cfg.close_wait);
        self.syn_deadline = None;
        self.acks_owed = 0;
    }

    /// Processes one segment addressed to this endpoint.
    pub fn on_segment(&mut self, now: Instant, seg: &RdpSegment) {
        self.stats.SegsIn += 1;
        if seg.data_len > 0 {
            self.stats.DataSegsIn += 1;
            self.stats.DataOctetsIn += u64::from(seg.data_len);
        }
        if seg.flags.eack() {
            self.stats.EacksIn += 1;
        }
        self.last_activity = now;
        let f = seg.flags;
        match self.state {
            State::Closed => self.reject(seg),
            State::Listen => {
                if f.rst() {
                } else if f.ack() || f.nul() {
                    self.reject(seg);
                } else if f.syn() {
                    self.take_syn(seg);
                    self.state = State::SynRcvd;
                    self.syn_due = true;
                }
            }
            State::SynSent => {
                // RFC 1151 §3: RST and SYN first, the ACK test after them.
                if f.rst() {
                    if f.ack() {
                        self.state = State::Closed; // "connection refused"
                    }
                } else if f.syn() {
                    self.take_syn(seg);
                    if !f.ack() {
                        // Simultaneous open: our SYN goes again, now with ACK.
                        self.state = State::SynRcvd;
                        self.syn_due = true;
                    } else if seg.ack == self.iss {
                        self.snd_una = seg.ack + 1;
                        self.state = State::Open;
                        self.syn_acked(now);
                        self.acks_owed += 1;
                    } else {
                        self.reject(seg);
                        self.state = State::Closed; // RFC 1151: free the record
                    }
                } else if f.ack() && seg.ack != self.iss {
                    self.reject(seg);
                    self.state = State::Closed;
                }
            }
            State::SynRcvd => self.on_segment_syn_rcvd(now, seg),
            State::Open => self.on_segment_open(now, seg),
            // RFC 1151 §3: CLOSE-WAIT discards everything, RST included, and stays.
            State::CloseWait => {}
        }
    }

    fn acceptable(&self, seq: SeqNumber) -> bool {
        // A.7.1, RFC 1151 §3: RCV.CUR < SEG.SEQ ≤ RCV.CUR + 2·RCV.MAX (right edge outside).
        let limit = self.rcv_cur + 2 * u32::from(self.cfg.max_outstanding);
        lt(self.rcv_cur, seq) && !lt(limit, seq)
    }

    fn on_segment_syn_rcvd(&mut self, now: Instant, seg: &RdpSegment) {
        let f = seg.flags;
        if seg.seq == self.rcv_irs && f.syn() && !f.ack() {
            // a duplicate SYN gets our SYN+ACK again (BBN code).
            self.syn_due = true;
            return;
        }
        if !self.acceptable(seg.seq) {
            self.acks_owed += 1;
            return;
        }
        if f.rst() {
            if self.passive {
                let cfg = Arc::clone(&self.cfg);
                *self = Self::new(cfg, State::Listen, self.local_port, 0, self.iss.0);
            } else {
                self.state = State::Closed;
            }
            return;
        }
        if f.syn() || f.eack() {
            self.reject(seg);
            self.state = State::Closed;
            return;
        }
        if f.ack() {
            if seg.ack == self.iss {
                self.snd_una = self.iss + 1;
                self.state = State::Open;
                self.syn_acked(now);
                self.on_segment_open(now, seg);
            } else {
                self.reject(seg);
                self.state = State::Closed;
            }
        }
    }

    fn on_segment_open(&mut self, now: Instant, seg: &RdpSegment) {
        let f = seg.flags;
        let carries = seg.data_len > 0 || f.nul();
        if !self.acceptable(seg.seq) {
            // Includes every duplicate of an in-sequence segment (SEG.SEQ ≤ RCV.CUR): answered with an ACK
            // (and the EACK list) so that a sender whose ACK was lost resynchronises (A.7.1).
            if seg.data_len > 0 && !lt(self.rcv_cur, seg.seq) {
                self.stats.DupSegsIn += 1;
            }
            if carries || f.syn() {
                self.acks_owed += 1;
            }
            return;
        }
        if f.rst() {
            self.peer_closed = true;
            self.enter_close_wait(now);
            return;
        }
        if f.syn() {
            self.reject(seg);
            self.state = State::Closed;
            return;
        }
        if f.ack() || f.eack() {
            self.process_acks(now, seg);
        }
        if carries {
            self.receive(seg);
            self.acks_owed += 1;
        }
        self.try_close();
    }

    /// RFC 908 §3.7 / A.7.3 steps 3 and 4; RTT sampling per [`RttSampling`].
    fn process_acks(&mut self, now: Instant, seg: &RdpSegment) {
        // The highest segment newly acknowledged by this segment, and whether it was sent once.
        let mut newest: Option<(SeqNumber, Sent)> = None;
        if seg.flags.ack() && !lt(seg.ack, self.snd_una) && lt(seg.ack, self.snd_nxt) {
            // RFC 1151 §3: SND.UNA = SEG.ACK + 1, releasing every segment up to SEG.ACK.
            let n = seg.ack + 1 - self.snd_una;
            for i in 0..n {
                if let Some(s) = self.out.pop_front() {
                    if !s.eacked {
                        newest = Some((self.snd_una + i, s));
                    }
                }
            }
            self.snd_una = seg.ack + 1;
        }
        if seg.flags.eack() && self.cfg.eack_honour {
            for e in seg.eacks.iter() {
                // Only numbers in [SND.UNA, SND.NXT) release anything (A.7.3 step 4).
                if lt(e, self.snd_una) || !lt(e, self.snd_nxt) {
                    continue;
                }
                let i = (e - self.snd_una) as usize;
                if let Some(s) = self.out.get_mut(i) {
                    if !s.eacked {
                        s.eacked = true;
                        s.resend = false;
                        if newest.is_none_or(|(n, _)| lt(n, e)) {
                            newest = Some((e, *s));
                        }
                    }
                }
            }
        }
        let Some((seq, s)) = newest else { return };
        let in_order = self.highest_acked.is_none_or(|h| lt(h, seq));
        if in_order {
            self.highest_acked = Some(seq);
        }
        let take = match self.cfg.rtt_sampling {
            RttSampling::Karn => s.tx == 1,
            RttSampling::Every => true,
            RttSampling::DiscardOutOfOrder => in_order,
        };
        let rtt = now.saturating_since(s.first_sent);
        if take {
            self.rtt_sample(now, rtt);
        } else {
            self.stats.RttSamplesDiscarded += 1;
            self.log_rtt(now, rtt, false);
        }
    }

    /// A.7.3 step 5 and 6: an acceptable data segment or NUL.
    fn receive(&mut self, seg: &RdpSegment) {
        let off = (seg.seq - (self.rcv_cur + 1)) as usize;
        if self.held.len() <= off {
            self.held.resize(off + 1, None);
        }
        if self.held[off].is_some() {
            if seg.data_len > 0 {
                self.stats.DupSegsIn += 1;
            }
            return;
        }
        let sequenced = self.cfg.sequenced;
        if !sequenced && seg.data_len > 0 {
            // Arrival order (SDM = 0): deliver now, still tracked for ACK, EACK and duplicates.
            self.deliver(seg.data_len);
        }
        self.held[off] = Some((seg.data_len, seg.flags.nul()));
        // RCV.CUR advances over every contiguous segment.
        while let Some(Some((len, nul))) = self.held.front().copied() {
            self.held.pop_front();
            self.rcv_cur += 1;
            if sequenced && !nul && len > 0 {
                self.deliver(len);
            }
        }
    }

    fn deliver(&mut self, len: u32) {
        self.readable += u64::from(len);
        self.stats.MessagesDelivered += 1;
    }

    /// After a close request, the RST goes once everything queued is sent and acknowledged.
    /// RFC 908 §3.3: RST(seq = SND.NXT), then CLOSE-WAIT from the moment it is sent.
    fn try_close(&mut self) {
        if self.close_requested && self.state == State::Open && self.queue.is_empty() && self.out.is_empty() {
            self.rst_due = Some(self.seg(RdpFlags::RST, self.snd_nxt));
            self.state = State::CloseWait;
            self.close_wait_on_rst = true;
            self.syn_deadline = None;
            self.acks_owed = 0;
        }
    }

    /// Statistics as of now.
    pub fn stats(&self) -> RdpStats {
        let mut s = self.stats.clone();
        s.SmoothedRTT = self.rtt.srtt().map_or(0.0, ms);
        s.CurRTO = ms(self.rto());
        s
    }

    /// Every RTT measurement so far, taken or discarded (empty unless `record_rtt_samples` is set).
    pub fn rtt_log(&self) -> &[RttRecord] {
        &self.rtt_log
    }

    /// Bytes queued by the application and not yet sent.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
}
