"""The plots of ``--plot`` drawn with matplotlib, from the lab's own charts (``Result.charts()``).

The lab decides what is drawn (which plots a result has, their titles, axes with units, lines, published
crosses, error bars, the measurement window); this module only draws each :class:`Chart` on matplotlib
axes, in the SVG's colours and styles, so that a figure here and the SVG of ``--plot`` show the same data.
"""

import math
import textwrap

#: The size of every plot, inches at 100 dpi: the SVG's 960 x 540 pixels.
FIGSIZE = (9.6, 5.4)

#: Most characters on one line of a title (the SVG's, `TITLE_CHARS` in crates/report/src/plot.rs).
TITLE_CHARS = 84

#: The measurement window's shade (the SVG's: its first colour, 7% opaque, dashed edges at 45%).
BAND_COLOUR = "#1f77b4"


def _floats(values):
    """JSON numbers as floats; a null (a NaN in the lab's chart) as NaN."""
    return [math.nan if v is None else float(v) for v in values]


class Line:
    """One line of a chart: ``label`` (empty: not in the legend), ``x`` and ``y`` (the chart's units),
    ``dashed`` (ssthresh beside its cwnd), ``markers`` (a point per swept value), ``errors`` (``(x, low,
    high)`` confidence intervals), ``published`` (a publication's figures: crosses, no line) and
    ``colour`` (``#rrggbb``, the SVG's)."""

    __slots__ = ("label", "x", "y", "dashed", "markers", "errors", "published", "colour")

    def __init__(self, d):
        self.label = d["label"]
        self.x = _floats(d["x"])
        self.y = _floats(d["y"])
        self.dashed = d["dashed"]
        self.markers = d["markers"]
        self.errors = [tuple(_floats(e)) for e in d["errors"]]
        self.published = d["published"]
        self.colour = d["colour"]

    def __repr__(self):
        return f"Line({self.label!r}, {len(self.x)} points)"


class Chart:
    """One plot of ``--plot`` before drawing: ``name`` (the SVG's file name without ``.svg``), ``title``,
    ``x_label`` and ``y_label`` (with units), ``lines`` (:class:`Line`), ``x_categories`` (labels of the
    x positions 0, 1, ... when the swept values are not numbers, else ``None``), ``log_x``, ``y_range``
    (``(low, high)`` or ``None``: from the data, from 0 for quantities), ``band`` (``(start, end, label)``:
    the measurement window shaded on a time axis, or ``None``) and ``point`` (the point it is about, or
    ``None`` for a plot across points)."""

    __slots__ = ("name", "title", "x_label", "y_label", "lines", "x_categories", "log_x", "y_range", "band", "point")

    def __init__(self, d):
        self.name = d["name"]
        self.title = d["title"]
        self.x_label = d["x_label"]
        self.y_label = d["y_label"]
        self.lines = [Line(x) for x in d["lines"]]
        self.x_categories = d["x_categories"]
        self.log_x = d["log_x"]
        self.y_range = tuple(d["y_range"]) if d["y_range"] is not None else None
        self.band = tuple(d["band"]) if d["band"] is not None else None
        self.point = d["point"]

    def draw(self, ax=None):
        """Draws the chart on matplotlib axes ``ax`` (a new figure's when ``None``) and returns them."""
        if ax is None:
            ax = new_figure().subplots()
        draw(self, ax)
        return ax

    def __repr__(self):
        return f"Chart({self.name!r}, {self.title!r}, {len(self.lines)} lines)"


def matplotlib_or_error():
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            'Result.plot draws with matplotlib: pip install "matplotlib>=3.7" (or pip install "tcplab[plot]"); '
            "Result.plots() hands over the lab's SVGs without it"
        ) from e
    return Figure


def new_figure():
    """A figure the size of the SVG, not registered with pyplot (no global state: a sweep's dozens of
    figures are freed with the dict that holds them). Jupyter shows one inline through its ``_repr_png_``:
    the inline backend's display hook for figures is installed only once pyplot is imported."""
    figure = matplotlib_or_error()
    fig = figure(figsize=FIGSIZE, layout="constrained")
    fig._repr_png_ = lambda: _png(fig)
    return fig


def _png(fig):
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def draw(chart, ax):
    """Draws ``chart`` on ``ax`` as the lab's SVG renderer draws it (crates/report/src/plot.rs `draw`)."""
    labelled = False
    for line in chart.lines:
        if line.published:
            continue
        ax.plot(
            line.x,
            line.y,
            linestyle="--" if line.dashed else "-",
            linewidth=2,
            color=line.colour,
            marker="o" if line.markers else None,
            markersize=5,
            label=line.label if line.label.strip() else None,
        )
        labelled |= bool(line.label.strip())
        if line.errors:
            mid = dict(zip(line.x, line.y))
            xs = [e[0] for e in line.errors]
            ys = [mid.get(e[0], math.nan) for e in line.errors]
            low = [y - e[1] for y, e in zip(ys, line.errors)]
            high = [e[2] - y for y, e in zip(ys, line.errors)]
            ax.errorbar(xs, ys, yerr=[low, high], fmt="none", ecolor=line.colour, elinewidth=2, capsize=6)
    # Published figures last, on top: crosses with a white halo, as the SVG draws them.
    for line in chart.lines:
        if not line.published:
            continue
        ax.plot(line.x, line.y, linestyle="none", marker="x", markersize=14, markeredgewidth=6, color="white", zorder=4)
        ax.plot(
            line.x,
            line.y,
            linestyle="none",
            marker="x",
            markersize=12,
            markeredgewidth=3,
            color=line.colour,
            zorder=5,
            label=line.label if line.label.strip() else None,
        )
        labelled |= bool(line.label.strip())
    if chart.band is not None:
        start, end, label = chart.band
        # Named in the legend only beside lines the legend names, as in the SVG.
        ax.axvspan(start, end, color=BAND_COLOUR, alpha=0.07, label=label if labelled and label else None)
        for x in (start, end):
            ax.axvline(x, color=BAND_COLOUR, alpha=0.45, linewidth=1, linestyle=(0, (4, 4)))
    if chart.x_categories is not None:
        n = len(chart.x_categories)
        ax.set_xticks(range(n))
        ax.set_xticklabels(chart.x_categories)
        ax.set_xlim(-0.5, n - 0.5)
    if chart.log_x:
        _log_x(ax, [x for line in chart.lines for x in line.x if x > 0])
    if chart.y_range is not None:
        ax.set_ylim(*chart.y_range)
    else:
        ys = [y for line in chart.lines for y in line.y if not math.isnan(y)]
        ys += [v for line in chart.lines for e in line.errors for v in e[1:] if not math.isnan(v)]
        if ys and min(ys) >= 0:
            # Quantities from 0, as the SVG (a little room above the largest).
            top = max(ys) * 1.08 if max(ys) > 0 else 1.0
            ax.set_ylim(0, top)
    ax.set_title("\n".join(textwrap.wrap(chart.title, TITLE_CHARS)))
    ax.set_xlabel(chart.x_label)
    ax.set_ylabel(chart.y_label)
    ax.grid(True, color="#eeeeee")
    ax.set_axisbelow(True)
    if labelled:
        _, labels = ax.get_legend_handles_labels()
        # Below the plotting area, as the SVG's legend: it never covers a point.
        ax.legend(
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14),
            ncol=legend_columns(labels),
            fontsize="small",
            frameon=True,
        )
    return ax


def _nice(v, up):
    """The 1, 2 or 5 times a power of ten at or below (at or above, ``up``) ``v`` > 0: where the SVG's log
    axis starts and ends."""
    d = 10 ** math.floor(math.log10(v))
    steps = (1, 2, 5, 10) if up else (5, 2, 1)
    for m in steps:
        if (m * d >= v) if up else (m * d <= v):
            return m * d
    return 10 * d if up else d


def _short(v):
    """A tick label: few digits, no trailing zeros (the SVG's `short`)."""
    a = abs(v)
    text = f"{v:.0f}" if a >= 1000 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 0.1 else f"{v:.3f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _log_x(ax, xs):
    """A logarithmic x axis as the SVG draws it: from a little below the least x to a little above the
    greatest, at 1, 2, 5 x 10^k, labelled there, with a light grid line at every integer x 10^k."""
    from matplotlib.ticker import FixedLocator, NullFormatter

    ax.set_xscale("log")
    if not xs:
        return
    lo, hi = _nice(min(xs) / 1.1, False), _nice(max(xs) * 1.1, True)
    ax.set_xlim(lo, hi)

    def ticks(ms):
        out, d = [], 10 ** math.floor(math.log10(lo))
        while d <= hi * (1 + 1e-9):
            out += [m * d for m in ms if lo * (1 - 1e-9) <= m * d <= hi * (1 + 1e-9)]
            d *= 10
        return out

    major = ticks((1, 2, 5))
    ax.xaxis.set_major_locator(FixedLocator(major))
    ax.xaxis.set_ticklabels([_short(v) for v in major])
    ax.xaxis.set_minor_locator(FixedLocator(ticks(range(1, 10))))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="minor", axis="x", color="#f4f4f4")


def legend_columns(labels, width=920):
    """As many legend columns as fit ``width`` pixels, at most four: the SVG's rule (`Legend::layout`),
    each column as wide as its longest label at about 7.2 px a character, a 30 px sample before it."""
    for n in range(min(4, len(labels)), 1, -1):
        rows = -(-len(labels) // n)
        n = -(-len(labels) // rows)
        texts = [max(len(lab) for lab in labels[col::n]) * 7.2 for col in range(n)]
        if sum(34 + t for t in texts) + 26 * (n - 1) + 24 <= width:
            return n
    return 1
