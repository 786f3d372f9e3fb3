/* test-gpu-cudnn.c — the cuDNN actor against CPU references
 *
 * Every operation runs on random data (NCHW and NHWC views; f32, f16,
 * bf16, f64) and is compared with a reference computed on the CPU in
 * double precision from the exact (dtype-rounded) inputs.  Error measure:
 * the normwise relative error ‖got − ref‖₂ / ‖ref‖₂.  Bounds: 1e-5 f32
 * with FMA math, 2e-3 f32 with default math (TF32 on Hopper), 5e-3 f16,
 * 2e-2 bf16 (the output itself is rounded to 8 bits), 1e-12 f64.
 * Backward passes are checked against reference gradients computed from
 * the same loop nest as the forward pass.  Errors are printed with
 * g_test_message so a run documents them.  Skips without a device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

#include "cudnn-test-util.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"

static const ConvCase conv_cases[] = {
  { "f32-nchw-fma", ATOMR_DTYPE_F32, FALSE, TRUE, 2, 2, 8, 16, 9, 3, 1, 1, 1, 1 },
  { "f32-nhwc-s2-d2-g2", ATOMR_DTYPE_F32, TRUE, FALSE, 2, 2, 8, 12, 11, 3, 2, 2, 2, 2 },
  { "f16-nhwc", ATOMR_DTYPE_F16, TRUE, FALSE, 2, 4, 16, 32, 8, 3, 1, 1, 1, 1 },
  { "bf16-nhwc", ATOMR_DTYPE_BF16, TRUE, FALSE, 2, 4, 32, 32, 8, 3, 1, 1, 1, 1 },
  { "bf16-nchw-depthwise", ATOMR_DTYPE_BF16, FALSE, FALSE, 2, 2, 16, 16, 7, 3, 1, 1, 1, 16 },
  { "f64-nchw-s2", ATOMR_DTYPE_F64, FALSE, FALSE, 2, 2, 4, 6, 9, 3, 0, 2, 1, 1 },
  { "f32-3d-fma", ATOMR_DTYPE_F32, FALSE, TRUE, 3, 2, 4, 8, 6, 3, 1, 1, 1, 1 },
};

/* Every case runs once on each path: backend execution plans (the
 * default) and the legacy entry points (legacy-convolution). */
typedef struct {
  const ConvCase *conv;
  gboolean        legacy;
} PathCase;

static PathCase path_cases[2 * G_N_ELEMENTS (conv_cases)];

static void
test_convolution (Fixture *f, gconstpointer data)
{
  const PathCase *pc = data;
  const ConvCase *cc = pc->conv;
  guint backend_runs = 0, legacy_runs = 0;
  guint nd = cc->n_spatial + 2;
  gint64 xs[5], ws[5], ys[5];
  gint64 out = (cc->size + 2 * cc->pad - cc->dilation * (cc->filter - 1) - 1) / cc->stride + 1;
  g_autoptr(AtomrConvolution) conv = NULL;
  g_autoptr(GError) error = NULL;
  Operand x, w, y, dy, dx, dw;
  g_autofree gdouble *ry = NULL, *rdx = NULL, *rdw = NULL, *dw0 = NULL;
  gint64 cg = cc->c / cc->groups, kg = cc->k / cc->groups;
  gint64 pad[3], stride[3], dil[3];
  gdouble e, tol = tolerance (cc->dtype, cc->fma);
  guint64 misses;

  SKIP_WITHOUT_DEVICE (f);
  atomr_cudnn_actor_set_legacy_convolution (f->actor, pc->legacy);

  xs[0] = ys[0] = cc->n;
  xs[1] = cc->c;
  ys[1] = ws[0] = cc->k;
  ws[1] = cg;
  for (guint i = 0; i < cc->n_spatial; i++)
    {
      xs[i + 2] = cc->size;
      ws[i + 2] = cc->filter;
      ys[i + 2] = out;
      pad[i] = cc->pad;
      stride[i] = cc->stride;
      dil[i] = cc->dilation;
    }
  conv = atomr_convolution_new (cc->n_spatial);
  g_assert_true (atomr_convolution_set_padding (conv, pad, cc->n_spatial, &error));
  g_assert_true (atomr_convolution_set_stride (conv, stride, cc->n_spatial, &error));
  g_assert_true (atomr_convolution_set_dilation (conv, dil, cc->n_spatial, &error));
  atomr_convolution_set_groups (conv, cc->groups);
  atomr_convolution_set_math (conv, cc->fma ? ATOMR_CUDNN_MATH_FMA : ATOMR_CUDNN_MATH_DEFAULT);

  operand_init (f, &x, cc->dtype, xs, nd, cc->nhwc, TRUE);
  operand_init (f, &w, cc->dtype, ws, nd, cc->nhwc, TRUE);
  operand_init (f, &y, cc->dtype, ys, nd, cc->nhwc, FALSE);
  operand_init (f, &dy, cc->dtype, ys, nd, cc->nhwc, TRUE);
  operand_init (f, &dx, cc->dtype, xs, nd, cc->nhwc, FALSE);
  operand_init (f, &dw, cc->dtype, ws, nd, cc->nhwc, TRUE);   /* beta = 1 accumulates into it */

  ry = g_new0 (gdouble, y.n);
  rdx = g_new0 (gdouble, dx.n);
  rdw = g_memdup2 (dw.host, sizeof (gdouble) * dw.n);
  dw0 = g_memdup2 (dw.host, sizeof (gdouble) * dw.n);

  /* One loop nest gives y, dx and dw: every (output, filter tap) pair. */
  {
    gint64 od = cc->n_spatial == 3 ? out : 1, fd = cc->n_spatial == 3 ? cc->filter : 1;
    for (gint64 n = 0; n < cc->n; n++)
      for (gint64 k = 0; k < cc->k; k++)
        for (gint64 o0 = 0; o0 < od; o0++)
          for (gint64 o1 = 0; o1 < out; o1++)
            for (gint64 o2 = 0; o2 < out; o2++)
              {
                gint64 g = k / kg;
                gint64 yi[5] = { n, k, 0, 0, 0 };
                gdouble acc = 0, gy;
                if (cc->n_spatial == 3) { yi[2] = o0; yi[3] = o1; yi[4] = o2; }
                else { yi[2] = o1; yi[3] = o2; }
                gy = dy.host[at (&dy, yi)];
                for (gint64 c = 0; c < cg; c++)
                  for (gint64 f0 = 0; f0 < fd; f0++)
                    for (gint64 f1 = 0; f1 < cc->filter; f1++)
                      for (gint64 f2 = 0; f2 < cc->filter; f2++)
                        {
                          gint64 i0 = o0 * cc->stride - cc->pad + f0 * cc->dilation;
                          gint64 i1 = o1 * cc->stride - cc->pad + f1 * cc->dilation;
                          gint64 i2 = o2 * cc->stride - cc->pad + f2 * cc->dilation;
                          gint64 xi[5] = { n, g * cg + c, 0, 0, 0 }, wi[5] = { k, c, 0, 0, 0 };
                          gsize xo, wo;
                          if (cc->n_spatial == 2)
                            i0 = 0;
                          if (i0 < 0 || i0 >= (cc->n_spatial == 3 ? cc->size : 1) ||
                              i1 < 0 || i1 >= cc->size || i2 < 0 || i2 >= cc->size)
                            continue;
                          if (cc->n_spatial == 3)
                            {
                              xi[2] = i0; xi[3] = i1; xi[4] = i2;
                              wi[2] = f0; wi[3] = f1; wi[4] = f2;
                            }
                          else
                            {
                              xi[2] = i1; xi[3] = i2;
                              wi[2] = f1; wi[3] = f2;
                            }
                          xo = at (&x, xi);
                          wo = at (&w, wi);
                          acc += x.host[xo] * w.host[wo];
                          rdx[at (&dx, xi)] += gy * w.host[wo];
                          rdw[at (&dw, wi)] += gy * x.host[xo];
                        }
                ry[at (&y, yi)] = acc;
              }
  }

  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  e = rel_error (&y, ry);
  g_test_message ("%s conv-fwd: relative error %.3g (bound %.1g)", cc->name, e, tol);
  g_assert_cmpfloat (e, <=, tol);

  RUN (atomr_cudnn_actor_convolution_backward_data_async (f->actor, conv, 1.0, w.view, dy.view, 0.0,
                                                          dx.view, NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_backward_data_finish);
  e = rel_error (&dx, rdx);
  g_test_message ("%s conv-bwd-data: relative error %.3g (bound %.1g)", cc->name, e, tol);
  g_assert_cmpfloat (e, <=, tol);

  RUN (atomr_cudnn_actor_convolution_backward_filter_async (f->actor, conv, 1.0, x.view, dy.view, 1.0,
                                                            dw.view, NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_backward_filter_finish);
  /* compare the gradient part: subtract what was there */
  {
    g_autofree gdouble *got = g_new0 (gdouble, dw.n);
    gdouble num = 0, den = 0;
    operand_download (&dw, got);
    for (gsize i = 0; i < dw.n; i++)
      {
        gdouble d = (got[i] - dw0[i]) - (rdw[i] - dw0[i]);
        num += d * d;
        den += (rdw[i] - dw0[i]) * (rdw[i] - dw0[i]);
      }
    e = sqrt (num / den);
  }
  /* the accumulated output is rounded once more on top of the gradient */
  g_test_message ("%s conv-bwd-filter (beta 1): relative error %.3g (bound %.1g)", cc->name, e,
                  tol * 4);
  g_assert_cmpfloat (e, <=, tol * 4);

  /* which path ran: the legacy one when asked; the backend one for the
   * 2-D f32/f16/bf16 cases (others may fall back: printed) */
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend_runs, &legacy_runs, NULL);
  g_test_message ("%s (%s path asked): %u convolutions ran through backend plans, %u through legacy calls",
                  cc->name, pc->legacy ? "legacy" : "backend", backend_runs, legacy_runs);
  if (pc->legacy)
    {
      g_assert_cmpuint (backend_runs, ==, 0);
      g_assert_cmpuint (legacy_runs, ==, 3);
    }
  else if (cc->n_spatial == 2 && cc->dtype != ATOMR_DTYPE_F64)
    {
      g_assert_cmpuint (backend_runs, ==, 3);
      g_assert_cmpuint (legacy_runs, ==, 0);
    }

  /* the plan cache: the same forward request again is a hit, no new miss */
  misses = atomr_cudnn_actor_get_cache_misses (f->actor);
  g_assert_cmpuint (misses, ==, 3);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 3);
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (f->actor), ==, misses);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_hits (f->actor), ==, 1);
  g_assert_cmpfloat (rel_error (&y, ry), <=, tol);
  g_test_message ("%s workspace %" G_GUINT64_FORMAT " bytes", cc->name,
                  atomr_cudnn_actor_get_workspace_size (f->actor));

  operand_clear (&x);
  operand_clear (&w);
  operand_clear (&y);
  operand_clear (&dy);
  operand_clear (&dx);
  operand_clear (&dw);
}

/* The backend path keeps the last variant pack of a plan: the same call
 * again reuses it, another output buffer rebuilds it (and is written, the
 * old one keeps its values), new contents at the same addresses are read; alpha and
 * beta (attributes of the plan's operation) are applied; the same output
 * through the legacy path agrees.  bf16 NHWC, the benchmark's layout. */
static void
test_backend_pack (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  const gint64 xs[4] = { 2, 32, 8, 8 }, ws[4] = { 32, 32, 3, 3 };
  Operand x, w, y1, y2;
  g_autofree gdouble *ref = NULL, *a = NULL, *b = NULL, *y2_before = NULL;
  guint backend = 0, legacy = 0, builds = 0;
  gdouble tol = tolerance (ATOMR_DTYPE_BF16, FALSE), e;

  SKIP_WITHOUT_DEVICE (f);
  operand_init (f, &x, ATOMR_DTYPE_BF16, xs, 4, TRUE, TRUE);
  operand_init (f, &w, ATOMR_DTYPE_BF16, ws, 4, TRUE, TRUE);
  operand_init (f, &y1, ATOMR_DTYPE_BF16, xs, 4, TRUE, FALSE);
  operand_init (f, &y2, ATOMR_DTYPE_BF16, xs, 4, TRUE, TRUE);
  ref = g_new0 (gdouble, y1.n);
  a = g_new0 (gdouble, y1.n);
  b = g_new0 (gdouble, y1.n);
  y2_before = g_memdup2 (y2.host, sizeof (gdouble) * y2.n);

  /* 3×3, padding 1, stride 1: the output has x's shape */
  for (gint64 n = 0; n < xs[0]; n++)
    for (gint64 k = 0; k < ws[0]; k++)
      for (gint64 h = 0; h < xs[2]; h++)
        for (gint64 wi = 0; wi < xs[3]; wi++)
          {
            gint64 yi[4] = { n, k, h, wi };
            gdouble acc = 0;
            for (gint64 c = 0; c < xs[1]; c++)
              for (gint64 r = 0; r < 3; r++)
                for (gint64 q = 0; q < 3; q++)
                  {
                    gint64 ih = h - 1 + r, iw = wi - 1 + q;
                    gint64 xi[4] = { n, c, ih, iw }, wj[4] = { k, c, r, q };
                    if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3])
                      continue;
                    acc += x.host[at (&x, xi)] * w.host[at (&w, wj)];
                  }
            ref[at (&y1, yi)] = acc;
          }

  for (guint i = 0; i < 2; i++)
    RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y1.view,
                                                      NULL, store_result, &res_),
         atomr_cudnn_actor_convolution_forward_finish);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend, &legacy, &builds);
  g_test_message ("same call twice: %u backend runs, %u legacy, %u variant packs built", backend, legacy,
                  builds);
  g_assert_cmpuint (backend, ==, 2);
  g_assert_cmpuint (builds, ==, 1);
  e = rel_error (&y1, ref);
  g_test_message ("bf16 nhwc conv-fwd (backend): relative error %.3g (bound %.1g)", e, tol);
  g_assert_cmpfloat (e, <=, tol);

  /* y2 gets 0.5·conv + 1·y2 (another plan: alpha and beta are in the
   * key), y1 keeps what it had */
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 0.5, x.view, w.view, 1.0, y2.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend, &legacy, &builds);
  g_test_message ("alpha 0.5, beta 1 into y2: %u backend runs, %u legacy, %u variant packs built", backend,
                  legacy, builds);
  g_assert_cmpuint (backend + legacy, ==, 3);
  {
    g_autofree gdouble *want = g_new0 (gdouble, y2.n);
    for (gsize i = 0; i < y2.n; i++)
      want[i] = 0.5 * ref[i] + y2_before[i];
    e = rel_error (&y2, want);
    g_test_message ("alpha 0.5, beta 1: relative error %.3g (bound %.1g)", e, 2 * tol);
    g_assert_cmpfloat (e, <=, 2 * tol);
  }
  e = rel_error (&y1, ref);
  g_assert_cmpfloat (e, <=, tol);

  /* alpha 1, beta 0 into y2: the first plan again with another pointer */
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y2.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend, &legacy, &builds);
  g_assert_cmpuint (backend, >=, 3);
  operand_download (&y1, a);
  operand_download (&y2, b);
  e = rel_error (&y2, ref);
  g_test_message ("same plan into y2: relative error %.3g (bound %.1g), %s y1", e, tol,
                  memcmp (a, b, sizeof (gdouble) * y1.n) == 0 ? "bit-identical to" : "NOT bit-identical to");
  g_assert_cmpfloat (e, <=, tol);

  /* new contents of x at the same address: read, not a stale result */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) bytes = NULL;
    for (gsize i = 0; i < x.n; i++)
      x.host[i] = -x.host[i];
    bytes = pack (ATOMR_DTYPE_BF16, x.host, x.n);
    g_assert_true (atomr_buffer_upload_sync (x.buffer, bytes, NULL, &error));
    g_assert_no_error (error);
  }
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y1.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  for (gsize i = 0; i < y1.n; i++)
    ref[i] = -ref[i];
  e = rel_error (&y1, ref);
  g_test_message ("negated x, same pointers: relative error %.3g (bound %.1g)", e, tol);
  g_assert_cmpfloat (e, <=, tol);

  /* the legacy path on the same operands agrees within the dtype's bound */
  atomr_cudnn_actor_set_legacy_convolution (f->actor, TRUE);
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y2.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  e = rel_error (&y2, ref);
  g_test_message ("legacy path, same request: relative error %.3g (bound %.1g)", e, tol);
  g_assert_cmpfloat (e, <=, tol);
  atomr_cudnn_actor_get_conv_runs_internal (f->actor, &backend, &legacy, &builds);
  g_test_message ("in all: %u backend runs, %u legacy, %u variant packs built", backend, legacy, builds);

  operand_clear (&x);
  operand_clear (&w);
  operand_clear (&y1);
  operand_clear (&y2);
}

/* Autotuned algorithms give the same results; a capacity of 1 evicts. */
static void
test_autotune_and_eviction (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  const gint64 xs[4] = { 2, 8, 10, 10 }, ws[4] = { 8, 8, 3, 3 };
  Operand x, w, y1, y2;

  SKIP_WITHOUT_DEVICE (f);
  atomr_convolution_set_math (conv, ATOMR_CUDNN_MATH_FMA);
  operand_init (f, &x, ATOMR_DTYPE_F32, xs, 4, FALSE, TRUE);
  operand_init (f, &w, ATOMR_DTYPE_F32, ws, 4, FALSE, TRUE);
  operand_init (f, &y1, ATOMR_DTYPE_F32, xs, 4, FALSE, FALSE);
  operand_init (f, &y2, ATOMR_DTYPE_F32, xs, 4, TRUE, FALSE);

  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y1.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  atomr_cudnn_actor_set_autotune (f->actor, TRUE);
  atomr_cudnn_actor_set_cache_capacity (f->actor, 1);
  /* y2 is NHWC: another plan, which evicts the first */
  RUN (atomr_cudnn_actor_convolution_forward_async (f->actor, conv, 1.0, x.view, w.view, 0.0, y2.view,
                                                    NULL, store_result, &res_),
       atomr_cudnn_actor_convolution_forward_finish);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_size (f->actor), ==, 1);
  g_assert_cmpuint (atomr_cudnn_actor_get_cache_misses (f->actor), ==, 2);
  {
    g_autofree gdouble *a = g_new0 (gdouble, y1.n), *b = g_new0 (gdouble, y2.n);
    gdouble num = 0, den = 0;
    operand_download (&y1, a);
    operand_download (&y2, b);
    /* same logical elements, different storage */
    for (gint64 n = 0; n < xs[0]; n++)
      for (gint64 c = 0; c < xs[1]; c++)
        for (gint64 h = 0; h < xs[2]; h++)
          for (gint64 wi = 0; wi < xs[3]; wi++)
            {
              gint64 idx[4] = { n, c, h, wi };
              gdouble d = a[at (&y1, idx)] - b[at (&y2, idx)];
              num += d * d;
              den += a[at (&y1, idx)] * a[at (&y1, idx)];
            }
    g_test_message ("autotuned NHWC vs heuristic NCHW: relative difference %.3g", sqrt (num / den));
    g_assert_cmpfloat (sqrt (num / den), <=, 1e-5);
  }
  operand_clear (&x);
  operand_clear (&w);
  operand_clear (&y1);
  operand_clear (&y2);
}

/* ------------------------------------------------------------------ */
/* Activations, softmax, pooling                                        */

static gdouble
act (AtomrActivationMode mode, gdouble coef, gdouble x, gdouble *deriv)
{
  gdouble s;
  switch (mode)
    {
    case ATOMR_ACTIVATION_SIGMOID:
      s = 1 / (1 + exp (-x));
      *deriv = s * (1 - s);
      return s;
    case ATOMR_ACTIVATION_RELU:
      *deriv = x > 0;
      return MAX (x, 0);
    case ATOMR_ACTIVATION_TANH:
      s = tanh (x);
      *deriv = 1 - s * s;
      return s;
    case ATOMR_ACTIVATION_CLIPPED_RELU:
      *deriv = x > 0 && x < coef;
      return MIN (MAX (x, 0), coef);
    case ATOMR_ACTIVATION_ELU:
      *deriv = x > 0 ? 1 : coef * exp (x);
      return x > 0 ? x : coef * (exp (x) - 1);
    default:
      s = 1 / (1 + exp (-coef * x));
      *deriv = s + coef * x * s * (1 - s);
      return x * s;
    }
}

static const gchar *const mode_names[] = {
  "sigmoid", "relu", "tanh", "clipped-relu", "elu", "swish",
};

static void
test_activation (Fixture *f, gconstpointer data)
{
  const gint64 shape[4] = { 2, 5, 6, 7 };
  const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint di = 0; di < G_N_ELEMENTS (dtypes); di++)
    for (gint mode = ATOMR_ACTIVATION_SIGMOID; mode <= ATOMR_ACTIVATION_SWISH; mode++)
      {
        /* 0.61 is no f16/bf16 value: no input sits exactly on the clip */
        gdouble coef = mode == ATOMR_ACTIVATION_CLIPPED_RELU ? 0.61 : 1.0;
        AtomrDtype dtype = dtypes[di];
        gboolean nhwc = mode % 2 == 1;
        Operand x, y, dy, dx;
        g_autofree gdouble *ry = NULL, *rdx = NULL;
        gdouble tol = dtype == ATOMR_DTYPE_F32 ? 1e-5 : dtype == ATOMR_DTYPE_F16 ? 2e-3 : 1e-2;
        gdouble e1, e2;

        operand_init (f, &x, dtype, shape, 4, nhwc, TRUE);
        operand_init (f, &y, dtype, shape, 4, nhwc, FALSE);
        operand_init (f, &dy, dtype, shape, 4, nhwc, TRUE);
        operand_init (f, &dx, dtype, shape, 4, nhwc, FALSE);
        ry = g_new0 (gdouble, x.n);
        rdx = g_new0 (gdouble, x.n);
        for (gsize i = 0; i < x.n; i++)
          {
            gdouble d;
            ry[i] = act (mode, coef, x.host[i], &d);
            rdx[i] = d * dy.host[i];
          }
        RUN (atomr_cudnn_actor_activation_forward_async (f->actor, mode, coef, x.view, y.view, NULL,
                                                         store_result, &res_),
             atomr_cudnn_actor_activation_forward_finish);
        e1 = rel_error (&y, ry);
        /* the backward pass reads the device's y (rounded to dtype) */
        RUN (atomr_cudnn_actor_activation_backward_async (f->actor, mode, coef, y.view, dy.view, x.view,
                                                          dx.view, NULL, store_result, &res_),
             atomr_cudnn_actor_activation_backward_finish);
        e2 = rel_error (&dx, rdx);
        g_test_message ("%s %s: act-fwd %.3g, act-bwd %.3g (bound %.1g)", atomr_dtype_get_name (dtype),
                        mode_names[mode],
                        e1, e2, tol);
        g_assert_cmpfloat (e1, <=, tol);
        g_assert_cmpfloat (e2, <=, tol * 4);
        operand_clear (&x);
        operand_clear (&y);
        operand_clear (&dy);
        operand_clear (&dx);
      }
  /* in place: y is x */
  {
    Operand x;
    g_autofree gdouble *ry = NULL;
    operand_init (f, &x, ATOMR_DTYPE_F32, shape, 4, FALSE, TRUE);
    ry = g_new0 (gdouble, x.n);
    for (gsize i = 0; i < x.n; i++)
      ry[i] = MAX (x.host[i], 0);
    RUN (atomr_cudnn_actor_activation_forward_async (f->actor, ATOMR_ACTIVATION_RELU, 0, x.view, x.view,
                                                     NULL, store_result, &res_),
         atomr_cudnn_actor_activation_forward_finish);
    g_assert_cmpfloat (rel_error (&x, ry), <=, 1e-7);
    operand_clear (&x);
  }
}

static void
test_softmax (Fixture *f, gconstpointer data)
{
  const gint64 shape[4] = { 3, 10, 4, 5 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint variant = 0; variant < 4; variant++)
    {
      AtomrSoftmaxMode mode = variant & 1 ? ATOMR_SOFTMAX_CHANNEL : ATOMR_SOFTMAX_INSTANCE;
      gboolean log_ = (variant & 2) != 0;
      Operand x, y, dy, dx;
      g_autofree gdouble *ry = NULL, *rdx = NULL;
      gint64 groups = mode == ATOMR_SOFTMAX_CHANNEL ? shape[0] * shape[2] * shape[3] : shape[0];
      gint64 len = mode == ATOMR_SOFTMAX_CHANNEL ? shape[1] : shape[1] * shape[2] * shape[3];
      gdouble e1, e2;

      operand_init (f, &x, ATOMR_DTYPE_F32, shape, 4, variant == 1, TRUE);
      operand_init (f, &y, ATOMR_DTYPE_F32, shape, 4, variant == 1, FALSE);
      operand_init (f, &dy, ATOMR_DTYPE_F32, shape, 4, variant == 1, TRUE);
      operand_init (f, &dx, ATOMR_DTYPE_F32, shape, 4, variant == 1, FALSE);
      ry = g_new0 (gdouble, x.n);
      rdx = g_new0 (gdouble, x.n);
      for (gint64 g = 0; g < groups; g++)
        {
          gsize idx[1000];
          gdouble mx = -INFINITY, sum = 0, dot = 0, dsum = 0;
          for (gint64 j = 0; j < len; j++)
            {
              gint64 li[4];
              if (mode == ATOMR_SOFTMAX_CHANNEL)
                {
                  li[0] = g / (shape[2] * shape[3]);
                  li[1] = j;
                  li[2] = (g / shape[3]) % shape[2];
                  li[3] = g % shape[3];
                }
              else
                {
                  li[0] = g;
                  li[1] = j / (shape[2] * shape[3]);
                  li[2] = (j / shape[3]) % shape[2];
                  li[3] = j % shape[3];
                }
              idx[j] = at (&x, li);
              mx = MAX (mx, x.host[idx[j]]);
            }
          for (gint64 j = 0; j < len; j++)
            sum += exp (x.host[idx[j]] - mx);
          for (gint64 j = 0; j < len; j++)
            {
              gdouble p = exp (x.host[idx[j]] - mx) / sum;
              ry[idx[j]] = log_ ? log (p) : p;
              dot += dy.host[idx[j]] * p;
              dsum += dy.host[idx[j]];
            }
          for (gint64 j = 0; j < len; j++)
            {
              gdouble p = exp (x.host[idx[j]] - mx) / sum;
              rdx[idx[j]] = log_ ? dy.host[idx[j]] - p * dsum : p * (dy.host[idx[j]] - dot);
            }
        }
      RUN (atomr_cudnn_actor_softmax_forward_async (f->actor, mode, log_, x.view, y.view, NULL,
                                                    store_result, &res_),
           atomr_cudnn_actor_softmax_forward_finish);
      e1 = rel_error (&y, ry);
      RUN (atomr_cudnn_actor_softmax_backward_async (f->actor, mode, log_, y.view, dy.view, dx.view, NULL,
                                                     store_result, &res_),
           atomr_cudnn_actor_softmax_backward_finish);
      e2 = rel_error (&dx, rdx);
      g_test_message ("softmax %s%s: fwd %.3g, bwd %.3g", mode == ATOMR_SOFTMAX_CHANNEL ? "channel" : "instance",
                      log_ ? " log" : "", e1, e2);
      g_assert_cmpfloat (e1, <=, 1e-5);
      g_assert_cmpfloat (e2, <=, 1e-5);
      operand_clear (&x);
      operand_clear (&y);
      operand_clear (&dy);
      operand_clear (&dx);
    }
}

static void
test_pooling (Fixture *f, gconstpointer data)
{
  const gint64 xs[4] = { 2, 3, 9, 9 };
  const gint64 win = 3, pad = 1, st = 2, out = (9 + 2 * 1 - 3) / 2 + 1;
  const gint64 ys[4] = { 2, 3, out, out };

  SKIP_WITHOUT_DEVICE (f);
  for (gint mode = ATOMR_POOLING_MAX; mode <= ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING; mode++)
    for (guint nhwc = 0; nhwc < 2; nhwc++)
      {
        g_autoptr(AtomrPooling) pool = atomr_pooling_new_2d (mode, win, win, pad, pad, st, st);
        Operand x, y, dy, dx;
        g_autofree gdouble *ry = NULL, *rdx = NULL;
        gdouble e1, e2;

        operand_init (f, &x, ATOMR_DTYPE_F32, xs, 4, nhwc, TRUE);
        operand_init (f, &y, ATOMR_DTYPE_F32, ys, 4, nhwc, FALSE);
        operand_init (f, &dy, ATOMR_DTYPE_F32, ys, 4, nhwc, TRUE);
        operand_init (f, &dx, ATOMR_DTYPE_F32, xs, 4, nhwc, FALSE);
        ry = g_new0 (gdouble, y.n);
        rdx = g_new0 (gdouble, x.n);
        for (gint64 n = 0; n < xs[0]; n++)
          for (gint64 c = 0; c < xs[1]; c++)
            for (gint64 oh = 0; oh < out; oh++)
              for (gint64 ow = 0; ow < out; ow++)
                {
                  gint64 yi[4] = { n, c, oh, ow };
                  gdouble best = -INFINITY, sum = 0;
                  gsize best_at = 0;
                  gint64 count = 0;
                  for (gint64 r = 0; r < win; r++)
                    for (gint64 s = 0; s < win; s++)
                      {
                        gint64 h = oh * st - pad + r, w = ow * st - pad + s;
                        gint64 xi[4] = { n, c, h, w };
                        if (h < 0 || h >= xs[2] || w < 0 || w >= xs[3])
                          continue;
                        count++;
                        sum += x.host[at (&x, xi)];
                        if (x.host[at (&x, xi)] > best)
                          {
                            best = x.host[at (&x, xi)];
                            best_at = at (&x, xi);
                          }
                      }
                  {
                    gdouble div = mode == ATOMR_POOLING_AVERAGE_INCLUDE_PADDING ? win * win : count;
                    gdouble g = dy.host[at (&dy, yi)];
                    ry[at (&y, yi)] = mode == ATOMR_POOLING_MAX ? best : sum / div;
                    if (mode == ATOMR_POOLING_MAX)
                      rdx[best_at] += g;
                    else
                      for (gint64 r = 0; r < win; r++)
                        for (gint64 s = 0; s < win; s++)
                          {
                            gint64 h = oh * st - pad + r, w = ow * st - pad + s;
                            gint64 xi[4] = { n, c, h, w };
                            if (h >= 0 && h < xs[2] && w >= 0 && w < xs[3])
                              rdx[at (&x, xi)] += g / div;
                          }
                  }
                }
        RUN (atomr_cudnn_actor_pooling_forward_async (f->actor, pool, x.view, y.view, NULL,
                                                      store_result, &res_),
             atomr_cudnn_actor_pooling_forward_finish);
        e1 = rel_error (&y, ry);
        RUN (atomr_cudnn_actor_pooling_backward_async (f->actor, pool, y.view, dy.view, x.view, dx.view,
                                                       NULL, store_result, &res_),
             atomr_cudnn_actor_pooling_backward_finish);
        e2 = rel_error (&dx, rdx);
        g_test_message ("pooling mode %d %s: fwd %.3g, bwd %.3g", mode, nhwc ? "nhwc" : "nchw", e1, e2);
        g_assert_cmpfloat (e1, <=, 1e-6);
        g_assert_cmpfloat (e2, <=, 1e-6);
        operand_clear (&x);
        operand_clear (&y);
        operand_clear (&dy);
        operand_clear (&dx);
      }
}

/* Spatial batch norm: training forward (running statistics, saved mean
 * and inverse deviation), backward from the saved statistics, inference
 * with the running statistics.  f32 NCHW and bf16 NHWC data (f32
 * parameters). */
static void
test_batch_norm (Fixture *f, gconstpointer data)
{
  const gint64 shape[4] = { 4, 6, 5, 7 }, c = shape[1];
  const gint64 m = shape[0] * shape[2] * shape[3];
  const gdouble eps = 1e-5, momentum = 0.25;

  SKIP_WITHOUT_DEVICE (f);
  for (guint variant = 0; variant < 2; variant++)
    {
      AtomrDtype dtype = variant ? ATOMR_DTYPE_BF16 : ATOMR_DTYPE_F32;
      gboolean nhwc = variant == 1;
      gdouble tol = variant ? 2e-2 : 1e-5;
      Operand x, y, dy, dx, sc, bi, rm, rv, sm, si, ds, db, yi;
      g_autofree gdouble *ry = NULL, *rdx = NULL, *ryi = NULL;
      gdouble mean[6], var[6], inv[6], rrm[6], rrv[6], rds[6], rdb[6];
      gdouble e[8];

      operand_init (f, &x, dtype, shape, 4, nhwc, TRUE);
      operand_init (f, &y, dtype, shape, 4, nhwc, FALSE);
      operand_init (f, &yi, dtype, shape, 4, nhwc, FALSE);
      operand_init (f, &dy, dtype, shape, 4, nhwc, TRUE);
      operand_init (f, &dx, dtype, shape, 4, nhwc, FALSE);
      operand_init (f, &sc, ATOMR_DTYPE_F32, &c, 1, FALSE, TRUE);
      operand_init (f, &bi, ATOMR_DTYPE_F32, &c, 1, FALSE, TRUE);
      operand_init (f, &rm, ATOMR_DTYPE_F32, &c, 1, FALSE, TRUE);
      operand_init (f, &rv, ATOMR_DTYPE_F32, &c, 1, FALSE, TRUE);
      /* a variance must be positive */
      for (gint64 i = 0; i < c; i++)
        rv.host[i] = fabs (rv.host[i]);
      {
        g_autoptr(GBytes) b = NULL;
        g_autofree gfloat *v = g_new (gfloat, c);
        for (gint64 i = 0; i < c; i++)
          v[i] = (gfloat) rv.host[i];
        b = g_bytes_new (v, sizeof (gfloat) * c);
        g_assert_true (atomr_buffer_upload_sync (rv.buffer, b, NULL, NULL));
      }
      operand_init (f, &sm, ATOMR_DTYPE_F32, &c, 1, FALSE, FALSE);
      operand_init (f, &si, ATOMR_DTYPE_F32, &c, 1, FALSE, FALSE);
      operand_init (f, &ds, ATOMR_DTYPE_F32, &c, 1, FALSE, FALSE);
      operand_init (f, &db, ATOMR_DTYPE_F32, &c, 1, FALSE, FALSE);

      ry = g_new0 (gdouble, x.n);
      rdx = g_new0 (gdouble, x.n);
      ryi = g_new0 (gdouble, x.n);
      for (gint64 ch = 0; ch < c; ch++)
        {
          gdouble sum = 0, sq = 0, sdy = 0, sdyx = 0;
#define EACH(body) \
          for (gint64 n = 0; n < shape[0]; n++) \
            for (gint64 h = 0; h < shape[2]; h++) \
              for (gint64 w = 0; w < shape[3]; w++) \
                { gint64 li[4] = { n, ch, h, w }; gsize o = at (&x, li); body; }
          EACH (sum += x.host[o]);
          mean[ch] = sum / m;
          EACH (sq += (x.host[o] - mean[ch]) * (x.host[o] - mean[ch]));
          var[ch] = sq / m;
          inv[ch] = 1 / sqrt (var[ch] + eps);
          rrm[ch] = (1 - momentum) * rm.host[ch] + momentum * mean[ch];
          rrv[ch] = (1 - momentum) * rv.host[ch] + momentum * sq / (m - 1);
          EACH (ry[o] = sc.host[ch] * (x.host[o] - mean[ch]) * inv[ch] + bi.host[ch]);
          EACH (sdy += dy.host[o]; sdyx += dy.host[o] * (x.host[o] - mean[ch]) * inv[ch]);
          rdb[ch] = sdy;
          rds[ch] = sdyx;
          EACH (rdx[o] = sc.host[ch] * inv[ch] / m *
                         (m * dy.host[o] - sdy - (x.host[o] - mean[ch]) * inv[ch] * sdyx));
          EACH (ryi[o] = sc.host[ch] * (x.host[o] - rrm[ch]) / sqrt (rrv[ch] + eps) + bi.host[ch]);
#undef EACH
        }

      RUN (atomr_cudnn_actor_batch_norm_forward_training_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, eps,
                                                                momentum, x.view, sc.view, bi.view, y.view,
                                                                rm.view, rv.view, sm.view, si.view, NULL,
                                                                store_result, &res_),
           atomr_cudnn_actor_batch_norm_forward_training_finish);
      e[0] = rel_error (&y, ry);
      e[1] = rel_error (&rm, rrm);
      e[2] = rel_error (&rv, rrv);
      e[3] = rel_error (&sm, mean);
      e[4] = rel_error (&si, inv);
      RUN (atomr_cudnn_actor_batch_norm_backward_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, eps, x.view,
                                                        dy.view, sc.view, sm.view, si.view, dx.view,
                                                        ds.view, db.view, NULL, store_result, &res_),
           atomr_cudnn_actor_batch_norm_backward_finish);
      e[5] = MAX (rel_error (&dx, rdx), MAX (rel_error (&ds, rds), rel_error (&db, rdb)));
      RUN (atomr_cudnn_actor_batch_norm_forward_inference_async (f->actor, ATOMR_BATCH_NORM_SPATIAL, eps,
                                                                 x.view, sc.view, bi.view, rm.view, rv.view,
                                                                 yi.view, NULL, store_result, &res_),
           atomr_cudnn_actor_batch_norm_forward_inference_finish);
      e[6] = rel_error (&yi, ryi);
      g_test_message ("batch norm %s: y %.3g, running mean %.3g, running var %.3g, saved mean %.3g, "
                      "saved inv %.3g, backward %.3g, inference %.3g (bound %.1g)",
                      atomr_dtype_get_name (dtype), e[0], e[1], e[2], e[3], e[4], e[5], e[6], tol);
      for (guint i = 0; i < 7; i++)
        g_assert_cmpfloat (e[i], <=, i == 5 ? tol * 4 : tol);

      operand_clear (&x); operand_clear (&y); operand_clear (&yi); operand_clear (&dy);
      operand_clear (&dx); operand_clear (&sc); operand_clear (&bi); operand_clear (&rm);
      operand_clear (&rv); operand_clear (&sm); operand_clear (&si); operand_clear (&ds);
      operand_clear (&db);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (path_cases); i++)
    {
      PathCase *pc = &path_cases[i];
      g_autofree gchar *path = NULL;

      pc->conv = &conv_cases[i / 2];
      pc->legacy = i % 2;
      path = g_strdup_printf ("/gpu-cudnn/convolution/%s%s", pc->conv->name, pc->legacy ? "-legacy" : "");
      g_test_add (path, Fixture, pc, fixture_setup, test_convolution, fixture_teardown);
    }
  g_test_add ("/gpu-cudnn/backend-pack", Fixture, NULL, fixture_setup, test_backend_pack, fixture_teardown);
  g_test_add ("/gpu-cudnn/autotune-eviction", Fixture, NULL, fixture_setup, test_autotune_and_eviction,
              fixture_teardown);
  g_test_add ("/gpu-cudnn/activation", Fixture, NULL, fixture_setup, test_activation, fixture_teardown);
  g_test_add ("/gpu-cudnn/softmax", Fixture, NULL, fixture_setup, test_softmax, fixture_teardown);
  g_test_add ("/gpu-cudnn/pooling", Fixture, NULL, fixture_setup, test_pooling, fixture_teardown);
  g_test_add ("/gpu-cudnn/batch-norm", Fixture, NULL, fixture_setup, test_batch_norm, fixture_teardown);
  return g_test_run ();
}
