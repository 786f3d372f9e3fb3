/* atomr-cudnn-norm.h — layer, RMS, group and instance normalization on
 * the cuDNN actor
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
 * AtomrNormMode:
 * @ATOMR_NORM_LAYER: mean and variance over the dimensions from
 *   [property@Atomr.Normalization:axis] on, one pair per index of the
 *   dimensions before it; scale and bias have one element per normalized
 *   element.
 * @ATOMR_NORM_RMS: like @ATOMR_NORM_LAYER without the mean: x is divided
 *   by the root mean square.
 * @ATOMR_NORM_GROUP: x is N × C × spatial; the C channels fall into
 *   [property@Atomr.Normalization:groups] groups and each (n, group) has
 *   its mean and variance; scale and bias have C elements.
 * @ATOMR_NORM_INSTANCE: group normalization with one group per channel.
 *
 * What a [class@Atomr.Normalization] averages over.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_NORM_LAYER,
  ATOMR_NORM_RMS,
  ATOMR_NORM_GROUP,
  ATOMR_NORM_INSTANCE,
} AtomrNormMode;

ATOMR_AVAILABLE_IN_ALL
GType atomr_norm_mode_get_type (void) G_GNUC_CONST;
#define ATOMR_TYPE_NORM_MODE (atomr_norm_mode_get_type ())

#define ATOMR_TYPE_NORMALIZATION (atomr_normalization_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrNormalization, atomr_normalization, ATOMR, NORMALIZATION, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrNormalization *atomr_normalization_new         (AtomrNormMode        mode,
                                                     gdouble              epsilon) G_GNUC_WARN_UNUSED_RESULT;
ATOMR_AVAILABLE_IN_ALL
AtomrNormMode       atomr_normalization_get_mode    (AtomrNormalization  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_normalization_set_mode    (AtomrNormalization  *self,
                                                     AtomrNormMode        mode);
ATOMR_AVAILABLE_IN_ALL
gdouble             atomr_normalization_get_epsilon (AtomrNormalization  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_normalization_set_epsilon (AtomrNormalization  *self,
                                                     gdouble              epsilon);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_normalization_get_axis    (AtomrNormalization  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_normalization_set_axis    (AtomrNormalization  *self,
                                                     guint                axis);
ATOMR_AVAILABLE_IN_ALL
guint               atomr_normalization_get_groups  (AtomrNormalization  *self);
ATOMR_AVAILABLE_IN_ALL
void                atomr_normalization_set_groups  (AtomrNormalization  *self,
                                                     guint                groups);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_normalization_forward_async   (AtomrCudnnActor     *self,
                                                          AtomrNormalization  *norm,
                                                          AtomrTensor         *x,
                                                          AtomrTensor         *scale,
                                                          AtomrTensor         *bias,
                                                          AtomrTensor         *y,
                                                          AtomrTensor         *mean,
                                                          AtomrTensor         *inv_std,
                                                          GCancellable        *cancellable,
                                                          GAsyncReadyCallback  callback,
                                                          gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_normalization_forward_finish  (AtomrCudnnActor     *self,
                                                          GAsyncResult        *result,
                                                          GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_normalization_backward_async  (AtomrCudnnActor     *self,
                                                          AtomrNormalization  *norm,
                                                          AtomrTensor         *x,
                                                          AtomrTensor         *dy,
                                                          AtomrTensor         *scale,
                                                          AtomrTensor         *mean,
                                                          AtomrTensor         *inv_std,
                                                          AtomrTensor         *dx,
                                                          AtomrTensor         *dscale,
                                                          AtomrTensor         *dbias,
                                                          GCancellable        *cancellable,
                                                          GAsyncReadyCallback  callback,
                                                          gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_normalization_backward_finish (AtomrCudnnActor     *self,
                                                          GAsyncResult        *result,
                                                          GError             **error);

G_END_DECLS
