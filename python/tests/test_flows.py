"""Result.flows: the flows of a [dumbbell] scenario as a DataFrame, and their aggregate in Result.points."""

import pytest

import tcplab

SHORT = {"test.duration": "2s"}


def test_flows_of_one_point_are_the_documents_and_sum_to_the_aggregate():
    r = tcplab.run("cubic-vs-reno", set=SHORT)
    f = r.flows(0)
    doc = r.document["points"][0]
    assert len(f) == len(doc["flows"]) == 2
    assert list(f.columns[:4]) == ["flow", "kind", "stack", "congestion_control"]
    assert list(f["flow"]) == [0, 1]
    assert list(f["congestion_control"]) == ["cubic", "reno"]
    for col in ["goodput_bps", "base_rtt_ms", "retransmissions", "smoothed_rtt_ms", "delivered_bytes"]:
        assert list(f[col]) == [x[col] for x in doc["flows"]], col
    p = r.points
    assert p["aggregate.stream_flows"][0] == 2
    # Summed in flow order, as the lab sums them: the same float, not merely close.
    goodputs = list(f["goodput_bps"])
    assert sum(goodputs) == p["aggregate.goodput_bps"][0] == doc["aggregate"]["goodput_bps"]
    jain = sum(goodputs) ** 2 / (len(goodputs) * sum(g * g for g in goodputs))
    assert jain == pytest.approx(p["aggregate.jain_index"][0], rel=1e-12)
    # Both flows moved data through a 100 Mbit/s bottleneck, together not more than it carries.
    assert all(g > 1e6 for g in goodputs) and sum(goodputs) < 100e6


def test_flows_of_a_sweep_are_long_a_row_per_point_and_flow():
    qdiscs = ["fifo", "fq_codel"]
    r = tcplab.run("bufferbloat", set=SHORT, sweep={"dumbbell.bottleneck.qdisc.kind": qdiscs})
    f = r.flows()
    axis = "dumbbell.bottleneck.qdisc.kind"
    assert list(f.columns[:3]) == ["point", axis, "flow"]
    assert list(f["point"]) == [0, 0, 1, 1]
    assert list(f[axis]) == ["fifo", "fifo", "fq_codel", "fq_codel"]
    assert list(f["kind"]) == ["stream", "rr", "stream", "rr"]
    # The rr flow has its latency; the stream flow has none (missing, not zero).
    rr = f[f["kind"] == "rr"]
    assert (rr["latency_us.p99"] > 0).all() and (rr["transactions_per_s"] > 0).all()
    assert f[f["kind"] == "stream"]["latency_us.p99"].isna().all()
    # Each point's stream goodputs sum to its aggregate (rr flows are not in it).
    p = r.points
    for i in range(len(p)):
        streams = f[(f["point"] == i) & (f["kind"] == "stream")]["goodput_bps"]
        assert sum(streams) == p["aggregate.goodput_bps"][i]
    # One point's rows, without the point's columns, are flows(point).
    one = f[f["point"] == 1].drop(columns=["point", axis]).reset_index(drop=True)
    assert one.equals(r.flows(1))
    # The qdisc's effect the shipped scenario shows: FQ-CoDel keeps the rr flow's tail latency far below FIFO's.
    p99 = dict(zip(rr[axis], rr["latency_us.p99"]))
    assert p99["fq_codel"] * 5 < p99["fifo"], p99


def test_a_scenario_without_a_dumbbell_has_no_flows():
    r = tcplab.run("bulk-10m", set={"test.duration": "100ms"})
    assert r.flows().empty and r.flows(0).empty
    assert not any(c.startswith("aggregate.") for c in r.points.columns)
    with pytest.raises(IndexError):
        r.flows(1)


def test_a_dumbbell_document_is_the_clis_and_reads_back_with_its_flows(cli, tmp_path):
    r = tcplab.run("rtt-fairness", set=SHORT)
    r.save(tmp_path / "py.json")
    cli("run", "rtt-fairness", "--set", 'test.duration="2s"', "--quiet", "--json", str(tmp_path / "cli.json"))
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    back = tcplab.load(tmp_path / "cli.json")
    assert back.flows().equals(r.flows()) and back.points.equals(r.points)
    # Two Reno flows, RTTs 20 and 80 ms: the shorter RTT takes the larger share (docs/topology.md).
    f = r.flows(0)
    assert list(f["base_rtt_ms"]) == [20.0, 80.0]
    assert f["goodput_bps"][0] > f["goodput_bps"][1]
