/* inspector-window.h — the main window: Cache, Editor and Trace pages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "inspector-cache-page.h"
#include "inspector-editor-page.h"
#include "inspector-trace-page.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_WINDOW (inspector_window_get_type ())
G_DECLARE_FINAL_TYPE (InspectorWindow, inspector_window, INSPECTOR, WINDOW, AdwApplicationWindow)

InspectorWindow     *inspector_window_new              (AdwApplication  *application);
InspectorCachePage  *inspector_window_get_cache_page   (InspectorWindow *self);
InspectorEditorPage *inspector_window_get_editor_page  (InspectorWindow *self);
InspectorTracePage  *inspector_window_get_trace_page   (InspectorWindow *self);
void                 inspector_window_set_page         (InspectorWindow *self,
                                                        const gchar     *name);
const gchar         *inspector_window_get_page         (InspectorWindow *self);
void                 inspector_window_set_cache_directory (InspectorWindow *self,
                                                        const gchar     *directory);
void                 inspector_window_set_busy         (InspectorWindow *self,
                                                        gboolean         busy);
void                 inspector_window_toast            (InspectorWindow *self,
                                                        const gchar     *message);
void                 inspector_window_add_page         (InspectorWindow *self,
                                                        const gchar     *name,
                                                        const gchar     *title,
                                                        GtkWidget       *page);
void                 inspector_window_remove_page      (InspectorWindow *self,
                                                        const gchar     *name);
void                 inspector_window_add_provider     (InspectorWindow *self,
                                                        const gchar     *name,
                                                        GObject         *provider);
GMenuModel          *inspector_window_get_plugin_menu  (InspectorWindow *self);
void                 inspector_window_remove_provider  (InspectorWindow *self,
                                                        const gchar     *name);

G_END_DECLS
