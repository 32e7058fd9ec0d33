#!/usr/bin/env bash
# Create bench/peers/ns3/.venv and install the pinned ns-3 python bindings.
#
#   bash bench/peers/ns3/setup.sh            # uses python3 from PATH
#   PYTHON=python3.11 bash bench/peers/ns3/setup.sh
#
# The ns3 3.44.post0 wheels are CPython-version specific (manylinux_2_28
# x86_64; measured here with cp311). First import after install takes
# ~10 s (cppyy parses the ns-3 headers).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$here/.venv/bin/python" ]; then
    "$PYTHON" -m venv "$here/.venv"
fi
"$here/.venv/bin/python" -m pip install --quiet -r "$here/requirements.txt"

# Smoke test: import the bindings and print the simulator version in use.
"$here/.venv/bin/python" - <<'PY' 2> >(grep -v 'Failed to materialize symbols' >&2)
from ns import ns
print("ns-3 bindings OK:", ns.TcpNewReno.GetTypeId().GetName())
PY
"$here/.venv/bin/python" -m pip show ns3 | sed -n '1,2p'
