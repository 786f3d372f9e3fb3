/* atomr-blas-lt-actor.c — cuBLASLt matmul with fused epilogues
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "atomr-cublasLt-table-private.h"
#pragma GCC diagnostic pop

#include "actors/atomr-library-private.h"
#include "actors/blaslt/atomr-blas-lt-actor.h"
#include "actors/blaslt/atomr-lt-plan-private.h"

/**
 * AtomrBlasLtActor:
 *
 * An actor that owns a cuBLASLt handle and runs matmuls with fused
 * epilogues (bias, ReLU, GELU, their auxiliary outputs and the backward
 * forms with bias gradients).
 *
 * The algorithm search (cublasLtMatmulAlgoGetHeuristic) runs once per
 * problem: descriptors, layouts and the chosen algorithm are cached under
 * a key of (m, n, k, transposes, leading dimensions, dtypes, epilogue,
 * compute type, GPU architecture).  The cache outlives context rebuilds
 * (it holds no device state); its hits and misses are counted.
 *
 * One workspace buffer, allocated on the first matmul of a context
 * generation, is reused by every call: calls are ordered on the actor's
 * stream, so they never use it at the same time.
 *
 * On the host test device there is no handle: requests are validated and
 * then answered with %ATOMR_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.1
 */

#define WORKSPACE_SIZE (32u << 20)
#define DEFAULT_CACHE_CAPACITY 128

typedef struct {
  gint64 m, n, k, lda, ldb, ldc, ld_aux;
  gint32 transa, transb, epilogue, dtype_ab, dtype_c, compute, arch;
  gint32 scaled;     /* fp8 scale pointers are set on the descriptor */
  gint32 dtype_b;    /* B may be the other fp8 format */
  gint32 dtype_bias; /* the bias (gradient) dtype, -1 without one */
  gint64 batch, stride_a, stride_b, stride_c;   /* batch 1: strides 0 */
  guint64 workspace_limit;   /* the heuristic's budget, in bytes */
} PlanKey;

typedef struct {
  PlanKey                key;
  AtomrLtPlan            lt;
  GList                  link;      /* in the LRU queue, data = the plan */
} Plan;

struct _AtomrBlasLtActor
{
  AtomrActor        parent_instance;

  cublasLtHandle_t  handle;
  CUdeviceptr       workspace;      /* per generation, lazily */
  GHashTable       *plans;          /* PlanKey* -> Plan*, on the actor's context */
  GQueue            lru;            /* the plans, most recently used first */
  gint              arch;
  guint             cache_capacity; /* atomic */
  gsize             evictions;      /* atomic */
  GMutex            lock;           /* guards user_workspace */
  AtomrBuffer      *user_workspace; /* or NULL: the actor's own */
  gint              compute_type;   /* atomic: AtomrBlasComputeType */
  gsize             hits;           /* atomic */
  gsize             misses;         /* atomic */
};

G_DEFINE_FINAL_TYPE (AtomrBlasLtActor, atomr_blas_lt_actor, ATOMR_TYPE_ACTOR)

G_DEFINE_ENUM_TYPE (AtomrBlasLtEpilogue, atomr_blas_lt_epilogue,
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_NONE, "none"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_RELU, "relu"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_BIAS, "bias"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS, "relu-bias"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_RELU_AUX, "relu-aux"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS, "relu-aux-bias"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_GELU, "gelu"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS, "gelu-bias"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_GELU_AUX, "gelu-aux"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS, "gelu-aux-bias"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_DRELU, "drelu"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD, "drelu-bgrad"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_DGELU, "dgelu"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD, "dgelu-bgrad"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_BGRADA, "bgrada"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_LT_EPILOGUE_BGRADB, "bgradb"))

enum {
  PROP_0,
  PROP_COMPUTE_TYPE,
  PROP_CACHE_HITS,
  PROP_CACHE_MISSES,
  PROP_CACHE_CAPACITY,
  PROP_CACHE_EVICTIONS,
  PROP_WORKSPACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* ------------------------------------------------------------------ */
/* Epilogues                                                            */

typedef enum {
  EPI_BIAS_IN   = 1 << 0,   /* bias read: m elements */
  EPI_BIAS_OUT  = 1 << 1,   /* bias gradient written */
  EPI_BIAS_N    = 1 << 2,   /* the bias has n elements (BGRADB) */
  EPI_AUX_OUT   = 1 << 3,
  EPI_AUX_IN    = 1 << 4,
  EPI_AUX_MASK  = 1 << 5,   /* aux is a ReLU bit mask */
} EpilogueFlags;

static const struct {
  cublasLtEpilogue_t lt;
  guint              flags;
} epilogues[] = {
  [ATOMR_BLAS_LT_EPILOGUE_NONE]          = { CUBLASLT_EPILOGUE_DEFAULT, 0 },
  [ATOMR_BLAS_LT_EPILOGUE_RELU]          = { CUBLASLT_EPILOGUE_RELU, 0 },
  [ATOMR_BLAS_LT_EPILOGUE_BIAS]          = { CUBLASLT_EPILOGUE_BIAS, EPI_BIAS_IN },
  [ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS]     = { CUBLASLT_EPILOGUE_RELU_BIAS, EPI_BIAS_IN },
  [ATOMR_BLAS_LT_EPILOGUE_RELU_AUX]      = { CUBLASLT_EPILOGUE_RELU_AUX, EPI_AUX_OUT | EPI_AUX_MASK },
  [ATOMR_BLAS_LT_EPILOGUE_RELU_AUX_BIAS] = { CUBLASLT_EPILOGUE_RELU_AUX_BIAS,
                                             EPI_BIAS_IN | EPI_AUX_OUT | EPI_AUX_MASK },
  [ATOMR_BLAS_LT_EPILOGUE_GELU]          = { CUBLASLT_EPILOGUE_GELU, 0 },
  [ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS]     = { CUBLASLT_EPILOGUE_GELU_BIAS, EPI_BIAS_IN },
  [ATOMR_BLAS_LT_EPILOGUE_GELU_AUX]      = { CUBLASLT_EPILOGUE_GELU_AUX, EPI_AUX_OUT },
  [ATOMR_BLAS_LT_EPILOGUE_GELU_AUX_BIAS] = { CUBLASLT_EPILOGUE_GELU_AUX_BIAS, EPI_BIAS_IN | EPI_AUX_OUT },
  [ATOMR_BLAS_LT_EPILOGUE_DRELU]         = { CUBLASLT_EPILOGUE_DRELU, EPI_AUX_IN | EPI_AUX_MASK },
  [ATOMR_BLAS_LT_EPILOGUE_DRELU_BGRAD]   = { CUBLASLT_EPILOGUE_DRELU_BGRAD,
                                             EPI_BIAS_OUT | EPI_AUX_IN | EPI_AUX_MASK },
  [ATOMR_BLAS_LT_EPILOGUE_DGELU]         = { CUBLASLT_EPILOGUE_DGELU, EPI_AUX_IN },
  [ATOMR_BLAS_LT_EPILOGUE_DGELU_BGRAD]   = { CUBLASLT_EPILOGUE_DGELU_BGRAD, EPI_BIAS_OUT | EPI_AUX_IN },
  [ATOMR_BLAS_LT_EPILOGUE_BGRADA]        = { CUBLASLT_EPILOGUE_BGRADA, EPI_BIAS_OUT },
  [ATOMR_BLAS_LT_EPILOGUE_BGRADB]        = { CUBLASLT_EPILOGUE_BGRADB, EPI_BIAS_OUT | EPI_BIAS_N },
};

static const gchar *
epilogue_nick (AtomrBlasLtEpilogue epilogue)
{
  GEnumClass *klass = g_type_class_ref (ATOMR_TYPE_BLAS_LT_EPILOGUE);
  GEnumValue *value = g_enum_get_value (klass, epilogue);

  g_type_class_unref (klass);    /* static type: the nick stays valid */
  return value ? value->value_nick : "invalid";
}

/* ------------------------------------------------------------------ */
/* Requests and plans                                                   */

typedef struct {
  PlanKey       key;
  gfloat        alpha, beta;
  AtomrBuffer  *a, *b, *c, *bias, *aux;    /* not owned: the op keeps them */
  AtomrBuffer  *scale_a, *scale_b;         /* fp8 scale sets, or NULL */
  AtomrBuffer  *workspace;                 /* the user's, or NULL for the actor's own */
} MatmulRequest;

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
plan_free (gpointer data)
{
  Plan *plan = data;

  /* Descriptors are host objects: safe to drop whatever the context. */
  atomr_lt_plan_clear (&plan->lt);
  g_free (plan);
}

static gboolean
lt_check (cublasStatus_t  status,
          const gchar    *call,
          GError        **error)
{
  return atomr_library_check (status == CUBLAS_STATUS_SUCCESS, "cuBLASLt", call,
                              cublasLtGetStatusName (status), status,
                              status == CUBLAS_STATUS_ALLOC_FAILED,
                              status == CUBLAS_STATUS_NOT_SUPPORTED ||
                              status == CUBLAS_STATUS_ARCH_MISMATCH,
                              error);
}

static cudaDataType
lt_data_type (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return CUDA_R_16F;
    case ATOMR_DTYPE_BF16: return CUDA_R_16BF;
    case ATOMR_DTYPE_F8_E4M3: return CUDA_R_8F_E4M3;
    case ATOMR_DTYPE_F8_E5M2: return CUDA_R_8F_E5M2;
    default: return CUDA_R_32F;
    }
}

static cublasComputeType_t
lt_compute_type (AtomrBlasComputeType compute)
{
  switch (compute)
    {
    case ATOMR_BLAS_COMPUTE_F32_PEDANTIC: return CUBLAS_COMPUTE_32F_PEDANTIC;
    case ATOMR_BLAS_COMPUTE_F32_FAST_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ATOMR_BLAS_COMPUTE_F32_FAST_F16: return CUBLAS_COMPUTE_32F_FAST_16F;
    case ATOMR_BLAS_COMPUTE_F32_FAST_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return CUBLAS_COMPUTE_32F;
    }
}

#define SET_DESC(plan, attr, value)                                                    \
  lt_check (cublasLtMatmulDescSetAttribute ((plan)->lt.desc, attr, &(value), sizeof (value)), \
            "cublasLtMatmulDescSetAttribute (" #attr ")", error)

static gboolean
set_pointers (Plan          *plan,
              MatmulRequest *r,
              GError       **error)
{
  guint flags = epilogues[r->key.epilogue].flags;

  if (flags & (EPI_BIAS_IN | EPI_BIAS_OUT))
    {
      gpointer bias = (gpointer) (uintptr_t) atomr_buffer_get_ptr (r->bias);
      if (!SET_DESC (plan, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias))
        return FALSE;
    }
  if (flags & (EPI_AUX_IN | EPI_AUX_OUT))
    {
      gpointer aux = (gpointer) (uintptr_t) atomr_buffer_get_ptr (r->aux);
      if (!SET_DESC (plan, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, aux))
        return FALSE;
    }
  if (r->key.scaled)
    {
      /* A scale set: dequantisation factors the GPU reads, so they can be
       * updated on the GPU (amax history) without the host. */
      gpointer sa = r->scale_a ? (gpointer) (uintptr_t) atomr_buffer_get_ptr (r->scale_a) : NULL;
      gpointer sb = r->scale_b ? (gpointer) (uintptr_t) atomr_buffer_get_ptr (r->scale_b) : NULL;
      if (!SET_DESC (plan, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, sa) ||
          !SET_DESC (plan, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, sb))
        return FALSE;
    }
  return TRUE;
}

/* Builds descriptors and runs the heuristic: the slow path, once per key. */
static Plan *
plan_new (AtomrBlasLtActor *self,
          MatmulRequest    *r,
          GError          **error)
{
  const PlanKey *key = &r->key;
  g_autoptr(GError) local = NULL;
  Plan *plan = g_new0 (Plan, 1);
  cudaDataType ab = lt_data_type (key->dtype_ab);
  cudaDataType bt = lt_data_type (key->dtype_b);
  cudaDataType ct = lt_data_type (key->dtype_c);
  guint flags = epilogues[key->epilogue].flags;
  cublasLtEpilogue_t epi = epilogues[key->epilogue].lt;
  gint32 transa = key->transa, transb = key->transb;
  int returned = 0;
  const gchar *call = NULL;
  cublasStatus_t st;
  gboolean ok;

  plan->key = *key;
  st = atomr_lt_plan_build (&plan->lt, key->compute, CUDA_R_32F, transa, transb, ab, bt, ct,
                            key->m, key->n, key->k, key->lda, key->ldb, key->ldc, &call);
  ok = lt_check (st, call, error) &&
       SET_DESC (plan, CUBLASLT_MATMUL_DESC_EPILOGUE, epi);
  if (ok && key->batch > 1)
    {
      cublasLtMatrixLayout_t layouts[3] = { plan->lt.la, plan->lt.lb, plan->lt.lc };
      gint64 strides[3] = { key->stride_a, key->stride_b, key->stride_c };
      gint32 batch = (gint32) key->batch;

      for (guint i = 0; ok && i < 3; i++)
        ok = lt_check (cublasLtMatrixLayoutSetAttribute (layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &batch, sizeof batch),
                       "cublasLtMatrixLayoutSetAttribute (BATCH_COUNT)", error) &&
             lt_check (cublasLtMatrixLayoutSetAttribute (layouts[i],
                                                         CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                         &strides[i], sizeof strides[i]),
                       "cublasLtMatrixLayoutSetAttribute (STRIDED_BATCH_OFFSET)", error);
    }
  if (ok && (flags & (EPI_BIAS_IN | EPI_BIAS_OUT)))
    {
      /* Always spelt out: cuBLASLt's default (the dtype of D) is wrong for
       * fp8 with an f32 D, whose bias is bf16. */
      gint32 bias_type = lt_data_type (key->dtype_bias);
      ok = SET_DESC (plan, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type);
    }
  if (ok && (flags & (EPI_AUX_IN | EPI_AUX_OUT)))
    {
      gint64 ld_aux = key->ld_aux;
      ok = SET_DESC (plan, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, ld_aux);
    }
  if (ok)
    ok = set_pointers (plan, r, error);
  if (ok)
    {
      st = atomr_lt_plan_find_algo (&plan->lt, self->handle, key->workspace_limit, NULL,
                                    &returned, &call);
      /* Our validation passed, so INVALID_VALUE from the heuristic (it ran:
       * returned is not -1) means cuBLASLt does not implement the
       * combination (epilogue, dtypes, layouts). */
      if (returned >= 0 &&
          (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
           (st == CUBLAS_STATUS_SUCCESS && returned == 0)))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "cuBLASLt: no algorithm (%s) for matmul m=%" G_GINT64_FORMAT " n=%" G_GINT64_FORMAT
                       " k=%" G_GINT64_FORMAT " %s%s A/B %s C %s epilogue %s on sm_%d",
                       returned == 0 && st == CUBLAS_STATUS_SUCCESS ? "no heuristic result"
                                                                    : cublasLtGetStatusName (st),
                       key->m, key->n, key->k, transa == CUBLAS_OP_N ? "N" : "T",
                       transb == CUBLAS_OP_N ? "N" : "T",
                       atomr_dtype_get_name (key->dtype_ab), atomr_dtype_get_name (key->dtype_c),
                       epilogue_nick (key->epilogue), key->arch);
          ok = FALSE;
        }
      else
        ok = lt_check (st, call, error);
    }
  if (!ok)
    {
      plan_free (plan);
      return NULL;
    }
  return plan;
}

/* Drops the least recently used plans beyond @capacity (host objects only:
 * safe whatever is in flight, since cuBLASLt copies what it needs at
 * enqueue). */
static void
evict_to (AtomrBlasLtActor *self,
          guint             capacity)
{
  while (self->lru.length > capacity)
    {
      Plan *plan = g_queue_pop_tail_link (&self->lru)->data;

      g_hash_table_remove (self->plans, &plan->key);
      g_atomic_pointer_add (&self->evictions, 1);
    }
}

static gboolean
matmul_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (atomr_op_get_actor (op));
  MatmulRequest *r = atomr_op_get_data (op);
  CUstream stream = atomr_op_get_cu_stream (op);
  CUdeviceptr workspace;
  Plan *plan;

  if (atomr_op_is_host (op) || self->handle == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuBLASLt: matmul needs a CUDA device; the host test device has no cuBLASLt");
      return FALSE;
    }

  r->key.arch = self->arch;
  plan = g_hash_table_lookup (self->plans, &r->key);
  if (plan)
    {
      g_atomic_pointer_add (&self->hits, 1);
      g_queue_unlink (&self->lru, &plan->link);
      g_queue_push_head_link (&self->lru, &plan->link);
      if (!set_pointers (plan, r, error))
        return FALSE;
    }
  else
    {
      g_atomic_pointer_add (&self->misses, 1);
      plan = plan_new (self, r, error);
      if (plan == NULL)
        return FALSE;
      plan->link.data = plan;
      g_hash_table_insert (self->plans, &plan->key, plan);
      g_queue_push_head_link (&self->lru, &plan->link);
    }

  if (r->workspace)
    workspace = atomr_buffer_get_ptr (r->workspace);
  else
    {
      if (plan->lt.workspace > 0 && self->workspace == 0 &&
          !atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&self->workspace, WORKSPACE_SIZE, stream),
                             "cuMemAllocAsync (cuBLASLt workspace)", error))
        {
          self->workspace = 0;
          return FALSE;
        }
      workspace = self->workspace;
    }

  return lt_check (cublasLtMatmul (self->handle, plan->lt.desc, &r->alpha,
                                   (void *) (uintptr_t) atomr_buffer_get_ptr (r->a), plan->lt.la,
                                   (void *) (uintptr_t) atomr_buffer_get_ptr (r->b), plan->lt.lb,
                                   &r->beta,
                                   (void *) (uintptr_t) atomr_buffer_get_ptr (r->c), plan->lt.lc,
                                   (void *) (uintptr_t) atomr_buffer_get_ptr (r->c), plan->lt.lc,
                                   &plan->lt.algo,
                                   plan->lt.workspace ? (void *) (uintptr_t) workspace : NULL,
                                   plan->lt.workspace, (cudaStream_t) stream),
                   "cublasLtMatmul", error) &&
         /* after the call: the plan in use is the most recent, never evicted */
         (evict_to (self, MAX (g_atomic_int_get (&self->cache_capacity), 1)), TRUE);
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */

#define FAIL_ARG(...) \
  atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__))

static void matmul_submit (AtomrBlasLtActor *self, gpointer source_tag, AtomrTranspose transa,
                           AtomrTranspose transb, gint64 m, gint64 n, gint64 k, gdouble alpha,
                           AtomrBuffer *a, gint64 lda, AtomrBuffer *scale_a, AtomrBuffer *b,
                           gint64 ldb, AtomrBuffer *scale_b, gdouble beta, AtomrBuffer *c,
                           gint64 ldc, AtomrBlasLtEpilogue epilogue, AtomrBuffer *bias,
                           AtomrBuffer *aux, gint64 ld_aux, gint64 batch, gint64 stride_a,
                           gint64 stride_b, gint64 stride_c, gboolean scaled,
                           GCancellable *cancellable, GAsyncReadyCallback callback,
                           gpointer user_data);

/**
 * atomr_blas_lt_actor_matmul_async:
 * @self: an [class@Atomr.BlasLtActor]
 * @transa: how to read @a (%ATOMR_TRANSPOSE_C reads as T)
 * @transb: how to read @b
 * @m: rows of op(A) and D
 * @n: columns of op(B) and D
 * @k: columns of op(A), rows of op(B)
 * @alpha: alpha
 * @a: matrix A: f32, f16 or bf16
 * @lda: leading dimension of @a
 * @b: matrix B, the dtype of @a
 * @ldb: leading dimension of @b
 * @beta: beta; C is read when it is not 0
 * @c: matrix C, overwritten by the result D: the dtype of @a, or f32 when
 *   @a is f16 or bf16
 * @ldc: leading dimension of @c
 * @epilogue: what to fuse after the product
 * @bias: (nullable): the bias (read by the bias epilogues) or the bias
 *   gradient (written by the bgrad epilogues): a packed vector of the
 *   dtype of @c with m elements (n for %ATOMR_BLAS_LT_EPILOGUE_BGRADB);
 *   %NULL for other epilogues
 * @aux: (nullable): the auxiliary matrix of the aux and backward
 *   epilogues: for the ReLU ones a u8 buffer holding a bit mask of
 *   @ld_aux × n bits; for the GELU ones an @ld_aux × n matrix of the dtype
 *   of @c; %NULL for other epilogues
 * @ld_aux: leading dimension of @aux in elements (bits for the ReLU mask:
 *   a multiple of 128; a multiple of 8 for GELU); ignored without @aux
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when D is in @c
 * @user_data: data for @callback
 *
 * D = epilogue (alpha·op(A)·op(B) + beta·C), column-major, D written over
 * C.  The accumulation follows [property@Atomr.BlasLtActor:compute-type].
 *
 * Since: 0.1
 */

void
atomr_blas_lt_actor_matmul_async (AtomrBlasLtActor    *self,
                                  AtomrTranspose       transa,
                                  AtomrTranspose       transb,
                                  gint64               m,
                                  gint64               n,
                                  gint64               k,
                                  gdouble              alpha,
                                  AtomrBuffer         *a,
                                  gint64               lda,
                                  AtomrBuffer         *b,
                                  gint64               ldb,
                                  gdouble              beta,
                                  AtomrBuffer         *c,
                                  gint64               ldc,
                                  AtomrBlasLtEpilogue  epilogue,
                                  AtomrBuffer         *bias,
                                  AtomrBuffer         *aux,
                                  gint64               ld_aux,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self));
  matmul_submit (self, atomr_blas_lt_actor_matmul_async, transa, transb, m, n, k, alpha,
                 a, lda, NULL, b, ldb, NULL, beta, c, ldc, epilogue, bias, aux, ld_aux, 1, 0, 0, 0, FALSE,
                 cancellable, callback, user_data);
}

/**
 * atomr_blas_lt_actor_matmul_scaled_async:
 * @self: an [class@Atomr.BlasLtActor]
 * @m: rows of D
 * @n: columns of D
 * @k: the inner dimension
 * @alpha: alpha
 * @a: matrix A in fp8 (%ATOMR_DTYPE_F8_E4M3 or %ATOMR_DTYPE_F8_E5M2), read
 *   transposed: a k × m column-major matrix
 * @lda: leading dimension of @a (at least k)
 * @scale_a: (nullable): an f32 buffer whose first element multiplies A
 *   (its dequantisation scale), read on the GPU; %NULL for 1
 * @b: matrix B in fp8, k × n column-major (E5M2 with E5M2 A is not
 *   supported by cuBLASLt)
 * @ldb: leading dimension of @b (at least k)
 * @scale_b: (nullable): an f32 buffer whose first element multiplies B
 * @beta: beta; C is read when it is not 0
 * @c: matrix C, overwritten by D: f16, bf16 or f32
 * @ldc: leading dimension of @c
 * @epilogue: what to fuse after the product (as for
 *   [method@Atomr.BlasLtActor.matmul_async])
 * @bias: (nullable): the bias of the bias epilogues (or the gradient
 *   written by the bgrad ones): of the dtype of @c, except bf16 when @c is
 *   f32 (see [func@Atomr.blas_lt_bias_dtype])
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when D is in @c
 * @user_data: data for @callback
 *
 * The fp8 matmul of Hopper-class GPUs (compute capability 8.9 or newer):
 * D = epilogue (alpha · scale_a · scale_b · Aᵀ·B + beta·C), accumulated in
 * f32.  cuBLASLt takes fp8 operands in the "TN" layout only, which this
 * call fixes.  The scales live in device memory so that a training loop can
 * update them on the GPU; the heuristic cache keys on whether they are set.
 *
 * Since: 0.1
 */
void
atomr_blas_lt_actor_matmul_scaled_async (AtomrBlasLtActor    *self,
                                         gint64               m,
                                         gint64               n,
                                         gint64               k,
                                         gdouble              alpha,
                                         AtomrBuffer         *a,
                                         gint64               lda,
                                         AtomrBuffer         *scale_a,
                                         AtomrBuffer         *b,
                                         gint64               ldb,
                                         AtomrBuffer         *scale_b,
                                         gdouble              beta,
                                         AtomrBuffer         *c,
                                         gint64               ldc,
                                         AtomrBlasLtEpilogue  epilogue,
                                         AtomrBuffer         *bias,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self));
  matmul_submit (self, atomr_blas_lt_actor_matmul_scaled_async, ATOMR_TRANSPOSE_T, ATOMR_TRANSPOSE_N,
                 m, n, k, alpha, a, lda, scale_a, b, ldb, scale_b, beta, c, ldc, epilogue, bias,
                 NULL, 0, 1, 0, 0, 0, TRUE, cancellable, callback, user_data);
}

/**
 * atomr_blas_lt_actor_matmul_scaled_finish:
 * @self: an [class@Atomr.BlasLtActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasLtActor.matmul_scaled_async].
 *
 * Returns: %TRUE when D was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_lt_actor_matmul_scaled_finish (AtomrBlasLtActor  *self,
                                          GAsyncResult      *result,
                                          GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_lt_actor_matmul_scaled_async, error);
}

static gboolean
is_fp8 (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F8_E4M3 || dtype == ATOMR_DTYPE_F8_E5M2;
}

/**
 * atomr_blas_lt_bias_dtype:
 * @ab: the dtype of A (and B)
 * @c: the dtype of C (and D)
 *
 * The dtype of the bias, or of the bias gradient, of a matmul: that of
 * C, except for fp8 operands with an f32 C, whose bias is bf16 (as
 * cuBLASLt's fp8 kernels read it; see CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE).
 *
 * Returns: the dtype the bias buffer must have
 *
 * Since: 0.2
 */
AtomrDtype
atomr_blas_lt_bias_dtype (AtomrDtype ab,
                          AtomrDtype c)
{
  if (is_fp8 (ab) && c == ATOMR_DTYPE_F32)
    return ATOMR_DTYPE_BF16;
  return c;
}

static void
matmul_submit (AtomrBlasLtActor    *self,
               gpointer             source_tag,
               AtomrTranspose       transa,
               AtomrTranspose       transb,
               gint64               m,
               gint64               n,
               gint64               k,
               gdouble              alpha,
               AtomrBuffer         *a,
               gint64               lda,
               AtomrBuffer         *scale_a,
               AtomrBuffer         *b,
               gint64               ldb,
               AtomrBuffer         *scale_b,
               gdouble              beta,
               AtomrBuffer         *c,
               gint64               ldc,
               AtomrBlasLtEpilogue  epilogue,
               AtomrBuffer         *bias,
               AtomrBuffer         *aux,
               gint64               ld_aux,
               gint64               batch,
               gint64               stride_a,
               gint64               stride_b,
               gint64               stride_c,
               gboolean             scaled,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  static const AtomrDtype dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16,
                                        ATOMR_DTYPE_F8_E4M3, ATOMR_DTYPE_F8_E5M2 };
  static const AtomrDtype fp8_outputs[] = { ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32 };
  const gchar *opname = scaled ? "matmul_scaled" : "matmul";
  AtomrOp *op;
  GError *error = NULL;
  MatmulRequest *r;
  AtomrDtype at, bt, ct;
  AtomrBlasComputeType compute;
  guint flags;
  g_autoptr(AtomrBuffer) ws_buf = NULL;

  op = atomr_op_new (self, opname, source_tag, cancellable, callback, user_data);

  if (!atomr_check_enum (opname, "transa", transa, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !atomr_check_enum (opname, "transb", transb, ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error) ||
      !atomr_check_enum (opname, "epilogue", epilogue, ATOMR_BLAS_LT_EPILOGUE_BGRADB + 1,
                         "AtomrBlasLtEpilogue", &error) ||
      !atomr_check_positive (opname, "m", m, &error) || !atomr_check_int32 (opname, "m", m, &error) ||
      !atomr_check_positive (opname, "n", n, &error) || !atomr_check_int32 (opname, "n", n, &error) ||
      !atomr_check_positive (opname, "k", k, &error) || !atomr_check_int32 (opname, "k", k, &error) ||
      !atomr_check_dtype_in (opname, "A", a, dtypes, G_N_ELEMENTS (dtypes), &error) ||
      !atomr_check_dtype_in (opname, "B", b, dtypes, G_N_ELEMENTS (dtypes), &error) ||
      !atomr_check_buffer (opname, "C", c, &error) ||
      !atomr_check_int32_range (opname, "batch_count", batch, &error) ||
      !atomr_check_matrix (opname, "A", a, transa == ATOMR_TRANSPOSE_N ? m : k,
                           transa == ATOMR_TRANSPOSE_N ? k : m, "lda", lda, stride_a, batch, &error) ||
      !atomr_check_matrix (opname, "B", b, transb == ATOMR_TRANSPOSE_N ? k : n,
                           transb == ATOMR_TRANSPOSE_N ? n : k, "ldb", ldb, stride_b, batch, &error) ||
      !atomr_check_matrix (opname, "C", c, m, n, "ldc", ldc, stride_c, batch, &error))
    return atomr_op_fail (op, error);
  if (batch > 1 && (guint64) stride_c < (guint64) ldc * (guint64) n)
    return FAIL_ARG ("%s: stride_c is %" G_GINT64_FORMAT "; the %" G_GINT64_FORMAT " D matrices would "
                     "overlap below ldc × n = %" G_GINT64_FORMAT, opname, stride_c, batch, ldc * n);
  if (batch > 1 && epilogue != ATOMR_BLAS_LT_EPILOGUE_NONE && epilogue != ATOMR_BLAS_LT_EPILOGUE_RELU &&
      epilogue != ATOMR_BLAS_LT_EPILOGUE_BIAS && epilogue != ATOMR_BLAS_LT_EPILOGUE_RELU_BIAS &&
      epilogue != ATOMR_BLAS_LT_EPILOGUE_GELU && epilogue != ATOMR_BLAS_LT_EPILOGUE_GELU_BIAS)
    return FAIL_ARG ("%s: epilogue %s writes an aux matrix or a bias gradient, which a batched "
                     "matmul does not take", opname, epilogue_nick (epilogue));

  at = atomr_buffer_get_dtype (a);
  bt = atomr_buffer_get_dtype (b);
  ct = atomr_buffer_get_dtype (c);
  if (is_fp8 (at) || is_fp8 (bt))
    {
      gint major = 0, minor = 0;

      atomr_device_get_compute_capability (atomr_actor_get_device (ATOMR_ACTOR (self)), &major, &minor);
      if (!scaled)
        return FAIL_ARG ("%s: A is %s and B is %s; fp8 operands go through "
                         "atomr_blas_lt_actor_matmul_scaled_async()", opname,
                         atomr_dtype_get_name (at), atomr_dtype_get_name (bt));
      if (!is_fp8 (at) || !is_fp8 (bt))
        return FAIL_ARG ("%s: A is %s and B is %s; both must be fp8", opname,
                         atomr_dtype_get_name (at), atomr_dtype_get_name (bt));
      if (at == ATOMR_DTYPE_F8_E5M2 && bt == ATOMR_DTYPE_F8_E5M2)
        return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                               "%s: cuBLASLt has no E5M2 × E5M2 matmul; make A or B E4M3",
                                               opname));
      if (!atomr_check_dtype_in (opname, "C", c, fp8_outputs, G_N_ELEMENTS (fp8_outputs), &error))
        return atomr_op_fail (op, error);
      if (major * 10 + minor < 89 && !atomr_device_is_host (atomr_actor_get_device (ATOMR_ACTOR (self))))
        return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                                               "%s: fp8 matmul needs compute capability 8.9 or newer; "
                                               "device has %d.%d", opname, major, minor));
      if (epilogues[epilogue].flags & (EPI_AUX_IN | EPI_AUX_OUT))
        return FAIL_ARG ("%s: epilogue %s needs an aux matrix, which the fp8 matmul does not take",
                         opname, epilogue_nick (epilogue));
    }
  else if (scaled)
    return FAIL_ARG ("%s: A is %s and B is %s; the scaled matmul takes fp8 operands", opname,
                     atomr_dtype_get_name (at), atomr_dtype_get_name (bt));
  else if (at != bt)
    return FAIL_ARG ("%s: A has dtype %s but B has dtype %s", opname,
                     atomr_dtype_get_name (at), atomr_dtype_get_name (bt));
  for (guint i = 0; i < 2; i++)
    {
      AtomrBuffer *scale = i ? scale_b : scale_a;
      const gchar *name = i ? "scale_b" : "scale_a";
      if (scale && !atomr_check_dtype (opname, name, scale, ATOMR_DTYPE_F32, &error))
        return atomr_op_fail (op, error);
    }
  if (is_fp8 (at))
    ;   /* C was checked above */
  else if (!(ct == at || ((at == ATOMR_DTYPE_F16 || at == ATOMR_DTYPE_BF16) && ct == ATOMR_DTYPE_F32)))
    return FAIL_ARG ("%s: C has dtype %s with A %s; C must have the dtype of A, or f32 when A is "
                     "f16 or bf16", opname, atomr_dtype_get_name (ct), atomr_dtype_get_name (at));

  compute = (AtomrBlasComputeType) g_atomic_int_get (&self->compute_type);
  if (is_fp8 (at) && compute != ATOMR_BLAS_COMPUTE_F32 && compute != ATOMR_BLAS_COMPUTE_F32_PEDANTIC)
    compute = ATOMR_BLAS_COMPUTE_F32;   /* fp8 accumulates in plain f32 */
  else if (compute == ATOMR_BLAS_COMPUTE_F16 || compute == ATOMR_BLAS_COMPUTE_F64 ||
      (compute >= ATOMR_BLAS_COMPUTE_F32_FAST_TF32 && compute <= ATOMR_BLAS_COMPUTE_F32_FAST_BF16 &&
       at != ATOMR_DTYPE_F32))
    return FAIL_ARG ("%s: compute-type %d does not fit A of dtype %s (matmul accumulates in f32; "
                     "the fast modes take f32 operands)", opname, compute, atomr_dtype_get_name (at));

  flags = epilogues[epilogue].flags;
  if (flags & (EPI_BIAS_IN | EPI_BIAS_OUT))
    {
      gint64 len = (flags & EPI_BIAS_N) ? n : m;
      if (!atomr_check_dtype (opname, "bias", bias, atomr_blas_lt_bias_dtype (at, ct), &error) ||
          !atomr_check_min_elements (opname, "bias", bias, len, &error))
        return atomr_op_fail (op, error);
    }
  else if (bias != NULL)
    return FAIL_ARG ("%s: bias is given, but epilogue %s takes none", opname, epilogue_nick (epilogue));

  if (flags & (EPI_AUX_IN | EPI_AUX_OUT))
    {
      if (flags & EPI_AUX_MASK)
        {
          if (!atomr_check_dtype (opname, "aux", aux, ATOMR_DTYPE_U8, &error))
            return atomr_op_fail (op, error);
          if (ld_aux < m || ld_aux % 128 != 0)
            return FAIL_ARG ("%s: ld_aux is %" G_GINT64_FORMAT "; the ReLU bit mask needs a "
                             "multiple of 128 that is at least m = %" G_GINT64_FORMAT,
                             opname, ld_aux, m);
          if (!atomr_check_min_elements (opname, "aux", aux, (guint64) ld_aux / 8 * (guint64) n, &error))
            return atomr_op_fail (op, error);
        }
      else
        {
          if (!atomr_check_dtype (opname, "aux", aux, ct, &error))
            return atomr_op_fail (op, error);
          if (ld_aux < m || ld_aux % 8 != 0)
            return FAIL_ARG ("%s: ld_aux is %" G_GINT64_FORMAT "; the GELU input needs a "
                             "multiple of 8 that is at least m = %" G_GINT64_FORMAT,
                             opname, ld_aux, m);
          if (!atomr_check_matrix (opname, "aux", aux, m, n, "ld_aux", ld_aux, 0, 1, &error))
            return atomr_op_fail (op, error);
        }
    }
  else if (aux != NULL)
    return FAIL_ARG ("%s: aux is given, but epilogue %s takes none", opname, epilogue_nick (epilogue));

  g_mutex_lock (&self->lock);
  if (self->user_workspace)
    ws_buf = g_object_ref (self->user_workspace);
  g_mutex_unlock (&self->lock);

  /* D (in C), a bias gradient, a stored aux and the workspace are written
   * while A, B, the scales, an input bias and an input aux are read. */
  if (!atomr_check_no_alias (opname,
                             ATOMR_OPERANDS (ATOMR_OPERAND ("C", c), ATOMR_OPERAND ("workspace", ws_buf),
                                             ATOMR_OPERAND ("bias", (flags & EPI_BIAS_OUT) ? bias : NULL),
                                             ATOMR_OPERAND ("aux", (flags & EPI_AUX_OUT) ? aux : NULL)),
                             ATOMR_OPERANDS (ATOMR_OPERAND ("A", a), ATOMR_OPERAND ("B", b),
                                             ATOMR_OPERAND ("scale_a", scale_a),
                                             ATOMR_OPERAND ("scale_b", scale_b),
                                             ATOMR_OPERAND ("bias", (flags & EPI_BIAS_IN) ? bias : NULL),
                                             ATOMR_OPERAND ("aux", (flags & EPI_AUX_IN) ? aux : NULL)),
                             &error))
    return atomr_op_fail (op, error);

  r = g_new0 (MatmulRequest, 1);
  r->key.m = m; r->key.n = n; r->key.k = k;
  r->key.lda = lda; r->key.ldb = ldb; r->key.ldc = ldc;
  r->key.ld_aux = aux ? ld_aux : 0;
  r->key.transa = transa == ATOMR_TRANSPOSE_N ? CUBLAS_OP_N : CUBLAS_OP_T;
  r->key.transb = transb == ATOMR_TRANSPOSE_N ? CUBLAS_OP_N : CUBLAS_OP_T;
  r->key.epilogue = epilogue;
  r->key.dtype_ab = at;
  r->key.dtype_c = ct;
  r->key.scaled = scaled;
  r->key.dtype_b = bt;
  r->key.batch = batch;
  r->key.stride_a = batch > 1 ? stride_a : 0;
  r->key.stride_b = batch > 1 ? stride_b : 0;
  r->key.stride_c = batch > 1 ? stride_c : 0;
  r->workspace = ws_buf;   /* kept alive by the op, which writes it */
  r->key.workspace_limit = r->workspace ? atomr_buffer_get_byte_size (r->workspace) : WORKSPACE_SIZE;
  r->key.dtype_bias = (flags & (EPI_BIAS_IN | EPI_BIAS_OUT)) ? (gint32) atomr_blas_lt_bias_dtype (at, ct) : -1;
  r->scale_a = scale_a;
  r->scale_b = scale_b;
  r->key.compute = lt_compute_type (compute);
  r->alpha = (gfloat) alpha;
  r->beta = (gfloat) beta;
  r->a = a; r->b = b; r->c = c; r->bias = bias; r->aux = aux;

  atomr_op_read (op, a);
  atomr_op_read (op, b);
  if (scale_a)
    atomr_op_read (op, scale_a);
  if (scale_b)
    atomr_op_read (op, scale_b);
  if (beta != 0.0)
    atomr_op_read (op, c);
  atomr_op_write (op, c);
  if (flags & EPI_BIAS_IN)
    atomr_op_read (op, bias);
  if (flags & EPI_BIAS_OUT)
    atomr_op_write (op, bias);
  if (flags & EPI_AUX_IN)
    atomr_op_read (op, aux);
  if (flags & EPI_AUX_OUT)
    atomr_op_write (op, aux);
  if (r->workspace)
    atomr_op_write (op, r->workspace);   /* orders actors that share it */
  atomr_op_set_data (op, r, g_free);
  atomr_op_set_enqueue (op, matmul_enqueue);
  atomr_op_set_detail (op, epilogue_nick (epilogue));
  atomr_op_submit (op);
}

/**
 * atomr_blas_lt_actor_matmul_finish:
 * @self: an [class@Atomr.BlasLtActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasLtActor.matmul_async].
 *
 * Returns: %TRUE when D (and the epilogue's outputs) were computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_lt_actor_matmul_finish (AtomrBlasLtActor  *self,
                                   GAsyncResult      *result,
                                   GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_lt_actor_matmul_async, error);
}

/**
 * atomr_blas_lt_actor_matmul_batched_async:
 * @self: an [class@Atomr.BlasLtActor]
 * @transa: how to read each A
 * @transb: how to read each B
 * @m: rows of each op(A) and D
 * @n: columns of each op(B) and D
 * @k: the inner dimension
 * @alpha: alpha
 * @a: @batch_count matrices A (as for [method@Atomr.BlasLtActor.matmul_async])
 * @lda: leading dimension of each A
 * @stride_a: elements from one A to the next (0: one A for all)
 * @b: @batch_count matrices B, the dtype of @a
 * @ldb: leading dimension of each B
 * @stride_b: elements from one B to the next (0: one B for all)
 * @beta: beta
 * @c: @batch_count matrices C, overwritten by D
 * @ldc: leading dimension of each C
 * @stride_c: elements from one C to the next, at least @ldc × @n
 * @batch_count: how many products, 1 to 2^31 − 1
 * @epilogue: %ATOMR_BLAS_LT_EPILOGUE_NONE, RELU, BIAS, RELU_BIAS, GELU or
 *   GELU_BIAS (the others write outputs a batch would share)
 * @bias: (nullable): the bias of the bias epilogues, shared by every
 *   product
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when every D is in @c
 * @user_data: data for @callback
 *
 * A strided batch of matmuls in one cuBLASLt call: D_i = epilogue
 * (alpha·op(A_i)·op(B_i) + beta·C_i), with X_i at element i·stride_x of
 * its buffer.  The heuristic cache keys on the batch and the strides.
 *
 * Since: 0.2
 */
void
atomr_blas_lt_actor_matmul_batched_async (AtomrBlasLtActor    *self,
                                          AtomrTranspose       transa,
                                          AtomrTranspose       transb,
                                          gint64               m,
                                          gint64               n,
                                          gint64               k,
                                          gdouble              alpha,
                                          AtomrBuffer         *a,
                                          gint64               lda,
                                          gint64               stride_a,
                                          AtomrBuffer         *b,
                                          gint64               ldb,
                                          gint64               stride_b,
                                          gdouble              beta,
                                          AtomrBuffer         *c,
                                          gint64               ldc,
                                          gint64               stride_c,
                                          gint64               batch_count,
                                          AtomrBlasLtEpilogue  epilogue,
                                          AtomrBuffer         *bias,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data)
{
  g_return_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self));
  matmul_submit (self, atomr_blas_lt_actor_matmul_batched_async, transa, transb, m, n, k, alpha,
                 a, lda, NULL, b, ldb, NULL, beta, c, ldc, epilogue, bias, NULL, 0, batch_count,
                 stride_a, stride_b, stride_c, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_lt_actor_matmul_batched_finish:
 * @self: an [class@Atomr.BlasLtActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasLtActor.matmul_batched_async].
 *
 * Returns: %TRUE when every D was computed
 *
 * Since: 0.2
 */
gboolean
atomr_blas_lt_actor_matmul_batched_finish (AtomrBlasLtActor  *self,
                                           GAsyncResult      *result,
                                           GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_lt_actor_matmul_batched_async, error);
}

/* ------------------------------------------------------------------ */
/* Handle lifecycle and GObject                                         */

static gboolean
atomr_blas_lt_actor_setup (AtomrActor  *actor,
                           GError     **error)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (actor);
  AtomrDevice *device = atomr_actor_get_device (actor);
  gint major = 0, minor = 0;

  if (atomr_device_is_host (device))
    return TRUE;

  if (!atomr_cublasLt_load (error))
    return FALSE;
  atomr_device_get_compute_capability (device, &major, &minor);
  self->arch = major * 10 + minor;
  if (!lt_check (cublasLtCreate (&self->handle), "cublasLtCreate", error))
    {
      self->handle = NULL;
      return FALSE;
    }
  return TRUE;
}

static void
atomr_blas_lt_actor_teardown (AtomrActor *actor,
                              gboolean    context_alive)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (actor);

  if (context_alive)
    {
      if (self->workspace)
        ATOMR_CU->cuMemFreeAsync (self->workspace, atomr_actor_get_cu_stream (actor));
      if (self->handle)
        cublasLtDestroy (self->handle);
    }
  self->workspace = 0;
  self->handle = NULL;
}

static void
atomr_blas_lt_actor_finalize (GObject *object)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (object);

  /* The links live in the plans, which the table frees: forget them, never
   * g_queue_clear () (that would free each embedded link as a GList node,
   * handing memory inside a plan back to the slice allocator). */
  g_queue_init (&self->lru);
  g_clear_pointer (&self->plans, g_hash_table_unref);
  g_clear_object (&self->user_workspace);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (atomr_blas_lt_actor_parent_class)->finalize (object);
}

static void
atomr_blas_lt_actor_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (object);

  switch (prop_id)
    {
    case PROP_COMPUTE_TYPE:
      g_value_set_enum (value, atomr_blas_lt_actor_get_compute_type (self));
      break;
    case PROP_CACHE_HITS:
      g_value_set_uint64 (value, atomr_blas_lt_actor_get_cache_hits (self));
      break;
    case PROP_CACHE_MISSES:
      g_value_set_uint64 (value, atomr_blas_lt_actor_get_cache_misses (self));
      break;
    case PROP_CACHE_CAPACITY:
      g_value_set_uint (value, atomr_blas_lt_actor_get_cache_capacity (self));
      break;
    case PROP_CACHE_EVICTIONS:
      g_value_set_uint64 (value, atomr_blas_lt_actor_get_cache_evictions (self));
      break;
    case PROP_WORKSPACE:
      g_value_take_object (value, atomr_blas_lt_actor_dup_workspace (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_blas_lt_actor_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  AtomrBlasLtActor *self = ATOMR_BLAS_LT_ACTOR (object);

  switch (prop_id)
    {
    case PROP_COMPUTE_TYPE:
      atomr_blas_lt_actor_set_compute_type (self, g_value_get_enum (value));
      break;
    case PROP_CACHE_CAPACITY:
      atomr_blas_lt_actor_set_cache_capacity (self, g_value_get_uint (value));
      break;
    case PROP_WORKSPACE:
      {
        g_autoptr(GError) error = NULL;
        if (!atomr_blas_lt_actor_set_workspace (self, g_value_get_object (value), &error))
          g_warning ("%s", error->message);
      }
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_blas_lt_actor_class_init (AtomrBlasLtActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_blas_lt_actor_finalize;
  object_class->get_property = atomr_blas_lt_actor_get_property;
  object_class->set_property = atomr_blas_lt_actor_set_property;
  actor_class->library = "cublaslt";
  actor_class->setup = atomr_blas_lt_actor_setup;
  actor_class->teardown = atomr_blas_lt_actor_teardown;

  /**
   * AtomrBlasLtActor:compute-type:
   *
   * How matmuls accumulate: %ATOMR_BLAS_COMPUTE_DEFAULT (f32),
   * %ATOMR_BLAS_COMPUTE_F32_PEDANTIC, or one of the fast f32 modes for f32
   * operands (TF32, f16, bf16 products).  Applies to later requests.
   *
   * Since: 0.1
   */
  properties[PROP_COMPUTE_TYPE] =
    g_param_spec_enum ("compute-type", NULL, NULL, ATOMR_TYPE_BLAS_COMPUTE_TYPE,
                       ATOMR_BLAS_COMPUTE_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrBlasLtActor:cache-hits:
   *
   * Matmuls that found their algorithm in the heuristic cache.  Not
   * notified.
   *
   * Since: 0.1
   */
  properties[PROP_CACHE_HITS] =
    g_param_spec_uint64 ("cache-hits", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBlasLtActor:cache-misses:
   *
   * Matmuls that ran the algorithm search.  Not notified.
   *
   * Since: 0.1
   */
  properties[PROP_CACHE_MISSES] =
    g_param_spec_uint64 ("cache-misses", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBlasLtActor:cache-capacity:
   *
   * How many problems the heuristic cache keeps (at least 1); the least
   * recently used one goes first.  Applies at the next matmul.
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_CAPACITY] =
    g_param_spec_uint ("cache-capacity", NULL, NULL, 1, G_MAXUINT, DEFAULT_CACHE_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrBlasLtActor:cache-evictions:
   *
   * Problems dropped from the heuristic cache to keep it within
   * [property@Atomr.BlasLtActor:cache-capacity].  Not notified.
   *
   * Since: 0.2
   */
  properties[PROP_CACHE_EVICTIONS] =
    g_param_spec_uint64 ("cache-evictions", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBlasLtActor:workspace:
   *
   * A buffer of the actor's device that matmuls use as cuBLASLt workspace
   * instead of the actor's own 32 MiB, or %NULL.  Its byte size is the
   * budget of the algorithm search.  Several actors may share one: each
   * matmul writes it, so the envelope orders their use across streams.
   *
   * Since: 0.2
   */
  properties[PROP_WORKSPACE] =
    g_param_spec_object ("workspace", NULL, NULL, ATOMR_TYPE_BUFFER,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_blas_lt_actor_init (AtomrBlasLtActor *self)
{
  self->plans = g_hash_table_new_full (plan_key_hash, plan_key_equal, NULL, plan_free);
  g_queue_init (&self->lru);
  g_mutex_init (&self->lock);
  self->cache_capacity = DEFAULT_CACHE_CAPACITY;
  self->compute_type = ATOMR_BLAS_COMPUTE_DEFAULT;
}

/**
 * atomr_blas_lt_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a cuBLASLt actor with its own stream and handle, bound to the
 * calling thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrBlasLtActor *
atomr_blas_lt_actor_new (AtomrDevice  *device,
                         GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_BLAS_LT_ACTOR, device, NULL, error);
}

/**
 * atomr_blas_lt_actor_get_compute_type:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets how matmuls accumulate.
 *
 * This is the value of the [property@Atomr.BlasLtActor:compute-type] property.
 *
 * Returns: how matmuls accumulate
 *
 * Since: 0.1
 */
AtomrBlasComputeType
atomr_blas_lt_actor_get_compute_type (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), ATOMR_BLAS_COMPUTE_DEFAULT);
  return g_atomic_int_get (&self->compute_type);
}

/**
 * atomr_blas_lt_actor_set_compute_type:
 * @self: an [class@Atomr.BlasLtActor]
 * @compute_type: the accumulation for later matmuls
 *
 * Chooses the accumulation of later matmuls (a different compute type is a
 * different heuristic-cache key).  May be called from any thread.
 *
 * Since: 0.1
 */
void
atomr_blas_lt_actor_set_compute_type (AtomrBlasLtActor     *self,
                                      AtomrBlasComputeType  compute_type)
{
  g_return_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self));
  g_return_if_fail (compute_type <= ATOMR_BLAS_COMPUTE_F64);
  if (g_atomic_int_get (&self->compute_type) == (gint) compute_type)
    return;
  g_atomic_int_set (&self->compute_type, compute_type);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPUTE_TYPE]);
}

/**
 * atomr_blas_lt_actor_get_cache_hits:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets how many matmuls reused a cached algorithm.
 *
 * This is the value of the [property@Atomr.BlasLtActor:cache-hits] property.
 *
 * Returns: how many matmuls reused a cached algorithm
 *
 * Since: 0.1
 */
guint64
atomr_blas_lt_actor_get_cache_hits (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  return (guint64) g_atomic_pointer_get ((gpointer *) &self->hits);
}

/**
 * atomr_blas_lt_actor_get_cache_misses:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets how many matmuls ran the algorithm search.
 *
 * This is the value of the [property@Atomr.BlasLtActor:cache-misses] property.
 *
 * Returns: how many matmuls ran the algorithm search
 *
 * Since: 0.1
 */
guint64
atomr_blas_lt_actor_get_cache_misses (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  return (guint64) g_atomic_pointer_get ((gpointer *) &self->misses);
}

/**
 * atomr_blas_lt_actor_get_cache_size:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Call on the actor's context.
 *
 * Returns: how many problems have a cached algorithm
 *
 * Since: 0.1
 */
guint
atomr_blas_lt_actor_get_cache_size (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  return g_hash_table_size (self->plans);
}

/**
 * atomr_blas_lt_actor_get_workspace_size:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets the size in bytes of the workspace the actor's matmuls share: that of [property@Atomr.BlasLtActor:workspace], or of the actor's own.
 *
 * Returns: the size in bytes of the workspace the actor's matmuls share:
 *   that of [property@Atomr.BlasLtActor:workspace], or of the actor's own
 *
 * Since: 0.1
 */
guint64
atomr_blas_lt_actor_get_workspace_size (AtomrBlasLtActor *self)
{
  g_autoptr(AtomrBuffer) ws = NULL;

  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  ws = atomr_blas_lt_actor_dup_workspace (self);
  return ws ? atomr_buffer_get_byte_size (ws) : WORKSPACE_SIZE;
}

/**
 * atomr_blas_lt_actor_dup_workspace:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets the workspace buffer that the actor's matmuls share, if one was set.
 *
 * Returns: (transfer full) (nullable): the workspace buffer set with
 *   [method@Atomr.BlasLtActor.set_workspace], or %NULL
 *
 * Since: 0.2
 */
AtomrBuffer *
atomr_blas_lt_actor_dup_workspace (AtomrBlasLtActor *self)
{
  AtomrBuffer *ws;

  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), NULL);
  g_mutex_lock (&self->lock);
  ws = self->user_workspace ? g_object_ref (self->user_workspace) : NULL;
  g_mutex_unlock (&self->lock);
  return ws;
}

/**
 * atomr_blas_lt_actor_set_workspace:
 * @self: an [class@Atomr.BlasLtActor]
 * @workspace: (nullable): a buffer of the actor's device, at least 4 KiB,
 *   or %NULL for the actor's own workspace
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes later matmuls use @workspace as cuBLASLt workspace (see
 * [property@Atomr.BlasLtActor:workspace]).  Give several actors one buffer to share
 * a workspace per device.  May be called from any thread.
 *
 * Returns: %TRUE, or %FALSE with %ATOMR_ERROR_INVALID_ARGUMENT when
 *   @workspace belongs to another device or is smaller than 4 KiB
 *
 * Since: 0.2
 */
gboolean
atomr_blas_lt_actor_set_workspace (AtomrBlasLtActor  *self,
                                   AtomrBuffer       *workspace,
                                   GError           **error)
{
  gboolean changed;

  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), FALSE);
  g_return_val_if_fail (workspace == NULL || ATOMR_IS_BUFFER (workspace), FALSE);
  if (workspace && atomr_actor_get_device (ATOMR_ACTOR (self)) == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuBLASLt workspace: the actor has no device (it was not made with "
                   "atomr_blas_lt_actor_new())");
      return FALSE;
    }
  if (workspace && atomr_buffer_get_device (workspace) != atomr_actor_get_device (ATOMR_ACTOR (self)))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuBLASLt workspace: the buffer belongs to %s, not to the actor's device %s",
                   atomr_device_get_name (atomr_buffer_get_device (workspace)),
                   atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self))));
      return FALSE;
    }
  if (workspace && atomr_buffer_get_byte_size (workspace) < 4096)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cuBLASLt workspace: the buffer holds %" G_GUINT64_FORMAT " bytes; give at least "
                   "4096 (or NULL for the actor's own)", atomr_buffer_get_byte_size (workspace));
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  changed = self->user_workspace != workspace;
  g_set_object (&self->user_workspace, workspace);
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_WORKSPACE]);
  return TRUE;
}

/**
 * atomr_blas_lt_actor_get_cache_capacity:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets how many problems the heuristic cache keeps.
 *
 * This is the value of the [property@Atomr.BlasLtActor:cache-capacity] property.
 *
 * Returns: how many problems the heuristic cache keeps
 *
 * Since: 0.2
 */
guint
atomr_blas_lt_actor_get_cache_capacity (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  return (guint) g_atomic_int_get (&self->cache_capacity);
}

/**
 * atomr_blas_lt_actor_set_cache_capacity:
 * @self: an [class@Atomr.BlasLtActor]
 * @capacity: at least 1
 *
 * Bounds the heuristic cache; the least recently used problems are
 * dropped at the next matmul.  May be called from any thread.
 *
 * Since: 0.2
 */
void
atomr_blas_lt_actor_set_cache_capacity (AtomrBlasLtActor *self,
                                        guint             capacity)
{
  g_return_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self));
  capacity = MAX (capacity, 1);
  if ((guint) g_atomic_int_get (&self->cache_capacity) == capacity)
    return;
  g_atomic_int_set (&self->cache_capacity, capacity);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CACHE_CAPACITY]);
}

/**
 * atomr_blas_lt_actor_get_cache_evictions:
 * @self: an [class@Atomr.BlasLtActor]
 *
 * Gets how many problems left the heuristic cache to respect its capacity.
 *
 * This is the value of the [property@Atomr.BlasLtActor:cache-evictions] property.
 *
 * Returns: how many problems left the heuristic cache to respect its
 *   capacity
 *
 * Since: 0.2
 */
guint64
atomr_blas_lt_actor_get_cache_evictions (AtomrBlasLtActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_LT_ACTOR (self), 0);
  return (guint64) g_atomic_pointer_get ((gpointer *) &self->evictions);
}
