//! The emulator's pcap tap, timestamped by the model, so the trace shows the link's physics to the
//! nanosecond: at the server's tap, every frame delivered up (back-to-back frames exactly one serialization
//! time apart) and every frame the server put on the down direction.

use crate::common;

use tcplab_emu::{run_stream, EmuSpec, PcapSpec, PcapTap};
use tcplab_testkit::Outcome;
use tcplab_units::{ByteSize, Duration};

fn sum16(b: &[u8], mut acc: u32) -> u32 {
    for c in b.chunks(2) {
        acc += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc
}

fn the_servers_tap_has_every_frame_at_its_model_instant() -> Outcome {
    common::ready()?;
    let path = std::env::temp_dir().join(format!("tcplab-emu-test-{}.pcap", std::process::id()));
    let mut spec = EmuSpec::new(common::link("10mbit", "5ms", "100pkt"), Duration::from_secs(2));
    spec.client.send_buffer = ByteSize::new(1 << 20);
    spec.server.recv_buffer = ByteSize::new(1 << 20);
    spec.emulator.pcap = Some(PcapSpec { path: path.clone(), tap: PcapTap::Server, snaplen: 65_535 });
    let run = run_stream(&spec).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(u32::from_le_bytes(bytes[0..4].try_into().unwrap()), 0xa1b2_3c4d, "nanosecond pcap");
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101, "LINKTYPE_RAW");
    let (mut up, mut down, mut all) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 24;
    while at < bytes.len() {
        let r = |o: usize| u32::from_le_bytes(bytes[at + o..at + o + 4].try_into().unwrap()) as u64;
        let ts = r(0) * 1_000_000_000 + r(4);
        let len = r(8) as usize;
        let ip = &bytes[at + 16..at + 16 + len];
        assert_eq!(ip[0], 0x45);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, len);
        assert_eq!(sum16(&ip[..20], 0), 0xffff, "IPv4 header checksum");
        // TCP checksum over the pseudo-header and the segment.
        let pseudo = sum16(&ip[12..20], 6 + (len as u32 - 20));
        assert_eq!(sum16(&ip[20..], pseudo), 0xffff, "TCP checksum");
        all.push(ts);
        if ip[12..16] == [198, 18, 0, 1] {
            up.push((ts, len));
        } else {
            down.push((ts, len));
        }
        at += 16 + len;
    }
    let h = &run.health;
    assert_eq!(up.len() as u64, h.up.link.frames_delivered - h.up.in_flight_at_stop);
    assert_eq!(down.len() as u64, h.down.link.frames_in, "every frame the server sent, at its input instant");
    assert!(all.windows(2).all(|w| w[0] <= w[1]), "the two directions are merged in time order");
    // Full frames queued back to back arrive exactly (1500 + 38) × 8 bits / 10 Mbit/s = 1,230,400 ns apart,
    // never closer.
    let gaps: Vec<u64> = up.windows(2).filter(|w| w[0].1 == 1500 && w[1].1 == 1500).map(|w| w[1].0 - w[0].0).collect();
    assert_eq!(gaps.iter().min(), Some(&1_230_400), "{:?}", &gaps[..gaps.len().min(20)]);
    let back_to_back = gaps.iter().filter(|&&g| g == 1_230_400).count();
    assert!(back_to_back > gaps.len() / 2, "{back_to_back} of {}", gaps.len());
    Ok(())
}

tcplab_testkit::tests!(the_servers_tap_has_every_frame_at_its_model_instant);
