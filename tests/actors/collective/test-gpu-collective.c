/* test-gpu-collective.c — NCCL through the collective actor on the GPUs of
 * this machine: a world of every visible GPU (one on the usual device
 * machine) runs every operation, checked against a host reference.
 * Several GPUs are exercised by the same code when present.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

static AtomrCollectiveWorld *world;
static guint n;

static gboolean
need_world (void)
{
  if (world == NULL)
    {
      g_test_skip ("no CUDA device or no NCCL");
      return FALSE;
    }
  return TRUE;
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

static AtomrTensor *
upload_f32 (AtomrDevice *device, const gfloat *values, guint count)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = atomr_buffer_new (device, ATOMR_DTYPE_F32, count, &error);
  g_autoptr(GBytes) bytes = g_bytes_new (values, count * sizeof (gfloat));
  const gint64 shape[] = { count };

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  return atomr_tensor_new (buffer, shape, 1, &error);
}

static gfloat *
download_f32 (AtomrTensor *t)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (atomr_tensor_get_buffer (t), NULL, &error);
  g_assert_no_error (error);
  return g_memdup2 (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

static void
submit (AtomrCollectiveGroup *group)
{
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;

  atomr_collective_group_submit_async (group, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (atomr_collective_group_submit_finish (group, result, &error));
  g_assert_no_error (error);
  g_object_unref (result);
}

static AtomrDevice *
dev (guint r)
{
  return atomr_actor_get_device (ATOMR_ACTOR (atomr_collective_world_get_actor (world, r)));
}

static AtomrCollectiveActor *
act (guint r)
{
  return atomr_collective_world_get_actor (world, r);
}

/* Values that are exact in f32 sums: small integers. */
static gfloat
value (guint rank, guint i)
{
  return (gfloat) ((i * 7 + rank * 13) % 97) - 40.f;
}

static void
test_all_reduce (void)
{
  const guint count = 1 << 20;
  g_autoptr(AtomrCollectiveGroup) group = NULL;
  g_autofree AtomrTensor **send = NULL, **recv = NULL;
  g_autofree gfloat *host = g_new (gfloat, count);

  if (!need_world ())
    return;
  group = atomr_collective_group_new (world);
  send = g_new0 (AtomrTensor *, n);
  recv = g_new0 (AtomrTensor *, n);
  for (guint r = 0; r < n; r++)
    {
      for (guint i = 0; i < count; i++)
        host[i] = value (r, i);
      send[r] = upload_f32 (dev (r), host, count);
      recv[r] = upload_f32 (dev (r), host, count);
      g_assert_true (atomr_collective_group_add_all_reduce (group, act (r), send[r], recv[r],
                                                            ATOMR_REDUCE_SUM, NULL));
    }
  submit (group);
  for (guint r = 0; r < n; r++)
    {
      g_autofree gfloat *out = download_f32 (recv[r]);
      for (guint i = 0; i < count; i += 997)
        {
          gfloat want = 0.f;
          for (guint q = 0; q < n; q++)
            want += value (q, i);
          g_assert_cmpfloat (out[i], ==, want);
        }
    }

  /* Max in place, then the pre-multiplied sum (1/n: the mean). */
  for (guint r = 0; r < n; r++)
    g_assert_true (atomr_collective_group_add_all_reduce (group, act (r), send[r], send[r],
                                                          ATOMR_REDUCE_MAX, NULL));
  submit (group);
  {
    g_autofree gfloat *out = download_f32 (send[0]);
    for (guint i = 0; i < count; i += 1013)
      {
        gfloat want = value (0, i);
        for (guint q = 1; q < n; q++)
          want = MAX (want, value (q, i));
        g_assert_cmpfloat (out[i], ==, want);
      }
  }
  for (guint r = 0; r < n; r++)
    {
      g_object_unref (send[r]);
      g_object_unref (recv[r]);
    }
}

static void
test_scaled_one_rank_actor (void)
{
  /* The actor's own operation: a world with one rank in this process
   * takes lone calls.  A world of several local ranks refuses them. */
  const gfloat v[] = { 2.f, -4.f, 8.f, 1.f };
  g_autoptr(AtomrTensor) t = NULL;
  g_autoptr(GError) error = NULL;
  GAsyncResult *result = NULL;
  g_autofree gfloat *out = NULL;

  if (!need_world ())
    return;
  t = upload_f32 (dev (0), v, 4);
  atomr_collective_actor_all_reduce_scaled_async (act (0), t, t, 0.5, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  if (n > 1)
    {
      g_assert_false (atomr_collective_actor_all_reduce_scaled_finish (act (0), result, &error));
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
      g_object_unref (result);
      return;
    }
  g_assert_true (atomr_collective_actor_all_reduce_scaled_finish (act (0), result, &error));
  g_assert_no_error (error);
  g_object_unref (result);
  out = download_f32 (t);
  g_assert_cmpfloat (out[0], ==, 1.f);
  g_assert_cmpfloat (out[1], ==, -2.f);
  g_assert_cmpfloat (out[2], ==, 4.f);
}

static void
test_moves (void)
{
  const guint block = 4099;
  g_autoptr(AtomrCollectiveGroup) group = NULL;
  g_autofree AtomrTensor **mine = NULL, **all = NULL, **bc = NULL, **a2a_in = NULL, **a2a_out = NULL, **rs = NULL;
  g_autofree gfloat *host = g_new (gfloat, block * n);

  if (!need_world ())
    return;
  group = atomr_collective_group_new (world);
  mine = g_new0 (AtomrTensor *, n);
  all = g_new0 (AtomrTensor *, n);
  bc = g_new0 (AtomrTensor *, n);
  a2a_in = g_new0 (AtomrTensor *, n);
  a2a_out = g_new0 (AtomrTensor *, n);
  rs = g_new0 (AtomrTensor *, n);

  /* all-gather + broadcast from the last rank + reduce-scatter + all-to-all, one group */
  for (guint r = 0; r < n; r++)
    {
      for (guint i = 0; i < block * n; i++)
        host[i] = value (r, i);
      mine[r] = upload_f32 (dev (r), host, block);
      all[r] = upload_f32 (dev (r), host, block * n);
      bc[r] = upload_f32 (dev (r), host, block);
      a2a_in[r] = upload_f32 (dev (r), host, block * n);
      a2a_out[r] = upload_f32 (dev (r), host, block * n);
      rs[r] = upload_f32 (dev (r), host, block);
      g_assert_true (atomr_collective_group_add_all_gather (group, act (r), mine[r], all[r], NULL));
      g_assert_true (atomr_collective_group_add_broadcast (group, act (r), bc[r], bc[r], n - 1, NULL));
      g_assert_true (atomr_collective_group_add_all_to_all (group, act (r), a2a_in[r], a2a_out[r], NULL));
      g_assert_true (atomr_collective_group_add_reduce_scatter (group, act (r), a2a_in[r], rs[r],
                                                                ATOMR_REDUCE_SUM, NULL));
    }
  submit (group);
  for (guint r = 0; r < n; r++)
    {
      g_autofree gfloat *ag = download_f32 (all[r]);
      g_autofree gfloat *b = download_f32 (bc[r]);
      g_autofree gfloat *a2a = download_f32 (a2a_out[r]);
      g_autofree gfloat *red = download_f32 (rs[r]);

      for (guint q = 0; q < n; q++)
        for (guint i = 0; i < block; i += 37)
          {
            g_assert_cmpfloat (ag[q * block + i], ==, value (q, i));
            g_assert_cmpfloat (a2a[q * block + i], ==, value (q, r * block + i));
          }
      for (guint i = 0; i < block; i += 41)
        {
          gfloat want = 0.f;
          g_assert_cmpfloat (b[i], ==, value (n - 1, i));
          for (guint q = 0; q < n; q++)
            want += value (q, r * block + i);
          g_assert_cmpfloat (red[i], ==, want);
        }
    }
  for (guint r = 0; r < n; r++)
    {
      g_object_unref (mine[r]); g_object_unref (all[r]); g_object_unref (bc[r]);
      g_object_unref (a2a_in[r]); g_object_unref (a2a_out[r]); g_object_unref (rs[r]);
    }
}

/* all-to-all-v with uneven blocks (rank r sends q + 1 elements to rank q,
 * from offset 3q), one call per rank in a group; and the capability
 * properties: a one-rank world never uses NVLS, fp8 reductions need
 * NCCL 2.24 and sm_90. */
static void
test_all_to_all_v (void)
{
  g_autoptr(AtomrCollectiveGroup) group = NULL;
  g_autofree AtomrTensor **in = NULL, **out = NULL;
  g_autofree gfloat *host = NULL;
  g_autoptr(GError) error = NULL;
  gboolean nvls = TRUE, fp8 = FALSE;
  gint major = 0, minor = 0;

  if (!need_world ())
    return;
  group = atomr_collective_group_new (world);
  in = g_new0 (AtomrTensor *, n);
  out = g_new0 (AtomrTensor *, n);
  host = g_new (gfloat, 3 * n + n * n + 1);
  for (guint r = 0; r < n; r++)
    {
      g_autofree guint64 *sc = g_new (guint64, n), *so = g_new (guint64, n);
      g_autofree guint64 *rc = g_new (guint64, n), *ro = g_new (guint64, n);

      for (guint i = 0; i < 3 * n + 1; i++)
        host[i] = value (r, i);
      in[r] = upload_f32 (dev (r), host, 3 * n + 1);
      for (guint i = 0; i < n * (r + 1) + 1; i++)
        host[i] = -7.f;
      out[r] = upload_f32 (dev (r), host, n * (r + 1) + 1);
      for (guint q = 0; q < n; q++)
        {
          sc[q] = q + 1;
          so[q] = 3 * q;
          rc[q] = r + 1;
          ro[q] = 1 + q * (r + 1);
        }
      g_assert_true (atomr_collective_group_add_all_to_all_v (group, act (r), in[r], sc, n, so, n,
                                                              out[r], rc, n, ro, n, &error));
      g_assert_no_error (error);
    }
  submit (group);
  for (guint r = 0; r < n; r++)
    {
      g_autofree gfloat *o = download_f32 (out[r]);
      g_assert_cmpfloat (o[0], ==, -7.f);
      for (guint q = 0; q < n; q++)
        for (guint i = 0; i <= r; i++)
          g_assert_cmpfloat (o[1 + q * (r + 1) + i], ==, value (q, 3 * r + i));
    }
  for (guint r = 0; r < n; r++)
    {
      g_object_unref (in[r]);
      g_object_unref (out[r]);
    }

  g_object_get (world, "nvls-available", &nvls, "fp8-reductions", &fp8, NULL);
  g_test_message ("world of %u: nvls-available %d, fp8-reductions %d, NCCL %u", n, nvls, fp8,
                  atomr_collective_world_get_nccl_version (world));
  if (n == 1)
    g_assert_false (nvls);
  atomr_device_get_compute_capability (dev (0), &major, &minor);
  if (atomr_collective_world_get_nccl_version (world) >= 22400 && major >= 9)
    g_assert_true (fp8);
}

/* Send/receive in a ring (to itself with one rank), and reduce to rank 0. */
static void
test_p2p_and_reduce (void)
{
  const guint count = 1000;
  g_autoptr(AtomrCollectiveGroup) group = NULL;
  g_autofree AtomrTensor **src = NULL, **dst = NULL;
  g_autofree gfloat *host = g_new (gfloat, count);
  g_autoptr(AtomrTensor) root_out = NULL;

  if (!need_world ())
    return;
  group = atomr_collective_group_new (world);
  src = g_new0 (AtomrTensor *, n);
  dst = g_new0 (AtomrTensor *, n);
  for (guint r = 0; r < n; r++)
    {
      for (guint i = 0; i < count; i++)
        host[i] = value (r, i);
      src[r] = upload_f32 (dev (r), host, count);
      dst[r] = upload_f32 (dev (r), host, count);
    }
  for (guint r = 0; r < n; r++)
    {
      g_assert_true (atomr_collective_group_add_send (group, act (r), src[r], (r + 1) % n, NULL));
      g_assert_true (atomr_collective_group_add_recv (group, act (r), dst[r], (r + n - 1) % n, NULL));
    }
  submit (group);
  for (guint r = 0; r < n; r++)
    {
      g_autofree gfloat *out = download_f32 (dst[r]);
      for (guint i = 0; i < count; i += 7)
        g_assert_cmpfloat (out[i], ==, value ((r + n - 1) % n, i));
    }

  root_out = upload_f32 (dev (0), host, count);
  for (guint r = 0; r < n; r++)
    g_assert_true (atomr_collective_group_add_reduce (group, act (r), src[r], r == 0 ? root_out : NULL,
                                                      ATOMR_REDUCE_MIN, 0, NULL));
  submit (group);
  {
    g_autofree gfloat *out = download_f32 (root_out);
    for (guint i = 0; i < count; i += 3)
      {
        gfloat want = value (0, i);
        for (guint q = 1; q < n; q++)
          want = MIN (want, value (q, i));
        g_assert_cmpfloat (out[i], ==, want);
      }
  }
  for (guint r = 0; r < n; r++)
    {
      g_object_unref (src[r]);
      g_object_unref (dst[r]);
    }
}

/* bf16 sums and fp8 moves (fp8 sums where NCCL and the GPU have them). */
static void
test_low_precision (void)
{
  g_autoptr(AtomrCollectiveGroup) group = NULL;
  g_autofree AtomrTensor **t = NULL;
  const gint64 shape[] = { 256 };

  if (!need_world ())
    return;
  group = atomr_collective_group_new (world);
  t = g_new0 (AtomrTensor *, n);
  for (guint r = 0; r < n; r++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrBuffer) b = atomr_buffer_new (dev (r), ATOMR_DTYPE_BF16, 256, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_buffer_fill_sync (b, 1.5, NULL, &error));
      t[r] = atomr_tensor_new (b, shape, 1, &error);
      g_assert_true (atomr_collective_group_add_all_reduce (group, act (r), t[r], t[r], ATOMR_REDUCE_SUM, &error));
      g_assert_no_error (error);
    }
  submit (group);
  {
    g_autoptr(GBytes) bytes = atomr_buffer_download_sync (atomr_tensor_get_buffer (t[0]), NULL, NULL);
    const guint16 *bf = g_bytes_get_data (bytes, NULL);
    guint32 bits = (guint32) bf[100] << 16;
    gfloat f;
    memcpy (&f, &bits, sizeof f);
    g_assert_cmpfloat (f, ==, 1.5f * n);
  }
  g_test_message ("fp8 reductions %s (NCCL %u)",
                  atomr_collective_world_supports_dtype (world, ATOMR_DTYPE_F8_E4M3, TRUE) ? "supported" : "not supported",
                  atomr_collective_world_get_nccl_version (world));
  for (guint r = 0; r < n; r++)
    g_object_unref (t[r]);
}

/* Abort while idle, then rebuild: the same actors work again. */
static void
test_abort_rebuild (void)
{
  g_autoptr(GError) error = NULL;

  if (!need_world ())
    return;
  atomr_collective_world_abort (world, "test");
  g_assert_true (atomr_collective_world_is_failed (world));
  g_assert_true (atomr_collective_world_rebuild (world, NULL, &error));
  g_assert_no_error (error);
  test_all_reduce ();
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int ret;

  /* NVLink multicast stays off on the shared machines. */
  g_setenv ("NCCL_NVLS_ENABLE", "0", FALSE);
  g_test_init (&argc, &argv, NULL);
  world = atomr_collective_world_new_all_devices (&error);
  if (world == NULL)
    g_printerr ("# no world: %s\n", error->message);
  else
    n = atomr_collective_world_get_n_local_ranks (world);

  g_test_add_func ("/gpu-collective/all-reduce", test_all_reduce);
  g_test_add_func ("/gpu-collective/scaled-one-rank", test_scaled_one_rank_actor);
  g_test_add_func ("/gpu-collective/moves", test_moves);
  g_test_add_func ("/gpu-collective/all-to-all-v", test_all_to_all_v);
  g_test_add_func ("/gpu-collective/p2p-and-reduce", test_p2p_and_reduce);
  g_test_add_func ("/gpu-collective/low-precision", test_low_precision);
  g_test_add_func ("/gpu-collective/abort-rebuild", test_abort_rebuild);
  ret = g_test_run ();
  g_clear_object (&world);
  return ret;
}
