/* atomr-cli-compile.c — "atomr compile"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include <atomr.h>

#include "atomr-cli-private.h"

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
  gboolean lto = FALSE, fast_math = FALSE, json = FALSE, no_cache = FALSE;
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE.cu — compile CUDA C++ through the kernel cache");
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "kernel", 'k', 0, G_OPTION_ARG_STRING_ARRAY, &kernels, "A kernel to compile (repeatable)", "NAME" },
    { "name-expression", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &expressions, "A name expression such as 'k<float, 256>' (repeatable)", "EXPR" },
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch, "Target architecture (sm_75 … sm_120, sm_90a, native)", "sm_NN" },
    { "std", 0, 0, G_OPTION_ARG_STRING, &std, "C++ dialect (c++14, c++17, c++20)", "c++NN" },
    { "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &defines, "Define a macro (repeatable)", "NAME[=V]" },
    { "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &includes, "Add an include path (repeatable)", "DIR" },
    { "lto", 0, 0, G_OPTION_ARG_NONE, &lto, "Link-time optimisation through nvJitLink", NULL },
    { "fast-math", 0, 0, G_OPTION_ARG_NONE, &fast_math, "Fast, less precise math", NULL },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "Cache directory (default: $ATOMR_CACHE_DIR or ~/.cache/atomr/kernels)", "DIR" },
    { "no-cache", 0, 0, G_OPTION_ARG_NONE, &no_cache, "Compile without the cache", NULL },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print a JSON object", NULL },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return atomr_cli_usage_error (context, error->message);
  if (argc != 2)
    return atomr_cli_usage_error (context, "name exactly one source file");
  if (!g_file_get_contents (argv[1], &source, NULL, &error))
    {
      g_printerr ("atomr: %s\n", error->message);
      return EXIT_USAGE;
    }
  program_name = g_path_get_basename (argv[1]);

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

  if (!no_cache)
    cache = atomr_kernel_cache_new (cache_dir);
  module = atomr_nvrtc_compile (source, program_name, options, cache, &error);
  if (module == NULL)
    {
      g_printerr ("%s\n", error->message);
      return g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_COMPILE) ? EXIT_COMPILE : EXIT_USAGE;
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
        g_autoptr(JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        json_builder_set_member_name (b, "file");
        json_builder_add_string_value (b, argv[1]);
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
        json_builder_set_member_name (b, "log");
        json_builder_add_string_value (b, atomr_module_get_log (module));
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
