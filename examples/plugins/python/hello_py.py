# hello_py.py — an example atomr-inspector plugin in Python
#
# It implements AtomrInspector.Extension (activate: the window gets the
# style class "atomr-hello-python"; deactivate: it goes) and
# AtomrInspector.PageProvider (a page with a label) and
# AtomrInspector.TraceProvider (“Open Trace From “Hello Trace””: a small
# trace it writes to a temporary file).  Put it, with
# hello-py.plugin, in ~/.local/share/atomr-inspector/plugins.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import json
import os
import tempfile

import gi

gi.require_version("Gtk", "4.0")
gi.require_version("AtomrInspector", "1")
from gi.repository import AtomrInspector, Gio, GObject, Gtk  # noqa: E402

# Two operations on one GPU stream, in the Chrome trace format the
# inspector reads (atomr's own traces add host lifecycles and flows).
TRACE = {
    "traceEvents": [
        {"ph": "X", "cat": "gpu", "name": "launch", "pid": 1, "tid": 1, "ts": 10, "dur": 25,
         "args": {"seq": 1, "library": "nvrtc", "op": "launch", "detail": "hello_kernel"}},
        {"ph": "X", "cat": "gpu", "name": "download", "pid": 1, "tid": 1, "ts": 40, "dur": 5,
         "args": {"seq": 2, "library": "cuda", "op": "download"}},
    ]
}


class HelloPython(GObject.Object, AtomrInspector.Extension, AtomrInspector.PageProvider,
                  AtomrInspector.TraceProvider):
    __gtype_name__ = "HelloPythonPlugin"

    window = GObject.Property(type=Gtk.Window)

    def do_activate(self):
        self.window.add_css_class("atomr-hello-python")

    def do_deactivate(self):
        self.window.remove_css_class("atomr-hello-python")

    def do_create_page(self):
        label = Gtk.Label(label="Hello from a Python plugin")
        label.set_name("hello-py-label")
        return label

    def do_get_title(self):
        return "Hello (Python)"

    def do_get_trace_title(self):
        return "Hello Trace"

    def do_get_trace(self):
        fd, path = tempfile.mkstemp(prefix="hello-trace-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(TRACE, f)
        return Gio.File.new_for_path(path)
