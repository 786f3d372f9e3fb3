/* test-gpu-cudnn-norm.c — layer, RMS, group and instance normalization
 * (and, further down, the fused convolution, 3-D pooling, LRN and dropout) against CPU references
 *
 * Inputs are random and rounded to the dtype; references are computed in
 * double from exactly those values.  Error measure: ‖got − ref‖₂ / ‖ref‖₂.
 * Bounds: 1e-5 f32, 1e-12 f64, 5e-3 f16, 2e-2 bf16.  Operands use
 * different layouts (x channels-last or permuted, y and dx packed, dy
 * channels-last) so the kernels' stride handling is exercised.  Backward
 * passes take the statistics the device's training pass saved and are
 * compared with the analytic gradients.  Packed 2-D cases (and 3-D ones
 * normalized over the last dimension) take the row fast path: vectorized
 * or not (odd m, unaligned views), register-cached or not (rows wider
 * than the tile).  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "cudnn-test-util.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"

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
  /* rows too wide for the forward kernel's shared-memory copy (> 32 KiB) */
  { "layer-f32-wide", ATOMR_NORM_LAYER, ATOMR_DTYPE_F32, 2, { 3, 10000 }, 1, FALSE, TRUE },
  { "rms-f64-wide", ATOMR_NORM_RMS, ATOMR_DTYPE_F64, 2, { 2, 5000 }, 1, FALSE, TRUE },
  { "rms-f32", ATOMR_NORM_RMS, ATOMR_DTYPE_F32, 3, { 2, 5, 300 }, 2, FALSE, TRUE },
  { "rms-f16", ATOMR_NORM_RMS, ATOMR_DTYPE_F16, 2, { 16, 128 }, 1, FALSE, TRUE },
  { "rms-f64-strided", ATOMR_NORM_RMS, ATOMR_DTYPE_F64, 4, { 2, 6, 3, 3 }, 1, TRUE, TRUE },
  { "group-f32-nhwc", ATOMR_NORM_GROUP, ATOMR_DTYPE_F32, 4, { 2, 8, 5, 5 }, 4, TRUE, TRUE },
  { "group-bf16", ATOMR_NORM_GROUP, ATOMR_DTYPE_BF16, 4, { 3, 6, 4, 4 }, 2, FALSE, TRUE },
  { "group-f16-3d", ATOMR_NORM_GROUP, ATOMR_DTYPE_F16, 5, { 2, 4, 3, 4, 5 }, 2, TRUE, TRUE },
  { "instance-f64", ATOMR_NORM_INSTANCE, ATOMR_DTYPE_F64, 4, { 2, 4, 3, 3 }, 0, FALSE, TRUE },
  { "instance-f32-nhwc", ATOMR_NORM_INSTANCE, ATOMR_DTYPE_F32, 4, { 3, 5, 6, 6 }, 0, TRUE, FALSE },
  /* the row fast path (normalized dimensions packed innermost): 16-byte
   * vectors, a warp per row, 8 rows per block, the last block partial
   * and the parameter gradients' last row chunk short */
  { "layer-bf16-rows", ATOMR_NORM_LAYER, ATOMR_DTYPE_BF16, 2, { 37, 2048 }, 1, FALSE, TRUE },
  /* two warps per row (a block-wide sum) */
  { "layer-f16-rows-4096", ATOMR_NORM_LAYER, ATOMR_DTYPE_F16, 2, { 6, 4096 }, 1, FALSE, TRUE },
  /* 256 threads per row, the register tile full (2048 vectors of 4) */
  { "layer-f32-rows-8192", ATOMR_NORM_LAYER, ATOMR_DTYPE_F32, 2, { 4, 8192 }, 1, FALSE, TRUE },
  { "rms-bf16-rows", ATOMR_NORM_RMS, ATOMR_DTYPE_BF16, 2, { 19, 768 }, 1, FALSE, TRUE },
  { "rms-f64-rows", ATOMR_NORM_RMS, ATOMR_DTYPE_F64, 2, { 9, 130 }, 1, FALSE, TRUE },
  /* m not a multiple of the vector width: one element per load */
  { "layer-bf16-odd", ATOMR_NORM_LAYER, ATOMR_DTYPE_BF16, 2, { 6, 1001 }, 1, FALSE, TRUE },
  { "rms-f32-odd", ATOMR_NORM_RMS, ATOMR_DTYPE_F32, 3, { 3, 2, 37 }, 2, FALSE, FALSE },
  /* rows wider than the register tile (256 threads × 8 vectors):
   * read from memory on every pass */
  { "rms-bf16-huge-row", ATOMR_NORM_RMS, ATOMR_DTYPE_BF16, 2, { 2, 70000 }, 1, FALSE, TRUE },
  { "layer-f32-odd-huge-row", ATOMR_NORM_LAYER, ATOMR_DTYPE_F32, 2, { 2, 9001 }, 1, FALSE, TRUE },
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

/* ------------------------------------------------------------------ */
/* The row fast path on unaligned views                                 */

/* A rows × m view of a buffer of 1 + rows × (m + 1) elements: one element
 * in (not 16-byte aligned), rows m + 1 apart (no row stride a multiple
 * of a vector).  @host gets the logical values, rows × m. */
static AtomrTensor *
padded_view (Fixture *f, AtomrDtype dt, gint64 rows, gint64 m, AtomrBuffer **buffer, gdouble *host)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  gsize n = 1 + (gsize) (rows * (m + 1));
  g_autofree gdouble *stored = g_new0 (gdouble, n);
  const gint64 shape[2] = { rows, m }, strides[2] = { m + 1, 1 };
  AtomrTensor *view;

  for (gsize i = 0; i < n; i++)
    stored[i] = g_rand_double_range (f->rand, -1, 1) + 0.5;
  bytes = pack (dt, stored, n);
  unpack (dt, bytes, stored, n);
  for (gint64 r = 0; r < rows; r++)
    for (gint64 j = 0; j < m; j++)
      host[r * m + j] = stored[1 + r * (m + 1) + j];
  *buffer = atomr_buffer_new (f->device, dt, n, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (*buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  view = atomr_tensor_new_strided (*buffer, dt, atomr_dtype_get_size (dt), shape, 2, strides, 2, &error);
  g_assert_no_error (error);
  return view;
}

/* x and dy views whose rows qualify for the row kernels but whose
 * pointers and strides rule out 16-byte vectors (the kernels fall back
 * to one element per load): the same results as the reference. */
static void
test_norm_unaligned (Fixture *f, gconstpointer data)
{
  const AtomrDtype dt = ATOMR_DTYPE_BF16;
  const gint64 rows = 6, m = 64;
  gint64 shape[2] = { rows, m };
  gdouble eps = 1e-5, tol = norm_tolerance (dt), e;
  g_autoptr(AtomrNormalization) norm = atomr_normalization_new (ATOMR_NORM_LAYER, eps);
  g_autoptr(AtomrBuffer) xb = NULL, dyb = NULL;
  g_autoptr(AtomrTensor) xv = NULL, dyv = NULL;
  g_autofree gdouble *xh = g_new0 (gdouble, rows * m), *dyh = g_new0 (gdouble, rows * m);
  g_autofree gdouble *ry = g_new0 (gdouble, rows * m), *rdx = g_new0 (gdouble, rows * m);
  g_autofree gdouble *rdsc = g_new0 (gdouble, m), *rdbi = g_new0 (gdouble, m);
  Operand y, dx, sc, bi, mean, rstd, dsc, dbi;
  gint64 n_param = m, n_rows = rows;

  SKIP_WITHOUT_DEVICE (f);
  xv = padded_view (f, dt, rows, m, &xb, xh);
  dyv = padded_view (f, dt, rows, m, &dyb, dyh);
  operand_init (f, &y, dt, shape, 2, FALSE, FALSE);
  operand_init (f, &dx, dt, shape, 2, FALSE, FALSE);
  operand_init (f, &sc, dt, &n_param, 1, FALSE, TRUE);
  operand_init (f, &bi, dt, &n_param, 1, FALSE, TRUE);
  operand_init (f, &mean, ATOMR_DTYPE_F32, &n_rows, 1, FALSE, FALSE);
  operand_init (f, &rstd, ATOMR_DTYPE_F32, &n_rows, 1, FALSE, FALSE);
  operand_init (f, &dsc, dt, &n_param, 1, FALSE, FALSE);
  operand_init (f, &dbi, dt, &n_param, 1, FALSE, FALSE);

  for (gint64 r = 0; r < rows; r++)
    {
      gdouble mu = 0, var = 0, is, c1 = 0, c2 = 0;
      for (gint64 j = 0; j < m; j++)
        mu += xh[r * m + j];
      mu /= m;
      for (gint64 j = 0; j < m; j++)
        var += (xh[r * m + j] - mu) * (xh[r * m + j] - mu);
      is = 1.0 / sqrt (var / m + eps);
      for (gint64 j = 0; j < m; j++)
        {
          gdouble xn = (xh[r * m + j] - mu) * is, g = dyh[r * m + j] * sc.host[j];
          ry[r * m + j] = xn * sc.host[j] + bi.host[j];
          c1 += g;
          c2 += g * xn;
          rdsc[j] += dyh[r * m + j] * xn;
          rdbi[j] += dyh[r * m + j];
        }
      for (gint64 j = 0; j < m; j++)
        {
          gdouble xn = (xh[r * m + j] - mu) * is, g = dyh[r * m + j] * sc.host[j];
          rdx[r * m + j] = is * (g - c1 / m - xn * c2 / m);
        }
    }

  RUN (atomr_cudnn_actor_normalization_forward_async (f->actor, norm, xv, sc.view, bi.view, y.view,
                                                      mean.view, rstd.view, NULL, store_result, &res_),
       atomr_cudnn_actor_normalization_forward_finish);
  e = rel_error (&y, ry);
  g_test_message ("unaligned: y %.3g", e);
  g_assert_cmpfloat (e, <=, tol);
  RUN (atomr_cudnn_actor_normalization_backward_async (f->actor, norm, xv, dyv, sc.view, mean.view,
                                                       rstd.view, dx.view, dsc.view, dbi.view,
                                                       NULL, store_result, &res_),
       atomr_cudnn_actor_normalization_backward_finish);
  e = rel_error (&dx, rdx);
  g_test_message ("unaligned: dx %.3g", e);
  g_assert_cmpfloat (e, <=, tol);
  e = rel_error (&dsc, rdsc);
  g_test_message ("unaligned: dscale %.3g", e);
  g_assert_cmpfloat (e, <=, tol);
  e = rel_error (&dbi, rdbi);
  g_test_message ("unaligned: dbias %.3g", e);
  g_assert_cmpfloat (e, <=, tol);

  operand_clear (&y); operand_clear (&dx); operand_clear (&sc); operand_clear (&bi);
  operand_clear (&mean); operand_clear (&rstd); operand_clear (&dsc); operand_clear (&dbi);
}

/* ------------------------------------------------------------------ */
/* LRN                                                                  */

/* The channels of the window around @c (odd @size: centred). */
static void
lrn_window (gint64 c, gint64 channels, guint size, gint64 *lo, gint64 *hi)
{
  *lo = MAX (0, c - (gint64) (size - 1) / 2);
  *hi = MIN (channels - 1, c + (gint64) size / 2);
}

static void
test_lrn (Fixture *f, gconstpointer data)
{
  const gint64 shape[4] = { 2, 9, 4, 5 };
  const guint size = 5;
  const gdouble alpha = 1e-1, beta = 0.75, k = 2.0;

  SKIP_WITHOUT_DEVICE (f);
  for (guint variant = 0; variant < 3; variant++)
    {
      AtomrDtype dt = variant == 0 ? ATOMR_DTYPE_F32 : variant == 1 ? ATOMR_DTYPE_F16 : ATOMR_DTYPE_F64;
      gdouble tol = norm_tolerance (dt), e;
      gint64 total = shape[0] * shape[1] * shape[2] * shape[3];
      Operand x, y, dy, dx;
      g_autofree gdouble *ry = g_new0 (gdouble, total), *rdx = g_new0 (gdouble, total);
      g_autofree gdouble *sc = g_new0 (gdouble, total);

      /* packed NCHW: what cuDNN's LRN is documented for */
      operand_init (f, &x, dt, shape, 4, FALSE, TRUE);
      operand_init (f, &y, dt, shape, 4, FALSE, FALSE);
      operand_init (f, &dy, dt, shape, 4, FALSE, TRUE);
      operand_init (f, &dx, dt, shape, 4, FALSE, FALSE);

      /* s = k + alpha/size Σ x², y = x s^-β (s kept per logical index) */
      for (gint64 n = 0; n < shape[0]; n++)
        for (gint64 c = 0; c < shape[1]; c++)
          for (gint64 h = 0; h < shape[2]; h++)
            for (gint64 w = 0; w < shape[3]; w++)
              {
                gint64 idx[4] = { n, c, h, w }, lo, hi, li = ((n * shape[1] + c) * shape[2] + h) * shape[3] + w;
                gdouble sum = 0;
                lrn_window (c, shape[1], size, &lo, &hi);
                for (gint64 j = lo; j <= hi; j++)
                  {
                    gint64 jdx[4] = { n, j, h, w };
                    gdouble v = x.host[at (&x, jdx)];
                    sum += v * v;
                  }
                sc[li] = k + alpha / size * sum;
                ry[at (&y, idx)] = x.host[at (&x, idx)] * pow (sc[li], -beta);
              }
      /* dx_m = dy_m s_m^-β − 2αβ/size · x_m Σ_{i: m ∈ W(i)} dy_i x_i s_i^(−β−1) */
      for (gint64 n = 0; n < shape[0]; n++)
        for (gint64 c = 0; c < shape[1]; c++)
          for (gint64 h = 0; h < shape[2]; h++)
            for (gint64 w = 0; w < shape[3]; w++)
              {
                gint64 idx[4] = { n, c, h, w }, lo, hi, li = ((n * shape[1] + c) * shape[2] + h) * shape[3] + w;
                gdouble acc = 0;
                lrn_window (c, shape[1], size, &lo, &hi);   /* symmetric for odd sizes */
                for (gint64 i = lo; i <= hi; i++)
                  {
                    gint64 idi[4] = { n, i, h, w };
                    gint64 lii = ((n * shape[1] + i) * shape[2] + h) * shape[3] + w;
                    acc += dy.host[at (&dy, idi)] * x.host[at (&x, idi)] * pow (sc[lii], -beta - 1);
                  }
                rdx[at (&dx, idx)] = dy.host[at (&dy, idx)] * pow (sc[li], -beta)
                                     - 2 * alpha * beta / size * x.host[at (&x, idx)] * acc;
              }

      RUN (atomr_cudnn_actor_lrn_forward_async (f->actor, size, alpha, beta, k, x.view, y.view,
                                                NULL, store_result, &res_),
           atomr_cudnn_actor_lrn_forward_finish);
      e = rel_error (&y, ry);
      g_test_message ("lrn %s: y %.3g", atomr_dtype_get_name (dt), e);
      g_assert_cmpfloat (e, <=, tol);
      /* the backward pass reads the forward pass's output as computed */
      RUN (atomr_cudnn_actor_lrn_backward_async (f->actor, size, alpha, beta, k, y.view, dy.view, x.view,
                                                 dx.view, NULL, store_result, &res_),
           atomr_cudnn_actor_lrn_backward_finish);
      e = rel_error (&dx, rdx);
      g_test_message ("lrn %s: dx %.3g", atomr_dtype_get_name (dt), e);
      g_assert_cmpfloat (e, <=, dt == ATOMR_DTYPE_F64 ? 1e-10 : tol * 4);

      operand_clear (&x); operand_clear (&y); operand_clear (&dy); operand_clear (&dx);
    }
}

/* ------------------------------------------------------------------ */
/* Dropout                                                              */

static AtomrBuffer *
reserve_for (Fixture *f, AtomrTensor *x)
{
  g_autoptr(GError) error = NULL;
  guint64 size = 0;
  AtomrBuffer *b;

  g_assert_true (atomr_cudnn_actor_get_dropout_reserve_size (f->actor, x, &size, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (size, >, 0);
  b = atomr_buffer_new (f->device, ATOMR_DTYPE_U8, size, &error);
  g_assert_no_error (error);
  return b;
}

static void
dropout_run (Fixture *f, gdouble p, Operand *x, Operand *y, AtomrBuffer *reserve, gdouble *out)
{
  RUN (atomr_cudnn_actor_dropout_forward_async (f->actor, p, x->view, y->view, reserve,
                                                NULL, store_result, &res_),
       atomr_cudnn_actor_dropout_forward_finish);
  operand_download (y, out);
}

static void
test_dropout (Fixture *f, gconstpointer data)
{
  const gint64 shape[2] = { 64, 128 };
  const gdouble p = 0.25;
  const gsize n = 64 * 128;
  Operand x, y, dy, dx;
  g_autoptr(AtomrBuffer) reserve = NULL;
  g_autofree gdouble *y1 = g_new0 (gdouble, n), *y2 = g_new0 (gdouble, n), *y3 = g_new0 (gdouble, n);
  g_autofree gdouble *y4 = g_new0 (gdouble, n), *gdx = g_new0 (gdouble, n);
  gsize dropped = 0;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &x, ATOMR_DTYPE_F32, shape, 2, FALSE, TRUE);
  operand_init (f, &y, ATOMR_DTYPE_F32, shape, 2, FALSE, FALSE);
  operand_init (f, &dy, ATOMR_DTYPE_F32, shape, 2, FALSE, TRUE);
  operand_init (f, &dx, ATOMR_DTYPE_F32, shape, 2, FALSE, FALSE);
  reserve = reserve_for (f, x.view);

  atomr_cudnn_actor_set_dropout_seed (f->actor, 1234);
  dropout_run (f, p, &x, &y, reserve, y1);
  for (gsize i = 0; i < n; i++)
    {
      if (y1[i] == 0)
        dropped++;
      else
        g_assert_cmpfloat (fabs (y1[i] - x.host[i] / (1 - p)), <=, 1e-6 * fabs (x.host[i] / (1 - p)));
    }
  g_test_message ("dropout: %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " dropped", dropped, n);
  /* 8192 draws of p = 0.25: ±0.05 is more than 7 standard deviations */
  g_assert_cmpfloat ((gdouble) dropped / n, >=, p - 0.05);
  g_assert_cmpfloat ((gdouble) dropped / n, <=, p + 0.05);

  /* backward: the same mask, the same scale */
  RUN (atomr_cudnn_actor_dropout_backward_async (f->actor, p, dy.view, dx.view, reserve,
                                                 NULL, store_result, &res_),
       atomr_cudnn_actor_dropout_backward_finish);
  operand_download (&dx, gdx);
  for (gsize i = 0; i < n; i++)
    {
      gdouble want = y1[i] == 0 ? 0.0 : dy.host[i] / (1 - p);
      g_assert_cmpfloat (fabs (gdx[i] - want), <=, 1e-6 * fabs (want));
    }

  /* the same seed again: the same mask; without a reset: another one */
  atomr_cudnn_actor_set_dropout_seed (f->actor, 1234);
  dropout_run (f, p, &x, &y, reserve, y2);
  g_assert_cmpmem (y1, n * sizeof (gdouble), y2, n * sizeof (gdouble));
  dropout_run (f, p, &x, &y, reserve, y3);
  g_assert_true (memcmp (y1, y3, n * sizeof (gdouble)) != 0);
  atomr_cudnn_actor_set_dropout_seed (f->actor, 99);
  dropout_run (f, p, &x, &y, reserve, y4);
  g_assert_true (memcmp (y1, y4, n * sizeof (gdouble)) != 0);
  /* another probability keeps the states: p = 0 drops nothing */
  dropout_run (f, 0.0, &x, &y, reserve, y4);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (y4[i], ==, x.host[i]);

  operand_clear (&x); operand_clear (&y); operand_clear (&dy); operand_clear (&dx);
}

/* ------------------------------------------------------------------ */
/* 3-D pooling                                                          */

static void
test_pooling_3d (Fixture *f, gconstpointer data)
{
  const gint64 xs[5] = { 2, 3, 4, 6, 6 }, win[3] = { 2, 3, 3 }, pad[3] = { 0, 1, 1 }, st[3] = { 2, 2, 2 };
  gint64 ys[5] = { 2, 3, 0, 0, 0 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint i = 0; i < 3; i++)
    ys[i + 2] = (xs[i + 2] + 2 * pad[i] - win[i]) / st[i] + 1;
  for (guint variant = 0; variant < 2; variant++)
    {
      AtomrPoolingMode mode = variant ? ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING : ATOMR_POOLING_MAX;
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrPooling) pool = atomr_pooling_new (mode, win, pad, st, 3, &error);
      Operand x, y, dy, dx;
      gint64 ny = 1, nx = 1;
      g_autofree gdouble *ry = NULL, *rdx = NULL;
      gdouble e;

      g_assert_no_error (error);
      for (guint i = 0; i < 5; i++)
        {
          ny *= ys[i];
          nx *= xs[i];
        }
      operand_init (f, &x, ATOMR_DTYPE_F32, xs, 5, variant == 1, TRUE);
      /* one layout per variant: cuDNN's pooling need not take mixed ones */
      operand_init (f, &y, ATOMR_DTYPE_F32, ys, 5, variant == 1, FALSE);
      operand_init (f, &dy, ATOMR_DTYPE_F32, ys, 5, variant == 1, TRUE);
      operand_init (f, &dx, ATOMR_DTYPE_F32, xs, 5, variant == 1, FALSE);
      ry = g_new0 (gdouble, ny);
      rdx = g_new0 (gdouble, nx);
      for (gint64 n = 0; n < ys[0]; n++)
        for (gint64 c = 0; c < ys[1]; c++)
          for (gint64 od = 0; od < ys[2]; od++)
            for (gint64 oh = 0; oh < ys[3]; oh++)
              for (gint64 ow = 0; ow < ys[4]; ow++)
                {
                  gint64 yi[5] = { n, c, od, oh, ow }, best[5] = { 0 };
                  gdouble acc = variant ? 0.0 : -G_MAXDOUBLE, count = 0;
                  gdouble g = dy.host[at (&dy, yi)];

                  for (gint64 kd = 0; kd < win[0]; kd++)
                    for (gint64 kh = 0; kh < win[1]; kh++)
                      for (gint64 kw = 0; kw < win[2]; kw++)
                        {
                          gint64 xi[5] = { n, c, od * st[0] - pad[0] + kd, oh * st[1] - pad[1] + kh,
                                           ow * st[2] - pad[2] + kw };
                          gdouble v;
                          if (xi[2] < 0 || xi[2] >= xs[2] || xi[3] < 0 || xi[3] >= xs[3] ||
                              xi[4] < 0 || xi[4] >= xs[4])
                            continue;
                          v = x.host[at (&x, xi)];
                          count++;
                          if (variant)
                            acc += v;
                          else if (v > acc)
                            {
                              acc = v;
                              memcpy (best, xi, sizeof best);
                            }
                        }
                  ry[at (&y, yi)] = variant ? acc / count : acc;
                  if (!variant)
                    rdx[at (&dx, best)] += g;
                  else
                    for (gint64 kd = 0; kd < win[0]; kd++)
                      for (gint64 kh = 0; kh < win[1]; kh++)
                        for (gint64 kw = 0; kw < win[2]; kw++)
                          {
                            gint64 xi[5] = { n, c, od * st[0] - pad[0] + kd, oh * st[1] - pad[1] + kh,
                                             ow * st[2] - pad[2] + kw };
                            if (xi[2] < 0 || xi[2] >= xs[2] || xi[3] < 0 || xi[3] >= xs[3] ||
                                xi[4] < 0 || xi[4] >= xs[4])
                              continue;
                            rdx[at (&dx, xi)] += g / count;
                          }
                }
      RUN (atomr_cudnn_actor_pooling_forward_async (f->actor, pool, x.view, y.view, NULL, store_result, &res_),
           atomr_cudnn_actor_pooling_forward_finish);
      e = rel_error (&y, ry);
      g_test_message ("pool-3d %s: y %.3g", variant ? "avg" : "max", e);
      g_assert_cmpfloat (e, <=, 1e-6);
      RUN (atomr_cudnn_actor_pooling_backward_async (f->actor, pool, y.view, dy.view, x.view, dx.view,
                                                     NULL, store_result, &res_),
           atomr_cudnn_actor_pooling_backward_finish);
      e = rel_error (&dx, rdx);
      g_test_message ("pool-3d %s: dx %.3g", variant ? "avg" : "max", e);
      g_assert_cmpfloat (e, <=, 1e-6);
      operand_clear (&x); operand_clear (&y); operand_clear (&dy); operand_clear (&dx);
    }
}

/* ------------------------------------------------------------------ */
/* Fused convolution + bias + activation (+ residual)                   */

typedef struct {
  const gchar         *name;
  AtomrDtype           dtype;
  gboolean             nhwc;
  AtomrActivationMode  act;
  gdouble              coef;
  gdouble              alpha;
  gboolean             residual;
  /* the backend path must run it rather than fall back to the legacy
   * call (a pattern cuDNN 9.14 and 9.19 fuse on the H200: a residual
   * added with alpha, then the bias, then ReLU); the other cases print
   * which path ran and why */
  gboolean             backend_expected;
} FusedCase;

static const FusedCase fused_cases[] = {
  { "f32-nchw-relu", ATOMR_DTYPE_F32, FALSE, ATOMR_ACTIVATION_RELU, 0.0, 0.75, FALSE, FALSE },
  { "f16-nhwc-relu-scaled", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_RELU, 0.0, 0.75, FALSE, FALSE },
  { "f32-nchw-tanh-residual", ATOMR_DTYPE_F32, FALSE, ATOMR_ACTIVATION_TANH, 0.0, 0.75, TRUE, FALSE },
  { "f32-nchw-identity-residual", ATOMR_DTYPE_F32, FALSE, ATOMR_ACTIVATION_IDENTITY, 0.0, 0.75, TRUE, FALSE },
  { "f16-nhwc-relu-residual", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_RELU, 0.0, 0.75, TRUE, TRUE },
  { "f16-nchw-relu", ATOMR_DTYPE_F16, FALSE, ATOMR_ACTIVATION_RELU, 0.0, 0.75, FALSE, FALSE },
  { "bf16-nhwc-relu", ATOMR_DTYPE_BF16, TRUE, ATOMR_ACTIVATION_RELU, 0.0, 1.0, FALSE, FALSE },
  { "f16-nhwc-swish", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_SWISH, 1.5, 0.75, FALSE, FALSE },
  { "f16-nhwc-clipped-relu-residual", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_CLIPPED_RELU, 0.25, 0.75, TRUE, FALSE },
  { "f16-nhwc-elu", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_ELU, 0.5, 0.75, FALSE, FALSE },
  { "f16-nhwc-sigmoid", ATOMR_DTYPE_F16, TRUE, ATOMR_ACTIVATION_SIGMOID, 0.0, 0.75, FALSE, FALSE },
};

/* Each case through the backend path (the default) and the legacy call. */
typedef struct {
  const FusedCase *fc;
  gboolean         legacy;
} FusedPath;

static FusedPath fused_paths[2 * G_N_ELEMENTS (fused_cases)];

static void
keep_detail (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  gchar **detail = user_data;

  g_free (*detail);
  *detail = g_strdup (atomr_launch_info_get_detail (info));
}

static void
test_fused_conv (Fixture *f, gconstpointer data)
{
  const FusedPath *fp = data;
  const FusedCase *fc = fp->fc;
  guint backend_before = 0, legacy_before = 0, backend_after = 0, legacy_after = 0;
  g_autofree gchar *detail = NULL;
  const gint64 n = 2, c = 8, k = 16, hw = 7;
  const gint64 xs[4] = { n, c, hw, hw }, ws[4] = { k, c, 3, 3 }, ys[4] = { n, k, hw, hw };
  const gdouble alpha = fc->alpha, beta = 0.5;
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  Operand x, w, b, z, y;
  g_autofree gdouble *ry = NULL;
  gdouble e, tol = tolerance (fc->dtype, TRUE);

  SKIP_WITHOUT_DEVICE (f);
  if (fc->dtype == ATOMR_DTYPE_F32)
    atomr_convolution_set_math (conv, ATOMR_CUDNN_MATH_FMA);
  operand_init (f, &x, fc->dtype, xs, 4, fc->nhwc, TRUE);
  operand_init (f, &w, fc->dtype, ws, 4, fc->nhwc, TRUE);
  operand_init (f, &b, fc->dtype, &k, 1, FALSE, TRUE);
  operand_init (f, &z, fc->dtype, ys, 4, fc->nhwc, TRUE);
  operand_init (f, &y, fc->dtype, ys, 4, fc->nhwc, FALSE);
  ry = g_new0 (gdouble, y.n);
  for (gint64 in = 0; in < n; in++)
    for (gint64 ok = 0; ok < k; ok++)
      for (gint64 oh = 0; oh < hw; oh++)
        for (gint64 ow = 0; ow < hw; ow++)
          {
            gint64 yi[4] = { in, ok, oh, ow };
            gdouble acc = 0, v;
            for (gint64 ic = 0; ic < c; ic++)
              for (gint64 r = 0; r < 3; r++)
                for (gint64 q = 0; q < 3; q++)
                  {
                    gint64 h = oh - 1 + r, ww = ow - 1 + q;
                    gint64 xi[4] = { in, ic, h, ww }, wi[4] = { ok, ic, r, q };
                    if (h < 0 || h >= hw || ww < 0 || ww >= hw)
                      continue;
                    acc += x.host[at (&x, xi)] * w.host[at (&w, wi)];
                  }
            v = alpha * acc + b.host[ok] + (fc->residual ? beta * z.host[at (&z, yi)] : 0.0);
            switch (fc->act)
              {
              case ATOMR_ACTIVATION_RELU: v = MAX (v, 0.0); break;
              case ATOMR_ACTIVATION_TANH: v = tanh (v); break;
              case ATOMR_ACTIVATION_SIGMOID: v = 1.0 / (1.0 + exp (-v)); break;
              case ATOMR_ACTIVATION_CLIPPED_RELU: v = CLAMP (v, 0.0, fc->coef); break;
              case ATOMR_ACTIVATION_ELU: v = v > 0 ? v : fc->coef * (exp (v) - 1.0); break;
              case ATOMR_ACTIVATION_SWISH: v = v / (1.0 + exp (-fc->coef * v)); break;
              default: break;
              }
            ry[at (&y, yi)] = v;
          }
  atomr_cudnn_actor_set_legacy_convolution (f->actor, fp->legacy);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend_before, &legacy_before, NULL);
  g_signal_connect (f->actor, "after-enqueue", G_CALLBACK (keep_detail), &detail);
  RUN (atomr_cudnn_actor_convolution_bias_activation_forward_async (f->actor, conv, fc->act, fc->coef, alpha,
                                                                    x.view, w.view, b.view, beta,
                                                                    fc->residual ? z.view : NULL, y.view,
                                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_bias_activation_forward_finish);
  g_signal_handlers_disconnect_by_data (f->actor, &detail);
  e = rel_error (&y, ry);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend_after, &legacy_after, NULL);
  g_test_message ("conv-bias-act %s (%s path asked): y %.3g; ran through %s (trace detail: %s)", fc->name,
                  fp->legacy ? "legacy" : "backend", e,
                  backend_after > backend_before ? "a backend plan" : "the legacy call", detail);
  g_assert_cmpfloat (e, <=, tol);
  g_assert_cmpuint ((backend_after - backend_before) + (legacy_after - legacy_before), ==, 1);
  if (fp->legacy)
    g_assert_cmpuint (legacy_after - legacy_before, ==, 1);
  else if (fc->backend_expected)
    g_assert_cmpuint (backend_after - backend_before, ==, 1);
  operand_clear (&x); operand_clear (&w); operand_clear (&b); operand_clear (&z); operand_clear (&y);
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
  for (guint i = 0; i < G_N_ELEMENTS (fused_paths); i++)
    {
      g_autofree gchar *path = NULL;

      fused_paths[i].fc = &fused_cases[i / 2];
      fused_paths[i].legacy = i % 2;
      path = g_strdup_printf ("/gpu-cudnn-norm/conv-bias-act/%s%s", fused_paths[i].fc->name,
                              fused_paths[i].legacy ? "-legacy" : "");
      g_test_add (path, Fixture, &fused_paths[i], fixture_setup, test_fused_conv, fixture_teardown);
    }
  g_test_add ("/gpu-cudnn-norm/norm-unaligned-view", Fixture, NULL, fixture_setup, test_norm_unaligned,
              fixture_teardown);
  g_test_add ("/gpu-cudnn-norm/pooling-3d", Fixture, NULL, fixture_setup, test_pooling_3d, fixture_teardown);
  g_test_add ("/gpu-cudnn-norm/lrn", Fixture, NULL, fixture_setup, test_lrn, fixture_teardown);
  g_test_add ("/gpu-cudnn-norm/dropout", Fixture, NULL, fixture_setup, test_dropout, fixture_teardown);
  return g_test_run ();
}
