/* atomr-blas-actor.h — cuBLAS as an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "core/atomr-actor.h"
#include "core/atomr-tensor.h"

G_BEGIN_DECLS

/**
 * AtomrTranspose:
 * @ATOMR_TRANSPOSE_N: use the matrix as stored.
 * @ATOMR_TRANSPOSE_T: use its transpose.
 * @ATOMR_TRANSPOSE_C: use its conjugate transpose (the transpose for real
 *   dtypes).
 *
 * How a BLAS operation reads a column-major matrix operand.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_TRANSPOSE_N,
  ATOMR_TRANSPOSE_T,
  ATOMR_TRANSPOSE_C,
} AtomrTranspose;

/**
 * AtomrFillMode:
 * @ATOMR_FILL_MODE_LOWER: the lower triangle is referenced.
 * @ATOMR_FILL_MODE_UPPER: the upper triangle is referenced.
 *
 * Which triangle of a symmetric or triangular matrix an operation uses.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_FILL_MODE_LOWER,
  ATOMR_FILL_MODE_UPPER,
} AtomrFillMode;

/**
 * AtomrSide:
 * @ATOMR_SIDE_LEFT: the triangular matrix multiplies from the left.
 * @ATOMR_SIDE_RIGHT: the triangular matrix multiplies from the right.
 *
 * On which side of the unknown a triangular matrix stands.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_SIDE_LEFT,
  ATOMR_SIDE_RIGHT,
} AtomrSide;

/**
 * AtomrDiag:
 * @ATOMR_DIAG_NON_UNIT: the diagonal is read from the matrix.
 * @ATOMR_DIAG_UNIT: the diagonal is taken as all ones and not read.
 *
 * Whether a triangular matrix has a unit diagonal.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_DIAG_NON_UNIT,
  ATOMR_DIAG_UNIT,
} AtomrDiag;

/**
 * AtomrBlasComputeType:
 * @ATOMR_BLAS_COMPUTE_DEFAULT: the natural precision of the operands
 *   (f32 for f16, bf16 and f32 operands; f64 for f64 operands).
 * @ATOMR_BLAS_COMPUTE_F32: accumulate in f32.
 * @ATOMR_BLAS_COMPUTE_F32_PEDANTIC: accumulate in f32, no reduced-precision
 *   shortcuts at all.
 * @ATOMR_BLAS_COMPUTE_F32_FAST_TF32: f32 accumulation with TF32 tensor-core
 *   products (about 10 mantissa bits per product).
 * @ATOMR_BLAS_COMPUTE_F32_FAST_F16: f32 accumulation, inputs rounded to f16.
 * @ATOMR_BLAS_COMPUTE_F32_FAST_BF16: f32 accumulation, inputs rounded to
 *   bf16.
 * @ATOMR_BLAS_COMPUTE_F16: accumulate in f16 (f16 operands only).
 * @ATOMR_BLAS_COMPUTE_F64: accumulate in f64 (f64 operands only).
 *
 * The precision in which a mixed-precision GEMM accumulates.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_BLAS_COMPUTE_DEFAULT,
  ATOMR_BLAS_COMPUTE_F32,
  ATOMR_BLAS_COMPUTE_F32_PEDANTIC,
  ATOMR_BLAS_COMPUTE_F32_FAST_TF32,
  ATOMR_BLAS_COMPUTE_F32_FAST_F16,
  ATOMR_BLAS_COMPUTE_F32_FAST_BF16,
  ATOMR_BLAS_COMPUTE_F16,
  ATOMR_BLAS_COMPUTE_F64,
} AtomrBlasComputeType;

/**
 * AtomrBlasMathMode:
 * @ATOMR_BLAS_MATH_DEFAULT: cuBLAS's default: full f32 precision for f32
 *   routines, tensor cores where they do not lose precision.
 * @ATOMR_BLAS_MATH_TF32: let f32 routines use TF32 tensor cores.
 * @ATOMR_BLAS_MATH_PEDANTIC: the reference precision everywhere.
 *
 * The math mode of an [class@Atomr.BlasActor]'s cuBLAS handle.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_BLAS_MATH_DEFAULT,
  ATOMR_BLAS_MATH_TF32,
  ATOMR_BLAS_MATH_PEDANTIC,
} AtomrBlasMathMode;

/* The enums register their GTypes in atomr-blas-actor.c (G_DEFINE_ENUM_TYPE). */
ATOMR_AVAILABLE_IN_ALL
GType atomr_transpose_get_type          (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_fill_mode_get_type          (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_side_get_type               (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_diag_get_type               (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_blas_compute_type_get_type  (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_blas_math_mode_get_type     (void) G_GNUC_CONST;
#define ATOMR_TYPE_TRANSPOSE          (atomr_transpose_get_type ())
#define ATOMR_TYPE_FILL_MODE          (atomr_fill_mode_get_type ())
#define ATOMR_TYPE_SIDE               (atomr_side_get_type ())
#define ATOMR_TYPE_DIAG               (atomr_diag_get_type ())
#define ATOMR_TYPE_BLAS_COMPUTE_TYPE  (atomr_blas_compute_type_get_type ())
#define ATOMR_TYPE_BLAS_MATH_MODE     (atomr_blas_math_mode_get_type ())

#define ATOMR_TYPE_BLAS_ACTOR (atomr_blas_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrBlasActor, atomr_blas_actor, ATOMR, BLAS_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrBlasActor   *atomr_blas_actor_new            (AtomrDevice          *device,
                                                   GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrBlasMathMode atomr_blas_actor_get_math_mode  (AtomrBlasActor       *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_blas_actor_set_math_mode  (AtomrBlasActor       *self,
                                                   AtomrBlasMathMode     mode);

/* Level 3 */
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemm_async        (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_sync         (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             gdouble              beta,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             GCancellable        *cancellable,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemm_ex_async     (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             gdouble              beta,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             AtomrBlasComputeType compute_type,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_ex_finish    (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemm_strided_batched_async (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             gint64               stride_a,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             gint64               stride_b,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             gint64               stride_c,
                                             gint                 batch_count,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_strided_batched_finish (AtomrBlasActor *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_syrk_async        (AtomrBlasActor      *self,
                                             AtomrFillMode        uplo,
                                             AtomrTranspose       trans,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_syrk_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_trsm_async        (AtomrBlasActor      *self,
                                             AtomrSide            side,
                                             AtomrFillMode        uplo,
                                             AtomrTranspose       trans,
                                             AtomrDiag            diag,
                                             gint64               m,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_trsm_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_geam_async        (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_geam_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);

/* Level 2 */
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemv_async        (AtomrBlasActor      *self,
                                             AtomrTranspose       trans,
                                             gint64               m,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemv_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_ger_async         (AtomrBlasActor      *self,
                                             gint64               m,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             gboolean             conjugate,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_ger_finish        (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);

/* Level 1 */
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_axpy_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_axpy_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_scal_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_scal_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_copy_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_copy_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_swap_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_swap_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_rot_async         (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             gdouble              c,
                                             gdouble              s,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_rot_finish        (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_dot_async         (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             AtomrBuffer         *y,
                                             gint64               incy,
                                             gboolean             conjugate,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_dot_finish        (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             gdouble             *real,
                                             gdouble             *imag,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_nrm2_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_nrm2_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             gdouble             *norm,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_asum_async        (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_asum_finish       (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             gdouble             *sum,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_iamax_async       (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_iamax_finish      (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             gint64              *index,
                                             GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_iamin_async       (AtomrBlasActor      *self,
                                             gint64               n,
                                             AtomrBuffer         *x,
                                             gint64               incx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_iamin_finish      (AtomrBlasActor      *self,
                                             GAsyncResult        *result,
                                             gint64              *index,
                                             GError             **error);

/* Views (AtomrTensor): layouts from strides, sub-matrices without copies. */
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemm_tensor_async  (AtomrBlasActor      *self,
                                              gdouble              alpha,
                                              gdouble              alpha_imag,
                                              AtomrTensor         *a,
                                              AtomrTensor         *b,
                                              gdouble              beta,
                                              gdouble              beta_imag,
                                              AtomrTensor         *c,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_tensor_finish (AtomrBlasActor      *self,
                                              GAsyncResult        *result,
                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemm_tensor_sync   (AtomrBlasActor      *self,
                                              gdouble              alpha,
                                              AtomrTensor         *a,
                                              AtomrTensor         *b,
                                              gdouble              beta,
                                              AtomrTensor         *c,
                                              GCancellable        *cancellable,
                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_gemv_tensor_async  (AtomrBlasActor      *self,
                                              gdouble              alpha,
                                              gdouble              alpha_imag,
                                              AtomrTensor         *a,
                                              AtomrTensor         *x,
                                              gdouble              beta,
                                              gdouble              beta_imag,
                                              AtomrTensor         *y,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_gemv_tensor_finish (AtomrBlasActor      *self,
                                              GAsyncResult        *result,
                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_actor_axpy_tensor_async  (AtomrBlasActor      *self,
                                              gdouble              alpha,
                                              gdouble              alpha_imag,
                                              AtomrTensor         *x,
                                              AtomrTensor         *y,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_actor_axpy_tensor_finish (AtomrBlasActor      *self,
                                              GAsyncResult        *result,
                                              GError             **error);

G_END_DECLS
