/* bench-fft.c — FFT through AtomrFftActor with its plan cache, with a
 * plan made and destroyed per call (plan-cache-capacity 0), and raw cuFFT
 * with a prebuilt plan on the same stream, in one run.
 *
 * For each size: the median over REPS of one call waited for (latency),
 * and the time per call of BURST calls submitted back to back
 * (pipelined), in µs, with ratios to raw cuFFT.
 *
 *   bench-fft [--reps N]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* The raw baseline calls cuFFT through the same dlopen() table as the actor. */
#include "atomr-cufft-table-private.h"

#include "atomr.h"
#include "core/atomr-actor-private.h"
#include "../bench-util.h"

#define BURST 100

static gint reps = 50;

typedef struct {
  const gchar  *name;
  AtomrFftKind  kind;
  guint         rank;
  gint64        n[2];
  gint64        batch;
} Size;

static const Size sizes[] = {
  { "C2C 1-D 4096 × batch 256", ATOMR_FFT_C2C, 1, { 4096 }, 256 },
  { "C2C 2-D 1024²",            ATOMR_FFT_C2C, 2, { 1024, 1024 }, 1 },
  { "R2C 1-D 2^20",             ATOMR_FFT_R2C, 1, { 1 << 20 }, 1 },
  { "C2C 1-D 256 × batch 16",   ATOMR_FFT_C2C, 1, { 256 }, 16 },
};

static double
median (GArray *times)
{
  return bench_median ((gdouble *) times->data, times->len);
}

typedef struct {
  guint pending;
} Burst;

static void
burst_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Burst *burst = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_fft_actor_execute_finish (ATOMR_FFT_ACTOR (source), result, &error))
    g_error ("execute: %s", error->message);
  burst->pending--;
}

/* Latency (median µs) and pipelined µs per call through the actor. */
static void
bench_actor (AtomrFftActor *fft,
             AtomrFftPlan  *plan,
             AtomrBuffer   *in,
             AtomrBuffer   *out,
             double        *latency,
             double        *pipelined)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  Burst burst = { 0 };
  gdouble t0;

  for (gint i = 0; i < reps + 3; i++)
    {
      t0 = bench_now_us ();
      burst.pending = 1;
      atomr_fft_actor_execute_async (fft, plan, ATOMR_FFT_FORWARD, in, out, NULL, burst_done, &burst);
      while (burst.pending)
        g_main_context_iteration (NULL, TRUE);
      if (i >= 3)
        {
          double us = bench_now_us () - t0;
          g_array_append_val (times, us);
        }
    }
  *latency = median (times);

  t0 = bench_now_us ();
  burst.pending = BURST;
  for (gint i = 0; i < BURST; i++)
    atomr_fft_actor_execute_async (fft, plan, ATOMR_FFT_FORWARD, in, out, NULL, burst_done, &burst);
  while (burst.pending)
    g_main_context_iteration (NULL, TRUE);
  *pipelined = (double) (bench_now_us () - t0) / BURST;
}

static cufftResult
raw_exec (cufftHandle   plan,
          AtomrFftKind  kind,
          AtomrBuffer  *in,
          AtomrBuffer  *out)
{
  gpointer i = (gpointer) (guintptr) atomr_buffer_get_device_pointer (in);
  gpointer o = (gpointer) (guintptr) atomr_buffer_get_device_pointer (out);

  return kind == ATOMR_FFT_R2C ? cufftExecR2C (plan, i, o) : cufftExecC2C (plan, i, o, CUFFT_FORWARD);
}

static void
bench_raw (AtomrDevice  *device,
           CUstream      stream,
           const Size   *size,
           AtomrBuffer  *in,
           AtomrBuffer  *out,
           double       *latency,
           double       *pipelined)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GError) error = NULL;
  long long n[2] = { size->n[0], size->n[1] };
  cufftHandle plan;
  size_t work = 0;
  gdouble t0;

  if (!atomr_device_enter (device, &error))
    g_error ("enter: %s", error->message);
  g_assert_true (atomr_cufft_load (NULL));
  g_assert_cmpint (cufftCreate (&plan), ==, CUFFT_SUCCESS);
  g_assert_cmpint (cufftMakePlanMany64 (plan, size->rank, n, NULL, 1, 0, NULL, 1, 0,
                                        size->kind == ATOMR_FFT_R2C ? CUFFT_R2C : CUFFT_C2C,
                                        size->batch, &work), ==, CUFFT_SUCCESS);
  g_assert_cmpint (cufftSetStream (plan, (cudaStream_t) stream), ==, CUFFT_SUCCESS);
  for (gint i = 0; i < reps + 3; i++)
    {
      t0 = bench_now_us ();
      g_assert_cmpint (raw_exec (plan, size->kind, in, out), ==, CUFFT_SUCCESS);
      g_assert_cmpint (ATOMR_CU->cuStreamSynchronize (stream), ==, CUDA_SUCCESS);
      if (i >= 3)
        {
          double us = bench_now_us () - t0;
          g_array_append_val (times, us);
        }
    }
  *latency = median (times);
  t0 = bench_now_us ();
  for (gint i = 0; i < BURST; i++)
    raw_exec (plan, size->kind, in, out);
  ATOMR_CU->cuStreamSynchronize (stream);
  *pipelined = (double) (bench_now_us () - t0) / BURST;
  cufftDestroy (plan);
  atomr_device_leave (device);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GOptionContext) options = g_option_context_new ("- FFT actor vs raw cuFFT");
  GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "timed calls per measurement", "N" },
    { NULL }
  };
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(AtomrFftActor) cached = NULL;
  g_autoptr(AtomrFftActor) per_call = NULL;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    g_error ("%s", error->message);
  reps = MAX (reps, 5);

  device = atomr_device_get (0, &error);
  if (device == NULL)
    {
      g_printerr ("bench-fft: %s\n", error->message);
      return 77;
    }
  cached = atomr_fft_actor_new (device, &error);
  per_call = atomr_fft_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_fft_actor_set_plan_cache_capacity (per_call, 0);

  g_print ("# bench-fft on %s, %d timed calls (median), bursts of %d; µs per call\n",
           atomr_device_get_name (device), reps, BURST);
  g_print ("%-26s | %10s %10s %10s | %8s %8s | %10s %10s %8s\n", "size", "raw lat", "cached lat",
           "per-call", "cache/raw", "pc/raw", "raw pipe", "cache pipe", "ratio");
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      const Size *size = &sizes[s];
      g_autoptr(AtomrFftPlan) plan = NULL;
      g_autoptr(AtomrBuffer) in = NULL;
      g_autoptr(AtomrBuffer) out = NULL;
      double raw_lat, raw_pipe, cache_lat, cache_pipe, pc_lat, pc_pipe;

      plan = size->rank == 1
        ? atomr_fft_plan_new_1d (size->kind, ATOMR_DTYPE_F32, size->n[0], size->batch, &error)
        : atomr_fft_plan_new_2d (size->kind, ATOMR_DTYPE_F32, size->n[0], size->n[1], size->batch, &error);
      g_assert_no_error (error);
      in = atomr_buffer_new (device, atomr_fft_plan_get_input_dtype (plan),
                             atomr_fft_plan_get_input_elements (plan), &error);
      out = atomr_buffer_new (device, atomr_fft_plan_get_output_dtype (plan),
                              atomr_fft_plan_get_output_elements (plan), &error);
      g_assert_no_error (error);
      atomr_buffer_fill_sync (in, 0.5, NULL, &error);
      g_assert_no_error (error);

      bench_actor (cached, plan, in, out, &cache_lat, &cache_pipe);
      bench_actor (per_call, plan, in, out, &pc_lat, &pc_pipe);
      /* Raw cuFFT on the cached actor's own stream, once its work is done. */
      bench_raw (device, atomr_actor_get_cu_stream (ATOMR_ACTOR (cached)), size, in, out,
                 &raw_lat, &raw_pipe);

      g_print ("%-26s | %10.1f %10.1f %10.1f | %8.3f %8.3f | %10.1f %10.1f %8.3f\n", size->name,
               raw_lat, cache_lat, pc_lat, cache_lat / raw_lat, pc_lat / raw_lat,
               raw_pipe, cache_pipe, cache_pipe / raw_pipe);
    }
  g_print ("# cached actor: %" G_GUINT64_FORMAT " plan hits, %" G_GUINT64_FORMAT " misses; "
           "per-call actor: %" G_GUINT64_FORMAT " plans made\n",
           atomr_fft_actor_get_plan_cache_hits (cached), atomr_fft_actor_get_plan_cache_misses (cached),
           atomr_fft_actor_get_plan_cache_misses (per_call));
  return 0;
}
