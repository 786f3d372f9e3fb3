/* atomr-tensor-actor.h — permutations, elementwise operations and
 * reductions on tensor views, with our own engine (NVRTC kernels)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-actor.h"
#include "core/atomr-tensor.h"
#include "actors/blas/atomr-blas-actor.h"

G_BEGIN_DECLS

/**
 * AtomrTensorUnaryOp:
 * @ATOMR_TENSOR_UNARY_IDENTITY: x
 * @ATOMR_TENSOR_UNARY_NEG: -x
 * @ATOMR_TENSOR_UNARY_ABS: |x|
 * @ATOMR_TENSOR_UNARY_SQRT: √x
 * @ATOMR_TENSOR_UNARY_RELU: max (x, 0)
 * @ATOMR_TENSOR_UNARY_EXP: eˣ
 * @ATOMR_TENSOR_UNARY_LOG: ln x
 * @ATOMR_TENSOR_UNARY_SIN: sin x
 * @ATOMR_TENSOR_UNARY_COS: cos x
 * @ATOMR_TENSOR_UNARY_TANH: tanh x
 * @ATOMR_TENSOR_UNARY_SIGMOID: 1 / (1 + e⁻ˣ)
 * @ATOMR_TENSOR_UNARY_CONJ: the complex conjugate (x itself for real
 *   dtypes; since 0.2)
 *
 * An operation applied to each element of an operand before it is scaled.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_TENSOR_UNARY_IDENTITY,
  ATOMR_TENSOR_UNARY_NEG,
  ATOMR_TENSOR_UNARY_ABS,
  ATOMR_TENSOR_UNARY_SQRT,
  ATOMR_TENSOR_UNARY_RELU,
  ATOMR_TENSOR_UNARY_EXP,
  ATOMR_TENSOR_UNARY_LOG,
  ATOMR_TENSOR_UNARY_SIN,
  ATOMR_TENSOR_UNARY_COS,
  ATOMR_TENSOR_UNARY_TANH,
  ATOMR_TENSOR_UNARY_SIGMOID,
  ATOMR_TENSOR_UNARY_CONJ,
} AtomrTensorUnaryOp;

/**
 * AtomrTensorBinaryOp:
 * @ATOMR_TENSOR_BINARY_ADD: x + y
 * @ATOMR_TENSOR_BINARY_MUL: x · y
 * @ATOMR_TENSOR_BINARY_MAX: the larger (NaN when either is NaN)
 * @ATOMR_TENSOR_BINARY_MIN: the smaller (NaN when either is NaN)
 *
 * How two scaled operands combine elementwise.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_TENSOR_BINARY_ADD,
  ATOMR_TENSOR_BINARY_MUL,
  ATOMR_TENSOR_BINARY_MAX,
  ATOMR_TENSOR_BINARY_MIN,
} AtomrTensorBinaryOp;

/**
 * AtomrTensorReduceOp:
 * @ATOMR_TENSOR_REDUCE_SUM: Σ x (0 over no element)
 * @ATOMR_TENSOR_REDUCE_PROD: Π x (1 over no element)
 * @ATOMR_TENSOR_REDUCE_MAX: the largest (−∞ over no element; NaN propagates)
 * @ATOMR_TENSOR_REDUCE_MIN: the smallest (+∞ over no element; NaN propagates)
 * @ATOMR_TENSOR_REDUCE_MEAN: Σ x / n (NaN over no element)
 * @ATOMR_TENSOR_REDUCE_NORM1: Σ |x|
 * @ATOMR_TENSOR_REDUCE_NORM2: √(Σ x²)
 * @ATOMR_TENSOR_REDUCE_NORM_INF: max |x| (0 over no element)
 *
 * How a reduction combines the elements of the reduced modes.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_TENSOR_REDUCE_SUM,
  ATOMR_TENSOR_REDUCE_PROD,
  ATOMR_TENSOR_REDUCE_MAX,
  ATOMR_TENSOR_REDUCE_MIN,
  ATOMR_TENSOR_REDUCE_MEAN,
  ATOMR_TENSOR_REDUCE_NORM1,
  ATOMR_TENSOR_REDUCE_NORM2,
  ATOMR_TENSOR_REDUCE_NORM_INF,
} AtomrTensorReduceOp;

#define ATOMR_TYPE_TENSOR_ACTOR (atomr_tensor_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrTensorActor, atomr_tensor_actor, ATOMR, TENSOR_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
G_GNUC_WARN_UNUSED_RESULT
AtomrTensorActor *atomr_tensor_actor_new (AtomrDevice  *device,
                                          GError      **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_permute_async          (AtomrTensorActor    *self,
                                                    const gchar         *modes,
                                                    gdouble              alpha,
                                                    AtomrTensorUnaryOp   op_a,
                                                    AtomrTensor         *a,
                                                    AtomrTensor         *b,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_tensor_actor_permute_finish         (AtomrTensorActor    *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_elementwise_binary_async  (AtomrTensorActor    *self,
                                                       const gchar         *modes,
                                                       gdouble              alpha,
                                                       AtomrTensorUnaryOp   op_a,
                                                       AtomrTensor         *a,
                                                       gdouble              beta,
                                                       AtomrTensorUnaryOp   op_b,
                                                       AtomrTensor         *b,
                                                       AtomrTensorBinaryOp  op_ab,
                                                       AtomrTensor         *d,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_tensor_actor_elementwise_binary_finish (AtomrTensorActor    *self,
                                                       GAsyncResult        *result,
                                                       GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_elementwise_trinary_async  (AtomrTensorActor    *self,
                                                       const gchar         *modes,
                                                       gdouble              alpha,
                                                       AtomrTensorUnaryOp   op_a,
                                                       AtomrTensor         *a,
                                                       gdouble              beta,
                                                       AtomrTensorUnaryOp   op_b,
                                                       AtomrTensor         *b,
                                                       gdouble              gamma,
                                                       AtomrTensorUnaryOp   op_c,
                                                       AtomrTensor         *c,
                                                       AtomrTensorBinaryOp  op_ab,
                                                       AtomrTensorBinaryOp  op_abc,
                                                       AtomrTensor         *d,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_tensor_actor_elementwise_trinary_finish (AtomrTensorActor    *self,
                                                        GAsyncResult        *result,
                                                        GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_reduce_async           (AtomrTensorActor    *self,
                                                    const gchar         *modes,
                                                    AtomrTensorReduceOp  op,
                                                    gdouble              alpha,
                                                    AtomrTensor         *a,
                                                    gdouble              beta,
                                                    AtomrTensor         *c,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_tensor_actor_reduce_finish          (AtomrTensorActor    *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_contract_async         (AtomrTensorActor    *self,
                                                    const gchar         *modes,
                                                    gdouble              alpha,
                                                    AtomrTensor         *a,
                                                    AtomrTensor         *b,
                                                    gdouble              beta,
                                                    AtomrTensor         *d,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_tensor_actor_contract_finish        (AtomrTensorActor    *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

ATOMR_AVAILABLE_IN_ALL
AtomrBlasComputeType atomr_tensor_actor_get_compute_type (AtomrTensorActor     *self);
ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_set_compute_type        (AtomrTensorActor     *self,
                                                     AtomrBlasComputeType  compute_type);

ATOMR_AVAILABLE_IN_ALL
guint    atomr_tensor_actor_get_plan_cache_capacity (AtomrTensorActor  *self);
ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_set_plan_cache_capacity (AtomrTensorActor  *self,
                                                     guint              capacity);
ATOMR_AVAILABLE_IN_ALL
void     atomr_tensor_actor_get_plan_cache_stats    (AtomrTensorActor  *self,
                                                     guint64           *hits,
                                                     guint64           *misses,
                                                     guint64           *evictions,
                                                     guint             *size);

G_END_DECLS
