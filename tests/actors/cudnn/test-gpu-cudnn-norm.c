/* test-gpu-cudnn-norm.c — layer, RMS, group and instance normalization
 * (and, further down, LRN and dropout) against CPU references
 *
 * Inputs are random and rounded to the dtype; references are computed in
 * double from exactly those values.  Error measure: ‖got − ref‖₂ / ‖ref‖₂.
 * Bounds: 1e-5 f32, 1e-12 f64, 5e-3 f16, 2e-2 bf16.  Operands use
 * different layouts (x channels-last or permuted, y and dx packed, dy
 * channels-last) so the kernels' stride handling is exercised.  Backward
 * passes take the statistics the device's training pass saved and are
 * compared with the analytic gradients.  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "cudnn-test-util.h"

typedef struct {
  const gchar   *name;
  AtomrNormMode  mode;
  AtomrDtype     dtype;
  guint          n_dims;
  gint64         shape[5];
  guint          axis_or_groups;
  gboolean       strided;     /* x stored channels-last (a permuted view) */
  gboolean       affine;
} NormCase;

static const NormCase norm_cases[] = {
  { "layer-f32", ATOMR_NORM_LAYER, ATOMR_DTYPE_F32, 3, { 4, 6, 96 }, 2, FALSE, TRUE },
  { "layer-f32-strided-axis1", ATOMR_NORM_LAYER, ATOMR_DTYPE_F32, 4, { 3, 5, 4, 7 }, 1, TRUE, TRUE },
  { "layer-bf16-strided", ATOMR_NORM_LAYER, ATOMR_DTYPE_BF16, 4, { 2, 3, 4, 16 }, 2, TRUE, TRUE },
  { "layer-f16-no-affine", ATOMR_NORM_LAYER, ATOMR_DTYPE_F16, 2, { 8, 1000 }, 1, FALSE, FALSE },
  { "rms-f32", ATOMR_NORM_RMS, ATOMR_DTYPE_F32, 3, { 2, 5, 300 }, 2, FALSE, TRUE },
  { "rms-f16", ATOMR_NORM_RMS, ATOMR_DTYPE_F16, 2, { 16, 128 }, 1, FALSE, TRUE },
  { "rms-f64-strided", ATOMR_NORM_RMS, ATOMR_DTYPE_F64, 4, { 2, 6, 3, 3 }, 1, TRUE, TRUE },
  { "group-f32-nhwc", ATOMR_NORM_GROUP, ATOMR_DTYPE_F32, 4, { 2, 8, 5, 5 }, 4, TRUE, TRUE },
  { "group-bf16", ATOMR_NORM_GROUP, ATOMR_DTYPE_BF16, 4, { 3, 6, 4, 4 }, 2, FALSE, TRUE },
  { "group-f16-3d", ATOMR_NORM_GROUP, ATOMR_DTYPE_F16, 5, { 2, 4, 3, 4, 5 }, 2, TRUE, TRUE },
  { "instance-f64", ATOMR_NORM_INSTANCE, ATOMR_DTYPE_F64, 4, { 2, 4, 3, 3 }, 0, FALSE, TRUE },
  { "instance-f32-nhwc", ATOMR_NORM_INSTANCE, ATOMR_DTYPE_F32, 4, { 3, 5, 6, 6 }, 0, TRUE, FALSE },
};

/* The row (statistics index) and parameter index of a logical index. */
static void
row_and_param (const NormCase *nc, const gint64 *idx, gint64 *row, gint64 *param)
{
  if (nc->mode == ATOMR_NORM_LAYER || nc->mode == ATOMR_NORM_RMS)
    {
      gint64 r = 0, p = 0;
      for (guint d = 0; d < nc->n_dims; d++)
        {
          if (d < nc->axis_or_groups)
            r = r * nc->shape[d] + idx[d];
          else
            p = p * nc->shape[d] + idx[d];
        }
      *row = r;
      *param = p;
    }
  else
    {
      gint64 c = nc->shape[1];
      gint64 groups = nc->mode == ATOMR_NORM_INSTANCE ? c : nc->axis_or_groups;
      *row = idx[0] * groups + idx[1] / (c / groups);
      *param = idx[1];
    }
}

static void
next_index (const NormCase *nc, gint64 *idx)
{
  for (gint d = (gint) nc->n_dims - 1; d >= 0; d--)
    {
      if (++idx[d] < nc->shape[d])
        return;
      idx[d] = 0;
    }
}

static gdouble
norm_tolerance (AtomrDtype dtype)
{
  return tolerance (dtype, TRUE);
}

static void
test_norm (Fixture *f, gconstpointer data)
{
  const NormCase *nc = data;
  AtomrDtype dt = nc->dtype, st = dt == ATOMR_DTYPE_F64 ? dt : ATOMR_DTYPE_F32;
  gboolean rms = nc->mode == ATOMR_NORM_RMS;
  gdouble eps = 1e-5, tol = norm_tolerance (dt);
  gint64 total = 1, rows, n_param;
  g_autoptr(AtomrNormalization) norm = atomr_normalization_new (nc->mode, eps);
  Operand x, y, yi, dy, dx, sc, bi, mean, rstd, dsc, dbi;
  g_autofree gdouble *rmean = NULL, *rrstd = NULL, *cnt = NULL, *ry = NULL, *rdx = NULL;
  g_autofree gdouble *rdsc = NULL, *rdbi = NULL, *s1 = NULL, *s2 = NULL;
  gint64 idx[5];
  gdouble e;

  SKIP_WITHOUT_DEVICE (f);

  for (guint d = 0; d < nc->n_dims; d++)
    total *= nc->shape[d];
  if (nc->mode == ATOMR_NORM_LAYER || nc->mode == ATOMR_NORM_RMS)
    {
      rows = 1;
      for (guint d = 0; d < nc->axis_or_groups; d++)
        rows *= nc->shape[d];
      n_param = total / rows;
      atomr_normalization_set_axis (norm, nc->axis_or_groups);
    }
  else
    {
      gint64 groups = nc->mode == ATOMR_NORM_INSTANCE ? nc->shape[1] : nc->axis_or_groups;
      rows = nc->shape[0] * groups;
      n_param = nc->shape[1];
      if (nc->mode == ATOMR_NORM_GROUP)
        atomr_normalization_set_groups (norm, nc->axis_or_groups);
    }

  operand_init (f, &x, dt, nc->shape, nc->n_dims, nc->strided, TRUE);
  /* an offset keeps the mean away from 0: the mean matters */
  operand_init (f, &y, dt, nc->shape, nc->n_dims, FALSE, FALSE);
  operand_init (f, &yi, dt, nc->shape, nc->n_dims, TRUE, FALSE);
  operand_init (f, &dy, dt, nc->shape, nc->n_dims, TRUE, TRUE);
  operand_init (f, &dx, dt, nc->shape, nc->n_dims, FALSE, FALSE);
  operand_init (f, &sc, dt, &n_param, 1, FALSE, TRUE);
  operand_init (f, &bi, dt, &n_param, 1, FALSE, TRUE);
  operand_init (f, &mean, st, &rows, 1, FALSE, FALSE);
  operand_init (f, &rstd, st, &rows, 1, FALSE, FALSE);
  operand_init (f, &dsc, dt, &n_param, 1, FALSE, FALSE);
  operand_init (f, &dbi, dt, &n_param, 1, FALSE, FALSE);

  /* reference statistics (biased variance; RMS: mean square) */
  rmean = g_new0 (gdouble, rows);
  rrstd = g_new0 (gdouble, rows);
  cnt = g_new0 (gdouble, rows);
  memset (idx, 0, sizeof idx);
  for (gint64 i = 0; i < total; i++, next_index (nc, idx))
    {
      gint64 r, p;
      row_and_param (nc, idx, &r, &p);
      if (!rms)
        rmean[r] += x.host[at (&x, idx)];
      cnt[r] += 1;
    }
  for (gint64 r = 0; r < rows; r++)
    rmean[r] /= cnt[r];
  memset (idx, 0, sizeof idx);
  for (gint64 i = 0; i < total; i++, next_index (nc, idx))
    {
      gint64 r, p;
      gdouble d;
      row_and_param (nc, idx, &r, &p);
      d = x.host[at (&x, idx)] - rmean[r];
      rrstd[r] += d * d;
    }
  for (gint64 r = 0; r < rows; r++)
    rrstd[r] = 1.0 / sqrt (rrstd[r] / cnt[r] + eps);

  /* y, and dx, dγ, dβ */
  ry = g_new0 (gdouble, total);
  rdx = g_new0 (gdouble, total);
  rdsc = g_new0 (gdouble, n_param);
  rdbi = g_new0 (gdouble, n_param);
  s1 = g_new0 (gdouble, rows);
  s2 = g_new0 (gdouble, rows);
  memset (idx, 0, sizeof idx);
  for (gint64 i = 0; i < total; i++, next_index (nc, idx))
    {
      gint64 r, p;
      gdouble xh, g, gamma, beta;
      row_and_param (nc, idx, &r, &p);
      gamma = nc->affine ? sc.host[p] : 1.0;
      beta = nc->affine ? bi.host[p] : 0.0;
      xh = (x.host[at (&x, idx)] - rmean[r]) * rrstd[r];
      ry[at (&y, idx)] = xh * gamma + beta;
      g = dy.host[at (&dy, idx)] * gamma;
      s1[r] += g;
      s2[r] += g * xh;
      rdsc[p] += dy.host[at (&dy, idx)] * xh;
      rdbi[p] += dy.host[at (&dy, idx)];
    }
  memset (idx, 0, sizeof idx);
  for (gint64 i = 0; i < total; i++, next_index (nc, idx))
    {
      gint64 r, p;
      gdouble xh, g, gamma;
      row_and_param (nc, idx, &r, &p);
      gamma = nc->affine ? sc.host[p] : 1.0;
      xh = (x.host[at (&x, idx)] - rmean[r]) * rrstd[r];
      g = dy.host[at (&dy, idx)] * gamma;
      rdx[at (&dx, idx)] = rrstd[r] * (g - (rms ? 0.0 : s1[r] / cnt[r]) - xh * s2[r] / cnt[r]);
    }

  /* training forward */
  RUN (atomr_cudnn_actor_normalization_forward_async (f->actor, norm, x.view,
                                                      nc->affine ? sc.view : NULL,
                                                      nc->affine ? bi.view : NULL, y.view,
                                                      rms ? NULL : mean.view, rstd.view,
                                                      NULL, store_result, &res_),
       atomr_cudnn_actor_normalization_forward_finish);
  e = rel_error (&y, ry);
  g_test_message ("%s: y %.3g", nc->name, e);
  g_assert_cmpfloat (e, <=, tol);
  if (!rms)
    {
      /* a row mean is near 0: compare against the spread as well */
      g_autofree gdouble *got = g_new0 (gdouble, rows);
      gdouble err = 0;
      operand_download (&mean, got);
      for (gint64 r = 0; r < rows; r++)
        err = MAX (err, fabs (got[r] - rmean[r]));
      g_test_message ("%s: mean max abs error %.3g", nc->name, err);
      g_assert_cmpfloat (err, <=, st == ATOMR_DTYPE_F64 ? 1e-12 : 1e-5);
    }
  e = rel_error (&rstd, rrstd);
  g_test_message ("%s: inv_std %.3g", nc->name, e);
  g_assert_cmpfloat (e, <=, st == ATOMR_DTYPE_F64 ? 1e-12 : 1e-5);

  /* inference forward: same y, into a channels-last view */
  RUN (atomr_cudnn_actor_normalization_forward_async (f->actor, norm, x.view,
                                                      nc->affine ? sc.view : NULL,
                                                      nc->affine ? bi.view : NULL, yi.view, NULL, NULL,
                                                      NULL, store_result, &res_),
       atomr_cudnn_actor_normalization_forward_finish);
  {
    g_autofree gdouble *ryi = g_new0 (gdouble, total);
    memset (idx, 0, sizeof idx);
    for (gint64 i = 0; i < total; i++, next_index (nc, idx))
      ryi[at (&yi, idx)] = ry[at (&y, idx)];
    e = rel_error (&yi, ryi);
    g_test_message ("%s: inference y %.3g", nc->name, e);
    g_assert_cmpfloat (e, <=, tol);
  }

  /* backward from the saved statistics */
  RUN (atomr_cudnn_actor_normalization_backward_async (f->actor, norm, x.view, dy.view,
                                                       nc->affine ? sc.view : NULL,
                                                       rms ? NULL : mean.view, rstd.view, dx.view,
                                                       dsc.view, dbi.view, NULL, store_result, &res_),
       atomr_cudnn_actor_normalization_backward_finish);
  e = rel_error (&dx, rdx);
  g_test_message ("%s: dx %.3g", nc->name, e);
  g_assert_cmpfloat (e, <=, tol);
  e = rel_error (&dsc, rdsc);
  g_test_message ("%s: dscale %.3g", nc->name, e);
  g_assert_cmpfloat (e, <=, tol);
  e = rel_error (&dbi, rdbi);
  g_test_message ("%s: dbias %.3g", nc->name, e);
  g_assert_cmpfloat (e, <=, tol);

  /* the same inputs give the same bits */
  {
    g_autofree gdouble *first = g_new0 (gdouble, n_param), *again = g_new0 (gdouble, n_param);
    operand_download (&dsc, first);
    RUN (atomr_cudnn_actor_normalization_backward_async (f->actor, norm, x.view, dy.view,
                                                         nc->affine ? sc.view : NULL,
                                                         rms ? NULL : mean.view, rstd.view, dx.view,
                                                         dsc.view, dbi.view, NULL, store_result, &res_),
         atomr_cudnn_actor_normalization_backward_finish);
    operand_download (&dsc, again);
    g_assert_cmpmem (first, n_param * sizeof (gdouble), again, n_param * sizeof (gdouble));
  }

  operand_clear (&x); operand_clear (&y); operand_clear (&yi); operand_clear (&dy);
  operand_clear (&dx); operand_clear (&sc); operand_clear (&bi); operand_clear (&mean);
  operand_clear (&rstd); operand_clear (&dsc); operand_clear (&dbi);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (norm_cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/gpu-cudnn-norm/norm/%s", norm_cases[i].name);
      g_test_add (path, Fixture, &norm_cases[i], fixture_setup, test_norm, fixture_teardown);
    }
  return g_test_run ();
}
