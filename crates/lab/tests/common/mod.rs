//! What the whole-run tests share: a scenario from text with overrides, run for one seed.

use tcplab_lab::{load, ResultDoc, Scenario, Source};

pub fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    load(&Source { name: "test.toml", text }, &set).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run_scenario(s: &Scenario, seed: u64) -> ResultDoc {
    tcplab_lab::run_scenario(s, seed).expect("the connections come up")
}
