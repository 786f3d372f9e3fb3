/* inspector-demo.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>

#include "inspector-compiler.h"
#include "inspector-demo.h"

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
#define GPU_ELEMENTS (1 << 20)

typedef struct {
  InspectorWindow    *window;
  guint               next_kernel;
  guint               n_compiled;
  GPtrArray          *errors;       /* gchar* */
  AtomrModule        *modules[3];   /* of demo_kernels */
  AtomrNvrtcActor    *nvrtc;
  AtomrDevice        *device;
  AtomrActor         *upload_actor;
  AtomrActor         *copy_actor;
  AtomrTraceRecorder *recorder;
  GPtrArray          *buffers;
  guint               pending;
  GError             *gpu_error;
} DemoData;

static void
demo_data_free (DemoData *d)
{
  g_clear_object (&d->window);
  g_ptr_array_unref (d->errors);
  g_clear_pointer (&d->buffers, g_ptr_array_unref);
  for (guint i = 0; i < G_N_ELEMENTS (d->modules); i++)
    g_clear_object (&d->modules[i]);
  g_clear_object (&d->nvrtc);
  g_clear_object (&d->upload_actor);
  g_clear_object (&d->copy_actor);
  g_clear_object (&d->recorder);
  g_clear_object (&d->device);
  g_clear_error (&d->gpu_error);
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

static gchar *
load_kernel (const gchar *resource)
{
  g_autofree gchar *path = g_strconcat ("/io/github/atomr/Inspector/kernels/", resource, NULL);
  g_autoptr(GBytes) bytes = g_resources_lookup_data (path, 0, NULL);

  return bytes ? g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes)) : NULL;
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

static void
gpu_op_finished (GTask  *task,
                 GError *error)
{
  DemoData *d = g_task_get_task_data (task);

  if (error && d->gpu_error == NULL)
    d->gpu_error = g_error_copy (error);
  if (--d->pending == 0)
    {
      inspector_trace_model_refresh (inspector_trace_page_get_model (inspector_window_get_trace_page (d->window)));
      finish (task);
    }
  g_object_unref (task);
}

static void
upload_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_upload_finish (ATOMR_ACTOR (source), result, &error);
  gpu_op_finished (task, error);
}

static void
fill_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &error);
  gpu_op_finished (task, error);
}

static void
copy_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_actor_copy_finish (ATOMR_ACTOR (source), result, &error);
  gpu_op_finished (task, error);
}

static void
launch_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  atomr_nvrtc_actor_launch_finish (ATOMR_NVRTC_ACTOR (source), result, &error);
  gpu_op_finished (task, error);
}

static void
download_done (GObject *source, GAsyncResult *result, gpointer task)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_actor_download_finish (ATOMR_ACTOR (source), result, &error);
  gpu_op_finished (task, error);
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
  inspector_trace_page_follow_recorder (inspector_window_get_trace_page (d->window), d->recorder);
  return TRUE;
}

static AtomrKernel *
demo_kernel (DemoData    *d,
             guint        module,
             const gchar *name)
{
  g_autoptr(GError) error = NULL;
  AtomrKernel *kernel;

  if (d->modules[module] == NULL)
    return NULL;   /* its compile failed: already reported */
  kernel = atomr_nvrtc_actor_get_kernel (d->nvrtc, d->modules[module], name, &error);
  if (kernel == NULL)
    g_ptr_array_add (d->errors, g_strdup (error->message));
  return kernel;
}

/* Queues every operation of the GPU part at once: the actors run them in
 * order, the hazards on the buffers order them across actors, and the
 * recorder sees each one complete.  Returns FALSE when nothing was queued. */
static gboolean
run_on_gpu (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) host = NULL;
  g_autoptr(AtomrKernel) saxpy = demo_kernel (d, 0, "saxpy");
  g_autoptr(AtomrKernel) reduce = demo_kernel (d, 1, "reduce_sum");
  g_autoptr(AtomrKernel) scale = demo_kernel (d, 2, "scale<float>");
  g_autoptr(AtomrLaunchConfig) elementwise = atomr_launch_config_new_1d (GPU_ELEMENTS, 256);
  g_autoptr(AtomrLaunchConfig) halves = atomr_launch_config_new_1d (GPU_ELEMENTS / 2, 256);
  g_autofree gfloat *values = g_new (gfloat, GPU_ELEMENTS);
  AtomrBuffer *x, *y, *sum, *spare;

  if (saxpy == NULL || reduce == NULL || scale == NULL)
    return FALSE;
  for (guint i = 0; i < GPU_ELEMENTS; i++)
    values[i] = (gfloat) (i % 1000) / 1000.0f;
  host = g_bytes_new_take (g_steal_pointer (&values), sizeof (gfloat) * GPU_ELEMENTS);
  d->buffers = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < 4; i++)
    {
      AtomrBuffer *b = atomr_buffer_new (d->device, ATOMR_DTYPE_F32, i == 2 ? 1 : GPU_ELEMENTS, &error);
      if (b == NULL)
        {
          g_ptr_array_add (d->errors, g_strdup (error->message));
          return FALSE;
        }
      g_ptr_array_add (d->buffers, b);
    }
  x = g_ptr_array_index (d->buffers, 0);
  y = g_ptr_array_index (d->buffers, 1);
  sum = g_ptr_array_index (d->buffers, 2);
  spare = g_ptr_array_index (d->buffers, 3);

  d->pending += 2;
  atomr_actor_upload_async (d->upload_actor, x, host, NULL, upload_done, g_object_ref (task));
  atomr_actor_fill_async (d->copy_actor, y, 1.0, NULL, fill_done, g_object_ref (task));
  for (guint r = 0; r < GPU_ROUNDS; r++)
    {
      g_autoptr(AtomrKernelArgs) saxpy_args = atomr_kernel_args_new ();
      g_autoptr(AtomrKernelArgs) scale_args = atomr_kernel_args_new ();
      g_autoptr(AtomrKernelArgs) reduce_args = atomr_kernel_args_new ();

      atomr_kernel_args_add_f32 (saxpy_args, 0.5f);
      atomr_kernel_args_add_buffer_read_only (saxpy_args, x);
      atomr_kernel_args_add_buffer (saxpy_args, y);
      atomr_kernel_args_add_u32 (saxpy_args, GPU_ELEMENTS);
      atomr_kernel_args_add_buffer (scale_args, y);
      atomr_kernel_args_add_f32 (scale_args, 0.99f);
      atomr_kernel_args_add_u32 (scale_args, GPU_ELEMENTS);
      atomr_kernel_args_add_buffer_read_only (reduce_args, y);
      atomr_kernel_args_add_buffer (reduce_args, sum);
      atomr_kernel_args_add_u32 (reduce_args, GPU_ELEMENTS);

      d->pending += 7;
      atomr_nvrtc_actor_launch_async (d->nvrtc, saxpy, elementwise, saxpy_args, NULL, launch_done, g_object_ref (task));
      atomr_nvrtc_actor_launch_async (d->nvrtc, scale, elementwise, scale_args, NULL, launch_done, g_object_ref (task));
      atomr_actor_fill_async (d->copy_actor, sum, 0.0, NULL, fill_done, g_object_ref (task));
      atomr_nvrtc_actor_launch_async (d->nvrtc, reduce, halves, reduce_args, NULL, launch_done, g_object_ref (task));
      atomr_actor_download_async (d->upload_actor, sum, NULL, download_done, g_object_ref (task));
      atomr_actor_copy_async (d->copy_actor, spare, y, NULL, copy_done, g_object_ref (task));
      atomr_actor_upload_async (d->upload_actor, x, host, NULL, upload_done, g_object_ref (task));
    }
  return TRUE;
}

static void
finish (GTask *task)
{
  DemoData *d = g_task_get_task_data (task);

  inspector_window_set_busy (d->window, FALSE);
  inspector_window_set_page (d->window, "trace");
  if (d->gpu_error)
    g_ptr_array_add (d->errors, g_strdup (d->gpu_error->message));
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
  g_autofree gchar *saxpy = load_kernel ("saxpy.cu");

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
  source = load_kernel (k->resource);
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
      /* no GPU to ask: Hopper, with ptxas' resource report in the log */
      atomr_compile_options_set_arch (options, "sm_90");
      atomr_compile_options_add_extra_flag (options, "--ptxas-options=-v");
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
