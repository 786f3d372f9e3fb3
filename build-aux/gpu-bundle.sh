#!/usr/bin/env bash
# build-aux/gpu-bundle.sh [OUTDIR] [BUILDDIR] — pack every GPU test program,
# every benchmark and the Python tests (with their interpreter) for the GPU
# machine, with a runner:  OUTDIR/gpu-suite.sh  (logs and traces go to $OUT).
# Uses the device bundle script that sits beside the checkout
# (../shared/device/bundle); run from the project root.
set -euo pipefail
out=${1:-.dev-bundle}
build=${2:-build}
bundle=${BUNDLE:-../shared/device/bundle}
rm -rf "$out"
mapfile -t programs < <(find "$build/tests" -type f -executable \( -name 'test-gpu-*' -o -name 'bench-*' \) | sort)
"$bundle" "$out" "${programs[@]}"
# Debug info would take the bundle past what the device tool carries.
strip --strip-debug "$out"/bin/* "$out"/lib/*.so* 2>/dev/null || true
bash "$(dirname "$0")/bundle-python.sh" "$out" "$build"
cp tests/bench/cudnn/peer_torch.py "$out/tests/peer_cudnn_torch.py"
# The peers of bench-graph (PyTorch, CuPy), run with the machine's Python.
mkdir -p "$out/peers"
cp tests/bench/peers/*.py "$out/peers/"
# The peers of bench-tensor (PyTorch, CuPy) and bench-sparse (CuPy).
cp tests/bench/tensor/peer_torch.py "$out/peers/tensor_peer_torch.py"
cp tests/bench/sparse/peer_cupy.py "$out/peers/sparse_peer_cupy.py"

cp tests/bench/cudnn/peer_torch_sdpa.py "$out/tests/"
cat > "$out/gpu-suite.sh" <<'RUN'
#!/usr/bin/env bash
# Every GPU test program (TAP), the Python tests, then every benchmark.
# Logs and traces are written to a work folder and packed into
# $OUT/gpu-logs.tgz at the end (the device tool returns few files).
shopt -s extglob   # GPU_SUITE_TESTS / GPU_SUITE_BENCH may say '@(graph|cudnn*)'
here=$(cd "$(dirname "$0")" && pwd)
dest=${OUT:-$PWD}
out=$(mktemp -d)
trap 'tar -C "$out" -czf "$dest/gpu-logs.tgz" . ' EXIT
total_ok=0; total_fail=0
# GPU_SUITE_TESTS: a pattern for the test programs and Python tests to run
# (default: all), e.g. 'graph*' or '@(graph|cudnn*)'.
for p in "$here"/bin/test-gpu-${GPU_SUITE_TESTS:-*}; do
  t=$(basename "$p")
  # A hung test must not take the whole device call with it.
  (cd "$out" && timeout 300 "$here/run" "$t" --tap) > "$out/$t.log" 2>&1; rc=$?
  [ $rc -eq 124 ] && echo "$t: TIMED OUT after 300 s" >> "$out/$t.log"
  ok=$(grep -c '^ok' "$out/$t.log"); nok=$(grep -c '^not ok' "$out/$t.log")
  [ $rc -ne 0 ] && [ "$nok" -eq 0 ] && nok=1
  total_ok=$((total_ok + ok)); total_fail=$((total_fail + nok))
  echo "$t: rc=$rc ok=$ok not_ok=$nok"; grep -E "^not ok|Bail" "$out/$t.log" | head -3
done
for py in "$here"/tests/test_${GPU_SUITE_TESTS:-*}.py; do
  [ -e "$py" ] || continue
  t=$(basename "$py" .py)
  timeout 120 "$here/run-python" "$py" > "$out/py-$t.log" 2>&1; rc=$?
  echo "python $t: rc=$rc"
  if [ $rc -eq 0 ]; then total_ok=$((total_ok + 1)); else total_fail=$((total_fail + 1)); fi
done
echo "GPU suite: $total_ok passed, $total_fail failed"
# Zero-copy interop and the allocator against PyTorch, with the machine's
# own Python (torch, cupy; no PyGObject: libatomr through ctypes).
if [ -x /opt/torch/.venv/bin/python ]; then
  for s in device_interop bench_pool_torch; do
    ATOMR_LIB_DIR="$here/lib" LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      timeout 300 /opt/torch/.venv/bin/python "$here/tests/$s.py" > "$out/$s.log" 2>&1
    echo "$s rc=$?"; tail -12 "$out/$s.log"
  done
fi
# The cuDNN benchmarks load the cuDNN PyTorch ships (when there is one), so
# that atomr and its PyTorch peer run the same cuDNN build: a gap is then
# overhead, not a newer library.  GPU_SUITE_SYSTEM_CUDNN=1 keeps the
# machine's own.
torch_cudnn=
if [ -x /opt/torch/.venv/bin/python ] && [ -z "${GPU_SUITE_SYSTEM_CUDNN:-}" ]; then
  torch_cudnn=$(/opt/torch/.venv/bin/python -c 'import os, nvidia.cudnn as c; print(os.path.join(list(c.__path__)[0], "lib"))' 2>/dev/null)
  [ -e "$torch_cudnn/libcudnn.so.9" ] || torch_cudnn=
fi
# cudnn_env TIMEOUT PROGRAM ARGS...: "$here/run" with that cuDNN first on the
# search path (its sub-libraries must come from the same build).
cudnn_env() {
  local t=$1 prog=$2; shift 2
  if [ -n "$torch_cudnn" ]; then
    ATOMR_CUDNN_LIBRARY="$torch_cudnn/libcudnn.so.9" NCCL_NVLS_ENABLE=0 \
      LD_LIBRARY_PATH="$torch_cudnn:$here/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu" \
      timeout "$t" "$here/bin/$prog" "$@"
  else
    timeout "$t" "$here/run" "$prog" "$@"
  fi
}
if [ -n "$torch_cudnn" ]; then echo "cuDNN for the benchmarks: $torch_cudnn"; else echo "cuDNN for the benchmarks: the machine's own"; fi
# GPU_SUITE_BENCH: a pattern for the benchmarks to run (default: all).
for p in "$here"/bin/bench-${GPU_SUITE_BENCH:-*}; do
  b=$(basename "$p")
  [ "$b" = bench-sdpa ] && continue   # below, with its PyTorch peer
  args=()
  [ "$b" = bench-cudnn ] && args=(--json "$out/bench-cudnn.json")
  # their peers below read these figures
  [ "$b" = bench-tensor ] && args=(--json "$out/atomr-tensor.json")
  [ "$b" = bench-sparse ] && args=(--json "$out/atomr-sparse.json")
  [ "$b" = bench-peers ] && args=(--json "$out/atomr-peers.json")
  if [ "$b" = bench-cudnn ]; then
    cudnn_env 150 "$b" "${args[@]}" > "$out/$b.log" 2>&1; echo "$b rc=$?"
    # the cuDNN build, the convolution rows (raw legacy, actor backend,
    # actor legacy) and which path the actor's convolutions took
    grep -E '^(# cuDNN|pass |conv-|# convolutions run|# experiment)' "$out/$b.log"
    if [ -n "$torch_cudnn" ]; then   # and with the machine's own, for the record
      timeout 150 "$here/run" "$b" > "$out/$b-system-cudnn.log" 2>&1; echo "$b (system cuDNN) rc=$?"
    fi
  else
    timeout 150 "$here/run" "$b" "${args[@]}" > "$out/$b.log" 2>&1; echo "$b rc=$?"
  fi
done
# bench-cudnn's rows through PyTorch on the same GPU: torch/atomr ratios.
if [ -f "$out/bench-cudnn.json" ] && [ -x /opt/torch/.venv/bin/python ]; then
  timeout 120 /opt/torch/.venv/bin/python "$here/tests/peer_cudnn_torch.py" --atomr "$out/bench-cudnn.json" \
    > "$out/peer-cudnn-torch.log" 2>&1
  echo "peer_cudnn_torch rc=$?"; tail -7 "$out/peer-cudnn-torch.log"
fi
# The peers table of issue 17: bench-graph's figures as JSON, then the same
# workloads through PyTorch and CuPy (their tables name both, with ratios).
if [ -x /opt/torch/.venv/bin/python ] && [ -x "$here/bin/bench-graph" ] &&
   [[ "bench-graph" == bench-${GPU_SUITE_BENCH:-*} ]]; then
  timeout 150 "$here/run" bench-graph --json "$out/atomr-graph.json" > "$out/bench-graph-json.log" 2>&1
  echo "bench-graph --json rc=$?"
  for s in peer_torch peer_cupy; do
    timeout 150 /opt/torch/.venv/bin/python "$here/peers/$s.py" --atomr "$out/atomr-graph.json" \
      --json "$out/$s.json" > "$out/graph-$s.log" 2>&1
    echo "graph $s rc=$?"; tail -12 "$out/graph-$s.log"
  done
  # atomr from Python (the bundle's PyGObject), then the one table.
  timeout 200 "$here/run-python" "$here/peers/peer_atomr.py" --json "$out/peer_atomr.json" \
    > "$out/graph-peer_atomr.log" 2>&1
  echo "graph peer_atomr rc=$?"; tail -12 "$out/graph-peer_atomr.log"
  python3 "$here/peers/peers_table.py" --graph "$out/atomr-graph.json" --peers "$out/atomr-peers.json" \
    --python "$out/peer_atomr.json" --torch "$out/peer_torch.json" --cupy "$out/peer_cupy.json" \
    > "$out/peers-table.log" 2>&1
  echo "peers_table rc=$?"; cat "$out/peers-table.log"
fi
# bench-tensor's and bench-sparse's figures (JSON, written in the loop
# above), then the same workloads through PyTorch and CuPy (tensor, issue
# 14) and CuPy (sparse): atomr/peer ratios.
for b in tensor:tensor_peer_torch sparse:sparse_peer_cupy; do
  name=${b%%:*}; peer=${b#*:}
  if [ -x /opt/torch/.venv/bin/python ] && [ -f "$out/atomr-$name.json" ]; then
    grep -E "ratio|goal" "$out/bench-$name.log" | head -12
    timeout 200 /opt/torch/.venv/bin/python "$here/peers/$peer.py" --atomr "$out/atomr-$name.json" \
      > "$out/$peer.log" 2>&1
    echo "$peer rc=$?"; tail -16 "$out/$peer.log"
  fi
done
# bench-sdpa and PyTorch's SDPA (cuDNN backend) in the same run: ratios.
if [ -e "$here/bin/bench-sdpa" ] && [[ bench-sdpa == bench-${GPU_SUITE_BENCH:-*} ]]; then
  cudnn_env 150 bench-sdpa --json "$out/bench-sdpa.json" > "$out/bench-sdpa.log" 2>&1
  echo "bench-sdpa rc=$?"; cat "$out/bench-sdpa.log"
  if [ -n "$torch_cudnn" ]; then
    timeout 150 "$here/run" bench-sdpa > "$out/bench-sdpa-system-cudnn.log" 2>&1
    echo "bench-sdpa (system cuDNN) rc=$?"; cat "$out/bench-sdpa-system-cudnn.log"
  fi
  if [ -x /opt/torch/.venv/bin/python ]; then
    timeout 200 /opt/torch/.venv/bin/python "$here/tests/peer_torch_sdpa.py" --atomr "$out/bench-sdpa.json" \
      > "$out/peer_torch_sdpa.log" 2>&1
    echo "peer_torch_sdpa rc=$?"; cat "$out/peer_torch_sdpa.log"
  fi
fi
[ $total_fail -eq 0 ]
RUN
chmod +x "$out/gpu-suite.sh"
echo "gpu-bundle: run $out/gpu-suite.sh on the GPU machine"
