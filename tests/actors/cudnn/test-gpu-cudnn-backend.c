/* test-gpu-cudnn-backend.c — the backend-graph helper on a GPU
 *
 * Two graphs through atomr-cudnn-backend-private.h, on a raw handle and
 * stream: a single convolution forward (f32 NHWC), and the canonical
 * runtime-fusion graph conv → + bias → ReLU (f16 NHWC, the intermediates
 * virtual f32 tensors), each compared with a CPU reference; then the plan
 * cache returns the same plan for the same key.  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"

enum { UID_X = 1, UID_W, UID_Y, UID_B, UID_CONV, UID_BIASED };

enum { N = 2, C = 16, K = 32, HW = 6 };

typedef struct {
  AtomrDevice  *device;
  cudnnHandle_t handle;
  CUstream      stream;
  GRand        *rand;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->rand = g_rand_new_with_seed (7);
  f->device = atomr_device_get (0, &error);
  if (f->device == NULL)
    return;
  g_assert_true (atomr_cudnn_load (&error));
  g_assert_no_error (error);
  g_assert_true (atomr_device_enter (f->device, &error));
  g_assert_cmpint (ATOMR_CU->cuStreamCreate (&f->stream, CU_STREAM_NON_BLOCKING), ==, CUDA_SUCCESS);
  g_assert_true (atomr_cudnn_status_check (cudnnCreate (&f->handle), "cudnnCreate", "test", &error));
  g_assert_true (atomr_cudnn_status_check (cudnnSetStream (f->handle, (cudaStream_t) f->stream),
                                           "cudnnSetStream", "test", &error));
  atomr_device_leave (f->device);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->device != NULL)
    {
      g_assert_true (atomr_device_enter (f->device, NULL));
      cudnnDestroy (f->handle);
      ATOMR_CU->cuStreamDestroy (f->stream);
      atomr_device_leave (f->device);
    }
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

/* NHWC strides of an N × C × H × W tensor. */
static void
nhwc_strides (const gint64 *dims, gint64 *strides)
{
  strides[1] = 1;
  strides[3] = dims[1];
  strides[2] = dims[1] * dims[3];
  strides[0] = dims[1] * dims[2] * dims[3];
}

/* A device buffer holding @values (n of them) as @dtype (f32 or f16). */
static AtomrBuffer *
upload (Fixture *f, AtomrDtype dtype, const gdouble *values, gsize n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (f->device, dtype, n, &error);
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *data = g_malloc (n * size);
  g_autoptr(GBytes) bytes = NULL;

  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    {
      if (dtype == ATOMR_DTYPE_F16)
        {
          _Float16 v = (_Float16) values[i];
          memcpy (data + i * 2, &v, 2);
        }
      else
        {
          gfloat v = (gfloat) values[i];
          memcpy (data + i * 4, &v, 4);
        }
    }
  bytes = g_bytes_new_take (data, n * size);
  g_assert_true (atomr_buffer_upload_sync (b, bytes, NULL, &error));
  g_assert_no_error (error);
  return b;
}

static void
download (AtomrBuffer *b, gdouble *out, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (b, NULL, &error);
  const guint8 *data = g_bytes_get_data (bytes, NULL);

  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    {
      if (atomr_buffer_get_dtype (b) == ATOMR_DTYPE_F16)
        {
          _Float16 v;
          memcpy (&v, data + i * 2, 2);
          out[i] = v;
        }
      else
        {
          gfloat v;
          memcpy (&v, data + i * 4, 4);
          out[i] = v;
        }
    }
}

/* Random values, rounded to @dtype. */
static gdouble *
random_values (Fixture *f, AtomrDtype dtype, gsize n)
{
  gdouble *v = g_new (gdouble, n);

  for (gsize i = 0; i < n; i++)
    v[i] = dtype == ATOMR_DTYPE_F16 ? (gdouble) (_Float16) g_rand_double_range (f->rand, -1, 1)
                                    : (gdouble) (gfloat) g_rand_double_range (f->rand, -1, 1);
  return v;
}

/* y (NHWC) = [relu] (conv (x, w) [+ b]), x NHWC, w KRSC, pad 1. */
static void
reference (const gdouble *x, const gdouble *w, const gdouble *b, gboolean relu, gdouble *y)
{
  for (gint n = 0; n < N; n++)
    for (gint oh = 0; oh < HW; oh++)
      for (gint ow = 0; ow < HW; ow++)
        for (gint k = 0; k < K; k++)
          {
            gdouble acc = 0;
            for (gint r = 0; r < 3; r++)
              for (gint s = 0; s < 3; s++)
                {
                  gint h = oh - 1 + r, ww = ow - 1 + s;
                  if (h < 0 || h >= HW || ww < 0 || ww >= HW)
                    continue;
                  for (gint c = 0; c < C; c++)
                    acc += x[((n * HW + h) * HW + ww) * C + c] * w[((k * 3 + r) * 3 + s) * C + c];
                }
            if (b != NULL)
              acc += b[k];
            if (relu)
              acc = MAX (acc, 0.0);
            y[((n * HW + oh) * HW + ow) * K + k] = acc;
          }
}

/* Adds the convolution forward x (UID_X) * w (UID_W) → @y_uid. */
static gboolean
add_conv (AtomrCudnnBackendGraph *g, gint64 y_uid, GError **error)
{
  cudnnBackendDescriptor_t conv, op;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  gint64 spatial = 2, pad[2] = { 1, 1 }, one[2] = { 1, 1 };
  gfloat alpha = 1.0f, beta = 0.0f;

  conv = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, error);
  if (conv == NULL ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad, error) ||
      !atomr_cudnn_backend_graph_set (g, conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad, error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (g, conv, error))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, UID_X, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, UID_W, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y_uid, error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
                                &alpha, error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
                                &beta, error) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

static void
run_case (Fixture *f, gboolean fused)
{
  AtomrDtype dtype = fused ? ATOMR_DTYPE_F16 : ATOMR_DTYPE_F32;
  cudnnDataType_t cdt = fused ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const gint64 xd[4] = { N, C, HW, HW }, wd[4] = { K, C, 3, 3 }, yd[4] = { N, K, HW, HW }, bd[4] = { 1, K, 1, 1 };
  gint64 xs[4], ws[4], ys[4], bs[4];
  const gsize nx = N * C * HW * HW, nw = K * C * 9, ny = N * K * HW * HW;
  g_autofree gdouble *x = random_values (f, dtype, nx), *w = random_values (f, dtype, nw);
  g_autofree gdouble *b = random_values (f, dtype, K), *ref = g_new0 (gdouble, ny), *got = g_new0 (gdouble, ny);
  g_autoptr(AtomrBuffer) bx = upload (f, dtype, x, nx), bw = upload (f, dtype, w, nw), bb = upload (f, dtype, b, K);
  g_autoptr(AtomrBuffer) by = NULL;
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new (fused ? "conv-bias-relu (graph test)" : "conv (graph test)");
  g_autoptr(GError) error = NULL;
  AtomrCudnnBackendPlan *plan;
  AtomrCudnnPlanCache *cache;
  CUdeviceptr ws_ptr = 0;
  gdouble num = 0, den = 0, e, tol = fused ? 5e-3 : 2e-3;   /* f32: the engine may use TF32 */
  gint64 key[2] = { fused, 42 };

  {
    g_autofree gdouble *zeros = g_new0 (gdouble, ny);
    by = upload (f, dtype, zeros, ny);
  }
  nhwc_strides (xd, xs);
  nhwc_strides (wd, ws);
  nhwc_strides (yd, ys);
  nhwc_strides (bd, bs);
  reference (x, w, fused ? b : NULL, fused, ref);

  g_assert_true (atomr_device_enter (f->device, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_X, cdt, 4, xd, xs, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_W, cdt, 4, wd, ws, 0, &error));
  g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_Y, cdt, 4, yd, ys, 0, &error));
  g_assert_no_error (error);
  /* a repeated id is refused */
  g_assert_null (atomr_cudnn_backend_graph_add_tensor (g, UID_Y, cdt, 4, yd, ys, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  if (fused)
    {
      g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_B, cdt, 4, bd, bs, 0, &error));
      g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_CONV, CUDNN_DATA_FLOAT, 4, yd, ys,
                                                      ATOMR_CUDNN_TENSOR_VIRTUAL, &error));
      g_assert_nonnull (atomr_cudnn_backend_graph_add_tensor (g, UID_BIASED, CUDNN_DATA_FLOAT, 4, yd, ys,
                                                      ATOMR_CUDNN_TENSOR_VIRTUAL, &error));
      g_assert_no_error (error);
      g_assert_true (add_conv (g, UID_CONV, &error));
      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, UID_CONV, UID_B,
                                                      UID_BIASED, &error));
      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_RELU_FWD, CUDNN_DATA_FLOAT, UID_BIASED,
                                                      -1, UID_Y, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (atomr_cudnn_backend_graph_get_n_operations (g), ==, 3);
    }
  else
    {
      g_assert_true (add_conv (g, UID_Y, &error));
      g_assert_no_error (error);
    }

  plan = atomr_cudnn_backend_graph_build_plan (g, f->handle, G_GUINT64_CONSTANT (1) << 30, 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (plan);
  /* the graph is spent; the plan holds what it needs */
  g_assert_cmpuint (atomr_cudnn_backend_graph_get_n_operations (g), ==, 0);
  g_test_message ("%s: workspace %" G_GUINT64_FORMAT " bytes", atomr_cudnn_backend_graph_get_opname (g),
                  atomr_cudnn_backend_plan_get_workspace_size (plan));
  if (atomr_cudnn_backend_plan_get_workspace_size (plan) > 0)
    g_assert_cmpint (ATOMR_CU->cuMemAlloc (&ws_ptr, atomr_cudnn_backend_plan_get_workspace_size (plan)), ==,
                     CUDA_SUCCESS);
  {
    gint64 uids[4] = { UID_X, UID_W, UID_Y, UID_B };
    void *ptrs[4] = {
      (void *) (uintptr_t) atomr_buffer_get_device_pointer (bx),
      (void *) (uintptr_t) atomr_buffer_get_device_pointer (bw),
      (void *) (uintptr_t) atomr_buffer_get_device_pointer (by),
      (void *) (uintptr_t) atomr_buffer_get_device_pointer (bb),
    };
    g_assert_true (atomr_cudnn_backend_plan_execute (plan, f->handle, fused ? 4 : 3, uids, ptrs,
                                                   (void *) (uintptr_t) ws_ptr, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (ATOMR_CU->cuStreamSynchronize (f->stream), ==, CUDA_SUCCESS);
  if (ws_ptr)
    ATOMR_CU->cuMemFree (ws_ptr);

  /* the cache hands the same plan back for the same key */
  cache = atomr_cudnn_plan_cache_new (4, (GDestroyNotify) atomr_cudnn_backend_plan_free);
  atomr_cudnn_plan_cache_insert (cache, key, sizeof key, plan);
  g_assert_true (atomr_cudnn_plan_cache_lookup (cache, key, sizeof key) == plan);
  atomr_cudnn_plan_cache_free (cache);
  atomr_device_leave (f->device);

  download (by, got, ny);
  for (gsize i = 0; i < ny; i++)
    {
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  e = sqrt (num / den);
  g_test_message ("%s: relative error %.3g", fused ? "conv-bias-relu f16" : "conv f32", e);
  g_assert_cmpfloat (e, <=, tol);
}

static void
test_conv (Fixture *f, gconstpointer data)
{
  if (f->device == NULL)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  run_case (f, GPOINTER_TO_INT (data));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/gpu-cudnn-backend/conv-f32", Fixture, GINT_TO_POINTER (FALSE), fixture_setup, test_conv,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-backend/conv-bias-relu-f16", Fixture, GINT_TO_POINTER (TRUE), fixture_setup, test_conv,
              fixture_teardown);
  return g_test_run ();
}
