#!/usr/bin/env python3
# Normalizations, LRN, dropout and the fused convolution of the cuDNN actor
# from Python: the parameter object and argument checks on the public mock
# device (CPU suite), then a layer norm (forward and backward) and a
# reproducible dropout compared with Python references on a GPU.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import math
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def on_mock():
    device = Atomr.Device.new_mock()
    cudnn = Atomr.CudnnActor.new(device)

    def t(*shape, dtype=Atomr.Dtype.F32):
        return Atomr.Tensor.empty(device, dtype, list(shape))

    bare = Atomr.Normalization()
    assert bare.props.mode == Atomr.NormMode.LAYER and bare.props.axis == 1
    assert abs(bare.props.epsilon - 1e-5) < 1e-12 and bare.props.groups == 1
    norm = Atomr.Normalization.new(Atomr.NormMode.GROUP, 1e-6)
    norm.props.groups = 2
    expect_error(Atomr.Error.NOT_SUPPORTED, 'group-norm-fwd',
                 lambda cb: cudnn.normalization_forward_async(norm, t(2, 4, 3, 3), t(4), t(4), t(2, 4, 3, 3),
                                                              t(4), t(4), None, cb),
                 cudnn.normalization_forward_finish)
    norm.props.groups = 3
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'x has 4 channels, which 3 groups do not divide',
                 lambda cb: cudnn.normalization_forward_async(norm, t(2, 4, 3, 3), None, None, t(2, 4, 3, 3),
                                                              None, None, None, cb),
                 cudnn.normalization_forward_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'lrn-fwd: size is 20',
                 lambda cb: cudnn.lrn_forward_async(20, 1e-4, 0.75, 2.0, t(2, 8, 4, 4), t(2, 8, 4, 4), None, cb),
                 cudnn.lrn_forward_finish)
    reserve = Atomr.Buffer.new(device, Atomr.Dtype.U8, 64)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'probability is 1.5',
                 lambda cb: cudnn.dropout_forward_async(1.5, t(8), t(8), reserve, None, cb),
                 cudnn.dropout_forward_finish)
    cudnn.props.dropout_seed = 7
    assert cudnn.get_dropout_seed() == 7
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'conv-bias-act',
                 lambda cb: cudnn.convolution_bias_activation_forward_async(
                     conv, Atomr.ActivationMode.RELU, 0.0, 1.0, t(2, 4, 6, 6), t(8, 4, 3, 3), t(8), 0.0, None,
                     t(2, 8, 6, 6), None, cb),
                 cudnn.convolution_bias_activation_forward_finish)
    print('ok: validation on the mock device')


def on_gpu(device):
    cudnn = Atomr.CudnnActor.new(device)
    rng = random.Random(5)
    rows, h = 6, 40

    def tensor(values, shape, dtype=Atomr.Dtype.F64):
        buf = Atomr.Buffer.new(device, dtype, len(values))
        fmt = 'd' if dtype == Atomr.Dtype.F64 else 'f'
        buf.upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}{fmt}', *values)), None)
        return Atomr.Tensor.new(buf, shape)

    def values(tensor_, fmt='d'):
        data = tensor_.get_buffer().download_sync(None).get_data()
        size = struct.calcsize(fmt)
        return struct.unpack(f'{len(data) // size}{fmt}', data)

    xs = [rng.uniform(-1, 1) + 0.5 for _ in range(rows * h)]
    gs = [rng.uniform(0.5, 1.5) for _ in range(h)]
    bs = [rng.uniform(-1, 1) for _ in range(h)]
    dys = [rng.uniform(-1, 1) for _ in range(rows * h)]
    x, g, b, dy = tensor(xs, [rows, h]), tensor(gs, [h]), tensor(bs, [h]), tensor(dys, [rows, h])
    y, dx = tensor([0.0] * (rows * h), [rows, h]), tensor([0.0] * (rows * h), [rows, h])
    dg, db = tensor([0.0] * h, [h]), tensor([0.0] * h, [h])
    mean, rstd = tensor([0.0] * rows, [rows]), tensor([0.0] * rows, [rows])
    norm = Atomr.Normalization.new(Atomr.NormMode.LAYER, 1e-5)
    run(lambda cb: cudnn.normalization_forward_async(norm, x, g, b, y, mean, rstd, None, cb),
        cudnn.normalization_forward_finish)
    run(lambda cb: cudnn.normalization_backward_async(norm, x, dy, g, mean, rstd, dx, dg, db, None, cb),
        cudnn.normalization_backward_finish)
    got_y, got_dx, got_dg = values(y), values(dx), values(dg)
    worst = 0.0
    ref_dg = [0.0] * h
    for r in range(rows):
        row = xs[r * h:(r + 1) * h]
        mu = sum(row) / h
        inv = 1.0 / math.sqrt(sum((v - mu) ** 2 for v in row) / h + 1e-5)
        xh = [(v - mu) * inv for v in row]
        gg = [dys[r * h + j] * gs[j] for j in range(h)]
        c1 = sum(gg) / h
        c2 = sum(gg[j] * xh[j] for j in range(h)) / h
        for j in range(h):
            worst = max(worst, abs(got_y[r * h + j] - (xh[j] * gs[j] + bs[j])))
            worst = max(worst, abs(got_dx[r * h + j] - inv * (gg[j] - c1 - xh[j] * c2)))
            ref_dg[j] += dys[r * h + j] * xh[j]
    worst = max(worst, max(abs(a - e) for a, e in zip(got_dg, ref_dg)))
    assert worst < 1e-12, worst
    print(f'ok: f64 layer norm forward and backward, max error {worst:.2e}')

    n = 4096
    xd = tensor([1.0] * n, [n], Atomr.Dtype.F32)
    yd = tensor([0.0] * n, [n], Atomr.Dtype.F32)
    ok, size = cudnn.get_dropout_reserve_size(xd)
    assert ok and size > 0
    reserve = Atomr.Buffer.new(device, Atomr.Dtype.U8, size)
    masks = []
    for _ in range(2):
        cudnn.set_dropout_seed(2026)
        run(lambda cb: cudnn.dropout_forward_async(0.5, xd, yd, reserve, None, cb), cudnn.dropout_forward_finish)
        masks.append(values(yd, 'f'))
    assert masks[0] == masks[1]
    assert set(masks[0]) <= {0.0, 2.0}
    print(f'ok: dropout reproducible by seed, {masks[0].count(0.0)} of {n} dropped')


def main():
    on_mock()
    device = gpu_or_none()
    if device is None:
        print('skipping the GPU part: no CUDA device')
        return 0
    on_gpu(device)
    return 0


if __name__ == '__main__':
    sys.exit(main())
