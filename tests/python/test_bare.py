#!/usr/bin/python3
"""Every Atomr type built the GObject way, bare, from Python.

A binding can call any type's constructor without properties
(``Atomr.CopyActor()``, ``Atomr.Buffer()``, ``Atomr.Device()``,
``Atomr.Module()`` ...), which bypasses the C constructors.  Such an object
must never crash the process: every method either works on the empty
object or fails with a GLib.Error.  The test builds every non-abstract
object type of the typelib bare and calls every method it has (and
inherits), with arguments synthesized from the introspection data:
nullable arguments get None, objects get a bare object of their type,
async methods get a callback whose reply is finished.  The test
environment sets G_DEBUG=fatal-criticals, so a g_return_if_fail warning
fails the test too.
"""
import keyword
import os
import tempfile
import time
import unittest

import gi

gi.require_version("GIRepository", "2.0")
gi.require_version("Atomr", "1")
from gi.repository import Atomr, GIRepository, GLib  # noqa: E402

REPO = GIRepository.Repository.get_default()
T = GIRepository.TypeTag
INTS = {T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64}


def object_infos():
    for i in range(REPO.get_n_infos("Atomr")):
        info = REPO.get_info("Atomr", i)
        if info.get_type() == GIRepository.InfoType.OBJECT and \
                not GIRepository.object_info_get_abstract(info):
            yield info


def methods_of(info):
    """Own and inherited Atomr instance methods, most derived first."""
    seen = set()
    while info is not None and info.get_namespace() == "Atomr":
        for k in range(GIRepository.object_info_get_n_methods(info)):
            m = GIRepository.object_info_get_method(info, k)
            if GIRepository.function_info_get_flags(m) & GIRepository.FunctionInfoFlags.IS_METHOD \
                    and m.get_name() not in seen:
                seen.add(m.get_name())
                yield info, m
        info = GIRepository.object_info_get_parent(info)


class Args:
    """Synthesizes arguments; bare objects are made once per method call."""

    def __init__(self):
        self.bare = {}

    def value(self, arg):
        ti = GIRepository.arg_info_get_type(arg)
        tag = GIRepository.type_info_get_tag(ti)
        if GIRepository.arg_info_may_be_null(arg):
            return None
        if tag == T.BOOLEAN:
            return False
        if tag in INTS:
            return 1
        if tag in (T.FLOAT, T.DOUBLE):
            return 1.0
        if tag in (T.UTF8, T.FILENAME):
            return "x"
        if tag in (T.ARRAY, T.GLIST, T.GSLIST):
            return []
        if tag != T.INTERFACE:
            return None
        iface = GIRepository.type_info_get_interface(ti)
        kind = iface.get_type()
        if kind in (GIRepository.InfoType.ENUM, GIRepository.InfoType.FLAGS):
            return 0
        name = f"{iface.get_namespace()}.{iface.get_name()}"
        if name == "GLib.Bytes":
            return GLib.Bytes.new(b"\0" * 16)
        if name == "GLib.MainContext":
            return GLib.MainContext.default()
        if name == "Atomr.LaunchInfo":
            return Atomr.LaunchInfo.new("actor", "cuda", "op")
        if name == "Atomr.LaunchConfig":
            return Atomr.LaunchConfig.new(1, 1, 1, 1, 1, 1)
        if name == "Atomr.KernelArgs":
            return Atomr.KernelArgs.new()
        if iface.get_namespace() == "Atomr" and kind == GIRepository.InfoType.OBJECT:
            cls = Atomr.CopyActor if name == "Atomr.Actor" else getattr(Atomr, iface.get_name())
            if name not in self.bare:
                self.bare[name] = cls()
            return self.bare[name]
        return None


def in_args(m):
    out = []
    for k in range(GIRepository.callable_info_get_n_args(m)):
        a = GIRepository.callable_info_get_arg(m, k)
        if GIRepository.arg_info_get_direction(a) != GIRepository.Direction.OUT:
            out.append(a)
    # PyGObject hides array lengths and user_data; drop what it hides.
    hidden = set()
    for a in out:
        ti = GIRepository.arg_info_get_type(a)
        if GIRepository.type_info_get_tag(ti) == T.ARRAY:
            n = GIRepository.type_info_get_array_length(ti)
            if n >= 0:
                hidden.add(GIRepository.callable_info_get_arg(m, n).get_name())
        closure = GIRepository.arg_info_get_closure(a)
        if closure >= 0 and GIRepository.type_info_get_tag(ti) == T.INTERFACE:
            hidden.add(GIRepository.callable_info_get_arg(m, closure).get_name())
    return [a for a in out if a.get_name() not in hidden]


def call(obj, m):
    """Calls one method; returns what happened, or raises on a wrong kind of failure."""
    synth = Args()
    values, callback_at = [], None
    for i, a in enumerate(in_args(m)):
        ti = GIRepository.arg_info_get_type(a)
        if GIRepository.type_info_get_tag(ti) == T.INTERFACE and \
                GIRepository.type_info_get_interface(ti).get_type() == GIRepository.InfoType.CALLBACK:
            callback_at = i
            values.append(None)
        else:
            values.append(synth.value(a))
    name = m.get_name()
    # PyGObject appends "_" to names that are Python keywords (import_).
    fn = getattr(obj, name + "_" if keyword.iskeyword(name) else name)
    try:
        if name.endswith("_async") and callback_at is not None:
            replies = []
            values[callback_at] = lambda source, result, *rest: replies.append(result)
            fn(*values)
            deadline = time.monotonic() + 5
            while not replies and time.monotonic() < deadline:
                GLib.MainContext.default().iteration(False)
                time.sleep(0.0002)
            if not replies:
                return "no reply within 5 s"
            getattr(obj, name[: -len("_async")] + "_finish")(replies[0])
        else:
            fn(*values)
        return "ok"
    except GLib.Error as e:
        return "error: " + e.message
    except TypeError as e:
        # The binding refused the synthesized arguments: not a crash.
        return "binding refused: " + str(e)


def setUpModule():
    # Methods taking a file name get "x", and a bare kernel cache uses the
    # default directory: keep both in a scratch directory.
    global _scratch
    _scratch = tempfile.TemporaryDirectory()
    os.chdir(_scratch.name)
    os.environ["ATOMR_CACHE_DIR"] = os.path.join(_scratch.name, "cache")


def tearDownModule():
    os.chdir("/")
    _scratch.cleanup()


class BareObjectsTest(unittest.TestCase):
    def test_every_type_and_method(self):
        n_calls = 0
        for info in object_infos():
            tname = info.get_name()
            for owner, m in methods_of(info):
                if m.get_name().endswith("_finish"):
                    continue
                with self.subTest(type=tname, method=m.get_name()):
                    print(f"{tname}.{m.get_name()}", end=" ", flush=True)
                    obj = getattr(Atomr, tname)()
                    outcome = call(obj, m)
                    print(outcome, flush=True)
                    self.assertNotIn("no reply", outcome)
                    n_calls += 1
        self.assertGreater(n_calls, 100)

    def _reply_error(self, start):
        replies = []
        start(lambda source, result, *rest: replies.append((source, result)))
        while not replies:
            GLib.MainContext.default().iteration(True)
        return replies[0]

    def test_bare_actor_request_fails_with_invalid_argument(self):
        for cls in (Atomr.CopyActor, Atomr.BlasActor, Atomr.FftActor, Atomr.RngActor,
                    Atomr.SolverActor, Atomr.NvrtcActor, Atomr.BlasLtActor):
            with self.subTest(actor=cls.__name__):
                actor = cls()
                source, result = self._reply_error(lambda cb: actor.barrier_async(None, cb))
                with self.assertRaises(GLib.Error) as ctx:
                    source.barrier_finish(result)
                self.assertTrue(ctx.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))
                self.assertIn("constructed without a device", ctx.exception.message)

    def test_bare_buffer_and_device_fail_cleanly(self):
        buf = Atomr.Buffer()
        self.assertTrue(buf.is_stale())
        with self.assertRaises(GLib.Error) as ctx:
            buf.upload_sync(GLib.Bytes.new(b"\0" * 4), None)
        self.assertTrue(ctx.exception.matches(Atomr.error_quark(), Atomr.Error.INVALID_ARGUMENT))
        self.assertIn("atomr_buffer_new", ctx.exception.message)
        with self.assertRaises(GLib.Error):
            buf.check()
        dev = Atomr.Device()
        self.assertEqual(dev.get_name(), "")
        for method in (dev.synchronize, dev.reset, dev.get_memory_info):
            with self.assertRaises(GLib.Error) as ctx:
                method()
            self.assertIn("atomr_device_get", ctx.exception.message)
        with self.assertRaises(GLib.Error):
            Atomr.Buffer.new(dev, Atomr.Dtype.F32, 4)

    def test_bare_module_is_empty(self):
        module = Atomr.Module()
        self.assertIsNone(module.get_ptx())
        self.assertIsNone(module.get_lowered_name("k"))
        self.assertEqual(module.get_log(), "")
        self.assertTrue(Atomr.Kernel().is_stale())


if __name__ == "__main__":
    unittest.main(verbosity=2)
