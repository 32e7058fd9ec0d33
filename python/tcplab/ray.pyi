"""Type stubs of tcplab.ray: sweeps on a Ray cluster (``tcplab.run(..., executor="ray")``)."""

from typing import Any, Callable, Dict, Optional

from . import Result

TASK_OPTIONS: Dict[str, Any]
"""The options of every task (``ray.remote(**TASK_OPTIONS)``): a task that raises or whose worker is lost
is tried twice more (``max_retries=2``, ``retry_exceptions=True``)."""

def run_plan(plan: Any, seed: Optional[int] = None, progress: Optional[Callable[[int, int], Any]] = None) -> Result:
    """Runs every point of ``plan`` (a ``tcplab._native.Plan``) as Ray tasks (each iteration a task with
    repetitions) and returns the :class:`~tcplab.Result` of the whole sweep, joined as ``tcplab merge``
    joins shards: byte-identical to a local run with the same seed. ``progress(done, total)`` as points
    finish. Points that fail after Ray's retries are reported together in one :class:`~tcplab.RunError`."""
