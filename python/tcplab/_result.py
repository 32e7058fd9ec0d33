"""`Result`: a result document (schema tcplab.result/2 or /1) with its tables as pandas DataFrames."""

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
        """Writes the SVG to ``path``: the bytes ``--plot`` writes to ``NAME.svg``."""
        with open(os.fspath(path), "w", encoding="utf-8", newline="") as f:
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
        """The ``series`` of point ``point`` (``test.series = "100ms"``: the first sender's gauges) in long form:
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
        """The link directions of point ``point``, one row per direction (``links.directions`` of the
        document; in a ``tcplab.result/1`` document, which has none, ``up`` and ``down``): ``direction``
        (``up``, ``down``; ``bottleneck``, ``reverse``, ``flow[i].sender_access.forward``, ... of a
        dumbbell; ``link[i].forward``, ``link[i].backward`` of a network), ``from`` and ``to`` (the hosts
        it carries packets between; missing in a /1 document), then its counters: ``frames_in``,
        ``frames_delivered``, ``drops_queue_full``, ``drops_random_loss`` (frames), ``bytes_delivered``
        (wire bytes), ``max_queue_frames`` (frames), and on the generic path (a ``qdisc``, ``jitter``)
        ``qdisc.enqueued``, ``qdisc.dequeued``, ``qdisc.drops_overlimit``, ``qdisc.drops_aqm``,
        ``qdisc.marks`` (packets), ``qdisc.max_packets``, ``qdisc.max_bytes``, ``qdisc.sojourn_mean_ms``,
        ``qdisc.sojourn_max_ms`` (ms). A counter a direction lacks is missing. The NICs are in
        :meth:`nics`, the queues over time in :meth:`queue_series`."""
        return _frame(self._native.links(point))

    def nics(self, point=0):
        """The NIC transmit queues of point ``point``, one row per host: ``host`` (``client``,
        ``server``; a dumbbell's sender 0 and receiver 0), ``frames_sent``, ``refused_full``,
        ``max_queue_frames`` (frames), and when a path direction has an ``mtu`` the host's IP
        fragmentation counters, RFC 4293's names: ``ip.out_frag_reqds``, ``ip.out_frag_creates``,
        ``ip.reasm_reqds``, ``ip.reasm_oks``, ``ip.reasm_fails`` (datagrams or fragments)."""
        return _frame(self._native.nics(point))

    def queue_series(self, point=0):
        """The queues of point ``point`` over time (``links.queue_series``: the simulator with
        ``test.series``), in long form: ``t_s`` (the sample's instant, s from the start of the run),
        ``direction`` (as in :meth:`links`), ``variable`` (``backlog_packets``, ``backlog_bytes``: wire
        bytes waiting, not counting the packet on the wire; ``sojourn_ms``: ms, missing where a qdisc
        dequeued nothing since the previous sample), ``value``. Empty (the four columns, no rows)
        without a queue series.

        Wide, a column per direction: ``q[q["variable"] == "backlog_packets"].pivot(index="t_s",
        columns="direction", values="value")``."""
        return _frame(self._native.queue_series(point))

    def flow_series(self, point=0):
        """The flows of point ``point`` over time (``flow_series``: a ``[dumbbell]`` or network with
        ``test.series``), in long form: ``t_s`` (each interval's end, s from the start of the run),
        ``flow`` (its index, as in :meth:`flows`), ``variable`` (``goodput_mbps``: stream and msg flows,
        payload read in the interval, Mbit/s; ``latency_ms``: rr flows, the mean time of the
        transactions completed in the interval, ms, missing for an interval without one), ``value``.
        Empty without a flow series.

        Wide: ``fs.pivot(index="t_s", columns="flow", values="value")``."""
        return _frame(self._native.flow_series(point))

    def rtt_samples(self, point=0):
        """Every RTT measurement of point ``point`` (``rtt_samples``: RDP tests with ``test.series``),
        in long form: ``sample`` (the measurement's index, in order), ``t_s`` (when the acknowledgement
        arrived, s), ``end`` (``"sender"``, the end :meth:`series` follows), ``variable`` (``rtt_ms``: the
        measurement, ms; ``taken``: 1 if the estimator used it, 0 if ``rtt_sampling`` discarded it;
        ``SmoothedRTT``, ``CurRTO``: ms, after it), ``value``. Empty without samples.

        Wide, a row per measurement: ``s.pivot(index="sample", columns="variable", values="value")``."""
        return _frame(self._native.rtt_samples(point))

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

    def flows(self, point=None):
        """The flows of a ``[dumbbell]`` scenario (docs/topology.md), one row per flow: its fields as the
        document's ``points[].flows[]`` has them, flattened with dots: ``flow`` (its index among the
        ``[[flow]]`` tables), ``kind`` (``stream``, ``rr``), ``stack``, ``congestion_control``,
        ``base_rtt_ms`` (ms), ``goodput_bps`` (bit/s, read by the receiving application in the
        measurement), ``delivered_bytes``, ``retransmissions`` (segments), ``smoothed_rtt_ms`` (ms), and
        for ``rr`` flows ``transactions_per_s`` and ``latency_us.{mean, p50, p99, ...}`` (µs; a column a
        stream flow lacks is missing).

        With ``point``, that point's flows. Without (the default), every point's, each row led by
        ``point`` (its index) and the point's swept values, one column per axis: a tidy long table, one
        row per (point, flow), for ``groupby``/``pivot``::

            f = r.flows()
            f.pivot(index="dumbbell.bottleneck.qdisc.kind", columns="flow", values="goodput_bps")

        The stream flows' goodputs of a point sum to its ``aggregate.goodput_bps`` in :attr:`points`.
        Empty (no rows, no columns) for a scenario without ``[dumbbell]``."""
        if point is not None and not isinstance(point, int):
            raise TypeError(f"point: {type(point).__name__}: accepted an int or None")
        return _frame(self._native.flows(point))

    def plots(self):
        """The plots ``--plot`` draws, as :class:`Plot` objects: the lab's own SVG (``svg``), in the order
        ``--plot`` writes them; Jupyter shows each inline. Needs no matplotlib."""
        plots, _notes = self._native.plots()
        return [Plot(*p) for p in plots]

    def charts(self):
        """The plots ``--plot`` draws, before drawing: :class:`Chart` objects (``name``, ``title``, axis
        labels with units, ``lines`` with their ``x`` and ``y``, published figures, error bars), in the
        order of :meth:`plots`. :meth:`plot` draws them with matplotlib; notes on what was not drawn go to
        warnings."""
        import json
        import warnings

        from ._plot import Chart
        from ._run import TcplabWarning

        text, notes = self._native.charts()
        for n in notes:
            warnings.warn(n, TcplabWarning, stacklevel=3)
        return [Chart(c) for c in json.loads(text)]

    def plot(self, name=None, *, ax=None):
        """Draws what ``--plot`` draws, with matplotlib (``pip install "tcplab[plot]"``): every plot of the
        result (the swept metrics against the sweep's axes, the scenario's ``[[plot]]`` tables with their
        published figures and reference lines, the time series of cwnd, RTT and throughput, the latency
        CDFs), each the same lines as its SVG, in its colours.

        Without ``name``: a dict ``{name: matplotlib.figure.Figure}`` in ``--plot``'s order, the names its
        files have (``sweep-throughput_bps``, ``cwnd``, ``p3-cdf``, ...); ``fig.savefig("x.png")`` writes
        one, and Jupyter shows one inline. With ``name``: that plot alone, drawn on ``ax`` (a new figure's
        when ``None``); returns the axes. An unknown name raises ``KeyError`` listing the names. Notes on
        what was not drawn (no series, no sweep) go to warnings (:class:`TcplabWarning`)."""
        import warnings

        from ._plot import matplotlib_or_error
        from ._run import TcplabWarning

        matplotlib_or_error()
        charts = self.charts()
        if name is None:
            if ax is not None:
                raise TypeError("plot: ax is for one plot: plot(name, ax=ax)")
            figures = {}
            for c in charts:
                if c.name in figures:
                    # --plot writes both to NAME.svg, the later over the earlier (a scenario's [[plot]] named
                    # as a built-in plot is): the dict keeps what the directory keeps, and says so.
                    warnings.warn(
                        f"plot {c.name}: two plots have this name; the later is kept, as --plot's NAME.svg",
                        TcplabWarning,
                        stacklevel=2,
                    )
                figures[c.name] = c.draw().figure
            return figures
        for c in reversed(charts):
            if c.name == name:
                return c.draw(ax)
        raise KeyError(f"{name}: not a plot of this result; accepted: {', '.join(c.name for c in charts) or 'none'}")

    def save_plots(self, directory, format="svg"):
        """Writes every plot of ``--plot`` into ``directory`` (created if missing) as ``NAME.FORMAT`` and
        returns the paths. ``format="svg"``: the lab's own SVGs, the bytes ``--plot DIR`` writes;
        another format matplotlib writes (``"png"``, ``"pdf"``): the figures of :meth:`plot`."""
        import warnings

        from ._run import TcplabWarning

        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        paths = []
        if format == "svg":
            plots, notes = self._native.plots()
            for n in notes:
                warnings.warn(n, TcplabWarning, stacklevel=2)
            for p in plots:
                p = Plot(*p)
                path = os.path.join(directory, p.name + ".svg")
                p.save(path)
                paths.append(path)
            # A name twice: the later file replaced the earlier, as under --plot; each path once.
            return list(dict.fromkeys(paths))
        for name, fig in self.plot().items():
            path = os.path.join(directory, f"{name}.{format}")
            fig.savefig(path, format=format)
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
        """The number of points."""
        return len(self._native)

    def __repr__(self):
        """The netperf-style table ``tcplab run`` prints (:meth:`table`)."""
        return self._native.table()


def load(path):
    """Reads a saved result document (``tcplab run --json``) through the lab's typed model, as
    ``tcplab report`` does; a document that does not fit raises :class:`ScenarioError` naming the field."""
    return Result(_native.load(os.fspath(path)))
