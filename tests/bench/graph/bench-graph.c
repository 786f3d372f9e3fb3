/* bench-graph.c — small operations: eager requests, graphs, raw CUDA
 *
 * Every figure is measured in this run, with its ratio to raw CUDA
 * measured in the same run (median or best of several repetitions):
 *
 *   1. empty kernel, launch -> completion (one round trip): raw
 *      cuLaunchKernel + cuStreamSynchronize vs launch_async + reply;
 *   2. 10 000 pipelined tiny kernels <<<1, 32>>>: raw launches + one sync
 *      vs launch_async without a reply (the last one with a reply), and a
 *      graph of 100 launches replayed 100 times (goal: atomr eager >= 0.97x
 *      raw throughput);
 *   3. a chain of 100 dependent tiny kernels, launch + wait: raw eager,
 *      raw cuGraphLaunch (uploaded once with cuGraphUpload, as CuPy and
 *      atomr do), atomr eager, atomr graph replay (goal: atomr replay >=
 *      3x faster than raw eager, and at least as fast as every peer);
 *   3x. EXPERIMENTS, same run: the raw chain graph in variants that
 *      might explain why CuPy replayed it faster than our raw baseline
 *      (upload or not, CuPy's exact recipe, instantiate flags, stream
 *      flags and priority, memory from cuMemAlloc instead of the pool,
 *      spinning on cuStreamQuery instead of cuStreamSynchronize), timed
 *      interleaved (one launch of each per round) so drift hits all
 *      alike; and atomr's replay with its polling window variants;
 *   4. SGEMM 256^3, FP32 and TF32, 2000 pipelined calls: raw cuBLAS vs
 *      gemm_async (goal <= 1.05x raw per call), and a graph of 100 gemms
 *      replayed 20 times;
 *   5. host cost per operation with the GPU held busy by a spinning
 *      kernel (so nothing waits): raw cuLaunchKernel, and launch_async
 *      from submit to enqueue plus its completion and release — the
 *      envelope's own cost is the difference (goal <= 1 us).
 *
 * Every `inc` kernel adds 1 to x[0]; the final value is checked against
 * the number of launches of all paths.  --json PATH writes the figures
 * for tests/bench/peers (same workloads through PyTorch and CuPy).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The raw baseline calls cuBLAS through the same dlopen() table as the actor. */
#include "atomr-cublas-table-private.h"

#include <atomr.h>
#include <dlfcn.h>
#include "../bench-util.h"
#include "../bench-vmm.h"
#include "core/atomr-actor-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-loader-private.h"
#include "graph/atomr-graph-private.h"

#define CHAIN   100
/* 3y: x at N_OFFSETS places of one allocation, OFFSET_STEP bytes apart */
#define N_OFFSETS 32
#define OFFSET_STEP (4096 + 64)
#define N_CHAIN 300
#define WARMUP  20

#define INC_SOURCE \
  "extern \"C\" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }\n"
#define EMPTY_SOURCE "extern \"C\" __global__ void empty (float *x) { }\n"
#define SPIN_SOURCE \
  "extern \"C\" __global__ void spin (unsigned long long cycles)\n" \
  "{\n" \
  "  long long t0 = clock64 ();\n" \
  "  while (clock64 () - t0 < (long long) cycles)\n" \
  "    ;\n" \
  "}\n"

#define PIPELINED   10000
#define ROUND_TRIPS 2000
#define GEMM_N      256
#define GEMM_CALLS  2000
#define GEMM_GRAPH  100
/* Few enough that the driver's launch queue never fills behind the
 * spinning kernel (a full queue would make the launches wait). */
#define HOST_OPS    500
#define HOST_REPS   7

/* About 50 ms at 2 GHz: far longer than HOST_OPS submissions take. */
#define SPIN_CYCLES 100000000ull

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

/* Raw streams are never destroyed while the bench runs: on the H200
 * (driver 580) a process that has destroyed two streams which had run work
 * replays chains of dependent kernels ~20% slower from then on, every
 * stream and graph of it (bench-chain-bare "nofree" against "keep",
 * 2026-11-29).  atomr keeps its actors' streams (the device's pool), so
 * destroying streams here measured every row after the first section in a
 * state atomr alone does not put a process in, and CuPy's process was not
 * in.  A plain non-blocking stream comes from the spares; one given back
 * waits for the next section; streams of other kinds are kept to the end. */
static GArray *spare_streams;

static CUstream
raw_stream (void)
{
  CUstream stream;

  if (spare_streams && spare_streams->len > 0)
    {
      stream = g_array_index (spare_streams, CUstream, spare_streams->len - 1);
      g_array_set_size (spare_streams, spare_streams->len - 1);
      return stream;
    }
  check (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return stream;
}

static void
raw_stream_done (CUstream stream)
{
  check (ATOMR_CU->cuStreamSynchronize (stream), "cuStreamSynchronize");
  if (spare_streams == NULL)
    spare_streams = g_array_new (FALSE, FALSE, sizeof (CUstream));
  g_array_append_val (spare_streams, stream);
}

/* One chain graph on @x, instantiated and uploaded once to @stream, the
 * stream that launches it (CuPy's graph.upload(), atomr's instantiation). */
static CUgraphExec
chain_exec (CUfunction function, CUdeviceptr x, CUstream stream)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUdeviceptr ptr = x;
  void *params[] = { &ptr };
  CUgraph graph;
  CUgraphExec exec;

  check (cu->cuStreamBeginCapture (stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  for (guint k = 0; k < CHAIN; k++)
    check (cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL), "cuLaunchKernel");
  check (cu->cuStreamEndCapture (stream, &graph), "cuStreamEndCapture");
  check (cu->cuGraphInstantiateWithFlags (&exec, graph, 0), "cuGraphInstantiateWithFlags");
  check (cu->cuGraphUpload (exec, stream), "cuGraphUpload");
  cu->cuGraphDestroy (graph);
  return exec;
}

static gdouble
raw_chain (AtomrDevice *device, CUfunction function, CUdeviceptr x, gboolean graph)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble t[N_CHAIN];
  void *params[] = { &x };
  CUstream stream;
  CUgraphExec exec = NULL;

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  if (graph)
    exec = chain_exec (function, x, stream);
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
  raw_stream_done (stream);
  atomr_device_leave (device);
  return bench_median (t, N_CHAIN);
}

static void
launch (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
        AtomrKernelArgs *args, GAsyncResult **result)
{
  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL,
                                  result ? bench_store_result : NULL, result);
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
      bench_wait_for (&result);
      if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
        die ("launch", error);
      if (i >= WARMUP)
        t[i - WARMUP] = bench_now_us () - t0;
    }
  return bench_median (t, N_CHAIN);
}

/* @spin_usec: the actor's spin-usec during the run (-1: left as it is);
 * @hint: whether replays ask for a polling window of their own (the
 * library's default). */
static gdouble
atomr_graph_chain (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                   AtomrKernelArgs *args, gint spin_usec, gboolean hint)
{
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("chain-100");
  g_autoptr(GError) error = NULL;
  AtomrActor *actors[] = { ATOMR_ACTOR (actor) };
  guint old_spin = atomr_actor_get_spin_usec (ATOMR_ACTOR (actor));
  gdouble t[N_CHAIN];

  atomr_graph_set_replay_spin_hint (graph, hint);
  if (spin_usec >= 0)
    atomr_actor_set_spin_usec (ATOMR_ACTOR (actor), (guint) spin_usec);
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

      atomr_graph_replay_async (graph, ATOMR_ACTOR (actor), NULL, bench_store_result, &result);
      bench_wait_for (&result);
      if (!atomr_graph_replay_finish (graph, result, &error))
        die ("replay", error);
      if (i >= WARMUP)
        t[i - WARMUP] = bench_now_us () - t0;
    }
  atomr_actor_set_spin_usec (ATOMR_ACTOR (actor), old_spin);
  return bench_median (t, N_CHAIN);
}

/* 3y through atomr: the replayed chain with x at the N_OFFSETS places
 * of one cuMemAlloc allocation (AtomrBuffers over them), median over the
 * places of each place's median.  Where x lies moves a replay by up to 13%,
 * so the peers compare this median with theirs over the same steps. */
static gdouble
atomr_chain_places (AtomrDevice *device, AtomrNvrtcActor *actor, AtomrKernel *kernel,
                    AtomrLaunchConfig *config)
{
  g_autoptr(GError) error = NULL;
  gdouble t[N_OFFSETS];
  CUdeviceptr base = 0;

  atomr_device_enter (device, NULL);
  check (ATOMR_CU->cuMemAlloc (&base, N_OFFSETS * OFFSET_STEP + 64), "cuMemAlloc");
  check (ATOMR_CU->cuMemsetD8Async (base, 0, N_OFFSETS * OFFSET_STEP + 64, NULL), "cuMemsetD8Async");
  check (ATOMR_CU->cuCtxSynchronize (), "cuCtxSynchronize");
  atomr_device_leave (device);
  for (guint o = 0; o < N_OFFSETS; o++)
    {
      g_autoptr(AtomrBuffer) x = atomr_buffer_new_for_device_pointer (device, ATOMR_DTYPE_F32, 1,
                                                                     base + (CUdeviceptr) o * OFFSET_STEP,
                                                                     NULL, NULL, &error);
      g_autoptr(AtomrKernelArgs) args = NULL;

      if (x == NULL)
        die ("buffer_new_for_device_pointer", error);
      args = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), x);
      t[o] = atomr_graph_chain (actor, kernel, config, args, -1, TRUE);
    }
  atomr_device_enter (device, NULL);
  ATOMR_CU->cuCtxSynchronize ();
  ATOMR_CU->cuMemFree (base);
  atomr_device_leave (device);
  bench_median (t, N_OFFSETS);   /* sorts */
  printf ("# 3y through atomr (fresh process):       chain replay over %d places: min %.2f, median %.2f, "
          "max %.2f us\n", N_OFFSETS, t[0], t[N_OFFSETS / 2], t[N_OFFSETS - 1]);
  return t[N_OFFSETS / 2];
}

/* 3x. The raw chain graph in variants, timed interleaved. */
typedef enum
{
  V_NO_UPLOAD,      /* the old raw row: capture, instantiate, launch */
  V_UPLOAD,         /* + cuGraphUpload once (the raw row now) */
  V_CUPY,           /* CuPy's recipe: relaxed capture, upload, graph destroyed */
  V_INST_UPLOAD,    /* cuGraphInstantiateWithParams (FLAG_UPLOAD) */
  V_NODE_PRIORITY,  /* + CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY */
  V_BLOCKING,       /* a blocking stream (flags 0), as cupy.cuda.Stream() */
  V_HIGH_PRIORITY,  /* the greatest stream priority */
  V_MEM_ALLOC,      /* x from cuMemAlloc, not atomr's stream-ordered pool */
  V_MEM_ASYNC,      /* x from cuMemAllocAsync (the device's default pool) */
  V_VMM,            /* x mapped with cuMemCreate + cuMemMap */
  V_VMM_COMP,       /* the same, compressible memory asked for */
  V_SPIN_QUERY,     /* wait by spinning on cuStreamQuery */
  V_NO_UPLOAD_SPIN, /* no upload, spinning on cuStreamQuery */
  V_OWN_CUBIN,      /* inc compiled here as CuPy does (NVRTC -arch=sm_XX, cubin,
                     * cuModuleLoadData), x from cuMemAlloc */
  V_OWN_PTX,        /* inc compiled here to PTX, JIT-compiled by the driver */
  N_VARIANTS
} Variant;

static const gchar *variant_names[N_VARIANTS] = {
  "no upload (raw row before)",
  "cuGraphUpload once (raw row now)",
  "CuPy's: relaxed capture, upload, CUgraph destroyed",
  "instantiate with FLAG_UPLOAD (cuGraphInstantiateWithParams)",
  "upload + FLAG_USE_NODE_PRIORITY",
  "upload, blocking stream (flags 0)",
  "upload, greatest stream priority",
  "upload, x from cuMemAlloc (not the pool)",
  "upload, x from cuMemAllocAsync (default pool)",
  "upload, x from cuMemCreate + cuMemMap",
  "upload, x from cuMemCreate, compressible",
  "upload, wait: spin on cuStreamQuery",
  "no upload, wait: spin on cuStreamQuery",
  "upload, cuMemAlloc x, inc compiled as CuPy (cubin)",
  "upload, cuMemAlloc x, inc as PTX (driver JIT)",
};

typedef struct
{
  CUstream    stream;
  CUgraph     graph;
  CUgraphExec exec;
  CUdeviceptr own_x;    /* V_MEM_ALLOC, V_MEM_ASYNC, V_OWN_* */
  CUmodule    module;   /* V_OWN_* */
  BenchVmm    vmm;      /* V_VMM */
  gboolean    ok;
  gdouble     t[N_CHAIN];
} Experiment;

/* The inc kernel compiled here the way CuPy's RawModule does it (NVRTC,
 * -arch=sm_XX, the cubin loaded with cuModuleLoadData), or as PTX for the
 * driver to JIT-compile: whether atomr's compiled kernel, rather than the
 * memory or the graph, is what CuPy's chain replay is faster by. */
static CUfunction
own_inc (int ordinal, gboolean cubin, CUmodule *module)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  g_autoptr(GError) error = NULL;
  const AtomrNvrtcLib *lib = atomr_nvrtc_load (&error);
  g_autofree gchar *arch = NULL;
  g_autofree gchar *image = NULL;
  nvrtcProgram prog;
  const char *opts[1];
  CUfunction function = NULL;
  CUdevice dev;
  int major = 0, minor = 0;
  size_t size = 0;

  if (lib == NULL)
    {
      printf ("# own inc: %s\n", error->message);
      return NULL;
    }
  cu->cuDeviceGet (&dev, ordinal);
  cu->cuDeviceGetAttribute (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cu->cuDeviceGetAttribute (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  arch = g_strdup_printf ("-arch=%s_%d%d", cubin ? "sm" : "compute", major, minor);
  opts[0] = arch;
  if (lib->nvrtcCreateProgram (&prog, INC_SOURCE, "inc.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
    return NULL;
  if (lib->nvrtcCompileProgram (prog, 1, opts) == NVRTC_SUCCESS)
    {
      if (cubin && lib->nvrtcGetCUBINSize (prog, &size) == NVRTC_SUCCESS && size > 0)
        {
          image = g_malloc (size);
          lib->nvrtcGetCUBIN (prog, image);
        }
      else if (!cubin && lib->nvrtcGetPTXSize (prog, &size) == NVRTC_SUCCESS && size > 0)
        {
          image = g_malloc (size);
          lib->nvrtcGetPTX (prog, image);
        }
    }
  lib->nvrtcDestroyProgram (&prog);
  if (image == NULL)
    return NULL;
  check (cu->cuModuleLoadData (module, image), "cuModuleLoadData");
  check (cu->cuModuleGetFunction (&function, *module, "inc"), "cuModuleGetFunction");
  return function;
}

/* What the driver says of a compiled function: registers, versions,
 * local/const/shared sizes. */
static void
describe_function (const gchar *what, CUfunction f)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  int regs = -1, bin = -1, ptx = -1, local = -1, cnst = -1, shared = -1, maxt = -1;

  if (f == NULL)
    return;
  cu->cuFuncGetAttribute (&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
  cu->cuFuncGetAttribute (&bin, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f);
  cu->cuFuncGetAttribute (&ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, f);
  cu->cuFuncGetAttribute (&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
  cu->cuFuncGetAttribute (&cnst, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f);
  cu->cuFuncGetAttribute (&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
  cu->cuFuncGetAttribute (&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
  printf ("# function %-34s regs %d, binary %d, ptx %d, local %d B, const %d B, shared %d B, max threads %d\n",
          what, regs, bin, ptx, local, cnst, shared, maxt);
}

static void
experiment_setup (Experiment *e, Variant v, CUfunction function, CUdeviceptr x, int ordinal)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUdeviceptr ptr = x;
  void *params[] = { &ptr };
  unsigned int flags = v == V_BLOCKING ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING;

  e->ok = TRUE;
  if (v == V_HIGH_PRIORITY)
    {
      int least = 0, greatest = 0;
      check (cu->cuCtxGetStreamPriorityRange (&least, &greatest), "cuCtxGetStreamPriorityRange");
      check (cu->cuStreamCreateWithPriority (&e->stream, CU_STREAM_NON_BLOCKING, greatest),
             "cuStreamCreateWithPriority");
    }
  else if (v == V_BLOCKING)
    check (cu->cuStreamCreate (&e->stream, flags), "cuStreamCreate");
  else
    e->stream = raw_stream ();
  if (v == V_OWN_CUBIN || v == V_OWN_PTX)
    {
      function = own_inc (ordinal, v == V_OWN_CUBIN, &e->module);
      if (function == NULL)
        {
          e->ok = FALSE;
          return;
        }
      describe_function (v == V_OWN_CUBIN ? "inc, compiled here (cubin)" : "inc, compiled here (PTX)", function);
    }
  if (v == V_MEM_ALLOC || v == V_MEM_ASYNC || v == V_OWN_CUBIN || v == V_OWN_PTX)
    {
      if (v != V_MEM_ASYNC)
        check (cu->cuMemAlloc (&e->own_x, sizeof (gfloat)), "cuMemAlloc");
      else
        check (cu->cuMemAllocAsync (&e->own_x, sizeof (gfloat), e->stream), "cuMemAllocAsync");
      check (cu->cuMemsetD32Async (e->own_x, 0, 1, e->stream), "cuMemsetD32Async");
      ptr = e->own_x;
    }
  if (v == V_VMM || v == V_VMM_COMP)
    {
      if (!bench_vmm_alloc (&e->vmm, ordinal, sizeof (gfloat), v == V_VMM_COMP))
        {
          e->ok = FALSE;
          return;
        }
      check (cu->cuMemsetD32Async (e->vmm.ptr, 0, 1, e->stream), "cuMemsetD32Async");
      ptr = e->vmm.ptr;
    }
  check (cu->cuStreamBeginCapture (e->stream, v == V_CUPY ? CU_STREAM_CAPTURE_MODE_RELAXED
                                                          : CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
         "cuStreamBeginCapture");
  for (guint k = 0; k < CHAIN; k++)
    check (cu->cuLaunchKernel (function, 1, 1, 1, 32, 1, 1, 0, e->stream, params, NULL), "cuLaunchKernel");
  check (cu->cuStreamEndCapture (e->stream, &e->graph), "cuStreamEndCapture");
  if (v == V_INST_UPLOAD)
    {
      CUDA_GRAPH_INSTANTIATE_PARAMS ip = { 0 };

      if (cu->cuGraphInstantiateWithParams == NULL)
        {
          e->ok = FALSE;
          return;
        }
      ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
      ip.hUploadStream = e->stream;
      check (cu->cuGraphInstantiateWithParams (&e->exec, e->graph, &ip), "cuGraphInstantiateWithParams");
    }
  else
    check (cu->cuGraphInstantiateWithFlags (&e->exec, e->graph,
                                            v == V_NODE_PRIORITY ? CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY : 0),
           "cuGraphInstantiateWithFlags");
  if (v != V_NO_UPLOAD && v != V_NO_UPLOAD_SPIN && v != V_INST_UPLOAD)
    check (cu->cuGraphUpload (e->exec, e->stream), "cuGraphUpload");
  if (v == V_CUPY)
    {
      cu->cuGraphDestroy (e->graph);
      e->graph = NULL;
    }
  check (cu->cuStreamSynchronize (e->stream), "cuStreamSynchronize");
}

static void
experiment_run_once (Experiment *e, Variant v, guint i)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble t0 = bench_now_us ();

  check (cu->cuGraphLaunch (e->exec, e->stream), "cuGraphLaunch");
  if (v == V_SPIN_QUERY || v == V_NO_UPLOAD_SPIN)
    {
      CUresult res;
      while ((res = cu->cuStreamQuery (e->stream)) == CUDA_ERROR_NOT_READY)
        ;
      check (res, "cuStreamQuery");
    }
  else
    check (cu->cuStreamSynchronize (e->stream), "cuStreamSynchronize");
  if (i >= WARMUP)
    e->t[i - WARMUP] = bench_now_us () - t0;
}

/* Fills @out (µs, median; -1 where a variant is not available) and adds
 * the increments of x to *@n_inc. */
static void
chain_experiments (AtomrDevice *device, CUfunction function, CUdeviceptr x, gdouble *out, guint *n_inc)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  Experiment *e = g_new0 (Experiment, N_VARIANTS);

  atomr_device_enter (device, NULL);
  describe_function ("inc, atomr's kernel cache", function);
  for (guint v = 0; v < N_VARIANTS; v++)
    experiment_setup (&e[v], v, function, x, atomr_device_get_ordinal (device));
  bench_describe_memory ("atomr's pool (AtomrBuffer)", x);
  bench_describe_memory ("cuMemAlloc", e[V_MEM_ALLOC].own_x);
  bench_describe_memory ("cuMemAllocAsync (default pool)", e[V_MEM_ASYNC].own_x);
  if (e[V_VMM].ok)
    bench_describe_memory ("cuMemCreate", e[V_VMM].vmm.ptr);
  if (e[V_VMM_COMP].ok)
    bench_describe_memory ("cuMemCreate, compressible", e[V_VMM_COMP].vmm.ptr);
  for (guint i = 0; i < N_CHAIN + WARMUP; i++)
    for (guint v = 0; v < N_VARIANTS; v++)
      if (e[v].ok)
        experiment_run_once (&e[v], v, i);
  for (guint v = 0; v < N_VARIANTS; v++)
    {
      out[v] = e[v].ok ? bench_median (e[v].t, N_CHAIN) : -1.0;
      if (e[v].ok && v != V_MEM_ALLOC && v != V_MEM_ASYNC && v != V_VMM && v != V_VMM_COMP &&
          v != V_OWN_CUBIN && v != V_OWN_PTX)
        *n_inc += (N_CHAIN + WARMUP) * CHAIN;
      if (e[v].exec)
        cu->cuGraphExecDestroy (e[v].exec);
      if (e[v].graph)
        cu->cuGraphDestroy (e[v].graph);
      if (e[v].own_x && v != V_MEM_ASYNC)
        cu->cuMemFree (e[v].own_x);
      else if (e[v].own_x)
        {
          cu->cuMemFreeAsync (e[v].own_x, e[v].stream);
          cu->cuStreamSynchronize (e[v].stream);
        }
      bench_vmm_free (&e[v].vmm);
      if (e[v].module)
        cu->cuModuleUnload (e[v].module);
      if (v == V_HIGH_PRIORITY || v == V_BLOCKING)
        cu->cuStreamSynchronize (e[v].stream);   /* kept to the end, see raw_stream() */
      else
        raw_stream_done (e[v].stream);
    }
  atomr_device_leave (device);
  g_free (e);
}

/* 3y. Where x lies, not what kind of memory it is: the chain replayed on
 * x at N_OFFSETS places in one cuMemAlloc allocation (steps of 4 KiB +
 * 64 B, so that pages and cache lines both move), timed interleaved.  A
 * dependent read-modify-write of one word per kernel waits on the L2
 * slice that holds it; on a GPU whose L2 is split in two partitions the
 * far one costs more.  If the times split with the offset, the memory
 * kinds of 3x (and the peers' chain rows) differ by where their x
 * happened to land. */
#define N_OFFSET_REPS 40

static void
chain_offsets (AtomrDevice *device, CUfunction function, gdouble *out)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUdeviceptr base = 0;
  CUstream stream;
  CUgraphExec exec[N_OFFSETS];
  gdouble t[N_OFFSETS][N_OFFSET_REPS];

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  check (cu->cuMemAlloc (&base, N_OFFSETS * OFFSET_STEP + 64), "cuMemAlloc");
  check (cu->cuMemsetD8Async (base, 0, N_OFFSETS * OFFSET_STEP + 64, stream), "cuMemsetD8Async");
  for (guint o = 0; o < N_OFFSETS; o++)
    exec[o] = chain_exec (function, base + (CUdeviceptr) o * OFFSET_STEP, stream);
  check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
  for (guint r = 0; r < N_OFFSET_REPS + WARMUP; r++)
    for (guint o = 0; o < N_OFFSETS; o++)
      {
        gdouble t0 = bench_now_us ();
        check (cu->cuGraphLaunch (exec[o], stream), "cuGraphLaunch");
        check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
        if (r >= WARMUP)
          t[o][r - WARMUP] = bench_now_us () - t0;
      }
  for (guint o = 0; o < N_OFFSETS; o++)
    {
      out[o] = bench_median (t[o], N_OFFSET_REPS);
      cu->cuGraphExecDestroy (exec[o]);
    }
  cu->cuMemFree (base);
  raw_stream_done (stream);
  atomr_device_leave (device);
}

static gdouble
time_exec (CUgraphExec exec, CUstream stream)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gdouble t[N_OFFSET_REPS];

  for (guint r = 0; r < N_OFFSET_REPS + WARMUP; r++)
    {
      gdouble t0 = bench_now_us ();
      check (cu->cuGraphLaunch (exec, stream), "cuGraphLaunch");
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      if (r >= WARMUP)
        t[r - WARMUP] = bench_now_us () - t0;
    }
  return bench_median (t, N_OFFSET_REPS);
}

/* 3y as a probe between sections: the replay over the 32 places, and of
 * one graph made at the first probe and kept (same stream, same x).
 *
 * What it showed on the H200 (2026-11-29): every replay of the chain ran
 * about 20% slower (median over the places 86.8 -> 104.7 us, the kept
 * graph 89 -> 107) once the process had made a second stream, run a few
 * hundred launch + sync round trips on it and destroyed it, twice — and
 * stayed so for the life of the process, whatever came after (idle,
 * new graphs, new streams, new memory).  The same happens without atomr:
 * bench-chain-bare reproduces it from a C program that holds nothing but
 * the driver ("churn"; not with graphs alone, "churn-graphs").  Here it
 * happens by the end of section 1 (its raw round trips make, use and
 * destroy a stream), so every row after it measures the slower state;
 * CuPy's peer process, one stream, measures the faster one.  See
 * DESIGN-NOTES, "The chain replay's 20%". */
static gdouble
probe_places (AtomrDevice *device, CUfunction function, const gchar *when)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  static CUstream early_stream;
  static CUdeviceptr early_x;
  static CUgraphExec early_exec;
  gdouble t[N_OFFSETS], kept;

  chain_offsets (device, function, t);
  bench_median (t, N_OFFSETS);   /* sorts */
  atomr_device_enter (device, NULL);
  if (early_exec == NULL)
    {
      early_stream = raw_stream ();
      check (cu->cuMemAlloc (&early_x, 64), "cuMemAlloc");
      check (cu->cuMemsetD8Async (early_x, 0, 64, early_stream), "cuMemsetD8Async");
      early_exec = chain_exec (function, early_x, early_stream);
    }
  kept = time_exec (early_exec, early_stream);
  atomr_device_leave (device);
  printf ("# 3y probe %-30s chain replay over %d places: min %.2f, median %.2f, max %.2f us; "
          "the first probe's graph %.2f us\n", when, N_OFFSETS, t[0], t[N_OFFSETS / 2], t[N_OFFSETS - 1], kept);
  return t[N_OFFSETS / 2];
}

/* The device address of @args' first argument (a buffer). */
static CUdeviceptr
first_ptr (AtomrKernelArgs *args)
{
  return atomr_buffer_get_ptr (g_array_index (args->args, AtomrKernelArg, 0).buffer);
}

static AtomrKernel *
compile (AtomrNvrtcActor *actor, const gchar *source, const gchar *name)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  AtomrKernel *kernel;

  atomr_nvrtc_actor_compile_async (actor, source, name, NULL, NULL, bench_store_result, &result);
  bench_wait_for (&result);
  kernel = atomr_nvrtc_actor_compile_finish (actor, result, &error);
  if (kernel == NULL)
    die ("compile", error);
  return kernel;
}

static void
launch_wait (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
             AtomrKernelArgs *args)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  launch (actor, kernel, config, args, &result);
  bench_wait_for (&result);
  if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
    die ("launch", error);
}

static gdouble
percall_median (gdouble *t, guint n)
{
  return bench_median (t, n);
}

/* The round trip's parts (medians, us): where the time between
 * launch_async and the reply goes, against raw's launch call and wait. */
typedef struct
{
  gdouble raw_launch, raw_wait;       /* cuLaunchKernel; cuStreamSynchronize */
  gdouble at_whole, at_submit, at_to_reply, at_after; /* the whole; launch_async
                                       * returns; its callback runs; the iteration
                                       * that ran it returns */
} RoundTripParts;

typedef struct
{
  GAsyncResult *result;
  gdouble       t;
} StampedResult;

static void
stamp_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  StampedResult *r = user_data;

  r->t = bench_now_us ();
  r->result = g_object_ref (result);
}

/* One round trip through @actor: the whole, and the parts (launch_async
 * returns; its callback runs; the iteration that ran it returns). */
static void
atomr_round_trip (AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrLaunchConfig *config,
                  AtomrKernelArgs *args, gdouble *whole, gdouble *submit, gdouble *to_reply,
                  gdouble *after)
{
  StampedResult r = { NULL, 0 };
  g_autoptr(GError) error = NULL;
  gdouble t0 = bench_now_us (), ts, te;

  atomr_nvrtc_actor_launch_async (actor, kernel, config, args, NULL, stamp_result, &r);
  ts = bench_now_us ();
  while (r.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  te = bench_now_us ();
  if (!atomr_nvrtc_actor_launch_finish (actor, r.result, &error))
    die ("launch", error);
  g_object_unref (r.result);
  *whole = bench_now_us () - t0;
  *submit = ts - t0;
  *to_reply = r.t - ts;
  *after = te - r.t;
}

/* 1. One round trip each, median.  @noword (may be NULL): an actor whose
 * stream has no fence word (made with ATOMR_FENCE_WORD=0), timed
 * interleaved with @actor. */
static void
round_trip (AtomrDevice *device, AtomrNvrtcActor *actor, AtomrNvrtcActor *noword,
            AtomrKernel *kernel, AtomrLaunchConfig *config, AtomrKernelArgs *args,
            gdouble *raw, gdouble *at, RoundTripParts *parts, RoundTripParts *noword_parts)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  AtomrNvrtcActor *actors[2] = { actor, noword };
  RoundTripParts *out[2] = { parts, noword_parts };
  /* [actor][whole, submit, to reply, after]: ROUND_TRIPS samples each */
  g_autofree gdouble *t = g_new (gdouble, 8 * ROUND_TRIPS);
  gdouble *col[2][4];
  CUdeviceptr x = first_ptr (args);
  void *params[] = { &x };
  CUstream stream;

  for (guint a = 0; a < 2; a++)
    for (guint c = 0; c < 4; c++)
      col[a][c] = t + (4 * a + c) * ROUND_TRIPS;

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  for (guint i = 0; i < ROUND_TRIPS + WARMUP; i++)
    {
      gdouble t0 = bench_now_us (), tl;
      check (cu->cuLaunchKernel (atomr_kernel_get_function (kernel), 1, 1, 1, 32, 1, 1, 0, stream,
                                 params, NULL), "cuLaunchKernel");
      tl = bench_now_us ();
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      if (i >= WARMUP)
        {
          col[0][0][i - WARMUP] = bench_now_us () - t0;
          col[0][1][i - WARMUP] = tl - t0;
          col[0][2][i - WARMUP] = t0 + col[0][0][i - WARMUP] - tl;
        }
    }
  raw_stream_done (stream);
  atomr_device_leave (device);
  *raw = percall_median (col[0][0], ROUND_TRIPS);
  parts->raw_launch = bench_median (col[0][1], ROUND_TRIPS);
  parts->raw_wait = bench_median (col[0][2], ROUND_TRIPS);
  *noword_parts = *parts;
  noword_parts->at_whole = -1.0;
  probe_places (device, atomr_kernel_get_function (kernel), "after section 1's raw part:");

  /* The two actors interleaved, one round trip each per step. */
  for (guint i = 0; i < ROUND_TRIPS + WARMUP; i++)
    for (guint a = 0; a < 2; a++)
      {
        gdouble v[4];

        if (actors[a] == NULL)
          continue;
        atomr_round_trip (actors[a], kernel, config, args, &v[0], &v[1], &v[2], &v[3]);
        for (guint c = 0; i >= WARMUP && c < 4; c++)
          col[a][c][i - WARMUP] = v[c];
      }
  for (guint a = 0; a < 2; a++)
    {
      if (actors[a] == NULL)
        continue;
      out[a]->at_whole = percall_median (col[a][0], ROUND_TRIPS);
      out[a]->at_submit = bench_median (col[a][1], ROUND_TRIPS);
      out[a]->at_to_reply = bench_median (col[a][2], ROUND_TRIPS);
      out[a]->at_after = bench_median (col[a][3], ROUND_TRIPS);
    }
  *at = parts->at_whole;
}

/* 2. PIPELINED tiny kernels, best of 3 each: total µs. */
static void
pipelined (AtomrDevice *device, AtomrNvrtcActor *actor, AtomrKernel *kernel,
           AtomrLaunchConfig *config, AtomrKernelArgs *args,
           gdouble *raw, gdouble *at, gdouble *at_graph, gdouble *at_threaded, guint *n_inc)
{
  /* The same actor with a thread of its own (AtomrActor:own-thread): the
   * launches go to the GPU from that thread while this one submits. */
  g_autoptr(GError) thread_error = NULL;
  g_autoptr(AtomrNvrtcActor) threaded = g_initable_new (ATOMR_TYPE_NVRTC_ACTOR, NULL, &thread_error,
                                                        "device", device, "own-thread", TRUE, NULL);
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUdeviceptr x = first_ptr (args);
  void *params[] = { &x };
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("pipelined-100");
  g_autoptr(GError) error = NULL;
  AtomrActor *actors[] = { ATOMR_ACTOR (actor) };
  CUstream stream;

  if (threaded == NULL)
    die ("own-thread actor", thread_error);
  *raw = *at = *at_graph = *at_threaded = G_MAXDOUBLE;
  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  atomr_device_leave (device);

  if (!atomr_graph_begin_capture (graph, actors, 1, &error))
    die ("begin_capture", error);
  for (guint k = 0; k < 100; k++)
    launch (actor, kernel, config, args, NULL);
  if (!atomr_graph_end_capture (graph, &error))
    die ("end_capture", error);

  for (guint rep = 0; rep < 4; rep++)
    {
      gdouble t0;

      atomr_device_enter (device, NULL);
      t0 = bench_now_us ();
      for (guint k = 0; k < PIPELINED; k++)
        check (cu->cuLaunchKernel (atomr_kernel_get_function (kernel), 1, 1, 1, 32, 1, 1, 0, stream,
                                   params, NULL), "cuLaunchKernel");
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      if (rep > 0)
        *raw = MIN (*raw, bench_now_us () - t0);
      atomr_device_leave (device);

      t0 = bench_now_us ();
      for (guint k = 0; k + 1 < PIPELINED; k++)
        launch (actor, kernel, config, args, NULL);
      launch_wait (actor, kernel, config, args);
      if (rep > 0)
        *at = MIN (*at, bench_now_us () - t0);

      t0 = bench_now_us ();
      {
        g_autoptr(GAsyncResult) result = NULL;
        for (guint k = 0; k + 1 < PIPELINED / 100; k++)
          atomr_graph_replay_async (graph, ATOMR_ACTOR (actor), NULL, NULL, NULL);
        atomr_graph_replay_async (graph, ATOMR_ACTOR (actor), NULL, bench_store_result, &result);
        bench_wait_for (&result);
        if (!atomr_graph_replay_finish (graph, result, &error))
          die ("replay", error);
      }
      if (rep > 0)
        *at_graph = MIN (*at_graph, bench_now_us () - t0);

      t0 = bench_now_us ();
      for (guint k = 0; k + 1 < PIPELINED; k++)
        launch (threaded, kernel, config, args, NULL);
      launch_wait (threaded, kernel, config, args);
      if (rep > 0)
        *at_threaded = MIN (*at_threaded, bench_now_us () - t0);
      *n_inc += 4 * PIPELINED;
    }
  g_clear_object (&threaded);
  atomr_device_enter (device, NULL);
  raw_stream_done (stream);
  atomr_device_leave (device);
}

static void
gemm_on (AtomrBlasActor *blas, AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c,
         GAsyncResult **result)
{
  atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, GEMM_N, GEMM_N, GEMM_N,
                               1.0, 0.0, a, GEMM_N, b, GEMM_N, 0.0, 0.0, c, GEMM_N, NULL,
                               result ? bench_store_result : NULL, result);
}

static void
gemm_wait (AtomrBlasActor *blas, AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  gemm_on (blas, a, b, c, &result);
  bench_wait_for (&result);
  if (!atomr_blas_actor_gemm_finish (blas, result, &error))
    die ("gemm", error);
}

/* 4. GEMM_CALLS pipelined SGEMMs, µs per call, best of 4 after a warm-up. */
static void
gemm_rows (AtomrDevice *device, gboolean tf32, gdouble *raw, gdouble *at, gdouble *at_graph)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (device, &error);
  g_autoptr(AtomrBuffer) a = NULL, b = NULL, c = NULL;
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("gemm-100");
  AtomrActor *actors[1];
  cublasHandle_t handle = NULL;
  CUstream stream = NULL;
  const float one = 1.0f, zero = 0.0f;
  gboolean graph_ok = FALSE;
  const float *pa, *pb;
  float *pc;

  if (blas == NULL)
    die ("blas actor", error);
  actors[0] = ATOMR_ACTOR (blas);
  atomr_blas_actor_set_math_mode (blas, tf32 ? ATOMR_BLAS_MATH_TF32 : ATOMR_BLAS_MATH_DEFAULT);
  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, GEMM_N * GEMM_N, &error);
  b = atomr_buffer_new (device, ATOMR_DTYPE_F32, GEMM_N * GEMM_N, &error);
  c = atomr_buffer_new (device, ATOMR_DTYPE_F32, GEMM_N * GEMM_N, &error);
  if (c == NULL || !atomr_buffer_fill_sync (a, 0.5, NULL, &error) ||
      !atomr_buffer_fill_sync (b, 0.25, NULL, &error))
    die ("gemm buffers", error);
  pa = (const float *) (uintptr_t) atomr_buffer_get_ptr (a);
  pb = (const float *) (uintptr_t) atomr_buffer_get_ptr (b);
  pc = (float *) (uintptr_t) atomr_buffer_get_ptr (c);

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  if (!atomr_cublas_load (&error))
    die ("cuBLAS", error);
  if (cublasCreate (&handle) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream (handle, (cudaStream_t) stream) != CUBLAS_STATUS_SUCCESS ||
      cublasSetMathMode (handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH)
      != CUBLAS_STATUS_SUCCESS)
    die ("cublasCreate", NULL);
  atomr_device_leave (device);

  gemm_wait (blas, a, b, c);   /* the handle and its kernels, before the capture */
  if (!atomr_graph_begin_capture (graph, actors, 1, &error))
    die ("begin_capture", error);
  for (guint k = 0; k < GEMM_GRAPH; k++)
    gemm_on (blas, a, b, c, NULL);
  if (!atomr_graph_end_capture (graph, &error))
    die ("end_capture", error);
  graph_ok = TRUE;

  *raw = *at = *at_graph = G_MAXDOUBLE;
  for (guint rep = 0; rep < 5; rep++)
    {
      gdouble t0;

      atomr_device_enter (device, NULL);
      t0 = bench_now_us ();
      for (guint k = 0; k < GEMM_CALLS; k++)
        if (cublasSgemm (handle, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one, pa, GEMM_N,
                         pb, GEMM_N, &zero, pc, GEMM_N) != CUBLAS_STATUS_SUCCESS)
          die ("raw cublasSgemm", NULL);
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      if (rep > 0)
        *raw = MIN (*raw, (bench_now_us () - t0) / GEMM_CALLS);
      atomr_device_leave (device);

      t0 = bench_now_us ();
      for (guint k = 0; k + 1 < GEMM_CALLS; k++)
        gemm_on (blas, a, b, c, NULL);
      gemm_wait (blas, a, b, c);
      if (rep > 0)
        *at = MIN (*at, (bench_now_us () - t0) / GEMM_CALLS);

      if (!graph_ok)
        continue;
      t0 = bench_now_us ();
      {
        g_autoptr(GAsyncResult) result = NULL;
        for (guint k = 0; k + 1 < GEMM_CALLS / GEMM_GRAPH; k++)
          atomr_graph_replay_async (graph, ATOMR_ACTOR (blas), NULL, NULL, NULL);
        atomr_graph_replay_async (graph, ATOMR_ACTOR (blas), NULL, bench_store_result, &result);
        bench_wait_for (&result);
        if (!atomr_graph_replay_finish (graph, result, &error))
          {
            /* The other rows still count: report it and go on. */
            g_printerr ("bench-graph: GEMM graph replay failed: %s\n", error->message);
            g_clear_error (&error);
            graph_ok = FALSE;
            continue;
          }
      }
      if (rep > 0)
        *at_graph = MIN (*at_graph, (bench_now_us () - t0) / GEMM_CALLS);
    }
  if (!graph_ok)
    *at_graph = -1.0;

  atomr_device_enter (device, NULL);
  cublasDestroy (handle);
  raw_stream_done (stream);
  atomr_device_leave (device);
}

/* 5. Host cost per operation, the GPU kept busy by @spin on the same
 * stream so that nothing waits: median over HOST_REPS of HOST_OPS. */
static void
host_cost (AtomrDevice *device, AtomrNvrtcActor *actor, AtomrKernel *kernel, AtomrKernel *spin,
           AtomrLaunchConfig *config, AtomrKernelArgs *args,
           gdouble *raw, gdouble *submit, gdouble *complete, guint *n_inc)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  CUdeviceptr x = first_ptr (args);
  unsigned long long cycles = SPIN_CYCLES;
  void *params[] = { &x };
  void *spin_params[] = { &cycles };
  g_autoptr(AtomrKernelArgs) spin_args = atomr_kernel_args_add_u64 (atomr_kernel_args_new (), SPIN_CYCLES);
  g_autoptr(AtomrLaunchConfig) one = atomr_launch_config_new (1, 1, 1, 1, 1, 1);
  gdouble t_raw[HOST_REPS], t_submit[HOST_REPS], t_complete[HOST_REPS];
  CUstream stream;

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  atomr_device_leave (device);

  for (guint rep = 0; rep < HOST_REPS; rep++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GError) error = NULL;
      CUstream actor_stream;
      gdouble t0;

      /* Raw: the launches only (the spin kernel keeps them queued). */
      atomr_device_enter (device, NULL);
      check (cu->cuLaunchKernel (atomr_kernel_get_function (spin), 1, 1, 1, 1, 1, 1, 0, stream,
                                 spin_params, NULL), "cuLaunchKernel");
      t0 = bench_now_us ();
      for (guint k = 0; k < HOST_OPS; k++)
        check (cu->cuLaunchKernel (atomr_kernel_get_function (kernel), 1, 1, 1, 32, 1, 1, 0, stream,
                                   params, NULL), "cuLaunchKernel");
      t_raw[rep] = (bench_now_us () - t0) / HOST_OPS;
      check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
      atomr_device_leave (device);

      /* The actor: while this thread owns the actor's context, a request
       * is enqueued inside its _async call (nothing queued before it). */
      g_main_context_acquire (NULL);
      launch (actor, spin, one, spin_args, NULL);
      t0 = bench_now_us ();
      for (guint k = 0; k + 1 < HOST_OPS; k++)
        launch (actor, kernel, config, args, NULL);
      launch (actor, kernel, config, args, &result);
      t_submit[rep] = (bench_now_us () - t0) / HOST_OPS;
      g_main_context_release (NULL);

      /* Let the GPU finish on its own, then time the completions alone. */
      actor_stream = atomr_actor_get_cu_stream (ATOMR_ACTOR (actor));
      atomr_device_enter (device, NULL);
      check (cu->cuStreamSynchronize (actor_stream), "cuStreamSynchronize");
      atomr_device_leave (device);
      t0 = bench_now_us ();
      bench_wait_for (&result);
      t_complete[rep] = (bench_now_us () - t0) / HOST_OPS;
      if (!atomr_nvrtc_actor_launch_finish (actor, result, &error))
        die ("launch", error);
      *n_inc += 2 * HOST_OPS;
    }
  atomr_device_enter (device, NULL);
  raw_stream_done (stream);
  atomr_device_leave (device);
  *raw = bench_median (t_raw, HOST_REPS);
  *submit = bench_median (t_submit, HOST_REPS);
  *complete = bench_median (t_complete, HOST_REPS);
}

/* 1x/2x. How the host learns that work finished, raw, same run: what
 * each way costs the submitting thread and the round trip.  The
 * envelope records an event per request and its completion side queries
 * it; cuStreamWriteValue32 into mapped host memory would let the host see
 * completion with a plain load, no driver call. */
typedef CUresult (*WriteValue32Fn) (CUstream, CUdeviceptr, cuuint32_t, unsigned int);

static WriteValue32Fn
write_value32 (void)
{
  static WriteValue32Fn fn;
  static gboolean looked;

  if (!looked)
    {
      void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      looked = TRUE;
      if (lib)
        fn = (WriteValue32Fn) dlsym (lib, "cuStreamWriteValue32_v2");
      if (lib && fn == NULL)
        fn = (WriteValue32Fn) dlsym (lib, "cuStreamWriteValue32");
    }
  return fn;
}

enum { F_SYNC, F_EVENT_SPIN, F_STREAM_SPIN, F_WRITE_SPIN, F_WRITE_EVENT_SPIN, F_EVENT_WRITE_SPIN, N_FENCE_RT };
static const gchar *const fence_rt_names[N_FENCE_RT] = {
  "raw exp: launch + cuStreamSynchronize (as above)",
  "raw exp: launch + cuEventRecord, spin on cuEventQuery",
  "raw exp: launch, spin on cuStreamQuery",
  "raw exp: launch + cuStreamWriteValue32, spin on host word",
  "raw exp: launch + write value + event record, spin on word",
  "raw exp: launch + event record + write value, spin on word",
};
enum { P_PLAIN, P_EVENT, P_EVENT_QUERY, P_EVENT_THREAD, P_WRITE, N_FENCE_PIPE };
static const gchar *const fence_pipe_names[N_FENCE_PIPE] = {
  "raw exp: cuLaunchKernel x N + sync (as above)",
  "raw exp: + cuEventRecord after each",
  "raw exp: + cuEventRecord, cuEventQuery of the 32nd back",
  "raw exp: + cuEventRecord, another thread queries",
  "raw exp: + cuStreamWriteValue32 after each",
};

#define FENCE_EVENTS 64

typedef struct
{
  CUevent          events[FENCE_EVENTS];
  volatile gint    latest;   /* index recorded last, -1: none */
  volatile gint    stop;
  AtomrDevice     *device;
  guint64          queries;
} FenceThread;

static gpointer
fence_query_thread (gpointer data)
{
  FenceThread *ft = data;

  atomr_device_enter (ft->device, NULL);
  while (!g_atomic_int_get (&ft->stop))
    {
      gint i = g_atomic_int_get (&ft->latest);
      if (i >= 0)
        {
          ATOMR_CU->cuEventQuery (ft->events[i]);
          ft->queries++;
        }
    }
  atomr_device_leave (ft->device);
  return NULL;
}

static void
fence_experiments (AtomrDevice *device, CUfunction empty, CUdeviceptr dummy, CUfunction inc, CUdeviceptr x,
                   gdouble *rt, gdouble *pipe, guint *n_inc)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  WriteValue32Fn wv = write_value32 ();
  g_autofree gdouble *t = g_new (gdouble, N_FENCE_RT * ROUND_TRIPS);
  void *eparams[] = { &dummy }, *iparams[] = { &x };
  FenceThread ft = { .latest = -1, .device = device };
  volatile guint32 *word = NULL;
  CUdeviceptr dword = 0;
  CUstream stream;
  CUevent ev;
  guint32 seq = 0;

  atomr_device_enter (device, NULL);
  stream = raw_stream ();
  check (cu->cuEventCreate (&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  for (guint i = 0; i < FENCE_EVENTS; i++)
    check (cu->cuEventCreate (&ft.events[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  if (wv)
    {
      void *host = NULL;
      check (cu->cuMemHostAlloc (&host, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
             "cuMemHostAlloc");
      check (cu->cuMemHostGetDevicePointer (&dword, host, 0), "cuMemHostGetDevicePointer");
      word = host;
      *word = 0;
    }
  for (guint i = 0; i < ROUND_TRIPS + WARMUP; i++)
    for (guint v = 0; v < N_FENCE_RT; v++)
      {
        gdouble t0;
        CUresult res;

        if (v >= F_WRITE_SPIN && wv == NULL)
          continue;
        t0 = bench_now_us ();
        check (cu->cuLaunchKernel (empty, 1, 1, 1, 32, 1, 1, 0, stream, eparams, NULL), "cuLaunchKernel");
        switch (v)
          {
          case F_SYNC:
            check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
            break;
          case F_EVENT_SPIN:
            check (cu->cuEventRecord (ev, stream), "cuEventRecord");
            while ((res = cu->cuEventQuery (ev)) == CUDA_ERROR_NOT_READY)
              ;
            check (res, "cuEventQuery");
            break;
          case F_STREAM_SPIN:
            while ((res = cu->cuStreamQuery (stream)) == CUDA_ERROR_NOT_READY)
              ;
            check (res, "cuStreamQuery");
            break;
          default:
            seq++;
            if (v == F_EVENT_WRITE_SPIN)
              check (cu->cuEventRecord (ev, stream), "cuEventRecord");
            check (wv (stream, dword, seq, 0), "cuStreamWriteValue32");
            if (v == F_WRITE_EVENT_SPIN)
              check (cu->cuEventRecord (ev, stream), "cuEventRecord");
            while (*word != seq)
              ;
            break;
          }
        if (i >= WARMUP)
          t[v * ROUND_TRIPS + i - WARMUP] = bench_now_us () - t0;
      }
  for (guint v = 0; v < N_FENCE_RT; v++)
    rt[v] = v >= F_WRITE_SPIN && wv == NULL ? -1.0 : bench_median (t + v * ROUND_TRIPS, ROUND_TRIPS);

  for (guint v = 0; v < N_FENCE_PIPE; v++)
    pipe[v] = G_MAXDOUBLE;
  for (guint rep = 0; rep < 4; rep++)
    for (guint v = 0; v < N_FENCE_PIPE; v++)
      {
        GThread *thread = NULL;
        gdouble t0;

        if (v == P_WRITE && wv == NULL)
          continue;
        if (v == P_EVENT_THREAD)
          {
            g_atomic_int_set (&ft.stop, 0);
            g_atomic_int_set (&ft.latest, -1);
            thread = g_thread_new ("fence-query", fence_query_thread, &ft);
          }
        t0 = bench_now_us ();
        for (guint k = 0; k < PIPELINED; k++)
          {
            check (cu->cuLaunchKernel (inc, 1, 1, 1, 32, 1, 1, 0, stream, iparams, NULL), "cuLaunchKernel");
            switch (v)
              {
              case P_PLAIN:
                break;
              case P_EVENT:
              case P_EVENT_THREAD:
                check (cu->cuEventRecord (ft.events[k % FENCE_EVENTS], stream), "cuEventRecord");
                if (v == P_EVENT_THREAD)
                  g_atomic_int_set (&ft.latest, (gint) (k % FENCE_EVENTS));
                break;
              case P_EVENT_QUERY:
                check (cu->cuEventRecord (ft.events[k % FENCE_EVENTS], stream), "cuEventRecord");
                if (k >= 32)
                  cu->cuEventQuery (ft.events[(k - 32) % FENCE_EVENTS]);
                break;
              default:
                check (wv (stream, dword, ++seq, 0), "cuStreamWriteValue32");
                break;
              }
          }
        check (cu->cuStreamSynchronize (stream), "cuStreamSynchronize");
        if (rep > 0)
          pipe[v] = MIN (pipe[v], bench_now_us () - t0);
        if (thread)
          {
            g_atomic_int_set (&ft.stop, 1);
            g_thread_join (thread);
          }
        *n_inc += PIPELINED;
      }
  for (guint v = 0; v < N_FENCE_PIPE; v++)
    if (pipe[v] == G_MAXDOUBLE)
      pipe[v] = -1.0;
  cu->cuStreamSynchronize (stream);
  for (guint i = 0; i < FENCE_EVENTS; i++)
    cu->cuEventDestroy (ft.events[i]);
  cu->cuEventDestroy (ev);
  if (word)
    cu->cuMemFreeHost ((void *) word);
  raw_stream_done (stream);
  atomr_device_leave (device);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrKernel) kernel = NULL, empty = NULL, spin = NULL;
  g_autoptr(AtomrBuffer) x = NULL, dummy = NULL;
  g_autoptr(AtomrLaunchConfig) config = NULL;
  g_autoptr(AtomrKernelArgs) args = NULL, empty_args = NULL;
  g_autoptr(GBytes) got = NULL;
  const gchar *json_path = NULL;
  gdouble raw_eager, raw_graph, at_eager, at_graph, want;
  RoundTripParts rt_parts, rt_noword;
  gdouble places_raw, places_at;
  g_autoptr(AtomrNvrtcActor) noword = NULL;
  gdouble pl_threaded;
  gdouble rt_raw, rt_at, pl_raw, pl_at, pl_graph, h_raw, h_submit, h_complete;
  gdouble g_raw[2], g_at[2], g_graph[2];
  gdouble exp_raw[N_VARIANTS], at_spin0, at_spin5000, at_nohint, at_memalloc, offsets_us[N_OFFSETS], offsets_median = -1;
  gdouble fence_rt[N_FENCE_RT], fence_pipe[N_FENCE_PIPE];
  guint n_inc = 0;
  gfloat value;

  for (gint i = 1; i + 1 < argc; i++)
    if (g_str_equal (argv[i], "--json"))
      json_path = argv[i + 1];

  if (device == NULL)
    {
      g_printerr ("bench-graph: %s\n", error->message);
      return 77;
    }
  actor = atomr_nvrtc_actor_new (device, &error);
  if (actor == NULL)
    die ("actor", error);
  kernel = compile (actor, INC_SOURCE, "inc");
  empty = compile (actor, EMPTY_SOURCE, "empty");
  spin = compile (actor, SPIN_SOURCE, "spin");
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error);
  dummy = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error);
  if (x == NULL || dummy == NULL || !atomr_buffer_fill_sync (x, 0.0, NULL, &error))
    die ("buffer", error);
  config = atomr_launch_config_new (1, 1, 1, 32, 1, 1);
  args = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), x);
  empty_args = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), dummy);

  /* Loads the modules on the device; the first counts as one launch. */
  launch_wait (actor, kernel, config, args);
  launch_wait (actor, empty, config, empty_args);

  /* The same actor without a fence word, for section 1's comparison:
   * a stream reads ATOMR_FENCE_WORD when it first fences with a word. */
  {
    g_autofree gchar *saved = g_strdup (g_getenv ("ATOMR_FENCE_WORD"));

    g_setenv ("ATOMR_FENCE_WORD", "0", TRUE);
    noword = atomr_nvrtc_actor_new (device, &error);
    if (noword == NULL)
      die ("actor", error);
    launch_wait (noword, empty, config, empty_args);
    if (saved)
      g_setenv ("ATOMR_FENCE_WORD", saved, TRUE);
    else
      g_unsetenv ("ATOMR_FENCE_WORD");
  }

  places_raw = probe_places (device, atomr_kernel_get_function (kernel), "at the start:");
  places_at = atomr_chain_places (device, actor, kernel, config);
  round_trip (device, actor, noword, empty, config, empty_args, &rt_raw, &rt_at, &rt_parts, &rt_noword);
  probe_places (device, atomr_kernel_get_function (kernel), "after section 1:");
  pipelined (device, actor, kernel, config, args, &pl_raw, &pl_at, &pl_graph, &pl_threaded, &n_inc);
  fence_experiments (device, atomr_kernel_get_function (empty), atomr_buffer_get_ptr (dummy),
                     atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), fence_rt, fence_pipe, &n_inc);
  probe_places (device, atomr_kernel_get_function (kernel), "after the fence experiments:");
  raw_eager = raw_chain (device, atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), FALSE);
  raw_graph = raw_chain (device, atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), TRUE);
  at_eager = atomr_eager_chain (actor, kernel, config, args);
  at_graph = atomr_graph_chain (actor, kernel, config, args, -1, TRUE);
  n_inc += 4 * (N_CHAIN + WARMUP) * CHAIN;
  chain_experiments (device, atomr_kernel_get_function (kernel), atomr_buffer_get_ptr (x), exp_raw, &n_inc);
  chain_offsets (device, atomr_kernel_get_function (kernel), offsets_us);
  at_nohint = atomr_graph_chain (actor, kernel, config, args, -1, FALSE);
  at_spin0 = atomr_graph_chain (actor, kernel, config, args, 0, TRUE);
  at_spin5000 = atomr_graph_chain (actor, kernel, config, args, 5000, TRUE);
  {
    /* the replayed chain through atomr, x an AtomrBuffer over cuMemAlloc
     * memory (the raw variant above that beat the pool) */
    g_autoptr(AtomrBuffer) mx = NULL;
    g_autoptr(AtomrKernelArgs) margs = NULL;
    CUdeviceptr ptr = 0;

    atomr_device_enter (device, NULL);
    check (ATOMR_CU->cuMemAlloc (&ptr, sizeof (gfloat)), "cuMemAlloc");
    check (ATOMR_CU->cuMemsetD32Async (ptr, 0, 1, NULL), "cuMemsetD32Async");
    check (ATOMR_CU->cuCtxSynchronize (), "cuCtxSynchronize");
    atomr_device_leave (device);
    mx = atomr_buffer_new_for_device_pointer (device, ATOMR_DTYPE_F32, 1, ptr, NULL, NULL, &error);
    if (mx == NULL)
      die ("buffer_new_for_device_pointer", error);
    margs = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), mx);
    at_memalloc = atomr_graph_chain (actor, kernel, config, margs, -1, TRUE);
    g_clear_object (&mx);
    g_clear_pointer (&margs, atomr_kernel_args_unref);
    atomr_device_enter (device, NULL);
    ATOMR_CU->cuCtxSynchronize ();
    ATOMR_CU->cuMemFree (ptr);
    atomr_device_leave (device);
  }
  n_inc += 3 * (N_CHAIN + WARMUP) * CHAIN;
  for (guint m = 0; m < 2; m++)
    gemm_rows (device, m == 1, &g_raw[m], &g_at[m], &g_graph[m]);
  host_cost (device, actor, kernel, spin, config, args, &h_raw, &h_submit, &h_complete, &n_inc);

  got = atomr_buffer_download_sync (x, NULL, &error);
  if (got == NULL)
    die ("download", error);
  value = *(const gfloat *) g_bytes_get_data (got, NULL);
  want = 1.0 + n_inc;

  printf ("# bench-graph on %s (driver %d)\n", atomr_device_get_name (device),
          atomr_device_get_driver_version ());
  printf ("%-58s %12s %8s\n", "row", "us", "ratio");
  printf ("## 1. empty kernel, launch -> completion, median of %d (ratio: time / raw)\n", ROUND_TRIPS);
  printf ("%-58s %12.2f %8s\n", "raw: cuLaunchKernel + cuStreamSynchronize", rt_raw, "1.00");
  printf ("%-58s %12.2f %8.2f\n", "atomr: launch_async, reply", rt_at, rt_at / rt_raw);
  printf ("# atomr launch->reply minus raw: %+.2f us (goal <= +0.5 us)\n", rt_at - rt_raw);
  printf ("##   parts (medians, us): raw cuLaunchKernel %.2f, cuStreamSynchronize %.2f; atomr launch_async %.2f,\n"
          "##   then its callback after %.2f, the iteration returns %.2f after the callback\n",
          rt_parts.raw_launch, rt_parts.raw_wait, rt_parts.at_submit, rt_parts.at_to_reply, rt_parts.at_after);
  printf ("%-58s %12.2f %8.2f\n", "atomr exp: the same, no fence word (interleaved)", rt_noword.at_whole,
          rt_noword.at_whole / rt_raw);
  printf ("##   its parts: launch_async %.2f, callback after %.2f, the iteration returns %.2f after it\n",
          rt_noword.at_submit, rt_noword.at_to_reply, rt_noword.at_after);
  printf ("## 1x. EXPERIMENTS (same run): how the host learns completion, raw, median of %d, interleaved\n",
          ROUND_TRIPS);
  for (guint v = 0; v < N_FENCE_RT; v++)
    if (fence_rt[v] < 0)
      printf ("%-58s %12s %8s\n", fence_rt_names[v], "n/a", "-");
    else
      printf ("%-58s %12.2f %8.2f\n", fence_rt_names[v], fence_rt[v], fence_rt[v] / fence_rt[F_SYNC]);
  printf ("## 2x. EXPERIMENTS (same run): %d pipelined launches with a fence after each, raw, best of 3\n"
          "##     (ratio: time / the plain row of this section)\n", PIPELINED);
  for (guint v = 0; v < N_FENCE_PIPE; v++)
    if (fence_pipe[v] < 0)
      printf ("%-58s %12s %8s\n", fence_pipe_names[v], "n/a", "-");
    else
      printf ("%-58s %12.1f %8.3f\n", fence_pipe_names[v], fence_pipe[v], fence_pipe[v] / fence_pipe[P_PLAIN]);
  printf ("## 2. %d pipelined tiny kernels <<<1, 32>>>, best of 3 (ratio: raw time / time = throughput)\n",
          PIPELINED);
  printf ("%-58s %12.1f %8s\n", "raw: cuLaunchKernel x N + sync", pl_raw, "1.00");
  printf ("%-58s %12.1f %8.3f\n", "atomr eager: launch_async x N, reply of the last", pl_at, pl_raw / pl_at);
  printf ("%-58s %12.1f %8.3f\n", "atomr graph: 100-launch graph replayed N/100 times", pl_graph,
          pl_raw / pl_graph);
  printf ("%-58s %12.1f %8.3f\n", "atomr eager, actor with own-thread: launch_async x N", pl_threaded,
          pl_raw / pl_threaded);
  printf ("# atomr eager throughput / raw: %.3f on the submitting thread, %.3f with own-thread (goal >= 0.97)\n",
          pl_raw / pl_at, pl_raw / pl_threaded);
  printf ("## 3. chain of %d dependent tiny kernels, launch + wait, median of %d (ratio: time / raw eager)\n",
          CHAIN, N_CHAIN);
  printf ("%-58s %12.2f %8s\n", "raw eager: 100 x cuLaunchKernel + sync", raw_eager, "1.00");
  printf ("%-58s %12.2f %8.2f\n", "raw graph: uploaded once, cuGraphLaunch + sync", raw_graph, raw_graph / raw_eager);
  printf ("%-58s %12.2f %8.2f\n", "atomr eager: 100 x launch_async, reply of the last", at_eager,
          at_eager / raw_eager);
  printf ("%-58s %12.2f %8.2f\n", "atomr graph: replay_async, reply", at_graph, at_graph / raw_eager);
  printf ("# atomr graph replay speed-up over raw eager: %.2fx (goal >= 3x); over atomr eager: %.2fx\n",
          raw_eager / at_graph, at_eager / at_graph);
  printf ("## 3x. EXPERIMENTS (same run): the chain-of-%d graph, launch + wait, median of %d, the raw\n"
          "##     variants timed interleaved (ratio: time / raw graph row above)\n", CHAIN, N_CHAIN);
  for (guint v = 0; v < N_VARIANTS; v++)
    {
      g_autofree gchar *row = g_strdup_printf ("raw exp: %s", variant_names[v]);
      if (exp_raw[v] < 0)
        printf ("%-58s %12s %8s\n", row, "n/a", "-");
      else
        printf ("%-58s %12.2f %8.2f\n", row, exp_raw[v], exp_raw[v] / raw_graph);
    }
  {
    gdouble sorted[N_OFFSETS];

    memcpy (sorted, offsets_us, sizeof sorted);
    offsets_median = bench_median (sorted, N_OFFSETS);   /* sorts */
    printf ("## 3y. the chain on x at %d offsets (steps of %d B) in one cuMemAlloc allocation, median of %d each:\n"
            "##     min %.2f, median %.2f, max %.2f us (atomr's x of the rows above: 0x%llx); by offset:",
            N_OFFSETS, OFFSET_STEP, N_OFFSET_REPS, sorted[0], sorted[N_OFFSETS / 2], sorted[N_OFFSETS - 1],
            (unsigned long long) atomr_buffer_get_ptr (x));
    for (guint o = 0; o < N_OFFSETS; o++)
      printf ("%s%.1f", o % 8 == 0 ? "\n##    " : " ", offsets_us[o]);
    printf ("\n");
  }
  printf ("%-58s %12.2f %8.2f\n", "atomr exp: replay, no polling window of its own", at_nohint,
          at_nohint / raw_graph);
  printf ("%-58s %12.2f %8.2f\n", "atomr exp: replay, actor spin-usec 0 (hand off at once)", at_spin0,
          at_spin0 / raw_graph);
  printf ("%-58s %12.2f %8.2f\n", "atomr exp: replay, actor spin-usec 5000 (always poll)", at_spin5000,
          at_spin5000 / raw_graph);
  printf ("%-58s %12.2f %8.2f\n", "atomr exp: replay, x over cuMemAlloc memory", at_memalloc,
          at_memalloc / raw_graph);
  printf ("# atomr replay (default) / raw graph: %.3f; / best raw variant: %.3f\n", at_graph / raw_graph,
          at_graph / exp_raw[V_UPLOAD]);
  printf ("## 4. SGEMM %d^3, %d pipelined calls, us per call, best of 4 (ratio: time / raw)\n",
          GEMM_N, GEMM_CALLS);
  for (guint m = 0; m < 2; m++)
    {
      const gchar *math = m ? "TF32" : "FP32";
      g_autofree gchar *r1 = g_strdup_printf ("raw %s: cublasSgemm x N + sync", math);
      g_autofree gchar *r2 = g_strdup_printf ("atomr %s eager: gemm_async x N, reply of the last", math);
      g_autofree gchar *r3 = g_strdup_printf ("atomr %s graph: 100-gemm graph replayed N/100 times", math);
      printf ("%-58s %12.2f %8s\n", r1, g_raw[m], "1.00");
      printf ("%-58s %12.2f %8.3f\n", r2, g_at[m], g_at[m] / g_raw[m]);
      printf ("%-58s %12.2f %8.3f\n", r3, g_graph[m], g_graph[m] / g_raw[m]);
      printf ("# GEMM %d %s atomr eager per call / raw: %.3f (goal <= 1.05)\n", GEMM_N, math,
              g_at[m] / g_raw[m]);
    }
  printf ("## 5. host cost per operation, GPU held busy, median of %d x %d ops\n", HOST_REPS, HOST_OPS);
  printf ("%-58s %12.3f\n", "raw: cuLaunchKernel", h_raw);
  if (h_raw > 20.0)
    printf ("# WARNING: raw launches took %.1f us each: the launch queue filled behind the spin "
            "kernel, these rows are not host cost\n", h_raw);
  printf ("%-58s %12.3f\n", "atomr: launch_async, submit -> enqueued", h_submit);
  printf ("%-58s %12.3f\n", "atomr: completion and release", h_complete);
  printf ("# envelope host cost per op (atomr submit + completion - raw launch): %.3f us (goal <= 1 us)\n",
          h_submit + h_complete - h_raw);
  printf ("# check: x[0] = %.0f, expected %.0f: %s\n", value, want, value == (gfloat) want ? "ok" : "WRONG");

  if (json_path)
    {
      g_autofree gchar *json = g_strdup_printf (
          "{\n  \"device\": \"%s\",\n"
          "  \"empty_roundtrip_us\": {\"raw\": %.3f, \"atomr\": %.3f},\n"
          "  \"pipelined_10000_us\": {\"raw\": %.1f, \"atomr\": %.1f, \"atomr_graph\": %.1f, \"atomr_own_thread\": %.1f},\n"
          "  \"chain_100_us\": {\"raw_eager\": %.2f, \"raw_graph\": %.2f, \"atomr_eager\": %.2f, \"atomr_graph\": %.2f},\n"
          "  \"chain_100_places_us\": {\"raw\": %.2f, \"atomr\": %.2f},\n"
          "  \"gemm_256_fp32_us_per_call\": {\"raw\": %.3f, \"atomr\": %.3f, \"atomr_graph\": %.3f},\n"
          "  \"gemm_256_tf32_us_per_call\": {\"raw\": %.3f, \"atomr\": %.3f, \"atomr_graph\": %.3f},\n"
          "  \"host_cost_us_per_op\": {\"raw_launch\": %.3f, \"atomr_submit\": %.3f, \"atomr_complete\": %.3f},\n"
          "  \"chain_100_experiments_us\": {\"raw_no_upload\": %.2f, \"raw_upload\": %.2f, \"raw_cupy_recipe\": %.2f, "
          "\"raw_instantiate_upload\": %.2f, \"raw_node_priority\": %.2f, \"raw_blocking_stream\": %.2f, "
          "\"raw_high_priority\": %.2f, \"raw_mem_alloc\": %.2f, \"raw_mem_alloc_async\": %.2f, "
          "\"raw_vmm\": %.2f, \"raw_spin_query\": %.2f, \"raw_own_cubin\": %.2f, \"raw_own_ptx\": %.2f, \"raw_offsets_median\": %.2f, "
          "\"raw_no_upload_spin_query\": %.2f, \"atomr_no_spin_hint\": %.2f, \"atomr_spin_0\": %.2f, "
          "\"atomr_spin_5000\": %.2f}\n}\n",
          atomr_device_get_name (device), rt_raw, rt_at, pl_raw, pl_at, pl_graph, pl_threaded,
          raw_eager, raw_graph, at_eager, at_graph, places_raw, places_at, g_raw[0], g_at[0], g_graph[0],
          g_raw[1], g_at[1], g_graph[1], h_raw, h_submit, h_complete,
          exp_raw[V_NO_UPLOAD], exp_raw[V_UPLOAD], exp_raw[V_CUPY], exp_raw[V_INST_UPLOAD],
          exp_raw[V_NODE_PRIORITY], exp_raw[V_BLOCKING], exp_raw[V_HIGH_PRIORITY], exp_raw[V_MEM_ALLOC],
          exp_raw[V_MEM_ASYNC], exp_raw[V_VMM], exp_raw[V_SPIN_QUERY], exp_raw[V_OWN_CUBIN], exp_raw[V_OWN_PTX], offsets_median,
          exp_raw[V_NO_UPLOAD_SPIN], at_nohint, at_spin0, at_spin5000);
      if (!g_file_set_contents (json_path, json, -1, &error))
        die ("--json", error);
    }
  return value == (gfloat) want ? 0 : 1;
}
