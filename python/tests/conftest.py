"""Fixtures of the tcplab Python suite. Run by `cargo test --workspace` (python/tests/pytest.rs), which puts
the freshly built extension on the path and names the CLI built beside it in TCPLAB_BIN."""

import os
import subprocess

import pytest


def _ci():
    return os.environ.get("CI") == "true"


@pytest.fixture(scope="session")
def cli():
    """Runs the `tcplab` command (TCPLAB_BIN); skipped where it is not built (a failure under CI=true)."""
    exe = os.environ.get("TCPLAB_BIN")
    if not exe or not os.path.exists(exe):
        reason = f"the tcplab binary is not built (TCPLAB_BIN={exe!r}); cargo build -p tcplab-cli"
        if _ci():
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)

    def run(*args):
        p = subprocess.run([exe, *args], capture_output=True, text=True)
        assert p.returncode == 0, f"tcplab {' '.join(args)}: exit {p.returncode}: {p.stderr}"
        return p

    return run


def require(module, install):
    """Imports `module`, or skips the test with the reason (a failure under CI=true)."""
    try:
        m = __import__(module)
        # A directory of that name on the path imports as an empty namespace package (no __file__).
        if getattr(m, "__file__", None) is None:
            raise ImportError(module)
        return m
    except ImportError:
        reason = f"{module} is not installed: {install}"
        if _ci():
            pytest.fail(f"CI=true and this test cannot run: {reason}")
        pytest.skip(reason)
