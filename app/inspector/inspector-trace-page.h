/* inspector-trace-page.h — the Trace page: timeline, statistics, details
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <adwaita.h>

#include "inspector-timeline.h"
#include "inspector-trace-filter-bar.h"
#include "inspector-trace-model.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_TRACE_PAGE (inspector_trace_page_get_type ())
G_DECLARE_FINAL_TYPE (InspectorTracePage, inspector_trace_page, INSPECTOR, TRACE_PAGE, GtkWidget)

InspectorTraceModel *inspector_trace_page_get_model        (InspectorTracePage *self);
gboolean             inspector_trace_page_load             (InspectorTracePage *self,
                                                            GFile              *file,
                                                            GError            **error);
void                 inspector_trace_page_open             (InspectorTracePage *self,
                                                            GFile              *file);
void                 inspector_trace_page_follow_recorder  (InspectorTracePage *self,
                                                            AtomrTraceRecorder *recorder);
guint                inspector_trace_page_get_n_drawn_boxes (InspectorTracePage *self);
void                 inspector_trace_page_select           (InspectorTracePage *self,
                                                            gint                index);
InspectorTimeline   *inspector_trace_page_get_timeline     (InspectorTracePage *self);
GtkWidget           *inspector_trace_page_get_stats_view   (InspectorTracePage *self);

InspectorTraceFilterBar *inspector_trace_page_get_filter_bar (InspectorTracePage *self);

G_END_DECLS
