#!/usr/bin/env python3
# Attention and RNNs of the cuDNN actor from Python: argument checks on the
# public mock device (CPU suite), then a causal f16 SDPA forward pass on
# BSHD views compared with a Python reference on a GPU when there is one.
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

    def t(dtype, *shape):
        return Atomr.Tensor.empty(device, dtype, list(shape))

    F16, F32 = Atomr.Dtype.F16, Atomr.Dtype.F32
    q, k, v, o = t(F16, 1, 2, 64, 64), t(F16, 1, 2, 64, 64), t(F16, 1, 2, 64, 64), t(F16, 1, 2, 64, 64)
    stats = t(F32, 1, 2, 64, 1)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'sdpa-fwd (f16, causal, q 1×2×64×64',
                 lambda cb: cudnn.sdpa_forward_async(q, k, v, 0.125, True, o, stats, None, cb),
                 cudnn.sdpa_forward_finish)
    # inference: the statistics are optional
    expect_error(Atomr.Error.NOT_SUPPORTED, 'needs a CUDA device',
                 lambda cb: cudnn.sdpa_forward_async(q, k, v, 0.125, False, o, None, None, cb),
                 cudnn.sdpa_forward_finish)
    q32 = t(F32, 1, 2, 64, 64)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'q has dtype f32 (attention takes f16 or bf16)',
                 lambda cb: cudnn.sdpa_forward_async(q32, k, v, 0.125, False, o, None, None, cb),
                 cudnn.sdpa_forward_finish)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'output o overlaps input q',
                 lambda cb: cudnn.sdpa_forward_async(q, k, v, 0.125, False, q, None, None, cb),
                 cudnn.sdpa_forward_finish)
    # multi-head attention on batch × seq × heads·dim activations
    q3, k3, v3, o3 = t(F16, 1, 64, 128), t(F16, 1, 64, 128), t(F16, 1, 64, 128), t(F16, 1, 64, 128)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'mha-fwd (f16, no mask, q 1×2×64×64 strides (8192, 64, 128, 1)',
                 lambda cb: cudnn.multi_head_attention_forward_async(2, 2, q3, k3, v3, 0.125, False, o3, None,
                                                                     None, cb),
                 cudnn.multi_head_attention_forward_finish)
    # AtomrAttention: a bare object is valid; padding mask and dropout named
    bare_attn = Atomr.Attention()
    assert bare_attn.props.scale == 0 and not bare_attn.props.causal and bare_attn.props.dropout == 0
    assert bare_attn.props.q_lengths is None
    attn = Atomr.Attention.new()
    attn.props.dropout = 0.25
    attn.props.seed = 2**63 + 5
    assert attn.get_seed() == 2**63 + 5
    lq, lkv = t(Atomr.Dtype.I32, 1), t(Atomr.Dtype.I32, 1)
    attn.set_sequence_lengths(lq, lkv)
    assert attn.props.kv_lengths == lkv
    expect_error(Atomr.Error.NOT_SUPPORTED, 'sdpa-fwd (f16, padding mask, dropout 0.25, q 1×2×64×64',
                 lambda cb: cudnn.attention_forward_async(attn, q, k, v, o, stats, None, cb),
                 cudnn.attention_forward_finish)
    attn.set_sequence_lengths(lq, None)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'needs both q-lengths and kv-lengths',
                 lambda cb: cudnn.attention_forward_async(attn, q, k, v, o, stats, None, cb),
                 cudnn.attention_forward_finish)
    # RNNs: the network object, and a refused state shape
    lstm = Atomr.Rnn.new(Atomr.RnnMode.LSTM, 8, 16, 1, False)
    assert lstm.get_n_weights() == 4 * 16 * (8 + 16) + 2 * 4 * 16
    bare = Atomr.Rnn()
    assert bare.props.mode == Atomr.RnnMode.LSTM and bare.props.hidden_size == 1
    x, y, w = t(F32, 5, 3, 8), t(F32, 5, 3, 16), t(F32, lstm.get_n_weights())
    hx = t(F32, 2, 3, 16)
    expect_error(Atomr.Error.INVALID_ARGUMENT, 'hx is 2×3×16 but must be 1×3×16',
                 lambda cb: cudnn.rnn_forward_async(lstm, False, x, hx, None, w, y, None, None, None, cb),
                 cudnn.rnn_forward_finish)
    expect_error(Atomr.Error.NOT_SUPPORTED, 'rnn-fwd (f32 lstm',
                 lambda cb: cudnn.rnn_forward_async(lstm, True, x, None, None, w, y, None, None, None, cb),
                 cudnn.rnn_forward_finish)
    print('ok: validation on the mock device')


def on_gpu(device):
    cudnn = Atomr.CudnnActor.new(device)
    rng = random.Random(7)
    b, h, s, d = 1, 2, 64, 64
    scale = 0.5

    def bshd(values):
        # batch × seq × heads × dim storage viewed as batch × heads × seq × dim
        buf = Atomr.Buffer.new(device, Atomr.Dtype.F16, len(values))
        buf.upload_sync(GLib.Bytes.new(struct.pack(f'{len(values)}e', *values)), None)
        return Atomr.Tensor.new(buf, [b, s, h, d]).permute([0, 2, 1, 3])

    def rounded(n):
        return list(struct.unpack(f'{n}e', struct.pack(f'{n}e', *[rng.uniform(-1, 1) for _ in range(n)])))

    n = b * s * h * d
    qs, ks, vs = rounded(n), rounded(n), rounded(n)
    q, k, v, o = bshd(qs), bshd(ks), bshd(vs), bshd([0.0] * n)
    run(lambda cb: cudnn.sdpa_forward_async(q, k, v, scale, True, o, None, None, cb),
        cudnn.sdpa_forward_finish)
    data = o.get_buffer().download_sync(None).get_data()
    got = struct.unpack(f'{n}e', data)

    def at(i, hh, e):                   # BSHD storage index
        return (i * h + hh) * d + e

    num = den = 0.0
    for hh in range(h):
        for i in range(s):
            scores = [scale * sum(qs[at(i, hh, e)] * ks[at(j, hh, e)] for e in range(d)) for j in range(i + 1)]
            m = max(scores)
            p = [math.exp(x - m) for x in scores]
            z = sum(p)
            for e in range(d):
                ref = sum(p[j] * vs[at(j, hh, e)] for j in range(i + 1)) / z
                num += (got[at(i, hh, e)] - ref) ** 2
                den += ref * ref
    err = math.sqrt(num / den)
    assert err < 5e-3, err
    print(f'ok: f16 causal sdpa-fwd on BSHD views, relative error {err:.2e}')


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
