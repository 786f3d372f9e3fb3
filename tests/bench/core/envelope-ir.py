#!/usr/bin/python3
"""envelope-ir.py — instructions per request of the envelope, from callgrind

    tests/bench/core/envelope-ir.py [BUILD_DIR] [--mode reply|pipeline|owned|all] [--n N]

Runs build/tests/bench/core/bench-envelope-host under
`valgrind --tool=callgrind --toggle-collect=measure` with N and 2N
requests and prints (Ir(2N) - Ir(N)) / N: start-up and first-use costs
cancel out, what is left is the host cost of one request.  Instruction
counts, unlike times, compare exactly on a loaded machine.  Needs
valgrind; informational only (nothing asserts on it).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def instructions(bench, n, mode):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ)
        env.pop("G_SLICE", None)  # the operation cache stays on, as in production
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=measure",
                        "--callgrind-out-file=" + out, bench, str(n), mode],
                       check=True, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(out) as f:
            for line in f:
                m = re.match(r"(?:summary|totals):\s+(\d+)", line)
                if m:
                    return int(m.group(1))
    sys.exit("envelope-ir: no totals in the callgrind output")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build_dir", nargs="?", default="build")
    parser.add_argument("--mode", default="all", choices=["reply", "pipeline", "owned", "all"])
    parser.add_argument("--n", type=int, default=10000)
    args = parser.parse_args()
    bench = os.path.join(args.build_dir, "tests/bench/core/bench-envelope-host")
    modes = ["reply", "pipeline", "owned"] if args.mode == "all" else [args.mode]
    for mode in modes:
        a = instructions(bench, args.n, mode)
        b = instructions(bench, 2 * args.n, mode)
        print(f"{mode:8s} {(b - a) / args.n:9.0f} Ir per request "
              f"(callgrind, {args.n} vs {2 * args.n} requests)")


if __name__ == "__main__":
    main()
