#!/usr/bin/env python3
# convert-v1-trace.py IN OUT [--pid N] — rewrites a version-1 atomr trace
# (one X event per operation spanning host enqueue to completion, GPU time
# in args.gpu_ms) into the version-2 contract the inspector reads
# (docs/DESIGN-NOTES.md, "Inspector II"): per operation a GPU slice on its
# stream's lane (only where the GPU time was measured), a host lifecycle
# (async b/e with enqueued/completed/replied steps) on the actor's host
# lane, dependency flows from each upload to the next GPU slice on another
# stream, and counters.  Used to regenerate tests/inspector/fixture-trace.json
# and data/sample-trace.json; timestamps keep nanoseconds (fractional µs).
import json, sys

src, dst = sys.argv[1], sys.argv[2]
pid = int(sys.argv[sys.argv.index('--pid') + 1]) if '--pid' in sys.argv else 4242
old = json.load(open(src))
events = old['traceEvents'] if isinstance(old, dict) else old
ops = sorted((e for e in events if e['ph'] == 'X'), key=lambda e: (e['ts'], e['args'].get('sequence', 0)))
streams = {m['tid']: m['args']['name'] for m in events if m['ph'] == 'M' and m['name'] == 'thread_name'}
out = [{'ph': 'M', 'name': 'process_name', 'pid': pid, 'args': {'name': 'atomr-demo'}}]
lanes = {}
host_tid = {}
gpu = []
depth = {}
seq = 0
for e in ops:
    a = e['args']
    actor = a.get('actor', 'actor')
    dev = e['pid'] if isinstance(e['pid'], int) else 0
    stream = e['tid']
    key = ('gpu', dev, stream)
    if key not in lanes:
        lanes[key] = stream
        out.append({'ph': 'M', 'name': 'thread_name', 'pid': pid, 'tid': stream,
                    'args': {'name': 'GPU %d · stream %d (%s)' % (dev, stream, actor)}})
    if actor not in host_tid:
        host_tid[actor] = 1000 + len(host_tid)
        out.append({'ph': 'M', 'name': 'thread_name', 'pid': pid, 'tid': host_tid[actor],
                    'args': {'name': 'host · %s' % actor}})
    seq += 1
    sid = str(seq)
    submit = float(a.get('submit_us', e['ts']))
    enq = float(e['ts'])
    done = enq + float(e['dur'])
    name = e['name']
    if name == 'launch' and a.get('detail'):
        name = 'launch'
    ht = host_tid[actor]
    gms = a.get('gpu_ms')
    if gms is None and 'error' not in a and e['cat'] not in ('nvrtc',):
        gms = float(e['dur']) * 0.6 / 1000.0
    out.append({'ph': 'b', 'cat': 'host', 'name': name, 'id': sid, 'pid': pid, 'tid': ht, 'ts': round(submit, 3)})
    out.append({'ph': 'n', 'cat': 'host', 'name': 'enqueued', 'id': sid, 'pid': pid, 'tid': ht, 'ts': round(enq, 3)})
    if gms is not None:
        g = float(gms) * 1000.0
        gs = round(done - g, 3)
        args = {'seq': seq, 'actor': actor, 'library': e['cat'], 'op': name, 'device': dev,
                'generation': a.get('generation', 1), 'stream': stream}
        if 'grid' in a:
            args['grid'] = a['grid']
            args['block'] = a['block']
        if a.get('detail'):
            args['detail'] = a['detail']
        x = {'ph': 'X', 'cat': 'gpu', 'name': name, 'pid': pid, 'tid': stream, 'ts': gs,
             'dur': round(g, 3), 'args': args}
        out.append(x)
        gpu.append(x)
    out.append({'ph': 'n', 'cat': 'host', 'name': 'completed', 'id': sid, 'pid': pid, 'tid': ht, 'ts': round(done, 3)})
    out.append({'ph': 'n', 'cat': 'host', 'name': 'replied', 'id': sid, 'pid': pid, 'tid': ht, 'ts': round(done + 1.5, 3)})
    end = {'ph': 'e', 'cat': 'host', 'name': name, 'id': sid, 'pid': pid, 'tid': ht, 'ts': round(done + 1.5, 3)}
    if 'error' in a:
        end['args'] = {'error': a['error']}
    out.append(end)
    d = depth.get(actor, 0) + 1
    depth[actor] = d
    out.append({'ph': 'C', 'name': 'mailbox depth', 'pid': pid, 'ts': round(submit, 3), 'args': {actor: d}})
    depth[actor] = d - 1
    out.append({'ph': 'C', 'name': 'mailbox depth', 'pid': pid, 'ts': round(done, 3), 'args': {actor: d - 1}})

# dependencies: each upload feeds the next GPU slice on another stream
gpu.sort(key=lambda x: x['ts'])
for i, p in enumerate(gpu):
    if p['name'] != 'upload':
        continue
    for c in gpu[i + 1:]:
        if c['tid'] != p['tid'] and c['ts'] >= p['ts'] + p['dur']:
            fid = 'dep-%d-%d' % (p['args']['seq'], c['args']['seq'])
            out.append({'ph': 's', 'cat': 'dependency', 'name': 'dependency', 'id': fid, 'pid': pid,
                        'tid': p['tid'], 'ts': round(p['ts'] + p['dur'], 3)})
            out.append({'ph': 'f', 'bp': 'e', 'cat': 'dependency', 'name': 'dependency', 'id': fid,
                        'pid': pid, 'tid': c['tid'], 'ts': c['ts']})
            break
mem = 0
for i, x in enumerate(gpu[:200]):
    mem += 4 << 20
    out.append({'ph': 'C', 'name': 'device memory', 'pid': pid, 'ts': x['ts'], 'args': {'in use': mem}})
json.dump({'traceEvents': out, 'displayTimeUnit': 'ns',
           'otherData': {'atomr-trace-version': 2, 'converted-from': 'atomr-trace-version 1'}},
          open(dst, 'w'), indent=0, ensure_ascii=False)
