//! Byte identity of the shipped scenarios through engine changes (issue 24: "every shipped scenario gives
//! byte-identical JSON to before under the new engine, modulo the schema's version field").
//!
//! `baseline/shipped-2s.sha256` holds the SHA-256 of `tcplab run <scenario> --json` for every shipped
//! scenario, with `test.duration = "2s"` where the scenario has a duration (the others, bounded by a
//! message count, run whole), recorded with the binary of main at 9ca3a66, before the engine became a
//! graph. A scenario whose JSON moves fails here; one shipped without a digest fails too, so that a new
//! scenario's figures are pinned from its first commit. When a change means to move figures, record the
//! new digests with the commands in `baseline/README.md` and say why in the commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every shipped scenario by its shipped name (`bulk-1g`, `classic/dsl-rr`) and its file.
fn shipped() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for (dir, prefix) in [("scenarios", ""), ("scenarios/classic", "classic/")] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
                out.push((format!("{prefix}{stem}"), p));
            }
        }
    }
    out.sort();
    out
}

fn digests(file: &str) -> BTreeMap<String, String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/baseline").join(file)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (digest, name) = l.split_once("  ").expect("sha256sum's format: DIGEST, two spaces, NAME");
            (name.to_string(), digest.to_string())
        })
        .collect()
}

/// The document as version 1 writes it (`tcplab_lab::migrate::to_v1`: the schema /1, /2's
/// `links.directions` and `links.queue_series` left out), by the serializer `run --json` uses: every field
/// /1 had must keep its bytes, so these digests are the ones recorded before /2.
fn normalized(doc: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(doc.to_vec()).expect("the JSON is UTF-8");
    let doc = tcplab_lab::ResultDoc::from_json(&text).expect("a run's document reads back");
    let mut out = serde_json::to_vec_pretty(&tcplab_lab::migrate::to_v1(&doc)).unwrap();
    out.push(b'\n');
    out
}

#[test]
fn every_shipped_scenario_gives_its_recorded_json() {
    let recorded = digests("shipped-2s.sha256");
    let recorded_v2 = digests("shipped-2s-v2.sha256");
    // TCPLAB_RECORD_BASELINE=1 writes what this run gives into both files (baseline/README.md).
    let record = std::env::var_os("TCPLAB_RECORD_BASELINE").is_some();
    let (mut now_v1, mut now_v2) = (String::new(), String::new());
    let dir = tempfile::tempdir().unwrap();
    let mut moved = Vec::new();
    for (name, file) in shipped() {
        let text = std::fs::read_to_string(&file).unwrap();
        let out = dir.path().join(format!("{}.json", name.replace('/', "-")));
        let mut cmd = Command::cargo_bin("tcplab").unwrap();
        cmd.arg("run").arg(&file).arg("--json").arg(&out).arg("--quiet");
        if text.lines().any(|l| l.trim_start().starts_with("duration")) {
            cmd.args(["--set", "test.duration=\"2s\""]);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        let doc = std::fs::read(&out).unwrap();
        let whole = sha256::hex(&doc);
        match recorded_v2.get(&name) {
            None => moved.push(format!("{name}: no recorded /2 digest (new scenario? record it: {whole})")),
            Some(d) if *d != whole => moved.push(format!("{name}: /2 JSON moved ({d} recorded, {whole} now)")),
            Some(_) => {}
        }
        let digest = sha256::hex(&normalized(&doc));
        now_v1.push_str(&format!("{digest}  {name}\n"));
        now_v2.push_str(&format!("{whole}  {name}\n"));
        match recorded.get(&name) {
            None => moved.push(format!("{name}: no recorded digest (new scenario? record it: {digest})")),
            Some(d) if *d != digest => moved.push(format!("{name}: JSON moved ({d} recorded, {digest} now)")),
            Some(_) => {}
        }
    }
    if record {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/baseline");
        std::fs::write(dir.join("shipped-2s.sha256"), now_v1).unwrap();
        std::fs::write(dir.join("shipped-2s-v2.sha256"), now_v2).unwrap();
        return;
    }
    for name in recorded.keys().chain(recorded_v2.keys()) {
        if !shipped().iter().any(|(n, _)| n == name) {
            moved.push(format!("{name}: recorded but no longer shipped"));
        }
    }
    assert!(moved.is_empty(), "shipped scenarios' JSON differs from the baseline:\n{}", moved.join("\n"));
}

#[test]
fn sha256_matches_the_fips_examples() {
    // FIPS 180-2 Appendix B.1 and B.2, and the empty message.
    assert_eq!(sha256::hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(
        sha256::hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(sha256::hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/// SHA-256 (FIPS 180-4 §6.2), small: no SHA-2 crate is in the offline registry cache.
mod sha256 {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    pub fn hex(data: &[u8]) -> String {
        let mut h: [u32; 8] =
            [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
        // Padding (§5.1.1): a 1 bit, zeros to 56 mod 64 bytes, the length in bits as a big-endian u64.
        let mut msg = data.to_vec();
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
        for block in msg.chunks(64) {
            let mut w = [0u32; 64];
            for (i, c) in block.chunks(4).enumerate() {
                w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            }
            for i in 16..64 {
                let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
                let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
                w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
            }
            let mut v = h;
            for i in 0..64 {
                let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
                let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
                let t1 = v[7].wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
                let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
                let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
                let t2 = s0.wrapping_add(maj);
                v = [t1.wrapping_add(t2), v[0], v[1], v[2], v[3].wrapping_add(t1), v[4], v[5], v[6]];
            }
            for (a, b) in h.iter_mut().zip(v) {
                *a = a.wrapping_add(b);
            }
        }
        h.iter().map(|x| format!("{x:08x}")).collect()
    }
}
