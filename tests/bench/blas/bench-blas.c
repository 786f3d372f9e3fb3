/* bench-blas.c — SGEMM through AtomrBlasActor against raw cuBLAS
 *
 * For n = 256, 1024, 4096 and FP32 / TF32 math: the same cublasSgemm on
 * the same kind of stream (non-blocking, one per side), calls pipelined
 * (all submitted before waiting), timed on the host from the first submit
 * to the last completion.  Each figure is the best of several repetitions,
 * raw and actor interleaved.  Prints TFLOP/s and µs per call for both and
 * their ratios, for three ways of driving the actor: all calls submitted
 * at once, a window of WINDOW calls in flight, and all at once with inputs
 * last written on another stream (so every call waits on that stream's
 * event through the hazard tracking).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

/* The raw baseline calls cuBLAS through the same dlopen() table as the actor. */
#include "atomr-cublas-table-private.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"

#define REPS 5
#define WINDOW 32

typedef struct {
  AtomrBlasActor *actor;
  gint64          n;
  AtomrBuffer    *a, *b, *c;
  guint           iters, submitted, done, failed;
} Pipe;

static void pipe_submit (Pipe *p);

static void
on_gemm (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pipe *p = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_blas_actor_gemm_finish (ATOMR_BLAS_ACTOR (source), result, &error))
    {
      if (p->failed++ == 0)
        g_printerr ("gemm failed: %s\n", error->message);
    }
  p->done++;
  if (p->submitted < p->iters)
    pipe_submit (p);
}

static void
pipe_submit (Pipe *p)
{
  p->submitted++;
  atomr_blas_actor_gemm_async (p->actor, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, p->n, p->n, p->n,
                               1, 0, p->a, p->n, p->b, p->n, 0, 0, p->c, p->n, NULL, on_gemm, p);
}

/* @window: how many calls may be in flight (0: all submitted at once). */
static gdouble
time_actor (AtomrBlasActor *actor, gint64 n, guint iters, guint window,
            AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c)
{
  Pipe p = { actor, n, a, b, c, iters, 0, 0, 0 };
  gint64 t0 = g_get_monotonic_time ();
  guint first = window ? MIN (window, iters) : iters;

  for (guint i = 0; i < first; i++)
    pipe_submit (&p);
  while (p.done < iters)
    g_main_context_iteration (NULL, TRUE);
  if (p.failed)
    exit (1);
  return (g_get_monotonic_time () - t0) / 1e6;
}

static void
fill_on (AtomrActor *actor, AtomrBuffer *buffer, gdouble value)
{
  AtomrSync sync;
  g_autoptr(GError) error = NULL;

  atomr_sync_begin (&sync, actor);
  atomr_actor_fill_async (actor, buffer, value, NULL, atomr_sync_callback, &sync);
  g_assert_true (atomr_actor_fill_finish (actor, atomr_sync_wait (&sync), &error));
  atomr_sync_end (&sync);
  g_assert_no_error (error);
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
  g_assert_true (atomr_cublas_load (NULL));
  g_assert_cmpint (cublasCreate (&handle), ==, CUBLAS_STATUS_SUCCESS);
  g_assert_cmpint (cublasSetStream (handle, (cudaStream_t) stream), ==, CUBLAS_STATUS_SUCCESS);
  atomr_device_leave (device);

  g_print ("# SGEMM C = A·B, n×n f32, column-major, %s; best of %d, pipelined\n",
           atomr_device_get_name (device), REPS);
  g_print ("# columns per side: TFLOP/s, us per call; actor sides add throughput ratio to raw\n"
           "# (actor/raw, >= 0.99 wanted at 4096) and per-call time ratio (<= 1.1 wanted at 256)\n"
           "# actor-all: every call submitted at once, inputs written on the actor's stream\n"
           "# actor-w%d: at most %d calls in flight, same inputs\n"
           "# actor-xs: every call at once, inputs written by the copy actor (another stream)\n",
           WINDOW, WINDOW);
  g_print ("%-5s %-5s %5s | %16s | %32s | %32s | %32s\n", "n", "math", "calls", "raw",
           "actor-all", "actor-w" G_STRINGIFY (WINDOW), "actor-xs");

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
          /* X: inputs written by the device's copy actor (another stream);
           * O: inputs written on the actor's own stream. */
          AtomrBuffer *x[3], *o[3];
          gdouble best_raw = G_MAXDOUBLE, best[3] = { G_MAXDOUBLE, G_MAXDOUBLE, G_MAXDOUBLE };
          gdouble flops = 2.0 * n * n * n * iters;

          for (guint i = 0; i < 3; i++)
            {
              x[i] = atomr_buffer_new (device, ATOMR_DTYPE_F32, n * n, &error);
              g_assert_no_error (error);
              o[i] = atomr_buffer_new (device, ATOMR_DTYPE_F32, n * n, &error);
              g_assert_no_error (error);
              g_assert_true (atomr_buffer_fill_sync (x[i], 0.5 / (i + 1), NULL, NULL));
              fill_on (ATOMR_ACTOR (actor), o[i], 0.5 / (i + 1));
            }

          /* warm up (handles, kernels, clocks) */
          time_actor (actor, n, MAX (iters / 10, 3), 0, o[0], o[1], o[2]);
          time_raw (device, handle, stream, n, MAX (iters / 10, 3), o[0], o[1], o[2]);
          for (guint r = 0; r < REPS; r++)
            {
              best_raw = MIN (best_raw, time_raw (device, handle, stream, n, iters, o[0], o[1], o[2]));
              best[0] = MIN (best[0], time_actor (actor, n, iters, 0, o[0], o[1], o[2]));
              best[1] = MIN (best[1], time_actor (actor, n, iters, WINDOW, o[0], o[1], o[2]));
              best[2] = MIN (best[2], time_actor (actor, n, iters, 0, x[0], x[1], x[2]));
            }
          g_print ("%-5" G_GINT64_FORMAT " %-5s %5u | %7.2f %8.2f |", n, mode ? "TF32" : "FP32", iters,
                   flops / best_raw / 1e12, best_raw / iters * 1e6);
          for (guint v = 0; v < 3; v++)
            g_print (" %7.2f %8.2f %6.3fx %6.3fx |", flops / best[v] / 1e12, best[v] / iters * 1e6,
                     best_raw / best[v], best[v] / best_raw);
          g_print ("\n");
          for (guint i = 0; i < 3; i++)
            {
              g_object_unref (x[i]);
              g_object_unref (o[i]);
            }
        }
    }

  g_assert_true (atomr_device_enter (device, NULL));
  cublasDestroy (handle);
  ATOMR_CU->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return 0;
}
