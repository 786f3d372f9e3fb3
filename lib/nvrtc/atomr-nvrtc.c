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
#include "atomr-kernel-params-private.h"
#include "atomr-nvrtc-loader-private.h"
#include "atomr-nvrtc-private.h"
#include "atomr-ptxas-info-private.h"

#define DEFAULT_PROGRAM_NAME "program.cu"

/**
 * atomr_nvrtc_get_version:
 * @error: return location for a [struct@GLib.Error]
 *
 * Loads NVRTC (if it is not loaded yet) and asks its version.
 *
 * Returns: (transfer full): "MAJOR.MINOR", or %NULL when NVRTC cannot be
 *   loaded
 *
 * Since: 0.1
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

static gchar *
jitlink_info_log (const AtomrJitLinkLib *jl,
                  nvJitLinkHandle        handle)
{
  size_t size = 0;
  gchar *log;

  if (jl->GetInfoLogSize (handle, &size) != NVJITLINK_SUCCESS || size == 0)
    return g_strdup ("");
  log = g_malloc0 (size + 1);
  if (jl->GetInfoLog (handle, log) != NVJITLINK_SUCCESS)
    log[0] = '\0';
  return log;
}

/* Maps an NVRTC boolean value ("true", "false", "1", "0") to nvJitLink's
 * "1"/"0"; NULL if it is neither. */
static const gchar *
bool_value (const gchar *v)
{
  if (g_strcmp0 (v, "true") == 0 || g_strcmp0 (v, "1") == 0)
    return "1";
  if (g_strcmp0 (v, "false") == 0 || g_strcmp0 (v, "0") == 0)
    return "0";
  return NULL;
}

/* "-name=value" / "--name=value" / "-name" / "--name" → the value ("" when
 * there is none), else NULL. */
static const gchar *
flag_value (const gchar *flag,
            const gchar *name)
{
  const gchar *p = flag;
  gsize n = strlen (name);

  if (*p++ != '-')
    return NULL;
  if (*p == '-')
    p++;
  if (strncmp (p, name, n) != 0)
    return NULL;
  if (p[n] == '\0')
    return p + n;
  if (p[n] == '=')
    return p + n + 1;
  return NULL;
}

/* With LTO, code generation happens in nvJitLink: every NVRTC option that
 * steers it must be forwarded, or the user's request is silently lost
 * (maxrregcount=32 gave 255 registers).  Front-end options (dialect,
 * macros, includes, diagnostics) are done with by then.  Anything else is
 * refused, never ignored. */
gboolean
atomr_nvrtc_jitlink_options (const gchar * const *flags,
                             const gchar         *arch,
                             GPtrArray           *out,
                             GError             **error)
{
  static const gchar * const front_end[] = {
    "arch", "gpu-architecture", "std", "D", "define-macro", "U", "undefine-macro",
    "I", "include-path", "include", "pre-include", "no-source-include",
    "dc", "device-c", "rdc", "relocatable-device-code", "dlto", "dlink-time-opt",
    "builtin-move-forward", "builtin-initializer-list", "disable-warnings", "w",
    "default-device", "device-as-default-execution-space", "device-int128",
    "device-float128", "no-device-int128", "no-device-float128", "display-error-number",
    "no-display-error-number", "diag-error", "diag-suppress", "diag-warn",
    "brief-diagnostics", "pch", "instantiate-templates-in-pch", "pch-messages",
    "pch-verbose", "minimal", "restrict", "Werror", "err-no", "fdevice-syntax-only",
    NULL
  };

  g_ptr_array_add (out, g_strconcat ("-arch=", arch, NULL));
  g_ptr_array_add (out, g_strdup ("-lto"));
  for (guint i = 0; flags && flags[i]; i++)
    {
      const gchar *f = flags[i], *v;
      gboolean front = FALSE;

      if ((v = flag_value (f, "maxrregcount")) && *v)
        g_ptr_array_add (out, g_strconcat ("-maxrregcount=", v, NULL));
      else if ((v = flag_value (f, "ftz")) && bool_value (v))
        g_ptr_array_add (out, g_strconcat ("-ftz=", bool_value (v), NULL));
      else if ((v = flag_value (f, "prec-div")) && bool_value (v))
        g_ptr_array_add (out, g_strconcat ("-prec-div=", bool_value (v), NULL));
      else if ((v = flag_value (f, "prec-sqrt")) && bool_value (v))
        g_ptr_array_add (out, g_strconcat ("-prec-sqrt=", bool_value (v), NULL));
      else if ((v = flag_value (f, "fmad")) && bool_value (v))
        g_ptr_array_add (out, g_strconcat ("-fma=", bool_value (v), NULL));
      else if (flag_value (f, "use_fast_math") && *flag_value (f, "use_fast_math") == '\0')
        {
          /* What --use_fast_math implies for code generation. */
          g_ptr_array_add (out, g_strdup ("-ftz=1"));
          g_ptr_array_add (out, g_strdup ("-prec-div=0"));
          g_ptr_array_add (out, g_strdup ("-prec-sqrt=0"));
          g_ptr_array_add (out, g_strdup ("-fma=1"));
        }
      else if ((v = flag_value (f, "lineinfo")) && *v == '\0')
        g_ptr_array_add (out, g_strdup ("-lineinfo"));
      else if ((v = flag_value (f, "generate-line-info")) && *v == '\0')
        g_ptr_array_add (out, g_strdup ("-lineinfo"));
      else if (((v = flag_value (f, "G")) || (v = flag_value (f, "device-debug"))) && *v == '\0')
        g_ptr_array_add (out, g_strdup ("-g"));
      else if (f[0] == '-' && f[1] == 'O' && g_ascii_isdigit (f[2]) && f[3] == '\0')
        g_ptr_array_add (out, g_strdup (f));
      else if (((v = flag_value (f, "Xptxas")) || (v = flag_value (f, "ptxas-options"))) && *v)
        g_ptr_array_add (out, g_strconcat ("-Xptxas=", v, NULL));
      else if ((v = flag_value (f, "split-compile")) && *v)
        g_ptr_array_add (out, g_strconcat ("-split-compile=", v, NULL));
      else if ((v = flag_value (f, "jump-table-density")) && *v)
        g_ptr_array_add (out, g_strconcat ("-jump-table-density=", v, NULL));
      else
        {
          for (guint k = 0; !front && front_end[k]; k++)
            front = flag_value (f, front_end[k]) != NULL
                    || (strlen (front_end[k]) == 1 && f[0] == '-' && f[1] == front_end[k][0]);
          if (!front)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                           "flag \"%s\" cannot be forwarded to nvJitLink: with lto, code "
                           "generation happens at link time and would not honour it", f);
              return FALSE;
            }
        }
    }
  return TRUE;
}

/* Links @content->ltoir with @link_objects into content->cubin. */
static gboolean
jit_link (AtomrModuleContent  *content,
          const gchar         *program_name,
          gchar              **flags,
          GPtrArray           *link_objects,
          GError             **error)
{
  const AtomrJitLinkLib *jl = atomr_jitlink_load (error);
  g_autoptr(GPtrArray) opts = g_ptr_array_new_with_free_func (g_free);
  nvJitLinkHandle handle = NULL;
  nvJitLinkResult res;
  size_t size = 0;
  gpointer cubin;

  if (jl == NULL)
    return FALSE;
  if (!atomr_nvrtc_jitlink_options ((const gchar * const *) flags, content->arch, opts, error))
    return FALSE;
  /* What each kernel uses, spills included (the CUBIN does not record
   * them): nvJitLink's info log.  Not in the key (the key is computed
   * from @flags); the code it links is the same with and without it. */
  g_ptr_array_add (opts, g_strdup ("-verbose"));
  res = jl->Create (&handle, opts->len, (const char **) opts->pdata);
  if (res != NVJITLINK_SUCCESS)
    {
      g_ptr_array_add (opts, NULL);
      g_autofree gchar *flat = g_strjoinv (" ", (gchar **) opts->pdata);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                   "nvJitLinkCreate (%s): error %d", flat, (int) res);
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
  {
    g_autofree gchar *info = jitlink_info_log (jl, handle);
    g_autoptr(GError) parse_error = NULL;

    content->resources = atomr_ptxas_info_parse (info, "nvjitlink", &parse_error);
    if (content->resources == NULL)
      g_debug ("%s: resource usage unknown: %s", program_name, parse_error->message);
  }
  jl->Destroy (&handle);
  return TRUE;
}

static gboolean
check_cancelled (GCancellable  *cancellable,
                 GError       **error)
{
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/**
 * atomr_kernel_cache_entry_analyse_resources:
 * @self: an entry
 * @arch: (nullable): the real architecture to analyse for ("sm_90"), or
 *   %NULL for the entry's own
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * What each kernel of the entry uses: registers, barriers, static shared
 * memory, stack (local memory), spill stores and loads, constant memory.
 * Spills are not recorded in a CUBIN; only ptxas knows them.
 *
 * When the entry's manifest holds them (entries compiled for a real
 * architecture since 0.2: the compile asks ptxas without changing the
 * key) and @arch is %NULL or the entry's architecture, they are returned
 * as recorded.  Otherwise the entry's LTO-IR (linked with its flags'
 * code-generation options) or PTX is linked through nvJitLink with
 * `-verbose` into a throw-away CUBIN for the architecture, and its info
 * log read; the entry is not changed.  For PTX the numbers are those of
 * nvJitLink's link (a kernel's registers include its callees'), which can
 * differ from the driver's JIT by a few registers.
 *
 * Blocks (nvJitLink takes up to seconds); call it from a worker thread.
 * Thread-safe.
 *
 * Returns: (transfer full): the resources as JSON text, the format of the
 *   manifest's `resources` member (see
 *   [method@Atomr.KernelCacheEntry.get_manifest]), or %NULL with @error
 *   set: %ATOMR_ERROR_INVALID_ARGUMENT for a virtual architecture,
 *   %ATOMR_ERROR_NOT_SUPPORTED for an entry with neither PTX nor LTO-IR,
 *   %ATOMR_ERROR_LIBRARY when nvJitLink cannot be loaded,
 *   %ATOMR_ERROR_COMPILE with nvJitLink's log when the link fails
 *
 * Since: 0.2
 */
gchar *
atomr_kernel_cache_entry_analyse_resources (AtomrKernelCacheEntry  *self,
                                            const gchar            *arch,
                                            GCancellable           *cancellable,
                                            GError                **error)
{
  const gchar *entry_arch;
  const AtomrJitLinkLib *jl;
  g_autoptr(GBytes) input = NULL;
  g_autoptr(GPtrArray) opts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(JsonNode) parsed = NULL;
  g_autofree gchar *info = NULL;
  nvJitLinkHandle handle = NULL;
  nvJitLinkResult res;
  gboolean ltoir;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);
  if (atomr_kernel_cache_entry_get_key (self) == NULL || atomr_kernel_cache_entry_get_path (self) == NULL)
    {
      /* built bare (a binding's constructor): no file behind it */
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "This AtomrKernelCacheEntry was constructed directly and has no file: "
                           "get entries from atomr_kernel_cache_list() or _lookup()");
      return NULL;
    }
  entry_arch = atomr_kernel_cache_entry_get_arch (self);
  if (arch == NULL)
    arch = entry_arch;
  if (arch == NULL || !g_str_has_prefix (arch, "sm_"))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "arch: \"%s\" is not a real architecture; ptxas allocates registers for one "
                   "(name an sm_XX to analyse the entry for)", arch ? arch : "(NVRTC's default)");
      return NULL;
    }
  if (g_strcmp0 (arch, entry_arch) == 0)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      const gchar *manifest = atomr_kernel_cache_entry_get_manifest (self);
      JsonNode *root;

      if (manifest && json_parser_load_from_data (parser, manifest, -1, NULL)
          && (root = json_parser_get_root (parser)) && JSON_NODE_HOLDS_OBJECT (root)
          && json_object_has_member (json_node_get_object (root), "resources")
          && JSON_NODE_HOLDS_OBJECT (json_object_get_member (json_node_get_object (root), "resources")))
        return json_to_string (json_object_get_member (json_node_get_object (root), "resources"), FALSE);
    }
  if (!check_cancelled (cancellable, error))
    return NULL;
  input = atomr_kernel_cache_entry_load_ltoir (self, error);
  if (input == NULL && error && *error)
    return NULL;
  ltoir = input != NULL;
  if (input == NULL)
    {
      input = atomr_kernel_cache_entry_load_ptx (self, error);
      if (input == NULL && error && *error)
        return NULL;
    }
  if (input == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "entry %s has neither PTX nor LTO-IR, only a CUBIN, which does not record spills: "
                   "there is nothing to give ptxas", atomr_kernel_cache_entry_get_key (self));
      return NULL;
    }
  jl = atomr_jitlink_load (error);
  if (jl == NULL)
    return NULL;
  if (!atomr_nvrtc_jitlink_options (atomr_kernel_cache_entry_get_flags (self), arch, opts, error))
    return NULL;
  if (!ltoir)
    for (guint i = 0; i < opts->len; i++)
      if (g_str_equal (g_ptr_array_index (opts, i), "-lto"))
        g_ptr_array_remove_index (opts, i--);
  g_ptr_array_add (opts, g_strdup ("-verbose"));
  res = jl->Create (&handle, opts->len, (const char **) opts->pdata);
  if (res != NVJITLINK_SUCCESS)
    {
      g_ptr_array_add (opts, NULL);
      g_autofree gchar *flat = g_strjoinv (" ", (gchar **) opts->pdata);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY, "nvJitLinkCreate (%s): error %d", flat, (int) res);
      return NULL;
    }
  res = jl->AddData (handle, ltoir ? NVJITLINK_INPUT_LTOIR : NVJITLINK_INPUT_PTX,
                     g_bytes_get_data (input, NULL), g_bytes_get_size (input), ltoir ? "entry.ltoir" : "entry.ptx");
  if (res == NVJITLINK_SUCCESS)
    res = jl->Complete (handle);
  if (res != NVJITLINK_SUCCESS)
    {
      g_autofree gchar *log = jitlink_log (jl, handle);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE,
                   "entry %s: linking its %s for %s through nvJitLink failed (error %d):\n%s",
                   atomr_kernel_cache_entry_get_key (self), ltoir ? "LTO-IR" : "PTX", arch, (int) res, log);
      jl->Destroy (&handle);
      return NULL;
    }
  info = jitlink_info_log (jl, handle);
  jl->Destroy (&handle);
  if (!check_cancelled (cancellable, error))
    return NULL;
  parsed = atomr_ptxas_info_parse (info, "nvjitlink", error);
  if (parsed == NULL)
    return NULL;
  return json_to_string (parsed, FALSE);
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

/**
 * atomr_nvrtc_check_text:
 * @text: (array length=len) (element-type guint8): what is about to be
 *   given to NVRTC
 * @len: its length in bytes, or -1 if it is nul-terminated
 * @what: (nullable): what it is, for the message ("program.cu")
 * @error: return location for a [struct@GLib.Error]
 *
 * NVRTC reads its input as text and silently stops at a byte it cannot
 * read (a 0xFF byte made the kernels after it disappear while the compile
 * "succeeded").  Anything but UTF-8 text without NUL bytes is refused with
 * %ATOMR_ERROR_INVALID_ARGUMENT naming the byte, its offset, line and
 * column.
 *
 * Returns: %TRUE if @text is text
 *
 * Since: 0.2
 */
gboolean
atomr_nvrtc_check_text (const gchar  *text,
                        gssize        len,
                        const gchar  *what,
                        GError      **error)
{
  const gchar *end = NULL, *line_start = text;
  gsize n = len < 0 ? strlen (text) : (gsize) len;
  guint line = 1;

  if (g_utf8_validate_len (text, n, &end))
    return TRUE;
  for (const gchar *p = text; p < end; p++)
    if (*p == '\n')
      {
        line++;
        line_start = p + 1;
      }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "%s: byte 0x%02X at offset %" G_GSIZE_FORMAT " (line %u, column %u) is not "
               "UTF-8 text%s; NVRTC would silently stop reading there",
               what ? what : "source", (guint) (guint8) *end, (gsize) (end - text), line,
               (guint) (end - line_start) + 1, *end == '\0' ? " (a NUL byte)" : "");
  return FALSE;
}

static gint
compare_int (gconstpointer a,
             gconstpointer b)
{
  return *(const int *) a - *(const int *) b;
}

/* The architectures NVRTC supports, ascending ("75, 80, ..."): asked from
 * NVRTC itself so that a new one works without a change here. */
GArray *
atomr_nvrtc_get_supported_archs (GError **error)
{
  const AtomrNvrtcLib *lib = atomr_nvrtc_load (error);
  GArray *archs;
  int n = 0;

  if (lib == NULL)
    return NULL;
  if (!nvrtc_check (lib, lib->nvrtcGetNumSupportedArchs (&n), "nvrtcGetNumSupportedArchs", error))
    return NULL;
  archs = g_array_sized_new (FALSE, TRUE, sizeof (int), n);
  g_array_set_size (archs, n);
  if (n > 0 && !nvrtc_check (lib, lib->nvrtcGetSupportedArchs ((int *) (gpointer) archs->data),
                             "nvrtcGetSupportedArchs", error))
    {
      g_array_unref (archs);
      return NULL;
    }
  g_array_sort (archs, compare_int);
  return archs;
}

/* Checks @arch ("sm_90a", "compute_100f", ...) against what NVRTC
 * supports.  Suffix rules (CUDA 12.9+): "a" (architecture-specific
 * features) exists from compute capability 9.0, "f" (family) from 10.0. */
gboolean
atomr_nvrtc_check_arch (const gchar  *arch,
                        GError      **error)
{
  g_autoptr(GArray) archs = NULL;
  g_autoptr(GString) list = NULL;
  const gchar *digits;
  gchar *end = NULL;
  guint64 number;
  gchar suffix = '\0';
  gboolean supported = FALSE;

  if (arch == NULL)
    return TRUE;
  archs = atomr_nvrtc_get_supported_archs (error);
  if (archs == NULL)
    return FALSE;
  digits = g_str_has_prefix (arch, "sm_") ? arch + 3 : g_str_has_prefix (arch, "compute_") ? arch + 8 : NULL;
  if (digits && g_ascii_isdigit (*digits))
    {
      number = g_ascii_strtoull (digits, &end, 10);
      if (*end == 'a' || *end == 'f')
        suffix = *end++;
      if (*end == '\0')
        for (guint i = 0; i < archs->len; i++)
          if ((guint64) g_array_index (archs, int, i) == number)
            supported = suffix == '\0' || (suffix == 'a' && number >= 90) || (suffix == 'f' && number >= 100);
    }
  if (supported)
    return TRUE;
  list = g_string_new (NULL);
  for (guint i = 0; i < archs->len; i++)
    {
      int a = g_array_index (archs, int, i);
      g_string_append_printf (list, "%ssm_%d", i ? ", " : "", a);
      if (a >= 90)
        g_string_append_printf (list, ", sm_%da", a);
      if (a >= 100)
        g_string_append_printf (list, ", sm_%df", a);
    }
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "arch: \"%s\" is not supported by NVRTC %d.%d; supported: %s "
               "(or compute_ with the same numbers)", arch,
               atomr_nvrtc_load (NULL)->major, atomr_nvrtc_load (NULL)->minor, list->str);
  return FALSE;
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
  g_autoptr(GPtrArray) verbose_flags = NULL;
  gboolean user_verbose, added_verbose = FALSE;

  lib = atomr_nvrtc_load (error);
  if (lib == NULL)
    return NULL;
  /* Only on a miss: a hit was keyed on the same text and arch, which
   * compiled before (the key changed with this check). */
  if (!atomr_nvrtc_check_text (source, -1, program_name, error)
      || !atomr_nvrtc_check_arch (arch, error))
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

  /* ptxas's info output (what each kernel uses, spills included: a CUBIN
   * does not record them) for every compile to a real architecture.  It
   * is asked here, not in @flags: the key is computed from @flags, and
   * the CUBIN's code is the same with and without it (only the toolkit
   * note .note.nv.tkinfo, which records ptxas' command line, gains
   * "-v"; see DESIGN-NOTES).  Its lines are taken out of the log again
   * unless the caller asked for them. */
  verbose_flags = g_ptr_array_new ();
  for (guint i = 0; flags && flags[i]; i++)
    g_ptr_array_add (verbose_flags, flags[i]);
  user_verbose = atomr_ptxas_flags_verbose ((const gchar * const *) flags);
  if (!lto && !user_verbose && arch && g_str_has_prefix (arch, "sm_"))
    {
      g_ptr_array_add (verbose_flags, (gpointer) "-Xptxas=-v");
      added_verbose = TRUE;
    }
  content = atomr_module_content_new ();
  res = lib->nvrtcCompileProgram (prog, verbose_flags->len, (const char * const *) verbose_flags->pdata);
  if (lib->nvrtcGetProgramLogSize (prog, &log_size) == NVRTC_SUCCESS && log_size > 1)
    {
      content->log = g_malloc0 (log_size + 1);
      lib->nvrtcGetProgramLog (prog, content->log);
    }
  else
    content->log = g_strdup ("");
  if (res == NVRTC_SUCCESS && (added_verbose || user_verbose) && !lto)
    {
      g_autoptr(GError) parse_error = NULL;

      content->resources = atomr_ptxas_info_parse (content->log, "ptxas", &parse_error);
      if (content->resources == NULL)
        g_debug ("%s: resource usage unknown: %s", program_name, parse_error->message);
    }
  if (added_verbose)
    {
      gchar *stripped = atomr_ptxas_info_strip (content->log);
      g_free (content->log);
      content->log = stripped;
    }
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
  /* Parameter layouts from the PTX (not for LTO: the image loaded is
   * nvJitLink's), stored with the entry so that a hit loads kernels
   * without asking the driver. */
  if (!lto && content->ptx && n_names > 0)
    {
      gsize ptx_len = 0;
      const gchar *ptx = g_bytes_get_data (content->ptx, &ptx_len);
      gboolean any = FALSE;

      content->param_layouts = g_new0 (gchar *, n_names + 1);
      for (guint i = 0; i < n_names; i++)
        {
          content->param_layouts[i] = atomr_ptx_param_layout (ptx, ptx_len, content->lowered_names[i]);
          any |= content->param_layouts[i] != NULL;
          if (content->param_layouts[i] == NULL)
            content->param_layouts[i] = g_strdup ("?");
        }
      if (!any)
        g_clear_pointer (&content->param_layouts, g_strfreev);
    }

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
      if (!jit_link (content, program_name, flags, link_objects, error))
        return NULL;
    }
  content->compile_time_ms = (g_get_monotonic_time () - start) / 1000.0;
  return g_steal_pointer (&content);
}

/* The options every compile without options uses: one object, so its
 * snapshot (and the cache's memory key part) is computed once. */
static AtomrCompileOptions *
default_options (void)
{
  static AtomrCompileOptions *options;

  if (g_once_init_enter (&options))
    g_once_init_leave (&options, atomr_compile_options_new ());
  return options;
}

AtomrCompileSnapshot *
atomr_nvrtc_snapshot_options (AtomrCompileOptions *options)
{
  return atomr_compile_options_get_snapshot (options ? options : default_options ());
}

AtomrModule *
atomr_nvrtc_compile_for_device (const gchar          *source,
                                const gchar          *program_name,
                                AtomrCompileOptions  *options,
                                AtomrKernelCache     *cache,
                                AtomrDevice          *device,
                                GError              **error)
{
  /* Flags, checks and the cache's memory key part are computed once per
   * revision of the options (AtomrCompileSnapshot): a memory hit is a
   * hash of the source and one table lookup. */
  g_autoptr(AtomrCompileSnapshot) snap = atomr_nvrtc_snapshot_options (options);

  return atomr_nvrtc_compile_snapshot (source, program_name, snap, options, cache, device, error);
}

AtomrModule *
atomr_nvrtc_compile_snapshot (const gchar           *source,
                              const gchar           *program_name,
                              AtomrCompileSnapshot  *snapshot,
                              AtomrCompileOptions   *options,
                              AtomrKernelCache      *cache,
                              AtomrDevice           *device,
                              GError               **error)
{
  g_autoptr(AtomrCompileSnapshot) snap = atomr_compile_snapshot_ref (snapshot);
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(AtomrModuleContent) content = NULL;
  AtomrModule *module;

  if (source == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "source: NULL");
      return NULL;
    }
  if (program_name == NULL)
    program_name = DEFAULT_PROGRAM_NAME;
  if (snap->error)
    {
      g_propagate_error (error, g_error_copy (snap->error));
      return NULL;
    }

  if (snap->native)
    {
      g_autoptr(AtomrCompileOptions) copy = atomr_compile_options_copy (options ? options : default_options ());
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
      g_clear_pointer (&snap, atomr_compile_snapshot_unref);
      snap = atomr_compile_options_get_snapshot (copy);
      if (snap->error)
        {
          g_propagate_error (error, g_error_copy (snap->error));
          return NULL;
        }
    }

  if (cache && atomr_kernel_cache_disabled_by_env (cache))
    cache = NULL;
  if (cache)
    {
      AtomrCacheKeyInput input = {
        .source = source,
        .program_name = program_name,
        .kernel_names = (const gchar * const *) snap->name_expressions,
        .flags = (const gchar * const *) snap->flags,
        .arch = snap->arch,
        .link_objects = snap->link_objects,
        .key_part = snap->key_part,
        .key_part_hash = snap->key_part_hash,
      };
      module = atomr_kernel_cache_lookup_request (cache, &input, &request);
      if (module)
        return module;
    }

  content = compile_uncached (source, program_name, (const gchar * const *) snap->name_expressions,
                              snap->flags, snap->arch, snap->lto, snap->link_objects, error);
  if (content == NULL)
    return NULL;
  if (cache && request)
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
 *   their mangled names) with [method@Atomr.CompileOptions.add_name_expression]
 * @cache: (nullable): a cache to look in first and to fill
 * @error: return location for a [struct@GLib.Error]
 *
 * Compiles @source in the calling thread (blocking).  Needs no GPU unless
 * the architecture is %ATOMR_ARCH_NATIVE.  On a cache hit NVRTC is neither
 * loaded nor called.  A compile error is %ATOMR_ERROR_COMPILE with NVRTC's
 * log (file name and line numbers) in the message.
 *
 * Returns: (transfer full): the module, or %NULL on error
 *
 * Since: 0.1
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
