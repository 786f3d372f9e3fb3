#!/usr/bin/python3
"""Loading Atomr maps no CUDA library: each is dlopen()ed on first use.

`import Atomr`, asking for devices and listing the kernel cache must not
map cuBLAS, cuFFT, cuRAND, cuSOLVER, NVRTC, ... (issue: they were linked
directly and cost ~155 MB of RSS before anything ran).
"""
import os
import tempfile
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr  # noqa: E402

CUDA_LIBRARIES = ("libcuda.so", "libcudart.so", "libcublas", "libcufft", "libcurand",
                  "libcusolver", "libcusparse", "libcudnn", "libnccl", "libnvrtc",
                  "libnvJitLink")


def mapped():
    with open("/proc/self/maps") as f:
        maps = f.read()
    return sorted({lib for lib in CUDA_LIBRARIES if lib in maps})


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class LoadingTest(unittest.TestCase):
    def test_import_and_cache_listing_map_no_cuda_library(self):
        with tempfile.TemporaryDirectory() as d:
            cache = Atomr.KernelCache.new(d)
            self.assertEqual(cache.list().get_n_items(), 0)
        self.assertEqual(mapped(), [])
        # Asking for devices loads the driver (where there is one), nothing else.
        Atomr.Device.get_count()
        self.assertEqual([lib for lib in mapped() if lib != "libcuda.so"], [])
        # Printed, not asserted (a budget, not a test of wall time or RSS).
        print(f"RSS after import + cache listing: {rss_kib() / 1024:.1f} MiB")


if __name__ == "__main__":
    unittest.main()
