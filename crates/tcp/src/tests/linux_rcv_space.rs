//! How Linux starts its receive-side estimates (crates/packetdrill, issue 23): the peer's segment size
//! guessed at 536 bytes until a segment shows it (`tcp_initialize_rcv_mss`, `tcp_measure_rcv_mss`; the
//! Google corpus's `gro-mss-option`), and the window's growth ceiling (rcv_ssthresh) starting at the window
//! the handshake offered, one segment below the space (`tcp_init_buffer_space`).

use super::*;
use crate::config::AckPolicy;

/// Linux's default receive space (tcp_rmem[1] 131072: a 65536-byte space before any data is measured),
/// window scaling and growth as the personality has them, and the two rules on or off together.
fn space(on: bool) -> TcpConfig {
    TcpConfig {
        recv_buffer: ByteSize::new(65_536),
        recv_window_ratio: 1.25,
        grow_window: true,
        ack_policy: AckPolicy::Linux,
        ato_min: dur_ms(40),
        delayed_ack_timeout: dur_ms(200),
        initial_recv_window_whole_mss: true,
        rcv_mss_estimate_from_536: on,
        rcv_ssthresh_from_initial_window: on,
        ..cfg()
    }
}

/// A server that took the peer's SYN (MSS `peer_mss`, window scale 7, timestamps) and the handshake's
/// ACK at 10 ms.
fn server(cfg: TcpConfig, peer_mss: u16) -> Connection {
    let mut c = Connection::listen(cfg, LOCAL_PORT, LOCAL_ISS);
    send!(c, time 0, inp(REMOTE_ISS, 0, SYN, 32_792, 0).mss(peer_mss).wscale(7).sack_permitted().ts(pts(0), 0));
    assert_eq!(transmit_all(&mut c, at(0)).len(), 1, "the SYN-ACK");
    send!(c, time 10, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 0).ts(pts(10), ts(0)));
    assert_eq!(c.state(), State::Established);
    c
}

/// The estimate starts at min(MSS 1460, send MSS 1088, window / 2, 536) = 536, whatever the peer's
/// MSS option said; a GRO packet of 1000-byte segments sets it to 1000 (the peer's option said 1100:
/// `gro-mss-option` asserts `tcpi_rcv_mss == 1000`). Off, it starts at the agreed MSS and stays there
/// when smaller segments come.
#[test]
fn test_established_rcv_mss_starts_at_536_and_follows_the_segments() {
    let mut c = server(space(true), 1100);
    assert_eq!(c.tcp_info(at(10)).rcv_mss, 536);
    let data = inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 10_000).ts(pts(20), ts(10));
    c.on_segment_gro(at(20), &data, 1000);
    assert_eq!(c.tcp_info(at(20)).rcv_mss, 1000);

    let mut off = server(space(false), 1100);
    assert_eq!(off.tcp_info(at(10)).rcv_mss, 1088, "1100 less the timestamp option");
    off.on_segment_gro(at(20), &data, 1000);
    assert_eq!(off.tcp_info(at(20)).rcv_mss, 1088);
}

/// A segment larger than our MSS (a GRO packet without a gso_size) raises the estimate only to our MSS
/// (`tcp_measure_rcv_mss`: min(len, advmss)); a shorter one leaves it.
#[test]
fn test_established_rcv_mss_capped_at_our_mss() {
    let mut c = server(space(true), 1460);
    send!(c, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 4000).ts(pts(20), ts(10)));
    assert_eq!(c.tcp_info(at(20)).rcv_mss, 1460);
    send!(c, time 30, inp(REMOTE_ISS + 4001, LOCAL_ISS + 1, ACK, 320, 700).ts(pts(30), ts(10)));
    assert_eq!(c.tcp_info(at(30)).rcv_mss, 1460);
}

/// The SYN-ACK offers 65536 rounded down to 45 segments of 1448 = 65160; rcv_ssthresh starts there,
/// clamped one MSS below the space: 65536 − 1460 = 64076 (`tcp_init_buffer_space`). Off, it starts at
/// the space, 65536.
#[test]
fn test_established_rcv_ssthresh_starts_one_segment_below_the_space() {
    assert_eq!(server(space(true), 1460).tcp_info(at(10)).rcv_ssthresh, 64_076);
    assert_eq!(server(space(false), 1460).tcp_info(at(10)).rcv_ssthresh, 65_536);
    // A small SO_RCVBUF: 20000 offers 13 × 1448 = 18824, the clamp 18540 is below it.
    let small = TcpConfig { recv_buffer: ByteSize::new(20_000), ..space(true) };
    assert_eq!(server(small, 1460).tcp_info(at(10)).rcv_ssthresh, 18_540);
    // Never below two segments (4 KiB leaves 2636 after the reservation, less than 2 × 1460).
    let tiny = TcpConfig { recv_buffer: ByteSize::new(4096), ..space(true) };
    let c = server(tiny, 1460);
    assert_eq!(c.tcp_info(at(10)).rcv_ssthresh, 2 * 1448, "min(offered 2 × 1448, clamp 2920)");
}

/// A large SO_RCVBUF: since Linux 6.10 (378979e94e95) tp->rcv_wnd, and so rcv_ssthresh, start at the
/// whole space (16 MiB rounded down to whole 1448-byte segments, 16776528), clamped one MSS below the
/// buffer (16775756); only the SYN-ACK's unscaled field stays at 65535 or below. With the rule off it
/// starts at the buffer.
#[test]
fn test_established_large_buffer_rcv_ssthresh_is_not_held_to_64k() {
    for (on, want) in [(true, (16 << 20) - 1460), (false, 16 << 20)] {
        let big = TcpConfig { recv_buffer: ByteSize::new(16 << 20), ..space(on) };
        let mut c = Connection::listen(big, LOCAL_PORT, LOCAL_ISS);
        send!(c, time 0, inp(REMOTE_ISS, 0, SYN, 32_792, 0).mss(1460).wscale(7).sack_permitted().ts(pts(0), 0));
        let synack = transmit_all(&mut c, at(0));
        assert_eq!(synack[0].window, 65_535, "the SYN's field is unscaled");
        send!(c, time 10, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 0).ts(pts(10), ts(0)));
        assert_eq!(c.tcp_info(at(10)).rcv_ssthresh, want, "rule {on}");
    }
}

/// A connection that only sends keeps the window its SYN-ACK offered (no timestamps: 44 × 1460 =
/// 64240): rcv_ssthresh (64076) stays below it and the edge never moves left (Linux's
/// `tcp_select_window`: "never shrink"). With the 536 estimate alone (rcv_ssthresh at the space, 65536)
/// the edge moves by 1296 bytes, which the SWS rule lets through once the estimate is below it, and the
/// window reads 65536: so the two rules land together. Off, 1296 is less than a segment: 64240 stays.
#[test]
fn test_established_pure_sender_keeps_its_initial_window() {
    let estimate_alone = TcpConfig { rcv_ssthresh_from_initial_window: false, ..space(true) };
    for (cfg, want) in [(space(true), 64_240), (space(false), 64_240), (estimate_alone, 65_536)] {
        let mut c = Connection::listen(TcpConfig { timestamps: false, ..cfg }, LOCAL_PORT, LOCAL_ISS);
        send!(c, time 0, inp(REMOTE_ISS, 0, SYN, 32_792, 0).mss(1460).wscale(7).sack_permitted());
        assert_eq!(transmit_all(&mut c, at(0))[0].window, 64_240, "the SYN-ACK");
        send!(c, time 10, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 0));
        let shift = c.tcp_info(at(10)).rcv_wscale as u32;
        c.send(2 * 1460);
        let sent = transmit_all(&mut c, at(10));
        assert_eq!(sent.len(), 2);
        for s in &sent {
            assert_eq!((s.window as u32) << shift, (want as u32).div_ceil(1 << shift) << shift);
        }
    }
}

/// Data in order grows rcv_ssthresh from its start by two segments each (`tcp_grow_window`), each such
/// segment ACKed at once: with the rules on, from 64076.
#[test]
fn test_established_window_grows_from_the_initial_window() {
    let mut c = server(space(true), 1460);
    send!(c, time 20, inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 320, 1448).ts(pts(20), ts(10)));
    assert_eq!(c.tcp_info(at(20)).rcv_ssthresh, 64_076 + 2 * 1448);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "ACKed at once: the window grew");
}

/// `space(on)` with growth on out-of-order data too, and SACK compression as in `linux`.
fn ooo_space(on: bool) -> TcpConfig {
    TcpConfig { grow_window_out_of_order: on, comp_sack_nr: 44, ..space(true) }
}

/// An out-of-order segment grows rcv_ssthresh by twice its length, up to the largest window
/// (`tcp_data_queue_ofo` → `tcp_grow_window` in a SACK flow): the kernel's `tcp_ooo_rcv_mss` sends 9000
/// bytes above a hole, and rcv_ssthresh goes from 64076 to min(64076 + 18000, 65536 × 1.25 = 81920).
/// Off, out-of-order data leaves it.
#[test]
fn test_established_out_of_order_segment_grows_the_window() {
    for (on, want) in [(true, 81_920), (false, 64_076)] {
        let mut c = server(ooo_space(on), 1460);
        send!(c, time 20, inp(REMOTE_ISS + 2001, LOCAL_ISS + 1, ACK, 320, 9000).ts(pts(20), ts(10)));
        assert_eq!(c.tcp_info(at(20)).rcv_ssthresh, want, "rule {on}");
        let sent = transmit_all(&mut c, at(20));
        assert_eq!(sent.len(), 1, "the duplicate ACK with its SACK block");
    }
}

/// With SACK compression, the fourth duplicate ACK for one RCV.NXT is held (`tcp_comp_sack_nr`) unless
/// the segment grew the window: `tcp_grow_window`'s quick ACK is served first (`__tcp_ack_snd_check`).
#[test]
fn test_established_out_of_order_growth_overrides_sack_compression() {
    for on in [true, false] {
        let mut c = server(ooo_space(on), 1460);
        for i in 0..4u32 {
            let seq = REMOTE_ISS + 1 + 1448 * (i + 1);
            send!(c, time 20, inp(seq, LOCAL_ISS + 1, ACK, 320, 1448).ts(pts(20), ts(10)));
            let sent = transmit_all(&mut c, at(20));
            let want = if i < 3 || on { 1 } else { 0 };
            assert_eq!(sent.len(), want, "segment {i}, rule {on}");
        }
    }
}
