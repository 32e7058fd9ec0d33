"""tcplab from Python: run the lab's scenarios and sweeps, and read results as pandas DataFrames.

The package calls the same Rust code as the ``tcplab`` command (no subprocess): a run here gives the
document ``tcplab run --json`` writes, byte for byte. See docs/python.md.

>>> import tcplab
>>> r = tcplab.run("bulk-10m")
>>> r.points[["throughput_bps"]]          # bit/s, as the CLI's JSON
>>> r.connections(0)                      # RFC 4898 statistics per connection end
>>> r.save("bulk.json")                   # the bytes of `tcplab run bulk-10m --json bulk.json`
>>> r.plot()                              # what --plot draws, as matplotlib figures
"""

from ._native import RunError, ScenarioError
from ._native import shipped as _shipped
from ._plot import Chart, Line
from ._result import Plot, Result, load
from ._run import TcplabWarning, run

# Set on a RunError of executor="ray" ({point: message}, tcplab.ray); None for a run here.
RunError.failures = None

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

from ._native import VERSION as __version__


def shipped():
    """The names of the shipped scenarios (``tcplab list``), e.g. ``"bulk-10m"``, ``"classic/dsl-rr"``."""
    return list(_shipped())
