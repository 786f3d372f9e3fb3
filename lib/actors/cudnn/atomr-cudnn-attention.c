/* atomr-cudnn-attention.c — scaled dot-product attention on the cuDNN actor
 *
 * Forward and backward attention are cuDNN backend (graph API) operation
 * graphs in the form cuDNN's fused flash-attention engines recognise
 * (the form cuDNN's own frontend builds for cuDNN 9 before its unified
 * SDPA operation):
 *
 *   forward:  S = Q·Kᵀ → S·scale → (causal: select S where row ≥ col, else
 *             the lowest float) → M = max S, E = exp (S − M), Z = Σ E,
 *             stats = M + log Z, P = E / Z → O = P·V
 *   backward: softmax_sum = Σ (dO ∘ O) · 1 (a workspace tensor),
 *             E = exp (S·scale − stats) (causal as above), dV = Eᵀ·dO,
 *             dS = (dO·Vᵀ − softmax_sum) ∘ E · scale, dK = dSᵀ·Q,
 *             dQ = dS·K accumulated in f32 (a workspace tensor), then dQ.
 *
 * Grouped-query heads (fewer K/V heads than Q heads) broadcast in the
 * forward matmuls and are summed over each group in the backward pass.
 * The graph, the engine configuration the heuristics chose and its
 * execution plan are one plan of the actor's plan cache, keyed by every
 * shape, stride, dtype and flag (the scale is passed by value at execution,
 * so it is not part of the key).  The workspace tensors of the backward
 * pass live in the actor's one workspace, after cuDNN's own.  The variant
 * pack is derived from the graph: exactly the non-virtual tensors its
 * operations name (cuDNN refuses a pack with any other uid), each taken
 * from what the call supplies (sdpa_supply()).
 *
 * Threads: validation runs in the _async call (any thread); plans are built
 * and executed in the enqueue function (the actor's thread).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-attention.h"
#include "actors/cudnn/atomr-cudnn-attention-private.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"
#include "core/atomr-tensor-private.h"

#define MAX_GRAPH_TENSORS 128
#define MAX_GRAPH_OPS     64
#define MAX_PACK          32
#define MAX_ENGINE_CONFIGS 16
#define WS_ALIGN          256
/* With the actor's autotune property: how many of the heuristics' engine
 * configurations are timed when a plan is built. */
#define AUTOTUNE_CANDIDATES 8

/* Operand slots of a request. */
typedef enum {
  T_Q, T_K, T_V, T_O, T_DO, T_STATS, T_DQ, T_DK, T_DV,
  T_SEQ_Q, T_SEQ_KV,                    /* the padding mask's lengths */
  N_T
} Slot;

static const gchar *const slot_names[N_T] = {
  "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv", "q-lengths", "kv-lengths",
};

/* Unique ids of the graph's non-virtual tensors (variant pack); slot i
 * is UID_Q + i. */
enum {
  UID_Q = 1, UID_K, UID_V, UID_O, UID_DO, UID_STATS, UID_DQ, UID_DK, UID_DV,
  UID_SEQ_Q, UID_SEQ_KV,
  UID_SCALE = 32, UID_ONE, UID_NEG, UID_SOFTMAX_SUM, UID_DQ_ACCUM,
  UID_SEED, UID_OFFSET, UID_DROP_SCALE, UID_DROP_SCALE_INV,
  UID_FIRST_VIRTUAL = 100,
};

/* Everything a plan depends on; zero-filled, hashed and compared as bytes.
 * The dropout probability is part of the graph (the RNG descriptor); the
 * seed and offset are device scalars written at each call. */
typedef struct {
  gint32  backward;
  gint32  dtype;
  gint32  causal;
  gint32  has_stats;
  gint32  padding;                      /* per-batch lengths given */
  gint32  has_dropout;
  gdouble dropout;                      /* 0 unless has_dropout */
  gint64  dims[N_T][4];
  gint64  strides[N_T][4];
} SdpaKey;

typedef struct {
  GPtrArray                *descs;      /* every descriptor of the graph */
  cudnnBackendDescriptor_t  plan;
  gint64                    cudnn_workspace;
  gsize                     softmax_sum_offset;
  gsize                     dq_accum_offset;
  gsize                     dq_accum_bytes;
  gsize                     rng_offset; /* seed then offset, 2 × i64 */
  gsize                     workspace;  /* all of it */
  gboolean                  memset_dq_accum;
  gchar                    *info;       /* engine, config, how chosen */
  /* the unique ids of the non-virtual tensors the graph's operations
   * use, in the order they were declared: exactly the variant pack */
  gint64                    uids[MAX_PACK];
  guint                     n_uids;
} SdpaPlan;

typedef struct {
  const gchar *opname;
  SdpaKey      key;
  GBytes      *key_bytes;
  AtomrTensor *t[N_T];                  /* owned; NULL where unused */
  gfloat       scale, one, neg;         /* by-value scalars */
  gfloat       drop_scale, drop_scale_inv; /* 1/(1 − p) and 1 − p */
  guint64      seed, offset;            /* the Philox seed and offset */
  gboolean     autotune;                /* the actor's property at the call */
} SdpaRequest;

/* ------------------------------------------------------------------ */
/* Messages                                                             */

/* cuDNN's status as a GError (the actor's one mapper). */
#define cudnn_ok atomr_cudnn_status_check

/* "bf16, causal, q 8×16×1024×128 strides (…), k …" */
static gchar *
describe (const SdpaKey *k)
{
  GString *s = g_string_new (atomr_dtype_get_name (k->dtype));

  if (k->causal)
    g_string_append (s, ", causal");
  else if (!k->padding)
    g_string_append (s, ", no mask");
  if (k->padding)
    g_string_append (s, ", padding mask");
  if (k->has_dropout)
    g_string_append_printf (s, ", dropout %g", k->dropout);
  for (guint i = 0; i < N_T; i++)
    {
      if (k->dims[i][0] == 0)
        continue;
      g_string_append_printf (s, ", %s ", slot_names[i]);
      for (guint d = 0; d < 4; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "×" : "", k->dims[i][d]);
      g_string_append (s, " strides (");
      for (guint d = 0; d < 4; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? ", " : "", k->strides[i][d]);
      g_string_append (s, ")");
    }
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------------ */
/* A small builder of backend operation graphs.  Every call is a no-op
 * once one failed; the first error is kept. */

typedef struct {
  cudnnBackendDescriptor_t desc;
  gint64                   uid;
  cudnnDataType_t          dtype;
  gint64                   dims[4];
  gint64                   strides[4];
  gboolean                 is_virtual;
  gboolean                 used;        /* named by an operation */
} GraphTensor;

typedef struct {
  const gchar              *opname;
  GPtrArray                *descs;
  cudnnBackendDescriptor_t  ops[MAX_GRAPH_OPS];
  guint                     n_ops;
  GraphTensor               tensors[MAX_GRAPH_TENSORS];
  guint                     n_tensors;
  gint64                    next_uid;
  GError                   *error;
  /* A dry graph calls no cuDNN function: its descriptors are fake
   * handles (never dereferenced), so the tensors and the uids the
   * operations use can be listed on a machine without cuDNN. */
  gboolean                  dry;
  guintptr                  n_fake;
} Graph;

static void
destroy_descriptor (gpointer desc)
{
  cudnnBackendDestroyDescriptor (desc);
}

static gboolean
graph_ok (Graph         *g,
          cudnnStatus_t  status,
          const gchar   *call)
{
  if (g->error != NULL)
    return FALSE;
  return cudnn_ok (status, call, g->opname, &g->error);
}

static cudnnBackendDescriptor_t
graph_create (Graph                        *g,
              cudnnBackendDescriptorType_t  type)
{
  cudnnBackendDescriptor_t desc = NULL;

  if (g->error != NULL)
    return NULL;
  if (g->dry)
    return (cudnnBackendDescriptor_t) ++g->n_fake;
  if (!graph_ok (g, cudnnBackendCreateDescriptor (type, &desc), "cudnnBackendCreateDescriptor"))
    return NULL;
  g_ptr_array_add (g->descs, desc);
  return desc;
}

static void
graph_set (Graph                       *g,
           cudnnBackendDescriptor_t     desc,
           cudnnBackendAttributeName_t  name,
           cudnnBackendAttributeType_t  type,
           gint64                       count,
           const void                  *value)
{
  if (g->error != NULL || g->dry)
    return;
  graph_ok (g, cudnnBackendSetAttribute (desc, name, type, count, value), "cudnnBackendSetAttribute");
}

static void
graph_finalize (Graph                    *g,
                cudnnBackendDescriptor_t  desc)
{
  if (g->error != NULL || g->dry)
    return;
  graph_ok (g, cudnnBackendFinalize (desc), "cudnnBackendFinalize");
}

static void
graph_add_op (Graph                    *g,
              cudnnBackendDescriptor_t  op)
{
  graph_finalize (g, op);
  if (g->error != NULL)
    return;
  if (g->n_ops == MAX_GRAPH_OPS)
    {
      g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: the operation graph has more than %d operations", g->opname, MAX_GRAPH_OPS);
      return;
    }
  g->ops[g->n_ops++] = op;
}

/* Names @t as the @name attribute of the operation @op (and marks it
 * used: the variant pack holds exactly the used non-virtual tensors). */
static void
graph_set_tensor (Graph                       *g,
                  cudnnBackendDescriptor_t     op,
                  cudnnBackendAttributeName_t  name,
                  GraphTensor                 *t)
{
  if (g->error != NULL || t == NULL)
    return;
  t->used = TRUE;
  graph_set (g, op, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t->desc);
}

/* The unique ids of the non-virtual tensors some operation uses, in
 * declaration order (a tensor declared but never named by an operation
 * is not part of the graph, and cuDNN refuses its uid in a variant
 * pack). */
static void
graph_needed_uids (Graph  *g,
                   gint64 *uids,
                   guint  *n)
{
  *n = 0;
  if (g->error != NULL)
    return;
  for (guint i = 0; i < g->n_tensors; i++)
    {
      const GraphTensor *t = &g->tensors[i];
      if (t->is_virtual || !t->used)
        continue;
      if (*n == MAX_PACK)
        {
          g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "%s: the operation graph has more than %d non-virtual tensors", g->opname,
                       MAX_PACK);
          return;
        }
      uids[(*n)++] = t->uid;
    }
}

/* A tensor; @uid 0 for a fresh virtual one. */
static GraphTensor *
graph_tensor (Graph           *g,
              gint64           uid,
              cudnnDataType_t  dtype,
              const gint64    *dims,
              const gint64    *strides,
              gboolean         by_value)
{
  GraphTensor *t;
  bool is_virtual = uid == 0, is_by_value = by_value;
  gint64 alignment = 16;

  if (g->error != NULL)
    return NULL;
  if (g->n_tensors == MAX_GRAPH_TENSORS)
    {
      g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: the operation graph has more than %d tensors", g->opname, MAX_GRAPH_TENSORS);
      return NULL;
    }
  t = &g->tensors[g->n_tensors++];
  t->uid = uid != 0 ? uid : g->next_uid++;
  t->dtype = dtype;
  t->is_virtual = is_virtual;
  t->used = FALSE;
  memcpy (t->dims, dims, sizeof t->dims);
  memcpy (t->strides, strides, sizeof t->strides);
  t->desc = graph_create (g, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, t->dims);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, t->strides);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t->uid);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  graph_set (g, t->desc, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  if (by_value)
    graph_set (g, t->desc, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &is_by_value);
  graph_finalize (g, t->desc);
  return g->error == NULL ? t : NULL;
}

static void
packed_strides (const gint64 *dims,
                gint64       *strides)
{
  gint64 acc = 1;

  for (gint i = 3; i >= 0; i--)
    {
      strides[i] = acc;
      acc *= dims[i];
    }
}

static GraphTensor *
graph_virtual (Graph           *g,
               cudnnDataType_t  dtype,
               gint64 d0, gint64 d1, gint64 d2, gint64 d3)
{
  gint64 dims[4] = { d0, d1, d2, d3 }, strides[4];

  packed_strides (dims, strides);
  return graph_tensor (g, 0, dtype, dims, strides, FALSE);
}

/* A packed non-virtual f32 tensor (workspace or stats). */
static GraphTensor *
graph_real_f32 (Graph  *g,
                gint64  uid,
                gint64 d0, gint64 d1, gint64 d2, gint64 d3)
{
  gint64 dims[4] = { d0, d1, d2, d3 }, strides[4];

  packed_strides (dims, strides);
  return graph_tensor (g, uid, CUDNN_DATA_FLOAT, dims, strides, FALSE);
}

/* The by-value f32 scalar @uid: one descriptor per graph however often
 * it is used (a unique id names one tensor). */
static GraphTensor *
graph_scalar (Graph  *g,
              gint64  uid)
{
  static const gint64 ones[4] = { 1, 1, 1, 1 };

  if (g->error != NULL)
    return NULL;
  for (guint i = 0; i < g->n_tensors; i++)
    if (g->tensors[i].uid == uid)
      return &g->tensors[i];
  return graph_tensor (g, uid, CUDNN_DATA_FLOAT, ones, ones, TRUE);
}

/* y = mode (x, b, t); a fresh virtual y of x's shape and @out_dtype when
 * @y is NULL.  @axis ≥ 0 for GEN_INDEX. */
static GraphTensor *
graph_pointwise (Graph                *g,
                 cudnnPointwiseMode_t  mode,
                 cudnnDataType_t       compute,
                 GraphTensor          *x,
                 GraphTensor          *b,
                 GraphTensor          *t,
                 GraphTensor          *y,
                 cudnnDataType_t       out_dtype,
                 gint64                axis)
{
  cudnnBackendDescriptor_t pw, op;

  if (g->error != NULL || x == NULL)
    return NULL;
  if (y == NULL)
    y = graph_virtual (g, out_dtype, x->dims[0], x->dims[1], x->dims[2], x->dims[3]);
  pw = graph_create (g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  graph_set (g, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  graph_set (g, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  if (axis >= 0)
    graph_set (g, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
  graph_finalize (g, pw);
  op = graph_create (g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  graph_set (g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
  if (t != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
  if (y != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  graph_add_op (g, op);
  return g->error == NULL ? y : NULL;
}

/* Element-wise f32 arithmetic into a fresh virtual f32 tensor. */
#define PW(g, mode, x, b) \
  graph_pointwise ((g), (mode), CUDNN_DATA_FLOAT, (x), (b), NULL, NULL, CUDNN_DATA_FLOAT, -1)

static void
graph_reduce (Graph                    *g,
              cudnnReduceTensorOp_t     mode,
              GraphTensor              *x,
              GraphTensor              *y)
{
  cudnnBackendDescriptor_t rd, op;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;

  if (g->error != NULL || x == NULL || y == NULL)
    return;
  rd = graph_create (g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  graph_set (g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
  graph_set (g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  graph_finalize (g, rd);
  op = graph_create (g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
  graph_set (g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd);
  graph_add_op (g, op);
}

/* c = a·b; with a padding mask the GEMM's M, N and K are the per-batch
 * lengths of @m, @n and @k (each NULL to keep the tensor's size), as
 * cuDNN's frontend declares them for its flash-attention graphs. */
static void
graph_matmul_ex (Graph       *g,
                 GraphTensor *a,
                 GraphTensor *b,
                 GraphTensor *c,
                 GraphTensor *m,
                 GraphTensor *n,
                 GraphTensor *k)
{
  cudnnBackendDescriptor_t mm, op;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;

  if (g->error != NULL || a == NULL || b == NULL || c == NULL)
    return;
  mm = graph_create (g, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  graph_set (g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  graph_finalize (g, mm);
  op = graph_create (g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
  graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
  if (m != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC, m);
  if (n != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC, n);
  if (k != NULL)
    graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC, k);
  graph_add_op (g, op);
}

static void
graph_reshape (Graph       *g,
               GraphTensor *x,
               GraphTensor *y)
{
  cudnnBackendDescriptor_t op;

  if (g->error != NULL || x == NULL || y == NULL)
    return;
  op = graph_create (g, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
  graph_add_op (g, op);
}

/* The tensor of a request's operand; K and V may be declared transposed
 * (the last two dimensions swapped, strides with them). */
static GraphTensor *
graph_operand (Graph           *g,
               const SdpaKey   *k,
               Slot             slot,
               gint64           uid,
               cudnnDataType_t  dtype,
               gboolean         transposed)
{
  gint64 dims[4], strides[4];

  memcpy (dims, k->dims[slot], sizeof dims);
  memcpy (strides, k->strides[slot], sizeof strides);
  if (transposed)
    {
      gint64 tmp = dims[2];
      dims[2] = dims[3];
      dims[3] = tmp;
      tmp = strides[2];
      strides[2] = strides[3];
      strides[3] = tmp;
    }
  return graph_tensor (g, uid, dtype, dims, strides, FALSE);
}

/* A non-virtual device tensor of @dtype, @d0 × 1 × 1 × 1, packed: the
 * per-batch lengths (int32) and the RNG's seed and offset (int64). */
static GraphTensor *
graph_column (Graph           *g,
              gint64           uid,
              cudnnDataType_t  dtype,
              gint64           d0)
{
  const gint64 dims[4] = { d0, 1, 1, 1 }, strides[4] = { 1, 1, 1, 1 };

  return graph_tensor (g, uid, dtype, dims, strides, FALSE);
}

/* The per-batch lengths of a request (NULL, NULL without a padding mask). */
typedef struct {
  GraphTensor *q, *kv;
} Lengths;

static Lengths
graph_lengths (Graph         *g,
               const SdpaKey *k)
{
  Lengths l = { NULL, NULL };

  if (!k->padding)
    return l;
  l.q = graph_column (g, UID_SEQ_Q, CUDNN_DATA_INT32, k->dims[T_Q][0]);
  l.kv = graph_column (g, UID_SEQ_KV, CUDNN_DATA_INT32, k->dims[T_Q][0]);
  return l;
}

/* S ← select (S, lowest, row < q length ∧ col < kv length): the padding
 * mask, in the form cuDNN's frontend builds (its forward graph compares in
 * int32, its backward graph in booleans: @compare_type). */
static GraphTensor *
graph_padding (Graph           *g,
               GraphTensor     *s,
               const Lengths   *l,
               cudnnDataType_t  compare_type)
{
  GraphTensor *row, *col, *row_in, *col_in, *keep, *lowest;

  row = graph_pointwise (g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, NULL,
                         CUDNN_DATA_INT32, 2);
  col = graph_pointwise (g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, NULL,
                         CUDNN_DATA_INT32, 3);
  row_in = graph_pointwise (g, CUDNN_POINTWISE_CMP_LT, compare_type, row, l->q, NULL, NULL,
                            compare_type, -1);
  col_in = graph_pointwise (g, CUDNN_POINTWISE_CMP_LT, compare_type, col, l->kv, NULL, NULL,
                            compare_type, -1);
  keep = graph_pointwise (g, CUDNN_POINTWISE_LOGICAL_AND, CUDNN_DATA_BOOLEAN, row_in, col_in, NULL, NULL,
                          CUDNN_DATA_BOOLEAN, -1);
  lowest = graph_scalar (g, UID_NEG);
  return graph_pointwise (g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s, lowest, keep, NULL,
                          CUDNN_DATA_FLOAT, -1);
}

/* The dropout mask: Bernoulli (1 − p) draws of Philox with the device
 * seed and offset, b × hq × sq × skv f32 (1 kept, 0 dropped). */
static GraphTensor *
graph_rng (Graph         *g,
           const SdpaKey *k)
{
  cudnnBackendDescriptor_t rng, op;
  cudnnRngDistribution_t dist = CUDNN_RNG_DISTRIBUTION_BERNOULLI;
  gdouble keep = 1.0 - k->dropout;
  GraphTensor *seed, *offset, *y;

  seed = graph_column (g, UID_SEED, CUDNN_DATA_INT64, 1);
  offset = graph_column (g, UID_OFFSET, CUDNN_DATA_INT64, 1);
  y = graph_virtual (g, CUDNN_DATA_FLOAT, k->dims[T_Q][0], k->dims[T_Q][1], k->dims[T_Q][2],
                     k->dims[T_K][2]);
  if (g->error != NULL)
    return NULL;
  rng = graph_create (g, CUDNN_BACKEND_RNG_DESCRIPTOR);
  graph_set (g, rng, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, 1, &dist);
  graph_set (g, rng, CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, CUDNN_TYPE_DOUBLE, 1, &keep);
  graph_finalize (g, rng);
  op = graph_create (g, CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_RNG_YDESC, y);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_RNG_SEED, seed);
  graph_set_tensor (g, op, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, offset);
  graph_set (g, op, CUDNN_ATTR_OPERATION_RNG_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rng);
  graph_add_op (g, op);
  return g->error == NULL ? y : NULL;
}

/* S ← select (S, lowest, row ≥ col): the causal (top-left) mask. */
static GraphTensor *
graph_causal (Graph       *g,
              GraphTensor *s)
{
  GraphTensor *row, *col, *keep, *lowest;

  row = graph_pointwise (g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, NULL,
                         CUDNN_DATA_INT32, 2);
  col = graph_pointwise (g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, s, NULL, NULL, NULL,
                         CUDNN_DATA_INT32, 3);
  keep = graph_pointwise (g, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, NULL,
                          CUDNN_DATA_BOOLEAN, -1);
  lowest = graph_scalar (g, UID_NEG);
  return graph_pointwise (g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, s, lowest, keep, NULL,
                          CUDNN_DATA_FLOAT, -1);
}

static void
graph_forward (Graph         *g,
               const SdpaKey *k)
{
  cudnnDataType_t io = k->dtype == ATOMR_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  gint64 b = k->dims[T_Q][0], hq = k->dims[T_Q][1], sq = k->dims[T_Q][2];
  gint64 skv = k->dims[T_K][2];
  GraphTensor *q, *kt, *v, *o, *scale, *s, *m, *e, *z, *l, *stats, *p;
  Lengths len;

  q = graph_operand (g, k, T_Q, UID_Q, io, FALSE);
  kt = graph_operand (g, k, T_K, UID_K, io, TRUE);
  v = graph_operand (g, k, T_V, UID_V, io, FALSE);
  o = graph_operand (g, k, T_O, UID_O, io, FALSE);
  scale = graph_scalar (g, UID_SCALE);
  len = graph_lengths (g, k);

  s = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul_ex (g, q, kt, s, len.q, len.kv, NULL);
  s = PW (g, CUDNN_POINTWISE_MUL, s, scale);
  if (k->padding)
    s = graph_padding (g, s, &len, CUDNN_DATA_INT32);
  if (k->causal)
    s = graph_causal (g, s);

  m = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, 1);
  graph_reduce (g, CUDNN_REDUCE_TENSOR_MAX, s, m);
  e = PW (g, CUDNN_POINTWISE_SUB, s, m);
  e = PW (g, CUDNN_POINTWISE_EXP, e, NULL);
  z = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, 1);
  graph_reduce (g, CUDNN_REDUCE_TENSOR_ADD, e, z);
  l = PW (g, CUDNN_POINTWISE_LOG, z, NULL);
  stats = k->has_stats ? graph_real_f32 (g, UID_STATS, b, hq, sq, 1)
                       : graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, 1);
  graph_pointwise (g, CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, m, l, NULL, stats, CUDNN_DATA_FLOAT, -1);
  /* the second matmul takes P in the I/O dtype */
  p = graph_virtual (g, io, b, hq, sq, skv);
  if (k->has_dropout)
    {
      /* P = softmax ∘ mask · 1/(1 − p) */
      GraphTensor *mask = graph_rng (g, k);
      GraphTensor *sm = PW (g, CUDNN_POINTWISE_DIV, e, z);
      sm = PW (g, CUDNN_POINTWISE_MUL, sm, mask);
      graph_pointwise (g, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, sm, graph_scalar (g, UID_DROP_SCALE), NULL,
                       p, io, -1);
    }
  else
    graph_pointwise (g, CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, z, NULL, p, io, -1);
  graph_matmul_ex (g, p, v, o, len.q, NULL, len.kv);
}

/* @full (b × hq × …, the I/O dtype) summed over each group of heads into
 * @out (b × hk × …), or the matmul writes @out directly when hq == hk. */
static void
graph_matmul_heads (Graph           *g,
                    cudnnDataType_t  io,
                    GraphTensor     *a,
                    GraphTensor     *b,
                    GraphTensor     *out,
                    gint64           hq,
                    GraphTensor     *m,
                    GraphTensor     *kk)
{
  GraphTensor *full;

  if (g->error != NULL || out == NULL)
    return;
  if (out->dims[1] == hq)
    {
      graph_matmul_ex (g, a, b, out, m, NULL, kk);
      return;
    }
  full = graph_virtual (g, io, out->dims[0], hq, out->dims[2], out->dims[3]);
  graph_matmul_ex (g, a, b, full, m, NULL, kk);
  graph_reduce (g, CUDNN_REDUCE_TENSOR_ADD, full, out);
}

static void
graph_backward (Graph         *g,
                const SdpaKey *k)
{
  cudnnDataType_t io = k->dtype == ATOMR_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  gint64 b = k->dims[T_Q][0], hq = k->dims[T_Q][1], sq = k->dims[T_Q][2], d = k->dims[T_Q][3];
  gint64 skv = k->dims[T_K][2];
  GraphTensor *q, *kt, *vt, *o, *d_o, *stats, *dq, *dk, *dv, *scale, *sum_scale;
  GraphTensor *t, *softmax_sum, *s, *e, *pd, *pt, *dp, *ds, *dst, *kr, *dq_accum;
  GraphTensor *mask = NULL, *drop_scale = NULL;
  Lengths len;

  q = graph_operand (g, k, T_Q, UID_Q, io, FALSE);
  kt = graph_operand (g, k, T_K, UID_K, io, TRUE);
  vt = graph_operand (g, k, T_V, UID_V, io, TRUE);
  o = graph_operand (g, k, T_O, UID_O, io, FALSE);
  d_o = graph_operand (g, k, T_DO, UID_DO, io, FALSE);
  stats = graph_real_f32 (g, UID_STATS, b, hq, sq, 1);
  dq = graph_operand (g, k, T_DQ, UID_DQ, io, FALSE);
  dk = graph_operand (g, k, T_DK, UID_DK, io, FALSE);
  dv = graph_operand (g, k, T_DV, UID_DV, io, FALSE);
  scale = graph_scalar (g, UID_SCALE);
  len = graph_lengths (g, k);
  /* 1 scales softmax_sum without dropout, 1 − p with it: declare only
   * the one the graph uses */
  if (k->has_dropout)
    {
      mask = graph_rng (g, k);
      drop_scale = graph_scalar (g, UID_DROP_SCALE);
      sum_scale = graph_scalar (g, UID_DROP_SCALE_INV);
    }
  else
    sum_scale = graph_scalar (g, UID_ONE);

  /* softmax_sum = Σ_d (dO ∘ O) · 1, or · (1 − p) with dropout (dP is
   * masked and unscaled below, so the sum is too) */
  t = PW (g, CUDNN_POINTWISE_MUL, d_o, o);
  {
    GraphTensor *r = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, 1);
    graph_reduce (g, CUDNN_REDUCE_TENSOR_ADD, t, r);
    softmax_sum = graph_real_f32 (g, UID_SOFTMAX_SUM, b, hq, sq, 1);
    graph_pointwise (g, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, r, sum_scale, NULL, softmax_sum,
                     CUDNN_DATA_FLOAT, -1);
  }

  /* E = exp (S·scale − stats), masked (the padding mask before and after
   * the statistics, as cuDNN's frontend does) */
  s = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul_ex (g, q, kt, s, len.q, len.kv, NULL);
  s = PW (g, CUDNN_POINTWISE_MUL, s, scale);
  if (k->padding)
    s = graph_padding (g, s, &len, CUDNN_DATA_BOOLEAN);
  s = PW (g, CUDNN_POINTWISE_SUB, s, stats);
  if (k->padding)
    s = graph_padding (g, s, &len, CUDNN_DATA_BOOLEAN);
  if (k->causal)
    s = graph_causal (g, s);
  e = PW (g, CUDNN_POINTWISE_EXP, s, NULL);

  /* dV = Pᵀ·dO with P = E, or E ∘ mask · 1/(1 − p) with dropout */
  pd = e;
  if (k->has_dropout)
    {
      pd = PW (g, CUDNN_POINTWISE_MUL, pd, mask);
      pd = PW (g, CUDNN_POINTWISE_MUL, pd, drop_scale);
    }
  {
    gint64 dims[4] = { b, hq, skv, sq }, strides[4] = { hq * sq * skv, sq * skv, 1, skv };
    pt = graph_tensor (g, 0, io, dims, strides, FALSE);
    graph_reshape (g, pd, pt);
  }
  graph_matmul_heads (g, io, pt, d_o, dv, hq, len.kv, len.q);

  /* dS = (dO·Vᵀ [∘ mask] − softmax_sum) ∘ E [· 1/(1 − p)] · scale */
  dp = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul_ex (g, d_o, vt, dp, len.q, len.kv, NULL);
  if (k->has_dropout)
    dp = PW (g, CUDNN_POINTWISE_MUL, dp, mask);
  ds = PW (g, CUDNN_POINTWISE_SUB, dp, softmax_sum);
  ds = PW (g, CUDNN_POINTWISE_MUL, ds, e);
  if (k->has_dropout)
    ds = PW (g, CUDNN_POINTWISE_MUL, ds, drop_scale);
  ds = PW (g, CUDNN_POINTWISE_MUL, ds, scale);

  /* dK = dSᵀ·Q */
  {
    gint64 dims[4] = { b, hq, skv, sq }, strides[4] = { hq * sq * skv, sq * skv, 1, skv };
    dst = graph_tensor (g, 0, io, dims, strides, FALSE);
    graph_reshape (g, ds, dst);
  }
  graph_matmul_heads (g, io, dst, q, dk, hq, len.kv, len.q);

  /* dQ = dS·K, accumulated in f32 */
  kr = graph_tensor (g, 0, CUDNN_DATA_FLOAT, k->dims[T_K], k->strides[T_K], FALSE);
  graph_reshape (g, kt, kr);
  dq_accum = graph_real_f32 (g, UID_DQ_ACCUM, b, hq, sq, d);
  graph_matmul_ex (g, ds, kr, dq_accum, len.q, NULL, len.kv);
  graph_pointwise (g, CUDNN_POINTWISE_IDENTITY, CUDNN_DATA_FLOAT, dq_accum, NULL, NULL, dq,
                   io, -1);
}

/* ------------------------------------------------------------------ */
/* Plans (actor thread)                                                 */

static void
sdpa_plan_free (gpointer data)
{
  SdpaPlan *plan = data;

  if (plan->plan != NULL)
    cudnnBackendDestroyDescriptor (plan->plan);
  g_free (plan->info);
  /* operations before the tensors they name */
  if (plan->descs != NULL)
    {
      for (guint i = plan->descs->len; i > 0; i--)
        destroy_descriptor (g_ptr_array_index (plan->descs, i - 1));
      g_ptr_array_free (plan->descs, TRUE);
    }
  g_free (plan);
}

static gsize
align_up (gsize n)
{
  return (n + WS_ALIGN - 1) / WS_ALIGN * WS_ALIGN;
}

/* One execution plan of a heuristics list, finalized within the limit. */
typedef struct {
  cudnnBackendDescriptor_t plan;
  gint64                   workspace;
  gint64                   engine;      /* the engine's global index; -1 unknown */
  guint                    config;      /* its place in the heuristics' list */
} Candidate;

/* The global index of the engine of @cfg (-1 where cuDNN does not say). */
static gint64
engine_index (cudnnBackendDescriptor_t cfg)
{
  cudnnBackendDescriptor_t engine = NULL;
  gint64 n = 0, index = -1;

  if (cudnnBackendCreateDescriptor (CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS)
    return -1;
  if (cudnnBackendGetAttribute (cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                &engine) != CUDNN_STATUS_SUCCESS || n != 1 ||
      cudnnBackendGetAttribute (engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                &index) != CUDNN_STATUS_SUCCESS || n != 1)
    index = -1;
  cudnnBackendDestroyDescriptor (engine);
  return index;
}

/* The first @max engine configurations of @mode's heuristics, in their
 * order, whose plans finalize with a workspace within @limit, into @out
 * (the caller owns their plans).  *n_tried counts the configurations
 * tried.  Returns how many. */
static guint
collect_plans (Graph                    *g,
               cudnnHandle_t             handle,
               cudnnBackendDescriptor_t  op_graph,
               cudnnBackendHeurMode_t    mode,
               guint64                   limit,
               guint                     max,
               Candidate                *out,
               guint                    *n_tried)
{
  cudnnBackendDescriptor_t heur, cfgs[MAX_ENGINE_CONFIGS] = { NULL, };
  gint64 count = 0, got = 0;
  guint n_out = 0;
  cudnnStatus_t st;

  heur = graph_create (g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  graph_set (g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph);
  graph_set (g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (g->error != NULL)
    return 0;
  /* A graph no engine supports fails here: not an error, no candidate. */
  if (cudnnBackendFinalize (heur) != CUDNN_STATUS_SUCCESS)
    return 0;
  if (cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                0, &count, NULL) != CUDNN_STATUS_SUCCESS || count <= 0)
    return 0;
  count = MIN (count, MAX_ENGINE_CONFIGS);
  for (gint64 i = 0; i < count; i++)
    if ((cfgs[i] = graph_create (g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) == NULL)
      return 0;
  st = cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 count, &got, cfgs);
  if (!graph_ok (g, st, "cudnnBackendGetAttribute (ENGINEHEUR_RESULTS)"))
    return 0;
  for (gint64 i = 0; i < MIN (got, count) && n_out < max; i++)
    {
      cudnnBackendDescriptor_t plan = NULL;
      gint64 size = 0, n = 0;

      (*n_tried)++;
      if (cudnnBackendCreateDescriptor (CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS)
        continue;
      if (cudnnBackendSetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
                                    &handle) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendSetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendFinalize (plan) == CUDNN_STATUS_SUCCESS &&
          cudnnBackendGetAttribute (plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                    1, &n, &size) == CUDNN_STATUS_SUCCESS &&
          size >= 0 && (guint64) size <= limit)
        {
          out[n_out].plan = plan;
          out[n_out].workspace = size;
          out[n_out].engine = engine_index (cfgs[i]);
          out[n_out].config = (guint) i;
          n_out++;
        }
      else
        cudnnBackendDestroyDescriptor (plan);
    }
  return n_out;
}

/* The index of the fastest of @n timings (negative: the candidate did not
 * run), the first of equals (the heuristics' order decides ties), or -1
 * when none ran. */
gint
atomr_cudnn_autotune_pick_internal (const gdouble *ms,
                                    guint          n)
{
  gint best = -1;

  for (guint i = 0; i < n; i++)
    if (ms[i] >= 0 && (best < 0 || ms[i] < ms[best]))
      best = (gint) i;
  return best;
}

/* The workspace layout of @plan once its cuDNN workspace is known. */
static void
sdpa_plan_layout (SdpaPlan      *plan,
                  const SdpaKey *k,
                  size_t         version)
{
  plan->workspace = align_up ((gsize) plan->cudnn_workspace);
  if (k->backward)
    {
      gint64 b = k->dims[T_Q][0], hq = k->dims[T_Q][1], sq = k->dims[T_Q][2], d = k->dims[T_Q][3];

      plan->softmax_sum_offset = plan->workspace;
      plan->workspace += align_up ((gsize) (b * hq * sq) * sizeof (gfloat));
      plan->dq_accum_offset = plan->workspace;
      plan->dq_accum_bytes = (gsize) (b * hq * sq * d) * sizeof (gfloat);
      plan->workspace += align_up (plan->dq_accum_bytes);
      /* cuDNN zeroes the f32 dQ accumulator itself from 9.6 on */
      plan->memset_dq_accum = version < 90600;
    }
  if (k->has_dropout)
    {
      plan->rng_offset = plan->workspace;
      plan->workspace += align_up (2 * sizeof (gint64));
    }
}

static gboolean sdpa_execute (AtomrCudnnActor  *self,
                              SdpaRequest      *r,
                              SdpaPlan         *plan,
                              CUstream          stream,
                              GError          **error);

/* Runs each of the @n candidates once untimed, then once between two
 * events, with @r's operands (so the outputs are written, as the call
 * will write them again), and returns the index of the fastest (-1 when
 * none ran, @error set).  A candidate that fails to run is skipped.
 * *@ms receives the fastest time. */
static gint
sdpa_autotune (AtomrCudnnActor  *self,
               SdpaRequest      *r,
               SdpaPlan         *plan,
               CUstream          stream,
               const Candidate  *cands,
               guint             n,
               gdouble          *best_ms,
               GError          **error)
{
  gdouble ms[AUTOTUNE_CANDIDATES];
  CUevent start = NULL, end = NULL;
  size_t version = cudnnGetVersion ();
  gint best;

  if (!atomr_cuda_check (ATOMR_CU->cuEventCreate (&start, CU_EVENT_DEFAULT), "cuEventCreate", error))
    return -1;
  if (!atomr_cuda_check (ATOMR_CU->cuEventCreate (&end, CU_EVENT_DEFAULT), "cuEventCreate", error))
    {
      ATOMR_CU->cuEventDestroy (start);
      return -1;
    }
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) e = NULL;
      gfloat t = 0;

      plan->plan = cands[i].plan;
      plan->cudnn_workspace = cands[i].workspace;
      sdpa_plan_layout (plan, &r->key, version);
      if (sdpa_execute (self, r, plan, stream, &e) &&
          atomr_cuda_check (ATOMR_CU->cuEventRecord (start, stream), "cuEventRecord", &e) &&
          sdpa_execute (self, r, plan, stream, &e) &&
          atomr_cuda_check (ATOMR_CU->cuEventRecord (end, stream), "cuEventRecord", &e) &&
          atomr_cuda_check (ATOMR_CU->cuEventSynchronize (end), "cuEventSynchronize", &e) &&
          atomr_cuda_check (ATOMR_CU->cuEventElapsedTime (&t, start, end), "cuEventElapsedTime", &e))
        ms[i] = t;
      else
        {
          g_debug ("cuDNN %s: autotune candidate %u (engine %" G_GINT64_FORMAT ") skipped: %s",
                   r->opname, cands[i].config, cands[i].engine, e->message);
          ms[i] = -1;
        }
    }
  plan->plan = NULL;
  ATOMR_CU->cuEventDestroy (start);
  ATOMR_CU->cuEventDestroy (end);
  best = atomr_cudnn_autotune_pick_internal (ms, n);
  if (best < 0)
    {
      g_autofree gchar *d = describe (&r->key);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN %zu: %s (%s): none of the %u engine configurations timed while autotuning ran",
                   version, r->opname, d, n);
      return -1;
    }
  *best_ms = ms[best];
  return best;
}

static SdpaPlan *
sdpa_plan_build (AtomrCudnnActor  *self,
                 SdpaRequest      *r,
                 CUstream          stream,
                 GError          **error)
{
  const SdpaKey *k = &r->key;
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  guint64 limit = atomr_cudnn_actor_get_workspace_limit (self);
  size_t version = cudnnGetVersion ();
  Graph *g;
  SdpaPlan *plan = g_new0 (SdpaPlan, 1);
  cudnnBackendDescriptor_t op_graph;
  Candidate cands[AUTOTUNE_CANDIDATES];
  guint n_tried = 0, n_cands = 0;
  gint chosen = 0;
  gdouble tuned_ms = -1;
  const gchar *mode_name = "A";

  /* cuDNN before 9.16 gets the backward pass wrong unless the key/value
   * length is a multiple of 128 (its frontend adds a padding mask then,
   * which this graph does not have). */
  if (k->backward && version < 91600 && k->dims[T_K][2] % 128 != 0)
    {
      g_autofree gchar *d = describe (k);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s (%s): cuDNN %zu supports the backward pass of attention only for "
                   "key/value lengths that are multiples of 128 (this one is %" G_GINT64_FORMAT ")",
                   r->opname, d, version, k->dims[T_K][2]);
      g_free (plan);
      return NULL;
    }

  g = g_new0 (Graph, 1);
  g->opname = r->opname;
  g->next_uid = UID_FIRST_VIRTUAL;
  g->descs = g_ptr_array_new ();
  plan->descs = g->descs;

  if (k->backward)
    graph_backward (g, k);
  else
    graph_forward (g, k);
  graph_needed_uids (g, plan->uids, &plan->n_uids);

  op_graph = graph_create (g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph_set (g, op_graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->n_ops, g->ops);
  graph_set (g, op_graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  if (g->error == NULL)
    {
      cudnnStatus_t st = cudnnBackendFinalize (op_graph);
      if (st != CUDNN_STATUS_SUCCESS)
        {
          g_autofree gchar *d = describe (k);
          /* every operand was validated: a graph cuDNN refuses is one
           * this version does not support */
          g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "cuDNN %zu: %s (%s): the operation graph was refused (%s)", version,
                       r->opname, d, cudnnGetErrorString (st));
        }
    }
  /* Heuristics: the first configuration of mode A that finalizes within
   * the limit, else of the fallback mode.  Autotune: the fastest of the
   * first AUTOTUNE_CANDIDATES of mode A that do (the fallback mode's
   * first when mode A has none). */
  if (g->error == NULL)
    n_cands = collect_plans (g, handle, op_graph, CUDNN_HEUR_MODE_A, limit,
                             r->autotune ? AUTOTUNE_CANDIDATES : 1, cands, &n_tried);
  if (g->error == NULL && n_cands == 0)
    {
      mode_name = "FALLBACK";
      n_cands = collect_plans (g, handle, op_graph, CUDNN_HEUR_MODE_FALLBACK, limit, 1, cands, &n_tried);
    }
  if (g->error == NULL && n_cands == 0)
    {
      g_autofree gchar *d = describe (k);
      g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN %zu: no engine runs %s (%s): %u engine configurations tried, none "
                   "finalized within the workspace limit of %" G_GUINT64_FORMAT " bytes",
                   version, r->opname, d, n_tried, limit);
    }
  if (g->error == NULL && n_cands > 1)
    chosen = sdpa_autotune (self, r, plan, stream, cands, n_cands, &tuned_ms, &g->error);
  for (guint i = 0; i < n_cands; i++)
    if ((gint) i != chosen || g->error != NULL)
      cudnnBackendDestroyDescriptor (cands[i].plan);
  if (g->error != NULL)
    {
      g_propagate_error (error, g->error);
      g_free (g);
      sdpa_plan_free (plan);
      return NULL;
    }
  g_free (g);

  plan->plan = cands[chosen].plan;
  plan->cudnn_workspace = cands[chosen].workspace;
  sdpa_plan_layout (plan, k, version);
  if (tuned_ms >= 0)
    plan->info = g_strdup_printf ("%s: engine %" G_GINT64_FORMAT ", configuration %u of heuristics "
                                  "mode %s, autotuned (fastest of %u, %.3f ms), cuDNN workspace %"
                                  G_GINT64_FORMAT " bytes", r->opname, cands[chosen].engine,
                                  cands[chosen].config, mode_name, n_cands, tuned_ms,
                                  plan->cudnn_workspace);
  else
    plan->info = g_strdup_printf ("%s: engine %" G_GINT64_FORMAT ", configuration %u of heuristics "
                                  "mode %s, cuDNN workspace %" G_GINT64_FORMAT " bytes", r->opname,
                                  cands[chosen].engine, cands[chosen].config, mode_name,
                                  plan->cudnn_workspace);
  g_debug ("cuDNN %zu: %s", version, plan->info);
  g_object_set_data_full (G_OBJECT (self), "atomr-cudnn-sdpa-last-plan", g_strdup (plan->info), g_free);
  return plan;
}

static gpointer
dup_string (gpointer data,
            gpointer user_data)
{
  return g_strdup (data);
}

gchar *
atomr_cudnn_sdpa_dup_last_plan_internal (AtomrCudnnActor *self)
{
  return g_object_dup_data (G_OBJECT (self), "atomr-cudnn-sdpa-last-plan", dup_string, NULL);
}

/* A uid's name in messages: the operand's slot, or the scalar or
 * workspace tensor it is. */
static const gchar *
uid_name (gint64 uid)
{
  switch (uid)
    {
    case UID_SCALE: return "scale";
    case UID_ONE: return "one";
    case UID_NEG: return "lowest";
    case UID_SOFTMAX_SUM: return "softmax-sum";
    case UID_DQ_ACCUM: return "dq-accum";
    case UID_SEED: return "seed";
    case UID_OFFSET: return "offset";
    case UID_DROP_SCALE: return "dropout-scale";
    case UID_DROP_SCALE_INV: return "dropout-scale-inv";
    default:
      if (uid >= UID_Q && uid < UID_Q + N_T)
        return slot_names[uid - UID_Q];
      return "virtual";
    }
}

/* "q (1) = 0x7f…, scale (32) = host, …" (@ptrs may be NULL). */
static gchar *
pack_describe (const gint64 *uids,
               void *const  *ptrs,
               gint64        n)
{
  GString *s = g_string_new (NULL);

  for (gint64 i = 0; i < n; i++)
    {
      g_string_append_printf (s, "%s%s (%" G_GINT64_FORMAT ")", i ? ", " : "", uid_name (uids[i]), uids[i]);
      if (ptrs != NULL)
        g_string_append_printf (s, " = %p", ptrs[i]);
    }
  if (n == 0)
    g_string_append (s, "nothing");
  return g_string_free (s, FALSE);
}

/* Every (uid, pointer) a call of @r can supply: its operands
 * (@tensor_ptrs, 0 where a slot is unused), its by-value scalars (host
 * pointers into @r) and the tensors it keeps in the workspace @ws.
 * Returns how many (at most MAX_PACK). */
static guint
sdpa_supply (const SdpaRequest *r,
             const CUdeviceptr *tensor_ptrs,
             CUdeviceptr        ws,
             const SdpaPlan    *plan,
             gint64            *uids,
             void             **ptrs)
{
  guint n = 0;

#define SUPPLY(uid, ptr) G_STMT_START { uids[n] = (uid); ptrs[n++] = (void *) (ptr); } G_STMT_END
  for (guint i = 0; i < N_T; i++)
    if (tensor_ptrs[i] != 0)
      SUPPLY (UID_Q + i, (uintptr_t) tensor_ptrs[i]);
  SUPPLY (UID_SCALE, &r->scale);
  SUPPLY (UID_NEG, &r->neg);
  if (r->key.has_dropout)
    {
      SUPPLY (UID_SEED, (uintptr_t) (ws + plan->rng_offset));
      SUPPLY (UID_OFFSET, (uintptr_t) (ws + plan->rng_offset + 8));
      SUPPLY (UID_DROP_SCALE, &r->drop_scale);
      SUPPLY (UID_DROP_SCALE_INV, &r->drop_scale_inv);
    }
  if (r->key.backward)
    {
      SUPPLY (UID_ONE, &r->one);
      SUPPLY (UID_SOFTMAX_SUM, (uintptr_t) (ws + plan->softmax_sum_offset));
      SUPPLY (UID_DQ_ACCUM, (uintptr_t) (ws + plan->dq_accum_offset));
    }
#undef SUPPLY
  g_assert (n <= MAX_PACK);
  return n;
}

/* The variant pack: exactly the uids of @plan's graph (plan->uids, in
 * that order), each with its pointer among the @n_supplied supplied.
 * cuDNN refuses a pack with a uid its graph lacks or without one it has
 * (CUDNN_STATUS_BAD_PARAM_NULL_POINTER at execution, naming nothing), so
 * a uid of the graph that nothing supplies is an error naming it here. */
static gboolean
sdpa_pack_select (const SdpaRequest *r,
                  const SdpaPlan    *plan,
                  const gint64      *supplied_uids,
                  void *const       *supplied_ptrs,
                  guint              n_supplied,
                  gint64            *uids,
                  void             **ptrs,
                  GError           **error)
{
  for (guint i = 0; i < plan->n_uids; i++)
    {
      void *ptr = NULL;

      for (guint j = 0; j < n_supplied && ptr == NULL; j++)
        if (supplied_uids[j] == plan->uids[i])
          ptr = supplied_ptrs[j];
      if (ptr == NULL)
        {
          g_autofree gchar *d = describe (&r->key);
          g_autofree gchar *have = pack_describe (supplied_uids, NULL, n_supplied);
          g_autofree gchar *need = pack_describe (plan->uids, NULL, plan->n_uids);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_LIBRARY,
                       "cuDNN: %s (%s): the graph uses the tensor %s (uid %" G_GINT64_FORMAT ") but the "
                       "call has no pointer for it (the graph uses %s; the call supplies %s)",
                       r->opname, d, uid_name (plan->uids[i]), plan->uids[i], need, have);
          return FALSE;
        }
      uids[i] = plan->uids[i];
      ptrs[i] = ptr;
    }
  return TRUE;
}

/* Runs @plan with @r's operands on @stream (actor thread). */
static gboolean
sdpa_execute (AtomrCudnnActor  *self,
              SdpaRequest      *r,
              SdpaPlan         *plan,
              CUstream          stream,
              GError          **error)
{
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  CUdeviceptr ws = 0;
  gint64 uids[MAX_PACK], supplied_uids[MAX_PACK];
  void *ptrs[MAX_PACK], *supplied_ptrs[MAX_PACK];
  CUdeviceptr tensor_ptrs[N_T];
  guint n_supplied;
  gint64 n;
  void *ws_ptr;
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t st;
  gboolean ok;

  if (!atomr_cudnn_actor_reserve_workspace (self, stream, MAX (plan->workspace, 1), &ws_ptr, error))
    return FALSE;
  ws = (CUdeviceptr) (uintptr_t) ws_ptr;

  if (r->key.has_dropout)
    {
      CUdeviceptr seed = ws + plan->rng_offset;
      /* the seed and offset as two little-endian i64 device scalars,
       * written in stream order before the graph reads them */
      const guint32 words[4] = {
        (guint32) r->seed, (guint32) (r->seed >> 32),
        (guint32) r->offset, (guint32) (r->offset >> 32),
      };

      for (guint i = 0; i < 4; i++)
        if (!atomr_cuda_check (ATOMR_CU->cuMemsetD32Async (seed + 4 * i, words[i], 1, stream),
                               "cuMemsetD32Async", error))
          return FALSE;
    }
  if (r->key.backward && plan->memset_dq_accum &&
      !atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (ws + plan->dq_accum_offset, 0,
                                                    plan->dq_accum_bytes, stream),
                         "cuMemsetD8Async", error))
    return FALSE;

  for (guint i = 0; i < N_T; i++)
    tensor_ptrs[i] = r->t[i] != NULL ? atomr_tensor_get_ptr (r->t[i]) : 0;
  n_supplied = sdpa_supply (r, tensor_ptrs, ws, plan, supplied_uids, supplied_ptrs);
  if (!sdpa_pack_select (r, plan, supplied_uids, supplied_ptrs, n_supplied, uids, ptrs, error))
    return FALSE;
  n = plan->n_uids;

  if (!cudnn_ok (cudnnBackendCreateDescriptor (CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack),
                 "cudnnBackendCreateDescriptor (VARIANT_PACK)", r->opname, error))
    return FALSE;
  ok = cudnn_ok (cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                                           n, uids),
                 "cudnnBackendSetAttribute (VARIANT_PACK_UNIQUE_IDS)", r->opname, error) &&
       cudnn_ok (cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           CUDNN_TYPE_VOID_PTR, n, ptrs),
                 "cudnnBackendSetAttribute (VARIANT_PACK_DATA_POINTERS)", r->opname, error) &&
       cudnn_ok (cudnnBackendSetAttribute (pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                           1, &ws_ptr),
                 "cudnnBackendSetAttribute (VARIANT_PACK_WORKSPACE)", r->opname, error) &&
       cudnn_ok (cudnnBackendFinalize (pack), "cudnnBackendFinalize (VARIANT_PACK)", r->opname, error);
  if (ok)
    {
      st = cudnnBackendExecute (handle, plan->plan, pack);
      if (st != CUDNN_STATUS_SUCCESS && st / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000)
        {
          g_autofree gchar *d = describe (&r->key);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "cuDNN: %s (%s): cudnnBackendExecute answered %s", r->opname, d,
                       cudnnGetErrorString (st));
          ok = FALSE;
        }
      else if (st != CUDNN_STATUS_SUCCESS)
        {
          /* name what was in the pack: a bad variant pack (a missing or
           * NULL pointer) is otherwise one opaque status */
          g_autoptr(GError) e = NULL;
          g_autofree gchar *d = describe (&r->key);
          g_autofree gchar *in_pack = pack_describe (uids, ptrs, n);

          cudnn_ok (st, "cudnnBackendExecute", r->opname, &e);
          g_set_error (error, e->domain, e->code, "%s; %s (%s), variant pack: %s", e->message, r->opname,
                       d, in_pack);
          ok = FALSE;
        }
    }
  cudnnBackendDestroyDescriptor (pack);
  return ok;
}

static gboolean
sdpa_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  SdpaRequest *r = atomr_op_get_data (op);
  CUstream stream = atomr_op_get_cu_stream (op);
  SdpaPlan *plan;

  if (atomr_op_is_host (op) || atomr_cudnn_actor_get_handle (self) == NULL)
    {
      g_autofree gchar *d = describe (&r->key);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s (%s) needs a CUDA device; the host test device has no cuDNN",
                   r->opname, d);
      return FALSE;
    }

  plan = atomr_cudnn_actor_lookup_plan_internal (self, r->key_bytes);
  if (plan == NULL)
    {
      plan = sdpa_plan_build (self, r, stream, error);
      if (plan == NULL)
        return FALSE;
      atomr_cudnn_actor_insert_plan_internal (self, r->key_bytes, plan, sdpa_plan_free);
    }
  return sdpa_execute (self, r, plan, stream, error);
}

static GStrv
uid_names (const gint64 *uids,
           guint         n)
{
  GStrv names = g_new0 (gchar *, n + 1);

  for (guint i = 0; i < n; i++)
    names[i] = g_strdup (uid_name (uids[i]));
  return names;
}

gboolean
atomr_cudnn_sdpa_pack_check_internal (gboolean      backward,
                                      gboolean      causal,
                                      gboolean      padding,
                                      gboolean      has_stats,
                                      gdouble       dropout,
                                      const gchar  *withhold,
                                      GStrv        *needed,
                                      GStrv        *packed,
                                      GError      **error)
{
  static const Slot fwd[] = { T_Q, T_K, T_V, T_O, T_STATS };
  static const Slot bwd[] = { T_Q, T_K, T_V, T_O, T_DO, T_STATS, T_DQ, T_DK, T_DV };
  const Slot *slots = backward ? bwd : fwd;
  guint n_slots = backward ? G_N_ELEMENTS (bwd) : G_N_ELEMENTS (fwd);
  SdpaRequest r;
  SdpaPlan plan;
  Graph *g;
  CUdeviceptr tensor_ptrs[N_T] = { 0, };
  gint64 supplied_uids[MAX_PACK], uids[MAX_PACK];
  void *supplied_ptrs[MAX_PACK], *ptrs[MAX_PACK];
  guint n_supplied, kept = 0;

  g_return_val_if_fail (needed != NULL && packed != NULL, FALSE);
  *needed = NULL;
  *packed = NULL;
  memset (&r, 0, sizeof r);
  memset (&plan, 0, sizeof plan);
  r.opname = backward ? "sdpa-bwd" : "sdpa-fwd";
  r.key.backward = backward;
  r.key.dtype = ATOMR_DTYPE_BF16;
  r.key.causal = causal ? 1 : 0;
  r.key.padding = padding ? 1 : 0;
  r.key.has_stats = backward || has_stats;
  r.key.has_dropout = dropout > 0;
  r.key.dropout = dropout > 0 ? dropout : 0;
  for (guint i = 0; i < n_slots; i++)
    {
      Slot s = slots[i];
      gint64 dims[4] = { 2, 2, 128, s == T_STATS ? 1 : 64 };

      if (s == T_STATS && !r.key.has_stats)
        continue;
      memcpy (r.key.dims[s], dims, sizeof dims);
      packed_strides (dims, r.key.strides[s]);
      tensor_ptrs[s] = 0x100000 * (CUdeviceptr) (s + 1);
    }
  if (padding)
    for (Slot s = T_SEQ_Q; s <= T_SEQ_KV; s++)
      {
        for (guint d = 0; d < 4; d++)
          {
            r.key.dims[s][d] = d == 0 ? 2 : 1;
            r.key.strides[s][d] = 1;
          }
        tensor_ptrs[s] = 0x100000 * (CUdeviceptr) (s + 1);
      }
  r.scale = 0.125f;
  r.one = 1.0f;
  r.neg = -FLT_MAX;
  r.drop_scale = (gfloat) (1.0 / (1.0 - dropout));
  r.drop_scale_inv = (gfloat) (1.0 - dropout);

  g = g_new0 (Graph, 1);
  g->opname = r.opname;
  g->next_uid = UID_FIRST_VIRTUAL;
  g->dry = TRUE;
  if (backward)
    graph_backward (g, &r.key);
  else
    graph_forward (g, &r.key);
  graph_needed_uids (g, plan.uids, &plan.n_uids);
  if (g->error != NULL)
    {
      g_propagate_error (error, g->error);
      g_free (g);
      return FALSE;
    }
  g_free (g);

  /* a workspace at a fake address, laid out as sdpa_plan_build does */
  plan.softmax_sum_offset = WS_ALIGN;
  plan.dq_accum_offset = 2 * WS_ALIGN;
  plan.rng_offset = 3 * WS_ALIGN;
  n_supplied = sdpa_supply (&r, tensor_ptrs, 0x10000000, &plan, supplied_uids, supplied_ptrs);
  for (guint i = 0; i < n_supplied; i++)
    if (withhold == NULL || g_strcmp0 (uid_name (supplied_uids[i]), withhold) != 0)
      {
        supplied_uids[kept] = supplied_uids[i];
        supplied_ptrs[kept++] = supplied_ptrs[i];
      }
  if (!sdpa_pack_select (&r, &plan, supplied_uids, supplied_ptrs, kept, uids, ptrs, error))
    return FALSE;
  *needed = uid_names (plan.uids, plan.n_uids);
  *packed = uid_names (uids, plan.n_uids);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Validation (caller's thread)                                         */

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

static void
sdpa_request_clear (gpointer data)
{
  SdpaRequest *r = data;

  for (guint i = 0; i < N_T; i++)
    g_clear_object (&r->t[i]);
  g_clear_pointer (&r->key_bytes, g_bytes_unref);
}

static gchar *
shape_string (const gint64 *shape,
              guint         n)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "×" : "", shape[i]);
  return g_string_free (s, FALSE);
}

/* A 4-D view of this actor's device: dims ≥ 1, positive strides that
 * make no two elements share memory; @io views are f16/bf16 (the request's
 * dtype), with unit stride in the last dimension and 16-byte aligned rows;
 * the stats view is packed f32 of shape b × h × s × 1. */
static gboolean
check_operand (AtomrCudnnActor *self,
               SdpaRequest     *r,
               Slot             slot,
               const gchar     *name,
               AtomrTensor     *t,
               GError         **error)
{
  const gchar *op = r->opname;
  guint n;
  const gint64 *shape, *strides;
  AtomrDtype dtype;
  gboolean io = slot != T_STATS;

  if (t == NULL)
    return FAIL ("%s: %s is NULL", op, name);
  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), name, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, &n);
  strides = atomr_tensor_get_strides (t, NULL);
  dtype = atomr_tensor_get_dtype (t);
  if (n != 4)
    return FAIL ("%s: %s has %u dimensions (takes 4: batch × heads × sequence × %s)", op, name, n,
                 io ? "head dimension" : "1");
  if (io)
    {
      if (dtype != ATOMR_DTYPE_F16 && dtype != ATOMR_DTYPE_BF16)
        return FAIL ("%s: %s has dtype %s (attention takes f16 or bf16)", op, name,
                     atomr_dtype_get_name (dtype));
      if (r->key.dtype < 0)
        r->key.dtype = dtype;
      else if ((gint) dtype != r->key.dtype)
        return FAIL ("%s: %s has dtype %s, the other operands %s", op, name,
                     atomr_dtype_get_name (dtype), atomr_dtype_get_name (r->key.dtype));
    }
  else if (dtype != ATOMR_DTYPE_F32)
    return FAIL ("%s: %s has dtype %s (the softmax statistics are f32)", op, name,
                 atomr_dtype_get_name (dtype));
  for (guint i = 0; i < 4; i++)
    {
      if (shape[i] < 1 || shape[i] > G_MAXINT32)
        return FAIL ("%s: %s dimension %u is %" G_GINT64_FORMAT " (takes 1 to %d)", op, name, i,
                     shape[i], G_MAXINT32);
      if (shape[i] > 1 && strides[i] < 1)
        return FAIL ("%s: %s stride %u is %" G_GINT64_FORMAT " (attention takes positive strides: "
                     "no broadcast or reversed views)", op, name, i, strides[i]);
    }
  if (io)
    {
      if (shape[3] > 1 && strides[3] != 1)
        return FAIL ("%s: %s has stride %" G_GINT64_FORMAT " in its last dimension (cuDNN's attention "
                     "takes 1: each head's vector contiguous)", op, name, strides[3]);
      if (shape[3] % 8 != 0)
        return FAIL ("%s: %s has a head dimension of %" G_GINT64_FORMAT " (cuDNN's attention takes "
                     "multiples of 8)", op, name, shape[3]);
      for (guint i = 0; i < 3; i++)
        if (shape[i] > 1 && strides[i] % 8 != 0)
          return FAIL ("%s: %s stride %u is %" G_GINT64_FORMAT " (cuDNN's attention takes multiples "
                       "of 8 elements: 16-byte aligned rows)", op, name, i, strides[i]);
      if (atomr_tensor_get_byte_offset (t) % 16 != 0)
        return FAIL ("%s: %s starts at byte offset %" G_GUINT64_FORMAT " (cuDNN's attention takes "
                     "16-byte aligned views)", op, name, atomr_tensor_get_byte_offset (t));
    }
  else
    {
      gint64 want[3] = { shape[1] * shape[2], shape[2], 1 };
      for (guint i = 0; i < 3; i++)
        if (shape[i] > 1 && strides[i] != want[i])
          return FAIL ("%s: %s stride %u is %" G_GINT64_FORMAT " (the statistics must be a packed "
                       "b × h × s × 1 view: stride %" G_GINT64_FORMAT ")", op, name, i, strides[i],
                       want[i]);
    }
  /* no two elements at one address: sorted by stride, each stride spans
   * the dimensions inside it */
  {
    guint order[4] = { 0, 1, 2, 3 };
    gint64 span = 1;

    for (guint i = 1; i < 4; i++)
      for (guint j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; j--)
        {
          guint tmp = order[j];
          order[j] = order[j - 1];
          order[j - 1] = tmp;
        }
    for (guint i = 0; i < 4; i++)
      {
        guint d = order[i];
        if (shape[d] == 1)
          continue;
        if (strides[d] < span)
          return FAIL ("%s: %s has overlapping strides (stride %u is %" G_GINT64_FORMAT
                       ", the dimensions inside it span %" G_GINT64_FORMAT ")",
                       op, name, d, strides[d], span);
        span = strides[d] * shape[d];
      }
  }

  for (guint i = 0; i < 4; i++)
    {
      r->key.dims[slot][i] = shape[i];
      r->key.strides[slot][i] = shape[i] > 1 ? strides[i] : 1;
    }
  /* A size-1 dimension's stride means nothing to the view, but cuDNN
   * reads layouts from strides: give it the span of the dimensions after
   * it. */
  for (guint i = 0; i < 4; i++)
    if (shape[i] == 1)
      {
        gint64 s = 1;
        for (guint j = i + 1; j < 4; j++)
          if (shape[j] > 1)
            s = MAX (s, strides[j] * shape[j]);
        r->key.strides[slot][i] = s;
      }
  if (!io)
    {
      /* the graph's stats tensor is packed */
      r->key.strides[slot][0] = shape[1] * shape[2];
      r->key.strides[slot][1] = shape[2];
      r->key.strides[slot][2] = 1;
      r->key.strides[slot][3] = 1;
    }
  r->t[slot] = g_object_ref (t);
  return TRUE;
}

static gboolean
check_shapes (SdpaRequest  *r,
              GError      **error)
{
  const SdpaKey *k = &r->key;
  const gchar *op = r->opname;
  gint64 b = k->dims[T_Q][0], hq = k->dims[T_Q][1], sq = k->dims[T_Q][2], d = k->dims[T_Q][3];
  gint64 hk = k->dims[T_K][1], skv = k->dims[T_K][2], dv = k->dims[T_V][3];
  struct { Slot slot; gint64 want[4]; } expect[] = {
    { T_K, { b, hk, skv, d } },
    { T_V, { b, hk, skv, dv } },
    { T_O, { b, hq, sq, dv } },
    { T_DO, { b, hq, sq, dv } },
    { T_STATS, { b, hq, sq, 1 } },
    { T_DQ, { b, hq, sq, d } },
    { T_DK, { b, hk, skv, d } },
    { T_DV, { b, hk, skv, dv } },
  };

  for (guint i = 0; i < G_N_ELEMENTS (expect); i++)
    {
      Slot s = expect[i].slot;
      if (r->t[s] == NULL)
        continue;
      if (memcmp (k->dims[s], expect[i].want, sizeof expect[i].want) != 0)
        {
          g_autofree gchar *got = shape_string (k->dims[s], 4);
          g_autofree gchar *want = shape_string (expect[i].want, 4);
          g_autofree gchar *qs = shape_string (k->dims[T_Q], 4);
          return FAIL ("%s: %s is %s but q is %s, so it must be %s", op, slot_names[s], got, qs, want);
        }
    }
  if (hq % hk != 0)
    return FAIL ("%s: q has %" G_GINT64_FORMAT " heads and k %" G_GINT64_FORMAT " (the query heads "
                 "must be a multiple of the key/value heads)", op, hq, hk);
  return TRUE;
}

static gboolean
check_scale (const gchar  *op,
             gdouble       scale,
             GError      **error)
{
  if (!isfinite (scale) || fabs (scale) > FLT_MAX)
    return FAIL ("%s: scale is %g (takes a finite f32 value, usually 1/√(head dimension))", op, scale);
  return TRUE;
}

/* A per-batch length view: int32, @batch elements (shape [batch] or
 * [batch, 1, 1, 1]), contiguous and 16-byte aligned, on the actor's
 * device.  Its values are read on the device, in stream order. */
static gboolean
check_lengths (AtomrCudnnActor  *self,
               SdpaRequest      *r,
               Slot              slot,
               AtomrTensor      *t,
               GError          **error)
{
  const gchar *op = r->opname, *name = slot_names[slot];
  gint64 batch = r->key.dims[T_Q][0];
  const gint64 *shape, *strides;
  guint n;

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), name, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, &n);
  strides = atomr_tensor_get_strides (t, NULL);
  if (atomr_tensor_get_dtype (t) != ATOMR_DTYPE_I32)
    return FAIL ("%s: %s has dtype %s (the sequence lengths are i32)", op, name,
                 atomr_dtype_get_name (atomr_tensor_get_dtype (t)));
  if (!((n == 1 && shape[0] == batch) ||
        (n == 4 && shape[0] == batch && shape[1] == 1 && shape[2] == 1 && shape[3] == 1)))
    {
      g_autofree gchar *got = shape_string (shape, n);
      return FAIL ("%s: %s is %s (takes one length per batch entry: %" G_GINT64_FORMAT " or %"
                   G_GINT64_FORMAT "×1×1×1)", op, name, got, batch, batch);
    }
  if (batch > 1 && strides[0] != 1)
    return FAIL ("%s: %s has stride %" G_GINT64_FORMAT " (the lengths must be contiguous)", op, name,
                 strides[0]);
  if (atomr_tensor_get_byte_offset (t) % 16 != 0)
    return FAIL ("%s: %s starts at byte offset %" G_GUINT64_FORMAT " (cuDNN takes 16-byte aligned "
                 "views)", op, name, atomr_tensor_get_byte_offset (t));
  for (guint i = 0; i < 4; i++)
    {
      r->key.dims[slot][i] = i == 0 ? batch : 1;
      r->key.strides[slot][i] = 1;
    }
  r->t[slot] = g_object_ref (t);
  return TRUE;
}

/* What a call asks for besides its operands. */
typedef struct {
  gdouble      scale;
  gboolean     auto_scale;  /* scale 0 means 1/√(head dimension) */
  gboolean     causal;
  gdouble      dropout;
  guint64      seed, offset;
  AtomrTensor *q_lengths, *kv_lengths;
} SdpaOptions;

static void
sdpa_common (AtomrCudnnActor     *self,
             gboolean             backward,
             const gchar         *opname,
             gpointer             tag,
             AtomrTensor        **t,
             const SdpaOptions   *opt,
             GCancellable        *cancellable,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  AtomrOp *op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);
  SdpaRequest *r = atomr_op_alloc_data (op, sizeof (SdpaRequest), sdpa_request_clear);
  GError *error = NULL;
  static const Slot fwd[] = { T_Q, T_K, T_V, T_O, T_STATS };
  static const Slot bwd[] = { T_Q, T_K, T_V, T_O, T_DO, T_STATS, T_DQ, T_DK, T_DV };
  const Slot *slots = backward ? bwd : fwd;
  guint n_slots = backward ? G_N_ELEMENTS (bwd) : G_N_ELEMENTS (fwd);
  gdouble scale = opt->scale;

  memset (&r->key, 0, sizeof r->key);
  r->opname = opname;
  r->key.backward = backward;
  r->key.dtype = -1;
  r->key.causal = opt->causal ? 1 : 0;
  for (guint i = 0; i < n_slots; i++)
    {
      Slot s = slots[i];
      if (s == T_STATS && !backward && t[s] == NULL)
        continue;           /* inference: no statistics */
      if (!check_operand (self, r, s, slot_names[s], t[s], &error))
        return atomr_op_fail (op, error);
    }
  r->key.has_stats = r->t[T_STATS] != NULL;
  if (opt->auto_scale && scale == 0)
    scale = 1.0 / sqrt ((gdouble) r->key.dims[T_Q][3]);
  if (!check_shapes (r, &error) || !check_scale (opname, scale, &error))
    return atomr_op_fail (op, error);
  if ((opt->q_lengths == NULL) != (opt->kv_lengths == NULL))
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: the padding mask needs both q-lengths and kv-lengths (only %s is set)", opname,
                   opt->q_lengths != NULL ? "q-lengths" : "kv-lengths");
      return atomr_op_fail (op, error);
    }
  if (opt->q_lengths != NULL)
    {
      if (!check_lengths (self, r, T_SEQ_Q, opt->q_lengths, &error) ||
          !check_lengths (self, r, T_SEQ_KV, opt->kv_lengths, &error))
        return atomr_op_fail (op, error);
      r->key.padding = 1;
    }
  if (!isfinite (opt->dropout) || opt->dropout < 0 || opt->dropout >= 1)
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: dropout is %g (takes a probability 0 ≤ p < 1)", opname, opt->dropout);
      return atomr_op_fail (op, error);
    }
  if (opt->dropout > 0)
    {
      r->key.has_dropout = 1;
      r->key.dropout = opt->dropout;
    }

  if (backward)
    {
      if (!atomr_check_no_alias (opname,
                                 ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dq", t[T_DQ]),
                                                 ATOMR_OPERAND_TENSOR ("dk", t[T_DK]),
                                                 ATOMR_OPERAND_TENSOR ("dv", t[T_DV])),
                                 ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("q", t[T_Q]),
                                                 ATOMR_OPERAND_TENSOR ("k", t[T_K]),
                                                 ATOMR_OPERAND_TENSOR ("v", t[T_V]),
                                                 ATOMR_OPERAND_TENSOR ("o", t[T_O]),
                                                 ATOMR_OPERAND_TENSOR ("d_o", t[T_DO]),
                                                 ATOMR_OPERAND_TENSOR ("stats", t[T_STATS])),
                                 &error))
        return atomr_op_fail (op, error);
    }
  else
    {
      const AtomrOperand outs[] = {
        ATOMR_OPERAND_TENSOR ("o", t[T_O]),
        ATOMR_OPERAND_TENSOR ("stats", t[T_STATS]),
      };
      if (!atomr_check_no_alias (opname, outs, r->t[T_STATS] != NULL ? 2 : 1,
                                 ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("q", t[T_Q]),
                                                 ATOMR_OPERAND_TENSOR ("k", t[T_K]),
                                                 ATOMR_OPERAND_TENSOR ("v", t[T_V])),
                                 &error))
        return atomr_op_fail (op, error);
    }

  r->scale = (gfloat) scale;
  r->one = 1.0f;
  r->neg = -FLT_MAX;
  r->drop_scale = (gfloat) (1.0 / (1.0 - opt->dropout));
  r->drop_scale_inv = (gfloat) (1.0 - opt->dropout);
  r->seed = opt->seed;
  r->autotune = atomr_cudnn_actor_get_autotune (self);
  r->offset = opt->offset;
  r->key_bytes = g_bytes_new (&r->key, sizeof r->key);

  if (r->t[T_SEQ_Q] != NULL)
    {
      atomr_op_read_tensor (op, r->t[T_SEQ_Q]);
      atomr_op_read_tensor (op, r->t[T_SEQ_KV]);
    }

  if (backward)
    {
      static const Slot in[] = { T_Q, T_K, T_V, T_O, T_DO, T_STATS };
      for (guint i = 0; i < G_N_ELEMENTS (in); i++)
        atomr_op_read_tensor (op, r->t[in[i]]);
      atomr_op_write_tensor (op, r->t[T_DQ]);
      atomr_op_write_tensor (op, r->t[T_DK]);
      atomr_op_write_tensor (op, r->t[T_DV]);
    }
  else
    {
      atomr_op_read_tensor (op, r->t[T_Q]);
      atomr_op_read_tensor (op, r->t[T_K]);
      atomr_op_read_tensor (op, r->t[T_V]);
      atomr_op_write_tensor (op, r->t[T_O]);
      if (r->t[T_STATS] != NULL)
        atomr_op_write_tensor (op, r->t[T_STATS]);
    }
  atomr_op_set_enqueue (op, sdpa_enqueue);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */

/**
 * atomr_cudnn_actor_sdpa_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @q: the queries, batch × heads × query length × head dimension
 * @k: the keys, batch × key/value heads × key length × head dimension
 * @v: the values, batch × key/value heads × key length × value head dimension
 * @scale: the factor of the scores, usually 1/√(head dimension)
 * @causal: mask the scores of keys after each query (query i sees keys
 *   0 to i)
 * @o: the output, batch × heads × query length × value head dimension
 * @stats: (nullable): where to keep the softmax statistics for the
 *   backward pass: an f32 view of batch × heads × query length × 1,
 *   packed; %NULL for inference
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @o is computed
 * @user_data: data for @callback
 *
 * Scaled dot-product attention, o = softmax (scale · q·kᵀ) · v (trace
 * name `cudnn · sdpa-fwd`), with cuDNN's fused flash-attention engine
 * (through the backend graph API; no dropout).  The statistics are
 * m + log Σ exp (s − m) of each row of scores s, with m its maximum.
 *
 * @q, @k, @v and @o have one dtype, f16 or bf16 (f32 accumulation), and
 * any layout whose last dimension is contiguous: the strides of the views
 * say where each element is, so batch × sequence × heads × dim storage
 * (BSHD, as projections produce it) is a [method@Atomr.Tensor.permute] away.
 * Head dimensions and strides are multiples of 8.  With fewer key/value
 * heads than query heads (grouped-query or multi-query attention) each
 * group of query heads shares one key/value head.  Plans are cached per
 * shape, layout, dtype and mask; a configuration no engine of the loaded
 * cuDNN runs fails with %ATOMR_ERROR_NOT_SUPPORTED naming it.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_sdpa_forward_async (AtomrCudnnActor     *self,
                                      AtomrTensor         *q,
                                      AtomrTensor         *k,
                                      AtomrTensor         *v,
                                      gdouble              scale,
                                      gboolean             causal,
                                      AtomrTensor         *o,
                                      AtomrTensor         *stats,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, NULL, stats, NULL, NULL, NULL };
  const SdpaOptions opt = { .scale = scale, .causal = causal };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  sdpa_common (self, FALSE, "sdpa-fwd", atomr_cudnn_actor_sdpa_forward_async, t, &opt,
               cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_sdpa_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.sdpa_forward_async].
 *
 * Returns: %TRUE when o (and the statistics) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_sdpa_forward_finish (AtomrCudnnActor  *self,
                                       GAsyncResult     *result,
                                       GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_sdpa_forward_async, error);
}

/**
 * atomr_cudnn_actor_sdpa_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @q: the queries of the forward pass
 * @k: the keys of the forward pass
 * @v: the values of the forward pass
 * @o: the output of the forward pass
 * @d_o: the gradient of the output, shaped like @o
 * @stats: the statistics the forward pass kept (f32, batch × heads ×
 *   query length × 1, packed)
 * @scale: the scale of the forward pass
 * @causal: the mask of the forward pass
 * @dq: the gradient of @q, shaped like it
 * @dk: the gradient of @k, shaped like it
 * @dv: the gradient of @v, shaped like it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the gradients are computed
 * @user_data: data for @callback
 *
 * The gradients of [method@Atomr.CudnnActor.sdpa_forward_async] (trace
 * name `cudnn · sdpa-bwd`), recomputing the scores from @q, @k and @stats
 * in cuDNN's fused flash-attention backward engine.  The views follow the
 * rules of the forward pass; the gradients must not overlap the inputs or
 * each other.  With grouped heads, @dk and @dv sum the gradients of every
 * query head of their group.  The engine's f32 accumulators live in the
 * actor's workspace.  cuDNN before 9.16 runs it only for key lengths that
 * are multiples of 128 (%ATOMR_ERROR_NOT_SUPPORTED otherwise).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_sdpa_backward_async (AtomrCudnnActor     *self,
                                       AtomrTensor         *q,
                                       AtomrTensor         *k,
                                       AtomrTensor         *v,
                                       AtomrTensor         *o,
                                       AtomrTensor         *d_o,
                                       AtomrTensor         *stats,
                                       gdouble              scale,
                                       gboolean             causal,
                                       AtomrTensor         *dq,
                                       AtomrTensor         *dk,
                                       AtomrTensor         *dv,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, d_o, stats, dq, dk, dv };
  const SdpaOptions opt = { .scale = scale, .causal = causal };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  sdpa_common (self, TRUE, "sdpa-bwd", atomr_cudnn_actor_sdpa_backward_async, t, &opt,
               cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_sdpa_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.sdpa_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_sdpa_backward_finish (AtomrCudnnActor  *self,
                                        GAsyncResult     *result,
                                        GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_sdpa_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Multi-head attention on projected activations                        */

/* A batch × sequence × (heads · dim) view as batch × heads × sequence × dim. */
static AtomrTensor *
split_heads (const gchar  *op,
             const gchar  *name,
             AtomrTensor  *t,
             guint         heads,
             GError      **error)
{
  g_autoptr(AtomrTensor) r = NULL;
  const gint64 *shape;
  guint n;
  static const guint perm[4] = { 0, 2, 1, 3 };
  GError *local = NULL;

  if (t == NULL || !ATOMR_IS_TENSOR (t))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: %s is not an AtomrTensor", op, name);
      return NULL;
    }
  shape = atomr_tensor_get_shape (t, &n);
  if (n != 3)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s has %u dimensions (takes 3: batch × sequence × heads·dim)", op, name, n);
      return NULL;
    }
  if (shape[2] % heads != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s has %" G_GINT64_FORMAT " features, not a multiple of %u heads", op, name,
                   shape[2], heads);
      return NULL;
    }
  {
    gint64 s4[4] = { shape[0], shape[1], heads, shape[2] / heads };
    r = atomr_tensor_reshape (t, s4, 4, &local);
  }
  if (r == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s cannot be split into %u heads: %s", op, name, heads, local->message);
      g_error_free (local);
      return NULL;
    }
  return atomr_tensor_permute (r, perm, 4, error);
}

static void
mha_common (AtomrCudnnActor     *self,
            gboolean             backward,
            const gchar         *opname,
            gpointer             tag,
            guint                n_heads,
            guint                n_kv_heads,
            AtomrTensor        **in,
            const SdpaOptions   *opt,
            GCancellable        *cancellable,
            GAsyncReadyCallback  callback,
            gpointer             user_data)
{
  AtomrTensor *views[N_T] = { NULL, };
  GError *error = NULL;
  static const Slot kv[] = { T_K, T_V, T_DK, T_DV };

  if (n_heads == 0 || n_kv_heads == 0 || n_heads % n_kv_heads != 0)
    {
      AtomrOp *op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %u query heads and %u key/value heads (both at least 1, the first a "
                   "multiple of the second)", opname, n_heads, n_kv_heads);
      atomr_op_fail (op, error);
      return;
    }
  for (guint i = 0; i < N_T; i++)
    {
      guint heads = n_heads;
      if (in[i] == NULL || i == T_STATS)
        {
          views[i] = in[i] ? g_object_ref (in[i]) : NULL;
          continue;
        }
      for (guint j = 0; j < G_N_ELEMENTS (kv); j++)
        if (i == kv[j])
          heads = n_kv_heads;
      views[i] = split_heads (opname, slot_names[i], in[i], heads, &error);
      if (views[i] == NULL)
        break;
    }
  if (error != NULL)
    {
      AtomrOp *op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);
      atomr_op_fail (op, error);
    }
  else
    sdpa_common (self, backward, opname, tag, views, opt, cancellable, callback, user_data);
  for (guint i = 0; i < N_T; i++)
    g_clear_object (&views[i]);
}

/**
 * atomr_cudnn_actor_multi_head_attention_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (@n_heads for multi-head attention, fewer
 *   for grouped-query attention, 1 for multi-query attention)
 * @q: the projected queries, batch × query length × (@n_heads · head dim)
 * @k: the projected keys, batch × key length × (@n_kv_heads · head dim)
 * @v: the projected values, batch × key length × (@n_kv_heads · value head dim)
 * @scale: the factor of the scores, usually 1/√(head dim)
 * @causal: mask keys after each query
 * @o: the output, batch × query length × (@n_heads · value head dim),
 *   ready for the output projection
 * @stats: (nullable): the softmax statistics, f32 batch × @n_heads × query
 *   length × 1, for the backward pass; %NULL for inference
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @o is computed
 * @user_data: data for @callback
 *
 * Multi-head attention on the outputs of the input projections: splits
 * the last dimension of each view into heads (views only, no copy) and
 * runs [method@Atomr.CudnnActor.sdpa_forward_async] on the
 * batch × heads × sequence × dim views (trace name
 * `cudnn · mha-fwd`).  The projections themselves are matrix products of
 * the BLAS actors.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_multi_head_attention_forward_async (AtomrCudnnActor     *self,
                                                      guint                n_heads,
                                                      guint                n_kv_heads,
                                                      AtomrTensor         *q,
                                                      AtomrTensor         *k,
                                                      AtomrTensor         *v,
                                                      gdouble              scale,
                                                      gboolean             causal,
                                                      AtomrTensor         *o,
                                                      AtomrTensor         *stats,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, NULL, stats, NULL, NULL, NULL };
  const SdpaOptions opt = { .scale = scale, .causal = causal };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mha_common (self, FALSE, "mha-fwd", atomr_cudnn_actor_multi_head_attention_forward_async,
              n_heads, n_kv_heads, t, &opt, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_multi_head_attention_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.multi_head_attention_forward_async].
 *
 * Returns: %TRUE when o was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_multi_head_attention_forward_finish (AtomrCudnnActor  *self,
                                                       GAsyncResult     *result,
                                                       GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_multi_head_attention_forward_async,
                                  error);
}

/**
 * atomr_cudnn_actor_multi_head_attention_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @n_heads: query heads of the forward pass
 * @n_kv_heads: key/value heads of the forward pass
 * @q: the projected queries of the forward pass
 * @k: the projected keys of the forward pass
 * @v: the projected values of the forward pass
 * @o: the output of the forward pass
 * @d_o: the gradient of @o, shaped like it
 * @stats: the statistics the forward pass kept
 * @scale: the scale of the forward pass
 * @causal: the mask of the forward pass
 * @dq: the gradient of @q, shaped like it
 * @dk: the gradient of @k, shaped like it
 * @dv: the gradient of @v, shaped like it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the gradients are computed
 * @user_data: data for @callback
 *
 * The gradients of [method@Atomr.CudnnActor.multi_head_attention_forward_async]
 * (trace name `cudnn · mha-bwd`), through
 * [method@Atomr.CudnnActor.sdpa_backward_async] on head views.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_multi_head_attention_backward_async (AtomrCudnnActor     *self,
                                                       guint                n_heads,
                                                       guint                n_kv_heads,
                                                       AtomrTensor         *q,
                                                       AtomrTensor         *k,
                                                       AtomrTensor         *v,
                                                       AtomrTensor         *o,
                                                       AtomrTensor         *d_o,
                                                       AtomrTensor         *stats,
                                                       gdouble              scale,
                                                       gboolean             causal,
                                                       AtomrTensor         *dq,
                                                       AtomrTensor         *dk,
                                                       AtomrTensor         *dv,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, d_o, stats, dq, dk, dv };
  const SdpaOptions opt = { .scale = scale, .causal = causal };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mha_common (self, TRUE, "mha-bwd", atomr_cudnn_actor_multi_head_attention_backward_async,
              n_heads, n_kv_heads, t, &opt, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_multi_head_attention_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.multi_head_attention_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_multi_head_attention_backward_finish (AtomrCudnnActor  *self,
                                                        GAsyncResult     *result,
                                                        GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_multi_head_attention_backward_async,
                                  error);
}

/* ------------------------------------------------------------------ */
/* AtomrAttention: the settings of an attention call                    */

/**
 * AtomrAttention:
 *
 * What a scaled dot-product attention call computes besides its operands:
 * the scale, the causal mask, a padding mask from per-batch sequence
 * lengths and dropout with its Philox seed and offset.  Pass the same
 * object (or one with the same settings) to
 * [method@Atomr.CudnnActor.attention_forward_async] and
 * [method@Atomr.CudnnActor.attention_backward_async]: the backward pass
 * regenerates the forward pass's dropout mask from the seed and offset.
 *
 * A bare object (`g_object_new (ATOMR_TYPE_ATTENTION, NULL)`) is valid:
 * scale 1/√(head dimension), no mask, no dropout.  The object is read when
 * a call is made (on the caller's thread) and copied into the request, so
 * changing it afterwards does not affect calls in flight; it is not
 * thread-safe itself (configure it from one thread at a time).
 *
 * Since: 0.2
 */
struct _AtomrAttention
{
  GObject      parent_instance;
  gdouble      scale;
  gboolean     causal;
  gdouble      dropout;
  guint64      seed;
  guint64      offset;
  AtomrTensor *q_lengths;
  AtomrTensor *kv_lengths;
};

G_DEFINE_FINAL_TYPE (AtomrAttention, atomr_attention, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_SCALE,
  PROP_CAUSAL,
  PROP_DROPOUT,
  PROP_SEED,
  PROP_OFFSET,
  PROP_Q_LENGTHS,
  PROP_KV_LENGTHS,
  N_PROPS
};

static GParamSpec *attention_props[N_PROPS];

static void
atomr_attention_dispose (GObject *object)
{
  AtomrAttention *self = ATOMR_ATTENTION (object);

  g_clear_object (&self->q_lengths);
  g_clear_object (&self->kv_lengths);
  G_OBJECT_CLASS (atomr_attention_parent_class)->dispose (object);
}

static void
atomr_attention_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  AtomrAttention *self = ATOMR_ATTENTION (object);

  switch (prop_id)
    {
    case PROP_SCALE: g_value_set_double (value, self->scale); break;
    case PROP_CAUSAL: g_value_set_boolean (value, self->causal); break;
    case PROP_DROPOUT: g_value_set_double (value, self->dropout); break;
    case PROP_SEED: g_value_set_uint64 (value, self->seed); break;
    case PROP_OFFSET: g_value_set_uint64 (value, self->offset); break;
    case PROP_Q_LENGTHS: g_value_set_object (value, self->q_lengths); break;
    case PROP_KV_LENGTHS: g_value_set_object (value, self->kv_lengths); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_lengths (AtomrAttention  *self,
             AtomrTensor    **field,
             AtomrTensor     *value,
             guint            prop)
{
  if (g_set_object (field, value))
    g_object_notify_by_pspec (G_OBJECT (self), attention_props[prop]);
}

static void
atomr_attention_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  AtomrAttention *self = ATOMR_ATTENTION (object);

  switch (prop_id)
    {
    case PROP_SCALE: atomr_attention_set_scale (self, g_value_get_double (value)); break;
    case PROP_CAUSAL: atomr_attention_set_causal (self, g_value_get_boolean (value)); break;
    case PROP_DROPOUT: atomr_attention_set_dropout (self, g_value_get_double (value)); break;
    case PROP_SEED: atomr_attention_set_seed (self, g_value_get_uint64 (value)); break;
    case PROP_OFFSET: atomr_attention_set_offset (self, g_value_get_uint64 (value)); break;
    case PROP_Q_LENGTHS: set_lengths (self, &self->q_lengths, g_value_get_object (value), PROP_Q_LENGTHS); break;
    case PROP_KV_LENGTHS:
      set_lengths (self, &self->kv_lengths, g_value_get_object (value), PROP_KV_LENGTHS);
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_attention_class_init (AtomrAttentionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = atomr_attention_dispose;
  object_class->get_property = atomr_attention_get_property;
  object_class->set_property = atomr_attention_set_property;

  /**
   * AtomrAttention:scale:
   *
   * The factor of the scores q·kᵀ; 0 (the default) means 1/√(head
   * dimension of q).
   *
   * Since: 0.2
   */
  attention_props[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, NULL, -G_MAXFLOAT, G_MAXFLOAT, 0.0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:causal:
   *
   * Mask the scores of keys after each query (query i sees keys 0 to i,
   * top-left aligned).
   *
   * Since: 0.2
   */
  attention_props[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:dropout:
   *
   * The probability p that an attention weight is dropped (0 ≤ p < 1; a
   * call with p = 1 fails with %ATOMR_ERROR_INVALID_ARGUMENT).  Kept
   * weights are scaled by 1/(1 − p).  0 (the default) is no dropout: the
   * graph has no random number generator at all.
   *
   * Since: 0.2
   */
  attention_props[PROP_DROPOUT] =
    g_param_spec_double ("dropout", NULL, NULL, 0.0, 1.0, 0.0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:seed:
   *
   * The seed of the Philox generator of the dropout mask.  The same seed,
   * offset, shapes and probability give the same mask, bit for bit.
   *
   * Since: 0.2
   */
  attention_props[PROP_SEED] =
    g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:offset:
   *
   * The offset of the Philox generator (advance it between training steps
   * that share a seed).
   *
   * Since: 0.2
   */
  attention_props[PROP_OFFSET] =
    g_param_spec_uint64 ("offset", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:q-lengths:
   *
   * The number of valid queries of each batch entry: an i32 view of
   * batch (or batch × 1 × 1 × 1) elements on the actor's device, or %NULL
   * for no padding mask.  Set together with #AtomrAttention:kv-lengths.
   *
   * Since: 0.2
   */
  attention_props[PROP_Q_LENGTHS] =
    g_param_spec_object ("q-lengths", NULL, NULL, ATOMR_TYPE_TENSOR,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrAttention:kv-lengths:
   *
   * The number of valid keys and values of each batch entry, like
   * #AtomrAttention:q-lengths.
   *
   * Since: 0.2
   */
  attention_props[PROP_KV_LENGTHS] =
    g_param_spec_object ("kv-lengths", NULL, NULL, ATOMR_TYPE_TENSOR,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, attention_props);
}

static void
atomr_attention_init (AtomrAttention *self)
{
}

/**
 * atomr_attention_new:
 *
 * Settings for an attention call: scale 1/√(head dimension), no mask, no
 * dropout.
 *
 * Returns: (transfer full): a new [class@Atomr.Attention]
 *
 * Since: 0.2
 */
AtomrAttention *
atomr_attention_new (void)
{
  return g_object_new (ATOMR_TYPE_ATTENTION, NULL);
}

/**
 * atomr_attention_get_scale:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:scale.
 *
 * Returns: the #AtomrAttention:scale (0 for 1/√(head dimension))
 *
 * Since: 0.2
 */
gdouble
atomr_attention_get_scale (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), 0.0);
  return self->scale;
}

/**
 * atomr_attention_set_scale:
 * @self: an [class@Atomr.Attention]
 * @scale: the factor of the scores, 0 for 1/√(head dimension)
 *
 * Sets #AtomrAttention:scale.  A value that is not a finite f32 fails the
 * call that uses it with %ATOMR_ERROR_INVALID_ARGUMENT.
 *
 * Since: 0.2
 */
void
atomr_attention_set_scale (AtomrAttention *self,
                           gdouble         scale)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  if (self->scale == scale)
    return;
  self->scale = scale;
  g_object_notify_by_pspec (G_OBJECT (self), attention_props[PROP_SCALE]);
}

/**
 * atomr_attention_get_causal:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:causal.
 *
 * Returns: whether the causal mask is on
 *
 * Since: 0.2
 */
gboolean
atomr_attention_get_causal (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), FALSE);
  return self->causal;
}

/**
 * atomr_attention_set_causal:
 * @self: an [class@Atomr.Attention]
 * @causal: mask keys after each query
 *
 * Sets #AtomrAttention:causal.
 *
 * Since: 0.2
 */
void
atomr_attention_set_causal (AtomrAttention *self,
                            gboolean        causal)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  causal = !!causal;
  if (self->causal == causal)
    return;
  self->causal = causal;
  g_object_notify_by_pspec (G_OBJECT (self), attention_props[PROP_CAUSAL]);
}

/**
 * atomr_attention_get_dropout:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:dropout.
 *
 * Returns: the dropout probability
 *
 * Since: 0.2
 */
gdouble
atomr_attention_get_dropout (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), 0.0);
  return self->dropout;
}

/**
 * atomr_attention_set_dropout:
 * @self: an [class@Atomr.Attention]
 * @dropout: the probability of dropping an attention weight, 0 ≤ p < 1
 *
 * Sets #AtomrAttention:dropout.  The value is checked when a call uses it
 * (%ATOMR_ERROR_INVALID_ARGUMENT naming it), not here.
 *
 * Since: 0.2
 */
void
atomr_attention_set_dropout (AtomrAttention *self,
                             gdouble         dropout)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  if (self->dropout == dropout)
    return;
  self->dropout = dropout;
  g_object_notify_by_pspec (G_OBJECT (self), attention_props[PROP_DROPOUT]);
}

/**
 * atomr_attention_get_seed:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:seed.
 *
 * Returns: the Philox seed of the dropout mask
 *
 * Since: 0.2
 */
guint64
atomr_attention_get_seed (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), 0);
  return self->seed;
}

/**
 * atomr_attention_set_seed:
 * @self: an [class@Atomr.Attention]
 * @seed: the Philox seed
 *
 * Sets #AtomrAttention:seed.
 *
 * Since: 0.2
 */
void
atomr_attention_set_seed (AtomrAttention *self,
                          guint64         seed)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  if (self->seed == seed)
    return;
  self->seed = seed;
  g_object_notify_by_pspec (G_OBJECT (self), attention_props[PROP_SEED]);
}

/**
 * atomr_attention_get_offset:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:offset.
 *
 * Returns: the Philox offset of the dropout mask
 *
 * Since: 0.2
 */
guint64
atomr_attention_get_offset (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), 0);
  return self->offset;
}

/**
 * atomr_attention_set_offset:
 * @self: an [class@Atomr.Attention]
 * @offset: the Philox offset
 *
 * Sets #AtomrAttention:offset.
 *
 * Since: 0.2
 */
void
atomr_attention_set_offset (AtomrAttention *self,
                            guint64         offset)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  if (self->offset == offset)
    return;
  self->offset = offset;
  g_object_notify_by_pspec (G_OBJECT (self), attention_props[PROP_OFFSET]);
}

/**
 * atomr_attention_get_q_lengths:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:q-lengths.
 *
 * Returns: (transfer none) (nullable): the per-batch query lengths
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_attention_get_q_lengths (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), NULL);
  return self->q_lengths;
}

/**
 * atomr_attention_get_kv_lengths:
 * @self: an [class@Atomr.Attention]
 *
 * Gets #AtomrAttention:kv-lengths.
 *
 * Returns: (transfer none) (nullable): the per-batch key/value lengths
 *
 * Since: 0.2
 */
AtomrTensor *
atomr_attention_get_kv_lengths (AtomrAttention *self)
{
  g_return_val_if_fail (ATOMR_IS_ATTENTION (self), NULL);
  return self->kv_lengths;
}

/**
 * atomr_attention_set_sequence_lengths:
 * @self: an [class@Atomr.Attention]
 * @q_lengths: (nullable): the number of valid queries of each batch entry
 * @kv_lengths: (nullable): the number of valid keys/values of each batch
 *   entry
 *
 * Turns the padding mask on (both views given) or off (both %NULL).  Each
 * is an i32 view of batch (or batch × 1 × 1 × 1) elements, contiguous and
 * 16-byte aligned, on the actor's device; a call checks them (and that
 * both or neither are set) and fails with %ATOMR_ERROR_INVALID_ARGUMENT
 * otherwise.  The values are read on the device in stream order (the
 * call waits for writers of the views); each must lie between 1 and the
 * sequence length of its operand, which the host cannot check without
 * waiting for the device: values outside that range give unspecified
 * outputs (never out-of-bounds accesses, the lengths only mask scores).
 *
 * Since: 0.2
 */
void
atomr_attention_set_sequence_lengths (AtomrAttention *self,
                                      AtomrTensor    *q_lengths,
                                      AtomrTensor    *kv_lengths)
{
  g_return_if_fail (ATOMR_IS_ATTENTION (self));
  g_return_if_fail (q_lengths == NULL || ATOMR_IS_TENSOR (q_lengths));
  g_return_if_fail (kv_lengths == NULL || ATOMR_IS_TENSOR (kv_lengths));
  g_object_freeze_notify (G_OBJECT (self));
  set_lengths (self, &self->q_lengths, q_lengths, PROP_Q_LENGTHS);
  set_lengths (self, &self->kv_lengths, kv_lengths, PROP_KV_LENGTHS);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
options_from (AtomrAttention *attention,
              SdpaOptions    *opt)
{
  memset (opt, 0, sizeof *opt);
  opt->auto_scale = TRUE;
  if (attention == NULL)
    return;
  opt->scale = attention->scale;
  opt->causal = attention->causal;
  opt->dropout = attention->dropout;
  opt->seed = attention->seed;
  opt->offset = attention->offset;
  opt->q_lengths = attention->q_lengths;
  opt->kv_lengths = attention->kv_lengths;
}

/**
 * atomr_cudnn_actor_attention_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @attention: (nullable): the settings (scale, masks, dropout); %NULL for
 *   a bare [class@Atomr.Attention]
 * @q: the queries, batch × heads × query length × head dimension
 * @k: the keys, batch × key/value heads × key length × head dimension
 * @v: the values, batch × key/value heads × key length × value head dimension
 * @o: the output, batch × heads × query length × value head dimension
 * @stats: (nullable): the softmax statistics for the backward pass (f32,
 *   batch × heads × query length × 1, packed); %NULL for inference
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @o is computed
 * @user_data: data for @callback
 *
 * [method@Atomr.CudnnActor.sdpa_forward_async] with the settings of
 * @attention (trace name `cudnn · sdpa-fwd`): the views follow the same
 * rules.
 *
 * With a padding mask, the scores of query i and key j of batch entry b
 * are kept where i < q_lengths[b] and j < kv_lengths[b] (and, when
 * causal, j ≤ i); the rows of @o and @stats at or beyond q_lengths[b] are
 * unspecified (cuDNN's engines may skip them): mask them in the loss.
 *
 * With dropout p > 0, o = (softmax (scale · q·kᵀ) ∘ M / (1 − p)) · v
 * where M is a Bernoulli (1 − p) mask drawn by cuDNN's Philox generator
 * from #AtomrAttention:seed and #AtomrAttention:offset: the same settings
 * and shapes give the same @o bit for bit.  The statistics are those of
 * the softmax before dropout, which the backward pass needs.  Plans are
 * cached per shape, layout, dtype, masks and dropout probability; the
 * scale, seed and offset are passed at each call.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_attention_forward_async (AtomrCudnnActor     *self,
                                           AtomrAttention      *attention,
                                           AtomrTensor         *q,
                                           AtomrTensor         *k,
                                           AtomrTensor         *v,
                                           AtomrTensor         *o,
                                           AtomrTensor         *stats,
                                           GCancellable        *cancellable,
                                           GAsyncReadyCallback  callback,
                                           gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, NULL, stats, NULL, NULL, NULL };
  SdpaOptions opt;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_return_if_fail (attention == NULL || ATOMR_IS_ATTENTION (attention));
  options_from (attention, &opt);
  sdpa_common (self, FALSE, "sdpa-fwd", atomr_cudnn_actor_attention_forward_async, t, &opt, cancellable,
               callback, user_data);
}

/**
 * atomr_cudnn_actor_attention_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.attention_forward_async].
 *
 * Returns: %TRUE when o (and the statistics) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_attention_forward_finish (AtomrCudnnActor  *self,
                                            GAsyncResult     *result,
                                            GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_attention_forward_async, error);
}

/**
 * atomr_cudnn_actor_attention_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @attention: (nullable): the settings of the forward pass (the same
 *   scale, masks, lengths, dropout probability, seed and offset)
 * @q: the queries of the forward pass
 * @k: the keys of the forward pass
 * @v: the values of the forward pass
 * @o: the output of the forward pass
 * @d_o: the gradient of the output, shaped like @o
 * @stats: the statistics the forward pass kept
 * @dq: the gradient of @q, shaped like it
 * @dk: the gradient of @k, shaped like it
 * @dv: the gradient of @v, shaped like it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the gradients are computed
 * @user_data: data for @callback
 *
 * The gradients of [method@Atomr.CudnnActor.attention_forward_async]
 * (trace name `cudnn · sdpa-bwd`), under the rules of
 * [method@Atomr.CudnnActor.sdpa_backward_async].  With dropout the mask
 * is regenerated from the seed and offset, so they must be those of the
 * forward pass.  With a padding mask, the rows of @dq at or beyond a batch
 * entry's query length and of @dk and @dv at or beyond its key/value
 * length are unspecified, and @d_o must be zero at the padded query rows
 * (a loss masked by the lengths gives that).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_attention_backward_async (AtomrCudnnActor     *self,
                                            AtomrAttention      *attention,
                                            AtomrTensor         *q,
                                            AtomrTensor         *k,
                                            AtomrTensor         *v,
                                            AtomrTensor         *o,
                                            AtomrTensor         *d_o,
                                            AtomrTensor         *stats,
                                            AtomrTensor         *dq,
                                            AtomrTensor         *dk,
                                            AtomrTensor         *dv,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, d_o, stats, dq, dk, dv };
  SdpaOptions opt;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_return_if_fail (attention == NULL || ATOMR_IS_ATTENTION (attention));
  options_from (attention, &opt);
  sdpa_common (self, TRUE, "sdpa-bwd", atomr_cudnn_actor_attention_backward_async, t, &opt, cancellable,
               callback, user_data);
}

/**
 * atomr_cudnn_actor_attention_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.attention_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_attention_backward_finish (AtomrCudnnActor  *self,
                                             GAsyncResult     *result,
                                             GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_attention_backward_async, error);
}

/**
 * atomr_cudnn_actor_attention_multi_head_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @attention: (nullable): the settings (scale, causal and padding masks,
 *   dropout); %NULL for a bare [class@Atomr.Attention]
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (@n_heads for multi-head attention, fewer
 *   for grouped-query attention, 1 for multi-query attention)
 * @q: the projected queries, batch × query length × (@n_heads · head dim)
 * @k: the projected keys, batch × key length × (@n_kv_heads · head dim)
 * @v: the projected values, batch × key length × (@n_kv_heads · value head dim)
 * @o: the output, batch × query length × (@n_heads · value head dim),
 *   ready for the output projection
 * @stats: (nullable): the softmax statistics, f32 batch × @n_heads × query
 *   length × 1, for the backward pass; %NULL for inference
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async) (closure user_data): called when @o is computed
 * @user_data: data for @callback
 *
 * [method@Atomr.CudnnActor.multi_head_attention_forward_async] with the
 * settings of @attention, as [method@Atomr.CudnnActor.attention_forward_async]
 * takes them (trace name `cudnn · mha-fwd`): the last dimension of each
 * view is split into heads (views only, no copy) and the flash-attention
 * graph runs on the batch × heads × sequence × dim views.  The padding
 * lengths of @attention count positions of the sequence dimension; the
 * dropout mask is the one [method@Atomr.CudnnActor.attention_forward_async]
 * draws for the head views with the same seed and offset.  The object is
 * read when the call is made.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_attention_multi_head_forward_async (AtomrCudnnActor     *self,
                                                      AtomrAttention      *attention,
                                                      guint                n_heads,
                                                      guint                n_kv_heads,
                                                      AtomrTensor         *q,
                                                      AtomrTensor         *k,
                                                      AtomrTensor         *v,
                                                      AtomrTensor         *o,
                                                      AtomrTensor         *stats,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, NULL, stats, NULL, NULL, NULL };
  SdpaOptions opt;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_return_if_fail (attention == NULL || ATOMR_IS_ATTENTION (attention));
  options_from (attention, &opt);
  mha_common (self, FALSE, "mha-fwd", atomr_cudnn_actor_attention_multi_head_forward_async,
              n_heads, n_kv_heads, t, &opt, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_attention_multi_head_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.attention_multi_head_forward_async].
 *
 * Returns: %TRUE when o (and the statistics) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_attention_multi_head_forward_finish (AtomrCudnnActor  *self,
                                                       GAsyncResult     *result,
                                                       GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_attention_multi_head_forward_async,
                                  error);
}

/**
 * atomr_cudnn_actor_attention_multi_head_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @attention: (nullable): the settings of the forward pass; %NULL for a
 *   bare [class@Atomr.Attention]
 * @n_heads: query heads of the forward pass
 * @n_kv_heads: key/value heads of the forward pass
 * @q: the projected queries of the forward pass
 * @k: the projected keys of the forward pass
 * @v: the projected values of the forward pass
 * @o: the output of the forward pass
 * @d_o: the gradient of @o, shaped like it
 * @stats: the statistics the forward pass kept
 * @dq: the gradient of @q, shaped like it
 * @dk: the gradient of @k, shaped like it
 * @dv: the gradient of @v, shaped like it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async) (closure user_data): called when the gradients
 *   are computed
 * @user_data: data for @callback
 *
 * The gradients of [method@Atomr.CudnnActor.attention_multi_head_forward_async]
 * with the same settings (trace name `cudnn · mha-bwd`), through
 * [method@Atomr.CudnnActor.attention_backward_async] on head views: with
 * dropout, @attention's seed and offset must be those of the forward
 * pass, which redraws the same mask.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_attention_multi_head_backward_async (AtomrCudnnActor     *self,
                                                       AtomrAttention      *attention,
                                                       guint                n_heads,
                                                       guint                n_kv_heads,
                                                       AtomrTensor         *q,
                                                       AtomrTensor         *k,
                                                       AtomrTensor         *v,
                                                       AtomrTensor         *o,
                                                       AtomrTensor         *d_o,
                                                       AtomrTensor         *stats,
                                                       AtomrTensor         *dq,
                                                       AtomrTensor         *dk,
                                                       AtomrTensor         *dv,
                                                       GCancellable        *cancellable,
                                                       GAsyncReadyCallback  callback,
                                                       gpointer             user_data)
{
  AtomrTensor *t[N_T] = { q, k, v, o, d_o, stats, dq, dk, dv };
  SdpaOptions opt;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_return_if_fail (attention == NULL || ATOMR_IS_ATTENTION (attention));
  options_from (attention, &opt);
  mha_common (self, TRUE, "mha-bwd", atomr_cudnn_actor_attention_multi_head_backward_async,
              n_heads, n_kv_heads, t, &opt, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_attention_multi_head_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.attention_multi_head_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_attention_multi_head_backward_finish (AtomrCudnnActor  *self,
                                                        GAsyncResult     *result,
                                                        GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_attention_multi_head_backward_async,
                                  error);
}
