/* test-inspector-models.c — the inspector's models and parsers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>
#include <glib/gstdio.h>
#include <math.h>

#include "inspector-cache-model.h"
#include "inspector-compiler.h"
#include "inspector-diagnostics.h"
#include "inspector-operation-stats.h"
#include "inspector-trace-model.h"

/* trace model ------------------------------------------------------------ */

static InspectorTraceModel *
load_fixture (void)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  g_autoptr(GError) error = NULL;
  InspectorTraceModel *model = inspector_trace_model_new ();

  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  return model;
}

static InspectorOperationStats *
find_stats (InspectorTraceModel *model,
            const gchar         *operation)
{
  GListModel *stats = inspector_trace_model_get_statistics (model);

  for (guint i = 0; i < g_list_model_get_n_items (stats); i++)
    {
      g_autoptr(InspectorOperationStats) st = g_list_model_get_item (stats, i);
      if (g_str_equal (inspector_operation_stats_get_operation (st), operation))
        return st;   /* the model keeps its reference */
    }
  g_assert_not_reached ();
  return NULL;
}

static void
test_trace_tracks (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  guint n;
  const guint *idx;
  gint64 prev = G_MININT64;

  g_assert_cmpuint (inspector_trace_model_get_n_records (model), ==, 13);
  g_assert_cmpuint (inspector_trace_model_get_n_tracks (model), ==, 3);
  /* one GPU: tracks by label */
  g_assert_cmpstr (inspector_trace_model_get_track_label (model, 0), ==, "blas · stream 4");
  g_assert_cmpstr (inspector_trace_model_get_track_label (model, 1), ==, "fft · stream 5");
  g_assert_cmpstr (inspector_trace_model_get_track_label (model, 2), ==, "nvrtc · stream 1");

  idx = inspector_trace_model_get_track_records (model, 2, &n);
  g_assert_cmpuint (n, ==, 6);
  for (guint j = 0; j < n; j++)
    {
      AtomrLaunchInfo *info = inspector_trace_model_get_record (model, idx[j]);
      g_assert_cmpstr (atomr_launch_info_get_actor_name (info), ==, "nvrtc");
      g_assert_cmpuint (inspector_trace_model_get_record_track (model, idx[j]), ==, 2);
      g_assert_cmpint (inspector_launch_info_get_start (info), >=, prev);
      prev = inspector_launch_info_get_start (info);
    }
  /* the failed compile kept its error */
  g_assert_nonnull (atomr_launch_info_get_error (inspector_trace_model_get_record (model, idx[5])));

  g_assert_cmpint (inspector_trace_model_get_start_time (model), ==, 5000000);
  g_assert_cmpint (inspector_trace_model_get_end_time (model), >, 5000000 + 1000);
}

static void
test_trace_statistics (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  GListModel *stats = inspector_trace_model_get_statistics (model);
  InspectorOperationStats *st;

  /* the failed compile is not counted */
  g_assert_cmpuint (g_list_model_get_n_items (stats), ==, 3);
  for (guint i = 0; i < g_list_model_get_n_items (stats); i++)
    {
      g_autoptr(InspectorOperationStats) any = g_list_model_get_item (stats, i);
      g_assert_cmpstr (inspector_operation_stats_get_operation (any), !=, "compile");
    }

  /* host durations (no GPU time): 100, 200, 300, 400 µs */
  st = find_stats (model, "sgemm");
  g_assert_cmpstr (inspector_operation_stats_get_library (st), ==, "cublas");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 4);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 1000, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_mean_us (st), 250, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p50_us (st), 200, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p99_us (st), 400, 1e-9);

  st = find_stats (model, "exec-c2c");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 3);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 180, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_mean_us (st), 60, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p50_us (st), 50, 1e-9);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p99_us (st), 80, 1e-9);

  /* GPU time wins over the host's enqueue-to-completion: 10 … 40, 1000 µs */
  st = find_stats (model, "launch saxpy");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 5);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 1100, 1e-6);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_mean_us (st), 220, 1e-6);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p50_us (st), 30, 1e-6);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p99_us (st), 1000, 1e-6);

  /* sorted by total time, longest first */
  {
    g_autoptr(InspectorOperationStats) first = g_list_model_get_item (stats, 0);
    g_assert_cmpstr (inspector_operation_stats_get_operation (first), ==, "launch saxpy");
  }
}

/* the demo's workload as the H100 ran it (tests/inspector/test-gpu-inspector-trace) */
static void
test_trace_from_gpu (void)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-gpu-demo-trace.json", NULL);
  g_autoptr(InspectorTraceModel) model = inspector_trace_model_new ();
  g_autoptr(GError) error = NULL;
  const gchar *launches[] = { "launch saxpy", "launch scale<float>", "launch reduce_sum" };
  gboolean timed = TRUE;

  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (inspector_trace_model_get_n_records (model), ==, 58);
  g_assert_cmpuint (inspector_trace_model_get_n_tracks (model), ==, 3);
  g_assert_cmpuint (g_list_model_get_n_items (inspector_trace_model_get_statistics (model)), ==, 7);
  for (guint i = 0; i < G_N_ELEMENTS (launches); i++)
    {
      InspectorOperationStats *st = find_stats (model, launches[i]);
      g_assert_cmpstr (inspector_operation_stats_get_library (st), ==, "nvrtc");
      g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 8);
      g_assert_cmpfloat (inspector_operation_stats_get_p50_us (st), >, 0);
      g_assert_cmpfloat (inspector_operation_stats_get_p99_us (st), >=, inspector_operation_stats_get_p50_us (st));
      g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_mean_us (st) * 8, inspector_operation_stats_get_total_us (st), 1e-9);
    }
  g_assert_cmpuint (inspector_operation_stats_get_count (find_stats (model, "upload")), ==, 9);
  g_assert_cmpuint (inspector_operation_stats_get_count (find_stats (model, "download")), ==, 8);
  /* every actor timed its operations with events */
  for (guint i = 0; i < inspector_trace_model_get_n_records (model); i++)
    if (atomr_launch_info_get_gpu_duration_ms (inspector_trace_model_get_record (model, i)) < 0)
      timed = FALSE;
  g_assert_true (timed);
}

static void
test_percentile (void)
{
  const gdouble v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
  g_autoptr(GArray) many = g_array_new (FALSE, FALSE, sizeof (gdouble));

  g_assert_cmpfloat (inspector_percentile (v, 0, 50), ==, 0);
  g_assert_cmpfloat (inspector_percentile (v, 1, 99), ==, 1);
  g_assert_cmpfloat (inspector_percentile (v, 10, 50), ==, 5);
  g_assert_cmpfloat (inspector_percentile (v, 10, 99), ==, 10);
  g_assert_cmpfloat (inspector_percentile (v, 10, 0), ==, 1);
  for (guint i = 1; i <= 1000; i++)
    {
      gdouble d = i;
      g_array_append_val (many, d);
    }
  g_assert_cmpfloat (inspector_percentile ((gdouble *) (gpointer) many->data, many->len, 99), ==, 990);
  g_assert_cmpfloat (inspector_percentile ((gdouble *) (gpointer) many->data, many->len, 50), ==, 500);
}

static void
test_trace_save_roundtrip (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  g_autoptr(InspectorTraceModel) again = inspector_trace_model_new ();
  g_autofree gchar *dir = g_dir_make_tmp ("inspector-XXXXXX", NULL);
  g_autofree gchar *path = g_build_filename (dir, "saved.json", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (inspector_trace_model_save (model, path, &error));
  g_assert_no_error (error);
  g_assert_true (inspector_trace_model_load (again, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (inspector_trace_model_get_n_records (again), ==, 13);
  g_assert_cmpuint (inspector_trace_model_get_n_tracks (again), ==, 3);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (find_stats (again, "launch saxpy")), 1100, 1e-6);
  g_unlink (path);
  g_rmdir (dir);
}

static void
test_trace_bad_file (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  g_autofree gchar *dir = g_dir_make_tmp ("inspector-XXXXXX", NULL);
  g_autofree gchar *path = g_build_filename (dir, "bad.json", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (path, "{\"traceEvents\": 3}", -1, NULL));
  g_assert_false (inspector_trace_model_load (model, path, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  /* the model kept what it had */
  g_assert_cmpuint (inspector_trace_model_get_n_records (model), ==, 13);
  g_unlink (path);
  g_rmdir (dir);
}

static void
count_changed (gpointer  instance,
               guint    *n)
{
  (*n)++;
}

static void
test_trace_live_recorder (void)
{
  g_autoptr(InspectorTraceModel) model = inspector_trace_model_new ();
  g_autoptr(AtomrTraceRecorder) rec = atomr_trace_recorder_new (16);
  guint changed = 0;

  g_signal_connect (model, "changed", G_CALLBACK (count_changed), &changed);
  inspector_trace_model_set_recorder (model, rec);
  g_assert_cmpuint (inspector_trace_model_get_n_records (model), ==, 0);
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(AtomrLaunchInfo) info = atomr_launch_info_new ("live", "copy", i == 2 ? "download" : "upload");
      atomr_launch_info_set_stream_id (info, 7);
      atomr_launch_info_set_times (info, 100 + i * 10, 101 + i * 10, 105 + i * 10);
      atomr_trace_recorder_add_record (rec, info);
    }
  g_assert_cmpuint (changed, ==, 1);
  inspector_trace_model_refresh (model);
  g_assert_cmpuint (changed, ==, 2);
  g_assert_cmpuint (inspector_trace_model_get_n_records (model), ==, 3);
  g_assert_cmpuint (inspector_trace_model_get_n_tracks (model), ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (inspector_trace_model_get_statistics (model)), ==, 2);
  /* nothing new: no rebuild */
  inspector_trace_model_refresh (model);
  g_assert_cmpuint (changed, ==, 2);
}

/* diagnostics ------------------------------------------------------------- */

static const gchar nvrtc_log[] =
  "saxpy.cu(4): error: identifier \"undefined_thing\" is undefined\n"
  "    undefined_thing = 2;\n"
  "    ^\n"
  "\n"
  "saxpy.cu(3): warning #177-D: variable \"unused\" was declared but never referenced\n"
  "  { int unused = 3;\n"
  "          ^\n"
  "\n"
  "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
  "\n"
  "include/helper.cuh(12): remark: a note without source echo\n"
  "1 error detected in the compilation of \"saxpy.cu\".\n";

static void
test_diagnostics_parse (void)
{
  g_autoptr(GListStore) store = inspector_diagnostics_parse (nvrtc_log);
  g_autoptr(InspectorDiagnostic) e = NULL, w = NULL, r = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (store)), ==, 3);
  e = g_list_model_get_item (G_LIST_MODEL (store), 0);
  g_assert_cmpstr (inspector_diagnostic_get_file (e), ==, "saxpy.cu");
  g_assert_cmpuint (inspector_diagnostic_get_line (e), ==, 4);
  g_assert_cmpuint (inspector_diagnostic_get_column (e), ==, 3);
  g_assert_cmpint (inspector_diagnostic_get_severity (e), ==, INSPECTOR_SEVERITY_ERROR);
  g_assert_null (inspector_diagnostic_get_code (e));
  g_assert_cmpstr (inspector_diagnostic_get_message (e), ==, "identifier \"undefined_thing\" is undefined");

  w = g_list_model_get_item (G_LIST_MODEL (store), 1);
  g_assert_cmpuint (inspector_diagnostic_get_line (w), ==, 3);
  g_assert_cmpuint (inspector_diagnostic_get_column (w), ==, 9);
  g_assert_cmpint (inspector_diagnostic_get_severity (w), ==, INSPECTOR_SEVERITY_WARNING);
  g_assert_cmpstr (inspector_diagnostic_get_code (w), ==, "177-D");
  g_assert_cmpstr (inspector_diagnostic_get_message (w), ==, "variable \"unused\" was declared but never referenced");

  r = g_list_model_get_item (G_LIST_MODEL (store), 2);
  g_assert_cmpstr (inspector_diagnostic_get_file (r), ==, "include/helper.cuh");
  g_assert_cmpuint (inspector_diagnostic_get_line (r), ==, 12);
  g_assert_cmpuint (inspector_diagnostic_get_column (r), ==, 0);
  g_assert_cmpint (inspector_diagnostic_get_severity (r), ==, INSPECTOR_SEVERITY_REMARK);
}

static void
test_diagnostics_garbage (void)
{
  g_autoptr(GListStore) none = inspector_diagnostics_parse (NULL);
  g_autoptr(GListStore) junk = inspector_diagnostics_parse ("x.cu(0): error: line zero\n"
                                                            "x.cu(abc): error: no number\n"
                                                            "error: no location\n(12): error: no file\n");

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (none)), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (junk)), ==, 0);
}

static void
test_ptxas_parse (void)
{
  g_autoptr(GPtrArray) res = inspector_ptxas_parse (
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'saxpy' for 'sm_90'\n"
    "ptxas info    : Function properties for saxpy\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 256 bytes smem\n"
    "ptxas info    : Compiling entry function '_Z5scaleIfEvPT_S0_j' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z5scaleIfEvPT_S0_j\n"
    "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
    "ptxas info    : Used 255 registers\n"
    "ptxas info    : Compile time = 11.022 ms\n");
  InspectorKernelResources *a, *b;

  g_assert_cmpuint (res->len, ==, 2);
  a = g_ptr_array_index (res, 0);
  g_assert_cmpstr (a->function, ==, "saxpy");
  g_assert_cmpstr (a->arch, ==, "sm_90");
  g_assert_cmpuint (a->registers, ==, 10);
  g_assert_cmpuint (a->barriers, ==, 1);
  g_assert_cmpuint (a->shared_bytes, ==, 256);
  b = g_ptr_array_index (res, 1);
  g_assert_cmpstr (b->function, ==, "_Z5scaleIfEvPT_S0_j");
  g_assert_cmpuint (b->registers, ==, 255);
  g_assert_cmpuint (b->shared_bytes, ==, 0);
  g_assert_cmpuint (b->stack_bytes, ==, 16);
  g_assert_cmpuint (b->spill_stores, ==, 8);
  g_assert_cmpuint (b->spill_loads, ==, 4);
}

static void
test_find_kernel_names (void)
{
  g_auto(GStrv) names = inspector_find_kernel_names (
    "extern \"C\" __global__ void saxpy (float a) {}\n"
    "__global__ void __launch_bounds__(256) reduce_sum(const float *in) {}\n"
    "template <typename T>\n__global__ void scale (T *d) {}\n"
    "__device__ void helper (void) {}\n");

  g_assert_cmpuint (g_strv_length (names), ==, 2);
  g_assert_cmpstr (names[0], ==, "saxpy");
  g_assert_cmpstr (names[1], ==, "reduce_sum");
}

/* cache model ------------------------------------------------------------ */

typedef struct {
  gchar               *dir;
  AtomrKernelCache    *cache;
  InspectorCacheModel *model;
} CacheFixture;

static const struct {
  const gchar *name;
  const gchar *source;
} fixture_kernels[] = {
  { "alpha", "extern \"C\" __global__ void alpha (float *y) { y[threadIdx.x] = 1.0f; }\n" },
  { "beta", "extern \"C\" __global__ void beta (float *y) { y[threadIdx.x] *= 2.0f; }\n" },
  { "gamma", "extern \"C\" __global__ void gamma (double *y) { y[threadIdx.x] += 3.0; }\n" },
};

static gboolean
compile_into (AtomrKernelCache *cache,
              guint             i,
              GError          **error)
{
  g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
  g_autoptr(AtomrModule) module = NULL;

  atomr_compile_options_set_arch (options, i == 2 ? "compute_80" : "sm_90");
  atomr_compile_options_add_name_expression (options, fixture_kernels[i].name);
  module = atomr_nvrtc_compile (fixture_kernels[i].source, "fixture.cu", options, cache, error);
  return module != NULL;
}

static void
cache_setup (CacheFixture  *f,
             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->dir = g_dir_make_tmp ("inspector-cache-XXXXXX", NULL);
  f->cache = atomr_kernel_cache_new (f->dir);
  atomr_kernel_cache_set_store_source (f->cache, TRUE);   /* off by default */
  for (guint i = 0; i < G_N_ELEMENTS (fixture_kernels); i++)
    if (!compile_into (f->cache, i, &error))
      {
        g_autofree gchar *why = g_strdup_printf ("NVRTC cannot compile here: %s", error->message);
        g_test_skip (why);
        return;
      }
  f->model = inspector_cache_model_new (f->dir);
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

static void
cache_teardown (CacheFixture  *f,
                gconstpointer  data)
{
  g_clear_object (&f->model);
  g_clear_object (&f->cache);
  remove_tree (f->dir);
  g_free (f->dir);
}

static gchar *
title_at (InspectorCacheModel *model,
          guint                i)
{
  g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (G_LIST_MODEL (model), i);
  return inspector_cache_entry_get_title (e);
}

static void
test_cache_list (CacheFixture  *f,
                 gconstpointer  data)
{
  guint64 sum = 0;

  if (f->model == NULL)
    return;
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 3);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 3);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (f->model)) == ATOMR_TYPE_KERNEL_CACHE_ENTRY);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (f->model), 3));
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(AtomrKernelCacheEntry) e = g_list_model_get_item (G_LIST_MODEL (f->model), i);
      sum += atomr_kernel_cache_entry_get_file_size (e);
      g_assert_true (atomr_kernel_cache_entry_has_source (e));
    }
  g_assert_cmpuint (inspector_cache_model_get_total_bytes (f->model), ==, sum);
  g_assert_cmpuint (sum, >, 0);
}

static void
test_cache_search_sort (CacheFixture  *f,
                        gconstpointer  data)
{
  g_autofree gchar *t0 = NULL, *t1 = NULL, *t2 = NULL;

  if (f->model == NULL)
    return;
  inspector_cache_model_set_sort (f->model, INSPECTOR_CACHE_SORT_NAME, FALSE);
  t0 = title_at (f->model, 0);
  t1 = title_at (f->model, 1);
  t2 = title_at (f->model, 2);
  g_assert_cmpstr (t0, ==, "alpha");
  g_assert_cmpstr (t1, ==, "beta");
  g_assert_cmpstr (t2, ==, "gamma");
  inspector_cache_model_set_sort (f->model, INSPECTOR_CACHE_SORT_NAME, TRUE);
  g_free (t0);
  t0 = title_at (f->model, 0);
  g_assert_cmpstr (t0, ==, "gamma");

  inspector_cache_model_set_search (f->model, "BET");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 1);
  g_free (t0);
  t0 = title_at (f->model, 0);
  g_assert_cmpstr (t0, ==, "beta");
  /* every word must match: kernel name and architecture */
  inspector_cache_model_set_search (f->model, "gamma compute_80");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 1);
  inspector_cache_model_set_search (f->model, "sm_90");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 2);
  inspector_cache_model_set_search (f->model, "nothing-like-this");
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 0);
  /* totals count the whole cache, not the filtered view */
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 3);
  inspector_cache_model_set_search (f->model, NULL);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (f->model)), ==, 3);
}

static void
test_cache_remove_gc (CacheFixture  *f,
                      gconstpointer  data)
{
  g_autoptr(AtomrKernelCacheEntry) e = NULL;
  g_autoptr(GError) error = NULL;
  guint n_removed = 0;
  guint64 freed = 0;

  if (f->model == NULL)
    return;
  e = g_list_model_get_item (G_LIST_MODEL (f->model), 0);
  g_assert_true (inspector_cache_model_remove (f->model, e, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 2);

  g_assert_true (inspector_cache_model_gc (f->model, 0, &n_removed, &freed, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_removed, ==, 2);
  g_assert_cmpuint (freed, >, 0);
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 0);
  g_assert_cmpuint (inspector_cache_model_get_total_bytes (f->model), ==, 0);
}

static void
on_reloaded (InspectorCacheModel *model,
             const GError        *error,
             gboolean            *done)
{
  *done = TRUE;
}

static gboolean
give_up (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_cache_monitor (CacheFixture  *f,
                    gconstpointer  data)
{
  g_autoptr(AtomrKernelCache) other = NULL;
  g_autoptr(GError) error = NULL;
  gboolean reloaded = FALSE, timeout = FALSE;
  guint timeout_id;

  if (f->model == NULL)
    return;
  inspector_cache_model_set_monitored (f->model, TRUE);
  g_signal_connect (f->model, "reloaded", G_CALLBACK (on_reloaded), &reloaded);
  /* another process (here: another cache object) stores an entry */
  other = atomr_kernel_cache_new (f->dir);
  {
    g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
    g_autoptr(AtomrModule) module = NULL;
    atomr_compile_options_set_arch (options, "sm_80");
    atomr_compile_options_add_name_expression (options, "delta");
    module = atomr_nvrtc_compile ("extern \"C\" __global__ void delta (int *p) { *p = 4; }\n",
                                  "delta.cu", options, other, &error);
    g_assert_no_error (error);
  }
  timeout_id = g_timeout_add_seconds (20, give_up, &timeout);
  while (!timeout && inspector_cache_model_get_n_entries (f->model) < 4)
    g_main_context_iteration (NULL, TRUE);
  if (!timeout)
    g_source_remove (timeout_id);
  g_assert_true (reloaded);
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 4);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/inspector/trace-model/tracks", test_trace_tracks);
  g_test_add_func ("/inspector/trace-model/statistics", test_trace_statistics);
  g_test_add_func ("/inspector/trace-model/percentile", test_percentile);
  g_test_add_func ("/inspector/trace-model/from-gpu", test_trace_from_gpu);
  g_test_add_func ("/inspector/trace-model/save-roundtrip", test_trace_save_roundtrip);
  g_test_add_func ("/inspector/trace-model/bad-file", test_trace_bad_file);
  g_test_add_func ("/inspector/trace-model/live-recorder", test_trace_live_recorder);
  g_test_add_func ("/inspector/diagnostics/parse", test_diagnostics_parse);
  g_test_add_func ("/inspector/diagnostics/garbage", test_diagnostics_garbage);
  g_test_add_func ("/inspector/diagnostics/ptxas", test_ptxas_parse);
  g_test_add_func ("/inspector/compiler/kernel-names", test_find_kernel_names);
  g_test_add ("/inspector/cache-model/list", CacheFixture, NULL, cache_setup, test_cache_list, cache_teardown);
  g_test_add ("/inspector/cache-model/search-sort", CacheFixture, NULL, cache_setup, test_cache_search_sort, cache_teardown);
  g_test_add ("/inspector/cache-model/remove-gc", CacheFixture, NULL, cache_setup, test_cache_remove_gc, cache_teardown);
  g_test_add ("/inspector/cache-model/monitor", CacheFixture, NULL, cache_setup, test_cache_monitor, cache_teardown);
  return g_test_run ();
}
