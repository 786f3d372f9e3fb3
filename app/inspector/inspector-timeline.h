/* inspector-timeline.h — one row per actor stream, one box per operation
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gtk/gtk.h>

#include "inspector-trace-model.h"

G_BEGIN_DECLS

#define INSPECTOR_TYPE_TIMELINE (inspector_timeline_get_type ())
G_DECLARE_FINAL_TYPE (InspectorTimeline, inspector_timeline, INSPECTOR, TIMELINE, GtkWidget)

GtkWidget           *inspector_timeline_new               (void);
InspectorTraceModel *inspector_timeline_get_model         (InspectorTimeline   *self);
void                 inspector_timeline_set_model         (InspectorTimeline   *self,
                                                           InspectorTraceModel *model);
gint                 inspector_timeline_get_selected      (InspectorTimeline   *self);
void                 inspector_timeline_set_selected      (InspectorTimeline   *self,
                                                           gint                 index);
void                 inspector_timeline_zoom              (InspectorTimeline   *self,
                                                           gdouble              factor,
                                                           gdouble              anchor_x);
gdouble              inspector_timeline_get_scale         (InspectorTimeline   *self);
void                 inspector_timeline_zoom_to_fit       (InspectorTimeline   *self);
guint                inspector_timeline_get_n_drawn_boxes (InspectorTimeline   *self);
guint                inspector_timeline_get_n_visited     (InspectorTimeline   *self);
void                 inspector_timeline_set_show_flows    (InspectorTimeline   *self,
                                                           gboolean             show);
void                 inspector_timeline_reveal            (InspectorTimeline   *self,
                                                           gint                 index);
gchar               *inspector_timeline_describe          (InspectorTimeline   *self,
                                                           gint                 index);
void                 inspector_library_color              (const gchar         *library,
                                                           GdkRGBA             *color);

/* every kind of slice (inspector_timeline_set_filter()) */
#define INSPECTOR_TIMELINE_ALL_KINDS ((1u << INSPECTOR_SLICE_GPU) | (1u << INSPECTOR_SLICE_HOST) | (1u << INSPECTOR_SLICE_SPAN))

void                 inspector_timeline_set_filter        (InspectorTimeline   *self,
                                                           const gchar         *actor,
                                                           guint                kinds,
                                                           gboolean             errors_only);
gboolean             inspector_timeline_is_shown          (InspectorTimeline   *self,
                                                           guint                index);

G_END_DECLS
