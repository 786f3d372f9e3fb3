#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus (run from anywhere).

Seeds are small, valid or nearly valid inputs for each target; crash
inputs found by the fuzzers are added by hand as crash-* files and kept.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def http(method, path, token=True, extra='', body=b'', version='HTTP/1.1'):
    head = f'{method} {path} {version}\r\nHost: 127.0.0.1\r\n'
    if token:
        head += 'Authorization: Bearer @TOKEN@\r\n'
    head += extra
    if body:
        head += f'Content-Length: {len(body)}\r\n'
    return head.encode() + b'\r\n' + body


# --- HTTP request parsing and routing ---------------------------------
for p in ['/v1', '/v1/', '/v1/process', '/v1/devices', '/v1/actors', '/v1/cache', '/v1/trace',
          '/v1/nothing', '/v1/actors?x=1&y', '/v1/%2e%2e/process', '/']:
    put('http-request', 'get' + p.replace('/', '_').replace('?', 'Q').replace('%', 'P').replace('&', 'A'),
        http('GET', p))
put('http-request', 'no-token', http('GET', '/v1/process', token=False))
put('http-request', 'wrong-token', 'GET /v1/process HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer 00\r\n\r\n')
put('http-request', 'basic-auth', 'GET /v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YTpi\r\n\r\n')
put('http-request', 'head', http('HEAD', '/v1/actors'))
put('http-request', 'delete', http('DELETE', '/v1/process'))
put('http-request', 'post-body', http('POST', '/v1/process', body=b'{"x":1}'))
put('http-request', 'chunked', http('POST', '/v1', extra='Transfer-Encoding: chunked\r\n') + b'5\r\nhello\r\n0\r\n\r\n')
put('http-request', 'http10', http('GET', '/v1/cache', version='HTTP/1.0'))
put('http-request', 'pipelined', http('GET', '/v1') + http('GET', '/v1/actors') + http('GET', '/v1/trace'))
put('http-request', 'keepalive-close', http('GET', '/v1', extra='Connection: close\r\n'))
put('http-request', 'bad-request-line', 'GET\r\n\r\n')
put('http-request', 'long-header', http('GET', '/v1', extra='X-Long: ' + 'a' * 3000 + '\r\n'))
put('http-request', 'stream-no-upgrade', http('GET', '/v1/stream'))
put('http-request', 'expect-continue', http('PUT', '/v1', extra='Expect: 100-continue\r\nContent-Length: 10\r\n'))

# --- WebSocket frames (after the upgrade, from the client: masked) ----
def frame(opcode, payload, fin=True, mask=b'\x01\x02\x03\x04', masked=True):
    b0 = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        hdr = bytes([b0, (0x80 if masked else 0) | n])
    elif n < 65536:
        hdr = bytes([b0, (0x80 if masked else 0) | 126]) + struct.pack('>H', n)
    else:
        hdr = bytes([b0, (0x80 if masked else 0) | 127]) + struct.pack('>Q', n)
    if not masked:
        return hdr + payload
    return hdr + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(payload))


put('websocket', 'nothing', b'')
put('websocket', 'text', frame(1, b'{"type":"hello"}'))
put('websocket', 'binary', frame(2, bytes(range(40))))
put('websocket', 'ping', frame(9, b'abc'))
put('websocket', 'pong', frame(10, b''))
put('websocket', 'close', frame(8, struct.pack('>H', 1000) + b'bye'))
put('websocket', 'close-bad-code', frame(8, struct.pack('>H', 5)))
put('websocket', 'fragmented', frame(1, b'par', fin=False) + frame(0, b'tial'))
put('websocket', 'unmasked', frame(1, b'x', masked=False))
put('websocket', 'long16', frame(1, b'y' * 300))
put('websocket', 'reserved-op', frame(3, b'z'))
put('websocket', 'bad-utf8', frame(1, b'\xff\xfe'))
put('websocket', 'truncated', frame(1, b'hello world')[:7])
put('websocket', 'text-then-close', frame(1, b'a') + frame(8, struct.pack('>H', 1001)))

# --- trace JSON ----------------------------------------------------------
for name in ['fixture-trace.json', 'fixture-gpu-demo-trace.json']:
    with open(os.path.join(HERE, '..', 'inspector', name), 'rb') as f:
        put('trace-json', name, f.read())
put('trace-json', 'empty-object', '{}')
put('trace-json', 'empty-events', '{"traceEvents":[]}')
put('trace-json', 'array-form', '[{"ph":"X","name":"k","pid":1,"tid":2,"ts":1,"dur":2,"args":{"seq":1}}]')
put('trace-json', 'one-x', json.dumps({'traceEvents': [
    {'ph': 'X', 'cat': 'gpu', 'name': 'fill', 'pid': 1, 'tid': 3, 'ts': 10.5, 'dur': 2.0,
     'args': {'seq': 7, 'actor': 'a', 'library': 'driver', 'op': 'fill', 'device': 0, 'generation': 1,
              'stream': 3, 'error': 'boom'}}]}))
put('trace-json', 'flow', json.dumps({'traceEvents': [
    {'ph': 's', 'name': 'dep', 'id': '1', 'pid': 1, 'tid': 1, 'ts': 1},
    {'ph': 'f', 'name': 'dep', 'id': '1', 'pid': 1, 'tid': 2, 'ts': 2, 'bp': 'e'}]}))
put('trace-json', 'not-json', 'traceEvents')
put('trace-json', 'wrong-types', '{"traceEvents":[{"ph":1,"ts":"x","args":[]}]}')

# --- kernel cache entries --------------------------------------------
FORMAT_VERSION = 2
HEADER = 176


def entry(key='ab' * 32, meta=None, source=b'', log=b'', manifest=b'', ptx=b'', cubin=b'', ltoir=b'',
          version=FORMAT_VERSION, created=1700000000000000):
    if meta is None:
        meta = {'kernel_names': ['k'], 'lowered_names': ['_Z1kv'], 'flags': ['--gpu-architecture=sm_90'],
                'arch': 'sm_90', 'nvrtc_version': '13.0', 'compile_time_ms': 12.5}
    metab = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    hdr = bytearray(HEADER)
    hdr[0:8] = b'ATOMRKC\n'
    struct.pack_into('<II', hdr, 8, version, HEADER)
    hdr[16:80] = key.encode()
    struct.pack_into('<q', hdr, 80, created)
    struct.pack_into('<IIII', hdr, 88, len(metab), len(source), len(log), len(manifest))
    struct.pack_into('<QQQ', hdr, 104, len(ptx), len(cubin), len(ltoir))
    return bytes(hdr) + metab + source + log + ptx + cubin + ltoir + manifest


SEAL = b'\x01'   # first byte odd: the harness writes the right checksum
RAW = b'\x00'
put('cache-entry', 'sealed-full', SEAL + entry(source=b'extern "C" __global__ void k() {}', log=b'ok',
                                            ptx=b'.version 8.0\n', cubin=b'\x7fELF' + bytes(60),
                                            manifest=b'{"headers":[]}'))
put('cache-entry', 'sealed-minimal', SEAL + entry())
put('cache-entry', 'unsealed', RAW + entry())
put('cache-entry', 'sealed-bad-meta', SEAL + entry(meta=b'{"kernel_names":["a","b"],"lowered_names":["x"]}'))
put('cache-entry', 'sealed-meta-not-object', SEAL + entry(meta=b'[1,2]'))
put('cache-entry', 'sealed-meta-garbage', SEAL + entry(meta=b'\xff\x00{'))
put('cache-entry', 'sealed-old-version', SEAL + entry(version=1))
put('cache-entry', 'sealed-truncated', SEAL + entry(ptx=b'x' * 64)[:-10])
put('cache-entry', 'short', SEAL + b'ATOMRKC\n')
put('cache-entry', 'sealed-upper-key', SEAL + entry(key='AB' * 32))
put('cache-entry', 'sealed-manifest-garbage', SEAL + entry(manifest=b'{"headers":'))
# found by hand while writing the attach client: empty JSON has no root
put('cache-entry', 'crash-sealed-empty-meta', SEAL + entry(meta=b''))
put('cache-entry', 'crash-sealed-blank-meta', SEAL + entry(meta=b'  \n'))

# --- stream messages (the inspector's parser) ------------------------
put('stream-message', 'record', json.dumps({
    'type': 'record', 'actor': 'a', 'library': 'driver', 'operation': 'fill', 'sequence': 7, 'device': 0,
    'stream': 3, 'submit_us': 10, 'enqueue_us': 12, 'complete_us': 20, 'gpu_ms': 0.5, 'mailbox_depth': 2,
    'error': None}))
put('stream-message', 'record-timed', json.dumps({
    'type': 'record', 'actor': 'a', 'library': 'cublas', 'operation': 'gemm', 'sequence': 9, 'device': 0,
    'stream': 1, 'submit_us': 1, 'enqueue_us': 2, 'complete_us': 9, 'gpu_ms': 0.004, 'mailbox_depth': 0,
    'error': 'boom', 'gpu_start_ns': 3000, 'gpu_end_ns': 7000}))
put('stream-message', 'dropped', '{"type":"dropped","count":12}')
put('stream-message', 'huge-times', '{"type":"record","operation":"x","submit_us":9223372036854775807,'
    '"gpu_start_ns":-5,"gpu_end_ns":-9,"device":-2147483649,"stream":99999999999}')
put('stream-message', 'batch', json.dumps({'type': 'records', 'records': [
    {'type': 'record', 'actor': 'a', 'library': 'driver', 'operation': 'fill', 'sequence': 7, 'device': 0,
     'stream': 3, 'submit_us': 10, 'enqueue_us': 12, 'complete_us': 20, 'gpu_ms': 0.5, 'mailbox_depth': 2,
     'error': None},
    {'type': 'record', 'actor': 'a', 'library': 'driver', 'operation': 'copy', 'sequence': 8, 'device': 0,
     'stream': 3, 'submit_us': 21, 'enqueue_us': 22, 'complete_us': 30, 'gpu_ms': None, 'mailbox_depth': 0,
     'error': 'boom'}]}))
put('stream-message', 'batch-bad', '{"type":"records","records":[{"type":"record","operation":"x"},7]}')
put('stream-message', 'batch-empty', '{"type":"records","records":[]}')
put('stream-message', 'empty', '')
put('stream-message', 'unknown', '{"type":"hello"}')
