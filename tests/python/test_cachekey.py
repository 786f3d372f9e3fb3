#!/usr/bin/python3
# test_cachekey.py — issue 9 part A through GObject Introspection: text
# checks, the program name in the key, refusals, architecture messages.
# Needs NVRTC (no GPU); skips without it.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import shutil
import tempfile
import unittest

import gi
gi.require_version('Atomr', '1')
from gi.repository import Atomr, GLib  # noqa: E402

KERNEL = 'extern "C" __global__ void k (float *p) { p[0] = 1.0f; }\n'


def have_nvrtc():
    try:
        Atomr.nvrtc_get_version()
        return True
    except GLib.Error:
        return False


class TextTest(unittest.TestCase):
    def test_check_text(self):
        self.assertTrue(Atomr.nvrtc_check_text(b'// caf\xc3\xa9\n', 'ok.cu'))
        with self.assertRaises(GLib.Error) as cm:
            Atomr.nvrtc_check_text(b'abc\n\xffdef', 'bad.cu')
        self.assertTrue(cm.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))
        self.assertIn('offset 4', cm.exception.message)
        self.assertIn('line 2', cm.exception.message)


@unittest.skipUnless(have_nvrtc(), 'NVRTC cannot be loaded')
class KeyTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='atomr-py-cachekey-')
        self.cache = Atomr.KernelCache.new(os.path.join(self.dir, 'cache'))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def options(self):
        o = Atomr.CompileOptions.new()
        o.set_arch('sm_90')
        o.add_name_expression('k')
        return o

    def test_program_name_in_key(self):
        a = Atomr.nvrtc_compile(KERNEL, 'a.cu', self.options(), self.cache)
        b = Atomr.nvrtc_compile(KERNEL, 'b.cu', self.options(), self.cache)
        self.assertEqual(b.get_cache_status(), Atomr.CacheStatus.MISS)
        self.assertNotEqual(a.get_key(), b.get_key())
        status, key, nearest, reasons = self.cache.explain_program(KERNEL, 'a.cu', self.options())
        self.assertNotEqual(status, Atomr.CacheStatus.MISS)
        self.assertEqual(key, a.get_key())
        status, key, nearest, reasons = self.cache.explain_program(KERNEL, 'c.cu', self.options())
        self.assertEqual(status, Atomr.CacheStatus.MISS)
        self.assertTrue(any('program_name' in r for r in reasons), reasons)

    def test_computed_include_is_not_cached(self):
        with open(os.path.join(self.dir, 'm.h'), 'w') as f:
            f.write('#define V 1.0f\n')
        o = self.options()
        o.add_include_path(self.dir)
        source = '#define HDR <m.h>\n#include HDR\n' + KERNEL
        m = Atomr.nvrtc_compile(source, None, o, self.cache)
        self.assertEqual(m.get_cache_status(), Atomr.CacheStatus.NONE)

    def test_unsupported_arch_lists_supported(self):
        o = Atomr.CompileOptions.new()
        o.set_arch('sm_130')
        with self.assertRaises(GLib.Error) as cm:
            Atomr.nvrtc_compile(KERNEL, None, o, None)
        self.assertTrue(cm.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))
        self.assertIn('sm_90a', cm.exception.message)


if __name__ == '__main__':
    unittest.main()
