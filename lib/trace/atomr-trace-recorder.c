/* atomr-trace-recorder.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <json-glib/json-glib.h>

#include "core/atomr-error.h"
#include "trace/atomr-trace-recorder.h"

/**
 * AtomrTraceRecorder:
 *
 * Listens to the #AtomrActor::after-complete signal of any set of actors
 * and keeps the last #AtomrTraceRecorder:capacity operations in a ring.
 * The record exports to the Chrome trace event format (`traceEvents`, one
 * complete event per operation from enqueue to completion, one track per
 * actor stream), which Perfetto and chrome://tracing open, and which
 * atomr-inspector reads back with atomr_trace_recorder_load().
 *
 * Actors emit on their own contexts; the recorder may be used from any
 * thread.
 */

struct _AtomrTraceRecorder
{
  GObject    parent_instance;

  GMutex     lock;
  guint      capacity;
  GPtrArray *ring;        /* AtomrLaunchInfo*, capacity slots */
  guint      head;        /* next slot to write */
  guint      count;
  guint64    dropped;
  GHashTable *actors;     /* AtomrActor* -> handler id */
};

G_DEFINE_FINAL_TYPE (AtomrTraceRecorder, atomr_trace_recorder, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CAPACITY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
actor_gone (gpointer  data,
            GObject  *where_the_object_was)
{
  AtomrTraceRecorder *self = data;

  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->actors, where_the_object_was);
  g_mutex_unlock (&self->lock);
}

static void
atomr_trace_recorder_dispose (GObject *object)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);
  GHashTableIter iter;
  gpointer actor, id;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->actors);
  while (g_hash_table_iter_next (&iter, &actor, &id))
    {
      g_signal_handler_disconnect (actor, GPOINTER_TO_SIZE (id));
      g_object_weak_unref (actor, actor_gone, self);
      g_hash_table_iter_remove (&iter);
    }
  g_mutex_unlock (&self->lock);

  G_OBJECT_CLASS (atomr_trace_recorder_parent_class)->dispose (object);
}

static void
atomr_trace_recorder_finalize (GObject *object)
{
  AtomrTraceRecorder *self = ATOMR_TRACE_RECORDER (object);

  atomr_trace_recorder_clear (self);
  g_ptr_array_unref (self->ring);
  g_hash_table_unref (self->actors);
  g_mutex_clear (&self->lock);

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
      g_value_set_uint (value, self->capacity);
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
      self->capacity = MAX (1, g_value_get_uint (value));
      g_ptr_array_set_size (self->ring, self->capacity);
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
   * How many operations the ring keeps; older ones are dropped.
   */
  properties[PROP_CAPACITY] =
    g_param_spec_uint ("capacity", NULL, NULL, 1, G_MAXUINT, 65536,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_trace_recorder_init (AtomrTraceRecorder *self)
{
  g_mutex_init (&self->lock);
  self->ring = g_ptr_array_new ();   /* slots may be NULL: freed by hand */
  self->actors = g_hash_table_new (NULL, NULL);
}

/**
 * atomr_trace_recorder_new:
 * @capacity: how many operations to keep, at least 1
 *
 * Returns: (transfer full): a new recorder
 */
AtomrTraceRecorder *
atomr_trace_recorder_new (guint capacity)
{
  return g_object_new (ATOMR_TYPE_TRACE_RECORDER, "capacity", MAX (capacity, 1), NULL);
}

/**
 * atomr_trace_recorder_get_capacity:
 * @self: an #AtomrTraceRecorder
 *
 * Returns: the ring's size
 */
guint
atomr_trace_recorder_get_capacity (AtomrTraceRecorder *self)
{
  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  return self->capacity;
}

/**
 * atomr_trace_recorder_add_record:
 * @self: an #AtomrTraceRecorder
 * @info: an operation record
 *
 * Adds a record, dropping the oldest one when the ring is full.
 */
void
atomr_trace_recorder_add_record (AtomrTraceRecorder *self,
                                 AtomrLaunchInfo    *info)
{
  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));
  g_return_if_fail (info != NULL);

  g_mutex_lock (&self->lock);
  if (self->count == self->capacity)
    self->dropped++;
  else
    self->count++;
  if (g_ptr_array_index (self->ring, self->head))
    atomr_launch_info_unref (g_ptr_array_index (self->ring, self->head));
  g_ptr_array_index (self->ring, self->head) = atomr_launch_info_ref (info);
  self->head = (self->head + 1) % self->capacity;
  g_mutex_unlock (&self->lock);
}

static void
on_after_complete (AtomrActor      *actor,
                   AtomrLaunchInfo *info,
                   gpointer         user_data)
{
  atomr_trace_recorder_add_record (user_data, info);
}

/**
 * atomr_trace_recorder_add_actor:
 * @self: an #AtomrTraceRecorder
 * @actor: an actor to record
 *
 * Records every operation @actor completes from now on.  The recorder
 * holds no reference on the actor.
 */
void
atomr_trace_recorder_add_actor (AtomrTraceRecorder *self,
                                AtomrActor         *actor)
{
  gulong id;

  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->actors, actor))
    {
      id = g_signal_connect (actor, "after-complete", G_CALLBACK (on_after_complete), self);
      g_object_weak_ref (G_OBJECT (actor), actor_gone, self);
      g_hash_table_insert (self->actors, actor, GSIZE_TO_POINTER (id));
    }
  g_mutex_unlock (&self->lock);
}

/**
 * atomr_trace_recorder_remove_actor:
 * @self: an #AtomrTraceRecorder
 * @actor: an actor being recorded
 *
 * Stops recording @actor.
 */
void
atomr_trace_recorder_remove_actor (AtomrTraceRecorder *self,
                                   AtomrActor         *actor)
{
  gpointer id;

  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));

  g_mutex_lock (&self->lock);
  if (g_hash_table_lookup_extended (self->actors, actor, NULL, &id))
    {
      g_signal_handler_disconnect (actor, GPOINTER_TO_SIZE (id));
      g_object_weak_unref (G_OBJECT (actor), actor_gone, self);
      g_hash_table_remove (self->actors, actor);
    }
  g_mutex_unlock (&self->lock);
}

/**
 * atomr_trace_recorder_get_records:
 * @self: an #AtomrTraceRecorder
 *
 * Returns: (transfer container) (element-type AtomrLaunchInfo): the kept
 *   records, oldest first
 */
GPtrArray *
atomr_trace_recorder_get_records (AtomrTraceRecorder *self)
{
  GPtrArray *out;
  guint start;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), NULL);

  g_mutex_lock (&self->lock);
  out = g_ptr_array_new_full (self->count, (GDestroyNotify) atomr_launch_info_unref);
  start = (self->head + self->capacity - self->count) % self->capacity;
  for (guint i = 0; i < self->count; i++)
    g_ptr_array_add (out, atomr_launch_info_ref (g_ptr_array_index (self->ring, (start + i) % self->capacity)));
  g_mutex_unlock (&self->lock);
  return out;
}

/**
 * atomr_trace_recorder_get_n_records:
 * @self: an #AtomrTraceRecorder
 *
 * Returns: how many records are kept
 */
guint
atomr_trace_recorder_get_n_records (AtomrTraceRecorder *self)
{
  guint n;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  g_mutex_lock (&self->lock);
  n = self->count;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * atomr_trace_recorder_get_n_dropped:
 * @self: an #AtomrTraceRecorder
 *
 * Returns: how many records fell out of the full ring
 */
guint64
atomr_trace_recorder_get_n_dropped (AtomrTraceRecorder *self)
{
  guint64 n;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), 0);
  g_mutex_lock (&self->lock);
  n = self->dropped;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * atomr_trace_recorder_clear:
 * @self: an #AtomrTraceRecorder
 *
 * Forgets every record.
 */
void
atomr_trace_recorder_clear (AtomrTraceRecorder *self)
{
  g_return_if_fail (ATOMR_IS_TRACE_RECORDER (self));

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->capacity; i++)
    if (g_ptr_array_index (self->ring, i))
      {
        atomr_launch_info_unref (g_ptr_array_index (self->ring, i));
        g_ptr_array_index (self->ring, i) = NULL;
      }
  self->head = self->count = 0;
  self->dropped = 0;
  g_mutex_unlock (&self->lock);
}

static gint
track_of (AtomrLaunchInfo *info)
{
  return (gint) atomr_launch_info_get_stream_id (info);
}

/**
 * atomr_trace_recorder_to_json:
 * @self: an #AtomrTraceRecorder
 *
 * Serializes the records in the Chrome trace event format: an object with
 * `traceEvents` (metadata events naming each GPU and each actor stream,
 * then one `"ph": "X"` event per operation, timestamps in monotonic
 * microseconds) and `displayTimeUnit`.
 *
 * Returns: (transfer full): the JSON text
 */
gchar *
atomr_trace_recorder_to_json (AtomrTraceRecorder *self)
{
  g_autoptr(GPtrArray) records = atomr_trace_recorder_get_records (self);
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GHashTable) seen_tracks = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GHashTable) seen_pids = g_hash_table_new (NULL, NULL);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "displayTimeUnit");
  json_builder_add_string_value (b, "ns");
  json_builder_set_member_name (b, "otherData");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "producer");
  json_builder_add_string_value (b, "atomr-accel " PACKAGE_VERSION);
  json_builder_end_object (b);
  json_builder_set_member_name (b, "traceEvents");
  json_builder_begin_array (b);

  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      gint pid = atomr_launch_info_get_device_ordinal (info);
      gint tid = track_of (info);
      gchar *key = g_strdup_printf ("%d/%d", pid, tid);

      if (!g_hash_table_contains (seen_pids, GINT_TO_POINTER (pid + 1)))
        {
          g_autofree gchar *pname = pid >= 0 ? g_strdup_printf ("GPU %d", pid) : g_strdup ("Host");
          g_hash_table_add (seen_pids, GINT_TO_POINTER (pid + 1));
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "ph"); json_builder_add_string_value (b, "M");
          json_builder_set_member_name (b, "name"); json_builder_add_string_value (b, "process_name");
          json_builder_set_member_name (b, "pid"); json_builder_add_int_value (b, pid);
          json_builder_set_member_name (b, "args");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "name"); json_builder_add_string_value (b, pname);
          json_builder_end_object (b);
          json_builder_end_object (b);
        }
      if (!g_hash_table_contains (seen_tracks, key))
        {
          g_autofree gchar *tname = g_strdup_printf ("%s · stream %d",
                                                     atomr_launch_info_get_actor_name (info), tid);
          g_hash_table_add (seen_tracks, key);
          g_ptr_array_add (keys, key);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "ph"); json_builder_add_string_value (b, "M");
          json_builder_set_member_name (b, "name"); json_builder_add_string_value (b, "thread_name");
          json_builder_set_member_name (b, "pid"); json_builder_add_int_value (b, pid);
          json_builder_set_member_name (b, "tid"); json_builder_add_int_value (b, tid);
          json_builder_set_member_name (b, "args");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "name"); json_builder_add_string_value (b, tname);
          json_builder_end_object (b);
          json_builder_end_object (b);
        }
      else
        g_free (key);
    }

  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      gint64 submit = atomr_launch_info_get_submit_time (info);
      gint64 enq = atomr_launch_info_get_enqueue_time (info);
      gint64 done = atomr_launch_info_get_complete_time (info);
      gint64 start = enq ? enq : submit;
      const GError *error = atomr_launch_info_get_error (info);
      guint g[3], bl[3], shm;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ph"); json_builder_add_string_value (b, "X");
      json_builder_set_member_name (b, "name");
      json_builder_add_string_value (b, atomr_launch_info_get_operation (info));
      json_builder_set_member_name (b, "cat");
      json_builder_add_string_value (b, atomr_launch_info_get_library (info));
      json_builder_set_member_name (b, "pid");
      json_builder_add_int_value (b, atomr_launch_info_get_device_ordinal (info));
      json_builder_set_member_name (b, "tid");
      json_builder_add_int_value (b, track_of (info));
      json_builder_set_member_name (b, "ts");
      json_builder_add_int_value (b, start);
      json_builder_set_member_name (b, "dur");
      json_builder_add_int_value (b, done > start ? done - start : 0);
      json_builder_set_member_name (b, "args");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "actor");
      json_builder_add_string_value (b, atomr_launch_info_get_actor_name (info));
      json_builder_set_member_name (b, "sequence");
      json_builder_add_int_value (b, (gint64) atomr_launch_info_get_sequence (info));
      json_builder_set_member_name (b, "generation");
      json_builder_add_int_value (b, atomr_launch_info_get_generation (info));
      json_builder_set_member_name (b, "submit_us");
      json_builder_add_int_value (b, submit);
      if (atomr_launch_info_get_gpu_duration_ms (info) >= 0)
        {
          json_builder_set_member_name (b, "gpu_ms");
          json_builder_add_double_value (b, atomr_launch_info_get_gpu_duration_ms (info));
        }
      if (atomr_launch_info_get_geometry (info, &g[0], &g[1], &g[2], &bl[0], &bl[1], &bl[2], &shm))
        {
          json_builder_set_member_name (b, "grid");
          json_builder_begin_array (b);
          for (guint k = 0; k < 3; k++) json_builder_add_int_value (b, g[k]);
          json_builder_end_array (b);
          json_builder_set_member_name (b, "block");
          json_builder_begin_array (b);
          for (guint k = 0; k < 3; k++) json_builder_add_int_value (b, bl[k]);
          json_builder_end_array (b);
          json_builder_set_member_name (b, "shared_mem");
          json_builder_add_int_value (b, shm);
        }
      if (atomr_launch_info_get_detail (info))
        {
          json_builder_set_member_name (b, "detail");
          json_builder_add_string_value (b, atomr_launch_info_get_detail (info));
        }
      if (error)
        {
          json_builder_set_member_name (b, "error");
          json_builder_add_string_value (b, error->message);
          json_builder_set_member_name (b, "error_domain");
          json_builder_add_string_value (b, g_quark_to_string (error->domain));
          json_builder_set_member_name (b, "error_code");
          json_builder_add_int_value (b, error->code);
        }
      json_builder_end_object (b);
      json_builder_end_object (b);
    }

  json_builder_end_array (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/**
 * atomr_trace_recorder_save:
 * @self: an #AtomrTraceRecorder
 * @path: (type filename): where to write the trace
 * @error: return location for a #GError
 *
 * Writes atomr_trace_recorder_to_json() to @path atomically.
 *
 * Returns: %TRUE on success
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

static gint64
member_int (JsonObject  *obj,
            const gchar *name,
            gint64       fallback)
{
  JsonNode *node = json_object_get_member (obj, name);
  if (node == NULL || json_node_get_value_type (node) == G_TYPE_STRING ||
      JSON_NODE_TYPE (node) != JSON_NODE_VALUE)
    return fallback;
  if (json_node_get_value_type (node) == G_TYPE_DOUBLE)
    return (gint64) json_node_get_double (node);
  return json_node_get_int (node);
}

static const gchar *
member_string (JsonObject  *obj,
               const gchar *name)
{
  JsonNode *node = json_object_get_member (obj, name);
  if (node == NULL || JSON_NODE_TYPE (node) != JSON_NODE_VALUE ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/**
 * atomr_trace_recorder_load_json:
 * @self: an #AtomrTraceRecorder
 * @json: Chrome trace JSON text
 * @length: its length, or -1 if nul-terminated
 * @error: return location for a #GError
 *
 * Replaces the records with the complete (`"ph": "X"`) events of a Chrome
 * trace, such as one written by atomr_trace_recorder_save().  Events of
 * other phases are ignored.  On error the records are left as they were.
 *
 * Returns: %TRUE on success
 */
gboolean
atomr_trace_recorder_load_json (AtomrTraceRecorder  *self,
                                const gchar         *json,
                                gssize               length,
                                GError             **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GPtrArray) infos = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref);
  g_autoptr(GHashTable) names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
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
    events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
  else
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Not a Chrome trace: no \"traceEvents\" array at the top level");
      return FALSE;
    }

  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonNode *node = json_array_get_element (events, i);
      JsonObject *ev, *args = NULL;
      const gchar *ph, *name, *cat, *actor, *err;
      AtomrLaunchInfo *info;
      gint64 ts, dur;
      g_autofree gchar *fallback_actor = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      ev = json_node_get_object (node);
      ph = member_string (ev, "ph");
      if (g_strcmp0 (ph, "M") == 0 && g_strcmp0 (member_string (ev, "name"), "thread_name") == 0 &&
          json_object_has_member (ev, "args") && JSON_NODE_HOLDS_OBJECT (json_object_get_member (ev, "args")))
        {
          const gchar *tname = member_string (json_object_get_object_member (ev, "args"), "name");
          if (tname)
            g_hash_table_insert (names, g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                                         member_int (ev, "pid", 0), member_int (ev, "tid", 0)),
                                 g_strdup (tname));
          continue;
        }
      if (g_strcmp0 (ph, "X") != 0)
        continue;
      if (json_object_has_member (ev, "args") && JSON_NODE_HOLDS_OBJECT (json_object_get_member (ev, "args")))
        args = json_object_get_object_member (ev, "args");

      name = member_string (ev, "name");
      cat = member_string (ev, "cat");
      ts = member_int (ev, "ts", -1);
      dur = member_int (ev, "dur", 0);
      if (name == NULL || ts < 0 || dur < 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Trace event %u is a complete event without a name, a timestamp "
                       "or a valid duration", i);
          return FALSE;
        }
      actor = args ? member_string (args, "actor") : NULL;
      if (actor == NULL)
        {
          const gchar *tname;
          g_autofree gchar *k = g_strdup_printf ("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                                 member_int (ev, "pid", 0), member_int (ev, "tid", 0));
          tname = g_hash_table_lookup (names, k);
          fallback_actor = tname ? g_strdup (tname)
                                 : g_strdup_printf ("track %" G_GINT64_FORMAT, member_int (ev, "tid", 0));
          actor = fallback_actor;
        }

      info = atomr_launch_info_new (actor, cat ? cat : "", name);
      atomr_launch_info_set_device_ordinal (info, (gint) member_int (ev, "pid", -1));
      atomr_launch_info_set_stream_id (info, (guint) member_int (ev, "tid", 0));
      atomr_launch_info_set_times (info, args ? member_int (args, "submit_us", ts) : ts, ts, ts + dur);
      if (args)
        {
          JsonNode *gpu = json_object_get_member (args, "gpu_ms");
          atomr_launch_info_set_sequence (info, (guint64) member_int (args, "sequence", 0));
          atomr_launch_info_set_generation (info, (guint) member_int (args, "generation", 0));
          if (gpu && JSON_NODE_TYPE (gpu) == JSON_NODE_VALUE &&
              json_node_get_value_type (gpu) != G_TYPE_STRING)
            atomr_launch_info_set_gpu_duration_ms (info, json_node_get_double (gpu));
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
        }
      g_ptr_array_add (infos, info);
    }

  atomr_trace_recorder_clear (self);
  for (guint i = 0; i < infos->len; i++)
    atomr_trace_recorder_add_record (self, g_ptr_array_index (infos, i));
  return TRUE;
}

/**
 * atomr_trace_recorder_load:
 * @self: an #AtomrTraceRecorder
 * @path: (type filename): a Chrome trace JSON file
 * @error: return location for a #GError
 *
 * Reads a trace file with atomr_trace_recorder_load_json().
 *
 * Returns: %TRUE on success
 */
gboolean
atomr_trace_recorder_load (AtomrTraceRecorder  *self,
                           const gchar         *path,
                           GError             **error)
{
  g_autofree gchar *contents = NULL;
  gsize length = 0;

  g_return_val_if_fail (ATOMR_IS_TRACE_RECORDER (self), FALSE);
  if (!g_file_get_contents (path, &contents, &length, error))
    return FALSE;
  return atomr_trace_recorder_load_json (self, contents, (gssize) length, error);
}
