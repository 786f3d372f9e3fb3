/* atomr-graph.h — requests of several actors recorded into a CUDA graph
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ATOMR_INSIDE) && !defined(ATOMR_COMPILATION)
#error "Only <atomr.h> can be included directly."
#endif

#include "atomr-visibility.h"

#include <gio/gio.h>

#include "core/atomr-actor.h"
#include "nvrtc/atomr-kernel.h"

G_BEGIN_DECLS

#define ATOMR_TYPE_GRAPH (atomr_graph_get_type ())
ATOMR_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (AtomrGraph, atomr_graph, ATOMR, GRAPH, GObject)

/**
 * AtomrGraphState:
 * @ATOMR_GRAPH_STATE_EMPTY: nothing recorded yet
 * @ATOMR_GRAPH_STATE_CAPTURING: between [method@Atomr.Graph.begin_capture] and
 *   [method@Atomr.Graph.end_capture]
 * @ATOMR_GRAPH_STATE_READY: captured, can be replayed
 * @ATOMR_GRAPH_STATE_FAILED: a request could not be recorded; the graph
 *   cannot be replayed
 *
 * Where an [class@Atomr.Graph] is in its life.
 *
 * Since: 0.2
 */
typedef enum {
  ATOMR_GRAPH_STATE_EMPTY,
  ATOMR_GRAPH_STATE_CAPTURING,
  ATOMR_GRAPH_STATE_READY,
  ATOMR_GRAPH_STATE_FAILED,
} AtomrGraphState;

ATOMR_AVAILABLE_IN_ALL
AtomrGraph      *atomr_graph_new              (const gchar          *name);
ATOMR_AVAILABLE_IN_ALL
const gchar     *atomr_graph_get_name         (AtomrGraph           *self);
ATOMR_AVAILABLE_IN_ALL
AtomrGraphState  atomr_graph_get_state        (AtomrGraph           *self);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_graph_get_n_nodes      (AtomrGraph           *self);
ATOMR_AVAILABLE_IN_ALL
gchar           *atomr_graph_get_node_name    (AtomrGraph           *self,
                                               guint                 index);
ATOMR_AVAILABLE_IN_ALL
guint64          atomr_graph_get_n_replays    (AtomrGraph           *self);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_get_instantiated (AtomrGraph           *self);

ATOMR_AVAILABLE_IN_ALL
guint            atomr_graph_get_n_instantiations (AtomrGraph       *self);
ATOMR_AVAILABLE_IN_ALL
guint            atomr_graph_get_n_updates    (AtomrGraph           *self);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_set_kernel_args  (AtomrGraph           *self,
                                               guint                 node,
                                               AtomrKernelArgs      *args,
                                               GError              **error);

ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_begin_capture    (AtomrGraph           *self,
                                               AtomrActor          **actors,
                                               guint                 n_actors,
                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_end_capture      (AtomrGraph           *self,
                                               GError              **error);

ATOMR_AVAILABLE_IN_ALL
void             atomr_graph_replay_async     (AtomrGraph           *self,
                                               AtomrActor           *actor,
                                               GCancellable         *cancellable,
                                               GAsyncReadyCallback   callback,
                                               gpointer              user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_replay_finish    (AtomrGraph           *self,
                                               GAsyncResult         *result,
                                               GError              **error);

ATOMR_AVAILABLE_IN_ALL
void             atomr_graph_replay_if_async    (AtomrGraph          *self,
                                                 AtomrActor          *actor,
                                                 AtomrBuffer         *condition,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_replay_if_finish   (AtomrGraph          *self,
                                                 GAsyncResult        *result,
                                                 GError             **error);
ATOMR_AVAILABLE_IN_ALL
void             atomr_graph_replay_while_async (AtomrGraph          *self,
                                                 AtomrActor          *actor,
                                                 AtomrBuffer         *condition,
                                                 guint                max_iterations,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_replay_while_finish (AtomrGraph         *self,
                                                  GAsyncResult       *result,
                                                  GError            **error);
ATOMR_AVAILABLE_IN_ALL
void             atomr_graph_replay_switch_async  (AtomrActor         *actor,
                                                   AtomrGraph        **branches,
                                                   guint               n_branches,
                                                   AtomrBuffer        *condition,
                                                   GCancellable       *cancellable,
                                                   GAsyncReadyCallback callback,
                                                   gpointer            user_data);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_replay_switch_finish (GAsyncResult       *result,
                                                   GError            **error);

ATOMR_AVAILABLE_IN_ALL
gchar           *atomr_graph_to_dot           (AtomrGraph           *self,
                                               GError              **error);
ATOMR_AVAILABLE_IN_ALL
gboolean         atomr_graph_write_dot        (AtomrGraph           *self,
                                               const gchar          *path,
                                               GError              **error);

G_END_DECLS
