#!/usr/bin/python3
# test_blas.py — one GEMM from Python through GObject introspection.
#
# Skips (exit status 77) without a CUDA device.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import array
import random
import sys

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib  # noqa: E402

SKIP = 77


def column_major(rows, cols, values):
    """values[i][j] -> a flat column-major list."""
    return [values[i][j] for j in range(cols) for i in range(rows)]


def main():
    try:
        device = Atomr.Device.get(0)
    except GLib.Error as error:
        if error.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE):
            print("1..0 # SKIP no CUDA device:", error.message)
            return SKIP
        raise

    m, n, k = 5, 3, 4
    rng = random.Random(4)
    a = [[rng.uniform(-1, 1) for _ in range(k)] for _ in range(m)]
    b = [[rng.uniform(-1, 1) for _ in range(n)] for _ in range(k)]

    def upload(rows, cols, values):
        buffer = Atomr.Buffer.new(device, Atomr.Dtype.F64, rows * cols)
        data = array.array("d", column_major(rows, cols, values))
        buffer.upload_sync(GLib.Bytes.new(data.tobytes()), None)
        return buffer

    buf_a = upload(m, k, a)
    buf_b = upload(k, n, b)
    buf_c = upload(m, n, [[0.0] * n for _ in range(m)])

    blas = Atomr.BlasActor.new(device)
    assert blas.props.math_mode == Atomr.BlasMathMode.DEFAULT

    # The asynchronous form, with a main loop, as an application would.
    loop = GLib.MainLoop()
    outcome = {}

    def done(actor, result):
        outcome["ok"] = actor.gemm_finish(result)
        loop.quit()

    N = Atomr.Transpose.N
    blas.gemm_async(N, N, m, n, k, 2.0, 0.0, buf_a, m, buf_b, k, 0.0, 0.0, buf_c, m, None, done)
    loop.run()
    assert outcome["ok"]

    # The blocking convenience: C = A·B + C, so C ends up 3·A·B.
    assert blas.gemm_sync(N, N, m, n, k, 1.0, buf_a, m, buf_b, k, 1.0, buf_c, m, None)

    got = array.array("d")
    got.frombytes(buf_c.download_sync(None).get_data())
    for i in range(m):
        for j in range(n):
            want = 3 * sum(a[i][l] * b[l][j] for l in range(k))
            assert abs(got[i + j * m] - want) < 1e-12, (i, j, got[i + j * m], want)

    # Validation errors arrive as GLib.Error naming the argument.
    try:
        blas.gemm_sync(N, N, m, n, k, 1.0, buf_a, m - 1, buf_b, k, 0.0, buf_c, m, None)
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT)
        assert "lda" in error.message, error.message
    else:
        raise AssertionError("a short lda was accepted")

    print("1..1\nok 1 gemm from Python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
