/* test-cudnn-descriptors.c — backend graphs against the real cuDNN,
 * without a GPU: the convolution path and AtomrCudnnGraph's norm nodes
 *
 * The cuDNN actor runs convolutions as backend execution plans of one
 * convolution operation.  Tensor, convolution and operation descriptors
 * are host objects: cuDNN finalizes (checks) them without a device, so
 * every attribute the path sets (dims, strides, byte alignment, the
 * filter layout, padding, stride, dilation, groups through the filter's
 * channels, the compute type, alpha and beta in f32 or f64) is checked
 * here by cuDNN itself for the three passes, 2-D and 3-D, each dtype,
 * NCHW and NHWC, misaligned views and beta ≠ 0; and AtomrCudnnGraph's
 * convolution nodes in each direction.  The same for the norm
 * nodes of AtomrCudnnGraph: layer and RMS norm training (f32, bf16),
 * batch norm training with and without running statistics, and their
 * backward nodes (norm modes, phases, saved and running statistics, the
 * by-value epsilon and momentum).  Only the execution plan (heuristics,
 * engine finalization) needs the GPU: test-gpu-cudnn, test-gpu-cudnn-graph.
 *
 * Skips when cuDNN cannot be loaded.  No valgrind run in the suite: the
 * dlopen() of cuDNN makes ld.so report strncmp over-reads while it expands
 * cuDNN's rpath (the loader's, not ours); run by hand, valgrind
 * --leak-check=full finds 0 bytes definitely lost.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-cudnn-table-private.h"

#include <atomr.h>
#include "actors/cudnn/atomr-cudnn-ext-private.h"

#define CUDNN_TEST_MOCK_FIXTURE
#include "cudnn-validation-util.h"

static gboolean
have_cudnn (void)
{
  g_autoptr(GError) error = NULL;

  if (atomr_cudnn_load (&error))
    return TRUE;
  g_test_skip (error->message);
  return FALSE;
}

/* A logical N × C × spatial view of @shape, stored channels-last when
 * @nhwc, starting @offset elements into its buffer. */
static AtomrTensor *
view (Fixture *f, AtomrDtype dtype, const gint64 *shape, guint n, gboolean nhwc, guint64 offset)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  gint64 strides[5], acc = 1, count = 1;
  AtomrTensor *t;

  for (guint i = 0; i < n; i++)
    count *= shape[i];
  buffer = atomr_buffer_new (f->device, dtype, count + offset, &error);
  g_assert_no_error (error);
  if (nhwc)
    {
      strides[1] = 1;
      acc = shape[1];
      for (gint i = (gint) n - 1; i >= 2; i--)
        {
          strides[i] = acc;
          acc *= shape[i];
        }
      strides[0] = acc;
    }
  else
    for (gint i = (gint) n - 1; i >= 0; i--)
      {
        strides[i] = acc;
        acc *= shape[i];
      }
  t = atomr_tensor_new_strided (buffer, dtype, offset * atomr_dtype_get_size (dtype), shape, n, strides, n,
                                &error);
  g_assert_no_error (error);
  return t;
}

typedef struct {
  const gchar *name;
  AtomrDtype   dtype;
  gboolean     nhwc;
  guint        n_spatial;
  gint64       n, c, k, size, filter, pad, stride, dilation;
  guint        groups;
  guint64      offset;     /* elements: a misaligned view when odd */
  AtomrCudnnMath math;
} Case;

static const Case cases[] = {
  { "bf16-nhwc-resnet", ATOMR_DTYPE_BF16, TRUE, 2, 2, 32, 32, 8, 3, 1, 1, 1, 1, 0, ATOMR_CUDNN_MATH_DEFAULT },
  { "f16-nhwc-misaligned", ATOMR_DTYPE_F16, TRUE, 2, 2, 16, 16, 8, 3, 1, 1, 1, 1, 1, ATOMR_CUDNN_MATH_DEFAULT },
  { "f32-nchw-s2-d2-g2-fma", ATOMR_DTYPE_F32, FALSE, 2, 2, 8, 12, 11, 3, 2, 2, 2, 2, 0, ATOMR_CUDNN_MATH_FMA },
  { "bf16-nchw-depthwise", ATOMR_DTYPE_BF16, FALSE, 2, 2, 16, 16, 7, 3, 1, 1, 1, 16, 0, ATOMR_CUDNN_MATH_DEFAULT },
  { "f64-nchw-s2", ATOMR_DTYPE_F64, FALSE, 2, 2, 4, 6, 9, 3, 0, 2, 1, 1, 0, ATOMR_CUDNN_MATH_DEFAULT },
  { "f32-3d-nhwc", ATOMR_DTYPE_F32, TRUE, 3, 2, 4, 8, 6, 3, 1, 1, 1, 1, 0, ATOMR_CUDNN_MATH_DEFAULT },
};

static void
test_graphs (Fixture *f, gconstpointer data)
{
  const Case *cc = data;
  guint nd = cc->n_spatial + 2;
  gint64 xs[5], ws[5], ys[5], pad[3], stride[3], dil[3];
  gint64 out = (cc->size + 2 * cc->pad - cc->dilation * (cc->filter - 1) - 1) / cc->stride + 1;
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new (cc->n_spatial);
  g_autoptr(AtomrTensor) x = NULL, w = NULL, y = NULL;
  g_autoptr(GError) error = NULL;
  static const gdouble ab[][2] = { { 1.0, 0.0 }, { 0.5, 1.0 } };

  if (!have_cudnn ())
    return;
  xs[0] = ys[0] = cc->n;
  xs[1] = cc->c;
  ys[1] = ws[0] = cc->k;
  ws[1] = cc->c / cc->groups;
  for (guint i = 0; i < cc->n_spatial; i++)
    {
      xs[i + 2] = cc->size;
      ws[i + 2] = cc->filter;
      ys[i + 2] = out;
      pad[i] = cc->pad;
      stride[i] = cc->stride;
      dil[i] = cc->dilation;
    }
  g_assert_true (atomr_convolution_set_padding (conv, pad, cc->n_spatial, &error));
  g_assert_true (atomr_convolution_set_stride (conv, stride, cc->n_spatial, &error));
  g_assert_true (atomr_convolution_set_dilation (conv, dil, cc->n_spatial, &error));
  atomr_convolution_set_groups (conv, cc->groups);
  atomr_convolution_set_math (conv, cc->math);
  x = view (f, cc->dtype, xs, nd, cc->nhwc, cc->offset);
  w = view (f, cc->dtype, ws, nd, cc->nhwc, 0);
  y = view (f, cc->dtype, ys, nd, cc->nhwc, cc->offset);

  for (guint pass = 0; pass < 3; pass++)
    for (guint i = 0; i < G_N_ELEMENTS (ab); i++)
      {
        g_autoptr(AtomrCudnnBackendGraph) g =
          atomr_cudnn_actor_conv_backend_graph_internal (f->actor, pass, conv, ab[i][0], x, w, y, ab[i][1],
                                                         &error);
        g_assert_no_error (error);
        g_assert_nonnull (g);
        g_assert_cmpuint (atomr_cudnn_backend_graph_get_n_operations (g), ==, 1);
      }
}

/* The internal entry validates as the _async calls do. */
static void
test_refused (Fixture *f, gconstpointer data)
{
  const gint64 xs[4] = { 1, 8, 8, 8 }, ws[4] = { 8, 4, 3, 3 }, ys[4] = { 1, 8, 8, 8 };
  g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
  g_autoptr(AtomrTensor) x = NULL, w = NULL, y = NULL;
  g_autoptr(GError) error = NULL;
  AtomrCudnnBackendGraph *g;

  if (!have_cudnn ())
    return;
  x = view (f, ATOMR_DTYPE_F32, xs, 4, FALSE, 0);
  w = view (f, ATOMR_DTYPE_F32, ws, 4, FALSE, 0);
  y = view (f, ATOMR_DTYPE_F32, ys, 4, FALSE, 0);
  /* 8 channels against a filter of 4 per group, one group */
  g = atomr_cudnn_actor_conv_backend_graph_internal (f->actor, 0, conv, 1.0, x, w, y, 0.0, &error);
  g_assert_null (g);
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

static guint
add (AtomrCudnnGraph *g, const gchar *name, AtomrDtype dtype, gint64 a, gint64 b, gint64 c, gint64 d)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[4] = { a, b, c, d };
  guint id = atomr_cudnn_graph_add_tensor_full (g, name, dtype, shape, 4, NULL, 0, FALSE, &error);

  g_assert_no_error (error);
  return id;
}

/* Finalizes @g and has cuDNN finalize its backend descriptors. */
static void
check_backend (AtomrCudnnGraph *g, guint n_ops)
{
  g_autoptr(GError) error = NULL;
  g_autofree gint64 *alignments = NULL;
  g_autoptr(AtomrCudnnBackendGraph) b = NULL;

  g_assert_true (atomr_cudnn_graph_finalize (g, &error));
  g_assert_no_error (error);
  alignments = g_new (gint64, atomr_cudnn_graph_get_n_tensors (g));
  for (guint i = 0; i < atomr_cudnn_graph_get_n_tensors (g); i++)
    alignments[i] = 16;
  b = atomr_cudnn_graph_build_backend_internal (g, alignments, &error);
  g_assert_no_error (error);
  g_assert_nonnull (b);
  g_assert_cmpuint (atomr_cudnn_backend_graph_get_n_operations (b), ==, n_ops);
}

/* Layer and RMS norm training and backward, rows × hidden. */
static void
test_norm_layer_rms (gconstpointer data)
{
  /* the dtype, and in bit 8 whether γ, β and their gradients are f32 */
  AtomrDtype dtype = GPOINTER_TO_INT (data) & 0xff;
  AtomrDtype pdt = (GPOINTER_TO_INT (data) & 0x100) ? ATOMR_DTYPE_F32 : dtype;

  if (!have_cudnn ())
    return;
  for (guint rms = 0; rms < 2; rms++)
    {
      g_autoptr(AtomrCudnnGraph) fwd = atomr_cudnn_graph_new ("norm-train");
      g_autoptr(AtomrCudnnGraph) bwd = atomr_cudnn_graph_new ("norm-bwd");
      g_autoptr(GError) error = NULL;
      AtomrCudnnNorm mode = rms ? ATOMR_CUDNN_NORM_RMS : ATOMR_CUDNN_NORM_LAYER;
      guint x = add (fwd, "x", dtype, 32, 256, 1, 1), s = add (fwd, "gamma", pdt, 1, 256, 1, 1);
      guint b = rms ? 0 : add (fwd, "beta", pdt, 1, 256, 1, 1), y = add (fwd, "y", dtype, 32, 256, 1, 1);
      guint m = rms ? 0 : add (fwd, "mean", ATOMR_DTYPE_F32, 32, 1, 1, 1);
      guint iv = add (fwd, "inv-var", ATOMR_DTYPE_F32, 32, 1, 1, 1);

      g_assert_true (atomr_cudnn_graph_add_norm_training (fwd, mode, x, s, b, 1e-5, y, m, iv, &error));
      g_assert_no_error (error);
      check_backend (fwd, 1);

      x = add (bwd, "x", dtype, 32, 256, 1, 1);
      {
        guint dy = add (bwd, "dy", dtype, 32, 256, 1, 1), s2 = add (bwd, "gamma", pdt, 1, 256, 1, 1);
        guint m2 = rms ? 0 : add (bwd, "mean", ATOMR_DTYPE_F32, 32, 1, 1, 1);
        guint iv2 = add (bwd, "inv-var", ATOMR_DTYPE_F32, 32, 1, 1, 1);
        guint dx = add (bwd, "dx", dtype, 32, 256, 1, 1), ds = add (bwd, "dgamma", pdt, 1, 256, 1, 1);
        guint db = rms ? 0 : add (bwd, "dbeta", pdt, 1, 256, 1, 1);
        g_assert_true (atomr_cudnn_graph_add_norm_backward (bwd, mode, x, dy, s2, m2, iv2, dx, ds, db, &error));
        g_assert_no_error (error);
      }
      check_backend (bwd, 1);
    }
}

/* Batch norm training with and without running statistics (the momentum
 * scalar exists only with them), and its backward node; NHWC x. */
static void
test_norm_batch (void)
{
  const gint64 xd[4] = { 8, 32, 6, 6 }, xs[4] = { 6 * 6 * 32, 1, 6 * 32, 32 };

  if (!have_cudnn ())
    return;
  for (guint running = 0; running < 2; running++)
    {
      g_autoptr(AtomrCudnnGraph) fwd = atomr_cudnn_graph_new ("bn-train");
      g_autoptr(AtomrCudnnGraph) bwd = atomr_cudnn_graph_new ("bn-bwd");
      g_autoptr(GError) error = NULL;
      guint x = atomr_cudnn_graph_add_tensor_full (fwd, "x", ATOMR_DTYPE_BF16, xd, 4, xs, 4, FALSE, &error);
      guint y = atomr_cudnn_graph_add_tensor_full (fwd, "y", ATOMR_DTYPE_BF16, xd, 4, xs, 4, FALSE, &error);
      guint s = add (fwd, "gamma", ATOMR_DTYPE_BF16, 1, 32, 1, 1), b = add (fwd, "beta", ATOMR_DTYPE_BF16, 1, 32, 1, 1);
      guint m = add (fwd, "mean", ATOMR_DTYPE_F32, 1, 32, 1, 1), iv = add (fwd, "inv-var", ATOMR_DTYPE_F32, 1, 32, 1, 1);
      guint rm = running ? add (fwd, "rm", ATOMR_DTYPE_F32, 1, 32, 1, 1) : 0;
      guint rv = running ? add (fwd, "rv", ATOMR_DTYPE_F32, 1, 32, 1, 1) : 0;
      guint nrm = running ? add (fwd, "nrm", ATOMR_DTYPE_F32, 1, 32, 1, 1) : 0;
      guint nrv = running ? add (fwd, "nrv", ATOMR_DTYPE_F32, 1, 32, 1, 1) : 0;

      g_assert_no_error (error);
      g_assert_true (atomr_cudnn_graph_add_batch_norm_training (fwd, x, s, b, 1e-5, 0.1, rm, rv, y, m, iv, nrm, nrv,
                                                                &error));
      g_assert_no_error (error);
      check_backend (fwd, 1);

      x = atomr_cudnn_graph_add_tensor_full (bwd, "x", ATOMR_DTYPE_BF16, xd, 4, xs, 4, FALSE, &error);
      {
        guint dy = atomr_cudnn_graph_add_tensor_full (bwd, "dy", ATOMR_DTYPE_BF16, xd, 4, xs, 4, FALSE, &error);
        guint dx = atomr_cudnn_graph_add_tensor_full (bwd, "dx", ATOMR_DTYPE_BF16, xd, 4, xs, 4, FALSE, &error);
        guint s2 = add (bwd, "gamma", ATOMR_DTYPE_BF16, 1, 32, 1, 1);
        guint m2 = add (bwd, "mean", ATOMR_DTYPE_F32, 1, 32, 1, 1), iv2 = add (bwd, "inv-var", ATOMR_DTYPE_F32, 1, 32, 1, 1);
        guint ds = add (bwd, "dgamma", ATOMR_DTYPE_BF16, 1, 32, 1, 1), db = add (bwd, "dbeta", ATOMR_DTYPE_BF16, 1, 32, 1, 1);
        g_assert_no_error (error);
        g_assert_true (atomr_cudnn_graph_add_norm_backward (bwd, ATOMR_CUDNN_NORM_BATCH, x, dy, s2, m2, iv2, dx, ds,
                                                            db, &error));
        g_assert_no_error (error);
      }
      check_backend (bwd, 1);
    }
}

/* AtomrCudnnGraph's convolution nodes, each direction: operands in the
 * roles the direction gives them (forward x, w → y; backward data
 * dy, w → dx; backward filter x, dy → dw), f32 and bf16, NCHW. */
static void
test_graph_convolution (void)
{
  static const AtomrCudnnConvDirection directions[] = {
    ATOMR_CUDNN_CONV_FORWARD, ATOMR_CUDNN_CONV_BACKWARD_DATA, ATOMR_CUDNN_CONV_BACKWARD_FILTER,
  };
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_BF16 };

  if (!have_cudnn ())
    return;
  for (guint d = 0; d < G_N_ELEMENTS (directions); d++)
    for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
      {
        g_autoptr(AtomrCudnnGraph) g = atomr_cudnn_graph_new ("conv");
        g_autoptr(AtomrConvolution) conv = atomr_convolution_new_2d (1, 1, 1, 1, 1, 1);
        g_autoptr(GError) error = NULL;
        guint x = add (g, "x", dtypes[t], 2, 8, 6, 6), w = add (g, "w", dtypes[t], 16, 8, 3, 3);
        guint y = add (g, "y", dtypes[t], 2, 16, 6, 6);
        guint a = directions[d] == ATOMR_CUDNN_CONV_BACKWARD_DATA ? y : x;
        guint b = directions[d] == ATOMR_CUDNN_CONV_BACKWARD_FILTER ? y : w;
        guint out = directions[d] == ATOMR_CUDNN_CONV_FORWARD ? y
                  : directions[d] == ATOMR_CUDNN_CONV_BACKWARD_DATA ? x : w;

        g_assert_true (atomr_cudnn_graph_add_convolution (g, directions[d], conv, a, b, out, &error));
        g_assert_no_error (error);
        check_backend (g, 1);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree gchar *path = g_strdup_printf ("/cudnn-descriptors/conv/%s", cases[i].name);
      g_test_add (path, Fixture, &cases[i], fixture_setup, test_graphs, fixture_teardown);
    }
  g_test_add ("/cudnn-descriptors/conv/refused", Fixture, NULL, fixture_setup, test_refused, fixture_teardown);
  g_test_add_data_func ("/cudnn-descriptors/norm/layer-rms-f32", GINT_TO_POINTER (ATOMR_DTYPE_F32),
                        test_norm_layer_rms);
  g_test_add_data_func ("/cudnn-descriptors/norm/layer-rms-bf16", GINT_TO_POINTER (ATOMR_DTYPE_BF16),
                        test_norm_layer_rms);
  g_test_add_data_func ("/cudnn-descriptors/norm/layer-rms-bf16-f32-params",
                        GINT_TO_POINTER (ATOMR_DTYPE_BF16 | 0x100), test_norm_layer_rms);
  g_test_add_func ("/cudnn-descriptors/norm/batch", test_norm_batch);
  g_test_add_func ("/cudnn-descriptors/graph/convolution", test_graph_convolution);
  return g_test_run ();
}
