#!/usr/bin/env bash
# Side-by-side wall-clock comparison: tcplab vs ns-3 (PyPI ns3 3.44 bindings)
# on the same machine, one run after the other, for each fixed workload.
#
# Usage (from anywhere):
#   bash bench/peers/ns3/compare.sh [options] [WORKLOAD ...]
#
#   WORKLOAD         bulk-1g | bulk-100m-loss | flows-1000 (default: all three)
#   --skip-build     do not run `cargo build --release -p tcplab-cli`
#   --ns3-results D  do not run ns-3; reuse D/WORKLOAD.json written by an
#                    earlier run of this script or of workloads.py
#   --out D          keep raw JSON in D (default: a new temp dir, printed)
#   env TCPLAB_BIN   tcplab binary to run (default: target/release/tcplab)
#
# tcplab half:  cargo build --release -p tcplab-cli   (at the repo root)
#               target/release/tcplab bench --workload NAME --json -
#               -> {"schema":"tcplab.bench/1","workloads":[{"name":...,
#                   "wall_s":...,"data_segments":...,"segments_per_s":...,
#                   "events":...,"events_per_s":...,"peak_rss_bytes":...}]}
# ns-3 half:    bench/peers/ns3/.venv/bin/python workloads.py --workload NAME
#               (setup.sh is run first if the venv is missing)
#
# Both halves' wall_s are the simulator's own timing of the run itself:
# tcplab's as it reports it, ns-3's is the time inside Simulator::Run()
# (the ~8-10 s Python/cppyy import and the scenario construction are
# excluded; the whole ns-3 process time is shown as ns3_proc_s).
# Needs python3 (for JSON and the table); jq is not used.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
all_workloads=(bulk-1g bulk-100m-loss flows-1000)

skip_build=0
ns3_results=""
out=""
workloads=()
while [ $# -gt 0 ]; do
    case "$1" in
        --skip-build) skip_build=1; shift ;;
        --ns3-results) ns3_results="$(cd "$2" && pwd)"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,28p' "${BASH_SOURCE[0]}"; exit 0 ;;
        bulk-1g|bulk-100m-loss|flows-1000) workloads+=("$1"); shift ;;
        *) echo "compare.sh: unknown argument: $1" >&2; exit 2 ;;
    esac
done
[ ${#workloads[@]} -gt 0 ] || workloads=("${all_workloads[@]}")
if [ -z "$out" ]; then out="$(mktemp -d -t tcplab-vs-ns3.XXXXXX)"; fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# ---- tcplab build ---------------------------------------------------------
if [ "$skip_build" -eq 0 ]; then
    echo "== cargo build --release -p tcplab-cli" >&2
    (cd "$root" && cargo build --release -p tcplab-cli)
fi
tcplab="${TCPLAB_BIN:-$root/target/release/tcplab}"
[ -x "$tcplab" ] || { echo "compare.sh: $tcplab not found (build failed?)" >&2; exit 1; }

# ---- ns-3 environment -----------------------------------------------------
if [ -z "$ns3_results" ] && [ ! -x "$here/.venv/bin/python" ]; then
    echo "== ns-3 venv missing: running setup.sh" >&2
    bash "$here/setup.sh"
fi

# ---- runs, one after the other ---------------------------------------------
for w in "${workloads[@]}"; do
    echo "== tcplab: $w" >&2
    (cd "$root" && "$tcplab" bench --workload "$w" --json -) > "$out/tcplab-$w.json"

    if [ -n "$ns3_results" ]; then
        cp "$ns3_results/$w.json" "$out/ns3-$w.json"
        echo "== ns-3: $w (reused $ns3_results/$w.json)" >&2
        continue
    fi
    echo "== ns-3: $w (this takes minutes; flows-1000 ~10 min)" >&2
    start=$(date +%s.%N)
    "$here/.venv/bin/python" "$here/workloads.py" --workload "$w" \
        > "$out/ns3-$w.json" 2> "$out/ns3-$w.stderr"
    end=$(date +%s.%N)
    python3 -c "print(round($end - $start, 3))" > "$out/ns3-$w.proc_s"
done

# ---- table ------------------------------------------------------------------
python3 - "$out" "${workloads[@]}" <<'PY'
import json, os, sys

out, names = sys.argv[1], sys.argv[2:]

def last_json_line(path):
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.strip().startswith("{")]
    if not lines:
        sys.exit("no JSON in %s" % path)
    return json.loads(lines[-1])

def tcplab_row(name):
    doc = json.load(open(os.path.join(out, "tcplab-%s.json" % name)))
    if doc.get("schema") != "tcplab.bench/1":
        print("warning: unexpected tcplab schema %r" % doc.get("schema"), file=sys.stderr)
    for w in doc.get("workloads", []):
        if w.get("name") == name:
            return w
    sys.exit("tcplab output has no workload %r" % name)

def fmt(v, spec):
    return "-" if v is None else format(v, spec)

def mib(b):
    return None if b is None else b / 2**20

rows = []
for n in names:
    t = tcplab_row(n)
    s = last_json_line(os.path.join(out, "ns3-%s.json" % n))
    proc = None
    p = os.path.join(out, "ns3-%s.proc_s" % n)
    if os.path.exists(p):
        proc = float(open(p).read())
    tw, sw = t.get("wall_s"), s.get("wall_s")
    ratio = (sw / tw) if tw and sw else None
    rows.append([
        n,
        fmt(tw, ".3f"), fmt(sw, ".3f"), fmt(ratio, ".1f"),
        fmt(proc, ".1f"),
        fmt(t.get("data_segments"), "d"), fmt(s.get("data_segments"), "d"),
        fmt(t.get("segments_per_s"), ".0f"), fmt(s.get("segments_per_s"), ".0f"),
        fmt(s.get("goodput_mbps"), ".1f"),
        fmt(mib(t.get("peak_rss_bytes")), ".1f"), fmt(mib(s.get("peak_rss_bytes")), ".1f"),
    ])

head = ["workload", "tcplab_wall_s", "ns3_wall_s", "ns3/tcplab", "ns3_proc_s",
        "tcplab_segs", "ns3_segs", "tcplab_seg/s", "ns3_seg/s", "ns3_goodput_mbps",
        "tcplab_rss_MiB", "ns3_rss_MiB"]
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
line = lambda r: "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
print(line(head))
print(line(["-" * w for w in widths]))
for r in rows:
    print(line(r))
print("\nratio = ns3_wall_s / tcplab_wall_s (higher = tcplab faster); raw JSON in %s" % out)
PY
