/* test-cudnn-graph.c — AtomrCudnnGraph without a GPU
 *
 * The builder checks every node as it is added (ids, virtual tensors read
 * before they are written, a tensor written twice or written after it was
 * read, shapes, dtypes, broadcasting) and the whole graph when it is
 * finalized (dangling tensors, virtual outputs nobody reads); errors name
 * the node and the tensor.  Keys: graphs built with the same calls have
 * equal keys whatever their names; any difference in a dtype, extent,
 * stride, virtuality, node kind, mode, operand or convolution attribute
 * gives a different key; scale factors (passed by value) do not.  A bare
 * g_object_new() graph is usable.  On the mock device the actor checks the
 * views of an execution (ids, dtypes, shapes, strides, aliasing, a
 * finalized graph) and answers a valid request with NOT_SUPPORTED.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>

#define CUDNN_TEST_MOCK_FIXTURE
#include "cudnn-validation-util.h"

#define F32     ATOMR_DTYPE_F32
#define F16     ATOMR_DTYPE_F16

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

/* ------------------------------------------------------------------ */
/* A described graph: conv → + bias → relu (NHWC), with knobs for the key
 * tests. */

typedef struct {
  AtomrDtype dtype;
  gint64     c, k, hw, pad;
  gboolean   nchw;           /* packed NCHW strides instead of NHWC */
  gboolean   gelu;           /* gelu instead of relu */
  gboolean   real_conv_out;  /* the conv output a real tensor, not virtual */
  gdouble    scale;          /* > 0: a scale node after the activation */
} Spec;

static void
strides_of (const Spec *s, const gint64 *d, gint64 *st)
{
  if (s->nchw)
    {
      st[3] = 1; st[2] = d[3]; st[1] = d[2] * d[3]; st[0] = d[1] * d[2] * d[3];
    }
  else
    {
      st[1] = 1; st[3] = d[1]; st[2] = d[1] * d[3]; st[0] = d[1] * d[2] * d[3];
    }
}

static AtomrCudnnGraph *
build (const Spec *s, const gchar *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (s->pad, s->pad, 1, 1, 1, 1);
  AtomrCudnnGraph *g = atomr_cudnn_graph_new (name);
  gint64 out = s->hw + 2 * s->pad - 2;
  const gint64 xd[4] = { 2, s->c, s->hw, s->hw }, wd[4] = { s->k, s->c, 3, 3 };
  const gint64 yd[4] = { 2, s->k, out, out }, bd[4] = { 1, s->k, 1, 1 };
  gint64 xs[4], ws[4], ys[4], bs[4];
  guint x, w, b, c, cb, y, z = 0;

  strides_of (s, xd, xs);
  strides_of (s, wd, ws);
  strides_of (s, yd, ys);
  strides_of (s, bd, bs);
  x = atomr_cudnn_graph_add_tensor_full (g, "x", s->dtype, xd, 4, xs, 4, FALSE, &error);
  w = atomr_cudnn_graph_add_tensor_full (g, "w", s->dtype, wd, 4, ws, 4, FALSE, &error);
  b = atomr_cudnn_graph_add_tensor_full (g, "b", s->dtype, bd, 4, bs, 4, FALSE, &error);
  c = atomr_cudnn_graph_add_tensor_full (g, "conv", F32, yd, 4, ys, 4, !s->real_conv_out, &error);
  cb = atomr_cudnn_graph_add_tensor_full (g, "biased", F32, yd, 4, ys, 4, TRUE, &error);
  if (s->scale > 0)
    z = atomr_cudnn_graph_add_tensor_full (g, "act", F32, yd, 4, ys, 4, TRUE, &error);
  y = atomr_cudnn_graph_add_tensor_full (g, "y", s->dtype, yd, 4, ys, 4, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (x, ==, 1);
  g_assert_cmpuint (y, ==, atomr_cudnn_graph_get_n_tensors (g));
  g_assert_true (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w, c, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_BIAS, c, b, cb, &error));
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, s->gelu ? ATOMR_CUDNN_POINTWISE_GELU
                                                             : ATOMR_CUDNN_POINTWISE_RELU,
                                                  cb, 0, s->scale > 0 ? z : y, &error));
  if (s->scale > 0)
    g_assert_true (atomr_cudnn_graph_add_scale (g, z, s->scale, y, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  return g;
}

static const Spec base = { F16, 16, 32, 6, 1, FALSE, FALSE, FALSE, 0 };

static gboolean
same_key (AtomrCudnnGraph *a, AtomrCudnnGraph *b)
{
  g_autoptr(GBytes) ka = atomr_cudnn_graph_get_key (a);
  g_autoptr(GBytes) kb = atomr_cudnn_graph_get_key (b);

  return g_bytes_equal (ka, kb);
}

static void
test_keys (void)
{
  g_autoptr(AtomrCudnnGraph) a = build (&base, "first");
  g_autoptr(AtomrCudnnGraph) a2 = build (&base, "second name, same graph");
  Spec variants[8];
  guint n = 0;

  g_assert_true (same_key (a, a2));
  g_assert_true (atomr_cudnn_graph_get_finalized (a));
  g_assert_cmpuint (atomr_cudnn_graph_get_n_nodes (a), ==, 3);

  variants[n] = base; variants[n++].dtype = ATOMR_DTYPE_BF16;    /* dtype */
  variants[n] = base; variants[n++].c = 8;                       /* shape */
  variants[n] = base; variants[n++].hw = 8;                      /* shape */
  variants[n] = base; variants[n++].nchw = TRUE;                 /* strides */
  variants[n] = base; variants[n++].gelu = TRUE;                 /* op mode */
  variants[n] = base; variants[n].pad = 0; variants[n++].hw = 8; /* attribute (and shape) */
  variants[n] = base; variants[n++].real_conv_out = TRUE;        /* virtuality */
  variants[n] = base; variants[n++].scale = 0.5;                 /* one node more */
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(AtomrCudnnGraph) v = build (&variants[i], "variant");
      g_autoptr(AtomrCudnnGraph) v2 = build (&variants[i], "variant again");
      g_assert_false (same_key (a, v));
      g_assert_true (same_key (v, v2));
      for (guint j = 0; j < i; j++)
        {
          g_autoptr(AtomrCudnnGraph) other = build (&variants[j], "other");
          g_assert_false (same_key (other, v));
        }
    }
  /* the scale factor is passed by value: not part of the key */
  {
    Spec s1 = base, s2 = base;
    s1.scale = 0.5;
    s2.scale = 2.0;
    g_autoptr(AtomrCudnnGraph) g1 = build (&s1, "s1");
    g_autoptr(AtomrCudnnGraph) g2 = build (&s2, "s2");
    g_assert_true (same_key (g1, g2));
  }
}

/* A convolution attribute alone (stride, dilation, same shapes
 * otherwise) changes the key. */
static void
test_key_conv_attributes (void)
{
  GBytes *keys[3] = { NULL, };
  const gint64 xd[4] = { 1, 4, 9, 9 }, wd[4] = { 4, 4, 3, 3 }, yd[4] = { 1, 4, 5, 5 };

  /* pad 1, stride 2 / pad 2, stride 2, dilation 2 / pad 0, stride 1, dilation 2: all 5 × 5 */
  const gint64 params[3][3] = { { 1, 2, 1 }, { 2, 2, 2 }, { 0, 1, 2 } };
  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new (NULL);
      g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (params[i][0], params[i][0], params[i][1],
                                                                   params[i][1], params[i][2], params[i][2]);
      guint x = atomr_cudnn_graph_add_tensor_full (g, "x", F32, xd, 4, NULL, 0, FALSE, &error);
      guint w = atomr_cudnn_graph_add_tensor_full (g, "w", F32, wd, 4, NULL, 0, FALSE, &error);
      guint y = atomr_cudnn_graph_add_tensor_full (g, "y", F32, yd, 4, NULL, 0, FALSE, &error);

      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w, y, &error));
      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_graph_finalize (g, &error));
      keys[i] = atomr_cudnn_graph_get_key (g);
      for (guint j = 0; j < i; j++)
        g_assert_false (g_bytes_equal (keys[i], keys[j]));
    }
  for (guint i = 0; i < 3; i++)
    g_bytes_unref (keys[i]);
}

/* ------------------------------------------------------------------ */

static void
test_bare (void)
{
  g_autoptr(AtomrCudnnGraph) g = g_object_new (ATOMR_TYPE_CUDNN_GRAPH, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) key = atomr_cudnn_graph_get_key (g);
  g_autofree gchar *name = NULL;
  const gint64 shape[2] = { 2, 3 };

  g_assert_cmpstr (atomr_cudnn_graph_get_name (g), ==, "graph");
  g_object_get (g, "name", &name, NULL);
  g_assert_cmpstr (name, ==, "graph");
  g_assert_nonnull (key);
  g_assert_cmpuint (atomr_cudnn_graph_get_n_tensors (g), ==, 0);
  g_assert_false (atomr_cudnn_graph_get_finalized (g));
  g_assert_false (atomr_cudnn_graph_finalize (g, &error));
  expect_error (error, INVALID, "has no nodes");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, 1, 0, 2, &error));
  expect_error (error, INVALID, "the graph has tensors 1 to 0");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor (g, "x", NULL, &error), ==, 0);
  expect_error (error, INVALID, "NULL view");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, NULL, 1, 2, 3, &error));
  expect_error (error, INVALID, "parameters are NULL");
  g_clear_error (&error);
  /* unnamed tensors are called t<id> */
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, NULL, F32, shape, 2, NULL, 0, FALSE, &error), ==, 1);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_cudnn_graph_lookup_tensor (g, "t1"), ==, 1);
  g_assert_cmpuint (atomr_cudnn_graph_lookup_tensor (g, "nope"), ==, 0);
  g_assert_cmpuint (atomr_cudnn_graph_lookup_tensor (g, NULL), ==, 0);
  g_assert_false (atomr_cudnn_graph_get_tensor_is_virtual (g, 1));
  g_assert_false (atomr_cudnn_graph_get_tensor_is_virtual (g, 7));
}

static void
test_tensor_validation (void)
{
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("tensors");
  g_autoptr(GError) error = NULL;
  const gint64 shape[2] = { 2, 3 }, bad_shape[2] = { 2, 0 }, bad_strides[2] = { 3, -1 };
  const gint64 big[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };

  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "x", F32, shape, 2, NULL, 0, FALSE, &error), ==, 1);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "x", F32, shape, 2, NULL, 0, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "already a tensor called 'x'");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "i", ATOMR_DTYPE_I32, shape, 2, NULL, 0, FALSE,
                                                       &error), ==, 0);
  expect_error (error, INVALID, "tensor 'i' has dtype i32");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "z", F32, bad_shape, 2, NULL, 0, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "tensor 'z' dimension 1 is 0");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "s", F32, shape, 2, bad_strides, 2, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "tensor 's' stride 1 is -1");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "n", F32, shape, 2, bad_strides, 1, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "2 dimensions but 1 strides");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "big", F32, big, 9, NULL, 0, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "tensor 'big' has 9 dimensions");
  g_clear_error (&error);
  g_assert_cmpuint (atomr_cudnn_graph_get_n_tensors (g), ==, 1);
}

static void
test_node_validation (void)
{
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("nodes");
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  const gint64 xd[4] = { 2, 4, 6, 6 }, wd[4] = { 8, 4, 3, 3 }, yd[4] = { 2, 8, 6, 6 }, bad_yd[4] = { 2, 8, 5, 5 };
  const gint64 bd[4] = { 1, 8, 1, 1 }, wide_bd[4] = { 1, 8, 6, 1 }, odd_bd[4] = { 1, 3, 1, 1 };
  const gint64 ad[3] = { 2, 5, 7 }, md[3] = { 2, 7, 3 }, cd[3] = { 2, 5, 3 }, bad_md[3] = { 3, 7, 3 };
  guint x, w, w16, y, ybad, v, v2, b, wide, odd, a, m, c, mbad, r, r2;

  x = atomr_cudnn_graph_add_tensor_full (g, "x", F32, xd, 4, NULL, 0, FALSE, &error);
  w = atomr_cudnn_graph_add_tensor_full (g, "w", F32, wd, 4, NULL, 0, FALSE, &error);
  w16 = atomr_cudnn_graph_add_tensor_full (g, "w16", F16, wd, 4, NULL, 0, FALSE, &error);
  y = atomr_cudnn_graph_add_tensor_full (g, "y", F32, yd, 4, NULL, 0, FALSE, &error);
  ybad = atomr_cudnn_graph_add_tensor_full (g, "ybad", F32, bad_yd, 4, NULL, 0, FALSE, &error);
  v = atomr_cudnn_graph_add_tensor_full (g, "v", F32, yd, 4, NULL, 0, TRUE, &error);
  v2 = atomr_cudnn_graph_add_tensor_full (g, "v2", F32, yd, 4, NULL, 0, TRUE, &error);
  b = atomr_cudnn_graph_add_tensor_full (g, "b", F32, bd, 4, NULL, 0, FALSE, &error);
  wide = atomr_cudnn_graph_add_tensor_full (g, "wide", F32, wide_bd, 4, NULL, 0, FALSE, &error);
  odd = atomr_cudnn_graph_add_tensor_full (g, "odd", F32, odd_bd, 4, NULL, 0, FALSE, &error);
  a = atomr_cudnn_graph_add_tensor_full (g, "a", F32, ad, 3, NULL, 0, FALSE, &error);
  m = atomr_cudnn_graph_add_tensor_full (g, "m", F32, md, 3, NULL, 0, FALSE, &error);
  c = atomr_cudnn_graph_add_tensor_full (g, "c", F32, cd, 3, NULL, 0, FALSE, &error);
  mbad = atomr_cudnn_graph_add_tensor_full (g, "mbad", F32, bad_md, 3, NULL, 0, FALSE, &error);
  r = atomr_cudnn_graph_add_tensor_full (g, "r", F32, bd, 4, NULL, 0, FALSE, &error);
  r2 = atomr_cudnn_graph_add_tensor_full (g, "r2", F32, wide_bd, 4, NULL, 0, FALSE, &error);
  g_assert_no_error (error);

  /* a virtual tensor read before any node writes it */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, v, 0, y, &error));
  expect_error (error, INVALID, "node 0 (pointwise): x is virtual tensor 'v', which no earlier node writes");
  g_clear_error (&error);
  /* dtype mismatch of a convolution's operands */
  g_assert_false (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w16, v, &error));
  expect_error (error, INVALID, "node 0 (convolution): x ('x') is f32 but w ('w16') is f16");
  g_clear_error (&error);
  /* wrong output shape */
  g_assert_false (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w, ybad, &error));
  expect_error (error, INVALID, "tensor 'ybad' is 2×8×5×5");
  g_clear_error (&error);
  /* backward data: dy w → dx, whose forward output must be dy */
  g_assert_false (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_BACKWARD_DATA, conv, ybad, w, x,
                                                     &error));
  expect_error (error, INVALID, "tensor 'ybad' is 2×8×5×5");
  g_clear_error (&error);
  /* the output is also an input */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_ADD, x, b, x, &error));
  expect_error (error, INVALID, "y is tensor 'x', which the node also reads");
  g_clear_error (&error);
  /* operand counts */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_ADD, y, 0, v, &error));
  expect_error (error, INVALID, "take a second operand b");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_TANH, y, b, v, &error));
  expect_error (error, INVALID, "take one operand (b is 8");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, (AtomrCudnnPointwise) 99, y, 0, v, &error));
  expect_error (error, INVALID, "mode 99");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, y, 0, 42, &error));
  expect_error (error, INVALID, "y is tensor id 42");
  g_clear_error (&error);

  /* a valid conv into the virtual v */
  g_assert_true (atomr_cudnn_graph_add_convolution (g, ATOMR_CUDNN_CONV_FORWARD, conv, x, w, v, &error));
  g_assert_no_error (error);
  /* v is written: a second writer is refused */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, y, 0, v, &error));
  expect_error (error, INVALID, "node 1 (pointwise): y is tensor 'v', which node 0 already writes");
  g_clear_error (&error);
  /* broadcasting: b of 1 × 3 × 1 × 1 is not 1 or 8; a bias with two wide extents */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_ADD, v, odd, v2, &error));
  expect_error (error, INVALID, "b ('odd', 1×3×1×1) does not broadcast to x ('v', 2×8×6×6)");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_BIAS, v, wide, v2, &error));
  expect_error (error, INVALID, "the bias 'wide' is 1×8×6×1");
  g_clear_error (&error);
  /* an add of a broadcasting tensor is fine; the shape of y must be x's */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_ADD, v, wide, b, &error));
  expect_error (error, INVALID, "y ('b', 1×8×1×1) must have the shape of x ('v', 2×8×6×6)");
  g_clear_error (&error);
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_BIAS, v, b, v2, &error));
  g_assert_no_error (error);
  /* scale: finite */
  g_assert_false (atomr_cudnn_graph_add_scale (g, v2, INFINITY, y, &error));
  expect_error (error, INVALID, "scale is inf");
  g_clear_error (&error);
  g_assert_true (atomr_cudnn_graph_add_scale (g, v2, 0.25, y, &error));
  g_assert_no_error (error);
  /* y was written; reading it is fine, writing x (read by node 0) is not */
  g_assert_false (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, y, 0, x, &error));
  expect_error (error, INVALID, "y is tensor 'x', which an earlier node reads");
  g_clear_error (&error);

  /* matmul */
  g_assert_false (atomr_cudnn_graph_add_matmul (g, a, x, c, &error));
  expect_error (error, INVALID, "b ('x') has 4 dimensions");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_matmul (g, a, mbad, c, &error));
  expect_error (error, INVALID, "a ('a') is 2×5×7, b ('mbad') 3×7×3 and c ('c') 2×5×3");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_matmul (g, a, a, c, &error));
  expect_error (error, INVALID, "b ('a') 2×5×7");
  g_clear_error (&error);

  /* reduction */
  g_assert_false (atomr_cudnn_graph_add_reduction (g, ATOMR_CUDNN_REDUCTION_SUM, y, odd, &error));
  expect_error (error, INVALID, "y ('odd', 1×3×1×1) must have x's rank");
  g_clear_error (&error);
  g_assert_true (atomr_cudnn_graph_add_reduction (g, ATOMR_CUDNN_REDUCTION_MAX, y, r, &error));
  g_assert_no_error (error);

  /* finalize: dangling tensors are named (w16 is the first) */
  g_assert_false (atomr_cudnn_graph_finalize (g, &error));
  expect_error (error, INVALID, "tensor 'w16' (id 3) is dangling");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_get_finalized (g));
  (void) m;
  (void) r2;
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

/* A graph whose tensors are all used, but whose virtual output nobody
 * reads, is refused; with the reader added it finalizes and then refuses
 * new tensors and nodes. */
static void
test_finalize (void)
{
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("fin");
  g_autoptr(GError) error = NULL;
  const gint64 d[3] = { 1, 4, 4 };
  guint a, b, v, out;
  guint notified = 0;

  a = atomr_cudnn_graph_add_tensor_full (g, "a", F32, d, 3, NULL, 0, FALSE, &error);
  b = atomr_cudnn_graph_add_tensor_full (g, "b", F32, d, 3, NULL, 0, FALSE, &error);
  v = atomr_cudnn_graph_add_tensor_full (g, "v", F32, d, 3, NULL, 0, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_get_tensor_is_virtual (g, v));
  g_assert_true (atomr_cudnn_graph_add_matmul (g, a, b, v, &error));
  g_assert_false (atomr_cudnn_graph_finalize (g, &error));
  expect_error (error, INVALID, "virtual tensor 'v' (id 3) is written by node 0 but read by no node");
  g_clear_error (&error);
  out = atomr_cudnn_graph_add_tensor_full (g, "out", F32, d, 3, NULL, 0, FALSE, &error);
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_SIGMOID, v, 0, out, &error));
  g_signal_connect (g, "notify::finalized", G_CALLBACK (count_notify), &notified);
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (notified, ==, 1);
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));   /* again: a no-op */
  g_assert_cmpuint (notified, ==, 1);
  g_assert_cmpuint (atomr_cudnn_graph_add_tensor_full (g, "late", F32, d, 3, NULL, 0, FALSE, &error), ==, 0);
  expect_error (error, INVALID, "cannot add a tensor, the graph is finalized");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_reduction (g, ATOMR_CUDNN_REDUCTION_SUM, out, a, &error));
  expect_error (error, INVALID, "cannot add a node, the graph is finalized");
}

/* Norm nodes: their checks; the mode is part of the key, epsilon is not. */
static AtomrCudnnGraph *
norm_graph (AtomrCudnnNorm mode, gdouble epsilon, gboolean with_bias)
{
  g_autoptr(GError) error = NULL;
  AtomrCudnnGraph *g = atomr_cudnn_graph_new ("norm");
  const gint64 xd[4] = { 64, 128, 1, 1 }, pd[4] = { 1, 128, 1, 1 };
  guint x = atomr_cudnn_graph_add_tensor_full (g, "x", F32, xd, 4, NULL, 0, FALSE, &error);
  guint s = atomr_cudnn_graph_add_tensor_full (g, "gamma", F32, pd, 4, NULL, 0, FALSE, &error);
  guint b = with_bias ? atomr_cudnn_graph_add_tensor_full (g, "beta", F32, pd, 4, NULL, 0, FALSE, &error) : 0;
  guint y = atomr_cudnn_graph_add_tensor_full (g, "y", F32, xd, 4, NULL, 0, FALSE, &error);

  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_norm (g, mode, x, s, b, epsilon, y, &error));
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  return g;
}

static void
test_norm (void)
{
  g_autoptr(AtomrCudnnGraph) layer = norm_graph (ATOMR_CUDNN_NORM_LAYER, 1e-5, TRUE);
  g_autoptr(AtomrCudnnGraph) layer_eps = norm_graph (ATOMR_CUDNN_NORM_LAYER, 1e-3, TRUE);
  g_autoptr(AtomrCudnnGraph) rms = norm_graph (ATOMR_CUDNN_NORM_RMS, 1e-5, TRUE);
  g_autoptr(AtomrCudnnGraph) rms_no_bias = norm_graph (ATOMR_CUDNN_NORM_RMS, 1e-5, FALSE);
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("norm checks");
  g_autoptr(GError) error = NULL;
  const gint64 xd[4] = { 64, 128, 1, 1 }, pd[4] = { 1, 128, 1, 1 }, bad_pd[4] = { 64, 128, 1, 1 };
  guint x, s, bad, y;

  g_assert_true (same_key (layer, layer_eps));
  g_assert_false (same_key (layer, rms));
  g_assert_false (same_key (rms, rms_no_bias));

  x = atomr_cudnn_graph_add_tensor_full (g, "x", F32, xd, 4, NULL, 0, FALSE, &error);
  s = atomr_cudnn_graph_add_tensor_full (g, "gamma", F32, pd, 4, NULL, 0, FALSE, &error);
  bad = atomr_cudnn_graph_add_tensor_full (g, "per-row", F32, bad_pd, 4, NULL, 0, FALSE, &error);
  y = atomr_cudnn_graph_add_tensor_full (g, "y", F32, xd, 4, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  g_assert_false (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_LAYER, x, s, 0, 1e-5, y, &error));
  expect_error (error, INVALID, "node 0 (norm): layer norm takes a bias");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_RMS, x, s, 0, 0.0, y, &error));
  expect_error (error, INVALID, "epsilon is 0");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_RMS, x, bad, 0, 1e-5, y, &error));
  expect_error (error, INVALID, "scale ('per-row') is 64×128×1×1; with x ('x') 64×128×1×1 it must be 1 followed");
  g_clear_error (&error);
  g_assert_false (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_LAYER, x, s, y, 1e-5, y, &error));
  expect_error (error, INVALID, "y is tensor 'y', which the node also reads");
  g_clear_error (&error);
  g_assert_true (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_RMS, x, s, 0, 1e-5, y, &error));
  g_assert_no_error (error);
}

static void run (Fixture *f, AtomrCudnnGraph *g, const guint *ids, AtomrTensor **views, guint n, gint code,
                 const gchar *needle);

/* Training-phase norm nodes and their backward nodes: valid graphs
 * finalize; every check names the node and the operand; the saved
 * statistics are part of the key. */
static guint
tensor_of (AtomrCudnnGraph *g, const gchar *name, AtomrDtype dtype, gint64 a, gint64 b, gint64 c, gint64 d)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { a, b, c, d };
  guint id = atomr_cudnn_graph_add_tensor_full (g, name, dtype, shape, 4, NULL, 0, FALSE, &error);

  g_assert_no_error (error);
  return id;
}

/* x 64 × 128 (× 1 × 1): layer norm training, with (@swap) mean and
 * inv_variance given in the other order */
static AtomrCudnnGraph *
layer_training_graph (gboolean swap)
{
  g_autoptr(GError) error = NULL;
  AtomrCudnnGraph *g = atomr_cudnn_graph_new ("ln-train");
  guint x = tensor_of (g, "x", F32, 64, 128, 1, 1), s = tensor_of (g, "gamma", F32, 1, 128, 1, 1);
  guint b = tensor_of (g, "beta", F32, 1, 128, 1, 1), y = tensor_of (g, "y", F32, 64, 128, 1, 1);
  guint m = tensor_of (g, "mean", F32, 64, 1, 1, 1), iv = tensor_of (g, "inv-var", F32, 64, 1, 1, 1);

  g_assert_true (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y,
                                                      swap ? iv : m, swap ? m : iv, &error));
  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  return g;
}

static void
test_norm_training (void)
{
  g_autoptr(AtomrCudnnGraph) lt = layer_training_graph (FALSE);
  g_autoptr(AtomrCudnnGraph) lt_swapped = layer_training_graph (TRUE);
  g_autoptr(AtomrCudnnGraph) infer = norm_graph (ATOMR_CUDNN_NORM_LAYER, 1e-5, TRUE);
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("norm training checks");
  g_autoptr(GError) error = NULL;
  guint x, s, b, y, m, iv, m16, mwide, y2;

  /* which output is the mean is part of the key */
  g_assert_false (same_key (lt, lt_swapped));
  g_assert_false (same_key (lt, infer));

  x = tensor_of (g, "x", F32, 64, 128, 1, 1);
  s = tensor_of (g, "gamma", F32, 1, 128, 1, 1);
  b = tensor_of (g, "beta", F32, 1, 128, 1, 1);
  y = tensor_of (g, "y", F32, 64, 128, 1, 1);
  m = tensor_of (g, "mean", F32, 64, 1, 1, 1);
  iv = tensor_of (g, "inv-var", F32, 64, 1, 1, 1);
  m16 = tensor_of (g, "mean16", F16, 64, 1, 1, 1);
  mwide = tensor_of (g, "mean-wide", F32, 1, 128, 1, 1);
  y2 = tensor_of (g, "y2", F32, 64, 128, 1, 1);

#define REFUSED(call, needle) G_STMT_START {                  \
    g_assert_false (call);                                    \
    expect_error (error, INVALID, needle);                    \
    g_clear_error (&error);                                   \
  } G_STMT_END
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_BATCH, x, s, b, 1e-5, y, m, iv, &error),
           "node 0 (norm training): mode 2 is not a layer or RMS norm (batch norm: add_batch_norm_training)");
  REFUSED (atomr_cudnn_graph_add_norm (g, ATOMR_CUDNN_NORM_BATCH, x, s, b, 1e-5, y, &error),
           "node 0 (norm): mode 2 is not a layer or RMS norm");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, -1, y, m, iv, &error),
           "epsilon is -1");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, 0, iv, &error),
           "layer norm takes a bias and a mean (bias 3, mean 0)");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, m, 0, &error),
           "x, scale, y and inv_variance are required");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_RMS, x, s, 0, 1e-5, y, m, iv, &error),
           "RMS norm subtracts no mean, so it saves none (mean is 5: pass 0)");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, mwide, iv, &error),
           "mean ('mean-wide') is 1×128×1×1; with x ('x') 64×128×1×1 it must be x's rows followed by 1s");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, m16, iv, &error),
           "mean ('mean16') has dtype f16 (takes f32: statistics are f32)");
  {
    /* γ in f16 for f32 x: parameters are x's dtype or f32 */
    guint s16 = tensor_of (g, "gamma16", F16, 1, 128, 1, 1);
    guint y16 = tensor_of (g, "y16", F16, 64, 128, 1, 1);
    REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s16, b, 1e-5, y, m, iv, &error),
             "scale ('gamma16') has dtype f16 (takes x's dtype, f32, or f32)");
    REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y16, m, iv, &error),
             "y ('y16') has dtype f16 (takes f32, x's dtype)");
  }
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, m, m, &error),
           "mean and inv_variance are both tensor 'mean'");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, x, m, iv, &error),
           "x and y are both tensor 'x'");
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, m, 99, &error),
           "inv_variance is tensor id 99");

  g_assert_true (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_LAYER, x, s, b, 1e-5, y, m, iv,
                                                      &error));
  g_assert_no_error (error);
  /* the statistics are written: a second node may not write them */
  REFUSED (atomr_cudnn_graph_add_norm_training (g, ATOMR_CUDNN_NORM_RMS, x, s, 0, 1e-5, y2, 0, iv, &error),
           "node 1 (norm training): inv_variance is tensor 'inv-var', which node 0 already writes");

  /* backward: dy and dx like x, dscale and dbias like gamma */
  {
    guint dy = tensor_of (g, "dy", F32, 64, 128, 1, 1), dx = tensor_of (g, "dx", F32, 64, 128, 1, 1);
    guint ds = tensor_of (g, "dgamma", F32, 1, 128, 1, 1), db = tensor_of (g, "dbeta", F32, 1, 128, 1, 1);
    guint dbad = tensor_of (g, "dgamma-bad", F32, 1, 64, 1, 1);

    REFUSED (atomr_cudnn_graph_add_norm_backward (g, 7, x, dy, s, m, iv, dx, ds, db, &error),
             "node 1 (norm backward): mode 7 is not an AtomrCudnnNorm");
    REFUSED (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_LAYER, x, dy, s, m, iv, dx, ds, 0, &error),
             "layer norm takes a mean and a dbias (mean 5, dbias 0)");
    REFUSED (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_RMS, x, dy, s, m, iv, dx, ds, 0, &error),
             "RMS norm saves no mean (mean is 5: pass 0)");
    REFUSED (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_LAYER, x, dy, s, m, iv, dx, dbad, db,
                                                  &error),
             "dscale ('dgamma-bad') is 1×64×1×1; with x ('x') 64×128×1×1 it must be 1 followed by x's extents");
    REFUSED (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_LAYER, x, dy, s, m, iv, dx, ds, ds,
                                                  &error),
             "dscale and dbias are both tensor 'dgamma'");
    REFUSED (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_LAYER, x, dy, s, m, iv, 0, ds, db, &error),
             "x, dy, scale, inv_variance, dx and dscale are required");
    g_assert_true (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_LAYER, x, dy, s, m, iv, dx, ds, db,
                                                        &error));
    g_assert_no_error (error);
  }
  /* y2 and the others are used by no node: dangling */
  REFUSED (atomr_cudnn_graph_finalize (g, &error), "is dangling");
}

/* Batch norm training: per-channel parameters and statistics, running
 * statistics all or none, momentum in [0, 1]. */
static void
test_batch_norm_training (void)
{
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("bn-train");
  g_autoptr(AtomrCudnnGraph) no_running = atomr_cudnn_graph_new ("bn-train-no-running");
  g_autoptr(GError) error = NULL;
  guint x = tensor_of (g, "x", F32, 4, 8, 5, 5), s = tensor_of (g, "gamma", F32, 1, 8, 1, 1);
  guint b = tensor_of (g, "beta", F32, 1, 8, 1, 1), y = tensor_of (g, "y", F32, 4, 8, 5, 5);
  guint m = tensor_of (g, "mean", F32, 1, 8, 1, 1), iv = tensor_of (g, "inv-var", F32, 1, 8, 1, 1);
  guint rm = tensor_of (g, "running-mean", F32, 1, 8, 1, 1), rv = tensor_of (g, "running-var", F32, 1, 8, 1, 1);
  guint nrm = tensor_of (g, "next-mean", F32, 1, 8, 1, 1), nrv = tensor_of (g, "next-var", F32, 1, 8, 1, 1);
  guint rows = tensor_of (g, "per-row", F32, 4, 1, 1, 1);

  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, 1.5, rm, rv, y, m, iv, nrm, nrv, &error),
           "node 0 (norm training): momentum is 1.5 (takes 0 to 1)");
  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, NAN, rm, rv, y, m, iv, nrm, nrv, &error),
           "momentum is nan");
  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, 0.1, rm, rv, y, m, iv, nrm, 0, &error),
           "the running statistics are all four tensors or none (running_mean 7, running_var 8, "
           "next_running_mean 9, next_running_var 0)");
  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, 0, 1e-5, 0.1, rm, rv, y, m, iv, nrm, nrv, &error),
           "x, scale, bias, y, mean and inv_variance are required");
  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, 0.1, rm, rv, y, rows, iv, nrm, nrv,
                                                      &error),
           "mean ('per-row') is 4×1×1×1; with x ('x') 4×8×5×5 it must be 1 × C × 1 … (x's channels)");
  REFUSED (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, 0.1, rm, rv, y, m, iv, rm, nrv, &error),
           "running_mean and next_running_mean are both tensor 'running-mean' (each operand is its own tensor)");
  g_assert_true (atomr_cudnn_graph_add_batch_norm_training (g, x, s, b, 1e-5, 0.1, rm, rv, y, m, iv, nrm, nrv,
                                                            &error));
  g_assert_no_error (error);
  {
    guint dy = tensor_of (g, "dy", F32, 4, 8, 5, 5), dx = tensor_of (g, "dx", F32, 4, 8, 5, 5);
    guint ds = tensor_of (g, "dgamma", F32, 1, 8, 1, 1), db = tensor_of (g, "dbeta", F32, 1, 8, 1, 1);
    g_assert_true (atomr_cudnn_graph_add_norm_backward (g, ATOMR_CUDNN_NORM_BATCH, x, dy, s, m, iv, dx, ds, db,
                                                        &error));
    g_assert_no_error (error);
  }
  /* per-row is used by nobody */
  REFUSED (atomr_cudnn_graph_finalize (g, &error), "tensor 'per-row' (id 11) is dangling");

  {
    guint x2 = tensor_of (no_running, "x", F32, 4, 8, 5, 5), s2 = tensor_of (no_running, "gamma", F32, 1, 8, 1, 1);
    guint b2 = tensor_of (no_running, "beta", F32, 1, 8, 1, 1), y2 = tensor_of (no_running, "y", F32, 4, 8, 5, 5);
    guint m2 = tensor_of (no_running, "mean", F32, 1, 8, 1, 1);
    guint iv2 = tensor_of (no_running, "inv-var", F32, 1, 8, 1, 1);
    g_assert_true (atomr_cudnn_graph_add_batch_norm_training (no_running, x2, s2, b2, 1e-5, 0.1, 0, 0, y2, m2, iv2,
                                                              0, 0, &error));
    g_assert_no_error (error);
    g_assert_true (atomr_cudnn_graph_finalize (no_running, &error));
    g_assert_no_error (error);
  }
#undef REFUSED
}

/* On the mock device a training graph's views are checked like any
 * other: the saved statistics are outputs (written), so a statistic
 * sharing memory with x is refused; a valid request reaches the enqueue
 * step. */
static void
test_execute_norm_training (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrCudnnGraph) g = layer_training_graph (FALSE);
  g_autoptr(AtomrTensor) x = tensor (f, F32, 64, 128, 1, 1), s = tensor (f, F32, 1, 128, 1, 1);
  g_autoptr(AtomrTensor) b = tensor (f, F32, 1, 128, 1, 1), y = tensor (f, F32, 64, 128, 1, 1);
  g_autoptr(AtomrTensor) m = tensor (f, F32, 64, 1, 1, 1), iv = tensor (f, F32, 64, 1, 1, 1);
  g_autoptr(GError) error = NULL;
  const guint ids[6] = { 1, 2, 3, 4, 5, 6 };
  AtomrTensor *views[6] = { x, s, b, y, m, iv };

  run (f, g, ids, views, 6, NOSUP, "graph 'ln-train' (1 nodes) needs a CUDA device");
  {
    /* the first 64 elements of x's buffer, as a packed 64 × 1 × 1 × 1 */
    const gint64 shape[4] = { 64, 1, 1, 1 }, strides[4] = { 1, 1, 1, 1 };
    g_autoptr(AtomrTensor) first_rows = atomr_tensor_new_strided (atomr_tensor_get_buffer (x), F32, 0, shape, 4,
                                                                  strides, 4, &error);
    AtomrTensor *aliased[6] = { x, s, b, y, first_rows, iv };
    g_assert_no_error (error);
    run (f, g, ids, aliased, 6, INVALID, "ln-train: output mean overlaps input x");
  }
}

/* ------------------------------------------------------------------ */
/* Execution on the mock device                                         */

static void
run (Fixture *f, AtomrCudnnGraph *g, const guint *ids, AtomrTensor **views, guint n, gint code,
     const gchar *needle)
{
  g_autoptr(GError) error = NULL;
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_execute_graph_async (f->actor, g, ids, views, n, NULL, store_result, &res);
  while (res == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (atomr_cudnn_actor_execute_graph_finish (f->actor, res, &error));
  g_clear_object (&res);
  expect_error (error, code, needle);
}

static void
test_execute_validation (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) x = tensor_nhwc (f, F16, 2, 16, 6, 6);
  g_autoptr(AtomrTensor) w = tensor_nhwc (f, F16, 32, 16, 3, 3);
  g_autoptr(AtomrTensor) b = tensor_nhwc (f, F16, 1, 32, 1, 1);
  g_autoptr(AtomrTensor) y = tensor_nhwc (f, F16, 2, 32, 6, 6);
  g_autoptr(AtomrTensor) y_nchw = tensor (f, F16, 2, 32, 6, 6);
  g_autoptr(AtomrTensor) y32 = tensor_nhwc (f, F32, 2, 32, 6, 6);
  g_autoptr(AtomrTensor) x_big = tensor_nhwc (f, F16, 2, 16, 8, 8);
  g_autoptr(AtomrCudnnGraph) open = atomr_cudnn_graph_new ("open");
  g_autoptr(AtomrCudnnGraph) g = build (&base, "conv-bias-relu");
  const guint ids[4] = { 1, 2, 3, 7 };
  AtomrTensor *views[4] = { x, w, b, y };

  /* the ids as build() numbers them: x 1, w 2, b 3, conv 4, biased 5, y 6 */
  g_assert_cmpuint (atomr_cudnn_graph_lookup_tensor (g, "y"), ==, 6);

  run (f, open, NULL, NULL, 0, INVALID, "graph 'open' is not finalized");
  run (f, NULL, NULL, NULL, 0, INVALID, "the graph is NULL");
  run (f, g, NULL, views, 4, INVALID, "4 views but the ids or the views are NULL");
  run (f, g, ids, views, 4, INVALID, "ids[3] is 7 (the graph has tensors 1 to 6)");
  {
    const guint virt[4] = { 1, 2, 3, 4 };
    run (f, g, virt, views, 4, INVALID, "ids[3] is virtual tensor 'conv'");
  }
  {
    const guint twice[4] = { 1, 2, 2, 6 };
    run (f, g, twice, views, 4, INVALID, "tensor 'w' is given two views");
  }
  {
    const guint some[3] = { 1, 2, 6 };
    AtomrTensor *v3[3] = { x, w, y };
    run (f, g, some, v3, 3, INVALID, "tensor 'b' (id 3) has no view");
  }
  {
    const guint ok_ids[4] = { 1, 2, 3, 6 };
    AtomrTensor *wrong_dtype[4] = { x, w, b, y32 };
    AtomrTensor *wrong_stride[4] = { x, w, b, y_nchw };
    AtomrTensor *wrong_shape[4] = { x_big, w, b, y };
    AtomrTensor *null_view[4] = { x, NULL, b, y };

    run (f, g, ok_ids, wrong_dtype, 4, INVALID, "the view of tensor 'y' has dtype f32 (the graph says f16)");
    run (f, g, ok_ids, wrong_stride, 4, INVALID, "the view of tensor 'y' has stride");
    run (f, g, ok_ids, wrong_shape, 4, INVALID, "the view of tensor 'x' has dimension 2 = 8 (the graph says 6");
    run (f, g, ok_ids, null_view, 4, INVALID, "the view of tensor 'w' is NULL");
  }
  {
    /* the valid request: checked, then NOT_SUPPORTED on the mock device */
    const guint ok_ids[4] = { 6, 3, 2, 1 };     /* any order */
    AtomrTensor *ok_views[4] = { y, b, w, x };
    guint64 misses = 0;

    run (f, g, ok_ids, ok_views, 4, NOSUP, "graph 'conv-bias-relu' (3 nodes) needs a CUDA device");
    g_object_get (f->actor, "cache-misses", &misses, NULL);
    g_assert_cmpuint (misses, ==, 0);
  }
  g_assert_no_error (error);
}

/* An output that shares memory with an input is refused. */
static void
test_execute_alias (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) x = tensor (f, F32, 1, 4, 4, 4);
  g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("in-place relu");
  guint in = atomr_cudnn_graph_add_tensor (g, "in", x, &error);
  guint out = atomr_cudnn_graph_add_tensor (g, "out", x, &error);
  const guint ids[2] = { in, out };
  AtomrTensor *views[2] = { x, x };

  g_assert_no_error (error);
  g_assert_true (atomr_cudnn_graph_add_pointwise (g, ATOMR_CUDNN_POINTWISE_RELU, in, 0, out, &error));
  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  run (f, g, ids, views, 2, INVALID, "in-place relu: output out overlaps input in");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cudnn-graph/bare", test_bare);
  g_test_add_func ("/cudnn-graph/tensor-validation", test_tensor_validation);
  g_test_add_func ("/cudnn-graph/node-validation", test_node_validation);
  g_test_add_func ("/cudnn-graph/finalize", test_finalize);
  g_test_add_func ("/cudnn-graph/keys", test_keys);
  g_test_add_func ("/cudnn-graph/key-conv-attributes", test_key_conv_attributes);
  g_test_add_func ("/cudnn-graph/norm", test_norm);
  g_test_add_func ("/cudnn-graph/norm-training", test_norm_training);
  g_test_add_func ("/cudnn-graph/batch-norm-training", test_batch_norm_training);
  g_test_add ("/cudnn-graph/execute-norm-training", Fixture, NULL, fixture_setup, test_execute_norm_training,
              fixture_teardown);
  g_test_add ("/cudnn-graph/execute-validation", Fixture, NULL, fixture_setup, test_execute_validation,
              fixture_teardown);
  g_test_add ("/cudnn-graph/execute-alias", Fixture, NULL, fixture_setup, test_execute_alias,
              fixture_teardown);
  return g_test_run ();
}
