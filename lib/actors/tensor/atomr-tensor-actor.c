/* atomr-tensor-actor.c — permutations, elementwise operations and
 * reductions with our own engine
 *
 * Threads: the _async entry points run on any thread; they validate, plan
 * (the plan cache has its own lock) and submit.  The enqueue functions run
 * on the actor's context: they own the generated-kernel table (no lock),
 * compile through NVRTC and the kernel cache on a miss, and launch.  On the
 * host test device the enqueue functions compute the result on the CPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <complex.h>
#include <math.h>
#include <string.h>

/* cublasLt.h declares cublasLtLoggerForceDisable() without a prototype. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include "atomr-cublasLt-table-private.h"
#pragma GCC diagnostic pop

#include "actors/atomr-library-private.h"
#include "actors/tensor/atomr-tensor-actor.h"
#include "actors/tensor/atomr-tensor-plan-private.h"
#include "actors/tensor/atomr-tensor-kernels-private.h"
#include "core/atomr-cuda-private.h"
#include "core/atomr-device-private.h"
#include "core/atomr-tensor-private.h"
#include "nvrtc/atomr-kernel-private.h"
#include "nvrtc/atomr-nvrtc-private.h"

/**
 * AtomrTensorActor:
 *
 * Runs tensor operations on [class@Atomr.Tensor] views of any rank (≤ 8), any
 * strides (negative and zero included) and with broadcasting, described
 * einsum-style: one mode letter per dimension, `"abc->cab"`.
 *
 * Each request is planned (modes bound to extents and strides, extent-1
 * modes dropped, loops ordered for coalesced writes and neighbouring loops
 * folded, see docs/DESIGN-NOTES.md) and the plan is cached in a bounded
 * LRU ([property@Atomr.TensorActor:plan-cache-capacity]).  On a GPU the work runs as
 * kernels generated per operation, dtype and loop count, compiled with
 * NVRTC through the default kernel cache (a second process starts warm);
 * on the host test device the same plans run on the CPU.
 *
 * Dtypes: f16, bf16 (computed in f32), f32, f64, c64 and c128; every
 * operand of a request has the same dtype.  Complex operands take the
 * unary ops identity, neg, conj, abs, sqrt, exp, log, sin and cos, the
 * binary ops add and mul, and every reduction but max and min (the norms
 * reduce |x|); the others fail with %ATOMR_ERROR_NOT_SUPPORTED naming the
 * op.
 *
 * Since: 0.2
 */

#define DEFAULT_PLAN_CACHE_CAPACITY 128
#define PARAM_LOOPS ATOMR_PLAN_MAX_LOOPS

typedef enum {
  KIND_PERMUTE,
  KIND_BINARY,
  KIND_REDUCE,
  KIND_CONTRACT,   /* a sum over the modes missing from the output of A·B */
} Kind;

/* What the plan cache holds per (operation, modes, shapes, strides). */
typedef struct {
  AtomrLoopPlan loop;
  gboolean      gemm_ok;     /* contractions: the GEMM mapping below holds */
  AtomrGemmPlan gemm;        /* of the packed operands when pack says so */
  AtomrGemmPack pack;
  AtomrLoopPlan pack_plan[2];  /* A → packed A, B → packed B */
  gchar         why[96];     /* why not, for the detail */
} CachedPlan;

typedef struct {
  Kind          kind;
  AtomrDtype    dtype;
  AtomrLoopPlan plan;
  gboolean      gemm_ok;
  AtomrGemmPlan gemm;
  AtomrGemmPack pack;
  AtomrLoopPlan pack_plan[2];
  gchar         why[96];
  gint          compute;       /* AtomrBlasComputeType at the call */
  guint         n_in;          /* inputs: 1, 2 or 3 */
  gint          op_a, op_b, op_c, op_ab, op_abc, reduce;
  gdouble       alpha, beta, gamma;
  AtomrTensor  *t[ATOMR_PLAN_MAX_OPERANDS];  /* owned: output, inputs */
  gchar         cols_variant;  /* the actor's at the call: 'a', 'b' or 'c' */
  guint         n_sms;         /* the device's multiprocessors (≥ 1) */
} TensorRequest;

/* The kernels' loop table: laid out as `struct Loops` in the source. */
typedef struct {
  gint64 ext[PARAM_LOOPS];
  gint64 s[ATOMR_PLAN_MAX_OPERANDS][PARAM_LOOPS];
} KernelLoops;

/* A cuBLASLt matmul set up for one GEMM problem (descriptors and the
 * heuristic's algorithm), or the note that cuBLASLt has none. */
typedef struct {
  gint64 m, n, k, ldx, ldy, ldc, batch, sx, sy, sc;
  gint32 trans_x, trans_y, dtype, compute, align_x, align_y, align_c;
} LtKey;

typedef struct {
  LtKey                  key;
  gboolean               unsupported;   /* no algorithm: the kernels serve */
  cublasLtMatmulDesc_t   desc;
  cublasLtMatrixLayout_t lx, ly, lc;
  cublasLtMatmulAlgo_t   algo;
  gsize                  workspace;
} LtPlan;

#define LT_WORKSPACE_SIZE (32u << 20)
#define LT_PLAN_CAPACITY 64

struct _AtomrTensorActor
{
  AtomrActor       parent_instance;

  AtomrPlanCache  *plans;       /* any thread */
  gint             compute;     /* atomic: AtomrBlasComputeType */
  gint             cols_variant; /* atomic: 'a', 'b' or 'c' (column reductions) */
  /* actor context only: */
  GHashTable      *kernels;     /* name key → AtomrKernel */
  cublasLtHandle_t lt;          /* on the first GEMM of a generation */
  CUdeviceptr      lt_workspace;
  GHashTable      *lt_plans;    /* LtKey → LtPlan, cleared at LT_PLAN_CAPACITY */
};

G_DEFINE_FINAL_TYPE (AtomrTensorActor, atomr_tensor_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_PLAN_CACHE_CAPACITY,
  PROP_COMPUTE_TYPE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AtomrDtype tensor_dtypes[] = {
  ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16, ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_C64, ATOMR_DTYPE_C128,
};

/* ------------------------------------------------------------------ */
/* Host arithmetic (the reference semantics of the kernels)             */

static gfloat
half_to_float (guint16 h)
{
  guint32 sign = (guint32) (h & 0x8000) << 16;
  guint32 exp = (h >> 10) & 0x1f;
  guint32 mant = h & 0x3ff;
  guint32 bits;
  gfloat f;

  if (exp == 0x1f)
    bits = sign | 0x7f800000 | (mant << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  else if (mant == 0)
    bits = sign;
  else
    {
      f = ldexpf ((gfloat) mant, -24);
      return sign ? -f : f;
    }
  memcpy (&f, &bits, 4);
  return f;
}

static guint16
float_to_half (gfloat f)
{
  guint32 x;
  guint32 sign, exp, mant;

  memcpy (&x, &f, 4);
  sign = (x >> 16) & 0x8000;
  exp = (x >> 23) & 0xff;
  mant = x & 0x7fffff;
  if (exp == 0xff)
    return (guint16) (sign | 0x7c00 | (mant ? 0x200 : 0));
  {
    gint e = (gint) exp - 127 + 15;
    if (e >= 0x1f)
      return (guint16) (sign | 0x7c00);
    if (e <= 0)
      {
        /* subnormal half: round |f| / 2^-24 to nearest even */
        gfloat a = fabsf (f) * 16777216.0f;
        gfloat r = nearbyintf (a);   /* default rounding: to nearest even */
        if (r >= 1024.0f)
          return (guint16) (sign | 0x0400);
        return (guint16) (sign | (guint32) r);
      }
    {
      guint32 h = ((guint32) e << 10) | (mant >> 13);
      guint32 rest = mant & 0x1fff;
      if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;   /* may carry into the exponent: still correct, up to inf */
      return (guint16) (sign | h);
    }
  }
}

static gfloat
bf16_to_float (guint16 h)
{
  guint32 bits = (guint32) h << 16;
  gfloat f;
  memcpy (&f, &bits, 4);
  return f;
}

static guint16
float_to_bf16 (gfloat f)
{
  guint32 x;

  memcpy (&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (guint16) ((x >> 16) | 0x40);   /* quiet NaN */
  x += 0x7fff + ((x >> 16) & 1);
  return (guint16) (x >> 16);
}

static gdouble
host_load (AtomrDtype dtype, const guint8 *base, gint64 index)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: return half_to_float (((const guint16 *) base)[index]);
    case ATOMR_DTYPE_BF16: return bf16_to_float (((const guint16 *) base)[index]);
    case ATOMR_DTYPE_F32: return ((const gfloat *) base)[index];
    case ATOMR_DTYPE_F64: return ((const gdouble *) base)[index];
    default: g_assert_not_reached ();
    }
}

static void
host_store (AtomrDtype dtype, guint8 *base, gint64 index, gdouble v)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F16: ((guint16 *) base)[index] = float_to_half ((gfloat) v); break;
    case ATOMR_DTYPE_BF16: ((guint16 *) base)[index] = float_to_bf16 ((gfloat) v); break;
    case ATOMR_DTYPE_F32: ((gfloat *) base)[index] = (gfloat) v; break;
    case ATOMR_DTYPE_F64: ((gdouble *) base)[index] = v; break;
    default: g_assert_not_reached ();
    }
}

static gdouble
host_unary (gint op, gdouble x)
{
  switch ((AtomrTensorUnaryOp) op)
    {
    case ATOMR_TENSOR_UNARY_IDENTITY: return x;
    case ATOMR_TENSOR_UNARY_NEG: return -x;
    case ATOMR_TENSOR_UNARY_ABS: return fabs (x);
    case ATOMR_TENSOR_UNARY_SQRT: return sqrt (x);
    case ATOMR_TENSOR_UNARY_RELU: return x > 0 ? x : (x != x ? x : 0.0);
    case ATOMR_TENSOR_UNARY_EXP: return exp (x);
    case ATOMR_TENSOR_UNARY_LOG: return log (x);
    case ATOMR_TENSOR_UNARY_SIN: return sin (x);
    case ATOMR_TENSOR_UNARY_COS: return cos (x);
    case ATOMR_TENSOR_UNARY_TANH: return tanh (x);
    case ATOMR_TENSOR_UNARY_SIGMOID: return 1.0 / (1.0 + exp (-x));
    case ATOMR_TENSOR_UNARY_CONJ: return x;
    default: g_assert_not_reached ();
    }
}

static gdouble
host_binary (gint op, gdouble x, gdouble y)
{
  switch ((AtomrTensorBinaryOp) op)
    {
    case ATOMR_TENSOR_BINARY_ADD: return x + y;
    case ATOMR_TENSOR_BINARY_MUL: return x * y;
    case ATOMR_TENSOR_BINARY_MAX: return (x != x || x > y) ? x : y;
    case ATOMR_TENSOR_BINARY_MIN: return (x != x || x < y) ? x : y;
    default: g_assert_not_reached ();
    }
}

static gdouble
reduce_init (gint op)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return 1.0;
    case ATOMR_TENSOR_REDUCE_MAX: return -INFINITY;
    case ATOMR_TENSOR_REDUCE_MIN: return INFINITY;
    default: return 0.0;
    }
}

static gdouble
reduce_combine (gint op, gdouble acc, gdouble x)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return acc * x;
    case ATOMR_TENSOR_REDUCE_MAX:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return (x != x || x > acc) ? x : acc;
    case ATOMR_TENSOR_REDUCE_MIN: return (x != x || x < acc) ? x : acc;
    default: return acc + x;
    }
}

static gdouble
reduce_element (gint op, gdouble x)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_NORM1:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return fabs (x);
    case ATOMR_TENSOR_REDUCE_NORM2: return x * x;
    default: return x;
    }
}

static gdouble
reduce_finalize (gint op, gdouble acc, guint64 n)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_MEAN: return acc / (gdouble) n;
    case ATOMR_TENSOR_REDUCE_NORM2: return sqrt (acc);
    default: return acc;
    }
}

static void
run_host (TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;
  guint8 *out = atomr_tensor_get_host_data (r->t[0]);
  const guint8 *a = atomr_tensor_get_host_data (r->t[1]);
  const guint8 *b = r->t[2] ? atomr_tensor_get_host_data (r->t[2]) : NULL;
  const guint8 *c = r->t[3] ? atomr_tensor_get_host_data (r->t[3]) : NULL;
  gint64 off[ATOMR_PLAN_MAX_OPERANDS];

  for (guint64 i = 0; i < p->n_out; i++)
    {
      gdouble v;

      if (r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT)
        {
          gdouble acc = reduce_init (r->reduce);

          /* pairwise in spirit: f64 accumulation on the host */
          for (guint64 j = 0; j < p->n_reduce; j++)
            {
              atomr_loop_plan_offsets (p, i, j, off);
              gdouble x = host_load (r->dtype, a, off[1]);

              if (r->kind == KIND_CONTRACT)
                x *= host_load (r->dtype, b, off[2]);
              acc = reduce_combine (r->reduce, acc, reduce_element (r->reduce, x));
            }
          atomr_loop_plan_offsets (p, i, 0, off);
          v = r->alpha * reduce_finalize (r->reduce, acc, p->n_reduce);
          if (r->beta != 0.0)
            v += r->beta * host_load (r->dtype, out, off[0]);
        }
      else
        {
          atomr_loop_plan_offsets (p, i, 0, off);
          v = r->alpha * host_unary (r->op_a, host_load (r->dtype, a, off[1]));
          if (r->kind == KIND_BINARY)
            v = host_binary (r->op_ab, v,
                             r->beta * host_unary (r->op_b, host_load (r->dtype, b, off[2])));
          if (r->kind == KIND_BINARY && r->n_in == 3)
            v = host_binary (r->op_abc, v,
                             r->gamma * host_unary (r->op_c, host_load (r->dtype, c, off[3])));
        }
      host_store (r->dtype, out, off[0], v);
    }
}

/* ------------------------------------------------------------------ */
/* Complex dtypes on the host (c64, c128)                               */

typedef double _Complex zdouble;

static gboolean
is_complex (AtomrDtype dtype)
{
  return dtype == ATOMR_DTYPE_C64 || dtype == ATOMR_DTYPE_C128;
}

static zdouble
host_load_c (AtomrDtype dtype, const guint8 *base, gint64 index)
{
  if (dtype == ATOMR_DTYPE_C64)
    {
      const gfloat *p = (const gfloat *) base + 2 * index;
      return CMPLX (p[0], p[1]);
    }
  {
    const gdouble *p = (const gdouble *) base + 2 * index;
    return CMPLX (p[0], p[1]);
  }
}

static void
host_store_c (AtomrDtype dtype, guint8 *base, gint64 index, zdouble v)
{
  if (dtype == ATOMR_DTYPE_C64)
    {
      gfloat *p = (gfloat *) base + 2 * index;
      p[0] = (gfloat) creal (v);
      p[1] = (gfloat) cimag (v);
    }
  else
    {
      gdouble *p = (gdouble *) base + 2 * index;
      p[0] = creal (v);
      p[1] = cimag (v);
    }
}

static zdouble
host_unary_c (gint op, zdouble x)
{
  switch ((AtomrTensorUnaryOp) op)
    {
    case ATOMR_TENSOR_UNARY_IDENTITY: return x;
    case ATOMR_TENSOR_UNARY_NEG: return -x;
    case ATOMR_TENSOR_UNARY_CONJ: return conj (x);
    case ATOMR_TENSOR_UNARY_ABS: return cabs (x);
    case ATOMR_TENSOR_UNARY_SQRT: return csqrt (x);
    case ATOMR_TENSOR_UNARY_EXP: return cexp (x);
    case ATOMR_TENSOR_UNARY_LOG: return clog (x);
    case ATOMR_TENSOR_UNARY_SIN: return csin (x);
    case ATOMR_TENSOR_UNARY_COS: return ccos (x);
    default: g_assert_not_reached ();   /* refused at submission */
    }
}

static zdouble
host_binary_c (gint op, zdouble x, zdouble y)
{
  return op == ATOMR_TENSOR_BINARY_MUL ? x * y : x + y;
}

/* Norms reduce |x| (real); the sum, product and mean complex values. */
static zdouble
reduce_element_c (gint op, zdouble x)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_NORM1:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return cabs (x);
    case ATOMR_TENSOR_REDUCE_NORM2: return creal (x) * creal (x) + cimag (x) * cimag (x);
    default: return x;
    }
}

static zdouble
reduce_combine_c (gint op, zdouble acc, zdouble x)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return acc * x;
    case ATOMR_TENSOR_REDUCE_NORM_INF: return (isnan (creal (x)) || creal (x) > creal (acc)) ? x : acc;
    default: return acc + x;
    }
}

static zdouble
reduce_finalize_c (gint op, zdouble acc, guint64 n)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_MEAN: return acc / (gdouble) n;
    case ATOMR_TENSOR_REDUCE_NORM2: return sqrt (creal (acc));
    default: return acc;
    }
}

static void
run_host_complex (TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;
  guint8 *out = atomr_tensor_get_host_data (r->t[0]);
  const guint8 *a = atomr_tensor_get_host_data (r->t[1]);
  const guint8 *b = r->t[2] ? atomr_tensor_get_host_data (r->t[2]) : NULL;
  const guint8 *c = r->t[3] ? atomr_tensor_get_host_data (r->t[3]) : NULL;
  gint64 off[ATOMR_PLAN_MAX_OPERANDS];

  for (guint64 i = 0; i < p->n_out; i++)
    {
      zdouble v;

      if (r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT)
        {
          zdouble acc = r->reduce == ATOMR_TENSOR_REDUCE_PROD ? 1.0 : 0.0;

          for (guint64 j = 0; j < p->n_reduce; j++)
            {
              zdouble x;

              atomr_loop_plan_offsets (p, i, j, off);
              x = host_load_c (r->dtype, a, off[1]);
              if (r->kind == KIND_CONTRACT)
                x *= host_load_c (r->dtype, b, off[2]);
              acc = reduce_combine_c (r->reduce, acc, reduce_element_c (r->reduce, x));
            }
          atomr_loop_plan_offsets (p, i, 0, off);
          v = r->alpha * reduce_finalize_c (r->reduce, acc, p->n_reduce);
          if (r->beta != 0.0)
            v += r->beta * host_load_c (r->dtype, out, off[0]);
        }
      else
        {
          atomr_loop_plan_offsets (p, i, 0, off);
          v = r->alpha * host_unary_c (r->op_a, host_load_c (r->dtype, a, off[1]));
          if (r->kind == KIND_BINARY)
            v = host_binary_c (r->op_ab, v,
                               r->beta * host_unary_c (r->op_b, host_load_c (r->dtype, b, off[2])));
          if (r->kind == KIND_BINARY && r->n_in == 3)
            v = host_binary_c (r->op_abc, v,
                               r->gamma * host_unary_c (r->op_c, host_load_c (r->dtype, c, off[3])));
        }
      host_store_c (r->dtype, out, off[0], v);
    }
}

/* What complex operands can do: the unary ops with a complex meaning
 * (relu, tanh and sigmoid have none here), add and mul, and the
 * reductions that do not order values (max and min do). */
static gboolean
check_complex_ops (const gchar  *opname,
                   AtomrDtype    dtype,
                   const gint   *unary,
                   guint         n_unary,
                   const gint   *binary,
                   guint         n_binary,
                   gint          reduce,
                   GError      **error)
{
  if (!is_complex (dtype))
    return TRUE;
  for (guint i = 0; i < n_unary; i++)
    if (unary[i] == ATOMR_TENSOR_UNARY_RELU || unary[i] == ATOMR_TENSOR_UNARY_TANH ||
        unary[i] == ATOMR_TENSOR_UNARY_SIGMOID)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                     "%s: unary op %s is not defined for %s operands (identity, neg, conj, abs, sqrt, exp, "
                     "log, sin and cos are)", opname,
                     unary[i] == ATOMR_TENSOR_UNARY_RELU ? "relu" :
                     unary[i] == ATOMR_TENSOR_UNARY_TANH ? "tanh" : "sigmoid",
                     atomr_dtype_get_name (dtype));
        return FALSE;
      }
  for (guint i = 0; i < n_binary; i++)
    if (binary[i] == ATOMR_TENSOR_BINARY_MAX || binary[i] == ATOMR_TENSOR_BINARY_MIN)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                     "%s: binary op %s does not apply to %s operands (complex numbers have no order; "
                     "add and mul do)", opname, binary[i] == ATOMR_TENSOR_BINARY_MAX ? "max" : "min",
                     atomr_dtype_get_name (dtype));
        return FALSE;
      }
  if (reduce == ATOMR_TENSOR_REDUCE_MAX || reduce == ATOMR_TENSOR_REDUCE_MIN)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: reduction %s does not apply to %s operands (complex numbers have no order; sum, prod, "
                   "mean and the norms do)", opname, reduce == ATOMR_TENSOR_REDUCE_MAX ? "max" : "min",
                   atomr_dtype_get_name (dtype));
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* Generated kernels                                                    */

static const gchar *
unary_expr (gint op, gboolean f64)
{
  switch ((AtomrTensorUnaryOp) op)
    {
    case ATOMR_TENSOR_UNARY_IDENTITY: return "x";
    case ATOMR_TENSOR_UNARY_NEG: return "-x";
    case ATOMR_TENSOR_UNARY_ABS: return f64 ? "fabs(x)" : "fabsf(x)";
    case ATOMR_TENSOR_UNARY_SQRT: return f64 ? "sqrt(x)" : "sqrtf(x)";
    case ATOMR_TENSOR_UNARY_RELU: return "(x > (acc_t) 0 || x != x) ? x : (acc_t) 0";
    case ATOMR_TENSOR_UNARY_EXP: return f64 ? "exp(x)" : "expf(x)";
    case ATOMR_TENSOR_UNARY_LOG: return f64 ? "log(x)" : "logf(x)";
    case ATOMR_TENSOR_UNARY_SIN: return f64 ? "sin(x)" : "sinf(x)";
    case ATOMR_TENSOR_UNARY_COS: return f64 ? "cos(x)" : "cosf(x)";
    case ATOMR_TENSOR_UNARY_TANH: return f64 ? "tanh(x)" : "tanhf(x)";
    case ATOMR_TENSOR_UNARY_SIGMOID: return f64 ? "1.0 / (1.0 + exp(-x))" : "1.0f / (1.0f + expf(-x))";
    case ATOMR_TENSOR_UNARY_CONJ: return "x";
    default: g_assert_not_reached ();
    }
}

/* The unary ops on complex values (those check_complex_ops() allows). */
static const gchar *
unary_expr_c (gint op)
{
  switch ((AtomrTensorUnaryOp) op)
    {
    case ATOMR_TENSOR_UNARY_IDENTITY: return "x";
    case ATOMR_TENSOR_UNARY_NEG: return "-x";
    case ATOMR_TENSOR_UNARY_CONJ: return "cplx(x.re, -x.im)";
    case ATOMR_TENSOR_UNARY_ABS: return "cplx(c_abs(x))";
    case ATOMR_TENSOR_UNARY_SQRT: return "c_sqrt(x)";
    case ATOMR_TENSOR_UNARY_EXP: return "c_exp(x)";
    case ATOMR_TENSOR_UNARY_LOG: return "c_log(x)";
    case ATOMR_TENSOR_UNARY_SIN: return "c_sin(x)";
    case ATOMR_TENSOR_UNARY_COS: return "c_cos(x)";
    default: g_assert_not_reached ();
    }
}

static const gchar *
uexpr (AtomrDtype dtype, gint op)
{
  return is_complex (dtype) ? unary_expr_c (op) : unary_expr (op, dtype == ATOMR_DTYPE_F64);
}

static const gchar *
binary_expr (gint op)
{
  switch ((AtomrTensorBinaryOp) op)
    {
    case ATOMR_TENSOR_BINARY_ADD: return "x + y";
    case ATOMR_TENSOR_BINARY_MUL: return "x * y";
    case ATOMR_TENSOR_BINARY_MAX: return "(x != x || x > y) ? x : y";
    case ATOMR_TENSOR_BINARY_MIN: return "(x != x || x < y) ? x : y";
    default: g_assert_not_reached ();
    }
}

static const gchar *
reduce_combine_expr (gint op)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return "acc * x";
    case ATOMR_TENSOR_REDUCE_MAX:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return "(x != x || x > acc) ? x : acc";
    case ATOMR_TENSOR_REDUCE_MIN: return "(x != x || x < acc) ? x : acc";
    default: return "acc + x";
    }
}

static const gchar *
reduce_element_expr (gint op, gboolean f64)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_NORM1:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return f64 ? "fabs(x)" : "fabsf(x)";
    case ATOMR_TENSOR_REDUCE_NORM2: return "x * x";
    default: return "x";
    }
}

static const gchar *
reduce_init_expr (gint op)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return "(acc_t) 1";
    case ATOMR_TENSOR_REDUCE_MAX: return "-(acc_t) INFINITY";
    case ATOMR_TENSOR_REDUCE_MIN: return "(acc_t) INFINITY";
    default: return "(acc_t) 0";
    }
}

static const gchar *
reduce_finalize_expr (gint op, gboolean f64)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_MEAN: return "acc / (acc_t) n";
    case ATOMR_TENSOR_REDUCE_NORM2: return f64 ? "sqrt(acc)" : "sqrtf(acc)";
    default: return "acc";
    }
}

/* Reductions of complex values: the norms reduce |x| (kept as a complex
 * number with a zero imaginary part), max and min are refused. */
static const gchar *
reduce_element_expr_c (gint op)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_NORM1:
    case ATOMR_TENSOR_REDUCE_NORM_INF: return "cplx(c_abs(x))";
    case ATOMR_TENSOR_REDUCE_NORM2: return "cplx(x.re * x.re + x.im * x.im)";
    default: return "x";
    }
}

static const gchar *
reduce_combine_expr_c (gint op)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_PROD: return "acc * x";
    case ATOMR_TENSOR_REDUCE_NORM_INF: return "(x.re != x.re || x.re > acc.re) ? x : acc";
    default: return "acc + x";
    }
}

static const gchar *
reduce_finalize_expr_c (gint op, gboolean f64)
{
  switch ((AtomrTensorReduceOp) op)
    {
    case ATOMR_TENSOR_REDUCE_MEAN: return "acc / (acc_t) (real_t) n";
    case ATOMR_TENSOR_REDUCE_NORM2: return f64 ? "cplx(sqrt(acc.re))" : "cplx(sqrtf(acc.re))";
    default: return "acc";
    }
}

/* The part of every generated source: storage type T, compute type acc_t,
 * ld()/st(), the loop table and the index decomposition.  No header is
 * included (halves are converted with PTX cvt instructions), so NVRTC
 * needs no include path. */
static void
append_prelude (GString *s, AtomrDtype dtype, const AtomrLoopPlan *p, gboolean idx32)
{
  gboolean f64 = dtype == ATOMR_DTYPE_F64;

  g_string_append_printf (s,
    "typedef long long i64;\n"
    "typedef unsigned long long u64;\n"
    "typedef %s idx_t;\n"
    "#define INFINITY __int_as_float(0x7f800000)\n"
    "#define NF %u\n#define NL %u\n"
    "struct Loops { i64 ext[%u]; i64 s[%u][%u]; };\n",
    idx32 ? "unsigned int" : "u64", p->n_free, p->n_loops,
    PARAM_LOOPS, ATOMR_PLAN_MAX_OPERANDS, PARAM_LOOPS);
  switch (dtype)
    {
    case ATOMR_DTYPE_F16:
      g_string_append (s,
        "typedef unsigned short T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { float f; unsigned short h = *p;"
        " asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { unsigned short h;"
        " asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v)); *p = h; }\n");
      break;
    case ATOMR_DTYPE_BF16:
      g_string_append (s,
        "typedef unsigned short T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return __uint_as_float(((unsigned int) *p) << 16); }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { unsigned short h;"
        " asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(v)); *p = h; }\n");
      break;
    case ATOMR_DTYPE_F32:
      g_string_append (s,
        "typedef float T; typedef float acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return *p; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { *p = v; }\n");
      break;
    case ATOMR_DTYPE_F64:
      g_string_append (s,
        "typedef double T; typedef double acc_t;\n"
        "__device__ __forceinline__ acc_t ld(const T *p) { return *p; }\n"
        "__device__ __forceinline__ void st(T *p, acc_t v) { *p = v; }\n");
      break;
    case ATOMR_DTYPE_C64:
    case ATOMR_DTYPE_C128:
      {
        /* Complex values: a struct of two reals with the operators the
         * shared kernel code uses; the math in the real type's functions
         * (M is "f" for c64).  Storage and compute share the struct. */
        const gchar *F = dtype == ATOMR_DTYPE_C64 ? "float" : "double";
        const gchar *M = dtype == ATOMR_DTYPE_C64 ? "f" : "";

        g_string_append_printf (s,
          "typedef %s real_t;\n"
          "struct __align__(2 * sizeof(real_t)) cplx {\n"
          "  real_t re, im;\n"
          "  cplx() = default;\n"
          "  __device__ cplx(real_t r) : re(r), im(0) {}\n"
          "  __device__ cplx(real_t r, real_t i) : re(r), im(i) {}\n"
          "};\n"
          "typedef cplx T; typedef cplx acc_t;\n"
          "__device__ __forceinline__ cplx operator+(cplx a, cplx b) { return cplx(a.re + b.re, a.im + b.im); }\n"
          "__device__ __forceinline__ cplx operator-(cplx a) { return cplx(-a.re, -a.im); }\n"
          "__device__ __forceinline__ cplx operator*(cplx a, cplx b) {"
          " return cplx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }\n"
          "__device__ __forceinline__ cplx operator/(cplx a, cplx b) { real_t d = b.re * b.re + b.im * b.im;"
          " return cplx((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d); }\n"
          "__device__ __forceinline__ cplx &operator+=(cplx &a, cplx b) { a = a + b; return a; }\n"
          "__device__ __forceinline__ bool operator!=(cplx a, cplx b) { return a.re != b.re || a.im != b.im; }\n"
          "__device__ __forceinline__ acc_t ld(const T *p) { return *p; }\n"
          "__device__ __forceinline__ void st(T *p, acc_t v) { *p = v; }\n"
          "__device__ __forceinline__ acc_t shfl_xor(acc_t v, int k) {"
          " return cplx(__shfl_xor_sync(0xffffffffu, v.re, k), __shfl_xor_sync(0xffffffffu, v.im, k)); }\n"
          "__device__ __forceinline__ real_t c_abs(cplx x) { return hypot%s(x.re, x.im); }\n"
          "__device__ __forceinline__ cplx c_exp(cplx x) { real_t e = exp%s(x.re);"
          " return cplx(e * cos%s(x.im), e * sin%s(x.im)); }\n"
          "__device__ __forceinline__ cplx c_log(cplx x) { return cplx(log%s(c_abs(x)), atan2%s(x.im, x.re)); }\n"
          "__device__ __forceinline__ cplx c_sqrt(cplx x) { real_t r = sqrt%s(c_abs(x)), t = atan2%s(x.im, x.re) / 2;"
          " return cplx(r * cos%s(t), r * sin%s(t)); }\n"
          "__device__ __forceinline__ cplx c_sin(cplx x) {"
          " return cplx(sin%s(x.re) * cosh%s(x.im), cos%s(x.re) * sinh%s(x.im)); }\n"
          "__device__ __forceinline__ cplx c_cos(cplx x) {"
          " return cplx(cos%s(x.re) * cosh%s(x.im), -sin%s(x.re) * sinh%s(x.im)); }\n",
          F, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M);
      }
      break;
    default:
      g_assert_not_reached ();
    }
  if (!is_complex (dtype))
    g_string_append (s,
      "__device__ __forceinline__ acc_t shfl_xor(acc_t v, int k) { return __shfl_xor_sync(0xffffffffu, v, k); }\n");
  (void) f64;
  /* Offsets of operand 0..NOPS-1 for index i over loops [lo, hi). */
  g_string_append (s,
    "template <int LO, int HI, int NOPS>\n"
    "__device__ __forceinline__ void offsets(const Loops &L, idx_t i, i64 *o) {\n"
    "#pragma unroll\n"
    "  for (int k = HI - 1; k >= LO; k--) {\n"
    /* the outermost loop needs no division: i < its extent there */
    "    idx_t c = i;\n"
    "    if (k > LO) { idx_t e = (idx_t) L.ext[k]; c = i % e; i /= e; }\n"
    "#pragma unroll\n"
    "    for (int q = 0; q < NOPS; q++) o[q] += (i64) c * L.s[q][k];\n"
    "  }\n"
    "}\n");
}

static gchar *
elementwise_source (const TensorRequest *r, gboolean idx32)
{
  GString *s = g_string_new (NULL);

  append_prelude (s, r->dtype, &r->plan, idx32);
  gboolean binary = r->kind == KIND_BINARY;
  guint n_in = binary ? r->n_in : 1;

  g_string_append_printf (s,
    "__device__ __forceinline__ acc_t op_a(acc_t x) { return %s; }\n"
    "__device__ __forceinline__ acc_t op_b(acc_t x) { return %s; }\n"
    "__device__ __forceinline__ acc_t op_c(acc_t x) { return %s; }\n"
    "__device__ __forceinline__ acc_t op_ab(acc_t x, acc_t y) { return %s; }\n"
    "__device__ __forceinline__ acc_t op_abc(acc_t x, acc_t y) { return %s; }\n"
    "#define NIN %u\n",
    uexpr (r->dtype, r->op_a),
    binary ? uexpr (r->dtype, r->op_b) : "x",
    binary && n_in == 3 ? uexpr (r->dtype, r->op_c) : "x",
    binary ? binary_expr (r->op_ab) : "x",
    binary && n_in == 3 ? binary_expr (r->op_abc) : "x",
    n_in);
  g_string_append (s,
    "extern \"C\" __global__ void atomr_tensor_elementwise(T *d, const T *a, const T *b, const T *c,\n"
    "    acc_t alpha, acc_t beta, acc_t gamma, u64 n, Loops L) {\n"
    "  for (u64 i = (u64) blockIdx.x * blockDim.x + threadIdx.x; i < n;"
    " i += (u64) gridDim.x * blockDim.x) {\n"
    "    i64 o[4] = { 0, 0, 0, 0 };\n"
    "    offsets<0, NF, 1 + NIN>(L, (idx_t) i, o);\n"
    "    acc_t v = alpha * op_a(ld(a + o[1]));\n"
    "#if NIN >= 2\n"
    "    v = op_ab(v, beta * op_b(ld(b + o[2])));\n"
    "#endif\n"
    "#if NIN >= 3\n"
    "    v = op_abc(v, gamma * op_c(ld(c + o[3])));\n"
    "#endif\n"
    "    st(d + o[0], v);\n"
    "  }\n"
    "}\n");
  if (r->kind == KIND_PERMUTE && r->plan.a_inner >= 0 && (guint) r->plan.a_inner + 1 < r->plan.n_free)
    {
      /* The tiled transpose: loop TX (the innermost, dense in the output)
       * and loop TY (dense in A) through a 32 × 33 shared tile, so both
       * the reads and the writes coalesce; the other output loops are the
       * batch.  Blocks of 32 × 8 threads, one tile per block and batch
       * index (grid.y strides over the batch). */
      g_string_append_printf (s, "#define TX %u\n#define TY %d\n", r->plan.n_free - 1, r->plan.a_inner);
      g_string_append (s,
        /* the offsets (D, A) of batch index bt: the output loops but TX
         * and TY, innermost last (shared by the three transposes) */
        "__device__ __forceinline__ void batch_offsets(const Loops &L, u64 bt, i64 *o) {\n"
        "  idx_t rest = (idx_t) bt;\n"
        "#pragma unroll\n"
        "  for (int k = NF - 1; k >= 0; k--) {\n"
        "    if (k == TX || k == TY) continue;\n"
        "    idx_t e = (idx_t) L.ext[k]; idx_t c = rest % e; rest /= e;\n"
        "    o[0] += (i64) c * L.s[0][k]; o[1] += (i64) c * L.s[1][k];\n"
        "  }\n"
        "}\n"
        "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_transpose(T *d, const T *a,\n"
        "    acc_t alpha, u64 n_batch, Loops L) {\n"
        "  __shared__ acc_t tile[32][33];\n"
        "  const i64 ext_x = L.ext[TX], ext_y = L.ext[TY];\n"
        "  const unsigned int tiles_x = (unsigned int) ((ext_x + 31) / 32);\n"
        "  const i64 x0 = (i64) (blockIdx.x % tiles_x) * 32, y0 = (i64) (blockIdx.x / tiles_x) * 32;\n"
        "  for (u64 bt = blockIdx.y; bt < n_batch; bt += gridDim.y) {\n"
        "    i64 o[2] = { 0, 0 };\n"
        "    batch_offsets(L, bt, o);\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 32; k += 8) {\n"
        "      i64 x = x0 + threadIdx.y + k, y = y0 + threadIdx.x;\n"
        "      if (x < ext_x && y < ext_y)\n"
        "        tile[threadIdx.y + k][threadIdx.x] = op_a(ld(a + o[1] + x * L.s[1][TX] + y * L.s[1][TY]));\n"
        "    }\n"
        "    __syncthreads();\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 32; k += 8) {\n"
        "      i64 x = x0 + threadIdx.x, y = y0 + threadIdx.y + k;\n"
        "      if (x < ext_x && y < ext_y)\n"
        "        st(d + o[0] + x * L.s[0][TX] + y * L.s[0][TY], alpha * tile[threadIdx.x][threadIdx.y + k]);\n"
        "    }\n"
        "    __syncthreads();\n"
        "  }\n"
        "}\n");
      /* The paired variant, for A dense (stride 1) along TY and D dense
       * along TX, even extents and pair-aligned rows (checked on the
       * host): 64 × 64 tiles, each thread moving two neighbours at once
       * (one 2-element vector load and store, 16 elements per thread), so
       * a warp reads and writes 64 consecutive elements per row.  Not for
       * c128, whose 64 × 65 tile would exceed 48 KiB of shared memory. */
      if (r->dtype != ATOMR_DTYPE_C128)
        g_string_append (s,
        "struct __align__(2 * sizeof(T)) Pair { T x, y; };\n"
        /* a pair goes out in one store of its full width (4, 8 or 16
         * bytes, st.global.wb): a plain Pair assignment came out of NVRTC
         * as two element stores */
        "template <int N> struct PairBits;\n"
        "template <> struct PairBits<4> { typedef unsigned int t; };\n"
        "template <> struct PairBits<8> { typedef uint2 t; };\n"
        "template <> struct PairBits<16> { typedef uint4 t; };\n"
        "typedef PairBits<sizeof(Pair)>::t PairWord;\n"
        "__device__ __forceinline__ void store_pair(T *p, const Pair &v) {\n"
        "  PairWord w;\n"
        "  memcpy(&w, &v, sizeof w);\n"
        "  __stwb((PairWord *) p, w);\n"
        "}\n"
        "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_transpose2(T *d, const T *a,\n"
        "    acc_t alpha, u64 n_batch, Loops L) {\n"
        "  __shared__ acc_t tile[64][65];\n"
        "  const i64 ext_x = L.ext[TX], ext_y = L.ext[TY];\n"
        "  const i64 sa = L.s[1][TX], sd = L.s[0][TY];\n"
        "  const unsigned int tiles_x = (unsigned int) ((ext_x + 63) / 64);\n"
        "  const i64 x0 = (i64) (blockIdx.x % tiles_x) * 64, y0 = (i64) (blockIdx.x / tiles_x) * 64;\n"
        "  for (u64 bt = blockIdx.y; bt < n_batch; bt += gridDim.y) {\n"
        "    i64 o[2] = { 0, 0 };\n"
        "    batch_offsets(L, bt, o);\n"
        "    const T *src = a + o[1];\n"
        "    T *dst = d + o[0];\n"
        "    const i64 y = y0 + 2 * threadIdx.x, xw = x0 + 2 * threadIdx.x;\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 64; k += 8) {\n"
        "      i64 x = x0 + threadIdx.y + k;\n"
        "      if (x < ext_x && y < ext_y) {\n"
        "        Pair v = *(const Pair *) (src + x * sa + y);\n"
        "        tile[threadIdx.y + k][2 * threadIdx.x] = op_a(ld(&v.x));\n"
        "        tile[threadIdx.y + k][2 * threadIdx.x + 1] = op_a(ld(&v.y));\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 64; k += 8) {\n"
        "      i64 yw = y0 + threadIdx.y + k;\n"
        "      if (xw < ext_x && yw < ext_y) {\n"
        "        Pair v;\n"
        "        st(&v.x, alpha * tile[2 * threadIdx.x][threadIdx.y + k]);\n"
        "        st(&v.y, alpha * tile[2 * threadIdx.x + 1][threadIdx.y + k]);\n"
        "        store_pair(dst + yw * sd + xw, v);\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "  }\n"
        "}\n");
      /* The 16-byte variant for 2- and 4-byte dtypes, on the same host
       * conditions with VW (16 bytes of elements: 4 f32, 8 halves)
       * instead of 2: 64 × 64 tiles, 256 threads in rows of 64 / VW, each
       * thread moving 16 elements in 64 / (4 VW) independent 16-byte
       * loads (all issued before the first shared-memory store) and as
       * many 16-byte stores; a row of the tile is 256 bytes of f32, two
       * full 128-byte lines. */
      if (atomr_dtype_get_size (r->dtype) <= 4 && !is_complex (r->dtype))
        g_string_append (s,
        "#define VW (16 / (int) sizeof(T))\n"
        "#define TPR (64 / VW)\n"
        "#define RPP (256 / TPR)\n"
        "struct __align__(16) Vec { T v[VW]; };\n"
        "__device__ __forceinline__ unsigned int word(const T *p) {\n"
        "  if (sizeof(T) == 4) return *(const unsigned int *) p;\n"
        "  return (unsigned int) *(const unsigned short *) p |"
        " ((unsigned int) *(const unsigned short *) (p + 1) << 16);\n"
        "}\n"
        "__device__ __forceinline__ uint4 pack16(const Vec &v) {\n"
        "  const int n = 4 / (int) sizeof(T);\n"   /* elements per word */
        "  return make_uint4(word(&v.v[0]), word(&v.v[n]), word(&v.v[2 * n]), word(&v.v[3 * n]));\n"
        "}\n"
        "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_transpose4(T *d, const T *a,\n"
        "    acc_t alpha, u64 n_batch, Loops L) {\n"
        "  __shared__ acc_t tile[64][65];\n"
        "  const i64 ext_x = L.ext[TX], ext_y = L.ext[TY];\n"
        "  const i64 sa = L.s[1][TX], sd = L.s[0][TY];\n"
        "  const unsigned int tx = threadIdx.x % TPR, ty = threadIdx.x / TPR;\n"
        "  const unsigned int tiles_x = (unsigned int) ((ext_x + 63) / 64);\n"
        "  const i64 x0 = (i64) (blockIdx.x % tiles_x) * 64, y0 = (i64) (blockIdx.x / tiles_x) * 64;\n"
        "  for (u64 bt = blockIdx.y; bt < n_batch; bt += gridDim.y) {\n"
        "    i64 o[2] = { 0, 0 };\n"
        "    batch_offsets(L, bt, o);\n"
        "    const T *src = a + o[1];\n"
        "    T *dst = d + o[0];\n"
        "    const i64 y = y0 + VW * tx, xw = x0 + VW * tx;\n"
        "    Vec in[64 / RPP];\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 64 / RPP; k++) {\n"
        "      i64 x = x0 + ty + k * RPP;\n"
        "      if (x < ext_x && y < ext_y) in[k] = *(const Vec *) (src + x * sa + y);\n"
        "    }\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 64 / RPP; k++) {\n"
        "      i64 x = x0 + ty + k * RPP;\n"
        "      if (x < ext_x && y < ext_y) {\n"
        "#pragma unroll\n"
        "        for (int e = 0; e < VW; e++) tile[ty + k * RPP][VW * tx + e] = op_a(ld(&in[k].v[e]));\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "#pragma unroll\n"
        "    for (int k = 0; k < 64 / RPP; k++) {\n"
        "      i64 yw = y0 + ty + k * RPP;\n"
        "      if (xw < ext_x && yw < ext_y) {\n"
        "        Vec v;\n"
        "#pragma unroll\n"
        "        for (int e = 0; e < VW; e++) st(&v.v[e], alpha * tile[VW * tx + e][ty + k * RPP]);\n"
        /* stored as one uint4 of packed words with an explicit 16-byte
         * store (st.global.wb.v4.u32): a plain Vec or uint4 assignment
         * came out as four 4-byte stores in NVRTC's PTX */
        "        __stwb((uint4 *) (dst + yw * sd + xw), pack16(v));\n"
        "      }\n"
        "    }\n"
        "    __syncthreads();\n"
        "  }\n"
        "}\n");
    }
  return g_string_free (s, FALSE);
}

/* Two reduction kernels over the same helpers:
 *  - atomr_tensor_reduce_cols: a block of 32 × 8 threads serves 32
 *    consecutive outputs; the 8 rows split the reduced index and combine
 *    through shared memory (reads coalesce across outputs: reducing a
 *    non-innermost mode);
 *  - atomr_tensor_reduce_rows: one warp per output, lanes stride over the
 *    reduced index and combine with shuffles (reads coalesce along the
 *    reduced index: reducing the innermost mode).
 * Accumulation in acc_t (f32 for halves). */
static gchar *
reduce_source (const TensorRequest *r, gboolean idx32)
{
  GString *s = g_string_new (NULL);
  gboolean f64 = r->dtype == ATOMR_DTYPE_F64;

  append_prelude (s, r->dtype, &r->plan, idx32);
  g_string_append_printf (s,
    "__device__ __forceinline__ acc_t r_init() { return %s; }\n"
    "__device__ __forceinline__ acc_t r_elem(acc_t x) { return %s; }\n"
    "__device__ __forceinline__ acc_t r_comb(acc_t acc, acc_t x) { return %s; }\n"
    "__device__ __forceinline__ acc_t r_fin(acc_t acc, u64 n) { return %s; }\n"
    "#define NIN %d\n"
    "__device__ __forceinline__ acc_t element(const T *a, const T *b, const i64 *q) {\n"
    "#if NIN == 2\n"
    "  return ld(a + q[1]) * ld(b + q[2]);\n"
    "#else\n"
    "  return ld(a + q[1]);\n"
    "#endif\n"
    "}\n"
    /* the element at reduced index j of the output whose offsets are o */
    "__device__ __forceinline__ acc_t load_at(const Loops &L, const T *a, const T *b, const i64 *o, u64 j) {\n"
    "  i64 q[3] = { 0, o[1], o[2] };\n"
    "  offsets<NF, NL, 1 + NIN>(L, (idx_t) j, q);\n"
    "  return element(a, b, q);\n"
    "}\n",
    is_complex (r->dtype) ? (r->reduce == ATOMR_TENSOR_REDUCE_PROD ? "cplx(1)" : "cplx(0)")
                          : reduce_init_expr (r->reduce),
    is_complex (r->dtype) ? reduce_element_expr_c (r->reduce) : reduce_element_expr (r->reduce, f64),
    is_complex (r->dtype) ? reduce_combine_expr_c (r->reduce) : reduce_combine_expr (r->reduce),
    is_complex (r->dtype) ? reduce_finalize_expr_c (r->reduce, r->dtype == ATOMR_DTYPE_C128)
                          : reduce_finalize_expr (r->reduce, f64),
    r->kind == KIND_CONTRACT ? 2 : 1);
  g_string_append (s,
    "__device__ __forceinline__ void epilogue(T *c, i64 oc, acc_t acc, acc_t alpha, acc_t beta, u64 n) {\n"
    "  acc_t v = alpha * r_fin(acc, n);\n"
    "  if (beta != (acc_t) 0) v += beta * ld(c + oc);\n"
    "  st(c + oc, v);\n"
    "}\n"
    /* rows j0 + threadIdx.y, + 8, ... below j1 of the output at offsets o,
     * four loads in flight; the block's 8 thread rows then combine in
     * order through sh, and thread row 0 returns the result */
    "__device__ __forceinline__ acc_t cols_sum(const Loops &L, const T *a, const T *b, const i64 *o,\n"
    "    u64 j0, u64 j1) {\n"
    "  acc_t acc = r_init(), acc1 = r_init(), acc2 = r_init(), acc3 = r_init();\n"
    "  u64 j = j0 + threadIdx.y;\n"
    "  for (; j + 24 < j1; j += 32) {\n"
    "    acc_t x0 = load_at(L, a, b, o, j), x1 = load_at(L, a, b, o, j + 8);\n"
    "    acc_t x2 = load_at(L, a, b, o, j + 16), x3 = load_at(L, a, b, o, j + 24);\n"
    "    acc = r_comb(acc, r_elem(x0)); acc1 = r_comb(acc1, r_elem(x1));\n"
    "    acc2 = r_comb(acc2, r_elem(x2)); acc3 = r_comb(acc3, r_elem(x3));\n"
    "  }\n"
    "  for (; j < j1; j += 8) acc = r_comb(acc, r_elem(load_at(L, a, b, o, j)));\n"
    "  return r_comb(r_comb(acc, acc1), r_comb(acc2, acc3));\n"
    "}\n"
    "__device__ __forceinline__ acc_t cols_combine(acc_t (*sh)[33], acc_t acc) {\n"
    "  sh[threadIdx.y][threadIdx.x] = acc;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.y == 0) {\n"
    "#pragma unroll\n"
    "    for (int k = 1; k < 8; k++) acc = r_comb(acc, sh[k][threadIdx.x]);\n"
    "  }\n"
    "  return acc;\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_cols(T *c, const T *a, const T *b,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_red, Loops L) {\n"
    "  __shared__ acc_t sh[8][33];\n"
    "  u64 out = (u64) blockIdx.x * 32 + threadIdx.x;\n"
    "  acc_t acc = r_init();\n"
    "  i64 o[3] = { 0, 0, 0 };\n"
    "  if (out < n_out) {\n"
    "    offsets<0, NF, 1 + NIN>(L, (idx_t) out, o);\n"
    "    acc = cols_sum(L, a, b, o, 0, n_red);\n"
    "  }\n"
    "  acc = cols_combine(sh, acc);\n"
    "  if (threadIdx.y == 0 && out < n_out) epilogue(c, o[0], acc, alpha, beta, n_red);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_rows(T *c, const T *a, const T *b,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_red, Loops L) {\n"
    "  u64 out = (u64) blockIdx.x * 8 + threadIdx.y;\n"
    "  if (out >= n_out) return;\n"        /* uniform per warp */
    "  acc_t acc = r_init();\n"
    "  i64 o[3] = { 0, 0, 0 };\n"
    "  offsets<0, NF, 1 + NIN>(L, (idx_t) out, o);\n"
    "  acc_t acc1 = r_init(), acc2 = r_init(), acc3 = r_init();\n"
    "  u64 j = threadIdx.x;\n"
    "  for (; j + 96 < n_red; j += 128) {\n"   /* four loads in flight */
    "    acc_t x0 = load_at(L, a, b, o, j), x1 = load_at(L, a, b, o, j + 32);\n"
    "    acc_t x2 = load_at(L, a, b, o, j + 64), x3 = load_at(L, a, b, o, j + 96);\n"
    "    acc = r_comb(acc, r_elem(x0)); acc1 = r_comb(acc1, r_elem(x1));\n"
    "    acc2 = r_comb(acc2, r_elem(x2)); acc3 = r_comb(acc3, r_elem(x3));\n"
    "  }\n"
    "  for (; j < n_red; j += 32) acc = r_comb(acc, r_elem(load_at(L, a, b, o, j)));\n"
    "  acc = r_comb(r_comb(acc, acc1), r_comb(acc2, acc3));\n"
    "#pragma unroll\n"
    "  for (int k = 16; k > 0; k >>= 1) acc = r_comb(acc, shfl_xor(acc, k));\n"
    "  if (threadIdx.x == 0) epilogue(c, o[0], acc, alpha, beta, n_red);\n"
    "}\n"
    /* Two passes for tall column reductions: blockIdx.y takes a chunk of
     * the reduced index (so there are enough blocks to fill the GPU), each
     * block writes its 32 partial results to part[chunk][out]; the second
     * kernel combines the chunks in order and applies the epilogue.
     * Deterministic: fixed chunks, fixed order. */
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_cols_part(acc_t *part, const T *a,\n"
    "    const T *b, u64 n_out, u64 n_red, u64 chunk, Loops L) {\n"
    "  __shared__ acc_t sh[8][33];\n"
    "  u64 out = (u64) blockIdx.x * 32 + threadIdx.x;\n"
    "  u64 j0 = (u64) blockIdx.y * chunk;\n"
    "  u64 j1 = j0 + chunk < n_red ? j0 + chunk : n_red;\n"
    "  acc_t acc = r_init();\n"
    "  if (out < n_out) {\n"
    "    i64 o[3] = { 0, 0, 0 };\n"
    "    offsets<0, NF, 1 + NIN>(L, (idx_t) out, o);\n"
    "    acc = cols_sum(L, a, b, o, j0, j1);\n"
    "  }\n"
    "  acc = cols_combine(sh, acc);\n"
    "  if (threadIdx.y == 0 && out < n_out) part[(u64) blockIdx.y * n_out + out] = acc;\n"
    "}\n"
    /* The second pass: blocks of 32 × 8 threads, 32 outputs a block; thread
     * row y sums chunks y, y + 8, ... (two loads in flight), the 8 rows
     * combine in order through shared memory.  (One thread per output
     * walking every chunk made a chain of dependent loads: ~16 µs of
     * latency after an 8192² first pass on the H100.) */
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_cols_fin(T *c, const acc_t *part,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_chunks, u64 n_red, Loops L) {\n"
    "  __shared__ acc_t sh[8][33];\n"
    "  u64 out = (u64) blockIdx.x * 32 + threadIdx.x;\n"
    "  acc_t acc = r_init();\n"
    "  if (out < n_out) {\n"
    "    acc_t acc1 = r_init();\n"
    "    u64 k = threadIdx.y;\n"
    "    for (; k + 8 < n_chunks; k += 16) {\n"
    "      acc_t x0 = part[k * n_out + out], x1 = part[(k + 8) * n_out + out];\n"
    "      acc = r_comb(acc, x0); acc1 = r_comb(acc1, x1);\n"
    "    }\n"
    "    if (k < n_chunks) acc = r_comb(acc, part[k * n_out + out]);\n"
    "    acc = r_comb(acc, acc1);\n"
    "  }\n"
    "  acc = cols_combine(sh, acc);\n"
    "  if (threadIdx.y == 0 && out < n_out) {\n"
    "    i64 o[1] = { 0 };\n"
    "    offsets<0, NF, 1>(L, (idx_t) out, o);\n"
    "    epilogue(c, o[0], acc, alpha, beta, n_red);\n"
    "  }\n"
    "}\n");
  /* The 16-byte kernels (reductions of one input; the host checks that
   * every vector is aligned: A's base, and every stride but the dense
   * one, multiples of VW elements):
   *  - rows_vec (a warp per row) and rows_blk (a block of 256 threads per
   *    long row): the reduced loop is A's only one and dense; each thread
   *    keeps four 16-byte loads in flight into four accumulators, the
   *    tail of a row that is no multiple of VW goes element by element;
   *  - cols_vec and cols_vec_part (the first pass of tall ones, combined
   *    by reduce_cols_fin): A is dense along the innermost output loop,
   *    whose extent is a multiple of VW; a thread serves VW consecutive
   *    outputs (one 16-byte load per row) and keeps four rows in flight,
   *    a block of 32 × 8 threads serves 32 VW outputs. */
  g_string_append (s,
    "#define VW (16 / (int) sizeof(T))\n"
    "struct __align__(16) Vec { T v[VW]; };\n"
    "__device__ __forceinline__ acc_t vec_comb(acc_t acc, const Vec &x) {\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) acc = r_comb(acc, r_elem(ld(&x.v[e])));\n"
    "  return acc;\n"
    "}\n"
    "template <int NT>\n"
    "__device__ __forceinline__ acc_t row_vec(const T *row, u64 n_red, unsigned int t) {\n"
    "  const Vec *v = (const Vec *) row;\n"
    "  const u64 nv = n_red / VW;\n"
    "  acc_t a0 = r_init(), a1 = r_init(), a2 = r_init(), a3 = r_init();\n"
    "  u64 i = t;\n"
    "  for (; i + 3 * NT < nv; i += 4 * NT) {\n"
    "    Vec x0 = v[i], x1 = v[i + NT], x2 = v[i + 2 * NT], x3 = v[i + 3 * NT];\n"
    "    a0 = vec_comb(a0, x0); a1 = vec_comb(a1, x1); a2 = vec_comb(a2, x2); a3 = vec_comb(a3, x3);\n"
    "  }\n"
    "  for (; i < nv; i += NT) a0 = vec_comb(a0, v[i]);\n"
    "  for (u64 j = nv * VW + t; j < n_red; j += NT) a1 = r_comb(a1, r_elem(ld(row + j)));\n"
    "  return r_comb(r_comb(a0, a1), r_comb(a2, a3));\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_rows_vec(T *c, const T *a,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_red, Loops L) {\n"
    "  u64 out = (u64) blockIdx.x * 8 + threadIdx.y;\n"
    "  if (out >= n_out) return;\n"        /* uniform per warp */
    "  i64 o[2] = { 0, 0 };\n"
    "  offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "  acc_t acc = row_vec<32>(a + o[1], n_red, threadIdx.x);\n"
    "#pragma unroll\n"
    "  for (int k = 16; k > 0; k >>= 1) acc = r_comb(acc, shfl_xor(acc, k));\n"
    "  if (threadIdx.x == 0) epilogue(c, o[0], acc, alpha, beta, n_red);\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_rows_blk(T *c, const T *a,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_red, Loops L) {\n"
    "  __shared__ acc_t sh[8];\n"
    "  u64 out = blockIdx.x;\n"              /* the grid has n_out blocks */
    "  i64 o[2] = { 0, 0 };\n"
    "  offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "  acc_t acc = row_vec<256>(a + o[1], n_red, threadIdx.y * 32 + threadIdx.x);\n"
    "#pragma unroll\n"
    "  for (int k = 16; k > 0; k >>= 1) acc = r_comb(acc, shfl_xor(acc, k));\n"
    "  if (threadIdx.x == 0) sh[threadIdx.y] = acc;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.y == 0 && threadIdx.x == 0) {\n"
    "    acc = sh[0];\n"
    "#pragma unroll\n"
    "    for (int k = 1; k < 8; k++) acc = r_comb(acc, sh[k]);\n"
    "    epilogue(c, o[0], acc, alpha, beta, n_red);\n"
    "  }\n"
    "}\n"
    /* rows j0 + threadIdx.y, + R, ... below j1 (R thread rows: 8, or 1
     * for one row of threads) of the VW outputs at A offset oa, U rows
     * (U 16-byte loads) in flight, combined in row order */
    "template <int U, int R>\n"
    "__device__ __forceinline__ void cols_vec_sum(const Loops &L, const T *a, i64 oa, u64 j0, u64 j1,\n"
    "    acc_t *acc) {\n"
    "  u64 j = j0 + (R > 1 ? threadIdx.y : 0);\n"
    "  for (; j + R * (U - 1) < j1; j += R * U) {\n"
    "    Vec x[U];\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++) {\n"
    "      i64 q[2] = { 0, oa };\n"
    "      offsets<NF, NL, 2>(L, (idx_t) (j + R * u), q);\n"
    "      x[u] = *(const Vec *) (a + q[1]);\n"
    "    }\n"
    "#pragma unroll\n"
    "    for (int u = 0; u < U; u++)\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < VW; e++) acc[e] = r_comb(acc[e], r_elem(ld(&x[u].v[e])));\n"
    "  }\n"
    "  for (; j < j1; j += R) {\n"
    "    i64 q[2] = { 0, oa };\n"
    "    offsets<NF, NL, 2>(L, (idx_t) j, q);\n"
    "    Vec x0 = *(const Vec *) (a + q[1]);\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++) acc[e] = r_comb(acc[e], r_elem(ld(&x0.v[e])));\n"
    "  }\n"
    "}\n"
    /* the 8 row groups' partial results of the block's outputs, combined
     * in order; thread row 0 returns them in acc */
    "__device__ __forceinline__ void cols_vec_combine(acc_t (*sh)[32 * VW + 1], acc_t *acc) {\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) sh[threadIdx.y][threadIdx.x * VW + e] = acc[e];\n"
    "  __syncthreads();\n"
    "  if (threadIdx.y == 0) {\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++)\n"
    "#pragma unroll\n"
    "      for (int k = 1; k < 8; k++) acc[e] = r_comb(acc[e], sh[k][threadIdx.x * VW + e]);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_cols_vec(T *c, const T *a,\n"
    "    acc_t alpha, acc_t beta, u64 n_out, u64 n_red, Loops L) {\n"
    "  __shared__ acc_t sh[8][32 * VW + 1];\n"
    "  u64 out = ((u64) blockIdx.x * 32 + threadIdx.x) * VW;\n"
    "  acc_t acc[VW];\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) acc[e] = r_init();\n"
    "  i64 o[2] = { 0, 0 };\n"
    "  if (out < n_out) {\n"
    "    offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "    cols_vec_sum<4, 8>(L, a, o[1], 0, n_red, acc);\n"
    "  }\n"
    "  cols_vec_combine(sh, acc);\n"
    "  if (threadIdx.y == 0 && out < n_out) {\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++) epilogue(c, o[0] + e * L.s[0][NF - 1], acc[e], alpha, beta, n_red);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(256) atomr_tensor_reduce_cols_vec_part(acc_t *part,\n"
    "    const T *a, u64 n_out, u64 n_red, u64 chunk, Loops L) {\n"
    "  __shared__ acc_t sh[8][32 * VW + 1];\n"
    "  u64 out = ((u64) blockIdx.x * 32 + threadIdx.x) * VW;\n"
    "  u64 j0 = (u64) blockIdx.y * chunk;\n"
    "  u64 j1 = j0 + chunk < n_red ? j0 + chunk : n_red;\n"
    "  acc_t acc[VW];\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) acc[e] = r_init();\n"
    "  if (out < n_out) {\n"
    "    i64 o[2] = { 0, 0 };\n"
    "    offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "    cols_vec_sum<4, 8>(L, a, o[1], j0, j1, acc);\n"
    "  }\n"
    "  cols_vec_combine(sh, acc);\n"
    "  if (threadIdx.y == 0 && out < n_out) {\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++) part[(u64) blockIdx.y * n_out + out + e] = acc[e];\n"
    "  }\n"
    "}\n"
    /* Column variant b (first pass): a block of 256 threads spans 256 VW
     * consecutive outputs, so that each load instruction of the block
     * reads 4 KiB of one row (a warp 512 bytes); the block walks rows
     * [y chunk, (y + 1) chunk) in order, eight in flight per thread, with
     * the accumulators in registers (no shared memory), and writes
     * part[y][out] for reduce_cols_fin.  At most 64 registers: four
     * blocks an SM. */
    "extern \"C\" __global__ void __launch_bounds__(256, 4) atomr_tensor_reduce_cols_wide_part(acc_t *part,\n"
    "    const T *a, u64 n_out, u64 n_red, u64 chunk, Loops L) {\n"
    "  const u64 out = ((u64) blockIdx.x * 256 + threadIdx.x) * VW;\n"
    "  if (out >= n_out) return;\n"
    "  const u64 j0 = (u64) blockIdx.y * chunk;\n"
    "  const u64 j1 = j0 + chunk < n_red ? j0 + chunk : n_red;\n"
    "  acc_t acc[VW];\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) acc[e] = r_init();\n"
    "  i64 o[2] = { 0, 0 };\n"
    "  offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "  cols_vec_sum<8, 1>(L, a, o[1], j0, j1, acc);\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) part[(u64) blockIdx.y * n_out + out + e] = acc[e];\n"
    "}\n"
    /* a partial result another block wrote in this launch, read from L2
     * (ld.global.cg: a line of part this SM read before may sit stale in
     * its L1) */
    "__device__ __forceinline__ acc_t ld_part(const acc_t *p) {\n"
    "  unsigned int w[sizeof(acc_t) / 4];\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < (int) (sizeof(acc_t) / 4); i++) w[i] = __ldcg((const unsigned int *) p + i);\n"
    "  acc_t v = r_init();\n"
    "  memcpy(&v, w, sizeof v);\n"
    "  return v;\n"
    "}\n"
    /* Column variant a: one launch.  Block (x, y) sums rows
     * [y chunk, (y + 1) chunk) of its 32 VW outputs (eight rows in flight
     * per thread); with gridDim.y > 1 it writes them to part[y][out] and
     * counts itself done on count[x] (zeroed by the host); the block that
     * counts last combines every chunk of its outputs — thread row r
     * chunks r, r + 8, ... in order, then the 8 rows in order — and
     * writes them.  The result does not depend on which block is last:
     * deterministic.  Fence pattern of CUDA's threadFenceReduction. */
    "extern \"C\" __global__ void __launch_bounds__(256, 4) atomr_tensor_reduce_cols_split(T *c, const T *a,\n"
    "    acc_t *part, unsigned int *count, acc_t alpha, acc_t beta, u64 n_out, u64 n_red, u64 chunk, Loops L) {\n"
    "  __shared__ acc_t sh[8][32 * VW + 1];\n"
    "  __shared__ int last;\n"
    "  const u64 n_chunks = gridDim.y;\n"
    "  const u64 out = ((u64) blockIdx.x * 32 + threadIdx.x) * VW;\n"
    "  const u64 j0 = (u64) blockIdx.y * chunk;\n"
    "  const u64 j1 = j0 + chunk < n_red ? j0 + chunk : n_red;\n"
    "  acc_t acc[VW];\n"
    "#pragma unroll\n"
    "  for (int e = 0; e < VW; e++) acc[e] = r_init();\n"
    "  i64 o[2] = { 0, 0 };\n"
    "  if (out < n_out) {\n"
    "    offsets<0, NF, 2>(L, (idx_t) out, o);\n"
    "    cols_vec_sum<8, 8>(L, a, o[1], j0, j1, acc);\n"
    "  }\n"
    "  cols_vec_combine(sh, acc);\n"
    "  if (n_chunks > 1) {\n"
    "    if (threadIdx.y == 0 && out < n_out) {\n"
    "#pragma unroll\n"
    "      for (int e = 0; e < VW; e++) part[(u64) blockIdx.y * n_out + out + e] = acc[e];\n"
    "      __threadfence();\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 0 && threadIdx.y == 0)\n"
    "      last = atomicAdd(count + blockIdx.x, 1u) == (unsigned int) (n_chunks - 1);\n"
    "    __syncthreads();\n"
    "    if (!last) return;\n"              /* uniform per block */
    "    __threadfence();\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++) acc[e] = r_init();\n"
    "    if (out < n_out) {\n"
    "      for (u64 k = threadIdx.y; k < n_chunks; k += 8) {\n"
    "        const acc_t *pk = part + k * n_out + out;\n"
    "#pragma unroll\n"
    "        for (int e = 0; e < VW; e++) acc[e] = r_comb(acc[e], ld_part(pk + e));\n"
    "      }\n"
    "    }\n"
    "    cols_vec_combine(sh, acc);\n"
    "    if (threadIdx.x == 0 && threadIdx.y == 0) count[blockIdx.x] = 0;\n"
    "  }\n"
    "  if (threadIdx.y == 0 && out < n_out) {\n"
    "#pragma unroll\n"
    "    for (int e = 0; e < VW; e++) epilogue(c, o[0] + e * L.s[0][NF - 1], acc[e], alpha, beta, n_red);\n"
    "  }\n"
    "}\n");
  return g_string_free (s, FALSE);
}

/* The generated source depends on the kind, dtype, loop counts, index
 * width and operators, never on extents or strides (those are arguments):
 * one kernel serves every shape with the same folded rank. */
static gchar *
kernel_key (const TensorRequest *r, gboolean idx32)
{
  return g_strdup_printf ("%d/%s/%u/%u/%d/%u/%d/%d/%d/%d/%d/%d/%d", r->kind, atomr_dtype_get_name (r->dtype),
                          r->plan.n_free, r->plan.n_loops, idx32, r->n_in,
                          r->op_a, r->op_b, r->op_c, r->op_ab, r->op_abc, r->reduce,
                          r->kind == KIND_PERMUTE ? r->plan.a_inner : -1);
}

static AtomrKernel *
get_kernel (AtomrTensorActor *self,
            TensorRequest    *r,
            gboolean          idx32,
            const gchar      *name,
            GError          **error)
{
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (self));
  g_autofree gchar *key = kernel_key (r, idx32);
  g_autofree gchar *full_key = g_strconcat (key, "/", name, NULL);
  g_autofree gchar *source = NULL;
  g_autoptr(AtomrCompileOptions) options = NULL;
  g_autoptr(AtomrModule) module = NULL;
  AtomrKernel *kernel;

  kernel = g_hash_table_lookup (self->kernels, full_key);
  if (kernel != NULL && !atomr_kernel_is_stale (kernel))
    return kernel;

  source = r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT ? reduce_source (r, idx32) : elementwise_source (r, idx32);
  options = atomr_compile_options_new ();
  atomr_compile_options_set_arch (options, "native");
  module = atomr_nvrtc_compile_for_device (source, "atomr-tensor.cu", options,
                                           atomr_kernel_cache_get_default (), device, error);
  if (module == NULL)
    {
      g_prefix_error (error, "tensor kernel %s: ", key);
      return NULL;
    }
  kernel = atomr_kernel_new_loaded (device, module, name, error);
  if (kernel == NULL)
    return NULL;
  g_hash_table_replace (self->kernels, g_steal_pointer (&full_key), kernel);
  return kernel;
}

static void
fill_loops (const AtomrLoopPlan *p, KernelLoops *L)
{
  memset (L, 0, sizeof *L);
  for (guint i = 0; i < p->n_loops; i++)
    {
      L->ext[i] = p->extent[i];
      for (guint o = 0; o < p->n_operands; o++)
        L->s[o][i] = p->stride[o][i];
    }
}

/* A permutation whose input is densest in another loop than the
 * output's innermost, both of them long enough to fill tiles. */
static gboolean
use_transpose (const TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;

  return r->kind == KIND_PERMUTE && p->n_out > 0 && p->a_inner >= 0 &&
         (guint) p->a_inner + 1 < p->n_free &&
         p->extent[p->n_free - 1] >= 8 && p->extent[p->a_inner] >= 8;
}

/* Column reductions ("cols") with few output blocks split the reduced
 * index into chunks of at least COLS_MIN_CHUNK, so that about
 * COLS_TARGET_BLOCKS blocks keep the memory system busy (8192 × 8192
 * summed over rows: 256 output blocks × 8 chunks); a second kernel
 * combines the chunks.  Returns the chunk length, 0 for one pass. */
#define COLS_TARGET_BLOCKS 2048
#define COLS_MIN_CHUNK     256

/* Elements in 16 bytes of @r's dtype: the width of the vector kernels. */
static guint
vec_width (const TensorRequest *r)
{
  return 16 / (guint) atomr_dtype_get_size (r->dtype);
}

/* Whether operand @o's stride in every loop but @skip is a multiple of @w
 * elements (so that aligned vectors stay aligned from row to row). */
static gboolean
strides_multiple (const AtomrLoopPlan *p, guint o, guint skip, gint64 w)
{
  for (guint k = 0; k < p->n_loops; k++)
    if (k != skip && p->stride[o][k] % w != 0)
      return FALSE;
  return TRUE;
}

/* The 16-byte reduction kernels (reduce_rows_vec/_blk, reduce_cols_vec):
 * a reduction (not a contraction) whose A is 16-byte aligned; for rows,
 * one reduced loop, dense in A; for cols, A dense along the innermost
 * output loop, whose extent is a multiple of the vector width; in both,
 * every other stride of A a multiple of the vector width.  Unaligned
 * views take the scalar kernels. */
static gboolean
reduce_vec (const TensorRequest *r, gboolean rows)
{
  const AtomrLoopPlan *p = &r->plan;
  gint64 w = vec_width (r);

  if (r->kind != KIND_REDUCE || p->n_out == 0 || atomr_tensor_get_ptr (r->t[1]) % 16 != 0)
    return FALSE;
  if (rows)
    return p->n_loops == p->n_free + 1 && p->stride[1][p->n_loops - 1] == 1 &&
           strides_multiple (p, 1, p->n_loops - 1, w);
  return p->n_free >= 1 && p->stride[1][p->n_free - 1] == 1 && p->extent[p->n_free - 1] % w == 0 &&
         strides_multiple (p, 1, p->n_free - 1, w);
}

/* Rows of at least ROWS_BLOCK_VECTORS vectors get a block of 256 threads
 * each (reduce_rows_blk), shorter ones a warp (reduce_rows_vec). */
#define ROWS_BLOCK_VECTORS 512

static gboolean
rows_block (const TensorRequest *r)
{
  return r->plan.n_reduce >= (guint64) ROWS_BLOCK_VECTORS * vec_width (r);
}

/* The chunk length that cuts @n_red into chunks of at least @min_chunk so
 * that @out_blocks blocks of outputs make about @target blocks (with
 * @at_most, never more: a target of whole waves, where one block more
 * starts a wave of its own); 0 for one pass. */
static guint64
chunk_for (guint64 out_blocks, guint64 n_red, guint64 target, guint64 min_chunk, gboolean at_most)
{
  guint64 chunks;

  if (out_blocks >= target || n_red < 2 * min_chunk)
    return 0;
  chunks = MIN (at_most ? target / out_blocks : (target + out_blocks - 1) / out_blocks, n_red / min_chunk);
  if (chunks < 2)
    return 0;
  return (n_red + chunks - 1) / chunks;
}

/* The 16-byte column variants a (split) and b (wide) keep eight rows in
 * flight per thread and allow 64 registers, so that COLS_DEEP_BLOCKS_PER_SM
 * blocks of 256 threads fit a multiprocessor.  a: blocks of 32 VW
 * outputs, chunks of at least 64 rows (8 thread rows × 8 loads), about
 * two waves; b: blocks of 256 VW outputs, chunks of at least 128 rows
 * (fewer partial results: a chunk writes 256 VW of them), about one
 * wave. */
#define COLS_DEEP_BLOCKS_PER_SM 4
#define COLS_SPLIT_WAVES        2
#define COLS_SPLIT_MIN_CHUNK    64
#define COLS_WIDE_WAVES         1
#define COLS_WIDE_MIN_CHUNK     128

static guint64
wide_chunk (const TensorRequest *r)
{
  guint64 per_block = 256 * (guint64) vec_width (r);

  return chunk_for ((r->plan.n_out + per_block - 1) / per_block, r->plan.n_reduce,
                    (guint64) MAX (r->n_sms, 1) * COLS_DEEP_BLOCKS_PER_SM * COLS_WIDE_WAVES,
                    COLS_WIDE_MIN_CHUNK, TRUE);
}

/* Variant b runs the wide first pass when it cuts the reduced index into
 * chunks; otherwise cols_vec (variant c's one pass). */
static gboolean
cols_wide (const TensorRequest *r)
{
  return r->cols_variant == 'b' && reduce_vec (r, FALSE) && wide_chunk (r) > 0;
}

/* Outputs per block of the column kernels: 32, or 32 vectors, or 256
 * vectors for the wide pass. */
static guint64
cols_per_block (const TensorRequest *r)
{
  if (cols_wide (r))
    return 256 * (guint64) vec_width (r);
  return reduce_vec (r, FALSE) ? 32 * (guint64) vec_width (r) : 32;
}

static guint64
cols_chunk (const TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;
  guint64 out_blocks = (p->n_out + cols_per_block (r) - 1) / cols_per_block (r);

  if (cols_wide (r))
    return wide_chunk (r);
  if (r->cols_variant == 'a' && reduce_vec (r, FALSE))
    return chunk_for (out_blocks, p->n_reduce,
                      (guint64) MAX (r->n_sms, 1) * COLS_DEEP_BLOCKS_PER_SM * COLS_SPLIT_WAVES,
                      COLS_SPLIT_MIN_CHUNK, TRUE);
  return chunk_for (out_blocks, p->n_reduce, COLS_TARGET_BLOCKS, COLS_MIN_CHUNK, FALSE);
}

/* The paired 64 × 64 transpose: A has stride 1 along TY (its densest
 * loop) and D along TX (the innermost output loop), both extents are even
 * and at least 64, and every row of both starts at a pair boundary (base
 * pointers and the other strides even), so that the kernel's 2-element
 * vector accesses are aligned. */
static gboolean
use_pairs (const TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;
  guint tx = p->n_free - 1, ty = (guint) p->a_inner;
  gsize pair = 2 * atomr_dtype_get_size (r->dtype);

  if (!use_transpose (r) || r->dtype == ATOMR_DTYPE_C128 || p->stride[1][ty] != 1 || p->stride[0][tx] != 1 ||
      p->extent[tx] % 2 != 0 || p->extent[ty] % 2 != 0 || p->extent[tx] < 64 || p->extent[ty] < 64)
    return FALSE;
  for (guint k = 0; k < p->n_free; k++)
    if ((k != ty && p->stride[1][k] % 2 != 0) || (k != tx && p->stride[0][k] % 2 != 0))
      return FALSE;
  return atomr_tensor_get_ptr (r->t[1]) % pair == 0 && atomr_tensor_get_ptr (r->t[0]) % pair == 0;
}

/* The 16-byte 64 × 64 transpose (atomr_tensor_transpose4) for f32, f16
 * and bf16: the paired transpose's conditions with vectors of VW = 16 /
 * element size instead of pairs (both extents and every other stride
 * multiples of VW, both base pointers 16-byte aligned). */
static gboolean
use_quads (const TensorRequest *r)
{
  const AtomrLoopPlan *p = &r->plan;
  guint tx = p->n_free - 1, ty = (guint) p->a_inner;
  gint64 w = vec_width (r);

  if (!use_pairs (r) || atomr_dtype_get_size (r->dtype) > 4 || is_complex (r->dtype) ||
      p->extent[tx] % w != 0 || p->extent[ty] % w != 0)
    return FALSE;
  for (guint k = 0; k < p->n_free; k++)
    if ((k != ty && p->stride[1][k] % w != 0) || (k != tx && p->stride[0][k] % w != 0))
      return FALSE;
  return atomr_tensor_get_ptr (r->t[1]) % 16 == 0 && atomr_tensor_get_ptr (r->t[0]) % 16 == 0;
}

/* The launch geometry of @r's kernel (also shown to the trace before the
 * enqueue; for two-pass column reductions, the first pass's).  Reductions pick "rows" when the innermost reduced loop is
 * dense in A and the innermost output loop is not (or there is one output). */
static void
launch_geometry (const TensorRequest *r,
                 guint64             *grid,
                 guint               *grid_y,
                 guint               *block_x,
                 guint               *block_y,
                 gboolean            *rows,
                 gboolean            *transpose)
{
  const AtomrLoopPlan *p = &r->plan;

  *rows = FALSE;
  *transpose = use_transpose (r);
  if (*transpose)
    {
      gint64 t = use_pairs (r) ? 64 : 32;
      guint64 tiles = (guint64) ((p->extent[p->n_free - 1] + t - 1) / t) *
                      (guint64) ((p->extent[p->a_inner] + t - 1) / t);
      guint64 batch = p->n_out / ((guint64) p->extent[p->n_free - 1] * (guint64) p->extent[p->a_inner]);

      *grid = tiles;
      *grid_y = (guint) MIN (batch, 65535);
      *block_x = use_quads (r) ? 256 : 32;
      *block_y = use_quads (r) ? 1 : 8;
      return;
    }
  *grid_y = 1;
  if (r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT)
    {
      *rows = p->n_loops > p->n_free &&
              ABS (p->stride[1][p->n_loops - 1]) == 1 &&
              (ABS (p->stride[1][p->n_free - 1]) != 1 || p->n_out == 1);
      *grid = *rows ? (p->n_out + 7) / 8 : (p->n_out + 31) / 32;
      if (*rows && reduce_vec (r, TRUE))
        *grid = rows_block (r) ? p->n_out : (p->n_out + 7) / 8;
      else if (!*rows)
        *grid = (p->n_out + cols_per_block (r) - 1) / cols_per_block (r);
      if (!*rows && cols_chunk (r) > 0)
        *grid_y = (guint) ((p->n_reduce + cols_chunk (r) - 1) / cols_chunk (r));
      *block_x = !*rows && cols_wide (r) ? 256 : 32;
      *block_y = !*rows && cols_wide (r) ? 1 : 8;
    }
  else
    {
      *grid = MIN ((p->n_out + 255) / 256, (guint64) 1 << 20);
      *block_x = 256;
      *block_y = 1;
    }
}

/* The scalars as the kernels (and cuBLASLt) take them: acc_t by value,
 * float for halves and f32, double for f64, {re, 0} pairs of the real type
 * for complex dtypes. */
typedef struct {
  gfloat  f[3][2];
  gdouble d[3][2];
  gboolean wide;
} Scalars;

static void
scalars_init (Scalars *sc, const TensorRequest *r)
{
  const gdouble v[3] = { r->alpha, r->beta, r->gamma };

  memset (sc, 0, sizeof *sc);
  sc->wide = r->dtype == ATOMR_DTYPE_F64 || r->dtype == ATOMR_DTYPE_C128;
  for (guint i = 0; i < 3; i++)
    {
      sc->f[i][0] = (gfloat) v[i];
      sc->d[i][0] = v[i];
    }
}

static void *
scalar_ptr (Scalars *sc, guint i)
{
  return sc->wide ? (void *) sc->d[i] : (void *) sc->f[i];
}

/* sizeof (acc_t) in the kernels */
static gsize
acc_size (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F64:
    case ATOMR_DTYPE_C64: return 8;
    case ATOMR_DTYPE_C128: return 16;
    default: return 4;
    }
}

/* ------------------------------------------------------------------ */
/* Contractions through cuBLASLt                                        */

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

static guint
lt_key_hash (gconstpointer key)
{
  const guint8 *p = key;
  guint h = 5381;

  for (gsize i = 0; i < sizeof (LtKey); i++)
    h = h * 33 + p[i];
  return h;
}

static gboolean
lt_key_equal (gconstpointer a,
              gconstpointer b)
{
  return memcmp (a, b, sizeof (LtKey)) == 0;
}

static void
lt_plan_free (gpointer data)
{
  LtPlan *plan = data;

  /* host objects: safe to drop whatever the context */
  if (plan->desc)
    cublasLtMatmulDescDestroy (plan->desc);
  if (plan->lx)
    cublasLtMatrixLayoutDestroy (plan->lx);
  if (plan->ly)
    cublasLtMatrixLayoutDestroy (plan->ly);
  if (plan->lc)
    cublasLtMatrixLayoutDestroy (plan->lc);
  g_free (plan);
}

static cudaDataType
lt_data_type (AtomrDtype dtype)
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

/* The compute type of a contraction: f64 for f64, f32 accumulation for
 * halves, the actor's compute-type for f32 (checked at submit). */
static cublasComputeType_t
lt_compute_type (AtomrDtype dtype, gint compute)
{
  if (dtype == ATOMR_DTYPE_F64 || dtype == ATOMR_DTYPE_C128)
    return CUBLAS_COMPUTE_64F;
  if (dtype != ATOMR_DTYPE_F32)
    return CUBLAS_COMPUTE_32F;
  switch ((AtomrBlasComputeType) compute)
    {
    case ATOMR_BLAS_COMPUTE_F32_PEDANTIC: return CUBLAS_COMPUTE_32F_PEDANTIC;
    case ATOMR_BLAS_COMPUTE_F32_FAST_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ATOMR_BLAS_COMPUTE_F32_FAST_F16: return CUBLAS_COMPUTE_32F_FAST_16F;
    case ATOMR_BLAS_COMPUTE_F32_FAST_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return CUBLAS_COMPUTE_32F;
    }
}

/* The largest power of two (≤ 256) dividing @ptr: what the heuristic may
 * assume of an operand's alignment (its default, 256, would reject
 * views at odd offsets). */
static gint32
lt_alignment (CUdeviceptr ptr)
{
  guint32 a = 256;

  while (a > 1 && (ptr % a) != 0)
    a >>= 1;
  return (gint32) a;
}

#define LT_SET(call, what) ok = ok && lt_check (call, what, error)

/* Descriptors, layouts and the heuristic for @key: once per problem.
 * Returns NULL with @error set on a failure other than "no algorithm"
 * (which gives a plan marked unsupported). */
static LtPlan *
lt_plan_new (AtomrTensorActor *self,
             const LtKey      *key,
             GError          **error)
{
  LtPlan *plan = g_new0 (LtPlan, 1);
  cudaDataType type = lt_data_type (key->dtype);
  cudaDataType scale = key->dtype == ATOMR_DTYPE_F64 ? CUDA_R_64F :
                       key->dtype == ATOMR_DTYPE_C64 ? CUDA_C_32F :
                       key->dtype == ATOMR_DTYPE_C128 ? CUDA_C_64F : CUDA_R_32F;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t result;
  gint32 op_x = key->trans_x ? CUBLAS_OP_T : CUBLAS_OP_N;
  gint32 op_y = key->trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  guint64 ws = LT_WORKSPACE_SIZE;
  guint32 align[4] = { (guint32) key->align_x, (guint32) key->align_y, (guint32) key->align_c,
                       (guint32) key->align_c };
  int returned = 0;
  gboolean ok = TRUE;

  plan->key = *key;
  LT_SET (cublasLtMatmulDescCreate (&plan->desc, (cublasComputeType_t) key->compute, scale),
          "cublasLtMatmulDescCreate");
  LT_SET (cublasLtMatmulDescSetAttribute (plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_x, sizeof op_x),
          "cublasLtMatmulDescSetAttribute (TRANSA)");
  LT_SET (cublasLtMatmulDescSetAttribute (plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_y, sizeof op_y),
          "cublasLtMatmulDescSetAttribute (TRANSB)");
  LT_SET (cublasLtMatrixLayoutCreate (&plan->lx, type, key->trans_x ? key->k : key->m,
                                      key->trans_x ? key->m : key->k, key->ldx),
          "cublasLtMatrixLayoutCreate (A)");
  LT_SET (cublasLtMatrixLayoutCreate (&plan->ly, type, key->trans_y ? key->n : key->k,
                                      key->trans_y ? key->k : key->n, key->ldy),
          "cublasLtMatrixLayoutCreate (B)");
  LT_SET (cublasLtMatrixLayoutCreate (&plan->lc, type, key->m, key->n, key->ldc),
          "cublasLtMatrixLayoutCreate (C)");
  if (ok && key->batch > 1)
    {
      cublasLtMatrixLayout_t layouts[3] = { plan->lx, plan->ly, plan->lc };
      gint64 strides[3] = { key->sx, key->sy, key->sc };
      gint32 batch = (gint32) key->batch;

      for (guint i = 0; i < 3; i++)
        {
          LT_SET (cublasLtMatrixLayoutSetAttribute (layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                    &batch, sizeof batch),
                  "cublasLtMatrixLayoutSetAttribute (BATCH_COUNT)");
          LT_SET (cublasLtMatrixLayoutSetAttribute (layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                    &strides[i], sizeof strides[i]),
                  "cublasLtMatrixLayoutSetAttribute (STRIDED_BATCH_OFFSET)");
        }
    }
  LT_SET (cublasLtMatmulPreferenceCreate (&pref), "cublasLtMatmulPreferenceCreate");
  LT_SET (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
          "cublasLtMatmulPreferenceSetAttribute (MAX_WORKSPACE_BYTES)");
  for (guint i = 0; i < 4; i++)
    LT_SET (cublasLtMatmulPreferenceSetAttribute (pref, (cublasLtMatmulPreferenceAttributes_t) (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES + i),
                                                  &align[i], sizeof align[i]),
            "cublasLtMatmulPreferenceSetAttribute (MIN_ALIGNMENT)");
  if (ok)
    {
      cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic (self->lt, plan->desc, plan->lx, plan->ly,
                                                          plan->lc, plan->lc, pref, 1, &result, &returned);

      /* the layouts are valid GEMM layouts, so these mean "not served" */
      if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
          (st == CUBLAS_STATUS_SUCCESS && returned == 0))
        plan->unsupported = TRUE;
      else
        LT_SET (st, "cublasLtMatmulAlgoGetHeuristic");
    }
  if (pref)
    cublasLtMatmulPreferenceDestroy (pref);
  if (!ok)
    {
      lt_plan_free (plan);
      return NULL;
    }
  if (!plan->unsupported)
    {
      plan->algo = result.algo;
      plan->workspace = result.workspaceSize;
    }
  return plan;
}

/* Runs @r as one cuBLASLt matmul.  *@ran is FALSE (and the result TRUE)
 * when cuBLASLt cannot serve it — not loadable, or no algorithm — and
 * @why_not says why; the caller then runs the generated kernels. */
static gboolean
contract_gemm (AtomrTensorActor *self,
               AtomrOp          *op,
               TensorRequest    *r,
               gboolean         *ran,
               gchar           **why_not,
               GError          **error)
{
  const AtomrGemmPlan *g = &r->gemm;
  CUstream stream = atomr_op_get_cu_stream (op);
  CUdeviceptr x = atomr_tensor_get_ptr (r->t[g->swap ? 2 : 1]);
  CUdeviceptr y = atomr_tensor_get_ptr (r->t[g->swap ? 1 : 2]);
  CUdeviceptr c = atomr_tensor_get_ptr (r->t[0]);
  Scalars sc;
  LtKey key;
  LtPlan *plan;

  *ran = FALSE;
  scalars_init (&sc, r);
  if (self->lt == NULL)
    {
      g_autoptr(GError) local = NULL;

      if (!atomr_cublasLt_load (&local) ||
          !lt_check (cublasLtCreate (&self->lt), "cublasLtCreate", &local))
        {
          self->lt = NULL;
          *why_not = g_strdup_printf ("cuBLASLt unavailable: %s", local->message);
          return TRUE;
        }
    }

  memset (&key, 0, sizeof key);
  key.m = g->m;
  key.n = g->n;
  key.k = g->k;
  key.ldx = g->ldx;
  key.ldy = g->ldy;
  key.ldc = g->ldc;
  key.batch = g->batch;
  key.sx = g->stride_x;
  key.sy = g->stride_y;
  key.sc = g->stride_c;
  key.trans_x = g->trans_x;
  key.trans_y = g->trans_y;
  key.dtype = r->dtype;
  key.compute = lt_compute_type (r->dtype, r->compute);
  key.align_x = lt_alignment (x);
  key.align_y = lt_alignment (y);
  key.align_c = lt_alignment (c);

  plan = g_hash_table_lookup (self->lt_plans, &key);
  if (plan == NULL)
    {
      plan = lt_plan_new (self, &key, error);
      if (plan == NULL)
        return FALSE;
      if (g_hash_table_size (self->lt_plans) >= LT_PLAN_CAPACITY)
        g_hash_table_remove_all (self->lt_plans);
      g_hash_table_insert (self->lt_plans, &plan->key, plan);
    }
  if (plan->unsupported)
    {
      *why_not = g_strdup ("cuBLASLt has no algorithm for it");
      return TRUE;
    }
  if (plan->workspace > 0 && self->lt_workspace == 0 &&
      !atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&self->lt_workspace, LT_WORKSPACE_SIZE, stream),
                         "cuMemAllocAsync (cuBLASLt workspace)", error))
    {
      self->lt_workspace = 0;
      return FALSE;
    }
  if (!lt_check (cublasLtMatmul (self->lt, plan->desc,
                                 scalar_ptr (&sc, 0),
                                 (const void *) (uintptr_t) x, plan->lx,
                                 (const void *) (uintptr_t) y, plan->ly,
                                 scalar_ptr (&sc, 1),
                                 (const void *) (uintptr_t) c, plan->lc,
                                 (void *) (uintptr_t) c, plan->lc, &plan->algo,
                                 plan->workspace ? (void *) (uintptr_t) self->lt_workspace : NULL,
                                 plan->workspace, (cudaStream_t) stream),
                 "cublasLtMatmul", error))
    return FALSE;
  *ran = TRUE;
  return TRUE;
}

/* The detail of a contraction: the path it takes and its shape. */
static gchar *
contract_detail (const TensorRequest *r, gboolean rows, const gchar *why_not)
{
  const AtomrGemmPlan *g = &r->gemm;

  if (why_not == NULL)
    return g_strdup_printf ("cublaslt gemm m=%" G_GINT64_FORMAT " n=%" G_GINT64_FORMAT " k=%"
                            G_GINT64_FORMAT " batch=%" G_GINT64_FORMAT " op=%c%c%s%s%s",
                            g->m, g->n, g->k, g->batch, g->trans_x ? 'T' : 'N', g->trans_y ? 'T' : 'N',
                            g->swap ? " swapped" : "",
                            r->dtype == ATOMR_DTYPE_F32 && r->compute == ATOMR_BLAS_COMPUTE_F32_FAST_TF32
                              ? " tf32" : "",
                            r->pack.pack_a && r->pack.pack_b ? " packed a+b" :
                            r->pack.pack_a ? " packed a" : r->pack.pack_b ? " packed b" : "");
  return g_strdup_printf ("nvrtc %s (%s)", rows ? "rows" : "cols", why_not);
}

/* The two-pass column reduction: partial results per chunk in a
 * stream-ordered scratch buffer, then their combination. */
static gboolean
reduce_two_pass (AtomrTensorActor *self,
                 AtomrOp          *op,
                 TensorRequest    *r,
                 gboolean          idx32,
                 KernelLoops      *loops,
                 guint             grid,
                 guint             n_chunks_u,
                 GError          **error)
{
  const AtomrLoopPlan *p = &r->plan;
  CUstream stream = atomr_op_get_cu_stream (op);
  Scalars sc;
  guint64 n_out = p->n_out, n_red = p->n_reduce, n_chunks = n_chunks_u, chunk = cols_chunk (r);
  guint64 part_bytes, fin_blocks = (n_out + 31) / 32;
  CUdeviceptr out = atomr_tensor_get_ptr (r->t[0]);
  CUdeviceptr a = atomr_tensor_get_ptr (r->t[1]);
  CUdeviceptr b = r->t[2] ? atomr_tensor_get_ptr (r->t[2]) : a;
  CUdeviceptr part = 0;
  AtomrKernel *k_part, *k_fin;
  void *params[8];
  gboolean ok, vec;

  if (!g_uint64_checked_mul (&part_bytes, n_out, n_chunks) ||
      !g_uint64_checked_mul (&part_bytes, part_bytes, acc_size (r->dtype)) || fin_blocks > G_MAXINT32)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "reduce: %" G_GUINT64_FORMAT " outputs × %" G_GUINT64_FORMAT " chunks do not fit",
                   n_out, n_chunks);
      return FALSE;
    }
  vec = reduce_vec (r, FALSE);
  k_part = get_kernel (self, r, idx32,
                       !vec ? "atomr_tensor_reduce_cols_part"
                       : cols_wide (r) ? "atomr_tensor_reduce_cols_wide_part" : "atomr_tensor_reduce_cols_vec_part",
                       error);
  if (k_part == NULL)
    return FALSE;
  k_fin = get_kernel (self, r, idx32, "atomr_tensor_reduce_cols_fin", error);
  if (k_fin == NULL)
    return FALSE;
  if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&part, part_bytes, stream),
                         "cuMemAllocAsync (reduction partials)", error))
    return FALSE;

  /* reduce_cols_vec_part has no B (reductions only) */
  params[0] = &part;
  params[1] = &a;
  if (vec)
    {
      params[2] = &n_out;
      params[3] = &n_red;
      params[4] = &chunk;
      params[5] = loops;
    }
  else
    {
      params[2] = &b;
      params[3] = &n_out;
      params[4] = &n_red;
      params[5] = &chunk;
      params[6] = loops;
    }
  ok = atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (k_part), grid, n_chunks_u, 1,
                                                   cols_wide (r) ? 256 : 32, cols_wide (r) ? 1 : 8, 1, 0,
                                                   stream, params, NULL),
                         "cuLaunchKernel (tensor reduction, first pass)", error);
  if (ok)
    {
      scalars_init (&sc, r);
      params[0] = &out;
      params[1] = &part;
      params[2] = scalar_ptr (&sc, 0);
      params[3] = scalar_ptr (&sc, 1);
      params[4] = &n_out;
      params[5] = &n_chunks;
      params[6] = &n_red;
      params[7] = loops;
      ok = atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (k_fin), (guint) fin_blocks,
                                                       1, 1, 32, 8, 1, 0, stream, params, NULL),
                             "cuLaunchKernel (tensor reduction, second pass)", error);
    }
  /* stream-ordered: freed after the second pass has read it */
  ATOMR_CU->cuMemFreeAsync (part, stream);
  return ok;
}

/* Column variant a (atomr_tensor_reduce_cols_split): one launch of
 * @grid × @n_chunks blocks; with more than one chunk, the partial results
 * and one counter per column of blocks live in a stream-ordered scratch
 * buffer whose counters are zeroed first. */
static gboolean
reduce_split (AtomrTensorActor *self,
              AtomrOp          *op,
              TensorRequest    *r,
              gboolean          idx32,
              KernelLoops      *loops,
              guint             grid,
              guint             n_chunks_u,
              GError          **error)
{
  const AtomrLoopPlan *p = &r->plan;
  CUstream stream = atomr_op_get_cu_stream (op);
  Scalars sc;
  guint64 n_out = p->n_out, n_red = p->n_reduce, chunk = n_chunks_u > 1 ? cols_chunk (r) : n_red;
  guint64 part_bytes = 0;
  CUdeviceptr out = atomr_tensor_get_ptr (r->t[0]);
  CUdeviceptr a = atomr_tensor_get_ptr (r->t[1]);
  CUdeviceptr part = 0, count = 0;
  AtomrKernel *kernel;
  void *params[10];
  gboolean ok;

  if (n_chunks_u > 1)
    {
      /* partials, rounded up to 256 bytes, then grid counters */
      if (!g_uint64_checked_mul (&part_bytes, n_out, n_chunks_u) ||
          !g_uint64_checked_mul (&part_bytes, part_bytes, acc_size (r->dtype)) ||
          part_bytes > G_MAXUINT64 - 256 - 4 * (guint64) grid)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                       "reduce: %" G_GUINT64_FORMAT " outputs × %u chunks do not fit",
                       n_out, n_chunks_u);
          return FALSE;
        }
      part_bytes = (part_bytes + 255) / 256 * 256;
    }
  kernel = get_kernel (self, r, idx32, "atomr_tensor_reduce_cols_split", error);
  if (kernel == NULL)
    return FALSE;
  if (n_chunks_u > 1)
    {
      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&part, part_bytes + 4 * (guint64) grid, stream),
                             "cuMemAllocAsync (reduction partials)", error))
        return FALSE;
      count = part + part_bytes;
      if (!atomr_cuda_check (ATOMR_CU->cuMemsetD32Async (count, 0, grid, stream),
                             "cuMemsetD32Async (reduction counters)", error))
        {
          ATOMR_CU->cuMemFreeAsync (part, stream);
          return FALSE;
        }
    }
  scalars_init (&sc, r);
  params[0] = &out;
  params[1] = &a;
  params[2] = &part;
  params[3] = &count;
  params[4] = scalar_ptr (&sc, 0);
  params[5] = scalar_ptr (&sc, 1);
  params[6] = &n_out;
  params[7] = &n_red;
  params[8] = &chunk;
  params[9] = loops;
  ok = atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel), grid, n_chunks_u, 1,
                                                   32, 8, 1, 0, stream, params, NULL),
                         "cuLaunchKernel (tensor reduction, split)", error);
  /* stream-ordered: freed after the kernel has run */
  if (part != 0)
    ATOMR_CU->cuMemFreeAsync (part, stream);
  return ok;
}

static gboolean launch_generated (AtomrTensorActor *self, AtomrOp *op, TensorRequest *r, GError **error);

/* Input @i (1: A, 2: B) copied into a contiguous scratch tensor in the
 * packed layout, by the permutation kernels, on the op's stream.  The
 * scratch buffer lives until the operation completes. */
static AtomrTensor *
pack_operand (AtomrTensorActor *self,
              AtomrOp          *op,
              TensorRequest    *r,
              guint             i,
              GError          **error)
{
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (self));
  const AtomrGemmPack *pk = &r->pack;
  guint n = i == 1 ? pk->n_a : pk->n_b;
  const gint64 *shape = i == 1 ? pk->shape_a : pk->shape_b;
  const gint64 *strides = i == 1 ? pk->strides_a : pk->strides_b;
  guint64 count = 1;
  g_autoptr(AtomrBuffer) buffer = NULL;
  g_autoptr(AtomrStream) utility = NULL;
  g_autoptr(AtomrFence) fence = NULL;
  g_autoptr(AtomrTensor) packed = NULL;
  TensorRequest pr;

  for (guint d = 0; d < n; d++)
    count *= (guint64) shape[d];
  buffer = atomr_buffer_new (device, r->dtype, MAX (count, 1), error);
  if (buffer == NULL)
    return NULL;
  /* allocated on the utility stream: the op's stream waits for it */
  utility = atomr_device_get_utility_stream (device, error);
  if (utility == NULL)
    return NULL;
  fence = atomr_stream_record (utility, ATOMR_EVENT_PLAIN, error);
  if (fence == NULL || !atomr_stream_wait (atomr_op_get_stream (op), fence, error))
    return NULL;
  packed = atomr_tensor_new_strided (buffer, r->dtype, 0, shape, n, strides, n, error);
  if (packed == NULL)
    return NULL;

  memset (&pr, 0, sizeof pr);
  pr.kind = KIND_PERMUTE;
  pr.dtype = r->dtype;
  pr.plan = r->pack_plan[i - 1];
  pr.n_in = 1;
  pr.op_a = ATOMR_TENSOR_UNARY_IDENTITY;
  pr.alpha = 1.0;
  pr.t[0] = packed;
  pr.t[1] = r->t[i];
  if (!launch_generated (self, op, &pr, error))
    return NULL;
  atomr_op_keep (op, buffer);
  return g_steal_pointer (&packed);
}

/* A contraction whose GEMM reads packed copies of A and/or B. */
static gboolean
contract_packed (AtomrTensorActor *self,
                 AtomrOp          *op,
                 TensorRequest    *r,
                 gboolean         *ran,
                 gchar           **why_not,
                 GError          **error)
{
  g_autoptr(AtomrTensor) pa = NULL, pb = NULL;
  TensorRequest g = *r;    /* borrows r's tensors */

  if (r->pack.pack_a && (pa = pack_operand (self, op, r, 1, error)) == NULL)
    return FALSE;
  if (r->pack.pack_b && (pb = pack_operand (self, op, r, 2, error)) == NULL)
    return FALSE;
  if (pa)
    g.t[1] = pa;
  if (pb)
    g.t[2] = pb;
  return contract_gemm (self, op, &g, ran, why_not, error);
}

static gboolean
tensor_enqueue (AtomrOp  *op,
                GError  **error)
{
  AtomrTensorActor *self = ATOMR_TENSOR_ACTOR (atomr_op_get_actor (op));
  TensorRequest *r = atomr_op_get_data (op);
  guint64 blocks;
  guint grid_y, block_x, block_y;
  gboolean rows, transpose;

  if (atomr_op_is_host (op))
    {
      if (is_complex (r->dtype))
        run_host_complex (r);
      else
        run_host (r);
      return TRUE;
    }
  if (r->plan.n_out == 0)
    return TRUE;

  if (r->kind == KIND_CONTRACT && r->gemm_ok)
    {
      g_autofree gchar *why_not = NULL;
      g_autofree gchar *detail = NULL;
      gboolean ran = FALSE;

      if (r->pack.pack_a || r->pack.pack_b
          ? !contract_packed (self, op, r, &ran, &why_not, error)
          : !contract_gemm (self, op, r, &ran, &why_not, error))
        return FALSE;
      if (ran)
        return TRUE;
      /* the trace says which path ran */
      launch_geometry (r, &blocks, &grid_y, &block_x, &block_y, &rows, &transpose);
      detail = contract_detail (r, rows, why_not);
      atomr_op_set_detail (op, detail);
    }
  return launch_generated (self, op, r, error);
}

/* @r on the generated kernels. */
static gboolean
launch_generated (AtomrTensorActor *self,
                  AtomrOp          *op,
                  TensorRequest    *r,
                  GError          **error)
{
  const AtomrLoopPlan *p = &r->plan;
  gboolean idx32;
  KernelLoops loops;
  CUdeviceptr out, a, b, c;
  Scalars sc;
  guint64 n_out = p->n_out, n_red = p->n_reduce;
  AtomrKernel *kernel;
  void *params[10];
  guint64 blocks, n_batch;
  guint grid, grid_y, block_x, block_y;
  gboolean rows, transpose;

  if (n_out == 0)
    return TRUE;
  idx32 = n_out <= G_MAXUINT32 && n_red <= G_MAXUINT32;
  scalars_init (&sc, r);
  fill_loops (p, &loops);
  out = atomr_tensor_get_ptr (r->t[0]);
  a = atomr_tensor_get_ptr (r->t[1]);
  b = r->t[2] ? atomr_tensor_get_ptr (r->t[2]) : a;
  c = r->t[3] ? atomr_tensor_get_ptr (r->t[3]) : a;

  launch_geometry (r, &blocks, &grid_y, &block_x, &block_y, &rows, &transpose);
  if (blocks > G_MAXINT32)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: %" G_GUINT64_FORMAT " outputs need more than 2^31 blocks",
                   r->kind == KIND_BINARY || r->kind == KIND_PERMUTE ? "elementwise" : "reduce", n_out);
      return FALSE;
    }
  grid = (guint) blocks;
  if (transpose)
    {
      n_batch = n_out / ((guint64) p->extent[p->n_free - 1] * (guint64) p->extent[p->a_inner]);
      kernel = get_kernel (self, r, idx32,
                           use_quads (r) ? "atomr_tensor_transpose4"
                           : use_pairs (r) ? "atomr_tensor_transpose2" : "atomr_tensor_transpose",
                           error);
      if (kernel == NULL)
        return FALSE;
      params[0] = &out;
      params[1] = &a;
      params[2] = scalar_ptr (&sc, 0);
      params[3] = &n_batch;
      params[4] = &loops;
    }
  else if (r->kind == KIND_REDUCE && !rows && r->cols_variant == 'a' && reduce_vec (r, FALSE))
    return reduce_split (self, op, r, idx32, &loops, grid, grid_y, error);
  else if ((r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT) && !rows && grid_y > 1)
    return reduce_two_pass (self, op, r, idx32, &loops, grid, grid_y, error);
  else if (r->kind == KIND_REDUCE && reduce_vec (r, rows))
    {
      kernel = get_kernel (self, r, idx32,
                           !rows ? "atomr_tensor_reduce_cols_vec"
                           : rows_block (r) ? "atomr_tensor_reduce_rows_blk" : "atomr_tensor_reduce_rows_vec",
                           error);
      if (kernel == NULL)
        return FALSE;
      params[0] = &out;
      params[1] = &a;
      params[2] = scalar_ptr (&sc, 0);
      params[3] = scalar_ptr (&sc, 1);
      params[4] = &n_out;
      params[5] = &n_red;
      params[6] = &loops;
    }
  else if (r->kind == KIND_REDUCE || r->kind == KIND_CONTRACT)
    {
      kernel = get_kernel (self, r, idx32, rows ? "atomr_tensor_reduce_rows" : "atomr_tensor_reduce_cols",
                           error);
      if (kernel == NULL)
        return FALSE;
      params[0] = &out;
      params[1] = &a;
      params[2] = &b;
      params[3] = scalar_ptr (&sc, 0);
      params[4] = scalar_ptr (&sc, 1);
      params[5] = &n_out;
      params[6] = &n_red;
      params[7] = &loops;
    }
  else
    {
      kernel = get_kernel (self, r, idx32, "atomr_tensor_elementwise", error);
      if (kernel == NULL)
        return FALSE;
      params[0] = &out;
      params[1] = &a;
      params[2] = &b;
      params[3] = &c;
      params[4] = scalar_ptr (&sc, 0);
      params[5] = scalar_ptr (&sc, 1);
      params[6] = scalar_ptr (&sc, 2);
      params[7] = &n_out;
      params[8] = &loops;
    }
  return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (atomr_kernel_get_function (kernel),
                                                     grid, grid_y, 1, block_x, block_y, 1, 0,
                                                     atomr_op_get_cu_stream (op), params, NULL),
                           "cuLaunchKernel (tensor kernel)", error);
}

gchar *
atomr_tensor_kernel_source (gboolean   reduce,
                            AtomrDtype dtype,
                            guint      n_free,
                            guint      n_loops,
                            gboolean   idx32,
                            gint       op_a,
                            gint       op_b,
                            gint       op_ab,
                            gint       op_c,
                            gint       op_abc,
                            gint       reduce_op)
{
  TensorRequest r;

  memset (&r, 0, sizeof r);
  r.kind = reduce ? (op_ab >= 0 ? KIND_CONTRACT : KIND_REDUCE) : op_ab >= 0 ? KIND_BINARY : KIND_PERMUTE;
  r.n_in = op_ab < 0 ? 1 : op_abc < 0 ? 2 : 3;
  r.op_c = op_c;
  r.op_abc = op_abc;
  r.dtype = dtype;
  r.plan.n_free = n_free;
  r.plan.n_loops = n_loops;
  r.op_a = op_a;
  r.op_b = op_b;
  r.op_ab = op_ab;
  r.reduce = reduce_op;
  return reduce ? reduce_source (&r, idx32) : elementwise_source (&r, idx32);
}

/* ------------------------------------------------------------------ */
/* Validation and planning                                              */

static void
request_clear (gpointer data)
{
  TensorRequest *r = data;

  for (guint i = 0; i < ATOMR_PLAN_MAX_OPERANDS; i++)
    g_clear_object (&r->t[i]);
}

static gchar *
plan_key (Kind kind, const AtomrModeSpec *spec, AtomrTensor **t, guint n)
{
  GString *s = g_string_new (NULL);

  g_string_append_printf (s, "%d", kind);
  for (guint o = 0; o < n; o++)
    {
      guint nd = atomr_tensor_get_n_dims (t[o]);

      g_string_append_printf (s, "|%s:", spec->modes[o]);
      for (guint d = 0; d < nd; d++)
        g_string_append_printf (s, "%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT ",",
                                atomr_tensor_get_dim (t[o], d), atomr_tensor_get_stride (t[o], d));
    }
  return g_string_free (s, FALSE);
}

/* The permutations that pack the inputs a GEMM plan copies (plain
 * loop plans from each input to its contiguous packed layout). */
static gboolean
pack_plans (const AtomrModeSpec    *spec,
            const AtomrPlanOperand *operands,
            CachedPlan             *cached,
            GError                **error)
{
  const AtomrGemmPack *pk = &cached->pack;

  for (guint i = 0; i < 2; i++)
    {
      gboolean packed = i == 0 ? pk->pack_a : pk->pack_b;
      const gchar *names[] = { i == 0 ? "packed a" : "packed b", i == 0 ? "a" : "b" };
      AtomrModeSpec ps;
      AtomrPlanOperand ops[2];

      if (!packed)
        continue;
      memset (&ps, 0, sizeof ps);
      ps.n_inputs = 1;
      memcpy (ps.modes[0], i == 0 ? pk->modes_a : pk->modes_b, sizeof ps.modes[0]);
      memcpy (ps.modes[1], spec->modes[1 + i], sizeof ps.modes[1]);
      ops[0].n_dims = i == 0 ? pk->n_a : pk->n_b;
      ops[0].shape = i == 0 ? pk->shape_a : pk->shape_b;
      ops[0].strides = i == 0 ? pk->strides_a : pk->strides_b;
      ops[1] = operands[1 + i];
      if (!atomr_loop_plan_build ("contract", &ps, ops, names, FALSE, &cached->pack_plan[i], error))
        return FALSE;
    }
  return TRUE;
}

/* Checks @t (output first, then inputs; NULL-terminated @names), the
 * dtypes and the modes, and plans.  Fills r->plan, r->dtype and r->t. */
static gboolean
prepare (AtomrTensorActor  *self,
         const gchar       *opname,
         Kind               kind,
         const gchar       *modes,
         AtomrTensor      **t,
         const gchar      **names,
         guint              n_inputs,
         TensorRequest     *r,
         GError           **error)
{
  AtomrDevice *device = atomr_actor_get_device (ATOMR_ACTOR (self));
  AtomrModeSpec spec;
  AtomrPlanOperand operands[ATOMR_PLAN_MAX_OPERANDS];
  CachedPlan cached;
  AtomrDtype dtype;
  g_autofree gchar *key = NULL;
  gboolean allowed = FALSE;

  for (guint o = 0; o <= n_inputs; o++)
    {
      g_autofree gchar *what = g_strdup_printf ("%s: %s", opname, names[o]);
      if (!atomr_tensor_check (t[o], device, what, error))
        return FALSE;
    }
  dtype = atomr_tensor_get_dtype (t[0]);
  for (guint i = 0; i < G_N_ELEMENTS (tensor_dtypes); i++)
    allowed |= tensor_dtypes[i] == dtype;
  if (!allowed)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "%s: %s has dtype %s; the tensor engine supports f16, bf16, f32, f64, c64 and c128",
                   opname, names[0], atomr_dtype_get_name (dtype));
      return FALSE;
    }
  for (guint o = 1; o <= n_inputs; o++)
    if (atomr_tensor_get_dtype (t[o]) != dtype)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "%s: %s has dtype %s but %s has %s (all operands share one dtype)",
                     opname, names[o], atomr_dtype_get_name (atomr_tensor_get_dtype (t[o])),
                     names[0], atomr_dtype_get_name (dtype));
        return FALSE;
      }
  if (!atomr_mode_spec_parse (opname, modes, n_inputs, &spec, error))
    return FALSE;

  key = plan_key (kind, &spec, t, n_inputs + 1);
  if (!atomr_plan_cache_lookup (self->plans, key, &cached))
    {
      memset (&cached, 0, sizeof cached);
      for (guint o = 0; o <= n_inputs; o++)
        {
          operands[o].n_dims = atomr_tensor_get_n_dims (t[o]);
          operands[o].shape = atomr_tensor_get_shape (t[o], NULL);
          operands[o].strides = atomr_tensor_get_strides (t[o], NULL);
        }
      if (!atomr_loop_plan_build (opname, &spec, operands, names,
                                  kind == KIND_REDUCE || kind == KIND_CONTRACT, &cached.loop, error))
        return FALSE;
      if (kind == KIND_CONTRACT)
        {
          g_autoptr(GError) local = NULL;

          cached.gemm_ok = atomr_gemm_plan_build_packed (&spec, operands, &cached.gemm, &cached.pack,
                                                         cached.why, sizeof cached.why);
          /* cannot fail for operands that planned above; if it did, the
           * kernels serve the contraction */
          if (cached.gemm_ok && !pack_plans (&spec, operands, &cached, &local))
            {
              cached.gemm_ok = FALSE;
              g_snprintf (cached.why, sizeof cached.why, "packing: %s", local->message);
            }
        }
      atomr_plan_cache_insert (self->plans, key, &cached);
    }
  r->plan = cached.loop;
  r->gemm_ok = cached.gemm_ok;
  r->gemm = cached.gemm;
  r->pack = cached.pack;
  memcpy (r->pack_plan, cached.pack_plan, sizeof r->pack_plan);
  memcpy (r->why, cached.why, sizeof r->why);

  r->kind = kind;
  r->n_in = n_inputs;
  r->dtype = dtype;
  r->cols_variant = (gchar) g_atomic_int_get (&self->cols_variant);
  r->n_sms = device != NULL ? (guint) MAX (atomr_device_get_multiprocessor_count (device), 1) : 1;
  for (guint o = 0; o <= n_inputs; o++)
    r->t[o] = g_object_ref (t[o]);
  return TRUE;
}

static gboolean
check_finite (const gchar *opname, const gchar *what, gdouble v, GError **error)
{
  if (isfinite (v))
    return TRUE;
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "%s: %s is %g (must be finite)", opname, what, v);
  return FALSE;
}

/* The compute types an f32 contraction can take. */
static gboolean
check_compute (const gchar *opname, const TensorRequest *r, GError **error)
{
  if (r->dtype == ATOMR_DTYPE_F32 &&
      (r->compute == ATOMR_BLAS_COMPUTE_F16 || r->compute == ATOMR_BLAS_COMPUTE_F64))
    {
      g_autoptr(GEnumClass) eclass = g_type_class_ref (ATOMR_TYPE_BLAS_COMPUTE_TYPE);
      GEnumValue *v = g_enum_get_value (eclass, r->compute);

      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: compute-type %s does not apply to f32 operands (f32, f32-pedantic, "
                   "f32-fast-tf32, f32-fast-f16 or f32-fast-bf16)", opname, v ? v->value_nick : "?");
      return FALSE;
    }
  return TRUE;
}

/* The detail of a 16-byte column reduction: the variant's kernel, and
 * whether the reduced index was cut into chunks. */
static const gchar *
cols_vec_detail (gchar variant, gboolean chunked)
{
  switch (variant)
    {
    case 'a': return chunked ? "cols vec16 split-k (a)" : "cols vec16 deep (a)";
    case 'b': return chunked ? "cols vec16 wide two-pass (b)" : "cols vec16 (b)";
    default: return chunked ? "cols vec16 two-pass (c)" : "cols vec16 (c)";
    }
}

static void
tensor_submit (AtomrOp *op, TensorRequest *r, guint n_inputs, gboolean reads_output)
{
  guint64 blocks;
  guint grid_y, block_x, block_y;
  gboolean rows, transpose;

  launch_geometry (r, &blocks, &grid_y, &block_x, &block_y, &rows, &transpose);
  if (r->kind != KIND_CONTRACT || !r->gemm_ok)
    {
      const guint g[3] = { (guint) MIN (blocks, G_MAXUINT), grid_y, 1 }, bl[3] = { block_x, block_y, 1 };
      atomr_op_set_geometry (op, g, bl, 0);
    }
  if (r->kind == KIND_CONTRACT)
    {
      g_autofree gchar *detail = contract_detail (r, rows, r->gemm_ok ? NULL : r->why);
      atomr_op_set_detail (op, detail);
    }
  else
    atomr_op_set_detail (op, r->kind == KIND_REDUCE
                             ? (reduce_vec (r, rows)
                                ? (rows ? (rows_block (r) ? "rows block vec16" : "rows vec16")
                                   : cols_vec_detail (r->cols_variant, grid_y > 1))
                                : (rows ? "rows" : grid_y > 1 ? "cols two-pass" : "cols"))
                             : transpose ? (use_quads (r) ? "transpose 64x64 vec16"
                                            : use_pairs (r) ? "transpose 64x64 pairs" : "transpose")
                             : "elementwise");
  for (guint o = 1; o <= n_inputs; o++)
    atomr_op_read_tensor (op, r->t[o]);
  if (reads_output)
    atomr_op_read_tensor (op, r->t[0]);
  atomr_op_write_tensor (op, r->t[0]);
  atomr_op_set_enqueue (op, tensor_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_tensor_actor_permute_async:
 * @self: an [class@Atomr.TensorActor]
 * @modes: the modes of @a and @b, e.g. `"abc->cab"`: each output mode must
 *   be a mode of @a (or @a has extent 1 there: broadcast)
 * @alpha: scale (finite)
 * @op_a: applied to each element of @a before scaling
 * @a: the input view
 * @b: the output view (may not overlap @a, nor have a zero stride)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @b is written
 * @user_data: data for @callback
 *
 * B = alpha · op_a(A) with the modes of A reordered as the modes of B
 * say.  Fails with %ATOMR_ERROR_INVALID_ARGUMENT naming the argument and
 * value (bad modes, extents that do not match, overlapping views), or
 * %ATOMR_ERROR_NOT_SUPPORTED for a dtype other than f16, bf16, f32, f64,
 * c64 and c128 (or an op a complex dtype does not take).
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_permute_async (AtomrTensorActor    *self,
                                  const gchar         *modes,
                                  gdouble              alpha,
                                  AtomrTensorUnaryOp   op_a,
                                  AtomrTensor         *a,
                                  AtomrTensor         *b,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  const gchar *opname = "permute";
  const gchar *names[] = { "b", "a" };
  AtomrTensor *t[] = { b, a };
  AtomrOp *op;
  TensorRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_tensor_actor_permute_async, cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof *r, request_clear);
  if (!atomr_check_enum (opname, "op_a", op_a, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !check_finite (opname, "alpha", alpha, &error) ||
      !prepare (self, opname, KIND_PERMUTE, modes, t, names, 1, r, &error) ||
      !check_complex_ops (opname, r->dtype, (const gint []) { op_a }, 1, NULL, 0, -1, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("b", b)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("a", a)), &error))
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  r->op_a = op_a;
  tensor_submit (op, r, 1, FALSE);
}

/**
 * atomr_tensor_actor_permute_finish:
 * @self: an [class@Atomr.TensorActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.TensorActor.permute_async].
 *
 * Returns: %TRUE when B was written
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_actor_permute_finish (AtomrTensorActor  *self,
                                   GAsyncResult      *result,
                                   GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_tensor_actor_permute_async, error);
}

/**
 * atomr_tensor_actor_elementwise_binary_async:
 * @self: an [class@Atomr.TensorActor]
 * @modes: the modes of @a, @b and @d, e.g. `"ab,b->ab"`: each output mode
 *   must appear in @a or @b; an input lacking a mode (or with extent 1
 *   there) is broadcast along it
 * @alpha: scale of @a (finite)
 * @op_a: applied to each element of @a before scaling
 * @a: the first input view
 * @beta: scale of @b (finite)
 * @op_b: applied to each element of @b before scaling
 * @b: the second input view
 * @op_ab: how the scaled inputs combine
 * @d: the output view (may not overlap an input, nor have a zero stride)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @d is written
 * @user_data: data for @callback
 *
 * D = op_ab (alpha · op_a(A), beta · op_b(B)), elementwise with
 * broadcasting.  Errors as [method@Atomr.TensorActor.permute_async].
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_elementwise_binary_async (AtomrTensorActor    *self,
                                             const gchar         *modes,
                                             gdouble              alpha,
                                             AtomrTensorUnaryOp   op_a,
                                             AtomrTensor         *a,
                                             gdouble              beta,
                                             AtomrTensorUnaryOp   op_b,
                                             AtomrTensor         *b,
                                             AtomrTensorBinaryOp  op_ab,
                                             AtomrTensor         *d,
                                             GCancellable        *cancellable,
                                             GAsyncReadyCallback  callback,
                                             gpointer             user_data)
{
  const gchar *opname = "elementwise-binary";
  const gchar *names[] = { "d", "a", "b" };
  AtomrTensor *t[] = { d, a, b };
  AtomrOp *op;
  TensorRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_tensor_actor_elementwise_binary_async,
                     cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof *r, request_clear);
  if (!atomr_check_enum (opname, "op_a", op_a, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !atomr_check_enum (opname, "op_b", op_b, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !atomr_check_enum (opname, "op_ab", op_ab, ATOMR_TENSOR_BINARY_MIN + 1, "AtomrTensorBinaryOp", &error) ||
      !check_finite (opname, "alpha", alpha, &error) ||
      !check_finite (opname, "beta", beta, &error) ||
      !prepare (self, opname, KIND_BINARY, modes, t, names, 2, r, &error) ||
      !check_complex_ops (opname, r->dtype, (const gint []) { op_a, op_b }, 2, (const gint []) { op_ab }, 1, -1,
                          &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("d", d)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("a", a),
                                             ATOMR_OPERAND_TENSOR ("b", b)), &error))
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  r->beta = beta;
  r->op_a = op_a;
  r->op_b = op_b;
  r->op_ab = op_ab;
  tensor_submit (op, r, 2, FALSE);
}

/**
 * atomr_tensor_actor_elementwise_binary_finish:
 * @self: an [class@Atomr.TensorActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.TensorActor.elementwise_binary_async].
 *
 * Returns: %TRUE when D was written
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_actor_elementwise_binary_finish (AtomrTensorActor  *self,
                                              GAsyncResult      *result,
                                              GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_tensor_actor_elementwise_binary_async, error);
}

/**
 * atomr_tensor_actor_reduce_async:
 * @self: an [class@Atomr.TensorActor]
 * @modes: the modes of @a and @c, e.g. `"abc->b"`: the modes of @a missing
 *   from @c are reduced; each mode of @c must be a mode of @a
 * @op: how the reduced elements combine
 * @alpha: scale of the reduction (finite)
 * @a: the input view
 * @beta: scale of the old @c (finite; 0: @c is not read, NaN there is
 *   ignored)
 * @c: the output view (may not overlap @a, nor have a zero stride)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @c is written
 * @user_data: data for @callback
 *
 * C = alpha · reduce_op(A over the reduced modes) + beta · C.  Halves
 * accumulate in f32, f32 in f32 (tree-combined partial sums on the GPU)
 * and f64 in f64.  Errors as [method@Atomr.TensorActor.permute_async].
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_reduce_async (AtomrTensorActor    *self,
                                 const gchar         *modes,
                                 AtomrTensorReduceOp  op_kind,
                                 gdouble              alpha,
                                 AtomrTensor         *a,
                                 gdouble              beta,
                                 AtomrTensor         *c,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  const gchar *opname = "reduce";
  const gchar *names[] = { "c", "a" };
  AtomrTensor *t[] = { c, a };
  AtomrOp *op;
  TensorRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_tensor_actor_reduce_async, cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof *r, request_clear);
  if (!atomr_check_enum (opname, "op", op_kind, ATOMR_TENSOR_REDUCE_NORM_INF + 1, "AtomrTensorReduceOp", &error) ||
      !check_finite (opname, "alpha", alpha, &error) ||
      !check_finite (opname, "beta", beta, &error) ||
      !prepare (self, opname, KIND_REDUCE, modes, t, names, 1, r, &error) ||
      !check_complex_ops (opname, r->dtype, NULL, 0, NULL, 0, op_kind, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("c", c)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("a", a)), &error))
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  r->beta = beta;
  r->reduce = op_kind;
  tensor_submit (op, r, 1, beta != 0.0);
}

/**
 * atomr_tensor_actor_reduce_finish:
 * @self: an [class@Atomr.TensorActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.TensorActor.reduce_async].
 *
 * Returns: %TRUE when C was written
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_actor_reduce_finish (AtomrTensorActor  *self,
                                  GAsyncResult      *result,
                                  GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_tensor_actor_reduce_async, error);
}

/**
 * atomr_tensor_actor_elementwise_trinary_async:
 * @self: an [class@Atomr.TensorActor]
 * @modes: the modes of @a, @b, @c and @d, e.g. `"ab,b,a->ab"`: each output
 *   mode must appear in some input; an input lacking a mode (or with
 *   extent 1 there) is broadcast along it
 * @alpha: scale of @a (finite)
 * @op_a: applied to each element of @a before scaling
 * @a: the first input view
 * @beta: scale of @b (finite)
 * @op_b: applied to each element of @b before scaling
 * @b: the second input view
 * @gamma: scale of @c (finite)
 * @op_c: applied to each element of @c before scaling
 * @c: the third input view
 * @op_ab: how the scaled @a and @b combine
 * @op_abc: how that result and the scaled @c combine
 * @d: the output view (may not overlap an input, nor have a zero stride)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @d is written
 * @user_data: data for @callback
 *
 * D = op_abc (op_ab (alpha · op_a(A), beta · op_b(B)), gamma · op_c(C)),
 * elementwise with broadcasting (cuTENSOR's elementwiseTrinary).  Errors
 * as [method@Atomr.TensorActor.permute_async].
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_elementwise_trinary_async (AtomrTensorActor    *self,
                                              const gchar         *modes,
                                              gdouble              alpha,
                                              AtomrTensorUnaryOp   op_a,
                                              AtomrTensor         *a,
                                              gdouble              beta,
                                              AtomrTensorUnaryOp   op_b,
                                              AtomrTensor         *b,
                                              gdouble              gamma,
                                              AtomrTensorUnaryOp   op_c,
                                              AtomrTensor         *c,
                                              AtomrTensorBinaryOp  op_ab,
                                              AtomrTensorBinaryOp  op_abc,
                                              AtomrTensor         *d,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data)
{
  const gchar *opname = "elementwise-trinary";
  const gchar *names[] = { "d", "a", "b", "c" };
  AtomrTensor *t[] = { d, a, b, c };
  AtomrOp *op;
  TensorRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_tensor_actor_elementwise_trinary_async,
                     cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof *r, request_clear);
  if (!atomr_check_enum (opname, "op_a", op_a, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !atomr_check_enum (opname, "op_b", op_b, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !atomr_check_enum (opname, "op_c", op_c, ATOMR_TENSOR_UNARY_CONJ + 1, "AtomrTensorUnaryOp", &error) ||
      !atomr_check_enum (opname, "op_ab", op_ab, ATOMR_TENSOR_BINARY_MIN + 1, "AtomrTensorBinaryOp", &error) ||
      !atomr_check_enum (opname, "op_abc", op_abc, ATOMR_TENSOR_BINARY_MIN + 1, "AtomrTensorBinaryOp", &error) ||
      !check_finite (opname, "alpha", alpha, &error) ||
      !check_finite (opname, "beta", beta, &error) ||
      !check_finite (opname, "gamma", gamma, &error) ||
      !prepare (self, opname, KIND_BINARY, modes, t, names, 3, r, &error) ||
      !check_complex_ops (opname, r->dtype, (const gint []) { op_a, op_b, op_c }, 3,
                          (const gint []) { op_ab, op_abc }, 2, -1, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("d", d)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("a", a),
                                             ATOMR_OPERAND_TENSOR ("b", b),
                                             ATOMR_OPERAND_TENSOR ("c", c)), &error))
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  r->beta = beta;
  r->gamma = gamma;
  r->op_a = op_a;
  r->op_b = op_b;
  r->op_c = op_c;
  r->op_ab = op_ab;
  r->op_abc = op_abc;
  tensor_submit (op, r, 3, FALSE);
}

/**
 * atomr_tensor_actor_elementwise_trinary_finish:
 * @self: an [class@Atomr.TensorActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.TensorActor.elementwise_trinary_async].
 *
 * Returns: %TRUE when D was written
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_actor_elementwise_trinary_finish (AtomrTensorActor  *self,
                                               GAsyncResult      *result,
                                               GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_tensor_actor_elementwise_trinary_async, error);
}

/**
 * atomr_tensor_actor_contract_async:
 * @self: an [class@Atomr.TensorActor]
 * @modes: the modes of @a, @b and @d, e.g. `"mk,kn->mn"` or
 *   `"bhqd,bhkd->bhqk"`: the input modes missing from @d are contracted
 *   (summed over); each mode of @d must appear in @a or @b
 * @alpha: scale of the contraction (finite)
 * @a: the first input view
 * @b: the second input view
 * @beta: scale of the old @d (finite; 0: @d is not read)
 * @d: the output view (may not overlap an input, nor have a zero stride)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when @d is written
 * @user_data: data for @callback
 *
 * D = alpha · Σ A·B + beta · D, the sum over the contracted modes.
 *
 * A contraction that is one (strided-batched) GEMM without copies — every
 * mode in two of the three operands, each group of batch, M, N and K
 * modes folding into one stride, a unit stride in D's M or N modes and in
 * one matrix mode of each input — runs as one cuBLASLt matmul with
 * f32 accumulation for halves, f64 for f64 and
 * [property@Atomr.TensorActor:compute-type] for f32 (TF32 on request).
 * When only an input's layout stands in the way (modes that do not fold,
 * no unit stride, a negative stride), that input is first copied into a
 * contiguous scratch operand in GEMM order ("packed").  Any other
 * contraction, or one cuBLASLt has no algorithm for, runs on the
 * generated reduction kernels (f32 accumulation for halves).  The
 * operation's detail in traces and [struct@Atomr.LaunchInfo] says which path
 * ran: `"cublaslt gemm m=… n=… k=… batch=… [packed a|b|a+b]"` or
 * `"nvrtc rows|cols (why)"`.
 *
 * Errors as [method@Atomr.TensorActor.permute_async]; a
 * [property@Atomr.TensorActor:compute-type] of f16 or f64 with f32
 * operands fails with %ATOMR_ERROR_INVALID_ARGUMENT.
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_contract_async (AtomrTensorActor    *self,
                                   const gchar         *modes,
                                   gdouble              alpha,
                                   AtomrTensor         *a,
                                   AtomrTensor         *b,
                                   gdouble              beta,
                                   AtomrTensor         *d,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  const gchar *opname = "contract";
  const gchar *names[] = { "d", "a", "b" };
  AtomrTensor *t[] = { d, a, b };
  AtomrOp *op;
  TensorRequest *r;
  GError *error = NULL;

  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  op = atomr_op_new (self, opname, atomr_tensor_actor_contract_async, cancellable, callback, user_data);
  r = atomr_op_alloc_data (op, sizeof *r, request_clear);
  r->compute = g_atomic_int_get (&self->compute);
  if (!check_finite (opname, "alpha", alpha, &error) ||
      !check_finite (opname, "beta", beta, &error) ||
      !prepare (self, opname, KIND_CONTRACT, modes, t, names, 2, r, &error) ||
      !check_compute (opname, r, &error) ||
      !atomr_check_no_alias (opname, ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("d", d)),
                             ATOMR_OPERANDS (ATOMR_OPERAND_TENSOR ("a", a),
                                             ATOMR_OPERAND_TENSOR ("b", b)), &error))
    return atomr_op_fail (op, error);
  r->alpha = alpha;
  r->beta = beta;
  r->reduce = ATOMR_TENSOR_REDUCE_SUM;
  tensor_submit (op, r, 2, beta != 0.0);
}

/**
 * atomr_tensor_actor_contract_finish:
 * @self: an [class@Atomr.TensorActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.TensorActor.contract_async].
 *
 * Returns: %TRUE when D was written
 *
 * Since: 0.2
 */
gboolean
atomr_tensor_actor_contract_finish (AtomrTensorActor  *self,
                                    GAsyncResult      *result,
                                    GError           **error)
{
  return atomr_op_finish_boolean (self, result, atomr_tensor_actor_contract_async, error);
}

/* ------------------------------------------------------------------ */
/* Plan cache                                                           */

/**
 * atomr_tensor_actor_get_plan_cache_capacity:
 * @self: an [class@Atomr.TensorActor]
 *
 * Gets how many plans the actor keeps.
 *
 * This is the value of the [property@Atomr.TensorActor:plan-cache-capacity] property.
 *
 * Returns: how many plans the actor keeps
 *
 * Since: 0.2
 */
guint
atomr_tensor_actor_get_plan_cache_capacity (AtomrTensorActor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR_ACTOR (self), 0);
  return atomr_plan_cache_get_capacity (self->plans);
}

/**
 * atomr_tensor_actor_set_plan_cache_capacity:
 * @self: an [class@Atomr.TensorActor]
 * @capacity: how many plans to keep (at least 1; 0 is taken as 1)
 *
 * Sets [property@Atomr.TensorActor:plan-cache-capacity]; the least recently used
 * plans beyond it are dropped.  Any thread.
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_set_plan_cache_capacity (AtomrTensorActor *self,
                                            guint             capacity)
{
  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  capacity = MAX (capacity, 1);
  if (capacity == atomr_plan_cache_get_capacity (self->plans))
    return;
  atomr_plan_cache_set_capacity (self->plans, capacity);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PLAN_CACHE_CAPACITY]);
}

/**
 * atomr_tensor_actor_get_plan_cache_stats:
 * @self: an [class@Atomr.TensorActor]
 * @hits: (out) (optional): requests served by a cached plan
 * @misses: (out) (optional): requests that planned afresh
 * @evictions: (out) (optional): plans dropped for the capacity
 * @size: (out) (optional): plans held now
 *
 * The counters of the actor's plan cache.  Any thread.
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_get_plan_cache_stats (AtomrTensorActor *self,
                                         guint64          *hits,
                                         guint64          *misses,
                                         guint64          *evictions,
                                         guint            *size)
{
  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  atomr_plan_cache_get_stats (self->plans, hits, misses, evictions, size);
}

/**
 * atomr_tensor_actor_get_compute_type:
 * @self: an [class@Atomr.TensorActor]
 *
 * Gets [property@Atomr.TensorActor:compute-type].  Any thread.
 *
 * Returns: how f32 contractions compute on cuBLASLt
 *
 * Since: 0.2
 */
AtomrBlasComputeType
atomr_tensor_actor_get_compute_type (AtomrTensorActor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR_ACTOR (self), ATOMR_BLAS_COMPUTE_DEFAULT);
  return (AtomrBlasComputeType) g_atomic_int_get (&self->compute);
}

/**
 * atomr_tensor_actor_set_compute_type:
 * @self: an [class@Atomr.TensorActor]
 * @compute_type: how f32 contractions compute on cuBLASLt
 *
 * Sets [property@Atomr.TensorActor:compute-type]; requests submitted
 * afterwards use it.  Any thread.
 *
 * Since: 0.2
 */
void
atomr_tensor_actor_set_compute_type (AtomrTensorActor     *self,
                                     AtomrBlasComputeType  compute_type)
{
  g_return_if_fail (ATOMR_IS_TENSOR_ACTOR (self));
  g_return_if_fail ((guint) compute_type <= ATOMR_BLAS_COMPUTE_F64);
  if (g_atomic_int_exchange (&self->compute, (gint) compute_type) != (gint) compute_type)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPUTE_TYPE]);
}

/* ------------------------------------------------------------------ */
/* GObject                                                              */

static void
atomr_tensor_actor_teardown (AtomrActor *actor,
                             gboolean    context_alive)
{
  AtomrTensorActor *self = ATOMR_TENSOR_ACTOR (actor);

  /* kernels of the old generation are stale; drop them (they unload
   * their modules only while their context lives) */
  if (self->kernels != NULL)
    g_hash_table_remove_all (self->kernels);
  /* the cuBLASLt plans are host objects and stay; handle and workspace
   * belong to the context */
  if (context_alive)
    {
      if (self->lt_workspace)
        ATOMR_CU->cuMemFreeAsync (self->lt_workspace, atomr_actor_get_cu_stream (actor));
      if (self->lt)
        cublasLtDestroy (self->lt);
    }
  self->lt_workspace = 0;
  self->lt = NULL;
}

static void
atomr_tensor_actor_finalize (GObject *object)
{
  AtomrTensorActor *self = ATOMR_TENSOR_ACTOR (object);

  g_clear_pointer (&self->kernels, g_hash_table_unref);
  g_clear_pointer (&self->lt_plans, g_hash_table_unref);
  g_clear_pointer (&self->plans, atomr_plan_cache_free);
  G_OBJECT_CLASS (atomr_tensor_actor_parent_class)->finalize (object);
}

static void
atomr_tensor_actor_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  AtomrTensorActor *self = ATOMR_TENSOR_ACTOR (object);

  switch (prop_id)
    {
    case PROP_PLAN_CACHE_CAPACITY:
      g_value_set_uint (value, atomr_plan_cache_get_capacity (self->plans));
      break;
    case PROP_COMPUTE_TYPE:
      g_value_set_enum (value, atomr_tensor_actor_get_compute_type (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_tensor_actor_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  AtomrTensorActor *self = ATOMR_TENSOR_ACTOR (object);

  switch (prop_id)
    {
    case PROP_PLAN_CACHE_CAPACITY:
      atomr_tensor_actor_set_plan_cache_capacity (self, g_value_get_uint (value));
      break;
    case PROP_COMPUTE_TYPE:
      atomr_tensor_actor_set_compute_type (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_tensor_actor_class_init (AtomrTensorActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_tensor_actor_finalize;
  object_class->get_property = atomr_tensor_actor_get_property;
  object_class->set_property = atomr_tensor_actor_set_property;
  actor_class->library = "tensor";
  actor_class->teardown = atomr_tensor_actor_teardown;

  /**
   * AtomrTensorActor:plan-cache-capacity:
   *
   * How many plans (operation, modes, shapes, strides) the actor keeps in
   * its LRU cache.
   *
   * Since: 0.2
   */
  properties[PROP_PLAN_CACHE_CAPACITY] =
    g_param_spec_uint ("plan-cache-capacity", NULL, NULL, 1, G_MAXUINT, DEFAULT_PLAN_CACHE_CAPACITY,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  /**
   * AtomrTensorActor:compute-type:
   *
   * How f32 contractions that run on cuBLASLt compute: the default (and
   * %ATOMR_BLAS_COMPUTE_F32) is full f32, %ATOMR_BLAS_COMPUTE_F32_FAST_TF32
   * opts in to TF32 tensor cores (about 10 mantissa bits per product),
   * %ATOMR_BLAS_COMPUTE_F32_PEDANTIC, %ATOMR_BLAS_COMPUTE_F32_FAST_F16 and
   * %ATOMR_BLAS_COMPUTE_F32_FAST_BF16 as in cuBLASLt.  Halves always
   * accumulate in f32 and f64 in f64; the generated kernels always compute
   * in full f32.  Read when a contraction is submitted.
   *
   * Since: 0.2
   */
  properties[PROP_COMPUTE_TYPE] =
    g_param_spec_enum ("compute-type", NULL, NULL, ATOMR_TYPE_BLAS_COMPUTE_TYPE, ATOMR_BLAS_COMPUTE_DEFAULT,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/* The column-reduction variant an actor starts with: the tuning knob
 * ATOMR_TENSOR_COLS_VARIANT (a, b or c; anything else is ignored), or
 * COLS_DEFAULT_VARIANT. */
#define COLS_DEFAULT_VARIANT 'a'

static gchar
cols_variant_from_env (void)
{
  const gchar *v = g_getenv ("ATOMR_TENSOR_COLS_VARIANT");

  if (v != NULL && (g_str_equal (v, "a") || g_str_equal (v, "b") || g_str_equal (v, "c")))
    return v[0];
  return COLS_DEFAULT_VARIANT;
}

gboolean
atomr_tensor_actor_set_cols_variant (AtomrTensorActor *self,
                                     gchar             variant)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR_ACTOR (self), FALSE);
  if (variant != 'a' && variant != 'b' && variant != 'c')
    return FALSE;
  g_atomic_int_set (&self->cols_variant, variant);
  return TRUE;
}

gchar
atomr_tensor_actor_get_cols_variant (AtomrTensorActor *self)
{
  g_return_val_if_fail (ATOMR_IS_TENSOR_ACTOR (self), 0);
  return (gchar) g_atomic_int_get (&self->cols_variant);
}

static void
atomr_tensor_actor_init (AtomrTensorActor *self)
{
  self->cols_variant = cols_variant_from_env ();
  self->plans = atomr_plan_cache_new (DEFAULT_PLAN_CACHE_CAPACITY, sizeof (CachedPlan));
  self->lt_plans = g_hash_table_new_full (lt_key_hash, lt_key_equal, NULL, lt_plan_free);
  self->kernels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * atomr_tensor_actor_new:
 * @device: the device
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates a tensor actor with its own stream, bound to the calling
 * thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.2
 */
AtomrTensorActor *
atomr_tensor_actor_new (AtomrDevice  *device,
                        GError      **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  return atomr_actor_new_internal (ATOMR_TYPE_TENSOR_ACTOR, device, NULL, error);
}
