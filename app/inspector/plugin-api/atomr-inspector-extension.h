/* atomr-inspector-extension.h — what an atomr-inspector plugin implements
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define ATOMR_INSPECTOR_TYPE_EXTENSION (atomr_inspector_extension_get_type ())
G_MODULE_EXPORT
G_DECLARE_INTERFACE (AtomrInspectorExtension, atomr_inspector_extension, ATOMR_INSPECTOR, EXTENSION, GObject)

/**
 * AtomrInspectorExtensionInterface:
 * @activate: the plugin was loaded for the window in
 *   [property@AtomrInspector.Extension:window]: add what it brings
 * @deactivate: the plugin is being unloaded, or the window closed: take
 *   back everything @activate added
 *
 * The virtual methods of [iface@AtomrInspector.Extension].
 *
 * Since: 0.2
 */
struct _AtomrInspectorExtensionInterface
{
  GTypeInterface parent_iface;

  void (*activate)   (AtomrInspectorExtension *self);
  void (*deactivate) (AtomrInspectorExtension *self);
};

G_MODULE_EXPORT
void       atomr_inspector_extension_activate   (AtomrInspectorExtension *self);
G_MODULE_EXPORT
void       atomr_inspector_extension_deactivate (AtomrInspectorExtension *self);
G_MODULE_EXPORT
GtkWindow *atomr_inspector_extension_get_window (AtomrInspectorExtension *self);

G_END_DECLS
