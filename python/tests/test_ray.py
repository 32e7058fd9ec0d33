"""executor="ray": each point a Ray task on a local 2-CPU cluster; the document byte-identical to a local
run and to the CLI's."""

import sys

import pytest

import tcplab
from conftest import require


@pytest.fixture(scope="module")
def ray_cluster():
    ray = require("ray", 'pip install "ray>=2.0"')
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_classic_scenario_on_ray_is_byte_identical_to_the_cli(ray_cluster, cli, tmp_path):
    name = "classic/dsl-rr-nodelay"
    r = tcplab.run(name, executor="ray")
    r.save(tmp_path / "a.json")
    cli("run", name, "--quiet", "--json", str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert len(r.points) == len(r.document["points"]) > 1


def test_lossy_sweep_with_iterations_on_ray_equals_local(ray_cluster):
    kw = dict(set={"test.duration": "2s"}, sweep={"path.up.loss.p": [0.001, 0.01]}, iterations=2, seed=5)
    seen = []
    on_ray = tcplab.run("lossy-10m", executor="ray", progress=lambda done, total: seen.append((done, total)), **kw)
    local = tcplab.run("lossy-10m", **kw)
    assert on_ray.json() == local.json()
    assert list(on_ray.points["iterations"]) == [2, 2]
    assert seen[-1] == (2, 2)


def test_iterations_are_tasks_and_follow_the_lab_rule(ray_cluster):
    # min 2, max 3: the interval of two lossy runs is not met, so a third iteration is sent on its own.
    kw = dict(set={"test.duration": "1s"}, iterations=(3, 2), seed=3)
    on_ray = tcplab.run("lossy-10m", executor="ray", **kw)
    local = tcplab.run("lossy-10m", **kw)
    assert on_ray.json() == local.json()
    assert list(on_ray.points["iterations"]) == [3]


def test_a_failing_point_is_reported_per_point(ray_cluster):
    # A corrupt task: the worker's error comes back as RunError naming the point.
    class Broken:
        axes = []
        repeat = None

        def __len__(self):
            return 1

        def task(self, i, seed=None):
            return '{"name": "x", "text": "not toml ["}'

    from tcplab import ray as tray

    with pytest.raises(tcplab.RunError, match=r"1 of 1 points failed on Ray:\npoint 0: .*not valid TOML"):
        tray.run_plan(Broken())


def test_without_ray_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'executor="ray" needs Ray: pip install'):
        tcplab.run("bulk-10m", executor="ray")


def test_a_dumbbell_sweep_on_ray_equals_local_with_its_flows(ray_cluster):
    # The shipped bufferbloat sweep (4 qdiscs, a bulk and an rr flow each): flows and aggregate go through
    # the tasks and tcplab merge's join unchanged.
    kw = dict(set={"test.duration": "2s"})
    on_ray = tcplab.run("bufferbloat", executor="ray", **kw)
    local = tcplab.run("bufferbloat", **kw)
    assert on_ray.json() == local.json()
    assert len(on_ray.flows()) == 8 and on_ray.flows().equals(local.flows())
