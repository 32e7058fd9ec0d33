//! The typed result model reads documents back (`ResultDoc::from_json`, used by `report` and `merge`):
//! every shipped scenario's document reads back and writes again byte for byte, and what does not fit the
//! model is refused with the field named (#22 item 9).

use crate::common;

use serde_json::{json, Value};
use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::{load, run_scenario, ResultDoc, Source, SHIPPED};

fn pretty<T: ?Sized + Serial>(v: &T) -> String {
    v.pretty()
}

/// What the lab writes with `--json`: pretty JSON and a newline.
trait Serial {
    fn pretty(&self) -> String;
}
impl Serial for ResultDoc {
    fn pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap() + "\n"
    }
}
impl Serial for Value {
    fn pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap() + "\n"
    }
}

/// The document read back writes the same bytes (what `merge` and `report` rely on).
fn assert_round_trip(name: &str, text: &str) {
    let doc = ResultDoc::from_json(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let again = pretty(&doc);
    if again != text {
        let at = again.bytes().zip(text.bytes()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "{name}: differs at byte {at}: {:?} against {:?}",
            &again[at.saturating_sub(80)..],
            &text[at.saturating_sub(80)..]
        );
    }
}

#[test]
fn every_shipped_scenarios_document_reads_back_byte_for_byte() {
    let series =
        [Some("test.series=\"100ms\""), Some("test.series={interval=\"100ms\",vars=[\"CurCwnd\",\"CurSsthresh\"]}")];
    for s in SHIPPED {
        let tcp = !s.text.contains("kind = \"rdp_");
        let cpu = Some("server.host={cpu={per_segment_in=\"5us\",per_ack_out=\"1us\"}}");
        let mtu = Some("path.up.mtu=\"576B\"");
        // A dumbbell or a [[link]] network takes none of the two-host extras (its flows say what runs): its
        // plain run only.
        let dumbbell = s.text.contains("[dumbbell]") || s.text.contains("[[link]]");
        let mut extras = if dumbbell { vec![None] } else { vec![None, series[0], mtu] };
        if tcp && !dumbbell {
            extras.extend([series[1], cpu]);
        }
        let own_series = s.text.contains("series = {");
        for extra in extras.into_iter().filter(|e| !(own_series && e.is_some_and(|e| e.starts_with("test.series")))) {
            let mut set = vec!["test.duration=\"1s\"".to_string()];
            set.extend(extra.map(String::from));
            let sc = load(&Source { name: s.name, text: s.text }, &set).unwrap();
            let doc = run_scenario(&sc, 1).unwrap();
            assert_round_trip(&format!("{} {extra:?}", s.name), &pretty(&doc));
        }
    }
}

const SWEPT: &str = "name = \"swept\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\n\
    loss = { model = \"bernoulli\", p = 0.01 }\n[test]\nkind = \"tcp_rr\"\nduration = \"1s\"\n\
    request = \"100B\"\nresponse = \"1B\"\n[client.host.cpu]\nper_segment_in = \"5us\"\n\
    [sweep]\n\"test.burst\" = [0, 2, 4]\n\"path.up.rate\" = [\"10mbit\", \"1mbit\"]\n";

fn swept(shard: Option<(u32, u32)>) -> ResultDoc {
    let flags = RepeatFlags { iterations: Some("3,2".into()), ..RepeatFlags::default() };
    let p = plan(&Source { name: "swept.toml", text: SWEPT }, &[], &[], &flags).unwrap();
    run_plan(&p, RunOptions { jobs: 1, seed: None, shard }, &|_, _| {}).unwrap().0
}

/// A sweep with repetitions (`sweep`, `repeat`, `confidence`), a shard (`shard`), a zero-byte response
/// (the per-transaction service demand of the server is NaN: `null` in JSON) all read back.
#[test]
fn sweeps_repetitions_shards_and_null_figures_read_back() {
    let whole = pretty(&swept(None));
    assert!(whole.contains("\"repeat\"") && whole.contains("\"confidence\""));
    assert_round_trip("swept", &whole);
    let shard = pretty(&swept(Some((1, 4))));
    assert!(shard.contains("\"shard\""));
    assert_round_trip("shard 1/4", &shard);
    // The writer spells NaN as null; it reads back as NaN and is written as null again.
    let mut v: Value = serde_json::from_str(&whole).unwrap();
    v["points"][0]["metrics"]["latency_us"]["stddev"] = Value::Null;
    v["points"][0]["metrics"]["cpu_util_percent"]["local"] = Value::Null;
    assert_round_trip("nulls", &pretty(&v));
}

/// What `report` used to print as tables of "null", "NaN" or without a point is refused, naming the field.
#[test]
fn documents_that_do_not_fit_are_refused_naming_the_field() {
    let (_, good) = common::run(common::RR);
    let refused = |v: &Value| ResultDoc::from_json(&v.to_string()).map(|_| ()).unwrap_err();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        refused(&v)
    };
    let cases: Vec<(String, &str)> = vec![
        (refused(&json!({"schema": "tcplab.result/1"})), "missing field `tcplab`"),
        (
            with(&|v| v["schema"] = json!("tcplab.result/3")),
            "schema: \"tcplab.result/3\": accepted: \"tcplab.result/2\", \"tcplab.result/1\"",
        ),
        (
            with(&|v| v["points"][0]["metrics"]["transactions_per_s"] = json!("fast")),
            "points[0].metrics: transactions_per_s: invalid type: string \"fast\", expected f64",
        ),
        (
            with(&|v| v["points"][0]["metrics"]["latency_us"]["p99"] = json!("1ms")),
            "points[0].metrics: latency_us.p99: invalid type: string",
        ),
        (with(&|v| v["points"][0]["metrics"]["goodput"] = json!(1)), "points[0].metrics: goodput: unknown metric"),
        (
            with(&|v| {
                v["points"][0]["metrics"].as_object_mut().unwrap().remove("transactions");
            }),
            "points[0].metrics: missing field `transactions`",
        ),
        (with(&|v| v["points"][0] = json!("garbage")), "points[0]: invalid type: string \"garbage\""),
        (
            with(&|v| v["points"][0]["links"]["up"]["frames_in"] = json!(-1)),
            "points[0].links.up.frames_in: invalid value",
        ),
        (with(&|v| v["points"][0]["surprise"] = json!(1)), "points[0].surprise: unknown field `surprise`"),
        (
            with(&|v| v["points"][0]["connections"][0]["side"] = json!("middle")),
            "points[0].connections[0].side: \"middle\"",
        ),
        (
            with(&|v| v["points"][0]["connections"][1]["estats"]["SegsOut"] = json!("many")),
            "points[0].connections[1].estats: SegsOut: a string: accepted a number",
        ),
        (
            with(&|v| {
                v["points"][0]["metrics"] =
                    json!({"throughput_bps": 1.0, "delivered_bytes": 1, "retransmissions": 0, "elapsed_s": 1.0})
            }),
            "points[0].metrics: the metrics of test.kind tcp_stream or tcp_maerts, but scenario.test.kind = \"tcp_rr\"",
        ),
        (with(&|v| v["points"][0]["params"] = json!({"test.burst": 1})), "points[0].params: keys [test.burst]"),
        (with(&|v| v["scenario"]["path"]["up"]["rate"] = json!("fast")), "scenario.path.up.rate"),
        (
            with(&|v| v["scenario"]["test"]["kind"] = json!("tcp_fast")),
            "scenario.test.kind: unknown variant `tcp_fast`",
        ),
    ];
    for (err, want) in cases {
        assert!(err.contains(want), "{err:?} does not contain {want:?}");
    }
}
