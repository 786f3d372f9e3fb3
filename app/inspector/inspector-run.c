/* inspector-run.c — running a kernel from the editor, in a helper process
 *
 * A faulty kernel (an illegal address) leaves the CUDA context of its
 * process unusable for good, so the inspector never launches user kernels
 * itself: atomr-kernel-runner does, one run per process.  This file holds
 * what both sides share: the arguments the user types, parsed and checked
 * here (so a typo is a message, not a helper that fails), and the compile
 * options as JSON (the editor's panel and the runner build the same
 * AtomrCompileOptions from it, so both hit the same cache entry).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "inspector-run.h"

static const struct {
  const gchar *name;
  AtomrDtype   dtype;
} dtypes[] = {
  { "f32", ATOMR_DTYPE_F32 }, { "f64", ATOMR_DTYPE_F64 },
  { "i32", ATOMR_DTYPE_I32 }, { "u32", ATOMR_DTYPE_U32 },
  { "i64", ATOMR_DTYPE_I64 }, { "u64", ATOMR_DTYPE_U64 },
};

/* At most 1 GiB per buffer: a typo must not take the GPU's memory. */
#define MAX_BUFFER_BYTES (G_GUINT64_CONSTANT (1) << 30)

/**
 * inspector_run_dtype_name:
 * @dtype: a dtype the runner takes
 *
 * Returns: its short name ("f32"), or "?" for one it does not take
 */
const gchar *
inspector_run_dtype_name (AtomrDtype dtype)
{
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (dtypes[i].dtype == dtype)
      return dtypes[i].name;
  return "?";
}

static gboolean
parse_dtype (const gchar *text,
             AtomrDtype  *dtype)
{
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    if (g_str_equal (text, dtypes[i].name))
      {
        *dtype = dtypes[i].dtype;
        return TRUE;
      }
  return FALSE;
}

static gboolean
parse_number (const gchar *text,
              gdouble     *value)
{
  gchar *end = NULL;
  g_autofree gchar *t = g_strstrip (g_strdup (text));

  if (*t == '\0')
    return FALSE;
  /* a trailing "f" as in C ("2.5f") */
  if (t[strlen (t) - 1] == 'f' && strlen (t) > 1 && !g_str_has_prefix (t, "0x"))
    t[strlen (t) - 1] = '\0';
  *value = g_ascii_strtod (t, &end);
  return end && *end == '\0' && isfinite (*value);
}

static gboolean
parse_one (const gchar      *item,
           guint             index,
           InspectorRunArg  *arg,
           GError          **error)
{
  g_autofree gchar *t = g_strstrip (g_strdup (item));
  g_autofree gchar *type = NULL;
  gchar *bracket, *colon, *eq;

  *arg = (InspectorRunArg) { 0 };
  bracket = strchr (t, '[');
  colon = strchr (t, ':');
  if (bracket && (colon == NULL || bracket < colon))
    {
      gchar *close = strchr (bracket, ']');
      gchar *end = NULL;
      gsize size;

      arg->kind = INSPECTOR_RUN_BUFFER;
      type = g_strndup (t, bracket - t);
      if (close == NULL)
        goto bad;
      *close = '\0';
      arg->count = g_ascii_strtoull (bracket + 1, &end, 10);
      if (end == bracket + 1 || *end != '\0' || arg->count == 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       /* Translators: %u is the argument's position, %s what was typed */
                       _("Argument %u: “%s” is not a number of elements (1 or more)"), index, bracket + 1);
          return FALSE;
        }
      eq = close + 1;
      g_strstrip (eq);
      if (*eq == '\0' || g_str_equal (eq, "=zeros") || g_str_equal (eq, "=0"))
        arg->fill = INSPECTOR_RUN_FILL_ZEROS;
      else if (g_str_equal (eq, "=random"))
        arg->fill = INSPECTOR_RUN_FILL_RANDOM;
      else if (g_str_equal (eq, "=linear"))
        arg->fill = INSPECTOR_RUN_FILL_LINEAR;
      else if (eq[0] == '=' && parse_number (eq + 1, &arg->value))
        arg->fill = INSPECTOR_RUN_FILL_VALUE;
      else
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       _("Argument %u: “%s” is not a fill (=random, =linear, =zeros or =NUMBER)"), index, eq);
          return FALSE;
        }
      if (!parse_dtype (g_strstrip (type), &arg->dtype))
        goto bad_type;
      size = atomr_dtype_get_size (arg->dtype);
      if (arg->count > MAX_BUFFER_BYTES / size)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       _("Argument %u: %" G_GUINT64_FORMAT " elements are more than the 1 GiB a buffer may have here"),
                       index, arg->count);
          return FALSE;
        }
      return TRUE;
    }
  if (colon)
    {
      arg->kind = INSPECTOR_RUN_SCALAR;
      type = g_strndup (t, colon - t);
      if (!parse_dtype (g_strstrip (type), &arg->dtype))
        goto bad_type;
      if (!parse_number (colon + 1, &arg->value))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       _("Argument %u: “%s” is not a number"), index, colon + 1);
          return FALSE;
        }
      if (arg->dtype != ATOMR_DTYPE_F32 && arg->dtype != ATOMR_DTYPE_F64 &&
          (arg->value != floor (arg->value) ||
           ((arg->dtype == ATOMR_DTYPE_U32 || arg->dtype == ATOMR_DTYPE_U64) && arg->value < 0) ||
           ((arg->dtype == ATOMR_DTYPE_U32) && arg->value > G_MAXUINT32) ||
           ((arg->dtype == ATOMR_DTYPE_I32) && (arg->value > G_MAXINT32 || arg->value < G_MININT32))))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       _("Argument %u: %s does not fit a %s"), index, colon + 1, inspector_run_dtype_name (arg->dtype));
          return FALSE;
        }
      return TRUE;
    }
bad:
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               _("Argument %u: “%s” is neither a scalar (f32:2.5) nor a buffer (f32[1024]=random)"), index, t);
  return FALSE;
bad_type:
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               _("Argument %u: “%s” is not a type the runner knows (f32, f64, i32, u32, i64, u64)"),
               index, type);
  return FALSE;
}

/**
 * inspector_run_parse_args:
 * @text: the arguments, separated by commas, in the kernel's order
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (element-type InspectorRunArg) (nullable): the
 *   arguments, or %NULL with %ATOMR_ERROR_INVALID_ARGUMENT naming the
 *   argument (from 1) and what is wrong with it
 */
GArray *
inspector_run_parse_args (const gchar  *text,
                          GError      **error)
{
  g_autoptr(GArray) args = g_array_new (FALSE, TRUE, sizeof (InspectorRunArg));
  g_auto(GStrv) items = g_strsplit (text ? text : "", ",", -1);

  for (guint i = 0; items[i]; i++)
    {
      InspectorRunArg arg;

      if (*g_strstrip (items[i]) == '\0' && items[i + 1] == NULL && i > 0)
        break;   /* a trailing comma */
      if (*items[i] == '\0' && i == 0 && items[1] == NULL)
        break;   /* no arguments */
      if (!parse_one (items[i], i + 1, &arg, error))
        return NULL;
      g_array_append_val (args, arg);
    }
  return g_steal_pointer (&args);
}

static const gchar * const fills[] = { "zeros", "value", "linear", "random" };

/**
 * inspector_run_args_to_json:
 * @args: (element-type InspectorRunArg): arguments
 *
 * Returns: (transfer full): a JSON array for the runner's request
 */
JsonNode *
inspector_run_args_to_json (GArray *args)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_array (b);
  for (guint i = 0; i < args->len; i++)
    {
      InspectorRunArg *a = &g_array_index (args, InspectorRunArg, i);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "kind");
      json_builder_add_string_value (b, a->kind == INSPECTOR_RUN_BUFFER ? "buffer" : "scalar");
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, inspector_run_dtype_name (a->dtype));
      json_builder_set_member_name (b, "value");
      json_builder_add_double_value (b, a->value);
      if (a->kind == INSPECTOR_RUN_BUFFER)
        {
          json_builder_set_member_name (b, "count");
          json_builder_add_int_value (b, (gint64) a->count);
          json_builder_set_member_name (b, "fill");
          json_builder_add_string_value (b, fills[a->fill]);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  return json_builder_get_root (b);
}

/**
 * inspector_run_args_from_json:
 * @node: what inspector_run_args_to_json() made
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (element-type InspectorRunArg) (nullable): the
 *   arguments, checked again (the request comes through a pipe)
 */
GArray *
inspector_run_args_from_json (JsonNode  *node,
                              GError   **error)
{
  g_autoptr(GArray) args = g_array_new (FALSE, TRUE, sizeof (InspectorRunArg));
  JsonArray *array;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, _("The request has no argument list"));
      return NULL;
    }
  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *o = json_array_get_object_element (array, i);
      InspectorRunArg a = { 0 };
      const gchar *kind = o ? json_object_get_string_member_with_default (o, "kind", "") : "";
      const gchar *dtype = o ? json_object_get_string_member_with_default (o, "dtype", "") : "";
      const gchar *fill = o ? json_object_get_string_member_with_default (o, "fill", "zeros") : "";
      g_autofree gchar *text = NULL;
      g_autoptr(GArray) one = NULL;

      if (o == NULL || !parse_dtype (dtype, &a.dtype))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       _("Argument %u of the request is not an argument"), i + 1);
          return NULL;
        }
      /* through the parser, so both sides check the same way */
      if (g_str_equal (kind, "buffer"))
        {
          gchar num[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_dtostr (num, sizeof num, json_object_get_double_member_with_default (o, "value", 0));
          text = g_str_equal (fill, "value")
            ? g_strdup_printf ("%s[%" G_GINT64_FORMAT "]=%s", dtype, json_object_get_int_member_with_default (o, "count", 0), num)
            : g_strdup_printf ("%s[%" G_GINT64_FORMAT "]=%s", dtype, json_object_get_int_member_with_default (o, "count", 0), fill);
        }
      else
        {
          gchar num[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_dtostr (num, sizeof num, json_object_get_double_member_with_default (o, "value", 0));
          text = g_strdup_printf ("%s:%s", dtype, num);
        }
      if (!parse_one (text, i + 1, &a, error))
        return NULL;
      g_array_append_val (args, a);
    }
  return g_steal_pointer (&args);
}

static gchar **
string_list (JsonObject  *object,
             const gchar *name)
{
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  JsonArray *array = json_object_has_member (object, name) ? json_object_get_array_member (object, name) : NULL;

  for (guint i = 0; array && i < json_array_get_length (array); i++)
    {
      const gchar *s = json_array_get_string_element (array, i);
      if (s && *s)
        g_strv_builder_add (b, s);
    }
  return g_strv_builder_end (b);
}

/**
 * inspector_compile_options_from_json:
 * @object: {"arch", "std", "defines": ["N=1"], "includes", "names",
 *   "fast_math", "line_info", "debug", "lto", "max_registers", "extra": ["--flag"]}
 * @error: return location for a #GError
 *
 * The editor's compile options; the editor and the runner both build
 * them here.
 *
 * Returns: (transfer full) (nullable): valid options, or %NULL with
 *   @error set by atomr_compile_options_validate()
 */
AtomrCompileOptions *
inspector_compile_options_from_json (JsonObject  *object,
                                     GError     **error)
{
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_auto(GStrv) defines = string_list (object, "defines");
  g_auto(GStrv) includes = string_list (object, "includes");
  g_auto(GStrv) names = string_list (object, "names");
  g_auto(GStrv) extra = string_list (object, "extra");
  const gchar *arch = json_object_get_string_member_with_default (object, "arch", NULL);
  const gchar *std = json_object_get_string_member_with_default (object, "std", NULL);
  gint64 max_registers = json_object_get_int_member_with_default (object, "max_registers", 0);

  if (arch && *arch)
    atomr_compile_options_set_arch (options, arch);
  if (std && *std)
    atomr_compile_options_set_std (options, std);
  atomr_compile_options_set_fast_math (options, json_object_get_boolean_member_with_default (object, "fast_math", FALSE));
  atomr_compile_options_set_line_info (options, json_object_get_boolean_member_with_default (object, "line_info", FALSE));
  atomr_compile_options_set_debug (options, json_object_get_boolean_member_with_default (object, "debug", FALSE));
  atomr_compile_options_set_lto (options, json_object_get_boolean_member_with_default (object, "lto", FALSE));
  if (max_registers < 0 || max_registers > 255)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   _("Maximum registers: %" G_GINT64_FORMAT " is not between 0 and 255"), max_registers);
      return NULL;
    }
  atomr_compile_options_set_max_registers (options, (guint) max_registers);
  for (guint i = 0; extra[i]; i++)
    atomr_compile_options_add_extra_flag (options, extra[i]);
  for (guint i = 0; defines[i]; i++)
    {
      g_auto(GStrv) kv = g_strsplit (defines[i], "=", 2);
      atomr_compile_options_add_define (options, kv[0], kv[1]);
    }
  for (guint i = 0; includes[i]; i++)
    atomr_compile_options_add_include_path (options, includes[i]);
  for (guint i = 0; names[i]; i++)
    atomr_compile_options_add_name_expression (options, names[i]);
  if (!atomr_compile_options_validate (options, error))
    return NULL;
  return g_steal_pointer (&options);
}

/**
 * inspector_run_find_runner:
 *
 * Returns: (transfer full) (nullable): atomr-kernel-runner:
 *   $ATOMR_INSPECTOR_RUNNER (tests, uninstalled builds), else the installed
 *   one, else %NULL
 */
gchar *
inspector_run_find_runner (void)
{
  const gchar *env = g_getenv ("ATOMR_INSPECTOR_RUNNER");
  g_autofree gchar *installed = g_build_filename (ATOMR_INSPECTOR_LIBEXECDIR, "atomr-kernel-runner", NULL);

  if (env && *env)
    return g_strdup (env);
  if (g_file_test (installed, G_FILE_TEST_IS_EXECUTABLE))
    return g_steal_pointer (&installed);
  return NULL;
}

/* The runner ------------------------------------------------------------- */

#define SAMPLE 8

typedef struct {
  GMainLoop   *loop;
  GError      *error;
  AtomrKernel *kernel;
  gdouble      gpu_ms;
} Wait;

static void
on_compiled (GObject *source, GAsyncResult *result, gpointer data)
{
  Wait *w = data;
  w->kernel = atomr_nvrtc_actor_compile_finish (ATOMR_NVRTC_ACTOR (source), result, &w->error);
  g_main_loop_quit (w->loop);
}

static void
on_launched (GObject *source, GAsyncResult *result, gpointer data)
{
  Wait *w = data;
  atomr_nvrtc_actor_launch_finish (ATOMR_NVRTC_ACTOR (source), result, &w->error);
  g_main_loop_quit (w->loop);
}

static void
on_complete (AtomrActor      *actor,
             AtomrLaunchInfo *info,
             Wait            *w)
{
  w->gpu_ms = atomr_launch_info_get_gpu_duration_ms (info);
}

static gdouble
element (const guint8 *data,
         AtomrDtype    dtype,
         guint64       i)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32: return ((const gfloat *) data)[i];
    case ATOMR_DTYPE_F64: return ((const gdouble *) data)[i];
    case ATOMR_DTYPE_I32: return ((const gint32 *) data)[i];
    case ATOMR_DTYPE_U32: return ((const guint32 *) data)[i];
    case ATOMR_DTYPE_I64: return (gdouble) ((const gint64 *) data)[i];
    case ATOMR_DTYPE_U64: return (gdouble) ((const guint64 *) data)[i];
    default: return NAN;
    }
}

static void
set_element (guint8     *data,
             AtomrDtype  dtype,
             guint64     i,
             gdouble     v)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F32: ((gfloat *) data)[i] = (gfloat) v; break;
    case ATOMR_DTYPE_F64: ((gdouble *) data)[i] = v; break;
    case ATOMR_DTYPE_I32: ((gint32 *) data)[i] = (gint32) v; break;
    case ATOMR_DTYPE_U32: ((guint32 *) data)[i] = (guint32) v; break;
    case ATOMR_DTYPE_I64: ((gint64 *) data)[i] = (gint64) v; break;
    case ATOMR_DTYPE_U64: ((guint64 *) data)[i] = (guint64) v; break;
    default: break;
    }
}

/* The buffer's first contents, as the user asked. */
static GBytes *
initial_contents (const InspectorRunArg *a)
{
  gsize size = atomr_dtype_get_size (a->dtype);
  guint8 *data = g_malloc0 (a->count * size);
  g_autoptr(GRand) rand = g_rand_new_with_seed (42);

  for (guint64 i = 0; i < a->count && a->fill != INSPECTOR_RUN_FILL_ZEROS; i++)
    set_element (data, a->dtype, i,
                 a->fill == INSPECTOR_RUN_FILL_VALUE ? a->value :
                 a->fill == INSPECTOR_RUN_FILL_LINEAR ? (gdouble) i : g_rand_double (rand));
  return g_bytes_new_take (data, a->count * size);
}

static void
add_scalar (AtomrKernelArgs       *args,
            const InspectorRunArg *a)
{
  switch (a->dtype)
    {
    case ATOMR_DTYPE_F32: atomr_kernel_args_add_f32 (args, (gfloat) a->value); break;
    case ATOMR_DTYPE_F64: atomr_kernel_args_add_f64 (args, a->value); break;
    case ATOMR_DTYPE_I32: atomr_kernel_args_add_i32 (args, (gint32) a->value); break;
    case ATOMR_DTYPE_U32: atomr_kernel_args_add_u32 (args, (guint32) a->value); break;
    case ATOMR_DTYPE_I64: atomr_kernel_args_add_i64 (args, (gint64) a->value); break;
    case ATOMR_DTYPE_U64: atomr_kernel_args_add_u64 (args, (guint64) a->value); break;
    default: break;
    }
}

static void reply_error (const GError *error);

/* A launch or a download failed: the context may be poisoned for good
 * (an illegal address), and tearing the actor and device down could
 * wait on it; the reply goes out and the process ends at once. */
G_GNUC_NORETURN static void
reply_error_and_exit (GError *error)
{
  reply_error (error);
  g_error_free (error);
  _exit (1);
}

static JsonNode *
run (JsonObject  *request,
     GError     **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(AtomrNvrtcActor) actor = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrLaunchConfig) config = NULL;
  g_autoptr(AtomrKernelArgs) kargs = atomr_kernel_args_new ();
  g_autoptr(GArray) args = NULL;
  g_autoptr(GPtrArray) buffers = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree gchar *arch = NULL;
  const gchar *source, *kernel_name, *name, *cache_dir;
  JsonObject *opts;
  gint64 threads, block, repeat;
  Wait w = { 0 };

  source = json_object_get_string_member_with_default (request, "source", NULL);
  kernel_name = json_object_get_string_member_with_default (request, "kernel", NULL);
  name = json_object_get_string_member_with_default (request, "name", "kernel.cu");
  cache_dir = json_object_get_string_member_with_default (request, "cache", NULL);
  threads = json_object_get_int_member_with_default (request, "threads", 0);
  block = json_object_get_int_member_with_default (request, "block", 256);
  repeat = json_object_get_int_member_with_default (request, "repeat", 1);
  opts = json_object_has_member (request, "options") ? json_object_get_object_member (request, "options") : NULL;
  if (source == NULL || kernel_name == NULL || *kernel_name == '\0' || opts == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "The request needs \"source\", \"kernel\" and \"options\"");
      return NULL;
    }
  if (threads <= 0 || block <= 0 || block > 1024 || repeat < 1 || repeat > 1000)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "threads %" G_GINT64_FORMAT ", block %" G_GINT64_FORMAT ", repeat %" G_GINT64_FORMAT
                   ": need threads ≥ 1, block 1…1024, repeat 1…1000", threads, block, repeat);
      return NULL;
    }
  args = inspector_run_args_from_json (json_object_get_member (request, "args"), error);
  if (args == NULL)
    return NULL;
  /* the runner compiles for its GPU: the panel's architecture is dropped */
  json_object_remove_member (opts, "arch");
  options = inspector_compile_options_from_json (opts, error);
  if (options == NULL)
    return NULL;
  if (!g_strv_contains (atomr_compile_options_get_name_expressions (options), kernel_name))
    atomr_compile_options_add_name_expression (options, kernel_name);

  device = atomr_device_get (0, error);
  if (device == NULL)
    return NULL;
  actor = atomr_nvrtc_actor_new (device, error);
  if (actor == NULL)
    return NULL;
  cache = cache_dir && *cache_dir ? atomr_kernel_cache_new (cache_dir) : NULL;
  if (cache)
    atomr_nvrtc_actor_set_cache (actor, cache);
  atomr_actor_set_name (ATOMR_ACTOR (actor), "inspector-run");
  atomr_actor_set_timing (ATOMR_ACTOR (actor), TRUE);
  w.loop = g_main_loop_new (NULL, FALSE);

  atomr_nvrtc_actor_compile_async (actor, source, kernel_name, options, NULL, on_compiled, &w);
  g_main_loop_run (w.loop);
  if (w.kernel == NULL)
    {
      g_propagate_error (error, w.error);
      g_main_loop_unref (w.loop);
      return NULL;
    }
  (void) name;

  for (guint i = 0; i < args->len; i++)
    {
      const InspectorRunArg *a = &g_array_index (args, InspectorRunArg, i);

      if (a->kind == INSPECTOR_RUN_SCALAR)
        {
          add_scalar (kargs, a);
          g_ptr_array_add (buffers, NULL);
          continue;
        }
      {
        g_autoptr(GBytes) contents = initial_contents (a);
        AtomrBuffer *buf = atomr_buffer_new (device, a->dtype, a->count, error);

        if (buf == NULL || !atomr_buffer_upload_sync (buf, contents, NULL, error))
          {
            g_clear_object (&buf);
            g_clear_object (&w.kernel);
            g_main_loop_unref (w.loop);
            return NULL;
          }
        atomr_kernel_args_add_buffer (kargs, buf);
        g_ptr_array_add (buffers, buf);
      }
    }

  config = atomr_launch_config_new_1d ((guint64) threads, (guint) block);
  g_signal_connect (actor, "after-complete", G_CALLBACK (on_complete), &w);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, TRUE);
  json_builder_set_member_name (b, "device");
  json_builder_add_string_value (b, atomr_device_get_name (device));
  arch = atomr_device_get_arch (device);
  json_builder_set_member_name (b, "arch");
  json_builder_add_string_value (b, arch);
  json_builder_set_member_name (b, "gpu_ms");
  json_builder_begin_array (b);
  for (gint64 r = 0; r < repeat; r++)
    {
      w.gpu_ms = -1;
      atomr_nvrtc_actor_launch_async (actor, w.kernel, config, kargs, NULL, on_launched, &w);
      g_main_loop_run (w.loop);
      if (w.error)
        reply_error_and_exit (w.error);
      json_builder_add_double_value (b, w.gpu_ms);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "outputs");
  json_builder_begin_array (b);
  for (guint i = 0; i < args->len; i++)
    {
      const InspectorRunArg *a = &g_array_index (args, InspectorRunArg, i);
      g_autoptr(GBytes) out = NULL;
      const guint8 *data;
      gdouble lo = INFINITY, hi = -INFINITY, sum = 0;

      if (a->kind != INSPECTOR_RUN_BUFFER)
        continue;
      out = atomr_buffer_download_sync (g_ptr_array_index (buffers, i), NULL, error);
      if (out == NULL)
        {
          GError *e = NULL;
          g_propagate_error (&e, g_steal_pointer (error));
          reply_error_and_exit (e);
        }
      data = g_bytes_get_data (out, NULL);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "arg");
      json_builder_add_int_value (b, i + 1);
      json_builder_set_member_name (b, "dtype");
      json_builder_add_string_value (b, inspector_run_dtype_name (a->dtype));
      json_builder_set_member_name (b, "count");
      json_builder_add_int_value (b, (gint64) a->count);
      json_builder_set_member_name (b, "sample");
      json_builder_begin_array (b);
      for (guint64 k = 0; k < MIN (a->count, SAMPLE); k++)
        json_builder_add_double_value (b, element (data, a->dtype, k));
      json_builder_end_array (b);
      for (guint64 k = 0; k < a->count; k++)
        {
          gdouble v = element (data, a->dtype, k);
          lo = MIN (lo, v);
          hi = MAX (hi, v);
          sum += v;
        }
      json_builder_set_member_name (b, "min");
      json_builder_add_double_value (b, lo);
      json_builder_set_member_name (b, "max");
      json_builder_add_double_value (b, hi);
      json_builder_set_member_name (b, "mean");
      json_builder_add_double_value (b, sum / (gdouble) a->count);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  g_clear_object (&w.kernel);
  g_main_loop_unref (w.loop);
  return json_builder_get_root (b);
}

static void
reply (JsonNode *node)
{
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autofree gchar *text = NULL;

  json_generator_set_root (gen, node);
  text = json_generator_to_data (gen, NULL);
  fputs (text, stdout);
  fputc ('\n', stdout);
  fflush (stdout);
}

static void
reply_error (const GError *error)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "ok");
  json_builder_add_boolean_value (b, FALSE);
  json_builder_set_member_name (b, "error");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "domain");
  json_builder_add_string_value (b, g_quark_to_string (error->domain));
  json_builder_set_member_name (b, "code");
  json_builder_add_int_value (b, error->code);
  json_builder_set_member_name (b, "message");
  json_builder_add_string_value (b, error->message);
  json_builder_end_object (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  reply (root);
}

/**
 * inspector_run_main:
 *
 * The runner: one request from stdin, one reply on stdout
 * (atomr-kernel-runner and the GPU test's "--runner" mode).
 *
 * Returns: the exit status: 0 with a result, 1 with an error
 */
int
inspector_run_main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(JsonNode) result = NULL;
  JsonNode *root;
  gchar chunk[65536];
  gsize n;

  while ((n = fread (chunk, 1, sizeof chunk, stdin)) > 0)
    g_string_append_len (text, chunk, (gssize) n);
  if (!json_parser_load_from_data (parser, text->str, (gssize) text->len, &error))
    {
      g_prefix_error (&error, "The request is not JSON: ");
      error->domain = ATOMR_ERROR;
      error->code = ATOMR_ERROR_INVALID_ARGUMENT;
      reply_error (error);
      return 1;
    }
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "The request is not a JSON object");
      reply_error (error);
      return 1;
    }
  result = run (json_node_get_object (root), &error);
  if (result == NULL)
    {
      reply_error (error);
      return 1;
    }
  reply (result);
  return 0;
}

/* The client --------------------------------------------------------------- */

typedef struct {
  GSubprocess *proc;
  GSource     *timeout;
  gboolean     timed_out;
  guint        timeout_s;
} Spawn;

static void
spawn_free (Spawn *s)
{
  if (s->timeout)
    {
      g_source_destroy (s->timeout);
      g_source_unref (s->timeout);
    }
  g_clear_object (&s->proc);
  g_free (s);
}

static gboolean
on_spawn_timeout (gpointer data)
{
  Spawn *s = data;

  s->timed_out = TRUE;
  g_subprocess_force_exit (s->proc);
  return G_SOURCE_REMOVE;
}

static void
on_spawn_cancelled (GCancellable *cancellable,
                    GSubprocess  *proc)
{
  g_subprocess_force_exit (proc);
}

/* After a failed exchange: the runner's end, else the I/O error. */
static void
on_spawn_waited (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Spawn *s = g_task_get_task_data (task);
  GError *io = g_object_get_data (G_OBJECT (task), "io-error");

  g_subprocess_wait_finish (s->proc, result, NULL);
  if (g_task_return_error_if_cancelled (task))
    return;
  if (s->timed_out)
    g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                             _("The run took longer than %u s and was stopped; the kernel may not terminate"),
                             s->timeout_s);
  else if (g_subprocess_get_if_signaled (s->proc))
    g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE,
                             _("The kernel runner crashed (signal %d, %s). Only its process was lost; the "
                               "inspector and its CUDA state are unaffected."),
                             g_subprocess_get_term_sig (s->proc), g_strsignal (g_subprocess_get_term_sig (s->proc)));
  else
    g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                             _("The kernel runner ended (exit status %d) before it took the request: %s"),
                             g_subprocess_get_if_exited (s->proc) ? g_subprocess_get_exit_status (s->proc) : -1,
                             io ? io->message : "?");
}

static void
on_spawn_done (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Spawn *s = g_task_get_task_data (task);
  g_autofree gchar *out = NULL, *err = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree gchar *tail = NULL;
  JsonNode *root;

  if (!g_subprocess_communicate_utf8_finish (s->proc, result, &out, &err, &error))
    {
      /* the runner died before it read the request (a broken pipe): what
       * matters is how it ended */
      g_object_set_data_full (G_OBJECT (task), "io-error", g_steal_pointer (&error), (GDestroyNotify) g_error_free);
      g_subprocess_wait_async (s->proc, NULL, on_spawn_waited, g_steal_pointer (&task));
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  tail = g_strstrip (g_strdup (err ? err : ""));
  if (s->timed_out)
    g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT,
                             _("The run took longer than %u s and was stopped; the kernel may not terminate"),
                             s->timeout_s);
  else if (g_subprocess_get_if_signaled (s->proc))
    {
      gint sig = g_subprocess_get_term_sig (s->proc);
      /* Translators: a signal number and its name, then what the runner printed */
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE,
                               _("The kernel runner crashed (signal %d, %s). Only its process was lost; the "
                                 "inspector and its CUDA state are unaffected.%s%s"),
                               sig, g_strsignal (sig), *tail ? "\n" : "", tail);
    }
  else if (out && json_parser_load_from_data (parser, out, -1, NULL) &&
           (root = json_parser_get_root (parser)) && JSON_NODE_HOLDS_OBJECT (root))
    {
      JsonObject *o = json_node_get_object (root);
      JsonObject *e = json_object_has_member (o, "error") ? json_object_get_object_member (o, "error") : NULL;

      if (json_object_get_boolean_member_with_default (o, "ok", FALSE))
        g_task_return_pointer (task, json_object_ref (o), (GDestroyNotify) json_object_unref);
      else
        g_task_return_new_error (task, ATOMR_ERROR,
                                 e && g_strcmp0 (json_object_get_string_member_with_default (e, "domain", ""),
                                                 g_quark_to_string (ATOMR_ERROR)) == 0
                                   ? (gint) json_object_get_int_member_with_default (e, "code", ATOMR_ERROR_LIBRARY)
                                   : ATOMR_ERROR_LIBRARY,
                                 "%s", e ? json_object_get_string_member_with_default (e, "message", "?") : "?");
    }
  else
    {
      g_autofree gchar *what = g_strstrip (g_strdup (*tail ? tail : out ? out : ""));
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                               _("The kernel runner gave no result (exit status %d): %s"),
                               g_subprocess_get_if_exited (s->proc) ? g_subprocess_get_exit_status (s->proc) : -1,
                               *what ? what : _("it printed nothing"));
    }
}

/**
 * inspector_run_spawn_async:
 * @argv: (array zero-terminated=1): the runner and its arguments
 * @request: the request (JSON)
 * @timeout_s: the runner is stopped after this many seconds
 * @cancellable: (nullable): stops the runner
 * @callback: called with the reply
 * @user_data: data for @callback
 *
 * Starts a runner process, writes @request to it and reads its reply, on
 * the thread-default main context.
 */
void
inspector_run_spawn_async (const gchar * const *argv,
                           const gchar         *request,
                           guint                timeout_s,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  Spawn *s = g_new0 (Spawn, 1);

  g_task_set_source_tag (task, inspector_run_spawn_async);
  g_task_set_task_data (task, s, (GDestroyNotify) spawn_free);
  s->timeout_s = timeout_s;
  s->proc = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                               G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  if (s->proc == NULL)
    {
      g_task_return_new_error (task, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                               _("The kernel runner %s does not start: %s"), argv[0], error->message);
      return;
    }
  if (cancellable)
    g_signal_connect_object (cancellable, "cancelled", G_CALLBACK (on_spawn_cancelled), s->proc, 0);
  s->timeout = g_timeout_source_new_seconds (timeout_s);
  g_source_set_callback (s->timeout, on_spawn_timeout, s, NULL);
  g_source_attach (s->timeout, g_main_context_get_thread_default ());
  /* not cancellable itself: a cancelled run still reaps its process */
  g_subprocess_communicate_utf8_async (s->proc, request, NULL, on_spawn_done, g_object_ref (task));
}

/**
 * inspector_run_spawn_finish:
 * @result: the result
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the runner's reply ("ok" true), or
 *   %NULL with @error: the runner's own error (its domain and code when
 *   ATOMR_ERROR), %ATOMR_ERROR_UNRECOVERABLE when it crashed (the signal
 *   in the message), %ATOMR_ERROR_TIMED_OUT, %ATOMR_ERROR_LIBRARY when it
 *   gave no reply
 */
JsonObject *
inspector_run_spawn_finish (GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
