#!/usr/bin/env python3
"""Allocate + free of 1 MiB in a loop, in one process on the GPU machine:
PyTorch's caching allocator (torch.empty + del) against atomr's pool
(atomr_buffer_new + g_object_unref through ctypes) and cudaMalloc/cudaFree
(CuPy's runtime bindings) as the raw baseline.

Prints the median of each (µs), the ratios to cudaMalloc, the cost of an
empty ctypes call (what Python adds to atomr's number), and atomr/torch.

    ATOMR_LIB_DIR=build/lib /opt/torch/.venv/bin/python tests/python/bench_pool_torch.py

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import ctypes
import statistics
import sys
import time

import atomr_ctypes as ac

try:
    import torch
except ImportError:
    print("bench_pool_torch: SKIP (no torch)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("bench_pool_torch: SKIP (no CUDA device)")
    sys.exit(77)

N, WARM, SIZE = 20000, 500, 1 << 20


def median_us(fn):
    samples = []
    for i in range(N + WARM):
        t0 = time.perf_counter_ns()
        fn()
        if i >= WARM:
            samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000.0


def main():
    a = ac.Atomr()
    lib = a.lib
    lib.atomr_dtype_get_size.restype = ctypes.c_size_t
    lib.atomr_dtype_get_size.argtypes = [ctypes.c_int]
    torch.cuda.init()
    torch.empty(1, device="cuda")
    device = a.call("atomr_device_get", 0)
    err = ctypes.POINTER(ac.GError)()

    def atomr_alloc():
        b = lib.atomr_buffer_new(device, ac.U8, SIZE, ctypes.byref(err))
        lib.g_object_unref(b)

    def torch_alloc():
        t = torch.empty(SIZE, dtype=torch.uint8, device="cuda")
        del t

    results = {
        "torch.empty + del (caching allocator)": median_us(torch_alloc),
        "atomr_buffer_new + g_object_unref": median_us(atomr_alloc),
        "empty ctypes call (overhead in the line above)": median_us(lambda: lib.atomr_dtype_get_size(2)),
    }
    try:
        import cupy
        rt = cupy.cuda.runtime

        def raw():
            rt.free(rt.malloc(SIZE))
        base = median_us(raw)
    except ImportError:
        base = None
    torch.cuda.synchronize()
    print(f"bench_pool_torch: allocate + free of 1 MiB, median of {N} (µs"
          + (", ratio to cudaMalloc+cudaFree)" if base else ")"))
    if base:
        print(f"  cudaMalloc + cudaFree (baseline)                {base:9.3f}  1.000")
    for name, value in results.items():
        ratio = f"  {value / base:.3f}" if base else ""
        print(f"  {name:47s} {value:9.3f}{ratio}")
    atomr = results["atomr_buffer_new + g_object_unref"]
    tch = results["torch.empty + del (caching allocator)"]
    print(f"  atomr / torch: {atomr / tch:.3f} ({'atomr no slower' if atomr <= tch else 'atomr slower'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
