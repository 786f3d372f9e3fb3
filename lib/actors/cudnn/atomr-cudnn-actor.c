/* atomr-cudnn-actor.c — cuDNN as an actor
 *
 * Every operation is one CudnnRequest: up to four views in fixed slots
 * (X, W, Y, DY: see Slot), the operation's parameters copied from its
 * parameter object, and a PlanKey.  Validation runs in the _async call;
 * the enqueue function (actor thread) looks the key up in the actor's plan
 * cache, builds the descriptors and picks the algorithm on a miss, and
 * calls cuDNN with the cached descriptors: the hot path creates nothing
 * and allocates nothing.  Convolutions build a backend execution plan
 * instead (one convolution operation) and run it with
 * cudnnBackendExecute; the legacy calls remain for requests the backend
 * refuses, for autotuning and when legacy-convolution is set.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "atomr-cudnn-table-private.h"

#include "actors/atomr-library-private.h"
#include "actors/cudnn/atomr-cudnn-actor.h"
#include "actors/cudnn/atomr-cudnn-private.h"
#include "actors/cudnn/atomr-cudnn-actor-private.h"
#include "actors/cudnn/atomr-cudnn-backend-private.h"
#include "actors/cudnn/atomr-cudnn-ext-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-tensor-private.h"

/**
 * AtomrCudnnActor:
 *
 * An actor that owns a cuDNN handle bound to its stream.
 *
 * Every operand is an [class@Atomr.Tensor] view whose logical order is N × C ×
 * spatial (N × C × H × W for 2-D work); its strides say how it is stored,
 * so NHWC data is an N × C × H × W view with strides (H·W·C, 1, W·C, C)
 * ([method@Atomr.Tensor.permute] of an N × H × W × C tensor).  Filters are K ×
 * C/groups × R × S views stored packed in either KCRS or KRSC order.
 * Shapes, strides, dtypes and aliasing are checked in the _async call;
 * a failed check is %ATOMR_ERROR_INVALID_ARGUMENT naming the operand and
 * the value, and nothing is enqueued.
 *
 * Descriptors and the chosen algorithm of each distinct request (shapes,
 * strides, dtype, parameters; for convolutions a backend execution plan,
 * see [property@Atomr.CudnnActor:legacy-convolution]) are kept in a bounded LRU plan cache
 * ([property@Atomr.CudnnActor:cache-capacity], with hit and miss counters).  The
 * workspace is one device allocation per actor that grows to the largest
 * size a chosen algorithm needs (never above
 * [property@Atomr.CudnnActor:workspace-limit]) and is reused by every call.
 *
 * Threads: _async calls may come from any thread; descriptors, the
 * workspace and the cache are used on the actor's thread only (the cache
 * counters are read under a lock from any thread).  Notifications of
 * [property@Atomr.CudnnActor:workspace-size] and [property@Atomr.CudnnActor:cache-size] are
 * emitted on the actor's thread.
 *
 * On the host test device there is no handle: requests are validated and
 * then answered with %ATOMR_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.2
 */

#define DEFAULT_WORKSPACE_LIMIT (G_GUINT64_CONSTANT (1) << 30)
#define DEFAULT_CACHE_CAPACITY  256
#define MAX_DIMS                ATOMR_TENSOR_MAX_DIMS

typedef enum {
  KIND_CONV_FWD,
  KIND_CONV_BWD_DATA,
  KIND_CONV_BWD_FILTER,
  KIND_ACT_FWD,
  KIND_ACT_BWD,
  KIND_SOFTMAX_FWD,
  KIND_SOFTMAX_BWD,
  KIND_POOL_FWD,
  KIND_POOL_BWD,
  KIND_BN_TRAIN,
  KIND_BN_INFER,
  KIND_BN_BWD,
  KIND_CONV_BIAS_ACT,
} Kind;

/* Batch-norm parameter operands (no descriptor of their own: they share
 * the one cuDNN derives from x). */
typedef enum {
  PARAM_SCALE,
  PARAM_BIAS,        /* dscale for the backward pass */
  PARAM_MEAN,        /* running (training), estimated (inference), dbias (backward) */
  PARAM_VAR,
  PARAM_SAVE_MEAN,
  PARAM_SAVE_INV_VAR,
  N_PARAMS
} Param;

/* Operand slots.  Convolutions: X (dx for backward data), W (the filter,
 * dw for backward filter), Y (dy for the backward passes).  Pointwise,
 * softmax and pooling: X, DX in slot W, Y, DY. */
typedef enum {
  SLOT_X,
  SLOT_W,
  SLOT_Y,
  SLOT_DY,
  N_SLOTS
} Slot;

/* Everything a plan depends on; zero-filled before use so that hashing
 * and comparing the bytes is exact. */
typedef struct {
  gint32  kind;
  gint32  dtype;
  gint32  mode;       /* activation / softmax / pooling mode, conv math */
  gint32  flag;       /* softmax: log; conv: filter is KRSC */
  gint32  n_dims[N_SLOTS];
  gint64  dims[N_SLOTS][MAX_DIMS];
  gint64  strides[N_SLOTS][MAX_DIMS];
  gint64  padding[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64  stride[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64  dilation[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64  window[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
  gint64  groups;
  gdouble coef;
  gint32  act;        /* fused convolution: the activation */
  gint32  has_z;      /* fused convolution: a residual (its view in slot DY) */
  /* Convolutions: which cuDNN API runs them (PATH_*).  The backend path
   * also depends on the views' pointer alignments (the tensors'
   * BYTE_ALIGNMENT) and on alpha and beta (attributes of the operation). */
  gint32  path;
  gint32  align[N_SLOTS];
  gdouble alpha, beta;
  gint64  align_bias;  /* fused convolution, backend path: the bias's */
} PlanKey;

/* How a convolution runs: a cached backend-API execution plan (one
 * convolution operation) executed with cudnnBackendExecute, or the legacy
 * cudnnConvolution* entry points (asked for, autotuned with
 * cudnnFind*Algorithm, or after the backend refused the request). */
enum {
  PATH_BACKEND,
  PATH_LEGACY,
};

typedef struct {
  PlanKey                      key;
  GList                        link;       /* in the LRU queue, data = plan */
  cudnnTensorDescriptor_t      td[N_SLOTS];
  cudnnFilterDescriptor_t      fd;
  cudnnConvolutionDescriptor_t cd;
  cudnnActivationDescriptor_t  ad;
  cudnnPoolingDescriptor_t     pd;
  cudnnActivationDescriptor_t  post_ad;    /* fused convolution: applied after it */
  cudnnTensorDescriptor_t      bd;         /* batch-norm parameters */
  AtomrCudnnBackendPlan       *bplan;      /* convolutions on the backend path */
  gboolean                     fell_back;  /* PATH_BACKEND asked, the legacy call runs */
  gchar                       *refusal;    /* then the trace detail: why */
  union { gfloat f; gdouble d; } scale_value;  /* fused, backend: UID_SCALE's value */
  gint                         algo;
  gsize                        workspace;
  /* Plans of operations in other files (atomr-cudnn-ext-private.h): the
   * key is kind -1 and the SHA-256 of ext_key, checked byte for byte. */
  GBytes                      *ext_key;
  gpointer                     ext;
  GDestroyNotify               ext_free;
} Plan;

typedef struct {
  const gchar  *opname;
  PlanKey       key;
  AtomrTensor  *t[N_SLOTS];       /* owned */
  AtomrTensor  *p[N_PARAMS];      /* owned, batch norm */
  gdouble       epsilon, momentum;
  gboolean      autotune;
  union { gfloat f; gdouble d; } alpha, beta;
  union { gfloat f; gdouble d; } one, zero;   /* fused convolution's second step */
} CudnnRequest;

struct _AtomrCudnnActor
{
  AtomrActor     parent_instance;

  cudnnHandle_t  handle;          /* actor thread */
  CUdeviceptr    workspace;       /* actor thread */
  CUdeviceptr    reserve;         /* actor thread: RNN reserve space */
  gsize          reserve_size;    /* actor thread */
  GBytes        *reserve_owner;   /* actor thread: what reserve holds */

  GMutex         lock;            /* the fields below */
  guint64        workspace_size;
  guint64        workspace_limit;
  GHashTable    *plans;           /* PlanKey → Plan (owned by the queue) */
  GQueue         lru;             /* most recent first */
  guint          capacity;
  guint64        hits, misses;
  gboolean       autotune;
  gboolean       conv_legacy;

  /* convolutions run, by path; variant packs the backend path built */
  gint           conv_backend_runs, conv_legacy_runs, conv_pack_builds;

  AtomrCudnnPlanCache *graph_plans;  /* backend-graph plans (own lock) */
  GHashTable          *kernels;      /* actor thread: name → AtomrKernel */

  AtomrCudnnDropoutState *dropout;   /* actor thread (atomr-cudnn-dropout.c) */
  guint64        dropout_seed;       /* lock */
  guint          dropout_generation; /* lock: bumped by every set_dropout_seed */
};

G_DEFINE_FINAL_TYPE (AtomrCudnnActor, atomr_cudnn_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_WORKSPACE_SIZE,
  PROP_WORKSPACE_LIMIT,
  PROP_CACHE_CAPACITY,
  PROP_CACHE_HITS,
  PROP_CACHE_MISSES,
  PROP_CACHE_SIZE,
  PROP_AUTOTUNE,
  PROP_DROPOUT_SEED,
  PROP_LEGACY_CONVOLUTION,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ------------------------------------------------------------------ */
/* Plans                                                                */

static guint
plan_key_hash (gconstpointer data)
{
  const guint8 *p = data;
  guint32 h = 2166136261u;

  for (gsize i = 0; i < sizeof (PlanKey); i++)
    h = (h ^ p[i]) * 16777619u;
  return h;
}

static gboolean
plan_key_equal (gconstpointer a,
                gconstpointer b)
{
  return memcmp (a, b, sizeof (PlanKey)) == 0;
}

static void
plan_free (Plan *plan)
{
  /* Descriptors exist only when cuDNN was loaded. */
  for (guint i = 0; i < N_SLOTS; i++)
    if (plan->td[i])
      cudnnDestroyTensorDescriptor (plan->td[i]);
  if (plan->fd)
    cudnnDestroyFilterDescriptor (plan->fd);
  if (plan->cd)
    cudnnDestroyConvolutionDescriptor (plan->cd);
  if (plan->ad)
    cudnnDestroyActivationDescriptor (plan->ad);
  if (plan->pd)
    cudnnDestroyPoolingDescriptor (plan->pd);
  if (plan->post_ad)
    cudnnDestroyActivationDescriptor (plan->post_ad);
  if (plan->bd)
    cudnnDestroyTensorDescriptor (plan->bd);
  atomr_cudnn_backend_plan_free (plan->bplan);
  if (plan->ext_free && plan->ext)
    plan->ext_free (plan->ext);
  g_clear_pointer (&plan->ext_key, g_bytes_unref);
  g_free (plan->refusal);
  g_free (plan);
}

/* Called with the lock held; returns the plans to free (outside it). */
static GList *
cache_trim_locked (AtomrCudnnActor *self,
                   guint            capacity)
{
  GList *evicted = NULL;

  while (self->lru.length > capacity)
    {
      GList *link = g_queue_pop_tail_link (&self->lru);
      Plan *plan = link->data;

      g_hash_table_remove (self->plans, &plan->key);
      evicted = g_list_prepend (evicted, plan);
    }
  return evicted;
}

static void
free_plans (GList *plans)
{
  g_list_free_full (plans, (GDestroyNotify) plan_free);
}

/* Unlinks the plans that may hold backend execution plans, finalized
 * against a handle the context rebuild destroys: convolutions on the
 * backend path and every plan of the other files (attention and graph
 * plans; RNN descriptors are rebuilt too, which costs only the rebuild).
 * Returns them, to free outside the lock. */
static GList *
drop_backend_plans (AtomrCudnnActor *self)
{
  GList *dropped = NULL, *l, *next;

  g_mutex_lock (&self->lock);
  for (l = self->lru.head; l != NULL; l = next)
    {
      Plan *plan = l->data;

      next = l->next;
      if (plan->bplan == NULL && plan->ext_key == NULL)
        continue;
      g_queue_unlink (&self->lru, &plan->link);
      g_hash_table_remove (self->plans, &plan->key);
      dropped = g_list_prepend (dropped, plan);
    }
  g_mutex_unlock (&self->lock);
  return dropped;
}

/* ------------------------------------------------------------------ */
/* Status mapping                                                       */

static gboolean
cudnn_check (cudnnStatus_t   status,
             const gchar    *call,
             const gchar    *opname,
             GError        **error)
{
  return atomr_cudnn_status_check (status, call, opname, error);
}

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

/* Compute type of a convolution: f32 for every floating dtype but f64. */
static cudnnDataType_t
cudnn_compute (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/* "x 32×256×56×56 (strides …), w …" for messages about a request. */
static gchar *
describe (const CudnnRequest *r)
{
  static const gchar *const names[N_SLOTS] = { "x", "w", "y", "dy" };
  GString *s = g_string_new (atomr_dtype_get_name (r->key.dtype));

  for (guint i = 0; i < N_SLOTS; i++)
    {
      if (r->key.n_dims[i] == 0)
        continue;
      g_string_append_printf (s, ", %s ", names[i]);
      for (gint d = 0; d < r->key.n_dims[i]; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? "×" : "", r->key.dims[i][d]);
      g_string_append (s, " strides (");
      for (gint d = 0; d < r->key.n_dims[i]; d++)
        g_string_append_printf (s, "%s%" G_GINT64_FORMAT, d ? ", " : "", r->key.strides[i][d]);
      g_string_append (s, ")");
    }
  return g_string_free (s, FALSE);
}

/* ------------------------------------------------------------------ */
/* Building a plan (actor thread, on a cache miss)                      */

static gboolean
make_tensor_desc (const PlanKey             *k,
                  Slot                       slot,
                  cudnnTensorDescriptor_t   *desc,
                  const gchar               *opname,
                  GError                   **error)
{
  int dims[MAX_DIMS], strides[MAX_DIMS];

  for (gint i = 0; i < k->n_dims[slot]; i++)
    {
      dims[i] = (int) k->dims[slot][i];
      strides[i] = (int) k->strides[slot][i];
    }
  return cudnn_check (cudnnCreateTensorDescriptor (desc), "cudnnCreateTensorDescriptor", opname, error) &&
         cudnn_check (cudnnSetTensorNdDescriptor (*desc, cudnn_dtype (k->dtype), k->n_dims[slot],
                                                  dims, strides),
                      "cudnnSetTensorNdDescriptor", opname, error);
}

/* The math type a convolution's descriptor starts with (see
 * choose_conv_algo()). */
static cudnnMathType_t
conv_math_type (const PlanKey *k)
{
  switch (k->dtype)
    {
    case ATOMR_DTYPE_F16:
    case ATOMR_DTYPE_BF16:
      return CUDNN_TENSOR_OP_MATH;
    case ATOMR_DTYPE_F32:
      return k->mode == ATOMR_CUDNN_MATH_FMA ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    default:
      return CUDNN_DEFAULT_MATH;
    }
}

static gboolean
choose_conv_algo (AtomrCudnnActor *self,
                  CudnnRequest    *r,
                  Plan            *plan,
                  guint64          limit,
                  GError         **error)
{
  enum { MAX_ALGOS = 16 };
  cudnnHandle_t h = self->handle;
  int n = 0;
  cudnnStatus_t st;
  const gchar *call;
  gint algos[MAX_ALGOS];
  cudnnStatus_t status[MAX_ALGOS];
  gsize memory[MAX_ALGOS];
  cudnnMathType_t math[MAX_ALGOS];

  /* The descriptor's math type bounds what the heuristics and the search
   * offer: with CUDNN_DEFAULT_MATH cuDNN 9 proposes no tensor-core
   * algorithm for f16/bf16 operands, and the best it returned for a
   * ResNet 3x3 layer ran at 30 TF/s (0.5 TF/s backward data) where the
   * tensor-core kernels run at 600-860 TF/s on an H100.  Halves ask for
   * tensor cores; f32 keeps cuDNN's default (TF32 on Ampere and later)
   * or plain FMA when the request says so; f64 has no tensor-core path. */
  if (!cudnn_check (cudnnSetConvolutionMathType (plan->cd, conv_math_type (&r->key)),
                    "cudnnSetConvolutionMathType", r->opname, error))
    return FALSE;

  switch (r->key.kind)
    {
    case KIND_CONV_FWD:
    case KIND_CONV_BIAS_ACT:
      {
        cudnnConvolutionFwdAlgoPerf_t perf[MAX_ALGOS];
        if (r->autotune)
          {
            call = "cudnnFindConvolutionForwardAlgorithm";
            st = cudnnFindConvolutionForwardAlgorithm (h, plan->td[SLOT_X], plan->fd, plan->cd,
                                                       plan->td[SLOT_Y], MAX_ALGOS, &n, perf);
          }
        else
          {
            call = "cudnnGetConvolutionForwardAlgorithm_v7";
            st = cudnnGetConvolutionForwardAlgorithm_v7 (h, plan->td[SLOT_X], plan->fd, plan->cd,
                                                         plan->td[SLOT_Y], MAX_ALGOS, &n, perf);
          }
        for (int i = 0; i < n; i++)
          {
            algos[i] = perf[i].algo;
            status[i] = perf[i].status;
            memory[i] = perf[i].memory;
            math[i] = perf[i].mathType;
          }
      }
      break;
    case KIND_CONV_BWD_DATA:
      {
        cudnnConvolutionBwdDataAlgoPerf_t perf[MAX_ALGOS];
        if (r->autotune)
          {
            call = "cudnnFindConvolutionBackwardDataAlgorithm";
            st = cudnnFindConvolutionBackwardDataAlgorithm (h, plan->fd, plan->td[SLOT_Y], plan->cd,
                                                            plan->td[SLOT_X], MAX_ALGOS, &n, perf);
          }
        else
          {
            call = "cudnnGetConvolutionBackwardDataAlgorithm_v7";
            st = cudnnGetConvolutionBackwardDataAlgorithm_v7 (h, plan->fd, plan->td[SLOT_Y], plan->cd,
                                                              plan->td[SLOT_X], MAX_ALGOS, &n, perf);
          }
        for (int i = 0; i < n; i++)
          {
            algos[i] = perf[i].algo;
            status[i] = perf[i].status;
            memory[i] = perf[i].memory;
            math[i] = perf[i].mathType;
          }
      }
      break;
    default:
      {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[MAX_ALGOS];
        if (r->autotune)
          {
            call = "cudnnFindConvolutionBackwardFilterAlgorithm";
            st = cudnnFindConvolutionBackwardFilterAlgorithm (h, plan->td[SLOT_X], plan->td[SLOT_Y],
                                                              plan->cd, plan->fd, MAX_ALGOS, &n, perf);
          }
        else
          {
            call = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
            st = cudnnGetConvolutionBackwardFilterAlgorithm_v7 (h, plan->td[SLOT_X], plan->td[SLOT_Y],
                                                                plan->cd, plan->fd, MAX_ALGOS, &n, perf);
          }
        for (int i = 0; i < n; i++)
          {
            algos[i] = perf[i].algo;
            status[i] = perf[i].status;
            memory[i] = perf[i].memory;
            math[i] = perf[i].mathType;
          }
      }
      break;
    }
  if (!cudnn_check (st, call, r->opname, error))
    return FALSE;

  /* Results come best first: take the first that works within the limit
   * and, for FMA math, converts nothing to tensor-core precision. */
  for (int i = 0; i < n && i < MAX_ALGOS; i++)
    {
      gboolean fma = r->key.mode == ATOMR_CUDNN_MATH_FMA && r->key.dtype == ATOMR_DTYPE_F32;
      gsize size = 0;

      if (status[i] != CUDNN_STATUS_SUCCESS || memory[i] > limit)
        continue;
      /* FMA math (f32 only: halves always use tensor cores, f64 never
       * does) takes no algorithm that converts to a tensor-core format. */
      if (fma && math[i] != CUDNN_FMA_MATH && math[i] != CUDNN_DEFAULT_MATH)
        continue;
      if (fma)
        math[i] = CUDNN_FMA_MATH;
      if (!cudnn_check (cudnnSetConvolutionMathType (plan->cd, math[i]),
                        "cudnnSetConvolutionMathType", r->opname, error))
        return FALSE;
      /* The workspace the call itself will ask for, with the math type
       * now set (the heuristic's figure is an estimate). */
      switch (r->key.kind)
        {
        case KIND_CONV_FWD:
        case KIND_CONV_BIAS_ACT:
          call = "cudnnGetConvolutionForwardWorkspaceSize";
          st = cudnnGetConvolutionForwardWorkspaceSize (h, plan->td[SLOT_X], plan->fd, plan->cd,
                                                        plan->td[SLOT_Y], algos[i], &size);
          break;
        case KIND_CONV_BWD_DATA:
          call = "cudnnGetConvolutionBackwardDataWorkspaceSize";
          st = cudnnGetConvolutionBackwardDataWorkspaceSize (h, plan->fd, plan->td[SLOT_Y], plan->cd,
                                                             plan->td[SLOT_X], algos[i], &size);
          break;
        default:
          call = "cudnnGetConvolutionBackwardFilterWorkspaceSize";
          st = cudnnGetConvolutionBackwardFilterWorkspaceSize (h, plan->td[SLOT_X], plan->td[SLOT_Y],
                                                               plan->cd, plan->fd, algos[i], &size);
          break;
        }
      if (st != CUDNN_STATUS_SUCCESS || MAX (size, memory[i]) > limit)
        continue;
      plan->algo = algos[i];
      plan->workspace = MAX (size, memory[i]);
      return TRUE;
    }

  {
    g_autofree gchar *d = describe (r);
    g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                 "cuDNN: no algorithm for %s (%s) works within the workspace limit of %"
                 G_GUINT64_FORMAT " bytes (%d candidates)", r->opname, d, limit, n);
  }
  return FALSE;
}

static const cudnnActivationMode_t activation_modes[] = {
  CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_TANH,
  CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_SWISH,
  CUDNN_ACTIVATION_IDENTITY,
};

/* The rest of a fused convolution's plan: the bias descriptor (1 × K ×
 * 1 × 1), the residual's, and the activation.  cudnnConvolutionBiasActivationForward
 * applies ReLU itself; any other activation is applied after it, in place
 * (the fused call then runs with IDENTITY, which takes the implicit
 * precomputed GEMM algorithm only). */
static gboolean
plan_build_fused (AtomrCudnnActor *self,
                  CudnnRequest    *r,
                  Plan            *plan,
                  guint64          limit,
                  GError         **error)
{
  const PlanKey *k = &r->key;
  int dims[MAX_DIMS], strides[MAX_DIMS];
  gint n = k->n_dims[SLOT_Y];
  gboolean relu = k->act == ATOMR_ACTIVATION_RELU;

  for (gint i = 0; i < n; i++)
    {
      dims[i] = i == 1 ? (int) k->dims[SLOT_Y][1] : 1;
      strides[i] = i == 0 ? (int) k->dims[SLOT_Y][1] : 1;
    }
  if (k->has_z && !make_tensor_desc (k, SLOT_DY, &plan->td[SLOT_DY], r->opname, error))
    return FALSE;
  if (!cudnn_check (cudnnCreateTensorDescriptor (&plan->bd), "cudnnCreateTensorDescriptor", r->opname, error) ||
      !cudnn_check (cudnnSetTensorNdDescriptor (plan->bd, cudnn_dtype (k->dtype), n, dims, strides),
                    "cudnnSetTensorNdDescriptor", r->opname, error) ||
      !cudnn_check (cudnnCreateActivationDescriptor (&plan->ad), "cudnnCreateActivationDescriptor",
                    r->opname, error) ||
      !cudnn_check (cudnnSetActivationDescriptor (plan->ad, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
                                                  CUDNN_NOT_PROPAGATE_NAN, 0.0),
                    "cudnnSetActivationDescriptor", r->opname, error))
    return FALSE;
  if (!relu)
    {
      gsize size = 0;

      plan->algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      if (!cudnn_check (cudnnGetConvolutionForwardWorkspaceSize (self->handle, plan->td[SLOT_X], plan->fd,
                                                                 plan->cd, plan->td[SLOT_Y], plan->algo, &size),
                        "cudnnGetConvolutionForwardWorkspaceSize (implicit precomputed GEMM)",
                        r->opname, error))
        return FALSE;
      if (size > limit)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "cuDNN: %s without ReLU runs the implicit precomputed GEMM algorithm, which "
                       "needs %" G_GSIZE_FORMAT " bytes of workspace (limit %" G_GUINT64_FORMAT ")",
                       r->opname, size, limit);
          return FALSE;
        }
      plan->workspace = size;
    }
  if (!relu && k->act != ATOMR_ACTIVATION_IDENTITY)
    {
      if (!cudnn_check (cudnnCreateActivationDescriptor (&plan->post_ad), "cudnnCreateActivationDescriptor",
                        r->opname, error) ||
          !cudnn_check (cudnnSetActivationDescriptor (plan->post_ad, activation_modes[k->act],
                                                      CUDNN_NOT_PROPAGATE_NAN,
                                                      k->act == ATOMR_ACTIVATION_SWISH ? 0.0 : k->coef),
                        "cudnnSetActivationDescriptor", r->opname, error))
        return FALSE;
      if (k->act == ATOMR_ACTIVATION_SWISH &&
          !cudnn_check (cudnnSetActivationDescriptorSwishBeta (plan->post_ad, k->coef),
                        "cudnnSetActivationDescriptorSwishBeta", r->opname, error))
        return FALSE;
    }
  return TRUE;
}

/* Tensor ids of the backend graphs: an operand's is its slot + 1; the
 * fused convolution's bias and its virtual intermediates follow. */
#define UID_BIAS      (N_SLOTS + 1)
#define UID_V_CONV    (N_SLOTS + 2)   /* alpha · conv (x, w) */
#define UID_V_RESID   (N_SLOTS + 3)   /* + beta · z */
#define UID_V_BIAS    (N_SLOTS + 4)   /* + bias */
#define UID_SCALE     (N_SLOTS + 5)   /* alpha, by value (no residual, alpha ≠ 1) */
#define UID_V_SCALED  (N_SLOTS + 6)   /* alpha · conv (x, w) */

/* The fused convolution's activations as pointwise modes, in
 * AtomrActivationMode's order (clipped ReLU is RELU_FWD with an upper
 * clip; identity adds no node). */
static const cudnnPointwiseMode_t fused_pointwise_modes[] = {
  CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_RELU_FWD, CUDNN_POINTWISE_TANH_FWD,
  CUDNN_POINTWISE_RELU_FWD, CUDNN_POINTWISE_ELU_FWD, CUDNN_POINTWISE_SWISH_FWD,
  CUDNN_POINTWISE_IDENTITY,
};

/* The rest of the fused convolution's graph, after the convolution wrote
 * UID_V_CONV: [+ beta · z] + bias, then the activation into y. */
static gboolean
fused_backend_nodes (AtomrCudnnBackendGraph *g,
                     const PlanKey          *k,
                     GError                **error)
{
  cudnnDataType_t dtype = cudnn_dtype (k->dtype), compute = cudnn_compute (k->dtype);
  gint n = k->n_dims[SLOT_Y];
  gint64 bdims[MAX_DIMS], bstrides[MAX_DIMS], cur = UID_V_CONV;
  gboolean identity = k->act == ATOMR_ACTIVATION_IDENTITY;
  /* alpha scales the convolution in the first pointwise node: cuDNN's
   * fusion engines take a convolution operation only with alpha 1, beta 0 */
  gdouble scale = k->alpha;

  /* a clip at or below 0 is not what RELU_FWD's upper clip means */
  if (k->act == ATOMR_ACTIVATION_CLIPPED_RELU && !(k->coef > 0.0))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN graph for conv-bias-act: a clipped ReLU with a clip of %g", k->coef);
      return FALSE;
    }
  if (k->has_z)
    {
      if (atomr_cudnn_backend_graph_add_tensor_full (g, SLOT_DY + 1, dtype, k->n_dims[SLOT_DY], k->dims[SLOT_DY],
                                                     k->strides[SLOT_DY], k->align[SLOT_DY], 0, error) == NULL ||
          atomr_cudnn_backend_graph_add_tensor_full (g, UID_V_RESID, compute, n, k->dims[SLOT_Y],
                                                     k->strides[SLOT_Y], 16, ATOMR_CUDNN_TENSOR_VIRTUAL,
                                                     error) == NULL ||
          !atomr_cudnn_backend_graph_add_pointwise_full (g, CUDNN_POINTWISE_ADD, compute, cur, SLOT_DY + 1,
                                                         UID_V_RESID, scale, k->beta, 0.0, error))
        return FALSE;
      cur = UID_V_RESID;
      scale = 1.0;
    }
  else if (scale != 1.0)
    {
      /* alpha on the bias's addition (its ALPHA1) leaves cuDNN 9 without
       * an engine; a multiplication by alpha as a by-value scalar (the
       * plan's scale_value) fuses */
      gint64 ones[MAX_DIMS];

      for (gint i = 0; i < n; i++)
        ones[i] = 1;
      if (atomr_cudnn_backend_graph_add_tensor (g, UID_SCALE, compute, n, ones, ones, ATOMR_CUDNN_TENSOR_BY_VALUE,
                                                error) == NULL ||
          atomr_cudnn_backend_graph_add_tensor_full (g, UID_V_SCALED, compute, n, k->dims[SLOT_Y],
                                                     k->strides[SLOT_Y], 16, ATOMR_CUDNN_TENSOR_VIRTUAL,
                                                     error) == NULL ||
          !atomr_cudnn_backend_graph_add_pointwise (g, CUDNN_POINTWISE_MUL, compute, cur, UID_SCALE, UID_V_SCALED,
                                                    error))
        return FALSE;
      cur = UID_V_SCALED;
      scale = 1.0;
    }
  /* the bias: 1 × K × 1 …, K packed elements */
  for (gint i = 0; i < n; i++)
    {
      bdims[i] = i == 1 ? k->dims[SLOT_Y][1] : 1;
      bstrides[i] = i == 1 ? 1 : k->dims[SLOT_Y][1];
    }
  if (atomr_cudnn_backend_graph_add_tensor_full (g, UID_BIAS, dtype, n, bdims, bstrides, k->align_bias, 0,
                                                 error) == NULL ||
      (!identity &&
       atomr_cudnn_backend_graph_add_tensor_full (g, UID_V_BIAS, compute, n, k->dims[SLOT_Y], k->strides[SLOT_Y],
                                                  16, ATOMR_CUDNN_TENSOR_VIRTUAL, error) == NULL) ||
      !atomr_cudnn_backend_graph_add_pointwise_full (g, CUDNN_POINTWISE_ADD, compute, cur, UID_BIAS,
                                                     identity ? SLOT_Y + 1 : UID_V_BIAS, scale, 1.0, 0.0, error))
    return FALSE;
  if (identity)
    return TRUE;
  return atomr_cudnn_backend_graph_add_pointwise_full (g, fused_pointwise_modes[k->act], compute, UID_V_BIAS, -1,
                                                       SLOT_Y + 1, 1.0, 1.0,
                                                       k->act == ATOMR_ACTIVATION_RELU ? 0.0 : k->coef, error);
}

/* The backend graph of one convolution operation on @r's operands (uids:
 * slot + 1), every descriptor finalized (no handle needed yet).  Alpha
 * and beta are attributes of the operation.  The fused convolution's
 * convolution writes a virtual f32 (f64) tensor that its pointwise nodes
 * take to y (fused_backend_nodes()). */
static AtomrCudnnBackendGraph *
conv_backend_graph (CudnnRequest  *r,
                    GError       **error)
{
  const PlanKey *k = &r->key;
  gboolean fused = k->kind == KIND_CONV_BIAS_ACT;
  guint direction = fused || k->kind == KIND_CONV_FWD ? 0 : k->kind == KIND_CONV_BWD_DATA ? 1 : 2;
  g_autoptr(AtomrCudnnBackendGraph) g = atomr_cudnn_backend_graph_new (r->opname);
  cudnnDataType_t dtype = cudnn_dtype (k->dtype), compute = cudnn_compute (k->dtype);
  gint64 n_spatial = k->n_dims[SLOT_X] - 2, wstrides[MAX_DIMS], acc = 1;
  const Slot slots[] = { SLOT_X, SLOT_W, SLOT_Y };
  gint nw = k->n_dims[SLOT_W];

  /* the filter is packed KCRS or KRSC (check_conv()): strides from that */
  if (k->flag)
    {
      wstrides[1] = 1;
      acc = k->dims[SLOT_W][1];
      for (gint i = nw - 1; i >= 2; i--)
        {
          wstrides[i] = acc;
          acc *= k->dims[SLOT_W][i];
        }
      wstrides[0] = acc;
    }
  else
    for (gint i = nw - 1; i >= 0; i--)
      {
        wstrides[i] = acc;
        acc *= k->dims[SLOT_W][i];
      }
  for (guint i = 0; i < G_N_ELEMENTS (slots); i++)
    if (atomr_cudnn_backend_graph_add_tensor_full (g, slots[i] + 1, dtype, k->n_dims[slots[i]],
                                                   k->dims[slots[i]],
                                                   slots[i] == SLOT_W ? wstrides : k->strides[slots[i]],
                                                   k->align[slots[i]], 0, error) == NULL)
      return NULL;
  if (fused &&
      atomr_cudnn_backend_graph_add_tensor_full (g, UID_V_CONV, compute, k->n_dims[SLOT_Y], k->dims[SLOT_Y],
                                                 k->strides[SLOT_Y], 16, ATOMR_CUDNN_TENSOR_VIRTUAL,
                                                 error) == NULL)
    return NULL;
  /* the fused convolution's alpha and beta scale in its pointwise nodes */
  if (!atomr_cudnn_backend_graph_add_convolution (g, direction, compute, n_spatial, k->padding, k->stride,
                                                  k->dilation, SLOT_X + 1, SLOT_W + 1,
                                                  fused ? UID_V_CONV : SLOT_Y + 1, fused ? 1.0 : k->alpha,
                                                  fused ? 0.0 : k->beta, error))
    return NULL;
  if (fused && !fused_backend_nodes (g, k, error))
    return NULL;
  return g_steal_pointer (&g);
}

/* @r's graph and its execution plan: heuristics mode A, then the fallback
 * list, the first configuration that finalizes within @limit; FMA math on
 * f32 excludes tensor-core engines (as the legacy path's CUDNN_FMA_MATH
 * does). */
static AtomrCudnnBackendPlan *
conv_backend_plan (AtomrCudnnActor *self,
                   CudnnRequest    *r,
                   guint64          limit,
                   GError         **error)
{
  g_autoptr(AtomrCudnnBackendGraph) g = conv_backend_graph (r, error);

  if (g == NULL)
    return NULL;
  return atomr_cudnn_backend_graph_build_plan_full (g, self->handle, limit, 0,
                                                    r->key.dtype == ATOMR_DTYPE_F32 &&
                                                    r->key.mode == ATOMR_CUDNN_MATH_FMA
                                                      ? ATOMR_CUDNN_PLAN_NO_TENSOR_CORE : 0,
                                                    error);
}

static Plan *
plan_build (AtomrCudnnActor *self,
            CudnnRequest    *r,
            GError         **error)
{
  const PlanKey *k = &r->key;
  Plan *plan = g_new0 (Plan, 1);
  guint64 limit;

  plan->key = *k;
  plan->link.data = plan;

  switch (k->kind)
    {
    case KIND_CONV_FWD:
    case KIND_CONV_BWD_DATA:
    case KIND_CONV_BWD_FILTER:
    case KIND_CONV_BIAS_ACT:
      {
        int fdims[MAX_DIMS], pad[ATOMR_CUDNN_MAX_SPATIAL_DIMS], str[ATOMR_CUDNN_MAX_SPATIAL_DIMS],
            dil[ATOMR_CUDNN_MAX_SPATIAL_DIMS];
        gint n_spatial = k->n_dims[SLOT_X] - 2;

        g_mutex_lock (&self->lock);
        limit = self->workspace_limit;
        g_mutex_unlock (&self->lock);
        if (k->path == PATH_BACKEND)
          {
            g_autoptr(GError) refusal = NULL;

            plan->bplan = conv_backend_plan (self, r, limit, &refusal);
            if (k->dtype == ATOMR_DTYPE_F64)
              plan->scale_value.d = k->alpha;
            else
              plan->scale_value.f = (gfloat) k->alpha;
            if (plan->bplan != NULL)
              {
                plan->workspace = atomr_cudnn_backend_plan_get_workspace_size (plan->bplan);
                g_debug ("cuDNN: %s: backend plan, engine %" G_GINT64_FORMAT ", workspace %" G_GSIZE_FORMAT
                         " bytes", r->opname, atomr_cudnn_backend_plan_get_engine (plan->bplan),
                         plan->workspace);
                break;
              }
            /* Whatever the backend refused (no engine for this request,
             * an attribute this cuDNN does not take), the legacy entry
             * point may still run it; its own refusal is the error. */
            g_debug ("cuDNN: %s: the backend refused the request (%s); the legacy entry point runs it",
                     r->opname, refusal->message);
            plan->fell_back = TRUE;
            plan->refusal = g_strdup_printf ("legacy (backend refused: %s)", refusal->message);
          }

        for (gint i = 0; i < k->n_dims[SLOT_W]; i++)
          fdims[i] = (int) k->dims[SLOT_W][i];
        for (gint i = 0; i < n_spatial; i++)
          {
            pad[i] = (int) k->padding[i];
            str[i] = (int) k->stride[i];
            dil[i] = (int) k->dilation[i];
          }
        if (!make_tensor_desc (k, SLOT_X, &plan->td[SLOT_X], r->opname, error) ||
            !make_tensor_desc (k, SLOT_Y, &plan->td[SLOT_Y], r->opname, error) ||
            !cudnn_check (cudnnCreateFilterDescriptor (&plan->fd), "cudnnCreateFilterDescriptor",
                          r->opname, error) ||
            !cudnn_check (cudnnSetFilterNdDescriptor (plan->fd, cudnn_dtype (k->dtype),
                                                      k->flag ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                      k->n_dims[SLOT_W], fdims),
                          "cudnnSetFilterNdDescriptor", r->opname, error) ||
            !cudnn_check (cudnnCreateConvolutionDescriptor (&plan->cd),
                          "cudnnCreateConvolutionDescriptor", r->opname, error) ||
            !cudnn_check (cudnnSetConvolutionNdDescriptor (plan->cd, n_spatial, pad, str, dil,
                                                           CUDNN_CROSS_CORRELATION,
                                                           cudnn_compute (k->dtype)),
                          "cudnnSetConvolutionNdDescriptor", r->opname, error) ||
            !cudnn_check (cudnnSetConvolutionGroupCount (plan->cd, (int) k->groups),
                          "cudnnSetConvolutionGroupCount", r->opname, error))
          goto fail;
        if (!choose_conv_algo (self, r, plan, limit, error))
          goto fail;
        if (k->kind == KIND_CONV_BIAS_ACT && !plan_build_fused (self, r, plan, limit, error))
          goto fail;
      }
      break;

    case KIND_ACT_FWD:
    case KIND_ACT_BWD:
      {
        static const cudnnActivationMode_t modes[] = {
          CUDNN_ACTIVATION_SIGMOID, CUDNN_ACTIVATION_RELU, CUDNN_ACTIVATION_TANH,
          CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_ACTIVATION_ELU, CUDNN_ACTIVATION_SWISH,
        };
        for (guint i = 0; i < N_SLOTS; i++)
          if (k->n_dims[i] && !make_tensor_desc (k, i, &plan->td[i], r->opname, error))
            goto fail;
        if (!cudnn_check (cudnnCreateActivationDescriptor (&plan->ad),
                          "cudnnCreateActivationDescriptor", r->opname, error) ||
            !cudnn_check (cudnnSetActivationDescriptor (plan->ad, modes[k->mode], CUDNN_NOT_PROPAGATE_NAN,
                                                        k->mode == ATOMR_ACTIVATION_SWISH ? 0.0 : k->coef),
                          "cudnnSetActivationDescriptor", r->opname, error))
          goto fail;
        if (k->mode == ATOMR_ACTIVATION_SWISH &&
            !cudnn_check (cudnnSetActivationDescriptorSwishBeta (plan->ad, k->coef),
                          "cudnnSetActivationDescriptorSwishBeta", r->opname, error))
          goto fail;
      }
      break;

    case KIND_POOL_FWD:
    case KIND_POOL_BWD:
      {
        static const cudnnPoolingMode_t modes[] = {
          CUDNN_POOLING_MAX, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
          CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
        };
        gint n_spatial = k->n_dims[SLOT_X] - 2;
        int win[ATOMR_CUDNN_MAX_SPATIAL_DIMS], pad[ATOMR_CUDNN_MAX_SPATIAL_DIMS],
            str[ATOMR_CUDNN_MAX_SPATIAL_DIMS];

        for (gint i = 0; i < n_spatial; i++)
          {
            win[i] = (int) k->window[i];
            pad[i] = (int) k->padding[i];
            str[i] = (int) k->stride[i];
          }

        for (guint i = 0; i < N_SLOTS; i++)
          if (k->n_dims[i] && !make_tensor_desc (k, i, &plan->td[i], r->opname, error))
            goto fail;
        if (!cudnn_check (cudnnCreatePoolingDescriptor (&plan->pd),
                          "cudnnCreatePoolingDescriptor", r->opname, error) ||
            !cudnn_check (cudnnSetPoolingNdDescriptor (plan->pd, modes[k->mode], CUDNN_NOT_PROPAGATE_NAN,
                                                       n_spatial, win, pad, str),
                          "cudnnSetPoolingNdDescriptor", r->opname, error))
          goto fail;
      }
      break;

    case KIND_BN_TRAIN:
    case KIND_BN_INFER:
    case KIND_BN_BWD:
      for (guint i = 0; i < N_SLOTS; i++)
        if (k->n_dims[i] && !make_tensor_desc (k, i, &plan->td[i], r->opname, error))
          goto fail;
      if (!cudnn_check (cudnnCreateTensorDescriptor (&plan->bd), "cudnnCreateTensorDescriptor",
                        r->opname, error) ||
          !cudnn_check (cudnnDeriveBNTensorDescriptor (plan->bd, plan->td[SLOT_X],
                                                       k->mode == ATOMR_BATCH_NORM_SPATIAL
                                                         ? CUDNN_BATCHNORM_SPATIAL
                                                         : CUDNN_BATCHNORM_PER_ACTIVATION),
                        "cudnnDeriveBNTensorDescriptor", r->opname, error))
        goto fail;
      break;

    default:
      for (guint i = 0; i < N_SLOTS; i++)
        if (k->n_dims[i] && !make_tensor_desc (k, i, &plan->td[i], r->opname, error))
          goto fail;
      break;
    }
  return plan;

fail:
  plan_free (plan);
  return NULL;
}

/* The plan of @r: from the cache, or built and cached. */
static Plan *
plan_get (AtomrCudnnActor *self,
          CudnnRequest    *r,
          GError         **error)
{
  Plan *plan;
  GList *evicted;

  g_mutex_lock (&self->lock);
  plan = g_hash_table_lookup (self->plans, &r->key);
  if (plan != NULL)
    {
      self->hits++;
      g_queue_unlink (&self->lru, &plan->link);
      g_queue_push_head_link (&self->lru, &plan->link);
      g_mutex_unlock (&self->lock);
      return plan;
    }
  self->misses++;
  g_mutex_unlock (&self->lock);

  plan = plan_build (self, r, error);
  if (plan == NULL)
    return NULL;

  g_mutex_lock (&self->lock);
  g_queue_push_head_link (&self->lru, &plan->link);
  g_hash_table_insert (self->plans, &plan->key, plan);
  /* keep at least the plan in hand, whatever the capacity */
  evicted = cache_trim_locked (self, MAX (self->capacity, 1));
  g_mutex_unlock (&self->lock);
  free_plans (evicted);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_SIZE]);
  return plan;
}

/* Grows the workspace to @size (actor thread).  Stream-ordered: work
 * already enqueued with the old allocation finishes before it is freed. */
static gboolean
workspace_reserve (AtomrCudnnActor *self,
                   CUstream         stream,
                   gsize            size,
                   GError         **error)
{
  CUdeviceptr ptr = 0;

  if (size <= self->workspace_size && (self->workspace != 0 || size == 0))
    return TRUE;
  if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&ptr, size, stream), "cuMemAllocAsync", error))
    return FALSE;
  if (self->workspace)
    ATOMR_CU->cuMemFreeAsync (self->workspace, stream);
  self->workspace = ptr;
  g_mutex_lock (&self->lock);
  self->workspace_size = size;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE_SIZE]);
  return TRUE;
}

#define PTR(slot) ((void *) (uintptr_t) atomr_tensor_get_ptr (r->t[slot]))
#define PP(i)     (r->p[i] ? (void *) (uintptr_t) atomr_tensor_get_ptr (r->p[i]) : NULL)
#define BN_MODE   (r->key.mode == ATOMR_BATCH_NORM_SPATIAL ? CUDNN_BATCHNORM_SPATIAL \
                                                           : CUDNN_BATCHNORM_PER_ACTIVATION)

static gboolean
cudnn_enqueue (AtomrOp  *op,
               GError  **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (atomr_op_get_actor (op));
  CudnnRequest *r = atomr_op_get_data (op);
  cudnnHandle_t h = self->handle;
  const void *alpha = &r->alpha, *beta = &r->beta;
  void *ws;
  Plan *plan;
  cudnnStatus_t st;
  const gchar *call;

  if (atomr_op_is_host (op) || h == NULL)
    {
      g_autofree gchar *d = describe (r);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s (%s) needs a CUDA device; the host test device has no cuDNN",
                   r->opname, d);
      return FALSE;
    }

  plan = plan_get (self, r, error);
  if (plan == NULL)
    return FALSE;
  if (!workspace_reserve (self, atomr_op_get_cu_stream (op), plan->workspace, error))
    return FALSE;
  ws = (void *) (uintptr_t) self->workspace;

  if (plan->bplan != NULL)
    {
      /* the fused convolution adds the bias, then z when there is one */
      gint64 uids[5] = { SLOT_X + 1, SLOT_W + 1, SLOT_Y + 1 };
      void *ptrs[5] = { PTR (SLOT_X), PTR (SLOT_W), PTR (SLOT_Y) };
      guint n = 3;
      guint64 before = 0, after = 0;

      if (r->key.kind == KIND_CONV_BIAS_ACT)
        {
          uids[n] = UID_BIAS;
          ptrs[n++] = PP (PARAM_SCALE);
          if (r->key.has_z)
            {
              uids[n] = SLOT_DY + 1;
              ptrs[n++] = PTR (SLOT_DY);
            }
          else if (r->key.alpha != 1.0)
            {
              /* by value: the plan's copy, so that the pack is reused */
              uids[n] = UID_SCALE;
              ptrs[n++] = &plan->scale_value;
            }
        }
      atomr_cudnn_backend_plan_get_pack_counts (plan->bplan, &before, NULL);
      if (!atomr_cudnn_backend_plan_execute_device (plan->bplan, h, n, uids, ptrs, ws, error))
        {
          g_autofree gchar *d = describe (r);
          g_prefix_error (error, "%s (%s, backend plan): ", r->opname, d);
          return FALSE;
        }
      atomr_cudnn_backend_plan_get_pack_counts (plan->bplan, &after, NULL);
      g_atomic_int_inc (&self->conv_backend_runs);
      if (after != before)
        g_atomic_int_inc (&self->conv_pack_builds);
      return TRUE;
    }
  if (r->key.kind == KIND_CONV_FWD || r->key.kind == KIND_CONV_BWD_DATA || r->key.kind == KIND_CONV_BWD_FILTER ||
      r->key.kind == KIND_CONV_BIAS_ACT)
    {
      g_atomic_int_inc (&self->conv_legacy_runs);
      /* the request said "backend" before it was submitted */
      if (plan->fell_back)
        atomr_op_set_detail (op, plan->refusal);
    }

  switch (r->key.kind)
    {
    case KIND_CONV_FWD:
      call = "cudnnConvolutionForward";
      st = cudnnConvolutionForward (h, alpha, plan->td[SLOT_X], PTR (SLOT_X), plan->fd, PTR (SLOT_W),
                                    plan->cd, plan->algo, ws, plan->workspace, beta,
                                    plan->td[SLOT_Y], PTR (SLOT_Y));
      break;
    case KIND_CONV_BWD_DATA:
      call = "cudnnConvolutionBackwardData";
      st = cudnnConvolutionBackwardData (h, alpha, plan->fd, PTR (SLOT_W), plan->td[SLOT_Y], PTR (SLOT_Y),
                                         plan->cd, plan->algo, ws, plan->workspace, beta,
                                         plan->td[SLOT_X], PTR (SLOT_X));
      break;
    case KIND_CONV_BWD_FILTER:
      call = "cudnnConvolutionBackwardFilter";
      st = cudnnConvolutionBackwardFilter (h, alpha, plan->td[SLOT_X], PTR (SLOT_X), plan->td[SLOT_Y],
                                           PTR (SLOT_Y), plan->cd, plan->algo, ws, plan->workspace,
                                           beta, plan->fd, PTR (SLOT_W));
      break;
    case KIND_CONV_BIAS_ACT:
      {
        /* no residual: z is y with weight 0 (cuDNN's documented idiom) */
        cudnnTensorDescriptor_t zd = r->key.has_z ? plan->td[SLOT_DY] : plan->td[SLOT_Y];
        void *z = r->key.has_z ? PTR (SLOT_DY) : PTR (SLOT_Y);

        call = "cudnnConvolutionBiasActivationForward";
        st = cudnnConvolutionBiasActivationForward (h, alpha, plan->td[SLOT_X], PTR (SLOT_X), plan->fd,
                                                    PTR (SLOT_W), plan->cd, plan->algo, ws, plan->workspace,
                                                    beta, zd, z, plan->bd, PP (PARAM_SCALE), plan->ad,
                                                    plan->td[SLOT_Y], PTR (SLOT_Y));
        if (st == CUDNN_STATUS_SUCCESS && plan->post_ad != NULL)
          {
            /* in place, which cuDNN allows for activations */
            call = "cudnnActivationForward (after the fused convolution)";
            st = cudnnActivationForward (h, plan->post_ad, &r->one, plan->td[SLOT_Y], PTR (SLOT_Y),
                                         &r->zero, plan->td[SLOT_Y], PTR (SLOT_Y));
          }
      }
      break;
    case KIND_ACT_FWD:
      call = "cudnnActivationForward";
      st = cudnnActivationForward (h, plan->ad, alpha, plan->td[SLOT_X], PTR (SLOT_X), beta,
                                   plan->td[SLOT_Y], PTR (SLOT_Y));
      break;
    case KIND_ACT_BWD:
      call = "cudnnActivationBackward";
      st = cudnnActivationBackward (h, plan->ad, alpha, plan->td[SLOT_Y], PTR (SLOT_Y),
                                    plan->td[SLOT_DY], PTR (SLOT_DY), plan->td[SLOT_X], PTR (SLOT_X),
                                    beta, plan->td[SLOT_W], PTR (SLOT_W));
      break;
    case KIND_SOFTMAX_FWD:
      call = "cudnnSoftmaxForward";
      st = cudnnSoftmaxForward (h, r->key.flag ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                r->key.mode == ATOMR_SOFTMAX_CHANNEL ? CUDNN_SOFTMAX_MODE_CHANNEL
                                                                     : CUDNN_SOFTMAX_MODE_INSTANCE,
                                alpha, plan->td[SLOT_X], PTR (SLOT_X), beta, plan->td[SLOT_Y], PTR (SLOT_Y));
      break;
    case KIND_SOFTMAX_BWD:
      call = "cudnnSoftmaxBackward";
      st = cudnnSoftmaxBackward (h, r->key.flag ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE,
                                 r->key.mode == ATOMR_SOFTMAX_CHANNEL ? CUDNN_SOFTMAX_MODE_CHANNEL
                                                                      : CUDNN_SOFTMAX_MODE_INSTANCE,
                                 alpha, plan->td[SLOT_Y], PTR (SLOT_Y), plan->td[SLOT_DY], PTR (SLOT_DY),
                                 beta, plan->td[SLOT_W], PTR (SLOT_W));
      break;
    case KIND_POOL_FWD:
      call = "cudnnPoolingForward";
      st = cudnnPoolingForward (h, plan->pd, alpha, plan->td[SLOT_X], PTR (SLOT_X), beta,
                                plan->td[SLOT_Y], PTR (SLOT_Y));
      break;
    case KIND_BN_TRAIN:
      call = "cudnnBatchNormalizationForwardTraining";
      st = cudnnBatchNormalizationForwardTraining (h, BN_MODE, alpha, beta, plan->td[SLOT_X], PTR (SLOT_X),
                                                   plan->td[SLOT_Y], PTR (SLOT_Y), plan->bd,
                                                   PP (PARAM_SCALE), PP (PARAM_BIAS), r->momentum,
                                                   PP (PARAM_MEAN), PP (PARAM_VAR), r->epsilon,
                                                   PP (PARAM_SAVE_MEAN), PP (PARAM_SAVE_INV_VAR));
      break;
    case KIND_BN_INFER:
      call = "cudnnBatchNormalizationForwardInference";
      st = cudnnBatchNormalizationForwardInference (h, BN_MODE, alpha, beta, plan->td[SLOT_X], PTR (SLOT_X),
                                                    plan->td[SLOT_Y], PTR (SLOT_Y), plan->bd,
                                                    PP (PARAM_SCALE), PP (PARAM_BIAS), PP (PARAM_MEAN),
                                                    PP (PARAM_VAR), r->epsilon);
      break;
    case KIND_BN_BWD:
      call = "cudnnBatchNormalizationBackward";
      st = cudnnBatchNormalizationBackward (h, BN_MODE, alpha, beta, alpha, beta, plan->td[SLOT_X],
                                            PTR (SLOT_X), plan->td[SLOT_DY], PTR (SLOT_DY),
                                            plan->td[SLOT_W], PTR (SLOT_W), plan->bd, PP (PARAM_SCALE),
                                            PP (PARAM_BIAS), PP (PARAM_MEAN), r->epsilon,
                                            PP (PARAM_SAVE_MEAN), PP (PARAM_SAVE_INV_VAR));
      break;
    default:
      call = "cudnnPoolingBackward";
      st = cudnnPoolingBackward (h, plan->pd, alpha, plan->td[SLOT_Y], PTR (SLOT_Y),
                                 plan->td[SLOT_DY], PTR (SLOT_DY), plan->td[SLOT_X], PTR (SLOT_X),
                                 beta, plan->td[SLOT_W], PTR (SLOT_W));
      break;
    }
  if (st != CUDNN_STATUS_SUCCESS && st / 1000 == CUDNN_STATUS_NOT_SUPPORTED / 1000)
    {
      g_autofree gchar *d = describe (r);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuDNN: %s (%s): %s answered %s", r->opname, d, call, cudnnGetErrorString (st));
      return FALSE;
    }
  return cudnn_check (st, call, r->opname, error);
}

#undef PTR
#undef PP
#undef BN_MODE

/* ------------------------------------------------------------------ */
/* Validation (caller's thread)                                         */

static const AtomrDtype float_dtypes[] = {
  ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F64,
};

static void
request_clear (gpointer data)
{
  CudnnRequest *r = data;

  for (guint i = 0; i < N_SLOTS; i++)
    g_clear_object (&r->t[i]);
  for (guint i = 0; i < N_PARAMS; i++)
    g_clear_object (&r->p[i]);
}

#define FAIL(...) (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__), FALSE)

/* A view cuDNN can describe: a checked tensor of this actor's device, of a
 * floating dtype, with @min_dims to @max_dims dimensions, all at least 1,
 * positive strides (no broadcast, no reversal) that do not make two
 * elements share memory, and 32-bit dims and strides.  Fewer than 4
 * dimensions are padded with trailing 1s (cuDNN's descriptors start at 4). */
gboolean
atomr_cudnn_check_tensor (AtomrCudnnActor  *self,
                          const gchar      *op,
                          const gchar      *name,
                          AtomrTensor      *t,
                          guint             min_dims,
                          guint             max_dims,
                          gint             *dtype_inout,
                          GError          **error)
{
  guint n, order[MAX_DIMS];
  const gint64 *shape, *strides;

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), name, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, &n);
  strides = atomr_tensor_get_strides (t, NULL);
  if (n < min_dims || n > max_dims)
    return FAIL ("%s: %s has %u dimensions (takes %u to %u)", op, name, n, min_dims, max_dims);
  {
    AtomrDtype dtype = atomr_tensor_get_dtype (t);
    gboolean ok = FALSE;
    for (guint i = 0; i < G_N_ELEMENTS (float_dtypes); i++)
      ok |= dtype == float_dtypes[i];
    if (!ok)
      return FAIL ("%s: %s has dtype %s (takes f32, f16, bf16 or f64)", op, name,
                   atomr_dtype_get_name (dtype));
    if (*dtype_inout < 0)
      *dtype_inout = dtype;     /* the first operand sets it */
    else if ((gint) dtype != *dtype_inout)
      return FAIL ("%s: %s has dtype %s, the other operands %s", op, name,
                   atomr_dtype_get_name (dtype), atomr_dtype_get_name (*dtype_inout));
  }
  for (guint i = 0; i < n; i++)
    {
      if (shape[i] < 1 || shape[i] > G_MAXINT32)
        return FAIL ("%s: %s dimension %u is %" G_GINT64_FORMAT " (cuDNN takes 1 to %d)",
                     op, name, i, shape[i], G_MAXINT32);
      if (shape[i] > 1 && (strides[i] < 1 || strides[i] > G_MAXINT32))
        return FAIL ("%s: %s stride %u is %" G_GINT64_FORMAT " (cuDNN takes 1 to %d: no "
                     "broadcast or reversed views; copy it to a new tensor first)",
                     op, name, i, strides[i], G_MAXINT32);
    }
  /* No two elements at one address: sorted by stride, each stride spans
   * the dimensions inside it. */
  for (guint i = 0; i < n; i++)
    order[i] = i;
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; j--)
      {
        guint tmp = order[j];
        order[j] = order[j - 1];
        order[j - 1] = tmp;
      }
  {
    gint64 span = 1;
    for (guint i = 0; i < n; i++)
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
  return TRUE;
}

/* A view cuDNN can describe (atomr_cudnn_check_tensor()), recorded in
 * @slot of the request's key.  Fewer than 4 dimensions are padded with
 * trailing 1s (cuDNN's descriptors start at 4). */
static gboolean
check_view (AtomrCudnnActor *self,
            CudnnRequest    *r,
            Slot             slot,
            const gchar     *name,
            AtomrTensor     *t,
            guint            min_dims,
            guint            max_dims,
            GError         **error)
{
  guint n;
  const gint64 *shape, *strides;

  if (!atomr_cudnn_check_tensor (self, r->opname, name, t, min_dims, max_dims, &r->key.dtype, error))
    return FALSE;
  shape = atomr_tensor_get_shape (t, &n);
  strides = atomr_tensor_get_strides (t, NULL);

  r->key.n_dims[slot] = (gint32) MAX (n, 4);
  for (guint i = 0; i < MAX (n, 4); i++)
    {
      r->key.dims[slot][i] = i < n ? shape[i] : 1;
      /* size-1 dimensions: any stride means the same; 1 keeps keys equal */
      r->key.strides[slot][i] = i < n && shape[i] > 1 ? strides[i] : 1;
    }
  /* A size-1 dimension's stride means nothing, but cuDNN reads layouts
   * from strides: give it the span of the dimensions after it. */
  for (guint i = 0; i < n; i++)
    if (shape[i] == 1)
      {
        gint64 s = 1;
        for (guint j = i + 1; j < n; j++)
          if (shape[j] > 1)
            s = MAX (s, strides[j] * shape[j]);
        r->key.strides[slot][i] = MIN (s, G_MAXINT32);
      }
  r->t[slot] = g_object_ref (t);
  return TRUE;
}

static gboolean
check_same_shape (CudnnRequest *r,
                  const gchar  *a_name,
                  Slot          a,
                  const gchar  *b_name,
                  Slot          b,
                  GError      **error)
{
  if (r->key.n_dims[a] == r->key.n_dims[b] &&
      memcmp (r->key.dims[a], r->key.dims[b], sizeof (gint64) * r->key.n_dims[a]) == 0 &&
      atomr_tensor_get_n_dims (r->t[a]) == atomr_tensor_get_n_dims (r->t[b]))
    return TRUE;
  {
    g_autofree gchar *sa = NULL, *sb = NULL;
    GString *s;
    guint n;
    const gint64 *shape;

    s = g_string_new (NULL);
    shape = atomr_tensor_get_shape (r->t[a], &n);
    for (guint i = 0; i < n; i++)
      g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "×" : "", shape[i]);
    sa = g_string_free (s, FALSE);
    s = g_string_new (NULL);
    shape = atomr_tensor_get_shape (r->t[b], &n);
    for (guint i = 0; i < n; i++)
      g_string_append_printf (s, "%s%" G_GINT64_FORMAT, i ? "×" : "", shape[i]);
    sb = g_string_free (s, FALSE);
    return FAIL ("%s: %s is %s but %s is %s (they must have the same shape)",
                 r->opname, a_name, sa, b_name, sb);
  }
}

/* Two views that are the same elements (an in-place request). */
static gboolean
same_view (AtomrTensor *a,
           AtomrTensor *b)
{
  guint na, nb;
  const gint64 *sa = atomr_tensor_get_shape (a, &na);
  const gint64 *sb = atomr_tensor_get_shape (b, &nb);

  return atomr_tensor_get_buffer (a) == atomr_tensor_get_buffer (b) &&
         atomr_tensor_get_byte_offset (a) == atomr_tensor_get_byte_offset (b) &&
         na == nb && memcmp (sa, sb, sizeof (gint64) * na) == 0 &&
         memcmp (atomr_tensor_get_strides (a, NULL), atomr_tensor_get_strides (b, NULL),
                 sizeof (gint64) * na) == 0;
}

static void
set_scalars (CudnnRequest *r,
             gdouble       alpha,
             gdouble       beta)
{
  if (r->key.dtype == ATOMR_DTYPE_F64)
    {
      r->alpha.d = alpha;
      r->beta.d = beta;
      r->one.d = 1.0;
      r->zero.d = 0.0;
    }
  else
    {
      r->alpha.f = (gfloat) alpha;
      r->beta.f = (gfloat) beta;
      r->one.f = 1.0f;
      r->zero.f = 0.0f;
    }
}

static CudnnRequest *
request_new (AtomrCudnnActor *self,
             AtomrOp         *op,
             const gchar     *opname,
             Kind             kind)
{
  CudnnRequest *r = atomr_op_alloc_data (op, sizeof (CudnnRequest), request_clear);

  memset (&r->key, 0, sizeof r->key);
  r->opname = opname;
  r->key.kind = kind;
  r->key.dtype = -1;
  g_mutex_lock (&self->lock);
  r->autotune = self->autotune;
  if (kind == KIND_CONV_FWD || kind == KIND_CONV_BWD_DATA || kind == KIND_CONV_BWD_FILTER ||
      kind == KIND_CONV_BIAS_ACT)
    r->key.path = self->autotune || self->conv_legacy ? PATH_LEGACY : PATH_BACKEND;
  g_mutex_unlock (&self->lock);
  return r;
}

/* Hands a validated request to the envelope.  @outputs are written (and
 * read too when @accumulate: beta ≠ 0). */
static void
submit (AtomrOp      *op,
        AtomrTensor **inputs,
        guint         n_inputs,
        AtomrTensor **outputs,
        guint         n_outputs,
        gboolean      accumulate)
{
  for (guint i = 0; i < n_inputs; i++)
    atomr_op_read_tensor (op, inputs[i]);
  for (guint i = 0; i < n_outputs; i++)
    {
      if (accumulate)
        atomr_op_read_tensor (op, outputs[i]);
      atomr_op_write_tensor (op, outputs[i]);
    }
  atomr_op_set_enqueue (op, cudnn_enqueue);
  atomr_op_submit (op);
}

/* ------------------------------------------------------------------ */
/* Convolutions                                                         */

/* Validates the three operands of a convolution pass.  @x_name, @w_name,
 * @y_name are the names the caller uses (dx, dw, dy for backward ones). */
static gboolean
check_conv (AtomrCudnnActor  *self,
            CudnnRequest     *r,
            AtomrConvolution *conv,
            const gchar      *x_name,
            AtomrTensor      *x,
            const gchar      *w_name,
            AtomrTensor      *w,
            const gchar      *y_name,
            AtomrTensor      *y,
            GError          **error)
{
  const gchar *op = r->opname;
  AtomrCudnnConvParams p;
  gint64 want[ATOMR_CUDNN_MAX_SPATIAL_DIMS + 2];
  const gint64 *ws, *xs, *ys;
  guint wn, xn, yn, n;

  if (conv == NULL || !ATOMR_IS_CONVOLUTION (conv))
    return FAIL ("%s: conv is not an AtomrConvolution", op);
  atomr_cudnn_conv_params_get (conv, &p);
  n = p.n_spatial + 2;
  if (!check_view (self, r, SLOT_X, x_name, x, n, n, error) ||
      !check_view (self, r, SLOT_W, w_name, w, n, n, error) ||
      !check_view (self, r, SLOT_Y, y_name, y, n, n, error))
    return FALSE;

  xs = atomr_tensor_get_shape (x, &xn);
  ws = atomr_tensor_get_shape (w, &wn);
  ys = atomr_tensor_get_shape (y, &yn);
  if (!atomr_cudnn_conv_output_shape (&p, op, x_name, xs, xn, w_name, ws, wn, want, error))
    return FALSE;
  for (guint i = 0; i < n; i++)
    if (ys[i] != want[i])
      {
        GString *s = g_string_new (NULL), *g = g_string_new (NULL);
        for (guint j = 0; j < n; j++)
          {
            g_string_append_printf (s, "%s%" G_GINT64_FORMAT, j ? "×" : "", want[j]);
            g_string_append_printf (g, "%s%" G_GINT64_FORMAT, j ? "×" : "", ys[j]);
          }
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %s is %s but the convolution of %s by %s gives %s", op, y_name,
                     g->str, x_name, w_name, s->str);
        g_string_free (s, TRUE);
        g_string_free (g, TRUE);
        return FALSE;
      }

  /* The filter is packed KCRS (NCHW) or KRSC (NHWC): cuDNN's filter
   * descriptors have a format, not strides. */
  {
    const gint64 *st = atomr_tensor_get_strides (w, NULL);
    gint64 nchw[ATOMR_CUDNN_MAX_SPATIAL_DIMS + 2], nhwc[ATOMR_CUDNN_MAX_SPATIAL_DIMS + 2];
    gboolean is_nchw = TRUE, is_nhwc = TRUE;
    gint64 acc = 1;

    for (gint i = (gint) n - 1; i >= 0; i--)
      {
        nchw[i] = acc;
        acc *= ws[i];
      }
    acc = 1;
    nhwc[1] = acc;
    acc *= ws[1];
    for (gint i = (gint) n - 1; i >= 2; i--)
      {
        nhwc[i] = acc;
        acc *= ws[i];
      }
    nhwc[0] = acc;
    for (guint i = 0; i < n; i++)
      {
        if (ws[i] == 1)
          continue;
        is_nchw &= st[i] == nchw[i];
        is_nhwc &= st[i] == nhwc[i];
      }
    if (!is_nchw && !is_nhwc)
      {
        GString *s = g_string_new (NULL);
        for (guint j = 0; j < n; j++)
          g_string_append_printf (s, "%s%" G_GINT64_FORMAT, j ? ", " : "", st[j]);
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %s has strides (%s): a filter must be packed K×C×R×S (NCHW) or "
                     "K×R×S×C (NHWC); copy it to a new tensor first", op, w_name, s->str);
        g_string_free (s, TRUE);
        return FALSE;
      }
    /* both when every spatial extent and C are 1: NCHW */
    r->key.flag = !is_nchw;
  }

  r->key.mode = p.math;
  r->key.groups = p.groups;
  for (guint i = 0; i < p.n_spatial; i++)
    {
      r->key.padding[i] = p.padding[i];
      r->key.stride[i] = p.stride[i];
      r->key.dilation[i] = p.dilation[i];
    }
  return TRUE;
}

/* What the backend path's key adds: alpha, beta, the pointer alignments. */
static void
conv_key_backend (CudnnRequest *r,
                  gdouble       alpha,
                  gdouble       beta,
                  AtomrTensor  *x,
                  AtomrTensor  *w,
                  AtomrTensor  *y)
{
  r->key.alpha = alpha;
  r->key.beta = beta;
  r->key.align[SLOT_X] = atomr_cudnn_view_alignment (x);
  r->key.align[SLOT_W] = atomr_cudnn_view_alignment (w);
  r->key.align[SLOT_Y] = atomr_cudnn_view_alignment (y);
}

static void
conv_common (AtomrCudnnActor     *self,
             const gchar         *opname,
             Kind                 kind,
             gpointer             tag,
             AtomrConvolution    *conv,
             gdouble              alpha,
             const gchar         *x_name,
             AtomrTensor         *x,
             const gchar         *w_name,
             AtomrTensor         *w,
             const gchar         *y_name,
             AtomrTensor         *y,
             gdouble              beta,
             GCancellable        *cancellable,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  AtomrOp *op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);
  CudnnRequest *r = request_new (self, op, opname, kind);
  GError *error = NULL;
  AtomrTensor *out, *in[2];

  if (!check_conv (self, r, conv, x_name, x, w_name, w, y_name, y, &error))
    return atomr_op_fail (op, error);

  out = kind == KIND_CONV_FWD ? y : kind == KIND_CONV_BWD_DATA ? x : w;
  in[0] = kind == KIND_CONV_FWD ? x : kind == KIND_CONV_BWD_DATA ? w : x;
  in[1] = kind == KIND_CONV_FWD ? w : y;
  if (!atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR (kind == KIND_CONV_FWD ? y_name :
                                                                   kind == KIND_CONV_BWD_DATA ? x_name
                                                                                              : w_name, out)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR (kind == KIND_CONV_BWD_DATA ? w_name : x_name, in[0]),
                                             ATOMR_OPERAND_TENSOR (kind == KIND_CONV_FWD ? w_name : y_name, in[1])),
                             &error))
    return atomr_op_fail (op, error);
  set_scalars (r, alpha, beta);
  if (r->key.path == PATH_BACKEND)
    conv_key_backend (r, alpha, beta, x, w, y);
  /* the enqueue says so when the backend refused and the legacy call ran */
  atomr_op_set_detail_static (op, r->key.path == PATH_BACKEND ? "backend" : "legacy");
  submit (op, in, 2, &out, 1, beta != 0.0);
}

/**
 * atomr_cudnn_actor_convolution_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @conv: the convolution
 * @alpha: scale of the convolution
 * @x: the input, N × C × spatial
 * @w: the filter, K × C/groups × filter spatial, packed KCRS or KRSC
 * @beta: scale of @y's previous contents (0: @y is only written)
 * @y: the output, N × K × output spatial
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * y = alpha · conv (x, w) + beta · y (trace name `cudnn · conv-fwd`).  All
 * three views have one dtype (f32, f16, bf16 or f64; halves accumulate in
 * f32) and any layout the strides describe.  @y must not overlap @x or @w.
 * The algorithm is chosen once per distinct request and cached.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_convolution_forward_async (AtomrCudnnActor     *self,
                                             AtomrConvolution    *conv,
                                             gdouble              alpha,
                                             AtomrTensor         *x,
                                             AtomrTensor         *w,
                                             gdouble              beta,
                                             AtomrTensor         *y,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  conv_common (self, "conv-fwd", KIND_CONV_FWD, atomr_cudnn_actor_convolution_forward_async, conv,
               alpha, "x", x, "w", w, "y", y, beta, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_convolution_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.convolution_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_convolution_forward_finish (AtomrCudnnActor  *self,
                                              GAsyncResult     *result,
                                              GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_convolution_forward_async, error);
}

/**
 * atomr_cudnn_actor_convolution_backward_data_async:
 * @self: an [class@Atomr.CudnnActor]
 * @conv: the convolution of the forward pass
 * @alpha: scale of the gradient
 * @w: the filter, K × C/groups × filter spatial
 * @dy: the gradient of the forward output, N × K × output spatial
 * @beta: scale of @dx's previous contents (1 accumulates)
 * @dx: the gradient of the forward input, N × C × spatial
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * dx = alpha · ∂(conv)/∂x (dy) + beta · dx (trace name
 * `cudnn · conv-bwd-data`), with the shapes of the forward pass.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_convolution_backward_data_async (AtomrCudnnActor     *self,
                                                   AtomrConvolution    *conv,
                                                   gdouble              alpha,
                                                   AtomrTensor         *w,
                                                   AtomrTensor         *dy,
                                                   gdouble              beta,
                                                   AtomrTensor         *dx,
                                                   GCancellable        *cancellable,
                                                   GAsyncReadyCallback  callback,
                                                   gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  conv_common (self, "conv-bwd-data", KIND_CONV_BWD_DATA,
               atomr_cudnn_actor_convolution_backward_data_async, conv, alpha, "dx", dx, "w", w,
               "dy", dy, beta, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_convolution_backward_data_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.convolution_backward_data_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_convolution_backward_data_finish (AtomrCudnnActor  *self,
                                                    GAsyncResult     *result,
                                                    GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_convolution_backward_data_async,
                                  error);
}

/**
 * atomr_cudnn_actor_convolution_backward_filter_async:
 * @self: an [class@Atomr.CudnnActor]
 * @conv: the convolution of the forward pass
 * @alpha: scale of the gradient
 * @x: the forward input, N × C × spatial
 * @dy: the gradient of the forward output, N × K × output spatial
 * @beta: scale of @dw's previous contents (1 accumulates)
 * @dw: the gradient of the filter, K × C/groups × filter spatial, packed
 *   KCRS or KRSC
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dw is computed
 * @user_data: data for @callback
 *
 * dw = alpha · ∂(conv)/∂w (x, dy) + beta · dw (trace name
 * `cudnn · conv-bwd-filter`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_convolution_backward_filter_async (AtomrCudnnActor     *self,
                                                     AtomrConvolution    *conv,
                                                     gdouble              alpha,
                                                     AtomrTensor         *x,
                                                     AtomrTensor         *dy,
                                                     gdouble              beta,
                                                     AtomrTensor         *dw,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  conv_common (self, "conv-bwd-filter", KIND_CONV_BWD_FILTER,
               atomr_cudnn_actor_convolution_backward_filter_async, conv, alpha, "x", x, "dw", dw,
               "dy", dy, beta, cancellable, callback, user_data);
}

/**
 * atomr_cudnn_actor_convolution_backward_filter_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.convolution_backward_filter_async].
 *
 * Returns: %TRUE when dw was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_convolution_backward_filter_finish (AtomrCudnnActor  *self,
                                                      GAsyncResult     *result,
                                                      GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_convolution_backward_filter_async,
                                  error);
}

/* ------------------------------------------------------------------ */
/* Activations                                                          */

/**
 * atomr_cudnn_actor_convolution_bias_activation_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @conv: the convolution
 * @mode: the activation; %ATOMR_ACTIVATION_IDENTITY for none
 * @coef: the activation's coefficient (clipped ReLU: the ceiling; ELU:
 *   alpha; swish: beta; ignored otherwise)
 * @alpha: scale of the convolution
 * @x: the input, N × C × spatial
 * @w: the filter, K × C/groups × filter spatial, packed KCRS or KRSC
 * @bias: the bias, K packed elements of the operands' dtype
 * @beta: scale of the residual @z
 * @z: (nullable): the residual, @y's shape; %NULL for none
 * @y: the output, N × K × output spatial
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * y = act (alpha · conv (x, w) + beta · z + bias) in one request (trace
 * name `cudnn · conv-bias-act`).  By default it runs as one operation
 * graph of cuDNN's backend API (the convolution, then pointwise nodes for
 * z, the bias and the activation, fused by cuDNN into as few kernels as
 * its engines can), through an execution plan cached per problem.  With
 * [property@Atomr.CudnnActor:legacy-convolution] or autotuning set, or
 * when the backend has no engine for the request, it runs through the
 * legacy cudnnConvolutionBiasActivationForward instead (deprecated in
 * cuDNN 9, still supported): one call with ReLU (or none), other
 * activations a second cuDNN call on @y in place, and without ReLU only
 * the implicit precomputed GEMM algorithm.  The trace detail says which
 * path ran.  @y overlaps no input (@z included).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_convolution_bias_activation_forward_async (AtomrCudnnActor     *self,
                                                             AtomrConvolution    *conv,
                                                             AtomrActivationMode  mode,
                                                             gdouble              coef,
                                                             gdouble              alpha,
                                                             AtomrTensor         *x,
                                                             AtomrTensor         *w,
                                                             AtomrTensor         *bias,
                                                             gdouble              beta,
                                                             AtomrTensor         *z,
                                                             AtomrTensor         *y,
                                                             GCancellable        *cancellable,
                                                             GAsyncReadyCallback  callback,
                                                             gpointer             user_data)
{
  const gchar *opname = "conv-bias-act";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[4] = { x, w, bias, z };
  gint dtype;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_convolution_bias_activation_forward_async,
                     cancellable, callback, user_data);
  r = request_new (self, op, opname, KIND_CONV_BIAS_ACT);
  if (!atomr_check_enum (opname, "mode", mode, ATOMR_ACTIVATION_IDENTITY + 1, "AtomrActivationMode", &error) ||
      !check_conv (self, r, conv, "x", x, "w", w, "y", y, &error))
    return atomr_op_fail (op, error);
  if (!isfinite (coef) || !isfinite (alpha) || !isfinite (beta))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: coef, alpha and beta must be finite (they are %g, %g, %g)",
                                           opname, coef, alpha, beta));
  dtype = r->key.dtype;
  if (!atomr_cudnn_check_tensor (self, opname, "bias", bias, 1, MAX_DIMS, &dtype, &error))
    return atomr_op_fail (op, error);
  if ((gint64) atomr_tensor_get_n_elements (bias) != r->key.dims[SLOT_Y][1] || !atomr_tensor_is_contiguous (bias))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: bias has %" G_GUINT64_FORMAT " elements%s (takes %"
                                           G_GINT64_FORMAT " packed: one per output channel)", opname,
                                           atomr_tensor_get_n_elements (bias),
                                           atomr_tensor_is_contiguous (bias) ? "" : ", not packed",
                                           r->key.dims[SLOT_Y][1]));
  if (z != NULL &&
      (!check_view (self, r, SLOT_DY, "z", z, r->key.n_dims[SLOT_Y], r->key.n_dims[SLOT_Y], &error) ||
       !check_same_shape (r, "y", SLOT_Y, "z", SLOT_DY, &error)))
    return atomr_op_fail (op, error);
  if (!atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x), ATOMR_OPERAND_TENSOR ("w", w),
                                             ATOMR_OPERAND_TENSOR ("bias", bias), ATOMR_OPERAND_TENSOR ("z", z)),
                             &error))
    return atomr_op_fail (op, error);
  r->p[PARAM_SCALE] = g_object_ref (bias);
  r->key.act = mode;
  r->key.has_z = z != NULL;
  r->key.coef = mode == ATOMR_ACTIVATION_CLIPPED_RELU || mode == ATOMR_ACTIVATION_ELU ||
                mode == ATOMR_ACTIVATION_SWISH ? coef : 0.0;
  set_scalars (r, alpha, z != NULL ? beta : 0.0);
  if (r->key.path == PATH_BACKEND)
    {
      conv_key_backend (r, alpha, z != NULL ? beta : 0.0, x, w, y);
      if (z != NULL)
        r->key.align[SLOT_DY] = atomr_cudnn_view_alignment (z);
      r->key.align_bias = atomr_cudnn_view_alignment (bias);
    }
  atomr_op_set_detail_static (op, r->key.path == PATH_BACKEND ? "backend" : "legacy");
  submit (op, in, z != NULL ? 4 : 3, &y, 1, FALSE);
}

/**
 * atomr_cudnn_actor_convolution_bias_activation_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with
 * [method@Atomr.CudnnActor.convolution_bias_activation_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_convolution_bias_activation_forward_finish (AtomrCudnnActor  *self,
                                                              GAsyncResult     *result,
                                                              GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_convolution_bias_activation_forward_async,
                                  error);
}

/**
 * atomr_cudnn_actor_activation_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: the function
 * @coef: the ceiling of clipped relu, alpha of elu, beta of swish
 *   (ignored by the others)
 * @x: the input (1 to 8 dimensions)
 * @y: the output, the shape and dtype of @x; may be @x itself (the same
 *   view) for an in-place activation, but no other view overlapping it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * y = f (x) elementwise (trace name `cudnn · act-fwd`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_activation_forward_async (AtomrCudnnActor     *self,
                                            AtomrActivationMode  mode,
                                            gdouble              coef,
                                            AtomrTensor         *x,
                                            AtomrTensor         *y,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data)
{
  const gchar *opname = "act-fwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_activation_forward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_ACT_FWD);
  if (!atomr_check_enum (opname, "mode", mode, ATOMR_ACTIVATION_SWISH + 1, "AtomrActivationMode", &error) ||
      !check_view (self, r, SLOT_X, "x", x, 1, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 1, MAX_DIMS, &error) ||
      !check_same_shape (r, "x", SLOT_X, "y", SLOT_Y, &error))
    return atomr_op_fail (op, error);
  if (!isfinite (coef))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: coef is %g (must be finite)", opname, coef));
  if (!same_view (x, y) &&
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  r->key.mode = mode;
  r->key.coef = mode == ATOMR_ACTIVATION_CLIPPED_RELU || mode == ATOMR_ACTIVATION_ELU ||
                mode == ATOMR_ACTIVATION_SWISH ? coef : 0.0;
  set_scalars (r, 1.0, 0.0);
  if (same_view (x, y))
    submit (op, NULL, 0, &y, 1, FALSE);
  else
    submit (op, &x, 1, &y, 1, FALSE);
}

/**
 * atomr_cudnn_actor_activation_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.activation_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_activation_forward_finish (AtomrCudnnActor  *self,
                                             GAsyncResult     *result,
                                             GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_activation_forward_async, error);
}

/**
 * atomr_cudnn_actor_activation_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: the function of the forward pass
 * @coef: its coefficient
 * @y: the forward output
 * @dy: the gradient of @y
 * @x: the forward input
 * @dx: the gradient of @x (computed); may be @dy itself (the same view)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * dx = f′ (x) · dy (trace name `cudnn · act-bwd`).  All four views have
 * one shape and dtype.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_activation_backward_async (AtomrCudnnActor     *self,
                                             AtomrActivationMode  mode,
                                             gdouble              coef,
                                             AtomrTensor         *y,
                                             AtomrTensor         *dy,
                                             AtomrTensor         *x,
                                             AtomrTensor         *dx,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  const gchar *opname = "act-bwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[3];
  gboolean in_place;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_activation_backward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_ACT_BWD);
  if (!atomr_check_enum (opname, "mode", mode, ATOMR_ACTIVATION_SWISH + 1, "AtomrActivationMode", &error) ||
      !check_view (self, r, SLOT_X, "x", x, 1, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 1, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_DY, "dy", dy, 1, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_W, "dx", dx, 1, MAX_DIMS, &error) ||
      !check_same_shape (r, "x", SLOT_X, "y", SLOT_Y, &error) ||
      !check_same_shape (r, "x", SLOT_X, "dy", SLOT_DY, &error) ||
      !check_same_shape (r, "x", SLOT_X, "dx", SLOT_W, &error))
    return atomr_op_fail (op, error);
  if (!isfinite (coef))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: coef is %g (must be finite)", opname, coef));
  in_place = same_view (dy, dx);
  if (!atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("dy", in_place ? NULL : dy)),
                             &error))
    return atomr_op_fail (op, error);
  r->key.mode = mode;
  r->key.coef = mode == ATOMR_ACTIVATION_CLIPPED_RELU || mode == ATOMR_ACTIVATION_ELU ||
                mode == ATOMR_ACTIVATION_SWISH ? coef : 0.0;
  set_scalars (r, 1.0, 0.0);
  in[0] = x;
  in[1] = y;
  in[2] = dy;
  submit (op, in, in_place ? 2 : 3, &dx, 1, FALSE);
}

/**
 * atomr_cudnn_actor_activation_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.activation_backward_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_activation_backward_finish (AtomrCudnnActor  *self,
                                              GAsyncResult     *result,
                                              GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_activation_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Softmax                                                              */

/**
 * atomr_cudnn_actor_softmax_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: what to normalise over
 * @log: %TRUE for log-softmax
 * @x: the input, N × C (× spatial, up to 8 dimensions)
 * @y: the output, the shape and dtype of @x, not overlapping it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * Softmax or log-softmax (trace name `cudnn · softmax-fwd`), computed in
 * the numerically stable (max-subtracted) form.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_softmax_forward_async (AtomrCudnnActor     *self,
                                         AtomrSoftmaxMode     mode,
                                         gboolean             log,
                                         AtomrTensor         *x,
                                         AtomrTensor         *y,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  const gchar *opname = "softmax-fwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_softmax_forward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_SOFTMAX_FWD);
  if (!atomr_check_enum (opname, "mode", mode, ATOMR_SOFTMAX_CHANNEL + 1, "AtomrSoftmaxMode", &error) ||
      !check_view (self, r, SLOT_X, "x", x, 2, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 2, MAX_DIMS, &error) ||
      !check_same_shape (r, "x", SLOT_X, "y", SLOT_Y, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  r->key.mode = mode;
  r->key.flag = log != FALSE;
  set_scalars (r, 1.0, 0.0);
  submit (op, &x, 1, &y, 1, FALSE);
}

/**
 * atomr_cudnn_actor_softmax_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.softmax_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_softmax_forward_finish (AtomrCudnnActor  *self,
                                          GAsyncResult     *result,
                                          GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_softmax_forward_async, error);
}

/**
 * atomr_cudnn_actor_softmax_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: what the forward pass normalised over
 * @log: %TRUE when the forward pass was a log-softmax
 * @y: the forward output
 * @dy: the gradient of @y
 * @dx: the gradient of the forward input (computed), not overlapping
 *   @y or @dy
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * The gradient of a softmax or log-softmax (trace name
 * `cudnn · softmax-bwd`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_softmax_backward_async (AtomrCudnnActor     *self,
                                          AtomrSoftmaxMode     mode,
                                          gboolean             log,
                                          AtomrTensor         *y,
                                          AtomrTensor         *dy,
                                          AtomrTensor         *dx,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  const gchar *opname = "softmax-bwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[2] = { y, dy };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_softmax_backward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_SOFTMAX_BWD);
  if (!atomr_check_enum (opname, "mode", mode, ATOMR_SOFTMAX_CHANNEL + 1, "AtomrSoftmaxMode", &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 2, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_DY, "dy", dy, 2, MAX_DIMS, &error) ||
      !check_view (self, r, SLOT_W, "dx", dx, 2, MAX_DIMS, &error) ||
      !check_same_shape (r, "y", SLOT_Y, "dy", SLOT_DY, &error) ||
      !check_same_shape (r, "y", SLOT_Y, "dx", SLOT_W, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("dy", dy)), &error))
    return atomr_op_fail (op, error);
  r->key.mode = mode;
  r->key.flag = log != FALSE;
  set_scalars (r, 1.0, 0.0);
  submit (op, in, 2, &dx, 1, FALSE);
}

/**
 * atomr_cudnn_actor_softmax_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.softmax_backward_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_softmax_backward_finish (AtomrCudnnActor  *self,
                                           GAsyncResult     *result,
                                           GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_softmax_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Pooling                                                              */

static gboolean
check_pooling (AtomrCudnnActor *self,
               CudnnRequest    *r,
               AtomrPooling    *pooling,
               AtomrTensor     *x,
               const gchar     *y_name,
               AtomrTensor     *y,
               GError         **error)
{
  const gchar *op = r->opname;
  AtomrCudnnPoolParams p;
  const gint64 *xs, *ys;

  if (pooling == NULL || !ATOMR_IS_POOLING (pooling))
    return FAIL ("%s: pooling is not an AtomrPooling", op);
  atomr_cudnn_pooling_params_get (pooling, &p);
  if (!check_view (self, r, SLOT_X, "x", x, p.n_spatial + 2, p.n_spatial + 2, error) ||
      !check_view (self, r, SLOT_Y, y_name, y, p.n_spatial + 2, p.n_spatial + 2, error))
    return FALSE;
  xs = atomr_tensor_get_shape (x, NULL);
  ys = atomr_tensor_get_shape (y, NULL);
  for (guint i = 0; i < p.n_spatial; i++)
    if (xs[i + 2] + 2 * p.padding[i] < p.window[i])
      return FAIL ("%s: the window (%" G_GINT64_FORMAT ") is larger than the padded input (%"
                   G_GINT64_FORMAT ") in spatial dimension %u", op, p.window[i],
                   xs[i + 2] + 2 * p.padding[i], i);
  {
    gint64 want[ATOMR_CUDNN_MAX_SPATIAL_DIMS + 2];
    gboolean same = TRUE;

    want[0] = xs[0];
    want[1] = xs[1];
    for (guint i = 0; i < p.n_spatial; i++)
      want[i + 2] = (xs[i + 2] + 2 * p.padding[i] - p.window[i]) / p.stride[i] + 1;
    for (guint i = 0; i < p.n_spatial + 2; i++)
      same &= ys[i] == want[i];
    if (!same)
      {
        GString *g = g_string_new (NULL), *w = g_string_new (NULL);
        for (guint i = 0; i < p.n_spatial + 2; i++)
          {
            g_string_append_printf (g, "%s%" G_GINT64_FORMAT, i ? "×" : "", ys[i]);
            g_string_append_printf (w, "%s%" G_GINT64_FORMAT, i ? "×" : "", want[i]);
          }
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %s is %s but pooling x gives %s", op, y_name, g->str, w->str);
        g_string_free (g, TRUE);
        g_string_free (w, TRUE);
        return FALSE;
      }
  }
  r->key.mode = p.mode;
  for (guint i = 0; i < p.n_spatial; i++)
    {
      r->key.window[i] = p.window[i];
      r->key.padding[i] = p.padding[i];
      r->key.stride[i] = p.stride[i];
    }
  return TRUE;
}

/**
 * atomr_cudnn_actor_pooling_forward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @pooling: the pooling window
 * @x: the input, N × C × H × W
 * @y: the output, N × C × OH × OW (see [class@Atomr.Pooling]), not overlapping @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * 2-D max or average pooling (trace name `cudnn · pool-fwd`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_pooling_forward_async (AtomrCudnnActor     *self,
                                         AtomrPooling        *pooling,
                                         AtomrTensor         *x,
                                         AtomrTensor         *y,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  const gchar *opname = "pool-fwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_pooling_forward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_POOL_FWD);
  if (!check_pooling (self, r, pooling, x, "y", y, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  set_scalars (r, 1.0, 0.0);
  submit (op, &x, 1, &y, 1, FALSE);
}

/**
 * atomr_cudnn_actor_pooling_forward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.pooling_forward_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_pooling_forward_finish (AtomrCudnnActor  *self,
                                          GAsyncResult     *result,
                                          GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_pooling_forward_async, error);
}

/**
 * atomr_cudnn_actor_pooling_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @pooling: the pooling window of the forward pass
 * @y: the forward output
 * @dy: the gradient of @y, the shape of @y
 * @x: the forward input
 * @dx: the gradient of @x (computed), the shape of @x, overlapping none
 *   of the others
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @dx is computed
 * @user_data: data for @callback
 *
 * The gradient of a 2-D pooling (trace name `cudnn · pool-bwd`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_pooling_backward_async (AtomrCudnnActor     *self,
                                          AtomrPooling        *pooling,
                                          AtomrTensor         *y,
                                          AtomrTensor         *dy,
                                          AtomrTensor         *x,
                                          AtomrTensor         *dx,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  const gchar *opname = "pool-bwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[3] = { y, dy, x };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_pooling_backward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_POOL_BWD);
  if (!check_pooling (self, r, pooling, x, "y", y, &error) ||
      !check_view (self, r, SLOT_DY, "dy", dy, r->key.n_dims[SLOT_X], r->key.n_dims[SLOT_X], &error) ||
      !check_view (self, r, SLOT_W, "dx", dx, r->key.n_dims[SLOT_X], r->key.n_dims[SLOT_X], &error) ||
      !check_same_shape (r, "y", SLOT_Y, "dy", SLOT_DY, &error) ||
      !check_same_shape (r, "x", SLOT_X, "dx", SLOT_W, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("dy", dy),
                                             ATOMR_OPERAND_TENSOR ("x", x)), &error))
    return atomr_op_fail (op, error);
  set_scalars (r, 1.0, 0.0);
  submit (op, in, 3, &dx, 1, FALSE);
}

/**
 * atomr_cudnn_actor_pooling_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.pooling_backward_async].
 *
 * Returns: %TRUE when dx was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_pooling_backward_finish (AtomrCudnnActor  *self,
                                           GAsyncResult     *result,
                                           GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_pooling_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Batch normalisation                                                  */

/* A parameter view: f32 (f64 when x is f64), contiguous, with the number
 * of elements the mode needs.  NULL is fine when !@required. */
static gboolean
check_param (AtomrCudnnActor *self,
             CudnnRequest    *r,
             Param            slot,
             const gchar     *name,
             AtomrTensor     *t,
             gboolean         required,
             GError         **error)
{
  const gchar *op = r->opname;
  AtomrDtype want = r->key.dtype == ATOMR_DTYPE_F64 ? ATOMR_DTYPE_F64 : ATOMR_DTYPE_F32;
  guint64 count = 1;

  if (t == NULL && !required)
    return TRUE;
  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), name, error))
    return FALSE;
  count = (guint64) r->key.dims[SLOT_X][1];
  if (r->key.mode == ATOMR_BATCH_NORM_PER_ACTIVATION)
    for (gint i = 2; i < r->key.n_dims[SLOT_X]; i++)
      count *= (guint64) r->key.dims[SLOT_X][i];
  if (atomr_tensor_get_dtype (t) != want)
    return FAIL ("%s: %s has dtype %s (batch-norm parameters of %s data are %s)", op, name,
                 atomr_dtype_get_name (atomr_tensor_get_dtype (t)),
                 atomr_dtype_get_name (r->key.dtype), atomr_dtype_get_name (want));
  if (atomr_tensor_get_n_elements (t) != count)
    return FAIL ("%s: %s has %" G_GUINT64_FORMAT " elements (the mode needs %" G_GUINT64_FORMAT ")",
                 op, name, atomr_tensor_get_n_elements (t), count);
  if (!atomr_tensor_is_contiguous (t))
    return FAIL ("%s: %s is not contiguous (copy it to a new tensor first)", op, name);
  r->p[slot] = g_object_ref (t);
  return TRUE;
}

static gboolean
check_pair (const gchar  *op,
            const gchar  *a_name,
            AtomrTensor  *a,
            const gchar  *b_name,
            AtomrTensor  *b,
            GError      **error)
{
  if ((a == NULL) != (b == NULL))
    return FAIL ("%s: %s and %s are given together or not at all (%s is %s)", op, a_name, b_name,
                 a ? b_name : a_name, "NULL");
  return TRUE;
}

static gboolean
check_bn_common (AtomrCudnnActor     *self,
                 CudnnRequest        *r,
                 AtomrBatchNormMode   mode,
                 gdouble              epsilon,
                 AtomrTensor         *x,
                 GError             **error)
{
  const gchar *op = r->opname;

  if (!atomr_check_enum (op, "mode", mode, ATOMR_BATCH_NORM_PER_ACTIVATION + 1, "AtomrBatchNormMode", error) ||
      !check_view (self, r, SLOT_X, "x", x, 4, 5, error))
    return FALSE;
  if (!isfinite (epsilon) || epsilon < CUDNN_BN_MIN_EPSILON)
    return FAIL ("%s: epsilon is %g (must be finite and ≥ %g)", op, epsilon, (gdouble) CUDNN_BN_MIN_EPSILON);
  r->key.mode = mode;
  r->epsilon = epsilon;
  return TRUE;
}

/**
 * atomr_cudnn_actor_batch_norm_forward_training_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: what to average over
 * @epsilon: added to the variance (≥ 0; 1e-5 is usual)
 * @momentum: weight of this batch in the running statistics:
 *   running = (1 − momentum) · running + momentum · batch (0 to 1; 1 on
 *   the first call of a training run)
 * @x: the input, N × C × H × W or N × C × D × H × W (f32, f16, bf16, f64)
 * @scale: gamma: C elements (C × spatial per activation), f32 (f64 for
 *   f64 data), contiguous
 * @bias: beta, as @scale
 * @y: the output, the shape and dtype of @x
 * @running_mean: (nullable): running mean, updated in place, as @scale
 * @running_var: (nullable): running (unbiased) variance, updated in place;
 *   given with @running_mean or not at all
 * @save_mean: (nullable): the batch mean, for the backward pass
 * @save_inv_var: (nullable): the batch's 1 / sqrt (variance + epsilon);
 *   given with @save_mean or not at all
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * Training-mode batch normalisation (trace name `cudnn · bn-train`): y =
 * scale · (x − mean) / sqrt (var + epsilon) + bias with the batch's
 * statistics.  Outputs overlap no input and no other output.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_batch_norm_forward_training_async (AtomrCudnnActor     *self,
                                                     AtomrBatchNormMode   mode,
                                                     gdouble              epsilon,
                                                     gdouble              momentum,
                                                     AtomrTensor         *x,
                                                     AtomrTensor         *scale,
                                                     AtomrTensor         *bias,
                                                     AtomrTensor         *y,
                                                     AtomrTensor         *running_mean,
                                                     AtomrTensor         *running_var,
                                                     AtomrTensor         *save_mean,
                                                     AtomrTensor         *save_inv_var,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data)
{
  const gchar *opname = "bn-train";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[3] = { x, scale, bias }, *out[5];
  guint n_out = 0;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_batch_norm_forward_training_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_BN_TRAIN);
  if (!check_bn_common (self, r, mode, epsilon, x, &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 4, 5, &error) ||
      !check_same_shape (r, "x", SLOT_X, "y", SLOT_Y, &error) ||
      !check_param (self, r, PARAM_SCALE, "scale", scale, TRUE, &error) ||
      !check_param (self, r, PARAM_BIAS, "bias", bias, TRUE, &error) ||
      !check_pair (opname, "running_mean", running_mean, "running_var", running_var, &error) ||
      !check_pair (opname, "save_mean", save_mean, "save_inv_var", save_inv_var, &error) ||
      !check_param (self, r, PARAM_MEAN, "running_mean", running_mean, FALSE, &error) ||
      !check_param (self, r, PARAM_VAR, "running_var", running_var, FALSE, &error) ||
      !check_param (self, r, PARAM_SAVE_MEAN, "save_mean", save_mean, FALSE, &error) ||
      !check_param (self, r, PARAM_SAVE_INV_VAR, "save_inv_var", save_inv_var, FALSE, &error) ||
      !atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y),
                                             ATOMR_OPERAND_TENSOR ("running_mean", running_mean),
                                             ATOMR_OPERAND_TENSOR ("running_var", running_var),
                                             ATOMR_OPERAND_TENSOR ("save_mean", save_mean),
                                             ATOMR_OPERAND_TENSOR ("save_inv_var", save_inv_var)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("scale", scale),
                                             ATOMR_OPERAND_TENSOR ("bias", bias)), &error))
    return atomr_op_fail (op, error);
  if (!isfinite (momentum) || momentum < 0 || momentum > 1)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: momentum is %g (must be 0 to 1)", opname, momentum));
  r->momentum = momentum;
  set_scalars (r, 1.0, 0.0);
  out[n_out++] = y;
  if (save_mean)
    {
      out[n_out++] = save_mean;
      out[n_out++] = save_inv_var;
    }
  if (running_mean)
    {
      /* read-modify-write: read here, written with the outputs */
      atomr_op_read_tensor (op, running_mean);
      atomr_op_read_tensor (op, running_var);
      out[n_out++] = running_mean;
      out[n_out++] = running_var;
    }
  submit (op, in, 3, out, n_out, FALSE);
}

/**
 * atomr_cudnn_actor_batch_norm_forward_training_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.batch_norm_forward_training_async].
 *
 * Returns: %TRUE when y (and the statistics asked for) were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_batch_norm_forward_training_finish (AtomrCudnnActor  *self,
                                                      GAsyncResult     *result,
                                                      GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_batch_norm_forward_training_async,
                                  error);
}

/**
 * atomr_cudnn_actor_batch_norm_forward_inference_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: what the statistics were averaged over
 * @epsilon: added to the variance
 * @x: the input, N × C × H × W or N × C × D × H × W
 * @scale: gamma (see [method@Atomr.CudnnActor.batch_norm_forward_training_async])
 * @bias: beta
 * @mean: the estimated mean (the running mean of training)
 * @var: the estimated variance
 * @y: the output, the shape and dtype of @x, overlapping no input
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @y is computed
 * @user_data: data for @callback
 *
 * Inference-mode batch normalisation with fixed statistics (trace name
 * `cudnn · bn-infer`).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_batch_norm_forward_inference_async (AtomrCudnnActor     *self,
                                                      AtomrBatchNormMode   mode,
                                                      gdouble              epsilon,
                                                      AtomrTensor         *x,
                                                      AtomrTensor         *scale,
                                                      AtomrTensor         *bias,
                                                      AtomrTensor         *mean,
                                                      AtomrTensor         *var,
                                                      AtomrTensor         *y,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data)
{
  const gchar *opname = "bn-infer";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[5] = { x, scale, bias, mean, var };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_batch_norm_forward_inference_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_BN_INFER);
  if (!check_bn_common (self, r, mode, epsilon, x, &error) ||
      !check_view (self, r, SLOT_Y, "y", y, 4, 5, &error) ||
      !check_same_shape (r, "x", SLOT_X, "y", SLOT_Y, &error) ||
      !check_param (self, r, PARAM_SCALE, "scale", scale, TRUE, &error) ||
      !check_param (self, r, PARAM_BIAS, "bias", bias, TRUE, &error) ||
      !check_param (self, r, PARAM_MEAN, "mean", mean, TRUE, &error) ||
      !check_param (self, r, PARAM_VAR, "var", var, TRUE, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("y", y)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("scale", scale),
                                             ATOMR_OPERAND_TENSOR ("bias", bias),
                                             ATOMR_OPERAND_TENSOR ("mean", mean),
                                             ATOMR_OPERAND_TENSOR ("var", var)), &error))
    return atomr_op_fail (op, error);
  set_scalars (r, 1.0, 0.0);
  submit (op, in, 5, &y, 1, FALSE);
}

/**
 * atomr_cudnn_actor_batch_norm_forward_inference_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.batch_norm_forward_inference_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_batch_norm_forward_inference_finish (AtomrCudnnActor  *self,
                                                       GAsyncResult     *result,
                                                       GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_batch_norm_forward_inference_async,
                                  error);
}

/**
 * atomr_cudnn_actor_batch_norm_backward_async:
 * @self: an [class@Atomr.CudnnActor]
 * @mode: the mode of the forward pass
 * @epsilon: the epsilon of the forward pass
 * @x: the forward input
 * @dy: the gradient of the forward output, the shape and dtype of @x
 * @scale: gamma
 * @save_mean: (nullable): the batch mean the training forward pass saved
 * @save_inv_var: (nullable): its saved inverse deviation; given with
 *   @save_mean or not at all (then recomputed from @x)
 * @dx: the gradient of @x (computed)
 * @dscale: the gradient of @scale (computed), as @scale
 * @dbias: the gradient of the bias (computed), as @scale
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the gradients are computed
 * @user_data: data for @callback
 *
 * The gradients of training-mode batch normalisation (trace name
 * `cudnn · bn-bwd`).  Outputs overlap no input and no other output.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_batch_norm_backward_async (AtomrCudnnActor     *self,
                                             AtomrBatchNormMode   mode,
                                             gdouble              epsilon,
                                             AtomrTensor         *x,
                                             AtomrTensor         *dy,
                                             AtomrTensor         *scale,
                                             AtomrTensor         *save_mean,
                                             AtomrTensor         *save_inv_var,
                                             AtomrTensor         *dx,
                                             AtomrTensor         *dscale,
                                             AtomrTensor         *dbias,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  const gchar *opname = "bn-bwd";
  AtomrOp *op;
  CudnnRequest *r;
  GError *error = NULL;
  AtomrTensor *in[5] = { x, dy, scale, save_mean, save_inv_var }, *out[3] = { dx, dscale, dbias };

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_cudnn_actor_batch_norm_backward_async, cancellable,
                     callback, user_data);
  r = request_new (self, op, opname, KIND_BN_BWD);
  if (!check_bn_common (self, r, mode, epsilon, x, &error) ||
      !check_view (self, r, SLOT_DY, "dy", dy, 4, 5, &error) ||
      !check_view (self, r, SLOT_W, "dx", dx, 4, 5, &error) ||
      !check_same_shape (r, "x", SLOT_X, "dy", SLOT_DY, &error) ||
      !check_same_shape (r, "x", SLOT_X, "dx", SLOT_W, &error) ||
      !check_param (self, r, PARAM_SCALE, "scale", scale, TRUE, &error) ||
      !check_param (self, r, PARAM_BIAS, "dscale", dscale, TRUE, &error) ||
      !check_param (self, r, PARAM_MEAN, "dbias", dbias, TRUE, &error) ||
      !check_pair (opname, "save_mean", save_mean, "save_inv_var", save_inv_var, &error) ||
      !check_param (self, r, PARAM_SAVE_MEAN, "save_mean", save_mean, FALSE, &error) ||
      !check_param (self, r, PARAM_SAVE_INV_VAR, "save_inv_var", save_inv_var, FALSE, &error) ||
      !atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("dx", dx),
                                             ATOMR_OPERAND_TENSOR ("dscale", dscale),
                                             ATOMR_OPERAND_TENSOR ("dbias", dbias)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("x", x),
                                             ATOMR_OPERAND_TENSOR ("dy", dy),
                                             ATOMR_OPERAND_TENSOR ("scale", scale),
                                             ATOMR_OPERAND_TENSOR ("save_mean", save_mean),
                                             ATOMR_OPERAND_TENSOR ("save_inv_var", save_inv_var)),
                             &error))
    return atomr_op_fail (op, error);
  set_scalars (r, 1.0, 0.0);
  submit (op, in, save_mean ? 5 : 3, out, 3, FALSE);
}

/**
 * atomr_cudnn_actor_batch_norm_backward_finish:
 * @self: an [class@Atomr.CudnnActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.CudnnActor.batch_norm_backward_async].
 *
 * Returns: %TRUE when the gradients were computed
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_batch_norm_backward_finish (AtomrCudnnActor  *self,
                                              GAsyncResult     *result,
                                              GError          **error)
{
  return atomr_op_finish_boolean (self, result, atomr_cudnn_actor_batch_norm_backward_async, error);
}

/* ------------------------------------------------------------------ */
/* Handle lifecycle and GObject                                         */

static gboolean
atomr_cudnn_actor_setup (AtomrActor  *actor,
                         GError     **error)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (actor);

  /* The host test device has no GPU: requests are validated, then refused. */
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;
  if (!atomr_cudnn_load (error))
    return FALSE;
  if (!cudnn_check (cudnnCreate (&self->handle), "cudnnCreate", "the actor", error))
    {
      self->handle = NULL;
      return FALSE;
    }
  if (!cudnn_check (cudnnSetStream (self->handle, (cudaStream_t) atomr_actor_get_cu_stream (actor)),
                    "cudnnSetStream", "the actor", error))
    {
      cudnnDestroy (self->handle);
      self->handle = NULL;
      return FALSE;
    }
  return TRUE;
}

static void
atomr_cudnn_actor_teardown (AtomrActor *actor,
                            gboolean    context_alive)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (actor);

  /* the dropout states are device memory of this context */
  if (self->dropout != NULL)
    {
      atomr_cudnn_dropout_state_free (self->dropout, atomr_actor_get_cu_stream (actor), context_alive);
      self->dropout = NULL;
    }
  /* Plans are host objects and survive a context rebuild; the workspace
   * and the handle do not. */
  if (context_alive)
    {
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, atomr_actor_get_cu_stream (actor));
      if (self->handle)
        cudnnDestroy (self->handle);
    }
  if (context_alive && self->reserve)
    ATOMR_CU->cuMemFreeAsync (self->reserve, atomr_actor_get_cu_stream (actor));
  self->reserve = 0;
  self->reserve_size = 0;
  g_clear_pointer (&self->reserve_owner, g_bytes_unref);
  self->workspace = 0;
  self->handle = NULL;
  /* Execution plans were finalized against the old handle, kernels were
   * loaded into the old context.  (At finalization the parent runs this
   * after our finalize freed both.) */
  if (self->graph_plans != NULL)
    atomr_cudnn_plan_cache_clear (self->graph_plans);
  if (self->plans != NULL)
    {
      GList *dropped = drop_backend_plans (self);

      if (dropped != NULL)
        {
          free_plans (dropped);
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_SIZE]);
        }
    }
  if (self->kernels != NULL)
    g_hash_table_remove_all (self->kernels);
  g_mutex_lock (&self->lock);
  self->workspace_size = 0;
  g_mutex_unlock (&self->lock);
}

static void
atomr_cudnn_actor_finalize (GObject *object)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (object);
  GList *all;

  all = cache_trim_locked (self, 0);
  free_plans (all);
  g_clear_pointer (&self->reserve_owner, g_bytes_unref);
  g_clear_pointer (&self->graph_plans, atomr_cudnn_plan_cache_free);
  g_clear_pointer (&self->kernels, g_hash_table_unref);
  g_clear_pointer (&self->plans, g_hash_table_unref);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (atomr_cudnn_actor_parent_class)->finalize (object);
}

static void
atomr_cudnn_actor_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (object);

  switch (prop_id)
    {
    case PROP_WORKSPACE_SIZE:
      g_value_set_uint64 (value, atomr_cudnn_actor_get_workspace_size (self));
      break;
    case PROP_WORKSPACE_LIMIT:
      g_value_set_uint64 (value, atomr_cudnn_actor_get_workspace_limit (self));
      break;
    case PROP_CACHE_CAPACITY:
      g_value_set_uint (value, atomr_cudnn_actor_get_cache_capacity (self));
      break;
    case PROP_CACHE_HITS:
      g_value_set_uint64 (value, atomr_cudnn_actor_get_cache_hits (self));
      break;
    case PROP_CACHE_MISSES:
      g_value_set_uint64 (value, atomr_cudnn_actor_get_cache_misses (self));
      break;
    case PROP_CACHE_SIZE:
      g_value_set_uint (value, atomr_cudnn_actor_get_cache_size (self));
      break;
    case PROP_AUTOTUNE:
      g_value_set_boolean (value, atomr_cudnn_actor_get_autotune (self));
      break;
    case PROP_DROPOUT_SEED:
      g_value_set_uint64 (value, atomr_cudnn_actor_get_dropout_seed (self));
      break;
    case PROP_LEGACY_CONVOLUTION:
      g_value_set_boolean (value, atomr_cudnn_actor_get_legacy_convolution (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_cudnn_actor_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  AtomrCudnnActor *self = ATOMR_CUDNN_ACTOR (object);

  switch (prop_id)
    {
    case PROP_WORKSPACE_LIMIT:
      atomr_cudnn_actor_set_workspace_limit (self, g_value_get_uint64 (value));
      break;
    case PROP_CACHE_CAPACITY:
      atomr_cudnn_actor_set_cache_capacity (self, g_value_get_uint (value));
      break;
    case PROP_AUTOTUNE:
      atomr_cudnn_actor_set_autotune (self, g_value_get_boolean (value));
      break;
    case PROP_DROPOUT_SEED:
      atomr_cudnn_actor_set_dropout_seed (self, g_value_get_uint64 (value));
      break;
    case PROP_LEGACY_CONVOLUTION:
      atomr_cudnn_actor_set_legacy_convolution (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_cudnn_actor_class_init (AtomrCudnnActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_cudnn_actor_finalize;
  object_class->get_property = atomr_cudnn_actor_get_property;
  object_class->set_property = atomr_cudnn_actor_set_property;
  actor_class->library = "cudnn";
  actor_class->setup = atomr_cudnn_actor_setup;
  actor_class->teardown = atomr_cudnn_actor_teardown;

  /**
   * AtomrCudnnActor:workspace-size:
   *
   * Bytes of device memory the actor's workspace holds now: the most any
   * chosen algorithm needed so far (0 until then, and after a context
   * rebuild).  Notified on the actor's thread.
   *
   * Since: 0.2
   */
  properties[PROP_WORKSPACE_SIZE] =
    g_param_spec_uint64 ("workspace-size", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:workspace-limit:
   *
   * The most workspace an algorithm may need to be chosen (default
   * 1 GiB).  Applies to plans built after the change.
   *
   * Since: 0.2
   */
  properties[PROP_WORKSPACE_LIMIT] =
    g_param_spec_uint64 ("workspace-limit", NULL, NULL, 0, G_MAXUINT64, DEFAULT_WORKSPACE_LIMIT,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:cache-capacity:
   *
   * How many plans (descriptors and chosen algorithm of one distinct
   * request) the cache keeps; the least recently used go first.
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_CAPACITY] =
    g_param_spec_uint ("cache-capacity", NULL, NULL, 1, G_MAXUINT, DEFAULT_CACHE_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:cache-hits:
   *
   * Requests that found their plan in the cache.  Not notified (it
   * changes with every request).
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_HITS] =
    g_param_spec_uint64 ("cache-hits", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCudnnActor:cache-misses:
   *
   * Requests that had to build their plan.  Not notified.
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_MISSES] =
    g_param_spec_uint64 ("cache-misses", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrCudnnActor:cache-size:
   *
   * Plans in the cache now.  Notified on the actor's thread.
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_SIZE] =
    g_param_spec_uint ("cache-size", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:autotune:
   *
   * Choose convolution algorithms by timing every candidate
   * (cudnnFind*Algorithm, once per distinct request, blocking the actor's
   * thread while it runs) instead of cuDNN's heuristics.
   *
   * Since: 0.2
   */
  properties[PROP_AUTOTUNE] =
    g_param_spec_boolean ("autotune", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:dropout-seed:
   *
   * The seed of the actor's dropout random state.  Setting it (even to
   * the same value) restarts the state: the dropout requests submitted
   * after it draw the same masks as after any other setting of that seed.
   * The state is built on the first dropout request (and again after a
   * context rebuild).
   *
   * Since: 0.2
   */
  properties[PROP_DROPOUT_SEED] =
    g_param_spec_uint64 ("dropout-seed", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrCudnnActor:legacy-convolution:
   *
   * Run convolutions (forward, backward data, backward filter, and the
   * fused convolution + bias + activation) through cuDNN's legacy entry
   * points (cudnnConvolutionForward, ...,
   * cudnnConvolutionBiasActivationForward) instead of cached backend-API
   * execution plans.
   *
   * By default a convolution runs as a backend execution plan of one
   * convolution operation (the fused one: the convolution and its
   * pointwise nodes), built once per distinct request (shapes,
   * strides, dtype, pointer alignments, parameters, alpha and beta) and
   * kept in the plan cache; each call is one cudnnBackendExecute.  The
   * legacy calls build a plan inside cuDNN on every call, a host cost that
   * can be as long as the kernel.  A request the backend refuses runs
   * through the legacy call all the same.  The operation's trace detail
   * says which path ran: "backend", "legacy", or "legacy (backend
   * refused: …)" with cuDNN's reason.  With
   * [property@Atomr.CudnnActor:autotune] set, convolutions take the legacy
   * path (cudnnFind*Algorithm times the candidates there).
   *
   * The default is %FALSE unless the environment variable
   * `ATOMR_CUDNN_CONV_LEGACY` is set to anything but "0" when the actor
   * is created.  Applies to requests made after the change.
   *
   * Since: 0.2
   */
  properties[PROP_LEGACY_CONVOLUTION] =
    g_param_spec_boolean ("legacy-convolution", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_cudnn_actor_init (AtomrCudnnActor *self)
{
  g_mutex_init (&self->lock);
  self->plans = g_hash_table_new (plan_key_hash, plan_key_equal);
  g_queue_init (&self->lru);
  self->capacity = DEFAULT_CACHE_CAPACITY;
  self->workspace_limit = DEFAULT_WORKSPACE_LIMIT;
  {
    const gchar *env = g_getenv ("ATOMR_CUDNN_CONV_LEGACY");
    self->conv_legacy = env != NULL && env[0] != '\0' && g_strcmp0 (env, "0") != 0;
  }
  self->graph_plans = atomr_cudnn_plan_cache_new (DEFAULT_CACHE_CAPACITY,
                                                  (GDestroyNotify) atomr_cudnn_backend_plan_free);
  self->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * atomr_cudnn_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a cuDNN actor with its own stream and handle, bound to the
 * calling thread's thread-default main context.  cuDNN is loaded on first
 * use; when it cannot be, this fails with %ATOMR_ERROR_NOT_SUPPORTED
 * naming the files tried.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.2
 */
AtomrCudnnActor *
atomr_cudnn_actor_new (AtomrDevice  *device,
                       GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_CUDNN_ACTOR, device, NULL, error);
}

/**
 * atomr_cudnn_actor_get_workspace_size:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets the bytes the workspace holds now.
 *
 * This is the value of the [property@Atomr.CudnnActor:workspace-size] property.
 *
 * Returns: the bytes the workspace holds now
 *
 * Since: 0.2
 */
guint64
atomr_cudnn_actor_get_workspace_size (AtomrCudnnActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->workspace_size;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_get_workspace_limit:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets the most workspace a chosen algorithm may need.
 *
 * This is the value of the [property@Atomr.CudnnActor:workspace-limit] property.
 *
 * Returns: the most workspace a chosen algorithm may need
 *
 * Since: 0.2
 */
guint64
atomr_cudnn_actor_get_workspace_limit (AtomrCudnnActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->workspace_limit;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_set_workspace_limit:
 * @self: an [class@Atomr.CudnnActor]
 * @limit: bytes
 *
 * Sets [property@Atomr.CudnnActor:workspace-limit].  May be called from any thread.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_set_workspace_limit (AtomrCudnnActor *self,
                                       guint64          limit)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_mutex_lock (&self->lock);
  changed = self->workspace_limit != limit;
  self->workspace_limit = limit;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE_LIMIT]);
}

/**
 * atomr_cudnn_actor_get_cache_capacity:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets how many plans the cache keeps.
 *
 * This is the value of the [property@Atomr.CudnnActor:cache-capacity] property.
 *
 * Returns: how many plans the cache keeps
 *
 * Since: 0.2
 */
guint
atomr_cudnn_actor_get_cache_capacity (AtomrCudnnActor *self)
{
  guint v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->capacity;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_set_cache_capacity:
 * @self: an [class@Atomr.CudnnActor]
 * @capacity: how many plans to keep (≥ 1)
 *
 * Sets [property@Atomr.CudnnActor:cache-capacity], dropping the least recently used
 * plans beyond it.  May be called from any thread.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_set_cache_capacity (AtomrCudnnActor *self,
                                      guint            capacity)
{
  GList *evicted;
  gboolean changed;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_return_if_fail (capacity >= 1);
  g_mutex_lock (&self->lock);
  changed = self->capacity != capacity;
  self->capacity = capacity;
  evicted = cache_trim_locked (self, capacity);
  g_mutex_unlock (&self->lock);
  /* the backend-graph plans have the same bound, counted apart */
  atomr_cudnn_plan_cache_set_capacity (self->graph_plans, capacity);
  /* Plans hold host descriptors only: safe to destroy on any thread.  A
   * plan in use on the actor's thread is never evicted from here: the
   * actor's thread holds it only between plan_get() and the cuDNN call,
   * and it is the most recent entry then (capacity ≥ 1). */
  free_plans (evicted);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_CAPACITY]);
  if (evicted)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_SIZE]);
}

/**
 * atomr_cudnn_actor_get_cache_hits:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets how many requests that found their plan in the cache.
 *
 * This is the value of the [property@Atomr.CudnnActor:cache-hits] property.
 *
 * Returns: requests that found their plan in the cache
 *
 * Since: 0.2
 */
guint64
atomr_cudnn_actor_get_cache_hits (AtomrCudnnActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->hits;
  g_mutex_unlock (&self->lock);
  return v + atomr_cudnn_plan_cache_get_hits (self->graph_plans);
}

/**
 * atomr_cudnn_actor_get_cache_misses:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets how many requests that had to build their plan.
 *
 * This is the value of the [property@Atomr.CudnnActor:cache-misses] property.
 *
 * Returns: requests that had to build their plan
 *
 * Since: 0.2
 */
guint64
atomr_cudnn_actor_get_cache_misses (AtomrCudnnActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->misses;
  g_mutex_unlock (&self->lock);
  return v + atomr_cudnn_plan_cache_get_misses (self->graph_plans);
}

/**
 * atomr_cudnn_actor_get_cache_size:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets how many plans the cache holds now.
 *
 * This is the value of the [property@Atomr.CudnnActor:cache-size] property.
 *
 * Returns: plans in the cache now
 *
 * Since: 0.2
 */
guint
atomr_cudnn_actor_get_cache_size (AtomrCudnnActor *self)
{
  guint v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->lru.length;
  g_mutex_unlock (&self->lock);
  return v + atomr_cudnn_plan_cache_get_size (self->graph_plans);
}

/**
 * atomr_cudnn_actor_get_autotune:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets whether convolution algorithms are chosen by timing.
 *
 * This is the value of the [property@Atomr.CudnnActor:autotune] property.
 *
 * Returns: whether convolution algorithms are chosen by timing
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_get_autotune (AtomrCudnnActor *self)
{
  gboolean v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), FALSE);
  g_mutex_lock (&self->lock);
  v = self->autotune;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_set_autotune:
 * @self: an [class@Atomr.CudnnActor]
 * @autotune: whether to time the candidates
 *
 * Sets [property@Atomr.CudnnActor:autotune]; applies to plans built afterwards.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_set_autotune (AtomrCudnnActor *self,
                                gboolean         autotune)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  autotune = autotune != FALSE;
  g_mutex_lock (&self->lock);
  changed = self->autotune != autotune;
  self->autotune = autotune;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AUTOTUNE]);
}

/* ------------------------------------------------------------------ */
/* For the operations in other files (atomr-cudnn-actor-private.h)      */

cudnnHandle_t
atomr_cudnn_actor_get_handle (AtomrCudnnActor *self)
{
  return self->handle;
}

gboolean
atomr_cudnn_actor_reserve_workspace (AtomrCudnnActor  *self,
                                     CUstream          stream,
                                     gsize             size,
                                     void            **workspace,
                                     GError          **error)
{
  if (!workspace_reserve (self, stream, size, error))
    return FALSE;
  *workspace = (void *) (uintptr_t) self->workspace;
  return TRUE;
}

AtomrCudnnPlanCache *
atomr_cudnn_actor_get_graph_plans (AtomrCudnnActor *self)
{
  return self->graph_plans;
}

GHashTable *
atomr_cudnn_actor_get_kernels (AtomrCudnnActor *self)
{
  return self->kernels;
}

void
atomr_cudnn_actor_get_dropout_request (AtomrCudnnActor *self,
                                       guint64         *seed,
                                       guint           *generation)
{
  g_mutex_lock (&self->lock);
  *seed = self->dropout_seed;
  *generation = self->dropout_generation;
  g_mutex_unlock (&self->lock);
}

AtomrCudnnDropoutState **
atomr_cudnn_actor_get_dropout_state (AtomrCudnnActor *self)
{
  return &self->dropout;
}

gboolean
atomr_cudnn_tensor_desc_new (AtomrTensor              *t,
                             AtomrDtype                dtype,
                             const gchar              *opname,
                             cudnnTensorDescriptor_t  *desc,
                             GError                  **error)
{
  int dims[MAX_DIMS], strides[MAX_DIMS];
  guint n;
  const gint64 *shape = atomr_tensor_get_shape (t, &n);
  const gint64 *st = atomr_tensor_get_strides (t, NULL);

  /* as check_view(): trailing 1s up to 4 dimensions, and a size-1
   * dimension gets the span of those after it as stride */
  for (guint i = 0; i < MAX (n, 4); i++)
    {
      dims[i] = i < n ? (int) shape[i] : 1;
      strides[i] = i < n && shape[i] > 1 ? (int) st[i] : 1;
    }
  for (guint i = 0; i < n; i++)
    if (shape[i] == 1)
      {
        gint64 span = 1;
        for (guint j = i + 1; j < n; j++)
          if (shape[j] > 1)
            span = MAX (span, st[j] * shape[j]);
        strides[i] = (int) MIN (span, G_MAXINT32);
      }
  *desc = NULL;
  if (!cudnn_check (cudnnCreateTensorDescriptor (desc), "cudnnCreateTensorDescriptor", opname, error))
    return FALSE;
  if (!cudnn_check (cudnnSetTensorNdDescriptor (*desc, cudnn_dtype (dtype), (int) MAX (n, 4), dims, strides),
                    "cudnnSetTensorNdDescriptor", opname, error))
    {
      cudnnDestroyTensorDescriptor (*desc);
      *desc = NULL;
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_cudnn_actor_get_dropout_seed:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets the seed of the dropout random state.
 *
 * This is the value of the [property@Atomr.CudnnActor:dropout-seed] property.
 *
 * Returns: the dropout seed
 *
 * Since: 0.2
 */
guint64
atomr_cudnn_actor_get_dropout_seed (AtomrCudnnActor *self)
{
  guint64 v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->dropout_seed;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_set_dropout_seed:
 * @self: an [class@Atomr.CudnnActor]
 * @seed: the seed
 *
 * Sets [property@Atomr.CudnnActor:dropout-seed] and restarts the dropout
 * random state from it, in submission order: requests submitted before
 * this call draw from the old state, those after from the new one.  May be
 * called from any thread.
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_set_dropout_seed (AtomrCudnnActor *self,
                                    guint64          seed)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  g_mutex_lock (&self->lock);
  changed = self->dropout_seed != seed;
  self->dropout_seed = seed;
  self->dropout_generation++;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DROPOUT_SEED]);
}

/**
 * atomr_cudnn_actor_get_legacy_convolution:
 * @self: an [class@Atomr.CudnnActor]
 *
 * Gets whether convolutions run through cuDNN's legacy entry points.
 *
 * This is the value of the [property@Atomr.CudnnActor:legacy-convolution]
 * property.
 *
 * Returns: whether convolutions take the legacy path
 *
 * Since: 0.2
 */
gboolean
atomr_cudnn_actor_get_legacy_convolution (AtomrCudnnActor *self)
{
  gboolean v;

  g_return_val_if_fail (ATOMR_IS_CUDNN_ACTOR (self), FALSE);
  g_mutex_lock (&self->lock);
  v = self->conv_legacy;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_cudnn_actor_set_legacy_convolution:
 * @self: an [class@Atomr.CudnnActor]
 * @legacy: whether convolutions take cuDNN's legacy entry points
 *
 * Sets [property@Atomr.CudnnActor:legacy-convolution]; applies to
 * requests made afterwards (plans of both paths stay in the cache).
 *
 * Since: 0.2
 */
void
atomr_cudnn_actor_set_legacy_convolution (AtomrCudnnActor *self,
                                          gboolean         legacy)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_CUDNN_ACTOR (self));
  legacy = legacy != FALSE;
  g_mutex_lock (&self->lock);
  changed = self->conv_legacy != legacy;
  self->conv_legacy = legacy;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LEGACY_CONVOLUTION]);
}

/* ------------------------------------------------------------------ */
/* For operations in other files (atomr-cudnn-ext-private.h)            */

AtomrCudnnBackendGraph *
atomr_cudnn_actor_conv_backend_graph_internal (AtomrCudnnActor   *self,
                                               guint              pass,
                                               AtomrConvolution  *conv,
                                               gdouble            alpha,
                                               AtomrTensor       *x,
                                               AtomrTensor       *w,
                                               AtomrTensor       *y,
                                               gdouble            beta,
                                               GError           **error)
{
  static const Kind kinds[] = { KIND_CONV_FWD, KIND_CONV_BWD_DATA, KIND_CONV_BWD_FILTER };
  static const gchar *const names[] = { "conv-fwd", "conv-bwd-data", "conv-bwd-filter" };
  CudnnRequest r;
  AtomrCudnnBackendGraph *g;

  g_return_val_if_fail (pass < G_N_ELEMENTS (kinds), NULL);
  memset (&r, 0, sizeof r);
  r.opname = names[pass];
  r.key.kind = kinds[pass];
  r.key.dtype = -1;
  if (!check_conv (self, &r, conv, "x", x, "w", w, "y", y, error))
    g = NULL;
  else
    {
      conv_key_backend (&r, alpha, beta, x, w, y);
      g = conv_backend_graph (&r, error);
    }
  for (guint i = 0; i < N_SLOTS; i++)
    g_clear_object (&r.t[i]);
  return g;
}

void
atomr_cudnn_actor_get_conv_runs_internal (AtomrCudnnActor *self,
                                          guint           *backend,
                                          guint           *legacy,
                                          guint           *pack_builds)
{
  if (backend != NULL)
    *backend = (guint) g_atomic_int_get (&self->conv_backend_runs);
  if (legacy != NULL)
    *legacy = (guint) g_atomic_int_get (&self->conv_legacy_runs);
  if (pack_builds != NULL)
    *pack_builds = (guint) g_atomic_int_get (&self->conv_pack_builds);
}

static void
ext_plan_key (GBytes  *key,
              PlanKey *k)
{
  gsize len = 0;
  const guint8 *data = g_bytes_get_data (key, &len);
  guint8 digest[32];
  gsize digest_len = sizeof digest;
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);

  g_checksum_update (sum, data, len);
  g_checksum_get_digest (sum, digest, &digest_len);
  g_checksum_free (sum);
  memset (k, 0, sizeof *k);
  k->kind = -1;
  k->dtype = -1;
  memcpy (k->dims[0], digest, sizeof digest);
}

gpointer
atomr_cudnn_actor_lookup_plan_internal (AtomrCudnnActor *self,
                                        GBytes          *key)
{
  PlanKey k;
  Plan *plan;

  ext_plan_key (key, &k);
  g_mutex_lock (&self->lock);
  plan = g_hash_table_lookup (self->plans, &k);
  if (plan != NULL && plan->ext_key != NULL && g_bytes_equal (plan->ext_key, key))
    {
      self->hits++;
      g_queue_unlink (&self->lru, &plan->link);
      g_queue_push_head_link (&self->lru, &plan->link);
      g_mutex_unlock (&self->lock);
      return plan->ext;
    }
  self->misses++;
  g_mutex_unlock (&self->lock);
  return NULL;
}

void
atomr_cudnn_actor_insert_plan_internal (AtomrCudnnActor *self,
                                        GBytes          *key,
                                        gpointer         data,
                                        GDestroyNotify   destroy)
{
  Plan *plan = g_new0 (Plan, 1);
  Plan *old;
  GList *evicted = NULL;

  ext_plan_key (key, &plan->key);
  plan->link.data = plan;
  plan->ext_key = g_bytes_ref (key);
  plan->ext = data;
  plan->ext_free = destroy;

  g_mutex_lock (&self->lock);
  /* A digest collision (or a plan built twice): the new one replaces it. */
  old = g_hash_table_lookup (self->plans, &plan->key);
  if (old != NULL)
    {
      g_hash_table_remove (self->plans, &old->key);
      g_queue_unlink (&self->lru, &old->link);
      evicted = g_list_prepend (evicted, old);
    }
  g_queue_push_head_link (&self->lru, &plan->link);
  g_hash_table_insert (self->plans, &plan->key, plan);
  evicted = g_list_concat (evicted, cache_trim_locked (self, MAX (self->capacity, 1)));
  g_mutex_unlock (&self->lock);
  free_plans (evicted);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_SIZE]);
}

gboolean
atomr_cudnn_actor_reserve_space_internal (AtomrCudnnActor  *self,
                                          CUstream          stream,
                                          gsize             size,
                                          CUdeviceptr      *ptr,
                                          GError          **error)
{
  CUdeviceptr p = 0;

  if (size > self->reserve_size || self->reserve == 0)
    {
      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&p, MAX (size, 1), stream), "cuMemAllocAsync", error))
        return FALSE;
      if (self->reserve)
        ATOMR_CU->cuMemFreeAsync (self->reserve, stream);
      self->reserve = p;
      self->reserve_size = MAX (size, 1);
      g_clear_pointer (&self->reserve_owner, g_bytes_unref);
    }
  *ptr = self->reserve;
  return TRUE;
}

GBytes *
atomr_cudnn_actor_get_reserve_owner_internal (AtomrCudnnActor *self)
{
  return self->reserve_owner;
}

void
atomr_cudnn_actor_set_reserve_owner_internal (AtomrCudnnActor *self,
                                              GBytes          *owner)
{
  if (owner)
    g_bytes_ref (owner);
  g_clear_pointer (&self->reserve_owner, g_bytes_unref);
  self->reserve_owner = owner;
}
