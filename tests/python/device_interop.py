#!/usr/bin/env python3
"""Zero-copy round trip between atomr and PyTorch / CuPy on a GPU.

Runs with the GPU machine's Python (PyTorch and CuPy, no PyGObject): the
C API of libatomr-1 is reached through ctypes (atomr_ctypes.py), DLPack
capsules are made with the CPython C API.

1. atomr allocates and fills a tensor; torch.from_dlpack() consumes it:
   same device pointer (no copy), and torch's stream waits for atomr's
   upload on the GPU (atomr_actor_signal_stream_sync with the stream torch
   passes to __dlpack__).
2. torch computes a result on its stream; atomr imports it with DLPack
   (same pointer), ordered by an event recorded on torch's stream
   (atomr_actor_wait_stream_sync), and downloads it: equal to torch's.
3. torch writes atomr's memory in place; a torch.cuda.Event hands the
   buffer back (atomr_actor_wait_event_sync) and atomr reads the new values.
4. The same with CuPy through __cuda_array_interface__ v3 both ways.

Prints one line per check and "device_interop: OK" at the end; exits 1 on
the first failure, 77 when there is no GPU or no torch.

    ATOMR_LIB_DIR=build/lib /opt/torch/.venv/bin/python tests/python/device_interop.py

SPDX-License-Identifier: LGPL-2.1-or-later
"""
import ctypes
import sys

import atomr_ctypes as ac

try:
    import torch
except ImportError:
    print("device_interop: SKIP (no torch)")
    sys.exit(77)
if not torch.cuda.is_available():
    print("device_interop: SKIP (no CUDA device)")
    sys.exit(77)
try:
    import cupy
except ImportError:
    cupy = None


_KEEP = None


def check(what, ok):
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    if not ok:
        sys.exit(1)


class Exported:
    """A DLPack producer over an atomr tensor (what the PyGObject
    overrides' Atomr.Tensor.__dlpack__ does, in ctypes)."""

    def __init__(self, atomr, actor, tensor):
        self.atomr, self.actor, self.tensor = atomr, actor, tensor

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # order the consumer's stream after atomr's work on the buffer
        if stream != -1:
            arr, n = self.atomr.buffers(self.tensor)
            self.atomr.call("atomr_actor_signal_stream_sync", self.actor,
                            1 if stream is None else int(stream), arr, n, None)
        versioned = max_version is not None and max_version[0] >= 1
        address = self.atomr.call("atomr_tensor_export_dlpack", self.tensor, int(versioned))
        return ac.capsule(address, versioned)


def main():
    a = ac.Atomr()
    lib = a.lib
    torch.cuda.init()
    device = a.call("atomr_device_get", 0)
    actor = a.call("atomr_copy_actor_new", device)
    n = 1 << 20
    shape = (ctypes.c_int64 * 2)(1024, 1024)

    # 1. atomr -> torch
    t = a.call("atomr_tensor_empty", device, ac.F32, shape, 2)
    host = (ctypes.c_float * n)(*[float(i % 251) for i in range(n)])
    a.call("atomr_actor_upload_tensor_from_address_sync", actor, t, ctypes.addressof(host), 4 * n, None)
    ptr = lib.atomr_tensor_get_device_pointer(t)
    producer = Exported(a, actor, t)
    x = torch.from_dlpack(producer)
    check("torch sees atomr's tensor at the same address (no copy)", x.data_ptr() == ptr)
    check("torch reads atomr's upload", float(x[3, 7]) == float((3 * 1024 + 7) % 251))

    # 2. torch -> atomr
    y = x * 2 + 1            # on torch's current stream
    stream = torch.cuda.current_stream().cuda_stream
    try:
        cap = y.__dlpack__(stream=1, max_version=(1, 0))
    except TypeError:
        cap = y.__dlpack__(stream=1)
    address, versioned = ac.consume(cap)
    r = a.call("atomr_tensor_import_dlpack", address, int(versioned), None)
    check("atomr sees torch's result at the same address (no copy)",
          lib.atomr_tensor_get_device_pointer(r) == y.data_ptr())
    arr, nb = a.buffers(r)
    a.call("atomr_actor_wait_stream_sync", actor, 1, arr, nb, None)   # torch ordered the legacy stream
    out = (ctypes.c_float * n)()
    a.call("atomr_actor_download_tensor_to_address_sync", actor, r, ctypes.addressof(out), 4 * n, None)
    expect = (y.cpu().numpy().ravel())
    check("atomr downloads torch's values", all(out[i] == expect[i] for i in range(0, n, 4099)))

    # 3. torch writes atomr's memory in place, an event hands it back
    x.mul_(3)
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream())
    arr, nb = a.buffers(t)
    handle = getattr(event, "cuda_event", None)
    if handle:
        a.call("atomr_actor_wait_event_sync", actor, int(handle), arr, nb, None)
        how = "event"
    else:
        a.call("atomr_actor_wait_stream_sync", actor, int(stream), arr, nb, None)
        how = "stream"
    a.call("atomr_actor_download_tensor_to_address_sync", actor, t, ctypes.addressof(out), 4 * n, None)
    check(f"atomr reads torch's in-place write after the {how} handshake",
          out[3 * 1024 + 7] == 3 * float((3 * 1024 + 7) % 251))
    del x, y
    lib.g_object_unref(r)

    # 4. CuPy through __cuda_array_interface__
    if cupy is not None:
        class CAI:
            def __init__(self):
                arr, nb = a.buffers(t)
                a.call("atomr_actor_signal_stream_sync", actor, 1, arr, nb, None)
                self.__cuda_array_interface__ = {
                    "shape": (1024, 1024), "typestr": "<f4", "data": (ptr, False),
                    "version": 3, "strides": None, "stream": None}
        c = cupy.asarray(CAI())
        check("cupy sees atomr's tensor at the same address (no copy)", c.data.ptr == ptr)
        d = cupy.sqrt(c) + 0.5
        cai = d.__cuda_array_interface__
        dshape = (ctypes.c_int64 * 2)(*cai["shape"])
        global _KEEP
        _KEEP = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: None)   # outlives the buffer
        keep = _KEEP
        v = a.call("atomr_tensor_new_for_device_pointer", device, ac.F32, cai["data"][0], dshape, 2,
                   None, 0, ctypes.cast(keep, ctypes.c_void_p), None)
        check("atomr sees cupy's result at the same address (no copy)",
              lib.atomr_tensor_get_device_pointer(v) == d.data.ptr)
        arr, nb = a.buffers(v)
        a.call("atomr_actor_wait_stream_sync", actor, int(cai.get("stream") or 1), arr, nb, None)
        a.call("atomr_actor_download_tensor_to_address_sync", actor, v, ctypes.addressof(out), 4 * n, None)
        expect = cupy.asnumpy(d).ravel()
        check("atomr downloads cupy's values", all(out[i] == expect[i] for i in range(0, n, 4099)))
        lib.g_object_unref(v)
        del c, d
    else:
        print("skip: no cupy")

    lib.g_object_unref(t)
    lib.g_object_unref(actor)
    print("device_interop: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
