# hello_py.py — an example atomr-inspector plugin in Python
#
# It implements AtomrInspector.Extension (activate: the window gets the
# style class "atomr-hello-python"; deactivate: it goes) and
# AtomrInspector.PageProvider (a page with a label).  Put it, with
# hello-py.plugin, in ~/.local/share/atomr-inspector/plugins.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import gi

gi.require_version("Gtk", "4.0")
gi.require_version("AtomrInspector", "1")
from gi.repository import AtomrInspector, GObject, Gtk  # noqa: E402


class HelloPython(GObject.Object, AtomrInspector.Extension, AtomrInspector.PageProvider):
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
