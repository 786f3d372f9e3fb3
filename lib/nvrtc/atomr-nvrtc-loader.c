/* atomr-nvrtc-loader.c — dlopen() of NVRTC and nvJitLink
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <sys/stat.h>

#include "atomr-error.h"
#include "core/atomr-loader-private.h"
#include "atomr-nvrtc-loader-private.h"

#define NVRTC_SONAME   "libnvrtc.so.13"
#define JITLINK_SONAME "libnvJitLink.so.13"

static guint load_count;
static guint compile_count;

static const gchar *
override_variable (const gchar *soname)
{
  return g_str_equal (soname, JITLINK_SONAME) ? "ATOMR_NVJITLINK_LIBRARY" : "ATOMR_NVRTC_LIBRARY";
}

static gpointer
open_library (const gchar  *soname,
              gchar       **opened_path,
              GError      **error)
{
  return atomr_loader_open (g_str_equal (soname, JITLINK_SONAME) ? "nvJitLink" : "NVRTC",
                            override_variable (soname), soname, opened_path, error);
}

static gboolean
resolve (gpointer     handle,
         const gchar *library,
         const gchar *symbol,
         gpointer    *slot,
         GError     **error)
{
  *slot = dlsym (handle, symbol);
  if (*slot == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s lacks the entry point %s", library, symbol);
      return FALSE;
    }
  return TRUE;
}

static AtomrNvrtcLib nvrtc_lib;
static GError *nvrtc_error;

static gpointer
nvrtc_load_once (gpointer data)
{
  gpointer handle = open_library (NVRTC_SONAME, &nvrtc_lib.path, &nvrtc_error);

  if (handle == NULL)
    return NULL;
#define ATOMR_NVRTC_RESOLVE(name) \
  if (!resolve (handle, NVRTC_SONAME, #name, (gpointer *) &nvrtc_lib.name, &nvrtc_error)) \
    return NULL;
  ATOMR_NVRTC_FUNCS (ATOMR_NVRTC_RESOLVE)
#undef ATOMR_NVRTC_RESOLVE
  nvrtc_lib.nvrtcVersion (&nvrtc_lib.major, &nvrtc_lib.minor);
  g_atomic_int_inc (&load_count);
  g_debug ("Loaded NVRTC %d.%d from %s", nvrtc_lib.major, nvrtc_lib.minor, nvrtc_lib.path);
  return &nvrtc_lib;
}

const AtomrNvrtcLib *
atomr_nvrtc_load (GError **error)
{
  static GOnce once = G_ONCE_INIT;
  const AtomrNvrtcLib *lib = g_once (&once, nvrtc_load_once, NULL);

  if (lib == NULL)
    g_set_error_literal (error, nvrtc_error->domain, nvrtc_error->code, nvrtc_error->message);
  return lib;
}

static AtomrJitLinkLib jitlink_lib;
static GError *jitlink_error;

static gpointer
jitlink_load_once (gpointer data)
{
  g_autofree gchar *path = NULL;
  gpointer handle = open_library (JITLINK_SONAME, &path, &jitlink_error);

  if (handle == NULL)
    return NULL;
#define ATOMR_JITLINK_RESOLVE(field) \
  if (!resolve (handle, JITLINK_SONAME, "nvJitLink" #field, (gpointer *) &jitlink_lib.field, &jitlink_error)) \
    return NULL;
  ATOMR_JITLINK_RESOLVE (Create)
  ATOMR_JITLINK_RESOLVE (Destroy)
  ATOMR_JITLINK_RESOLVE (AddData)
  ATOMR_JITLINK_RESOLVE (Complete)
  ATOMR_JITLINK_RESOLVE (GetLinkedCubinSize)
  ATOMR_JITLINK_RESOLVE (GetLinkedCubin)
  ATOMR_JITLINK_RESOLVE (GetErrorLogSize)
  ATOMR_JITLINK_RESOLVE (GetErrorLog)
  ATOMR_JITLINK_RESOLVE (GetInfoLogSize)
  ATOMR_JITLINK_RESOLVE (GetInfoLog)
#undef ATOMR_JITLINK_RESOLVE
  /* Optional: the version only goes into cache keys and messages. */
  {
    nvJitLinkResult (*version) (unsigned int *, unsigned int *) =
      (nvJitLinkResult (*) (unsigned int *, unsigned int *)) dlsym (handle, "nvJitLinkVersion");
    if (version)
      version (&jitlink_lib.major, &jitlink_lib.minor);
  }
  g_debug ("Loaded nvJitLink %u.%u from %s", jitlink_lib.major, jitlink_lib.minor, path);
  return &jitlink_lib;
}

const AtomrJitLinkLib *
atomr_jitlink_load (GError **error)
{
  static GOnce once = G_ONCE_INIT;
  const AtomrJitLinkLib *lib = g_once (&once, jitlink_load_once, NULL);

  if (lib == NULL)
    g_set_error_literal (error, jitlink_error->domain, jitlink_error->code, jitlink_error->message);
  return lib;
}

guint
atomr_nvrtc_get_load_count (void)
{
  return g_atomic_int_get (&load_count);
}

guint
atomr_nvrtc_get_compile_count (void)
{
  return g_atomic_int_get (&compile_count);
}

void
atomr_nvrtc_count_compile (void)
{
  g_atomic_int_inc (&compile_count);
}

/* The identity of a library file: resolved path, size and modification
 * time (whole seconds).  Another build of the library differs in size or
 * time, so this is finer than the version it reports; it deliberately
 * leaves out the inode and nanoseconds, which a container image or a tar
 * copy of the same toolkit does not preserve (a cache baked into an image
 * must still hit). */
static gchar *
file_identity (const gchar *path)
{
  g_autofree gchar *real = realpath (path, NULL);
  struct stat st;

  if (real == NULL || stat (real, &st) != 0)
    return NULL;
  return g_strdup_printf ("%s:%lld:%lld", real, (long long) st.st_size, (long long) st.st_mtime);
}

/* Identifies the library that a load would open, without loading it when
 * a candidate with a path exists (a cache hit must not pay for mapping
 * ~100 MB).  When only the dynamic linker knows where it is, the soname
 * says nothing about the version: then the library is loaded and keyed
 * on the version it reports and the file the linker chose. */
static gchar *
library_identity (const gchar *soname,
                  gboolean     nvrtc)
{
  /* The same files, in the same order, as the load itself (override
   * variable included). */
  g_autoptr(GPtrArray) paths = atomr_loader_candidate_paths (override_variable (soname), soname);
  g_autoptr(GError) error = NULL;
  gpointer symbol = NULL;
  Dl_info info = { 0 };
  g_autofree gchar *file = NULL;
  int major = 0, minor = 0;

  for (guint i = 0; i < paths->len; i++)
    {
      const gchar *path = g_ptr_array_index (paths, i);
      gchar *id;

      /* The loader tries this path first: if dlopen() can open it, it is
       * the one used. */
      if (!g_path_is_absolute (path) || !g_file_test (path, G_FILE_TEST_EXISTS))
        continue;
      id = file_identity (path);
      if (id)
        return id;
    }
  if (nvrtc)
    {
      const AtomrNvrtcLib *lib = atomr_nvrtc_load (&error);
      if (lib)
        {
          major = lib->major;
          minor = lib->minor;
          symbol = (gpointer) lib->nvrtcVersion;
        }
    }
  else
    {
      const AtomrJitLinkLib *lib = atomr_jitlink_load (&error);
      if (lib)
        {
          major = (int) jitlink_lib.major;
          minor = (int) jitlink_lib.minor;
          symbol = (gpointer) lib->Create;
        }
    }
  if (symbol == NULL)
    return g_strdup_printf ("%s:unavailable", soname);
  if (dladdr (symbol, &info) && info.dli_fname)
    file = file_identity (info.dli_fname);
  return g_strdup_printf ("%s:%d.%d:%s", soname, major, minor, file ? file : "?");
}

static gpointer
identity_once (gpointer data)
{
  return library_identity (NVRTC_SONAME, TRUE);
}

const gchar *
atomr_nvrtc_get_identity (void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once (&once, identity_once, NULL);
}

static gpointer
jitlink_identity_once (gpointer data)
{
  return library_identity (JITLINK_SONAME, FALSE);
}

const gchar *
atomr_jitlink_get_identity (void)
{
  static GOnce once = G_ONCE_INIT;
  return g_once (&once, jitlink_identity_once, NULL);
}
