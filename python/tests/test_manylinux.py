"""The wheel to hand out runs on every Linux with glibc 2.17 or later (manylinux2014, PEP 599): built by
`maturin build --zig --compatibility manylinux2014` (.ci/run; docs/python.md § Install), which links the
module against zig's glibc 2.17 stubs. Checked here on the wheel file itself: its name and its WHEEL
metadata carry the tag, every glibc symbol version the module asks for is 2.17 or older, and auditwheel,
which knows the policy (the libraries a manylinux wheel may link and their symbol versions), agrees.
The wheel is TCPLAB_MANYLINUX_WHEEL, else the newest `tcplab-*-manylinux2014_*.whl` in target/wheels/
(where docs/python.md's command writes it). Without one the tests are skipped, under CI=true too: CI does
not build it (the zig build shares nothing with `pip install .`'s, cargo compiles the lab a second time:
2.9 min of CPU, docs/python.md § Figures), and builds and tests the auditwheel-repaired wheel instead."""

import glob
import os
import re
import subprocess
import sys
import zipfile

import pytest

from conftest import require

TAG = "cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64"
GLIBC_MAX = (2, 17)


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def wheel():
    path = os.environ.get("TCPLAB_MANYLINUX_WHEEL")
    if path:
        assert os.path.isfile(path), f"TCPLAB_MANYLINUX_WHEEL={path!r}: no such file"
        return path
    built = glob.glob(os.path.join(ROOT, "target", "wheels", "tcplab-*-manylinux2014_*.whl"))
    if not built:
        pytest.skip(
            "no manylinux2014 wheel built: `maturin build --zig --compatibility manylinux2014 --out "
            "target/wheels` (docs/python.md § Install), or name one in TCPLAB_MANYLINUX_WHEEL"
        )
    return max(built, key=os.path.getmtime)


def test_the_wheel_is_tagged_manylinux2014_abi3(wheel):
    name = os.path.basename(wheel)
    assert name == f"tcplab-{_version(wheel)}-{TAG}.whl", name
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(f"tcplab-{_version(wheel)}.dist-info/WHEEL").decode()
    tags = [line.split(": ", 1)[1] for line in meta.splitlines() if line.startswith("Tag: ")]
    assert tags == ["cp39-abi3-manylinux2014_x86_64", "cp39-abi3-manylinux_2_17_x86_64"], meta


def test_the_module_asks_for_no_glibc_newer_than_2_17(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as z:
        so = z.read("tcplab/_native.abi3.so")
    assert so[:4] == b"\x7fELF"
    # The version names the module needs are strings of its dynamic string table (.dynstr), the names
    # `objdump -T` prints; a symbol of a newer glibc (memcpy@GLIBC_2.14 is fine, a GLIBC_2.34 one is not)
    # would add its version's name.
    names = re.finditer(rb"GLIBC_(\d+)\.(\d+)(?:\.(\d+))?", so)
    versions = sorted({tuple(int(x) for x in m.groups() if x) for m in names})
    assert versions, "no GLIBC_ version names: not a module linked against glibc"
    assert max(versions) <= GLIBC_MAX, [".".join(map(str, v)) for v in versions]
    # The same from binutils, where it is installed.
    (tmp_path / "_native.abi3.so").write_bytes(so)
    try:
        dump = subprocess.run(["objdump", "-T", str(tmp_path / "_native.abi3.so")], capture_output=True)
    except FileNotFoundError:
        return
    assert dump.returncode == 0, dump.stderr
    seen = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([\d.]+)", dump.stdout.decode())}
    assert seen and max(seen) <= GLIBC_MAX, sorted(seen)


def test_auditwheel_finds_the_wheel_consistent_with_manylinux_2_17(wheel):
    require("auditwheel", "pip install auditwheel (.ci/run installs it into /opt/tcplab-py)")
    p = subprocess.run([sys.executable, "-m", "auditwheel", "show", wheel], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    text = " ".join(p.stdout.split())
    assert 'is consistent with the following platform tag: "manylinux_2_17_x86_64"' in text, p.stdout
    # Nothing to graft: the module links only the system libraries the policy allows (libc, libm, libdl,
    # libpthread); auditwheel lists any other under "The following external shared libraries are required".
    assert "external shared libraries are required" not in text, p.stdout


def _version(wheel):
    return os.path.basename(wheel).split("-")[1]
