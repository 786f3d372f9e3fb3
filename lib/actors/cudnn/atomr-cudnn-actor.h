/* atomr-cudnn-actor.h — cuDNN as an actor
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
 * AtomrCudnnMath:
 * @ATOMR_CUDNN_MATH_DEFAULT: cuDNN's choice: tensor cores, TF32 for f32
 *   operands on GPUs that have it.
 * @ATOMR_CUDNN_MATH_FMA: no tensor-core conversion: f32 operands are
 *   computed in full f32 precision.
 *
 * Which arithmetic a convolution may use.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_CUDNN_MATH_DEFAULT,
  ATOMR_CUDNN_MATH_FMA,
} AtomrCudnnMath;

/**
 * AtomrActivationMode:
 * @ATOMR_ACTIVATION_SIGMOID: 1 / (1 + e^-x)
 * @ATOMR_ACTIVATION_RELU: max (0, x)
 * @ATOMR_ACTIVATION_TANH: tanh (x)
 * @ATOMR_ACTIVATION_CLIPPED_RELU: min (max (0, x), coef)
 * @ATOMR_ACTIVATION_ELU: x for x > 0, coef · (e^x − 1) otherwise
 * @ATOMR_ACTIVATION_SWISH: x · sigmoid (coef · x)
 * @ATOMR_ACTIVATION_IDENTITY: x: no activation; only for
 *   [method@Atomr.CudnnActor.convolution_bias_activation_forward_async]
 *   (Since: 0.2)
 *
 * The pointwise function of an activation.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_ACTIVATION_SIGMOID,
  ATOMR_ACTIVATION_RELU,
  ATOMR_ACTIVATION_TANH,
  ATOMR_ACTIVATION_CLIPPED_RELU,
  ATOMR_ACTIVATION_ELU,
  ATOMR_ACTIVATION_SWISH,
  ATOMR_ACTIVATION_IDENTITY,
} AtomrActivationMode;

/**
 * AtomrSoftmaxMode:
 * @ATOMR_SOFTMAX_INSTANCE: over all of C, H, W (every dimension but N)
 *   for each n.
 * @ATOMR_SOFTMAX_CHANNEL: over C for each n and spatial position.
 *
 * What a softmax normalises over.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_SOFTMAX_INSTANCE,
  ATOMR_SOFTMAX_CHANNEL,
} AtomrSoftmaxMode;

/**
 * AtomrPoolingMode:
 * @ATOMR_POOLING_MAX: the maximum of each window.
 * @ATOMR_POOLING_AVERAGE_INCLUDE_PADDING: the mean of each window, the
 *   padding counted as zeros.
 * @ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING: the mean of the elements of each
 *   window that lie inside the input.
 *
 * What a pooling window computes.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_POOLING_MAX,
  ATOMR_POOLING_AVERAGE_INCLUDE_PADDING,
  ATOMR_POOLING_AVERAGE_EXCLUDE_PADDING,
} AtomrPoolingMode;

/**
 * AtomrBatchNormMode:
 * @ATOMR_BATCH_NORM_SPATIAL: one mean and variance per channel, over N and
 *   every spatial position (convolutional layers); parameters have C
 *   elements.
 * @ATOMR_BATCH_NORM_PER_ACTIVATION: one per channel and spatial position,
 *   over N (fully connected layers); parameters have C × spatial elements.
 *
 * What a batch normalisation averages over.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_BATCH_NORM_SPATIAL,
  ATOMR_BATCH_NORM_PER_ACTIVATION,
} AtomrBatchNormMode;

ATOMR_AVAILABLE_IN_ALL
GType atomr_batch_norm_mode_get_type (void) G_GNUC_CONST;
#define ATOMR_TYPE_BATCH_NORM_MODE (atomr_batch_norm_mode_get_type ())
ATOMR_AVAILABLE_IN_ALL
GType atomr_cudnn_math_get_type      (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_activation_mode_get_type (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_softmax_mode_get_type    (void) G_GNUC_CONST;
ATOMR_AVAILABLE_IN_ALL
GType atomr_pooling_mode_get_type    (void) G_GNUC_CONST;
#define ATOMR_TYPE_CUDNN_MATH      (atomr_cudnn_math_get_type ())
#define ATOMR_TYPE_ACTIVATION_MODE (atomr_activation_mode_get_type ())
#define ATOMR_TYPE_SOFTMAX_MODE    (atomr_softmax_mode_get_type ())
#define ATOMR_TYPE_POOLING_MODE    (atomr_pooling_mode_get_type ())

/* The most spatial dimensions a convolution or pooling window has (3-D). */
/**
 * ATOMR_CUDNN_MAX_SPATIAL_DIMS:
 *
 * The most spatial dimensions a [class@Atomr.Convolution] or
 * [class@Atomr.Pooling] has (3, for volumes).
 *
 * Since: 0.2
 */
#define ATOMR_CUDNN_MAX_SPATIAL_DIMS 3

/* ------------------------------------------------------------------ */

#define ATOMR_TYPE_CONVOLUTION (atomr_convolution_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrConvolution, atomr_convolution, ATOMR, CONVOLUTION, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrConvolution *atomr_convolution_new              (guint              n_spatial_dims);
ATOMR_AVAILABLE_IN_ALL
AtomrConvolution *atomr_convolution_new_2d           (gint64             pad_h,
                                                      gint64             pad_w,
                                                      gint64             stride_h,
                                                      gint64             stride_w,
                                                      gint64             dilation_h,
                                                      gint64             dilation_w);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_convolution_get_n_spatial_dims (AtomrConvolution *self);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_convolution_set_padding      (AtomrConvolution  *self,
                                                      const gint64      *padding,
                                                      guint              n,
                                                      GError           **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_convolution_set_stride       (AtomrConvolution  *self,
                                                      const gint64      *stride,
                                                      guint              n,
                                                      GError           **error);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_convolution_set_dilation     (AtomrConvolution  *self,
                                                      const gint64      *dilation,
                                                      guint              n,
                                                      GError           **error);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_convolution_get_padding      (AtomrConvolution  *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_convolution_get_stride       (AtomrConvolution  *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_convolution_get_dilation     (AtomrConvolution  *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_convolution_get_groups       (AtomrConvolution  *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_convolution_set_groups       (AtomrConvolution  *self,
                                                      guint              groups);
ATOMR_AVAILABLE_IN_ALL
AtomrCudnnMath    atomr_convolution_get_math         (AtomrConvolution  *self);
ATOMR_AVAILABLE_IN_ALL
void              atomr_convolution_set_math         (AtomrConvolution  *self,
                                                      AtomrCudnnMath     math);
ATOMR_AVAILABLE_IN_ALL
gboolean          atomr_convolution_get_output_shape (AtomrConvolution  *self,
                                                      const gint64      *x_shape,
                                                      guint              x_n_dims,
                                                      const gint64      *w_shape,
                                                      guint              w_n_dims,
                                                      gint64           **y_shape,
                                                      guint             *y_n_dims,
                                                      GError           **error);

/* ------------------------------------------------------------------ */

#define ATOMR_TYPE_POOLING (atomr_pooling_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrPooling, atomr_pooling, ATOMR, POOLING, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrPooling     *atomr_pooling_new                  (AtomrPoolingMode   mode,
                                                      const gint64      *window,
                                                      const gint64      *padding,
                                                      const gint64      *stride,
                                                      guint              n,
                                                      GError           **error);
ATOMR_AVAILABLE_IN_ALL
AtomrPooling     *atomr_pooling_new_2d               (AtomrPoolingMode   mode,
                                                      gint64             window_h,
                                                      gint64             window_w,
                                                      gint64             pad_h,
                                                      gint64             pad_w,
                                                      gint64             stride_h,
                                                      gint64             stride_w);
ATOMR_AVAILABLE_IN_ALL
AtomrPoolingMode  atomr_pooling_get_mode             (AtomrPooling      *self);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_pooling_get_window           (AtomrPooling      *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_pooling_get_padding          (AtomrPooling      *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
gint64            atomr_pooling_get_stride           (AtomrPooling      *self,
                                                      guint              dim);
ATOMR_AVAILABLE_IN_ALL
guint             atomr_pooling_get_n_spatial_dims   (AtomrPooling      *self);

/* ------------------------------------------------------------------ */

#define ATOMR_TYPE_CUDNN_ACTOR (atomr_cudnn_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCudnnActor, atomr_cudnn_actor, ATOMR, CUDNN_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrCudnnActor *atomr_cudnn_actor_new               (AtomrDevice        *device,
                                                      GError            **error);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_cudnn_actor_get_workspace_size  (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_cudnn_actor_get_workspace_limit (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_set_workspace_limit (AtomrCudnnActor  *self,
                                                        guint64           limit);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_actor_get_cache_capacity  (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_set_cache_capacity  (AtomrCudnnActor  *self,
                                                        guint             capacity);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_cudnn_actor_get_cache_hits      (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_cudnn_actor_get_cache_misses    (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_cudnn_actor_get_cache_size      (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_actor_get_autotune        (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_set_autotune        (AtomrCudnnActor  *self,
                                                        gboolean          autotune);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_cudnn_actor_get_legacy_convolution (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_set_legacy_convolution (AtomrCudnnActor  *self,
                                                           gboolean          legacy);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_cudnn_actor_get_dropout_seed    (AtomrCudnnActor  *self);
ATOMR_AVAILABLE_IN_ALL
void             atomr_cudnn_actor_set_dropout_seed    (AtomrCudnnActor  *self,
                                                        guint64           seed);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_convolution_forward_async         (AtomrCudnnActor     *self,
                                                              AtomrConvolution    *conv,
                                                              gdouble              alpha,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *w,
                                                              gdouble              beta,
                                                              AtomrTensor         *y,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_convolution_forward_finish        (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_convolution_backward_data_async   (AtomrCudnnActor     *self,
                                                              AtomrConvolution    *conv,
                                                              gdouble              alpha,
                                                              AtomrTensor         *w,
                                                              AtomrTensor         *dy,
                                                              gdouble              beta,
                                                              AtomrTensor         *dx,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_convolution_backward_data_finish  (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_convolution_backward_filter_async (AtomrCudnnActor     *self,
                                                              AtomrConvolution    *conv,
                                                              gdouble              alpha,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *dy,
                                                              gdouble              beta,
                                                              AtomrTensor         *dw,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_convolution_backward_filter_finish (AtomrCudnnActor    *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_convolution_bias_activation_forward_async (AtomrCudnnActor     *self,
                                                                      AtomrConvolution    *conv,
                                                                      AtomrActivationMode  mode,
                                                                      gdouble              coef,
                                                                      gdouble              alpha,
                                                                      AtomrTensor         *x,
                                                                      AtomrTensor         *w,
                                                                      AtomrTensor         *bias,
                                                                      gdouble              beta,
                                                                      AtomrTensor         *z,
                                                                      AtomrTensor         *y,
                                                                      GCancellable        *cancellable,
                                                                      GAsyncReadyCallback  callback,
                                                                      gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_convolution_bias_activation_forward_finish (AtomrCudnnActor    *self,
                                                                       GAsyncResult       *result,
                                                                       GError            **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_activation_forward_async          (AtomrCudnnActor     *self,
                                                              AtomrActivationMode  mode,
                                                              gdouble              coef,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *y,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_activation_forward_finish         (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_activation_backward_async         (AtomrCudnnActor     *self,
                                                              AtomrActivationMode  mode,
                                                              gdouble              coef,
                                                              AtomrTensor         *y,
                                                              AtomrTensor         *dy,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *dx,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_activation_backward_finish        (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_softmax_forward_async             (AtomrCudnnActor     *self,
                                                              AtomrSoftmaxMode     mode,
                                                              gboolean             log,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *y,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_softmax_forward_finish            (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_softmax_backward_async            (AtomrCudnnActor     *self,
                                                              AtomrSoftmaxMode     mode,
                                                              gboolean             log,
                                                              AtomrTensor         *y,
                                                              AtomrTensor         *dy,
                                                              AtomrTensor         *dx,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_softmax_backward_finish           (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_pooling_forward_async             (AtomrCudnnActor     *self,
                                                              AtomrPooling        *pooling,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *y,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_pooling_forward_finish            (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_pooling_backward_async            (AtomrCudnnActor     *self,
                                                              AtomrPooling        *pooling,
                                                              AtomrTensor         *y,
                                                              AtomrTensor         *dy,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *dx,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_pooling_backward_finish           (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_batch_norm_forward_training_async (AtomrCudnnActor     *self,
                                                              AtomrBatchNormMode   mode,
                                                              gdouble              epsilon,
                                                              gdouble              momentum,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *scale,
                                                              AtomrTensor         *bias,
                                                              AtomrTensor         *y,
                                                              AtomrTensor         *running_mean,
                                                              AtomrTensor         *running_var,
                                                              AtomrTensor         *save_mean,
                                                              AtomrTensor         *save_inv_var,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_batch_norm_forward_training_finish (AtomrCudnnActor    *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_batch_norm_forward_inference_async (AtomrCudnnActor    *self,
                                                              AtomrBatchNormMode   mode,
                                                              gdouble              epsilon,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *scale,
                                                              AtomrTensor         *bias,
                                                              AtomrTensor         *mean,
                                                              AtomrTensor         *var,
                                                              AtomrTensor         *y,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_batch_norm_forward_inference_finish (AtomrCudnnActor   *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_batch_norm_backward_async         (AtomrCudnnActor     *self,
                                                              AtomrBatchNormMode   mode,
                                                              gdouble              epsilon,
                                                              AtomrTensor         *x,
                                                              AtomrTensor         *dy,
                                                              AtomrTensor         *scale,
                                                              AtomrTensor         *save_mean,
                                                              AtomrTensor         *save_inv_var,
                                                              AtomrTensor         *dx,
                                                              AtomrTensor         *dscale,
                                                              AtomrTensor         *dbias,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_batch_norm_backward_finish        (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

G_END_DECLS
