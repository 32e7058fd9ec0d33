//! pcap traces read back by Wireshark's `tshark`: no malformed packets or checksum warnings, one
//! frame per packet of the tap, TCP analysis that agrees with tcplab's counters, and a handshake
//! decoded as tcplab sent it; for RDP (IPv4 protocol 27, which tshark shows as data), clean IPv4 and
//! payloads that decode, checksums verified, to the segments the stack sent.
//!
//! Without `tshark` on the PATH these tests are reported as ignored, with the reason, except under
//! `CI=true`, where they fail (crates/testkit, docs/testing.md).

use crate::common;

use common::{count, tshark, BAD};
use std::path::Path;

use tcplab_lab::{load, ResultDoc, Source};
use tcplab_report::pcap::{PcapProbe, Tap};
use tcplab_sim::{PacketEvent, Probe};
use tcplab_tcp::Connection;
use tcplab_testkit::{need_tool, Outcome};
use tcplab_units::Instant;
use tcplab_wire::TcpSegment;

const LOSSY: &str = "name = \"lossy\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
    loss = { model = \"bernoulli\", p = 0.02 }\n[path.down]\nrate = \"10mbit\"\ndelay = \"20ms\"\n\
    loss = { model = \"bernoulli\", p = 0.01 }\n[test]\nkind = \"tcp_stream\"\nduration = \"3s\"\n";

/// The trace, and tcplab's own record of the SYNs (as the stack built them).
struct Recording {
    pcap: PcapProbe,
    syns: Vec<TcpSegment>,
}

impl Probe<Connection> for Recording {
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &TcpSegment) {
        if matches!(ev, PacketEvent::Sent { .. }) && seg.flags.syn() {
            self.syns.push(*seg);
        }
        Probe::<Connection>::on_packet(&mut self.pcap, now, ev, seg);
    }
}

fn run(tap: Tap, snaplen: u32, file: &Path) -> (ResultDoc, Vec<TcpSegment>, u64) {
    let s = load(&Source { name: "lossy.toml", text: LOSSY }, &[]).unwrap();
    let mut rec = Recording { pcap: PcapProbe::create(file, tap, snaplen).unwrap(), syns: Vec::new() };
    let doc = tcplab_lab::run_scenario_on::<tcplab_lab::Tcp>(&s, 1, Some(&mut rec)).unwrap();
    let n = rec.pcap.finish().unwrap();
    (doc, rec.syns, n)
}

fn estat(doc: &ResultDoc, side: &str, var: &str) -> u64 {
    let c = doc.points[0].connections.iter().find(|c| c.side == side).unwrap();
    c.estats[var].as_u64().unwrap()
}

fn every_tap_reads_back_whole_and_clean() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    for (tap, name) in [(Tap::Client, "client"), (Tap::Server, "server"), (Tap::Up, "up"), (Tap::Down, "down")] {
        for snaplen in [tcplab_report::pcap::DEFAULT_SNAPLEN, 96] {
            let file = dir.path().join(format!("{name}-{snaplen}.pcap"));
            let (doc, _, written) = run(tap, snaplen, &file);
            let l = &doc.points[0].links;
            // What the tap sees, from the path's and the NICs' own counters.
            let expected = match tap {
                Tap::Client => l.nic_client.frames_sent + l.down.frames_delivered,
                Tap::Server => l.nic_server.frames_sent + l.up.frames_delivered,
                Tap::Up => l.up.frames_in,
                Tap::Down => l.down.frames_in,
            };
            assert!(l.up.drops_random_loss > 0 && l.down.drops_random_loss > 0, "the run must be lossy");
            assert_eq!(written, expected, "{name}: packets written");
            assert_eq!(tshark(&file, &[]).len() as u64, expected, "{name}/{snaplen}: frames tshark reads");
            assert_eq!(count(&file, BAD), 0, "{name}/{snaplen}: malformed or checksum-flagged frames");
            // Whole frames verify their checksums; truncated ones cannot be verified, and are not flagged.
            if snaplen == tcplab_report::pcap::DEFAULT_SNAPLEN {
                assert_eq!(count(&file, "tcp.checksum.status == 1"), expected as usize, "{name}: TCP checksums good");
                assert_eq!(count(&file, "ip.checksum.status == 1"), expected as usize, "{name}: IP checksums good");
            }
        }
    }
    Ok(())
}

fn the_bad_frame_filter_catches_a_corrupted_frame() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.pcap");
    run(Tap::Client, tcplab_report::pcap::DEFAULT_SNAPLEN, &file);
    let mut bytes = std::fs::read(&file).unwrap();
    // The first frame starts after the file header (24) and its record header (16); flip a TCP port byte.
    bytes[24 + 16 + 14 + 20] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    assert_eq!(count(&file, BAD), 1);
    Ok(())
}

fn retransmissions_and_handshake_agree_with_tcplab() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("client.pcap");
    let (doc, syns, _) = run(Tap::Client, 128, &file);
    // A fast retransmission is also flagged a retransmission: count frames, not flags.
    let retrans = "(tcp.analysis.retransmission || tcp.analysis.fast_retransmission)";
    let sent_by_client = count(&file, &format!("ip.src == 198.18.0.1 && {retrans}"));
    let segs_retrans = estat(&doc, "client", "SegsRetrans");
    assert!(segs_retrans > 0, "the run must retransmit");
    assert_eq!(sent_by_client as u64, segs_retrans, "tshark's retransmissions of the client vs its SegsRetrans");

    // The SYN and the SYN-ACK as tshark decodes them, against the segments tcplab's stack built.
    let fields = ["tcp.options.mss_val", "tcp.options.wscale.shift", "tcp.options.sack_perm"];
    let mut args = vec!["-Y", "tcp.flags.syn == 1", "-T", "fields", "-E", "separator=,"];
    for f in &fields {
        args.extend(["-e", f]);
    }
    let rows = tshark(&file, &args);
    assert_eq!(rows.len(), syns.len(), "SYNs in the trace: {rows:?}");
    for (row, syn) in rows.iter().zip(&syns) {
        let v: Vec<&str> = row.split(',').collect();
        assert_eq!(v[0].parse::<u16>().ok(), syn.options.mss, "MSS: {row}");
        assert_eq!(v[1].parse::<u8>().ok(), syn.options.window_scale, "wscale: {row}");
        assert_eq!(!v[2].is_empty(), syn.options.sack_permitted, "SACK-permitted: {row}");
    }
    // The negotiated MSS: the smaller offer less the timestamp option, the largest payload tshark saw.
    let offered = syns.iter().filter_map(|s| s.options.mss).min().unwrap() as u64;
    let cur_mss = estat(&doc, "client", "CurMSS");
    assert_eq!(offered - 12, cur_mss);
    let lens = tshark(&file, &["-Y", "ip.src == 198.18.0.1", "-T", "fields", "-e", "tcp.len"]);
    let max_len = lens.iter().filter_map(|l| l.parse::<u64>().ok()).max().unwrap();
    assert_eq!(max_len, cur_mss);
    Ok(())
}

fn traces_are_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.pcap");
    let b = dir.path().join("b.pcap");
    run(Tap::Up, 128, &a);
    run(Tap::Up, 128, &b);
    assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
}

// ---- RDP: IPv4 protocol 27 ----------------------------------------------------------------------------------

/// The trace of an RDP run, and the segments the stacks handed to their NICs, per host, in order.
struct RdpRecording {
    pcap: PcapProbe<tcplab_wire::RdpSegment>,
    sent: [Vec<tcplab_wire::RdpSegment>; 2],
}

impl Probe<tcplab_rdp::RdpConnection> for RdpRecording {
    fn on_packet(&mut self, now: Instant, ev: PacketEvent, seg: &tcplab_wire::RdpSegment) {
        if let PacketEvent::Sent { host, .. } = ev {
            self.sent[host].push(*seg);
        }
        Probe::<tcplab_rdp::RdpConnection>::on_packet(&mut self.pcap, now, ev, seg);
    }
}

/// rdp-loopback cut to 1,000 messages, losing 4 % of the data packets and 4 % of the ACKs too (so that
/// retransmissions, EACKs and duplicate ACKs are all in the trace).
fn run_rdp(tap: Tap, file: &Path) -> (ResultDoc, [Vec<tcplab_wire::RdpSegment>; 2], u64) {
    let text = tcplab_lab::SHIPPED.iter().find(|s| s.name == "rdp-loopback").unwrap().text;
    let set = ["test.messages=1000".to_string(), "path.down.loss={model=\"bernoulli\",p=0.04}".to_string()];
    let s = load(&Source { name: "rdp-loopback.toml", text }, &set).unwrap();
    let mut rec = RdpRecording {
        pcap: PcapProbe::create(file, tap, tcplab_report::pcap::DEFAULT_SNAPLEN).unwrap(),
        sent: [Vec::new(), Vec::new()],
    };
    let doc = tcplab_lab::run_scenario_on::<tcplab_lab::transport::Rdp>(&s, 1, Some(&mut rec)).unwrap();
    let n = rec.pcap.finish().unwrap();
    (doc, rec.sent, n)
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap()).collect()
}

/// tshark has no dissector for RFC 908's RDP (its "RDP" is the Remote Desktop Protocol), so it shows
/// protocol 27's payload as data: the IPv4 layer must be clean (no malformed frame, every header checksum
/// good), every frame protocol 27, one per packet of the tap; and the payload bytes tshark extracts must
/// decode with tcplab's codec — RFC 1151 checksum over the pseudo-header verified — to exactly the segments
/// the stack sent, in order, SYN options and EACK lists included.
fn rdp_traces_are_clean_ipv4_protocol_27_that_decode_to_the_segments_sent() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    for (tap, name) in [(Tap::Client, "client"), (Tap::Server, "server"), (Tap::Up, "up"), (Tap::Down, "down")] {
        let file = dir.path().join(format!("rdp-{name}.pcap"));
        let (doc, sent, written) = run_rdp(tap, &file);
        let l = &doc.points[0].links;
        assert!(l.up.drops_random_loss > 0 && l.down.drops_random_loss > 0, "the run must be lossy");
        let expected = match tap {
            Tap::Client => l.nic_client.frames_sent + l.down.frames_delivered,
            Tap::Server => l.nic_server.frames_sent + l.up.frames_delivered,
            Tap::Up => l.up.frames_in,
            Tap::Down => l.down.frames_in,
        };
        assert_eq!(written, expected, "{name}: packets written");
        assert_eq!(tshark(&file, &[]).len() as u64, expected, "{name}: frames tshark reads");
        assert_eq!(count(&file, BAD), 0, "{name}: malformed or checksum-flagged frames");
        assert_eq!(count(&file, "ip.proto == 27 && ip.checksum.status == 1") as u64, expected, "{name}");
        let (host, src, dst) = match tap {
            Tap::Up => (0, [198, 18, 0, 1], [198, 18, 0, 2]),
            Tap::Down => (1, [198, 18, 0, 2], [198, 18, 0, 1]),
            _ => continue,
        };
        // What the NIC of the sending host took is what enters its direction, in order.
        let rows = tshark(&file, &["-T", "fields", "-e", "data.data"]);
        assert_eq!(rows.len(), sent[host].len(), "{name}: frames vs segments sent");
        let codec = tcplab_wire::codec::rdp::RdpCodec::default();
        let (mut eacks, mut retrans_copies) = (0, 0);
        let mut seen = std::collections::HashSet::new();
        for (i, (row, want)) in rows.iter().zip(&sent[host]).enumerate() {
            let bytes = hex(row.trim());
            let got =
                tcplab_wire::codec::rdp::parse_rdp(&bytes, src, dst, &codec, tcplab_wire::codec::Checksums::Verify)
                    .unwrap_or_else(|e| panic!("{name} frame {}: {e:?}", i + 1));
            // An EACK list compares by its numbers (its bitmap's base is where the list was built from).
            let numbers = |s: &tcplab_wire::RdpSegment| s.eacks.iter().collect::<Vec<_>>();
            assert_eq!(numbers(&got), numbers(want), "{name} frame {}: EACK list", i + 1);
            let plain = |s: &tcplab_wire::RdpSegment| tcplab_wire::RdpSegment { eacks: Default::default(), ..*s };
            assert_eq!(plain(&got), plain(want), "{name} frame {}", i + 1);
            eacks += usize::from(got.flags.eack());
            if got.data_len > 0 && !seen.insert(got.seq) {
                retrans_copies += 1;
            }
        }
        let (client, server) = {
            let c = &doc.points[0].connections;
            let s = |i: usize| serde_json::from_value::<tcplab_rdp::RdpStats>((*c[i].estats).clone()).unwrap();
            (s(0), s(1))
        };
        let end = if host == 0 { &client } else { &server };
        assert_eq!(eacks as u64, end.EacksOut, "{name}: EACK frames");
        assert_eq!(retrans_copies as u64, end.SegsRetrans, "{name}: data frames whose number was sent before");
        if host == 1 {
            assert!(eacks > 0, "the receiver's EACKs are in the trace");
        }
    }
    Ok(())
}

/// IP fragmentation: with a 576-byte MTU on the up direction every full data segment crosses in three
/// fragments. Every frame is clean IPv4; tshark finds exactly tcplab's fragments, and reassembles, with a
/// good TCP checksum, exactly the datagrams the server reassembled (the ones none of whose fragments was
/// lost).
fn fragments_are_clean_ipv4_that_tshark_reassembles_as_the_server_did() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    let s = load(&Source { name: "lossy.toml", text: LOSSY }, &["path.up.mtu=\"576B\"".to_string()]).unwrap();
    for (tap, name) in [(Tap::Up, "up"), (Tap::Server, "server")] {
        let file = dir.path().join(format!("frag-{name}.pcap"));
        let mut pcap = PcapProbe::create(&file, tap, tcplab_report::pcap::DEFAULT_SNAPLEN).unwrap();
        let doc = tcplab_lab::run_scenario_on::<tcplab_lab::Tcp>(&s, 1, Some(&mut pcap)).unwrap();
        let written = pcap.finish().unwrap();
        let l = &doc.points[0].links;
        let (client, server) = (l.ip_client.unwrap(), l.ip_server.unwrap());
        assert!(client.out_frag_reqds > 100 && server.reasm_oks < client.out_frag_reqds, "fragments, some lost");
        let expected = match tap {
            Tap::Up => l.up.frames_in,
            _ => l.nic_server.frames_sent + l.up.frames_delivered,
        };
        assert_eq!(written, expected, "{name}: packets written");
        assert_eq!(tshark(&file, &[]).len() as u64, expected, "{name}: frames tshark reads");
        assert_eq!(count(&file, BAD), 0, "{name}: malformed or checksum-flagged frames");
        assert_eq!(count(&file, "ip.checksum.status == 1"), expected as usize, "{name}: IP checksums good");
        let fragments = count(&file, "ip.flags.mf == 1 || ip.frag_offset > 0") as u64;
        let last_fragments = count(&file, "tcp && ip.frag_offset > 0") as u64;
        match tap {
            Tap::Up => {
                assert_eq!(fragments, client.out_frag_creates, "up: every fragment the client made");
                assert!(last_fragments <= client.out_frag_reqds);
            }
            _ => {
                assert_eq!(fragments, server.reasm_reqds, "server: every fragment that arrived");
                assert_eq!(last_fragments, server.reasm_oks, "server: datagrams tshark reassembles");
                assert_eq!(
                    count(&file, "tcp && ip.frag_offset > 0 && tcp.checksum.status == 1") as u64,
                    server.reasm_oks,
                    "reassembled segments verify their TCP checksum"
                );
            }
        }
    }
    Ok(())
}

tcplab_testkit::tests!(
    every_tap_reads_back_whole_and_clean,
    the_bad_frame_filter_catches_a_corrupted_frame,
    retransmissions_and_handshake_agree_with_tcplab,
    traces_are_byte_identical_across_runs,
    rdp_traces_are_clean_ipv4_protocol_27_that_decode_to_the_segments_sent,
    fragments_are_clean_ipv4_that_tshark_reassembles_as_the_server_did,
);
