"""A classic experiment from Python: TCP_RR over DSL with a first burst, Nagle on and off (docs/classic.md).

Runs the shipped `classic/dsl-rr-nodelay` sweep (first burst 0..=14 against TCP_NODELAY off and on), prints
the table of transactions per second as the report laid it out (one row per burst, a column per NODELAY
setting) beside the report's published figures, and writes the lab's plots (the SVGs `--plot` draws), plus
the transactions-per-second plot drawn with matplotlib, as a PNG, when matplotlib is installed.

    python python/examples/dsl_rr_nodelay.py [OUT_DIR]
"""

import os
import sys

import tcplab


def main(out="dsl-rr-nodelay"):
    r = tcplab.run("classic/dsl-rr-nodelay")
    p = r.points
    table = p.pivot(index="test.burst", columns="test.nodelay", values="transactions_per_s")
    table.columns = [f"nodelay={c}" for c in table.columns]
    # The report's own figures, where the scenario's [[published]] has one for the point (its other
    # series, "today, kernel", is a measurement of the Linux backend's, not the report's).
    report = [t["source"] == "the 2002 DSL TCP_RR report" for t in r.document["scenario"]["published"]]
    published = {}
    for point in r.document["points"]:
        for f in point.get("published", []):
            if f["metric"] == "transactions_per_s" and report[f["series"]]:
                key = (point["params"]["test.burst"], point["params"]["test.nodelay"])
                published[key] = f["published"]
    for nodelay in (False, True):
        table[f"published nodelay={nodelay}"] = [published.get((b, nodelay)) for b in table.index]
    print("transactions/s, TCP_RR over DSL (384 kbit/s up, 1500 kbit/s down, 100 ms RTT)")
    print(table.round(2).to_string())
    svgs = r.save_plots(out)
    print(f"{len(svgs)} plots in {out}/: " + ", ".join(os.path.basename(s) for s in svgs))
    try:
        import matplotlib
    except ImportError:
        return table, svgs, published
    matplotlib.use("Agg")
    # The report's plot as --plot draws it (the lab's lines, its published crosses, the line's ceiling),
    # drawn by matplotlib: a figure to restyle, annotate or put beside others.
    ax = r.plot("tps-burst")
    ax.figure.savefig(os.path.join(out, "tps-burst.png"))
    return table, svgs, published

if __name__ == "__main__":
    main(*sys.argv[1:2])
