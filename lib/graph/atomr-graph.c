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
#include "nvrtc/atomr-kernel-private.h"
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

  /* The actors' context only (replays): */
  CUgraph          cu_graph;
  CUgraphExec      exec;
  guint            generation;    /* of cu_graph and exec */
  guint64          n_replays;     /* atomic */
  guint            n_instantiations;  /* atomic */
  guint            n_updates;     /* atomic: kernel nodes updated in place */
};

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
  g_clear_pointer (&self->actors, g_ptr_array_unref);
  g_clear_pointer (&self->nodes, g_ptr_array_unref);
  g_clear_pointer (&self->uses, g_hash_table_unref);
  g_clear_error (&self->record_error);
  g_clear_pointer (&self->pending, g_ptr_array_unref);
  g_clear_pointer (&self->extra_written, g_ptr_array_unref);
  g_clear_pointer (&self->extra_read, g_ptr_array_unref);
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

void
atomr_graph_record_op (gpointer  graph,
                       AtomrOp  *op)
{
  AtomrGraph *self = graph;
  GError *error = NULL;
  Node *node;

  if (!atomr_op_check_capturable (op, &error))
    {
      g_mutex_lock (&self->lock);
      if (self->record_error == NULL)
        self->record_error = g_error_copy (error);
      g_mutex_unlock (&self->lock);
      atomr_op_fail (op, error);
      return;
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
  self->state = ok ? ATOMR_GRAPH_STATE_READY : ATOMR_GRAPH_STATE_FAILED;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  return ok;
}

/* ------------------------------------------------------------------ */
/* Replay                                                               */

typedef struct
{
  AtomrGraph *graph;
  GPtrArray  *updates;    /* Update*: new kernel arguments this replay applies */
} ReplayRequest;

static void
replay_request_clear (gpointer data)
{
  ReplayRequest *req = data;
  g_clear_object (&req->graph);
  g_clear_pointer (&req->updates, g_ptr_array_unref);
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

/* Builds and instantiates the CUDA graph by stream capture.  On the
 * actors' context, the device not held (this holds it). */
static gboolean
graph_build (AtomrGraph  *self,
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
               ReplayRequest  *req,
               gboolean       *rebuild,
               GString        *how,
               GError        **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  gboolean whole = FALSE;
  guint in_place = 0;

  *rebuild = FALSE;
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < req->updates->len; i++)
    {
      Update *u = g_ptr_array_index (req->updates, i);
      atomr_nvrtc_launch_set_args (((Node *) g_ptr_array_index (self->nodes, u->node))->op, u->args);
    }
  g_mutex_unlock (&self->lock);

  g_string_append_printf (how, "; new kernel arguments for %u node%s", req->updates->len,
                          req->updates->len == 1 ? "" : "s");
  if (atomr_device_is_host (self->device) || self->exec == NULL)
    return TRUE;   /* the first build captures them */

  if (!atomr_device_enter (self->device, error))
    return FALSE;
  for (guint i = 0; i < req->updates->len && !*rebuild; i++)
    {
      Update *u = g_ptr_array_index (req->updates, i);
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
          in_place = req->updates->len;
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

  if (req->updates != NULL && req->updates->len > 0)
    {
      g_autoptr(GString) how = g_string_new (NULL);

      g_string_printf (how, "graph %s, %u nodes", self->name, self->nodes->len);
      if (!apply_updates (self, req, &rebuild, how, error))
        return FALSE;
      atomr_op_set_detail (op, how->str);
      if (rebuild)
        graph_drop_cuda (self);
    }

  if (atomr_device_is_host (self->device))
    {
      /* The nodes' actors get their streams (and setup) now. */
      for (guint i = 0; i < self->nodes->len; i++)
        if (!atomr_actor_ensure_stream (((Node *) g_ptr_array_index (self->nodes, i))->actor, error))
          return FALSE;
      return TRUE;
    }
  if (self->exec != NULL && self->generation != atomr_device_get_generation (self->device))
    {
      /* The context was rebuilt: the graph died with it. */
      self->exec = NULL;
      self->cu_graph = NULL;
    }
  return self->exec != NULL || graph_build (self, error);
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
      for (guint i = 0; i < self->nodes->len; i++)
        {
          Node *node = g_ptr_array_index (self->nodes, i);
          if (!atomr_op_enqueue_on (node->op, atomr_op_get_stream (op), error))
            {
              g_prefix_error (error, "graph %s: node %u (%s) failed: ", self->name, i, node->name);
              return FALSE;
            }
        }
      return TRUE;
    }
  return cu_ok (ATOMR_CU->cuGraphLaunch (self->exec, atomr_op_get_cu_stream (op)), "cuGraphLaunch",
                self, error);
}

/* After the replay's reply: every node gets its own record, on its actor. */
static void
replay_completed (AtomrOp      *op,
                  const GError *error,
                  gpointer      data)
{
  ReplayRequest *req = atomr_op_get_data (op);
  AtomrGraph *self = req->graph;
  guint n = self->nodes->len;
  g_autofree guint64 *ids = g_new0 (guint64, n);
  guint64 replay_id = atomr_op_get_trace_id (op);
  gint64 now = atomr_launch_info_now_ns ();

  if (error == NULL)
    {
      g_atomic_pointer_add ((gpointer *) &self->n_replays, 1);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_REPLAYS]);
    }

  for (guint i = 0; i < n; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      AtomrDevice *device = atomr_actor_get_device (node->actor);
      g_autoptr(AtomrLaunchInfo) info = NULL;
      g_autofree gchar *detail = NULL;

      ids[i] = atomr_actor_next_trace_id ();
      if (!atomr_actor_wants_completions (node->actor))
        continue;
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
      detail = g_strdup_printf ("graph %s node %u/%u, replay #%" G_GUINT64_FORMAT ", recorded as %s",
                                self->name, i + 1, n, replay_id, node->name);
      atomr_launch_info_set_detail (info, detail);
      atomr_launch_info_add_dependency (info, replay_id);
      for (guint d = 0; d < node->deps->len; d++)
        atomr_launch_info_add_dependency (info, ids[g_array_index (node->deps, guint, d)]);
      if (error)
        atomr_launch_info_set_error (info, error);
      atomr_actor_emit_completed (node->actor, info);
    }
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
  g_autoptr(GHashTable) written = NULL;
  g_autoptr(GHashTable) read = NULL;
  g_autofree gchar *detail = NULL;
  ReplayRequest *req;
  AtomrOp *op;

  g_return_if_fail (ATOMR_IS_GRAPH (self));
  g_return_if_fail (ATOMR_IS_ACTOR (actor));

  op = atomr_op_new (actor, "graph-replay", atomr_graph_replay_async, cancellable, callback, user_data);
  atomr_op_forbid_capture (op, "replaying a graph inside another capture is not supported");

  g_mutex_lock (&self->lock);
  if (self->state != ATOMR_GRAPH_STATE_READY)
    {
      GError *error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                   "graph %s cannot be replayed: it is %s (capture it with "
                                   "begin_capture/end_capture first)", self->name,
                                   state_name (self->state));
      g_mutex_unlock (&self->lock);
      atomr_op_fail (op, error);
      return;
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
      return;
    }
  if (atomr_actor_get_context (actor) != self->context &&
      !(atomr_actor_get_context (actor) == NULL && self->context == g_main_context_default ()))
    {
      atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                      "graph %s: actor %s is bound to another GMainContext than the "
                                      "recorded actors; a replay runs every node on their context",
                                      self->name, atomr_actor_get_name (actor)));
      return;
    }

  req = atomr_op_alloc_data (op, sizeof *req, replay_request_clear);
  req->graph = g_object_ref (self);

  /* Its hazards: the union of the nodes' and of the new kernel arguments
   * it applies; a buffer written is not read. */
  written = g_hash_table_new (NULL, NULL);
  read = g_hash_table_new (NULL, NULL);
  g_mutex_lock (&self->lock);
  req->updates = g_steal_pointer (&self->pending);
  /* Every buffer new arguments ever named: an earlier replay still queued
   * may apply them before this one runs. */
  for (guint e = 0; self->extra_written && e < self->extra_written->len; e++)
    if (g_hash_table_add (written, g_ptr_array_index (self->extra_written, e)))
      atomr_op_write (op, g_ptr_array_index (self->extra_written, e));
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      for (guint b = 0; b < atomr_op_get_n_buffers (node->op, TRUE); b++)
        {
          AtomrBuffer *buffer = atomr_op_get_buffer (node->op, TRUE, b);
          if (g_hash_table_add (written, buffer))
            atomr_op_write (op, buffer);
        }
    }
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      for (guint b = 0; b < atomr_op_get_n_buffers (node->op, FALSE); b++)
        {
          AtomrBuffer *buffer = atomr_op_get_buffer (node->op, FALSE, b);
          if (!g_hash_table_contains (written, buffer) && g_hash_table_add (read, buffer))
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

  detail = g_strdup_printf ("graph %s, %u nodes", self->name, self->nodes->len);
  atomr_op_set_detail (op, detail);
  atomr_op_set_prepare (op, replay_prepare);
  atomr_op_set_enqueue (op, replay_enqueue);
  atomr_op_set_on_completed (op, replay_completed, NULL);
  atomr_op_submit (op);
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
  g_return_val_if_fail (G_IS_TASK (result), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == atomr_graph_replay_async, FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
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

/* atomr's own view: nodes named after their requests, hazard edges. */
static gchar *
graph_nodes_to_dot (AtomrGraph *self)
{
  GString *out = g_string_new (NULL);
  g_autofree gchar *name = dot_escape (self->name);

  g_string_append_printf (out, "digraph \"%s\" {\n  node [shape=box];\n", name);
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      g_autofree gchar *label = dot_escape (node->name);
      g_string_append_printf (out, "  n%u [label=\"%s\"];\n", i, label);
    }
  for (guint i = 0; i < self->nodes->len; i++)
    {
      Node *node = g_ptr_array_index (self->nodes, i);
      for (guint d = 0; d < node->deps->len; d++)
        g_string_append_printf (out, "  n%u -> n%u;\n", g_array_index (node->deps, guint, d), i);
    }
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
