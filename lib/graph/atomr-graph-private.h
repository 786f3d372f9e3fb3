/* atomr-graph-private.h — the envelope's side of graph capture
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "graph/atomr-graph.h"

G_BEGIN_DECLS

struct _AtomrOp;

/* Called by atomr_op_submit() for a request to an actor that records into
 * @graph (any thread).  Consumes @op: the graph keeps it as a node, or
 * fails it when it cannot be captured. */
void atomr_graph_record_op (gpointer          graph,
                            struct _AtomrOp  *op);

/* For tests and benchmarks: the instantiated CUDA graph's nodes by type
 * (@n_kernels kernel nodes, @n_other all others; child graphs counted as
 * their nodes); FALSE with @error when there is none. */
gboolean atomr_graph_count_cuda_nodes (AtomrGraph  *self,
                                       guint       *n_kernels,
                                       guint       *n_other,
                                       GError     **error);
/* The adaptive polling window (µs) the next replay of @self asks for; 0
 * before a replay completed. */
guint    atomr_graph_get_replay_spin_usec (AtomrGraph *self);
/* bench-graph's experiment: replays of @self ask for no polling window
 * of their own (the actor's spin-usec alone, as before issue 17's
 * replay work) when @enabled is FALSE. */
void     atomr_graph_set_replay_spin_hint (AtomrGraph *self,
                                           gboolean    enabled);

G_END_DECLS
