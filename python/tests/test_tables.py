"""The long tables against the document they are read from: series, logvars, connections, links and NICs,
cell by cell (#26's `Result.series/logvars/connections/links`), with and without repetitions and sweeps."""

import math
import warnings

import pytest

import tcplab


def _same(a, b):
    return (a is None and (b is None or (isinstance(b, float) and math.isnan(b)))) or a == b


def test_series_is_the_documents_series_long_cell_by_cell():
    r = tcplab.run("bulk-10m", set={"test.duration": "2s", "test.series": "100ms"})
    s = r.series(0)
    doc = r.document["points"][0]["series"]
    cols = doc["columns"]
    assert cols[0] == "t_s" and "CurCwnd" in cols and "SmoothedRTT" in cols
    assert list(s.columns) == ["t_s", "end", "variable", "value"]
    # One row per sample and variable, in the document's order; the end is the first sender.
    assert len(s) == len(doc["rows"]) * (len(cols) - 1) > 0
    assert set(s["end"]) == {"sender"}
    k = 0
    for row in doc["rows"]:
        for j, name in enumerate(cols[1:], start=1):
            assert s["t_s"].iloc[k] == row[0] and s["variable"].iloc[k] == name
            assert _same(row[j], s["value"].iloc[k]), (k, name, row[j], s["value"].iloc[k])
            k += 1
    # Wide again: the pivot gives the document's table back (CurSsthresh null while infinite: NaN).
    wide = s.pivot(index="t_s", columns="variable", values="value")
    assert list(wide.index) == [row[0] for row in doc["rows"]]
    assert list(wide["CurCwnd"]) == [row[cols.index("CurCwnd")] for row in doc["rows"]]
    # logvars are the other form: absent here.
    assert r.logvars(0).empty


def test_logvars_of_every_end_over_a_sweep_point():
    series = {"interval": "200ms", "vars": ["CurCwnd", "SmoothedRTT"]}
    r = tcplab.run("rr-dsl", set={"test.duration": "1s", "test.series": series}, sweep={"path.up.delay": ["15ms", "40ms"]})
    for i in range(2):
        lv = r.logvars(i)
        doc = r.document["points"][i]["logvars"]
        ends = {f"{e['id']}-{e['side']}": e["rows"] for e in doc["ends"]}
        assert set(lv["end"]) == set(ends)
        for end, rows in ends.items():
            mine = lv[lv["end"] == end]
            assert len(mine) == len(rows) * (len(doc["columns"]) - 1)
            assert list(mine[mine["variable"] == "SmoothedRTT"]["value"]) == [
                row[doc["columns"].index("SmoothedRTT")] for row in rows
            ]
    assert not r.logvars(0).equals(r.logvars(1))


def test_connections_and_links_are_the_documents_every_field():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tcplab.TcplabWarning)  # two lossy runs: the interval is not met
        r = tcplab.run("lossy-10m", set={"test.duration": "1s"}, iterations=2, seed=4)
    doc = r.document["points"][0]
    c = r.connections(0)
    assert len(c) == len(doc["connections"])
    for i, conn in enumerate(doc["connections"]):
        row = c.iloc[i]
        assert row["end"] == i and row["side"] == conn["side"]
        for name, value in conn["estats"].items():
            assert _same(value, row[name]), (i, name)
    links = r.links(0).set_index("direction")
    for d in doc["links"]["directions"]:
        for name, value in d["counters"].items():
            assert links.loc[d["direction"], name] == value, (d["direction"], name)
    nics = r.nics(0).set_index("host")
    for host in ("client", "server"):
        for name, value in doc["links"][f"nic_{host}"].items():
            assert nics.loc[host, name] == value, (host, name)
    for table in (r.links, r.nics, r.queue_series, r.flow_series, r.rtt_samples):
        with pytest.raises(IndexError):
            table(1)
