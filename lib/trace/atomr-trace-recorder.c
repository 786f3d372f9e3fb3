/* atomr-trace-recorder.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "core/atomr-error.h"
#include "trace/atomr-trace-recorder.h"

/**
 * AtomrTraceRecorder:
 *
 * Listens to the [signal@Atomr.Actor::after-complete] signal of any set of actors
 * and keeps the last [property@Atomr.TraceRecorder:capacity] operations in a ring.
 * The record exports to the Chrome trace event format (version 2 of the
 * atomr trace contract, see docs/DESIGN-NOTES.md): GPU execution as
 * complete events on one lane per CUDA stream, each operation's host-side
 * life (submitted, enqueued, completed, replied) as async events on one
 * lane per actor, and the GPU waits between operations as flow events.
 * Perfetto and chrome://tracing open it, and atomr-inspector reads it back
 * with [method@Atomr.TraceRecorder.load].
 *
 * Threads: actors emit on their own contexts and the recorder may be used,
 * and dropped, from any thread.  The ring lives in a small refcounted core
 * that every signal connection holds a reference on, so a handler already
 * running on an actor's thread when the recorder is disposed (or the actor
 * removed) on another thread finds the core alive and closed, never a
 * freed recorder.  The ring grows as records arrive, up to the capacity.
 *
 * Since: 0.1
 */

typedef struct
{
  gatomicrefcount ref;
  GMutex     lock;
  guint      capacity;
  GPtrArray *ring;        /* AtomrLaunchInfo*, grows to capacity */
  guint      head;        /* oldest record once the ring is full */
  guint64    dropped;
  gboolean   closed;      /* the recorder is gone: ignore late handlers */
} RecorderCore;

typedef struct
{
  GWeakRef actor;
  gulong   handler;
} Watch;

struct _AtomrTraceRecorder
{
  GObject       parent_instance;

  RecorderCore *core;
  GMutex        actors_lock;
  GHashTable   *actors;   /* AtomrActor* (identity) -> Watch* */
};

G_DEFINE_FINAL_TYPE (AtomrTraceRecorder, atomr_trace_recorder, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CAPACITY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define DEFAULT_CAPACITY 65536

static RecorderCore *
core_new (void)
{
  RecorderCore *core = g_new0 (RecorderCore, 1);

  g_atomic_ref_count_init (&core->ref);
  g_mutex_init (&core->lock);
  core->capacity = DEFAULT_CAPACITY;
  core->ring = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  return core;
}

static RecorderCore *
core_ref (RecorderCore *core)
{
  g_atomic_ref_count_inc (&core->ref);
  return core;
}

static void
core_unref (RecorderCore *core)
{
  if (!g_atomic_ref_count_dec (&core->ref))
    return;
  g_ptr_array_unref (core->ring);
  g_mutex_clear (&core->lock);
  g_free (core);
}

static void
core_closure_notify (gpointer  data,
                     GClosure *closure)
{
  core_unref (data);
}

static void
core_add (RecorderCore    *core,
          AtomrLaunchInfo *info)
{
  g_mutex_lock (&core->lock);
  if (core->closed)
    ;
  else if (core->ring->len < core->capacity)
    g_ptr_array_add (core->ring, atomr_launch_info_ref (info));
  else
    {
      AtomrLaunchInfo **slot = (AtomrLaunchInfo **) &g_ptr_array_index (core->ring, core->head);
      atomr_launch_info_unref (*slot);
      *slot = atomr_launch_info_ref (info);
      core->head = (core->head + 1) % core->capacity;
      core->dropped++;
    }
  g_mutex_unlock (&core->lock);
}

static void
watch_free (gpointer data)
{
  Watch *w = data;
  g_autoptr(AtomrActor) actor = g_weak_ref_get (&w->actor);

  /* A dead actor took its handlers (and their core references) along. */
  if (actor && g_signal_handler_is_connected (actor, w->handler))
    g_signal_handler_disconnect (actor, w->handler);
  g_weak_ref_clear (&w->actor);
  g_free (w);
}

static void
atomr_trace_recorder_dispose (GObject *object)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);
  g_autoptr(GHashTable) actors = NULL;

  g_mutex_lock (&self->core->lock);
  self->core->closed = TRUE;
  g_mutex_unlock (&self->core->lock);

  g_mutex_lock (&self->actors_lock);
  actors = g_steal_pointer (&self->actors);
  self->actors = g_hash_table_new_full (NULL, NULL, NULL, watch_free);
  g_mutex_unlock (&self->actors_lock);
  /* Disconnect outside the lock: dropping an actor may finalize it here. */

  G_OBJECT_CLASS (atomr_trace_recorder_parent_class)->dispose (object);
}

static void
atomr_trace_recorder_finalize (GObject *object)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);

  g_hash_table_unref (self->actors);
  g_mutex_clear (&self->actors_lock);
  core_unref (self->core);

  G_OBJECT_CLASS (atomr_trace_recorder_parent_class)->finalize (object);
}

static void
atomr_trace_recorder_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);

  switch (prop_id)
    {
    case PROP_CAPACITY:
      g_value_set_uint (value, self->core->capacity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_trace_recorder_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);

  switch (prop_id)
    {
    case PROP_CAPACITY:
      /* Construct-only, before any record: nothing to reallocate.  The
       * ring grows as records arrive, so a huge capacity costs nothing
       * until it is used. */
      self->core->capacity = MAX (1, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_trace_recorder_class_init (AtomrTraceRecorderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_trace_recorder_dispose;
  object_class->finalize = atomr_trace_recorder_finalize;
  object_class->get_property = atomr_trace_recorder_get_property;
  object_class->set_property = atomr_trace_recorder_set_property;

  /**
   * AtomrTraceRecorder:capacity:
   *
   * How many operations the ring keeps; older ones are dropped.  Memory
   * grows with the records actually kept, not with the capacity.
   *
   * Since: 0.1
   */
  properties[PROP_CAPACITY] =
    g_param_spec_uint ("capacity", NULL, NULL, 1, G_MAXUINT, DEFAULT_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_trace_recorder_init (AtomrTraceRecorder *self)
{
  self->core = core_new ();
  g_mutex_init (&self->actors_lock);
  self->actors = g_hash_table_new_full (NULL, NULL, NULL, watch_free);
}

/**
 * atomr_trace_recorder_new:
 * @capacity: how many operations to keep, at least 1
 *
 * Creates a recorder that keeps the last @capacity operations of the actors added to it.
 *
 * Returns: (transfer full): a new recorder
 *
 * Since: 0.1
 */
AtomrTraceRecorder *
atomr_trace_recorder_new (guint capacity)
{
  return g_object_new (ATOMR_TYPE_TRACE_RECORDER, "capacity", MAX (capacity, 1), NULL);
}

/**
 * atomr_trace_recorder_get_capacity:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Gets the ring's size: how many records it keeps.
 *
 * This is the value of the [property@Atomr.TraceRecorder:capacity] property.
 *
 * Returns: the ring's size
 *
 * Since: 0.1
 */
guint
atomr_trace_recorder_get_capacity (AtomrTraceRecorder *self)
{
  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  return self->core->capacity;
}

/**
 * atomr_trace_recorder_add_record:
 * @self: an [class@Atomr.TraceRecorder]
 * @info: an operation record
 *
 * Adds a record, dropping the oldest one when the ring is full.
 *
 * Since: 0.1
 */
void
atomr_trace_recorder_add_record (AtomrTraceRecorder *self,
                                 AtomrLaunchInfo    *info)
{
  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));
  g_return_if_fail (info != NULL);

  core_add (self->core, info);
}

static void
on_after_complete (AtomrActor      *actor,
                   AtomrLaunchInfo *info,
                   gpointer         user_data)
{
  core_add (user_data, info);
}

/**
 * atomr_trace_recorder_add_actor:
 * @self: an [class@Atomr.TraceRecorder]
 * @actor: an actor to record
 *
 * Records every operation @actor completes from now on.  The recorder
 * holds no reference on the actor.  Any thread.
 *
 * Since: 0.1
 */
void
atomr_trace_recorder_add_actor (AtomrTraceRecorder *self,
                                AtomrActor         *actor)
{
  Watch *w;

  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  g_mutex_lock (&self->actors_lock);
  w = g_hash_table_lookup (self->actors, actor);
  if (w)
    {
      g_autoptr(AtomrActor) alive = g_weak_ref_get (&w->actor);
      if (alive == actor)
        {
          g_mutex_unlock (&self->actors_lock);
          return;
        }
      /* A dead actor's address, reused: forget the old watch. */
      g_hash_table_remove (self->actors, actor);
    }
  w = g_new0 (Watch, 1);
  g_weak_ref_init (&w->actor, actor);
  w->handler = g_signal_connect_data (actor, "after-complete", G_CALLBACK (on_after_complete),
                                      core_ref (self->core), core_closure_notify, 0);
  g_hash_table_insert (self->actors, actor, w);
  g_mutex_unlock (&self->actors_lock);
}

/**
 * atomr_trace_recorder_remove_actor:
 * @self: an [class@Atomr.TraceRecorder]
 * @actor: an actor being recorded
 *
 * Stops recording @actor.  Any thread; a handler already running on the
 * actor's thread may still add its record.
 *
 * Since: 0.1
 */
void
atomr_trace_recorder_remove_actor (AtomrTraceRecorder *self,
                                   AtomrActor         *actor)
{
  Watch *w = NULL;

  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));

  g_mutex_lock (&self->actors_lock);
  g_hash_table_steal_extended (self->actors, actor, NULL, (gpointer *) &w);
  g_mutex_unlock (&self->actors_lock);
  if (w)
    watch_free (w);
}

/**
 * atomr_trace_recorder_get_records:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Gets the kept records, oldest first.
 *
 * Returns: (transfer container) (element-type AtomrLaunchInfo): the kept
 *   records, oldest first
 *
 * Since: 0.1
 */
GPtrArray *
atomr_trace_recorder_get_records (AtomrTraceRecorder *self)
{
  RecorderCore *core;
  GPtrArray *out;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), NULL);

  core = self->core;
  g_mutex_lock (&core->lock);
  out = g_ptr_array_new_full (core->ring->len, (GDestroyNotify) atomr_launch_info_unref);
  for (guint i = 0; i < core->ring->len; i++)
    g_ptr_array_add (out, atomr_launch_info_ref (g_ptr_array_index (core->ring,
                                                                    (core->head + i) % core->ring->len)));
  g_mutex_unlock (&core->lock);
  return out;
}

/**
 * atomr_trace_recorder_get_n_records:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Gets how many records are kept.
 *
 * Returns: how many records are kept
 *
 * Since: 0.1
 */
guint
atomr_trace_recorder_get_n_records (AtomrTraceRecorder *self)
{
  guint n;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  g_mutex_lock (&self->core->lock);
  n = self->core->ring->len;
  g_mutex_unlock (&self->core->lock);
  return n;
}

/**
 * atomr_trace_recorder_get_n_dropped:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Gets how many records fell out of the full ring.
 *
 * Returns: how many records fell out of the full ring
 *
 * Since: 0.1
 */
guint64
atomr_trace_recorder_get_n_dropped (AtomrTraceRecorder *self)
{
  guint64 n;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  g_mutex_lock (&self->core->lock);
  n = self->core->dropped;
  g_mutex_unlock (&self->core->lock);
  return n;
}

/**
 * atomr_trace_recorder_clear:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Forgets every record and gives their memory back.
 *
 * Since: 0.1
 */
void
atomr_trace_recorder_clear (AtomrTraceRecorder *self)
{
  g_autoptr(GPtrArray) old = NULL;

  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));

  g_mutex_lock (&self->core->lock);
  old = g_steal_pointer (&self->core->ring);
  self->core->ring = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  self->core->head = 0;
  self->core->dropped = 0;
  g_mutex_unlock (&self->core->lock);
}

/* Export (contract version 2; docs/DESIGN-NOTES.md, "Trace export").
 *
 * Every string goes through valid_utf8(): actor names and details come
 * from applications and may hold any bytes, and JSON must be UTF-8. */

#define TRACE_VERSION 2
/* Lanes (tids) of one process: host lanes count from 1 in order of first
 * appearance; GPU lanes are (ordinal + 2) × 10^6 + stream id, so that the
 * host test device (ordinal -1) stays apart from the host lanes. */
#define GPU_LANE_BASE 1000000

static void
add_string (JsonBuilder *b,
            const gchar *name,
            const gchar *value)
{
  g_autofree gchar *valid = g_utf8_make_valid (value ? value : "", -1);

  json_builder_set_member_name (b, name);
  json_builder_add_string_value (b, valid);
}

static void
add_int (JsonBuilder *b,
         const gchar *name,
         gint64       value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

/* Microseconds with the nanoseconds as fraction, relative to @origin. */
static void
add_time (JsonBuilder *b,
          const gchar *name,
          gint64       ns,
          gint64       origin)
{
  json_builder_set_member_name (b, name);
  json_builder_add_double_value (b, (gdouble) (ns - origin) / 1000.0);
}

/* When a mailbox-depth sample is drawn: the operation's enqueue time, or its
 * submission when it never reached the stream. */static gint64
counter_time (AtomrLaunchInfo *info)
{
  gint64 t = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_ENQUEUED);
  return t > 0 ? t : atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED);
}

static gint64
gpu_lane (AtomrLaunchInfo *info)
{
  return (gint64) (atomr_launch_info_get_device_ordinal (info) + 2) * GPU_LANE_BASE +
         atomr_launch_info_get_stream_id (info);
}

typedef struct
{
  AtomrLaunchInfo *info;
  gint64           start;   /* ns, after clamping to the lane */
  gint64           end;
} GpuSlice;

static gint
slice_compare (gconstpointer a,
               gconstpointer b)
{
  const GpuSlice *x = a, *y = b;
  gint64 lx = gpu_lane (x->info), ly = gpu_lane (y->info);

  if (lx != ly)
    return lx < ly ? -1 : 1;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return atomr_launch_info_get_sequence (x->info) < atomr_launch_info_get_sequence (y->info) ? -1 : 1;
}

static void
begin_event (JsonBuilder *b,
             const gchar *ph,
             const gchar *name,
             const gchar *cat,
             gint         pid,
             gint64       tid)
{
  json_builder_begin_object (b);
  add_string (b, "ph", ph);
  add_string (b, "name", name);
  if (cat)
    add_string (b, "cat", cat);
  add_int (b, "pid", pid);
  add_int (b, "tid", tid);
}

static void
add_metadata (JsonBuilder *b,
              const gchar *what,
              gint         pid,
              gint64       tid,
              const gchar *value)
{
  begin_event (b, "M", what, NULL, pid, tid);
  json_builder_set_member_name (b, "args");
  json_builder_begin_object (b);
  add_string (b, "name", value);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

/* The args every event of an operation carries (enough to rebuild the
 * record from any of them). */
static void
add_op_args (JsonBuilder     *b,
             AtomrLaunchInfo *info,
             gboolean         full)
{
  const GError *error = atomr_launch_info_get_error (info);
  guint g[3], bl[3], shm;

  json_builder_set_member_name (b, "args");
  json_builder_begin_object (b);
  add_int (b, "seq", (gint64) atomr_launch_info_get_sequence (info));
  add_string (b, "actor", atomr_launch_info_get_actor_name (info));
  add_string (b, "library", atomr_launch_info_get_library (info));
  add_string (b, "op", atomr_launch_info_get_operation (info));
  add_int (b, "device", atomr_launch_info_get_device_ordinal (info));
  add_int (b, "generation", atomr_launch_info_get_generation (info));
  add_int (b, "stream", atomr_launch_info_get_stream_id (info));
  if (atomr_launch_info_get_geometry (info, &g[0], &g[1], &g[2], &bl[0], &bl[1], &bl[2], &shm))
    {
      json_builder_set_member_name (b, "grid");
      json_builder_begin_array (b);
      for (guint k = 0; k < 3; k++)
        json_builder_add_int_value (b, g[k]);
      json_builder_end_array (b);
      json_builder_set_member_name (b, "block");
      json_builder_begin_array (b);
      for (guint k = 0; k < 3; k++)
        json_builder_add_int_value (b, bl[k]);
      json_builder_end_array (b);
      add_int (b, "shared_mem", shm);
    }
  if (error)
    {
      add_string (b, "error", error->message);
      if (full)
        {
          add_string (b, "error_domain", g_quark_to_string (error->domain));
          add_int (b, "error_code", error->code);
        }
    }
  if (full && atomr_launch_info_get_detail (info))
    add_string (b, "detail", atomr_launch_info_get_detail (info));
  if (full && atomr_launch_info_get_gpu_duration_ms (info) >= 0)
    {
      json_builder_set_member_name (b, "gpu_ms");
      json_builder_add_double_value (b, atomr_launch_info_get_gpu_duration_ms (info));
    }
  json_builder_end_object (b);
}

/**
 * atomr_trace_recorder_to_json:
 * @self: an [class@Atomr.TraceRecorder]
 *
 * Serializes the records in the Chrome trace event format, version 2 of
 * the atomr contract (docs/DESIGN-NOTES.md): `traceEvents` holds
 *
 * - `M` metadata naming the process and every lane;
 * - per operation with GPU times, one `X` event (`cat` "gpu") on the lane
 *   of its stream, from GPU start to GPU end;
 * - per operation, `b`/`e` async events (`cat` "host", `id` its sequence
 *   number) on its actor's host lane from submission to reply, with `n`
 *   steps "enqueued", "completed" and "replied";
 * - per GPU wait between two timed operations, an `s`/`f` flow pair
 *   (`cat` "dependency") from the producer's slice end to the consumer's
 *   slice start.
 *
 * `ts` and `dur` are microseconds with a nanosecond fraction, relative to
 * `otherData.origin-ns` on the host's monotonic clock.  Slices of one GPU
 * lane never overlap: calibration noise of at most a few hundred
 * nanoseconds is absorbed by starting a slice no earlier than the end of
 * the one before.
 *
 * Returns: (transfer full): the JSON text
 *
 * Since: 0.1
 */
gchar *
atomr_trace_recorder_to_json (AtomrTraceRecorder *self)
{
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GHashTable) host_lanes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) gpu_lanes = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_autoptr(GHashTable) by_seq = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GHashTable) used_ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GArray) slices = g_array_new (FALSE, FALSE, sizeof (GpuSlice));
  g_autoptr(GArray) gpu_lane_keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint pid = (gint) getpid ();
  gint64 origin = G_MAXINT64;
  static const struct { AtomrLaunchEvent event; const gchar *name; } steps[] = {
    { ATOMR_LAUNCH_ENQUEUED, "enqueued" },
    { ATOMR_LAUNCH_COMPLETED, "completed" },
    { ATOMR_LAUNCH_REPLIED, "replied" },
  };

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), NULL);
  records = atomr_trace_recorder_get_records (self);

  /* The origin: the earliest moment of any record. */
  for (guint i = 0; i < records->len; i++)
    for (guint e = 0; e < ATOMR_LAUNCH_N_EVENTS; e++)
      {
        gint64 t = atomr_launch_info_get_timestamp (g_ptr_array_index (records, i), e);
        if (t > 0 && t < origin)
          origin = t;
      }
  if (origin == G_MAXINT64)
    origin = 0;

  /* GPU slices, per lane in start order, clamped so that none overlaps
   * the one before (a stream runs one operation at a time). */
  for (guint i = 0; i < records->len; i++)
    {
      GpuSlice s = { g_ptr_array_index (records, i), 0, 0 };
      if (atomr_launch_info_get_gpu_times (s.info, &s.start, &s.end))
        g_array_append_val (slices, s);
    }
  g_array_sort (slices, slice_compare);
  for (guint i = 1; i < slices->len; i++)
    {
      GpuSlice *prev = &g_array_index (slices, GpuSlice, i - 1);
      GpuSlice *cur = &g_array_index (slices, GpuSlice, i);
      if (gpu_lane (prev->info) == gpu_lane (cur->info) && cur->start < prev->end)
        {
          cur->start = prev->end;
          cur->end = MAX (cur->end, cur->start);
        }
    }
  for (guint i = 0; i < slices->len; i++)
    {
      GpuSlice *s = &g_array_index (slices, GpuSlice, i);
      guint64 seq = atomr_launch_info_get_sequence (s->info);
      if (seq != 0 && !g_hash_table_contains (by_seq, &seq))
        g_hash_table_insert (by_seq, g_memdup2 (&seq, sizeof seq), s);
    }

  json_builder_begin_object (b);
  add_string (b, "displayTimeUnit", "ns");
  json_builder_set_member_name (b, "otherData");
  json_builder_begin_object (b);
  add_int (b, "atomr-trace-version", TRACE_VERSION);
  add_string (b, "producer", "atomr-accel " PACKAGE_VERSION);
  add_string (b, "clock", "monotonic");
  add_int (b, "origin-ns", origin);
  add_int (b, "dropped", (gint64) atomr_trace_recorder_get_n_dropped (self));
  json_builder_end_object (b);
  json_builder_set_member_name (b, "traceEvents");
  json_builder_begin_array (b);

  /* Metadata: the process, then every lane. */
  {
    g_autofree gchar *pname = g_strdup_printf ("%s (atomr)", g_get_prgname () ? g_get_prgname () : "process");
    add_metadata (b, "process_name", pid, 0, pname);
  }
  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      const gchar *actor = atomr_launch_info_get_actor_name (info);
      if (!g_hash_table_contains (host_lanes, actor))
        {
          g_autofree gchar *name = g_strdup_printf ("host · %s", actor);
          gint64 tid = g_hash_table_size (host_lanes) + 1;
          g_hash_table_insert (host_lanes, g_strdup (actor), GSIZE_TO_POINTER ((gsize) tid));
          add_metadata (b, "thread_name", pid, tid, name);
        }
    }
  for (guint i = 0; i < slices->len; i++)
    {
      AtomrLaunchInfo *info = g_array_index (slices, GpuSlice, i).info;
      gint64 lane = gpu_lane (info);
      if (!g_hash_table_contains (gpu_lanes, &lane))
        {
          gint ordinal = atomr_launch_info_get_device_ordinal (info);
          g_autofree gchar *name = ordinal >= 0
            ? g_strdup_printf ("GPU %d · stream %u (%s)", ordinal,
                               atomr_launch_info_get_stream_id (info), atomr_launch_info_get_actor_name (info))
            : g_strdup_printf ("host test device · stream %u (%s)",
                               atomr_launch_info_get_stream_id (info), atomr_launch_info_get_actor_name (info));
          g_array_append_val (gpu_lane_keys, lane);
          g_hash_table_add (gpu_lanes, &g_array_index (gpu_lane_keys, gint64, gpu_lane_keys->len - 1));
          add_metadata (b, "thread_name", pid, lane, name);
        }
    }

  /* Host lifecycle: async b / n... / e, id = sequence number. */
  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      gint64 tid = GPOINTER_TO_SIZE (g_hash_table_lookup (host_lanes, atomr_launch_info_get_actor_name (info)));
      guint64 seq = atomr_launch_info_get_sequence (info);
      g_autofree gchar *id = NULL;
      gint64 submit = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED);
      gint64 last = submit;

      if (submit <= 0)
        continue;   /* never submitted?  nothing to draw */
      /* Actors number operations uniquely; records made by hand may not:
       * an async id must never be reused. */
      if (seq != 0 && !g_hash_table_contains (used_ids, &seq))
        {
          g_hash_table_add (used_ids, g_memdup2 (&seq, sizeof seq));
          id = g_strdup_printf ("%" G_GUINT64_FORMAT, seq);
        }
      else
        id = g_strdup_printf ("record-%u", i);
      begin_event (b, "b", atomr_launch_info_get_operation (info), "host", pid, tid);
      add_string (b, "id", id);
      add_time (b, "ts", submit, origin);
      add_op_args (b, info, TRUE);
      json_builder_end_object (b);
      for (guint k = 0; k < G_N_ELEMENTS (steps); k++)
        {
          gint64 t = atomr_launch_info_get_timestamp (info, steps[k].event);
          if (t <= 0)
            continue;
          t = MAX (t, last);   /* steps of one operation never go back */
          last = t;
          begin_event (b, "n", steps[k].name, "host", pid, tid);
          add_string (b, "id", id);
          add_time (b, "ts", t, origin);
          json_builder_end_object (b);
        }
      begin_event (b, "e", atomr_launch_info_get_operation (info), "host", pid, tid);
      add_string (b, "id", id);
      add_time (b, "ts", last, origin);
      json_builder_end_object (b);
    }

  /* GPU execution. */
  for (guint i = 0; i < slices->len; i++)
    {
      GpuSlice *s = &g_array_index (slices, GpuSlice, i);
      begin_event (b, "X", atomr_launch_info_get_operation (s->info), "gpu", pid, gpu_lane (s->info));
      add_time (b, "ts", s->start, origin);
      add_time (b, "dur", s->end, s->start);
      add_op_args (b, s->info, FALSE);
      json_builder_end_object (b);
    }

  /* Counters: the actor's mailbox depth when each operation left it, one
   * series per actor, at its enqueue (or submission) time. */
  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      gint depth = atomr_launch_info_get_mailbox_depth (info);
      gint64 t;
      g_autofree gchar *series = NULL;

      t = counter_time (info);
      if (depth < 0 || t <= 0)
        continue;
      json_builder_begin_object (b);
      add_string (b, "ph", "C");
      add_string (b, "name", "mailbox depth");
      add_int (b, "pid", pid);
      add_time (b, "ts", t, origin);
      json_builder_set_member_name (b, "args");
      json_builder_begin_object (b);
      series = g_utf8_make_valid (atomr_launch_info_get_actor_name (info), -1);
      add_int (b, series, depth);
      json_builder_end_object (b);
      json_builder_end_object (b);
    }

  /* Dependencies between timed operations. */
  for (guint i = 0; i < slices->len; i++)
    {
      GpuSlice *consumer = &g_array_index (slices, GpuSlice, i);
      guint n = 0;
      const guint64 *deps = atomr_launch_info_get_dependencies (consumer->info, &n);
      guint64 cseq = atomr_launch_info_get_sequence (consumer->info);

      for (guint k = 0; k < n; k++)
        {
          GpuSlice *producer = g_hash_table_lookup (by_seq, &deps[k]);
          g_autofree gchar *id = NULL;

          if (producer == NULL || producer->end > consumer->start)
            continue;   /* not in the record, untimed, or not a real wait */
          id = g_strdup_printf ("dep-%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT, deps[k], cseq);
          begin_event (b, "s", "dependency", "dependency", pid, gpu_lane (producer->info));
          add_string (b, "id", id);
          add_time (b, "ts", producer->end, origin);
          json_builder_end_object (b);
          begin_event (b, "f", "dependency", "dependency", pid, gpu_lane (consumer->info));
          add_string (b, "id", id);
          add_string (b, "bp", "e");
          add_time (b, "ts", consumer->start, origin);
          json_builder_end_object (b);
        }
    }

  json_builder_end_array (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/**
 * atomr_trace_recorder_save:
 * @self: an [class@Atomr.TraceRecorder]
 * @path: (type filename): where to write the trace
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes [method@Atomr.TraceRecorder.to_json] to @path atomically.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_trace_recorder_save (AtomrTraceRecorder  *self,
                           const gchar         *path,
                           GError             **error)
{
  g_autofree gchar *json = NULL;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  json = atomr_trace_recorder_to_json (self);
  return g_file_set_contents (path, json, -1, error);
}

/* Loading: our own output (version 2), version 1 files (one X event per
 * operation with args.sequence), plain Chrome traces with X events, and
 * B/E pairs. */

typedef struct
{
  GPtrArray  *infos;       /* AtomrLaunchInfo*, in order of first sight */
  GHashTable *by_id;       /* gchar* async id or seq -> AtomrLaunchInfo* */
  GHashTable *names;       /* "pid/tid" -> thread name */
  gint64      origin;      /* ns added to every ts */
  GHashTable *by_moment;   /* "actor\nns" -> AtomrLaunchInfo*, for counters */
} Loader;

static gchar *
moment_key (const gchar *actor,
            gint64       ns)
{
  return g_strdup_printf ("%s\n%" G_GINT64_FORMAT, actor, ns);
}


static gboolean
member_number (JsonObject  *obj,
               const gchar *name,
               gdouble     *out)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;
  GType t;

  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return FALSE;
  t = json_node_get_value_type (node);
  if (t == G_TYPE_DOUBLE)
    *out = json_node_get_double (node);
  else if (t == G_TYPE_INT64)
    *out = (gdouble) json_node_get_int (node);
  else
    return FALSE;
  return isfinite (*out);
}

static gint64
member_int (JsonObject  *obj,
            const gchar *name,
            gint64       fallback)
{
  gdouble v;
  return member_number (obj, name, &v) ? (gint64) v : fallback;
}

static const gchar *
member_string (JsonObject  *obj,
               const gchar *name)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;
  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonObject *
member_object (JsonObject  *obj,
               const gchar *name)
{
  JsonNode *node = obj ? json_object_get_member (obj, name) : NULL;
  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* The id of an async or flow event: a string or a number. */
static gchar *
member_id (JsonObject *obj)
{
  JsonNode *node = json_object_get_member (obj, "id");
  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return NULL;
  if (json_node_get_value_type (node) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (node));
  if (json_node_get_value_type (node) == G_TYPE_INT64)
    return g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));
  return NULL;
}

/* ts (µs, with fraction) → ns on the host clock. */
static gint64
event_time_ns (Loader      *l,
               JsonObject  *ev,
               const gchar *name,
               gboolean    *ok)
{
  gdouble us;

  if (!member_number (ev, name, &us) || us < 0 || us > 9.2e15)
    {
      *ok = FALSE;
      return 0;
    }
  *ok = TRUE;
  return l->origin + (gint64) llround (us * 1000.0);
}

static gchar *
lane_key (JsonObject *ev)
{
  return g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                          member_int (ev, "pid", 0), member_int (ev, "tid", 0));
}

/* A record from an event's name and args (ours or another producer's). */
static AtomrLaunchInfo *
info_from_event (Loader     *l,
                 JsonObject *ev,
                 JsonObject *args)
{
  const gchar *name = member_string (ev, "name");
  const gchar *op = args ? member_string (args, "op") : NULL;
  const gchar *actor = args ? member_string (args, "actor") : NULL;
  const gchar *library = args ? member_string (args, "library") : NULL;
  const gchar *err;
  g_autofree gchar *fallback_actor = NULL;
  AtomrLaunchInfo *info;

  if (actor == NULL)
    {
      g_autofree gchar *k = lane_key (ev);
      const gchar *tname = g_hash_table_lookup (l->names, k);
      fallback_actor = tname ? g_strdup (tname)
                             : g_strdup_printf ("track %" G_GINT64_FORMAT, member_int (ev, "tid", 0));
      actor = fallback_actor;
    }
  if (library == NULL)
    library = member_string (ev, "cat");
  info = atomr_launch_info_new (actor, library ? library : "", op ? op : name);
  atomr_launch_info_set_device_ordinal (info, (gint) (args && json_object_has_member (args, "device")
                                                      ? member_int (args, "device", -1)
                                                      : member_int (ev, "pid", -1)));
  atomr_launch_info_set_stream_id (info, (guint) (args && json_object_has_member (args, "stream")
                                                  ? member_int (args, "stream", 0)
                                                  : member_int (ev, "tid", 0)));
  if (args == NULL)
    return info;

  atomr_launch_info_set_sequence (info, (guint64) member_int (args, "seq", member_int (args, "sequence", 0)));
  atomr_launch_info_set_generation (info, (guint) member_int (args, "generation", 0));
  {
    gdouble ms;
    if (member_number (args, "gpu_ms", &ms))
      atomr_launch_info_set_gpu_duration_ms (info, ms);
  }
  if (member_string (args, "detail"))
    atomr_launch_info_set_detail (info, member_string (args, "detail"));
  if (json_object_has_member (args, "grid") && JSON_NODE_HOLDS_ARRAY (json_object_get_member (args, "grid")) &&
      json_object_has_member (args, "block") && JSON_NODE_HOLDS_ARRAY (json_object_get_member (args, "block")))
    {
      JsonArray *g = json_object_get_array_member (args, "grid");
      JsonArray *bl = json_object_get_array_member (args, "block");
      if (json_array_get_length (g) == 3 && json_array_get_length (bl) == 3)
        atomr_launch_info_set_geometry (info,
                                        json_array_get_int_element (g, 0),
                                        json_array_get_int_element (g, 1),
                                        json_array_get_int_element (g, 2),
                                        json_array_get_int_element (bl, 0),
                                        json_array_get_int_element (bl, 1),
                                        json_array_get_int_element (bl, 2),
                                        (guint) member_int (args, "shared_mem", 0));
    }
  err = member_string (args, "error");
  if (err)
    {
      const gchar *domain = member_string (args, "error_domain");
      g_autoptr(GError) e = g_error_new_literal (domain ? g_quark_from_string (domain) : ATOMR_ERROR,
                                                 (gint) member_int (args, "error_code", ATOMR_ERROR_LIBRARY),
                                                 err);
      atomr_launch_info_set_error (info, e);
    }
  return info;
}

static void
loader_add (Loader          *l,
            const gchar     *id,
            AtomrLaunchInfo *info)
{
  g_ptr_array_add (l->infos, info);
  if (id)
    g_hash_table_insert (l->by_id, g_strdup (id), info);
}

static gboolean
invalid_event (GError     **error,
               guint        index,
               const gchar *ph,
               const gchar *what)
{
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "Trace event %u (phase \"%s\") %s", index, ph, what);
  return FALSE;
}

/* One event; FALSE with @error for an event that cannot be understood. */
static gboolean
loader_event (Loader      *l,
              JsonObject  *ev,
              guint        index,
              GHashTable  *open_b,     /* "pid/tid" -> GPtrArray of JsonObject* (B stacks) */
              GError     **error)
{
  const gchar *ph = member_string (ev, "ph");
  JsonObject *args = member_object (ev, "args");
  gboolean ok;

  if (ph == NULL)
    return TRUE;   /* not an event we know: ignore, as Chrome does */

  if (g_str_equal (ph, "X"))
    {
      gint64 ts = event_time_ns (l, ev, "ts", &ok), dur_ns = 0;
      gdouble dur = 0;
      AtomrLaunchInfo *info;
      gboolean gpu = g_strcmp0 (member_string (ev, "cat"), "gpu") == 0 && args &&
                     json_object_has_member (args, "seq");

      if (member_string (ev, "name") == NULL || !ok ||
          (json_object_has_member (ev, "dur") && (!member_number (ev, "dur", &dur) || dur < 0)))
        return invalid_event (error, index, ph, "is a complete event without a name, a timestamp "
                              "or a valid duration");
      dur_ns = (gint64) llround (dur * 1000.0);
      if (gpu)
        {
          g_autofree gchar *id = g_strdup_printf ("%" G_GINT64_FORMAT, member_int (args, "seq", 0));
          info = g_hash_table_lookup (l->by_id, id);
          if (info == NULL)
            {
              info = info_from_event (l, ev, args);
              loader_add (l, id, info);
            }
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_START, ts);
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_END, ts + dur_ns);
          return TRUE;
        }
      /* Version 1 and other producers: an operation from ts to ts + dur. */
      info = info_from_event (l, ev, args);
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED,
                                       args && json_object_has_member (args, "submit_us")
                                       ? member_int (args, "submit_us", 0) * 1000 : ts);
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, ts);
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, ts + dur_ns);
      loader_add (l, NULL, info);
      return TRUE;
    }

  if (g_str_equal (ph, "B") || g_str_equal (ph, "E"))
    {
      g_autofree gchar *key = lane_key (ev);
      GPtrArray *stack = g_hash_table_lookup (open_b, key);
      gint64 ts = event_time_ns (l, ev, "ts", &ok);

      if (!ok)
        return invalid_event (error, index, ph, "has no valid timestamp");
      if (g_str_equal (ph, "B"))
        {
          if (member_string (ev, "name") == NULL)
            return invalid_event (error, index, ph, "begins a slice without a name");
          if (stack == NULL)
            {
              stack = g_ptr_array_new ();
              g_hash_table_insert (open_b, g_steal_pointer (&key), stack);
            }
          g_ptr_array_add (stack, ev);
        }
      else
        {
          JsonObject *begin;
          AtomrLaunchInfo *info;
          gint64 start;

          if (stack == NULL || stack->len == 0)
            return invalid_event (error, index, ph, "ends a slice that was never begun on its thread");
          begin = g_ptr_array_steal_index (stack, stack->len - 1);
          start = event_time_ns (l, begin, "ts", &ok);
          if (ts < start)
            return invalid_event (error, index, ph, "ends a slice before it began");
          info = info_from_event (l, begin, member_object (begin, "args"));
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, start);
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, start);
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, ts);
          loader_add (l, NULL, info);
        }
      return TRUE;
    }

  if (g_str_equal (ph, "b") || g_str_equal (ph, "n") || g_str_equal (ph, "e"))
    {
      g_autofree gchar *id = member_id (ev);
      gint64 ts = event_time_ns (l, ev, "ts", &ok);
      AtomrLaunchInfo *info;

      if (g_strcmp0 (member_string (ev, "cat"), "host") != 0)
        return TRUE;   /* another producer's async events: not operations */
      if (id == NULL || !ok)
        return invalid_event (error, index, ph, "is an async event without an id or a timestamp");
      info = g_hash_table_lookup (l->by_id, id);
      if (g_str_equal (ph, "b"))
        {
          if (member_string (ev, "name") == NULL)
            return invalid_event (error, index, ph, "begins an operation without a name");
          if (info == NULL)
            {
              info = info_from_event (l, ev, args);
              loader_add (l, id, info);
            }
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, ts);
        }
      else if (info == NULL)
        return invalid_event (error, index, ph, "refers to an operation whose begin (\"b\") came not before it");
      else if (g_str_equal (ph, "n"))
        {
          const gchar *step = member_string (ev, "name");
          if (g_strcmp0 (step, "enqueued") == 0)
            atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, ts);
          else if (g_strcmp0 (step, "completed") == 0)
            atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, ts);
          else if (g_strcmp0 (step, "replied") == 0)
            atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, ts);
        }
      return TRUE;
    }

  if (g_str_equal (ph, "C"))
    {
      /* Our mailbox depth: back into the record enqueued (or submitted)
       * at that moment on that actor's series. */
      JsonObjectIter it;
      const gchar *series;
      JsonNode *value;
      gint64 ts = event_time_ns (l, ev, "ts", &ok);

      if (!ok || args == NULL || g_strcmp0 (member_string (ev, "name"), "mailbox depth") != 0)
        return TRUE;
      /* Counters follow the operations in our output: index them once. */
      if (l->by_moment == NULL)
        {
          l->by_moment = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          for (guint i = 0; i < l->infos->len; i++)
            {
              AtomrLaunchInfo *info = g_ptr_array_index (l->infos, i);
              g_hash_table_insert (l->by_moment,
                                   moment_key (atomr_launch_info_get_actor_name (info), counter_time (info)),
                                   info);
            }
        }
      json_object_iter_init (&it, args);
      while (json_object_iter_next (&it, &series, &value))
        {
          g_autofree gchar *key = moment_key (series, ts);
          AtomrLaunchInfo *info = g_hash_table_lookup (l->by_moment, key);
          if (info && JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_INT64)
            atomr_launch_info_set_mailbox_depth (info, (gint) json_node_get_int (value));
        }
      return TRUE;
    }

  if (g_str_equal (ph, "f"))
    {
      g_autofree gchar *id = member_id (ev);
      guint64 producer = 0, consumer = 0;
      AtomrLaunchInfo *info;
      g_autofree gchar *cid = NULL;

      if (g_strcmp0 (member_string (ev, "cat"), "dependency") != 0 || id == NULL ||
          sscanf (id, "dep-%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT, &producer, &consumer) != 2)
        return TRUE;
      cid = g_strdup_printf ("%" G_GUINT64_FORMAT, consumer);
      info = g_hash_table_lookup (l->by_id, cid);
      if (info)
        atomr_launch_info_add_dependency (info, producer);
      return TRUE;
    }

  return TRUE;   /* M, s, i, ...: nothing to keep */
}

/**
 * atomr_trace_recorder_load_json:
 * @self: an [class@Atomr.TraceRecorder]
 * @json: Chrome trace JSON text
 * @length: its length, or -1 if nul-terminated
 * @error: return location for a [struct@GLib.Error]
 *
 * Replaces the records with the operations of a Chrome trace: one written
 * by [method@Atomr.TraceRecorder.save] (either version), or another producer's,
 * whose complete (`X`) events and `B`/`E` pairs become records.  Events
 * of other phases are ignored.  On error the records are left as they
 * were.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_trace_recorder_load_json (AtomrTraceRecorder  *self,
                                const gchar         *json,
                                gssize               length,
                                GError             **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) infos = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  g_autoptr(GHashTable) by_id = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) open_b = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                        (GDestroyNotify) g_ptr_array_unref);
  Loader l = { infos, by_id, names, 0, NULL };
  JsonNode *root;
  JsonArray *events;
  GError *local = NULL;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), FALSE);
  g_return_val_if_fail (json != NULL, FALSE);

  if (!json_parser_load_from_data (parser, json, length, &local))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Not a Chrome trace: invalid JSON: %s", local->message);
      g_error_free (local);
      return FALSE;
    }
  root = json_parser_get_root (parser);
  if (root && JSON_NODE_HOLDS_ARRAY (root))
    events = json_node_get_array (root);       /* the bare array form */
  else if (root && JSON_NODE_HOLDS_OBJECT (root) &&
           json_object_has_member (json_node_get_object (root), "traceEvents") &&
           JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (root), "traceEvents")))
    {
      JsonObject *other = member_object (json_node_get_object (root), "otherData");
      events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
      l.origin = member_int (other, "origin-ns", 0);
    }
  else
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Not a Chrome trace: no \"traceEvents\" array at the top level");
      return FALSE;
    }

  /* Thread names first: they name the actors of foreign events. */
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonNode *node = json_array_get_element (events, i);
      JsonObject *ev = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const gchar *tname;

      if (ev && g_strcmp0 (member_string (ev, "ph"), "M") == 0 &&
          g_strcmp0 (member_string (ev, "name"), "thread_name") == 0 &&
          (tname = member_string (member_object (ev, "args"), "name")) != NULL)
        g_hash_table_insert (names, lane_key (ev), g_strdup (tname));
    }

  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonNode *node = json_array_get_element (events, i);

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      if (!loader_event (&l, json_node_get_object (node), i, open_b, error))
        {
          g_clear_pointer (&l.by_moment, g_hash_table_unref);
          return FALSE;
        }
    }
  g_clear_pointer (&l.by_moment, g_hash_table_unref);

  g_mutex_lock (&self->core->lock);
  g_clear_pointer (&self->core->ring, g_ptr_array_unref);
  self->core->ring = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  self->core->head = 0;
  self->core->dropped = 0;
  g_mutex_unlock (&self->core->lock);
  for (guint i = 0; i < infos->len; i++)
    core_add (self->core, g_ptr_array_index (infos, i));
  return TRUE;
}

/**
 * atomr_trace_recorder_load:
 * @self: an [class@Atomr.TraceRecorder]
 * @path: (type filename): a Chrome trace JSON file
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads a trace file with [method@Atomr.TraceRecorder.load_json].
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_trace_recorder_load (AtomrTraceRecorder  *self,
                           const gchar         *path,
                           GError             **error)
{
  g_autofree gchar *contents = NULL;
  gsize length = 0;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  if (!g_file_get_contents (path, &contents, &length, error))
    return FALSE;
  return atomr_trace_recorder_load_json (self, contents, (gssize) length, error);
}

/**
 * atomr_trace_recorder_load_json_string:
 * @self: an #AtomrTraceRecorder
 * @json: Chrome trace JSON text, nul-terminated
 * @error: return location for a #GError
 *
 * atomr_trace_recorder_load_json() for a nul-terminated string: the form
 * bindings call with a plain string (no length argument).
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_trace_recorder_load_json_string (AtomrTraceRecorder  *self,
                                       const gchar         *json,
                                       GError             **error)
{
  return atomr_trace_recorder_load_json (self, json, -1, error);
}
