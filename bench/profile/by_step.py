#!/usr/bin/env python3
"""Charge a callgrind profile's instructions to the protocol steps of a data segment's life.

Usage:
  valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg \
      target/release/tcplab run bulk-1g --set 'test.duration="1s"' --quiet
  python3 bench/profile/by_step.py cg target/release/tcplab --segments 90260

Each instruction of the binary is resolved with `llvm-addr2line -i` (or `addr2line -i`) into its chain of
inlined frames, innermost first. It is charged to the step of the first frame, walking outward, that a rule
below names; a source line that updates the RFC 4898 record or a probe counts as statistics wherever it sits.
Instructions outside the binary (libc's malloc and free, memcpy) are charged by their function name.
Why this and not `callgrind_annotate --inclusive`: with fat LTO nearly the whole hot path is inlined into two
functions (`World::deliver`, `Connection::next_segment`), so inclusive costs by function say little.
"""
import argparse
import collections
import re
import subprocess
import sys

# (step, regex on "function\tfile") tried in order on each frame, innermost first. The first frame that
# matches any rule decides; order inside the list breaks ties between rules matching the same frame.
RULES = [
    ("allocation", r"__rust_alloc|__rust_dealloc|__rust_realloc|alloc::alloc::(alloc|dealloc|realloc)|finish_grow|grow_one|^(malloc|free|realloc|calloc|_int_malloc|_int_free)$"),
    ("copies of packets into and out of the links' in-flight queues",
     r"^core::ptr::(write|read)\b|copy_nonoverlapping|^mem(cpy|move)|VecDeque<T,A>>::(push_back|pop_front)"),
    ("event queue", r"binary_heap|/crates/sim/src/queue\.rs|EventQueue"),
    ("link and NIC", r"/crates/link/src/|tcplab_link::"),
    ("RACK, SACK and recovery", r"/crates/tcp/src/(rack|recovery|ranges)\.rs|sack|Sack|Rack|rack_|Scoreboard"),
    ("statistics and probes", r"/crates/tcp/src/estats\.rs|/crates/sim/src/probe\.rs|Probe|estats"),
    ("sender: ACK processing (cwnd, RTT sampling and estimator, congestion control)",
     r"process_ack|ack_of_nothing|update_send_window|on_fin_acked|on_new_ack|grow_cwnd|rtt_sample|/crates/rtt/src/|/crates/tcp/src/(cwnd|congestion/|rtt|sampler)|RttEstimator"),
    ("receiver: in-order data, delayed-ACK policy, receive window",
     r"process_data|/crates/tcp/src/ack\.rs|Connection::(recv|on_ack_sent|advertise_window|recv_free|recv_free_of|grow_window|unread|recv_buffer_limit|readable|measure_rcv_mss|ack_in_order_data|note_data_queued)\b"),
    ("TCP timers (deadlines, RTO restart)", r"Connection::(poll_timeout|restart_rto|set_timer|arm|disarm)\b"),
    ("sender: output (choosing and building a segment)",
     r"next_segment|choose|settle|Connection::(emit|snd|send_window|new_data_rooms|plain_segment_goes|last_segment_goes|plain_rooms|only_an_ack_could_go|pipe\w*|cwnd_validate)\b|poll_transmit|may_send_before_app|/crates/tcp/src/(ecn|pacing)\.rs"),
    ("TCP input: acceptance, PAWS, timestamps, dispatch", r"on_segment|/crates/tcp/src/conn\.rs"),
    ("TCP socket calls and the transport seam", r"/crates/tcp/src/(transport|lib)\.rs"),
    ("application (the bulk stream)", r"/crates/workload/src/"),
    ("engine: event loop, send and arrival paths, demultiplexing, timers", r"/crates/sim/src/|tcplab_sim::"),
    ("start-up, parsing, output", r"/crates/(lab|cli|report)/src/|serde|toml|rayon"),
]
STATS_LINE = re.compile(r"\bself\.st\.|\.st\.[a-z_]+\s*[+\-]?=|estats|probe\.")
OTHER = "other (std, libc copies, runtime)"


def parse(path, binary):
    """Exclusive Ir per instruction address of the object `binary`; and per function elsewhere."""
    names = {"ob": {}, "fn": {}}
    ob = fn = None
    costs = collections.Counter()
    foreign = collections.Counter()
    addr = 0
    skip_next = False
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*" or line.startswith("0x"):
                parts = line.split()
                a = parts[0]
                if a.startswith("0x"):
                    addr = int(a, 16)
                elif a[0] == "+":
                    addr += int(a[1:], 16) if a[1:].startswith("0x") else int(a[1:])
                elif a[0] == "-":
                    addr -= int(a[1:], 16) if a[1:].startswith("0x") else int(a[1:])
                ir = int(parts[2]) if len(parts) > 2 else 0
                if skip_next:
                    skip_next = False
                    continue
                if ob == binary:
                    costs[addr] += ir
                else:
                    foreign[fn] += ir
                continue
            key, _, val = line.partition("=")
            if key in ("ob", "fn"):
                m = re.match(r"\((\d+)\)(?: (.*))?", val)
                if m:
                    if m.group(2) is not None:
                        names[key][m.group(1)] = m.group(2)
                    v = names[key].get(m.group(1))
                else:
                    v = val
                if key == "ob":
                    ob = v
                else:
                    fn = v
            elif key in ("cob", "cfn"):
                m = re.match(r"\((\d+)\)(?: (.*))?", val)
                if m and m.group(2) is not None:
                    names[key[1:]][m.group(1)] = m.group(2)
            elif key == "calls":
                skip_next = True
    return costs, foreign


def resolve(binary, addrs):
    """GNU addr2line: `-a` prints each address before its frames, which separates the answers."""
    inp = "".join("0x%x\n" % a for a in addrs)
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-C", "-e", binary], input=inp,
                         capture_output=True, text=True, check=True).stdout
    res = {}
    cur = None
    frames = []
    for ln in out.split("\n"):
        if ln.startswith("0x") and not frames[-1:] == [None]:
            if cur is not None:
                res[cur] = frames
            cur, frames = int(ln, 16), []
        elif ln:
            frames.append(ln)
    if cur is not None:
        res[cur] = frames
    return {a: [(f[i], f[i + 1] if i + 1 < len(f) else "") for i in range(0, len(f), 2)]
            for a, f in res.items()}


_src = {}


def source_line(loc):
    path, _, rest = loc.rpartition(":")
    try:
        n = int(rest.split()[0])
    except (ValueError, IndexError):
        return ""
    if path not in _src:
        try:
            with open(path) as f:
                _src[path] = f.read().split("\n")
        except OSError:
            _src[path] = []
    lines = _src[path]
    return lines[n - 1] if 0 < n <= len(lines) else ""


def classify(chain):
    if chain and "/crates/" in chain[0][1] and STATS_LINE.search(source_line(chain[0][1])):
        return "statistics and probes"
    for func, loc in chain:
        text = func + "\t" + loc
        for step, rx in RULES:
            if re.search(rx, text):
                return step
    return OTHER


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("profile")
    ap.add_argument("binary")
    ap.add_argument("--segments", type=int, required=True, help="data segments sent in the run")
    args = ap.parse_args()
    binary_name = args.binary
    # The object's name as callgrind wrote it (the path the binary ran from).
    with open(args.profile) as f:
        obs = set(re.findall(r"^c?ob=\(\d+\) (.*)$", f.read(), re.M))
    match = [o for o in obs if o.endswith("/" + binary_name.split("/")[-1])]
    if not match:
        sys.exit("binary %s not in the profile's objects %s" % (binary_name, sorted(obs)))
    costs, foreign = parse(args.profile, match[0])
    chains = resolve(args.binary, sorted(costs))
    by = collections.Counter()
    for a, ir in costs.items():
        by[classify(chains[a])] += ir
    for fn, ir in foreign.items():
        by[classify([(fn or "", "")])] += ir
    total = sum(by.values())
    print("| step | instructions | per data segment |")
    print("|---|---|---|")
    for step, ir in by.most_common():
        print("| %s | %.2f M | %d |" % (step, ir / 1e6, round(ir / args.segments)))
    print("| **total** | **%.2f M** | **%d** |" % (total / 1e6, round(total / args.segments)))


if __name__ == "__main__":
    main()
