//! crates/report's test files on tcplab-testkit's harness (they need root, network namespaces or an outside
//! tool), as one test binary: each file beside this one is a module here (`#[path]`, so the files keep their
//! names) listing its tests in `tcplab_testkit::tests!`, and a test is named `FILE::TEST` (`cargo test -p
//! tcplab-report --test system pcap_tshark::`). The files run one after another, each as its own binary did (its tests
//! at once or one at a time), so no file's testbeds share the machine with another's. One binary instead of
//! one per file: each linked everything it uses again (docs/testing.md § How long CI takes).

// The files' shared helpers, once (a file says `use crate::common;`).
mod common;

#[path = "flent.rs"]
mod flent;
#[path = "flows_flent.rs"]
mod flows_flent;
#[path = "html_chromium.rs"]
mod html_chromium;
#[path = "pcap_ecn.rs"]
mod pcap_ecn;
#[path = "pcap_net_tshark.rs"]
mod pcap_net_tshark;
#[path = "pcap_tshark.rs"]
mod pcap_tshark;

tcplab_testkit::main!(files: flent, flows_flent, html_chromium, pcap_ecn, pcap_net_tshark, pcap_tshark);
