#!/bin/sh
# count-hit-syscalls.sh — system calls per kernel-cache disk hit, on the CPU
#
# Runs bench-cache-hits' disk hits (memory level off; an 8 KiB and a 1 MiB
# fake image, no NVRTC, no GPU) twice under `strace -c -f`, with 200 and
# with 2200 hits of each image (plus the tenth more bench-cache-hits warms
# up with), and prints the difference divided by the 4400 extra hits: what
# one disk hit costs in system calls, whatever the fixed start-up costs
# are.  Not a test (strace may be missing).
#
# Usage: tests/bench/nvrtc/count-hit-syscalls.sh [BUILD_DIR]
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
build=${1:-build}
bench=$build/tests/bench/nvrtc/bench-cache-hits
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count () {
  # $1: N (disk hits are N/20 per image), $2: output
  strace -f -c -o "$2" "$bench" "$1" disk > /dev/null
}

count 4000 "$tmp/small"
count 44000 "$tmp/large"
# 2000 more hits of each image, plus the 10 % warm-up bench-cache-hits adds.
awk -v hits=4400 '
  FNR == 1 { file++ }
  /^[ ]*[0-9.]+ +[0-9.]+ +[0-9]+ +[0-9]+/ && $NF != "total" {
    name = $NF; calls = $4
    if (file == 1) a[name] = calls; else b[name] = calls
  }
  END {
    total = 0
    for (n in b) {
      d = (b[n] - a[n]) / hits
      if (d >= 0.01) { printf "%-16s %6.2f per hit\n", n, d; total += d }
    }
    printf "%-16s %6.2f per hit\n", "total", total
  }' "$tmp/small" "$tmp/large"
