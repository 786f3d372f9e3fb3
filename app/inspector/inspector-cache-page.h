/* inspector-cache-page.h — the Cache page: every entry of the kernel cache
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "inspector-cache-model.h"
#include "inspector-occupancy-panel.h"
#include "inspector-sass-view.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_CACHE_PAGE (inspector_cache_page_get_type ())
G_DECLARE_FINAL_TYPE (InspectorCachePage, inspector_cache_page, INSPECTOR, CACHE_PAGE, GtkWidget)

InspectorCacheModel *inspector_cache_page_get_model     (InspectorCachePage *self);
void                 inspector_cache_page_set_directory (InspectorCachePage *self,
                                                         const gchar        *directory);
void                 inspector_cache_page_select        (InspectorCachePage *self,
                                                         guint               position);
void                 inspector_cache_page_select_key    (InspectorCachePage *self,
                                                         const gchar        *key);
const gchar         *inspector_cache_page_get_selected_key (InspectorCachePage *self);
InspectorOccupancyPanel *inspector_cache_page_get_occupancy_panel (InspectorCachePage *self);
InspectorSassView   *inspector_cache_page_get_sass_view (InspectorCachePage *self);
void                 inspector_cache_page_export_async  (InspectorCachePage  *self,
                                                         const gchar         *what,
                                                         GFile               *file,
                                                         GCancellable        *cancellable,
                                                         GAsyncReadyCallback  callback,
                                                         gpointer             user_data);
gboolean             inspector_cache_page_export_finish (InspectorCachePage  *self,
                                                         GAsyncResult        *result,
                                                         GError             **error);

void                 inspector_cache_page_set_filters (InspectorCachePage *self,
                                                       const gchar        *arch,
                                                       InspectorCacheAge   age,
                                                       InspectorCacheSize  size);

G_END_DECLS
