/* test-cudnn-norm.c — layer, RMS, group and instance normalization without
 * a GPU: the generated kernels compile with NVRTC for sm_90 in every
 * dtype, AtomrNormalization behaves as a property object, and every
 * invalid request fails in the _async call with INVALID_ARGUMENT naming
 * the operand and value (valid ones reach the enqueue step and are
 * answered NOT_SUPPORTED on the mock device).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>

#define CUDNN_TEST_MOCK_FIXTURE
#include "cudnn-validation-util.h"
#include "actors/cudnn/atomr-cudnn-norm-private.h"

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
fwd (Fixture *f, AtomrNormalization *norm, AtomrTensor *x, AtomrTensor *scale, AtomrTensor *bias,
     AtomrTensor *y, AtomrTensor *mean, AtomrTensor *inv_std, gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_normalization_forward_async (f->actor, norm, x, scale, bias, y, mean, inv_std,
                                                 NULL, store_result, &res);
  expect (&res, code, needle);
}

static void
bwd (Fixture *f, AtomrNormalization *norm, AtomrTensor *x, AtomrTensor *dy, AtomrTensor *scale,
     AtomrTensor *mean, AtomrTensor *inv_std, AtomrTensor *dx, AtomrTensor *dscale, AtomrTensor *dbias,
     gint code, const gchar *needle)
{
  GAsyncResult *res = NULL;

  atomr_cudnn_actor_normalization_backward_async (f->actor, norm, x, dy, scale, mean, inv_std, dx,
                                                  dscale, dbias, NULL, store_result, &res);
  expect (&res, code, needle);
}

/* ------------------------------------------------------------------ */

static void
test_kernels_compile (void)
{
  const AtomrDtype dtypes[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };
  const gchar *const entries[] = { "atomr_norm_fwd", "atomr_norm_bwd_data", "atomr_norm_bwd_param",
                                   /* the row fast path */
                                   "atomr_norm_fwd_rows_vec", "atomr_norm_fwd_rows",
                                   "atomr_norm_bwd_data_rows_vec", "atomr_norm_bwd_data_rows",
                                   "atomr_norm_bwd_param_rows", "atomr_norm_bwd_param_sum" };
  g_autofree gchar *version = atomr_nvrtc_get_version (NULL);

  if (version == NULL)
    {
      g_test_skip ("NVRTC is not available");
      return;
    }
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      g_autofree gchar *source = atomr_cudnn_norm_kernel_source (dtypes[d]);
      g_autoptr(AtomrCompileOptions) options = atomr_compile_options_new ();
      g_autoptr(AtomrModule) module = NULL;
      g_autoptr(GError) error = NULL;
      GBytes *ptx;
      g_autofree gchar *text = NULL;

      atomr_compile_options_set_arch (options, "sm_90");
      module = atomr_nvrtc_compile (source, "atomr-cudnn-norm.cu", options, NULL, &error);
      if (module == NULL)
        g_error ("%s\n---\n%s", error->message, source);
      ptx = atomr_module_get_ptx (module);
      if (ptx == NULL)
        continue;   /* a cubin: entries are not text */
      text = g_strndup (g_bytes_get_data (ptx, NULL), g_bytes_get_size (ptx));
      for (guint e = 0; e < G_N_ELEMENTS (entries); e++)
        {
          g_autofree gchar *entry = g_strdup_printf (".entry %s(", entries[e]);
          if (strstr (text, entry) == NULL)
            g_error ("%s PTX lacks %s", atomr_dtype_get_name (dtypes[d]), entry);
        }
    }
}

/* Which operand layouts take the row kernels (the GPU test checks their
 * results; this checks the choice). */
static void
check_rows (AtomrTensor *t, guint axis, gboolean expected, gint64 expected_stride)
{
  gint64 rs = -1;
  gboolean got = atomr_cudnn_norm_rows_layout (t, axis, &rs);
  g_autofree gchar *what = atomr_tensor_to_string (t);

  g_test_message ("%s axis %u: %s, row stride %" G_GINT64_FORMAT, what, axis, got ? "rows" : "generic", rs);
  g_assert_cmpint (got, ==, expected);
  if (expected)
    g_assert_cmpint (rs, ==, expected_stride);
}

static void
test_rows_layout (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = T (f, F32, 4, 6, 96);
  g_autoptr(AtomrTensor) b = T (f, F32, 5, 70);
  g_autoptr(AtomrTensor) one = T (f, F32, 1, 5, 16);
  g_autoptr(AtomrTensor) row_slice = NULL, every_other = NULL, permuted = NULL, mid_slice = NULL;

  check_rows (a, 2, TRUE, 96);
  check_rows (a, 1, TRUE, 576);
  check_rows (one, 2, TRUE, 16);
  check_rows (one, 1, TRUE, 80);
  /* a slice of each row: rows 70 apart */
  row_slice = atomr_tensor_slice (b, 1, 0, 64, 1, &error);
  g_assert_no_error (error);
  check_rows (row_slice, 1, TRUE, 70);
  /* the normalized elements not packed */
  every_other = atomr_tensor_slice (b, 1, 0, 70, 2, &error);
  g_assert_no_error (error);
  check_rows (every_other, 1, FALSE, 0);
  permuted = atomr_tensor_permute (a, (const guint[]) { 0, 2, 1 }, 3, &error);
  g_assert_no_error (error);
  check_rows (permuted, 2, FALSE, 0);
  check_rows (permuted, 1, FALSE, 0);
  /* rows that are not one stride apart: 3 of 6 in each group of 6 */
  mid_slice = atomr_tensor_slice (a, 1, 0, 3, 1, &error);
  g_assert_no_error (error);
  check_rows (mid_slice, 2, FALSE, 0);
  check_rows (mid_slice, 1, TRUE, 576);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_object (void)
{
  g_autoptr(AtomrNormalization) bare = g_object_new (ATOMR_TYPE_NORMALIZATION, NULL);
  g_autoptr(AtomrNormalization) norm = atomr_normalization_new (ATOMR_NORM_GROUP, 1e-6);
  guint notified = 0;

  g_assert_cmpint (atomr_normalization_get_mode (bare), ==, ATOMR_NORM_LAYER);
  g_assert_cmpfloat (atomr_normalization_get_epsilon (bare), ==, 1e-5);
  g_assert_cmpuint (atomr_normalization_get_axis (bare), ==, 1);
  g_assert_cmpuint (atomr_normalization_get_groups (bare), ==, 1);

  g_assert_cmpint (atomr_normalization_get_mode (norm), ==, ATOMR_NORM_GROUP);
  g_assert_cmpfloat (atomr_normalization_get_epsilon (norm), ==, 1e-6);
  g_signal_connect (norm, "notify", G_CALLBACK (count_notify), &notified);
  atomr_normalization_set_groups (norm, 4);
  atomr_normalization_set_groups (norm, 4);        /* no change: no notify */
  atomr_normalization_set_axis (norm, 2);
  atomr_normalization_set_epsilon (norm, 1e-3);
  atomr_normalization_set_mode (norm, ATOMR_NORM_RMS);
  g_assert_cmpuint (notified, ==, 4);
  g_object_set (norm, "groups", 8, NULL);
  g_assert_cmpuint (atomr_normalization_get_groups (norm), ==, 8);
  g_assert_cmpuint (notified, ==, 5);
}

static void
test_valid (Fixture *f, gconstpointer data)
{
  const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F64 };

  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      AtomrDtype dt = dtypes[i], st = dt == ATOMR_DTYPE_F64 ? dt : F32;
      g_autoptr(AtomrNormalization) layer = atomr_normalization_new (ATOMR_NORM_LAYER, 1e-5);
      g_autoptr(AtomrNormalization) rms = atomr_normalization_new (ATOMR_NORM_RMS, 1e-5);
      g_autoptr(AtomrNormalization) group = atomr_normalization_new (ATOMR_NORM_GROUP, 1e-5);
      g_autoptr(AtomrNormalization) inst = atomr_normalization_new (ATOMR_NORM_INSTANCE, 1e-5);
      /* B × S × H, normalized over H */
      g_autoptr(AtomrTensor) x = T (f, dt, 2, 3, 8);
      g_autoptr(AtomrTensor) y = T (f, dt, 2, 3, 8);
      g_autoptr(AtomrTensor) dy = T (f, dt, 2, 3, 8);
      g_autoptr(AtomrTensor) dx = T (f, dt, 2, 3, 8);
      g_autoptr(AtomrTensor) g8 = T (f, dt, 8);
      g_autoptr(AtomrTensor) b8 = T (f, dt, 8);
      g_autoptr(AtomrTensor) dg8 = T (f, dt, 8);
      g_autoptr(AtomrTensor) db8 = T (f, dt, 8);
      g_autoptr(AtomrTensor) m6 = T (f, st, 6);
      g_autoptr(AtomrTensor) r6 = T (f, st, 2, 3);
      /* N × C × H × W with 8 channels in 4 groups */
      g_autoptr(AtomrTensor) xi = T (f, dt, 2, 8, 5, 5);
      g_autoptr(AtomrTensor) yi = T (f, dt, 2, 8, 5, 5);
      g_autoptr(AtomrTensor) m8 = T (f, st, 8);
      g_autoptr(AtomrTensor) r8 = T (f, st, 8);
      g_autoptr(AtomrTensor) m16 = T (f, st, 16);
      g_autoptr(AtomrTensor) r16 = T (f, st, 16);

      atomr_normalization_set_axis (layer, 2);
      atomr_normalization_set_axis (rms, 2);
      atomr_normalization_set_groups (group, 4);
      fwd (f, layer, x, g8, b8, y, m6, r6, NOSUP, "layer-norm-fwd");
      fwd (f, layer, x, NULL, NULL, y, NULL, NULL, NOSUP, "needs a CUDA device");
      fwd (f, rms, x, g8, NULL, y, NULL, r6, NOSUP, "rms-norm-fwd");
      fwd (f, group, xi, g8, b8, yi, m8, r8, NOSUP, "group-norm-fwd");
      fwd (f, inst, xi, g8, b8, yi, m16, r16, NOSUP, "instance-norm-fwd");
      /* fresh statistics: those above are outputs of failed requests,
       * and reading them would fail with DEPENDENCY_FAILED */
      {
        g_autoptr(AtomrTensor) sm6 = T (f, st, 6);
        g_autoptr(AtomrTensor) sr6 = T (f, st, 6);
        g_autoptr(AtomrTensor) sm8 = T (f, st, 8);
        g_autoptr(AtomrTensor) sr8 = T (f, st, 8);
        g_autoptr(AtomrTensor) dyi = T (f, dt, 2, 8, 5, 5);
        g_autoptr(AtomrTensor) dxi = T (f, dt, 2, 8, 5, 5);

        bwd (f, layer, x, dy, g8, sm6, sr6, dx, dg8, db8, NOSUP, "layer-norm-bwd");
        bwd (f, rms, x, dy, g8, NULL, sr6, dx, dg8, NULL, NOSUP, "rms-norm-bwd");
        bwd (f, group, xi, dyi, NULL, sm8, sr8, dxi, NULL, NULL, NOSUP, "group-norm-bwd");
      }
    }
}

static void
test_invalid (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrNormalization) layer = atomr_normalization_new (ATOMR_NORM_LAYER, 1e-5);
  g_autoptr(AtomrNormalization) rms = atomr_normalization_new (ATOMR_NORM_RMS, 1e-5);
  g_autoptr(AtomrNormalization) group = atomr_normalization_new (ATOMR_NORM_GROUP, 1e-5);
  g_autoptr(AtomrTensor) x = T (f, F32, 2, 3, 8);
  g_autoptr(AtomrTensor) y = T (f, F32, 2, 3, 8);
  g_autoptr(AtomrTensor) y_wrong = T (f, F32, 2, 8, 3);
  g_autoptr(AtomrTensor) y_f16 = T (f, ATOMR_DTYPE_F16, 2, 3, 8);
  g_autoptr(AtomrTensor) g8 = T (f, F32, 8);
  g_autoptr(AtomrTensor) g7 = T (f, F32, 7);
  g_autoptr(AtomrTensor) g16 = T (f, F32, 16);
  g_autoptr(AtomrTensor) m6 = T (f, F32, 6);
  g_autoptr(AtomrTensor) r6 = T (f, F32, 6);
  g_autoptr(AtomrTensor) r6_f16 = T (f, ATOMR_DTYPE_F16, 6);
  g_autoptr(AtomrTensor) r5 = T (f, F32, 5);
  g_autoptr(AtomrTensor) xi = T (f, F32, 2, 6, 4, 4);
  g_autoptr(AtomrTensor) yi = T (f, F32, 2, 6, 4, 4);
  g_autoptr(AtomrTensor) x1 = T (f, F32, 16);
  g_autoptr(AtomrTensor) g_strided = NULL;
  g_autoptr(AtomrTensor) i32 = T (f, ATOMR_DTYPE_I32, 2, 3, 8);
  g_autoptr(GError) error = NULL;

  atomr_normalization_set_axis (layer, 2);
  atomr_normalization_set_axis (rms, 2);
  g_strided = atomr_tensor_slice (g16, 0, 0, 16, 2, &error);
  g_assert_no_error (error);

  fwd (f, NULL, x, NULL, NULL, y, NULL, NULL, INVALID, "norm is not an AtomrNormalization");
  fwd (f, layer, x1, NULL, NULL, x1, NULL, NULL, INVALID, "x has 1 dimensions (takes 2 to 8)");
  fwd (f, layer, i32, NULL, NULL, y, NULL, NULL, INVALID, "x has dtype i32");
  fwd (f, layer, x, NULL, NULL, y_wrong, NULL, NULL, INVALID, "y is");
  fwd (f, layer, x, NULL, NULL, y_f16, NULL, NULL, INVALID, "y has dtype f16, the other operands f32");
  fwd (f, layer, x, g7, NULL, y, NULL, NULL, INVALID, "scale has 7 elements (takes 8: one per normalized element)");
  fwd (f, layer, x, g8, g16, y, NULL, NULL, INVALID, "bias has 16 elements");
  fwd (f, layer, x, g_strided, NULL, y, NULL, NULL, INVALID, "scale is not contiguous");
  fwd (f, layer, x, NULL, NULL, y, m6, NULL, INVALID, "mean is given but inv_std is NULL");
  fwd (f, layer, x, NULL, NULL, y, m6, r5, INVALID, "inv_std has 5 elements (takes 6: one per row)");
  fwd (f, layer, x, NULL, NULL, y, m6, r6_f16, INVALID, "inv_std has dtype f16, the other operands f32");
  fwd (f, layer, x, NULL, NULL, x, NULL, NULL, INVALID, "y");
  fwd (f, layer, x, NULL, NULL, y, m6, m6, INVALID, "mean");
  fwd (f, rms, x, NULL, NULL, y, m6, r6, INVALID, "an RMS norm has no mean");
  atomr_normalization_set_axis (layer, 3);
  fwd (f, layer, x, NULL, NULL, y, NULL, NULL, INVALID, "axis is 3 but x has 3 dimensions");
  atomr_normalization_set_groups (group, 4);
  fwd (f, group, xi, NULL, NULL, yi, NULL, NULL, INVALID, "x has 6 channels, which 4 groups do not divide");
  atomr_normalization_set_groups (group, 3);
  fwd (f, group, xi, g8, NULL, yi, NULL, NULL, INVALID, "scale has 8 elements (takes 6: one per channel)");

  atomr_normalization_set_axis (layer, 2);
  bwd (f, layer, x, y, NULL, m6, NULL, y_wrong, NULL, NULL, INVALID, "dx is");
  {
    g_autoptr(AtomrTensor) dx = T (f, F32, 2, 3, 8);
    bwd (f, layer, x, y, NULL, m6, NULL, dx, NULL, NULL, INVALID, "inv_std is NULL");
    bwd (f, layer, x, y, NULL, NULL, r6, dx, NULL, NULL, INVALID, "mean is NULL");
    bwd (f, rms, x, y, NULL, m6, r6, dx, NULL, NULL, INVALID, "an RMS norm has no mean");
    bwd (f, layer, x, y, NULL, m6, r6, dx, g7, NULL, INVALID, "dscale has 7 elements");
    bwd (f, layer, x, y, g8, m6, r6, dx, g8, NULL, INVALID, "dscale");
    bwd (f, layer, x, y, NULL, m6, r6, y, NULL, NULL, INVALID, "dx");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cudnn-norm/kernels-compile", test_kernels_compile);
  g_test_add_func ("/cudnn-norm/object", test_object);
  g_test_add ("/cudnn-norm/rows-layout", Fixture, NULL, fixture_setup, test_rows_layout, fixture_teardown);
  g_test_add ("/cudnn-norm/valid", Fixture, NULL, fixture_setup, test_valid, fixture_teardown);
  g_test_add ("/cudnn-norm/invalid", Fixture, NULL, fixture_setup, test_invalid, fixture_teardown);
  return g_test_run ();
}
