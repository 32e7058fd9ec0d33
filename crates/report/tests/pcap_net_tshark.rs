//! Packet traces of runs with more than two hosts (`tcplab_report::pcap_net`), read back by tshark: on
//! shipped dumbbells and the parking lot, the TCP conversations tshark finds at the traced links are exactly
//! the flows that cross them, between their hosts' own addresses; every frame the directions took in is
//! there once, none malformed, checksums good. Without `tshark` the tshark tests are reported as ignored,
//! with the reason, except under `CI=true`, where they fail (crates/testkit, docs/testing.md).

use crate::common;

use common::{count, tshark, BAD};
use std::collections::BTreeSet;
use std::path::Path;

use tcplab_lab::{load, ResultDoc, Scenario, Source};
use tcplab_report::pcap::host_addr;
use tcplab_report::pcap_net::{default_taps, parse_taps, NetPcapProbe};
use tcplab_sim::{DirId, HostId, Routes};
use tcplab_tcp::Connection;
use tcplab_testkit::{need_tool, Outcome};
use tcplab_wire::TcpSegment;

/// A shipped scenario, shortened to 1 s of measurement.
fn shipped(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).unwrap();
    load(&Source { name: &format!("{name}.toml"), text: &text }, &["test.duration=\"1s\"".into()]).unwrap()
}

fn traced(s: &Scenario, taps: &[DirId], file: &Path) -> (ResultDoc, u64) {
    let mut pcap = NetPcapProbe::<TcpSegment>::create(file, s, taps, tcplab_report::pcap::DEFAULT_SNAPLEN).unwrap();
    let doc = tcplab_lab::run_scenario_on::<tcplab_lab::Tcp>(
        s,
        s.seed,
        Some(&mut pcap as &mut dyn tcplab_sim::Probe<Connection>),
    )
    .unwrap();
    (doc, pcap.finish().unwrap())
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// The flows whose packets (either way) cross a traced direction, as (sender address, receiver address,
/// receiver port).
fn flows_through(s: &Scenario, taps: &[DirId]) -> BTreeSet<(String, String, u16)> {
    let placed = tcplab_lab::topology::place(s);
    let mut routes = Routes::new(placed.spec.hosts.len(), &placed.spec.links);
    let mut crosses = |a: HostId, b: HostId| {
        let r = routes.route(a, b).unwrap();
        routes.get(r).hops.iter().any(|d| taps.contains(d))
    };
    tcplab_lab::topology::flow_ends(s)
        .into_iter()
        .filter(|&(snd, rcv, _)| crosses(snd, rcv) || crosses(rcv, snd))
        .map(|(snd, rcv, port)| (dotted(host_addr(snd)), dotted(host_addr(rcv)), port))
        .collect()
}

/// tshark's TCP conversations: (the address that opened it, the other address, the other's port), with
/// the opener found by the SYN's direction.
fn conversations(file: &Path) -> BTreeSet<(String, String, u16)> {
    let mut out = BTreeSet::new();
    for line in tshark(file, &["-q", "-z", "conv,tcp"]) {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 3 || t[1] != "<->" {
            continue;
        }
        let split = |e: &str| {
            let (a, p) = e.rsplit_once(':').unwrap();
            (a.to_string(), p.parse::<u16>().unwrap())
        };
        let (a, pa) = split(t[0]);
        let (b, pb) = split(t[2]);
        // The receiver listens on 5001 and up; the sender's port is ephemeral (32768 and up).
        if pa < pb {
            out.insert((b, a, pa));
        } else {
            out.insert((a, b, pb));
        }
    }
    out
}

/// Every frame the traced directions took in, once, clean; the conversations are the flows through them.
fn check(name: &str, s: &Scenario, taps: &[DirId], file: &Path) {
    let (doc, written) = traced(s, taps, file);
    let dirs = &doc.points[0].links.directions;
    let frames_in: u64 = taps.iter().map(|d| dirs[d.index()].counters.frames_in).sum();
    assert!(frames_in > 0, "{name}: the traced directions carried nothing");
    assert_eq!(written, frames_in, "{name}: packets written");
    assert_eq!(tshark(file, &[]).len() as u64, frames_in, "{name}: frames tshark reads");
    assert_eq!(count(file, BAD), 0, "{name}: malformed or checksum-flagged frames");
    assert_eq!(count(file, "tcp.checksum.status == 1") as u64, frames_in, "{name}: TCP checksums good");
    let want = flows_through(s, taps);
    assert!(!want.is_empty());
    assert_eq!(conversations(file), want, "{name}: tshark's TCP conversations are the flows");
    // Time order, as a capture has it.
    let times: Vec<f64> =
        tshark(file, &["-T", "fields", "-e", "frame.time_epoch"]).iter().map(|t| t.parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: records out of time order");
}

fn dumbbells_bottleneck_holds_every_flow_between_its_hosts() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    for name in ["cubic-vs-reno", "rtt-fairness"] {
        let s = shipped(name);
        let taps = default_taps(&s);
        assert_eq!(taps, [DirId(0), DirId(1)], "a dumbbell's default is its bottleneck, both ways");
        let file = dir.path().join(format!("{name}.pcap"));
        check(name, &s, &taps, &file);
        // Every flow's own hosts: senders 0..N, receivers N..2N.
        let n = s.flow.len() as u32;
        let want: BTreeSet<_> =
            (0..n).map(|i| (dotted(host_addr(HostId(i))), dotted(host_addr(HostId(n + i))), 5001)).collect();
        assert_eq!(conversations(&file), want, "{name}");
        // On the bottleneck the Ethernet addresses are the routers'.
        let macs: BTreeSet<String> =
            tshark(&file, &["-T", "fields", "-e", "eth.src"]).into_iter().collect::<BTreeSet<_>>();
        let router = |h: u32| {
            let m = tcplab_report::pcap::host_mac(HostId(h));
            m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
        };
        assert_eq!(macs, [router(2 * n), router(2 * n + 1)].into_iter().collect(), "{name}");
    }
    Ok(())
}

fn a_networks_links_hold_the_flows_that_cross_them() -> Outcome {
    need_tool("tshark", "install Debian's tshark")?;
    let dir = tempfile::tempdir().unwrap();
    let s = shipped("parking-lot");
    // The default (the slowest link, both ways), one other link by its name, and every direction at once.
    let every = (0..tcplab_report::pcap_net::direction_names(&s).len() as u32).map(DirId).collect::<Vec<_>>();
    for (label, taps) in
        [("default", default_taps(&s)), ("link[2]", parse_taps(&s, "link[2]").unwrap()), ("all", every)]
    {
        let file = dir.path().join(format!("parking-lot-{label}.pcap"));
        check(&format!("parking-lot {label}"), &s, &taps, &file);
    }
    Ok(())
}

/// `--pcap-at` names: a direction, a link for both, several; an unknown name lists the accepted ones.
fn tap_names_resolve_or_name_the_accepted_ones() {
    let s = shipped("cubic-vs-reno");
    assert_eq!(parse_taps(&s, "bottleneck").unwrap(), [DirId(0)]);
    assert_eq!(parse_taps(&s, "reverse, bottleneck").unwrap(), [DirId(0), DirId(1)]);
    // Links: the bottleneck, then per flow its sender's access link and its receiver's.
    assert_eq!(parse_taps(&s, "flow[1].sender_access").unwrap(), [DirId(6), DirId(7)]);
    assert_eq!(parse_taps(&s, "flow[0].receiver_access.backward").unwrap(), [DirId(5)]);
    let e = parse_taps(&s, "client").unwrap_err();
    assert!(e.contains("\"client\"") && e.contains("accepted: ") && e.contains("bottleneck, reverse"), "{e}");
    let p = shipped("parking-lot");
    assert_eq!(parse_taps(&p, "link[0].backward").unwrap(), [DirId(1)]);
}

tcplab_testkit::tests!(
    dumbbells_bottleneck_holds_every_flow_between_its_hosts,
    a_networks_links_hold_the_flows_that_cross_them,
    tap_names_resolve_or_name_the_accepted_ones
);
