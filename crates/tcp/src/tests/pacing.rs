//! Pacing and BBR on the in-memory pair: departures spaced at the pacing rate, CUBIC unpaced by default,
//! BBR paced by itself.

use tcplab_units::{ByteSize, Duration, Rate};

use super::pair::{Pair, Side};
use super::*;
use crate::config::{CongestionControlKind, Pacing};

fn linux() -> TcpConfig {
    TcpConfig {
        send_buffer: ByteSize::new(4 << 20),
        recv_buffer: ByteSize::new(4 << 20),
        ..TcpConfig::personality("linux").unwrap()
    }
}

/// The gaps between the client's data departures from the 11th data segment on, ns.
fn data_gaps(p: &Pair) -> Vec<u64> {
    let sent: Vec<_> =
        p.trace.iter().filter(|s| s.from == Side::Client && s.seg.payload_len > 0).map(|s| s.at).collect();
    sent.windows(2).skip(10).map(|w| w[1].as_nanos() - w[0].as_nanos()).collect()
}

/// SO_MAX_PACING_RATE of 8 Mbit/s (1 MB/s) on a path whose window allows far more: every data segment
/// after the first 10 leaves one segment's time at 1 MB/s after the one before (1448 bytes: 1.448 ms),
/// whatever the ACK clock does.
#[test]
fn test_established_pacing_spaces_departures_at_the_rate() {
    let client = TcpConfig { max_pacing_rate: Some(Rate::from_bps(8_000_000)), tso: false, ..linux() };
    let mut p = Pair::new(client, linux(), dur_ms(20));
    p.establish();
    p.to_write[0] = 400 * 1448;
    p.run_until(at(600));
    let gaps = data_gaps(&p);
    assert!(gaps.len() > 300, "{} gaps", gaps.len());
    let seg_time = 1448u64 * 1_000_000_000 / 1_000_000;
    // A segment sent late (held by cwnd in slow start) earns at most half a segment's time of credit.
    for (i, g) in gaps.iter().enumerate() {
        assert!(*g >= seg_time / 2, "gap {i}: {g} ns < {} ns", seg_time / 2);
    }
    // Once cwnd outgrows the 1 MB/s × 40 ms pipe, pacing alone sets the pace: exactly the rate.
    let late = &gaps[100..];
    let mean = late.iter().sum::<u64>() / late.len() as u64;
    assert!(mean.abs_diff(seg_time) <= seg_time / 100, "mean gap {mean} ns, want {seg_time}");
    assert!(late.iter().all(|&g| g == seg_time), "{:?}", &late[..10]);
    assert_eq!(p.client.estats().paced.and_then(|x| x.X_PacingRate), Some(1_000_000));
}

/// CUBIC under `pacing = "auto"` is not paced (Linux without fq): a window leaves back to back.
/// Under `pacing = "fq"` the same flow is, at 200%/120% of cwnd per SRTT.
#[test]
fn test_established_cubic_is_paced_only_under_fq() {
    let run = |pacing| {
        let client = TcpConfig { pacing, tso: false, ..linux() };
        let mut p = Pair::new(client, linux(), dur_ms(20));
        p.establish();
        p.to_write[0] = 200 * 1448;
        p.run_until(at(400));
        let gaps = data_gaps(&p);
        let back_to_back = gaps.iter().filter(|&&g| g == 0).count();
        (back_to_back, gaps.len(), p.client.estats().paced.and_then(|x| x.X_PacingRate))
    };
    let (b2b, n, rate) = run(Pacing::Auto);
    assert!(b2b * 2 > n, "unpaced: {b2b} of {n} gaps are zero");
    assert_eq!(rate, None);
    let (b2b, n, rate) = run(Pacing::Fq);
    assert_eq!(b2b, 0, "paced: none of {n} gaps is zero");
    assert!(rate.is_some_and(|r| r > 0));
}

/// BBR paces by itself and its pacing rate follows its bandwidth estimate.
#[test]
fn test_established_bbr_paces_itself() {
    let client = TcpConfig { congestion_control: CongestionControlKind::Bbr, tso: false, ..linux() };
    let mut p = Pair::new(client, linux(), dur_ms(20));
    p.establish();
    p.to_write[0] = 300 * 1448;
    p.run_until(at(1000));
    let e = *p.client.estats().paced.expect("BBR's statistics");
    assert!(e.X_BbrMode.is_some() && e.X_PacingRate.is_some_and(|r| r > 0), "{e:?}");
    assert!(data_gaps(&p).iter().filter(|&&g| g == 0).count() == 0, "every paced departure is spaced");
    assert!(e.X_BbrMinRTT.is_some_and(|m| (40.0..41.0).contains(&m)), "min RTT {:?}", e.X_BbrMinRTT);
    let _ = Duration::ZERO;
}
