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
 * pass live in the actor's one workspace, after cuDNN's own.
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
#include "actors/cudnn/atomr-cudnn-ext-private.h"
#include "core/atomr-tensor-private.h"

#define MAX_GRAPH_TENSORS 64
#define MAX_GRAPH_OPS     40
#define MAX_ENGINE_CONFIGS 16
#define WS_ALIGN          256

/* Operand slots of a request. */
typedef enum {
  T_Q, T_K, T_V, T_O, T_DO, T_STATS, T_DQ, T_DK, T_DV,
  N_T
} Slot;

static const gchar *const slot_names[N_T] = {
  "q", "k", "v", "o", "d_o", "stats", "dq", "dk", "dv",
};

/* Unique ids of the graph's non-virtual tensors (variant pack). */
enum {
  UID_Q = 1, UID_K, UID_V, UID_O, UID_DO, UID_STATS, UID_DQ, UID_DK, UID_DV,
  UID_SCALE, UID_ONE, UID_NEG, UID_SOFTMAX_SUM, UID_DQ_ACCUM,
  UID_FIRST_VIRTUAL = 100,
};

/* Everything a plan depends on; zero-filled, hashed and compared as bytes. */
typedef struct {
  gint32 backward;
  gint32 dtype;
  gint32 causal;
  gint32 has_stats;
  gint64 dims[N_T][4];
  gint64 strides[N_T][4];
} SdpaKey;

typedef struct {
  GPtrArray                *descs;      /* every descriptor of the graph */
  cudnnBackendDescriptor_t  plan;
  gint64                    cudnn_workspace;
  gsize                     softmax_sum_offset;
  gsize                     dq_accum_offset;
  gsize                     dq_accum_bytes;
  gsize                     workspace;  /* all of it */
  gboolean                  memset_dq_accum;
} SdpaPlan;

typedef struct {
  const gchar *opname;
  SdpaKey      key;
  GBytes      *key_bytes;
  AtomrTensor *t[N_T];                  /* owned; NULL where unused */
  gfloat       scale, one, neg;         /* by-value scalars */
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

  g_string_append (s, k->causal ? ", causal" : ", no mask");
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
  if (g->error != NULL)
    return;
  graph_ok (g, cudnnBackendSetAttribute (desc, name, type, count, value), "cudnnBackendSetAttribute");
}

static void
graph_finalize (Graph                    *g,
                cudnnBackendDescriptor_t  desc)
{
  if (g->error != NULL)
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

static GraphTensor *
graph_scalar (Graph  *g,
              gint64  uid)
{
  static const gint64 ones[4] = { 1, 1, 1, 1 };

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
  graph_set (g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x->desc);
  if (b != NULL)
    graph_set (g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b->desc);
  if (t != NULL)
    graph_set (g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t->desc);
  if (y != NULL)
    graph_set (g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y->desc);
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
  graph_set (g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd);
  graph_add_op (g, op);
}

static void
graph_matmul (Graph       *g,
              GraphTensor *a,
              GraphTensor *b,
              GraphTensor *c)
{
  cudnnBackendDescriptor_t mm, op;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;

  if (g->error != NULL || a == NULL || b == NULL || c == NULL)
    return;
  mm = graph_create (g, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  graph_set (g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  graph_finalize (g, mm);
  op = graph_create (g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm);
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
  graph_set (g, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x->desc);
  graph_set (g, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y->desc);
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

  q = graph_operand (g, k, T_Q, UID_Q, io, FALSE);
  kt = graph_operand (g, k, T_K, UID_K, io, TRUE);
  v = graph_operand (g, k, T_V, UID_V, io, FALSE);
  o = graph_operand (g, k, T_O, UID_O, io, FALSE);
  scale = graph_scalar (g, UID_SCALE);

  s = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul (g, q, kt, s);
  s = PW (g, CUDNN_POINTWISE_MUL, s, scale);
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
  graph_pointwise (g, CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, e, z, NULL, p, io, -1);
  graph_matmul (g, p, v, o);
}

/* @full (b × hq × …, the I/O dtype) summed over each group of heads into
 * @out (b × hk × …), or the matmul writes @out directly when hq == hk. */
static void
graph_matmul_heads (Graph           *g,
                    cudnnDataType_t  io,
                    GraphTensor     *a,
                    GraphTensor     *b,
                    GraphTensor     *out,
                    gint64           hq)
{
  GraphTensor *full;

  if (g->error != NULL || out == NULL)
    return;
  if (out->dims[1] == hq)
    {
      graph_matmul (g, a, b, out);
      return;
    }
  full = graph_virtual (g, io, out->dims[0], hq, out->dims[2], out->dims[3]);
  graph_matmul (g, a, b, full);
  graph_reduce (g, CUDNN_REDUCE_TENSOR_ADD, full, out);
}

static void
graph_backward (Graph         *g,
                const SdpaKey *k)
{
  cudnnDataType_t io = k->dtype == ATOMR_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  gint64 b = k->dims[T_Q][0], hq = k->dims[T_Q][1], sq = k->dims[T_Q][2], d = k->dims[T_Q][3];
  gint64 skv = k->dims[T_K][2];
  GraphTensor *q, *kt, *vt, *o, *d_o, *stats, *dq, *dk, *dv, *scale, *one;
  GraphTensor *t, *softmax_sum, *s, *e, *pt, *dp, *ds, *dst, *kr, *dq_accum;

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
  one = graph_scalar (g, UID_ONE);

  /* softmax_sum = Σ_d (dO ∘ O) · 1 */
  t = PW (g, CUDNN_POINTWISE_MUL, d_o, o);
  {
    GraphTensor *r = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, 1);
    graph_reduce (g, CUDNN_REDUCE_TENSOR_ADD, t, r);
    softmax_sum = graph_real_f32 (g, UID_SOFTMAX_SUM, b, hq, sq, 1);
    graph_pointwise (g, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, r, one, NULL, softmax_sum,
                     CUDNN_DATA_FLOAT, -1);
  }

  /* E = exp (S·scale − stats), masked */
  s = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul (g, q, kt, s);
  s = PW (g, CUDNN_POINTWISE_MUL, s, scale);
  s = PW (g, CUDNN_POINTWISE_SUB, s, stats);
  if (k->causal)
    s = graph_causal (g, s);
  e = PW (g, CUDNN_POINTWISE_EXP, s, NULL);

  /* dV = Eᵀ·dO */
  {
    gint64 dims[4] = { b, hq, skv, sq }, strides[4] = { hq * sq * skv, sq * skv, 1, skv };
    pt = graph_tensor (g, 0, io, dims, strides, FALSE);
    graph_reshape (g, e, pt);
  }
  graph_matmul_heads (g, io, pt, d_o, dv, hq);

  /* dS = (dO·Vᵀ − softmax_sum) ∘ E · scale */
  dp = graph_virtual (g, CUDNN_DATA_FLOAT, b, hq, sq, skv);
  graph_matmul (g, d_o, vt, dp);
  ds = PW (g, CUDNN_POINTWISE_SUB, dp, softmax_sum);
  ds = PW (g, CUDNN_POINTWISE_MUL, ds, e);
  ds = PW (g, CUDNN_POINTWISE_MUL, ds, scale);

  /* dK = dSᵀ·Q */
  {
    gint64 dims[4] = { b, hq, skv, sq }, strides[4] = { hq * sq * skv, sq * skv, 1, skv };
    dst = graph_tensor (g, 0, io, dims, strides, FALSE);
    graph_reshape (g, ds, dst);
  }
  graph_matmul_heads (g, io, dst, q, dk, hq);

  /* dQ = dS·K, accumulated in f32 */
  kr = graph_tensor (g, 0, CUDNN_DATA_FLOAT, k->dims[T_K], k->strides[T_K], FALSE);
  graph_reshape (g, kt, kr);
  dq_accum = graph_real_f32 (g, UID_DQ_ACCUM, b, hq, sq, d);
  graph_matmul (g, ds, kr, dq_accum);
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

/* The first engine configuration of @mode's heuristics whose plan
 * finalizes with a workspace within @limit.  *n_tried counts them. */
static cudnnBackendDescriptor_t
choose_plan (Graph                    *g,
             cudnnHandle_t             handle,
             cudnnBackendDescriptor_t  op_graph,
             cudnnBackendHeurMode_t    mode,
             guint64                   limit,
             gint64                   *workspace,
             guint                    *n_tried)
{
  cudnnBackendDescriptor_t heur, cfgs[MAX_ENGINE_CONFIGS] = { NULL, }, chosen = NULL;
  gint64 count = 0, got = 0;
  cudnnStatus_t st;

  heur = graph_create (g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  graph_set (g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph);
  graph_set (g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  if (g->error != NULL)
    return NULL;
  /* A graph no engine supports fails here: not an error, no candidate. */
  if (cudnnBackendFinalize (heur) != CUDNN_STATUS_SUCCESS)
    return NULL;
  if (cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                0, &count, NULL) != CUDNN_STATUS_SUCCESS || count <= 0)
    return NULL;
  count = MIN (count, MAX_ENGINE_CONFIGS);
  for (gint64 i = 0; i < count; i++)
    if ((cfgs[i] = graph_create (g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) == NULL)
      return NULL;
  st = cudnnBackendGetAttribute (heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 count, &got, cfgs);
  if (!graph_ok (g, st, "cudnnBackendGetAttribute (ENGINEHEUR_RESULTS)"))
    return NULL;
  for (gint64 i = 0; i < MIN (got, count) && chosen == NULL; i++)
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
          chosen = plan;
          *workspace = size;
        }
      else
        cudnnBackendDestroyDescriptor (plan);
    }
  return chosen;
}

static SdpaPlan *
sdpa_plan_build (AtomrCudnnActor  *self,
                 SdpaRequest      *r,
                 GError          **error)
{
  const SdpaKey *k = &r->key;
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  guint64 limit = atomr_cudnn_actor_get_workspace_limit (self);
  size_t version = cudnnGetVersion ();
  Graph *g;
  SdpaPlan *plan = g_new0 (SdpaPlan, 1);
  cudnnBackendDescriptor_t op_graph;
  guint n_tried = 0;

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
  if (g->error == NULL)
    plan->plan = choose_plan (g, handle, op_graph, CUDNN_HEUR_MODE_A, limit, &plan->cudnn_workspace,
                              &n_tried);
  if (g->error == NULL && plan->plan == NULL)
    plan->plan = choose_plan (g, handle, op_graph, CUDNN_HEUR_MODE_FALLBACK, limit,
                              &plan->cudnn_workspace, &n_tried);
  if (g->error == NULL && plan->plan == NULL)
    {
      g_autofree gchar *d = describe (k);
      g_set_error (&g->error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN %zu: no engine runs %s (%s): %u engine configurations tried, none "
                   "finalized within the workspace limit of %" G_GUINT64_FORMAT " bytes",
                   version, r->opname, d, n_tried, limit);
    }
  if (g->error != NULL)
    {
      g_propagate_error (error, g->error);
      g_free (g);
      sdpa_plan_free (plan);
      return NULL;
    }
  g_free (g);

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
  return plan;
}

static gboolean
sdpa_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  SdpaRequest *r = atomr_op_get_data (op);
  cudnnHandle_t handle = atomr_cudnn_actor_get_handle (self);
  CUstream stream = atomr_op_get_cu_stream (op);
  SdpaPlan *plan;
  CUdeviceptr ws = 0;
  gint64 uids[16];
  void *ptrs[16];
  gint64 n = 0;
  void *ws_ptr;
  cudnnBackendDescriptor_t pack = NULL;
  cudnnStatus_t st;
  gboolean ok;

  if (atomr_op_is_host (op) || handle == NULL)
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
      plan = sdpa_plan_build (self, r, error);
      if (plan == NULL)
        return FALSE;
      atomr_cudnn_actor_insert_plan_internal (self, r->key_bytes, plan, sdpa_plan_free);
    }
  if (!atomr_cudnn_actor_reserve_workspace (self, stream, MAX (plan->workspace, 1), &ws_ptr, error))
    return FALSE;
  ws = (CUdeviceptr) (uintptr_t) ws_ptr;

  for (guint i = 0; i < N_T; i++)
    if (r->t[i] != NULL)
      {
        uids[n] = UID_Q + i;
        ptrs[n++] = (void *) (uintptr_t) atomr_tensor_get_ptr (r->t[i]);
      }
  uids[n] = UID_SCALE;
  ptrs[n++] = &r->scale;
  if (r->key.causal)
    {
      uids[n] = UID_NEG;
      ptrs[n++] = &r->neg;
    }
  if (r->key.backward)
    {
      uids[n] = UID_ONE;
      ptrs[n++] = &r->one;
      uids[n] = UID_SOFTMAX_SUM;
      ptrs[n++] = (void *) (uintptr_t) (ws + plan->softmax_sum_offset);
      uids[n] = UID_DQ_ACCUM;
      ptrs[n++] = (void *) (uintptr_t) (ws + plan->dq_accum_offset);
      if (plan->memset_dq_accum &&
          !atomr_cuda_check (ATOMR_CU->cuMemsetD8Async (ws + plan->dq_accum_offset, 0,
                                                        plan->dq_accum_bytes, stream),
                             "cuMemsetD8Async", error))
        return FALSE;
    }

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
      else
        ok = cudnn_ok (st, "cudnnBackendExecute", r->opname, error);
    }
  cudnnBackendDestroyDescriptor (pack);
  return ok;
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

static void
sdpa_common (AtomrCudnnActor     *self,
             gboolean             backward,
             const gchar         *opname,
             gpointer             tag,
             AtomrTensor        **t,
             gdouble              scale,
             gboolean             causal,
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

  memset (&r->key, 0, sizeof r->key);
  r->opname = opname;
  r->key.backward = backward;
  r->key.dtype = -1;
  r->key.causal = causal ? 1 : 0;
  for (guint i = 0; i < n_slots; i++)
    {
      Slot s = slots[i];
      if (s == T_STATS && !backward && t[s] == NULL)
        continue;           /* inference: no statistics */
      if (!check_operand (self, r, s, slot_names[s], t[s], &error))
        return atomr_op_fail (op, error);
    }
  r->key.has_stats = r->t[T_STATS] != NULL;
  if (!check_shapes (r, &error) || !check_scale (opname, scale, &error))
    return atomr_op_fail (op, error);

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
  r->key_bytes = g_bytes_new (&r->key, sizeof r->key);

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

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  sdpa_common (self, FALSE, "sdpa-fwd", atomr_cudnn_actor_sdpa_forward_async, t, scale, causal,
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

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  sdpa_common (self, TRUE, "sdpa-bwd", atomr_cudnn_actor_sdpa_backward_async, t, scale, causal,
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
            gdouble              scale,
            gboolean             causal,
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
    sdpa_common (self, backward, opname, tag, views, scale, causal, cancellable, callback, user_data);
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

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mha_common (self, FALSE, "mha-fwd", atomr_cudnn_actor_multi_head_attention_forward_async,
              n_heads, n_kv_heads, t, scale, causal, cancellable, callback, user_data);
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

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  mha_common (self, TRUE, "mha-bwd", atomr_cudnn_actor_multi_head_attention_backward_async,
              n_heads, n_kv_heads, t, scale, causal, cancellable, callback, user_data);
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
