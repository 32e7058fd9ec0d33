//! The connection fed arbitrary segments, writes, reads and timer expiries: it never panics (overflow
//! checks are on in tests), and its invariants hold after every step.

use proptest::prelude::*;
use tcplab_units::{ByteSize, Duration, Instant};
use tcplab_wire::{SackBlock, SackBlocks, SeqNumber, TcpFlags, TcpOptions, TcpSegment, Timestamps};

use super::{client_established, server_established, LOCAL_PORT, REMOTE_PORT};
use crate::config::AckPolicy;
use crate::{Connection, TcpConfig, TxRoom};

#[derive(Debug, Clone)]
enum Step {
    /// A segment whose numbers are offsets from the connection's own SND.UNA / RCV.NXT.
    Segment {
        seq_off: i32,
        ack_off: i32,
        flags: u8,
        len: u32,
        window: u16,
        sack: Vec<(i32, u32)>,
        ts: Option<(u32, u32)>,
    },
    Write(u64),
    Read(u64),
    Close,
    Advance(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (
            -70_000i32..70_000,
            -70_000i32..70_000,
            any::<u8>(),
            prop_oneof![Just(0u32), 1u32..3000],
            any::<u16>(),
            proptest::collection::vec((-70_000i32..70_000, 1u32..5000), 0..4),
            proptest::option::of((any::<u32>(), any::<u32>())),
        )
            .prop_map(|(seq_off, ack_off, flags, len, window, sack, ts)| Step::Segment {
                seq_off,
                ack_off,
                flags,
                len,
                window,
                sack,
                ts
            }),
        2 => (1u64..200_000).prop_map(Step::Write),
        2 => (1u64..200_000).prop_map(Step::Read),
        1 => Just(Step::Close),
        2 => (1u64..3_000).prop_map(Step::Advance),
    ]
}

/// What the previous step left, for the invariants that compare steps.
#[derive(Default)]
struct Prev {
    /// The right edge of the advertised window once the connection has advertised one.
    rcv_adv: Option<SeqNumber>,
}

fn check_invariants(c: &Connection, prev: &mut Prev) {
    assert!(c.snd_una() <= c.snd_nxt(), "SND.UNA {} > SND.NXT {}", c.snd_una(), c.snd_nxt());
    let (rcv_adv, write_end, fin_queued, scoreboard) = c.invariant_state();
    // RFC 9293 §3.8.6.2.2: the right edge of the offered window never moves left.
    if c.is_established() {
        if let Some(p) = prev.rcv_adv {
            assert!(rcv_adv >= p, "window's right edge moved left: {p} -> {rcv_adv}");
        }
        prev.rcv_adv = Some(rcv_adv);
    }
    // Nothing is sent beyond what was written, plus the FIN.
    let limit = write_end + fin_queued as u32;
    if c.is_established() {
        assert!(c.snd_nxt() <= limit, "SND.NXT {} beyond the written data {write_end} (FIN {fin_queued})", c.snd_nxt());
    }
    // RFC 6675 §3: the scoreboard holds only data above SND.UNA that was sent.
    for (l, r) in scoreboard {
        assert!(
            c.snd_una() <= l && l < r && r <= c.snd_nxt(),
            "SACKed [{l}, {r}) outside [{}, {})",
            c.snd_una(),
            c.snd_nxt()
        );
    }
    // RFC 6675 SetPipe counts an unSACKed octet once, and a second time if it was retransmitted and not
    // deemed lost (a retransmission of data still in flight): pipe ≤ 2 × outstanding, and outside SACK
    // recovery (FlightSize) ≤ outstanding. The "pipe ≤ outstanding" cannot hold in recovery.
    let e = c.estats();
    let outstanding = (c.snd_nxt() - c.snd_una()) as u64;
    assert!(e.PipeSize <= outstanding * 2, "pipe {} beyond twice the flight {outstanding}", e.PipeSize);
    assert!(c.send_buffer_free() <= c.config().send_buffer.bytes());
    assert!(c.readable() <= c.config().recv_buffer.bytes() + 65_535, "readable {} beyond the buffer", c.readable());
    // RFC 5681 §3.1: the loss window is one SMSS, nothing goes below it.
    assert!(c.cwnd() >= c.smss(), "cwnd {} below one SMSS {}", c.cwnd(), c.smss());
}

fn drive(mut c: Connection, steps: Vec<Step>) {
    let mut now = Instant::from_nanos(1_000_000_000);
    let mut prev = Prev::default();
    for s in steps {
        match s {
            Step::Segment { seq_off, ack_off, flags, len, window, sack, ts } => {
                let mut blocks = SackBlocks::default();
                for (off, l) in sack {
                    let left = c.snd_una() + off as u32;
                    blocks.push(SackBlock { left, right: left + l });
                }
                let seg = TcpSegment {
                    src_port: REMOTE_PORT,
                    dst_port: LOCAL_PORT,
                    seq: c.rcv_nxt() + seq_off as u32,
                    ack: SeqNumber(c.snd_una().0.wrapping_add(ack_off as u32)),
                    flags: TcpFlags(flags),
                    window,
                    options: TcpOptions {
                        sack: blocks,
                        timestamps: ts.map(|(v, e)| Timestamps { tsval: v, tsecr: e }),
                        ..TcpOptions::default()
                    },
                    payload_len: len,
                    // Any ECN field, drawn from bits the case already varies.
                    ecn: tcplab_wire::EcnCodepoint::from_tos(window as u8),
                };
                c.on_segment(now, &seg);
            }
            Step::Write(n) => {
                c.send(n);
            }
            Step::Read(n) => {
                c.recv(n);
            }
            Step::Close => c.close(),
            Step::Advance(ms) => {
                now += Duration::from_millis(ms);
                if c.poll_timeout().is_some_and(|t| t <= now) {
                    c.on_timeout(now);
                }
            }
        }
        let mut n = 0;
        while c.poll_transmit(now, TxRoom::Free).is_some() {
            n += 1;
            assert!(n < 10_000, "poll_transmit never stops");
        }
        check_invariants(&c, &mut prev);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn established_client_survives_arbitrary_input(steps in proptest::collection::vec(step(), 1..60)) {
        drive(client_established(TcpConfig::default()), steps);
    }

    #[test]
    fn established_server_without_sack_survives_arbitrary_input(steps in proptest::collection::vec(step(), 1..60)) {
        let cfg = TcpConfig { sack: false, ack_policy: AckPolicy::Linux, send_buffer: ByteSize::new(8192), ..TcpConfig::default() };
        drive(server_established(cfg), steps);
    }

    #[test]
    fn established_linux_client_survives_arbitrary_input(steps in proptest::collection::vec(step(), 1..60)) {
        // RACK-TLP, SACK compression, PRR, undo, HyStart, cwv = linux.
        drive(client_established(TcpConfig::personality("linux").unwrap()), steps);
    }

    #[test]
    fn listener_survives_arbitrary_input(steps in proptest::collection::vec(step(), 1..30)) {
        drive(Connection::listen(TcpConfig::default(), REMOTE_PORT, 7), steps);
    }

    #[test]
    fn ecn_listener_survives_arbitrary_input(steps in proptest::collection::vec(step(), 1..60)) {
        // Random flags and ECN fields: ECN-setup SYNs, CE marks, ECE and CWR in any state.
        let cfg = TcpConfig { ecn: crate::EcnMode::On, ..TcpConfig::personality("linux").unwrap() };
        drive(Connection::listen(cfg, REMOTE_PORT, 7), steps);
    }
}
