/* inspector-operation-stats.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "inspector-operation-stats.h"

/* Immutable: built once from the durations of every record of one
 * (library, operation) pair; the properties exist so GtkColumnView
 * expressions can sort and show them. */
struct _InspectorOperationStats
{
  GObject  parent_instance;
  gchar   *library;
  gchar   *operation;
  guint    count;
  gdouble  total_us;
  gdouble  p50_us;
  gdouble  p99_us;
};

G_DEFINE_FINAL_TYPE (InspectorOperationStats, inspector_operation_stats, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_LIBRARY,
  PROP_OPERATION,
  PROP_COUNT,
  PROP_TOTAL_US,
  PROP_MEAN_US,
  PROP_P50_US,
  PROP_P99_US,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
inspector_operation_stats_finalize (GObject *object)
{
  InspectorOperationStats *self = INSPECTOR_OPERATION_STATS (object);

  g_free (self->library);
  g_free (self->operation);
  G_OBJECT_CLASS (inspector_operation_stats_parent_class)->finalize (object);
}

static void
inspector_operation_stats_get_property (GObject    *object,
                                        guint       prop_id,
                                        GValue     *value,
                                        GParamSpec *pspec)
{
  InspectorOperationStats *self = INSPECTOR_OPERATION_STATS (object);

  switch (prop_id)
    {
    case PROP_LIBRARY: g_value_set_string (value, self->library); break;
    case PROP_OPERATION: g_value_set_string (value, self->operation); break;
    case PROP_COUNT: g_value_set_uint (value, self->count); break;
    case PROP_TOTAL_US: g_value_set_double (value, self->total_us); break;
    case PROP_MEAN_US: g_value_set_double (value, inspector_operation_stats_get_mean_us (self)); break;
    case PROP_P50_US: g_value_set_double (value, self->p50_us); break;
    case PROP_P99_US: g_value_set_double (value, self->p99_us); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
inspector_operation_stats_class_init (InspectorOperationStatsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags f = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = inspector_operation_stats_finalize;
  object_class->get_property = inspector_operation_stats_get_property;

  properties[PROP_LIBRARY] = g_param_spec_string ("library", NULL, NULL, NULL, f);
  properties[PROP_OPERATION] = g_param_spec_string ("operation", NULL, NULL, NULL, f);
  properties[PROP_COUNT] = g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 0, f);
  properties[PROP_TOTAL_US] = g_param_spec_double ("total-us", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  properties[PROP_MEAN_US] = g_param_spec_double ("mean-us", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  properties[PROP_P50_US] = g_param_spec_double ("p50-us", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  properties[PROP_P99_US] = g_param_spec_double ("p99-us", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
inspector_operation_stats_init (InspectorOperationStats *self)
{
}

static gint
compare_double (gconstpointer a,
                gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return (x > y) - (x < y);
}

/**
 * inspector_percentile:
 * @sorted: (array length=n): ascending values
 * @n: how many
 * @p: the percentile, 0 to 100
 *
 * The nearest-rank percentile: the smallest value such that at least
 * @p percent of the values are less than or equal to it.
 *
 * Returns: the percentile, or 0 when @n is 0
 */
gdouble
inspector_percentile (const gdouble *sorted,
                      guint          n,
                      gdouble        p)
{
  gdouble rank;
  guint idx;

  if (n == 0)
    return 0;
  rank = ceil (CLAMP (p, 0, 100) / 100.0 * n);
  idx = rank < 1 ? 0 : (guint) rank - 1;
  return sorted[MIN (idx, n - 1)];
}

InspectorOperationStats *
inspector_operation_stats_new (const gchar   *library,
                               const gchar   *operation,
                               const gdouble *durations_us,
                               guint          n)
{
  InspectorOperationStats *self = g_object_new (INSPECTOR_TYPE_OPERATION_STATS, NULL);
  g_autofree gdouble *sorted = g_memdup2 (durations_us, sizeof (gdouble) * n);

  self->library = g_strdup (library);
  self->operation = g_strdup (operation);
  self->count = n;
  for (guint i = 0; i < n; i++)
    self->total_us += durations_us[i];
  if (n > 0)
    qsort (sorted, n, sizeof (gdouble), compare_double);
  self->p50_us = inspector_percentile (sorted, n, 50);
  self->p99_us = inspector_percentile (sorted, n, 99);
  return self;
}

const gchar *inspector_operation_stats_get_library (InspectorOperationStats *self) { return self->library; }
const gchar *inspector_operation_stats_get_operation (InspectorOperationStats *self) { return self->operation; }
guint inspector_operation_stats_get_count (InspectorOperationStats *self) { return self->count; }
gdouble inspector_operation_stats_get_total_us (InspectorOperationStats *self) { return self->total_us; }
gdouble inspector_operation_stats_get_p50_us (InspectorOperationStats *self) { return self->p50_us; }
gdouble inspector_operation_stats_get_p99_us (InspectorOperationStats *self) { return self->p99_us; }

gdouble
inspector_operation_stats_get_mean_us (InspectorOperationStats *self)
{
  return self->count ? self->total_us / self->count : 0;
}
