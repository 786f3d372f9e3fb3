/* atomr-collective-group.h — several collective calls as one NCCL group
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include "actors/collective/atomr-collective-actor.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_COLLECTIVE_GROUP (atomr_collective_group_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrCollectiveGroup, atomr_collective_group, ATOMR, COLLECTIVE_GROUP, GObject)

ATOMR_AVAILABLE_IN_ALL
AtomrCollectiveGroup *atomr_collective_group_new          (AtomrCollectiveWorld *world);
ATOMR_AVAILABLE_IN_ALL
guint     atomr_collective_group_get_n_calls              (AtomrCollectiveGroup *self);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_all_reduce           (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           AtomrReduceOp         op,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_broadcast            (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           guint                 root,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_reduce               (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           AtomrReduceOp         op,
                                                           guint                 root,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_all_gather           (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_reduce_scatter       (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           AtomrReduceOp         op,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_all_to_all           (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *send,
                                                           AtomrTensor          *recv,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_all_to_all_v         (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
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
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_send                 (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *tensor,
                                                           guint                 peer,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_add_recv                 (AtomrCollectiveGroup *self,
                                                           AtomrCollectiveActor *actor,
                                                           AtomrTensor          *tensor,
                                                           guint                 peer,
                                                           GError              **error);
ATOMR_AVAILABLE_IN_ALL
void      atomr_collective_group_submit_async             (AtomrCollectiveGroup *self,
                                                           GCancellable         *cancellable,
                                                           GAsyncReadyCallback   callback,
                                                           gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean  atomr_collective_group_submit_finish            (AtomrCollectiveGroup *self,
                                                           GAsyncResult         *result,
                                                           GError              **error);

G_END_DECLS
