//! Every script in `scripts/` (written for tcplab, documented in docs/packetdrill.md) passes on the
//! simulator's `linux` personality; each is also a check that the interpreter reports failures: a
//! script with one expectation changed must fail at that line.

use std::path::Path;

use tcplab_packetdrill::report::{collect, run_text};
use tcplab_tcp::TcpConfig;

fn linux() -> TcpConfig {
    TcpConfig::personality("linux").expect("the linux personality exists")
}

fn scripts() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    collect(&dir)
        .expect("scripts/ is readable")
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("a script is readable")))
        .collect()
}

#[test]
fn every_script_passes_on_linux() {
    let all = scripts();
    assert!(all.len() >= 40, "only {} scripts", all.len());
    let base = linux();
    let failures: Vec<String> = all
        .iter()
        .map(|(path, text)| run_text(path, text, &base))
        .filter(|r| r.status != "pass")
        .map(|r| format!("{} {}:{:?}: {:?}", r.status, r.path, r.line, r.reason))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_changed_expectation_fails_at_its_line() {
    let base = linux();
    for (path, text) in scripts() {
        // Change the last outbound packet's ACK field or, failing that, its first sequence number.
        let lines: Vec<&str> = text.lines().collect();
        let Some(i) = lines.iter().rposition(|l| l.contains(" > ") && l.contains(" ack ")) else { continue };
        let changed = lines[i].replacen(" ack ", " ack 9", 1);
        let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        v[i] = changed;
        let r = run_text(&path, &v.join("\n"), &base);
        assert_eq!(r.status, "fail", "{path}: changing line {} still passes", i + 1);
        assert_eq!(r.line, Some(i as u32 + 1), "{path}: {:?}", r.reason);
    }
}

/// The ECN field of an outbound line is checked as packetdrill checks it (`verify_outbound_live_tos`): our
/// data is ECT(0), so `[ect1]` fails at its line and `[ect01]` passes; `[ect01]` on an inbound line is
/// packetdrill's parse error.
#[test]
fn the_ecn_field_is_checked() {
    let base = linux();
    let path = "scripts/ecn-ce-echo.pkt";
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("the script");
    let line = text.lines().position(|l| l.contains("> [ect0] P.")).expect("an ECT(0) data segment") + 1;
    let r = run_text(path, &text.replace("> [ect0] P.", "> [ect1] P."), &base);
    assert_eq!((r.status, r.line), ("fail", Some(line as u32)), "{:?}", r.reason);
    assert!(r.reason.as_deref().unwrap_or("").contains("bad ECN field"), "{:?}", r.reason);
    assert_eq!(run_text(path, &text.replace("> [ect0] P.", "> [ect01] P."), &base).status, "pass");
    let r = run_text(path, &text.replace("< [ce]", "< [ect01]"), &base);
    assert!(r.reason.as_deref().unwrap_or("").contains("[ect01] can only be used with outbound packets"), "{r:?}");
}

#[test]
fn results_are_deterministic() {
    let base = linux();
    for (path, text) in scripts().into_iter().take(10) {
        let a = serde_json::to_string(&run_text(&path, &text, &base)).unwrap();
        let b = serde_json::to_string(&run_text(&path, &text, &base)).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn unsupported_features_skip_with_their_name() {
    let base = linux();
    let cases = [
        ("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 epoll_create(1) = 4\n", "system call epoll_create()"),
        ("`sysctl -q net.ipv4.tcp_ecn=3`\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n", "tcp_ecn"),
        ("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < [tos 0x4] S 0:0(0) win 100\n", "IP attribute [tos 0x4]"),
        ("--ip_version=ipv6\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n", "only IPv4"),
        (
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{ assert tcpi_fastopen_client_fail == 0 }%\n",
            "tcpi_fastopen_client_fail",
        ),
    ];
    for (text, want) in cases {
        let r = run_text("t.pkt", text, &base);
        assert_eq!(r.status, "skip", "{text}");
        assert!(r.reason.as_deref().unwrap_or("").contains(want), "{text}: {:?}", r.reason);
    }
}

#[test]
fn parse_errors_are_failures_with_their_position() {
    let r = run_text("t.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0 <mss 1460>\n", &linux());
    assert_eq!(r.status, "fail");
    assert_eq!((r.line, r.column), (Some(2), Some(12)));
    assert!(r.reason.unwrap().starts_with("parse error"));
}

#[test]
fn docs_list_every_script_and_sysctl() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/packetdrill.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/packetdrill.md is readable");
    for (path, _) in scripts() {
        let name = Path::new(&path).file_name().unwrap().to_string_lossy().to_string();
        assert!(doc.contains(&format!("`{name}`")), "docs/packetdrill.md does not list {name}");
    }
    for s in tcplab_packetdrill::sysctl::SYSCTLS {
        assert!(doc.contains(&format!("`net.ipv4.{}`", s.name)), "docs/packetdrill.md does not list {}", s.name);
    }
}

#[test]
fn a_segment_for_no_socket_is_reset() {
    // No listener: a SYN is refused with RST|ACK (RFC 9293 §3.10.7.1), an ACK with a bare RST.
    let text = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\
                +0 < S 0:0(0) win 1000 <mss 1000>\n\
                +0 > R. 0:0(0) ack 1\n\
                +.1 < . 1:1(0) ack 2001 win 1000\n\
                +0 > R 2001:2001(0)\n";
    let r = run_text("t.pkt", text, &linux());
    assert_eq!(r.status, "pass", "{:?}", r.reason);
}
