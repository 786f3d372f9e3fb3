/* bench-envelope-gpu.c — where the envelope's time goes on a GPU
 *
 * No profiler runs on the device machine, so this program turns on the
 * envelope's stamps (core/atomr-stamps-private.h, ATOMR_ENVELOPE_STAMPS)
 * for three workloads and prints, for each, the mean time between the
 * envelope's steps next to the raw CUDA figure of the same workload:
 *
 *   1. an empty kernel, launch -> reply, one at a time (raw: launch +
 *      cuStreamSynchronize; the raw launch call is timed on its own);
 *   2. 10 000 pipelined launches from the submitting thread, the last with
 *      a reply (raw: 10 000 launches + one synchronize);
 *   3. the same through an actor with a thread of its own;
 *   4. EXPERIMENTS, raw only: what slows a driver launch call down when
 *      other work runs between launches (the envelope's own situation):
 *      parameters in cold memory, the caches stirred between launches,
 *      the other launch forms.
 *
 * Informational: prints, asserts nothing but the results of the requests.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"
#include "core/atomr-stamps-private.h"
#include "nvrtc/atomr-kernel-private.h"

#define ROUND_TRIPS 2000
#define PIPELINED   10000
#define WARMUP      50

#define EMPTY_SOURCE "extern \"C\" __global__ void empty (float *x) { }\n"

static void
die (const gchar *what, GError *error)
{
  g_printerr ("bench-envelope-gpu: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

static void
launch_wait (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config, AtomrKernelArgs *args)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL, bench_store_result, &result);
  bench_wait_for (&result);
  if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
    die ("launch", error);
}

static gdouble
pipeline (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config, AtomrKernelArgs *args)
{
  gdouble t0 = bench_now_us ();

  for (guint k = 0; k + 1 < PIPELINED; k++)
    atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL, NULL, NULL);
  launch_wait (actor, kernel, config, args);
  return bench_now_us () - t0;
}

/* 4. One raw variant: PIPELINED launches and a synchronize; the launch
 * calls' own time (the stirring between them excluded). */
typedef enum { RAW_PLAIN, RAW_COLD_PARAMS, RAW_STIR_16K, RAW_STIR_256K, RAW_EXTRA, RAW_EX, RAW_N } RawVariant;

static const gchar *raw_names[RAW_N] = {
  "cuLaunchKernel, the same parameters (the raw row)",
  "parameters in a fresh block each launch (10000 blocks)",
  "16 KiB of other memory written between launches",
  "256 KiB of other memory written between launches",
  "parameters through CU_LAUNCH_PARAM_BUFFER_POINTER",
  "cuLaunchKernelEx, no attributes",
};

static gdouble
raw_variant (RawVariant v, CUfunction function, CUstream stream, CUdeviceptr ptr, gdouble *calls_us)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  static guint8 stir[256 * 1024];
  g_autofree CUdeviceptr *cold = g_new (CUdeviceptr, PIPELINED * 8);
  void *params[] = { &ptr };
  gsize arg_size = sizeof ptr;
  void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &ptr, CU_LAUNCH_PARAM_BUFFER_SIZE, &arg_size,
                    CU_LAUNCH_PARAM_END };
  CUlaunchConfig lc = { .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1,
                        .blockDimZ = 1, .hStream = stream };
  gdouble t0, in_calls = 0;

  for (guint k = 0; k < PIPELINED; k++)
    cold[k * 8] = ptr;
  t0 = bench_now_us ();
  for (guint k = 0; k < PIPELINED; k++)
    {
      gdouble c0 = bench_now_us ();
      void *p1[] = { &cold[k * 8] };
      CUresult res;

      switch (v)
        {
        case RAW_COLD_PARAMS:
          res = cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, p1, NULL);
          break;
        case RAW_EXTRA:
          res = cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, NULL, extra);
          break;
        case RAW_EX:
          res = cu->cuLaunchKernelEx (&lc, function, params, NULL);
          break;
        default:
          res = cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL);
          break;
        }
      if (res != CUDA_SUCCESS)
        die (raw_names[v], NULL);
      in_calls += bench_now_us () - c0;
      if (v == RAW_STIR_16K || v == RAW_STIR_256K)
        memset (stir + (k & 1) * 64, (gint) k, v == RAW_STIR_16K ? 16 * 1024 : 256 * 1024 - 128);
    }
  cu->cuStreamSynchronize (stream);
  *calls_us = in_calls / PIPELINED;
  return bench_now_us () - t0;
}

static void
raw_experiments (CUfunction function, CUstream stream, CUdeviceptr ptr)
{
  gdouble best[RAW_N], calls[RAW_N];

  for (guint v = 0; v < RAW_N; v++)
    best[v] = G_MAXDOUBLE;
  /* Interleaved, best of 5: the machine's drift hits every variant. */
  for (guint round = 0; round < 5; round++)
    for (guint v = 0; v < RAW_N; v++)
      {
        gdouble c, t = raw_variant (v, function, stream, ptr, &c);
        if (t < best[v])
          {
            best[v] = t;
            calls[v] = c;
          }
      }
  printf ("## 4x. EXPERIMENTS (raw): %d pipelined launches + synchronize, best of 5 interleaved;\n"
          "##     us per launch in all, us in the launch call, ratio to the first row\n", PIPELINED);
  for (guint v = 0; v < RAW_N; v++)
    printf ("4x. %-58s %6.2f %6.2f  %.3f\n", raw_names[v], best[v] / PIPELINED, calls[v], best[v] / best[0]);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrNvrtcActor) actor = NULL, threaded = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrBuffer) dummy = NULL;
  g_autoptr(AtomrLaunchConfig) config = NULL;
  g_autoptr(AtomrKernelArgs) args = NULL;
  g_autoptr(GAsyncResult) compiled = NULL;
  g_autofree gdouble *t = g_new (gdouble, ROUND_TRIPS);
  g_autofree gdouble *tl = g_new (gdouble, ROUND_TRIPS);
  const AtomrCudaDriver *cu;
  CUfunction function;
  CUdeviceptr ptr;
  CUstream stream;
  void *params[] = { &ptr };
  gdouble raw, at;

  if (device == NULL)
    {
      g_printerr ("bench-envelope-gpu: %s\n", error->message);
      return 77;
    }
  cu = ATOMR_CU;
  actor = atomr_nvrtc_actor_new (device, &error);
  threaded = actor ? g_initable_new (ATOMR_TYPE_NVRTC_ACTOR, NULL, &error, "device", device,
                                     "own-thread", TRUE, NULL) : NULL;
  if (threaded == NULL)
    die ("actor", error);
  atomr_nvrtc_actor_compile_async (actor, EMPTY_SOURCE, "empty", NULL, NULL, bench_store_result, &compiled);
  bench_wait_for (&compiled);
  kernel = atomr_nvrtc_actor_compile_finish (actor, compiled, &error);
  dummy = kernel ? atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error) : NULL;
  if (dummy == NULL)
    die ("kernel", error);
  config = atomr_launch_config_new (1, 1, 1, 32, 1, 1);
  args = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), dummy);
  function = atomr_kernel_get_function (kernel);
  ptr = atomr_buffer_get_ptr (dummy);
  for (guint i = 0; i < WARMUP; i++)
    {
      launch_wait (actor, kernel, config, args);
      launch_wait (threaded, kernel, config, args);
    }
  atomr_device_enter (device, NULL);
  if (cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    die ("cuStreamCreate", NULL);
  atomr_device_leave (device);
  printf ("# bench-envelope-gpu on %s\n", atomr_device_get_name (device));

  /* 1. Round trips. */
  atomr_device_enter (device, NULL);
  for (guint i = 0; i < ROUND_TRIPS + WARMUP; i++)
    {
      gdouble t0 = bench_now_us (), t1;
      if (cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL) != CUDA_SUCCESS)
        die ("cuLaunchKernel", NULL);
      t1 = bench_now_us ();
      cu->cuStreamSynchronize (stream);
      if (i >= WARMUP)
        {
          t[i - WARMUP] = bench_now_us () - t0;
          tl[i - WARMUP] = t1 - t0;
        }
    }
  atomr_device_leave (device);
  raw = bench_median (t, ROUND_TRIPS);
  printf ("1. raw: launch + synchronize %.2f us (the launch call %.2f us), medians of %d\n", raw,
          bench_median (tl, ROUND_TRIPS), ROUND_TRIPS);
  atomr_stamps_set_enabled (TRUE);
  atomr_stamps_reset ();
  for (guint i = 0; i < ROUND_TRIPS; i++)
    {
      gdouble t0 = bench_now_us ();
      launch_wait (actor, kernel, config, args);
      t[i] = bench_now_us () - t0;
    }
  atomr_stamps_set_enabled (FALSE);
  at = bench_median (t, ROUND_TRIPS);
  printf ("1. atomr: launch_async -> reply %.2f us (raw %+.2f us)\n", at, at - raw);
  atomr_stamps_print (stdout, "1. round trips");

  /* 2. Pipelined from the submitting thread, 3. with own-thread. */
  atomr_device_enter (device, NULL);
  raw = bench_now_us ();
  for (guint k = 0; k < PIPELINED; k++)
    cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL);
  cu->cuStreamSynchronize (stream);
  raw = bench_now_us () - raw;
  atomr_device_leave (device);
  printf ("2. raw: %d launches + synchronize %.0f us (%.2f us each)\n", PIPELINED, raw, raw / PIPELINED);
  for (guint which = 0; which < 2; which++)
    {
      atomr_stamps_set_enabled (TRUE);
      atomr_stamps_reset ();
      at = pipeline (which ? threaded : actor, kernel, config, args);
      atomr_stamps_set_enabled (FALSE);
      printf ("%u. atomr%s: %.0f us (%.2f us each), raw / atomr %.3f\n", 2 + which,
              which ? ", own-thread actor" : ", submitting thread", at, at / PIPELINED, raw / at);
      atomr_stamps_print (stdout, which ? "3. pipelined, own-thread actor" : "2. pipelined, submitting thread");
    }

  atomr_device_enter (device, NULL);
  raw_experiments (function, stream, ptr);
  cu->cuStreamSynchronize (stream);   /* kept, not destroyed: see bench-graph's raw_stream() */
  atomr_device_leave (device);
  return 0;
}
