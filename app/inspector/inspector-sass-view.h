/* inspector-sass-view.h — the SASS tab of the Cache page
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_SASS_VIEW (inspector_sass_view_get_type ())
G_DECLARE_FINAL_TYPE (InspectorSassView, inspector_sass_view, INSPECTOR, SASS_VIEW, GtkWidget)

GtkWidget   *inspector_sass_view_new       (void);
void         inspector_sass_view_set_cubin (InspectorSassView *self,
                                            GBytes            *cubin);
const gchar *inspector_sass_view_get_state (InspectorSassView *self);
gchar       *inspector_sass_view_get_text  (InspectorSassView *self);

G_END_DECLS
