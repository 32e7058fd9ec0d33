//! `tcplab.result/2` against /1 (issue 24: "the result reports per link direction; tcplab.result/2 with a
//! documented migration, and `report` reads /1"): the same run's /1 and /2 documents agree on every /1
//! field, /2 adds only `links.directions` and `links.queue_series`, the directions carry the counters the
//! /1 fields show, and a /1 document still reads, renders, merges and writes back byte for byte.

use serde_json::Value;
use tcplab_lab::migrate::to_v1;
use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{load, run_scenario, ResultDoc, Source, SHIPPED};

fn pretty(doc: &ResultDoc) -> String {
    serde_json::to_string_pretty(doc).unwrap() + "\n"
}

fn run(name: &str, set: &[&str]) -> ResultDoc {
    let s = SHIPPED.iter().find(|s| s.name == name).unwrap();
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let sc = load(&Source { name: s.name, text: s.text }, &set).unwrap();
    run_scenario(&sc, 1).unwrap()
}

/// `v2` with /2's fields taken out and its schema written as /1.
fn without_v2_fields(mut v2: Value) -> Value {
    v2["schema"] = "tcplab.result/1".into();
    for p in v2["points"].as_array_mut().unwrap() {
        let links = p["links"].as_object_mut().unwrap();
        assert!(links.remove("directions").is_some(), "a /2 point has links.directions");
        links.remove("queue_series");
    }
    v2
}

#[test]
fn v1_and_v2_of_one_run_agree_on_every_v1_field() {
    for (name, set) in [
        ("lossy-10m", vec!["test.duration=\"1s\"", "test.series=\"100ms\""]),
        ("rdp-loopback", vec![]),
        ("cubic-vs-reno", vec!["test.duration=\"1s\"", "test.series=\"200ms\""]),
        ("parking-lot", vec!["test.duration=\"1s\""]),
    ] {
        let doc = run(name, &set);
        assert_eq!(doc.schema, "tcplab.result/2");
        let v2: Value = serde_json::from_str(&pretty(&doc)).unwrap();
        let v1: Value = serde_json::from_str(&pretty(&to_v1(&doc))).unwrap();
        assert_eq!(v1["schema"], "tcplab.result/1");
        // Every /1 field has its value in /2, and /2 has nothing else but its two fields.
        assert_eq!(without_v2_fields(v2.clone()), v1, "{name}");
        // The /1 document is the /2 document's text less those fields: the same serializer, the same bytes
        // for every field they share.
        let t1 = pretty(&to_v1(&doc));
        let t2 = pretty(&doc);
        assert!(t1.len() < t2.len());
        assert_eq!(ResultDoc::from_json(&t1).map(|d| pretty(&d)), Ok(t1.clone()), "{name}: /1 reads back");
        // The directions carry what links.up and links.down show.
        let p = &v2["points"][0]["links"];
        let dirs = p["directions"].as_array().unwrap();
        let up = dirs.iter().find(|d| d["counters"] == p["up"]).unwrap_or_else(|| panic!("{name}: links.up"));
        let down = dirs.iter().find(|d| d["counters"] == p["down"]).unwrap_or_else(|| panic!("{name}: links.down"));
        assert_eq!((&up["from"], &up["to"]), (&down["to"], &down["from"]), "{name}: up and down are opposite");
    }
}

#[test]
fn every_shape_names_every_direction() {
    let two = run("lossy-10m", &["test.duration=\"1s\""]);
    let names = |d: &ResultDoc| -> Vec<(String, String, String)> {
        d.points[0].links.directions.iter().map(|x| (x.direction.clone(), x.from.clone(), x.to.clone())).collect()
    };
    let t = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
    assert_eq!(names(&two), [t("up", "client", "server"), t("down", "server", "client")]);
    let dumbbell = run("cubic-vs-reno", &["test.duration=\"1s\""]);
    let n = names(&dumbbell);
    assert_eq!(n.len(), 2 + 4 * 2, "the bottleneck both ways and two access links per flow");
    assert_eq!(n[0], t("bottleneck", "left", "right"));
    assert_eq!(n[1], t("reverse", "right", "left"));
    assert_eq!(n[2], t("flow[0].sender_access.forward", "sender[0]", "left"));
    assert_eq!(n[5], t("flow[0].receiver_access.backward", "receiver[0]", "right"));
    // Each flow's data enters its sender's access link and leaves by its receiver's: the bottleneck
    // delivers their sum (every frame is forwarded whole).
    let d = &dumbbell.points[0].links.directions;
    let delivered = |name: &str| d.iter().find(|x| x.direction == name).unwrap().counters.frames_delivered;
    let into_receivers = delivered("flow[0].receiver_access.forward") + delivered("flow[1].receiver_access.forward");
    let bottleneck = delivered("bottleneck");
    assert!(bottleneck >= into_receivers && bottleneck - into_receivers <= 2, "{bottleneck} vs {into_receivers}");
    let net = run("parking-lot", &["test.duration=\"1s\""]);
    let n = names(&net);
    assert_eq!(n.len(), 2 * net.scenario.link.len());
    assert_eq!(n[0].0, "link[0].forward");
    assert_eq!((n[0].1.as_str(), n[1].2.as_str()), (net.scenario.link[0].a.as_str(), net.scenario.link[0].a.as_str()));
}

#[test]
fn a_v1_document_renders_as_its_v2_document_does() {
    let doc = run("cubic-vs-reno", &["test.duration=\"1s\""]);
    let v1 = ResultDoc::from_json(&pretty(&to_v1(&doc))).unwrap();
    assert_eq!(v1.schema, "tcplab.result/1");
    assert_eq!(tcplab_report::table(&v1), tcplab_report::table(&doc));
    let dir = tempfile::tempdir().unwrap();
    tcplab_report::csv::write_dir(&v1, &dir.path().join("v1")).unwrap();
    tcplab_report::csv::write_dir(&doc, &dir.path().join("v2")).unwrap();
    for f in ["points.csv", "flows.csv"] {
        let read = |v: &str| std::fs::read_to_string(dir.path().join(v).join(f)).unwrap();
        assert_eq!(read("v1"), read("v2"), "{f}");
    }
}

#[test]
fn v1_shards_merge_into_a_v1_document() {
    const SWEPT: &str = "name = \"swept\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\n\
        kind = \"tcp_stream\"\nduration = \"1s\"\n[sweep]\n\"path.up.rate\" = [\"10mbit\", \"1mbit\", \"5mbit\"]\n";
    let shard = |i| {
        let p = plan(&Source { name: "swept.toml", text: SWEPT }, &[], &[], &RepeatFlags::default()).unwrap();
        run_plan(&p, RunOptions { jobs: 1, seed: None, shard: Some((i, 2)) }, &|_, _| {}).unwrap().0
    };
    let (a, b) = (shard(0), shard(1));
    let read = |d: &ResultDoc| ResultDoc::from_json(&pretty(&to_v1(d))).unwrap();
    let whole = tcplab_lab::merge::merge_docs(vec![("a".into(), read(&a)), ("b".into(), read(&b))]).unwrap();
    assert_eq!(whole.schema, "tcplab.result/1");
    let whole_v2 = tcplab_lab::merge::merge_docs(vec![("a".into(), a.clone()), ("b".into(), b)]).unwrap();
    assert_eq!(pretty(&whole), pretty(&to_v1(&whole_v2)));
    // Shards of two versions are not one run's.
    let mixed = tcplab_lab::merge::merge_docs(vec![("a".into(), a), ("b".into(), read(&shard(1)))]);
    assert!(mixed.unwrap_err().contains("version differ"));
}

#[test]
fn each_version_keeps_to_its_fields() {
    let doc = run("lossy-10m", &["test.duration=\"1s\""]);
    // A /1 document with a /2 field, and a /2 document without its directions, are refused by name.
    let mut v: Value = serde_json::from_str(&pretty(&doc)).unwrap();
    v["schema"] = "tcplab.result/1".into();
    let e = ResultDoc::from_value(&v).unwrap_err();
    assert!(e.contains("points[0].links.directions") && e.contains("tcplab.result/1"), "{e}");
    let mut v: Value = serde_json::from_str(&pretty(&doc)).unwrap();
    v["points"][0]["links"].as_object_mut().unwrap().remove("directions");
    let e = ResultDoc::from_value(&v).unwrap_err();
    assert!(e.contains("points[0].links.directions: missing"), "{e}");
    // The JSON Schema takes both versions.
    tcplab_report::schema::validate_result(&serde_json::from_str(&pretty(&doc)).unwrap()).unwrap();
    tcplab_report::schema::validate_result(&serde_json::from_str(&pretty(&to_v1(&doc))).unwrap()).unwrap();
}
