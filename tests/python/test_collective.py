#!/usr/bin/python3
"""Collectives through PyGObject: a local world of mock devices (the CPU
reference runs every collective), groups, deadlock refusal, failures.

On a machine with GPUs the same code runs on every visible GPU.
"""
import array
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib  # noqa: E402


def wait(start):
    """Runs an _async call to its reply on the default main context."""
    box = []
    start(lambda source, result, *rest: box.append((source, result)))
    ctx = GLib.MainContext.default()
    while not box:
        ctx.iteration(True)
    return box[0]


class CollectiveTest(unittest.TestCase):
    def setUp(self):
        self.devices = [Atomr.Device.new_mock() for _ in range(3)]
        self.world = Atomr.CollectiveWorld.new_local(self.devices)

    def tensor(self, rank, values):
        return Atomr.Tensor.from_host(self.devices[rank], array.array("f", values))

    def submit(self, group):
        source, result = wait(lambda cb: group.submit_async(None, cb))
        return group.submit_finish(result)

    def test_world(self):
        self.assertEqual(self.world.get_n_ranks(), 3)
        self.assertEqual(self.world.props.n_local_ranks, 3)
        self.assertEqual(self.world.get_actor(2).get_rank(), 2)
        self.assertIsNone(self.world.get_actor(3))
        self.assertFalse(self.world.props.failed)

    def test_all_reduce_group(self):
        group = Atomr.CollectiveGroup.new(self.world)
        ts = [self.tensor(r, [r + 1.0, 10.0 * r]) for r in range(3)]
        for r, t in enumerate(ts):
            group.add_all_reduce(self.world.get_actor(r), t, t, Atomr.ReduceOp.SUM)
        self.assertTrue(self.submit(group))
        for t in ts:
            self.assertEqual(list(array.array("f", bytes(t.download()))), [6.0, 30.0])

    def test_all_gather(self):
        group = Atomr.CollectiveGroup.new(self.world)
        outs = []
        for r in range(3):
            out = self.tensor(r, [0.0] * 3)
            outs.append(out)
            group.add_all_gather(self.world.get_actor(r), self.tensor(r, [float(r)]), out)
        self.assertTrue(self.submit(group))
        self.assertEqual(list(array.array("f", bytes(outs[1].download()))), [0.0, 1.0, 2.0])

    def test_bad_calls_raise(self):
        group = Atomr.CollectiveGroup.new(self.world)
        with self.assertRaises(GLib.Error) as ctx:
            group.add_all_reduce(self.world.get_actor(0), self.tensor(0, [1.0, 2.0]),
                                 self.tensor(0, [1.0]), Atomr.ReduceOp.SUM)
        self.assertTrue(ctx.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))

    def test_lone_collective_would_deadlock(self):
        t = self.tensor(0, [1.0])
        actor = self.world.get_actor(0)
        source, result = wait(lambda cb: actor.all_reduce_async(t, t, Atomr.ReduceOp.SUM, None, cb))
        with self.assertRaises(GLib.Error) as ctx:
            actor.all_reduce_finish(result)
        self.assertTrue(ctx.exception.matches(Atomr.error_quark(), Atomr.Error.WOULD_DEADLOCK))
        self.assertIn("one call per rank", ctx.exception.message)

    def test_abort_and_rebuild(self):
        failures = []
        self.world.connect("world-failed", lambda world, error: failures.append(error.message))
        self.world.abort("test")
        ctx = GLib.MainContext.default()
        while not failures:
            ctx.iteration(True)
        self.assertIn("test", failures[0])
        self.assertTrue(self.world.is_failed())
        self.assertTrue(self.world.rebuild(None))
        self.assertFalse(self.world.is_failed())


if __name__ == "__main__":
    unittest.main()
