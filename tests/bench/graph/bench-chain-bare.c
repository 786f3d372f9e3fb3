/* bench-chain-bare.c — the chain replay's 20%, without atomr
 *
 *     bench-chain-bare [MODE]     MODE: both (default), bare, churn, churn-graphs,
 *                                 keep, nofree, memfree, eager-first, regraph
 *
 * bench-graph's chain of 100 dependent tiny kernels, captured into one
 * graph per place of x (32 places in one allocation, steps of 4 KiB +
 * 64 B), replayed from a C program that holds nothing but the driver and
 * NVRTC (both loaded with dlopen, like everything in atomr).  A probe is
 * the median over the places of the median of 40 replays (launch + sync).
 *
 * On the H200 (2026-11-29) the replays of a fresh process ran at about
 * 87 us; after the process had twice made a second stream and memory,
 * run 200 launch + sync round trips on that stream and destroyed both
 * ("churn"), every replay ran at about 104 us — the same graphs, the same
 * x — for the life of the process.  Graphs made and destroyed on the
 * first stream ("churn-graphs") did not do it.  bench-graph's process is
 * in the slower state from its first section on (its raw rows make, use
 * and destroy streams), CuPy's peer process stays in the faster one (one
 * stream) before its chain rows.  Which part of the churn is the trigger
 * (the second stream's work, its destruction, the memory) is not known.
 * The modes keep, nofree, memfree and eager-first take the churn apart
 * (see churn()); regraph probes graphs made at the start and graphs made
 * after round trips of each kind (see regraph()).  MODE both: three probes fresh, then five with the churn
 * between them.
 * Informational: prints, asserts nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <nvrtc.h>

#define CHAIN     100
#define N_OFFSETS 32
#define STEP      (4096 + 64)
#define REPS      40

#define STR(x)  #x
#define XSTR(x) STR (x)   /* the versioned name cuda.h maps a call to */

#define CU_FUNCS(X) \
  X (cuInit) X (cuDeviceGet) X (cuDeviceGetAttribute) X (cuDevicePrimaryCtxRetain) \
  X (cuCtxSetCurrent) X (cuModuleLoadData) X (cuModuleGetFunction) X (cuStreamCreate) \
  X (cuStreamDestroy) X (cuMemAlloc) X (cuMemFree) X (cuMemsetD8Async) \
  X (cuStreamBeginCapture) X (cuStreamEndCapture) X (cuLaunchKernel) \
  X (cuGraphInstantiateWithFlags) X (cuGraphUpload) X (cuGraphLaunch) \
  X (cuGraphExecDestroy) X (cuGraphDestroy) X (cuStreamSynchronize) \
  X (cuEventCreate) X (cuEventRecord) X (cuEventQuery) X (cuStreamWriteValue32) \
  X (cuMemHostAlloc) X (cuMemHostGetDevicePointer)

#define NVRTC_FUNCS(X) \
  X (nvrtcCreateProgram) X (nvrtcCompileProgram) X (nvrtcGetCUBINSize) X (nvrtcGetCUBIN) \
  X (nvrtcDestroyProgram)

static struct
{
#define FIELD(name) __typeof__ (&name) name;
  CU_FUNCS (FIELD)
  NVRTC_FUNCS (FIELD)
#undef FIELD
} api;

static const char *source =
  "extern \"C\" __global__ void inc (float *x) { if (threadIdx.x == 0) x[0] += 1.0f; }\n";

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
check (int res, const char *what)
{
  if (res != 0)
    {
      fprintf (stderr, "bench-chain-bare: %s returned %d\n", what, res);
      exit (1);
    }
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static int
load (void)
{
  const char *nvrtc_names[] = { "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12" };
  void *cuda = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  void *nvrtc = NULL;

  for (size_t i = 0; nvrtc == NULL && i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++)
    nvrtc = dlopen (nvrtc_names[i], RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL || nvrtc == NULL)
    {
      printf ("bench-chain-bare: %s (skipped)\n", cuda == NULL ? "no libcuda.so.1" : "no NVRTC");
      return 0;
    }
#define RESOLVE(lib, name) \
  if ((*(void **) &api.name = dlsym (lib, XSTR (name))) == NULL) \
    { \
      printf ("bench-chain-bare: no %s (skipped)\n", XSTR (name)); \
      return 0; \
    }
#define CU(name) RESOLVE (cuda, name)
#define NV(name) RESOLVE (nvrtc, name)
  CU_FUNCS (CU)
  NVRTC_FUNCS (NV)
#undef CU
#undef NV
#undef RESOLVE
  return 1;
}

/* The chain on the word at @x, captured on @stream, instantiated and
 * uploaded; the graph itself destroyed. */
static CUgraphExec
chain_exec (CUfunction fn, CUdeviceptr x, CUstream stream)
{
  void *params[] = { &x };
  CUgraph graph;
  CUgraphExec exec;

  check (api.cuStreamBeginCapture (stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  for (int k = 0; k < CHAIN; k++)
    check (api.cuLaunchKernel (fn, 1, 1, 1, 32, 1, 1, 0, stream, params, NULL), "cuLaunchKernel");
  check (api.cuStreamEndCapture (stream, &graph), "cuStreamEndCapture");
  check (api.cuGraphInstantiateWithFlags (&exec, graph, 0), "cuGraphInstantiateWithFlags");
  check (api.cuGraphUpload (exec, stream), "cuGraphUpload");
  api.cuGraphDestroy (graph);
  return exec;
}

/* What a churn does, by mode (each probe after the first of the
 * churned ones follows one more churn):
 *   churn         a second stream and memory, 200 launch + sync round
 *                 trips on them, both destroyed (what bench-graph's
 *                 sections do besides);
 *   churn-graphs  32 chain graphs made, replayed and destroyed on the
 *                 first stream;
 *   keep          the second stream and memory made once and kept, the
 *                 200 round trips on them each time (two actors' streams);
 *   nofree        a second stream, the round trips on the first x, the
 *                 stream destroyed, no memory made or freed;
 *   memfree       memory made, the round trips on it on the first stream,
 *                 the memory freed: no second stream;
 *   eager-first   the 200 round trips on the first stream and x only. */
enum { C_STREAM = 1, C_MEM = 2, C_DESTROY = 4, C_FREE = 8, C_GRAPHS = 16 };

static const struct { const char *name; int flags; } modes[] = {
  { "churn", C_STREAM | C_MEM | C_DESTROY | C_FREE },
  { "churn-graphs", C_GRAPHS },
  { "keep", C_STREAM | C_MEM },
  { "nofree", C_STREAM | C_DESTROY },
  { "memfree", C_MEM | C_FREE },
  { "eager-first", 0 },
};

static void
churn (CUfunction fn, CUstream first, CUdeviceptr first_x, int flags)
{
  static CUstream kept_stream;
  static CUdeviceptr kept_x;
  CUstream s = first;
  CUdeviceptr x = first_x;

  if (flags & C_GRAPHS)
    {
      for (int o = 0; o < N_OFFSETS; o++)
        {
          CUgraphExec exec = chain_exec (fn, x + (CUdeviceptr) o * STEP, s);

          for (int r = 0; r < 10; r++)
            check (api.cuGraphLaunch (exec, s), "cuGraphLaunch");
          check (api.cuStreamSynchronize (s), "cuStreamSynchronize");
          api.cuGraphExecDestroy (exec);
        }
      return;
    }
  if (flags & C_STREAM)
    {
      if (kept_stream == NULL)
        check (api.cuStreamCreate (&kept_stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      s = kept_stream;
    }
  if (flags & C_MEM)
    {
      if (kept_x == 0)
        check (api.cuMemAlloc (&kept_x, N_OFFSETS * STEP + 64), "cuMemAlloc");
      x = kept_x;
    }
  for (int r = 0; r < 200; r++)
    {
      void *params[] = { &x };
      check (api.cuLaunchKernel (fn, 1, 1, 1, 32, 1, 1, 0, s, params, NULL), "cuLaunchKernel");
      check (api.cuStreamSynchronize (s), "cuStreamSynchronize");
    }
  if (flags & C_FREE)
    {
      check (api.cuMemFree (kept_x), "cuMemFree");
      kept_x = 0;
    }
  if (flags & C_DESTROY)
    {
      check (api.cuStreamDestroy (kept_stream), "cuStreamDestroy");
      kept_stream = NULL;
    }
}

static void
probe (CUgraphExec *exec, CUstream stream, const char *what, double t_start)
{
  static double t[N_OFFSETS][REPS];
  double med[N_OFFSETS];

  for (int r = 0; r < REPS + 2; r++)
    for (int o = 0; o < N_OFFSETS; o++)
      {
        double t0 = now_us ();
        check (api.cuGraphLaunch (exec[o], stream), "cuGraphLaunch");
        check (api.cuStreamSynchronize (stream), "cuStreamSynchronize");
        if (r >= 2)
          t[o][r - 2] = now_us () - t0;
      }
  for (int o = 0; o < N_OFFSETS; o++)
    {
      qsort (t[o], REPS, sizeof (double), cmp);
      med[o] = t[o][REPS / 2];
    }
  qsort (med, N_OFFSETS, sizeof (double), cmp);
  printf ("%-28s at %5.2f s: chain replay over %d places: min %6.2f, median %6.2f, max %6.2f us\n", what,
          (now_us () - t_start) / 1e6, N_OFFSETS, med[0], med[N_OFFSETS / 2], med[N_OFFSETS - 1]);
  fflush (stdout);
}

/* Mode regraph: what makes graphs made later faster or slower.  Each
 * step runs round trips of one kind, then probes the graphs made at the
 * start ("old") and 32 graphs made after the step ("new", destroyed after
 * their probe). */
enum { RT_SYNC, RT_EVENT, RT_WORD };

static void
round_trips (CUfunction fn, CUstream s, CUdeviceptr x, int kind, int n)
{
  static CUevent ev;
  static volatile unsigned int *word;
  static CUdeviceptr dword;
  static unsigned int seq;

  if (ev == NULL)
    {
      check (api.cuEventCreate (&ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
      check (api.cuMemHostAlloc ((void **) &word, 64, CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc");
      check (api.cuMemHostGetDevicePointer (&dword, (void *) word, 0), "cuMemHostGetDevicePointer");
    }
  for (int r = 0; r < n; r++)
    {
      void *params[] = { &x };
      check (api.cuLaunchKernel (fn, 1, 1, 1, 32, 1, 1, 0, s, params, NULL), "cuLaunchKernel");
      switch (kind)
        {
        case RT_SYNC:
          check (api.cuStreamSynchronize (s), "cuStreamSynchronize");
          break;
        case RT_EVENT:
          check (api.cuEventRecord (ev, s), "cuEventRecord");
          while (api.cuEventQuery (ev) != CUDA_SUCCESS)
            ;
          break;
        default:
          check (api.cuEventRecord (ev, s), "cuEventRecord");
          check (api.cuStreamWriteValue32 (s, dword, ++seq, 0), "cuStreamWriteValue32");
          while (*word != seq)
            ;
          break;
        }
    }
}

static void
regraph (CUfunction fn, CUstream stream, CUdeviceptr base, CUgraphExec *old, double t_start)
{
  static const struct { const char *what; int second; int kind; int n; } steps[] = {
    { "nothing (fresh)", 0, RT_SYNC, 0 },
    { "2000 sync round trips, same stream", 0, RT_SYNC, 2000 },
    { "2000 sync round trips, 2nd stream", 1, RT_SYNC, 2000 },
    { "2000 event-spin round trips, same", 0, RT_EVENT, 2000 },
    { "2000 event-spin round trips, 2nd", 1, RT_EVENT, 2000 },
    { "2000 word-spin round trips, 2nd", 1, RT_WORD, 2000 },
    { "2000 sync round trips, same stream", 0, RT_SYNC, 2000 },
  };
  CUstream second = NULL;
  CUgraphExec fresh[N_OFFSETS];

  check (api.cuStreamCreate (&second, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    {
      char what[96];

      round_trips (fn, steps[i].second ? second : stream, base, steps[i].kind, steps[i].n);
      snprintf (what, sizeof what, "after %s: old graphs", steps[i].what);
      probe (old, stream, what, t_start);
      for (int o = 0; o < N_OFFSETS; o++)
        fresh[o] = chain_exec (fn, base + (CUdeviceptr) o * STEP, stream);
      check (api.cuStreamSynchronize (stream), "cuStreamSynchronize");
      snprintf (what, sizeof what, "after %s: new graphs", steps[i].what);
      probe (fresh, stream, what, t_start);
      for (int o = 0; o < N_OFFSETS; o++)
        api.cuGraphExecDestroy (fresh[o]);
    }
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "both";
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction fn;
  CUstream stream;
  CUdeviceptr base;
  CUgraphExec exec[N_OFFSETS];
  nvrtcProgram prog;
  char arch[32];
  const char *opts[1] = { arch };
  size_t size;
  char *cubin;
  int major, minor, n_fresh, n_churned, flags = -1;
  double t_start;

  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp (mode, modes[i].name) == 0)
      flags = modes[i].flags;
  if (strcmp (mode, "both") == 0)
    flags = modes[0].flags;
  if (flags < 0 && strcmp (mode, "bare") != 0 && strcmp (mode, "regraph") != 0)
    {
      fprintf (stderr, "usage: bench-chain-bare [both|bare|churn|churn-graphs|keep|nofree|memfree|eager-first|regraph]\n");
      return 2;
    }
  if (!load ())
    return 77;
  if (api.cuInit (0) != CUDA_SUCCESS || api.cuDeviceGet (&dev, 0) != CUDA_SUCCESS)
    {
      printf ("bench-chain-bare: no GPU (skipped)\n");
      return 77;
    }
  check (api.cuDeviceGetAttribute (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cuDeviceGetAttribute");
  check (api.cuDeviceGetAttribute (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cuDeviceGetAttribute");
  check (api.cuDevicePrimaryCtxRetain (&ctx, dev), "cuDevicePrimaryCtxRetain");
  check (api.cuCtxSetCurrent (ctx), "cuCtxSetCurrent");
  snprintf (arch, sizeof arch, "-arch=sm_%d%d", major, minor);
  check (api.nvrtcCreateProgram (&prog, source, "inc.cu", 0, NULL, NULL), "nvrtcCreateProgram");
  check (api.nvrtcCompileProgram (prog, 1, opts), "nvrtcCompileProgram");
  check (api.nvrtcGetCUBINSize (prog, &size), "nvrtcGetCUBINSize");
  cubin = malloc (size);
  check (api.nvrtcGetCUBIN (prog, cubin), "nvrtcGetCUBIN");
  api.nvrtcDestroyProgram (&prog);
  check (api.cuModuleLoadData (&module, cubin), "cuModuleLoadData");
  free (cubin);
  check (api.cuModuleGetFunction (&fn, module, "inc"), "cuModuleGetFunction");
  check (api.cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check (api.cuMemAlloc (&base, N_OFFSETS * STEP + 64), "cuMemAlloc");
  check (api.cuMemsetD8Async (base, 0, N_OFFSETS * STEP + 64, stream), "cuMemsetD8Async");
  for (int o = 0; o < N_OFFSETS; o++)
    exec[o] = chain_exec (fn, base + (CUdeviceptr) o * STEP, stream);
  check (api.cuStreamSynchronize (stream), "cuStreamSynchronize");

  printf ("# bench-chain-bare: the chain of %d replayed (launch + sync), x at %d places; "
          "median over the places of the median of %d; mode %s\n", CHAIN, N_OFFSETS, REPS, mode);
  if (strcmp (mode, "regraph") == 0)
    {
      regraph (fn, stream, base, exec, now_us ());
      return 0;
    }
  n_fresh = strcmp (mode, "both") == 0 ? 3 : strcmp (mode, "bare") == 0 ? 8 : 1;
  n_churned = strcmp (mode, "bare") == 0 ? 0 : strcmp (mode, "both") == 0 ? 5 : 7;
  t_start = now_us ();
  for (int i = 0; i < n_fresh; i++)
    {
      probe (exec, stream, "fresh, 0.3 s apart", t_start);
      usleep (300000);
    }
  for (int i = 1; i <= n_churned; i++)
    {
      char what[64];

      churn (fn, stream, base, flags);
      snprintf (what, sizeof what, "after %d churns (%s)", i, mode);
      probe (exec, stream, what, t_start);
    }
  return 0;
}
