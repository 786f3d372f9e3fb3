/* test-cli-compile.c — "atomr compile": nvcc's include behaviour, the
 * code-generation flags and writing artifacts with -o
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

static const gchar *cli;
static gchar *workdir;

/* Runs the CLI in @dir (the test's working directory when NULL). */
static gint
run_cli_in (const gchar         *dir,
            const gchar * const *args,
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
  g_assert_true (g_spawn_sync (dir, (gchar **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               out, err, &status, &error));
  g_assert_no_error (error);
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static JsonObject *
parse_object (const gchar *text, JsonParser *parser)
{
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_get_object (json_parser_get_root (parser));
}

static void
put (const gchar *relative, const gchar *text)
{
  g_autofree gchar *path = g_build_filename (workdir, relative, NULL);
  g_autofree gchar *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

/* `atomr compile k/rel.cu` from the parent finds k/x.h, as nvcc does, and
 * an edit of k/x.h is a miss (before: "cannot open source file x.h"). */
static void
test_source_directory (void)
{
  const gchar *args[] = { "compile", "k/rel.cu", "--kernel", "k", "--cache-dir", "cache", "--json", NULL };
  g_autofree gchar *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL, *out3 = NULL, *err3 = NULL;
  g_autoptr(JsonParser) p1 = json_parser_new ();
  g_autoptr(JsonParser) p2 = json_parser_new ();
  g_autoptr(JsonParser) p3 = json_parser_new ();
  JsonObject *o1, *o2, *o3;

  put ("k/rel.cu", "#include \"x.h\"\nextern \"C\" __global__ void k (float *p) { p[0] = V; }\n");
  put ("k/x.h", "#define V 1.5f\n");
  g_assert_cmpint (run_cli_in (workdir, args, &out1, &err1), ==, 0);
  o1 = parse_object (out1, p1);
  g_assert_cmpstr (json_object_get_string_member (o1, "cache"), ==, "miss");
  g_assert_cmpint (run_cli_in (workdir, args, &out2, &err2), ==, 0);
  o2 = parse_object (out2, p2);
  g_assert_cmpstr (json_object_get_string_member (o2, "cache"), ==, "hit");

  put ("k/x.h", "#define V 2.5f\n");
  g_assert_cmpint (run_cli_in (workdir, args, &out3, &err3), ==, 0);
  o3 = parse_object (out3, p3);
  g_assert_cmpstr (json_object_get_string_member (o3, "cache"), ==, "miss");
  g_assert_cmpstr (json_object_get_string_member (o3, "key"), !=, json_object_get_string_member (o1, "key"));
}

/* Every code-generation option has a flag, with nvcc's spellings too. */
static void
test_flags (void)
{
  const gchar *args[] = { "compile", "k/rel.cu", "--arch", "sm_90", "--maxrregcount", "32", "--ftz",
                          "--line-info", "-G", "-rdc", "-Xnvrtc", "-DFROM_X=1", "-Xnvrtc=--std=c++20",
                          "--no-cache", "--json", NULL };
  const gchar *nvcc_style[] = { "compile", "k/rel.cu", "-maxrregcount=24", "-lineinfo", "--no-cache", "--json", NULL };
  const gchar *expected[] = { "--gpu-architecture=sm_90", "--relocatable-device-code=true", "--ftz=true",
                              "--maxrregcount=32", "--generate-line-info", "--device-debug", "-DFROM_X=1",
                              "--std=c++20" };
  g_autofree gchar *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;
  g_autoptr(JsonParser) p = json_parser_new ();
  g_autoptr(JsonParser) p2 = json_parser_new ();
  JsonArray *flags;

  put ("k/rel.cu", "#include \"x.h\"\nextern \"C\" __global__ void k (float *p) { p[0] = V; }\n");
  put ("k/x.h", "#define V 1.5f\n");
  g_assert_cmpint (run_cli_in (workdir, args, &out, &err), ==, 0);
  flags = json_object_get_array_member (parse_object (out, p), "flags");
  g_assert_cmpuint (json_array_get_length (flags), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    g_assert_cmpstr (json_array_get_string_element (flags, i), ==, expected[i]);

  g_assert_cmpint (run_cli_in (workdir, nvcc_style, &out2, &err2), ==, 0);
  flags = json_object_get_array_member (parse_object (out2, p2), "flags");
  g_assert_cmpstr (json_array_get_string_element (flags, 0), ==, "--maxrregcount=24");
  g_assert_cmpstr (json_array_get_string_element (flags, 1), ==, "--generate-line-info");
}

/* -o writes the CUBIN, --ptx / .ptx the PTX, --ltoir / .ltoir the LTO-IR;
 * "-" is standard output. */
static void
test_output (void)
{
  const gchar *cubin_args[] = { "compile", "k/rel.cu", "--arch", "sm_90", "-o", "out.cubin", "--no-cache", NULL };
  const gchar *ptx_args[] = { "compile", "k/rel.cu", "-o", "-", "--ptx", "--no-cache", NULL };
  const gchar *ltoir_args[] = { "compile", "k/rel.cu", "--arch", "sm_90", "-o", "out.ltoir", "--no-cache", NULL };
  const gchar *no_cubin[] = { "compile", "k/rel.cu", "--arch", "compute_90", "-o", "x.cubin", "--no-cache", NULL };
  const gchar *both[] = { "compile", "k/rel.cu", "-o", "x", "--ptx", "--ltoir", NULL };
  g_autofree gchar *out = NULL, *err = NULL, *cubin = NULL, *ltoir = NULL;
  g_autofree gchar *cubin_path = g_build_filename (workdir, "out.cubin", NULL);
  g_autofree gchar *ltoir_path = g_build_filename (workdir, "out.ltoir", NULL);
  gsize len = 0;

  put ("k/rel.cu", "#include \"x.h\"\nextern \"C\" __global__ void k (float *p) { p[0] = V; }\n");
  put ("k/x.h", "#define V 1.5f\n");
  g_assert_cmpint (run_cli_in (workdir, cubin_args, &out, &err), ==, 0);
  g_assert_true (g_file_get_contents (cubin_path, &cubin, &len, NULL));
  g_assert_cmpuint (len, >, 4);
  g_assert_true (memcmp (cubin, "\177ELF", 4) == 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli_in (workdir, ptx_args, &out, &err), ==, 0);
  g_assert_nonnull (strstr (out, ".version"));
  g_assert_nonnull (strstr (out, ".entry k"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli_in (workdir, ltoir_args, &out, &err), ==, 0);
  g_assert_true (g_file_get_contents (ltoir_path, &ltoir, &len, NULL));
  g_assert_cmpuint (len, >, 0);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  g_assert_cmpint (run_cli_in (workdir, no_cubin, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "no CUBIN"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (run_cli_in (workdir, both, &out, &err), ==, 2);
}

/* A NUL or 0xFF byte is refused with its offset instead of compiling the
 * text before it. */
static void
test_non_text (void)
{
  const gchar *args[] = { "compile", "bad.cu", "--no-cache", NULL };
  g_autofree gchar *path = g_build_filename (workdir, "bad.cu", NULL);
  g_autofree gchar *out = NULL, *err = NULL;

  g_assert_true (g_file_set_contents (path, "extern \"C\" __global__ void a () {}\n\0 x", 38, NULL));
  g_assert_cmpint (run_cli_in (workdir, args, &out, &err), ==, 2);
  g_assert_nonnull (strstr (err, "offset 35"));
  g_assert_nonnull (strstr (err, "line 2"));
}

static void
rm_rf (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  if (dir)
    while ((name = g_dir_read_name (dir)))
      {
        g_autofree gchar *child = g_build_filename (path, name, NULL);
        if (g_file_test (child, G_FILE_TEST_IS_DIR))
          rm_rf (child);
        else
          g_unlink (child);
      }
  g_rmdir (path);
}

int
main (int argc, char **argv)
{
  int status;

  g_test_init (&argc, &argv, NULL);
  cli = g_getenv ("ATOMR_CLI");
  if (cli == NULL)
    {
      g_printerr ("ATOMR_CLI is not set\n");
      return 77;
    }
  workdir = g_dir_make_tmp ("atomr-cli-compile-XXXXXX", NULL);
  g_test_add_func ("/cli-compile/source-directory", test_source_directory);
  g_test_add_func ("/cli-compile/flags", test_flags);
  g_test_add_func ("/cli-compile/output", test_output);
  g_test_add_func ("/cli-compile/non-text", test_non_text);
  status = g_test_run ();
  rm_rf (workdir);
  g_free (workdir);
  return status;
}
