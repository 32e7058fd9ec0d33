//! Drops decided by the emulator's model are the kernel's only losses: scripted drops and queue-full drops
//! each show up as exactly one kernel retransmission, and nothing is lost where the model cannot see it.

use crate::common;

use tcplab_emu::{run_stream, EmuSpec};
use tcplab_testkit::Outcome;
use tcplab_units::{ByteSize, Duration};

fn scripted_drops_are_exactly_the_kernels_retransmissions() -> Outcome {
    common::ready()?;
    // A queue far deeper than the window can fill (the 1 MiB receive buffer caps the flight near 900
    // frames; BDP 325 + queue 3000), so the script is the only source of loss.
    let mut spec = EmuSpec::new(common::link("100mbit", "20ms", "3000pkt"), Duration::from_secs(3));
    spec.client.send_buffer = ByteSize::new(4 << 20);
    spec.server.recv_buffer = ByteSize::new(1 << 20);
    // Up frames 0 and 1 are the SYN and the handshake's ACK; these are data segments, two of them adjacent.
    spec.up_drop_frames = vec![1000, 1001, 5000, 12_000];
    // A lost ACK is covered by the next cumulative ACK: no retransmission.
    spec.down_drop_frames = vec![3000];
    let run = run_stream(&spec).unwrap();
    let (s, h) = (&run.stream, &run.health);
    eprintln!("retrans {:?}, up {:?}, netstat {:?}", s.client_estats.get("SegsRetrans"), h.up, s.client_netstat);
    assert_eq!(h.up.drops_scripted, 4);
    assert_eq!(h.down.drops_scripted, 1);
    assert_eq!(h.up.link.drops_queue_full + h.down.link.drops_queue_full, 0);
    assert_eq!(h.hidden_drops, 0);
    assert_eq!(s.client_estats["SegsRetrans"], 4.0);
    assert_eq!(s.client_netstat.get("Tcp.RetransSegs").copied(), Some(4));
    assert_eq!(s.client_estats["Timeouts"], 0.0, "SACK recovery, no RTO");
    assert_eq!(s.bytes_received, s.bytes_sent);
    Ok(())
}

fn queue_drops_are_exactly_the_kernels_retransmissions() -> Outcome {
    common::ready()?;
    // A 100-frame queue (under a third of the 325-frame BDP): CUBIC overflows it in slow start and after.
    let mut spec = EmuSpec::new(common::link("100mbit", "20ms", "100pkt"), Duration::from_secs(4));
    spec.client.send_buffer = ByteSize::new(4 << 20);
    spec.server.recv_buffer = ByteSize::new(4 << 20);
    let run = run_stream(&spec).unwrap();
    let (s, h) = (&run.stream, &run.health);
    eprintln!("retrans {:?}, up {:?}, netstat {:?}", s.client_estats.get("SegsRetrans"), h.up, s.client_netstat);
    let drops = h.up.link.drops_queue_full;
    assert!(drops > 0, "the queue never overflowed");
    assert_eq!(h.hidden_drops, 0);
    assert_eq!(s.client_estats["SegsRetrans"] as u64, drops);
    assert!(h.up.link.max_queue_frames <= 100);
    assert_eq!(s.bytes_received, s.bytes_sent);
    Ok(())
}

tcplab_testkit::tests!(
    scripted_drops_are_exactly_the_kernels_retransmissions,
    queue_drops_are_exactly_the_kernels_retransmissions,
);
