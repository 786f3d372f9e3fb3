/* inspector-compiler.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "inspector-compiler.h"

/* With a GPU, compiles go through the AtomrNvrtcActor of the device (which
 * compiles off its stream and loads nothing until a kernel is asked for).
 * Without one, atomr_nvrtc_compile() — which blocks for as long as NVRTC
 * runs, seconds for a templated kernel — runs in a GTask worker thread.
 * Either way the callback runs on the caller's main context. */

typedef struct {
  gchar               *source;
  gchar               *program_name;
  AtomrCompileOptions *options;
  AtomrKernelCache    *cache;
} CompileData;

static void
compile_data_free (CompileData *data)
{
  g_free (data->source);
  g_free (data->program_name);
  g_clear_object (&data->options);
  g_clear_object (&data->cache);
  g_free (data);
}

static void
compile_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  CompileData *data = task_data;
  GError *error = NULL;
  AtomrModule *module;

  module = atomr_nvrtc_compile (data->source, data->program_name, data->options, data->cache, &error);
  if (module)
    g_task_return_pointer (task, module, g_object_unref);
  else
    g_task_return_error (task, error);
}

static void
on_actor_compiled (GObject      *source_object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  AtomrModule *module;

  module = atomr_nvrtc_actor_compile_module_finish (ATOMR_NVRTC_ACTOR (source_object), result, &error);
  if (module)
    g_task_return_pointer (task, module, g_object_unref);
  else
    g_task_return_error (task, error);
}

/**
 * inspector_compile_async:
 * @actor: (nullable): the NVRTC actor of a GPU, or %NULL to compile without one
 * @source: CUDA C++ source
 * @program_name: the name NVRTC prints in diagnostics (an actor uses
 *   "program.cu" whatever this says)
 * @options: compile options (copied)
 * @cache: (nullable): the cache to look in and store into
 * @cancellable: (nullable): a #GCancellable; NVRTC itself cannot be
 *   interrupted, but a cancelled compile reports %G_IO_ERROR_CANCELLED
 * @callback: called on the thread-default main context
 * @user_data: for @callback
 */
void
inspector_compile_async (AtomrNvrtcActor      *actor,
                         const gchar          *source,
                         const gchar          *program_name,
                         AtomrCompileOptions  *options,
                         AtomrKernelCache     *cache,
                         GCancellable         *cancellable,
                         GAsyncReadyCallback   callback,
                         gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  CompileData *data = g_new0 (CompileData, 1);

  data->source = g_strdup (source);
  data->program_name = g_strdup (program_name);
  data->options = atomr_compile_options_copy (options);
  data->cache = cache ? g_object_ref (cache) : NULL;
  g_task_set_source_tag (task, inspector_compile_async);
  g_task_set_task_data (task, data, (GDestroyNotify) compile_data_free);
  if (actor)
    {
      atomr_nvrtc_actor_set_cache (actor, cache);
      atomr_nvrtc_actor_compile_module_async (actor, source, options, cancellable,
                                              on_actor_compiled, g_object_ref (task));
      return;
    }
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, compile_thread);
}

/**
 * inspector_compile_finish:
 * @result: the result given to the callback
 * @error: return location for a #GError (%ATOMR_ERROR_COMPILE carries
 *   NVRTC's log)
 *
 * Returns: (transfer full): the module, or %NULL on error
 */
AtomrModule *
inspector_compile_finish (GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * inspector_find_kernel_names:
 * @source: CUDA C++ source
 *
 * The names of the non-template `__global__` functions of @source, which
 * are the name expressions a user means when giving none.
 *
 * Returns: (transfer full): a %NULL-terminated array, maybe empty
 */
gchar **
inspector_find_kernel_names (const gchar *source)
{
  static GRegex *re;
  g_autoptr(GMatchInfo) m = NULL;
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();

  if (g_once_init_enter (&re))
    g_once_init_leave (&re, g_regex_new ("(template\\s*<[^{;]*>\\s*)?(?:extern\\s+\"C\"\\s+)?"
                                         "__global__\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s+)?"
                                         "void\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s+)?([A-Za-z_]\\w*)\\s*\\(",
                                         0, 0, NULL));
  if (source == NULL)
    return g_strv_builder_end (b);
  g_regex_match (re, source, 0, &m);
  while (g_match_info_matches (m))
    {
      g_autofree gchar *tmpl = g_match_info_fetch (m, 1);
      g_autofree gchar *name = g_match_info_fetch (m, 2);

      if (tmpl == NULL || *tmpl == '\0')
        g_strv_builder_add (b, name);
      g_match_info_next (m, NULL);
    }
  return g_strv_builder_end (b);
}
