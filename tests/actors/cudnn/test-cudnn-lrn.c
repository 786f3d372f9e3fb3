/* test-cudnn-lrn.c — LRN, dropout and the fused convolution + bias +
 * activation without a GPU: every invalid request
 * fails in the _async call with INVALID_ARGUMENT naming the operand and
 * value, valid ones reach the enqueue step (NOT_SUPPORTED on the mock
 * device), and the dropout-seed property behaves.
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
tensor (Fixture *f, AtomrDtype dtype, const gint64 *shape, guint n)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, n, &error);

  g_assert_no_error (error);
  return t;
}

#define T(f, dtype, ...) tensor ((f), (dtype), (const gint64[]) { __VA_ARGS__ }, \
                                 sizeof ((const gint64[]) { __VA_ARGS__ }) / sizeof (gint64))

#define F32     ATOMR_DTYPE_F32

static void
lrn_fwd (Fixture *f, guint size, gdouble alpha, gdouble beta, gdouble k, AtomrTensor *x, AtomrTensor *y,
         gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_lrn_forward_async (f->actor, size, alpha, beta, k, x, y, NULL, store_result, &res);
  expect (&res, code, needle);
}

static void
lrn_bwd (Fixture *f, AtomrTensor *y, AtomrTensor *dy, AtomrTensor *x, AtomrTensor *dx,
         gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_lrn_backward_async (f->actor, 5, 1e-4, 0.75, 2.0, y, dy, x, dx, NULL, store_result, &res);
  expect (&res, code, needle);
}

static void
drop_fwd (Fixture *f, gdouble p, AtomrTensor *x, AtomrTensor *y, AtomrBuffer *reserve,
          gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_dropout_forward_async (f->actor, p, x, y, reserve, NULL, store_result, &res);
  expect (&res, code, needle);
}

static void
drop_bwd (Fixture *f, gdouble p, AtomrTensor *dy, AtomrTensor *dx, AtomrBuffer *reserve,
          gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_dropout_backward_async (f->actor, p, dy, dx, reserve, NULL, store_result, &res);
  expect (&res, code, needle);
}

static AtomrBuffer *
bytes (Fixture *f, guint64 n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (f->device, ATOMR_DTYPE_U8, n, &error);

  g_assert_no_error (error);
  return b;
}

static void
test_lrn (Fixture *f, gconstpointer data)
{
  const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_F64 };

  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autoptr(AtomrTensor) x = T (f, dtypes[i], 2, 8, 5, 5);
      g_autoptr(AtomrTensor) y = T (f, dtypes[i], 2, 8, 5, 5);
      g_autoptr(AtomrTensor) dy = T (f, dtypes[i], 2, 8, 5, 5);
      g_autoptr(AtomrTensor) dx = T (f, dtypes[i], 2, 8, 5, 5);
      g_autoptr(AtomrTensor) x5 = T (f, dtypes[i], 2, 8, 3, 5, 5);
      g_autoptr(AtomrTensor) y5 = T (f, dtypes[i], 2, 8, 3, 5, 5);

      lrn_fwd (f, 5, 1e-4, 0.75, 2.0, x, y, NOSUP, "lrn-fwd needs a CUDA device");
      lrn_fwd (f, 3, 1e-4, 0.75, 2.0, x5, y5, NOSUP, "lrn-fwd");
      /* y above is the output of a failed request: a fresh one */
      {
        g_autoptr(AtomrTensor) yb = T (f, dtypes[i], 2, 8, 5, 5);
        lrn_bwd (f, yb, dy, x, dx, NOSUP, "lrn-bwd");
      }
    }
}

static void
test_lrn_invalid (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTensor) x = T (f, F32, 2, 8, 5, 5);
  g_autoptr(AtomrTensor) y = T (f, F32, 2, 8, 5, 5);
  g_autoptr(AtomrTensor) y_wrong = T (f, F32, 2, 8, 5, 4);
  g_autoptr(AtomrTensor) y_f16 = T (f, ATOMR_DTYPE_F16, 2, 8, 5, 5);
  g_autoptr(AtomrTensor) x3 = T (f, F32, 2, 8, 5);
  g_autoptr(AtomrTensor) dx = T (f, F32, 2, 8, 5, 5);

  lrn_fwd (f, 0, 1e-4, 0.75, 2.0, x, y, INVALID, "size is 0 (cuDNN takes 1 to 16 channels)");
  lrn_fwd (f, 17, 1e-4, 0.75, 2.0, x, y, INVALID, "size is 17");
  lrn_fwd (f, 5, NAN, 0.75, 2.0, x, y, INVALID, "alpha is nan");
  lrn_fwd (f, 5, 1e-4, 0.001, 2.0, x, y, INVALID, "beta is 0.001 (cuDNN takes at least 0.01)");
  lrn_fwd (f, 5, 1e-4, 0.75, 0.0, x, y, INVALID, "k is 0 (cuDNN takes at least 1e-05)");
  lrn_fwd (f, 5, 1e-4, 0.75, 2.0, x3, y, INVALID, "x has 3 dimensions (takes 4 to 5)");
  lrn_fwd (f, 5, 1e-4, 0.75, 2.0, x, y_wrong, INVALID, "y is");
  lrn_fwd (f, 5, 1e-4, 0.75, 2.0, x, y_f16, INVALID, "y has dtype f16, the other operands f32");
  lrn_fwd (f, 5, 1e-4, 0.75, 2.0, x, x, INVALID, "y");
  lrn_bwd (f, y, x, x, x, INVALID, "dx");
  lrn_bwd (f, y, x, y_wrong, dx, INVALID, "x is");
}

static void
test_dropout (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrTensor) x = T (f, F32, 4, 16);
  g_autoptr(AtomrTensor) y = T (f, F32, 4, 16);
  g_autoptr(AtomrTensor) dy = T (f, F32, 4, 16);
  g_autoptr(AtomrTensor) dx = T (f, F32, 4, 16);
  g_autoptr(AtomrTensor) y_wrong = T (f, F32, 4, 15);
  g_autoptr(AtomrBuffer) reserve = bytes (f, 4096);
  g_autoptr(AtomrBuffer) reserve2 = bytes (f, 4096);
  g_autoptr(AtomrDevice) other = atomr_device_new_mock ();
  g_autoptr(AtomrBuffer) foreign = NULL;
  g_autoptr(GError) error = NULL;
  guint64 size = 0;

  foreign = atomr_buffer_new (other, ATOMR_DTYPE_U8, 64, &error);
  g_assert_no_error (error);

  drop_fwd (f, 0.5, x, y, reserve, NOSUP, "dropout-fwd needs a CUDA device");
  drop_bwd (f, 0.5, dy, dx, reserve2, NOSUP, "dropout-bwd");
  drop_fwd (f, 1.0, x, y, reserve, INVALID, "probability is 1 (takes 0 ≤ p < 1)");
  drop_fwd (f, -0.1, x, y, reserve, INVALID, "probability is -0.1");
  drop_fwd (f, NAN, x, y, reserve, INVALID, "probability is nan");
  drop_fwd (f, 0.5, x, y_wrong, reserve, INVALID, "y is");
  drop_fwd (f, 0.5, x, y, NULL, INVALID, "reserve must be an AtomrBuffer");
  drop_fwd (f, 0.5, x, y, foreign, INVALID, "reserve lives on another device");
  drop_fwd (f, 0.5, x, x, reserve, INVALID, "y");
  drop_bwd (f, 0.5, dy, dy, reserve, INVALID, "dx");

  g_assert_false (atomr_cudnn_actor_get_dropout_reserve_size (f->actor, x, &size, &error));
  g_assert_error (error, ATOMR_ERROR, NOSUP);
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_actor_get_dropout_reserve_size (f->actor, NULL, &size, &error));
  g_assert_error (error, ATOMR_ERROR, INVALID);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_seed_property (Fixture *f, gconstpointer data)
{
  guint notified = 0;
  guint64 seed = 0;

  g_assert_cmpuint (atomr_cudnn_actor_get_dropout_seed (f->actor), ==, 0);
  g_signal_connect (f->actor, "notify::dropout-seed", G_CALLBACK (count_notify), &notified);
  atomr_cudnn_actor_set_dropout_seed (f->actor, 42);
  atomr_cudnn_actor_set_dropout_seed (f->actor, 42);   /* restarts, no change: no notify */
  g_assert_cmpuint (notified, ==, 1);
  g_object_set (f->actor, "dropout-seed", G_GUINT64_CONSTANT (1) << 40, NULL);
  g_object_get (f->actor, "dropout-seed", &seed, NULL);
  g_assert_cmpuint (seed, ==, G_GUINT64_CONSTANT (1) << 40);
  g_assert_cmpuint (notified, ==, 2);
}

static void
fused (Fixture *f, AtomrConvolution *conv, AtomrActivationMode mode, gdouble coef, AtomrTensor *x,
       AtomrTensor *w, AtomrTensor *bias, AtomrTensor *z, AtomrTensor *y, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_convolution_bias_activation_forward_async (f->actor, conv, mode, coef, 1.0, x, w, bias,
                                                               0.5, z, y, NULL, store_result, &res);
  expect (&res, code, needle);
}

/* An N × C × H × W view of NHWC storage. */
static AtomrTensor *
nhwc (Fixture *f, AtomrDtype dtype, gint64 n, gint64 c, gint64 h, gint64 w)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) storage = T (f, dtype, n, h, w, c);
  const guint perm[4] = { 0, 3, 1, 2 };
  AtomrTensor *t = atomr_tensor_permute (storage, perm, 4, &error);

  g_assert_no_error (error);
  return t;
}

static void
test_fused_conv (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrTensor) x = T (f, F32, 2, 4, 6, 6);
  g_autoptr(AtomrTensor) w = T (f, F32, 8, 4, 3, 3);
  g_autoptr(AtomrTensor) b = T (f, F32, 8);
  g_autoptr(AtomrTensor) b7 = T (f, F32, 7);
  g_autoptr(AtomrTensor) b16 = T (f, ATOMR_DTYPE_F16, 8);
  g_autoptr(AtomrTensor) y = T (f, F32, 2, 8, 6, 6);
  g_autoptr(AtomrTensor) z = T (f, F32, 2, 8, 6, 6);
  g_autoptr(AtomrTensor) z_wrong = T (f, F32, 2, 8, 6, 5);
  g_autoptr(AtomrTensor) xn = nhwc (f, ATOMR_DTYPE_BF16, 2, 4, 6, 6);
  g_autoptr(AtomrTensor) wn = nhwc (f, ATOMR_DTYPE_BF16, 8, 4, 3, 3);
  g_autoptr(AtomrTensor) bn = T (f, ATOMR_DTYPE_BF16, 8);
  g_autoptr(AtomrTensor) yn = nhwc (f, ATOMR_DTYPE_BF16, 2, 8, 6, 6);
  g_autoptr(AtomrTensor) zn = nhwc (f, ATOMR_DTYPE_BF16, 2, 8, 6, 6);

  fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b, NULL, y, NOSUP, "conv-bias-act");
  fused (f, conv, ATOMR_ACTIVATION_IDENTITY, 0, x, w, b, z, y, NOSUP, "needs a CUDA device");
  fused (f, conv, ATOMR_ACTIVATION_SWISH, 1.0, xn, wn, bn, zn, yn, NOSUP, "bf16");
  fused (f, conv, 99, 0, x, w, b, NULL, y, INVALID, "mode");
  fused (f, conv, ATOMR_ACTIVATION_RELU, NAN, x, w, b, NULL, y, INVALID, "must be finite");
  fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b7, NULL, y, INVALID,
         "bias has 7 elements (takes 8 packed: one per output channel)");
  fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b16, NULL, y, INVALID, "bias has dtype f16, the other operands f32");
  fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b, z_wrong, y, INVALID, "but z is 2×8×6×5");
  fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b, y, y, INVALID, "y");
  fused (f, NULL, ATOMR_ACTIVATION_RELU, 0, x, w, b, NULL, y, INVALID, "conv is not an AtomrConvolution");
  {
    g_autoptr(AtomrTensor) y_small = T (f, F32, 2, 8, 5, 5);
    fused (f, conv, ATOMR_ACTIVATION_RELU, 0, x, w, b, NULL, y_small, INVALID, "y is 2×8×5×5");
  }
  /* identity is for the fused convolution only */
  {
    GAsyncResult *res = NULL;
    g_autoptr(AtomrTensor) a = T (f, F32, 2, 8, 6, 6);
    g_autoptr(AtomrTensor) c = T (f, F32, 2, 8, 6, 6);
    atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_IDENTITY, 0, a, c, NULL,
                                                store_result, &res);
    expect (&res, INVALID, "mode");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/cudnn-lrn/lrn", Fixture, NULL, fixture_setup, test_lrn, fixture_teardown);
  g_test_add ("/cudnn-lrn/lrn-invalid", Fixture, NULL, fixture_setup, test_lrn_invalid, fixture_teardown);
  g_test_add ("/cudnn-lrn/dropout", Fixture, NULL, fixture_setup, test_dropout, fixture_teardown);
  g_test_add ("/cudnn-lrn/dropout-seed", Fixture, NULL, fixture_setup, test_seed_property, fixture_teardown);
  g_test_add ("/cudnn-lrn/fused-conv", Fixture, NULL, fixture_setup, test_fused_conv, fixture_teardown);
  return g_test_run ();
}
