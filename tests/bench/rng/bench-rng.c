/* bench-rng.c — fills through AtomrRngActor against raw cuRAND with a
 * generator on the same stream, in one run: what the envelope costs on a
 * plain uniform fill, and what the distributions cuRAND lacks cost (one
 * transform pass: exponential in place; bf16 through scratch and a
 * conversion; a partial fill at an odd offset through scratch).
 *
 * For each size: median µs of one fill waited for, and its ratio to the
 * raw cuRAND uniform fill of the same size.
 *
 *   bench-rng [--reps N]
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* The raw baseline calls cuRAND through the same dlopen() table as the actor. */
#include "atomr-curand-table-private.h"

#include "atomr.h"
#include "core/atomr-actor-private.h"
#include "core/atomr-device-private.h"
#include "../bench-util.h"

static gint reps = 30;

typedef struct {
  const gchar          *name;
  AtomrDtype            dtype;
  AtomrRngDistribution  dist;
  gdouble               p1, p2;
  guint64               first;   /* a partial fill from here, when count < n */
  gboolean              partial;
} Case;

static const Case cases[] = {
  { "uniform f32 (direct)", ATOMR_DTYPE_F32, ATOMR_RNG_UNIFORM, 0, 0, 0, FALSE },
  { "exponential f32 (in place)", ATOMR_DTYPE_F32, ATOMR_RNG_EXPONENTIAL, 2, 0, 0, FALSE },
  { "uniform [-1, 1) bf16 (scratch)", ATOMR_DTYPE_BF16, ATOMR_RNG_UNIFORM_RANGE, -1, 1, 0, FALSE },
  { "normal f32 from element 1", ATOMR_DTYPE_F32, ATOMR_RNG_NORMAL, 0, 1, 1, TRUE },
};

typedef struct {
  gboolean done;
} Wait;

static void
fill_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Wait *wait = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_rng_actor_fill_range_finish (ATOMR_RNG_ACTOR (source), result, &error))
    g_error ("fill: %s", error->message);
  wait->done = TRUE;
}

static gdouble
bench_actor (AtomrRngActor *rng,
             AtomrBuffer   *buffer,
             const Case    *c,
             guint64        n)
{
  g_autofree gdouble *times = g_new (gdouble, reps);
  guint64 count = c->partial ? n - c->first - (n - c->first) % 2 : n;

  for (gint i = 0; i < reps + 3; i++)
    {
      Wait wait = { FALSE };
      gdouble t0 = bench_now_us ();

      atomr_rng_actor_fill_range_async (rng, buffer, c->first, count, c->dist, c->p1, c->p2, NULL,
                                        fill_done, &wait);
      while (!wait.done)
        g_main_context_iteration (NULL, TRUE);
      if (i >= 3)
        times[i - 3] = bench_now_us () - t0;
    }
  return bench_median (times, reps);
}

static gdouble
bench_raw (AtomrDevice *device,
           CUstream     stream,
           AtomrBuffer *buffer,
           guint64      n)
{
  g_autofree gdouble *times = g_new (gdouble, reps);
  g_autoptr(GError) error = NULL;
  curandGenerator_t gen;

  if (!atomr_device_enter (device, &error))
    g_error ("enter: %s", error->message);
  g_assert_true (atomr_curand_load (NULL));
  g_assert_cmpint (curandCreateGenerator (&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), ==, CURAND_STATUS_SUCCESS);
  g_assert_cmpint (curandSetStream (gen, (cudaStream_t) stream), ==, CURAND_STATUS_SUCCESS);
  for (gint i = 0; i < reps + 3; i++)
    {
      gdouble t0 = bench_now_us ();
      g_assert_cmpint (curandGenerateUniform (gen, (float *) (guintptr) atomr_buffer_get_device_pointer (buffer), n),
                       ==, CURAND_STATUS_SUCCESS);
      g_assert_cmpint (ATOMR_CU->cuStreamSynchronize (stream), ==, CUDA_SUCCESS);
      if (i >= 3)
        times[i - 3] = bench_now_us () - t0;
    }
  curandDestroyGenerator (gen);
  atomr_device_leave (device);
  return bench_median (times, reps);
}

int
main (int    argc,
      char **argv)
{
  static const guint64 sizes[] = { 1 << 16, 1 << 20, 1 << 24 };
  g_autoptr(GError) error = NULL;
  g_autoptr(GOptionContext) options = g_option_context_new ("- RNG actor vs raw cuRAND");
  GOptionEntry entries[] = {
    { "reps", 0, 0, G_OPTION_ARG_INT, &reps, "timed fills per measurement", "N" },
    { NULL }
  };
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(AtomrRngActor) rng = NULL;

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    g_error ("%s", error->message);
  reps = MAX (reps, 5);

  device = atomr_device_get (0, &error);
  if (device == NULL)
    {
      g_printerr ("bench-rng: %s\n", error->message);
      return 77;
    }
  rng = atomr_rng_actor_new (device, ATOMR_RNG_PHILOX, &error);
  g_assert_no_error (error);

  g_print ("# bench-rng on %s, %d timed fills (median µs); ratio to raw cuRAND uniform f32 of the same size\n",
           atomr_device_get_name (device), reps);
  g_print ("%-32s %10s | %10s %10s %8s\n", "fill", "elements", "raw", "actor", "ratio");
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autoptr(AtomrBuffer) raw_buf = atomr_buffer_new (device, ATOMR_DTYPE_F32, sizes[s], &error);
      gdouble raw;

      g_assert_no_error (error);
      /* raw cuRAND on the actor's own stream, after the actor's work */
      raw = bench_raw (device, atomr_actor_get_cu_stream (ATOMR_ACTOR (rng)), raw_buf, sizes[s]);
      for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
        {
          g_autoptr(AtomrBuffer) buf = atomr_buffer_new (device, cases[c].dtype, sizes[s], &error);
          gdouble actor;

          g_assert_no_error (error);
          actor = bench_actor (rng, buf, &cases[c], sizes[s]);
          g_print ("%-32s %10" G_GUINT64_FORMAT " | %10.1f %10.1f %8.3f\n", cases[c].name, sizes[s], raw,
                   actor, actor / raw);
        }
    }
  return 0;
}
