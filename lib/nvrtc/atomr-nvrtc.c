/* atomr-nvrtc.c — one compile: cache lookup, NVRTC, nvJitLink, cache store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-compile-options-private.h"
#include "atomr-device-private.h"
#include "atomr-error.h"
#include "atomr-kernel-cache-private.h"
#include "atomr-nvrtc-loader-private.h"
#include "atomr-nvrtc-private.h"

#define DEFAULT_PROGRAM_NAME "program.cu"

/**
 * atomr_nvrtc_get_version:
 * @error: return location for a #GError
 *
 * Loads NVRTC (if it is not loaded yet) and asks its version.
 *
 * Returns: (transfer full): "MAJOR.MINOR", or %NULL when NVRTC cannot be
 *   loaded
 */
gchar *
atomr_nvrtc_get_version (GError **error)
{
  const AtomrNvrtcLib *lib = atomr_nvrtc_load (error);

  if (lib == NULL)
    return NULL;
  return g_strdup_printf ("%d.%d", lib->major, lib->minor);
}

static gboolean
nvrtc_check (const AtomrNvrtcLib  *lib,
             nvrtcResult           res,
             const gchar          *what,
             GError              **error)
{
  if (res == NVRTC_SUCCESS)
    return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "%s: %s (%d)",
               what, lib->nvrtcGetErrorString (res), (int) res);
  return FALSE;
}

static gchar *
jitlink_log (const AtomrJitLinkLib *jl,
             nvJitLinkHandle        handle)
{
  size_t size = 0;
  gchar *log;

  if (jl->GetErrorLogSize (handle, &size) != NVJITLINK_SUCCESS || size == 0)
    return g_strdup ("");
  log = g_malloc0 (size + 1);
  jl->GetErrorLog (handle, log);
  return log;
}

/* Links @content->ltoir with @link_objects into content->cubin. */
static gboolean
jit_link (AtomrModuleContent  *content,
          const gchar         *program_name,
          GPtrArray           *link_objects,
          GError             **error)
{
  const AtomrJitLinkLib *jl = atomr_jitlink_load (error);
  g_autofree gchar *arch_flag = NULL;
  const gchar *opts[2];
  nvJitLinkHandle handle = NULL;
  nvJitLinkResult res;
  size_t size = 0;
  gpointer cubin;

  if (jl == NULL)
    return FALSE;
  arch_flag = g_strconcat ("-arch=", content->arch, NULL);
  opts[0] = arch_flag;
  opts[1] = "-lto";
  res = jl->Create (&handle, 2, opts);
  if (res != NVJITLINK_SUCCESS)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                   "nvJitLinkCreate (%s -lto): error %d", arch_flag, (int) res);
      return FALSE;
    }
  res = jl->AddData (handle, NVJITLINK_INPUT_LTOIR, g_bytes_get_data (content->ltoir, NULL),
                     g_bytes_get_size (content->ltoir), program_name);
  for (guint i = 0; res == NVJITLINK_SUCCESS && link_objects && i < link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (link_objects, i);
      g_autofree gchar *name = g_strdup_printf ("link-object-%u.%s", i, obj->ptx ? "ptx" : "ltoir");
      res = jl->AddData (handle, obj->ptx ? NVJITLINK_INPUT_PTX : NVJITLINK_INPUT_LTOIR,
                         g_bytes_get_data (obj->data, NULL), g_bytes_get_size (obj->data), name);
    }
  if (res == NVJITLINK_SUCCESS)
    res = jl->Complete (handle);
  if (res != NVJITLINK_SUCCESS)
    {
      g_autofree gchar *log = jitlink_log (jl, handle);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE,
                   "%s: nvJitLink failed (error %d):\n%s", program_name, (int) res, log);
      jl->Destroy (&handle);
      return FALSE;
    }
  jl->GetLinkedCubinSize (handle, &size);
  cubin = g_malloc (size);
  jl->GetLinkedCubin (handle, cubin);
  content->cubin = g_bytes_new_take (cubin, size);
  jl->Destroy (&handle);
  return TRUE;
}

static GBytes *
get_output (const AtomrNvrtcLib *lib,
            nvrtcProgram         prog,
            nvrtcResult        (*get_size) (nvrtcProgram, size_t *),
            nvrtcResult        (*get) (nvrtcProgram, char *))
{
  size_t size = 0;
  gchar *data;

  if (get_size (prog, &size) != NVRTC_SUCCESS || size == 0)
    return NULL;
  data = g_malloc (size);
  if (get (prog, data) != NVRTC_SUCCESS)
    {
      g_free (data);
      return NULL;
    }
  return g_bytes_new_take (data, size);
}

/* Runs NVRTC (and nvJitLink for LTO); never looks at a cache. */
static AtomrModuleContent *
compile_uncached (const gchar          *source,
                  const gchar          *program_name,
                  const gchar * const  *names,
                  gchar               **flags,
                  const gchar          *arch,
                  gboolean              lto,
                  GPtrArray            *link_objects,
                  GError              **error)
{
  g_autoptr(AtomrModuleContent) content = NULL;
  const AtomrNvrtcLib *lib;
  nvrtcProgram prog = NULL;
  nvrtcResult res;
  size_t log_size = 0;
  gint64 start = g_get_monotonic_time ();
  guint n_names = g_strv_length ((gchar **) names);

  lib = atomr_nvrtc_load (error);
  if (lib == NULL)
    return NULL;
  atomr_nvrtc_count_compile ();

  if (!nvrtc_check (lib, lib->nvrtcCreateProgram (&prog, source, program_name, 0, NULL, NULL),
                    "nvrtcCreateProgram", error))
    return NULL;
  for (guint i = 0; i < n_names; i++)
    if (!nvrtc_check (lib, lib->nvrtcAddNameExpression (prog, names[i]), "nvrtcAddNameExpression", error))
      {
        lib->nvrtcDestroyProgram (&prog);
        return NULL;
      }

  content = atomr_module_content_new ();
  res = lib->nvrtcCompileProgram (prog, g_strv_length (flags), (const char * const *) flags);
  if (lib->nvrtcGetProgramLogSize (prog, &log_size) == NVRTC_SUCCESS && log_size > 1)
    {
      content->log = g_malloc0 (log_size + 1);
      lib->nvrtcGetProgramLog (prog, content->log);
    }
  else
    content->log = g_strdup ("");
  if (res != NVRTC_SUCCESS)
    {
      g_autofree gchar *flat = g_strjoinv (" ", flags);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE,
                   "%s: %s (flags: %s)\n%s", program_name, lib->nvrtcGetErrorString (res),
                   flat, content->log);
      lib->nvrtcDestroyProgram (&prog);
      return NULL;
    }

  content->ptx = get_output (lib, prog, lib->nvrtcGetPTXSize, lib->nvrtcGetPTX);
  content->cubin = get_output (lib, prog, lib->nvrtcGetCUBINSize, lib->nvrtcGetCUBIN);
  if (lto)
    content->ltoir = get_output (lib, prog, lib->nvrtcGetLTOIRSize, lib->nvrtcGetLTOIR);

  content->kernel_names = g_new0 (gchar *, n_names + 1);
  content->lowered_names = g_new0 (gchar *, n_names + 1);
  for (guint i = 0; i < n_names; i++)
    {
      const char *lowered = NULL;
      content->kernel_names[i] = g_strdup (names[i]);
      res = lib->nvrtcGetLoweredName (prog, names[i], &lowered);
      if (res != NVRTC_SUCCESS || lowered == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE,
                       "%s: no lowered name for \"%s\": %s (is it a __global__ function?)",
                       program_name, names[i], lib->nvrtcGetErrorString (res));
          lib->nvrtcDestroyProgram (&prog);
          return NULL;
        }
      content->lowered_names[i] = g_strdup (lowered);
    }
  lib->nvrtcDestroyProgram (&prog);

  content->flags = g_strdupv (flags);
  content->arch = g_strdup (arch);
  content->nvrtc_version = g_strdup_printf ("%d.%d", lib->major, lib->minor);
  if (lto)
    {
      if (content->ltoir == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE,
                       "%s: NVRTC produced no LTO-IR for an LTO compile", program_name);
          return NULL;
        }
      if (!jit_link (content, program_name, link_objects, error))
        return NULL;
    }
  content->compile_time_ms = (g_get_monotonic_time () - start) / 1000.0;
  return g_steal_pointer (&content);
}

AtomrModule *
atomr_nvrtc_compile_for_device (const gchar          *source,
                                const gchar          *program_name,
                                AtomrCompileOptions  *options,
                                AtomrKernelCache     *cache,
                                AtomrDevice          *device,
                                GError              **error)
{
  g_autoptr(AtomrCompileOptions) resolved = NULL;
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(AtomrModuleContent) content = NULL;
  g_auto(GStrv) flags = NULL;
  const gchar *arch;
  AtomrModule *module;

  if (source == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "source: NULL");
      return NULL;
    }
  if (program_name == NULL)
    program_name = DEFAULT_PROGRAM_NAME;
  /* Copied only to resolve "native": the memory-hit path stays cheap. */
  resolved = options ? g_object_ref (options) : atomr_compile_options_new ();
  if (!atomr_compile_options_validate (resolved, error))
    return NULL;

  if (g_strcmp0 (atomr_compile_options_get_arch (resolved), ATOMR_ARCH_NATIVE) == 0)
    {
      g_autoptr(AtomrCompileOptions) copy = atomr_compile_options_copy (resolved);
      g_autoptr(AtomrDevice) dev = device ? g_object_ref (device) : atomr_device_get (0, error);
      g_autofree gchar *native = NULL;

      if (dev == NULL)
        {
          g_prefix_error (error, "arch: \"native\" needs a device: ");
          return NULL;
        }
      if (atomr_device_is_host (dev))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "arch: \"native\" has no meaning on the host test device");
          return NULL;
        }
      native = atomr_device_get_arch (dev);
      atomr_compile_options_set_arch (copy, native);
      g_set_object (&resolved, copy);
    }
  arch = atomr_compile_options_get_arch (resolved);
  if (atomr_compile_options_get_lto (resolved) && (arch == NULL || !g_str_has_prefix (arch, "sm_")))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "arch: LTO links a CUBIN and needs an sm_NN architecture, not %s",
                   arch ? arch : "NVRTC's default");
      return NULL;
    }
  flags = atomr_compile_options_get_flags (resolved);

  if (cache && atomr_kernel_cache_disabled_by_env ())
    cache = NULL;
  if (cache)
    {
      module = atomr_kernel_cache_lookup_request (cache, source,
                                                  atomr_compile_options_get_name_expressions (resolved),
                                                  (const gchar * const *) flags, arch,
                                                  atomr_compile_options_get_include_paths (resolved),
                                                  atomr_compile_options_get_link_objects (resolved),
                                                  &request);
      if (module)
        return module;
    }

  content = compile_uncached (source, program_name,
                              atomr_compile_options_get_name_expressions (resolved),
                              flags, arch, atomr_compile_options_get_lto (resolved),
                              atomr_compile_options_get_link_objects (resolved), error);
  if (content == NULL)
    return NULL;
  if (cache)
    {
      atomr_kernel_cache_store (cache, request, content, source);
      return atomr_module_new (content, ATOMR_CACHE_STATUS_MISS);
    }
  return atomr_module_new (content, ATOMR_CACHE_STATUS_NONE);
}

/**
 * atomr_nvrtc_compile:
 * @source: CUDA C++ source
 * @program_name: (nullable): the name NVRTC uses in its log ("program.cu"
 *   when %NULL)
 * @options: (nullable): the options; name the kernels wanted (and get
 *   their mangled names) with atomr_compile_options_add_name_expression()
 * @cache: (nullable): a cache to look in first and to fill
 * @error: return location for a #GError
 *
 * Compiles @source in the calling thread (blocking).  Needs no GPU unless
 * the architecture is %ATOMR_ARCH_NATIVE.  On a cache hit NVRTC is neither
 * loaded nor called.  A compile error is %ATOMR_ERROR_COMPILE with NVRTC's
 * log (file name and line numbers) in the message.
 *
 * Returns: (transfer full): the module, or %NULL on error
 */
AtomrModule *
atomr_nvrtc_compile (const gchar          *source,
                     const gchar          *program_name,
                     AtomrCompileOptions  *options,
                     AtomrKernelCache     *cache,
                     GError              **error)
{
  g_return_val_if_fail (options == NULL || ATOMR_IS_COMPILE_OPTIONS (options), NULL);
  g_return_val_if_fail (cache == NULL || ATOMR_IS_KERNEL_CACHE (cache), NULL);
  return atomr_nvrtc_compile_for_device (source, program_name, options, cache, NULL, error);
}
