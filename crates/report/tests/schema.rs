//! docs/result.schema.json: every shipped scenario's result validates (shortened to 1 s), with each form
//! of `test.series`; and the validator catches what it should.

use crate::common;

use serde_json::json;
use tcplab_lab::{load, run_scenario, Source, SHIPPED};
use tcplab_report::schema::validate_result;

#[test]
fn every_shipped_scenarios_result_validates_against_the_schema() {
    let series = [
        None,
        Some("test.series=\"100ms\""),
        Some("test.series={interval=\"100ms\",vars=[\"CurCwnd\",\"CurSsthresh\",\"SendStall\"]}"),
    ];
    for s in SHIPPED {
        let tcp = !s.text.contains("kind = \"rdp_");
        // The `{ interval, vars }` series is TCP-only, as are the CPU cost model's figures; RDP has the
        // interval form, with its `rtt_samples`.
        let cpu = Some("server.host={cpu={per_segment_in=\"5us\",per_ack_out=\"1us\"}}");
        // A path MTU brings the hosts' IP fragmentation counters and the scenario's `mtu` and `fragment_ttl`.
        let mtu = Some("path.up.mtu=\"576B\"");
        let ttl = Some("server.host.fragment_ttl=\"15s\"");
        // A dumbbell or a network takes none of the two-host extras (its flows say what runs): its plain run only.
        let extras: Vec<Option<&str>> = if s.text.contains("[dumbbell]") || s.text.contains("[[link]]") {
            vec![None]
        } else if tcp {
            series.iter().copied().chain([cpu, mtu, ttl]).collect()
        } else {
            series[..2].iter().copied().chain([mtu]).collect()
        };
        // A scenario with its own `test.series = { vars }` (whose plots may need those variables) keeps it.
        let own_series = s.text.contains("series = {");
        for extra in extras.into_iter().filter(|e| !(own_series && e.is_some_and(|e| e.starts_with("test.series")))) {
            let mut set = vec!["test.duration=\"1s\"".to_string()];
            set.extend(extra.map(String::from));
            let sc = load(&Source { name: s.name, text: s.text }, &set).unwrap();
            let doc = serde_json::to_value(run_scenario(&sc, 1).unwrap()).unwrap();
            if let Err(e) = validate_result(&doc) {
                panic!("{} {extra:?}: {e:#?}", s.name);
            }
        }
    }
}

#[test]
fn the_validator_catches_missing_wrong_and_unexpected_fields() {
    let (_, good) = common::run(common::RR);
    assert!(validate_result(&good).is_ok());
    let mut bad = good.clone();
    bad["points"][0]["metrics"].as_object_mut().unwrap().remove("transactions");
    bad["points"][0]["links"]["up"]["frames_in"] = json!(-1);
    bad["points"][0]["links"]["up"]["extra"] = json!(1);
    bad["schema"] = json!("tcplab.result/3");
    bad["seed"] = json!("1");
    let errs = validate_result(&bad).unwrap_err();
    for want in [
        "/points/0/metrics: matches 0 of oneOf",
        "/points/0/links/up/frames_in: -1 is outside minimum",
        "/points/0/links/up: unexpected property extra",
        "/schema: \"tcplab.result/3\" is not one of",
        "/seed: \"1\" is not of type",
    ] {
        assert!(errs.iter().any(|e| e.contains(want)), "{want}: {errs:#?}");
    }
}
