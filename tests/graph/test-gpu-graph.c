/* test-gpu-graph.c — AtomrGraph with real CUDA graphs
 *
 * Three actors (copy, NVRTC, cuBLAS) record a chain with hazards across
 * them; the graph is built by stream capture on the first replay and
 * replayed with new inputs; the result is checked element by element
 * against the CPU.  Also: DOT export from the driver, replay attribution
 * in the trace, and requests refused during a capture.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "../test-guard.h"

#define N 64          /* N x N matrices, column major */

static AtomrDevice *device;

static const gchar *kernel_source =
  "extern \"C\" __global__ void twice_plus (float *x, float k, unsigned long long n)\n"
  "{\n"
  "  unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    x[i] = 2.0f * x[i] + k;\n"
  "}\n";

/* Every test is stopped with a message naming it after this long: a hang
 * never takes the runner's whole limit (the 50 queued replays followed by
 * a blocking download once hung here for 150 s). */
#define GUARD_SECONDS 60

static gboolean
need_device (void)
{
  if (device == NULL)
    {
      g_test_skip ("no CUDA device");
      return FALSE;
    }
  test_guard_start (GUARD_SECONDS);
  return TRUE;
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static void
wait_for (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static AtomrBuffer *
buffer_with (const gfloat *data)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, N * N, &error);

  g_assert_no_error (error);
  if (data)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (data, N * N * sizeof (gfloat));
      g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
      g_assert_no_error (error);
    }
  return buffer;
}

static void
upload (AtomrBuffer *buffer, const gfloat *data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (data, N * N * sizeof (gfloat));

  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
}

static gfloat *
download (AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);

  g_assert_no_error (error);
  return g_bytes_unref_to_data (g_steal_pointer (&bytes), &(gsize) { 0 });
}

static gfloat *
random_matrix (void)
{
  gfloat *v = g_new (gfloat, N * N);
  for (guint i = 0; i < N * N; i++)
    v[i] = (gfloat) g_random_double_range (-1, 1);
  return v;
}

/* C = (2 src + k) B, column major, in double. */
static void
check_result_k (const gfloat *src, const gfloat *b, const gfloat *c, gdouble k)
{
  for (guint j = 0; j < N; j++)
    for (guint i = 0; i < N; i++)
      {
        gdouble want = 0;
        for (guint l = 0; l < N; l++)
          want += (2.0 * src[i + l * N] + k) * b[l + j * N];
        g_assert_cmpfloat_with_epsilon (c[i + j * N], want, 1e-3 * (1 + fabs (want)));
      }
}

/* C = (2 src + 1) B, column major, in double. */
static void
check_result (const gfloat *src, const gfloat *b, const gfloat *c)
{
  for (guint j = 0; j < N; j++)
    for (guint i = 0; i < N; i++)
      {
        gdouble want = 0;
        for (guint l = 0; l < N; l++)
          want += (2.0 * src[i + l * N] + 1.0) * b[l + j * N];
        g_assert_cmpfloat_with_epsilon (c[i + j * N], want, 1e-3 * (1 + fabs (want)));
      }
}

typedef struct
{
  AtomrActor      *copy;
  AtomrNvrtcActor *nvrtc;
  AtomrBlasActor  *blas;
  AtomrKernel     *kernel;
} Actors;

static void
actors_init (Actors *s)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(AtomrBuffer) warm = buffer_with (NULL);
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (N * N, 256);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();

  s->copy = ATOMR_ACTOR (atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error));
  g_assert_no_error (error);
  atomr_actor_set_name (s->copy, "graph-copy");
  s->nvrtc = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  s->blas = atomr_blas_actor_new (device, &error);
  g_assert_no_error (error);
  /* TF32 would miss the tolerance: plain FP32 GEMM. */
  atomr_blas_actor_set_math_mode (s->blas, ATOMR_BLAS_MATH_DEFAULT);

  atomr_nvrtc_actor_compile_async (s->nvrtc, kernel_source, "twice_plus", NULL, NULL, store_result, &result);
  wait_for (&result);
  s->kernel = atomr_nvrtc_actor_compile_finish (s->nvrtc, result, &error);
  g_assert_no_error (error);
  g_clear_object (&result);

  /* One eager launch: the module is loaded before any capture. */
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, warm), 0.0f),
                              N * N);
  atomr_nvrtc_actor_launch_async (s->nvrtc, s->kernel, config, args, NULL, store_result, &result);
  wait_for (&result);
  g_assert_true (atomr_nvrtc_actor_launch_finish (s->nvrtc, result, &error));
  g_assert_no_error (error);
}

static void
actors_clear (Actors *s)
{
  g_clear_object (&s->kernel);
  g_clear_object (&s->copy);
  g_clear_object (&s->nvrtc);
  g_clear_object (&s->blas);
}

/* copy A <- src; A = 2A + 1 (NVRTC); C = A B (cuBLAS); fill A = 0 (copy):
 * read-after-write copy -> kernel -> gemm across three actors, and a
 * write-after-read gemm -> fill. */
static AtomrGraph *
record_chain (Actors *s, AtomrBuffer *src, AtomrBuffer *a, AtomrBuffer *b, AtomrBuffer *c)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL, r4 = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (N * N, 256);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  AtomrActor *actors[] = { s->copy, ATOMR_ACTOR (s->nvrtc), ATOMR_ACTOR (s->blas) };
  AtomrGraph *graph = atomr_graph_new ("chain");

  g_assert_true (atomr_graph_begin_capture (graph, actors, G_N_ELEMENTS (actors), &error));
  g_assert_no_error (error);
  atomr_actor_copy_async (s->copy, a, src, NULL, store_result, &r1);
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, a), 1.0f),
                              N * N);
  atomr_nvrtc_actor_launch_async (s->nvrtc, s->kernel, config, args, NULL, store_result, &r2);
  atomr_blas_actor_gemm_async (s->blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, N, N, N, 1.0, 0.0,
                               a, N, b, N, 0.0, 0.0, c, N, NULL, store_result, &r3);
  atomr_actor_fill_async (s->copy, a, 0.0, NULL, store_result, &r4);
  wait_for (&r1);
  wait_for (&r2);
  wait_for (&r3);
  wait_for (&r4);
  g_assert_true (atomr_actor_copy_finish (s->copy, r1, &error));
  g_assert_true (atomr_nvrtc_actor_launch_finish (s->nvrtc, r2, &error));
  g_assert_true (atomr_blas_actor_gemm_finish (s->blas, r3, &error));
  g_assert_true (atomr_actor_fill_finish (s->copy, r4, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (graph), ==, 4);
  return graph;
}

static void
replay (AtomrGraph *graph, AtomrActor *actor)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;

  atomr_graph_replay_async (graph, actor, NULL, store_result, &result);
  wait_for (&result);
  g_assert_true (atomr_graph_replay_finish (graph, result, &error));
  g_assert_no_error (error);
}

static void
test_capture_replay (void)
{
  Actors s = { 0 };
  g_autofree gfloat *src1 = NULL, *src2 = NULL, *bm = NULL, *got = NULL, *zeros = NULL;
  g_autoptr(AtomrBuffer) src = NULL, a = NULL, b = NULL, c = NULL;
  g_autoptr(AtomrGraph) graph = NULL;

  if (!need_device ())
    return;
  actors_init (&s);
  src1 = random_matrix ();
  src2 = random_matrix ();
  bm = random_matrix ();
  src = buffer_with (src1);
  a = buffer_with (NULL);
  b = buffer_with (bm);
  c = buffer_with (NULL);
  zeros = g_new0 (gfloat, N * N);
  upload (c, zeros);

  graph = record_chain (&s, src, a, b, c);
  /* Nothing ran during the capture. */
  got = download (c);
  g_assert_cmpmem (got, N * N * sizeof (gfloat), zeros, N * N * sizeof (gfloat));
  g_clear_pointer (&got, g_free);
  g_assert_false (atomr_graph_get_instantiated (graph));

  replay (graph, s.copy);
  g_assert_true (atomr_graph_get_instantiated (graph));
  got = download (c);
  check_result (src1, bm, got);
  g_clear_pointer (&got, g_free);
  got = download (a);
  g_assert_cmpmem (got, N * N * sizeof (gfloat), zeros, N * N * sizeof (gfloat));
  g_clear_pointer (&got, g_free);

  /* New input, same graph, another replaying actor. */
  upload (src, src2);
  replay (graph, ATOMR_ACTOR (s.blas));
  got = download (c);
  check_result (src2, bm, got);
  g_clear_pointer (&got, g_free);
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 2);

  /* Many replays back to back, then one check: ordered on the GPU. */
  upload (src, src1);
  for (guint i = 0; i < 50; i++)
    atomr_graph_replay_async (graph, s.copy, NULL, NULL, NULL);
  got = download (c);
  check_result (src1, bm, got);

  g_clear_object (&graph);
  actors_clear (&s);
}

static void
test_dot_and_attribution (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree gfloat *m = NULL;
  g_autoptr(AtomrBuffer) src = NULL, a = NULL, b = NULL, c = NULL;
  g_autoptr(AtomrGraph) graph = NULL;
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (256);
  g_autofree gchar *dot = NULL, *json = NULL, *path = NULL;

  if (!need_device ())
    return;
  actors_init (&s);
  m = random_matrix ();
  src = buffer_with (m);
  a = buffer_with (NULL);
  b = buffer_with (m);
  c = buffer_with (NULL);
  graph = record_chain (&s, src, a, b, c);

  /* Before the first replay: atomr's node graph. */
  dot = atomr_graph_to_dot (graph, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "launch #2 on"));
  g_assert_nonnull (strstr (dot, "gemm #1 on"));
  g_clear_pointer (&dot, g_free);

  atomr_trace_recorder_add_actor (recorder, s.copy);
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (s.nvrtc));
  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (s.blas));
  replay (graph, s.copy);

  /* The driver's dump once instantiated. */
  path = g_build_filename (g_get_tmp_dir (), "atomr-test-gpu-graph.dot", NULL);
  g_assert_true (atomr_graph_write_dot (graph, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &dot, NULL, &error));
  g_assert_nonnull (strstr (dot, "digraph"));
  g_test_message ("driver DOT: %" G_GSIZE_FORMAT " bytes, names the kernel: %s", strlen (dot),
                  strstr (dot, "twice_plus") ? "yes" : "no");
  g_remove (path);

  /* One record for the replay, one per node, on their own actors. */
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 5);
  json = atomr_trace_recorder_to_json (recorder);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree gchar *name = atomr_graph_get_node_name (graph, i);
      g_autofree gchar *needle = g_strdup_printf ("recorded as %s", name);
      g_assert_nonnull (strstr (json, needle));
    }
  g_assert_nonnull (strstr (json, "graph-replay"));

  g_clear_object (&graph);
  actors_clear (&s);
}

static void
note_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  GString *details = user_data;

  if (g_strcmp0 (atomr_launch_info_get_operation (info), "graph-replay") == 0)
    g_string_append_printf (details, "%s\n", atomr_launch_info_get_detail (info));
}

/* New kernel arguments between replays: a scalar of the chain's launch,
 * then a fresh buffer in a one-launch graph; both applied to the
 * instantiated graph in place (no new instantiation), the replay's trace
 * record says so, and the results follow the new arguments. */
static void
test_kernel_args (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree gfloat *src1 = NULL, *bm = NULL, *got = NULL, *w0 = NULL, *x0 = NULL;
  g_autoptr(AtomrBuffer) src = NULL, a = NULL, b = NULL, c = NULL, x = NULL, w = NULL;
  g_autoptr(AtomrGraph) graph = NULL;
  g_autoptr(AtomrGraph) one = atomr_graph_new ("one-launch");
  g_autoptr(AtomrKernelArgs) args = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (N * N, 256);
  g_autoptr(GAsyncResult) r = NULL;
  g_autoptr(GString) details = g_string_new (NULL);
  AtomrActor *nvrtc_only[1];
  gulong id;

  if (!need_device ())
    return;
  actors_init (&s);
  src1 = random_matrix ();
  bm = random_matrix ();
  src = buffer_with (src1);
  a = buffer_with (NULL);
  b = buffer_with (bm);
  c = buffer_with (NULL);

  graph = record_chain (&s, src, a, b, c);
  replay (graph, s.copy);
  got = download (c);
  check_result_k (src1, bm, got, 1.0);
  g_clear_pointer (&got, g_free);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (graph), ==, 1);

  /* Node 1 is the launch twice_plus (a, k, n): k = 5 now. */
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, a), 5.0f),
                              N * N);
  g_assert_true (atomr_graph_set_kernel_args (graph, 1, args, &error));
  g_assert_no_error (error);
  id = g_signal_connect (s.copy, "after-complete", G_CALLBACK (note_detail), details);
  replay (graph, s.copy);
  g_signal_handler_disconnect (s.copy, id);
  got = download (c);
  check_result_k (src1, bm, got, 5.0);
  g_clear_pointer (&got, g_free);
  g_test_message ("replay detail: %s", details->str);
  g_assert_nonnull (strstr (details->str, "updated in place"));
  g_assert_cmpuint (atomr_graph_get_n_updates (graph), ==, 1);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (graph), ==, 1);

  /* A fresh buffer: x stays as it was, w takes the work. */
  x0 = random_matrix ();
  w0 = random_matrix ();
  x = buffer_with (x0);
  w = buffer_with (w0);
  nvrtc_only[0] = ATOMR_ACTOR (s.nvrtc);
  g_clear_pointer (&args, atomr_kernel_args_unref);
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, x), 1.0f),
                              N * N);
  g_assert_true (atomr_graph_begin_capture (one, nvrtc_only, 1, &error));
  atomr_nvrtc_actor_launch_async (s.nvrtc, s.kernel, config, args, NULL, store_result, &r);
  wait_for (&r);
  g_assert_true (atomr_nvrtc_actor_launch_finish (s.nvrtc, r, &error));
  g_assert_true (atomr_graph_end_capture (one, &error));
  g_assert_no_error (error);
  replay (one, ATOMR_ACTOR (s.nvrtc));          /* x = 2 x0 + 1 */
  g_clear_pointer (&args, atomr_kernel_args_unref);
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, w), 3.0f),
                              N * N);
  g_assert_true (atomr_graph_set_kernel_args (one, 0, args, &error));
  g_assert_no_error (error);
  replay (one, ATOMR_ACTOR (s.nvrtc));          /* w = 2 w0 + 3 */
  got = download (x);
  for (guint i = 0; i < N * N; i++)
    g_assert_cmpfloat_with_epsilon (got[i], 2.0f * x0[i] + 1.0f, 1e-5);
  g_clear_pointer (&got, g_free);
  got = download (w);
  for (guint i = 0; i < N * N; i++)
    g_assert_cmpfloat_with_epsilon (got[i], 2.0f * w0[i] + 3.0f, 1e-5);
  g_assert_cmpuint (atomr_graph_get_n_updates (one), ==, 1);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (one), ==, 1);

  g_clear_object (&graph);
  g_clear_object (&one);
  actors_clear (&s);
}

static void
test_refused (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) a = NULL;
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("refused");
  g_autoptr(GAsyncResult) r = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree gfloat *m = NULL;
  AtomrActor *actors[] = { NULL };

  if (!need_device ())
    return;
  actors_init (&s);
  actors[0] = s.copy;
  m = random_matrix ();
  a = buffer_with (NULL);
  bytes = g_bytes_new (m, N * N * sizeof (gfloat));
  g_assert_true (atomr_graph_begin_capture (graph, actors, 1, &error));
  atomr_actor_upload_async (s.copy, a, bytes, NULL, store_result, &r);
  wait_for (&r);
  g_assert_false (atomr_actor_upload_finish (s.copy, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_assert_false (atomr_graph_end_capture (graph, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  /* The actor works normally afterwards. */
  upload (a, m);
  actors_clear (&s);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, NULL);
  device = atomr_device_get (0, &error);
  if (device == NULL)
    g_test_message ("skipping: %s", error->message);

  g_test_add_func ("/gpu/graph/capture-replay", test_capture_replay);
  g_test_add_func ("/gpu/graph/dot-and-attribution", test_dot_and_attribution);
  g_test_add_func ("/gpu/graph/refused", test_refused);
  g_test_add_func ("/gpu/graph/kernel-args", test_kernel_args);
  ret = g_test_run ();
  test_guard_stop ();
  return ret;
}
