//! A host carries its transports' knobs through the seam (issue #24 item 4): one table per registered
//! transport, no field per transport on `Host`; every spelling a scenario file had (`[client.tcp]`,
//! `[server.rdp]`) reads as before, and a result document writes and reads the tables as before.

use tcplab_lab::host_transports::{registration, TransportConfig, REGISTERED};
use tcplab_lab::transport::{dispatch, WithTransport};
use tcplab_lab::{load, LabTransport, Protocol, Scenario, ScenarioError, Source};
use tcplab_rdp::RdpConfig;

fn scenario(text: &str) -> Result<Scenario, ScenarioError> {
    load(&Source { name: "t.toml", text }, &[])
}

const PATH: &str = "name = \"t\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"10ms\"\nqueue = \"64KiB\"\n";

#[test]
fn every_transport_registers_its_config_under_its_name() {
    struct Check(Protocol);
    impl WithTransport for Check {
        type Output = ();
        fn with<T: LabTransport>(self) {
            assert_eq!(T::KNOB_TABLE, self.0.key(), "the knob table is test.transport's name");
            assert_eq!(<T::Config as TransportConfig>::TABLE, T::KNOB_TABLE);
            assert!(registration(T::KNOB_TABLE).is_some(), "{} registered in host_transports", T::KNOB_TABLE);
        }
    }
    for p in Protocol::all() {
        dispatch(p, Check(p));
    }
    assert_eq!(REGISTERED.len(), Protocol::all().len(), "one config per transport");
}

#[test]
fn an_rdp_host_carries_both_tables_and_the_document_writes_them_in_order() {
    let text = format!(
        "{PATH}[client.tcp]\nmss = \"1000B\"\n[server.rdp]\nmax_outstanding = 8\n[test]\nkind = \"rdp_stream\"\nmessages = 10\n"
    );
    let s = scenario(&text).unwrap();
    assert_eq!(s.client.tcp().mss.bytes(), 1000);
    assert_eq!(s.server.config::<RdpConfig>().unwrap().max_outstanding, 8);
    // The client's RDP knobs are the defaults: an RDP test resolves every host's.
    assert_eq!(s.client.config::<RdpConfig>(), Some(&RdpConfig::default()));
    let json = serde_json::to_string(&s.server).unwrap();
    let keys: Vec<usize> =
        ["\"stack\"", "\"tcp\"", "\"rdp\"", "\"host\""].iter().map(|k| json.find(k).unwrap()).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "stack, tcp, rdp, host in that order: {json}");
    let back: tcplab_lab::scenario::Host = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s.server);
}

#[test]
fn a_tcp_host_writes_no_rdp_table() {
    let s = scenario(&format!("{PATH}[client.tcp]\nnodelay = true\n[test]\nkind = \"tcp_rr\"\nduration = \"1s\"\n"))
        .unwrap();
    assert!(s.client.tcp().nodelay);
    assert_eq!(s.client.config::<RdpConfig>(), None);
    let json = serde_json::to_string(&s.client).unwrap();
    assert!(!json.contains("\"rdp\""), "{json}");
    assert!(json.starts_with("{\"stack\":\"rfc\",\"tcp\":{"), "{json}");
    // The TCP table's knobs as TcpConfig writes them, byte for byte.
    let tcp = serde_json::to_string(s.client.tcp()).unwrap();
    assert!(json.contains(&format!("\"tcp\":{tcp},\"host\":")), "{json}");
}

#[test]
fn another_transports_table_is_refused_by_name() {
    let e = scenario(&format!(
        "{PATH}[client.rdp]\nmax_outstanding = 8\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n"
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("client.rdp") && e.contains("test.transport = \"rdp\""), "{e}");
}

#[test]
fn an_unknown_table_lists_the_registered_ones() {
    let e = scenario(&format!("{PATH}[server.quic]\ncwnd = 1\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("server.quic"), "{e}");
    assert!(e.contains("`stack`, `tcp`, `rdp`, `host`"), "{e}");
}

#[test]
fn a_knob_error_is_located_in_its_table() {
    let e =
        scenario(&format!("{PATH}[server.rdp]\nmax_outstanding = 0\n[test]\nkind = \"rdp_rr\"\nduration = \"1s\"\n"))
            .unwrap_err()
            .to_string();
    assert!(e.contains("server.rdp.max_outstanding"), "{e}");
    let e =
        scenario(&format!("{PATH}[client.tcp]\nno_such_knob = 1\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n"))
            .unwrap_err()
            .to_string();
    assert!(e.contains("client.tcp.no_such_knob"), "{e}");
}

#[test]
fn a_saved_host_without_tcp_or_with_an_unknown_table_does_not_read() {
    let s = scenario(&format!("{PATH}[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n")).unwrap();
    let mut v = serde_json::to_value(&s.client).unwrap();
    v.as_object_mut().unwrap().insert("quic".into(), serde_json::json!({}));
    let e = serde_json::from_value::<tcplab_lab::scenario::Host>(v.clone()).unwrap_err().to_string();
    assert!(e.contains("quic"), "{e}");
    v.as_object_mut().unwrap().remove("quic");
    v.as_object_mut().unwrap().remove("tcp");
    let e = serde_json::from_value::<tcplab_lab::scenario::Host>(v).unwrap_err().to_string();
    assert!(e.contains("tcp"), "{e}");
}
