//! No heap allocation per packet in steady state: the number of allocations of a bulk run does not grow
//! with its duration. A counting global allocator sees every allocation of this test process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use tcplab_link::{Framing, LinkConfig, LossModel, QueueLimit};
use tcplab_sim::{run, Direction, HostSpec, SimSpec, TestSpec};
use tcplab_tcp::TcpConfig;
use tcplab_units::{ByteSize, Duration};

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

fn spec(loss: f64, secs: u64) -> SimSpec {
    let link = LinkConfig {
        rate: "1gbit".parse().unwrap(),
        delay: "1ms".parse().unwrap(),
        queue: QueueLimit::Packets(100),
        framing: Framing::Ethernet,
        loss: if loss > 0.0 { LossModel::Bernoulli { p: loss } } else { LossModel::None },
    };
    let tcp = TcpConfig {
        send_buffer: ByteSize::new(16 << 20),
        recv_buffer: ByteSize::new(16 << 20),
        ..TcpConfig::default()
    };
    let host = HostSpec { tcp, nic_rate: None, txqueuelen: 1000 };
    SimSpec {
        up: link.clone(),
        down: LinkConfig { loss: LossModel::None, ..link },
        client: host.clone(),
        server: host,
        test: TestSpec {
            direction: Direction::ClientToServer,
            duration: Duration::from_secs(secs),
            message: 65536,
            parallel: 1,
            series_interval: None,
        },
    }
}

fn allocations_of(spec: &SimSpec) -> (u64, u64) {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let r = run(spec, 1).expect("the bulk transfer connects");
    (ALLOCATIONS.load(Ordering::Relaxed) - before, r.data_segments)
}

#[test]
fn allocations_do_not_grow_with_duration() {
    // One test function: the counter is process-wide, so the runs must not overlap with other tests.
    for loss in [0.0, 0.001] {
        let (short, short_segs) = allocations_of(&spec(loss, 2));
        let (long, long_segs) = allocations_of(&spec(loss, 8));
        eprintln!(
            "loss {loss}: {short} allocations for {short_segs} data segments (2 s), {long} for {long_segs} (8 s)"
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
