#!/usr/bin/env python3
"""The chain of 100 dependent tiny kernels, replayed as a CUDA graph, from a
process that holds nothing but the driver (ctypes on libcuda and NVRTC).

    python3 tests/bench/peers/chain_driver.py [--import-cupy] [--import-torch]

bench-graph's raw chain replay (in the atomr process) took 98-112 us and
CuPy's (in its own process, the same kernel source) 80-93 us, with x at the
same 32 offsets of one allocation and the same cubin: the difference is the
process, not the memory or the code.  This script measures the chain in a
third process, the bare driver, optionally after importing CuPy or PyTorch
(to see whether importing one changes the GPU's timing), and prints the
median over the 32 offsets.  Informational: nothing asserts on it.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import ctypes
import ctypes.util
import glob
import os
import statistics
import sys
import time

SOURCE = b'extern "C" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }\n'
CHAIN = 100
REPS = 60
N_OFFSETS = 32
STEP = 4096 + 64


def load_nvrtc():
    names = ['libnvrtc.so', 'libnvrtc.so.13', 'libnvrtc.so.12']
    paths = []
    for root in ['/usr/local/cuda/lib64', '/usr/local/cuda/targets/x86_64-linux/lib']:
        paths += sorted(glob.glob(os.path.join(root, 'libnvrtc.so*')))
    paths += sorted(glob.glob(os.path.join(sys.prefix, 'lib/python3*/site-packages/nvidia/*/lib/libnvrtc.so*')))
    for p in paths + names:
        try:
            return ctypes.CDLL(p), p
        except OSError:
            continue
    raise SystemExit('chain_driver: no NVRTC found')


def check(res, what):
    if res != 0:
        raise SystemExit(f'chain_driver: {what} returned {res}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--import-cupy', action='store_true')
    ap.add_argument('--import-torch', action='store_true')
    ap.add_argument('--poller', action='store_true',
                    help='another thread asks cuEventQuery about a passed event all along')
    ap.add_argument('--blocked-wait', action='store_true',
                    help='another stream waits (cuStreamWaitValue32) on a host word all along')
    ap.add_argument('--churn-graphs', type=int, default=0,
                    help='first make, instantiate, upload and destroy this many chain graphs')
    ap.add_argument('--churn-streams', type=int, default=0,
                    help='first create and destroy this many streams')
    ap.add_argument('--free-churn', action='store_true',
                    help='sweep; allocate and free small buffers; sweep; allocate only; sweep')
    ap.add_argument('--naps', action='store_true',
                    help='sweep, 300 naps of 1 ms, sweep, 0.3 s asleep, sweep')
    ap.add_argument('--heavy', action='store_true',
                    help='sweep, load and launch a kernel with a large stack/local array, sweep again')
    ap.add_argument('--phases', action='store_true',
                    help='the sweep fresh, after 1 s of launch + sync round trips, and after 1 s idle')
    args = ap.parse_args()
    label = 'bare driver'
    if args.import_cupy:
        import cupy  # noqa: F401  (only imported: does it change the GPU's timing?)
        cupy.zeros(1)
        label += ' + cupy imported and used once'
    if args.import_torch:
        import torch
        torch.zeros(1, device='cuda')
        label += ' + torch imported and used once'

    cu = ctypes.CDLL('libcuda.so.1')
    nvrtc, nvrtc_path = load_nvrtc()
    check(cu.cuInit(0), 'cuInit')
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), 'cuDeviceGet')
    major, minor = ctypes.c_int(), ctypes.c_int()
    check(cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev), 'cuDeviceGetAttribute')
    check(cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev), 'cuDeviceGetAttribute')
    ctx = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), 'cuDevicePrimaryCtxRetain')
    check(cu.cuCtxSetCurrent(ctx), 'cuCtxSetCurrent')

    opts = (ctypes.c_char_p * 1)(f'-arch=sm_{major.value}{minor.value}'.encode())

    def compile_load(source, name):
        """@source compiled to a cubin for this GPU, loaded: (module, function @name)."""
        prog = ctypes.c_void_p()
        check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, name + b'.cu', 0, None, None),
              'nvrtcCreateProgram')
        check(nvrtc.nvrtcCompileProgram(prog, 1, opts), 'nvrtcCompileProgram ' + name.decode())
        size = ctypes.c_size_t()
        check(nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size)), 'nvrtcGetCUBINSize')
        cubin = ctypes.create_string_buffer(size.value)
        check(nvrtc.nvrtcGetCUBIN(prog, cubin), 'nvrtcGetCUBIN')
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        check(cu.cuModuleLoadData(ctypes.byref(module), cubin), 'cuModuleLoadData')
        check(cu.cuModuleGetFunction(ctypes.byref(function), module, name), 'cuModuleGetFunction')
        return module, function

    module, func = compile_load(SOURCE, b'inc')

    stream = ctypes.c_void_p()
    check(cu.cuStreamCreate(ctypes.byref(stream), 1), 'cuStreamCreate')
    base = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(base), ctypes.c_size_t(N_OFFSETS * STEP + 64)), 'cuMemAlloc')
    check(cu.cuMemsetD8Async(base, ctypes.c_ubyte(0), ctypes.c_size_t(N_OFFSETS * STEP + 64), stream),
          'cuMemsetD8Async')
    for _ in range(args.churn_streams):
        s = ctypes.c_void_p()
        check(cu.cuStreamCreate(ctypes.byref(s), 1), 'cuStreamCreate')
        check(cu.cuStreamDestroy_v2(s), 'cuStreamDestroy')
    if args.churn_streams:
        label += f' after {args.churn_streams} streams made and destroyed'
    def chain_exec(addr):
        """The chain on the word at @addr, captured (thread-local), instantiated
        and uploaded to stream; the graph itself destroyed."""
        ptr = ctypes.c_uint64(addr)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(ptr), ctypes.c_void_p))
        check(cu.cuStreamBeginCapture_v2(stream, 1), 'cuStreamBeginCapture')  # thread-local
        for _ in range(CHAIN):
            check(cu.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, stream, params, None), 'cuLaunchKernel')
        graph, ex = ctypes.c_void_p(), ctypes.c_void_p()
        check(cu.cuStreamEndCapture(stream, ctypes.byref(graph)), 'cuStreamEndCapture')
        check(cu.cuGraphInstantiateWithFlags(ctypes.byref(ex), graph, ctypes.c_ulonglong(0)), 'cuGraphInstantiate')
        check(cu.cuGraphUpload(ex, stream), 'cuGraphUpload')
        check(cu.cuGraphDestroy(graph), 'cuGraphDestroy')
        return ex

    for _ in range(args.churn_graphs):
        ex = chain_exec(base.value)
        check(cu.cuGraphLaunch(ex, stream), 'cuGraphLaunch')
        check(cu.cuStreamSynchronize(stream), 'cuStreamSynchronize')
        check(cu.cuGraphExecDestroy(ex), 'cuGraphExecDestroy')
    if args.churn_graphs:
        label += f' after {args.churn_graphs} graphs made and destroyed'
    execs = [chain_exec(base.value + o * STEP) for o in range(N_OFFSETS)]
    check(cu.cuStreamSynchronize(stream), 'cuStreamSynchronize')
    stop = []
    if args.poller:
        import threading
        ev = ctypes.c_void_p()
        check(cu.cuEventCreate(ctypes.byref(ev), 2), 'cuEventCreate')  # disable timing
        check(cu.cuEventRecord(ev, stream), 'cuEventRecord')
        check(cu.cuStreamSynchronize(stream), 'cuStreamSynchronize')

        def poll():
            check(cu.cuCtxSetCurrent(ctx), 'cuCtxSetCurrent')
            while not stop:
                cu.cuEventQuery(ev)
        poller = threading.Thread(target=poll)
        poller.start()
        label += ' + a thread polling cuEventQuery'
    word = ctypes.c_void_p()
    if args.blocked_wait:
        check(cu.cuMemHostAlloc(ctypes.byref(word), ctypes.c_size_t(4), 2), 'cuMemHostAlloc')  # DEVICEMAP
        ctypes.c_uint32.from_address(word.value).value = 0
        dword = ctypes.c_uint64()
        check(cu.cuMemHostGetDevicePointer_v2(ctypes.byref(dword), word, 0), 'cuMemHostGetDevicePointer')
        waiter = ctypes.c_void_p()
        check(cu.cuStreamCreate(ctypes.byref(waiter), 1), 'cuStreamCreate')
        check(cu.cuStreamWaitValue32_v2(waiter, dword, ctypes.c_uint32(1), 0), 'cuStreamWaitValue32')  # GEQ
        label += ' + a stream waiting on a host word'
    launch, sync = cu.cuGraphLaunch, cu.cuStreamSynchronize
    clock = time.perf_counter

    def sweep():
        times = [[] for _ in range(N_OFFSETS)]
        for r in range(REPS + 5):
            for o, ex in enumerate(execs):
                t0 = clock()
                launch(ex, stream)
                sync(stream)
                if r >= 5:
                    times[o].append((clock() - t0) * 1e6)
        return sorted(statistics.median(t) for t in times)

    med = sweep()
    if args.free_churn:
        print(f'# chain_driver free-churn: fresh: median {med[N_OFFSETS // 2]:.2f} us')
        kept = []
        for k in range(1, 4):
            p = ctypes.c_uint64()
            check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(64)), 'cuMemAlloc')
            kept.append(p)
            m = sweep()
            print(f'# chain_driver free-churn: after {k} small allocations kept: median {m[N_OFFSETS // 2]:.2f} us')
        for k in range(1, 4):
            for size in (N_OFFSETS * STEP + 64, 64):
                p = ctypes.c_uint64()
                check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size)), 'cuMemAlloc')
                check(cu.cuMemFree_v2(p), 'cuMemFree')
            m = sweep()
            print(f'# chain_driver free-churn: after {k} allocate + free rounds: median {m[N_OFFSETS // 2]:.2f} us')
    if args.naps:
        print(f'# chain_driver naps: fresh: median {med[N_OFFSETS // 2]:.2f} us')
        time.sleep(0.3)
        m = sweep()
        print(f'# chain_driver naps: after 0.3 s asleep: median {m[N_OFFSETS // 2]:.2f} us')
        for _ in range(300):
            time.sleep(0.001)
        m = sweep()
        print(f'# chain_driver naps: after 300 naps of 1 ms: median {m[N_OFFSETS // 2]:.2f} us')
        m = sweep()
        print(f'# chain_driver naps: and again: median {m[N_OFFSETS // 2]:.2f} us')
    if args.heavy:
        src = (b'extern "C" __global__ void heavy (float *x, int n) {\n'
               b'  float a[8192]; for (int i = 0; i < 8192; i++) a[i] = x[i % 4] * i;\n'
               b'  float s = 0; for (int i = 0; i < n; i++) s += a[(i * 7919) % 8192];\n'
               b'  if (threadIdx.x == 0) x[0] = s; }\n')
        hmod, hfunc = compile_load(src, b'heavy')
        print(f'# chain_driver heavy: fresh: median {med[N_OFFSETS // 2]:.2f} us')
        m = sweep()
        print(f'# chain_driver heavy: after loading it: median {m[N_OFFSETS // 2]:.2f} us')
        ptr = ctypes.c_uint64(base.value)
        n = ctypes.c_int(16)
        hparams = (ctypes.c_void_p * 2)(ctypes.cast(ctypes.byref(ptr), ctypes.c_void_p),
                                        ctypes.cast(ctypes.byref(n), ctypes.c_void_p))
        check(cu.cuLaunchKernel(hfunc, 1, 1, 1, 32, 1, 1, 0, stream, hparams, None), 'cuLaunchKernel heavy')
        check(cu.cuStreamSynchronize(stream), 'cuStreamSynchronize')
        m = sweep()
        print(f'# chain_driver heavy: after launching it once: median {m[N_OFFSETS // 2]:.2f} us')
    if args.phases:
        def show(what, m):
            print(f'# chain_driver phases: {what:40} min {m[0]:.2f}, median {m[N_OFFSETS // 2]:.2f}, '
                  f'max {m[-1]:.2f} us')
        show('fresh', med)
        ptr = ctypes.c_uint64(base.value + N_OFFSETS * STEP)
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(ptr), ctypes.c_void_p))
        t_end = clock() + 1.0
        n = 0
        while clock() < t_end:
            cu.cuLaunchKernel(func, 1, 1, 1, 32, 1, 1, 0, stream, params, None)
            sync(stream)
            n += 1
        show(f'after 1 s of round trips ({n})', sweep())
        show('right after that sweep', sweep())
        time.sleep(1.0)
        show('after 1 s idle', sweep())
    if args.poller:
        stop.append(True)
        poller.join()
    if args.blocked_wait:
        ctypes.c_uint32.from_address(word.value).value = 1
        check(cu.cuStreamSynchronize(waiter), 'cuStreamSynchronize')
    # What the timing itself costs here: an empty ctypes call pair.
    t = []
    for _ in range(2000):
        t0 = clock()
        cu.cuCtxGetDevice(ctypes.byref(dev))
        cu.cuCtxGetDevice(ctypes.byref(dev))
        t.append((clock() - t0) * 1e6)
    print(f'# chain_driver ({label}; {nvrtc_path}): chain of {CHAIN} replayed, x at {N_OFFSETS} offsets, '
          f'median of {REPS} each: min {med[0]:.2f}, median {med[N_OFFSETS // 2]:.2f}, max {med[-1]:.2f} us '
          f'(two ctypes calls cost {statistics.median(t):.2f} us)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
