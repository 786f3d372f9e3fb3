#!/usr/bin/env python3
"""The attention rows of bench-sdpa through PyTorch on the same GPU.

    bench-sdpa --json /tmp/atomr-sdpa.json
    python3 tests/bench/cudnn/peer_torch_sdpa.py --atomr /tmp/atomr-sdpa.json

torch.nn.functional.scaled_dot_product_attention with the cuDNN backend
forced (SDPBackend.CUDNN_ATTENTION, the flash-attention engine PyTorch uses
on Hopper), B=8, H=16, D=128, S=1024 and 4096, bf16, causal, BHSD
contiguous: the forward pass of a training step (inputs that require
gradients, so the statistics are kept) and forward + backward
(out.backward(dO)).  Prints microseconds per call, best of 5 runs of 100
pipelined calls (bench-sdpa's batch); with --atomr, also the ratio PyTorch
time / atomr time per row (atomr throughput relative to PyTorch; >= 0.95
wanted).  Run bench-sdpa with and without --autotune to compare its plan
choices.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import math
import sys
import time

REPS = 5
ITERS = 100  # bench-sdpa's ITERS
B, H, D = 8, 16, 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-sdpa --json')
    args = ap.parse_args()

    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(f'peer_torch_sdpa: PyTorch (with torch.nn.attention) is not available ({e})')
        return 0
    if not torch.cuda.is_available():
        print('peer_torch_sdpa: no CUDA device')
        return 0

    atomr = {}
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)

    dev = torch.device('cuda')
    sdpa = torch.nn.functional.scaled_dot_product_attention
    print(f'# PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, '
          f'{torch.cuda.get_device_name()}; SDPBackend.CUDNN_ATTENTION')
    print(f'{"pass":18} | {"torch TF/s":>10} {"torch us":>9} | {"atomr us":>9} | ratio (torch/atomr time)')

    def best_per_call(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        best = float('inf')
        for _ in range(REPS):
            t0 = time.perf_counter()
            for _ in range(ITERS):
                fn()
            torch.cuda.synchronize()
            best = min(best, (time.perf_counter() - t0) / ITERS)
        return best * 1e6

    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        for s in (1024, 4096):
            def make(value):
                return torch.full((B, H, s, D), value, dtype=torch.bfloat16, device=dev)
            q = make(0.01).requires_grad_()
            k = make(0.01).requires_grad_()
            v = make(0.01).requires_grad_()
            d_o = make(0.01)
            scale = 1.0 / math.sqrt(D)

            def fwd():
                return sdpa(q, k, v, is_causal=True, scale=scale)

            def fwd_bwd():
                q.grad = k.grad = v.grad = None     # no accumulation kernels
                out = sdpa(q, k, v, is_causal=True, scale=scale)
                out.backward(d_o)

            fwd_flops = 4.0 * B * H * s * s * D / 2
            for name, fn, flops in ((f'sdpa-fwd-{s}', fwd, fwd_flops),
                                    (f'sdpa-fwd-bwd-{s}', fwd_bwd, 3.5 * fwd_flops)):
                try:
                    us = best_per_call(fn)
                except RuntimeError as e:
                    print(f'{name:18} | torch failed: {e}')
                    continue
                line = f'{name:18} | {flops / us / 1e6:10.1f} {us:9.1f} |'
                if name in atomr:
                    a = atomr[name]['atomr_us']
                    line += f' {a:9.1f} | {us / a:.3f}x'
                print(line)
                q.grad = k.grad = v.grad = None
    return 0


if __name__ == '__main__':
    sys.exit(main())
