/* bench-peers.c — the rows of issue 17's peers table that bench-graph has not
 *
 * bench-graph measures launches, chains, graphs and SGEMM 256; this adds, in
 * one run and each against raw CUDA measured next to it:
 *
 *   1. SGEMM 4096^3, FP32 and TF32: 20 pipelined calls, us per call, best
 *      of 6, the two sides taking turns at going first: raw cublasSgemm vs
 *      the BLAS actor's gemm_async (reply of the last);
 *   2. FFT C2C 1-D 256 x batch 16 (f32): launch -> completion, median of
 *      2000: raw cufftExecC2C + cuStreamSynchronize on a plan made once vs
 *      the FFT actor's execute_async (cached plan) and its reply;
 *   3. kernel disk-cache hit -> a launchable kernel, median of 300: a
 *      hand-rolled cache (read the CUBIN file, cuModuleLoadData,
 *      cuModuleGetFunction) vs atomr_nvrtc_compile_for_device() on a cache
 *      with its memory level off, then atomr_kernel_new_loaded().
 *
 * `--json PATH` writes the figures for tests/bench/peers/peers_table.py,
 * which puts them next to bench-graph's and the peers' (PyTorch, CuPy,
 * atomr from Python).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "atomr-cublas-table-private.h"
#include "atomr-cufft-table-private.h"

#include <atomr.h>
#include "../bench-util.h"
#include "core/atomr-actor-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-module-private.h"
#include "nvrtc/atomr-nvrtc-private.h"

#define GEMM_N     4096
#define GEMM_CALLS 20
#define FFT_N      256
#define FFT_BATCH  16
#define FFT_REPS   2000
#define DISK_REPS  300

#define EMPTY_SOURCE "extern \"C\" __global__ void empty (float *x) { }\n"

static void
die (const gchar *what, GError *error)
{
  g_printerr ("bench-peers: %s: %s\n", what, error ? error->message : "failed");
  exit (1);
}

/* 1. SGEMM 4096 */
/* The raw rows' streams are kept, not destroyed: a process that has
 * destroyed two streams which ran work is slower from then on at chains of
 * small dependent kernels (bench-chain-bare, "nofree" against "keep"), and
 * atomr keeps its streams; the rows after the first two would otherwise
 * measure both sides in that state, and the peers' processes not. */
static void
keep_stream (CUstream stream)
{
  ATOMR_CU->cuStreamSynchronize (stream);
}

static void
gemm_rows (AtomrDevice *device, gboolean tf32, gdouble *raw, gdouble *at)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (device, &error);
  g_autoptr(AtomrBuffer) a = NULL, b = NULL, c = NULL;
  const float one = 1.0f, zero = 0.0f;
  cublasHandle_t handle;
  CUstream stream;

  if (blas == NULL)
    die ("blas actor", error);
  atomr_blas_actor_set_math_mode (blas, tf32 ? ATOMR_BLAS_MATH_TF32 : ATOMR_BLAS_MATH_DEFAULT);
  a = atomr_buffer_new (device, ATOMR_DTYPE_F32, (gsize) GEMM_N * GEMM_N, &error);
  b = atomr_buffer_new (device, ATOMR_DTYPE_F32, (gsize) GEMM_N * GEMM_N, &error);
  c = atomr_buffer_new (device, ATOMR_DTYPE_F32, (gsize) GEMM_N * GEMM_N, &error);
  if (c == NULL || !atomr_buffer_fill_sync (a, 0.5, NULL, &error) ||
      !atomr_buffer_fill_sync (b, 0.25, NULL, &error))
    die ("gemm buffers", error);

  atomr_device_enter (device, NULL);
  if (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      !atomr_cublas_load (&error) || cublasCreate (&handle) != CUBLAS_STATUS_SUCCESS ||
      cublasSetStream (handle, (cudaStream_t) stream) != CUBLAS_STATUS_SUCCESS ||
      cublasSetMathMode (handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH)
      != CUBLAS_STATUS_SUCCESS)
    die ("cuBLAS", error);
  atomr_device_leave (device);

  /* The two sides take turns at going first: a GEMM of 2.7 ms at full
   * power right after another side's 20 runs on a GPU that has started to
   * hold its clocks back, and always going second cost atomr ~1.2% here
   * (SGEMM 4096 FP32, same buffers, same cuBLAS routine). */
  *raw = *at = G_MAXDOUBLE;
  for (guint rep = 0; rep < 8; rep++)
    for (guint side = 0; side < 2; side++)
      {
        gboolean atomr_side = (side + rep) % 2 == 1;
        g_autoptr(GAsyncResult) result = NULL;
        gdouble t0, t;

        if (!atomr_side)
          {
            atomr_device_enter (device, NULL);
            t0 = bench_now_us ();
            for (guint k = 0; k < GEMM_CALLS; k++)
              if (cublasSgemm (handle, CUBLAS_OP_N, CUBLAS_OP_N, GEMM_N, GEMM_N, GEMM_N, &one,
                               (const float *) (uintptr_t) atomr_buffer_get_ptr (a), GEMM_N,
                               (const float *) (uintptr_t) atomr_buffer_get_ptr (b), GEMM_N, &zero,
                               (float *) (uintptr_t) atomr_buffer_get_ptr (c), GEMM_N) != CUBLAS_STATUS_SUCCESS)
                die ("cublasSgemm", NULL);
            if (ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
              die ("cuStreamSynchronize", NULL);
            t = (bench_now_us () - t0) / GEMM_CALLS;
            atomr_device_leave (device);
          }
        else
          {
            t0 = bench_now_us ();
            for (guint k = 0; k + 1 < GEMM_CALLS; k++)
              atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, GEMM_N, GEMM_N, GEMM_N,
                                           1.0, 0.0, a, GEMM_N, b, GEMM_N, 0.0, 0.0, c, GEMM_N,
                                           NULL, NULL, NULL);
            atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, GEMM_N, GEMM_N, GEMM_N,
                                         1.0, 0.0, a, GEMM_N, b, GEMM_N, 0.0, 0.0, c, GEMM_N,
                                         NULL, bench_store_result, &result);
            bench_wait_for (&result);
            if (!atomr_blas_actor_gemm_finish (blas, result, &error))
              die ("gemm", error);
            t = (bench_now_us () - t0) / GEMM_CALLS;
          }
        if (rep >= 2)   /* each side has gone first once: warm */
          {
            if (atomr_side)
              *at = MIN (*at, t);
            else
              *raw = MIN (*raw, t);
          }
      }

  atomr_device_enter (device, NULL);
  cublasDestroy (handle);
  keep_stream (stream);
  atomr_device_leave (device);
}

/* 2. FFT C2C 256 x 16, launch -> completion */
static void
fft_rows (AtomrDevice *device, gdouble *raw, gdouble *at)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrFftActor) fft = atomr_fft_actor_new (device, &error);
  g_autoptr(AtomrFftPlan) plan = NULL;
  g_autoptr(AtomrBuffer) in = NULL, out = NULL;
  gdouble *t = g_new (gdouble, FFT_REPS);
  long long n[1] = { FFT_N };
  cufftHandle handle;
  size_t work = 0;
  CUstream stream;

  if (fft == NULL)
    die ("fft actor", error);
  plan = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, FFT_N, FFT_BATCH, &error);
  if (plan == NULL)
    die ("fft plan", error);
  in = atomr_buffer_new (device, ATOMR_DTYPE_C64, FFT_N * FFT_BATCH, &error);
  out = atomr_buffer_new (device, ATOMR_DTYPE_C64, FFT_N * FFT_BATCH, &error);
  if (out == NULL || !atomr_buffer_fill_sync (in, 0.5, NULL, &error))
    die ("fft buffers", error);

  for (guint i = 0; i < FFT_REPS + 20; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      gdouble t0 = bench_now_us ();

      atomr_fft_actor_execute_async (fft, plan, ATOMR_FFT_FORWARD, in, out, NULL, bench_store_result, &result);
      bench_wait_for (&result);
      if (!atomr_fft_actor_execute_finish (fft, result, &error))
        die ("fft execute", error);
      if (i >= 20)
        t[i - 20] = bench_now_us () - t0;
    }
  *at = bench_median (t, FFT_REPS);

  atomr_device_enter (device, NULL);
  if (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      !atomr_cufft_load (&error) || cufftCreate (&handle) != CUFFT_SUCCESS ||
      cufftMakePlanMany64 (handle, 1, n, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, FFT_BATCH, &work)
      != CUFFT_SUCCESS ||
      cufftSetStream (handle, (cudaStream_t) stream) != CUFFT_SUCCESS)
    die ("cuFFT", error);
  for (guint i = 0; i < FFT_REPS + 20; i++)
    {
      gdouble t0 = bench_now_us ();

      if (cufftExecC2C (handle, (cufftComplex *) (uintptr_t) atomr_buffer_get_ptr (in),
                        (cufftComplex *) (uintptr_t) atomr_buffer_get_ptr (out), CUFFT_FORWARD)
          != CUFFT_SUCCESS || ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
        die ("cufftExecC2C", NULL);
      if (i >= 20)
        t[i - 20] = bench_now_us () - t0;
    }
  *raw = bench_median (t, FFT_REPS);
  cufftDestroy (handle);
  keep_stream (stream);
  atomr_device_leave (device);
  g_free (t);
}

/* 3. kernel disk-cache hit -> launchable kernel */
static void
disk_rows (AtomrDevice *device, gdouble *raw, gdouble *at)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *dir = g_dir_make_tmp ("atomr-bench-peers-XXXXXX", &error);
  g_autofree gchar *cubin_path = NULL;
  g_autofree gchar *arch = atomr_device_get_arch (device);
  g_autoptr(AtomrKernelCache) cache = NULL, disk_only = NULL;
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) first = NULL;
  gdouble *t = g_new (gdouble, DISK_REPS);

  if (dir == NULL)
    die ("tmpdir", error);
  cache = atomr_kernel_cache_new (dir);
  disk_only = atomr_kernel_cache_new (dir);
  atomr_kernel_cache_set_memory_capacity (disk_only, 0);
  atomr_compile_options_set_arch (options, arch);
  atomr_compile_options_add_name_expression (options, "empty");
  first = atomr_nvrtc_compile_for_device (EMPTY_SOURCE, NULL, options, cache, device, &error);
  if (first == NULL)
    die ("first compile", error);

  /* The raw side's cache: the same CUBIN in a file of its own. */
  cubin_path = g_build_filename (dir, "raw.cubin", NULL);
  if (!g_file_set_contents (cubin_path, g_bytes_get_data (atomr_module_get_cubin (first), NULL),
                            g_bytes_get_size (atomr_module_get_cubin (first)), &error))
    die ("raw cubin", error);

  for (guint i = 0; i < DISK_REPS + 20; i++)
    {
      g_autoptr(AtomrModule) module = NULL;
      g_autoptr(AtomrKernel) kernel = NULL;
      gdouble t0 = bench_now_us ();

      module = atomr_nvrtc_compile_for_device (EMPTY_SOURCE, NULL, options, disk_only, device, &error);
      if (module == NULL || atomr_module_get_cache_status (module) != ATOMR_CACHE_STATUS_DISK_HIT)
        die ("disk hit", error);
      kernel = atomr_kernel_new_loaded (device, module, "empty", &error);
      if (kernel == NULL)
        die ("load", error);
      if (i >= 20)
        t[i - 20] = bench_now_us () - t0;
    }
  *at = bench_median (t, DISK_REPS);

  atomr_device_enter (device, NULL);
  for (guint i = 0; i < DISK_REPS + 20; i++)
    {
      g_autofree gchar *data = NULL;
      gsize len;
      CUmodule module;
      CUfunction function;
      gdouble t0 = bench_now_us ();

      if (!g_file_get_contents (cubin_path, &data, &len, &error) ||
          ATOMR_CU->cuModuleLoadData (&module, data) != CUDA_SUCCESS ||
          ATOMR_CU->cuModuleGetFunction (&function, module, "empty") != CUDA_SUCCESS)
        die ("raw load", error);
      if (i >= 20)
        t[i - 20] = bench_now_us () - t0;
      ATOMR_CU->cuModuleUnload (module);
    }
  *raw = bench_median (t, DISK_REPS);
  atomr_device_leave (device);

  g_clear_object (&disk_only);
  g_clear_object (&cache);
  g_unlink (cubin_path);
  bench_rm_rf (dir);
  g_free (t);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  const gchar *json_path = NULL;
  gdouble g_raw[2], g_at[2], f_raw, f_at, d_raw, d_at;

  for (gint i = 1; i + 1 < argc; i++)
    if (g_str_equal (argv[i], "--json"))
      json_path = argv[i + 1];
  if (device == NULL)
    {
      g_printerr ("bench-peers: %s\n", error->message);
      return 77;
    }

  for (guint m = 0; m < 2; m++)
    gemm_rows (device, m == 1, &g_raw[m], &g_at[m]);
  fft_rows (device, &f_raw, &f_at);
  disk_rows (device, &d_raw, &d_at);

  printf ("# bench-peers on %s (driver %d): the rows of the peers table bench-graph has not\n",
          atomr_device_get_name (device), atomr_device_get_driver_version ());
  printf ("%-60s %12s %12s %8s\n", "row", "raw us", "atomr us", "ratio");
  printf ("%-60s %12.2f %12.2f %8.3f\n", "SGEMM 4096 FP32, us per call (20 pipelined, best of 6)",
          g_raw[0], g_at[0], g_at[0] / g_raw[0]);
  printf ("%-60s %12.2f %12.2f %8.3f\n", "SGEMM 4096 TF32, us per call (20 pipelined, best of 6)",
          g_raw[1], g_at[1], g_at[1] / g_raw[1]);
  printf ("%-60s %12.2f %12.2f %8.3f\n", "FFT C2C 256 x 16, launch -> completion (median)",
          f_raw, f_at, f_at / f_raw);
  printf ("# FFT C2C 256 x 16 atomr latency / raw: %.3f (goal <= 1.1)\n", f_at / f_raw);
  printf ("%-60s %12.2f %12.2f %8.3f\n", "kernel disk-cache hit -> launchable kernel (median)",
          d_raw, d_at, d_at / d_raw);

  if (json_path)
    {
      g_autofree gchar *json = g_strdup_printf (
          "{\n  \"device\": \"%s\",\n"
          "  \"gemm_4096_fp32_us_per_call\": {\"raw\": %.3f, \"atomr\": %.3f},\n"
          "  \"gemm_4096_tf32_us_per_call\": {\"raw\": %.3f, \"atomr\": %.3f},\n"
          "  \"fft_c2c_256x16_us\": {\"raw\": %.3f, \"atomr\": %.3f},\n"
          "  \"disk_cache_hit_us\": {\"raw\": %.3f, \"atomr\": %.3f}\n}\n",
          atomr_device_get_name (device), g_raw[0], g_at[0], g_raw[1], g_at[1], f_raw, f_at,
          d_raw, d_at);
      if (!g_file_set_contents (json_path, json, -1, &error))
        die ("--json", error);
    }
  return 0;
}
