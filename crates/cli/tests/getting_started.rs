//! What a newcomer meets first (issue 22, items 15 and 17): `tcplab explain` finds every key in the spellings
//! a user tries, `tcplab show` prints a shipped scenario to start from, `tcplab compare --help` describes
//! every argument.

use std::process::Command;

fn tcplab(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin("tcplab")).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn explain_finds_every_key_the_listing_shows() {
    // The forms the issue found failing, and the one --set uses.
    for (query, head) in [
        ("cubic.beta", "{client,server}.tcp.cubic.beta"),
        ("client.tcp.nodelay", "{client,server}.tcp.nodelay"),
        ("tcp.nodelay", "{client,server}.tcp.nodelay"),
        ("rdp", "{client,server}.rdp"),
        ("rdp.eack", "{client,server}.rdp.eack"),
        ("path.rate", "path.{up,down}.rate"),
        ("path.up.rate", "path.{up,down}.rate"),
        ("rate", "path.{up,down}.rate"),
        ("test.duration", "test.duration"),
        ("host.cpu", "{client,server}.host.cpu"),
        ("rx_coalesce", "{client,server}.host.rx_coalesce"),
    ] {
        let (ok, out, err) = tcplab(&["explain", query]);
        assert!(ok, "explain {query}: {err}");
        assert!(out.starts_with(head), "explain {query}:\n{out}");
        assert!(out.contains("source") && out.contains("crates/"), "explain {query} names its source:\n{out}");
    }
    // `rate` is the path's; the NIC's rate is offered beside it, not mistaken for it.
    let out = tcplab(&["explain", "rate"]).1;
    assert!(out.lines().any(|l| l.contains("see also:") && l.contains("{client,server}.host.nic_rate")), "{out}");
    // Defaults per personality, and what is accepted in the validation's words.
    let (_, out, _) = tcplab(&["explain", "rx_coalesce"]);
    assert!(out.contains("linux      50us") && out.contains("0s (off) to 10ms"), "{out}");
    let (_, out, _) = tcplab(&["explain", "ack_policy"]);
    assert!(out.contains("`mentat`") && out.contains("hpux-11    mentat"), "{out}");
    // A table lists its keys; a name two keys share lists both.
    assert!(tcplab(&["explain", "rdp"]).1.contains("{client,server}.rdp.eack_honour"));
    let (ok, out, _) = tcplab(&["explain", "nodelay"]);
    assert!(ok && out.contains("names 2 keys") && out.contains("test.nodelay"), "{out}");
    // A near miss is named.
    let (ok, _, err) = tcplab(&["explain", "client.tcp.nodely"]);
    assert!(!ok && err.contains("did you mean client.tcp.nodelay"), "{err}");
    // The listing has the path, host and test keys too.
    let (_, all, _) = tcplab(&["explain"]);
    for key in ["path.{up,down}.queue", "{client,server}.host.txqueuelen", "test.burst", "repeat.width"] {
        assert!(all.lines().any(|l| l.starts_with(key)), "{key} missing from the listing");
    }
}

#[test]
fn show_prints_a_shipped_scenario_that_checks() {
    let (ok, text, _) = tcplab(&["show", "bulk-10m"]);
    assert!(ok);
    assert_eq!(text, include_str!("../../../scenarios/bulk-10m.toml"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("my.toml");
    std::fs::write(&file, text).unwrap();
    let (ok, out, err) = tcplab(&["check", file.to_str().unwrap()]);
    assert!(ok && out.contains(": ok"), "{out}{err}");
    let out = Command::new(assert_cmd::cargo::cargo_bin("tcplab")).args(["show", "no-such"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shipped: bulk-10m"));
}

#[test]
fn compare_help_describes_every_argument() {
    let (ok, help, _) = tcplab(&["compare", "--help"]);
    assert!(ok);
    // Every argument line of the help carries a description after its name.
    let section = help.split_once("Arguments:").map(|(_, r)| r).unwrap_or("");
    for line in section.lines().filter(|l| l.trim_start().starts_with('<') || l.trim_start().starts_with("--")) {
        let described = line.trim().split_once("  ").is_some_and(|(_, d)| !d.trim().is_empty());
        assert!(described || line.trim() == "-h, --help", "undescribed: {line:?}\n{help}");
    }
    assert!(help.contains("<SCENARIO>  Scenario file"), "{help}");
    assert!(help.contains("--set <PATH=VALUE>  Override"), "{help}");
}
