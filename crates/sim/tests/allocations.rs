//! No heap allocation per packet in steady state: the number of allocations of a bulk run does not grow
//! with its duration. A counting global allocator sees every allocation of this test process.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use tcplab_sim::{run, SimSpec, CLIENT, SERVER};
use tcplab_tcp::{Connection, TcpConfig};
use tcplab_units::Duration;

struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A bulk run; `gro`: the receiver coalesces for 50 us (batches of 5 frames on this path).
fn spec(loss: f64, gro: bool, secs: u64) -> SimSpec<TcpConfig> {
    let mut server = common::host(16 << 20);
    if gro {
        server.rx_coalesce = Duration::from_micros(50);
    }
    SimSpec::two_hosts(
        common::link("1gbit", "1ms", 100, loss),
        common::link("1gbit", "1ms", 100, 0.0),
        [common::host(16 << 20), server],
        vec![
            (SERVER, common::acceptor(5001, None, true)),
            (CLIENT, common::opener(5001, Duration::ZERO, Some(65536), true)),
        ],
        Duration::from_secs(secs),
    )
}

fn allocations_of(spec: &SimSpec<TcpConfig>) -> (u64, u64) {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let r = run::<Connection>(spec, 1).expect("the bulk transfer connects");
    (ALLOCATIONS.load(Ordering::Relaxed) - before, r.data_segments)
}

#[test]
fn allocations_do_not_grow_with_duration() {
    // One test function: the counter is process-wide, so the runs must not overlap with other tests.
    for (loss, gro) in [(0.0, false), (0.001, false), (0.0, true)] {
        let (short, short_segs) = allocations_of(&spec(loss, gro, 2));
        let (long, long_segs) = allocations_of(&spec(loss, gro, 8));
        eprintln!(
            "loss {loss}, coalescing {gro}: {short} allocations for {short_segs} data segments (2 s), {long} for {long_segs} (8 s)"
        );
        assert!(long_segs > 3 * short_segs, "the long run moves more packets ({short_segs} vs {long_segs})");
        // Queues and scoreboards reach their working size early; a longer run may meet a slightly
        // larger one (a few doublings), never one allocation per packet.
        assert!(
            long <= short + 32,
            "loss {loss}: {short} allocations for {short_segs} segments, {long} for {long_segs}"
        );
    }
}
