#!/usr/bin/python3
# test_sparse.py — sparse matrices and the cuSPARSE actor from Python.
#
# Without a GPU: objects made bare by bindings behave (no crash, clear
# errors), enums and properties are visible.  With a GPU: a CSR matrix
# uploaded from Python lists (its structure checked on the host), SpMV
# into a tensor view, SpGEMM, and the GPU-side check, against references
# computed here.  Exits 77 (skip) for the GPU part only when there is no
# device and the first part passed.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import array
import random
import sys

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib  # noqa: E402

SKIP = 77


def bare_objects():
    m = Atomr.SparseMatrix()
    assert m.props.rows == 0 and m.props.nnz == 0
    assert m.props.format == Atomr.SparseFormat.CSR
    assert m.get_values() is None and m.get_device() is None
    v = Atomr.SparseVector()
    assert v.get_nnz() == 0 and v.get_indices() is None
    assert Atomr.SparseFormat.BLOCKED_ELL.value_nick == "blocked-ell"


def host_check_errors(device):
    # Row 0 lists column 2 before column 0: refused with the position.
    off = GLib.Bytes.new(array.array("i", [0, 2, 3]).tobytes())
    idx = GLib.Bytes.new(array.array("i", [2, 0, 1]).tobytes())
    val = GLib.Bytes.new(array.array("f", [1, 2, 3]).tobytes())
    try:
        Atomr.SparseMatrix.new_from_bytes(device, Atomr.SparseFormat.CSR, 2, 3, 1, Atomr.Dtype.I32,
                                          off, idx, Atomr.Dtype.F32, val, None)
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), error.message
        assert "has index 0 after 2" in error.message, error.message
    else:
        raise AssertionError("unsorted CSR row accepted")


def run(actor, start, finish):
    loop = GLib.MainLoop()
    out = {}

    def done(source, result):
        try:
            out["value"] = finish(result)
        except GLib.Error as error:
            out["error"] = error
        loop.quit()

    start(done)
    loop.run()
    if "error" in out:
        raise out["error"]
    return out["value"]


def gpu(device):
    rng = random.Random(13)
    rows, cols = 7, 5
    dense = [[(rng.uniform(-1, 1) if rng.random() < 0.4 and i != 3 else 0.0) for _ in range(cols)]
             for i in range(rows)]
    offsets, indices, values = [0], [], []
    for i in range(rows):
        for j in range(cols):
            if dense[i][j] != 0.0:
                indices.append(j)
                values.append(dense[i][j])
        offsets.append(len(indices))

    a = Atomr.SparseMatrix.new_from_bytes(
        device, Atomr.SparseFormat.CSR, rows, cols, 1, Atomr.Dtype.I32,
        GLib.Bytes.new(array.array("i", offsets).tobytes()),
        GLib.Bytes.new(array.array("i", indices).tobytes()),
        Atomr.Dtype.F64, GLib.Bytes.new(array.array("d", values).tobytes()), None)
    assert a.props.nnz == len(values)

    actor = Atomr.SparseActor.new(device)
    assert run(actor, lambda cb: actor.check_async(a, None, cb), actor.check_finish)

    x = [rng.uniform(-1, 1) for _ in range(cols)]
    xb = Atomr.Buffer.new(device, Atomr.Dtype.F64, cols)
    xb.upload_sync(GLib.Bytes.new(array.array("d", x).tobytes()), None)
    yb = Atomr.Buffer.new(device, Atomr.Dtype.F64, rows)
    yb.fill_sync(1.0, None)
    xt = Atomr.Tensor.new_for_buffer(xb)
    yt = Atomr.Tensor.new_for_buffer(yb)
    N = Atomr.Transpose.N
    assert run(actor, lambda cb: actor.spmv_async(N, 2.0, a, xt, 0.5, yt, None, cb), actor.spmv_finish)
    got = array.array("d", yb.download_sync(None).get_data())
    want = [2.0 * sum(dense[i][j] * x[j] for j in range(cols)) + 0.5 for i in range(rows)]
    assert max(abs(g - w) for g, w in zip(got, want)) < 1e-12, (list(got), want)

    # C = Aᵀ·A through transpose and SpGEMM, back to dense.
    at = run(actor, lambda cb: actor.transpose_async(a, None, cb), actor.transpose_finish)
    c = run(actor, lambda cb: actor.spgemm_async(1.0, at, a, None, cb), actor.spgemm_finish)
    assert (c.props.rows, c.props.cols) == (cols, cols)
    cb_ = Atomr.Buffer.new(device, Atomr.Dtype.F64, cols * cols)
    ct = Atomr.Tensor.new(cb_, [cols, cols])
    assert run(actor, lambda cb: actor.sparse_to_dense_async(c, ct, None, cb), actor.sparse_to_dense_finish)
    got = array.array("d", cb_.download_sync(None).get_data())
    for i in range(cols):
        for j in range(cols):
            w = sum(dense[k][i] * dense[k][j] for k in range(rows))
            assert abs(got[i * cols + j] - w) < 1e-12, (i, j, got[i * cols + j], w)
    print("workspace:", actor.props.workspace_size, "bytes")


def main():
    bare_objects()
    print("ok 1 - bare objects")
    try:
        device = Atomr.Device.get(0)
    except GLib.Error as error:
        if error.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE):
            print("# SKIP the GPU part: no CUDA device:", error.message)
            return SKIP
        raise
    host_check_errors(device)
    print("ok 2 - host check of uploads")
    gpu(device)
    print("ok 3 - spmv, transpose, spgemm, sparse-to-dense")
    return 0


if __name__ == "__main__":
    sys.exit(main())
