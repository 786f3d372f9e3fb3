# atomr_ctypes.py — the few C entry points of libatomr-1 that the device
# scripts need, through ctypes, for interpreters without PyGObject (the GPU
# machine's PyTorch/CuPy Python).  Not a binding: just enough for
# device_interop.py and bench_pool_torch.py.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import ctypes
import os
from pathlib import Path

F32 = 2      # AtomrDtype
U8 = 7
DL_VERSIONED = b"dltensor_versioned"
DL_LEGACY = b"dltensor"
# capsule names must outlive the capsules: module constants
_USED = {DL_VERSIONED: b"used_dltensor_versioned", DL_LEGACY: b"used_dltensor"}


class GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int), ("message", ctypes.c_char_p)]


class AtomrError(RuntimeError):
    pass


def _lib_dir():
    env = os.environ.get("ATOMR_LIB_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "lib", here.parent.parent / "build" / "lib"):
        if (candidate / "libatomr-1.so.0").exists():
            return candidate
    raise FileNotFoundError("libatomr-1.so.0 not found: set ATOMR_LIB_DIR")


def load():
    """Loads libatomr-1 and the GLib libraries bundled beside it."""
    d = _lib_dir()
    # dependencies first, by path, so the loader finds them by soname
    for name in ("libpcre2-8.so.0", "libglib-2.0.so.0", "libffi.so.8", "libgobject-2.0.so.0",
                 "libgmodule-2.0.so.0", "libz.so.1", "libselinux.so.1", "libblkid.so.1",
                 "libmount.so.1", "libgio-2.0.so.0", "libjson-glib-1.0.so.0"):
        if (d / name).exists():
            try:
                ctypes.CDLL(str(d / name), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
    lib = ctypes.CDLL(str(d / "libatomr-1.so.0"), mode=ctypes.RTLD_GLOBAL)
    P, U64, I64P = ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64)
    E = ctypes.POINTER(ctypes.POINTER(GError))
    sigs = {
        "atomr_device_get": (P, [ctypes.c_int, E]),
        "atomr_copy_actor_new": (P, [P, E]),
        "atomr_tensor_empty": (P, [P, ctypes.c_int, I64P, ctypes.c_uint, E]),
        "atomr_tensor_get_device_pointer": (U64, [P]),
        "atomr_tensor_get_buffer": (P, [P]),
        "atomr_tensor_get_byte_size": (U64, [P]),
        "atomr_tensor_export_dlpack": (U64, [P, ctypes.c_int, E]),
        "atomr_tensor_import_dlpack": (P, [U64, ctypes.c_int, P, E]),
        "atomr_tensor_new_for_device_pointer": (P, [P, ctypes.c_int, U64, I64P, ctypes.c_uint, I64P,
                                                    ctypes.c_uint, P, P, E]),
        "atomr_actor_upload_tensor_from_address_sync": (ctypes.c_int, [P, P, U64, U64, P, E]),
        "atomr_actor_download_tensor_to_address_sync": (ctypes.c_int, [P, P, U64, U64, P, E]),
        "atomr_actor_signal_stream_sync": (ctypes.c_int, [P, U64, ctypes.POINTER(P), ctypes.c_uint, P, E]),
        "atomr_actor_wait_stream_sync": (ctypes.c_int, [P, U64, ctypes.POINTER(P), ctypes.c_uint, P, E]),
        "atomr_actor_wait_event_sync": (ctypes.c_int, [P, U64, ctypes.POINTER(P), ctypes.c_uint, P, E]),
        "atomr_buffer_new": (P, [P, ctypes.c_int, U64, E]),
        "g_object_unref": (None, [P]),
        "g_error_free": (None, [ctypes.POINTER(GError)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


class Atomr:
    """Thin helpers raising AtomrError with the GError message."""

    def __init__(self):
        self.lib = load()

    def call(self, name, *args):
        err = ctypes.POINTER(GError)()
        result = getattr(self.lib, name)(*args, ctypes.byref(err))
        if err:
            message = err.contents.message.decode()
            self.lib.g_error_free(err)
            raise AtomrError(f"{name}: {message}")
        return result

    def buffers(self, tensor):
        arr = (ctypes.c_void_p * 1)(self.lib.atomr_tensor_get_buffer(tensor))
        return arr, 1


# DLPack capsules through the CPython C API (as the PyGObject overrides do)
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _destructor(versioned, name):
    def destroy(capsule):
        if _raw_is_valid(capsule, name):
            address = _raw_get_pointer(capsule, name)
            fn = ctypes.c_void_p.from_address(address + (16 if versioned else 56)).value
            if fn:
                _DELETER(fn)(address)
    return _DESTRUCTOR(destroy)


_destroy_versioned = _destructor(True, DL_VERSIONED)
_destroy_legacy = _destructor(False, DL_LEGACY)


def capsule(address, versioned):
    if versioned:
        return _api.PyCapsule_New(address, DL_VERSIONED, ctypes.cast(_destroy_versioned, ctypes.c_void_p))
    return _api.PyCapsule_New(address, DL_LEGACY, ctypes.cast(_destroy_legacy, ctypes.c_void_p))


def consume(cap):
    """(address, versioned) of an unused capsule, renamed used_*."""
    for name, versioned in ((DL_VERSIONED, True), (DL_LEGACY, False)):
        if _api.PyCapsule_IsValid(cap, name):
            address = _api.PyCapsule_GetPointer(cap, name)
            _api.PyCapsule_SetName(cap, _USED[name])
            return address, versioned
    raise BufferError("not an unused DLPack capsule")
