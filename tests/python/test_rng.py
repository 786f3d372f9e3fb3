#!/usr/bin/env python3
# The RNG actor from Python: argument checks on the public mock device
# (CPU suite), then real draws and their moments on a GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def fill(rng, buf, dist, p1, p2):
    return run(lambda cb: rng.fill_async(buf, dist, p1, p2, None, cb), rng.fill_finish)


def on_mock():
    device = Atomr.Device.new_mock()
    assert device.is_mock()
    rng = Atomr.RngActor.new(device, Atomr.RngKind.PHILOX)
    f32 = Atomr.Buffer.new(device, Atomr.Dtype.F32, 16)
    u32 = Atomr.Buffer.new(device, Atomr.Dtype.U32, 16)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'param2 (standard deviation) is -1',
                 lambda cb: rng.fill_async(f32, Atomr.RngDistribution.NORMAL, 0, -1, None, cb),
                 rng.fill_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'buffer has dtype f32, expected u32',
                 lambda cb: rng.fill_async(f32, Atomr.RngDistribution.POISSON, 2, 0, None, cb),
                 rng.fill_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'cuRAND',
                 lambda cb: rng.fill_async(u32, Atomr.RngDistribution.POISSON, 2, 0, None, cb),
                 rng.fill_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'first 14 and count 5 pass the end of the buffer',
                 lambda cb: rng.fill_range_async(f32, 14, 5, Atomr.RngDistribution.UNIFORM, 0, 0, None, cb),
                 rng.fill_range_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'does not fit u32',
                 lambda cb: rng.fill_async(u32, Atomr.RngDistribution.INTEGER, -1, 10, None, cb),
                 rng.fill_finish)
    rng.props.seed = 42
    assert rng.get_seed() == 42


def on_gpu(device):
    n = 1 << 16
    rng = Atomr.RngActor.new(device, Atomr.RngKind.PHILOX)
    rng.set_seed(1234)
    buf = Atomr.Buffer.new(device, Atomr.Dtype.F32, n)
    fill(rng, buf, Atomr.RngDistribution.NORMAL, 3.0, 2.0)
    xs = struct.unpack(f'{n}f', buf.download_sync(None).get_data())
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    # 5 standard errors: mean ± 5·2/√n, variance ± 5·4·√(2/n)
    assert abs(mean - 3.0) < 5 * 2 / n ** 0.5, mean
    assert abs(var - 4.0) < 5 * 4 * (2 / n) ** 0.5, var

    # same seed, same numbers
    again = Atomr.Buffer.new(device, Atomr.Dtype.F32, n)
    rng.set_seed(1234)
    fill(rng, again, Atomr.RngDistribution.NORMAL, 3.0, 2.0)
    assert again.download_sync(None).get_data() == buf.download_sync(None).get_data()
    print(f'ok: normal(3, 2) mean {mean:.4f} variance {var:.4f}')

    # exponential(4) into the second half only
    half = Atomr.Buffer.new(device, Atomr.Dtype.F32, 2 * n)
    half.upload_sync(GLib.Bytes.new(struct.pack(f'{2 * n}f', *([-1.0] * (2 * n)))), None)
    run(lambda cb: rng.fill_range_async(half, n, n, Atomr.RngDistribution.EXPONENTIAL, 4.0, 0.0, None, cb),
        rng.fill_range_finish)
    ys = struct.unpack(f'{2 * n}f', half.download_sync(None).get_data())
    assert all(y == -1.0 for y in ys[:n])
    tail = ys[n:]
    assert all(y >= 0 for y in tail)
    mean = sum(tail) / n
    assert abs(mean - 0.25) < 6 * 0.25 / n ** 0.5, mean
    print(f'ok: exponential(4) in the second half, mean {mean:.4f}')


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
