#!/usr/bin/python3
"""The envelope's errors, watchdog and supervisor signals through PyGObject.

Runs with Debian's /usr/bin/python3 (python3-gi) against the built typelib.
"""
import sys
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib, GObject  # noqa: E402


class ApiTest(unittest.TestCase):
    def test_error_codes(self):
        self.assertGreater(int(Atomr.Error.DEPENDENCY_FAILED), int(Atomr.Error.UNRECOVERABLE))
        self.assertNotEqual(int(Atomr.Error.TIMED_OUT), int(Atomr.Error.DEPENDENCY_FAILED))
        self.assertNotEqual(int(Atomr.Error.WOULD_DEADLOCK), int(Atomr.Error.TIMED_OUT))

    def test_watchdog_property(self):
        names = [p.name for p in GObject.list_properties(Atomr.CopyActor)]
        self.assertIn("timeout-ms", names)

    def test_supervisor_signals(self):
        GObject.type_class_ref(Atomr.Device.__gtype__)   # signals exist once the class does
        self.assertNotEqual(GObject.signal_lookup("context-lost", Atomr.Device), 0)
        self.assertNotEqual(GObject.signal_lookup("choose-policy", Atomr.Device), 0)


class GpuTest(unittest.TestCase):
    def setUp(self):
        if Atomr.Device.get_count() == 0:
            self.skipTest("no CUDA device")
        self.device = Atomr.Device.get(0)

    def test_watchdog_and_barrier(self):
        actor = Atomr.CopyActor.new(self.device)
        buf = Atomr.Buffer.new(self.device, Atomr.Dtype.F32, 4)
        loop = GLib.MainLoop()
        got = {}

        actor.set_timeout_ms(10000)
        self.assertEqual(actor.props.timeout_ms, 10000)

        def on_barrier(a, result):
            got["ok"] = a.barrier_finish(result)
            loop.quit()

        def on_fill(a, result):
            a.fill_finish(result)
            a.barrier_async(None, on_barrier)

        actor.fill_async(buf, 1.5, None, on_fill)
        loop.run()
        self.assertTrue(got.get("ok"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
