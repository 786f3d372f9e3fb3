#!/usr/bin/python3
"""inspector-ir.py — what the inspector server costs the application's
thread, in instructions per operation, from callgrind

    tests/bench/trace/inspector-ir.py [BUILD_DIR] [--row alone|idle|record|stream|batch|all] [--n N]

Runs build/tests/bench/trace/bench-inspector-host ROW under
`valgrind --tool=callgrind --toggle-collect=measure_row` with N and 2N
fills per round (5 rounds, after a warm-up of every row that is the same
in both runs) and prints (Ir(2N) - Ir(N)) / (5 N): the instructions the
application's thread (the one that submits and completes, inside
measure_row) runs per operation, and the difference to the actor alone.
Callgrind counts per thread, so the server's and the client's threads
are not in it.  Instruction counts, unlike times, compare exactly on a
loaded machine; they do not show cache misses or contention.  Needs
valgrind; informational only (nothing asserts on it).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROUNDS = 5
ROWS = ["alone", "idle", "record", "stream", "batch"]


FUNCS = ["op_observe", "atomr_launch_info_now_ns"]


def profile(bench, row, n):
    """Total Ir inside measure_row, and per function of FUNCS its
    inclusive Ir and calls (from the calls= lines of the raw output)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ)
        env.pop("G_SLICE", None)
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=measure_row",
                        "--callgrind-out-file=" + out, bench, row, str(n)],
                       check=True, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        total = None
        names = {}
        funcs = {f: [0, 0] for f in FUNCS}   # inclusive Ir, calls
        pending = None
        with open(out) as f:
            for line in f:
                m = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if m:
                    total = int(m.group(1))
                    continue
                # Compressed names: "(id) name" defines id for fn= and cfn= alike.
                m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
                if m:
                    if m.group(3):
                        names[m.group(2)] = m.group(3)
                    if m.group(1):
                        pending = names.get(m.group(2))
                    continue
                m = re.match(r"calls=(\d+) ", line)
                if m and pending is not None:
                    calls = int(m.group(1))
                    cost = next(f).split()
                    if pending in funcs:
                        funcs[pending][0] += int(cost[1]) if len(cost) > 1 else 0
                        funcs[pending][1] += calls
                    pending = None
        if total is None:
            sys.exit("inspector-ir: no totals in the callgrind output")
        return total, funcs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", nargs="?", default="build")
    parser.add_argument("--row", default="all", choices=ROWS + ["all"])
    parser.add_argument("--n", type=int, default=4000)
    args = parser.parse_args()
    bench = os.path.join(args.build_dir, "tests/bench/trace/bench-inspector-host")
    rows = ROWS if args.row == "all" else [args.row]
    alone = None
    ops = ROUNDS * args.n
    for row in rows:
        a, fa = profile(bench, row, args.n)
        b, fb = profile(bench, row, 2 * args.n)
        per_op = (b - a) / ops
        if row == "alone":
            alone = per_op
        extra = f" ({per_op - alone:+.0f} vs alone)" if alone is not None and row != "alone" else ""
        detail = ", ".join(f"{name} {(fb[name][0] - fa[name][0]) / ops:.1f} Ir "
                           f"in {(fb[name][1] - fa[name][1]) / ops:.3f} calls"
                           for name in FUNCS)
        print(f"{row:8s} {per_op:9.0f} Ir per operation{extra}; per operation: {detail}", flush=True)
    print(f"(callgrind, application thread inside measure_row, {ROUNDS}x{args.n} vs "
          f"{ROUNDS}x{2 * args.n} fills; the total includes the main loop's polling, which varies "
          "with how long it waits)")


if __name__ == "__main__":
    main()
