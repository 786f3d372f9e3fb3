#!/usr/bin/env python3
# The Tensor actor from Python: permutation, broadcasting elementwise
# binary and reductions on the public mock device (CPU suite, checked
# against Python arithmetic), argument errors, the plan cache; then the
# same on a GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def tensor(device, shape, values):
    t = Atomr.Tensor.empty(device, Atomr.Dtype.F64, shape)
    t.get_buffer().upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}d', *values)), None)
    return t


def values(t, n):
    return struct.unpack(f'{n}d', t.get_buffer().download_sync(None).get_data()[:8 * n])


def exercise(device):
    actor = Atomr.TensorActor.new(device)
    # A is 2×3×4 with a[i][j][k] = 100i + 10j + k
    a_vals = [100 * i + 10 * j + k for i in range(2) for j in range(3) for k in range(4)]
    a = tensor(device, [2, 3, 4], a_vals)

    # B = 2·A with the modes reordered "abc->cab": B is 4×2×3
    b = Atomr.Tensor.empty(device, Atomr.Dtype.F64, [4, 2, 3])
    run(lambda cb: actor.permute_async('abc->cab', 2.0, Atomr.TensorUnaryOp.IDENTITY, a, b, None, cb),
        actor.permute_finish)
    got = values(b, 24)
    want = [2 * (100 * i + 10 * j + k) for k in range(4) for i in range(2) for j in range(3)]
    assert list(got) == want, (got, want)

    # D = A + (-1)·bias broadcast along a and b: "abc,c->abc"
    bias = tensor(device, [4], [1, 2, 3, 4])
    d = Atomr.Tensor.empty(device, Atomr.Dtype.F64, [2, 3, 4])
    run(lambda cb: actor.elementwise_binary_async('abc,c->abc', 1.0, Atomr.TensorUnaryOp.IDENTITY, a,
                                                  -1.0, Atomr.TensorUnaryOp.IDENTITY, bias,
                                                  Atomr.TensorBinaryOp.ADD, d, None, cb),
        actor.elementwise_binary_finish)
    got = values(d, 24)
    want = [100 * i + 10 * j + k - (k + 1) for i in range(2) for j in range(3) for k in range(4)]
    assert list(got) == want, (got, want)

    # C = Σ over a and c, then the 2-norm over b and c
    c = Atomr.Tensor.empty(device, Atomr.Dtype.F64, [3])
    run(lambda cb: actor.reduce_async('abc->b', Atomr.TensorReduceOp.SUM, 1.0, a, 0.0, c, None, cb),
        actor.reduce_finish)
    got = values(c, 3)
    want = [sum(100 * i + 10 * j + k for i in range(2) for k in range(4)) for j in range(3)]
    assert list(got) == want, (got, want)
    n2 = Atomr.Tensor.empty(device, Atomr.Dtype.F64, [2])
    run(lambda cb: actor.reduce_async('abc->a', Atomr.TensorReduceOp.NORM2, 1.0, a, 0.0, n2, None, cb),
        actor.reduce_finish)
    got = values(n2, 2)
    for i in range(2):
        want = math.sqrt(sum((100 * i + 10 * j + k) ** 2 for j in range(3) for k in range(4)))
        assert abs(got[i] - want) <= 1e-12 * want, (got, want)

    # D = A·B as the contraction "ij,jk->ik" of 2×3 and 3×2 matrices
    x = tensor(device, [2, 3], [1, 2, 3, 4, 5, 6])
    y = tensor(device, [3, 2], [7, 8, 9, 10, 11, 12])
    z = Atomr.Tensor.empty(device, Atomr.Dtype.F64, [2, 2])
    run(lambda cb: actor.contract_async('ij,jk->ik', 1.0, x, y, 0.0, z, None, cb), actor.contract_finish)
    assert list(values(z, 4)) == [58, 64, 139, 154], values(z, 4)

    # the contraction is GEMM-shaped: its detail names the cuBLASLt plan
    # (on a GPU that is the path that ran); compute-type is a property
    details = []
    handler = actor.connect('after-enqueue', lambda _actor, info: details.append(info.get_detail()))
    run(lambda cb: actor.contract_async('ij,jk->ik', 1.0, x, y, 0.0, z, None, cb), actor.contract_finish)
    actor.disconnect(handler)
    assert details == ['cublaslt gemm m=2 n=2 k=3 batch=1 op=NN swapped'], details
    assert list(values(z, 4)) == [58, 64, 139, 154], values(z, 4)
    notified = []
    actor.connect('notify::compute-type', lambda *_: notified.append(True))
    actor.props.compute_type = Atomr.BlasComputeType.F32_FAST_TF32
    assert actor.get_compute_type() == Atomr.BlasComputeType.F32_FAST_TF32
    assert notified == [True], notified
    actor.set_compute_type(Atomr.BlasComputeType.DEFAULT)

    # errors name the argument and the value
    expect_error(Atomr.Error.INVALID_ARGUMENT, "mode 'a' has extent 2 in a but 4 in b",
                 lambda cb: actor.permute_async('abc->abc', 1.0, Atomr.TensorUnaryOp.IDENTITY, a, b, None, cb),
                 actor.permute_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, "repeats mode 'a'",
                 lambda cb: actor.permute_async('aab->cab', 1.0, Atomr.TensorUnaryOp.IDENTITY, a, b, None, cb),
                 actor.permute_finish)

    # the plan cache: "abc->cab" was planned once
    actor.props.plan_cache_capacity = 16
    assert actor.get_plan_cache_capacity() == 16
    hits, misses, evictions, size = actor.get_plan_cache_stats()
    assert misses >= 4 and size >= 4, (hits, misses, size)
    run(lambda cb: actor.permute_async('abc->cab', 1.0, Atomr.TensorUnaryOp.NEG, a, b, None, cb),
        actor.permute_finish)
    assert actor.get_plan_cache_stats()[0] == hits + 1
    print(f'ok: permute, broadcast add, sum, norm2 and a contraction on {device.get_name()}')


def main():
    exercise(Atomr.Device.new_mock())
    device = gpu_or_none()
    if device is None:
        print('ok: no GPU, the mock device only')
        return
    exercise(device)


if __name__ == '__main__':
    main()
