//! How far a running simulation has come, for a progress display (`tcplab run`'s bar of simulated time
//! against the test's duration).
//!
//! While someone holds a [`Watch`], every run publishes its virtual time every [`EVERY`] events into one
//! process-wide cell; nobody watching, a run publishes nothing (it tests one bit of its event count per
//! event, and reads one flag every [`EVERY`] events). The cell is only read: what is published never
//! feeds back into a run, so results stay a pure function of scenario and seed. Runs in parallel
//! (a sweep's points) publish into the same cell: a watcher of one run at a time reads that run's time.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tcplab_units::{Duration, Instant};

/// A run publishes its time when its event count is a multiple of this (2^14: some hundreds of times a
/// second of wall time at the engine's speed, nothing against its cost).
pub const EVERY: u64 = 1 << 14;

static WATCHERS: AtomicUsize = AtomicUsize::new(0);
static NOW_NS: AtomicU64 = AtomicU64::new(0);

/// While held, runs publish their virtual time.
#[must_use = "runs publish their time only while the watch is held"]
pub struct Watch(());

/// Starts watching (the time read is 0 until a run publishes).
pub fn watch() -> Watch {
    NOW_NS.store(0, Ordering::Relaxed);
    WATCHERS.fetch_add(1, Ordering::Relaxed);
    Watch(())
}

impl Watch {
    /// The latest virtual time a run published: how much it has simulated.
    pub fn simulated(&self) -> Duration {
        Duration::from_nanos(NOW_NS.load(Ordering::Relaxed))
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        WATCHERS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Called by the engine every [`EVERY`] events.
#[inline]
pub(crate) fn publish(now: Instant) {
    if WATCHERS.load(Ordering::Relaxed) > 0 {
        NOW_NS.store(now.as_nanos(), Ordering::Relaxed);
    }
}
