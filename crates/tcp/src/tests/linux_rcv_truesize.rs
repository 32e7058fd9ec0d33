//! The receiver's memory by skb truesize (`rcv_mem_truesize`, issues 23 and 27): the window each ACK
//! offers, checked against Linux 6.x's formulas worked by hand here (`tcp_win_from_space`,
//! `tcp_measure_rcv_mss` → `tcp_set_window_clamp`, `tcp_grow_window`, `__tcp_select_window`,
//! `tcp_select_window`'s "never shrink").

use super::*;
use crate::config::AckPolicy;

/// `sk_rcvbuf` for SO_RCVBUF 64 KiB.
const RCVBUF: u64 = 131_072;
/// Truesize of a 1448-byte segment: the payload and `rcv_skb_overhead` 856.
const SEG_TRUESIZE: u64 = 1448 + 856;

/// The `linux` personality's receive side on a 64 KiB SO_RCVBUF (tcp_rmem[1] 131072), window
/// growth on out-of-order data, SACK compression.
fn linux_rcv(truesize: bool) -> TcpConfig {
    let linux = TcpConfig::personality("linux").unwrap();
    TcpConfig { recv_buffer: ByteSize::new(65_536), ack_policy: AckPolicy::Linux, rcv_mem_truesize: truesize, ..linux }
}

/// `tcp_win_from_space`.
fn win(ratio: u64, space: u64) -> u64 {
    space * ratio / 256
}

/// A server past the handshake with a peer whose SYN carried `mss`, window scale 7, SACK, and
/// timestamps when `ts`.
fn server(cfg: TcpConfig, mss: u16, ts_on: bool) -> Connection {
    let mut c = Connection::listen(TcpConfig { timestamps: ts_on, ..cfg }, LOCAL_PORT, LOCAL_ISS);
    let syn = inp(REMOTE_ISS, 0, SYN, 65_535, 0).mss(mss).wscale(7).sack_permitted();
    let syn = if ts_on { syn.ts(pts(0), 0) } else { syn };
    send!(c, time 0, syn);
    assert_eq!(transmit_all(&mut c, at(0)).len(), 1, "the SYN-ACK");
    let ack = inp(REMOTE_ISS + 1, LOCAL_ISS + 1, ACK, 257, 0);
    send!(c, time 100, if ts_on { ack.ts(pts(100), ts(0)) } else { ack });
    assert_eq!(c.state(), State::Established);
    c
}

/// The window field of the one ACK the last segment drew, in bytes.
fn ack_window(c: &mut Connection, t: u64) -> u64 {
    sent_window(c, t).unwrap_or_else(|| panic!("no ACK at {t} ms"))
}

/// The window field of the last segment sent at `t`, if any (a compressed ACK waits), in bytes.
fn sent_window(c: &mut Connection, t: u64) -> Option<u64> {
    let sent = transmit_all(c, at(t));
    let last = sent.last()?;
    Some((last.window as u64) << c.tcp_info(at(t)).rcv_wscale)
}

/// The kernel's `tcp_ooo_rcv_mss` (tools/testing/selftests/net/packetdrill): tcp_rmem 4096 131072 32 MiB
/// (scale 10), no timestamps, a 9000-byte GRO packet of 1000-byte segments above a hole, then 10000
/// more. The SYN-ACK offered 44 × 1460 = 64240; the space was clamped one segment below 65536 (the
/// memory's window at the default ratio 128), 64076. The packet's truesize is 12288 bytes of pages
/// (9040 bytes: an 8 KiB chunk and a page) and a 640-byte head, so `scaling_ratio` = 9000 × 256 /
/// 12928 = 178: the clamp rises to 131072 × 178 / 256 = 91136, rcv_ssthresh to the window offered
/// (64240) and then by 2 × 9000 (room 26896); the skb charged, the free space is 82147, so the ACK
/// offers min(82147, 82240) rounded up to the scale: 81 × 1024. The second packet finds no room
/// (82147 < 82240) and, charged, leaves 73159 of space: the edge stays, the window still reads 81.
/// Without the rule the window reads 80 (rcv_ssthresh capped at 1.25 × 65536 = 81920).
#[test]
fn test_established_ooo_gro_packet_window_from_truesize() {
    let cfg = TcpConfig { wscale_space: ByteSize::new(32 << 20), ..linux_rcv(true) };
    let mut c = server(cfg, 1000, false);
    assert_eq!(c.tcp_info(at(100)).rcv_wscale, 10);
    assert_eq!(c.tcp_info(at(100)).rcv_ssthresh, 64_076);

    let truesize = 8192 + 4096 + 640;
    let ratio = 9000 * 256 / truesize;
    assert_eq!(ratio, 178);
    let clamp = win(ratio, RCVBUF);
    let ssthresh = 64_240 + (clamp - 64_240).min(2 * 9000);
    let free = win(ratio, RCVBUF - truesize);
    let want = free.min(ssthresh).div_ceil(1024) * 1024;
    assert_eq!(want, 81 * 1024);

    let ooo = inp(REMOTE_ISS + 2001, LOCAL_ISS + 1, ACK, 257, 9000);
    c.on_segment_gro(at(100), &ooo, 1000);
    assert_eq!(c.tcp_info(at(100)).rcv_mss, 1000);
    assert_eq!(c.tcp_info(at(100)).rcv_ssthresh as u64, ssthresh);
    assert_eq!(ack_window(&mut c, 100), want);

    assert!(win(ratio, RCVBUF - truesize) < ssthresh, "no room for the second packet");
    let more = inp(REMOTE_ISS + 11_001, LOCAL_ISS + 1, ACK, 257, 10_000);
    c.on_segment_gro(at(100), &more, 1000);
    assert_eq!(c.tcp_info(at(100)).rcv_ssthresh as u64, ssthresh);
    assert_eq!(ack_window(&mut c, 100), want, "the edge never moves left");

    let cfg = TcpConfig { wscale_space: ByteSize::new(32 << 20), ..linux_rcv(false) };
    let mut off = server(cfg, 1000, false);
    off.on_segment_gro(at(100), &ooo, 1000);
    assert_eq!(ack_window(&mut off, 100), 80 * 1024);
}

/// Linux's receive window worked by hand for full 1448-byte segments (ratio 1448 × 256 / 2304 = 160),
/// scale 1: the window each ACK offers and rcv_ssthresh.
struct Reference {
    rmem: u64,
    ssthresh: u64,
    clamp: u64,
    /// Right edge, in bytes from the first data byte.
    edge: u64,
    rcv_nxt: u64,
}

impl Reference {
    const RATIO: u64 = 160;

    fn space(&self) -> u64 {
        win(Self::RATIO, RCVBUF.saturating_sub(self.rmem))
    }

    fn grow(&mut self) {
        let room = self.clamp.min(self.space()).saturating_sub(self.ssthresh);
        // Check #2 passes: 2304 × 160 / 256 = 1440 ≤ 1448, so 2 × advmss = 2896 (= 2 × 1448).
        self.ssthresh += room.min(2 * 1448);
    }

    /// `__tcp_select_window` and `tcp_select_window` at scale 1.
    fn select(&mut self) -> u64 {
        let full = self.clamp.min(win(Self::RATIO, RCVBUF));
        let mut free = self.space();
        if free < full / 2 {
            free &= !1;
            if free < win(Self::RATIO, RCVBUF) / 16 || free < 1448 {
                free = 0;
            }
        }
        let window = free.min(self.ssthresh).div_ceil(2) * 2;
        self.edge = self.edge.max(self.rcv_nxt + window);
        self.edge - self.rcv_nxt
    }

    fn in_order(&mut self, n: u64) -> u64 {
        self.rcv_nxt += n * 1448;
        self.rmem += SEG_TRUESIZE;
        self.grow();
        self.select()
    }

    fn out_of_order(&mut self) -> u64 {
        self.grow();
        self.rmem += SEG_TRUESIZE;
        self.select()
    }
}

/// With timestamps: segments of 1448 bytes. The first measures the ratio (160: the clamp lifts to
/// 81920 and rcv_ssthresh to the SYN-ACK's 65160) and is read at once. Then a hole, 9 segments, a
/// second hole and 11 more: each out-of-order segment grows rcv_ssthresh while the free space allows
/// and takes 2304 bytes, so the edge stops (at 76744 past RCV.NXT) instead of reaching the 81920 the
/// memory-blind window offers. Filling the first hole moves RCV.NXT over 10 segments while 11 stay held
/// out of order and 10 wait to be read: the memory leaves min(51680, rcv_ssthresh) past the new RCV.NXT,
/// short of the old edge, which stays: the window shrinks by the repair. Memory-blind, the edge ran
/// further while the out-of-order data came, and the window stays more than three segments larger.
#[test]
fn test_established_ooo_data_takes_window() {
    let mut c = server(linux_rcv(true), 1460, true);
    assert_eq!(c.tcp_info(at(100)).rcv_wscale, 1);
    let mut r = Reference { rmem: 0, ssthresh: 64_076, clamp: 64_076, edge: 65_160, rcv_nxt: 0 };
    let seg = |k: u64| inp(REMOTE_ISS + 1 + (k as u32) * 1448, LOCAL_ISS + 1, ACK, 257, 1448).ts(pts(110), ts(100));

    // Segment 0 measures the ratio: clamp = 131072 × 160 / 256 = 81920, rcv_ssthresh = max(64076,
    // min(65160, 81920)).
    r.clamp = win(Reference::RATIO, RCVBUF);
    r.ssthresh = 65_160;
    let want = r.in_order(1);
    send!(c, time 110, seg(0));
    assert_eq!(c.tcp_info(at(110)).rcv_ssthresh as u64, r.ssthresh);
    assert_eq!(ack_window(&mut c, 110), want);
    assert_eq!(c.recv(1 << 20), 1448);
    r.rmem = 0;

    let mut t = 110;
    for k in (2..11).chain(12..23) {
        t += 1;
        let want = r.out_of_order();
        send!(c, time t, seg(k));
        assert_eq!(c.tcp_info(at(t)).rcv_ssthresh as u64, r.ssthresh, "segment {k}");
        if let Some(w) = sent_window(&mut c, t) {
            assert_eq!(w, want, "segment {k}");
        }
    }
    assert_eq!(r.edge - r.rcv_nxt, 76_744);
    assert_eq!(r.ssthresh, 77_600);

    // The first hole filled: segments 1..=10 in order, 11 held above the second hole.
    t += 1;
    let want = r.in_order(10);
    assert_eq!(r.space(), 51_680);
    send!(c, time t, seg(1));
    assert_eq!(ack_window(&mut c, t), want);
    assert_eq!(want, 76_744 - 10 * 1448, "the old edge: the window shrank by the repair");

    // Memory-blind, the same arrivals leave the window at its ceiling.
    let mut off = server(linux_rcv(false), 1460, true);
    send!(off, time 110, seg(0));
    transmit_all(&mut off, at(110));
    off.recv(1 << 20);
    for k in (2..11).chain(12..23) {
        send!(off, time 111, seg(k));
        transmit_all(&mut off, at(111));
    }
    send!(off, time 112, seg(1));
    let blind = ack_window(&mut off, 112);
    assert!(blind > want + 3 * 1448, "memory-blind {blind}: out-of-order data took no room");
}

/// What the application reads frees memory: 40 segments left unread take 40 × 2304 bytes, and once
/// they are read the next segment's ACK offers the space of one segment's charge, at most
/// rcv_ssthresh.
#[test]
fn test_established_read_frees_receive_memory() {
    let mut c = server(linux_rcv(true), 1460, true);
    let seg = |k: u32| inp(REMOTE_ISS + 1 + k * 1448, LOCAL_ISS + 1, ACK, 257, 1448).ts(pts(110), ts(100));
    for k in 0..40 {
        send!(c, time 110, seg(k));
        transmit_all(&mut c, at(110));
    }
    // 40 unread segments hold 92160 bytes of memory: 38912 left, a window of 24320, below half the
    // full 81920.
    assert_eq!(win(160, RCVBUF - 40 * SEG_TRUESIZE), 24_320);
    assert_eq!(c.recv(1 << 20), 40 * 1448);
    send!(c, time 120, seg(40));
    let ssthresh = c.tcp_info(at(120)).rcv_ssthresh as u64;
    let want = win(160, RCVBUF - SEG_TRUESIZE).min(ssthresh).div_ceil(2) * 2;
    c.on_timeout(at(400));
    assert_eq!(ack_window(&mut c, 400), want);
}
