/* inspector-operation-stats.h — count, total, mean, p50 and p99 of one operation
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

#define INSPECTOR_TYPE_OPERATION_STATS (inspector_operation_stats_get_type ())
G_DECLARE_FINAL_TYPE (InspectorOperationStats, inspector_operation_stats, INSPECTOR, OPERATION_STATS, GObject)

InspectorOperationStats *inspector_operation_stats_new        (const gchar             *library,
                                                               const gchar             *operation,
                                                               const gdouble           *durations_us,
                                                               guint                    n);
const gchar             *inspector_operation_stats_get_library   (InspectorOperationStats *self);
const gchar             *inspector_operation_stats_get_operation (InspectorOperationStats *self);
guint                    inspector_operation_stats_get_count     (InspectorOperationStats *self);
gdouble                  inspector_operation_stats_get_total_us  (InspectorOperationStats *self);
gdouble                  inspector_operation_stats_get_mean_us   (InspectorOperationStats *self);
gdouble                  inspector_operation_stats_get_p50_us    (InspectorOperationStats *self);
gdouble                  inspector_operation_stats_get_p99_us    (InspectorOperationStats *self);

gdouble                  inspector_percentile                    (const gdouble           *sorted,
                                                                  guint                    n,
                                                                  gdouble                  p);

G_END_DECLS
