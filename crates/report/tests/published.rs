//! `[[published]]` figures in the outputs: the table's section beside the lab's figures (in the source's
//! unit, with the difference and the sources), and crosses on the scenario's plots of the metric.

use tcplab_lab::sweep::{plan, run_plan, RepeatFlags, RunOptions};
use tcplab_lab::Source;

const SCENARIO: &str = "name = \"pub\"\n[path.up]\nrate = \"10mbit\"\ndelay = \"5ms\"\nqueue = \"100pkt\"\n\
    [test]\nkind = \"tcp_stream\"\nduration = \"2s\"\n\
    [sweep]\n\"server.tcp.recv_buffer\" = [\"16KiB\", \"64KiB\"]\n\
    [[plot]]\nname = \"goodput\"\nx = \"server.tcp.recv_buffer\"\ny = \"throughput_bps\"\n\
    [[published]]\nsource = \"a made-up report\"\nyear = 1999\nlabel = \"measured\"\nmetric = \"throughput_bps\"\n\
    unit = \"Mbit/s\"\nx = \"server.tcp.recv_buffer\"\nx_values = [\"16KiB\", \"32KiB\", \"64KiB\"]\ny_values = [9.0, 9.2, 10.0]\n";

#[test]
fn the_table_and_the_plots_show_published_figures_beside_the_labs() {
    let src = Source { name: "pub.toml", text: SCENARIO };
    let plan = plan(&src, &[], &[], &RepeatFlags::default()).unwrap();
    let (doc, _) = run_plan(&plan, RunOptions { jobs: 1, seed: None, shard: None }, &|_, _| {}).unwrap();
    let table = tcplab_report::table(&doc);
    let section = table.split("Published figures beside the lab's\n").nth(1).unwrap_or_else(|| panic!("{table}"));
    let rows: Vec<&str> = section.lines().filter(|l| !l.is_empty()).collect();
    assert!(rows[0].starts_with("server.tcp.recv_buffer") && rows[0].contains("difference"), "{section}");
    // Both buffers fill the 10 ms path at 10 Mbit/s (a 16 KiB window carries 13 Mbit/s over 10 ms): one
    // goodput, compared with 9.0 and 10.0; the 32KiB figure has no point in this run and no row.
    let goodput = match &doc.points[0].metrics {
        tcplab_lab::result::Metrics::Stream(m) => m.throughput_bps / 1e6,
        other => panic!("{other:?}"),
    };
    assert!(goodput > 9.0 && goodput < 9.42, "{goodput}");
    assert_eq!(rows.len(), 4, "{section}");
    let cell = |want: f64| format!("{:+.1}%", (goodput - want) / want * 100.0);
    assert!(
        rows[1].starts_with("16KiB") && rows[1].contains("9.00 Mbit/s") && rows[1].contains(&cell(9.0)),
        "{section}"
    );
    assert!(
        rows[2].starts_with("64KiB") && rows[2].contains("10.0 Mbit/s") && rows[2].contains(&cell(10.0)),
        "{section}"
    );
    assert_eq!(rows[3], "[1] a made-up report (1999): measured");
    let (plots, notes) = tcplab_report::plot::plots(&serde_json::to_value(&doc).unwrap());
    let goodput = plots.iter().find(|p| p.name == "goodput").unwrap_or_else(|| panic!("{notes:?}"));
    assert!(goodput.svg.contains("a made-up report (1999): measured"), "the legend names the source");
    // Two crosses (two strokes each), in the colour of the lab's one line: the 32KiB figure has no
    // category on this axis.
    let published_colour = "stroke=\"#1F77B4\"";
    let strokes = goodput.svg.lines().filter(|l| l.contains(published_colour) && l.contains("<line")).count();
    assert!(strokes >= 4, "{strokes} strokes in the published colour");
}
