#!/usr/bin/env python3
# The solver actor from Python: argument checks on the public mock device
# (CPU suite), then an LU solve checked against the right-hand side on a
# GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def on_mock():
    device = Atomr.Device.new_mock()
    solver = Atomr.SolverActor.new(device)
    a = Atomr.Buffer.new(device, Atomr.Dtype.F64, 16)
    ipiv = Atomr.Buffer.new(device, Atomr.Dtype.I64, 4)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'leading dimension lda is 3',
                 lambda cb: solver.lu_async(a, 4, 4, 3, ipiv, None, cb), solver.lu_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output b and input a are the same buffer',
                 lambda cb: solver.lu_solve_async(Atomr.SolverTranspose.NO_TRANSPOSE, a, 4, 4, ipiv,
                                                  a, 1, 4, None, cb),
                 solver.lu_solve_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'cuSOLVER',
                 lambda cb: solver.lu_async(a, 4, 4, 4, ipiv, None, cb), solver.lu_finish)
    # batched solves and the wide SVD (issue 11)
    ipiv32 = Atomr.Buffer.new(device, Atomr.Dtype.I32, 4)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output b and input a are the same buffer',
                 lambda cb: solver.getrs_batched_async(Atomr.SolverTranspose.NO_TRANSPOSE, a, 2, 2, ipiv32,
                                                       a, 1, 2, 2, None, cb),
                 solver.getrs_batched_finish)
    s = Atomr.Buffer.new(device, Atomr.Dtype.F64, 2)
    u = Atomr.Buffer.new(device, Atomr.Dtype.F64, 4)
    v = Atomr.Buffer.new(device, Atomr.Dtype.F64, 16)
    wide = Atomr.Buffer.new(device, Atomr.Dtype.F64, 8)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output u and output v are the same buffer',
                 lambda cb: solver.gesvdj_async(wide, 2, 4, 2, s, v, 2, v, 4, True, None, cb),
                 solver.gesvdj_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'cuSOLVER',
                 lambda cb: solver.gesvdj_async(wide, 2, 4, 2, s, u, 2, v, 4, True, None, cb),
                 solver.gesvdj_finish)


def on_gpu(device):
    n = 64
    # diagonally dominant: well conditioned
    cols = [[(1.0 / (1 + abs(i - j)) + (n if i == j else 0)) for i in range(n)] for j in range(n)]
    flat = [v for col in cols for v in col]
    x_true = [1.0 + i % 5 for i in range(n)]
    b = [sum(cols[j][i] * x_true[j] for j in range(n)) for i in range(n)]
    solver = Atomr.SolverActor.new(device)
    ba = Atomr.Buffer.new(device, Atomr.Dtype.F64, n * n)
    ba.upload_sync(GLib.Bytes.new(struct.pack(f'{n * n}d', *flat)), None)
    bb = Atomr.Buffer.new(device, Atomr.Dtype.F64, n)
    bb.upload_sync(GLib.Bytes.new(struct.pack(f'{n}d', *b)), None)
    ipiv = Atomr.Buffer.new(device, Atomr.Dtype.I64, n)
    run(lambda cb: solver.lu_async(ba, n, n, n, ipiv, None, cb), solver.lu_finish)
    run(lambda cb: solver.lu_solve_async(Atomr.SolverTranspose.NO_TRANSPOSE, ba, n, n, ipiv, bb, 1, n,
                                         None, cb), solver.lu_solve_finish)
    x = struct.unpack(f'{n}d', bb.download_sync(None).get_data())
    err = max(abs(u - v) for u, v in zip(x, x_true))
    assert err < 1e-10, err
    print(f'ok: LU solve of {n} x {n}, max error {err:.2e}')

    # a wide 2 x 3 matrix: singular values of [[3, 0, 0], [0, 0, 4]] are 4 and 3
    wide = Atomr.Buffer.new(device, Atomr.Dtype.F64, 6)
    wide.upload_sync(GLib.Bytes.new(struct.pack('6d', 3, 0, 0, 0, 0, 4)), None)
    s = Atomr.Buffer.new(device, Atomr.Dtype.F64, 2)
    u = Atomr.Buffer.new(device, Atomr.Dtype.F64, 4)
    v = Atomr.Buffer.new(device, Atomr.Dtype.F64, 9)
    run(lambda cb: solver.gesvdj_async(wide, 2, 3, 2, s, u, 2, v, 3, True, None, cb), solver.gesvdj_finish)
    sv = struct.unpack('2d', s.download_sync(None).get_data())
    assert abs(sv[0] - 4) < 1e-10 and abs(sv[1] - 3) < 1e-10, sv
    print(f'ok: gesvdj of a 2 x 3 matrix: {sv}')


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
