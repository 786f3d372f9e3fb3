/* inspector-screenshot.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-screenshot.h"

/**
 * inspector_screenshot_save:
 * @widget: a realized widget, usually a window
 * @path: (type filename): the PNG file to write
 * @error: return location for a #GError
 *
 * Snapshots @widget as the screen shows it and renders the nodes with the
 * window's own GskRenderer, so the result does not depend on an X server
 * grab or a compositor.
 *
 * Returns: %TRUE on success
 */
gboolean
inspector_screenshot_save (GtkWidget    *widget,
                           const gchar  *path,
                           GError      **error)
{
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  GtkSnapshot *snapshot;
  GskRenderer *renderer;
  GtkNative *native;
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);

  native = gtk_widget_get_native (widget);
  if (native == NULL || w <= 0 || h <= 0 || (renderer = gtk_native_get_renderer (native)) == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_INITIALIZED,
                   _("The window is not shown yet (size %d×%d), nothing to save to “%s”"), w, h, path);
      return FALSE;
    }
  paintable = gtk_widget_paintable_new (widget);
  snapshot = gtk_snapshot_new ();
  /* an opaque background: the window may be translucent at its corners */
  gtk_snapshot_append_color (snapshot, &(GdkRGBA) { 1, 1, 1, 1 }, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gdk_paintable_snapshot (paintable, snapshot, w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  if (node == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("The window drew nothing, nothing to save to “%s”"), path);
      return FALSE;
    }
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not write “%s”"), path);
      return FALSE;
    }
  return TRUE;
}
