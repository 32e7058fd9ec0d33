"""executor="ray" without a connected cluster: the call starts a local Ray for itself (`ray.init()`), as #26
asks ("the cluster ray.init connects to, or a local one started for the call"), and the document is still
the local run's. In a process of its own, so that no cluster of the other tests is there to be found."""

import os
import subprocess
import sys

import tcplab
from conftest import require

KW = dict(set={"test.duration": "1s"}, sweep={"test.burst": [0]}, seed=4)

PROGRAM = f"""
import sys, ray, tcplab
assert not ray.is_initialized()
r = tcplab.run("rr-dsl", executor="ray", **{KW!r})
assert ray.is_initialized(), "no Ray started"
sys.stdout.write(r.json())
"""


def test_without_a_cluster_the_call_starts_a_local_one(tmp_path):
    require("ray", 'pip install "ray>=2.0"')
    # No address to connect to: a local instance (all of this machine's cores), about 10 s to start.
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    p = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    assert "Started a local Ray instance" in p.stderr, p.stderr
    assert p.stdout == tcplab.run("rr-dsl", **KW).json()
