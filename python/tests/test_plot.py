"""Result.plot: what --plot draws, drawn with matplotlib from the lab's own charts; the same plots, names,
titles, axes, lines and data as the SVGs, for every kind of plot the shipped scenarios have."""

import math
import os
import textwrap

import pytest

import tcplab
from conftest import require

# Every shipped scenario, cut short: its plots are those of the full run (the same sweep, series, CDFs,
# [[plot]] tables and published figures), with less simulated time behind each point.
SHORT = {"test.duration": "300ms"}


@pytest.fixture(scope="module")
def mpl():
    m = require("matplotlib", 'pip install "matplotlib>=3.7" (or "tcplab[plot]")')
    m.use("Agg")
    return m


def _same(a, b):
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b))


def check_drawn(r):
    """Every chart of `r` drawn by Result.plot as its SVG draws it; returns the charts by name."""
    charts = r.charts()
    svgs = r.plots()
    assert [c.name for c in charts] == [p.name for p in svgs]
    assert [c.title for c in charts] == [p.title for p in svgs]
    figs = r.plot()
    # A name twice (a [[plot]] named as a built-in plot is): --plot's file holds the later, and so does figs.
    last = {c.name: c for c in charts}
    assert list(figs) == list(last)
    for c in last.values():
        ax = figs[c.name].axes[0]
        assert ax.get_title() == "\n".join(textwrap.wrap(c.title, 84))
        assert (ax.get_xlabel(), ax.get_ylabel()) == (c.x_label, c.y_label)
        # The lab's lines first, then the published crosses (drawn on top) with a white halo under each.
        expected = [x for x in c.lines if not x.published] + [x for x in c.lines if x.published]
        # Left out: the halos, the window's edges, and the caps of error bars (matplotlib's `_nolegend_`).
        drawn = [
            x
            for x in ax.get_lines()
            if not (x.get_color() == "white" or _is_band_edge(x, c) or x.get_label() == "_nolegend_")
        ]
        bars = [x for x in c.lines if x.errors]
        assert len(ax.containers) == len(bars)
        assert len(drawn) == len(expected), (c.name, [x.get_label() for x in drawn])
        for want, got in zip(expected, drawn):
            assert _same(list(got.get_xdata()), want.x), (c.name, want.label)
            assert _same(list(got.get_ydata()), want.y), (c.name, want.label)
            assert got.get_color() == want.colour
            if want.published:
                assert got.get_marker() == "x" and got.get_linestyle() == "None"
            else:
                assert got.get_linestyle() == ("--" if want.dashed else "-")
        legend = ax.get_legend()
        labels = [x.label for x in expected if x.label.strip()]
        if labels:
            shown = [t.get_text() for t in legend.get_texts()]
            band = [c.band[2]] if c.band and c.band[2] else []
            assert sorted(shown) == sorted(labels + band), (c.name, shown)
        else:
            assert legend is None
        assert ax.get_xscale() == ("log" if c.log_x else "linear")
        if c.x_categories:
            assert [t.get_text() for t in ax.get_xticklabels()] == c.x_categories
        if c.y_range:
            assert ax.get_ylim() == pytest.approx(c.y_range)
    return last


def _is_band_edge(line, chart):
    """The dashed edges of the measurement window (axvline): x at the window's start or end, no label."""
    if not chart.band:
        return False
    xs = list(line.get_xdata())
    return len(xs) == 2 and xs[0] == xs[1] and xs[0] in chart.band[:2] and line.get_label().startswith("_")


@pytest.mark.parametrize("name", tcplab.shipped())
def test_every_shipped_scenario_draws_as_its_svgs(mpl, name):
    r = tcplab.run(name, set=SHORT)
    charts = check_drawn(r)
    # Every plot of a result: one per [[plot]] table that can be drawn, the sweep's, the series', the CDFs'.
    assert charts or not r.plots()


def test_a_sweep_plot_is_the_points_metric_with_its_confidence_interval(mpl):
    # No [[plot]] table: the default sweep plot of the metric against the swept axis, error bars from the
    # repetitions' confidence interval.
    r = tcplab.run("lossy-10m", set={"test.duration": "1s"}, sweep={"path.up.loss.p": [0.001, 0.01]}, iterations=2)
    charts = check_drawn(r)
    c = charts["sweep-throughput_bps"]
    (line,) = c.lines
    p = r.points
    assert line.markers and line.x == [0.001, 0.01]
    assert "Mbit/s" in c.y_label
    assert line.y == pytest.approx([v / 1e6 for v in p["throughput_bps"]], rel=1e-12)
    # Each bar spans the interval around the mean: (high - low) / mean is confidence.interval.
    for (x, low, high), y, width in zip(line.errors, line.y, p["confidence.interval"]):
        assert low < y < high and (high - low) / y == pytest.approx(width, rel=1e-9)


def test_a_scenario_plot_and_the_latency_cdfs(mpl):
    r = tcplab.run("rr-dsl", set={"test.duration": "1s"}, sweep={"test.burst": [0, 1, 2], "client.tcp.nodelay": [False]})
    charts = check_drawn(r)
    # The scenario's [[plot]] "tps-burst": transactions/s against the first burst.
    (line,) = charts["tps-burst"].lines
    assert line.x == [0.0, 1.0, 2.0] and line.y == list(r.points["transactions_per_s"])
    # One latency CDF per point, and the points' CDFs together; each ends at 1.
    assert {"p0-cdf", "p1-cdf", "p2-cdf", "sweep-cdf"} <= set(charts)
    assert [x.y[-1] for x in charts["sweep-cdf"].lines] == pytest.approx([1.0, 1.0, 1.0])
    assert charts["p0-cdf"].y_range == (0.0, 1.04)


def test_time_series_plots_with_the_measurement_window(mpl):
    series = {"interval": "100ms", "vars": ["CurCwnd", "CurSsthresh", "SmoothedRTT"]}
    r = tcplab.run("lossy-10m", set={"test.duration": "2s", "test.series": series})
    charts = check_drawn(r)
    assert {"cwnd", "rtt", "throughput"} <= set(charts)
    cwnd = charts["cwnd"]
    # ssthresh dashed beside its cwnd, in the same colour.
    assert [x.dashed for x in cwnd.lines] == [False, True] and cwnd.lines[0].colour == cwnd.lines[1].colour
    # The cwnd drawn is the logvars' CurCwnd (KiB on the axis: bytes / 1024).
    lv = r.logvars(0)
    raw = lv[(lv["end"] == "0-client") & (lv["variable"] == "CurCwnd")]
    assert "KiB" in cwnd.y_label
    assert _same(cwnd.lines[0].y, [v / 1024 for v in raw["value"]])
    assert cwnd.band is not None and cwnd.band[2] == "measurement window"


def test_a_classic_plot_carries_the_published_figures_and_the_reference(mpl):
    r = tcplab.run("classic/dsl-rr-nodelay", set={"test.duration": "2s"})
    charts = check_drawn(r)
    c = charts["tps-burst"]
    published = [x for x in c.lines if x.published]
    assert published, [x.label for x in c.lines]
    # The crosses are every published series' figures (the 2002 report's and the kernel's "today" series) as
    # the document carries them beside each point.
    want = sorted(
        (float(p["params"]["test.burst"]), f["published"])
        for p in r.document["points"]
        for f in p.get("published", [])
        if f["metric"] == "transactions_per_s"
    )
    crosses = sorted((x, y) for line in published for x, y in zip(line.x, line.y))
    assert [x for x, _ in crosses] == [x for x, _ in want]
    assert [y for _, y in crosses] == pytest.approx([y for _, y in want])
    # The line's ceiling the scenario names, flat across the swept range.
    ref = [x for x in c.lines if "ceiling" in x.label]
    assert len(ref) == 1 and ref[0].y == [22.28, 22.28]


def test_one_plot_by_name_on_given_axes_and_unknown_names(mpl):
    from matplotlib.figure import Figure

    r = tcplab.run("rr-dsl", set={"test.duration": "1s"}, sweep={"test.burst": [0, 1]})
    ax = Figure().subplots()
    assert r.plot("tps-burst", ax=ax) is ax
    assert ax.get_lines()
    with pytest.raises(KeyError, match="nope: not a plot of this result; accepted: tps-burst, "):
        r.plot("nope")
    # Jupyter shows a figure of plot() inline through _repr_png_, with or without pyplot imported.
    fig = r.plot()["tps-burst"]
    assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_plots_svg_is_the_clis_bytes_and_png_is_matplotlibs(mpl, cli, tmp_path):
    args = ["rr-dsl", "--set", 'test.duration="1s"', "--sweep", "test.burst=0,1"]
    cli("run", *args, "--quiet", "--plot", str(tmp_path / "cli"))
    r = tcplab.run("rr-dsl", set={"test.duration": "1s"}, sweep={"test.burst": [0, 1]})
    paths = r.save_plots(tmp_path / "py")
    names = sorted(os.listdir(tmp_path / "cli"))
    assert sorted(os.path.basename(p) for p in paths) == names
    for n in names:
        assert (tmp_path / "py" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n
    pngs = r.save_plots(tmp_path / "png", format="png")
    assert [os.path.basename(p) for p in pngs] == [os.path.basename(p)[:-4] + ".png" for p in paths]
    for p in pngs:
        with open(p, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    r = tcplab.run("bulk-10m", set={"test.duration": "100ms"})
    with pytest.raises(ImportError, match=r'Result.plot draws with matplotlib: pip install "matplotlib'):
        r.plot()
    # The SVGs need nothing.
    assert all(p.svg.startswith("<svg") for p in r.plots())
