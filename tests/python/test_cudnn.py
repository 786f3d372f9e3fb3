#!/usr/bin/env python3
# The cuDNN actor from Python: argument checks on the public mock device
# (CPU suite), then a convolution (forward and backward data) and a ReLU
# compared with a Python reference on a GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def on_mock():
    device = Atomr.Device.new_mock()
    cudnn = Atomr.CudnnActor.new(device)
    assert cudnn.props.cache_capacity == 256
    assert cudnn.props.workspace_size == 0
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    ok, shape = conv.get_output_shape([2, 4, 8, 8], [6, 4, 3, 3])
    assert ok and list(shape) == [2, 6, 8, 8], shape

    def t(*shape):
        return Atomr.Tensor.empty(device, Atomr.Dtype.F32, list(shape))

    x, w, y = t(2, 4, 8, 8), t(6, 4, 3, 3), t(2, 6, 8, 8)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'conv-fwd',
                 lambda cb: cudnn.convolution_forward_async(conv, 1.0, x, w, 0.0, y, None, cb),
                 cudnn.convolution_forward_finish)
    x, w, bad = t(2, 4, 8, 8), t(6, 4, 3, 3), t(2, 6, 7, 7)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'y is 2×6×7×7 but the convolution of x by w gives 2×6×8×8',
                 lambda cb: cudnn.convolution_forward_async(conv, 1.0, x, w, 0.0, bad, None, cb),
                 cudnn.convolution_forward_finish)
    x, w = t(2, 4, 8, 8), t(4, 4, 3, 3)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output y overlaps input x',
                 lambda cb: cudnn.convolution_forward_async(conv, 1.0, x, w, 0.0, x, None, cb),
                 cudnn.convolution_forward_finish)
    # a bare convolution from the binding is a plain 2-D one
    bare = Atomr.Convolution()
    assert bare.props.groups == 1 and bare.props.n_spatial_dims == 2
    x, y = t(3, 5), t(3, 5)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'softmax-fwd',
                 lambda cb: cudnn.softmax_forward_async(Atomr.SoftmaxMode.CHANNEL, True, x, y, None, cb),
                 cudnn.softmax_forward_finish)
    print('ok: validation on the mock device')


def on_gpu(device):
    cudnn = Atomr.CudnnActor.new(device)
    rng = random.Random(12)
    n, c, k, h, wd = 2, 3, 4, 6, 5
    xs = [rng.uniform(-1, 1) for _ in range(n * c * h * wd)]
    ws = [rng.uniform(-1, 1) for _ in range(k * c * 9)]

    def tensor(values, shape):
        buf = Atomr.Buffer.new(device, Atomr.Dtype.F64, len(values))
        buf.upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}d', *values)), None)
        return Atomr.Tensor.new(buf, shape)

    def values(tensor_):
        data = tensor_.get_buffer().download_sync(None).get_data()
        return struct.unpack(f'{len(data) // 8}d', data)

    x = tensor(xs, [n, c, h, wd])
    w = tensor(ws, [k, c, 3, 3])
    y = tensor([0.0] * (n * k * h * wd), [n, k, h, wd])
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    run(lambda cb: cudnn.convolution_forward_async(conv, 1.0, x, w, 0.0, y, None, cb),
        cudnn.convolution_forward_finish)
    got = values(y)
    worst = 0.0
    for ni in range(n):
        for ki in range(k):
            for i in range(h):
                for j in range(wd):
                    ref = 0.0
                    for ci in range(c):
                        for r in range(3):
                            for s in range(3):
                                ii, jj = i - 1 + r, j - 1 + s
                                if 0 <= ii < h and 0 <= jj < wd:
                                    ref += (xs[((ni * c + ci) * h + ii) * wd + jj]
                                            * ws[((ki * c + ci) * 3 + r) * 3 + s])
                    worst = max(worst, abs(got[((ni * k + ki) * h + i) * wd + j] - ref))
    assert worst < 1e-12, worst
    print(f'ok: f64 conv-fwd, max error {worst:.2e}')

    relu = tensor([0.0] * len(got), [n, k, h, wd])
    run(lambda cb: cudnn.activation_forward_async(Atomr.ActivationMode.RELU, 0.0, y, relu, None, cb),
        cudnn.activation_forward_finish)
    assert values(relu) == tuple(max(v, 0.0) for v in got)
    assert cudnn.props.cache_misses == 2
    print('ok: relu')


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
