//! The ECN bits in a trace as Wireshark's `tshark` reads them (RFC 3168 §5, §6.1): the IP ECN field
//! (`ip.dsfield.ecn`: 2 = ECT(0), 3 = CE) and the TCP ECE and CWR flags (`tcp.flags.ece`,
//! `tcp.flags.cwr`), from two ECN connections driven against each other with one data segment marked CE
//! on the way, encoded by tcplab's codec as every trace is.
//!
//! Without `tshark` on the PATH the test is reported as ignored, with the reason, except under `CI=true`,
//! where it fails (crates/testkit, docs/testing.md).

use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;
use std::process::Command;

use tcplab_report::pcap::file_header;
use tcplab_tcp::{Connection, EcnMode, TcpConfig, TxRoom};
use tcplab_testkit::{need_tool, Outcome};
use tcplab_units::{Duration, Instant};
use tcplab_wire::codec::{emit_ipv4_tcp, PayloadFill};
use tcplab_wire::{EcnCodepoint, TcpFlags, TcpSegment};

const ADDRS: [[u8; 4]; 2] = [[10, 0, 0, 1], [10, 0, 0, 2]];
/// The new data segment (counted from 1) the path marks CE.
const MARKED: usize = 8;

/// Every segment both sides sent, in order, as it arrived (the marked one CE), with the time it was sent
/// and its sender (0 client, 1 server).
fn exchange() -> Vec<(Instant, usize, TcpSegment)> {
    let cfg = |ecn| TcpConfig { ecn, ..TcpConfig::personality("linux").unwrap() };
    let mut ends = [
        Connection::connect(cfg(EcnMode::On), 40000, 5001, 1000),
        Connection::listen(cfg(EcnMode::Accept), 5001, 9000),
    ];
    let one_way = Duration::from_millis(5);
    let mut wire: VecDeque<(Instant, usize, TcpSegment)> = VecDeque::new();
    let mut trace = Vec::new();
    let (mut now, mut data, mut highest) = (Instant::ZERO, 0, None::<tcplab_wire::SeqNumber>);
    let mut to_write = 40 * 1448u64;
    for _ in 0..10_000 {
        if ends[0].is_established() && to_write > 0 {
            to_write -= ends[0].send(to_write);
        }
        for (from, end) in ends.iter_mut().enumerate() {
            let _ = end.recv(u64::MAX);
            while let Some(mut seg) = end.poll_transmit(now, TxRoom::Free) {
                let fresh = seg.payload_len > 0 && highest.is_none_or(|h| seg.seq + seg.payload_len > h);
                if from == 0 && fresh {
                    highest = Some(seg.seq + seg.payload_len);
                    data += 1;
                    if data == MARKED {
                        assert!(seg.mark_ce(), "new data of an ECN connection is ECT");
                    }
                }
                trace.push((now, from, seg));
                wire.push_back((now + one_way, 1 - from, seg));
            }
        }
        let next =
            [wire.front().map(|w| w.0), ends[0].poll_timeout(), ends[1].poll_timeout()].into_iter().flatten().min();
        let Some(next) = next else { break };
        now = next;
        while wire.front().is_some_and(|w| w.0 == now) {
            let (_, to, seg) = wire.pop_front().unwrap();
            ends[to].on_segment(now, &seg);
        }
        for end in &mut ends {
            if end.poll_timeout().is_some_and(|t| t <= now) {
                end.on_timeout(now);
            }
        }
        if to_write == 0
            && ends[0].snd_una() == ends[0].snd_nxt()
            && wire.is_empty()
            && now > Instant::from_nanos(1_000_000_000)
        {
            break;
        }
    }
    assert_eq!(to_write, 0, "the transfer finished");
    trace
}

fn write_pcap(file: &Path, trace: &[(Instant, usize, TcpSegment)]) {
    let mut out = std::fs::File::create(file).unwrap();
    out.write_all(&file_header(65_535)).unwrap();
    for (i, (at, from, seg)) in trace.iter().enumerate() {
        let mut frame = Vec::new();
        frame.extend_from_slice(&[2, 0, 0, 0, 0, 2 - *from as u8]);
        frame.extend_from_slice(&[2, 0, 0, 0, 0, 1 + *from as u8]);
        frame.extend_from_slice(&0x0800u16.to_be_bytes());
        emit_ipv4_tcp(seg, ADDRS[*from], ADDRS[1 - from], i as u16, PayloadFill::Zeros, &mut frame).unwrap();
        let ns = at.as_nanos();
        for v in [(ns / 1_000_000_000) as u32, (ns % 1_000_000_000) as u32, frame.len() as u32, frame.len() as u32] {
            out.write_all(&v.to_le_bytes()).unwrap();
        }
        out.write_all(&frame).unwrap();
    }
}

/// tshark's fields `ip.dsfield.ecn`, `tcp.flags.ece`, `tcp.flags.cwr`, `_ws.malformed` per frame.
fn fields(file: &Path) -> Vec<(u8, bool, bool)> {
    let out = Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE", "-r"])
        .arg(file)
        .args([
            "-T",
            "fields",
            "-E",
            "separator=,",
            "-e",
            "ip.dsfield.ecn",
            "-e",
            "tcp.flags.ece",
            "-e",
            "tcp.flags.cwr",
        ])
        .args(["-e", "ip.checksum.status", "-e", "tcp.checksum.status", "-e", "_ws.malformed"])
        .output()
        .expect("tshark runs");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let flag = |s: &str| s == "1" || s == "True";
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 6, "{l}");
            assert_eq!((f[3], f[4], f[5]), ("1", "1", ""), "checksums good (status 1), not malformed: {l}");
            (f[0].parse().unwrap(), flag(f[1]), flag(f[2]))
        })
        .collect()
}

fn ecn_bits_read_back_as_sent() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let trace = exchange();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ecn.pcap");
    write_pcap(&file, &trace);
    if let Some(keep) = std::env::var_os("TCPLAB_KEEP_PCAP") {
        std::fs::copy(&file, keep).unwrap();
    }
    let got = fields(&file);
    assert_eq!(got.len(), trace.len(), "one frame per segment");
    for (i, ((ecn, ece, cwr), (_, _, seg))) in got.iter().zip(&trace).enumerate() {
        let want = (seg.ecn.bits(), seg.flags.contains(TcpFlags::ECE), seg.flags.contains(TcpFlags::CWR));
        assert_eq!((*ecn, *ece, *cwr), want, "frame {}: {seg:?}", i + 1);
    }
    // The exchange has everything ECN puts on the wire.
    let count = |f: &dyn Fn(&(u8, bool, bool)) -> bool| got.iter().filter(|g| f(g)).count();
    assert_eq!(count(&|g| g.0 == EcnCodepoint::Ce.bits()), 1, "the one CE mark");
    assert!(count(&|g| g.0 == EcnCodepoint::Ect0.bits()) >= MARKED, "ECT(0) data");
    assert_eq!(count(&|g| g.2), 2, "CWR on the ECN-setup SYN and on one data segment");
    assert!(count(&|g| g.1) >= 3, "ECE on the SYN, the SYN-ACK and the echo");
    let (syn, syn_ack) = (&trace[0].2, &trace[1].2);
    assert_eq!(syn.flags, TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR);
    assert_eq!(syn_ack.flags, TcpFlags::SYN | TcpFlags::ACK | TcpFlags::ECE);
    Ok(())
}

tcplab_testkit::tests!(ecn_bits_read_back_as_sent);
