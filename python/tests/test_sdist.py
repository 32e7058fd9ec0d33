"""The source distribution (`maturin sdist`, which `python -m build --sdist` calls through the root
pyproject.toml): maturin packs each crate the extension depends on as `cargo package` lists it, which leaves
out files a crate compiles in from outside its own directory (`include_str!("../../../scenarios/...")`).
Such a file missing from the sdist breaks `pip install tcplab-*.tar.gz` only at its compile, minutes in, on
the user's machine; here every `include_str!`/`include_bytes!` of the code the extension compiles is found
in the sdist beside the file that includes it. Packing takes seconds and compiles nothing; the full build
of the sdist in a fresh venv is measured by hand (docs/python.md § The source distribution).

Needs maturin in the suite's venv (.ci/run installs it); skipped without (a failure under CI=true)."""

import os
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INCLUDE = re.compile(r'include_(?:str|bytes)!\(\s*"([^"]+)"\s*\)')


def _maturin():
    exe = shutil.which("maturin", path=os.path.dirname(sys.executable)) or shutil.which("maturin")
    if not exe:
        reason = "maturin is not installed: pip install maturin (.ci/run installs it into /opt/tcplab-py)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)
    return exe


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    out = tmp_path_factory.mktemp("sdist")
    p = subprocess.run(
        [_maturin(), "sdist", "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    (path,) = out.glob("tcplab-*.tar.gz")
    with tarfile.open(path) as t:
        names = t.getnames()
        texts = {
            n: t.extractfile(n).read().decode("utf-8", "replace")
            for n in names
            if n.endswith(".rs") and t.getmember(n).isfile()
        }
        pkg_info = t.extractfile(f"{names[0].split('/')[0]}/PKG-INFO").read().decode()
    return set(names), texts, pkg_info


def _compiled(path):
    """A source file a build of the extension compiles: a crate's src/ or build.rs, not its tests."""
    parts = path.split("/")[1:]
    return not any(p in ("tests", "benches", "examples") for p in parts)


def test_every_file_the_extension_compiles_in_is_in_the_sdist(sdist):
    names, texts, _ = sdist
    compiled = {n: t for n, t in texts.items() if _compiled(n)}
    assert any(n.endswith("/python/src/lib.rs") for n in compiled), sorted(compiled)[:5]
    includes = 0
    missing = []
    for name, text in compiled.items():
        for rel in INCLUDE.findall(text):
            includes += 1
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), rel))
            if target not in names:
                missing.append(f"{name}: include of {rel} ({target})")
    assert not missing, "not in the sdist (add it to [tool.maturin] include in pyproject.toml):\n" + "\n".join(missing)
    # The shipped scenarios and the result's schema are among them: the check saw what it is for.
    assert includes >= 20, includes
    top = next(iter(names)).split("/")[0]
    assert f"{top}/scenarios/bulk-10m.toml" in names and f"{top}/docs/result.schema.json" in names


def test_the_sdist_builds_the_package_the_root_pyproject_describes(sdist):
    names, _, pkg_info = sdist
    top = next(iter(names)).split("/")[0]
    for f in ("pyproject.toml", "Cargo.toml", "Cargo.lock", "python/Cargo.toml", "python/tcplab/__init__.pyi",
              "python/tcplab/py.typed"):
        assert f"{top}/{f}" in names, f
    assert "Name: tcplab" in pkg_info and "Requires-Python: >=3.9" in pkg_info
    assert "Requires-Dist: pandas>=1.3" in pkg_info
