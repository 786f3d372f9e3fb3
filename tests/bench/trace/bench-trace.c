/* bench-trace.c — what tracing costs a pipeline, against raw CUDA, in one run
 *
 * Pipelined 1 KiB fills (cuMemsetD32Async), 64 in flight.  Raw baselines:
 * one plain event per fill, and a timing event before and after each fill
 * (what GPU timing costs by itself).  Actor rows: fills without replies
 * and a barrier every 32 (the pipeline pattern), with timing off and no
 * recorder; timing off and a recorder attached (launch infos and signals,
 * no GPU events); timing on with a recorder (GPU start/end per operation).
 * Then the cost of exporting the recorded operations to JSON.
 * Ratios are throughput over the raw one-event-per-fill loop measured in
 * the same run.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"

#define N_OPS   30000
#define WINDOW  64
#define BATCH   32
#define N_ELEMS 256

static gdouble
raw_throughput (AtomrDevice *device,
                CUdeviceptr  ptr,
                gboolean     timed)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent ends[WINDOW], starts[WINDOW];
  gdouble t0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventCreate (&ends[i], timed ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
      cu->cuEventCreate (&starts[i], CU_EVENT_DEFAULT);
    }
  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      guint k = i % WINDOW;
      if (i >= WINDOW)
        {
          cu->cuEventSynchronize (ends[k]);
          if (timed)
            {
              float ms;
              cu->cuEventElapsedTime (&ms, starts[k], ends[k]);
            }
        }
      if (timed)
        cu->cuEventRecord (starts[k], stream);
      cu->cuMemsetD32Async (ptr, i, N_ELEMS, stream);
      cu->cuEventRecord (ends[k], stream);
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    {
      cu->cuEventDestroy (ends[i]);
      cu->cuEventDestroy (starts[i]);
    }
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_OPS / (t0 / 1e6);
}

typedef struct
{
  guint done;   /* barriers answered */
} Window;

static void
barrier_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Window *w = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_actor_barrier_finish (ATOMR_ACTOR (source), result, &error))
    g_error ("barrier: %s", error->message);
  w->done++;
}

static gdouble
actor_throughput (AtomrDevice        *device,
                  AtomrBuffer        *buffer,
                  gboolean            timing,
                  AtomrTraceRecorder *recorder)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCopyActor) actor = atomr_copy_actor_new (device, &error);
  Window w = { 0 };
  guint barriers = 0;
  gdouble t0;

  g_assert_no_error (error);
  atomr_actor_set_timing (ATOMR_ACTOR (actor), timing);
  if (recorder)
    atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (actor));

  t0 = bench_now_us ();
  for (guint i = 0; i < N_OPS; i++)
    {
      atomr_actor_fill_async (ATOMR_ACTOR (actor), buffer, i, NULL, NULL, NULL);
      if ((i + 1) % BATCH == 0)
        {
          atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, barrier_done, &w);
          barriers++;
          while (barriers - w.done > WINDOW / BATCH)
            g_main_context_iteration (NULL, TRUE);
        }
    }
  atomr_actor_barrier_async (ATOMR_ACTOR (actor), NULL, barrier_done, &w);
  barriers++;
  while (w.done < barriers)
    g_main_context_iteration (NULL, TRUE);
  t0 = bench_now_us () - t0;
  if (recorder)
    atomr_trace_recorder_remove_actor (recorder, ATOMR_ACTOR (actor));
  return N_OPS / (t0 / 1e6);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrTraceRecorder) recorder = NULL;
  gdouble raw, raw_timed, off, off_rec, on_rec;

  if (device == NULL)
    {
      printf ("bench-trace: %s (skipped)\n", error->message);
      return 77;
    }
  buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N_ELEMS, &error);
  g_assert_no_error (error);

  /* warm up both paths */
  raw_throughput (device, atomr_buffer_get_device_pointer (buffer), FALSE);
  actor_throughput (device, buffer, FALSE, NULL);

  printf ("# %s, %d fills of %d B, %d in flight\n", atomr_device_get_name (device), N_OPS, N_ELEMS * 4, WINDOW);
  printf ("%-52s %10s %8s\n", "path", "ops/s", "ratio");
  raw = raw_throughput (device, atomr_buffer_get_device_pointer (buffer), FALSE);
  printf ("%-52s %10.0f %8s\n", "raw, an event per fill", raw, "1.00");
  raw_timed = raw_throughput (device, atomr_buffer_get_device_pointer (buffer), TRUE);
  printf ("%-52s %10.0f %8.2f\n", "raw, timing events around each fill", raw_timed, raw_timed / raw);

  off = actor_throughput (device, buffer, FALSE, NULL);
  printf ("%-52s %10.0f %8.2f\n", "actor, timing off, no recorder", off, off / raw);
  recorder = atomr_trace_recorder_new (N_OPS + N_OPS / BATCH + 8);
  off_rec = actor_throughput (device, buffer, FALSE, recorder);
  printf ("%-52s %10.0f %8.2f\n", "actor, timing off, recorder attached", off_rec, off_rec / raw);
  atomr_trace_recorder_clear (recorder);
  on_rec = actor_throughput (device, buffer, TRUE, recorder);
  printf ("%-52s %10.0f %8.2f\n", "actor, timing on, recorder attached", on_rec, on_rec / raw);
  printf ("%-52s %10.2f\n", "timing on / raw timed (same GPU events)", on_rec / raw_timed);

  {
    guint n = atomr_trace_recorder_get_n_records (recorder);
    gdouble t0 = bench_now_us ();
    g_autofree gchar *json = atomr_trace_recorder_to_json (recorder);
    gdouble us = bench_now_us () - t0;
    printf ("export: %u records, %.1f MB of JSON, %.2f µs per record\n", n,
            strlen (json) / 1e6, us / MAX (n, 1));
  }
  return 0;
}
