/* atomr-inspector-extension.c — what an atomr-inspector plugin implements
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "atomr-inspector-extension.h"

/**
 * AtomrInspectorExtension:
 *
 * The interface every atomr-inspector plugin implements (libpeas 1.x).
 *
 * The inspector makes one extension per main window, with
 * [property@AtomrInspector.Extension:window] set, and calls
 * [method@AtomrInspector.Extension.activate] when the plugin is loaded
 * (at start-up for the plugins enabled in the preferences) and
 * [method@AtomrInspector.Extension.deactivate] when it is unloaded or the
 * window goes away.  A plugin that also implements
 * [iface@AtomrInspector.PageProvider] gets a page of its own in the
 * window, added after activate and removed before deactivate.
 *
 * Everything runs on the inspector's main thread.  Plugins are written in
 * C (a shared module) or Python (the `python3` loader); see
 * `examples/plugins` in the source tree.
 *
 * Since: 0.2
 */
G_DEFINE_INTERFACE (AtomrInspectorExtension, atomr_inspector_extension, G_TYPE_OBJECT)

static void
atomr_inspector_extension_default_init (AtomrInspectorExtensionInterface *iface)
{
  /**
   * AtomrInspectorExtension:window:
   *
   * The inspector window the extension works for (an
   * [class@Adw.ApplicationWindow]).  Set when the extension is made, before
   * [method@AtomrInspector.Extension.activate]; an implementation must
   * declare the property (in Python: `window = GObject.Property(type=Gtk.Window)`).
   *
   * Since: 0.2
   */
  g_object_interface_install_property (iface,
                                       g_param_spec_object ("window", NULL, NULL, GTK_TYPE_WINDOW,
                                                            G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                                                            G_PARAM_STATIC_STRINGS));
}

/**
 * atomr_inspector_extension_activate:
 * @self: an [iface@AtomrInspector.Extension]
 *
 * Tells the extension that its plugin was loaded for its window.
 *
 * Since: 0.2
 */
void
atomr_inspector_extension_activate (AtomrInspectorExtension *self)
{
  AtomrInspectorExtensionInterface *iface;

  g_return_if_fail (ATOMR_INSPECTOR_IS_EXTENSION (self));
  iface = ATOMR_INSPECTOR_EXTENSION_GET_IFACE (self);
  if (iface->activate)
    iface->activate (self);
}

/**
 * atomr_inspector_extension_deactivate:
 * @self: an [iface@AtomrInspector.Extension]
 *
 * Tells the extension that its plugin is being unloaded, or its window
 * closed.
 *
 * Since: 0.2
 */
void
atomr_inspector_extension_deactivate (AtomrInspectorExtension *self)
{
  AtomrInspectorExtensionInterface *iface;

  g_return_if_fail (ATOMR_INSPECTOR_IS_EXTENSION (self));
  iface = ATOMR_INSPECTOR_EXTENSION_GET_IFACE (self);
  if (iface->deactivate)
    iface->deactivate (self);
}

/**
 * atomr_inspector_extension_get_window:
 * @self: an [iface@AtomrInspector.Extension]
 *
 * Gets the window of [property@AtomrInspector.Extension:window].
 *
 * Returns: (transfer none) (nullable): the inspector window
 *
 * Since: 0.2
 */
GtkWindow *
atomr_inspector_extension_get_window (AtomrInspectorExtension *self)
{
  g_autoptr(GtkWindow) window = NULL;

  g_return_val_if_fail (ATOMR_INSPECTOR_IS_EXTENSION (self), NULL);
  g_object_get (self, "window", &window, NULL);
  /* The window outlives its extensions. */
  return window;
}
