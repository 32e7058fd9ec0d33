//! `test.kind` is the workload and `test.transport` the protocol (issue #24 item 4): the full names
//! scenario files have always used (`"rdp_rr"`) are spellings of a workload and a transport, documents
//! still record the full name, and a transport refuses a workload it does not run.

use tcplab_lab::transport::Rdp;
use tcplab_lab::{load, run_scenario, LabTransport, Protocol, ResultDoc, Source, TestKind};

const BASE: &str = r#"
name = "split"
[path.up]
rate = "10mbit"
delay = "1ms"
[test]
"#;

fn with_test(lines: &str) -> Result<tcplab_lab::Scenario, String> {
    let text = format!("{BASE}{lines}\nduration = \"50ms\"\n");
    load(&Source { name: "split.toml", text: &text }, &[]).map_err(|e| e.to_string())
}

#[test]
fn a_full_name_is_the_workload_with_its_transport() {
    for (full, kind, transport) in [
        ("tcp_stream", TestKind::Stream, Protocol::TCP),
        ("tcp_maerts", TestKind::Maerts, Protocol::TCP),
        ("tcp_rr", TestKind::Rr, Protocol::TCP),
        ("tcp_crr", TestKind::Crr, Protocol::TCP),
        ("tcp_msg", TestKind::Msg, Protocol::TCP),
        ("rdp_stream", TestKind::Stream, Rdp::NAME),
        ("rdp_rr", TestKind::Rr, Rdp::NAME),
    ] {
        let old = with_test(&format!("kind = {full:?}")).unwrap();
        assert_eq!((old.test.kind, old.test.transport), (kind, transport), "{full}");
        assert_eq!(old.test.kind_name(), full);
        let new = with_test(&format!("kind = {:?}\ntransport = {:?}", kind.key(), transport.key())).unwrap();
        // Alike but for where each key was written (`explicit`).
        assert_eq!(new.test, old.test, "{full} and its split spelling resolve alike");
        assert_eq!(serde_json::to_value(&new).unwrap(), serde_json::to_value(&old).unwrap(), "{full}");
        // The document records the full name, as it always has.
        let v = serde_json::to_value(&new).unwrap();
        assert_eq!(v["test"]["kind"], full);
        assert!(v["test"].get("transport").is_none(), "no new field in the document");
        // Both spellings agree on the transport they name.
        let same = with_test(&format!("kind = {full:?}\ntransport = {:?}", transport.key())).unwrap();
        assert_eq!(same.test, old.test);
    }
    // The workload alone runs over TCP.
    let s = with_test("kind = \"rr\"").unwrap();
    assert_eq!(
        (s.test.kind, s.test.transport, s.test.netperf_name()),
        (TestKind::Rr, Protocol::TCP, "TCP REQUEST/RESPONSE".into())
    );
}

#[test]
fn bad_spellings_say_what_is_accepted() {
    let e = with_test("kind = \"rdp_stream\"\ntransport = \"tcp\"").unwrap_err();
    assert!(
        e.contains("test.transport") && e.contains("names the transport \"rdp\"") && e.contains("\"stream\""),
        "{e}"
    );
    let e = with_test("kind = \"maerts\"\ntransport = \"rdp\"").unwrap_err();
    assert!(e.contains("test.kind") && e.contains("\"rdp_maerts\"") && e.contains("\"rdp_stream\", \"rdp_rr\""), "{e}");
    let e = with_test("kind = \"udp_stream\"").unwrap_err();
    assert!(e.contains("unknown variant `udp_stream`") && e.contains("`crr`") && e.contains("`rdp_rr`"), "{e}");
    let e = with_test("kind = \"stream\"\ntransport = \"quic\"").unwrap_err();
    assert!(e.contains("quic") && e.contains("tcp") && e.contains("rdp"), "{e}");
}

#[test]
fn a_document_reads_back_with_its_transport() {
    let s = with_test("kind = \"rr\"\ntransport = \"rdp\"").unwrap();
    let doc = run_scenario(&s, 1).unwrap();
    let text = serde_json::to_string(&doc).unwrap();
    assert!(text.contains("\"kind\":\"rdp_rr\""), "the document's test.kind is the full name");
    let back = ResultDoc::from_json(&text).unwrap();
    assert_eq!((back.scenario.test.kind, back.scenario.test.transport), (TestKind::Rr, Rdp::NAME));
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}
