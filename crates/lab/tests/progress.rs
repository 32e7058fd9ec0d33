//! The simulated time a run publishes for `tcplab run`'s progress bar (issue 22, item 17): a watched run
//! reports how far it has come, up to its end, and watching changes nothing in its result.

use tcplab_lab::{load, run_scenario, Source, SHIPPED};

#[test]
fn a_watched_run_publishes_its_time_and_the_same_result() {
    let text = SHIPPED.iter().find(|s| s.name == "bulk-1g").unwrap().text;
    let s = load(&Source { name: "bulk-1g", text }, &["test.duration=\"2s\"".into()]).unwrap();
    let unwatched = serde_json::to_string(&run_scenario(&s, 1).unwrap()).unwrap();
    let watch = tcplab_sim::progress::watch();
    assert_eq!(watch.simulated().as_nanos(), 0);
    let watched = serde_json::to_string(&run_scenario(&s, 1).unwrap()).unwrap();
    let t = watch.simulated();
    drop(watch);
    assert_eq!(watched, unwatched, "watching changed the result");
    // Published every 2^14 events (at a gigabit about 0.14 s of simulated time): the last publication is
    // in the last tenths of the 2 s measurement or its drain.
    assert!(t.as_nanos() > 1_500_000_000 && t.as_nanos() <= 2_500_000_000, "{t}");
}
