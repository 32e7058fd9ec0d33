"""The wheel as a user gets it: built by maturin (`.ci/run`), installed into a fresh venv, imported there.

The rest of the suite imports the extension module this very build made, beside the package's sources
(pytest.rs). This test checks what those cannot: that the wheel carries the package (its Python sources,
the abi3 module, the type stubs and `py.typed`), is tagged abi3 for CPython 3.9 and later, installs with its
dependencies into a venv that has nothing else, and runs there with the same figures and bytes.
TCPLAB_WHEEL_PYTHON names that venv's Python; TCPLAB_ROOT_PYTHON names a venv into which `pip install .`
at the repository's root installed the package (the root pyproject.toml). Without them the tests are
skipped (a failure under CI=true).
"""

import json
import os
import subprocess
import sys

import pytest

import tcplab

PROBE = r"""
import importlib.metadata as md, json, os, sys, tcplab, tcplab._native as native
r = tcplab.run("rr-dsl", set={"test.duration": "1s"}, seed=7)
r.save(sys.argv[1])
d = md.distribution("tcplab")
print(json.dumps({
    "prefix": sys.prefix,
    "package": os.path.dirname(tcplab.__file__),
    "native": native.__file__,
    "version": tcplab.__version__,
    "files": sorted(os.listdir(os.path.dirname(tcplab.__file__))),
    "wheel": d.read_text("WHEEL"),
    "requires": d.requires,
    "bps": tcplab.run("bulk-10m").points["throughput_bps"][0],
}))
"""


# The venvs .ci/run makes: the wheel built from python/ and repaired by auditwheel (its manylinux tag), and
# `pip install .` from the repository's root (the user's command, built by pip through the root
# pyproject.toml).
INSTALLS = {
    "wheel": (
        "TCPLAB_WHEEL_PYTHON",
        "the Python of a fresh venv with the built wheel installed (.ci/run makes one: pip wheel ./python, "
        "auditwheel repair, pip install the wheel)",
    ),
    "root": (
        "TCPLAB_ROOT_PYTHON",
        "the Python of a fresh venv into which `pip install .` installed the package from the repository's "
        "root (.ci/run makes one)",
    ),
}


@pytest.fixture(params=sorted(INSTALLS))
def install(request):
    var, what = INSTALLS[request.param]
    py = os.environ.get(var)
    if not py:
        reason = f"{var} is not set: {what}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)
    return request.param, py


def test_the_installed_wheel_imports_and_runs_as_the_build(install, tmp_path):
    kind, wheel_python = install
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # Run from an empty directory: nothing named tcplab may shadow the installed package.
    p = subprocess.run(
        [wheel_python, "-c", PROBE, str(tmp_path / "wheel.json")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    # Installed in that venv, not imported from the source tree or the suite's copy.
    assert got["package"].startswith(got["prefix"]) and "site-packages" in got["package"], got
    assert got["prefix"] != sys.prefix
    # The abi3 module, the stubs an editor completes from, and the marker that says the package is typed.
    assert os.path.basename(got["native"]) == "_native.abi3.so", got["native"]
    for f in ["__init__.py", "__init__.pyi", "_result.py", "_run.py", "_plot.py", "ray.py", "ray.pyi", "py.typed"]:
        assert f in got["files"], (f, got["files"])
    # One wheel for every CPython from 3.9.
    tags = [line.split(": ", 1)[1] for line in got["wheel"].splitlines() if line.startswith("Tag: ")]
    assert tags and all(t.startswith("cp39-abi3-") for t in tags), got["wheel"]
    # For every Linux of the manylinux policy the tag names (the wheel .ci/run builds with zig against glibc
    # 2.17: `manylinux2014_x86_64`, PEP 599's name, beside PEP 600's `manylinux_2_17_x86_64`; one repaired by
    # auditwheel: `manylinux_2_*`); a build from source is for this machine, tagged linux or manylinux.
    if kind == "wheel":
        assert all(t.split("-")[2].startswith(("manylinux_", "manylinux2014_")) for t in tags), tags
    assert any(r.startswith("pandas") for r in got["requires"]), got["requires"]
    assert got["version"] == tcplab.__version__
    # The same lab: the same figure and the same bytes as the build the rest of the suite tests.
    assert got["bps"] == tcplab.run("bulk-10m").points["throughput_bps"][0]
    tcplab.run("rr-dsl", set={"test.duration": "1s"}, seed=7).save(tmp_path / "here.json")
    assert (tmp_path / "wheel.json").read_bytes() == (tmp_path / "here.json").read_bytes()


def test_the_issues_one_liner_prints_the_clis_row(cli, tmp_path):
    # From the README's install (`pip install .` at the root): the command #26 asks for, as a user types
    # it, prints the row of the CLI's table: bulk-10m's 9.35 (10^6 bit/s).
    py = os.environ.get("TCPLAB_ROOT_PYTHON")
    if not py:
        reason = f"TCPLAB_ROOT_PYTHON is not set: {INSTALLS['root'][1]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    p = subprocess.run(
        [py, "-c", "import tcplab; print(tcplab.run('bulk-10m').points)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    header, row = p.stdout.strip().splitlines()
    cells = dict(zip(header.split(), row.split()[1:]))  # the row's first cell is the index, 0
    table = cli("run", "bulk-10m").stdout.strip().splitlines()
    # The CLI's row: ... Elapsed Time, Throughput (10^6bits/sec), Retrans; the frame's throughput_bps in
    # bit/s (pandas prints 9.352149e+06), elapsed_s, retransmissions.
    *_, elapsed, mbps, retrans = table[-1].split()
    assert mbps == "9.35", table
    assert f"{float(cells['throughput_bps']) / 1e6:.2f}" == mbps, p.stdout
    assert float(cells["elapsed_s"]) == float(elapsed) and cells["retransmissions"] == retrans, p.stdout
