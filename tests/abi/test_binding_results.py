#!/usr/bin/python3
"""Boxed results instead of boolean + out-parameters, and string-only
variants, as bindings see them (issue 20 part A, item 4).

Device.get_memory_info, KernelCache.get_stats and KernelCache.gc are the
atomr_*_query/run_* functions under the C getters' names (rename-to);
TraceRecorder.load_json_string takes a plain string.
"""
import os
import tempfile
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib  # noqa: E402

TRACE = '[{"ph":"X","name":"gemm","cat":"cublas","ts":10,"dur":5,"pid":1,"tid":1}]'


class BindingResultsTest(unittest.TestCase):
    def test_memory_info_is_boxed(self):
        device = Atomr.Device.new_mock()
        info = device.get_memory_info()
        self.assertIsInstance(info, Atomr.MemoryInfo)
        self.assertEqual(info.total_bytes, device.get_total_memory())
        self.assertLessEqual(info.free_bytes, info.total_bytes)

    def test_memory_info_of_bare_device_is_an_error(self):
        with self.assertRaises(GLib.Error) as cm:
            Atomr.Device().get_memory_info()
        self.assertTrue(cm.exception.matches(Atomr.error_quark(), cm.exception.code))

    def test_cache_stats_and_gc_are_reports(self):
        with tempfile.TemporaryDirectory() as d:
            cache = Atomr.KernelCache.new(d)
            # A damaged entry file: gc removes it and says so.
            with open(os.path.join(d, "0" * 64 + ".akc"), "wb") as f:
                f.write(b"not a cache entry")
            stats = cache.get_stats()
            self.assertIsInstance(stats, Atomr.KernelCacheReport)
            self.assertEqual(stats.n_entries, 0)
            self.assertEqual(stats.hits, 0)
            report = cache.gc(0)
            self.assertIsInstance(report, Atomr.KernelCacheReport)
            self.assertEqual(report.n_damaged, 1)
            self.assertEqual(report.bytes_freed, len(b"not a cache entry"))
            self.assertFalse(os.path.exists(os.path.join(d, "0" * 64 + ".akc")))

    def test_load_json_string(self):
        recorder = Atomr.TraceRecorder.new(8)
        self.assertTrue(recorder.load_json_string(TRACE))
        self.assertEqual(recorder.get_n_records(), 1)
        with self.assertRaises(GLib.Error) as cm:
            recorder.load_json_string("{nope")
        self.assertIn("invalid JSON", cm.exception.message)
        self.assertEqual(recorder.get_n_records(), 1)   # left as it was


if __name__ == "__main__":
    unittest.main(verbosity=2)
