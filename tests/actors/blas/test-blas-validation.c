/* test-blas-validation.c — every validation error of the cuBLAS and
 * cuBLASLt actors, on the host test device (no GPU)
 *
 * Validation happens in the _async call, before anything reaches the
 * actor's stream: each case checks the error code, that the message names
 * the argument and its value, and that nothing was enqueued.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <atomr.h>
#include "core/atomr-actor-private.h"
#include "core/atomr-buffer-private.h"
#include "core/atomr-hazard-private.h"

typedef struct {
  AtomrDevice      *device;
  AtomrBlasActor   *blas;
  AtomrBlasLtActor *lt;
  AtomrBuffer      *f32_64, *f32_64b, *f32_64c, *f32_4, *f32_8;
  AtomrBuffer      *f64_64, *c64_64, *c64_64b, *i32_64, *u8_4096, *f16_64, *f16_64b;
  AtomrBuffer      *e4m3_64, *e5m2_64, *e5m2_64b;
} Fixture;

static AtomrBuffer *
buffer (Fixture *f, AtomrDtype dtype, guint64 n)
{
  g_autoptr(GError) error = NULL;
  AtomrBuffer *b = atomr_buffer_new (f->device, dtype, n, &error);
  g_assert_no_error (error);
  return b;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  f->device = atomr_device_new_host ();
  f->blas = atomr_blas_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->lt = atomr_blas_lt_actor_new (f->device, &error);
  g_assert_no_error (error);
  f->f32_64 = buffer (f, ATOMR_DTYPE_F32, 64);
  f->f32_64b = buffer (f, ATOMR_DTYPE_F32, 64);
  f->f32_64c = buffer (f, ATOMR_DTYPE_F32, 64);
  f->f32_4 = buffer (f, ATOMR_DTYPE_F32, 4);
  f->f32_8 = buffer (f, ATOMR_DTYPE_F32, 8);
  f->f64_64 = buffer (f, ATOMR_DTYPE_F64, 64);
  f->c64_64 = buffer (f, ATOMR_DTYPE_C64, 64);
  f->c64_64b = buffer (f, ATOMR_DTYPE_C64, 64);
  f->i32_64 = buffer (f, ATOMR_DTYPE_I32, 64);
  f->u8_4096 = buffer (f, ATOMR_DTYPE_U8, 4096);
  f->f16_64 = buffer (f, ATOMR_DTYPE_F16, 64);
  f->f16_64b = buffer (f, ATOMR_DTYPE_F16, 64);
  f->e4m3_64 = buffer (f, ATOMR_DTYPE_F8_E4M3, 64);
  f->e5m2_64 = buffer (f, ATOMR_DTYPE_F8_E5M2, 64);
  f->e5m2_64b = buffer (f, ATOMR_DTYPE_F8_E5M2, 64);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  AtomrBuffer **all[] = { &f->f32_64, &f->f32_64b, &f->f32_64c, &f->f32_4, &f->f32_8, &f->f64_64,
                          &f->c64_64, &f->c64_64b, &f->i32_64, &f->u8_4096, &f->f16_64, &f->f16_64b,
                          &f->e4m3_64, &f->e5m2_64, &f->e5m2_64b };

  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_assert_finalize_object (*all[i]);
  g_assert_finalize_object (f->blas);
  g_assert_finalize_object (f->lt);
  g_object_unref (f->device);
}

static void
store_result (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GAsyncResult **out = user_data;
  g_assert_null (*out);
  *out = g_object_ref (result);
}

static GError *
wait_error (GAsyncResult **result)
{
  GError *error = NULL;

  while (*result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (atomr_reply_propagate_boolean (*result, &error));
  g_clear_object (result);
  return error;
}

typedef void (*CaseFunc) (Fixture *f, GAsyncReadyCallback cb, gpointer ud);

typedef struct {
  const gchar *path;
  CaseFunc     func;
  gint         code;
  const gchar *message;   /* a substring the message must contain */
} Case;

#define N ATOMR_TRANSPOSE_N
#define T ATOMR_TRANSPOSE_T
#define EPI(e) ATOMR_BLAS_LT_EPILOGUE_##e
#define CASE(name, body) \
  static void name (Fixture *f, GAsyncReadyCallback cb, gpointer ud) { body; }

/* gemm: 8x8x8 in f32_64 is valid */
CASE (gemm_transa, atomr_blas_actor_gemm_async (f->blas, 7, N, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_m_negative, atomr_blas_actor_gemm_async (f->blas, N, N, -1, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_k_huge, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, G_GINT64_CONSTANT (1) << 31, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_dtype, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->i32_64, 8, f->i32_64, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_b_dtype, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_64, 8, f->f64_64, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_c_dtype, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f64_64, 8, NULL, cb, ud))
CASE (gemm_lda, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_64, 3, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_a_small, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_4, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_b_transposed_small, atomr_blas_actor_gemm_async (f->blas, N, T, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 10, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_ldc, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 7, NULL, cb, ud))
CASE (gemm_a_null, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, NULL, 8, f->f32_64b, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (gemm_c_alias, atomr_blas_actor_gemm_async (f->blas, N, N, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 0, 0, f->f32_64b, 8, NULL, cb, ud))
CASE (sb_c_alias, atomr_blas_actor_gemm_strided_batched_async (f->blas, N, N, 4, 4, 4, 1, 0, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, 0, f->f32_64, 4, 16, 2, NULL, cb, ud))
CASE (syrk_alias, atomr_blas_actor_syrk_async (f->blas, ATOMR_FILL_MODE_UPPER, N, 8, 8, 1, 0, f->f32_64, 8, 0, 0, f->f32_64, 8, NULL, cb, ud))
CASE (gemv_a_alias, atomr_blas_actor_gemv_async (f->blas, N, 8, 8, 1, 0, f->f32_64, 8, f->f32_8, 1, 0, 0, f->f32_64, 1, NULL, cb, ud))
CASE (gemm_ex_f16_compute, atomr_blas_actor_gemm_ex_async (f->blas, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, ATOMR_BLAS_COMPUTE_F16, NULL, cb, ud))
CASE (gemm_ex_tf32_f16, atomr_blas_actor_gemm_ex_async (f->blas, N, N, 8, 8, 8, 1, f->f16_64, 8, f->f16_64b, 8, 0, f->f32_64c, 8, ATOMR_BLAS_COMPUTE_F32_FAST_TF32, NULL, cb, ud))
CASE (gemm_ex_c_dtype, atomr_blas_actor_gemm_ex_async (f->blas, N, N, 8, 8, 8, 1, f->f64_64, 8, f->f64_64, 8, 0, f->f32_64c, 8, ATOMR_BLAS_COMPUTE_DEFAULT, NULL, cb, ud))
CASE (gemm_ex_complex, atomr_blas_actor_gemm_ex_async (f->blas, N, N, 8, 8, 8, 1, f->c64_64, 8, f->c64_64b, 8, 0, f->f32_64c, 8, ATOMR_BLAS_COMPUTE_DEFAULT, NULL, cb, ud))
CASE (gemm_ex_compute_invalid, atomr_blas_actor_gemm_ex_async (f->blas, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, 42, NULL, cb, ud))
/* strided batched: 2 of 4x4x4 in 64 elements is valid with strides 16 */
CASE (sb_batch_zero, atomr_blas_actor_gemm_strided_batched_async (f->blas, N, N, 4, 4, 4, 1, 0, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, 0, f->f32_64c, 4, 16, 0, NULL, cb, ud))
CASE (sb_stride_negative, atomr_blas_actor_gemm_strided_batched_async (f->blas, N, N, 4, 4, 4, 1, 0, f->f32_64, 4, -1, f->f32_64b, 4, 16, 0, 0, f->f32_64c, 4, 16, 2, NULL, cb, ud))
CASE (sb_c_overlap, atomr_blas_actor_gemm_strided_batched_async (f->blas, N, N, 4, 4, 4, 1, 0, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, 0, f->f32_64c, 4, 10, 2, NULL, cb, ud))
CASE (sb_a_small, atomr_blas_actor_gemm_strided_batched_async (f->blas, N, N, 4, 4, 4, 1, 0, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, 0, f->f32_64c, 4, 16, 5, NULL, cb, ud))
/* syrk, trsm, geam */
CASE (syrk_uplo, atomr_blas_actor_syrk_async (f->blas, 5, N, 8, 8, 1, 0, f->f32_64, 8, 0, 0, f->f32_64c, 8, NULL, cb, ud))
CASE (syrk_complex_c, atomr_blas_actor_syrk_async (f->blas, ATOMR_FILL_MODE_LOWER, ATOMR_TRANSPOSE_C, 8, 8, 1, 0, f->c64_64, 8, 0, 0, f->c64_64b, 8, NULL, cb, ud))
CASE (syrk_c_small, atomr_blas_actor_syrk_async (f->blas, ATOMR_FILL_MODE_LOWER, N, 8, 8, 1, 0, f->f32_64, 8, 0, 0, f->f32_8, 8, NULL, cb, ud))
CASE (syrk_dtype_f16, atomr_blas_actor_syrk_async (f->blas, ATOMR_FILL_MODE_LOWER, N, 8, 8, 1, 0, f->f16_64, 8, 0, 0, f->f16_64b, 8, NULL, cb, ud))
CASE (trsm_side, atomr_blas_actor_trsm_async (f->blas, 3, ATOMR_FILL_MODE_LOWER, N, ATOMR_DIAG_NON_UNIT, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, NULL, cb, ud))
CASE (trsm_diag, atomr_blas_actor_trsm_async (f->blas, ATOMR_SIDE_LEFT, ATOMR_FILL_MODE_LOWER, N, 9, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, NULL, cb, ud))
CASE (trsm_same, atomr_blas_actor_trsm_async (f->blas, ATOMR_SIDE_LEFT, ATOMR_FILL_MODE_LOWER, N, ATOMR_DIAG_NON_UNIT, 8, 8, 1, 0, f->f32_64, 8, f->f32_64, 8, NULL, cb, ud))
CASE (trsm_right_a_small, atomr_blas_actor_trsm_async (f->blas, ATOMR_SIDE_RIGHT, ATOMR_FILL_MODE_LOWER, N, ATOMR_DIAG_NON_UNIT, 4, 16, 1, 0, f->f32_64, 16, f->f32_64b, 4, NULL, cb, ud))
CASE (geam_inplace_transposed, atomr_blas_actor_geam_async (f->blas, T, N, 8, 8, 1, 0, f->f32_64, 8, 1, 0, f->f32_64b, 8, f->f32_64, 8, NULL, cb, ud))
CASE (geam_ldb, atomr_blas_actor_geam_async (f->blas, N, N, 8, 8, 1, 0, f->f32_64, 8, 1, 0, f->f32_64b, 2, f->f32_64c, 8, NULL, cb, ud))
/* level 2 */
CASE (gemv_incx_zero, atomr_blas_actor_gemv_async (f->blas, N, 8, 8, 1, 0, f->f32_64, 8, f->f32_8, 0, 0, 0, f->f32_64b, 1, NULL, cb, ud))
CASE (gemv_x_small_transposed, atomr_blas_actor_gemv_async (f->blas, T, 16, 4, 1, 0, f->f32_64, 16, f->f32_8, 1, 0, 0, f->f32_64b, 1, NULL, cb, ud))
CASE (gemv_same, atomr_blas_actor_gemv_async (f->blas, N, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 1, 0, 0, f->f32_64b, 1, NULL, cb, ud))
CASE (gemv_trans, atomr_blas_actor_gemv_async (f->blas, -1, 8, 8, 1, 0, f->f32_64, 8, f->f32_8, 1, 0, 0, f->f32_64b, 1, NULL, cb, ud))
CASE (ger_alias, atomr_blas_actor_ger_async (f->blas, 8, 8, 1, 0, f->f32_64, 1, f->f32_8, 1, FALSE, f->f32_64, 8, NULL, cb, ud))
CASE (ger_y_small, atomr_blas_actor_ger_async (f->blas, 8, 8, 1, 0, f->f32_8, 1, f->f32_4, 1, FALSE, f->f32_64, 8, NULL, cb, ud))
CASE (ger_lda, atomr_blas_actor_ger_async (f->blas, 8, 8, 1, 0, f->f32_8, 1, f->f32_64b, 1, FALSE, f->f32_64, 4, NULL, cb, ud))
/* level 1 */
CASE (axpy_y_null, atomr_blas_actor_axpy_async (f->blas, 8, 1, 0, f->f32_8, 1, NULL, 1, NULL, cb, ud))
CASE (axpy_dtype, atomr_blas_actor_axpy_async (f->blas, 8, 1, 0, f->f32_8, 1, f->f64_64, 1, NULL, cb, ud))
CASE (axpy_n_negative, atomr_blas_actor_axpy_async (f->blas, -3, 1, 0, f->f32_8, 1, f->f32_64, 1, NULL, cb, ud))
CASE (axpy_same, atomr_blas_actor_axpy_async (f->blas, 8, 1, 0, f->f32_8, 1, f->f32_8, 1, NULL, cb, ud))
CASE (scal_dtype, atomr_blas_actor_scal_async (f->blas, 8, 2, 0, f->u8_4096, 1, NULL, cb, ud))
CASE (scal_x_small, atomr_blas_actor_scal_async (f->blas, 8, 2, 0, f->f32_8, 2, NULL, cb, ud))
CASE (copy_same, atomr_blas_actor_copy_async (f->blas, 8, f->f32_8, 1, f->f32_8, 1, NULL, cb, ud))
CASE (copy_incy_huge, atomr_blas_actor_copy_async (f->blas, 8, f->f32_8, 1, f->f32_64, G_GINT64_CONSTANT (1) << 32, NULL, cb, ud))
CASE (swap_y_small, atomr_blas_actor_swap_async (f->blas, 8, f->f32_8, 1, f->f32_4, 1, NULL, cb, ud))
CASE (rot_incy, atomr_blas_actor_rot_async (f->blas, 8, f->f32_8, 1, f->f32_64, 0, 0.6, 0.8, NULL, cb, ud))
/* issue 11: negative increments (two-vector level 1) and halves (Ex forms) */
CASE (axpy_negative_ok, atomr_blas_actor_axpy_async (f->blas, 8, 2, 0, f->f32_8, -1, f->f32_64, -3, NULL, cb, ud))
CASE (axpy_negative_short, atomr_blas_actor_axpy_async (f->blas, 8, 2, 0, f->f32_8, -2, f->f32_64, 1, NULL, cb, ud))
CASE (copy_negative_huge, atomr_blas_actor_copy_async (f->blas, 8, f->f32_8, 1, f->f32_64, -(G_GINT64_CONSTANT (1) << 32), NULL, cb, ud))
CASE (scal_negative, atomr_blas_actor_scal_async (f->blas, 8, 2, 0, f->f32_8, -1, NULL, cb, ud))
CASE (dot_half_ok, atomr_blas_actor_dot_async (f->blas, 8, f->f16_64, 1, f->f16_64b, -2, FALSE, NULL, cb, ud))
CASE (nrm2_half_ok, atomr_blas_actor_nrm2_async (f->blas, 8, f->f16_64, 3, NULL, cb, ud))
CASE (asum_half, atomr_blas_actor_asum_async (f->blas, 8, f->f16_64, 1, NULL, cb, ud))
CASE (dot_dtype, atomr_blas_actor_dot_async (f->blas, 8, f->c64_64, 1, f->f32_64, 1, FALSE, NULL, cb, ud))
CASE (nrm2_x_small, atomr_blas_actor_nrm2_async (f->blas, 9, f->f32_8, 1, NULL, cb, ud))
CASE (asum_incx, atomr_blas_actor_asum_async (f->blas, 8, f->f32_8, 0, NULL, cb, ud))
CASE (iamax_null, atomr_blas_actor_iamax_async (f->blas, 8, NULL, 1, NULL, cb, ud))
CASE (iamin_dtype, atomr_blas_actor_iamin_async (f->blas, 8, f->i32_64, 1, NULL, cb, ud))
/* cuBLASLt fp8 with scale sets */
CASE (lt_fp8_unscaled, atomr_blas_lt_actor_matmul_async (f->lt, T, N, 8, 8, 8, 1, f->e4m3_64, 8, f->e4m3_64, 8, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_scaled_not_fp8, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->f32_64, 8, NULL, f->f32_64b, 8, NULL, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_fp8_e5m2_pair, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e5m2_64, 8, NULL, f->e5m2_64b, 8, NULL, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_fp8_out, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, NULL, f->e5m2_64, 8, NULL, 0, f->i32_64, 8, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_fp8_scale_dtype, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, f->f64_64, f->e4m3_64, 8, NULL, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_fp8_aux, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, NULL, f->e4m3_64, 8, NULL, 0, f->f32_64c, 8, EPI (GELU_AUX), NULL, NULL, cb, ud))
CASE (lt_fp8_mixed, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, NULL, f->f32_64b, 8, NULL, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, cb, ud))

/* cuBLASLt matmul: 8x8x8 f32 is valid */
CASE (lt_dtype, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f64_64, 8, f->f64_64, 8, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_c_dtype, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f16_64, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_k_zero, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 0, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_epilogue, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, 99, NULL, NULL, 0, NULL, cb, ud))
CASE (lt_alias, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
/* Issue 11, item 2: bias and aux were only compared with C. */
CASE (lt_bgrada_bias_a, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (BGRADA), f->f32_64, NULL, 0, NULL, cb, ud))
CASE (lt_bgradb_bias_b, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (BGRADB), f->f32_64b, NULL, 0, NULL, cb, ud))
CASE (lt_aux_a, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (GELU_AUX), NULL, f->f32_64, 8, NULL, cb, ud))
/* A and B may be one buffer: both are only read. */
CASE (lt_aux_bias, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64, 8, 0, f->f32_64c, 8, EPI (GELU_AUX_BIAS), f->f32_64b, f->f32_64b, 8, NULL, cb, ud))
CASE (lt_dgelu_bias_aux, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64, 8, 0, f->f32_64c, 8, EPI (DGELU_BGRAD), f->f32_64b, f->f32_64b, 8, NULL, cb, ud))
CASE (lt_fp8_bias_scale, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, f->f32_64c, f->e4m3_64, 8, NULL, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, cb, ud))
/* Issue 11, item 1: with fp8 operands and an f32 D, cuBLASLt reads a bf16
 * bias; an f32 one was accepted and read as bf16 pairs. */
CASE (lt_fp8_f32_bias_dtype, atomr_blas_lt_actor_matmul_scaled_async (f->lt, 8, 8, 8, 1, f->e4m3_64, 8, NULL, f->e4m3_64, 8, NULL, 0, f->f32_64c, 8, EPI (BIAS), f->f32_8, NULL, cb, ud))
/* issue 11: strided batches */
CASE (lt_batch_zero, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, f->f32_64c, 4, 16, 0, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_batch_a_small, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, f->f32_64c, 4, 16, 5, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_batch_c_overlap, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 16, f->f32_64b, 4, 0, 0, f->f32_64c, 4, 8, 2, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_batch_stride_overflow, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, G_MAXINT64, f->f32_64b, 4, 16, 0, f->f32_64c, 4, 16, 4, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_batch_epilogue, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, f->f32_64c, 4, 16, 2, EPI (BGRADA), f->f32_8, NULL, cb, ud))
CASE (lt_batch_alias, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 16, f->f32_64b, 4, 16, 0, f->f32_64b, 4, 16, 2, EPI (NONE), NULL, NULL, cb, ud))
CASE (lt_batch_ok, atomr_blas_lt_actor_matmul_batched_async (f->lt, N, N, 4, 4, 4, 1, f->f32_64, 4, 0, f->f32_64b, 4, 16, 0, f->f32_64c, 4, 16, 4, EPI (RELU_BIAS), f->f32_4, NULL, cb, ud))
CASE (lt_lda, atomr_blas_lt_actor_matmul_async (f->lt, T, N, 8, 8, 8, 1, f->f32_64, 5, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_bias_unused, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (RELU), f->f32_8, NULL, 0, NULL, cb, ud))
CASE (lt_bias_missing, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (BIAS), NULL, NULL, 0, NULL, cb, ud))
CASE (lt_bias_short, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (GELU_BIAS), f->f32_4, NULL, 0, NULL, cb, ud))
CASE (lt_bias_dtype, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (RELU_BIAS), f->f64_64, NULL, 0, NULL, cb, ud))
CASE (lt_bgradb_short, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 4, 16, 4, 1, f->f32_64, 4, f->f32_64b, 4, 0, f->f32_64c, 4, EPI (BGRADB), f->f32_8, NULL, 0, NULL, cb, ud))
CASE (lt_aux_missing, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (RELU_AUX), NULL, NULL, 128, NULL, cb, ud))
CASE (lt_aux_unused, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (GELU), NULL, f->u8_4096, 128, NULL, cb, ud))
CASE (lt_relu_aux_ld, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (RELU_AUX), NULL, f->u8_4096, 64, NULL, cb, ud))
CASE (lt_relu_aux_dtype, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (DRELU), NULL, f->f32_64, 128, NULL, cb, ud))
CASE (lt_relu_aux_small, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (DRELU_BGRAD), f->f32_8, f->u8_4096, 8192, NULL, cb, ud))
CASE (lt_gelu_aux_ld, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (GELU_AUX), NULL, f->f32_64b, 12, NULL, cb, ud))
CASE (lt_gelu_aux_dtype, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (DGELU), NULL, f->f16_64, 8, NULL, cb, ud))
CASE (lt_gelu_aux_small, atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0, f->f32_64c, 8, EPI (GELU_AUX_BIAS), f->f32_8, f->f32_8, 8, NULL, cb, ud))
CASE (lt_compute_type, {
  atomr_blas_lt_actor_set_compute_type (f->lt, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f16_64, 8, f->f16_64b, 8, 0, f->f32_64c, 8, EPI (NONE), NULL, NULL, 0, NULL, cb, ud);
})

#define INVALID ATOMR_ERROR_INVALID_ARGUMENT
static const Case cases[] = {
  { "/blas/gemm/transa", gemm_transa, INVALID, "gemm: transa is 7, not a valid AtomrTranspose" },
  { "/blas/gemm/m-negative", gemm_m_negative, INVALID, "gemm: m is -1" },
  { "/blas/gemm/k-too-large", gemm_k_huge, INVALID, "gemm: k is 2147483648; the library takes at most" },
  { "/blas/gemm/dtype", gemm_dtype, INVALID, "gemm: A has dtype i32; supported: f32, f64, c64, c128, f16, bf16" },
  { "/blas/gemm/b-dtype", gemm_b_dtype, INVALID, "gemm: A has dtype f32 but B has dtype f64" },
  { "/blas/gemm/c-dtype", gemm_c_dtype, INVALID, "gemm: A has dtype f32 but C has dtype f64" },
  { "/blas/gemm/lda", gemm_lda, INVALID, "gemm: leading dimension lda is 3; it must be at least 8" },
  { "/blas/gemm/a-small", gemm_a_small, INVALID, "gemm: A holds 4 elements but 8 × 8 with lda = 8 need 64" },
  { "/blas/gemm/b-transposed-small", gemm_b_transposed_small, INVALID, "gemm: B holds 64 elements but 8 × 8 with ldb = 10 need 78" },
  { "/blas/gemm/ldc", gemm_ldc, INVALID, "gemm: leading dimension ldc is 7" },
  { "/blas/gemm/a-null", gemm_a_null, INVALID, "gemm: A must be an AtomrBuffer" },
  { "/blas/gemm/c-alias", gemm_c_alias, INVALID, "gemm: B and C must be different buffers" },
  { "/blas/gemm-strided-batched/c-alias", sb_c_alias, INVALID, "gemm_strided_batched: A and C must be different buffers" },
  { "/blas/syrk/alias", syrk_alias, INVALID, "syrk: A and C must be different buffers" },
  { "/blas/gemv/a-alias", gemv_a_alias, INVALID, "gemv: A and y must be different buffers" },
  { "/blas/gemm-ex/f16-compute", gemm_ex_f16_compute, INVALID, "gemm_ex: compute_type f16 with A f32 and C f32" },
  { "/blas/gemm-ex/tf32-needs-f32", gemm_ex_tf32_f16, INVALID, "compute_type f32-fast-tf32 with A f16" },
  { "/blas/gemm-ex/c-dtype", gemm_ex_c_dtype, INVALID, "C must have the dtype of A" },
  { "/blas/gemm-ex/complex", gemm_ex_complex, INVALID, "gemm_ex: A has dtype c64; supported: f16, bf16, f32, f64" },
  { "/blas/gemm-ex/compute-invalid", gemm_ex_compute_invalid, INVALID, "compute_type (invalid)" },
  { "/blas/gemm-strided-batched/batch-zero", sb_batch_zero, INVALID, "gemm_strided_batched: batch_count is 0" },
  { "/blas/gemm-strided-batched/stride-negative", sb_stride_negative, INVALID, "the stride of A is -1" },
  { "/blas/gemm-strided-batched/c-overlap", sb_c_overlap, INVALID, "stride_c is 10; the C matrices would overlap" },
  { "/blas/gemm-strided-batched/a-small", sb_a_small, INVALID, "gemm_strided_batched: A holds 64 elements but 5 matrices of 4 × 4 with lda = 4 and stride 16 need 80" },
  { "/blas/syrk/uplo", syrk_uplo, INVALID, "syrk: uplo is 5, not a valid AtomrFillMode" },
  { "/blas/syrk/complex-conjugate", syrk_complex_c, INVALID, "syrk: trans is C" },
  { "/blas/syrk/c-small", syrk_c_small, INVALID, "syrk: C holds 8 elements but 8 × 8 with ldc = 8 need 64" },
  { "/blas/syrk/dtype", syrk_dtype_f16, INVALID, "syrk: A has dtype f16; supported: f32, f64, c64, c128" },
  { "/blas/trsm/side", trsm_side, INVALID, "trsm: side is 3, not a valid AtomrSide" },
  { "/blas/trsm/diag", trsm_diag, INVALID, "trsm: diag is 9, not a valid AtomrDiag" },
  { "/blas/trsm/same-buffer", trsm_same, INVALID, "trsm: A and B must be different buffers" },
  { "/blas/trsm/right-a-small", trsm_right_a_small, INVALID, "trsm: A holds 64 elements but 16 × 16 with lda = 16 need 256" },
  { "/blas/geam/in-place-transposed", geam_inplace_transposed, INVALID, "geam: C is A" },
  { "/blas/geam/ldb", geam_ldb, INVALID, "geam: leading dimension ldb is 2" },
  { "/blas/gemv/incx-zero", gemv_incx_zero, INVALID, "gemv: increment incx is 0" },
  { "/blas/gemv/x-small-transposed", gemv_x_small_transposed, INVALID, "gemv: x holds 8 elements but the arguments need 16" },
  { "/blas/gemv/same-buffer", gemv_same, INVALID, "gemv: x and y must be different buffers" },
  { "/blas/gemv/trans", gemv_trans, INVALID, "gemv: trans is -1" },
  { "/blas/ger/alias", ger_alias, INVALID, "ger: x and A must be different buffers" },
  { "/blas/ger/y-small", ger_y_small, INVALID, "ger: y holds 4 elements but the arguments need 8" },
  { "/blas/ger/lda", ger_lda, INVALID, "ger: leading dimension lda is 4" },
  { "/blas/axpy/y-null", axpy_y_null, INVALID, "axpy: y must be an AtomrBuffer" },
  { "/blas/axpy/dtype", axpy_dtype, INVALID, "axpy: x has dtype f32 but y has dtype f64" },
  { "/blas/axpy/n-negative", axpy_n_negative, INVALID, "axpy: n is -3" },
  { "/blas/axpy/same-buffer", axpy_same, INVALID, "axpy: x and y must be different buffers" },
  { "/blas/scal/dtype", scal_dtype, INVALID, "scal: x has dtype u8; supported: f32, f64, c64, c128" },
  { "/blas/scal/x-small", scal_x_small, INVALID, "scal: x holds 8 elements but the arguments need 15" },
  { "/blas/copy/same-buffer", copy_same, INVALID, "copy: x and y must be different buffers" },
  { "/blas/copy/incy-too-large", copy_incy_huge, INVALID, "copy: incy is 4294967296; the library takes at most" },
  { "/blas/swap/y-small", swap_y_small, INVALID, "swap: y holds 4 elements but the arguments need 8" },
  { "/blas/rot/incy", rot_incy, INVALID, "rot: increment incy is 0; it must not be 0" },
  { "/blas/axpy/negative-increments", axpy_negative_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuBLAS: axpy needs a CUDA device" },
  { "/blas/axpy/negative-increment-short", axpy_negative_short, INVALID, "axpy: x holds 8 elements but the arguments need 15" },
  { "/blas/copy/negative-increment-huge", copy_negative_huge, INVALID, "copy: incy is -4294967296; the library takes at least" },
  { "/blas/scal/negative-increment", scal_negative, INVALID, "scal: increment incx is -1; it must be at least 1" },
  { "/blas/dot/half", dot_half_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuBLAS: dot needs a CUDA device" },
  { "/blas/nrm2/half", nrm2_half_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuBLAS: nrm2 needs a CUDA device" },
  { "/blas/asum/half", asum_half, INVALID, "asum: x has dtype f16; supported: f32, f64, c64, c128" },
  { "/blas/dot/dtype", dot_dtype, INVALID, "dot: x has dtype c64 but y has dtype f32" },
  { "/blas/nrm2/x-small", nrm2_x_small, INVALID, "nrm2: x holds 8 elements but the arguments need 9" },
  { "/blas/asum/incx", asum_incx, INVALID, "asum: increment incx is 0" },
  { "/blas/iamax/null", iamax_null, INVALID, "iamax: x must be an AtomrBuffer" },
  { "/blas/iamin/dtype", iamin_dtype, INVALID, "iamin: x has dtype i32" },
  { "/blaslt/matmul/dtype", lt_dtype, INVALID, "matmul: A has dtype f64; supported: f32, f16, bf16, f8e4m3, f8e5m2" },
  { "/blaslt/fp8/unscaled", lt_fp8_unscaled, INVALID, "matmul: A is f8e4m3 and B is f8e4m3; fp8 operands go through atomr_blas_lt_actor_matmul_scaled_async()" },
  { "/blaslt/fp8/not-fp8", lt_scaled_not_fp8, INVALID, "matmul_scaled: A is f32 and B is f32; the scaled matmul takes fp8 operands" },
  { "/blaslt/fp8/e5m2-pair", lt_fp8_e5m2_pair, ATOMR_ERROR_NOT_SUPPORTED, "matmul_scaled: cuBLASLt has no E5M2 × E5M2 matmul" },
  { "/blaslt/fp8/output-dtype", lt_fp8_out, INVALID, "matmul_scaled: C has dtype i32; supported: f16, bf16, f32" },
  { "/blaslt/fp8/scale-dtype", lt_fp8_scale_dtype, INVALID, "matmul_scaled: scale_a has dtype f64, expected f32" },
  { "/blaslt/fp8/aux", lt_fp8_aux, INVALID, "needs an aux matrix, which the fp8 matmul does not take" },
  { "/blaslt/fp8/mixed", lt_fp8_mixed, INVALID, "matmul_scaled: A is f8e4m3 and B is f32; both must be fp8" },
  { "/blaslt/matmul/c-dtype", lt_c_dtype, INVALID, "matmul: C has dtype f16 with A f32" },
  { "/blaslt/matmul/k-zero", lt_k_zero, INVALID, "matmul: k is 0; it must be positive" },
  { "/blaslt/matmul/epilogue", lt_epilogue, INVALID, "matmul: epilogue is 99, not a valid AtomrBlasLtEpilogue" },
  { "/blaslt/matmul/alias", lt_alias, INVALID, "matmul: output C and input A are the same buffer" },
  { "/blaslt/matmul/bgrada-bias-is-a", lt_bgrada_bias_a, INVALID, "matmul: output bias and input A are the same buffer" },
  { "/blaslt/matmul/bgradb-bias-is-b", lt_bgradb_bias_b, INVALID, "matmul: output bias and input B are the same buffer" },
  { "/blaslt/matmul/relu-aux-is-a", lt_aux_a, INVALID, "matmul: output aux and input A are the same buffer" },
  { "/blaslt/matmul/gelu-aux-is-bias", lt_aux_bias, INVALID, "matmul: output aux and input bias are the same buffer" },
  { "/blaslt/matmul/dgelu-bias-is-aux", lt_dgelu_bias_aux, INVALID, "matmul: output bias and input aux are the same buffer" },
  { "/blaslt/batched/batch-zero", lt_batch_zero, INVALID, "matmul: batch_count is 0; it must be between 1 and" },
  { "/blaslt/batched/a-small", lt_batch_a_small, INVALID, "matmul: A holds 64 elements but 5 matrices of 4 × 4 with lda = 4 and stride 16 need 80" },
  { "/blaslt/batched/c-overlap", lt_batch_c_overlap, INVALID, "stride_c is 8; the 2 D matrices would overlap below ldc × n = 16" },
  { "/blaslt/batched/stride-overflow", lt_batch_stride_overflow, INVALID, "matmul: the batch extent (stride × (batch - 1)) overflows" },
  { "/blaslt/batched/epilogue", lt_batch_epilogue, INVALID, "epilogue bgrada writes an aux matrix or a bias gradient" },
  { "/blaslt/batched/alias", lt_batch_alias, INVALID, "output C and input B are the same buffer" },
  { "/blaslt/batched/host-device", lt_batch_ok, ATOMR_ERROR_NOT_SUPPORTED, "cuBLASLt: matmul needs a CUDA device" },
  { "/blaslt/fp8/bias-is-scale", lt_fp8_bias_scale, INVALID, "matmul_scaled: output C and input scale_a are the same buffer" },
  { "/blaslt/fp8/f32-bias-dtype", lt_fp8_f32_bias_dtype, INVALID, "matmul_scaled: bias has dtype f32, expected bf16" },
  { "/blaslt/matmul/lda", lt_lda, INVALID, "matmul: leading dimension lda is 5; it must be at least 8" },
  { "/blaslt/matmul/bias-unused", lt_bias_unused, INVALID, "matmul: bias is given, but epilogue relu takes none" },
  { "/blaslt/matmul/bias-missing", lt_bias_missing, INVALID, "matmul: bias must be an AtomrBuffer" },
  { "/blaslt/matmul/bias-short", lt_bias_short, INVALID, "matmul: bias holds 4 elements but the arguments need 8" },
  { "/blaslt/matmul/bias-dtype", lt_bias_dtype, INVALID, "matmul: bias has dtype f64, expected f32" },
  { "/blaslt/matmul/bgradb-short", lt_bgradb_short, INVALID, "matmul: bias holds 8 elements but the arguments need 16" },
  { "/blaslt/matmul/aux-missing", lt_aux_missing, INVALID, "matmul: aux must be an AtomrBuffer" },
  { "/blaslt/matmul/aux-unused", lt_aux_unused, INVALID, "matmul: aux is given, but epilogue gelu takes none" },
  { "/blaslt/matmul/relu-aux-ld", lt_relu_aux_ld, INVALID, "matmul: ld_aux is 64; the ReLU bit mask needs a multiple of 128" },
  { "/blaslt/matmul/relu-aux-dtype", lt_relu_aux_dtype, INVALID, "matmul: aux has dtype f32, expected u8" },
  { "/blaslt/matmul/relu-aux-small", lt_relu_aux_small, INVALID, "matmul: aux holds 4096 elements but the arguments need 8192" },
  { "/blaslt/matmul/gelu-aux-ld", lt_gelu_aux_ld, INVALID, "matmul: ld_aux is 12; the GELU input needs a multiple of 8" },
  { "/blaslt/matmul/gelu-aux-dtype", lt_gelu_aux_dtype, INVALID, "matmul: aux has dtype f16, expected f32" },
  { "/blaslt/matmul/gelu-aux-small", lt_gelu_aux_small, INVALID, "matmul: aux holds 8 elements but 8 × 8 with ld_aux = 8 need 64" },
  { "/blaslt/matmul/compute-type", lt_compute_type, INVALID, "the fast modes take f32 operands" },
};

static void
test_case (Fixture *f, gconstpointer data)
{
  const Case *c = data;
  GAsyncResult *result = NULL;
  g_autoptr(GError) error = NULL;

  c->func (f, store_result, &result);
  error = wait_error (&result);
  g_assert_error (error, ATOMR_ERROR, c->code);
  if (strstr (error->message, c->message) == NULL)
    g_error ("message \"%s\" does not contain \"%s\"", error->message, c->message);
  /* Refused before the stream: nothing was enqueued. */
  g_assert_cmpuint (atomr_host_stream_get_n_pending (atomr_actor_get_stream (ATOMR_ACTOR (f->blas))), ==, 0);
  g_assert_cmpuint (atomr_host_stream_get_n_pending (atomr_actor_get_stream (ATOMR_ACTOR (f->lt))), ==, 0);
  g_assert_cmpuint (atomr_actor_get_n_completed (ATOMR_ACTOR (f->blas)), ==, 0);
}

/* A valid request passes validation and is refused at enqueue: the host
 * device has no cuBLAS.  The handle was never created (no CUDA call). */
static void
test_host_not_supported (Fixture *f, gconstpointer data)
{
  GAsyncResult *result = NULL;
  g_autoptr(GError) e1 = NULL;
  g_autoptr(GError) e2 = NULL;
  g_autoptr(GError) e3 = NULL;
  gdouble value = -1;

  atomr_blas_actor_gemm_async (f->blas, N, T, 8, 8, 8, 1, 0, f->f32_64, 8, f->f32_64b, 8, 1, 0,
                               f->f32_64c, 8, NULL, store_result, &result);
  e1 = wait_error (&result);
  g_assert_error (e1, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (e1->message, "cuBLAS: gemm needs a CUDA device"));

  atomr_blas_actor_nrm2_async (f->blas, 8, f->f32_8, 1, NULL, store_result, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (atomr_blas_actor_nrm2_finish (f->blas, result, &value, &e2));
  g_clear_object (&result);
  g_assert_error (e2, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_cmpfloat (value, ==, -1);

  atomr_blas_lt_actor_matmul_async (f->lt, N, N, 8, 8, 8, 1, f->f32_64, 8, f->f32_64b, 8, 0,
                                    f->f32_64c, 8, EPI (BIAS), f->f32_8, NULL, 0, NULL,
                                    store_result, &result);
  e3 = wait_error (&result);
  g_assert_error (e3, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (e3->message, "cuBLASLt: matmul needs a CUDA device"));
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_misses (f->lt), ==, 0);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_hits (f->lt), ==, 0);
}

static void
count_notify (GObject *object, GParamSpec *pspec, gpointer user_data)
{
  (*(guint *) user_data)++;
}

static void
test_properties (Fixture *f, gconstpointer data)
{
  guint notified = 0;
  AtomrBlasMathMode mode;
  AtomrBlasComputeType compute;
  g_autofree gchar *library = NULL;

  g_assert_cmpstr (atomr_actor_get_library (ATOMR_ACTOR (f->blas)), ==, "cublas");
  g_assert_cmpstr (atomr_actor_get_library (ATOMR_ACTOR (f->lt)), ==, "cublaslt");

  g_signal_connect (f->blas, "notify::math-mode", G_CALLBACK (count_notify), &notified);
  g_assert_cmpint (atomr_blas_actor_get_math_mode (f->blas), ==, ATOMR_BLAS_MATH_DEFAULT);
  atomr_blas_actor_set_math_mode (f->blas, ATOMR_BLAS_MATH_TF32);
  atomr_blas_actor_set_math_mode (f->blas, ATOMR_BLAS_MATH_TF32);
  g_object_get (f->blas, "math-mode", &mode, NULL);
  g_assert_cmpint (mode, ==, ATOMR_BLAS_MATH_TF32);
  g_assert_cmpuint (notified, ==, 1);
  g_object_set (f->blas, "math-mode", ATOMR_BLAS_MATH_PEDANTIC, NULL);
  g_assert_cmpuint (notified, ==, 2);
  g_signal_handlers_disconnect_by_func (f->blas, count_notify, &notified);

  notified = 0;
  g_signal_connect (f->lt, "notify::compute-type", G_CALLBACK (count_notify), &notified);
  atomr_blas_lt_actor_set_compute_type (f->lt, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  g_object_get (f->lt, "compute-type", &compute, NULL);
  g_assert_cmpint (compute, ==, ATOMR_BLAS_COMPUTE_F32_FAST_TF32);
  g_assert_cmpuint (notified, ==, 1);
  g_signal_handlers_disconnect_by_func (f->lt, count_notify, &notified);
  g_assert_cmpuint (atomr_blas_lt_actor_get_workspace_size (f->lt), ==, 32u << 20);
  g_assert_cmpuint (atomr_blas_lt_actor_get_cache_size (f->lt), ==, 0);

  /* issue 11: a bounded heuristic cache and a user workspace */
  {
    guint capacity = 0;
    guint64 evictions = 1;
    g_autoptr(AtomrBuffer) ws = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(AtomrDevice) other = atomr_device_new_host ();
    g_autoptr(AtomrBuffer) foreign = atomr_buffer_new (other, ATOMR_DTYPE_U8, 8192, &error);

    notified = 0;
    g_signal_connect (f->lt, "notify", G_CALLBACK (count_notify), &notified);
    g_object_get (f->lt, "cache-capacity", &capacity, "cache-evictions", &evictions, NULL);
    g_assert_cmpuint (capacity, ==, 128);
    g_assert_cmpuint (evictions, ==, 0);
    atomr_blas_lt_actor_set_cache_capacity (f->lt, 2);
    atomr_blas_lt_actor_set_cache_capacity (f->lt, 2);
    g_assert_cmpuint (atomr_blas_lt_actor_get_cache_capacity (f->lt), ==, 2);
    atomr_blas_lt_actor_set_cache_capacity (f->lt, 0);    /* at least 1 */
    g_assert_cmpuint (atomr_blas_lt_actor_get_cache_capacity (f->lt), ==, 1);
    g_assert_cmpuint (notified, ==, 2);

    g_assert_false (atomr_blas_lt_actor_set_workspace (f->lt, f->f32_4, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "holds 16 bytes; give at least 4096"));
    g_clear_error (&error);
    g_assert_false (atomr_blas_lt_actor_set_workspace (f->lt, foreign, &error));
    g_assert_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull (strstr (error->message, "not to the actor's device"));
    g_clear_error (&error);
    g_assert_true (atomr_blas_lt_actor_set_workspace (f->lt, f->u8_4096, &error));
    g_assert_no_error (error);
    g_assert_cmpuint (notified, ==, 3);
    g_assert_cmpuint (atomr_blas_lt_actor_get_workspace_size (f->lt), ==, 4096);
    g_object_get (f->lt, "workspace", &ws, NULL);
    g_assert_true (ws == f->u8_4096);
    g_assert_true (atomr_blas_lt_actor_set_workspace (f->lt, NULL, &error));
    g_assert_cmpuint (notified, ==, 4);
    g_signal_handlers_disconnect_by_func (f->lt, count_notify, &notified);
  }

  g_object_get (f->blas, "library", &library, NULL);
  g_assert_cmpstr (library, ==, "cublas");
  g_assert_cmpstr (g_enum_get_value (g_type_class_peek (ATOMR_TYPE_BLAS_MATH_MODE),
                                     ATOMR_BLAS_MATH_TF32)->value_nick, ==, "tf32");
  g_assert_true (G_TYPE_IS_ENUM (ATOMR_TYPE_TRANSPOSE));
  g_assert_true (G_TYPE_IS_ENUM (ATOMR_TYPE_BLAS_LT_EPILOGUE));
}

/* Requests that fail one after the other on the same buffers (refused here:
 * no cuBLAS) are never enqueued, and their hazard slots stand for what they
 * followed.  Each stand-in used to copy every fence of every slot it
 * followed, duplicates and all: with a dot (reads x, y) and an axpy (reads
 * x, y; writes y) per round, the list of y's last writer doubled at every
 * round, until the fences' reference counts overflowed (saturation, then
 * a count that wraps and frees a live fence: heap corruption).  A stand-in
 * holds each pending fence once, and none that already passed. */
static void
test_failed_chain (Fixture *f, gconstpointer data)
{
  g_autoptr(AtomrDevice) mock = atomr_device_new_mock ();
  g_autoptr(GError) error = NULL;
  g_autoptr(AtomrBlasActor) blas = atomr_blas_actor_new (mock, &error);
  g_autoptr(AtomrBuffer) x = NULL;
  g_autoptr(AtomrBuffer) y = NULL;
  g_autoptr(GBytes) zeros = g_bytes_new_take (g_malloc0 (64 * sizeof (gfloat)), 64 * sizeof (gfloat));
  AtomrHazards *hy;

  g_assert_no_error (error);
  x = atomr_buffer_new (mock, ATOMR_DTYPE_F32, 64, &error);
  g_assert_no_error (error);
  y = atomr_buffer_new (mock, ATOMR_DTYPE_F32, 64, &error);
  g_assert_no_error (error);
  /* a real fence (the upload's) at the root of the chain */
  g_assert_true (atomr_buffer_upload_sync (y, zeros, NULL, &error));
  g_assert_no_error (error);

  for (guint round = 0; round < 48; round++)
    {
      GAsyncResult *result = NULL;
      g_autoptr(GError) e = NULL;

      /* dot with negative increments, as on the GPU, then an axpy */
      atomr_blas_actor_dot_async (blas, 32, x, -2, y, 1, FALSE, NULL, NULL, NULL);
      atomr_blas_actor_axpy_async (blas, 32, 3, 0, x, 2, y, -1, NULL, store_result, &result);
      e = wait_error (&result);
      /* refused, then not run: it reads the output of the one refused */
      g_assert_true (g_error_matches (e, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED) ||
                     g_error_matches (e, ATOMR_ERROR, ATOMR_ERROR_DEPENDENCY_FAILED));

      hy = atomr_buffer_get_hazards (y);
      g_assert_nonnull (hy->last_writer);
      g_assert_cmpuint (atomr_slot_get_n_fences (hy->last_writer), <=, 1);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    g_test_add (cases[i].path, Fixture, &cases[i], fixture_setup, test_case, fixture_teardown);
  g_test_add ("/blas/host-device/not-supported", Fixture, NULL, fixture_setup,
              test_host_not_supported, fixture_teardown);
  g_test_add ("/blas/properties", Fixture, NULL, fixture_setup, test_properties, fixture_teardown);
  g_test_add ("/blas/host-device/failed-chain", Fixture, NULL, fixture_setup, test_failed_chain,
              fixture_teardown);
  return g_test_run ();
}
