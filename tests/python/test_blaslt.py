#!/usr/bin/env python3
# The cuBLASLt actor from Python: argument checks on the public mock device
# (CPU suite), then a matmul with a fused bias and ReLU checked against a
# host reference on a GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402

N = Atomr.Transpose.N
EPI = Atomr.BlasLtEpilogue


def on_mock():
    device = Atomr.Device.new_mock()
    lt = Atomr.BlasLtActor.new(device)
    a = Atomr.Buffer.new(device, Atomr.Dtype.F32, 64)
    b = Atomr.Buffer.new(device, Atomr.Dtype.F32, 64)
    c = Atomr.Buffer.new(device, Atomr.Dtype.F32, 64)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output bias and input A are the same buffer',
                 lambda cb: lt.matmul_async(N, N, 8, 8, 8, 1.0, a, 8, b, 8, 0.0, c, 8, EPI.BGRADA,
                                            a, None, 0, None, cb),
                 lt.matmul_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'bias is given, but epilogue relu takes none',
                 lambda cb: lt.matmul_async(N, N, 8, 8, 8, 1.0, a, 8, b, 8, 0.0, c, 8, EPI.RELU,
                                            b, None, 0, None, cb),
                 lt.matmul_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'cuBLASLt',
                 lambda cb: lt.matmul_async(N, N, 8, 8, 8, 1.0, a, 8, b, 8, 0.0, c, 8, EPI.NONE,
                                            None, None, 0, None, cb),
                 lt.matmul_finish)
    assert Atomr.blas_lt_bias_dtype(Atomr.Dtype.F8_E4M3, Atomr.Dtype.F32) == Atomr.Dtype.BF16
    assert Atomr.blas_lt_bias_dtype(Atomr.Dtype.F16, Atomr.Dtype.F32) == Atomr.Dtype.F32


def upload(device, values):
    buf = Atomr.Buffer.new(device, Atomr.Dtype.F32, len(values))
    buf.upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}f', *values)), None)
    return buf


def on_gpu(device):
    m, n, k = 32, 24, 16
    a = [((i * 7) % 11 - 5) / 4 for i in range(m * k)]      # m x k, column-major
    b = [((i * 5) % 13 - 6) / 4 for i in range(k * n)]      # k x n
    bias = [(i % 9 - 4) / 2 for i in range(m)]
    lt = Atomr.BlasLtActor.new(device)
    ba, bb, bbias = upload(device, a), upload(device, b), upload(device, bias)
    bc = upload(device, [0.0] * (m * n))
    run(lambda cb: lt.matmul_async(N, N, m, n, k, 1.0, ba, m, bb, k, 0.0, bc, m, EPI.RELU_BIAS,
                                   bbias, None, 0, None, cb), lt.matmul_finish)
    got = struct.unpack(f'{m * n}f', bc.download_sync(None).get_data())
    worst = 0.0
    for j in range(n):
        for i in range(m):
            ref = max(0.0, sum(a[i + p * m] * b[p + j * k] for p in range(k)) + bias[i])
            worst = max(worst, abs(got[i + j * m] - ref))
    assert worst < 1e-4, worst
    assert lt.props.cache_misses == 1
    print(f'ok: relu(A·B + bias) {m}x{n}x{k}, max error {worst:.2e}')


def main():
    on_mock()
    device = gpu_or_none()
    if device is None:
        print('ok: mock device checks; no CUDA device for the rest')
        return 0
    on_gpu(device)
    return 0


if __name__ == '__main__':
    sys.exit(main())
