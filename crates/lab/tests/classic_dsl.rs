//! The 2002 DSL TCP_RR report (`classic/dsl-rr`, `classic/dsl-rr-nodelay`, docs/classic.md § 1), shortened
//! where a point allows: what the line, netperf's first burst and Mentat's Nagle and deferred ACK dictate,
//! each with its analytic figure beside the assertion.

use crate::common;

use common::{rr, run_scenario, scenario};
use tcplab_lab::result::Point;
use tcplab_lab::SHIPPED;
use tcplab_lab::{load, Source};

fn shipped(name: &str) -> &'static str {
    SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped")).text
}

fn point(name: &str, set: &[&str]) -> Point {
    run_scenario(&scenario(shipped(name), set), 1).points.remove(0)
}

fn tps(name: &str, set: &[&str]) -> f64 {
    rr(&point(name, set)).transactions_per_s
}

/// IP bytes of one 8192-byte response: dummynet charges a pipe the IP datagram (`m_pkthdr.len`), and
/// HP-UX hosts send no timestamps, so back-to-back responses are 1460-byte payloads under 40 bytes of
/// IP and TCP header: 8192 × 1500 / 1460 = 8416.4 bytes a transaction.
const RESPONSE_WIRE: f64 = 8192.0 * 1500.0 / 1460.0;

/// Transactions per second when the responses fill the down link.
fn ceiling(down_bps: f64) -> f64 {
    down_bps / (8.0 * RESPONSE_WIRE)
}

/// One transaction at a time: a round trip (100 ms), the request (128 + 40 bytes) up, the response as its
/// own six segments (8192 + 6 × 40 bytes) down.
fn idle_path_bound(up_bps: f64, down_bps: f64) -> f64 {
    1.0 / (0.1 + 168.0 * 8.0 / up_bps + 8432.0 * 8.0 / down_bps)
}

#[test]
fn dsl_rr_one_in_flight_is_the_idle_path_bound_and_one_more_fills_the_line() {
    // 128/384 kbit/s: 1 / (0.1 + 0.0105 + 0.1757 s) = 3.494/s with one in flight (published 3.40), and
    // the line's 5.703/s with two or more (published 5.49 in 10 s).
    let bound = idle_path_bound(128_000.0, 384_000.0);
    let b0 = tps("classic/dsl-rr", &["test.burst=0"]);
    eprintln!("dsl-rr burst 0: {b0} against {bound:.3}");
    assert!(b0 <= bound && b0 >= 0.95 * bound, "{b0} against {bound}");
    // Over 60 s the start (the first response is complete about 0.3 s in) is a small share.
    let top = ceiling(384_000.0);
    for burst in [1, 4] {
        let t = tps("classic/dsl-rr", &[&format!("test.burst={burst}"), "test.duration=\"60s\""]);
        eprintln!("dsl-rr burst {burst}: {t} against {top:.3}");
        assert!(t <= top && t >= 0.98 * top, "{t} against {top}");
    }
}

#[test]
fn mentat_nagle_does_not_hold_the_tail_of_a_response() {
    // With Nagle at both ends and one transaction in flight, the 8192-byte response leaves as 4 segments
    // (IW 4·MSS) and, at the ACK, 1460 + 892 bytes: Mentat holds a short piece only after a short last
    // segment, so the tail goes with the full one before it and the rate is NODELAY's (published 7.09
    // against 7.10). RFC 896's test holds the tail until everything before it is ACKed, an ACK the
    // client defers.
    let mentat = tps("classic/dsl-rr-nodelay", &["test.burst=0", "test.nodelay=false"]);
    let nodelay = tps("classic/dsl-rr-nodelay", &["test.burst=0", "test.nodelay=true"]);
    let rfc896 =
        tps("classic/dsl-rr-nodelay", &["test.burst=0", "test.nodelay=false", "server.tcp.nagle_last_sent=false"]);
    let bound = idle_path_bound(384_000.0, 1_500_000.0);
    eprintln!("burst 0: Mentat Nagle {mentat}, NODELAY {nodelay}, RFC 896 server {rfc896}, bound {bound:.3}");
    assert_eq!(mentat, nodelay);
    assert!(mentat <= bound && mentat >= 0.95 * bound, "{mentat} against {bound}");
    assert!(rfc896 < 0.8 * mentat, "{rfc896} against {mentat}");
}

#[test]
fn netperf_d_sets_nodelay_at_both_ends() {
    let s = scenario(shipped("classic/dsl-rr-nodelay"), &["test.nodelay=true"]);
    assert!(s.client.tcp().nodelay && s.server.tcp().nodelay);
    let s = scenario(shipped("classic/dsl-rr-nodelay"), &["test.nodelay=false", "server.tcp.nodelay=true"]);
    assert!(!s.client.tcp().nodelay && !s.server.tcp().nodelay, "-D absent: netperf leaves both ends on Nagle");
}

#[test]
fn dsl_rr_nodelay_fills_the_line_at_burst_3_and_nagle_later() {
    // 1500 kbit/s: 22.28/s. Published: NODELAY reaches the line at burst 3, Nagle at burst 6. With Nagle
    // the back-to-back requests after the first wait for its ACK, which rides on the responses, so the
    // requests reach the server one batch per round trip. "Full": 95 % of the ceiling in 10 s.
    let top = ceiling(1_500_000.0);
    let first_full = |nodelay: bool| {
        (0..=8u32)
            .find(|b| {
                let t =
                    tps("classic/dsl-rr-nodelay", &[&format!("test.burst={b}"), &format!("test.nodelay={nodelay}")]);
                assert!(t <= top, "{t} above {top}");
                t >= 0.95 * top
            })
            .expect("full by burst 8")
    };
    let (nagle, nodelay) = (first_full(false), first_full(true));
    eprintln!("dsl-rr-nodelay: full from burst {nodelay} with NODELAY, {nagle} with Nagle");
    assert_eq!(nodelay, 3);
    assert!((5..=7).contains(&nagle), "Nagle full from burst {nagle}; published 6");
}

/// The 384/1500 kbit/s tables of the report, Nagle (without `-D`) and NODELAY (`-D`), bursts 0..=14.
const PUBLISHED_NAGLE: [f64; 15] =
    [7.09, 8.99, 12.69, 15.39, 16.09, 17.09, 21.08, 21.18, 21.18, 21.18, 21.28, 21.18, 21.28, 21.18, 21.28];
const PUBLISHED_NODELAY: [f64; 15] =
    [7.10, 13.89, 20.19, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29, 21.29];

/// Every point of both 1500k curves beside the publication, on dummynet's 10 ms clock (docs/classic.md
/// § 1). NODELAY is within 10 % everywhere. With Nagle the lab still climbs faster than the report's shelf
/// (15.39, 16.09, 17.09 at bursts 3–5): bursts 4 and 5 are beyond 10 % (+18.7 and +15.9 %), none beyond
/// 20 % — inside the band (at most two a curve within 20 %), the shelf itself still open.
#[test]
fn dsl_rr_1500k_curves_beside_the_published_tables() {
    let beyond = |published: &[f64; 15], nodelay: bool, band: f64| -> Vec<usize> {
        (0..15)
            .filter(|&b| {
                let t =
                    tps("classic/dsl-rr-nodelay", &[&format!("test.burst={b}"), &format!("test.nodelay={nodelay}")]);
                (t / published[b] - 1.0).abs() > band
            })
            .collect()
    };
    assert_eq!(beyond(&PUBLISHED_NODELAY, true, 0.10), Vec::<usize>::new());
    assert_eq!(beyond(&PUBLISHED_NAGLE, false, 0.10), vec![4, 5]);
    assert_eq!(beyond(&PUBLISHED_NAGLE, false, 0.20), Vec::<usize>::new());
}

/// The candidates for the report's slow climb that act on timing leave burst 5 well above its 17.09: the
/// deferred-ACK interval (50 ms in Solaris 2.5.1's `tcp.c`, 100 ms in illumos), the deferral's cap (2, the
/// Solaris 8 value for a remote peer, against the personality's 22), and dummynet's clock itself (the
/// 2003 code that drops the idle credit; a 1 ms clock, HZ 1000). None comes within 9 % of the report:
/// what holds its requests back at bursts 4 and 5 is none of these (docs/classic.md § 1).
#[test]
fn dsl_rr_nagle_burst_5_stays_above_the_report_under_the_timing_candidates() {
    let top = ceiling(1_500_000.0);
    let base = ["test.burst=5", "test.nodelay=false"];
    let variants: [&[&str]; 5] = [
        &[],
        &["client.tcp.delayed_ack_timeout=\"100ms\"", "server.tcp.delayed_ack_timeout=\"100ms\""],
        &["client.tcp.deferred_ack_max=2", "server.tcp.deferred_ack_max=2"],
        &["path.up.idle_credit=\"dropped\"", "path.down.idle_credit=\"dropped\""],
        &["path.up.tick=\"1ms\"", "path.down.tick=\"1ms\""],
    ];
    for v in variants {
        let set: Vec<&str> = base.iter().chain(v.iter()).copied().collect();
        let t = tps("classic/dsl-rr-nodelay", &set);
        eprintln!("burst 5 {v:?}: {t}");
        assert!(t <= top, "{v:?}: {t} against the ceiling {top}");
        assert!(t > 1.09 * PUBLISHED_NAGLE[5], "{v:?}: {t}");
    }
}

/// dummynet's clock at one transaction in flight. Each leg is served on 10 ms ticks; the 2000–2001 code
/// (`idle_credit = "kept"`, the scenario's) lets a packet that the leftover credit covers leave on the
/// tick already past, so the request and the response's head lose nothing to the clock and the round
/// is the continuous model's (6.60/s, published 7.09 and 7.10: −6.9 %). The 2003 code drops that credit:
/// every leg waits for a fresh tick, a round costs a tick more, 6.10/s (−14 %). Both below the stated
/// path's bound (6.735/s), which the published figures exceed.
#[test]
fn dsl_rr_burst_0_on_dummynets_clock() {
    let bound = idle_path_bound(384_000.0, 1_500_000.0);
    let kept = tps("classic/dsl-rr-nodelay", &["test.burst=0", "test.nodelay=true"]);
    let dropped = tps(
        "classic/dsl-rr-nodelay",
        &["test.burst=0", "test.nodelay=true", "path.up.idle_credit=\"dropped\"", "path.down.idle_credit=\"dropped\""],
    );
    eprintln!("burst 0 on 10 ms ticks: credit kept {kept}, dropped {dropped}, bound {bound:.3}");
    assert!(kept <= bound && (kept / 7.10 - 1.0).abs() <= 0.10, "{kept}");
    assert!(dropped < kept && (dropped / 7.10 - 1.0).abs() > 0.10, "{dropped} against {kept}");
}

/// A delay that is not a whole number of ticks is refused at its key, with what dummynet would make of it.
#[test]
fn a_delay_off_the_tick_is_refused_naming_the_key() {
    let src = Source { name: "dsl-rr.toml", text: shipped("classic/dsl-rr") };
    let err = load(&src, &["path.down.delay=\"55ms\"".to_string()]).unwrap_err().to_string();
    assert!(err.contains("path.down.delay") && err.contains("50ms") && err.contains("multiple of the tick"), "{err}");
}
