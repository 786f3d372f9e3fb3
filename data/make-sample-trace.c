/* make-sample-trace.c — writes data/sample-trace.json
 *
 * A deterministic, plausible trace of one process driving six actors on
 * GPU 0, with the operation names the library's actors record: the NVRTC
 * actor launching saxpy, reduce_sum and scale<float> (after the compiles,
 * which are not stream operations and show as the quiet start), copy
 * actors uploading, filling and downloading (library "cuda"), cuBLAS GEMMs
 * and GEMVs, cuFFT transforms and cuRAND fills, in a 40-iteration pipeline;
 * one launch fails (a block too large for the kernel).  Written through
 * AtomrTraceRecorder, so the file has exactly the format the library
 * exports.  Run by hand after changing it:
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
  if (error == NULL)
    atomr_launch_info_set_gpu_duration_ms (info, dur / 1000.0 * 0.97);
  if (detail)
    atomr_launch_info_set_detail (info, detail);
  if (geometry)
    atomr_launch_info_set_geometry (info, geometry[0], geometry[1], geometry[2],
                                    geometry[3], geometry[4], geometry[5], geometry[6]);
  if (error)
    {
      g_autoptr(GError) e = g_error_new_literal (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, error);
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
  Stream nvrtc = { "kernels", "nvrtc", 1, 0, 0 };
  Stream h2d = { "copy-h2d", "cuda", 2, 0, 0 };
  Stream d2h = { "copy-d2h", "cuda", 3, 0, 0 };
  Stream blas = { "blas", "cublas", 4, 0, 0 };
  Stream fft = { "fft", "cufft", 5, 0, 0 };
  Stream rand = { "rand", "curand", 6, 0, 0 };
  const guint saxpy_geo[7] = { 4096, 1, 1, 256, 1, 1, 0 };
  const guint reduce_geo[7] = { 2048, 1, 1, 256, 1, 1, 0 };
  const guint scale_geo[7] = { 528, 1, 1, 256, 1, 1, 0 };
  g_autoptr(GError) error = NULL;
  gint64 t = 1000000000;   /* monotonic µs, as g_get_monotonic_time() */

  if (argc != 2)
    {
      g_printerr ("usage: %s OUTPUT.json\n", argv[0]);
      return 2;
    }
  rng = g_rand_new_with_seed (20261122);
  recorder = atomr_trace_recorder_new (4096);

  /* while NVRTC compiles (not a stream operation): inputs and random numbers */
  op (&h2d, t, "upload", 350, "4 MiB", NULL, NULL);
  op (&rand, t + 40, "rng-fill", 95, "normal", NULL, NULL);
  op (&blas, t + 60, "gemm", 420, "1024×1024×1024 f32", NULL, NULL);
  t += 24000;
  /* the first reduction asked for 2048-thread blocks */
  op (&nvrtc, t, "launch", 3, "reduce_sum", NULL,
      "launch: block 2048×1×1 has 2048 threads; reduce_sum allows at most 1024");

  for (guint it = 0; it < 40; it++)
    {
      gint64 up, rnd, gemm, ff, sx, red, sc, down;
      gboolean big = it % 6 == 5;

      up = op (&h2d, t, "upload", big ? 620 : 340, big ? "8 MiB" : "4 MiB", NULL, NULL);
      rnd = op (&rand, t + 5, "rng-fill", 95, "normal", NULL, NULL);
      op (&rand, t + 10, "rng-fill", 70, "uniform", NULL, NULL);
      sx = op (&nvrtc, MAX (up, rnd), "launch", 42, "saxpy", saxpy_geo, NULL);
      gemm = op (&blas, sx, "gemm", big ? 1650 : 410, big ? "2048×2048×2048 f32" : "1024×1024×1024 f32", NULL, NULL);
      op (&blas, sx + 3, "gemv", 35, "4096×4096 f32", NULL, NULL);
      ff = op (&fft, up, "fft", 180, "c2c f32 1048576, forward", NULL, NULL);
      op (&fft, ff, "fft", 175, "c2c f32 1048576, inverse", NULL, NULL);
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
