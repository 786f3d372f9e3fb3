/* atomr-cudnn-attention.h — scaled dot-product attention and RNNs on the
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

G_BEGIN_DECLS

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_sdpa_forward_async                (AtomrCudnnActor     *self,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              gdouble              scale,
                                                              gboolean             causal,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *stats,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_sdpa_forward_finish               (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_sdpa_backward_async               (AtomrCudnnActor     *self,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *d_o,
                                                              AtomrTensor         *stats,
                                                              gdouble              scale,
                                                              gboolean             causal,
                                                              AtomrTensor         *dq,
                                                              AtomrTensor         *dk,
                                                              AtomrTensor         *dv,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_sdpa_backward_finish              (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_multi_head_attention_forward_async (AtomrCudnnActor    *self,
                                                              guint                n_heads,
                                                              guint                n_kv_heads,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              gdouble              scale,
                                                              gboolean             causal,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *stats,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_multi_head_attention_forward_finish (AtomrCudnnActor   *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_multi_head_attention_backward_async (AtomrCudnnActor   *self,
                                                              guint                n_heads,
                                                              guint                n_kv_heads,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *d_o,
                                                              AtomrTensor         *stats,
                                                              gdouble              scale,
                                                              gboolean             causal,
                                                              AtomrTensor         *dq,
                                                              AtomrTensor         *dk,
                                                              AtomrTensor         *dv,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_multi_head_attention_backward_finish (AtomrCudnnActor  *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

G_END_DECLS
