/* atomr-blas-lt-actor.h — cuBLASLt matmul with fused epilogues, as an actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "actors/blas/atomr-blas-actor.h"
#include "core/atomr-actor.h"

G_BEGIN_DECLS

/**
 * AtomrBlasLtEpilogue:
 * @ATOMR_BLAS_LT_EPILOGUE_NONE: D = alpha·op(A)·op(B) + beta·C.
 * @ATOMR_BLAS_LT_EPILOGUE_RELU: ReLU of the product.
 * @ATOMR_BLAS_LT_EPILOGUE_BIAS: add the bias vector (m elements) to every
 *   column.
 * @ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS: add the bias, then ReLU.
 * @ATOMR_BLAS_LT_EPILOGUE_RELU_AUX: ReLU, storing the ReLU bit mask in aux
 *   (u8 buffer, 1 bit per element of D, ld_aux a multiple of 128 bits).
 * @ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS: bias, ReLU, bit mask in aux.
 * @ATOMR_BLAS_LT_EPILOGUE_GELU: GELU (tanh approximation) of the product.
 * @ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS: add the bias, then GELU.
 * @ATOMR_BLAS_LT_EPILOGUE_GELU_AUX: GELU, storing its input in aux (the
 *   dtype of C, ld_aux a multiple of 8).
 * @ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS: bias, GELU, GELU input in aux.
 * @ATOMR_BLAS_LT_EPILOGUE_DRELU: backward ReLU: the product times the ReLU
 *   derivative given by the bit mask in aux.
 * @ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD: backward ReLU and the bias gradient
 *   (row sums of D, m elements) into bias.
 * @ATOMR_BLAS_LT_EPILOGUE_DGELU: backward GELU: the product times GELU'
 *   of the GELU input in aux.
 * @ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD: backward GELU and the bias gradient
 *   into bias.
 * @ATOMR_BLAS_LT_EPILOGUE_BGRADA: the product, plus the bias gradient of
 *   A (sums of op(A) over k, m elements) into bias.
 * @ATOMR_BLAS_LT_EPILOGUE_BGRADB: the product, plus the bias gradient of
 *   B (sums of op(B) over k, n elements) into bias.
 *
 * What cuBLASLt fuses into the matmul.
 *
 * Since: 0.1
 */
typedef enum {
  ATOMR_BLAS_LT_EPILOGUE_NONE,
  ATOMR_BLAS_LT_EPILOGUE_RELU,
  ATOMR_BLAS_LT_EPILOGUE_BIAS,
  ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS,
  ATOMR_BLAS_LT_EPILOGUE_RELU_AUX,
  ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS,
  ATOMR_BLAS_LT_EPILOGUE_GELU,
  ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS,
  ATOMR_BLAS_LT_EPILOGUE_GELU_AUX,
  ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS,
  ATOMR_BLAS_LT_EPILOGUE_DRELU,
  ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD,
  ATOMR_BLAS_LT_EPILOGUE_DGELU,
  ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD,
  ATOMR_BLAS_LT_EPILOGUE_BGRADA,
  ATOMR_BLAS_LT_EPILOGUE_BGRADB,
} AtomrBlasLtEpilogue;

ATOMR_AVAILABLE_IN_ALL
GType atomr_blas_lt_epilogue_get_type (void) G_GNUC_CONST;
#define ATOMR_TYPE_BLAS_LT_EPILOGUE (atomr_blas_lt_epilogue_get_type ())

#define ATOMR_TYPE_BLAS_LT_ACTOR (atomr_blas_lt_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrBlasLtActor, atomr_blas_lt_actor, ATOMR, BLAS_LT_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrBlasLtActor    *atomr_blas_lt_actor_new                (AtomrDevice          *device,
                                                             GError              **error);
ATOMR_AVAILABLE_IN_ALL
AtomrBlasComputeType atomr_blas_lt_actor_get_compute_type   (AtomrBlasLtActor     *self);
ATOMR_AVAILABLE_IN_ALL
void                 atomr_blas_lt_actor_set_compute_type   (AtomrBlasLtActor     *self,
                                                             AtomrBlasComputeType  compute_type);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_blas_lt_actor_get_cache_hits     (AtomrBlasLtActor     *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_blas_lt_actor_get_cache_misses   (AtomrBlasLtActor     *self);
ATOMR_AVAILABLE_IN_ALL
guint                atomr_blas_lt_actor_get_cache_size     (AtomrBlasLtActor     *self);
ATOMR_AVAILABLE_IN_ALL
guint64              atomr_blas_lt_actor_get_workspace_size (AtomrBlasLtActor     *self);

ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_lt_actor_matmul_async  (AtomrBlasLtActor    *self,
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
                                            AtomrBlasLtEpilogue  epilogue,
                                            AtomrBuffer         *bias,
                                            AtomrBuffer         *aux,
                                            gint64               ld_aux,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_lt_actor_matmul_finish (AtomrBlasLtActor    *self,
                                            GAsyncResult        *result,
                                            GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_lt_actor_matmul_scaled_async  (AtomrBlasLtActor    *self,
                                                   gint64               m,
                                                   gint64               n,
                                                   gint64               k,
                                                   gdouble              alpha,
                                                   AtomrBuffer         *a,
                                                   gint64               lda,
                                                   AtomrBuffer         *scale_a,
                                                   AtomrBuffer         *b,
                                                   gint64               ldb,
                                                   AtomrBuffer         *scale_b,
                                                   gdouble              beta,
                                                   AtomrBuffer         *c,
                                                   gint64               ldc,
                                                   AtomrBlasLtEpilogue  epilogue,
                                                   AtomrBuffer         *bias,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_lt_actor_matmul_scaled_finish (AtomrBlasLtActor    *self,
                                                   GAsyncResult        *result,
                                                   GError             **error);

ATOMR_AVAILABLE_IN_ALL
guint        atomr_blas_lt_actor_get_cache_capacity  (AtomrBlasLtActor *self);
ATOMR_AVAILABLE_IN_ALL
void         atomr_blas_lt_actor_set_cache_capacity  (AtomrBlasLtActor *self,
                                                      guint             capacity);
ATOMR_AVAILABLE_IN_ALL
guint64      atomr_blas_lt_actor_get_cache_evictions (AtomrBlasLtActor *self);
ATOMR_AVAILABLE_IN_ALL
AtomrBuffer *atomr_blas_lt_actor_dup_workspace       (AtomrBlasLtActor *self);
ATOMR_AVAILABLE_IN_ALL
gboolean     atomr_blas_lt_actor_set_workspace       (AtomrBlasLtActor *self,
                                                      AtomrBuffer      *workspace,
                                                      GError          **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_blas_lt_actor_matmul_batched_async  (AtomrBlasLtActor    *self,
                                                    AtomrTranspose       transa,
                                                    AtomrTranspose       transb,
                                                    gint64               m,
                                                    gint64               n,
                                                    gint64               k,
                                                    gdouble              alpha,
                                                    AtomrBuffer         *a,
                                                    gint64               lda,
                                                    gint64               stride_a,
                                                    AtomrBuffer         *b,
                                                    gint64               ldb,
                                                    gint64               stride_b,
                                                    gdouble              beta,
                                                    AtomrBuffer         *c,
                                                    gint64               ldc,
                                                    gint64               stride_c,
                                                    gint64               batch_count,
                                                    AtomrBlasLtEpilogue  epilogue,
                                                    AtomrBuffer         *bias,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_blas_lt_actor_matmul_batched_finish (AtomrBlasLtActor    *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

ATOMR_AVAILABLE_IN_ALL
AtomrDtype atomr_blas_lt_bias_dtype (AtomrDtype ab,
                                     AtomrDtype c);

G_END_DECLS
