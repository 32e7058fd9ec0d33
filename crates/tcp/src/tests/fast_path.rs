//! Header prediction, the receiver's (`Connection::in_order_data_predicted`) and the sender's
//! (`Connection::new_ack_predicted`), is an optimisation only: the same run with it switched off (the slow
//! path, which is the definition) must send the same segments at the same times and end with the same
//! counters on both sides. The switch also turns off `process_data`'s short body for data in order
//! (`Connection::data_in_order`), so that the slow path runs the whole rule.

use std::cell::Cell;

use super::pair::{Fate, Pair, Side};
use super::{cfg, cfg_no_ts, dur_ms};
use crate::config::AckPolicy;
use crate::EcnMode;
use crate::TcpConfig;

thread_local! {
    static SLOW_PATH_ONLY: Cell<bool> = const { Cell::new(false) };
    static PREDICTED: Cell<u64> = const { Cell::new(0) };
    static ACK_PREDICTED: Cell<u64> = const { Cell::new(0) };
    static ACK_PREDICTED_CLOSING: Cell<u64> = const { Cell::new(0) };
    static ACK_PREDICTED_WITH_DATA: Cell<u64> = const { Cell::new(0) };
}

/// Whether this test thread switched header prediction off.
pub(crate) fn slow_path_only() -> bool {
    SLOW_PATH_ONLY.with(Cell::get)
}

/// Counts a segment the fast path took (so the test can tell that it ran).
pub(crate) fn note_predicted() {
    PREDICTED.with(|c| c.set(c.get() + 1));
}

/// Counts an ACK the sender's fast path took; `closing` when it came after the sender's close (what
/// the prediction covers beyond Linux's ESTABLISHED), `with_data` when it carried data in order.
pub(crate) fn note_ack_predicted(closing: bool, with_data: bool) {
    ACK_PREDICTED.with(|c| c.set(c.get() + 1));
    if closing {
        ACK_PREDICTED_CLOSING.with(|c| c.set(c.get() + 1));
    }
    if with_data {
        ACK_PREDICTED_WITH_DATA.with(|c| c.set(c.get() + 1));
    }
}

/// Everything observable of one run: every transmission (time, sender, segment, fate), what each
/// application read, both sides' final counters and state.
fn run(cfg: &TcpConfig, slow_only: bool) -> (String, u64, u64, u64, u64) {
    SLOW_PATH_ONLY.with(|c| c.set(slow_only));
    PREDICTED.with(|c| c.set(0));
    ACK_PREDICTED.with(|c| c.set(0));
    ACK_PREDICTED_CLOSING.with(|c| c.set(0));
    ACK_PREDICTED_WITH_DATA.with(|c| c.set(0));
    let mut p = Pair::new(cfg.clone(), cfg.clone(), dur_ms(10));
    // Drops (one segment in 29 from the client, one in 41 from the server) and a late segment now and
    // then, so that SACK recovery, out-of-order queues and hole-filling segments alternate with long
    // in-order stretches; the server sends a little data too, so some data segments also carry acknowledgements of news.
    let mut n = [0u32; 2];
    p.set_filter(move |side, seg| {
        if seg.payload_len == 0 {
            return Fate::Deliver;
        }
        let i = side as usize;
        n[i] += 1;
        match (side, n[i]) {
            (Side::Client, k) if k % 29 == 0 => Fate::Drop,
            (Side::Server, k) if k % 41 == 0 => Fate::Drop,
            (_, k) if k % 17 == 0 => Fate::Delay(dur_ms(3)),
            _ => Fate::Deliver,
        }
    });
    p.establish();
    p.to_write = [3_000_000, 40_000];
    p.close_when_written = [true, false];
    // Each side reads the other's data only after a while: the window it advertises then shrinks and
    // opens on segments the other side predicts (data at the server, pure ACKs at the client), whose
    // window updates must not be lost.
    p.auto_read = [false, false];
    p.run_until(tcplab_units::Instant::ZERO + dur_ms(300));
    p.auto_read = [true, true];
    p.run_until(tcplab_units::Instant::ZERO + dur_ms(20_000));
    let mut out = String::new();
    for s in &p.trace {
        out += &format!("{:?} {:?} {:?} {:?}\n", s.at, s.from, s.fate, s.seg);
    }
    out += &format!("read {:?}\n", p.read);
    for c in [&p.client, &p.server] {
        out += &format!("{:?} {:?}\n", c.state(), c.estats());
    }
    let predicted = PREDICTED.with(Cell::get);
    let acks_predicted = ACK_PREDICTED.with(Cell::get);
    let acks_closing = ACK_PREDICTED_CLOSING.with(Cell::get);
    let acks_with_data = ACK_PREDICTED_WITH_DATA.with(Cell::get);
    SLOW_PATH_ONLY.with(|c| c.set(false));
    (out, predicted, acks_predicted, acks_closing, acks_with_data)
}

#[test]
fn header_prediction_matches_the_slow_path() {
    // Not `linux`: its TSQ makes every connection paced, and a paced ACK is never predicted.
    // The third exercises the receiver's other branches on the predicted path: Linux's ACK policy (ATO
    // estimator, quick ACKs, window growth), ECN negotiated, receive memory charged by truesize, and ACKs
    // sent at once by chance (the random stream must be drawn the same).
    let linux_rcv = TcpConfig {
        ack_policy: AckPolicy::Linux,
        ecn: EcnMode::On,
        rcv_mem_truesize: true,
        ack_immediate_p: 0.1,
        ..cfg()
    };
    // PRR, delivered-bytes growth and F-RTO act on the ACKs of a SACK recovery; without SACK the
    // prediction meets NewReno's partial ACKs.
    let prr = TcpConfig { prr: true, cwnd_growth_delivered: true, frto: true, ..cfg() };
    let no_sack = TcpConfig { sack: false, ..cfg() };
    let configs = [
        ("default", cfg()),
        ("no timestamps", cfg_no_ts()),
        ("linux receiver", linux_rcv),
        ("prr", prr),
        ("no sack", no_sack),
    ];
    for (name, cfg) in configs {
        let (fast, predicted, acks_predicted, acks_closing, acks_with_data) = run(&cfg, false);
        let (slow, never, acks_never, _, _) = run(&cfg, true);
        assert_eq!((never, acks_never), (0, 0), "{name}: the switch turns the fast paths off");
        assert!(predicted > 1000, "{name}: only {predicted} segments took the fast path");
        assert!(acks_predicted > 500, "{name}: only {acks_predicted} ACKs took the sender's fast path");
        assert!(acks_closing > 0, "{name}: no ACK after the close took the sender's fast path");
        assert!(acks_with_data > 0, "{name}: no data segment took the sender's fast path for its ACK");
        assert!(fast.contains("read [40000, 3000000]"), "{name}: the transfer did not finish:\n{fast}");
        if fast != slow {
            let line = fast.lines().zip(slow.lines()).position(|(a, b)| a != b);
            panic!("{name}: the runs differ first at line {line:?}");
        }
    }
}
