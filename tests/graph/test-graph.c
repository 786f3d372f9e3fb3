/* test-graph.c — AtomrGraph on the host test device (no GPU)
 *
 * The host device "captures" by recording the requests and replays them by
 * running their enqueue functions on the CPU, in recording order, as one
 * operation of the replaying actor: the API's semantics (what is recorded,
 * what is refused, hazards of the replay, buffers kept alive, replay
 * attribution, DOT export) are tested here; tests/graph/test-gpu-graph.c
 * does the same with real CUDA graphs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-device-private.h"
#include "graph/atomr-graph-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "../test-guard.h"

typedef struct
{
  AtomrDevice *device;
  AtomrActor  *a, *b, *c;
  AtomrBuffer *x, *y, *z;
} Fixture;

static AtomrActor *
make_actor (AtomrDevice *device, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  AtomrActor *actor = ATOMR_ACTOR (atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, device, NULL, &error));

  g_assert_no_error (error);
  atomr_actor_set_name (actor, name);
  return actor;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_host ();
  f->a = make_actor (f->device, "a");
  f->b = make_actor (f->device, "b");
  f->c = make_actor (f->device, "c");
  f->x = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 16, &error);
  f->y = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 16, &error);
  f->z = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 16, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_clear_object (&f->x);
  g_clear_object (&f->y);
  g_clear_object (&f->z);
  g_assert_finalize_object (f->a);
  g_assert_finalize_object (f->b);
  g_assert_finalize_object (f->c);
  g_object_unref (f->device);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static void
iterate_until (GAsyncResult **cond)
{
  while (*cond == NULL)
    g_main_context_iteration (NULL, TRUE);
}

static void
iterate_pending (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
set_floats (AtomrBuffer *buffer, gfloat base)
{
  gfloat *v = atomr_buffer_get_host_data (buffer);
  for (guint i = 0; i < 16; i++)
    v[i] = base + (gfloat) i;
}

static void
assert_floats (AtomrBuffer *buffer, gfloat base, gfloat step)
{
  const gfloat *v = atomr_buffer_get_host_data (buffer);
  for (guint i = 0; i < 16; i++)
    g_assert_cmpfloat (v[i], ==, base + step * (gfloat) i);
}

/* Completes every fence pending on the actors' streams. */
static void
complete_all (Fixture *f)
{
  AtomrActor *actors[] = { f->a, f->b, f->c };
  for (guint i = 0; i < G_N_ELEMENTS (actors); i++)
    if (atomr_actor_get_stream (actors[i]))
      atomr_host_stream_complete (atomr_actor_get_stream (actors[i]), G_MAXUINT, CUDA_SUCCESS);
}

/* copy y <- x on b, copy z <- y on c, fill x = 7 on a: three actors, a
 * read-after-write (y) and a write-after-read (x). */
static AtomrGraph *
capture_chain (Fixture *f)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL;
  AtomrActor *actors[] = { f->a, f->b, f->c };
  AtomrGraph *graph = atomr_graph_new ("chain");

  g_assert_true (atomr_graph_begin_capture (graph, actors, G_N_ELEMENTS (actors), &error));
  g_assert_no_error (error);
  g_assert_cmpint (atomr_graph_get_state (graph), ==, ATOMR_GRAPH_STATE_CAPTURING);
  atomr_actor_copy_async (f->b, f->y, f->x, NULL, store_result, &r1);
  atomr_actor_copy_async (f->c, f->z, f->y, NULL, store_result, &r2);
  atomr_actor_fill_async (f->a, f->x, 7.0, NULL, store_result, &r3);
  iterate_until (&r3);
  iterate_until (&r1);
  iterate_until (&r2);
  /* Recorded, not run. */
  g_assert_true (atomr_actor_copy_finish (f->b, r1, &error));
  g_assert_true (atomr_actor_copy_finish (f->c, r2, &error));
  g_assert_true (atomr_actor_fill_finish (f->a, r3, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_actor_get_n_completed (f->a) + atomr_actor_get_n_completed (f->b) +
                    atomr_actor_get_n_completed (f->c), ==, 0);
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);
  g_assert_cmpint (atomr_graph_get_state (graph), ==, ATOMR_GRAPH_STATE_READY);
  g_assert_cmpuint (atomr_graph_get_n_nodes (graph), ==, 3);
  return graph;
}

static void
replay (Fixture *f, AtomrGraph *graph, AtomrActor *actor)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) result = NULL;

  atomr_graph_replay_async (graph, actor, NULL, store_result, &result);
  iterate_pending ();
  g_assert_null (result);             /* its fence is pending on the "GPU" */
  complete_all (f);
  iterate_until (&result);
  g_assert_true (atomr_graph_replay_finish (graph, result, &error));
  g_assert_no_error (error);
}

static void
test_capture_replay (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrGraph) graph = NULL;
  g_autofree gchar *name0 = NULL, *name2 = NULL;

  set_floats (f->x, 1.0f);
  graph = capture_chain (f);
  /* Nothing ran during the capture. */
  assert_floats (f->x, 1.0f, 1.0f);
  assert_floats (f->y, 0.0f, 0.0f);
  assert_floats (f->z, 0.0f, 0.0f);
  name0 = atomr_graph_get_node_name (graph, 0);
  name2 = atomr_graph_get_node_name (graph, 2);
  g_assert_cmpstr (name0, ==, "copy #1 on b");
  g_assert_cmpstr (name2, ==, "fill #1 on a");
  g_assert_null (atomr_graph_get_node_name (graph, 3));
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (graph), ==, 0);

  replay (f, graph, f->a);
  /* The next replay polls about as long as this one took (at most 2 ms,
   * at least the 20 us margin). */
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (graph), >=, 20);
  g_assert_cmpuint (atomr_graph_get_replay_spin_usec (graph), <=, 2000);
  assert_floats (f->y, 1.0f, 1.0f);
  assert_floats (f->z, 1.0f, 1.0f);
  assert_floats (f->x, 7.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 1);
  g_assert_false (atomr_graph_get_instantiated (graph));   /* host device */

  /* A replay reads the buffers' current contents: new input, new output;
   * and any actor of the device and context may run it. */
  set_floats (f->x, 100.0f);
  replay (f, graph, f->c);
  assert_floats (f->y, 100.0f, 1.0f);
  assert_floats (f->z, 100.0f, 1.0f);
  assert_floats (f->x, 7.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 2);
}

/* The replay is ordered against other requests by the union of its
 * nodes' hazards: a download of z made after the replay waits for it. */
static void
test_replay_hazards (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = NULL;
  g_autoptr(GAsyncResult) rr = NULL, rd = NULL;
  g_autoptr(GBytes) got = NULL;

  set_floats (f->x, 5.0f);
  graph = capture_chain (f);
  atomr_graph_replay_async (graph, f->a, NULL, store_result, &rr);
  atomr_actor_download_async (f->b, f->z, NULL, store_result, &rd);
  iterate_pending ();
  /* The download waits (on the "GPU") for the replay's fence. */
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (f->b), 1, CUDA_SUCCESS), ==, 0);
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (f->a), 1, CUDA_SUCCESS), ==, 1);
  g_assert_cmpuint (atomr_host_stream_complete (atomr_actor_get_stream (f->b), 1, CUDA_SUCCESS), ==, 1);
  iterate_until (&rr);
  iterate_until (&rd);
  g_assert_true (atomr_graph_replay_finish (graph, rr, &error));
  got = atomr_actor_download_finish (f->b, rd, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (got, NULL))[3], ==, 8.0f);
}

/* The graph keeps the buffers of its nodes alive. */
static void
test_keeps_buffers (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrGraph) graph = NULL;
  gpointer weak_y = f->y;

  set_floats (f->x, 2.0f);
  graph = capture_chain (f);
  g_object_add_weak_pointer (G_OBJECT (f->y), &weak_y);
  g_clear_object (&f->y);
  g_assert_nonnull (weak_y);
  replay (f, graph, f->b);
  assert_floats (f->z, 2.0f, 1.0f);
  g_assert_nonnull (weak_y);
  g_clear_object (&graph);
  g_assert_null (weak_y);
}

static void
test_refused (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("refused");
  g_autoptr(GAsyncResult) ru = NULL, rd = NULL, rf = NULL, rr = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", 64);
  AtomrActor *actors[] = { f->a };
  AtomrSync sync;
  GBytes *got;

  g_assert_true (atomr_graph_begin_capture (graph, actors, 1, &error));

  /* Pageable host memory would be frozen at capture time. */
  atomr_actor_upload_async (f->a, f->x, bytes, NULL, store_result, &ru);
  iterate_until (&ru);
  g_assert_false (atomr_actor_upload_finish (f->a, ru, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "upload #1 on a cannot be recorded"));
  g_assert_nonnull (strstr (error->message, "host memory"));
  g_clear_error (&error);

  /* A reply built on the host. */
  atomr_actor_download_async (f->a, f->x, NULL, store_result, &rd);
  iterate_until (&rd);
  got = atomr_actor_download_finish (f->a, rd, &error);
  g_assert_null (got);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "download #2 on a"));
  g_clear_error (&error);

  /* A blocking call (what every _sync wrapper does). */
  atomr_sync_begin (&sync, f->a);
  atomr_actor_fill_async (f->a, f->x, 1.0, NULL, atomr_sync_callback, &sync);
  g_assert_false (atomr_actor_fill_finish (f->a, atomr_sync_wait (&sync), &error));
  atomr_sync_end (&sync);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "_sync"));
  g_clear_error (&error);

  /* cuRAND keeps its generator's state on the host: a replay would
   * repeat the numbers. */
  {
    g_autoptr(AtomrRngActor) rng = atomr_rng_actor_new (f->device, ATOMR_RNG_PHILOX, &error);
    AtomrActor *rng_only[] = { ATOMR_ACTOR (rng) };
    g_autoptr(AtomrGraph) rng_graph = atomr_graph_new ("rng");
    g_autoptr(GAsyncResult) rr2 = NULL;

    g_assert_no_error (error);
    g_assert_true (atomr_graph_begin_capture (rng_graph, rng_only, 1, &error));
    atomr_rng_actor_fill_async (rng, f->y, ATOMR_RNG_UNIFORM, 0.0, 0.0, NULL, store_result, &rr2);
    iterate_until (&rr2);
    g_assert_false (atomr_rng_actor_fill_finish (rng, rr2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_assert_nonnull (strstr (error->message, "cuRAND advances its generator"));
    g_clear_error (&error);
    g_assert_false (atomr_graph_end_capture (rng_graph, &error));
    g_clear_error (&error);
  }

  /* A capturable request is still recorded... */
  atomr_actor_fill_async (f->a, f->x, 1.0, NULL, store_result, &rf);
  iterate_until (&rf);
  g_assert_true (atomr_actor_fill_finish (f->a, rf, &error));
  /* ...but the graph failed: the first refusal is reported. */
  g_assert_false (atomr_graph_end_capture (graph, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "upload #1 on a"));
  g_clear_error (&error);
  g_assert_cmpint (atomr_graph_get_state (graph), ==, ATOMR_GRAPH_STATE_FAILED);

  atomr_graph_replay_async (graph, f->a, NULL, store_result, &rr);
  iterate_until (&rr);
  g_assert_false (atomr_graph_replay_finish (graph, rr, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "failed"));
  g_clear_error (&error);
  g_assert_null (atomr_graph_to_dot (graph, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* After the capture the actor runs requests again. */
  g_clear_object (&rf);
  atomr_actor_fill_async (f->a, f->x, 3.0, NULL, store_result, &rf);
  iterate_pending ();
  assert_floats (f->x, 3.0f, 0.0f);
  complete_all (f);
  iterate_until (&rf);
}

static void
test_begin_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) g1 = atomr_graph_new ("g1");
  g_autoptr(AtomrGraph) g2 = atomr_graph_new ("g2");
  g_autoptr(AtomrGraph) g3 = atomr_graph_new ("g3");
  g_autoptr(AtomrActor) bare = g_object_new (ATOMR_TYPE_COPY_ACTOR, NULL);
  g_autoptr(GMainContext) other_context = g_main_context_new ();
  g_autoptr(AtomrActor) other = NULL;
  g_autoptr(AtomrDevice) host2 = atomr_device_new_host ();
  g_autoptr(AtomrActor) elsewhere = make_actor (host2, "elsewhere");
  AtomrActor *ab[] = { f->a, f->b };
  AtomrActor *bc[] = { f->b, f->c };
  AtomrActor *with_bare[] = { f->a, bare };
  AtomrActor *with_other[2] = { f->a, NULL };
  AtomrActor *with_elsewhere[] = { f->a, elsewhere };

  other = ATOMR_ACTOR (atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, f->device, other_context, &error));
  g_assert_no_error (error);
  with_other[1] = other;

  g_assert_false (atomr_graph_begin_capture (g1, ab, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_graph_begin_capture (g1, with_bare, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "without a device"));
  g_clear_error (&error);
  g_assert_false (atomr_graph_begin_capture (g1, with_other, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "GMainContext"));
  g_clear_error (&error);
  g_assert_false (atomr_graph_begin_capture (g1, with_elsewhere, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "elsewhere"));
  g_clear_error (&error);
  g_assert_cmpint (atomr_graph_get_state (g1), ==, ATOMR_GRAPH_STATE_EMPTY);

  g_assert_false (atomr_graph_end_capture (g1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* An actor records into one graph at a time; a refused begin leaves
   * none of its actors capturing. */
  g_assert_true (atomr_graph_begin_capture (g1, ab, 2, &error));
  g_assert_false (atomr_graph_begin_capture (g1, ab, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_graph_begin_capture (g2, bc, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "actor b is already recording"));
  g_clear_error (&error);
  {
    AtomrActor *c_only[] = { f->c };
    g_assert_true (atomr_graph_begin_capture (g3, c_only, 1, &error));
    g_assert_no_error (error);
  }

  /* Nothing recorded: the graph cannot be used. */
  g_assert_false (atomr_graph_end_capture (g1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "nothing was recorded"));
  g_clear_error (&error);
  g_assert_cmpint (atomr_graph_get_state (g1), ==, ATOMR_GRAPH_STATE_FAILED);

  /* A graph dropped while capturing lets go of its actor. */
  g_clear_object (&g3);
  {
    g_autoptr(GAsyncResult) r = NULL;
    atomr_actor_fill_async (f->c, f->x, 4.0, NULL, store_result, &r);
    iterate_pending ();
    assert_floats (f->x, 4.0f, 0.0f);
    complete_all (f);
    iterate_until (&r);
    g_assert_true (atomr_actor_fill_finish (f->c, r, &error));
  }
}

/* Replays on an actor of another context or device are refused. */
static void
test_replay_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = NULL;
  g_autoptr(GMainContext) other_context = g_main_context_new ();
  g_autoptr(AtomrActor) other = NULL;
  g_autoptr(GAsyncResult) r = NULL;

  set_floats (f->x, 0.0f);
  graph = capture_chain (f);
  other = ATOMR_ACTOR (atomr_actor_new_internal (ATOMR_TYPE_COPY_ACTOR, f->device, other_context, &error));
  g_assert_no_error (error);
  atomr_graph_replay_async (graph, other, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_finish (graph, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "GMainContext"));
  g_clear_error (&error);
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 0);
}

/* A node that fails when replayed fails the replay, naming the node; the
 * graph stays usable and counts only successful replays. */
static void
test_node_failure (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (f->device, &error);
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("blas-on-host");
  g_autoptr(GAsyncResult) rg = NULL, rr = NULL;
  AtomrActor *actors[] = { f->a, NULL };

  g_assert_no_error (error);
  actors[1] = ATOMR_ACTOR (blas);
  g_assert_true (atomr_graph_begin_capture (graph, actors, 2, &error));
  /* 4 x 4 matrices out of the 16-element buffers. */
  atomr_blas_actor_gemm_async (blas, ATOMR_TRANSPOSE_N, ATOMR_TRANSPOSE_N, 4, 4, 4, 1.0, 0.0,
                               f->x, 4, f->y, 4, 0.0, 0.0, f->z, 4, NULL, store_result, &rg);
  iterate_until (&rg);
  g_assert_true (atomr_blas_actor_gemm_finish (blas, rg, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_graph_end_capture (graph, &error));

  /* The host device has no cuBLAS: the node's enqueue fails. */
  atomr_graph_replay_async (graph, f->a, NULL, store_result, &rr);
  iterate_until (&rr);
  g_assert_false (atomr_graph_replay_finish (graph, rr, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "graph blas-on-host: node 0 (gemm #1 on"));
  g_assert_nonnull (strstr (error->message, "cuBLAS"));
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 0);
}

typedef struct
{
  GPtrArray *infos;
} Seen;

static void
on_after_complete (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  Seen *seen = user_data;
  g_ptr_array_add (seen->infos, atomr_launch_info_ref (info));
}

static AtomrLaunchInfo *
find_info (Seen *seen, const gchar *actor, const gchar *operation)
{
  for (guint i = 0; i < seen->infos->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (seen->infos, i);
      if (g_str_equal (atomr_launch_info_get_actor_name (info), actor) &&
          g_str_equal (atomr_launch_info_get_operation (info), operation))
        return info;
    }
  return NULL;
}

static gboolean
has_dependency (AtomrLaunchInfo *info, guint64 seq)
{
  guint n = 0;
  const guint64 *deps = atomr_launch_info_get_dependencies (info, &n);
  for (guint i = 0; i < n; i++)
    if (deps[i] == seq)
      return TRUE;
  return FALSE;
}

/* Every replayed node is its own record, named after its request, on the
 * actor that recorded it, depending on the replay and on what it follows. */
static void
test_attribution (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrGraph) graph = NULL;
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (64);
  g_autofree gchar *json = NULL;
  Seen seen = { g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref) };
  AtomrLaunchInfo *rep, *n0, *n1, *n2;
  AtomrActor *actors[] = { f->a, f->b, f->c };

  set_floats (f->x, 0.0f);
  graph = capture_chain (f);
  for (guint i = 0; i < G_N_ELEMENTS (actors); i++)
    {
      g_signal_connect (actors[i], "after-complete", G_CALLBACK (on_after_complete), &seen);
      atomr_trace_recorder_add_actor (recorder, actors[i]);
    }
  replay (f, graph, f->a);

  g_assert_cmpuint (seen.infos->len, ==, 4);
  rep = find_info (&seen, "a", "graph-replay");
  n0 = find_info (&seen, "b", "copy");
  n1 = find_info (&seen, "c", "copy");
  n2 = find_info (&seen, "a", "fill");
  g_assert_nonnull (rep);
  g_assert_nonnull (n0);
  g_assert_nonnull (n1);
  g_assert_nonnull (n2);
  g_assert_cmpstr (atomr_launch_info_get_detail (rep), ==, "graph chain, 3 nodes");
  g_assert_nonnull (strstr (atomr_launch_info_get_detail (n1), "graph chain node 2/3"));
  g_assert_nonnull (strstr (atomr_launch_info_get_detail (n1), "recorded as copy #1 on c"));
  g_assert_true (has_dependency (n0, atomr_launch_info_get_sequence (rep)));
  g_assert_true (has_dependency (n1, atomr_launch_info_get_sequence (n0)));
  g_assert_true (has_dependency (n2, atomr_launch_info_get_sequence (n0)));   /* write after read */
  g_assert_false (has_dependency (n1, atomr_launch_info_get_sequence (n2)));
  g_assert_cmpuint (atomr_launch_info_get_sequence (n0), !=, atomr_launch_info_get_sequence (n1));
  g_assert_cmpint (atomr_launch_info_get_complete_time (n1), >=, atomr_launch_info_get_enqueue_time (rep));

  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 4);
  json = atomr_trace_recorder_to_json (recorder);
  g_assert_nonnull (strstr (json, "recorded as fill #1 on a"));

  for (guint i = 0; i < G_N_ELEMENTS (actors); i++)
    g_signal_handlers_disconnect_by_func (actors[i], on_after_complete, &seen);
  g_ptr_array_unref (seen.infos);
}

static void
test_dot (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = NULL;
  g_autofree gchar *dot = NULL, *path = NULL, *contents = NULL;

  graph = capture_chain (f);
  dot = atomr_graph_to_dot (graph, &error);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (dot, "digraph \"chain\" {"));
  g_assert_nonnull (strstr (dot, "n0 [label=\"copy #1 on b\"];"));
  g_assert_nonnull (strstr (dot, "n1 [label=\"copy #1 on c\"];"));
  g_assert_nonnull (strstr (dot, "n2 [label=\"fill #1 on a\"];"));
  g_assert_nonnull (strstr (dot, "n0 -> n1;"));     /* c reads what b wrote */
  g_assert_nonnull (strstr (dot, "n0 -> n2;"));     /* a overwrites what b read */
  g_assert_null (strstr (dot, "n1 -> n2;"));

  path = g_build_filename (g_get_tmp_dir (), "atomr-test-graph.dot", NULL);
  g_assert_true (atomr_graph_write_dot (graph, path, &error));
  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_cmpstr (contents, ==, dot);
  g_remove (path);
}

/* Actors outside the capture run as usual meanwhile. */
static void
test_others_run (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = atomr_graph_new (NULL);
  g_autoptr(GAsyncResult) ra = NULL, rb = NULL;
  AtomrActor *actors[] = { f->a };

  g_assert_cmpstr (atomr_graph_get_name (graph), ==, "graph");
  g_assert_true (atomr_graph_begin_capture (graph, actors, 1, &error));
  atomr_actor_fill_async (f->a, f->x, 1.0, NULL, store_result, &ra);
  atomr_actor_fill_async (f->b, f->y, 2.0, NULL, store_result, &rb);
  iterate_pending ();
  assert_floats (f->x, 0.0f, 0.0f);
  assert_floats (f->y, 2.0f, 0.0f);
  complete_all (f);
  iterate_until (&rb);
  g_assert_true (atomr_actor_fill_finish (f->b, rb, &error));
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (graph), ==, 1);
}

/* Regression (test-gpu-graph hung here on the H100): replays queued
 * without a callback on an actor of the main context, which nobody
 * iterates, then a blocking download of their output.  The download runs
 * on the device thread's default actor and waits for the replays to be
 * enqueued; the blocked thread must run them itself.  The old code waited
 * forever (the guard below aborts after 30 s). */
static void
test_replays_then_sync (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("queued");
  g_autoptr(AtomrBuffer) x = NULL, y = NULL;
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autoptr(GBytes) got = NULL, input = NULL;
  AtomrActor *a, *b;
  AtomrActor *actors[2];
  gfloat values[16];

  test_guard_start (30);
  atomr_device_set_host_autocomplete (device, TRUE);
  a = make_actor (device, "qa");
  b = make_actor (device, "qb");
  actors[0] = a;
  actors[1] = b;
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  y = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_assert_no_error (error);

  /* y <- x (b); x = 3 (a) */
  g_assert_true (atomr_graph_begin_capture (graph, actors, 2, &error));
  atomr_actor_copy_async (b, y, x, NULL, store_result, &r1);
  atomr_actor_fill_async (a, x, 3.0, NULL, store_result, &r2);
  iterate_until (&r1);
  iterate_until (&r2);
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);

  for (guint i = 0; i < 16; i++)
    values[i] = 10.0f + (gfloat) i;
  input = g_bytes_new (values, sizeof values);
  g_assert_true (atomr_buffer_upload_sync (x, input, NULL, &error));
  g_assert_no_error (error);

  /* 50 replays queued on a's mailbox, none of them run yet. */
  for (guint i = 0; i < 50; i++)
    atomr_graph_replay_async (graph, a, NULL, NULL, NULL);
  got = atomr_buffer_download_sync (y, NULL, &error);
  g_assert_no_error (error);
  /* The first replay copied the upload, the others the fill. */
  g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (got, NULL))[5], ==, 3.0f);
  g_clear_pointer (&got, g_bytes_unref);
  got = atomr_buffer_download_sync (x, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (got, NULL))[5], ==, 3.0f);

  /* A chain across two queued actors: b's fill follows a's fill of x. */
  atomr_actor_fill_async (a, x, 4.0, NULL, NULL, NULL);
  atomr_actor_copy_async (b, y, x, NULL, NULL, NULL);
  g_clear_pointer (&got, g_bytes_unref);
  got = atomr_buffer_download_sync (y, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (((const gfloat *) g_bytes_get_data (got, NULL))[0], ==, 4.0f);

  /* Everything ran and completes (barriers report no failure). */
  g_clear_object (&r1);
  g_clear_object (&r2);
  atomr_actor_barrier_async (a, NULL, store_result, &r1);
  atomr_actor_barrier_async (b, NULL, store_result, &r2);
  iterate_until (&r1);
  iterate_until (&r2);
  g_assert_true (atomr_actor_barrier_finish (a, r1, &error));
  g_assert_true (atomr_actor_barrier_finish (b, r2, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_replays (graph), ==, 50);
  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&graph);
  g_clear_object (&x);
  g_clear_object (&y);
  g_assert_finalize_object (a);
  g_assert_finalize_object (b);
  test_guard_stop ();
}

/* New kernel arguments for a recorded launch: every refusal, and the
 * replay ordered by the new buffers (the host device cannot run the
 * kernel: the replay fails there, and a download of the new buffer then
 * fails with it, which shows the hazard). */
static void
test_kernel_args (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrNvrtcActor) nvrtc = NULL;
  g_autoptr(AtomrActor) a = NULL;
  g_autoptr(AtomrModule) module = g_object_new (ATOMR_TYPE_MODULE, NULL);
  const gsize sizes[] = { 8, 4 };   /* k (float *x, float v) */
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrBuffer) x = NULL, y = NULL, w = NULL, other = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (16, 32);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) bad = NULL;
  g_autoptr(AtomrGraph) graph = atomr_graph_new ("args");
  g_autoptr(AtomrGraph) empty = atomr_graph_new ("empty");
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, rr = NULL, rd = NULL;
  g_autoptr(GBytes) got = NULL;
  AtomrActor *actors[2];
  guint n_updates = 99;

  test_guard_start (30);
  atomr_device_set_host_autocomplete (device, TRUE);
  nvrtc = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  a = make_actor (device, "ka");
  kernel = atomr_kernel_new_unloaded (device, module, "k", sizes, 2);
  x = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  y = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  w = atomr_buffer_new (device, ATOMR_DTYPE_F32, 16, &error);
  g_assert_no_error (error);
  {
    g_autoptr(AtomrDevice) device2 = atomr_device_new_host ();
    other = atomr_buffer_new (device2, ATOMR_DTYPE_F32, 16, &error);
    g_assert_no_error (error);
  }

  /* node 0: k (x, 1) on nvrtc; node 1: y <- x on a */
  actors[0] = ATOMR_ACTOR (nvrtc);
  actors[1] = a;
  g_assert_true (atomr_graph_begin_capture (graph, actors, 2, &error));
  atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (args, x), 1.0f);
  atomr_nvrtc_actor_launch_async (nvrtc, kernel, config, args, NULL, store_result, &r1);
  atomr_actor_copy_async (a, y, x, NULL, store_result, &r2);
  iterate_until (&r1);
  iterate_until (&r2);
  g_assert_true (atomr_nvrtc_actor_launch_finish (nvrtc, r1, &error));
  g_assert_no_error (error);

  /* Not captured yet. */
  g_assert_false (atomr_graph_set_kernel_args (empty, 0, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "empty"));
  g_clear_error (&error);
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);

  g_assert_false (atomr_graph_set_kernel_args (graph, 0, NULL, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (atomr_graph_set_kernel_args (graph, 2, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "there is no node 2"));
  g_clear_error (&error);
  g_assert_false (atomr_graph_set_kernel_args (graph, 1, args, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "copy #1 on ka"));
  g_clear_error (&error);

  /* Checked as a launch is: count, sizes, device. */
  bad = atomr_kernel_args_add_buffer (atomr_kernel_args_new (), w);
  g_assert_false (atomr_graph_set_kernel_args (graph, 0, bad, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "node 0 (launch #1 on"));
  g_clear_error (&error);
  g_clear_pointer (&bad, atomr_kernel_args_unref);
  bad = atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (atomr_kernel_args_new (), other), 2.0f);
  g_assert_false (atomr_graph_set_kernel_args (graph, 0, bad, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "argument 0"));
  g_clear_error (&error);
  g_clear_pointer (&bad, atomr_kernel_args_unref);

  /* y belongs to node 1 only: the captured order knows nothing of it. */
  bad = atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (atomr_kernel_args_new (), y), 2.0f);
  g_assert_false (atomr_graph_set_kernel_args (graph, 0, bad, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "node 1 (copy #1 on ka)"));
  g_clear_error (&error);
  g_clear_pointer (&bad, atomr_kernel_args_unref);

  /* The buffer it already uses with a new scalar, then a fresh buffer. */
  bad = atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (atomr_kernel_args_new (), x), 3.0f);
  g_assert_true (atomr_graph_set_kernel_args (graph, 0, bad, &error));
  g_assert_no_error (error);
  g_clear_pointer (&bad, atomr_kernel_args_unref);
  bad = atomr_kernel_args_add_f32 (atomr_kernel_args_add_buffer (atomr_kernel_args_new (), w), 2.0f);
  g_assert_true (atomr_graph_set_kernel_args (graph, 0, bad, &error));
  g_assert_no_error (error);

  /* The replay writes w now: a download of w made after it waits for it
   * and shares its fate (here: the host device cannot launch). */
  atomr_graph_replay_async (graph, a, NULL, store_result, &rr);
  atomr_actor_download_async (a, w, NULL, store_result, &rd);
  iterate_until (&rr);
  iterate_until (&rd);
  g_assert_false (atomr_graph_replay_finish (graph, rr, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "node 0 (launch #1 on"));
  g_clear_error (&error);
  got = atomr_actor_download_finish (a, rd, &error);
  g_assert_null (got);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED);
  g_assert_nonnull (strstr (error->message, "graph-replay"));
  g_clear_error (&error);

  /* The host device instantiates nothing and updates nothing. */
  g_object_get (graph, "n-updates", &n_updates, NULL);
  g_assert_cmpuint (n_updates, ==, 0);
  g_assert_cmpuint (atomr_graph_get_n_instantiations (graph), ==, 0);
  g_clear_object (&r1);
  g_clear_object (&r2);
  g_clear_object (&rr);
  g_clear_object (&rd);
  test_guard_stop ();
}

/* A captured graph replayed during another capture is embedded as one
 * child node: ordered by the union of its nodes' hazards, run in place. */
static void
test_child_graph (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) inner = atomr_graph_new ("inner");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL;
  g_autofree gchar *name = NULL, *dot = NULL;
  AtomrActor *inner_actors[] = { f->b };
  AtomrActor *outer_actors[] = { f->a, f->c };

  /* inner: y <- x (b) */
  g_assert_true (atomr_graph_begin_capture (inner, inner_actors, 1, &error));
  atomr_actor_copy_async (f->b, f->y, f->x, NULL, store_result, &r1);
  iterate_until (&r1);
  g_assert_true (atomr_graph_end_capture (inner, &error));
  g_assert_no_error (error);
  g_clear_object (&r1);

  /* outer: x = 5 (a); inner (a); z <- y (c) */
  g_assert_true (atomr_graph_begin_capture (outer, outer_actors, 2, &error));
  atomr_actor_fill_async (f->a, f->x, 5.0, NULL, store_result, &r1);
  atomr_graph_replay_async (inner, f->a, NULL, store_result, &r2);
  atomr_actor_copy_async (f->c, f->z, f->y, NULL, store_result, &r3);
  iterate_until (&r1);
  iterate_until (&r2);
  iterate_until (&r3);
  g_assert_true (atomr_graph_replay_finish (inner, r2, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (outer), ==, 3);
  name = atomr_graph_get_node_name (outer, 1);
  g_assert_cmpstr (name, ==, "graph-replay #2 on a");
  /* Recorded, not run: nothing moved yet, the inner graph never ran. */
  assert_floats (f->y, 0.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (inner), ==, 0);

  /* The child follows the fill (x) and precedes the copy (y). */
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "n0 -> n1;"));
  g_assert_nonnull (strstr (dot, "n1 -> n2;"));

  replay (f, outer, f->c);
  assert_floats (f->x, 5.0f, 0.0f);
  assert_floats (f->y, 5.0f, 0.0f);
  assert_floats (f->z, 5.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, 1);
}


/* ------------------------------------------------------------------ */
/* Conditional nodes                                                    */

/* The finish function of whichever replay @r answers; @r must answer one
 * (a result of another request here means a slot was passed again
 * without being cleared: iterate_until() then returned the old result). */
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
  g_error ("finish_ok: the result answers a request of %s, not a graph "
           "replay: a result slot passed again without g_clear_object?",
           G_OBJECT_TYPE_NAME (source = g_async_result_get_source_object (r)));
  return FALSE;
}

static AtomrBuffer *
new_i32 (AtomrDevice *device, gint32 value)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *buffer = atomr_buffer_new (device, ATOMR_DTYPE_I32, 1, &error);

  g_assert_no_error (error);
  *(gint32 *) atomr_buffer_get_host_data (buffer) = value;
  return buffer;
}

static gint32
get_i32 (AtomrBuffer *buffer)
{
  return *(const gint32 *) atomr_buffer_get_host_data (buffer);
}

static void
set_i32 (AtomrBuffer *buffer, gint32 value)
{
  *(gint32 *) atomr_buffer_get_host_data (buffer) = value;
}

/* Records @actor's fill of @buffer with @value into a new graph. */
static AtomrGraph *
capture_fill (AtomrActor *actor, AtomrBuffer *buffer, gdouble value, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) r = NULL;
  AtomrGraph *graph = atomr_graph_new (name);

  g_assert_true (atomr_graph_begin_capture (graph, &actor, 1, &error));
  atomr_actor_fill_async (actor, buffer, value, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_true (atomr_actor_fill_finish (actor, r, &error));
  g_assert_true (atomr_graph_end_capture (graph, &error));
  g_assert_no_error (error);
  return graph;
}

static void
finish_ok (AtomrGraph *graph, GAsyncResult **result)
{
  g_autoptr(GError) error = NULL;

  iterate_until (result);
  g_assert_true (replay_any_finish (graph, *result, &error));
  g_assert_no_error (error);
  g_clear_object (result);
}

/* outer: c <- s (a), then "if c != 0: z = 9" (body on b): the condition is
 * what an earlier node left in c, read anew by every replay. */
static void
test_cond_if (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) c = new_i32 (f->device, 0);
  g_autoptr(AtomrBuffer) s = new_i32 (f->device, 1);
  g_autoptr(AtomrGraph) then = capture_fill (f->b, f->z, 9.0, "then");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gchar *name = NULL, *dot = NULL;
  g_autoptr(AtomrTraceRecorder) recorder = atomr_trace_recorder_new (64);
  Seen seen = { g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref) };
  AtomrLaunchInfo *cond_info = NULL, *body_info = NULL;
  AtomrActor *actors[] = { f->a };

  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_actor_copy_async (f->a, c, s, NULL, store_result, &r1);
  atomr_graph_replay_if_async (then, f->a, c, NULL, store_result, &r2);
  iterate_until (&r1);
  finish_ok (then, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (outer), ==, 2);
  name = atomr_graph_get_node_name (outer, 1);
  g_assert_cmpstr (name, ==, "graph-if #2 on a");
  /* Recorded, not run. */
  g_assert_cmpint (get_i32 (c), ==, 0);
  assert_floats (f->z, 0.0f, 0.0f);

  /* The conditional node follows the copy that writes its condition; its
   * body is a cluster of its own. */
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (dot, "n1 [shape=diamond, label=\"graph-if #2 on a\\nif condition != 0\"];"));
  g_assert_nonnull (strstr (dot, "subgraph cluster_n1 {"));
  g_assert_nonnull (strstr (dot, "label=\"if-body: graph then\";"));
  g_assert_nonnull (strstr (dot, "n1_0 [label=\"fill #1 on b\"];"));
  g_assert_nonnull (strstr (dot, "n1 -> n1_0 [style=dashed, label=\"then\"];"));
  g_assert_nonnull (strstr (dot, "n0 -> n1;"));

  g_signal_connect (f->a, "after-complete", G_CALLBACK (on_after_complete), &seen);
  g_signal_connect (f->b, "after-complete", G_CALLBACK (on_after_complete), &seen);
  atomr_trace_recorder_add_actor (recorder, f->b);

  replay (f, outer, f->a);          /* s = 1: the body runs */
  g_assert_cmpint (get_i32 (c), ==, 1);
  assert_floats (f->z, 9.0f, 0.0f);

  /* Replay attribution reaches the body's node, after the conditional node. */
  for (guint i = 0; i < seen.infos->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (seen.infos, i);
      if (g_str_equal (atomr_launch_info_get_operation (info), "graph-if"))
        cond_info = info;
      if (g_str_equal (atomr_launch_info_get_operation (info), "fill"))
        body_info = info;
    }
  g_assert_nonnull (cond_info);
  g_assert_nonnull (body_info);
  g_assert_cmpstr (atomr_launch_info_get_actor_name (body_info), ==, "b");
  g_assert_nonnull (strstr (atomr_launch_info_get_detail (body_info),
                            "graph outer node 2/2 > if-body graph then node 1/1, replay #"));
  g_assert_nonnull (strstr (atomr_launch_info_get_detail (body_info), "recorded as fill #1 on b"));
  g_assert_true (has_dependency (body_info, atomr_launch_info_get_sequence (cond_info)));
  g_assert_cmpuint (atomr_trace_recorder_get_n_records (recorder), ==, 1);
  g_signal_handlers_disconnect_by_func (f->a, on_after_complete, &seen);
  g_signal_handlers_disconnect_by_func (f->b, on_after_complete, &seen);
  g_ptr_array_unref (seen.infos);

  set_floats (f->z, 0.0f);
  set_i32 (s, 0);
  replay (f, outer, f->a);          /* s = 0: skipped */
  g_assert_cmpint (get_i32 (c), ==, 0);
  assert_floats (f->z, 0.0f, 1.0f);

  set_i32 (s, -5);                  /* any value but 0 is true */
  replay (f, outer, f->b);
  assert_floats (f->z, 9.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, 3);
  g_assert_cmpuint (atomr_graph_get_n_replays (then), ==, 0);
}

/* Not recorded: the request runs the body or not, once. */
static void
test_cond_if_eager (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrBuffer) c = new_i32 (f->device, 1);
  g_autoptr(AtomrGraph) then = capture_fill (f->b, f->z, 4.0, "then");
  g_autoptr(GAsyncResult) r = NULL;

  atomr_graph_replay_if_async (then, f->a, c, NULL, store_result, &r);
  iterate_pending ();
  complete_all (f);
  finish_ok (then, &r);
  assert_floats (f->z, 4.0f, 0.0f);
  g_assert_cmpuint (atomr_graph_get_n_replays (then), ==, 1);

  set_floats (f->z, 0.0f);
  set_i32 (c, 0);
  atomr_graph_replay_if_async (then, f->c, c, NULL, store_result, &r);
  iterate_pending ();
  complete_all (f);
  finish_ok (then, &r);
  assert_floats (f->z, 0.0f, 1.0f);
}

/* A while body that changes its own condition: c <- d1 <- d2 <- d3 (a
 * shift register: c stays true as long as ones come in) and a tally
 * t1..t4 that shifts a one in per iteration. */
typedef struct
{
  AtomrBuffer *c, *d[3], *t[4];
} Loop;

static void loop_clear (Loop *l);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Loop, loop_clear)

static AtomrGraph *
capture_loop_body (Fixture *f, Loop *l)
{
  g_autoptr(GError) error = NULL;
  AtomrGraph *body = atomr_graph_new ("loop");
  AtomrActor *actors[] = { f->b, f->c };
  GAsyncResult *r[7] = { NULL };

  l->c = new_i32 (f->device, 0);
  for (guint i = 0; i < 3; i++)
    l->d[i] = new_i32 (f->device, 0);
  for (guint i = 0; i < 4; i++)
    l->t[i] = new_i32 (f->device, 0);
  g_assert_true (atomr_graph_begin_capture (body, actors, 2, &error));
  atomr_actor_copy_async (f->b, l->c, l->d[0], NULL, store_result, &r[0]);
  atomr_actor_copy_async (f->b, l->d[0], l->d[1], NULL, store_result, &r[1]);
  atomr_actor_copy_async (f->b, l->d[1], l->d[2], NULL, store_result, &r[2]);
  atomr_actor_copy_async (f->c, l->t[3], l->t[2], NULL, store_result, &r[3]);
  atomr_actor_copy_async (f->c, l->t[2], l->t[1], NULL, store_result, &r[4]);
  atomr_actor_copy_async (f->c, l->t[1], l->t[0], NULL, store_result, &r[5]);
  atomr_actor_fill_async (f->c, l->t[0], 1.0, NULL, store_result, &r[6]);
  for (guint i = 0; i < G_N_ELEMENTS (r); i++)
    {
      iterate_until (&r[i]);
      g_clear_object (&r[i]);
    }
  g_assert_true (atomr_graph_end_capture (body, &error));
  g_assert_no_error (error);
  return body;
}

static void
loop_clear (Loop *l)
{
  g_clear_object (&l->c);
  for (guint i = 0; i < 3; i++)
    g_clear_object (&l->d[i]);
  for (guint i = 0; i < 4; i++)
    g_clear_object (&l->t[i]);
}

/* c = 1 and @ones (at most 2: d3 stays 0) leading ones in d: the loop
 * runs 1 + @ones times. */
static void
loop_reset (Loop *l, guint ones)
{
  set_i32 (l->c, 1);
  for (guint i = 0; i < 3; i++)
    set_i32 (l->d[i], i < ones ? 1 : 0);
  for (guint i = 0; i < 4; i++)
    set_i32 (l->t[i], 0);
}

static guint
loop_tally (Loop *l)
{
  guint n = 0;

  while (n < 4 && get_i32 (l->t[n]) == 1)
    n++;
  for (guint i = n; i < 4; i++)
    g_assert_cmpint (get_i32 (l->t[i]), ==, 0);
  return n;
}

static void
test_cond_while (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_auto(Loop) l = { NULL };
  g_autoptr(AtomrGraph) body = capture_loop_body (f, &l);
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL;
  g_autofree gchar *dot = NULL;
  AtomrActor *actors[] = { f->a };

  /* outer: x = 3 (a); while c: loop (at most 10 times). */
  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_actor_fill_async (f->a, f->x, 3.0, NULL, store_result, &r1);
  atomr_graph_replay_while_async (body, f->a, l.c, 10, NULL, store_result, &r2);
  iterate_until (&r1);
  finish_ok (body, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_nonnull (strstr (dot, "while condition != 0 (at most 10)"));
  g_assert_nonnull (strstr (dot, "label=\"while-body: graph loop\";"));
  g_assert_nonnull (strstr (dot, "n1_0 -> n1_1;"));      /* inside the body */

  /* Replayed again and again, the condition changed between replays. */
  for (guint ones = 0; ones <= 2; ones++)
    {
      loop_reset (&l, ones);
      replay (f, outer, f->a);
      g_assert_cmpuint (loop_tally (&l), ==, ones + 1);
      g_assert_cmpint (get_i32 (l.c), ==, 0);
      assert_floats (f->x, 3.0f, 0.0f);
    }
  /* c false from the start: the body never runs. */
  loop_reset (&l, 2);
  set_i32 (l.c, 0);
  replay (f, outer, f->a);
  g_assert_cmpuint (loop_tally (&l), ==, 0);
  g_assert_cmpint (get_i32 (l.d[0]), ==, 1);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, 4);

  /* The body on its own after serving as outer's conditional node, not
   * recorded, stopped by max_iterations (the end of the GPU test
   * /gpu/graph/cond-while).  r1 still holds the recorded fill's result:
   * cleared first, or finish_ok() would take that result for the
   * while's (what crashed the GPU test, issue 17). */
  g_clear_object (&r1);
  loop_reset (&l, 2);
  set_i32 (l.d[2], 1);          /* d3 too: c stays 1 forever */
  atomr_graph_replay_while_async (body, f->a, l.c, 3, NULL, store_result, &r1);
  iterate_pending ();
  g_assert_null (r1);           /* its fence is pending on the "GPU" */
  complete_all (f);
  finish_ok (body, &r1);
  g_assert_cmpuint (loop_tally (&l), ==, 3);
  g_assert_cmpint (get_i32 (l.c), ==, 1);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, 4);
  g_assert_cmpuint (atomr_graph_get_n_replays (body), ==, 1);
}

/* max_iterations stops a loop whose condition stays true. */
static void
test_cond_while_limit (Fixture *f, gconstpointer data)
{
  g_auto(Loop) l = { NULL };
  g_autoptr(AtomrGraph) body = capture_loop_body (f, &l);
  g_autoptr(GAsyncResult) r = NULL;

  loop_reset (&l, 2);
  set_i32 (l.d[2], 1);          /* d3 too: c stays 1 forever */
  atomr_graph_replay_while_async (body, f->a, l.c, 2, NULL, store_result, &r);
  iterate_pending ();
  complete_all (f);
  finish_ok (body, &r);
  g_assert_cmpuint (loop_tally (&l), ==, 2);
  g_assert_cmpint (get_i32 (l.c), ==, 1);
}

static void
assert_replay_fails (AtomrGraph *graph, GAsyncResult **r, gint code, const gchar *part)
{
  g_autoptr(GError) error = NULL;

  iterate_until (r);
  g_assert_false (replay_any_finish (graph, *r, &error));
  g_assert_error (error, ATOMR_ERROR, code);
  if (strstr (error->message, part) == NULL)
    g_error ("\"%s\" does not say \"%s\"", error->message, part);
  g_clear_object (r);
}

static void
test_cond_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) c = new_i32 (f->device, 1);
  g_autoptr(AtomrBuffer) c2 = new_i32 (f->device, 1);
  g_autoptr(AtomrDevice) other = atomr_device_new_host ();
  g_autoptr(AtomrBuffer) elsewhere = new_i32 (other, 1);
  g_autoptr(AtomrGraph) then = capture_fill (f->b, f->z, 1.0, "then");
  g_autoptr(AtomrGraph) empty = atomr_graph_new ("empty");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(AtomrGraph) outer2 = atomr_graph_new ("outer2");
  g_autoptr(AtomrGraph) top = atomr_graph_new ("top");
  g_autoptr(GAsyncResult) r = NULL, r1 = NULL;
  AtomrActor *actors[] = { f->a };

  atomr_graph_replay_if_async (then, f->a, NULL, NULL, store_result, &r);
  assert_replay_fails (then, &r, ATOMR_ERROR_INVALID_ARGUMENT, "needs a condition buffer (condition is NULL)");
  atomr_graph_replay_if_async (then, f->a, f->x, NULL, store_result, &r);
  assert_replay_fails (then, &r, ATOMR_ERROR_INVALID_ARGUMENT, "the condition buffer holds f32");
  atomr_graph_replay_while_async (then, f->a, c, 0, NULL, store_result, &r);
  assert_replay_fails (then, &r, ATOMR_ERROR_INVALID_ARGUMENT, "max_iterations is 0");
  atomr_graph_replay_while_async (empty, f->a, c, 5, NULL, store_result, &r);
  assert_replay_fails (empty, &r, ATOMR_ERROR_INVALID_ARGUMENT, "graph empty cannot be replayed: it is empty");
  atomr_graph_replay_if_async (then, f->a, elsewhere, NULL, store_result, &r);
  assert_replay_fails (then, &r, ATOMR_ERROR_INVALID_ARGUMENT, "the condition buffer is on device");
  /* None of them ran anything. */
  assert_floats (f->z, 0.0f, 0.0f);

  /* outer has a conditional node ... */
  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_graph_replay_if_async (then, f->a, c, NULL, store_result, &r);
  finish_ok (then, &r);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);

  /* ... so it cannot be a body (nested conditionals) ... */
  atomr_graph_replay_while_async (outer, f->a, c2, 3, NULL, store_result, &r);
  assert_replay_fails (outer, &r, ATOMR_ERROR_NOT_SUPPORTED, "nested conditionals are not supported");
  g_assert_true (atomr_graph_begin_capture (outer2, actors, 1, &error));
  atomr_graph_replay_if_async (outer, f->a, c2, NULL, store_result, &r);
  assert_replay_fails (outer, &r, ATOMR_ERROR_NOT_SUPPORTED, "nested conditionals");
  g_assert_false (atomr_graph_end_capture (outer2, &error));     /* nothing recorded */
  g_clear_error (&error);

  /* ... nor a child graph of another capture: the capture fails. */
  g_assert_true (atomr_graph_begin_capture (top, actors, 1, &error));
  atomr_actor_fill_async (f->a, f->y, 2.0, NULL, store_result, &r1);
  atomr_graph_replay_async (outer, f->a, NULL, store_result, &r);
  iterate_until (&r1);
  assert_replay_fails (outer, &r, ATOMR_ERROR_NOT_SUPPORTED, "CUDA cannot embed it as a child graph of graph top");
  g_assert_false (atomr_graph_end_capture (top, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "the capture failed"));
  g_assert_cmpint (atomr_graph_get_state (top), ==, ATOMR_GRAPH_STATE_FAILED);

  /* Replayed on its own, outer runs. */
  replay (f, outer, f->a);
  assert_floats (f->z, 1.0f, 0.0f);
}

/* The records @seen holds of @operation, in order. */
static GPtrArray *
infos_of (Seen *seen, const gchar *operation)
{
  GPtrArray *out = g_ptr_array_new ();

  for (guint i = 0; i < seen->infos->len; i++)
    {
      AtomrLaunchInfo *info = g_ptr_array_index (seen->infos, i);
      if (g_str_equal (atomr_launch_info_get_operation (info), operation))
        g_ptr_array_add (out, info);
    }
  return out;
}

static void
assert_contains (const gchar *text, const gchar *part)
{
  if (text == NULL || strstr (text, part) == NULL)
    g_error ("\"%s\" does not say \"%s\"", text ? text : "(null)", part);
}

/* outer: c <- s (a), then "switch c: 0: z = 10, 1: z = 20, 2: z = 30"
 * (branches on b): every replay runs the branch the copied value names,
 * none for a value out of range (3, or -1: 0xffffffff unsigned). */
static void
test_cond_switch (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) c = new_i32 (f->device, 0);
  g_autoptr(AtomrBuffer) s = new_i32 (f->device, 1);
  g_autoptr(AtomrGraph) br0 = capture_fill (f->b, f->z, 10.0, "br0");
  g_autoptr(AtomrGraph) br1 = capture_fill (f->b, f->z, 20.0, "br1");
  g_autoptr(AtomrGraph) br2 = capture_fill (f->b, f->z, 30.0, "br2");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(GAsyncResult) r1 = NULL, r2 = NULL, r3 = NULL;
  g_autofree gchar *name = NULL, *dot = NULL;
  g_autoptr(GPtrArray) switches = NULL, fills = NULL;
  Seen seen = { g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_launch_info_unref) };
  AtomrGraph *branches[] = { br0, br1, br2 };
  AtomrActor *actors[] = { f->a };
  const struct { gint32 value; gfloat z; } cases[] = {
    { 0, 10.0f }, { 1, 20.0f }, { 2, 30.0f }, { 3, -1.0f }, { -1, -1.0f }, { 1, 20.0f },
  };

  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_actor_copy_async (f->a, c, s, NULL, store_result, &r1);
  atomr_graph_replay_switch_async (f->a, branches, 3, c, NULL, store_result, &r2);
  iterate_until (&r1);
  g_assert_true (atomr_actor_copy_finish (f->a, r1, &error));
  g_clear_object (&r1);
  finish_ok (outer, &r2);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_graph_get_n_nodes (outer), ==, 2);
  name = atomr_graph_get_node_name (outer, 1);
  g_assert_cmpstr (name, ==, "graph-switch #2 on a");
  g_assert_cmpint (get_i32 (c), ==, 0);     /* recorded, not run */
  assert_floats (f->z, 0.0f, 0.0f);

  /* A diamond, one cluster per branch, an edge per case. */
  dot = atomr_graph_to_dot (outer, &error);
  g_assert_no_error (error);
  assert_contains (dot, "n1 [shape=diamond, label=\"graph-switch #2 on a\\nswitch on condition (3 branches)\"];");
  for (guint k = 0; k < 3; k++)
    {
      g_autofree gchar *cluster = g_strdup_printf ("subgraph cluster_n1_%u {", k);
      g_autofree gchar *label = g_strdup_printf ("label=\"case %u: graph br%u\";", k, k);
      g_autofree gchar *node = g_strdup_printf ("n1_%u_0 [label=\"fill #%u on b\"];", k, k + 1);
      g_autofree gchar *edge = g_strdup_printf ("n1 -> n1_%u_0 [style=dashed, label=\"case %u\"];", k, k);
      assert_contains (dot, cluster);
      assert_contains (dot, label);
      assert_contains (dot, node);
      assert_contains (dot, edge);
    }
  assert_contains (dot, "n0 -> n1;");

  g_signal_connect (f->a, "after-complete", G_CALLBACK (on_after_complete), &seen);
  g_signal_connect (f->b, "after-complete", G_CALLBACK (on_after_complete), &seen);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GPtrArray) sw = NULL, fl = NULL;

      g_ptr_array_set_size (seen.infos, 0);
      set_floats (f->z, -1.0f);
      set_i32 (s, cases[i].value);
      replay (f, outer, f->a);
      g_assert_cmpint (get_i32 (c), ==, cases[i].value);
      assert_floats (f->z, cases[i].z, cases[i].z == -1.0f ? 1.0f : 0.0f);

      /* The switch node's record says what ran; only that branch's node
       * is reported, after it. */
      sw = infos_of (&seen, "graph-switch");
      fl = infos_of (&seen, "fill");
      g_assert_cmpuint (sw->len, ==, 1);
      if (cases[i].z == -1.0f)
        {
          g_autofree gchar *part = g_strdup_printf (", condition %u: no branch ran",
                                                    (guint32) cases[i].value);
          assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (sw, 0)), part);
          g_assert_cmpuint (fl->len, ==, 0);
        }
      else
        {
          g_autofree gchar *part = g_strdup_printf (", ran branch %d", cases[i].value);
          g_autofree gchar *where = g_strdup_printf ("graph outer node 2/2 > switch branch %d graph br%d node 1/1",
                                                     cases[i].value, cases[i].value);
          assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (sw, 0)), part);
          g_assert_cmpuint (fl->len, ==, 1);
          assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (fl, 0)), where);
          g_assert_true (has_dependency (g_ptr_array_index (fl, 0),
                                         atomr_launch_info_get_sequence (g_ptr_array_index (sw, 0))));
        }
    }

  /* Two replays in flight at once, with different values: each is
   * attributed to the branch its own run chose (a single "last value"
   * would give both the second's). */
  g_ptr_array_set_size (seen.infos, 0);
  set_i32 (s, 0);
  atomr_graph_replay_async (outer, f->a, NULL, store_result, &r1);
  iterate_pending ();
  set_i32 (s, 2);
  atomr_graph_replay_async (outer, f->a, NULL, store_result, &r3);
  iterate_pending ();
  g_assert_null (r1);
  g_assert_null (r3);
  complete_all (f);
  finish_ok (outer, &r1);
  finish_ok (outer, &r3);
  assert_floats (f->z, 30.0f, 0.0f);
  switches = infos_of (&seen, "graph-switch");
  fills = infos_of (&seen, "fill");
  g_assert_cmpuint (switches->len, ==, 2);
  g_assert_cmpuint (fills->len, ==, 2);
  assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (switches, 0)), ", ran branch 0");
  assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (fills, 0)), "switch branch 0 graph br0");
  assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (switches, 1)), ", ran branch 2");
  assert_contains (atomr_launch_info_get_detail (g_ptr_array_index (fills, 1)), "switch branch 2 graph br2");

  g_signal_handlers_disconnect_by_func (f->a, on_after_complete, &seen);
  g_signal_handlers_disconnect_by_func (f->b, on_after_complete, &seen);
  g_ptr_array_unref (seen.infos);
  g_assert_cmpuint (atomr_graph_get_n_replays (outer), ==, G_N_ELEMENTS (cases) + 2);
}

/* Not recorded: the request runs one branch, once; the same graph may
 * be several branches. */
static void
test_cond_switch_eager (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrBuffer) c = NULL;
  g_autoptr(AtomrGraph) two = capture_fill (f->b, f->z, 2.0, "two");
  g_autoptr(AtomrGraph) five = capture_fill (f->c, f->z, 5.0, "five");
  g_autoptr(GAsyncResult) r = NULL;
  g_autoptr(GError) error = NULL;
  AtomrGraph *branches[] = { two, five, two };

  c = atomr_buffer_new (f->device, ATOMR_DTYPE_U32, 4, &error);
  g_assert_no_error (error);
  for (guint32 value = 0; value < 5; value++)
    {
      *(guint32 *) atomr_buffer_get_host_data (c) = value;
      set_floats (f->z, 0.0f);
      atomr_graph_replay_switch_async (f->a, branches, 3, c, NULL, store_result, &r);
      iterate_pending ();
      complete_all (f);
      finish_ok (two, &r);
      if (value < 3)
        assert_floats (f->z, value == 1 ? 5.0f : 2.0f, 0.0f);
      else
        assert_floats (f->z, 0.0f, 1.0f);     /* out of range: nothing ran */
    }
  /* A switch counts no replay of its branches. */
  g_assert_cmpuint (atomr_graph_get_n_replays (two), ==, 0);
  g_assert_cmpuint (atomr_graph_get_n_replays (five), ==, 0);
}

static void
test_cond_switch_errors (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) c = new_i32 (f->device, 0);
  g_autoptr(AtomrDevice) other = atomr_device_new_host ();
  g_autoptr(AtomrBuffer) elsewhere = new_i32 (other, 0);
  g_autoptr(AtomrGraph) one = capture_fill (f->b, f->z, 1.0, "one");
  g_autoptr(AtomrGraph) empty = atomr_graph_new ("empty");
  g_autoptr(AtomrGraph) outer = atomr_graph_new ("outer");
  g_autoptr(GAsyncResult) r = NULL;
  AtomrGraph *branches[] = { one, NULL };
  AtomrGraph *with_empty[] = { one, empty };
  AtomrGraph *nested[] = { one, outer };
  AtomrActor *actors[] = { f->a };

  atomr_graph_replay_switch_async (f->a, branches, 0, c, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "needs at least one branch graph (n_branches is 0)");
  atomr_graph_replay_switch_async (f->a, NULL, 2, c, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "n_branches is 2");
  atomr_graph_replay_switch_async (f->a, branches, 2, c, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "branches[1] is NULL, not an AtomrGraph");
  atomr_graph_replay_switch_async (f->a, with_empty, 2, c, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "graph empty cannot be replayed: it is empty");
  atomr_graph_replay_switch_async (f->a, branches, 1, NULL, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "replay_switch needs a condition buffer");
  atomr_graph_replay_switch_async (f->a, branches, 1, f->x, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "replay_switch: the condition buffer holds f32");
  atomr_graph_replay_switch_async (f->a, branches, 1, elsewhere, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_INVALID_ARGUMENT, "the condition buffer is on device");

  /* A branch with a conditional node of its own: nested, refused. */
  g_assert_true (atomr_graph_begin_capture (outer, actors, 1, &error));
  atomr_graph_replay_switch_async (f->a, branches, 1, c, NULL, store_result, &r);
  finish_ok (one, &r);
  g_assert_true (atomr_graph_end_capture (outer, &error));
  g_assert_no_error (error);
  atomr_graph_replay_switch_async (f->a, nested, 2, c, NULL, store_result, &r);
  assert_replay_fails (one, &r, ATOMR_ERROR_NOT_SUPPORTED, "graph outer has conditional nodes itself");
  /* None of them ran anything. */
  assert_floats (f->z, 0.0f, 0.0f);
}

/* A launch that takes its conditional node's handle
 * (atomr_kernel_args_add_graph_condition): recorded into a graph that is
 * then a conditional body; refused anywhere the handle cannot exist. */
static void
test_cond_handle_arg (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrNvrtcActor) nvrtc = NULL;
  g_autoptr(AtomrModule) module = g_object_new (ATOMR_TYPE_MODULE, NULL);
  const gsize sizes[] = { 8, 8 };   /* count_down (unsigned long long handle, int *n) */
  g_autoptr(AtomrKernel) kernel = NULL;
  g_autoptr(AtomrBuffer) n = NULL, c = NULL;
  g_autoptr(AtomrLaunchConfig) config = atomr_launch_config_new_1d (1, 1);
  g_autoptr(AtomrKernelArgs) args = atomr_kernel_args_new ();
  g_autoptr(AtomrKernelArgs) plain = atomr_kernel_args_new ();
  g_autoptr(AtomrGraph) body = atomr_graph_new ("count-down");
  g_autoptr(AtomrGraph) other = atomr_graph_new ("other");
  g_autoptr(AtomrGraph) loop = atomr_graph_new ("loop");
  g_autoptr(AtomrGraph) top = atomr_graph_new ("top");
  g_autoptr(GAsyncResult) r = NULL;
  AtomrActor *actors[1];

  test_guard_start (30);
  atomr_device_set_host_autocomplete (device, TRUE);
  nvrtc = atomr_nvrtc_actor_new (device, &error);
  g_assert_no_error (error);
  actors[0] = ATOMR_ACTOR (nvrtc);
  kernel = atomr_kernel_new_unloaded (device, module, "count_down", sizes, 2);
  n = atomr_buffer_new (device, ATOMR_DTYPE_I32, 1, &error);
  c = new_i32 (device, 1);
  g_assert_no_error (error);
  atomr_kernel_args_add_buffer (atomr_kernel_args_add_graph_condition (args), n);
  atomr_kernel_args_add_buffer (atomr_kernel_args_add_u64 (plain, 7), n);

  /* The argument fits an unsigned long long parameter ... */
  g_assert_cmpuint (args->args->len, ==, 2);
  g_assert_cmpuint (g_array_index (args->args, AtomrKernelArg, 0).size, ==, 8);

  /* ... but a launch that is not recorded has no node to take it from. */
  atomr_nvrtc_actor_launch_async (nvrtc, kernel, config, args, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_nvrtc_actor_launch_finish (nvrtc, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  assert_contains (error->message, "argument 0 of kernel count_down is a graph condition handle");
  g_clear_error (&error);
  g_clear_object (&r);

  /* Recorded: the graph is a body, nothing else. */
  g_assert_true (atomr_graph_begin_capture (body, actors, 1, &error));
  atomr_nvrtc_actor_launch_async (nvrtc, kernel, config, args, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_true (atomr_nvrtc_actor_launch_finish (nvrtc, r, &error));
  g_clear_object (&r);
  g_assert_true (atomr_graph_end_capture (body, &error));
  g_assert_no_error (error);

  atomr_graph_replay_async (body, actors[0], NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_finish (body, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  assert_contains (error->message, "graph count-down has launches that take a conditional node's handle");
  assert_contains (error->message, "not on its own");
  g_clear_error (&error);
  g_clear_object (&r);

  g_assert_true (atomr_graph_begin_capture (top, actors, 1, &error));
  atomr_graph_replay_async (body, actors[0], NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_finish (body, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  assert_contains (error->message, "not a child graph of graph top");
  g_clear_error (&error);
  g_clear_object (&r);
  g_assert_false (atomr_graph_end_capture (top, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  /* As the body of a while node it is recorded like any body. */
  g_assert_true (atomr_graph_begin_capture (loop, actors, 1, &error));
  atomr_graph_replay_while_async (body, actors[0], c, 16, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_true (atomr_graph_replay_while_finish (body, r, &error));
  g_assert_no_error (error);
  g_clear_object (&r);
  g_assert_true (atomr_graph_end_capture (loop, &error));
  g_assert_no_error (error);

  /* New arguments that take the handle make a plain graph a body only. */
  g_assert_true (atomr_graph_begin_capture (other, actors, 1, &error));
  atomr_nvrtc_actor_launch_async (nvrtc, kernel, config, plain, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_true (atomr_nvrtc_actor_launch_finish (nvrtc, r, &error));
  g_clear_object (&r);
  g_assert_true (atomr_graph_end_capture (other, &error));
  g_assert_true (atomr_graph_set_kernel_args (other, 0, args, &error));
  g_assert_no_error (error);
  atomr_graph_replay_async (other, actors[0], NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_finish (other, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  assert_contains (error->message, "graph other has launches that take a conditional node's handle");
  g_clear_error (&error);
  g_clear_object (&r);
  test_guard_stop ();
}

/* A graph made by a binding's bare constructor never crashes. */
static void
test_bare (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrGraph) graph = g_object_new (ATOMR_TYPE_GRAPH, NULL);
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  g_autoptr(AtomrActor) actor = make_actor (device, "bare-test");
  g_autoptr(GAsyncResult) r = NULL;
  guint n_nodes = 99;
  AtomrGraphState state = ATOMR_GRAPH_STATE_FAILED;

  g_object_get (graph, "n-nodes", &n_nodes, "state", &state, NULL);
  g_assert_cmpuint (n_nodes, ==, 0);
  g_assert_cmpint (state, ==, ATOMR_GRAPH_STATE_EMPTY);
  g_assert_cmpstr (atomr_graph_get_name (graph), ==, "graph");
  g_assert_null (atomr_graph_get_node_name (graph, 0));
  g_assert_false (atomr_graph_get_instantiated (graph));
  g_assert_null (atomr_graph_to_dot (graph, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  atomr_graph_replay_async (graph, actor, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_finish (graph, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_clear_object (&r);
  atomr_graph_replay_if_async (graph, actor, NULL, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_if_finish (graph, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_clear_object (&r);
  atomr_graph_replay_while_async (graph, actor, NULL, 1, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_while_finish (graph, r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_clear_object (&r);
  atomr_graph_replay_switch_async (actor, &graph, 1, NULL, NULL, store_result, &r);
  iterate_until (&r);
  g_assert_false (atomr_graph_replay_switch_finish (r, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("/graph/capture-replay", test_capture_replay);
  ADD ("/graph/replay-hazards", test_replay_hazards);
  ADD ("/graph/keeps-buffers", test_keeps_buffers);
  ADD ("/graph/refused", test_refused);
  ADD ("/graph/begin-errors", test_begin_errors);
  ADD ("/graph/replay-errors", test_replay_errors);
  ADD ("/graph/node-failure", test_node_failure);
  ADD ("/graph/attribution", test_attribution);
  ADD ("/graph/dot", test_dot);
  ADD ("/graph/others-run", test_others_run);
  ADD ("/graph/child-graph", test_child_graph);
  ADD ("/graph/cond-if", test_cond_if);
  ADD ("/graph/cond-if-eager", test_cond_if_eager);
  ADD ("/graph/cond-while", test_cond_while);
  ADD ("/graph/cond-while-limit", test_cond_while_limit);
  ADD ("/graph/cond-errors", test_cond_errors);
  ADD ("/graph/cond-switch", test_cond_switch);
  ADD ("/graph/cond-switch-eager", test_cond_switch_eager);
  ADD ("/graph/cond-switch-errors", test_cond_switch_errors);
#undef ADD
  g_test_add_func ("/graph/bare", test_bare);
  g_test_add_func ("/graph/replays-then-sync", test_replays_then_sync);
  g_test_add_func ("/graph/kernel-args", test_kernel_args);
  g_test_add_func ("/graph/cond-handle-arg", test_cond_handle_arg);
  return g_test_run ();
}
