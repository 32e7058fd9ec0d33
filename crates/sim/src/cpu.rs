//! The host CPU cost model, which gives netperf's service demand.
//!
//! Work is charged to a host's cores: each received segment, each sent segment, each send or receive
//! call (with its copy, per KB) and each protocol timer costs a configured time. Protocol work starts when
//! the least busy core is free and occupies it for its cost. A received segment takes effect (reaches its
//! transport) only when its processing completes, and segments take effect in the order they arrived, so
//! a saturated CPU holds a backlog of segments and the host becomes the bottleneck. Sent segments and
//! timers occupy a core from the moment they happen (their effect is not delayed; the core's time is).
//! An application's call runs in the time protocol work leaves free on its core and takes effect when it
//! is done (the engine holds its effect and the application until then), so a host that is behind slows
//! its application, as a real call returns only when its copy is done.
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

/// An application's send or receive call running on a core: whose it is and the work it has left.
#[derive(Debug, Clone, Copy)]
struct Call {
    app: u32,
    left: Duration,
}

/// A host's cores and its backlog of received segments waiting for their processing to complete.
///
/// Two levels of work share a core. The protocol's work (received and sent segments, timers: a stack's
/// interrupt and its softirq or STREAMS service routine) runs first come, first served on the least busy
/// core. Applications' calls run on a core in the time its protocol work leaves free, and are preempted by
/// it: a segment that arrives during a long copy is processed (and acknowledged) during it, and the copy
/// ends that much later, as on a uniprocessor where the NIC's interrupt preempts the process in its system
/// call.
#[derive(Debug)]
pub(crate) struct Cpu<S> {
    pub spec: CpuSpec,
    /// Per core: when the protocol work charged to it so far ends (it runs back to back).
    busy_until: Vec<Instant>,
    /// Per core: its applications' calls in the order they were issued (the head runs), and the instant up
    /// to which their progress has been counted.
    calls: Vec<VecDeque<Call>>,
    calls_at: Vec<Instant>,
    /// Received segments in arrival order, each with the instant its processing completes and whether it
    /// ends its packet (a coalesced batch's segments take effect together, the last one's application
    /// turn with them).
    pub backlog: VecDeque<(Instant, S, bool)>,
    last_effect: Instant,
    pub seq: u64,
    /// Sequence of the host's call-completion events (one counter for all its cores).
    pub call_seq: u64,
    /// Core time charged so far.
    pub busy: Duration,
}

impl<S> Cpu<S> {
    pub fn new(spec: CpuSpec) -> Self {
        let cores = spec.cores.max(1) as usize;
        Cpu {
            spec,
            busy_until: vec![Instant::ZERO; cores],
            calls: vec![VecDeque::new(); cores],
            calls_at: vec![Instant::ZERO; cores],
            backlog: VecDeque::new(),
            last_effect: Instant::ZERO,
            seq: 0,
            call_seq: 0,
            busy: Duration::ZERO,
        }
    }

    /// Counts the progress of core `k`'s calls up to `now`: the time since the last count that its protocol
    /// work left free (no protocol work was charged to the core in between: each charge counts first).
    fn advance(&mut self, k: usize, now: Instant) {
        let from = self.calls_at[k].max(self.busy_until[k]);
        let mut free = now.saturating_since(from);
        self.calls_at[k] = self.calls_at[k].max(now);
        for call in self.calls[k].iter_mut() {
            if free.is_zero() {
                break;
            }
            let run = call.left.min(free);
            call.left = call.left.saturating_sub(run);
            free = free.saturating_sub(run);
        }
    }

    /// Charges protocol work of `cost` at `now` to the least busy core; returns when that work completes.
    pub fn charge(&mut self, now: Instant, cost: Duration) -> Instant {
        if cost.is_zero() {
            return now;
        }
        let core = (0..self.busy_until.len()).min_by_key(|&i| self.busy_until[i]).expect("at least one core");
        if !self.calls[core].is_empty() {
            self.advance(core, now);
        }
        let done = self.busy_until[core].max(now) + cost;
        self.busy_until[core] = done;
        self.busy += cost;
        done
    }

    /// Work charged to core `k` that has not run by `now`.
    fn pending_on(&self, k: usize, now: Instant) -> Duration {
        let protocol = self.busy_until[k].saturating_since(now);
        let free = now.saturating_since(self.calls_at[k].max(self.busy_until[k]));
        let calls = Duration::from_nanos(self.calls[k].iter().map(|c| c.left.as_nanos()).sum());
        protocol + calls.saturating_sub(free)
    }

    /// Core time spent by `now`: what was charged, less the work still queued on the cores after `now`
    /// (each core runs its work back to back from when it was charged, so that part has not run yet).
    /// Utilization over a window is the difference of two of these, never more than the cores' time.
    pub fn executed_by(&self, now: Instant) -> Duration {
        let pending: u64 = (0..self.busy_until.len()).map(|k| self.pending_on(k, now).as_nanos()).sum();
        self.busy.saturating_sub(Duration::from_nanos(pending))
    }

    /// Charges the processing of a received segment; returns when it takes effect (never before an
    /// earlier arrival's).
    pub fn receive(&mut self, now: Instant, cost: Duration) -> Instant {
        let done = self.charge(now, cost).max(self.last_effect);
        self.last_effect = done;
        done
    }

    /// When core `k`'s head call completes if no more protocol work comes (its calls counted up to now).
    fn head_done(&self, k: usize, now: Instant) -> Option<Instant> {
        self.calls[k].front().map(|c| now.max(self.busy_until[k]) + c.left)
    }

    /// Application `app` issues a call of `cost` (not zero) at `now`: it queues on the core where it would
    /// finish first. Returns the core, and when its head call completes if the call is that head (the
    /// engine then schedules the completion: one event per core with calls).
    pub fn call(&mut self, now: Instant, app: u32, cost: Duration) -> (usize, Option<Instant>) {
        let cores = self.busy_until.len();
        for k in 0..cores {
            self.advance(k, now);
        }
        let finish = |cpu: &Self, k: usize| {
            let queued = Duration::from_nanos(cpu.calls[k].iter().map(|c| c.left.as_nanos()).sum());
            now.max(cpu.busy_until[k]) + queued
        };
        let core = (0..cores).min_by_key(|&k| finish(self, k)).expect("at least one core");
        self.calls[core].push_back(Call { app, left: cost });
        self.busy += cost;
        let head = self.calls[core].len() == 1;
        (core, if head { self.head_done(core, now) } else { None })
    }

    /// Core `k`'s completion event at `now`: `Ok(app)` if its head call is done (it leaves the core; the
    /// engine schedules the next head's completion from [`Cpu::next_done`]), `Err(t)` if protocol work
    /// preempted it meanwhile and it now completes at `t`.
    pub fn complete(&mut self, k: usize, now: Instant) -> Result<u32, Instant> {
        self.advance(k, now);
        let head = self.calls[k].front().expect("a completion event has a call");
        if !head.left.is_zero() {
            return Err(self.head_done(k, now).expect("a head call"));
        }
        let app = head.app;
        self.calls[k].pop_front();
        Ok(app)
    }

    /// When core `k`'s (new) head call completes, if it has calls.
    pub fn next_done(&self, k: usize, now: Instant) -> Option<Instant> {
        self.head_done(k, now)
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

    /// One core: a 100 us call issued at 0 is preempted by 30 us of protocol work charged at 50 us (an
    /// arrival during the copy): the call completes at 130 us, not 100; a second application's call queues
    /// behind it; utilization counts only what ran.
    #[test]
    fn protocol_work_preempts_a_call_which_ends_that_much_later() {
        let mut cpu: Cpu<()> = Cpu::new(CpuSpec { cores: 1, ..CpuSpec::default() });
        let t0 = Instant::ZERO;
        assert_eq!(cpu.call(t0, 7, us(100)), (0, Some(t0 + us(100))));
        assert_eq!(cpu.call(t0 + us(10), 8, us(20)), (0, None), "behind the first: no event of its own yet");
        assert_eq!(cpu.charge(t0 + us(50), us(30)), t0 + us(80), "the segment does not wait for the copy");
        assert_eq!(cpu.executed_by(t0 + us(60)), us(60));
        assert_eq!(cpu.complete(0, t0 + us(100)), Err(t0 + us(130)), "preempted for 30 us");
        assert_eq!(cpu.complete(0, t0 + us(130)), Ok(7));
        assert_eq!(cpu.next_done(0, t0 + us(130)), Some(t0 + us(150)));
        assert_eq!(cpu.complete(0, t0 + us(150)), Ok(8));
        assert_eq!(cpu.executed_by(t0 + us(150)), us(150));
        assert_eq!(cpu.busy, us(150));
    }

    /// Two cores: a call goes where it finishes first (the core without protocol work queued).
    #[test]
    fn a_call_runs_on_the_core_where_it_finishes_first() {
        let mut cpu: Cpu<()> = Cpu::new(CpuSpec { cores: 2, ..CpuSpec::default() });
        let t0 = Instant::ZERO;
        cpu.charge(t0, us(50));
        assert_eq!(cpu.call(t0, 1, us(10)), (1, Some(t0 + us(10))));
        assert_eq!(cpu.call(t0, 2, us(10)), (1, None), "behind the first (done at 20 us) rather than at 60 us");
    }

    #[test]
    fn a_call_costs_the_call_plus_its_copy_per_kb() {
        let spec = CpuSpec { cores: 1, per_call: us(3), per_kb_copy: us(2), ..CpuSpec::default() };
        assert_eq!(spec.call(2048), us(7));
        assert_eq!(spec.call(512), us(4));
    }
}
