"""Type stubs of the tcplab package (docs/python.md): every public call, with its docstring."""

import os
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__version__: str
__all__ = [
    "run",
    "load",
    "Result",
    "Plot",
    "Chart",
    "Line",
    "ScenarioError",
    "RunError",
    "TcplabWarning",
    "shipped",
    "__version__",
]

# Aliases of the stubs alone (private: the package has no such names at run time, which stubtest checks).
_Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
_Overrides = Union[Mapping[str, Any], Sequence[str], str]
_Sweep = Union[Mapping[str, Union[Iterable[Any], str]], Sequence[str], str]
_PathLike = Union[str, "os.PathLike[str]"]

class ScenarioError(ValueError):
    """Bad input: a scenario key or value, a ``set``/``sweep`` value, an option, a run over the lab's
    budget, a saved document that does not fit. The message is the CLI's (``file:line: key: what is wrong;
    accepted: ...``); the attributes hold its parts."""

    file: Optional[str]
    """The scenario file (a path, ``scenarios/NAME.toml``, ``<string>``, ``<dict>``), or ``None``."""
    line: Optional[int]
    """The line in ``file`` (``None`` for a dict, whose TOML the caller never saw)."""
    key: str
    """The dotted key path (``test.duration``); empty when the error is not a key's."""
    flag: Optional[str]
    """The flag that carried the bad value (``set path.up.rate="fast"``, ``sweep ...``), or ``None``."""
    message: str
    """What is wrong and the accepted values, without the file, line and key."""

class RunError(RuntimeError):
    """A run that failed (the simulator or the Linux backend stopped it, a point that failed on Ray after
    its retries); the message is the CLI's, or one line per failed point."""

    failures: Optional[Dict[int, str]]
    """Points that failed on Ray after their retries, ``{point index: the error's message}``; ``None`` for
    a run on this machine."""

class TcplabWarning(UserWarning):
    """A warning of the lab: a validation warning (``file:line: key: ...``), an unmet confidence interval,
    a note on a plot not drawn."""

class Plot:
    """One plot of ``--plot`` as the lab's SVG; shown inline by Jupyter."""

    name: str
    """The file name ``--plot`` gives it, without ``.svg`` (``sweep-throughput_bps``, ``cwnd``, ``p3-cdf``)."""
    title: str
    """Its title."""
    svg: str
    """The SVG text."""
    def __init__(self, name: str, title: str, svg: str) -> None: ...
    def save(self, path: _PathLike) -> None:
        """Writes the SVG to ``path``: the bytes ``--plot`` writes to ``NAME.svg``."""

class Line:
    """One line of a :class:`Chart`."""

    label: str
    """Its legend entry; empty: not in the legend."""
    x: List[float]
    """x values, in the chart's x unit (categories: their indices)."""
    y: List[float]
    """y values, in the chart's y unit (NaN: no value)."""
    dashed: bool
    """Drawn dashed (ssthresh beside its cwnd)."""
    markers: bool
    """A marker at each point (a sweep)."""
    errors: List[Tuple[float, float, float]]
    """Error bars ``(x, low, high)``: the confidence interval of repetitions."""
    published: bool
    """A publication's figures: crosses, no line."""
    colour: str
    """``#rrggbb``, the SVG's colour."""
    def __init__(self, d: Mapping[str, Any]) -> None: ...

class Chart:
    """One plot of ``--plot`` before drawing: what :meth:`Result.plot` draws with matplotlib."""

    name: str
    """The file name ``--plot`` gives it, without ``.svg``."""
    title: str
    """Its title."""
    x_label: str
    """The x axis' label, with its unit."""
    y_label: str
    """The y axis' label, with its unit."""
    lines: List[Line]
    """Its lines, in drawing order."""
    x_categories: Optional[List[str]]
    """The labels of x = 0, 1, ... when the swept values are not numbers; else ``None``."""
    log_x: bool
    """A logarithmic x axis (latency CDFs spanning decades)."""
    y_range: Optional[Tuple[float, float]]
    """The y axis' range; ``None``: from the data (from 0 for quantities)."""
    band: Optional[Tuple[float, float, str]]
    """``(start, end, label)``: the measurement window shaded on a time axis, or ``None``."""
    point: Optional[int]
    """The point it is about (its time series, its CDF), or ``None`` for a plot across points."""
    def __init__(self, d: Mapping[str, Any]) -> None: ...
    def draw(self, ax: Optional[Axes] = None) -> Axes:
        """Draws the chart on ``ax`` (a new figure's when ``None``) and returns the axes."""

class Result:
    """The result of a run or a saved document: its tables as pandas DataFrames, its JSON, its plots."""

    def __init__(self, native: Any) -> None: ...
    @property
    def points(self) -> pandas.DataFrame:
        """One row per point: the swept values (a column per axis, named by its key path), ``iterations``,
        every metric flattened with dots (``throughput_bps``, ``latency_us.p99``), ``aggregate.*`` of a
        ``[dumbbell]`` point, and ``confidence.*`` with repetitions. Units are in the names."""
    def connections(self, point: int = 0) -> pandas.DataFrame:
        """One row per connection end of point ``point``: ``end``, ``side``, ``protocol``, ``state``, then
        every RFC 4898 statistic (``SegsOut``, ``CurCwnd``, ``SmoothedRTT``, ...)."""
    def flows(self, point: Optional[int] = None) -> pandas.DataFrame:
        """The flows of a ``[dumbbell]`` scenario, one row per flow (``flow``, ``kind``, ``stack``,
        ``congestion_control``, ``base_rtt_ms``, ``goodput_bps``, ...). Without ``point``: every point's,
        each row led by ``point`` and the swept values (long: a row per point and flow). Empty without
        ``[dumbbell]``."""
    def series(self, point: int = 0) -> pandas.DataFrame:
        """``series`` of point ``point`` in long form: ``t_s``, ``end`` (``sender``), ``variable``, ``value``."""
    def logvars(self, point: int = 0) -> pandas.DataFrame:
        """``logvars`` of point ``point`` in long form: ``t_s``, ``end`` (``ID-SIDE``), ``variable``,
        ``value``."""
    def links(self, point: int = 0) -> pandas.DataFrame:
        """One row per link direction of point ``point``: ``direction``, ``from``, ``to``, then its counters
        (``frames_in``, ``bytes_delivered``, ``max_queue_frames``, ``qdisc.sojourn_mean_ms``, ...)."""
    def nics(self, point: int = 0) -> pandas.DataFrame:
        """One row per host NIC of point ``point``: ``host``, ``frames_sent``, ``refused_full``,
        ``max_queue_frames``, and ``ip.*`` (IP fragmentation) with an ``mtu``."""
    def queue_series(self, point: int = 0) -> pandas.DataFrame:
        """``links.queue_series`` of point ``point`` in long form: ``t_s``, ``direction``, ``variable``
        (``backlog_packets``, ``backlog_bytes``, ``sojourn_ms``), ``value``."""
    def flow_series(self, point: int = 0) -> pandas.DataFrame:
        """``flow_series`` of point ``point`` in long form: ``t_s``, ``flow``, ``variable``
        (``goodput_mbps``, ``latency_ms``), ``value``."""
    def rtt_samples(self, point: int = 0) -> pandas.DataFrame:
        """``rtt_samples`` of point ``point`` in long form: ``sample``, ``t_s``, ``end`` (``sender``),
        ``variable`` (``rtt_ms``, ``taken``, ``SmoothedRTT``, ``CurRTO``), ``value``."""
    @property
    def document(self) -> Dict[str, Any]:
        """The result document (schema tcplab.result/2, or /1 loaded) as dicts and lists."""
    def json(self) -> str:
        """The document as ``tcplab run --json`` writes it."""
    def save(self, path: _PathLike) -> None:
        """Writes the document, byte-identical to ``tcplab run ... --json path``; complete or not at all."""
    def table(self) -> str:
        """The netperf-style table ``tcplab run`` prints."""
    def plots(self) -> List[Plot]:
        """The plots ``--plot`` draws, as the lab's SVGs (no matplotlib needed)."""
    def charts(self) -> List[Chart]:
        """The plots ``--plot`` draws, before drawing: titles, axes, lines with their data."""
    def plot(self, name: Optional[str] = None, *, ax: Optional[Axes] = None) -> Union[Dict[str, Figure], Axes]:
        """Draws what ``--plot`` draws with matplotlib: without ``name`` a dict ``{name: Figure}`` of every
        plot; with ``name`` that plot on ``ax`` (a new figure's when ``None``), returning the axes."""
    def save_plots(self, directory: _PathLike, format: str = "svg") -> List[str]:
        """Writes every plot into ``directory`` as ``NAME.FORMAT``: ``"svg"`` the lab's SVGs (the bytes of
        ``--plot DIR``), another format (``"png"``, ``"pdf"``) matplotlib's figures. Returns the paths."""
    def plot_series(self, variable: str, point: int = 0, ax: Optional[Axes] = None) -> Axes:
        """``variable`` over time per connection end of point ``point``, drawn with matplotlib; returns the
        axes."""
    def __len__(self) -> int:
        """The number of points."""

def run(
    scenario: _Scenario,
    *,
    set: Optional[_Overrides] = None,
    seed: Optional[int] = None,
    sweep: Optional[_Sweep] = None,
    iterations: Union[int, Tuple[int, int], str, None] = None,
    confidence: Union[Tuple[float, float], str, None] = None,
    jobs: Optional[int] = None,
    backend: str = "sim",
    executor: str = "local",
    force: bool = False,
    progress: Union[Callable[[int, int], Any], bool, None] = None,
) -> Result:
    """Runs a scenario (a shipped name, a path, TOML text or a dict) with its overrides (``set``), sweep,
    repetitions (``iterations``, ``confidence``) and ``seed``, on ``jobs`` threads or on Ray
    (``executor="ray"``, the simulator only), and returns its :class:`Result`. ``backend``: ``"sim"`` or
    ``"linux"``. Raises :class:`ScenarioError` for bad input and :class:`RunError` for a failed run."""

def load(path: _PathLike) -> Result:
    """Reads a saved result document (``tcplab run --json``) through the lab's typed model."""

def shipped() -> List[str]:
    """The names of the shipped scenarios (``tcplab list``)."""
