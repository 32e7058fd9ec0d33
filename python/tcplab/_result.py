"""`Result`: a result document (schema tcplab.result/1) with its tables as pandas DataFrames."""

import json
import os

from . import _native


def _frame(columns):
    import pandas as pd

    names, data = columns
    return pd.DataFrame(dict(zip(names, data)), columns=names)


class Plot:
    """One plot of ``--plot``: its file name (without ``.svg``), title and SVG text. Shown inline by
    Jupyter (``_repr_svg_``)."""

    __slots__ = ("name", "title", "svg")

    def __init__(self, name, title, svg):
        self.name, self.title, self.svg = name, title, svg

    def _repr_svg_(self):
        return self.svg

    def save(self, path):
        """Writes the SVG to ``path``."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.svg)

    def __repr__(self):
        return f"Plot({self.name!r}, {self.title!r})"


class Result:
    """The result of a run or a saved document (:func:`load`).

    Every table is a pandas DataFrame built from the document; column names carry their unit as the
    document's fields do (``throughput_bps`` bit/s, ``latency_us.p99`` microseconds, ``elapsed_s``
    seconds, RFC 4898 variables in their RFC units: bytes, ms, segments). docs/python.md lists them.
    """

    def __init__(self, native):
        self._native = native
        self._points = None
        self._document = None

    @property
    def points(self):
        """One row per point: the swept values first (a column per axis, in axis order, named by its key
        path), then ``iterations``, then every metric of the point flattened with dots
        (``throughput_bps``, ``latency_us.p99``, ``service_demand_us_per_kb.local``), then, with
        repetitions, ``confidence.metric``, ``confidence.level``, ``confidence.width``,
        ``confidence.interval``, ``confidence.met``. A metric a point lacks is missing (NaN/None)."""
        if self._points is None:
            self._points = _frame(self._native.points())
        return self._points.copy()

    def connections(self, point=0):
        """The connection ends of point ``point``: ``end`` (index in the document), ``side``,
        ``protocol``, ``state``, then every RFC 4898 statistic (``SegsOut``, ``CurCwnd``, ``SmoothedRTT``,
        ...) of the end. With repetitions: the first iteration's."""
        return _frame(self._native.connections(point))

    def series(self, point=0):
        """The ``series`` of point ``point`` (``test.series = true`` or a list of columns) in long form:
        ``t_s`` (s from the start of the run), ``end`` (``"sender"``, the first sending connection),
        ``variable`` (``CurCwnd``, ``SmoothedRTT``, ...), ``value`` (in the variable's RFC 4898 unit).
        Empty without a series."""
        return _frame(self._native.series(point))

    def logvars(self, point=0):
        """The ``logvars`` of point ``point`` (``test.series = { interval, vars }``) in long form: ``t_s``,
        ``end`` (``"ID-SIDE"``, e.g. ``"0-client"``), ``variable`` (the RFC 4898 variables asked for, and
        ``delivered_bytes``, ``throughput_bps``), ``value``. Empty without logvars.

        Wide form, one column per variable: ``r.logvars(0).pivot_table(index=["end", "t_s"],
        columns="variable", values="value")``."""
        return _frame(self._native.logvars(point))

    def links(self, point=0):
        """The links of point ``point``: ``link`` (``up``, ``down``, ``nic_client``, ``nic_server``, and
        ``ip_client``/``ip_server`` with fragmentation), then its counters (``frames_in``,
        ``drops_queue_full``, ``max_queue_frames``, ...)."""
        return _frame(self._native.links(point))

    @property
    def document(self):
        """The result document as Python dicts and lists (``json.loads`` of :meth:`json`)."""
        if self._document is None:
            self._document = json.loads(self._native.json())
        return self._document

    def json(self):
        """The document as text, exactly as ``tcplab run --json`` writes it."""
        return self._native.json()

    def save(self, path):
        """Writes the document to ``path`` with the CLI's writer: byte-identical to ``tcplab run ...
        --json path``; the file appears complete or not at all."""
        self._native.save(os.fspath(path))

    def table(self):
        """The netperf-style table ``tcplab run`` prints."""
        return self._native.table()

    def plots(self):
        """The plots ``--plot`` draws, as :class:`Plot` objects (SVG)."""
        plots, _notes = self._native.plots()
        return [Plot(*p) for p in plots]

    def plot(self, directory=None):
        """The plots ``--plot DIR`` draws (the lab's own SVG renderer). With ``directory``, writes
        ``NAME.svg`` files there (created if missing) and returns their paths; without, returns the
        :class:`Plot` objects, which Jupyter shows inline. Notes on what was not drawn (no series, no
        sweep) go to warnings.

        For matplotlib figures of your own, the DataFrames are the data: ``r.points.plot(x="test.burst",
        y="transactions_per_s")``, or :meth:`plot_series`."""
        import warnings

        from ._run import TcplabWarning

        plots, notes = self._native.plots()
        for n in notes:
            warnings.warn(n, TcplabWarning, stacklevel=2)
        plots = [Plot(*p) for p in plots]
        if directory is None:
            return plots
        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        paths = []
        for p in plots:
            path = os.path.join(directory, p.name + ".svg")
            p.save(path)
            paths.append(path)
        return paths

    def plot_series(self, variable, point=0, ax=None):
        """Draws ``variable`` (``CurCwnd``, ``throughput_bps``, ...) of every connection end of point
        ``point`` over time with matplotlib (installed separately: ``pip install matplotlib``), from
        ``logvars`` or else ``series``; returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("plot_series needs matplotlib: pip install matplotlib (or use plot(), SVG)") from e
        data = self.logvars(point)
        if data.empty:
            data = self.series(point)
        data = data[data["variable"] == variable]
        if data.empty:
            raise ValueError(f"{variable}: not in the series of point {point}; accepted: {self._variables(point)}")
        if ax is None:
            _, ax = plt.subplots()
        for end, d in data.groupby("end", sort=False):
            ax.plot(d["t_s"], d["value"], label=str(end))
        ax.set_xlabel("time (s)")
        ax.set_ylabel(variable)
        ax.legend()
        return ax

    def _variables(self, point):
        data = self.logvars(point)
        if data.empty:
            data = self.series(point)
        return ", ".join(dict.fromkeys(data["variable"]))

    def __len__(self):
        return len(self._native)

    def __repr__(self):
        return self._native.table()


def load(path):
    """Reads a saved result document (``tcplab run --json``) through the lab's typed model, as
    ``tcplab report`` does; a document that does not fit raises :class:`ScenarioError` naming the field."""
    return Result(_native.load(os.fspath(path)))
