/* bench-cudnn-graph.c — an AtomrCudnnGraph on the actor against the same
 * backend graph run raw
 *
 * The graph: ResNet-50's 3×3 convolution (N = 32, C = K = 256, 56 × 56,
 * padding 1, NHWC bf16, KRSC filter) → + bias → ReLU, the intermediates
 * virtual f32 tensors: one fused cuDNN kernel.  The actor side submits
 * atomr_cudnn_actor_execute_graph_async() calls pipelined (all submitted
 * before waiting, the plan from the actor's cache) and times from the first
 * submit to the last completion.  The raw side builds the same backend
 * descriptors with the private helper (the same heuristics, the first
 * usable engine configuration, the actor's workspace limit) on its own
 * handle and non-blocking stream and calls cudnnBackendExecute the same
 * number of times.  Best of REPS, interleaved.
 *
 * Prints TFLOP/s and µs per call for both and the actor/raw throughput
 * ratio (≥ 0.95 wanted: both run the same plan, the gap is overhead).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-cudnn-table-private.h"

#include <atomr.h>
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"

#define REPS      3
#define MAX_ITERS 200
#define BATCH_S   0.25

enum { UID_X = 1, UID_W, UID_B, UID_Y, UID_CONV, UID_BIASED };

typedef struct {
  AtomrCudnnActor *actor;
  AtomrCudnnGraph *graph;
  guint            ids[4];
  AtomrTensor     *views[4];
  guint            done, failed;
} Pipe;

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Pipe *p = user_data;
  g_autoptr(GError) error = NULL;

  if (!atomr_cudnn_actor_execute_graph_finish (p->actor, result, &error) && p->failed++ == 0)
    g_printerr ("graph failed: %s\n", error->message);
  p->done++;
}

static gdouble
time_actor (Pipe *p, guint iters)
{
  gdouble t0 = g_get_monotonic_time ();

  p->done = 0;
  for (guint i = 0; i < iters; i++)
    atomr_cudnn_actor_execute_graph_async (p->actor, p->graph, p->ids, p->views, 4, NULL, on_done, p);
  while (p->done < iters)
    g_main_context_iteration (NULL, TRUE);
  if (p->failed)
    exit (1);
  return (g_get_monotonic_time () - t0) / 1e6;
}

typedef struct {
  cudnnHandle_t          handle;
  CUstream               stream;
  AtomrCudnnBackendPlan *plan;
  CUdeviceptr            ws;
  void                  *ptrs[4];
} Raw;

static void
strides_nhwc (const gint64 *d, gint64 *s)
{
  s[1] = 1;
  s[3] = d[1];
  s[2] = d[1] * d[3];
  s[0] = d[1] * d[2] * d[3];
}

static void
raw_setup (Raw *raw, AtomrDevice *device, const gint64 *xd, const gint64 *wd, const gint64 *bd,
           const gint64 *yd, guint64 limit, AtomrTensor **views)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new ("conv-bias-relu (raw)");
  gint64 xs[4], ws[4], bs[4], ys[4];
  cudnnBackendDescriptor_t conv, op;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT, bf16 = CUDNN_DATA_BFLOAT16;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  gint64 spatial = 2, pad[2] = { 1, 1 }, one[2] = { 1, 1 };
  gfloat alpha = 1.0f, beta = 0.0f;

  strides_nhwc (xd, xs);
  strides_nhwc (wd, ws);
  strides_nhwc (bd, bs);
  strides_nhwc (yd, ys);
  g_assert_true (atomr_device_enter (device, NULL));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&raw->stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  g_assert_true (atomr_cudnn_load (NULL));
  g_assert_true (atomr_cudnn_status_check (cudnnCreate (&raw->handle), "cudnnCreate", "bench", NULL));
  g_assert_true (atomr_cudnn_status_check (cudnnSetStream (raw->handle, (cudaStream_t) raw->stream),
                                           "cudnnSetStream", "bench", NULL));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_X, bf16, 4, xd, xs, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_W, bf16, 4, wd, ws, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_B, bf16, 4, bd, bs, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_Y, bf16, 4, yd, ys, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_CONV, compute, 4, yd, ys,
                                                          ATOMR_CUDNN_TENSOR_VIRTUAL, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_BIASED, compute, 4, yd, ys,
                                                          ATOMR_CUDNN_TENSOR_VIRTUAL, &error));
  conv = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &error);
  g_assert_true (conv != NULL &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
                                                &compute, &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                                CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1,
                                                &spatial, &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one,
                                                &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2,
                                                one, &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2,
                                                pad, &error) &&
                 atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2,
                                                pad, &error) &&
                 atomr_cudnn_backend_graph_finalize_descriptor (g, conv, &error));
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &error);
  g_assert_true (op != NULL &&
                 atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv, &error) &&
                 atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, UID_X,
                                                            &error) &&
                 atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, UID_W,
                                                            &error) &&
                 atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                                            UID_CONV, &error) &&
                 atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                                CUDNN_TYPE_FLOAT, 1, &alpha, &error) &&
                 atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                                                CUDNN_TYPE_FLOAT, 1, &beta, &error) &&
                 atomr_cudnn_backend_graph_add_operation (g, op, &error) &&
                 atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_ADD, compute, UID_CONV, UID_B,
                                                          UID_BIASED, &error) &&
                 atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_RELU_FWD, compute, UID_BIASED, -1,
                                                          UID_Y, &error));
  g_assert_no_error (error);
  raw->plan = atomr_cudnn_backend_graph_build_plan (g, raw->handle, limit, 0, &error);
  g_assert_no_error (error);
  if (atomr_cudnn_backend_plan_get_workspace_size (raw->plan) > 0)
    g_assert_cmpint (ATOMR_CU->cuMemAlloc (&raw->ws, atomr_cudnn_backend_plan_get_workspace_size (raw->plan)),
                     ==, CUDA_SUCCESS);
  for (guint i = 0; i < 4; i++)
    raw->ptrs[i] = (void *) (uintptr_t) atomr_tensor_get_device_pointer (views[i]);
  atomr_device_leave (device);
}

static gdouble
time_raw (Raw *raw, AtomrDevice *device, guint iters)
{
  const gint64 uids[4] = { UID_X, UID_W, UID_B, UID_Y };
  gdouble t0;

  g_assert_true (atomr_device_enter (device, NULL));
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < iters; i++)
    {
      g_autoptr(GError) error = NULL;
      if (!atomr_cudnn_backend_plan_execute (raw->plan, raw->handle, 4, uids, raw->ptrs,
                                             (void *) (uintptr_t) raw->ws, &error))
        g_error ("raw: %s", error->message);
    }
  if (ATOMR_CU->cuStreamSynchronize (raw->stream) != CUDA_SUCCESS)
    g_error ("cuStreamSynchronize failed");
  atomr_device_leave (device);
  return (g_get_monotonic_time () - t0) / 1e6;
}

/* An N × C × H × W view of NHWC storage, filled with @value. */
static AtomrTensor *
nhwc (AtomrDevice *device, gint64 n, gint64 c, gint64 h, gint64 w, gdouble value)
{
  g_autoptr(GError) error = NULL;
  const gint64 stored[4] = { n, h, w, c };
  const guint perm[4] = { 0, 3, 1, 2 };
  gsize count = (gsize) (n * c * h * w);
  g_autoptr(AtomrBuffer) buf = atomr_buffer_new (device, ATOMR_DTYPE_BF16, count, &error);
  g_autoptr(AtomrTensor) storage = NULL;
  g_autofree guint16 *host = g_new (guint16, count);
  gfloat f = (gfloat) value;
  guint32 u;
  AtomrTensor *t;

  g_assert_no_error (error);
  memcpy (&u, &f, 4);
  for (gsize i = 0; i < count; i++)
    host[i] = (guint16) (u >> 16);
  {
    g_autoptr(GBytes) bytes = g_bytes_new (host, count * 2);
    g_assert_true (atomr_buffer_upload_sync (buf, bytes, NULL, &error));
  }
  storage = atomr_tensor_new (buf, stored, 4, &error);
  g_assert_no_error (error);
  t = atomr_tensor_permute (storage, perm, 4, &error);
  g_assert_no_error (error);
  return t;
}

int
main (int argc, char **argv)
{
  const gint64 n = 32, c = 256, k = 256, hw = 56;
  const gint64 xd[4] = { n, c, hw, hw }, wd[4] = { k, c, 3, 3 }, bd[4] = { 1, k, 1, 1 }, yd[4] = { n, k, hw, hw };
  const gdouble flops = 2.0 * n * k * c * 9 * hw * hw;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_get (0, &error);
  g_autoptr(AtomrCudnnActor) actor = NULL;
  g_autoptr(AtomrConvolution) conv = NULL;
  g_autoptr(AtomrCudnnGraph) graph = NULL;
  g_autoptr(AtomrTensor) x = NULL, w = NULL, b = NULL, y = NULL;
  gdouble best_raw = G_MAXDOUBLE, best_actor = G_MAXDOUBLE;
  guint iters, ix, iw, ib, iy, ic, icb;
  Raw raw = { 0 };
  Pipe pipe = { 0 };
  gint64 ys[4];

  if (device == NULL)
    {
      g_print ("bench-cudnn-graph: no CUDA device (%s)\n", error->message);
      return 0;
    }
  actor = atomr_cudnn_actor_new (device, &error);
  if (actor == NULL)
    {
      g_print ("bench-cudnn-graph: no cuDNN (%s)\n", error->message);
      return 0;
    }
  conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  x = nhwc (device, n, c, hw, hw, 0.01);
  w = nhwc (device, k, c, 3, 3, 0.01);
  b = nhwc (device, 1, k, 1, 1, 0.01);
  y = nhwc (device, n, k, hw, hw, 0.0);
  strides_nhwc (yd, ys);

  graph = atomr_cudnn_graph_new ("conv-bias-relu");
  ix = atomr_cudnn_graph_add_tensor (graph, "x", x, &error);
  iw = atomr_cudnn_graph_add_tensor (graph, "w", w, &error);
  ib = atomr_cudnn_graph_add_tensor (graph, "b", b, &error);
  iy = atomr_cudnn_graph_add_tensor (graph, "y", y, &error);
  ic = atomr_cudnn_graph_add_tensor_full (graph, "conv", ATOMR_DTYPE_F32, yd, 4, ys, 4, TRUE, &error);
  icb = atomr_cudnn_graph_add_tensor_full (graph, "biased", ATOMR_DTYPE_F32, yd, 4, ys, 4, TRUE, &error);
  g_assert_no_error (error);
  if (!atomr_cudnn_graph_add_convolution (graph, ATOMR_CUDNN_CONV_FORWARD, conv, ix, iw, ic, &error) ||
      !atomr_cudnn_graph_add_pointwise (graph, ATOMR_CUDNN_POINTWISE_BIAS, ic, ib, icb, &error) ||
      !atomr_cudnn_graph_add_pointwise (graph, ATOMR_CUDNN_POINTWISE_RELU, icb, 0, iy, &error) ||
      !atomr_cudnn_graph_finalize (graph, &error))
    g_error ("graph: %s", error->message);
  pipe.actor = actor;
  pipe.graph = graph;
  pipe.ids[0] = ix; pipe.ids[1] = iw; pipe.ids[2] = ib; pipe.ids[3] = iy;
  pipe.views[0] = x; pipe.views[1] = w; pipe.views[2] = b; pipe.views[3] = y;
  raw_setup (&raw, device, xd, wd, bd, yd, atomr_cudnn_actor_get_workspace_limit (actor), pipe.views);

  g_print ("# graph conv(3x3) + bias + relu, N=%" G_GINT64_FORMAT " C=K=%" G_GINT64_FORMAT " %" G_GINT64_FORMAT
           "x%" G_GINT64_FORMAT ", NHWC bf16, f32 virtual intermediates, %s\n"
           "# up to %d calls pipelined, best of %d; ratio = actor / raw throughput (>= 0.95 wanted)\n",
           n, c, hw, hw, atomr_device_get_name (device), MAX_ITERS, REPS);
  g_print ("%-16s | %8s %9s | %8s %9s | %7s\n", "graph", "raw TF/s", "raw us", "atomr TF/s", "atomr us", "ratio");
  time_actor (&pipe, 2);
  time_raw (&raw, device, 2);
  iters = CLAMP ((guint) (BATCH_S / MAX (time_raw (&raw, device, 3) / 3, 1e-7)), 3, MAX_ITERS);
  for (guint r = 0; r < REPS; r++)
    {
      best_raw = MIN (best_raw, time_raw (&raw, device, iters));
      best_actor = MIN (best_actor, time_actor (&pipe, iters));
    }
  g_print ("%-16s | %8.1f %9.1f | %8.1f %9.1f | %6.3fx  (%u calls)\n", "conv-bias-relu",
           flops * iters / best_raw / 1e12, best_raw / iters * 1e6,
           flops * iters / best_actor / 1e12, best_actor / iters * 1e6, best_raw / best_actor, iters);
  g_print ("# actor: workspace %" G_GUINT64_FORMAT " bytes (raw plan %" G_GUINT64_FORMAT "), plan cache %u entries, %"
           G_GUINT64_FORMAT " hits, %" G_GUINT64_FORMAT " misses\n", atomr_cudnn_actor_get_workspace_size (actor),
           atomr_cudnn_backend_plan_get_workspace_size (raw.plan), atomr_cudnn_actor_get_cache_size (actor),
           atomr_cudnn_actor_get_cache_hits (actor), atomr_cudnn_actor_get_cache_misses (actor));

  g_assert_true (atomr_device_enter (device, NULL));
  atomr_cudnn_backend_plan_free (raw.plan);
  if (raw.ws)
    ATOMR_CU->cuMemFree (raw.ws);
  cudnnDestroy (raw.handle);
  ATOMR_CU->cuStreamDestroy (raw.stream);
  atomr_device_leave (device);
  return 0;
}
