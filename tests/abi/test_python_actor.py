#!/usr/bin/python3
"""An actor written in Python through GI, with the public envelope.

AtomrOperation's enqueue and complete functions are (scope notified)
closures, so a Python subclass of Atomr.Actor gets hazard tracking,
signals and the actor's error handling like a C actor.  Runs on the host
test device: the enqueue function does the work on the CPU, at the
address atomr_operation_get_address() gives.
"""
import ctypes
import struct
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib, GObject  # noqa: E402


class AddActor(Atomr.Actor):
    """Adds a constant to a float32 buffer in place."""
    __gtype_name__ = "TestPythonAddActor"

    def add_async(self, buf, value, callback):
        op = Atomr.Operation.new(self, "add", None, None, callback)
        op.read(buf)
        op.write(buf)
        op.set_detail("value=%g" % value)
        op.set_enqueue_func(self._enqueue, (buf, value))
        op.set_complete_func(self._complete, value)
        op.submit()
        return op

    @staticmethod
    def _enqueue(op, data):
        buf, value = data
        if not op.is_host():
            raise GLib.Error("this test actor runs on the host device only",
                             "atomr-error-quark", int(Atomr.Error.NOT_SUPPORTED))
        if value < 0:
            raise GLib.Error("value %g is negative" % value,
                             "atomr-error-quark", int(Atomr.Error.INVALID_ARGUMENT))
        n = buf.get_n_elements()
        x = (ctypes.c_float * n).from_address(op.get_address(buf))
        for i in range(n):
            x[i] += value
        return True

    @staticmethod
    def _complete(op, task, value):
        task.return_int(int(value))

    def add_finish(self, result):
        return result.propagate_int()


def make_actor(device):
    actor = GObject.new(AddActor, device=device)
    actor.init(None)
    return actor


class PythonActorTest(unittest.TestCase):
    def setUp(self):
        self.device = Atomr.Device.new_mock()
        self.actor = make_actor(self.device)
        self.buf = Atomr.Buffer.new(self.device, Atomr.Dtype.F32, 4)
        self.buf.fill_sync(1.0, None)
        self.loop = GLib.MainLoop()

    def run_add(self, value):
        out = {}

        def done(actor, result):
            try:
                out["value"] = actor.add_finish(result)
            except GLib.Error as e:
                out["error"] = e
            self.loop.quit()
        self.actor.add_async(self.buf, value, done)
        self.loop.run()
        return out

    def values(self):
        data = self.buf.download_sync(None).get_data()
        return list(struct.unpack("4f", data))

    def test_runs_with_signals(self):
        seen = []
        self.actor.connect("before-enqueue", lambda a, info: seen.append(info.get_operation()))
        self.assertEqual(self.run_add(2.0), {"value": 2})
        self.assertEqual(self.run_add(0.5), {"value": 0})
        self.assertEqual(self.values(), [3.5] * 4)
        self.assertEqual(seen, ["add", "add"])

    def test_python_error_is_the_reply(self):
        out = self.run_add(-1.0)
        self.assertTrue(out["error"].matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))
        self.assertIn("value -1 is negative", out["error"].message)

    def test_submitted_once(self):
        op = Atomr.Operation.new(self.actor, "noop", None, None, None)
        self.assertFalse(op.props.submitted)
        self.assertEqual(op.props.name, "noop")
        op.submit()
        self.assertTrue(op.props.submitted)

    def test_bare_operation_does_nothing(self):
        op = Atomr.Operation()
        op.read(self.buf)
        op.submit()
        self.assertFalse(op.props.submitted)
        self.assertEqual(op.get_cu_stream(), 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
