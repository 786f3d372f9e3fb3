# Atomr.py — PyGObject overrides for atomr-accel
#
# Installed next to PyGObject's own overrides (gi/overrides/Atomr.py) and
# loaded by `from gi.repository import Atomr`.  Adds what a Python user
# expects from an array library, on top of the introspected API:
#
# * uploads from any buffer-protocol object (NumPy arrays, bytearray,
#   memoryview, array.array) with the element type checked against the
#   tensor's dtype — never reinterpreted;
# * downloads straight into a NumPy array or a bytearray (one copy, from
#   pinned staging memory);
# * DLPack (__dlpack__, __dlpack_device__, Atomr.Tensor.from_dlpack) and
#   __cuda_array_interface__ v3, both ways, zero-copy, ordered by CUDA
#   events on the streams the protocols name;
# * `await actor.gemm_tensor_async(...)`: an _async method called without
#   a callback inside a running asyncio loop returns an awaitable;
# * complex scalars: a Python complex where the C API takes `x, x_imag`;
# * indexing and a readable __repr__.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import asyncio
import ctypes
import threading

from gi.repository import GLib, GObject

from ..module import get_introspection_module
from ..overrides import override

Atomr = get_introspection_module("Atomr")

__all__ = []

try:  # NumPy is optional: downloads then go to a bytearray
    import numpy
    numpy.ndarray  # a bare namespace package called numpy is no NumPy
except (ImportError, AttributeError):  # pragma: no cover
    numpy = None

# ---------------------------------------------------------------------------
# Element types

_FORMAT_DTYPES = {
    ("e", 2): Atomr.Dtype.F16,
    ("f", 4): Atomr.Dtype.F32,
    ("d", 8): Atomr.Dtype.F64,
    ("Zf", 8): Atomr.Dtype.C64,
    ("Zd", 16): Atomr.Dtype.C128,
    ("b", 1): Atomr.Dtype.I8,
    ("B", 1): Atomr.Dtype.U8,
}
for _code in "ilq":
    _FORMAT_DTYPES[(_code, 4)] = Atomr.Dtype.I32
    _FORMAT_DTYPES[(_code, 8)] = Atomr.Dtype.I64
for _code in "ILQ":
    _FORMAT_DTYPES[(_code, 4)] = Atomr.Dtype.U32
    _FORMAT_DTYPES[(_code, 8)] = Atomr.Dtype.U64

# dtypes that no buffer-protocol format names: raw bytes only
_RAW_DTYPES = (Atomr.Dtype.BF16, Atomr.Dtype.F8_E4M3, Atomr.Dtype.F8_E5M2)


def _dtype_of_view(view):
    """The Atomr.Dtype a memoryview's format denotes, or None."""
    fmt = view.format
    if fmt[:1] in ("<", "=", "@", "|"):
        fmt = fmt[1:]
    elif fmt[:1] in (">", "!"):
        return None
    return _FORMAT_DTYPES.get((fmt, view.itemsize))


def _dtype_name(dtype):
    return Atomr.dtype_get_name(dtype)


def _host_view(data, dtype, shape):
    """A C-contiguous byte view of @data, checked against dtype and shape."""
    view = memoryview(data)
    name = _dtype_name(dtype)
    if dtype in _RAW_DTYPES:
        if view.format not in ("B", "b", "c"):
            raise TypeError(
                f"{name} has no buffer format: pass its raw bytes (format 'B'), not format {view.format!r}")
    else:
        got = _dtype_of_view(view)
        if got != dtype:
            got_name = _dtype_name(got) if got is not None else "unknown"
            raise TypeError(
                f"cannot upload {view.format!r} data ({got_name}, {view.itemsize}-byte items) to a "
                f"{name} tensor: convert it first (data is never reinterpreted)")
        if view.ndim > 1 and tuple(view.shape) != tuple(shape):
            raise ValueError(f"data of shape {tuple(view.shape)} for a tensor of shape {tuple(shape)}")
    size = Atomr.dtype_get_size(dtype)
    count = 1
    for extent in shape:
        count *= extent
    if view.nbytes != count * size:
        raise ValueError(f"{view.nbytes} bytes of data for a {name} tensor of shape "
                         f"{tuple(shape)} ({count * size} bytes)")
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.nbytes else view


def _address_of(view, writable):
    """(address, keepalive) of a contiguous byte view."""
    if view.nbytes == 0:
        return 0, None
    if view.readonly:
        if writable:
            raise TypeError("the destination is read-only")
        obj = view.obj
        if isinstance(obj, bytes) and len(obj) == view.nbytes:
            return ctypes.cast(ctypes.c_char_p(obj), ctypes.c_void_p).value, obj
        copy = bytearray(view)
        view = memoryview(copy)
    holder = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(holder), (holder, view)


# ---------------------------------------------------------------------------
# One copy actor per device for the conveniences

_default_actors = {}
_default_lock = threading.Lock()


def default_actor(device):
    """The copy actor the Python conveniences use on @device."""
    key = id(device)
    with _default_lock:
        entry = _default_actors.get(key)
        if entry is None or entry[0] is not device:
            entry = (device, Atomr.CopyActor.new(device))
            _default_actors[key] = entry
        return entry[1]


__all__.append("default_actor")

# ---------------------------------------------------------------------------
# asyncio bridge (PyGObject 3.42 has no gi.events)
#
# Actors made on a thread without a thread-default GMainContext run their
# mailbox, and deliver replies, on the global default context.  An asyncio
# loop does not iterate it, so the first awaitable starts a helper thread
# that runs a GLib.MainLoop on the global default context for the rest of
# the process; replies then hop to the asyncio loop with
# call_soon_threadsafe().  Do not also run a GLib main loop on the default
# context in another thread.

class _Pump:
    def __init__(self):
        self.loop = GLib.MainLoop.new(None, False)
        self.thread = threading.Thread(target=self.loop.run, name="atomr-asyncio-bridge", daemon=True)
        self.thread.start()


_pump = None
_pump_lock = threading.Lock()


def _start_pump():
    global _pump
    with _pump_lock:
        if _pump is None:
            _pump = _Pump()
        return _pump


def _arg_names(func):
    info = getattr(func, "__info__", func)
    try:
        return [a.get_name() for a in info.get_arguments()]
    except AttributeError:
        return None


def _is_real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _expand_complex(names, args):
    """For `x, x_imag` parameter pairs: a complex x fills both, a real x
    whose imaginary part is left out gets 0."""
    if not names:
        return args
    out = []
    i = j = 0
    while i < len(args):
        value = args[i]
        if j + 1 < len(names) and names[j + 1] == names[j] + "_imag":
            if isinstance(value, complex):
                out += [value.real, value.imag]
            elif _is_real(value) and (i + 1 >= len(args) or not _is_real(args[i + 1])):
                out += [value, 0.0]
            else:
                out += [value] + ([args[i + 1]] if i + 1 < len(args) else [])
                i += 1
            j += 2
        else:
            out.append(value)
            j += 1
        i += 1
    return out


def _set_result(future, value):
    if not future.cancelled():
        future.set_result(value)


def _set_exception(future, error):
    if not future.cancelled():
        future.set_exception(error)


def _wrap_async(cls, name):
    original = cls.__dict__[name]
    finish_name = name[: -len("_async")] + "_finish"
    names = _arg_names(original)
    if names is None or not hasattr(cls, finish_name):
        return
    wanted = [n for n in names if n not in ("callback", "user_data")]

    def method(self, *args, **kwargs):
        args = _expand_complex(names, list(args))
        if kwargs or len(args) > len(wanted):
            return original(self, *args, **kwargs)
        if len(args) == len(wanted) - 1 and wanted[-1] == "cancellable":
            args.append(None)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return original(self, *args)
        future = loop.create_future()

        def done(source, result, *unused):
            try:
                value = getattr(source, finish_name)(result)
            except Exception as error:  # noqa: BLE001 — handed to the awaiting task
                loop.call_soon_threadsafe(_set_exception, future, error)
                return
            loop.call_soon_threadsafe(_set_result, future, value)

        _start_pump()
        original(self, *args, done, None)
        return future

    method.__name__ = name
    method.__doc__ = (original.__doc__ or "") + (
        "\n\nWithout a callback, inside a running asyncio loop: returns an awaitable of the "
        f"result of {finish_name}().")
    setattr(cls, name, method)


def _wrap_complex(cls, name):
    original = cls.__dict__[name]
    names = _arg_names(original)
    if not names or not any(n + "_imag" in names for n in names):
        return
    names = [n for n in names if n != "self"]

    def method(self, *args, **kwargs):
        return original(self, *_expand_complex(names, list(args)), **kwargs)

    method.__name__ = name
    method.__doc__ = original.__doc__
    setattr(cls, name, method)


def _install_wrappers():
    for attr in dir(Atomr):
        try:
            cls = getattr(Atomr, attr)
        except Exception:  # noqa: BLE001 — some names are not loadable types
            continue
        if not isinstance(cls, type) or not issubclass(cls, GObject.Object):
            continue
        for name in list(cls.__dict__):
            if name.endswith("_async"):
                _wrap_async(cls, name)
            elif not name.endswith("_finish"):
                try:
                    _wrap_complex(cls, name)
                except (KeyError, TypeError):
                    pass


# ---------------------------------------------------------------------------
# DLPack capsules through the CPython C API

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_VERSIONED = b"dltensor_versioned"
_LEGACY = b"dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"
_USED_LEGACY = b"used_dltensor"
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER_OFFSET = {True: 16, False: 56}   # in DLManagedTensor(Versioned)


def _call_deleter(address, versioned):
    fn = ctypes.c_void_p.from_address(address + _DELETER_OFFSET[versioned]).value
    if fn:
        _DELETER(fn)(address)


# The destructor gets the dying capsule as a raw pointer: it must not be
# turned into a Python object again, so these take it as void *.
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _capsule_destructor(versioned, name):
    def destroy(capsule):
        # an unconsumed capsule still owns its tensor
        if _raw_is_valid(capsule, name):
            _call_deleter(_raw_get_pointer(capsule, name), versioned)
    return _DESTRUCTOR(destroy)


_destroy_versioned = _capsule_destructor(True, _VERSIONED)
_destroy_legacy = _capsule_destructor(False, _LEGACY)


def _new_capsule(address, versioned):
    if versioned:
        return _api.PyCapsule_New(address, _VERSIONED, ctypes.cast(_destroy_versioned, ctypes.c_void_p))
    return _api.PyCapsule_New(address, _LEGACY, ctypes.cast(_destroy_legacy, ctypes.c_void_p))


def _consume_capsule(capsule):
    """(address, versioned) of an unused DLPack capsule, marked used."""
    if _api.PyCapsule_IsValid(capsule, _VERSIONED):
        address = _api.PyCapsule_GetPointer(capsule, _VERSIONED)
        _api.PyCapsule_SetName(capsule, _USED_VERSIONED)
        return address, True
    if _api.PyCapsule_IsValid(capsule, _LEGACY):
        address = _api.PyCapsule_GetPointer(capsule, _LEGACY)
        _api.PyCapsule_SetName(capsule, _USED_LEGACY)
        return address, False
    raise BufferError("not an unused DLPack capsule (already consumed?)")


_DL_CPU, _DL_CUDA = 1, 2
_LEGACY_STREAM = 1

# ---------------------------------------------------------------------------
# Tensor


def _is_host(device):
    return device.get_ordinal() < 0


class Tensor(Atomr.Tensor):
    """A strided view of an Atomr.Buffer (see the C documentation)."""

    @property
    def shape(self):
        return tuple(self.get_shape())

    @property
    def strides(self):
        """Strides in elements (NumPy's are in bytes)."""
        return tuple(self.get_strides())

    @property
    def dtype(self):
        return self.get_dtype()

    @property
    def ndim(self):
        return self.get_n_dims()

    @property
    def T(self):
        return self.permute(list(reversed(range(self.get_n_dims()))))

    def __len__(self):
        if self.get_n_dims() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.get_dim(0)

    def __repr__(self):
        return f"<Atomr.Tensor {self.to_string()}>"

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if any(k is Ellipsis for k in key):
            i = key.index(Ellipsis)
            fill = self.get_n_dims() - (len(key) - 1)
            key = key[:i] + (slice(None),) * fill + key[i + 1:]
        if len(key) > self.get_n_dims():
            raise IndexError(f"{len(key)} indices for a tensor of rank {self.get_n_dims()}")
        view, dim = self, 0
        for k in key:
            if isinstance(k, slice):
                start, stop, step = k.indices(view.get_dim(dim))
                view = view.slice(dim, start, stop, step)
                dim += 1
            elif isinstance(k, int):
                view = view.select(dim, k)
            else:
                raise TypeError(f"cannot index a tensor with {type(k).__name__}")
        return view

    # -- host data -----------------------------------------------------

    @classmethod
    def from_host(cls, device, data, dtype=None, shape=None, actor=None):
        """A new tensor on @device holding @data (any buffer-protocol object)."""
        view = memoryview(data)
        if dtype is None:
            dtype = _dtype_of_view(view)
            if dtype is None:
                raise TypeError(f"no Atomr.Dtype for buffer format {view.format!r}; pass dtype=")
        if shape is None:
            shape = tuple(view.shape) if dtype not in _RAW_DTYPES else (view.nbytes // Atomr.dtype_get_size(dtype),)
        tensor = Atomr.Tensor.empty(device, dtype, list(shape))
        tensor.upload(data, actor=actor)
        return tensor

    def upload(self, data, actor=None):
        """Copies @data (row-major, the tensor's dtype and size) into the view."""
        view = _host_view(data, self.get_dtype(), self.shape)
        address, keep = _address_of(view, writable=False)
        actor = actor or default_actor(self.get_device())
        actor.upload_tensor_from_address_sync(self, address, view.nbytes, None)
        del keep

    def download(self, out=None, actor=None):
        """The elements, row-major, in @out or a new NumPy array (a
        bytearray without NumPy, or for dtypes NumPy lacks)."""
        size = self.get_byte_size()
        if out is None:
            typestr = Atomr.dtype_get_typestr(self.get_dtype())
            if numpy is not None and typestr is not None:
                out = numpy.empty(self.shape, dtype=numpy.dtype(typestr))
            else:
                out = bytearray(size)
        view = memoryview(out)
        if not view.c_contiguous:
            raise ValueError("the destination must be C-contiguous")
        if view.format not in ("B", "b", "c"):
            got = _dtype_of_view(view)
            if got != self.get_dtype():
                raise TypeError(f"cannot download {_dtype_name(self.get_dtype())} into "
                                f"{view.format!r} memory (data is never reinterpreted)")
        if view.nbytes != size:
            raise ValueError(f"a destination of {view.nbytes} bytes for {size} bytes")
        view = view.cast("B") if view.nbytes else view
        address, keep = _address_of(view, writable=True)
        actor = actor or default_actor(self.get_device())
        actor.download_tensor_to_address_sync(self, address, size, None)
        del keep
        return out

    # -- DLPack --------------------------------------------------------

    def __dlpack_device__(self):
        device = self.get_device()
        if device is None:
            raise BufferError("the tensor has no buffer")
        if _is_host(device):
            return (_DL_CPU, 0)
        return (_DL_CUDA, device.get_ordinal())

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the view, without a copy.

        stream: the consumer's stream; atomr's work on the buffer is ordered
        before it on the GPU. None means the legacy default stream (1), 2
        the per-thread default stream, -1 no ordering; 0 is refused (ambiguous
        for CUDA).  max_version >= (1, 0) gets a DLManagedTensorVersioned.
        """
        if copy:
            raise BufferError("atomr exports views only (copy=True)")
        here = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != here:
            raise BufferError(f"the tensor is on DLPack device {here}, not {tuple(dl_device)}")
        device = self.get_device()
        if here[0] == _DL_CUDA:
            if stream == 0:
                raise ValueError("stream 0 is ambiguous for CUDA: use 1 (legacy default) or 2 (per-thread)")
            if stream != -1:
                default_actor(device).signal_stream_sync(
                    _LEGACY_STREAM if stream is None else int(stream), [self.get_buffer()], None)
        elif stream not in (None, -1):
            raise ValueError("a host tensor takes no stream")
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return _new_capsule(self.export_dlpack(versioned), versioned)

    @staticmethod
    def from_dlpack(obj, device=None):
        """A view of a DLPack producer's memory (a PyTorch or CuPy tensor, a
        capsule), without a copy; ordered after the producer's work."""
        if not hasattr(obj, "__dlpack__"):
            capsule, cuda = obj, device is None or not _is_host(device)
        else:
            kind, ordinal = obj.__dlpack_device__()
            cuda = int(kind) == _DL_CUDA
            if not cuda and int(kind) != _DL_CPU:
                raise BufferError(f"DLPack device type {int(kind)} is not CUDA memory")
            stream = _LEGACY_STREAM if cuda else None
            try:
                capsule = obj.__dlpack__(stream=stream, max_version=(1, 1))
            except TypeError:
                capsule = obj.__dlpack__(stream=stream)
        address, versioned = _consume_capsule(capsule)
        tensor = Atomr.Tensor.import_dlpack(address, versioned, device)
        if cuda:
            default_actor(tensor.get_device()).wait_stream_sync(_LEGACY_STREAM, [tensor.get_buffer()], None)
        return tensor

    # -- __cuda_array_interface__ ---------------------------------------

    @property
    def __cuda_array_interface__(self):
        device = self.get_device()
        if device is None or _is_host(device):
            raise AttributeError("__cuda_array_interface__ needs a CUDA device")
        typestr = Atomr.dtype_get_typestr(self.get_dtype())
        if typestr is None:
            raise TypeError(f"{_dtype_name(self.get_dtype())} has no array-interface type string")
        # Completed when it returns: the data is ready, no stream to wait on.
        default_actor(device).signal_stream_sync(_LEGACY_STREAM, [self.get_buffer()], None)
        size = Atomr.dtype_get_size(self.get_dtype())
        return {
            "shape": self.shape,
            "typestr": typestr,
            "data": (self.get_device_pointer(), self.get_buffer().get_read_only()),
            "version": 3,
            "strides": None if self.is_contiguous() else tuple(s * size for s in self.strides),
            "stream": None,
        }

    @staticmethod
    def from_cuda_array_interface(obj, device=None):
        """A view of an object's __cuda_array_interface__ (v2 or v3), without
        a copy, ordered after its stream.  @device defaults to CUDA device 0."""
        cai = obj if isinstance(obj, dict) else obj.__cuda_array_interface__
        address, readonly = cai["data"]
        ok, dtype = Atomr.dtype_from_typestr(cai["typestr"])
        if not ok:
            raise TypeError(f"no Atomr.Dtype for typestr {cai['typestr']!r}")
        size = Atomr.dtype_get_size(dtype)
        shape = [int(x) for x in cai["shape"]]
        strides = cai.get("strides")
        if strides is not None:
            if any(s % size for s in strides):
                raise ValueError(f"byte strides {tuple(strides)} are not multiples of {size}")
            strides = [s // size for s in strides]
        if device is None:
            device = Atomr.Device.get(0)
        keep = [obj]

        def release(*unused):
            keep.clear()

        tensor = Atomr.Tensor.new_for_device_pointer(device, dtype, address or 0, shape, strides, release, None)
        if readonly:
            # The producer lends the memory for reading only: no operation
            # may write it.
            tensor.get_buffer().mark_read_only()
        stream = cai.get("stream")
        if stream and not _is_host(device):
            default_actor(device).wait_stream_sync(int(stream), [tensor.get_buffer()], None)
        return tensor


Tensor = override(Tensor)
__all__.append("Tensor")


class Buffer(Atomr.Buffer):
    def __repr__(self):
        device = self.get_device()
        where = "host" if _is_host(device) else f"cuda:{device.get_ordinal()}"
        return (f"<Atomr.Buffer {self.get_n_elements()} × {_dtype_name(self.get_dtype())} "
                f"({self.get_byte_size()} bytes) on {where}>")

    def as_tensor(self):
        """The buffer as a contiguous view (its shape, or 1-D)."""
        return Atomr.Tensor.new_for_buffer(self)

    def upload(self, data, actor=None):
        """Copies @data (any buffer-protocol object of the buffer's dtype
        and size) into the buffer; the dtype is checked, never reinterpreted."""
        view = memoryview(data)
        count = 1
        for extent in view.shape or ():
            count *= extent
        if view.ndim > 1 and count == self.get_n_elements():
            tensor = Atomr.Tensor.new(self, list(view.shape))   # the data's own shape
        else:
            tensor = Atomr.Tensor.new_for_buffer(self)
        Tensor.upload(tensor, data, actor=actor)

    def download(self, out=None, actor=None):
        """The contents, as Atomr.Tensor.download() gives them."""
        return Tensor.download(Atomr.Tensor.new_for_buffer(self), out=out, actor=actor)


Buffer = override(Buffer)
__all__.append("Buffer")


class Device(Atomr.Device):
    def __repr__(self):
        if _is_host(self):
            return "<Atomr.Device host test device>"
        return f"<Atomr.Device cuda:{self.get_ordinal()} {self.get_name()}>"


Device = override(Device)
__all__.append("Device")

_install_wrappers()
