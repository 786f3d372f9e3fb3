/* inspector-demo-workload.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "inspector-demo-workload.h"

/* What the demo runs on a GPU, queued all at once: the actors run their
 * operations in order and the hazards on the buffers order them across
 * actors.  Per round, with x[i] = (i mod 1000) / 1000 and y = 1 at first:
 *
 *   NVRTC actor: y = 0.5·x + y (saxpy); y = 0.99·y (scale<float>);
 *                sum = Σ y (reduce_sum, after the copy actor zeroed sum)
 *   copy actors: download sum; copy y to a spare buffer; upload x again
 *   math actors (when given): cuRAND fills A with normal numbers; cuBLAS
 *                C = A·x as 1024 × 1024 matrices; cuFFT transforms a
 *                2^18-point complex signal forward and back
 *
 * Separate from the window so a GPU test runs exactly what the demo runs. */

#define SAXPY_A 0.5f
#define SCALE_F 0.99f

typedef struct {
  guint        pending;
  GError      *error;
  gdouble      last_sum;
  guint        rounds;
  guint        downloads;
  GPtrArray   *keep;     /* buffers and kernels, alive until the end */
} Workload;

static void
workload_free (Workload *w)
{
  g_clear_error (&w->error);
  g_ptr_array_unref (w->keep);
  g_free (w);
}

/**
 * inspector_demo_kernel_source:
 * @file: "saxpy.cu", "reduce.cu" or "scale.cu"
 *
 * Returns: (transfer full) (nullable): the demo kernel's source, from the
 *   inspector's resources
 */
gchar *
inspector_demo_kernel_source (const gchar *file)
{
  g_autofree gchar *path = g_strconcat ("/io/github/atomr/Inspector/kernels/", file, NULL);
  g_autoptr(GBytes) bytes = g_resources_lookup_data (path, 0, NULL);

  return bytes ? g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes)) : NULL;
}

/**
 * inspector_demo_workload_expected_sum:
 * @rounds: how many rounds ran
 *
 * Returns: Σ y after @rounds rounds, computed on the host in double precision
 */
gdouble
inspector_demo_workload_expected_sum (guint rounds)
{
  gdouble sum = 0;

  for (guint i = 0; i < INSPECTOR_DEMO_ELEMENTS; i++)
    {
      gdouble x = (gdouble) (gfloat) ((gfloat) (i % 1000) / 1000.0f), y = 1.0;
      for (guint r = 0; r < rounds; r++)
        y = (SAXPY_A * x + y) * SCALE_F;
      sum += y;
    }
  return sum;
}

static void
one_done (GTask  *task,
          GError *error)
{
  Workload *w = g_task_get_task_data (task);

  if (error && w->error == NULL)
    w->error = g_error_copy (error);
  if (--w->pending == 0)
    {
      if (w->error)
        g_task_return_error (task, g_steal_pointer (&w->error));
      else
        g_task_return_boolean (task, TRUE);
    }
  g_object_unref (task);
}

static void
launch_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_nvrtc_actor_launch_finish (ATOMR_NVRTC_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
upload_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_upload_finish (ATOMR_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
fill_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
copy_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_copy_finish (ATOMR_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
gemm_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_blas_actor_gemm_finish (ATOMR_BLAS_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
fft_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_fft_actor_execute_finish (ATOMR_FFT_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
rng_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_rng_actor_fill_finish (ATOMR_RNG_ACTOR (source), result, &error);
  one_done (task, error);
}

static void
download_done (GObject *source, GAsyncResult *result, gpointer task)
{
  Workload *w = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_actor_download_finish (ATOMR_ACTOR (source), result, &error);

  /* downloads complete in order on their actor: the last one is the result */
  if (bytes && g_bytes_get_size (bytes) == sizeof (gfloat))
    w->last_sum = *(const gfloat *) g_bytes_get_data (bytes, NULL);
  w->downloads++;
  one_done (task, error);
}

static AtomrKernel *
get_kernel (AtomrNvrtcActor  *nvrtc,
            AtomrModule      *module,
            const gchar      *name,
            GPtrArray        *keep,
            GError          **error)
{
  AtomrKernel *kernel = atomr_nvrtc_actor_get_kernel (nvrtc, module, name, error);

  if (kernel)
    g_ptr_array_add (keep, kernel);
  return kernel;
}

/**
 * inspector_demo_workload_run_async:
 * @nvrtc: the NVRTC actor that launches the kernels
 * @upload_actor: a copy actor for uploads and downloads
 * @copy_actor: a copy actor for fills and device copies
 * @saxpy: the module of saxpy.cu
 * @reduce: the module of reduce.cu
 * @scale: the module of scale.cu, with scale<float>
 * @blas: (nullable): a cuBLAS actor for the GEMMs
 * @fft: (nullable): a cuFFT actor for the transforms
 * @rng: (nullable): a cuRAND actor that fills the GEMM's A
 * @rounds: how many rounds to queue
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when every operation completed
 * @user_data: for @callback
 *
 * Queues the workload; @callback runs when every operation completed, or
 * at once when a kernel or a buffer could not be made.
 */
void
inspector_demo_workload_run_async (AtomrNvrtcActor     *nvrtc,
                                   AtomrActor          *upload_actor,
                                   AtomrActor          *copy_actor,
                                   AtomrModule         *saxpy,
                                   AtomrModule         *reduce,
                                   AtomrModule         *scale,
                                   AtomrBlasActor      *blas,
                                   AtomrFftActor       *fft,
                                   AtomrRngActor       *rng,
                                   guint                rounds,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  GError *error = NULL;
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (nvrtc));
  g_autoptr(GTask) task = NULL;
  g_autoptr(GBytes) host = NULL;
  g_autoptr(AtomrLaunchConfig) elementwise = atomr_launch_config_new_1d (INSPECTOR_DEMO_ELEMENTS, 256);
  g_autoptr(AtomrLaunchConfig) halves = atomr_launch_config_new_1d (INSPECTOR_DEMO_ELEMENTS / 2, 256);
  g_autofree gfloat *values = g_new (gfloat, INSPECTOR_DEMO_ELEMENTS);
  AtomrKernel *k_saxpy, *k_reduce, *k_scale;
  AtomrBuffer *buf[4], *mat_a = NULL, *mat_c = NULL, *signal = NULL, *spectrum = NULL;
  g_autoptr(AtomrFftPlan) plan = NULL;
  Workload *w;

  w = g_new0 (Workload, 1);
  w->keep = g_ptr_array_new_with_free_func (g_object_unref);
  w->rounds = rounds;
  task = g_task_new (NULL, cancellable, callback, user_data);
  g_task_set_source_tag (task, inspector_demo_workload_run_async);
  g_task_set_task_data (task, w, (GDestroyNotify) workload_free);

  if (!(k_saxpy = get_kernel (nvrtc, saxpy, "saxpy", w->keep, &error)) ||
      !(k_reduce = get_kernel (nvrtc, reduce, "reduce_sum", w->keep, &error)) ||
      !(k_scale = get_kernel (nvrtc, scale, "scale<float>", w->keep, &error)))
    {
      g_task_return_error (task, error);
      return;
    }
  for (guint i = 0; i < 4; i++)
    {
      buf[i] = atomr_buffer_new (device, ATOMR_DTYPE_F32, i == 2 ? 1 : INSPECTOR_DEMO_ELEMENTS, &error);
      if (buf[i] == NULL)
        {
          g_task_return_error (task, error);
          return;
        }
      g_ptr_array_add (w->keep, buf[i]);
    }
  /* the math actors' buffers: A and C of the GEMM, the FFT's signal */
  if ((blas || rng) &&
      (!(mat_a = atomr_buffer_new (device, ATOMR_DTYPE_F32, INSPECTOR_DEMO_ELEMENTS, &error)) ||
       !(mat_c = atomr_buffer_new (device, ATOMR_DTYPE_F32, INSPECTOR_DEMO_ELEMENTS, &error))))
    {
      g_clear_object (&mat_a);
      g_task_return_error (task, error);
      return;
    }
  if (mat_a)
    {
      g_ptr_array_add (w->keep, mat_a);
      g_ptr_array_add (w->keep, mat_c);
    }
  if (fft &&
      (!(plan = atomr_fft_plan_new_1d (ATOMR_FFT_C2C, ATOMR_DTYPE_F32, INSPECTOR_DEMO_FFT_SIZE, 1, &error)) ||
       !(signal = atomr_buffer_new (device, ATOMR_DTYPE_C64, INSPECTOR_DEMO_FFT_SIZE, &error)) ||
       !(spectrum = atomr_buffer_new (device, ATOMR_DTYPE_C64, INSPECTOR_DEMO_FFT_SIZE, &error))))
    {
      g_clear_object (&signal);
      g_task_return_error (task, error);
      return;
    }
  if (signal)
    {
      g_ptr_array_add (w->keep, signal);
      g_ptr_array_add (w->keep, spectrum);
    }
  for (guint i = 0; i < INSPECTOR_DEMO_ELEMENTS; i++)
    values[i] = (gfloat) (i % 1000) / 1000.0f;
  host = g_bytes_new_take (g_steal_pointer (&values), sizeof (gfloat) * INSPECTOR_DEMO_ELEMENTS);

  /* x = buf[0], y = buf[1], sum = buf[2], spare = buf[3] */
  w->pending = 1;   /* held until everything is queued */
  w->pending += 2;
  atomr_actor_upload_async (upload_actor, buf[0], host, cancellable, upload_done, g_object_ref (task));
  atomr_actor_fill_async (copy_actor, buf[1], 1.0, cancellable, fill_done, g_object_ref (task));
  if (blas && !rng)
    {
      w->pending++;
      atomr_actor_fill_async (copy_actor, mat_a, 0.001, cancellable, fill_done, g_object_ref (task));
    }
  if (signal)
    {
      w->pending++;
      atomr_actor_fill_async (copy_actor, signal, 1.0, cancellable, fill_done, g_object_ref (task));
    }
  for (guint r = 0; r < rounds; r++)
    {
      g_autoptr(AtomrKernelArgs) a_saxpy = atomr_kernel_args_new ();
      g_autoptr(AtomrKernelArgs) a_scale = atomr_kernel_args_new ();
      g_autoptr(AtomrKernelArgs) a_reduce = atomr_kernel_args_new ();

      atomr_kernel_args_add_f32 (a_saxpy, SAXPY_A);
      atomr_kernel_args_add_buffer_read_only (a_saxpy, buf[0]);
      atomr_kernel_args_add_buffer (a_saxpy, buf[1]);
      atomr_kernel_args_add_u32 (a_saxpy, INSPECTOR_DEMO_ELEMENTS);
      atomr_kernel_args_add_buffer (a_scale, buf[1]);
      atomr_kernel_args_add_f32 (a_scale, SCALE_F);
      atomr_kernel_args_add_u32 (a_scale, INSPECTOR_DEMO_ELEMENTS);
      atomr_kernel_args_add_buffer_read_only (a_reduce, buf[1]);
      atomr_kernel_args_add_buffer (a_reduce, buf[2]);
      atomr_kernel_args_add_u32 (a_reduce, INSPECTOR_DEMO_ELEMENTS);

      w->pending += 7;
      atomr_nvrtc_actor_launch_async (nvrtc, k_saxpy, elementwise, a_saxpy, cancellable, launch_done, g_object_ref (task));
      atomr_nvrtc_actor_launch_async (nvrtc, k_scale, elementwise, a_scale, cancellable, launch_done, g_object_ref (task));
      atomr_actor_fill_async (copy_actor, buf[2], 0.0, cancellable, fill_done, g_object_ref (task));
      atomr_nvrtc_actor_launch_async (nvrtc, k_reduce, halves, a_reduce, cancellable, launch_done, g_object_ref (task));
      atomr_actor_download_async (upload_actor, buf[2], cancellable, download_done, g_object_ref (task));
      atomr_actor_copy_async (copy_actor, buf[3], buf[1], cancellable, copy_done, g_object_ref (task));
      atomr_actor_upload_async (upload_actor, buf[0], host, cancellable, upload_done, g_object_ref (task));

      if (rng)
        {
          w->pending++;
          atomr_rng_actor_fill_async (rng, mat_a, ATOMR_RNG_NORMAL, 0.0, 1.0, cancellable, rng_done, g_object_ref (task));
        }
      if (blas)
        {
          w->pending++;
          atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 1024, 1024, 1024,
                                       1.0, 0.0, mat_a, 1024, buf[0], 1024, 0.0, 0.0, mat_c, 1024,
                                       cancellable, gemm_done, g_object_ref (task));
        }
      if (fft)
        {
          w->pending += 2;
          atomr_fft_actor_execute_async (fft, plan, ATOMR_FFT_FORWARD, signal, spectrum, cancellable,
                                         fft_done, g_object_ref (task));
          atomr_fft_actor_execute_async (fft, plan, ATOMR_FFT_INVERSE, spectrum, signal, cancellable,
                                         fft_done, g_object_ref (task));
        }
    }
  one_done (g_object_ref (task), NULL);
}

/**
 * inspector_demo_workload_run_finish:
 * @result: the result given to the callback
 * @last_sum: (out) (optional): Σ y as the last round downloaded it
 * @error: return location for a #GError
 *
 * Returns: %TRUE when every operation succeeded
 */
gboolean
inspector_demo_workload_run_finish (GAsyncResult  *result,
                                    gdouble       *last_sum,
                                    GError       **error)
{
  Workload *w = g_task_get_task_data (G_TASK (result));

  if (last_sum)
    *last_sum = w->last_sum;
  return g_task_propagate_boolean (G_TASK (result), error);
}
