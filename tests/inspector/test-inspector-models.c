/* test-inspector-models.c — the inspector's models and parsers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "inspector-cache-model.h"
#include "inspector-compiler.h"
#include "inspector-diagnostics.h"
#include "inspector-operation-stats.h"
#include "inspector-run.h"
#include "inspector-sass.h"
#include "inspector-trace-model.h"

/* sass ----------------------------------------------------------------- */

static void
on_sass (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static gchar *
disassemble (GBytes  *cubin,
             GError **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  inspector_sass_disassemble_async (cubin, NULL, on_sass, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return inspector_sass_disassemble_finish (result, error);
}

/* Copies the fake nvdisasm into @dir. */
static gchar *
install_fake_nvdisasm (const gchar *dir)
{
  g_autofree gchar *src = g_test_build_filename (G_TEST_DIST, "fake-nvdisasm", NULL);
  g_autofree gchar *script = NULL;
  gchar *dest = g_build_filename (dir, "nvdisasm", NULL);

  g_assert_true (g_file_get_contents (src, &script, NULL, NULL));
  g_assert_true (g_file_set_contents (dest, script, -1, NULL));
  g_assert_cmpint (g_chmod (dest, 0755), ==, 0);
  return dest;
}

/* nvdisasm is looked for on PATH, then in $CUDA_HOME/bin; none found is
 * a clear error naming where it looked; the tool's failure carries what
 * it printed.  A fake nvdisasm stands in for the toolkit's. */
static void
test_sass_tool (void)
{
  g_autofree gchar *root = g_dir_make_tmp ("inspector-sass-XXXXXX", NULL);
  g_autofree gchar *empty = g_build_filename (root, "empty", NULL);
  g_autofree gchar *bin = g_build_filename (root, "bin", NULL);
  g_autofree gchar *toolkit = g_build_filename (root, "toolkit", NULL);
  g_autofree gchar *toolkit_bin = g_build_filename (toolkit, "bin", NULL);
  g_autofree gchar *old_path = g_strdup (g_getenv ("PATH"));
  g_autofree gchar *old_home = g_strdup (g_getenv ("CUDA_HOME"));
  g_autofree gchar *old_cuda = g_strdup (g_getenv ("CUDA_PATH"));
  g_autofree gchar *on_path = NULL, *in_toolkit = NULL, *found = NULL, *sass = NULL;
  guchar elf[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
  g_autoptr(GBytes) cubin = g_bytes_new (elf, sizeof elf);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (empty, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (toolkit_bin, 0755), ==, 0);
  on_path = install_fake_nvdisasm (bin);
  in_toolkit = install_fake_nvdisasm (toolkit_bin);

  /* nowhere */
  g_setenv ("PATH", empty, TRUE);
  g_setenv ("CUDA_HOME", empty, TRUE);
  g_unsetenv ("CUDA_PATH");
  g_assert_null (inspector_sass_find_tool ());
  g_assert_null (disassemble (cubin, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "nvdisasm"));
  g_assert_nonnull (strstr (error->message, empty));
  g_clear_error (&error);

  /* $CUDA_HOME/bin */
  g_setenv ("CUDA_HOME", toolkit, TRUE);
  found = inspector_sass_find_tool ();
  g_assert_cmpstr (found, ==, in_toolkit);
  g_clear_pointer (&found, g_free);

  /* PATH first */
  g_setenv ("PATH", bin, TRUE);
  found = inspector_sass_find_tool ();
  g_assert_cmpstr (found, ==, on_path);
  sass = disassemble (cubin, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (sass, "fake nvdisasm: 64 bytes of CUBIN"));
  g_assert_nonnull (strstr (sass, "EXIT"));

  /* the tool fails: its message, its exit status */
  g_setenv ("FAKE_NVDISASM_FAIL", "1", TRUE);
  g_assert_null (disassemble (cubin, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY);
  g_assert_nonnull (strstr (error->message, "Unsupported ELF machine"));
  g_assert_nonnull (strstr (error->message, "2"));
  g_clear_error (&error);
  g_unsetenv ("FAKE_NVDISASM_FAIL");

  /* nothing to disassemble */
  g_assert_null (disassemble (NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);

  g_setenv ("PATH", old_path, TRUE);
  if (old_home)
    g_setenv ("CUDA_HOME", old_home, TRUE);
  else
    g_unsetenv ("CUDA_HOME");
  if (old_cuda)
    g_setenv ("CUDA_PATH", old_cuda, TRUE);
  g_unlink (on_path);
  g_unlink (in_toolkit);
  g_rmdir (toolkit_bin);
  g_rmdir (toolkit);
  g_rmdir (bin);
  g_rmdir (empty);
  g_rmdir (root);
}

/* run ------------------------------------------------------------------ */

static void
test_run_parse_args (void)
{
  g_autoptr(GArray) args = NULL;
  g_autoptr(GError) error = NULL;
  InspectorRunArg *a;
  struct { const gchar *text; const gchar *says; } bad[] = {
    { "f32:2.5, f16[8]", "f16" },
    { "f32[0]", "0" },
    { "f32[12", "f32[12" },
    { "u32:-1", "-1" },
    { "i32:1.5", "1.5" },
    { "f32:abc", "abc" },
    { "f32[8]=sometimes", "=sometimes" },
    { "2.5", "2.5" },
    { "f32[1000000000000]", "1000000000000" },
  };

  args = inspector_run_parse_args ("f32:2.5f, f32[1048576]=random, f64[4]=linear, u32:1048576, i64[3]=-1.5, i32[2]", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (args->len, ==, 6);
  a = &g_array_index (args, InspectorRunArg, 0);
  g_assert_cmpint (a->kind, ==, INSPECTOR_RUN_SCALAR);
  g_assert_cmpint (a->dtype, ==, ATOMR_DTYPE_F32);
  g_assert_cmpfloat (a->value, ==, 2.5);
  a = &g_array_index (args, InspectorRunArg, 1);
  g_assert_cmpint (a->kind, ==, INSPECTOR_RUN_BUFFER);
  g_assert_cmpuint (a->count, ==, 1048576);
  g_assert_cmpint (a->fill, ==, INSPECTOR_RUN_FILL_RANDOM);
  g_assert_cmpint (g_array_index (args, InspectorRunArg, 2).fill, ==, INSPECTOR_RUN_FILL_LINEAR);
  g_assert_cmpfloat (g_array_index (args, InspectorRunArg, 3).value, ==, 1048576);
  g_assert_cmpint (g_array_index (args, InspectorRunArg, 4).fill, ==, INSPECTOR_RUN_FILL_VALUE);
  g_assert_cmpfloat (g_array_index (args, InspectorRunArg, 4).value, ==, -1.5);
  g_assert_cmpint (g_array_index (args, InspectorRunArg, 5).fill, ==, INSPECTOR_RUN_FILL_ZEROS);

  /* through JSON and back: the same arguments */
  {
    g_autoptr(JsonNode) node = inspector_run_args_to_json (args);
    g_autoptr(GArray) back = inspector_run_args_from_json (node, &error);

    g_assert_no_error (error);
    g_assert_cmpuint (back->len, ==, args->len);
    g_assert_cmpmem (back->data, back->len * sizeof (InspectorRunArg), args->data, args->len * sizeof (InspectorRunArg));
  }
  g_clear_pointer (&args, g_array_unref);
  args = inspector_run_parse_args ("", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (args->len, ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GArray) none = inspector_run_parse_args (bad[i].text, &error);

      g_assert_null (none);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      if (strstr (error->message, bad[i].says) == NULL)
        g_error ("“%s”: the message “%s” does not name “%s”", bad[i].text, error->message, bad[i].says);
      g_assert_nonnull (strstr (error->message, "Argument"));
      g_clear_error (&error);
    }
}

static JsonObject *
spawn (const gchar * const *argv,
       const gchar         *request,
       guint                timeout_s,
       GError             **error)
{
  g_autoptr(GAsyncResult) result = NULL;

  inspector_run_spawn_async (argv, request, timeout_s, NULL, on_sass, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return inspector_run_spawn_finish (result, error);
}

/* The client side of Run: a crash, a hang, garbage and the real runner's
 * error each come back as an error that says what happened; nothing of it
 * touches this process. */
static void
test_run_spawn (void)
{
  const gchar *crash[] = { "/bin/sh", "-c", "cat >/dev/null; echo dying >&2; kill -SEGV $$", NULL };
  const gchar *hang[] = { "/bin/sh", "-c", "exec sleep 30", NULL };
  const gchar *garbage[] = { "/bin/sh", "-c", "cat >/dev/null; echo not json; exit 3", NULL };
  const gchar *missing[] = { "/nonexistent/atomr-kernel-runner", NULL };
  g_autofree gchar *runner = inspector_run_find_runner ();
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonObject) reply = NULL;

  reply = spawn (crash, "{}", 30, &error);
  g_assert_null (reply);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE);
  g_assert_nonnull (strstr (error->message, "signal 11"));
  g_assert_nonnull (strstr (error->message, "dying"));
  g_clear_error (&error);

  reply = spawn (hang, "{}", 1, &error);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_TIMED_OUT);
  g_clear_error (&error);

  reply = spawn (garbage, "{}", 30, &error);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY);
  g_assert_nonnull (strstr (error->message, "exit status 3"));
  g_assert_nonnull (strstr (error->message, "not json"));
  g_clear_error (&error);

  reply = spawn (missing, "{}", 30, &error);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY);
  g_assert_nonnull (strstr (error->message, "/nonexistent/atomr-kernel-runner"));
  g_clear_error (&error);

  /* the real runner: a request it refuses, then (here) no GPU */
  g_assert_nonnull (runner);
  {
    const gchar *argv[] = { runner, NULL };
    const gchar *request = "{\"source\":\"extern \\\"C\\\" __global__ void k (float *y) { y[0] = 1.0f; }\","
                           "\"kernel\":\"k\",\"options\":{\"std\":\"c++17\"},\"args\":[{\"kind\":\"buffer\","
                           "\"dtype\":\"f32\",\"count\":4,\"fill\":\"zeros\"}],\"threads\":1,\"block\":1}";

    reply = spawn (argv, "{\"kernel\":\"k\"}", 30, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "source"));
    g_clear_error (&error);
    reply = spawn (argv, "{\"source\":\"\",\"kernel\":\"k\",\"options\":{},\"threads\":0,\"block\":1}", 30, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "threads 0"));
    g_clear_error (&error);
    reply = spawn (argv, request, 60, &error);
    if (reply)
      g_test_message ("a GPU is here: the run succeeded");
    else
      {
        g_test_message ("runner: %s", error->message);
        g_assert_true (g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE) ||
                       g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY));
      }
  }
}

/* trace model ------------------------------------------------------------ */

static InspectorTraceModel *
load_fixture (void)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-trace.json", NULL);
  InspectorTraceModel *model = inspector_trace_model_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  return model;
}

static InspectorTraceModel *
load_string (const gchar *json)
{
  InspectorTraceModel *model = inspector_trace_model_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (inspector_trace_model_load_data (model, json, strlen (json), &error));
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
        return st;   /* the list holds a reference */
    }
  g_assert_not_reached ();
  return NULL;
}

static gint
find_lane (InspectorTraceModel *model,
           const gchar         *label)
{
  for (guint i = 0; i < inspector_trace_model_get_n_lanes (model); i++)
    if (g_str_equal (inspector_trace_model_get_lane_label (model, i), label))
      return (gint) i;
  return -1;
}

/* The contract: GPU execution per stream, host lifecycles on thin lanes,
 * counters; pid is the process. */
static void
test_trace_lanes (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  gint gpu = find_lane (model, "GPU 0 · stream 4 (blas)");
  gint host = find_lane (model, "host · blas");
  guint first, n;
  gdouble prev_end = -1;

  /* 12 GPU slices (the failed compile never ran), 13 host lifecycles */
  g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 12);
  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, 25);
  /* 3 streams, 3 actors, 3 mailbox-depth counters, device memory */
  g_assert_cmpuint (inspector_trace_model_get_n_lanes (model), ==, 10);
  g_assert_cmpint (gpu, >=, 0);
  g_assert_cmpint (host, >, gpu);
  g_assert_cmpint (inspector_trace_model_get_lane_kind (model, gpu), ==, INSPECTOR_LANE_GPU);
  g_assert_cmpint (inspector_trace_model_get_lane_kind (model, host), ==, INSPECTOR_LANE_HOST);
  g_assert_cmpint (inspector_trace_model_get_lane_pid (model, gpu), ==, 4242);
  g_assert_cmpint (inspector_trace_model_get_lane_kind (model, find_lane (model, "mailbox depth (blas)")), ==,
                   INSPECTOR_LANE_COUNTER);

  /* a stream is serial: its GPU slices do not overlap, all in row 0, and
   * the boxes are the GPU times (60, 120, 180, 240 µs), not enqueue to
   * completion */
  inspector_trace_model_get_lane_range (model, gpu, &first, &n);
  g_assert_cmpuint (n, ==, 4);
  for (guint i = 0; i < n; i++)
    {
      const InspectorSlice *s = inspector_trace_model_get_slice (model, first + i);
      g_assert_cmpint (s->kind, ==, INSPECTOR_SLICE_GPU);
      g_assert_cmpuint (s->depth, ==, 0);
      g_assert_cmpfloat (s->start, >=, prev_end);
      g_assert_cmpfloat_with_epsilon (s->dur, 60.0 * (i + 1), 1e-6);
      g_assert_cmpstr (s->library, ==, "cublas");
      g_assert_cmpint (s->peer, >=, 0);   /* its host lifecycle */
      g_assert_cmpint (inspector_trace_model_get_slice (model, s->peer)->kind, ==, INSPECTOR_SLICE_HOST);
      g_assert_cmpfloat (inspector_trace_model_get_slice (model, s->peer)->dur, >, s->dur);
      prev_end = s->start + s->dur;
    }
  /* the failed compile: a red host lifecycle with its error */
  {
    gint found = inspector_trace_model_search (model, "expected a", -1, TRUE);
    g_assert_cmpint (found, >=, 0);
    g_assert_true (inspector_trace_model_get_slice (model, found)->failed);
    g_assert_cmpint (inspector_trace_model_get_slice (model, found)->kind, ==, INSPECTOR_SLICE_HOST);
  }
  g_assert_cmpfloat (inspector_trace_model_get_duration (model), >, 2000);
}

/* The table counts what the boxes show: GPU time, failures left out. */
static void
test_trace_statistics (void)
{
  g_autoptr(InspectorTraceModel) model = load_fixture ();
  GListModel *stats = inspector_trace_model_get_statistics (model);
  InspectorOperationStats *st;

  g_assert_cmpuint (g_list_model_get_n_items (stats), ==, 3);
  st = find_stats (model, "sgemm");
  g_assert_cmpstr (inspector_operation_stats_get_library (st), ==, "cublas");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 4);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 600, 1e-6);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p50_us (st), 120, 1e-6);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_p99_us (st), 240, 1e-6);
  st = find_stats (model, "launch saxpy");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 5);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 1100, 1e-6);
  {
    g_autoptr(InspectorOperationStats) first = g_list_model_get_item (stats, 0);
    g_assert_cmpstr (inspector_operation_stats_get_operation (first), ==, "launch saxpy");
  }
}

/* Version 2 with operations that never ran on the GPU: a compile (cache
 * lookup, NVRTC), a barrier, an untimed copy and a launch refused before
 * it reached the stream.  Each has a host lifecycle and no GPU slice; the
 * model counts every operation once (the GPU test counted GPU slices and
 * found 67 of the recorder's 70 records). */
static const gchar host_only_trace[] =
  "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"atomr-trace-version\":2},\"traceEvents\":["
  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":9,\"tid\":1,\"args\":{\"name\":\"host · kernels\"}},"
  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":9,\"tid\":2,\"args\":{\"name\":\"host · copies\"}},"
  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":9,\"tid\":100,\"args\":{\"name\":\"GPU 0 · stream 1 (kernels)\"}},"
  /* 1: cache lookup (host only) */
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"cache lookup: miss\",\"id\":\"1\",\"pid\":9,\"tid\":1,\"ts\":0,"
  "\"args\":{\"seq\":1,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"cache lookup: miss\"}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"cache lookup: miss\",\"id\":\"1\",\"pid\":9,\"tid\":1,\"ts\":20},"
  /* 2: compile (host only) */
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"compile (NVRTC)\",\"id\":\"2\",\"pid\":9,\"tid\":1,\"ts\":20,"
  "\"args\":{\"seq\":2,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"compile (NVRTC)\"}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"compile (NVRTC)\",\"id\":\"2\",\"pid\":9,\"tid\":1,\"ts\":1520},"
  /* 3, 4: two timed launches */
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"3\",\"pid\":9,\"tid\":1,\"ts\":1600,"
  "\"args\":{\"seq\":3,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\",\"gpu_ms\":0.01}},"
  "{\"ph\":\"n\",\"cat\":\"host\",\"name\":\"enqueued\",\"id\":\"3\",\"pid\":9,\"tid\":1,\"ts\":1601},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"3\",\"pid\":9,\"tid\":1,\"ts\":1650},"
  /* as lib/trace writes it: the detail on the host events only */
  "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"launch\",\"pid\":9,\"tid\":100,\"ts\":1610,\"dur\":10,"
  "\"args\":{\"seq\":3,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"launch\"}},"
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"4\",\"pid\":9,\"tid\":1,\"ts\":1602,"
  "\"args\":{\"seq\":4,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\",\"gpu_ms\":0.03}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"4\",\"pid\":9,\"tid\":1,\"ts\":1700},"
  "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"launch\",\"pid\":9,\"tid\":100,\"ts\":1620,\"dur\":30,"
  "\"args\":{\"seq\":4,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\"}},"
  /* 5: a launch refused before it reached the stream */
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"5\",\"pid\":9,\"tid\":1,\"ts\":1710,"
  "\"args\":{\"seq\":5,\"actor\":\"kernels\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\","
  "\"error\":\"argument 2 of saxpy is a float*, got u32\"}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"launch\",\"id\":\"5\",\"pid\":9,\"tid\":1,\"ts\":1712},"
  /* 6: a barrier, 7: an upload of an actor with its timing off */
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"barrier\",\"id\":\"6\",\"pid\":9,\"tid\":2,\"ts\":1700,"
  "\"args\":{\"seq\":6,\"actor\":\"copies\",\"library\":\"core\",\"op\":\"barrier\"}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"barrier\",\"id\":\"6\",\"pid\":9,\"tid\":2,\"ts\":1705},"
  "{\"ph\":\"b\",\"cat\":\"host\",\"name\":\"upload\",\"id\":\"7\",\"pid\":9,\"tid\":2,\"ts\":1705,"
  "\"args\":{\"seq\":7,\"actor\":\"copies\",\"library\":\"core\",\"op\":\"upload\"}},"
  "{\"ph\":\"e\",\"cat\":\"host\",\"name\":\"upload\",\"id\":\"7\",\"pid\":9,\"tid\":2,\"ts\":1905}"
  "]}";

static void
test_trace_host_only_operations (void)
{
  g_autoptr(InspectorTraceModel) model = load_string (host_only_trace);
  GListModel *stats = inspector_trace_model_get_statistics (model);
  InspectorOperationStats *st;

  /* 7 host lifecycles, 2 of them with a GPU slice: 7 operations */
  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, 9);
  g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 2);
  g_assert_cmpuint (inspector_trace_model_get_n_operations (model), ==, 7);

  /* every operation that did not fail is in the statistics, with the
   * duration the timeline draws: GPU time, else the host lifecycle */
  g_assert_cmpuint (g_list_model_get_n_items (stats), ==, 5);
  st = find_stats (model, "launch saxpy");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 2);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 40, 1e-6);
  st = find_stats (model, "compile (NVRTC)");
  g_assert_cmpuint (inspector_operation_stats_get_count (st), ==, 1);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 1500, 1e-6);
  g_assert_cmpstr (inspector_operation_stats_get_library (st), ==, "nvrtc");
  st = find_stats (model, "cache lookup: miss");
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 20, 1e-6);
  st = find_stats (model, "barrier");
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 5, 1e-6);
  st = find_stats (model, "upload");
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (st), 200, 1e-6);
}

/* A plain Chrome trace with B/E pairs only (no X), fractional
 * microseconds, nesting, and two processes using the same tid. */
static const gchar be_trace[] =
  "{\"traceEvents\":["
  "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"args\":{\"name\":\"renderer\"}},"
  "{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"app\",\"pid\":7,\"tid\":1,\"ts\":10.125},"
  "{\"ph\":\"B\",\"name\":\"inner\",\"cat\":\"app\",\"pid\":7,\"tid\":1,\"ts\":11.5},"
  "{\"ph\":\"E\",\"pid\":7,\"tid\":1,\"ts\":12.75},"
  "{\"ph\":\"E\",\"pid\":7,\"tid\":1,\"ts\":20.001},"
  "{\"ph\":\"B\",\"name\":\"other\",\"cat\":\"app\",\"pid\":8,\"tid\":1,\"ts\":15.0005},"
  "{\"ph\":\"E\",\"pid\":8,\"tid\":1,\"ts\":16.0},"
  "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":8,\"tid\":1,\"ts\":15.5}"
  "]}";

static void
test_trace_begin_end (void)
{
  g_autoptr(InspectorTraceModel) model = load_string (be_trace);
  const InspectorSlice *outer, *inner;
  gint l7 = find_lane (model, "renderer · thread 1");
  gint l8 = find_lane (model, "process 8 · thread 1");
  guint first, n;

  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, 3);
  g_assert_cmpuint (inspector_trace_model_get_n_lanes (model), ==, 2);
  g_assert_cmpint (l7, >=, 0);
  g_assert_cmpint (l8, >=, 0);
  g_assert_cmpfloat (inspector_trace_model_get_origin (model), ==, 10.125);
  inspector_trace_model_get_lane_range (model, l7, &first, &n);
  g_assert_cmpuint (n, ==, 2);
  outer = inspector_trace_model_get_slice (model, first);
  inner = inspector_trace_model_get_slice (model, first + 1);
  g_assert_cmpstr (outer->name, ==, "outer");
  g_assert_cmpstr (inner->name, ==, "inner");
  /* fractions kept: nanoseconds */
  g_assert_cmpfloat_with_epsilon (outer->start, 0.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (outer->dur, 9.876, 1e-9);
  g_assert_cmpfloat_with_epsilon (inner->start, 1.375, 1e-9);
  g_assert_cmpfloat_with_epsilon (inner->dur, 1.25, 1e-9);
  g_assert_cmpuint (outer->depth, ==, 0);
  g_assert_cmpuint (inner->depth, ==, 1);
  g_assert_cmpuint (inspector_trace_model_get_lane_depth (model, l7), ==, 2);
  g_assert_cmpint (inspector_trace_model_get_lane_kind (model, l7), ==, INSPECTOR_LANE_THREAD);
  inspector_trace_model_get_lane_range (model, l8, &first, &n);
  g_assert_cmpfloat_with_epsilon (inspector_trace_model_get_slice (model, first)->start, 4.8755, 1e-9);
  /* no GPU slices: the statistics measure the spans */
  g_assert_cmpuint (g_list_model_get_n_items (inspector_trace_model_get_statistics (model)), ==, 3);
  g_assert_cmpfloat_with_epsilon (inspector_operation_stats_get_total_us (find_stats (model, "inner")), 1.25, 1e-9);
  /* the instant is not a slice */
  g_assert_cmpuint (inspector_trace_model_get_n_ignored (model), ==, 1);
}

/* Flows: s on the producer's slice (at its end), f with bp "e" on the
 * consumer's; X events in the JSON array format. */
static const gchar flow_trace[] =
  "[{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"upload\",\"pid\":1,\"tid\":2,\"ts\":100.5,\"dur\":10.25,"
  "\"args\":{\"seq\":1,\"actor\":\"copy\",\"library\":\"cuda\",\"op\":\"upload\",\"device\":0,\"stream\":2}},"
  "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"launch\",\"pid\":1,\"tid\":3,\"ts\":112,\"dur\":5,"
  "\"args\":{\"seq\":2,\"actor\":\"k\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\","
  "\"grid\":[4,1,1],\"block\":[256,1,1]}},"
  "{\"ph\":\"X\",\"cat\":\"gpu\",\"name\":\"launch\",\"pid\":1,\"tid\":3,\"ts\":120,\"dur\":5,"
  "\"args\":{\"seq\":3,\"actor\":\"k\",\"library\":\"nvrtc\",\"op\":\"launch\",\"detail\":\"saxpy\"}},"
  "{\"ph\":\"s\",\"cat\":\"dependency\",\"name\":\"dependency\",\"id\":\"dep-1-3\",\"pid\":1,\"tid\":2,\"ts\":110.75},"
  "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependency\",\"name\":\"dependency\",\"id\":\"dep-1-3\",\"pid\":1,\"tid\":3,\"ts\":120},"
  "{\"ph\":\"C\",\"name\":\"device memory\",\"pid\":1,\"ts\":100.5,\"args\":{\"in use\":1048576}},"
  "{\"ph\":\"C\",\"name\":\"device memory\",\"pid\":1,\"ts\":125,\"args\":{\"in use\":0}}]";

static void
test_trace_flows (void)
{
  g_autoptr(InspectorTraceModel) model = load_string (flow_trace);
  g_autoptr(GArray) producers = NULL;
  guint from, to;
  const gdouble *times, *values;
  gint mem = find_lane (model, "device memory (in use)");

  g_assert_cmpuint (inspector_trace_model_get_n_flows (model), ==, 1);
  inspector_trace_model_get_flow (model, 0, &from, &to);
  g_assert_cmpstr (inspector_trace_model_get_slice (model, from)->name, ==, "upload");
  g_assert_cmpint (inspector_trace_model_get_slice (model, to)->seq, ==, 3);   /* not seq 2 */
  producers = inspector_trace_model_get_dependencies (model, to, TRUE);
  g_assert_cmpuint (producers->len, ==, 1);
  g_assert_cmpuint (g_array_index (producers, guint, 0), ==, from);
  g_assert_cmpuint (inspector_trace_model_get_slice (model, to - 1)->grid[0], ==, 4);
  g_assert_cmpuint (inspector_trace_model_get_slice (model, to - 1)->block[0], ==, 256);
  g_assert_cmpint (mem, >=, 0);
  g_assert_cmpuint (inspector_trace_model_get_counter_points (model, mem, &times, &values), ==, 2);
  g_assert_cmpfloat (values[0], ==, 1048576);
  g_assert_cmpfloat_with_epsilon (times[1], 24.5, 1e-9);
  {
    g_autofree gchar *label = inspector_slice_get_label (inspector_trace_model_get_slice (model, to));
    g_assert_cmpstr (label, ==, "launch saxpy");
  }
}

/* Save, load: the same slices, lanes, flows and counters. */
static void
assert_same (InspectorTraceModel *a,
             InspectorTraceModel *b)
{
  g_assert_cmpuint (inspector_trace_model_get_n_slices (a), ==, inspector_trace_model_get_n_slices (b));
  g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (a), ==, inspector_trace_model_get_n_gpu_slices (b));
  g_assert_cmpuint (inspector_trace_model_get_n_lanes (a), ==, inspector_trace_model_get_n_lanes (b));
  g_assert_cmpuint (inspector_trace_model_get_n_flows (a), ==, inspector_trace_model_get_n_flows (b));
  g_assert_cmpfloat_with_epsilon (inspector_trace_model_get_origin (a), inspector_trace_model_get_origin (b), 1e-3);
  for (guint i = 0; i < inspector_trace_model_get_n_lanes (a); i++)
    g_assert_cmpstr (inspector_trace_model_get_lane_label (a, i), ==, inspector_trace_model_get_lane_label (b, i));
  for (guint i = 0; i < inspector_trace_model_get_n_slices (a); i++)
    {
      const InspectorSlice *x = inspector_trace_model_get_slice (a, i), *y = inspector_trace_model_get_slice (b, i);
      g_assert_cmpstr (x->name, ==, y->name);
      g_assert_cmpstr (x->library, ==, y->library);
      g_assert_cmpstr (x->error, ==, y->error);
      g_assert_cmpint (x->kind, ==, y->kind);
      g_assert_cmpint (x->seq, ==, y->seq);
      g_assert_cmpint (x->peer, ==, y->peer);
      g_assert_cmpfloat_with_epsilon (x->start, y->start, 1e-3);
      g_assert_cmpfloat_with_epsilon (x->dur, y->dur, 1e-3);
    }
  for (guint i = 0; i < inspector_trace_model_get_n_flows (a); i++)
    {
      guint f1, t1, f2, t2;
      inspector_trace_model_get_flow (a, i, &f1, &t1);
      inspector_trace_model_get_flow (b, i, &f2, &t2);
      g_assert_cmpuint (f1, ==, f2);
      g_assert_cmpuint (t1, ==, t2);
    }
}

static void
test_trace_save_roundtrip (void)
{
  const gchar *sources[] = { NULL, flow_trace, be_trace };

  for (guint k = 0; k < G_N_ELEMENTS (sources); k++)
    {
      g_autoptr(InspectorTraceModel) model = sources[k] ? load_string (sources[k]) : load_fixture ();
      g_autoptr(InspectorTraceModel) again = inspector_trace_model_new ();
      g_autofree gchar *dir = g_dir_make_tmp ("inspector-XXXXXX", NULL);
      g_autofree gchar *path = g_build_filename (dir, "saved.json", NULL);
      g_autoptr(GError) error = NULL;

      g_assert_true (inspector_trace_model_save (model, path, &error));
      g_assert_no_error (error);
      g_assert_true (inspector_trace_model_load (again, path, &error));
      g_assert_no_error (error);
      assert_same (model, again);
      g_unlink (path);
      g_rmdir (dir);
    }
}

static void
test_trace_bad_file (void)
{
  const gchar *bad[] = {
    "{\"traceEvents\": 3}", "{\"traceEvents\": [", "[{\"ph\":\"X\",\"ts\":}]", "{\"other\": []}", "nonsense",
    "", "[{\"ph\":\"X\",\"ts\":1e999}]", "{\"traceEvents\":[{\"name\":\"unterminated}]}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(InspectorTraceModel) model = load_fixture ();
      g_autoptr(GError) error = NULL;

      g_assert_false (inspector_trace_model_load_data (model, bad[i], strlen (bad[i]), &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, "Chrome trace"));
      /* the model kept what it had */
      g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 12);
    }
}

/* More than 2^20 events: all of them, none dropped (the old loader kept
 * the newest 2^20).  Skipped under valgrind, where it would take long. */
static void
test_trace_no_drop (void)
{
  g_autoptr(GString) json = g_string_new ("[");
  g_autoptr(InspectorTraceModel) model = NULL;
  const guint n = (1u << 20) + 3;
  const gchar *preload = g_getenv ("LD_PRELOAD");
  guint first, count;

  if (preload && strstr (preload, "vgpreload"))
    {
      g_test_skip ("too slow under valgrind");
      return;
    }
  for (guint i = 0; i < n; i++)
    g_string_append_printf (json, "%s{\"ph\":\"X\",\"ts\":%u.5,\"dur\":0.25,\"pid\":1,\"tid\":1,\"name\":\"k\"}",
                            i ? "," : "", i);
  g_string_append (json, "]");
  model = load_string (json->str);
  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, n);
  inspector_trace_model_get_lane_range (model, 0, &first, &count);
  g_assert_cmpuint (count, ==, n);
  /* the oldest is still there */
  g_assert_cmpfloat (inspector_trace_model_get_slice (model, 0)->start, ==, 0);
  /* culling: a view late in the trace starts at its slice, by binary search */
  g_assert_cmpuint (inspector_trace_model_find_visible (model, 0, 1000000.1), ==, 1000000);
  g_assert_cmpuint (inspector_trace_model_find_start (model, 0, 999999.5), ==, 1000000);
}

/* the demo's workload as the H100 ran it (tests/inspector/test-gpu-inspector-trace) */
static void
test_trace_from_gpu (void)
{
  g_autofree gchar *path = g_test_build_filename (G_TEST_DIST, "fixture-gpu-demo-trace.json", NULL);
  g_autoptr(InspectorTraceModel) model = inspector_trace_model_new ();
  g_autoptr(GError) error = NULL;
  const gchar *launches[] = { "launch saxpy", "launch scale<float>", "launch reduce_sum" };

  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  /* every operation was timed: one GPU slice each */
  g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 58);
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
  /* uploads feed the kernels on another stream */
  g_assert_cmpuint (inspector_trace_model_get_n_flows (model), >, 0);
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
count_changed (gpointer  instance,
               guint    *n)
{
  (*n)++;
}

/* A live recorder is read through its own export, whatever its version. */
static void
test_trace_live_recorder (void)
{
  g_autoptr(InspectorTraceModel) model = inspector_trace_model_new ();
  g_autoptr(AtomrTraceRecorder) rec = atomr_trace_recorder_new (16);
  guint changed = 0;

  g_signal_connect (model, "changed", G_CALLBACK (count_changed), &changed);
  inspector_trace_model_set_recorder (model, rec);
  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), ==, 0);
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
  g_assert_cmpuint (inspector_trace_model_get_n_slices (model), >=, 3);
  g_assert_cmpuint (g_list_model_get_n_items (inspector_trace_model_get_statistics (model)), ==, 2);
  /* nothing new: no rebuild */
  inspector_trace_model_refresh (model);
  g_assert_cmpuint (changed, ==, 2);
}


/* Resource usage read from the CUBIN equals what ptxas -v reports for the
 * same compile, so the inspector needs no --ptxas-options=-v (which put
 * its compiles under other cache keys than the library's). */
static void
test_cubin_resources (void)
{
  const gchar *src =
    "extern \"C\" __global__ void stencil (const float *x, float *y, int n) {\n"
    "  __shared__ float tile[256 + 2];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  tile[threadIdx.x + 1] = i < n ? x[i] : 0.0f;\n"
    "  __syncthreads ();\n"
    "  if (i < n) y[i] = tile[threadIdx.x] + tile[threadIdx.x + 1] + tile[threadIdx.x + 2];\n"
    "}\n";
  g_autoptr(AtomrCompileOptions) plain = atomr_compile_options_new ();
  g_autoptr(AtomrCompileOptions) verbose = atomr_compile_options_new ();
  g_autoptr(AtomrModule) a = NULL, b = NULL;
  g_autoptr(GPtrArray) from_cubin = NULL, from_ptxas = NULL;
  g_autoptr(GError) error = NULL;
  InspectorKernelResources *x, *y;

  atomr_compile_options_set_arch (plain, "sm_90");
  atomr_compile_options_add_name_expression (plain, "stencil");
  atomr_compile_options_set_arch (verbose, "sm_90");
  atomr_compile_options_add_name_expression (verbose, "stencil");
  atomr_compile_options_add_extra_flag (verbose, "--ptxas-options=-v");
  a = atomr_nvrtc_compile (src, "stencil.cu", plain, NULL, &error);
  if (a == NULL && (g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED) ||
                    g_error_matches (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY)))
    {
      g_test_skip ("no NVRTC");
      return;
    }
  g_assert_no_error (error);
  b = atomr_nvrtc_compile (src, "stencil.cu", verbose, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (atomr_module_get_cubin (a));
  from_cubin = inspector_cubin_resources (atomr_module_get_cubin (a), "sm_90", &error);
  g_assert_no_error (error);
  from_ptxas = inspector_ptxas_parse (atomr_module_get_log (b));
  g_assert_cmpuint (from_cubin->len, ==, 1);
  g_assert_cmpuint (from_ptxas->len, ==, 1);
  x = g_ptr_array_index (from_cubin, 0);
  y = g_ptr_array_index (from_ptxas, 0);
  g_assert_cmpstr (x->function, ==, y->function);
  g_assert_cmpuint (x->registers, ==, y->registers);
  g_assert_cmpuint (x->registers, >, 0);
  g_assert_cmpuint (x->shared_bytes, ==, y->shared_bytes);
  g_assert_cmpuint (x->shared_bytes, ==, 258 * 4);
  g_assert_cmpuint (x->stack_bytes, ==, y->stack_bytes);

  /* not a CUBIN: an error, no crash */
  {
    g_autoptr(GBytes) junk = g_bytes_new_static ("\177ELF\2\1garbage", 14);
    g_autoptr(GPtrArray) none = inspector_cubin_resources (junk, NULL, &error);
    g_assert_null (none);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  }
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

/* The Cache page's filter chips: architecture, last used, size; they
 * combine with the search. */
static void
test_cache_filters (CacheFixture  *f,
                    gconstpointer  data)
{
  g_auto(GStrv) archs = NULL;
  GListModel *list = G_LIST_MODEL (f->model);

  if (f->model == NULL)
    return;
  archs = inspector_cache_model_dup_archs (f->model);
  g_assert_cmpuint (g_strv_length (archs), ==, 2);
  g_assert_cmpstr (archs[0], ==, "compute_80");
  g_assert_cmpstr (archs[1], ==, "sm_90");

  inspector_cache_model_set_filters (f->model, "sm_90", INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_ANY);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 2);
  inspector_cache_model_set_search (f->model, "beta");
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 1);
  inspector_cache_model_set_search (f->model, "gamma");   /* compute_80: filtered out */
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 0);
  inspector_cache_model_set_search (f->model, NULL);

  /* all three were just compiled: used today; all are small */
  inspector_cache_model_set_filters (f->model, NULL, INSPECTOR_CACHE_AGE_DAY, INSPECTOR_CACHE_SIZE_SMALL);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 3);
  inspector_cache_model_set_filters (f->model, NULL, INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_LARGE);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 0);
  inspector_cache_model_set_filters (f->model, "compute_80", INSPECTOR_CACHE_AGE_MONTH, INSPECTOR_CACHE_SIZE_SMALL);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 1);
  /* totals count the whole cache */
  g_assert_cmpuint (inspector_cache_model_get_n_entries (f->model), ==, 3);
  inspector_cache_model_set_filters (f->model, "", INSPECTOR_CACHE_AGE_ANY, INSPECTOR_CACHE_SIZE_ANY);
  g_assert_cmpuint (g_list_model_get_n_items (list), ==, 3);
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
  /* listed by a worker thread, not on the main thread (issue 19, item 11) */
  g_assert_cmpuint (inspector_cache_model_get_n_async_reloads (f->model), >=, 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/inspector/trace-model/lanes", test_trace_lanes);
  g_test_add_func ("/inspector/trace-model/begin-end", test_trace_begin_end);
  g_test_add_func ("/inspector/trace-model/flows", test_trace_flows);
  g_test_add_func ("/inspector/trace-model/no-drop", test_trace_no_drop);
  g_test_add_func ("/inspector/trace-model/statistics", test_trace_statistics);
  g_test_add_func ("/inspector/trace-model/host-only-operations", test_trace_host_only_operations);
  g_test_add_func ("/inspector/trace-model/percentile", test_percentile);
  g_test_add_func ("/inspector/trace-model/from-gpu", test_trace_from_gpu);
  g_test_add_func ("/inspector/trace-model/save-roundtrip", test_trace_save_roundtrip);
  g_test_add_func ("/inspector/trace-model/bad-file", test_trace_bad_file);
  g_test_add_func ("/inspector/trace-model/live-recorder", test_trace_live_recorder);
  g_test_add_func ("/inspector/diagnostics/parse", test_diagnostics_parse);
  g_test_add_func ("/inspector/diagnostics/garbage", test_diagnostics_garbage);
  g_test_add_func ("/inspector/diagnostics/ptxas", test_ptxas_parse);
  g_test_add_func ("/inspector/diagnostics/cubin-resources", test_cubin_resources);
  g_test_add_func ("/inspector/compiler/kernel-names", test_find_kernel_names);
  g_test_add_func ("/inspector/sass/tool", test_sass_tool);
  g_test_add_func ("/inspector/run/parse-args", test_run_parse_args);
  g_test_add_func ("/inspector/run/spawn", test_run_spawn);
  g_test_add ("/inspector/cache-model/list", CacheFixture, NULL, cache_setup, test_cache_list, cache_teardown);
  g_test_add ("/inspector/cache-model/search-sort", CacheFixture, NULL, cache_setup, test_cache_search_sort, cache_teardown);
  g_test_add ("/inspector/cache-model/filters", CacheFixture, NULL, cache_setup, test_cache_filters, cache_teardown);
  g_test_add ("/inspector/cache-model/remove-gc", CacheFixture, NULL, cache_setup, test_cache_remove_gc, cache_teardown);
  g_test_add ("/inspector/cache-model/monitor", CacheFixture, NULL, cache_setup, test_cache_monitor, cache_teardown);
  return g_test_run ();
}
