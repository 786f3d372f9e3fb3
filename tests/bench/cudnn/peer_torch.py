#!/usr/bin/env python3
"""The layer of bench-cudnn through PyTorch on the same GPU.

    bench-cudnn --json /tmp/atomr-cudnn.json
    python3 tests/bench/cudnn/peer_torch.py --atomr /tmp/atomr-cudnn.json

ResNet-50 3x3 convolution: N=32, C=K=256, 56x56, padding 1, stride 1,
bf16 channels-last, forward, backward data and backward filter (aten's
convolution_backward with one output mask each, which is what autograd
calls).  cudnn.benchmark follows --autotune, as bench-cudnn's algorithm
choice does.  Prints microseconds per call, best of 5 runs of 100
pipelined calls; with --atomr, also the ratio PyTorch time / atomr time
per pass (atomr throughput relative to PyTorch; >= 0.95 wanted).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import sys
import time

REPS = 5
ITERS = 100
N, C, K, HW = 32, 256, 256, 56


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-cudnn --json')
    ap.add_argument('--autotune', action='store_true', help='torch.backends.cudnn.benchmark = True')
    args = ap.parse_args()

    try:
        import torch
    except ImportError as e:
        print(f'peer_torch: PyTorch is not available ({e})')
        return 0
    if not torch.cuda.is_available():
        print('peer_torch: no CUDA device')
        return 0

    torch.backends.cudnn.enabled = True
    torch.backends.cudnn.benchmark = args.autotune
    dev = torch.device('cuda')
    cl = torch.channels_last
    x = torch.full((N, C, HW, HW), 0.01, dtype=torch.bfloat16, device=dev).to(memory_format=cl)
    w = torch.full((K, C, 3, 3), 0.01, dtype=torch.bfloat16, device=dev).to(memory_format=cl)
    dy = torch.full((N, K, HW, HW), 0.01, dtype=torch.bfloat16, device=dev).to(memory_format=cl)
    conv_bwd = torch.ops.aten.convolution_backward

    def fwd():
        return torch.nn.functional.conv2d(x, w, padding=1)

    def bwd_data():
        return conv_bwd(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                        [True, False, False])

    def bwd_filter():
        return conv_bwd(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                        [False, True, False])

    def best_per_call(fn):
        with torch.no_grad():
            for _ in range(5):
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

    atomr = {}
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)

    flops = 2.0 * N * K * C * 9 * HW * HW
    print(f'# PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, '
          f'{torch.cuda.get_device_name()}; benchmark={args.autotune}')
    print(f'{"pass":16} | {"torch TF/s":>10} {"torch us":>9} | {"atomr us":>9} | ratio (torch/atomr time)')
    for name, fn in (('conv-fwd', fwd), ('conv-bwd-data', bwd_data), ('conv-bwd-filter', bwd_filter)):
        us = best_per_call(fn)
        line = f'{name:16} | {flops / us / 1e6:10.1f} {us:9.1f} |'
        if name in atomr:
            a = atomr[name]['atomr_us']
            line += f' {a:9.1f} | {us / a:.3f}x'
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
