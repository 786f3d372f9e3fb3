/* test-gpu-cudnn-graph.c — AtomrCudnnGraph on a GPU
 *
 * conv → + bias → ReLU (f16 NHWC, f32 virtual intermediates) through
 * atomr_cudnn_actor_execute_graph_async(), compared with a CPU reference
 * and with the actor's fused convolution-bias-activation operation;
 * convolution backward data and backward filter graphs against the actor's
 * own operations; matmul → + bias → GELU (f16, batched) against a CPU
 * reference; layer and RMS norm graphs against a CPU reference; training
 * layer / RMS norm (y and the saved statistics) and their backward nodes
 * (dx, dγ, dβ), batch norm training with running statistics and its
 * backward node, all against double-precision CPU references; the plan
 * cache: running a graph again is a hit, a new shape a miss; and the
 * autotuned plan of a new shape gives the same result.  Skips without a
 * device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "cudnn-test-util.h"

static guint64
counter (Fixture *f, const gchar *name)
{
  guint64 v = 0;

  g_object_get (f->actor, name, &v, NULL);
  return v;
}

static guint
cache_size (Fixture *f)
{
  guint v = 0;

  g_object_get (f->actor, "cache-size", &v, NULL);
  return v;
}

/* A K-element bias as a 1 × K × 1 × 1 view of the same buffer in NHWC
 * order (strides K, 1, K, K, as cuDNN's own samples describe it). */
static AtomrTensor *
bias_nhwc (Operand *b)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { 1, 1, 1, (gint64) b->n };
  const guint perm[4] = { 0, 3, 1, 2 };
  g_autoptr(AtomrTensor) storage = atomr_tensor_new (b->buffer, shape, 4, &error);
  AtomrTensor *t;

  g_assert_no_error (error);
  t = atomr_tensor_permute (storage, perm, 4, &error);
  g_assert_no_error (error);
  return t;
}

/* A N-element bias as a 1 × 1 × N view. */
static AtomrTensor *
bias_rows (Operand *b)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[3] = { 1, 1, (gint64) b->n };
  AtomrTensor *t = atomr_tensor_new (b->buffer, shape, 3, &error);

  g_assert_no_error (error);
  return t;
}

/* ------------------------------------------------------------------ */
/* conv + bias + relu                                                   */

typedef struct {
  Operand      x, w, b, y, y_fused;
  AtomrTensor *b4;
  gdouble     *ref;     /* y's storage order */
  gint64       hw;
} ConvRun;

static AtomrCudnnGraph *
conv_graph (ConvRun *cr, AtomrConvolution *conv)
{
  g_autoptr(GError) error = NULL;
  AtomrCudnnGraph *g = atomr_cudnn_graph_new ("conv-bias-relu");
  guint x, w, b, c, cb, y;

  x = atomr_cudnn_graph_add_tensor (g, "x", cr->x.view, &error);
  w = atomr_cudnn_graph_add_tensor (g, "w", cr->w.view, &error);
  b = atomr_cudnn_graph_add_tensor (g, "b", cr->b4, &error);
  y = atomr_cudnn_graph_add_tensor (g, "y", cr->y.view, &error);
  c = atomr_cudnn_graph_add_tensor_full (g, "conv", ATOMR_DTYPE_F32, cr->y.shape, 4, cr->y.strides, 4, TRUE,
                                         &error);
  cb = atomr_cudnn_graph_add_tensor_full (g, "biased", ATOMR_DTYPE_F32, cr->y.shape, 4, cr->y.strides, 4, TRUE,
                                          &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w, c, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_BIAS, c, b, cb, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, cb, 0, y, &error));
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  return g;
}

static void
conv_run_init (Fixture *f, ConvRun *cr, gint64 hw)
{
  const gint64 n = 2, c = 16, k = 32;
  const gint64 xs[4] = { n, c, hw, hw }, ws[4] = { k, c, 3, 3 }, ys[4] = { n, k, hw, hw };
  const AtomrDtype dt = ATOMR_DTYPE_F16;

  cr->hw = hw;
  operand_init (f, &cr->x, dt, xs, 4, TRUE, TRUE);
  operand_init (f, &cr->w, dt, ws, 4, TRUE, TRUE);
  operand_init (f, &cr->b, dt, &k, 1, FALSE, TRUE);
  operand_init (f, &cr->y, dt, ys, 4, TRUE, FALSE);
  operand_init (f, &cr->y_fused, dt, ys, 4, TRUE, FALSE);
  cr->b4 = bias_nhwc (&cr->b);
  cr->ref = g_new0 (gdouble, cr->y.n);
  for (gint64 in = 0; in < n; in++)
    for (gint64 ok = 0; ok < k; ok++)
      for (gint64 oh = 0; oh < hw; oh++)
        for (gint64 ow = 0; ow < hw; ow++)
          {
            gint64 yi[4] = { in, ok, oh, ow };
            gdouble acc = 0;
            for (gint64 ic = 0; ic < c; ic++)
              for (gint64 r = 0; r < 3; r++)
                for (gint64 q = 0; q < 3; q++)
                  {
                    gint64 h = oh - 1 + r, ww = ow - 1 + q;
                    gint64 xi[4] = { in, ic, h, ww }, wi[4] = { ok, ic, r, q };
                    if (h < 0 || h >= hw || ww < 0 || ww >= hw)
                      continue;
                    acc += cr->x.host[at (&cr->x, xi)] * cr->w.host[at (&cr->w, wi)];
                  }
            cr->ref[at (&cr->y, yi)] = MAX (acc + cr->b.host[ok], 0.0);
          }
}

static void
conv_run_clear (ConvRun *cr)
{
  operand_clear (&cr->x);
  operand_clear (&cr->w);
  operand_clear (&cr->b);
  operand_clear (&cr->y);
  operand_clear (&cr->y_fused);
  g_clear_object (&cr->b4);
  g_clear_pointer (&cr->ref, g_free);
}

static void
execute (Fixture *f, AtomrCudnnGraph *g, const guint *ids, AtomrTensor **views, guint n)
{
  RUN (atomr_cudnn_actor_execute_graph_async (f->actor, g, ids, views, n, NULL, store_result, &res_),
       atomr_cudnn_actor_execute_graph_finish);
}

static void
execute_conv (Fixture *f, ConvRun *cr, AtomrCudnnGraph *g)
{
  const guint ids[4] = {
    atomr_cudnn_graph_lookup_tensor (g, "x"), atomr_cudnn_graph_lookup_tensor (g, "w"),
    atomr_cudnn_graph_lookup_tensor (g, "b"), atomr_cudnn_graph_lookup_tensor (g, "y"),
  };
  AtomrTensor *views[4] = { cr->x.view, cr->w.view, cr->b4, cr->y.view };

  execute (f, g, ids, views, 4);
}

static void
test_conv_bias_relu (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrCudnnGraph) g = NULL;
  g_autofree gdouble *fused = NULL;
  ConvRun cr;
  gdouble e, e_fused;

  SKIP_WITHOUT_DEVICE (f);
  conv_run_init (f, &cr, 7);
  g = conv_graph (&cr, conv);
  execute_conv (f, &cr, g);
  e = rel_error (&cr.y, cr.ref);

  /* the actor's fused operation on the same operands */
  RUN (atomr_cudnn_actor_convolution_bias_activation_forward_async (f->actor, conv, ATOMR_ACTIVATION_RELU, 0.0,
                                                                    1.0, cr.x.view, cr.w.view, cr.b.view, 0.0,
                                                                    NULL, cr.y_fused.view, NULL, store_result,
                                                                    &res_),
       atomr_cudnn_actor_convolution_bias_activation_forward_finish);
  fused = g_new0 (gdouble, cr.y_fused.n);
  operand_download (&cr.y_fused, fused);
  e_fused = rel_error (&cr.y, fused);
  g_test_message ("graph conv-bias-relu f16 NHWC: vs CPU %.3g, vs the fused operation %.3g", e, e_fused);
  g_assert_cmpfloat (e, <=, tolerance (ATOMR_DTYPE_F16, FALSE));
  g_assert_cmpfloat (e_fused, <=, tolerance (ATOMR_DTYPE_F16, FALSE));
  conv_run_clear (&cr);
}

/* ------------------------------------------------------------------ */
/* backward data and backward filter, against the actor's own operations */

static void
test_conv_backward (Fixture *f, gconstpointer data)
{
  const gint64 n = 2, c = 16, k = 32, hw = 7;
  const gint64 xs[4] = { n, c, hw, hw }, ws[4] = { k, c, 3, 3 }, ys[4] = { n, k, hw, hw };
  const AtomrDtype dt = ATOMR_DTYPE_F16;
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrCudnnGraph) gd = atomr_cudnn_graph_new ("conv-bwd-data");
  g_autoptr(AtomrCudnnGraph) gf = atomr_cudnn_graph_new ("conv-bwd-filter");
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *ref_dx = NULL, *ref_dw = NULL;
  Operand x, w, dy, dx, dx_op, dw, dw_op;
  guint idy, iw, idx, ix, idy2, idw;
  gdouble e_dx, e_dw;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &x, dt, xs, 4, TRUE, TRUE);
  operand_init (f, &w, dt, ws, 4, TRUE, TRUE);
  operand_init (f, &dy, dt, ys, 4, TRUE, TRUE);
  operand_init (f, &dx, dt, xs, 4, TRUE, FALSE);
  operand_init (f, &dx_op, dt, xs, 4, TRUE, FALSE);
  operand_init (f, &dw, dt, ws, 4, TRUE, FALSE);
  operand_init (f, &dw_op, dt, ws, 4, TRUE, FALSE);

  idy = atomr_cudnn_graph_add_tensor (gd, "dy", dy.view, &error);
  iw = atomr_cudnn_graph_add_tensor (gd, "w", w.view, &error);
  idx = atomr_cudnn_graph_add_tensor (gd, "dx", dx.view, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_convolution (gd, ATOMR_CUDNN_CONV_BACKWARD_DATA, conv, idy, iw, idx, &error));
  g_assert_true (atomr_cudnn_graph_finalize (gd, &error));
  g_assert_no_error (error);
  ix = atomr_cudnn_graph_add_tensor (gf, "x", x.view, &error);
  idy2 = atomr_cudnn_graph_add_tensor (gf, "dy", dy.view, &error);
  idw = atomr_cudnn_graph_add_tensor (gf, "dw", dw.view, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_convolution (gf, ATOMR_CUDNN_CONV_BACKWARD_FILTER, conv, ix, idy2, idw,
                                                    &error));
  g_assert_true (atomr_cudnn_graph_finalize (gf, &error));
  g_assert_no_error (error);
  {
    const guint ids[3] = { idy, iw, idx };
    AtomrTensor *views[3] = { dy.view, w.view, dx.view };
    execute (f, gd, ids, views, 3);
  }
  {
    const guint ids[3] = { ix, idy2, idw };
    AtomrTensor *views[3] = { x.view, dy.view, dw.view };
    execute (f, gf, ids, views, 3);
  }
  RUN (atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w.view, dy.view, 0.0, dx_op.view,
                                                          NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_backward_data_finish);
  RUN (atomr_cudnn_actor_convolution_backward_filter_async (f->actor, conv, 1.0, x.view, dy.view, 0.0,
                                                            dw_op.view, NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_backward_filter_finish);
  ref_dx = g_new0 (gdouble, dx_op.n);
  ref_dw = g_new0 (gdouble, dw_op.n);
  operand_download (&dx_op, ref_dx);
  operand_download (&dw_op, ref_dw);
  e_dx = rel_error (&dx, ref_dx);
  e_dw = rel_error (&dw, ref_dw);
  g_test_message ("graph conv backward f16 NHWC vs the actor's operations: dx %.3g, dw %.3g", e_dx, e_dw);
  g_assert_cmpfloat (e_dx, <=, tolerance (dt, FALSE));
  g_assert_cmpfloat (e_dw, <=, tolerance (dt, FALSE));
  operand_clear (&x); operand_clear (&w); operand_clear (&dy); operand_clear (&dx);
  operand_clear (&dx_op); operand_clear (&dw); operand_clear (&dw_op);
}

/* ------------------------------------------------------------------ */
/* matmul + bias + gelu                                                 */

static void
test_matmul_bias_gelu (Fixture *f, gconstpointer data)
{
  const gint64 bt = 2, m = 64, kk = 32, nn = 48;
  const gint64 as[3] = { bt, m, kk }, bs[3] = { bt, kk, nn }, cs[3] = { bt, m, nn };
  const AtomrDtype dt = ATOMR_DTYPE_F16;
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("matmul-bias-gelu");
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) bias3 = NULL;
  g_autofree gdouble *ref = NULL;
  Operand a, b, bias, y;
  guint ia, ib, ibias, iy, ic, icb;
  gdouble e;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &a, dt, as, 3, FALSE, TRUE);
  operand_init (f, &b, dt, bs, 3, FALSE, TRUE);
  operand_init (f, &bias, dt, &nn, 1, FALSE, TRUE);
  operand_init (f, &y, dt, cs, 3, FALSE, FALSE);
  bias3 = bias_rows (&bias);

  ia = atomr_cudnn_graph_add_tensor (g, "a", a.view, &error);
  ib = atomr_cudnn_graph_add_tensor (g, "b", b.view, &error);
  ibias = atomr_cudnn_graph_add_tensor (g, "bias", bias3, &error);
  iy = atomr_cudnn_graph_add_tensor (g, "y", y.view, &error);
  ic = atomr_cudnn_graph_add_tensor_full (g, "c", ATOMR_DTYPE_F32, cs, 3, NULL, 0, TRUE, &error);
  icb = atomr_cudnn_graph_add_tensor_full (g, "cb", ATOMR_DTYPE_F32, cs, 3, NULL, 0, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_matmul (g, ia, ib, ic, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_BIAS, ic, ibias, icb, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_GELU, icb, 0, iy, &error));
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  {
    const guint ids[4] = { ia, ib, ibias, iy };
    AtomrTensor *views[4] = { a.view, b.view, bias3, y.view };
    execute (f, g, ids, views, 4);
  }

  ref = g_new0 (gdouble, y.n);
  for (gint64 p = 0; p < bt; p++)
    for (gint64 i = 0; i < m; i++)
      for (gint64 j = 0; j < nn; j++)
        {
          gdouble acc = bias.host[j];
          for (gint64 q = 0; q < kk; q++)
            acc += a.host[(p * m + i) * kk + q] * b.host[(p * kk + q) * nn + j];
          ref[(p * m + i) * nn + j] = 0.5 * acc * (1.0 + erf (acc / G_SQRT2));
        }
  e = rel_error (&y, ref);
  g_test_message ("graph matmul-bias-gelu f16: vs CPU %.3g", e);
  g_assert_cmpfloat (e, <=, 1e-2);
  operand_clear (&a);
  operand_clear (&b);
  operand_clear (&bias);
  operand_clear (&y);
}

/* ------------------------------------------------------------------ */
/* layer norm and RMS norm (inference)                                  */

static void
test_norm (Fixture *f, gconstpointer data)
{
  const gint64 rows = 64, cols = 128;
  const gint64 xs[4] = { rows, cols, 1, 1 }, ps[4] = { 1, cols, 1, 1 };
  const AtomrDtype dt = ATOMR_DTYPE_F32;
  const gdouble eps = 1e-5;

  SKIP_WITHOUT_DEVICE (f);
  for (guint m = 0; m < 2; m++)
    {
      AtomrCudnnNorm mode = m == 0 ? ATOMR_CUDNN_NORM_LAYER : ATOMR_CUDNN_NORM_RMS;
      g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new (m == 0 ? "layer-norm" : "rms-norm");
      g_autoptr(GError) error = NULL;
      g_autofree gdouble *ref = NULL;
      Operand x, gamma, beta, y;
      guint ix, ig, ib = 0, iy;
      gdouble e;

      /* channels-last views, as cuDNN's own samples lay out a norm's
       * operands (strides cols, 1, cols, cols; the storage is row-major
       * rows × cols either way) */
      operand_init (f, &x, dt, xs, 4, TRUE, TRUE);
      operand_init (f, &gamma, dt, ps, 4, TRUE, TRUE);
      operand_init (f, &beta, dt, ps, 4, TRUE, TRUE);
      operand_init (f, &y, dt, xs, 4, TRUE, FALSE);
      ix = atomr_cudnn_graph_add_tensor (g, "x", x.view, &error);
      ig = atomr_cudnn_graph_add_tensor (g, "gamma", gamma.view, &error);
      if (mode == ATOMR_CUDNN_NORM_LAYER)
        ib = atomr_cudnn_graph_add_tensor (g, "beta", beta.view, &error);
      iy = atomr_cudnn_graph_add_tensor (g, "y", y.view, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_graph_add_norm (g, mode, ix, ig, ib, eps, iy, &error));
      g_assert_true (atomr_cudnn_graph_finalize (g, &error));
      g_assert_no_error (error);
      if (mode == ATOMR_CUDNN_NORM_LAYER)
        {
          const guint ids[4] = { ix, ig, ib, iy };
          AtomrTensor *views[4] = { x.view, gamma.view, beta.view, y.view };
          execute (f, g, ids, views, 4);
        }
      else
        {
          const guint ids[3] = { ix, ig, iy };
          AtomrTensor *views[3] = { x.view, gamma.view, y.view };
          execute (f, g, ids, views, 3);
        }
      ref = g_new0 (gdouble, y.n);
      for (gint64 r = 0; r < rows; r++)
        {
          const gdouble *row = x.host + r * cols;
          gdouble mean = 0, var = 0;
          for (gint64 c = 0; c < cols; c++)
            mean += row[c];
          mean /= cols;
          if (mode == ATOMR_CUDNN_NORM_RMS)
            mean = 0;
          for (gint64 c = 0; c < cols; c++)
            var += (row[c] - mean) * (row[c] - mean);
          var /= cols;
          for (gint64 c = 0; c < cols; c++)
            ref[r * cols + c] = (row[c] - mean) / sqrt (var + eps) * gamma.host[c] +
                                (mode == ATOMR_CUDNN_NORM_LAYER ? beta.host[c] : 0.0);
        }
      e = rel_error (&y, ref);
      g_test_message ("graph %s f32 %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT ": vs CPU %.3g",
                      atomr_cudnn_graph_get_name (g), rows, cols, e);
      g_assert_cmpfloat (e, <=, 1e-4);
      operand_clear (&x);
      operand_clear (&gamma);
      operand_clear (&beta);
      operand_clear (&y);
    }
}

/* ‖got − ref‖ / ‖ref‖ of @o against @ref, printed with @what; asserted
 * within @tol. */
static void
check (Operand *o, const gdouble *ref, const gchar *what, gdouble tol)
{
  gdouble e = rel_error (o, ref);

  g_test_message ("%s: relative error %.3g (bound %.1g)", what, e, tol);
  g_assert_cmpfloat (e, <=, tol);
}

/* Training layer / RMS norm over rows × cols (channels-last views as in
 * test_norm): a forward graph (y, saved mean and inverse variance), then a
 * backward graph fed the statistics the GPU saved (dx, dγ, dβ), each
 * output against the double-precision reference.  @data: the dtype of x,
 * y, dy, dx: f32 (parameters f32, bound 1e-4) or bf16 (parameters f32 as
 * cuDNN's samples have them; bound 2e-2 for the bf16 outputs, 1e-3 for
 * the f32 statistics and parameter gradients). */
static void
test_norm_training (Fixture *f, gconstpointer data)
{
  const gint64 rows = 64, cols = 128;
  const gint64 xs[4] = { rows, cols, 1, 1 }, ps[4] = { 1, cols, 1, 1 }, ss[4] = { rows, 1, 1, 1 };
  const AtomrDtype dt = GPOINTER_TO_INT (data), pdt = ATOMR_DTYPE_F32;
  const gdouble eps = 1e-5;
  const gdouble tol = dt == ATOMR_DTYPE_F32 ? 1e-4 : 2e-2, ftol = dt == ATOMR_DTYPE_F32 ? 1e-4 : 1e-3;

  SKIP_WITHOUT_DEVICE (f);
  for (guint m = 0; m < 2; m++)
    {
      gboolean rms = m == 1;
      AtomrCudnnNorm mode = rms ? ATOMR_CUDNN_NORM_RMS : ATOMR_CUDNN_NORM_LAYER;
      g_autofree gchar *fname = g_strdup_printf ("%s-norm-train-%s", rms ? "rms" : "layer", atomr_dtype_get_name (dt));
      g_autofree gchar *bname = g_strdup_printf ("%s-norm-bwd-%s", rms ? "rms" : "layer", atomr_dtype_get_name (dt));
      g_autoptr(AtomrCudnnGraph) fwd = atomr_cudnn_graph_new (fname);
      g_autoptr(AtomrCudnnGraph) bwd = atomr_cudnn_graph_new (bname);
      g_autoptr(GError) error = NULL;
      g_autofree gdouble *ry = g_new0 (gdouble, rows * cols), *rmean = g_new0 (gdouble, rows);
      g_autofree gdouble *riv = g_new0 (gdouble, rows), *rdx = g_new0 (gdouble, rows * cols);
      g_autofree gdouble *rdg = g_new0 (gdouble, cols), *rdb = g_new0 (gdouble, cols);
      Operand x, gamma, beta, y, mean, iv, dy, dx, dg, db;
      guint ix, ig, ib = 0, iy, im = 0, iiv;

      operand_init (f, &x, dt, xs, 4, TRUE, TRUE);
      operand_init (f, &gamma, pdt, ps, 4, TRUE, TRUE);
      operand_init (f, &beta, pdt, ps, 4, TRUE, TRUE);
      operand_init (f, &y, dt, xs, 4, TRUE, FALSE);
      operand_init (f, &mean, ATOMR_DTYPE_F32, ss, 4, TRUE, FALSE);
      operand_init (f, &iv, ATOMR_DTYPE_F32, ss, 4, TRUE, FALSE);
      operand_init (f, &dy, dt, xs, 4, TRUE, TRUE);
      operand_init (f, &dx, dt, xs, 4, TRUE, FALSE);
      operand_init (f, &dg, pdt, ps, 4, TRUE, FALSE);
      operand_init (f, &db, pdt, ps, 4, TRUE, FALSE);

      ix = atomr_cudnn_graph_add_tensor (fwd, "x", x.view, &error);
      ig = atomr_cudnn_graph_add_tensor (fwd, "gamma", gamma.view, &error);
      if (!rms)
        {
          ib = atomr_cudnn_graph_add_tensor (fwd, "beta", beta.view, &error);
          im = atomr_cudnn_graph_add_tensor (fwd, "mean", mean.view, &error);
        }
      iy = atomr_cudnn_graph_add_tensor (fwd, "y", y.view, &error);
      iiv = atomr_cudnn_graph_add_tensor (fwd, "inv-var", iv.view, &error);
      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_graph_add_norm_training (fwd, mode, ix, ig, ib, eps, iy, im, iiv, &error));
      g_assert_true (atomr_cudnn_graph_finalize (fwd, &error));
      g_assert_no_error (error);
      {
        const guint ids[6] = { ix, ig, iy, iiv, ib, im };
        AtomrTensor *views[6] = { x.view, gamma.view, y.view, iv.view, beta.view, mean.view };
        execute (f, fwd, ids, views, rms ? 4 : 6);
      }

      /* the reference, row by row (storage is row-major rows × cols) */
      for (gint64 r = 0; r < rows; r++)
        {
          const gdouble *row = x.host + r * cols, *g = dy.host + r * cols;
          gdouble mu = 0, var = 0, inv, a = 0, b = 0;
          for (gint64 c = 0; c < cols; c++)
            mu += row[c];
          mu = rms ? 0 : mu / cols;
          for (gint64 c = 0; c < cols; c++)
            var += (row[c] - mu) * (row[c] - mu);
          var /= cols;
          inv = 1 / sqrt (var + eps);
          rmean[r] = mu;
          riv[r] = inv;
          for (gint64 c = 0; c < cols; c++)
            {
              gdouble xhat = (row[c] - mu) * inv, dxhat = g[c] * gamma.host[c];
              ry[r * cols + c] = xhat * gamma.host[c] + (rms ? 0 : beta.host[c]);
              rdg[c] += g[c] * xhat;
              rdb[c] += g[c];
              a += dxhat;
              b += dxhat * xhat;
            }
          a = rms ? 0 : a / cols;
          b /= cols;
          for (gint64 c = 0; c < cols; c++)
            {
              gdouble xhat = (row[c] - mu) * inv, dxhat = g[c] * gamma.host[c];
              rdx[r * cols + c] = inv * (dxhat - a - xhat * b);
            }
        }
      check (&y, ry, fname, tol);
      if (!rms)
        check (&mean, rmean, "  saved mean", ftol);
      check (&iv, riv, "  saved inv_variance", ftol);

      ix = atomr_cudnn_graph_add_tensor (bwd, "x", x.view, &error);
      {
        guint idy = atomr_cudnn_graph_add_tensor (bwd, "dy", dy.view, &error);
        guint ig2 = atomr_cudnn_graph_add_tensor (bwd, "gamma", gamma.view, &error);
        guint im2 = rms ? 0 : atomr_cudnn_graph_add_tensor (bwd, "mean", mean.view, &error);
        guint iiv2 = atomr_cudnn_graph_add_tensor (bwd, "inv-var", iv.view, &error);
        guint idx = atomr_cudnn_graph_add_tensor (bwd, "dx", dx.view, &error);
        guint idg = atomr_cudnn_graph_add_tensor (bwd, "dgamma", dg.view, &error);
        guint idb = rms ? 0 : atomr_cudnn_graph_add_tensor (bwd, "dbeta", db.view, &error);
        const guint ids[8] = { ix, idy, ig2, iiv2, idx, idg, im2, idb };
        AtomrTensor *views[8] = { x.view, dy.view, gamma.view, iv.view, dx.view, dg.view, mean.view, db.view };

        g_assert_no_error (error);
        g_assert_true (atomr_cudnn_graph_add_norm_backward (bwd, mode, ix, idy, ig2, im2, iiv2, idx, idg, idb,
                                                            &error));
        g_assert_true (atomr_cudnn_graph_finalize (bwd, &error));
        g_assert_no_error (error);
        execute (f, bwd, ids, views, rms ? 6 : 8);
      }
      check (&dx, rdx, bname, tol);
      check (&dg, rdg, "  dgamma", ftol);
      if (!rms)
        check (&db, rdb, "  dbeta", ftol);

      operand_clear (&x);
      operand_clear (&gamma);
      operand_clear (&beta);
      operand_clear (&y);
      operand_clear (&mean);
      operand_clear (&iv);
      operand_clear (&dy);
      operand_clear (&dx);
      operand_clear (&dg);
      operand_clear (&db);
    }
}

/* Batch norm training, NHWC 8 × 32 × 6 × 6 (@data: x's dtype, f32 or bf16;
 * parameters and statistics f32), with running statistics (momentum
 * 0.1), then its backward node from the saved statistics.  The
 * running variance is updated with the unbiased batch variance (PyTorch,
 * cuDNN's legacy call); the message also gives the error against the
 * biased one, so a failure says which cuDNN's engine used. */
static void
test_batch_norm_training (Fixture *f, gconstpointer data)
{
  const gint64 n = 8, c = 32, hw = 6, per = n * hw * hw;
  const gint64 xs[4] = { n, c, hw, hw }, ps[4] = { 1, c, 1, 1 };
  const AtomrDtype dt = GPOINTER_TO_INT (data), pdt = ATOMR_DTYPE_F32;
  const gdouble eps = 1e-5, momentum = 0.1;
  const gdouble tol = dt == ATOMR_DTYPE_F32 ? 1e-4 : 2e-2, ftol = dt == ATOMR_DTYPE_F32 ? 1e-4 : 1e-3;
  g_autofree gchar *fname = g_strdup_printf ("batch-norm-train-%s", atomr_dtype_get_name (dt));
  g_autofree gchar *bname = g_strdup_printf ("batch-norm-bwd-%s", atomr_dtype_get_name (dt));
  g_autoptr(AtomrCudnnGraph) fwd = atomr_cudnn_graph_new (fname);
  g_autoptr(AtomrCudnnGraph) bwd = atomr_cudnn_graph_new (bname);
  g_autoptr(GError) error = NULL;
  g_autofree gdouble *ry = NULL, *rdx = NULL;
  gdouble rmean[32], riv[32], rrm[32], rrv[32], rrv_biased[32], rdg[32] = { 0 }, rdb[32] = { 0 };
  Operand x, gamma, beta, y, mean, iv, rm, rv, nrm, nrv, dy, dx, dg, db;
  guint ix, ig, ib, iy, im, iiv, irm, irv, inrm, inrv;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &x, dt, xs, 4, TRUE, TRUE);
  operand_init (f, &gamma, pdt, ps, 4, TRUE, TRUE);
  operand_init (f, &beta, pdt, ps, 4, TRUE, TRUE);
  operand_init (f, &y, dt, xs, 4, TRUE, FALSE);
  operand_init (f, &mean, pdt, ps, 4, TRUE, FALSE);
  operand_init (f, &iv, pdt, ps, 4, TRUE, FALSE);
  operand_init (f, &rm, pdt, ps, 4, TRUE, TRUE);
  operand_init (f, &rv, pdt, ps, 4, TRUE, TRUE);
  operand_init (f, &nrm, pdt, ps, 4, TRUE, FALSE);
  operand_init (f, &nrv, pdt, ps, 4, TRUE, FALSE);
  operand_init (f, &dy, dt, xs, 4, TRUE, TRUE);
  operand_init (f, &dx, dt, xs, 4, TRUE, FALSE);
  operand_init (f, &dg, pdt, ps, 4, TRUE, FALSE);
  operand_init (f, &db, pdt, ps, 4, TRUE, FALSE);
  /* a variance is positive: take |random| */
  for (gsize i = 0; i < rv.n; i++)
    rv.host[i] = fabs (rv.host[i]) + 0.5;
  {
    g_autoptr(GBytes) bytes = pack (pdt, rv.host, rv.n);
    g_assert_true (atomr_buffer_upload_sync (rv.buffer, bytes, NULL, &error));
    g_assert_no_error (error);
  }

  ix = atomr_cudnn_graph_add_tensor (fwd, "x", x.view, &error);
  ig = atomr_cudnn_graph_add_tensor (fwd, "gamma", gamma.view, &error);
  ib = atomr_cudnn_graph_add_tensor (fwd, "beta", beta.view, &error);
  irm = atomr_cudnn_graph_add_tensor (fwd, "running-mean", rm.view, &error);
  irv = atomr_cudnn_graph_add_tensor (fwd, "running-var", rv.view, &error);
  iy = atomr_cudnn_graph_add_tensor (fwd, "y", y.view, &error);
  im = atomr_cudnn_graph_add_tensor (fwd, "mean", mean.view, &error);
  iiv = atomr_cudnn_graph_add_tensor (fwd, "inv-var", iv.view, &error);
  inrm = atomr_cudnn_graph_add_tensor (fwd, "next-running-mean", nrm.view, &error);
  inrv = atomr_cudnn_graph_add_tensor (fwd, "next-running-var", nrv.view, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_batch_norm_training (fwd, ix, ig, ib, eps, momentum, irm, irv, iy, im, iiv,
                                                            inrm, inrv, &error));
  g_assert_true (atomr_cudnn_graph_finalize (fwd, &error));
  g_assert_no_error (error);
  {
    const guint ids[10] = { ix, ig, ib, irm, irv, iy, im, iiv, inrm, inrv };
    AtomrTensor *views[10] = { x.view, gamma.view, beta.view, rm.view, rv.view, y.view, mean.view, iv.view,
                               nrm.view, nrv.view };
    execute (f, fwd, ids, views, 10);
  }

  /* the reference per channel; x's storage is NHWC: channel k of element
   * (b, h, w) at ((b·hw + h)·hw + w)·c + k */
  ry = g_new0 (gdouble, x.n);
  rdx = g_new0 (gdouble, x.n);
  for (gint64 k = 0; k < c; k++)
    {
      gdouble mu = 0, var = 0, inv;
      for (gint64 i = 0; i < per; i++)
        mu += x.host[i * c + k];
      mu /= per;
      for (gint64 i = 0; i < per; i++)
        var += (x.host[i * c + k] - mu) * (x.host[i * c + k] - mu);
      inv = 1 / sqrt (var / per + eps);
      rmean[k] = mu;
      riv[k] = inv;
      rrm[k] = (1 - momentum) * rm.host[k] + momentum * mu;
      rrv[k] = (1 - momentum) * rv.host[k] + momentum * var / (per - 1);
      rrv_biased[k] = (1 - momentum) * rv.host[k] + momentum * var / per;
      for (gint64 i = 0; i < per; i++)
        {
          gdouble xhat = (x.host[i * c + k] - mu) * inv;
          ry[i * c + k] = xhat * gamma.host[k] + beta.host[k];
          rdb[k] += dy.host[i * c + k];
          rdg[k] += dy.host[i * c + k] * xhat;
        }
      for (gint64 i = 0; i < per; i++)
        {
          gdouble xhat = (x.host[i * c + k] - mu) * inv;
          rdx[i * c + k] = gamma.host[k] * inv / per * (per * dy.host[i * c + k] - rdb[k] - xhat * rdg[k]);
        }
    }
  check (&y, ry, fname, tol);
  check (&mean, rmean, "  saved mean", ftol);
  check (&iv, riv, "  saved inv_variance", ftol);
  check (&nrm, rrm, "  next running mean", ftol);
  g_test_message ("  next running var against the biased-variance update: %.3g", rel_error (&nrv, rrv_biased));
  check (&nrv, rrv, "  next running var (unbiased update)", ftol);

  ix = atomr_cudnn_graph_add_tensor (bwd, "x", x.view, &error);
  {
    guint idy = atomr_cudnn_graph_add_tensor (bwd, "dy", dy.view, &error);
    guint ig2 = atomr_cudnn_graph_add_tensor (bwd, "gamma", gamma.view, &error);
    guint im2 = atomr_cudnn_graph_add_tensor (bwd, "mean", mean.view, &error);
    guint iiv2 = atomr_cudnn_graph_add_tensor (bwd, "inv-var", iv.view, &error);
    guint idx = atomr_cudnn_graph_add_tensor (bwd, "dx", dx.view, &error);
    guint idg = atomr_cudnn_graph_add_tensor (bwd, "dgamma", dg.view, &error);
    guint idb = atomr_cudnn_graph_add_tensor (bwd, "dbeta", db.view, &error);
    const guint ids[8] = { ix, idy, ig2, im2, iiv2, idx, idg, idb };
    AtomrTensor *views[8] = { x.view, dy.view, gamma.view, mean.view, iv.view, dx.view, dg.view, db.view };

    g_assert_no_error (error);
    g_assert_true (atomr_cudnn_graph_add_norm_backward (bwd, ATOMR_CUDNN_NORM_BATCH, ix, idy, ig2, im2, iiv2, idx,
                                                        idg, idb, &error));
    g_assert_true (atomr_cudnn_graph_finalize (bwd, &error));
    g_assert_no_error (error);
    execute (f, bwd, ids, views, 8);
  }
  check (&dx, rdx, bname, tol);
  check (&dg, rdg, "  dgamma", ftol);
  check (&db, rdb, "  dbeta", ftol);

  operand_clear (&x);
  operand_clear (&gamma);
  operand_clear (&beta);
  operand_clear (&y);
  operand_clear (&mean);
  operand_clear (&iv);
  operand_clear (&rm);
  operand_clear (&rv);
  operand_clear (&nrm);
  operand_clear (&nrv);
  operand_clear (&dy);
  operand_clear (&dx);
  operand_clear (&dg);
  operand_clear (&db);
}

/* ------------------------------------------------------------------ */
/* The plan cache                                                       */

static void
test_plan_cache (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  ConvRun cr, other, tuned;
  guint64 hits, misses;
  guint size;

  SKIP_WITHOUT_DEVICE (f);
  conv_run_init (f, &cr, 6);
  {
    g_autoptr(AtomrCudnnGraph) g = conv_graph (&cr, conv);
    g_autoptr(AtomrCudnnGraph) g_again = conv_graph (&cr, conv);

    misses = counter (f, "cache-misses");
    execute_conv (f, &cr, g);
    g_assert_cmpuint (counter (f, "cache-misses"), ==, misses + 1);
    hits = counter (f, "cache-hits");
    size = cache_size (f);
    /* the same graph again, and an equal graph built anew: hits */
    execute_conv (f, &cr, g);
    execute_conv (f, &cr, g_again);
    g_assert_cmpuint (counter (f, "cache-hits"), ==, hits + 2);
    g_assert_cmpuint (counter (f, "cache-misses"), ==, misses + 1);
    g_assert_cmpuint (cache_size (f), ==, size);
    g_assert_cmpfloat (rel_error (&cr.y, cr.ref), <=, tolerance (ATOMR_DTYPE_F16, FALSE));
  }
  /* a new shape: a miss and one more plan */
  conv_run_init (f, &other, 10);
  {
    g_autoptr(AtomrCudnnGraph) g = conv_graph (&other, conv);

    execute_conv (f, &other, g);
    g_assert_cmpuint (counter (f, "cache-misses"), ==, misses + 2);
    g_assert_cmpuint (cache_size (f), ==, size + 1);
    g_assert_cmpfloat (rel_error (&other.y, other.ref), <=, tolerance (ATOMR_DTYPE_F16, FALSE));
  }
  /* autotuned: a new shape, timed candidates, the same answer */
  atomr_cudnn_actor_set_autotune (f->actor, TRUE);
  conv_run_init (f, &tuned, 12);
  {
    g_autoptr(AtomrCudnnGraph) g = conv_graph (&tuned, conv);
    gdouble e;

    execute_conv (f, &tuned, g);
    execute_conv (f, &tuned, g);
    g_assert_cmpuint (counter (f, "cache-misses"), ==, misses + 3);
    e = rel_error (&tuned.y, tuned.ref);
    g_test_message ("autotuned graph conv-bias-relu: vs CPU %.3g", e);
    g_assert_cmpfloat (e, <=, tolerance (ATOMR_DTYPE_F16, FALSE));
  }
  atomr_cudnn_actor_set_autotune (f->actor, FALSE);
  conv_run_clear (&cr);
  conv_run_clear (&other);
  conv_run_clear (&tuned);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/gpu-cudnn-graph/conv-bias-relu", Fixture, NULL, fixture_setup, test_conv_bias_relu,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/conv-backward", Fixture, NULL, fixture_setup, test_conv_backward,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/matmul-bias-gelu", Fixture, NULL, fixture_setup, test_matmul_bias_gelu,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/norm", Fixture, NULL, fixture_setup, test_norm, fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/norm-training-f32", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_F32), fixture_setup,
              test_norm_training, fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/norm-training-bf16", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_BF16), fixture_setup,
              test_norm_training, fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/batch-norm-training-f32", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_F32),
              fixture_setup, test_batch_norm_training, fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/batch-norm-training-bf16", Fixture, GINT_TO_POINTER (ATOMR_DTYPE_BF16),
              fixture_setup, test_batch_norm_training, fixture_teardown);
  g_test_add ("/gpu-cudnn-graph/plan-cache", Fixture, NULL, fixture_setup, test_plan_cache,
              fixture_teardown);
  return g_test_run ();
}
