/* test-gpu-inspector-trace.c — a trace recorded live on the GPU, read by the inspector
 *
 * Records an NVRTC actor (compile, 64 saxpy launches) and a copy actor
 * (upload, fill, download) with AtomrTraceRecorder, checks the result of
 * the kernels, saves the trace as Chrome JSON — to $OUT/inspector-gpu-trace.json
 * when $OUT is set (the GPU machine hands that folder back), else to the
 * build directory — and loads it into the inspector's trace model.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <atomr.h>
#include <glib/gstdio.h>
#include <math.h>

#include "inspector-compiler.h"
#include "inspector-demo-workload.h"
#include "inspector-operation-stats.h"
#include "inspector-trace-model.h"

#define N        (1u << 20)
#define LAUNCHES 64

static const gchar saxpy_source[] =
  "extern \"C\" __global__ void\n"
  "saxpy (float a, const float *__restrict__ x, float *__restrict__ y, unsigned int n)\n"
  "{\n"
  "  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    y[i] = a * x[i] + y[i];\n"
  "}\n";

typedef struct {
  GMainLoop   *loop;
  guint        pending;
  GError      *error;
  AtomrKernel *kernel;
  GBytes      *result;
} Run;

static void
done_one (Run    *run,
          GError *error)
{
  if (error && run->error == NULL)
    run->error = error;
  else if (error)
    g_error_free (error);
  if (--run->pending == 0)
    g_main_loop_quit (run->loop);
}

static void
on_compiled (GObject *source, GAsyncResult *result, gpointer data)
{
  Run *run = data;
  GError *error = NULL;

  run->kernel = atomr_nvrtc_actor_compile_finish (ATOMR_NVRTC_ACTOR (source), result, &error);
  done_one (run, error);
}

static void
on_upload (GObject *source, GAsyncResult *result, gpointer data)
{
  GError *error = NULL;
  atomr_actor_upload_finish (ATOMR_ACTOR (source), result, &error);
  done_one (data, error);
}

static void
on_fill (GObject *source, GAsyncResult *result, gpointer data)
{
  GError *error = NULL;
  atomr_actor_fill_finish (ATOMR_ACTOR (source), result, &error);
  done_one (data, error);
}

static void
on_launch (GObject *source, GAsyncResult *result, gpointer data)
{
  GError *error = NULL;
  atomr_nvrtc_actor_launch_finish (ATOMR_NVRTC_ACTOR (source), result, &error);
  done_one (data, error);
}

static void
on_download (GObject *source, GAsyncResult *result, gpointer data)
{
  Run *run = data;
  GError *error = NULL;

  run->result = atomr_actor_download_finish (ATOMR_ACTOR (source), result, &error);
  done_one (run, error);
}

static void
wait_all (Run *run)
{
  if (run->pending > 0)
    g_main_loop_run (run->loop);
  g_assert_no_error (run->error);
}

/* Operations in the trace, each once, GPU slice or not: a compile's cache
 * lookup, NVRTC and module load are host-only operations (the recorder
 * writes them as host lifecycles without a GPU slice). */
static guint
n_operations (InspectorTraceModel *model)
{
  return inspector_trace_model_get_n_operations (model);
}

/* Lanes of CUDA streams (GPU lanes, or a version 1 trace's stream rows). */
static guint
n_stream_lanes (InspectorTraceModel *model)
{
  guint n = 0;

  for (guint i = 0; i < inspector_trace_model_get_n_lanes (model); i++)
    if (inspector_trace_model_get_lane_kind (model, i) == INSPECTOR_LANE_GPU ||
        inspector_trace_model_get_lane_kind (model, i) == INSPECTOR_LANE_THREAD)
      n++;
  return n;
}

static void
test_gpu_trace (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrNvrtcActor) nvrtc = NULL;
  g_autoptr(AtomrCopyActor) copy = NULL;
  g_autoptr(AtomrTraceRecorder) rec = NULL;
  g_autoptr(AtomrBuffer) x = NULL, y = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrLaunchConfig) config = NULL;
  g_autoptr(AtomrKernelArgs) args = NULL;
  g_autoptr(InspectorTraceModel) model = NULL;
  g_autoptr(GBytes) ones = NULL;
  g_autofree gfloat *host = g_new (gfloat, N);
  g_autofree gchar *path = NULL;
  g_autofree gchar *cache_dir = NULL;
  g_autoptr(AtomrKernelCache) cache = NULL;
  GListModel *stats;
  Run run = { 0 };
  const gfloat *out;
  guint n_launch = 0;
  gboolean timed = FALSE;

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return;
    }
  run.loop = g_main_loop_new (NULL, FALSE);
  nvrtc = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  copy = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  cache_dir = g_dir_make_tmp ("inspector-gpu-cache-XXXXXX", NULL);
  cache = atomr_kernel_cache_new (cache_dir);
  atomr_nvrtc_actor_set_cache (nvrtc, cache);
  atomr_actor_set_name (ATOMR_ACTOR (nvrtc), "kernels");
  atomr_actor_set_name (ATOMR_ACTOR (copy), "copies");
  atomr_actor_set_timing (ATOMR_ACTOR (nvrtc), TRUE);
  atomr_actor_set_timing (ATOMR_ACTOR (copy), TRUE);
  rec = atomr_trace_recorder_new (1024);
  atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (nvrtc));
  atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (copy));

  /* compile on the actor (the architecture of the device) */
  options = atomr_compile_options_new ();
  run.pending = 1;
  atomr_nvrtc_actor_compile_async (nvrtc, saxpy_source, "saxpy", options, NULL, on_compiled, &run);
  wait_all (&run);
  g_assert_nonnull (run.kernel);

  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, N, &error);
  g_assert_no_error (error);
  y = atomr_buffer_new (device, ATOMR_DTYPE_F32, N, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < N; i++)
    host[i] = 1.0f;
  ones = g_bytes_new (host, sizeof (gfloat) * N);

  run.pending = 2 + LAUNCHES + 1;
  atomr_actor_upload_async (ATOMR_ACTOR (copy), x, ones, NULL, on_upload, &run);
  atomr_actor_fill_async (ATOMR_ACTOR (copy), y, 2.0, NULL, on_fill, &run);
  config = atomr_launch_config_new_1d (N, 256);
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_f32 (args, 0.5f);
  atomr_kernel_args_add_buffer_read_only (args, x);
  atomr_kernel_args_add_buffer (args, y);
  atomr_kernel_args_add_u32 (args, N);
  for (guint i = 0; i < LAUNCHES; i++)
    atomr_nvrtc_actor_launch_async (nvrtc, run.kernel, config, args, NULL, on_launch, &run);
  atomr_actor_download_async (ATOMR_ACTOR (copy), y, NULL, on_download, &run);
  wait_all (&run);

  /* y = 2 + 64 × 0.5 × 1 */
  g_assert_cmpuint (g_bytes_get_size (run.result), ==, sizeof (gfloat) * N);
  out = g_bytes_get_data (run.result, NULL);
  g_assert_cmpfloat (out[0], ==, 34.0f);
  g_assert_cmpfloat (out[N / 2], ==, 34.0f);
  g_assert_cmpfloat (out[N - 1], ==, 34.0f);

  /* save where the GPU machine hands files back, then read it as the inspector does */
  if (g_getenv ("OUT") && *g_getenv ("OUT"))
    path = g_build_filename (g_getenv ("OUT"), "inspector-gpu-trace.json", NULL);
  else
    path = g_test_build_filename (G_TEST_BUILT, "inspector-gpu-trace.json", NULL);
  g_assert_true (atomr_trace_recorder_save (rec, path, &error));
  g_assert_no_error (error);
  g_test_message ("trace: %u records in %s", atomr_trace_recorder_get_n_records (rec), path);

  model = inspector_trace_model_new ();
  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (n_operations (model), ==, atomr_trace_recorder_get_n_records (rec));
  /* on the GPU: upload, fill, the launches, download; the compile's spans
   * (cache lookup, NVRTC, module load) only on the host */
  g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 3 + LAUNCHES);
  g_assert_cmpuint (n_operations (model), >, 3 + LAUNCHES);
  g_assert_cmpuint (n_stream_lanes (model), ==, 2);
  g_assert_cmpfloat (inspector_trace_model_get_duration (model), >, 0);
  stats = inspector_trace_model_get_statistics (model);
  for (guint i = 0; i < g_list_model_get_n_items (stats); i++)
    {
      g_autoptr(InspectorOperationStats) st = g_list_model_get_item (stats, i);
      g_test_message ("%s %s: count %u total %.1f µs mean %.1f p50 %.1f p99 %.1f",
                      inspector_operation_stats_get_library (st), inspector_operation_stats_get_operation (st),
                      inspector_operation_stats_get_count (st), inspector_operation_stats_get_total_us (st),
                      inspector_operation_stats_get_mean_us (st), inspector_operation_stats_get_p50_us (st),
                      inspector_operation_stats_get_p99_us (st));
      if (g_str_equal (inspector_operation_stats_get_operation (st), "launch saxpy"))
        {
          n_launch = inspector_operation_stats_get_count (st);
          g_assert_cmpfloat (inspector_operation_stats_get_p50_us (st), >, 0);
          g_assert_cmpfloat (inspector_operation_stats_get_p99_us (st), >=, inspector_operation_stats_get_p50_us (st));
        }
    }
  g_assert_cmpuint (n_launch, ==, LAUNCHES);
  /* timed with events: GPU slices, each no longer than its host lifecycle */
  timed = inspector_trace_model_get_n_gpu_slices (model) > 0;
  g_assert_true (timed);
  for (guint i = 0; i < inspector_trace_model_get_n_slices (model); i++)
    {
      const InspectorSlice *s = inspector_trace_model_get_slice (model, i);
      if (s->kind == INSPECTOR_SLICE_GPU && s->peer >= 0)
        g_assert_cmpfloat (s->dur, <=, inspector_trace_model_get_slice (model, s->peer)->dur + 1e-3);
    }

  g_clear_object (&run.kernel);
  g_clear_pointer (&run.result, g_bytes_unref);
  g_main_loop_unref (run.loop);
  g_clear_object (&cache);
  {
    g_autoptr(GDir) dir = g_dir_open (cache_dir, 0, NULL);
    const gchar *name;
    while (dir && (name = g_dir_read_name (dir)))
      {
        g_autofree gchar *child = g_build_filename (cache_dir, name, NULL);
        g_remove (child);
      }
    g_rmdir (cache_dir);
  }
}

static void
on_module (GObject *source, GAsyncResult *result, gpointer data)
{
  GError *error = NULL;
  AtomrModule **out = data;

  *out = inspector_compile_finish (result, &error);
  g_assert_no_error (error);
}

static void
on_workload (GObject *source, GAsyncResult *result, gpointer data)
{
  GAsyncResult **out = data;
  *out = g_object_ref (result);
}

static guint
count_of (InspectorTraceModel *model,
          const gchar         *label)
{
  GListModel *stats = inspector_trace_model_get_statistics (model);

  for (guint i = 0; i < g_list_model_get_n_items (stats); i++)
    {
      g_autoptr(InspectorOperationStats) st = g_list_model_get_item (stats, i);
      if (g_str_equal (inspector_operation_stats_get_operation (st), label))
        return inspector_operation_stats_get_count (st);
    }
  return 0;
}

/* Exactly what `atomr-inspector --demo` runs on a GPU, minus the window;
 * @data non-NULL: with the cuBLAS, cuFFT and cuRAND actors too. */
static void
test_gpu_demo_workload (gconstpointer data)
{
  gboolean with_math = data != NULL;
  const gchar *files[3] = { "saxpy.cu", "reduce.cu", "scale.cu" };
  const gchar *names[3] = { "saxpy", "reduce_sum", "scale<float>" };
  const guint rounds = 8;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrNvrtcActor) nvrtc = NULL;
  g_autoptr(AtomrCopyActor) up = NULL, copy = NULL;
  g_autoptr(AtomrBlasActor) blas = NULL;
  g_autoptr(AtomrFftActor) fft = NULL;
  g_autoptr(AtomrRngActor) rng = NULL;
  g_autoptr(AtomrTraceRecorder) rec = NULL;
  g_autoptr(InspectorTraceModel) model = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autofree gchar *path = NULL;
  AtomrModule *modules[3] = { NULL, NULL, NULL };
  gdouble sum = 0, expected;

  if (device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      g_test_skip ("no CUDA device");
      return;
    }
  nvrtc = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  up = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  copy = atomr_copy_actor_new (device, &error);
  g_assert_no_error (error);
  atomr_actor_set_name (ATOMR_ACTOR (nvrtc), "demo-kernels");
  atomr_actor_set_name (ATOMR_ACTOR (up), "demo-upload");
  atomr_actor_set_name (ATOMR_ACTOR (copy), "demo-copy");
  rec = atomr_trace_recorder_new (4096);
  atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (nvrtc));
  atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (up));
  atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (copy));
  for (guint i = 0; i < 3; i++)
    atomr_actor_set_timing (i == 0 ? ATOMR_ACTOR (nvrtc) : i == 1 ? ATOMR_ACTOR (up) : ATOMR_ACTOR (copy), TRUE);
  if (with_math)
    {
      blas = atomr_blas_actor_new (device, &error);
      g_assert_no_error (error);
      fft = atomr_fft_actor_new (device, &error);
      g_assert_no_error (error);
      rng = atomr_rng_actor_new (device, ATOMR_RNG_PHILOX, &error);
      g_assert_no_error (error);
      atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (blas));
      atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (fft));
      atomr_trace_recorder_add_actor (rec, ATOMR_ACTOR (rng));
      /* timed, as the demo does (inspector-demo.c) */
      atomr_actor_set_timing (ATOMR_ACTOR (blas), TRUE);
      atomr_actor_set_timing (ATOMR_ACTOR (fft), TRUE);
      atomr_actor_set_timing (ATOMR_ACTOR (rng), TRUE);
    }

  for (guint i = 0; i < 3; i++)
    {
      g_autofree gchar *source = inspector_demo_kernel_source (files[i]);
      g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();

      g_assert_nonnull (source);
      atomr_compile_options_set_std (options, "c++17");
      atomr_compile_options_add_name_expression (options, names[i]);
      inspector_compile_async (nvrtc, source, files[i], options, NULL, NULL, on_module, &modules[i]);
      while (modules[i] == NULL)
        g_main_context_iteration (NULL, TRUE);
    }

  inspector_demo_workload_run_async (nvrtc, ATOMR_ACTOR (up), ATOMR_ACTOR (copy),
                                     modules[0], modules[1], modules[2],
                                     blas, fft, rng, rounds,
                                     NULL, on_workload, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (inspector_demo_workload_run_finish (result, &sum, &error));
  g_assert_no_error (error);
  expected = inspector_demo_workload_expected_sum (rounds);
  g_test_message ("demo: Σ y = %.6g on the GPU, %.6g on the host", sum, expected);
  g_assert_cmpfloat (fabs (sum - expected), <=, 1e-3 * expected);

  if (g_getenv ("OUT") && *g_getenv ("OUT"))
    path = g_build_filename (g_getenv ("OUT"), with_math ? "inspector-demo-math-trace.json"
                                                          : "inspector-demo-trace.json", NULL);
  else
    path = g_test_build_filename (G_TEST_BUILT, with_math ? "inspector-demo-math-trace.json"
                                                          : "inspector-demo-trace.json", NULL);
  g_assert_true (atomr_trace_recorder_save (rec, path, &error));
  g_assert_no_error (error);
  model = inspector_trace_model_new ();
  g_assert_true (inspector_trace_model_load (model, path, &error));
  g_assert_no_error (error);
  g_test_message ("demo trace: %u records on %u tracks in %s", n_operations (model),
                  inspector_trace_model_get_n_lanes (model), path);
  if (with_math)
    {
      g_assert_cmpuint (n_stream_lanes (model), ==, 6);
      /* on the GPU: 2 set-up copies and a fill of the FFT's signal; per
       * round 7 of the kernels and copies, an RNG fill, a GEMM and two FFTs */
      g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 3 + 11 * rounds);
      g_assert_cmpuint (count_of (model, "gemm"), ==, rounds);
      g_assert_cmpuint (count_of (model, "fft"), ==, 2 * rounds);
      g_assert_cmpuint (count_of (model, "rng-fill"), ==, rounds);
    }
  else
    {
      g_assert_cmpuint (n_stream_lanes (model), ==, 3);
      g_assert_cmpuint (inspector_trace_model_get_n_gpu_slices (model), ==, 2 + 7 * rounds);
    }
  /* the three compiles are host-only operations */
  g_assert_cmpuint (n_operations (model), ==, atomr_trace_recorder_get_n_records (rec));
  g_assert_cmpuint (n_operations (model), >, inspector_trace_model_get_n_gpu_slices (model));
  g_assert_cmpuint (count_of (model, "launch saxpy"), ==, rounds);
  g_assert_cmpuint (count_of (model, "launch reduce_sum"), ==, rounds);
  g_assert_cmpuint (count_of (model, "launch scale<float>"), ==, rounds);
  for (guint i = 0; i < 3; i++)
    g_object_unref (modules[i]);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/inspector/gpu/live-trace", test_gpu_trace);
  g_test_add_data_func ("/inspector/gpu/demo-workload", NULL, test_gpu_demo_workload);
  g_test_add_data_func ("/inspector/gpu/demo-workload-math", "math", test_gpu_demo_workload);
  return g_test_run ();
}
