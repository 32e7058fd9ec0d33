"""Type stubs of the tcplab package (docs/python.md)."""

import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas

__version__: str

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
Overrides = Union[Mapping[str, Any], Sequence[str], str]
Axes = Union[Mapping[str, Union[Iterable[Any], str]], Sequence[str], str]

class ScenarioError(ValueError):
    """Bad input; the message is the CLI's (``file:line: key: ...; accepted: ...``)."""

    file: Optional[str]
    line: Optional[int]
    key: str
    flag: Optional[str]
    message: str

class RunError(RuntimeError):
    """A run that failed; the message is the CLI's."""

class TcplabWarning(UserWarning): ...

class Plot:
    name: str
    title: str
    svg: str
    def save(self, path: Union[str, "os.PathLike[str]"]) -> None: ...

class Result:
    @property
    def points(self) -> pandas.DataFrame:
        """One row per point: swept values, ``iterations``, every metric flattened (``latency_us.p99``)."""
    def connections(self, point: int = 0) -> pandas.DataFrame:
        """RFC 4898 statistics per connection end of point ``point``."""
    def series(self, point: int = 0) -> pandas.DataFrame:
        """``series`` in long form: ``t_s``, ``end``, ``variable``, ``value``."""
    def logvars(self, point: int = 0) -> pandas.DataFrame:
        """``logvars`` in long form: ``t_s``, ``end`` (``ID-SIDE``), ``variable``, ``value``."""
    def links(self, point: int = 0) -> pandas.DataFrame:
        """Link directions and NIC queues of point ``point`` with their counters."""
    @property
    def document(self) -> Dict[str, Any]:
        """The result document (schema tcplab.result/1) as dicts and lists."""
    def json(self) -> str:
        """The document as ``tcplab run --json`` writes it."""
    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the document, byte-identical to ``tcplab run ... --json path``."""
    def table(self) -> str:
        """The netperf-style table ``tcplab run`` prints."""
    def plots(self) -> List[Plot]: ...
    def plot(self, directory: Union[str, "os.PathLike[str]", None] = None) -> Union[List[Plot], List[str]]:
        """The SVG plots of ``--plot``; written into ``directory`` when given (returns the paths)."""
    def plot_series(self, variable: str, point: int = 0, ax: Any = None) -> Any:
        """``variable`` over time per connection end, drawn with matplotlib; returns the axes."""
    def __len__(self) -> int: ...

def run(
    scenario: Scenario,
    *,
    set: Optional[Overrides] = None,
    seed: Optional[int] = None,
    sweep: Optional[Axes] = None,
    iterations: Union[int, Tuple[int, int], str, None] = None,
    confidence: Union[Tuple[float, float], str, None] = None,
    jobs: Optional[int] = None,
    backend: str = "sim",
    executor: str = "local",
    force: bool = False,
    progress: Union[Callable[[int, int], Any], bool, None] = None,
) -> Result:
    """Runs a scenario (shipped name, path, TOML text or dict) and returns its :class:`Result`."""

def load(path: Union[str, "os.PathLike[str]"]) -> Result:
    """Reads a saved result document (``tcplab run --json``)."""

def shipped() -> List[str]:
    """The names of the shipped scenarios."""
