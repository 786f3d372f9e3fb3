/* inspector-run-panel.h — the Editor's Run tab
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_RUN_PANEL (inspector_run_panel_get_type ())
G_DECLARE_FINAL_TYPE (InspectorRunPanel, inspector_run_panel, INSPECTOR, RUN_PANEL, GtkWidget)

GtkWidget   *inspector_run_panel_new         (void);
void         inspector_run_panel_start       (InspectorRunPanel *self,
                                              const gchar       *source,
                                              const gchar       *program_name,
                                              JsonObject        *options,
                                              const gchar       *cache_directory);
void         inspector_run_panel_set_kernels (InspectorRunPanel *self,
                                              const gchar * const *names);
const gchar *inspector_run_panel_get_state   (InspectorRunPanel *self);
const gchar *inspector_run_panel_get_result  (InspectorRunPanel *self);
GtkWidget   *inspector_run_panel_get_field   (InspectorRunPanel *self,
                                              const gchar       *name);

G_END_DECLS
