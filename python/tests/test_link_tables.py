"""The per-direction link table, the NICs, and the long tables of the document's columnar series
(`links.queue_series`, `flow_series`, `rtt_samples`), each against the document cell by cell: a row per
link direction with its counters (no flattened `directions.0.…` columns), the series long (time, key,
variable, value) and back to the document's arrays through a pivot."""

import json
import math
import warnings

import pytest

import tcplab


def _same(a, b):
    """A document value and a cell: null is NaN or None, numbers equal exactly."""
    if a is None:
        return b is None or (isinstance(b, float) and math.isnan(b))
    return a == b


def _counters(prefix, obj, out):
    for k, v in obj.items():
        if isinstance(v, dict):
            _counters(f"{prefix}{k}.", v, out)
        else:
            out[prefix + k] = v
    return out


def test_links_is_one_row_per_direction_with_its_counters():
    r = tcplab.run("bulk-10m", set={"test.duration": "1s"})
    doc = r.document["points"][0]["links"]
    links = r.links(0)
    assert list(links.columns[:3]) == ["direction", "from", "to"]
    assert list(links["direction"]) == [d["direction"] for d in doc["directions"]] == ["up", "down"]
    assert list(links["from"]) == ["client", "server"] and list(links["to"]) == ["server", "client"]
    # Nothing of the old flattening: no per-index columns, no NIC rows, no series' scalars.
    assert not [c for c in links.columns if c.startswith(("directions", "queue_series", "nic", "link"))]
    for i, d in enumerate(doc["directions"]):
        for name, value in _counters("", d["counters"], {}).items():
            assert links[name].iloc[i] == value, (d["direction"], name)
        # /1's `up` and `down` are the same counters as their directions.
        assert _counters("", doc[d["direction"]], {}) == _counters("", d["counters"], {})
    assert links.loc[0, "frames_in"] == links.loc[0, "frames_delivered"] + links.loc[0, "drops_queue_full"] + (
        links.loc[0, "drops_random_loss"]
    )
    with pytest.raises(IndexError, match="the result has 1 points"):
        r.links(1)


def test_a_qdisc_directions_counters_are_qdisc_columns():
    r = tcplab.run("aqm-compare", set={"test.duration": "1s"}, sweep={"path.up.qdisc.kind": ["fifo", "codel"]})
    fifo, codel = r.links(0).set_index("direction"), r.links(1).set_index("direction")
    assert not [c for c in fifo.columns if c.startswith("qdisc.")]
    doc = r.document["points"][1]["links"]["directions"]
    up = next(d for d in doc if d["direction"] == "up")
    q = up["counters"]["qdisc"]
    assert set(q) >= {"enqueued", "dequeued", "drops_aqm", "sojourn_mean_ms"}
    for name, value in q.items():
        assert codel.loc["up", f"qdisc.{name}"] == value, name
    assert codel.loc["up", "qdisc.sojourn_mean_ms"] > 0
    # The direction without a qdisc lacks them: missing, not zero.
    assert math.isnan(codel.loc["down", "qdisc.sojourn_mean_ms"])


def test_a_dumbbells_directions_name_the_bottleneck_and_the_access_links():
    r = tcplab.run("bufferbloat", set={"test.duration": "1s"})
    doc = r.document["points"][0]["links"]
    links = r.links(0)
    names = list(links["direction"])
    assert names[:2] == ["bottleneck", "reverse"]
    assert "flow[0].sender_access.forward" in names and "flow[1].receiver_access.backward" in names
    assert len(names) == len(doc["directions"]) == len(set(names))
    b = links.set_index("direction").loc["bottleneck"]
    assert (b["from"], b["to"]) == ("left", "right")
    # The table's `up` is the bottleneck (docs/results.md).
    assert b["frames_in"] == doc["up"]["frames_in"] and b["drops_queue_full"] == doc["up"]["drops_queue_full"] > 0


def test_a_v1_document_has_up_and_down_as_its_directions(tmp_path):
    r = tcplab.run("bulk-10m", set={"test.duration": "1s"})
    doc = json.loads(r.json())
    doc["schema"] = "tcplab.result/1"
    for p in doc["points"]:
        del p["links"]["directions"]
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(doc, indent=2))
    links = tcplab.load(path).links(0)
    assert list(links["direction"]) == ["up", "down"]
    assert links["from"].isna().all() and links["to"].isna().all()
    assert links["frames_in"].tolist() == r.links(0)["frames_in"].tolist()


def test_nics_are_one_row_per_host_with_ip_fragmentation_under_an_mtu():
    r = tcplab.run("bulk-10m", set={"test.duration": "1s", "path.up.mtu": "576B"})
    doc = r.document["points"][0]["links"]
    nics = r.nics(0)
    assert list(nics["host"]) == ["client", "server"]
    for i, host in enumerate(["client", "server"]):
        for name, value in doc[f"nic_{host}"].items():
            assert nics[name].iloc[i] == value, (host, name)
        for name, value in doc[f"ip_{host}"].items():
            assert nics[f"ip.{name}"].iloc[i] == value, (host, name)
    # 1500-byte datagrams through a 576-byte MTU: the client fragments, the server reassembles.
    assert nics.loc[0, "ip.out_frag_creates"] > nics.loc[0, "ip.out_frag_reqds"] > 0
    assert nics.loc[1, "ip.reasm_oks"] > 0
    plain = tcplab.run("bulk-10m", set={"test.duration": "1s"}).nics(0)
    assert list(plain.columns) == ["host", "frames_sent", "refused_full", "max_queue_frames"]


def test_queue_series_long_cell_by_cell_and_wide_again():
    r = tcplab.run("bufferbloat", set={"test.duration": "1s", "test.series": "200ms"})
    qs = r.document["points"][0]["links"]["queue_series"]
    q = r.queue_series(0)
    assert list(q.columns) == ["t_s", "direction", "variable", "value"]
    t = qs["t_s"]
    variables = ["backlog_packets", "backlog_bytes", "sojourn_ms"]
    assert len(q) == len(t) * len(variables) * len(qs["directions"]) > 0
    k = 0
    for d in qs["directions"]:
        for v in variables:
            for j, instant in enumerate(t):
                row = q.iloc[k]
                assert (row["t_s"], row["direction"], row["variable"]) == (instant, d["direction"], v)
                assert _same(d[v][j], row["value"]), (d["direction"], v, j)
                k += 1
    wide = q[q["variable"] == "backlog_packets"].pivot(index="t_s", columns="direction", values="value")
    assert list(wide.index) == t
    assert wide["bottleneck"].tolist() == qs["directions"][0]["backlog_packets"]
    assert wide["bottleneck"].max() > 500  # bufferbloat: the 1000-packet FIFO fills
    # Without test.series: the columns, no rows.
    empty = tcplab.run("bulk-10m", set={"test.duration": "1s"}).queue_series(0)
    assert empty.empty and list(empty.columns) == ["t_s", "direction", "variable", "value"]


def test_a_qdiscs_sojourn_is_missing_where_it_dequeued_nothing():
    r = tcplab.run(
        "aqm-compare", set={"test.duration": "1s", "test.series": "10ms", "path.up.qdisc.kind": "codel"}
    )
    q = r.queue_series(0)
    down = q[(q["direction"] == "down") & (q["variable"] == "sojourn_ms")]["value"]
    doc = next(d for d in r.document["points"][0]["links"]["queue_series"]["directions"] if d["direction"] == "down")
    assert [x is None for x in doc["sojourn_ms"]] == down.isna().tolist()
    up = q[(q["direction"] == "up") & (q["variable"] == "sojourn_ms")]["value"]
    assert up.notna().any()


def test_flow_series_long_cell_by_cell():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tcplab.TcplabWarning)
        r = tcplab.run("rrul", set={"test.duration": "2s"})
    fs = r.document["points"][0]["flow_series"]
    f = r.flow_series(0)
    assert list(f.columns) == ["t_s", "flow", "variable", "value"]
    assert len(f) == len(fs["t_s"]) * len(fs["flows"]) > 0
    k = 0
    for flow in fs["flows"]:
        for j, instant in enumerate(fs["t_s"]):
            row = f.iloc[k]
            assert (row["t_s"], row["flow"], row["variable"]) == (instant, flow["flow"], flow["metric"])
            assert _same(flow["values"][j], row["value"]), (flow["flow"], j)
            k += 1
    # Stream flows in Mbit/s, the rr probes in ms; the flows' kinds are flows()'.
    kinds = dict(zip(r.flows(0)["flow"], r.flows(0)["kind"]))
    metric = f.groupby("flow")["variable"].first()
    assert {metric[i] for i, kind in kinds.items() if kind == "stream"} == {"goodput_mbps"}
    assert {metric[i] for i, kind in kinds.items() if kind == "rr"} == {"latency_ms"}
    wide = f.pivot(index="t_s", columns="flow", values="value")
    assert list(wide.columns) == [fl["flow"] for fl in fs["flows"]]
    assert tcplab.run("bulk-10m", set={"test.duration": "1s"}).flow_series(0).empty


def test_rtt_samples_long_and_wide_again():
    r = tcplab.run("rdp-loopback", set={"test.duration": "1s", "test.series": "100ms"})
    doc = r.document["points"][0]
    rs = doc["rtt_samples"]
    s = r.rtt_samples(0)
    assert list(s.columns) == ["sample", "t_s", "end", "variable", "value"]
    assert set(s["end"]) == {"sender"}
    names = rs["columns"][1:]
    assert len(s) == len(rs["rows"]) * len(names) > 0
    k = 0
    for n, row in enumerate(rs["rows"]):
        for j, name in enumerate(names, start=1):
            cell = s.iloc[k]
            assert (cell["sample"], cell["t_s"], cell["variable"]) == (n, row[0], name)
            assert _same(row[j], cell["value"])
            k += 1
    wide = s.pivot(index="sample", columns="variable", values="value")
    assert wide["rtt_ms"].tolist() == [row[rs["columns"].index("rtt_ms")] for row in rs["rows"]]
    # One per measurement of the sender, taken or discarded.
    sender = next(c for c in doc["connections"] if c["side"] == "client")["estats"]
    assert len(wide) == sender["RttSamples"] + sender["RttSamplesDiscarded"]
    assert int(wide["taken"].sum()) == sender["RttSamples"]
    assert tcplab.run("bulk-10m", set={"test.duration": "1s"}).rtt_samples(0).empty
