//! `cwnd_growth_packets`: Linux grows cwnd by the packets an ACK delivers (`tcp_clean_rtx_queue` counts
//! `tcp_skb_pcount` into `tp->delivered`, `tcp_slow_start` adds that many), so a short segment grows it
//! by a whole segment where byte counting grows it by its bytes. Found on `classic/dsl-rr-nodelay`,
//! whose 8192-byte responses end in 952-byte segments (docs/classic.md § Today beside then).

use super::pair::{Pair, Side};
use super::*;

/// The `linux` personality with NODELAY (each short write its own segment), without TSO, and with
/// `cwnd_growth_packets` as given.
fn linux_nodelay(cwnd_growth_packets: bool) -> TcpConfig {
    TcpConfig { nodelay: true, cwnd_growth_packets, ..linux_4mib_no_tso() }
}

/// Six 952-byte writes, each its own segment, then full segments up to cwnd, all in one round trip;
/// returns (SMSS, cwnd before the first ACK, cwnd after the first ACK, the bytes it acknowledged).
fn slow_start_over_short_segments(cwnd_growth_packets: bool) -> (u64, u64, u64, u64) {
    let mut p = Pair::new(linux_nodelay(cwnd_growth_packets), linux_4mib_no_tso(), dur_ms(20));
    p.establish();
    for _ in 0..6 {
        assert_eq!(p.conn(Side::Client).send(952), 952);
        let now = p.now;
        p.run_until(now);
    }
    p.to_write[0] = 64 * 1024;
    let now = p.now;
    p.run_until(now);
    let e = p.client.estats();
    let (smss, before) = (e.CurMSS, e.CurCwnd);
    assert_eq!(e.ThruOctetsAcked, 0, "nothing acknowledged yet");
    assert!(e.DataOctetsOut + smss > before, "cwnd filled: {} bytes out, cwnd {before}", e.DataOctetsOut);
    p.run_while(|p| p.client.estats().ThruOctetsAcked == 0);
    let e = p.client.estats();
    (smss, before, e.CurCwnd, e.ThruOctetsAcked)
}

#[test]
fn test_established_short_segments_grow_cwnd_by_whole_segments() {
    let (smss, before, after, acked) = slow_start_over_short_segments(true);
    assert_eq!(before, 10 * smss, "IW 10");
    assert!(acked > 6 * 952 && (acked - 6 * 952) % smss == 0, "the short segments and whole ones: {acked}");
    let packets = 6 + (acked - 6 * 952) / smss;
    assert_eq!(
        after,
        before + packets * smss,
        "{packets} packets delivered: as many segments of growth, not {acked} bytes"
    );
    assert!(after > before + acked, "more than byte counting gives");
}

#[test]
fn test_established_without_the_knob_short_segments_grow_cwnd_by_their_bytes() {
    let (smss, before, after, acked) = slow_start_over_short_segments(false);
    assert_eq!(before, 10 * smss);
    assert!(acked > 6 * 952 && (acked - 6 * 952) % smss == 0, "the short segments and whole ones: {acked}");
    assert_eq!(after, before + acked, "byte counting (abc unlimited): the bytes acknowledged");
}

#[test]
fn test_linux_personality_counts_packets() {
    assert!(TcpConfig::personality("linux").unwrap().cwnd_growth_packets);
    for other in ["rfc", "linux-2.4", "linux-2.2", "hpux-11", "bsd-4.4"] {
        assert!(!TcpConfig::personality(other).unwrap().cwnd_growth_packets, "{other}");
    }
}
