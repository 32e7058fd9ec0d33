"""Sweeps on a Ray cluster: ``tcplab.run(..., executor="ray")``.

The sweep is planned here, as the CLI plans it (every point validated before anything runs); each point (or,
with repetitions, each iteration of each point) is a Ray task that rebuilds the point from the scenario's
text and its swept values and runs it on the worker; iterations are combined by the lab's rule and the
points' documents joined as ``tcplab merge`` joins shards. The
document is byte-identical to a local run with the same seed.

The cluster is the one ``ray.init`` connected to; without one, a local Ray is started for the call
(``ray.init()``: all cores of this machine). Workers need the ``tcplab`` package installed (the same
version), e.g. ``ray.init(runtime_env={"pip": ["tcplab"]})`` or a cluster image that has it.
"""

from . import _native
from ._native import RunError
from ._result import Result


def _ray():
    why = 'executor="ray" needs Ray: pip install "ray>=2.0" (or pip install "tcplab[ray]"); ' + (
        "executor=\"local\" runs the sweep on this machine's cores"
    )
    try:
        import ray
    except ImportError as e:
        raise ImportError(why) from e
    # A directory named ray/ on the path (Ray's own session directory, /tmp/ray, when Python runs in /tmp)
    # imports as an empty namespace package.
    if not hasattr(ray, "remote"):
        raise ImportError(f"{why} (`import ray` found {list(getattr(ray, '__path__', []))}, not Ray)")
    return ray


# A failed task is retried by Ray: a lost worker, or an exception (a worker out of memory). Runs are
# deterministic, so a retry gives the same document; an error of the lab's fails every try alike and is
# reported with its point.
TASK_OPTIONS = {"max_retries": 2, "retry_exceptions": True}

_remote = None


def _task_function(ray):
    global _remote
    if _remote is None:

        @ray.remote(**TASK_OPTIONS)
        def run_point(task):
            from tcplab import _native as native

            return native.run_task(task)

        _remote = run_point
    return _remote


def run_plan(plan, seed=None, progress=None):
    """Runs every point of ``plan`` (``tcplab._native.Plan``) on Ray and returns the
    :class:`~tcplab.Result` of the whole sweep. Without repetitions each point is a task; with them each
    iteration is, the lab's rule deciding when a point has enough (its first ``min`` iterations at once,
    then one at a time until the interval is met or ``max`` is reached), and the lab's combination making
    the point. ``progress(done, total)`` is called as points finish. Points that fail after Ray's retries
    are reported together in one :class:`~tcplab.RunError`, a line per point with its index and swept
    values, and ``failures`` ``{index: message}``."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init()
    remote = _task_function(ray)
    total = len(plan)
    repeat = plan.repeat
    first = 1 if repeat is None else repeat[0]
    # What each task is: (point, iteration); runs[i] holds point i's one-run documents in iteration order.
    what = {}
    runs = [[None] * first for _ in range(total)]

    def submit(i, k):
        task = plan.task(i, seed) if repeat is None else plan.iteration_task(i, k, seed)
        what[remote.remote(task)] = (i, k)

    for i in range(total):
        for k in range(first):
            submit(i, k)
    docs = [None] * total
    failures = {}
    done = 0
    while what:
        ready, _ = ray.wait(list(what), num_returns=1)
        for ref in ready:
            i, k = what.pop(ref)
            if i in failures:
                continue
            try:
                runs[i][k] = ray.get(ref)
            except Exception as e:  # a task's error (RayTaskError wraps the lab's RunError/ScenarioError)
                failures[i] = getattr(e, "cause", None) or e
                done += 1
                if progress is not None:
                    progress(done, total)
                continue
            if any(r is None for r in runs[i]):
                continue
            if repeat is None:
                docs[i] = runs[i][0]
            elif plan.iterations_done(i, runs[i]):
                docs[i] = plan.combine(i, runs[i])
            else:
                runs[i].append(None)
                submit(i, len(runs[i]) - 1)
                continue
            done += 1
            if progress is not None:
                progress(done, total)
    if failures:
        axes = plan.axes
        lines = [f"point {i}{_params_text(plan, i, axes)}: {failures[i]}" for i in sorted(failures)]
        e = RunError(f"{len(failures)} of {total} points failed on Ray:\n" + "\n".join(lines))
        # Per point, for a program: {index: the error's message}; the points that ran are not kept (a
        # sweep's document has every point or none, as the CLI's).
        e.failures = {i: str(failures[i]) for i in sorted(failures)}
        raise e
    return Result(plan.assemble(docs, seed))


def _params_text(plan, i, axes):
    if not axes:
        return ""
    import json

    task = json.loads(plan.task(i, None))
    swept = task["set"][-len(axes) :]
    return " (" + ", ".join(swept) + ")"
