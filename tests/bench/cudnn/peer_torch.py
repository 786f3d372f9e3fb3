#!/usr/bin/env python3
"""The rows of bench-cudnn through PyTorch on the same GPU.

    bench-cudnn --json /tmp/atomr-cudnn.json
    python3 tests/bench/cudnn/peer_torch.py --atomr /tmp/atomr-cudnn.json

ResNet-50 3x3 convolution: N=32, C=K=256, 56x56, padding 1, stride 1,
bf16 channels-last, forward, backward data and backward filter (aten's
convolution_backward with one output mask each, which is what autograd
calls); layer norm of a 16384 x 2048 bf16 activation with weight and bias,
forward (aten.native_layer_norm, which saves mean and rstd) and backward
(aten.native_layer_norm_backward with all three gradients).
cudnn.benchmark follows --autotune, as bench-cudnn's algorithm choice does.
Prints microseconds per call, best of 3 batches of pipelined calls (a
batch is as many calls as take about 0.25 s, at most 100, as in
bench-cudnn); with --atomr, also the ratio PyTorch time / atomr time per
row (atomr throughput relative to PyTorch; >= 0.95 wanted).  The whole run
takes well under a minute.

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import sys
import time

REPS = 3
MAX_ITERS = 100
BATCH_S = 0.25
COOL_S = 0.75
N, C, K, HW = 32, 256, 256, 56
ROWS, H = 16384, 2048


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
    bf16 = torch.bfloat16
    x = torch.full((N, C, HW, HW), 0.01, dtype=bf16, device=dev).to(memory_format=cl)
    w = torch.full((K, C, 3, 3), 0.01, dtype=bf16, device=dev).to(memory_format=cl)
    dy = torch.full((N, K, HW, HW), 0.01, dtype=bf16, device=dev).to(memory_format=cl)
    conv_bwd = torch.ops.aten.convolution_backward

    lx = torch.full((ROWS, H), 0.5, dtype=bf16, device=dev)
    lg = torch.ones(H, dtype=bf16, device=dev)
    lb = torch.zeros(H, dtype=bf16, device=dev)
    ldy = torch.full((ROWS, H), 0.01, dtype=bf16, device=dev)
    _, lmean, lrstd = torch.ops.aten.native_layer_norm(lx, [H], lg, lb, 1e-5)

    def fwd():
        return torch.nn.functional.conv2d(x, w, padding=1)

    def bwd_data():
        return conv_bwd(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                        [True, False, False])

    def bwd_filter():
        return conv_bwd(dy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                        [False, True, False])

    def norm_fwd():
        return torch.ops.aten.native_layer_norm(lx, [H], lg, lb, 1e-5)

    def norm_bwd():
        return torch.ops.aten.native_layer_norm_backward(ldy, lx, [H], lmean, lrstd, lg, lb,
                                                         [True, True, True])

    def rms_fwd():
        # torch >= 2.4 (a composite of elementwise kernels in some versions)
        return torch.nn.functional.rms_norm(lx, [H], lg, 1e-5)

    def best_per_call(fn):
        with torch.no_grad():
            for _ in range(2):
                fn()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            per_call = (time.perf_counter() - t0) / 3
            iters = int(min(max(BATCH_S / max(per_call, 1e-7), 3), MAX_ITERS))
            best = float('inf')
            for _ in range(REPS):
                # as bench-cudnn: every timed batch starts on a GPU idle
                # for COOL_S seconds (it runs at its power cap)
                time.sleep(COOL_S)
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                torch.cuda.synchronize()
                best = min(best, (time.perf_counter() - t0) / iters)
        return best * 1e6

    atomr = {}
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)

    flops = 2.0 * N * K * C * 9 * HW * HW
    print(f'# PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, '
          f'{torch.cuda.get_device_name()}; benchmark={args.autotune}')
    print(f'{"row":16} | {"torch TF/s":>10} {"torch us":>9} | {"atomr us":>9} | ratio (torch/atomr time)')
    rows = (('conv-fwd', fwd, flops), ('conv-bwd-data', bwd_data, flops),
            ('conv-bwd-filter', bwd_filter, flops),
            ('layer-norm-fwd', norm_fwd, 0), ('layer-norm-bwd', norm_bwd, 0))
    if hasattr(torch.nn.functional, 'rms_norm'):
        rows += (('rms-norm-fwd', rms_fwd, 0),)
    for name, fn, fl in rows:
        us = best_per_call(fn)
        tf = f'{fl / us / 1e6:10.1f}' if fl else f'{"-":>10}'
        line = f'{name:16} | {tf} {us:9.1f} |'
        if name in atomr:
            a = atomr[name]['atomr_us']
            line += f' {a:9.1f} | {us / a:.3f}x'
            # bench-cudnn times convolutions on both of the actor's paths;
            # atomr_us is the default one (backend plans)
            if 'atomr_legacy_us' in atomr[name]:
                legacy = atomr[name]['atomr_legacy_us']
                line += f'  (legacy calls: {legacy:.1f} us, {us / legacy:.3f}x)'
        print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
