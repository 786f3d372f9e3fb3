/* inspector-source-util.h — GtkSourceView set-up shared by the pages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtksourceview/gtksource.h>

G_BEGIN_DECLS

void inspector_source_view_setup (GtkSourceView *view,
                                  const gchar   *language_id);

G_END_DECLS
