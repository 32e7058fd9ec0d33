//! The lab's transport seam (issue #24 item 4): the run path picks the transport of the test kind, the
//! generic path over a named transport gives the same document, and a transport refuses what it does
//! not run.

use tcplab_lab::transport::Rdp;
use tcplab_lab::{load, run_point, run_scenario, run_scenario_on, LabTransport, Protocol, RunError, Source, Tcp};

fn shipped(name: &str, set: &[&str]) -> tcplab_lab::Scenario {
    let s = tcplab_lab::SHIPPED.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} is shipped"));
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: s.name, text: s.text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

fn json(d: &tcplab_lab::ResultDoc) -> String {
    serde_json::to_string(d).unwrap()
}

#[test]
fn each_transport_name_dispatches_to_exactly_one_transport() {
    for p in Protocol::all() {
        assert!(Tcp::runs(p) != Rdp::runs(p), "{p:?} runs one transport");
    }
    assert_eq!((Tcp::NAME, Rdp::NAME), (Protocol::TCP, Protocol::parse("rdp").unwrap()));
    assert_eq!((Tcp::PROTOCOL, Rdp::PROTOCOL), ("tcp", "rdp"));
}

#[test]
fn the_generic_path_gives_the_dispatched_document() {
    let tcp = shipped("bulk-10m", &["test.duration=\"300ms\""]);
    let direct = run_scenario_on::<Tcp>(&tcp, 3, None).unwrap();
    assert_eq!(json(&direct), json(&run_scenario(&tcp, 3).unwrap()));
    assert!(direct.points[0].connections.iter().all(|c| c.protocol == Tcp::PROTOCOL));

    let rdp = shipped("rdp-loopback", &["test.messages=200"]);
    let direct = run_scenario_on::<Rdp>(&rdp, 3, None).unwrap();
    assert_eq!(json(&direct), json(&run_scenario(&rdp, 3).unwrap()));
    assert!(direct.points[0].connections.iter().all(|c| c.protocol == Rdp::PROTOCOL));
    // The point alone, as sweeps run it, is the document's point.
    let p = run_point(&rdp, 3).unwrap().point;
    assert_eq!(serde_json::to_string(&p).unwrap(), serde_json::to_string(&direct.points[0]).unwrap());
}

#[test]
fn a_transport_refuses_a_test_of_another() {
    let rdp = shipped("rdp-loopback", &["test.messages=200"]);
    match run_scenario_on::<Tcp>(&rdp, 1, None) {
        Err(RunError::Unsupported(m)) => assert!(m.contains("rdp_stream") && m.contains("tcp"), "{m}"),
        other => panic!("a TCP run of an RDP test: {other:?}"),
    }
    let tcp = shipped("bulk-10m", &["test.duration=\"100ms\""]);
    match run_scenario_on::<Rdp>(&tcp, 1, None) {
        Err(RunError::Unsupported(m)) => assert!(m.contains("tcp_stream") && m.contains("rdp"), "{m}"),
        other => panic!("an RDP run of a TCP test: {other:?}"),
    }
}

#[test]
fn rdp_version_1_cannot_be_traced_and_says_why() {
    let v2 = shipped("rdp-loopback", &["test.messages=200"]);
    assert_eq!(Rdp::untraceable(&v2), None);
    let v1 = shipped("rdp-loopback", &["test.messages=200", "client.rdp.version=1", "server.rdp.version=1"]);
    let why = Rdp::untraceable(&v1).expect("version 1 ports do not fit the simulator's");
    assert!(why.contains("RDP version 1") && why.contains("rdp.version = 2"), "{why}");
    assert_eq!(Tcp::untraceable(&shipped("bulk-10m", &[])), None);
}
