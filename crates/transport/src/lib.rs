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
pub trait Segment: Clone {
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
    /// The last [`Transport::poll_transmit`] had a segment ready but the interface was full.
    fn stalled(&self) -> bool;
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
    /// Free room in the send buffer, bytes.
    fn send_buffer_free(&self) -> u64;
    /// Bytes the application can read now.
    fn readable(&self) -> u64;
    /// Reads up to `max` bytes; returns how many were read.
    fn recv(&mut self, max: u64) -> u64;
    /// Closes the sending direction (after queued data).
    fn close(&mut self);
    /// The peer closed and everything before its close was read.
    fn is_eof(&self) -> bool;
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
