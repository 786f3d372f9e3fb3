/* test-cudnn-rnn-validation.c — RNNs on the cuDNN actor, mock device
 *
 * Invalid requests fail in the _async call with INVALID_ARGUMENT naming
 * the operand and value; valid ones pass validation and are answered with
 * NOT_SUPPORTED describing the network (no cuDNN on the host test device).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>

#define CUDNN_TEST_MOCK_FIXTURE
#define CUDNN_TEST_OWN_TEARDOWN
#include "cudnn-validation-util.h"

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 0);
  g_assert_cmpuint (atomr_cudnn_actor_get_workspace_size (f->actor), ==, 0);
  fixture_release (f);
}

static AtomrTensor *
tensor (Fixture *f, AtomrDtype dtype, const gint64 *shape, guint n)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, n, &error);

  g_assert_no_error (error);
  return t;
}

static AtomrTensor *
t3 (Fixture *f, AtomrDtype dtype, gint64 a, gint64 b, gint64 c)
{
  const gint64 shape[3] = { a, b, c };
  return tensor (f, dtype, shape, 3);
}

static AtomrTensor *
t1 (Fixture *f, AtomrDtype dtype, guint64 n)
{
  const gint64 shape[1] = { (gint64) n };
  return tensor (f, dtype, shape, 1);
}

/* steps × batch × features view of batch × steps × features storage */
static AtomrTensor *
batch_major (Fixture *f, AtomrDtype dtype, gint64 steps, gint64 batch, gint64 features)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) s = t3 (f, dtype, batch, steps, features);
  const guint perm[3] = { 1, 0, 2 };
  AtomrTensor *t = atomr_tensor_permute (s, perm, 3, &error);

  g_assert_no_error (error);
  return t;
}

#define F32     ATOMR_DTYPE_F32

static void
fwd (Fixture *f, AtomrRnn *rnn, gboolean training, AtomrTensor *x, AtomrTensor *hx, AtomrTensor *cx,
     AtomrTensor *w, AtomrTensor *y, AtomrTensor *hy, AtomrTensor *cy, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_rnn_forward_async (f->actor, rnn, training, x, hx, cx, w, y, hy, cy, NULL, store_result,
                                       &res);
  expect (&res, code, needle);
}

static void
test_rnn_object (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrRnn) lstm = atomr_rnn_new (ATOMR_RNN_LSTM, 10, 20, 2, TRUE);
  g_autoptr(AtomrRnn) gru = atomr_rnn_new (ATOMR_RNN_GRU, 10, 20, 1, FALSE);
  g_autoptr(AtomrRnn) tanh_rnn = atomr_rnn_new (ATOMR_RNN_TANH, 3, 5, 3, FALSE);
  g_autoptr(AtomrRnn) bare = g_object_new (ATOMR_TYPE_RNN, NULL);
  AtomrRnnMode mode;
  guint hidden;

  /* per layer and direction: gates·h·(in + h) + 2·gates·h */
  g_assert_cmpuint (atomr_rnn_get_n_weights (lstm), ==,
                    2 * (4 * 20 * (10 + 20) + 2 * 4 * 20) + 2 * (4 * 20 * (40 + 20) + 2 * 4 * 20));
  g_assert_cmpuint (atomr_rnn_get_n_weights (gru), ==, 3 * 20 * (10 + 20) + 2 * 3 * 20);
  g_assert_cmpuint (atomr_rnn_get_n_weights (tanh_rnn), ==,
                    (5 * (3 + 5) + 10) + 2 * (5 * (5 + 5) + 10));
  /* a bare object is a valid one-layer LSTM of size 1 */
  g_assert_cmpint (atomr_rnn_get_mode (bare), ==, ATOMR_RNN_LSTM);
  g_assert_cmpuint (atomr_rnn_get_n_weights (bare), ==, 4 * 1 * 2 + 2 * 4);
  g_object_get (lstm, "mode", &mode, "hidden-size", &hidden, NULL);
  g_assert_cmpint (mode, ==, ATOMR_RNN_LSTM);
  g_assert_cmpuint (hidden, ==, 20);
  g_assert_true (atomr_rnn_get_bidirectional (lstm));
  g_assert_cmpuint (atomr_rnn_get_n_layers (lstm), ==, 2);
  g_assert_cmpuint (atomr_rnn_get_input_size (gru), ==, 10);
}

static void
test_forward (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrRnn) lstm = atomr_rnn_new (ATOMR_RNN_LSTM, 8, 16, 2, TRUE);
  g_autoptr(AtomrRnn) gru = atomr_rnn_new (ATOMR_RNN_GRU, 8, 16, 1, FALSE);
  guint64 nw = atomr_rnn_get_n_weights (lstm);

  {
    /* time-major and batch-major, with and without states */
    g_autoptr(AtomrTensor) x = t3 (f, F32, 5, 3, 8);
    g_autoptr(AtomrTensor) y = t3 (f, F32, 5, 3, 32);
    g_autoptr(AtomrTensor) xb = batch_major (f, F32, 5, 3, 8);
    g_autoptr(AtomrTensor) yb = batch_major (f, F32, 5, 3, 32);
    g_autoptr(AtomrTensor) h = t3 (f, F32, 4, 3, 16);
    g_autoptr(AtomrTensor) c = t3 (f, F32, 4, 3, 16);
    g_autoptr(AtomrTensor) hy = t3 (f, F32, 4, 3, 16);
    g_autoptr(AtomrTensor) cy = t3 (f, F32, 4, 3, 16);
    g_autoptr(AtomrTensor) w = t1 (f, F32, nw);

    fwd (f, lstm, TRUE, x, h, c, w, y, hy, cy, NOSUP,
         "rnn-fwd (f32 lstm, 2 layers, bidirectional, input 8, hidden 16, 5 steps × batch 3 time-major)");
    fwd (f, lstm, FALSE, xb, NULL, NULL, w, yb, NULL, NULL, NOSUP, "batch-major) needs a CUDA device");
    /* mixed storage */
    fwd (f, lstm, FALSE, x, NULL, NULL, w, yb, NULL, NULL, INVALID,
         "y is stored batch-major but the first sequence time-major");
    /* wrong output width (one direction) */
    {
      g_autoptr(AtomrTensor) y16 = t3 (f, F32, 5, 3, 16);
      fwd (f, lstm, FALSE, x, NULL, NULL, w, y16, NULL, NULL, INVALID, "y is 5×3×16 but must be 5×3×32");
    }
    /* wrong state shape */
    {
      g_autoptr(AtomrTensor) h2 = t3 (f, F32, 2, 3, 16);
      fwd (f, lstm, FALSE, x, h2, NULL, w, y, NULL, NULL, INVALID, "hx is 2×3×16 but must be 4×3×16");
    }
    /* wrong weight count */
    {
      g_autoptr(AtomrTensor) w2 = t1 (f, F32, nw - 1);
      fwd (f, lstm, FALSE, x, NULL, NULL, w2, y, NULL, NULL, INVALID, "but this network has");
    }
    /* y overlaps x's buffer?  No: y is x itself (same shape for a GRU 8→8?) —
     * use hy = hx instead: an output overlapping an input */
    fwd (f, lstm, FALSE, x, h, NULL, w, y, h, NULL, INVALID, "output hy overlaps input hx");
    /* an input with strided features */
    {
      g_autoptr(AtomrTensor) big = t3 (f, F32, 5, 3, 16);
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrTensor) xs = atomr_tensor_slice (big, 2, 0, 16, 2, &error);
      g_assert_no_error (error);
      fwd (f, lstm, FALSE, xs, NULL, NULL, w, y, NULL, NULL, INVALID, "x has strides (48, 16, 2)");
    }
    /* dtypes */
    {
      g_autoptr(AtomrTensor) x16 = t3 (f, ATOMR_DTYPE_F16, 5, 3, 8);
      g_autoptr(AtomrTensor) xi = t3 (f, ATOMR_DTYPE_I32, 5, 3, 8);
      fwd (f, lstm, FALSE, x16, NULL, NULL, w, y, NULL, NULL, INVALID, "y has dtype f32, the other operands f16");
      fwd (f, lstm, FALSE, xi, NULL, NULL, w, y, NULL, NULL, INVALID, "x has dtype i32");
    }
    fwd (f, NULL, FALSE, x, NULL, NULL, w, y, NULL, NULL, INVALID, "rnn is not an AtomrRnn");
    fwd (f, lstm, FALSE, NULL, NULL, NULL, w, y, NULL, NULL, INVALID, "x is NULL");
  }
  {
    /* a GRU has no cell state */
    g_autoptr(AtomrTensor) x = t3 (f, F32, 5, 3, 8);
    g_autoptr(AtomrTensor) y = t3 (f, F32, 5, 3, 16);
    g_autoptr(AtomrTensor) c = t3 (f, F32, 1, 3, 16);
    g_autoptr(AtomrTensor) w = t1 (f, F32, atomr_rnn_get_n_weights (gru));
    fwd (f, gru, TRUE, x, NULL, c, w, y, NULL, NULL, INVALID, "cx is given but only an LSTM has a cell state");
    fwd (f, gru, TRUE, x, NULL, NULL, w, y, NULL, NULL, NOSUP, "f32 gru, 1 layer, input 8, hidden 16");
  }
}

static void
test_backward (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrRnn) lstm = atomr_rnn_new (ATOMR_RNN_LSTM, 8, 16, 1, FALSE);
  g_autoptr(AtomrTensor) x = t3 (f, F32, 5, 3, 8);
  g_autoptr(AtomrTensor) y = t3 (f, F32, 5, 3, 16);
  g_autoptr(AtomrTensor) dy = t3 (f, F32, 5, 3, 16);
  g_autoptr(AtomrTensor) dx = t3 (f, F32, 5, 3, 8);
  g_autoptr(AtomrTensor) w = t1 (f, F32, atomr_rnn_get_n_weights (lstm));
  g_autoptr(AtomrTensor) dw = t1 (f, F32, atomr_rnn_get_n_weights (lstm));
  g_autoptr(AtomrTensor) dy8 = t3 (f, F32, 5, 3, 8);
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_rnn_backward_data_async (f->actor, lstm, y, dy, NULL, NULL, NULL, NULL, w, dx, NULL, NULL,
                                             NULL, store_result, &res);
  expect (&res, NOSUP, "rnn-bwd-data (f32 lstm");
  atomr_cudnn_actor_rnn_backward_data_async (f->actor, lstm, y, dy8, NULL, NULL, NULL, NULL, w, dx, NULL, NULL,
                                             NULL, store_result, &res);
  expect (&res, INVALID, "dy is 5×3×8 but must be 5×3×16");
  atomr_cudnn_actor_rnn_backward_data_async (f->actor, lstm, y, dy, NULL, NULL, NULL, NULL, w, dy, NULL, NULL,
                                             NULL, store_result, &res);
  expect (&res, INVALID, "dx is 5×3×16 but must be 5×3×8");
  atomr_cudnn_actor_rnn_backward_weights_async (f->actor, lstm, FALSE, x, NULL, y, dw, NULL, store_result, &res);
  expect (&res, NOSUP, "rnn-bwd-weights (f32 lstm");
  atomr_cudnn_actor_rnn_backward_weights_async (f->actor, lstm, TRUE, x, NULL, y, w, NULL, store_result, &res);
  expect (&res, NOSUP, "rnn-bwd-weights");
  atomr_cudnn_actor_rnn_backward_weights_async (f->actor, lstm, FALSE, x, NULL, y, x, NULL, store_result, &res);
  expect (&res, INVALID, "dw has 120 elements but this network has");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/cudnn-rnn/object", Fixture, NULL, fixture_setup, test_rnn_object, fixture_teardown);
  g_test_add ("/cudnn-rnn/forward", Fixture, NULL, fixture_setup, test_forward, fixture_teardown);
  g_test_add ("/cudnn-rnn/backward", Fixture, NULL, fixture_setup, test_backward, fixture_teardown);
  return g_test_run ();
}
