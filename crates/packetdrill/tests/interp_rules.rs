//! Rules of packetdrill's own (measured with Google's packetdrill on this kernel, docs/packetdrill.md
//! § packetdrill itself on this kernel) that the interpreter follows on the simulator too: a packet of a
//! connection no longer under test is ignored, and SO_MEMINFO's values, which the simulator does not
//! model, make a script a skip that names them.

mod common;

use common::HANDSHAKE;
use tcplab_packetdrill::report::run_text;
use tcplab_tcp::TcpConfig;

fn linux() -> TcpConfig {
    TcpConfig::personality("linux").expect("the linux personality exists")
}

/// close() with unread data resets the first connection; the listener is closed too and a second one
/// accepts a new connection, whose SYN-ACK is the next packet the script expects.
fn two_connections() -> String {
    format!(
        "{HANDSHAKE}   +0 < P. 1:1001(1000) ack 1 win 257\n   +0 > . 1:1(0) ack 1001\n   +0 close(4) = 0\n   +0 \
         close(3) = 0\n{}",
        HANDSHAKE.replace("`../common/defaults.sh`\n", "").replace("    0 socket", "   +0 socket")
    )
}

#[test]
fn an_earlier_connections_reset_is_ignored() {
    let r = run_text("two.pkt", &two_connections(), &linux());
    assert_eq!(r.status, "pass", "{:?} at line {:?}", r.reason, r.line);
}

#[test]
fn the_connection_under_test_still_fails_on_an_unexpected_packet() {
    // The same reset while its connection is still the one under test is a mismatch: here the script
    // expects a data segment after close() where the stack sends the reset.
    let text = format!(
        "{HANDSHAKE}   +0 < P. 1:1001(1000) ack 1 win 257\n   +0 > . 1:1(0) ack 1001\n   +0 close(4) = 0\n   +0 > \
         F. 1:1(0) ack 1001\n"
    );
    let r = run_text("reset.pkt", &text, &linux());
    assert_eq!(r.status, "fail", "{:?}", r.reason);
    assert_eq!(r.line, Some(13), "{:?}", r.reason);
    assert!(r.reason.as_deref().is_some_and(|m| m.contains("R.")), "{:?}", r.reason);
}

#[test]
fn sk_meminfo_is_a_named_skip_on_the_simulator() {
    let text = format!("{HANDSHAKE}   +0 %{{ assert SK_MEMINFO_RCVBUF > 131072, SK_MEMINFO_RCVBUF }}%\n");
    let r = run_text("meminfo.pkt", &text, &linux());
    assert_eq!(r.status, "skip", "{:?}", r.reason);
    assert_eq!(r.reason.as_deref(), Some("SO_MEMINFO value SK_MEMINFO_RCVBUF"));
}

#[test]
fn a_call_still_blocked_at_the_end_fails_the_script() {
    // packetdrill waits at most 1 s at the end of a script for a blocked call, then fails at its line.
    let base = "`../common/defaults.sh\nsysctl -q net.ipv4.tcp_syn_linear_timeouts=0`\n    0 socket(..., SOCK_STREAM, \
                IPPROTO_TCP) = 3\n   +0...3 connect(3, ..., ...) = 0\n   +0 > S 0:0(0) <...>\n   +1 > S 0:0(0) <...>\n";
    let r = run_text("blocked.pkt", base, &linux());
    assert_eq!(r.status, "fail", "{:?}", r.reason);
    assert_eq!(r.line, Some(4), "{:?}", r.reason);
    assert_eq!(r.reason.as_deref(), Some("exiting while a blocking system call is in progress"));
    // A call that returns within that second is checked as usual: the SYN-ACK at 1.5 s completes it.
    let done = format!("{base} +.5 < S. 0:0(0) ack 1 win 65535 <mss 1460>\n   +0 > . 1:1(0) ack 1\n");
    let r = run_text("returns.pkt", &done, &linux());
    assert_eq!(r.status, "fail", "{:?}", r.reason);
    assert!(r.reason.as_deref().is_some_and(|m| m.contains("connect")), "{:?}", r.reason);
}

#[test]
fn the_preamble_names_are_packetdrills() {
    // The TCP states are defined, as packetdrill's code.c writes them; TCP_INFINITE_SSTHRESH is not.
    let ok = format!("{HANDSHAKE}   +0 %{{ assert tcpi_state == TCP_ESTABLISHED, tcpi_state }}%\n");
    let r = run_text("state.pkt", &ok, &linux());
    assert_eq!(r.status, "pass", "{:?}", r.reason);
    let undefined = format!("{HANDSHAKE}   +0 %{{ assert tcpi_snd_ssthresh == TCP_INFINITE_SSTHRESH }}%\n");
    let r = run_text("ssthresh.pkt", &undefined, &linux());
    assert_eq!(r.status, "fail", "{:?}", r.reason);
    assert!(r.reason.as_deref().is_some_and(|m| m.contains("TCP_INFINITE_SSTHRESH")), "{:?}", r.reason);
}
