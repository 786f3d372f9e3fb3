/* atomr-cudnn-graph.c — operation graphs for the cuDNN actor: a builder
 * that validates as it goes, a structural key, and execution through the
 * actor's plan cache
 *
 * An AtomrCudnnGraph is a plain description: tensors (dtype, shape,
 * strides, virtual or not) and nodes (kind, mode, operand ids,
 * attributes), checked as they are added.  Nothing touches cuDNN until
 * the graph is executed: the enqueue function (actor thread) turns the
 * description into backend descriptors with the private helper
 * (atomr-cudnn-backend-private.h), asks the heuristics for a plan (or
 * times the first candidates when the actor's autotune property is set)
 * and keeps the plan in the actor's plan cache under the graph's key plus
 * the device's arch and the pointer alignment of every view.
 *
 * Threads: a graph is built on one thread at a time; once finalized it is
 * immutable and may be executed from any thread, on any number of actors
 * at once (each request holds a reference).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "atomr-cudnn-table-private.h"

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-graph.h"
#include "actors/cudnn/atomr-cudnn-private.h"
#include "actors/cudnn/atomr-cudnn-actor-private.h"
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-tensor-private.h"

/**
 * AtomrCudnnGraph:
 *
 * An operation graph for [class@Atomr.CudnnActor]: the cuDNN backend
 * (graph) API's way of fusing convolutions, matrix products, pointwise
 * functions, reductions and normalizations into one kernel where an
 * engine supports it.
 *
 * Build it with tensors ([method@Atomr.CudnnGraph.add_tensor] takes the
 * dtype, shape and strides of a view; [method@Atomr.CudnnGraph.add_tensor_full]
 * describes one directly, and makes virtual intermediates that live only
 * inside the fused kernel) and nodes, each of which reads earlier tensors
 * and writes one new one (the training-phase norm nodes and their backward
 * nodes write several: the output and the saved statistics, or the
 * gradients).  Every call checks what it is given and fails
 * with %ATOMR_ERROR_INVALID_ARGUMENT naming the node and the tensor.
 * [method@Atomr.CudnnGraph.finalize] checks the whole graph (no dangling
 * tensors) and freezes it; then [method@Atomr.CudnnActor.execute_graph_async]
 * runs it with one view for each non-virtual tensor.
 *
 * The actor keeps one execution plan per distinct graph key
 * ([method@Atomr.CudnnGraph.get_key]: the structure, every dtype, shape,
 * stride and attribute), device arch and pointer alignment, in its plan
 * cache ([property@Atomr.CudnnActor:cache-capacity], counted in
 * [property@Atomr.CudnnActor:cache-hits] and
 * [property@Atomr.CudnnActor:cache-misses]).  With
 * [property@Atomr.CudnnActor:autotune] set, a plan is chosen by timing the
 * first engine configurations of the heuristics once.
 *
 * Threads: build a graph on one thread; a finalized graph is immutable and
 * may be executed from any thread.
 *
 * Since: 0.2
 */

#define MAX_DIMS        ATOMR_TENSOR_MAX_DIMS
#define SCALAR_UID_BASE G_GINT64_CONSTANT (1000000)
#define SCALAR2_UID_BASE G_GINT64_CONSTANT (2000000)   /* a node's second scalar (batch norm's momentum) */
#define AUTOTUNE_CANDIDATES 8

typedef enum {
  NODE_POINTWISE,
  NODE_SCALE,
  NODE_CONVOLUTION,
  NODE_MATMUL,
  NODE_REDUCTION,
  NODE_NORM,
  NODE_NORM_TRAIN,
  NODE_NORM_BWD,
} NodeKind;

static const gchar *const node_kind_names[] = {
  "pointwise", "scale", "convolution", "matmul", "reduction", "norm", "norm training", "norm backward",
};

typedef struct {
  gchar      *name;
  AtomrDtype  dtype;
  guint       n_dims;
  gint64      dims[MAX_DIMS];
  gint64      strides[MAX_DIMS];
  gboolean    is_virtual;
  guint       producer;     /* node index + 1; 0: none (a graph input) */
  guint       n_readers;
} GraphTensor;

/* Operands of the norm nodes.  Training: in x, scale, bias, running mean
 * and variance (batch norm); out y, then (more_out) mean, inverse
 * variance, the next running mean and variance.  Backward: in x, dy,
 * scale, mean, inverse variance; out dx, then dscale, dbias. */
#define N_IN       5
#define N_MORE_OUT 4

typedef struct {
  NodeKind             kind;
  gint                 mode;       /* pointwise / conv direction / reduction / norm */
  guint                in[N_IN];   /* tensor ids; 0: none */
  guint                out;
  guint                more_out[N_MORE_OUT];  /* norm training and backward; 0: none */
  gdouble              value;      /* scale's factor, norm's epsilon: by value, not in the key */
  gdouble              value2;     /* batch norm's momentum: by value */
  AtomrCudnnConvParams conv;
} GraphNode;

struct _AtomrCudnnGraph
{
  GObject     parent_instance;

  gchar      *name;
  GArray     *tensors;   /* GraphTensor; id = index + 1 */
  GArray     *nodes;     /* GraphNode */
  gboolean    finalized;
  GBytes     *key;       /* set by finalize */
};

enum {
  PROP_0,
  PROP_NAME,
  PROP_FINALIZED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (AtomrCudnnGraph, atomr_cudnn_graph, G_TYPE_OBJECT)

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)
#define FAIL0(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), 0u)
#define SET_ERROR(...) g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__)

static void
tensor_clear (gpointer data)
{
  GraphTensor *t = data;

  g_free (t->name);
}

static void
atomr_cudnn_graph_init (AtomrCudnnGraph *self)
{
  self->name = g_strdup ("graph");
  self->tensors = g_array_new (FALSE, TRUE, sizeof (GraphTensor));
  g_array_set_clear_func (self->tensors, tensor_clear);
  self->nodes = g_array_new (FALSE, TRUE, sizeof (GraphNode));
}

static void
atomr_cudnn_graph_finalize_object (GObject *object)
{
  AtomrCudnnGraph *self = ATOMR_CUDNN_GRAPH (object);

  g_array_unref (self->tensors);
  g_array_unref (self->nodes);
  g_clear_pointer (&self->key, g_bytes_unref);
  g_free (self->name);
  G_OBJECT_CLASS (atomr_cudnn_graph_parent_class)->finalize (object);
}

static void
atomr_cudnn_graph_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  AtomrCudnnGraph *self = ATOMR_CUDNN_GRAPH (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_FINALIZED:
      g_value_set_boolean (value, self->finalized);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_cudnn_graph_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  AtomrCudnnGraph *self = ATOMR_CUDNN_GRAPH (object);

  switch (prop_id)
    {
    case PROP_NAME:
      if (g_value_get_string (value) != NULL)
        {
          g_free (self->name);
          self->name = g_value_dup_string (value);
        }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_cudnn_graph_class_init (AtomrCudnnGraphClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_cudnn_graph_finalize_object;
  object_class->get_property = atomr_cudnn_graph_get_property;
  object_class->set_property = atomr_cudnn_graph_set_property;

  /**
   * AtomrCudnnGraph:name:
   *
   * What the graph is called in error messages and traces ("graph" when
   * not set).  Not part of the key.
   *
   * Since: 0.2
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, "graph",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCudnnGraph:finalized:
   *
   * Whether [method@Atomr.CudnnGraph.finalize] succeeded: the graph is then
   * immutable and can be executed.  Notified when it becomes %TRUE.
   *
   * Since: 0.2
   */
  properties[PROP_FINALIZED] =
    g_param_spec_boolean ("finalized", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/**
 * atomr_cudnn_graph_new:
 * @name: (nullable): what to call the graph in messages ("graph" if %NULL)
 *
 * An empty operation graph.
 *
 * Returns: (transfer full): a new [class@Atomr.CudnnGraph]
 *
 * Since: 0.2
 */
AtomrCudnnGraph *
atomr_cudnn_graph_new (const gchar *name)
{
  return g_object_new (ATOMR_TYPE_CUDNN_GRAPH, "name", name, NULL);
}

/**
 * atomr_cudnn_graph_get_name:
 * @self: an [class@Atomr.CudnnGraph]
 *
 * Gets [property@Atomr.CudnnGraph:name].
 *
 * Returns: the graph's [property@Atomr.CudnnGraph:name]
 *
 * Since: 0.2
 */
const gchar *
atomr_cudnn_graph_get_name (AtomrCudnnGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), NULL);
  return self->name;
}

/**
 * atomr_cudnn_graph_get_finalized:
 * @self: an [class@Atomr.CudnnGraph]
 *
 * Gets [property@Atomr.CudnnGraph:finalized].
 *
 * Returns: whether the graph was finalized
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_get_finalized (AtomrCudnnGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  return self->finalized;
}

/**
 * atomr_cudnn_graph_get_n_tensors:
 * @self: an [class@Atomr.CudnnGraph]
 *
 * Counts the tensors added so far, virtual ones included.
 *
 * Returns: how many tensors were added (their ids are 1 to this number)
 *
 * Since: 0.2
 */
guint
atomr_cudnn_graph_get_n_tensors (AtomrCudnnGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), 0);
  return self->tensors->len;
}

/**
 * atomr_cudnn_graph_get_n_nodes:
 * @self: an [class@Atomr.CudnnGraph]
 *
 * Counts the nodes added so far.
 *
 * Returns: how many nodes were added
 *
 * Since: 0.2
 */
guint
atomr_cudnn_graph_get_n_nodes (AtomrCudnnGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), 0);
  return self->nodes->len;
}

static GraphTensor *
tensor_at (AtomrCudnnGraph *self,
           guint            id)
{
  return &g_array_index (self->tensors, GraphTensor, id - 1);
}

static gboolean
check_open (AtomrCudnnGraph  *self,
            const gchar      *what,
            GError          **error)
{
  if (self->finalized)
    return FAIL ("cuDNN graph '%s': cannot add %s, the graph is finalized", self->name, what);
  return TRUE;
}

static gboolean
is_float_dtype (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16 ||
         dtype == ATOMR_DTYPE_F64;
}

/* A size-1 dimension's stride means nothing to the data; where it is not
 * a stride cuDNN takes (below 1), give it the span of the dimensions after
 * it.  Other strides are kept as given: they are part of the key. */
static void
normalize_strides (guint         n,
                   const gint64 *dims,
                   gint64       *strides)
{
  for (guint i = 0; i < n; i++)
    if (dims[i] == 1 && (strides[i] < 1 || strides[i] > G_MAXINT32))
      {
        gint64 s = 1;
        for (guint j = i + 1; j < n; j++)
          s = MAX (s, strides[j] * dims[j]);
        strides[i] = s;
      }
}

static guint
add_tensor_common (AtomrCudnnGraph  *self,
                   const gchar      *name,
                   AtomrDtype        dtype,
                   const gint64     *shape,
                   guint             n_dims,
                   const gint64     *strides,
                   gboolean          is_virtual,
                   GError          **error)
{
  GraphTensor t = { 0, };
  g_autofree gchar *auto_name = NULL;

  if (name == NULL)
    name = auto_name = g_strdup_printf ("t%u", self->tensors->len + 1);
  if (!check_open (self, "a tensor", error))
    return 0;
  if (atomr_cudnn_graph_lookup_tensor (self, name) != 0)
    return FAIL0 ("cuDNN graph '%s': there is already a tensor called '%s'", self->name, name);
  if (!is_float_dtype (dtype))
    return FAIL0 ("cuDNN graph '%s': tensor '%s' has dtype %s (takes f32, f16, bf16 or f64)", self->name,
                 name, atomr_dtype_get_name (dtype));
  if (n_dims < 1 || n_dims > MAX_DIMS || shape == NULL)
    return FAIL0 ("cuDNN graph '%s': tensor '%s' has %u dimensions (takes 1 to %d)", self->name, name,
                 shape == NULL ? 0 : n_dims, MAX_DIMS);
  for (guint i = 0; i < n_dims; i++)
    if (shape[i] < 1 || shape[i] > G_MAXINT32)
      return FAIL0 ("cuDNN graph '%s': tensor '%s' dimension %u is %" G_GINT64_FORMAT " (takes 1 to %d)",
                   self->name, name, i, shape[i], G_MAXINT32);
  t.n_dims = n_dims;
  memcpy (t.dims, shape, n_dims * sizeof (gint64));
  if (strides == NULL)
    {
      gint64 s = 1;
      for (guint i = n_dims; i > 0; i--)
        {
          t.strides[i - 1] = s;
          s *= shape[i - 1];
        }
    }
  else
    {
      for (guint i = 0; i < n_dims; i++)
        if (shape[i] > 1 && (strides[i] < 1 || strides[i] > G_MAXINT32))
          return FAIL0 ("cuDNN graph '%s': tensor '%s' stride %u is %" G_GINT64_FORMAT " (takes 1 to %d: "
                       "no broadcast or reversed layouts)", self->name, name, i, strides[i], G_MAXINT32);
      memcpy (t.strides, strides, n_dims * sizeof (gint64));
    }
  normalize_strides (n_dims, t.dims, t.strides);
  t.name = g_strdup (name);
  t.dtype = dtype;
  t.is_virtual = is_virtual != FALSE;
  g_array_append_val (self->tensors, t);
  return self->tensors->len;
}

/**
 * atomr_cudnn_graph_add_tensor:
 * @self: an [class@Atomr.CudnnGraph]
 * @name: (nullable): the tensor's name, unique in the graph (%NULL: "t"
 *   and its id)
 * @like: a view whose dtype, shape and strides the tensor takes (the
 *   view itself is given at execution, and may be another view of that
 *   layout)
 * @error: return location for a #GError
 *
 * Adds a non-virtual tensor: an input of the graph, or an output when a
 * node writes it.
 *
 * Returns: the tensor's id (1, 2, ...), or 0 with @error set
 *
 * Since: 0.2
 */
guint
atomr_cudnn_graph_add_tensor (AtomrCudnnGraph  *self,
                              const gchar      *name,
                              AtomrTensor      *like,
                              GError          **error)
{
  guint n;
  const gint64 *shape, *strides;

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  if (like == NULL || !ATOMR_IS_TENSOR (like))
    return FAIL0 ("cuDNN graph '%s': tensor '%s' is added like a NULL view", self->name,
                 name ? name : "(unnamed)");
  shape = atomr_tensor_get_shape (like, &n);
  strides = atomr_tensor_get_strides (like, NULL);
  return add_tensor_common (self, name, atomr_tensor_get_dtype (like), shape, n, strides, FALSE, error);
}

/**
 * atomr_cudnn_graph_add_tensor_full:
 * @self: an [class@Atomr.CudnnGraph]
 * @name: (nullable): the tensor's name, unique in the graph
 * @dtype: its dtype (f32, f16, bf16 or f64)
 * @shape: (array length=n_dims): its extents, in logical order (N × C ×
 *   spatial for convolutions, batch × rows × columns for matmul)
 * @n_dims: how many (1 to 8)
 * @strides: (array length=n_strides) (nullable): its strides in elements
 *   (%NULL: packed row-major)
 * @n_strides: how many strides (@n_dims, or 0 with %NULL)
 * @is_virtual: %TRUE for an intermediate that exists only inside the
 *   fused computation (no view at execution; one node must write it and
 *   another read it)
 * @error: return location for a #GError
 *
 * Adds a tensor described directly.
 *
 * Returns: the tensor's id, or 0 with @error set
 *
 * Since: 0.2
 */
guint
atomr_cudnn_graph_add_tensor_full (AtomrCudnnGraph  *self,
                                   const gchar      *name,
                                   AtomrDtype        dtype,
                                   const gint64     *shape,
                                   guint             n_dims,
                                   const gint64     *strides,
                                   guint             n_strides,
                                   gboolean          is_virtual,
                                   GError          **error)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  if (strides != NULL && n_strides != n_dims)
    return FAIL0 ("cuDNN graph '%s': tensor '%s' has %u dimensions but %u strides", self->name,
                 name ? name : "(unnamed)", n_dims, n_strides);
  return add_tensor_common (self, name, dtype, shape, n_dims, strides, is_virtual, error);
}

/**
 * atomr_cudnn_graph_lookup_tensor:
 * @self: an [class@Atomr.CudnnGraph]
 * @name: a tensor's name
 *
 * Finds a tensor by the name it was added with.
 *
 * Returns: the id of the tensor called @name, or 0 if there is none
 *
 * Since: 0.2
 */
guint
atomr_cudnn_graph_lookup_tensor (AtomrCudnnGraph *self,
                                 const gchar     *name)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), 0);
  if (name == NULL)
    return 0;
  for (guint i = 0; i < self->tensors->len; i++)
    if (g_strcmp0 (g_array_index (self->tensors, GraphTensor, i).name, name) == 0)
      return i + 1;
  return 0;
}

/**
 * atomr_cudnn_graph_get_tensor_is_virtual:
 * @self: an [class@Atomr.CudnnGraph]
 * @id: a tensor id
 *
 * Tells whether a tensor is a virtual intermediate (one that takes no
 * view at execution).
 *
 * Returns: whether tensor @id exists and is virtual
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_get_tensor_is_virtual (AtomrCudnnGraph *self,
                                         guint            id)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  return id >= 1 && id <= self->tensors->len && tensor_at (self, id)->is_virtual;
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

static gchar *
shape_string (const GraphTensor *t)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < t->n_dims; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "×" : "", t->dims[i]);
  return g_string_free (s, FALSE);
}

static gchar *
shape_string_of (const gint64 *dims,
                 guint         n)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "×" : "", dims[i]);
  return g_string_free (s, FALSE);
}

/* "node 2 (convolution)" */
#define NODE_FMT "cuDNN graph '%s', node %u (%s)"
#define NODE_ARGS self->name, self->nodes->len, node_kind_names[kind]

/* Operand @id of a new node: exists; a virtual one is already written by
 * an earlier node. */
static GraphTensor *
node_input (AtomrCudnnGraph  *self,
            NodeKind          kind,
            const gchar      *role,
            guint             id,
            GError          **error)
{
  GraphTensor *t;

  if (id < 1 || id > self->tensors->len)
    {
      SET_ERROR (NODE_FMT ": %s is tensor id %u (the graph has tensors 1 to %u)", NODE_ARGS, role, id,
            self->tensors->len);
      return NULL;
    }
  t = tensor_at (self, id);
  if (t->is_virtual && t->producer == 0)
    {
      SET_ERROR (NODE_FMT ": %s is virtual tensor '%s', which no earlier node writes (add the node that "
            "computes it first)", NODE_ARGS, role, t->name);
      return NULL;
    }
  return t;
}

/* The output @id of a new node reading @in0 and @in1: exists, written by
 * no other node, read by no earlier node (graphs are built in order, so
 * they have no cycles). */
static GraphTensor *
node_output (AtomrCudnnGraph  *self,
             NodeKind          kind,
             const gchar      *role,
             guint             id,
             guint             in0,
             guint             in1,
             GError          **error)
{
  GraphTensor *t;

  if (id < 1 || id > self->tensors->len)
    {
      SET_ERROR (NODE_FMT ": %s is tensor id %u (the graph has tensors 1 to %u)", NODE_ARGS, role, id,
            self->tensors->len);
      return NULL;
    }
  t = tensor_at (self, id);
  if (id == in0 || id == in1)
    {
      SET_ERROR (NODE_FMT ": %s is tensor '%s', which the node also reads (write a new tensor)", NODE_ARGS,
            role, t->name);
      return NULL;
    }
  if (t->producer != 0)
    {
      SET_ERROR (NODE_FMT ": %s is tensor '%s', which node %u already writes", NODE_ARGS, role, t->name,
            t->producer - 1);
      return NULL;
    }
  if (t->n_readers > 0)
    {
      SET_ERROR (NODE_FMT ": %s is tensor '%s', which an earlier node reads as an input (a tensor is written "
            "before it is read)", NODE_ARGS, role, t->name);
      return NULL;
    }
  return t;
}

static void
node_append (AtomrCudnnGraph *self,
             GraphNode       *node)
{
  for (guint i = 0; i < G_N_ELEMENTS (node->in); i++)
    if (node->in[i] != 0)
      tensor_at (self, node->in[i])->n_readers++;
  tensor_at (self, node->out)->producer = self->nodes->len + 1;
  for (guint i = 0; i < G_N_ELEMENTS (node->more_out); i++)
    if (node->more_out[i] != 0)
      tensor_at (self, node->more_out[i])->producer = self->nodes->len + 1;
  g_array_append_val (self->nodes, *node);
}

static gboolean
same_shape (const GraphTensor *a,
            const GraphTensor *b)
{
  return a->n_dims == b->n_dims && memcmp (a->dims, b->dims, a->n_dims * sizeof (gint64)) == 0;
}

/* @b broadcasts to @x: the same rank, each extent 1 or x's. */
static gboolean
broadcasts (const GraphTensor *b,
            const GraphTensor *x)
{
  if (b->n_dims != x->n_dims)
    return FALSE;
  for (guint i = 0; i < x->n_dims; i++)
    if (b->dims[i] != 1 && b->dims[i] != x->dims[i])
      return FALSE;
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_pointwise:
 * @self: an [class@Atomr.CudnnGraph]
 * @mode: the function
 * @x: the input's tensor id
 * @b: the second operand's id for add, mul and bias (each of its extents 1
 *   or x's); 0 for the unary functions
 * @y: the output's id: x's shape
 * @error: return location for a #GError
 *
 * Adds y = @mode (x[, b]), computed in f32 (f64 for f64 inputs).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_pointwise (AtomrCudnnGraph      *self,
                                 AtomrCudnnPointwise   mode,
                                 guint                 x,
                                 guint                 b,
                                 guint                 y,
                                 GError              **error)
{
  const NodeKind kind = NODE_POINTWISE;
  gboolean binary;
  GraphTensor *tx, *tb = NULL, *ty;
  GraphNode node = { 0, };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) mode > ATOMR_CUDNN_POINTWISE_TANH)
    return FAIL (NODE_FMT ": mode %d is not an AtomrCudnnPointwise", NODE_ARGS, (gint) mode);
  binary = mode == ATOMR_CUDNN_POINTWISE_ADD || mode == ATOMR_CUDNN_POINTWISE_MUL ||
           mode == ATOMR_CUDNN_POINTWISE_BIAS;
  if (binary && b == 0)
    return FAIL (NODE_FMT ": add, mul and bias take a second operand b (it is 0)", NODE_ARGS);
  if (!binary && b != 0)
    return FAIL (NODE_FMT ": relu, gelu, sigmoid and tanh take one operand (b is %u, give 0)", NODE_ARGS, b);
  if ((tx = node_input (self, kind, "x", x, error)) == NULL ||
      (binary && (tb = node_input (self, kind, "b", b, error)) == NULL) ||
      (ty = node_output (self, kind, "y", y, x, b, error)) == NULL)
    return FALSE;
  if (!same_shape (tx, ty))
    {
      g_autofree gchar *xs = shape_string (tx), *ys = shape_string (ty);
      return FAIL (NODE_FMT ": y ('%s', %s) must have the shape of x ('%s', %s)", NODE_ARGS, ty->name, ys,
                   tx->name, xs);
    }
  if (tb != NULL && !broadcasts (tb, tx))
    {
      g_autofree gchar *xs = shape_string (tx), *bs = shape_string (tb);
      return FAIL (NODE_FMT ": b ('%s', %s) does not broadcast to x ('%s', %s): it needs x's rank and "
                   "each extent 1 or x's", NODE_ARGS, tb->name, bs, tx->name, xs);
    }
  if (mode == ATOMR_CUDNN_POINTWISE_BIAS)
    {
      guint wide = 0;
      for (guint i = 0; i < tb->n_dims; i++)
        wide += tb->dims[i] > 1;
      if (wide > 1)
        {
          g_autofree gchar *bs = shape_string (tb);
          return FAIL (NODE_FMT ": the bias '%s' is %s (a bias has one extent above 1; use add to add a "
                       "tensor)", NODE_ARGS, tb->name, bs);
        }
    }
  node.kind = kind;
  node.mode = mode;
  node.in[0] = x;
  node.in[1] = b;
  node.out = y;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_scale:
 * @self: an [class@Atomr.CudnnGraph]
 * @x: the input's tensor id
 * @scale: the factor (finite; passed by value at execution, so graphs
 *   that differ only in it share one plan)
 * @y: the output's id: x's shape
 * @error: return location for a #GError
 *
 * Adds y = @scale · x.
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_scale (AtomrCudnnGraph  *self,
                             guint             x,
                             gdouble           scale,
                             guint             y,
                             GError          **error)
{
  const NodeKind kind = NODE_SCALE;
  GraphTensor *tx, *ty;
  GraphNode node = { 0, };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if (!isfinite (scale) || fabs (scale) > FLT_MAX)
    return FAIL (NODE_FMT ": scale is %g (takes a finite f32 value)", NODE_ARGS, scale);
  if ((tx = node_input (self, kind, "x", x, error)) == NULL ||
      (ty = node_output (self, kind, "y", y, x, 0, error)) == NULL)
    return FALSE;
  if (!same_shape (tx, ty))
    {
      g_autofree gchar *xs = shape_string (tx), *ys = shape_string (ty);
      return FAIL (NODE_FMT ": y ('%s', %s) must have the shape of x ('%s', %s)", NODE_ARGS, ty->name, ys,
                   tx->name, xs);
    }
  node.kind = kind;
  node.in[0] = x;
  node.out = y;
  node.value = scale;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_convolution:
 * @self: an [class@Atomr.CudnnGraph]
 * @direction: which convolution
 * @conv: padding, stride, dilation and groups (copied now; its math
 *   setting is not used: graphs run with cuDNN's default math)
 * @a: forward: x; backward-data: dy; backward-filter: x
 * @b: forward: w; backward-data: w; backward-filter: dy
 * @out: forward: y; backward-data: dx; backward-filter: dw
 * @error: return location for a #GError
 *
 * Adds a convolution (cross-correlation, as in deep learning).  Views are
 * N × C × spatial, filters K × C/groups × spatial, in any layout their
 * strides describe.  The two operands must share a dtype; the output may
 * differ (an f32 virtual output of f16 operands, say).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_convolution (AtomrCudnnGraph          *self,
                                   AtomrCudnnConvDirection   direction,
                                   AtomrConvolution         *conv,
                                   guint                     a,
                                   guint                     b,
                                   guint                     out,
                                   GError                  **error)
{
  const NodeKind kind = NODE_CONVOLUTION;
  static const gchar *const roles[3][3] = {
    { "x", "w", "y" }, { "dy", "w", "dx" }, { "x", "dy", "dw" },
  };
  GraphTensor *ta, *tb, *to;
  const GraphTensor *x, *w, *y;
  GraphNode node = { 0, };
  gint64 want[MAX_DIMS];
  g_autofree gchar *op = NULL;

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) direction > ATOMR_CUDNN_CONV_BACKWARD_FILTER)
    return FAIL (NODE_FMT ": direction %d is not an AtomrCudnnConvDirection", NODE_ARGS, (gint) direction);
  if (conv == NULL || !ATOMR_IS_CONVOLUTION (conv))
    return FAIL (NODE_FMT ": the convolution parameters are NULL", NODE_ARGS);
  if ((ta = node_input (self, kind, roles[direction][0], a, error)) == NULL ||
      (tb = node_input (self, kind, roles[direction][1], b, error)) == NULL ||
      (to = node_output (self, kind, roles[direction][2], out, a, b, error)) == NULL)
    return FALSE;
  if (ta->dtype != tb->dtype)
    return FAIL (NODE_FMT ": %s ('%s') is %s but %s ('%s') is %s (a convolution's operands share a dtype)",
                 NODE_ARGS, roles[direction][0], ta->name, atomr_dtype_get_name (ta->dtype),
                 roles[direction][1], tb->name, atomr_dtype_get_name (tb->dtype));
  atomr_cudnn_conv_params_get (conv, &node.conv);
  switch (direction)
    {
    case ATOMR_CUDNN_CONV_FORWARD:         x = ta; w = tb; y = to; break;
    case ATOMR_CUDNN_CONV_BACKWARD_DATA:   x = to; w = tb; y = ta; break;
    case ATOMR_CUDNN_CONV_BACKWARD_FILTER: default: x = ta; w = to; y = tb; break;
    }
  op = g_strdup_printf ("cuDNN graph '%s', node %u (convolution)", self->name, self->nodes->len);
  if (!atomr_cudnn_conv_output_shape (&node.conv, op, x->name, x->dims, x->n_dims, w->name, w->dims,
                                      w->n_dims, want, error))
    return FALSE;
  if (y->n_dims != x->n_dims || memcmp (y->dims, want, x->n_dims * sizeof (gint64)) != 0)
    {
      g_autofree gchar *ys = shape_string (y), *ws = shape_string_of (want, x->n_dims);
      return FAIL ("%s: tensor '%s' is %s; with '%s' and '%s' and these parameters the convolution's "
                   "output is %s", op, y->name, ys, x->name, w->name, ws);
    }
  node.kind = kind;
  node.mode = direction;
  node.in[0] = a;
  node.in[1] = b;
  node.out = out;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_matmul:
 * @self: an [class@Atomr.CudnnGraph]
 * @a: batch × M × K (batch 1 broadcasts)
 * @b: batch × K × N (batch 1 broadcasts)
 * @c: the output's id, batch × M × N
 * @error: return location for a #GError
 *
 * Adds c = a · b for each batch, computed in f32 (f64 for f64 inputs);
 * a and b share a dtype.
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_matmul (AtomrCudnnGraph  *self,
                              guint             a,
                              guint             b,
                              guint             c,
                              GError          **error)
{
  const NodeKind kind = NODE_MATMUL;
  GraphTensor *ta, *tb, *tc;
  GraphNode node = { 0, };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((ta = node_input (self, kind, "a", a, error)) == NULL ||
      (tb = node_input (self, kind, "b", b, error)) == NULL ||
      (tc = node_output (self, kind, "c", c, a, b, error)) == NULL)
    return FALSE;
  {
    const GraphTensor *all[3] = { ta, tb, tc };
    static const gchar *const roles[3] = { "a", "b", "c" };
    for (guint i = 0; i < 3; i++)
      if (all[i]->n_dims != 3)
        return FAIL (NODE_FMT ": %s ('%s') has %u dimensions (matmul takes batch × rows × columns)",
                     NODE_ARGS, roles[i], all[i]->name, all[i]->n_dims);
  }
  if (ta->dtype != tb->dtype)
    return FAIL (NODE_FMT ": a ('%s') is %s but b ('%s') is %s (matmul's operands share a dtype)",
                 NODE_ARGS, ta->name, atomr_dtype_get_name (ta->dtype), tb->name,
                 atomr_dtype_get_name (tb->dtype));
  if (ta->dims[2] != tb->dims[1] || tc->dims[1] != ta->dims[1] || tc->dims[2] != tb->dims[2] ||
      (ta->dims[0] != 1 && ta->dims[0] != tc->dims[0]) || (tb->dims[0] != 1 && tb->dims[0] != tc->dims[0]))
    {
      g_autofree gchar *as = shape_string (ta), *bs = shape_string (tb), *cs = shape_string (tc);
      return FAIL (NODE_FMT ": a ('%s') is %s, b ('%s') %s and c ('%s') %s: takes B × M × K, B × K × N and "
                   "B × M × N (a batch of 1 broadcasts)", NODE_ARGS, ta->name, as, tb->name, bs, tc->name, cs);
    }
  node.kind = kind;
  node.in[0] = a;
  node.in[1] = b;
  node.out = c;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_reduction:
 * @self: an [class@Atomr.CudnnGraph]
 * @mode: what to compute
 * @x: the input's id
 * @y: the output's id: x's rank, each extent 1 (reduced) or x's
 * @error: return location for a #GError
 *
 * Adds y = @mode of x over the dimensions where y has extent 1 (and x
 * more).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_reduction (AtomrCudnnGraph      *self,
                                 AtomrCudnnReduction   mode,
                                 guint                 x,
                                 guint                 y,
                                 GError              **error)
{
  const NodeKind kind = NODE_REDUCTION;
  GraphTensor *tx, *ty;
  GraphNode node = { 0, };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) mode > ATOMR_CUDNN_REDUCTION_MEAN)
    return FAIL (NODE_FMT ": mode %d is not an AtomrCudnnReduction", NODE_ARGS, (gint) mode);
  if ((tx = node_input (self, kind, "x", x, error)) == NULL ||
      (ty = node_output (self, kind, "y", y, x, 0, error)) == NULL)
    return FALSE;
  if (!broadcasts (ty, tx))
    {
      g_autofree gchar *xs = shape_string (tx), *ys = shape_string (ty);
      return FAIL (NODE_FMT ": y ('%s', %s) must have x's rank ('%s', %s) and each extent 1 or x's",
                   NODE_ARGS, ty->name, ys, tx->name, xs);
    }
  node.kind = kind;
  node.mode = mode;
  node.in[0] = x;
  node.out = y;
  node_append (self, &node);
  return TRUE;
}

/* @p has x's rank, 1 in dimension 0 and x's extents elsewhere. */
static gboolean
norm_parameter_shape (const GraphTensor *p,
                      const GraphTensor *x)
{
  if (p->n_dims != x->n_dims || p->dims[0] != 1)
    return FALSE;
  for (guint i = 1; i < x->n_dims; i++)
    if (p->dims[i] != x->dims[i])
      return FALSE;
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_norm:
 * @self: an [class@Atomr.CudnnGraph]
 * @mode: layer or RMS normalization
 * @x: the input's id, N × C × ... (at least 2 dimensions): each of the N
 *   rows is normalized over all its other dimensions
 * @scale: γ: 1 × C × ... (x's extents but the first)
 * @bias: β, shaped like @scale; required for layer norm, 0 for none with
 *   RMS norm
 * @epsilon: added to the variance (positive, finite; passed by value at
 *   execution, not part of the key)
 * @y: the output's id: x's shape
 * @error: return location for a #GError
 *
 * Adds an inference normalization (no statistics are saved): layer norm
 * y = (x − mean) / √(var + ε) · γ + β, RMS norm y = x / √(mean (x²) + ε) ·
 * γ [+ β].
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_norm (AtomrCudnnGraph  *self,
                            AtomrCudnnNorm    mode,
                            guint             x,
                            guint             scale,
                            guint             bias,
                            gdouble           epsilon,
                            guint             y,
                            GError          **error)
{
  const NodeKind kind = NODE_NORM;
  GraphTensor *tx, *ts, *tb = NULL, *ty;
  GraphNode node = { 0, };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) mode > ATOMR_CUDNN_NORM_RMS)
    return FAIL (NODE_FMT ": mode %d is not a layer or RMS norm (batch norm: add_batch_norm_training)",
                 NODE_ARGS, (gint) mode);
  if (!isfinite (epsilon) || epsilon <= 0 || epsilon > FLT_MAX)
    return FAIL (NODE_FMT ": epsilon is %g (takes a positive finite f32 value)", NODE_ARGS, epsilon);
  if (mode == ATOMR_CUDNN_NORM_LAYER && bias == 0)
    return FAIL (NODE_FMT ": layer norm takes a bias (it is 0)", NODE_ARGS);
  if ((tx = node_input (self, kind, "x", x, error)) == NULL ||
      (ts = node_input (self, kind, "scale", scale, error)) == NULL ||
      (bias != 0 && (tb = node_input (self, kind, "bias", bias, error)) == NULL))
    return FALSE;
  if (y == bias && bias != 0)
    return FAIL (NODE_FMT ": y is tensor '%s', which the node also reads (write a new tensor)", NODE_ARGS,
                 tb->name);
  if ((ty = node_output (self, kind, "y", y, x, scale, error)) == NULL)
    return FALSE;
  if (tx->n_dims < 2)
    return FAIL (NODE_FMT ": x ('%s') has %u dimension (a norm takes rows × at least one more)", NODE_ARGS,
                 tx->name, tx->n_dims);
  if (!same_shape (tx, ty))
    {
      g_autofree gchar *xs = shape_string (tx), *ys = shape_string (ty);
      return FAIL (NODE_FMT ": y ('%s', %s) must have the shape of x ('%s', %s)", NODE_ARGS, ty->name, ys,
                   tx->name, xs);
    }
  {
    const GraphTensor *params[2] = { ts, tb };
    static const gchar *const roles[2] = { "scale", "bias" };
    for (guint i = 0; i < 2; i++)
      if (params[i] != NULL && !norm_parameter_shape (params[i], tx))
        {
          g_autofree gchar *xs = shape_string (tx), *ps = shape_string (params[i]);
          return FAIL (NODE_FMT ": %s ('%s') is %s; with x ('%s') %s it must be 1 followed by x's extents but "
                       "the first", NODE_ARGS, roles[i], params[i]->name, ps, tx->name, xs);
        }
  }
  node.kind = kind;
  node.mode = mode;
  node.in[0] = x;
  node.in[1] = scale;
  node.in[2] = bias;
  node.out = y;
  node.value = epsilon;
  node_append (self, &node);
  return TRUE;
}

/* @p has x's rank, 1 everywhere but dimension 1, which is x's (a
 * per-channel parameter of a batch norm). */
static gboolean
channel_parameter_shape (const GraphTensor *p,
                         const GraphTensor *x)
{
  if (p->n_dims != x->n_dims)
    return FALSE;
  for (guint i = 0; i < x->n_dims; i++)
    if (p->dims[i] != (i == 1 ? x->dims[1] : 1))
      return FALSE;
  return TRUE;
}

/* @p has x's rank, x's extent in dimension 0 and 1 elsewhere (a per-row
 * statistic of a layer or RMS norm). */
static gboolean
row_statistic_shape (const GraphTensor *p,
                     const GraphTensor *x)
{
  if (p->n_dims != x->n_dims)
    return FALSE;
  for (guint i = 0; i < x->n_dims; i++)
    if (p->dims[i] != (i == 0 ? x->dims[0] : 1))
      return FALSE;
  return TRUE;
}

/* What a norm node's operand must look like. */
typedef enum {
  SHAPE_X,         /* x's shape */
  SHAPE_PARAM,     /* γ, β and their gradients */
  SHAPE_STAT,      /* mean, inverse variance, running statistics: f32 */
} NormShape;

typedef struct {
  const gchar *role;
  guint        id;
  NormShape    shape;
  gboolean     output;
} NormOperand;

/* Checks the operands of a norm training or backward node (@ops[0] is x,
 * an input): ids (each input readable, each output writable, distinct
 * from every other operand), shapes for @mode and dtypes (x's dtype for
 * x-shaped and parameter tensors, f32 for statistics); fills @node's
 * in[] and out/more_out[] in order. */
static gboolean
norm_operands (AtomrCudnnGraph    *self,
               NodeKind            kind,
               AtomrCudnnNorm      mode,
               const NormOperand  *ops,
               guint               n_ops,
               GraphNode          *node,
               GError            **error)
{
  GraphTensor *tx = NULL;
  guint n_in = 0, n_out = 0;

  for (guint i = 0; i < n_ops; i++)
    {
      const NormOperand *o = &ops[i];
      GraphTensor *t;
      gboolean shape_ok;
      AtomrDtype want;

      if (o->id == 0)
        {
          if (o->output)
            n_out++;
          else
            n_in++;
          continue;
        }
      for (guint j = 0; j < i; j++)
        if (ops[j].id == o->id)
          return FAIL (NODE_FMT ": %s and %s are both tensor '%s' (each operand is its own tensor)", NODE_ARGS,
                       ops[j].role, o->role, tensor_at (self, o->id)->name);
      t = o->output ? node_output (self, kind, o->role, o->id, 0, 0, error)
                    : node_input (self, kind, o->role, o->id, error);
      if (t == NULL)
        return FALSE;
      if (tx == NULL)
        {
          tx = t;
          if (tx->n_dims < 2)
            return FAIL (NODE_FMT ": x ('%s') has %u dimension (a norm takes rows × at least one more)",
                         NODE_ARGS, tx->name, tx->n_dims);
        }
      switch (o->shape)
        {
        case SHAPE_X:
          shape_ok = same_shape (t, tx);
          break;
        case SHAPE_PARAM:
          shape_ok = mode == ATOMR_CUDNN_NORM_BATCH ? channel_parameter_shape (t, tx)
                                                    : norm_parameter_shape (t, tx);
          break;
        default:
          shape_ok = mode == ATOMR_CUDNN_NORM_BATCH ? channel_parameter_shape (t, tx)
                                                    : row_statistic_shape (t, tx);
          break;
        }
      if (!shape_ok)
        {
          g_autofree gchar *xs = shape_string (tx), *ts = shape_string (t);
          static const gchar *const rule[3][2] = {
            { "x's shape", "x's shape" },
            { "1 followed by x's extents but the first", "1 × C × 1 … (x's channels)" },
            { "x's rows followed by 1s", "1 × C × 1 … (x's channels)" },
          };
          return FAIL (NODE_FMT ": %s ('%s') is %s; with x ('%s') %s it must be %s", NODE_ARGS, o->role,
                       t->name, ts, tx->name, xs, rule[o->shape][mode == ATOMR_CUDNN_NORM_BATCH]);
        }
      /* statistics are f32; γ, β and their gradients x's dtype or f32
       * (cuDNN's norm engines take f32 parameters with half data) */
      want = o->shape == SHAPE_STAT ? ATOMR_DTYPE_F32 : tx->dtype;
      if (o->shape == SHAPE_PARAM && t->dtype != want && t->dtype != ATOMR_DTYPE_F32)
        return FAIL (NODE_FMT ": %s ('%s') has dtype %s (takes x's dtype, %s, or f32)", NODE_ARGS, o->role,
                     t->name, atomr_dtype_get_name (t->dtype), atomr_dtype_get_name (want));
      if (o->shape != SHAPE_PARAM && t->dtype != want)
        return FAIL (NODE_FMT ": %s ('%s') has dtype %s (takes %s%s)", NODE_ARGS, o->role, t->name,
                     atomr_dtype_get_name (t->dtype), atomr_dtype_get_name (want),
                     o->shape == SHAPE_STAT ? ": statistics are f32" : ", x's dtype");
      if (o->output)
        {
          if (n_out == 0)
            node->out = o->id;
          else
            node->more_out[n_out - 1] = o->id;
          n_out++;
        }
      else
        node->in[n_in++] = o->id;
    }
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_norm_training:
 * @self: an [class@Atomr.CudnnGraph]
 * @mode: %ATOMR_CUDNN_NORM_LAYER or %ATOMR_CUDNN_NORM_RMS
 * @x: the input's id, N × C × ... (at least 2 dimensions): each of the N
 *   rows is normalized over all its other dimensions
 * @scale: γ: 1 × C × ... (x's extents but the first), x's dtype or f32
 * @bias: β, shaped like @scale; required for layer norm, 0 for none with
 *   RMS norm
 * @epsilon: added to the variance (positive, finite; passed by value at
 *   execution, not part of the key)
 * @y: the output's id: x's shape and dtype
 * @mean: the saved mean of each row, f32 N × 1 × ... (x's rank) for layer
 *   norm; 0 for RMS norm, which subtracts no mean
 * @inv_variance: the saved 1 / √(var + ε) of each row (RMS norm: 1 /
 *   √(mean (x²) + ε)), f32, shaped like @mean
 * @error: return location for a #GError
 *
 * Adds a training-phase normalization: y as
 * [method@Atomr.CudnnGraph.add_norm] computes it, plus the statistics the
 * backward node ([method@Atomr.CudnnGraph.add_norm_backward]) takes (the
 * variance is the biased one, as PyTorch's).  The statistics may be
 * virtual when a later node of the same graph reads them.
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_norm_training (AtomrCudnnGraph  *self,
                                     AtomrCudnnNorm    mode,
                                     guint             x,
                                     guint             scale,
                                     guint             bias,
                                     gdouble           epsilon,
                                     guint             y,
                                     guint             mean,
                                     guint             inv_variance,
                                     GError          **error)
{
  const NodeKind kind = NODE_NORM_TRAIN;
  GraphNode node = { 0, };
  const NormOperand ops[] = {
    { "x", x, SHAPE_X, FALSE }, { "scale", scale, SHAPE_PARAM, FALSE }, { "bias", bias, SHAPE_PARAM, FALSE },
    { "y", y, SHAPE_X, TRUE }, { "mean", mean, SHAPE_STAT, TRUE },
    { "inv_variance", inv_variance, SHAPE_STAT, TRUE },
  };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) mode > ATOMR_CUDNN_NORM_RMS)
    return FAIL (NODE_FMT ": mode %d is not a layer or RMS norm (batch norm: add_batch_norm_training)",
                 NODE_ARGS, (gint) mode);
  if (!isfinite (epsilon) || epsilon <= 0 || epsilon > FLT_MAX)
    return FAIL (NODE_FMT ": epsilon is %g (takes a positive finite f32 value)", NODE_ARGS, epsilon);
  if (x == 0 || scale == 0 || y == 0 || inv_variance == 0)
    return FAIL (NODE_FMT ": x, scale, y and inv_variance are required (x %u, scale %u, y %u, "
                 "inv_variance %u)", NODE_ARGS, x, scale, y, inv_variance);
  if (mode == ATOMR_CUDNN_NORM_LAYER && (bias == 0 || mean == 0))
    return FAIL (NODE_FMT ": layer norm takes a bias and a mean (bias %u, mean %u)", NODE_ARGS, bias, mean);
  if (mode == ATOMR_CUDNN_NORM_RMS && mean != 0)
    return FAIL (NODE_FMT ": RMS norm subtracts no mean, so it saves none (mean is %u: pass 0)", NODE_ARGS,
                 mean);
  if (!norm_operands (self, kind, mode, ops, G_N_ELEMENTS (ops), &node, error))
    return FALSE;
  node.kind = kind;
  node.mode = mode;
  node.value = epsilon;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_batch_norm_training:
 * @self: an [class@Atomr.CudnnGraph]
 * @x: the input's id, N × C × spatial (at least 2 dimensions): each
 *   channel is normalized over N and the spatial dimensions
 * @scale: γ: 1 × C × 1 ... (x's rank), x's dtype or f32
 * @bias: β, shaped like @scale
 * @epsilon: added to the variance (positive, finite; by value)
 * @momentum: the running statistics' update factor in [0, 1]: next =
 *   (1 − momentum) · running + momentum · batch (by value)
 * @running_mean: the running mean before this batch, f32 shaped like
 *   @scale; 0 for no running statistics
 * @running_var: the running variance before, likewise (0 exactly when
 *   @running_mean is 0)
 * @y: the output's id: x's shape and dtype
 * @mean: the batch mean of each channel, f32 shaped like @scale
 * @inv_variance: 1 / √(var + ε) of each channel (the biased variance), f32
 * @next_running_mean: the updated running mean, f32 (0 exactly when
 *   @running_mean is 0); another tensor than @running_mean (a graph
 *   writes no tensor it reads: alternate two buffers between steps)
 * @next_running_var: the updated running variance (unbiased batch
 *   variance, as PyTorch's), likewise
 * @error: return location for a #GError
 *
 * Adds a training-phase batch normalization with cuDNN's norm operation
 * (its engines want channels-last x; other layouts may find no engine,
 * %ATOMR_ERROR_NOT_SUPPORTED at execution).
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_batch_norm_training (AtomrCudnnGraph  *self,
                                           guint             x,
                                           guint             scale,
                                           guint             bias,
                                           gdouble           epsilon,
                                           gdouble           momentum,
                                           guint             running_mean,
                                           guint             running_var,
                                           guint             y,
                                           guint             mean,
                                           guint             inv_variance,
                                           guint             next_running_mean,
                                           guint             next_running_var,
                                           GError          **error)
{
  const NodeKind kind = NODE_NORM_TRAIN;
  const AtomrCudnnNorm mode = ATOMR_CUDNN_NORM_BATCH;
  GraphNode node = { 0, };
  const NormOperand ops[] = {
    { "x", x, SHAPE_X, FALSE }, { "scale", scale, SHAPE_PARAM, FALSE }, { "bias", bias, SHAPE_PARAM, FALSE },
    { "running_mean", running_mean, SHAPE_STAT, FALSE }, { "running_var", running_var, SHAPE_STAT, FALSE },
    { "y", y, SHAPE_X, TRUE }, { "mean", mean, SHAPE_STAT, TRUE },
    { "inv_variance", inv_variance, SHAPE_STAT, TRUE },
    { "next_running_mean", next_running_mean, SHAPE_STAT, TRUE },
    { "next_running_var", next_running_var, SHAPE_STAT, TRUE },
  };
  gboolean has_running = running_mean != 0;

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if (!isfinite (epsilon) || epsilon <= 0 || epsilon > FLT_MAX)
    return FAIL (NODE_FMT ": epsilon is %g (takes a positive finite f32 value)", NODE_ARGS, epsilon);
  if (!(momentum >= 0 && momentum <= 1))
    return FAIL (NODE_FMT ": momentum is %g (takes 0 to 1)", NODE_ARGS, momentum);
  if (x == 0 || scale == 0 || bias == 0 || y == 0 || mean == 0 || inv_variance == 0)
    return FAIL (NODE_FMT ": x, scale, bias, y, mean and inv_variance are required (x %u, scale %u, bias %u, "
                 "y %u, mean %u, inv_variance %u)", NODE_ARGS, x, scale, bias, y, mean, inv_variance);
  if ((running_var != 0) != has_running || (next_running_mean != 0) != has_running ||
      (next_running_var != 0) != has_running)
    return FAIL (NODE_FMT ": the running statistics are all four tensors or none (running_mean %u, running_var "
                 "%u, next_running_mean %u, next_running_var %u)", NODE_ARGS, running_mean, running_var,
                 next_running_mean, next_running_var);
  if (!norm_operands (self, kind, mode, ops, G_N_ELEMENTS (ops), &node, error))
    return FALSE;
  node.kind = kind;
  node.mode = mode;
  node.value = epsilon;
  node.value2 = momentum;
  node_append (self, &node);
  return TRUE;
}

/**
 * atomr_cudnn_graph_add_norm_backward:
 * @self: an [class@Atomr.CudnnGraph]
 * @mode: the normalization of the forward node (layer, RMS or batch)
 * @x: the forward node's input
 * @dy: the gradient of its output y: x's shape and dtype
 * @scale: its γ
 * @mean: the mean it saved (0 for RMS norm)
 * @inv_variance: the inverse variance it saved
 * @dx: the gradient of x: x's shape and dtype
 * @dscale: the gradient of γ, shaped like it (x's dtype or f32)
 * @dbias: the gradient of β, shaped like γ; required for layer and batch
 *   norms, 0 for none with RMS norm
 * @error: return location for a #GError
 *
 * Adds the backward pass of a training-phase normalization
 * ([method@Atomr.CudnnGraph.add_norm_training],
 * [method@Atomr.CudnnGraph.add_batch_norm_training]): operands as
 * there, statistics f32.  The gradients are written, not accumulated.
 *
 * Returns: %TRUE, or %FALSE with @error set
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_add_norm_backward (AtomrCudnnGraph  *self,
                                     AtomrCudnnNorm    mode,
                                     guint             x,
                                     guint             dy,
                                     guint             scale,
                                     guint             mean,
                                     guint             inv_variance,
                                     guint             dx,
                                     guint             dscale,
                                     guint             dbias,
                                     GError          **error)
{
  const NodeKind kind = NODE_NORM_BWD;
  GraphNode node = { 0, };
  const NormOperand ops[] = {
    { "x", x, SHAPE_X, FALSE }, { "dy", dy, SHAPE_X, FALSE }, { "scale", scale, SHAPE_PARAM, FALSE },
    { "mean", mean, SHAPE_STAT, FALSE }, { "inv_variance", inv_variance, SHAPE_STAT, FALSE },
    { "dx", dx, SHAPE_X, TRUE }, { "dscale", dscale, SHAPE_PARAM, TRUE }, { "dbias", dbias, SHAPE_PARAM, TRUE },
  };

  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (!check_open (self, "a node", error))
    return FALSE;
  if ((guint) mode > ATOMR_CUDNN_NORM_BATCH)
    return FAIL (NODE_FMT ": mode %d is not an AtomrCudnnNorm", NODE_ARGS, (gint) mode);
  if (x == 0 || dy == 0 || scale == 0 || inv_variance == 0 || dx == 0 || dscale == 0)
    return FAIL (NODE_FMT ": x, dy, scale, inv_variance, dx and dscale are required (x %u, dy %u, scale %u, "
                 "inv_variance %u, dx %u, dscale %u)", NODE_ARGS, x, dy, scale, inv_variance, dx, dscale);
  if (mode != ATOMR_CUDNN_NORM_RMS && (mean == 0 || dbias == 0))
    return FAIL (NODE_FMT ": %s norm takes a mean and a dbias (mean %u, dbias %u)", NODE_ARGS,
                 mode == ATOMR_CUDNN_NORM_LAYER ? "layer" : "batch", mean, dbias);
  if (mode == ATOMR_CUDNN_NORM_RMS && mean != 0)
    return FAIL (NODE_FMT ": RMS norm saves no mean (mean is %u: pass 0)", NODE_ARGS, mean);
  if (!norm_operands (self, kind, mode, ops, G_N_ELEMENTS (ops), &node, error))
    return FALSE;
  node.kind = kind;
  node.mode = mode;
  node_append (self, &node);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Finalize and key                                                     */

static void
put (GByteArray *a,
     gint64      v)
{
  g_byte_array_append (a, (const guint8 *) &v, sizeof v);
}

/* The structure, every tensor's dtype, shape, strides and virtuality and
 * every node's kind, mode, operands and attributes (not names, not
 * by-value scalars). */
static GBytes *
compute_key (AtomrCudnnGraph *self)
{
  GByteArray *a = g_byte_array_new ();
  static const gchar magic[16] = "atomr-cudnn-gr1";

  g_byte_array_append (a, (const guint8 *) magic, sizeof magic);
  put (a, self->tensors->len);
  put (a, self->nodes->len);
  for (guint i = 0; i < self->tensors->len; i++)
    {
      const GraphTensor *t = &g_array_index (self->tensors, GraphTensor, i);
      put (a, t->dtype);
      put (a, t->n_dims);
      put (a, t->is_virtual);
      for (guint d = 0; d < t->n_dims; d++)
        {
          put (a, t->dims[d]);
          put (a, t->strides[d]);
        }
    }
  for (guint i = 0; i < self->nodes->len; i++)
    {
      const GraphNode *n = &g_array_index (self->nodes, GraphNode, i);
      put (a, n->kind);
      put (a, n->mode);
      for (guint k = 0; k < N_IN; k++)
        put (a, n->in[k]);
      put (a, n->out);
      for (guint k = 0; k < N_MORE_OUT; k++)
        put (a, n->more_out[k]);
      if (n->kind == NODE_CONVOLUTION)
        {
          put (a, n->conv.n_spatial);
          put (a, n->conv.groups);
          for (guint d = 0; d < n->conv.n_spatial; d++)
            {
              put (a, n->conv.padding[d]);
              put (a, n->conv.stride[d]);
              put (a, n->conv.dilation[d]);
            }
        }
    }
  return g_byte_array_free_to_bytes (a);
}

/**
 * atomr_cudnn_graph_finalize:
 * @self: an [class@Atomr.CudnnGraph]
 * @error: return location for a #GError
 *
 * Checks the whole graph and freezes it: it has a node; every tensor is
 * read or written by some node; every virtual tensor is written by one
 * node and read by another (a virtual output would be lost).  Calling it
 * again on a finalized graph does nothing.
 *
 * Returns: %TRUE, or %FALSE with @error set (%ATOMR_ERROR_INVALID_ARGUMENT
 *   naming the tensor); the graph can be fixed and finalized again
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_graph_finalize (AtomrCudnnGraph  *self,
                            GError          **error)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  if (self->finalized)
    return TRUE;
  if (self->nodes->len == 0)
    return FAIL ("cuDNN graph '%s' has no nodes", self->name);
  for (guint i = 0; i < self->tensors->len; i++)
    {
      const GraphTensor *t = &g_array_index (self->tensors, GraphTensor, i);
      if (t->producer == 0 && t->n_readers == 0)
        return FAIL ("cuDNN graph '%s': tensor '%s' (id %u) is dangling: no node reads or writes it",
                     self->name, t->name, i + 1);
      if (t->is_virtual && t->n_readers == 0)
        return FAIL ("cuDNN graph '%s': virtual tensor '%s' (id %u) is written by node %u but read by no "
                     "node (its values would be lost: make it a real tensor to keep them)",
                     self->name, t->name, i + 1, t->producer - 1);
    }
  self->key = compute_key (self);
  self->finalized = TRUE;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FINALIZED]);
  return TRUE;
}

/**
 * atomr_cudnn_graph_get_key:
 * @self: an [class@Atomr.CudnnGraph]
 *
 * The graph's structural signature: equal for graphs built with the same
 * calls (names aside), different when any dtype, extent, stride, node,
 * operand, mode or attribute differs.  Scale factors are passed by value
 * and are not part of it.  The actor's plan cache adds the device's arch
 * and the views' pointer alignment.
 *
 * Returns: (transfer full): the key's bytes (computed now when the graph
 *   is not finalized yet)
 *
 * Since: 0.2
 */
GBytes *
atomr_cudnn_graph_get_key (AtomrCudnnGraph *self)
{
  g_return_val_if_fail (ATOMR_IS_CUDNN_GRAPH (self), NULL);
  if (self->key != NULL)
    return g_bytes_ref (self->key);
  return compute_key (self);
}

/* ------------------------------------------------------------------ */
/* Backend descriptors (actor thread)                                   */

static cudnnDataType_t
cudnn_dtype (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return CUDNN_DATA_HALF;
    case ATOMR_DTYPE_BF16: return CUDNN_DATA_BFLOAT16;
    case ATOMR_DTYPE_F64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
    }
}

static cudnnDataType_t
node_compute (AtomrCudnnGraph *self,
              const GraphNode *n)
{
  return tensor_at (self, n->in[0])->dtype == ATOMR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

static gboolean
backend_convolution (AtomrCudnnGraph         *self,
                     AtomrCudnnBackendGraph  *g,
                     const GraphNode         *n,
                     GError                 **error)
{
  /* the node's operands by role: x (dx backward data), w (dw backward
   * filter), y (dy both backward passes) */
  gint64 x = n->mode == ATOMR_CUDNN_CONV_BACKWARD_DATA ? (gint64) n->out : (gint64) n->in[0];
  gint64 w = n->mode == ATOMR_CUDNN_CONV_BACKWARD_FILTER ? (gint64) n->out : (gint64) n->in[1];
  gint64 y = n->mode == ATOMR_CUDNN_CONV_FORWARD ? (gint64) n->out
           : n->mode == ATOMR_CUDNN_CONV_BACKWARD_DATA ? (gint64) n->in[0] : (gint64) n->in[1];

  return atomr_cudnn_backend_graph_add_convolution (g, n->mode, node_compute (self, n), n->conv.n_spatial,
                                                    n->conv.padding, n->conv.stride, n->conv.dilation, x, w, y,
                                                    1.0, 0.0, error);
}

static gboolean
backend_matmul (AtomrCudnnGraph         *self,
                AtomrCudnnBackendGraph  *g,
                const GraphNode         *n,
                GError                 **error)
{
  cudnnDataType_t compute = node_compute (self, n);
  cudnnBackendDescriptor_t md, op;

  md = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_MATMUL_DESCRIPTOR, error);
  if (md == NULL ||
      !atomr_cudnn_backend_graph_set (g, md, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute,
                                      error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (g, md, error))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, n->in[0], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, n->in[1], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, n->out, error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                        1, &md, error) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

static gboolean
backend_reduction (AtomrCudnnGraph         *self,
                   AtomrCudnnBackendGraph  *g,
                   const GraphNode         *n,
                   GError                 **error)
{
  static const cudnnReduceTensorOp_t ops[] = {
    CUDNN_REDUCE_TENSOR_ADD, CUDNN_REDUCE_TENSOR_MAX, CUDNN_REDUCE_TENSOR_MIN, CUDNN_REDUCE_TENSOR_AVG,
  };
  cudnnReduceTensorOp_t mode = ops[n->mode];
  cudnnDataType_t compute = node_compute (self, n);
  cudnnBackendDescriptor_t rd, op;

  rd = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, error);
  if (rd == NULL ||
      !atomr_cudnn_backend_graph_set (g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                                      1, &mode, error) ||
      !atomr_cudnn_backend_graph_set (g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute,
                                      error) ||
      !atomr_cudnn_backend_graph_finalize_descriptor (g, rd, error))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, n->in[0],
                                                    error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, n->out,
                                                    error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, error) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

static gboolean
backend_norm (AtomrCudnnGraph         *self,
              AtomrCudnnBackendGraph  *g,
              const GraphNode         *n,
              gint64                   epsilon_uid,
              GError                 **error)
{
  cudnnBackendNormMode_t mode = n->mode == ATOMR_CUDNN_NORM_RMS ? CUDNN_RMS_NORM : CUDNN_LAYER_NORM;
  cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_INFERENCE;
  const GraphTensor *x = tensor_at (self, n->in[0]);
  gint64 ones[MAX_DIMS];
  cudnnBackendDescriptor_t op;

  for (guint d = 0; d < MAX_DIMS; d++)
    ones[d] = 1;
  if (atomr_cudnn_backend_graph_add_tensor (g, epsilon_uid, CUDNN_DATA_FLOAT, x->n_dims, ones, ones,
                                            ATOMR_CUDNN_TENSOR_BY_VALUE, error) == NULL)
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode,
                                        error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1,
                                        &phase, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, n->in[0], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, n->in[1],
                                                    error) &&
         (n->in[2] == 0 ||
          atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, n->in[2],
                                                     error)) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, epsilon_uid,
                                                    error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, n->out, error) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

static const cudnnBackendNormMode_t norm_modes[] = {
  [ATOMR_CUDNN_NORM_LAYER] = CUDNN_LAYER_NORM,
  [ATOMR_CUDNN_NORM_RMS] = CUDNN_RMS_NORM,
  [ATOMR_CUDNN_NORM_BATCH] = CUDNN_BATCH_NORM,
};

/* A norm training node: NORM_FORWARD in the training phase, with the
 * saved statistics and (batch norm) the running ones and the momentum as
 * the exponential average factor (by value, uid @momentum_uid). */
static gboolean
backend_norm_training (AtomrCudnnGraph         *self,
                       AtomrCudnnBackendGraph  *g,
                       const GraphNode         *n,
                       gint64                   epsilon_uid,
                       gint64                   momentum_uid,
                       GError                 **error)
{
  cudnnBackendNormMode_t mode = norm_modes[n->mode];
  cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_TRAINING;
  const GraphTensor *x = tensor_at (self, n->in[0]);
  gint64 ones[MAX_DIMS];
  gboolean running = n->in[3] != 0;
  cudnnBackendDescriptor_t op;

  for (guint d = 0; d < MAX_DIMS; d++)
    ones[d] = 1;
  if (atomr_cudnn_backend_graph_add_tensor (g, epsilon_uid, CUDNN_DATA_FLOAT, x->n_dims, ones, ones,
                                            ATOMR_CUDNN_TENSOR_BY_VALUE, error) == NULL ||
      (running &&
       atomr_cudnn_backend_graph_add_tensor (g, momentum_uid, CUDNN_DATA_FLOAT, x->n_dims, ones, ones,
                                             ATOMR_CUDNN_TENSOR_BY_VALUE, error) == NULL))
    return FALSE;
  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode,
                                        error) &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1,
                                        &phase, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, n->in[0], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, n->in[1],
                                                    error) &&
         (n->in[2] == 0 ||
          atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, n->in[2],
                                                     error)) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, epsilon_uid,
                                                    error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, n->out, error) &&
         (n->more_out[0] == 0 ||
          atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC,
                                                     n->more_out[0], error)) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC,
                                                    n->more_out[1], error) &&
         (!running ||
          (atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC,
                                                      momentum_uid, error) &&
           atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC,
                                                      n->in[3], error) &&
           atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC,
                                                      n->in[4], error) &&
           atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
                                                      n->more_out[2], error) &&
           atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC,
                                                      n->more_out[3], error))) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

/* A norm backward node: NORM_BACKWARD from the saved statistics. */
static gboolean
backend_norm_backward (AtomrCudnnGraph         *self,
                       AtomrCudnnBackendGraph  *g,
                       const GraphNode         *n,
                       GError                 **error)
{
  cudnnBackendNormMode_t mode = norm_modes[n->mode];
  cudnnBackendDescriptor_t op;

  op = atomr_cudnn_backend_graph_new_descriptor (g, CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR, error);
  return op != NULL &&
         atomr_cudnn_backend_graph_set (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode,
                                        error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, n->in[0], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, n->in[1], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, n->in[2],
                                                    error) &&
         (n->in[3] == 0 ||
          atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, n->in[3],
                                                     error)) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC,
                                                    n->in[4], error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, n->out, error) &&
         atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC,
                                                    n->more_out[0], error) &&
         (n->more_out[1] == 0 ||
          atomr_cudnn_backend_graph_set_tensor_attr (g, op, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC,
                                                     n->more_out[1], error)) &&
         atomr_cudnn_backend_graph_add_operation (g, op, error);
}

/* The backend graph of @self with non-virtual tensor i aligned to
 * @alignments[i] bytes, and a plan of the (@skip + 1)-th usable engine
 * configuration. */
AtomrCudnnBackendGraph *
atomr_cudnn_graph_build_backend_internal (AtomrCudnnGraph  *self,
                                          const gint64     *alignments,
                                          GError          **error)
{
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new (self->name);
  static const cudnnPointwiseMode_t pw_modes[] = {
    CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_RELU_FWD,
    CUDNN_POINTWISE_GELU_FWD, CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_TANH_FWD,
  };

  for (guint i = 0; i < self->tensors->len; i++)
    {
      const GraphTensor *t = &g_array_index (self->tensors, GraphTensor, i);
      if (atomr_cudnn_backend_graph_add_tensor_full (g, i + 1, cudnn_dtype (t->dtype), t->n_dims, t->dims,
                                                     t->strides, t->is_virtual ? 16 : alignments[i],
                                                     t->is_virtual ? ATOMR_CUDNN_TENSOR_VIRTUAL : 0,
                                                     error) == NULL)
        return NULL;
    }
  for (guint i = 0; i < self->nodes->len; i++)
    {
      const GraphNode *n = &g_array_index (self->nodes, GraphNode, i);
      gboolean ok = FALSE;

      switch (n->kind)
        {
        case NODE_POINTWISE:
          ok = atomr_cudnn_backend_graph_add_pointwise (g, pw_modes[n->mode], node_compute (self, n), n->in[0],
                                                        n->in[1] ? (gint64) n->in[1] : -1, n->out, error);
          break;
        case NODE_SCALE:
          {
            const GraphTensor *x = tensor_at (self, n->in[0]);
            gint64 ones[MAX_DIMS];
            gint64 uid = SCALAR_UID_BASE + i;

            for (guint d = 0; d < MAX_DIMS; d++)
              ones[d] = 1;
            ok = atomr_cudnn_backend_graph_add_tensor (g, uid, node_compute (self, n), x->n_dims, ones, ones,
                                                       ATOMR_CUDNN_TENSOR_BY_VALUE, error) != NULL &&
                 atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_MUL, node_compute (self, n),
                                                          n->in[0], uid, n->out, error);
          }
          break;
        case NODE_CONVOLUTION:
          ok = backend_convolution (self, g, n, error);
          break;
        case NODE_MATMUL:
          ok = backend_matmul (self, g, n, error);
          break;
        case NODE_REDUCTION:
          ok = backend_reduction (self, g, n, error);
          break;
        case NODE_NORM:
          ok = backend_norm (self, g, n, SCALAR_UID_BASE + i, error);
          break;
        case NODE_NORM_TRAIN:
          ok = backend_norm_training (self, g, n, SCALAR_UID_BASE + i, SCALAR2_UID_BASE + i, error);
          break;
        case NODE_NORM_BWD:
          ok = backend_norm_backward (self, g, n, error);
          break;
        }
      if (!ok)
        return NULL;
    }
  return g_steal_pointer (&g);
}

static AtomrCudnnBackendPlan *
build_plan (AtomrCudnnGraph  *self,
            const gint64     *alignments,
            cudnnHandle_t     handle,
            guint64           workspace_limit,
            guint             skip,
            GError          **error)
{
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_graph_build_backend_internal (self, alignments, error);

  if (g == NULL)
    return NULL;
  return atomr_cudnn_backend_graph_build_plan (g, handle, workspace_limit, skip, error);
}

/* ------------------------------------------------------------------ */
/* Execution                                                            */

typedef struct {
  AtomrCudnnGraph *graph;       /* owned, finalized */
  GBytes          *key;         /* graph key + arch + alignments */
  AtomrTensor    **views;       /* owned; index = tensor id - 1; NULL for virtual tensors */
  gint64          *alignments;  /* per tensor */
  gboolean         autotune;
  union { gfloat f; gdouble d; } *scalars;  /* per node (scale nodes, norm epsilons) */
  gfloat          *scalars2;                 /* per node (batch norm momentum) */
} GraphRequest;

static void
graph_request_clear (gpointer data)
{
  GraphRequest *r = data;

  if (r->graph != NULL)
    {
      for (guint i = 0; i < r->graph->tensors->len; i++)
        g_clear_object (&r->views[i]);
    }
  g_free (r->views);
  g_free (r->alignments);
  g_free (r->scalars);
  g_free (r->scalars2);
  g_clear_pointer (&r->key, g_bytes_unref);
  g_clear_object (&r->graph);
}

/* Runs @plan with @r's views (actor thread). */
static gboolean
run_plan (AtomrCudnnActor        *self,
          GraphRequest           *r,
          AtomrCudnnBackendPlan  *plan,
          CUstream                stream,
          GError                **error)
{
  AtomrCudnnGraph *g = r->graph;
  guint n_max = g->tensors->len + 2 * g->nodes->len, n = 0;
  g_autofree gint64 *uids = g_new (gint64, n_max);
  g_autofree void **ptrs = g_new (void *, n_max);
  void *ws = NULL;

  if (!atomr_cudnn_actor_reserve_workspace (self, stream, atomr_cudnn_backend_plan_get_workspace_size (plan),
                                            &ws, error))
    return FALSE;
  for (guint i = 0; i < g->tensors->len; i++)
    if (r->views[i] != NULL)
      {
        uids[n] = i + 1;
        ptrs[n++] = (void *) (uintptr_t) atomr_tensor_get_ptr (r->views[i]);
      }
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GraphNode *node = &g_array_index (g->nodes, GraphNode, i);

      if (node->kind == NODE_SCALE || node->kind == NODE_NORM || node->kind == NODE_NORM_TRAIN)
        {
          uids[n] = SCALAR_UID_BASE + i;
          ptrs[n++] = &r->scalars[i];
        }
      /* the momentum exists only with running statistics */
      if (node->kind == NODE_NORM_TRAIN && node->in[3] != 0)
        {
          uids[n] = SCALAR2_UID_BASE + i;
          ptrs[n++] = &r->scalars2[i];
        }
    }
  return atomr_cudnn_backend_plan_execute (plan, atomr_cudnn_actor_get_handle (self), n, uids, ptrs, ws,
                                           error);
}

/* Times the first AUTOTUNE_CANDIDATES usable engine configurations once
 * each (after one untimed run) and keeps the fastest; the outputs are
 * written by every run, the last one that counts comes after. */
static AtomrCudnnBackendPlan *
autotune_plan (AtomrCudnnActor  *self,
               GraphRequest     *r,
               CUstream          stream,
               guint64           limit,
               GError          **error)
{
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  AtomrCudnnBackendPlan *best = NULL;
  gfloat best_ms = G_MAXFLOAT;
  CUevent start = NULL, end = NULL;

  if (!atomr_cuda_check (ATOMR_CU->cuEventCreate (&start, CU_EVENT_DEFAULT), "cuEventCreate", error))
    return NULL;
  if (!atomr_cuda_check (ATOMR_CU->cuEventCreate (&end, CU_EVENT_DEFAULT), "cuEventCreate", error))
    {
      ATOMR_CU->cuEventDestroy (start);
      return NULL;
    }
  for (guint skip = 0; skip < AUTOTUNE_CANDIDATES; skip++)
    {
      g_autoptr(GError) e = NULL;
      AtomrCudnnBackendPlan *plan = build_plan (r->graph, r->alignments, handle, limit, skip, &e);
      gfloat ms = 0;

      if (plan == NULL)
        {
          if (skip == 0)
            g_propagate_error (error, g_steal_pointer (&e));
          break;           /* no more usable configurations */
        }
      if (!run_plan (self, r, plan, stream, &e) ||
          !atomr_cuda_check (ATOMR_CU->cuEventRecord (start, stream), "cuEventRecord", &e) ||
          !run_plan (self, r, plan, stream, &e) ||
          !atomr_cuda_check (ATOMR_CU->cuEventRecord (end, stream), "cuEventRecord", &e) ||
          !atomr_cuda_check (ATOMR_CU->cuEventSynchronize (end), "cuEventSynchronize", &e) ||
          !atomr_cuda_check (ATOMR_CU->cuEventElapsedTime (&ms, start, end), "cuEventElapsedTime", &e))
        {
          /* a configuration that fails to run is skipped, not fatal */
          g_debug ("cuDNN graph '%s': candidate %u skipped: %s", r->graph->name, skip, e->message);
          atomr_cudnn_backend_plan_free (plan);
          continue;
        }
      if (ms < best_ms)
        {
          atomr_cudnn_backend_plan_free (best);
          best = plan;
          best_ms = ms;
        }
      else
        atomr_cudnn_backend_plan_free (plan);
    }
  ATOMR_CU->cuEventDestroy (start);
  ATOMR_CU->cuEventDestroy (end);
  if (best == NULL && error != NULL && *error == NULL)
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                 "cuDNN graph '%s': no engine configuration ran while autotuning", r->graph->name);
  return best;
}

static gboolean
graph_enqueue (AtomrOp  *op,
               GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  GraphRequest *r = atomr_op_get_data (op);
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  CUstream stream = atomr_op_get_cu_stream (op);
  AtomrCudnnBackendPlan *plan;

  if (atomr_op_is_host (op) || handle == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: graph '%s' (%u nodes) needs a CUDA device; the host test device has no cuDNN",
                   r->graph->name, r->graph->nodes->len);
      return FALSE;
    }
  plan = atomr_cudnn_actor_lookup_plan_internal (self, r->key);
  if (plan == NULL)
    {
      guint64 limit = atomr_cudnn_actor_get_workspace_limit (self);

      plan = r->autotune ? autotune_plan (self, r, stream, limit, error)
                         : build_plan (r->graph, r->alignments, handle, limit, 0, error);
      if (plan == NULL)
        return FALSE;
      atomr_cudnn_actor_insert_plan_internal (self, r->key, plan,
                                              (GDestroyNotify) atomr_cudnn_backend_plan_free);
    }
  return run_plan (self, r, plan, stream, error);
}

/**
 * atomr_cudnn_actor_execute_graph_async:
 * @self: an [class@Atomr.CudnnActor]
 * @graph: a finalized [class@Atomr.CudnnGraph]
 * @ids: (array length=n_views): tensor ids, one for each non-virtual
 *   tensor of @graph, in any order
 * @views: (array length=n_views): the view of each id: on this actor's
 *   device, of the tensor's dtype, shape and strides (strides of extent-1
 *   dimensions aside)
 * @n_views: how many ids and views
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async) (closure user_data): called when the graph ran
 * @user_data: data for @callback
 *
 * Runs @graph on the actor's stream.  The tensors no node writes are
 * inputs (read), the others outputs (written); no output may share memory
 * with another view.  Everything is checked before anything is enqueued
 * (%ATOMR_ERROR_INVALID_ARGUMENT naming the tensor and the value).  The
 * plan comes from the actor's plan cache (built on the first run of each
 * key, by heuristics or, with [property@Atomr.CudnnActor:autotune], by
 * timing; no engine for the graph is %ATOMR_ERROR_NOT_SUPPORTED).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_execute_graph_async (AtomrCudnnActor      *self,
                                       AtomrCudnnGraph      *graph,
                                       const guint          *ids,
                                       AtomrTensor * const  *views,
                                       guint                 n_views,
                                       GCancellable         *cancellable,
                                       GAsyncReadyCallback   callback,
                                       gpointer              user_data)
{
  AtomrOp *op;
  GraphRequest *r;
  GError *error = NULL;
  const gchar *gname;
  guint n_tensors, n_in = 0, n_out = 0;
  g_autofree AtomrOperand *ins = NULL;
  g_autofree AtomrOperand *outs = NULL;
  GByteArray *key;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, "graph", atomr_cudnn_actor_execute_graph_async, cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof (GraphRequest), graph_request_clear);
  if (graph == NULL || !ATOMR_IS_CUDNN_GRAPH (graph))
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "cuDNN graph: the graph is NULL");
      return atomr_op_fail (op, error);
    }
  gname = graph->name;
  if (!graph->finalized)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuDNN graph '%s' is not finalized (call atomr_cudnn_graph_finalize() first)", gname);
      return atomr_op_fail (op, error);
    }
  r->graph = g_object_ref (graph);
  n_tensors = graph->tensors->len;
  r->views = g_new0 (AtomrTensor *, n_tensors);
  r->alignments = g_new0 (gint64, n_tensors);
  r->scalars = g_malloc0_n (graph->nodes->len, sizeof *r->scalars);
  r->scalars2 = g_new0 (gfloat, graph->nodes->len);
  if (n_views > 0 && (ids == NULL || views == NULL))
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuDNN graph '%s': %u views but the ids or the views are NULL", gname, n_views);
      return atomr_op_fail (op, error);
    }
  for (guint i = 0; i < n_views; i++)
    {
      guint id = ids[i];
      GraphTensor *t;
      AtomrTensor *v = views[i];
      guint n;
      const gint64 *shape, *strides;
      gint dtype;

      if (id < 1 || id > n_tensors)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': ids[%u] is %u (the graph has tensors 1 to %u)", gname, i, id, n_tensors);
          return atomr_op_fail (op, error);
        }
      t = tensor_at (graph, id);
      if (t->is_virtual)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': ids[%u] is virtual tensor '%s', which takes no view", gname, i, t->name);
          return atomr_op_fail (op, error);
        }
      if (r->views[id - 1] != NULL)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': tensor '%s' is given two views", gname, t->name);
          return atomr_op_fail (op, error);
        }
      if (v == NULL)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': the view of tensor '%s' is NULL", gname, t->name);
          return atomr_op_fail (op, error);
        }
      dtype = t->dtype;
      if (ATOMR_IS_TENSOR (v) && atomr_tensor_get_dtype (v) != t->dtype)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': the view of tensor '%s' has dtype %s (the graph says %s)", gname,
                       t->name, atomr_dtype_get_name (atomr_tensor_get_dtype (v)), atomr_dtype_get_name (t->dtype));
          return atomr_op_fail (op, error);
        }
      if (!atomr_cudnn_check_tensor (self, gname, t->name, v, t->n_dims, t->n_dims, &dtype, &error))
        return atomr_op_fail (op, error);
      shape = atomr_tensor_get_shape (v, &n);
      strides = atomr_tensor_get_strides (v, NULL);
      /* extents first (a wrong shape also changes the strides), then the
       * strides of the extents above 1 */
      for (guint pass = 0; pass < 2; pass++)
        for (guint d = 0; d < n; d++)
          if (pass == 0 ? shape[d] != t->dims[d] : (shape[d] > 1 && strides[d] != t->strides[d]))
            {
              g_autofree gchar *want = shape_string (t);
              g_autofree gchar *got = shape_string_of (shape, n);
              g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "cuDNN graph '%s': the view of tensor '%s' has %s %u = %" G_GINT64_FORMAT
                           " (the graph says %" G_GINT64_FORMAT "; shape %s, the view's %s)", gname, t->name,
                           pass == 0 ? "dimension" : "stride", d, pass == 0 ? shape[d] : strides[d],
                           pass == 0 ? t->dims[d] : t->strides[d], want, got);
              return atomr_op_fail (op, error);
            }
      r->views[id - 1] = g_object_ref (v);
      r->alignments[id - 1] = atomr_cudnn_view_alignment (v);
    }
  ins = g_new0 (AtomrOperand, n_tensors + 1);
  outs = g_new0 (AtomrOperand, n_tensors + 1);
  for (guint i = 0; i < n_tensors; i++)
    {
      GraphTensor *t = tensor_at (graph, i + 1);

      if (t->is_virtual)
        continue;
      if (r->views[i] == NULL)
        {
          g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cuDNN graph '%s': tensor '%s' (id %u) has no view (every non-virtual tensor takes one)",
                       gname, t->name, i + 1);
          return atomr_op_fail (op, error);
        }
      if (t->producer != 0)
        outs[n_out++] = ATOMR_OPERAND_TENSOR (t->name, r->views[i]);
      else
        ins[n_in++] = ATOMR_OPERAND_TENSOR (t->name, r->views[i]);
    }
  if (!atomr_check_no_alias (gname, outs, n_out, ins, n_in, &error))
    return atomr_op_fail (op, error);

  for (guint i = 0; i < graph->nodes->len; i++)
    {
      const GraphNode *node = &g_array_index (graph->nodes, GraphNode, i);
      r->scalars2[i] = (gfloat) node->value2;
      if (node->kind != NODE_SCALE && node->kind != NODE_NORM && node->kind != NODE_NORM_TRAIN)
        continue;
      if (node->kind == NODE_SCALE && tensor_at (graph, node->in[0])->dtype == ATOMR_DTYPE_F64)
        r->scalars[i].d = node->value;
      else
        r->scalars[i].f = (gfloat) node->value;     /* norm: epsilon is always f32 */
    }
  /* the plan cache key: the graph's, the arch, every view's alignment */
  key = g_byte_array_new ();
  {
    gsize size;
    const guint8 *data = g_bytes_get_data (graph->key, &size);
    gint major = 0, minor = 0;
    gint64 arch;

    g_byte_array_append (key, data, size);
    atomr_device_get_compute_capability (atomr_actor_get_device (ATOMR_ACTOR (self)), &major, &minor);
    arch = major * 10 + minor;
    g_byte_array_append (key, (const guint8 *) &arch, sizeof arch);
    g_byte_array_append (key, (const guint8 *) r->alignments, n_tensors * sizeof (gint64));
  }
  r->key = g_byte_array_free_to_bytes (key);
  r->autotune = atomr_cudnn_actor_get_autotune (self);

  for (guint i = 0; i < n_in; i++)
    atomr_op_read_tensor (op, ins[i].tensor);
  for (guint i = 0; i < n_out; i++)
    atomr_op_write_tensor (op, outs[i].tensor);
  atomr_op_set_detail (op, gname);
  atomr_op_set_enqueue (op, graph_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_cudnn_actor_execute_graph_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Atomr.CudnnActor.execute_graph_async].
 *
 * Returns: %TRUE when the graph ran (its outputs are written once the
 *   stream reaches it: the envelope orders later operations on them)
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_execute_graph_finish (AtomrCudnnActor  *self,
                                        GAsyncResult     *result,
                                        GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_execute_graph_async, error);
}
