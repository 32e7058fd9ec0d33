"""`tcplab.run`: a scenario (name, path, TOML text or dict) with its overrides, sweep and repetitions,
planned and validated by the lab, run here on threads or point by point on a Ray cluster."""

import json
import os
import re
import warnings

from . import _native
from ._native import ScenarioError
from ._result import Result


def _input_error(message):
    """A ScenarioError raised here, with the attributes the lab's carry (no file, line, key or flag)."""
    e = ScenarioError(message)
    e.file = e.line = e.flag = None
    e.key = ""
    e.message = message
    return e


# Why the Linux backend does not run on Ray: it runs kernel TCP in network namespaces of the machine that
# runs it, as root, one point at a time so that its timings are the host's alone (sweep::run_plan_on runs
# it with one job). A Ray worker is not known to be root, and shares its machine with other tasks; running
# the points on the driver instead would be executor="local" under another name.
RAY_LINUX = (
    'executor "ray" with backend "linux": refused: the Linux backend runs kernel TCP in network namespaces '
    "of the machine that runs it, as root, one point at a time (its timings are the host's), and a Ray "
    'worker is neither known to be root nor alone on its machine; accepted: backend "sim" on Ray, or '
    'executor "local" for backend "linux"'
)


class TcplabWarning(UserWarning):
    """A warning of the lab: a validation warning (``file:line: key: ...``) or an unmet confidence interval."""


def _toml_value(value):
    """A Python value as a TOML value (the VALUE of ``--set PATH=VALUE``): ``"10mbit"`` becomes
    ``"\\"10mbit\\""``, ``{"model": "bernoulli", "p": 0.01}`` an inline table."""
    return _native.json_to_toml(json.dumps(value), False)


def _set_flags(set):
    """``set`` as ``--set`` flags: a dict ``{path: value}`` (values as Python values) or ``PATH=VALUE``
    strings (values as TOML text, as on the command line)."""
    if set is None:
        return []
    if isinstance(set, dict):
        return [f"{k}={_toml_value(v)}" for k, v in set.items()]
    if isinstance(set, str):
        return [set]
    return [str(s) for s in set]


def _sweep_flags(sweep):
    """``sweep`` as ``--sweep`` flags: a dict ``{path: values}`` (a list of Python values, a ``range``, or a
    range written ``"0..=14"``) or ``PATH=VALUES`` strings."""
    if sweep is None:
        return []
    if isinstance(sweep, dict):
        flags = []
        for k, v in sweep.items():
            if isinstance(v, str):
                flags.append(f"{k}={v}")
            else:
                flags.append(f"{k}={_toml_value(list(v))}")
        return flags
    if isinstance(sweep, str):
        return [sweep]
    return [str(s) for s in sweep]


def _iterations_flag(iterations):
    if iterations is None:
        return None
    if isinstance(iterations, (tuple, list)):
        return ",".join(str(int(x)) for x in iterations)
    return str(iterations)


def _confidence_flag(confidence):
    if confidence is None:
        return None
    if isinstance(confidence, (tuple, list)):
        return ",".join(str(x) for x in confidence)
    return str(confidence)


def _source(scenario):
    """(name, text) of a scenario given as a dict, a path, a shipped name or TOML text."""
    if isinstance(scenario, dict):
        return "<dict>", _native.json_to_toml(json.dumps(scenario), True)
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if not isinstance(scenario, str):
        raise TypeError(f"scenario: {type(scenario).__name__}: accepted a shipped name, a path, TOML text or a dict")
    return _native.resolve(scenario)


def _plan(scenario, set, sweep, iterations, confidence, backend):
    name, text = _source(scenario)
    plan = _native.plan(
        name,
        text,
        _set_flags(set),
        _sweep_flags(sweep),
        _iterations_flag(iterations),
        _confidence_flag(confidence),
        backend,
    )
    for w in plan.warnings:
        if name == "<dict>":
            # The lines of the TOML a dict was written as, which the caller never saw: the key alone.
            w = re.sub(r"^<dict>:\d+: ", "<dict>: ", w)
        warnings.warn(w, TcplabWarning, stacklevel=3)
    return plan


def run(
    scenario,
    *,
    set=None,
    seed=None,
    sweep=None,
    iterations=None,
    confidence=None,
    jobs=None,
    backend="sim",
    executor="local",
    force=False,
    progress=None,
):
    """Runs a scenario and returns its :class:`Result`.

    scenario: a shipped scenario's name (``"bulk-10m"``, ``tcplab.shipped()``), a path to a TOML file, TOML
        text, or a dict of the scenario's tables (written as TOML).
    set: overrides, as ``--set``: ``{"path.up.rate": "1gbit", "client.tcp.nodelay": True}`` (Python
        values), or a list of ``"PATH=VALUE"`` strings (TOML values, as on the command line).
    seed: the run's seed (default: the scenario's ``seed``).
    sweep: axes, as ``--sweep``: ``{"test.burst": range(0, 15), "client.tcp.nodelay": [False, True]}``, a
        range as text (``{"test.burst": "0..=14"}``), or ``"PATH=VALUES"`` strings. Added to the file's
        ``[sweep]``; an axis on a path the file sweeps replaces it.
    iterations: repetitions per point, as ``--iterations``: ``10`` or ``(10, 3)`` (max, min) or ``"10,3"``.
    confidence: the interval to reach, as ``--confidence``: ``(0.99, 0.05)`` or ``"99%,5%"``.
    jobs: worker threads (default: one per core).
    backend: ``"sim"`` (the simulator) or ``"linux"`` (kernel TCP in network namespaces; root needed).
    executor: ``"local"`` (threads in this process) or ``"ray"`` (each point a Ray task on the cluster
        ``ray.init`` connected to, or a local one started for the call); the document is the same bytes.
        ``"ray"`` runs the simulator only: with ``backend="linux"`` it raises :class:`ScenarioError`.
    force: run even when the estimate is over the lab's budget (2 GiB, 1 hour), as ``--force``.
    progress: ``progress(done, total)`` called as points finish; ``True`` prints a line per point to
        stderr.

    Raises :class:`ScenarioError` for bad input (the CLI's message: file, line, key, accepted values) and
    :class:`RunError` for a run that failed. The GIL is released while the simulation runs.
    """
    if executor not in ("local", "ray"):
        raise _input_error(f'executor {executor!r}: accepted: "local", "ray"')
    if seed is not None and (not isinstance(seed, int) or seed < 0 or seed >= 1 << 64):
        raise _input_error(f"seed {seed!r}: accepted an integer from 0 to 2^64 - 1")
    if jobs is not None and (not isinstance(jobs, int) or jobs < 0):
        raise _input_error(f"jobs {jobs!r}: accepted an integer >= 0 (0: one per core)")
    if executor == "ray" and backend == "linux":
        raise _input_error(RAY_LINUX)
    plan = _plan(scenario, set, sweep, iterations, confidence, backend)
    plan.check_budget(jobs or 0, bool(force))
    if progress is True:
        progress = _print_progress
    if executor == "ray":
        from . import ray as _ray

        result = _ray.run_plan(plan, seed=seed, progress=progress)
        for w in result._native.unmet_warnings():
            warnings.warn(w, TcplabWarning, stacklevel=2)
        return result
    native, unmet = plan.run(seed, jobs or 0, progress)
    for w in unmet:
        warnings.warn(w, TcplabWarning, stacklevel=2)
    return Result(native)


def _print_progress(done, total):
    import sys

    print(f"tcplab: {done}/{total} points done", file=sys.stderr, flush=True)
