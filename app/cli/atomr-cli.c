/* atomr-cli.c — the atomr command-line tool
 *
 *   atomr compile FILE.cu [--kernel NAME]... [--name-expression EXPR]...
 *                 [--arch sm_NN] [--std c++17] [-D NAME[=V]]... [-I DIR]...
 *                 [--lto] [--fast-math] [--maxrregcount N] [--ftz]
 *                 [--line-info] [-G] [-rdc] [-Xnvrtc OPTION]...
 *                 [-o FILE [--ptx|--ltoir]] [--cache-dir DIR] [--json]
 *   atomr cache list|show KEY|rm KEY|gc [--max-size BYTES]|stats
 *                 [--cache-dir DIR] [--json]
 *
 * Exit status: 0 success, 1 compile error (log on stderr), 2 usage or
 * other errors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <locale.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include <atomr.h>

#include "atomr-cli-private.h"


void
atomr_cli_print_json (JsonBuilder *b)
{
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = json_builder_get_root (b);
  g_autofree gchar *text = NULL;

  json_generator_set_pretty (gen, TRUE);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  g_print ("%s\n", text);
}

void
atomr_cli_add_strv_member (JsonBuilder         *b,
                 const gchar         *name,
                 const gchar * const *v)
{
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; v && v[i]; i++)
    json_builder_add_string_value (b, v[i]);
  json_builder_end_array (b);
}

int
atomr_cli_usage_error (GOptionContext *context,
             const gchar    *message)
{
  g_autofree gchar *help = g_option_context_get_help (context, TRUE, NULL);
  g_printerr ("atomr: %s\n\n%s", message, help);
  return EXIT_USAGE;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */

static gchar *
format_time (GDateTime *t)
{
  return g_date_time_format_iso8601 (t);
}

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
  json_builder_set_member_name (b, "key");
  json_builder_add_string_value (b, atomr_kernel_cache_entry_get_key (e));
  json_builder_set_member_name (b, "path");
  json_builder_add_string_value (b, atomr_kernel_cache_entry_get_path (e));
  atomr_cli_add_strv_member (b, "kernel_names", names);
  json_builder_set_member_name (b, "lowered_names");
  json_builder_begin_object (b);
  for (guint i = 0; names[i]; i++)
    {
      json_builder_set_member_name (b, names[i]);
      json_builder_add_string_value (b, lowered[i]);
    }
  json_builder_end_object (b);
  atomr_cli_add_strv_member (b, "flags", atomr_kernel_cache_entry_get_flags (e));
  json_builder_set_member_name (b, "arch");
  if (atomr_kernel_cache_entry_get_arch (e))
    json_builder_add_string_value (b, atomr_kernel_cache_entry_get_arch (e));
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "nvrtc_version");
  json_builder_add_string_value (b, atomr_kernel_cache_entry_get_nvrtc_version (e));
  json_builder_set_member_name (b, "ptx_bytes");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_ptx_size (e));
  json_builder_set_member_name (b, "cubin_bytes");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_cubin_size (e));
  json_builder_set_member_name (b, "ltoir_bytes");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_ltoir_size (e));
  json_builder_set_member_name (b, "source_bytes");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_source_size (e));
  json_builder_set_member_name (b, "file_bytes");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_file_size (e));
  json_builder_set_member_name (b, "compile_ms");
  json_builder_add_double_value (b, atomr_kernel_cache_entry_get_compile_time_ms (e));
  json_builder_set_member_name (b, "created");
  json_builder_add_string_value (b, created);
  json_builder_set_member_name (b, "last_used");
  json_builder_add_string_value (b, last_used);
  json_builder_set_member_name (b, "hit_count");
  json_builder_add_int_value (b, atomr_kernel_cache_entry_get_hit_count (e));
  if (with_payload)
    {
      g_autofree gchar *source = atomr_kernel_cache_entry_load_source (e, NULL);
      g_autofree gchar *log = atomr_kernel_cache_entry_load_log (e, NULL);
      json_builder_set_member_name (b, "source");
      if (source)
        json_builder_add_string_value (b, source);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "log");
      json_builder_add_string_value (b, log ? log : "");
    }
  json_builder_end_object (b);
}

static int
cmd_cache (int argc, char **argv)
{
  g_autofree gchar *cache_dir = NULL;
  g_autofree gchar *max_size_str = NULL;
  gboolean json = FALSE;
  g_autoptr(GOptionContext) context =
    g_option_context_new ("list|show KEY|rm KEY|gc|stats — browse and maintain the kernel cache");
  g_autoptr(AtomrKernelCache) cache = NULL;
  g_autoptr(GError) error = NULL;
  const gchar *verb;
  GOptionEntry entries[] = {
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "Cache directory (default: $ATOMR_CACHE_DIR or ~/.cache/atomr/kernels)", "DIR" },
    { "max-size", 0, 0, G_OPTION_ARG_STRING, &max_size_str, "gc: keep at most this many bytes (default: only remove damaged files)", "BYTES" },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return atomr_cli_usage_error (context, error->message);
  if (argc < 2)
    return atomr_cli_usage_error (context, "name a command: list, show, rm, gc or stats");
  verb = argv[1];
  cache = atomr_kernel_cache_new (cache_dir);

  if (g_str_equal (verb, "list") && argc == 2)
    {
      g_autoptr(GListModel) list = atomr_kernel_cache_list (cache, &error);
      if (list == NULL)
        {
          g_printerr ("atomr: %s\n", error->message);
          return EXIT_USAGE;
        }
      if (json)
        {
          g_autoptr(JsonBuilder) b = json_builder_new ();
          json_builder_begin_array (b);
          for (guint i = 0; i < g_list_model_get_n_items (list); i++)
            {
              g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
              entry_to_json (b, e, FALSE);
            }
          json_builder_end_array (b);
          atomr_cli_print_json (b);
        }
      else
        for (guint i = 0; i < g_list_model_get_n_items (list); i++)
          {
            g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
            g_autofree gchar *names = g_strjoinv (", ", (gchar **) atomr_kernel_cache_entry_get_kernel_names (e));
            g_autofree gchar *used = format_time (atomr_kernel_cache_entry_get_last_used (e));
            g_print ("%s  %-8s %8" G_GUINT64_FORMAT " B  %4" G_GUINT64_FORMAT " hits  %s  %s\n",
                     atomr_kernel_cache_entry_get_key (e),
                     atomr_kernel_cache_entry_get_arch (e) ? atomr_kernel_cache_entry_get_arch (e) : "default",
                     atomr_kernel_cache_entry_get_file_size (e), atomr_kernel_cache_entry_get_hit_count (e),
                     used, names);
          }
      return 0;
    }
  if ((g_str_equal (verb, "show") || g_str_equal (verb, "rm")) && argc == 3)
    {
      g_autoptr(AtomrKernelCacheEntry) e = atomr_kernel_cache_lookup (cache, argv[2], &error);
      if (e == NULL)
        {
          g_printerr ("atomr: %s\n", error->message);
          return EXIT_USAGE;
        }
      if (g_str_equal (verb, "rm"))
        {
          if (!atomr_kernel_cache_remove (cache, atomr_kernel_cache_entry_get_key (e), &error))
            {
              g_printerr ("atomr: %s\n", error->message);
              return EXIT_USAGE;
            }
          if (json)
            {
              g_autoptr(JsonBuilder) b = json_builder_new ();
              json_builder_begin_object (b);
              json_builder_set_member_name (b, "removed");
              json_builder_add_string_value (b, atomr_kernel_cache_entry_get_key (e));
              json_builder_end_object (b);
              atomr_cli_print_json (b);
            }
          else
            g_print ("removed %s\n", atomr_kernel_cache_entry_get_key (e));
          return 0;
        }
      if (json)
        {
          g_autoptr(JsonBuilder) b = json_builder_new ();
          entry_to_json (b, e, TRUE);
          atomr_cli_print_json (b);
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
          if (source)
            g_print ("\n%s", source);
        }
      return 0;
    }
  if (g_str_equal (verb, "gc") && argc == 2)
    {
      guint64 max_size = G_MAXUINT64;
      guint removed = 0;
      guint64 freed = 0;

      if (max_size_str && !g_ascii_string_to_unsigned (max_size_str, 10, 0, G_MAXUINT64, &max_size, &error))
        return atomr_cli_usage_error (context, error->message);
      if (!atomr_kernel_cache_gc (cache, max_size, &removed, &freed, &error))
        {
          g_printerr ("atomr: %s\n", error->message);
          return EXIT_USAGE;
        }
      if (json)
        {
          g_autoptr(JsonBuilder) b = json_builder_new ();
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "removed");
          json_builder_add_int_value (b, removed);
          json_builder_set_member_name (b, "bytes_freed");
          json_builder_add_int_value (b, freed);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
        }
      else
        g_print ("removed %u entries, %" G_GUINT64_FORMAT " bytes\n", removed, freed);
      return 0;
    }
  if (g_str_equal (verb, "stats") && argc == 2)
    {
      guint n = 0;
      guint64 bytes = 0, hits = 0, misses = 0;

      if (!atomr_kernel_cache_get_stats (cache, &n, &bytes, &hits, &misses, &error))
        {
          g_printerr ("atomr: %s\n", error->message);
          return EXIT_USAGE;
        }
      if (json)
        {
          g_autoptr(JsonBuilder) b = json_builder_new ();
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "directory");
          json_builder_add_string_value (b, atomr_kernel_cache_get_directory (cache));
          json_builder_set_member_name (b, "entries");
          json_builder_add_int_value (b, n);
          json_builder_set_member_name (b, "bytes");
          json_builder_add_int_value (b, bytes);
          json_builder_set_member_name (b, "hits");
          json_builder_add_int_value (b, hits);
          json_builder_set_member_name (b, "misses");
          json_builder_add_int_value (b, misses);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
        }
      else
        g_print ("directory: %s\nentries:   %u\nbytes:     %" G_GUINT64_FORMAT "\nhits:      %"
                 G_GUINT64_FORMAT "\nmisses:    %" G_GUINT64_FORMAT "\n",
                 atomr_kernel_cache_get_directory (cache), n, bytes, hits, misses);
      return 0;
    }
  return atomr_cli_usage_error (context, "unknown cache command or wrong number of arguments");
}

int
main (int argc, char **argv)
{
  setlocale (LC_ALL, "");
  if (argc >= 2 && g_str_equal (argv[1], "compile"))
    return atomr_cli_compile (argc - 1, argv + 1);
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
              "                [--cache-dir DIR] [--json]\n"
              "  atomr cache list|show KEY|rm KEY|gc [--max-size BYTES]|stats [--cache-dir DIR] [--json]\n"
              "Run 'atomr compile --help' or 'atomr cache --help' for details.\n");
  return EXIT_USAGE;
}
