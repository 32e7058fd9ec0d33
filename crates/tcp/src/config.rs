//! Every TCP knob, in one struct. Each field says what it means, its unit and default, and where it comes
//! from. Defaults are the `rfc` personality: the standards as written.

use serde::{Deserialize, Serialize};
use tcplab_units::{ByteSize, Duration, Rate};

use crate::congestion::{Abc, BbrFactory, ControllerFactory, CubicConfig, CubicFactory, RenoFactory};
pub use crate::ecn::EcnMode;
use crate::rtt::{RtoModel, RtoParams};

include!(concat!(env!("OUT_DIR"), "/knobs.rs"));

/// The knobs of one TCP endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// MSS option value we advertise, bytes (RFC 9293 §3.7.1): MTU minus 40 bytes of IPv4 and TCP header.
    /// Default 1460 (Ethernet MTU 1500). The payload per segment is this, minus 12 when timestamps are on.
    pub mss: ByteSize,
    /// Send buffer (SO_SNDBUF), bytes: how much unacknowledged plus unsent data the application may queue.
    /// Default 64KiB.
    pub send_buffer: ByteSize,
    /// What each segment queued in the send buffer is charged, bytes, as Linux charges an skb's `truesize`
    /// against SO_SNDBUF whatever it carries (0 = payload bytes only). Linux 2.2/2.4 `tcp_do_sendmsg` /
    /// `tcp_sendmsg` give a write that finds no unsent tail segment with room a new skb sized for a whole
    /// MSS (MAX_TCP_HEADER + 15 + mss_cache, about 1.8 KB with `struct sk_buff` for an Ethernet MSS) and
    /// append later writes to that unsent tail; a new skb is taken only while the charges are below
    /// `send_buffer` (`tcp_memory_free`, `sock_wmalloc`); an skb is freed when wholly acknowledged. So a
    /// NODELAY writer of 1-byte messages, each leaving as its own segment, blocks after about
    /// `send_buffer` / `send_buffer_truesize` unacknowledged segments. The send queue is counted as the
    /// unacknowledged segments (with `cwnd_unit = "packets"` exactly, else by SMSS) plus the unsent bytes
    /// in SMSS-sized skbs. Default 0.
    pub send_buffer_truesize: ByteSize,
    /// Receive buffer (SO_RCVBUF), bytes: the largest window this endpoint offers is this times
    /// `recv_window_ratio`. Default 64KiB.
    pub recv_buffer: ByteSize,
    /// The largest window offered, as a multiple of `recv_buffer`. Linux doubles SO_RCVBUF for its
    /// bookkeeping and offers the payload's share of the doubled buffer (`tcp_win_from_space` with the
    /// `scaling_ratio` measured from skb->len/truesize, 6.7+): about 62.5% for full segments, so 1.25 ×
    /// `recv_buffer` (measured on 6.18: 7,862,912 B for 6 MiB, 80,480 B for 64 KiB). Accepted 0.25 to 4.
    /// Default 1 (the buffer is the window, RFC 9293 §3.8.6).
    pub recv_window_ratio: f64,
    /// Linux `tcp_grow_window`: the offered window (rcv_ssthresh) starts at `recv_buffer` bytes (at the
    /// initial window under `rcv_ssthresh_from_initial_window`) and grows
    /// by twice the segment size with every in-order segment of at least 128 bytes, up to the largest
    /// window (`recv_window_ratio`), and every segment that grows it is acknowledged at once
    /// (`icsk_ack.quick |= 1`) so the sender learns of the larger window. With a window ratio above 1 the
    /// first (ratio − 1)·`recv_buffer`/(2·MSS) segments of a connection are each ACKed (543 for 6 MiB).
    /// Default off (the whole window from the start).
    pub grow_window: bool,
    /// Window scale option (RFC 7323 §2). Default on.
    pub window_scaling: bool,
    /// Timestamps option (RFC 7323 §3, §4): RTT measurement on every ACK and PAWS. Default on.
    pub timestamps: bool,
    /// Tick of the timestamp clock (RFC 7323 §5.4 allows 1 ms to 1 s). Default 1ms, as Linux.
    pub timestamp_tick: Duration,
    /// Selective acknowledgement (RFC 2018) with RFC 6675 loss recovery; without it, NewReno (RFC 6582).
    /// Default on.
    pub sack: bool,
    /// TCP_NODELAY: disables the Nagle algorithm (RFC 896, RFC 1122 §4.2.3.4). Default off (Nagle on).
    pub nodelay: bool,
    /// Minshall's Nagle variant: hold a short segment only while a previously sent *short* segment is
    /// unacknowledged (Linux `tcp_minshall_check`). Applies when Nagle is on. Default off.
    pub minshall: bool,
    /// Mentat's Nagle test (the STREAMS TCP of Solaris 2.x and, by descent, HP-UX 11): a short piece is
    /// held only while data is unacknowledged and the *last segment sent* was shorter than the Nagle
    /// limit, naglim = min(MSS, `tcp_naglim_def` = 4095). Solaris 2.5.1 `tcp.c` (1.156, 1996) `tcp_wput`
    /// and `tcp_wput_slow` ("last packet sent < nagle limit", `tcp_last_sent_len`); the same test in
    /// illumos `tcp_output.c` `tcp_wput_data`. So the short tail of a write that follows a full segment
    /// is never held, whether or not that segment has been acknowledged; a run of small writes waits
    /// for the ACK of the first. Applies when Nagle is on. Default off (RFC 896: any unacknowledged
    /// data holds a short segment).
    pub nagle_last_sent: bool,
    /// TSO/GSO as Linux sizes and defers it (`tcp_tso_autosize`, `tcp_tso_should_defer`, `tcp_write_xmit`):
    /// new data leaves in super-packets whose segments go out at one instant, as a kernel hands a
    /// 64 KiB GSO packet to a device faster than the path. A super-packet holds what cwnd and the peer's
    /// window allow, at most max(`min_tso_segs`, pacing rate × 2⁻¹⁰ s / SMSS) segments (plus `tso_max_size` >> (min RTT /
    /// 512 µs), Linux's `tcp_tso_rtt_log`) and at most `tso_max_size`; the pacing rate is max(cwnd, flight)
    /// / SRTT, × 2 in slow start below ssthresh/2, × 1.2 otherwise (`tcp_pacing_ss_ratio`/`_ca_ratio`).
    /// Outside recovery the sender waits for more ACKs instead of sending a smaller one while less than a
    /// full super-packet and less than a `tso_win_divisor`th of the window (a third) may go, the oldest
    /// outstanding segment's ACK is due within min(SRTT/2, 1 ms), and data was sent less than 1 ms ago
    /// (that send time comes from RACK's per-segment records: without `rack` super-packets are sized but
    /// never waited for). Counted in X_TsoBursts and X_TsoDeferrals. Default off (a segment per sending
    /// opportunity).
    pub tso: bool,
    /// The largest super-packet under `tso` (`gso_max_size`), bytes; a super-packet holds `min_tso_segs`
    /// segments even when they exceed it. Default 64KiB.
    pub tso_max_size: ByteSize,
    /// The fewest segments a super-packet under `tso` is sized for, whatever the pacing rate (Linux
    /// `tcp_min_tso_segs`, read by `tcp_tso_segs` → `tcp_tso_autosize`). Accepted 1 to 255 (Linux's
    /// range). Default 2 (Linux's default).
    #[serde(skip_serializing_if = "is_2")]
    pub min_tso_segs: u32,
    /// Under `tso`, the share of the window whose room ends a deferral: the sender sends at once when
    /// what cwnd and the peer's window allow is at least min(peer's window, cwnd) / this (Linux
    /// `tcp_tso_win_divisor`, read by `tcp_tso_should_defer`); 0 = send once more than 3 segments may go
    /// (`tcp_max_tso_deferred_mss`, "try not to defer past a single ACK"). Accepted 0 to 1000. Default 3
    /// (Linux's default).
    #[serde(skip_serializing_if = "is_3")]
    pub tso_win_divisor: u32,
    /// TCP_CORK: hold partial segments until a full one can be sent, the application closes, or 200 ms
    /// pass (Linux TCP_CORK ceiling). Default off.
    pub cork: bool,
    /// Receiver ACK policy (RFC 1122 §4.2.3.2, RFC 5681 §4.2, and the stacks in docs/scenario.md):
    /// `every` segment; `delayed` (every `ack_every` full-sized segments or the per-connection
    /// `delayed_ack_timeout`); `bsd` (4.4BSD: a global fast timer of `delayed_ack_timeout`, phase-locked,
    /// not per connection); `linux` (quickack budget, ATO adaptation 40–200 ms, pingpong mode, and an ACK
    /// when the application drains a short pushed segment outside pingpong mode, `tcp_cleanup_rbuf`);
    /// `linux-2.2` (Linux 2.2's `tcp_delack_estimator`: a quick ACK for the first segment only, then the
    /// ATO follows the data's interarrival time in `tick`s — half the old ATO plus the latest gap, the
    /// RTO if the gap exceeds it, at most `ato_min` after a short pushed segment — and the delayed ACK
    /// fires that many ticks after the current tick; an ACK at once only every two full segments or
    /// for out-of-order data; no ACK on read); `avoidance`
    /// (HP-UX-style: the deferral ramps from 2 to `deferred_ack_max` segments, reset by loss, hole fill or
    /// timer); `mentat` (the deferred ACK of Mentat's STREAMS TCP, Solaris 2.5.1 `tcp.c` 1.156 `tcp_rput`,
    /// `tcp_timer`, `tcp_rwnd_set`, counted in bytes as that code does: an ACK goes at once when the
    /// bytes unacknowledged reach `rack_cur_max`, which starts at 0 and grows by one MSS with every such
    /// ACK up to `rack_abs_max` = min(`deferred_ack_max`, receive window / MSS / 2) segments; a segment
    /// shorter than the MSS is ACKed at once only when the bytes already unacknowledged are neither 0
    /// nor a multiple of the MSS, else it starts the timer ("the tail piece of a transaction": the
    /// response will carry the ACK); any other segment starts the timer, `delayed_ack_timeout`
    /// (`tcp_deferred_ack_interval`); when it fires with more than one MSS unacknowledged, cur_max
    /// drops to one MSS and abs_max by one MSS (not below 2); out-of-order data drops cur_max to one
    /// MSS). Out-of-order data, hole fills and duplicates are acknowledged at once under every policy.
    /// Default `delayed`.
    pub ack_policy: AckPolicy,
    /// Delayed ACK (RFC 1122 §4.2.3.2, RFC 9293 §3.8.6.3): acknowledge every `ack_every` full-sized
    /// segments at once. 1 acknowledges every segment. Default 2.
    pub ack_every: u32,
    /// Delayed ACK timer: an ACK is sent at most this long after the first unacknowledged segment arrived
    /// (RFC 1122 §4.2.3.2: less than 0.5 s); under `bsd` the period of the global fast timer; under `linux`
    /// the upper bound on the ATO (TCP_DELACK_MAX). Default 200ms.
    pub delayed_ack_timeout: Duration,
    /// Under `ack_policy = "avoidance"`: the most full-sized segments acknowledged by one ACK (HP-UX
    /// `tcp_deferred_ack_max`, in segments); under `mentat`, the cap on `rack_abs_max` besides half the
    /// receive window (illumos `tcps_deferred_acks_max`). Default 22.
    pub deferred_ack_max: u32,
    /// Under `ack_policy = "linux"`: the smallest ATO, and the delayed-ACK timeout outside pingpong mode
    /// (TCP_ATO_MIN, HZ/25). Under `ack_policy = "linux-2.2"`: the ATO ceiling after a short pushed
    /// segment (HZ/50 in `tcp_remember_ack`). Default 40ms.
    pub ato_min: Duration,
    /// Under `ack_policy = "linux"`: out-of-order data refills the quick-ACK allowance (Linux
    /// `tcp_enter_quickack_mode` in `tcp_data_queue`, until 4.18), so the in-order data after a hole is
    /// ACKed segment by segment. Linux 4.18 stopped doing so. Default on.
    pub quickack_on_reorder: bool,
    /// SACK compression (Linux `tcp_comp_sack_nr`, since 4.18): while out-of-order data is queued, the first
    /// 3 duplicate ACKs for one RCV.NXT go at once (enough for the sender's DupThresh), then up to this many
    /// are replaced by one ACK sent `comp_sack_delay` (at most SRTT/20) later, carrying the latest SACK
    /// blocks. 0 = off (every out-of-order segment is ACKed at once, RFC 5681 §4.2). Counted in
    /// AcksCompressed. Default 0.
    pub comp_sack_nr: u32,
    /// The longest a compressed SACK waits (Linux `tcp_comp_sack_delay_ns`); the wait is also at most
    /// 5% of the smoothed RTT. Default 1ms.
    pub comp_sack_delay: Duration,
    /// Under SACK compression, the pending compressed ACK is sent at once when an out-of-order segment
    /// starts a new SACK block while this many blocks are held, or extends the block in this position of
    /// the receiver's array or a later one (0 is the latest touched), so that every block is reported in
    /// one of the first positions before it moves further down (Linux `tcp_sack_new_ofo_skb`,
    /// TCP_SACK_BLOCKS_EXPECTED = 2 since 5.8: "the max is 4, but this becomes 3 if TCP timestamps are
    /// there"; before 5.8 only a new block in a full array of TCP_NUM_SACKS = 4 sent it). With 4 (the
    /// array full) a block third or fourth in the array can fall out unreported while ACKs are
    /// compressed, and the sender retransmits data the receiver holds. Default 4.
    #[serde(skip_serializing_if = "is_4")]
    pub sack_blocks_expected: u32,
    /// Probability of acknowledging an in-order data segment at once, on top of the ACK policy, drawn from
    /// the connection's own random stream. Default 0.
    pub ack_immediate_p: f64,
    /// Initial congestion window (RFC 5681 §3.1): `rfc3390` (min(4·SMSS, max(2·SMSS, 4380 B))), `rfc6928`
    /// (min(10·SMSS, max(2·SMSS, 14600 B))), a segment count (`"10seg"`) or a size (`"4380B"`).
    /// Default `rfc3390`.
    pub initial_window: InitialWindow,
    /// Congestion control algorithm: `reno` (RFC 5681), `newreno` (RFC 5681 + RFC 6582), `cubic` (RFC 9438,
    /// with NewReno or SACK loss recovery), `bbr` (BBR v1 as Linux's `tcp_bbr.c`: paced at a gain of its
    /// bottleneck-bandwidth estimate, cwnd a gain of the BDP, in every recovery phase; docs/bbr.md).
    /// Default `newreno`.
    pub congestion_control: CongestionControlKind,
    /// CUBIC's parameters (RFC 9438 §4): `c` (0.4), `beta` (0.7), `fast_convergence` (true, §4.7),
    /// `reno_friendly` (true, §4.3), `alpha_switch` (true: α_cubic becomes 1 at cwnd_prior, §4.3; Linux
    /// keeps α constant), `hystart` (false: Linux's HyStart, ACK-train and delay detectors) with
    /// `hystart_ack_delta` (2ms), `growth_floor_before_loss` (false: Linux's 5% per RTT until the first
    /// loss), `whole_segments` (false: a congestion event in whole segments, ssthresh = ⌊⌊cwnd⌋·717/1024⌋
    /// as Linux's packet-counted `bictcp_recalc_ssthresh`). Default: the RFC's values.
    pub cubic: CubicConfig,
    /// Slow-start growth per ACK (RFC 3465 §2.2): `off` (+1 SMSS per ACK), `l1` (RFC 5681 (2):
    /// min(N, SMSS)), `l2` (min(N, 2·SMSS)), `unlimited` (N; Linux). Default `l1`.
    pub abc: Abc,
    /// Byte counting in congestion avoidance (RFC 3465 §2.1: +1 SMSS per cwnd of ACKed bytes) instead of
    /// RFC 5681 (3) per-ACK growth (+SMSS²/cwnd per ACK, which halves growth under delayed ACKs).
    /// Default off.
    pub abc_ca: bool,
    /// An ACK that advances SND.UNA grows cwnd by what it newly delivered, not by what it cumulatively
    /// acknowledged: bytes SACKed by an earlier ACK count when they were SACKed, not again when SND.UNA
    /// passes them, and bytes this ACK SACKs count now; without SACK each duplicate ACK since the last
    /// advance stands for one segment delivered (at least one segment counts). Linux `tcp_cong_control`
    /// grows by `acked_sacked` (the change in `tp->delivered`, `tcp_sacktag_one` and
    /// `tcp_add_reno_sack` / `tcp_remove_reno_sacks`) on an ACK with FLAG_DATA_ACKED
    /// (`tcp_may_raise_cwnd`). So after reordering fills a hole, the ACK grows cwnd by one segment, not
    /// by the hole plus the SACKed data above it. Off = by the bytes acknowledged (RFC 5681 §3.1).
    /// Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub cwnd_growth_delivered: bool,
    /// cwnd grows by one SMSS for each *packet* an ACK delivers, however short: a segment (or each
    /// SMSS-sized part of a TSO super-packet, rounded up) counts whole, as Linux counts cwnd growth in
    /// packets. `tcp_clean_rtx_queue` (net/ipv4/tcp_input.c) adds `tcp_skb_pcount` of every fully
    /// acknowledged skb (and what `tcp_tso_acked` trims off a partly acknowledged one) to `tp->delivered`,
    /// and `tcp_ack` hands `tcp_cong_control` the change (`acked_sacked`), which `tcp_slow_start` and
    /// `tcp_cong_avoid_ai` add in packets. So the ACK of a response's 1448-byte segment and its 952-byte
    /// tail grows cwnd by 2 segments in slow start, not by 2400 bytes. Applies to the cumulatively
    /// acknowledged part where RACK keeps the transmitted segments (the `linux` personality); what SACK
    /// blocks newly cover still counts in bytes. Off = by bytes. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub cwnd_growth_packets: bool,
    /// The ACK that ends a SACK recovery or a CWR reduction also grows cwnd, from ssthresh, by what it
    /// delivered, as Linux's `tcp_ack` does: `tcp_fastretrans_alert` ends the reduction
    /// (`tcp_end_cwnd_reduction`, the state Open again) before `tcp_cong_control`, which then grows
    /// (`tcp_cong_avoid`). Off: that ACK leaves cwnd at ssthresh (as 2.4's `tcp_may_raise_cwnd`, tested
    /// before the state changes, did). Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub cwnd_growth_at_reduction_end: bool,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2, RFC 6675 DupThresh). Default 3.
    pub dupthresh: u32,
    /// Restart after idle (RFC 5681 §4.1): when data has not been sent for more than an RTO and nothing is
    /// outstanding, cwnd = min(IW, cwnd) before sending again (counted in OtherReductions). Default on.
    pub slow_start_after_idle: bool,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) for what may be sent during SACK recovery: the
    /// reduction to ssthresh is spread over the ACKs of the recovery, instead of RFC 6675's cwnd − pipe,
    /// which can release a burst of retransmissions at once. Default off.
    pub prr: bool,
    /// Under `prr`, the slow-start reduction bound (RFC 6937 §3, pipe at or below ssthresh) as Linux's
    /// `tcp_cwnd_reduction` has it: max(prr_delivered − prr_out, DeliveredData), plus one segment only
    /// on an ACK that advances SND.UNA and marks nothing newly lost (RACK). Off = RFC 6937's bound, plus
    /// one SMSS on every ACK. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub prr_ssrb_advance_only: bool,
    /// Under `prr`, a CWR reduction (an ECN-Echo, RFC 3168 §6.1.2; a full interface queue under
    /// `ifq_full = "cwr"`) spread over the ACKs that follow by PRR (RFC 6937 §3's rule, as `prr` sizes SACK
    /// recovery, from RecoverFS = the flight at the signal) until the data then outstanding is
    /// acknowledged, as Linux's `tcp_cwnd_reduction` does in CA_CWR, with its one segment on the first ACKs
    /// until one has gone. Off: cwnd is ssthresh at once (RFC 3168 §6.1.2 halves it) and the sender waits
    /// for the flight to fall below it (half a round trip after a halving, about a third after CUBIC's
    /// 0.7). Not with a controller that owns the window (BBR), nor under `ifq_full = "linux-2.4"`, whose
    /// CWR is 2.4's own. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub prr_cwr: bool,
    /// Under `prr`, PRR's arithmetic as Linux's `tcp_cwnd_reduction` does it: in whole segments (what an
    /// ACK delivered, prr_delivered, prr_out, the pipe and ssthresh counted in SMSS, the proportional part
    /// rounded up to a segment), from RecoverFS = cwnd when the reduction began (`prior_cwnd`) rather than
    /// the flight. So an ACK whose share is 1.4 segments lets 2 go where bytes let 1 and carry 0.4 over.
    /// Off: RFC 6937 §3 in bytes, RecoverFS = FlightSize. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub prr_packets: bool,
    /// Undo a fast recovery shown spurious by D-SACK (RFC 3708 detection, RFC 4015 / RFC 9438 §4.9 response;
    /// Linux `tcp_try_undo_dsack`): when every retransmission of the episode is reported as a duplicate,
    /// cwnd and ssthresh return to their values before it, counted in CongOverCount. Default off.
    pub undo: bool,
    /// Detect lost retransmissions during SACK recovery (Linux `tcp_mark_lost_retrans`): when DupThresh
    /// segments sent after a retransmission are SACKed and it is still missing, retransmit it again
    /// instead of waiting for the RTO. RFC 6675 has no such rule. Default off.
    pub lost_retransmit_detection: bool,
    /// Limited transmit (RFC 3042): send new data on the first two duplicate ACKs. Default on.
    pub limited_transmit: bool,
    /// Set ssthresh on a congestion event from cwnd, as Linux's congestion modules do (`tcp_reno_ssthresh`,
    /// CUBIC's `bictcp_recalc_ssthresh`: cwnd·β), instead of from FlightSize (RFC 5681 (4), RFC 9438 §4.6).
    /// They differ after a recovery: data sent while lost segments were still counted outstanding can
    /// leave FlightSize above cwnd, and a FlightSize-based ssthresh then ratchets cwnd up from one
    /// recovery to the next. Default off.
    pub ssthresh_from_cwnd: bool,
    /// Restart the retransmission timer whenever the first unacknowledged segment is retransmitted in
    /// fast recovery (Linux `tcp_xmit_retransmit_queue`), so that the RTO runs from the retransmission;
    /// RFC 6298 (5.3) restarts it only on ACKs of new data. Default off.
    pub rto_rearm_on_retransmit: bool,
    /// Keep the SACK scoreboard across a retransmission timeout (Linux `tcp_timeout_mark_lost` keeps
    /// SACKed segments unless the receiver reneged), so the go-back-N retransmission skips data the
    /// receiver holds. Off discards it, as RFC 6675 §5.1 and RFC 2018 §8 advise (the receiver may renege).
    /// Default off.
    pub keep_sack_on_rto: bool,
    /// RACK loss detection (RFC 8985 §6; Linux since 4.18): a segment is lost once a segment sent after
    /// it was delivered (ACKed or SACKed) and more than RACK.rtt plus a reordering window has passed
    /// since it was sent. The window is zero until reordering is seen (then DupThresh SACKed segments
    /// start recovery at once, as RFC 6675 does), else min_RTT/4, widened by one step per round trip
    /// with D-SACK (§6.2 step 4), at most SRTT. It replaces RFC 6675's IsLost and DupAck count for
    /// entering recovery and choosing retransmissions, and finds lost retransmissions by itself. Needs
    /// SACK. Counted in RackMarkedLost. Default off.
    pub rack: bool,
    /// Tail loss probe (RFC 8985 §7): when nothing is ACKed for a probe timeout PTO = 2·SRTT (plus
    /// `tlp_max_ack_delay` when one segment is in flight; at most the RTO), send one segment — new data
    /// if the peer's window allows, else the last segment again — regardless of cwnd, so that the ACK
    /// lets RACK repair a tail loss without a timeout. A probe that turns out to have repaired a loss
    /// reduces cwnd (§7.4). Needs `rack`. Counted in LossProbes and LossProbeRecoveries. Default off.
    pub tlp: bool,
    /// Worst-case delayed-ACK time added to the PTO when a single segment is in flight (RFC 8985 §7.2
    /// WCDelAckT; Linux adds TCP_RTO_MIN, 200 ms). Default 200ms.
    pub tlp_max_ack_delay: Duration,
    /// Added to the PTO when more than one segment is in flight, where RFC 8985 §7.2 adds nothing, and
    /// to the RACK reordering timer (§6.3): Linux's `TCP_TIMEOUT_MIN_US`, 2 ms since 6.7
    /// (`tcp_schedule_loss_probe`, `tcp_rack_mark_lost`; two jiffies before), so that a timer of a
    /// short RTT does not fire before an ACK held up by the receiver's softirq or the link's jitter.
    /// Measured through the kernel backend on 6.18 (HZ=250): with SRTT 5 ms the probe went 16.3–16.6 ms
    /// after the last ACK, where 2·SRTT rounded to jiffies gives 12 ms. Default 0s.
    #[serde(skip_serializing_if = "is_zero_duration")]
    pub timeout_min: Duration,
    /// Under `rack`, a D-SACK is evidence of reordering only where it reports a retransmitted segment
    /// above SND.UNA that was already SACKed (the original came late: Linux `tcp_sacktag_one` sets
    /// `state->reord` only for `TCPCB_SACKED_ACKED | TCPCB_RETRANS`; a D-SACK below SND.UNA never reaches
    /// it), and it widens RACK's reordering window only once reordering was seen and when it does not
    /// report the tail loss probe (Linux 5.15, `tcp_dsack_seen`: "RACK ignores DSACKs that happen without
    /// having seen reordering, or that match TLP probes"). Off = RFC 8985 §6.2 step 4 as written: every
    /// D-SACK round widens the window, and a D-SACK of data below RACK.fack counts as reordering, so on a
    /// lossy path without reordering one needless retransmission holds every later loss back by up to
    /// SRTT. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub rack_dsack_after_reordering: bool,
    /// Under `rack`, RACK.rtt is set by every segment an ACK newly delivers, SACKed ones first and then
    /// the cumulatively acknowledged ones, each in sequence order, so that it ends as the RTT of the last
    /// one processed; RACK.xmit_ts/end_seq still advance only to a segment sent later (Linux 6.18
    /// `tcp_rack_advance`, called from `tcp_sacktag_one` and `tcp_clean_rtx_queue`). Off = RFC 8985 §6.2
    /// step 2, which walks the segments in transmit order: RACK.rtt is the most recently sent segment's.
    /// Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub rack_rtt_every_delivery: bool,
    /// The RTT estimator behind the RTO: `rfc6298` (SRTT/RTTVAR, RTO = SRTT + max(G, 4·RTTVAR)), `linux`
    /// (mdev with the 1/32 gain on falling RTT, rttvar the per-RTT maximum floored at `rto_min`, and the RTO
    /// their sum), `rfc793` (RTO = β·SRTT, RFC 793 §3.7), `mills` (RFC 889: SRTT follows increases faster
    /// than decreases). Default `rfc6298`.
    pub rto_model: RtoModel,
    /// The estimators' gains (`rfc6298_alpha` 1/8, `rfc6298_beta` 1/4, `rfc6298_k` 4, `rfc793_alpha` 0.875,
    /// `rfc793_beta` 2.0, `mills_gain_up` 1/4, `mills_gain_down` 1/16: RFC 889's). Default: those values.
    pub rto_params: RtoParams,
    /// Which ACKs give RTT samples: `auto` (every ACK of new data by the timestamp echo when timestamps are
    /// on, RFC 7323 §4; else one timed segment per RTT, never a retransmitted one: Karn's rule, RFC 6298 §3);
    /// `karn` (one timed segment per RTT even with timestamps); `every_ack` (every ACK of new data, timed
    /// from the first transmission of the newest segment it covers, retransmissions included: the RTT
    /// feedback that Karn's rule avoids); `linux` (Linux's `tcp_clean_rtx_queue` and `tcp_ack_update_rtt`,
    /// whatever the options: every ACK, timed from the first transmission of the oldest segment it
    /// acknowledges unless one of them was ever retransmitted, Karn's rule per segment; else from the
    /// oldest never-retransmitted segment it newly SACKed, on an ACK that advances nothing too; else from
    /// the timestamp echo; congestion control's HyStart and RACK's minimum RTT take the newest such
    /// segment's RTT, `ca_rtt_us`). Under every policy but `linux`'s SACK samples only an ACK that advances
    /// SND.UNA gives a sample, so an ACK that arrives out of order (behind a later one) never does: its
    /// samples are always discarded. Default `auto`.
    pub rtt_sampling: RttSampling,
    /// RTO before the first RTT sample (RFC 6298 (2.1)). Default 1s.
    pub rto_initial: Duration,
    /// Lower bound on the RTO (RFC 6298 (2.4): 1 s; Linux 200 ms). Default 1s.
    pub rto_min: Duration,
    /// Upper bound on the RTO (RFC 6298 (2.5): at least 60 s). Default 60s.
    pub rto_max: Duration,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR) (RFC 6298 §2). Default 1ms.
    pub clock_granularity: Duration,
    /// What the sender does when the host's interface queue is full: `block` (wait for room, count
    /// SendStall), `cwr` (also enter CWR: a multiplicative decrease from cwnd at once, counted in
    /// SendStall and CongSignals once per window), `linux-2.4` (CWR as Linux 2.4 and web100 2.x did it:
    /// `tcp_enter_cwr` sets ssthresh = max(cwnd/2, 2) segments and cwnd = min(cwnd, in flight + 1);
    /// `tcp_cwnd_down` then takes one segment off cwnd per two ACKs while cwnd > ssthresh/2, keeping
    /// cwnd ≤ in flight + 1; when SND.UNA passes SND.NXT of the entry, `tcp_complete_cwr` sets cwnd =
    /// min(cwnd, ssthresh), so cwnd may slow-start back up to ssthresh; web100 counts CongSignals on every
    /// refusal, `web100_update_congestion` being called unconditionally from `tcp_enter_cwr`), `drop`
    /// (send anyway; the interface drops the segment and loss recovery repairs it). Default `block`.
    pub ifq_full: IfqFull,
    /// Congestion window validation: `off`; `rfc2861` (RFC 2861 §3: when application-limited for an RTO,
    /// cwnd = (cwnd + used)/2, counted in OtherReductions; no cwnd growth while not cwnd-limited). The
    /// RFC's ssthresh = max(ssthresh, ¾cwnd) is not applied: the controller owns ssthresh); `rfc7661`
    /// (New-CWV: pipeACK = the most data ACKed in one RTT over the last max(3·SRTT, 1 s); while pipeACK <
    /// ½cwnd the sender is in the non-validated phase: cwnd does not grow, after 5 minutes of it cwnd =
    /// max(½cwnd, IW), and a loss sets the window from (max(pipeACK, FlightSize) − lost)/2); `linux`
    /// (RFC 2861 as Linux's `tcp_cwnd_application_limited` does it: once per RTO while limited by the
    /// application or the receive window, ssthresh = max(ssthresh, ¾cwnd) and cwnd = (cwnd + max(used,
    /// IW))/2, whole segments when `cwnd_unit = "packets"`; not while the send buffer is full, and only
    /// outside recovery); `linux-2.4` (Linux 2.4: `tcp_cwnd_application_limited` as under `linux` but
    /// with the window used counted as at least 2 segments, not IW, and cwnd grown only on an ACK for
    /// which the packets in flight before it were at least cwnd, `tcp_ack`'s `prior_in_flight >=
    /// snd_cwnd`, in slow start as in congestion avoidance). Default `off`.
    pub cwv: Cwv,
    /// Linux 2.4 cwnd moderation (`tcp_moderate_cwnd`): cwnd = min(cwnd, in flight + `max_burst`
    /// segments), counted in OtherReductions, where 2.4 calls it from `tcp_try_to_open`: on a "dubious"
    /// ACK in the open state (one that acknowledges nothing new, carries no data and leaves the window
    /// unchanged, or brings new SACK information; `tcp_ack_is_dubious`) and on the ACK that ends a CWR,
    /// a fast recovery or the recovery after a timeout. An ordinary ACK of new data in the open state is
    /// not moderated. 0 = off. Default 0.
    pub max_burst: u32,
    /// Whether cwnd counts packets (Linux: slow start +1 segment per ACK, congestion avoidance +1 segment
    /// per cwnd ACKs, cwnd a whole number of segments) or bytes (the RFCs). Default `bytes`.
    pub cwnd_unit: CwndUnit,
    /// Slow start also when cwnd equals ssthresh: cwnd grows by one segment on the ACK that finds cwnd =
    /// ssthresh, counted in SlowStart, as Linux 2.2 (`tcp_cong_avoid`) and 2.4 (`reno_cong_avoid`: "if
    /// (tp->snd_cwnd <= tp->snd_ssthresh)", the "safe" area) did; so after every CWR or recovery that
    /// `tcp_complete_cwr` ends at cwnd = ssthresh, the first growth is a slow-start step. Off = slow start
    /// only below ssthresh (RFC 5681 §3.1 lets either algorithm run at equality; current Linux's
    /// `tcp_in_slow_start` tests `<`). Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub slow_start_at_ssthresh: bool,
    /// Timer granularity: every protocol timer fires on a multiple of this tick (0 = exact; 10ms for a
    /// HZ=100 kernel, 4ms for HZ=250; 200ms/500ms for the BSD fast/slow timers). Under the `linux` ACK
    /// policy the ATO and the pingpong test count whole ticks too (jiffies). Default 0.
    pub tick: Duration,
    /// How long a connection stays in TIME-WAIT (RFC 9293 §3.6: 2·MSL). Default 60s (Linux).
    pub time_wait: Duration,
    /// The buffer space the window scale shift is chosen for, bytes: the smallest shift that fits it in
    /// the 16-bit window field (RFC 7323 §2.3). Linux's `tcp_select_initial_window` uses the largest
    /// receive buffer autotuning may reach, max(`tcp_rmem[2]`, `rmem_max`) (6 MiB by default: shift 7),
    /// not the buffer the connection starts with. 0 = the largest window `recv_buffer` ×
    /// `recv_window_ratio` offers. Default 0.
    #[serde(skip_serializing_if = "is_zero_bytes")]
    pub wscale_space: ByteSize,
    /// How many times a SYN (or SYN-ACK) is retransmitted before the open fails with ETIMEDOUT (Linux
    /// `tcp_syn_retries` and `tcp_synack_retries`, 6 and 5 by default; RFC 9293 §3.8.3 R2 asks for at
    /// least 3 minutes). 0 = no limit. Default 0.
    #[serde(skip_serializing_if = "is_zero_u32")]
    pub syn_retries: u32,
    /// Under `ack_policy = "linux"`: a FIN that closes the peer's side of an established connection,
    /// after data was received, puts the receiver in interactive (pingpong) mode and is ACKed by the
    /// delayed-ACK timer (the ATO, 40 ms after a first exchange) unless more than a segment awaits
    /// its ACK; before any data the ATO is 0 and the ACK goes at once (Linux `tcp_fin` calls
    /// `inet_csk_schedule_ack` and `inet_csk_enter_pingpong_mode`; `__tcp_ack_snd_check` then takes the
    /// delayed path). Off = every FIN is ACKed at once. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub fin_delayed_ack: bool,
    /// A segment that fills a hole and also carries out-of-order data already held is reported with a
    /// D-SACK block for the first such held range, up to the segment's end (RFC 2883 §4; Linux
    /// `tcp_ofo_queue` → `tcp_dsack_extend`, as fixed in 6.16). Off = only the part below RCV.NXT is
    /// reported. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub dsack_covered_ooo: bool,
    /// Explicit Congestion Notification (RFC 3168 §6.1), with the values of Linux's `net.ipv4.tcp_ecn`:
    /// `off` (0: never), `on` (1: ask for it in the SYN with ECE and CWR, and accept it), `accept` (2: accept
    /// an ECN-setup SYN, never ask; Linux's default since 2.6.31). On a connection that uses it, new data
    /// goes out ECT(0) (never retransmissions, pure ACKs, SYNs or window probes), a CE-marked data segment
    /// makes the receiver set ECE on every segment until one with CWR arrives, and ECE reduces cwnd as a
    /// fast retransmit would, at most once per window of data, CWR riding on the next new data; a SYN sent
    /// again asks no more (`tcp_ecn_fallback`). Counted in ECNsignals, CERcvd, ECESent; docs/ecn.md.
    /// Default `off` (RFC 3168 is optional to RFC 9293 and later than the stacks of the old personalities).
    #[serde(skip_serializing_if = "EcnMode::is_off")]
    pub ecn: EcnMode,
    /// The segment that carries the FIN is never held by Nagle: close() or shutdown() sends a short
    /// queued tail at once, whatever is unacknowledged (Linux `tcp_nagle_test`: "Don't use the nagle
    /// rule for ... the final FIN"; `tcp_send_fin` pushes with TCP_NAGLE_OFF). Off = Nagle holds it as
    /// any short segment until the outstanding data is acknowledged. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub fin_ends_nagle: bool,
    /// A FIN with no data left to carry goes whatever cwnd allows: close() or shutdown() with a full
    /// window sends the FIN alone at once (Linux `tcp_cwnd_test`: "Don't be strict about the congestion
    /// window for the final FIN"). Off = the FIN waits until cwnd has room for a segment. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub fin_ignores_cwnd: bool,
    /// A SACK block counts only for the segments it covers whole (as sent, RACK's records): the part of
    /// a segment it covers is not SACKed, so that segment is retransmitted whole (Linux
    /// `tcp_match_skb_to_sack` splits an skb at whole-MSS boundaries only; a block of less than a
    /// segment marks nothing). Without `rack` it has no effect. Off = the scoreboard takes the bytes the
    /// block names. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub sack_whole_segments: bool,
    /// Under TCP_CORK, a corked short segment leaves when the zero-window probe timer fires, max(RTO,
    /// `rto_min`) after the push that found nothing in flight (Linux has no cork timer: `tcp_push` →
    /// `tcp_check_probe_timer` arms ICSK_TIME_PROBE0 at `tcp_probe0_base`, and `tcp_write_wakeup` sends
    /// the segment; tcp(7)'s "200 millisecond ceiling" is TCP_RTO_MIN). Off = 200 ms. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub cork_ceiling_rto: bool,
    /// TS.Recent is taken only from a segment whose ACK is not beyond SND.NXT: such a segment is dropped
    /// before its timestamp counts (Linux `tcp_ack` refuses it ahead of `tcp_replace_ts_recent`), so a
    /// stray or forged TSval cannot make PAWS refuse the peer's real segments. Off = RFC 7323 Appendix D
    /// (R3): the TSval is recorded when the segment passes the sequence check, before the ACK check.
    /// Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub ts_recent_needs_valid_ack: bool,
    /// The window a SYN or SYN-ACK offers is the receive space (`recv_buffer`) rounded down to a whole
    /// number of the segments this end expects, then capped at 65,535 bytes; RCV.ADV starts there. The
    /// segment is our MSS, less the timestamp option when a passive open agreed to it (Linux
    /// `tcp_select_initial_window`: "Quantize space offering to a multiple of mss if possible", called
    /// with `advmss` by `tcp_connect_init` and with `mss - TCPOLEN_TSTAMP_ALIGNED` by
    /// `tcp_openreq_init_rwin`: SO_RCVBUF 20000 offers 18980 = 13 × 1460). Off = the space itself, at
    /// most 65,535 bytes. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub initial_recv_window_whole_mss: bool,
    /// A segment that begins inside the window and ends past its right edge is taken whole when no
    /// received data waits to be read; the window then offers nothing until the application reads (Linux
    /// `tcp_sequence`: "Only accept this packet if receive queue is empty", and `tcp_data_queue` queues
    /// the whole skb); an out-of-order one is queued whole on the same condition (`tcp_data_queue_ofo`
    /// keeps the skb as it came, bounded by `tcp_try_rmem_schedule`). With data waiting to be read such
    /// a segment is dropped whole and answered with a duplicate ACK (`tcp_sequence`:
    /// SKB_DROP_REASON_TCP_INVALID_END_SEQUENCE). Off = the part past the edge is trimmed (RFC 9293
    /// §3.10.7.4). Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub whole_segment_past_window: bool,
    /// A FIN may lie past the window: a bare FIN to a closed window is taken and ACKed at once, the window
    /// still 0 (Linux 6.x `tcp_sequence` checks the end less the FIN: "Some stacks are known to handle
    /// FIN incorrectly"; `tcp_data_queue` queues a zero-length FIN at a zero window, and with the buffer
    /// full `tcp_try_rmem_schedule` fails and asks for an immediate ACK). Off = RFC 9293 §3.10.7.4: the
    /// FIN counts as a byte of the segment, which a zero window refuses. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub fin_past_window: bool,
    /// Who paces (Linux `sk_pacing_status`): `auto` paces a connection only when its congestion controller
    /// asks for it (BBR, `SK_PACING_NEEDED`) or `max_pacing_rate` is set, as Linux's internal pacing
    /// (`tcp_needs_internal_pacing`) does on a qdisc without pacing (pfifo_fast, the default): CUBIC and
    /// Reno are not paced; `fq` paces every connection, as the fq qdisc on the sender's interface does
    /// (`SK_PACING_FQ`). A paced data segment leaves no earlier than the last one's departure plus its
    /// length at the pacing rate, from the 10th data segment on (`tcp_update_skb_after_send`). Counted in
    /// X_PacingRate. Default `auto`.
    #[serde(skip_serializing_if = "Pacing::is_auto")]
    pub pacing: Pacing,
    /// SO_MAX_PACING_RATE: the most the pacing rate may be (a rate such as "50mbit"; Linux takes bytes per
    /// second, this the same rate in bits). Setting it turns pacing on for any controller, as the socket
    /// option does (`SK_PACING_NEEDED`). Default unset (no cap, no pacing of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pacing_rate: Option<Rate>,
    /// Linux `tcp_pacing_ss_ratio`, percent: the pacing rate of a controller that sets none, while cwnd is
    /// below half of ssthresh (slow start), is this share of cwnd per SRTT (`tcp_update_pacing_rate`); it
    /// also sizes TSO bursts. Accepted 1 to 10000. Default 200.
    #[serde(skip_serializing_if = "is_200")]
    pub pacing_ss_ratio: u32,
    /// Linux `tcp_pacing_ca_ratio`, percent: the same share after slow start. Accepted 1 to 10000.
    /// Default 120.
    #[serde(skip_serializing_if = "is_120")]
    pub pacing_ca_ratio: u32,
    /// TCP Small Queues (Linux `tcp_limit_output_bytes`, `tcp_small_queue_check`): the most bytes of an
    /// unpaced connection waiting in its host's interface queue (for a paced one the autosized limit
    /// alone applies); the limit is max(2 segments, ~1 ms at the pacing rate) below this, doubled for a
    /// retransmission, and a connection with one segment outstanding is never held. A held sender goes
    /// on at the interface's transmit completion (counted in X_TsqThrottled). It matters only where the
    /// host's NIC is slower than the sender (`host.nic_rate`). 0 = off. Default 0 (`linux`: 4MiB, the
    /// default of Linux 6.18, 1MiB in 4.19–6.8, 256KiB before).
    #[serde(skip_serializing_if = "is_zero_bytes")]
    pub limit_output_bytes: ByteSize,
    /// Bound what a congestion event halves by the peer's offered window in whole segments, as Linux 2.2's
    /// `tcp_recalc_ssthresh` (2.2 `include/net/tcp.h`: ssthresh = max(min(snd_wnd / mss, snd_cwnd) / 2, 2),
    /// called by `tcp_fast_retrans` and `tcp_retransmit_timer`): with `ssthresh_from_cwnd` the base is
    /// min(cwnd, window), without it min(FlightSize, window). Linux 2.4 dropped the window term. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub ssthresh_within_window: bool,
    /// The receiver's estimate of the peer's segment size (rcv_mss: delayed-ACK thresholds, window
    /// growth steps, the window's SWS rule) starts at min(MSS, the agreed send MSS, half the initial
    /// window, 536 bytes), at least 88 (Linux `tcp_initialize_rcv_mss`: TCP_MSS_DEFAULT and TCP_MIN_MSS,
    /// "a guess that the peer's segments are small until seen"), and a segment (or a GRO packet's
    /// `gso_size`) at least that large sets it, at most to `mss` (`tcp_measure_rcv_mss`:
    /// `min(len, advmss)`). So a connection that receives no data keeps 536. Off = the agreed MSS from
    /// the handshake, raised by any larger segment. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub rcv_mss_estimate_from_536: bool,
    /// With `grow_window`, the offered window's ceiling while it grows (rcv_ssthresh) starts at the
    /// receive space at the handshake (`tcp_connect_init`, `tcp_create_openreq_child`: rcv_ssthresh =
    /// rcv_wnd; since Linux 6.10, commit 378979e94e95 "tcp: remove 64 KByte limit for initial
    /// tp->rcv_wnd value", rcv_wnd is the whole space and only the SYN's unscaled field is held to
    /// 65535; 4.19–6.9 held rcv_wnd itself to 64 KiB), at most `recv_buffer` less one MSS and at least two MSS (`tcp_init_buffer_space`:
    /// window_clamp is the full space less one `advmss`, "Force reservation of one segment", and
    /// rcv_ssthresh is clamped to it). Growth then runs up to the largest window as before: Linux lifts
    /// the clamp when the first data measures `scaling_ratio` (`tcp_measure_rcv_mss` →
    /// `tcp_set_window_clamp`), which `recv_window_ratio` stands for. Off = rcv_ssthresh starts at
    /// `recv_buffer`. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub rcv_ssthresh_from_initial_window: bool,
    /// With `grow_window` and SACK, an out-of-order segment grows rcv_ssthresh as an in-order one does
    /// (by twice its length or the MSS, up to the largest window), whatever its size, and is then
    /// acknowledged at once even where SACK compression would hold its ACK (Linux `tcp_data_queue_ofo`
    /// calls `tcp_grow_window` for SACK flows both where the segment is queued and where it is
    /// coalesced with the last queued one, and `tcp_grow_window` sets `icsk_ack.quick`, which
    /// `__tcp_ack_snd_check` serves before compression; "For non sack flows, do not grow window to force
    /// DUPACK"). Off = only in-order data grows it. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub grow_window_out_of_order: bool,
    /// Which acknowledgments DupAcksIn counts: `rfc5681` (RFC 5681 §2's duplicate ACK: no data, no
    /// SYN or FIN, ACK = SND.UNA with data outstanding and the window unchanged; with SACK, RFC 6675's
    /// ACK bringing new SACK information) or `web100` (as the web100 kernel patch counted it: every
    /// segment without payload whose ACK equals SND.UNA as the segment arrives, before it is processed,
    /// window updates and ACKs with nothing outstanding included; `web100_update_segrecv`, called from
    /// `tcp_v4_rcv` before `tcp_v4_do_rcv` and so before `tcp_ack` moves SND.UNA; the same rule in
    /// web10g's `tcp_estats_update_segrecv`). Only the counter changes, not the sender's reaction to
    /// duplicates. Default `rfc5681`.
    #[serde(skip_serializing_if = "DupAcksIn::is_rfc5681")]
    pub dup_acks_in: DupAcksIn,
    /// An ACK more than min(largest window the peer offered, bytes acknowledged so far) below SND.UNA is
    /// answered with a challenge ACK and its segment dropped, data, FIN and timestamp with it: the
    /// blind data injection mitigation of RFC 5961 §5.2 with Linux 6.7's bound (commit 3d501dd326fb,
    /// "tcp: do not accept ACK for bytes we never sent", in `tcp_ack`: `max_window` becomes
    /// min(`tp->max_window`, `tp->bytes_acked`), so a connection that has had nothing acknowledged
    /// accepts no ACK below SND.UNA at all; `bytes_acked` counts an active open's SYN, not a passive
    /// open's). Not modelled: `tcp_send_challenge_ack`'s rate limits, and Linux's header-prediction
    /// fast path, which takes in-order data without this check. Off = an ACK below SND.UNA is ignored
    /// and the segment processed (RFC 9293 §3.10.7.4). Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub too_old_ack_challenged: bool,
    /// F-RTO, the SACK-enhanced detection of spurious retransmission timeouts (RFC 5682 §3, as Linux runs
    /// it with `net.ipv4.tcp_frto` = 2: `tcp_enter_loss` arms it unless the timeout interrupts a fast
    /// recovery, `tcp_process_loss` decides). After the timeout's retransmission, the first ACK that
    /// advances SND.UNA sends new data instead of more retransmissions (step 2.b); an ACK of data that
    /// was never retransmitted then shows the timeout spurious and `tcp_try_undo_loss` restores cwnd and
    /// ssthresh (step 3.b, counted in CongOverCount); a duplicate or SACKing ACK means the loss was real
    /// and recovery goes on as without F-RTO (step 3.a). Step 3.b's proof is Linux's
    /// `FLAG_ORIG_SACK_ACKED`: never-retransmitted data at or below the timeout's SND.NXT, cumulatively
    /// acknowledged or newly SACKed. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub frto: bool,
    /// The receiver accounts its memory by skb truesize as Linux 6.x does, and offers the window that
    /// memory leaves. Every segment queued, in order or out of order, is charged its payload plus
    /// `rcv_skb_overhead` (`skb_set_owner_r`, `tcp_try_coalesce`) against a receive memory of twice
    /// `recv_buffer` (`sk_rcvbuf` is the doubled SO_RCVBUF, `sock_setsockopt`), until the application
    /// reads it; a duplicate adds nothing. Memory is converted to window with `scaling_ratio`
    /// (`tcp_win_from_space`: space × ratio / 256), which starts at 128 (6.11's
    /// `TCP_DEFAULT_SCALING_RATIO`) and is measured from a segment's payload / truesize whenever the
    /// peer's segment size estimate changes (`tcp_measure_rcv_mss`, called for out-of-order segments
    /// too since 6.16); a changed ratio moves `window_clamp` to the full space it gives
    /// (`tcp_set_window_clamp`: rcv_ssthresh lifted to the current window when it grows, lowered to it
    /// when it shrinks). rcv_ssthresh grows only into min(`window_clamp`, free space) and only for a
    /// segment whose truesize the window could carry (`tcp_grow_window` checks #1 and #2, by
    /// max(2 advmss, 2 × length)); the window offered is min(free space, rcv_ssthresh), rounded down to
    /// the scale and 0 when less than an MSS or 1/16 of the full space once below half of it
    /// (`__tcp_select_window`, `tcp_space`, `tcp_full_space`), and the right edge never moves left. So
    /// out-of-order data held while a hole is repaired stops the edge, and the window shrinks as the
    /// repairs advance RCV.NXT. Not modelled: pruning and collapsing (`tcp_prune_queue`,
    /// `tcp_collapse`, `tcp_clamp_window`: the window keeps the sender below the memory, so they are not
    /// reached), memory pressure, and receive buffer autotuning (`tcp_rcv_space_adjust`). Off = the
    /// window is `recv_buffer` × `recv_window_ratio` less the unread bytes; out-of-order data takes no
    /// room. Default off.
    #[serde(skip_serializing_if = "is_false")]
    pub rcv_mem_truesize: bool,
    /// Under `rcv_mem_truesize`, what each received segment costs beyond its payload, bytes: Linux's
    /// `skb->truesize` − `skb->len`, the `struct sk_buff` and `skb_shared_info` (`SKB_TRUESIZE`: 256 + 320
    /// on x86-64) plus the headroom, headers and rounding of the driver's receive buffer. The payload
    /// / truesize of a full segment is the `scaling_ratio` Linux measures: on 6.18 with 1448-byte
    /// segments 160/256 (0.625, the 7,862,912-byte window of a 6 MiB SO_RCVBUF behind
    /// `recv_window_ratio` 1.25), so 2304 bytes a segment. A segment that with it would not fit a page
    /// (a GRO or GSO packet, as packetdrill's `--mss` injects through tun) is charged as tun builds it:
    /// its packet in whole pages of chunks up to 8 pages (`tun_alloc_skb` → `alloc_skb_with_frags`)
    /// and a 640-byte head (`SKB_TRUESIZE(NET_SKB_PAD)`); the kernel's `tcp_ooo_rcv_mss` windows (81
    /// and 81 × 1024) bound its 9000-byte packet's truesize to 11572–12973 bytes, and this gives
    /// 12928. Default 0.
    #[serde(skip_serializing_if = "is_zero_bytes")]
    pub rcv_skb_overhead: ByteSize,
    /// How much later than `comp_sack_delay` (or SRTT/20) a compressed SACK goes: Linux arms its timer
    /// with `hrtimer_start_range_ns(compressed_ack_timer, delay, tcp_comp_sack_slack_ns)` in
    /// `__tcp_ack_snd_check` (Linux 5.8, commit a70437cc09a1: 100 µs), and an hrtimer with a range is programmed for
    /// the range's end, so it fires there unless another interrupt on that CPU expires it sooner. The
    /// model sends the ACK at the range's end. Default 0s.
    #[serde(skip_serializing_if = "is_zero_duration")]
    pub comp_sack_slack: Duration,
}

fn is_200(n: &u32) -> bool {
    *n == 200
}
fn is_120(n: &u32) -> bool {
    *n == 120
}

/// Who paces (see [`TcpConfig::pacing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    #[default]
    Auto,
    Fq,
}

impl Pacing {
    fn is_auto(&self) -> bool {
        *self == Pacing::Auto
    }
}

// The knobs added after result documents were first published are left out of them at their default
// (which keeps the behaviour of before), so that those documents stay byte-identical.
fn is_zero_bytes(b: &ByteSize) -> bool {
    b.bytes() == 0
}
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}
fn is_2(n: &u32) -> bool {
    *n == 2
}
fn is_3(n: &u32) -> bool {
    *n == 3
}
fn is_4(n: &u32) -> bool {
    *n == 4
}
fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero_duration(d: &Duration) -> bool {
    d.is_zero()
}

/// The knobs a serialized `TcpConfig` leaves out at their default (a table knob's field by its dotted name,
/// `cubic.bictcp`), each with that default as a TOML value,
/// so that a reader of documents (the key registry behind `tcplab explain`) can show them; `""`: an optional
/// knob, unset by default. A test checks the list against the serialization and every value against
/// `TcpConfig::default()`.
pub const OMITTED_AT_DEFAULT: &[(&str, &str)] = &[
    ("min_tso_segs", "2"),
    ("tso_win_divisor", "3"),
    ("sack_blocks_expected", "4"),
    ("cwnd_growth_delivered", "false"),
    ("cwnd_growth_packets", "false"),
    ("cwnd_growth_at_reduction_end", "false"),
    ("prr_ssrb_advance_only", "false"),
    ("prr_cwr", "false"),
    ("prr_packets", "false"),
    ("timeout_min", "\"0s\""),
    ("rack_dsack_after_reordering", "false"),
    ("rack_rtt_every_delivery", "false"),
    ("slow_start_at_ssthresh", "false"),
    ("wscale_space", "\"0B\""),
    ("syn_retries", "0"),
    ("fin_delayed_ack", "false"),
    ("dsack_covered_ooo", "false"),
    ("ecn", "\"off\""),
    ("fin_ends_nagle", "false"),
    ("fin_ignores_cwnd", "false"),
    ("sack_whole_segments", "false"),
    ("cork_ceiling_rto", "false"),
    ("ts_recent_needs_valid_ack", "false"),
    ("initial_recv_window_whole_mss", "false"),
    ("whole_segment_past_window", "false"),
    ("fin_past_window", "false"),
    ("pacing", "\"auto\""),
    ("max_pacing_rate", ""),
    ("pacing_ss_ratio", "200"),
    ("pacing_ca_ratio", "120"),
    ("limit_output_bytes", "\"0B\""),
    ("ssthresh_within_window", "false"),
    ("rcv_mss_estimate_from_536", "false"),
    ("rcv_ssthresh_from_initial_window", "false"),
    ("grow_window_out_of_order", "false"),
    ("dup_acks_in", "\"rfc5681\""),
    ("too_old_ack_challenged", "false"),
    ("frto", "false"),
    ("rcv_mem_truesize", "false"),
    ("rcv_skb_overhead", "\"0B\""),
    ("comp_sack_slack", "\"0s\""),
    // A field of a table knob, by its dotted name.
    ("cubic.bictcp", "false"),
];

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: ByteSize::new(1460),
            send_buffer: ByteSize::new(64 * 1024),
            send_buffer_truesize: ByteSize::new(0),
            recv_buffer: ByteSize::new(64 * 1024),
            recv_window_ratio: 1.0,
            grow_window: false,
            window_scaling: true,
            timestamps: true,
            timestamp_tick: Duration::from_millis(1),
            sack: true,
            nodelay: false,
            minshall: false,
            nagle_last_sent: false,
            tso: false,
            tso_max_size: ByteSize::new(64 * 1024),
            min_tso_segs: 2,
            tso_win_divisor: 3,
            cork: false,
            ack_policy: AckPolicy::Delayed,
            ack_every: 2,
            delayed_ack_timeout: Duration::from_millis(200),
            deferred_ack_max: 22,
            ato_min: Duration::from_millis(40),
            quickack_on_reorder: true,
            comp_sack_nr: 0,
            comp_sack_delay: Duration::from_millis(1),
            sack_blocks_expected: 4,
            ack_immediate_p: 0.0,
            initial_window: InitialWindow::Rfc3390,
            congestion_control: CongestionControlKind::NewReno,
            cubic: CubicConfig::default(),
            abc: Abc::L1,
            abc_ca: false,
            cwnd_growth_delivered: false,
            cwnd_growth_packets: false,
            cwnd_growth_at_reduction_end: false,
            dupthresh: 3,
            slow_start_after_idle: true,
            undo: false,
            prr: false,
            prr_ssrb_advance_only: false,
            prr_cwr: false,
            prr_packets: false,
            lost_retransmit_detection: false,
            limited_transmit: true,
            ssthresh_from_cwnd: false,
            rto_rearm_on_retransmit: false,
            keep_sack_on_rto: false,
            rack: false,
            tlp: false,
            tlp_max_ack_delay: Duration::from_millis(200),
            timeout_min: Duration::ZERO,
            rack_dsack_after_reordering: false,
            rack_rtt_every_delivery: false,
            rtt_sampling: RttSampling::Auto,
            rto_model: RtoModel::Rfc6298,
            rto_params: RtoParams::default(),
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            ifq_full: IfqFull::Block,
            cwv: Cwv::Off,
            max_burst: 0,
            cwnd_unit: CwndUnit::Bytes,
            slow_start_at_ssthresh: false,
            tick: Duration::ZERO,
            time_wait: Duration::from_secs(60),
            wscale_space: ByteSize::new(0),
            syn_retries: 0,
            fin_delayed_ack: false,
            dsack_covered_ooo: false,
            ecn: EcnMode::Off,
            fin_ends_nagle: false,
            fin_ignores_cwnd: false,
            sack_whole_segments: false,
            cork_ceiling_rto: false,
            ts_recent_needs_valid_ack: false,
            initial_recv_window_whole_mss: false,
            whole_segment_past_window: false,
            fin_past_window: false,
            pacing: Pacing::Auto,
            max_pacing_rate: None,
            pacing_ss_ratio: 200,
            pacing_ca_ratio: 120,
            limit_output_bytes: ByteSize::new(0),
            ssthresh_within_window: false,
            rcv_mss_estimate_from_536: false,
            rcv_ssthresh_from_initial_window: false,
            grow_window_out_of_order: false,
            dup_acks_in: DupAcksIn::Rfc5681,
            too_old_ack_challenged: false,
            frto: false,
            rcv_mem_truesize: false,
            rcv_skb_overhead: ByteSize::new(0),
            comp_sack_slack: Duration::ZERO,
        }
    }
}

/// Receiver ACK policies (see [`TcpConfig::ack_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AckPolicy {
    Every,
    Delayed,
    Bsd,
    Linux,
    #[serde(rename = "linux-2.2")]
    Linux22,
    Avoidance,
    Mentat,
}

/// RTT sampling policies (see [`TcpConfig::rtt_sampling`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RttSampling {
    Auto,
    Karn,
    EveryAck,
    Linux,
}

/// The sender's reaction to a full interface queue (see [`TcpConfig::ifq_full`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IfqFull {
    Block,
    Cwr,
    #[serde(rename = "linux-2.4")]
    Linux24,
    Drop,
}

/// The definition DupAcksIn counts by (see [`TcpConfig::dup_acks_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DupAcksIn {
    Rfc5681,
    Web100,
}

impl DupAcksIn {
    fn is_rfc5681(&self) -> bool {
        *self == DupAcksIn::Rfc5681
    }
}

/// Congestion window validation (see [`TcpConfig::cwv`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cwv {
    Off,
    Rfc2861,
    Rfc7661,
    Linux,
    #[serde(rename = "linux-2.4")]
    Linux24,
}

/// The unit cwnd is kept in (see [`TcpConfig::cwnd_unit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CwndUnit {
    Bytes,
    Packets,
}

/// Congestion control algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControlKind {
    /// RFC 5681 Reno: any ACK of new data ends fast recovery.
    Reno,
    /// RFC 6582 NewReno: recovery lasts until everything outstanding at its start is acknowledged.
    NewReno,
    /// RFC 9438 CUBIC window growth and β = 0.7 decrease.
    Cubic,
    /// BBR v1 as Linux's `tcp_bbr.c`: a model of the bottleneck bandwidth and the minimum RTT, paced.
    Bbr,
}

/// The initial congestion window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialWindow {
    /// RFC 3390: min(4·SMSS, max(2·SMSS, 4380 bytes)).
    Rfc3390,
    /// RFC 6928: min(10·SMSS, max(2·SMSS, 14600 bytes)).
    Rfc6928,
    /// A fixed number of segments (Linux TCP_INIT_CWND = 10 for any MSS).
    Segments(u32),
    /// A fixed number of bytes.
    Bytes(u32),
}

impl InitialWindow {
    /// Bytes for a sender MSS of `smss`.
    pub fn bytes(self, smss: u32) -> u32 {
        match self {
            InitialWindow::Rfc3390 => (4 * smss).min((2 * smss).max(4380)),
            InitialWindow::Rfc6928 => (10 * smss).min((2 * smss).max(14600)),
            InitialWindow::Segments(n) => n * smss,
            InitialWindow::Bytes(b) => b,
        }
    }
}

impl std::fmt::Display for InitialWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InitialWindow::Rfc3390 => f.write_str("rfc3390"),
            InitialWindow::Rfc6928 => f.write_str("rfc6928"),
            InitialWindow::Segments(n) => write!(f, "{n}seg"),
            InitialWindow::Bytes(b) => write!(f, "{}", ByteSize::new(*b as u64)),
        }
    }
}

impl std::str::FromStr for InitialWindow {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let accepted =
            "accepted: \"rfc3390\", \"rfc6928\", a segment count such as \"10seg\", or a size such as \"4380B\"";
        match s.trim() {
            "rfc3390" => Ok(InitialWindow::Rfc3390),
            "rfc6928" => Ok(InitialWindow::Rfc6928),
            t => {
                if let Some(n) = t.strip_suffix("seg") {
                    return n
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .map(InitialWindow::Segments)
                        .ok_or_else(|| format!("{s:?}: {accepted}"));
                }
                t.parse::<ByteSize>()
                    .ok()
                    .and_then(|b| u32::try_from(b.bytes()).ok())
                    .filter(|&b| b > 0)
                    .map(InitialWindow::Bytes)
                    .ok_or_else(|| format!("{s:?}: {accepted}"))
            }
        }
    }
}

impl Serialize for InitialWindow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
impl<'de> Deserialize<'de> for InitialWindow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl TcpConfig {
    /// The factory of the congestion controller these knobs ask for (the one registration of an algorithm):
    /// `reno` ends fast recovery at ssthresh (RFC 5681), `newreno` with RFC 6582's FlightSize rule;
    /// `cwnd_unit = "packets"` counts whole segments; `cubic` takes `cubic`.
    pub fn controller_factory(&self) -> Box<dyn ControllerFactory> {
        match self.congestion_control {
            CongestionControlKind::Reno | CongestionControlKind::NewReno => Box::new(RenoFactory {
                abc: self.abc,
                abc_ca: self.abc_ca,
                rfc5681_exit: self.congestion_control == CongestionControlKind::Reno,
                packets: self.cwnd_unit == CwndUnit::Packets,
                slow_start_at_ssthresh: self.slow_start_at_ssthresh,
            }),
            CongestionControlKind::Cubic => {
                let paced = self.pacing == Pacing::Fq || self.max_pacing_rate.is_some();
                Box::new(CubicFactory { abc: self.abc, cubic: self.cubic, tick: self.tick, paced })
            }
            CongestionControlKind::Bbr => Box::new(BbrFactory),
        }
    }

    /// Checks values no field type can rule out. The message names the knob and what is accepted.
    pub fn validate(&self) -> Result<(), String> {
        let mss = self.mss.bytes();
        if !(88..=65495).contains(&mss) {
            return Err(format!("mss = {}: accepted 88B to 65495B", self.mss));
        }
        if self.recv_buffer.bytes() < mss || self.recv_buffer.bytes() > 1 << 30 {
            return Err(format!("recv_buffer = {}: accepted one MSS ({mss}B) to 1GiB", self.recv_buffer));
        }
        if self.send_buffer.bytes() < mss || self.send_buffer.bytes() > 1 << 30 {
            return Err(format!("send_buffer = {}: accepted one MSS ({mss}B) to 1GiB", self.send_buffer));
        }
        if self.ack_every == 0 || self.ack_every > 64 {
            return Err(format!("ack_every = {}: accepted 1 to 64 segments", self.ack_every));
        }
        if self.delayed_ack_timeout >= Duration::from_millis(500) {
            return Err(format!(
                "delayed_ack_timeout = {}: RFC 1122 requires less than 500ms",
                self.delayed_ack_timeout
            ));
        }
        if self.dupthresh == 0 {
            return Err("dupthresh = 0: accepted 1 or more".into());
        }
        if self.rto_min > self.rto_max || self.rto_initial.is_zero() || self.rto_max.is_zero() {
            return Err(format!(
                "rto_min = {}, rto_max = {}, rto_initial = {}: need rto_min <= rto_max, and rto_initial and rto_max above 0",
                self.rto_min, self.rto_max, self.rto_initial
            ));
        }
        if self.deferred_ack_max < 2 || self.deferred_ack_max > 64 {
            return Err(format!("deferred_ack_max = {}: accepted 2 to 64 segments", self.deferred_ack_max));
        }
        if self.tso_max_size.bytes() < 1024 || self.tso_max_size.bytes() > 1 << 20 {
            return Err(format!("tso_max_size = {}: accepted 1KiB to 1MiB", self.tso_max_size));
        }
        if !(1..=255).contains(&self.min_tso_segs) {
            return Err(format!("min_tso_segs = {}: accepted 1 to 255 segments", self.min_tso_segs));
        }
        if self.tso_win_divisor > 1000 {
            return Err(format!("tso_win_divisor = {}: accepted 0 to 1000", self.tso_win_divisor));
        }
        if self.rcv_skb_overhead.bytes() > 1 << 16 {
            return Err(format!("rcv_skb_overhead = {}: accepted 0 to 64KiB", self.rcv_skb_overhead));
        }
        if !(0.25..=4.0).contains(&self.recv_window_ratio) {
            return Err(format!("recv_window_ratio = {}: accepted 0.25 to 4", self.recv_window_ratio));
        }
        if (self.recv_buffer.bytes() as f64 * self.recv_window_ratio) < mss as f64 {
            return Err(format!(
                "recv_buffer × recv_window_ratio = {} × {}: the window must hold one MSS ({mss}B)",
                self.recv_buffer, self.recv_window_ratio
            ));
        }
        if !(0.0..=1.0).contains(&self.ack_immediate_p) {
            return Err(format!("ack_immediate_p = {}: accepted 0 to 1", self.ack_immediate_p));
        }
        self.cubic.validate().map_err(|e| format!("cubic: {e}"))?;
        if self.congestion_control == CongestionControlKind::Cubic && self.cwnd_unit == CwndUnit::Packets {
            // Either key may come from a personality (linux-2.4 counts packets): name both.
            return Err("cwnd_unit = \"packets\" with congestion_control = \"cubic\": CUBIC keeps cwnd in bytes; \
                        accepted with cubic: \"bytes\""
                .into());
        }
        if self.congestion_control == CongestionControlKind::Bbr && self.cwnd_unit == CwndUnit::Packets {
            return Err("cwnd_unit = \"packets\" with congestion_control = \"bbr\": BBR keeps its own packet \
                        count; accepted with bbr: \"bytes\""
                .into());
        }
        for (name, v) in [("pacing_ss_ratio", self.pacing_ss_ratio), ("pacing_ca_ratio", self.pacing_ca_ratio)] {
            if !(1..=10_000).contains(&v) {
                return Err(format!("{name} = {v}: accepted 1 to 10000 (percent)"));
            }
        }
        if self.max_pacing_rate.is_some_and(|r| r.bps() < 8) {
            return Err("max_pacing_rate: accepted 8bit (one byte per second) or more".into());
        }
        self.rto_params.validate().map_err(|e| format!("rto_params: {e}"))?;
        if self.tlp && !self.rack {
            return Err(
                "tlp = true: the tail loss probe relies on RACK to repair what it uncovers; accepted with rack = true"
                    .into(),
            );
        }
        if self.timestamp_tick < Duration::from_micros(1) {
            return Err(format!(
                "timestamp_tick = {}: accepted 1us or more (RFC 7323 suggests 1ms to 1s)",
                self.timestamp_tick
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_is_documented_and_listed() {
        // The knobs left out at their defaults (`skip_serializing_if`) set, so that every one is listed.
        let all = TcpConfig {
            min_tso_segs: 10,
            tso_win_divisor: 100,
            sack_blocks_expected: 1,
            cwnd_growth_delivered: true,
            cwnd_growth_packets: true,
            cwnd_growth_at_reduction_end: true,
            prr_ssrb_advance_only: true,
            prr_cwr: true,
            prr_packets: true,
            rack_dsack_after_reordering: true,
            rack_rtt_every_delivery: true,
            wscale_space: ByteSize::new(1),
            syn_retries: 1,
            fin_delayed_ack: true,
            dsack_covered_ooo: true,
            ecn: EcnMode::On,
            fin_ends_nagle: true,
            fin_ignores_cwnd: true,
            sack_whole_segments: true,
            cork_ceiling_rto: true,
            ts_recent_needs_valid_ack: true,
            initial_recv_window_whole_mss: true,
            whole_segment_past_window: true,
            fin_past_window: true,
            slow_start_at_ssthresh: true,
            pacing: Pacing::Fq,
            max_pacing_rate: Some(Rate::from_bps(8_000_000)),
            pacing_ss_ratio: 100,
            pacing_ca_ratio: 100,
            limit_output_bytes: ByteSize::new(1),
            ssthresh_within_window: true,
            rcv_mss_estimate_from_536: true,
            rcv_ssthresh_from_initial_window: true,
            grow_window_out_of_order: true,
            dup_acks_in: DupAcksIn::Web100,
            too_old_ack_challenged: true,
            frto: true,
            rcv_mem_truesize: true,
            rcv_skb_overhead: ByteSize::new(1),
            comp_sack_slack: Duration::from_micros(100),
            timeout_min: Duration::from_millis(2),
            ..TcpConfig::default()
        };
        let serialized = toml::Value::try_from(all).unwrap();
        let fields: Vec<&String> = serialized.as_table().unwrap().keys().collect();
        let listed: Vec<&str> = KNOBS.iter().map(|(n, _)| *n).collect();
        for f in &fields {
            assert!(listed.contains(&f.as_str()), "{f} has no entry in KNOBS");
        }
        assert_eq!(fields.len(), KNOBS.len());
        for (name, doc) in KNOBS {
            assert!(
                doc.len() > 30 && doc.contains("Default"),
                "{name}: doc comment must say meaning and default: {doc:?}"
            );
        }
    }

    #[test]
    fn the_knobs_left_out_at_their_default_are_listed_with_it() {
        let serialized = toml::Value::try_from(TcpConfig::default()).unwrap();
        let present: Vec<&str> = serialized.as_table().unwrap().keys().map(String::as_str).collect();
        let missing: Vec<&str> = KNOBS.iter().map(|(n, _)| *n).filter(|n| !present.contains(n)).collect();
        let listed: Vec<&str> = OMITTED_AT_DEFAULT.iter().map(|(n, _)| *n).filter(|n| !n.contains('.')).collect();
        assert_eq!(missing, listed, "OMITTED_AT_DEFAULT must list exactly the knobs left out, in KNOBS order");
        // Fields of table knobs left out at their default: absent from the serialized table, and the value
        // listed is the default.
        for (path, value) in OMITTED_AT_DEFAULT.iter().filter(|(n, _)| n.contains('.')) {
            let (table, field) = path.split_once('.').unwrap();
            assert!(serialized[table].get(field).is_none(), "{path} is serialized at its default");
            let parsed: TcpConfig = toml::from_str(&format!("[{table}]\n{field} = {value}")).unwrap();
            assert_eq!(parsed, TcpConfig::default(), "{path} = {value} is not the default");
        }
        for (knob, value) in OMITTED_AT_DEFAULT.iter().filter(|(_, v)| !v.is_empty()) {
            let parsed: TcpConfig = toml::from_str(&format!("{knob} = {value}")).unwrap();
            assert_eq!(parsed, TcpConfig::default(), "{knob} = {value} is not the default");
        }
    }

    #[test]
    fn initial_windows() {
        assert_eq!(InitialWindow::Rfc3390.bytes(1460), 4380);
        assert_eq!(InitialWindow::Rfc3390.bytes(1000), 4000);
        assert_eq!(InitialWindow::Rfc3390.bytes(2500), 5000);
        assert_eq!(InitialWindow::Rfc6928.bytes(1460), 14600);
        assert_eq!(InitialWindow::Rfc6928.bytes(1448), 14480);
        assert_eq!(InitialWindow::Segments(10).bytes(1448), 14480);
        assert_eq!("10seg".parse::<InitialWindow>().unwrap(), InitialWindow::Segments(10));
        assert!("many".parse::<InitialWindow>().unwrap_err().contains("accepted"));
    }
}
