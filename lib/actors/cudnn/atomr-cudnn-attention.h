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

#define ATOMR_TYPE_ATTENTION (atomr_attention_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrAttention, atomr_attention, ATOMR, ATTENTION, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrAttention *atomr_attention_new                  (void);
ATOMR_AVAILABLE_IN_ALL
gdouble         atomr_attention_get_scale            (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_scale            (AtomrAttention *self,
                                                      gdouble         scale);
ATOMR_AVAILABLE_IN_ALL
gboolean        atomr_attention_get_causal           (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_causal           (AtomrAttention *self,
                                                      gboolean        causal);
ATOMR_AVAILABLE_IN_ALL
gdouble         atomr_attention_get_dropout          (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_dropout          (AtomrAttention *self,
                                                      gdouble         dropout);
ATOMR_AVAILABLE_IN_ALL
guint64         atomr_attention_get_seed             (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_seed             (AtomrAttention *self,
                                                      guint64         seed);
ATOMR_AVAILABLE_IN_ALL
guint64         atomr_attention_get_offset           (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_offset           (AtomrAttention *self,
                                                      guint64         offset);
ATOMR_AVAILABLE_IN_ALL
AtomrTensor    *atomr_attention_get_q_lengths        (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
AtomrTensor    *atomr_attention_get_kv_lengths       (AtomrAttention *self);
ATOMR_AVAILABLE_IN_ALL
void            atomr_attention_set_sequence_lengths (AtomrAttention *self,
                                                      AtomrTensor    *q_lengths,
                                                      AtomrTensor    *kv_lengths);

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_attention_forward_async          (AtomrCudnnActor     *self,
                                                              AtomrAttention      *attention,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *stats,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_attention_forward_finish         (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_attention_backward_async         (AtomrCudnnActor     *self,
                                                              AtomrAttention      *attention,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *d_o,
                                                              AtomrTensor         *stats,
                                                              AtomrTensor         *dq,
                                                              AtomrTensor         *dk,
                                                              AtomrTensor         *dv,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_attention_backward_finish        (AtomrCudnnActor     *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

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

ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_attention_multi_head_forward_async  (AtomrCudnnActor   *self,
                                                              AtomrAttention      *attention,
                                                              guint                n_heads,
                                                              guint                n_kv_heads,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *stats,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_attention_multi_head_forward_finish (AtomrCudnnActor   *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);
ATOMR_AVAILABLE_IN_ALL
void     atomr_cudnn_actor_attention_multi_head_backward_async (AtomrCudnnActor   *self,
                                                              AtomrAttention      *attention,
                                                              guint                n_heads,
                                                              guint                n_kv_heads,
                                                              AtomrTensor         *q,
                                                              AtomrTensor         *k,
                                                              AtomrTensor         *v,
                                                              AtomrTensor         *o,
                                                              AtomrTensor         *d_o,
                                                              AtomrTensor         *stats,
                                                              AtomrTensor         *dq,
                                                              AtomrTensor         *dk,
                                                              AtomrTensor         *dv,
                                                              GCancellable        *cancellable,
                                                              GAsyncReadyCallback  callback,
                                                              gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_cudnn_actor_attention_multi_head_backward_finish (AtomrCudnnActor  *self,
                                                              GAsyncResult        *result,
                                                              GError             **error);

G_END_DECLS
