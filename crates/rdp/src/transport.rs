//! RDP as a [`Transport`]: what the engine drives.

use std::sync::Arc;

use tcplab_transport::{AcceptError, Endpoint, Segment, Transport, TxRoom};
use tcplab_units::Instant;
use tcplab_wire::RdpSegment;

use crate::{RdpConfig, RdpConnection, RdpStats, State};

impl Transport for RdpConnection {
    type Config = RdpConfig;
    type Segment = RdpSegment;
    type Stats = RdpStats;
    const PROTOCOL: &'static str = "rdp";

    fn connect(cfg: Arc<RdpConfig>, ep: Endpoint) -> Self {
        RdpConnection::connect(cfg, ep.local_port, ep.remote_port, ep.iss)
    }

    /// A listener's child: a connection in LISTEN that the SYN moves to SYN-RCVD (RFC 908 §3.5).
    fn accept(cfg: Arc<RdpConfig>, ep: Endpoint, seg: &RdpSegment) -> Result<Self, AcceptError> {
        if !seg.opens_connection() || seg.flags.rst() {
            return Err(AcceptError::NotARequest);
        }
        Ok(RdpConnection::listen(cfg, ep.local_port, ep.iss))
    }

    #[inline]
    fn on_segment(&mut self, now: Instant, seg: &RdpSegment) {
        RdpConnection::on_segment(self, now, seg)
    }
    #[inline]
    fn poll_transmit(&mut self, now: Instant, room: TxRoom) -> Option<RdpSegment> {
        RdpConnection::poll_transmit(self, now, room)
    }
    #[inline]
    fn may_send_before_app(&self) -> bool {
        RdpConnection::has_output_besides_ack(self)
    }
    #[inline]
    fn poll_transmit_before_app(&mut self, now: Instant, room: TxRoom) -> Option<RdpSegment> {
        RdpConnection::poll_transmit_before_app(self, now, room)
    }
    #[inline]
    fn stalled(&self) -> bool {
        RdpConnection::stalled(self)
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Instant> {
        RdpConnection::poll_timeout(self)
    }
    #[inline]
    fn on_timeout(&mut self, now: Instant) {
        RdpConnection::on_timeout(self, now)
    }
    #[inline]
    fn is_established(&self) -> bool {
        RdpConnection::is_established(self)
    }
    /// CLOSE-WAIT or CLOSED: nothing more passes either way (RFC 908 §3.3).
    fn is_finished(&self) -> bool {
        matches!(self.state(), State::Closed | State::CloseWait)
    }
    fn is_closed(&self) -> bool {
        self.state() == State::Closed
    }
    fn state_name(&self) -> String {
        self.state().to_string()
    }
    /// The statistics, with the RTT log when `record_rtt_samples` is set (the engine asks once, at the end).
    fn stats(&self, _now: Instant) -> RdpStats {
        let mut s = RdpConnection::stats(self);
        s.rtt_log = self.rtt_log().to_vec();
        s
    }
    fn send(&mut self, bytes: u64) -> u64 {
        RdpConnection::send(self, bytes)
    }
    fn send_buffer_free(&self) -> u64 {
        RdpConnection::send_buffer_free(self)
    }
    fn send_room(&self, bytes: u64) -> u64 {
        RdpConnection::send_room(self, bytes)
    }
    fn unsent_bytes(&self) -> u64 {
        RdpConnection::queued_bytes(self)
    }
    fn readable(&self) -> u64 {
        RdpConnection::readable(self)
    }
    fn recv(&mut self, max: u64) -> u64 {
        RdpConnection::recv(self, max)
    }
    fn close(&mut self) {
        RdpConnection::close(self)
    }
    fn is_eof(&self) -> bool {
        RdpConnection::is_eof(self)
    }
}
