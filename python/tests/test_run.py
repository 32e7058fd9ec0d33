"""tcplab.run and Result against the CLI: the same figures, the same bytes, the CLI's errors."""

import json
import math
import threading
import time

import pytest

import tcplab

# A short request/response sweep: 14 points of the shipped rr-dsl, 1 s each.
SHORT = {"test.duration": "1s"}


def test_shipped_throughput_equals_the_cli_json(cli, tmp_path):
    r = tcplab.run("bulk-10m")
    cli("run", "bulk-10m", "--quiet", "--json", str(tmp_path / "b.json"))
    doc = json.loads((tmp_path / "b.json").read_text())
    bps = r.points["throughput_bps"]
    assert len(bps) == 1
    assert bps[0] == doc["points"][0]["metrics"]["throughput_bps"]
    # The row the CLI's table shows: 9.35 Mbit/s.
    assert f"{bps[0] / 1e6:.2f}" == "9.35"
    assert "9.35" in r.table()


def test_save_is_byte_identical_to_the_cli_json(cli, tmp_path):
    r = tcplab.run("rr-dsl", set=SHORT, seed=7)
    r.save(tmp_path / "py.json")
    cli("run", "rr-dsl", "--set", 'test.duration="1s"', "--seed", "7", "--quiet", "--json", str(tmp_path / "cli.json"))
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert r.json().encode() == (tmp_path / "cli.json").read_bytes()
    # Read back through the typed model, the document writes the same bytes again.
    again = tcplab.load(tmp_path / "cli.json")
    again.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    assert again.points.equals(r.points)


def test_sweep_has_one_row_per_point_swept_columns_first():
    r = tcplab.run("bulk-10m", set={"test.duration": "2s"}, sweep={"path.up.rate": ["1mbit", "2mbit", "5mbit"]})
    p = r.points
    assert list(p.columns[:2]) == ["path.up.rate", "iterations"]
    assert list(p["path.up.rate"]) == ["1mbit", "2mbit", "5mbit"]
    assert len(p) == 3 == len(r)
    # Throughput follows the rate (each point below its rate, above 80% of it).
    for rate, bps in zip([1e6, 2e6, 5e6], p["throughput_bps"]):
        assert 0.8 * rate < bps < rate


def test_two_axes_first_varies_slowest_and_metrics_flatten():
    r = tcplab.run("rr-dsl", set=SHORT, sweep={"test.burst": range(0, 2), "client.tcp.nodelay": [False, True]})
    p = r.points
    assert list(p.columns[:3]) == ["test.burst", "client.tcp.nodelay", "iterations"]
    assert list(p["test.burst"]) == [0, 0, 1, 1]
    assert list(p["client.tcp.nodelay"]) == [False, True, False, True]
    for col in ["transactions_per_s", "latency_us.mean", "latency_us.p99"]:
        assert col in p.columns, col
    # The nested metric is the document's figure.
    doc = r.document
    assert p["latency_us.p99"][3] == doc["points"][3]["metrics"]["latency_us"]["p99"]


def test_sweep_as_flags_and_ranges():
    a = tcplab.run("rr-dsl", set=["test.duration=\"1s\""], sweep=["test.burst=0..=1"])
    b = tcplab.run("rr-dsl", set=SHORT, sweep={"test.burst": "0..=1"})
    assert a.json() == b.json()
    # The flag's axis replaces the file's test.burst in place; the file's client.tcp.nodelay stays.
    assert list(a.points.columns[:2]) == ["test.burst", "client.tcp.nodelay"]
    assert list(a.points["test.burst"]) == [0, 0, 1, 1]


def test_bad_key_raises_scenario_error_with_file_line_and_accepted_values(tmp_path):
    text = 'name = "x"\n[path.up]\nrate = "10mbit"\ndelay = "20ms"\n[test]\nkind = "tcp_stream"\nduraton = "1s"\n'
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run(str(f))
    err = e.value
    assert err.file == str(f) and err.line == 7 and err.key == "test.duraton", vars(err)
    msg = str(err)
    assert msg.startswith(f"{f}:7: test.duraton: "), msg
    assert "accepted" in msg and "duration" in msg, msg
    # The same message as the CLI prints (after its "tcplab: ").
    with pytest.raises(tcplab.ScenarioError, match=r"^<string>:7: test\.duraton: "):
        tcplab.run(text)
    # The interpreter is fine after an error: the next run works.
    assert tcplab.run("bulk-10m", set={"test.duration": "1s"}).points["throughput_bps"][0] > 0


def test_bad_values_name_the_flag():
    with pytest.raises(tcplab.ScenarioError) as e:
        tcplab.run("bulk-10m", set={"path.up.rate": "fast"})
    assert str(e.value).startswith('--set path.up.rate="fast": '), str(e.value)
    assert "accepted" in str(e.value)
    with pytest.raises(tcplab.ScenarioError, match="no such file, and not a shipped scenario"):
        tcplab.run("no-such-scenario")
    with pytest.raises(tcplab.ScenarioError, match='backend "ns3": accepted'):
        tcplab.run("bulk-10m", backend="ns3")
    with pytest.raises(tcplab.ScenarioError, match="--iterations 0"):
        tcplab.run("bulk-10m", iterations=0)


def test_dict_scenario():
    s = {
        "name": "from-a-dict",
        "path": {"up": {"rate": "10mbit", "delay": "20ms"}},
        "test": {"kind": "tcp_stream", "duration": "2s"},
    }
    r = tcplab.run(s)
    assert r.document["scenario"]["name"] == "from-a-dict"
    assert 8e6 < r.points["throughput_bps"][0] < 10e6


def test_connections_links_series_logvars():
    series = {"interval": "100ms", "vars": ["CurCwnd", "SmoothedRTT"]}
    r = tcplab.run("bulk-10m", set={"test.duration": "2s", "test.series": series})
    c = r.connections(0)
    assert list(c["side"]) == ["client", "server"]
    doc = r.document["points"][0]
    assert c["SegsOut"][0] == doc["connections"][0]["estats"]["SegsOut"]
    links = r.links(0).set_index("direction")
    assert links.loc["up", "frames_in"] == doc["links"]["up"]["frames_in"]
    assert r.nics(0)["frames_sent"][0] == doc["links"]["nic_client"]["frames_sent"]
    lv = r.logvars(0)
    assert list(lv.columns) == ["t_s", "end", "variable", "value"]
    assert set(lv["variable"]) >= {"CurCwnd", "SmoothedRTT", "throughput_bps"}
    assert set(lv["end"]) == {"0-client", "1-server"}
    cwnd = lv[(lv["end"] == "0-client") & (lv["variable"] == "CurCwnd")]
    assert len(cwnd) == len(doc["logvars"]["ends"][0]["rows"])
    assert r.series(0).empty
    with pytest.raises(IndexError, match="the result has 1 points"):
        r.connections(1)


def test_repetitions_carry_confidence_columns():
    r = tcplab.run("lossy-10m", set={"test.duration": "2s"}, iterations=2)
    p = r.points
    assert p["iterations"][0] == 2
    assert p["confidence.metric"][0] == "throughput_bps"
    assert "confidence.interval" in p.columns


def test_plots_are_the_lab_svgs(tmp_path):
    r = tcplab.run("rr-dsl", set=SHORT, sweep={"test.burst": [0, 1]})
    plots = r.plots()
    assert plots and all(p.svg.startswith("<svg") for p in plots)
    paths = r.save_plots(tmp_path / "plots")
    assert len(paths) == len(plots)
    assert (tmp_path / "plots" / (plots[0].name + ".svg")).read_text() == plots[0].svg


def test_gil_is_released_while_simulating():
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    started = time.perf_counter()
    tcplab.run("bulk-10m", jobs=1)
    spent = time.perf_counter() - started
    stop.set()
    t.join()
    # With the GIL held for the whole run the counter could not move (a tick or two, before the call enters
    # the lab); released, it ticks about once a ms on an idle machine, and still every few ms on a loaded one
    # (14 in 0.1 s at load average 15): a rate-free bound that load cannot break.
    assert ticks >= 5, (ticks, spent)


def test_a_thousand_point_frame_builds_in_under_a_second():
    r = tcplab.run("bulk-10m", set={"test.duration": "10ms"}, sweep={"seed": "1..=1000"})
    started = time.perf_counter()
    p = r.points
    spent = time.perf_counter() - started
    assert len(p) == 1000 and list(p["seed"][:3]) == [1, 2, 3]
    assert spent < 1.0, spent
