"""The example of python/examples runs and reproduces the classic experiment's table and plots."""

import os
import runpy

import tcplab

HERE = os.path.dirname(os.path.abspath(__file__))


def test_dsl_rr_nodelay_example(tmp_path, capsys):
    example = runpy.run_path(os.path.join(HERE, "..", "examples", "dsl_rr_nodelay.py"))
    table, svgs, _ = example["main"](str(tmp_path / "out"))
    out = capsys.readouterr().out
    assert list(table.index) == list(range(0, 15))
    assert list(table.columns)[:2] == ["nodelay=False", "nodelay=True"]
    # The figures are the lab's: the same as the document's points.
    doc = tcplab.run("classic/dsl-rr-nodelay").document
    first = doc["points"][0]
    assert first["params"] == {"test.burst": 0, "test.nodelay": False}
    assert table.loc[0, "nodelay=False"] == first["metrics"]["transactions_per_s"]
    assert "transactions/s" in out
    assert svgs and all(os.path.exists(s) for s in svgs)
    assert os.path.join(str(tmp_path / "out"), "tps-burst.svg") in svgs
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    with open(tmp_path / "out" / "tps-burst.png", "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
