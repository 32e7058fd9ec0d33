//! The host CPU cost model, which gives netperf's service demand.
//!
//! Work is charged to a host's cores: each received segment, each sent segment, each send or receive
//! call (with its copy, per KB) and each protocol timer costs a configured time. A unit of work starts when
//! the least busy core is free and occupies it for its cost. A received segment takes effect (reaches its
//! transport) only when its processing completes, and segments take effect in the order they arrived, so
//! a saturated CPU holds a backlog of segments and the host becomes the bottleneck, as the CPU-bound hosts
//! of the early gigabit measurements were. Sent segments, calls and timers occupy a core from the moment
//! they happen (their effect is not delayed; the core's time is, which delays the segments behind them).
//!
//! Costs are zero unless configured: a host without a model is infinitely fast.

use std::collections::VecDeque;

use tcplab_units::{Duration, Instant};

/// The cost of each kind of work on one host (netperf's service demand comes from their sum).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuSpec {
    /// Cores that process the host's network work in parallel.
    pub cores: u32,
    /// Sending a segment that carries data.
    pub per_segment_out: Duration,
    /// Receiving a segment that carries data.
    pub per_segment_in: Duration,
    /// Receiving a segment without data (a pure ACK, a window update).
    pub per_ack_in: Duration,
    /// Sending a segment without data.
    pub per_ack_out: Duration,
    /// Copying 1 KB (1024 bytes) between the application and the socket, in a send or receive call.
    pub per_kb_copy: Duration,
    /// A send or receive call that moved data (the system call itself).
    pub per_call: Duration,
    /// A protocol timer that fired.
    pub per_timer: Duration,
}

impl CpuSpec {
    /// The cost of a send or receive call that moved `bytes`.
    pub fn call(&self, bytes: u64) -> Duration {
        let copy = (self.per_kb_copy.as_nanos() as u128 * bytes as u128).div_ceil(1024);
        self.per_call + Duration::from_nanos(copy as u64)
    }
}

/// A host's cores and its backlog of received segments waiting for their processing to complete.
#[derive(Debug)]
pub(crate) struct Cpu<S> {
    pub spec: CpuSpec,
    busy_until: Vec<Instant>,
    /// Received segments in arrival order, each with the instant its processing completes and whether it
    /// ends its packet (a coalesced batch's segments take effect together, the last one's application
    /// turn with them).
    pub backlog: VecDeque<(Instant, S, bool)>,
    last_effect: Instant,
    pub seq: u64,
    /// Core time charged so far.
    pub busy: Duration,
}

impl<S> Cpu<S> {
    pub fn new(spec: CpuSpec) -> Self {
        let cores = spec.cores.max(1) as usize;
        Cpu {
            spec,
            busy_until: vec![Instant::ZERO; cores],
            backlog: VecDeque::new(),
            last_effect: Instant::ZERO,
            seq: 0,
            busy: Duration::ZERO,
        }
    }

    /// Charges `cost` at `now` to the least busy core; returns when that work completes.
    pub fn charge(&mut self, now: Instant, cost: Duration) -> Instant {
        if cost.is_zero() {
            return now;
        }
        let core = (0..self.busy_until.len()).min_by_key(|&i| self.busy_until[i]).expect("at least one core");
        let done = self.busy_until[core].max(now) + cost;
        self.busy_until[core] = done;
        self.busy += cost;
        done
    }

    /// When the least busy core is free for new work (`now` if one is idle).
    pub fn free_at(&self, now: Instant) -> Instant {
        self.busy_until.iter().copied().min().unwrap_or(now).max(now)
    }

    /// Core time spent by `now`: what was charged, less the work still queued on the cores after `now`
    /// (each core runs its work back to back from when it was charged, so that part has not run yet).
    /// Utilization over a window is the difference of two of these, never more than the cores' time.
    pub fn executed_by(&self, now: Instant) -> Duration {
        let pending: u64 = self.busy_until.iter().map(|&t| t.saturating_since(now).as_nanos()).sum();
        self.busy.saturating_sub(Duration::from_nanos(pending))
    }

    /// Charges the processing of a received segment; returns when it takes effect (never before an
    /// earlier arrival's).
    pub fn receive(&mut self, now: Instant, cost: Duration) -> Instant {
        let done = self.charge(now, cost).max(self.last_effect);
        self.last_effect = done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Two cores, 30 µs of work charged at t = 0 on each and 30 µs more queued behind one: by t = 40 µs
    /// both cores have run 30 µs and the second 10 µs of its queued work (70 µs executed of 90 charged);
    /// by 100 µs everything.
    #[test]
    fn executed_time_leaves_out_queued_work() {
        let mut cpu: Cpu<()> = Cpu::new(CpuSpec { cores: 2, ..CpuSpec::default() });
        let t0 = Instant::ZERO;
        cpu.charge(t0, us(30));
        cpu.charge(t0, us(30));
        cpu.charge(t0, us(30));
        assert_eq!(cpu.busy, us(90));
        assert_eq!(cpu.executed_by(t0 + us(40)), us(70));
        assert_eq!(cpu.executed_by(t0 + us(100)), us(90));
        assert_eq!(cpu.executed_by(t0), us(0));
    }

    #[test]
    fn work_queues_on_the_least_busy_core_and_receptions_keep_their_order() {
        let spec = CpuSpec { cores: 2, ..CpuSpec::default() };
        let mut cpu: Cpu<()> = Cpu::new(spec);
        let t0 = Instant::ZERO;
        assert_eq!(cpu.receive(t0, us(10)), t0 + us(10), "core 0");
        assert_eq!(cpu.receive(t0, us(2)), t0 + us(10), "core 1 finishes at 2 us, but after the first");
        assert_eq!(cpu.charge(t0, us(5)), t0 + us(7), "core 1 again, after its 2 us");
        assert_eq!(cpu.receive(t0 + us(20), us(1)), t0 + us(21), "idle cores start at once");
        assert_eq!(cpu.busy, us(18));
    }

    #[test]
    fn a_call_costs_the_call_plus_its_copy_per_kb() {
        let spec = CpuSpec { cores: 1, per_call: us(3), per_kb_copy: us(2), ..CpuSpec::default() };
        assert_eq!(spec.call(2048), us(7));
        assert_eq!(spec.call(512), us(4));
    }
}
