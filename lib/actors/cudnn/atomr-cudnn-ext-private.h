/* atomr-cudnn-ext-private.h — what operations of the cuDNN actor that live
 * in other files (attention, RNNs) take from the actor besides
 * atomr-cudnn-actor-private.h (handle, workspace): plans in the actor's own
 * LRU cache under a byte key, and the RNN reserve space.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "atomr-cudnn-table-private.h"

#include "actors/cudnn/atomr-cudnn-actor.h"
#include "actors/cudnn/atomr-cudnn-actor-private.h"
#include "actors/cudnn/atomr-cudnn-graph.h"
#include "core/atomr-cuda-private.h"

G_BEGIN_DECLS

/* The plan cache, shared with the actor's own operations (one LRU, one
 * capacity, the cache-hits / cache-misses / cache-size counters).  @key is
 * everything the plan depends on, compared byte for byte.  Lookup counts a
 * hit or a miss and returns the data inserted for @key, or NULL.  Insert
 * takes @data (freed with @destroy on eviction, on any thread: plans must
 * hold host objects only).  The data returned by lookup stays valid on the
 * actor's thread until its next insert (it is the most recent entry, and
 * the capacity is at least 1).  Actor thread only. */
gpointer      atomr_cudnn_actor_lookup_plan_internal       (AtomrCudnnActor  *self,
                                                            GBytes           *key);
void          atomr_cudnn_actor_insert_plan_internal       (AtomrCudnnActor  *self,
                                                            GBytes           *key,
                                                            gpointer          data,
                                                            GDestroyNotify    destroy);

/* The RNN reserve space: one device allocation per actor, grown to @size
 * (its contents are lost when it grows), freed with the workspace.  The
 * owner is what the space holds now (set by a training forward pass,
 * checked by the backward passes); growing clears it.  Actor thread only. */
gboolean      atomr_cudnn_actor_reserve_space_internal     (AtomrCudnnActor  *self,
                                                            CUstream          stream,
                                                            gsize             size,
                                                            CUdeviceptr      *ptr,
                                                            GError          **error);
GBytes       *atomr_cudnn_actor_get_reserve_owner_internal (AtomrCudnnActor  *self);
void          atomr_cudnn_actor_set_reserve_owner_internal (AtomrCudnnActor  *self,
                                                            GBytes           *owner);

/* How many convolutions (forward, backward data, backward filter) ran
 * through a backend execution plan and how many through the legacy entry
 * points, and how many variant packs the backend runs built (the others
 * reused the plan's last pack).  Any thread. */
void          atomr_cudnn_actor_get_conv_runs_internal     (AtomrCudnnActor  *self,
                                                            guint            *backend,
                                                            guint            *legacy,
                                                            guint            *pack_builds);

/* The backend graph of one convolution (@pass 0 forward, 1 backward data,
 * 2 backward filter; x, w, y play dx, dw, dy as in the _async calls), as
 * the backend path builds it, every descriptor finalized; no handle and
 * no device needed (cuDNN must be loaded).  The operands are validated as
 * in the _async calls.  For tests. */
AtomrCudnnBackendGraph *atomr_cudnn_actor_conv_backend_graph_internal (AtomrCudnnActor   *self,
                                                                      guint              pass,
                                                                      AtomrConvolution  *conv,
                                                                      gdouble            alpha,
                                                                      AtomrTensor       *x,
                                                                      AtomrTensor       *w,
                                                                      AtomrTensor       *y,
                                                                      gdouble            beta,
                                                                      GError           **error);

/* The backend graph of finalized @graph (atomr-cudnn-graph.c) with
 * non-virtual tensor i aligned to @alignments[i] bytes, every descriptor
 * finalized, no plan yet (no handle needed; cuDNN must be loaded).  For
 * tests. */
AtomrCudnnBackendGraph *atomr_cudnn_graph_build_backend_internal (AtomrCudnnGraph *graph,
                                                                  const gint64    *alignments,
                                                                  GError         **error);

G_END_DECLS
