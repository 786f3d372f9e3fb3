#!/usr/bin/env python3
"""The workloads of bench-tensor through PyTorch, for comparison in the
same run on the same GPU:

    build/tests/bench/tensor/bench-tensor
    python3 tests/bench/tensor/peer_torch.py

(b) permute().contiguous() of a 512^3 f32 tensor ("abc->cab", "abc->cba",
    "abc->acb"), GB/s as read + write bytes, and the ratio to torch's own
    copy (dst.copy_(src)) of the same bytes;
(c) sum over each axis of an 8192x8192 f32 matrix, GB/s of the bytes
    read, and the ratio to the same copy bandwidth;
(a) torch.einsum("abcd,cdef->abef") with extents 64 in f32 (TF32 off and
    on) and bf16, TFLOP/s — the reference for the contraction that the
    Tensor actor does not provide yet.

Each figure: best of 5 repetitions of 20 calls, timed with CUDA events.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import sys

REPS = 5
ITERS = 20


def best_seconds(torch, fn):
    fn()
    torch.cuda.synchronize()
    best = float('inf')
    for _ in range(REPS):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(ITERS):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


def main():
    try:
        import torch
    except ImportError:
        print('peer_torch: PyTorch is not installed')
        return 0
    if not torch.cuda.is_available():
        print('peer_torch: no CUDA device')
        return 0
    dev = torch.device('cuda')
    print(f'# PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}; '
          f'best of {REPS} x {ITERS} calls')

    a = torch.ones((512, 512, 512), dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    nbytes = a.numel() * 4
    t = best_seconds(torch, lambda: b.copy_(a))
    copy_gbps = 2 * nbytes * ITERS / t / 1e9
    print(f'copy      torch copy_ 512^3 f32        {copy_gbps:8.1f} GB/s (read+write)')

    for name, perm in (('abc->cab', (2, 0, 1)), ('abc->cba', (2, 1, 0)), ('abc->acb', (0, 2, 1))):
        t = best_seconds(torch, lambda: a.permute(*perm).contiguous())
        gbps = 2 * nbytes * ITERS / t / 1e9
        print(f'permute   {name:10s} 512^3 f32        {gbps:8.1f} GB/s  ratio to copy {gbps / copy_gbps:.3f}')
    del a, b

    m = torch.ones((8192, 8192), dtype=torch.float32, device=dev)
    for name, axis in (('ab->a', 1), ('ab->b', 0)):
        t = best_seconds(torch, lambda: m.sum(dim=axis))
        gbps = m.numel() * 4 * ITERS / t / 1e9
        print(f'reduce    {name:6s} 8192^2 f32 sum over axis {axis}   {gbps:8.1f} GB/s  '
              f'ratio to copy {gbps / copy_gbps:.3f}')
    del m

    flops = 2 * 64 ** 6
    for label, dtype, tf32 in (('f32', torch.float32, False), ('f32/TF32', torch.float32, True),
                               ('bf16', torch.bfloat16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        x = torch.randn((64,) * 4, dtype=dtype, device=dev)
        y = torch.randn((64,) * 4, dtype=dtype, device=dev)
        t = best_seconds(torch, lambda: torch.einsum('abcd,cdef->abef', x, y))
        print(f'einsum    abcd,cdef->abef 64^4 {label:9s} {flops * ITERS / t / 1e12:8.2f} TFLOP/s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
