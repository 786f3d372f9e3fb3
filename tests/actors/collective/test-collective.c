/* test-collective.c — worlds, groups and the collective envelope on host
 * test devices (no GPU): the CPU reference computes what NCCL would, and
 * every validation path answers with a clear error before anything runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "core/atomr-tensor-private.h"

#define N 3

typedef struct {
  AtomrDevice          *devices[N];
  AtomrCollectiveWorld *world;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < N; i++)
    {
      f->devices[i] = atomr_device_new_host ();
      atomr_device_set_host_autocomplete (f->devices[i], TRUE);
    }
  f->world = atomr_collective_world_new_local (f->devices, N, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_collective_world_get_n_ranks (f->world), ==, N);
  g_assert_cmpuint (atomr_collective_world_get_n_local_ranks (f->world), ==, N);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_assert_finalize_object (f->world);
  for (guint i = 0; i < N; i++)
    g_object_unref (f->devices[i]);
}

static AtomrTensor *
tensor_f32 (AtomrDevice *device, guint n, gfloat first, gfloat step)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, n, &error);
  const gint64 shape[] = { n };
  gfloat *host;

  g_assert_no_error (error);
  host = atomr_buffer_get_host_data (buffer);
  for (guint i = 0; i < n; i++)
    host[i] = first + step * (gfloat) i;
  return atomr_tensor_new (buffer, shape, 1, &error);
}

static const gfloat *
data_of (AtomrTensor *t)
{
  return atomr_tensor_get_host_data (t);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static gboolean
wait_group (AtomrCollectiveGroup *group, GError **error)
{
  GAsyncResult *result = NULL;
  gboolean ok;

  atomr_collective_group_submit_async (group, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  ok = atomr_collective_group_submit_finish (group, result, error);
  if (!ok && error && *error && g_test_verbose ())
    g_printerr ("group failed: %s\n", (*error)->message);
  g_object_unref (result);
  return ok;
}

static AtomrCollectiveActor *
rank (Fixture *f, guint r)
{
  return atomr_collective_world_get_actor (f->world, r);
}

/* rank r contributes r*10 + i; every rank receives the sum. */
static void
test_all_reduce (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  AtomrTensor *send[N], *recv[N];
  g_autoptr(GError) error = NULL;

  for (guint r = 0; r < N; r++)
    {
      send[r] = tensor_f32 (f->devices[r], 5, 10.f * r, 1.f);
      recv[r] = tensor_f32 (f->devices[r], 5, -1.f, 0.f);
      g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, r), send[r], recv[r],
                                                            ATOMR_REDUCE_SUM, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (atomr_collective_group_get_n_calls (group), ==, N);
  g_assert_true (wait_group (group, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_collective_group_get_n_calls (group), ==, 0);
  for (guint r = 0; r < N; r++)
    for (guint i = 0; i < 5; i++)
      g_assert_cmpfloat (data_of (recv[r])[i], ==, 30.f + 3.f * i);

  /* In place, max, then average. */
  for (guint r = 0; r < N; r++)
    g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, r), send[r], send[r],
                                                          ATOMR_REDUCE_MAX, NULL));
  g_assert_true (wait_group (group, &error));
  for (guint r = 0; r < N; r++)
    g_assert_cmpfloat (data_of (send[r])[4], ==, 24.f);
  for (guint r = 0; r < N; r++)
    {
      g_object_unref (send[r]);
      g_object_unref (recv[r]);
    }
}

static void
test_gather_scatter (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  AtomrTensor *block[N], *all[N], *rs[N], *a2a_in[N], *a2a_out[N];
  g_autoptr(GError) error = NULL;

  for (guint r = 0; r < N; r++)
    {
      block[r] = tensor_f32 (f->devices[r], 2, 100.f * r, 1.f);
      all[r] = tensor_f32 (f->devices[r], 2 * N, 0.f, 0.f);
      g_assert_true (atomr_collective_group_add_all_gather (group, rank (f, r), block[r], all[r], &error));
    }
  g_assert_true (wait_group (group, &error));
  g_assert_no_error (error);
  for (guint r = 0; r < N; r++)
    for (guint q = 0; q < N; q++)
      {
        g_assert_cmpfloat (data_of (all[r])[2 * q], ==, 100.f * q);
        g_assert_cmpfloat (data_of (all[r])[2 * q + 1], ==, 100.f * q + 1);
      }

  /* reduce-scatter of all (identical on every rank): rank r gets N × block r */
  for (guint r = 0; r < N; r++)
    {
      rs[r] = tensor_f32 (f->devices[r], 2, 0.f, 0.f);
      g_assert_true (atomr_collective_group_add_reduce_scatter (group, rank (f, r), all[r], rs[r],
                                                                ATOMR_REDUCE_SUM, &error));
    }
  g_assert_true (wait_group (group, &error));
  for (guint r = 0; r < N; r++)
    g_assert_cmpfloat (data_of (rs[r])[1], ==, N * (100.f * r + 1));

  /* all-to-all: recv[r] block q = send[q] block r */
  for (guint r = 0; r < N; r++)
    {
      a2a_in[r] = tensor_f32 (f->devices[r], N, 10.f * r, 1.f);
      a2a_out[r] = tensor_f32 (f->devices[r], N, 0.f, 0.f);
      g_assert_true (atomr_collective_group_add_all_to_all (group, rank (f, r), a2a_in[r], a2a_out[r], &error));
    }
  g_assert_true (wait_group (group, &error));
  for (guint r = 0; r < N; r++)
    for (guint q = 0; q < N; q++)
      g_assert_cmpfloat (data_of (a2a_out[r])[q], ==, 10.f * q + r);

  for (guint r = 0; r < N; r++)
    {
      g_object_unref (block[r]); g_object_unref (all[r]); g_object_unref (rs[r]);
      g_object_unref (a2a_in[r]); g_object_unref (a2a_out[r]);
    }
}

/* all-to-all-v with uneven blocks, one call per rank in one group: rank r
 * sends q + 1 elements to rank q, starting at offset 2q + 1 of its send
 * view, and receives them packed from offset 1.  Also the capability
 * properties of a host world. */
static void
test_all_to_all_v_group (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  g_autoptr(GError) error = NULL;
  AtomrTensor *in[N], *out[N];
  gboolean nvls = TRUE, fp8 = TRUE;

  for (guint r = 0; r < N; r++)
    {
      guint64 send_counts[N], send_offsets[N], recv_counts[N], recv_offsets[N];
      guint64 at = 1;

      in[r] = tensor_f32 (f->devices[r], 3 * N, 100.f * r, 1.f);
      out[r] = tensor_f32 (f->devices[r], 1 + N * (r + 1), -1.f, 0.f);
      for (guint q = 0; q < N; q++)
        {
          send_counts[q] = q + 1;
          send_offsets[q] = 2 * q + 1;
          recv_counts[q] = r + 1;
          recv_offsets[q] = at;
          at += r + 1;
        }
      g_assert_true (atomr_collective_group_add_all_to_all_v (group, rank (f, r), in[r], send_counts, N,
                                                              send_offsets, N, out[r], recv_counts, N,
                                                              recv_offsets, N, &error));
      g_assert_no_error (error);
    }
  wait_group (group, &error);
  g_assert_no_error (error);
  for (guint r = 0; r < N; r++)
    {
      const gfloat *o = data_of (out[r]);
      g_assert_cmpfloat (o[0], ==, -1.f);                  /* before the first offset: untouched */
      for (guint q = 0; q < N; q++)
        for (guint i = 0; i <= r; i++)                      /* from q: its block for r */
          g_assert_cmpfloat (o[1 + q * (r + 1) + i], ==, 100.f * q + 2 * r + 1 + i);
    }

  /* wrong array lengths: named, nothing added */
  {
    guint64 one[1] = { 1 };
    g_assert_false (atomr_collective_group_add_all_to_all_v (group, rank (f, 0), in[0], one, 1, one, 1,
                                                             out[0], one, 1, one, 1, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "one entry per rank (3)"));
    g_clear_error (&error);
  }

  /* counts that do not match across ranks: refused before NCCL hangs */
  for (guint r = 0; r < N; r++)
    {
      guint64 counts[N] = { 1, 1, 1 }, offsets[N] = { 0, 1, 2 };
      if (r == 0)
        counts[1] = 2;   /* rank 0 sends 2 to rank 1, which expects 1 */
      g_assert_true (atomr_collective_group_add_all_to_all_v (group, rank (f, r), in[r], counts, N, offsets, N,
                                                              out[r], (guint64[N]) { 1, 1, 1 }, N, offsets, N,
                                                              &error));
    }
  g_assert_false (wait_group (group, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "rank 0 sends 2 elements to rank 1, which expects 1"));
  g_clear_error (&error);

  g_object_get (f->world, "nvls-available", &nvls, "fp8-reductions", &fp8, NULL);
  g_assert_false (nvls);   /* host devices: no multicast */
  g_assert_false (fp8);
  g_assert_false (atomr_collective_world_get_nvls_available (f->world));

  for (guint r = 0; r < N; r++)
    {
      g_object_unref (in[r]);
      g_object_unref (out[r]);
    }
}

static void
test_root_and_p2p (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  AtomrTensor *t[N], *out = NULL;
  g_autoptr(AtomrTensor) a = tensor_f32 (f->devices[0], 4, 7.f, 1.f);
  g_autoptr(AtomrTensor) b = tensor_f32 (f->devices[2], 4, 0.f, 0.f);
  g_autoptr(GError) error = NULL;

  /* broadcast from rank 1; the others pass no send view */
  for (guint r = 0; r < N; r++)
    {
      t[r] = tensor_f32 (f->devices[r], 4, r == 1 ? 5.f : 0.f, r == 1 ? 2.f : 0.f);
      g_assert_true (atomr_collective_group_add_broadcast (group, rank (f, r), r == 1 ? t[r] : NULL,
                                                           t[r], 1, &error));
      g_assert_no_error (error);
    }
  g_assert_true (wait_group (group, &error));
  for (guint r = 0; r < N; r++)
    g_assert_cmpfloat (data_of (t[r])[3], ==, 11.f);

  /* reduce (product) to rank 2 */
  out = tensor_f32 (f->devices[2], 4, 0.f, 0.f);
  for (guint r = 0; r < N; r++)
    g_assert_true (atomr_collective_group_add_reduce (group, rank (f, r), t[r], r == 2 ? out : NULL,
                                                      ATOMR_REDUCE_PROD, 2, &error));
  g_assert_true (wait_group (group, &error));
  g_assert_cmpfloat (data_of (out)[0], ==, 125.f);

  /* send 0 -> 2 */
  g_assert_true (atomr_collective_group_add_send (group, rank (f, 0), a, 2, &error));
  g_assert_true (atomr_collective_group_add_recv (group, rank (f, 2), b, 0, &error));
  g_assert_true (wait_group (group, &error));
  g_assert_cmpfloat (data_of (b)[3], ==, 10.f);

  for (guint r = 0; r < N; r++)
    g_object_unref (t[r]);
  g_object_unref (out);
}

typedef struct {
  const gchar *what;
  gint         code;
  const gchar *message;
} Expect;

static void
expect_add (gboolean ok, GError *error, gint code, const gchar *substring)
{
  g_assert_false (ok);
  g_assert_nonnull (error);
  g_assert_true (error->domain == ATOMR_ERROR);
  g_assert_cmpint (error->code, ==, code);
  if (!strstr (error->message, substring))
    g_error ("message \"%s\" lacks \"%s\"", error->message, substring);
  g_error_free (error);
}

static void
test_validation (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  g_autoptr(AtomrTensor) s = tensor_f32 (f->devices[0], 6, 0.f, 1.f);
  g_autoptr(AtomrTensor) r5 = tensor_f32 (f->devices[0], 5, 0.f, 1.f);
  g_autoptr(AtomrTensor) other_dev = tensor_f32 (f->devices[1], 6, 0.f, 1.f);
  g_autoptr(AtomrTensor) strided = atomr_tensor_slice (s, 0, 0, 6, 2, NULL);
  g_autoptr(AtomrTensor) half = atomr_tensor_slice (s, 0, 1, 4, 1, NULL);
  g_autoptr(AtomrBuffer) ibuf = atomr_buffer_new (f->devices[0], ATOMR_DTYPE_I32, 6, NULL);
  g_autoptr(AtomrTensor) ints = atomr_tensor_new_for_buffer (ibuf);
  g_autoptr(AtomrBuffer) cbuf = atomr_buffer_new (f->devices[0], ATOMR_DTYPE_C64, 6, NULL);
  g_autoptr(AtomrTensor) cplx = atomr_tensor_new_for_buffer (cbuf);
  AtomrCollectiveActor *a0 = rank (f, 0);
  GError *error = NULL;
  gboolean ok;

  ok = atomr_collective_group_add_all_reduce (group, a0, s, r5, ATOMR_REDUCE_SUM, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "6 elements but recv 5");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, s, other_dev, ATOMR_REDUCE_SUM, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "recv");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, strided, strided, ATOMR_REDUCE_SUM, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "not contiguous");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, s, half, ATOMR_REDUCE_SUM, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "elements");
  error = NULL;
  ok = atomr_collective_group_add_all_gather (group, a0, half, s, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "recv holds 6");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, s, ints, ATOMR_REDUCE_SUM, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "one dtype");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, cplx, cplx, ATOMR_REDUCE_MAX, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "complex numbers take sum or average");
  error = NULL;
  ok = atomr_collective_group_add_all_reduce (group, a0, s, s, (AtomrReduceOp) 42, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "op 42");
  error = NULL;
  ok = atomr_collective_group_add_broadcast (group, a0, s, s, 7, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "root 7");
  error = NULL;
  ok = atomr_collective_group_add_broadcast (group, a0, NULL, s, 0, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "is the root");
  error = NULL;
  ok = atomr_collective_group_add_send (group, a0, s, 3, &error);
  expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "peer 3 is not below the world size 3");
  error = NULL;
  /* overlapping, not in place */
  {
    g_autoptr(AtomrTensor) x = atomr_tensor_slice (s, 0, 0, 3, 1, NULL);
    g_autoptr(AtomrTensor) y = atomr_tensor_slice (s, 0, 1, 4, 1, NULL);
    ok = atomr_collective_group_add_all_reduce (group, a0, x, y, ATOMR_REDUCE_SUM, &error);
    expect_add (ok, error, ATOMR_ERROR_INVALID_ARGUMENT, "overlap");
    error = NULL;
  }
  g_assert_cmpuint (atomr_collective_group_get_n_calls (group), ==, 0);
}

/* What would hang NCCL fails at once. */
static void
test_deadlock_refused (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  g_autoptr(AtomrTensor) s0 = tensor_f32 (f->devices[0], 4, 0.f, 1.f);
  g_autoptr(AtomrTensor) s1 = tensor_f32 (f->devices[1], 4, 0.f, 1.f);
  g_autoptr(AtomrTensor) s1b = tensor_f32 (f->devices[1], 3, 0.f, 1.f);
  GAsyncResult *result = NULL;
  GError *error = NULL;

  /* A lone all-reduce on a local world of 3 ranks. */
  atomr_collective_actor_all_reduce_async (rank (f, 0), s0, s0, ATOMR_REDUCE_SUM, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (atomr_collective_actor_all_reduce_finish (rank (f, 0), result, &error));
  expect_add (FALSE, error, ATOMR_ERROR_WOULD_DEADLOCK, "needs one call per rank");
  g_clear_object (&result);

  /* Two of three ranks. */
  g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, 0), s0, s0, ATOMR_REDUCE_SUM, NULL));
  g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, 1), s1, s1, ATOMR_REDUCE_SUM, NULL));
  error = NULL;
  g_assert_false (wait_group (group, &error));
  expect_add (FALSE, error, ATOMR_ERROR_WOULD_DEADLOCK, "and 0 for rank 2");

  /* A send without its receive, and one of another size. */
  g_assert_true (atomr_collective_group_add_send (group, rank (f, 0), s0, 1, NULL));
  error = NULL;
  g_assert_false (wait_group (group, &error));
  expect_add (FALSE, error, ATOMR_ERROR_WOULD_DEADLOCK, "no matching recv");
  g_assert_true (atomr_collective_group_add_send (group, rank (f, 0), s0, 1, NULL));
  g_assert_true (atomr_collective_group_add_recv (group, rank (f, 1), s1b, 0, NULL));
  error = NULL;
  g_assert_false (wait_group (group, &error));
  expect_add (FALSE, error, ATOMR_ERROR_WOULD_DEADLOCK, "of the same size");

  /* An empty group. */
  error = NULL;
  g_assert_false (wait_group (group, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "nothing to submit");
}

static void
on_failed (AtomrCollectiveWorld *world, GError *error, gpointer user_data)
{
  gchar **message = user_data;
  *message = g_strdup (error->message);
}

static void
test_abort_and_rebuild (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (f->world);
  AtomrTensor *t[N];
  g_autofree gchar *message = NULL;
  GError *error = NULL;

  g_signal_connect (f->world, "world-failed", G_CALLBACK (on_failed), &message);
  atomr_collective_world_abort (f->world, "rank 2 lost");
  g_assert_true (atomr_collective_world_is_failed (f->world));
  while (message == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (strstr (message, "rank 2 lost"));

  for (guint r = 0; r < N; r++)
    {
      t[r] = tensor_f32 (f->devices[r], 2, 1.f, 0.f);
      g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, r), t[r], t[r], ATOMR_REDUCE_SUM, NULL));
    }
  g_assert_false (wait_group (group, &error));
  g_assert_nonnull (strstr (error->message, "must be rebuilt"));
  g_assert_nonnull (strstr (error->message, "rank 2 lost"));
  g_clear_error (&error);

  g_assert_true (atomr_collective_world_rebuild (f->world, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (atomr_collective_world_is_failed (f->world));
  /* The failed request's outputs carry its failure to later readers
   * (errors flow along dependencies): start again from fresh data. */
  for (guint r = 0; r < N; r++)
    {
      g_object_unref (t[r]);
      t[r] = tensor_f32 (f->devices[r], 2, 1.f, 0.f);
      g_assert_true (atomr_collective_group_add_all_reduce (group, rank (f, r), t[r], t[r], ATOMR_REDUCE_SUM, NULL));
    }
  g_assert_true (wait_group (group, &error));
  g_assert_cmpfloat (data_of (t[0])[0], ==, 3.f);
  for (guint r = 0; r < N; r++)
    g_object_unref (t[r]);
}

/* Objects made the GObject way, and worlds made wrong. */
static void
test_construction_errors (void)
{
  g_autoptr(AtomrDevice) host = atomr_device_new_host ();
  g_autoptr(AtomrCollectiveActor) bare = g_object_new (ATOMR_TYPE_COLLECTIVE_ACTOR, NULL);
  g_autoptr(AtomrCollectiveGroup) bare_group = g_object_new (ATOMR_TYPE_COLLECTIVE_GROUP, NULL);
  g_autoptr(AtomrCollectiveWorld) bare_world = g_object_new (ATOMR_TYPE_COLLECTIVE_WORLD, NULL);
  g_autoptr(AtomrTensor) t = tensor_f32 (host, 4, 0.f, 1.f);
  AtomrDevice *twice[] = { host, host };
  GError *error = NULL;

  g_assert_false (atomr_collective_group_add_send (bare_group, bare, t, 1, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "without a world");
  error = NULL;
  g_assert_null (atomr_collective_world_get_actor (bare_world, 0));
  g_assert_false (atomr_collective_world_rebuild (bare_world, NULL, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "not built by");
  error = NULL;
  g_assert_null (atomr_collective_world_new_local (twice, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);
  g_assert_null (atomr_collective_world_new_local (NULL, 0, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "no devices");
  error = NULL;
  g_assert_null (atomr_collective_world_new_rank (host, "not base64 of an id", 0, 1, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "unique id decodes to");
  error = NULL;
  g_assert_null (atomr_collective_world_new_rank (host, "", 3, 2, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "rank 3 is not below the world size 2");
}

static void
test_environment_errors (void)
{
  g_autoptr(AtomrDevice) host = atomr_device_new_host ();
  GAsyncResult *result = NULL;
  GError *error = NULL;

  g_unsetenv ("RANK");
  g_unsetenv ("WORLD_SIZE");
  atomr_collective_world_new_from_environment_async (host, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (atomr_collective_world_new_finish (result, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "RANK is not set");
  g_clear_object (&result);

  g_setenv ("RANK", "2", TRUE);
  g_setenv ("WORLD_SIZE", "two", TRUE);
  error = NULL;
  atomr_collective_world_new_from_environment_async (host, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (atomr_collective_world_new_finish (result, &error));
  expect_add (FALSE, error, ATOMR_ERROR_INVALID_ARGUMENT, "WORLD_SIZE is 'two', not a number");
  g_clear_object (&result);
  g_unsetenv ("RANK");
  g_unsetenv ("WORLD_SIZE");
}

static void
test_dtype_support (Fixture *f, gconstpointer data)
{
  g_assert_true (atomr_collective_world_supports_dtype (f->world, ATOMR_DTYPE_F8_E4M3, FALSE));
  g_assert_false (atomr_collective_world_supports_dtype (f->world, ATOMR_DTYPE_F8_E4M3, TRUE));
  g_assert_true (atomr_collective_world_supports_dtype (f->world, ATOMR_DTYPE_F64, TRUE));
  g_assert_true (atomr_collective_world_supports_dtype (f->world, ATOMR_DTYPE_C128, TRUE));
  g_assert_false (atomr_collective_world_supports_dtype (f->world, (AtomrDtype) 99, FALSE));
  g_assert_cmpuint (atomr_collective_world_get_nccl_version (f->world), ==, 0);
  atomr_collective_world_set_timeout_ms (f->world, 1500);
  g_assert_cmpuint (atomr_collective_world_get_timeout_ms (f->world), ==, 1500);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/collective/all-reduce", Fixture, NULL, fixture_setup, test_all_reduce, fixture_teardown);
  g_test_add ("/collective/gather-scatter-all-to-all", Fixture, NULL, fixture_setup, test_gather_scatter, fixture_teardown);
  g_test_add ("/collective/all-to-all-v-group", Fixture, NULL, fixture_setup, test_all_to_all_v_group, fixture_teardown);
  g_test_add ("/collective/root-and-p2p", Fixture, NULL, fixture_setup, test_root_and_p2p, fixture_teardown);
  g_test_add ("/collective/validation", Fixture, NULL, fixture_setup, test_validation, fixture_teardown);
  g_test_add ("/collective/deadlock-refused", Fixture, NULL, fixture_setup, test_deadlock_refused, fixture_teardown);
  g_test_add ("/collective/abort-and-rebuild", Fixture, NULL, fixture_setup, test_abort_and_rebuild, fixture_teardown);
  g_test_add ("/collective/dtype-support", Fixture, NULL, fixture_setup, test_dtype_support, fixture_teardown);
  g_test_add_func ("/collective/construction-errors", test_construction_errors);
  g_test_add_func ("/collective/environment-errors", test_environment_errors);
  return g_test_run ();
}
