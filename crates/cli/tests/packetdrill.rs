//! `tcplab packetdrill`: exit statuses, the text and JSON reports, bad input.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../packetdrill/scripts");

#[test]
fn our_scripts_pass_and_the_json_report_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = tcplab().args(["packetdrill", "--quiet", "--corpus", SCRIPTS, "--json"]).arg(&json).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("pass, 0 fail, 0 skip"), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema"], "tcplab.packetdrill/1");
    assert_eq!(v["stack"], "linux");
    let n = v["scripts"].as_array().unwrap().len();
    assert!(n >= 40);
    assert_eq!(v["totals"]["pass"].as_u64().unwrap() as usize, n);
}

#[test]
fn a_failing_script_exits_1_and_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.pkt");
    std::fs::write(
        &script,
        "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n\
         +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n+0 > S 0:0(0) <mss 1000>\n",
    )
    .unwrap();
    let out = tcplab().arg("packetdrill").arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("bad.pkt:4:") && stdout.contains("bad outbound TCP options"), "{stdout}");
}

#[test]
fn bad_input_exits_2_with_the_accepted_values() {
    let out = tcplab().args(["packetdrill", "--stack", "windows-95", "x.pkt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--stack windows-95") && err.contains("linux"), "{err}");
    let out = tcplab().args(["packetdrill", "/nonexistent/x.pkt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = tcplab().args(["packetdrill", "--backend", "bsd", "x.pkt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("accepted `sim`, `linux`"));
    let out = tcplab().args(["packetdrill"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
