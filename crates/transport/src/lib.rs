//! What an engine needs from a sans-IO transport endpoint, whatever the protocol.
//!
//! A [`Transport`] is one end of one connection (a TCP connection, an RDP connection). It never reads a
//! clock, touches I/O or draws from a global random generator: time comes in as `now`, segments come in
//! through [`Transport::on_segment`] and go out through [`Transport::poll_transmit`], and
//! [`Transport::poll_timeout`] says when to call [`Transport::on_timeout`]. Its segments carry header
//! fields and payload *lengths*, never payload bytes. The application side (send, receive, close) is the
//! socket interface a workload drives.
//!
//! The simulator is generic over `Transport`, so the per-packet path is monomorphized: no virtual call and
//! no allocation per packet (the engine's allocation test holds it to that).

use serde::Serialize;
use tcplab_units::Instant;

/// Whether the host's interface can take a segment now (the NIC transmit queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRoom {
    Free,
    /// The transmit queue is full: anything the endpoint would send counts as a stall and waits.
    Full,
}

/// A segment as an engine moves it: what a link needs (its IP length) and what a host needs to deliver it
/// (the ports it is addressed from and to).
pub trait Segment: Clone + 'static {
    /// Bytes of the IP datagram: IP and transport headers, options, payload.
    fn ip_len(&self) -> u32;
    /// Payload bytes carried (0 for a pure acknowledgement or control segment).
    fn payload_len(&self) -> u32;
    /// Sending port.
    fn src_port(&self) -> u16;
    /// Receiving port.
    fn dst_port(&self) -> u16;
    /// A segment that asks to open a connection (TCP: SYN without ACK), which a listener accepts.
    fn opens_connection(&self) -> bool;
    /// The IP header says ECN-capable transport (ECT(0) or ECT(1), RFC 3168 §5): a queue that signals
    /// congestion may mark the packet instead of dropping it. Default: never (a transport without ECN).
    fn ect(&self) -> bool {
        false
    }
    /// The IP header says Congestion Experienced (RFC 3168 §5): a queue on the way marked it. A second
    /// marking queue reads it as ECN-capable. Default: never.
    fn ce(&self) -> bool {
        false
    }
    /// A queue marked the packet Congestion Experienced (RFC 3168 §5) on its way; the receiving endpoint
    /// reads the mark. Returns false, changing nothing, when the packet is not ECN-capable (the queue
    /// drops it instead). Default: not ECN-capable.
    fn mark_ce(&mut self) -> bool {
        false
    }
    /// Receive coalescing (a NIC's GRO): whether `next`, arriving right after `prev` in a batch that `first`
    /// began, joins them into one packet for the receiving stack. Default: never (GRO knows only TCP).
    fn coalesces(first: &Self, prev: &Self, next: &Self) -> bool {
        let _ = (first, prev, next);
        false
    }
}

/// Statistics of one endpoint: serialized as its RFC 4898-style variables, plus the few figures every
/// transport has and a test reports across protocols.
pub trait Stats: Serialize + Clone {
    /// Segments sent that carried data sent before (RFC 4898 `SegsRetrans`).
    fn segs_retrans(&self) -> u64;
}

/// Why a transport could not take a connection request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AcceptError {
    /// The segment does not open a connection (not a SYN, or a SYN with ACK).
    NotARequest,
}

/// What an endpoint is given when it is created: its ports, its initial send sequence number and the seed
/// of its own random stream (both drawn by the engine from the run seed and the endpoint's id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub local_port: u16,
    pub remote_port: u16,
    pub iss: u32,
    pub random_seed: u64,
}

/// One end of one connection of a sans-IO transport protocol.
pub trait Transport: Sized {
    /// The per-host configuration (shared by all of a host's endpoints).
    type Config;
    type Segment: Segment;
    type Stats: Stats;

    /// The protocol's name in results (`"tcp"`, `"rdp"`).
    const PROTOCOL: &'static str;

    /// An endpoint that opens a connection (active open).
    fn connect(cfg: std::sync::Arc<Self::Config>, ep: Endpoint) -> Self;
    /// An endpoint created by a listener for a connection request `seg` (passive open); `seg` has not been
    /// processed yet: the engine passes it to [`Transport::on_segment`] next.
    fn accept(cfg: std::sync::Arc<Self::Config>, ep: Endpoint, seg: &Self::Segment) -> Result<Self, AcceptError>;

    /// Processes one segment addressed to this endpoint.
    fn on_segment(&mut self, now: Instant, seg: &Self::Segment);
    /// The next segment to send, if any; `room` says whether the interface can take one.
    fn poll_transmit(&mut self, now: Instant, room: TxRoom) -> Option<Self::Segment>;
    /// Like [`Transport::poll_transmit`], called after an event (a segment, a timer) and before the
    /// application hears of it: what the event itself lets the endpoint send — data an acknowledgement
    /// released, retransmissions, control segments — but no pure acknowledgement. A stack finishes its
    /// input processing, output included, before the reader wakes (BSD's `tcp_input` ends in `tcp_output`,
    /// Linux's `tcp_rcv_established` in `tcp_data_snd_check`), so what the application writes in reply
    /// cannot join data that was already free to go. An acknowledgement waits for
    /// [`Transport::poll_transmit`] after the application ran, at the same instant: it then carries the
    /// window the application's read opens and rides on what it writes (Linux defers such an ACK to
    /// `tcp_recvmsg`; in BSD it is the window update after the read).
    fn poll_transmit_before_app(&mut self, now: Instant, room: TxRoom) -> Option<Self::Segment>;
    /// False when [`Transport::poll_transmit_before_app`] would certainly find nothing (a cheap test the
    /// engine makes first: most events at a receiver leave only an acknowledgement to send).
    fn may_send_before_app(&self) -> bool {
        true
    }
    /// After [`Transport::poll_transmit_before_app`] returned a segment: true when the next call at this
    /// instant would certainly find nothing, the endpoint having done that call's work with the segment
    /// (TCP: the segment left cwnd or the peer's window closed behind it), so the engine need not make
    /// it. A bulk sender's every ACK.
    fn before_app_done(&self) -> bool {
        false
    }
    /// The last [`Transport::poll_transmit`] had a segment ready but the interface was full.
    fn stalled(&self) -> bool;
    /// The segment the last [`Transport::poll_transmit`] returned, `bytes` long on the wire, was queued at
    /// the host's interface at `now` and leaves it (its transmit completion) at `departs`. TCP Small
    /// Queues counts the host's queue with it. Engines that cannot tell may not call it.
    #[inline]
    fn on_departure(&mut self, _now: Instant, _departs: Instant, _bytes: u32) {}
    /// The earliest instant at which [`Transport::on_timeout`] has work to do.
    fn poll_timeout(&self) -> Option<Instant>;
    /// Runs every timer due at `now`.
    fn on_timeout(&mut self, now: Instant);

    /// The connection is open for data both ways.
    fn is_established(&self) -> bool;
    /// The application has nothing more to do with this endpoint (TCP: CLOSED or TIME-WAIT).
    fn is_finished(&self) -> bool;
    /// The endpoint can be forgotten: its ports may be reused (TCP: CLOSED, after TIME-WAIT).
    fn is_closed(&self) -> bool;
    /// The state's name as the protocol's RFC spells it (`"ESTABLISHED"`).
    fn state_name(&self) -> String;
    /// Statistics as of `now`.
    fn stats(&self, now: Instant) -> Self::Stats;

    // The socket interface, in bytes (payload is counted, never materialized).

    /// Queues up to `bytes` for sending; returns how many were taken.
    fn send(&mut self, bytes: u64) -> u64;
    /// How many of `bytes` [`Transport::send`] would take now; changes nothing. An engine that makes a send
    /// call take time (a CPU model: the copy into the send buffer completes later) sizes the call with it.
    fn send_room(&self, bytes: u64) -> u64;
    /// Free room in the send buffer, bytes.
    fn send_buffer_free(&self) -> u64;
    /// Bytes the application wrote that the endpoint has not sent yet (TCP: from SND.NXT to the end of
    /// the send buffer). The engine pushes a send call's data out at once only when nothing was unsent
    /// before the call: otherwise the call's bytes join data whose output the endpoint already decided,
    /// and the service after the application returns sends them at the same instant. Zero (the default)
    /// makes every call push.
    fn unsent_bytes(&self) -> u64 {
        0
    }
    /// Bytes the application can read now.
    fn readable(&self) -> u64;
    /// Reads up to `max` bytes; returns how many were read.
    fn recv(&mut self, max: u64) -> u64;
    /// Closes the sending direction (after queued data).
    fn close(&mut self);
    /// The peer closed and everything before its close was read.
    fn is_eof(&self) -> bool;
    /// Bytes to read or the peer's close to notice: `readable() > 0 || is_eof()`, which a transport may
    /// answer in fewer steps (the engine asks before every read event).
    fn has_input(&self) -> bool {
        self.readable() > 0 || self.is_eof()
    }
}

impl Segment for tcplab_wire::TcpSegment {
    fn ip_len(&self) -> u32 {
        tcplab_wire::TcpSegment::ip_len(self)
    }
    fn payload_len(&self) -> u32 {
        self.payload_len
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    fn opens_connection(&self) -> bool {
        self.flags.syn() && !self.flags.ack()
    }
    fn ect(&self) -> bool {
        self.ecn.is_ect()
    }
    fn ce(&self) -> bool {
        self.ecn.is_ce()
    }
    fn mark_ce(&mut self) -> bool {
        tcplab_wire::TcpSegment::mark_ce(self)
    }
    /// Linux `tcp_gro_receive`: in-sequence data of one flow whose headers match word for word (ACK
    /// number, flags but PSH and FIN, window, options: so the timestamps too), each no longer than the
    /// first; a short segment, PSH or FIN ends the batch after joining it, CWR never joins; pure ACKs and
    /// SYN, RST or URG segments never coalesce; nor do datagrams whose TOS octets differ (`inet_gro_receive`),
    /// so a CE mark is never merged away. (The engine bounds a batch's size.)
    fn coalesces(first: &Self, prev: &Self, next: &Self) -> bool {
        use tcplab_wire::TcpFlags;
        let ends = TcpFlags::FIN.union(TcpFlags::PSH);
        let never = TcpFlags::SYN.union(TcpFlags::RST).union(TcpFlags::URG);
        let masked = !(ends.0 | TcpFlags::CWR.0);
        next.payload_len > 0
            && prev.payload_len == first.payload_len
            && next.payload_len <= first.payload_len
            && prev.flags.0 & (ends.0 | never.0) == 0
            && next.flags.0 & (never.0 | TcpFlags::CWR.0) == 0
            && prev.flags.0 & masked == next.flags.0 & masked
            && next.src_port == prev.src_port
            && next.dst_port == prev.dst_port
            && next.seq == prev.seq + prev.payload_len
            && next.ack == prev.ack
            && next.window == prev.window
            && next.options == prev.options
            && next.ecn == prev.ecn
    }
}

impl Segment for tcplab_wire::RdpSegment {
    fn ip_len(&self) -> u32 {
        tcplab_wire::RdpSegment::ip_len(self)
    }
    fn payload_len(&self) -> u32 {
        self.data_len
    }
    fn src_port(&self) -> u16 {
        self.src_port
    }
    fn dst_port(&self) -> u16 {
        self.dst_port
    }
    /// RFC 908 §3.5: a SYN without ACK asks for a connection (LISTEN takes it to SYN-RCVD).
    fn opens_connection(&self) -> bool {
        self.flags.syn() && !self.flags.ack()
    }
}

#[cfg(test)]
mod tests {
    use super::Segment;
    use tcplab_wire::{EcnCodepoint, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

    /// A full-sized data segment at `seq` (payload 1448, timestamps 7/3, ACK 1000, window 500).
    fn data(seq: u32) -> TcpSegment {
        TcpSegment {
            src_port: 40000,
            dst_port: 5001,
            seq: SeqNumber(seq),
            ack: SeqNumber(1000),
            flags: TcpFlags::ACK,
            window: 500,
            options: TcpOptions { timestamps: Some(Timestamps { tsval: 7, tsecr: 3 }), ..TcpOptions::default() },
            payload_len: 1448,
            ecn: EcnCodepoint::Ect0,
        }
    }

    fn joins(prev: &TcpSegment, next: &TcpSegment) -> bool {
        TcpSegment::coalesces(&data(0), prev, next)
    }

    #[test]
    fn in_sequence_segments_with_identical_headers_coalesce() {
        assert!(joins(&data(0), &data(1448)));
        assert!(!joins(&data(0), &data(2896)), "a gap");
        assert!(!joins(&data(1448), &data(0)), "out of order");
        let short = TcpSegment { payload_len: 100, ..data(1448) };
        assert!(joins(&data(0), &short), "a shorter last segment joins");
        assert!(!joins(&short, &TcpSegment { seq: SeqNumber(1548), ..data(0) }), "and ends the batch");
        let longer = TcpSegment { payload_len: 1460, ..data(1448) };
        assert!(!joins(&data(0), &longer), "longer than the first");
    }

    #[test]
    fn any_header_difference_ends_the_batch() {
        let next = data(1448);
        let ts = TcpOptions { timestamps: Some(Timestamps { tsval: 8, tsecr: 3 }), ..next.options };
        for other in [
            TcpSegment { ack: SeqNumber(2000), ..next },
            TcpSegment { window: 501, ..next },
            TcpSegment { options: ts, ..next },
            TcpSegment { src_port: 40001, ..next },
            TcpSegment { flags: TcpFlags::ACK.union(TcpFlags::CWR), ..next },
            TcpSegment { flags: TcpFlags::ACK.union(TcpFlags::URG), ..next },
            TcpSegment { ecn: EcnCodepoint::Ce, ..next },
            TcpSegment { payload_len: 0, ..next },
        ] {
            assert!(!joins(&data(0), &other), "{other:?}");
        }
    }

    #[test]
    fn psh_and_fin_join_as_the_last_segment() {
        let pushed = TcpSegment { flags: TcpFlags::ACK.union(TcpFlags::PSH), ..data(1448) };
        let fin = TcpSegment { flags: TcpFlags::ACK.union(TcpFlags::FIN), ..data(1448) };
        assert!(joins(&data(0), &pushed));
        assert!(joins(&data(0), &fin));
        assert!(!joins(&pushed, &data(2896)));
        assert!(!joins(&fin, &data(2896)));
    }

    #[test]
    fn rdp_segments_never_coalesce() {
        let s = tcplab_wire::RdpSegment::default();
        assert!(!tcplab_wire::RdpSegment::coalesces(&s, &s, &s));
    }
}
