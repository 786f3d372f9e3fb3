/* atomr-cudnn-lrn.h — local response normalization and dropout on the
 * cuDNN actor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "actors/cudnn/atomr-cudnn-actor.h"
#include "core/atomr-buffer.h"

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_lrn_forward_async       (AtomrCudnnActor     *self,
                                                    guint                size,
                                                    gdouble              alpha,
                                                    gdouble              beta,
                                                    gdouble              k,
                                                    AtomrTensor         *x,
                                                    AtomrTensor         *y,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_lrn_forward_finish      (AtomrCudnnActor     *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_lrn_backward_async      (AtomrCudnnActor     *self,
                                                    guint                size,
                                                    gdouble              alpha,
                                                    gdouble              beta,
                                                    gdouble              k,
                                                    AtomrTensor         *y,
                                                    AtomrTensor         *dy,
                                                    AtomrTensor         *x,
                                                    AtomrTensor         *dx,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_lrn_backward_finish     (AtomrCudnnActor     *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_get_dropout_reserve_size (AtomrCudnnActor    *self,
                                                    AtomrTensor         *x,
                                                    guint64             *size,
                                                    GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_dropout_forward_async   (AtomrCudnnActor     *self,
                                                    gdouble              probability,
                                                    AtomrTensor         *x,
                                                    AtomrTensor         *y,
                                                    AtomrBuffer         *reserve,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_dropout_forward_finish  (AtomrCudnnActor     *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_dropout_backward_async  (AtomrCudnnActor     *self,
                                                    gdouble              probability,
                                                    AtomrTensor         *dy,
                                                    AtomrTensor         *dx,
                                                    AtomrBuffer         *reserve,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_dropout_backward_finish (AtomrCudnnActor     *self,
                                                    GAsyncResult        *result,
                                                    GError             **error);

G_END_DECLS
