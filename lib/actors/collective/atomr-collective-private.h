/* atomr-collective-private.h — what the world, its actors and groups share
 *
 * A collective request is a list of calls (one per participating rank of
 * this process) executed as one envelope operation on the first call's
 * actor, the *leader*: the operation reads every send view and writes every
 * receive view (so hazards order it against all their producers and
 * consumers), and its enqueue function issues every call inside one
 * ncclGroupStart()/ncclGroupEnd() on the streams of the calls' actors,
 * which first wait for the leader's stream and which the leader's stream
 * then waits for: the leader's fence covers the whole group.
 *
 * Threading: all actors of a world are bound to the GMainContext of the
 * thread that built it; the leader's enqueue function touches the other
 * actors' streams from that context.  The world's watchdog (asynchronous
 * NCCL errors, timeouts) runs there too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-nccl-table-private.h"

#include "actors/atomr-library-private.h"
#include "core/atomr-tensor-private.h"
#include "atomr-collective-world.h"
#include "atomr-collective-actor.h"
#include "atomr-collective-group.h"

G_BEGIN_DECLS

typedef enum {
  ATOMR_CALL_ALL_REDUCE,
  ATOMR_CALL_ALL_REDUCE_SCALED,
  ATOMR_CALL_BROADCAST,
  ATOMR_CALL_REDUCE,
  ATOMR_CALL_ALL_GATHER,
  ATOMR_CALL_REDUCE_SCATTER,
  ATOMR_CALL_ALL_TO_ALL,
  ATOMR_CALL_ALL_TO_ALL_V,
  ATOMR_CALL_SEND,
  ATOMR_CALL_RECV,
} AtomrCallKind;

typedef struct {
  AtomrCallKind         kind;
  AtomrCollectiveActor *actor;     /* ref */
  AtomrTensor          *send;      /* ref, nullable */
  AtomrTensor          *recv;      /* ref, nullable */
  AtomrReduceOp         op;
  gdouble               scale;
  guint                 root;      /* root, or peer of send/recv */
  guint64              *v;         /* all-to-all-v: send counts, send offsets,
                                      recv counts, recv offsets (n_ranks each) */
} AtomrCollectiveCall;

const gchar         *atomr_collective_call_name   (AtomrCallKind kind);
AtomrCollectiveCall *atomr_collective_call_new    (AtomrCallKind         kind,
                                                   AtomrCollectiveActor *actor,
                                                   AtomrTensor          *send,
                                                   AtomrTensor          *recv);
void                 atomr_collective_call_free   (AtomrCollectiveCall  *call);
/* Arguments of one call: views of the actor's device, contiguous, sizes,
 * dtypes the world supports, root/peer in range, aliasing. */
gboolean             atomr_collective_call_set_counts (AtomrCollectiveCall *call,
                                                      guint                n_ranks,
                                                      const guint64       *send_counts,
                                                      guint                n_send_counts,
                                                      const guint64       *send_offsets,
                                                      guint                n_send_offsets,
                                                      const guint64       *recv_counts,
                                                      guint                n_recv_counts,
                                                      const guint64       *recv_offsets,
                                                      guint                n_recv_offsets,
                                                      GError             **error);
gboolean             atomr_collective_call_check  (AtomrCollectiveCall  *call,
                                                   GError              **error);
/* Submits @calls (transfer full; already checked one by one) as one
 * operation of their first call's actor.  A list that would deadlock
 * NCCL (a collective of a local world of several ranks without one call
 * per rank, an unmatched send or receive) fails at once. */
void                 atomr_collective_calls_submit (GPtrArray           *calls,
                                                    const gchar         *operation,
                                                    gpointer             source_tag,
                                                    GCancellable        *cancellable,
                                                    GAsyncReadyCallback  callback,
                                                    gpointer             user_data);

/* World internals */
gboolean     atomr_collective_world_is_host       (AtomrCollectiveWorld *self);
guint        atomr_collective_world_get_first_rank (AtomrCollectiveWorld *self);
ncclComm_t   atomr_collective_world_get_comm      (AtomrCollectiveWorld *self,
                                                   guint                 local_index);
/* Number of failures so far: a request fails when it changed while it ran. */
guint        atomr_collective_world_get_failure_count (AtomrCollectiveWorld *self);
/* Fails the world (aborting its communicators) with @error (consumed). */
void         atomr_collective_world_fail          (AtomrCollectiveWorld *self,
                                                   GError               *error);
/* The watchdog: an enqueued request, until @token is released. */
gpointer     atomr_collective_world_track         (AtomrCollectiveWorld *self,
                                                   const gchar          *operation,
                                                   guint64               seq);
void         atomr_collective_world_untrack       (gpointer              token);
/* Waits until NCCL finished the nonblocking calls on the communicators
 * of @comms (or the world's timeout passed). */
gboolean     atomr_collective_world_wait_ready    (AtomrCollectiveWorld *self,
                                                   const gchar          *what,
                                                   GError              **error);
gboolean     atomr_nccl_check                     (ncclResult_t          result,
                                                   const gchar          *call,
                                                   GError              **error);

/* Actor internals */
AtomrCollectiveActor *atomr_collective_actor_new_internal (AtomrCollectiveWorld *world,
                                                           AtomrDevice          *device,
                                                           guint                 rank,
                                                           guint                 local_index,
                                                           GError              **error);
guint        atomr_collective_actor_get_local_index (AtomrCollectiveActor *self);
void         atomr_collective_actor_detach        (AtomrCollectiveActor *self);

G_END_DECLS
