#!/usr/bin/env python3
# One FFT from Python through GObject-Introspection: a real sine goes in,
# its spectrum comes out, then an inverse transform brings the sine back.
# Exits 77 (skipped) without a GPU.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import cmath
import math
import struct
import sys

import gi
gi.require_version('Atomr', '1')
from gi.repository import Atomr, GLib  # noqa: E402


def run(start, finish):
    """Runs one _async call on the default main context, returns _finish."""
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        try:
            outcome['value'] = finish(result)
        except GLib.Error as error:
            outcome['error'] = error
        loop.quit()

    start(done)
    loop.run()
    if 'error' in outcome:
        raise outcome['error']
    return outcome['value']


def main():
    try:
        device = Atomr.Device.get(0)
    except GLib.Error as error:
        if error.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE):
            print('skip: no CUDA device:', error.message)
            return 77
        raise

    n = 64
    signal = [math.sin(2 * math.pi * 5 * i / n) + 0.25 for i in range(n)]
    x = Atomr.Buffer.new(device, Atomr.Dtype.F32, n)
    x.upload_sync(GLib.Bytes.new(struct.pack(f'{n}f', *signal)), None)
    spectrum = Atomr.Buffer.new(device, Atomr.Dtype.C64, n // 2 + 1)
    back = Atomr.Buffer.new(device, Atomr.Dtype.F32, n)

    fft = Atomr.FftActor.new(device)

    # No plan: the kind (R2C), precision and size follow from the buffers.
    run(lambda cb: fft.execute_async(None, Atomr.FftDirection.FORWARD, x, spectrum, None, cb),
        fft.execute_finish)
    raw = struct.unpack(f'{2 * (n // 2 + 1)}f', spectrum.download_sync(None).get_data())
    bins = [complex(raw[2 * k], raw[2 * k + 1]) for k in range(n // 2 + 1)]
    assert abs(bins[0] - 0.25 * n) < 1e-3, bins[0]
    assert abs(bins[5] - (-0.5j * n)) < 1e-3, bins[5]
    for k, value in enumerate(bins):
        if k not in (0, 5):
            assert abs(value) < 1e-3, (k, value)

    # An explicit plan, as a GI boxed type, for the inverse.
    plan = Atomr.FftPlan.new_1d(Atomr.FftKind.C2R, Atomr.Dtype.F32, n, 1)
    assert plan.get_input_dtype() == Atomr.Dtype.C64
    run(lambda cb: fft.execute_async(plan, Atomr.FftDirection.INVERSE, spectrum, back, None, cb),
        fft.execute_finish)
    restored = struct.unpack(f'{n}f', back.download_sync(None).get_data())
    error = max(abs(r / n - s) for r, s in zip(restored, signal))
    assert error < 1e-5, error
    assert fft.props.plan_cache_misses == 2

    # Views (issue 10): every other sample of a 128-sample buffer holding
    # the signal at even indices (stride 2), transformed without a copy.
    wide = Atomr.Buffer.new(device, Atomr.Dtype.F32, 2 * n)
    interleaved = [v for s in signal for v in (s, 99.0)]
    wide.upload_sync(GLib.Bytes.new(struct.pack(f'{2 * n}f', *interleaved)), None)
    evens = Atomr.Tensor.new_strided(wide, Atomr.Dtype.F32, 0, [n], [2])
    spec_view = Atomr.Tensor.new_for_buffer(spectrum)
    run(lambda cb: fft.execute_tensor_async(1, Atomr.FftDirection.FORWARD, Atomr.FftNormalization.NONE,
                                            evens, spec_view, None, cb),
        fft.execute_tensor_finish)
    raw = struct.unpack(f'{2 * (n // 2 + 1)}f', spectrum.download_sync(None).get_data())
    view_bins = [complex(raw[2 * k], raw[2 * k + 1]) for k in range(n // 2 + 1)]
    assert max(abs(a - b) for a, b in zip(view_bins, bins)) < 1e-3
    # A read-only output is refused by name.
    wide.mark_read_only()
    try:
        run(lambda cb: fft.execute_tensor_async(1, Atomr.FftDirection.INVERSE, Atomr.FftNormalization.BACKWARD,
                                                spec_view, evens, None, cb),
            fft.execute_tensor_finish)
        raise AssertionError('a read-only output was accepted')
    except GLib.Error as e:
        assert 'read-only' in e.message, e.message
    print(f'ok: |X[5]| = {abs(bins[5]):.3f} (phase {cmath.phase(bins[5]):.3f}), '
          f'round-trip error {error:.2e}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
