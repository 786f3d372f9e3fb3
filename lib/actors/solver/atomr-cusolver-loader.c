/* atomr-cusolver-loader.c — dlopen() of cuSOLVER
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <dlfcn.h>

#include "core/atomr-error.h"
#include "atomr-cusolver-loader-private.h"

static AtomrCusolverLib cusolver_lib;
static const AtomrCusolverLib *loaded;
static GError *load_error;

static gpointer
open_cusolver (gchar  **opened,
               GError **error)
{
  g_autofree gchar *soname = g_strdup_printf ("libcusolver.so.%d", CUSOLVER_VER_MAJOR);
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GString) tried = g_string_new (NULL);
  const gchar *cuda_path = g_getenv ("CUDA_PATH");

  /* The toolkit's lib64 folders first, then the dynamic linker's search. */
  if (cuda_path && *cuda_path)
    g_ptr_array_add (paths, g_build_filename (cuda_path, "lib64", soname, NULL));
  g_ptr_array_add (paths, g_build_filename (ATOMR_CUDA_ROOT, "lib64", soname, NULL));
  g_ptr_array_add (paths, g_build_filename ("/usr/local/cuda", "lib64", soname, NULL));
  g_ptr_array_add (paths, g_strdup (soname));

  for (guint i = 0; i < paths->len; i++)
    {
      const gchar *path = g_ptr_array_index (paths, i);
      gpointer handle = dlopen (path, RTLD_NOW | RTLD_LOCAL);

      if (handle)
        {
          *opened = g_strdup (path);
          return handle;
        }
      g_string_append_printf (tried, "%s%s (%s)", tried->len ? "; " : "", path, dlerror ());
    }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               "Cannot load %s: tried %s", soname, tried->str);
  return NULL;
}

static gboolean
load_once (GError **error)
{
  gpointer handle = open_cusolver (&cusolver_lib.path, error);

  if (handle == NULL)
    return FALSE;
#define ATOMR_CUSOLVER_RESOLVE(name)                                               \
  cusolver_lib.name = (__typeof__ (&name)) dlsym (handle, #name);                  \
  if (cusolver_lib.name == NULL)                                                   \
    {                                                                              \
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,                  \
                   "%s lacks the entry point %s", cusolver_lib.path, #name);       \
      return FALSE;                                                                \
    }
  ATOMR_CUSOLVER_FUNCS (ATOMR_CUSOLVER_RESOLVE)
#undef ATOMR_CUSOLVER_RESOLVE
  /* The handle stays open for the life of the process. */
  return TRUE;
}

const AtomrCusolverLib *
atomr_cusolver_load (GError **error)
{
  static gsize once;

  if (g_once_init_enter (&once))
    {
      GError *local = NULL;

      if (load_once (&local))
        g_atomic_pointer_set (&loaded, &cusolver_lib);
      else
        load_error = local;
      g_once_init_leave (&once, 1);
    }
  if (loaded == NULL)
    g_propagate_error (error, g_error_copy (load_error));
  return loaded;
}

const AtomrCusolverLib *
atomr_cusolver_get (void)
{
  return g_atomic_pointer_get (&loaded);
}
