/* atomr-blas-actor.c — cuBLAS as an actor
 *
 * Every operation is one BlasRequest (the union of what the BLAS routines
 * take), one validation block in its _async function and one small "call"
 * function that picks the S/D/C/Z routine.  The envelope does the rest:
 * hazards, fences, completion, traces.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-cublas-table-private.h"
#include "atomr-cublasLt-table-private.h"

#include "actors/atomr-library-private.h"
#include "actors/blas/atomr-blas-actor.h"
#include "actors/blas/atomr-blas-actor-private.h"
#include "actors/blaslt/atomr-lt-plan-private.h"
#include "core/atomr-tensor-private.h"

/**
 * AtomrBlasActor:
 *
 * An actor that owns a cuBLAS handle bound to its stream.
 *
 * Matrices are column-major, as in BLAS; dimensions, leading dimensions and
 * increments are checked against the buffers before anything is enqueued,
 * and a failed check names the argument and its value.  Scalars are given
 * as doubles; for complex dtypes each scalar has an imaginary part too
 * (ignored for real dtypes).  Outputs that are also read (beta ≠ 0, axpy,
 * scal, ger, trsm, swap, rot) are ordered as read-modify-write through the
 * envelope's hazard tracking.
 *
 * Reductions (dot, nrm2, asum, iamax, iamin) run in device pointer mode
 * into a small device scratch area; the result is copied back on the
 * stream and handed to `_finish`, so the actor's context never blocks.
 *
 * The handle is created when the actor is made and again after each
 * context rebuild ([method@Atomr.Device.reset]).  On the host test device there is
 * no handle: requests are validated and then answered with
 * %ATOMR_ERROR_NOT_SUPPORTED.
 *
 * Real general matrix products up to 1024³ (gemm, gemm_ex and gemm_tensor
 * with f32, f64, f16 or bf16 operands) run through cuBLASLt with an
 * algorithm chosen once per problem and kept in a small per-actor cache,
 * when cuBLASLt loads and has an algorithm for the problem; larger ones,
 * complex dtypes and the rest through the classic cuBLAS routine.  Both give the same result
 * class (the compute type follows [property@Atomr.BlasActor:math-mode]);
 * cuBLASLt's per-call host cost is lower, which matters for small
 * products.  `ATOMR_BLAS_LT_GEMM=0` in the environment keeps every product
 * on the classic routines.
 *
 * Since: 0.1
 */

struct _AtomrBlasActor
{
  AtomrActor      parent_instance;

  cublasHandle_t  handle;
  CUdeviceptr     scratch;          /* 64 bytes for reduction results */
  gint            handle_math_mode; /* as set on the handle */
  CUstream        handle_stream;    /* as set on the handle (a graph capture
                                     * enqueues on another stream) */
  gint            math_mode;        /* atomic: AtomrBlasMathMode */

  /* cuBLASLt for real gemms (see the class comment); on the actor's
   * context only. */
  cublasLtHandle_t lt;              /* NULL: classic routines only */
  CUdeviceptr      lt_workspace;    /* LT_WORKSPACE bytes, on first need */
  struct _LtGemmPlan *lt_plans;     /* LT_PLANS entries, NULL until used */
  guint64          lt_tick;
  guint64          lt_gemms;        /* atomic: products through cuBLASLt */
};

G_DEFINE_FINAL_TYPE (AtomrBlasActor, atomr_blas_actor, ATOMR_TYPE_ACTOR)

G_DEFINE_ENUM_TYPE (AtomrTranspose, atomr_transpose,
  G_DEFINE_ENUM_VALUE (ATOMR_TRANSPOSE_N, "n"),
  G_DEFINE_ENUM_VALUE (ATOMR_TRANSPOSE_T, "t"),
  G_DEFINE_ENUM_VALUE (ATOMR_TRANSPOSE_C, "c"))
G_DEFINE_ENUM_TYPE (AtomrFillMode, atomr_fill_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_FILL_MODE_LOWER, "lower"),
  G_DEFINE_ENUM_VALUE (ATOMR_FILL_MODE_UPPER, "upper"))
G_DEFINE_ENUM_TYPE (AtomrSide, atomr_side,
  G_DEFINE_ENUM_VALUE (ATOMR_SIDE_LEFT, "left"),
  G_DEFINE_ENUM_VALUE (ATOMR_SIDE_RIGHT, "right"))
G_DEFINE_ENUM_TYPE (AtomrDiag, atomr_diag,
  G_DEFINE_ENUM_VALUE (ATOMR_DIAG_NON_UNIT, "non-unit"),
  G_DEFINE_ENUM_VALUE (ATOMR_DIAG_UNIT, "unit"))
G_DEFINE_ENUM_TYPE (AtomrBlasComputeType, atomr_blas_compute_type,
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_DEFAULT, "default"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F32, "f32"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F32_PEDANTIC, "f32-pedantic"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F32_FAST_TF32, "f32-fast-tf32"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F32_FAST_F16, "f32-fast-f16"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F32_FAST_BF16, "f32-fast-bf16"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F16, "f16"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_COMPUTE_F64, "f64"))
G_DEFINE_ENUM_TYPE (AtomrBlasMathMode, atomr_blas_math_mode,
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_MATH_DEFAULT, "default"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_MATH_TF32, "tf32"),
  G_DEFINE_ENUM_VALUE (ATOMR_BLAS_MATH_PEDANTIC, "pedantic"))

enum {
  PROP_0,
  PROP_MATH_MODE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

#define SCRATCH_SIZE 64

/* ------------------------------------------------------------------ */
/* Requests                                                             */

typedef struct {
  gfloat   f[2];      /* f32 / c64 view */
  gdouble  d[2];      /* f64 / c128 view */
  guint16  h;         /* f16 view */
} Scalar;

typedef enum {
  RESULT_NONE,
  RESULT_REAL,        /* float for f32/c64, double for f64/c128 */
  RESULT_SAME,        /* the dtype of x */
  RESULT_INDEX,       /* int, 1-based from cuBLAS */
} ResultKind;

typedef struct _BlasRequest BlasRequest;
typedef cublasStatus_t (*BlasCallFunc) (AtomrBlasActor *self,
                                        BlasRequest    *r,
                                        const gchar   **name);

struct _BlasRequest
{
  const gchar   *opname;
  BlasCallFunc   call;
  ResultKind     result;
  AtomrDtype     dtype;      /* of the first operand */
  AtomrDtype     out_dtype;  /* of C, for gemm_ex */
  cublasComputeType_t compute;
  cublasOperation_t   transa, transb;
  cublasFillMode_t    uplo;
  cublasSideMode_t    side;
  cublasDiagType_t    diag;
  gint           m, n, k;
  gint           lda, ldb, ldc, incx, incy;
  gint64         stride_a, stride_b, stride_c;
  gint           batch;
  gboolean       conjugate;
  Scalar         alpha, beta;
  AtomrBuffer   *a, *b, *c, *x, *y;      /* not owned: the op keeps them */
  AtomrPinned   *pinned;                 /* the reduction result */
  guint64        off_a, off_b, off_c, off_x, off_y; /* bytes, from views */
};

static inline guint64
request_offset (const BlasRequest *r,
                AtomrBuffer *const *operand)
{
  return operand == &r->a ? r->off_a : operand == &r->b ? r->off_b
       : operand == &r->c ? r->off_c : operand == &r->x ? r->off_x
       : operand == &r->y ? r->off_y : 0;
}

/* The request lives in its operation (atomr_op_alloc_data: inline, no
 * allocation per call); the operation clears it when it is freed. */
static void
blas_request_clear (gpointer data)
{
  BlasRequest *r = data;

  g_clear_pointer (&r->pinned, atomr_pinned_release);
}

/* IEEE half from a double (round to nearest even), for f16 compute. */
static guint16
double_to_half (gdouble value)
{
  union { gfloat f; guint32 u; } v = { .f = (gfloat) value };
  guint32 sign = (v.u >> 16) & 0x8000;
  gint32 exp = (gint32) ((v.u >> 23) & 0xff) - 127 + 15;
  guint32 mant = v.u & 0x7fffff;

  if (((v.u >> 23) & 0xff) == 0xff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0)
    {
      if (exp < -10)
        return sign;
      mant |= 0x800000;
      {
        guint32 shift = (guint32) (14 - exp);
        guint32 half = mant >> shift;
        guint32 rem = mant & ((1u << shift) - 1);
        guint32 mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
          half++;
        return sign | half;
      }
    }
  {
    guint32 half = sign | ((guint32) exp << 10) | (mant >> 13);
    guint32 rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
      half++;
    return half;
  }
}

static gdouble
half_to_double (guint16 h)
{
  gint exp = (h >> 10) & 0x1f;
  gdouble mant = h & 0x3ff;
  gdouble v = exp == 0 ? ldexp (mant, -24) : exp == 31 ? (mant ? NAN : INFINITY)
            : ldexp (mant + 1024, exp - 25);
  return (h & 0x8000) ? -v : v;
}

static void
scalar_set (Scalar  *s,
            gdouble  re,
            gdouble  im)
{
  s->f[0] = (gfloat) re;
  s->f[1] = (gfloat) im;
  s->d[0] = re;
  s->d[1] = im;
  s->h = double_to_half (re);
}

/* The scalar in the representation the routine for @dtype takes. */
static const void *
scalar_ptr (AtomrDtype    dtype,
            const Scalar *s)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F64:
    case ATOMR_DTYPE_C128:
      return s->d;
    case ATOMR_DTYPE_F16:
      return &s->h;
    default:
      return s->f;
    }
}

static cudaDataType
cuda_data_type (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return CUDA_R_16F;
    case ATOMR_DTYPE_BF16: return CUDA_R_16BF;
    case ATOMR_DTYPE_F64: return CUDA_R_64F;
    case ATOMR_DTYPE_C64: return CUDA_C_32F;
    case ATOMR_DTYPE_C128: return CUDA_C_64F;
    default: return CUDA_R_32F;
    }
}

static cublasOperation_t
to_cublas_op (AtomrTranspose t)
{
  return t == ATOMR_TRANSPOSE_N ? CUBLAS_OP_N : t == ATOMR_TRANSPOSE_T ? CUBLAS_OP_T : CUBLAS_OP_C;
}

/* PTR (r->a) and friends: the buffer's address plus the byte offset a
 * view entry point recorded for that operand (0 for the classic API). */
#define PTR(buf) ((void *) (uintptr_t) (atomr_buffer_get_ptr (buf) + request_offset (r, &(buf))))
#define ALPHA    scalar_ptr (r->dtype, &r->alpha)
#define BETA     scalar_ptr (r->dtype, &r->beta)
#define RESULT   ((void *) (uintptr_t) self->scratch)

static gboolean
is_half (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F16 || dtype == ATOMR_DTYPE_BF16;
}

static cudaDataType
half_type (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_F16 ? CUDA_R_16F : CUDA_R_16BF;
}

/* Picks the S, D, C or Z routine by the request's dtype. */
#define DISPATCH4(s, d, c, z, ...)                                   \
  switch (r->dtype)                                                  \
    {                                                                \
    case ATOMR_DTYPE_F32: *name = #s; return s (__VA_ARGS__);        \
    case ATOMR_DTYPE_F64: *name = #d; return d (__VA_ARGS__);        \
    case ATOMR_DTYPE_C64: *name = #c; return c (__VA_ARGS__);        \
    case ATOMR_DTYPE_C128: *name = #z; return z (__VA_ARGS__);       \
    default: *name = "dtype"; return CUBLAS_STATUS_NOT_SUPPORTED;    \
    }

/* ------------------------------------------------------------------ */
/* cuBLASLt for real gemms                                              */

#define LT_PLANS     16
#define LT_WORKSPACE (32u << 20)
#define LT_MAX_VOLUME (1024.0 * 1024.0 * 1024.0)   /* m * n * k */

/* Everything the algorithm depends on; compared with memcmp (zeroed
 * first, so padding compares too). */
typedef struct {
  gint64 m, n, k, lda, ldb, ldc;
  gint32 transa, transb, dtype_ab, dtype_c, compute;
  gint32 align_a, align_b, align_c;   /* bytes, powers of two up to 256 */
} LtGemmKey;

typedef struct _LtGemmPlan {
  LtGemmKey              key;
  guint64                used;        /* lt_tick of the last use; 0: free */
  gboolean               usable;      /* FALSE: no algorithm, use cuBLAS */
  AtomrLtPlan            lt;
} LtGemmPlan;

static void
lt_plan_clear (LtGemmPlan *plan)
{
  atomr_lt_plan_clear (&plan->lt);
  memset (plan, 0, sizeof *plan);
}

static void
lt_plans_free (AtomrBlasActor *self)
{
  if (self->lt_plans == NULL)
    return;
  for (guint i = 0; i < LT_PLANS; i++)
    lt_plan_clear (&self->lt_plans[i]);
  g_clear_pointer (&self->lt_plans, g_free);
}

static gint32
lt_alignment (guint64 address)
{
  guint64 a = address & (~address + 1);   /* lowest set bit */

  return address == 0 || a > 256 ? 256 : (gint32) a;
}

/* Descriptors, layouts and the heuristic's first algorithm for @key; an
 * entry without an algorithm (usable FALSE) remembers that the classic
 * routine serves this problem. */
static void
lt_plan_build (AtomrBlasActor *self,
               LtGemmPlan     *plan,
               const LtGemmKey *key)
{
  cudaDataType scale = key->compute == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
  cudaDataType ab = (cudaDataType) key->dtype_ab, ct = (cudaDataType) key->dtype_c;
  uint32_t align[3] = { key->align_a, key->align_b, key->align_c };
  int returned = 0;

  /* Any failure only means no algorithm: the classic routine serves. */
  plan->key = *key;
  plan->usable =
    atomr_lt_plan_build (&plan->lt, key->compute, scale, key->transa, key->transb, ab, ab, ct,
                         key->m, key->n, key->k, key->lda, key->ldb, key->ldc,
                         NULL) == CUBLAS_STATUS_SUCCESS &&
    atomr_lt_plan_find_algo (&plan->lt, self->lt, LT_WORKSPACE, align, &returned,
                             NULL) == CUBLAS_STATUS_SUCCESS &&
    returned > 0;
}

/* Runs a real gemm through cuBLASLt; FALSE (nothing enqueued, *status
 * untouched) when the classic routine must do it. */
static gboolean
lt_gemm (AtomrBlasActor       *self,
         BlasRequest          *r,
         cublasComputeType_t   compute,
         cublasStatus_t       *status)
{
  LtGemmKey key;
  LtGemmPlan *plan = NULL, *victim = NULL;
  void *pa = PTR (r->a), *pb = PTR (r->b), *pc = PTR (r->c);
  gconstpointer alpha, beta;

  /* Large products are bound by the GPU, where the classic routine's own
   * heuristics chose the faster kernel (H200, SGEMM 4096: cuBLASLt's first
   * algorithm took 2.5% longer); cuBLASLt pays off where the host cost of
   * a call is a large part of it. */
  if ((gdouble) r->m * (gdouble) r->n * (gdouble) r->k > LT_MAX_VOLUME)
    return FALSE;
  if (self->lt == NULL || compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC ||
      (r->transa != CUBLAS_OP_N && r->transa != CUBLAS_OP_T) ||
      (r->transb != CUBLAS_OP_N && r->transb != CUBLAS_OP_T))
    return FALSE;

  memset (&key, 0, sizeof key);
  key.m = r->m; key.n = r->n; key.k = r->k;
  key.lda = r->lda; key.ldb = r->ldb; key.ldc = r->ldc;
  key.transa = r->transa; key.transb = r->transb;
  key.dtype_ab = cuda_data_type (r->dtype);
  key.dtype_c = cuda_data_type (r->out_dtype);
  key.compute = compute;
  key.align_a = lt_alignment ((guint64) (uintptr_t) pa);
  key.align_b = lt_alignment ((guint64) (uintptr_t) pb);
  key.align_c = lt_alignment ((guint64) (uintptr_t) pc);

  if (self->lt_plans == NULL)
    self->lt_plans = g_new0 (LtGemmPlan, LT_PLANS);
  for (guint i = 0; i < LT_PLANS; i++)
    {
      LtGemmPlan *p = &self->lt_plans[i];

      if (p->used && memcmp (&p->key, &key, sizeof key) == 0)
        {
          plan = p;
          break;
        }
      if (victim == NULL || p->used < victim->used)
        victim = p;
    }
  if (plan == NULL)
    {
      plan = victim;     /* free, or the least recently used */
      lt_plan_clear (plan);
      lt_plan_build (self, plan, &key);
    }
  plan->used = ++self->lt_tick;
  if (!plan->usable)
    return FALSE;

  if (plan->lt.workspace > 0)
    {
      CUstream own = atomr_actor_get_cu_stream (ATOMR_ACTOR (self));

      /* Record mode (a graph capture enqueues on another stream): the
       * classic routine, as before; a graph replayed elsewhere must not
       * share the actor's workspace with its eager calls, and an
       * allocation here would become a node of the graph. */
      if (self->handle_stream != own)
        return FALSE;
      if (self->lt_workspace == 0 &&
          ATOMR_CU->cuMemAllocAsync (&self->lt_workspace, LT_WORKSPACE, own) != CUDA_SUCCESS)
        {
          self->lt_workspace = 0;
          return FALSE;
        }
    }

  /* f32 scalars for every compute type but f64, as the classic routines. */
  alpha = compute == CUBLAS_COMPUTE_64F ? (gconstpointer) r->alpha.d : (gconstpointer) r->alpha.f;
  beta = compute == CUBLAS_COMPUTE_64F ? (gconstpointer) r->beta.d : (gconstpointer) r->beta.f;
  *status = cublasLtMatmul (self->lt, plan->lt.desc, alpha, pa, plan->lt.la, pb, plan->lt.lb, beta,
                            pc, plan->lt.lc, pc, plan->lt.lc, &plan->lt.algo,
                            plan->lt.workspace ? (void *) (uintptr_t) self->lt_workspace : NULL,
                            plan->lt.workspace, (cudaStream_t) self->handle_stream);
  g_atomic_pointer_add (&self->lt_gemms, 1);
  return TRUE;
}

guint64
atomr_blas_actor_get_lt_gemm_count (AtomrBlasActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_ACTOR (self), 0);
  return (guint64) g_atomic_pointer_get (&self->lt_gemms);
}

/* ------------------------------------------------------------------ */
/* The calls                                                            */

/* The compute type the classic routine would use for @r under the
 * handle's math mode; 0 for complex dtypes (classic only). */
static cublasComputeType_t
gemm_compute_type (AtomrBlasActor *self,
                   BlasRequest    *r)
{
  cublasComputeType_t compute = r->compute;

  if (compute == 0)
    switch (r->dtype)
      {
      case ATOMR_DTYPE_F64: return CUBLAS_COMPUTE_64F;
      case ATOMR_DTYPE_F32: case ATOMR_DTYPE_F16: case ATOMR_DTYPE_BF16:
        compute = CUBLAS_COMPUTE_32F;
        break;
      default: return 0;
      }
  if (compute == CUBLAS_COMPUTE_32F && self->handle_math_mode == ATOMR_BLAS_MATH_PEDANTIC)
    return CUBLAS_COMPUTE_32F_PEDANTIC;
  if (compute == CUBLAS_COMPUTE_32F && r->dtype == ATOMR_DTYPE_F32 &&
      self->handle_math_mode == ATOMR_BLAS_MATH_TF32)
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  return compute;
}

static cublasStatus_t
call_gemm (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  cublasHandle_t h = self->handle;
  cublasComputeType_t compute = gemm_compute_type (self, r);
  cublasStatus_t st;

  if (compute != 0 && lt_gemm (self, r, compute, &st))
    {
      *name = "cublasLtMatmul";
      return st;
    }

  if (r->dtype == ATOMR_DTYPE_F16 || r->dtype == ATOMR_DTYPE_BF16 || r->compute != 0)
    {
      AtomrDtype scalar_dtype = r->compute == CUBLAS_COMPUTE_64F ? ATOMR_DTYPE_F64
                              : r->compute == CUBLAS_COMPUTE_16F ? ATOMR_DTYPE_F16
                              : ATOMR_DTYPE_F32;
      *name = "cublasGemmEx";
      return cublasGemmEx (h, r->transa, r->transb, r->m, r->n, r->k,
                           scalar_ptr (scalar_dtype, &r->alpha),
                           PTR (r->a), cuda_data_type (r->dtype), r->lda,
                           PTR (r->b), cuda_data_type (r->dtype), r->ldb,
                           scalar_ptr (scalar_dtype, &r->beta),
                           PTR (r->c), cuda_data_type (r->out_dtype), r->ldc,
                           r->compute ? r->compute : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  DISPATCH4 (cublasSgemm, cublasDgemm, cublasCgemm, cublasZgemm,
             h, r->transa, r->transb, r->m, r->n, r->k, ALPHA, PTR (r->a), r->lda,
             PTR (r->b), r->ldb, BETA, PTR (r->c), r->ldc);
}

static cublasStatus_t
call_gemm_strided_batched (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  cublasHandle_t h = self->handle;

  if (r->dtype == ATOMR_DTYPE_F16 || r->dtype == ATOMR_DTYPE_BF16)
    {
      *name = "cublasGemmStridedBatchedEx";
      return cublasGemmStridedBatchedEx (h, r->transa, r->transb, r->m, r->n, r->k,
                                         scalar_ptr (ATOMR_DTYPE_F32, &r->alpha),
                                         PTR (r->a), cuda_data_type (r->dtype), r->lda, r->stride_a,
                                         PTR (r->b), cuda_data_type (r->dtype), r->ldb, r->stride_b,
                                         scalar_ptr (ATOMR_DTYPE_F32, &r->beta),
                                         PTR (r->c), cuda_data_type (r->dtype), r->ldc, r->stride_c,
                                         r->batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  DISPATCH4 (cublasSgemmStridedBatched, cublasDgemmStridedBatched,
             cublasCgemmStridedBatched, cublasZgemmStridedBatched,
             h, r->transa, r->transb, r->m, r->n, r->k, ALPHA,
             PTR (r->a), r->lda, r->stride_a, PTR (r->b), r->ldb, r->stride_b,
             BETA, PTR (r->c), r->ldc, r->stride_c, r->batch);
}

static cublasStatus_t
call_syrk (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasSsyrk, cublasDsyrk, cublasCsyrk, cublasZsyrk,
             self->handle, r->uplo, r->transa, r->n, r->k, ALPHA, PTR (r->a), r->lda,
             BETA, PTR (r->c), r->ldc);
}

static cublasStatus_t
call_trsm (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasStrsm, cublasDtrsm, cublasCtrsm, cublasZtrsm,
             self->handle, r->side, r->uplo, r->transa, r->diag, r->m, r->n, ALPHA,
             PTR (r->a), r->lda, PTR (r->b), r->ldb);
}

static cublasStatus_t
call_geam (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasSgeam, cublasDgeam, cublasCgeam, cublasZgeam,
             self->handle, r->transa, r->transb, r->m, r->n, ALPHA, PTR (r->a), r->lda,
             BETA, PTR (r->b), r->ldb, PTR (r->c), r->ldc);
}

static cublasStatus_t
call_gemv (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  if (is_half (r->dtype))
    {
      /* No half gemv in cuBLAS: the transposed product yᵀ = xᵀ·op(A)ᵀ as a
       * 1-row GemmEx, where a vector with increment inc is a 1-row matrix
       * with leading dimension inc (real dtypes: C is T). */
      cudaDataType t = half_type (r->dtype);
      gint k = r->transa == CUBLAS_OP_N ? r->n : r->m;
      gint len = r->transa == CUBLAS_OP_N ? r->m : r->n;

      *name = "cublasGemmEx (half gemv)";
      return cublasGemmEx (self->handle, CUBLAS_OP_N, r->transa == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N,
                           1, len, k, &r->alpha.f[0], PTR (r->x), t, r->incx, PTR (r->a), t, r->lda,
                           &r->beta.f[0], PTR (r->y), t, r->incy, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  DISPATCH4 (cublasSgemv, cublasDgemv, cublasCgemv, cublasZgemv,
             self->handle, r->transa, r->m, r->n, ALPHA, PTR (r->a), r->lda,
             PTR (r->x), r->incx, BETA, PTR (r->y), r->incy);
}

static cublasStatus_t
call_ger (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  cublasHandle_t h = self->handle;

  if (r->conjugate)
    {
      DISPATCH4 (cublasSger, cublasDger, cublasCgerc, cublasZgerc,
                 h, r->m, r->n, ALPHA, PTR (r->x), r->incx, PTR (r->y), r->incy,
                 PTR (r->a), r->lda);
    }
  DISPATCH4 (cublasSger, cublasDger, cublasCgeru, cublasZgeru,
             h, r->m, r->n, ALPHA, PTR (r->x), r->incx, PTR (r->y), r->incy,
             PTR (r->a), r->lda);
}

static cublasStatus_t
call_axpy (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  if (is_half (r->dtype))
    {
      *name = "cublasAxpyEx";
      return cublasAxpyEx (self->handle, r->n, &r->alpha.f[0], CUDA_R_32F, PTR (r->x), half_type (r->dtype),
                           r->incx, PTR (r->y), half_type (r->dtype), r->incy, CUDA_R_32F);
    }
  DISPATCH4 (cublasSaxpy, cublasDaxpy, cublasCaxpy, cublasZaxpy,
             self->handle, r->n, ALPHA, PTR (r->x), r->incx, PTR (r->y), r->incy);
}

static cublasStatus_t
call_scal (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  if (is_half (r->dtype))
    {
      *name = "cublasScalEx";
      return cublasScalEx (self->handle, r->n, &r->alpha.f[0], CUDA_R_32F, PTR (r->x), half_type (r->dtype),
                           r->incx, CUDA_R_32F);
    }
  DISPATCH4 (cublasSscal, cublasDscal, cublasCscal, cublasZscal,
             self->handle, r->n, ALPHA, PTR (r->x), r->incx);
}

static cublasStatus_t
call_copy (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasScopy, cublasDcopy, cublasCcopy, cublasZcopy,
             self->handle, r->n, PTR (r->x), r->incx, PTR (r->y), r->incy);
}

static cublasStatus_t
call_swap (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasSswap, cublasDswap, cublasCswap, cublasZswap,
             self->handle, r->n, PTR (r->x), r->incx, PTR (r->y), r->incy);
}

static cublasStatus_t
call_rot (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  /* c and s are real: alpha holds c, beta holds s. */
  DISPATCH4 (cublasSrot, cublasDrot, cublasCsrot, cublasZdrot,
             self->handle, r->n, PTR (r->x), r->incx, PTR (r->y), r->incy, ALPHA, BETA);
}

static cublasStatus_t
call_dot (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  cublasHandle_t h = self->handle;

  if (is_half (r->dtype))
    {
      *name = "cublasDotEx";
      return cublasDotEx (h, r->n, PTR (r->x), half_type (r->dtype), r->incx, PTR (r->y),
                          half_type (r->dtype), r->incy, RESULT, half_type (r->dtype), CUDA_R_32F);
    }
  if (r->conjugate)
    {
      DISPATCH4 (cublasSdot, cublasDdot, cublasCdotc, cublasZdotc,
                 h, r->n, PTR (r->x), r->incx, PTR (r->y), r->incy, RESULT);
    }
  DISPATCH4 (cublasSdot, cublasDdot, cublasCdotu, cublasZdotu,
             h, r->n, PTR (r->x), r->incx, PTR (r->y), r->incy, RESULT);
}

static cublasStatus_t
call_nrm2 (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  if (is_half (r->dtype))
    {
      *name = "cublasNrm2Ex";
      return cublasNrm2Ex (self->handle, r->n, PTR (r->x), half_type (r->dtype), r->incx, RESULT,
                           half_type (r->dtype), CUDA_R_32F);
    }
  DISPATCH4 (cublasSnrm2, cublasDnrm2, cublasScnrm2, cublasDznrm2,
             self->handle, r->n, PTR (r->x), r->incx, RESULT);
}

static cublasStatus_t
call_asum (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasSasum, cublasDasum, cublasScasum, cublasDzasum,
             self->handle, r->n, PTR (r->x), r->incx, RESULT);
}

static cublasStatus_t
call_iamax (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasIsamax, cublasIdamax, cublasIcamax, cublasIzamax,
             self->handle, r->n, PTR (r->x), r->incx, RESULT);
}

static cublasStatus_t
call_iamin (AtomrBlasActor *self, BlasRequest *r, const gchar **name)
{
  DISPATCH4 (cublasIsamin, cublasIdamin, cublasIcamin, cublasIzamin,
             self->handle, r->n, PTR (r->x), r->incx, RESULT);
}

/* ------------------------------------------------------------------ */
/* The envelope's side                                                  */

static gboolean
blas_check (cublasStatus_t  status,
            const gchar    *call,
            GError        **error)
{
  return atomr_library_check (status == CUBLAS_STATUS_SUCCESS, "cuBLAS", call,
                              cublasGetStatusName (status), status,
                              status == CUBLAS_STATUS_ALLOC_FAILED,
                              status == CUBLAS_STATUS_NOT_SUPPORTED ||
                              status == CUBLAS_STATUS_ARCH_MISMATCH,
                              error);
}

static cublasMath_t
to_cublas_math (AtomrBlasMathMode mode)
{
  switch (mode)
    {
    case ATOMR_BLAS_MATH_TF32: return CUBLAS_TF32_TENSOR_OP_MATH;
    case ATOMR_BLAS_MATH_PEDANTIC: return CUBLAS_PEDANTIC_MATH;
    default: return CUBLAS_DEFAULT_MATH;
    }
}

static gboolean
blas_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrBlasActor *self = ATOMR_BLAS_ACTOR (atomr_op_get_actor (op));
  BlasRequest *r = atomr_op_get_data (op);
  const gchar *name = NULL;
  cublasStatus_t st;
  gint mode;

  if (atomr_op_is_host (op) || self->handle == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "cuBLAS: %s needs a CUDA device; the host test device has no cuBLAS",
                   r->opname);
      return FALSE;
    }

  /* Record mode: a graph capture runs this on its capture stream. */
  if (atomr_op_get_cu_stream (op) != self->handle_stream)
    {
      if (!blas_check (cublasSetStream (self->handle, (cudaStream_t) atomr_op_get_cu_stream (op)),
                       "cublasSetStream", error))
        return FALSE;
      self->handle_stream = atomr_op_get_cu_stream (op);
    }

  mode = g_atomic_int_get (&self->math_mode);
  if (mode != self->handle_math_mode)
    {
      if (!blas_check (cublasSetMathMode (self->handle, to_cublas_math (mode)),
                       "cublasSetMathMode", error))
        return FALSE;
      self->handle_math_mode = mode;
    }

  if (r->result == RESULT_NONE)
    {
      st = r->call (self, r, &name);
      return blas_check (st, name, error);
    }

  /* Reductions: result into device scratch, then back to pinned memory on
   * the same stream; the complete function reads it. */
  r->pinned = atomr_pinned_acquire (atomr_actor_get_device (ATOMR_ACTOR (self)), 16, error);
  if (r->pinned == NULL)
    return FALSE;
  if (r->n == 0)
    {
      /* BLAS quick return: 0 (index 0, i.e. none); nothing to run. */
      memset (r->pinned->data, 0, 16);
      return TRUE;
    }
  if (!blas_check (cublasSetPointerMode (self->handle, CUBLAS_POINTER_MODE_DEVICE),
                   "cublasSetPointerMode", error))
    return FALSE;
  st = r->call (self, r, &name);
  cublasSetPointerMode (self->handle, CUBLAS_POINTER_MODE_HOST);
  if (!blas_check (st, name, error))
    return FALSE;
  return atomr_cuda_check (ATOMR_CU->cuMemcpyDtoHAsync (r->pinned->data, self->scratch, 16,
                                                         atomr_op_get_cu_stream (op)),
                           "cuMemcpyDtoHAsync", error);
}

typedef struct {
  gdouble re, im;
  gint64  index;
} BlasResult;

static void
blas_complete (AtomrOp    *op,
               AtomrReply *reply)
{
  BlasRequest *r = atomr_op_get_data (op);
  BlasResult *res = g_new0 (BlasResult, 1);
  const guint8 *data = r->pinned->data;
  gboolean wide = r->dtype == ATOMR_DTYPE_F64 || r->dtype == ATOMR_DTYPE_C128;
  gboolean complex_ = atomr_dtype_is_complex (r->dtype);

  if (is_half (r->dtype) && r->result != RESULT_INDEX)
    {
      /* the Ex reductions return the dtype of x */
      guint16 h;
      memcpy (&h, data, sizeof h);
      if (r->dtype == ATOMR_DTYPE_BF16)
        {
          guint32 u = (guint32) h << 16;
          gfloat f;
          memcpy (&f, &u, sizeof f);
          res->re = f;
        }
      else
        res->re = half_to_double (h);
      atomr_reply_return_pointer (reply, res, g_free);
      return;
    }

  switch (r->result)
    {
    case RESULT_INDEX:
      {
        gint32 idx;
        memcpy (&idx, data, sizeof idx);
        res->index = (gint64) idx - 1;   /* cuBLAS counts from 1 */
      }
      break;
    case RESULT_SAME:
    case RESULT_REAL:
      if (wide)
        {
          gdouble v[2];
          memcpy (v, data, sizeof v);
          res->re = v[0];
          res->im = r->result == RESULT_SAME && complex_ ? v[1] : 0.0;
        }
      else
        {
          gfloat v[2];
          memcpy (v, data, sizeof v);
          res->re = v[0];
          res->im = r->result == RESULT_SAME && complex_ ? v[1] : 0.0;
        }
      break;
    default:
      break;
    }
  atomr_reply_return_pointer (reply, res, g_free);
}

/* Hands a validated request to the envelope.  @reads and @writes are
 * NULL-terminated; a buffer in both is read-modify-write. */
static void
blas_submit (AtomrOp      *op,
             BlasRequest  *r,
             BlasCallFunc  call,
             ResultKind    result,
             AtomrBuffer  *reads[],
             AtomrBuffer  *writes[])
{
  r->call = call;
  r->result = result;
  for (guint i = 0; reads && reads[i]; i++)
    atomr_op_read (op, reads[i]);
  for (guint i = 0; writes && writes[i]; i++)
    atomr_op_write (op, writes[i]);
  /* @r is already @op's data: request_new() put it there. */
  atomr_op_set_enqueue (op, blas_enqueue);
  if (result != RESULT_NONE)
    atomr_op_set_complete (op, blas_complete);
  atomr_op_submit (op);
}

#define READS(...)  ((AtomrBuffer *[]) { __VA_ARGS__, NULL })
#define WRITES(...) ((AtomrBuffer *[]) { __VA_ARGS__, NULL })

static const AtomrDtype blas_dtypes[] = {
  ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
};
/* level 1 and 2 with the Ex forms for halves */
static const AtomrDtype half_ok_dtypes[] = {
  ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16,
};
static const AtomrDtype gemm_dtypes[] = {
  ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
  ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16,
};

static BlasRequest *
request_new (AtomrOp     *op,
             AtomrBuffer *first,
             const gchar *opname)
{
  BlasRequest *r = atomr_op_alloc_data (op, sizeof (BlasRequest), blas_request_clear);

  r->opname = opname;
  r->dtype = atomr_buffer_get_dtype (first);
  r->out_dtype = r->dtype;
  return r;
}

/* Dimension checks shared by all operations. */
static gboolean
check_dims (const gchar  *op,
            GError      **error,
            const gchar  *arg0,
            gint64        v0,
            ...) G_GNUC_NULL_TERMINATED;

static gboolean
check_dims (const gchar  *op,
            GError      **error,
            const gchar  *arg0,
            gint64        v0,
            ...)
{
  va_list ap;
  const gchar *arg = arg0;
  gint64 value = v0;
  gboolean ok = TRUE;

  va_start (ap, v0);
  while (arg && ok)
    {
      ok = atomr_check_int32 (op, arg, value, error);
      arg = va_arg (ap, const gchar *);
      if (arg)
        value = va_arg (ap, gint64);
    }
  va_end (ap);
  return ok;
}

#define CHECK_TRANS(op, arg, t) \
  atomr_check_enum (op, arg, (gint) (t), ATOMR_TRANSPOSE_C + 1, "AtomrTranspose", &error)
#define CHECK_FILL(op, arg, t) \
  atomr_check_enum (op, arg, (gint) (t), ATOMR_FILL_MODE_UPPER + 1, "AtomrFillMode", &error)

/* rows and columns of op(X) stored as rows x cols */
#define STORED_ROWS(t, r, c) ((t) == ATOMR_TRANSPOSE_N ? (r) : (c))
#define STORED_COLS(t, r, c) ((t) == ATOMR_TRANSPOSE_N ? (c) : (r))

/* ------------------------------------------------------------------ */
/* Public API: level 3                                                  */

static void
gemm_common (AtomrBlasActor      *self,
             gpointer             tag,
             const gchar         *opname,
             AtomrTranspose       transa,
             AtomrTranspose       transb,
             gint64               m,
             gint64               n,
             gint64               k,
             gdouble              alpha,
             gdouble              alpha_imag,
             AtomrBuffer         *a,
             gint64               lda,
             AtomrBuffer         *b,
             gint64               ldb,
             gdouble              beta,
             gdouble              beta_imag,
             AtomrBuffer         *c,
             gint64               ldc,
             gboolean             ex,
             AtomrBlasComputeType compute,
             GCancellable        *cancellable,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  static const AtomrDtype ex_dtypes[] = {
    ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64,
  };

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);

  if (!CHECK_TRANS (opname, "transa", transa) || !CHECK_TRANS (opname, "transb", transb) ||
      !check_dims (opname, &error, "m", m, "n", n, "k", k, NULL) ||
      (ex ? !atomr_check_dtype_in (opname, "A", a, ex_dtypes, G_N_ELEMENTS (ex_dtypes), &error)
          : !atomr_check_dtype_in (opname, "A", a, gemm_dtypes, G_N_ELEMENTS (gemm_dtypes), &error)) ||
      !atomr_check_same_dtype (opname, "A", a, "B", b, &error) ||
      !atomr_check_buffer (opname, "C", c, &error) ||
      !atomr_check_matrix (opname, "A", a, STORED_ROWS (transa, m, k), STORED_COLS (transa, m, k),
                           "lda", lda, 0, 1, &error) ||
      !atomr_check_matrix (opname, "B", b, STORED_ROWS (transb, k, n), STORED_COLS (transb, k, n),
                           "ldb", ldb, 0, 1, &error) ||
      !atomr_check_matrix (opname, "C", c, m, n, "ldc", ldc, 0, 1, &error) ||
      !atomr_check_distinct (opname, "A", a, "C", c, &error) ||
      !atomr_check_distinct (opname, "B", b, "C", c, &error))
    return atomr_op_fail (op, error);

  r = request_new (op, a, opname);
  r->out_dtype = atomr_buffer_get_dtype (c);
  if (ex)
    {
      AtomrDtype at = r->dtype, ct = r->out_dtype;
      gboolean half_in = at == ATOMR_DTYPE_F16 || at == ATOMR_DTYPE_BF16;
      const gchar *bad = NULL;

      if (!(ct == at || (half_in && ct == ATOMR_DTYPE_F32)))
        bad = "C must have the dtype of A (or f32 when A is f16 or bf16)";
      switch (compute)
        {
        case ATOMR_BLAS_COMPUTE_DEFAULT:
          r->compute = at == ATOMR_DTYPE_F64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
          break;
        case ATOMR_BLAS_COMPUTE_F32:
        case ATOMR_BLAS_COMPUTE_F32_PEDANTIC:
          if (at == ATOMR_DTYPE_F64)
            bad = "f32 accumulation does not take f64 operands";
          r->compute = compute == ATOMR_BLAS_COMPUTE_F32 ? CUBLAS_COMPUTE_32F
                                                         : CUBLAS_COMPUTE_32F_PEDANTIC;
          break;
        case ATOMR_BLAS_COMPUTE_F32_FAST_TF32:
        case ATOMR_BLAS_COMPUTE_F32_FAST_F16:
        case ATOMR_BLAS_COMPUTE_F32_FAST_BF16:
          if (at != ATOMR_DTYPE_F32)
            bad = "the fast f32 compute types need f32 operands";
          r->compute = compute == ATOMR_BLAS_COMPUTE_F32_FAST_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                     : compute == ATOMR_BLAS_COMPUTE_F32_FAST_F16 ? CUBLAS_COMPUTE_32F_FAST_16F
                     : CUBLAS_COMPUTE_32F_FAST_16BF;
          break;
        case ATOMR_BLAS_COMPUTE_F16:
          if (at != ATOMR_DTYPE_F16 || ct != ATOMR_DTYPE_F16)
            bad = "f16 accumulation needs f16 A, B and C";
          r->compute = CUBLAS_COMPUTE_16F;
          break;
        case ATOMR_BLAS_COMPUTE_F64:
          if (at != ATOMR_DTYPE_F64)
            bad = "f64 accumulation needs f64 operands";
          r->compute = CUBLAS_COMPUTE_64F;
          break;
        default:
          bad = "not a valid AtomrBlasComputeType";
        }
      if (bad)
        {
          GEnumClass *eclass = g_type_class_ref (ATOMR_TYPE_BLAS_COMPUTE_TYPE);
          GEnumValue *ev = g_enum_get_value (eclass, compute);

          g_type_class_unref (eclass);   /* static type: the nick stays valid */
          return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                                 "%s: compute_type %s with A %s and C %s: %s",
                                                 opname, ev ? ev->value_nick : "(invalid)",
                                                 atomr_dtype_get_name (at),
                                                 atomr_dtype_get_name (ct), bad));
        }
    }
  else if (!atomr_check_same_dtype (opname, "A", a, "C", c, &error))
    {
      return atomr_op_fail (op, error);
    }

  r->transa = to_cublas_op (transa);
  r->transb = to_cublas_op (transb);
  r->m = m; r->n = n; r->k = k;
  r->lda = lda; r->ldb = ldb; r->ldc = ldc;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = a; r->b = b; r->c = c;
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_gemm, RESULT_NONE, READS (a, b, c), WRITES (c));
  else
    blas_submit (op, r, call_gemm, RESULT_NONE, READS (a, b), WRITES (c));
}

/**
 * atomr_blas_actor_gemm_async:
 * @self: an [class@Atomr.BlasActor]
 * @transa: how to read @a
 * @transb: how to read @b
 * @m: rows of op(A) and C
 * @n: columns of op(B) and C
 * @k: columns of op(A), rows of op(B)
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: matrix A (f32, f64, c64, c128, f16 or bf16)
 * @lda: leading dimension of @a
 * @b: matrix B, the dtype of @a
 * @ldb: leading dimension of @b
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @c: matrix C, the dtype of @a; read too when beta ≠ 0
 * @ldc: leading dimension of @c
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * C = alpha·op(A)·op(B) + beta·C, column-major.  f16 and bf16 operands go
 * through cublasGemmEx with f32 accumulation (see
 * [method@Atomr.BlasActor.gemm_ex_async] to choose the compute type); f32 uses
 * TF32 tensor cores when [property@Atomr.BlasActor:math-mode] says so.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_gemm_async (AtomrBlasActor      *self,
                             AtomrTranspose       transa,
                             AtomrTranspose       transb,
                             gint64               m,
                             gint64               n,
                             gint64               k,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *a,
                             gint64               lda,
                             AtomrBuffer         *b,
                             gint64               ldb,
                             gdouble              beta,
                             gdouble              beta_imag,
                             AtomrBuffer         *c,
                             gint64               ldc,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  gemm_common (self, atomr_blas_actor_gemm_async, "gemm", transa, transb, m, n, k,
               alpha, alpha_imag, a, lda, b, ldb, beta, beta_imag, c, ldc, FALSE, 0,
               cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_gemm_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemm_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_gemm_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemm_async, error);
}

/**
 * atomr_blas_actor_gemm_sync:
 * @self: an [class@Atomr.BlasActor]
 * @transa: how to read @a
 * @transb: how to read @b
 * @m: rows of op(A) and C
 * @n: columns of op(B) and C
 * @k: columns of op(A), rows of op(B)
 * @alpha: alpha (real)
 * @a: matrix A
 * @lda: leading dimension of @a
 * @b: matrix B
 * @ldb: leading dimension of @b
 * @beta: beta (real)
 * @c: matrix C
 * @ldc: leading dimension of @c
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.BlasActor.gemm_async] with real scalars, for
 * scripts: returns once C is computed on the GPU.  Safe to call on the
 * actor's own context.
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_gemm_sync (AtomrBlasActor  *self,
                            AtomrTranspose   transa,
                            AtomrTranspose   transb,
                            gint64           m,
                            gint64           n,
                            gint64           k,
                            gdouble          alpha,
                            AtomrBuffer     *a,
                            gint64           lda,
                            AtomrBuffer     *b,
                            gint64           ldb,
                            gdouble          beta,
                            AtomrBuffer     *c,
                            gint64           ldc,
                            GCancellable    *cancellable,
                            GError         **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_BLAS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, ATOMR_ACTOR (self));
  atomr_blas_actor_gemm_async (self, transa, transb, m, n, k, alpha, 0.0, a, lda, b, ldb,
                               beta, 0.0, c, ldc, cancellable, atomr_sync_callback, &sync);
  ok = atomr_blas_actor_gemm_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/**
 * atomr_blas_actor_gemm_ex_async:
 * @self: an [class@Atomr.BlasActor]
 * @transa: how to read @a
 * @transb: how to read @b
 * @m: rows of op(A) and C
 * @n: columns of op(B) and C
 * @k: columns of op(A), rows of op(B)
 * @alpha: alpha
 * @a: matrix A: f16, bf16, f32 or f64
 * @lda: leading dimension of @a
 * @b: matrix B, the dtype of @a
 * @ldb: leading dimension of @b
 * @beta: beta
 * @c: matrix C: the dtype of @a, or f32 when @a is f16 or bf16
 * @ldc: leading dimension of @c
 * @compute_type: the accumulation precision
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * Mixed-precision GEMM through cublasGemmEx:
 * C = alpha·op(A)·op(B) + beta·C with the accumulation chosen by
 * @compute_type (%ATOMR_BLAS_COMPUTE_F32_FAST_TF32 for TF32 tensor cores on
 * f32 data).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_gemm_ex_async (AtomrBlasActor      *self,
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
                                AtomrBlasComputeType compute_type,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  gemm_common (self, atomr_blas_actor_gemm_ex_async, "gemm_ex", transa, transb, m, n, k,
               alpha, 0.0, a, lda, b, ldb, beta, 0.0, c, ldc, TRUE, compute_type,
               cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_gemm_ex_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemm_ex_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_gemm_ex_finish (AtomrBlasActor  *self,
                                 GAsyncResult    *result,
                                 GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemm_ex_async, error);
}

/**
 * atomr_blas_actor_gemm_strided_batched_async:
 * @self: an [class@Atomr.BlasActor]
 * @transa: how to read each A
 * @transb: how to read each B
 * @m: rows of op(A) and C
 * @n: columns of op(B) and C
 * @k: columns of op(A), rows of op(B)
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: the A matrices (f32, f64, c64, c128, f16 or bf16)
 * @lda: leading dimension of each A
 * @stride_a: elements between consecutive A matrices
 * @b: the B matrices, the dtype of @a
 * @ldb: leading dimension of each B
 * @stride_b: elements between consecutive B matrices
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @c: the C matrices, the dtype of @a
 * @ldc: leading dimension of each C
 * @stride_c: elements between consecutive C matrices (at least ldc·n, so
 *   that outputs do not overlap)
 * @batch_count: how many products
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when every C is computed
 * @user_data: data for @callback
 *
 * C[i] = alpha·op(A[i])·op(B[i]) + beta·C[i] for i < @batch_count, where
 * X[i] starts @stride_x elements after X[i-1].
 *
 * Since: 0.1
 */
void
atomr_blas_actor_gemm_strided_batched_async (AtomrBlasActor      *self,
                                             AtomrTranspose       transa,
                                             AtomrTranspose       transb,
                                             gint64               m,
                                             gint64               n,
                                             gint64               k,
                                             gdouble              alpha,
                                             gdouble              alpha_imag,
                                             AtomrBuffer         *a,
                                             gint64               lda,
                                             gint64               stride_a,
                                             AtomrBuffer         *b,
                                             gint64               ldb,
                                             gint64               stride_b,
                                             gdouble              beta,
                                             gdouble              beta_imag,
                                             AtomrBuffer         *c,
                                             gint64               ldc,
                                             gint64               stride_c,
                                             gint                 batch_count,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  const gchar *opname = "gemm_strided_batched";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_gemm_strided_batched_async,
                     cancellable, callback, user_data);

  if (!CHECK_TRANS (opname, "transa", transa) || !CHECK_TRANS (opname, "transb", transb) ||
      !check_dims (opname, &error, "m", m, "n", n, "k", k, NULL) ||
      !atomr_check_positive (opname, "batch_count", batch_count, &error) ||
      !atomr_check_dtype_in (opname, "A", a, gemm_dtypes, G_N_ELEMENTS (gemm_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "A", a, "B", b, &error) ||
      !atomr_check_same_dtype (opname, "A", a, "C", c, &error) ||
      !atomr_check_matrix (opname, "A", a, STORED_ROWS (transa, m, k), STORED_COLS (transa, m, k),
                           "lda", lda, stride_a, batch_count, &error) ||
      !atomr_check_matrix (opname, "B", b, STORED_ROWS (transb, k, n), STORED_COLS (transb, k, n),
                           "ldb", ldb, stride_b, batch_count, &error) ||
      !atomr_check_matrix (opname, "C", c, m, n, "ldc", ldc, stride_c, batch_count, &error) ||
      !atomr_check_distinct (opname, "A", a, "C", c, &error) ||
      !atomr_check_distinct (opname, "B", b, "C", c, &error))
    return atomr_op_fail (op, error);
  if (batch_count > 1 && stride_c < ldc * n)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: stride_c is %" G_GINT64_FORMAT
                                           "; the C matrices would overlap below ldc*n = %"
                                           G_GINT64_FORMAT, opname, stride_c, ldc * n));

  r = request_new (op, a, opname);
  r->transa = to_cublas_op (transa);
  r->transb = to_cublas_op (transb);
  r->m = m; r->n = n; r->k = k;
  r->lda = lda; r->ldb = ldb; r->ldc = ldc;
  r->stride_a = stride_a; r->stride_b = stride_b; r->stride_c = stride_c;
  r->batch = batch_count;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = a; r->b = b; r->c = c;
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_gemm_strided_batched, RESULT_NONE, READS (a, b, c), WRITES (c));
  else
    blas_submit (op, r, call_gemm_strided_batched, RESULT_NONE, READS (a, b), WRITES (c));
}

/**
 * atomr_blas_actor_gemm_strided_batched_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemm_strided_batched_async].
 *
 * Returns: %TRUE when every C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_gemm_strided_batched_finish (AtomrBlasActor  *self,
                                              GAsyncResult    *result,
                                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemm_strided_batched_async,
                                  error);
}

/**
 * atomr_blas_actor_syrk_async:
 * @self: an [class@Atomr.BlasActor]
 * @uplo: which triangle of @c is updated
 * @trans: %ATOMR_TRANSPOSE_N: C = alpha·A·Aᵀ + beta·C with A n×k;
 *   otherwise C = alpha·Aᵀ·A + beta·C with A k×n
 * @n: order of C
 * @k: the inner dimension
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: matrix A (f32, f64, c64 or c128)
 * @lda: leading dimension of @a
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @c: the symmetric n×n matrix C, the dtype of @a
 * @ldc: leading dimension of @c
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is updated
 * @user_data: data for @callback
 *
 * Symmetric rank-k update of one triangle of C.  For complex dtypes
 * @trans must not be %ATOMR_TRANSPOSE_C (the update is symmetric, not
 * Hermitian).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_syrk_async (AtomrBlasActor      *self,
                             AtomrFillMode        uplo,
                             AtomrTranspose       trans,
                             gint64               n,
                             gint64               k,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *a,
                             gint64               lda,
                             gdouble              beta,
                             gdouble              beta_imag,
                             AtomrBuffer         *c,
                             gint64               ldc,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  const gchar *opname = "syrk";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_syrk_async, cancellable, callback, user_data);

  if (!CHECK_FILL (opname, "uplo", uplo) || !CHECK_TRANS (opname, "trans", trans) ||
      !check_dims (opname, &error, "n", n, "k", k, NULL) ||
      !atomr_check_dtype_in (opname, "A", a, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "A", a, "C", c, &error) ||
      !atomr_check_matrix (opname, "A", a, STORED_ROWS (trans, n, k), STORED_COLS (trans, n, k),
                           "lda", lda, 0, 1, &error) ||
      !atomr_check_matrix (opname, "C", c, n, n, "ldc", ldc, 0, 1, &error) ||
      !atomr_check_distinct (opname, "A", a, "C", c, &error))
    return atomr_op_fail (op, error);
  if (trans == ATOMR_TRANSPOSE_C && atomr_dtype_is_complex (atomr_buffer_get_dtype (a)))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: trans is C, but a complex syrk takes N or T",
                                           opname));

  r = request_new (op, a, opname);
  r->uplo = uplo == ATOMR_FILL_MODE_UPPER ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  r->transa = to_cublas_op (trans);
  r->n = n; r->k = k; r->lda = lda; r->ldc = ldc;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = a; r->c = c;
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_syrk, RESULT_NONE, READS (a, c), WRITES (c));
  else
    blas_submit (op, r, call_syrk, RESULT_NONE, READS (a), WRITES (c));
}

/**
 * atomr_blas_actor_syrk_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.syrk_async].
 *
 * Returns: %TRUE when C was updated
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_syrk_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_syrk_async, error);
}

/**
 * atomr_blas_actor_trsm_async:
 * @self: an [class@Atomr.BlasActor]
 * @side: %ATOMR_SIDE_LEFT solves op(A)·X = alpha·B (A is m×m);
 *   %ATOMR_SIDE_RIGHT solves X·op(A) = alpha·B (A is n×n)
 * @uplo: which triangle of @a holds the matrix
 * @trans: how to read @a
 * @diag: whether A has a unit diagonal
 * @m: rows of B
 * @n: columns of B
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: the triangular matrix A (f32, f64, c64 or c128)
 * @lda: leading dimension of @a
 * @b: the right-hand sides B, overwritten by the solution X
 * @ldb: leading dimension of @b
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when X is in @b
 * @user_data: data for @callback
 *
 * Triangular solve with many right-hand sides, in place.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_trsm_async (AtomrBlasActor      *self,
                             AtomrSide            side,
                             AtomrFillMode        uplo,
                             AtomrTranspose       trans,
                             AtomrDiag            diag,
                             gint64               m,
                             gint64               n,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *a,
                             gint64               lda,
                             AtomrBuffer         *b,
                             gint64               ldb,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  const gchar *opname = "trsm";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  gint64 order = side == ATOMR_SIDE_LEFT ? m : n;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_trsm_async, cancellable, callback, user_data);

  if (!atomr_check_enum (opname, "side", side, ATOMR_SIDE_RIGHT + 1, "AtomrSide", &error) ||
      !CHECK_FILL (opname, "uplo", uplo) || !CHECK_TRANS (opname, "trans", trans) ||
      !atomr_check_enum (opname, "diag", diag, ATOMR_DIAG_UNIT + 1, "AtomrDiag", &error) ||
      !check_dims (opname, &error, "m", m, "n", n, NULL) ||
      !atomr_check_dtype_in (opname, "A", a, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "A", a, "B", b, &error) ||
      !atomr_check_distinct (opname, "A", a, "B", b, &error) ||
      !atomr_check_matrix (opname, "A", a, order, order, "lda", lda, 0, 1, &error) ||
      !atomr_check_matrix (opname, "B", b, m, n, "ldb", ldb, 0, 1, &error))
    return atomr_op_fail (op, error);

  r = request_new (op, a, opname);
  r->side = side == ATOMR_SIDE_LEFT ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  r->uplo = uplo == ATOMR_FILL_MODE_UPPER ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  r->transa = to_cublas_op (trans);
  r->diag = diag == ATOMR_DIAG_UNIT ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  r->m = m; r->n = n; r->lda = lda; r->ldb = ldb;
  scalar_set (&r->alpha, alpha, alpha_imag);
  r->a = a; r->b = b;
  blas_submit (op, r, call_trsm, RESULT_NONE, READS (a, b), WRITES (b));
}

/**
 * atomr_blas_actor_trsm_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.trsm_async].
 *
 * Returns: %TRUE when the solution is in B
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_trsm_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_trsm_async, error);
}

/**
 * atomr_blas_actor_geam_async:
 * @self: an [class@Atomr.BlasActor]
 * @transa: how to read @a
 * @transb: how to read @b
 * @m: rows of C
 * @n: columns of C
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: matrix A (f32, f64, c64 or c128)
 * @lda: leading dimension of @a
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @b: matrix B, the dtype of @a
 * @ldb: leading dimension of @b
 * @c: the m×n result C, the dtype of @a
 * @ldc: leading dimension of @c
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * C = alpha·op(A) + beta·op(B): matrix addition and out-of-place
 * transposition.  @c may be @a (or @b) when that operand is not
 * transposed and has leading dimension @ldc.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_geam_async (AtomrBlasActor      *self,
                             AtomrTranspose       transa,
                             AtomrTranspose       transb,
                             gint64               m,
                             gint64               n,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *a,
                             gint64               lda,
                             gdouble              beta,
                             gdouble              beta_imag,
                             AtomrBuffer         *b,
                             gint64               ldb,
                             AtomrBuffer         *c,
                             gint64               ldc,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  const gchar *opname = "geam";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_geam_async, cancellable, callback, user_data);

  if (!CHECK_TRANS (opname, "transa", transa) || !CHECK_TRANS (opname, "transb", transb) ||
      !check_dims (opname, &error, "m", m, "n", n, NULL) ||
      !atomr_check_dtype_in (opname, "A", a, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "A", a, "B", b, &error) ||
      !atomr_check_same_dtype (opname, "A", a, "C", c, &error) ||
      !atomr_check_matrix (opname, "A", a, STORED_ROWS (transa, m, n), STORED_COLS (transa, m, n),
                           "lda", lda, 0, 1, &error) ||
      !atomr_check_matrix (opname, "B", b, STORED_ROWS (transb, m, n), STORED_COLS (transb, m, n),
                           "ldb", ldb, 0, 1, &error) ||
      !atomr_check_matrix (opname, "C", c, m, n, "ldc", ldc, 0, 1, &error))
    return atomr_op_fail (op, error);
  if ((c == a && (transa != ATOMR_TRANSPOSE_N || lda != ldc)) ||
      (c == b && (transb != ATOMR_TRANSPOSE_N || ldb != ldc)))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: C is %s, which is transposed or has another "
                                           "leading dimension; in-place geam needs N and ldc",
                                           opname, c == a ? "A" : "B"));

  r = request_new (op, a, opname);
  r->transa = to_cublas_op (transa);
  r->transb = to_cublas_op (transb);
  r->m = m; r->n = n; r->lda = lda; r->ldb = ldb; r->ldc = ldc;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = a; r->b = b; r->c = c;
  blas_submit (op, r, call_geam, RESULT_NONE, READS (a, b), WRITES (c));
}

/**
 * atomr_blas_actor_geam_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.geam_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_geam_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_geam_async, error);
}

/* ------------------------------------------------------------------ */
/* Level 2                                                              */

/**
 * atomr_blas_actor_gemv_async:
 * @self: an [class@Atomr.BlasActor]
 * @trans: how to read @a
 * @m: rows of A
 * @n: columns of A
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: the m×n matrix A (f32, f64, c64 or c128)
 * @lda: leading dimension of @a
 * @x: vector x: n elements for %ATOMR_TRANSPOSE_N, else m
 * @incx: stride of @x
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @y: vector y: m elements for %ATOMR_TRANSPOSE_N, else n
 * @incy: stride of @y
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is computed
 * @user_data: data for @callback
 *
 * y = alpha·op(A)·x + beta·y.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_gemv_async (AtomrBlasActor      *self,
                             AtomrTranspose       trans,
                             gint64               m,
                             gint64               n,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *a,
                             gint64               lda,
                             AtomrBuffer         *x,
                             gint64               incx,
                             gdouble              beta,
                             gdouble              beta_imag,
                             AtomrBuffer         *y,
                             gint64               incy,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  const gchar *opname = "gemv";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  gint64 xlen = trans == ATOMR_TRANSPOSE_N ? n : m;
  gint64 ylen = trans == ATOMR_TRANSPOSE_N ? m : n;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_gemv_async, cancellable, callback, user_data);

  if (!CHECK_TRANS (opname, "trans", trans) ||
      !check_dims (opname, &error, "m", m, "n", n, NULL) ||
      !atomr_check_dtype_in (opname, "A", a, half_ok_dtypes, G_N_ELEMENTS (half_ok_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "A", a, "x", x, &error) ||
      !atomr_check_same_dtype (opname, "A", a, "y", y, &error) ||
      !atomr_check_distinct (opname, "x", x, "y", y, &error) ||
      !atomr_check_distinct (opname, "A", a, "y", y, &error) ||
      !atomr_check_matrix (opname, "A", a, m, n, "lda", lda, 0, 1, &error) ||
      !atomr_check_vector (opname, "x", x, xlen, "incx", incx, &error) ||
      !atomr_check_vector (opname, "y", y, ylen, "incy", incy, &error))
    return atomr_op_fail (op, error);

  r = request_new (op, a, opname);
  r->transa = to_cublas_op (trans);
  r->m = m; r->n = n; r->lda = lda; r->incx = incx; r->incy = incy;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = a; r->x = x; r->y = y;
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_gemv, RESULT_NONE, READS (a, x, y), WRITES (y));
  else
    blas_submit (op, r, call_gemv, RESULT_NONE, READS (a, x), WRITES (y));
}

/**
 * atomr_blas_actor_gemv_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemv_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_gemv_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemv_async, error);
}

/**
 * atomr_blas_actor_ger_async:
 * @self: an [class@Atomr.BlasActor]
 * @m: rows of A, elements of x
 * @n: columns of A, elements of y
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @y: vector y, the dtype of @x
 * @incy: stride of @y
 * @conjugate: for complex dtypes, use conj(y)ᵀ (gerc) instead of yᵀ (geru)
 * @a: the m×n matrix A, updated in place
 * @lda: leading dimension of @a
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when A is updated
 * @user_data: data for @callback
 *
 * Rank-1 update A = alpha·x·yᵀ + A (or alpha·x·yᴴ + A).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_ger_async (AtomrBlasActor      *self,
                            gint64               m,
                            gint64               n,
                            gdouble              alpha,
                            gdouble              alpha_imag,
                            AtomrBuffer         *x,
                            gint64               incx,
                            AtomrBuffer         *y,
                            gint64               incy,
                            gboolean             conjugate,
                            AtomrBuffer         *a,
                            gint64               lda,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  const gchar *opname = "ger";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_ger_async, cancellable, callback, user_data);

  if (!check_dims (opname, &error, "m", m, "n", n, NULL) ||
      !atomr_check_dtype_in (opname, "x", x, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !atomr_check_same_dtype (opname, "x", x, "y", y, &error) ||
      !atomr_check_same_dtype (opname, "x", x, "A", a, &error) ||
      !atomr_check_distinct (opname, "x", x, "A", a, &error) ||
      !atomr_check_distinct (opname, "y", y, "A", a, &error) ||
      !atomr_check_vector (opname, "x", x, m, "incx", incx, &error) ||
      !atomr_check_vector (opname, "y", y, n, "incy", incy, &error) ||
      !atomr_check_matrix (opname, "A", a, m, n, "lda", lda, 0, 1, &error))
    return atomr_op_fail (op, error);

  r = request_new (op, x, opname);
  r->m = m; r->n = n; r->incx = incx; r->incy = incy; r->lda = lda;
  r->conjugate = !!conjugate;
  scalar_set (&r->alpha, alpha, alpha_imag);
  r->x = x; r->y = y; r->a = a;
  blas_submit (op, r, call_ger, RESULT_NONE, READS (x, y, a), WRITES (a));
}

/**
 * atomr_blas_actor_ger_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.ger_async].
 *
 * Returns: %TRUE when A was updated
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_ger_finish (AtomrBlasActor  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_ger_async, error);
}

/* ------------------------------------------------------------------ */
/* Level 1                                                              */

/* Validation of the (n, x, incx[, y, incy]) family. */

/* A vector argument; @negative allows increments below 0 (reference BLAS:
 * the vector is then read from its far end), never 0. */
static gboolean
check_vector_arg (const gchar  *opname,
                  const gchar  *arg,
                  AtomrBuffer  *buffer,
                  gint64        n,
                  const gchar  *inc_arg,
                  gint64        inc,
                  gboolean      negative,
                  GError      **error)
{
  if (negative && inc < 0)
    {
      if (inc < -(gint64) G_MAXINT)
        return (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                             "%s: %s is %" G_GINT64_FORMAT "; the library takes at least %d", opname,
                             inc_arg, inc, -G_MAXINT), FALSE);
      return atomr_check_vector (opname, arg, buffer, n, inc_arg, -inc, error);
    }
  if (negative && inc == 0)
    return (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "%s: increment %s is 0; it must not be 0", opname, inc_arg), FALSE);
  return atomr_check_vector (opname, arg, buffer, n, inc_arg, inc, error);
}

static gboolean
check_level1 (const gchar  *opname,
              gint64        n,
              AtomrBuffer  *x,
              gint64        incx,
              AtomrBuffer  *y,
              gint64        incy,
              gboolean      half_ok,
              gboolean      negative,
              GError      **error)
{
  if (!check_dims (opname, error, "n", n, NULL) ||
      !atomr_check_dtype_in (opname, "x", x, half_ok ? half_ok_dtypes : blas_dtypes,
                             half_ok ? G_N_ELEMENTS (half_ok_dtypes) : G_N_ELEMENTS (blas_dtypes), error) ||
      !check_vector_arg (opname, "x", x, n, "incx", incx, negative, error))
    return FALSE;
  if (y == NULL)
    return TRUE;
  return atomr_check_same_dtype (opname, "x", x, "y", y, error) &&
         check_vector_arg (opname, "y", y, n, "incy", incy, negative, error);
}

static void
level1 (AtomrBlasActor      *self,
        const gchar         *opname,
        gpointer             tag,
        BlasCallFunc         call,
        ResultKind           result,
        gint64               n,
        AtomrBuffer         *x,
        gint64               incx,
        AtomrBuffer         *y,
        gint64               incy,
        gboolean             needs_y,
        gboolean             distinct,
        gdouble              alpha,
        gdouble              alpha_imag,
        gdouble              beta,
        gboolean             conjugate,
        GCancellable        *cancellable,
        GAsyncReadyCallback  callback,
        gpointer             user_data)
{
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, tag, cancellable, callback, user_data);

  if (needs_y && y == NULL)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: y must be an AtomrBuffer", opname));
  /* cuBLAS has Ex forms (f16, bf16) of axpy, scal, dot and nrm2; the
   * routines of two vectors take negative increments as reference BLAS
   * does (scal, nrm2, asum and the index searches need positive ones). */
  if (!check_level1 (opname, n, x, incx, y, incy,
                     call == call_axpy || call == call_scal || call == call_dot || call == call_nrm2,
                     call == call_axpy || call == call_copy || call == call_swap || call == call_rot ||
                     call == call_dot, &error) ||
      (distinct && !atomr_check_distinct (opname, "x", x, "y", y, &error)))
    return atomr_op_fail (op, error);

  r = request_new (op, x, opname);
  r->n = n; r->incx = incx; r->incy = incy;
  r->conjugate = !!conjugate;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, 0.0);
  r->x = x; r->y = y;

  if (call == call_axpy)
    blas_submit (op, r, call, result, READS (x, y), WRITES (y));
  else if (call == call_copy)
    blas_submit (op, r, call, result, READS (x), WRITES (y));
  else if (call == call_swap || call == call_rot)
    blas_submit (op, r, call, result, READS (x, y), WRITES (x, y));
  else if (call == call_scal)
    blas_submit (op, r, call, result, READS (x), WRITES (x));
  else if (y)
    blas_submit (op, r, call, result, READS (x, y), NULL);
  else
    blas_submit (op, r, call, result, READS (x), NULL);
}

static gboolean
finish_scalar (AtomrBlasActor  *self,
               GAsyncResult    *result,
               gpointer         tag,
               gdouble         *re,
               gdouble         *im,
               gint64          *index,
               GError         **error)
{
  BlasResult *res = atomr_op_finish_pointer (self, result, tag, error);

  if (res == NULL)
    return FALSE;
  if (re)
    *re = res->re;
  if (im)
    *im = res->im;
  if (index)
    *index = res->index;
  g_free (res);
  return TRUE;
}

/**
 * atomr_blas_actor_axpy_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @y: vector y, the dtype of @x, updated in place
 * @incy: stride of @y
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is updated
 * @user_data: data for @callback
 *
 * y = alpha·x + y.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_axpy_async (AtomrBlasActor      *self,
                             gint64               n,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *x,
                             gint64               incx,
                             AtomrBuffer         *y,
                             gint64               incy,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "axpy", atomr_blas_actor_axpy_async, call_axpy, RESULT_NONE, n, x, incx, y, incy,
          TRUE, TRUE, alpha, alpha_imag, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_axpy_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.axpy_async].
 *
 * Returns: %TRUE when y was updated
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_axpy_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_axpy_async, error);
}

/**
 * atomr_blas_actor_scal_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @x: vector x (f32, f64, c64 or c128), scaled in place
 * @incx: stride of @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when x is scaled
 * @user_data: data for @callback
 *
 * x = alpha·x.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_scal_async (AtomrBlasActor      *self,
                             gint64               n,
                             gdouble              alpha,
                             gdouble              alpha_imag,
                             AtomrBuffer         *x,
                             gint64               incx,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "scal", atomr_blas_actor_scal_async, call_scal, RESULT_NONE, n, x, incx, NULL, 1,
          FALSE, FALSE, alpha, alpha_imag, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_scal_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.scal_async].
 *
 * Returns: %TRUE when x was scaled
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_scal_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_scal_async, error);
}

/**
 * atomr_blas_actor_copy_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: source vector (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @y: destination vector, the dtype of @x
 * @incy: stride of @y
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y holds x
 * @user_data: data for @callback
 *
 * y = x, element by element with strides.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_copy_async (AtomrBlasActor      *self,
                             gint64               n,
                             AtomrBuffer         *x,
                             gint64               incx,
                             AtomrBuffer         *y,
                             gint64               incy,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "copy", atomr_blas_actor_copy_async, call_copy, RESULT_NONE, n, x, incx, y, incy,
          TRUE, TRUE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_copy_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.copy_async].
 *
 * Returns: %TRUE when y holds x
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_copy_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_copy_async, error);
}

/**
 * atomr_blas_actor_swap_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @y: vector y, the dtype of @x
 * @incy: stride of @y
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the vectors are exchanged
 * @user_data: data for @callback
 *
 * Exchanges x and y.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_swap_async (AtomrBlasActor      *self,
                             gint64               n,
                             AtomrBuffer         *x,
                             gint64               incx,
                             AtomrBuffer         *y,
                             gint64               incy,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "swap", atomr_blas_actor_swap_async, call_swap, RESULT_NONE, n, x, incx, y, incy,
          TRUE, TRUE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_swap_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.swap_async].
 *
 * Returns: %TRUE when the vectors were exchanged
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_swap_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_swap_async, error);
}

/**
 * atomr_blas_actor_rot_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128), updated in place
 * @incx: stride of @x
 * @y: vector y, the dtype of @x, updated in place
 * @incy: stride of @y
 * @c: the cosine of the rotation (real)
 * @s: the sine of the rotation (real)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when both vectors are rotated
 * @user_data: data for @callback
 *
 * Plane rotation: x = c·x + s·y, y = c·y − s·x (csrot/zdrot for complex
 * dtypes).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_rot_async (AtomrBlasActor      *self,
                            gint64               n,
                            AtomrBuffer         *x,
                            gint64               incx,
                            AtomrBuffer         *y,
                            gint64               incy,
                            gdouble              c,
                            gdouble              s,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  level1 (self, "rot", atomr_blas_actor_rot_async, call_rot, RESULT_NONE, n, x, incx, y, incy,
          TRUE, TRUE, c, 0.0, s, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_rot_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.rot_async].
 *
 * Returns: %TRUE when the vectors were rotated
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_rot_finish (AtomrBlasActor  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_rot_async, error);
}

/**
 * atomr_blas_actor_dot_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @y: vector y, the dtype of @x
 * @incy: stride of @y
 * @conjugate: for complex dtypes, conjugate x (dotc) instead of not (dotu)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the result
 * @user_data: data for @callback
 *
 * The dot product Σ xᵢ·yᵢ (or Σ conj(xᵢ)·yᵢ).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_dot_async (AtomrBlasActor      *self,
                            gint64               n,
                            AtomrBuffer         *x,
                            gint64               incx,
                            AtomrBuffer         *y,
                            gint64               incy,
                            gboolean             conjugate,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  level1 (self, "dot", atomr_blas_actor_dot_async, call_dot, RESULT_SAME, n, x, incx, y, incy,
          TRUE, FALSE, 0.0, 0.0, 0.0, conjugate, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_dot_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @real: (out) (optional): the real part of the dot product
 * @imag: (out) (optional): its imaginary part (0 for real dtypes)
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.dot_async].
 *
 * Returns: %TRUE when the product was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_dot_finish (AtomrBlasActor  *self,
                             GAsyncResult    *result,
                             gdouble         *real,
                             gdouble         *imag,
                             GError         **error)
{
  return finish_scalar (self, result, atomr_blas_actor_dot_async, real, imag, NULL, error);
}

/**
 * atomr_blas_actor_nrm2_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the result
 * @user_data: data for @callback
 *
 * The Euclidean norm of x.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_nrm2_async (AtomrBlasActor      *self,
                             gint64               n,
                             AtomrBuffer         *x,
                             gint64               incx,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "nrm2", atomr_blas_actor_nrm2_async, call_nrm2, RESULT_REAL, n, x, incx, NULL, 1,
          FALSE, FALSE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_nrm2_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @norm: (out) (optional): ‖x‖₂
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.nrm2_async].
 *
 * Returns: %TRUE when the norm was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_nrm2_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              gdouble         *norm,
                              GError         **error)
{
  return finish_scalar (self, result, atomr_blas_actor_nrm2_async, norm, NULL, NULL, error);
}

/**
 * atomr_blas_actor_asum_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the result
 * @user_data: data for @callback
 *
 * Σ |Re xᵢ| + |Im xᵢ|.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_asum_async (AtomrBlasActor      *self,
                             gint64               n,
                             AtomrBuffer         *x,
                             gint64               incx,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  level1 (self, "asum", atomr_blas_actor_asum_async, call_asum, RESULT_REAL, n, x, incx, NULL, 1,
          FALSE, FALSE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_asum_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @sum: (out) (optional): the sum of magnitudes
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.asum_async].
 *
 * Returns: %TRUE when the sum was computed
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_asum_finish (AtomrBlasActor  *self,
                              GAsyncResult    *result,
                              gdouble         *sum,
                              GError         **error)
{
  return finish_scalar (self, result, atomr_blas_actor_asum_async, sum, NULL, NULL, error);
}

/**
 * atomr_blas_actor_iamax_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the result
 * @user_data: data for @callback
 *
 * Finds the first element of largest magnitude (|Re| + |Im| for complex).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_iamax_async (AtomrBlasActor      *self,
                              gint64               n,
                              AtomrBuffer         *x,
                              gint64               incx,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  level1 (self, "iamax", atomr_blas_actor_iamax_async, call_iamax, RESULT_INDEX, n, x, incx, NULL,
          1, FALSE, FALSE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_iamax_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @index: (out) (optional): the 0-based index of the element in the
 *   vector (in units of @incx), or -1 when n is 0
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.iamax_async].
 *
 * Returns: %TRUE when the index was found
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_iamax_finish (AtomrBlasActor  *self,
                               GAsyncResult    *result,
                               gint64          *index,
                               GError         **error)
{
  return finish_scalar (self, result, atomr_blas_actor_iamax_async, NULL, NULL, index, error);
}

/**
 * atomr_blas_actor_iamin_async:
 * @self: an [class@Atomr.BlasActor]
 * @n: number of elements
 * @x: vector x (f32, f64, c64 or c128)
 * @incx: stride of @x
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the result
 * @user_data: data for @callback
 *
 * Finds the first element of smallest magnitude (|Re| + |Im| for complex).
 *
 * Since: 0.1
 */
void
atomr_blas_actor_iamin_async (AtomrBlasActor      *self,
                              gint64               n,
                              AtomrBuffer         *x,
                              gint64               incx,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  level1 (self, "iamin", atomr_blas_actor_iamin_async, call_iamin, RESULT_INDEX, n, x, incx, NULL,
          1, FALSE, FALSE, 0.0, 0.0, 0.0, FALSE, cancellable, callback, user_data);
}

/**
 * atomr_blas_actor_iamin_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @index: (out) (optional): the 0-based index of the element in the
 *   vector (in units of @incx), or -1 when n is 0
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.iamin_async].
 *
 * Returns: %TRUE when the index was found
 *
 * Since: 0.1
 */
gboolean
atomr_blas_actor_iamin_finish (AtomrBlasActor  *self,
                               GAsyncResult    *result,
                               gint64          *index,
                               GError         **error)
{
  return finish_scalar (self, result, atomr_blas_actor_iamin_async, NULL, NULL, index, error);
}

/* ------------------------------------------------------------------ */
/* Handle lifecycle and GObject                                         */

static gboolean
atomr_blas_actor_setup (AtomrActor  *actor,
                        GError     **error)
{
  AtomrBlasActor *self = ATOMR_BLAS_ACTOR (actor);
  CUstream stream = atomr_actor_get_cu_stream (actor);
  cublasStatus_t st;

  /* The host test device has no GPU: requests are validated, then refused. */
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;

  if (!atomr_cublas_load (error))
    return FALSE;
  st = cublasCreate (&self->handle);
  if (!blas_check (st, "cublasCreate", error))
    {
      self->handle = NULL;
      return FALSE;
    }
  self->handle_math_mode = g_atomic_int_get (&self->math_mode);
  self->handle_stream = stream;
  if (!blas_check (cublasSetStream (self->handle, (cudaStream_t) stream), "cublasSetStream", error) ||
      !blas_check (cublasSetPointerMode (self->handle, CUBLAS_POINTER_MODE_HOST),
                   "cublasSetPointerMode", error) ||
      !blas_check (cublasSetMathMode (self->handle, to_cublas_math (self->handle_math_mode)),
                   "cublasSetMathMode", error) ||
      !atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&self->scratch, SCRATCH_SIZE, stream),
                         "cuMemAllocAsync", error))
    {
      cublasDestroy (self->handle);
      self->handle = NULL;
      self->scratch = 0;
      return FALSE;
    }
  /* Optional: without cuBLASLt every gemm takes the classic routine. */
  if (g_strcmp0 (g_getenv ("ATOMR_BLAS_LT_GEMM"), "0") != 0 &&
      atomr_cublasLt_load (NULL) && cublasLtCreate (&self->lt) != CUBLAS_STATUS_SUCCESS)
    self->lt = NULL;
  return TRUE;
}

static void
atomr_blas_actor_teardown (AtomrActor *actor,
                           gboolean    context_alive)
{
  AtomrBlasActor *self = ATOMR_BLAS_ACTOR (actor);

  /* A dead context took the handle's memory with it: nothing may be
   * called on the handle then. */
  if (context_alive)
    {
      if (self->scratch)
        ATOMR_CU->cuMemFreeAsync (self->scratch, atomr_actor_get_cu_stream (actor));
      if (self->lt_workspace)
        ATOMR_CU->cuMemFreeAsync (self->lt_workspace, atomr_actor_get_cu_stream (actor));
      if (self->handle)
        cublasDestroy (self->handle);
      if (self->lt)
        cublasLtDestroy (self->lt);
    }
  /* Host objects: freed whether or not the context lives. */
  lt_plans_free (self);
  self->scratch = 0;
  self->lt_workspace = 0;
  self->handle = NULL;
  self->lt = NULL;
}

static void
atomr_blas_actor_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  AtomrBlasActor *self = ATOMR_BLAS_ACTOR (object);

  switch (prop_id)
    {
    case PROP_MATH_MODE:
      g_value_set_enum (value, atomr_blas_actor_get_math_mode (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_blas_actor_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  AtomrBlasActor *self = ATOMR_BLAS_ACTOR (object);

  switch (prop_id)
    {
    case PROP_MATH_MODE:
      atomr_blas_actor_set_math_mode (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_blas_actor_class_init (AtomrBlasActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->get_property = atomr_blas_actor_get_property;
  object_class->set_property = atomr_blas_actor_set_property;
  actor_class->library = "cublas";
  actor_class->setup = atomr_blas_actor_setup;
  actor_class->teardown = atomr_blas_actor_teardown;

  /**
   * AtomrBlasActor:math-mode:
   *
   * The math mode of the actor's cuBLAS handle; applies to requests
   * enqueued after the change.
   *
   * Since: 0.1
   */
  properties[PROP_MATH_MODE] =
    g_param_spec_enum ("math-mode", NULL, NULL, ATOMR_TYPE_BLAS_MATH_MODE,
                       ATOMR_BLAS_MATH_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_blas_actor_init (AtomrBlasActor *self)
{
  self->math_mode = ATOMR_BLAS_MATH_DEFAULT;
}

/**
 * atomr_blas_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a cuBLAS actor with its own stream and handle, bound to the
 * calling thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrBlasActor *
atomr_blas_actor_new (AtomrDevice  *device,
                      GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_BLAS_ACTOR, device, NULL, error);
}

/**
 * atomr_blas_actor_get_math_mode:
 * @self: an [class@Atomr.BlasActor]
 *
 * Gets the math mode of the actor's cuBLAS handle.
 *
 * This is the value of the [property@Atomr.BlasActor:math-mode] property.
 *
 * Returns: the math mode of the actor's cuBLAS handle
 *
 * Since: 0.1
 */
AtomrBlasMathMode
atomr_blas_actor_get_math_mode (AtomrBlasActor *self)
{
  g_return_val_if_fail (ATOMR_IS_BLAS_ACTOR (self), ATOMR_BLAS_MATH_DEFAULT);
  return g_atomic_int_get (&self->math_mode);
}

/**
 * atomr_blas_actor_set_math_mode:
 * @self: an [class@Atomr.BlasActor]
 * @mode: the math mode
 *
 * Sets the math mode (TF32 tensor cores for f32, pedantic precision) used
 * by requests enqueued from now on.  May be called from any thread.
 *
 * Since: 0.1
 */
void
atomr_blas_actor_set_math_mode (AtomrBlasActor    *self,
                                AtomrBlasMathMode  mode)
{
  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  g_return_if_fail (mode <= ATOMR_BLAS_MATH_PEDANTIC);
  if (g_atomic_int_get (&self->math_mode) == (gint) mode)
    return;
  g_atomic_int_set (&self->math_mode, mode);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MATH_MODE]);
}

/* ------------------------------------------------------------------ */
/* Views: the same routines with operands given as AtomrTensor.        */
/* Leading dimensions and transposes come from the strides (see        */
/* atomr_tensor_get_matrix_layout()), sub-matrices cost no copy.       */

static gboolean
view_dtype (const gchar       *opname,
            const gchar       *what,
            AtomrTensor       *t,
            const AtomrDtype  *allowed,
            guint              n_allowed,
            GError           **error)
{
  AtomrDtype dtype = atomr_tensor_get_dtype (t);

  for (guint i = 0; i < n_allowed; i++)
    if (allowed[i] == dtype)
      return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "%s: %s has dtype %s, which this routine does not take",
               opname, what, atomr_dtype_get_name (dtype));
  return FALSE;
}

static gboolean
view_matrix (AtomrBlasActor     *self,
             const gchar        *opname,
             const gchar        *what,
             AtomrTensor        *t,
             AtomrMatrixLayout  *layout,
             GError            **error)
{
  g_autofree gchar *label = g_strdup_printf ("%s: %s", opname, what);
  g_autofree gchar *ld = g_strdup_printf ("leading dimension of %s (from its strides)", what);

  return atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), label, error) &&
         atomr_tensor_get_matrix_layout (t, label, layout, error) &&
         atomr_check_int32 (opname, what, MAX (layout->rows, layout->cols), error) &&
         atomr_check_int32 (opname, ld, layout->ld, error);
}

/* A 1-D view as (offset of the lowest element, increment ≥ 1). */
static gboolean
view_vector (AtomrBlasActor  *self,
             const gchar     *opname,
             const gchar     *what,
             AtomrTensor     *t,
             gint64          *n,
             gint            *inc,
             GError         **error)
{
  g_autofree gchar *label = g_strdup_printf ("%s: %s", opname, what);
  gint64 stride;

  if (!atomr_tensor_check (t, atomr_actor_get_device (ATOMR_ACTOR (self)), label, error))
    return FALSE;
  if (atomr_tensor_get_n_dims (t) != 1)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s must be a vector (1 dimension), not of rank %u",
                   label, atomr_tensor_get_n_dims (t));
      return FALSE;
    }
  *n = atomr_tensor_get_dim (t, 0);
  stride = *n <= 1 ? 1 : atomr_tensor_get_stride (t, 0);
  if (stride < 1)
    {
      g_set_error (error, ATOMR_ERROR,
                   stride == 0 ? ATOMR_ERROR_INVALID_ARGUMENT : ATOMR_ERROR_NOT_SUPPORTED,
                   "%s has stride %" G_GINT64_FORMAT ": vectors need a positive stride "
                   "(copy a %s view to a new tensor first)", label, stride,
                   stride == 0 ? "broadcast" : "reversed");
      return FALSE;
    }
  if (!atomr_check_int32 (opname, what, *n, error) ||
      !atomr_check_int32 (opname, "the stride of a vector", stride, error))
    return FALSE;
  *inc = (gint) stride;
  return TRUE;
}

static gboolean
view_distinct (const gchar  *opname,
               const gchar  *in,
               AtomrTensor  *a,
               const gchar  *out,
               AtomrTensor  *b,
               GError      **error)
{
  if (atomr_tensor_overlaps (a, b))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s overlaps %s in memory; the output must not alias an input",
                   opname, out, in);
      return FALSE;
    }
  return TRUE;
}

static gboolean
view_same_dtype (const gchar  *opname,
                 AtomrTensor  *a,
                 const gchar  *what,
                 AtomrTensor  *b,
                 GError      **error)
{
  if (atomr_tensor_get_dtype (a) != atomr_tensor_get_dtype (b))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: %s has dtype %s, not %s like the first operand", opname, what,
                   atomr_dtype_get_name (atomr_tensor_get_dtype (b)),
                   atomr_dtype_get_name (atomr_tensor_get_dtype (a)));
      return FALSE;
    }
  return TRUE;
}

static BlasRequest *
view_request_new (AtomrOp     *op,
                  AtomrTensor *first,
                  const gchar *opname)
{
  BlasRequest *r = request_new (op, atomr_tensor_get_buffer (first), opname);

  r->dtype = r->out_dtype = atomr_tensor_get_dtype (first);
  return r;
}

/**
 * atomr_blas_actor_gemm_tensor_async:
 * @self: an [class@Atomr.BlasActor]
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: an m × k matrix view (f32, f64, c64, c128, f16 or bf16)
 * @b: a k × n matrix view, the dtype of @a
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @c: an m × n matrix view, the dtype of @a; read too when beta ≠ 0
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when C is computed
 * @user_data: data for @callback
 *
 * C = alpha·A·B + beta·C on views, without copies: each matrix may be
 * row-major or column-major, a transposed view ([method@Atomr.Tensor.transpose])
 * or a sub-matrix ([method@Atomr.Tensor.slice]); the leading dimensions and
 * transposes are taken from the strides.  A layout with no BLAS form (both
 * strides > 1, broadcast, reversed) fails with
 * %ATOMR_ERROR_INVALID_ARGUMENT naming the operand, as does a C that
 * overlaps A or B.  Transposes are plain (a view cannot conjugate): use
 * [method@Atomr.BlasActor.gemm_async] with %ATOMR_TRANSPOSE_C for conjugates.
 *
 * Since: 0.2
 */
void
atomr_blas_actor_gemm_tensor_async (AtomrBlasActor      *self,
                                    gdouble              alpha,
                                    gdouble              alpha_imag,
                                    AtomrTensor         *a,
                                    AtomrTensor         *b,
                                    gdouble              beta,
                                    gdouble              beta_imag,
                                    AtomrTensor         *c,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  const gchar *opname = "gemm-tensor";
  AtomrMatrixLayout la, lb, lc;
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  gint64 m, n, k;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_gemm_tensor_async, cancellable, callback, user_data);

  if (!view_matrix (self, opname, "A", a, &la, &error) ||
      !view_matrix (self, opname, "B", b, &lb, &error) ||
      !view_matrix (self, opname, "C", c, &lc, &error) ||
      !view_dtype (opname, "A", a, gemm_dtypes, G_N_ELEMENTS (gemm_dtypes), &error) ||
      !view_same_dtype (opname, a, "B", b, &error) ||
      !view_same_dtype (opname, a, "C", c, &error) ||
      !view_distinct (opname, "A", a, "C", c, &error) ||
      !view_distinct (opname, "B", b, "C", c, &error))
    return atomr_op_fail (op, error);

  m = atomr_tensor_get_dim (a, 0);
  k = atomr_tensor_get_dim (a, 1);
  n = atomr_tensor_get_dim (b, 1);
  if (atomr_tensor_get_dim (b, 0) != k || atomr_tensor_get_dim (c, 0) != m ||
      atomr_tensor_get_dim (c, 1) != n)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: shapes do not chain: A is %" G_GINT64_FORMAT " × %"
                                           G_GINT64_FORMAT ", B %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                                           ", C %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                                           " (need m × k, k × n, m × n)", opname, m, k,
                                           atomr_tensor_get_dim (b, 0), n,
                                           atomr_tensor_get_dim (c, 0), atomr_tensor_get_dim (c, 1)));

  r = view_request_new (op, a, opname);
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->c = atomr_tensor_get_buffer (c);
  r->off_c = atomr_tensor_get_byte_offset (c);
  r->ldc = (gint) lc.ld;
  r->k = (gint) k;
  if (!lc.transposed)
    {
      /* C stored column-major: C = op(A)·op(B) */
      r->m = (gint) m;
      r->n = (gint) n;
      r->transa = la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
      r->transb = lb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
      r->a = atomr_tensor_get_buffer (a);
      r->off_a = atomr_tensor_get_byte_offset (a);
      r->lda = (gint) la.ld;
      r->b = atomr_tensor_get_buffer (b);
      r->off_b = atomr_tensor_get_byte_offset (b);
      r->ldb = (gint) lb.ld;
    }
  else
    {
      /* C stored row-major, i.e. Cᵀ column-major: Cᵀ = Bᵀ·Aᵀ */
      r->m = (gint) n;
      r->n = (gint) m;
      r->transa = lb.transposed ? CUBLAS_OP_N : CUBLAS_OP_T;
      r->transb = la.transposed ? CUBLAS_OP_N : CUBLAS_OP_T;
      r->a = atomr_tensor_get_buffer (b);
      r->off_a = atomr_tensor_get_byte_offset (b);
      r->lda = (gint) lb.ld;
      r->b = atomr_tensor_get_buffer (a);
      r->off_b = atomr_tensor_get_byte_offset (a);
      r->ldb = (gint) la.ld;
    }
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_gemm, RESULT_NONE, READS (r->a, r->b, r->c), WRITES (r->c));
  else
    blas_submit (op, r, call_gemm, RESULT_NONE, READS (r->a, r->b), WRITES (r->c));
}

/**
 * atomr_blas_actor_gemm_tensor_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemm_tensor_async].
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.2
 */
gboolean
atomr_blas_actor_gemm_tensor_finish (AtomrBlasActor  *self,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemm_tensor_async, error);
}

/**
 * atomr_blas_actor_gemm_tensor_sync:
 * @self: an [class@Atomr.BlasActor]
 * @alpha: alpha (real)
 * @a: an m × k matrix view
 * @b: a k × n matrix view
 * @beta: beta (real)
 * @c: an m × n matrix view
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking form of [method@Atomr.BlasActor.gemm_tensor_async] with real scalars.
 *
 * Returns: %TRUE when C was computed
 *
 * Since: 0.2
 */
gboolean
atomr_blas_actor_gemm_tensor_sync (AtomrBlasActor  *self,
                                   gdouble          alpha,
                                   AtomrTensor     *a,
                                   AtomrTensor     *b,
                                   gdouble          beta,
                                   AtomrTensor     *c,
                                   GCancellable    *cancellable,
                                   GError         **error)
{
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_BLAS_ACTOR (self), FALSE);
  atomr_sync_begin (&sync, ATOMR_ACTOR (self));
  atomr_blas_actor_gemm_tensor_async (self, alpha, 0.0, a, b, beta, 0.0, c, cancellable,
                                      atomr_sync_callback, &sync);
  ok = atomr_blas_actor_gemm_tensor_finish (self, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/**
 * atomr_blas_actor_gemv_tensor_async:
 * @self: an [class@Atomr.BlasActor]
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @a: an m × n matrix view (f32, f64, c64 or c128)
 * @x: a vector view of n elements, the dtype of @a
 * @beta: the real part of beta
 * @beta_imag: the imaginary part of beta (complex dtypes only)
 * @y: a vector view of m elements, the dtype of @a; read too when beta ≠ 0
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is computed
 * @user_data: data for @callback
 *
 * y = alpha·A·x + beta·y on views: A in any BLAS layout (see
 * [method@Atomr.BlasActor.gemm_tensor_async]), vectors with any positive stride
 * (a row or a column of a matrix, for instance).
 *
 * Since: 0.2
 */
void
atomr_blas_actor_gemv_tensor_async (AtomrBlasActor      *self,
                                    gdouble              alpha,
                                    gdouble              alpha_imag,
                                    AtomrTensor         *a,
                                    AtomrTensor         *x,
                                    gdouble              beta,
                                    gdouble              beta_imag,
                                    AtomrTensor         *y,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  const gchar *opname = "gemv-tensor";
  AtomrMatrixLayout la;
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  gint64 nx, ny;
  gint incx, incy;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_gemv_tensor_async, cancellable, callback, user_data);

  if (!view_matrix (self, opname, "A", a, &la, &error) ||
      !view_vector (self, opname, "x", x, &nx, &incx, &error) ||
      !view_vector (self, opname, "y", y, &ny, &incy, &error) ||
      !view_dtype (opname, "A", a, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !view_same_dtype (opname, a, "x", x, &error) ||
      !view_same_dtype (opname, a, "y", y, &error) ||
      !view_distinct (opname, "A", a, "y", y, &error) ||
      !view_distinct (opname, "x", x, "y", y, &error))
    return atomr_op_fail (op, error);
  if (nx != atomr_tensor_get_dim (a, 1) || ny != atomr_tensor_get_dim (a, 0))
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: A is %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT
                                           " but x has %" G_GINT64_FORMAT " and y %" G_GINT64_FORMAT
                                           " elements", opname, atomr_tensor_get_dim (a, 0),
                                           atomr_tensor_get_dim (a, 1), nx, ny));

  r = view_request_new (op, a, opname);
  /* gemv's m × n is the stored column-major matrix: A itself, or Aᵀ */
  r->transa = la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  r->m = (gint) la.rows;
  r->n = (gint) la.cols;
  r->lda = (gint) la.ld;
  r->incx = incx;
  r->incy = incy;
  scalar_set (&r->alpha, alpha, alpha_imag);
  scalar_set (&r->beta, beta, beta_imag);
  r->a = atomr_tensor_get_buffer (a);
  r->off_a = atomr_tensor_get_byte_offset (a);
  r->x = atomr_tensor_get_buffer (x);
  r->off_x = atomr_tensor_get_byte_offset (x);
  r->y = atomr_tensor_get_buffer (y);
  r->off_y = atomr_tensor_get_byte_offset (y);
  if (beta != 0.0 || beta_imag != 0.0)
    blas_submit (op, r, call_gemv, RESULT_NONE, READS (r->a, r->x, r->y), WRITES (r->y));
  else
    blas_submit (op, r, call_gemv, RESULT_NONE, READS (r->a, r->x), WRITES (r->y));
}

/**
 * atomr_blas_actor_gemv_tensor_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.gemv_tensor_async].
 *
 * Returns: %TRUE when y was computed
 *
 * Since: 0.2
 */
gboolean
atomr_blas_actor_gemv_tensor_finish (AtomrBlasActor  *self,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_gemv_tensor_async, error);
}

/**
 * atomr_blas_actor_axpy_tensor_async:
 * @self: an [class@Atomr.BlasActor]
 * @alpha: the real part of alpha
 * @alpha_imag: the imaginary part of alpha (complex dtypes only)
 * @x: a vector view (f32, f64, c64 or c128)
 * @y: a vector view of as many elements, the dtype of @x, not overlapping it
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when y is updated
 * @user_data: data for @callback
 *
 * y = alpha·x + y on vector views with any positive strides.
 *
 * Since: 0.2
 */
void
atomr_blas_actor_axpy_tensor_async (AtomrBlasActor      *self,
                                    gdouble              alpha,
                                    gdouble              alpha_imag,
                                    AtomrTensor         *x,
                                    AtomrTensor         *y,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  const gchar *opname = "axpy-tensor";
  AtomrOp *op;
  GError *error = NULL;
  BlasRequest *r;
  gint64 nx, ny;
  gint incx, incy;

  g_return_if_fail (ATOMR_IS_BLAS_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_blas_actor_axpy_tensor_async, cancellable, callback, user_data);

  if (!view_vector (self, opname, "x", x, &nx, &incx, &error) ||
      !view_vector (self, opname, "y", y, &ny, &incy, &error) ||
      !view_dtype (opname, "x", x, blas_dtypes, G_N_ELEMENTS (blas_dtypes), &error) ||
      !view_same_dtype (opname, x, "y", y, &error) ||
      !view_distinct (opname, "x", x, "y", y, &error))
    return atomr_op_fail (op, error);
  if (nx != ny)
    return atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                                           "%s: x has %" G_GINT64_FORMAT " elements but y %"
                                           G_GINT64_FORMAT, opname, nx, ny));

  r = view_request_new (op, x, opname);
  r->n = (gint) nx;
  r->incx = incx;
  r->incy = incy;
  scalar_set (&r->alpha, alpha, alpha_imag);
  r->x = atomr_tensor_get_buffer (x);
  r->off_x = atomr_tensor_get_byte_offset (x);
  r->y = atomr_tensor_get_buffer (y);
  r->off_y = atomr_tensor_get_byte_offset (y);
  blas_submit (op, r, call_axpy, RESULT_NONE, READS (r->x, r->y), WRITES (r->y));
}

/**
 * atomr_blas_actor_axpy_tensor_finish:
 * @self: an [class@Atomr.BlasActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.BlasActor.axpy_tensor_async].
 *
 * Returns: %TRUE when y was updated
 *
 * Since: 0.2
 */
gboolean
atomr_blas_actor_axpy_tensor_finish (AtomrBlasActor  *self,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  return atomr_op_finish_boolean (self, result, atomr_blas_actor_axpy_tensor_async, error);
}
