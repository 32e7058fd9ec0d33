//! Pacing and TCP Small Queues as Linux does them (`net/ipv4/tcp_output.c`).
//!
//! Pacing: every data segment gets an earliest departure time (`tp->tcp_wstamp_ns`, the EDT model of 4.20
//! and later). After a segment of `len` bytes leaves, the next may leave `len / sk_pacing_rate` later
//! (`tcp_update_skb_after_send`), less up to half of that for time the sender sat idle past its departure
//! time (the "credit" for OS jitter); the first 10 data segments of a connection are not paced. The rate
//! is the controller's (BBR sets `sk_pacing_rate` itself) or, for the others, `tcp_update_pacing_rate`'s
//! cwnd / SRTT × `tcp_pacing_ss_ratio` (200%) in slow start below ssthresh/2 and × `tcp_pacing_ca_ratio`
//! (120%) after, capped by SO_MAX_PACING_RATE. Who enforces it: without the fq qdisc Linux paces inside
//! TCP only when `sk_pacing_status == SK_PACING_NEEDED` (`tcp_needs_internal_pacing`), which a controller
//! sets (BBR's `bbr_init`) and so does SO_MAX_PACING_RATE; a CUBIC socket on the default pfifo_fast qdisc
//! is not paced. With sch_fq (`pacing = "fq"`) every socket's segments wait for their EDT in the qdisc;
//! this model holds them in the connection instead (the departure times are the same, the segments wait
//! one layer higher).
//!
//! TCP Small Queues (`tcp_small_queue_check`): a connection may have at most `limit` bytes in its host's
//! queues (qdisc and NIC, Linux's `sk_wmem_alloc`), limit = max(2 segments, ~1 ms at the pacing rate:
//! `sk_pacing_rate >> sk_pacing_shift`, shift 10), capped by `tcp_limit_output_bytes` when the socket is
//! not paced, doubled for a retransmission; a connection with at most one segment outstanding is never
//! held. A held connection resumes at the TX completion that brings it under the limit (`tcp_wfree` →
//! the TSQ handler). The host's queue is what the engine reports through
//! `Transport::on_departure`: when each segment's last bit leaves the host.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};

/// Linux `sk_pacing_shift`: TSQ's autosized limit is about 2^-10 s (~1 ms) at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// Pacing starts with the 10th data segment (`tcp_update_skb_after_send`: `tp->data_segs_out >= 10`).
const UNPACED_SEGMENTS: u64 = 10;

/// One connection's pacing and TSQ state.
#[derive(Debug, Clone)]
pub(crate) struct Pace {
    /// Departures wait for their EDT (internal pacing, or fq's).
    pub on: bool,
    /// The earliest departure time of the next segment (`tp->tcp_wstamp_ns`).
    pub next: Instant,
    /// `sk_pacing_rate`, bytes per second (`u64::MAX` until there is one).
    pub rate: u64,
    /// SO_MAX_PACING_RATE, bytes per second (`u64::MAX`: none).
    pub max_rate: u64,
    pub ss_ratio: u64,
    pub ca_ratio: u64,
    /// `tcp_limit_output_bytes`; 0 turns TSQ off.
    pub tsq_limit: u64,
    /// This connection's segments still in the host: when each leaves it, and its bytes.
    in_host: VecDeque<(Instant, u32)>,
    /// Times TSQ held the sender (Linux `TSQ_THROTTLED` set).
    pub throttled: u64,
}

impl Pace {
    pub fn new(on: bool, max_rate: Option<u64>, ss_ratio: u32, ca_ratio: u32, tsq_limit: u64) -> Self {
        Pace {
            on,
            next: Instant::ZERO,
            rate: max_rate.unwrap_or(u64::MAX),
            max_rate: max_rate.unwrap_or(u64::MAX),
            ss_ratio: ss_ratio as u64,
            ca_ratio: ca_ratio as u64,
            tsq_limit,
            in_host: VecDeque::new(),
            throttled: 0,
        }
    }

    /// Whether anything here can hold a segment back.
    #[inline]
    pub fn active(&self) -> bool {
        self.on || self.tsq_limit > 0
    }

    /// The controller's rate, capped by SO_MAX_PACING_RATE.
    pub fn set_rate(&mut self, rate: u64) {
        self.rate = rate.min(self.max_rate);
    }

    /// `tcp_update_pacing_rate`: max(cwnd, in flight) / SRTT at 200% in slow start (cwnd below half of
    /// ssthresh) and at 120% after. Before an RTT sample Linux divides by nothing: the rate is not limiting.
    pub fn update_from_cwnd(&mut self, cwnd: u32, ssthresh: u32, flight: u32, srtt: Option<Duration>) {
        let ratio = if (cwnd as u64) < ssthresh as u64 / 2 { self.ss_ratio } else { self.ca_ratio };
        let Some(srtt) = srtt.filter(|s| !s.is_zero()) else {
            self.rate = self.max_rate;
            return;
        };
        let (num, den) = (cwnd.max(flight) as u128 * ratio as u128 * 1_000_000_000, 100 * srtt.as_nanos() as u128);
        // The same quotient in 64 bits where both fit (windows below ~150 MB at 120%): a 128-bit division
        // is a library call, and this runs on every ACK.
        let r = match (u64::try_from(num), u64::try_from(den)) {
            (Ok(n), Ok(d)) => n / d,
            _ => (num / den).min(u64::MAX as u128) as u64,
        };
        self.set_rate(r);
    }

    /// A segment with `payload` bytes left at `now`, the connection's `data_segs_out`-th data segment
    /// counting this one: `tcp_update_skb_after_send`.
    pub fn on_sent(&mut self, now: Instant, payload: u32, data_segs_out: u64) {
        if !self.on {
            return;
        }
        let prior = self.next;
        self.next = self.next.max(now);
        if payload == 0 || self.rate == u64::MAX || self.rate == 0 || data_segs_out < UNPACED_SEGMENTS {
            return;
        }
        let len_ns = (payload as u128 * 1_000_000_000 / self.rate as u128).min(u64::MAX as u128) as u64;
        let credit = self.next.saturating_since(prior).as_nanos();
        self.next += Duration::from_nanos(len_ns - (len_ns / 2).min(credit));
    }

    /// The engine's report: the segment just sent (`bytes` on the wire) leaves the host at `departs`.
    pub fn on_departure(&mut self, now: Instant, departs: Instant, bytes: u32) {
        if self.tsq_limit == 0 {
            return;
        }
        while self.in_host.front().is_some_and(|&(t, _)| t <= now) {
            self.in_host.pop_front();
        }
        if departs > now {
            self.in_host.push_back((departs, bytes));
        }
    }

    /// Bytes of this connection still in the host at `now` (`sk_wmem_alloc`).
    fn in_host(&self, now: Instant) -> u64 {
        self.in_host.iter().filter(|&&(t, _)| t > now).map(|&(_, b)| b as u64).sum()
    }

    /// Whether a segment of `seg_bytes` may go now: its EDT has come (when paced), and TSQ lets it into
    /// the host (`retransmit` doubles the limit; `single_outstanding`: at most one segment unacknowledged).
    pub fn allows(&self, now: Instant, seg_bytes: u32, retransmit: bool, single_outstanding: bool) -> bool {
        if self.on && self.next > now {
            return false;
        }
        !self.tsq_holds(now, seg_bytes, retransmit, single_outstanding)
    }

    fn tsq_holds(&self, now: Instant, seg_bytes: u32, retransmit: bool, single_outstanding: bool) -> bool {
        if self.tsq_limit == 0 || single_outstanding || self.in_host.is_empty() {
            return false;
        }
        let mut limit = (2 * seg_bytes as u64).max(self.rate >> PACING_SHIFT);
        if !self.on {
            limit = limit.min(self.tsq_limit);
        }
        if retransmit {
            limit <<= 1;
        }
        self.in_host(now) > limit
    }

    /// When a held sender should try again: its EDT, or the next TX completion.
    pub fn wakeup(&self, now: Instant) -> Option<Instant> {
        if self.on && self.next > now {
            return Some(self.next);
        }
        self.in_host.iter().map(|&(t, _)| t).find(|&t| t > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(n)
    }

    /// At 1,000,000 B/s a 1000-byte segment takes 1 ms: each paced departure is 1 ms after the last, from
    /// the 10th data segment on; an idle gap earns at most half a segment's time.
    #[test]
    fn departures_are_spaced_at_the_rate() {
        let mut p = Pace::new(true, None, 200, 120, 0);
        p.set_rate(1_000_000);
        for n in 1..10 {
            p.on_sent(us(0), 1000, n);
            assert!(p.allows(us(0), 1000, false, false), "segment {n} is not paced");
        }
        p.on_sent(us(0), 1000, 10);
        assert_eq!(p.next, us(1000));
        assert!(!p.allows(us(999), 1000, false, false));
        assert!(p.allows(us(1000), 1000, false, false));
        p.on_sent(us(1000), 1000, 11);
        assert_eq!(p.next, us(2000));
        // Sent 3 ms late: the credit (3 ms) takes half a segment's time off.
        p.on_sent(us(5000), 1000, 12);
        assert_eq!(p.next, us(5500));
    }

    #[test]
    fn ratios_follow_slow_start_and_congestion_avoidance() {
        let mut p = Pace::new(true, None, 200, 120, 0);
        let srtt = Some(Duration::from_millis(100));
        p.update_from_cwnd(10_000, u32::MAX, 0, srtt);
        assert_eq!(p.rate, 200_000, "200% of 10 kB per 100 ms");
        p.update_from_cwnd(10_000, 10_000, 12_000, srtt);
        assert_eq!(p.rate, 144_000, "120% of max(cwnd, in flight)");
        let mut capped = Pace::new(true, Some(50_000), 200, 120, 0);
        capped.update_from_cwnd(10_000, 10_000, 0, srtt);
        assert_eq!(capped.rate, 50_000, "SO_MAX_PACING_RATE");
    }

    /// TSQ holds a sender with more than max(2 segments, 1 ms at the rate) in the host, until the TX
    /// completion that brings it under.
    #[test]
    fn small_queues_hold_until_tx_completion() {
        let mut p = Pace::new(false, None, 200, 120, 4 << 20);
        p.set_rate(1_000_000); // 1 ms = 976 bytes: the 2-segment floor (3000) applies
        for i in 1..=4 {
            p.on_departure(us(0), us(1200 * i), 1500);
        }
        assert!(!p.allows(us(0), 1500, false, false), "6000 bytes queued > 3000");
        assert!(p.allows(us(0), 1500, false, true), "a single outstanding segment always goes");
        assert!(p.allows(us(0), 1500, true, false), "a retransmission's limit is doubled: 6000 is not above 6000");
        assert_eq!(p.wakeup(us(0)), Some(us(1200)));
        assert!(!p.allows(us(1200), 1500, false, false), "4500 left");
        assert!(p.allows(us(2400), 1500, false, false), "3000 left: not above the limit");
        let mut capped = Pace::new(false, None, 200, 120, 2000);
        capped.set_rate(u64::MAX);
        capped.on_departure(us(0), us(10), 1500);
        capped.on_departure(us(0), us(20), 1500);
        assert!(!capped.allows(us(0), 500, false, false), "tcp_limit_output_bytes caps an unpaced socket");
    }
}
