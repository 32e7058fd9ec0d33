//! 1 Gbit/s, 10 ms each way: only possible with GSO batching on this kind of machine.

use crate::common;

use tcplab_emu::{run_stream_until_valid, EmuSpec};
use tcplab_testkit::Outcome;
use tcplab_units::{ByteSize, Duration};

fn bulk_1gbit_20ms_rtt_within_5_percent_of_the_bound() -> Outcome {
    common::ready()?;
    // BDP 1 Gbit/s × 20 ms = 2.5 MB ≈ 1625 frames; a 1-BDP queue.
    let mut spec = EmuSpec::new(common::link("1gbit", "10ms", "1625pkt"), Duration::from_secs(5));
    spec.client.send_buffer = ByteSize::new(32 << 20);
    spec.server.recv_buffer = ByteSize::new(32 << 20);
    // A run whose health is bad (CPU contention on a shared machine) is repeated, not judged.
    let run = run_stream_until_valid(&spec, 3).unwrap();
    let (s, h) = (&run.stream, &run.health);
    let bound = common::bound_bps(1e9);
    let steady = s.goodput_between(1.0, 5.0).unwrap();
    eprintln!(
        "1 Gbit/s (attempt {}): {:.1} Mbit/s whole run, {:.1} after 1 s, bound {:.1}; retrans {:?}; health {h:?}; netstat {:?}",
        run.attempts,
        s.throughput_bps / 1e6,
        steady / 1e6,
        bound / 1e6,
        s.client_estats.get("SegsRetrans"),
        s.client_netstat
    );
    // The series is read by the application, whose read times jitter by a few ms: allow 0.5% over.
    assert!(steady <= bound * 1.005, "faster than the wire allows: {steady}");
    // After three unhealthy runs the last is judged anyway; the message says so (a stall, not the physics).
    assert!(
        steady >= bound * 0.95,
        "steady goodput {steady} more than 5% below {bound} (attempt {}, emulator health valid: {}, {:?})",
        run.attempts,
        h.valid,
        h.invalid_reasons
    );
    assert_eq!(h.hidden_drops, 0);
    Ok(())
}

tcplab_testkit::tests!(bulk_1gbit_20ms_rtt_within_5_percent_of_the_bound);
