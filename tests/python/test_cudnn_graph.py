#!/usr/bin/env python3
# AtomrCudnnGraph from Python: a bare graph, the builder's checks, keys
# (equal graphs equal keys, a changed stride or mode a different key) and
# execution checks on the public mock device (CPU suite); a convolution
# graph compared with a Python reference on a GPU when there is one.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import random
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, expect_error, gpu_or_none, run  # noqa: E402


def builder_error(needle, call, *args):
    try:
        call(*args)
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), error.message
        assert needle in error.message, (needle, error.message)
        return
    raise AssertionError(f'expected an error mentioning {needle!r}')


def conv_relu_graph(name, x_shape, strides=None, mode=Atomr.CudnnPointwise.RELU):
    g = Atomr.CudnnGraph.new(name)
    n, c, h, w = x_shape
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    x = g.add_tensor_full('x', Atomr.Dtype.F32, x_shape, strides, False)
    wt = g.add_tensor_full('w', Atomr.Dtype.F32, [8, c, 3, 3], None, False)
    v = g.add_tensor_full('v', Atomr.Dtype.F32, [n, 8, h, w], None, True)
    y = g.add_tensor_full('y', Atomr.Dtype.F32, [n, 8, h, w], None, False)
    g.add_convolution(Atomr.CudnnConvDirection.FORWARD, conv, x, wt, v)
    g.add_pointwise(mode, v, 0, y)
    g.finalize()
    return g


def on_mock():
    # a bare graph from the binding is empty and usable
    bare = Atomr.CudnnGraph()
    assert bare.props.name == 'graph' and not bare.props.finalized
    assert bare.get_n_tensors() == 0 and bare.get_key() is not None
    builder_error('has no nodes', bare.finalize)
    builder_error('the graph has tensors 1 to 0', bare.add_pointwise, Atomr.CudnnPointwise.RELU, 1, 0, 2)

    g = conv_relu_graph('a', [2, 4, 6, 6])
    assert g.props.finalized and g.get_n_nodes() == 2
    assert g.lookup_tensor('y') == 4 and g.get_tensor_is_virtual(3)
    same = conv_relu_graph('other name', [2, 4, 6, 6])
    assert g.get_key().get_data() == same.get_key().get_data()
    nhwc = conv_relu_graph('nhwc', [2, 4, 6, 6], [144, 1, 24, 4])
    gelu = conv_relu_graph('gelu', [2, 4, 6, 6], mode=Atomr.CudnnPointwise.GELU)
    bigger = conv_relu_graph('bigger', [2, 4, 8, 8])
    keys = {k.get_key().get_data() for k in (g, nhwc, gelu, bigger)}
    assert len(keys) == 4
    builder_error('cannot add a node, the graph is finalized',
                  g.add_pointwise, Atomr.CudnnPointwise.TANH, 4, 0, 3)

    h = Atomr.CudnnGraph.new('checks')
    x = h.add_tensor_full('x', Atomr.Dtype.F32, [2, 4, 6, 6], None, False)
    w16 = h.add_tensor_full('w16', Atomr.Dtype.F16, [8, 4, 3, 3], None, False)
    y = h.add_tensor_full('y', Atomr.Dtype.F32, [2, 8, 6, 6], None, False)
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    builder_error("x ('x') is f32 but w ('w16') is f16", h.add_convolution,
                  Atomr.CudnnConvDirection.FORWARD, conv, x, w16, y)
    builder_error("tensor 'w16' (id 2) is dangling", lambda: (h.add_pointwise(
        Atomr.CudnnPointwise.SIGMOID, x, 0, h.add_tensor_full('s', Atomr.Dtype.F32, [2, 4, 6, 6], None, False)),
        h.finalize()))

    # a norm node: RMS without a bias, layer norm needs one
    nrm = Atomr.CudnnGraph.new('norm')
    nx = nrm.add_tensor_full('x', Atomr.Dtype.F32, [16, 64, 1, 1], None, False)
    gamma = nrm.add_tensor_full('gamma', Atomr.Dtype.F32, [1, 64, 1, 1], None, False)
    ny = nrm.add_tensor_full('y', Atomr.Dtype.F32, [16, 64, 1, 1], None, False)
    builder_error('layer norm takes a bias', nrm.add_norm, Atomr.CudnnNorm.LAYER, nx, gamma, 0, 1e-5, ny)
    nrm.add_norm(Atomr.CudnnNorm.RMS, nx, gamma, 0, 1e-5, ny)
    nrm.finalize()
    assert nrm.get_n_nodes() == 1

    # training-phase norm nodes and their backward node, with saved
    # statistics; batch norm with running statistics (the enum's new value)
    tr = Atomr.CudnnGraph.new('norm-train')
    f32 = Atomr.Dtype.F32
    tx = tr.add_tensor_full('x', f32, [16, 64, 1, 1], None, False)
    tg = tr.add_tensor_full('gamma', f32, [1, 64, 1, 1], None, False)
    tb = tr.add_tensor_full('beta', f32, [1, 64, 1, 1], None, False)
    ty = tr.add_tensor_full('y', f32, [16, 64, 1, 1], None, False)
    tm = tr.add_tensor_full('mean', f32, [16, 1, 1, 1], None, False)
    tv = tr.add_tensor_full('inv-var', f32, [16, 1, 1, 1], None, False)
    builder_error('RMS norm subtracts no mean', tr.add_norm_training, Atomr.CudnnNorm.RMS, tx, tg, 0, 1e-5,
                  ty, tm, tv)
    tr.add_norm_training(Atomr.CudnnNorm.LAYER, tx, tg, tb, 1e-5, ty, tm, tv)
    tdy = tr.add_tensor_full('dy', f32, [16, 64, 1, 1], None, False)
    tdx = tr.add_tensor_full('dx', f32, [16, 64, 1, 1], None, False)
    tdg = tr.add_tensor_full('dgamma', f32, [1, 64, 1, 1], None, False)
    tdb = tr.add_tensor_full('dbeta', f32, [1, 64, 1, 1], None, False)
    tr.add_norm_backward(Atomr.CudnnNorm.LAYER, tx, tdy, tg, tm, tv, tdx, tdg, tdb)
    tr.finalize()
    assert tr.get_n_nodes() == 2
    bn = Atomr.CudnnGraph.new('bn-train')
    p = [bn.add_tensor_full(name, f32, shape, None, False) for name, shape in (
        ('x', [4, 8, 5, 5]), ('gamma', [1, 8, 1, 1]), ('beta', [1, 8, 1, 1]), ('rm', [1, 8, 1, 1]),
        ('rv', [1, 8, 1, 1]), ('y', [4, 8, 5, 5]), ('mean', [1, 8, 1, 1]), ('inv-var', [1, 8, 1, 1]),
        ('next-rm', [1, 8, 1, 1]), ('next-rv', [1, 8, 1, 1]))]
    builder_error('momentum is 2', bn.add_batch_norm_training, p[0], p[1], p[2], 1e-5, 2.0, p[3], p[4], p[5],
                  p[6], p[7], p[8], p[9])
    bn.add_batch_norm_training(p[0], p[1], p[2], 1e-5, 0.1, p[3], p[4], p[5], p[6], p[7], p[8], p[9])
    bn.finalize()
    assert Atomr.CudnnNorm.BATCH == 2

    device = Atomr.Device.new_mock()
    cudnn = Atomr.CudnnActor.new(device)

    def t(*shape):
        return Atomr.Tensor.empty(device, Atomr.Dtype.F32, list(shape))

    xv, wv, yv = t(2, 4, 6, 6), t(8, 4, 3, 3), t(2, 8, 6, 6)
    expect_error(Atomr.Error.INVALID_ARGUMENT, "tensor 'w' (id 2) has no view",
                 lambda cb: cudnn.execute_graph_async(g, [1, 4], [xv, yv], None, cb),
                 cudnn.execute_graph_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, "the view of tensor 'y' has dimension 1 = 4",
                 lambda cb: cudnn.execute_graph_async(g, [1, 2, 4], [xv, wv, t(2, 4, 6, 6)], None, cb),
                 cudnn.execute_graph_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, "graph 'a' (2 nodes) needs a CUDA device",
                 lambda cb: cudnn.execute_graph_async(g, [4, 1, 2], [yv, xv, wv], None, cb),
                 cudnn.execute_graph_finish)
    print('ok: builder, keys and checks on the mock device')


def on_gpu(device):
    cudnn = Atomr.CudnnActor.new(device)
    rng = random.Random(5)
    n, c, k, h, wd = 2, 4, 8, 6, 6
    xs = [rng.uniform(-1, 1) for _ in range(n * c * h * wd)]
    ws = [rng.uniform(-1, 1) for _ in range(k * c * 9)]

    def tensor(values, shape):
        buf = Atomr.Buffer.new(device, Atomr.Dtype.F32, len(values))
        buf.upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}f', *values)), None)
        return Atomr.Tensor.new(buf, shape)

    x = tensor(xs, [n, c, h, wd])
    w = tensor(ws, [k, c, 3, 3])
    y = tensor([0.0] * (n * k * h * wd), [n, k, h, wd])
    g = Atomr.CudnnGraph.new('conv')
    conv = Atomr.Convolution.new_2d(1, 1, 1, 1, 1, 1)
    ix, iw, iy = g.add_tensor('x', x), g.add_tensor('w', w), g.add_tensor('y', y)
    g.add_convolution(Atomr.CudnnConvDirection.FORWARD, conv, ix, iw, iy)
    g.finalize()
    run(lambda cb: cudnn.execute_graph_async(g, [ix, iw, iy], [x, w, y], None, cb),
        cudnn.execute_graph_finish)
    data = y.get_buffer().download_sync(None).get_data()
    got = struct.unpack(f'{len(data) // 4}f', data)
    num = den = 0.0
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
                    d = got[((ni * k + ki) * h + i) * wd + j] - ref
                    num += d * d
                    den += ref * ref
    rel = (num / den) ** 0.5
    assert rel < 2e-3, rel       # the engine may use TF32
    assert cudnn.props.cache_misses == 1
    print(f'ok: f32 conv graph, relative error {rel:.2e}')


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
