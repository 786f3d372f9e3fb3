/* bench-collective.c — all-reduce bandwidth through the collective actor
 * against raw NCCL calls on the same communicators, in one run, on every
 * visible GPU (NCCL_NVLS_ENABLE=0).  Bandwidth as nccl-tests reports it:
 * algbw = bytes / time, busbw = algbw × 2 (n − 1) / n (0 with one GPU,
 * where an all-reduce is a local copy: then algbw is the figure).  Also
 * peer copy bandwidth between GPU 0 and 1 (actor vs raw cuMemcpyPeerAsync)
 * when there are two, and the peer topology.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include "actors/collective/atomr-collective-private.h"
#include "core/atomr-device-private.h"
#include "../bench-util.h"

static void
wait_group (AtomrCollectiveGroup *group, gboolean reply)
{
  GAsyncResult *result = NULL;
  g_autoptr(GError) error = NULL;

  if (!reply)
    {
      atomr_collective_group_submit_async (group, NULL, NULL, NULL);
      return;
    }
  atomr_collective_group_submit_async (group, NULL, bench_store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  if (!atomr_collective_group_submit_finish (group, result, &error))
    g_error ("all-reduce failed: %s", error->message);
  g_object_unref (result);
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCollectiveWorld) world = NULL;
  guint n;
  const guint64 max_bytes = (guint64) 1 << 30;
  AtomrTensor **t;
  CUstream *raw_streams;
  CUevent *ev0, *ev1;

  g_setenv ("NCCL_NVLS_ENABLE", "0", FALSE);
  world = atomr_collective_world_new_all_devices (&error);
  if (world == NULL)
    {
      g_print ("# bench-collective: skipped: %s\n", error->message);
      return 0;
    }
  n = atomr_collective_world_get_n_local_ranks (world);
  g_print ("# bench-collective: %u GPU(s), NCCL %u; all-reduce f32 sum in place, median of 20\n",
           n, atomr_collective_world_get_nccl_version (world));
  g_print ("# topology (peer rank; -1: no direct path):\n");
  for (guint i = 0; i < n; i++)
    {
      AtomrDevice *di = atomr_actor_get_device (ATOMR_ACTOR (atomr_collective_world_get_actor (world, i)));
      g_print ("#  GPU %u:", i);
      for (guint j = 0; j < n; j++)
        g_print (" %3d", atomr_device_get_peer_rank (di, atomr_actor_get_device (
                   ATOMR_ACTOR (atomr_collective_world_get_actor (world, j)))));
      g_print ("\n");
    }

  t = g_new0 (AtomrTensor *, n);
  raw_streams = g_new0 (CUstream, n);
  ev0 = g_new0 (CUevent, n);
  ev1 = g_new0 (CUevent, n);
  for (guint r = 0; r < n; r++)
    {
      AtomrDevice *d = atomr_actor_get_device (ATOMR_ACTOR (atomr_collective_world_get_actor (world, r)));
      const gint64 shape[] = { (gint64) (max_bytes / 4) };
      g_autoptr(AtomrBuffer) b = atomr_buffer_new (d, ATOMR_DTYPE_F32, max_bytes / 4, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_buffer_fill_sync (b, 1.0, NULL, &error));
      t[r] = atomr_tensor_new (b, shape, 1, &error);
      g_assert_true (atomr_device_enter (d, &error));
      g_assert_cmpint (ATOMR_CU->cuStreamCreate (&raw_streams[r], CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
      g_assert_cmpint (ATOMR_CU->cuEventCreate (&ev0[r], CU_EVENT_DEFAULT), ==, CUDA_SUCCESS);
      g_assert_cmpint (ATOMR_CU->cuEventCreate (&ev1[r], CU_EVENT_DEFAULT), ==, CUDA_SUCCESS);
      atomr_device_leave (d);
    }

  g_print ("%12s %12s %12s %10s %12s %12s\n", "bytes", "raw_us", "atomr_us", "raw/atomr", "algbw_GB/s", "busbw_GB/s");
  for (guint64 bytes = 1024; bytes <= max_bytes; bytes *= 4)
    {
      guint64 count = bytes / 4;
      const guint iters = bytes >= (64u << 20) ? 5 : 20;
      gdouble raw[20], act[20], raw_med, act_med;
      g_autoptr(AtomrCollectiveGroup) group = atomr_collective_group_new (world);
      g_autofree AtomrTensor **views = g_new0 (AtomrTensor *, n);

      for (guint r = 0; r < n; r++)
        views[r] = atomr_tensor_slice (t[r], 0, 0, (gint64) count, 1, &error);
      /* warm up both paths */
      for (guint r = 0; r < n; r++)
        atomr_collective_group_add_all_reduce (group, atomr_collective_world_get_actor (world, r),
                                               views[r], views[r], ATOMR_REDUCE_SUM, NULL);
      wait_group (group, TRUE);

      for (guint k = 0; k < iters; k++)
        {
          gdouble t0;
          /* raw: the world's own communicators on private streams */
          t0 = bench_now_us ();
          ncclGroupStart ();
          for (guint r = 0; r < n; r++)
            ncclAllReduce ((void *) (guintptr) atomr_tensor_get_ptr (views[r]),
                           (void *) (guintptr) atomr_tensor_get_ptr (views[r]), count, ncclFloat32, ncclSum,
                           atomr_collective_world_get_comm (world, r), (cudaStream_t) raw_streams[r]);
          ncclGroupEnd ();
          atomr_collective_world_wait_ready (world, "bench", NULL);
          for (guint r = 0; r < n; r++)
            ATOMR_CU->cuStreamSynchronize (raw_streams[r]);
          raw[k] = bench_now_us () - t0;

          /* atomr: one group request, reply when done */
          t0 = bench_now_us ();
          for (guint r = 0; r < n; r++)
            atomr_collective_group_add_all_reduce (group, atomr_collective_world_get_actor (world, r),
                                                   views[r], views[r], ATOMR_REDUCE_SUM, NULL);
          wait_group (group, TRUE);
          act[k] = bench_now_us () - t0;
        }
      raw_med = bench_median (raw, iters);
      act_med = bench_median (act, iters);
      {
        gdouble algbw = bytes / act_med / 1e3;
        g_print ("%12" G_GUINT64_FORMAT " %12.2f %12.2f %10.3f %12.2f %12.2f\n", bytes, raw_med, act_med,
                 raw_med / act_med, algbw, algbw * 2.0 * (n - 1) / n);
      }
      for (guint r = 0; r < n; r++)
        g_object_unref (views[r]);
    }

  if (n >= 2)
    {
      AtomrActor *a0 = ATOMR_ACTOR (atomr_collective_world_get_actor (world, 0));
      AtomrDevice *d0 = atomr_actor_get_device (a0);
      AtomrDevice *d1 = atomr_actor_get_device (ATOMR_ACTOR (atomr_collective_world_get_actor (world, 1)));
      gdouble raw[5], act[5];
      for (guint k = 0; k < 5; k++)
        {
          gdouble t0 = bench_now_us ();
          GAsyncResult *res = NULL;

          atomr_device_enter (d0, NULL);
          ATOMR_CU->cuMemcpyPeerAsync (atomr_tensor_get_ptr (t[0]), atomr_device_get_cu_context (d0),
                                       atomr_tensor_get_ptr (t[1]), atomr_device_get_cu_context (d1),
                                       max_bytes, raw_streams[0]);
          ATOMR_CU->cuStreamSynchronize (raw_streams[0]);
          atomr_device_leave (d0);
          raw[k] = bench_now_us () - t0;
          t0 = bench_now_us ();
          atomr_actor_copy_peer_async (a0, atomr_tensor_get_buffer (t[0]), atomr_tensor_get_buffer (t[1]),
                                       NULL, bench_store_result, &res);
          while (res == NULL)
            g_main_context_iteration (NULL, TRUE);
          g_assert_true (atomr_actor_copy_peer_finish (a0, res, NULL));
          g_object_unref (res);
          act[k] = bench_now_us () - t0;
        }
      g_print ("# peer copy GPU1 -> GPU0, 1 GiB: raw %.1f GB/s, actor %.1f GB/s (ratio %.3f)\n",
               max_bytes / bench_median (raw, 5) / 1e3, max_bytes / bench_median (act, 5) / 1e3,
               bench_median (raw, 5) / bench_median (act, 5));
    }
  for (guint r = 0; r < n; r++)
    g_object_unref (t[r]);
  g_free (t);
  return 0;
}
