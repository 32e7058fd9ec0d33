"""executor="ray": each point a Ray task on a local 2-CPU cluster; the document byte-identical to a local
run and to the CLI's."""

import os
import sys
import warnings

import pytest

import tcplab
from conftest import require

# A short request/response run of the shipped rr-dsl.
SHORT_RR = {"test.duration": "1s"}


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


def test_lossy_sweep_with_iterations_on_ray_equals_local_and_the_cli(ray_cluster, cli, tmp_path):
    kw = dict(set={"test.duration": "2s"}, sweep={"path.up.loss.p": [0.001, 0.01]}, iterations=2, seed=5)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tcplab.TcplabWarning)  # two lossy runs do not meet the interval
        on_ray = tcplab.run("lossy-10m", executor="ray", progress=lambda done, total: seen.append((done, total)), **kw)
        local = tcplab.run("lossy-10m", **kw)
    assert on_ray.json() == local.json()
    # And a serial run of the CLI, byte for byte.
    cli("run", "lossy-10m", "--set", 'test.duration="2s"', "--sweep", "path.up.loss.p=0.001,0.01",
        "--iterations", "2", "--seed", "5", "--jobs", "1", "--quiet", "--json", str(tmp_path / "cli.json"))
    on_ray.save(tmp_path / "ray.json")
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
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


def _flaky_remote(ray, marks, fail):
    """A task function with the package's Ray options (tcplab.ray.TASK_OPTIONS) that runs the lab's task as
    tcplab.ray's does, but raises on a point's first try (`fail` None) or on every try of point `fail`
    (by its swept value): a worker's transient failure, or a point that cannot run."""
    from tcplab import ray as tray

    @ray.remote(**tray.TASK_OPTIONS)
    def flaky(task):
        import hashlib
        import json
        import os

        from tcplab import _native as native

        t = json.loads(task)
        if fail is not None and fail in t["set"]:
            raise RuntimeError(f"no such luck: {fail}")
        mark = os.path.join(marks, hashlib.sha256(task.encode()).hexdigest())
        os.makedirs(marks, exist_ok=True)
        with open(mark, "a") as f:
            f.write("try\n")
        with open(mark) as f:
            if f.read().count("try") == 1:
                raise RuntimeError("a transient failure")
        return native.run_task(task)

    return flaky


def test_a_task_that_fails_once_is_retried_and_the_document_unchanged(ray_cluster, tmp_path, monkeypatch):
    from tcplab import ray as tray

    # The options the package's own task function carries.
    opts = tray._task_function(ray_cluster)._default_options
    assert opts["max_retries"] == 2 and opts["retry_exceptions"] is True, opts
    # rr-dsl sweeps client.tcp.nodelay over [false, true]: with 3 bursts, 6 points.
    kw = dict(set=SHORT_RR, sweep={"test.burst": [0, 1, 2]}, seed=11)
    monkeypatch.setattr(tray, "_remote", _flaky_remote(ray_cluster, str(tmp_path / "marks"), None))
    seen = []
    on_ray = tcplab.run("rr-dsl", executor="ray", progress=lambda d, t: seen.append((d, t)), **kw)
    monkeypatch.setattr(tray, "_remote", None)
    # Every point failed its first try and ran on its second.
    tries = sorted((tmp_path / "marks" / m).read_text().count("try") for m in os.listdir(tmp_path / "marks"))
    assert tries == [2] * 6, tries
    assert on_ray.json() == tcplab.run("rr-dsl", **kw).json()
    assert sorted(seen) == [(k, 6) for k in range(1, 7)]


def test_a_point_that_fails_every_try_is_reported_by_index_and_swept_value(ray_cluster, tmp_path, monkeypatch):
    from tcplab import ray as tray

    monkeypatch.setattr(tray, "_remote", _flaky_remote(ray_cluster, str(tmp_path / "marks"), "test.burst=1"))
    seen = []
    with pytest.raises(tcplab.RunError) as e:
        tcplab.run("rr-dsl", executor="ray", set=SHORT_RR, sweep={"test.burst": [0, 1, 2]},
                   progress=lambda d, t: seen.append((d, t)))
    monkeypatch.setattr(tray, "_remote", None)
    msg = str(e.value)
    # Both points of burst 1 (rr-dsl's own nodelay axis is the second), each on its line with its values.
    assert msg == (
        "2 of 6 points failed on Ray:\n"
        "point 2 (test.burst=1, client.tcp.nodelay=false): no such luck: test.burst=1\n"
        "point 3 (test.burst=1, client.tcp.nodelay=true): no such luck: test.burst=1"
    ), msg
    assert e.value.failures == {2: "no such luck: test.burst=1", 3: "no such luck: test.burst=1"}
    # Progress went on through the failures: every point was accounted for.
    assert sorted(seen) == [(k, 6) for k in range(1, 7)]
    # And the interpreter is fine: the next run works.
    assert len(tcplab.run("rr-dsl", executor="ray", set=SHORT_RR, sweep={"test.burst": [0]}).points) == 2
    assert tcplab.RunError("x").failures is None


def test_an_unmet_interval_warns_on_ray_as_locally(ray_cluster):
    # 99% within 0.1% is out of reach of two lossy runs: each point warns, with the local run's words.
    kw = dict(set={"test.duration": "1s"}, sweep={"path.up.loss.p": [0.01, 0.02]}, iterations=2,
              confidence=(0.99, 0.001), seed=3)
    with warnings.catch_warnings(record=True) as on_ray:
        warnings.simplefilter("always")
        tcplab.run("lossy-10m", executor="ray", **kw)
    with warnings.catch_warnings(record=True) as local:
        warnings.simplefilter("always")
        tcplab.run("lossy-10m", **kw)
    def unmet(caught):
        return [str(w.message) for w in caught if issubclass(w.category, tcplab.TcplabWarning)
                and "confidence interval" in str(w.message)]

    assert len(unmet(local)) == 2, unmet(local)
    assert unmet(on_ray) == unmet(local)
