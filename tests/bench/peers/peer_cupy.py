#!/usr/bin/env python3
"""The small-operation workloads of bench-graph through CuPy.

    bench-graph --json /tmp/atomr-graph.json
    python3 tests/bench/peers/peer_cupy.py --atomr /tmp/atomr-graph.json

Rows (the same kernels and shapes as bench-graph): an empty kernel
<<<1, 32>>> launch -> completion; 10 000 pipelined tiny kernels (<<<1, 32>>>
adding 1 to x[0], a cupy.RawKernel of bench-graph's source); a chain of 100
of them, eager and as a CUDA graph (stream capture, Graph.upload once,
Graph.launch; and, as experiments, the same graph never uploaded, set
against bench-graph's raw no-upload variant, and on x from
cupy.cuda.MemoryAsyncPool, set against bench-graph's raw chain on
cuMemAllocAsync memory); SGEMM
256^3 per call (FP32; CuPy chooses TF32 only through CUPY_TF32 at import),
2000 pipelined calls.  With --atomr, the table adds atomr's figure from the
same machine and peer / atomr (> 1.0: atomr is faster on that row).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import statistics
import time

PIPELINED = 10000
CHAIN = 100
N_CHAIN = 300
ROUND_TRIPS = 2000
GEMM_N = 256
GEMM_CALLS = 2000

SOURCE = r'''
extern "C" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }
extern "C" __global__ void empty (float *x) { }
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-graph --json')
    ap.add_argument('--json', help='write the figures here (for peers_table.py)')
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError as e:
        print(f'peer_cupy: CuPy is not available ({e})')
        return 0

    module = cp.RawModule(code=SOURCE)
    inc = module.get_function('inc')
    empty = module.get_function('empty')
    stream = cp.cuda.Stream(non_blocking=True)
    rows = {}
    with stream:
        x = cp.zeros(1, dtype=cp.float32)
        dummy = cp.zeros(1, dtype=cp.float32)
        grid, block = (1,), (32,)

        # 1. launch -> completion
        t = []
        for i in range(ROUND_TRIPS + 20):
            t0 = time.perf_counter()
            empty(grid, block, (dummy,))
            stream.synchronize()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['empty_roundtrip_us'] = statistics.median(t)

        # 2. pipelined
        best = float('inf')
        for _ in range(4):
            t0 = time.perf_counter()
            for _ in range(PIPELINED):
                inc(grid, block, (x,))
            stream.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e6)
        rows['pipelined_10000_us'] = best

        # 3. chain of 100, eager and graph
        t = []
        for i in range(N_CHAIN + 20):
            t0 = time.perf_counter()
            for _ in range(CHAIN):
                inc(grid, block, (x,))
            stream.synchronize()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['chain_100_eager_us'] = statistics.median(t)
        def chain_graph(arr, upload):
            """The chain of 100 on @arr captured into a graph (uploaded
            once when @upload), and the median of launch + wait."""
            stream.begin_capture()
            for _ in range(CHAIN):
                inc(grid, block, (arr,))
            g = stream.end_capture()
            if upload:
                g.upload(stream)
            times = []
            for i in range(N_CHAIN + 20):
                t0 = time.perf_counter()
                g.launch(stream)
                stream.synchronize()
                if i >= 20:
                    times.append((time.perf_counter() - t0) * 1e6)
            return statistics.median(times)

        rows['chain_100_graph_us'] = chain_graph(x, True)
        # Experiment (same process): the same capture, never uploaded
        # (the first launch uploads it; bench-graph's raw row did this).
        rows['chain_100_graph_noupload_us'] = chain_graph(x, False)
        # Experiment: the uploaded graph on x from the stream-ordered
        # allocator (cudaMallocAsync, the device's default pool) instead of
        # CuPy's pool (cudaMalloc).  (bench-graph's raw chain measured 9%
        # slower on pool memory; its 3y sweep later showed the replay varying
        # by 13% with where x lies, so that difference may be placement.)
        try:
            xa = cp.cuda.MemoryAsyncPool().malloc(4)
            xa_arr = cp.ndarray((1,), dtype=cp.float32, memptr=xa)
            xa_arr.fill(0)
            rows['chain_100_graph_async_pool_us'] = chain_graph(xa_arr, True)
        except Exception as e:  # an old CuPy or driver: the row is left out
            print(f'# peer_cupy: no MemoryAsyncPool experiment ({e})')

        # Experiment: where x lies (bench-graph's 3y): the chain on x at
        # 32 offsets (steps of 4 KiB + 64 B) in one CuPy array.
        step = (4096 + 64) // 4
        big = cp.zeros(32 * step + 16, dtype=cp.float32)
        offs = [chain_graph(big[o * step:o * step + 1], True) for o in range(32)]
        srt = sorted(offs)
        print(f'# peer_cupy 3y: chain on x at 32 offsets of one array (base 0x{big.data.ptr:x}): '
              f'min {srt[0]:.2f}, median {srt[16]:.2f}, max {srt[-1]:.2f} us; '
              f'the x of the chain row above is at 0x{x.data.ptr:x}')
        print('#   ' + ' '.join(f'{v:.1f}' for v in offs))
        rows['chain_100_graph_offsets_median_us'] = srt[16]
        rows['chain_100_places_us'] = srt[16]   # the peers table's row

        # Experiment: the same 32 places after this process has twice made
        # a second stream, given it 200 launch + sync round trips and
        # destroyed it (bench-chain-bare's "churn", which slowed every
        # later replay of a bare-driver process by ~20% on the H200): is
        # CuPy's faster chain the process state atomr's benchmark never
        # measures in?  (Added 2026-11-29 without a device to run it on.)
        try:
            for _ in range(2):
                s2 = cp.cuda.Stream(non_blocking=True)
                with s2:
                    y = cp.zeros(1, dtype=cp.float32)
                    for _ in range(200):
                        inc(grid, block, (y,))
                        s2.synchronize()
                del y
                del s2
                cp.get_default_memory_pool().free_all_blocks()   # y's memory back to the driver
            offs = sorted(chain_graph(big[o * step:o * step + 1], True) for o in range(32))
            print(f'# peer_cupy 3y after two second-stream churns: min {offs[0]:.2f}, '
                  f'median {offs[16]:.2f}, max {offs[-1]:.2f} us')
            rows['chain_100_graph_offsets_churned_median_us'] = offs[16]
        except Exception as e:  # informational only
            print(f'# peer_cupy: no churn experiment ({e})')

        # 4. SGEMM 256, per call
        a = cp.full((GEMM_N, GEMM_N), 0.5, dtype=cp.float32)
        b = cp.full((GEMM_N, GEMM_N), 0.25, dtype=cp.float32)
        c = cp.empty((GEMM_N, GEMM_N), dtype=cp.float32)
        cp.matmul(a, b, out=c)
        stream.synchronize()
        best = float('inf')
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(GEMM_CALLS):
                cp.matmul(a, b, out=c)
            stream.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e6 / GEMM_CALLS)
        rows['gemm_256_fp32_us_per_call'] = best

        # 5. SGEMM 4096 per call (FP32; CuPy has no TF32 switch for matmul
        # but CUPY_TF32=1 at import, which would change every row)
        a4 = cp.full((4096, 4096), 0.5, dtype=cp.float32)
        b4 = cp.full((4096, 4096), 0.25, dtype=cp.float32)
        c4 = cp.empty((4096, 4096), dtype=cp.float32)
        cp.matmul(a4, b4, out=c4)
        stream.synchronize()
        best = float('inf')
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                cp.matmul(a4, b4, out=c4)
            stream.synchronize()
            best = min(best, (time.perf_counter() - t0) * 1e6 / 20)
        rows['gemm_4096_fp32_us_per_call'] = best
        del a4, b4, c4

        # 6. FFT C2C 256 x 16, launch -> completion (CuPy's plan cache)
        f = cp.full((16, 256), 0.5 + 0j, dtype=cp.complex64)
        cp.fft.fft(f)
        stream.synchronize()
        t = []
        for i in range(2000 + 20):
            t0 = time.perf_counter()
            cp.fft.fft(f)
            stream.synchronize()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['fft_c2c_256x16_us'] = statistics.median(t)

        # 7. kernel disk-cache hit -> launchable kernel: CuPy's on-disk cache
        # (CUPY_CACHE_DIR) with its in-process memo cleared before each call
        from cupy import _util
        src = 'extern "C" __global__ void empty_disk (float *x) { }\n'
        cp.RawModule(code=src).get_function('empty_disk')
        t = []
        for i in range(300 + 20):
            _util.clear_memo()
            t0 = time.perf_counter()
            cp.RawModule(code=src).get_function('empty_disk')
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['disk_cache_hit_us'] = statistics.median(t)

    atomr = None
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)
    print(f'# peer_cupy: CuPy {cp.__version__} on device {cp.cuda.Device().id}')
    print(f'{"row":44} {"cupy us":>10} {"atomr us":>10} {"cupy/atomr":>12}')
    ours = {}
    if atomr:
        ours = {
            'empty_roundtrip_us': atomr['empty_roundtrip_us']['atomr'],
            'pipelined_10000_us': atomr['pipelined_10000_us']['atomr'],
            'chain_100_eager_us': atomr['chain_100_us']['atomr_eager'],
            'chain_100_graph_us': atomr['chain_100_us']['atomr_graph'],
            'chain_100_graph_noupload_us': atomr.get('chain_100_experiments_us', {}).get('raw_no_upload'),
            'chain_100_graph_async_pool_us': atomr.get('chain_100_experiments_us', {}).get('raw_mem_alloc_async'),
            'chain_100_graph_offsets_median_us': atomr.get('chain_100_experiments_us', {}).get('raw_offsets_median'),
            'chain_100_places_us': atomr.get('chain_100_places_us', {}).get('atomr'),
            'gemm_256_fp32_us_per_call': atomr['gemm_256_fp32_us_per_call']['atomr'],
        }
    for key, value in rows.items():
        mine = ours.get(key)
        if mine:
            print(f'{key:44} {value:10.2f} {mine:10.2f} {value / mine:12.3f}')
        else:
            print(f'{key:44} {value:10.2f} {"-":>10} {"-":>12}')
    print(f'# cupy graph replay speed-up over cupy eager (chain of 100): '
          f'{rows["chain_100_eager_us"] / rows["chain_100_graph_us"]:.2f}x')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'version': cp.__version__, 'rows': rows}, f, indent=1)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
