/* test-trace.c — the trace recorder and its export contract (no GPU)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "trace-checker.h"

#define NS(us) ((gint64) (us) * 1000)
#define BASE   G_GINT64_CONSTANT (5000000000000)   /* an arbitrary clock origin, ns */

static AtomrLaunchInfo *
make_op (const gchar *actor,
         const gchar *op,
         guint64      seq,
         guint        stream,
         gint64       submit,
         gint64       enqueue,
         gint64       gpu_start,
         gint64       gpu_end,
         gint64       complete,
         gint64       replied)
{
  AtomrLaunchInfo *info = atomr_launch_info_new (actor, "cuda", op);

  atomr_launch_info_set_sequence (info, seq);
  atomr_launch_info_set_device_ordinal (info, 0);
  atomr_launch_info_set_stream_id (info, stream);
  atomr_launch_info_set_generation (info, 1);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, BASE + submit);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, BASE + enqueue);
  if (gpu_start)
    {
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_START, BASE + gpu_start);
      atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_GPU_END, BASE + gpu_end);
    }
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, BASE + complete);
  atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_REPLIED, BASE + replied);
  atomr_launch_info_set_mailbox_depth (info, (gint) (seq % 5));
  return info;
}

/* Two actors, pipelined: host intervals overlap (four requests in flight
 * on each), GPU work is serial per stream, and the consumer waits on the
 * producer's writes.  The version-1 export drew each operation from
 * enqueue to completion on the stream's lane: overlapping, unnested. */
static AtomrTraceRecorder *
pipeline_recorder (void)
{
  AtomrTraceRecorder *recorder = atomr_trace_recorder_new (100);

  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(AtomrLaunchInfo) produce = NULL, consume = NULL;
      gint64 t = i * 1000;

      /* producer: submitted together, GPU runs them back to back */
      produce = make_op ("producer", "fill", 1 + 2 * i, 3,
                         NS (1) + i, NS (2) + i,
                         NS (10) + t + 123, NS (10) + t + 900,
                         NS (30) + t, NS (31) + t);
      consume = make_op ("consumer", "gemm", 2 + 2 * i, 4,
                         NS (1) + i + 500, NS (2) + i + 500,
                         NS (10) + t + 950, NS (10) + t + 1700,
                         NS (40) + t, NS (41) + t);
      atomr_launch_info_add_dependency (consume, 1 + 2 * i);
      atomr_launch_info_set_geometry (consume, 8, 1, 1, 256, 1, 1, 0);
      atomr_trace_recorder_add_record (recorder, produce);
      atomr_trace_recorder_add_record (recorder, consume);
    }
  return recorder;
}

static JsonObject *
parse (JsonParser  *parser,
       const gchar *json)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static void
test_contract_pipeline (void)
{
  g_autoptr(AtomrTraceRecorder) recorder = pipeline_recorder ();
  g_autofree gchar *json = atomr_trace_recorder_to_json (recorder);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  TraceCheckCounts counts;
  JsonArray *events;
  gboolean saw_fraction = FALSE;

  g_assert_true (trace_check (json, &counts, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (counts.n_gpu_slices, ==, 8);
  g_assert_cmpuint (counts.n_async_ops, ==, 8);
  g_assert_cmpuint (counts.n_flows, ==, 4);
  g_assert_cmpuint (counts.n_lanes, ==, 4);    /* two host lanes, two streams */
  g_assert_cmpuint (counts.n_counters, ==, 8);  /* a mailbox depth per operation */

  events = json_object_get_array_member (parse (parser, json), "traceEvents");
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *ev = json_array_get_object_element (events, i);
      const gchar *ph = json_object_get_string_member (ev, "ph");

      if (g_str_equal (ph, "X"))
        {
          JsonObject *args = json_object_get_object_member (ev, "args");
          gdouble ts = json_object_get_double_member (ev, "ts");
          /* Nanosecond precision: the 123 ns of the first fill survive. */
          if (fabs (ts - 9.123) < 1e-9)
            saw_fraction = TRUE;
          g_assert_cmpstr (json_object_get_string_member (ev, "cat"), ==, "gpu");
          g_assert_true (json_object_has_member (args, "seq"));
          if (g_str_equal (json_object_get_string_member (ev, "name"), "gemm"))
            g_assert_cmpint (json_array_get_length (json_object_get_array_member (args, "grid")), ==, 3);
        }
      if (g_str_equal (ph, "M") && g_str_equal (json_object_get_string_member (ev, "name"), "thread_name"))
        {
          const gchar *name = json_object_get_string_member (json_object_get_object_member (ev, "args"), "name");
          g_assert_true (g_str_equal (name, "GPU 0 · stream 3 (producer)") ||
                         g_str_equal (name, "GPU 0 · stream 4 (consumer)") ||
                         g_str_equal (name, "host · producer") ||
                         g_str_equal (name, "host · consumer"));
        }
    }
  /* ts is relative to the earliest moment (the first submission, at 1 µs). */
  g_assert_true (saw_fraction);
}

/* The checker itself must catch what the contract forbids. */
static void
test_checker_rejects (void)
{
  static const gchar *bad[] = {
    /* overlapping gpu slices on one lane */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":PID,\"tid\":7,\"args\":{\"name\":\"t\"}},"
    "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"a\",\"pid\":PID,\"tid\":7,\"ts\":1,\"dur\":5,"
    "\"args\":{\"seq\":1,\"actor\":\"x\",\"library\":\"l\",\"op\":\"a\",\"device\":0,\"generation\":1,\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"b\",\"pid\":PID,\"tid\":7,\"ts\":3,\"dur\":1,"
    "\"args\":{\"seq\":2,\"actor\":\"x\",\"library\":\"l\",\"op\":\"b\",\"device\":0,\"generation\":1,\"stream\":7}}]}",
    /* X slices that overlap without nesting */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":PID,\"tid\":7,\"args\":{\"name\":\"t\"}},"
    "{\"ph\":\"X\",\"name\":\"a\",\"pid\":PID,\"tid\":7,\"ts\":1,\"dur\":5},"
    "{\"ph\":\"X\",\"name\":\"b\",\"pid\":PID,\"tid\":7,\"ts\":3,\"dur\":5}]}",
    /* an async operation that never ends */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":PID,\"tid\":1,\"args\":{\"name\":\"t\"}},"
    "{\"ph\":\"b\",\"cat\":\"host\",\"id\":\"1\",\"name\":\"a\",\"pid\":PID,\"tid\":1,\"ts\":1}]}",
    /* a lane without a name */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"X\",\"name\":\"a\",\"pid\":PID,\"tid\":7,\"ts\":1,\"dur\":5}]}",
    /* a flow that binds to no slice */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":PID,\"tid\":7,\"args\":{\"name\":\"t\"}},"
    "{\"ph\":\"s\",\"cat\":\"dependency\",\"name\":\"dependency\",\"id\":\"d\",\"pid\":PID,\"tid\":7,\"ts\":1},"
    "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependency\",\"name\":\"dependency\",\"id\":\"d\",\"pid\":PID,\"tid\":7,\"ts\":2}]}",
    /* a counter whose value is not a number */
    "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":PID,\"tid\":0,\"args\":{\"name\":\"p\"}},"
    "{\"ph\":\"C\",\"name\":\"mailbox depth\",\"pid\":PID,\"ts\":1,\"args\":{\"a\":\"3\"}}]}",
    /* version 1 (no contract version) */
    "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[]}",
  };
  g_autofree gchar *pid = g_strdup_printf ("%d", (gint) getpid ());

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_auto(GStrv) parts = g_strsplit (bad[i], "PID", -1);
      g_autofree gchar *json = g_strjoinv (pid, parts);
      g_autoptr(GError) error = NULL;

      g_test_message ("bad trace %u", i);
      g_assert_false (trace_check (json, NULL, &error));
      g_assert_nonnull (error);
      g_test_message ("rejected: %s", error->message);
    }
}

static void
assert_same_record (AtomrLaunchInfo *x,
                    AtomrLaunchInfo *y)
{
  guint nx, ny;
  const guint64 *dx = atomr_launch_info_get_dependencies (x, &nx);
  const guint64 *dy = atomr_launch_info_get_dependencies (y, &ny);

  g_assert_cmpstr (atomr_launch_info_get_actor_name (x), ==, atomr_launch_info_get_actor_name (y));
  g_assert_cmpstr (atomr_launch_info_get_library (x), ==, atomr_launch_info_get_library (y));
  g_assert_cmpstr (atomr_launch_info_get_operation (x), ==, atomr_launch_info_get_operation (y));
  g_assert_cmpuint (atomr_launch_info_get_sequence (x), ==, atomr_launch_info_get_sequence (y));
  g_assert_cmpuint (atomr_launch_info_get_stream_id (x), ==, atomr_launch_info_get_stream_id (y));
  g_assert_cmpint (atomr_launch_info_get_device_ordinal (x), ==, atomr_launch_info_get_device_ordinal (y));
  for (guint e = 0; e < ATOMR_LAUNCH_N_EVENTS; e++)
    g_assert_cmpint (atomr_launch_info_get_timestamp (x, e), ==, atomr_launch_info_get_timestamp (y, e));
  g_assert_cmpint (atomr_launch_info_get_mailbox_depth (x), ==, atomr_launch_info_get_mailbox_depth (y));
  g_assert_cmpuint (nx, ==, ny);
  for (guint i = 0; i < nx; i++)
    g_assert_cmpuint (dx[i], ==, dy[i]);
  g_assert_true ((atomr_launch_info_get_error (x) == NULL) == (atomr_launch_info_get_error (y) == NULL));
}

static void
test_round_trip (void)
{
  g_autoptr(AtomrTraceRecorder) recorder = pipeline_recorder ();
  g_autoptr(AtomrTraceRecorder) loaded = atomr_trace_recorder_new (100);
  g_autoptr(GPtrArray) before = NULL, after = NULL;
  g_autofree gchar *json = NULL, *again = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrLaunchInfo) failed = make_op ("producer", "download", 99, 3, NS (50), 0, 0, 0, NS (51), NS (52));
  g_autoptr(GError) failure = g_error_new (ATOMR_ERROR, ATOMR_ERROR_STALE, "stale buffer");

  atomr_launch_info_set_timestamp (failed, ATOMR_LAUNCH_ENQUEUED, 0);
  atomr_launch_info_set_error (failed, failure);
  atomr_trace_recorder_add_record (recorder, failed);
  json = atomr_trace_recorder_to_json (recorder);
  g_assert_true (atomr_trace_recorder_load_json (loaded, json, -1, &error));
  g_assert_no_error (error);

  before = atomr_trace_recorder_get_records (recorder);
  after = atomr_trace_recorder_get_records (loaded);
  g_assert_cmpuint (after->len, ==, before->len);
  for (guint i = 0; i < before->len; i++)
    {
      AtomrLaunchInfo *x = g_ptr_array_index (before, i), *y = NULL;
      for (guint k = 0; k < after->len; k++)
        if (atomr_launch_info_get_sequence (g_ptr_array_index (after, k)) == atomr_launch_info_get_sequence (x))
          y = g_ptr_array_index (after, k);
      g_assert_nonnull (y);
      assert_same_record (x, y);
    }
  again = atomr_trace_recorder_to_json (loaded);
  g_assert_true (trace_check (again, NULL, &error));
  g_assert_no_error (error);
}

static void
test_load_foreign (void)
{
  g_autoptr(AtomrTraceRecorder) r = atomr_trace_recorder_new (10);
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(GError) error = NULL;
  const gchar *plain =
    "[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"worker\"}},"
    " {\"ph\":\"X\",\"name\":\"kernel\",\"pid\":1,\"tid\":2,\"ts\":10.5,\"dur\":2.25},"
    " {\"ph\":\"B\",\"name\":\"outer\",\"pid\":1,\"tid\":3,\"ts\":20},"
    " {\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":3,\"ts\":21},"
    " {\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":22},"
    " {\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":30}]";

  g_assert_true (atomr_trace_recorder_load_json (r, plain, -1, &error));
  g_assert_no_error (error);
  records = atomr_trace_recorder_get_records (r);
  g_assert_cmpuint (records->len, ==, 3);
  g_assert_cmpstr (atomr_launch_info_get_actor_name (g_ptr_array_index (records, 0)), ==, "worker");
  g_assert_cmpint (atomr_launch_info_get_timestamp (g_ptr_array_index (records, 0), ATOMR_LAUNCH_ENQUEUED), ==, 10500);
  g_assert_cmpint (atomr_launch_info_get_timestamp (g_ptr_array_index (records, 0), ATOMR_LAUNCH_COMPLETED), ==, 12750);
  /* The inner slice closes first. */
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 1)), ==, "inner");
  g_assert_cmpstr (atomr_launch_info_get_operation (g_ptr_array_index (records, 2)), ==, "outer");
  g_assert_cmpint (atomr_launch_info_get_timestamp (g_ptr_array_index (records, 2), ATOMR_LAUNCH_COMPLETED), ==, 30000);

  /* Broken input: a clear error, the records kept. */
  g_assert_false (atomr_trace_recorder_load_json (r, "[{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":1}]", -1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "never begun"));
  g_clear_error (&error);
  g_assert_false (atomr_trace_recorder_load_json (r, "[{\"ph\":\"X\",\"name\":\"k\",\"ts\":\"soon\"}]", -1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (r), ==, 3);
}

/* Names are the application's bytes; the export must stay UTF-8 JSON. */
static void
test_non_utf8_names (void)
{
  g_autoptr(AtomrTraceRecorder) r = atomr_trace_recorder_new (10);
  g_autoptr(AtomrLaunchInfo) info = make_op ("act\xff\xfeor", "op\xc3", 1, 1, NS (1), NS (2), NS (3), NS (4), NS (5), NS (6));
  g_autoptr(GError) error = NULL;
  g_autofree gchar *json = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();

  atomr_launch_info_set_detail (info, "bad \x80 detail");
  atomr_trace_recorder_add_record (r, info);
  json = atomr_trace_recorder_to_json (r);
  g_assert_true (g_utf8_validate (json, -1, NULL));
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  g_assert_true (trace_check (json, NULL, &error));
  g_assert_no_error (error);
}

/* The ring grows with the records: a huge capacity allocates nothing up
 * front (version 1 allocated capacity × 8 bytes at construction; with
 * G_MAXUINT that is 32 GiB, which aborts). */
static void
test_lazy_ring (void)
{
  g_autoptr(AtomrTraceRecorder) r = atomr_trace_recorder_new (G_MAXUINT);
  g_autoptr(AtomrTraceRecorder) small = atomr_trace_recorder_new (2);
  g_autoptr(GPtrArray) records = NULL;

  g_assert_cmpuint (atomr_trace_recorder_get_capacity (r), ==, G_MAXUINT);
  for (guint i = 1; i <= 3; i++)
    {
      g_autoptr(AtomrLaunchInfo) info = make_op ("a", "op", i, 1, NS (i), NS (i), 0, 0, NS (i + 1), NS (i + 1));
      atomr_trace_recorder_add_record (r, info);
      atomr_trace_recorder_add_record (small, info);
    }
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (r), ==, 3);
  g_assert_cmpuint (atomr_trace_recorder_get_n_dropped (r), ==, 0);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (small), ==, 2);
  g_assert_cmpuint (atomr_trace_recorder_get_n_dropped (small), ==, 1);
  records = atomr_trace_recorder_get_records (small);
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 0)), ==, 2);
  g_assert_cmpuint (atomr_launch_info_get_sequence (g_ptr_array_index (records, 1)), ==, 3);
  atomr_trace_recorder_clear (small);
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (small), ==, 0);
}

/* Recorders made and dropped on this thread while an actor completes and
 * emits on its own thread.  Version 1 handed its signal handler a bare
 * recorder pointer and a weak-ref callback: a handler already running, or
 * an actor finalized, on the actor's thread then touched a freed recorder
 * (valgrind: invalid read in atomr_trace_recorder_add_record).  Now every
 * connection holds the recorder's refcounted core. */
typedef struct
{
  GMainContext *context;
  gint          stop;
} Worker;

static gpointer
worker_main (gpointer data)
{
  Worker *w = data;

  g_main_context_push_thread_default (w->context);
  while (!g_atomic_int_get (&w->stop))
    g_main_context_iteration (w->context, FALSE);
  while (g_main_context_iteration (w->context, FALSE))
    ;
  g_main_context_pop_thread_default (w->context);
  return NULL;
}

static void
count_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_assert_true (atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, NULL));
  g_atomic_int_inc ((gint *) user_data);
}

static void
test_recorder_threads (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(GError) error = NULL;
  Worker w = { g_main_context_new (), 0 };
  AtomrActor *actor;
  g_autoptr(AtomrBuffer) buffer = NULL;
  GThread *thread;
  gint done = 0;
  guint rounds = g_test_slow () ? 2000 : 200;

  atomr_device_set_host_autocomplete (device, TRUE);
  actor = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, w.context, &error);
  g_assert_no_error (error);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_assert_no_error (error);
  thread = g_thread_new ("actor", worker_main, &w);

  for (guint i = 0; i < rounds; i++)
    {
      AtomrTraceRecorder *r = atomr_trace_recorder_new (8);
      atomr_trace_recorder_add_actor (r, actor);
      for (guint k = 0; k < 4; k++)
        atomr_actor_fill_async (actor, buffer, k, NULL, NULL, NULL);
      if (i % 3 == 0)
        atomr_trace_recorder_remove_actor (r, actor);
      g_object_unref (r);
    }
  atomr_actor_barrier_async (actor, NULL, count_done, &done);
  while (g_atomic_int_get (&done) == 0)
    g_main_context_iteration (NULL, TRUE);

  g_atomic_int_set (&w.stop, 1);
  g_main_context_wakeup (w.context);
  g_thread_join (thread);
  g_clear_object (&buffer);
  g_object_unref (actor);
  g_main_context_unref (w.context);
}

/* Real actors on the host test device: what they record exports within
 * the contract (host lifecycle only: the host device has no GPU clock). */
static void
test_contract_actors (void)
{
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (64);
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) a = NULL, b = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autofree gchar *json = NULL;
  TraceCheckCounts counts;
  gint done = 0;
  guint n_deps = 0;

  atomr_device_set_host_autocomplete (device, TRUE);
  a = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  b = atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error);
  g_assert_no_error (error);
  atomr_actor_set_timing (a, TRUE);
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_assert_no_error (error);
  atomr_trace_recorder_add_actor (recorder, a);
  atomr_trace_recorder_add_actor (recorder, b);

  for (guint i = 0; i < 6; i++)
    atomr_actor_fill_async (i % 2 ? b : a, buffer, i, NULL, NULL, NULL);
  atomr_actor_barrier_async (a, NULL, count_done, &done);
  atomr_actor_barrier_async (b, NULL, count_done, &done);
  while (g_atomic_int_get (&done) < 2)
    g_main_context_iteration (NULL, TRUE);

  records = atomr_trace_recorder_get_records (recorder);
  g_assert_cmpuint (records->len, ==, 8);
  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      guint n;
      gint64 submit = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED);
      gint64 enqueued = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_ENQUEUED);
      gint64 completed = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_COMPLETED);
      gint64 replied = atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_REPLIED);

      g_assert_cmpint (submit, >, 0);
      g_assert_cmpint (enqueued, >=, submit);
      g_assert_cmpint (completed, >=, enqueued);
      g_assert_cmpint (replied, >=, completed);
      g_assert_false (atomr_launch_info_get_gpu_times (info, NULL, NULL));
      g_assert_cmpint (atomr_launch_info_get_mailbox_depth (info), >=, 0);
      atomr_launch_info_get_dependencies (info, &n);
      n_deps += n;
    }
  /* Each fill after the first writes what the other actor wrote before. */
  g_assert_cmpuint (n_deps, >=, 5);

  json = atomr_trace_recorder_to_json (recorder);
  g_assert_true (trace_check (json, &counts, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (counts.n_async_ops, ==, 8);
  g_assert_cmpuint (counts.n_gpu_slices, ==, 0);
  atomr_trace_recorder_remove_actor (recorder, a);
  atomr_trace_recorder_remove_actor (recorder, b);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/trace/contract/pipeline", test_contract_pipeline);
  g_test_add_func ("/trace/contract/actors", test_contract_actors);
  g_test_add_func ("/trace/contract/checker-rejects", test_checker_rejects);
  g_test_add_func ("/trace/load/round-trip", test_round_trip);
  g_test_add_func ("/trace/load/foreign", test_load_foreign);
  g_test_add_func ("/trace/recorder/non-utf8-names", test_non_utf8_names);
  g_test_add_func ("/trace/recorder/lazy-ring", test_lazy_ring);
  g_test_add_func ("/trace/recorder/threads", test_recorder_threads);
  return g_test_run ();
}
