/* test-gpu-trace.c — GPU timing and the trace of a pipeline on a real GPU
 *
 * Skips without a device.  Two actors with timing on: one fills a buffer,
 * the other copies it (so each copy waits on the GPU for a fill), four
 * rounds in flight without replies, then a barrier each.  The export must
 * keep the contract (trace-checker.c): one gpu slice per operation, slices
 * on a stream never overlapping, a flow per fill → copy wait; and each
 * operation's GPU interval must lie within its host life (submitted …
 * replied) give or take the clock calibration.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "trace-checker.h"

/* Calibration puts a GPU time on the host clock within a few µs; allow a
 * generous margin (this is a consistency check, not a timing claim). */
#define SLACK_NS G_GINT64_CONSTANT (1000000)

static void
count_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error));
  g_assert_no_error (error);
  (*(gint *) user_data)++;
}

static void
test_pipeline_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrTraceRecorder) recorder = NULL;
  g_autoptr(AtomrCopyActor) producer = NULL, consumer = NULL;
  g_autoptr(AtomrBuffer) a = NULL, b = NULL;
  g_autoptr(GPtrArray) records = NULL;
  g_autofree gchar *json = NULL;
  TraceCheckCounts counts;
  const guint rounds = 4;
  gint done = 0;

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return;
    }

  recorder = atomr_trace_recorder_new (256);
  producer = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  consumer = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_actor_set_timing (ATOMR_ACTOR (producer), TRUE);
  atomr_actor_set_timing (ATOMR_ACTOR (consumer), TRUE);
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (producer));
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (consumer));
  /* 64 MiB: long enough on the GPU (~20 µs per fill on an H100) for the
   * slices to be wider than the calibration error. */
  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16u << 20, &error);
  g_assert_no_error (error);
  b = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16u << 20, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < rounds; i++)
    {
      atomr_actor_fill_async (ATOMR_ACTOR (producer), a, i, NULL, NULL, NULL);
      atomr_actor_copy_async (ATOMR_ACTOR (consumer), b, a, NULL, NULL, NULL);
    }
  atomr_actor_barrier_async (ATOMR_ACTOR (producer), NULL, count_done, &done);
  atomr_actor_barrier_async (ATOMR_ACTOR (consumer), NULL, count_done, &done);
  while (done < 2)
    g_main_context_iteration (NULL, TRUE);

  records = atomr_trace_recorder_get_records (recorder);
  g_assert_cmpuint (records->len, ==, 2 * rounds + 2);   /* the barriers too */
  for (guint i = 0; i < records->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (records, i);
      const gchar *op = atomr_launch_info_get_operation (info);
      gint64 start, end;

      g_assert_null (atomr_launch_info_get_error (info));
      if (g_str_equal (op, "barrier"))
        continue;
      g_assert_true (atomr_launch_info_get_gpu_times (info, &start, &end));
      g_test_message ("%s seq %" G_GUINT64_FORMAT ": gpu %.3f µs after submission, %.3f µs long",
                      op, atomr_launch_info_get_sequence (info),
                      (start - atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED)) / 1e3,
                      (end - start) / 1e3);
      g_assert_cmpint (end, >, start);
      g_assert_cmpint (start + SLACK_NS, >=, atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_SUBMITTED));
      g_assert_cmpint (end, <=, atomr_launch_info_get_timestamp (info, ATOMR_LAUNCH_COMPLETED) + SLACK_NS);
      g_assert_cmpfloat (atomr_launch_info_get_gpu_duration_ms (info), >, 0.0);
    }

  json = atomr_trace_recorder_to_json (recorder);
  if (!trace_check (json, &counts, &error))
    g_test_message ("%s", json);
  g_assert_no_error (error);
  g_assert_cmpuint (counts.n_gpu_slices, >=, 2 * rounds);
  g_assert_cmpuint (counts.n_async_ops, ==, 2 * rounds + 2);
  /* Each copy read what a fill wrote: a flow per round at least. */
  g_assert_cmpuint (counts.n_flows, >=, rounds);
  g_test_message ("%u gpu slices, %u flows, %u lanes", counts.n_gpu_slices, counts.n_flows, counts.n_lanes);

  if (g_getenv ("ATOMR_TRACE_OUT"))
    {
      g_assert_true (atomr_trace_recorder_save (recorder, g_getenv ("ATOMR_TRACE_OUT"), &error));
      g_assert_no_error (error);
    }
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gpu/trace/pipeline", test_pipeline_trace);
  return g_test_run ();
}
