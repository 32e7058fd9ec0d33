//! The parser and the runner never panic, whatever the input: random text, and scripts of ours with
//! random edits.

use proptest::prelude::*;
use tcplab_packetdrill::{parse::parse, sim};
use tcplab_tcp::TcpConfig;

const SAMPLE: &str = include_str!("../scripts/sack-fast-retransmit.pkt");

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn extreme_numbers_never_panic(t in prop::sample::select(vec!["0", "+9999999999999", "-5", "+99999999999.9", "18446744073709551615", "+0...99999999999"]),
                                   n in prop::sample::select(vec!["0", "4294967295", "4294967296", "99999999999999999999", "0xffffffff"])) {
        let s = format!("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 listen(3, 1) = 0\n{t} < S {n}:{n}(0) win {n}\n{t} > S. 0:0(0) ack {n}\n{t} write(4, ..., {n}) = {n}\n");
        let _ = sim::run(&s, &TcpConfig::personality("linux").unwrap());
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,200}") {
        let _ = parse(&s);
    }

    #[test]
    fn script_alphabet_never_panics(s in "[ 0-9a-zA-Z.+<>:(),\\[\\]{}=|~*%`\"\\n/-]{0,300}") {
        let _ = parse(&s);
        let _ = sim::run(&s, &TcpConfig::personality("linux").unwrap());
    }

    #[test]
    fn edited_scripts_never_panic(pos in 0usize..SAMPLE.len(), cut in 0usize..40, insert in "[ 0-9a-z.+<>:(),=-]{0,8}") {
        let boundary = |i: usize| (0..=i.min(SAMPLE.len())).rev().find(|&k| SAMPLE.is_char_boundary(k)).unwrap_or(0);
        let pos = boundary(pos);
        let mut s = String::from(&SAMPLE[..pos]);
        s.push_str(&insert);
        s.push_str(&SAMPLE[boundary(pos + cut).max(pos)..]);
        let _ = sim::run(&s, &TcpConfig::personality("linux").unwrap());
    }
}
