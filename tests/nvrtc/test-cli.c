/* test-cli.c — the atomr command-line tool, as scripts use it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "nvrtc-test-sources.h"

static const gchar *cli;
static gchar *workdir;

static gint
run_cli (const gchar * const *args,
         gchar              **out,
         gchar              **err)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  gint status = 0;

  g_ptr_array_add (argv, (gpointer) cli);
  for (guint i = 0; args[i]; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &status, &error));
  g_assert_no_error (error);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return -1;
}

static JsonNode *
parse (const gchar *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static gchar *
write_source (const gchar *name, const gchar *text)
{
  gchar *path = g_build_filename (workdir, name, NULL);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
  return path;
}

static void
test_compile_json (void)
{
  g_autofree gchar *src = write_source ("scale.cu", SCALE_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-compile", NULL);
  const gchar *args[] = { "compile", src, "--name-expression", SCALE_FLOAT_256, "-e", SCALE_DOUBLE_128,
                          "--arch", "sm_90", "--std", "c++17", "-D", "EXTRA=1", "-D", "FLAG",
                          "-I", workdir, "--fast-math", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL;
  g_autoptr(JsonNode) j1 = NULL;
  g_autoptr(JsonNode) j2 = NULL;
  JsonObject *o1, *o2, *lowered;
  JsonArray *flags;

  g_assert_cmpint (run_cli (args, &out1, &err1), ==, 0);
  j1 = parse (out1);
  o1 = json_node_get_object (j1);
  g_assert_cmpstr (json_object_get_string_member (o1, "cache"), ==, "miss");
  g_assert_cmpuint (strlen (json_object_get_string_member (o1, "key")), ==, 64);
  lowered = json_object_get_object_member (o1, "lowered_names");
  g_assert_cmpstr (json_object_get_string_member (lowered, SCALE_FLOAT_256), ==, SCALE_FLOAT_256_LOWERED);
  g_assert_cmpstr (json_object_get_string_member (lowered, SCALE_DOUBLE_128), ==, SCALE_DOUBLE_128_LOWERED);
  g_assert_cmpint (json_object_get_int_member (o1, "cubin_bytes"), >, 0);
  g_assert_true (json_object_has_member (o1, "ptx_bytes"));
  g_assert_cmpfloat (json_object_get_double_member (o1, "compile_ms"), >, 0);
  g_assert_true (json_object_has_member (o1, "log"));
  flags = json_object_get_array_member (o1, "flags");
  g_assert_cmpstr (json_array_get_string_element (flags, 0), ==, "--gpu-architecture=sm_90");
  g_assert_cmpstr (json_array_get_string_element (flags, 1), ==, "--std=c++17");
  g_assert_cmpstr (json_array_get_string_element (flags, 2), ==, "--use_fast_math");

  /* A second process: a hit with the same key. */
  g_assert_cmpint (run_cli (args, &out2, &err2), ==, 0);
  j2 = parse (out2);
  o2 = json_node_get_object (j2);
  g_assert_cmpstr (json_object_get_string_member (o2, "cache"), ==, "hit");
  g_assert_cmpstr (json_object_get_string_member (o2, "key"), ==, json_object_get_string_member (o1, "key"));
  g_assert_cmpint (json_object_get_int_member (o2, "cubin_bytes"), ==, json_object_get_int_member (o1, "cubin_bytes"));
}

static void
test_compile_error (void)
{
  g_autofree gchar *src = write_source ("broken.cu", BROKEN_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-error", NULL);
  const gchar *args[] = { "compile", src, "--kernel", "broken", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *missing[] = { "compile", "/nonexistent/file.cu", NULL };
  const gchar *bad_arch[] = { "compile", src, "--arch", "sm_1", NULL };
  g_autofree gchar *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL, *out3 = NULL, *err3 = NULL;

  g_assert_cmpint (run_cli (args, &out, &err), ==, 1);
  g_assert_nonnull (strstr (err, "broken.cu(3)"));
  g_assert_nonnull (strstr (err, "undeclared_variable"));
  {
    /* --json: the error is a JSON document on stdout too. */
    g_autoptr(JsonNode) j = parse (out);
    JsonObject *e = json_object_get_object_member (json_node_get_object (j), "error");
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (j), "version"), ==, 1);
    g_assert_cmpstr (json_object_get_string_member (e, "domain"), ==, "atomr-error-quark");
    g_assert_cmpint (json_object_get_int_member (e, "code"), ==, 6 /* ATOMR_ERROR_COMPILE */);
    g_assert_nonnull (strstr (json_object_get_string_member (e, "message"), "broken.cu"));
    g_assert_nonnull (strstr (json_object_get_string_member (e, "log"), "undeclared_variable"));
  }
  g_assert_cmpint (run_cli (missing, &out2, &err2), ==, 2);
  g_assert_nonnull (strstr (err2, "/nonexistent/file.cu"));
  g_assert_cmpint (run_cli (bad_arch, &out3, &err3), ==, 2);
  g_assert_nonnull (strstr (err3, "sm_1"));
}

static void
test_cache_commands (void)
{
  g_autofree gchar *src = write_source ("saxpy.cu", SAXPY_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-commands", NULL);
  const gchar *compile_a[] = { "compile", src, "--kernel", "saxpy", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *compile_b[] = { "compile", src, "--kernel", "saxpy", "--arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *list[] = { "cache", "list", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *list_text[] = { "cache", "list", "--cache-dir", cache_dir, NULL };
  const gchar *stats[] = { "cache", "stats", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  g_autoptr(JsonNode) a = NULL;
  g_autoptr(JsonNode) l = NULL;
  g_autoptr(JsonNode) s = NULL;
  g_autofree gchar *key = NULL;
  JsonArray *entries;

  g_assert_cmpint (run_cli (compile_a, &out, &err), ==, 0);
  a = parse (out);
  key = g_strdup (json_object_get_string_member (json_node_get_object (a), "key"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (compile_b, &out, &err), ==, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (compile_a, &out, &err), ==, 0);   /* a hit */
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (list, &out, &err), ==, 0);
  l = parse (out);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (l), "version"), ==, 1);
  entries = json_object_get_array_member (json_node_get_object (l), "entries");
  g_assert_cmpuint (json_array_get_length (entries), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      JsonObject *e = json_array_get_object_element (entries, i);
      g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (e, "kernel_names"), 0), ==, "saxpy");
      g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (e, "lowered_names"), "saxpy"), ==, "saxpy");
      g_assert_true (json_object_has_member (e, "created"));
      g_assert_true (json_object_has_member (e, "nvrtc_version"));
      if (g_str_equal (json_object_get_string_member (e, "key"), key))
        g_assert_cmpint (json_object_get_int_member (e, "hit_count"), ==, 1);
    }
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (list_text, &out, &err), ==, 0);
  g_assert_nonnull (strstr (out, key));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (stats, &out, &err), ==, 0);
  s = parse (out);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (s), "entries"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (s), "hits"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (s), "misses"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (s), "bytes"), >, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  {
    g_autofree gchar *prefix = g_strndup (key, 10);
    const gchar *show[] = { "cache", "show", prefix, "--cache-dir", cache_dir, "--json", NULL };
    const gchar *show_text[] = { "cache", "show", key, "--cache-dir", cache_dir, NULL };
    const gchar *rm[] = { "cache", "rm", key, "--cache-dir", cache_dir, NULL };
    const gchar *rm_again[] = { "cache", "rm", key, "--cache-dir", cache_dir, NULL };
    const gchar *gc[] = { "cache", "gc", "--max-size", "0", "--cache-dir", cache_dir, "--json", NULL };
    const gchar *gc_bad[] = { "cache", "gc", "--max-size", "lots", "--cache-dir", cache_dir, NULL };
    g_autoptr(JsonNode) sh = NULL;
    g_autoptr(JsonNode) g = NULL;

    g_assert_cmpint (run_cli (show, &out, &err), ==, 0);
    sh = parse (out);
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (json_node_get_object (sh), "entry"), "key"), ==, key);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (show_text, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "saxpy -> saxpy"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (rm, &out, &err), ==, 0);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (rm_again, &out, &err), ==, 2);
    g_assert_nonnull (strstr (err, key));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (gc_bad, &out, &err), ==, 2);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (gc, &out, &err), ==, 0);
    g = parse (out);
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (g), "removed"), ==, 1);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  g_assert_cmpint (run_cli (list, &out, &err), ==, 0);
  g_clear_pointer (&l, json_node_unref);
  l = parse (out);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (l), "entries")), ==, 0);
}

static JsonObject *
show_json (const gchar * const *args,
           JsonNode           **keep)
{
  g_autofree gchar *out = NULL, *err = NULL;

  g_assert_cmpint (run_cli (args, &out, &err), ==, 0);
  *keep = parse (out);
  return json_node_get_object (*keep);
}

/* `cache show` says what each kernel uses (registers, shared, stack,
 * spills) as recorded at compile time for a real architecture; for a PTX
 * entry it says why it is unknown, and --analyse-arch computes it through
 * nvJitLink. */
static void
test_cache_show_resources (void)
{
  g_autofree gchar *src = write_source ("saxpy-res.cu", SAXPY_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-resources", NULL);
  const gchar *compile_real[] = { "compile", src, "--kernel", "saxpy", "--arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *compile_ptx[] = { "compile", src, "--kernel", "saxpy", "--arch", "compute_80", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out = NULL, *err = NULL, *real = NULL, *ptx = NULL;
  g_autoptr(JsonNode) a = NULL, b = NULL, c = NULL, d = NULL;
  JsonObject *res, *k;

  g_assert_cmpint (run_cli (compile_real, &out, &err), ==, 0);
  a = parse (out);
  real = g_strdup (json_object_get_string_member (json_node_get_object (a), "key"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (compile_ptx, &out, &err), ==, 0);
  g_clear_pointer (&a, json_node_unref);
  a = parse (out);
  ptx = g_strdup (json_object_get_string_member (json_node_get_object (a), "key"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  {
    const gchar *show[] = { "cache", "show", real, "--cache-dir", cache_dir, "--json", NULL };
    const gchar *show_text[] = { "cache", "show", real, "--cache-dir", cache_dir, NULL };

    res = json_object_get_object_member (show_json (show, &b), "resources");
    g_assert_nonnull (res);
    g_assert_cmpstr (json_object_get_string_member (res, "tool"), ==, "ptxas");
    k = json_array_get_object_element (json_object_get_array_member (res, "kernels"), 0);
    g_assert_cmpstr (json_object_get_string_member (k, "name"), ==, "saxpy");
    g_assert_cmpstr (json_object_get_string_member (k, "arch"), ==, "sm_80");
    g_assert_cmpint (json_object_get_int_member (k, "registers"), >, 0);
    g_assert_cmpint (json_object_get_int_member (k, "spill_stores"), ==, 0);
    g_assert_cmpint (run_cli (show_text, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "resources:  (from ptxas)"));
    g_assert_nonnull (strstr (out, "  saxpy: "));
    g_assert_nonnull (strstr (out, " B stored / 0 B loaded"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  {
    const gchar *show[] = { "cache", "show", ptx, "--cache-dir", cache_dir, "--json", NULL };
    const gchar *analyse[] = { "cache", "show", ptx, "--analyse-arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
    const gchar *analyse_virtual[] = { "cache", "show", ptx, "--analyse", "--cache-dir", cache_dir, "--json", NULL };
    JsonObject *o = show_json (show, &c);

    g_assert_true (json_object_get_null_member (o, "resources"));
    g_assert_nonnull (strstr (json_object_get_string_member (o, "resources_unknown"), "--analyse"));
    o = show_json (analyse_virtual, &d);
    g_assert_true (json_object_get_null_member (o, "resources"));
    g_assert_nonnull (strstr (json_object_get_string_member (o, "resources_unknown"), "compute_80"));
    g_clear_pointer (&d, json_node_unref);
    o = show_json (analyse, &d);
    if (json_object_get_null_member (o, "resources"))
      g_test_message ("no nvJitLink? %s", json_object_get_string_member (o, "resources_unknown"));
    else
      {
        res = json_object_get_object_member (o, "resources");
        g_assert_cmpstr (json_object_get_string_member (res, "tool"), ==, "nvjitlink");
        k = json_array_get_object_element (json_object_get_array_member (res, "kernels"), 0);
        g_assert_cmpstr (json_object_get_string_member (k, "name"), ==, "saxpy");
        g_assert_cmpint (json_object_get_int_member (k, "registers"), >, 0);
      }
  }
}

/* Every --json output parses (json-glib rejects invalid UTF-8), has a
 * version, and errors are {"error": {...}}; sizes take units; artifacts
 * come out raw. */
/* `cache show KEY --log` gives the stored compile log (here an NVRTC
 * warning), and a warm `compile` replays it on stderr. */
static void
test_cache_show_log (void)
{
  g_autofree gchar *src = write_source ("warn.cu", "extern \"C\" __global__ void warn_me () { int unused_var; }\n");
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-log", NULL);
  const gchar *compile[] = { "compile", src, "--arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  g_autofree gchar *key = NULL;
  g_autoptr(JsonNode) j = NULL;

  g_assert_cmpint (run_cli (compile, &out, &err), ==, 0);
  j = parse (out);
  key = g_strdup (json_object_get_string_member (json_node_get_object (j), "key"));
  g_assert_nonnull (strstr (json_object_get_string_member (json_node_get_object (j), "log"), "unused_var"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    const gchar *show_log[] = { "cache", "show", key, "--log", "--cache-dir", cache_dir, NULL };
    g_assert_cmpint (run_cli (show_log, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, "warning #177-D"));
    g_assert_nonnull (strstr (out, "unused_var"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  /* The second compile is a disk hit (a new process) and still has it. */
  g_assert_cmpint (run_cli (compile, &out, &err), ==, 0);
  j = parse (out);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (j), "cache"), ==, "hit");
  g_assert_nonnull (strstr (json_object_get_string_member (json_node_get_object (j), "log"), "unused_var"));
}

static void
test_cache_tools_json (void)
{
  g_autofree gchar *src = write_source ("saxpy-tools.cu", SAXPY_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-tools", NULL);
  /* A directory name that is not UTF-8 ends up in "directory" and "path". */
  g_autofree gchar *latin1_dir = g_build_filename (workdir, "caf\xe9", NULL);
  const gchar *compile[] = { "compile", src, "--kernel", "saxpy", "--arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *compile_latin1[] = { "compile", src, "--kernel", "saxpy", "--cache-dir", latin1_dir, "--json", NULL };
  const gchar *list_latin1[] = { "cache", "list", "--cache-dir", latin1_dir, "--json", NULL };
  const gchar *bad_option[] = { "cache", "stats", "--no-such-option", "--json", NULL };
  const gchar *bad_key[] = { "cache", "show", "zz", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *bad_size[] = { "cache", "gc", "--max-size", "1Q", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *stats[] = { "cache", "stats", "--verify", "--cache-dir", cache_dir, "--json", NULL };
  const gchar *gc_units[] = { "cache", "gc", "--max-size", "1G", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  g_autofree gchar *key = NULL;
  g_autofree gchar *ptx_file = g_build_filename (workdir, "out.ptx", NULL);
  g_autofree gchar *junk = g_build_filename (cache_dir, "1234.akc", NULL);
  g_autoptr(JsonNode) j = NULL;
  JsonObject *o;

  g_assert_cmpint (run_cli (compile, &out, &err), ==, 0);
  j = parse (out);
  key = g_strdup (json_object_get_string_member (json_node_get_object (j), "key"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (compile_latin1, &out, &err), ==, 0);
  j = parse (out);
  g_assert_true (json_object_get_null_member (json_node_get_object (j), "store_error"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  {
    /* A cache that cannot be written: the compile works and says why. */
    g_autofree gchar *blocker = g_build_filename (workdir, "a-file", NULL);
    g_autofree gchar *below = g_build_filename (blocker, "cache", NULL);
    const gchar *compile_blocked[] = { "compile", src, "--kernel", "saxpy", "--cache-dir", below, "--json", NULL };

    g_assert_true (g_file_set_contents (blocker, "x", 1, NULL));
    g_assert_cmpint (run_cli (compile_blocked, &out, &err), ==, 0);
    j = parse (out);
    g_assert_nonnull (strstr (json_object_get_string_member (json_node_get_object (j), "store_error"), "cannot create"));
    g_assert_nonnull (strstr (err, "kernel cache:"));
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
  }
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (list_latin1, &out, &err), ==, 0);
  j = parse (out);
  g_assert_true (g_str_has_suffix (json_object_get_string_member (json_node_get_object (j), "directory"), "caf\xef\xbf\xbd"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* Errors, JSON on stdout with a non-zero exit. */
  {
    const gchar * const *cases[] = { bad_option, bad_key, bad_size };
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        g_assert_cmpint (run_cli (cases[i], &out, &err), ==, 2);
        j = parse (out);
        o = json_object_get_object_member (json_node_get_object (j), "error");
        g_assert_nonnull (o);
        g_assert_cmpint (json_object_get_int_member (json_node_get_object (j), "version"), ==, 1);
        g_assert_true (json_object_has_member (o, "domain"));
        g_assert_true (json_object_has_member (o, "code"));
        g_assert_true (json_object_has_member (o, "log"));
        g_assert_cmpstr (json_object_get_string_member (o, "message"), !=, "");
        if (i == 2)
          g_assert_nonnull (strstr (json_object_get_string_member (o, "message"), "1Q"));
        g_clear_pointer (&j, json_node_unref);
        g_clear_pointer (&out, g_free);
        g_clear_pointer (&err, g_free);
      }
  }

  /* Artifacts: raw PTX on stdout and into a file. */
  {
    const gchar *show_ptx[] = { "cache", "show", key, "--ptx", "--cache-dir", cache_dir, NULL };
    const gchar *show_ptx_file[] = { "cache", "show", key, "--ptx", "-o", ptx_file, "--cache-dir", cache_dir, NULL };
    const gchar *show_source[] = { "cache", "show", key, "--source", "--cache-dir", cache_dir, NULL };
    const gchar *show_two[] = { "cache", "show", key, "--ptx", "--cubin", "--cache-dir", cache_dir, NULL };
    g_autofree gchar *file_text = NULL;

    g_assert_cmpint (run_cli (show_ptx, &out, &err), ==, 0);
    g_assert_nonnull (strstr (out, ".entry saxpy"));
    g_assert_cmpint (run_cli (show_ptx_file, NULL, NULL), ==, 0);
    g_assert_true (g_file_get_contents (ptx_file, &file_text, NULL, NULL));
    g_assert_cmpstr (file_text, ==, out);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    /* Sources are not stored by default: a clear error. */
    g_assert_cmpint (run_cli (show_source, &out, &err), ==, 2);
    g_assert_nonnull (strstr (err, "ATOMR_CACHE_STORE_SOURCE"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (show_two, &out, &err), ==, 2);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }

  /* stats and gc report damage. */
  g_assert_true (g_file_set_contents (junk, "junk", 4, NULL));
  g_assert_cmpint (run_cli (stats, &out, &err), ==, 0);
  j = parse (out);
  o = json_node_get_object (j);
  g_assert_cmpint (json_object_get_int_member (o, "entries"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (o, "damaged"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (o, "damaged_bytes"), ==, 4);
  g_assert_true (json_object_get_boolean_member (o, "writable"));
  g_assert_true (json_object_get_null_member (o, "store_error"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli (gc_units, &out, &err), ==, 0);
  j = parse (out);
  o = json_node_get_object (j);
  g_assert_cmpint (json_object_get_int_member (o, "removed"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (o, "damaged"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (o, "bytes_freed"), ==, 4);
  g_assert_cmpint (json_object_get_int_member (o, "entries"), ==, 1);
  g_assert_false (g_file_test (junk, G_FILE_TEST_EXISTS));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* explain and diff */
  {
    const gchar *explain_hit[] = { "cache", "explain", src, "--kernel", "saxpy", "--arch", "sm_80", "--cache-dir", cache_dir, "--json", NULL };
    const gchar *explain_miss[] = { "cache", "explain", src, "--kernel", "saxpy", "--arch", "sm_90", "--cache-dir", cache_dir, "--json", NULL };
    const gchar *diff[] = { "cache", "diff", key, key, "--cache-dir", cache_dir, "--json", NULL };
    JsonArray *reasons;

    g_assert_cmpint (run_cli (explain_hit, &out, &err), ==, 0);
    j = parse (out);
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (j), "cache"), ==, "hit");
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (j), "key"), ==, key);
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (explain_miss, &out, &err), ==, 0);
    j = parse (out);
    o = json_node_get_object (j);
    g_assert_cmpstr (json_object_get_string_member (o, "cache"), ==, "miss");
    g_assert_cmpstr (json_object_get_string_member (o, "nearest"), ==, key);
    reasons = json_object_get_array_member (o, "reasons");
    g_assert_cmpuint (json_array_get_length (reasons), >, 0);
    {
      g_autofree gchar *text = json_to_string (json_object_get_member (o, "reasons"), FALSE);
      g_assert_nonnull (strstr (text, "sm_90"));
    }
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (diff, &out, &err), ==, 0);
    j = parse (out);
    g_assert_cmpuint (json_array_get_length (json_object_get_array_member (json_node_get_object (j), "differences")), ==, 0);
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }

  /* export / import through a tar bundle */
  {
    g_autofree gchar *tar = g_build_filename (workdir, "bundle.tar", NULL);
    g_autofree gchar *other = g_build_filename (workdir, "cache-imported", NULL);
    const gchar *export[] = { "cache", "export", tar, "--cache-dir", cache_dir, "--json", NULL };
    const gchar *import[] = { "cache", "import", tar, "--cache-dir", other, "--json", NULL };
    const gchar *import_missing[] = { "cache", "import", "/nonexistent.tar", "--cache-dir", other, "--json", NULL };

    g_assert_cmpint (run_cli (export, &out, &err), ==, 0);
    j = parse (out);
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (j), "exported"), ==, 1);
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (import, &out, &err), ==, 0);
    j = parse (out);
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (j), "imported"), ==, 1);
    g_assert_cmpint (json_object_get_int_member (json_node_get_object (j), "rejected"), ==, 0);
    g_clear_pointer (&j, json_node_unref);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
    g_assert_cmpint (run_cli (import_missing, &out, &err), ==, 2);
    j = parse (out);
    g_assert_nonnull (json_object_get_object_member (json_node_get_object (j), "error"));
  }
}

static void
test_usage (void)
{
  const gchar *none[] = { NULL };
  const gchar *bad[] = { "cache", "explode", NULL };
  g_autofree gchar *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;

  g_assert_cmpint (run_cli (none, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "atomr compile"));
  g_assert_cmpint (run_cli (bad, &out2, &err2), ==, 2);
}

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* cache explain takes every option compile takes (one table) and builds
 * the same key: a compile with each code-generation flag, the nvcc
 * spellings included, is a hit for explain with the same flags, and a
 * miss naming the flag without one of them.  (Before, explain knew only
 * the first eight options and refused --maxrregcount and the rest.) */
static void
test_explain_every_compile_flag (void)
{
  g_autofree gchar *src = write_source ("flags.cu", SCALE_SOURCE);
  g_autofree gchar *cache_dir = g_build_filename (workdir, "cache-explain-flags", NULL);
  const gchar *compile[] = { "compile", src, "-e", SCALE_FLOAT_256, "--arch", "sm_90", "-maxrregcount=32", "--ftz",
                             "-lineinfo", "-G", "-rdc", "-Xnvrtc=-DXN=1",
                             "--std", "c++17", "-D", "EXTRA=1", "-I", workdir, "--fast-math",
                             "--cache-dir", cache_dir, "--json", NULL };
  const gchar *hit[] = { "cache", "explain", src, "-e", SCALE_FLOAT_256, "--arch", "sm_90", "--maxrregcount", "32",
                         "-ftz", "--line-info", "--device-debug", "--rdc", "--Xnvrtc=-DXN=1",
                         "--std", "c++17", "-D", "EXTRA=1", "-I", workdir, "--fast-math",
                         "--cache-dir", cache_dir, "--json", NULL };
  const gchar *miss[] = { "cache", "explain", src, "-e", SCALE_FLOAT_256, "--arch", "sm_90", "--maxrregcount", "64",
                          "--ftz", "--line-info", "-G", "--rdc", "-Xnvrtc=-DXN=1",
                          "--std", "c++17", "-D", "EXTRA=1", "-I", workdir, "--fast-math",
                          "--cache-dir", cache_dir, "--json", NULL };
  const gchar *bad[] = { "cache", "explain", src, "--maxrregcount", "-3", "--cache-dir", cache_dir, "--json", NULL };
  g_autofree gchar *out = NULL, *err = NULL;
  g_autofree gchar *key = NULL;
  g_autoptr(JsonNode) j = NULL;
  JsonObject *o;

  g_assert_cmpint (run_cli (compile, &out, &err), ==, 0);
  j = parse (out);
  key = g_strdup (json_object_get_string_member (json_node_get_object (j), "key"));
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (hit, &out, &err), ==, 0);
  j = parse (out);
  o = json_node_get_object (j);
  g_assert_cmpstr (json_object_get_string_member (o, "cache"), ==, "hit");
  g_assert_cmpstr (json_object_get_string_member (o, "key"), ==, key);
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (miss, &out, &err), ==, 0);
  j = parse (out);
  o = json_node_get_object (j);
  g_assert_cmpstr (json_object_get_string_member (o, "cache"), ==, "miss");
  g_assert_cmpstr (json_object_get_string_member (o, "nearest"), ==, key);
  {
    g_autofree gchar *text = json_to_string (json_object_get_member (o, "reasons"), FALSE);
    g_assert_nonnull (strstr (text, "--maxrregcount=64"));
    g_assert_nonnull (strstr (text, "--maxrregcount=32"));
  }
  g_clear_pointer (&j, json_node_unref);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli (bad, &out, &err), ==, 2);
  j = parse (out);
  g_assert_nonnull (strstr (json_object_get_string_member (json_object_get_object_member (json_node_get_object (j), "error"), "message"),
                            "--maxrregcount"));
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("ATOMR_CLI");
  if (cli == NULL)
    {
      g_printerr ("set ATOMR_CLI to the atomr binary\n");
      return 1;
    }
  workdir = g_dir_make_tmp ("atomr-cli-XXXXXX", NULL);
  g_test_add_func ("/cli/compile-json", test_compile_json);
  g_test_add_func ("/cli/compile-error", test_compile_error);
  g_test_add_func ("/cli/cache-commands", test_cache_commands);
  g_test_add_func ("/cli/cache-tools-json", test_cache_tools_json);
  g_test_add_func ("/cli/cache-show-log", test_cache_show_log);
  g_test_add_func ("/cli/cache-show-resources", test_cache_show_resources);
  g_test_add_func ("/cli/usage", test_usage);
  g_test_add_func ("/cli/explain-every-compile-flag", test_explain_every_compile_flag);
  rc = g_test_run ();
  rm_rf (workdir);
  g_free (workdir);
  return rc;
}
