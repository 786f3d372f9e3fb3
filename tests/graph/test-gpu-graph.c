/* test-gpu-graph.c — AtomrGraph with real CUDA graphs
 *
 * Three actors (copy, NVRTC, cuBLAS) record a chain with hazards across
 * them; the graph is built by stream capture on the first replay and
 * replayed with new inputs; the result is checked element by element
 * against the CPU.  Also: DOT export from the driver, replay attribution
 * in the trace, requests refused during a capture, and conditional nodes
 * (if and while) whose condition a kernel of the graph sets.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "graph/atomr-graph-private.h"
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

  /* A slot still holding an earlier result would be finished twice (or
   * the earlier result in place of this one): every slot is cleared
   * before it is passed again. */
  g_assert_null (*out);
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

/* A captured graph embedded in another: inner = twice_plus (a, 1) on the
 * NVRTC actor; outer = a <- src (copy), inner, C = A B (cuBLAS).  Replayed
 * twice with new input; the result checked against the CPU. */
static void
test_child_graph (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree gfloat *src1 = NULL, *src2 = NULL, *bm = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) src = NULL, a = NULL, b = NULL, c = NULL;
  g_autoptr(AtomrGraph) inner = atomr_graph_new ("inner");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (N * N, 256);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL, r4 = NULL;
  AtomrActor *inner_actors[1];
  AtomrActor *outer_actors[3];

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

  inner_actors[0] = ATOMR_ACTOR (s.nvrtc);
  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, a), 1.0f),
                              N * N);
  g_assert_true (atomr_graph_begin_capture (inner, inner_actors, 1, &error));
  atomr_nvrtc_actor_launch_async (s.nvrtc, s.kernel, config, args, NULL, store_result, &r1);
  wait_for (&r1);
  g_assert_true (atomr_graph_end_capture (inner, &error));
  g_assert_no_error (error);
  g_clear_object (&r1);

  outer_actors[0] = s.copy;
  outer_actors[1] = ATOMR_ACTOR (s.nvrtc);
  outer_actors[2] = ATOMR_ACTOR (s.blas);
  g_assert_true (atomr_graph_begin_capture (outer, outer_actors, 3, &error));
  atomr_actor_copy_async (s.copy, a, src, NULL, store_result, &r1);
  atomr_graph_replay_async (inner, ATOMR_ACTOR (s.nvrtc), NULL, store_result, &r2);
  atomr_blas_actor_gemm_async (s.blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, N, N, N, 1.0, 0.0,
                               a, N, b, N, 0.0, 0.0, c, N, NULL, store_result, &r3);
  wait_for (&r1);
  wait_for (&r2);
  wait_for (&r3);
  g_assert_true (atomr_graph_replay_finish (inner, r2, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (outer), ==, 3);

  replay (outer, s.copy);
  g_assert_true (atomr_graph_get_instantiated (outer));
  g_assert_true (atomr_graph_get_instantiated (inner));   /* captured for its parent */
  got = download (c);
  check_result (src1, bm, got);
  g_clear_pointer (&got, g_free);

  upload (src, src2);
  replay (outer, ATOMR_ACTOR (s.blas));
  got = download (c);
  check_result (src2, bm, got);
  g_clear_pointer (&got, g_free);

  /* The inner graph still replays on its own. */
  atomr_graph_replay_async (inner, ATOMR_ACTOR (s.nvrtc), NULL, store_result, &r4);
  wait_for (&r4);
  g_assert_true (atomr_graph_replay_finish (inner, r4, &error));
  g_assert_no_error (error);

  g_clear_object (&outer);
  g_clear_object (&inner);
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

/* ------------------------------------------------------------------ */
/* Conditional nodes                                                    */

/* The finish function of whichever replay @r answers; @r must answer one
 * (a result of another request here means a slot was passed again
 * without being cleared: wait_for() then returned the old result). */
static gboolean
replay_any_finish (AtomrGraph *graph, GAsyncResult *r, GError **error)
{
  g_autoptr(GObject) source = NULL;

  if (g_async_result_is_tagged (r, atomr_graph_replay_if_async))
    return atomr_graph_replay_if_finish (graph, r, error);
  if (g_async_result_is_tagged (r, atomr_graph_replay_while_async))
    return atomr_graph_replay_while_finish (graph, r, error);
  if (g_async_result_is_tagged (r, atomr_graph_replay_async))
    return atomr_graph_replay_finish (graph, r, error);
  if (g_async_result_is_tagged (r, atomr_graph_replay_switch_async))
    return atomr_graph_replay_switch_finish (r, error);
  g_error ("finish_replay: the result answers a request of %s, not a graph "
           "replay: a result slot passed again without g_clear_object?",
           G_OBJECT_TYPE_NAME (source = g_async_result_get_source_object (r)));
  return FALSE;
}

static const gchar *cond_source =
  "extern \"C\" __global__ void flag_if_greater (int *flag, const float *x, float threshold)\n"
  "{\n"
  "  if (blockIdx.x == 0 && threadIdx.x == 0)\n"
  "    *flag = x[0] > threshold ? 1 : 0;\n"
  "}\n"
  "extern \"C\" __global__ void add_scalar (float *y, float k, unsigned long long n)\n"
  "{\n"
  "  unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    y[i] += k;\n"
  "}\n"
  "extern \"C\" __global__ void count_down (int *counter, float *acc, unsigned long long n)\n"
  "{\n"
  "  unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    acc[i] += 1.0f;\n"
  "  if (i == 0)\n"
  "    *counter -= 1;\n"
  "}\n"
  "extern \"C\" __global__ void next_selector (int *sel, int modulo)\n"
  "{\n"
  "  if (blockIdx.x == 0 && threadIdx.x == 0)\n"
  "    *sel = (*sel + 1) % modulo;\n"
  "}\n"
  "extern \"C\" __global__ void inc (float *x)\n"
  "{\n"
  "  if (threadIdx.x == 0)\n"
  "    x[0] += 1.0f;\n"
  "}\n"
  "/* The device runtime's declaration (NVRTC has no runtime headers): a\n"
  " * builtin the driver resolves when it loads the module. */\n"
  "typedef unsigned long long cudaGraphConditionalHandle;\n"
  "extern \"C\" __device__ __cudart_builtin__ void\n"
  "cudaGraphSetConditional (cudaGraphConditionalHandle handle, unsigned int value);\n"
  "extern \"C\" __global__ void count_down_set (cudaGraphConditionalHandle handle, int *counter,\n"
  "                                             float *acc, unsigned long long n)\n"
  "{\n"
  "  unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x;\n"
  "  if (i < n)\n"
  "    acc[i] += 1.0f;\n"
  "  if (i == 0)\n"
  "    {\n"
  "      int left = *counter - 1;\n"
  "      *counter = left;\n"
  "      cudaGraphSetConditional (handle, left > 0 ? 1u : 0u);\n"
  "    }\n"
  "}\n";

static AtomrKernel *
compile_cond_kernel (AtomrNvrtcActor *nvrtc, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  AtomrKernel *kernel;

  atomr_nvrtc_actor_compile_async (nvrtc, cond_source, name, NULL, NULL, store_result, &result);
  wait_for (&result);
  kernel = atomr_nvrtc_actor_compile_finish (nvrtc, result, &error);
  g_assert_no_error (error);
  return kernel;
}

static AtomrBuffer *
i32_with (gint32 value)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (&value, sizeof value);
  AtomrBuffer *buffer = atomr_buffer_new (device, ATOMR_DTYPE_I32, 1, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  return buffer;
}

static gint32
i32_of (AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (bytes), ==, sizeof (gint32));
  return *(const gint32 *) g_bytes_get_data (bytes, NULL);
}

static void
assert_all (AtomrBuffer *buffer, gfloat want)
{
  g_autofree gfloat *got = download (buffer);

  for (guint i = 0; i < N * N; i++)
    if (got[i] != want)
      g_error ("element %u is %g, want %g", i, (double) got[i], (double) want);
}

/* Records one launch of @kernel with @args on @nvrtc into a new graph. */
static AtomrGraph *
record_launch (AtomrNvrtcActor *nvrtc, AtomrKernel *kernel, AtomrKernelArgs *args, guint threads,
               const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) r = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (threads, 256);
  AtomrActor *actors[] = { ATOMR_ACTOR (nvrtc) };
  AtomrGraph *graph = atomr_graph_new (name);

  g_assert_true (atomr_graph_begin_capture (graph, actors, 1, &error));
  atomr_nvrtc_actor_launch_async (nvrtc, kernel, config, args, NULL, store_result, &r);
  wait_for (&r);
  g_assert_true (atomr_nvrtc_actor_launch_finish (nvrtc, r, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);
  return graph;
}

static void
finish_replay (AtomrGraph *graph, GAsyncResult **r)
{
  g_autoptr(GError) error = NULL;

  wait_for (r);
  g_assert_true (replay_any_finish (graph, *r, &error));
  g_assert_no_error (error);
  g_clear_object (r);
}

static gboolean
contains_ci (const gchar *text, const gchar *needle)
{
  g_autofree gchar *a = g_ascii_strdown (text, -1);
  g_autofree gchar *b = g_ascii_strdown (needle, -1);
  return strstr (a, b) != NULL;
}

/* outer = flag = (x[0] > 0.5) (a kernel), then "if flag: y += 1" (a
 * conditional node whose body is a recorded launch).  Replayed with x
 * changed between replays: the body runs or is skipped on the GPU. */
static void
test_cond_if (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernel) k_flag = NULL, k_add = NULL;
  g_autoptr(AtomrBuffer) x = NULL, y = NULL, flag = NULL;
  g_autoptr(AtomrGraph) then = NULL;
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer-if");
  g_autoptr(AtomrKernelArgs) add_args = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) flag_args = atomr_kernel_args_new ();
  g_autoptr(AtomrLaunchConfig) one = atomr_launch_config_new_1d (1, 32);
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (256);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gfloat *xs = g_new0 (gfloat, N * N);
  g_autofree gchar *dot = NULL, *json = NULL, *path = NULL;
  AtomrActor *actors[1];

  if (!need_device ())
    return;
  actors_init (&s);
  k_flag = compile_cond_kernel (s.nvrtc, "flag_if_greater");
  k_add = compile_cond_kernel (s.nvrtc, "add_scalar");
  x = buffer_with (xs);
  y = buffer_with (xs);
  flag = i32_with (0);

  atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (add_args, y), 1.0f),
                              N * N);
  then = record_launch (s.nvrtc, k_add, add_args, N * N, "then");

  atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer_read_only (atomr_kernel_args_add_buffer (flag_args, flag), x),
                             0.5f);
  actors[0] = ATOMR_ACTOR (s.nvrtc);
  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_nvrtc_actor_launch_async (s.nvrtc, k_flag, one, flag_args, NULL, store_result, &r1);
  atomr_graph_replay_if_async (then, ATOMR_ACTOR (s.nvrtc), flag, NULL, store_result, &r2);
  wait_for (&r1);
  g_assert_true (atomr_nvrtc_actor_launch_finish (s.nvrtc, r1, &error));
  g_assert_no_error (error);
  finish_replay (then, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (outer), ==, 2);

  /* atomr's view before the CUDA graph exists: the conditional node and
   * its body. */
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "shape=diamond"));
  g_assert_nonnull (strstr (dot, "if condition != 0"));
  g_assert_nonnull (strstr (dot, "subgraph cluster_n1 {"));
  g_assert_nonnull (strstr (dot, "n0 -> n1;"));
  g_clear_pointer (&dot, g_free);

  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (s.nvrtc));
  xs[0] = 1.0f;                         /* taken */
  upload (x, xs);
  replay (outer, s.copy);
  g_assert_true (atomr_graph_get_instantiated (outer));
  g_assert_cmpint (i32_of (flag), ==, 1);
  assert_all (y, 1.0f);

  xs[0] = 0.0f;                         /* skipped */
  upload (x, xs);
  replay (outer, s.copy);
  g_assert_cmpint (i32_of (flag), ==, 0);
  assert_all (y, 1.0f);

  xs[0] = 2.0f;                         /* taken again, same instantiation */
  upload (x, xs);
  replay (outer, ATOMR_ACTOR (s.nvrtc));
  assert_all (y, 2.0f);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (outer), ==, 1);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, 3);

  /* Replay attribution reaches the body's node. */
  json = atomr_trace_recorder_to_json (recorder);
  g_assert_nonnull (strstr (json, "if-body graph then node 1/1"));
  g_assert_nonnull (strstr (json, "graph-if"));

  /* The driver's dump of the instantiated graph. */
  path = g_build_filename (g_get_tmp_dir (), "atomr-test-gpu-graph-if.dot", NULL);
  g_assert_true (atomr_graph_write_dot (outer, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &dot, NULL, &error));
  g_assert_nonnull (strstr (dot, "digraph"));
  g_test_message ("driver DOT of a conditional graph: %" G_GSIZE_FORMAT " bytes, says "
                  "\"conditional\": %s, names add_scalar: %s, atomr_cond_begin: %s", strlen (dot),
                  contains_ci (dot, "conditional") ? "yes" : "no",
                  strstr (dot, "add_scalar") ? "yes" : "no",
                  strstr (dot, "atomr_cond_begin") ? "yes" : "no");
  g_remove (path);

  /* Not recorded: the request runs the body once, or not.  flag is 1
   * from the last replay (x[0] = 2). */
  g_clear_object (&r1);
  atomr_graph_replay_if_async (then, ATOMR_ACTOR (s.nvrtc), flag, NULL, store_result, &r1);
  finish_replay (then, &r1);
  assert_all (y, 3.0f);
  g_clear_object (&flag);
  flag = i32_with (0);
  atomr_graph_replay_if_async (then, s.copy, flag, NULL, store_result, &r1);
  finish_replay (then, &r1);
  assert_all (y, 3.0f);
  g_clear_object (&flag);
  flag = i32_with (-7);                 /* any value but 0 is true */
  atomr_graph_replay_if_async (then, s.copy, flag, NULL, store_result, &r1);
  finish_replay (then, &r1);
  assert_all (y, 4.0f);

  g_clear_object (&outer);
  g_clear_object (&then);
  g_clear_object (&k_flag);
  g_clear_object (&k_add);
  actors_clear (&s);
}

/* outer = counter <- start (copy), then "while counter: acc += 1,
 * counter -= 1" (a conditional node whose body is a recorded launch):
 * the body runs start times, on the GPU; replayed with start changed. */
static void
test_cond_while (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernel) k_count = NULL;
  g_autoptr(AtomrBuffer) acc = NULL, counter = NULL, start = NULL;
  g_autoptr(AtomrGraph) loop = NULL;
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer-while");
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (256);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gfloat *zeros = g_new0 (gfloat, N * N);
  g_autofree gchar *json = NULL, *dot = NULL;
  const gint32 starts[] = { 5, 1, 0, 37 };
  AtomrActor *actors[2];

  if (!need_device ())
    return;
  actors_init (&s);
  k_count = compile_cond_kernel (s.nvrtc, "count_down");
  acc = buffer_with (zeros);
  counter = i32_with (0);
  start = i32_with (5);

  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (args, counter), acc),
                              N * N);
  loop = record_launch (s.nvrtc, k_count, args, N * N, "loop");

  actors[0] = s.copy;
  actors[1] = ATOMR_ACTOR (s.nvrtc);
  g_assert_true (atomr_graph_begin_capture (outer, actors, 2, &error));
  atomr_actor_copy_async (s.copy, counter, start, NULL, store_result, &r1);
  atomr_graph_replay_while_async (loop, ATOMR_ACTOR (s.nvrtc), counter, 1000, NULL, store_result, &r2);
  wait_for (&r1);
  g_assert_true (atomr_actor_copy_finish (s.copy, r1, &error));
  g_assert_no_error (error);
  finish_replay (loop, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "while condition != 0 (at most 1000)"));
  g_assert_nonnull (strstr (dot, "label=\"while-body: graph loop\";"));

  atomr_trace_recorder_add_actor (recorder, ATOMR_ACTOR (s.nvrtc));
  for (guint i = 0; i < G_N_ELEMENTS (starts); i++)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (&starts[i], sizeof starts[i]);

      g_assert_true (atomr_buffer_upload_sync (start, bytes, NULL, &error));
      g_assert_no_error (error);
      upload (acc, zeros);
      replay (outer, s.copy);
      assert_all (acc, (gfloat) starts[i]);
      g_assert_cmpint (i32_of (counter), ==, 0);
    }
  g_assert_cmpuint (atomr_graph_get_n_instantiations (outer), ==, 1);

  json = atomr_trace_recorder_to_json (recorder);
  g_assert_nonnull (strstr (json, "while-body graph loop node 1/1"));
  g_assert_nonnull (strstr (json, "recorded as launch #"));

  /* max_iterations stops the loop early; not recorded this time.  r1
   * still holds the copy's result from the capture: cleared, or
   * finish_replay() would take that for the while's result. */
  g_clear_object (&r1);
  g_clear_object (&counter);
  counter = i32_with (10);
  upload (acc, zeros);
  g_clear_pointer (&args, atomr_kernel_args_unref);
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (args, counter), acc),
                              N * N);
  g_assert_true (atomr_graph_set_kernel_args (loop, 0, args, &error));
  g_assert_no_error (error);
  atomr_graph_replay_while_async (loop, ATOMR_ACTOR (s.nvrtc), counter, 4, NULL, store_result, &r1);
  finish_replay (loop, &r1);
  assert_all (acc, 4.0f);
  g_assert_cmpint (i32_of (counter), ==, 6);

  g_clear_object (&outer);
  g_clear_object (&loop);
  g_clear_object (&k_count);
  actors_clear (&s);
}

/* A chain of 100 dependent launches of one actor: the CUDA graph holds
 * exactly its 100 kernel nodes (no event, empty or memset node between
 * them), every replay adds 100, and after a replay the next one asks for
 * a polling window about as long as a replay takes. */
static void
test_chain_structure (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernel) k_inc = NULL;
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrGraph) chain = atomr_graph_new ("chain-100");
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (32, 32);
  g_autoptr(GBytes) bytes = NULL;
  AtomrActor *actors[1];
  guint n_kernels = 0, n_other = 0;
  gfloat zero = 0.0f;

  if (!need_device ())
    return;
  actors_init (&s);
  k_inc = compile_cond_kernel (s.nvrtc, "inc");
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 1, &error);
  g_assert_no_error (error);
  bytes = g_bytes_new (&zero, sizeof zero);
  g_assert_true (atomr_buffer_upload_sync (x, bytes, NULL, &error));
  g_assert_no_error (error);
  atomr_kernel_args_add_buffer (args, x);

  actors[0] = ATOMR_ACTOR (s.nvrtc);
  g_assert_true (atomr_graph_begin_capture (chain, actors, 1, &error));
  for (guint k = 0; k < 100; k++)
    atomr_nvrtc_actor_launch_async (s.nvrtc, k_inc, config, args, NULL, NULL, NULL);
  g_assert_true (atomr_graph_end_capture (chain, &error));
  g_assert_no_error (error);
  g_assert_false (atomr_graph_count_cuda_nodes (chain, &n_kernels, &n_other, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (chain), ==, 0);

  for (guint i = 0; i < 5; i++)
    replay (chain, ATOMR_ACTOR (s.nvrtc));
  g_assert_true (atomr_graph_count_cuda_nodes (chain, &n_kernels, &n_other, &error));
  g_assert_no_error (error);
  g_test_message ("chain-100: %u kernel nodes, %u other nodes; next replay polls up to %u us",
                  n_kernels, n_other, atomr_graph_get_replay_spin_usec (chain));
  g_assert_cmpuint (n_kernels, ==, 100);
  g_assert_cmpuint (n_other, ==, 0);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (chain), ==, 1);
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (chain), >=, 20);
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (chain), <=, 2000);
  {
    g_autoptr(GBytes) got = atomr_buffer_download_sync (x, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (*(const gfloat *) g_bytes_get_data (got, NULL), ==, 500.0f);
  }

  g_clear_object (&chain);
  actors_clear (&s);
}

static gboolean
driver_has_switch (void)
{
  if (atomr_device_get_driver_version () >= 12080)
    return TRUE;
  g_test_skip_printf ("SWITCH conditional nodes need CUDA 12.8; the driver is %d",
                      atomr_device_get_driver_version ());
  return FALSE;
}

typedef struct
{
  GPtrArray *details;   /* gchar*: detail of every graph-switch record, in order */
  GPtrArray *branches;  /* gchar*: detail of every add_scalar record */
} SwitchSeen;

static void
on_switch_complete (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  SwitchSeen *seen = user_data;
  const gchar *operation = atomr_launch_info_get_operation (info);
  const gchar *detail = atomr_launch_info_get_detail (info);

  if (detail == NULL)
    return;
  if (g_str_equal (operation, "graph-switch") && strstr (detail, "replay #") != NULL)
    g_ptr_array_add (seen->details, g_strdup (detail));
  else if (strstr (detail, "> switch branch") != NULL)
    g_ptr_array_add (seen->branches, g_strdup (detail));
}

/* y += 1, 10 or 100: three branch graphs; outer = sel = (sel + 1) % 4,
 * then "switch sel" with three branches (3: none).  Replayed with the
 * selector from the host, then eight replays in flight at once that walk
 * the selector 0, 1, 2, 3, 0, ...: y against the CPU, and the trace says
 * which branch each replay ran. */
static void
test_cond_switch (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernel) k_add = NULL, k_next = NULL;
  g_autoptr(AtomrBuffer) y = NULL, sel = NULL;
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer-switch");
  g_autoptr(AtomrKernelArgs) next_args = atomr_kernel_args_new ();
  g_autoptr(AtomrLaunchConfig) one = atomr_launch_config_new_1d (1, 32);
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gfloat *zeros = g_new0 (gfloat, N * N);
  g_autofree gchar *dot = NULL, *path = NULL;
  const gfloat adds[] = { 1.0f, 10.0f, 100.0f };
  AtomrGraph *branches[3] = { NULL };
  SwitchSeen seen = { g_ptr_array_new_with_free_func (g_free), g_ptr_array_new_with_free_func (g_free) };
  AtomrActor *actors[1];
  gfloat want = 0.0f;
  gulong handler;

  if (!need_device () || !driver_has_switch ())
    return;
  actors_init (&s);
  k_add = compile_cond_kernel (s.nvrtc, "add_scalar");
  k_next = compile_cond_kernel (s.nvrtc, "next_selector");
  y = buffer_with (zeros);
  sel = i32_with (3);
  for (guint b = 0; b < 3; b++)
    {
      g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
      g_autofree gchar *name = g_strdup_printf ("add-%g", (double) adds[b]);

      atomr_kernel_args_add_size (atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, y), adds[b]),
                                  N * N);
      branches[b] = record_launch (s.nvrtc, k_add, args, N * N, name);
    }
  atomr_kernel_args_add_i32 (atomr_kernel_args_add_buffer (next_args, sel), 4);
  actors[0] = ATOMR_ACTOR (s.nvrtc);
  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_nvrtc_actor_launch_async (s.nvrtc, k_next, one, next_args, NULL, store_result, &r1);
  atomr_graph_replay_switch_async (ATOMR_ACTOR (s.nvrtc), branches, 3, sel, NULL, store_result, &r2);
  wait_for (&r1);
  g_assert_true (atomr_nvrtc_actor_launch_finish (s.nvrtc, r1, &error));
  g_assert_no_error (error);
  g_clear_object (&r1);
  finish_replay (outer, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "switch on condition (3 branches)"));
  g_assert_nonnull (strstr (dot, "label=\"case 2: graph add-100\";"));
  g_clear_pointer (&dot, g_free);

  handler = g_signal_connect (s.nvrtc, "after-complete", G_CALLBACK (on_switch_complete), &seen);

  /* One replay at a time: sel 3 -> 0, 1, 2, 3 (none), 0. */
  for (guint i = 0; i < 5; i++)
    {
      guint chosen = (i + 4) % 4;   /* sel before the replay is (i + 3) % 4 */
      g_autofree gfloat *got = NULL;

      replay (outer, ATOMR_ACTOR (s.nvrtc));
      if (chosen < 3)
        want += adds[chosen];
      got = download (y);
      g_test_message ("switch replay %u: selector %d, y[0] = %g (want %g), switch record: %s", i,
                      i32_of (sel), (double) got[0], (double) want,
                      seen.details->len > i ? (const gchar *) g_ptr_array_index (seen.details, i) : "(none)");
      g_assert_cmpint (i32_of (sel), ==, (gint32) chosen);
      assert_all (y, want);
    }
  g_assert_true (atomr_graph_get_instantiated (outer));
  g_assert_cmpuint (atomr_graph_get_n_instantiations (outer), ==, 1);

  /* Eight in flight (no wait in between): each is attributed to its own
   * run's branch. */
  g_ptr_array_set_size (seen.details, 0);
  g_ptr_array_set_size (seen.branches, 0);
  for (guint i = 0; i < 7; i++)
    atomr_graph_replay_async (outer, ATOMR_ACTOR (s.nvrtc), NULL, NULL, NULL);
  atomr_graph_replay_async (outer, ATOMR_ACTOR (s.nvrtc), NULL, store_result, &r1);
  finish_replay (outer, &r1);
  want += 2 * (adds[0] + adds[1] + adds[2]);
  assert_all (y, want);
  for (guint i = 0; i < seen.details->len; i++)
    g_test_message ("in flight %u: %s", i, (const gchar *) g_ptr_array_index (seen.details, i));
  g_assert_cmpuint (seen.details->len, ==, 8);
  g_assert_cmpuint (seen.branches->len, ==, 6);
  for (guint i = 0; i < 8; i++)
    {
      guint chosen = (i + 1) % 4;   /* sel was 0 before the first */
      g_autofree gchar *part = chosen < 3 ? g_strdup_printf (", ran branch %u", chosen)
                                          : g_strdup (", condition 3: no branch ran");
      g_assert_nonnull (strstr (g_ptr_array_index (seen.details, i), part));
    }
  g_assert_nonnull (strstr (g_ptr_array_index (seen.branches, 0), "switch branch 1 graph add-10 node 1/1"));
  g_signal_handler_disconnect (s.nvrtc, handler);

  /* The driver's dump. */
  path = g_build_filename (g_get_tmp_dir (), "atomr-test-gpu-graph-switch.dot", NULL);
  g_assert_true (atomr_graph_write_dot (outer, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (path, &dot, NULL, &error));
  g_test_message ("driver DOT of a switch graph: %" G_GSIZE_FORMAT " bytes, says \"switch\": %s, "
                  "names atomr_cond_switch: %s", strlen (dot), contains_ci (dot, "switch") ? "yes" : "no",
                  strstr (dot, "atomr_cond_switch") ? "yes" : "no");
  g_remove (path);

  /* Not recorded: one run, per value (5: none). */
  {
    const gint32 values[] = { 2, 0, 5, 1 };

    for (guint i = 0; i < G_N_ELEMENTS (values); i++)
      {
        g_autoptr(AtomrBuffer) v = i32_with (values[i]);

        atomr_graph_replay_switch_async (s.copy, branches, 3, v, NULL, store_result, &r1);
        finish_replay (branches[0], &r1);
        if (values[i] < 3)
          want += adds[values[i]];
        assert_all (y, want);
      }
  }

  g_clear_object (&outer);
  for (guint b = 0; b < 3; b++)
    g_clear_object (&branches[b]);
  g_ptr_array_unref (seen.details);
  g_ptr_array_unref (seen.branches);
  actors_clear (&s);
}

/* The while body sets its node's condition itself: count_down_set gets
 * the node's handle (atomr_kernel_args_add_graph_condition), counts the
 * counter down and calls cudaGraphSetConditional (handle, left > 0). */
static void
test_cond_while_handle (void)
{
  Actors s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrKernel) k_count = NULL;
  g_autoptr(AtomrBuffer) acc = NULL, counter = NULL, start = NULL, go = NULL;
  g_autoptr(AtomrGraph) loop = NULL;
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer-while-handle");
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gfloat *zeros = g_new0 (gfloat, N * N);
  const gint32 starts[] = { 5, 1, 3, 64 };
  AtomrActor *actors[2];

  if (!need_device ())
    return;
  actors_init (&s);
  k_count = compile_cond_kernel (s.nvrtc, "count_down_set");
  acc = buffer_with (zeros);
  counter = i32_with (0);
  start = i32_with (5);
  go = i32_with (1);

  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
                                atomr_kernel_args_add_graph_condition (args), counter), acc), N * N);
  loop = record_launch (s.nvrtc, k_count, args, N * N, "loop-sets");

  actors[0] = s.copy;
  actors[1] = ATOMR_ACTOR (s.nvrtc);
  g_assert_true (atomr_graph_begin_capture (outer, actors, 2, &error));
  atomr_actor_copy_async (s.copy, counter, start, NULL, store_result, &r1);
  atomr_graph_replay_while_async (loop, ATOMR_ACTOR (s.nvrtc), go, 1000, NULL, store_result, &r2);
  wait_for (&r1);
  g_assert_true (atomr_actor_copy_finish (s.copy, r1, &error));
  g_assert_no_error (error);
  g_clear_object (&r1);
  finish_replay (loop, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (starts); i++)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (&starts[i], sizeof starts[i]);
      g_autofree gfloat *got = NULL;

      g_assert_true (atomr_buffer_upload_sync (start, bytes, NULL, &error));
      g_assert_no_error (error);
      upload (acc, zeros);
      replay (outer, s.copy);
      got = download (acc);
      g_test_message ("while set by the body, start %d: acc[0] = %g (want %d), counter %d (want 0)",
                      starts[i], (double) got[0], starts[i], i32_of (counter));
      assert_all (acc, (gfloat) starts[i]);
      g_assert_cmpint (i32_of (counter), ==, 0);
    }
  g_assert_cmpuint (atomr_graph_get_n_instantiations (outer), ==, 1);

  /* go = 0: the first iteration does not run; the body never sees the
   * counter. */
  {
    gint32 zero = 0;
    g_autoptr(GBytes) bytes = g_bytes_new (&zero, sizeof zero);

    g_assert_true (atomr_buffer_upload_sync (go, bytes, NULL, &error));
    g_assert_no_error (error);
    upload (acc, zeros);
    replay (outer, s.copy);
    assert_all (acc, 0.0f);
    g_assert_cmpint (i32_of (counter), ==, starts[G_N_ELEMENTS (starts) - 1]);
  }

  /* Not recorded, with a limit: 10 would take ten iterations, 4 run. */
  g_clear_object (&go);
  go = i32_with (1);
  g_clear_object (&counter);
  counter = i32_with (10);
  upload (acc, zeros);
  g_clear_pointer (&args, atomr_kernel_args_unref);
  args = atomr_kernel_args_new ();
  atomr_kernel_args_add_size (atomr_kernel_args_add_buffer (atomr_kernel_args_add_buffer (
                                atomr_kernel_args_add_graph_condition (args), counter), acc), N * N);
  g_assert_true (atomr_graph_set_kernel_args (loop, 0, args, &error));
  g_assert_no_error (error);
  atomr_graph_replay_while_async (loop, ATOMR_ACTOR (s.nvrtc), go, 4, NULL, store_result, &r1);
  finish_replay (loop, &r1);
  assert_all (acc, 4.0f);
  g_assert_cmpint (i32_of (counter), ==, 6);

  /* The body alone has no node to take the handle from. */
  atomr_graph_replay_async (loop, ATOMR_ACTOR (s.nvrtc), NULL, store_result, &r1);
  wait_for (&r1);
  g_assert_false (atomr_graph_replay_finish (loop, r1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_clear_object (&r1);

  g_clear_object (&outer);
  g_clear_object (&loop);
  g_clear_object (&k_count);
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
  g_test_add_func ("/gpu/graph/child-graph", test_child_graph);
  g_test_add_func ("/gpu/graph/cond-if", test_cond_if);
  g_test_add_func ("/gpu/graph/cond-while", test_cond_while);
  g_test_add_func ("/gpu/graph/chain-structure", test_chain_structure);
  g_test_add_func ("/gpu/graph/cond-switch", test_cond_switch);
  g_test_add_func ("/gpu/graph/cond-while-handle", test_cond_while_handle);
  ret = g_test_run ();
  test_guard_stop ();
  return ret;
}
