from typing import Any, Callable, Optional

from . import Result

def run_plan(plan: Any, seed: Optional[int] = None, progress: Optional[Callable[[int, int], Any]] = None) -> Result: ...
