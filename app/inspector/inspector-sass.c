/* inspector-sass.c — SASS of a CUBIN, through the toolkit's nvdisasm or cuobjdump
 *
 * The inspector never links or ships a disassembler: it runs the
 * toolkit's `nvdisasm -c FILE` (or `cuobjdump -sass FILE`) as a child
 * process in a worker thread, on a temporary copy of the CUBIN the cache
 * keeps.  The tools are looked for on PATH, then in $CUDA_HOME/bin and
 * $CUDA_PATH/bin, and in /usr/local/cuda/bin only when neither variable
 * is set (so a test can point the search at an empty toolkit).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "inspector-sass.h"

static const gchar * const tools[] = { "nvdisasm", "cuobjdump" };

/* The toolkit directories searched after PATH, in order. */
static GPtrArray *
toolkit_bins (void)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func (g_free);
  const gchar *home = g_getenv ("CUDA_HOME"), *path = g_getenv ("CUDA_PATH");

  if (home && *home)
    g_ptr_array_add (dirs, g_build_filename (home, "bin", NULL));
  if (path && *path && g_strcmp0 (path, home) != 0)
    g_ptr_array_add (dirs, g_build_filename (path, "bin", NULL));
  if (dirs->len == 0)
    g_ptr_array_add (dirs, g_strdup ("/usr/local/cuda/bin"));
  return dirs;
}

/**
 * inspector_sass_find_tool:
 *
 * Returns: (transfer full) (nullable): the path of nvdisasm, else of
 *   cuobjdump, or %NULL when neither is installed where the inspector looks
 */
gchar *
inspector_sass_find_tool (void)
{
  g_autoptr(GPtrArray) dirs = toolkit_bins ();

  for (guint t = 0; t < G_N_ELEMENTS (tools); t++)
    {
      gchar *found = g_find_program_in_path (tools[t]);

      if (found)
        return found;
      for (guint d = 0; d < dirs->len; d++)
        {
          g_autofree gchar *candidate = g_build_filename (g_ptr_array_index (dirs, d), tools[t], NULL);

          if (g_file_test (candidate, G_FILE_TEST_IS_EXECUTABLE) && !g_file_test (candidate, G_FILE_TEST_IS_DIR))
            return g_steal_pointer (&candidate);
        }
    }
  return NULL;
}

/**
 * inspector_sass_describe_search:
 *
 * Returns: (transfer full): where inspector_sass_find_tool() looks, for
 *   the user ("PATH, /usr/local/cuda/bin")
 */
gchar *
inspector_sass_describe_search (void)
{
  g_autoptr(GPtrArray) dirs = toolkit_bins ();
  g_autoptr(GString) out = g_string_new ("PATH");

  for (guint d = 0; d < dirs->len; d++)
    g_string_append_printf (out, ", %s", (const gchar *) g_ptr_array_index (dirs, d));
  return g_string_free (g_steal_pointer (&out), FALSE);
}

static void
disassemble_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  GBytes *cubin = task_data;
  g_autofree gchar *tool = inspector_sass_find_tool ();
  g_autofree gchar *tmp = NULL, *base = NULL, *out = NULL, *err = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  gint fd;

  if (tool == NULL)
    {
      g_autofree gchar *where = inspector_sass_describe_search ();
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                               /* Translators: %s is a list of folders */
                               _("Neither nvdisasm nor cuobjdump was found (looked in %s)"), where);
      return;
    }
  fd = g_file_open_tmp ("atomr-inspector-XXXXXX.cubin", &tmp, &error);
  if (fd < 0)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  close (fd);
  if (!g_file_set_contents (tmp, g_bytes_get_data (cubin, NULL), (gssize) g_bytes_get_size (cubin), &error))
    {
      g_unlink (tmp);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  base = g_path_get_basename (tool);
  if (g_str_has_prefix (base, "cuobjdump"))
    proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                             tool, "-sass", tmp, NULL);
  else
    proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                             tool, "-c", tmp, NULL);
  if (proc == NULL || !g_subprocess_communicate_utf8 (proc, NULL, cancellable, &out, &err, &error))
    {
      if (proc)
        g_subprocess_force_exit (proc);
      g_unlink (tmp);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_unlink (tmp);
  if (!g_subprocess_get_if_exited (proc) || g_subprocess_get_exit_status (proc) != 0)
    {
      g_autofree gchar *what = g_strstrip (g_strdup (err && *err ? err : out ? out : ""));
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                               /* Translators: the program, its exit status, what it printed */
                               _("%s failed (exit status %d): %s"), tool,
                               g_subprocess_get_if_exited (proc) ? g_subprocess_get_exit_status (proc) : -1,
                               *what ? what : _("it printed nothing"));
      return;
    }
  g_task_return_pointer (task, g_steal_pointer (&out), g_free);
}

/**
 * inspector_sass_disassemble_async:
 * @cubin: a CUBIN
 * @cancellable: (nullable): stops the tool
 * @callback: called with the SASS
 * @user_data: data for @callback
 *
 * Disassembles @cubin with the tool inspector_sass_find_tool() finds, in
 * a worker thread.
 */
void
inspector_sass_disassemble_async (GBytes              *cubin,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_task_set_source_tag (task, inspector_sass_disassemble_async);
  if (cubin == NULL || g_bytes_get_size (cubin) == 0)
    {
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                               _("There is no CUBIN to disassemble (the entry holds PTX or LTO-IR only)"));
      return;
    }
  g_task_set_task_data (task, g_bytes_ref (cubin), (GDestroyNotify) g_bytes_unref);
  g_task_run_in_thread (task, disassemble_thread);
}

/**
 * inspector_sass_disassemble_finish:
 * @result: the result
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the tool's output, or %NULL with
 *   @error set (no tool: %ATOMR_ERROR_NOT_SUPPORTED; the tool failed:
 *   %ATOMR_ERROR_LIBRARY with what it printed)
 */
gchar *
inspector_sass_disassemble_finish (GAsyncResult  *result,
                                   GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
