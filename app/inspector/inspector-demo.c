/* inspector-demo.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-compiler.h"
#include "inspector-demo.h"
#include "inspector-demo-workload.h"

/* The demo, step by step on the main context:
 *  1. compile the bundled kernels (saxpy, a reduction, a templated scale)
 *     into the window's cache: through the GPU's AtomrNvrtcActor, or with
 *     the stand-alone compiler without a GPU — the Cache page fills up;
 *  2. open saxpy in the Editor;
 *  3. with a GPU: run the kernels on the NVRTC actor while two copy actors
 *     upload, fill, copy and download, all recorded live by an
 *     AtomrTraceRecorder the Trace page follows; without one: open the
 *     bundled sample trace. */

typedef struct {
  const gchar *resource;
  const gchar *program;
  const gchar *names;   /* ';'-separated name expressions, NULL: found in the source */
} DemoKernel;

static const DemoKernel demo_kernels[] = {
  { "saxpy.cu", "saxpy.cu", NULL },
  { "reduce.cu", "reduce.cu", NULL },
  { "scale.cu", "scale.cu", "scale<float>;scale<double>;scale<int>" },
};

#define GPU_ROUNDS 48

typedef struct {
  InspectorWindow    *window;
  guint               next_kernel;
  guint               n_compiled;
  GPtrArray          *errors;       /* gchar* */
  AtomrModule        *modules[3];   /* of demo_kernels */
  AtomrNvrtcActor    *nvrtc;
  AtomrBlasActor     *blas;         /* the math actors: NULL when their */
  AtomrFftActor      *fft;          /* library is missing */
  AtomrRngActor      *rng;
  AtomrDevice        *device;
  AtomrActor         *upload_actor;
  AtomrActor         *copy_actor;
  AtomrTraceRecorder *recorder;
} DemoData;

static void
demo_data_free (DemoData *d)
{
  g_clear_object (&d->window);
  g_ptr_array_unref (d->errors);
  for (guint i = 0; i < G_N_ELEMENTS (d->modules); i++)
    g_clear_object (&d->modules[i]);
  g_clear_object (&d->nvrtc);
  g_clear_object (&d->blas);
  g_clear_object (&d->fft);
  g_clear_object (&d->rng);
  g_clear_object (&d->upload_actor);
  g_clear_object (&d->copy_actor);
  g_clear_object (&d->recorder);
  g_clear_object (&d->device);
  g_free (d);
}

/**
 * inspector_find_data_file:
 * @name: a file of the data folder, such as "sample-trace.json"
 *
 * Looks in `$ATOMR_INSPECTOR_DATA_DIR` (set by the build tree's devenv and
 * tests) first, then in the installed package data directory.
 *
 * Returns: (transfer full) (nullable): the path, or %NULL when not found
 */
gchar *
inspector_find_data_file (const gchar *name)
{
  const gchar *env = g_getenv ("ATOMR_INSPECTOR_DATA_DIR");
  g_autofree gchar *path = NULL;

  if (env && *env)
    {
      path = g_build_filename (env, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer (&path);
      g_clear_pointer (&path, g_free);
    }
  path = g_build_filename (ATOMR_INSPECTOR_PKGDATADIR, name, NULL);
  if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&path);
  return NULL;
}

static void finish (GTask *task);

static void
open_sample_trace (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);
  g_autofree gchar *path = inspector_find_data_file ("sample-trace.json");
  g_autoptr(GFile) file = NULL;
  g_autoptr(GError) error = NULL;

  if (path == NULL)
    {
      g_ptr_array_add (d->errors, g_strdup (_("The bundled sample trace sample-trace.json is not installed")));
      return;
    }
  file = g_file_new_for_path (path);
  if (!inspector_trace_page_load (inspector_window_get_trace_page (d->window), file, &error))
    g_ptr_array_add (d->errors, g_strdup (error->message));
}

/* GPU 0 and its actors, recorded from the start; FALSE without a GPU. */
static gboolean
open_gpu (DemoData *d)
{
  g_autoptr(GError) error = NULL;

  d->device = atomr_device_get (0, &error);
  if (d->device == NULL)
    return FALSE;
  d->nvrtc = atomr_nvrtc_actor_new (d->device, &error);
  if (d->nvrtc)
    d->upload_actor = ATOMR_ACTOR (atomr_copy_actor_new (d->device, &error));
  if (d->upload_actor)
    d->copy_actor = ATOMR_ACTOR (atomr_copy_actor_new (d->device, &error));
  if (d->copy_actor == NULL)
    {
      g_ptr_array_add (d->errors, g_strdup (error->message));
      g_clear_object (&d->nvrtc);
      g_clear_object (&d->upload_actor);
      g_clear_object (&d->device);
      return FALSE;
    }
  atomr_actor_set_name (ATOMR_ACTOR (d->nvrtc), "demo-kernels");
  atomr_actor_set_name (d->upload_actor, "demo-upload");
  atomr_actor_set_name (d->copy_actor, "demo-copy");
  d->recorder = atomr_trace_recorder_new (65536);
  atomr_actor_set_timing (ATOMR_ACTOR (d->nvrtc), TRUE);
  atomr_actor_set_timing (d->upload_actor, TRUE);
  atomr_actor_set_timing (d->copy_actor, TRUE);
  atomr_trace_recorder_add_actor (d->recorder, ATOMR_ACTOR (d->nvrtc));
  atomr_trace_recorder_add_actor (d->recorder, d->upload_actor);
  atomr_trace_recorder_add_actor (d->recorder, d->copy_actor);

  /* GEMM, FFT and RNG work beside the kernels, each on its own stream */
  d->blas = atomr_blas_actor_new (d->device, &error);
  if (d->blas == NULL)
    g_ptr_array_add (d->errors, g_strdup (error->message));
  g_clear_error (&error);
  d->fft = atomr_fft_actor_new (d->device, &error);
  if (d->fft == NULL)
    g_ptr_array_add (d->errors, g_strdup (error->message));
  g_clear_error (&error);
  d->rng = atomr_rng_actor_new (d->device, ATOMR_RNG_PHILOX, &error);
  if (d->rng == NULL)
    g_ptr_array_add (d->errors, g_strdup (error->message));
  g_clear_error (&error);
  {
    AtomrActor *math[] = { ATOMR_ACTOR (d->blas), ATOMR_ACTOR (d->fft), ATOMR_ACTOR (d->rng) };
    const gchar *names[] = { "demo-blas", "demo-fft", "demo-rng" };

    for (guint i = 0; i < G_N_ELEMENTS (math); i++)
      if (math[i])
        {
          atomr_actor_set_name (math[i], names[i]);
          atomr_actor_set_timing (math[i], TRUE);
          atomr_trace_recorder_add_actor (d->recorder, math[i]);
        }
  }
  inspector_trace_page_follow_recorder (inspector_window_get_trace_page (d->window), d->recorder);
  return TRUE;
}

static void
workload_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  DemoData *d = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  gdouble sum = 0;

  if (!inspector_demo_workload_run_finish (result, &sum, &error))
    g_ptr_array_add (d->errors, g_strdup (error->message));
  else
    {
      /* Translators: %.6g is the sum the reduction kernel computed */
      g_autofree gchar *msg = g_strdup_printf (_("The demo ran on the GPU: Σ y = %.6g"), sum);
      inspector_window_toast (d->window, msg);
    }
  inspector_trace_model_refresh (inspector_trace_page_get_model (inspector_window_get_trace_page (d->window)));
  finish (task);
}

/* Returns FALSE when nothing was queued on the GPU. */
static gboolean
run_on_gpu (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);

  if (d->modules[0] == NULL || d->modules[1] == NULL || d->modules[2] == NULL)
    return FALSE;   /* a compile failed: already reported */
  inspector_demo_workload_run_async (d->nvrtc, d->upload_actor, d->copy_actor,
                                     d->modules[0], d->modules[1], d->modules[2],
                                     d->blas, d->fft, d->rng, GPU_ROUNDS,
                                     g_task_get_cancellable (task), workload_done, g_object_ref (task));
  return TRUE;
}

static void
finish (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);

  inspector_window_set_busy (d->window, FALSE);
  inspector_window_set_page (d->window, "trace");
  if (d->errors->len > 0)
    {
      g_autofree gchar *all = NULL;

      g_ptr_array_add (d->errors, NULL);
      all = g_strjoinv ("\n", (gchar **) d->errors->pdata);
      g_ptr_array_remove_index (d->errors, d->errors->len - 1);
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "%s", all);
    }
  else
    g_task_return_boolean (task, TRUE);
}

static void
after_compiles (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);
  g_autofree gchar *saxpy = inspector_demo_kernel_source ("saxpy.cu");

  if (saxpy)
    inspector_editor_page_set_text (inspector_window_get_editor_page (d->window), "saxpy.cu", saxpy);
  inspector_cache_model_reload (inspector_cache_page_get_model (inspector_window_get_cache_page (d->window)), NULL);

  if (d->device && run_on_gpu (task))
    return;   /* finish() runs when the last operation completes */
  if (d->device == NULL)
    inspector_window_toast (d->window, _("No GPU: showing the bundled sample trace"));
  open_sample_trace (task);
  finish (task);
}

static void compile_next (GTask *task);

static void
on_kernel_compiled (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  DemoData *d = g_task_get_task_data (task);
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;

  module = inspector_compile_finish (result, &error);
  if (module)
    {
      d->n_compiled++;
      d->modules[d->next_kernel - 1] = g_object_ref (module);
    }
  else
    g_ptr_array_add (d->errors, g_strdup (error->message));
  compile_next (task);
}

static void
compile_next (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);
  const DemoKernel *k;
  g_autofree gchar *source = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_auto(GStrv) names = NULL;
  AtomrKernelCache *cache;

  if (d->next_kernel >= G_N_ELEMENTS (demo_kernels))
    {
      after_compiles (task);
      return;
    }
  k = &demo_kernels[d->next_kernel++];
  source = inspector_demo_kernel_source (k->resource);
  if (source == NULL)
    {
      g_ptr_array_add (d->errors, g_strdup_printf (_("The demo kernel %s is missing from the resources"), k->resource));
      compile_next (task);
      return;
    }
  options = atomr_compile_options_new ();
  atomr_compile_options_set_std (options, "c++17");
  if (d->nvrtc == NULL)
    {
      /* no GPU to ask: Hopper.  No --ptxas-options=-v: the library records
       * ptxas' resource report in the entry without it, and the flag would
       * give the demo's entries other keys than the CLI's or the
       * library's compiles of the same sources. */
      atomr_compile_options_set_arch (options, "sm_90");
    }
  names = k->names ? g_strsplit (k->names, ";", -1) : inspector_find_kernel_names (source);
  for (guint i = 0; names[i]; i++)
    atomr_compile_options_add_name_expression (options, names[i]);
  cache = inspector_cache_model_get_cache (inspector_cache_page_get_model (inspector_window_get_cache_page (d->window)));
  inspector_compile_async (d->nvrtc, source, k->program, options, cache, g_task_get_cancellable (task),
                           on_kernel_compiled, g_object_ref (task));
}

/**
 * inspector_demo_run_async:
 * @window: the window to fill
 * @cancellable: (nullable): a #GCancellable
 * @callback: called when every step ran
 * @user_data: for @callback
 */
void
inspector_demo_run_async (InspectorWindow     *window,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (window, cancellable, callback, user_data);
  DemoData *d = g_new0 (DemoData, 1);

  d->window = g_object_ref (window);
  d->errors = g_ptr_array_new_with_free_func (g_free);
  g_task_set_source_tag (task, inspector_demo_run_async);
  g_task_set_task_data (task, d, (GDestroyNotify) demo_data_free);
  inspector_window_set_busy (window, TRUE);
  open_gpu (d);
  compile_next (task);
}

gboolean
inspector_demo_run_finish (GAsyncResult  *result,
                           GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
