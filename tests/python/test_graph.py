#!/usr/bin/env python3
# AtomrGraph from Python on the public mock device (CPU suite): capture
# across two actors, replay, node names, DOT, a child graph, and the
# refusals of set_kernel_args, conditional nodes (if, while and switch),
# the graph-condition kernel argument; the same on a GPU when there is one
# (switch nodes: a driver for CUDA 12.8 or newer).
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mathutil import Atomr, GLib, gpu_or_none, run  # noqa: E402

N = 16


def upload(buf, values):
    buf.upload_sync(GLib.Bytes.new(struct.pack(f'{N}f', *values)), None)


def download(buf):
    return list(struct.unpack(f'{N}f', buf.download_sync(None).get_data()))


def recorded(start, finish):
    assert run(start, finish) is True


def check(device):
    a = Atomr.CopyActor.new(device)
    b = Atomr.CopyActor.new(device)
    a.set_name('py-a')
    b.set_name('py-b')
    x = Atomr.Buffer.new(device, Atomr.Dtype.F32, N)
    y = Atomr.Buffer.new(device, Atomr.Dtype.F32, N)
    upload(x, [float(i) for i in range(N)])

    # y <- x (b), x = 7 (a): recorded, not run
    graph = Atomr.Graph.new('py')
    assert graph.begin_capture([a, b])
    assert graph.props.state == Atomr.GraphState.CAPTURING
    recorded(lambda cb: b.copy_async(y, x, None, cb), b.copy_finish)
    recorded(lambda cb: a.fill_async(x, 7.0, None, cb), a.fill_finish)
    assert graph.end_capture()
    assert graph.get_n_nodes() == 2
    assert graph.get_node_name(0) == 'copy #1 on py-b'
    assert graph.get_node_name(1) == 'fill #1 on py-a'
    assert download(x) == [float(i) for i in range(N)]

    assert run(lambda cb: graph.replay_async(a, None, cb), graph.replay_finish)
    assert download(y) == [float(i) for i in range(N)]
    assert download(x) == [7.0] * N
    assert graph.props.n_replays == 1

    # new input, same graph
    upload(x, [2.0] * N)
    assert run(lambda cb: graph.replay_async(b, None, cb), graph.replay_finish)
    assert download(y) == [2.0] * N

    # only launches take new arguments
    args = Atomr.KernelArgs.new()
    args.add_buffer(x)
    try:
        graph.set_kernel_args(0, args)
        raise AssertionError('set_kernel_args on a copy must fail')
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.NOT_SUPPORTED), error.message
        assert 'not a kernel launch' in error.message, error.message
    try:
        graph.set_kernel_args(5, args)
        raise AssertionError('set_kernel_args on node 5 must fail')
    except GLib.Error as error:
        assert 'there is no node 5' in error.message, error.message

    # a child graph: outer = x = 3 (a), graph (a)
    outer = Atomr.Graph.new('outer')
    assert outer.begin_capture([a])
    recorded(lambda cb: a.fill_async(x, 3.0, None, cb), a.fill_finish)
    recorded(lambda cb: graph.replay_async(a, None, cb), graph.replay_finish)
    assert outer.end_capture()
    assert outer.get_n_nodes() == 2
    dot = outer.to_dot()
    assert 'graph-replay' in dot and 'n0 -> n1;' in dot, dot
    assert run(lambda cb: outer.replay_async(a, None, cb), outer.replay_finish)
    assert download(y) == [3.0] * N
    assert download(x) == [7.0] * N
    return graph


def i32(device, value):
    buf = Atomr.Buffer.new(device, Atomr.Dtype.I32, 1)
    buf.upload_sync(GLib.Bytes.new(struct.pack('i', value)), None)
    return buf


def i32_of(buf):
    return struct.unpack('i', buf.download_sync(None).get_data())[0]


def check_conditional(device):
    a = Atomr.CopyActor.new(device)
    a.set_name('py-cond')
    z = Atomr.Buffer.new(device, Atomr.Dtype.F32, N)
    c = i32(device, 0)
    s = i32(device, 1)
    zero = i32(device, 0)

    # then: z = 9
    then = graph_of(a, 'then', lambda cb: a.fill_async(z, 9.0, None, cb), a.fill_finish)
    # outer: c <- s, if c: then
    outer = Atomr.Graph.new('outer-if')
    assert outer.begin_capture([a])
    recorded(lambda cb: a.copy_async(c, s, None, cb), a.copy_finish)
    recorded(lambda cb: then.replay_if_async(a, c, None, cb), then.replay_if_finish)
    assert outer.end_capture()
    assert 'if condition != 0' in outer.to_dot()
    upload(z, [0.0] * N)
    assert run(lambda cb: outer.replay_async(a, None, cb), outer.replay_finish)
    assert download(z) == [9.0] * N
    upload(z, [0.0] * N)
    s.upload_sync(GLib.Bytes.new(struct.pack('i', 0)), None)
    assert run(lambda cb: outer.replay_async(a, None, cb), outer.replay_finish)
    assert download(z) == [0.0] * N

    # while c: c <- 0, z = 5 (runs once), not recorded
    loop = Atomr.Graph.new('loop')
    assert loop.begin_capture([a])
    recorded(lambda cb: a.copy_async(c, zero, None, cb), a.copy_finish)
    recorded(lambda cb: a.fill_async(z, 5.0, None, cb), a.fill_finish)
    assert loop.end_capture()
    c.upload_sync(GLib.Bytes.new(struct.pack('i', 1)), None)
    assert run(lambda cb: loop.replay_while_async(a, c, 10, None, cb), loop.replay_while_finish)
    assert download(z) == [5.0] * N
    assert i32_of(c) == 0
    upload(z, [0.0] * N)
    assert run(lambda cb: loop.replay_while_async(a, c, 10, None, cb), loop.replay_while_finish)
    assert download(z) == [0.0] * N

    try:
        run(lambda cb: loop.replay_while_async(a, c, 0, None, cb), loop.replay_while_finish)
        raise AssertionError('max_iterations 0 must fail')
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), error.message
        assert 'max_iterations is 0' in error.message, error.message
    try:
        run(lambda cb: loop.replay_if_async(a, z, None, cb), loop.replay_if_finish)
        raise AssertionError('an f32 condition must fail')
    except GLib.Error as error:
        assert 'holds f32' in error.message, error.message


def switch(actor, branches, condition):
    # A function, not a method: PyGObject hands its callback user_data too.
    def start(cb):
        Atomr.Graph.replay_switch_async(actor, branches, condition, None,
                                        lambda source, result, _data: cb(source, result))
    return start


def check_switch(device):
    a = Atomr.CopyActor.new(device)
    a.set_name('py-switch')
    z = Atomr.Buffer.new(device, Atomr.Dtype.F32, N)
    c = i32(device, 0)
    s = i32(device, 0)
    branches = [graph_of(a, f'set-{k + 1}', lambda cb, v=float(k + 1): a.fill_async(z, v, None, cb),
                         a.fill_finish) for k in range(3)]

    # outer: c <- s, switch c: 0: z = 1, 1: z = 2, 2: z = 3
    outer = Atomr.Graph.new('outer-switch')
    assert outer.begin_capture([a])
    recorded(lambda cb: a.copy_async(c, s, None, cb), a.copy_finish)
    recorded(switch(a, branches, c), Atomr.Graph.replay_switch_finish)
    assert outer.end_capture()
    dot = outer.to_dot()
    assert 'switch on condition (3 branches)' in dot, dot
    assert 'label="case 2: graph set-3";' in dot, dot
    for value, want in ((0, 1.0), (1, 2.0), (2, 3.0), (3, 0.0), (-1, 0.0), (2, 3.0)):
        upload(z, [0.0] * N)
        s.upload_sync(GLib.Bytes.new(struct.pack('i', value)), None)
        assert run(lambda cb: outer.replay_async(a, None, cb), outer.replay_finish)
        got = download(z)
        assert got == [want] * N, (value, got)

    # not recorded: one run
    upload(z, [0.0] * N)
    c.upload_sync(GLib.Bytes.new(struct.pack('i', 1)), None)
    assert run(switch(a, branches, c), Atomr.Graph.replay_switch_finish)
    assert download(z) == [2.0] * N

    try:
        run(switch(a, [], c), Atomr.Graph.replay_switch_finish)
        raise AssertionError('a switch without branches must fail')
    except GLib.Error as error:
        assert error.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT), error.message
        assert 'n_branches is 0' in error.message, error.message

    # the graph-condition argument chains like any other
    args = Atomr.KernelArgs.new()
    assert args.add_graph_condition() is not None


def graph_of(actor, name, start, finish):
    graph = Atomr.Graph.new(name)
    assert graph.begin_capture([actor])
    recorded(start, finish)
    assert graph.end_capture()
    return graph


def main():
    graph = check(Atomr.Device.new_mock())
    assert not graph.get_instantiated()
    assert graph.get_n_instantiations() == 0
    print('ok: capture, replay, child graph and refusals on the mock device')
    check_conditional(Atomr.Device.new_mock())
    print('ok: conditional nodes on the mock device')
    check_switch(Atomr.Device.new_mock())
    print('ok: switch nodes on the mock device')
    device = gpu_or_none()
    if device is None:
        print('ok: no CUDA device for the rest')
        return 0
    graph = check(device)
    assert graph.get_instantiated()
    assert graph.get_n_instantiations() == 1
    print('ok: the same on the GPU')
    check_conditional(device)
    print('ok: conditional nodes on the GPU')
    if Atomr.Device.get_driver_version() < 12080:
        print(f'ok: no switch nodes on this driver ({Atomr.Device.get_driver_version()})')
        return 0
    check_switch(device)
    print('ok: switch nodes on the GPU')
    return 0


if __name__ == '__main__':
    sys.exit(main())
