/* inspector-editor-page.h — the Editor page: CUDA source, options, NVRTC output
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>
#include <atomr.h>

#include "inspector-run-panel.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_EDITOR_PAGE (inspector_editor_page_get_type ())
G_DECLARE_FINAL_TYPE (InspectorEditorPage, inspector_editor_page, INSPECTOR, EDITOR_PAGE, GtkWidget)

gboolean inspector_editor_page_load_file       (InspectorEditorPage    *self,
                                                GFile                  *file,
                                                GError                **error);
gboolean inspector_editor_page_load_entry      (InspectorEditorPage    *self,
                                                AtomrKernelCacheEntry  *entry,
                                                GError                **error);
void     inspector_editor_page_set_text        (InspectorEditorPage    *self,
                                                const gchar            *name,
                                                const gchar            *source);
void     inspector_editor_page_set_cache       (InspectorEditorPage    *self,
                                                AtomrKernelCache       *cache);
void     inspector_editor_page_compile         (InspectorEditorPage    *self);
guint    inspector_editor_page_get_n_diagnostics (InspectorEditorPage  *self);
gchar   *inspector_editor_page_get_line_diagnostics (InspectorEditorPage *self,
                                                     guint                line);
guint    inspector_editor_page_get_n_resource_rows (InspectorEditorPage *self);
gboolean inspector_editor_page_get_modified    (InspectorEditorPage    *self);
void     inspector_editor_page_save_changes_async  (InspectorEditorPage *self,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
gboolean inspector_editor_page_save_changes_finish (InspectorEditorPage *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
GtkTextBuffer *inspector_editor_page_get_buffer (InspectorEditorPage *self);
GtkWidget     *inspector_editor_page_get_source_view (InspectorEditorPage *self);
void     inspector_editor_page_open_file       (InspectorEditorPage    *self,
                                                GFile                  *file);

void inspector_editor_page_run (InspectorEditorPage *self);
InspectorRunPanel *inspector_editor_page_get_run_panel (InspectorEditorPage *self);
const gchar *inspector_editor_page_get_status (InspectorEditorPage *self);
GtkWidget *inspector_editor_page_get_option_widget (InspectorEditorPage *self,
                                                   const gchar         *name);

G_END_DECLS
