/* inspector-trace-model.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-operation-stats.h"
#include "inspector-trace-model.h"

/* The records of a trace (a file read through AtomrTraceRecorder, or a live
 * recorder polled by refresh()), sorted by start time and grouped into
 * tracks: one per (device, actor, stream), which is one row of the
 * timeline.  The statistics list holds one InspectorOperationStats per
 * (library, operation) of the operations that succeeded, sorted by total
 * time. */
struct _InspectorTraceModel
{
  GObject             parent_instance;
  GPtrArray          *records;      /* AtomrLaunchInfo*, by start time */
  GPtrArray          *tracks;       /* Track* */
  GArray             *record_track; /* guint per record */
  GListStore         *statistics;
  gint64              start, end;
  AtomrTraceRecorder *recorder;
  guint               recorder_n;
  guint64             recorder_dropped;
};

typedef struct {
  gchar  *key;
  gchar  *label;
  gint    device;
  guint   stream;
  GArray *records;   /* guint */
} Track;

G_DEFINE_FINAL_TYPE (InspectorTraceModel, inspector_trace_model, G_TYPE_OBJECT)

enum {
  CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
track_free (Track *t)
{
  g_free (t->key);
  g_free (t->label);
  g_array_unref (t->records);
  g_free (t);
}

static void
inspector_trace_model_finalize (GObject *object)
{
  InspectorTraceModel *self = INSPECTOR_TRACE_MODEL (object);

  g_ptr_array_unref (self->records);
  g_ptr_array_unref (self->tracks);
  g_array_unref (self->record_track);
  g_object_unref (self->statistics);
  g_clear_object (&self->recorder);
  G_OBJECT_CLASS (inspector_trace_model_parent_class)->finalize (object);
}

static void
inspector_trace_model_class_init (InspectorTraceModelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = inspector_trace_model_finalize;

  /* Emitted after the records, tracks and statistics were replaced. */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                   0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
inspector_trace_model_init (InspectorTraceModel *self)
{
  self->records = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  self->tracks = g_ptr_array_new_with_free_func ((GDestroyNotify) track_free);
  self->record_track = g_array_new (FALSE, FALSE, sizeof (guint));
  self->statistics = g_list_store_new (INSPECTOR_TYPE_OPERATION_STATS);
}

InspectorTraceModel *
inspector_trace_model_new (void)
{
  return g_object_new (INSPECTOR_TYPE_TRACE_MODEL, NULL);
}

/* The box of an operation starts when it was enqueued on the stream; a
 * record without an enqueue time (it failed before) starts at submission. */
gint64
inspector_launch_info_get_start (AtomrLaunchInfo *info)
{
  gint64 enq = atomr_launch_info_get_enqueue_time (info);
  return enq ? enq : atomr_launch_info_get_submit_time (info);
}

/* What statistics measure: GPU time when the actor timed the operation with
 * events, else the host-observed time from enqueue to completion. */
gdouble
inspector_launch_info_get_duration_us (AtomrLaunchInfo *info)
{
  gdouble gpu = atomr_launch_info_get_gpu_duration_ms (info);
  gint64 start = inspector_launch_info_get_start (info);
  gint64 done = atomr_launch_info_get_complete_time (info);

  if (gpu >= 0)
    return gpu * 1000.0;
  return done > start ? (gdouble) (done - start) : 0.0;
}

/**
 * inspector_launch_info_get_label:
 * @info: a record
 *
 * What the operation is called in the timeline and the statistics: its
 * name, and for kernel launches (operation "launch", the kernel in the
 * detail) the kernel's name too, so each kernel gets its own row.
 *
 * Returns: (transfer full): the label
 */
gchar *
inspector_launch_info_get_label (AtomrLaunchInfo *info)
{
  const gchar *op = atomr_launch_info_get_operation (info);
  const gchar *detail = atomr_launch_info_get_detail (info);

  if (g_strcmp0 (op, "launch") == 0 && detail && *detail)
    return g_strdup_printf ("launch %s", detail);
  return g_strdup (op);
}

static gint
compare_start (gconstpointer a,
               gconstpointer b)
{
  AtomrLaunchInfo *x = *(AtomrLaunchInfo **) a, *y = *(AtomrLaunchInfo **) b;
  gint64 sx = inspector_launch_info_get_start (x), sy = inspector_launch_info_get_start (y);

  if (sx != sy)
    return sx < sy ? -1 : 1;
  return atomr_launch_info_get_sequence (x) < atomr_launch_info_get_sequence (y) ? -1 :
         atomr_launch_info_get_sequence (x) > atomr_launch_info_get_sequence (y);
}

static gint
compare_track (gconstpointer a,
               gconstpointer b)
{
  const Track *x = *(Track **) a, *y = *(Track **) b;
  gint c;

  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  c = g_strcmp0 (x->label, y->label);
  if (c != 0)
    return c;
  return (x->stream > y->stream) - (x->stream < y->stream);
}

static gint
compare_stats (gconstpointer a,
               gconstpointer b,
               gpointer      user_data)
{
  gdouble x = inspector_operation_stats_get_total_us ((InspectorOperationStats *) a);
  gdouble y = inspector_operation_stats_get_total_us ((InspectorOperationStats *) b);

  if (x != y)
    return x > y ? -1 : 1;
  return g_strcmp0 (inspector_operation_stats_get_operation ((InspectorOperationStats *) a),
                    inspector_operation_stats_get_operation ((InspectorOperationStats *) b));
}

static void
rebuild (InspectorTraceModel *self)
{
  g_autoptr(GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) durations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                           (GDestroyNotify) g_array_unref);
  g_autoptr(GArray) remap = NULL;
  GHashTableIter iter;
  gpointer key, value;

  g_ptr_array_sort (self->records, compare_start);
  g_ptr_array_set_size (self->tracks, 0);
  g_array_set_size (self->record_track, self->records->len);
  g_list_store_remove_all (self->statistics);
  self->start = self->end = 0;

  for (guint i = 0; i < self->records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (self->records, i);
      gint dev = atomr_launch_info_get_device_ordinal (info);
      guint stream = atomr_launch_info_get_stream_id (info);
      const gchar *actor = atomr_launch_info_get_actor_name (info);
      g_autofree gchar *k = g_strdup_printf ("%d/%u/%s", dev, stream, actor ? actor : "");
      g_autofree gchar *label = inspector_launch_info_get_label (info);
      g_autofree gchar *sk = g_strdup_printf ("%s\x1f%s", atomr_launch_info_get_library (info), label);
      gint64 s = inspector_launch_info_get_start (info);
      gint64 e = MAX (atomr_launch_info_get_complete_time (info), s);
      gdouble d = inspector_launch_info_get_duration_us (info);
      Track *t = g_hash_table_lookup (by_key, k);
      GArray *dur;

      if (t == NULL)
        {
          t = g_new0 (Track, 1);
          t->key = g_steal_pointer (&k);
          t->device = dev;
          t->stream = stream;
          /* Translators: a timeline row: actor name and CUDA stream number */
          t->label = g_strdup_printf (_("%s · stream %u"), actor && *actor ? actor : _("Unnamed actor"), stream);
          t->records = g_array_new (FALSE, FALSE, sizeof (guint));
          g_hash_table_insert (by_key, t->key, t);
          g_ptr_array_add (self->tracks, t);
        }
      g_array_append_val (t->records, i);
      if (i == 0 || s < self->start)
        self->start = s;
      if (i == 0 || e > self->end)
        self->end = e;

      /* a failed operation is on the timeline (in red) but its time to
       * failure says nothing about the operation: not in the statistics */
      if (atomr_launch_info_get_error (info))
        continue;
      dur = g_hash_table_lookup (durations, sk);
      if (dur == NULL)
        {
          dur = g_array_new (FALSE, FALSE, sizeof (gdouble));
          g_hash_table_insert (durations, g_steal_pointer (&sk), dur);
        }
      g_array_append_val (dur, d);
    }

  g_ptr_array_sort (self->tracks, compare_track);
  for (guint t = 0; t < self->tracks->len; t++)
    {
      Track *track = g_ptr_array_index (self->tracks, t);
      for (guint j = 0; j < track->records->len; j++)
        g_array_index (self->record_track, guint, g_array_index (track->records, guint, j)) = t;
    }

  g_hash_table_iter_init (&iter, durations);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      g_auto(GStrv) parts = g_strsplit (key, "\x1f", 2);
      GArray *dur = value;
      g_autoptr(InspectorOperationStats) st =
        inspector_operation_stats_new (parts[0], parts[1], (gdouble *) (gpointer) dur->data, dur->len);
      g_list_store_insert_sorted (self->statistics, st, compare_stats, NULL);
    }

  g_signal_emit (self, signals[CHANGED], 0);
}

/**
 * inspector_trace_model_set_records:
 * @self: a model
 * @records: (element-type AtomrLaunchInfo): records, in any order
 *
 * Replaces the model's records (the array is not kept; the records are
 * referenced).
 */
void
inspector_trace_model_set_records (InspectorTraceModel *self,
                                   GPtrArray           *records)
{
  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));
  g_return_if_fail (records != NULL);

  g_ptr_array_set_size (self->records, 0);
  for (guint i = 0; i < records->len; i++)
    g_ptr_array_add (self->records, atomr_launch_info_ref (g_ptr_array_index (records, i)));
  rebuild (self);
}

gboolean
inspector_trace_model_load (InspectorTraceModel  *self,
                            const gchar          *path,
                            GError              **error)
{
  g_autoptr(AtomrTraceRecorder) rec = atomr_trace_recorder_new (1 << 20);
  g_autoptr(GPtrArray) records = NULL;

  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  if (!atomr_trace_recorder_load (rec, path, error))
    return FALSE;
  inspector_trace_model_set_recorder (self, NULL);
  records = atomr_trace_recorder_get_records (rec);
  inspector_trace_model_set_records (self, records);
  return TRUE;
}

gboolean
inspector_trace_model_save (InspectorTraceModel  *self,
                            const gchar          *path,
                            GError              **error)
{
  g_autoptr(AtomrTraceRecorder) rec = atomr_trace_recorder_new (MAX (self->records->len, 1));

  g_return_val_if_fail (INSPECTOR_IS_TRACE_MODEL (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  for (guint i = 0; i < self->records->len; i++)
    atomr_trace_recorder_add_record (rec, g_ptr_array_index (self->records, i));
  return atomr_trace_recorder_save (rec, path, error);
}

/**
 * inspector_trace_model_set_recorder:
 * @self: a model
 * @recorder: (nullable): a live recorder, or %NULL to stop following one
 *
 * Follows @recorder: each inspector_trace_model_refresh() takes its
 * records when they changed.
 */
void
inspector_trace_model_set_recorder (InspectorTraceModel *self,
                                    AtomrTraceRecorder  *recorder)
{
  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));

  if (!g_set_object (&self->recorder, recorder))
    return;
  self->recorder_n = G_MAXUINT;
  inspector_trace_model_refresh (self);
}

AtomrTraceRecorder *
inspector_trace_model_get_recorder (InspectorTraceModel *self)
{
  return self->recorder;
}

void
inspector_trace_model_refresh (InspectorTraceModel *self)
{
  g_autoptr(GPtrArray) records = NULL;
  guint n;
  guint64 dropped;

  g_return_if_fail (INSPECTOR_IS_TRACE_MODEL (self));

  if (self->recorder == NULL)
    return;
  n = atomr_trace_recorder_get_n_records (self->recorder);
  dropped = atomr_trace_recorder_get_n_dropped (self->recorder);
  if (n == self->recorder_n && dropped == self->recorder_dropped)
    return;
  self->recorder_n = n;
  self->recorder_dropped = dropped;
  records = atomr_trace_recorder_get_records (self->recorder);
  inspector_trace_model_set_records (self, records);
}

guint inspector_trace_model_get_n_records (InspectorTraceModel *self) { return self->records->len; }
guint inspector_trace_model_get_n_tracks (InspectorTraceModel *self) { return self->tracks->len; }
gint64 inspector_trace_model_get_start_time (InspectorTraceModel *self) { return self->start; }
gint64 inspector_trace_model_get_end_time (InspectorTraceModel *self) { return self->end; }

/**
 * inspector_trace_model_get_statistics:
 * @self: a model
 *
 * Returns: (transfer none): a list of #InspectorOperationStats, by total
 *   time, longest first
 */
GListModel *
inspector_trace_model_get_statistics (InspectorTraceModel *self)
{
  return G_LIST_MODEL (self->statistics);
}

AtomrLaunchInfo *
inspector_trace_model_get_record (InspectorTraceModel *self,
                                  guint                index)
{
  g_return_val_if_fail (index < self->records->len, NULL);
  return g_ptr_array_index (self->records, index);
}

const gchar *
inspector_trace_model_get_track_label (InspectorTraceModel *self,
                                       guint                track)
{
  g_return_val_if_fail (track < self->tracks->len, NULL);
  return ((Track *) g_ptr_array_index (self->tracks, track))->label;
}

guint
inspector_trace_model_get_record_track (InspectorTraceModel *self,
                                        guint                index)
{
  g_return_val_if_fail (index < self->records->len, 0);
  return g_array_index (self->record_track, guint, index);
}

/**
 * inspector_trace_model_get_track_records:
 * @self: a model
 * @track: a track index
 * @n: (out): how many records the track has
 *
 * Returns: (array length=n): the record indices of @track, by start time
 */
const guint *
inspector_trace_model_get_track_records (InspectorTraceModel *self,
                                         guint                track,
                                         guint               *n)
{
  Track *t;

  g_return_val_if_fail (track < self->tracks->len, NULL);
  t = g_ptr_array_index (self->tracks, track);
  *n = t->records->len;
  return (const guint *) (gpointer) t->records->data;
}
