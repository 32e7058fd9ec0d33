//! `too_old_ack_challenged`: Linux 6.7's "tcp: do not accept ACK for bytes we never sent" (commit
//! 3d501dd326fb, `tcp_ack`): an ACK more than min(`max_window`, `bytes_acked`) below SND.UNA gets a
//! challenge ACK and its segment is dropped (RFC 5961 §5.2 with a tighter bound). Google's packetdrill
//! `gro/gro-mss-option` sends its data with ACK field 0 (the server's ISS, one below SND.UNA, on a
//! connection that has had nothing acknowledged), which 6.18 drops with `ack 1`.

use super::*;

fn linux_acks() -> TcpConfig {
    TcpConfig { too_old_ack_challenged: true, ..cfg() }
}

/// The peer's 1000 bytes at `t_ms` in order, with ACK field `ack` and TSval `pts(t_ms)`.
fn data_acking(ack: u32, t_ms: u64) -> TcpSegment {
    peer(REMOTE_ISS + 1, ack, ACK, 1000, t_ms, ts(0))
}

/// A passive open has had nothing acknowledged (its SYN is not counted: Linux's child socket starts
/// with SND.UNA past it), so an ACK one below SND.UNA is too old: a challenge ACK (RCV.NXT unchanged,
/// the old TS.Recent echoed) and no data taken; the same segment with the right ACK is then taken.
/// Without the knob the old ACK is ignored and the data taken (RFC 9293 §3.10.7.4).
#[test]
fn test_established_passive_open_drops_ack_below_snd_una() {
    let mut c = server_established(linux_acks());
    send!(c, time 20, data_acking(LOCAL_ISS, 20));
    let reply = transmit_all(&mut c, at(20));
    assert_eq!(reply.len(), 1, "one challenge ACK");
    assert_eq!((reply[0].ack, reply[0].payload_len), (SeqNumber(REMOTE_ISS + 1), 0));
    assert_eq!(reply[0].options.timestamps.map(|t| t.tsecr), Some(pts(10)), "TS.Recent from the handshake");
    assert_eq!(c.readable(), 0, "the data was dropped");
    send!(c, time 30, data_acking(LOCAL_ISS + 1, 30));
    assert_eq!(c.readable(), 1000);

    let mut rfc = server_established(cfg());
    send!(rfc, time 20, data_acking(LOCAL_ISS, 20));
    assert_eq!(rfc.readable(), 1000, "an old ACK is ignored, its data taken");
}

/// An active open's SYN counts in `bytes_acked` (1), so an ACK one below SND.UNA is within the bound
/// and its data taken; two below is too old.
#[test]
fn test_established_active_open_counts_its_syn() {
    let mut c = client_established(linux_acks());
    send!(c, time 20, data_acking(LOCAL_ISS - 1, 20));
    assert_eq!(c.readable(), 0, "two below SND.UNA: dropped");
    assert_eq!(transmit_all(&mut c, at(20)).len(), 1, "the challenge ACK");
    send!(c, time 30, data_acking(LOCAL_ISS, 30));
    assert_eq!(c.readable(), 1000, "one below: an old ACK, the data taken");
}

/// With data acknowledged the bound is the bytes acknowledged (here below the peer's window): after
/// two segments (2896 bytes) an ACK 2896 below SND.UNA is merely old, 2897 below too old, and the
/// dropped segment's TSval does not become TS.Recent (Linux updates it in `tcp_ack` after the check).
#[test]
fn test_established_bound_is_the_bytes_acknowledged() {
    let mut c = server_established(linux_acks());
    assert_eq!(c.send(2 * SMSS_TS as u64), 2 * SMSS_TS as u64);
    assert_eq!(transmit_all(&mut c, at(20)).len(), 2);
    let una = LOCAL_ISS + 1 + 2 * SMSS_TS;
    send!(c, time 30, peer(REMOTE_ISS + 1, una, ACK, 0, 30, ts(20)));
    let _ = transmit_all(&mut c, at(30));

    send!(c, time 40, peer(REMOTE_ISS + 1, una - 2 * SMSS_TS - 1, ACK, 1000, 40, ts(20)));
    let reply = transmit_all(&mut c, at(40));
    assert_eq!(c.readable(), 0, "2897 below: dropped");
    assert_eq!(reply.len(), 1, "the challenge ACK");
    assert_eq!(reply[0].options.timestamps.map(|t| t.tsecr), Some(pts(30)), "TS.Recent not from it");

    send!(c, time 50, peer(REMOTE_ISS + 1, una - 2 * SMSS_TS, ACK, 1000, 50, ts(20)));
    assert_eq!(c.readable(), 1000, "2896 below: taken");
}
