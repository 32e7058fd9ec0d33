//! The output flags: bad values are refused with exit 2 naming the accepted ones, and output files are
//! complete, deterministic, or absent.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

const GOOD: &str =
    "name = \"ok\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"20ms\"\n[test]\nkind = \"tcp_stream\"\nduration = \"1s\"\n";

fn scenario(dir: &tempfile::TempDir) -> String {
    let p = dir.path().join("ok.toml");
    std::fs::write(&p, GOOD).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn bad_pcap_flags_exit_2_naming_the_accepted_values() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(&dir);
    let pcap = dir.path().join("t.pcap");
    for (flag, value, wants) in [
        ("--pcap-at", "middle", &["--pcap-at middle", "accepted: client, server, up, down"][..]),
        ("--pcap-snaplen", "20", &["--pcap-snaplen 20", "68 or more"][..]),
    ] {
        let out = tcplab().args(["run", &s, "--quiet", "--pcap"]).arg(&pcap).args([flag, value]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&out.stderr);
        for w in wants {
            assert!(err.contains(w), "{flag} {value}: stderr {err:?} lacks {w:?}");
        }
        assert!(!pcap.exists(), "no trace after a refused flag");
    }
}

#[test]
fn pcap_is_written_whole_and_identically_twice() {
    let dir = tempfile::tempdir().unwrap();
    let s = scenario(&dir);
    let mut traces = Vec::new();
    for name in ["a.pcap", "b.pcap"] {
        let pcap = dir.path().join(name);
        let json = dir.path().join(format!("{name}.json"));
        tcplab()
            .args(["run", &s, "--quiet", "--pcap-at", "up", "--pcap"])
            .arg(&pcap)
            .arg("--json")
            .arg(&json)
            .assert()
            .success();
        let bytes = std::fs::read(&pcap).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let frames_in = doc["points"][0]["links"]["up"]["frames_in"].as_u64().unwrap();
        // Walk the records: as many as frames entered the up direction, each within the file, none left over.
        let mut at = 24;
        let mut n = 0;
        while at < bytes.len() {
            let incl = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
            let orig = u32::from_le_bytes(bytes[at + 12..at + 16].try_into().unwrap()) as usize;
            assert_eq!(incl, orig, "the default snap length keeps whole frames");
            // Ethernet header + the IPv4 total length.
            let ip_total = u16::from_be_bytes([bytes[at + 16 + 16], bytes[at + 16 + 17]]) as usize;
            assert_eq!(orig, 14 + ip_total);
            at += 16 + incl;
            n += 1;
        }
        assert_eq!(at, bytes.len());
        assert_eq!(n, frames_in);
        traces.push(bytes);
    }
    assert_eq!(traces[0], traces[1]);
    // Nothing but the results is left beside them (no temporary files).
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
}

#[test]
fn an_unknown_series_variable_is_refused_at_its_line_naming_the_accepted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.toml");
    std::fs::write(&p, format!("{GOOD}series = {{ interval = \"10ms\", vars = [\"CurCwnd\", \"Cwnd\"] }}\n")).unwrap();
    let out = tcplab().arg("check").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for w in [":8:", "test.series.vars", "\"Cwnd\"", "accepted", "CurCwnd", "CurSsthresh", "SendStall"] {
        assert!(err.contains(w), "stderr {err:?} lacks {w:?}");
    }
}
