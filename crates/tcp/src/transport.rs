//! TCP as a [`Transport`]: what the engine drives. The socket calls are the connection's own.

use std::sync::Arc;

use tcplab_transport::{AcceptError, Endpoint, Segment, Stats, Transport, TxRoom};
use tcplab_units::Instant;
use tcplab_wire::TcpSegment;

use crate::{Connection, Estats, State, TcpConfig};

impl Stats for Estats {
    fn segs_retrans(&self) -> u64 {
        self.SegsRetrans
    }
}

impl Transport for Connection {
    type Config = TcpConfig;
    type Segment = TcpSegment;
    type Stats = Estats;
    const PROTOCOL: &'static str = "tcp";

    fn connect(cfg: Arc<TcpConfig>, ep: Endpoint) -> Self {
        let mut c = Connection::connect(cfg, ep.local_port, ep.remote_port, ep.iss);
        c.set_random_seed(ep.random_seed);
        c
    }

    /// A listening socket's child: a connection in LISTEN that the SYN moves to SYN-RECEIVED.
    fn accept(cfg: Arc<TcpConfig>, ep: Endpoint, seg: &TcpSegment) -> Result<Self, AcceptError> {
        if !seg.opens_connection() || seg.flags.rst() {
            return Err(AcceptError::NotARequest);
        }
        let mut c = Connection::listen(cfg, ep.local_port, ep.iss);
        c.set_random_seed(ep.random_seed);
        Ok(c)
    }

    #[inline]
    fn on_segment(&mut self, now: Instant, seg: &TcpSegment) {
        Connection::on_segment(self, now, seg)
    }
    // The calls the engine makes on every packet are always inlined: its arrival path (`World::on_arrival`)
    // carries them all and sits at LLVM's inlining threshold, where a few instructions anywhere took one or
    // another of these out of line as a call (issue 25, eleventh round).
    #[inline(always)]
    fn poll_transmit(&mut self, now: Instant, room: TxRoom) -> Option<TcpSegment> {
        Connection::poll_transmit(self, now, room)
    }
    #[inline(always)]
    fn may_send_before_app(&self) -> bool {
        !self.only_an_ack_could_go()
    }
    #[inline(always)]
    fn poll_transmit_before_app(&mut self, now: Instant, room: TxRoom) -> Option<TcpSegment> {
        Connection::poll_transmit_before_app(self, now, room)
    }
    #[inline(always)]
    fn before_app_done(&self) -> bool {
        Connection::before_app_done(self)
    }
    #[inline(always)]
    fn stalled(&self) -> bool {
        Connection::stalled(self)
    }
    #[inline(always)]
    fn on_departure(&mut self, now: Instant, departs: Instant, bytes: u32) {
        Connection::on_departure(self, now, departs, bytes);
    }
    #[inline(always)]
    fn poll_timeout(&self) -> Option<Instant> {
        Connection::poll_timeout(self)
    }
    #[inline]
    fn on_timeout(&mut self, now: Instant) {
        Connection::on_timeout(self, now)
    }
    #[inline(always)]
    fn is_established(&self) -> bool {
        Connection::is_established(self)
    }
    #[inline(always)]
    fn is_finished(&self) -> bool {
        matches!(self.state(), State::Closed | State::TimeWait)
    }
    #[inline(always)]
    fn is_closed(&self) -> bool {
        self.state() == State::Closed
    }
    fn state_name(&self) -> String {
        self.state().to_string()
    }
    fn stats(&self, now: Instant) -> Estats {
        self.estats_at(now)
    }
    // Always inlined: an application calls it per segment, and the call costs as much as the work.
    #[inline(always)]
    fn send(&mut self, bytes: u64) -> u64 {
        Connection::send(self, bytes)
    }
    #[inline]
    fn send_buffer_free(&self) -> u64 {
        Connection::send_buffer_free(self)
    }
    #[inline]
    fn send_room(&self, bytes: u64) -> u64 {
        Connection::send_room(self, bytes)
    }
    #[inline(always)]
    fn unsent_bytes(&self) -> u64 {
        Connection::unsent_bytes(self)
    }
    #[inline(always)]
    fn readable(&self) -> u64 {
        Connection::readable(self)
    }
    // Always inlined: an application calls it per segment, and the call costs as much as the work.
    #[inline(always)]
    fn recv(&mut self, max: u64) -> u64 {
        Connection::recv(self, max)
    }
    #[inline]
    fn close(&mut self) {
        Connection::close(self)
    }
    #[inline(always)]
    fn is_eof(&self) -> bool {
        Connection::is_eof(self)
    }
    #[inline(always)]
    fn has_input(&self) -> bool {
        Connection::has_input(self)
    }
}
