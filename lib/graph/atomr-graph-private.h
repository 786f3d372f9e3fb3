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

G_END_DECLS
