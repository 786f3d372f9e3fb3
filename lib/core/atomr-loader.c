/* atomr-loader.c — dlopen() on first use, for every CUDA library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include "atomr-error.h"
#include "atomr-loader-private.h"

GPtrArray *
atomr_loader_candidate_paths (const gchar *env,
                              const gchar *soname)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  const gchar *override = env ? g_getenv (env) : NULL;
  const gchar *cuda_path = g_getenv ("CUDA_PATH");

  /* An explicit override is the only candidate: a user who names a file
   * wants that file or a clear error, not a silent fallback. */
  if (override && *override)
    {
      g_ptr_array_add (paths, g_strdup (override));
      return paths;
    }
  if (cuda_path && *cuda_path)
    g_ptr_array_add (paths, g_build_filename (cuda_path, "lib64", soname, NULL));
  if (g_strcmp0 (cuda_path, ATOMR_CUDA_ROOT) != 0)
    g_ptr_array_add (paths, g_build_filename (ATOMR_CUDA_ROOT, "lib64", soname, NULL));
  if (g_strcmp0 (ATOMR_CUDA_ROOT, "/usr/local/cuda") != 0 &&
      g_strcmp0 (cuda_path, "/usr/local/cuda") != 0)
    g_ptr_array_add (paths, g_build_filename ("/usr/local/cuda", "lib64", soname, NULL));
  g_ptr_array_add (paths, g_strdup (soname));
  return paths;
}

gpointer
atomr_loader_open (const gchar  *library,
                   const gchar  *env,
                   const gchar  *soname,
                   gchar       **opened_path,
                   GError      **error)
{
  g_autoptr(GPtrArray) paths = atomr_loader_candidate_paths (env, soname);
  g_autoptr(GString) tried = g_string_new (NULL);

  for (guint i = 0; i < paths->len; i++)
    {
      const gchar *path = g_ptr_array_index (paths, i);
      gpointer handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);

      if (handle)
        {
          if (opened_path)
            *opened_path = g_strdup (path);
          return handle;
        }
      g_string_append_printf (tried, "%s%s (%s)", tried->len ? "; " : "", path, dlerror ());
    }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               "Cannot load %s (%s)%s%s: tried %s", library, soname,
               env ? "; set " : "", env ? env : "", tried->str);
  return NULL;
}

static gboolean
load_once (const AtomrLoaderSpec *spec,
           AtomrLoaderState      *state,
           GError               **error)
{
  gpointer handle = atomr_loader_open (spec->library, spec->env, spec->soname,
                                       &state->path, error);

  if (handle == NULL)
    return FALSE;
  for (guint i = 0; i < spec->n_symbols; i++)
    {
      const AtomrLoaderSymbol *sym = &spec->symbols[i];
      gpointer fn = dlsym (handle, sym->name);

      if (fn == NULL && !sym->optional)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "%s (%s) lacks the entry point %s", spec->library,
                       state->path, sym->name);
          memset (spec->table, 0, spec->table_size);
          dlclose (handle);
          g_clear_pointer (&state->path, g_free);
          return FALSE;
        }
      memcpy ((guint8 *) spec->table + sym->offset, &fn, sizeof fn);
    }
  /* The handle stays open for the life of the process: tables point into it. */
  state->handle = handle;
  return TRUE;
}

gboolean
atomr_loader_load (const AtomrLoaderSpec *spec,
                   AtomrLoaderState      *state,
                   GError               **error)
{
  if (g_once_init_enter (&state->once))
    {
      GError *local = NULL;

      if (load_once (spec, state, &local))
        g_atomic_int_set (&state->loaded, TRUE);
      else
        state->error = local;
      g_once_init_leave (&state->once, 1);
    }
  if (g_atomic_int_get (&state->loaded))
    return TRUE;
  g_propagate_error (error, g_error_copy (state->error));
  return FALSE;
}

gboolean
atomr_loader_is_loaded (AtomrLoaderState *state)
{
  return g_atomic_int_get (&state->loaded);
}

const gchar *
atomr_loader_get_path (AtomrLoaderState *state)
{
  return atomr_loader_is_loaded (state) ? state->path : NULL;
}
