//! Flow control: the receive window limits the sender (RFC 9293 §3.8.6), a zero window is probed by the
//! persist timer with exponential backoff (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17), and a window update
//! after the application reads restarts the transfer (RFC 1122 §4.2.3.3).

use super::pair::{assert_log, log_since, Pair, Side};
use super::*;

/// A server with an 11584-byte (8·1448) receive buffer whose application does not read. One-way delay
/// 10 ms; the client writes 20 segments' worth at t=100. The server offers window scale 0 (the buffer
/// fits 16 bits) and a SYN-ACK window of 11584; its right edge stays at 10001 + 11584 = 21585 while
/// nothing is read, so each ACK's window is 21585 − ack.
///
/// Worked exchange (IW 3 segments, ABC L1 slow start, ACK every 2 full segments):
/// t=100 segs 10001, 11449, 12897 → t=110 ACK 12897 win 8688 → t=120 cwnd 5828: 14345, 15793, 17241
/// → t=130 ACK 15793 win 5792, ACK 18689 win 2896 → t=140: 18689, 20137 (window edge 21585 reached)
/// → t=150 ACK 21585 **win 0**, arriving at 160: everything acknowledged, persist timer at 160 + RTO
/// (1 s). Probes (one byte below SND.UNA: seq 21584, no data, the Linux form; the receiver must answer
/// an unacceptable segment with an ACK, RFC 9293 §3.10.7.4) at 1160, then backed off ×2: 3160, 7160.
/// Each is answered with window 0.
/// t=8160: the application reads all 11584 bytes; the window went from 0 to a full buffer (more than
/// one MSS, RFC 1122 §4.2.3.3): window update at once, 11584. The client resumes at 8170 with 21585.
#[test]
fn test_established_zero_window_probe() {
    let server_cfg = TcpConfig { recv_buffer: cfg_bytes(8 * 1448), ..cfg() };
    let mut p = Pair::new(cfg(), server_cfg, dur_ms(10));
    p.auto_read[1] = false;
    p.establish();
    p.run_until(at(100));
    p.to_write[0] = 20 * 1448;
    p.run_until(at(8159));

    // The sender stopped exactly at the window's right edge: 8 segments, 11584 bytes.
    let data: Vec<_> = p.sent_by(Side::Client).filter(|s| s.seg.payload_len > 0).map(|s| s.seg).collect();
    assert_eq!(data.len(), 8);
    assert_eq!(data.last().map(|s| s.seq + s.payload_len), Some(SeqNumber(21_585)));
    let server_acks: Vec<(u32, u16)> =
        p.sent_by(Side::Server).filter(|s| s.at > at(100)).map(|s| (s.seg.ack.0, s.seg.window)).collect();
    assert_eq!(&server_acks[..4], &[(12_897, 8688), (15_793, 5792), (18_689, 2896), (21_585, 0)]);

    let zwp = |t: u64, echo: u32| out(21_584, 50_001, ACK, 32_768, 0).ts(ts(t), echo);
    let zero = |t: u64| inp(50_001, 21_585, ACK, 0, 0).ts(ts(t), 141);
    assert_log(
        &log_since(&p, at(150)),
        &[
            (150, Side::Server, zero(150)),
            (1160, Side::Client, zwp(1160, 151)),
            (1170, Side::Server, zero(1170)),
            (3160, Side::Client, zwp(3160, 1171)),
            (3170, Side::Server, zero(3170)),
            (7160, Side::Client, zwp(7160, 3171)),
            (7170, Side::Server, zero(7170)),
        ],
    );
    assert_eq!(p.client.poll_timeout(), Some(at(15_160)), "next probe after 8 s");
    assert_eq!(p.client.estats().CurRTO, 1000.0);

    // The application reads: window update, and the sender resumes.
    p.run_until(at(8160));
    p.auto_read[1] = true;
    p.run_until(at(8170));
    let after = log_since(&p, at(8160));
    assert_eq!(after[0], (at(8160), Side::Server, inp(50_001, 21_585, ACK, 11_584, 0).ts(8161, 141)));
    assert_eq!(after[1], (at(8170), Side::Client, out(21_585, 50_001, ACK, 32_768, 1448).ts(8171, 8161)));
    assert_ne!(p.client.poll_timeout(), Some(at(15_160)), "persist timer cancelled");

    p.run_to_idle();
    assert_eq!(p.read[1], 20 * 1448);
    assert_eq!(p.client.estats().ThruOctetsAcked, 20 * 1448);
    let (c, s) = (p.client.estats(), p.server.estats());
    assert_eq!((c.ZeroRwinRcvd, s.ZeroRwinSent), (1, 1));
    assert_eq!((c.SegsRetrans, c.Timeouts), (0, 0), "probes are not retransmissions");
}

/// Scripted: the peer's window closes to zero with everything acknowledged; the sender holds its data
/// and probes after RTO = 1 s; a window update (same ACK, window 65532) cancels the persist timer
/// and releases the data at once.
#[test]
fn test_established_recv_zero_window() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(1000), 1000);
    recv!(c, time 20, [out(10_001, 50_001, PSH_ACK, 32_768, 1000).ts(21, pts(10))]);
    assert_eq!(c.send(1000), 1000);
    send!(c, time 30, inp(50_001, 11_001, ACK, 0, 0).ts(pts(30), 21));
    recv_nothing!(c, time 30);
    assert_eq!(c.poll_timeout(), Some(at(1_030)), "persist timer: RTO");
    fire(&mut c, 1_030);
    recv!(c, time 1_030, [out(11_000, 50_001, ACK, 32_768, 0).ts(1_031, pts(30))]);
    assert_eq!(c.poll_timeout(), Some(at(3_030)), "backed off ×2");
    send!(c, time 1_040, inp(50_001, 11_001, ACK, REMOTE_WINDOW, 0).ts(pts(1_040), 1_031));
    recv!(c, time 1_040, [out(11_001, 50_001, PSH_ACK, 32_768, 1000).ts(1_041, pts(1_040))]);
    assert_eq!(c.poll_timeout(), Some(at(2_040)), "retransmission timer, not the persist timer");
}

/// RFC 5681 §4.1: "a TCP SHOULD set cwnd to no more than RW before beginning transmission if the TCP
/// has not sent data in an interval exceeding the retransmission timeout", RW = min(IW, cwnd).
/// Three segments at t=20, all acknowledged at 30 (cwnd 4380 + 1448 = 5828). Idle 5 s (RTO 1 s), then
/// ten segments queued: cwnd must restart at RW = 4380, so three segments go, not four.
#[test]
fn test_established_restart_after_idle() {
    let mut c = client_established(cfg());
    assert_eq!(c.send(3 * 1448), 3 * 1448);
    let data =
        |seq: u32, flags: TcpFlags, now: u64, echo: u64| out(seq, 50_001, flags, 32_768, 1448).ts(ts(now), pts(echo));
    recv!(c, time 20, [data(10_001, ACK, 20, 10), data(11_449, ACK, 20, 10), data(12_897, PSH_ACK, 20, 10)]);
    send!(c, time 30, peer(50_001, 14_345, ACK, 0, 30, 21));
    assert_eq!(c.cwnd(), 5828);
    assert_eq!(c.send(10 * 1448), 10 * 1448);
    recv!(c, time 5_030, [
        data(14_345, ACK, 5_030, 30),
        data(15_793, ACK, 5_030, 30),
        data(17_241, ACK, 5_030, 30),
    ]);
}
