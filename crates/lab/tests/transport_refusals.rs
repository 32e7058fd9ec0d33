//! The validation's refusals that depend on the test's transport keep their wording now that each
//! transport declares them (`TransportConfig::TEST`, `default_message`, `check_message`; issue #24 item 4):
//! file, line, key and the accepted values, the same text as when the validation named RDP itself
//! (recorded from `tcplab check` of the build before the move).

use tcplab_lab::{load, Source};

fn error(name: &str, text: &str) -> String {
    match load(&Source { name, text }, &[]) {
        Ok(_) => panic!("{name}: accepted"),
        Err(e) => e.to_string(),
    }
}

/// (file name, scenario text, the error's first line as `tcplab check` printed it before the move).
const CASES: &[(&str, &str, &str)] = &[
    (
        "burst.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\nburst = 2\n",
        "burst.toml:8: test.burst: not used by test.kind = \"tcp_stream\"; accepted with \"tcp_rr\", \"rdp_rr\"",
    ),
    (
        "kindx.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_crr\"\nduration = \"1s\"\n",
        "kindx.toml:6: test.kind: \"rdp_crr\": rdp does not run the \"crr\" workload; accepted: \"rdp_stream\", \"rdp_rr\"",
    ),
    (
        "mism.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_rr\"\ntransport = \"tcp\"\nduration = \"1s\"\n",
        "mism.toml:7: test.transport: \"tcp\": test.kind = \"rdp_rr\" names the transport \"rdp\"; accepted: \"rdp\", or test.kind = \"rr\" (the workload alone)",
    ),
    (
        "msg.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_stream\"\nduration = \"1s\"\nmessage = \"2000B\"\n",
        "msg.toml:8: test.message: 2000B: accepted 1B to 1462B (one RDP message: server.rdp.max_segment_size 1500 less 38 octets of IP and RDP headers)",
    ),
    (
        "msgs.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_rr\"\nduration = \"1s\"\nmessages = 10\n",
        "msgs.toml:8: test.messages: not used by test.kind = \"rdp_rr\"; accepted with \"rdp_stream\", \"tcp_msg\"",
    ),
    (
        "nd.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_rr\"\nduration = \"1s\"\nnodelay = true\n",
        "nd.toml:8: test.nodelay: not used by test.kind = \"rdp_rr\" (RDP has no Nagle algorithm); accepted with the tcp_* kinds",
    ),
    (
        "nodur.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_stream\"\n",
        "nodur.toml:5: test.duration: missing key (or test.messages); accepted a duration such as \"10s\"",
    ),
    (
        "req.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\nrequest = \"10B\"\n",
        "req.toml:8: test.request: not used by test.kind = \"tcp_stream\"; accepted with \"tcp_rr\", \"tcp_crr\", \"rdp_rr\"",
    ),
    (
        "sb.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_stream\"\nduration = \"1s\"\nsend_buffer = \"64KiB\"\n",
        "sb.toml:8: test.send_buffer: not used by test.kind = \"rdp_stream\" (RDP has no socket buffers in bytes; its send queue is client.rdp.send_queue); accepted with the tcp_* kinds",
    ),
    (
        "sv.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_stream\"\nduration = \"1s\"\nseries = { interval = \"10ms\", vars = [\"CurCwnd\"] }\n",
        "sv.toml:8: test.series: the { interval, vars } form (TCP's RFC 4898 variables of every end) is not used by test.kind = \"rdp_stream\"; accepted: test.series = \"INTERVAL\" (the RDP sender's SmoothedRTT, CurRTO, … and every RTT sample, docs/rdp.md)",
    ),
    (
        "tbl.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n[client.rdp]\neack = false\n",
        "tbl.toml:8: client.rdp: RDP knobs with a TCP test; accepted with test.transport = \"rdp\"",
    ),
    (
        "udp.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"stream\"\ntransport = \"udp\"\nduration = \"1s\"\n",
        "udp.toml:7: test.transport: unknown variant `udp`, accepted: `tcp` or `rdp`",
    ),
    (
        "zero.toml",
        "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_stream\"\nmessages = 0\n",
        "zero.toml:7: test.messages: 0: accepted 1 to 100000000",
    ),
];

#[test]
fn refusals_keep_their_file_line_key_and_accepted_values() {
    for (name, text, want) in CASES {
        let got = error(name, text);
        assert_eq!(got.lines().next(), Some(*want), "{name}");
    }
}

#[test]
fn an_rdp_rr_without_a_duration_is_not_offered_test_messages() {
    // RDP sends a number of messages in its stream only (`TestDecl::messages`), so an rr test's missing
    // duration no longer suggests `test.messages`, which it refuses.
    let text = "name = \"r\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"rdp_rr\"\n";
    let got = error("nodurrr.toml", text);
    assert_eq!(
        got.lines().next(),
        Some("nodurrr.toml:5: test.duration: missing key; accepted a duration such as \"10s\"")
    );
}
