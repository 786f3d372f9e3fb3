/* bench-tensor.c — the Tensor actor's permutation and reductions against
 * the copy bandwidth measured in the same run
 *
 * (b) 3-D permutations of a 512³ f32 tensor ("abc->cab", "abc->cba",
 *     "abc->acb"): GB/s counted as read + write bytes, against
 *     cuMemcpyDtoDAsync of the same bytes on a raw non-blocking stream
 *     (also read + write).  Goal: ≥ 0.85×.
 * (c) sum of an 8192×8192 f32 matrix over each axis ("ab->a": rows kernel,
 *     "ab->b": cols kernel): GB/s of the bytes read (the output is 32 KiB)
 *     against the same copy bandwidth.  Goal: ≥ 0.85×.
 *
 * (a), the contraction "abcd,cdef->abef", is not measured: contractions
 * run on the generic reduction kernels until the cuBLASLt path exists
 * (peer_torch.py prints PyTorch's figure for it).
 *
 * Each figure is the best of REPS repetitions of ITERS pipelined calls
 * (all submitted, then waited for), timed on the host; the first call of
 * each shape compiles (or loads from the kernel cache) and is not timed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"
#include "../bench-util.h"

#define REPS  5
#define ITERS 20

typedef struct {
  guint done, failed;
} Count;

static void
count_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Count *c = user_data;
  g_autoptr(GError) error = NULL;
  gboolean ok;

  if (g_task_get_source_tag (G_TASK (result)) == (gpointer) atomr_tensor_actor_reduce_async)
    ok = atomr_tensor_actor_reduce_finish (ATOMR_TENSOR_ACTOR (source), result, &error);
  else
    ok = atomr_tensor_actor_permute_finish (ATOMR_TENSOR_ACTOR (source), result, &error);
  if (!ok)
    {
      g_printerr ("bench-tensor: %s\n", error->message);
      c->failed++;
    }
  c->done++;
}

static void
wait_count (Count *c, guint n)
{
  while (c->done < n)
    g_main_context_iteration (NULL, TRUE);
  if (c->failed)
    g_error ("bench-tensor: %u calls failed", c->failed);
}

static gdouble
time_permute (AtomrTensorActor *actor, const gchar *modes, AtomrTensor *a, AtomrTensor *b, guint iters)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    atomr_tensor_actor_permute_async (actor, modes, 1.0, ATOMR_TENSOR_UNARY_IDENTITY, a, b, NULL, count_done, &c);
  wait_count (&c, iters);
  return (bench_now_us () - t0) / 1e6;
}

static gdouble
time_reduce (AtomrTensorActor *actor, const gchar *modes, AtomrTensor *a, AtomrTensor *c_out, guint iters)
{
  Count c = { 0, 0 };
  gdouble t0 = bench_now_us ();

  for (guint i = 0; i < iters; i++)
    atomr_tensor_actor_reduce_async (actor, modes, ATOMR_TENSOR_REDUCE_SUM, 1.0, a, 0.0, c_out, NULL, count_done, &c);
  wait_count (&c, iters);
  return (bench_now_us () - t0) / 1e6;
}

static gdouble
time_copy (AtomrDevice *device, CUstream stream, AtomrBuffer *src, AtomrBuffer *dst, guint64 bytes, guint iters)
{
  gdouble t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = bench_now_us ();
  for (guint i = 0; i < iters; i++)
    if (ATOMR_CU->cuMemcpyDtoDAsync (atomr_buffer_get_device_pointer (dst),
                                     atomr_buffer_get_device_pointer (src), bytes, stream) != CUDA_SUCCESS)
      g_error ("cuMemcpyDtoDAsync failed");
  if (ATOMR_CU->cuStreamSynchronize (stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (bench_now_us () - t0) / 1e6;
}

int
main (int argc, char **argv)
{
  const gint64 cube[] = { 512, 512, 512 }, mat[] = { 8192, 8192 }, vec[] = { 8192 };
  const gchar *perms[] = { "abc->cab", "abc->cba", "abc->acb" };
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrTensorActor) actor = NULL;
  g_autoptr(AtomrTensor) a = NULL, b = NULL, m = NULL, v = NULL;
  CUstream stream = NULL;
  guint64 cube_bytes = 512ull * 512 * 512 * 4, mat_bytes = 8192ull * 8192 * 4;
  gdouble copy_gbps = 0, best;

  if (device == NULL)
    {
      g_print ("bench-tensor: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_tensor_actor_new (device, &error);
  g_assert_no_error (error);
  a = atomr_tensor_empty (device, ATOMR_DTYPE_F32, cube, 3, &error);
  g_assert_no_error (error);
  b = atomr_tensor_empty (device, ATOMR_DTYPE_F32, cube, 3, &error);
  g_assert_no_error (error);
  m = atomr_tensor_empty (device, ATOMR_DTYPE_F32, mat, 2, &error);
  g_assert_no_error (error);
  v = atomr_tensor_empty (device, ATOMR_DTYPE_F32, vec, 1, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (a), 1.0, NULL, &error));
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (m), 1.0, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (atomr_device_enter (device, NULL));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  atomr_device_leave (device);

  g_print ("# Tensor actor on %s; best of %d × %d pipelined calls\n", atomr_device_get_name (device), REPS, ITERS);

  /* the copy baseline: 512³ f32, read + write */
  time_copy (device, stream, atomr_tensor_get_buffer (a), atomr_tensor_get_buffer (b), cube_bytes, 2);
  best = G_MAXDOUBLE;
  for (guint r = 0; r < REPS; r++)
    best = MIN (best, time_copy (device, stream, atomr_tensor_get_buffer (a), atomr_tensor_get_buffer (b),
                                 cube_bytes, ITERS));
  copy_gbps = 2.0 * cube_bytes * ITERS / best / 1e9;
  g_print ("copy      cuMemcpyDtoD 512^3 f32      %8.1f GB/s (read+write)\n", copy_gbps);

  /* (b) permutations */
  for (guint i = 0; i < G_N_ELEMENTS (perms); i++)
    {
      gdouble gbps;

      time_permute (actor, perms[i], a, b, 1);     /* compile / cache load */
      best = G_MAXDOUBLE;
      for (guint r = 0; r < REPS; r++)
        best = MIN (best, time_permute (actor, perms[i], a, b, ITERS));
      gbps = 2.0 * cube_bytes * ITERS / best / 1e9;
      g_print ("permute   %-10s 512^3 f32        %8.1f GB/s  ratio to copy %.3f (goal 0.85)\n",
               perms[i], gbps, gbps / copy_gbps);
    }

  /* (c) reductions over each axis */
  {
    const gchar *modes[] = { "ab->a", "ab->b" };
    const gchar *what[] = { "sum over axis 1 (rows kernel)", "sum over axis 0 (cols kernel)" };

    for (guint i = 0; i < 2; i++)
      {
        gdouble gbps;

        time_reduce (actor, modes[i], m, v, 1);
        best = G_MAXDOUBLE;
        for (guint r = 0; r < REPS; r++)
          best = MIN (best, time_reduce (actor, modes[i], m, v, ITERS));
        gbps = (gdouble) mat_bytes * ITERS / best / 1e9;
        g_print ("reduce    %-6s 8192^2 f32 %-31s %8.1f GB/s  ratio to copy %.3f (goal 0.85)\n",
                 modes[i], what[i], gbps, gbps / copy_gbps);
      }
  }

  g_assert_true (atomr_device_enter (device, NULL));
  ATOMR_CU->cuStreamDestroy (stream);
  atomr_device_leave (device);
  return 0;
}
