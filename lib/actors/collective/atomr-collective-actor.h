/* atomr-collective-actor.h — one NCCL rank on an actor
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
#include "actors/collective/atomr-collective-world.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_COLLECTIVE_ACTOR (atomr_collective_actor_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCollectiveActor, atomr_collective_actor, ATOMR, COLLECTIVE_ACTOR, AtomrActor)

ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveWorld *atomr_collective_actor_get_world   (AtomrCollectiveActor *self);
ATOMR_AVAILABLE_IN_ALL
guint                 atomr_collective_actor_get_rank    (AtomrCollectiveActor *self);

ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_all_reduce_async        (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         AtomrReduceOp         op,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_all_reduce_scaled_async (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         gdouble               scale,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_broadcast_async         (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         guint                 root,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_reduce_async            (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         AtomrReduceOp         op,
                                                         guint                 root,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_all_gather_async        (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_reduce_scatter_async    (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         AtomrReduceOp         op,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_all_to_all_async        (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         AtomrTensor          *recv,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_all_to_all_v_async      (AtomrCollectiveActor *self,
                                                         AtomrTensor          *send,
                                                         const guint64        *send_counts,
                                                         guint                 n_send_counts,
                                                         const guint64        *send_offsets,
                                                         guint                 n_send_offsets,
                                                         AtomrTensor          *recv,
                                                         const guint64        *recv_counts,
                                                         guint                 n_recv_counts,
                                                         const guint64        *recv_offsets,
                                                         guint                 n_recv_offsets,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_send_async              (AtomrCollectiveActor *self,
                                                         AtomrTensor          *tensor,
                                                         guint                 peer,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
void     atomr_collective_actor_recv_async              (AtomrCollectiveActor *self,
                                                         AtomrTensor          *tensor,
                                                         guint                 peer,
                                                         GCancellable         *cancellable,
                                                         GAsyncReadyCallback   callback,
                                                         gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_all_reduce_finish (AtomrCollectiveActor *self,
                                             GAsyncResult         *result,
                                             GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_all_reduce_scaled_finish (AtomrCollectiveActor *self,
                                                    GAsyncResult         *result,
                                                    GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_broadcast_finish (AtomrCollectiveActor *self,
                                            GAsyncResult         *result,
                                            GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_reduce_finish (AtomrCollectiveActor *self,
                                         GAsyncResult         *result,
                                         GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_all_gather_finish (AtomrCollectiveActor *self,
                                             GAsyncResult         *result,
                                             GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_reduce_scatter_finish (AtomrCollectiveActor *self,
                                                 GAsyncResult         *result,
                                                 GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_all_to_all_finish (AtomrCollectiveActor *self,
                                             GAsyncResult         *result,
                                             GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_all_to_all_v_finish (AtomrCollectiveActor *self,
                                               GAsyncResult         *result,
                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_send_finish (AtomrCollectiveActor *self,
                                       GAsyncResult         *result,
                                       GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean atomr_collective_actor_recv_finish (AtomrCollectiveActor *self,
                                       GAsyncResult         *result,
                                       GError              **error);

G_END_DECLS
