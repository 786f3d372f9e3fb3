/* make-sample-trace.c — writes data/sample-trace.json
 *
 * A deterministic, plausible trace of one process driving six actors on
 * GPU 0: NVRTC compiling three programs and launching their kernels,
 * host-to-device and device-to-host copies, cuBLAS GEMMs, cuFFT
 * transforms and cuRAND generators, in a 40-iteration pipeline.  Written
 * through AtomrTraceRecorder, so the file has exactly the format the
 * library exports.  Run by hand after changing it:
 *
 *   build/data/make-sample-trace data/sample-trace.json
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>

typedef struct {
  const gchar *actor;
  const gchar *library;
  guint        stream;
  gint64       free_at;   /* when the stream is idle again, µs */
  guint64      sequence;
} Stream;

static GRand *rng;
static AtomrTraceRecorder *recorder;

static gint64
jitter (gint64 us,
        gdouble spread)
{
  return MAX (1, (gint64) (us * (1.0 + g_rand_double_range (rng, -spread, spread))));
}

/* Submits one operation at `ready` (host time); it starts when both the
 * host submitted it and its stream is free; returns the completion time. */
static gint64
op (Stream      *s,
    gint64       ready,
    const gchar *operation,
    gint64       duration_us,
    const gchar *detail,
    const guint *geometry,
    const gchar *error)
{
  g_autoptr(AtomrLaunchInfo) info = atomr_launch_info_new (s->actor, s->library, operation);
  gint64 submit = ready + g_rand_int_range (rng, 2, 12);
  gint64 enqueue = MAX (submit + g_rand_int_range (rng, 3, 20), s->free_at);
  gint64 dur = jitter (duration_us, 0.15);
  gint64 complete = enqueue + dur + g_rand_int_range (rng, 2, 9);

  atomr_launch_info_set_sequence (info, ++s->sequence);
  atomr_launch_info_set_generation (info, 1);
  atomr_launch_info_set_device_ordinal (info, 0);
  atomr_launch_info_set_stream_id (info, s->stream);
  atomr_launch_info_set_times (info, submit, enqueue, complete);
  if (g_strcmp0 (s->library, "nvrtc") != 0 || geometry)
    atomr_launch_info_set_gpu_duration_ms (info, dur / 1000.0 * 0.97);
  if (detail)
    atomr_launch_info_set_detail (info, detail);
  if (geometry)
    atomr_launch_info_set_geometry (info, geometry[0], geometry[1], geometry[2],
                                    geometry[3], geometry[4], geometry[5], geometry[6]);
  if (error)
    {
      g_autoptr(GError) e = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_COMPILE, error);
      atomr_launch_info_set_error (info, e);
    }
  atomr_trace_recorder_add_record (recorder, info);
  s->free_at = complete;
  return complete;
}

int
main (int   argc,
      char *argv[])
{
  Stream nvrtc = { "nvrtc", "nvrtc", 1, 0, 0 };
  Stream h2d = { "copy-h2d", "copy", 2, 0, 0 };
  Stream d2h = { "copy-d2h", "copy", 3, 0, 0 };
  Stream blas = { "blas", "cublas", 4, 0, 0 };
  Stream fft = { "fft", "cufft", 5, 0, 0 };
  Stream rand = { "rand", "curand", 6, 0, 0 };
  const guint saxpy_geo[7] = { 4096, 1, 1, 256, 1, 1, 0 };
  const guint reduce_geo[7] = { 2048, 1, 1, 256, 1, 1, 1024 };
  const guint scale_geo[7] = { 528, 1, 1, 256, 1, 1, 0 };
  g_autoptr(GError) error = NULL;
  gint64 t = 1000000000;   /* monotonic µs, as g_get_monotonic_time() */
  gint64 t_compiled;

  if (argc != 2)
    {
      g_printerr ("usage: %s OUTPUT.json\n", argv[0]);
      return 2;
    }
  rng = g_rand_new_with_seed (20261122);
  recorder = atomr_trace_recorder_new (4096);

  /* compile: one failure, fixed and compiled again */
  op (&nvrtc, t, "compile", 5200, "saxpy.cu: saxpy (sm_90)", NULL, NULL);
  op (&nvrtc, t, "compile", 7900, "reduce.cu: reduce_sum (sm_90)", NULL, NULL);
  op (&nvrtc, t, "compile", 2100, "scale.cu: scale<float>, scale<double> (sm_90)", NULL,
      "scale.cu(9): error: identifier \"factr\" is undefined");
  t_compiled = op (&nvrtc, t + 15000, "compile", 12400, "scale.cu: scale<float>, scale<double> (sm_90)", NULL, NULL);
  /* cuFFT plans and cuRAND seeding overlap the compiles */
  op (&fft, t + 2000, "plan-1d-c2c", 5200, "n=1048576 batch=1", NULL, NULL);
  op (&rand, t + 1000, "create-generator", 900, "philox4_32_10, seed 42", NULL, NULL);
  op (&blas, t + 1500, "create-handle", 1800, NULL, NULL, NULL);

  t = t_compiled + 50;
  for (guint it = 0; it < 40; it++)
    {
      gint64 up, rnd, gemm, ff, sx, red, sc, down;
      gboolean big = it % 6 == 5;

      up = op (&h2d, t, "upload", big ? 620 : 340, big ? "8 MiB" : "4 MiB", NULL, NULL);
      rnd = op (&rand, t + 5, "generate-normal", 95, "1048576 × f32", NULL, NULL);
      op (&rand, t + 10, "generate-uniform", 70, "1048576 × f32", NULL, NULL);
      sx = op (&nvrtc, MAX (up, rnd), "launch", 42, "saxpy", saxpy_geo, NULL);
      gemm = op (&blas, sx, "sgemm", big ? 1650 : 410, big ? "2048×2048×2048" : "1024×1024×1024", NULL, NULL);
      op (&blas, sx + 3, "sgemv", 35, "4096×4096", NULL, NULL);
      ff = op (&fft, up, "exec-c2c", 180, "forward, n=1048576", NULL, NULL);
      op (&fft, ff, "exec-c2c", 175, "inverse, n=1048576", NULL, NULL);
      red = op (&nvrtc, MAX (gemm, ff), "launch", 58, "reduce_sum", reduce_geo, NULL);
      sc = op (&nvrtc, red, "launch", 31, "scale<float>", scale_geo, NULL);
      down = op (&d2h, MAX (sc, gemm), "download", big ? 700 : 360, big ? "8 MiB" : "4 MiB", NULL, NULL);
      op (&d2h, down, "download", 4, "4 bytes (sum)", NULL, NULL);
      if (it % 4 == 3)
        op (&h2d, t + 20, "fill", 22, "zero 4 MiB", NULL, NULL);
      t = MAX (up, sx) + g_rand_int_range (rng, 40, 160);
    }

  if (!atomr_trace_recorder_save (recorder, argv[1], &error))
    {
      g_printerr ("%s\n", error->message);
      return 1;
    }
  g_print ("%u records\n", atomr_trace_recorder_get_n_records (recorder));
  g_object_unref (recorder);
  g_rand_free (rng);
  return 0;
}
