/* test-gpu-cudnn-rnn.c — RNNs on the cuDNN actor against a CPU reference
 *
 * Every element of the weight space (matrices and both bias vectors) is
 * one constant c, so the reference needs no knowledge of cuDNN's weight
 * layout: each gate's pre-activation is c·Σ input + c·Σ h (+ biases), and
 * the cell formulas are cuDNN's (LSTM i, f, g, o; GRU r, z, n with the
 * reset gate applied to R·h + b_R).  Inputs are random; layouts time-major
 * and batch-major; layers stacked, directions concatenated (forward
 * first).  Checked in f32 (full f32 arithmetic) and f64:
 *   y and the final states against the reference;
 *   dx against central differences of the reference loss Σ y∘dy;
 *   Σ dw (every weight at once) against d/dc of the same loss.
 * Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

typedef struct {
  AtomrDevice     *device;
  AtomrCudnnActor *actor;
  GRand           *rand;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->rand = g_rand_new_with_seed (20261123);
  f->device = atomr_device_get (0, &error);
  if (f->device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      return;
    }
  f->actor = atomr_cudnn_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->actor)
    g_assert_finalize_object (f->actor);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

typedef struct {
  const gchar  *name;
  AtomrDtype    dtype;
  AtomrRnnMode  mode;
  gint64        T, N, C, H, L;
  gboolean      bidirectional;
  gboolean      batch_major;
} Case;

static const Case cases[] = {
  { "f32-lstm-2layers-bidir", ATOMR_DTYPE_F32, ATOMR_RNN_LSTM, 5, 3, 8, 16, 2, TRUE, FALSE },
  { "f32-gru-batch-major", ATOMR_DTYPE_F32, ATOMR_RNN_GRU, 6, 4, 8, 8, 1, FALSE, TRUE },
  { "f64-tanh-3layers", ATOMR_DTYPE_F64, ATOMR_RNN_TANH, 4, 2, 4, 8, 3, FALSE, FALSE },
  { "f64-lstm-bidir-batch-major", ATOMR_DTYPE_F64, ATOMR_RNN_LSTM, 4, 2, 8, 8, 1, TRUE, TRUE },
};

#define WEIGHT 0.1

/* ------------------------------------------------------------------ */
/* Reference (double precision, logical time × batch × features)        */

static gdouble sigmoid (gdouble a) { return 1 / (1 + exp (-a)); }

/* y: T × N × D·H; hy, cy: L·D × N × H (may be NULL). */
static void
reference (const Case *c, gdouble w, const gdouble *x, gdouble *y, gdouble *hy, gdouble *cy)
{
  gint64 D = c->bidirectional ? 2 : 1, H = c->H;
  gint64 in_size = c->C;
  g_autofree gdouble *in = g_memdup2 (x, sizeof (gdouble) * c->T * c->N * c->C);

  for (gint64 l = 0; l < c->L; l++)
    {
      gdouble *out = g_new0 (gdouble, c->T * c->N * D * H);

      for (gint64 d = 0; d < D; d++)
        for (gint64 n = 0; n < c->N; n++)
          {
            gdouble h = 0, cell = 0;      /* every hidden unit has the same value */

            for (gint64 s = 0; s < c->T; s++)
              {
                gint64 t = d == 0 ? s : c->T - 1 - s;
                gdouble sx = 0, sh = w * H * h;

                for (gint64 k = 0; k < in_size; k++)
                  sx += in[(t * c->N + n) * in_size + k];
                sx *= w;
                switch (c->mode)
                  {
                  case ATOMR_RNN_RELU: h = MAX (0, sx + sh + 2 * w); break;
                  case ATOMR_RNN_TANH: h = tanh (sx + sh + 2 * w); break;
                  case ATOMR_RNN_LSTM:
                    {
                      gdouble a = sx + sh + 2 * w, gate = sigmoid (a), g = tanh (a);
                      cell = gate * cell + gate * g;
                      h = gate * tanh (cell);
                    }
                    break;
                  case ATOMR_RNN_GRU:
                    {
                      gdouble rz = sigmoid (sx + sh + 2 * w);
                      gdouble nn = tanh (sx + w + rz * (sh + w));
                      h = (1 - rz) * nn + rz * h;
                    }
                    break;
                  }
                for (gint64 j = 0; j < H; j++)
                  out[(t * c->N + n) * D * H + d * H + j] = h;
              }
            for (gint64 j = 0; j < H; j++)
              {
                if (hy)
                  hy[((l * D + d) * c->N + n) * H + j] = h;
                if (cy)
                  cy[((l * D + d) * c->N + n) * H + j] = cell;
              }
          }
      g_free (in);
      in = out;
      in_size = D * H;
    }
  memcpy (y, in, sizeof (gdouble) * c->T * c->N * D * H);
}

static gdouble
loss (const Case *c, gdouble w, const gdouble *x, const gdouble *dy)
{
  gsize n = c->T * c->N * (c->bidirectional ? 2 : 1) * c->H;
  g_autofree gdouble *y = g_new0 (gdouble, n);
  gdouble l = 0;

  reference (c, w, x, y, NULL, NULL);
  for (gsize i = 0; i < n; i++)
    l += y[i] * dy[i];
  return l;
}

/* ------------------------------------------------------------------ */
/* Device data                                                          */

static GBytes *
pack (AtomrDtype dtype, const gdouble *d, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *out = g_malloc0 (size * n);

  for (gsize i = 0; i < n; i++)
    {
      if (dtype == ATOMR_DTYPE_F64)
        memcpy (out + 8 * i, &d[i], 8);
      else
        {
          gfloat v = (gfloat) d[i];
          memcpy (out + 4 * i, &v, 4);
        }
    }
  return g_bytes_new_take (out, size * n);
}

static void
unpack (AtomrDtype dtype, GBytes *b, gdouble *d, gsize n)
{
  const guint8 *in = g_bytes_get_data (b, NULL);

  g_assert_cmpuint (g_bytes_get_size (b), >=, n * atomr_dtype_get_size (dtype));
  for (gsize i = 0; i < n; i++)
    {
      if (dtype == ATOMR_DTYPE_F64)
        memcpy (&d[i], in + 8 * i, 8);
      else
        {
          gfloat v;
          memcpy (&v, in + 4 * i, 4);
          d[i] = v;
        }
    }
}

/* A sequence view (steps × batch × features) of time- or batch-major
 * storage holding @logical (steps × batch × features, rounded to the
 * dtype in place); NULL @logical: zeros. */
static AtomrTensor *
sequence (Fixture *f, const Case *c, gint64 features, gdouble *logical)
{
  g_autoptr(GError) error = NULL;
  gsize n = c->T * c->N * features;
  g_autofree gdouble *stored = g_new0 (gdouble, n);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrBuffer) buf = NULL;
  g_autoptr(AtomrTensor) storage = NULL;
  const guint perm[3] = { 1, 0, 2 };

  if (logical)
    {
      g_autoptr(GBytes) rounded = pack (c->dtype, logical, n);
      unpack (c->dtype, rounded, logical, n);
      for (gint64 t = 0; t < c->T; t++)
        for (gint64 b = 0; b < c->N; b++)
          for (gint64 k = 0; k < features; k++)
            stored[c->batch_major ? (b * c->T + t) * features + k : (t * c->N + b) * features + k] =
              logical[(t * c->N + b) * features + k];
    }
  bytes = pack (c->dtype, stored, n);
  buf = atomr_buffer_new (f->device, c->dtype, n, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buf, bytes, NULL, &error));
  g_assert_no_error (error);
  if (!c->batch_major)
    {
      const gint64 shape[3] = { c->T, c->N, features };
      return atomr_tensor_new (buf, shape, 3, &error);
    }
  {
    const gint64 shape[3] = { c->N, c->T, features };
    storage = atomr_tensor_new (buf, shape, 3, &error);
    g_assert_no_error (error);
    return atomr_tensor_permute (storage, perm, 3, &error);
  }
}

/* The logical contents of a sequence view. */
static void
download_sequence (const Case *c, AtomrTensor *t, gint64 features, gdouble *logical)
{
  g_autoptr(GError) error = NULL;
  gsize n = c->T * c->N * features;
  g_autofree gdouble *stored = g_new0 (gdouble, n);
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (atomr_tensor_get_buffer (t), NULL, &error);

  g_assert_no_error (error);
  unpack (c->dtype, bytes, stored, n);
  for (gint64 s = 0; s < c->T; s++)
    for (gint64 b = 0; b < c->N; b++)
      for (gint64 k = 0; k < features; k++)
        logical[(s * c->N + b) * features + k] =
          stored[c->batch_major ? (b * c->T + s) * features + k : (s * c->N + b) * features + k];
}

static AtomrTensor *
flat (Fixture *f, AtomrDtype dtype, gsize n, gdouble value)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[1] = { (gint64) n };
  AtomrTensor *t = atomr_tensor_empty (f->device, dtype, shape, 1, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_buffer_fill_sync (atomr_tensor_get_buffer (t), value, NULL, &error));
  g_assert_no_error (error);
  return t;
}

static AtomrTensor *
state (Fixture *f, const Case *c)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[3] = { c->L * (c->bidirectional ? 2 : 1), c->N, c->H };
  AtomrTensor *t = atomr_tensor_empty (f->device, c->dtype, shape, 3, &error);

  g_assert_no_error (error);
  return t;
}

static gdouble
rel (const gdouble *got, const gdouble *ref, gsize n)
{
  gdouble num = 0, den = 0;

  for (gsize i = 0; i < n; i++)
    {
      num += (got[i] - ref[i]) * (got[i] - ref[i]);
      den += ref[i] * ref[i];
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  *out = g_object_ref (result);
}

static GAsyncResult *
wait (GAsyncResult **res)
{
  while (*res == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *res;
}

#define RUN(call, finish) G_STMT_START {                                     \
    GAsyncResult *res_ = NULL;                                               \
    g_autoptr(GError) err_ = NULL;                                           \
    gboolean ok_;                                                            \
    call;                                                                    \
    ok_ = finish (f->actor, wait (&res_), &err_);                            \
    g_assert_no_error (err_);        /* prints the message */                \
    g_assert_true (ok_);                                                     \
    g_object_unref (res_);                                                   \
  } G_STMT_END

static void
test_rnn (Fixture *f, gconstpointer data)
{
  const Case *c = data;
  gint64 D = c->bidirectional ? 2 : 1, out = D * c->H;
  gsize nx = c->T * c->N * c->C, ny = c->T * c->N * out, ns = c->L * D * c->N * c->H;
  gdouble tol = c->dtype == ATOMR_DTYPE_F64 ? 1e-10 : 1e-5;
  gdouble gtol = c->dtype == ATOMR_DTYPE_F64 ? 1e-6 : 1e-4;
  g_autoptr(AtomrRnn) rnn = atomr_rnn_new (c->mode, c->C, c->H, c->L, c->bidirectional);
  g_autofree gdouble *x = g_new0 (gdouble, nx), *dy = g_new0 (gdouble, ny);
  g_autofree gdouble *y_ref = g_new0 (gdouble, ny), *hy_ref = g_new0 (gdouble, ns), *cy_ref = g_new0 (gdouble, ns);
  g_autofree gdouble *got = g_new0 (gdouble, MAX (ny, nx)), *gots = g_new0 (gdouble, ns);
  g_autofree gdouble *dx_ref = g_new0 (gdouble, nx);
  g_autoptr(AtomrTensor) xt = NULL, yt = NULL, dyt = NULL, dxt = NULL, w = NULL, dw = NULL, hy = NULL, cy = NULL;
  g_autoptr(GError) error = NULL;
  gdouble err;

  if (f->device == NULL)
    {
      g_test_skip ("no CUDA device");
      return;
    }
  for (gsize i = 0; i < nx; i++)
    x[i] = g_rand_double_range (f->rand, -1, 1);
  for (gsize i = 0; i < ny; i++)
    dy[i] = g_rand_double_range (f->rand, -1, 1);
  xt = sequence (f, c, c->C, x);
  dyt = sequence (f, c, out, dy);
  yt = sequence (f, c, out, NULL);
  dxt = sequence (f, c, c->C, NULL);
  w = flat (f, c->dtype, atomr_rnn_get_n_weights (rnn), WEIGHT);
  dw = flat (f, c->dtype, atomr_rnn_get_n_weights (rnn), 0);
  hy = state (f, c);
  cy = c->mode == ATOMR_RNN_LSTM ? state (f, c) : NULL;

  /* inference, then training (which keeps the reserve space) */
  RUN (atomr_cudnn_actor_rnn_forward_async (f->actor, rnn, FALSE, xt, NULL, NULL, w, yt, hy, cy, NULL,
                                            store_result, &res_),
       atomr_cudnn_actor_rnn_forward_finish);
  reference (c, WEIGHT, x, y_ref, hy_ref, cy_ref);
  download_sequence (c, yt, out, got);
  err = rel (got, y_ref, ny);
  g_test_message ("%s: y relative error %.2e (bound %.0e)", c->name, err, tol);
  g_assert_cmpfloat (err, <=, tol);
  {
    g_autoptr(GBytes) b = atomr_buffer_download_sync (atomr_tensor_get_buffer (hy), NULL, &error);
    g_assert_no_error (error);
    unpack (c->dtype, b, gots, ns);
    err = rel (gots, hy_ref, ns);
    g_test_message ("%s: hy relative error %.2e", c->name, err);
    g_assert_cmpfloat (err, <=, tol);
  }
  if (cy)
    {
      g_autoptr(GBytes) b = atomr_buffer_download_sync (atomr_tensor_get_buffer (cy), NULL, &error);
      g_assert_no_error (error);
      unpack (c->dtype, b, gots, ns);
      err = rel (gots, cy_ref, ns);
      g_test_message ("%s: cy relative error %.2e", c->name, err);
      g_assert_cmpfloat (err, <=, tol);
    }

  RUN (atomr_cudnn_actor_rnn_forward_async (f->actor, rnn, TRUE, xt, NULL, NULL, w, yt, NULL, NULL, NULL,
                                            store_result, &res_),
       atomr_cudnn_actor_rnn_forward_finish);
  RUN (atomr_cudnn_actor_rnn_backward_data_async (f->actor, rnn, yt, dyt, NULL, NULL, NULL, NULL, w, dxt, NULL,
                                                  NULL, NULL, store_result, &res_),
       atomr_cudnn_actor_rnn_backward_data_finish);
  RUN (atomr_cudnn_actor_rnn_backward_weights_async (f->actor, rnn, FALSE, xt, NULL, yt, dw, NULL,
                                                     store_result, &res_),
       atomr_cudnn_actor_rnn_backward_weights_finish);

  /* dx against central differences of Σ y∘dy */
  for (gsize i = 0; i < nx; i++)
    {
      gdouble h = 1e-6, keep = x[i], lp, lm;
      x[i] = keep + h;
      lp = loss (c, WEIGHT, x, dy);
      x[i] = keep - h;
      lm = loss (c, WEIGHT, x, dy);
      x[i] = keep;
      dx_ref[i] = (lp - lm) / (2 * h);
    }
  download_sequence (c, dxt, c->C, got);
  err = rel (got, dx_ref, nx);
  g_test_message ("%s: dx relative error %.2e (bound %.0e)", c->name, err, gtol);
  g_assert_cmpfloat (err, <=, gtol);

  /* Σ dw: every weight moved at once */
  {
    gsize nw = atomr_rnn_get_n_weights (rnn);
    g_autofree gdouble *dwv = g_new0 (gdouble, nw);
    g_autoptr(GBytes) b = atomr_buffer_download_sync (atomr_tensor_get_buffer (dw), NULL, &error);
    gdouble sum = 0, h = 1e-6;
    gdouble want = (loss (c, WEIGHT + h, x, dy) - loss (c, WEIGHT - h, x, dy)) / (2 * h);

    g_assert_no_error (error);
    unpack (c->dtype, b, dwv, nw);
    for (gsize i = 0; i < nw; i++)
      sum += dwv[i];
    err = fabs (sum - want) / MAX (fabs (want), 1e-12);
    g_test_message ("%s: sum of dw %.6g, reference %.6g, relative error %.2e (bound %.0e)", c->name, sum,
                    want, err, gtol);
    g_assert_cmpfloat (err, <=, gtol);
  }

  /* a backward pass of another forward request is refused: dw was
   * computed, the reserve space now belongs to nothing else */
  {
    g_autoptr(AtomrTensor) other_y = sequence (f, c, out, NULL);
    GAsyncResult *res = NULL;

    atomr_cudnn_actor_rnn_backward_data_async (f->actor, rnn, other_y, dyt, NULL, NULL, NULL, NULL, w, dxt, NULL,
                                               NULL, NULL, store_result, &res);
    g_assert_false (atomr_cudnn_actor_rnn_backward_data_finish (f->actor, wait (&res), &error));
    g_object_unref (res);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "reserve space"));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/gpu-cudnn-rnn/%s", cases[i].name);
      g_test_add (path, Fixture, &cases[i], fixture_setup, test_rnn, fixture_teardown);
    }
  return g_test_run ();
}
