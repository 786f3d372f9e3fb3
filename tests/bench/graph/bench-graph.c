/* bench-graph.c — a chain of 100 dependent tiny kernels: eager vs graph
 *
 * In one run, each path timed as the median over chains (launch the 100
 * kernels, wait until the GPU finished them), with ratios to raw eager
 * launches measured in the same run:
 *   - raw eager: 100 x cuLaunchKernel + cuStreamSynchronize;
 *   - raw graph: the same 100 launches captured once, cuGraphLaunch +
 *     cuStreamSynchronize;
 *   - atomr eager: 100 x atomr_nvrtc_actor_launch_async, reply of the last;
 *   - atomr graph: the 100 launches recorded into an AtomrGraph, one
 *     atomr_graph_replay_async per chain.
 * Every kernel adds 1 to x[0]; the final value is checked against the
 * number of launches of all paths.  Goal: atomr graph replay >= 3x faster
 * than raw eager.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"
#include "nvrtc/atomr-kernel-private.h"

#define CHAIN   100
#define N_CHAIN 300
#define WARMUP  20

#define INC_SOURCE \
  "extern \"C\" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }\n"

static void
die (const gchar *what, GError *error)
{
  g_printerr ("bench-graph: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

static void
check (CUresult res, const gchar *what)
{
  if (res != CUDA_SUCCESS)
    {
      g_autoptr(GError) error = NULL;
      atomr_cuda_check (res, what, &error);
      die (what, error);
    }
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static gdouble
raw_chain (AtomrDevice *device, CUfunction function, CUdeviceptr x, gboolean graph)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble t[N_CHAIN];
  void *params[] = { &x };
  CUstream stream;
  CUgraph g = NULL;
  CUgraphExec exec = NULL;

  atomr_device_enter (device, NULL);
  check (cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  if (graph)
    {
      check (cu->cuStreamBeginCapture (stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
      for (guint k = 0; k < CHAIN; k++)
        check (cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL), "cuLaunchKernel");
      check (cu->cuStreamEndCapture (stream, &g), "cuStreamEndCapture");
      check (cu->cuGraphInstantiateWithFlags (&exec, g, 0), "cuGraphInstantiateWithFlags");
    }
  for (guint i = 0; i < N_CHAIN + WARMUP; i++)
    {
      gdouble t0 = bench_now_us ();
      if (graph)
        check (cu->cuGraphLaunch (exec, stream), "cuGraphLaunch");
      else
        for (guint k = 0; k < CHAIN; k++)
          check (cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL), "cuLaunchKernel");
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      if (i >= WARMUP)
        t[i - WARMUP] = bench_now_us () - t0;
    }
  if (exec)
    cu->cuGraphExecDestroy (exec);
  if (g)
    cu->cuGraphDestroy (g);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return bench_median (t, N_CHAIN);
}

static void
launch (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
        AtomrKernelArgs *args, GAsyncResult **result)
{
  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL,
                                  result ? store_result : NULL, result);
}

static gdouble
atomr_eager_chain (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                   AtomrKernelArgs *args)
{
  gdouble t[N_CHAIN];

  for (guint i = 0; i < N_CHAIN + WARMUP; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GError) error = NULL;
      gdouble t0 = bench_now_us ();

      for (guint k = 0; k + 1 < CHAIN; k++)
        launch (actor, kernel, config, args, NULL);
      launch (actor, kernel, config, args, &result);
      wait_for (&result);
      if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
        die ("launch", error);
      if (i >= WARMUP)
        t[i - WARMUP] = bench_now_us () - t0;
    }
  return bench_median (t, N_CHAIN);
}

static gdouble
atomr_graph_chain (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                   AtomrKernelArgs *args)
{
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("chain-100");
  g_autoptr(GError) error = NULL;
  AtomrActor *actors[] = { ATOMR_ACTOR (actor) };
  gdouble t[N_CHAIN];

  if (!atomr_graph_begin_capture (graph, actors, 1, &error))
    die ("begin_capture", error);
  for (guint k = 0; k < CHAIN; k++)
    launch (actor, kernel, config, args, NULL);
  if (!atomr_graph_end_capture (graph, &error))
    die ("end_capture", error);

  for (guint i = 0; i < N_CHAIN + WARMUP; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      gdouble t0 = bench_now_us ();

      atomr_graph_replay_async (graph, ATOMR_ACTOR (actor), NULL, store_result, &result);
      wait_for (&result);
      if (!atomr_graph_replay_finish (graph, result, &error))
        die ("replay", error);
      if (i >= WARMUP)
        t[i - WARMUP] = bench_now_us () - t0;
    }
  return bench_median (t, N_CHAIN);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrLaunchConfig) config = NULL;
  g_autoptr(AtomrKernelArgs) args = NULL;
  g_autoptr(GBytes) got = NULL;
  gdouble raw_eager, raw_graph, at_eager, at_graph, want;
  gfloat value;

  if (device == NULL)
    {
      g_printerr ("bench-graph: %s\n", error->message);
      return 77;
    }
  actor = atomr_nvrtc_actor_new (device, &error);
  if (actor == NULL)
    die ("actor", error);
  {
    g_autoptr(GAsyncResult) result = NULL;
    atomr_nvrtc_actor_compile_async (actor, INC_SOURCE, "inc", NULL, NULL, store_result, &result);
    wait_for (&result);
    kernel = atomr_nvrtc_actor_compile_finish (actor, result, &error);
    if (kernel == NULL)
      die ("compile", error);
  }
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error);
  if (x == NULL || !atomr_buffer_fill_sync (x, 0.0, NULL, &error))
    die ("buffer", error);
  config = atomr_launch_config_new (1, 1, 1, 32, 1, 1);
  args = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), x);

  /* Loads the module on the device; counts as one launch. */
  {
    g_autoptr(GAsyncResult) result = NULL;
    launch (actor, kernel, config, args, &result);
    wait_for (&result);
    if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
      die ("first launch", error);
  }

  raw_eager = raw_chain (device, atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), FALSE);
  raw_graph = raw_chain (device, atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), TRUE);
  at_eager = atomr_eager_chain (actor, kernel, config, args);
  at_graph = atomr_graph_chain (actor, kernel, config, args);

  got = atomr_buffer_download_sync (x, NULL, &error);
  if (got == NULL)
    die ("download", error);
  value = *(const gfloat *) g_bytes_get_data (got, NULL);
  want = 1.0 + 4.0 * (N_CHAIN + WARMUP) * CHAIN;

  printf ("# bench-graph on %s (driver %d)\n", atomr_device_get_name (device),
          atomr_device_get_driver_version ());
  printf ("# chain of %d dependent tiny kernels <<<1, 32>>>, launch + wait, median of %d chains\n",
          CHAIN, N_CHAIN);
  printf ("%-52s %10s %8s\n", "path", "us/chain", "ratio");
  printf ("%-52s %10.2f %8s\n", "raw eager: 100 x cuLaunchKernel + sync", raw_eager, "1.00");
  printf ("%-52s %10.2f %8.2f\n", "raw graph: cuGraphLaunch + sync", raw_graph, raw_graph / raw_eager);
  printf ("%-52s %10.2f %8.2f\n", "atomr eager: 100 x launch_async, reply of the last", at_eager, at_eager / raw_eager);
  printf ("%-52s %10.2f %8.2f\n", "atomr graph: replay_async, reply", at_graph, at_graph / raw_eager);
  printf ("# atomr graph replay speed-up over raw eager: %.2fx (goal >= 3x); over atomr eager: %.2fx\n",
          raw_eager / at_graph, at_eager / at_graph);
  printf ("# check: x[0] = %.0f, expected %.0f: %s\n", value, want, value == (gfloat) want ? "ok" : "WRONG");
  return value == (gfloat) want ? 0 : 1;
}
