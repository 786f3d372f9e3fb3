#!/usr/bin/python3
# test_cache_store.py — the kernel cache's storage API through GObject
# Introspection: reports, sizes, bare constructors, bundles.  Needs no GPU
# and no NVRTC (nothing is compiled).
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import shutil
import tempfile
import unittest

import gi
gi.require_version('Atomr', '1')
from gi.repository import Atomr, GLib  # noqa: E402


class CacheStoreTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='atomr-py-cache-')

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_parse_size(self):
        self.assertEqual(Atomr.parse_size('20k'), (True, 20 * 1024))
        self.assertEqual(Atomr.parse_size('1G'), (True, 1 << 30))
        with self.assertRaises(GLib.Error) as cm:
            Atomr.parse_size('lots')
        self.assertIn('lots', cm.exception.message)

    def test_report_of_empty_and_damaged(self):
        cache = Atomr.KernelCache.new(self.dir)
        ok, report = cache.get_report(True)
        self.assertTrue(ok)
        self.assertEqual(report.n_entries, 0)
        self.assertTrue(report.writable)
        with open(os.path.join(self.dir, 'ab' * 32 + '.akc'), 'wb') as f:
            f.write(b'junk')
        ok, report = cache.collect(GLib.MAXUINT64)
        self.assertEqual(report.n_damaged, 1)
        self.assertEqual(report.bytes_freed, 4)
        self.assertIsNone(cache.get_store_error())

    def test_bare_constructors_do_not_crash(self):
        cache = Atomr.KernelCache()
        self.assertTrue(cache.get_directory())
        self.assertGreater(cache.get_max_size(), 0)   # the default cache is bounded
        self.assertFalse(cache.get_store_source())
        entry = Atomr.KernelCacheEntry()
        self.assertIsNone(entry.get_manifest())
        self.assertIsNone(entry.lookup_lowered_name('k'))
        with self.assertRaises(GLib.Error):
            entry.load_log()
        self.assertEqual(entry.diff(entry), ['no manifest to compare (an entry written without one)'])

    def test_export_import_empty(self):
        cache = Atomr.KernelCache.new(self.dir)
        bundle = os.path.join(self.dir, 'b.tar')
        ok, n = cache.export(bundle)
        self.assertTrue(ok)
        self.assertEqual(n, 0)
        other = Atomr.KernelCache.new(os.path.join(self.dir, 'other'))
        ok, imported, rejected = other.import_(bundle)
        self.assertEqual((imported, rejected), (0, 0))
        with self.assertRaises(GLib.Error):
            other.import_(os.path.join(self.dir, 'missing.tar'))


if __name__ == '__main__':
    unittest.main()
