/* test-cudnn-validation.c — the cuDNN actor on the mock device (no GPU)
 *
 * Validation runs in the _async call exactly as on a GPU: each invalid case
 * must fail with ATOMR_ERROR_INVALID_ARGUMENT and a message naming the
 * operand and value; each valid one passes validation and is answered
 * with ATOMR_ERROR_NOT_SUPPORTED by the enqueue step (no cuDNN there).
 * Every case makes fresh operands: errors flow along dependencies.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

#define CUDNN_TEST_MOCK_FIXTURE
#include "cudnn-validation-util.h"

static AtomrTensor *
tensor (Fixture *f, AtomrDtype dtype, gint64 a, gint64 b, gint64 c, gint64 d)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { a, b, c, d };
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, 4, &error);

  g_assert_no_error (error);
  return t;
}

/* An N × C × H × W view of NHWC storage. */
static AtomrTensor *
tensor_nhwc (Fixture *f, AtomrDtype dtype, gint64 n, gint64 c, gint64 h, gint64 w)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) storage = tensor (f, dtype, n, h, w, c);
  const guint perm[4] = { 0, 3, 1, 2 };
  AtomrTensor *t = atomr_tensor_permute (storage, perm, 4, &error);

  g_assert_no_error (error);
  return t;
}

#define F32     ATOMR_DTYPE_F32

/* ------------------------------------------------------------------ */

static void
run_conv_fwd (Fixture *f, AtomrConvolution *conv, AtomrTensor *x, AtomrTensor *w, AtomrTensor *y,
              gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x, w, 0.0, y, NULL,
                                               store_result, &res);
  expect (&res, code, needle);
}

static void
test_conv_valid (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F64 };

  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autoptr(AtomrTensor) x = tensor (f, dtypes[i], 2, 4, 6, 6);
      g_autoptr(AtomrTensor) w = tensor (f, dtypes[i], 8, 4, 3, 3);
      g_autoptr(AtomrTensor) y = tensor (f, dtypes[i], 2, 8, 6, 6);
      /* NHWC operands with a KRSC filter */
      g_autoptr(AtomrTensor) xn = tensor_nhwc (f, dtypes[i], 2, 4, 6, 6);
      g_autoptr(AtomrTensor) wn = tensor_nhwc (f, dtypes[i], 8, 4, 3, 3);
      g_autoptr(AtomrTensor) yn = tensor_nhwc (f, dtypes[i], 2, 8, 6, 6);

      run_conv_fwd (f, conv, x, w, y, NOSUP, "conv-fwd");
      run_conv_fwd (f, conv, xn, wn, yn, NOSUP, "needs a CUDA device");
    }
  /* the request is described: dtype and shapes */
  {
    g_autoptr(AtomrTensor) x = tensor (f, ATOMR_DTYPE_BF16, 2, 4, 6, 6);
    g_autoptr(AtomrTensor) w = tensor (f, ATOMR_DTYPE_BF16, 8, 4, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, ATOMR_DTYPE_BF16, 2, 8, 6, 6);
    run_conv_fwd (f, conv, x, w, y, NOSUP, "bf16, x 2×4×6×6");
  }
  /* nothing reached cuDNN: no plan was built */
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (f->actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_workspace_size (f->actor), ==, 0);
}

static void
test_conv_shapes (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (0, 0, 2, 2, 1, 1);

  {
    /* (7 - 3) / 2 + 1 = 3, not 4 */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 7, 7);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 4, 4);
    run_conv_fwd (f, conv, x, w, y, INVALID, "y is 1×4×4×4 but the convolution of x by w gives 1×4×3×3");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 3, 7, 7);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
    run_conv_fwd (f, conv, x, w, y, INVALID, "w has 2 channels per group but x has 3 channels");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 2, 2);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 1, 1);
    run_conv_fwd (f, conv, x, w, y, INVALID, "the dilated filter (3) is larger than the padded input (2)");
  }
  {
    /* 3-D convolution given 4-D views */
    g_autoptr(AtomrConvolution) conv3 = atomr_convolution_new (3);
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 7, 7);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 5, 5);
    run_conv_fwd (f, conv3, x, w, y, INVALID, "x has 4 dimensions (takes 5 to 5)");
  }
}

static void
test_conv_groups (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new (2);

  atomr_convolution_set_groups (conv, 3);
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 4, 5, 5);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 6, 1, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 6, 3, 3);
    run_conv_fwd (f, conv, x, w, y, INVALID, "do not split into 3 groups");
  }
  {
    /* 6 channels in 3 groups: w has 2 per group; valid */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 6, 5, 5);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 9, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 9, 3, 3);
    run_conv_fwd (f, conv, x, w, y, NOSUP, "conv-fwd");
  }
}

static void
test_conv_dtypes (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new (2);
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 5, 5);
    g_autoptr(AtomrTensor) w = tensor (f, ATOMR_DTYPE_F16, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
    run_conv_fwd (f, conv, x, w, y, INVALID, "w has dtype f16, the other operands f32");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, ATOMR_DTYPE_I32, 1, 2, 5, 5);
    g_autoptr(AtomrTensor) w = tensor (f, ATOMR_DTYPE_I32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, ATOMR_DTYPE_I32, 1, 4, 3, 3);
    run_conv_fwd (f, conv, x, w, y, INVALID, "x has dtype i32");
  }
}

static void
test_conv_layouts (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new (2);
  g_autoptr(GError) error = NULL;

  {
    /* a filter with swapped spatial axes has no cuDNN filter format */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 5, 5);
    g_autoptr(AtomrTensor) w0 = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) w = atomr_tensor_transpose (w0, 2, 3, &error);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
    g_assert_no_error (error);
    run_conv_fwd (f, conv, x, w, y, INVALID, "w has strides (18, 9, 1, 3): a filter must be packed");
  }
  {
    /* a broadcast input */
    g_autoptr(AtomrTensor) x0 = tensor (f, F32, 1, 2, 5, 1);
    const gint64 shape[4] = { 1, 2, 5, 5 };
    g_autoptr(AtomrTensor) x = atomr_tensor_broadcast_to (x0, shape, 4, &error);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
    g_assert_no_error (error);
    run_conv_fwd (f, conv, x, w, y, INVALID, "x stride 3 is 0");
  }
  {
    /* a strided (every other column) input view is fine */
    g_autoptr(AtomrTensor) x0 = tensor (f, F32, 1, 2, 5, 10);
    g_autoptr(AtomrTensor) x = atomr_tensor_slice (x0, 3, 0, 10, 2, &error);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
    g_assert_no_error (error);
    run_conv_fwd (f, conv, x, w, y, NOSUP, "conv-fwd");
  }
}

static void
test_conv_alias (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 4, 5, 5);
  g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 4, 3, 3);
  GAsyncResult *res = NULL;

  /* y is x */
  run_conv_fwd (f, conv, x, w, x, INVALID, "output y overlaps input x");
  /* backward data: dx overlapping dy */
  atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w, x, 0.0, x, NULL,
                                                     store_result, &res);
  expect (&res, INVALID, "output dx overlaps input dy");
  /* backward filter: dw is w's memory, x distinct: valid; dw = x's memory is not */
  {
    g_autoptr(AtomrTensor) x2 = tensor (f, F32, 1, 4, 5, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 1, 4, 5, 5);
    g_autoptr(AtomrTensor) dw = tensor (f, F32, 4, 4, 3, 3);
    atomr_cudnn_actor_convolution_backward_filter_async (f->actor, conv, 1.0, x2, dy, 1.0, dw, NULL,
                                                         store_result, &res);
    expect (&res, NOSUP, "conv-bwd-filter");
  }
}

static void
test_conv_backward_shapes (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 2, 2, 1, 1);
  GAsyncResult *res = NULL;

  {
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 5, 3, 3, 3);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 5, 4, 4);
    atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w, dy, 0.0, dx, NULL,
                                                       store_result, &res);
    expect (&res, NOSUP, "conv-bwd-data");
  }
  {
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) w = tensor (f, F32, 5, 3, 3, 3);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 5, 5, 5);
    atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w, dy, 0.0, dx, NULL,
                                                       store_result, &res);
    expect (&res, INVALID, "dy is 2×5×5×5 but the convolution of dx by w gives 2×5×4×4");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) dw = tensor (f, F32, 5, 2, 3, 3);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 5, 4, 4);
    atomr_cudnn_actor_convolution_backward_filter_async (f->actor, conv, 1.0, x, dy, 0.0, dw, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "dw has 2 channels per group but x has 3 channels");
  }
}

static void
test_conv_bad_objects (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 5, 5);
  g_autoptr(AtomrTensor) w = tensor (f, F32, 4, 2, 3, 3);
  g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 4, 3, 3);
  g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
  /* a bare convolution is a plain 2-D one */
  g_autoptr(AtomrConvolution) bare_conv = g_object_new (ATOMR_TYPE_CONVOLUTION, NULL);

  run_conv_fwd (f, NULL, x, w, y, INVALID, "conv is not an AtomrConvolution");
  run_conv_fwd (f, bare_conv, bare, w, y, INVALID, "x has no buffer");
  run_conv_fwd (f, bare_conv, x, NULL, y, INVALID, "w is not a tensor");
  {
    g_autoptr(AtomrTensor) x2 = tensor (f, F32, 1, 2, 5, 5);
    g_autoptr(AtomrTensor) w2 = tensor (f, F32, 4, 2, 3, 3);
    g_autoptr(AtomrTensor) y2 = tensor (f, F32, 1, 4, 3, 3);
    run_conv_fwd (f, bare_conv, x2, w2, y2, NOSUP, "conv-fwd");
  }
}

/* ------------------------------------------------------------------ */

static void
test_convolution_object (void)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new (2);
  g_autoptr(GError) error = NULL;
  const gint64 bad_pad[2] = { 1, -1 };
  const gint64 good[2] = { 2, 3 };
  const gint64 zero[2] = { 1, 0 };
  const gint64 three[3] = { 1, 1, 1 };
  const gint64 xs[4] = { 1, 8, 32, 32 }, ws[4] = { 16, 8, 3, 3 };
  g_autofree gint64 *ys = NULL;
  guint yn = 0;

  g_assert_cmpuint (atomr_convolution_get_n_spatial_dims (conv), ==, 2);
  g_assert_false (atomr_convolution_set_padding (conv, bad_pad, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "padding[1] is -1"));
  g_clear_error (&error);
  g_assert_cmpint (atomr_convolution_get_padding (conv, 1), ==, 0);   /* unchanged */
  g_assert_false (atomr_convolution_set_stride (conv, zero, 2, &error));
  g_assert_nonnull (strstr (error->message, "stride[1] is 0"));
  g_clear_error (&error);
  g_assert_false (atomr_convolution_set_dilation (conv, three, 3, &error));
  g_assert_nonnull (strstr (error->message, "3 dilation values for a 2-D convolution"));
  g_clear_error (&error);
  g_assert_true (atomr_convolution_set_padding (conv, good, 2, &error));
  g_assert_true (atomr_convolution_set_stride (conv, good, 2, &error));
  g_assert_true (atomr_convolution_set_dilation (conv, good, 2, &error));
  g_assert_cmpint (atomr_convolution_get_stride (conv, 1), ==, 3);
  g_assert_cmpint (atomr_convolution_get_dilation (conv, 0), ==, 2);

  /* H: (32 + 4 - 5) / 2 + 1 = 16; W: (32 + 6 - 7) / 3 + 1 = 11 */
  g_assert_true (atomr_convolution_get_output_shape (conv, xs, 4, ws, 4, &ys, &yn, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (yn, ==, 4);
  g_assert_cmpint (ys[0], ==, 1);
  g_assert_cmpint (ys[1], ==, 16);
  g_assert_cmpint (ys[2], ==, 16);
  g_assert_cmpint (ys[3], ==, 11);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_convolution_notify (void)
{
  g_autoptr(AtomrConvolution) conv = g_object_new (ATOMR_TYPE_CONVOLUTION, NULL);
  guint groups = 0, math = 0;

  g_signal_connect (conv, "notify::groups", G_CALLBACK (count_notify), &groups);
  g_signal_connect (conv, "notify::math", G_CALLBACK (count_notify), &math);
  atomr_convolution_set_groups (conv, 4);
  atomr_convolution_set_groups (conv, 4);
  g_object_set (conv, "math", ATOMR_CUDNN_MATH_FMA, NULL);
  g_assert_cmpuint (groups, ==, 1);
  g_assert_cmpuint (math, ==, 1);
  g_assert_cmpuint (atomr_convolution_get_groups (conv), ==, 4);
  g_assert_cmpint (atomr_convolution_get_math (conv), ==, ATOMR_CUDNN_MATH_FMA);
}

/* ------------------------------------------------------------------ */

static void
test_activation (Fixture *f, gconstpointer data)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;

  {
    /* in place (the same view) is allowed */
    g_autoptr(AtomrTensor) x = tensor (f, ATOMR_DTYPE_F16, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_RELU, 0, x, x, NULL,
                                                store_result, &res);
    expect (&res, NOSUP, "act-fwd");
  }
  {
    /* a 2-D view (padded to 4-D for cuDNN) */
    const gint64 shape[2] = { 7, 9 };
    g_autoptr(AtomrTensor) x = atomr_tensor_empty (f->device, F32, shape, 2, &error);
    g_autoptr(AtomrTensor) y = atomr_tensor_empty (f->device, F32, shape, 2, &error);
    g_assert_no_error (error);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_SWISH, 1.0, x, y, NULL,
                                                store_result, &res);
    expect (&res, NOSUP, "act-fwd");
  }
  {
    /* overlapping but not the same view */
    g_autoptr(AtomrTensor) base = tensor (f, F32, 1, 1, 1, 10);
    g_autoptr(AtomrTensor) x = atomr_tensor_slice (base, 3, 0, 8, 1, &error);
    g_autoptr(AtomrTensor) y = atomr_tensor_slice (base, 3, 2, 10, 1, &error);
    g_assert_no_error (error);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_TANH, 0, x, y, NULL,
                                                store_result, &res);
    expect (&res, INVALID, "output y overlaps input x");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 5, 4);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_TANH, 0, x, y, NULL,
                                                store_result, &res);
    expect (&res, INVALID, "x is 2×3×4×5 but y is 2×3×5×4");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_forward_async (f->actor, 42, 0, x, y, NULL, store_result, &res);
    expect (&res, INVALID, "mode");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_ELU, NAN, x, y, NULL,
                                                store_result, &res);
    expect (&res, INVALID, "coef is nan");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dx = tensor (f, ATOMR_DTYPE_F64, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_backward_async (f->actor, ATOMR_ACTIVATION_RELU, 0, y, dy, x, dx,
                                                 NULL, store_result, &res);
    expect (&res, INVALID, "dx has dtype f64, the other operands f32");
  }
  {
    /* dx in place of dy */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_backward_async (f->actor, ATOMR_ACTIVATION_RELU, 0, y, dy, x, dy,
                                                 NULL, store_result, &res);
    expect (&res, NOSUP, "act-bwd");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_activation_backward_async (f->actor, ATOMR_ACTIVATION_RELU, 0, dx, dy, x, dx,
                                                 NULL, store_result, &res);
    expect (&res, INVALID, "output dx overlaps input y");
  }
}

static void
test_softmax (Fixture *f, gconstpointer data)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;

  {
    const gint64 shape[2] = { 16, 1000 };
    g_autoptr(AtomrTensor) x = atomr_tensor_empty (f->device, ATOMR_DTYPE_BF16, shape, 2, &error);
    g_autoptr(AtomrTensor) y = atomr_tensor_empty (f->device, ATOMR_DTYPE_BF16, shape, 2, &error);
    g_assert_no_error (error);
    atomr_cudnn_actor_softmax_forward_async (f->actor, ATOMR_SOFTMAX_CHANNEL, TRUE, x, y, NULL,
                                             store_result, &res);
    expect (&res, NOSUP, "softmax-fwd");
  }
  {
    const gint64 shape[1] = { 16 };
    g_autoptr(AtomrTensor) x = atomr_tensor_empty (f->device, F32, shape, 1, &error);
    g_autoptr(AtomrTensor) y = atomr_tensor_empty (f->device, F32, shape, 1, &error);
    atomr_cudnn_actor_softmax_forward_async (f->actor, ATOMR_SOFTMAX_CHANNEL, FALSE, x, y, NULL,
                                             store_result, &res);
    expect (&res, INVALID, "x has 1 dimensions (takes 2 to 8)");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_softmax_forward_async (f->actor, ATOMR_SOFTMAX_INSTANCE, FALSE, x, x, NULL,
                                             store_result, &res);
    expect (&res, INVALID, "output y overlaps input x");
  }
  {
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_softmax_backward_async (f->actor, ATOMR_SOFTMAX_INSTANCE, FALSE, y, dy, dx,
                                              NULL, store_result, &res);
    expect (&res, NOSUP, "softmax-bwd");
  }
  {
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 5);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 6);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 4, 5);
    atomr_cudnn_actor_softmax_backward_async (f->actor, ATOMR_SOFTMAX_INSTANCE, FALSE, y, dy, dx,
                                              NULL, store_result, &res);
    expect (&res, INVALID, "y is 2×3×4×5 but dy is 2×3×4×6");
  }
}

static void
test_pooling (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrPooling) pool = atomr_pooling_new_2d (ATOMR_POOLING_MAX, 3, 3, 1, 1, 2, 2);
  g_autoptr(AtomrPooling) bare = g_object_new (ATOMR_TYPE_POOLING, NULL);
  GAsyncResult *res = NULL;

  g_assert_cmpint (atomr_pooling_get_window (pool, 0), ==, 3);
  g_assert_cmpint (atomr_pooling_get_stride (pool, 1), ==, 2);
  g_assert_cmpint (atomr_pooling_get_padding (pool, 1), ==, 1);
  g_assert_cmpint (atomr_pooling_get_mode (bare), ==, ATOMR_POOLING_MAX);
  {
    const gint64 win[2] = { 3, 2 }, pad[2] = { 1, 2 }, st[2] = { 1, 1 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrPooling) p = atomr_pooling_new (ATOMR_POOLING_MAX, win, pad, st, 2, &error);
    g_assert_null (p);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "padding[1] is 2"));
    g_clear_error (&error);
    g_assert_null (atomr_pooling_new (ATOMR_POOLING_MAX, win, pad, st, 1, &error));
    g_assert_nonnull (strstr (error->message, "1 spatial dimensions (takes 2 or 3)"));
  }
  {
    /* 3-D windows on N × C × D × H × W views */
    const gint64 win[3] = { 2, 3, 3 }, pad[3] = { 0, 1, 1 }, st[3] = { 2, 2, 2 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrPooling) p3 = atomr_pooling_new (ATOMR_POOLING_MAX, win, pad, st, 3, &error);
    const gint64 xs[5] = { 2, 3, 6, 8, 8 }, ys[5] = { 2, 3, 3, 4, 4 }, bad[5] = { 2, 3, 3, 4, 5 };
    g_autoptr(AtomrTensor) x = atomr_tensor_empty (f->device, F32, xs, 5, &error);
    g_autoptr(AtomrTensor) y = atomr_tensor_empty (f->device, F32, ys, 5, &error);
    g_autoptr(AtomrTensor) yb = atomr_tensor_empty (f->device, F32, bad, 5, &error);
    g_autoptr(AtomrTensor) dy = atomr_tensor_empty (f->device, F32, ys, 5, &error);
    g_autoptr(AtomrTensor) dx = atomr_tensor_empty (f->device, F32, xs, 5, &error);
    g_autoptr(AtomrTensor) x4 = tensor (f, F32, 2, 3, 8, 8);

    g_assert_no_error (error);
    g_assert_cmpuint (atomr_pooling_get_n_spatial_dims (p3), ==, 3);
    g_assert_cmpuint (atomr_pooling_get_n_spatial_dims (bare), ==, 2);
    g_assert_cmpint (atomr_pooling_get_window (p3, 2), ==, 3);
    g_assert_cmpint (atomr_pooling_get_padding (p3, 0), ==, 0);
    atomr_cudnn_actor_pooling_forward_async (f->actor, p3, x, y, NULL, store_result, &res);
    expect (&res, NOSUP, "pool-fwd");
    atomr_cudnn_actor_pooling_forward_async (f->actor, p3, x, yb, NULL, store_result, &res);
    expect (&res, INVALID, "y is 2×3×3×4×5 but pooling x gives 2×3×3×4×4");
    atomr_cudnn_actor_pooling_forward_async (f->actor, p3, x4, y, NULL, store_result, &res);
    expect (&res, INVALID, "x has 4 dimensions (takes 5 to 5)");
    atomr_cudnn_actor_pooling_backward_async (f->actor, pool, x4, x4, x4, x4, NULL, store_result, &res);
    expect (&res, INVALID, "y is 2×3×8×8 but pooling x gives 2×3×4×4");
    {
      g_autoptr(AtomrTensor) yf = atomr_tensor_empty (f->device, F32, ys, 5, &error);
      atomr_cudnn_actor_pooling_backward_async (f->actor, p3, yf, dy, x, dx, NULL, store_result, &res);
      expect (&res, NOSUP, "pool-bwd");
    }
  }
  {
    const gint64 win[2] = { 3, 2 }, pad[2] = { 1, 0 }, st[2] = { 2, 1 };
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrPooling) p = atomr_pooling_new (ATOMR_POOLING_AVERAGE_INCLUDE_PADDING, win, pad, st, 2,
                                                   &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_pooling_get_window (p, 1), ==, 2);
    g_assert_cmpint (atomr_pooling_get_stride (p, 0), ==, 2);
    g_assert_cmpint (atomr_pooling_get_mode (p), ==, ATOMR_POOLING_AVERAGE_INCLUDE_PADDING);
  }
  {
    /* (8 + 2 - 3) / 2 + 1 = 4 */
    g_autoptr(AtomrTensor) x = tensor_nhwc (f, ATOMR_DTYPE_F16, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor_nhwc (f, ATOMR_DTYPE_F16, 2, 3, 4, 4);
    atomr_cudnn_actor_pooling_forward_async (f->actor, pool, x, y, NULL, store_result, &res);
    expect (&res, NOSUP, "pool-fwd");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 5, 5);
    atomr_cudnn_actor_pooling_forward_async (f->actor, pool, x, y, NULL, store_result, &res);
    expect (&res, INVALID, "y is 2×3×5×5 but pooling x gives 2×3×4×4");
  }
  {
    g_autoptr(AtomrPooling) big = atomr_pooling_new_2d (ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING,
                                                        9, 9, 0, 0, 1, 1);
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 1, 1);
    atomr_cudnn_actor_pooling_forward_async (f->actor, big, x, y, NULL, store_result, &res);
    expect (&res, INVALID, "the window (9) is larger than the padded input (8)");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 8, 8);
    atomr_cudnn_actor_pooling_backward_async (f->actor, pool, y, dy, x, dx, NULL, store_result, &res);
    expect (&res, NOSUP, "pool-bwd");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 4);
    atomr_cudnn_actor_pooling_backward_async (f->actor, pool, y, dy, x, x, NULL, store_result, &res);
    expect (&res, INVALID, "output dx overlaps input x");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 8, 8);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 2, 3, 4, 4);
    atomr_cudnn_actor_pooling_forward_async (f->actor, NULL, x, y, NULL, store_result, &res);
    expect (&res, INVALID, "pooling is not an AtomrPooling");
  }
}

static AtomrTensor *
vec (Fixture *f, AtomrDtype dtype, gint64 n)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, &n, 1, &error);
  g_assert_no_error (error);
  return t;
}

static void
test_batch_norm (Fixture *f, gconstpointer data)
{
  GAsyncResult *res = NULL;
  g_autoptr(GError) error = NULL;

  {
    /* bf16 data, f32 parameters, NHWC, all optional outputs */
    g_autoptr(AtomrTensor) x = tensor_nhwc (f, ATOMR_DTYPE_BF16, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor_nhwc (f, ATOMR_DTYPE_BF16, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8), rm = vec (f, F32, 8),
                           rv = vec (f, F32, 8), sm = vec (f, F32, 8), si = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, rm, rv, sm, si, NULL,
                                                         store_result, &res);
    expect (&res, NOSUP, "bn-train");
  }
  {
    /* without the optional outputs */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, NOSUP, "bn-train");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, ATOMR_DTYPE_F16, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, ATOMR_DTYPE_F16, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, ATOMR_DTYPE_F16, 8), b = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "scale has dtype f16 (batch-norm parameters of f16 data are f32)");
  }
  {
    /* per-activation needs C × H × W parameters */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_PER_ACTIVATION, 1e-5,
                                                         0.1, x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "scale has 8 elements (the mode needs 200)");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8), rm = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, rm, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "running_mean and running_var are given together or not at all");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 1.5,
                                                         x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "momentum is 1.5");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, -1, 0.1,
                                                         x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "epsilon is -1");
  }
  {
    /* the running mean may not be the scale */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s = vec (f, F32, 8), b = vec (f, F32, 8), rv = vec (f, F32, 8);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, s, rv, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "output running_mean overlaps input scale");
  }
  {
    /* a strided (non-contiguous) parameter */
    g_autoptr(AtomrTensor) x = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) y = tensor (f, F32, 4, 8, 5, 5);
    g_autoptr(AtomrTensor) s0 = vec (f, F32, 16), b = vec (f, F32, 8);
    g_autoptr(AtomrTensor) s = atomr_tensor_slice (s0, 0, 0, 16, 2, &error);
    g_assert_no_error (error);
    atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, 0.1,
                                                         x, s, b, y, NULL, NULL, NULL, NULL, NULL,
                                                         store_result, &res);
    expect (&res, INVALID, "scale is not contiguous");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, ATOMR_DTYPE_F64, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) y = tensor (f, ATOMR_DTYPE_F64, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) s = vec (f, ATOMR_DTYPE_F64, 3), b = vec (f, ATOMR_DTYPE_F64, 3),
                           m = vec (f, ATOMR_DTYPE_F64, 3), v = vec (f, ATOMR_DTYPE_F64, 3);
    atomr_cudnn_actor_batch_norm_forward_inference_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5,
                                                          x, s, b, m, v, y, NULL, store_result, &res);
    expect (&res, NOSUP, "bn-infer");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) s = vec (f, F32, 3), ds = vec (f, F32, 3), db = vec (f, F32, 3);
    atomr_cudnn_actor_batch_norm_backward_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, x, dy, s,
                                                 NULL, NULL, dx, ds, db, NULL, store_result, &res);
    expect (&res, NOSUP, "bn-bwd");
  }
  {
    g_autoptr(AtomrTensor) x = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 2, 3, 4, 4);
    g_autoptr(AtomrTensor) s = vec (f, F32, 3), ds = vec (f, F32, 3);
    atomr_cudnn_actor_batch_norm_backward_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, 1e-5, x, dy, s,
                                                 NULL, NULL, dy, ds, ds, NULL, store_result, &res);
    expect (&res, INVALID, "output dx overlaps input dy");
  }
}

/* ------------------------------------------------------------------ */

static void
test_properties (Fixture *f, gconstpointer data)
{
  guint capacity = 0, limit = 0, autotune = 0;
  guint64 v64 = 0;

  g_assert_cmpuint (atomr_cudnn_actor_get_cache_capacity (f->actor), ==, 256);
  g_assert_cmpuint (atomr_cudnn_actor_get_workspace_limit (f->actor), ==, G_GUINT64_CONSTANT (1) << 30);
  g_assert_false (atomr_cudnn_actor_get_autotune (f->actor));
  g_signal_connect (f->actor, "notify::cache-capacity", G_CALLBACK (count_notify), &capacity);
  g_signal_connect (f->actor, "notify::workspace-limit", G_CALLBACK (count_notify), &limit);
  g_signal_connect (f->actor, "notify::autotune", G_CALLBACK (count_notify), &autotune);
  g_object_set (f->actor, "cache-capacity", 8, "workspace-limit", (guint64) 4096, "autotune", TRUE, NULL);
  g_object_set (f->actor, "cache-capacity", 8, NULL);
  g_assert_cmpuint (capacity, ==, 1);
  g_assert_cmpuint (limit, ==, 1);
  g_assert_cmpuint (autotune, ==, 1);
  g_object_get (f->actor, "workspace-limit", &v64, NULL);
  g_assert_cmpuint (v64, ==, 4096);
  g_object_get (f->actor, "cache-hits", &v64, NULL);
  g_assert_cmpuint (v64, ==, 0);
  g_object_get (f->actor, "workspace-size", &v64, NULL);
  g_assert_cmpuint (v64, ==, 0);
  g_assert_cmpstr (atomr_actor_get_library (ATOMR_ACTOR (f->actor)), ==, "cudnn");
  g_signal_handlers_disconnect_by_data (f->actor, &capacity);
  g_signal_handlers_disconnect_by_data (f->actor, &limit);
  g_signal_handlers_disconnect_by_data (f->actor, &autotune);
}

static void
record_operation (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  GPtrArray *names = user_data;
  g_ptr_array_add (names, g_strdup_printf ("%s · %s", atomr_launch_info_get_library (info),
                                           atomr_launch_info_get_operation (info)));
}

/* Valid requests reach the envelope's enqueue step under their trace
 * names; invalid ones never do. */
static void
test_trace_names (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 4, 4);
  g_autoptr(AtomrTensor) w = tensor (f, F32, 2, 2, 3, 3);
  g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 2, 4, 4);
  g_autoptr(AtomrTensor) bad = tensor (f, F32, 1, 2, 5, 5);
  GAsyncResult *res = NULL;

  g_signal_connect (f->actor, "before-enqueue", G_CALLBACK (record_operation), names);
  run_conv_fwd (f, conv, x, w, bad, INVALID, "y is 1×2×5×5");
  g_assert_cmpuint (names->len, ==, 0);
  run_conv_fwd (f, conv, x, w, y, NOSUP, "conv-fwd");
  {
    /* fresh operands: the failed forward's output would fail this one
     * as a dependency */
    g_autoptr(AtomrTensor) w2 = tensor (f, F32, 2, 2, 3, 3);
    g_autoptr(AtomrTensor) dy = tensor (f, F32, 1, 2, 4, 4);
    g_autoptr(AtomrTensor) dx = tensor (f, F32, 1, 2, 4, 4);
    atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w2, dy, 0.0, dx, NULL,
                                                       store_result, &res);
    expect (&res, NOSUP, "conv-bwd-data");
  }
  g_assert_cmpuint (names->len, ==, 2);
  g_assert_cmpstr (g_ptr_array_index (names, 0), ==, "cudnn · conv-fwd");
  g_assert_cmpstr (g_ptr_array_index (names, 1), ==, "cudnn · conv-bwd-data");
  g_signal_handlers_disconnect_by_data (f->actor, names);
}

static void
record_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  GPtrArray *details = user_data;
  const gchar *d = atomr_launch_info_get_detail (info);

  g_ptr_array_add (details, g_strdup_printf ("%s: %s", atomr_launch_info_get_operation (info),
                                             d ? d : "(none)"));
}

/* Which cuDNN API a convolution takes is in its trace detail: the backend
 * by default, the legacy calls with legacy-convolution or autotune set
 * (read when the request is made); the property notifies, and
 * ATOMR_CUDNN_CONV_LEGACY sets its default. */
static void
test_conv_path (Fixture *f, gconstpointer data)
{
  g_autoptr(GPtrArray) details = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  guint notified = 0;
  gboolean v = TRUE;
  GAsyncResult *res = NULL;

  g_assert_false (atomr_cudnn_actor_get_legacy_convolution (f->actor));
  g_signal_connect (f->actor, "before-enqueue", G_CALLBACK (record_detail), details);
  g_signal_connect (f->actor, "notify::legacy-convolution", G_CALLBACK (count_notify), &notified);
  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 4, 4);
      g_autoptr(AtomrTensor) w = tensor (f, F32, 2, 2, 3, 3);
      g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 2, 4, 4);

      /* 0: default, 1: legacy, 2: back to the backend, 3: autotune */
      if (i == 1)
        g_object_set (f->actor, "legacy-convolution", TRUE, NULL);
      if (i == 2)
        atomr_cudnn_actor_set_legacy_convolution (f->actor, FALSE);
      if (i == 3)
        atomr_cudnn_actor_set_autotune (f->actor, TRUE);
      if (i == 1)
        {
          /* backward filter reads the same flag */
          atomr_cudnn_actor_convolution_backward_filter_async (f->actor, conv, 1.0, x, y, 0.0, w, NULL,
                                                               store_result, &res);
          expect (&res, NOSUP, "conv-bwd-filter");
        }
      else
        run_conv_fwd (f, conv, x, w, y, NOSUP, "conv-fwd");
    }
  /* the fused convolution takes the same two paths */
  atomr_cudnn_actor_set_autotune (f->actor, FALSE);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 2, 4, 4);
      g_autoptr(AtomrTensor) w = tensor (f, F32, 2, 2, 3, 3);
      g_autoptr(AtomrTensor) y = tensor (f, F32, 1, 2, 4, 4);
      g_autoptr(AtomrTensor) bias = NULL;
      g_autoptr(GError) error = NULL;

      bias = atomr_tensor_empty (f->device, F32, (const gint64[]) { 2 }, 1, &error);
      g_assert_no_error (error);

      atomr_cudnn_actor_set_legacy_convolution (f->actor, i == 1);
      atomr_cudnn_actor_convolution_bias_activation_forward_async (f->actor, conv, ATOMR_ACTIVATION_RELU, 0.0,
                                                                   1.0, x, w, bias, 0.0, NULL, y, NULL,
                                                                   store_result, &res);
      expect (&res, NOSUP, "conv-bias-act");
    }
  g_assert_cmpuint (details->len, ==, 6);
  g_assert_cmpstr (g_ptr_array_index (details, 0), ==, "conv-fwd: backend");
  g_assert_cmpstr (g_ptr_array_index (details, 1), ==, "conv-bwd-filter: legacy");
  g_assert_cmpstr (g_ptr_array_index (details, 2), ==, "conv-fwd: backend");
  g_assert_cmpstr (g_ptr_array_index (details, 3), ==, "conv-fwd: legacy");
  g_assert_cmpstr (g_ptr_array_index (details, 4), ==, "conv-bias-act: backend");
  g_assert_cmpstr (g_ptr_array_index (details, 5), ==, "conv-bias-act: legacy");
  g_assert_cmpuint (notified, ==, 3);
  atomr_cudnn_actor_set_legacy_convolution (f->actor, FALSE);
  g_assert_cmpuint (notified, ==, 4);
  g_signal_handlers_disconnect_by_data (f->actor, details);
  g_signal_handlers_disconnect_by_data (f->actor, &notified);

  /* the environment gives the default of actors created afterwards */
  g_setenv ("ATOMR_CUDNN_CONV_LEGACY", "1", TRUE);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrCudnnActor) a = atomr_cudnn_actor_new (f->device, &error);
    g_assert_no_error (error);
    g_object_get (a, "legacy-convolution", &v, NULL);
    g_assert_true (v);
  }
  g_setenv ("ATOMR_CUDNN_CONV_LEGACY", "0", TRUE);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrCudnnActor) a = atomr_cudnn_actor_new (f->device, &error);
    g_assert_no_error (error);
    g_assert_false (atomr_cudnn_actor_get_legacy_convolution (a));
  }
}

/* Bindings may build objects with a bare g_object_new(): reading their
 * properties and dropping them must not crash. */
static void
test_bare_objects (void)
{
  g_autoptr(AtomrCudnnActor) actor = g_object_new (ATOMR_TYPE_CUDNN_ACTOR, NULL);
  g_autoptr(AtomrConvolution) conv = g_object_new (ATOMR_TYPE_CONVOLUTION, NULL);
  g_autoptr(AtomrPooling) pool = g_object_new (ATOMR_TYPE_POOLING, NULL);
  guint64 v = 1;

  g_object_get (actor, "cache-size", &v, NULL);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (actor), ==, 0);
  g_assert_cmpuint (atomr_convolution_get_groups (conv), ==, 1);
  g_assert_cmpint (atomr_convolution_get_stride (conv, 0), ==, 1);
  g_assert_cmpint (atomr_pooling_get_window (pool, 1), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/cudnn/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("conv/valid", test_conv_valid);
  ADD ("conv/shapes", test_conv_shapes);
  ADD ("conv/groups", test_conv_groups);
  ADD ("conv/dtypes", test_conv_dtypes);
  ADD ("conv/layouts", test_conv_layouts);
  ADD ("conv/alias", test_conv_alias);
  ADD ("conv/backward-shapes", test_conv_backward_shapes);
  ADD ("conv/bad-objects", test_conv_bad_objects);
  ADD ("activation", test_activation);
  ADD ("softmax", test_softmax);
  ADD ("pooling", test_pooling);
  ADD ("batch-norm", test_batch_norm);
  ADD ("properties", test_properties);
  ADD ("trace-names", test_trace_names);
  ADD ("conv/path", test_conv_path);
  g_test_add_func ("/cudnn/convolution-object", test_convolution_object);
  g_test_add_func ("/cudnn/convolution-notify", test_convolution_notify);
  g_test_add_func ("/cudnn/bare-objects", test_bare_objects);
  return g_test_run ();
}
