/* atomr-cli-compile.c — "atomr compile"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include <atomr.h>

#include "atomr-cli-private.h"

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
              gchar *longer = g_strconcat ("-", argv[i], NULL);
              /* argv belongs to main(); the strings live until exit. */
              argv[i] = longer;
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

int
atomr_cli_compile (int    argc,
                   char **argv)
{
  g_auto(GStrv) kernels = NULL;
  g_auto(GStrv) expressions = NULL;
  g_auto(GStrv) defines = NULL;
  g_auto(GStrv) includes = NULL;
  g_autofree gchar *arch = NULL;
  g_autofree gchar *std = NULL;
  g_autofree gchar *cache_dir = NULL;
  g_autofree gchar *source = NULL;
  g_autofree gchar *program_name = NULL;
  g_auto(GStrv) nvrtc_flags = NULL;
  g_autofree gchar *output = NULL;
  gboolean lto = FALSE, fast_math = FALSE, json = FALSE, no_cache = FALSE;
  gboolean ftz = FALSE, line_info = FALSE, debug = FALSE, rdc = FALSE, want_ptx = FALSE, want_ltoir = FALSE;
  gint max_registers = 0;
  gsize source_len = 0;
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE.cu — compile CUDA C++ through the kernel cache");
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "kernel", 'k', 0, G_OPTION_ARG_STRING_ARRAY, &kernels, "A kernel to compile (repeatable)", "NAME" },
    { "name-expression", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &expressions, "A name expression such as 'k<float, 256>' (repeatable)", "EXPR" },
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch, "Target architecture: sm_NN or compute_NN as NVRTC supports them, with an a or f suffix, or native", "sm_NN" },
    { "std", 0, 0, G_OPTION_ARG_STRING, &std, "C++ dialect (c++14, c++17, c++20)", "c++NN" },
    { "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &defines, "Define a macro (repeatable)", "NAME[=V]" },
    { "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &includes, "Add an include path (repeatable)", "DIR" },
    { "lto", 0, 0, G_OPTION_ARG_NONE, &lto, "Link-time optimisation through nvJitLink", NULL },
    { "fast-math", 0, 0, G_OPTION_ARG_NONE, &fast_math, "Fast, less precise math", NULL },
    { "maxrregcount", 0, 0, G_OPTION_ARG_INT, &max_registers, "At most N registers per thread (also with --lto)", "N" },
    { "ftz", 0, 0, G_OPTION_ARG_NONE, &ftz, "Flush single-precision denormals to zero", NULL },
    { "line-info", 0, 0, G_OPTION_ARG_NONE, &line_info, "Line information for profilers (-lineinfo)", NULL },
    { "lineinfo", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &line_info, NULL, NULL },
    { "device-debug", 'G', 0, G_OPTION_ARG_NONE, &debug, "Device debug information, no optimisation", NULL },
    { "rdc", 0, 0, G_OPTION_ARG_NONE, &rdc, "Relocatable device code (-rdc)", NULL },
    { "Xnvrtc", 0, 0, G_OPTION_ARG_STRING_ARRAY, &nvrtc_flags, "Pass an option to NVRTC as is (repeatable)", "OPTION" },
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
  atomr_cli_scan_json_flag (argc, argv);
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return atomr_cli_usage_error (context, error->message);
  if (argc != 2)
    return atomr_cli_usage_error (context, "name exactly one source file");
  if (want_ptx && want_ltoir)
    return atomr_cli_usage_error (context, "--ptx and --ltoir: choose one");
  if ((want_ptx || want_ltoir) && output == NULL)
    return atomr_cli_usage_error (context, "--ptx and --ltoir name what -o writes: give -o FILE");
  if (max_registers < 0)
    return atomr_cli_usage_error (context, "--maxrregcount: needs a positive number");
  if (!g_file_get_contents (argv[1], &source, &source_len, &error))
    return atomr_cli_fail (error);
  if (!atomr_nvrtc_check_text (source, source_len, argv[1], &error))
    return atomr_cli_fail (error);
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
    lto = TRUE;

  for (guint i = 0; kernels && kernels[i]; i++)
    atomr_compile_options_add_name_expression (options, kernels[i]);
  for (guint i = 0; expressions && expressions[i]; i++)
    atomr_compile_options_add_name_expression (options, expressions[i]);
  if (arch)
    atomr_compile_options_set_arch (options, arch);
  if (std)
    atomr_compile_options_set_std (options, std);
  for (guint i = 0; defines && defines[i]; i++)
    {
      g_auto(GStrv) kv = g_strsplit (defines[i], "=", 2);
      atomr_compile_options_add_define (options, kv[0], kv[1]);
    }
  for (guint i = 0; includes && includes[i]; i++)
    atomr_compile_options_add_include_path (options, includes[i]);
  atomr_compile_options_set_lto (options, lto);
  atomr_compile_options_set_fast_math (options, fast_math);
  atomr_compile_options_set_flush_to_zero (options, ftz);
  atomr_compile_options_set_max_registers (options, (guint) max_registers);
  atomr_compile_options_set_line_info (options, line_info);
  atomr_compile_options_set_debug (options, debug);
  atomr_compile_options_set_relocatable (options, rdc);
  for (guint i = 0; nvrtc_flags && nvrtc_flags[i]; i++)
    atomr_compile_options_add_extra_flag (options, nvrtc_flags[i]);

  if (!no_cache)
    cache = atomr_kernel_cache_new (cache_dir);
  module = atomr_nvrtc_compile (source, program_name, options, cache, &error);
  if (module == NULL)
    return atomr_cli_fail (error);

  if (output)
    {
      const gchar *what = want_ptx ? "PTX" : want_ltoir ? "LTO-IR" : "CUBIN";
      GBytes *artifact = want_ptx ? atomr_module_get_ptx (module)
                       : want_ltoir ? atomr_module_get_ltoir (module) : atomr_module_get_cubin (module);

      if (artifact == NULL)
        {
          g_autoptr(GError) none = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                                "%s: no %s was produced%s", argv[1], what,
                                                want_ptx ? "" : " (a CUBIN needs --arch sm_NN; use --ptx for PTX)");
          return atomr_cli_fail (none);
        }
      if (!write_output (output, artifact, &error))
        return atomr_cli_fail (error);
      /* The artifact is the output; the summary goes to stderr. */
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
        g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
        atomr_cli_add_string_member (b, "file", argv[1]);
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
        atomr_cli_add_strv_member (b, "flags", atomr_module_get_flags (module));
        atomr_cli_add_string_member (b, "log", atomr_module_get_log (module));
        /* Why nothing was stored or recorded (read-only cache, full disk). */
        atomr_cli_add_string_member (b, "store_error", cache ? atomr_kernel_cache_get_store_error (cache) : NULL);
        json_builder_end_object (b);
        atomr_cli_print_json (b);
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
