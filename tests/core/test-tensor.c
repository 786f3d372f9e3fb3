/* test-tensor.c — views of buffers, on the host test device (no GPU)
 *
 * The host device keeps buffers in host memory, so every view can be
 * checked element by element against the NumPy semantics it promises.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <atomr.h>
#include "core/atomr-device-private.h"
#include "core/atomr-tensor-private.h"

typedef struct {
  AtomrDevice *device;
  AtomrBuffer *buffer;   /* 24 f32: 0, 1, ..., 23 */
  AtomrTensor *t;        /* its 2 × 3 × 4 view */
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  const gint64 shape[] = { 2, 3, 4 };
  gfloat *host;

  f->device = atomr_device_new_host ();
  f->buffer = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 24, &error);
  g_assert_no_error (error);
  host = atomr_buffer_get_host_data (f->buffer);
  for (guint i = 0; i < 24; i++)
    host[i] = (gfloat) i;
  f->t = atomr_tensor_new (f->buffer, shape, 3, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_assert_finalize_object (f->t);
  g_assert_finalize_object (f->buffer);
  g_object_unref (f->device);
}

/* The value at a multi-index, through the view's own layout. */
static gfloat
at (AtomrTensor *t, const gint64 *index)
{
  const gint64 *strides = atomr_tensor_get_strides (t, NULL);
  const gfloat *base = atomr_tensor_get_host_data (t);
  gint64 off = 0;

  for (guint k = 0; k < atomr_tensor_get_n_dims (t); k++)
    {
      g_assert_cmpint (index[k], >=, 0);
      g_assert_cmpint (index[k], <, atomr_tensor_get_dim (t, k));
      off += index[k] * strides[k];
    }
  return base[off];
}

/* All elements in row-major order. */
static GArray *
elements (AtomrTensor *t)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gfloat));
  gint64 index[ATOMR_TENSOR_MAX_DIMS] = { 0, };
  guint n = atomr_tensor_get_n_dims (t);

  if (atomr_tensor_get_n_elements (t) == 0)
    return out;
  for (;;)
    {
      gfloat v = at (t, index);
      gint k;

      g_array_append_val (out, v);
      for (k = (gint) n - 1; k >= 0; k--)
        {
          if (++index[k] < atomr_tensor_get_dim (t, k))
            break;
          index[k] = 0;
        }
      if (k < 0)
        break;
    }
  return out;
}

static void
assert_elements (AtomrTensor *t, const gfloat *expected, guint n)
{
  g_autoptr(GArray) got = elements (t);

  g_assert_cmpuint (got->len, ==, n);
  g_assert_cmpuint (atomr_tensor_get_n_elements (t), ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpfloat (g_array_index (got, gfloat, i), ==, expected[i]);
}

static void
assert_shape (AtomrTensor *t, const gint64 *shape, guint n)
{
  guint got_n;
  const gint64 *got = atomr_tensor_get_shape (t, &got_n);

  g_assert_cmpuint (got_n, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (got[i], ==, shape[i]);
}

static void
test_basics (Fixture *f, gconstpointer data)
{
  const gint64 strides[] = { 12, 4, 1 };
  guint n;
  g_autofree gchar *desc = NULL;

  g_assert_true (atomr_tensor_get_buffer (f->t) == f->buffer);
  g_assert_true (atomr_tensor_get_device (f->t) == f->device);
  g_assert_cmpint (atomr_tensor_get_dtype (f->t), ==, ATOMR_DTYPE_F32);
  g_assert_cmpuint (atomr_tensor_get_n_dims (f->t), ==, 3);
  g_assert_cmpmem (atomr_tensor_get_strides (f->t, &n), 3 * sizeof (gint64), strides, sizeof strides);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpuint (atomr_tensor_get_n_elements (f->t), ==, 24);
  g_assert_cmpuint (atomr_tensor_get_byte_size (f->t), ==, 96);
  g_assert_cmpuint (atomr_tensor_get_byte_offset (f->t), ==, 0);
  g_assert_true (atomr_tensor_is_contiguous (f->t));
  g_assert_cmpint (atomr_tensor_get_dim (f->t, 3), ==, -1);
  g_assert_cmpint (atomr_tensor_get_stride (f->t, 1), ==, 4);
  /* no GPU memory on the host device */
  g_assert_cmpuint (atomr_tensor_get_device_pointer (f->t), ==, 0);
  desc = atomr_tensor_to_string (f->t);
  g_assert_cmpstr (desc, ==, "f32[2, 3, 4] strides [12, 4, 1] offset 0 on host");

  {
    g_autoptr(GError) error = NULL;
    guint64 begin, end;
    g_autoptr(AtomrTensor) scalar = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 92,
                                                              NULL, 0, NULL, 0, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (atomr_tensor_get_n_elements (scalar), ==, 1);
    g_assert_cmpfloat (*(gfloat *) atomr_tensor_get_host_data (scalar), ==, 23.f);
    atomr_tensor_get_byte_range (scalar, &begin, &end);
    g_assert_cmpuint (begin, ==, 92);
    g_assert_cmpuint (end, ==, 96);
  }
}

static void
test_for_buffer (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrDevice) device = atomr_device_new_host ();
  const gint64 shape[] = { 3, 5 };
  g_autoptr(AtomrBuffer) flat = atomr_buffer_new (device, ATOMR_DTYPE_C64, 7, &error);
  g_autoptr(AtomrBuffer) shaped = atomr_buffer_new_with_shape (device, ATOMR_DTYPE_I32, shape, 2, &error);
  g_autoptr(AtomrTensor) a = NULL;
  g_autoptr(AtomrTensor) b = NULL;
  g_autoptr(AtomrTensor) e = NULL;
  const gint64 shape0[] = { 4, 0, 2 };
  const gint64 one[] = { 7 };

  g_assert_no_error (error);
  a = atomr_tensor_new_for_buffer (flat);
  assert_shape (a, one, 1);
  g_assert_cmpint (atomr_tensor_get_dtype (a), ==, ATOMR_DTYPE_C64);
  b = atomr_tensor_new_for_buffer (shaped);
  assert_shape (b, shape, 2);
  g_assert_cmpint (atomr_tensor_get_stride (b, 0), ==, 5);

  e = atomr_tensor_empty (device, ATOMR_DTYPE_F64, shape0, 3, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_tensor_get_n_elements (e), ==, 0);
  g_assert_true (atomr_tensor_is_contiguous (e));
  g_assert_cmpuint (atomr_buffer_get_byte_size (atomr_tensor_get_buffer (e)), ==, 8);
  g_clear_object (&e);

  e = atomr_tensor_empty (device, ATOMR_DTYPE_F16, shape, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_buffer_get_byte_size (atomr_tensor_get_buffer (e)), ==, 30);
  g_assert_cmpuint (atomr_buffer_get_n_elements (atomr_tensor_get_buffer (e)), ==, 15);
}

static void
test_bounds (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  AtomrTensor *t;

  {
    const gint64 shape[] = { 5, 5 };
    t = atomr_tensor_new (f->buffer, shape, 2, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "outside the buffer of 96 bytes"));
    g_assert_null (t);
    g_clear_error (&error);
  }
  {
    /* the last element of the second dimension ends at byte 100 */
    const gint64 shape[] = { 2, 4 }, strides[] = { 12, 1 };
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 48, shape, 2, strides, 2, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "Dimension 0 (extent 2, stride 12)"));
    g_assert_null (t);
    g_clear_error (&error);
  }
  {
    /* negative strides reaching before the buffer */
    const gint64 shape[] = { 3 }, strides[] = { -1 };
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 4, shape, 1, strides, 1, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "reaches bytes [-4, 8)"));
    g_clear_error (&error);
    /* ... and reversed, inside */
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 8, shape, 1, strides, 1, &error);
    g_assert_no_error (error);
    {
      const gfloat expected[] = { 2, 1, 0 };
      assert_elements (t, expected, 3);
    }
    g_object_unref (t);
  }
  {
    /* overflowing products and offsets */
    const gint64 huge[] = { G_MAXINT64 / 2, 4 };
    const gint64 shape[] = { 2 }, strides[] = { G_MAXINT64 };
    t = atomr_tensor_new (f->buffer, huge, 2, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "overflows 64 bits at dimension 1"));
    g_clear_error (&error);
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 0, shape, 1, strides, 1, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "Dimension 0"));
    g_clear_error (&error);
  }
  {
    const gint64 neg[] = { 2, -3 };
    const gint64 nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    const gint64 shape[] = { 2 }, strides[] = { 1, 1 };
    t = atomr_tensor_new (f->buffer, neg, 2, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "Dimension 1 of the shape is -3"));
    g_clear_error (&error);
    t = atomr_tensor_new (f->buffer, nine, 9, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "at most 8 dimensions, not 9"));
    g_clear_error (&error);
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 0, shape, 1, strides, 2, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "2 strides given for 1 dimensions"));
    g_clear_error (&error);
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F64, 4, shape, 1, NULL, 0, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "byte offset 4 is not a multiple"));
    g_clear_error (&error);
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F32, 100, NULL, 0, NULL, 0, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    t = atomr_tensor_new_strided (f->buffer, (AtomrDtype) 99, 0, NULL, 0, NULL, 0, &error);
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  {
    /* a view of another dtype: the f32 buffer as 12 f64 */
    const gint64 shape[] = { 12 };
    t = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_F64, 0, shape, 1, NULL, 0, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (atomr_tensor_get_byte_size (t), ==, 96);
    g_object_unref (t);
  }
}

static void
test_slice_select (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) s = NULL;
  g_autoptr(AtomrTensor) r = NULL;
  g_autoptr(AtomrTensor) e = NULL;
  g_autoptr(AtomrTensor) row = NULL;
  g_autoptr(AtomrTensor) last = NULL;

  /* t[:, 1:3, ::2] */
  {
    g_autoptr(AtomrTensor) tmp = atomr_tensor_slice (f->t, 1, 1, 3, 1, &error);
    g_assert_no_error (error);
    s = atomr_tensor_slice (tmp, 2, 0, 4, 2, &error);
    g_assert_no_error (error);
  }
  {
    const gint64 shape[] = { 2, 2, 2 };
    const gfloat expected[] = { 4, 6, 8, 10, 16, 18, 20, 22 };
    assert_shape (s, shape, 3);
    assert_elements (s, expected, 8);
    g_assert_cmpuint (atomr_tensor_get_byte_offset (s), ==, 16);
    g_assert_cmpint (atomr_tensor_get_stride (s, 2), ==, 2);
    g_assert_false (atomr_tensor_is_contiguous (s));
  }
  /* t[1, :, ::-1]  (slice.indices gives 3, -1, -1) */
  {
    g_autoptr(AtomrTensor) tmp = atomr_tensor_select (f->t, 0, -1, &error);
    const gfloat expected[] = { 15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20 };
    g_assert_no_error (error);
    r = atomr_tensor_slice (tmp, 1, 3, -1, -1, &error);
    g_assert_no_error (error);
    assert_elements (r, expected, 12);
    g_assert_cmpint (atomr_tensor_get_stride (r, 1), ==, -1);
  }
  /* t[:, 2:2] is empty */
  e = atomr_tensor_slice (f->t, 1, 2, 2, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_tensor_get_n_elements (e), ==, 0);
  g_assert_cmpint (atomr_tensor_get_dim (e, 1), ==, 0);
  /* t[:, 3:] is empty too, at the end */
  g_clear_object (&e);
  e = atomr_tensor_slice (f->t, 1, 3, 3, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_tensor_get_n_elements (e), ==, 0);
  /* t[:, 1:3:5] has one index */
  g_clear_object (&e);
  e = atomr_tensor_slice (f->t, 1, 1, 3, 5, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_tensor_get_dim (e, 1), ==, 1);

  row = atomr_tensor_select (f->t, 2, 3, &error);
  g_assert_no_error (error);
  {
    const gfloat expected[] = { 3, 7, 11, 15, 19, 23 };
    const gint64 shape[] = { 2, 3 };
    assert_shape (row, shape, 2);
    assert_elements (row, expected, 6);
  }
  /* select down to a scalar */
  {
    g_autoptr(AtomrTensor) a = atomr_tensor_select (row, 0, 1, &error);
    g_assert_no_error (error);
    last = atomr_tensor_select (a, 0, 2, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (atomr_tensor_get_n_dims (last), ==, 0);
    g_assert_cmpfloat (*(gfloat *) atomr_tensor_get_host_data (last), ==, 23.f);
  }

  g_assert_null (atomr_tensor_slice (f->t, 1, 0, 4, 1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "out of range for dimension 1 of extent 3"));
  g_clear_error (&error);
  g_assert_null (atomr_tensor_slice (f->t, 1, 0, 2, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (atomr_tensor_slice (f->t, 3, 0, 1, 1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "dimension 3 does not exist in a tensor of rank 3"));
  g_clear_error (&error);
  g_assert_null (atomr_tensor_select (f->t, 0, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Index 2 is out of range"));
  g_clear_error (&error);
  g_assert_null (atomr_tensor_select (f->t, 0, -3, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (atomr_tensor_select (last, 0, 0, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

static void
test_permute (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) p = NULL;
  g_autoptr(AtomrTensor) t = NULL;
  const guint perm[] = { 2, 0, 1 };
  const guint bad[] = { 0, 0, 1 };

  p = atomr_tensor_permute (f->t, perm, 3, &error);
  g_assert_no_error (error);
  {
    const gint64 shape[] = { 4, 2, 3 };
    const gint64 index[] = { 3, 1, 2 };
    assert_shape (p, shape, 3);
    g_assert_cmpfloat (at (p, index), ==, 23.f);
    g_assert_false (atomr_tensor_is_contiguous (p));
  }
  t = atomr_tensor_transpose (f->t, 0, 2, &error);
  g_assert_no_error (error);
  {
    const gint64 shape[] = { 4, 3, 2 };
    const gint64 index[] = { 1, 2, 0 };  /* t[0, 2, 1] */
    assert_shape (t, shape, 3);
    g_assert_cmpfloat (at (t, index), ==, 9.f);
  }
  g_assert_null (atomr_tensor_permute (f->t, bad, 3, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "Entry 1 of the permutation (0) is repeated"));
  g_clear_error (&error);
  g_assert_null (atomr_tensor_permute (f->t, perm, 2, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (atomr_tensor_transpose (f->t, 0, 5, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

static void
test_reshape (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) flat = NULL;
  g_autoptr(AtomrTensor) cols = NULL;
  g_autoptr(AtomrTensor) merged = NULL;
  g_autoptr(AtomrTensor) tr = NULL;
  g_autoptr(AtomrTensor) split = NULL;
  const gint64 minus1[] = { -1 };
  const gint64 shape64[] = { 6, 4 };

  flat = atomr_tensor_reshape (f->t, minus1, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_tensor_get_dim (flat, 0), ==, 24);
  g_assert_true (atomr_tensor_is_contiguous (flat));

  /* t[:, :, 1:3] merges its first two dimensions without a copy */
  cols = atomr_tensor_slice (f->t, 2, 1, 3, 1, &error);
  g_assert_no_error (error);
  {
    const gint64 shape[] = { 6, 1, 2 };
    const gfloat expected[] = { 1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22 };
    merged = atomr_tensor_reshape (cols, shape, 3, &error);
    g_assert_no_error (error);
    assert_elements (merged, expected, 12);
    g_assert_cmpint (atomr_tensor_get_stride (merged, 0), ==, 4);
  }
  /* ... but cannot be flattened */
  g_assert_null (atomr_tensor_reshape (cols, minus1, 1, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "without a copy"));
  g_clear_error (&error);

  /* a transposed matrix cannot be flattened, but can split a dimension */
  {
    g_autoptr(AtomrTensor) m = atomr_tensor_reshape (f->t, shape64, 2, &error);
    const gint64 shape[] = { 2, 2, 6 };
    const gfloat expected[] = { 0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21,
                                2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23 };
    g_assert_no_error (error);
    tr = atomr_tensor_transpose (m, 0, 1, &error);
    g_assert_no_error (error);
    g_assert_null (atomr_tensor_reshape (tr, minus1, 1, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    split = atomr_tensor_reshape (tr, shape, 3, &error);
    g_assert_no_error (error);
    assert_elements (split, expected, 24);
  }

  {
    const gint64 wrong[] = { 5, 5 };
    const gint64 two[] = { -1, -1 };
    const gint64 seven[] = { 7, -1 };
    g_assert_null (atomr_tensor_reshape (f->t, wrong, 2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "Cannot reshape 24 elements to a shape of 25"));
    g_clear_error (&error);
    g_assert_null (atomr_tensor_reshape (f->t, two, 2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_null (atomr_tensor_reshape (f->t, seven, 2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  /* to a scalar and back */
  {
    g_autoptr(AtomrTensor) one = atomr_tensor_slice (flat, 0, 5, 6, 1, &error);
    g_autoptr(AtomrTensor) scalar = NULL;
    g_autoptr(AtomrTensor) back = NULL;
    const gint64 ones[] = { 1, 1, 1 };
    g_assert_no_error (error);
    scalar = atomr_tensor_reshape (one, NULL, 0, &error);
    g_assert_no_error (error);
    g_assert_cmpfloat (*(gfloat *) atomr_tensor_get_host_data (scalar), ==, 5.f);
    back = atomr_tensor_reshape (scalar, ones, 3, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (atomr_tensor_get_n_elements (back), ==, 1);
  }
}

static void
test_broadcast (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) row = NULL;
  g_autoptr(AtomrTensor) b = NULL;
  g_autoptr(AtomrTensor) u = NULL;
  g_autoptr(AtomrTensor) sq = NULL;
  g_autofree gint64 *out = NULL;
  guint n_out;

  row = atomr_tensor_select (f->t, 0, 0, &error);         /* 3 × 4 */
  g_assert_no_error (error);
  {
    g_autoptr(AtomrTensor) first = atomr_tensor_slice (row, 0, 0, 1, 1, &error);  /* 1 × 4 */
    const gint64 shape[] = { 2, 3, 4 };
    const gfloat expected[] = { 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,
                                0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3 };
    g_assert_no_error (error);
    b = atomr_tensor_broadcast_to (first, shape, 3, &error);
    g_assert_no_error (error);
    assert_elements (b, expected, 24);
    g_assert_cmpint (atomr_tensor_get_stride (b, 0), ==, 0);
    g_assert_cmpint (atomr_tensor_get_stride (b, 1), ==, 0);
    g_assert_false (atomr_tensor_is_contiguous (b));
  }
  {
    const gint64 bad[] = { 3, 5 };
    const gint64 small[] = { 4 };
    g_assert_null (atomr_tensor_broadcast_to (row, bad, 2, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "dimension 1 of extent 4 to extent 5"));
    g_clear_error (&error);
    g_assert_null (atomr_tensor_broadcast_to (row, small, 1, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }

  u = atomr_tensor_unsqueeze (row, 1, &error);
  g_assert_no_error (error);
  {
    const gint64 shape[] = { 3, 1, 4 };
    assert_shape (u, shape, 3);
    g_assert_true (atomr_tensor_is_contiguous (u));
  }
  sq = atomr_tensor_squeeze (u, &error);
  g_assert_no_error (error);
  {
    const gint64 shape[] = { 3, 4 };
    assert_shape (sq, shape, 2);
  }
  g_assert_null (atomr_tensor_unsqueeze (row, 3, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  {
    const gint64 a[] = { 8, 1, 6, 1 }, bb[] = { 7, 1, 5 };
    const gint64 expected[] = { 8, 7, 6, 5 };
    const gint64 c[] = { 2, 3 }, d[] = { 4, 3 };
    g_assert_true (atomr_tensor_broadcast_shapes (a, 4, bb, 3, &out, &n_out, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (n_out, ==, 4);
    g_assert_cmpmem (out, 4 * sizeof (gint64), expected, sizeof expected);
    g_clear_pointer (&out, g_free);
    g_assert_false (atomr_tensor_broadcast_shapes (c, 2, d, 2, &out, &n_out, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "extents 2 and 4 at dimension 0"));
    g_assert_null (out);
    g_clear_error (&error);
    g_assert_true (atomr_tensor_broadcast_shapes (NULL, 0, c, 2, &out, &n_out, &error));
    g_assert_cmpuint (n_out, ==, 2);
  }
}

static void
test_matrix_layout (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) m = NULL;
  g_autoptr(AtomrTensor) sub = NULL;
  g_autoptr(AtomrTensor) mt = NULL;
  g_autoptr(AtomrTensor) step = NULL;
  const gint64 shape[] = { 4, 6 };
  AtomrMatrixLayout l;

  m = atomr_tensor_new (f->buffer, shape, 2, &error);       /* row-major 4 × 6 */
  g_assert_no_error (error);
  g_assert_true (atomr_tensor_get_matrix_layout (m, "A", &l, &error));
  g_assert_cmpint (l.rows, ==, 6);
  g_assert_cmpint (l.cols, ==, 4);
  g_assert_cmpint (l.ld, ==, 6);
  g_assert_true (l.transposed);

  {
    g_autoptr(AtomrTensor) tmp = atomr_tensor_slice (m, 0, 1, 3, 1, &error);
    sub = atomr_tensor_slice (tmp, 1, 2, 5, 1, &error);       /* rows 1..2, cols 2..4 */
    g_assert_no_error (error);
  }
  g_assert_true (atomr_tensor_get_matrix_layout (sub, "A", &l, &error));
  g_assert_cmpint (l.rows, ==, 3);
  g_assert_cmpint (l.cols, ==, 2);
  g_assert_cmpint (l.ld, ==, 6);   /* the parent's */
  g_assert_true (l.transposed);
  g_assert_cmpuint (atomr_tensor_get_byte_offset (sub), ==, (1 * 6 + 2) * 4);

  mt = atomr_tensor_transpose (sub, 0, 1, &error);          /* column-major 3 × 2 */
  g_assert_no_error (error);
  g_assert_true (atomr_tensor_get_matrix_layout (mt, "A", &l, &error));
  g_assert_cmpint (l.rows, ==, 3);
  g_assert_cmpint (l.cols, ==, 2);
  g_assert_cmpint (l.ld, ==, 6);
  g_assert_false (l.transposed);

  step = atomr_tensor_slice (m, 1, 0, 6, 2, &error);        /* every other column */
  g_assert_no_error (error);
  g_assert_false (atomr_tensor_get_matrix_layout (step, "B", &l, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "B (4 × 3, strides 6, 2) has no BLAS layout"));
  g_clear_error (&error);
  g_assert_false (atomr_tensor_get_matrix_layout (f->t, "C", &l, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "C must be a matrix (2 dimensions), not of rank 3"));
  g_clear_error (&error);

  /* a column vector: ld is the row count */
  {
    g_autoptr(AtomrTensor) col = atomr_tensor_slice (m, 1, 3, 4, 1, &error);
    g_assert_no_error (error);
    g_assert_true (atomr_tensor_get_matrix_layout (col, "x", &l, &error));
    /* (4 × 1, strides 6, 1): a transposed 1 × 4 with ld 6 */
    g_assert_cmpint (l.rows * l.cols, ==, 4);
    g_assert_cmpint (l.ld, >=, MAX (1, l.rows));
  }
}

static void
test_overlaps (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrTensor) a = atomr_tensor_select (f->t, 0, 0, &error);
  g_autoptr(AtomrTensor) b = atomr_tensor_select (f->t, 0, 1, &error);
  g_autoptr(AtomrTensor) c = atomr_tensor_slice (f->t, 2, 1, 2, 1, &error);
  g_autoptr(AtomrTensor) e = atomr_tensor_slice (f->t, 0, 1, 1, 1, &error);
  g_autoptr(AtomrBuffer) other = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 24, &error);
  g_autoptr(AtomrTensor) o = atomr_tensor_new_for_buffer (other);
  guint64 begin, end;

  g_assert_no_error (error);
  g_assert_false (atomr_tensor_overlaps (a, b));
  g_assert_true (atomr_tensor_overlaps (a, f->t));
  g_assert_true (atomr_tensor_overlaps (a, c));
  g_assert_true (atomr_tensor_overlaps (b, c));
  g_assert_false (atomr_tensor_overlaps (e, f->t));
  g_assert_false (atomr_tensor_overlaps (o, f->t));
  atomr_tensor_get_byte_range (c, &begin, &end);
  g_assert_cmpuint (begin, ==, 4);
  g_assert_cmpuint (end, ==, 21 * 4 + 4);
}

static void
test_bare (void)
{
  /* What a binding's bare constructor makes: usable, and refused cleanly. */
  g_autoptr(AtomrTensor) t = g_object_new (ATOMR_TYPE_TENSOR, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree gchar *desc = atomr_tensor_to_string (t);
  g_autoptr(AtomrBuffer) buffer = NULL;
  guint64 n_elements = 9;

  g_assert_null (atomr_tensor_get_buffer (t));
  g_assert_null (atomr_tensor_get_device (t));
  g_assert_cmpuint (atomr_tensor_get_n_elements (t), ==, 0);
  g_assert_cmpuint (atomr_tensor_get_device_pointer (t), ==, 0);
  g_assert_cmpstr (desc, ==, "empty tensor (no buffer)");
  g_object_get (t, "buffer", &buffer, "n-elements", &n_elements, NULL);
  g_assert_null (buffer);
  g_assert_cmpuint (n_elements, ==, 0);
  g_assert_null (atomr_tensor_squeeze (t, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "no buffer"));
  g_clear_error (&error);
  g_assert_false (atomr_tensor_check (t, NULL, "x", &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
}

#include "core/atomr-tensor-copy-private.h"

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static GAsyncResult *
wait_result (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *slot;
}

/* Plans of common layouts, and their execution on host memory. */
static void
test_copy_plan (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) p = NULL;
  const AtomrCopyPiece *piece;

  {
    /* a contiguous 2 × 3 × 4 block: one piece */
    const gint64 shape[] = { 2, 3, 4 }, st[] = { 12, 4, 1 };
    p = atomr_copy_plan (4, 3, shape, st, st, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 1);
    piece = &g_array_index (p, AtomrCopyPiece, 0);
    g_assert_cmpuint (piece->width, ==, 96);
    g_assert_cmpuint (piece->height, ==, 1);
    g_clear_pointer (&p, g_array_unref);
  }
  {
    /* a 3 × 2 sub-matrix of a 6-column matrix into a packed one: one 2-D piece */
    const gint64 shape[] = { 3, 2 }, src[] = { 6, 1 }, dst[] = { 2, 1 };
    p = atomr_copy_plan (8, 2, shape, src, dst, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 1);
    piece = &g_array_index (p, AtomrCopyPiece, 0);
    g_assert_cmpuint (piece->width, ==, 16);
    g_assert_cmpuint (piece->height, ==, 3);
    g_assert_cmpuint (piece->src_pitch, ==, 48);
    g_assert_cmpuint (piece->dst_pitch, ==, 16);
    g_assert_cmpuint (piece->depth, ==, 1);
    g_clear_pointer (&p, g_array_unref);
  }
  {
    /* a 2 × 3 × 4 box of a 5 × 6 × 7 volume: one 3-D piece */
    const gint64 shape[] = { 2, 3, 4 }, src[] = { 42, 7, 1 }, dst[] = { 12, 4, 1 };
    p = atomr_copy_plan (2, 3, shape, src, dst, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 1);
    piece = &g_array_index (p, AtomrCopyPiece, 0);
    g_assert_cmpuint (piece->depth, ==, 2);
    g_assert_cmpuint (piece->src_slice / piece->src_pitch, ==, 6);
    g_assert_cmpuint (piece->dst_slice / piece->dst_pitch, ==, 3);
    g_clear_pointer (&p, g_array_unref);
  }
  {
    /* a transposed matrix: element rows (width 4, pitched on both sides) */
    const gint64 shape[] = { 3, 5 }, src[] = { 1, 3 }, dst[] = { 5, 1 };
    p = atomr_copy_plan (4, 2, shape, src, dst, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 3);
    piece = &g_array_index (p, AtomrCopyPiece, 0);
    g_assert_cmpuint (piece->width, ==, 4);
    g_assert_cmpuint (piece->height, ==, 5);
    g_clear_pointer (&p, g_array_unref);
  }
  {
    /* reversed in the source only, broadcast source: one piece per index */
    const gint64 shape[] = { 4 }, src[] = { -1 }, dst[] = { 1 }, zero[] = { 0 };
    const guint32 in[4] = { 10, 11, 12, 13 };
    guint32 out[4] = { 0, };
    p = atomr_copy_plan (4, 1, shape, src, dst, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 4);
    atomr_copy_plan_run_host (p, (const guint8 *) (in + 3), (guint8 *) out);
    g_assert_cmpuint (out[0], ==, 13);
    g_assert_cmpuint (out[3], ==, 10);
    g_clear_pointer (&p, g_array_unref);
    p = atomr_copy_plan (4, 1, shape, zero, dst, &error);
    g_assert_no_error (error);
    atomr_copy_plan_run_host (p, (const guint8 *) (in + 1), (guint8 *) out);
    g_assert_cmpuint (out[0], ==, 11);
    g_assert_cmpuint (out[3], ==, 11);
    g_clear_pointer (&p, g_array_unref);
  }
  {
    /* too many pieces */
    const gint64 shape[] = { 300, 300 }, src[] = { -1, -300 }, dst[] = { 300, 1 };
    g_assert_null (atomr_copy_plan (4, 2, shape, src, dst, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_assert_nonnull (strstr (error->message, "more than 65536"));
    g_clear_error (&error);
  }
  {
    /* both reversed: flipped into one forward piece */
    const gint64 shape[] = { 4 }, st[] = { -1 };
    guint8 src[16], dst[16] = { 0, };
    for (guint i = 0; i < 16; i++)
      src[i] = (guint8) i;
    p = atomr_copy_plan (4, 1, shape, st, st, &error);
    g_assert_no_error (error);
    g_assert_cmpuint (p->len, ==, 1);
    g_assert_cmpint (g_array_index (p, AtomrCopyPiece, 0).src_offset, ==, -12);
    atomr_copy_plan_run_host (p, src + 12, dst + 12);
    g_assert_cmpmem (src, 16, dst, 16);
  }
}

/* Upload into a sub-view, copy between strided views, download a strided
 * view: the same plans the GPU runs, executed on the host device. */
static void
test_copy_actor (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrActor) actor = NULL;
  g_autoptr(AtomrTensor) sub = NULL;
  g_autoptr(AtomrTensor) rev = NULL;
  g_autoptr(AtomrTensor) packed = NULL;
  g_autoptr(GBytes) down = NULL;
  GAsyncResult *result = NULL;
  const gfloat values[] = { -1, -2, -3, -4 };
  g_autoptr(GBytes) up = g_bytes_new (values, sizeof values);
  const gint64 two_two[] = { 2, 2 };

  atomr_device_set_host_autocomplete (f->device, TRUE);
  actor = ATOMR_ACTOR (atomr_copy_actor_new (f->device, &error));
  g_assert_no_error (error);

  /* t[1, 1:3, 0:4:3] = [[-1, -2], [-3, -4]] */
  {
    g_autoptr(AtomrTensor) a = atomr_tensor_select (f->t, 0, 1, &error);
    g_autoptr(AtomrTensor) b = atomr_tensor_slice (a, 0, 1, 3, 1, &error);
    sub = atomr_tensor_slice (b, 1, 0, 4, 3, &error);
    g_assert_no_error (error);
  }
  atomr_actor_upload_tensor_async (actor, sub, up, NULL, store_result, &result);
  g_assert_true (atomr_actor_upload_tensor_finish (actor, wait_result (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  {
    const gfloat *host = atomr_buffer_get_host_data (f->buffer);
    g_assert_cmpfloat (host[16], ==, -1);
    g_assert_cmpfloat (host[19], ==, -2);
    g_assert_cmpfloat (host[20], ==, -3);
    g_assert_cmpfloat (host[23], ==, -4);
    g_assert_cmpfloat (host[17], ==, 17);
    g_assert_cmpfloat (host[12], ==, 12);
  }

  /* download the same view back, packed */
  atomr_actor_download_tensor_async (actor, sub, NULL, store_result, &result);
  down = atomr_actor_download_tensor_finish (actor, wait_result (&result), &error);
  g_assert_no_error (error);
  g_clear_object (&result);
  g_assert_cmpmem (g_bytes_get_data (down, NULL), g_bytes_get_size (down), values, sizeof values);

  /* copy the reversed first block t[0, 0:2, 3:1:-1] into a packed tensor */
  {
    g_autoptr(AtomrTensor) a = atomr_tensor_select (f->t, 0, 0, &error);
    g_autoptr(AtomrTensor) b = atomr_tensor_slice (a, 0, 0, 2, 1, &error);
    g_autoptr(AtomrTensor) c = atomr_tensor_slice (b, 1, 3, 1, -1, &error);
    g_assert_no_error (error);
    packed = atomr_tensor_empty (f->device, ATOMR_DTYPE_F32, two_two, 2, &error);
    g_assert_no_error (error);
    /* reversed in the source only: one piece per column */
    atomr_actor_copy_tensor_async (actor, c, packed, NULL, store_result, &result);
    g_assert_true (atomr_actor_copy_tensor_finish (actor, wait_result (&result), &error));
    g_assert_no_error (error);
    g_clear_object (&result);
    {
      const gfloat expected[] = { 3, 2, 7, 6 };
      assert_elements (packed, expected, 4);
    }
    /* reversed on both sides works */
    rev = atomr_tensor_slice (packed, 1, 1, -1, -1, &error);
    g_assert_no_error (error);
    atomr_actor_copy_tensor_async (actor, c, rev, NULL, store_result, &result);
    g_assert_true (atomr_actor_copy_tensor_finish (actor, wait_result (&result), &error));
    g_assert_no_error (error);
    g_clear_object (&result);
    {
      const gfloat expected[] = { 2, 3, 6, 7 };
      assert_elements (packed, expected, 4);
    }
  }

  /* invalid requests fail cleanly */
  {
    g_autoptr(GBytes) short_data = g_bytes_new (values, 8);
    g_autoptr(AtomrTensor) a = atomr_tensor_slice (f->t, 0, 0, 1, 1, &error);
    g_autoptr(AtomrTensor) b = atomr_tensor_slice (f->t, 2, 0, 2, 1, &error);
    g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
    g_autoptr(AtomrTensor) one = atomr_tensor_slice (f->t, 1, 0, 1, 1, &error);
    g_autoptr(AtomrTensor) bc = NULL;
    const gint64 shape[] = { 2, 3, 4 };

    atomr_actor_upload_tensor_async (actor, sub, short_data, NULL, store_result, &result);
    g_assert_false (atomr_actor_upload_tensor_finish (actor, wait_result (&result), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "8 bytes of data for f32[2, 2]"));
    g_clear_error (&error);
    g_clear_object (&result);

    atomr_actor_copy_tensor_async (actor, a, b, NULL, store_result, &result);
    g_assert_false (atomr_actor_copy_tensor_finish (actor, wait_result (&result), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "differ in shape"));
    g_clear_error (&error);
    g_clear_object (&result);

    atomr_actor_copy_tensor_async (actor, f->t, f->t, NULL, store_result, &result);
    g_assert_false (atomr_actor_copy_tensor_finish (actor, wait_result (&result), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "dst overlaps src"));
    g_clear_error (&error);
    g_clear_object (&result);

    atomr_actor_download_tensor_async (actor, bare, NULL, store_result, &result);
    g_assert_null (atomr_actor_download_tensor_finish (actor, wait_result (&result), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_clear_object (&result);

    g_assert_no_error (error);
    bc = atomr_tensor_broadcast_to (one, shape, 3, &error);
    g_assert_no_error (error);
    atomr_actor_upload_tensor_async (actor, bc, up, NULL, store_result, &result);
    g_assert_false (atomr_actor_upload_tensor_finish (actor, wait_result (&result), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "broadcast along dimension 1"));
    g_clear_error (&error);
    g_clear_object (&result);
  }
  g_clear_object (&packed);
  g_clear_object (&rev);
  g_assert_finalize_object (g_steal_pointer (&actor));
}

/* The view entry points of the BLAS actor validate before the host device
 * refuses the work (it has no cuBLAS): a valid request gets NOT_SUPPORTED,
 * an invalid one INVALID_ARGUMENT naming the culprit. */
static void
test_blas_views (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (f->device, &error);
  g_autoptr(AtomrBuffer) other = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 64, &error);
  g_autoptr(AtomrTensor) a = NULL;     /* 2 × 3 of the first block */
  g_autoptr(AtomrTensor) b = NULL;     /* 3 × 4, the second block */
  g_autoptr(AtomrTensor) c = NULL;     /* 2 × 4 in another buffer */
  g_autoptr(AtomrTensor) step = NULL;
  g_autoptr(AtomrTensor) x = NULL;
  g_autoptr(AtomrTensor) y = NULL;
  g_autoptr(AtomrTensor) rev = NULL;
  GAsyncResult *result = NULL;
  const gint64 c_shape[] = { 2, 4 }, y_shape[] = { 2 };

  g_assert_no_error (error);
  atomr_device_set_host_autocomplete (f->device, TRUE);
  {
    g_autoptr(AtomrTensor) first = atomr_tensor_select (f->t, 0, 0, &error);
    a = atomr_tensor_slice (first, 1, 1, 4, 1, &error);   /* 3 × 3 */
    g_clear_object (&first);
    first = atomr_tensor_slice (a, 0, 0, 2, 1, &error);
    g_clear_object (&a);
    a = g_steal_pointer (&first);                          /* 2 × 3, ld 4 */
    b = atomr_tensor_select (f->t, 0, 1, &error);          /* 3 × 4 */
    c = atomr_tensor_new (other, c_shape, 2, &error);
    step = atomr_tensor_slice (b, 1, 0, 4, 2, &error);     /* 3 × 2, strides 4, 2 */
    x = atomr_tensor_select (b, 0, 0, &error);             /* 4 */
    y = atomr_tensor_new_strided (other, ATOMR_DTYPE_F32, 40 * 4, y_shape, 1, NULL, 0, &error);
    rev = atomr_tensor_slice (x, 0, 3, -1, -1, &error);
    g_assert_no_error (error);
  }

#define EXPECT(finish, code, text)                                               \
  G_STMT_START {                                                                 \
    g_assert_false (finish (blas, wait_result (&result), &error));               \
    if (error == NULL || strstr (error->message, text) == NULL)                  \
      g_printerr ("unexpected: %s\n", error ? error->message : "no error");      \
    g_assert_error (error, ATOMR_ERROR, code);                                   \
    if (text)                                                                    \
      g_assert_nonnull (strstr (error->message, (const gchar *) text));          \
    g_clear_error (&error);                                                      \
    g_clear_object (&result);                                                    \
  } G_STMT_END

  /* valid: refused only for want of cuBLAS */
  atomr_blas_actor_gemm_tensor_async (blas, 1, 0, a, b, 0, 0, c, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_NOT_SUPPORTED, "no cuBLAS");
  atomr_blas_actor_gemm_tensor_async (blas, 1, 0, b, a, 0, 0, c, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "shapes do not chain");
  atomr_blas_actor_gemm_tensor_async (blas, 1, 0, a, step, 0, 0, c, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT,
          "gemm-tensor: B (3 × 2, strides 4, 2) has no BLAS layout");
  atomr_blas_actor_gemm_tensor_async (blas, 1, 0, a, b, 0, 0, b, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "C overlaps B");
  {
    /* C reading columns of A's buffer elsewhere is fine: byte ranges decide */
    g_autoptr(AtomrTensor) last = atomr_tensor_select (f->t, 0, 1, &error);
    g_autoptr(AtomrTensor) c2 = atomr_tensor_slice (last, 0, 0, 2, 1, &error);
    g_autoptr(AtomrTensor) a2 = atomr_tensor_slice (a, 1, 0, 2, 1, &error);
    g_autoptr(AtomrTensor) b2 = atomr_tensor_slice (c, 0, 0, 2, 1, &error);
    g_assert_no_error (error);
    atomr_blas_actor_gemm_tensor_async (blas, 1, 0, a2, b2, 0, 0, c2, NULL, store_result, &result);
    /* Past validation; B is a view of C, which the first (refused) gemm
     * wrote, so the request carries that failure along. */
    EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_DEPENDENCY_FAILED, "no cuBLAS");
  }

  atomr_blas_actor_gemv_tensor_async (blas, 1, 0, a, x, 0, 0, y, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemv_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT,
          "A is 2 × 3 but x has 4 and y 2 elements");
  atomr_blas_actor_gemv_tensor_async (blas, 1, 0, step, y, 0, 0, x, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_gemv_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "no BLAS layout");
  atomr_blas_actor_axpy_tensor_async (blas, 1, 0, rev, x, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_axpy_tensor_finish, ATOMR_ERROR_NOT_SUPPORTED, "has stride -1");
  atomr_blas_actor_axpy_tensor_async (blas, 1, 0, x, y, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_axpy_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "x has 4 elements but y 2");
  atomr_blas_actor_axpy_tensor_async (blas, 1, 0, x, x, NULL, store_result, &result);
  EXPECT (atomr_blas_actor_axpy_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "y overlaps x");
  {
    g_autoptr(AtomrTensor) first = atomr_tensor_slice (x, 0, 0, 1, 1, &error);
    g_autoptr(AtomrTensor) bc = atomr_tensor_broadcast_to (first, (const gint64[]) { 4 }, 1, &error);
    g_assert_no_error (error);
    atomr_blas_actor_axpy_tensor_async (blas, 1, 0, bc, rev, NULL, store_result, &result);
    EXPECT (atomr_blas_actor_axpy_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "has stride 0");
  }
  {
    g_autoptr(AtomrTensor) bare = g_object_new (ATOMR_TYPE_TENSOR, NULL);
    atomr_blas_actor_gemm_tensor_async (blas, 1, 0, bare, b, 0, 0, c, NULL, store_result, &result);
    EXPECT (atomr_blas_actor_gemm_tensor_finish, ATOMR_ERROR_INVALID_ARGUMENT, "no buffer");
  }
#undef EXPECT
  g_assert_finalize_object (g_steal_pointer (&blas));
}

/* The RNG actor's view entry point validates the view before the host
 * device refuses the work (it has no cuRAND). */
static void
test_rng_views (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrRngActor) rng = NULL;
  g_autoptr(AtomrTensor) step = atomr_tensor_slice (f->t, 2, 0, 4, 2, &error);
  g_autoptr(AtomrTensor) empty = atomr_tensor_slice (f->t, 0, 1, 1, 1, &error);
  g_autoptr(AtomrTensor) row = atomr_tensor_select (f->t, 0, 1, &error);
  g_autoptr(AtomrTensor) words = atomr_tensor_new_strided (f->buffer, ATOMR_DTYPE_U32, 0,
                                                          (const gint64[]) { 4 }, 1, NULL, 0, &error);
  GAsyncResult *result = NULL;

  g_assert_no_error (error);
  atomr_device_set_host_autocomplete (f->device, TRUE);
  rng = atomr_rng_actor_new (f->device, ATOMR_RNG_PHILOX, &error);
  g_assert_no_error (error);

  atomr_rng_actor_fill_tensor_async (rng, step, ATOMR_RNG_UNIFORM, 0, 0, NULL, store_result, &result);
  g_assert_false (atomr_rng_actor_fill_tensor_finish (rng, wait_result (&result), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "is not contiguous"));
  g_clear_error (&error);
  g_clear_object (&result);

  atomr_rng_actor_fill_tensor_async (rng, words, ATOMR_RNG_UNIFORM, 0, 0, NULL, store_result, &result);
  g_assert_false (atomr_rng_actor_fill_tensor_finish (rng, wait_result (&result), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "not its buffer's"));
  g_clear_error (&error);
  g_clear_object (&result);

  atomr_rng_actor_fill_tensor_async (rng, empty, ATOMR_RNG_UNIFORM, 0, 0, NULL, store_result, &result);
  g_assert_true (atomr_rng_actor_fill_tensor_finish (rng, wait_result (&result), &error));
  g_assert_no_error (error);
  g_clear_object (&result);

  /* valid: refused only for want of cuRAND */
  atomr_rng_actor_fill_tensor_async (rng, row, ATOMR_RNG_UNIFORM, 0, 0, NULL, store_result, &result);
  g_assert_false (atomr_rng_actor_fill_tensor_finish (rng, wait_result (&result), &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "cuRAND needs a CUDA device"));
  g_clear_error (&error);
  g_clear_object (&result);
  g_assert_finalize_object (g_steal_pointer (&rng));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/tensor/basics", Fixture, NULL, fixture_setup, test_basics, fixture_teardown);
  g_test_add_func ("/tensor/for-buffer", test_for_buffer);
  g_test_add ("/tensor/bounds", Fixture, NULL, fixture_setup, test_bounds, fixture_teardown);
  g_test_add ("/tensor/slice-select", Fixture, NULL, fixture_setup, test_slice_select, fixture_teardown);
  g_test_add ("/tensor/permute", Fixture, NULL, fixture_setup, test_permute, fixture_teardown);
  g_test_add ("/tensor/reshape", Fixture, NULL, fixture_setup, test_reshape, fixture_teardown);
  g_test_add ("/tensor/broadcast", Fixture, NULL, fixture_setup, test_broadcast, fixture_teardown);
  g_test_add ("/tensor/matrix-layout", Fixture, NULL, fixture_setup, test_matrix_layout, fixture_teardown);
  g_test_add ("/tensor/overlaps", Fixture, NULL, fixture_setup, test_overlaps, fixture_teardown);
  g_test_add_func ("/tensor/bare", test_bare);
  g_test_add_func ("/tensor/copy-plan", test_copy_plan);
  g_test_add ("/tensor/blas-views", Fixture, NULL, fixture_setup, test_blas_views, fixture_teardown);
  g_test_add ("/tensor/rng-views", Fixture, NULL, fixture_setup, test_rng_views, fixture_teardown);
  g_test_add ("/tensor/copy-actor", Fixture, NULL, fixture_setup, test_copy_actor, fixture_teardown);

  return g_test_run ();
}
