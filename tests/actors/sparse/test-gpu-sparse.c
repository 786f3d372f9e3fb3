/* test-gpu-sparse.c — the cuSPARSE actor against CPU references
 *
 * Every matrix is made dense on the host first (with empty rows), rounded
 * to its dtype, then stored in each format; references are computed in
 * double (complex) precision from the rounded values.  Error measure:
 * ‖got − ref‖_F / max (‖ref‖_F, 1e-30); bounds 1e-5 (f32, c64), 1e-12
 * (f64, c128), 2e-2 (f16).  Measured errors are printed.
 *
 * Skips without a CUDA device.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "actors/sparse/atomr-sparse-private.h"

typedef struct { gdouble re, im; } Z;

typedef struct {
  AtomrDevice      *device;
  AtomrSparseActor *actor;
  GRand            *rand;
} Fixture;

#define N ATOMR_TRANSPOSE_N
#define T ATOMR_TRANSPOSE_T
#define SKIP_WITHOUT_DEVICE(f) \
  G_STMT_START { if ((f)->device == NULL) { g_test_skip ("no CUDA device"); return; } } G_STMT_END

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
  f->actor = atomr_sparse_actor_new (f->device, &error);
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

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

/* Iterates until the reply arrived; the caller owns it. */
static GAsyncResult *
await (GAsyncResult **slot)
{
  GAsyncResult *r;

  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);
  r = *slot;
  *slot = NULL;
  return r;
}

/* ------------------------------------------------------------------ */
/* Host values in any dtype                                             */

static guint16
float_to_half (gfloat value)
{
  union { gfloat f; guint32 u; } v = { .f = value };
  guint32 sign = (v.u >> 16) & 0x8000;
  gint32 exp = (gint32) ((v.u >> 23) & 0xff) - 127 + 15;
  guint32 mant = v.u & 0x7fffff;

  if (exp <= 0)
    return sign;                     /* flush tiny values to zero */
  if (exp >= 31)
    return sign | 0x7c00;
  {
    guint32 half = sign | ((guint32) exp << 10) | (mant >> 13);
    guint32 rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
      half++;
    return half;
  }
}

static gfloat
half_to_float (guint16 h)
{
  guint32 sign = (guint32) (h & 0x8000) << 16;
  guint32 exp = (h >> 10) & 0x1f;
  guint32 mant = h & 0x3ff;
  union { gfloat f; guint32 u; } v;

  if (exp == 0)
    v.u = sign;                      /* never produced above */
  else if (exp == 31)
    v.u = sign | 0x7f800000 | (mant << 13);
  else
    v.u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  return v.f;
}

static gboolean
is_complex (AtomrDtype dt)
{
  return dt == ATOMR_DTYPE_C64 || dt == ATOMR_DTYPE_C128;
}

static GBytes *
pack (const Z *v, gsize n, AtomrDtype dt)
{
  gsize size = atomr_dtype_get_size (dt);
  guint8 *out = g_malloc0 (MAX (n * size, 1));

  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = out + i * size;
      switch (dt)
        {
        case ATOMR_DTYPE_F16: { guint16 h = float_to_half ((gfloat) v[i].re); memcpy (p, &h, 2); break; }
        case ATOMR_DTYPE_F32: { gfloat x = (gfloat) v[i].re; memcpy (p, &x, 4); break; }
        case ATOMR_DTYPE_F64: memcpy (p, &v[i].re, 8); break;
        case ATOMR_DTYPE_C64: { gfloat x[2] = { (gfloat) v[i].re, (gfloat) v[i].im }; memcpy (p, x, 8); break; }
        case ATOMR_DTYPE_C128: { gdouble x[2] = { v[i].re, v[i].im }; memcpy (p, x, 16); break; }
        default: g_assert_not_reached ();
        }
    }
  return g_bytes_new_take (out, n * size);
}

static void
unpack (GBytes *bytes, gsize offset_elems, Z *v, gsize n, AtomrDtype dt)
{
  gsize size = atomr_dtype_get_size (dt);
  const guint8 *in = (const guint8 *) g_bytes_get_data (bytes, NULL) + offset_elems * size;

  g_assert_cmpuint (g_bytes_get_size (bytes), >=, (offset_elems + n) * size);
  for (gsize i = 0; i < n; i++)
    {
      const guint8 *p = in + i * size;
      v[i].im = 0;
      switch (dt)
        {
        case ATOMR_DTYPE_F16: { guint16 h; memcpy (&h, p, 2); v[i].re = half_to_float (h); break; }
        case ATOMR_DTYPE_F32: { gfloat x; memcpy (&x, p, 4); v[i].re = x; break; }
        case ATOMR_DTYPE_F64: memcpy (&v[i].re, p, 8); break;
        case ATOMR_DTYPE_C64: { gfloat x[2]; memcpy (x, p, 8); v[i].re = x[0]; v[i].im = x[1]; break; }
        case ATOMR_DTYPE_C128: { gdouble x[2]; memcpy (x, p, 16); v[i].re = x[0]; v[i].im = x[1]; break; }
        default: g_assert_not_reached ();
        }
    }
}

/* Values rounded to @dt, so references use exactly what the GPU sees. */
static void
round_to (Z *v, gsize n, AtomrDtype dt)
{
  g_autoptr(GBytes) b = pack (v, n, dt);
  unpack (b, 0, v, n, dt);
}

static Z
zmul (Z a, Z b)
{
  return (Z) { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re };
}

static Z
zadd (Z a, Z b)
{
  return (Z) { a.re + b.re, a.im + b.im };
}

static Z
zscale (gdouble s, Z a)
{
  return (Z) { s * a.re, s * a.im };
}

static gboolean
zzero (Z a)
{
  return a.re == 0 && a.im == 0;
}

static gdouble
tolerance (AtomrDtype dt)
{
  switch (dt)
    {
    case ATOMR_DTYPE_F64: case ATOMR_DTYPE_C128: return 1e-12;
    case ATOMR_DTYPE_F16: return 2e-2;
    default: return 1e-5;
    }
}

static void
assert_close_within (const gchar *what, const Z *got, const Z *ref, gsize n, AtomrDtype dt, gdouble bound)
{
  gdouble num = 0, den = 0, err;

  for (gsize i = 0; i < n; i++)
    {
      num += (got[i].re - ref[i].re) * (got[i].re - ref[i].re) + (got[i].im - ref[i].im) * (got[i].im - ref[i].im);
      den += ref[i].re * ref[i].re + ref[i].im * ref[i].im;
    }
  err = sqrt (num) / MAX (sqrt (den), 1e-30);
  if (den == 0)
    err = sqrt (num);
  g_test_message ("%s (%s, %" G_GSIZE_FORMAT " values): relative error %.3g", what,
                  atomr_dtype_get_name (dt), n, err);
  if (!(err <= bound))
    g_error ("%s (%s): relative error %.3g exceeds %.1g", what, atomr_dtype_get_name (dt), err, bound);
}

static void
assert_close (const gchar *what, const Z *got, const Z *ref, gsize n, AtomrDtype dt)
{
  assert_close_within (what, got, ref, n, dt, tolerance (dt));
}

/* ------------------------------------------------------------------ */
/* Host matrices                                                        */

/* A rows × cols dense matrix (row-major) with about @density of its
 * entries set; every fifth row (3, 8, ...) is empty. */
static Z *
random_dense (Fixture *f, gint64 rows, gint64 cols, gdouble density, AtomrDtype dt)
{
  Z *d = g_new0 (Z, MAX (rows * cols, 1));

  for (gint64 i = 0; i < rows; i++)
    for (gint64 j = 0; j < cols; j++)
      if (i % 5 != 3 && g_rand_double (f->rand) < density)
        {
          d[i * cols + j].re = g_rand_double_range (f->rand, -1, 1);
          if (is_complex (dt))
            d[i * cols + j].im = g_rand_double_range (f->rand, -1, 1);
          if (zzero (d[i * cols + j]))
            d[i * cols + j].re = 0.5;
        }
  round_to (d, rows * cols, dt);
  return d;
}

static Z *
random_vector (Fixture *f, gint64 n, AtomrDtype dt)
{
  Z *v = g_new0 (Z, MAX (n, 1));

  for (gint64 i = 0; i < n; i++)
    {
      v[i].re = g_rand_double_range (f->rand, -1, 1);
      if (is_complex (dt))
        v[i].im = g_rand_double_range (f->rand, -1, 1);
    }
  round_to (v, n, dt);
  return v;
}

static GBytes *
pack_indices (GArray *a, AtomrDtype it)
{
  gsize size = atomr_dtype_get_size (it);
  guint8 *out = g_malloc0 (MAX (a->len * size, 1));

  for (guint i = 0; i < a->len; i++)
    {
      gint64 v = g_array_index (a, gint64, i);
      if (it == ATOMR_DTYPE_I64)
        memcpy (out + i * 8, &v, 8);
      else
        {
          gint32 w = (gint32) v;
          memcpy (out + i * 4, &w, 4);
        }
    }
  return g_bytes_new_take (out, a->len * size);
}

/* The dense matrix in @format (BSR and Blocked-ELL with 2 × 2 blocks);
 * COO entries are shuffled first: the upload sorts them. */
static AtomrSparseMatrix *
make_sparse (Fixture *f, const Z *d, gint64 rows, gint64 cols, AtomrSparseFormat format,
             AtomrDtype it, AtomrDtype vt)
{
  g_autoptr(GArray) off = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GArray) idx = g_array_new (FALSE, FALSE, sizeof (gint64));
  g_autoptr(GArray) val = g_array_new (FALSE, FALSE, sizeof (Z));
  g_autoptr(GBytes) ob = NULL, ib = NULL, vb = NULL;
  g_autoptr(GError) error = NULL;
  const gint64 bs = 2;
  gint64 zero = 0;
  AtomrSparseMatrix *m;

  switch (format)
    {
    case ATOMR_SPARSE_FORMAT_CSR:
    case ATOMR_SPARSE_FORMAT_COO:
      g_array_append_val (off, zero);
      for (gint64 i = 0; i < rows; i++)
        {
          for (gint64 j = 0; j < cols; j++)
            if (!zzero (d[i * cols + j]))
              {
                g_array_append_val (idx, j);
                g_array_append_val (val, d[i * cols + j]);
                if (format == ATOMR_SPARSE_FORMAT_COO)
                  g_array_append_val (off, i);   /* row indices, after the leading 0 */
              }
          if (format == ATOMR_SPARSE_FORMAT_CSR)
            {
              gint64 n = idx->len;
              g_array_append_val (off, n);
            }
        }
      if (format == ATOMR_SPARSE_FORMAT_COO)
        {
          g_array_remove_index (off, 0);
          /* shuffle (Fisher–Yates), rows, columns and values together */
          for (guint k = idx->len; k > 1; k--)
            {
              guint r = g_rand_int_range (f->rand, 0, k);
              gint64 t;
              Z z;
              t = g_array_index (off, gint64, k - 1); g_array_index (off, gint64, k - 1) = g_array_index (off, gint64, r); g_array_index (off, gint64, r) = t;
              t = g_array_index (idx, gint64, k - 1); g_array_index (idx, gint64, k - 1) = g_array_index (idx, gint64, r); g_array_index (idx, gint64, r) = t;
              z = g_array_index (val, Z, k - 1); g_array_index (val, Z, k - 1) = g_array_index (val, Z, r); g_array_index (val, Z, r) = z;
            }
        }
      break;
    case ATOMR_SPARSE_FORMAT_CSC:
      g_array_append_val (off, zero);
      for (gint64 j = 0; j < cols; j++)
        {
          gint64 n;
          for (gint64 i = 0; i < rows; i++)
            if (!zzero (d[i * cols + j]))
              {
                g_array_append_val (idx, i);
                g_array_append_val (val, d[i * cols + j]);
              }
          n = idx->len;
          g_array_append_val (off, n);
        }
      break;
    case ATOMR_SPARSE_FORMAT_BSR:
      g_array_append_val (off, zero);
      for (gint64 br = 0; br < rows / bs; br++)
        {
          gint64 n;
          for (gint64 bc = 0; bc < cols / bs; bc++)
            {
              gboolean any = FALSE;
              for (gint64 ii = 0; ii < bs; ii++)
                for (gint64 jj = 0; jj < bs; jj++)
                  any |= !zzero (d[(br * bs + ii) * cols + bc * bs + jj]);
              if (!any)
                continue;
              g_array_append_val (idx, bc);
              for (gint64 ii = 0; ii < bs; ii++)
                for (gint64 jj = 0; jj < bs; jj++)
                  g_array_append_val (val, d[(br * bs + ii) * cols + bc * bs + jj]);
            }
          n = idx->len;
          g_array_append_val (off, n);
        }
      break;
    case ATOMR_SPARSE_FORMAT_BLOCKED_ELL:
      {
        gint64 ell_blocks = 1;
        for (gint64 br = 0; br < rows / bs; br++)
          {
            gint64 count = 0;
            for (gint64 bc = 0; bc < cols / bs; bc++)
              {
                gboolean any = FALSE;
                for (gint64 ii = 0; ii < bs; ii++)
                  for (gint64 jj = 0; jj < bs; jj++)
                    any |= !zzero (d[(br * bs + ii) * cols + bc * bs + jj]);
                count += any;
              }
            ell_blocks = MAX (ell_blocks, count);
          }
        g_array_set_size (idx, (rows / bs) * ell_blocks);
        g_array_set_size (val, rows * ell_blocks * bs);
        memset (val->data, 0, val->len * sizeof (Z));
        for (gint64 br = 0; br < rows / bs; br++)
          {
            gint64 k = 0;
            for (gint64 bc = 0; bc < cols / bs; bc++)
              {
                gboolean any = FALSE;
                for (gint64 ii = 0; ii < bs; ii++)
                  for (gint64 jj = 0; jj < bs; jj++)
                    any |= !zzero (d[(br * bs + ii) * cols + bc * bs + jj]);
                if (!any)
                  continue;
                g_array_index (idx, gint64, br * ell_blocks + k) = bc;
                for (gint64 ii = 0; ii < bs; ii++)
                  for (gint64 jj = 0; jj < bs; jj++)
                    g_array_index (val, Z, (br * bs + ii) * (ell_blocks * bs) + k * bs + jj) =
                      d[(br * bs + ii) * cols + bc * bs + jj];
                k++;
              }
            for (; k < ell_blocks; k++)
              g_array_index (idx, gint64, br * ell_blocks + k) = -1;
          }
      }
      break;
    }

  ob = format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL ? NULL : pack_indices (off, it);
  ib = pack_indices (idx, it);
  vb = pack ((Z *) val->data, val->len, vt);
  m = atomr_sparse_matrix_new_from_bytes (f->device, format, rows, cols, bs, it, ob, ib, vt, vb, NULL, &error);
  g_assert_no_error (error);
  return m;
}

/* A dense view of @v (rows × cols, or a vector when cols < 0), stored
 * row-major, or column-major when @col_major. */
static AtomrTensor *
upload_dense (Fixture *f, const Z *v, gint64 rows, gint64 cols, AtomrDtype dt, gboolean col_major)
{
  gint64 n = cols < 0 ? rows : rows * cols;
  g_autofree Z *stored = g_new0 (Z, MAX (n, 1));
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(GError) error = NULL;
  AtomrTensor *t;

  for (gint64 i = 0; i < n; i++)
    {
      gint64 r = cols < 0 ? i : i / cols, c = cols < 0 ? 0 : i % cols;
      stored[col_major && cols >= 0 ? c * rows + r : i] = v[i];
    }
  bytes = pack (stored, n, dt);
  buffer = atomr_buffer_new (f->device, dt, MAX (n, 1), &error);
  g_assert_no_error (error);
  if (n > 0)
    g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  if (cols < 0)
    {
      gint64 shape[1] = { rows };
      t = atomr_tensor_new (buffer, shape, 1, &error);
    }
  else if (col_major)
    {
      gint64 shape[2] = { cols, rows };
      g_autoptr(AtomrTensor) rm = atomr_tensor_new (buffer, shape, 2, &error);
      g_assert_no_error (error);
      t = atomr_tensor_transpose (rm, 0, 1, &error);
    }
  else
    {
      gint64 shape[2] = { rows, cols };
      t = atomr_tensor_new (buffer, shape, 2, &error);
    }
  g_assert_no_error (error);
  return t;
}

/* The values of a view made by upload_dense(), row-major. */
static Z *
download_dense (AtomrTensor *t, gint64 rows, gint64 cols, gboolean col_major)
{
  gint64 n = cols < 0 ? rows : rows * cols;
  AtomrDtype dt = atomr_tensor_get_dtype (t);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (atomr_tensor_get_buffer (t), NULL, &error);
  g_autofree Z *stored = g_new0 (Z, MAX (n, 1));
  Z *v = g_new0 (Z, MAX (n, 1));

  g_assert_no_error (error);
  unpack (bytes, 0, stored, n, dt);
  for (gint64 i = 0; i < n; i++)
    {
      gint64 r = cols < 0 ? i : i / cols, c = cols < 0 ? 0 : i % cols;
      v[i] = stored[col_major && cols >= 0 ? c * rows + r : i];
    }
  return v;
}

/* The dense form of a matrix, through the actor. */
static Z *
to_dense (Fixture *f, AtomrSparseMatrix *m)
{
  gint64 rows = atomr_sparse_matrix_get_rows (m), cols = atomr_sparse_matrix_get_cols (m);
  AtomrDtype dt = atomr_sparse_matrix_get_value_dtype (m);
  g_autofree Z *zeros = g_new0 (Z, MAX (rows * cols, 1));
  g_autoptr(AtomrTensor) t = upload_dense (f, zeros, rows, cols, dt, FALSE);
  g_autoptr(GError) error = NULL;
  GAsyncResult *slot = NULL;
  g_autoptr(GAsyncResult) res = NULL;

  atomr_sparse_actor_sparse_to_dense_async (f->actor, m, t, NULL, store_result, &slot);
  res = await (&slot);
  g_assert_true (atomr_sparse_actor_sparse_to_dense_finish (f->actor, res, &error));
  g_assert_no_error (error);
  return download_dense (t, rows, cols, FALSE);
}

/* op(A) as a dense row-major matrix. */
static Z *
dense_op (const Z *a, gint64 rows, gint64 cols, AtomrTranspose op)
{
  Z *o = g_new0 (Z, MAX (rows * cols, 1));

  for (gint64 i = 0; i < rows; i++)
    for (gint64 j = 0; j < cols; j++)
      {
        Z v = a[i * cols + j];
        if (op == N)
          o[i * cols + j] = v;
        else
          o[j * rows + i] = op == ATOMR_TRANSPOSE_C ? (Z) { v.re, -v.im } : v;
      }
  return o;
}

/* C (m × n) = alpha·A (m × k)·B (k × n) + beta·C, row-major. */
static void
ref_gemm (gint64 m, gint64 n, gint64 k, gdouble alpha, const Z *a, const Z *b, gdouble beta, Z *c)
{
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        Z s = { 0, 0 };
        for (gint64 l = 0; l < k; l++)
          s = zadd (s, zmul (a[i * k + l], b[l * n + j]));
        c[i * n + j] = zadd (zscale (alpha, s), zscale (beta, c[i * n + j]));
      }
}

/* ------------------------------------------------------------------ */
/* SpMV                                                                 */

static void
check_spmv (Fixture *f, AtomrSparseFormat format, AtomrDtype it, AtomrDtype vt, AtomrTranspose op,
            gint64 rows, gint64 cols, gdouble density)
{
  g_autofree Z *a = random_dense (f, rows, cols, density, vt);
  g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, rows, cols, format, it, vt);
  gint64 xr = op == N ? cols : rows, yr = op == N ? rows : cols;
  g_autofree Z *x = random_vector (f, xr, vt);
  g_autofree Z *y = random_vector (f, yr, vt);
  g_autofree Z *opa = dense_op (a, rows, cols, op);
  g_autofree Z *got = NULL;
  g_autoptr(AtomrTensor) tx = upload_dense (f, x, xr, -1, vt, FALSE);
  g_autoptr(AtomrTensor) ty = upload_dense (f, y, yr, -1, vt, FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  g_autofree gchar *what = g_strdup_printf ("spmv %s %s op %d %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT
                                            " nnz %" G_GINT64_FORMAT,
                                            atomr_dtype_get_name (it), format == ATOMR_SPARSE_FORMAT_CSR ? "csr" :
                                            format == ATOMR_SPARSE_FORMAT_CSC ? "csc" :
                                            format == ATOMR_SPARSE_FORMAT_COO ? "coo" : "bsr",
                                            op, rows, cols, atomr_sparse_matrix_get_nnz (m));

  atomr_sparse_actor_spmv_async (f->actor, op, 1.5, m, tx, 0.5, ty, NULL, store_result, &slot);
  res = await (&slot);
  g_assert_true (atomr_sparse_actor_spmv_finish (f->actor, res, &error));
  g_assert_no_error (error);
  ref_gemm (yr, 1, xr, 1.5, opa, x, 0.5, y);
  got = download_dense (ty, yr, -1, FALSE);
  assert_close (what, got, y, yr, vt);
}

static void
test_spmv (Fixture *f, gconstpointer data)
{
  static const AtomrSparseFormat formats[] = {
    ATOMR_SPARSE_FORMAT_CSR, ATOMR_SPARSE_FORMAT_CSC, ATOMR_SPARSE_FORMAT_COO, ATOMR_SPARSE_FORMAT_BSR,
  };
  static const AtomrDtype dtypes[] = {
    ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
  };

  SKIP_WITHOUT_DEVICE (f);
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    for (guint j = 0; j < G_N_ELEMENTS (dtypes); j++)
      {
        check_spmv (f, formats[i], ATOMR_DTYPE_I32, dtypes[j], N, 36, 28, 0.2);
        /* cuSPARSE's BSR SpMV takes op(A) = A only */
        if (formats[i] != ATOMR_SPARSE_FORMAT_BSR)
          check_spmv (f, formats[i], ATOMR_DTYPE_I32, dtypes[j], T, 36, 28, 0.2);
      }
  /* i64 indices, f16 values, conjugate transpose */
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I64, ATOMR_DTYPE_F32, N, 36, 28, 0.2);
  check_spmv (f, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_I64, ATOMR_DTYPE_F64, T, 36, 28, 0.2);
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_F16, N, 36, 28, 0.2);
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_C64, ATOMR_TRANSPOSE_C, 36, 28, 0.2);
  /* nnz = 0: y = beta·y */
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, N, 16, 12, 0.0);
  check_spmv (f, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, N, 16, 12, 0.0);
  /* a larger one, to use the workspace */
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, N, 2000, 1500, 0.01);
  g_test_message ("workspace: %" G_GUINT64_FORMAT " bytes", atomr_sparse_actor_get_workspace_size (f->actor));
}

/* One CSR matrix, many products: the preprocessed descriptor and buffer
 * kept on the matrix serve other vectors, scalars and (after
 * set_values) other values with the same structure, and op T. */
static void
test_spmv_reuse (Fixture *f, gconstpointer data)
{
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64 };
  const gint64 rows = 300, cols = 200;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype vt = dtypes[d];
      g_autofree Z *a = random_dense (f, rows, cols, 0.05, vt);
      g_autofree Z *a2 = g_memdup2 (a, rows * cols * sizeof (Z));
      g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, rows, cols, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, vt);
      g_autoptr(AtomrSparseMatrix) m2 = NULL;

      for (gint64 k = 0; k < rows * cols; k++)
        a2[k] = zscale (-0.75, a2[k]);
      round_to (a2, rows * cols, vt);
      m2 = make_sparse (f, a2, rows, cols, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, vt);

      for (guint call = 0; call < 6; call++)
        {
          gboolean values2 = call >= 3;
          AtomrTranspose op = call % 3 == 2 ? T : N;
          const Z *dense = values2 ? a2 : a;
          gint64 xr = op == N ? cols : rows, yr = op == N ? rows : cols;
          gdouble alpha = 0.5 + call, beta = call % 2 ? 0.0 : -1.25;
          g_autofree Z *x = random_vector (f, xr, vt);
          g_autofree Z *y = random_vector (f, yr, vt);
          g_autofree Z *opa = dense_op (dense, rows, cols, op);
          g_autoptr(AtomrTensor) tx = upload_dense (f, x, xr, -1, vt, FALSE);
          g_autoptr(AtomrTensor) ty = upload_dense (f, y, yr, -1, vt, FALSE);
          g_autoptr(GError) error = NULL;
          g_autoptr(GAsyncResult) res = NULL;
          g_autofree Z *got = NULL;
          g_autofree gchar *what = g_strdup_printf ("spmv reuse %s call %u", atomr_dtype_get_name (vt), call);
          GAsyncResult *slot = NULL;

          if (call == 3)
            {
              g_assert_true (atomr_sparse_matrix_set_values (m, atomr_sparse_matrix_get_values (m2), &error));
              g_assert_no_error (error);
            }
          atomr_sparse_actor_spmv_async (f->actor, op, alpha, m, tx, beta, ty, NULL, store_result, &slot);
          res = await (&slot);
          g_assert_true (atomr_sparse_actor_spmv_finish (f->actor, res, &error));
          g_assert_no_error (error);
          ref_gemm (yr, 1, xr, alpha, opa, x, beta, y);
          got = download_dense (ty, yr, -1, FALSE);
          assert_close (what, got, y, yr, vt);
        }
    }
}

/* ------------------------------------------------------------------ */
/* SpMM                                                                 */

static void
check_spmm (Fixture *f, AtomrSparseFormat format, AtomrDtype vt, AtomrTranspose op_b,
            gboolean b_col_major, gboolean c_col_major, gint64 batch)
{
  const gint64 rows = 36, cols = 28, n = 6;
  g_autofree Z *a = random_dense (f, rows, cols, 0.25, vt);
  g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, rows, cols, format, ATOMR_DTYPE_I32, vt);
  gint64 br = op_b == N ? cols : n, bc = op_b == N ? n : cols;
  g_autofree Z *b = random_vector (f, batch * br * bc, vt);
  g_autofree Z *c = random_vector (f, batch * rows * n, vt);
  g_autoptr(AtomrTensor) tb = NULL, tc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  g_autofree gchar *what = g_strdup_printf ("spmm format %d op_b %d b %s c %s batch %" G_GINT64_FORMAT,
                                            format, op_b, b_col_major ? "col" : "row",
                                            c_col_major ? "col" : "row", batch);
  g_autofree Z *got = NULL;

  if (batch == 1)
    {
      tb = upload_dense (f, b, br, bc, vt, b_col_major);
      tc = upload_dense (f, c, rows, n, vt, c_col_major);
    }
  else
    {
      /* 3-D row-major batches */
      g_autoptr(AtomrTensor) fb = upload_dense (f, b, batch * br * bc, -1, vt, FALSE);
      g_autoptr(AtomrTensor) fc = upload_dense (f, c, batch * rows * n, -1, vt, FALSE);
      gint64 sb[3] = { batch, br, bc }, sc[3] = { batch, rows, n };
      tb = atomr_tensor_reshape (fb, sb, 3, &error);
      g_assert_no_error (error);
      tc = atomr_tensor_reshape (fc, sc, 3, &error);
      g_assert_no_error (error);
    }
  atomr_sparse_actor_spmm_async (f->actor, N, op_b, 2.0, m, tb, -1.0, tc, NULL, store_result, &slot);
  res = await (&slot);
  g_assert_true (atomr_sparse_actor_spmm_finish (f->actor, res, &error));
  g_assert_no_error (error);
  for (gint64 k = 0; k < batch; k++)
    {
      g_autofree Z *opb = dense_op (b + k * br * bc, br, bc, op_b);
      ref_gemm (rows, n, cols, 2.0, a, opb, -1.0, c + k * rows * n);
    }
  if (batch == 1)
    got = download_dense (tc, rows, n, c_col_major);
  else
    got = download_dense (tc, batch * rows * n, -1, FALSE);
  /* cuSPARSE runs Blocked-ELL SpMM on tensor cores: f32 in TF32 (2.2e-4
   * measured on an H100), so that case gets the TF32 bound. */
  assert_close_within (what, got, c, batch * rows * n, vt,
                       format == ATOMR_SPARSE_FORMAT_BLOCKED_ELL && vt == ATOMR_DTYPE_F32 ? 1e-3
                       : tolerance (vt));
}

static void
test_spmm (Fixture *f, gconstpointer data)
{
  static const AtomrSparseFormat formats[] = {
    ATOMR_SPARSE_FORMAT_CSR, ATOMR_SPARSE_FORMAT_CSC, ATOMR_SPARSE_FORMAT_COO, ATOMR_SPARSE_FORMAT_BSR,
  };

  SKIP_WITHOUT_DEVICE (f);
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      check_spmm (f, formats[i], ATOMR_DTYPE_F32, N, FALSE, FALSE, 1);
      check_spmm (f, formats[i], ATOMR_DTYPE_F64, N, TRUE, TRUE, 1);
    }
  check_spmm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F32, T, FALSE, TRUE, 1);
  check_spmm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_C64, N, TRUE, FALSE, 1);
  check_spmm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F16, N, FALSE, FALSE, 1);
  /* Blocked-ELL (cuSPARSE: row-major B and C) */
  check_spmm (f, ATOMR_SPARSE_FORMAT_BLOCKED_ELL, ATOMR_DTYPE_F32, N, FALSE, FALSE, 1);
  check_spmm (f, ATOMR_SPARSE_FORMAT_BLOCKED_ELL, ATOMR_DTYPE_F16, N, FALSE, FALSE, 1);
  /* one A, a batch of B and C */
  check_spmm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F32, N, FALSE, FALSE, 3);
  check_spmm (f, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_F64, N, FALSE, FALSE, 3);
}

/* ------------------------------------------------------------------ */
/* SpGEMM, conversions                                                  */

static void
check_spgemm (Fixture *f, AtomrDtype it, AtomrDtype vt, gdouble density_a)
{
  const gint64 m = 30, k = 26, n = 34;
  g_autofree Z *a = random_dense (f, m, k, density_a, vt);
  g_autofree Z *b = random_dense (f, k, n, 0.2, vt);
  g_autofree Z *c = g_new0 (Z, m * n);
  g_autoptr(AtomrSparseMatrix) ma = make_sparse (f, a, m, k, ATOMR_SPARSE_FORMAT_CSR, it, vt);
  g_autoptr(AtomrSparseMatrix) mb = make_sparse (f, b, k, n, ATOMR_SPARSE_FORMAT_CSR, it, vt);
  g_autoptr(AtomrSparseMatrix) mc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  g_autofree Z *got = NULL;

  atomr_sparse_actor_spgemm_async (f->actor, 0.75, ma, mb, NULL, store_result, &slot);
  res = await (&slot);
  mc = atomr_sparse_actor_spgemm_finish (f->actor, res, &error);
  g_assert_no_error (error);
  g_assert_nonnull (mc);
  g_assert_cmpint (atomr_sparse_matrix_get_rows (mc), ==, m);
  g_assert_cmpint (atomr_sparse_matrix_get_cols (mc), ==, n);
  g_assert_cmpint (atomr_sparse_matrix_get_format (mc), ==, ATOMR_SPARSE_FORMAT_CSR);
  ref_gemm (m, n, k, 0.75, a, b, 0, c);
  got = to_dense (f, mc);
  assert_close ("spgemm", got, c, m * n, vt);
  /* The result is a well-formed matrix. */
  {
    GAsyncResult *s2 = NULL;
    g_autoptr(GAsyncResult) r2 = NULL;
    atomr_sparse_actor_check_async (f->actor, mc, NULL, store_result, &s2);
    r2 = await (&s2);
    g_assert_true (atomr_sparse_actor_check_finish (f->actor, r2, &error));
    g_assert_no_error (error);
  }
}

static void
test_spgemm (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  check_spgemm (f, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, 0.2);
  check_spgemm (f, ATOMR_DTYPE_I32, ATOMR_DTYPE_F64, 0.2);
  check_spgemm (f, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, 0.0);   /* nnz(A) = 0: C is empty */
}

static void
test_conversions (Fixture *f, gconstpointer data)
{
  /* cuSPARSE converts CSR, CSC and COO to dense (BSR and Blocked-ELL are
   * checked through SpMV and SpMM instead) */
  static const AtomrSparseFormat formats[] = {
    ATOMR_SPARSE_FORMAT_CSR, ATOMR_SPARSE_FORMAT_CSC, ATOMR_SPARSE_FORMAT_COO,
  };
  const gint64 rows = 36, cols = 28;
  g_autofree Z *a = NULL;

  SKIP_WITHOUT_DEVICE (f);
  a = random_dense (f, rows, cols, 0.2, ATOMR_DTYPE_F64);

  /* sparse → dense, every format */
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, rows, cols, formats[i], ATOMR_DTYPE_I32, ATOMR_DTYPE_F64);
      g_autofree Z *got = to_dense (f, m);
      g_autofree gchar *what = g_strdup_printf ("sparse-to-dense format %d", formats[i]);
      assert_close (what, got, a, rows * cols, ATOMR_DTYPE_F64);
    }

  /* dense → sparse, column-major input, each output format and index dtype */
  for (guint i = 0; i < 3; i++)
    for (guint w = 0; w < 2; w++)
      {
        AtomrDtype it = w ? ATOMR_DTYPE_I64 : ATOMR_DTYPE_I32;
        g_autoptr(AtomrTensor) t = upload_dense (f, a, rows, cols, ATOMR_DTYPE_F64, TRUE);
        g_autoptr(AtomrSparseMatrix) m = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GAsyncResult) res = NULL;
        GAsyncResult *slot = NULL;
        g_autofree Z *got = NULL;
        gint64 nnz = 0;

        for (gint64 k = 0; k < rows * cols; k++)
          nnz += !zzero (a[k]);
        atomr_sparse_actor_dense_to_sparse_async (f->actor, t, formats[i], it, NULL, store_result, &slot);
        res = await (&slot);
        m = atomr_sparse_actor_dense_to_sparse_finish (f->actor, res, &error);
        g_assert_no_error (error);
        g_assert_cmpint (atomr_sparse_matrix_get_format (m), ==, formats[i]);
        g_assert_cmpint (atomr_sparse_matrix_get_index_dtype (m), ==, it);
        g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, nnz);
        got = to_dense (f, m);
        assert_close ("dense-to-sparse", got, a, rows * cols, ATOMR_DTYPE_F64);
      }

  /* an all-zero dense matrix gives nnz = 0 */
  {
    g_autofree Z *zeros = g_new0 (Z, 12);
    g_autoptr(AtomrTensor) t = upload_dense (f, zeros, 3, 4, ATOMR_DTYPE_F32, FALSE);
    g_autoptr(AtomrSparseMatrix) m = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(GAsyncResult) res = NULL;
    GAsyncResult *slot = NULL;

    atomr_sparse_actor_dense_to_sparse_async (f->actor, t, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32,
                                              NULL, store_result, &slot);
    res = await (&slot);
    m = atomr_sparse_actor_dense_to_sparse_finish (f->actor, res, &error);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_nnz (m), ==, 0);
  }

  /* CSR ↔ CSC and transposes */
  {
    g_autoptr(AtomrSparseMatrix) csr = make_sparse (f, a, rows, cols, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_F64);
    g_autoptr(AtomrSparseMatrix) csc = NULL, back = NULL, tr = NULL, trc = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree Z *at = dense_op (a, rows, cols, T);
    GAsyncResult *slot = NULL;
    GAsyncResult *res;

    atomr_sparse_actor_convert_async (f->actor, csr, ATOMR_SPARSE_FORMAT_CSC, NULL, store_result, &slot);
    res = await (&slot);
    csc = atomr_sparse_actor_convert_finish (f->actor, res, &error);
    g_object_unref (res);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_format (csc), ==, ATOMR_SPARSE_FORMAT_CSC);
    { g_autofree Z *got = to_dense (f, csc); assert_close ("csr→csc", got, a, rows * cols, ATOMR_DTYPE_F64); }

    atomr_sparse_actor_convert_async (f->actor, csc, ATOMR_SPARSE_FORMAT_CSR, NULL, store_result, &slot);
    res = await (&slot);
    back = atomr_sparse_actor_convert_finish (f->actor, res, &error);
    g_object_unref (res);
    g_assert_no_error (error);
    { g_autofree Z *got = to_dense (f, back); assert_close ("csc→csr", got, a, rows * cols, ATOMR_DTYPE_F64); }

    atomr_sparse_actor_transpose_async (f->actor, csr, NULL, store_result, &slot);
    res = await (&slot);
    tr = atomr_sparse_actor_transpose_finish (f->actor, res, &error);
    g_object_unref (res);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_rows (tr), ==, cols);
    { g_autofree Z *got = to_dense (f, tr); assert_close ("transpose csr", got, at, rows * cols, ATOMR_DTYPE_F64); }

    atomr_sparse_actor_transpose_async (f->actor, csc, NULL, store_result, &slot);
    res = await (&slot);
    trc = atomr_sparse_actor_transpose_finish (f->actor, res, &error);
    g_object_unref (res);
    g_assert_no_error (error);
    g_assert_cmpint (atomr_sparse_matrix_get_format (trc), ==, ATOMR_SPARSE_FORMAT_CSC);
    { g_autofree Z *got = to_dense (f, trc); assert_close ("transpose csc", got, at, rows * cols, ATOMR_DTYPE_F64); }
  }
}

static AtomrSparseMatrix *
convert (Fixture *f, AtomrSparseMatrix *m, AtomrSparseFormat format)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  AtomrSparseMatrix *out;

  atomr_sparse_actor_convert_async (f->actor, m, format, NULL, store_result, &slot);
  res = await (&slot);
  out = atomr_sparse_actor_convert_finish (f->actor, res, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_format (out), ==, format);
  return out;
}

static AtomrSparseMatrix *
to_bsr (Fixture *f, AtomrSparseMatrix *m, gint64 bs)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  AtomrSparseMatrix *out;

  atomr_sparse_actor_convert_to_bsr_async (f->actor, m, bs, NULL, store_result, &slot);
  res = await (&slot);
  out = atomr_sparse_actor_convert_to_bsr_finish (f->actor, res, &error);
  g_assert_no_error (error);
  g_assert_cmpint (atomr_sparse_matrix_get_format (out), ==, ATOMR_SPARSE_FORMAT_BSR);
  g_assert_cmpint (atomr_sparse_matrix_get_block_size (out), ==, bs);
  return out;
}

static GBytes *
download (AtomrBuffer *b)
{
  g_autoptr(GError) error = NULL;
  GBytes *bytes = atomr_buffer_download_sync (b, NULL, &error);

  g_assert_no_error (error);
  return bytes;
}

/* The first @n elements of two buffers are the same bytes. */
static void
assert_same_prefix (const gchar *what, AtomrBuffer *got, AtomrBuffer *want, gsize n)
{
  g_autoptr(GBytes) g = download (got), w = download (want);
  gsize bytes = n * atomr_dtype_get_size (atomr_buffer_get_dtype (want));

  g_assert_cmpint (atomr_buffer_get_dtype (got), ==, atomr_buffer_get_dtype (want));
  g_assert_cmpuint (g_bytes_get_size (g), >=, bytes);
  g_assert_cmpuint (g_bytes_get_size (w), >=, bytes);
  if (memcmp (g_bytes_get_data (g, NULL), g_bytes_get_data (w, NULL), bytes) != 0)
    g_error ("%s: the arrays differ", what);
}

/* COO ↔ CSR and CSR ↔ BSR against matrices built on the host: exact
 * arrays where the result is unique (COO rows, BSR with 2 × 2 blocks),
 * the dense form otherwise (BSR → CSR keeps the explicit zeros of each
 * block).  Empty rows (every fifth), a block size of 4, every value dtype
 * the block routines take, and an all-zero matrix. */
static void
test_convert_blocks (Fixture *f, gconstpointer data)
{
  static const AtomrDtype vts[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };
  const gint64 rows = 36, cols = 28;

  SKIP_WITHOUT_DEVICE (f);
  for (guint v = 0; v < G_N_ELEMENTS (vts); v++)
    {
      AtomrDtype vt = vts[v];
      g_autofree Z *a = random_dense (f, rows, cols, 0.15, vt);
      g_autoptr(AtomrSparseMatrix) csr = make_sparse (f, a, rows, cols, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, vt);
      g_autoptr(AtomrSparseMatrix) coo_ref = make_sparse (f, a, rows, cols, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_I32, vt);
      g_autoptr(AtomrSparseMatrix) bsr_ref = make_sparse (f, a, rows, cols, ATOMR_SPARSE_FORMAT_BSR, ATOMR_DTYPE_I32, vt);
      g_autoptr(AtomrSparseMatrix) coo = NULL, csr2 = NULL, bsr = NULL, back = NULL, bsr4 = NULL, back4 = NULL;
      gint64 nnz = atomr_sparse_matrix_get_nnz (csr), nnzb;

      /* CSR → COO: the row indices the host sort gives */
      coo = convert (f, csr, ATOMR_SPARSE_FORMAT_COO);
      g_assert_cmpint (atomr_sparse_matrix_get_nnz (coo), ==, nnz);
      assert_same_prefix ("csr→coo rows", atomr_sparse_matrix_get_row_indices (coo),
                          atomr_sparse_matrix_get_row_indices (coo_ref), nnz);
      assert_same_prefix ("csr→coo cols", atomr_sparse_matrix_get_indices (coo),
                          atomr_sparse_matrix_get_indices (coo_ref), nnz);
      assert_same_prefix ("csr→coo values", atomr_sparse_matrix_get_values (coo),
                          atomr_sparse_matrix_get_values (coo_ref), nnz);

      /* COO (uploaded shuffled, sorted by the upload) → CSR */
      csr2 = convert (f, coo_ref, ATOMR_SPARSE_FORMAT_CSR);
      assert_same_prefix ("coo→csr offsets", atomr_sparse_matrix_get_offsets (csr2),
                          atomr_sparse_matrix_get_offsets (csr), rows + 1);
      assert_same_prefix ("coo→csr cols", atomr_sparse_matrix_get_indices (csr2),
                          atomr_sparse_matrix_get_indices (csr), nnz);
      { g_autofree Z *got = to_dense (f, csr2); assert_close ("coo→csr", got, a, rows * cols, vt); }

      /* CSR → BSR 2 × 2: the host's block arrays */
      bsr = to_bsr (f, csr, 2);
      nnzb = atomr_sparse_matrix_get_nnz (bsr_ref);
      g_assert_cmpint (atomr_sparse_matrix_get_nnz (bsr), ==, nnzb);
      assert_same_prefix ("csr→bsr offsets", atomr_sparse_matrix_get_offsets (bsr),
                          atomr_sparse_matrix_get_offsets (bsr_ref), rows / 2 + 1);
      assert_same_prefix ("csr→bsr cols", atomr_sparse_matrix_get_indices (bsr),
                          atomr_sparse_matrix_get_indices (bsr_ref), nnzb);
      assert_same_prefix ("csr→bsr values", atomr_sparse_matrix_get_values (bsr),
                          atomr_sparse_matrix_get_values (bsr_ref), nnzb * 4);

      /* BSR → CSR: every value of every block */
      back = convert (f, bsr, ATOMR_SPARSE_FORMAT_CSR);
      g_assert_cmpint (atomr_sparse_matrix_get_nnz (back), ==, nnzb * 4);
      { g_autofree Z *got = to_dense (f, back); assert_close ("bsr→csr", got, a, rows * cols, vt); }

      /* 4 × 4 blocks, there and back */
      bsr4 = to_bsr (f, csr, 4);
      back4 = convert (f, bsr4, ATOMR_SPARSE_FORMAT_CSR);
      g_assert_cmpint (atomr_sparse_matrix_get_nnz (back4), ==, atomr_sparse_matrix_get_nnz (bsr4) * 16);
      { g_autofree Z *got = to_dense (f, back4); assert_close ("csr→bsr4→csr", got, a, rows * cols, vt); }
    }

  /* nothing stored */
  {
    g_autofree Z *zeros = g_new0 (Z, 8 * 6);
    g_autoptr(AtomrSparseMatrix) csr = make_sparse (f, zeros, 8, 6, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32,
                                                    ATOMR_DTYPE_F32);
    g_autoptr(AtomrSparseMatrix) bsr = to_bsr (f, csr, 2);
    g_autoptr(AtomrSparseMatrix) coo = convert (f, csr, ATOMR_SPARSE_FORMAT_COO);
    g_autoptr(AtomrSparseMatrix) back = convert (f, bsr, ATOMR_SPARSE_FORMAT_CSR);
    g_autoptr(AtomrSparseMatrix) back_coo = convert (f, coo, ATOMR_SPARSE_FORMAT_CSR);

    g_assert_cmpint (atomr_sparse_matrix_get_nnz (bsr), ==, 0);
    g_assert_cmpint (atomr_sparse_matrix_get_nnz (coo), ==, 0);
    g_assert_cmpint (atomr_sparse_matrix_get_nnz (back), ==, 0);
    assert_same_prefix ("empty coo→csr offsets", atomr_sparse_matrix_get_offsets (back_coo),
                        atomr_sparse_matrix_get_offsets (csr), 9);
    { g_autofree Z *got = to_dense (f, back); assert_close ("empty bsr→csr", got, zeros, 48, ATOMR_DTYPE_F32); }
  }
}

static void
test_scale (Fixture *f, gconstpointer data)
{
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint i = 0; i < G_N_ELEMENTS (dtypes); i++)
    {
      g_autofree Z *a = random_dense (f, 36, 28, 0.2, dtypes[i]);
      g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, 36, 28, i % 2 ? ATOMR_SPARSE_FORMAT_CSC : ATOMR_SPARSE_FORMAT_CSR,
                                                    ATOMR_DTYPE_I32, dtypes[i]);
      g_autoptr(GError) error = NULL;
      g_autoptr(GAsyncResult) res = NULL;
      GAsyncResult *slot = NULL;
      g_autofree Z *got = NULL;

      atomr_sparse_actor_scale_async (f->actor, -3.0, m, NULL, store_result, &slot);
      res = await (&slot);
      g_assert_true (atomr_sparse_actor_scale_finish (f->actor, res, &error));
      g_assert_no_error (error);
      for (gint64 k = 0; k < 36 * 28; k++)
        a[k] = zscale (-3.0, a[k]);
      got = to_dense (f, m);
      assert_close ("scale", got, a, 36 * 28, dtypes[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Triangular solves                                                    */

/* A well-conditioned lower (or upper) triangular matrix. */
static Z *
random_triangular (Fixture *f, gint64 n, gboolean upper, AtomrDtype dt)
{
  Z *a = random_dense (f, n, n, 0.3, dt);

  for (gint64 i = 0; i < n; i++)
    for (gint64 j = 0; j < n; j++)
      {
        if ((upper && j < i) || (!upper && j > i))
          a[i * n + j] = (Z) { 0, 0 };
        if (i == j)
          a[i * n + j] = (Z) { 4.0 + (i % 3), 0 };
        else
          a[i * n + j] = zscale (0.25, a[i * n + j]);
      }
  round_to (a, n * n, dt);
  return a;
}

static void
check_spsv (Fixture *f, AtomrSparseFormat format, AtomrDtype vt, gboolean upper, AtomrTranspose op)
{
  const gint64 n = 40;
  g_autofree Z *a = random_triangular (f, n, upper, vt);
  g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, n, n, format, ATOMR_DTYPE_I32, vt);
  g_autofree Z *x = random_vector (f, n, vt);
  g_autofree Z *zeros = g_new0 (Z, n);
  g_autoptr(AtomrTensor) tx = upload_dense (f, x, n, -1, vt, FALSE);
  g_autoptr(AtomrTensor) ty0 = upload_dense (f, zeros, n, -1, vt, FALSE);
  g_autoptr(AtomrTensor) ty1 = upload_dense (f, zeros, n, -1, vt, FALSE);
  g_autofree Z *opa = dense_op (a, n, n, op);
  AtomrFillMode fill = upper ? ATOMR_FILL_MODE_UPPER : ATOMR_FILL_MODE_LOWER;

  for (guint round = 0; round < 4; round++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GAsyncResult) res = NULL;
      GAsyncResult *slot = NULL;
      g_autofree Z *y = NULL, *ay = g_new0 (Z, n), *want = g_new0 (Z, n);
      gdouble scale = round == 2 ? 2.0 : 1.0;
      /* round 1 solves into another vector: a new analysis for it */
      AtomrTensor *ty = round == 1 ? ty1 : ty0;

      if (round == 3)
        {
          /* Values rewritten in place by the actor (2·A · 0.5 = A): the
           * analysis is updated too. */
          atomr_sparse_actor_scale_async (f->actor, 0.5, m, NULL, store_result, &slot);
          res = await (&slot);
          g_assert_true (atomr_sparse_actor_scale_finish (f->actor, res, &error));
          g_assert_no_error (error);
          g_clear_object (&res);
        }
      g_autofree gchar *what = g_strdup_printf ("spsv format %d %s op %d round %u", format,
                                                upper ? "upper" : "lower", op, round);

      if (round == 2)
        {
          /* New values, same structure: the cached analysis is updated. */
          g_autofree Z *a2 = g_new0 (Z, n * n);
          g_autoptr(AtomrSparseMatrix) m2 = NULL;
          for (gint64 k = 0; k < n * n; k++)
            a2[k] = zscale (2.0, a[k]);
          m2 = make_sparse (f, a2, n, n, format, ATOMR_DTYPE_I32, vt);
          g_assert_true (atomr_sparse_matrix_set_values (m, atomr_sparse_matrix_get_values (m2), &error));
          g_assert_no_error (error);
        }
      atomr_sparse_actor_spsv_async (f->actor, op, fill, ATOMR_DIAG_NON_UNIT, 1.5, m, tx, ty, NULL,
                                     store_result, &slot);
      res = await (&slot);
      g_assert_true (atomr_sparse_actor_spsv_finish (f->actor, res, &error));
      g_assert_no_error (error);
      /* scale·op(A)·y must be 1.5·x */
      y = download_dense (ty, n, -1, FALSE);
      ref_gemm (n, 1, n, scale, opa, y, 0, ay);
      for (gint64 k = 0; k < n; k++)
        want[k] = zscale (1.5, x[k]);
      assert_close (what, ay, want, n, vt);
    }
  g_assert_cmpuint (atomr_sparse_matrix_count_plans (m), >=, 1);
}

static void
test_spsv (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  check_spsv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F64, FALSE, N);
  check_spsv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F32, TRUE, N);
  check_spsv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F64, FALSE, T);
  check_spsv (f, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_F64, TRUE, N);
  check_spsv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_C128, FALSE, N);
}

static void
check_spsm (Fixture *f, AtomrSparseFormat format, AtomrDtype vt, gboolean b_col_major)
{
  const gint64 n = 40, k = 5;
  g_autofree Z *a = random_triangular (f, n, FALSE, vt);
  g_autoptr(AtomrSparseMatrix) m = make_sparse (f, a, n, n, format, ATOMR_DTYPE_I32, vt);
  g_autofree Z *b = random_vector (f, n * k, vt);
  g_autofree Z *zeros = g_new0 (Z, n * k);
  g_autoptr(AtomrTensor) tb = upload_dense (f, b, n, k, vt, b_col_major);
  g_autoptr(AtomrTensor) tc = upload_dense (f, zeros, n, k, vt, b_col_major);

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GAsyncResult) res = NULL;
      GAsyncResult *slot = NULL;
      g_autofree Z *c = NULL, *ac = g_new0 (Z, n * k), *want = g_new0 (Z, n * k);

      atomr_sparse_actor_spsm_async (f->actor, N, N, ATOMR_FILL_MODE_LOWER, ATOMR_DIAG_NON_UNIT, 2.0, m, tb, tc,
                                     NULL, store_result, &slot);
      res = await (&slot);
      g_assert_true (atomr_sparse_actor_spsm_finish (f->actor, res, &error));
      g_assert_no_error (error);
      c = download_dense (tc, n, k, b_col_major);
      ref_gemm (n, k, n, 1.0, a, c, 0, ac);
      for (gint64 i = 0; i < n * k; i++)
        want[i] = zscale (2.0, b[i]);
      assert_close ("spsm", ac, want, n * k, vt);
    }
}

static void
test_spsm (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  check_spsm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F64, TRUE);
  check_spsm (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_F32, FALSE);
  check_spsm (f, ATOMR_SPARSE_FORMAT_COO, ATOMR_DTYPE_F64, FALSE);
}

/* ------------------------------------------------------------------ */
/* SDDMM                                                                */

static void
check_sddmm (Fixture *f, AtomrDtype vt, AtomrTranspose op_a, gboolean col_major)
{
  const gint64 m = 36, n = 28, k = 7;
  g_autofree Z *pattern = random_dense (f, m, n, 0.2, vt);
  g_autoptr(AtomrSparseMatrix) c = make_sparse (f, pattern, m, n, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, vt);
  gint64 ar = op_a == N ? m : k, ac = op_a == N ? k : m;
  g_autofree Z *a = random_vector (f, ar * ac, vt);
  g_autofree Z *b = random_vector (f, k * n, vt);
  g_autoptr(AtomrTensor) ta = upload_dense (f, a, ar, ac, vt, col_major);
  g_autoptr(AtomrTensor) tb = upload_dense (f, b, k, n, vt, col_major);
  g_autofree Z *opa = dense_op (a, ar, ac, op_a);
  g_autofree Z *prod = g_new0 (Z, m * n);
  g_autoptr(GError) error = NULL;
  g_autoptr(GAsyncResult) res = NULL;
  GAsyncResult *slot = NULL;
  g_autofree Z *got = NULL;

  atomr_sparse_actor_sddmm_async (f->actor, op_a, N, 1.25, ta, tb, 0.5, c, NULL, store_result, &slot);
  res = await (&slot);
  g_assert_true (atomr_sparse_actor_sddmm_finish (f->actor, res, &error));
  g_assert_no_error (error);
  ref_gemm (m, n, k, 1.25, opa, b, 0, prod);
  for (gint64 i = 0; i < m * n; i++)
    prod[i] = zzero (pattern[i]) ? (Z) { 0, 0 } : zadd (prod[i], zscale (0.5, pattern[i]));
  got = to_dense (f, c);
  assert_close ("sddmm", got, prod, m * n, vt);
}

static void
test_sddmm (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  check_sddmm (f, ATOMR_DTYPE_F32, N, FALSE);
  check_sddmm (f, ATOMR_DTYPE_F64, N, TRUE);
  check_sddmm (f, ATOMR_DTYPE_F32, T, FALSE);
}

/* ------------------------------------------------------------------ */
/* check on the GPU, sparse vectors                                     */

static void
test_check (Fixture *f, gconstpointer data)
{
  static const gint32 off[] = { 0, 2, 2, 3 };
  static const gint32 good[] = { 0, 2, 1 };
  static const gint32 bad[] = { 2, 0, 1 };
  static const gfloat vals[] = { 1, 2, 3 };
  g_autoptr(AtomrBuffer) o = NULL, i = NULL, v = NULL;
  g_autoptr(AtomrSparseMatrix) m = NULL;
  g_autoptr(GError) error = NULL;

  SKIP_WITHOUT_DEVICE (f);
  o = atomr_buffer_new (f->device, ATOMR_DTYPE_I32, 4, &error);
  i = atomr_buffer_new (f->device, ATOMR_DTYPE_I32, 3, &error);
  v = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, 3, &error);
  g_assert_no_error (error);
  {
    g_autoptr(GBytes) ob = g_bytes_new_static (off, sizeof off), ib = g_bytes_new_static (good, sizeof good);
    g_autoptr(GBytes) vb = g_bytes_new_static (vals, sizeof vals);
    g_assert_true (atomr_buffer_upload_sync (o, ob, NULL, &error));
    g_assert_true (atomr_buffer_upload_sync (i, ib, NULL, &error));
    g_assert_true (atomr_buffer_upload_sync (v, vb, NULL, &error));
  }
  m = atomr_sparse_matrix_new_csr (3, 3, 3, o, i, v, &error);
  g_assert_no_error (error);
  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(GAsyncResult) res = NULL;
      GAsyncResult *slot = NULL;
      gboolean ok;

      if (round == 1)
        {
          g_autoptr(GBytes) ib = g_bytes_new_static (bad, sizeof bad);
          /* the upload is ordered before the check by the hazards */
          g_assert_true (atomr_buffer_upload_sync (i, ib, NULL, &error));
        }
      atomr_sparse_actor_check_async (f->actor, m, NULL, store_result, &slot);
      res = await (&slot);
      ok = atomr_sparse_actor_check_finish (f->actor, res, &error);
      if (round == 0)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
          g_assert_nonnull (strstr (error->message, "Entry 1 of a CSR matrix (row 0) has index 0 after 2"));
        }
    }
}

static void
test_vectors (Fixture *f, gconstpointer data)
{
  static const gint64 idx[] = { 7, 0, 3, 9 };
  const gint64 size = 12;
  AtomrDtype vt = ATOMR_DTYPE_F64;
  g_autofree Z *xv = NULL, *y = NULL;
  g_autoptr(GBytes) ib = g_bytes_new_static (idx, sizeof idx), vb = NULL;
  g_autoptr(AtomrSparseVector) x = NULL;
  g_autoptr(AtomrTensor) ty = NULL;
  g_autoptr(GError) error = NULL;

  SKIP_WITHOUT_DEVICE (f);
  xv = random_vector (f, 4, vt);
  y = random_vector (f, size, vt);
  vb = pack (xv, 4, vt);
  x = atomr_sparse_vector_new_from_bytes (f->device, size, ATOMR_DTYPE_I64, ib, vt, vb, NULL, &error);
  g_assert_no_error (error);
  ty = upload_dense (f, y, size, -1, vt, FALSE);

  /* axpby: y = 2·x + 0.5·y */
  {
    g_autoptr(GAsyncResult) res = NULL;
    GAsyncResult *slot = NULL;
    g_autofree Z *got = NULL;
    atomr_sparse_actor_axpby_async (f->actor, 2.0, x, 0.5, ty, NULL, store_result, &slot);
    res = await (&slot);
    g_assert_true (atomr_sparse_actor_axpby_finish (f->actor, res, &error));
    g_assert_no_error (error);
    for (gint64 k = 0; k < size; k++)
      y[k] = zscale (0.5, y[k]);
    for (guint k = 0; k < 4; k++)
      y[idx[k]] = zadd (y[idx[k]], zscale (2.0, xv[k]));
    got = download_dense (ty, size, -1, FALSE);
    assert_close ("axpby", got, y, size, vt);
  }
  /* scatter: y[idx] = x */
  {
    g_autoptr(GAsyncResult) res = NULL;
    GAsyncResult *slot = NULL;
    g_autofree Z *got = NULL;
    atomr_sparse_actor_scatter_async (f->actor, x, ty, NULL, store_result, &slot);
    res = await (&slot);
    g_assert_true (atomr_sparse_actor_scatter_finish (f->actor, res, &error));
    g_assert_no_error (error);
    for (guint k = 0; k < 4; k++)
      y[idx[k]] = xv[k];
    got = download_dense (ty, size, -1, FALSE);
    assert_close ("scatter", got, y, size, vt);
  }
  /* gather: x = y[idx] of a fresh y */
  {
    g_autofree Z *y2 = random_vector (f, size, vt);
    g_autoptr(AtomrTensor) ty2 = upload_dense (f, y2, size, -1, vt, FALSE);
    g_autoptr(GAsyncResult) res = NULL;
    g_autoptr(GBytes) bytes = NULL;
    GAsyncResult *slot = NULL;
    Z got[4], want[4];
    atomr_sparse_actor_gather_async (f->actor, ty2, x, NULL, store_result, &slot);
    res = await (&slot);
    g_assert_true (atomr_sparse_actor_gather_finish (f->actor, res, &error));
    g_assert_no_error (error);
    bytes = atomr_buffer_download_sync (atomr_sparse_vector_get_values (x), NULL, &error);
    g_assert_no_error (error);
    unpack (bytes, 0, got, 4, vt);
    for (guint k = 0; k < 4; k++)
      want[k] = y2[idx[k]];
    assert_close ("gather", got, want, 4, vt);
  }
}

/* The trace names operations "spmv", ... with library "cusparse". */
static void
on_after_complete (AtomrActor *actor, AtomrLaunchInfo *info, gpointer user_data)
{
  g_autofree gchar *name = g_strdup_printf ("%s · %s", atomr_launch_info_get_library (info),
                                            atomr_launch_info_get_operation (info));
  g_free (*(gchar **) user_data);
  *(gchar **) user_data = g_steal_pointer (&name);
}

static void
test_trace_name (Fixture *f, gconstpointer data)
{
  gchar *name = NULL;

  SKIP_WITHOUT_DEVICE (f);
  g_signal_connect (f->actor, "after-complete", G_CALLBACK (on_after_complete), &name);
  check_spmv (f, ATOMR_SPARSE_FORMAT_CSR, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32, N, 8, 8, 0.3);
  g_assert_cmpstr (name, ==, "cusparse · spmv");
  g_signal_handlers_disconnect_by_data (f->actor, &name);
  g_free (name);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/gpu-sparse/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("spmv", test_spmv);
  ADD ("spmm", test_spmm);
  ADD ("spgemm", test_spgemm);
  ADD ("conversions", test_conversions);
  ADD ("convert-blocks", test_convert_blocks);
  ADD ("spmv-reuse", test_spmv_reuse);
  ADD ("scale", test_scale);
  ADD ("spsv", test_spsv);
  ADD ("spsm", test_spsm);
  ADD ("sddmm", test_sddmm);
  ADD ("check", test_check);
  ADD ("vectors", test_vectors);
  ADD ("trace-name", test_trace_name);
#undef ADD
  return g_test_run ();
}
