"""The type stubs checked by mypy: stubtest holds them against the package as it runs (every name, signature
and default the same), mypy --strict accepts a program written against them (the stubs themselves, pandas'
and matplotlib's types included) and rejects a wrong call, and a venv with the wheel installed gives mypy
the stubs through `py.typed` (PEP 561), as an editor finds them.

mypy and pandas-stubs come from the suite's venv (.ci/run installs them); without them the tests are
skipped with the reason (a failure under CI=true).
"""

import os
import site
import subprocess
import sys
import textwrap

import pytest

import tcplab
from conftest import require

PACKAGE_ROOT = os.path.dirname(os.path.dirname(tcplab.__file__))
# Where mypy finds the package: the suite's copy (the module beside the sources) through MYPYPATH; an
# installed one (the suite run against a wheel installed in its own venv) as mypy finds any installed
# package, mypy refusing a site-packages directory in MYPYPATH.
MYPYPATH = {} if PACKAGE_ROOT in site.getsitepackages() else {"MYPYPATH": PACKAGE_ROOT}

# A program as a user writes it, every public call with the types the stubs give; it must check under
# --strict (no Any leaking into a declared type, every call's arguments as the stubs take them).
CLIENT = '''
from pathlib import Path
from typing import Dict, List

import pandas
from matplotlib.axes import Axes
from matplotlib.figure import Figure

import tcplab
import tcplab.ray


def tour(out: Path) -> float:
    r: tcplab.Result = tcplab.run("bulk-10m", set={"test.duration": "2s"}, seed=7, jobs=1)
    points: pandas.DataFrame = r.points
    bps = float(points["throughput_bps"].iloc[0])
    frames: List[pandas.DataFrame] = [r.connections(0), r.links(0), r.series(0), r.logvars(0), r.flows()]
    frames += [r.nics(0), r.queue_series(0), r.flow_series(), r.rtt_samples(point=0)]
    r.save(out / "a.json")
    again: tcplab.Result = tcplab.load(out / "a.json")
    text: str = again.json() + again.table()
    n: int = len(again)
    sweep = tcplab.run(
        {"test": {"kind": "tcp_rr", "duration": "1s"}},
        sweep={"test.burst": range(0, 3), "client.tcp.nodelay": [False, True]},
        iterations=(3, 2),
        confidence=(0.99, 0.05),
        executor="local",
        progress=lambda done, total: None,
    )
    plots: List[tcplab.Plot] = sweep.plots()
    charts: List[tcplab.Chart] = sweep.charts()
    lines: List[tcplab.Line] = charts[0].lines
    names: List[str] = sweep.save_plots(out, format="svg") + tcplab.shipped()
    drawn = sweep.plot()
    one = sweep.plot("cwnd")
    ax: Axes = sweep.plot_series("CurCwnd", point=0)
    try:
        tcplab.run("x.toml")
    except tcplab.ScenarioError as e:
        where: str = f"{e.file}:{e.line}: {e.key}: {e.message} ({e.flag})"
    except tcplab.RunError as e:
        why: str = str(e)
    version: str = tcplab.__version__
    return bps + len(frames) + len(text) + n + len(plots) + len(lines) + len(names) + len(str(drawn) + str(one) + str(ax))
'''

# Calls the stubs must reject, with the line of each mypy's message must name.
WRONG = '''
import tcplab

tcplab.run("bulk-10m", sed=7)
tcplab.run("bulk-10m", seed="7")
tcplab.run("bulk-10m", "sim")
x: int = tcplab.run("bulk-10m").points
tcplab.load(7)
'''


def _mypy():
    require("mypy", "pip install mypy pandas-stubs (.ci/run installs them into /opt/tcplab-py)")
    try:
        import importlib.metadata as md

        md.distribution("pandas-stubs")
    except Exception:
        reason = "pandas-stubs is not installed: pip install pandas-stubs (.ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)


def _run(args, cwd, env=None):
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env={**os.environ, **(env or {})}
    )


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One mypy cache for the module's runs: pandas-stubs is analysed once (tens of seconds), not per test."""
    return str(tmp_path_factory.mktemp("mypy_cache"))


def _check(tmp_path, cache, source):
    (tmp_path / "client.py").write_text(textwrap.dedent(source))
    return _run(
        ["-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", cache, "client.py"],
        cwd=tmp_path,
        env=MYPYPATH,
    )


def test_stubtest_finds_the_stubs_true_to_the_package(tmp_path):
    _mypy()
    # The package as the suite imports it (the module beside the sources); stubtest imports it and compares
    # every name, class, method, parameter and default with the stubs.
    # Every module of the package is checked (tcplab, tcplab.ray, and the sources without stubs); the
    # extension module has no stubs of its own (it is private: the package's .py files are its API).
    # pandas' and matplotlib's types are skipped here (Any): stubtest compares the stubs with the package,
    # not with pandas, and analysing pandas-stubs afresh (stubtest keeps no cache) costs half a minute of
    # CPU; the --strict test below checks the stubs with them.
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nfollow_imports_for_stubs = True\n[mypy-tcplab._native]\nignore_missing_imports = True\n"
        "[mypy-pandas.*]\nfollow_imports = skip\n[mypy-matplotlib.*]\nfollow_imports = skip\n"
    )
    p = _run(
        ["-m", "mypy.stubtest", "tcplab", "--mypy-config-file", str(tmp_path / "mypy.ini")],
        cwd=tmp_path,
        env=MYPYPATH,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Success: no issues found" in p.stdout, p.stdout


def test_mypy_strict_accepts_a_program_written_against_the_stubs(tmp_path, cache):
    _mypy()
    p = _check(tmp_path, cache, CLIENT)
    assert p.returncode == 0, p.stdout + p.stderr


def test_mypy_rejects_wrong_calls_by_line(tmp_path, cache):
    _mypy()
    p = _check(tmp_path, cache, WRONG)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = sorted({int(l.split(":")[1]) for l in p.stdout.splitlines() if l.startswith("client.py:")})
    assert lines == [4, 5, 6, 7, 8], p.stdout
    assert 'Unexpected keyword argument "sed"' in p.stdout, p.stdout


def test_the_installed_wheel_gives_mypy_its_stubs(tmp_path):
    # PEP 561: mypy, pointed at the venv the wheel was installed into, finds `tcplab` there through its
    # py.typed marker. That venv has no pandas-stubs nor matplotlib: those imports are left untyped; tcplab's
    # own signatures must still come through.
    _mypy()
    py = os.environ.get("TCPLAB_WHEEL_PYTHON")
    if not py:
        reason = "TCPLAB_WHEEL_PYTHON is not set: the Python of a fresh venv with the wheel installed (.ci/run)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\n[mypy-pandas.*]\nignore_missing_imports = True\n[mypy-matplotlib.*]\nignore_missing_imports = True\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    (tmp_path / "client.py").write_text('import tcplab\nreveal_type(tcplab.load)\ntcplab.run("bulk-10m", sed=7)\n')
    p = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"), "--python-executable", py,
         "--no-error-summary", "--cache-dir", str(tmp_path / ".mypy_cache"), "client.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    # mypy writes the union as `str | os.PathLike[str]` (older ones: `Union[builtins.str, ...]`).
    reveal = [l for l in p.stdout.splitlines() if l.startswith("client.py:2: note: Revealed type is")]
    assert reveal and "def (path: " in reveal[0] and "os.PathLike" in reveal[0], p.stdout
    assert reveal[0].endswith(') -> tcplab.Result"'), p.stdout
    assert 'Unexpected keyword argument "sed" for "run"' in p.stdout, p.stdout
