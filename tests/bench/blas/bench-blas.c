/* bench-blas.c — SGEMM through AtomrBlasActor against raw cuBLAS
 *
 * For n = 256, 1024, 4096 and FP32 / TF32 math: the same cublasSgemm on
 * the same kind of stream (non-blocking, one per side), calls pipelined
 * (all submitted before waiting), timed on the host from the first submit
 * to the last completion.  Each figure is the best of several repetitions,
 * raw and actor interleaved.  Prints TFLOP/s and µs per call for both and
 * their ratios.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <cublas_v2.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"

#define REPS 5

typedef struct {
  guint done;
  guint failed;
} Counter;

static void
on_gemm (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Counter *c = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_blas_actor_gemm_finish (ATOMR_BLAS_ACTOR (source), result, &error))
    {
      if (c->failed++ == 0)
        g_printerr ("gemm failed: %s\n", error->message);
    }
  c->done++;
}

static gdouble
time_actor (AtomrBlasActor *actor, gint64 n, guint iters,
            AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c)
{
  Counter counter = { 0, 0 };
  gint64 t0 = g_get_monotonic_time ();

  for (guint i = 0; i < iters; i++)
    atomr_blas_actor_gemm_async (actor, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, n, n, n, 1, 0, a, n,
                                 b, n, 0, 0, c, n, NULL, on_gemm, &counter);
  while (counter.done < iters)
    g_main_context_iteration (NULL, TRUE);
  if (counter.failed)
    exit (1);
  return (g_get_monotonic_time () - t0) / 1e6;
}

static gdouble
time_raw (AtomrDevice *device, cublasHandle_t handle, CUstream stream, gint64 n, guint iters,
          AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c)
{
  const float one = 1, zero = 0;
  const float *pa = (const float *) (uintptr_t) atomr_buffer_get_device_pointer (a);
  const float *pb = (const float *) (uintptr_t) atomr_buffer_get_device_pointer (b);
  float *pc = (float *) (uintptr_t) atomr_buffer_get_device_pointer (c);
  gint64 t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < iters; i++)
    if (cublasSgemm (handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, pa, n, pb, n, &zero, pc, n)
        != CUBLAS_STATUS_SUCCESS)
      g_error ("raw cublasSgemm failed");
  if (ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (g_get_monotonic_time () - t0) / 1e6;
}

int
main (int argc, char **argv)
{
  static const gint64 sizes[] = { 256, 1024, 4096 };
  static const guint iterations[] = { 4000, 400, 60 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrBlasActor) actor = NULL;
  cublasHandle_t handle = NULL;
  CUstream stream = NULL;

  if (device == NULL)
    {
      g_print ("bench-blas: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_blas_actor_new (device, &error);
  g_assert_no_error (error);

  /* The raw side: its own non-blocking stream, as the actor's. */
  g_assert_true (atomr_device_enter (device, NULL));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  g_assert_cmpint (cublasCreate (&handle), ==, CUBLAS_STATUS_SUCCESS);
  g_assert_cmpint (cublasSetStream (handle, (cudaStream_t) stream), ==, CUBLAS_STATUS_SUCCESS);
  atomr_device_leave (device);

  g_print ("# SGEMM C = A·B, n×n f32, column-major, %s; best of %d, pipelined\n",
           atomr_device_get_name (device), REPS);
  g_print ("%-5s %-5s %6s | %10s %10s | %10s %10s | %12s %12s\n", "n", "math", "calls",
           "raw TF/s", "raw us", "actor TF/s", "actor us", "thrpt ratio", "time ratio");

  for (guint mode = 0; mode < 2; mode++)
    {
      atomr_blas_actor_set_math_mode (actor, mode ? ATOMR_BLAS_MATH_TF32 : ATOMR_BLAS_MATH_DEFAULT);
      g_assert_true (atomr_device_enter (device, NULL));
      cublasSetMathMode (handle, mode ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
      atomr_device_leave (device);

      for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
        {
          gint64 n = sizes[s];
          guint iters = iterations[s];
          g_autoptr(AtomrBuffer) a = atomr_buffer_new (device, ATOMR_DTYPE_F32, n * n, &error);
          g_autoptr(AtomrBuffer) b = atomr_buffer_new (device, ATOMR_DTYPE_F32, n * n, &error);
          g_autoptr(AtomrBuffer) c = atomr_buffer_new (device, ATOMR_DTYPE_F32, n * n, &error);
          gdouble best_raw = G_MAXDOUBLE, best_actor = G_MAXDOUBLE;
          gdouble flops = 2.0 * n * n * n * iters;

          g_assert_no_error (error);
          g_assert_true (atomr_buffer_fill_sync (a, 0.5, NULL, NULL));
          g_assert_true (atomr_buffer_fill_sync (b, 0.25, NULL, NULL));
          g_assert_true (atomr_buffer_fill_sync (c, 0, NULL, NULL));

          /* warm up both (handles, kernels, clocks) */
          time_actor (actor, n, MAX (iters / 10, 3), a, b, c);
          time_raw (device, handle, stream, n, MAX (iters / 10, 3), a, b, c);
          for (guint r = 0; r < REPS; r++)
            {
              best_raw = MIN (best_raw, time_raw (device, handle, stream, n, iters, a, b, c));
              best_actor = MIN (best_actor, time_actor (actor, n, iters, a, b, c));
            }
          g_print ("%-5" G_GINT64_FORMAT " %-5s %6u | %10.2f %10.2f | %10.2f %10.2f | %11.3fx %11.3fx\n",
                   n, mode ? "TF32" : "FP32", iters,
                   flops / best_raw / 1e12, best_raw / iters * 1e6,
                   flops / best_actor / 1e12, best_actor / iters * 1e6,
                   best_raw / best_actor, best_actor / best_raw);
        }
    }

  g_assert_true (atomr_device_enter (device, NULL));
  cublasDestroy (handle);
  ATOMR_CU->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return 0;
}
