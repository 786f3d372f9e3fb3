/* test-inspector-ui.c — the real atomr-inspector under Xvfb, one page at a time
 *
 * For each page, runs `atomr-inspector --screenshot=FILE --screenshot-page=PAGE`
 * on a fixture (a cache this test fills with NVRTC, the fixture trace, a
 * kernel source with one error and one warning), keeps the PNG in the build
 * directory (screenshot-PAGE.png), checks what the app says it shows, and
 * checks the picture: not blank, and the page's own colours are there.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <math.h>

typedef struct {
  gchar *dir;
  gchar *cache_dir;
} Fixture;

static Fixture fixture;

static const gchar *kernels[][2] = {
  { "alpha", "extern \"C\" __global__ void alpha (float *y) { y[threadIdx.x] = 1.0f; }\n" },
  { "beta", "extern \"C\" __global__ void beta (float *y) { y[threadIdx.x] *= 2.0f; }\n" },
  { "gamma", "extern \"C\" __global__ void gamma (double *y) { y[threadIdx.x] += 3.0; }\n" },
};

static gboolean
fill_cache (GError **error)
{
  g_autoptr(AtomrKernelCache) cache = atomr_kernel_cache_new (fixture.cache_dir);

  for (guint i = 0; i < G_N_ELEMENTS (kernels); i++)
    {
      g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
      g_autoptr(AtomrModule) module = NULL;

      atomr_compile_options_set_arch (options, "sm_90");
      atomr_compile_options_add_name_expression (options, kernels[i][0]);
      module = atomr_nvrtc_compile (kernels[i][1], "fixture.cu", options, cache, error);
      if (module == NULL)
        return FALSE;
    }
  return TRUE;
}

static void
remove_tree (const gchar *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const gchar *name;

  while (dir && (name = g_dir_read_name (dir)))
    {
      g_autofree gchar *child = g_build_filename (path, name, NULL);
      if (g_file_test (child, G_FILE_TEST_IS_DIR))
        remove_tree (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* Runs the inspector; returns its "key=value ..." report as a table. */
static GHashTable *
run_inspector (const gchar        *page,
               const gchar        *png,
               const gchar *const *extra,
               GError            **error)
{
  const gchar *exe = g_getenv ("ATOMR_INSPECTOR");
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) proc = NULL;
  g_autofree gchar *out = NULL, *err = NULL;
  g_autofree gchar *shot = g_strdup_printf ("--screenshot=%s", png);
  g_autofree gchar *which = g_strdup_printf ("--screenshot-page=%s", page);
  g_autofree gchar *cache = g_strdup_printf ("--cache-dir=%s", fixture.cache_dir);
  GHashTable *report = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) words = NULL;
  g_autoptr(GStrvBuilder) argv = g_strv_builder_new ();
  g_auto(GStrv) args = NULL;

  g_subprocess_launcher_setenv (launcher, "GSETTINGS_BACKEND", "memory", TRUE);
  g_subprocess_launcher_setenv (launcher, "GSK_RENDERER", "cairo", TRUE);
  g_subprocess_launcher_setenv (launcher, "NO_AT_BRIDGE", "1", TRUE);
  g_subprocess_launcher_setenv (launcher, "LANGUAGE", "C", TRUE);
  g_subprocess_launcher_unsetenv (launcher, "G_DEBUG");   /* no fatal-criticals from X11 or D-Bus */
  g_subprocess_launcher_unsetenv (launcher, "MALLOC_CHECK_");
  g_strv_builder_add_many (argv, "xvfb-run", "-a", "-s", "-screen 0 1400x900x24",
                           exe, shot, which, cache, "--select=1", NULL);
  g_strv_builder_addv (argv, (const char **) extra);
  args = g_strv_builder_end (argv);
  proc = g_subprocess_launcher_spawnv (launcher, (const gchar * const *) args, error);
  if (proc == NULL)
    return NULL;
  if (!g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, error))
    return NULL;
  if (!g_subprocess_get_if_exited (proc) || g_subprocess_get_exit_status (proc) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "atomr-inspector --screenshot-page=%s failed: %s",
                   page, err);
      return NULL;
    }
  g_test_message ("%s", out);
  words = g_strsplit_set (out, " \n", -1);
  for (guint i = 0; words[i]; i++)
    {
      gchar *eq = strchr (words[i], '=');
      if (eq)
        g_hash_table_insert (report, g_strndup (words[i], eq - words[i]), g_strdup (eq + 1));
    }
  return report;
}

static guint64
report_uint (GHashTable  *report,
             const gchar *key)
{
  const gchar *v = g_hash_table_lookup (report, key);

  g_assert_nonnull (v);
  return g_ascii_strtoull (v, NULL, 10);
}

typedef struct {
  gdouble variance;    /* of the luminance */
  guint   distinct;    /* distinct colours, quantized to 4 bits per channel */
} Picture;

static void
analyse (GdkPixbuf *pb,
         Picture   *pic)
{
  gint w = gdk_pixbuf_get_width (pb), h = gdk_pixbuf_get_height (pb);
  gint stride = gdk_pixbuf_get_rowstride (pb), nc = gdk_pixbuf_get_n_channels (pb);
  const guchar *px = gdk_pixbuf_read_pixels (pb);
  g_autoptr(GHashTable) colours = g_hash_table_new (NULL, NULL);
  gdouble sum = 0, sum2 = 0;
  guint64 n = (guint64) w * h;

  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      {
        const guchar *p = px + y * stride + x * nc;
        gdouble l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
        sum += l;
        sum2 += l * l;
        g_hash_table_add (colours, GUINT_TO_POINTER (1 + ((p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4))));
      }
  pic->variance = sum2 / n - (sum / n) * (sum / n);
  pic->distinct = g_hash_table_size (colours);
}

/* pixels within `tol` of the colour #rrggbb */
static guint
count_colour (GdkPixbuf   *pb,
              const gchar *hex,
              gint         tol)
{
  gint w = gdk_pixbuf_get_width (pb), h = gdk_pixbuf_get_height (pb);
  gint stride = gdk_pixbuf_get_rowstride (pb), nc = gdk_pixbuf_get_n_channels (pb);
  const guchar *px = gdk_pixbuf_read_pixels (pb);
  guint r, g, b, count = 0;

  g_assert_cmpint (sscanf (hex, "#%02x%02x%02x", &r, &g, &b), ==, 3);
  for (gint y = 0; y < h; y++)
    for (gint x = 0; x < w; x++)
      {
        const guchar *p = px + y * stride + x * nc;
        if (ABS ((gint) p[0] - (gint) r) <= tol && ABS ((gint) p[1] - (gint) g) <= tol &&
            ABS ((gint) p[2] - (gint) b) <= tol)
          count++;
      }
  return count;
}

static GdkPixbuf *
shoot (const gchar        *page,
       const gchar *const *extra,
       GHashTable        **report)
{
  g_autofree gchar *name = g_strdup_printf ("screenshot-%s.png", page);
  g_autofree gchar *png = g_test_build_filename (G_TEST_BUILT, name, NULL);
  g_autoptr(GError) error = NULL;
  GdkPixbuf *pb;
  Picture pic;

  g_unlink (png);
  *report = run_inspector (page, png, extra, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (g_hash_table_lookup (*report, "page"), ==, page);
  pb = gdk_pixbuf_new_from_file (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (gdk_pixbuf_get_width (pb), >=, 800);
  g_assert_cmpint (gdk_pixbuf_get_height (pb), >=, 500);
  analyse (pb, &pic);
  g_test_message ("%s: luminance variance %.0f, %u colours", page, pic.variance, pic.distinct);
  /* a blank or single-colour window has almost no variance or colours */
  g_assert_cmpfloat (pic.variance, >, 100);
  g_assert_cmpuint (pic.distinct, >, 16);
  /* adaptive: every page folds to fit a phone-sized window */
  g_assert_cmpuint (report_uint (*report, "min-width"), <=, 400);
  return pb;
}

static gboolean
have_xvfb (void)
{
  g_autofree gchar *xvfb = g_find_program_in_path ("xvfb-run");

  if (xvfb == NULL)
    {
      g_test_skip ("xvfb-run is not installed");
      return FALSE;
    }
  return TRUE;
}

static void
test_cache_page (void)
{
  g_autoptr(GHashTable) report = NULL;
  g_autoptr(GdkPixbuf) pb = NULL;

  if (!have_xvfb ())
    return;
  if (fixture.cache_dir == NULL)
    {
      g_test_skip ("no fixture cache: NVRTC could not compile");
      return;
    }
  pb = shoot ("cache", (const gchar *[]) { NULL }, &report);
  g_assert_cmpuint (report_uint (report, "cache-entries"), ==, 3);
  g_assert_cmpuint (report_uint (report, "cache-visible"), ==, 3);
  g_assert_cmpuint (report_uint (report, "cache-bytes"), >, 0);
  /* the details of the selected entry: white cards on the grey page */
  g_assert_cmpuint (count_colour (pb, "#ffffff", 2), >, 20000);
}

static void
test_editor_page (void)
{
  g_autoptr(GHashTable) report = NULL;
  g_autoptr(GdkPixbuf) pb = NULL;
  g_autofree gchar *source = g_test_build_filename (G_TEST_DIST, "fixture-broken.cu", NULL);
  const gchar *extra[] = { "--compile", source, NULL };

  if (!have_xvfb ())
    return;
  if (fixture.cache_dir == NULL)
    {
      g_test_skip ("NVRTC could not compile");
      return;
    }
  pb = shoot ("editor", extra, &report);
  /* fixture-broken.cu: one error, one warning */
  g_assert_cmpuint (report_uint (report, "diagnostics"), ==, 2);
  /* their lines are tinted red and yellow */
  g_assert_cmpuint (count_colour (pb, "#f8dadb", 8), >, 1000);
  g_assert_cmpuint (count_colour (pb, "#f8efd8", 8), >, 1000);
}

static void
test_trace_page (void)
{
  g_autoptr(GHashTable) report = NULL;
  g_autoptr(GdkPixbuf) pb = NULL;
  g_autofree gchar *trace = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  const gchar *extra[] = { trace, NULL };

  if (!have_xvfb ())
    return;

  pb = shoot ("trace", extra, &report);
  /* 12 GPU slices and 13 host lifecycles (the failed compile never ran
   * on the GPU); 3 streams, 3 actors, 4 counters */
  g_assert_cmpuint (report_uint (report, "trace-records"), ==, 25);
  g_assert_cmpuint (report_uint (report, "trace-gpu"), ==, 12);
  g_assert_cmpuint (report_uint (report, "trace-tracks"), ==, 10);
  g_assert_cmpuint (report_uint (report, "trace-operations"), ==, 3);   /* the failed compile is left out */
  g_assert_cmpuint (report_uint (report, "trace-boxes"), >=, 25);
  /* boxes in the colours of cuBLAS, cuFFT and NVRTC, and the failed compile */
  g_assert_cmpuint (count_colour (pb, "#e66100", 8), >, 200);
  g_assert_cmpuint (count_colour (pb, "#9141ac", 8), >, 100);
  g_assert_cmpuint (count_colour (pb, "#3584e4", 8), >, 100);
  g_assert_cmpuint (count_colour (pb, "#e01b24", 8), >, 100);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, NULL);
  fixture.dir = g_dir_make_tmp ("inspector-ui-XXXXXX", NULL);
  fixture.cache_dir = g_build_filename (fixture.dir, "cache", NULL);
  if (!fill_cache (&error))
    {
      g_test_message ("no fixture cache: %s", error->message);
      g_clear_pointer (&fixture.cache_dir, g_free);
    }

  g_test_add_func ("/inspector/ui/cache-page", test_cache_page);
  g_test_add_func ("/inspector/ui/editor-page", test_editor_page);
  g_test_add_func ("/inspector/ui/trace-page", test_trace_page);
  ret = g_test_run ();
  remove_tree (fixture.dir);
  g_free (fixture.cache_dir);
  g_free (fixture.dir);
  return ret;
}
