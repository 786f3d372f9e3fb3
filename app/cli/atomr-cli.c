/* atomr-cli.c — the atomr command-line tool
 *
 *   atomr compile FILE.cu [--kernel NAME]... [--name-expression EXPR]...
 *                 [--arch sm_NN] [--std c++17] [-D NAME[=V]]... [-I DIR]...
 *                 [--lto] [--fast-math] [--maxrregcount N] [--ftz]
 *                 [--line-info] [-G] [-rdc] [-Xnvrtc OPTION]...
 *                 [-o FILE [--ptx|--ltoir]] [--cache-dir DIR] [--json]
 *   atomr cache list|show KEY [--ptx|--cubin|--ltoir|--log|--source|--analyse]
 *               [-o FILE]|rm KEY|gc [--max-size SIZE]|stats [--verify]|
 *               export DIR|FILE.tar|import DIR|FILE.tar|
 *               explain FILE.cu [compile options]|diff KEY1 KEY2
 *               [--cache-dir DIR] [--json]
 *
 * Exit status: 0 success, 1 compile error (log on stderr), 2 usage or
 * other errors.  With --json, stdout is always one valid UTF-8 JSON
 * document with "version": ATOMR_CLI_JSON_VERSION, also on errors:
 * {"version": 1, "error": {"domain", "code", "message", "log"}} (the
 * schema is in docs/DEVELOPING.md, "atomr --json").
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include <atomr.h>

#define EXIT_COMPILE 1
#define EXIT_USAGE   2
/* Bumped when a member changes meaning or goes away (new members do not). */
#define ATOMR_CLI_JSON_VERSION 1

/* Set by the subcommands once --json is parsed: errors are JSON then. */
static gboolean json_mode;

/* JSON strings must be UTF-8; paths, logs and sources need not be. */
static void
add_string_value (JsonBuilder *b,
                  const gchar *s)
{
  if (s == NULL)
    json_builder_add_null_value (b);
  else if (g_utf8_validate (s, -1, NULL))
    json_builder_add_string_value (b, s);
  else
    {
      g_autofree gchar *valid = g_utf8_make_valid (s, -1);
      json_builder_add_string_value (b, valid);
    }
}

static void
add_string_member (JsonBuilder *b,
                   const gchar *name,
                   const gchar *s)
{
  json_builder_set_member_name (b, name);
  add_string_value (b, s);
}

static void
add_int_member (JsonBuilder *b,
                const gchar *name,
                gint64       v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, v);
}

/* Starts the top-level object every --json output is. */
static JsonBuilder *
begin_document (void)
{
  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  add_int_member (b, "version", ATOMR_CLI_JSON_VERSION);
  return b;
}

static void
print_json (JsonBuilder *b)
{
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autofree gchar *text = NULL;

  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  g_print ("%s\n", text);
}

static void
add_strv_member (JsonBuilder         *b,
                 const gchar         *name,
                 const gchar * const *v)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; v && v[i]; i++)
    add_string_value (b, v[i]);
  json_builder_end_array (b);
}

/* Reports @error on stderr, and with --json as the JSON document on
 * stdout.  A compile error's "log" is NVRTC's log (the message's lines
 * after the first); null otherwise.  Returns the exit status. */
static int
fail (const GError *error)
{
  gboolean compile = error->domain == ATOMR_ERROR && error->code == ATOMR_ERROR_COMPILE;

  g_printerr ("%s%s\n", compile ? "" : "atomr: ", error->message);
  if (json_mode)
    {
      g_autoptr(JsonBuilder) b = begin_document ();
      const gchar *nl = strchr (error->message, '\n');

      json_builder_set_member_name (b, "error");
      json_builder_begin_object (b);
      add_string_member (b, "domain", g_quark_to_string (error->domain));
      add_int_member (b, "code", error->code);
      add_string_member (b, "message", error->message);
      add_string_member (b, "log", compile ? (nl ? nl + 1 : "") : NULL);
      json_builder_end_object (b);
      json_builder_end_object (b);
      print_json (b);
    }
  return compile ? EXIT_COMPILE : EXIT_USAGE;
}

static int
usage_error (GOptionContext *context,
             const gchar    *message)
{
  g_autofree gchar *help = g_option_context_get_help (context, TRUE, NULL);
  g_printerr ("atomr: %s\n\n%s", message, help);
  if (json_mode)
    {
      g_autoptr(GError) error = g_error_new_literal (G_OPTION_ERROR, G_OPTION_ERROR_FAILED, message);
      g_autoptr(JsonBuilder) b = begin_document ();

      json_builder_set_member_name (b, "error");
      json_builder_begin_object (b);
      add_string_member (b, "domain", g_quark_to_string (error->domain));
      add_int_member (b, "code", error->code);
      add_string_member (b, "message", error->message);
      add_string_member (b, "log", NULL);
      json_builder_end_object (b);
      json_builder_end_object (b);
      print_json (b);
    }
  return EXIT_USAGE;
}

/* --json is known before parsing (errors while parsing are JSON too). */
static void
scan_json_flag (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_equal (argv[i], "--json") || g_str_equal (argv[i], "-j"))
        json_mode = TRUE;
    }
}

/* ------------------------------------------------------------------ */

/* GOption has no single-dash long options; nvcc spells these with one. */
static void
normalize_nvcc_spellings (int    argc,
                          char **argv)
{
  static const gchar * const long_names[] = {
    "-rdc", "-Xnvrtc", "-maxrregcount", "-ftz", "-lineinfo", "-ptx", "-ltoir", "-lto", NULL
  };

  for (int i = 1; i < argc; i++)
    {
      if (g_strcmp0 (argv[i], "--") == 0)
        return;
      for (guint k = 0; long_names[k]; k++)
        {
          gsize n = strlen (long_names[k]);
          if (strncmp (argv[i], long_names[k], n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '='))
            {
              /* argv belongs to main(); the strings live until exit. */
              argv[i] = g_strconcat ("-", argv[i], NULL);
              break;
            }
        }
    }
}

/* Writes @data to @path ("-": standard output). */
static gboolean
write_output (const gchar  *path,
              GBytes       *data,
              GError      **error)
{
  gsize len = 0;
  const gchar *bytes = g_bytes_get_data (data, &len);

  if (g_strcmp0 (path, "-") == 0)
    {
      if (fwrite (bytes, 1, len, stdout) != len || fflush (stdout) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "standard output: write failed");
          return FALSE;
        }
      return TRUE;
    }
  return g_file_set_contents (path, bytes, len, error);
}

/* The compile options, one table for `compile` and `cache explain`: an
 * explain must build exactly the key the compile builds, so it takes every
 * flag that reaches the key. */
typedef struct {
  gchar  **kernels;
  gchar  **expressions;
  gchar  **defines;
  gchar  **includes;
  gchar   *arch;
  gchar   *std;
  gchar  **nvrtc_flags;
  gboolean lto, fast_math, ftz, line_info, debug, rdc;
  gint     max_registers;
} CompileFlags;

static void
compile_flags_clear (CompileFlags *f)
{
  g_strfreev (f->kernels);
  g_strfreev (f->expressions);
  g_strfreev (f->defines);
  g_strfreev (f->includes);
  g_free (f->arch);
  g_free (f->std);
  g_strfreev (f->nvrtc_flags);
  memset (f, 0, sizeof *f);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (CompileFlags, compile_flags_clear)

/* The option group of @f; @prefix starts every description ("" for
 * compile, "explain: " for cache). */
static GOptionGroup *
compile_flags_group (CompileFlags *f,
                     const gchar  *prefix)
{
  GOptionGroup *group = g_option_group_new ("compile", "Compile options", "Show the compile options", NULL, NULL);
  GOptionEntry entries[] = {
    { "kernel", 'k', 0, G_OPTION_ARG_STRING_ARRAY, &f->kernels, "A kernel to compile (repeatable)", "NAME" },
    { "name-expression", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &f->expressions, "A name expression such as 'k<float, 256>' (repeatable)", "EXPR" },
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &f->arch, "Target architecture: sm_NN or compute_NN as NVRTC supports them, with an a or f suffix, or native", "sm_NN" },
    { "std", 0, 0, G_OPTION_ARG_STRING, &f->std, "C++ dialect (c++14, c++17, c++20)", "c++NN" },
    { "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &f->defines, "Define a macro (repeatable)", "NAME[=V]" },
    { "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &f->includes, "Add an include path (repeatable)", "DIR" },
    { "lto", 0, 0, G_OPTION_ARG_NONE, &f->lto, "Link-time optimisation through nvJitLink", NULL },
    { "fast-math", 0, 0, G_OPTION_ARG_NONE, &f->fast_math, "Fast, less precise math", NULL },
    { "maxrregcount", 0, 0, G_OPTION_ARG_INT, &f->max_registers, "At most N registers per thread (also with --lto)", "N" },
    { "ftz", 0, 0, G_OPTION_ARG_NONE, &f->ftz, "Flush single-precision denormals to zero", NULL },
    { "line-info", 0, 0, G_OPTION_ARG_NONE, &f->line_info, "Line information for profilers (-lineinfo)", NULL },
    { "lineinfo", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &f->line_info, NULL, NULL },
    { "device-debug", 'G', 0, G_OPTION_ARG_NONE, &f->debug, "Device debug information, no optimisation", NULL },
    { "rdc", 0, 0, G_OPTION_ARG_NONE, &f->rdc, "Relocatable device code (-rdc)", NULL },
    { "Xnvrtc", 0, 0, G_OPTION_ARG_STRING_ARRAY, &f->nvrtc_flags, "Pass an option to NVRTC as is (repeatable)", "OPTION" },
    { NULL }
  };

  for (guint i = 0; entries[i].long_name; i++)
    if (entries[i].description)
      {
        g_autofree gchar *text = g_strconcat (prefix, entries[i].description, NULL);
        entries[i].description = g_intern_string (text);
      }
  g_option_group_add_entries (group, entries);
  return group;
}

/* Applies @f to @options, as compile does. */
static gboolean
compile_flags_apply (const CompileFlags  *f,
                     AtomrCompileOptions *options,
                     GError             **error)
{
  if (f->max_registers < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--maxrregcount: needs a positive number, not %d", f->max_registers);
      return FALSE;
    }
  for (guint i = 0; f->kernels && f->kernels[i]; i++)
    atomr_compile_options_add_name_expression (options, f->kernels[i]);
  for (guint i = 0; f->expressions && f->expressions[i]; i++)
    atomr_compile_options_add_name_expression (options, f->expressions[i]);
  if (f->arch)
    atomr_compile_options_set_arch (options, f->arch);
  if (f->std)
    atomr_compile_options_set_std (options, f->std);
  for (guint i = 0; f->defines && f->defines[i]; i++)
    {
      g_auto(GStrv) kv = g_strsplit (f->defines[i], "=", 2);
      atomr_compile_options_add_define (options, kv[0], kv[1]);
    }
  for (guint i = 0; f->includes && f->includes[i]; i++)
    atomr_compile_options_add_include_path (options, f->includes[i]);
  atomr_compile_options_set_lto (options, f->lto);
  atomr_compile_options_set_fast_math (options, f->fast_math);
  atomr_compile_options_set_flush_to_zero (options, f->ftz);
  atomr_compile_options_set_max_registers (options, (guint) f->max_registers);
  atomr_compile_options_set_line_info (options, f->line_info);
  atomr_compile_options_set_debug (options, f->debug);
  atomr_compile_options_set_relocatable (options, f->rdc);
  for (guint i = 0; f->nvrtc_flags && f->nvrtc_flags[i]; i++)
    atomr_compile_options_add_extra_flag (options, f->nvrtc_flags[i]);
  return TRUE;
}

static int
cmd_compile (int argc, char **argv)
{
  g_auto(CompileFlags) flags = { 0 };
  g_autofree gchar *cache_dir = NULL;
  g_autofree gchar *source = NULL;
  g_autofree gchar *program_name = NULL;
  g_autofree gchar *output = NULL;
  gboolean json = FALSE, no_cache = FALSE, want_ptx = FALSE, want_ltoir = FALSE;
  gsize source_len = 0;
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE.cu — compile CUDA C++ through the kernel cache");
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the CUBIN (or, by --ptx / --ltoir or the name's "
      ".ptx / .ltoir ending, the PTX or LTO-IR) to FILE; - for standard output", "FILE" },
    { "ptx", 0, 0, G_OPTION_ARG_NONE, &want_ptx, "With -o: write the PTX", NULL },
    { "ltoir", 0, 0, G_OPTION_ARG_NONE, &want_ltoir, "With -o: write the LTO-IR (implies --lto)", NULL },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "Cache directory (default: $ATOMR_CACHE_DIR or ~/.cache/atomr/kernels)", "DIR" },
    { "no-cache", 0, 0, G_OPTION_ARG_NONE, &no_cache, "Compile without the cache", NULL },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print a JSON object", NULL },
    { NULL }
  };

  normalize_nvcc_spellings (argc, argv);
  g_option_context_set_main_group (context, compile_flags_group (&flags, ""));
  g_option_context_add_main_entries (context, entries, NULL);
  scan_json_flag (argc, argv);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (context, error->message);
  if (argc != 2)
    return usage_error (context, "name exactly one source file");
  if (want_ptx && want_ltoir)
    return usage_error (context, "--ptx and --ltoir: choose one");
  if ((want_ptx || want_ltoir) && output == NULL)
    return usage_error (context, "--ptx and --ltoir name what -o writes: give -o FILE");
  if (flags.max_registers < 0)
    return usage_error (context, "--maxrregcount: needs a positive number");
  if (!g_file_get_contents (argv[1], &source, &source_len, &error))
    return fail (error);
  if (!atomr_nvrtc_check_text (source, source_len, argv[1], &error))
    return fail (error);
  /* The path as given, as nvcc does: NVRTC then looks for the program's
   * quoted includes in its directory (atomr compile k/rel.cu from the
   * parent finds k/'s headers), and its log names the file as typed. */
  program_name = g_strdup (argv[1]);
  if (output && !want_ptx && !want_ltoir)
    {
      want_ptx = g_str_has_suffix (output, ".ptx");
      want_ltoir = g_str_has_suffix (output, ".ltoir");
    }
  if (want_ltoir)
    flags.lto = TRUE;
  if (!compile_flags_apply (&flags, options, &error))
    return usage_error (context, error->message);

  if (!no_cache)
    cache = atomr_kernel_cache_new (cache_dir);
  module = atomr_nvrtc_compile (source, program_name, options, cache, &error);
  if (module == NULL)
    return fail (error);

  if (output)
    {
      const gchar *what = want_ptx ? "PTX" : want_ltoir ? "LTO-IR" : "CUBIN";
      GBytes *artifact = want_ptx ? atomr_module_get_ptx (module)
                       : want_ltoir ? atomr_module_get_ltoir (module) : atomr_module_get_cubin (module);

      if (artifact == NULL)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: no %s was produced%s",
                       argv[1], what, want_ptx ? "" : " (a CUBIN needs --arch sm_NN; use --ptx for PTX)");
          return fail (error);
        }
      if (!write_output (output, artifact, &error))
        return fail (error);
      /* The artifact is the output; the log goes to stderr. */
      if (g_strcmp0 (output, "-") == 0)
        {
          if (*atomr_module_get_log (module))
            g_printerr ("%s", atomr_module_get_log (module));
          return 0;
        }
    }

  {
    AtomrCacheStatus status = atomr_module_get_cache_status (module);
    const gchar *cache_word = status == ATOMR_CACHE_STATUS_MISS ? "miss"
                            : status == ATOMR_CACHE_STATUS_NONE ? "none" : "hit";
    const gchar * const *names = atomr_module_get_kernel_names (module);
    GBytes *ptx = atomr_module_get_ptx (module);
    GBytes *cubin = atomr_module_get_cubin (module);
    GBytes *ltoir = atomr_module_get_ltoir (module);

    if (json)
      {
        g_autoptr(JsonBuilder) b = begin_document ();
        add_string_member (b, "file", argv[1]);
        json_builder_set_member_name (b, "key");
        if (atomr_module_get_key (module))
          json_builder_add_string_value (b, atomr_module_get_key (module));
        else
          json_builder_add_null_value (b);
        json_builder_set_member_name (b, "cache");
        json_builder_add_string_value (b, cache_word);
        json_builder_set_member_name (b, "lowered_names");
        json_builder_begin_object (b);
        for (guint i = 0; names && names[i]; i++)
          {
            json_builder_set_member_name (b, names[i]);
            json_builder_add_string_value (b, atomr_module_get_lowered_name (module, names[i]));
          }
        json_builder_end_object (b);
        json_builder_set_member_name (b, "ptx_bytes");
        json_builder_add_int_value (b, ptx ? g_bytes_get_size (ptx) : 0);
        json_builder_set_member_name (b, "cubin_bytes");
        json_builder_add_int_value (b, cubin ? g_bytes_get_size (cubin) : 0);
        json_builder_set_member_name (b, "ltoir_bytes");
        json_builder_add_int_value (b, ltoir ? g_bytes_get_size (ltoir) : 0);
        json_builder_set_member_name (b, "compile_ms");
        json_builder_add_double_value (b, atomr_module_get_compile_time_ms (module));
        json_builder_set_member_name (b, "arch");
        if (atomr_module_get_arch (module))
          json_builder_add_string_value (b, atomr_module_get_arch (module));
        else
          json_builder_add_null_value (b);
        json_builder_set_member_name (b, "nvrtc_version");
        json_builder_add_string_value (b, atomr_module_get_nvrtc_version (module));
        add_strv_member (b, "flags", atomr_module_get_flags (module));
        add_string_member (b, "log", atomr_module_get_log (module));
        /* Why nothing was stored or recorded (read-only cache, full disk). */
        add_string_member (b, "store_error", cache ? atomr_kernel_cache_get_store_error (cache) : NULL);
        json_builder_end_object (b);
        print_json (b);
      }
    else
      {
        g_print ("%s: %s (cache %s), %" G_GSIZE_FORMAT " bytes PTX, %" G_GSIZE_FORMAT " bytes CUBIN, "
                 "compiled in %.1f ms\n", argv[1], atomr_module_get_key (module) ? atomr_module_get_key (module) : "-",
                 cache_word, ptx ? g_bytes_get_size (ptx) : 0, cubin ? g_bytes_get_size (cubin) : 0,
                 atomr_module_get_compile_time_ms (module));
        for (guint i = 0; names && names[i]; i++)
          g_print ("  %s -> %s\n", names[i], atomr_module_get_lowered_name (module, names[i]));
        if (*atomr_module_get_log (module))
          g_printerr ("%s", atomr_module_get_log (module));
      }
  }
  return 0;
}

/* ------------------------------------------------------------------ */

static gchar *
format_time (GDateTime *t)
{
  return g_date_time_format_iso8601 (t);
}

/* Keys are ASCII; lowered names are ASCII mangled symbols; kernel names
 * come from the user and are made valid. */
static void
entry_to_json (JsonBuilder           *b,
               AtomrKernelCacheEntry *e,
               gboolean               with_payload)
{
  g_autofree gchar *created = format_time (atomr_kernel_cache_entry_get_created (e));
  g_autofree gchar *last_used = format_time (atomr_kernel_cache_entry_get_last_used (e));
  const gchar * const *names = atomr_kernel_cache_entry_get_kernel_names (e);
  const gchar * const *lowered = atomr_kernel_cache_entry_get_lowered_names (e);

  json_builder_begin_object (b);
  add_string_member (b, "key", atomr_kernel_cache_entry_get_key (e));
  add_string_member (b, "path", atomr_kernel_cache_entry_get_path (e));
  add_strv_member (b, "kernel_names", names);
  json_builder_set_member_name (b, "lowered_names");
  json_builder_begin_object (b);
  for (guint i = 0; names[i]; i++)
    {
      g_autofree gchar *name = g_utf8_make_valid (names[i], -1);
      add_string_member (b, name, lowered[i]);
    }
  json_builder_end_object (b);
  add_strv_member (b, "flags", atomr_kernel_cache_entry_get_flags (e));
  add_string_member (b, "arch", atomr_kernel_cache_entry_get_arch (e));
  add_string_member (b, "nvrtc_version", atomr_kernel_cache_entry_get_nvrtc_version (e));
  add_int_member (b, "ptx_bytes", atomr_kernel_cache_entry_get_ptx_size (e));
  add_int_member (b, "cubin_bytes", atomr_kernel_cache_entry_get_cubin_size (e));
  add_int_member (b, "ltoir_bytes", atomr_kernel_cache_entry_get_ltoir_size (e));
  add_int_member (b, "source_bytes", atomr_kernel_cache_entry_get_source_size (e));
  add_int_member (b, "file_bytes", atomr_kernel_cache_entry_get_file_size (e));
  json_builder_set_member_name (b, "compile_ms");
  json_builder_add_double_value (b, atomr_kernel_cache_entry_get_compile_time_ms (e));
  add_string_member (b, "created", created);
  add_string_member (b, "last_used", last_used);
  add_int_member (b, "hit_count", atomr_kernel_cache_entry_get_hit_count (e));
  if (with_payload)
    {
      g_autofree gchar *source = atomr_kernel_cache_entry_load_source (e, NULL);
      g_autofree gchar *log = atomr_kernel_cache_entry_load_log (e, NULL);
      add_string_member (b, "source", source);
      add_string_member (b, "log", log ? log : "");
    }
  json_builder_end_object (b);
}

/* What each kernel of @e uses (the manifest's "resources": registers,
 * shared, stack, spills), or with @analyse computed now through nvJitLink
 * (for @arch, NULL: the entry's own).  NULL with *@why saying why not. */
static JsonNode *
entry_resources (AtomrKernelCacheEntry  *e,
                 gboolean                analyse,
                 const gchar            *arch,
                 gchar                 **why)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree gchar *text = NULL;
  const gchar *manifest = atomr_kernel_cache_entry_get_manifest (e);
  JsonNode *root;

  *why = NULL;
  if (!analyse && manifest && json_parser_load_from_data (parser, manifest, -1, NULL)
      && (root = json_parser_get_root (parser)) && JSON_NODE_HOLDS_OBJECT (root)
      && json_object_has_member (json_node_get_object (root), "resources"))
    return json_node_copy (json_object_get_member (json_node_get_object (root), "resources"));
  if (!analyse)
    {
      *why = g_strdup ("not recorded (an entry for a virtual architecture, or written before 0.2); "
                       "--analyse computes it through nvJitLink");
      return NULL;
    }
  text = atomr_kernel_cache_entry_analyse_resources (e, arch, NULL, &error);
  if (text == NULL || !json_parser_load_from_data (parser, text, -1, &error))
    {
      *why = g_strdup (error ? error->message : "nvJitLink reported nothing");
      return NULL;
    }
  return json_node_copy (json_parser_get_root (parser));
}

static void
print_resources (JsonNode    *res,
                 const gchar *why)
{
  JsonObject *o = res && JSON_NODE_HOLDS_OBJECT (res) ? json_node_get_object (res) : NULL;
  JsonArray *kernels = o && json_object_has_member (o, "kernels") ? json_object_get_array_member (o, "kernels") : NULL;
  JsonArray *functions = o && json_object_has_member (o, "functions") ? json_object_get_array_member (o, "functions") : NULL;

  if (kernels == NULL)
    {
      g_print ("resources:  unknown: %s\n", why ? why : "malformed");
      return;
    }
  g_print ("resources:  (from %s)\n", json_object_get_string_member_with_default (o, "tool", "ptxas"));
  for (guint i = 0; i < json_array_get_length (kernels); i++)
    {
      JsonObject *k = json_array_get_object_element (kernels, i);
      g_print ("  %s: %" G_GINT64_FORMAT " registers, %" G_GINT64_FORMAT " B shared, %" G_GINT64_FORMAT
               " B stack, spills %" G_GINT64_FORMAT " B stored / %" G_GINT64_FORMAT " B loaded, %"
               G_GINT64_FORMAT " barriers\n",
               json_object_get_string_member_with_default (k, "name", "?"),
               json_object_get_int_member_with_default (k, "registers", 0),
               json_object_get_int_member_with_default (k, "shared_bytes", 0),
               json_object_get_int_member_with_default (k, "stack_bytes", 0),
               json_object_get_int_member_with_default (k, "spill_stores", 0),
               json_object_get_int_member_with_default (k, "spill_loads", 0),
               json_object_get_int_member_with_default (k, "barriers", 0));
    }
  for (guint i = 0; functions && i < json_array_get_length (functions); i++)
    {
      JsonObject *f = json_array_get_object_element (functions, i);
      g_print ("  device function %s: %" G_GINT64_FORMAT " B stack, spills %" G_GINT64_FORMAT
               " B stored / %" G_GINT64_FORMAT " B loaded\n",
               json_object_get_string_member_with_default (f, "name", "?"),
               json_object_get_int_member_with_default (f, "stack_bytes", 0),
               json_object_get_int_member_with_default (f, "spill_stores", 0),
               json_object_get_int_member_with_default (f, "spill_loads", 0));
    }
}

/* `cache show KEY --ptx|--cubin|--ltoir|--log|--source [-o FILE]`: the raw
 * artifact on stdout or into FILE. */
static int
show_artifact (AtomrKernelCacheEntry *e,
               const gchar           *what,
               const gchar           *output)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  gconstpointer data;
  gsize len;

  if (g_str_equal (what, "ptx"))
    bytes = atomr_kernel_cache_entry_load_ptx (e, &error);
  else if (g_str_equal (what, "cubin"))
    bytes = atomr_kernel_cache_entry_load_cubin (e, &error);
  else if (g_str_equal (what, "ltoir"))
    bytes = atomr_kernel_cache_entry_load_ltoir (e, &error);
  else
    {
      gchar *text = g_str_equal (what, "log") ? atomr_kernel_cache_entry_load_log (e, &error)
                                              : atomr_kernel_cache_entry_load_source (e, &error);
      if (text)
        bytes = g_bytes_new_take (text, strlen (text));
    }
  if (error)
    return fail (error);
  if (bytes == NULL)
    {
      g_autoptr(GError) none = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                            "%s: entry %s has no %s%s", what,
                                            atomr_kernel_cache_entry_get_key (e), what,
                                            g_str_equal (what, "source")
                                            ? " (sources are stored only with ATOMR_CACHE_STORE_SOURCE=1 "
                                              "or atomr_kernel_cache_set_store_source())" : "");
      return fail (none);
    }
  data = g_bytes_get_data (bytes, &len);
  if (output)
    {
      if (!g_file_set_contents (output, data, len, &error))
        return fail (error);
      if (json_mode)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "key", atomr_kernel_cache_entry_get_key (e));
          add_string_member (b, "artifact", what);
          add_string_member (b, "file", output);
          add_int_member (b, "bytes", len);
          json_builder_end_object (b);
          print_json (b);
        }
      return 0;
    }
  if (json_mode)
    {
      g_autoptr(GError) bad = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "--json: --%s writes raw bytes; name a file with -o", what);
      return fail (bad);
    }
  if (len > 0 && fwrite (data, 1, len, stdout) != len)
    {
      g_printerr ("atomr: writing to stdout failed\n");
      return EXIT_USAGE;
    }
  return 0;
}

static void
report_to_json (JsonBuilder                  *b,
                const AtomrKernelCacheReport *r)
{
  add_int_member (b, "entries", r->n_entries);
  add_int_member (b, "bytes", r->entry_bytes);
  add_int_member (b, "damaged", r->n_damaged);
  add_int_member (b, "damaged_bytes", r->damaged_bytes);
  add_int_member (b, "stale_temp", r->n_stale_temp);
  add_int_member (b, "stale_temp_bytes", r->stale_temp_bytes);
  add_int_member (b, "hits", r->hits);
  add_int_member (b, "misses", r->misses);
  json_builder_set_member_name (b, "writable");
  json_builder_add_boolean_value (b, r->writable);
}

static int
cmd_cache (int argc, char **argv)
{
  g_autofree gchar *cache_dir = NULL;
  g_autofree gchar *max_size_str = NULL;
  g_autofree gchar *output = NULL;
  gboolean json = FALSE, verify = FALSE;
  gboolean want_ptx = FALSE, want_cubin = FALSE, want_ltoir = FALSE, want_log = FALSE, want_source = FALSE;
  gboolean analyse = FALSE;
  g_autofree gchar *analyse_arch = NULL;
  g_auto(CompileFlags) compile_flags = { 0 };
  g_autofree gchar *remote_url = NULL;
  gint remote_timeout = 0;
  g_autoptr(GOptionContext) context =
    g_option_context_new ("list|show KEY|rm KEY|gc|stats|export DEST|import SRC|explain FILE.cu|diff KEY1 KEY2|push|pull [KEY...] — browse and maintain the kernel cache");
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(GError) error = NULL;
  const gchar *verb;
  GOptionEntry entries[] = {
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "Cache directory (default: $ATOMR_CACHE_DIR or ~/.cache/atomr/kernels)", "DIR" },
    { "max-size", 0, 0, G_OPTION_ARG_STRING, &max_size_str, "gc: keep at most this size, such as 20k, 500M, 1G (default: only remove damaged and stale files)", "SIZE" },
    { "verify", 0, 0, G_OPTION_ARG_NONE, &verify, "stats: read every entry whole and check its checksum", NULL },
    { "ptx", 0, 0, G_OPTION_ARG_NONE, &want_ptx, "show: write the PTX", NULL },
    { "cubin", 0, 0, G_OPTION_ARG_NONE, &want_cubin, "show: write the CUBIN", NULL },
    { "ltoir", 0, 0, G_OPTION_ARG_NONE, &want_ltoir, "show: write the LTO-IR", NULL },
    { "log", 0, 0, G_OPTION_ARG_NONE, &want_log, "show: write the compile log", NULL },
    { "source", 0, 0, G_OPTION_ARG_NONE, &want_source, "show: write the source (if stored)", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "show: write the artifact into FILE instead of stdout", "FILE" },
    { "analyse", 0, 0, G_OPTION_ARG_NONE, &analyse, "show: compute the resources per kernel (spills included) through nvJitLink instead of showing those recorded", NULL },
    { "analyse-arch", 0, 0, G_OPTION_ARG_STRING, &analyse_arch, "show: --analyse for this real architecture (sm_XX) instead of the entry's", "ARCH" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { "remote", 0, 0, G_OPTION_ARG_STRING, &remote_url, "push/pull: the remote cache's base URL (default: $ATOMR_CACHE_REMOTE)", "URL" },
    { "timeout", 0, 0, G_OPTION_ARG_INT, &remote_timeout, "push/pull: seconds each request may stall (default 10)", "SECONDS" },
    { NULL }
  };

  /* explain takes every compile option (the same table): its key must be
   * the one compile builds. */
  normalize_nvcc_spellings (argc, argv);
  g_option_context_set_main_group (context, compile_flags_group (&compile_flags, "explain: "));
  g_option_context_add_main_entries (context, entries, NULL);
  scan_json_flag (argc, argv);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return usage_error (context, error->message);
  json_mode = json;
  if (argc < 2)
    return usage_error (context, "name a command: list, show, rm, gc, stats, export, import, explain, diff, push or pull");
  verb = argv[1];
  cache = atomr_kernel_cache_new (cache_dir);

  if (g_str_equal (verb, "list") && argc == 2)
    {
      g_autoptr(GListModel) list = atomr_kernel_cache_list (cache, &error);
      if (list == NULL)
        return fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          json_builder_set_member_name (b, "entries");
          json_builder_begin_array (b);
          for (guint i = 0; i < g_list_model_get_n_items (list); i++)
            {
              g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
              entry_to_json (b, e, FALSE);
            }
          json_builder_end_array (b);
          json_builder_end_object (b);
          print_json (b);
        }
      else
        for (guint i = 0; i < g_list_model_get_n_items (list); i++)
          {
            g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
            g_autofree gchar *names = g_strjoinv (", ", (gchar **) atomr_kernel_cache_entry_get_kernel_names (e));
            g_autofree gchar *used = format_time (atomr_kernel_cache_entry_get_last_used (e));
            g_autofree gchar *size = g_format_size (atomr_kernel_cache_entry_get_file_size (e));
            g_print ("%s  %-8s %10s  %4" G_GUINT64_FORMAT " hits  %s  %s\n",
                     atomr_kernel_cache_entry_get_key (e),
                     atomr_kernel_cache_entry_get_arch (e) ? atomr_kernel_cache_entry_get_arch (e) : "default",
                     size, atomr_kernel_cache_entry_get_hit_count (e), used, names);
          }
      return 0;
    }
  if ((g_str_equal (verb, "show") || g_str_equal (verb, "rm")) && argc == 3)
    {
      g_autoptr(AtomrKernelCacheEntry) e = atomr_kernel_cache_lookup (cache, argv[2], &error);
      g_autoptr(JsonNode) resources = NULL;
      g_autofree gchar *resources_why = NULL;
      guint n_wanted = !!want_ptx + !!want_cubin + !!want_ltoir + !!want_log + !!want_source;

      if (e == NULL)
        return fail (error);
      if (g_str_equal (verb, "rm"))
        {
          if (!atomr_kernel_cache_remove (cache, atomr_kernel_cache_entry_get_key (e), &error))
            return fail (error);
          if (json)
            {
              g_autoptr(JsonBuilder) b = begin_document ();
              add_string_member (b, "removed", atomr_kernel_cache_entry_get_key (e));
              json_builder_end_object (b);
              print_json (b);
            }
          else
            g_print ("removed %s\n", atomr_kernel_cache_entry_get_key (e));
          return 0;
        }
      if (n_wanted > 1)
        return usage_error (context, "show: name one of --ptx, --cubin, --ltoir, --log, --source");
      if (n_wanted == 1)
        return show_artifact (e, want_ptx ? "ptx" : want_cubin ? "cubin" : want_ltoir ? "ltoir"
                                 : want_log ? "log" : "source", output);
      resources = entry_resources (e, analyse || analyse_arch, analyse_arch, &resources_why);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          json_builder_set_member_name (b, "entry");
          entry_to_json (b, e, TRUE);
          /* null with resources_unknown saying why */
          json_builder_set_member_name (b, "resources");
          if (resources)
            json_builder_add_value (b, json_node_copy (resources));
          else
            json_builder_add_null_value (b);
          if (resources_why)
            add_string_member (b, "resources_unknown", resources_why);
          json_builder_end_object (b);
          print_json (b);
        }
      else
        {
          g_autofree gchar *flags = g_strjoinv (" ", (gchar **) atomr_kernel_cache_entry_get_flags (e));
          g_autofree gchar *created = format_time (atomr_kernel_cache_entry_get_created (e));
          g_autofree gchar *used = format_time (atomr_kernel_cache_entry_get_last_used (e));
          g_autofree gchar *source = atomr_kernel_cache_entry_load_source (e, NULL);
          const gchar * const *names = atomr_kernel_cache_entry_get_kernel_names (e);

          g_print ("key:        %s\nfile:       %s\narch:       %s\nNVRTC:      %s\nflags:      %s\n",
                   atomr_kernel_cache_entry_get_key (e), atomr_kernel_cache_entry_get_path (e),
                   atomr_kernel_cache_entry_get_arch (e) ? atomr_kernel_cache_entry_get_arch (e) : "default",
                   atomr_kernel_cache_entry_get_nvrtc_version (e), flags);
          for (guint i = 0; names[i]; i++)
            g_print ("kernel:     %s -> %s\n", names[i], atomr_kernel_cache_entry_get_lowered_names (e)[i]);
          g_print ("sizes:      PTX %" G_GUINT64_FORMAT ", CUBIN %" G_GUINT64_FORMAT ", LTO-IR %" G_GUINT64_FORMAT
                   ", file %" G_GUINT64_FORMAT "\ncompile:    %.1f ms\ncreated:    %s\nlast used:  %s\nhits:       %"
                   G_GUINT64_FORMAT "\n",
                   atomr_kernel_cache_entry_get_ptx_size (e), atomr_kernel_cache_entry_get_cubin_size (e),
                   atomr_kernel_cache_entry_get_ltoir_size (e), atomr_kernel_cache_entry_get_file_size (e),
                   atomr_kernel_cache_entry_get_compile_time_ms (e), created, used,
                   atomr_kernel_cache_entry_get_hit_count (e));
          print_resources (resources, resources_why);
          if (source)
            g_print ("\n%s", source);
        }
      return 0;
    }
  if (g_str_equal (verb, "gc") && argc == 2)
    {
      guint64 max_size = G_MAXUINT64;
      AtomrKernelCacheReport report;

      if (max_size_str && !atomr_parse_size (max_size_str, &max_size, &error))
        return usage_error (context, error->message);
      if (!atomr_kernel_cache_collect (cache, max_size, &report, &error))
        return fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          add_int_member (b, "removed", report.n_removed);
          add_int_member (b, "bytes_freed", report.bytes_freed);
          report_to_json (b, &report);
          json_builder_end_object (b);
          print_json (b);
        }
      else
        {
          g_autofree gchar *freed = g_format_size (report.bytes_freed);
          g_autofree gchar *left = g_format_size (report.entry_bytes);
          g_print ("removed %u entries, %u damaged and %u stale temporary files; freed %s "
                   "(%" G_GUINT64_FORMAT " bytes); %u entries left, %s\n",
                   report.n_removed, report.n_damaged, report.n_stale_temp, freed,
                   report.bytes_freed, report.n_entries, left);
        }
      return 0;
    }
  if (g_str_equal (verb, "stats") && argc == 2)
    {
      AtomrKernelCacheReport report;
      g_autoptr(GError) write_error = NULL;

      if (!atomr_kernel_cache_get_report (cache, verify, &report, &error))
        return fail (error);
      if (!report.writable)
        atomr_kernel_cache_check_writable (cache, &write_error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          report_to_json (b, &report);
          add_string_member (b, "store_error", write_error ? write_error->message : NULL);
          json_builder_set_member_name (b, "verified");
          json_builder_add_boolean_value (b, verify);
          json_builder_end_object (b);
          print_json (b);
        }
      else
        {
          g_autofree gchar *size = g_format_size (report.entry_bytes);
          g_print ("directory: %s\nentries:   %u\nbytes:     %" G_GUINT64_FORMAT " (%s)\nhits:      %"
                   G_GUINT64_FORMAT "\nmisses:    %" G_GUINT64_FORMAT "\ndamaged:   %u (%" G_GUINT64_FORMAT
                   " bytes%s)\nstale tmp: %u (%" G_GUINT64_FORMAT " bytes)\nwritable:  %s%s%s\n",
                   atomr_kernel_cache_get_directory (cache), report.n_entries, report.entry_bytes, size,
                   report.hits, report.misses, report.n_damaged, report.damaged_bytes,
                   verify ? "" : "; --verify checks payloads", report.n_stale_temp, report.stale_temp_bytes,
                   report.writable ? "yes" : "no", write_error ? ": " : "",
                   write_error ? write_error->message : "");
        }
      return 0;
    }
  if (g_str_equal (verb, "diff") && argc == 4)
    {
      g_autoptr(AtomrKernelCacheEntry) a = atomr_kernel_cache_lookup (cache, argv[2], &error);
      g_autoptr(AtomrKernelCacheEntry) b = NULL;
      g_auto(GStrv) diffs = NULL;

      if (a == NULL)
        return fail (error);
      b = atomr_kernel_cache_lookup (cache, argv[3], &error);
      if (b == NULL)
        return fail (error);
      diffs = atomr_kernel_cache_entry_diff (a, b);
      if (json)
        {
          g_autoptr(JsonBuilder) bl = begin_document ();
          add_string_member (bl, "a", atomr_kernel_cache_entry_get_key (a));
          add_string_member (bl, "b", atomr_kernel_cache_entry_get_key (b));
          add_strv_member (bl, "differences", (const gchar * const *) diffs);
          json_builder_end_object (bl);
          print_json (bl);
        }
      else if (diffs[0] == NULL)
        g_print ("same inputs\n");
      else
        for (guint i = 0; diffs[i]; i++)
          g_print ("%s\n", diffs[i]);
      return 0;
    }
  if (g_str_equal (verb, "explain") && argc == 3)
    {
      g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
      g_autofree gchar *source = NULL;
      g_autofree gchar *key = NULL;
      g_autofree gchar *nearest = NULL;
      g_auto(GStrv) reasons = NULL;
      AtomrCacheStatus status;
      const gchar *word;

      if (!g_file_get_contents (argv[2], &source, NULL, &error))
        return fail (error);
      if (!compile_flags_apply (&compile_flags, options, &error))
        return usage_error (context, error->message);
      /* The program name as atomr compile gives it: the path as typed. */
      status = atomr_kernel_cache_explain_program (cache, source, argv[2], options, &key, &nearest, &reasons, &error);
      if (status == ATOMR_CACHE_STATUS_NONE && error)
        return fail (error);
      word = status == ATOMR_CACHE_STATUS_MISS ? "miss" : status == ATOMR_CACHE_STATUS_NONE ? "not-cacheable" : "hit";
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "file", argv[2]);
          add_string_member (b, "cache", word);
          add_string_member (b, "key", key);
          add_string_member (b, "nearest", nearest);
          add_strv_member (b, "reasons", (const gchar * const *) reasons);
          json_builder_end_object (b);
          print_json (b);
        }
      else
        {
          g_print ("%s: %s, key %s\n", argv[2], word, key ? key : "-");
          if (nearest)
            g_print ("nearest entry: %s\n", nearest);
          for (guint i = 0; reasons && reasons[i]; i++)
            g_print ("  %s\n", reasons[i]);
        }
      return 0;
    }
  if (g_str_equal (verb, "push") || g_str_equal (verb, "pull"))
    {
#ifdef ATOMR_HAVE_SOUP
      gboolean push = g_str_equal (verb, "push");
      const gchar *url = remote_url ? remote_url : g_getenv ("ATOMR_CACHE_REMOTE");
      g_autoptr(AtomrRemoteCache) remote = NULL;
      guint n = 0, other = 0;
      gboolean ok;

      if (url == NULL || *url == '\0')
        return usage_error (context, "push/pull: give --remote URL or set ATOMR_CACHE_REMOTE");
      if (push && argc != 2)
        return usage_error (context, "push takes no arguments");
      if (remote_timeout < 0)
        return usage_error (context, "--timeout: needs a positive number of seconds");
      remote = atomr_remote_cache_new (url, &error);
      if (remote == NULL)
        return fail (error);
      if (remote_timeout > 0)
        atomr_remote_cache_set_timeout (remote, (guint) remote_timeout);
      ok = push ? atomr_remote_cache_push (remote, cache, &n, &other, NULL, &error)
                : atomr_remote_cache_pull (remote, cache, argc > 2 ? (const gchar * const *) argv + 2 : NULL,
                                           &n, &other, NULL, &error);
      if (!ok)
        return fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          add_string_member (b, "remote", atomr_remote_cache_get_url (remote));
          add_int_member (b, push ? "pushed" : "pulled", n);
          add_int_member (b, push ? "present" : "rejected", other);
          json_builder_end_object (b);
          print_json (b);
        }
      else if (push)
        g_print ("pushed %u entries to %s, %u already there\n", n, atomr_remote_cache_get_url (remote), other);
      else
        g_print ("pulled %u entries from %s, rejected or missing %u\n", n, atomr_remote_cache_get_url (remote), other);
      return 0;
#else
      g_printerr ("atomr: cache %s: this atomr was built without libsoup (meson -Dserver)\n", verb);
      return 1;
#endif
    }
  if ((g_str_equal (verb, "export") || g_str_equal (verb, "import")) && argc == 3)
    {
      gboolean export = g_str_equal (verb, "export");
      guint n = 0, rejected = 0;
      gboolean ok = export ? atomr_kernel_cache_export (cache, argv[2], &n, &error)
                           : atomr_kernel_cache_import (cache, argv[2], &n, &rejected, &error);

      if (!ok)
        return fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = begin_document ();
          add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          add_string_member (b, export ? "destination" : "source", argv[2]);
          add_int_member (b, export ? "exported" : "imported", n);
          if (!export)
            add_int_member (b, "rejected", rejected);
          json_builder_end_object (b);
          print_json (b);
        }
      else if (export)
        g_print ("exported %u entries to %s\n", n, argv[2]);
      else
        g_print ("imported %u entries from %s, rejected %u\n", n, argv[2], rejected);
      return 0;
    }
  return usage_error (context, "unknown cache command or wrong number of arguments");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  if (argc >= 2 && g_str_equal (argv[1], "compile"))
    return cmd_compile (argc - 1, argv + 1);
  if (argc >= 2 && g_str_equal (argv[1], "cache"))
    return cmd_cache (argc - 1, argv + 1);
  if (argc >= 2 && (g_str_equal (argv[1], "--version") || g_str_equal (argv[1], "version")))
    {
      g_print ("atomr %s\n", PACKAGE_VERSION);
      return 0;
    }
  g_printerr ("Usage:\n"
              "  atomr compile FILE.cu [--kernel NAME]... [--name-expression EXPR]... [--arch sm_NN]\n"
              "                [--std c++17] [-D NAME[=V]]... [-I DIR]... [--lto] [--fast-math]\n"
              "                [--maxrregcount N] [--ftz] [--line-info] [-G] [-rdc] [-Xnvrtc OPTION]...\n"
              "                [-o FILE [--ptx|--ltoir]] [--cache-dir DIR] [--json]\n"
              "  atomr cache list|show KEY [--ptx|--cubin|--ltoir|--log|--source|--analyse [--analyse-arch ARCH]] [-o FILE]|rm KEY|\n"
              "              gc [--max-size SIZE]|stats [--verify]|export DIR|FILE.tar|import DIR|FILE.tar\n"
              "              |explain FILE.cu [compile options]|diff KEY1 KEY2|push|pull [KEY...] [--remote URL]\n"
              "              [--cache-dir DIR] [--json]\n"
              "Run 'atomr compile --help' or 'atomr cache --help' for details.\n");
  return EXIT_USAGE;
}
