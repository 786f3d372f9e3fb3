#!/usr/bin/python3
"""Views and the Python overrides (gi/overrides/Atomr.py), on the host test
device: uploads from buffer-protocol objects with dtypes checked, downloads
into NumPy and bytearray, indexing, DLPack and __cuda_array_interface__
round trips with NumPy (kDLCPU stands in for kDLCUDA), awaitables on an
asyncio loop, complex scalars, repr.

Runs with Debian's /usr/bin/python3 (python3-gi, python3-numpy) against the
built typelib and the overrides in the source tree (PYTHONPATH).
"""
import array
import asyncio
import gc
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, GLib  # noqa: E402

try:
    import numpy
    numpy.ndarray  # a bare namespace package (no NumPy installed) has none
except (ImportError, AttributeError):  # the GPU bundle's Python has no NumPy
    numpy = None


class PlainTest(unittest.TestCase):
    """Without NumPy: array.array in, bytearray out, awaitables."""

    def test_round_trip(self):
        device = Atomr.Device.new_mock()
        t = Atomr.Tensor.from_host(device, array.array("d", [1.5, 2.5, 3.5, 4.5]), shape=(2, 2))
        out = t.T.download(bytearray(32))
        self.assertEqual(array.array("d", bytes(out)).tolist(), [1.5, 3.5, 2.5, 4.5])
        with self.assertRaises(TypeError):
            t.upload(array.array("f", [1, 2, 3, 4]))

        async def main():
            actor = Atomr.CopyActor.new(device)
            data = await actor.download_tensor_async(t[1])
            return array.array("d", data.get_data()).tolist()

        self.assertEqual(asyncio.run(main()), [3.5, 4.5])

    def test_buffer_upload_checked(self):
        device = Atomr.Device.new_mock()
        buffer = Atomr.Buffer.new(device, Atomr.Dtype.F32, 3)
        buffer.upload(array.array("f", [1, 2, 3]))
        self.assertEqual(array.array("f", bytes(buffer.download(bytearray(12)))).tolist(), [1, 2, 3])
        # the GLib.Bytes trap of packing one byte per element cannot happen here
        with self.assertRaises(TypeError):
            buffer.upload(array.array("i", [1, 2, 3]))
        self.assertEqual(repr(buffer), "<Atomr.Buffer 3 × f32 (12 bytes) on host>")


@unittest.skipUnless(numpy, "python3-numpy is not installed")
class TensorTest(unittest.TestCase):
    def setUp(self):
        self.device = Atomr.Device.new_mock()
        self.t = Atomr.Tensor.from_host(self.device, array.array("f", range(24)), shape=(2, 3, 4))

    def test_overrides_loaded(self):
        self.assertTrue(Atomr.Tensor.__module__.startswith("gi.overrides"))

    def test_views(self):
        t = self.t
        self.assertEqual(t.shape, (2, 3, 4))
        self.assertEqual(t.strides, (12, 4, 1))
        self.assertEqual(t.dtype, Atomr.Dtype.F32)
        self.assertEqual(len(t), 2)
        ref = numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)
        for key in [(1,), (slice(None), 1), (0, slice(None, None, -1)), (Ellipsis, 2),
                    (slice(1, 2), slice(0, 3, 2), slice(3, 0, -2)), (-1, -1, -1)]:
            with self.subTest(key=key):
                numpy.testing.assert_array_equal(t[key].download(), ref[key])
        numpy.testing.assert_array_equal(t[0].T.download(), ref[0].T)
        numpy.testing.assert_array_equal(t.reshape([6, 4]).download(), ref.reshape(6, 4))
        with self.assertRaises(GLib.Error) as cm:
            t[0].T.reshape([-1])
        self.assertIn("without a copy", cm.exception.message)
        with self.assertRaises(IndexError):
            t[0, 0, 0, 0]

    def test_repr(self):
        self.assertEqual(repr(self.t), "<Atomr.Tensor f32[2, 3, 4] strides [12, 4, 1] offset 0 on host>")
        self.assertEqual(repr(self.t.get_buffer()), "<Atomr.Buffer 24 × f32 (96 bytes) on host>")
        self.assertEqual(repr(Atomr.Tensor()), "<Atomr.Tensor empty tensor (no buffer)>")

    def test_upload_dtype_checked(self):
        t = Atomr.Tensor.empty(self.device, Atomr.Dtype.F32, [4])
        t.upload(array.array("f", [1, 2, 3, 4]))
        numpy.testing.assert_array_equal(t.download(), [1, 2, 3, 4])
        # never reinterpreted: the classic GLib.Bytes trap is a clear error
        with self.assertRaises(TypeError) as cm:
            t.upload(array.array("d", [1, 2, 3, 4]))
        self.assertIn("never reinterpreted", str(cm.exception))
        with self.assertRaises(TypeError):
            t.upload(bytes(16))
        with self.assertRaises(ValueError):
            t.upload(array.array("f", [1, 2, 3]))
        with self.assertRaises(ValueError):
            t.upload(numpy.zeros((2, 2, 1), dtype=numpy.float32))
        # numpy arrays, non-contiguous ones too, and memoryviews
        t.upload(numpy.arange(8, dtype=numpy.float32)[::2])
        numpy.testing.assert_array_equal(t.download(), [0, 2, 4, 6])
        t.upload(memoryview(array.array("f", [9, 8, 7, 6])))
        numpy.testing.assert_array_equal(t.download(), [9, 8, 7, 6])
        # into a strided view: only its elements change
        self.t[1, :, 0].upload(numpy.array([-1, -2, -3], dtype=numpy.float32))
        whole = self.t.download()
        numpy.testing.assert_array_equal(whole[1, :, 0], [-1, -2, -3])
        self.assertEqual(whole[1, 0, 1], 13)
        # complex data as complex64
        c = Atomr.Tensor.from_host(self.device, numpy.array([1 + 2j, 3 - 4j], dtype=numpy.complex64))
        self.assertEqual(c.dtype, Atomr.Dtype.C64)
        numpy.testing.assert_array_equal(c.download(), [1 + 2j, 3 - 4j])
        # bf16 takes raw bytes only
        b = Atomr.Tensor.empty(self.device, Atomr.Dtype.BF16, [2])
        b.upload(bytes([0, 0x3F, 0, 0x40]))
        self.assertEqual(bytes(b.download()), bytes([0, 0x3F, 0, 0x40]))
        with self.assertRaises(TypeError):
            b.upload(array.array("H", [1, 2]))

    def test_buffer_upload_numpy(self):
        buffer = Atomr.Buffer.new(self.device, Atomr.Dtype.F64, 6)
        buffer.upload(numpy.arange(6, dtype=numpy.float64).reshape(2, 3))
        numpy.testing.assert_array_equal(buffer.download(), numpy.arange(6))

    def test_download_into(self):
        out = numpy.empty((3, 4), dtype=numpy.float32)
        got = self.t[1].download(out)
        self.assertIs(got, out)
        numpy.testing.assert_array_equal(out, numpy.arange(12, 24).reshape(3, 4))
        raw = bytearray(48)
        self.t[0].download(raw)
        self.assertEqual(bytes(raw), numpy.arange(12, dtype=numpy.float32).tobytes())
        with self.assertRaises(TypeError):
            self.t[0].download(numpy.empty((3, 4), dtype=numpy.float64))
        with self.assertRaises(ValueError):
            self.t[0].download(bytearray(10))

    def test_dlpack_to_numpy(self):
        view = self.t[1, ::2, 1:]
        self.assertEqual(view.__dlpack_device__(), (1, 0))
        arr = numpy.from_dlpack(view)
        numpy.testing.assert_array_equal(arr, numpy.arange(24, dtype=numpy.float32).reshape(2, 3, 4)[1, ::2, 1:])
        # the same memory: no copy
        host = view.download()
        self.assertEqual(arr.ctypes.data, arr.ctypes.data)
        numpy.testing.assert_array_equal(arr, host)
        # unconsumed capsules release their tensor
        for version in (None, (1, 0)):
            capsule = self.t.__dlpack__(max_version=version)
            del capsule
        gc.collect()
        with self.assertRaises(ValueError):
            self.t.__dlpack__(stream=5)

    def test_dlpack_from_numpy(self):
        src = numpy.arange(12, dtype=numpy.float64).reshape(3, 4)
        t = Atomr.Tensor.from_dlpack(src, self.device)
        self.assertEqual(t.shape, (3, 4))
        self.assertEqual(t.dtype, Atomr.Dtype.F64)
        src[0, 0] = 42      # a view, not a copy
        self.assertEqual(t.download()[0, 0], 42)
        del src
        gc.collect()
        numpy.testing.assert_array_equal(t.download()[1], [4, 5, 6, 7])
        with self.assertRaises(GLib.Error) as cm:
            Atomr.Tensor.from_dlpack(numpy.zeros(3, dtype=numpy.int16), self.device)
        self.assertIn("has no AtomrDtype", cm.exception.message)
        with self.assertRaises(GLib.Error):
            Atomr.Tensor.from_dlpack(numpy.zeros(3))   # host memory, no host device

    def test_cuda_array_interface_import(self):
        src = numpy.arange(6, dtype=numpy.float32)

        class Producer:
            __cuda_array_interface__ = {"shape": (2, 3), "typestr": "<f4", "version": 3,
                                        "data": (src.ctypes.data, False), "strides": (4, 8),
                                        "stream": None}
        t = Atomr.Tensor.from_cuda_array_interface(Producer(), self.device)
        numpy.testing.assert_array_equal(t.download(), [[0, 2, 4], [1, 3, 5]])
        with self.assertRaises(AttributeError):
            self.t.__cuda_array_interface__   # the host device has no CUDA memory
        with self.assertRaises(ValueError):
            Atomr.Tensor.from_cuda_array_interface(dict(Producer.__cuda_array_interface__, strides=(3, 8)),
                                                   self.device)

    def test_cuda_array_interface_read_only(self):
        # A producer that lends its memory read-only: no operation may
        # write it (issue 10).
        src = numpy.arange(6, dtype=numpy.float32)

        class Producer:
            __cuda_array_interface__ = {"shape": (6,), "typestr": "<f4", "version": 3,
                                        "data": (src.ctypes.data, True), "strides": None,
                                        "stream": None}
        t = Atomr.Tensor.from_cuda_array_interface(Producer(), self.device)
        buf = t.get_buffer()
        self.assertTrue(buf.get_read_only())
        self.assertTrue(buf.props.read_only)
        with self.assertRaises(GLib.Error) as cm:
            buf.fill_sync(9.0, None)
        self.assertIn("read-only memory", cm.exception.message)
        numpy.testing.assert_array_equal(src, numpy.arange(6, dtype=numpy.float32))
        numpy.testing.assert_array_equal(t.download(), src)

    def test_awaitables(self):
        actor = None

        async def main():
            nonlocal actor
            actor = Atomr.CopyActor.new(self.device)
            data = await actor.download_tensor_async(self.t[0, 0])
            self.assertEqual(len(data.get_data()), 16)
            dst = Atomr.Tensor.empty(self.device, Atomr.Dtype.F32, [4])
            ok = await actor.copy_tensor_async(self.t[1, 2], dst)
            self.assertTrue(ok)
            numpy.testing.assert_array_equal(dst.download(), [20, 21, 22, 23])
            blas = Atomr.BlasActor.new(self.device)
            c = Atomr.Tensor.empty(self.device, Atomr.Dtype.F32, [3, 3])
            # complex scalars are taken as Python complex; the host device
            # then refuses the work, as an exception of the awaiting task
            with self.assertRaises(GLib.Error) as cm:
                await blas.gemm_tensor_async(1 + 2j, self.t[0], self.t[1].T, 0j, c)
            self.assertIn("no cuBLAS", cm.exception.message)
            with self.assertRaises(GLib.Error) as cm:
                await blas.gemm_tensor_async(1.0, self.t[0], self.t[0], 0.0, c)
            self.assertIn("shapes do not chain", cm.exception.message)

        asyncio.run(main())

    def test_memory_pool(self):
        pool = self.device.get_memory_pool()
        before = pool.props.used
        t = Atomr.Tensor.empty(self.device, Atomr.Dtype.F64, [128])
        self.assertEqual(pool.props.used, before + 1024)
        del t
        gc.collect()
        self.assertGreaterEqual(pool.props.reserved, 1024)
        self.assertTrue(pool.trim(0))


if __name__ == "__main__":
    unittest.main(verbosity=2)
