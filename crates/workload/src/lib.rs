//! netperf-style tests as sans-IO state machines. A test's two ends drive a [`Socket`]; the engine calls
//! them whenever the socket may have become writable or readable, and at the test's end.
//!
//! So far: the bulk transfer of TCP_STREAM (client sends) and TCP_MAERTS (server sends). netperf's
//! `-m` is the send call size (`message`), `-s`/`-S` the socket buffers (set on the transport).

/// What a test needs from a transport endpoint, in bytes (payload is counted, never materialized).
pub trait Socket {
    /// Queues up to `bytes` for sending; returns how many were taken.
    fn send(&mut self, bytes: u64) -> u64;
    /// Reads up to `max` bytes; returns how many were read.
    fn recv(&mut self, max: u64) -> u64;
    /// Closes the sending direction (FIN after queued data).
    fn close(&mut self);
    /// The peer closed and everything before its FIN was read.
    fn is_eof(&self) -> bool;
    /// The connection is established (netperf starts its clock when `connect` returns).
    fn is_established(&self) -> bool;
}

impl Socket for tcplab_tcp::Connection {
    fn send(&mut self, bytes: u64) -> u64 {
        tcplab_tcp::Connection::send(self, bytes)
    }
    fn recv(&mut self, max: u64) -> u64 {
        tcplab_tcp::Connection::recv(self, max)
    }
    fn close(&mut self) {
        tcplab_tcp::Connection::close(self)
    }
    fn is_eof(&self) -> bool {
        tcplab_tcp::Connection::is_eof(self)
    }
    fn is_established(&self) -> bool {
        tcplab_tcp::Connection::is_established(self)
    }
}

/// The sending end of a bulk transfer: writes `message`-byte calls back to back until stopped, as
/// netperf's send loop does with a blocking socket (a call that does not fit waits for room).
#[derive(Debug, Clone)]
pub struct BulkSender {
    message: u64,
    /// Bytes of the current send call not yet taken by the socket.
    left_in_call: u64,
    stopped: bool,
    /// Completed send calls.
    pub calls: u64,
    pub bytes_written: u64,
}

impl BulkSender {
    pub fn new(message: u64) -> Self {
        assert!(message > 0, "a send call of zero bytes");
        BulkSender { message, left_in_call: 0, stopped: false, calls: 0, bytes_written: 0 }
    }

    /// The socket may have room: keep writing.
    pub fn on_writable(&mut self, sock: &mut impl Socket) {
        if self.stopped || !sock.is_established() {
            return;
        }
        loop {
            if self.left_in_call == 0 {
                self.left_in_call = self.message;
            }
            let n = sock.send(self.left_in_call);
            self.left_in_call -= n;
            self.bytes_written += n;
            if self.left_in_call == 0 {
                self.calls += 1;
            }
            if n == 0 {
                break;
            }
        }
    }

    /// The test duration is over: stop writing and close, as netperf does.
    pub fn stop(&mut self, sock: &mut impl Socket) {
        if !self.stopped {
            self.stopped = true;
            sock.close();
        }
    }
}

/// The receiving end of a bulk transfer: reads everything as it arrives; closes after the peer's FIN.
#[derive(Debug, Clone, Default)]
pub struct BulkReceiver {
    pub bytes_read: u64,
    closed: bool,
}

impl BulkReceiver {
    pub fn on_readable(&mut self, sock: &mut impl Socket) {
        self.bytes_read += sock.recv(u64::MAX);
        if !self.closed && sock.is_eof() {
            self.closed = true;
            sock.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket with a fixed-size buffer that a test drains by hand.
    struct Fake {
        room: u64,
        readable: u64,
        closed: bool,
        eof: bool,
    }
    impl Socket for Fake {
        fn send(&mut self, b: u64) -> u64 {
            let n = b.min(self.room);
            self.room -= n;
            n
        }
        fn recv(&mut self, max: u64) -> u64 {
            let n = self.readable.min(max);
            self.readable -= n;
            n
        }
        fn close(&mut self) {
            self.closed = true;
        }
        fn is_eof(&self) -> bool {
            self.eof
        }
        fn is_established(&self) -> bool {
            true
        }
    }

    #[test]
    fn sender_fills_the_buffer_in_message_calls_and_resumes_mid_call() {
        let mut s = BulkSender::new(1000);
        let mut sock = Fake { room: 2500, readable: 0, closed: false, eof: false };
        s.on_writable(&mut sock);
        assert_eq!((s.bytes_written, s.calls), (2500, 2));
        sock.room = 700;
        s.on_writable(&mut sock);
        assert_eq!((s.bytes_written, s.calls), (3200, 3)); // the half call completes, then 200 of the next
        s.stop(&mut sock);
        assert!(sock.closed);
        sock.room = 10_000;
        s.on_writable(&mut sock);
        assert_eq!(s.bytes_written, 3200, "no writes after stop");
    }

    #[test]
    fn receiver_reads_all_and_closes_on_eof() {
        let mut r = BulkReceiver::default();
        let mut sock = Fake { room: 0, readable: 5000, closed: false, eof: false };
        r.on_readable(&mut sock);
        assert_eq!(r.bytes_read, 5000);
        assert!(!sock.closed);
        sock.eof = true;
        r.on_readable(&mut sock);
        assert!(sock.closed);
    }
}
