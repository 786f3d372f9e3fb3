#!/usr/bin/env python3
"""Issue 17's peers table: one row per workload, every side of one run.

    peers_table.py --graph atomr-graph.json --peers atomr-peers.json \\
        [--python peer-atomr.json] [--torch peer-torch.json] [--cupy peer-cupy.json]

Reads what bench-graph --json and bench-peers --json (atomr from C and raw
CUDA), peer_atomr.py --json (atomr from Python), peer_torch.py --json and
peer_cupy.py --json wrote on the same machine in the same run, and prints
a Markdown table of microseconds (lower is better) with the ratios
peer / atomr-from-C (> 1: atomr is faster) and atomr-from-C / raw.  The
last column names the peers that beat atomr from C on that row (the
issue's goal: none).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json

ROWS = [
    # key, label, (file, key, field) of raw, of atomr C
    ('empty_roundtrip_us', 'empty kernel launch -> completion',
     ('graph', 'empty_roundtrip_us', 'raw'), ('graph', 'empty_roundtrip_us', 'atomr')),
    ('pipelined_10000_us', '10 000 pipelined tiny kernels',
     ('graph', 'pipelined_10000_us', 'raw'), ('graph', 'pipelined_10000_us', 'atomr')),
    # the same workload through an actor with a thread of its own
    # (AtomrActor:own-thread); the peers' figures are their pipelined row's
    ('pipelined_10000_us', '10 000 pipelined tiny kernels, atomr: own-thread actor',
     ('graph', 'pipelined_10000_us', 'raw'), ('graph', 'pipelined_10000_us', 'atomr_own_thread')),
    ('chain_100_eager_us', 'chain of 100, eager',
     ('graph', 'chain_100_us', 'raw_eager'), ('graph', 'chain_100_us', 'atomr_eager')),
    ('chain_100_graph_us', 'chain of 100, graph replay',
     ('graph', 'chain_100_us', 'raw_graph'), ('graph', 'chain_100_us', 'atomr_graph')),
    # the same replay over 32 places of x (steps of 4 KiB + 64 B), median:
    # where x lies moves a replay by up to 13%; every side in a fresh process
    ('chain_100_places_us', 'chain of 100, graph replay, median over 32 places of x',
     ('graph', 'chain_100_places_us', 'raw'), ('graph', 'chain_100_places_us', 'atomr')),
    ('gemm_256_fp32_us_per_call', 'SGEMM 256 FP32, per call',
     ('graph', 'gemm_256_fp32_us_per_call', 'raw'), ('graph', 'gemm_256_fp32_us_per_call', 'atomr')),
    ('gemm_256_tf32_us_per_call', 'SGEMM 256 TF32, per call',
     ('graph', 'gemm_256_tf32_us_per_call', 'raw'), ('graph', 'gemm_256_tf32_us_per_call', 'atomr')),
    ('gemm_4096_fp32_us_per_call', 'SGEMM 4096 FP32, per call',
     ('peers', 'gemm_4096_fp32_us_per_call', 'raw'), ('peers', 'gemm_4096_fp32_us_per_call', 'atomr')),
    ('gemm_4096_tf32_us_per_call', 'SGEMM 4096 TF32, per call',
     ('peers', 'gemm_4096_tf32_us_per_call', 'raw'), ('peers', 'gemm_4096_tf32_us_per_call', 'atomr')),
    ('fft_c2c_256x16_us', 'FFT C2C 256 x 16, launch -> completion',
     ('peers', 'fft_c2c_256x16_us', 'raw'), ('peers', 'fft_c2c_256x16_us', 'atomr')),
    ('disk_cache_hit_us', 'kernel disk-cache hit -> loaded kernel',
     ('peers', 'disk_cache_hit_us', 'raw'), ('peers', 'disk_cache_hit_us', 'atomr')),
]


def load(path):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        print(f'# peers_table: {path}: {error}')
        return None


def fmt(v):
    return f'{v:.2f}' if v is not None else '—'


def ratio(a, b):
    return f'{a / b:.3f}' if a is not None and b else '—'


def main():
    ap = argparse.ArgumentParser()
    for name in ('graph', 'peers', 'python', 'torch', 'cupy'):
        ap.add_argument('--' + name)
    args = ap.parse_args()
    files = {'graph': load(args.graph), 'peers': load(args.peers)}
    sides = {name: (load(getattr(args, name)) or {}).get('rows', {})
             for name in ('python', 'torch', 'cupy')}

    def pick(spec):
        data = files.get(spec[0])
        try:
            return float(data[spec[1]][spec[2]])
        except (TypeError, KeyError, ValueError):
            return None

    device = (files['graph'] or files['peers'] or {}).get('device', '?')
    print(f'# peers table on {device}: µs, lower is better; peer/atomr > 1: atomr (C) is faster')
    print('| row | raw CUDA | atomr (C) | atomr (Python) | PyTorch | CuPy | atomr/raw '
          '| torch/atomr | cupy/atomr | beats atomr (C) |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
    losses = 0
    for key, label, raw_spec, c_spec in ROWS:
        raw, c = pick(raw_spec), pick(c_spec)
        py, torch, cupy = (sides[s].get(key) for s in ('python', 'torch', 'cupy'))
        beaten = [name for name, v in (('PyTorch', torch), ('CuPy', cupy)) if v is not None and c and v < c]
        losses += len(beaten)
        print(f'| {label} | {fmt(raw)} | {fmt(c)} | {fmt(py)} | {fmt(torch)} | {fmt(cupy)} '
              f'| {ratio(c, raw)} | {ratio(torch, c)} | {ratio(cupy, c)} | {", ".join(beaten) or "none"} |')
    print(f'# rows where a peer beats atomr from C: {losses} (goal: 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
