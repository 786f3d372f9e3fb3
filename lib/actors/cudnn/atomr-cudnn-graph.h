/* atomr-cudnn-graph.h — operation graphs for the cuDNN actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "actors/cudnn/atomr-cudnn-actor.h"

G_BEGIN_DECLS

/**
 * AtomrCudnnPointwise:
 * @ATOMR_CUDNN_POINTWISE_ADD: y = x + b (b broadcasts: each of its
 *   dimensions is 1 or x's).
 * @ATOMR_CUDNN_POINTWISE_MUL: y = x · b (b broadcasts as for add).
 * @ATOMR_CUDNN_POINTWISE_BIAS: y = x + b where b is a bias: the same as
 *   add, but b must have a 1 in every dimension but one (1 × K × 1 × 1
 *   for a convolution's output channels).
 * @ATOMR_CUDNN_POINTWISE_RELU: y = max (0, x).
 * @ATOMR_CUDNN_POINTWISE_GELU: y = x · Φ (x) (the erf form).
 * @ATOMR_CUDNN_POINTWISE_SIGMOID: y = 1 / (1 + e^-x).
 * @ATOMR_CUDNN_POINTWISE_TANH: y = tanh (x).
 *
 * The elementwise function of a pointwise node of an
 * [class@Atomr.CudnnGraph].  Add, mul and bias take a second operand.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_CUDNN_POINTWISE_ADD,
  ATOMR_CUDNN_POINTWISE_MUL,
  ATOMR_CUDNN_POINTWISE_BIAS,
  ATOMR_CUDNN_POINTWISE_RELU,
  ATOMR_CUDNN_POINTWISE_GELU,
  ATOMR_CUDNN_POINTWISE_SIGMOID,
  ATOMR_CUDNN_POINTWISE_TANH,
} AtomrCudnnPointwise;

/**
 * AtomrCudnnConvDirection:
 * @ATOMR_CUDNN_CONV_FORWARD: y = conv (x, w); operands x, w, output y.
 * @ATOMR_CUDNN_CONV_BACKWARD_DATA: dx from dy and w; operands dy, w,
 *   output dx.
 * @ATOMR_CUDNN_CONV_BACKWARD_FILTER: dw from x and dy; operands x, dy,
 *   output dw.
 *
 * Which convolution a convolution node of an [class@Atomr.CudnnGraph]
 * computes.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_CUDNN_CONV_FORWARD,
  ATOMR_CUDNN_CONV_BACKWARD_DATA,
  ATOMR_CUDNN_CONV_BACKWARD_FILTER,
} AtomrCudnnConvDirection;

/**
 * AtomrCudnnReduction:
 * @ATOMR_CUDNN_REDUCTION_SUM: the sum.
 * @ATOMR_CUDNN_REDUCTION_MAX: the maximum.
 * @ATOMR_CUDNN_REDUCTION_MIN: the minimum.
 * @ATOMR_CUDNN_REDUCTION_MEAN: the mean.
 *
 * What a reduction node of an [class@Atomr.CudnnGraph] computes over the
 * dimensions where its output has extent 1.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_CUDNN_REDUCTION_SUM,
  ATOMR_CUDNN_REDUCTION_MAX,
  ATOMR_CUDNN_REDUCTION_MIN,
  ATOMR_CUDNN_REDUCTION_MEAN,
} AtomrCudnnReduction;

/**
 * AtomrCudnnNorm:
 * @ATOMR_CUDNN_NORM_LAYER: layer normalization (mean and variance).
 * @ATOMR_CUDNN_NORM_RMS: RMS normalization (root mean square, no mean
 *   subtracted).
 * @ATOMR_CUDNN_NORM_BATCH: batch normalization (per channel, over the
 *   batch and spatial dimensions): training and backward nodes only.
 *
 * What a norm node of an [class@Atomr.CudnnGraph] computes.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_CUDNN_NORM_LAYER,
  ATOMR_CUDNN_NORM_RMS,
  ATOMR_CUDNN_NORM_BATCH,
} AtomrCudnnNorm;

#define ATOMR_TYPE_CUDNN_GRAPH (atomr_cudnn_graph_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCudnnGraph, atomr_cudnn_graph, ATOMR, CUDNN_GRAPH, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrCudnnGraph *atomr_cudnn_graph_new               (const gchar             *name);
ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_cudnn_graph_get_name          (AtomrCudnnGraph         *self);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_get_finalized     (AtomrCudnnGraph         *self);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_graph_get_n_tensors     (AtomrCudnnGraph         *self);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_graph_get_n_nodes       (AtomrCudnnGraph         *self);

ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_graph_add_tensor        (AtomrCudnnGraph         *self,
                                                      const gchar             *name,
                                                      AtomrTensor             *like,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_graph_add_tensor_full   (AtomrCudnnGraph         *self,
                                                      const gchar             *name,
                                                      AtomrDtype               dtype,
                                                      const gint64            *shape,
                                                      guint                    n_dims,
                                                      const gint64            *strides,
                                                      guint                    n_strides,
                                                      gboolean                 is_virtual,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_graph_lookup_tensor     (AtomrCudnnGraph         *self,
                                                      const gchar             *name);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_get_tensor_is_virtual (AtomrCudnnGraph     *self,
                                                      guint                    id);

ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_pointwise     (AtomrCudnnGraph         *self,
                                                      AtomrCudnnPointwise      mode,
                                                      guint                    x,
                                                      guint                    b,
                                                      guint                    y,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_scale         (AtomrCudnnGraph         *self,
                                                      guint                    x,
                                                      gdouble                  scale,
                                                      guint                    y,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_convolution   (AtomrCudnnGraph         *self,
                                                      AtomrCudnnConvDirection  direction,
                                                      AtomrConvolution        *conv,
                                                      guint                    a,
                                                      guint                    b,
                                                      guint                    out,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_matmul        (AtomrCudnnGraph         *self,
                                                      guint                    a,
                                                      guint                    b,
                                                      guint                    c,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_reduction     (AtomrCudnnGraph         *self,
                                                      AtomrCudnnReduction      mode,
                                                      guint                    x,
                                                      guint                    y,
                                                      GError                 **error);

ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_norm          (AtomrCudnnGraph         *self,
                                                      AtomrCudnnNorm           mode,
                                                      guint                    x,
                                                      guint                    scale,
                                                      guint                    bias,
                                                      gdouble                  epsilon,
                                                      guint                    y,
                                                      GError                 **error);

ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_finalize          (AtomrCudnnGraph         *self,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
GBytes          *atomr_cudnn_graph_get_key           (AtomrCudnnGraph         *self);

ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_execute_graph_async  (AtomrCudnnActor      *self,
                                                         AtomrCudnnGraph      *graph,
                                                         const guint          *ids,
                                                         AtomrTensor * const  *views,
                                                         guint                 n_views,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_actor_execute_graph_finish (AtomrCudnnActor      *self,
                                                         GAsyncResult         *result,
                                                         GError              **error);

ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_norm_training (AtomrCudnnGraph         *self,
                                                      AtomrCudnnNorm           mode,
                                                      guint                    x,
                                                      guint                    scale,
                                                      guint                    bias,
                                                      gdouble                  epsilon,
                                                      guint                    y,
                                                      guint                    mean,
                                                      guint                    inv_variance,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_batch_norm_training (AtomrCudnnGraph   *self,
                                                      guint                    x,
                                                      guint                    scale,
                                                      guint                    bias,
                                                      gdouble                  epsilon,
                                                      gdouble                  momentum,
                                                      guint                    running_mean,
                                                      guint                    running_var,
                                                      guint                    y,
                                                      guint                    mean,
                                                      guint                    inv_variance,
                                                      guint                    next_running_mean,
                                                      guint                    next_running_var,
                                                      GError                 **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_graph_add_norm_backward (AtomrCudnnGraph         *self,
                                                      AtomrCudnnNorm           mode,
                                                      guint                    x,
                                                      guint                    dy,
                                                      guint                    scale,
                                                      guint                    mean,
                                                      guint                    inv_variance,
                                                      guint                    dx,
                                                      guint                    dscale,
                                                      guint                    dbias,
                                                      GError                 **error);

G_END_DECLS
