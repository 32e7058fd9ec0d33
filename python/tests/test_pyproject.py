"""The two ways in: `pip install .` at the repository's root (pyproject.toml there) and `pip install ./python`
(python/pyproject.toml) must build the same package from the same crate. The root file repeats the package's
metadata (pip reads the [project] table of the directory it is given), so this test holds the two together:
a dependency or an extra added to one only fails here."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
ROOT = os.path.dirname(PYTHON_DIR)


def _read(path):
    if sys.version_info < (3, 11):
        pytest.skip("tomllib needs Python 3.11 (the suite's venv has it)")
    import tomllib

    with open(path, "rb") as f:
        return tomllib.load(f)


def test_root_and_python_pyproject_build_the_same_package():
    root = _read(os.path.join(ROOT, "pyproject.toml"))
    sub = _read(os.path.join(PYTHON_DIR, "pyproject.toml"))
    assert root["build-system"] == sub["build-system"]
    assert root["build-system"]["build-backend"] == "maturin"
    assert root["project"] == sub["project"]
    # The same maturin settings; only the paths differ, and they name the same crate and sources. The root's
    # `include` puts the files the crates compile in from outside their directories into the sdist
    # (test_sdist.py); maturin refuses `..` in a pattern, so python/'s sdist cannot have them: sdists are
    # built at the root.
    paths = {"manifest-path", "python-source", "include"}
    assert "include" not in sub["tool"]["maturin"]
    assert {"path": "scenarios/**/*.toml", "format": "sdist"} in root["tool"]["maturin"]["include"]
    r, s = root["tool"]["maturin"], sub["tool"]["maturin"]
    assert {k: v for k, v in r.items() if k not in paths} == {k: v for k, v in s.items() if k not in paths}
    crate = os.path.join(ROOT, r["manifest-path"])
    assert os.path.samefile(crate, os.path.join(PYTHON_DIR, s.get("manifest-path", "Cargo.toml")))
    assert os.path.samefile(os.path.join(ROOT, r["python-source"]), os.path.join(PYTHON_DIR, s["python-source"]))
    for pkg in r["python-packages"]:
        assert os.path.isfile(os.path.join(ROOT, r["python-source"], pkg, "__init__.py")), pkg


def test_the_root_pyproject_leaves_the_cargo_workspace_alone():
    # Cargo reads Cargo.toml only; the crate maturin builds is a member of the workspace, so a `cargo build`
    # and the wheel's build share one target directory and one Cargo.lock.
    cargo = _read(os.path.join(ROOT, "Cargo.toml"))
    assert "python" in cargo["workspace"]["members"]
    assert "wheel" in cargo["profile"], "the `wheel` profile that [tool.maturin] names"
    assert _read(os.path.join(ROOT, "pyproject.toml"))["tool"]["maturin"]["profile"] == "wheel"
