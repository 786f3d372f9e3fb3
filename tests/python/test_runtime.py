#!/usr/bin/python3
"""The envelope's errors, watchdog and supervisor signals through PyGObject.

Runs with Debian's /usr/bin/python3 (python3-gi) against the built typelib.
"""
import struct
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

    def test_own_thread_property(self):
        # A bare constructor (no device): the thread starts and ends, and
        # init says what is missing instead of crashing.
        actor = Atomr.CopyActor(own_thread=True)
        self.assertTrue(actor.props.own_thread)
        self.assertTrue(actor.get_own_thread())
        self.assertFalse(Atomr.CopyActor().props.own_thread)
        with self.assertRaises(GLib.Error):
            actor.init(None)
        del actor

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


    def test_own_thread_actor(self):
        # The actor's thread enqueues; the reply comes back to this loop.
        actor = Atomr.CopyActor(device=self.device, own_thread=True)
        actor.init(None)
        buf = Atomr.Buffer.new(self.device, Atomr.Dtype.F32, 256)
        loop = GLib.MainLoop()
        got = {}

        def on_download(a, result):
            got["bytes"] = a.download_finish(result)
            loop.quit()

        for i in range(100):
            actor.fill_async(buf, float(i), None, None)
        actor.download_async(buf, None, on_download)
        loop.run()
        values = got["bytes"].get_data()
        self.assertEqual(len(values), 256 * 4)
        self.assertEqual(struct.unpack_from("<f", values, 0)[0], 99.0)
        self.assertEqual(struct.unpack_from("<f", values, 255 * 4)[0], 99.0)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
