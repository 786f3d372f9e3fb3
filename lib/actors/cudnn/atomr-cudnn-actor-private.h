/* atomr-cudnn-actor-private.h — what operations in other files take from
 * the cuDNN actor (normalizations, LRN, dropout, graphs)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "actors/cudnn/atomr-cudnn-actor.h"
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "core/atomr-cuda-private.h"

G_BEGIN_DECLS

/* Actor thread: the handle bound to the actor's stream (NULL on the host
 * test device). */
cudnnHandle_t        atomr_cudnn_actor_get_handle        (AtomrCudnnActor  *self);
/* Actor thread: grows the actor's one workspace to at least @size bytes
 * (stream-ordered) and returns it in @workspace (NULL for 0 bytes). */
gboolean             atomr_cudnn_actor_reserve_workspace (AtomrCudnnActor  *self,
                                                          CUstream          stream,
                                                          gsize             size,
                                                          void            **workspace,
                                                          GError          **error);
/* Any thread: the actor's cache of backend-graph plans (its counters are
 * part of the actor's cache-hits/-misses/-size). */
AtomrCudnnPlanCache *atomr_cudnn_actor_get_graph_plans   (AtomrCudnnActor  *self);
/* Actor thread: generated kernels by name (emptied when the context is
 * rebuilt). */
GHashTable          *atomr_cudnn_actor_get_kernels       (AtomrCudnnActor  *self);

/* A view cuDNN (or a generated kernel) can read: a checked tensor of the
 * actor's device, of a floating dtype (f32, f16, bf16, f64), with
 * @min_dims to @max_dims dimensions, every extent 1 to G_MAXINT32,
 * positive strides up to G_MAXINT32 that never make two elements share
 * memory.  *@dtype < 0: set to the view's dtype; otherwise the view must
 * have that dtype.  INVALID_ARGUMENT naming @op, @name and the value. */
gboolean             atomr_cudnn_check_tensor            (AtomrCudnnActor  *self,
                                                          const gchar      *op,
                                                          const gchar      *name,
                                                          AtomrTensor      *t,
                                                          guint             min_dims,
                                                          guint             max_dims,
                                                          gint             *dtype,
                                                          GError          **error);

/* A legacy tensor descriptor of view @t (@dtype): trailing 1s up to 4
 * dimensions, the view's strides. */
gboolean             atomr_cudnn_tensor_desc_new         (AtomrTensor              *t,
                                                          AtomrDtype                dtype,
                                                          const gchar              *opname,
                                                          cudnnTensorDescriptor_t  *desc,
                                                          GError                  **error);

/* Dropout (atomr-cudnn-dropout.c): the actor keeps one random state. */
typedef struct _AtomrCudnnDropoutState AtomrCudnnDropoutState;
/* Actor thread: where the state is kept (NULL until the first dropout). */
AtomrCudnnDropoutState **atomr_cudnn_actor_get_dropout_state (AtomrCudnnActor *self);
/* Any thread: the seed and how many times it was set (a request records
 * both; the actor thread restarts the state when the generation moved). */
void                 atomr_cudnn_actor_get_dropout_request (AtomrCudnnActor *self,
                                                            guint64         *seed,
                                                            guint           *generation);
/* Frees the state (its device memory stream-ordered on @stream when the
 * context is alive). */
void                 atomr_cudnn_dropout_state_free      (AtomrCudnnDropoutState *state,
                                                          CUstream                stream,
                                                          gboolean                context_alive);

G_END_DECLS
