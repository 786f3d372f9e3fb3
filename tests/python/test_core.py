#!/usr/bin/python3
"""atomr through PyGObject: devices, errors, buffers, actors, traces.

Runs with Debian's /usr/bin/python3 (python3-gi) against the built
typelib (GI_TYPELIB_PATH and LD_LIBRARY_PATH come from meson's test env).
"""
import json
import os
import struct
import sys
import tempfile
import unittest

import gi

gi.require_version("Atomr", "1")
from gi.repository import Atomr, Gio, GLib  # noqa: E402


class DeviceTest(unittest.TestCase):
    def test_count_never_fails(self):
        self.assertGreaterEqual(Atomr.Device.get_count(), 0)

    def test_no_device_is_a_glib_error(self):
        if Atomr.Device.get_count() > 0:
            self.skipTest("a CUDA device is present")
        with self.assertRaises(GLib.Error) as ctx:
            Atomr.Device.get(0)
        err = ctx.exception
        self.assertTrue(err.matches(Atomr.error_quark(), Atomr.Error.NO_DEVICE))
        self.assertEqual(err.domain, "atomr-error-quark")
        self.assertIn("libcuda", err.message)

    def test_enums(self):
        self.assertEqual(Atomr.dtype_get_size(Atomr.Dtype.C128), 16)
        self.assertEqual(Atomr.dtype_get_name(Atomr.Dtype.BF16), "bf16")
        ok, dt = Atomr.dtype_from_name("f64")
        self.assertTrue(ok)
        self.assertEqual(dt, Atomr.Dtype.F64)
        packed = Atomr.dtype_pack(Atomr.Dtype.F32, 2.5, 0.0).get_data()
        self.assertEqual(struct.unpack("<f", packed)[0], 2.5)
        self.assertEqual(int(Atomr.CompletionMode.ADAPTIVE), 0)
        self.assertEqual(int(Atomr.SupervisorPolicy.ESCALATE), 2)


class GpuTest(unittest.TestCase):
    """A real round trip when a GPU is present."""

    def setUp(self):
        if Atomr.Device.get_count() == 0:
            self.skipTest("no CUDA device")
        self.device = Atomr.Device.get(0)

    def test_round_trip(self):
        data = struct.pack("<64f", *range(64))
        buf = Atomr.Buffer.new(self.device, Atomr.Dtype.F32, 64)
        self.assertTrue(buf.upload_sync(GLib.Bytes.new(data), None))
        self.assertEqual(buf.download_sync(None).get_data(), data)

    def test_async_with_main_loop(self):
        actor = Atomr.CopyActor.new(self.device)
        buf = Atomr.Buffer.new(self.device, Atomr.Dtype.I32, 1000)
        loop = GLib.MainLoop()
        got = {}

        def on_fill(actor, result):
            actor.fill_finish(result)
            actor.download_async(buf, None, on_download)

        def on_download(actor, result):
            got["bytes"] = actor.download_finish(result).get_data()
            loop.quit()

        actor.fill_async(buf, 7.0, None, on_fill)
        loop.run()
        self.assertEqual(struct.unpack("<1000i", got["bytes"]), (7,) * 1000)


    def test_timed_trace_and_kept_launch_info(self):
        """Timing on: GPU slices on the stream's lane, and launch infos kept
        from the signal stay valid (no static scope)."""
        actor = Atomr.CopyActor.new(self.device)
        actor.set_timing(True)
        rec = Atomr.TraceRecorder.new(64)
        rec.add_actor(actor)
        kept = []
        actor.connect("after-complete", lambda a, info: kept.append(info))
        buf = Atomr.Buffer.new(self.device, Atomr.Dtype.F32, 1 << 20)
        loop = GLib.MainLoop()
        left = [3]

        def done(actor, result):
            actor.fill_finish(result)
            left[0] -= 1
            if left[0] == 0:
                loop.quit()

        for v in range(3):
            actor.fill_async(buf, float(v), None, done)
        loop.run()
        self.assertEqual(len(kept), 3)
        for info in kept:
            ok, start, end = info.get_gpu_times()
            self.assertTrue(ok)
            self.assertLess(start, end)
            self.assertGreater(info.get_timestamp(Atomr.LaunchEvent.REPLIED),
                               info.get_timestamp(Atomr.LaunchEvent.SUBMITTED))
        seqs = [info.get_sequence() for info in kept]
        self.assertEqual(len(set(seqs)), 3)
        doc = json.loads(rec.to_json())
        gpu = sorted((e for e in doc["traceEvents"] if e["ph"] == "X"), key=lambda e: e["ts"])
        self.assertEqual(len(gpu), 3)
        self.assertEqual({e["cat"] for e in gpu}, {"gpu"})
        self.assertEqual(len({e["tid"] for e in gpu}), 1)
        for a, b in zip(gpu, gpu[1:]):
            self.assertLessEqual(a["ts"] + a["dur"], b["ts"] + 1e-6)
        ids = {e["id"] for e in doc["traceEvents"] if e.get("cat") == "host"}
        self.assertEqual(ids, {str(s) for s in seqs})


class TraceTest(unittest.TestCase):
    def test_empty_trace_exports(self):
        rec = Atomr.TraceRecorder.new(16)
        self.assertEqual(rec.get_capacity(), 16)
        self.assertEqual(rec.get_n_records(), 0)
        doc = json.loads(rec.to_json())
        self.assertEqual(doc["otherData"]["atomr-trace-version"], 2)
        self.assertEqual(doc["displayTimeUnit"], "ns")
        # Only the process's name: no lanes without events.
        self.assertEqual([e["name"] for e in doc["traceEvents"]], ["process_name"])
        self.assertEqual(doc["traceEvents"][0]["pid"], os.getpid())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.json")
            self.assertTrue(rec.save(path))
            other = Atomr.TraceRecorder.new(4)
            self.assertTrue(other.load(path))
            self.assertEqual(other.get_n_records(), 0)

    def test_records_round_trip(self):
        rec = Atomr.TraceRecorder.new(8)
        info = Atomr.LaunchInfo.new("blas-1", "cublas", "gemm")
        info.set_times(100, 110, 250)
        info.set_timestamp(Atomr.LaunchEvent.REPLIED, 251_500)
        info.set_timestamp(Atomr.LaunchEvent.GPU_START, 120_250)
        info.set_timestamp(Atomr.LaunchEvent.GPU_END, 240_125)
        info.set_sequence(3)
        info.set_stream_id(2)
        info.set_geometry(4, 1, 1, 256, 1, 1, 0)
        rec.add_record(info)
        doc = json.loads(rec.to_json())
        gpu = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(len(gpu), 1)
        self.assertEqual(gpu[0]["name"], "gemm")
        self.assertEqual(gpu[0]["cat"], "gpu")
        # µs with a nanosecond fraction, from the first submission
        self.assertAlmostEqual(gpu[0]["ts"], 20.25)
        self.assertAlmostEqual(gpu[0]["dur"], 119.875)
        self.assertEqual(gpu[0]["args"]["block"], [256, 1, 1])
        host = [e for e in doc["traceEvents"] if e.get("cat") == "host"]
        self.assertEqual([e["ph"] for e in host], ["b", "n", "n", "n", "e"])
        self.assertEqual({e["id"] for e in host}, {"3"})
        self.assertAlmostEqual(host[-1]["ts"], 151.5)
        again = Atomr.TraceRecorder.new(8)
        again.load_json(rec.to_json(), -1)
        (copy,) = again.get_records()
        self.assertEqual(copy.get_operation(), "gemm")
        self.assertEqual(copy.get_complete_time(), 250)
        self.assertEqual(copy.get_gpu_times(), (True, 120_250, 240_125))
        self.assertEqual(copy.get_timestamp(Atomr.LaunchEvent.REPLIED), 251_500)

    def test_huge_capacity_costs_nothing_until_used(self):
        rec = Atomr.TraceRecorder.new(200_000_000)
        self.assertEqual(rec.get_n_records(), 0)
        info = Atomr.LaunchInfo.new("a", "cuda", "fill")
        info.set_times(1, 2, 3)
        rec.add_record(info)
        self.assertEqual(rec.get_n_records(), 1)

    def test_bad_trace_is_an_error(self):
        rec = Atomr.TraceRecorder.new(8)
        with self.assertRaises(GLib.Error) as ctx:
            rec.load_json("{nope", -1)
        self.assertTrue(ctx.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))


if __name__ == "__main__":
    unittest.main(verbosity=2)
