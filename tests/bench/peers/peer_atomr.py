#!/usr/bin/env python3
"""The peers table's workloads through atomr from Python (PyGObject).

    peer_atomr.py [--json OUT]

The same rows and shapes as bench-graph and bench-peers (the C side):
an empty kernel launch -> reply; 10 000 pipelined tiny kernels (no
callback, the last with one); a chain of 100 dependent tiny kernels,
eager and as an AtomrGraph replay; SGEMM 256 and 4096 per call (FP32,
TF32); FFT C2C 256 x 16 launch -> reply; a kernel disk-cache hit to a
launchable kernel.  What it adds to the C figures is the cost of the
binding: one Python call and, for replies, one Python callback per
request.  Run with the PyGObject the GPU bundle carries
(`.dev-bundle/run-python`).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import statistics
import sys
import tempfile
import time

import gi
gi.require_version('Atomr', '1')
from gi.repository import Atomr, GLib  # noqa: E402

PIPELINED = 10000
CHAIN = 100
N_CHAIN = 300
ROUND_TRIPS = 2000
GEMM_CALLS = {256: 2000, 4096: 20}
FFT_REPS = 2000
DISK_REPS = 300

INC = 'extern "C" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }\n'
EMPTY = 'extern "C" __global__ void empty (float *x) { }\n'


class Waiter:
    """One reply at a time on the default main context."""

    def __init__(self):
        self.ctx = GLib.MainContext.default()
        self.result = None

    def cb(self, source, result):
        self.result = result

    def wait(self):
        while self.result is None:
            self.ctx.iteration(True)
        result, self.result = self.result, None
        return result


def now_us():
    return time.perf_counter() * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--json', help='write the figures here')
    args = ap.parse_args()
    try:
        device = Atomr.Device.get(0)
    except GLib.Error as error:
        print(f'peer_atomr: no device ({error.message})')
        return 0

    w = Waiter()
    rows = {}
    actor = Atomr.NvrtcActor.new(device)
    options = Atomr.CompileOptions.new()
    options.set_arch(device.get_arch())

    def compile_kernel(source, name):
        actor.compile_async(source, name, options, None, w.cb)
        return actor.compile_finish(w.wait())

    inc = compile_kernel(INC, 'inc')
    empty = compile_kernel(EMPTY, 'empty')
    x = Atomr.Buffer.new(device, Atomr.Dtype.F32, 1)
    dummy = Atomr.Buffer.new(device, Atomr.Dtype.F32, 1)
    x.fill_sync(0.0, None)
    config = Atomr.LaunchConfig.new(1, 1, 1, 32, 1, 1)
    inc_args = Atomr.KernelArgs.new().add_buffer(x)
    empty_args = Atomr.KernelArgs.new().add_buffer(dummy)

    def launch_wait(kernel, kargs):
        actor.launch_async(kernel, config, kargs, None, w.cb)
        assert actor.launch_finish(w.wait())

    # 1. empty kernel, launch -> reply
    t = []
    for i in range(ROUND_TRIPS + 20):
        t0 = now_us()
        launch_wait(empty, empty_args)
        if i >= 20:
            t.append(now_us() - t0)
    rows['empty_roundtrip_us'] = statistics.median(t)

    # 2. pipelined tiny kernels
    best = float('inf')
    for _ in range(4):
        t0 = now_us()
        for _ in range(PIPELINED - 1):
            actor.launch_async(inc, config, inc_args, None, None)
        launch_wait(inc, inc_args)
        best = min(best, now_us() - t0)
    rows['pipelined_10000_us'] = best

    # 3. chain of 100, eager and graph replay
    t = []
    for i in range(N_CHAIN + 20):
        t0 = now_us()
        for _ in range(CHAIN - 1):
            actor.launch_async(inc, config, inc_args, None, None)
        launch_wait(inc, inc_args)
        if i >= 20:
            t.append(now_us() - t0)
    rows['chain_100_eager_us'] = statistics.median(t)
    graph = Atomr.Graph.new()
    assert graph.begin_capture([actor])
    for _ in range(CHAIN):
        actor.launch_async(inc, config, inc_args, None, None)
    assert graph.end_capture()
    t = []
    for i in range(N_CHAIN + 20):
        t0 = now_us()
        graph.replay_async(actor, None, w.cb)
        assert graph.replay_finish(w.wait())
        if i >= 20:
            t.append(now_us() - t0)
    rows['chain_100_graph_us'] = statistics.median(t)

    # 4. SGEMM per call
    blas = Atomr.BlasActor.new(device)
    N = Atomr.Transpose.N
    for n, calls in GEMM_CALLS.items():
        a = Atomr.Buffer.new(device, Atomr.Dtype.F32, n * n)
        b = Atomr.Buffer.new(device, Atomr.Dtype.F32, n * n)
        c = Atomr.Buffer.new(device, Atomr.Dtype.F32, n * n)
        a.fill_sync(0.5, None)
        b.fill_sync(0.25, None)
        for tf32 in (False, True):
            blas.set_math_mode(Atomr.BlasMathMode.TF32 if tf32 else Atomr.BlasMathMode.DEFAULT)
            best = float('inf')
            for rep in range(5):
                t0 = now_us()
                for _ in range(calls - 1):
                    blas.gemm_async(N, N, n, n, n, 1.0, 0.0, a, n, b, n, 0.0, 0.0, c, n, None, None)
                blas.gemm_async(N, N, n, n, n, 1.0, 0.0, a, n, b, n, 0.0, 0.0, c, n, None, w.cb)
                assert blas.gemm_finish(w.wait())
                if rep > 0:
                    best = min(best, (now_us() - t0) / calls)
            rows['gemm_%d_%s_us_per_call' % (n, 'tf32' if tf32 else 'fp32')] = best

    # 5. FFT C2C 256 x 16, launch -> reply
    fft = Atomr.FftActor.new(device)
    plan = Atomr.FftPlan.new_1d(Atomr.FftKind.C2C, Atomr.Dtype.F32, 256, 16)
    fin = Atomr.Buffer.new(device, Atomr.Dtype.C64, 256 * 16)
    fout = Atomr.Buffer.new(device, Atomr.Dtype.C64, 256 * 16)
    fin.fill_sync(0.5, None)
    t = []
    for i in range(FFT_REPS + 20):
        t0 = now_us()
        fft.execute_async(plan, Atomr.FftDirection.FORWARD, fin, fout, None, w.cb)
        assert fft.execute_finish(w.wait())
        if i >= 20:
            t.append(now_us() - t0)
    rows['fft_c2c_256x16_us'] = statistics.median(t)

    # 6. kernel disk-cache hit -> launchable kernel
    with tempfile.TemporaryDirectory(prefix='atomr-peer-') as tmp:
        cache = Atomr.KernelCache.new(tmp)
        disk_only = Atomr.KernelCache.new(tmp)
        disk_only.set_memory_capacity(0)
        opts = Atomr.CompileOptions.new()
        opts.set_arch(device.get_arch())
        opts.add_name_expression('empty')
        Atomr.nvrtc_compile(EMPTY, None, opts, cache)
        t = []
        for i in range(DISK_REPS + 20):
            t0 = now_us()
            module = Atomr.nvrtc_compile(EMPTY, None, opts, disk_only)
            assert module.get_cache_status() == Atomr.CacheStatus.DISK_HIT
            kernel = actor.get_kernel(module, 'empty')
            if i >= 20:
                t.append(now_us() - t0)
            del kernel, module
        rows['disk_cache_hit_us'] = statistics.median(t)

    print(f'# peer_atomr: atomr from Python {sys.version.split()[0]} (PyGObject) on {device.get_name()}')
    for key, value in rows.items():
        print(f'{key:44} {value:12.2f}')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'device': device.get_name(), 'rows': rows}, f, indent=1)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
