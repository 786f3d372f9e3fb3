/* inspector-trace-filter-bar.h — filter chips over the timeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "inspector-timeline.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_TRACE_FILTER_BAR (inspector_trace_filter_bar_get_type ())
G_DECLARE_FINAL_TYPE (InspectorTraceFilterBar, inspector_trace_filter_bar, INSPECTOR, TRACE_FILTER_BAR, GtkWidget)

void         inspector_trace_filter_bar_set_timeline (InspectorTraceFilterBar *self,
                                                      InspectorTimeline       *timeline);
GtkWidget   *inspector_trace_filter_bar_get_chip     (InspectorTraceFilterBar *self,
                                                      const gchar             *name);
GtkDropDown *inspector_trace_filter_bar_get_actors   (InspectorTraceFilterBar *self);

G_END_DECLS
