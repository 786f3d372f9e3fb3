/* bench-nvrtc.c — compiles, the kernel cache and launches against raw CUDA
 *
 * In one run, with ratios to baselines measured in the same run:
 *   - disk-cache hit to a launchable kernel in a warm process, versus
 *     cuModuleLoadData of the same CUBIN (+ cuModuleGetFunction);
 *   - the same through the NVRTC actor's compile_async, and the cache's
 *     share of a disk hit alone (module, no load);
 *   - kernel creation from a module in memory: with the parameter layout
 *     stored at compile time, and as before it (cuFuncGetParamInfo and the
 *     attribute queries at load);
 *   - memory-cache hit;
 *   - cold compile of a trivial kernel (NVRTC, no cache);
 *   - launch -> reply round trip of an empty kernel through the actor,
 *     versus cuLaunchKernel + event record + event wait;
 *   - pipelined launch throughput (window of 64), actor versus raw.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-module-private.h"
#include "nvrtc/atomr-nvrtc-private.h"

#define N_LOAD   500
#define N_MEM    20000
#define N_COLD   5
#define N_ROUND  3000
#define N_PIPE   60000
#define WINDOW   64

#define EMPTY_SOURCE "extern \"C\" __global__ void empty (void) { }\n"

static void
die (const gchar *what, GError *error)
{
  g_printerr ("bench-nvrtc: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

/* cuModuleLoadData + cuModuleGetFunction + cuModuleUnload of @cubin. */
static gdouble
raw_module_load (AtomrDevice *device, GBytes *cubin, const gchar *symbol)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble t[N_LOAD];

  atomr_device_enter (device, NULL);
  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      CUmodule module;
      CUfunction function;
      gdouble t0 = bench_now_us ();
      if (cu->cuModuleLoadData (&module, g_bytes_get_data (cubin, NULL)) != CUDA_SUCCESS
          || cu->cuModuleGetFunction (&function, module, symbol) != CUDA_SUCCESS)
        die ("cuModuleLoadData", NULL);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
      cu->cuModuleUnload (module);
    }
  atomr_device_leave (device);
  return bench_median (t, N_LOAD);
}

/* Disk hit (memory level off) to a loaded kernel, synchronously. */
static gdouble
disk_hit_to_kernel (AtomrDevice *device, AtomrKernelCache *cache, AtomrCompileOptions *options)
{
  gdouble t[N_LOAD];

  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) module = NULL;
      g_autoptr(AtomrKernel) kernel = NULL;
      gdouble t0 = bench_now_us ();

      module = atomr_nvrtc_compile_for_device (EMPTY_SOURCE, NULL, options, cache, device, &error);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_DISK_HIT)
        die ("disk hit", error);
      kernel = atomr_kernel_new_loaded (device, module, "empty", &error);
      if (kernel == NULL)
        die ("load", error);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
    }
  return bench_median (t, N_LOAD);
}

/* Kernel creation from @module (cuModuleLoadData included); @old_path:
 * the module has no stored layout and the attributes are read at once,
 * as every load did before layouts were stored. */
static gdouble
kernel_from_module (AtomrDevice *device, AtomrModule *module, gboolean old_path)
{
  gdouble t[N_LOAD];

  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrKernel) kernel = NULL;
      gdouble t0 = bench_now_us ();

      kernel = atomr_kernel_new_loaded (device, module, "empty", &error);
      if (kernel == NULL)
        die ("load", error);
      if (old_path)
        atomr_kernel_get_max_threads_per_block (kernel);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
    }
  return bench_median (t, N_LOAD);
}

/* The cache's share of a disk hit: the module, no load. */
static gdouble
disk_hit_module_only (AtomrKernelCache *cache, AtomrCompileOptions *options)
{
  gdouble t[N_LOAD];

  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) module = NULL;
      gdouble t0 = bench_now_us ();

      module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, &error);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_DISK_HIT)
        die ("disk hit (module)", error);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
    }
  return bench_median (t, N_LOAD);
}

/* The same through the actor's compile_async (worker thread + reply). */
static gdouble
disk_hit_through_actor (AtomrNvrtcActor *actor, AtomrCompileOptions *options)
{
  gdouble t[N_LOAD];

  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(AtomrKernel) kernel = NULL;
      gdouble t0 = bench_now_us ();

      atomr_nvrtc_actor_compile_async (actor, EMPTY_SOURCE, "empty", options, NULL, bench_store_result, &result);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      kernel = atomr_nvrtc_actor_compile_finish (actor, result, &error);
      if (kernel == NULL || atomr_module_get_cache_status (atomr_kernel_get_module (kernel)) != ATOMR_CACHE_STATUS_DISK_HIT)
        die ("actor disk hit", error);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
    }
  return bench_median (t, N_LOAD);
}

static gdouble
memory_hit (AtomrKernelCache *cache, AtomrCompileOptions *options)
{
  gdouble t0 = 0;

  for (guint i = 0; i < N_MEM + 100; i++)
    {
      g_autoptr(AtomrModule) module = NULL;
      if (i == 100)
        t0 = bench_now_us ();
      module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, cache, NULL);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_MEMORY_HIT)
        die ("memory hit", NULL);
    }
  return (gdouble) (bench_now_us () - t0) / N_MEM;
}

/* A memory hit through the actor's compile_module_async, to the reply on
 * the main loop (median). */
static gdouble
memory_hit_through_actor (AtomrNvrtcActor *actor, AtomrCompileOptions *options)
{
  gdouble t[N_LOAD];

  for (guint i = 0; i < N_LOAD + 20; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(AtomrModule) module = NULL;
      gdouble t0 = bench_now_us ();

      atomr_nvrtc_actor_compile_module_async (actor, EMPTY_SOURCE, options, NULL, bench_store_result, &result);
      while (result == NULL)
        g_main_context_iteration (NULL, TRUE);
      module = atomr_nvrtc_actor_compile_module_finish (actor, result, &error);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_MEMORY_HIT)
        die ("actor memory hit", error);
      if (i >= 20)
        t[i - 20] = (gdouble) (bench_now_us () - t0);
    }
  return bench_median (t, N_LOAD);
}

static gdouble
cold_compile_ms (AtomrCompileOptions *options)
{
  gdouble t[N_COLD];

  for (guint i = 0; i < N_COLD; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrModule) module = NULL;
      gdouble t0 = bench_now_us ();
      module = atomr_nvrtc_compile (EMPTY_SOURCE, NULL, options, NULL, &error);
      if (module == NULL)
        die ("cold compile", error);
      t[i] = (bench_now_us () - t0) / 1000.0;
    }
  return bench_median (t, N_COLD);
}

static gdouble
raw_round_trip (AtomrDevice *device, CUfunction function)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble *t = g_new (gdouble, N_ROUND);
  CUstream stream;
  CUevent event;
  gdouble m;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  cu->cuEventCreate (&event, CU_EVENT_DISABLE_TIMING);
  for (guint i = 0; i < N_ROUND + 100; i++)
    {
      gdouble t0 = bench_now_us ();
      cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
      cu->cuEventRecord (event, stream);
      cu->cuEventSynchronize (event);
      if (i >= 100)
        t[i - 100] = (gdouble) (bench_now_us () - t0);
    }
  cu->cuEventDestroy (event);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  m = bench_median (t, N_ROUND);
  g_free (t);
  return m;
}

static gdouble
raw_throughput (AtomrDevice *device, CUfunction function)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUstream stream;
  CUevent events[WINDOW];
  gdouble t0;

  atomr_device_enter (device, NULL);
  cu->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING);
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventCreate (&events[i], CU_EVENT_DISABLE_TIMING);
  t0 = bench_now_us ();
  for (guint i = 0; i < N_PIPE; i++)
    {
      CUevent ev = events[i % WINDOW];
      if (i >= WINDOW)
        cu->cuEventSynchronize (ev);
      cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
      cu->cuEventRecord (ev, stream);
    }
  cu->cuStreamSynchronize (stream);
  t0 = bench_now_us () - t0;
  for (guint i = 0; i < WINDOW; i++)
    cu->cuEventDestroy (events[i]);
  cu->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return N_PIPE / (t0 / 1e6);
}

typedef struct {
  AtomrNvrtcActor   *actor;
  AtomrKernel       *kernel;
  AtomrLaunchConfig *config;
  AtomrKernelArgs   *args;
  GMainLoop         *loop;
  gdouble           *times;
  guint              done, submitted, total;
  gdouble            t0;
  gboolean           pipelined;
} Bench;

static void submit (Bench *b);

static void
on_reply (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Bench *b = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_nvrtc_actor_launch_finish (b->actor, result, &error))
    die ("launch", error);
  if (!b->pipelined && b->done >= 100)
    b->times[b->done - 100] = (gdouble) (bench_now_us () - b->t0);
  b->done++;
  if (b->done == b->total)
    g_main_loop_quit (b->loop);
  else if (b->submitted < b->total)
    submit (b);
}

static void
submit (Bench *b)
{
  b->t0 = bench_now_us ();
  b->submitted++;
  atomr_nvrtc_actor_launch_async (b->actor, b->kernel, b->config, b->args, NULL, on_reply, b);
}

static gdouble
actor_round_trip (Bench *proto)
{
  Bench b = *proto;
  gdouble m;

  b.loop = g_main_loop_new (NULL, FALSE);
  b.times = g_new (gdouble, N_ROUND);
  b.total = N_ROUND + 100;
  submit (&b);
  g_main_loop_run (b.loop);
  m = bench_median (b.times, N_ROUND);
  g_free (b.times);
  g_main_loop_unref (b.loop);
  return m;
}

static gdouble
actor_throughput (Bench *proto)
{
  Bench b = *proto;
  gdouble t0;

  b.loop = g_main_loop_new (NULL, FALSE);
  b.total = N_PIPE;
  b.pipelined = TRUE;
  t0 = bench_now_us ();
  for (guint i = 0; i < WINDOW; i++)
    submit (&b);
  g_main_loop_run (b.loop);
  t0 = bench_now_us () - t0;
  g_main_loop_unref (b.loop);
  return N_PIPE / (t0 / 1e6);
}

static void
rm_cache (const gchar *dir)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (dir);
  atomr_kernel_cache_gc (cache, 0, NULL, NULL, NULL);
  g_autofree gchar *stats = g_build_filename (dir, "stats", NULL);

  g_unlink (stats);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrKernelCache) disk_only = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autofree gchar *dir = NULL;
  gdouble raw_load, disk, disk_module, disk_actor, mem, mem_actor, cold, raw_rt, actor_rt, raw_tp, actor_tp;
  gdouble load_layout, load_driver;
  Bench proto = { 0 };

  if (device == NULL)
    {
      g_printerr ("bench-nvrtc: %s\n", error->message);
      return 77;
    }
  dir = g_dir_make_tmp ("atomr-bench-nvrtc-XXXXXX", &error);
  if (dir == NULL)
    die ("tmpdir", error);
  cache = atomr_kernel_cache_new (dir);
  disk_only = atomr_kernel_cache_new (dir);
  atomr_kernel_cache_set_memory_capacity (disk_only, 0);
  {
    g_autofree gchar *arch = atomr_device_get_arch (device);
    atomr_compile_options_set_arch (options, arch);
    atomr_compile_options_add_name_expression (options, "empty");
  }

  /* Fill the cache (and warm NVRTC up). */
  module = atomr_nvrtc_compile_for_device (EMPTY_SOURCE, NULL, options, cache, device, &error);
  if (module == NULL)
    die ("first compile", error);

  raw_load = raw_module_load (device, atomr_module_get_cubin (module), "empty");
  {
    /* A private copy of the compile (no cache), its layout dropped for
     * the old path. */
    g_autoptr(AtomrModule) own = atomr_nvrtc_compile_for_device (EMPTY_SOURCE, NULL, options, NULL, device, &error);
    if (own == NULL || atomr_module_get_param_layout (own, "empty") == NULL)
      die ("compile (no cache) with a layout", error);
    load_layout = kernel_from_module (device, own, FALSE);
    g_clear_pointer (&atomr_module_get_content (own)->param_layouts, g_strfreev);
    load_driver = kernel_from_module (device, own, TRUE);
  }
  disk = disk_hit_to_kernel (device, disk_only, options);
  disk_module = disk_hit_module_only (disk_only, options);
  actor = atomr_nvrtc_actor_new (device, &error);
  if (actor == NULL)
    die ("actor", error);
  atomr_nvrtc_actor_set_cache (actor, disk_only);
  disk_actor = disk_hit_through_actor (actor, options);
  mem = memory_hit (cache, options);
  atomr_nvrtc_actor_set_cache (actor, cache);
  mem_actor = memory_hit_through_actor (actor, options);
  cold = cold_compile_ms (options);

  printf ("# bench-nvrtc on %s (driver %d)\n", atomr_device_get_name (device),
          atomr_device_get_driver_version ());
  printf ("# kernel loading, median of %d (memory hit: mean of %d)\n", N_LOAD, N_MEM);
  printf ("%-52s %10s %8s\n", "path", "us", "ratio");
  printf ("%-52s %10.2f %8s\n", "raw cuModuleLoadData(CUBIN) + cuModuleGetFunction", raw_load, "1.00");
  printf ("%-52s %10.2f %8.2f\n", "disk-cache hit -> loaded kernel (sync)", disk, disk / raw_load);
  printf ("%-52s %10.2f %8.2f\n", "disk-cache hit -> loaded kernel (actor compile_async)", disk_actor, disk_actor / raw_load);
  printf ("%-52s %10.2f %8.2f\n", "disk-cache hit -> module only (the cache's share)", disk_module, disk_module / raw_load);
  printf ("%-52s %10.2f %8.2f\n", "kernel from a module in memory (stored layout)", load_layout, load_layout / raw_load);
  printf ("%-52s %10.2f %8.2f\n", "kernel from a module, driver queries (old path)", load_driver, load_driver / raw_load);
  printf ("%-52s %10.3f %8s\n", "memory-cache hit (module)", mem, "-");
  printf ("%-52s %10.3f %8s\n", "memory-cache hit (actor compile_module_async, median)", mem_actor, "-");
  printf ("%-52s %10.1f %8s\n", "cold compile of a trivial kernel (ms, median of 5)", cold, "-");

  {
    g_autoptr(GAsyncResult) result = NULL;
    atomr_nvrtc_actor_compile_async (actor, EMPTY_SOURCE, "empty", options, NULL, bench_store_result, &result);
    while (result == NULL)
      g_main_context_iteration (NULL, TRUE);
    kernel = atomr_nvrtc_actor_compile_finish (actor, result, &error);
    if (kernel == NULL)
      die ("compile", error);
  }
  proto.actor = actor;
  proto.kernel = kernel;
  proto.config = atomr_launch_config_new (1, 1, 1, 32, 1, 1);
  proto.args = atomr_kernel_args_new ();

  raw_round_trip (device, atomr_kernel_get_function (kernel));   /* warm-up */
  raw_rt = raw_round_trip (device, atomr_kernel_get_function (kernel));
  actor_rt = actor_round_trip (&proto);
  printf ("# launch -> reply of an empty kernel <<<1, 32>>>, median of %d\n", N_ROUND);
  printf ("%-52s %10s %8s\n", "path", "median_us", "ratio");
  printf ("%-52s %10.2f %8s\n", "raw cuLaunchKernel + event record + event wait", raw_rt, "1.00");
  printf ("%-52s %10.2f %8.2f\n", "actor launch_async, reply on the main loop", actor_rt, actor_rt / raw_rt);

  raw_tp = raw_throughput (device, atomr_kernel_get_function (kernel));
  actor_tp = actor_throughput (&proto);
  printf ("# pipelined launches, window %d, %d launches\n", WINDOW, N_PIPE);
  printf ("%-52s %10s %8s\n", "path", "ops_per_s", "ratio");
  printf ("%-52s %10.0f %8s\n", "raw", raw_tp, "1.00");
  printf ("%-52s %10.0f %8.2f\n", "actor", actor_tp, actor_tp / raw_tp);

  atomr_launch_config_free (proto.config);
  atomr_kernel_args_unref (proto.args);
  rm_cache (dir);
  return 0;
}
