#!/usr/bin/env python3
"""The small-operation workloads of bench-graph through PyTorch.

    bench-graph --json /tmp/atomr-graph.json
    python3 tests/bench/peers/peer_torch.py --atomr /tmp/atomr-graph.json

Rows (the same as bench-graph, same shapes): a tiny kernel launch ->
completion; 10 000 pipelined tiny kernels; a chain of 100 dependent tiny
kernels, eager and as a CUDA graph (torch.cuda.CUDAGraph) replay; SGEMM
256^3 per call, FP32 and TF32, 2000 pipelined calls.  A "tiny kernel" is
x.add_(1) on a one-element float tensor (PyTorch has no empty kernel of
its own; atomr launches <<<1, 32>>> adding 1 to x[0]).  With --atomr, the
table adds atomr's figure from the same machine and peer / atomr
(> 1.0: atomr is faster on that row).

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import argparse
import json
import statistics
import time

PIPELINED = 10000
CHAIN = 100
N_CHAIN = 300
N_PLACE = 60      # replays per place of the 3y sweep
ROUND_TRIPS = 2000
GEMM_N = 256
GEMM_CALLS = 2000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--atomr', help='JSON written by bench-graph --json')
    ap.add_argument('--json', help='write the figures here (for peers_table.py)')
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print(f'peer_torch: PyTorch is not available ({e})')
        return 0
    if not torch.cuda.is_available():
        print('peer_torch: no CUDA device')
        return 0

    dev = torch.device('cuda')
    stream = torch.cuda.Stream()
    rows = {}
    with torch.cuda.stream(stream):
        x = torch.zeros(1, device=dev)

        def sync():
            stream.synchronize()

        # 1. launch -> completion
        t = []
        for i in range(ROUND_TRIPS + 20):
            t0 = time.perf_counter()
            x.add_(1.0)
            sync()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['empty_roundtrip_us'] = statistics.median(t)

        # 2. pipelined
        best = float('inf')
        for _ in range(4):
            t0 = time.perf_counter()
            for _ in range(PIPELINED):
                x.add_(1.0)
            sync()
            best = min(best, (time.perf_counter() - t0) * 1e6)
        rows['pipelined_10000_us'] = best

        # 3. chain of 100, eager and graph
        t = []
        for i in range(N_CHAIN + 20):
            t0 = time.perf_counter()
            for _ in range(CHAIN):
                x.add_(1.0)
            sync()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['chain_100_eager_us'] = statistics.median(t)

        def chain_replay(xt, reps, warmup):
            """The chain of 100 x.add_ on @xt captured into a graph, and
            the median of replay + synchronize over @reps replays."""
            sync()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                for _ in range(CHAIN):
                    xt.add_(1.0)
            t = []
            for i in range(reps + warmup):
                t0 = time.perf_counter()
                g.replay()
                sync()
                if i >= warmup:
                    t.append((time.perf_counter() - t0) * 1e6)
            return statistics.median(t)

        rows['chain_100_graph_us'] = chain_replay(x, N_CHAIN, 20)

        # The replay over 32 places of x (bench-graph's 3y, steps of
        # 4 KiB + 64 B in one tensor): where x lies moves a replay by up to
        # 13%, so the peers table compares medians over the places.
        step = (4096 + 64) // 4
        big = torch.zeros(32 * step + 16, device=dev)
        places = [chain_replay(big[o * step:o * step + 1], N_PLACE, 10) for o in range(32)]
        places.sort()
        rows['chain_100_places_us'] = places[16]
        print(f'# peer_torch 3y: chain replay over 32 places of x: min {places[0]:.2f}, '
              f'median {places[16]:.2f}, max {places[-1]:.2f} us')

        def sgemm_rows(n, calls):
            """SGEMM n^3 per call, FP32 then TF32: best of 5 batches of
            @calls pipelined torch.mm, into rows['gemm_<n>_<math>_us_per_call']."""
            a = torch.full((n, n), 0.5, device=dev)
            b = torch.full((n, n), 0.25, device=dev)
            c = torch.empty((n, n), device=dev)
            for tf32 in (False, True):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                torch.mm(a, b, out=c)
                sync()
                best = float('inf')
                for _ in range(5):
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        torch.mm(a, b, out=c)
                    sync()
                    best = min(best, (time.perf_counter() - t0) * 1e6 / calls)
                rows['gemm_%d_%s_us_per_call' % (n, 'tf32' if tf32 else 'fp32')] = best

        # 4. SGEMM 256, per call; 5. SGEMM 4096 per call, FP32 and TF32
        sgemm_rows(GEMM_N, GEMM_CALLS)
        sgemm_rows(4096, 20)
        torch.backends.cuda.matmul.allow_tf32 = False

        # 6. FFT C2C 256 x 16, launch -> completion (PyTorch's plan cache)
        f = torch.full((16, 256), 0.5 + 0j, dtype=torch.complex64, device=dev)
        out = torch.empty_like(f)
        torch.fft.fft(f, out=out)
        sync()
        t = []
        for i in range(2000 + 20):
            t0 = time.perf_counter()
            torch.fft.fft(f, out=out)
            sync()
            if i >= 20:
                t.append((time.perf_counter() - t0) * 1e6)
        rows['fft_c2c_256x16_us'] = statistics.median(t)

    atomr = None
    if args.atomr:
        with open(args.atomr) as f:
            atomr = json.load(f)
    print(f'# peer_torch: PyTorch {torch.__version__} on {torch.cuda.get_device_name()}')
    print(f'{"row":44} {"torch us":>10} {"atomr us":>10} {"torch/atomr":>12}')
    ours = {}
    if atomr:
        ours = {
            'empty_roundtrip_us': atomr['empty_roundtrip_us']['atomr'],
            'pipelined_10000_us': atomr['pipelined_10000_us']['atomr'],
            'chain_100_eager_us': atomr['chain_100_us']['atomr_eager'],
            'chain_100_graph_us': atomr['chain_100_us']['atomr_graph'],
            'chain_100_places_us': atomr.get('chain_100_places_us', {}).get('atomr'),
            'gemm_256_fp32_us_per_call': atomr['gemm_256_fp32_us_per_call']['atomr'],
            'gemm_256_tf32_us_per_call': atomr['gemm_256_tf32_us_per_call']['atomr'],
        }
    for key, value in rows.items():
        mine = ours.get(key)
        if mine:
            print(f'{key:44} {value:10.2f} {mine:10.2f} {value / mine:12.3f}')
        else:
            print(f'{key:44} {value:10.2f} {"-":>10} {"-":>12}')
    print(f'# torch graph replay speed-up over torch eager (chain of 100): '
          f'{rows["chain_100_eager_us"] / rows["chain_100_graph_us"]:.2f}x')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'version': torch.__version__, 'rows': rows}, f, indent=1)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
