#!/usr/bin/env python3
"""The workloads of bench-tensor through PyTorch and CuPy, for comparison
in the same run on the same GPU:

    build/tests/bench/tensor/bench-tensor --json /tmp/atomr-tensor.json
    python3 tests/bench/tensor/peer_torch.py --atomr /tmp/atomr-tensor.json

(b) a 512^3 f32 tensor permuted ("abc->cab", "abc->cba", "abc->acb"):
    torch permute().contiguous(), CuPy ascontiguousarray(transpose());
    GB/s as read + write bytes, and the ratio to the peer's own copy of
    the same bytes;
(c) sum over each axis of an 8192x8192 f32 matrix, GB/s of the bytes
    read, and the ratio to the same copy bandwidth;
(a) "abcd,cdef->abef" with extents 64 in f32 (TF32 off and on) and bf16:
    torch.einsum, torch.tensordot, cupy.einsum and cupy.tensordot
    (CuPy: f32 only — bf16 is no CuPy dtype and CuPy's TF32 switch is an
    environment variable read at import), TFLOP/s.

With --atomr, every row also prints atomr / peer (>= 1.0: the Tensor
actor at least as fast; the issue's goals: contraction >= 0.9 of PyTorch,
permutation and reduction >= 0.85 of the copy bandwidth, printed by
bench-tensor itself).

Each figure: best of 5 repetitions of 20 calls (10 for contractions),
timed with CUDA events.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import sys

REPS = 5
ITERS = 20
CONTRACT_ITERS = 10


def best_seconds(sync, event, fn, iters=ITERS):
    fn()
    sync()
    best = float('inf')
    for _ in range(REPS):
        start, end = event(), event()
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed(end))
    return best


def ratio(atomr, key, field, peer_value):
    if atomr is None or key not in atomr:
        return ''
    return f'  atomr/peer {atomr[key][field] / peer_value:.3f}'


def run_torch(atomr):
    try:
        import torch
    except ImportError:
        print('peer_torch: PyTorch is not installed')
        return
    if not torch.cuda.is_available():
        print('peer_torch: no CUDA device for PyTorch')
        return
    dev = torch.device('cuda')

    class Ev:
        def __init__(self):
            self.e = torch.cuda.Event(enable_timing=True)

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed(self, end):
            return self.e.elapsed_time(end.e) / 1e3

    sync = torch.cuda.synchronize
    print(f'# PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}; '
          f'best of {REPS} x {ITERS} calls')

    a = torch.ones((512, 512, 512), dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    nbytes = a.numel() * 4
    t = best_seconds(sync, Ev, lambda: b.copy_(a))
    copy_gbps = 2 * nbytes * ITERS / t / 1e9
    print(f'torch copy      copy_ 512^3 f32              {copy_gbps:8.1f} GB/s (read+write)')
    for name, perm in (('abc->cab', (2, 0, 1)), ('abc->cba', (2, 1, 0)), ('abc->acb', (0, 2, 1))):
        t = best_seconds(sync, Ev, lambda: a.permute(*perm).contiguous())
        gbps = 2 * nbytes * ITERS / t / 1e9
        print(f'torch permute   {name:10s} 512^3 f32        {gbps:8.1f} GB/s  ratio to copy '
              f'{gbps / copy_gbps:.3f}{ratio(atomr, "permute " + name, "gbps", gbps)}')
    del a, b

    m = torch.ones((8192, 8192), dtype=torch.float32, device=dev)
    for name, axis in (('ab->a', 1), ('ab->b', 0)):
        t = best_seconds(sync, Ev, lambda: m.sum(dim=axis))
        gbps = m.numel() * 4 * ITERS / t / 1e9
        print(f'torch reduce    {name:6s} 8192^2 f32 axis {axis}        {gbps:8.1f} GB/s  ratio to copy '
              f'{gbps / copy_gbps:.3f}{ratio(atomr, "reduce " + name, "gbps", gbps)}')
    del m

    flops = 2 * 64 ** 6
    for label, dtype, tf32 in (('f32', torch.float32, False), ('f32/TF32', torch.float32, True),
                               ('bf16', torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        x = torch.randn((64,) * 4, dtype=dtype, device=dev)
        y = torch.randn((64,) * 4, dtype=dtype, device=dev)
        for fname, fn in (('einsum', lambda: torch.einsum('abcd,cdef->abef', x, y)),
                          ('tensordot', lambda: torch.tensordot(x, y, dims=2))):
            t = best_seconds(sync, Ev, fn, CONTRACT_ITERS)
            tf = flops * CONTRACT_ITERS / t / 1e12
            print(f'torch {fname:9s} abcd,cdef->abef 64^4 {label:9s} {tf:8.2f} TFLOP/s'
                  f'{ratio(atomr, "contract " + label, "tflops", tf)}')
    torch.backends.cuda.matmul.allow_tf32 = False


def run_cupy(atomr):
    try:
        import cupy as cp
    except ImportError as e:
        print(f'peer_torch: CuPy is not available ({e})')
        return

    class Ev:
        def __init__(self):
            self.e = cp.cuda.Event()

        def record(self):
            self.e.record()

        def synchronize(self):
            self.e.synchronize()

        def elapsed(self, end):
            return cp.cuda.get_elapsed_time(self.e, end.e) / 1e3

    def sync():
        cp.cuda.Device().synchronize()

    print(f'# CuPy {cp.__version__}; best of {REPS} x {ITERS} calls')
    a = cp.ones((512, 512, 512), dtype=cp.float32)
    b = cp.empty_like(a)
    nbytes = a.size * 4
    t = best_seconds(sync, Ev, lambda: b.__setitem__(Ellipsis, a))
    copy_gbps = 2 * nbytes * ITERS / t / 1e9
    print(f'cupy  copy      b[...] = a 512^3 f32         {copy_gbps:8.1f} GB/s (read+write)')
    for name, perm in (('abc->cab', (2, 0, 1)), ('abc->cba', (2, 1, 0)), ('abc->acb', (0, 2, 1))):
        t = best_seconds(sync, Ev, lambda: cp.ascontiguousarray(a.transpose(perm)))
        gbps = 2 * nbytes * ITERS / t / 1e9
        print(f'cupy  permute   {name:10s} 512^3 f32        {gbps:8.1f} GB/s  ratio to copy '
              f'{gbps / copy_gbps:.3f}{ratio(atomr, "permute " + name, "gbps", gbps)}')
    del a, b

    m = cp.ones((8192, 8192), dtype=cp.float32)
    for name, axis in (('ab->a', 1), ('ab->b', 0)):
        t = best_seconds(sync, Ev, lambda: m.sum(axis=axis))
        gbps = m.size * 4 * ITERS / t / 1e9
        print(f'cupy  reduce    {name:6s} 8192^2 f32 axis {axis}        {gbps:8.1f} GB/s  ratio to copy '
              f'{gbps / copy_gbps:.3f}{ratio(atomr, "reduce " + name, "gbps", gbps)}')
    del m

    flops = 2 * 64 ** 6
    x = cp.random.standard_normal((64,) * 4, dtype=cp.float32)
    y = cp.random.standard_normal((64,) * 4, dtype=cp.float32)
    for fname, fn in (('einsum', lambda: cp.einsum('abcd,cdef->abef', x, y)),
                      ('tensordot', lambda: cp.tensordot(x, y, axes=2))):
        t = best_seconds(sync, Ev, fn, CONTRACT_ITERS)
        tf = flops * CONTRACT_ITERS / t / 1e12
        print(f'cupy  {fname:9s} abcd,cdef->abef 64^4 f32       {tf:8.2f} TFLOP/s'
              f'{ratio(atomr, "contract f32", "tflops", tf)}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-tensor --json')
    args = ap.parse_args()
    atomr = None
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)
    run_torch(atomr)
    run_cupy(atomr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
