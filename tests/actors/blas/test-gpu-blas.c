/* test-gpu-blas.c — the cuBLAS and cuBLASLt actors against CPU references
 *
 * Every operation runs on random data and is compared with a reference
 * computed on the CPU in double precision from the exact (dtype-rounded)
 * inputs.  The error measure is the normwise relative error
 * ‖got − ref‖_F / ‖ref‖_F; bounds: 1e-6 f32/c64, 1e-12 f64/c128,
 * 1e-3 TF32 (inputs rounded to 10-bit mantissas; about 2.6e-4 measured
 * on an H100), 1e-2 bf16, 5e-3 f16.  The measured errors are printed with
 * g_test_message so a run documents them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <unistd.h>

#include <math.h>
#include <string.h>

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "actors/blas/atomr-blas-actor-private.h"

typedef struct { gdouble re, im; } Z;

typedef struct {
  AtomrDevice      *device;
  AtomrBlasActor   *blas;
  AtomrBlasLtActor *lt;
  GRand            *rand;
} Fixture;

#define N ATOMR_TRANSPOSE_N
#define T ATOMR_TRANSPOSE_T
#define C ATOMR_TRANSPOSE_C

static const AtomrDtype blas_dtypes[] = {
  ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
};

/* ------------------------------------------------------------------ */
/* Fixture                                                              */

static gboolean
fixture_device (Fixture *f)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_get (0, &error);
  if (f->device == NULL)
    {
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE);
      return FALSE;
    }
  return TRUE;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->rand = g_rand_new_with_seed (20261122);
  if (!fixture_device (f))
    return;
  f->blas = atomr_blas_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->lt = atomr_blas_lt_actor_new (f->device, &error);
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (f->blas)
    g_assert_finalize_object (f->blas);
  if (f->lt)
    g_assert_finalize_object (f->lt);
  g_clear_object (&f->device);
  g_rand_free (f->rand);
}

#define SKIP_WITHOUT_DEVICE(f) \
  G_STMT_START { if ((f)->device == NULL) { g_test_skip ("no CUDA device"); return; } } G_STMT_END

/* ------------------------------------------------------------------ */
/* Host data in any dtype                                               */

static guint16
f32_to_bf16 (gfloat v)
{
  guint32 u;
  memcpy (&u, &v, 4);
  return (guint16) ((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static gfloat
bf16_to_f32 (guint16 h)
{
  guint32 u = (guint32) h << 16;
  gfloat v;
  memcpy (&v, &u, 4);
  return v;
}

static GBytes *
pack (AtomrDtype dtype, const Z *z, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *out = g_malloc0 (size * MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = out + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v = z[i].re; memcpy (p, &v, 4); } break;
        case ATOMR_DTYPE_F64: memcpy (p, &z[i].re, 8); break;
        case ATOMR_DTYPE_C64: { gfloat v[2] = { z[i].re, z[i].im }; memcpy (p, v, 8); } break;
        case ATOMR_DTYPE_C128: { gdouble v[2] = { z[i].re, z[i].im }; memcpy (p, v, 16); } break;
        case ATOMR_DTYPE_F16: { _Float16 v = (_Float16) z[i].re; memcpy (p, &v, 2); } break;
        case ATOMR_DTYPE_BF16: { guint16 v = f32_to_bf16 ((gfloat) z[i].re); memcpy (p, &v, 2); } break;
        case ATOMR_DTYPE_U8: *p = (guint8) z[i].re; break;
        default: g_assert_not_reached ();
        }
    }
  return g_bytes_new_take (out, size * n);
}

static Z *
unpack (AtomrDtype dtype, GBytes *bytes, gsize n)
{
  gsize size = atomr_dtype_get_size (dtype);
  const guint8 *in = g_bytes_get_data (bytes, NULL);
  Z *z = g_new0 (Z, MAX (n, 1));

  g_assert_cmpuint (g_bytes_get_size (bytes), >=, n * size);
  for (gsize i = 0; i < n; i++)
    {
      const guint8 *p = in + i * size;
      switch (dtype)
        {
        case ATOMR_DTYPE_F32: { gfloat v; memcpy (&v, p, 4); z[i].re = v; } break;
        case ATOMR_DTYPE_F64: memcpy (&z[i].re, p, 8); break;
        case ATOMR_DTYPE_C64: { gfloat v[2]; memcpy (v, p, 8); z[i].re = v[0]; z[i].im = v[1]; } break;
        case ATOMR_DTYPE_C128: { gdouble v[2]; memcpy (v, p, 16); z[i].re = v[0]; z[i].im = v[1]; } break;
        case ATOMR_DTYPE_F16: { _Float16 v; memcpy (&v, p, 2); z[i].re = v; } break;
        case ATOMR_DTYPE_BF16: { guint16 v; memcpy (&v, p, 2); z[i].re = bf16_to_f32 (v); } break;
        case ATOMR_DTYPE_U8: z[i].re = *p; break;
        default: g_assert_not_reached ();
        }
    }
  return z;
}

/* Random values in [-1, 1], rounded to what @dtype can hold. */
static Z *
random_z (Fixture *f, AtomrDtype dtype, gsize n)
{
  Z *z = g_new0 (Z, MAX (n, 1));
  g_autoptr(GBytes) bytes = NULL;
  Z *rounded;

  for (gsize i = 0; i < n; i++)
    {
      z[i].re = g_rand_double_range (f->rand, -1, 1);
      z[i].im = atomr_dtype_is_complex (dtype) ? g_rand_double_range (f->rand, -1, 1) : 0;
    }
  bytes = pack (dtype, z, n);
  rounded = unpack (dtype, bytes, n);
  g_free (z);
  return rounded;
}

static AtomrBuffer *
upload (Fixture *f, AtomrDtype dtype, const Z *z, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = pack (dtype, z, n);
  AtomrBuffer *buffer = atomr_buffer_new (f->device, dtype, MAX (n, 1), &error);

  g_assert_no_error (error);
  if (n > 0)
    {
      g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
      g_assert_no_error (error);
    }
  return buffer;
}

static Z *
download (AtomrBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = atomr_buffer_download_sync (buffer, NULL, &error);

  g_assert_no_error (error);
  return unpack (atomr_buffer_get_dtype (buffer), bytes, atomr_buffer_get_n_elements (buffer));
}

static Z zmul (Z a, Z b) { return (Z) { a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re }; }
static Z zadd (Z a, Z b) { return (Z) { a.re + b.re, a.im + b.im }; }
static Z zconj (Z a) { return (Z) { a.re, -a.im }; }
static gdouble zabs2 (Z a) { return a.re * a.re + a.im * a.im; }

/* Element (i, j) of op(X) for X column-major with leading dimension ld. */
static Z
op_elem (const Z *x, gint64 ld, AtomrTranspose t, gint64 i, gint64 j)
{
  if (t == N)
    return x[i + j * ld];
  if (t == T)
    return x[j + i * ld];
  return zconj (x[j + i * ld]);
}

/* ‖got − ref‖_F / ‖ref‖_F over an m×n block with leading dimensions. */
static gdouble
rel_err (const Z *got, gint64 ldg, const Z *ref, gint64 ldr, gint64 m, gint64 n)
{
  gdouble num = 0, den = 0;

  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i < m; i++)
      {
        Z g = got[i + j * ldg], r = ref[i + j * ldr];
        num += zabs2 ((Z) { g.re - r.re, g.im - r.im });
        den += zabs2 (r);
      }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static gdouble
tolerance (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F64:
    case ATOMR_DTYPE_C128: return 1e-12;
    case ATOMR_DTYPE_BF16: return 1e-2;
    case ATOMR_DTYPE_F16: return 5e-3;
    default: return 1e-6;
    }
}

#define CHECK_ERR(what, err, tol)                                                   \
  G_STMT_START {                                                                    \
    gdouble e_ = (err), t_ = (tol);                                                 \
    g_test_message ("%s: relative error %.3g (bound %.3g)", what, e_, t_);          \
    if (!(e_ <= t_))                                                                \
      g_error ("%s: relative error %.3g exceeds %.3g", what, e_, t_);              \
  } G_STMT_END

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static GAsyncResult *
await (GAsyncResult **result)
{
  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  return *result;
}

/* Runs one boolean operation to completion and asserts success. */
#define RUN_OK(finish_fn, self, call)                                              \
  G_STMT_START {                                                                   \
    GAsyncResult *res_ = NULL;                                                     \
    GAsyncReadyCallback cb = store_result;                                         \
    gpointer ud = &res_;                                                           \
    g_autoptr(GError) err_ = NULL;                                                 \
    call;                                                                          \
    g_assert_true (finish_fn (self, await (&res_), &err_));                        \
    g_assert_no_error (err_);                                                      \
    g_object_unref (res_);                                                         \
  } G_STMT_END

/* ------------------------------------------------------------------ */
/* Level 3                                                              */

static void
ref_gemm (AtomrTranspose ta, AtomrTranspose tb, gint64 m, gint64 n, gint64 k, Z alpha,
          const Z *a, gint64 lda, const Z *b, gint64 ldb, Z beta, Z *c, gint64 ldc)
{
  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i < m; i++)
      {
        Z s = { 0, 0 };
        for (gint64 l = 0; l < k; l++)
          s = zadd (s, zmul (op_elem (a, lda, ta, i, l), op_elem (b, ldb, tb, l, j)));
        c[i + j * ldc] = zadd (zmul (alpha, s), zmul (beta, c[i + j * ldc]));
      }
}

static void
check_gemm (Fixture *f, AtomrDtype dtype, AtomrTranspose ta, AtomrTranspose tb, gboolean ex,
            AtomrDtype out_dtype, AtomrBlasComputeType compute, gdouble tol)
{
  const gint64 m = 37, n = 29, k = 45;
  gint64 ar = ta == N ? m : k, ac = ta == N ? k : m;
  gint64 br = tb == N ? k : n, bc = tb == N ? n : k;
  gint64 lda = ar + 3, ldb = br + 1, ldc = m + 2;
  gboolean cplx = atomr_dtype_is_complex (dtype);
  Z alpha = { 0.75, cplx ? -0.5 : 0 }, beta = { -1.25, cplx ? 0.25 : 0 };
  g_autofree Z *a = random_z (f, dtype, lda * ac);
  g_autofree Z *b = random_z (f, dtype, ldb * bc);
  g_autofree Z *c = random_z (f, out_dtype, ldc * n);
  g_autofree Z *got = NULL;
  g_autoptr(AtomrBuffer) ba = upload (f, dtype, a, lda * ac);
  g_autoptr(AtomrBuffer) bb = upload (f, dtype, b, ldb * bc);
  g_autoptr(AtomrBuffer) bc_ = upload (f, out_dtype, c, ldc * n);
  g_autofree gchar *what = g_strdup_printf ("gemm%s %s->%s %c%c compute %d", ex ? "_ex" : "",
                                            atomr_dtype_get_name (dtype),
                                            atomr_dtype_get_name (out_dtype),
                                            "NTC"[ta], "NTC"[tb], compute);

  if (ex)
    RUN_OK (atomr_blas_actor_gemm_ex_finish, f->blas,
            atomr_blas_actor_gemm_ex_async (f->blas, ta, tb, m, n, k, alpha.re, ba, lda, bb, ldb,
                                            beta.re, bc_, ldc, compute, NULL, cb, ud));
  else
    RUN_OK (atomr_blas_actor_gemm_finish, f->blas,
            atomr_blas_actor_gemm_async (f->blas, ta, tb, m, n, k, alpha.re, alpha.im, ba, lda,
                                         bb, ldb, beta.re, beta.im, bc_, ldc, NULL, cb, ud));
  got = download (bc_);
  ref_gemm (ta, tb, m, n, k, ex ? (Z) { alpha.re, 0 } : alpha, a, lda, b, ldb,
            ex ? (Z) { beta.re, 0 } : beta, c, ldc);
  CHECK_ERR (what, rel_err (got, ldc, c, ldc, m, n), tol);
  /* the padding rows between m and ldc are untouched */
  for (gint64 j = 0; j < n; j++)
    for (gint64 i = m; i < ldc; i++)
      g_assert_cmpfloat (got[i + j * ldc].re, ==, c[i + j * ldc].re);
}

static void
test_gemm (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    {
      AtomrDtype dt = blas_dtypes[d];
      AtomrTranspose ts[] = { N, T, C };
      for (guint x = 0; x < 3; x++)
        for (guint y = 0; y < 3; y++)
          check_gemm (f, dt, ts[x], ts[y], FALSE, dt, 0, tolerance (dt));
    }
}

static void
test_gemm_half (Fixture *f, gconstpointer data)
{
  SKIP_WITHOUT_DEVICE (f);
  check_gemm (f, ATOMR_DTYPE_F16, N, N, FALSE, ATOMR_DTYPE_F16, 0, tolerance (ATOMR_DTYPE_F16));
  check_gemm (f, ATOMR_DTYPE_BF16, T, N, FALSE, ATOMR_DTYPE_BF16, 0, tolerance (ATOMR_DTYPE_BF16));
  check_gemm (f, ATOMR_DTYPE_F16, N, T, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32, 1e-5);
  check_gemm (f, ATOMR_DTYPE_BF16, N, N, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_DEFAULT, 1e-5);
  check_gemm (f, ATOMR_DTYPE_BF16, T, T, TRUE, ATOMR_DTYPE_BF16, ATOMR_BLAS_COMPUTE_F32, 1e-2);
  check_gemm (f, ATOMR_DTYPE_F16, N, N, TRUE, ATOMR_DTYPE_F16, ATOMR_BLAS_COMPUTE_F16, 1e-2);
  check_gemm (f, ATOMR_DTYPE_F32, N, N, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32_FAST_TF32, 1e-3);
  check_gemm (f, ATOMR_DTYPE_F32, T, N, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32_FAST_BF16, 1e-2);
  check_gemm (f, ATOMR_DTYPE_F32, N, T, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32_PEDANTIC, 1e-6);
  check_gemm (f, ATOMR_DTYPE_F64, N, N, TRUE, ATOMR_DTYPE_F64, ATOMR_BLAS_COMPUTE_F64, 1e-12);
}

/* Real products go through cuBLASLt (a cached algorithm per problem) and
 * give what the classic routines give: every dtype and compute type of
 * check_gemm, operands at offsets that are not 16-byte aligned (the
 * algorithm must allow them), a problem the cache evicted and rebuilt,
 * and ATOMR_BLAS_LT_GEMM=0 keeping an actor on the classic routines. */
static void
test_gemm_lt_path (Fixture *f, gconstpointer data)
{
  const gint64 m = 33, n = 17, k = 21, lda = 35, ldb = 23, ldc = 34;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) classic = NULL;
  guint64 before;

  SKIP_WITHOUT_DEVICE (f);
  before = atomr_blas_actor_get_lt_gemm_count (f->blas);
  check_gemm (f, ATOMR_DTYPE_F32, N, N, FALSE, ATOMR_DTYPE_F32, 0, tolerance (ATOMR_DTYPE_F32));
  if (atomr_blas_actor_get_lt_gemm_count (f->blas) == before)
    {
      g_test_message ("cuBLASLt did not load or has no algorithm: classic routines only");
      g_test_incomplete ("no cuBLASLt gemm on this machine");
      return;
    }
  g_test_message ("cuBLASLt gemms so far: %" G_GUINT64_FORMAT,
                  atomr_blas_actor_get_lt_gemm_count (f->blas));

  /* Views one element in: 4- and 8-byte aligned addresses, all operands
   * (column-major m x k, k x n, m x n with leading dimensions). */
  for (guint d = 0; d < 2; d++)
    {
      AtomrDtype dt = d ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
      gsize es = atomr_dtype_get_size (dt);
      gint64 na = lda * k + 1, nb = ldb * n + 1, nc = ldc * n + 1;
      g_autofree Z *a = random_z (f, dt, na), *b = random_z (f, dt, nb), *c = random_z (f, dt, nc);
      g_autofree Z *got = NULL, *got_classic = NULL;
      g_autofree Z *ref = g_memdup2 (c, nc * sizeof (Z));
      g_autoptr(AtomrBuffer) ba = upload (f, dt, a, na), bb = upload (f, dt, b, nb);
      g_autoptr(AtomrBuffer) bc = upload (f, dt, c, nc), bc2 = upload (f, dt, c, nc);
      g_autoptr(AtomrTensor) va = atomr_tensor_new_strided (ba, dt, es, (const gint64[]) { m, k }, 2,
                                                           (const gint64[]) { 1, lda }, 2, &error);
      g_autoptr(AtomrTensor) vb = atomr_tensor_new_strided (bb, dt, es, (const gint64[]) { k, n }, 2,
                                                           (const gint64[]) { 1, ldb }, 2, &error);
      g_autoptr(AtomrTensor) vc = atomr_tensor_new_strided (bc, dt, es, (const gint64[]) { m, n }, 2,
                                                           (const gint64[]) { 1, ldc }, 2, &error);
      g_autoptr(AtomrTensor) vc2 = atomr_tensor_new_strided (bc2, dt, es, (const gint64[]) { m, n }, 2,
                                                            (const gint64[]) { 1, ldc }, 2, &error);

      g_assert_no_error (error);
      before = atomr_blas_actor_get_lt_gemm_count (f->blas);
      g_assert_true (atomr_blas_actor_gemm_tensor_sync (f->blas, 0.5, va, vb, -2.0, vc, NULL, &error));
      g_assert_no_error (error);
      g_test_message ("%s gemm at odd offsets: %s", atomr_dtype_get_name (dt),
                      atomr_blas_actor_get_lt_gemm_count (f->blas) > before ? "cuBLASLt" : "classic");

      g_setenv ("ATOMR_BLAS_LT_GEMM", "0", TRUE);
      classic = atomr_blas_actor_new (f->device, &error);
      g_unsetenv ("ATOMR_BLAS_LT_GEMM");
      g_assert_no_error (error);
      g_assert_true (atomr_blas_actor_gemm_tensor_sync (classic, 0.5, va, vb, -2.0, vc2, NULL, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (atomr_blas_actor_get_lt_gemm_count (classic), ==, 0);
      g_clear_object (&classic);

      got = download (bc);
      got_classic = download (bc2);
      ref_gemm (N, N, m, n, k, (Z) { 0.5, 0 }, a + 1, lda, b + 1, ldb, (Z) { -2.0, 0 }, ref + 1, ldc);
      CHECK_ERR ("gemm at odd offsets, cuBLASLt path", rel_err (got + 1, ldc, ref + 1, ldc, m, n),
                 tolerance (dt));
      CHECK_ERR ("gemm at odd offsets, classic path", rel_err (got_classic + 1, ldc, ref + 1, ldc, m, n),
                 tolerance (dt));
      g_assert_cmpfloat (got[0].re, ==, c[0].re);   /* before the view: untouched */
    }

  /* More problems than the cache holds, then the first one again. */
  for (guint i = 0; i < 20; i++)
    check_gemm (f, ATOMR_DTYPE_F32, i % 2 ? T : N, N, FALSE, ATOMR_DTYPE_F32, 0,
                tolerance (ATOMR_DTYPE_F32));
}

/* Large enough that cuBLAS uses tensor cores when the math mode allows. */
static void
test_gemm_tf32_math_mode (Fixture *f, gconstpointer data)
{
  const gint64 n = 512;
  g_autofree Z *a = NULL, *b = NULL, *c = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) ba = NULL, bb = NULL, bc = NULL;
  g_autoptr(GError) error = NULL;

  SKIP_WITHOUT_DEVICE (f);
  a = random_z (f, ATOMR_DTYPE_F32, n * n);
  b = random_z (f, ATOMR_DTYPE_F32, n * n);
  c = g_new0 (Z, n * n);
  ba = upload (f, ATOMR_DTYPE_F32, a, n * n);
  bb = upload (f, ATOMR_DTYPE_F32, b, n * n);
  bc = upload (f, ATOMR_DTYPE_F32, c, n * n);
  ref_gemm (N, N, n, n, n, (Z) { 1, 0 }, a, n, b, n, (Z) { 0, 0 }, c, n);

  atomr_blas_actor_set_math_mode (f->blas, ATOMR_BLAS_MATH_TF32);
  g_assert_true (atomr_blas_actor_gemm_sync (f->blas, N, N, n, n, n, 1, ba, n, bb, n, 0, bc, n,
                                             NULL, &error));
  g_assert_no_error (error);
  got = download (bc);
  CHECK_ERR ("sgemm 512 math-mode tf32", rel_err (got, n, c, n, n, n), 1e-3);
  g_free (got);

  atomr_blas_actor_set_math_mode (f->blas, ATOMR_BLAS_MATH_PEDANTIC);
  g_assert_true (atomr_blas_actor_gemm_sync (f->blas, N, N, n, n, n, 1, ba, n, bb, n, 0, bc, n,
                                             NULL, &error));
  g_assert_no_error (error);
  got = download (bc);
  CHECK_ERR ("sgemm 512 math-mode pedantic", rel_err (got, n, c, n, n, n), 1e-6);
}

static void
test_gemm_strided_batched (Fixture *f, gconstpointer data)
{
  const AtomrDtype dts[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
                             ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };
  const gint64 m = 19, n = 23, k = 17, batch = 4;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    {
      AtomrDtype dt = dts[d];
      AtomrTranspose ta = d % 2 ? T : N, tb = d % 3 ? N : T;
      gint64 ar = ta == N ? m : k, ac = ta == N ? k : m, br = tb == N ? k : n, bc = tb == N ? n : k;
      gint64 lda = ar + 1, ldb = br, ldc = m + 1;
      gint64 sa = lda * ac + 5, sb = ldb * bc + 3, sc = ldc * n + 7;
      gboolean cplx = atomr_dtype_is_complex (dt);
      Z alpha = { 1.5, cplx ? 0.5 : 0 }, beta = { 0.5, cplx ? -0.75 : 0 };
      g_autofree Z *a = random_z (f, dt, sa * batch);
      g_autofree Z *b = random_z (f, dt, sb * batch);
      g_autofree Z *c = random_z (f, dt, sc * batch);
      g_autofree Z *got = NULL;
      g_autoptr(AtomrBuffer) ba = upload (f, dt, a, sa * batch);
      g_autoptr(AtomrBuffer) bb = upload (f, dt, b, sb * batch);
      g_autoptr(AtomrBuffer) bcb = upload (f, dt, c, sc * batch);
      gdouble worst = 0;

      RUN_OK (atomr_blas_actor_gemm_strided_batched_finish, f->blas,
              atomr_blas_actor_gemm_strided_batched_async (f->blas, ta, tb, m, n, k, alpha.re, alpha.im,
                                                           ba, lda, sa, bb, ldb, sb, beta.re, beta.im,
                                                           bcb, ldc, sc, batch, NULL, cb, ud));
      got = download (bcb);
      for (gint64 i = 0; i < batch; i++)
        {
          ref_gemm (ta, tb, m, n, k, alpha, a + i * sa, lda, b + i * sb, ldb, beta, c + i * sc, ldc);
          worst = MAX (worst, rel_err (got + i * sc, ldc, c + i * sc, ldc, m, n));
        }
      {
        g_autofree gchar *what = g_strdup_printf ("gemm_strided_batched %s x%" G_GINT64_FORMAT,
                                                  atomr_dtype_get_name (dt), batch);
        CHECK_ERR (what, worst, tolerance (dt));
      }
    }
}

static void
test_syrk (Fixture *f, gconstpointer data)
{
  const gint64 n = 21, k = 13;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    for (guint u = 0; u < 2; u++)
      for (guint t = 0; t < 2; t++)
        {
          AtomrDtype dt = blas_dtypes[d];
          AtomrTranspose tr = t ? T : N;
          AtomrFillMode uplo = u ? ATOMR_FILL_MODE_UPPER : ATOMR_FILL_MODE_LOWER;
          gint64 ar = tr == N ? n : k, ac = tr == N ? k : n, lda = ar + 2, ldc = n + 1;
          gboolean cplx = atomr_dtype_is_complex (dt);
          Z alpha = { 0.5, cplx ? 0.25 : 0 }, beta = { 2, 0 };
          g_autofree Z *a = random_z (f, dt, lda * ac);
          g_autofree Z *c = random_z (f, dt, ldc * n);
          g_autofree Z *ref = g_memdup2 (c, sizeof (Z) * ldc * n);
          g_autofree Z *got = NULL;
          g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * ac);
          g_autoptr(AtomrBuffer) bc = upload (f, dt, c, ldc * n);
          gdouble num = 0, den = 0;

          RUN_OK (atomr_blas_actor_syrk_finish, f->blas,
                  atomr_blas_actor_syrk_async (f->blas, uplo, tr, n, k, alpha.re, alpha.im, ba, lda,
                                               beta.re, beta.im, bc, ldc, NULL, cb, ud));
          got = download (bc);
          for (gint64 j = 0; j < n; j++)
            for (gint64 i = 0; i < n; i++)
              {
                gboolean in = u ? i <= j : i >= j;
                Z s = { 0, 0 };
                if (!in)
                  {
                    /* the other triangle is not touched */
                    g_assert_cmpfloat (got[i + j * ldc].re, ==, c[i + j * ldc].re);
                    continue;
                  }
                for (gint64 l = 0; l < k; l++)
                  s = zadd (s, zmul (op_elem (a, lda, tr, i, l), op_elem (a, lda, tr == N ? T : N, l, j)));
                ref[i + j * ldc] = zadd (zmul (alpha, s), zmul (beta, c[i + j * ldc]));
                num += zabs2 ((Z) { got[i + j * ldc].re - ref[i + j * ldc].re,
                                    got[i + j * ldc].im - ref[i + j * ldc].im });
                den += zabs2 (ref[i + j * ldc]);
              }
          {
            g_autofree gchar *what = g_strdup_printf ("syrk %s %s %c", atomr_dtype_get_name (dt),
                                                      u ? "upper" : "lower", "NT"[t]);
            CHECK_ERR (what, sqrt (num / den), tolerance (dt));
          }
        }
}

static void
test_trsm (Fixture *f, gconstpointer data)
{
  const gint64 m = 24, n = 11;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    for (guint combo = 0; combo < 8; combo++)
      {
        AtomrDtype dt = blas_dtypes[d];
        AtomrSide side = combo & 1 ? ATOMR_SIDE_RIGHT : ATOMR_SIDE_LEFT;
        AtomrFillMode uplo = combo & 2 ? ATOMR_FILL_MODE_UPPER : ATOMR_FILL_MODE_LOWER;
        AtomrTranspose tr = combo & 4 ? (atomr_dtype_is_complex (dt) ? C : T) : N;
        AtomrDiag diag = combo == 5 ? ATOMR_DIAG_UNIT : ATOMR_DIAG_NON_UNIT;
        gint64 order = side == ATOMR_SIDE_LEFT ? m : n, lda = order + 1, ldb = m + 3;
        gboolean cplx = atomr_dtype_is_complex (dt);
        Z alpha = { 2, cplx ? 1 : 0 };
        g_autofree Z *a = random_z (f, dt, lda * order);
        g_autofree Z *x = random_z (f, dt, ldb * n);
        g_autofree Z *b = g_new0 (Z, ldb * n);
        g_autofree Z *got = NULL;
        g_autoptr(AtomrBuffer) ba = NULL, bb = NULL;
        Z inv_alpha;
        gdouble den = zabs2 (alpha);

        /* A well-conditioned triangle: dominant diagonal, small rest;
         * the unit-diagonal case keeps a diagonal that must be ignored. */
        for (gint64 j = 0; j < order; j++)
          for (gint64 i = 0; i < order; i++)
            {
              Z *e = &a[i + j * lda];
              if (i == j)
                *e = (Z) { diag == ATOMR_DIAG_UNIT ? 1e6 : 3 + e->re, e->im };
              else
                *e = (Z) { e->re / order, e->im / order };
            }
        {
          /* exact values of the dtype after the scaling above */
          g_autoptr(GBytes) p = pack (dt, a, lda * order);
          g_free (a);
          a = unpack (dt, p, lda * order);
        }
        inv_alpha = (Z) { alpha.re / den, -alpha.im / den };
        /* B = op(A)·X / alpha (left) or X·op(A) / alpha (right), from the
         * triangle only */
        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            {
              Z s = { 0, 0 };
              for (gint64 l = 0; l < order; l++)
                {
                  gint64 r = side == ATOMR_SIDE_LEFT ? i : l, c = side == ATOMR_SIDE_LEFT ? l : j;
                  Z ae = op_elem (a, lda, tr, r, c);
                  gint64 sr = tr == N ? r : c, sc = tr == N ? c : r;   /* stored position */
                  gboolean in = uplo == ATOMR_FILL_MODE_UPPER ? sr <= sc : sr >= sc;
                  if (!in)
                    continue;
                  if (sr == sc && diag == ATOMR_DIAG_UNIT)
                    ae = (Z) { 1, 0 };
                  s = zadd (s, side == ATOMR_SIDE_LEFT ? zmul (ae, x[l + j * ldb])
                                                       : zmul (x[i + l * ldb], ae));
                }
              b[i + j * ldb] = zmul (s, inv_alpha);
            }
        ba = upload (f, dt, a, lda * order);
        {
          g_autoptr(GBytes) p = pack (dt, b, ldb * n);
          g_autofree Z *rb = unpack (dt, p, ldb * n);
          bb = upload (f, dt, rb, ldb * n);
        }
        RUN_OK (atomr_blas_actor_trsm_finish, f->blas,
                atomr_blas_actor_trsm_async (f->blas, side, uplo, tr, diag, m, n, alpha.re, alpha.im,
                                             ba, lda, bb, ldb, NULL, cb, ud));
        got = download (bb);
        {
          g_autofree gchar *what = g_strdup_printf ("trsm %s %s %s %c %s", atomr_dtype_get_name (dt),
                                                    side == ATOMR_SIDE_LEFT ? "left" : "right",
                                                    uplo == ATOMR_FILL_MODE_UPPER ? "upper" : "lower",
                                                    "NTC"[tr], diag == ATOMR_DIAG_UNIT ? "unit" : "non-unit");
          /* rounding B to the dtype costs about one ulp relative */
          CHECK_ERR (what, rel_err (got, ldb, x, ldb, m, n), tolerance (dt) * 10);
        }
      }
}

static void
test_geam (Fixture *f, gconstpointer data)
{
  const gint64 m = 33, n = 18;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    for (guint inplace = 0; inplace < 2; inplace++)
      {
        AtomrDtype dt = blas_dtypes[d];
        gboolean cplx = atomr_dtype_is_complex (dt);
        AtomrTranspose ta = inplace ? N : T, tb = cplx && !inplace ? C : N;
        gint64 lda = (ta == N ? m : n) + 1, ldb = (tb == N ? m : n) + 2, ldc = inplace ? lda : m;
        Z alpha = { 0.5, cplx ? 2 : 0 }, beta = { -1, cplx ? 0.5 : 0 };
        g_autofree Z *a = random_z (f, dt, lda * (ta == N ? n : m));
        g_autofree Z *b = random_z (f, dt, ldb * (tb == N ? n : m));
        g_autofree Z *ref = g_new0 (Z, ldc * n);
        g_autofree Z *got = NULL;
        g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * (ta == N ? n : m));
        g_autoptr(AtomrBuffer) bb = upload (f, dt, b, ldb * (tb == N ? n : m));
        g_autoptr(AtomrBuffer) bc = inplace ? g_object_ref (ba) : upload (f, dt, ref, ldc * n);

        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            ref[i + j * ldc] = zadd (zmul (alpha, op_elem (a, lda, ta, i, j)),
                                     zmul (beta, op_elem (b, ldb, tb, i, j)));
        RUN_OK (atomr_blas_actor_geam_finish, f->blas,
                atomr_blas_actor_geam_async (f->blas, ta, tb, m, n, alpha.re, alpha.im, ba, lda,
                                             beta.re, beta.im, bb, ldb, bc, ldc, NULL, cb, ud));
        got = download (bc);
        {
          g_autofree gchar *what = g_strdup_printf ("geam %s %c%c%s", atomr_dtype_get_name (dt),
                                                    "NTC"[ta], "NTC"[tb], inplace ? " in place" : "");
          CHECK_ERR (what, rel_err (got, ldc, ref, ldc, m, n), tolerance (dt));
        }
      }
}

/* ------------------------------------------------------------------ */
/* Level 2                                                              */

static void
test_gemv (Fixture *f, gconstpointer data)
{
  const gint64 m = 45, n = 31, incx = 2, incy = 3;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    for (guint t = 0; t < 3; t++)
      {
        AtomrDtype dt = blas_dtypes[d];
        AtomrTranspose tr = t;
        gint64 xl = tr == N ? n : m, yl = tr == N ? m : n, lda = m + 4;
        gboolean cplx = atomr_dtype_is_complex (dt);
        Z alpha = { 1.5, cplx ? -1 : 0 }, beta = { 0.5, cplx ? 0.5 : 0 };
        g_autofree Z *a = random_z (f, dt, lda * n);
        g_autofree Z *x = random_z (f, dt, xl * incx);
        g_autofree Z *y = random_z (f, dt, yl * incy);
        g_autofree Z *ref = g_memdup2 (y, sizeof (Z) * yl * incy);
        g_autofree Z *got = NULL;
        g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * n);
        g_autoptr(AtomrBuffer) bx = upload (f, dt, x, xl * incx);
        g_autoptr(AtomrBuffer) by = upload (f, dt, y, yl * incy);

        for (gint64 i = 0; i < yl; i++)
          {
            Z s = { 0, 0 };
            for (gint64 l = 0; l < xl; l++)
              s = zadd (s, zmul (op_elem (a, lda, tr, i, l), x[l * incx]));
            ref[i * incy] = zadd (zmul (alpha, s), zmul (beta, y[i * incy]));
          }
        RUN_OK (atomr_blas_actor_gemv_finish, f->blas,
                atomr_blas_actor_gemv_async (f->blas, tr, m, n, alpha.re, alpha.im, ba, lda, bx, incx,
                                             beta.re, beta.im, by, incy, NULL, cb, ud));
        got = download (by);
        {
          g_autofree gchar *what = g_strdup_printf ("gemv %s %c", atomr_dtype_get_name (dt), "NTC"[t]);
          /* strided: compare the whole vector, gaps included (untouched) */
          CHECK_ERR (what, rel_err (got, 1, ref, 1, yl * incy, 1), tolerance (dt));
        }
      }
}

static void
test_ger (Fixture *f, gconstpointer data)
{
  const gint64 m = 27, n = 14;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    for (guint conj = 0; conj < 2; conj++)
      {
        AtomrDtype dt = blas_dtypes[d];
        gint64 lda = m + 1;
        gboolean cplx = atomr_dtype_is_complex (dt);
        Z alpha = { -0.5, cplx ? 1 : 0 };
        g_autofree Z *x = random_z (f, dt, m);
        g_autofree Z *y = random_z (f, dt, n * 2);
        g_autofree Z *a = random_z (f, dt, lda * n);
        g_autofree Z *ref = g_memdup2 (a, sizeof (Z) * lda * n);
        g_autofree Z *got = NULL;
        g_autoptr(AtomrBuffer) bx = upload (f, dt, x, m);
        g_autoptr(AtomrBuffer) by = upload (f, dt, y, n * 2);
        g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * n);

        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            {
              Z yj = conj ? zconj (y[j * 2]) : y[j * 2];
              ref[i + j * lda] = zadd (a[i + j * lda], zmul (alpha, zmul (x[i], yj)));
            }
        RUN_OK (atomr_blas_actor_ger_finish, f->blas,
                atomr_blas_actor_ger_async (f->blas, m, n, alpha.re, alpha.im, bx, 1, by, 2, conj,
                                            ba, lda, NULL, cb, ud));
        got = download (ba);
        {
          g_autofree gchar *what = g_strdup_printf ("ger%s %s", conj ? "c" : "u", atomr_dtype_get_name (dt));
          CHECK_ERR (what, rel_err (got, lda, ref, lda, lda, n), tolerance (dt));
        }
      }
}

/* ------------------------------------------------------------------ */
/* Level 1                                                              */

static void
test_level1 (Fixture *f, gconstpointer data)
{
  const gint64 n = 1000, incx = 2, incy = 3;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (blas_dtypes); d++)
    {
      AtomrDtype dt = blas_dtypes[d];
      const gchar *dn = atomr_dtype_get_name (dt);
      gboolean cplx = atomr_dtype_is_complex (dt);
      gdouble tol = tolerance (dt);
      g_autofree Z *x = random_z (f, dt, n * incx);
      g_autofree Z *y = random_z (f, dt, n * incy);
      g_autofree Z *ref = NULL, *got = NULL, *gx = NULL;
      g_autoptr(AtomrBuffer) bx = upload (f, dt, x, n * incx);
      g_autoptr(AtomrBuffer) by = upload (f, dt, y, n * incy);
      Z alpha = { 0.25, cplx ? -1.5 : 0 };
      gdouble re = 0, im = 0, sum = 0, abssum = 0;
      gint64 index = -2, want_max = 0, want_min = 0;
      GAsyncResult *res = NULL;
      g_autoptr(GError) error = NULL;
      gchar what[64];

      /* axpy: y += alpha x */
      ref = g_memdup2 (y, sizeof (Z) * n * incy);
      for (gint64 i = 0; i < n; i++)
        ref[i * incy] = zadd (y[i * incy], zmul (alpha, x[i * incx]));
      RUN_OK (atomr_blas_actor_axpy_finish, f->blas,
              atomr_blas_actor_axpy_async (f->blas, n, alpha.re, alpha.im, bx, incx, by, incy, NULL, cb, ud));
      got = download (by);
      g_snprintf (what, sizeof what, "axpy %s", dn);
      CHECK_ERR (what, rel_err (got, 1, ref, 1, n * incy, 1), tol);
      memcpy (y, got, sizeof (Z) * n * incy);   /* y is now the device's */
      g_clear_pointer (&ref, g_free);
      g_clear_pointer (&got, g_free);

      /* dot (u and c) */
      for (guint conj = 0; conj < 2; conj++)
        {
          Z s = { 0, 0 };
          gdouble mag = 0;
          for (gint64 i = 0; i < n; i++)
            {
              Z xi = conj ? zconj (x[i * incx]) : x[i * incx];
              s = zadd (s, zmul (xi, y[i * incy]));
              mag += sqrt (zabs2 (x[i * incx]) * zabs2 (y[i * incy]));
            }
          atomr_blas_actor_dot_async (f->blas, n, bx, incx, by, incy, conj, NULL, store_result, &res);
          g_assert_true (atomr_blas_actor_dot_finish (f->blas, await (&res), &re, &im, &error));
          g_assert_no_error (error);
          g_clear_object (&res);
          g_snprintf (what, sizeof what, "dot%s %s", conj ? "c" : "u", dn);
          CHECK_ERR (what, sqrt (zabs2 ((Z) { re - s.re, im - s.im })) / mag, tol);
          if (!cplx)
            g_assert_cmpfloat (im, ==, 0);
        }

      /* nrm2, asum, iamax, iamin over x with incx */
      sum = 0;
      abssum = 0;
      for (gint64 i = 0; i < n; i++)
        {
          Z xi = x[i * incx];
          gdouble mag = fabs (xi.re) + fabs (xi.im);
          sum += zabs2 (xi);
          abssum += mag;
          if (mag > fabs (x[want_max * incx].re) + fabs (x[want_max * incx].im))
            want_max = i;
          if (mag < fabs (x[want_min * incx].re) + fabs (x[want_min * incx].im))
            want_min = i;
        }
      atomr_blas_actor_nrm2_async (f->blas, n, bx, incx, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_nrm2_finish (f->blas, await (&res), &re, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_snprintf (what, sizeof what, "nrm2 %s", dn);
      CHECK_ERR (what, fabs (re - sqrt (sum)) / sqrt (sum), tol);

      atomr_blas_actor_asum_async (f->blas, n, bx, incx, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_asum_finish (f->blas, await (&res), &re, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_snprintf (what, sizeof what, "asum %s", dn);
      CHECK_ERR (what, fabs (re - abssum) / abssum, tol);

      atomr_blas_actor_iamax_async (f->blas, n, bx, incx, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_iamax_finish (f->blas, await (&res), &index, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_assert_cmpint (index, ==, want_max);

      atomr_blas_actor_iamin_async (f->blas, n, bx, incx, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_iamin_finish (f->blas, await (&res), &index, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_assert_cmpint (index, ==, want_min);

      /* scal x by alpha */
      ref = g_memdup2 (x, sizeof (Z) * n * incx);
      for (gint64 i = 0; i < n; i++)
        ref[i * incx] = zmul (alpha, x[i * incx]);
      RUN_OK (atomr_blas_actor_scal_finish, f->blas,
              atomr_blas_actor_scal_async (f->blas, n, alpha.re, alpha.im, bx, incx, NULL, cb, ud));
      gx = download (bx);
      g_snprintf (what, sizeof what, "scal %s", dn);
      CHECK_ERR (what, rel_err (gx, 1, ref, 1, n * incx, 1), tol);
      memcpy (x, gx, sizeof (Z) * n * incx);
      g_clear_pointer (&ref, g_free);
      g_clear_pointer (&gx, g_free);

      /* rot: x' = c x + s y, y' = c y - s x */
      {
        gdouble c = 0.6, s = 0.8;
        g_autofree Z *rx = g_memdup2 (x, sizeof (Z) * n * incx);
        g_autofree Z *ry = g_memdup2 (y, sizeof (Z) * n * incy);
        for (gint64 i = 0; i < n; i++)
          {
            Z xi = x[i * incx], yi = y[i * incy];
            rx[i * incx] = (Z) { c * xi.re + s * yi.re, c * xi.im + s * yi.im };
            ry[i * incy] = (Z) { c * yi.re - s * xi.re, c * yi.im - s * xi.im };
          }
        RUN_OK (atomr_blas_actor_rot_finish, f->blas,
                atomr_blas_actor_rot_async (f->blas, n, bx, incx, by, incy, c, s, NULL, cb, ud));
        gx = download (bx);
        got = download (by);
        g_snprintf (what, sizeof what, "rot %s (x)", dn);
        CHECK_ERR (what, rel_err (gx, 1, rx, 1, n * incx, 1), tol);
        g_snprintf (what, sizeof what, "rot %s (y)", dn);
        CHECK_ERR (what, rel_err (got, 1, ry, 1, n * incy, 1), tol);
        memcpy (x, gx, sizeof (Z) * n * incx);
        memcpy (y, got, sizeof (Z) * n * incy);
        g_clear_pointer (&gx, g_free);
        g_clear_pointer (&got, g_free);
      }

      /* swap, then copy: exact */
      RUN_OK (atomr_blas_actor_swap_finish, f->blas,
              atomr_blas_actor_swap_async (f->blas, n, bx, incx, by, incy, NULL, cb, ud));
      gx = download (bx);
      got = download (by);
      for (gint64 i = 0; i < n; i++)
        {
          g_assert_cmpfloat (gx[i * incx].re, ==, y[i * incy].re);
          g_assert_cmpfloat (gx[i * incx].im, ==, y[i * incy].im);
          g_assert_cmpfloat (got[i * incy].re, ==, x[i * incx].re);
        }
      g_clear_pointer (&gx, g_free);
      g_clear_pointer (&got, g_free);

      RUN_OK (atomr_blas_actor_copy_finish, f->blas,
              atomr_blas_actor_copy_async (f->blas, n, by, incy, bx, incx, NULL, cb, ud));
      gx = download (bx);
      for (gint64 i = 0; i < n; i++)
        {
          g_assert_cmpfloat (gx[i * incx].re, ==, x[i * incx].re);
          g_assert_cmpfloat (gx[i * incx].im, ==, x[i * incx].im);
          /* gaps between strided elements keep their values */
          g_assert_cmpfloat (gx[i * incx + 1].re, ==, x[i * incx + 1].re);
        }

      /* n = 0: quick return, index -1 */
      atomr_blas_actor_iamax_async (f->blas, 0, bx, 1, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_iamax_finish (f->blas, await (&res), &index, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_assert_cmpint (index, ==, -1);
    }
}

/* ------------------------------------------------------------------ */
/* Issue 11: halves through the Ex routines, negative increments, 4096 */

/* Element i of a BLAS vector of n elements with increment inc (reference
 * BLAS: a negative increment reads it from the far end). */
static gint64
vec_at (gint64 i, gint64 n, gint64 inc)
{
  return inc > 0 ? i * inc : (n - 1 - i) * -inc;
}

static void
test_level1_half (Fixture *f, gconstpointer data)
{
  static const AtomrDtype halves[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };
  const gint64 n = 512, incx = 2, incy = 3;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (halves); d++)
    {
      AtomrDtype dt = halves[d];
      const gchar *dn = atomr_dtype_get_name (dt);
      g_autofree Z *x = random_z (f, dt, n * incx);
      g_autofree Z *y = random_z (f, dt, n * incy);
      g_autofree Z *got = NULL, *ref = NULL;
      g_autoptr(AtomrBuffer) bx = upload (f, dt, x, n * incx);
      g_autoptr(AtomrBuffer) by = upload (f, dt, y, n * incy);
      g_autoptr(GError) error = NULL;
      GAsyncResult *res = NULL;
      gdouble dot = 0, norm = 0, want_dot = 0, want_norm = 0;
      gchar what[64];

      for (gint64 i = 0; i < n; i++)
        {
          want_dot += x[i * incx].re * y[i * incy].re;
          want_norm += x[i * incx].re * x[i * incx].re;
        }
      want_norm = sqrt (want_norm);
      atomr_blas_actor_dot_async (f->blas, n, bx, incx, by, incy, FALSE, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_dot_finish (f->blas, await (&res), &dot, NULL, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      atomr_blas_actor_nrm2_async (f->blas, n, bx, incx, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_nrm2_finish (f->blas, await (&res), &norm, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_test_message ("%s dot %.6g (want %.6g), nrm2 %.6g (want %.6g)", dn, dot, want_dot, norm, want_norm);
      /* the result is rounded to the dtype; accumulation is in f32 */
      g_assert_cmpfloat (fabs (dot - want_dot), <=, 2 * tolerance (dt) * MAX (1, fabs (want_dot)));
      g_assert_cmpfloat (fabs (norm - want_norm), <=, 2 * tolerance (dt) * want_norm);

      /* y += 0.5 x, then x *= -2 */
      ref = g_memdup2 (y, sizeof (Z) * n * incy);
      for (gint64 i = 0; i < n; i++)
        ref[i * incy].re += 0.5 * x[i * incx].re;
      RUN_OK (atomr_blas_actor_axpy_finish, f->blas,
              atomr_blas_actor_axpy_async (f->blas, n, 0.5, 0, bx, incx, by, incy, NULL, cb, ud));
      got = download (by);
      g_snprintf (what, sizeof what, "axpy %s", dn);
      CHECK_ERR (what, rel_err (got, 1, ref, 1, n * incy, 1), tolerance (dt));
      g_clear_pointer (&got, g_free);
      g_clear_pointer (&ref, g_free);
      ref = g_memdup2 (x, sizeof (Z) * n * incx);
      for (gint64 i = 0; i < n; i++)
        ref[i * incx].re *= -2;
      RUN_OK (atomr_blas_actor_scal_finish, f->blas,
              atomr_blas_actor_scal_async (f->blas, n, -2, 0, bx, incx, NULL, cb, ud));
      got = download (bx);
      for (gint64 i = 0; i < n * incx; i++)   /* exact: a power of two; gaps untouched */
        g_assert_cmpfloat (got[i].re, ==, ref[i].re);
    }
}

static void
test_gemv_half (Fixture *f, gconstpointer data)
{
  static const AtomrDtype halves[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };
  const gint64 m = 48, n = 32, lda = 50, incx = 2, incy = 3;

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (halves); d++)
    for (guint t = 0; t < 2; t++)
      {
        AtomrDtype dt = halves[d];
        AtomrTranspose tr = t ? T : N;
        gint64 xlen = t ? m : n, ylen = t ? n : m;
        g_autofree Z *a = random_z (f, dt, lda * n);
        g_autofree Z *x = random_z (f, dt, xlen * incx);
        g_autofree Z *y = random_z (f, dt, ylen * incy);
        g_autofree Z *ref = g_new0 (Z, ylen), *got = NULL, *gy = g_new0 (Z, ylen);
        g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * n);
        g_autoptr(AtomrBuffer) bx = upload (f, dt, x, xlen * incx);
        g_autoptr(AtomrBuffer) by = upload (f, dt, y, ylen * incy);
        gchar what[64];

        for (gint64 i = 0; i < ylen; i++)
          {
            gdouble acc = 0;
            for (gint64 p = 0; p < xlen; p++)
              acc += (t ? a[p + i * lda].re : a[i + p * lda].re) * x[p * incx].re;
            ref[i].re = 1.5 * acc - 0.5 * y[i * incy].re;
          }
        RUN_OK (atomr_blas_actor_gemv_finish, f->blas,
                atomr_blas_actor_gemv_async (f->blas, tr, m, n, 1.5, 0, ba, lda, bx, incx, -0.5, 0, by, incy,
                                             NULL, cb, ud));
        got = download (by);
        for (gint64 i = 0; i < ylen; i++)
          gy[i] = got[i * incy];
        for (gint64 i = 0; i < ylen * incy; i++)   /* the gaps of y are untouched */
          if (i % incy != 0)
            g_assert_cmpfloat (got[i].re, ==, y[i].re);
        g_snprintf (what, sizeof what, "gemv %c %s", "NT"[t], atomr_dtype_get_name (dt));
        CHECK_ERR (what, rel_err (gy, ylen, ref, ylen, ylen, 1), 2 * tolerance (dt));
      }
}

static void
test_negative_increments (Fixture *f, gconstpointer data)
{
  const gint64 n = 300;
  static const gint64 incs[][2] = { { -1, 1 }, { 2, -3 }, { -2, -1 } };

  SKIP_WITHOUT_DEVICE (f);
  for (guint c = 0; c < G_N_ELEMENTS (incs); c++)
    {
      gint64 incx = incs[c][0], incy = incs[c][1];
      gint64 lx = 1 + (n - 1) * ABS (incx), ly = 1 + (n - 1) * ABS (incy);
      g_autofree Z *x = random_z (f, ATOMR_DTYPE_F64, lx);
      g_autofree Z *y = random_z (f, ATOMR_DTYPE_F64, ly);
      g_autofree Z *ref = NULL, *got = NULL, *gx = NULL;
      g_autoptr(AtomrBuffer) bx = upload (f, ATOMR_DTYPE_F64, x, lx);
      g_autoptr(AtomrBuffer) by = upload (f, ATOMR_DTYPE_F64, y, ly);
      g_autoptr(GError) error = NULL;
      GAsyncResult *res = NULL;
      gdouble dot = 0, want = 0;
      gchar what[64];

      /* dot */
      for (gint64 i = 0; i < n; i++)
        want += x[vec_at (i, n, incx)].re * y[vec_at (i, n, incy)].re;
      atomr_blas_actor_dot_async (f->blas, n, bx, incx, by, incy, FALSE, NULL, store_result, &res);
      g_assert_true (atomr_blas_actor_dot_finish (f->blas, await (&res), &dot, NULL, &error));
      g_assert_no_error (error);
      g_clear_object (&res);
      g_assert_cmpfloat (fabs (dot - want), <, 1e-12 * MAX (1, fabs (want)));

      /* axpy: y += 3 x, element i with element i */
      ref = g_memdup2 (y, sizeof (Z) * ly);
      for (gint64 i = 0; i < n; i++)
        ref[vec_at (i, n, incy)].re += 3 * x[vec_at (i, n, incx)].re;
      RUN_OK (atomr_blas_actor_axpy_finish, f->blas,
              atomr_blas_actor_axpy_async (f->blas, n, 3, 0, bx, incx, by, incy, NULL, cb, ud));
      got = download (by);
      g_snprintf (what, sizeof what, "axpy incx %" G_GINT64_FORMAT " incy %" G_GINT64_FORMAT, incx, incy);
      CHECK_ERR (what, rel_err (got, 1, ref, 1, ly, 1), 1e-14);
      g_clear_pointer (&got, g_free);

      /* copy: y = x, reversed when the signs differ */
      for (gint64 i = 0; i < n; i++)
        ref[vec_at (i, n, incy)] = x[vec_at (i, n, incx)];
      RUN_OK (atomr_blas_actor_copy_finish, f->blas,
              atomr_blas_actor_copy_async (f->blas, n, bx, incx, by, incy, NULL, cb, ud));
      got = download (by);
      for (gint64 i = 0; i < ly; i++)
        g_assert_cmpfloat (got[i].re, ==, ref[i].re);
      g_clear_pointer (&got, g_free);

      /* swap back */
      RUN_OK (atomr_blas_actor_swap_finish, f->blas,
              atomr_blas_actor_swap_async (f->blas, n, bx, incx, by, incy, NULL, cb, ud));
      gx = download (bx);
      for (gint64 i = 0; i < n; i++)
        g_assert_cmpfloat (gx[vec_at (i, n, incx)].re, ==, ref[vec_at (i, n, incy)].re);
    }
}

/* sgemm 4096 × 4096 × 4096, checked on 256 sampled entries. */
static void
test_gemm_4096 (Fixture *f, gconstpointer data)
{
  const gint64 n = 4096;
  g_autofree Z *a = NULL, *b = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) ba = NULL, bb = NULL, bc = NULL;
  g_autoptr(GError) error = NULL;
  gdouble worst = 0;

  SKIP_WITHOUT_DEVICE (f);
  a = random_z (f, ATOMR_DTYPE_F32, n * n);
  b = random_z (f, ATOMR_DTYPE_F32, n * n);
  ba = upload (f, ATOMR_DTYPE_F32, a, n * n);
  bb = upload (f, ATOMR_DTYPE_F32, b, n * n);
  bc = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, n * n, &error);
  g_assert_no_error (error);
  RUN_OK (atomr_blas_actor_gemm_finish, f->blas,
          atomr_blas_actor_gemm_async (f->blas, N, T, n, n, n, 1, 0, ba, n, bb, n, 0, 0, bc, n, NULL, cb, ud));
  got = download (bc);
  for (guint s = 0; s < 256; s++)
    {
      gint64 i = g_rand_int_range (f->rand, 0, n), j = g_rand_int_range (f->rand, 0, n);
      gdouble ref = 0;
      for (gint64 p = 0; p < n; p++)
        ref += a[i + p * n].re * b[j + p * n].re;
      worst = MAX (worst, fabs (got[i + j * n].re - ref) / sqrt ((gdouble) n));
    }
  g_test_message ("sgemm 4096³ NT: worst error / √k %.3g", worst);
  g_assert_cmpfloat (worst, <, 1e-4);
}

/* ------------------------------------------------------------------ */
/* Ordering through the envelope                                        */

/* Many read-modify-writes of one buffer in flight at once, on one actor
 * and across two actors (two streams): the hazard tracking must order
 * them so the result is exact. */
static void
test_hazards (Fixture *f, gconstpointer data)
{
  const gint64 n = 4096;
  const guint rounds = 50;
  g_autoptr(AtomrBlasActor) other = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree Z *x = NULL, *y = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) bx = NULL, by = NULL, bz = NULL;
  GAsyncResult *results[2 * 50 + 1] = { NULL, };
  guint n_results = 0;

  SKIP_WITHOUT_DEVICE (f);
  other = atomr_blas_actor_new (f->device, &error);
  g_assert_no_error (error);
  x = g_new0 (Z, n);
  y = g_new0 (Z, n);
  for (gint64 i = 0; i < n; i++)
    x[i].re = (gdouble) (i % 7) + 1;   /* small integers: sums are exact */
  bx = upload (f, ATOMR_DTYPE_F32, x, n);
  by = upload (f, ATOMR_DTYPE_F32, y, n);
  bz = upload (f, ATOMR_DTYPE_F32, y, n);

  /* y += x fifty times on this actor, each followed on the other actor by
   * z = y (copy reads y, writes z); nothing waits on the host between. */
  for (guint r = 0; r < rounds; r++)
    {
      atomr_blas_actor_axpy_async (f->blas, n, 1, 0, bx, 1, by, 1, NULL, store_result, &results[n_results++]);
      atomr_blas_actor_copy_async (other, n, by, 1, bz, 1, NULL, store_result, &results[n_results++]);
    }
  for (guint i = 0; i < n_results; i++)
    {
      await (&results[i]);
      g_assert_true (atomr_reply_propagate_boolean (results[i], &error));
      g_assert_no_error (error);
      g_object_unref (results[i]);
    }
  got = download (bz);
  for (gint64 i = 0; i < n; i++)
    g_assert_cmpfloat (got[i].re, ==, rounds * x[i].re);
  g_assert_finalize_object (g_steal_pointer (&other));
}

/* ------------------------------------------------------------------ */
/* cuBLASLt                                                             */

static gdouble
gelu (gdouble x)
{
  return 0.5 * x * (1 + tanh (sqrt (2 / G_PI) * (x + 0.044715 * x * x * x)));
}

static gdouble
dgelu (gdouble x)
{
  gdouble u = sqrt (2 / G_PI) * (x + 0.044715 * x * x * x);
  gdouble t = tanh (u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * sqrt (2 / G_PI) * (1 + 3 * 0.044715 * x * x);
}

typedef struct {
  AtomrBlasLtEpilogue epilogue;
  AtomrTranspose      ta, tb;
  AtomrDtype          dtype;
  gboolean            f32_out;   /* C, bias and aux in f32 (f16/bf16 inputs) */
} LtCase;

/* One matmul with @epilogue; returns FALSE when cuBLASLt has no algorithm
 * for the combination (reported), asserts the numbers otherwise. */
static gboolean
check_lt (Fixture *f, const LtCase *lc)
{
  const gint64 m = 64, n = 48, k = 32;
  AtomrDtype dt = lc->dtype;
  AtomrDtype ct = lc->f32_out ? ATOMR_DTYPE_F32 : dt;
  AtomrBlasLtEpilogue epi = lc->epilogue;
  gint64 ar = lc->ta == N ? m : k, ac = lc->ta == N ? k : m;
  gint64 br = lc->tb == N ? k : n, bc = lc->tb == N ? n : k;
  gint64 lda = ar, ldb = br, ldc = m;
  gboolean relu_mask = epi == ATOMR_BLAS_LT_EPILOGUE_DRELU || epi == ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD;
  gboolean gelu_in = epi == ATOMR_BLAS_LT_EPILOGUE_DGELU || epi == ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD;
  gboolean aux_out = epi == ATOMR_BLAS_LT_EPILOGUE_RELU_AUX || epi == ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS ||
                     epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX || epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS;
  gboolean relu_aux = epi == ATOMR_BLAS_LT_EPILOGUE_RELU_AUX || epi == ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS;
  gboolean bias_in = epi == ATOMR_BLAS_LT_EPILOGUE_BIAS || epi == ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS ||
                     epi == ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS || epi == ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS ||
                     epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS;
  gboolean bgrad = epi == ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD || epi == ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD ||
                   epi == ATOMR_BLAS_LT_EPILOGUE_BGRADA || epi == ATOMR_BLAS_LT_EPILOGUE_BGRADB;
  gboolean relu = epi == ATOMR_BLAS_LT_EPILOGUE_RELU || epi == ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS || relu_aux;
  gboolean gelu_fwd = epi == ATOMR_BLAS_LT_EPILOGUE_GELU || epi == ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS ||
                      epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX || epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS;
  gint64 ld_aux = relu_aux || relu_mask ? 128 : m;
  gint64 bias_len = epi == ATOMR_BLAS_LT_EPILOGUE_BGRADB ? n : m;
  gdouble beta = epi == ATOMR_BLAS_LT_EPILOGUE_NONE ? 0.5 : 0;
  /* f32: the GELU epilogues evaluate tanh in fast single precision */
  gdouble tol = ct != ATOMR_DTYPE_F32 ? tolerance (ct)
              : (gelu_in || epi == ATOMR_BLAS_LT_EPILOGUE_GELU || epi == ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS ||
                 epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX || epi == ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS) ? 2e-4 : 1e-5;
  g_autofree Z *a = random_z (f, dt, lda * ac);
  g_autofree Z *b = random_z (f, dt, ldb * bc);
  g_autofree Z *c = random_z (f, ct, ldc * n);
  g_autofree Z *bias = random_z (f, ct, bias_len);
  g_autofree Z *aux = NULL, *ref = NULL, *got = NULL, *got_bias = NULL;
  g_autofree guint8 *mask = NULL;
  g_autoptr(AtomrBuffer) ba = upload (f, dt, a, lda * ac);
  g_autoptr(AtomrBuffer) bb = upload (f, dt, b, ldb * bc);
  g_autoptr(AtomrBuffer) bcb = upload (f, ct, c, ldc * n);
  g_autoptr(AtomrBuffer) bbias = NULL, baux = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree gchar *what = NULL;
  GAsyncResult *res = NULL;
  GEnumClass *eclass = g_type_class_ref (ATOMR_TYPE_BLAS_LT_EPILOGUE);

  what = g_strdup_printf ("matmul %s %c%c %s%s", g_enum_get_value (eclass, epi)->value_nick,
                          "NTC"[lc->ta], "NTC"[lc->tb], atomr_dtype_get_name (dt),
                          lc->f32_out ? "->f32" : "");
  g_type_class_unref (eclass);

  if (bias_in || bgrad)
    bbias = upload (f, ct, bias, bias_len);
  if (relu_aux || relu_mask)
    {
      /* the mask of a backward step: bit (i + j·ld) set where the forward
       * pre-activation was positive */
      Z *bytes = g_new0 (Z, ld_aux / 8 * n);
      mask = g_new0 (guint8, ld_aux / 8 * n);
      if (relu_mask)
        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            if (g_rand_boolean (f->rand))
              mask[(i + j * ld_aux) / 8] |= 1u << ((i + j * ld_aux) % 8);
      for (gint64 i = 0; i < ld_aux / 8 * n; i++)
        bytes[i].re = mask[i];
      baux = upload (f, ATOMR_DTYPE_U8, bytes, ld_aux / 8 * n);
      g_free (bytes);
    }
  else if (gelu_in || aux_out)
    {
      aux = random_z (f, ct, ld_aux * n);
      for (gint64 i = 0; i < ld_aux * n; i++)
        aux[i].re *= 3;   /* spread over GELU's curved part */
      {
        g_autoptr(GBytes) p = pack (ct, aux, ld_aux * n);
        g_free (aux);
        aux = unpack (ct, p, ld_aux * n);
      }
      baux = upload (f, ct, aux, ld_aux * n);
    }

  atomr_blas_lt_actor_matmul_async (f->lt, lc->ta, lc->tb, m, n, k, 1.0, ba, lda, bb, ldb, beta, bcb, ldc,
                                    epi, bbias, baux, baux ? ld_aux : 0, NULL, store_result, &res);
  if (!atomr_blas_lt_actor_matmul_finish (f->lt, await (&res), &error))
    {
      g_clear_object (&res);
      g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
      g_test_message ("%s: not supported here (%s)", what, error->message);
      return FALSE;
    }
  g_clear_object (&res);

  /* reference: pre = A·B + beta C (+ bias) */
  ref = g_memdup2 (c, sizeof (Z) * ldc * n);
  ref_gemm (lc->ta, lc->tb, m, n, k, (Z) { 1, 0 }, a, lda, b, ldb, (Z) { beta, 0 }, ref, ldc);
  if (bias_in)
    for (gint64 j = 0; j < n; j++)
      for (gint64 i = 0; i < m; i++)
        ref[i + j * ldc].re += bias[i].re;
  got = download (bcb);

  if (aux_out)
    {
      g_autofree Z *gaux = download (baux);
      if (relu_aux)
        {
          /* the mask says where pre > 0; skip values too close to 0 to tell */
          for (gint64 j = 0; j < n; j++)
            for (gint64 i = 0; i < m; i++)
              {
                guint bit = ((guint) gaux[(i + j * ld_aux) / 8].re >> ((i + j * ld_aux) % 8)) & 1;
                if (fabs (ref[i + j * ldc].re) > 0.05)
                  g_assert_cmpuint (bit, ==, ref[i + j * ldc].re > 0);
              }
        }
      else
        {
          g_autofree gchar *w = g_strdup_printf ("%s (aux = GELU input)", what);
          CHECK_ERR (w, rel_err (gaux, ld_aux, ref, ldc, m, n), tol);
        }
    }

  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i < m; i++)
      {
        Z *r = &ref[i + j * ldc];
        if (relu)
          r->re = MAX (r->re, 0);
        else if (gelu_fwd)
          r->re = gelu (r->re);
        else if (relu_mask)
          r->re *= (mask[(i + j * ld_aux) / 8] >> ((i + j * ld_aux) % 8)) & 1;
        else if (gelu_in)
          r->re *= dgelu (aux[i + j * ld_aux].re);
      }
  CHECK_ERR (what, rel_err (got, ldc, ref, ldc, m, n), tol);

  if (bgrad)
    {
      g_autofree Z *rb = g_new0 (Z, bias_len);
      g_autofree gchar *w = g_strdup_printf ("%s (bias gradient)", what);
      got_bias = download (bbias);
      for (gint64 i = 0; i < bias_len; i++)
        {
          if (epi == ATOMR_BLAS_LT_EPILOGUE_BGRADA)
            for (gint64 l = 0; l < k; l++)
              rb[i].re += op_elem (a, lda, lc->ta, i, l).re;
          else if (epi == ATOMR_BLAS_LT_EPILOGUE_BGRADB)
            for (gint64 l = 0; l < k; l++)
              rb[i].re += op_elem (b, ldb, lc->tb, l, i).re;
          else
            for (gint64 j = 0; j < n; j++)
              rb[i].re += ref[i + j * ldc].re;
        }
      CHECK_ERR (w, rel_err (got_bias, 1, rb, 1, bias_len, 1), tol);
    }
  return TRUE;
}

static void
test_lt_epilogues (Fixture *f, gconstpointer data)
{
  const AtomrDtype dts[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F16 };
  const AtomrTranspose layouts[][2] = { { N, N }, { T, N }, { N, T }, { T, T } };

  SKIP_WITHOUT_DEVICE (f);
  /* BGRADA and BGRADB run in some layouts only: /gpu-blaslt/bgrad-support */
  for (gint e = ATOMR_BLAS_LT_EPILOGUE_NONE; e < ATOMR_BLAS_LT_EPILOGUE_BGRADA; e++)
    {
      guint ran = 0;
      /* every dtype in the NN and TN layouts; other layouts only if none ran */
      for (guint l = 0; l < G_N_ELEMENTS (layouts) && (l < 2 || ran == 0); l++)
        for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
          {
            LtCase lc = { e, layouts[l][0], layouts[l][1], dts[d] };
            if (check_lt (f, &lc))
              ran++;
          }
      /* mixed precision: f16/bf16 inputs, f32 output, NN */
      for (guint d = 1; d < G_N_ELEMENTS (dts); d++)
        {
          LtCase lc = { e, N, N, dts[d], TRUE };
          if (check_lt (f, &lc))
            ran++;
        }
      g_test_message ("epilogue %d: %u combinations checked", e, ran);
      if (ran == 0)
        g_error ("epilogue %d: cuBLASLt ran it in no dtype and layout", e);
    }
}

/* Issue 11, item 5: which dtype/layout combinations of BGRADA and BGRADB
 * cuBLASLt 13 runs on sm_90, stated exactly.  The old test passed as long
 * as one combination ran, so losing ten of them went unnoticed.  Every
 * combination is tried; a supported one must give exact numbers, and the
 * set of supported ones must equal the table (the message prints the
 * observed table on a mismatch).  Other architectures only print it. */
static void
test_lt_bgrad_support (Fixture *f, gconstpointer data)
{
  static const AtomrTranspose layouts[][2] = { { N, N }, { T, N }, { N, T }, { T, T } };
  static const struct { AtomrDtype dtype; gboolean f32_out; } types[] = {
    { ATOMR_DTYPE_F32, FALSE }, { ATOMR_DTYPE_BF16, FALSE }, { ATOMR_DTYPE_F16, FALSE },
    { ATOMR_DTYPE_BF16, TRUE }, { ATOMR_DTYPE_F16, TRUE },
  };
  /* sm_90: BGRADA reduces op(A) over k and needs A untransposed (N?);
   * BGRADB reduces op(B) over k and needs B transposed (?T), in every
   * dtype, mixed precision included. */
  static const gchar *expected_sm90 =
    "bgrada NN:11111 TN:00000 NT:11111 TT:00000\n"
    "bgradb NN:00000 TN:00000 NT:11111 TT:11111\n";
  g_autoptr(GString) observed = g_string_new (NULL);
  gint major = 0, minor = 0;

  SKIP_WITHOUT_DEVICE (f);
  atomr_device_get_compute_capability (f->device, &major, &minor);
  for (gint e = ATOMR_BLAS_LT_EPILOGUE_BGRADA; e <= ATOMR_BLAS_LT_EPILOGUE_BGRADB; e++)
    {
      g_string_append (observed, e == ATOMR_BLAS_LT_EPILOGUE_BGRADA ? "bgrada" : "bgradb");
      for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
        {
          g_string_append_printf (observed, " %c%c:", "NTC"[layouts[l][0]], "NTC"[layouts[l][1]]);
          for (guint d = 0; d < G_N_ELEMENTS (types); d++)
            {
              LtCase lc = { e, layouts[l][0], layouts[l][1], types[d].dtype, types[d].f32_out };
              g_string_append_c (observed, check_lt (f, &lc) ? '1' : '0');
            }
        }
      g_string_append_c (observed, '\n');
    }
  g_test_message ("bgrad support on sm_%d%d (columns f32 bf16 f16 bf16->f32 f16->f32):\n%s",
                  major, minor, observed->str);
  if (major == 9 && minor == 0 && g_strcmp0 (observed->str, expected_sm90) != 0)
    g_error ("BGRADA/BGRADB support on sm_90 changed.\nexpected:\n%sobserved:\n%s",
             expected_sm90, observed->str);
}

static void
test_lt_cache (Fixture *f, gconstpointer data)
{
  LtCase lc = { ATOMR_BLAS_LT_EPILOGUE_BIAS, T, N, ATOMR_DTYPE_BF16 };
  LtCase lc2 = { ATOMR_BLAS_LT_EPILOGUE_BIAS, T, N, ATOMR_DTYPE_F32 };
  guint64 misses, hits;
  guint64 hits_before;

  SKIP_WITHOUT_DEVICE (f);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 0);
  g_assert_true (check_lt (f, &lc));
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 1);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_hits (f->lt), ==, 0);
  for (guint i = 0; i < 3; i++)
    g_assert_true (check_lt (f, &lc));     /* same problem: found in the cache */
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 1);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_hits (f->lt), ==, 3);
  g_assert_true (check_lt (f, &lc2));      /* another dtype: a new search */
  g_object_get (f->lt, "cache-misses", &misses, "cache-hits", &hits, NULL);
  g_assert_cmpuint (misses, ==, 2);
  g_assert_cmpuint (hits, ==, 3);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_size (f->lt), ==, 2);

  /* TF32 accumulation is another key */
  hits_before = hits;
  atomr_blas_lt_actor_set_compute_type (f->lt, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  {
    LtCase tf = { ATOMR_BLAS_LT_EPILOGUE_NONE, N, N, ATOMR_DTYPE_F32 };
    /* check_lt's f32 bound is 1e-5; TF32 needs 1e-3: check by hand */
    const gint64 n = 256;
    g_autofree Z *a = random_z (f, ATOMR_DTYPE_F32, n * n);
    g_autofree Z *b = random_z (f, ATOMR_DTYPE_F32, n * n);
    g_autofree Z *c = g_new0 (Z, n * n);
    g_autofree Z *got = NULL;
    g_autoptr(AtomrBuffer) ba = upload (f, ATOMR_DTYPE_F32, a, n * n);
    g_autoptr(AtomrBuffer) bb = upload (f, ATOMR_DTYPE_F32, b, n * n);
    g_autoptr(AtomrBuffer) bc = upload (f, ATOMR_DTYPE_F32, c, n * n);
    (void) tf;
    RUN_OK (atomr_blas_lt_actor_matmul_finish, f->lt,
            atomr_blas_lt_actor_matmul_async (f->lt, N, N, n, n, n, 1, ba, n, bb, n, 0, bc, n,
                                              ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0, NULL, cb, ud));
    got = download (bc);
    ref_gemm (N, N, n, n, n, (Z) { 1, 0 }, a, n, b, n, (Z) { 0, 0 }, c, n);
    CHECK_ERR ("matmul f32 256 compute tf32", rel_err (got, n, c, n, n, n), 1e-3);
  }
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 3);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_hits (f->lt), ==, hits_before);
}

/* ------------------------------------------------------------------ */
/* fp8 with scale sets                                                  */

static AtomrBuffer *
upload_packed (Fixture *f, AtomrDtype dtype, const gdouble *v, gsize n)
{
  g_autoptr(GError) error = NULL;
  gsize size = atomr_dtype_get_size (dtype);
  guint8 *out = g_malloc (size * n);
  g_autoptr(GBytes) bytes = NULL;
  AtomrBuffer *buffer;

  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GBytes) one = atomr_dtype_pack (dtype, v[i], 0);
      memcpy (out + i * size, g_bytes_get_data (one, NULL), size);
    }
  bytes = g_bytes_new_take (out, size * n);
  buffer = atomr_buffer_new (f->device, dtype, n, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_buffer_upload_sync (buffer, bytes, NULL, &error));
  g_assert_no_error (error);
  return buffer;
}

static void
test_lt_fp8 (Fixture *f, gconstpointer data)
{
  const gint64 m = 64, n = 48, k = 96;
  static const AtomrDtype outs[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_BF16 };
  static const AtomrDtype ins[][2] = { { ATOMR_DTYPE_F8_E4M3, ATOMR_DTYPE_F8_E4M3 },
                                       { ATOMR_DTYPE_F8_E4M3, ATOMR_DTYPE_F8_E5M2 } };
  g_autofree gdouble *a = g_new (gdouble, k * m);
  g_autofree gdouble *b = g_new (gdouble, k * n);
  gint major = 0, minor = 0;

  SKIP_WITHOUT_DEVICE (f);
  atomr_device_get_compute_capability (f->device, &major, &minor);
  if (major * 10 + minor < 89)
    {
      g_test_skip ("fp8 needs compute capability 8.9");
      return;
    }
  /* multiples of 1/2 in [-2, 2]: exact in E4M3 and E5M2, so the only
   * rounding is that of the output */
  for (gint64 i = 0; i < k * m; i++)
    a[i] = (g_rand_int_range (f->rand, -4, 5)) * 0.5;
  for (gint64 i = 0; i < k * n; i++)
    b[i] = (g_rand_int_range (f->rand, -4, 5)) * 0.5;

  for (guint in = 0; in < G_N_ELEMENTS (ins); in++)
    for (guint o = 0; o < G_N_ELEMENTS (outs); o++)
      {
        g_autoptr(AtomrBuffer) ba = upload_packed (f, ins[in][0], a, k * m);
        g_autoptr(AtomrBuffer) bb = upload_packed (f, ins[in][1], b, k * n);
        g_autoptr(AtomrBuffer) sa = upload_packed (f, ATOMR_DTYPE_F32, (gdouble[]) { 2.0 }, 1);
        g_autoptr(AtomrBuffer) sb = upload_packed (f, ATOMR_DTYPE_F32, (gdouble[]) { 0.25 }, 1);
        g_autofree gdouble *zero = g_new0 (gdouble, m * n);
        g_autoptr(AtomrBuffer) bc = upload_packed (f, outs[o], zero, m * n);
        g_autoptr(GBytes) got = NULL;
        g_autoptr(GError) error = NULL;
        gdouble worst = 0;
        GAsyncResult *res = NULL;

        atomr_blas_lt_actor_matmul_scaled_async (f->lt, m, n, k, 1.5, ba, k, sa, bb, k, sb, 0.0, bc, m,
                                                 ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, store_result, &res);
        g_assert_true (atomr_blas_lt_actor_matmul_scaled_finish (f->lt, await (&res), &error));
        g_assert_no_error (error);
        g_clear_object (&res);
        got = atomr_buffer_download_sync (bc, NULL, &error);
        g_assert_no_error (error);
        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            {
              gdouble ref = 0, v;
              for (gint64 p = 0; p < k; p++)
                ref += a[i * k + p] * b[j * k + p];
              ref *= 1.5 * 2.0 * 0.25;
              if (outs[o] == ATOMR_DTYPE_F32)
                v = ((const gfloat *) g_bytes_get_data (got, NULL))[j * m + i];
              else
                v = bf16_to_f32 (((const guint16 *) g_bytes_get_data (got, NULL))[j * m + i]);
              worst = MAX (worst, fabs (v - ref) / MAX (1.0, fabs (ref)));
            }
        g_test_message ("fp8 %s x %s -> %s: worst relative error %.2e",
                        atomr_dtype_get_name (ins[in][0]), atomr_dtype_get_name (ins[in][1]),
                        atomr_dtype_get_name (outs[o]), worst);
        g_assert_cmpfloat (worst, <, outs[o] == ATOMR_DTYPE_F32 ? 1e-6 : 1e-2);
      }

  /* E5M2 x E5M2 does not exist in cuBLASLt: a clear error, not a crash */
  {
    g_autoptr(AtomrBuffer) ba = upload_packed (f, ATOMR_DTYPE_F8_E5M2, a, k * m);
    g_autoptr(AtomrBuffer) bb = upload_packed (f, ATOMR_DTYPE_F8_E5M2, b, k * n);
    g_autoptr(AtomrBuffer) bc = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, m * n, NULL);
    g_autoptr(GError) error = NULL;
    GAsyncResult *res = NULL;

    atomr_blas_lt_actor_matmul_scaled_async (f->lt, m, n, k, 1.0, ba, k, NULL, bb, k, NULL, 0.0, bc, m,
                                             ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, store_result, &res);
    g_assert_false (atomr_blas_lt_actor_matmul_scaled_finish (f->lt, await (&res), &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
    g_object_unref (res);
  }
}

/* Issue 11, item 1: every epilogue with fp8 operands and each output
 * dtype.  With an f32 output cuBLASLt reads a bf16 bias; the actor used to
 * pass an f32 bias without setting CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, and
 * the result was off by a relative 2.5. */
static void
test_lt_fp8_epilogues (Fixture *f, gconstpointer data)
{
  const gint64 m = 64, n = 48, k = 96;
  static const AtomrDtype outs[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F16 };
  g_autofree gdouble *a = g_new (gdouble, k * m);
  g_autofree gdouble *b = g_new (gdouble, k * n);
  g_autofree gdouble *bias = g_new (gdouble, MAX (m, n));
  GEnumClass *eclass = g_type_class_ref (ATOMR_TYPE_BLAS_LT_EPILOGUE);
  gint major = 0, minor = 0;

  SKIP_WITHOUT_DEVICE (f);
  atomr_device_get_compute_capability (f->device, &major, &minor);
  if (major * 10 + minor < 89)
    {
      g_type_class_unref (eclass);
      g_test_skip ("fp8 needs compute capability 8.9");
      return;
    }
  /* exact in fp8 (multiples of 1/2) and in bf16/f16 (multiples of 1/4) */
  for (gint64 i = 0; i < k * m; i++)
    a[i] = g_rand_int_range (f->rand, -4, 5) * 0.5;
  for (gint64 i = 0; i < k * n; i++)
    b[i] = g_rand_int_range (f->rand, -4, 5) * 0.5;
  for (gint64 i = 0; i < MAX (m, n); i++)
    bias[i] = g_rand_int_range (f->rand, -8, 9) * 0.25;

  for (gint e = ATOMR_BLAS_LT_EPILOGUE_NONE; e <= ATOMR_BLAS_LT_EPILOGUE_BGRADB; e++)
    for (guint o = 0; o < G_N_ELEMENTS (outs); o++)
      {
        const gchar *nick = g_enum_get_value (eclass, e)->value_nick;
        gboolean bias_in = e == ATOMR_BLAS_LT_EPILOGUE_BIAS || e == ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS ||
                           e == ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS;
        gboolean bgrad = e == ATOMR_BLAS_LT_EPILOGUE_BGRADA || e == ATOMR_BLAS_LT_EPILOGUE_BGRADB;
        gboolean needs_aux = !bias_in && !bgrad && e != ATOMR_BLAS_LT_EPILOGUE_NONE &&
                             e != ATOMR_BLAS_LT_EPILOGUE_RELU && e != ATOMR_BLAS_LT_EPILOGUE_GELU;
        gboolean relu = e == ATOMR_BLAS_LT_EPILOGUE_RELU || e == ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS;
        gboolean gelu_fwd = e == ATOMR_BLAS_LT_EPILOGUE_GELU || e == ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS;
        AtomrDtype bias_dtype = atomr_blas_lt_bias_dtype (ATOMR_DTYPE_F8_E4M3, outs[o]);
        gint64 bias_len = e == ATOMR_BLAS_LT_EPILOGUE_BGRADB ? n : m;
        g_autoptr(AtomrBuffer) ba = upload_packed (f, ATOMR_DTYPE_F8_E4M3, a, k * m);
        g_autoptr(AtomrBuffer) bb = upload_packed (f, ATOMR_DTYPE_F8_E4M3, b, k * n);
        g_autofree gdouble *zero = g_new0 (gdouble, m * n);
        g_autoptr(AtomrBuffer) bc = upload_packed (f, outs[o], zero, m * n);
        g_autoptr(AtomrBuffer) bbias = NULL;
        g_autofree Z *got = NULL, *got_bias = NULL;
        g_autoptr(GError) error = NULL;
        gdouble worst = 0, tol;
        GAsyncResult *res = NULL;

        g_assert_cmpint (bias_dtype, ==, outs[o] == ATOMR_DTYPE_F32 ? ATOMR_DTYPE_BF16 : outs[o]);
        if (bias_in || bgrad || needs_aux)
          bbias = upload_packed (f, bias_dtype, bias, bias_len);
        atomr_blas_lt_actor_matmul_scaled_async (f->lt, m, n, k, 1.0, ba, k, NULL, bb, k, NULL, 0.0, bc, m,
                                                 e, bias_in || bgrad ? bbias : NULL, NULL,
                                                 store_result, &res);
        if (!atomr_blas_lt_actor_matmul_scaled_finish (f->lt, await (&res), &error))
          {
            g_clear_object (&res);
            if (needs_aux)
              {
                /* the aux epilogues need a matrix the fp8 call does not take */
                g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
                continue;
              }
            /* cuBLASLt's fp8 kernels take A transposed only: the bias
             * gradients may be missing, and so may an f16 output; the
             * forward epilogues into f32 and bf16 may not */
            if (!bgrad && outs[o] != ATOMR_DTYPE_F16)
              g_error ("fp8 %s -> %s: %s", nick, atomr_dtype_get_name (outs[o]), error->message);
            g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
            g_test_message ("fp8 %s -> %s: not supported (%s)", nick, atomr_dtype_get_name (outs[o]),
                            error->message);
            continue;
          }
        g_clear_object (&res);
        g_assert_false (needs_aux);
        got = download (bc);
        for (gint64 j = 0; j < n; j++)
          for (gint64 i = 0; i < m; i++)
            {
              gdouble ref = 0;
              for (gint64 p = 0; p < k; p++)
                ref += a[i * k + p] * b[j * k + p];
              if (bias_in)
                ref += bias[i];
              if (relu)
                ref = MAX (ref, 0);
              else if (gelu_fwd)
                ref = gelu (ref);
              worst = MAX (worst, fabs (got[j * m + i].re - ref) / MAX (1.0, fabs (ref)));
            }
        tol = outs[o] != ATOMR_DTYPE_F32 ? 1e-2 : gelu_fwd ? 1e-3 : 1e-6;
        g_test_message ("fp8 %s -> %s: worst relative error %.2e", nick, atomr_dtype_get_name (outs[o]), worst);
        if (worst >= tol)
          g_error ("fp8 %s -> %s: worst relative error %.2e (tolerance %.0e)", nick,
                   atomr_dtype_get_name (outs[o]), worst, tol);
        if (bgrad)
          {
            /* BGRADA: row sums of op(A) = Aᵀ; BGRADB: column sums of B */
            got_bias = download (bbias);
            worst = 0;
            for (gint64 i = 0; i < bias_len; i++)
              {
                gdouble rb = 0;
                for (gint64 p = 0; p < k; p++)
                  rb += e == ATOMR_BLAS_LT_EPILOGUE_BGRADA ? a[i * k + p] : b[i * k + p];
                worst = MAX (worst, fabs (got_bias[i].re - rb) / MAX (1.0, fabs (rb)));
              }
            g_test_message ("fp8 %s -> %s: bias gradient worst relative error %.2e", nick,
                            atomr_dtype_get_name (outs[o]), worst);
            if (worst >= 1e-2)
              g_error ("fp8 %s -> %s: bias gradient worst relative error %.2e", nick,
                       atomr_dtype_get_name (outs[o]), worst);
          }
      }
  g_type_class_unref (eclass);
}

/* ------------------------------------------------------------------ */
/* Issue 11: batches, a shared workspace, a bounded cache, 4096        */

static void
test_lt_batched (Fixture *f, gconstpointer data)
{
  const gint64 m = 40, n = 24, k = 16, batch = 3;
  const AtomrDtype dts[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_BF16 };

  SKIP_WITHOUT_DEVICE (f);
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint shared_a = 0; shared_a < 2; shared_a++)
      {
        AtomrDtype dt = dts[d];
        /* A: one k × m matrix for all (stride 0) or one per product; B and
         * C with padding between products */
        gint64 stride_a = shared_a ? 0 : k * m + 8, stride_b = k * n + 16, stride_c = m * n + 40;
        gint64 na = shared_a ? k * m : stride_a * batch, nb = stride_b * batch, nc = stride_c * batch;
        g_autofree Z *a = random_z (f, dt, na);
        g_autofree Z *b = random_z (f, dt, nb);
        g_autofree Z *c = random_z (f, dt, nc);
        g_autofree Z *bias = random_z (f, dt, m);
        g_autofree Z *got = NULL;
        g_autoptr(AtomrBuffer) ba = upload (f, dt, a, na);
        g_autoptr(AtomrBuffer) bb = upload (f, dt, b, nb);
        g_autoptr(AtomrBuffer) bc = upload (f, dt, c, nc);
        g_autoptr(AtomrBuffer) bbias = upload (f, dt, bias, m);
        g_autofree gchar *what = g_strdup_printf ("batched matmul TN %s, %s A, relu-bias",
                                                  atomr_dtype_get_name (dt), shared_a ? "one" : "strided");

        RUN_OK (atomr_blas_lt_actor_matmul_batched_finish, f->lt,
                atomr_blas_lt_actor_matmul_batched_async (f->lt, T, N, m, n, k, 1.0, ba, k, stride_a, bb, k,
                                                          stride_b, 0.5, bc, m, stride_c, batch,
                                                          ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS, bbias, NULL, cb, ud));
        got = download (bc);
        for (gint64 i = 0; i < batch; i++)
          {
            g_autofree Z *ref = g_memdup2 (c + i * stride_c, sizeof (Z) * m * n);
            ref_gemm (T, N, m, n, k, (Z) { 1, 0 }, a + i * stride_a, k, b + i * stride_b, k, (Z) { 0.5, 0 },
                      ref, m);
            for (gint64 j = 0; j < n; j++)
              for (gint64 r = 0; r < m; r++)
                ref[r + j * m].re = MAX (ref[r + j * m].re + bias[r].re, 0);
            CHECK_ERR (what, rel_err (got + i * stride_c, m, ref, m, m, n), tolerance (dt));
            /* the padding between the C matrices is untouched */
            if (i + 1 < batch)
              for (gint64 p = m * n; p < stride_c; p++)
                g_assert_cmpfloat (got[i * stride_c + p].re, ==, c[i * stride_c + p].re);
          }
      }
}

/* Two actors (two streams) share one workspace buffer: their matmuls are
 * ordered through it and both results are right. */
static void
test_lt_shared_workspace (Fixture *f, gconstpointer data)
{
  const gint64 n = 256;
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasLtActor) other = NULL;
  g_autoptr(AtomrBuffer) ws = NULL, ba = NULL, bb = NULL, bc1 = NULL, bc2 = NULL;
  g_autofree Z *a = NULL, *b = NULL, *ref = NULL, *got1 = NULL, *got2 = NULL;
  GAsyncResult *r1 = NULL, *r2 = NULL;

  SKIP_WITHOUT_DEVICE (f);
  other = atomr_blas_lt_actor_new (f->device, &error);
  g_assert_no_error (error);
  ws = atomr_buffer_new (f->device, ATOMR_DTYPE_U8, 4u << 20, &error);
  g_assert_no_error (error);
  g_assert_true (atomr_blas_lt_actor_set_workspace (f->lt, ws, &error));
  g_assert_true (atomr_blas_lt_actor_set_workspace (other, ws, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_blas_lt_actor_get_workspace_size (other), ==, 4u << 20);
  a = random_z (f, ATOMR_DTYPE_F32, n * n);
  b = random_z (f, ATOMR_DTYPE_F32, n * n);
  ref = g_new0 (Z, n * n);
  ba = upload (f, ATOMR_DTYPE_F32, a, n * n);
  bb = upload (f, ATOMR_DTYPE_F32, b, n * n);
  bc1 = upload (f, ATOMR_DTYPE_F32, ref, n * n);
  bc2 = upload (f, ATOMR_DTYPE_F32, ref, n * n);
  atomr_blas_lt_actor_matmul_async (f->lt, N, N, n, n, n, 1, ba, n, bb, n, 0, bc1, n,
                                    ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0, NULL, store_result, &r1);
  atomr_blas_lt_actor_matmul_async (other, N, T, n, n, n, 1, ba, n, bb, n, 0, bc2, n,
                                    ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0, NULL, store_result, &r2);
  g_assert_true (atomr_blas_lt_actor_matmul_finish (f->lt, await (&r1), &error));
  g_assert_true (atomr_blas_lt_actor_matmul_finish (other, await (&r2), &error));
  g_assert_no_error (error);
  g_clear_object (&r1);
  g_clear_object (&r2);
  got1 = download (bc1);
  got2 = download (bc2);
  ref_gemm (N, N, n, n, n, (Z) { 1, 0 }, a, n, b, n, (Z) { 0, 0 }, ref, n);
  CHECK_ERR ("matmul NN with a shared workspace", rel_err (got1, n, ref, n, n, n), 1e-5);
  memset (ref, 0, sizeof (Z) * n * n);
  ref_gemm (N, T, n, n, n, (Z) { 1, 0 }, a, n, b, n, (Z) { 0, 0 }, ref, n);
  CHECK_ERR ("matmul NT with a shared workspace", rel_err (got2, n, ref, n, n, n), 1e-5);
  g_assert_true (atomr_blas_lt_actor_set_workspace (other, NULL, &error));
  g_assert_finalize_object (g_steal_pointer (&other));
}

/* The heuristic cache keeps its capacity, dropping the least recently
 * used problem. */
static void
test_lt_cache_lru (Fixture *f, gconstpointer data)
{
  LtCase p1 = { ATOMR_BLAS_LT_EPILOGUE_NONE, N, N, ATOMR_DTYPE_F32 };
  LtCase p2 = { ATOMR_BLAS_LT_EPILOGUE_NONE, T, N, ATOMR_DTYPE_F32 };
  LtCase p3 = { ATOMR_BLAS_LT_EPILOGUE_NONE, N, T, ATOMR_DTYPE_F32 };

  SKIP_WITHOUT_DEVICE (f);
  atomr_blas_lt_actor_set_cache_capacity (f->lt, 2);
  g_assert_true (check_lt (f, &p1));
  g_assert_true (check_lt (f, &p2));
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_evictions (f->lt), ==, 0);
  g_assert_true (check_lt (f, &p1));     /* p1 is now the most recent */
  g_assert_true (check_lt (f, &p3));     /* evicts p2 */
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_evictions (f->lt), ==, 1);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_size (f->lt), ==, 2);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 3);
  g_assert_true (check_lt (f, &p1));     /* still cached: a hit */
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 3);
  g_assert_true (check_lt (f, &p2));     /* was evicted: a miss, evicts p3 */
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 4);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_evictions (f->lt), ==, 2);
}

/* 4096 × 4096 × 4096 in bf16 with f32 output, checked on 256 sampled
 * entries against a host dot product (the whole reference would take
 * minutes). */
static void
test_lt_4096 (Fixture *f, gconstpointer data)
{
  const gint64 n = 4096;
  g_autofree Z *a = NULL, *b = NULL, *got = NULL;
  g_autoptr(AtomrBuffer) ba = NULL, bb = NULL, bc = NULL;
  g_autoptr(GError) error = NULL;
  gdouble worst = 0;

  SKIP_WITHOUT_DEVICE (f);
  a = random_z (f, ATOMR_DTYPE_BF16, n * n);
  b = random_z (f, ATOMR_DTYPE_BF16, n * n);
  ba = upload (f, ATOMR_DTYPE_BF16, a, n * n);
  bb = upload (f, ATOMR_DTYPE_BF16, b, n * n);
  bc = atomr_buffer_new (f->device, ATOMR_DTYPE_F32, n * n, &error);
  g_assert_no_error (error);
  RUN_OK (atomr_blas_lt_actor_matmul_finish, f->lt,
          atomr_blas_lt_actor_matmul_async (f->lt, T, N, n, n, n, 1, ba, n, bb, n, 0, bc, n,
                                            ATOMR_BLAS_LT_EPILOGUE_NONE, NULL, NULL, 0, NULL, cb, ud));
  got = download (bc);
  for (guint s = 0; s < 256; s++)
    {
      gint64 i = g_rand_int_range (f->rand, 0, n), j = g_rand_int_range (f->rand, 0, n);
      gdouble ref = 0;
      for (gint64 p = 0; p < n; p++)
        ref += a[p + i * n].re * b[p + j * n].re;
      /* each term is exact in f32; the sum of 4096 terms of ~1/3 rounds */
      worst = MAX (worst, fabs (got[i + j * n].re - ref) / sqrt ((gdouble) n));
    }
  g_test_message ("matmul 4096³ bf16 -> f32: worst error / √k %.3g", worst);
  g_assert_cmpfloat (worst, <, 1e-4);
}

/* ------------------------------------------------------------------ */
/* After a context rebuild                                              */

static void
test_reset (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  guint blas_stream, lt_stream, generation;
  g_autoptr(AtomrBuffer) stale = NULL;
  GAsyncResult *res = NULL;
  gdouble dot = 0;

  SKIP_WITHOUT_DEVICE (f);
  /* warm both actors up in the first generation */
  check_gemm (f, ATOMR_DTYPE_F32, N, T, FALSE, ATOMR_DTYPE_F32, 0, 1e-6);
  {
    LtCase lc = { ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS, T, N, ATOMR_DTYPE_BF16 };
    g_assert_true (check_lt (f, &lc));
  }
  stale = upload (f, ATOMR_DTYPE_F64, (Z[4]) { { 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 } }, 4);
  blas_stream = atomr_actor_get_stream_id (ATOMR_ACTOR (f->blas));
  lt_stream = atomr_actor_get_stream_id (ATOMR_ACTOR (f->lt));
  generation = atomr_device_get_generation (f->device);

  g_assert_true (atomr_device_reset (f->device, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (atomr_device_get_generation (f->device), >, generation);

  /* a buffer of the old generation is refused */
  atomr_blas_actor_nrm2_async (f->blas, 4, stale, 1, NULL, store_result, &res);
  g_assert_false (atomr_blas_actor_nrm2_finish (f->blas, await (&res), &dot, &error));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE);
  g_clear_error (&error);
  g_clear_object (&res);

  /* every operation works on the new generation, with new handles */
  check_gemm (f, ATOMR_DTYPE_C64, T, C, FALSE, ATOMR_DTYPE_C64, 0, 1e-6);
  check_gemm (f, ATOMR_DTYPE_BF16, N, N, TRUE, ATOMR_DTYPE_F32, ATOMR_BLAS_COMPUTE_F32, 1e-5);
  g_assert_cmpuint (atomr_actor_get_stream_id (ATOMR_ACTOR (f->blas)), !=, blas_stream);
  test_gemm_strided_batched (f, NULL);
  test_syrk (f, NULL);
  test_trsm (f, NULL);
  test_geam (f, NULL);
  test_gemv (f, NULL);
  test_ger (f, NULL);
  test_level1 (f, NULL);
  test_hazards (f, NULL);
  {
    LtCase lc = { ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS, T, N, ATOMR_DTYPE_BF16 };
    guint64 misses = atomr_blas_lt_actor_get_cache_misses (f->lt);
    g_assert_true (check_lt (f, &lc));
    /* the heuristic cache holds no device state: it survives the rebuild */
    g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, misses);
    lc.epilogue = ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS;
    lc.dtype = ATOMR_DTYPE_F16;
    check_lt (f, &lc);
    lc.epilogue = ATOMR_BLAS_LT_EPILOGUE_NONE;
    lc.dtype = ATOMR_DTYPE_F32;
    g_assert_true (check_lt (f, &lc));
  }
  g_assert_cmpuint (atomr_actor_get_stream_id (ATOMR_ACTOR (f->lt)), !=, lt_stream);
}

int
main (int argc, char **argv)
{
  /* GSlice hands out freed blocks again at once: a link or node freed into
   * it while still inside another allocation (the BLASLt plan cache once
   * freed the list links embedded in its plans) then corrupts a later
   * test.  With plain malloc glibc stops at the bad free instead. */
  if (g_getenv ("G_SLICE") == NULL)
    {
      g_setenv ("G_SLICE", "always-malloc", TRUE);
      execv ("/proc/self/exe", argv);
    }
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/gpu-blas/gemm", test_gemm);
  ADD ("/gpu-blas/gemm/half-and-compute-types", test_gemm_half);
  ADD ("/gpu-blas/gemm/math-mode", test_gemm_tf32_math_mode);
  ADD ("/gpu-blas/gemm/cublaslt-path", test_gemm_lt_path);
  ADD ("/gpu-blas/gemm-strided-batched", test_gemm_strided_batched);
  ADD ("/gpu-blas/syrk", test_syrk);
  ADD ("/gpu-blas/trsm", test_trsm);
  ADD ("/gpu-blas/geam", test_geam);
  ADD ("/gpu-blas/gemv", test_gemv);
  ADD ("/gpu-blas/ger", test_ger);
  ADD ("/gpu-blas/level1", test_level1);
  ADD ("/gpu-blas/hazards", test_hazards);
  ADD ("/gpu-blas/level1/half", test_level1_half);
  ADD ("/gpu-blas/gemv/half", test_gemv_half);
  ADD ("/gpu-blas/level1/negative-increments", test_negative_increments);
  ADD ("/gpu-blas/gemm/4096", test_gemm_4096);
  ADD ("/gpu-blaslt/epilogues", test_lt_epilogues);
  ADD ("/gpu-blaslt/heuristic-cache", test_lt_cache);
  ADD ("/gpu-blaslt/fp8-scaled", test_lt_fp8);
  ADD ("/gpu-blaslt/fp8-epilogues", test_lt_fp8_epilogues);
  ADD ("/gpu-blaslt/bgrad-support", test_lt_bgrad_support);
  ADD ("/gpu-blaslt/batched", test_lt_batched);
  ADD ("/gpu-blaslt/shared-workspace", test_lt_shared_workspace);
  ADD ("/gpu-blaslt/cache-lru", test_lt_cache_lru);
  ADD ("/gpu-blaslt/4096", test_lt_4096);
  ADD ("/gpu-blas/after-reset", test_reset);
  return g_test_run ();
}
