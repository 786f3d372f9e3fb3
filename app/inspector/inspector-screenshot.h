/* inspector-screenshot.h — render a window to a PNG file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

gboolean inspector_screenshot_save (GtkWidget    *widget,
                                    const gchar  *path,
                                    GError      **error);

G_END_DECLS
