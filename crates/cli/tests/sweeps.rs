//! `tcplab run --sweep/--jobs/--shard` and `tcplab merge` through the binary: the merged shards are the
//! whole run's file byte for byte, and bad flags exit with status 2 naming the flag and what is accepted.

use assert_cmd::Command;

fn tcplab() -> Command {
    Command::cargo_bin("tcplab").expect("the tcplab binary is built")
}

const SWEEP: &str = "name = \"sw\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\nkind = \"tcp_rr\"\nduration = \"1s\"\n[sweep]\n\"test.burst\" = \"0..=2\"\n";

#[test]
fn shards_merge_into_the_whole_run_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let scn = dir.path().join("sw.toml");
    std::fs::write(&scn, SWEEP).unwrap();
    let scn = scn.to_str().unwrap();
    let path = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    tcplab()
        .args(["run", scn, "--sweep", "client.tcp.nodelay=false,true", "--jobs", "1", "--json"])
        .arg(path("all.json"))
        .assert()
        .success();
    for i in 0..2 {
        tcplab()
            .args([
                "run",
                scn,
                "--sweep",
                "client.tcp.nodelay=false,true",
                "--quiet",
                "--shard",
                &format!("{i}/2"),
                "--json",
            ])
            .arg(path(&format!("s{i}.json")))
            .assert()
            .success();
    }
    tcplab()
        .args(["merge"])
        .arg(path("s1.json"))
        .arg(path("s0.json"))
        .arg("--json")
        .arg(path("m.json"))
        .assert()
        .success();
    let all = std::fs::read(path("all.json")).unwrap();
    assert_eq!(std::fs::read(path("m.json")).unwrap(), all);
    let doc: serde_json::Value = serde_json::from_slice(&all).unwrap();
    assert_eq!(doc["points"].as_array().unwrap().len(), 6);
    // The table: one row per point, the swept values leading.
    let out = tcplab().args(["run", scn]).assert().success().get_output().stdout.clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("test.burst "), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with(char::is_numeric)).count(), 3, "{text}");
}

#[test]
fn bad_sweep_and_repeat_flags_exit_2() {
    for (args, want) in [
        (vec!["--sweep", "test.burst"], "expected PATH=VALUES"),
        (vec!["--sweep", "test.burst=99999..=100001"], "value 100001"),
        (vec!["--shard", "2/2"], "accepted i/n with 0 <= i < n"),
        (vec!["--iterations", "3,5"], "--iterations 3,5: accepted MAX or MAX,MIN"),
        (vec!["--confidence", "0.99"], "--confidence 0.99: accepted LEVEL,WIDTH"),
    ] {
        let out = tcplab().args(["run", "rr-dsl"]).args(&args).assert().code(2).get_output().stderr.clone();
        let err = String::from_utf8(out).unwrap();
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
