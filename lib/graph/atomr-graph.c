/* atomr-graph.c — requests of several actors recorded into a CUDA graph
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include <glib/gstdio.h>

#include "atomr-graph-private.h"
#include "atomr-enum-types.h"
#include "core/atomr-actor-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-error.h"
#include "core/atomr-buffer-private.h"
#include "core/atomr-device-private.h"
#include "nvrtc/atomr-kernel-cache.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-module.h"
#include "nvrtc/atomr-nvrtc-private.h"

/**
 * AtomrGraph:
 *
 * A sequence of requests, made to one or more actors, recorded once and
 * replayed as one request.
 *
 * Between [method@Atomr.Graph.begin_capture] and [method@Atomr.Graph.end_capture],
 * every request submitted to one of the capturing actors is *recorded*
 * instead of run: it is checked (live buffers of the right device, a
 * request that can be captured), answered %TRUE at once ("recorded"), and
 * kept by the graph as a node, with the buffers it reads and writes.  The
 * order between nodes is the one the hazard tracker would give them: a
 * node follows the earlier nodes of its own actor, the last writer of
 * every buffer it touches and — when it writes — the readers since.
 *
 * [method@Atomr.Graph.replay_async] runs the whole graph as ONE operation of the
 * actor it is given: its hazards are the union of the nodes' reads and
 * writes, so it is ordered against other requests like any request.  On
 * a GPU the first replay builds the CUDA graph by stream capture (each
 * node's enqueue function on a capture stream of its actor, forked from
 * one origin stream and joined with events exactly where the hazards
 * above say), instantiates it, and every replay is one cuGraphLaunch().
 * On the host test device a replay runs the nodes' enqueue functions in
 * order, on the CPU: the same semantics, for the CPU test suite.
 *
 * Child graphs: a replay of a captured graph requested from a capturing
 * actor is recorded like any request; the graph goes into the CUDA graph
 * as one child graph node (a copy of its CUDA graph, captured first when
 * needed), ordered by the union of its nodes' hazards.  On the host test
 * device its nodes run in place.
 *
 * Conditional nodes: [method@Atomr.Graph.replay_if_async] and
 * [method@Atomr.Graph.replay_while_async] run a graph (the body) if, or while,
 * a device scalar (the first element of an i32/u32 buffer) is not 0;
 * [func@Atomr.Graph.replay_switch_async] runs one of several graphs, the
 * one the scalar numbers (CUDA 12.8).  A kernel of a body may set its
 * node's condition itself (see [method@Atomr.KernelArgs.add_graph_condition]).
 * Requested from a capturing actor they become CUDA conditional nodes of
 * the graph being captured (CUDA 12.4): a built-in kernel sets the node's
 * condition from the scalar on the GPU, on every replay, so a kernel
 * recorded before (or, for a while, inside the body) decides.  Conditional
 * nodes do not nest, and a graph with one cannot be a child graph (CUDA
 * limits; both refused with %ATOMR_ERROR_NOT_SUPPORTED).  The DOT export
 * draws a conditional node as a diamond and its body as a cluster; replay
 * attribution reports every body node, after its conditional node, once
 * per replay (the GPU does not say how often a body ran).
 *
 * Requests that cannot be recorded fail with %ATOMR_ERROR_NOT_SUPPORTED
 * naming the request and the reason (uploads from host memory, downloads
 * and other requests whose reply is read back on the host, `_sync`
 * calls, barriers, multi-device collectives), and [method@Atomr.Graph.end_capture]
 * then fails too: a graph never silently misses a request.
 *
 * Replay attribution: when a replay completes, every node is reported as
 * its own [signal@Atomr.Actor::after-complete] record on the actor that recorded
 * it (so an [class@Atomr.TraceRecorder] shows it), named after the request that
 * recorded it, with the replay's host times, the detail
 * "graph NAME node I/N, replay #SEQ" and dependencies on the replay and on
 * the nodes it follows.
 *
 * Threads: all actors of a graph, and the actor that replays it, must be
 * bound to the same [struct@GLib.MainContext] (checked): a replay calls the recorded
 * enqueue functions of the other actors, which is only safe on their
 * context.  begin/end_capture may be called from any thread; requests are
 * recorded on the thread that makes them, in submission order.
 *
 * Since: 0.2
 */

typedef struct
{
  AtomrOp    *op;         /* owned: its reads/writes keep the buffers alive */
  AtomrActor *actor;      /* the op's */
  gchar      *name;       /* "fill #3 on copy-1" */
  GArray     *deps;       /* guint: earlier nodes it must follow */
  CUgraphNode cu_node;    /* a launch: its kernel node in cu_graph, or NULL */
} Node;

/* New kernel arguments for a node, from atomr_graph_set_kernel_args()
 * until the replay that applies them. */
typedef struct
{
  guint            node;
  AtomrKernelArgs *args;
} Update;

static void
update_free (gpointer data)
{
  Update *u = data;

  atomr_kernel_args_unref (u->args);
  g_free (u);
}

typedef struct
{
  gint    last_writer;    /* node index, or -1 */
  GArray *readers;        /* guint node indices since the last writer */
} BufferUse;

struct _AtomrGraph
{
  GObject          parent_instance;

  GMutex           lock;          /* state, nodes, uses, record_error, actors */
  gchar           *name;
  AtomrGraphState  state;
  GPtrArray       *actors;        /* AtomrActor*, strong: those capturing */
  AtomrDevice     *device;        /* strong, once capture began */
  GMainContext    *context;       /* strong: the actors' context */
  GPtrArray       *nodes;         /* Node* */
  GHashTable      *uses;          /* AtomrBuffer* -> BufferUse*, during capture */
  GError          *record_error;  /* the first request that could not be recorded */
  GPtrArray       *pending;       /* Update*: for the next replay submitted */
  GPtrArray       *extra_written; /* AtomrBuffer*, strong: named by new arguments */
  GPtrArray       *extra_read;
  GPtrArray       *union_written; /* AtomrBuffer*, strong: what the nodes wrote at capture */
  GPtrArray       *union_read;    /* and read without writing: a replay's hazards */
  GPtrArray       *node_actors;   /* AtomrActor*, strong: each recording actor once,
                                   * those of child graphs and conditional bodies too */
  gboolean         has_conditional;  /* a node is a conditional: set at end_capture */
  GArray          *switches;      /* guint: the nodes that are switch nodes (end_capture) */
  gboolean         takes_condition;  /* a launch has a graph-condition argument */

  /* The actors' context only (replays): */
  AtomrKernel     *cond_begin;    /* the built-in condition kernels, when this graph */
  AtomrKernel     *cond_next;     /* is the body of a conditional node (GPU) */
  AtomrKernel     *cond_switch;   /* (of branch 0 for a switch) */
  AtomrKernel     *cond_count;    /* a while whose body sets the condition itself */

  CUgraph          cu_graph;
  CUgraphExec      exec;
  guint            generation;    /* of cu_graph and exec */
  guint64          n_replays;     /* atomic */
  guint            n_instantiations;  /* atomic */
  guint            n_updates;     /* atomic: kernel nodes updated in place */
  guint            replay_usec;   /* atomic: a replay's typical time, enqueue ->
                                   * completion seen (0: none completed yet) */
  gboolean         no_spin_hint;  /* atomic: bench-graph's experiment */
};

typedef enum
{
  COND_NONE,
  COND_IF,
  COND_WHILE,
  COND_SWITCH,
} CondKind;

/* A switch node records the branch each of its runs chose, for replay
 * attribution: the built-in kernel numbers its runs (a u32 counter in
 * device memory) and writes (run, value) into slot run % SWITCH_RING of
 * a ring in mapped host memory; a replay knows the run numbers it
 * launched and reads its slots when it completes. */
#define SWITCH_RING 256

typedef struct
{
  AtomrGraph *graph;
  GPtrArray  *updates;    /* Update*: new kernel arguments this replay applies */
  gboolean    as_child;   /* recorded into another graph: a child graph node */

  /* A conditional replay (atomr_graph_replay_if/while_async): @graph is
   * the body, run when / while the int32 at the start of @condition is
   * not 0. */
  CondKind     cond;
  AtomrBuffer *condition;       /* strong */
  AtomrBuffer *counter;         /* strong, while: the iterations of a run (u32) */
  guint        max_iterations;  /* while */
  guint        host_iterations; /* host device: body runs of the last run */
  AtomrDevice *device;          /* strong, with a wrapper */
  CUgraph      wrap_graph;      /* not recorded, GPU: the conditional node */
  CUgraphExec  wrap_exec;       /* in a graph of its own */
  guint        wrap_generation;

  /* A switch (atomr_graph_replay_switch_async): @branches are the
   * bodies, [0] is @graph; @counter numbers the runs. */
  GPtrArray   *branches;        /* AtomrGraph*, strong */
  GPtrArray  **branch_updates;  /* new kernel arguments per branch ([0]: @updates) */
  guint32     *ring;            /* 2 * SWITCH_RING: (run, value) pairs */
  CUdeviceptr  ring_dev;
  guint        ring_generation;
  gboolean     ring_host;       /* g_malloc()ed: the host test device */
  gboolean     ring_reset;      /* zero @counter before the next run */
  guint32      next_run;        /* the number of the next run launched */
  gint64       run;             /* not recorded: the number of its run, -1 before */

  /* A replay of a graph with switch nodes: the run each launched, by
   * node (-1: not a switch node, or not launched). */
  gint64      *switch_runs;
} ReplayRequest;

static gboolean replay_enqueue (AtomrOp *op, GError **error);
static gboolean cond_enqueue (AtomrOp *op, GError **error);
static gboolean apply_updates (AtomrGraph *self, GPtrArray *updates, gboolean *rebuild,
                               GString *how, GError **error);

/* A node that is a replay of another graph: that graph, else NULL. */
static AtomrGraph *
node_child (Node *node)
{
  if (atomr_op_get_enqueue (node->op) != replay_enqueue)
    return NULL;
  return ((ReplayRequest *) atomr_op_get_data (node->op))->graph;
}

/* A node that is a conditional replay: its request, else NULL. */
static ReplayRequest *
node_conditional (Node *node)
{
  if (atomr_op_get_enqueue (node->op) != cond_enqueue)
    return NULL;
  return atomr_op_get_data (node->op);
}

/* A child graph or the body of a conditional node: that graph, else NULL. */
static AtomrGraph *
node_inner (Node *node)
{
  ReplayRequest *req = node_conditional (node);

  return req != NULL ? req->graph : node_child (node);
}

/* The bodies of a conditional request: one, or a switch's branches. */
static guint
req_n_bodies (ReplayRequest *req)
{
  return req->branches != NULL ? req->branches->len : 1;
}

static AtomrGraph *
req_body (ReplayRequest *req,
          guint          k)
{
  return k == 0 ? req->graph : g_ptr_array_index (req->branches, k);
}

static GPtrArray **
req_updates (ReplayRequest *req,
             guint          k)
{
  return k == 0 ? &req->updates : &req->branch_updates[k];
}

/* How many graphs a node holds (child graph, conditional bodies). */
static guint
node_n_inner (Node *node)
{
  ReplayRequest *req = node_conditional (node);

  if (req != NULL)
    return req_n_bodies (req);
  return node_child (node) != NULL ? 1 : 0;
}

static AtomrGraph *
node_inner_at (Node  *node,
               guint  k)
{
  ReplayRequest *req = node_conditional (node);

  return req != NULL ? req_body (req, k) : node_child (node);
}

/* The streams (and setups) of every actor a host replay runs, children
 * included (the actors' context). */
static gboolean
graph_ensure_streams (AtomrGraph  *self,
                      GError     **error)
{
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);

      if (!atomr_actor_ensure_stream (node->actor, error))
        return FALSE;
      for (guint k = 0; k < node_n_inner (node); k++)
        if (!graph_ensure_streams (node_inner_at (node, k), error))
          return FALSE;
    }
  return TRUE;
}

enum {
  PROP_0,
  PROP_NAME,
  PROP_STATE,
  PROP_N_NODES,
  PROP_N_REPLAYS,
  PROP_INSTANTIATED,
  PROP_N_INSTANTIATIONS,
  PROP_N_UPDATES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (AtomrGraph, atomr_graph, G_TYPE_OBJECT)

static void
node_free (gpointer data)
{
  Node *node = data;

  atomr_op_discard (node->op);
  g_free (node->name);
  g_array_unref (node->deps);
  g_free (node);
}

static void
buffer_use_free (gpointer data)
{
  BufferUse *use = data;

  g_array_unref (use->readers);
  g_free (use);
}

static const gchar *
state_name (AtomrGraphState state)
{
  switch (state)
    {
    case ATOMR_GRAPH_STATE_EMPTY: return "empty";
    case ATOMR_GRAPH_STATE_CAPTURING: return "capturing";
    case ATOMR_GRAPH_STATE_READY: return "ready";
    case ATOMR_GRAPH_STATE_FAILED: return "failed";
    default: return "unknown";
    }
}

/* Drops the CUDA objects (any thread: only at finalize or on the context). */
static void
graph_drop_cuda (AtomrGraph *self)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gboolean held;

  if (self->exec == NULL && self->cu_graph == NULL)
    return;
  /* Objects of a rebuilt context died with it. */
  held = cu != NULL && self->device != NULL && atomr_device_hold (self->device, self->generation);
  if (held)
    {
      if (self->exec)
        cu->cuGraphExecDestroy (self->exec);
      if (self->cu_graph)
        cu->cuGraphDestroy (self->cu_graph);
      atomr_device_release (self->device);
    }
  self->exec = NULL;
  self->cu_graph = NULL;
  for (guint i = 0; self->nodes && i < self->nodes->len; i++)
    ((Node *) g_ptr_array_index (self->nodes, i))->cu_node = NULL;
}

static void
atomr_graph_finalize (GObject *object)
{
  AtomrGraph *self = ATOMR_GRAPH (object);

  /* A capture still open: the actors let go of us. */
  if (self->actors)
    for (guint i = 0; i < self->actors->len; i++)
      atomr_actor_clear_capture (g_ptr_array_index (self->actors, i), self);
  graph_drop_cuda (self);
  g_clear_object (&self->cond_begin);
  g_clear_object (&self->cond_next);
  g_clear_object (&self->cond_switch);
  g_clear_object (&self->cond_count);
  g_clear_pointer (&self->actors, g_ptr_array_unref);
  g_clear_pointer (&self->nodes, g_ptr_array_unref);
  g_clear_pointer (&self->uses, g_hash_table_unref);
  g_clear_error (&self->record_error);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->extra_written, g_ptr_array_unref);
  g_clear_pointer (&self->extra_read, g_ptr_array_unref);
  g_clear_pointer (&self->union_written, g_ptr_array_unref);
  g_clear_pointer (&self->union_read, g_ptr_array_unref);
  g_clear_pointer (&self->node_actors, g_ptr_array_unref);
  g_clear_pointer (&self->switches, g_array_unref);
  g_clear_object (&self->device);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_free (self->name);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (atomr_graph_parent_class)->finalize (object);
}

static void
atomr_graph_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  AtomrGraph *self = ATOMR_GRAPH (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, atomr_graph_get_name (self));
      break;
    case PROP_STATE:
      g_value_set_enum (value, atomr_graph_get_state (self));
      break;
    case PROP_N_NODES:
      g_value_set_uint (value, atomr_graph_get_n_nodes (self));
      break;
    case PROP_N_REPLAYS:
      g_value_set_uint64 (value, atomr_graph_get_n_replays (self));
      break;
    case PROP_INSTANTIATED:
      g_value_set_boolean (value, atomr_graph_get_instantiated (self));
      break;
    case PROP_N_INSTANTIATIONS:
      g_value_set_uint (value, atomr_graph_get_n_instantiations (self));
      break;
    case PROP_N_UPDATES:
      g_value_set_uint (value, atomr_graph_get_n_updates (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_graph_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  AtomrGraph *self = ATOMR_GRAPH (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_free (self->name);
      self->name = g_value_dup_string (value);
      if (self->name == NULL)
        self->name = g_strdup ("graph");
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_graph_class_init (AtomrGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_graph_finalize;
  object_class->get_property = atomr_graph_get_property;
  object_class->set_property = atomr_graph_set_property;

  /**
   * AtomrGraph:name:
   *
   * A name for messages, traces and the DOT export.
   *
   * Since: 0.2
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, "graph",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:state:
   *
   * Where the graph is in its life.  Notified on the thread that began or
   * ended the capture.
   *
   * Since: 0.2
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, ATOMR_TYPE_GRAPH_STATE, ATOMR_GRAPH_STATE_EMPTY,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:n-nodes:
   *
   * How many requests were recorded.
   *
   * Since: 0.2
   */
  properties[PROP_N_NODES] =
    g_param_spec_uint ("n-nodes", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:n-replays:
   *
   * How many replays completed successfully.  Notified on the actors'
   * context.
   *
   * Since: 0.2
   */
  properties[PROP_N_REPLAYS] =
    g_param_spec_uint64 ("n-replays", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:instantiated:
   *
   * Whether a CUDA graph was built and instantiated (on a GPU, by the
   * first replay).  Always %FALSE on the host test device.
   *
   * Since: 0.2
   */
  properties[PROP_INSTANTIATED] =
    g_param_spec_boolean ("instantiated", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:n-instantiations:
   *
   * How many times a CUDA graph was instantiated: once by the first
   * replay on a GPU, and again whenever new kernel arguments
   * ([method@Atomr.Graph.set_kernel_args]) could not be applied to the
   * instantiated graph in place.  Always 0 on the host test device.
   * Notified on the actors' context.
   *
   * Since: 0.2
   */
  properties[PROP_N_INSTANTIATIONS] =
    g_param_spec_uint ("n-instantiations", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrGraph:n-updates:
   *
   * How many kernel nodes of the instantiated CUDA graph took new
   * arguments in place (cuGraphExecKernelNodeSetParams() or
   * cuGraphExecUpdate()), without a new instantiation.  Notified on the
   * actors' context.
   *
   * Since: 0.2
   */
  properties[PROP_N_UPDATES] =
    g_param_spec_uint ("n-updates", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_graph_init (AtomrGraph *self)
{
  g_mutex_init (&self->lock);
  self->name = g_strdup ("graph");
  self->nodes = g_ptr_array_new_with_free_func (node_free);
}

/**
 * atomr_graph_new:
 * @name: (nullable): a name for messages and traces, or %NULL for "graph"
 *
 * Makes an empty graph; record into it with [method@Atomr.Graph.begin_capture].
 *
 * Returns: (transfer full): a new [class@Atomr.Graph]
 *
 * Since: 0.2
 */
AtomrGraph *
atomr_graph_new (const gchar *name)
{
  return g_object_new (ATOMR_TYPE_GRAPH, "name", name, NULL);
}

/**
 * atomr_graph_get_name:
 * @self: an [class@Atomr.Graph]
 *
 * Gets the graph's name.
 *
 * This is the value of the [property@Atomr.Graph:name] property.
 *
 * Returns: the graph's name
 *
 * Since: 0.2
 */
const gchar *
atomr_graph_get_name (AtomrGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), NULL);
  return self->name;
}

/**
 * atomr_graph_get_state:
 * @self: an [class@Atomr.Graph]
 *
 * Gets where the graph is in its life.
 *
 * This is the value of the [property@Atomr.Graph:state] property.
 *
 * Returns: where the graph is in its life
 *
 * Since: 0.2
 */
AtomrGraphState
atomr_graph_get_state (AtomrGraph *self)
{
  AtomrGraphState state;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), ATOMR_GRAPH_STATE_EMPTY);
  g_mutex_lock (&self->lock);
  state = self->state;
  g_mutex_unlock (&self->lock);
  return state;
}

/**
 * atomr_graph_get_n_nodes:
 * @self: an [class@Atomr.Graph]
 *
 * Gets how many requests were recorded.
 *
 * This is the value of the [property@Atomr.Graph:n-nodes] property.
 *
 * Returns: how many requests were recorded
 *
 * Since: 0.2
 */
guint
atomr_graph_get_n_nodes (AtomrGraph *self)
{
  guint n;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), 0);
  g_mutex_lock (&self->lock);
  n = self->nodes->len;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * atomr_graph_get_node_name:
 * @self: an [class@Atomr.Graph]
 * @index: a node, from 0
 *
 * The request that recorded node @index, as messages and traces name it
 * ("fill #3 on copy-1").
 *
 * Returns: (transfer full) (nullable): the name, or %NULL when @index is
 *   out of range
 *
 * Since: 0.2
 */
gchar *
atomr_graph_get_node_name (AtomrGraph *self,
                           guint       index)
{
  gchar *name = NULL;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), NULL);
  g_mutex_lock (&self->lock);
  if (index < self->nodes->len)
    name = g_strdup (((Node *) g_ptr_array_index (self->nodes, index))->name);
  g_mutex_unlock (&self->lock);
  return name;
}

/**
 * atomr_graph_get_n_replays:
 * @self: an [class@Atomr.Graph]
 *
 * Gets how many replays completed successfully.
 *
 * This is the value of the [property@Atomr.Graph:n-replays] property.
 *
 * Returns: how many replays completed successfully
 *
 * Since: 0.2
 */
guint64
atomr_graph_get_n_replays (AtomrGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), 0);
  return (guint64) g_atomic_pointer_get ((gpointer *) &self->n_replays);
}

/**
 * atomr_graph_get_instantiated:
 * @self: an [class@Atomr.Graph]
 *
 * Gets whether a CUDA graph was built and instantiated.
 *
 * This is the value of the [property@Atomr.Graph:instantiated] property.
 *
 * Returns: whether a CUDA graph was built and instantiated
 *
 * Since: 0.2
 */
gboolean
atomr_graph_get_instantiated (AtomrGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  return g_atomic_pointer_get (&self->exec) != NULL;
}

/**
 * atomr_graph_get_n_instantiations:
 * @self: an [class@Atomr.Graph]
 *
 * Gets how many times a CUDA graph was instantiated.
 *
 * This is the value of the [property@Atomr.Graph:n-instantiations] property.
 *
 * Returns: how many times a CUDA graph was instantiated
 *
 * Since: 0.2
 */
guint
atomr_graph_get_n_instantiations (AtomrGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), 0);
  return (guint) g_atomic_int_get (&self->n_instantiations);
}

/**
 * atomr_graph_get_n_updates:
 * @self: an [class@Atomr.Graph]
 *
 * Gets how many kernel nodes took new arguments in place.
 *
 * This is the value of the [property@Atomr.Graph:n-updates] property.
 *
 * Returns: how many kernel nodes took new arguments without a new
 *   instantiation
 *
 * Since: 0.2
 */
guint
atomr_graph_get_n_updates (AtomrGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), 0);
  return (guint) g_atomic_int_get (&self->n_updates);
}

static gboolean
op_uses (AtomrOp     *op,
         AtomrBuffer *buffer)
{
  for (guint pass = 0; pass < 2; pass++)
    for (guint b = 0; b < atomr_op_get_n_buffers (op, pass); b++)
      if (atomr_op_get_buffer (op, pass, b) == buffer)
        return TRUE;
  return FALSE;
}

/* Under lock: the first node other than @except that uses @buffer, now or
 * by a pending update, or -1. */
static gint
node_using (AtomrGraph  *self,
            AtomrBuffer *buffer,
            guint        except)
{
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      if (i != except && op_uses (node->op, buffer))
        return (gint) i;
    }
  for (guint p = 0; self->pending && p < self->pending->len; p++)
    {
      Update *u = g_ptr_array_index (self->pending, p);
      if (u->node == except)
        continue;
      for (guint a = 0; a < u->args->args->len; a++)
        if (g_array_index (u->args->args, AtomrKernelArg, a).buffer == buffer)
          return (gint) u->node;
    }
  return -1;
}

/**
 * atomr_graph_set_kernel_args:
 * @self: an [class@Atomr.Graph], captured
 * @node: a node that records an [method@Atomr.NvrtcActor.launch_async] request
 * @args: the new arguments, checked against the kernel's parameter table
 *   as a launch checks them
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives a recorded kernel launch new arguments (scalars and buffers) for
 * the replays submitted from now on.  The graph is not captured again:
 * the next replay updates the kernel node of the instantiated CUDA graph
 * in place (cuGraphExecKernelNodeSetParams(), or cuGraphExecUpdate() when
 * that is refused) and instantiates it again only when neither works;
 * [property@Atomr.Graph:n-updates] and [property@Atomr.Graph:n-instantiations]
 * count which happened, and the replay's trace record says so in its detail.
 *
 * The order between nodes was fixed at capture: a buffer argument must be
 * one that @node already uses or one that no other node of the graph uses
 * (%ATOMR_ERROR_INVALID_ARGUMENT otherwise).  The replay is ordered against
 * other requests by the new buffers too.
 *
 * Call it on the thread that submits the replays.
 *
 * Returns: %TRUE when the arguments were taken
 *
 * Since: 0.2
 */
gboolean
atomr_graph_set_kernel_args (AtomrGraph       *self,
                             guint             node,
                             AtomrKernelArgs  *args,
                             GError          **error)
{
  Node *n;
  Update *u;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (args == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s: set_kernel_args for node %u needs arguments (args is NULL)",
                   self->name, node);
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_READY)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s is %s: kernel arguments can be changed only in a captured graph",
                   self->name, state_name (self->state));
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  if (node >= self->nodes->len)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s has %u nodes: there is no node %u", self->name, self->nodes->len, node);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  n = g_ptr_array_index (self->nodes, node);
  if (!atomr_nvrtc_op_is_launch (n->op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "graph %s: node %u (%s) is not a kernel launch; only launches take new "
                   "arguments", self->name, node, n->name);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  if (!atomr_nvrtc_launch_check_args (n->op, args, error))
    {
      g_prefix_error (error, "graph %s: node %u (%s): ", self->name, node, n->name);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  for (guint a = 0; a < args->args->len; a++)
    {
      AtomrBuffer *buffer = g_array_index (args->args, AtomrKernelArg, a).buffer;
      gint other;

      if (buffer == NULL)
        continue;
      if (op_uses (n->op, buffer))
        continue;
      other = node_using (self, buffer, node);
      if (other >= 0)
        {
          Node *o = g_ptr_array_index (self->nodes, other);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "graph %s: argument %u of node %u (%s) is a buffer that node %d (%s) "
                       "uses; the order between nodes was fixed at capture, so a new buffer "
                       "argument must be one the node already uses or one no other node uses",
                       self->name, a, node, n->name, other, o->name);
          g_mutex_unlock (&self->lock);
          return FALSE;
        }
    }
  if (self->pending == NULL)
    self->pending = g_ptr_array_new_with_free_func (update_free);
  for (guint p = 0; p < self->pending->len; p++)
    if (((Update *) g_ptr_array_index (self->pending, p))->node == node)
      {
        g_ptr_array_remove_index (self->pending, p);
        break;
      }
  if (self->extra_written == NULL)
    {
      self->extra_written = g_ptr_array_new_with_free_func (g_object_unref);
      self->extra_read = g_ptr_array_new_with_free_func (g_object_unref);
    }
  for (guint a = 0; a < args->args->len; a++)
    {
      AtomrKernelArg *arg = &g_array_index (args->args, AtomrKernelArg, a);
      GPtrArray *list = arg->write ? self->extra_written : self->extra_read;
      if (arg->buffer && !g_ptr_array_find (list, arg->buffer, NULL))
        g_ptr_array_add (list, g_object_ref (arg->buffer));
    }
  if (atomr_kernel_args_have_condition (args))
    self->takes_condition = TRUE;
  u = g_new0 (Update, 1);
  u->node = node;
  u->args = atomr_kernel_args_ref (args);
  g_ptr_array_add (self->pending, u);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Capture                                                              */

static void
clear_captures (AtomrGraph *self)
{
  for (guint i = 0; i < self->actors->len; i++)
    atomr_actor_clear_capture (g_ptr_array_index (self->actors, i), self);
}

/**
 * atomr_graph_begin_capture:
 * @self: an [class@Atomr.Graph], empty
 * @actors: (array length=n_actors): the actors whose requests are recorded
 * @n_actors: how many
 * @error: return location for a [struct@GLib.Error]
 *
 * From now until [method@Atomr.Graph.end_capture], every request made to one of
 * @actors (from any thread) is recorded into @self instead of run.  The
 * actors must live on one device and be bound to one [struct@GLib.MainContext]; an
 * actor records into one graph at a time.  A graph is captured once.
 *
 * Returns: %TRUE when the capture began
 *
 * Since: 0.2
 */
gboolean
atomr_graph_begin_capture (AtomrGraph  *self,
                           AtomrActor **actors,
                           guint        n_actors,
                           GError     **error)
{
  g_autoptr(GPtrArray) list = NULL;
  AtomrDevice *device = NULL;
  GMainContext *context = NULL;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (actors == NULL || n_actors == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s: begin_capture needs at least one actor (n_actors is %u)",
                   self->name, n_actors);
      return FALSE;
    }
  list = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < n_actors; i++)
    {
      AtomrActor *actor = actors[i];

      if (!ATOMR_IS_ACTOR (actor))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "graph %s: actors[%u] is not an AtomrActor", self->name, i);
          return FALSE;
        }
      if (atomr_actor_get_device (actor) == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "graph %s: actors[%u] (%s) was constructed without a device; make actors "
                       "with their _new() function", self->name, i, G_OBJECT_TYPE_NAME (actor));
          return FALSE;
        }
      if (device == NULL)
        {
          device = atomr_actor_get_device (actor);
          context = atomr_actor_get_context (actor);
        }
      else if (atomr_actor_get_device (actor) != device)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "graph %s: actors[%u] (%s) is on device %d, actors[0] on device %d; "
                       "a graph records the actors of one device",
                       self->name, i, atomr_actor_get_name (actor),
                       atomr_device_get_ordinal (atomr_actor_get_device (actor)),
                       atomr_device_get_ordinal (device));
          return FALSE;
        }
      else if (atomr_actor_get_context (actor) != context)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "graph %s: actors[%u] (%s) is bound to another GMainContext than "
                       "actors[0]; a replay runs every node on one context",
                       self->name, i, atomr_actor_get_name (actor));
          return FALSE;
        }
      if (!g_ptr_array_find (list, actor, NULL))
        g_ptr_array_add (list, g_object_ref (actor));
    }

  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_EMPTY)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s is %s: a graph is captured once; make a new AtomrGraph",
                   self->name, state_name (self->state));
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  for (guint i = 0; i < list->len; i++)
    if (!atomr_actor_set_capture (g_ptr_array_index (list, i), self, error))
      {
        for (guint j = 0; j < i; j++)
          atomr_actor_clear_capture (g_ptr_array_index (list, j), self);
        g_prefix_error (error, "graph %s: ", self->name);
        g_mutex_unlock (&self->lock);
        return FALSE;
      }
  self->actors = g_steal_pointer (&list);
  self->device = g_object_ref (device);
  self->context = context ? g_main_context_ref (context) : g_main_context_ref (g_main_context_default ());
  self->uses = g_hash_table_new_full (NULL, NULL, NULL, buffer_use_free);
  self->state = ATOMR_GRAPH_STATE_CAPTURING;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  return TRUE;
}

static void
add_dep (GArray *deps,
         guint   index)
{
  for (guint i = 0; i < deps->len; i++)
    if (g_array_index (deps, guint, i) == index)
      return;
  g_array_append_val (deps, index);
}

/* Under lock: what node @index must follow, and the buffers' new state. */
static void
register_node (AtomrGraph *self,
               Node       *node,
               guint       index)
{
  /* Program order on its own actor: one capture stream per actor. */
  for (guint i = index; i-- > 0; )
    {
      Node *prev = g_ptr_array_index (self->nodes, i);
      if (prev->actor == node->actor)
        {
          add_dep (node->deps, i);
          break;
        }
    }
  for (guint pass = 0; pass < 2; pass++)
    {
      gboolean writes = pass == 1;
      for (guint b = 0; b < atomr_op_get_n_buffers (node->op, writes); b++)
        {
          AtomrBuffer *buffer = atomr_op_get_buffer (node->op, writes, b);
          BufferUse *use = g_hash_table_lookup (self->uses, buffer);

          if (use == NULL)
            {
              use = g_new0 (BufferUse, 1);
              use->last_writer = -1;
              use->readers = g_array_new (FALSE, FALSE, sizeof (guint));
              g_hash_table_insert (self->uses, buffer, use);
            }
          if (use->last_writer >= 0 && (guint) use->last_writer != index)
            add_dep (node->deps, (guint) use->last_writer);
          if (writes)
            {
              for (guint r = 0; r < use->readers->len; r++)
                if (g_array_index (use->readers, guint, r) != index)
                  add_dep (node->deps, g_array_index (use->readers, guint, r));
              g_array_set_size (use->readers, 0);
              use->last_writer = (gint) index;
            }
          else
            add_dep (use->readers, index);
        }
    }
}

/* A request the capture cannot take: the graph remembers the first such
 * error (end_capture reports it), the request fails with it. */
static void
refuse_recording (AtomrGraph *self,
                  AtomrOp    *op,
                  GError     *error)
{
  g_mutex_lock (&self->lock);
  if (self->record_error == NULL)
    self->record_error = g_error_copy (error);
  g_mutex_unlock (&self->lock);
  atomr_op_fail (op, error);
}

void
atomr_graph_record_op (gpointer  graph,
                       AtomrOp  *op)
{
  AtomrGraph *self = graph;
  GError *error = NULL;
  Node *node;

  if (atomr_op_get_enqueue (op) == replay_enqueue &&
      ((ReplayRequest *) atomr_op_get_data (op))->graph->has_conditional)
    {
      /* CUDA: "a graph with conditional nodes cannot be used in a child
       * node". */
      error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                           "graph %s has conditional nodes: CUDA cannot embed it as a child "
                           "graph of graph %s; record its requests into %s directly",
                           ((ReplayRequest *) atomr_op_get_data (op))->graph->name, self->name,
                           self->name);
      return refuse_recording (self, op, error);
    }
  if (atomr_op_get_enqueue (op) == replay_enqueue &&
      ((ReplayRequest *) atomr_op_get_data (op))->graph->takes_condition)
    {
      AtomrGraph *child = ((ReplayRequest *) atomr_op_get_data (op))->graph;

      error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                           "graph %s has launches that take a conditional node's handle "
                           "(atomr_kernel_args_add_graph_condition): it can only be the body of a "
                           "conditional node, not a child graph of graph %s", child->name, self->name);
      return refuse_recording (self, op, error);
    }
  if (!atomr_op_check_capturable (op, &error))
    {
      return refuse_recording (self, op, error);
    }

  node = g_new0 (Node, 1);
  node->op = op;
  node->actor = atomr_op_get_actor (op);
  node->name = atomr_op_describe (op);
  node->deps = g_array_new (FALSE, FALSE, sizeof (guint));

  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_CAPTURING)
    {
      /* The capture ended while this request was being submitted. */
      g_mutex_unlock (&self->lock);
      error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "%s was submitted while graph %s ended its capture; it was neither "
                           "recorded nor run", node->name, self->name);
      node->op = NULL;
      g_free (node->name);
      g_array_unref (node->deps);
      g_free (node);
      atomr_op_fail (op, error);
      return;
    }
  register_node (self, node, self->nodes->len);
  g_ptr_array_add (self->nodes, node);
  g_mutex_unlock (&self->lock);
  if (node_inner (node))
    ((ReplayRequest *) atomr_op_get_data (op))->as_child = TRUE;

  /* Outside the lock: the reply may run right away and end the capture. */
  atomr_op_reply_recorded (op);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_NODES]);
}

/**
 * atomr_graph_end_capture:
 * @self: an [class@Atomr.Graph] that is capturing
 * @error: return location for a [struct@GLib.Error]
 *
 * Ends the capture: the actors run their requests again.  Fails — and the
 * graph cannot be replayed — when a request could not be recorded (the
 * error names the first one) or when nothing was recorded.
 *
 * Returns: %TRUE when the graph is ready to replay
 *
 * Since: 0.2
 */
gboolean
atomr_graph_end_capture (AtomrGraph  *self,
                         GError     **error)
{
  gboolean ok = TRUE;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_CAPTURING)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s is %s, not capturing: call atomr_graph_begin_capture() first",
                   self->name, state_name (self->state));
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  clear_captures (self);
  g_clear_pointer (&self->actors, g_ptr_array_unref);
  g_clear_pointer (&self->uses, g_hash_table_unref);
  if (self->record_error)
    {
      g_set_error (error, self->record_error->domain, self->record_error->code,
                   "graph %s: the capture failed, a request could not be recorded: %s",
                   self->name, self->record_error->message);
      ok = FALSE;
    }
  else if (self->nodes->len == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s: nothing was recorded between begin_capture and end_capture",
                   self->name);
      ok = FALSE;
    }
  if (ok)
    {
      /* What every replay needs, once: the union of the nodes' hazards (a
       * buffer written is not read) and the actors that recorded them. */
      g_autoptr(GHashTable) written = g_hash_table_new (NULL, NULL);
      g_autoptr(GHashTable) read = g_hash_table_new (NULL, NULL);

      self->union_written = g_ptr_array_new_with_free_func (g_object_unref);
      self->union_read = g_ptr_array_new_with_free_func (g_object_unref);
      self->node_actors = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint i = 0; i < self->nodes->len; i++)
        {
          Node *node = g_ptr_array_index (self->nodes, i);
          for (guint b = 0; b < atomr_op_get_n_buffers (node->op, TRUE); b++)
            {
              AtomrBuffer *buffer = atomr_op_get_buffer (node->op, TRUE, b);
              if (g_hash_table_add (written, buffer))
                g_ptr_array_add (self->union_written, g_object_ref (buffer));
            }
          if (!g_ptr_array_find (self->node_actors, node->actor, NULL))
            g_ptr_array_add (self->node_actors, g_object_ref (node->actor));
          if (atomr_nvrtc_launch_takes_condition (node->op))
            self->takes_condition = TRUE;
          if (node_conditional (node))
            self->has_conditional = TRUE;
          if (node_conditional (node) && node_conditional (node)->cond == COND_SWITCH)
            {
              if (self->switches == NULL)
                self->switches = g_array_new (FALSE, FALSE, sizeof (guint));
              g_array_append_val (self->switches, i);
            }
          for (guint k = 0; k < node_n_inner (node); k++)
            {
              /* Its nodes are attributed too: listen to their actors. */
              GPtrArray *inner = node_inner_at (node, k)->node_actors;
              for (guint a = 0; a < inner->len; a++)
                if (!g_ptr_array_find (self->node_actors, g_ptr_array_index (inner, a), NULL))
                  g_ptr_array_add (self->node_actors, g_object_ref (g_ptr_array_index (inner, a)));
            }
        }
      for (guint i = 0; i < self->nodes->len; i++)
        {
          Node *node = g_ptr_array_index (self->nodes, i);
          for (guint b = 0; b < atomr_op_get_n_buffers (node->op, FALSE); b++)
            {
              AtomrBuffer *buffer = atomr_op_get_buffer (node->op, FALSE, b);
              if (!g_hash_table_contains (written, buffer) && g_hash_table_add (read, buffer))
                g_ptr_array_add (self->union_read, g_object_ref (buffer));
            }
        }
    }
  self->state = ok ? ATOMR_GRAPH_STATE_READY : ATOMR_GRAPH_STATE_FAILED;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  return ok;
}

/* ------------------------------------------------------------------ */
/* Replay                                                               */


static void
replay_request_clear (gpointer data)
{
  ReplayRequest *req = data;

  if (req->wrap_exec != NULL || req->wrap_graph != NULL)
    {
      /* An executable still running is freed by the driver when it
       * completes; objects of a rebuilt context died with it. */
      const AtomrCudaDriver *cu = ATOMR_CU;
      if (cu != NULL && atomr_device_hold (req->device, req->wrap_generation))
        {
          if (req->wrap_exec)
            cu->cuGraphExecDestroy (req->wrap_exec);
          if (req->wrap_graph)
            cu->cuGraphDestroy (req->wrap_graph);
          atomr_device_release (req->device);
        }
      req->wrap_exec = NULL;
      req->wrap_graph = NULL;
    }
  if (req->ring != NULL && req->ring_host)
    g_free (req->ring);
  else if (req->ring != NULL)
    {
      /* Mapped memory of a rebuilt context died with it. */
      const AtomrCudaDriver *cu = ATOMR_CU;
      if (cu != NULL && atomr_device_hold (req->device, req->ring_generation))
        {
          cu->cuMemFreeHost (req->ring);
          atomr_device_release (req->device);
        }
    }
  req->ring = NULL;
  if (req->branch_updates != NULL)
    {
      for (guint k = 1; k < req->branches->len; k++)
        g_clear_pointer (&req->branch_updates[k], g_ptr_array_unref);
      g_clear_pointer (&req->branch_updates, g_free);
    }
  g_clear_pointer (&req->branches, g_ptr_array_unref);
  g_clear_pointer (&req->switch_runs, g_free);
  g_clear_object (&req->graph);
  g_clear_pointer (&req->updates, g_ptr_array_unref);
  g_clear_object (&req->condition);
  g_clear_object (&req->counter);
  g_clear_object (&req->device);
}

static gboolean
cu_ok (CUresult      res,
       const gchar  *what,
       AtomrGraph   *self,
       GError      **error)
{
  if (atomr_cuda_check (res, what, error))
    return TRUE;
  g_prefix_error (error, "graph %s: ", self->name);
  return FALSE;
}

/* ------------------------------------------------------------------ */
/* Conditional nodes                                                    */

/* The built-in condition kernels.  begin runs before the conditional node:
 * it sets the node's condition from the int32 at @cond (and zeroes the
 * iteration counter of a while); next ends every iteration of a while
 * body: it counts the iteration and sets the condition again, false once
 * @max iterations ran.  cudaGraphSetConditional() is a device builtin
 * (declared here: NVRTC has no runtime headers). */
static const gchar cond_source[] =
  "typedef __device_builtin__ unsigned long long cudaGraphConditionalHandle;\n"
  "extern \"C\" __device__ __cudart_builtin__ void\n"
  "cudaGraphSetConditional (cudaGraphConditionalHandle handle, unsigned int value);\n"
  "\n"
  "extern \"C\" __global__ void\n"
  "atomr_cond_begin (cudaGraphConditionalHandle handle, const int *cond,\n"
  "                  unsigned int *iterations, unsigned int max)\n"
  "{\n"
  "  if (iterations != 0)\n"
  "    *iterations = 0u;\n"
  "  cudaGraphSetConditional (handle, (*cond != 0 && max > 0u) ? 1u : 0u);\n"
  "}\n"
  "\n"
  "extern \"C\" __global__ void\n"
  "atomr_cond_next (cudaGraphConditionalHandle handle, const int *cond,\n"
  "                 unsigned int *iterations, unsigned int max)\n"
  "{\n"
  "  unsigned int n = *iterations + 1u;\n"
  "  *iterations = n;\n"
  "  cudaGraphSetConditional (handle, (*cond != 0 && n < max) ? 1u : 0u);\n"
  "}\n"
  "\n"
  "extern \"C\" __global__ void\n"
  "atomr_cond_switch (cudaGraphConditionalHandle handle, const unsigned int *cond,\n"
  "                   unsigned int *runs, volatile unsigned int *ring)\n"
  "{\n"
  "  unsigned int value = *cond;\n"
  "  unsigned int run = *runs;\n"
  "  unsigned int slot = 2u * (run % " G_STRINGIFY (SWITCH_RING) "u);\n"
  "  *runs = run + 1u;\n"
  "  ring[slot + 1u] = value;\n"
  "  __threadfence_system ();\n"
  "  ring[slot] = run;\n"
  "  cudaGraphSetConditional (handle, value);\n"
  "}\n"
  "\n"
  "extern \"C\" __global__ void\n"
  "atomr_cond_count (cudaGraphConditionalHandle handle, const int *cond,\n"
  "                  unsigned int *iterations, unsigned int max)\n"
  "{\n"
  "  unsigned int n = *iterations + 1u;\n"
  "  *iterations = n;\n"
  "  if (n >= max)\n"
  "    cudaGraphSetConditional (handle, 0u);\n"
  "}\n";

/* NOT_SUPPORTED unless the driver has conditional nodes (CUDA 12.4;
 * SWITCH nodes: 12.8). */
static gboolean
cond_check_driver (AtomrGraph  *body,
                   CondKind     kind,
                   GError     **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gint need = kind == COND_SWITCH ? 12080 : 12040;

  if (cu != NULL && cu->driver_version >= need && cu->cuGraphConditionalHandleCreate != NULL &&
      cu->cuGraphAddNode != NULL)
    return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
               "graph %s: %s graph nodes need a driver for CUDA %d.%d or newer "
               "(cuGraphConditionalHandleCreate, cuGraphAddNode); this driver is CUDA %d.%d "
               "(version %d)", body->name, kind == COND_SWITCH ? "switch" : "conditional",
               need / 1000, (need % 1000) / 10, cu ? cu->driver_version / 1000 : 0,
               cu ? (cu->driver_version % 1000) / 10 : 0, cu ? cu->driver_version : 0);
  return FALSE;
}

/* The condition kernels on @body's device, compiled (or found in the
 * kernel cache) once.  The actors' context. */
static gboolean
cond_load_kernels (AtomrGraph  *body,
                   GError     **error)
{
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrModule) module = NULL;

  if (!cond_check_driver (body, COND_IF, error))
    return FALSE;
  if (body->cond_begin != NULL && !atomr_kernel_is_stale (body->cond_begin) &&
      body->cond_next != NULL && !atomr_kernel_is_stale (body->cond_next) &&
      body->cond_switch != NULL && !atomr_kernel_is_stale (body->cond_switch) &&
      body->cond_count != NULL && !atomr_kernel_is_stale (body->cond_count))
    return TRUE;
  g_clear_object (&body->cond_begin);
  g_clear_object (&body->cond_next);
  g_clear_object (&body->cond_switch);
  g_clear_object (&body->cond_count);
  options = atomr_compile_options_new ();
  atomr_compile_options_set_arch (options, "native");
  module = atomr_nvrtc_compile_for_device (cond_source, "atomr-graph-condition.cu", options,
                                           atomr_kernel_cache_get_default (), body->device, error);
  if (module == NULL ||
      (body->cond_begin = atomr_kernel_new_loaded (body->device, module, "atomr_cond_begin", error)) == NULL ||
      (body->cond_next = atomr_kernel_new_loaded (body->device, module, "atomr_cond_next", error)) == NULL ||
      (body->cond_switch = atomr_kernel_new_loaded (body->device, module, "atomr_cond_switch", error)) == NULL ||
      (body->cond_count = atomr_kernel_new_loaded (body->device, module, "atomr_cond_count", error)) == NULL)
    {
      g_clear_object (&body->cond_begin);
      g_clear_object (&body->cond_next);
      g_clear_object (&body->cond_switch);
      g_prefix_error (error, "graph %s: the built-in condition kernels: ", body->name);
      return FALSE;
    }
  return TRUE;
}

/* A switch's ring of chosen branches, in mapped host memory of @req's
 * device (the host test device: plain memory).  Before any capture: the
 * allocation is not stream work.  The actors' context, the device not
 * held. */
static gboolean
switch_ring_ensure (ReplayRequest  *req,
                    GError        **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  AtomrGraph *body = req->graph;
  gsize size = 2 * SWITCH_RING * sizeof (guint32);
  void *host = NULL;
  CUdeviceptr dev = 0;
  gboolean ok;

  if (req->cond != COND_SWITCH)
    return TRUE;
  if (req->device == NULL)
    req->device = g_object_ref (body->device);
  if (atomr_device_is_host (req->device))
    {
      if (req->ring == NULL)
        {
          req->ring = g_malloc0 (size);
          req->ring_host = TRUE;
          req->ring_reset = TRUE;
        }
      return TRUE;
    }
  if (req->ring != NULL && req->ring_generation == atomr_device_get_generation (req->device))
    return TRUE;
  req->ring = NULL;   /* died with a rebuilt context */
  if (!atomr_device_enter (req->device, error))
    return FALSE;
  ok = cu_ok (cu->cuMemHostAlloc (&host, size, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
              "cuMemHostAlloc (switch ring)", body, error) &&
       cu_ok (cu->cuMemHostGetDevicePointer (&dev, host, 0), "cuMemHostGetDevicePointer", body, error);
  if (ok)
    {
      memset (host, 0xff, size);   /* no run numbered yet */
      req->ring = host;
      req->ring_dev = dev;
      req->ring_generation = atomr_device_get_generation (req->device);
      req->ring_reset = TRUE;
    }
  else if (host != NULL)
    cu->cuMemFreeHost (host);
  atomr_device_leave (req->device);
  return ok;
}

/* The branch that run @run of switch @req chose, or -1 when the ring no
 * longer holds it (more than SWITCH_RING runs since) or it never ran. */
static gint64
switch_chosen (ReplayRequest *req,
               gint64         run)
{
  const volatile guint32 *ring = req->ring;
  guint slot;
  guint32 value;

  if (run < 0 || ring == NULL)
    return -1;
  slot = 2 * (guint) (run % SWITCH_RING);
  value = ring[slot + 1];
  if (ring[slot] != (guint32) run)
    return -1;
  return value;
}

/* Numbers the next run of switch @req (launched on @stream now; NULL on
 * the host device), zeroing its counter first after a new ring. */
static gboolean
switch_next_run (ReplayRequest  *req,
                 CUstream        stream,
                 gint64         *run,
                 GError        **error)
{
  if (req->ring_reset)
    {
      if (stream == NULL)
        *(guint32 *) atomr_buffer_get_host_data (req->counter) = 0;
      else if (!cu_ok (ATOMR_CU->cuMemsetD32Async (atomr_buffer_get_ptr (req->counter), 0, 1, stream),
                       "cuMemsetD32Async (switch run counter)", req->graph, error))
        return FALSE;
      req->ring_reset = FALSE;
      req->next_run = 0;
    }
  *run = req->next_run++;
  return TRUE;
}

/* Writes @handle over the graph-condition placeholders among the kernel
 * parameters of @graph's kernel nodes (and of its child graphs' nodes):
 * @graph is the copy of @body in a conditional node's body graph.
 * Returns how many it wrote, or -1 with @error.  The device held. */
static gint
patch_condition (AtomrGraph                *body,
                 CUgraph                    graph,
                 CUgraphConditionalHandle   handle,
                 GError                   **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  const guint64 placeholder = ATOMR_GRAPH_CONDITION_PLACEHOLDER;
  g_autofree CUgraphNode *nodes = NULL;
  size_t n = 0;
  gint written = 0;

  if (!cu_ok (cu->cuGraphGetNodes (graph, NULL, &n), "cuGraphGetNodes", body, error))
    return -1;
  nodes = g_new0 (CUgraphNode, MAX (n, 1));
  if (!cu_ok (cu->cuGraphGetNodes (graph, nodes, &n), "cuGraphGetNodes", body, error))
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      CUgraphNodeType type;
      CUDA_KERNEL_NODE_PARAMS params;
      g_autofree void **values = NULL;
      guint n_params = 0;
      gboolean hit = FALSE;

      if (!cu_ok (cu->cuGraphNodeGetType (nodes[i], &type), "cuGraphNodeGetType", body, error))
        return -1;
      if (type == CU_GRAPH_NODE_TYPE_GRAPH)
        {
          CUgraph child = NULL;
          gint more;

          if (!cu_ok (cu->cuGraphChildGraphNodeGetGraph (nodes[i], &child),
                      "cuGraphChildGraphNodeGetGraph", body, error) ||
              (more = patch_condition (body, child, handle, error)) < 0)
            return -1;
          written += more;
          continue;
        }
      if (type != CU_GRAPH_NODE_TYPE_KERNEL)
        continue;
      memset (&params, 0, sizeof params);
      if (!cu_ok (cu->cuGraphKernelNodeGetParams (nodes[i], &params), "cuGraphKernelNodeGetParams",
                  body, error))
        return -1;
      if (params.kernelParams == NULL || params.func == NULL)
        continue;
      /* The parameters' sizes from the function (CUDA 12.4, as
       * conditional nodes). */
      for (;;)
        {
          size_t offset = 0, size = 0;
          if (cu->cuFuncGetParamInfo (params.func, n_params, &offset, &size) != CUDA_SUCCESS)
            break;
          n_params++;
        }
      values = g_new (void *, MAX (n_params, 1));
      for (guint p = 0; p < n_params; p++)
        {
          size_t offset = 0, size = 0;

          values[p] = params.kernelParams[p];
          cu->cuFuncGetParamInfo (params.func, p, &offset, &size);
          if (size == sizeof placeholder && memcmp (params.kernelParams[p], &placeholder, size) == 0)
            {
              values[p] = &handle;
              hit = TRUE;
              written++;
            }
        }
      if (!hit)
        continue;
      params.kernelParams = values;
      params.extra = NULL;
      if (!cu_ok (cu->cuGraphKernelNodeSetParams (nodes[i], &params),
                  "cuGraphKernelNodeSetParams (graph condition handle)", body, error))
        return -1;
    }
  return written;
}

/* Adds the conditional node to the graph @stream is capturing, after what
 * the stream captured so far: a kernel that sets the condition, then the
 * conditional node, whose body graphs hold the bodies as child graph
 * nodes (and, for a while, the kernel that sets the condition again).
 * The device held, the bodies built, the kernels loaded and a switch's
 * ring allocated. */
static gboolean
cond_capture (ReplayRequest  *req,
              CUstream        stream,
              GError        **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  AtomrGraph *body = req->graph;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph capture = NULL;
  const CUgraphNode *deps = NULL;
  size_t n_deps = 0;
  CUcontext ctx = NULL;
  CUgraphConditionalHandle handle = 0;
  CUgraphNode cond_node = NULL, next = NULL;
  CUgraphNodeParams params;
  CUdeviceptr cond_ptr = atomr_buffer_get_ptr (req->condition);
  CUdeviceptr iter_ptr = req->counter != NULL ? atomr_buffer_get_ptr (req->counter) : 0;
  CUdeviceptr ring_ptr = req->ring_dev;
  unsigned int max = req->cond == COND_WHILE ? req->max_iterations : 1u;
  void *args[] = { &handle, &cond_ptr, &iter_ptr, &max };
  void *switch_args[] = { &handle, &cond_ptr, &iter_ptr, &ring_ptr };
  guint n_bodies = req_n_bodies (req);

  if (!cond_check_driver (body, req->cond, error))
    return FALSE;
  if (!cu_ok (cu->cuStreamGetCaptureInfo (stream, &status, NULL, &capture, NULL, NULL, NULL),
              "cuStreamGetCaptureInfo", body, error))
    return FALSE;
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || capture == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "graph %s: a conditional node is added to a graph being captured, but the "
                   "capture is not active (status %d)", body->name, (int) status);
      return FALSE;
    }
  if (!cu_ok (cu->cuCtxGetCurrent (&ctx), "cuCtxGetCurrent", body, error) ||
      !cu_ok (cu->cuGraphConditionalHandleCreate (&handle, capture, ctx, 0,
                                                  CU_GRAPH_COND_ASSIGN_DEFAULT),
              "cuGraphConditionalHandleCreate", body, error))
    return FALSE;
  if (req->cond == COND_SWITCH)
    {
      if (!cu_ok (cu->cuLaunchKernel (atomr_kernel_get_function (body->cond_switch), 1, 1, 1, 1, 1, 1,
                                      0, stream, switch_args, NULL),
                  "cuLaunchKernel (atomr_cond_switch)", body, error))
        return FALSE;
    }
  else if (!cu_ok (cu->cuLaunchKernel (atomr_kernel_get_function (body->cond_begin), 1, 1, 1, 1, 1, 1,
                                       0, stream, args, NULL),
                   "cuLaunchKernel (atomr_cond_begin)", body, error))
    return FALSE;
  if (!cu_ok (cu->cuStreamGetCaptureInfo (stream, &status, NULL, &capture, &deps, NULL, &n_deps),
              "cuStreamGetCaptureInfo", body, error))
    return FALSE;

  memset (&params, 0, sizeof params);
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = handle;
  params.conditional.type = req->cond == COND_WHILE ? CU_GRAPH_COND_TYPE_WHILE :
                            req->cond == COND_SWITCH ? CU_GRAPH_COND_TYPE_SWITCH : CU_GRAPH_COND_TYPE_IF;
  params.conditional.size = n_bodies;
  params.conditional.ctx = ctx;
  if (!cu_ok (cu->cuGraphAddNode (&cond_node, capture, deps, NULL, n_deps, &params),
              "cuGraphAddNode (conditional)", body, error))
    return FALSE;
  for (guint k = 0; k < n_bodies; k++)
    {
      CUgraphNode child = NULL;

      if (!cu_ok (cu->cuGraphAddChildGraphNode (&child, params.conditional.phGraph_out[k], NULL, 0,
                                                req_body (req, k)->cu_graph),
                  "cuGraphAddChildGraphNode (conditional body)", req_body (req, k), error))
        return FALSE;
      if (req_body (req, k)->takes_condition)
        {
          /* Its kernels get the node's handle: in the copy of the body
           * that the node holds (the body's own graph keeps the
           * placeholder). */
          CUgraph copy = NULL;
          gint written;

          if (!cu_ok (cu->cuGraphChildGraphNodeGetGraph (child, &copy), "cuGraphChildGraphNodeGetGraph",
                      body, error) ||
              (written = patch_condition (req_body (req, k), copy, handle, error)) < 0)
            return FALSE;
          if (written == 0)
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                           "graph %s: a launch takes the conditional node's handle, but no kernel "
                           "node of the captured body holds its placeholder", req_body (req, k)->name);
              return FALSE;
            }
        }
      if (req->cond == COND_WHILE)
        {
          CUgraphNodeParams kp;

          memset (&kp, 0, sizeof kp);
          kp.type = CU_GRAPH_NODE_TYPE_KERNEL;
          /* A body that sets the condition itself: only the limit. */
          kp.kernel.func = atomr_kernel_get_function (body->takes_condition ? body->cond_count
                                                                            : body->cond_next);
          kp.kernel.gridDimX = kp.kernel.gridDimY = kp.kernel.gridDimZ = 1;
          kp.kernel.blockDimX = kp.kernel.blockDimY = kp.kernel.blockDimZ = 1;
          kp.kernel.kernelParams = args;
          if (!cu_ok (cu->cuGraphAddNode (&next, params.conditional.phGraph_out[k], &child, NULL, 1, &kp),
                      "cuGraphAddNode (atomr_cond_next)", body, error))
            return FALSE;
        }
    }
  return cu_ok (cu->cuStreamUpdateCaptureDependencies (stream, &cond_node, NULL, 1,
                                                      CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                "cuStreamUpdateCaptureDependencies", body, error);
}

/* A conditional request that is not recorded (GPU): its conditional node
 * in a graph of its own, instantiated once for the request and uploaded
 * to @upload, the stream that launches it.  The actors' context, the
 * device not held, the bodies built and the kernels loaded. */
static gboolean
cond_build_wrapper (ReplayRequest  *req,
                    CUstream        upload,
                    GError        **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  AtomrGraph *body = req->graph;
  g_autoptr(AtomrStream) stream = NULL;
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  gboolean ok;

  if (!switch_ring_ensure (req, error))
    return FALSE;
  stream = atomr_stream_new (body->device, error);
  if (stream == NULL || !atomr_device_enter (body->device, error))
    return FALSE;
  ok = cu_ok (cu->cuStreamBeginCapture (stream->handle, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              "cuStreamBeginCapture", body, error);
  if (ok)
    {
      /* Always leave capture mode, also after a failure. */
      gboolean captured = cond_capture (req, stream->handle, error);
      CUresult res = cu->cuStreamEndCapture (stream->handle, &graph);
      ok = captured && cu_ok (res, "cuStreamEndCapture", body, error);
    }
  if (ok)
    ok = cu_ok (cu->cuGraphInstantiateWithFlags (&exec, graph, 0), "cuGraphInstantiateWithFlags",
                body, error);
  if (ok && upload != NULL && !cu_ok (cu->cuGraphUpload (exec, upload), "cuGraphUpload", body, error))
    {
      cu->cuGraphExecDestroy (exec);
      ok = FALSE;
    }
  if (!ok && graph)
    cu->cuGraphDestroy (graph);
  atomr_device_leave (body->device);
  if (!ok)
    return FALSE;
  if (req->device == NULL)
    req->device = g_object_ref (body->device);
  req->wrap_graph = graph;
  req->wrap_exec = exec;
  req->wrap_generation = stream->generation;
  return TRUE;
}

/* Runs the nodes of @self in recording order on the CPU (host device). */
static gboolean
run_nodes_host (AtomrGraph   *self,
                AtomrStream  *stream,
                GError      **error)
{
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      if (!atomr_op_enqueue_on (node->op, stream, error))
        {
          g_prefix_error (error, "graph %s: node %u (%s) failed: ", self->name, i, node->name);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
cond_enqueue (AtomrOp  *op,
              GError  **error)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *body = req->graph;

  if (atomr_op_is_host (op))
    {
      /* What the GPU does, on the CPU: the condition is read before the
       * body and again after every run of a while body. */
      const volatile gint32 *cond = atomr_buffer_get_host_data (req->condition);
      guint n = 0;

      if (req->cond == COND_SWITCH)
        {
          /* Branch cond[0] when there is one: as atomr_cond_switch. */
          guint32 value = (guint32) cond[0];
          guint32 *runs = atomr_buffer_get_host_data (req->counter);
          guint32 run;

          if (!req->as_child && !switch_next_run (req, NULL, &req->run, error))
            return FALSE;
          run = *runs;
          *runs = run + 1;
          req->ring[2 * (run % SWITCH_RING) + 1] = value;
          req->ring[2 * (run % SWITCH_RING)] = run;
          if (value < req_n_bodies (req))
            {
              if (!run_nodes_host (req_body (req, value), atomr_op_get_stream (op), error))
                {
                  g_prefix_error (error, "branch %u: ", value);
                  return FALSE;
                }
              n = 1;
            }
        }
      else if (req->cond == COND_IF)
        {
          if (cond[0] != 0)
            {
              if (!run_nodes_host (body, atomr_op_get_stream (op), error))
                return FALSE;
              n = 1;
            }
        }
      else
        {
          while (cond[0] != 0 && n < req->max_iterations)
            {
              if (!run_nodes_host (body, atomr_op_get_stream (op), error))
                {
                  g_prefix_error (error, "iteration %u: ", n + 1);
                  return FALSE;
                }
              n++;
            }
          *(guint32 *) atomr_buffer_get_host_data (req->counter) = n;
        }
      req->host_iterations = n;
      return TRUE;
    }
  if (req->as_child)
    return cond_capture (req, atomr_op_get_cu_stream (op), error);
  if (req->cond == COND_SWITCH &&
      !switch_next_run (req, atomr_op_get_cu_stream (op), &req->run, error))
    return FALSE;
  if (!cu_ok (ATOMR_CU->cuGraphLaunch (req->wrap_exec, atomr_op_get_cu_stream (op)),
              "cuGraphLaunch", body, error))
    {
      req->run = -1;
      return FALSE;
    }
  return TRUE;
}

static gboolean graph_build (AtomrGraph *self, CUstream upload, GError **error);

/* A child graph or conditional body, before its parent's capture: its
 * new kernel arguments (*@updates, consumed) applied and its CUDA graph
 * built.  The actors' context, the device not held. */
static gboolean
inner_ready (AtomrGraph  *child,
             GPtrArray  **updates,
             GError     **error)
{
  if (*updates != NULL && (*updates)->len > 0)
    {
      g_autoptr(GString) how = g_string_new (NULL);
      gboolean rebuild = FALSE;

      if (!apply_updates (child, *updates, &rebuild, how, error))
        return FALSE;
      if (rebuild)
        graph_drop_cuda (child);
    }
  g_clear_pointer (updates, g_ptr_array_unref);
  if (child->exec != NULL && child->generation != atomr_device_get_generation (child->device))
    {
      child->exec = NULL;
      child->cu_graph = NULL;
    }
  return child->exec != NULL || graph_build (child, NULL, error);
}

/* Builds and instantiates the CUDA graph by stream capture, and uploads
 * it to @upload (the stream that will launch it; NULL for a graph that is
 * only embedded into others), so the first replay does not pay the
 * upload and every launch finds the graph's work resident.  On the
 * actors' context, the device not held (this holds it). */
static gboolean
graph_build (AtomrGraph  *self,
             CUstream     upload,
             GError     **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  guint n = self->nodes->len;
  g_autoptr(GHashTable) streams = g_hash_table_new_full (NULL, NULL, NULL,
                                                         (GDestroyNotify) atomr_stream_unref);
  g_autoptr(AtomrStream) origin = NULL;
  g_autofree CUevent *after = g_new0 (CUevent, n);
  GPtrArray *joins = g_ptr_array_new ();
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  gboolean ok = TRUE, capturing = FALSE;

  /* Children first: each is captured on its own and embedded as a child
   * graph node (a copy of its CUDA graph, with its new arguments); so is
   * the body of a conditional node, in the node's body graph. */
  for (guint i = 0; i < n; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      ReplayRequest *creq;

      if (node_n_inner (node) == 0)
        continue;
      creq = atomr_op_get_data (node->op);
      for (guint k = 0; k < node_n_inner (node); k++)
        if (!inner_ready (node_inner_at (node, k), req_updates (creq, k), error))
          {
            g_prefix_error (error, "graph %s: %s node %u: ", self->name,
                            creq->cond == COND_NONE ? "child" : "conditional", i);
            g_ptr_array_unref (joins);
            return FALSE;
          }
      /* Loading a module and allocating are no stream work: before the
       * capture. */
      if (creq->cond != COND_NONE &&
          (!cond_load_kernels (creq->graph, error) || !switch_ring_ensure (creq, error)))
        {
          g_prefix_error (error, "graph %s: conditional node %u: ", self->name, i);
          g_ptr_array_unref (joins);
          return FALSE;
        }
    }

  /* Streams first: making them holds the device itself. */
  origin = atomr_stream_new (self->device, error);
  if (origin == NULL)
    {
      g_ptr_array_unref (joins);
      return FALSE;
    }
  for (guint i = 0; ok && i < n; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      AtomrStream *stream;

      if (g_hash_table_contains (streams, node->actor))
        continue;
      ok = atomr_actor_ensure_stream (node->actor, error) &&
           (stream = atomr_stream_new (self->device, error)) != NULL;
      if (ok)
        g_hash_table_insert (streams, node->actor, stream);
    }
  if (!ok || !atomr_device_enter (self->device, error))
    {
      g_ptr_array_unref (joins);
      return FALSE;
    }

  ok = cu_ok (cu->cuStreamBeginCapture (origin->handle, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
              "cuStreamBeginCapture", self, error);
  capturing = ok;

  /* Fork: every actor's capture stream starts after the origin. */
  if (ok)
    {
      GHashTableIter iter;
      gpointer value;
      CUevent fork = NULL;

      ok = cu_ok (cu->cuEventCreate (&fork, CU_EVENT_DISABLE_TIMING), "cuEventCreate", self, error) &&
           cu_ok (cu->cuEventRecord (fork, origin->handle), "cuEventRecord", self, error);
      g_hash_table_iter_init (&iter, streams);
      while (ok && g_hash_table_iter_next (&iter, NULL, &value))
        ok = cu_ok (cu->cuStreamWaitEvent (((AtomrStream *) value)->handle, fork, 0),
                    "cuStreamWaitEvent", self, error);
      if (fork)
        g_ptr_array_add (joins, fork);
    }

  for (guint i = 0; ok && i < n; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      AtomrStream *stream = g_hash_table_lookup (streams, node->actor);

      /* Join what it follows on other actors' streams. */
      for (guint d = 0; ok && d < node->deps->len; d++)
        {
          guint j = g_array_index (node->deps, guint, d);
          Node *dep = g_ptr_array_index (self->nodes, j);
          if (dep->actor != node->actor)
            ok = cu_ok (cu->cuStreamWaitEvent (stream->handle, after[j], 0),
                        "cuStreamWaitEvent", self, error);
        }
      if (ok && !atomr_op_enqueue_on (node->op, stream, error))
        {
          g_prefix_error (error, "graph %s: recording node %u (%s) failed: ", self->name, i, node->name);
          ok = FALSE;
        }
      node->cu_node = NULL;
      if (ok && atomr_nvrtc_op_is_launch (node->op))
        {
          /* The launch just captured is the stream's only dependency now:
           * remember its kernel node for parameter updates. */
          CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
          const CUgraphNode *last = NULL;
          size_t n_last = 0;
          CUgraphNodeType type;

          if (cu->cuStreamGetCaptureInfo (stream->handle, &status, NULL, NULL, &last, NULL,
                                          &n_last) == CUDA_SUCCESS &&
              status == CU_STREAM_CAPTURE_STATUS_ACTIVE && n_last == 1 && last != NULL &&
              cu->cuGraphNodeGetType (last[0], &type) == CUDA_SUCCESS &&
              type == CU_GRAPH_NODE_TYPE_KERNEL)
            node->cu_node = last[0];
        }
      if (ok)
        ok = cu_ok (cu->cuEventCreate (&after[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate", self, error) &&
             cu_ok (cu->cuEventRecord (after[i], stream->handle), "cuEventRecord", self, error);
    }

  /* Join every actor's stream back into the origin. */
  if (ok)
    {
      GHashTableIter iter;
      gpointer value;

      g_hash_table_iter_init (&iter, streams);
      while (ok && g_hash_table_iter_next (&iter, NULL, &value))
        {
          CUevent join = NULL;
          ok = cu_ok (cu->cuEventCreate (&join, CU_EVENT_DISABLE_TIMING), "cuEventCreate", self, error) &&
               cu_ok (cu->cuEventRecord (join, ((AtomrStream *) value)->handle), "cuEventRecord", self, error) &&
               cu_ok (cu->cuStreamWaitEvent (origin->handle, join, 0), "cuStreamWaitEvent", self, error);
          if (join)
            g_ptr_array_add (joins, join);
        }
    }

  if (capturing)
    {
      /* Always leave capture mode, also after a failure. */
      CUresult res = cu->cuStreamEndCapture (origin->handle, &graph);
      if (ok)
        ok = cu_ok (res, "cuStreamEndCapture (a recorded request did something that cannot be "
                    "captured, such as a synchronous allocation or a host wait)", self, error);
    }
  if (ok)
    ok = cu_ok (cu->cuGraphInstantiateWithFlags (&exec, graph, 0), "cuGraphInstantiateWithFlags",
                self, error);
  if (ok && upload != NULL)
    {
      ok = cu_ok (cu->cuGraphUpload (exec, upload), "cuGraphUpload", self, error);
      if (!ok)
        cu->cuGraphExecDestroy (exec);
    }

  for (guint i = 0; i < n; i++)
    if (after[i])
      cu->cuEventDestroy (after[i]);
  for (guint i = 0; i < joins->len; i++)
    cu->cuEventDestroy (g_ptr_array_index (joins, i));
  g_ptr_array_unref (joins);
  if (!ok && graph)
    cu->cuGraphDestroy (graph);
  atomr_device_leave (self->device);
  if (!ok)
    return FALSE;

  self->cu_graph = graph;
  self->generation = origin->generation;
  g_atomic_pointer_set (&self->exec, exec);
  g_atomic_int_inc (&self->n_instantiations);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INSTANTIATED]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_INSTANTIATIONS]);
  return TRUE;
}

/* Applies the replay's new kernel arguments to the nodes and, when the
 * CUDA graph exists, to its kernel nodes in place.  *@rebuild is set when
 * the instantiated graph must be dropped and built again; @how says
 * what happened, for the replay's trace record.  On the actors' context,
 * the device not held. */
static gboolean
apply_updates (AtomrGraph     *self,
               GPtrArray      *updates,
               gboolean       *rebuild,
               GString        *how,
               GError        **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gboolean whole = FALSE;
  guint in_place = 0;

  *rebuild = FALSE;
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < updates->len; i++)
    {
      Update *u = g_ptr_array_index (updates, i);
      atomr_nvrtc_launch_set_args (((Node *) g_ptr_array_index (self->nodes, u->node))->op, u->args);
    }
  g_mutex_unlock (&self->lock);

  g_string_append_printf (how, "; new kernel arguments for %u node%s", updates->len,
                          updates->len == 1 ? "" : "s");
  if (atomr_device_is_host (self->device) || self->exec == NULL)
    return TRUE;   /* the first build captures them */

  if (!atomr_device_enter (self->device, error))
    return FALSE;
  for (guint i = 0; i < updates->len && !*rebuild; i++)
    {
      Update *u = g_ptr_array_index (updates, i);
      Node *node = g_ptr_array_index (self->nodes, u->node);
      CUDA_KERNEL_NODE_PARAMS params;
      CUresult res;

      if (node->cu_node == NULL)
        {
          g_string_append_printf (how, ", re-instantiated: node %u was not captured as one kernel node",
                                  u->node);
          *rebuild = TRUE;
          break;
        }
      memset (&params, 0, sizeof params);
      res = cu->cuGraphKernelNodeGetParams (node->cu_node, &params);
      if (res == CUDA_SUCCESS)
        {
          params.kernelParams = atomr_nvrtc_launch_get_params (node->op);
          params.extra = NULL;
          res = cu->cuGraphKernelNodeSetParams (node->cu_node, &params);
        }
      if (res != CUDA_SUCCESS)
        {
          const gchar *name = NULL;
          cu->cuGetErrorName (res, &name);
          g_string_append_printf (how, ", re-instantiated: the kernel node of node %u refused its "
                                  "parameters (%s)", u->node, name ? name : "unknown error");
          *rebuild = TRUE;
          break;
        }
      if (!whole && cu->cuGraphExecKernelNodeSetParams (self->exec, node->cu_node, &params) == CUDA_SUCCESS)
        in_place++;
      else
        whole = TRUE;   /* the graph has them: update the executable from it below */
    }
  if (!*rebuild && whole)
    {
      CUgraphExecUpdateResultInfo info;

      memset (&info, 0, sizeof info);
      if (cu->cuGraphExecUpdate (self->exec, self->cu_graph, &info) == CUDA_SUCCESS)
        {
          g_string_append (how, ", applied by cuGraphExecUpdate");
          in_place = updates->len;
        }
      else
        {
          g_string_append_printf (how, ", re-instantiated: cuGraphExecUpdate refused (result %d)",
                                  (int) info.result);
          *rebuild = TRUE;
        }
    }
  else if (!*rebuild)
    g_string_append (how, ", updated in place");
  atomr_device_leave (self->device);

  if (!*rebuild && in_place > 0)
    {
      g_atomic_int_add (&self->n_updates, (gint) in_place);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_UPDATES]);
    }
  return TRUE;
}

/* Runs on the replaying actor's context before the device is held. */
static gboolean
replay_prepare (AtomrOp  *op,
                GError  **error)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *self = req->graph;
  gboolean rebuild = FALSE;

  if (self->takes_condition)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "graph %s has launches that take a conditional node's handle "
                   "(atomr_kernel_args_add_graph_condition): it runs only as the body of a "
                   "conditional node (atomr_graph_replay_while/if/switch_async), not on its own",
                   self->name);
      return FALSE;
    }
  if (req->updates != NULL && req->updates->len > 0)
    {
      g_autoptr(GString) how = g_string_new (NULL);

      g_string_printf (how, "graph %s, %u nodes", self->name, self->nodes->len);
      if (!apply_updates (self, req->updates, &rebuild, how, error))
        return FALSE;
      atomr_op_set_detail (op, how->str);
      if (rebuild)
        graph_drop_cuda (self);
    }

  if (atomr_device_is_host (self->device))
    {
      /* The nodes' actors get their streams (and setup) now. */
      return graph_ensure_streams (self, error);
    }
  if (self->exec != NULL && self->generation != atomr_device_get_generation (self->device))
    {
      /* The context was rebuilt: the graph died with it. */
      self->exec = NULL;
      self->cu_graph = NULL;
    }
  if (self->exec != NULL)
    return TRUE;
  /* Uploaded to the stream that launches it. */
  return atomr_actor_ensure_stream (atomr_op_get_actor (op), error) &&
         graph_build (self, atomr_actor_get_cu_stream (atomr_op_get_actor (op)), error);
}

/* Numbers the runs of @self's switch nodes that the replay @req launches
 * now on @stream (NULL: the host device), for attribution. */
static gboolean
replay_number_switches (AtomrGraph     *self,
                        ReplayRequest  *req,
                        CUstream        stream,
                        GError        **error)
{
  if (self->switches == NULL)
    return TRUE;
  if (req->switch_runs == NULL)
    req->switch_runs = g_new (gint64, self->nodes->len);
  for (guint i = 0; i < self->nodes->len; i++)
    req->switch_runs[i] = -1;
  for (guint s = 0; s < self->switches->len; s++)
    {
      guint i = g_array_index (self->switches, guint, s);
      ReplayRequest *creq = node_conditional (g_ptr_array_index (self->nodes, i));

      if (!switch_next_run (creq, stream, &req->switch_runs[i], error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
replay_enqueue (AtomrOp  *op,
                GError  **error)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *self = req->graph;

  if (atomr_op_is_host (op))
    {
      /* The host device: run the nodes in recording order, on the CPU. */
      return (req->as_child || replay_number_switches (self, req, NULL, error)) &&
             run_nodes_host (self, atomr_op_get_stream (op), error);
    }
  if (req->as_child)
    {
      /* Recorded into another graph, whose capture runs this: the graph
       * goes in as a child graph node after what the stream captured. */
      const AtomrCudaDriver *cu = ATOMR_CU;
      CUstream stream = atomr_op_get_cu_stream (op);
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      CUgraph capture = NULL;
      const CUgraphNode *deps = NULL;
      size_t n_deps = 0;
      CUgraphNode child = NULL;

      if (!cu_ok (cu->cuStreamGetCaptureInfo (stream, &status, NULL, &capture, &deps, NULL, &n_deps),
                  "cuStreamGetCaptureInfo", self, error))
        return FALSE;
      if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || capture == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "graph %s: embedded in another graph, but that graph's capture is not "
                       "active (status %d)", self->name, (int) status);
          return FALSE;
        }
      return cu_ok (cu->cuGraphAddChildGraphNode (&child, capture, deps, n_deps, self->cu_graph),
                    "cuGraphAddChildGraphNode", self, error) &&
             cu_ok (cu->cuStreamUpdateCaptureDependencies (stream, &child, NULL, 1,
                                                          CU_STREAM_SET_CAPTURE_DEPENDENCIES),
                    "cuStreamUpdateCaptureDependencies", self, error);
    }
  if (!replay_number_switches (self, req, atomr_op_get_cu_stream (op), error))
    return FALSE;
  if (!cu_ok (ATOMR_CU->cuGraphLaunch (self->exec, atomr_op_get_cu_stream (op)), "cuGraphLaunch",
              self, error))
    {
      /* The runs just numbered never ran: number afresh from the next
       * launch (a run in flight then reads "branch not known"). */
      for (guint i = 0; self->switches != NULL && i < self->switches->len; i++)
        node_conditional (g_ptr_array_index (self->nodes, g_array_index (self->switches, guint, i)))
          ->ring_reset = TRUE;
      return FALSE;
    }
  return TRUE;
}

/* Records for the nodes of @self, one per node on the actor that recorded
 * it, each following @parent_id and the nodes it follows; the nodes of
 * child graphs and conditional bodies follow their node (of a switch:
 * those of the branch that ran).  @where names the graph ("graph NAME",
 * "graph OUTER node 2/3 > while-body graph BODY"); @runs (nullable) the
 * replay's run of each switch node. */
static void
emit_node_records (AtomrGraph    *self,
                   AtomrOp       *op,
                   const GError  *error,
                   guint64        parent_id,
                   const gchar   *where,
                   guint64        replay_id,
                   gint64         now,
                   const gint64  *runs)
{
  guint n = self->nodes->len;
  g_autofree guint64 *ids = g_new0 (guint64, n);

  for (guint i = 0; i < n; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      AtomrDevice *device = atomr_actor_get_device (node->actor);
      ReplayRequest *creq = node_conditional (node);
      g_autofree gchar *chose = NULL;
      gint64 chosen = -1;

      if (creq != NULL && creq->cond == COND_SWITCH)
        {
          chosen = switch_chosen (creq, runs != NULL ? runs[i] : -1);
          if (chosen < 0)
            chose = g_strdup (", branch not known (the run left the switch's record)");
          else if (chosen < req_n_bodies (creq))
            chose = g_strdup_printf (", ran branch %" G_GINT64_FORMAT, chosen);
          else
            chose = g_strdup_printf (", condition %" G_GINT64_FORMAT ": no branch ran", chosen);
        }
      ids[i] = atomr_actor_next_trace_id ();
      if (atomr_actor_wants_completions (node->actor))
        {
          g_autoptr(AtomrLaunchInfo) info = NULL;
          g_autofree gchar *detail = NULL;

          info = atomr_launch_info_new (atomr_actor_get_name (node->actor),
                                        atomr_actor_get_library (node->actor),
                                        atomr_op_get_operation (node->op));
          atomr_launch_info_set_sequence (info, ids[i]);
          atomr_launch_info_set_generation (info, atomr_op_get_generation (op));
          atomr_launch_info_set_device_ordinal (info, atomr_device_get_ordinal (device));
          atomr_launch_info_set_stream_id (info, atomr_op_get_stream (op)->id);
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_SUBMITTED, atomr_op_get_time (op, FALSE));
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_ENQUEUED, atomr_op_get_time (op, TRUE));
          atomr_launch_info_set_timestamp (info, ATOMR_LAUNCH_COMPLETED, now);
          atomr_launch_info_set_gpu_duration_ms (info, -1.0);
          detail = g_strdup_printf ("%s node %u/%u, replay #%" G_GUINT64_FORMAT ", recorded as %s%s",
                                    where, i + 1, n, replay_id, node->name, chose ? chose : "");
          atomr_launch_info_set_detail (info, detail);
          atomr_launch_info_add_dependency (info, parent_id);
          for (guint d = 0; d < node->deps->len; d++)
            atomr_launch_info_add_dependency (info, ids[g_array_index (node->deps, guint, d)]);
          if (error)
            atomr_launch_info_set_error (info, error);
          atomr_actor_emit_completed (node->actor, info);
        }
      if (creq != NULL && creq->cond == COND_SWITCH)
        {
          if (chosen >= 0 && chosen < req_n_bodies (creq))
            {
              AtomrGraph *branch = req_body (creq, (guint) chosen);
              g_autofree gchar *sub =
                g_strdup_printf ("%s node %u/%u > switch branch %" G_GINT64_FORMAT " graph %s",
                                 where, i + 1, n, chosen, branch->name);
              emit_node_records (branch, op, error, ids[i], sub, replay_id, now, NULL);
            }
        }
      else if (node_inner (node) != NULL)
        {
          AtomrGraph *inner = node_inner (node);
          g_autofree gchar *sub =
            g_strdup_printf ("%s node %u/%u > %s %s", where, i + 1, n,
                             creq == NULL ? "child graph" :
                             creq->cond == COND_IF ? "if-body graph" : "while-body graph",
                             inner->name);
          emit_node_records (inner, op, error, ids[i], sub, replay_id, now, NULL);
        }
    }
}

/* The longest adaptive polling window a replay asks for. */
#define REPLAY_SPIN_MAX_USEC 2000

/* A replay polls its completion a little longer than replays of @self
 * took so far (the actor's own window, 100 us by default, is shorter than
 * a chain of 100 kernels: the hand-off to the waiter thread and its
 * wake-up cost more than the poll). */
static void
replay_set_spin (AtomrGraph *self,
                 AtomrOp    *op)
{
  guint usec = atomr_graph_get_replay_spin_usec (self);

  if (usec > 0 && !g_atomic_int_get (&self->no_spin_hint))
    atomr_op_set_spin_usec (op, usec);
}

/* Enqueue -> completion seen of a replay that ran: the typical time
 * follows a faster one at once, a slower one slowly (replays queued
 * behind others look slower than they are). */
static void
replay_note_time (AtomrGraph *self,
                  AtomrOp    *op)
{
  gint64 took = (atomr_launch_info_now_ns () - atomr_op_get_time (op, TRUE)) / 1000;
  guint old = (guint) g_atomic_int_get ((gint *) &self->replay_usec);
  guint est;

  if (took <= 0)
    return;
  took = MIN (took, (gint64) REPLAY_SPIN_MAX_USEC);
  est = old == 0 || (guint) took < old ? (guint) took : (old * 7 + (guint) took) / 8;
  g_atomic_int_set ((gint *) &self->replay_usec, (gint) est);
}

/* After the replay's reply: every node gets its own record, on its actor. */
static void
replay_completed (AtomrOp      *op,
                  const GError *error,
                  gpointer      data)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *self = req->graph;
  g_autofree gchar *where = NULL;
  gboolean listening = FALSE;

  if (error == NULL && req->cond == COND_NONE)
    replay_note_time (self, op);
  if (error == NULL && req->cond != COND_SWITCH)
    {
      /* (A switch replays one of several graphs, or none.) */
      g_atomic_pointer_add ((gpointer *) &self->n_replays, 1);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_REPLAYS]);
    }

  /* Attribution only for actors somebody listens to: a look-up per actor,
   * not per node (100 nodes cost ~100 us per replay on the H100 before). */
  for (guint k = 0; k < req_n_bodies (req) && !listening; k++)
    {
      GPtrArray *actors = req_body (req, k)->node_actors;
      for (guint a = 0; a < actors->len && !listening; a++)
        listening = atomr_actor_wants_completions (g_ptr_array_index (actors, a));
    }
  if (!listening)
    return;

  if (req->cond == COND_SWITCH)
    {
      /* Not recorded: the branch its one run chose. */
      gint64 chosen = switch_chosen (req, req->run);

      if (chosen < 0 || chosen >= req_n_bodies (req))
        return;
      self = req_body (req, (guint) chosen);
      where = g_strdup_printf ("switch branch %" G_GINT64_FORMAT " graph %s", chosen, self->name);
    }
  else
    where = g_strdup_printf ("graph %s", self->name);
  emit_node_records (self, op, error, atomr_op_get_trace_id (op), where,
                     atomr_op_get_trace_id (op), atomr_launch_info_now_ns (), req->switch_runs);
}

/* Checks a replay of @self by @actor; fails @op (consumed) and returns
 * FALSE when it cannot run. */
static gboolean
replay_check (AtomrGraph *self,
              AtomrActor *actor,
              AtomrOp    *op)
{
  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_READY)
    {
      GError *error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                   "graph %s cannot be replayed: it is %s (capture it with "
                                   "begin_capture/end_capture first)", self->name,
                                   state_name (self->state));
      g_mutex_unlock (&self->lock);
      atomr_op_fail (op, error);
      return FALSE;
    }
  g_mutex_unlock (&self->lock);
  /* READY is final: the nodes no longer change (their kernel arguments
   * do, under the lock, see atomr_graph_set_kernel_args()). */

  if (atomr_actor_get_device (actor) != self->device)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s was recorded on device %d; actor %s cannot replay it",
                                      self->name, atomr_device_get_ordinal (self->device),
                                      atomr_actor_get_name (actor)));
      return FALSE;
    }
  if (atomr_actor_get_context (actor) != self->context &&
      !(atomr_actor_get_context (actor) == NULL && self->context == g_main_context_default ()))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s: actor %s is bound to another GMainContext than the "
                                      "recorded actors; a replay runs every node on their context",
                                      self->name, atomr_actor_get_name (actor)));
      return FALSE;
    }
  return TRUE;
}

/* The request's data and hazards: the union of the nodes' and of the new
 * kernel arguments it applies, over @graphs (one graph, or a switch's
 * branches: [0] becomes the request's graph); a buffer written is not
 * read.  @extra_read (nullable) is read too unless written. */
static ReplayRequest *
replay_setup (AtomrGraph  **graphs,
              guint         n_graphs,
              AtomrOp      *op,
              AtomrBuffer  *extra_read)
{
  g_autoptr(GHashTable) written = NULL;
  g_autoptr(GHashTable) read = NULL;
  ReplayRequest *req;

  req = atomr_op_alloc_data (op, sizeof *req, replay_request_clear);
  req->graph = g_object_ref (graphs[0]);
  req->run = -1;
  if (n_graphs > 1)
    {
      req->branches = g_ptr_array_new_with_free_func (g_object_unref);
      req->branch_updates = g_new0 (GPtrArray *, n_graphs);
      for (guint k = 0; k < n_graphs; k++)
        g_ptr_array_add (req->branches, g_object_ref (graphs[k]));
    }

  /* Only new arguments, a condition or several graphs can name a buffer
   * twice: no tables without them. */
  if (n_graphs > 1 || extra_read != NULL)
    {
      written = g_hash_table_new (NULL, NULL);
      read = g_hash_table_new (NULL, NULL);
    }
  for (guint k = 0; k < n_graphs; k++)
    {
      AtomrGraph *self = graphs[k];

      g_mutex_lock (&self->lock);
      if (self->extra_written != NULL && written == NULL)
        {
          written = g_hash_table_new (NULL, NULL);
          read = g_hash_table_new (NULL, NULL);
        }
      *req_updates (req, k) = g_steal_pointer (&self->pending);
      /* Every buffer new arguments ever named: an earlier replay still
       * queued may apply them before this one runs. */
      for (guint e = 0; self->extra_written && e < self->extra_written->len; e++)
        if (g_hash_table_add (written, g_ptr_array_index (self->extra_written, e)))
          atomr_op_write (op, g_ptr_array_index (self->extra_written, e));
      /* The union computed at end_capture (the nodes' buffers as captured:
       * new arguments only add buffers, through the extra lists). */
      for (guint b = 0; b < self->union_written->len; b++)
        if (written == NULL || g_hash_table_add (written, g_ptr_array_index (self->union_written, b)))
          atomr_op_write (op, g_ptr_array_index (self->union_written, b));
      g_mutex_unlock (&self->lock);
    }
  for (guint k = 0; k < n_graphs; k++)
    {
      AtomrGraph *self = graphs[k];

      g_mutex_lock (&self->lock);
      for (guint b = 0; b < self->union_read->len; b++)
        {
          AtomrBuffer *buffer = g_ptr_array_index (self->union_read, b);
          if (written == NULL || !g_hash_table_contains (written, buffer))
            {
              if (read == NULL || g_hash_table_add (read, buffer))
                atomr_op_read (op, buffer);
            }
        }
      for (guint e = 0; self->extra_read && e < self->extra_read->len; e++)
        {
          AtomrBuffer *buffer = g_ptr_array_index (self->extra_read, e);
          if (!g_hash_table_contains (written, buffer) && g_hash_table_add (read, buffer))
            atomr_op_read (op, buffer);
        }
      g_mutex_unlock (&self->lock);
    }
  if (extra_read != NULL && !g_hash_table_contains (written, extra_read) &&
      g_hash_table_add (read, extra_read))
    atomr_op_read (op, extra_read);
  return req;
}

/**
 * atomr_graph_replay_async:
 * @self: an [class@Atomr.Graph], ready
 * @actor: the actor that runs the replay (on the graph's device and
 *   context; it need not be one of the recorded actors)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the replay has finished on the GPU
 * @user_data: data for @callback
 *
 * Runs every recorded request again, as one operation of @actor, ordered
 * against other requests by the union of what the nodes read and write.
 * On a GPU the first replay builds and instantiates the CUDA graph (see
 * [class@Atomr.Graph]); later replays are one cuGraphLaunch() each.
 *
 * Since: 0.2
 */
void
atomr_graph_replay_async (AtomrGraph          *self,
                          AtomrActor          *actor,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autofree gchar *detail = NULL;
  AtomrOp *op;

  g_return_if_fail (ATOMR_IS_GRAPH (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  op = atomr_op_new (actor, "graph-replay", atomr_graph_replay_async, cancellable, callback, user_data);
  if (!replay_check (self, actor, op))
    return;
  replay_setup (&self, 1, op, NULL);

  detail = g_strdup_printf ("graph %s, %u nodes", self->name, self->nodes->len);
  atomr_op_set_detail (op, detail);
  atomr_op_set_prepare (op, replay_prepare);
  atomr_op_set_enqueue (op, replay_enqueue);
  atomr_op_set_on_completed (op, replay_completed, NULL);
  replay_set_spin (self, op);
  atomr_op_submit (op);
}

/* Runs on the actor's context before the device is held: the body built,
 * the condition kernels loaded and, when the request is not recorded,
 * its conditional node instantiated in a graph of its own. */
static gboolean
cond_prepare (AtomrOp  *op,
              GError  **error)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *body = req->graph;
  g_autoptr(GString) how = NULL;

  for (guint k = 0; k < req_n_bodies (req); k++)
    {
      GPtrArray **updates = req_updates (req, k);
      AtomrGraph *graph = req_body (req, k);
      gboolean rebuild = FALSE;

      if (*updates == NULL || (*updates)->len == 0)
        continue;
      if (how == NULL)
        {
          how = g_string_new (NULL);
          g_string_printf (how, "%s graph %s, %u nodes",
                           req->cond == COND_IF ? "if" : req->cond == COND_WHILE ? "while" : "switch",
                           body->name, body->nodes->len);
        }
      if (!apply_updates (graph, *updates, &rebuild, how, error))
        return FALSE;
      g_clear_pointer (updates, g_ptr_array_unref);
      if (rebuild)
        graph_drop_cuda (graph);
    }
  if (how != NULL)
    atomr_op_set_detail (op, how->str);
  if (atomr_device_is_host (body->device))
    {
      for (guint k = 0; k < req_n_bodies (req); k++)
        if (!graph_ensure_streams (req_body (req, k), error))
          return FALSE;
      return TRUE;
    }
  if (!cond_check_driver (body, req->cond, error))
    return FALSE;
  for (guint k = 0; k < req_n_bodies (req); k++)
    {
      GPtrArray *none = NULL;
      if (!inner_ready (req_body (req, k), &none, error))
        return FALSE;
    }
  /* Uploaded to the stream that launches it. */
  return cond_load_kernels (body, error) &&
         atomr_actor_ensure_stream (atomr_op_get_actor (op), error) &&
         cond_build_wrapper (req, atomr_actor_get_cu_stream (atomr_op_get_actor (op)), error);
}

/* A conditional request of @graphs (the body, or a switch's branches;
 * n_graphs >= 1, checked by the caller). */
static void
cond_submit (AtomrGraph          **graphs,
             guint                 n_graphs,
             AtomrActor           *actor,
             CondKind              kind,
             AtomrBuffer          *condition,
             guint                 max_iterations,
             AtomrOp              *op)
{
  const gchar *what = kind == COND_IF ? "replay_if" : kind == COND_WHILE ? "replay_while" : "replay_switch";
  AtomrGraph *self = graphs[0];
  g_autofree gchar *detail = NULL;
  GError *error = NULL;
  ReplayRequest *req;

  if (!ATOMR_IS_BUFFER (condition))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s: %s needs a condition buffer (condition is %s)",
                                      self->name, what, condition == NULL ? "NULL" : "not an AtomrBuffer"));
      return;
    }
  if (atomr_buffer_get_dtype (condition) != ATOMR_DTYPE_I32 &&
      atomr_buffer_get_dtype (condition) != ATOMR_DTYPE_U32)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s: %s: the condition buffer holds %s; it must hold "
                                      "i32 or u32 (its first element is the condition)",
                                      self->name, what,
                                      atomr_dtype_get_name (atomr_buffer_get_dtype (condition))));
      return;
    }
  if (kind == COND_WHILE && max_iterations == 0)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s: replay_while: max_iterations is 0; it must be at "
                                      "least 1 (G_MAXUINT for no practical limit)", self->name));
      return;
    }
  for (guint k = 0; k < n_graphs; k++)
    {
      AtomrGraph *graph = graphs[k];

      if (!replay_check (graph, actor, op))
        return;
      if (atomr_buffer_get_device (condition) != graph->device)
        {
          atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                          "graph %s: %s: the condition buffer is on device %d, the "
                                          "graph on device %d", graph->name, what,
                                          atomr_device_get_ordinal (atomr_buffer_get_device (condition)),
                                          atomr_device_get_ordinal (graph->device)));
          return;
        }
      if (graph->has_conditional)
        {
          atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                          "graph %s has conditional nodes itself: it cannot be the "
                                          "body of another (nested conditionals are not supported)",
                                          graph->name));
          return;
        }
    }

  req = replay_setup (graphs, n_graphs, op, condition);
  req->cond = kind;
  req->condition = g_object_ref (condition);
  req->max_iterations = kind == COND_WHILE ? max_iterations : 1;
  if (kind == COND_WHILE || kind == COND_SWITCH)
    {
      /* The while's iterations, the switch's runs. */
      req->counter = atomr_buffer_new (self->device, ATOMR_DTYPE_U32, 1, &error);
      if (req->counter == NULL)
        {
          g_prefix_error (&error, "graph %s: %s: the %s counter: ", self->name, what,
                          kind == COND_WHILE ? "iteration" : "run");
          atomr_op_fail (op, error);
          return;
        }
      atomr_op_write (op, req->counter);
    }
  if (kind == COND_SWITCH && atomr_device_is_host (self->device) && !switch_ring_ensure (req, &error))
    {
      atomr_op_fail (op, error);
      return;
    }
  if (kind == COND_WHILE)
    detail = g_strdup_printf ("while condition != 0 (at most %u iterations): graph %s, %u nodes",
                              max_iterations, self->name, self->nodes->len);
  else if (kind == COND_SWITCH)
    {
      GString *d = g_string_new (NULL);

      g_string_printf (d, "switch on condition, %u branches:", n_graphs);
      for (guint k = 0; k < n_graphs; k++)
        g_string_append_printf (d, "%s %u: graph %s", k ? "," : "", k, graphs[k]->name);
      detail = g_string_free (d, FALSE);
    }
  else
    detail = g_strdup_printf ("if condition != 0: graph %s, %u nodes", self->name, self->nodes->len);
  atomr_op_set_detail (op, detail);
  atomr_op_set_prepare (op, cond_prepare);
  atomr_op_set_enqueue (op, cond_enqueue);
  atomr_op_set_on_completed (op, replay_completed, NULL);
  atomr_op_submit (op);
}

/**
 * atomr_graph_replay_if_async:
 * @self: an [class@Atomr.Graph], ready: the body
 * @actor: the actor that runs the request (on the graph's device and
 *   context)
 * @condition: a buffer of %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_U32 on the
 *   graph's device: its first element is the condition
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the request has finished on the GPU
 * @user_data: data for @callback
 *
 * Replays @self only if the first element of @condition is not 0 when
 * the request runs: a CUDA conditional node of type IF, whose condition is
 * set on the GPU, from the value the earlier requests left in @condition
 * (a built-in kernel reads it; no host round trip).  Ordered against
 * other requests like [method@Atomr.Graph.replay_async], and it reads
 * @condition.
 *
 * Made to an actor that records into another graph (see
 * [method@Atomr.Graph.begin_capture]), the request becomes a conditional node
 * of that graph: every replay of it tests the condition again.  Made
 * outside a capture on a GPU, it instantiates a small CUDA graph of its own
 * for the one run (record it into a graph to pay that once).
 *
 * @self must not have conditional nodes itself (%ATOMR_ERROR_NOT_SUPPORTED),
 * and a graph with conditional nodes cannot be replayed as a child of
 * another graph (a CUDA limit).  A driver older than CUDA 12.4 fails
 * the request with %ATOMR_ERROR_NOT_SUPPORTED.  On the host test device the
 * condition is read on the CPU, with the same semantics.
 *
 * Finish with [method@Atomr.Graph.replay_if_finish].
 *
 * Since: 0.2
 */
void
atomr_graph_replay_if_async (AtomrGraph          *self,
                             AtomrActor          *actor,
                             AtomrBuffer         *condition,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_GRAPH (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  cond_submit (&self, 1, actor, COND_IF, condition, 1,
               atomr_op_new (actor, "graph-if", atomr_graph_replay_if_async, cancellable, callback,
                             user_data));
}

/**
 * atomr_graph_replay_while_async:
 * @self: an [class@Atomr.Graph], ready: the body
 * @actor: the actor that runs the request (on the graph's device and
 *   context)
 * @condition: a buffer of %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_U32 on the
 *   graph's device: its first element is the condition
 * @max_iterations: the most times the body runs in one run of the request
 *   (at least 1; %G_MAXUINT for no practical limit)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the request has finished on the GPU
 * @user_data: data for @callback
 *
 * Replays @self again and again while the first element of @condition is
 * not 0, at most @max_iterations times: a CUDA conditional node of type
 * WHILE.  The condition is tested on the GPU before the first run and
 * after every run of the body, so the body is what changes it (a kernel
 * that counts down a counter, or computes a convergence flag).  A
 * built-in kernel sets the node's condition from @condition and counts the
 * iterations against @max_iterations, which keeps a body that never
 * changes the condition from looping forever.
 *
 * The body may also set the condition itself, on the GPU: a kernel
 * launched with an [method@Atomr.KernelArgs.add_graph_condition] argument
 * gets this node's handle and calls `cudaGraphSetConditional (handle,
 * value)`.  Then @condition decides only whether the first iteration
 * runs; after each iteration the value the body set last counts (1 if
 * it set none), and @max_iterations still ends the loop.
 *
 * Everything else is as for [method@Atomr.Graph.replay_if_async]: recorded
 * into a capturing actor's graph it becomes a conditional node of it,
 * replayed as often as that graph is.
 *
 * Finish with [method@Atomr.Graph.replay_while_finish].
 *
 * Since: 0.2
 */
void
atomr_graph_replay_while_async (AtomrGraph          *self,
                                AtomrActor          *actor,
                                AtomrBuffer         *condition,
                                guint                max_iterations,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_GRAPH (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  cond_submit (&self, 1, actor, COND_WHILE, condition, max_iterations,
               atomr_op_new (actor, "graph-while", atomr_graph_replay_while_async, cancellable,
                             callback, user_data));
}

/**
 * atomr_graph_replay_switch_async:
 * @actor: the actor that runs the request (on the graphs' device and
 *   context)
 * @branches: (array length=n_branches): the graphs, ready: branch 0, 1, ...
 *   (a graph may be more than one branch)
 * @n_branches: how many branches (at least 1)
 * @condition: a buffer of %ATOMR_DTYPE_I32 or %ATOMR_DTYPE_U32 on the
 *   graphs' device: its first element, read as unsigned, picks the branch
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the request has finished on the GPU
 * @user_data: data for @callback
 *
 * Replays `branches[v]`, where `v` is the first element of @condition
 * (as a 32-bit unsigned number) when the request runs, and nothing when
 * `v` is @n_branches or more (a negative i32 too): a CUDA conditional
 * node of type SWITCH with @n_branches bodies, whose value is set on the
 * GPU from @condition by a built-in kernel (no host round trip).
 * Ordered against other requests by the union of every branch's reads
 * and writes, and it reads @condition.
 *
 * Made to an actor that records into another graph, the request becomes
 * a switch node of that graph, evaluated again on every replay; made
 * outside a capture on a GPU, it instantiates a small CUDA graph of its
 * own for the one run.  The branches must not have conditional nodes
 * themselves, and a graph with a switch node cannot be replayed as a
 * child of another graph (%ATOMR_ERROR_NOT_SUPPORTED).  A driver older
 * than CUDA 12.8 fails the request with %ATOMR_ERROR_NOT_SUPPORTED.  On
 * the host test device the condition is read on the CPU, with the same
 * semantics.
 *
 * Replay attribution reports the nodes of the branch that ran (the
 * built-in kernel leaves the value it used in host memory), and the
 * switch node's own record says which branch ran, or that none did.
 *
 * Finish with [func@Atomr.Graph.replay_switch_finish].
 *
 * Since: 0.2
 */
void
atomr_graph_replay_switch_async (AtomrActor          *actor,
                                 AtomrGraph         **branches,
                                 guint                n_branches,
                                 AtomrBuffer         *condition,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  AtomrOp *op;

  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  op = atomr_op_new (actor, "graph-switch", atomr_graph_replay_switch_async, cancellable, callback,
                     user_data);
  if (branches == NULL || n_branches == 0)
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "replay_switch needs at least one branch graph (n_branches "
                                      "is %u)", n_branches));
      return;
    }
  for (guint k = 0; k < n_branches; k++)
    if (!ATOMR_IS_GRAPH (branches[k]))
      {
        atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                        "replay_switch: branches[%u] is %s, not an AtomrGraph", k,
                                        branches[k] == NULL ? "NULL" : "something else"));
        return;
      }
  cond_submit (branches, n_branches, actor, COND_SWITCH, condition, 1, op);
}

/**
 * atomr_graph_replay_switch_finish:
 * @result: the result passed to the callback
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [func@Atomr.Graph.replay_switch_async].
 *
 * Returns: %TRUE when the request ran (or was recorded), whichever branch
 *   ran, if any
 *
 * Since: 0.2
 */
gboolean
atomr_graph_replay_switch_finish (GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, atomr_graph_replay_switch_async), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

/**
 * atomr_graph_replay_finish:
 * @self: an [class@Atomr.Graph]
 * @result: the result passed to the callback
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Graph.replay_async].
 *
 * Returns: %TRUE when every node ran
 *
 * Since: 0.2
 */
gboolean
atomr_graph_replay_finish (AtomrGraph    *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, atomr_graph_replay_async), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

/**
 * atomr_graph_replay_if_finish:
 * @self: an [class@Atomr.Graph]
 * @result: the result passed to the callback
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Graph.replay_if_async].
 *
 * Returns: %TRUE when the request ran (or was recorded), whether the body
 *   ran or not
 *
 * Since: 0.2
 */
gboolean
atomr_graph_replay_if_finish (AtomrGraph    *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, atomr_graph_replay_if_async), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

/**
 * atomr_graph_replay_while_finish:
 * @self: an [class@Atomr.Graph]
 * @result: the result passed to the callback
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Graph.replay_while_async].
 *
 * Returns: %TRUE when the request ran (or was recorded), however often the
 *   body ran
 *
 * Since: 0.2
 */
gboolean
atomr_graph_replay_while_finish (AtomrGraph    *self,
                                 GAsyncResult  *result,
                                 GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, atomr_graph_replay_while_async), FALSE);
  return atomr_reply_propagate_boolean (result, error);
}

static gboolean
count_nodes (AtomrGraph  *self,
             CUgraph      graph,
             guint       *n_kernels,
             guint       *n_other,
             GError     **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  g_autofree CUgraphNode *nodes = NULL;
  size_t n = 0;

  if (!cu_ok (cu->cuGraphGetNodes (graph, NULL, &n), "cuGraphGetNodes", self, error))
    return FALSE;
  nodes = g_new0 (CUgraphNode, MAX (n, 1));
  if (!cu_ok (cu->cuGraphGetNodes (graph, nodes, &n), "cuGraphGetNodes", self, error))
    return FALSE;
  for (size_t i = 0; i < n; i++)
    {
      CUgraphNodeType type;
      CUgraph child = NULL;

      if (!cu_ok (cu->cuGraphNodeGetType (nodes[i], &type), "cuGraphNodeGetType", self, error))
        return FALSE;
      if (type == CU_GRAPH_NODE_TYPE_GRAPH)
        {
          if (!cu_ok (cu->cuGraphChildGraphNodeGetGraph (nodes[i], &child),
                      "cuGraphChildGraphNodeGetGraph", self, error) ||
              !count_nodes (self, child, n_kernels, n_other, error))
            return FALSE;
        }
      else if (type == CU_GRAPH_NODE_TYPE_KERNEL)
        (*n_kernels)++;
      else
        (*n_other)++;
    }
  return TRUE;
}

gboolean
atomr_graph_count_cuda_nodes (AtomrGraph  *self,
                              guint       *n_kernels,
                              guint       *n_other,
                              GError     **error)
{
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  *n_kernels = *n_other = 0;
  if (g_atomic_pointer_get (&self->exec) == NULL || self->cu_graph == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s has no CUDA graph (not replayed on a GPU yet)", self->name);
      return FALSE;
    }
  if (!atomr_device_enter (self->device, error))
    return FALSE;
  ok = count_nodes (self, self->cu_graph, n_kernels, n_other, error);
  atomr_device_leave (self->device);
  return ok;
}

void
atomr_graph_set_replay_spin_hint (AtomrGraph *self,
                                  gboolean    enabled)
{
  g_return_if_fail (ATOMR_IS_GRAPH (self));
  g_atomic_int_set (&self->no_spin_hint, !enabled);
}

guint
atomr_graph_get_replay_spin_usec (AtomrGraph *self)
{
  guint usec;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), 0);
  usec = (guint) g_atomic_int_get ((gint *) &self->replay_usec);
  return usec > 0 ? MIN (usec + usec / 4 + 20, REPLAY_SPIN_MAX_USEC) : 0;
}

/* ------------------------------------------------------------------ */
/* DOT export                                                           */

static gchar *
dot_escape (const gchar *s)
{
  GString *out = g_string_new (NULL);

  for (; *s; s++)
    {
      if (*s == '"' || *s == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *s);
    }
  return g_string_free (out, FALSE);
}

/* The nodes of @self as DOT statements, named @prefix + index; a
 * conditional node is a diamond, its body a cluster of its own. */
static void
nodes_to_dot (AtomrGraph  *self,
              const gchar *prefix,
              const gchar *indent,
              GString     *out)
{
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      ReplayRequest *creq = node_conditional (node);
      g_autofree gchar *label = dot_escape (node->name);

      if (creq == NULL)
        {
          g_string_append_printf (out, "%s%s%u [label=\"%s\"];\n", indent, prefix, i, label);
          continue;
        }
      if (creq->cond == COND_SWITCH)
        {
          g_string_append_printf (out, "%s%s%u [shape=diamond, label=\"%s\\nswitch on condition "
                                  "(%u branches)\"];\n", indent, prefix, i, label, req_n_bodies (creq));
          for (guint k = 0; k < req_n_bodies (creq); k++)
            {
              AtomrGraph *inner = req_body (creq, k);
              g_autofree gchar *body = dot_escape (inner->name);
              g_autofree gchar *sub = g_strdup_printf ("%s%u_%u_", prefix, i, k);
              g_autofree gchar *sub_indent = g_strdup_printf ("%s  ", indent);

              g_string_append_printf (out, "%ssubgraph cluster_%s%u_%u {\n%s  label=\"case %u: "
                                      "graph %s\";\n%s  style=dashed;\n", indent, prefix, i, k,
                                      indent, k, body, indent);
              nodes_to_dot (inner, sub, sub_indent, out);
              g_string_append_printf (out, "%s}\n", indent);
              for (guint j = 0; j < inner->nodes->len; j++)
                if (((Node *) g_ptr_array_index (inner->nodes, j))->deps->len == 0)
                  g_string_append_printf (out, "%s%s%u -> %s%u [style=dashed, label=\"case %u\"];\n",
                                          indent, prefix, i, sub, j, k);
            }
          continue;
        }
      {
        g_autofree gchar *body = dot_escape (creq->graph->name);
        g_autofree gchar *sub = g_strdup_printf ("%s%u_", prefix, i);
        g_autofree gchar *sub_indent = g_strdup_printf ("%s  ", indent);
        AtomrGraph *inner = creq->graph;

        if (creq->cond == COND_IF)
          g_string_append_printf (out, "%s%s%u [shape=diamond, label=\"%s\\nif condition != 0\"];\n",
                                  indent, prefix, i, label);
        else
          g_string_append_printf (out, "%s%s%u [shape=diamond, label=\"%s\\nwhile condition != 0 "
                                  "(at most %u)\"];\n", indent, prefix, i, label, creq->max_iterations);
        g_string_append_printf (out, "%ssubgraph cluster_%s%u {\n%s  label=\"%s-body: graph %s\";\n"
                                "%s  style=dashed;\n", indent, prefix, i, indent,
                                creq->cond == COND_IF ? "if" : "while", body, indent);
        nodes_to_dot (inner, sub, sub_indent, out);
        g_string_append_printf (out, "%s}\n", indent);
        /* The node starts its body's first nodes. */
        for (guint j = 0; j < inner->nodes->len; j++)
          if (((Node *) g_ptr_array_index (inner->nodes, j))->deps->len == 0)
            g_string_append_printf (out, "%s%s%u -> %s%u [style=dashed, label=\"%s\"];\n", indent,
                                    prefix, i, sub, j, creq->cond == COND_IF ? "then" : "loop");
      }
    }
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      for (guint d = 0; d < node->deps->len; d++)
        g_string_append_printf (out, "%s%s%u -> %s%u;\n", indent, prefix,
                                g_array_index (node->deps, guint, d), prefix, i);
    }
}

/* atomr's own view: nodes named after their requests, hazard edges. */
static gchar *
graph_nodes_to_dot (AtomrGraph *self)
{
  GString *out = g_string_new (NULL);
  g_autofree gchar *name = dot_escape (self->name);

  g_string_append_printf (out, "digraph \"%s\" {\n  node [shape=box];\n", name);
  nodes_to_dot (self, "n", "  ", out);
  g_string_append (out, "}\n");
  return g_string_free (out, FALSE);
}

/**
 * atomr_graph_write_dot:
 * @self: an [class@Atomr.Graph], captured
 * @path: (type filename): the file to write
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes the graph in Graphviz DOT.  Once the CUDA graph was built (on a
 * GPU, by the first replay) this is the driver's own verbose dump
 * (cuGraphDebugDotPrint: every node with its parameters); before that,
 * and on the host test device, atomr's view: one box per recorded request,
 * named after it, and an edge for every ordering between them.
 *
 * Returns: %TRUE when the file was written
 *
 * Since: 0.2
 */
gboolean
atomr_graph_write_dot (AtomrGraph   *self,
                       const gchar  *path,
                       GError      **error)
{
  g_autofree gchar *dot = NULL;
  AtomrGraphState state;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  state = atomr_graph_get_state (self);
  if (state != ATOMR_GRAPH_STATE_READY)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "graph %s is %s: only a captured graph can be exported", self->name,
                   state_name (state));
      return FALSE;
    }
  if (g_atomic_pointer_get (&self->exec) != NULL)
    {
      gboolean ok;

      if (!atomr_device_enter (self->device, error))
        return FALSE;
      ok = atomr_cuda_check (ATOMR_CU->cuGraphDebugDotPrint (self->cu_graph, path,
                                                             CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE),
                             "cuGraphDebugDotPrint", error);
      atomr_device_leave (self->device);
      if (!ok)
        g_prefix_error (error, "graph %s: writing %s: ", self->name, path);
      return ok;
    }
  dot = graph_nodes_to_dot (self);
  return g_file_set_contents (path, dot, -1, error);
}

/**
 * atomr_graph_to_dot:
 * @self: an [class@Atomr.Graph], captured
 * @error: return location for a [struct@GLib.Error]
 *
 * The text [method@Atomr.Graph.write_dot] would write.
 *
 * Returns: (transfer full) (nullable): the DOT text, or %NULL on error
 *
 * Since: 0.2
 */
gchar *
atomr_graph_to_dot (AtomrGraph  *self,
                    GError     **error)
{
  g_autofree gchar *tmpl = NULL;
  gchar *contents = NULL;
  gint fd;

  g_return_val_if_fail (ATOMR_IS_GRAPH (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  fd = g_file_open_tmp ("atomr-graph-XXXXXX.dot", &tmpl, error);
  if (fd < 0)
    return NULL;
  g_close (fd, NULL);
  if (atomr_graph_write_dot (self, tmpl, error))
    g_file_get_contents (tmpl, &contents, NULL, error);
  g_unlink (tmpl);
  return contents;
}
