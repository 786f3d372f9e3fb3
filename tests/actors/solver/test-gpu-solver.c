/* test-gpu-solver.c — AtomrSolverActor on the GPU, in every dtype:
 * residuals ‖A·x − b‖/‖b‖ of LU and Cholesky solves, reconstruction of
 * QR, SVD (full and batched Jacobi), symmetric/Hermitian and generalized
 * eigendecompositions, batched LU and Cholesky; singular and non positive
 * definite inputs named by index; and a device reset.
 *
 * Matrices are column-major; the CPU side computes in double complex.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "math-test-util.h"

static AtomrDevice *device;
static AtomrSolverActor *solver;
static GRand *rng;

static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128 };

#define AT(m, ld, i, j) ((m)[(gsize) (j) * (ld) + (i)])

static double complex *
random_matrix (gint64   rows,
               gint64   cols,
               gint64   ld,
               gboolean cplx)
{
  double complex *m = g_new0 (double complex, ld * cols);
  for (gint64 j = 0; j < cols; j++)
    for (gint64 i = 0; i < rows; i++)
      AT (m, ld, i, j) = math_random (rng, cplx);
  return m;
}

/* Diagonally dominant: well conditioned. */
static double complex *
general_matrix (gint64 n, gint64 ld, gboolean cplx)
{
  double complex *m = random_matrix (n, n, ld, cplx);
  for (gint64 i = 0; i < n; i++)
    AT (m, ld, i, i) += n;
  return m;
}

/* M·Mᴴ + n·I: Hermitian positive definite. */
static double complex *
spd_matrix (gint64 n, gint64 ld, gboolean cplx)
{
  g_autofree double complex *m = random_matrix (n, n, n, cplx);
  double complex *a = g_new0 (double complex, ld * n);
  for (gint64 i = 0; i < n; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double complex acc = i == j ? n : 0;
        for (gint64 k = 0; k < n; k++)
          acc += AT (m, n, i, k) * conj (AT (m, n, j, k));
        AT (a, ld, i, j) = acc;
      }
  return a;
}

/* c = op(a)·b with op = N, T or C; a is (op: rows × inner). */
static void
matmul (const double complex *a, gint64 lda, char op,
        const double complex *b, gint64 ldb,
        double complex *c, gint64 ldc,
        gint64 rows, gint64 cols, gint64 inner)
{
  for (gint64 i = 0; i < rows; i++)
    for (gint64 j = 0; j < cols; j++)
      {
        double complex acc = 0;
        for (gint64 k = 0; k < inner; k++)
          {
            double complex x = op == 'N' ? AT (a, lda, i, k) : AT (a, lda, k, i);
            if (op == 'C')
              x = conj (x);
            acc += x * AT (b, ldb, k, j);
          }
        AT (c, ldc, i, j) = acc;
      }
}

/* ‖x − y‖/‖y‖ over a rows × cols block of two column-major matrices. */
static double
block_error (const double complex *x, gint64 ldx,
             const double complex *y, gint64 ldy,
             gint64 rows, gint64 cols)
{
  double num = 0, den = 0;
  for (gint64 j = 0; j < cols; j++)
    for (gint64 i = 0; i < rows; i++)
      {
        num += pow (cabs (AT (x, ldx, i, j) - AT (y, ldy, i, j)), 2);
        den += pow (cabs (AT (y, ldy, i, j)), 2);
      }
  return sqrt (num) / MAX (sqrt (den), 1e-300);
}

static double
tol (AtomrDtype dtype)
{
  /* Factorizations lose a digit or two more than an FFT. */
  return (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_C64) ? 2e-5 : 1e-12;
}

static AtomrBuffer *
upload_new (AtomrDtype dtype, const double complex *data, gsize n)
{
  AtomrBuffer *b = math_buffer (device, dtype, n);
  math_upload (b, data, n);
  return b;
}

static AtomrDtype
real_of (AtomrDtype dtype)
{
  return (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_C64) ? ATOMR_DTYPE_F32 : ATOMR_DTYPE_F64;
}

#define SOLVE(op, ...) \
  MATH_RUN (atomr_solver_actor_##op##_finish, solver, &error, \
            atomr_solver_actor_##op##_async (solver, __VA_ARGS__, NULL, math_done, &res))

/* ------------------------------------------------------------------ */

static void
lu_solve_check (AtomrDtype dtype)
{
  const gint64 n = 37, lda = 40, nrhs = 3, ldb = 41;
  static const AtomrSolverTranspose transposes[] = {
    ATOMR_SOLVER_NO_TRANSPOSE, ATOMR_SOLVER_TRANSPOSE, ATOMR_SOLVER_CONJUGATE_TRANSPOSE };
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = general_matrix (n, lda, cplx);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) ipiv = math_buffer (device, ATOMR_DTYPE_I64, n);
  g_autoptr(GError) error = NULL;

  g_assert_true (SOLVE (lu, da, n, n, lda, ipiv));
  g_assert_no_error (error);

  for (guint t = 0; t < G_N_ELEMENTS (transposes); t++)
    {
      g_autofree double complex *b = random_matrix (n, nrhs, ldb, cplx);
      g_autoptr(AtomrBuffer) db = upload_new (dtype, b, ldb * nrhs);
      g_autofree double complex *x = NULL;
      g_autofree double complex *ax = g_new0 (double complex, n * nrhs);
      double err;

      g_assert_true (SOLVE (lu_solve, transposes[t], da, n, lda, ipiv, db, nrhs, ldb));
      g_assert_no_error (error);
      x = math_download (db);
      matmul (a, lda, "NTC"[t], x, ldb, ax, n, n, nrhs, n);
      err = block_error (ax, n, b, ldb, n, nrhs);
      g_test_message ("lu_solve %s trans %u: residual %.3g", atomr_dtype_get_name (dtype), t, err);
      g_assert_cmpfloat (err, <, tol (dtype));
    }
}

static void
test_lu (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    lu_solve_check (dtypes[d]);
}

/* Views (issue 10): factor and solve a sub-matrix in place, without
 * copies: the n × n block at (2, 3) of a bigger column-major matrix, the
 * right-hand sides a block of another; the rest stays untouched. */
static AtomrTensor *
sub_view (AtomrBuffer *buf,
          gint64       ld,
          gint64       row,
          gint64       col,
          gint64       rows,
          gint64       cols)
{
  g_autoptr(GError) error = NULL;
  AtomrDtype dtype = atomr_buffer_get_dtype (buf);
  const gint64 shape[2] = { rows, cols }, strides[2] = { 1, ld };
  AtomrTensor *t = atomr_tensor_new_strided (buf, dtype, (guint64) (col * ld + row) * atomr_dtype_get_size (dtype),
                                             shape, 2, strides, 2, &error);
  g_assert_no_error (error);
  return t;
}

static void
tensor_views_check (AtomrDtype dtype)
{
  const gint64 n = 24, big = 40, nrhs = 3, bld = 30;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *whole = random_matrix (big, big, big, cplx);
  g_autofree double complex *a = general_matrix (n, n, cplx);
  g_autofree double complex *spd = spd_matrix (n, n, cplx);
  g_autofree double complex *rhs = random_matrix (bld, nrhs + 2, bld, cplx);
  g_autofree double complex *x = NULL, *after = NULL;
  g_autofree double complex *ax = g_new0 (double complex, n * nrhs);
  g_autoptr(AtomrBuffer) da = NULL, db = NULL;
  g_autoptr(AtomrBuffer) ipiv = math_buffer (device, ATOMR_DTYPE_I64, n + 4);
  g_autoptr(AtomrTensor) va = NULL, vb = NULL, vpiv = NULL;
  g_autoptr(GError) error = NULL;
  const gint64 pshape[1] = { n }, pstride[1] = { 1 };
  double err;

  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i < n; i++)
      AT (whole, big, i + 2, j + 3) = AT (a, n, i, j);
  da = upload_new (dtype, whole, big * big);
  db = upload_new (dtype, rhs, bld * (nrhs + 2));
  va = sub_view (da, big, 2, 3, n, n);
  vb = sub_view (db, bld, 1, 2, n, nrhs);
  vpiv = atomr_tensor_new_strided (ipiv, ATOMR_DTYPE_I64, 4 * 8, pshape, 1, pstride, 1, &error);
  g_assert_no_error (error);

  g_assert_true (MATH_RUN (atomr_solver_actor_lu_tensor_finish, solver, &error,
                           atomr_solver_actor_lu_tensor_async (solver, va, vpiv, NULL, math_done, &res)));
  g_assert_no_error (error);
  g_assert_true (MATH_RUN (atomr_solver_actor_lu_solve_tensor_finish, solver, &error,
                           atomr_solver_actor_lu_solve_tensor_async (solver, ATOMR_SOLVER_NO_TRANSPOSE, va, vpiv,
                                                                     vb, NULL, math_done, &res)));
  g_assert_no_error (error);
  x = math_download (db);
  matmul (a, n, 'N', &AT (x, bld, 1, 2), bld, ax, n, n, nrhs, n);
  err = block_error (ax, n, &AT (rhs, bld, 1, 2), bld, n, nrhs);
  g_test_message ("lu on views %s: residual %.3g", atomr_dtype_get_name (dtype), err);
  g_assert_cmpfloat (err, <, tol (dtype));
  /* Outside the blocks nothing moved. */
  after = math_download (da);
  for (gint64 j = 0; j < big; j++)
    for (gint64 i = 0; i < big; i++)
      if (!(i >= 2 && i < 2 + n && j >= 3 && j < 3 + n))
        g_assert_cmpfloat (cabs (AT (after, big, i, j) - AT (whole, big, i, j)), <, 1e-6);
  for (gint64 j = 0; j < nrhs + 2; j++)
    for (gint64 i = 0; i < bld; i++)
      if (!(i >= 1 && i < 1 + n && j >= 2 && j < 2 + nrhs))
        g_assert_cmpfloat (cabs (AT (x, bld, i, j) - AT (rhs, bld, i, j)), <, 1e-6);

  /* Cholesky of an SPD block, solve against a fresh right-hand side. */
  {
    g_autofree double complex *x2 = NULL;
    g_autoptr(AtomrBuffer) db2 = NULL;
    g_autoptr(AtomrTensor) vb2 = NULL;

    for (gint64 j = 0; j < n; j++)
      for (gint64 i = 0; i < n; i++)
        AT (whole, big, i + 2, j + 3) = AT (spd, n, i, j);
    g_clear_object (&va);
    g_clear_object (&da);
    da = upload_new (dtype, whole, big * big);
    va = sub_view (da, big, 2, 3, n, n);
    db2 = upload_new (dtype, rhs, bld * (nrhs + 2));
    vb2 = sub_view (db2, bld, 1, 2, n, nrhs);
    g_assert_true (MATH_RUN (atomr_solver_actor_cholesky_tensor_finish, solver, &error,
                             atomr_solver_actor_cholesky_tensor_async (solver, ATOMR_SOLVER_LOWER, va, NULL,
                                                                       math_done, &res)));
    g_assert_no_error (error);
    g_assert_true (MATH_RUN (atomr_solver_actor_cholesky_solve_tensor_finish, solver, &error,
                             atomr_solver_actor_cholesky_solve_tensor_async (solver, ATOMR_SOLVER_LOWER, va, vb2,
                                                                             NULL, math_done, &res)));
    g_assert_no_error (error);
    x2 = math_download (db2);
    matmul (spd, n, 'N', &AT (x2, bld, 1, 2), bld, ax, n, n, nrhs, n);
    err = block_error (ax, n, &AT (rhs, bld, 1, 2), bld, n, nrhs);
    g_test_message ("cholesky on views %s: residual %.3g", atomr_dtype_get_name (dtype), err);
    g_assert_cmpfloat (err, <, tol (dtype));
  }
}

static void
test_tensor_views (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    tensor_views_check (dtypes[d]);
}

static void
test_lu_singular (void)
{
  const gint64 n = 8;
  g_autofree double complex *a = NULL;
  g_autoptr(AtomrBuffer) da = NULL;
  g_autoptr(AtomrBuffer) ipiv = NULL;
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  a = general_matrix (n, n, FALSE);
  for (gint64 i = 0; i < n; i++)
    AT (a, n, i, 2) = 0;   /* column 3 is zero: U(3,3) = 0 */
  da = upload_new (ATOMR_DTYPE_F64, a, n * n);
  ipiv = math_buffer (device, ATOMR_DTYPE_I64, n);
  g_assert_false (SOLVE (lu, da, n, n, n, ipiv));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "matrix is singular: U(3,3) is zero"));
}

static void
cholesky_check (AtomrDtype dtype, AtomrSolverFill uplo)
{
  const gint64 n = 29, lda = 31, nrhs = 2;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = spd_matrix (n, lda, cplx);
  g_autofree double complex *b = random_matrix (n, nrhs, n, cplx);
  g_autofree double complex *x = NULL;
  g_autofree double complex *ax = g_new0 (double complex, n * nrhs);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) db = upload_new (dtype, b, n * nrhs);
  g_autoptr(GError) error = NULL;
  double err;

  g_assert_true (SOLVE (cholesky, uplo, da, n, lda));
  g_assert_no_error (error);
  g_assert_true (SOLVE (cholesky_solve, uplo, da, n, lda, db, nrhs, n));
  g_assert_no_error (error);
  x = math_download (db);
  matmul (a, lda, 'N', x, n, ax, n, n, nrhs, n);
  err = block_error (ax, n, b, n, n, nrhs);
  g_test_message ("cholesky %s uplo %d: residual %.3g", atomr_dtype_get_name (dtype), uplo, err);
  g_assert_cmpfloat (err, <, tol (dtype));
}

static void
test_cholesky (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      cholesky_check (dtypes[d], ATOMR_SOLVER_LOWER);
      cholesky_check (dtypes[d], ATOMR_SOLVER_UPPER);
    }
}

static void
test_cholesky_not_spd (void)
{
  const gint64 n = 9;
  g_autofree double complex *a = g_new0 (double complex, n * n);
  g_autoptr(AtomrBuffer) da = NULL;
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (gint64 i = 0; i < n; i++)
    AT (a, n, i, i) = i == 4 ? -1 : 2;   /* leading minor of order 5 is negative */
  da = upload_new (ATOMR_DTYPE_F32, a, n * n);
  g_assert_false (SOLVE (cholesky, ATOMR_SOLVER_LOWER, da, n, n));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "not positive definite: leading minor of order 5"));
}

static void
qr_check (AtomrDtype dtype, gint64 m, gint64 n)
{
  const gint64 lda = m + 3, k = MIN (m, n);
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = random_matrix (m, n, lda, cplx);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) tau = math_buffer (device, dtype, k);
  g_autoptr(AtomrBuffer) q = math_buffer (device, dtype, lda * k);
  g_autofree double complex *r = NULL;
  g_autofree double complex *qm = NULL;
  g_autofree double complex *qr = g_new0 (double complex, m * n);
  g_autofree double complex *qhq = g_new0 (double complex, k * k);
  g_autofree double complex *eye = g_new0 (double complex, k * k);
  g_autoptr(GError) error = NULL;
  double err_rec, err_orth;

  g_assert_true (SOLVE (qr, da, m, n, lda, tau, q));
  g_assert_no_error (error);
  r = math_download (da);
  qm = math_download (q);
  /* R: the upper triangle (trapezoid) of a. */
  for (gint64 j = 0; j < n; j++)
    for (gint64 i = j + 1; i < m; i++)
      AT (r, lda, i, j) = 0;
  matmul (qm, lda, 'N', r, lda, qr, m, m, n, k);
  matmul (qm, lda, 'C', qm, lda, qhq, k, k, k, m);
  for (gint64 i = 0; i < k; i++)
    AT (eye, k, i, i) = 1;
  err_rec = block_error (qr, m, a, lda, m, n);
  err_orth = block_error (qhq, k, eye, k, k, k);
  g_test_message ("qr %s %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ": ‖QR − A‖ %.3g, ‖QᴴQ − I‖ %.3g",
                  atomr_dtype_get_name (dtype), m, n, err_rec, err_orth);
  g_assert_cmpfloat (err_rec, <, tol (dtype));
  g_assert_cmpfloat (err_orth, <, tol (dtype));
}

static void
test_qr (void)
{
  const gint64 m = 10, n = 6;
  g_autofree double complex *a = NULL;
  g_autofree double complex *r1 = NULL, *r2 = NULL;
  g_autoptr(AtomrBuffer) a1 = NULL, a2 = NULL, tau1 = NULL, tau2 = NULL, q = NULL;
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      qr_check (dtypes[d], 30, 20);
      qr_check (dtypes[d], 12, 20);
    }

  /* Without q only the factorization runs: the same R and reflectors. */
  a = random_matrix (m, n, m, FALSE);
  a1 = upload_new (ATOMR_DTYPE_F64, a, m * n);
  a2 = upload_new (ATOMR_DTYPE_F64, a, m * n);
  tau1 = math_buffer (device, ATOMR_DTYPE_F64, n);
  tau2 = math_buffer (device, ATOMR_DTYPE_F64, n);
  q = math_buffer (device, ATOMR_DTYPE_F64, m * n);
  g_assert_true (SOLVE (qr, a1, m, n, m, tau1, q));
  g_assert_true (SOLVE (qr, a2, m, n, m, tau2, NULL));
  g_assert_no_error (error);
  r1 = math_download (a1);
  r2 = math_download (a2);
  g_assert_cmpfloat (math_rel_error (r2, r1, m * n), <, 1e-12);
}

/* U·diag(s)·Vᴴ where vh holds Vᴴ (k × n). */
static double
svd_error (const double complex *a, gint64 lda,
           const double complex *u, gint64 ldu,
           const double complex *s,
           const double complex *vh, gint64 ldvh,
           gint64 m, gint64 n, gint64 k)
{
  g_autofree double complex *us = g_new0 (double complex, m * k);
  g_autofree double complex *rec = g_new0 (double complex, m * n);

  for (gint64 j = 0; j < k; j++)
    for (gint64 i = 0; i < m; i++)
      AT (us, m, i, j) = AT (u, ldu, i, j) * creal (s[j]);
  matmul (us, m, 'N', vh, ldvh, rec, m, m, n, k);
  return block_error (rec, m, a, lda, m, n);
}

static void
svd_check (AtomrDtype dtype)
{
  const gint64 m = 25, n = 16, lda = 27;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = random_matrix (m, n, lda, cplx);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) da2 = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) s = math_buffer (device, real_of (dtype), n);
  g_autoptr(AtomrBuffer) s2 = math_buffer (device, real_of (dtype), n);
  g_autoptr(AtomrBuffer) u = math_buffer (device, dtype, m * n);
  g_autoptr(AtomrBuffer) vt = math_buffer (device, dtype, n * n);
  g_autofree double complex *hs = NULL, *hs2 = NULL, *hu = NULL, *hvt = NULL;
  g_autoptr(GError) error = NULL;
  double err;

  g_assert_true (SOLVE (svd, da, m, n, lda, s, u, m, vt, n));
  g_assert_no_error (error);
  g_assert_true (SOLVE (svd, da2, m, n, lda, s2, NULL, 0, NULL, 0));
  g_assert_no_error (error);
  hs = math_download (s);
  hs2 = math_download (s2);
  hu = math_download (u);
  hvt = math_download (vt);
  for (gint64 i = 1; i < n; i++)
    g_assert_cmpfloat (creal (hs[i]), <=, creal (hs[i - 1]));
  g_assert_cmpfloat (math_rel_error (hs2, hs, n), <, tol (dtype));
  err = svd_error (a, lda, hu, m, hs, hvt, n, m, n, n);
  g_test_message ("svd %s: ‖UΣVᴴ − A‖ %.3g", atomr_dtype_get_name (dtype), err);
  g_assert_cmpfloat (err, <, tol (dtype));
}

static void
test_svd (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    svd_check (dtypes[d]);
}

static void
gesvdj_check (AtomrDtype dtype)
{
  const gint64 m = 8, n = 6, lda = 9, ldu = 8, ldv = 7, batch = 5, k = 6;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = random_matrix (lda, n * batch, lda, cplx);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n * batch);
  g_autoptr(AtomrBuffer) s = math_buffer (device, real_of (dtype), k * batch);
  g_autoptr(AtomrBuffer) u = math_buffer (device, dtype, ldu * m * batch);
  g_autoptr(AtomrBuffer) v = math_buffer (device, dtype, ldv * n * batch);
  g_autofree double complex *hs = NULL, *hu = NULL, *hv = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (SOLVE (gesvdj_batched, da, m, n, lda, s, u, ldu, v, ldv, batch));
  g_assert_no_error (error);
  hs = math_download (s);
  hu = math_download (u);
  hv = math_download (v);
  for (gint64 b = 0; b < batch; b++)
    {
      /* Vᴴ from V. */
      g_autofree double complex *vh = g_new0 (double complex, n * n);
      double err;
      for (gint64 i = 0; i < n; i++)
        for (gint64 j = 0; j < n; j++)
          AT (vh, n, i, j) = conj (AT (hv + b * ldv * n, ldv, j, i));
      err = svd_error (a + b * lda * n, lda, hu + b * ldu * m, ldu, hs + b * k, vh, n, m, n, k);
      g_test_message ("gesvdj_batched %s member %" G_GINT64_FORMAT ": ‖UΣVᴴ − A‖ %.3g",
                      atomr_dtype_get_name (dtype), b, err);
      g_assert_cmpfloat (err, <, tol (dtype));
    }
}

static void
test_gesvdj_batched (void)
{
  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    gesvdj_check (dtypes[d]);
}

/* ‖A·V − B·V·diag(w)‖ / ‖A·V‖ (B = I when NULL), and w ascending. */
static double
eigen_error (const double complex *a, gint64 lda,
             const double complex *bmat, gint64 ldb,
             const double complex *v, gint64 ldv,
             const double complex *w, gint64 n)
{
  g_autofree double complex *av = g_new0 (double complex, n * n);
  g_autofree double complex *bv = g_new0 (double complex, n * n);

  for (gint64 i = 1; i < n; i++)
    g_assert_cmpfloat (creal (w[i]), >=, creal (w[i - 1]));
  matmul (a, lda, 'N', v, ldv, av, n, n, n, n);
  if (bmat)
    matmul (bmat, ldb, 'N', v, ldv, bv, n, n, n, n);
  else
    for (gint64 j = 0; j < n; j++)
      for (gint64 i = 0; i < n; i++)
        AT (bv, n, i, j) = AT (v, ldv, i, j);
  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i < n; i++)
      AT (bv, n, i, j) *= creal (w[j]);
  return block_error (bv, n, av, n, n, n);
}

/* A Hermitian (symmetric when real) matrix. */
static double complex *
hermitian_matrix (gint64 n, gint64 ld, gboolean cplx)
{
  double complex *a = random_matrix (n, n, ld, cplx);
  for (gint64 j = 0; j < n; j++)
    for (gint64 i = 0; i <= j; i++)
      AT (a, ld, i, j) = i == j ? creal (AT (a, ld, i, j)) : conj (AT (a, ld, j, i));
  return a;
}

static void
eigen_check (AtomrDtype dtype, AtomrSolverFill uplo)
{
  const gint64 n = 20, lda = 22;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = hermitian_matrix (n, lda, cplx);
  g_autofree double complex *b = spd_matrix (n, n, cplx);
  g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) dg = upload_new (dtype, a, lda * n);
  g_autoptr(AtomrBuffer) db = upload_new (dtype, b, n * n);
  g_autoptr(AtomrBuffer) w = math_buffer (device, real_of (dtype), n);
  g_autoptr(AtomrBuffer) wg = math_buffer (device, real_of (dtype), n);
  g_autofree double complex *hv = NULL, *hw = NULL, *hgv = NULL, *hgw = NULL;
  g_autoptr(GError) error = NULL;
  double err, gerr;

  if (cplx)
    {
      g_assert_true (SOLVE (heevd, uplo, TRUE, da, n, lda, w));
      g_assert_no_error (error);
      g_assert_true (SOLVE (hegvd, ATOMR_SOLVER_EIG_AX_LBX, uplo, TRUE, dg, n, lda, db, n, wg));
    }
  else
    {
      g_assert_true (SOLVE (syevd, uplo, TRUE, da, n, lda, w));
      g_assert_no_error (error);
      g_assert_true (SOLVE (sygvd, ATOMR_SOLVER_EIG_AX_LBX, uplo, TRUE, dg, n, lda, db, n, wg));
    }
  g_assert_no_error (error);
  hv = math_download (da);
  hw = math_download (w);
  hgv = math_download (dg);
  hgw = math_download (wg);
  err = eigen_error (a, lda, NULL, 0, hv, lda, hw, n);
  gerr = eigen_error (a, lda, b, n, hgv, lda, hgw, n);
  g_test_message ("%s %s uplo %d: ‖AV − VΛ‖ %.3g, ‖AV − BVΛ‖ %.3g", cplx ? "heevd/hegvd" : "syevd/sygvd",
                  atomr_dtype_get_name (dtype), uplo, err, gerr);
  g_assert_cmpfloat (err, <, tol (dtype));
  g_assert_cmpfloat (gerr, <, tol (dtype));
}

static void
test_eigen (void)
{
  g_autoptr(GError) error = NULL;
  const gint64 n = 6;
  g_autofree double complex *a = NULL;
  g_autofree double complex *b = g_new0 (double complex, n * n);
  g_autoptr(AtomrBuffer) da = NULL, db = NULL, w = NULL, wonly = NULL, acopy = NULL;
  g_autofree double complex *hw = NULL, *hwonly = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      eigen_check (dtypes[d], ATOMR_SOLVER_LOWER);
      eigen_check (dtypes[d], ATOMR_SOLVER_UPPER);
    }

  /* Eigenvalues only agree with the full decomposition. */
  a = hermitian_matrix (n, n, FALSE);
  da = upload_new (ATOMR_DTYPE_F64, a, n * n);
  acopy = upload_new (ATOMR_DTYPE_F64, a, n * n);
  w = math_buffer (device, ATOMR_DTYPE_F64, n);
  wonly = math_buffer (device, ATOMR_DTYPE_F64, n);
  g_assert_true (SOLVE (syevd, ATOMR_SOLVER_LOWER, TRUE, da, n, n, w));
  g_assert_true (SOLVE (syevd, ATOMR_SOLVER_LOWER, FALSE, acopy, n, n, wonly));
  g_assert_no_error (error);
  hw = math_download (w);
  hwonly = math_download (wonly);
  g_assert_cmpfloat (math_rel_error (hwonly, hw, n), <, 1e-10);

  /* B not positive definite: named by its leading minor. */
  for (gint64 i = 0; i < n; i++)
    AT (b, n, i, i) = i == 3 ? -5 : 1;
  g_clear_object (&da);
  da = upload_new (ATOMR_DTYPE_F64, a, n * n);
  db = upload_new (ATOMR_DTYPE_F64, b, n * n);
  g_assert_false (SOLVE (sygvd, ATOMR_SOLVER_EIG_AX_LBX, ATOMR_SOLVER_LOWER, TRUE, da, n, n, db, n, w));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "B is not positive definite: leading minor of order 4"));
}

static void
getrf_batched_check (AtomrDtype dtype)
{
  const gint64 n = 10, lda = 11, batch = 4;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = g_new0 (double complex, lda * n * batch);
  g_autoptr(AtomrBuffer) da = NULL;
  g_autoptr(AtomrBuffer) ipiv = math_buffer (device, ATOMR_DTYPE_I32, n * batch);
  g_autofree double complex *lu = NULL, *piv = NULL;
  g_autoptr(GError) error = NULL;

  for (gint64 b = 0; b < batch; b++)
    {
      g_autofree double complex *m = random_matrix (n, n, lda, cplx);
      memcpy (a + b * lda * n, m, lda * n * sizeof (double complex));
    }
  da = upload_new (dtype, a, lda * n * batch);
  g_assert_true (SOLVE (getrf_batched, da, n, lda, ipiv, batch));
  g_assert_no_error (error);
  lu = math_download (da);
  piv = math_download (ipiv);
  for (gint64 b = 0; b < batch; b++)
    {
      const double complex *f = lu + b * lda * n;
      g_autofree double complex *l = g_new0 (double complex, n * n);
      g_autofree double complex *u = g_new0 (double complex, n * n);
      g_autofree double complex *p = g_new0 (double complex, n * n);
      double err;

      for (gint64 j = 0; j < n; j++)
        for (gint64 i = 0; i < n; i++)
          {
            if (i > j)
              AT (l, n, i, j) = AT (f, lda, i, j);
            else
              AT (u, n, i, j) = AT (f, lda, i, j);
            if (i == j)
              AT (l, n, i, j) = 1;
          }
      matmul (l, n, 'N', u, n, p, n, n, n, n);
      /* Undo the row interchanges, last first: A = P·L·U. */
      for (gint64 i = n - 1; i >= 0; i--)
        {
          gint64 r = (gint64) creal (piv[b * n + i]) - 1;
          for (gint64 j = 0; j < n && r != i; j++)
            {
              double complex t = AT (p, n, i, j);
              AT (p, n, i, j) = AT (p, n, r, j);
              AT (p, n, r, j) = t;
            }
        }
      err = block_error (p, n, a + b * lda * n, lda, n, n);
      g_test_message ("getrf_batched %s member %" G_GINT64_FORMAT ": ‖PLU − A‖ %.3g",
                      atomr_dtype_get_name (dtype), b, err);
      g_assert_cmpfloat (err, <, tol (dtype));
    }
}

static void
test_getrf_batched (void)
{
  const gint64 n = 6, batch = 3;
  g_autofree double complex *a = g_new0 (double complex, n * n * batch);
  g_autoptr(AtomrBuffer) da = NULL;
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    getrf_batched_check (dtypes[d]);

  /* Member 2 has a zero column 4; the others are fine. */
  for (gint64 b = 0; b < batch; b++)
    for (gint64 i = 0; i < n; i++)
      {
        AT (a + b * n * n, n, i, i) = 3;
        AT (a + b * n * n, n, (i + 1) % n, i) = 1;
      }
  for (gint64 i = 0; i < n; i++)
    AT (a + 2 * n * n, n, i, 3) = 0;
  da = upload_new (ATOMR_DTYPE_F64, a, n * n * batch);
  g_assert_false (SOLVE (getrf_batched, da, n, n, NULL, batch));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "batch member 2: matrix is singular: U(4,4) is zero"));
}

static void
potrf_batched_check (AtomrDtype dtype, AtomrSolverFill uplo)
{
  const gint64 n = 12, lda = 13, batch = 3;
  gboolean cplx = math_is_complex (dtype);
  g_autofree double complex *a = g_new0 (double complex, lda * n * batch);
  g_autoptr(AtomrBuffer) da = NULL;
  g_autofree double complex *f = NULL;
  g_autoptr(GError) error = NULL;

  for (gint64 b = 0; b < batch; b++)
    {
      g_autofree double complex *m = spd_matrix (n, lda, cplx);
      memcpy (a + b * lda * n, m, lda * n * sizeof (double complex));
    }
  da = upload_new (dtype, a, lda * n * batch);
  g_assert_true (SOLVE (potrf_batched, uplo, da, n, lda, batch));
  g_assert_no_error (error);
  f = math_download (da);
  for (gint64 b = 0; b < batch; b++)
    {
      /* t: the triangular factor; A = t·tᴴ (lower) or tᴴ·t (upper). */
      g_autofree double complex *t = g_new0 (double complex, n * n);
      g_autofree double complex *th = g_new0 (double complex, n * n);
      g_autofree double complex *rec = g_new0 (double complex, n * n);
      double err;

      for (gint64 j = 0; j < n; j++)
        for (gint64 i = 0; i < n; i++)
          if (uplo == ATOMR_SOLVER_LOWER ? i >= j : i <= j)
            AT (t, n, i, j) = AT (f + b * lda * n, lda, i, j);
      for (gint64 j = 0; j < n; j++)
        for (gint64 i = 0; i < n; i++)
          AT (th, n, i, j) = conj (AT (t, n, j, i));
      if (uplo == ATOMR_SOLVER_LOWER)
        matmul (t, n, 'N', th, n, rec, n, n, n, n);
      else
        matmul (th, n, 'N', t, n, rec, n, n, n, n);
      err = block_error (rec, n, a + b * lda * n, lda, n, n);
      g_test_message ("potrf_batched %s uplo %d member %" G_GINT64_FORMAT ": ‖A − factors‖ %.3g",
                      atomr_dtype_get_name (dtype), uplo, b, err);
      g_assert_cmpfloat (err, <, tol (dtype));
    }
}

static void
test_potrf_batched (void)
{
  const gint64 n = 7, batch = 4;
  g_autofree double complex *a = g_new0 (double complex, n * n * batch);
  g_autoptr(AtomrBuffer) da = NULL;
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      potrf_batched_check (dtypes[d], ATOMR_SOLVER_LOWER);
      potrf_batched_check (dtypes[d], ATOMR_SOLVER_UPPER);
    }

  for (gint64 b = 0; b < batch; b++)
    for (gint64 i = 0; i < n; i++)
      AT (a + b * n * n, n, i, i) = (b == 1 && i == 5) ? -2 : 4;
  da = upload_new (ATOMR_DTYPE_C128, a, n * n * batch);
  g_assert_false (SOLVE (potrf_batched, ATOMR_SOLVER_LOWER, da, n, n, batch));
  g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "batch member 1: matrix is not positive definite: "
                                            "leading minor of order 6"));
}

static void
test_device_reset (void)
{
  g_autoptr(GError) error = NULL;

  MATH_REQUIRE_DEVICE (device);
  lu_solve_check (ATOMR_DTYPE_F64);
  g_assert_cmpuint (atomr_solver_actor_get_workspace_size (solver), >, 0);
  g_assert_true (atomr_device_reset (device, &error));
  g_assert_no_error (error);
  lu_solve_check (ATOMR_DTYPE_C64);
  cholesky_check (ATOMR_DTYPE_F32, ATOMR_SOLVER_LOWER);
  qr_check (ATOMR_DTYPE_C128, 9, 7);
  getrf_batched_check (ATOMR_DTYPE_F64);
  potrf_batched_check (ATOMR_DTYPE_C64, ATOMR_SOLVER_LOWER);
}

/* ------------------------------------------------------------------ */
/* Issue 11: batched solves, wide SVD with full U/V, syevj, 4096        */

static void
test_getrs_batched (void)
{
  const gint64 n = 16, lda = 18, nrhs = 3, ldb = 20, batch = 6;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    for (guint t = 0; t < 3; t++)
      {
        AtomrDtype dtype = dtypes[d];
        gboolean cplx = math_is_complex (dtype);
        g_autofree double complex *a = g_new0 (double complex, lda * n * batch);
        g_autofree double complex *b = random_matrix (ldb, nrhs * batch, ldb, cplx);
        g_autofree double complex *x = NULL;
        g_autoptr(AtomrBuffer) da = NULL, db = NULL;
        g_autoptr(AtomrBuffer) ipiv = math_buffer (device, ATOMR_DTYPE_I32, n * batch);
        g_autoptr(GError) error = NULL;
        double worst = 0;

        for (gint64 i = 0; i < batch; i++)
          {
            g_autofree double complex *m = general_matrix (n, lda, cplx);
            memcpy (a + i * lda * n, m, sizeof (double complex) * lda * n);
          }
        da = upload_new (dtype, a, lda * n * batch);
        db = upload_new (dtype, b, ldb * nrhs * batch);
        g_assert_true (SOLVE (getrf_batched, da, n, lda, ipiv, batch));
        g_assert_no_error (error);
        g_assert_true (SOLVE (getrs_batched, t, da, n, lda, ipiv, db, nrhs, ldb, batch));
        g_assert_no_error (error);
        x = math_download (db);
        for (gint64 i = 0; i < batch; i++)
          {
            g_autofree double complex *ax = g_new0 (double complex, n * nrhs);
            matmul (a + i * lda * n, lda, "NTC"[t], x + i * ldb * nrhs, ldb, ax, n, n, nrhs, n);
            worst = MAX (worst, block_error (ax, n, b + i * ldb * nrhs, ldb, n, nrhs));
          }
        g_test_message ("getrs_batched %s trans %u: worst residual %.3g", atomr_dtype_get_name (dtype), t, worst);
        g_assert_cmpfloat (worst, <, tol (dtype));
      }
}

static void
test_potrs_batched (void)
{
  const gint64 n = 12, lda = 12, ldb = 14, batch = 5;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype dtype = dtypes[d];
      gboolean cplx = math_is_complex (dtype);
      g_autofree double complex *a = g_new0 (double complex, lda * n * batch);
      g_autofree double complex *b = random_matrix (ldb, batch, ldb, cplx);
      g_autofree double complex *x = NULL;
      g_autoptr(AtomrBuffer) da = NULL, db = NULL;
      g_autoptr(GError) error = NULL;
      double worst = 0;

      for (gint64 i = 0; i < batch; i++)
        {
          g_autofree double complex *m = spd_matrix (n, lda, cplx);
          memcpy (a + i * lda * n, m, sizeof (double complex) * lda * n);
        }
      da = upload_new (dtype, a, lda * n * batch);
      db = upload_new (dtype, b, ldb * batch);
      g_assert_true (SOLVE (potrf_batched, ATOMR_SOLVER_LOWER, da, n, lda, batch));
      g_assert_no_error (error);
      g_assert_true (SOLVE (potrs_batched, ATOMR_SOLVER_LOWER, da, n, lda, db, ldb, batch));
      g_assert_no_error (error);
      x = math_download (db);
      for (gint64 i = 0; i < batch; i++)
        {
          g_autofree double complex *ax = g_new0 (double complex, n);
          matmul (a + i * lda * n, lda, 'N', x + i * ldb, ldb, ax, n, n, 1, n);
          worst = MAX (worst, block_error (ax, n, b + i * ldb, ldb, n, 1));
        }
      g_test_message ("potrs_batched %s: worst residual %.3g", atomr_dtype_get_name (dtype), worst);
      g_assert_cmpfloat (worst, <, tol (dtype));
    }
}

/* A wide matrix (m < n), full U (m × m) and V (n × n): A = U·diag(s)·Vᴴ
 * over the first min(m, n) columns, and U, V unitary. */
static void
test_gesvdj_wide (void)
{
  static const gint64 shapes[][2] = { { 5, 9 }, { 9, 5 }, { 7, 7 } };

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    for (guint sh = 0; sh < G_N_ELEMENTS (shapes); sh++)
      {
        AtomrDtype dtype = dtypes[d];
        gint64 m = shapes[sh][0], n = shapes[sh][1], k = MIN (m, n), lda = m + 1;
        gboolean cplx = math_is_complex (dtype);
        g_autofree double complex *a = random_matrix (m, n, lda, cplx);
        g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
        g_autoptr(AtomrBuffer) ds = math_buffer (device, real_of (dtype), k);
        g_autoptr(AtomrBuffer) du = math_buffer (device, dtype, m * m);
        g_autoptr(AtomrBuffer) dv = math_buffer (device, dtype, n * n);
        g_autofree double complex *u = NULL, *v = NULL, *sv = NULL;
        g_autofree double complex *vh = g_new0 (double complex, k * n);
        g_autofree double complex *uhu = g_new0 (double complex, m * m);
        g_autofree double complex *vhv = g_new0 (double complex, n * n);
        g_autofree double complex *eye_m = g_new0 (double complex, m * m);
        g_autofree double complex *eye_n = g_new0 (double complex, n * n);
        g_autoptr(GError) error = NULL;
        double rec, orth_u, orth_v;

        g_assert_true (SOLVE (gesvdj, da, m, n, lda, ds, du, m, dv, n, TRUE));
        g_assert_no_error (error);
        u = math_download (du);
        v = math_download (dv);
        sv = math_download (ds);
        for (gint64 i = 0; i < k; i++)
          for (gint64 j = 0; j < n; j++)
            AT (vh, k, i, j) = conj (AT (v, n, j, i));
        rec = svd_error (a, lda, u, m, sv, vh, k, m, n, k);
        matmul (u, m, 'C', u, m, uhu, m, m, m, m);
        matmul (v, n, 'C', v, n, vhv, n, n, n, n);
        for (gint64 i = 0; i < m; i++)
          AT (eye_m, m, i, i) = 1;
        for (gint64 i = 0; i < n; i++)
          AT (eye_n, n, i, i) = 1;
        orth_u = block_error (uhu, m, eye_m, m, m, m);
        orth_v = block_error (vhv, n, eye_n, n, n, n);
        for (gint64 i = 1; i < k; i++)
          g_assert_cmpfloat (creal (sv[i]), <=, creal (sv[i - 1]));
        g_test_message ("gesvdj %s %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ": reconstruction %.3g, "
                        "UᴴU − I %.3g, VᴴV − I %.3g", atomr_dtype_get_name (dtype), m, n, rec, orth_u, orth_v);
        g_assert_cmpfloat (rec, <, 20 * tol (dtype));
        g_assert_cmpfloat (orth_u, <, 20 * tol (dtype));
        g_assert_cmpfloat (orth_v, <, 20 * tol (dtype));
      }
}

static void
test_syevj (void)
{
  const gint64 n = 24, lda = 26;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype dtype = dtypes[d];
      gboolean cplx = math_is_complex (dtype);
      g_autofree double complex *a = hermitian_matrix (n, lda, cplx);
      g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
      g_autoptr(AtomrBuffer) dw = math_buffer (device, real_of (dtype), n);
      g_autofree double complex *v = NULL, *w = NULL;
      g_autoptr(GError) error = NULL;
      double err;

      g_assert_true (SOLVE (syevj, ATOMR_SOLVER_LOWER, TRUE, da, n, lda, dw));
      g_assert_no_error (error);
      v = math_download (da);
      w = math_download (dw);
      err = eigen_error (a, lda, NULL, 0, v, lda, w, n);
      g_test_message ("syevj %s: ‖AV − VΛ‖/‖AV‖ %.3g", atomr_dtype_get_name (dtype), err);
      g_assert_cmpfloat (err, <, 50 * tol (dtype));
    }
}

/* Least squares: the residual of the normal equations Aᴴ(A·X − B) is 0. */
static void
test_gels (void)
{
  const gint64 m = 40, n = 12, nrhs = 2, lda = 41, ldb = 42, ldx = 13;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype dtype = dtypes[d];
      gboolean cplx = math_is_complex (dtype);
      g_autofree double complex *a = random_matrix (m, n, lda, cplx);
      g_autofree double complex *b = random_matrix (m, nrhs, ldb, cplx);
      g_autofree double complex *x = NULL, *r = g_new0 (double complex, m * nrhs);
      g_autofree double complex *ahr = g_new0 (double complex, n * nrhs);
      g_autofree double complex *ahb = g_new0 (double complex, n * nrhs);
      g_autoptr(AtomrBuffer) da = upload_new (dtype, a, lda * n);
      g_autoptr(AtomrBuffer) db = upload_new (dtype, b, ldb * nrhs);
      g_autoptr(AtomrBuffer) dx = math_buffer (device, dtype, ldx * nrhs);
      g_autoptr(GError) error = NULL;
      double err;

      g_assert_true (SOLVE (gels, da, m, n, lda, db, nrhs, ldb, dx, ldx));
      g_assert_no_error (error);
      x = math_download (dx);
      matmul (a, lda, 'N', x, ldx, r, m, m, nrhs, n);          /* r = A·X */
      for (gint64 j = 0; j < nrhs; j++)
        for (gint64 i = 0; i < m; i++)
          AT (r, m, i, j) -= AT (b, ldb, i, j);                  /* r = A·X − B */
      matmul (a, lda, 'C', r, m, ahr, n, n, nrhs, m);
      matmul (a, lda, 'C', b, ldb, ahb, n, n, nrhs, m);
      {
        double num = 0, den = 0;
        for (gint64 i = 0; i < n * nrhs; i++)
          {
            num += pow (cabs (ahr[i]), 2);
            den += pow (cabs (ahb[i]), 2);
          }
        err = sqrt (num / den);
      }
      g_test_message ("gels %s: ‖Aᴴ(AX − B)‖/‖AᴴB‖ %.3g", atomr_dtype_get_name (dtype), err);
      g_assert_cmpfloat (err, <, 100 * tol (dtype));
    }
}

/* geev: for real dtypes a block-triangular matrix whose eigenvalues are
 * known (±2i from a rotation block, then 3, 4, ...); for complex ones a
 * random matrix, checked through A·V = V·diag(w). */
static void
test_geev (void)
{
  const gint64 n = 10, lda = 11;

  MATH_REQUIRE_DEVICE (device);
  for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
    {
      AtomrDtype dtype = dtypes[d];
      gboolean cplx = math_is_complex (dtype);
      g_autofree double complex *a = random_matrix (n, n, lda, cplx);
      g_autoptr(AtomrBuffer) da = NULL;
      g_autoptr(AtomrBuffer) dw = math_buffer (device, dtype, cplx ? n : 2 * n);
      g_autoptr(AtomrBuffer) dvr = math_buffer (device, dtype, n * n);
      g_autofree double complex *w = NULL, *vr = NULL;
      g_autoptr(GError) error = NULL;
      double worst = 0;

      if (!cplx)
        {
          for (gint64 j = 0; j < n; j++)
            for (gint64 i = j + 1; i < n; i++)
              AT (a, lda, i, j) = 0;
          AT (a, lda, 0, 0) = 0; AT (a, lda, 0, 1) = -2;
          AT (a, lda, 1, 0) = 2; AT (a, lda, 1, 1) = 0;
          for (gint64 i = 2; i < n; i++)
            AT (a, lda, i, i) = i + 1;
        }
      da = upload_new (dtype, a, lda * n);
      g_assert_true (SOLVE (geev, da, n, lda, dw, cplx ? dvr : NULL, n));
      g_assert_no_error (error);
      w = math_download (dw);
      if (!cplx)
        {
          for (gint64 k = 0; k < n; k++)
            {
              double complex want = k == 0 ? 2 * I : k == 1 ? -2 * I : (double) (k + 1);
              double best = G_MAXDOUBLE;
              for (gint64 i = 0; i < n; i++)   /* real parts, then imaginary parts */
                best = MIN (best, cabs (CMPLX (creal (w[i]), creal (w[n + i])) - want));
              worst = MAX (worst, best / cabs (want));
            }
        }
      else
        {
          g_autofree double complex *av = g_new0 (double complex, n * n);
          g_autofree double complex *vw = g_new0 (double complex, n * n);
          vr = math_download (dvr);
          matmul (a, lda, 'N', vr, n, av, n, n, n, n);
          for (gint64 j = 0; j < n; j++)
            for (gint64 i = 0; i < n; i++)
              AT (vw, n, i, j) = AT (vr, n, i, j) * w[j];
          worst = block_error (vw, n, av, n, n, n);
        }
      g_test_message ("geev %s: %s %.3g", atomr_dtype_get_name (dtype),
                      cplx ? "‖AV − VΛ‖/‖AV‖" : "worst eigenvalue error", worst);
      g_assert_cmpfloat (worst, <, 100 * tol (dtype));
    }
}

/* A 4096 × 4096 LU solve in f64: the residual is computed on the host
 * (O(n²)). */
static void
test_lu_4096 (void)
{
  const gint64 n = 4096;
  g_autofree double complex *a = NULL, *b = NULL, *x = NULL;
  g_autoptr(AtomrBuffer) da = NULL, db = NULL, ipiv = NULL;
  g_autoptr(GError) error = NULL;
  double num = 0, den = 0;

  MATH_REQUIRE_DEVICE (device);
  a = general_matrix (n, n, FALSE);
  b = random_matrix (n, 1, n, FALSE);
  da = upload_new (ATOMR_DTYPE_F64, a, n * n);
  db = upload_new (ATOMR_DTYPE_F64, b, n);
  ipiv = math_buffer (device, ATOMR_DTYPE_I64, n);
  g_assert_true (SOLVE (lu, da, n, n, n, ipiv));
  g_assert_no_error (error);
  g_assert_true (SOLVE (lu_solve, ATOMR_SOLVER_NO_TRANSPOSE, da, n, n, ipiv, db, 1, n));
  g_assert_no_error (error);
  x = math_download (db);
  for (gint64 i = 0; i < n; i++)
    {
      double acc = 0;
      for (gint64 j = 0; j < n; j++)
        acc += creal (AT (a, n, i, j)) * creal (x[j]);
      num += pow (acc - creal (b[i]), 2);
      den += pow (creal (b[i]), 2);
    }
  g_test_message ("lu 4096 f64: residual %.3g", sqrt (num / den));
  g_assert_cmpfloat (sqrt (num / den), <, 1e-12);
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  int ret;

  g_test_init (&argc, &argv, NULL);
  rng = g_rand_new_with_seed (77);
  g_test_add_func ("/gpu/solver/lu", test_lu);
  g_test_add_func ("/gpu/solver/lu-singular", test_lu_singular);
  g_test_add_func ("/gpu/solver/tensor-views", test_tensor_views);
  g_test_add_func ("/gpu/solver/cholesky", test_cholesky);
  g_test_add_func ("/gpu/solver/cholesky-not-spd", test_cholesky_not_spd);
  g_test_add_func ("/gpu/solver/qr", test_qr);
  g_test_add_func ("/gpu/solver/svd", test_svd);
  g_test_add_func ("/gpu/solver/gesvdj-batched", test_gesvdj_batched);
  g_test_add_func ("/gpu/solver/eigen", test_eigen);
  g_test_add_func ("/gpu/solver/getrf-batched", test_getrf_batched);
  g_test_add_func ("/gpu/solver/potrf-batched", test_potrf_batched);
  g_test_add_func ("/gpu/solver/getrs-batched", test_getrs_batched);
  g_test_add_func ("/gpu/solver/potrs-batched", test_potrs_batched);
  g_test_add_func ("/gpu/solver/gesvdj-wide-full", test_gesvdj_wide);
  g_test_add_func ("/gpu/solver/syevj", test_syevj);
  g_test_add_func ("/gpu/solver/gels", test_gels);
  g_test_add_func ("/gpu/solver/geev", test_geev);
  g_test_add_func ("/gpu/solver/lu-4096", test_lu_4096);
  g_test_add_func ("/gpu/solver/device-reset", test_device_reset);

  device = math_get_device ();
  if (device)
    {
      solver = atomr_solver_actor_new (device, &error);
      g_assert_no_error (error);
    }
  ret = g_test_run ();
  g_clear_object (&solver);
  g_clear_object (&device);
  g_rand_free (rng);
  return ret;
}
