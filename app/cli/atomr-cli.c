/* atomr-cli.c — the atomr command-line tool
 *
 *   atomr compile FILE.cu [--kernel NAME]... [--name-expression EXPR]...
 *                 [--arch sm_NN] [--std c++17] [-D NAME[=V]]... [-I DIR]...
 *                 [--lto] [--fast-math] [--maxrregcount N] [--ftz]
 *                 [--line-info] [-G] [-rdc] [-Xnvrtc OPTION]...
 *                 [-o FILE [--ptx|--ltoir]] [--cache-dir DIR] [--json]
 *                 (atomr-cli-compile.c)
 *   atomr cache list|show KEY [--ptx|--cubin|--ltoir|--log|--source]
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

#include "atomr-cli-private.h"

/* Set by the subcommands once --json is seen: errors are JSON then. */
gboolean atomr_cli_json_mode;

/* JSON strings must be UTF-8; paths, logs and sources need not be. */
void
atomr_cli_add_string_value (JsonBuilder *b,
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

void
atomr_cli_add_string_member (JsonBuilder *b,
                   const gchar *name,
                   const gchar *s)
{
  json_builder_set_member_name (b, name);
  atomr_cli_add_string_value (b, s);
}

void
atomr_cli_add_int_member (JsonBuilder *b,
                const gchar *name,
                gint64       v)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, v);
}

/* Starts the top-level object every --json output is. */
JsonBuilder *
atomr_cli_begin_document (void)
{
  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  atomr_cli_add_int_member (b, "version", ATOMR_CLI_JSON_VERSION);
  return b;
}

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
    atomr_cli_add_string_value (b, v[i]);
  json_builder_end_array (b);
}

/* Reports @error on stderr, and with --json as the JSON document on
 * stdout.  A compile error's "log" is NVRTC's log (the message's lines
 * after the first); null otherwise.  Returns the exit status. */
int
atomr_cli_fail (const GError *error)
{
  gboolean compile = error->domain == ATOMR_ERROR && error->code == ATOMR_ERROR_COMPILE;

  g_printerr ("%s%s\n", compile ? "" : "atomr: ", error->message);
  if (atomr_cli_json_mode)
    {
      g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
      const gchar *nl = strchr (error->message, '\n');

      json_builder_set_member_name (b, "error");
      json_builder_begin_object (b);
      atomr_cli_add_string_member (b, "domain", g_quark_to_string (error->domain));
      atomr_cli_add_int_member (b, "code", error->code);
      atomr_cli_add_string_member (b, "message", error->message);
      atomr_cli_add_string_member (b, "log", compile ? (nl ? nl + 1 : "") : NULL);
      json_builder_end_object (b);
      json_builder_end_object (b);
      atomr_cli_print_json (b);
    }
  return compile ? EXIT_COMPILE : EXIT_USAGE;
}

int
atomr_cli_usage_error (GOptionContext *context,
             const gchar    *message)
{
  g_autofree gchar *help = g_option_context_get_help (context, TRUE, NULL);
  g_printerr ("atomr: %s\n\n%s", message, help);
  if (atomr_cli_json_mode)
    {
      g_autoptr(GError) error = g_error_new_literal (G_OPTION_ERROR, G_OPTION_ERROR_FAILED, message);
      g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();

      json_builder_set_member_name (b, "error");
      json_builder_begin_object (b);
      atomr_cli_add_string_member (b, "domain", g_quark_to_string (error->domain));
      atomr_cli_add_int_member (b, "code", error->code);
      atomr_cli_add_string_member (b, "message", error->message);
      atomr_cli_add_string_member (b, "log", NULL);
      json_builder_end_object (b);
      json_builder_end_object (b);
      atomr_cli_print_json (b);
    }
  return EXIT_USAGE;
}

/* --json is known before parsing (errors while parsing are JSON too). */
void
atomr_cli_scan_json_flag (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (g_str_equal (argv[i], "--"))
        break;
      if (g_str_equal (argv[i], "--json") || g_str_equal (argv[i], "-j"))
        atomr_cli_json_mode = TRUE;
    }
}

/* ------------------------------------------------------------------ */

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
  atomr_cli_add_string_member (b, "key", atomr_kernel_cache_entry_get_key (e));
  atomr_cli_add_string_member (b, "path", atomr_kernel_cache_entry_get_path (e));
  atomr_cli_add_strv_member (b, "kernel_names", names);
  json_builder_set_member_name (b, "lowered_names");
  json_builder_begin_object (b);
  for (guint i = 0; names[i]; i++)
    {
      g_autofree gchar *name = g_utf8_make_valid (names[i], -1);
      atomr_cli_add_string_member (b, name, lowered[i]);
    }
  json_builder_end_object (b);
  atomr_cli_add_strv_member (b, "flags", atomr_kernel_cache_entry_get_flags (e));
  atomr_cli_add_string_member (b, "arch", atomr_kernel_cache_entry_get_arch (e));
  atomr_cli_add_string_member (b, "nvrtc_version", atomr_kernel_cache_entry_get_nvrtc_version (e));
  atomr_cli_add_int_member (b, "ptx_bytes", atomr_kernel_cache_entry_get_ptx_size (e));
  atomr_cli_add_int_member (b, "cubin_bytes", atomr_kernel_cache_entry_get_cubin_size (e));
  atomr_cli_add_int_member (b, "ltoir_bytes", atomr_kernel_cache_entry_get_ltoir_size (e));
  atomr_cli_add_int_member (b, "source_bytes", atomr_kernel_cache_entry_get_source_size (e));
  atomr_cli_add_int_member (b, "file_bytes", atomr_kernel_cache_entry_get_file_size (e));
  json_builder_set_member_name (b, "compile_ms");
  json_builder_add_double_value (b, atomr_kernel_cache_entry_get_compile_time_ms (e));
  atomr_cli_add_string_member (b, "created", created);
  atomr_cli_add_string_member (b, "last_used", last_used);
  atomr_cli_add_int_member (b, "hit_count", atomr_kernel_cache_entry_get_hit_count (e));
  if (with_payload)
    {
      g_autofree gchar *source = atomr_kernel_cache_entry_load_source (e, NULL);
      g_autofree gchar *log = atomr_kernel_cache_entry_load_log (e, NULL);
      atomr_cli_add_string_member (b, "source", source);
      atomr_cli_add_string_member (b, "log", log ? log : "");
    }
  json_builder_end_object (b);
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
    return atomr_cli_fail (error);
  if (bytes == NULL)
    {
      g_autoptr(GError) none = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                            "%s: entry %s has no %s%s", what,
                                            atomr_kernel_cache_entry_get_key (e), what,
                                            g_str_equal (what, "source")
                                            ? " (sources are stored only with ATOMR_CACHE_STORE_SOURCE=1 "
                                              "or atomr_kernel_cache_set_store_source())" : "");
      return atomr_cli_fail (none);
    }
  data = g_bytes_get_data (bytes, &len);
  if (output)
    {
      if (!g_file_set_contents (output, data, len, &error))
        return atomr_cli_fail (error);
      if (atomr_cli_json_mode)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "key", atomr_kernel_cache_entry_get_key (e));
          atomr_cli_add_string_member (b, "artifact", what);
          atomr_cli_add_string_member (b, "file", output);
          atomr_cli_add_int_member (b, "bytes", len);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
        }
      return 0;
    }
  if (atomr_cli_json_mode)
    {
      g_autoptr(GError) bad = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "--json: --%s writes raw bytes; name a file with -o", what);
      return atomr_cli_fail (bad);
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
  atomr_cli_add_int_member (b, "entries", r->n_entries);
  atomr_cli_add_int_member (b, "bytes", r->entry_bytes);
  atomr_cli_add_int_member (b, "damaged", r->n_damaged);
  atomr_cli_add_int_member (b, "damaged_bytes", r->damaged_bytes);
  atomr_cli_add_int_member (b, "stale_temp", r->n_stale_temp);
  atomr_cli_add_int_member (b, "stale_temp_bytes", r->stale_temp_bytes);
  atomr_cli_add_int_member (b, "hits", r->hits);
  atomr_cli_add_int_member (b, "misses", r->misses);
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
  g_auto(GStrv) kernels = NULL;
  g_auto(GStrv) expressions = NULL;
  g_auto(GStrv) defines = NULL;
  g_auto(GStrv) includes = NULL;
  g_autofree gchar *arch = NULL;
  g_autofree gchar *std = NULL;
  gboolean lto = FALSE, fast_math = FALSE;
  g_autoptr(GOptionContext) context =
    g_option_context_new ("list|show KEY|rm KEY|gc|stats|export DEST|import SRC|explain FILE.cu|diff KEY1 KEY2 — browse and maintain the kernel cache");
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
    { "json", 'j', 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    { "kernel", 'k', 0, G_OPTION_ARG_STRING_ARRAY, &kernels, "explain: as for compile", "NAME" },
    { "name-expression", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &expressions, "explain: as for compile", "EXPR" },
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch, "explain: as for compile", "sm_NN" },
    { "std", 0, 0, G_OPTION_ARG_STRING, &std, "explain: as for compile", "c++NN" },
    { "define", 'D', 0, G_OPTION_ARG_STRING_ARRAY, &defines, "explain: as for compile", "NAME[=V]" },
    { "include", 'I', 0, G_OPTION_ARG_FILENAME_ARRAY, &includes, "explain: as for compile", "DIR" },
    { "lto", 0, 0, G_OPTION_ARG_NONE, &lto, "explain: as for compile", NULL },
    { "fast-math", 0, 0, G_OPTION_ARG_NONE, &fast_math, "explain: as for compile", NULL },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  atomr_cli_scan_json_flag (argc, argv);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    return atomr_cli_usage_error (context, error->message);
  atomr_cli_json_mode = json;
  if (argc < 2)
    return atomr_cli_usage_error (context, "name a command: list, show, rm, gc, stats, export, import, explain or diff");
  verb = argv[1];
  cache = atomr_kernel_cache_new (cache_dir);

  if (g_str_equal (verb, "list") && argc == 2)
    {
      g_autoptr(GListModel) list = atomr_kernel_cache_list (cache, &error);
      if (list == NULL)
        return atomr_cli_fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          json_builder_set_member_name (b, "entries");
          json_builder_begin_array (b);
          for (guint i = 0; i < g_list_model_get_n_items (list); i++)
            {
              g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (list, i);
              entry_to_json (b, e, FALSE);
            }
          json_builder_end_array (b);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
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
      guint n_wanted = !!want_ptx + !!want_cubin + !!want_ltoir + !!want_log + !!want_source;

      if (e == NULL)
        return atomr_cli_fail (error);
      if (g_str_equal (verb, "rm"))
        {
          if (!atomr_kernel_cache_remove (cache, atomr_kernel_cache_entry_get_key (e), &error))
            return atomr_cli_fail (error);
          if (json)
            {
              g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
              atomr_cli_add_string_member (b, "removed", atomr_kernel_cache_entry_get_key (e));
              json_builder_end_object (b);
              atomr_cli_print_json (b);
            }
          else
            g_print ("removed %s\n", atomr_kernel_cache_entry_get_key (e));
          return 0;
        }
      if (n_wanted > 1)
        return atomr_cli_usage_error (context, "show: name one of --ptx, --cubin, --ltoir, --log, --source");
      if (n_wanted == 1)
        return show_artifact (e, want_ptx ? "ptx" : want_cubin ? "cubin" : want_ltoir ? "ltoir"
                                 : want_log ? "log" : "source", output);
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          json_builder_set_member_name (b, "entry");
          entry_to_json (b, e, TRUE);
          json_builder_end_object (b);
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
      AtomrKernelCacheReport report;

      if (max_size_str && !atomr_parse_size (max_size_str, &max_size, &error))
        return atomr_cli_usage_error (context, error->message);
      if (!atomr_kernel_cache_collect (cache, max_size, &report, &error))
        return atomr_cli_fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          atomr_cli_add_int_member (b, "removed", report.n_removed);
          atomr_cli_add_int_member (b, "bytes_freed", report.bytes_freed);
          report_to_json (b, &report);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
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
        return atomr_cli_fail (error);
      if (!report.writable)
        atomr_kernel_cache_check_writable (cache, &write_error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          report_to_json (b, &report);
          atomr_cli_add_string_member (b, "store_error", write_error ? write_error->message : NULL);
          json_builder_set_member_name (b, "verified");
          json_builder_add_boolean_value (b, verify);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
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
        return atomr_cli_fail (error);
      b = atomr_kernel_cache_lookup (cache, argv[3], &error);
      if (b == NULL)
        return atomr_cli_fail (error);
      diffs = atomr_kernel_cache_entry_diff (a, b);
      if (json)
        {
          g_autoptr(JsonBuilder) bl = atomr_cli_begin_document ();
          atomr_cli_add_string_member (bl, "a", atomr_kernel_cache_entry_get_key (a));
          atomr_cli_add_string_member (bl, "b", atomr_kernel_cache_entry_get_key (b));
          atomr_cli_add_strv_member (bl, "differences", (const gchar * const *) diffs);
          json_builder_end_object (bl);
          atomr_cli_print_json (bl);
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
        return atomr_cli_fail (error);
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
      status = atomr_kernel_cache_explain (cache, source, argv[2], options, &key, &nearest, &reasons, &error);
      if (status == ATOMR_CACHE_STATUS_NONE && error)
        return atomr_cli_fail (error);
      word = status == ATOMR_CACHE_STATUS_MISS ? "miss" : status == ATOMR_CACHE_STATUS_NONE ? "not-cacheable" : "hit";
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "file", argv[2]);
          atomr_cli_add_string_member (b, "cache", word);
          atomr_cli_add_string_member (b, "key", key);
          atomr_cli_add_string_member (b, "nearest", nearest);
          atomr_cli_add_strv_member (b, "reasons", (const gchar * const *) reasons);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
        }
      else
        {
          g_print ("%s: %s, key %s\n", argv[2], word, key);
          if (nearest)
            g_print ("nearest entry: %s\n", nearest);
          for (guint i = 0; reasons && reasons[i]; i++)
            g_print ("  %s\n", reasons[i]);
        }
      return 0;
    }
  if ((g_str_equal (verb, "export") || g_str_equal (verb, "import")) && argc == 3)
    {
      gboolean export = g_str_equal (verb, "export");
      guint n = 0, rejected = 0;
      gboolean ok = export ? atomr_kernel_cache_export (cache, argv[2], &n, &error)
                           : atomr_kernel_cache_import (cache, argv[2], &n, &rejected, &error);

      if (!ok)
        return atomr_cli_fail (error);
      if (json)
        {
          g_autoptr(JsonBuilder) b = atomr_cli_begin_document ();
          atomr_cli_add_string_member (b, "directory", atomr_kernel_cache_get_directory (cache));
          atomr_cli_add_string_member (b, export ? "destination" : "source", argv[2]);
          atomr_cli_add_int_member (b, export ? "exported" : "imported", n);
          if (!export)
            atomr_cli_add_int_member (b, "rejected", rejected);
          json_builder_end_object (b);
          atomr_cli_print_json (b);
        }
      else if (export)
        g_print ("exported %u entries to %s\n", n, argv[2]);
      else
        g_print ("imported %u entries from %s, rejected %u\n", n, argv[2], rejected);
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
              "                [--maxrregcount N] [--ftz] [--line-info] [-G] [-rdc] [-Xnvrtc OPTION]...\n"
              "                [-o FILE [--ptx|--ltoir]] [--cache-dir DIR] [--json]\n"
              "  atomr cache list|show KEY [--ptx|--cubin|--ltoir|--log|--source] [-o FILE]|rm KEY|\n"
              "              gc [--max-size SIZE]|stats [--verify]|export DIR|FILE.tar|import DIR|FILE.tar\n"
              "              |explain FILE.cu [compile options]|diff KEY1 KEY2 [--cache-dir DIR] [--json]\n"
              "Run 'atomr compile --help' or 'atomr cache --help' for details.\n");
  return EXIT_USAGE;
}
