//! A saved document's points are its sweep's, each once and in order (#22 item 9: `report` showed a
//! document with a point dropped as if the sweep had been run that way). Whole runs, shards and merged
//! shards read back; a point dropped, repeated, swapped or moved to another shard is refused, naming the
//! field and the point the sweep has there.

use serde_json::{json, Value};
use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{ResultDoc, Source};

const SWEPT: &str = "name = \"points\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n[test]\n\
    kind = \"tcp_stream\"\nduration = \"200ms\"\n\
    [sweep]\n\"path.up.delay\" = [\"5ms\", \"10ms\"]\n\"test.parallel\" = [1, 2, 3]\n";

fn doc(shard: Option<(u32, u32)>) -> Value {
    let p = plan(&Source { name: "points.toml", text: SWEPT }, &[], &[], &RepeatFlags::default()).unwrap();
    let d = run_plan(&p, RunOptions { jobs: 1, seed: None, shard }, &|_, _| {}).unwrap().0;
    serde_json::to_value(&d).unwrap()
}

fn read(v: &Value) -> Result<ResultDoc, String> {
    ResultDoc::from_json(&v.to_string())
}

#[test]
fn documents_hold_their_sweeps_points_in_order() {
    let whole = doc(None);
    assert_eq!(whole["points"].as_array().unwrap().len(), 6);
    read(&whole).expect("a whole run reads back");
    let shard = doc(Some((1, 4)));
    read(&shard).expect("a shard reads back");
    let merged = tcplab_lab::merge::merge(&[("s0".into(), doc(Some((0, 2)))), ("s1".into(), doc(Some((1, 2))))])
        .expect("two shards merge");
    assert_eq!(merged, whole, "merged shards are the whole run");

    let refused = |f: &dyn Fn(&mut Value), from: &Value| {
        let mut v = from.clone();
        f(&mut v);
        read(&v).map(|_| ()).unwrap_err()
    };
    let points = |v: &mut Value| v["points"].as_array_mut().unwrap().clone();
    let cases: Vec<(String, &str)> = vec![
        (
            refused(&|v| drop(v["points"].as_array_mut().unwrap().remove(3)), &whole),
            "points: 5 points; the sweep's axes make 6",
        ),
        (
            refused(
                &|v| {
                    let first = points(v)[0].clone();
                    v["points"].as_array_mut().unwrap().push(first)
                },
                &whole,
            ),
            "points: 7 points; the sweep's axes make 6",
        ),
        (
            refused(&|v| v["points"].as_array_mut().unwrap().swap(1, 2), &whole),
            "points[1].params.test.parallel: 3; point 1 of the sweep has 2",
        ),
        (
            refused(&|v| v["points"][4] = points(v)[1].clone(), &whole),
            "points[4].params.path.up.delay: \"5ms\"; point 4 of the sweep has \"10ms\"",
        ),
        (
            refused(&|v| v["sweep"][1]["values"] = json!([1, 2, 3, 4]), &whole),
            "points: 6 points; the sweep's axes make 8",
        ),
        (refused(&|v| v["sweep"][1]["values"] = json!([]), &whole), "sweep: test.parallel has no values"),
        (
            refused(
                &|v| {
                    v.as_object_mut().unwrap().remove("sweep");
                    for p in v["points"].as_array_mut().unwrap() {
                        p["params"] = json!({});
                    }
                },
                &whole,
            ),
            "points: 6 points; a run without a sweep has 1",
        ),
        // Shard 1/4 holds points 1 and 5; shard 0/4's first point in its place is refused.
        (
            refused(&|v| v["points"][0] = doc(Some((0, 4)))["points"][0].clone(), &shard),
            "points[0].params.test.parallel: 1; point 1 of the sweep has 2",
        ),
        (refused(&|v| v["shard"]["points"] = json!(7), &shard), "shard.points: 7; the sweep's axes make 6 points"),
    ];
    for (err, want) in cases {
        assert!(err.contains(want), "{err:?} does not contain {want:?}");
    }
}
