//! IP fragmentation (RFC 791 §3.2) in whole runs: a path direction with an MTU smaller than the segments
//! cuts them into fragments that are queued, serialized and lost one by one, and the receiver hands a
//! datagram to TCP only when every fragment came.

use crate::common;

use tcplab_lab::result::IpCounters;
use tcplab_lab::ResultDoc;

/// 1460-byte segments in 1500-byte datagrams; an MTU of 420 bytes leaves 400 bytes of payload per fragment
/// (a multiple of 8), so each full segment's 1480 bytes of TCP header and data travel in k = 4 fragments.
const FRAGMENTED: &str = r#"
name = "fragmented"
[path.up]
rate = "100mbit"
delay = "1ms"
queue = "10000pkt"
mtu = "420B"
loss = { model = "bernoulli", p = 0.01 }
[path.down]
rate = "100mbit"
delay = "1ms"
queue = "10000pkt"
[test]
kind = "tcp_stream"
parallel = 8
duration = "10s"
send_buffer = "1MiB"
recv_buffer = "1MiB"
"#;

fn run(set: &[&str], seed: u64) -> ResultDoc {
    common::run_scenario(&common::scenario(FRAGMENTED, set), seed)
}

fn ip(doc: &ResultDoc) -> (IpCounters, IpCounters) {
    let l = &doc.points[0].links;
    (l.ip_client.expect("an MTU on the path reports IP counters"), l.ip_server.expect("both hosts"))
}

#[test]
fn datagram_loss_is_one_minus_fragment_survival_to_the_k() {
    let (p, k) = (0.01f64, 4.0f64);
    let (mut sent, mut lost) = (0u64, 0u64);
    for seed in 1..=2 {
        let doc = run(&[], seed);
        let (client, server) = ip(&doc);
        // Full-sized segments are 4 fragments; the handshake and FIN fit in one datagram, so every
        // fragmented datagram is a data segment cut in four.
        assert_eq!(client.out_frag_creates, 4 * client.out_frag_reqds);
        // Every fragment that was not lost on the wire reached the server (the queue never overflows).
        let up = &doc.points[0].links.up;
        assert_eq!(up.drops_queue_full, 0);
        assert_eq!(server.reasm_reqds, client.out_frag_creates - up.drops_random_loss);
        // The server's ACKs are small: nothing comes back fragmented.
        assert_eq!(server.out_frag_reqds, 0);
        sent += client.out_frag_reqds;
        lost += client.out_frag_reqds - server.reasm_oks;
    }
    let want = 1.0 - (1.0 - p).powf(k);
    let got = lost as f64 / sent as f64;
    let se = (want * (1.0 - want) / sent as f64).sqrt();
    eprintln!("datagram loss {got:.5} of {sent}; analytic {want:.5}, standard error {se:.5}");
    assert!(sent > 20_000, "too few datagrams for the comparison: {sent}");
    assert!(
        (got - want).abs() < 4.0 * se,
        "datagram loss {got:.5} over {sent} datagrams; 1-(1-p)^k = {want:.5} (standard error {se:.5})"
    );
}

#[test]
fn incomplete_datagrams_expire_after_the_reassembly_timeout() {
    // With a 50 ms timeout every datagram that lost some but not all of its fragments is discarded within
    // the run (those whose timer is still running when the run stops are the only ones not counted); a
    // datagram that lost all four never started a reassembly.
    let (p, k) = (0.01f64, 4i32);
    let doc = run(&["server.host.fragment_ttl=\"50ms\""], 3);
    let (client, server) = ip(&doc);
    let n = client.out_frag_reqds as f64;
    let partial = 1.0 - (1.0 - p).powi(k) - p.powi(k);
    let want = n * partial;
    let got = server.reasm_fails as f64;
    assert!(
        (got - want).abs() < 4.0 * (n * partial * (1.0 - partial)).sqrt() + 2.0,
        "{got} reassembly timeouts of {n} datagrams, expected {want:.0}"
    );
    eprintln!("{got} reassembly timeouts of {n} datagrams, analytic {want:.1}");
    assert!(server.reasm_oks + server.reasm_fails <= client.out_frag_reqds);
    // The default timeout (30 s) outlasts this run: nothing expires, the same datagrams just stay pending.
    let doc = run(&[], 3);
    assert_eq!(ip(&doc).1.reasm_fails, 0);
}

#[test]
fn a_path_without_an_mtu_reports_no_ip_counters() {
    let doc = common::run_scenario(
        &common::scenario(&FRAGMENTED.replace("mtu = \"420B\"\n", ""), &["test.duration=\"1s\""]),
        1,
    );
    assert!(doc.points[0].links.ip_client.is_none() && doc.points[0].links.ip_server.is_none());
}

#[test]
fn an_mtu_below_rfc_791s_minimum_is_refused_at_its_key() {
    let err = tcplab_lab::load(&tcplab_lab::Source { name: "bad.toml", text: &FRAGMENTED.replace("420B", "60B") }, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad.toml") && err.contains("path.up.mtu") && err.contains("68B"), "{err}");
}
