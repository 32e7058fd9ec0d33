#!/usr/bin/env bash
# Issue 27's matrix against the kernel's BBR (docs/bbr.md § The matrix): `tcplab compare` of a 30 s bulk
# transfer at 10, 50 and 100 Mbit/s, 20 and 40 ms RTT, a 0.5-BDP and a 4-BDP drop-tail queue, no loss and
# 1 % random loss on data packets: 24 cases, each on the simulator (both stacks `linux`) and on this
# machine's kernel (Linux backend: needs root, TUN and BBR in tcp_available_congestion_control).
#
#   TCPLAB=target/release/tcplab OUT=/tmp/bbr-matrix bench/bbr-matrix.sh
#
# TCPLAB  the tcplab binary (required).
# OUT     a directory for one compare JSON per case, CASE.json, its table CASE.txt and stderr CASE.err
#         (required; created; existing files of the same names are replaced).
# JOBS    cases run at once (default: online CPUs / 3, at least 1). Each case is its own process with its
#         own network namespaces (named per pid), so cases can run side by side; each kernel run keeps an
#         emulator thread and the sockets' loop busy, so leave it 2–3 CPUs or the emulator's timing
#         suffers (docs/linux-backend.md § CPU).
# DURATION test.duration (default 30s: the issue's); CASES  a regular expression on case names to run
#         a subset (e.g. CASES='^r10-d20-' ), default all.
# SERIES  a test.series value for both sides (e.g. SERIES='{ interval = "10ms", vars = ["CurCwnd",
#         "SmoothedRTT", "X_BbrMode", "X_PacingRate"] }'): the sender's variables over time in each side's
#         document of CASE.json (`logvars`; the kernel's from TCP_INFO, docs/linux-backend.md § Connections
#         over time), default none.
#
# Prints one line per case as it ends (goodput sim/kernel, retransmitted segments, the SmoothedRTT mean,
# PROBE_RTT episodes, each from compare's own rows; `!!` where compare flags a figure), then how many
# cases ran and failed. Exit status: 0 when every case ran, 1 otherwise (a flagged figure is not a failure).
set -u -o pipefail

: "${TCPLAB:?TCPLAB: the tcplab binary to run (e.g. target/release/tcplab)}"
: "${OUT:?OUT: a directory for the JSON of each case}"
[ -x "$TCPLAB" ] || { echo "bbr-matrix: TCPLAB=$TCPLAB is not an executable file" >&2; exit 2; }
DURATION=${DURATION:-30s}
CASES=${CASES:-.}
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 3)
JOBS=${JOBS:-$(( ncpu / 3 > 0 ? ncpu / 3 : 1 ))}
mkdir -p "$OUT" || exit 2

# rate (Mbit/s), RTT (ms), queue at 0.5 and 4 BDP in 1538-byte frames, send/receive buffer.
# BDP frames = rate × RTT / (1538 B × 8): more than BDP plus queue in each buffer, so the drain after
# the 30 s stays under 2 s (docs/bbr.md § The matrix).
paths=(
  "10 20 8 65 512KiB"
  "10 40 16 130 512KiB"
  "50 20 41 325 2MiB"
  "50 40 81 650 2MiB"
  "100 20 81 650 4MiB"
  "100 40 163 1300 4MiB"
)

run_case() { # name rate rtt queue loss buf
  local name=$1 rate=$2 rtt=$3 q=$4 loss=$5 buf=$6 d=$(( $3 / 2 ))
  local args=(compare bulk-10m
    --set "path.up.rate=${rate}mbit" --set "path.up.delay=${d}ms" --set "path.up.queue=${q}pkt"
    --set "path.down.rate=${rate}mbit" --set "path.down.delay=${d}ms" --set "path.down.queue=${q}pkt"
    --set client.tcp.congestion_control=bbr --set "test.duration=$DURATION" --set test.message=64KiB
    --set "test.send_buffer=$buf" --set "test.recv_buffer=$buf" --json "$OUT/$name.json")
  if [ "$loss" != 0 ]; then
    args+=(--set path.up.loss.model=bernoulli --set "path.up.loss.p=$loss")
  fi
  if [ -n "${SERIES:-}" ]; then
    args+=(--set "test.series=$SERIES")
  fi
  local t0=$SECONDS
  if "$TCPLAB" "${args[@]}" >"$OUT/$name.txt" 2>"$OUT/$name.err"; then
    printf '%-22s %s (%ds)\n' "$name" "$(summary "$OUT/$name.txt")" $(( SECONDS - t0 ))
  else
    printf '%-22s FAILED (exit %d, %ds): %s\n' "$name" $? $(( SECONDS - t0 )) "$(tail -n 1 "$OUT/$name.err")"
    return 1
  fi
}

# The figures of compare's table: the label, then simulator, kernel, difference (`!!` where flagged).
summary() {
  awk '
    function row(short, label,   i, r) {
      for (i = 1; i <= n; i++) if (index(lines[i], label) == 1) {
        r = substr(lines[i], length(label) + 1); gsub(/  +/, " ", r); sub(/^ /, "", r)
        return short " " r
      }
      return short " ?"
    }
    { lines[++n] = $0 }
    /^linux run health/ { health = $0; sub(/^linux run health: /, "", health); sub(/;.*/, "", health) }
    END {
      printf "%s | %s | %s | %s | %s | kernel %s\n", row("goodput Mbit/s", "throughput, Mbit/s"), \
        row("retrans", "retransmitted segments"), row("srtt-mean ms", "client SmoothedRTT mean, ms"), \
        row("probe_rtt", "client PROBE_RTT episodes"), row("recoveries", "client TCPSackRecovery"), health
    }' "$1"
}

names=() specs=()
for p in "${paths[@]}"; do
  read -r rate rtt qhalf q4 buf <<<"$p"
  for q in "$qhalf" "$q4"; do
    for loss in 0 0.01; do
      name="r${rate}-d${rtt}-q${q}-l${loss}"
      [[ $name =~ $CASES ]] || continue
      names+=("$name") specs+=("$rate $rtt $q $loss $buf")
    done
  done
done

echo "bbr-matrix: ${#names[@]} cases, $JOBS at a time, test.duration=$DURATION, $("$TCPLAB" --version 2>/dev/null), kernel $(uname -r), into $OUT"
fails=0 running=0 t_start=$SECONDS
for i in "${!names[@]}"; do
  read -r rate rtt q loss buf <<<"${specs[$i]}"
  run_case "${names[$i]}" "$rate" "$rtt" "$q" "$loss" "$buf" &
  running=$(( running + 1 ))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || fails=$(( fails + 1 ))
    running=$(( running - 1 ))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || fails=$(( fails + 1 ))
  running=$(( running - 1 ))
done
echo "bbr-matrix: ${#names[@]} cases, $fails failed, $(( SECONDS - t_start )) s; JSON in $OUT"
[ "$fails" -eq 0 ]
