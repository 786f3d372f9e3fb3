#!/usr/bin/env python3
"""The workloads of bench-sparse through CuPy's cupyx.scipy.sparse.

    bench-sparse --json /tmp/atomr-sparse.json
    python3 tests/bench/sparse/peer_cupy.py --atomr /tmp/atomr-sparse.json

Times the same operations on matrices of the same shape and structure:
SpMV and SpMM (B: 1M x 16, column-major f32) on a 1M x 1M f32 CSR matrix
with 10 entries per row (random columns, and the band i-5 .. i+4), and
SpGEMM L.L of the 5-point 2-D Laplacian on a 316 x 316 grid.  Prints
microseconds per call, best of 5, in the units of bench-sparse; with
--atomr, also CuPy time / atomr time per row (>= 1.0: atomr at least as
fast as CuPy).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import sys
import time

REPS = 5
N_ROWS = 1_000_000
PER_ROW = 10
SPMV_CALLS = 200
SPMM_COLS = 16
SPMM_CALLS = 40
GRID = 316
SPGEMM_CALLS = 5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-sparse --json')
    args = ap.parse_args()

    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        import numpy as np
    except ImportError as e:
        print(f'peer_cupy: CuPy is not available ({e})')
        return 0

    def sync():
        cp.cuda.Device().synchronize()

    def best_per_call(fn, calls):
        fn()
        sync()
        best = float('inf')
        for _ in range(REPS):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            sync()
            best = min(best, (time.perf_counter() - t0) / calls * 1e6)
        return best

    def matrix(banded):
        rng = np.random.default_rng(42)
        if banded:
            rows, cols = [], []
            for d in range(-PER_ROW // 2, PER_ROW // 2):
                i = np.arange(max(0, -d), min(N_ROWS, N_ROWS - d))
                rows.append(i)
                cols.append(i + d)
            rows = np.concatenate(rows)
            cols = np.concatenate(cols)
        else:
            rows = np.repeat(np.arange(N_ROWS), PER_ROW)
            cols = rng.integers(0, N_ROWS, size=N_ROWS * PER_ROW)
        vals = (1.0 + ((rows + cols) % 7) / 8.0).astype(np.float32)
        coo = csp.coo_matrix((cp.asarray(vals), (cp.asarray(rows), cp.asarray(cols))),
                             shape=(N_ROWS, N_ROWS))
        a = coo.tocsr()
        a.sum_duplicates()
        a.sort_indices()
        return a

    def laplacian():
        n = GRID * GRID
        i = np.arange(n)
        r, c = i // GRID, i % GRID
        rows, cols, vals = [i], [i], [np.full(n, 4.0)]
        for ok, j in ((r > 0, i - GRID), (c > 0, i - 1), (c < GRID - 1, i + 1), (r < GRID - 1, i + GRID)):
            rows.append(i[ok])
            cols.append(j[ok])
            vals.append(np.full(ok.sum(), -1.0))
        coo = csp.coo_matrix((cp.asarray(np.concatenate(vals).astype(np.float32)),
                              (cp.asarray(np.concatenate(rows)), cp.asarray(np.concatenate(cols)))),
                             shape=(n, n))
        a = coo.tocsr()
        a.sort_indices()
        return a

    results = {}
    print(f'# peer_cupy: CuPy {cp.__version__} on {cp.cuda.runtime.getDeviceProperties(0)["name"].decode()}; '
          f'best of {REPS}; us per call')
    for banded in (False, True):
        name = 'banded' if banded else 'random'
        a = matrix(banded)
        x = cp.ones(N_ROWS, dtype=cp.float32)
        b = cp.asfortranarray(cp.ones((N_ROWS, SPMM_COLS), dtype=cp.float32))
        results[f'spmv-{name}'] = best_per_call(lambda: a @ x, SPMV_CALLS)
        results[f'spmm16-{name}'] = best_per_call(lambda: a @ b, SPMM_CALLS)
        del a, b, x
    lap = laplacian()
    results['spgemm-laplace2d'] = best_per_call(lambda: lap @ lap, SPGEMM_CALLS)

    atomr = {}
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)
    print(f'{"op-matrix":<20} {"cupy us/call":>14} {"atomr us/call":>14} {"cupy/atomr":>11}')
    for key, us in results.items():
        if key in atomr:
            a_us = atomr[key]['atomr_us']
            print(f'{key:<20} {us:14.2f} {a_us:14.2f} {us / a_us:11.3f}')
        else:
            print(f'{key:<20} {us:14.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
