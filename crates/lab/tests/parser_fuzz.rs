//! The scenario parser never panics: arbitrary text, mutated valid scenarios and arbitrary overrides all
//! end in a scenario or an error that names where the problem is.

use proptest::prelude::*;
use tcplab_lab::{load, Origin, Source};

const VALID: &str = include_str!("../../../scenarios/bulk-10m.toml");

fn check(text: &str, set: &[String]) {
    match load(&Source { name: "fuzz.toml", text }, set) {
        // Whatever loads is valid: the checks `load` promises hold.
        Ok(s) => {
            assert!(!s.test.duration.is_zero() && s.test.parallel >= 1 && s.test.message.bytes() > 0);
            s.client.tcp().validate().unwrap();
            s.server.tcp().validate().unwrap();
        }
        Err(e) => {
            let shown = e.to_string();
            match &e.origin {
                Origin::File { file, .. } => assert!(shown.starts_with(file.as_str()), "{shown}"),
                Origin::Flag { flag } | Origin::Sweep { flag } | Origin::Cli { flag } => {
                    assert!(shown.contains(flag.as_str()), "{shown}")
                }
            }
            assert!(!e.message.is_empty());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        check(&text, &[]);
    }

    #[test]
    fn mutated_scenarios_never_panic(pos in 0usize..VALID.len(), cut in 0usize..40, insert in "[a-z0-9\"=.\\[\\]{}, -]{0,12}") {
        let mut text = VALID.to_string();
        let pos = (0..=pos).rev().find(|p| text.is_char_boundary(*p)).unwrap_or(0);
        let end = (pos + cut).min(text.len());
        let end = (end..=text.len()).find(|p| text.is_char_boundary(*p)).unwrap_or(text.len());
        text.replace_range(pos..end, &insert);
        check(&text, &[]);
    }

    #[test]
    fn arbitrary_overrides_never_panic(path in "[a-z_.]{0,30}", value in "\\PC{0,20}") {
        check(VALID, &[format!("{path}={value}")]);
    }
}

#[test]
fn errors_point_at_the_line_of_the_key() {
    let text = VALID.replace("delay = \"20ms\"", "delay = \"20 parsecs\"");
    let e = load(&Source { name: "x.toml", text: &text }, &[]).unwrap_err();
    let line = text.lines().position(|l| l.contains("parsecs")).unwrap() + 1;
    assert_eq!(e.origin, Origin::File { file: "x.toml".into(), line: Some(line) });
    assert_eq!(e.key, "path.up.delay");
    assert!(e.message.contains("unknown unit") && e.message.contains("accepted"), "{}", e.message);
}

#[test]
fn a_nested_knob_table_changes_only_the_keys_it_names() {
    let text = VALID.replace("[client]\nstack = \"rfc\"", "[client]\nstack = \"linux\"\ntcp = { cubic = { c = 0.5 } }");
    let s = load(&Source { name: "x.toml", text: &text }, &[]).unwrap();
    assert_eq!(s.client.tcp().cubic.c, 0.5);
    assert!(s.client.tcp().cubic.hystart, "the linux personality's HyStart stays on");
}

#[test]
fn cubic_with_a_packet_counted_cwnd_is_rejected_at_its_key() {
    let set = ["client.tcp.congestion_control=\"cubic\"".to_string(), "client.tcp.cwnd_unit=\"packets\"".to_string()];
    let e = load(&Source { name: "x.toml", text: VALID }, &set).unwrap_err();
    assert_eq!(e.key, "client.tcp.cwnd_unit");
    assert!(e.message.contains("accepted with cubic: \"bytes\""), "{}", e.message);
}
