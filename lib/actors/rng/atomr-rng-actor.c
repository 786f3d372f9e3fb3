/* atomr-rng-actor.c — cuRAND on an actor
 *
 * One generator per actor, bound to the actor's stream.  Seed, offset and
 * Sobol dimensions are captured by each fill when it is called, so a fill
 * sees the settings made before it whatever the timing of the actor's
 * context; setting any of them restarts the sequence, which makes runs
 * with a fixed seed reproducible.  After a context rebuild the generator
 * is made again and restarts from the seed and offset.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>

#include "atomr-curand-table-private.h"

#include "actors/atomr-library-private.h"
#include "atomr-enum-types.h"
#include "atomr-rng-actor.h"
#include "atomr-rng-kernels-ptx.h"
#include "core/atomr-tensor-private.h"

#define DEFAULT_SEED 0x5eedULL

struct _AtomrRngActor
{
  AtomrActor        parent_instance;

  AtomrRngKind      kind;       /* construct-only */

  /* Settings, from any thread. */
  GMutex            lock;
  guint64           seed;
  guint64           offset;
  guint             dimensions;
  guint             epoch;      /* bumped by every setting */

  /* On the actor's context. */
  curandGenerator_t generator;
  gboolean          has_generator;
  CUmodule          module;     /* the transform kernel, loaded on first use */
  CUfunction        transform;
  gint64            applied_epoch; /* -1: nothing applied yet */
};

/**
 * AtomrRngActor:
 *
 * An actor that fills buffers and tensors with cuRAND random numbers.
 *
 * Each actor owns one generator of the [enum@Atomr.RngKind] given at
 * construction, bound to its stream.  The seed, offset and (for Sobol
 * generators) dimensions are captured by every fill when it is called;
 * changing any of them restarts the sequence, so a run with a fixed seed
 * is reproducible.  [method@Atomr.RngActor.fill_async] fills a whole
 * buffer with values of an [enum@Atomr.RngDistribution],
 * [method@Atomr.RngActor.fill_range_async] a range of its elements and
 * [method@Atomr.RngActor.fill_tensor_async] a tensor view.  libcurand is
 * loaded when the first fill needs it.
 *
 * Since: 0.1
 */
G_DEFINE_FINAL_TYPE (AtomrRngActor, atomr_rng_actor, ATOMR_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_KIND,
  PROP_SEED,
  PROP_OFFSET,
  PROP_DIMENSIONS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const gchar *
curand_status_name (curandStatus_t s)
{
  switch (s)
    {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
    default: return NULL;
    }
}

static gboolean
curand_check (curandStatus_t   s,
              const gchar     *call,
              GError         **error)
{
  return atomr_library_check (s == CURAND_STATUS_SUCCESS, "curand", call, curand_status_name (s), s,
                              s == CURAND_STATUS_ALLOCATION_FAILED,
                              s == CURAND_STATUS_ARCH_MISMATCH ||
                              s == CURAND_STATUS_DOUBLE_PRECISION_REQUIRED, error);
}

static curandRngType_t
curand_kind (AtomrRngKind kind)
{
  switch (kind)
    {
    case ATOMR_RNG_MRG32K3A: return CURAND_RNG_PSEUDO_MRG32K3A;
    case ATOMR_RNG_PHILOX: return CURAND_RNG_PSEUDO_PHILOX4_32_10;
    case ATOMR_RNG_MTGP32: return CURAND_RNG_PSEUDO_MTGP32;
    case ATOMR_RNG_SOBOL: return CURAND_RNG_QUASI_SOBOL32;
    case ATOMR_RNG_XORWOW:
    default: return CURAND_RNG_PSEUDO_XORWOW;
    }
}

static gboolean
create_generator (AtomrRngActor  *self,
                  GError        **error)
{
  if (!curand_check (curandCreateGenerator (&self->generator, curand_kind (self->kind)),
                     "curandCreateGenerator", error))
    return FALSE;
  if (!curand_check (curandSetStream (self->generator,
                                      (cudaStream_t) atomr_actor_get_cu_stream (ATOMR_ACTOR (self))),
                     "curandSetStream", error))
    {
      curandDestroyGenerator (self->generator);
      return FALSE;
    }
  self->has_generator = TRUE;
  self->applied_epoch = -1;
  return TRUE;
}

static gboolean
rng_setup (AtomrActor  *actor,
           GError     **error)
{
  if (atomr_device_is_host (atomr_actor_get_device (actor)))
    return TRUE;
  if (!atomr_curand_load (error))
    return FALSE;
  return create_generator (ATOMR_RNG_ACTOR (actor), error);
}

static void
rng_teardown (AtomrActor *actor,
              gboolean    context_alive)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (actor);

  if (self->has_generator && context_alive)
    curandDestroyGenerator (self->generator);
  if (self->module && context_alive)
    ATOMR_CU->cuModuleUnload (self->module);
  self->module = NULL;
  self->transform = NULL;
  self->has_generator = FALSE;
  self->applied_epoch = -1;
}

typedef struct {
  AtomrBuffer          *buffer;   /* kept by the op */
  guint64               first;    /* the elements filled: [first, first + count) */
  guint64               count;
  AtomrRngDistribution  distribution;
  gdouble               param1;
  gdouble               param2;
  guint64               seed;
  guint64               offset;
  guint                 dimensions;
  guint                 epoch;
} FillRequest;

static gboolean
apply_settings (AtomrRngActor  *self,
                FillRequest    *req,
                GError        **error)
{
  if (!self->has_generator && !create_generator (self, error))
    return FALSE;
  if (self->applied_epoch == (gint64) req->epoch)
    return TRUE;
  /* cuRAND does not restart a used generator when it is given the seed
   * it already has: a new generator is the only sure restart.  Settings
   * change rarely, so this stays off the hot path. */
  if (self->applied_epoch != -1)
    {
      curandDestroyGenerator (self->generator);
      self->has_generator = FALSE;
      if (!create_generator (self, error))
        return FALSE;
    }
  if (self->kind == ATOMR_RNG_SOBOL)
    {
      if (!curand_check (curandSetQuasiRandomGeneratorDimensions (self->generator, req->dimensions),
                         "curandSetQuasiRandomGeneratorDimensions", error))
        return FALSE;
    }
  else if (!curand_check (curandSetPseudoRandomGeneratorSeed (self->generator, req->seed),
                          "curandSetPseudoRandomGeneratorSeed", error))
    return FALSE;
  if (self->kind != ATOMR_RNG_MTGP32 &&
      !curand_check (curandSetGeneratorOffset (self->generator, req->offset),
                     "curandSetGeneratorOffset", error))
    return FALSE;
  self->applied_epoch = req->epoch;
  return TRUE;
}

/* Keep in sync with atomr-rng-kernels.cu. */
enum { SRC_F32, SRC_F64, SRC_U32 };
enum { DST_F32, DST_F64, DST_F16, DST_BF16, DST_U8, DST_I32, DST_I64, DST_U32 };
enum { OP_COPY, OP_RANGE, OP_EXPONENTIAL, OP_BERNOULLI, OP_INTEGER };

static gint
dst_kind (AtomrDtype dtype)
{
  switch (dtype)
    {
    case ATOMR_DTYPE_F64: return DST_F64;
    case ATOMR_DTYPE_F16: return DST_F16;
    case ATOMR_DTYPE_BF16: return DST_BF16;
    case ATOMR_DTYPE_U8: return DST_U8;
    case ATOMR_DTYPE_I32: return DST_I32;
    case ATOMR_DTYPE_I64: return DST_I64;
    case ATOMR_DTYPE_U32: return DST_U32;
    case ATOMR_DTYPE_F32:
    default: return DST_F32;
    }
}

static gboolean
load_transform (AtomrRngActor  *self,
                GError        **error)
{
  if (self->transform)
    return TRUE;
  if (!atomr_cuda_check (ATOMR_CU->cuModuleLoadData (&self->module, atomr_rng_kernels_ptx),
                         "cuModuleLoadData (RNG transform kernel)", error))
    {
      self->module = NULL;
      return FALSE;
    }
  if (!atomr_cuda_check (ATOMR_CU->cuModuleGetFunction (&self->transform, self->module,
                                                         "atomr_rng_transform"),
                         "cuModuleGetFunction (atomr_rng_transform)", error))
    {
      ATOMR_CU->cuModuleUnload (self->module);
      self->module = NULL;
      self->transform = NULL;
      return FALSE;
    }
  return TRUE;
}

static gboolean
launch_transform (AtomrRngActor  *self,
                  CUstream        stream,
                  CUdeviceptr     src,
                  gint            src_kind,
                  CUdeviceptr     dst,
                  gint            dst_kind_,
                  gint            op,
                  guint64         n,
                  gdouble         p1,
                  gdouble         p2,
                  GError        **error)
{
  unsigned long long count = n;
  guint blocks = (guint) MIN ((n + 255) / 256, 8192);
  void *params[] = { &src, &dst, &count, &src_kind, &dst_kind_, &op, &p1, &p2 };

  if (!load_transform (self, error))
    return FALSE;
  return atomr_cuda_check (ATOMR_CU->cuLaunchKernel (self->transform, MAX (blocks, 1), 1, 1, 256, 1, 1,
                                                     0, stream, params, NULL),
                           "cuLaunchKernel (atomr_rng_transform)", error);
}

/* One cuRAND call into @ptr: @n values of the source the distribution
 * draws from (uniform or normal floats, raw words, Poisson counts). */
static curandStatus_t
generate (AtomrRngActor *self,
          FillRequest   *req,
          gpointer       ptr,
          gboolean       dbl,
          gsize          n)
{
  switch (req->distribution)
    {
    case ATOMR_RNG_NORMAL:
      return dbl ? curandGenerateNormalDouble (self->generator, ptr, n, req->param1, req->param2)
                 : curandGenerateNormal (self->generator, ptr, n, (float) req->param1, (float) req->param2);
    case ATOMR_RNG_LOG_NORMAL:
      return dbl ? curandGenerateLogNormalDouble (self->generator, ptr, n, req->param1, req->param2)
                 : curandGenerateLogNormal (self->generator, ptr, n, (float) req->param1, (float) req->param2);
    case ATOMR_RNG_POISSON:
      return curandGeneratePoisson (self->generator, ptr, n, req->param1);
    case ATOMR_RNG_INTEGER:
      return curandGenerate (self->generator, ptr, n);
    case ATOMR_RNG_UNIFORM:
      if (atomr_buffer_get_dtype (req->buffer) == ATOMR_DTYPE_U32)
        return curandGenerate (self->generator, ptr, n);
      G_GNUC_FALLTHROUGH;
    case ATOMR_RNG_EXPONENTIAL:
    case ATOMR_RNG_UNIFORM_RANGE:
    case ATOMR_RNG_BERNOULLI:
    default:
      return dbl ? curandGenerateUniformDouble (self->generator, ptr, n)
                 : curandGenerateUniform (self->generator, ptr, n);
    }
}

static gboolean
fill_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (atomr_op_get_actor (op));
  FillRequest *req = atomr_op_get_data (op);
  AtomrDtype dtype = atomr_buffer_get_dtype (req->buffer);
  gsize size = atomr_dtype_get_size (dtype);
  CUstream stream = atomr_op_get_cu_stream (op);
  CUdeviceptr dst = atomr_buffer_get_ptr (req->buffer) + req->first * size;
  gboolean dbl = dtype == ATOMR_DTYPE_F64;
  gboolean pairs = (req->distribution == ATOMR_RNG_NORMAL || req->distribution == ATOMR_RNG_LOG_NORMAL) &&
                   self->kind != ATOMR_RNG_SOBOL;
  gint src_kind, op_kind;
  gboolean direct, ok;
  CUdeviceptr scratch = 0;
  gsize gen_n = req->count;

  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "rng fill: cuRAND needs a CUDA device; %s is the host test device",
                   atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self))));
      return FALSE;
    }
  if (!apply_settings (self, req, error))
    return FALSE;

  switch (req->distribution)
    {
    case ATOMR_RNG_EXPONENTIAL: op_kind = OP_EXPONENTIAL; break;
    case ATOMR_RNG_UNIFORM_RANGE: op_kind = OP_RANGE; break;
    case ATOMR_RNG_BERNOULLI: op_kind = OP_BERNOULLI; break;
    case ATOMR_RNG_INTEGER: op_kind = OP_INTEGER; break;
    default: op_kind = OP_COPY; break;
    }
  src_kind = (req->distribution == ATOMR_RNG_INTEGER || req->distribution == ATOMR_RNG_POISSON ||
              dtype == ATOMR_DTYPE_U32) ? SRC_U32 : dbl ? SRC_F64 : SRC_F32;

  /* cuRAND writes straight into the buffer when it draws the buffer's own
   * dtype (a transform then runs in place); otherwise it draws into a
   * stream-ordered scratch buffer that the transform converts.  Pairs of
   * normals go to scratch when the range starts at an odd element, to keep
   * cuRAND's 8-byte (16-byte) alignment. */
  direct = (src_kind == SRC_F32 && dtype == ATOMR_DTYPE_F32) || (src_kind == SRC_F64 && dbl) ||
           (src_kind == SRC_U32 && (dtype == ATOMR_DTYPE_U32 || dtype == ATOMR_DTYPE_I32));
  if ((pairs && req->first % 2 != 0) || dst % 16 != 0)
    direct = FALSE;   /* cuRAND may write 2 or 4 values at once */
  if (!direct)
    {
      gsize src_size = src_kind == SRC_F64 ? 8 : 4;
      if (pairs)
        gen_n += gen_n % 2;
      if (!atomr_cuda_check (ATOMR_CU->cuMemAllocAsync (&scratch, gen_n * src_size, stream),
                             "cuMemAllocAsync (RNG scratch)", error))
        return FALSE;
    }

  ok = curand_check (generate (self, req, (gpointer) (guintptr) (direct ? dst : scratch),
                               src_kind == SRC_F64, gen_n),
                     "curandGenerate", error);
  if (ok && (!direct || op_kind != OP_COPY))
    /* The integer transform takes lo and the range's size (hi - lo). */
    ok = launch_transform (self, stream, direct ? dst : scratch, src_kind, dst, dst_kind (dtype),
                           op_kind, req->count, req->param1,
                           op_kind == OP_INTEGER ? req->param2 - req->param1 : req->param2, error);
  if (scratch)
    ATOMR_CU->cuMemFreeAsync (scratch, stream);
  return ok;
}

static const gchar *
distribution_name (AtomrRngDistribution d)
{
  static const gchar *names[] = { "uniform", "normal", "log-normal", "poisson", "exponential",
                                  "uniform-range", "integer", "bernoulli" };
  return (guint) d < G_N_ELEMENTS (names) ? names[d] : "invalid";
}

#define FAIL(...) \
  atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__))

static void fill_submit (AtomrRngActor *self, gpointer source_tag, AtomrBuffer *buffer,
                         gboolean whole, guint64 first, guint64 count,
                         AtomrRngDistribution distribution, gdouble param1, gdouble param2,
                         GCancellable *cancellable, GAsyncReadyCallback callback,
                         gpointer user_data);

/**
 * atomr_rng_actor_fill_async:
 * @self: an [class@Atomr.RngActor]
 * @buffer: the buffer to fill, all of it
 * @distribution: what to draw
 * @param1: the first parameter of @distribution (mean, λ, lower bound or
 *   probability)
 * @param2: the second parameter of @distribution (standard deviation or
 *   upper bound)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the buffer is filled
 * @user_data: data for @callback
 *
 * Fills @buffer with random numbers from the actor's generator, on its
 * stream.  Dtypes: see [enum@Atomr.RngDistribution]; f16 and bf16 outputs are
 * drawn in f32 and rounded.  Pseudo-random generators make normal and
 * log-normal numbers in pairs, so those need an even element count in f32
 * and f64; Sobol needs a multiple of [property@Atomr.RngActor:dimensions].
 *
 * Since: 0.1
 */
void
atomr_rng_actor_fill_async (AtomrRngActor        *self,
                            AtomrBuffer          *buffer,
                            AtomrRngDistribution  distribution,
                            gdouble               param1,
                            gdouble               param2,
                            GCancellable         *cancellable,
                            GAsyncReadyCallback   callback,
                            gpointer              user_data)
{
  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));
  fill_submit (self, atomr_rng_actor_fill_async, buffer, TRUE, 0, 0, distribution, param1, param2,
               cancellable, callback, user_data);
}

/**
 * atomr_rng_actor_fill_finish:
 * @self: an [class@Atomr.RngActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.RngActor.fill_async].
 *
 * Returns: %TRUE when the buffer was filled
 *
 * Since: 0.1
 */
gboolean
atomr_rng_actor_fill_finish (AtomrRngActor  *self,
                             GAsyncResult   *result,
                             GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_rng_actor_fill_async, error);
}

/**
 * atomr_rng_actor_fill_range_async:
 * @self: an [class@Atomr.RngActor]
 * @buffer: the buffer to fill in part
 * @first: the first element to fill
 * @count: how many elements to fill (at least 1); @first + @count must
 *   not pass the end of @buffer
 * @distribution: what to draw
 * @param1: the first parameter of @distribution
 * @param2: the second parameter of @distribution
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the elements are filled
 * @user_data: data for @callback
 *
 * Like [method@Atomr.RngActor.fill_async], for the elements [@first, @first +
 * @count) of @buffer only; the others keep their values.  The pairing and
 * Sobol rules apply to @count.
 *
 * Since: 0.2
 */
void
atomr_rng_actor_fill_range_async (AtomrRngActor        *self,
                                  AtomrBuffer          *buffer,
                                  guint64               first,
                                  guint64               count,
                                  AtomrRngDistribution  distribution,
                                  gdouble               param1,
                                  gdouble               param2,
                                  GCancellable         *cancellable,
                                  GAsyncReadyCallback   callback,
                                  gpointer              user_data)
{
  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));
  fill_submit (self, atomr_rng_actor_fill_range_async, buffer, FALSE, first, count, distribution,
               param1, param2, cancellable, callback, user_data);
}

/**
 * atomr_rng_actor_fill_range_finish:
 * @self: an [class@Atomr.RngActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.RngActor.fill_range_async].
 *
 * Returns: %TRUE when the elements were filled
 *
 * Since: 0.2
 */
gboolean
atomr_rng_actor_fill_range_finish (AtomrRngActor  *self,
                                   GAsyncResult   *result,
                                   GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_rng_actor_fill_range_async, error);
}

/* Integer bounds [lo, hi) that the dtype holds and the kernel draws
 * exactly: integral values, 1 <= hi - lo <= 2^32. */
static gboolean
check_integer_range (AtomrDtype dtype,
                     gdouble    lo,
                     gdouble    hi,
                     GError   **error)
{
  gdouble min, max;

  switch (dtype)
    {
    case ATOMR_DTYPE_I32: min = G_MININT32; max = G_MAXINT32; break;
    case ATOMR_DTYPE_U32: min = 0; max = G_MAXUINT32; break;
    default: min = -9007199254740992.0; max = 9007199254740992.0; break;  /* ±2^53: exact */
    }
  if (!isfinite (lo) || !isfinite (hi) || floor (lo) != lo || floor (hi) != hi)
    return (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "rng fill (integer): the bounds [%g, %g) must be whole numbers", lo, hi), FALSE);
  if (!(lo < hi) || hi - lo > 4294967296.0)
    return (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "rng fill (integer): the range [%.0f, %.0f) must hold between 1 and 2^32 "
                         "values", lo, hi), FALSE);
  if (lo < min || hi - 1 > max)
    return (g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "rng fill (integer): the range [%.0f, %.0f) does not fit %s", lo, hi,
                         atomr_dtype_get_name (dtype)), FALSE);
  return TRUE;
}

static void
fill_submit (AtomrRngActor        *self,
             gpointer              source_tag,
             AtomrBuffer          *buffer,
             gboolean              whole,
             guint64               first,
             guint64               count,
             AtomrRngDistribution  distribution,
             gdouble               param1,
             gdouble               param2,
             GCancellable         *cancellable,
             GAsyncReadyCallback   callback,
             gpointer              user_data)
{
  static const AtomrDtype uniform_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_U32,
                                               ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };
  static const AtomrDtype real_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_F16,
                                            ATOMR_DTYPE_BF16 };
  static const AtomrDtype integer_dtypes[] = { ATOMR_DTYPE_I32, ATOMR_DTYPE_I64, ATOMR_DTYPE_U32 };
  static const AtomrDtype bernoulli_dtypes[] = { ATOMR_DTYPE_U8, ATOMR_DTYPE_I32, ATOMR_DTYPE_F32,
                                                 ATOMR_DTYPE_F64, ATOMR_DTYPE_F16, ATOMR_DTYPE_BF16 };
  AtomrOp *op;
  FillRequest *req;
  GError *error = NULL;
  guint64 n, end;
  const gchar *dist;
  g_autofree gchar *what = NULL;
  AtomrDtype dtype;

  op = atomr_op_new (self, "rng-fill", source_tag, cancellable, callback, user_data);
  atomr_op_forbid_capture (op, "cuRAND advances its generator on the host, so every replay of a "
                           "graph would draw the same numbers");
  if (!atomr_check_buffer ("rng fill", "buffer", buffer, &error))
    return atomr_op_fail (op, error);
  if ((guint) distribution > ATOMR_RNG_BERNOULLI)
    return FAIL ("rng fill: distribution %d is not an AtomrRngDistribution", (gint) distribution);
  dist = distribution_name (distribution);
  what = g_strdup_printf ("rng fill (%s)", dist);
  dtype = atomr_buffer_get_dtype (buffer);
  if (whole)
    count = atomr_buffer_get_n_elements (buffer);
  else
    {
      if (count == 0)
        return FAIL ("rng fill: count is 0; fill at least one element");
      if (!g_uint64_checked_add (&end, first, count) || end > atomr_buffer_get_n_elements (buffer))
        return FAIL ("rng fill: first %" G_GUINT64_FORMAT " and count %" G_GUINT64_FORMAT
                     " pass the end of the buffer (%" G_GUINT64_FORMAT " elements)", first, count,
                     atomr_buffer_get_n_elements (buffer));
    }
  n = count;

  switch (distribution)
    {
    case ATOMR_RNG_UNIFORM:
      if (!atomr_check_dtype_in (what, "buffer", buffer, uniform_dtypes,
                                 G_N_ELEMENTS (uniform_dtypes), &error))
        return atomr_op_fail (op, error);
      if (param1 != 0.0 || param2 != 0.0)
        return FAIL ("rng fill (uniform): param1 is %g and param2 is %g; uniform draws on (0, 1] "
                     "and takes no parameters (pass 0, or use uniform-range)", param1, param2);
      break;
    case ATOMR_RNG_NORMAL:
    case ATOMR_RNG_LOG_NORMAL:
      if (!atomr_check_dtype_in (what, "buffer", buffer, real_dtypes, G_N_ELEMENTS (real_dtypes), &error))
        return atomr_op_fail (op, error);
      if (!(param2 > 0.0) || !isfinite (param2))
        return FAIL ("rng fill (%s): param2 (standard deviation) is %g; it must be positive",
                     dist, param2);
      if (!isfinite (param1))
        return FAIL ("rng fill (%s): param1 (mean) is %g; it must be finite", dist, param1);
      if (self->kind != ATOMR_RNG_SOBOL && n % 2 != 0 &&
          (dtype == ATOMR_DTYPE_F32 || dtype == ATOMR_DTYPE_F64))
        return FAIL ("rng fill (%s): buffer holds %" G_GUINT64_FORMAT " elements; pseudo-random "
                     "generators draw %s numbers in pairs, so it must be even", dist, n, dist);
      break;
    case ATOMR_RNG_POISSON:
      if (!atomr_check_dtype (what, "buffer", buffer, ATOMR_DTYPE_U32, &error))
        return atomr_op_fail (op, error);
      if (!(param1 > 0.0) || !isfinite (param1))
        return FAIL ("rng fill (poisson): param1 (lambda) is %g; it must be positive", param1);
      if (param2 != 0.0)
        return FAIL ("rng fill (poisson): param2 is %g; Poisson takes one parameter (pass 0)", param2);
      break;
    case ATOMR_RNG_EXPONENTIAL:
      if (!atomr_check_dtype_in (what, "buffer", buffer, real_dtypes, G_N_ELEMENTS (real_dtypes), &error))
        return atomr_op_fail (op, error);
      if (!(param1 > 0.0) || !isfinite (param1))
        return FAIL ("rng fill (exponential): param1 (rate lambda) is %g; it must be positive", param1);
      if (param2 != 0.0)
        return FAIL ("rng fill (exponential): param2 is %g; the exponential takes one parameter "
                     "(pass 0)", param2);
      break;
    case ATOMR_RNG_UNIFORM_RANGE:
      if (!atomr_check_dtype_in (what, "buffer", buffer, real_dtypes, G_N_ELEMENTS (real_dtypes), &error))
        return atomr_op_fail (op, error);
      if (!isfinite (param1) || !isfinite (param2) || !(param1 < param2) || !isfinite (param2 - param1))
        return FAIL ("rng fill (uniform-range): [%g, %g) is not a finite, non-empty interval",
                     param1, param2);
      break;
    case ATOMR_RNG_INTEGER:
      if (!atomr_check_dtype_in (what, "buffer", buffer, integer_dtypes,
                                 G_N_ELEMENTS (integer_dtypes), &error) ||
          !check_integer_range (dtype, param1, param2, &error))
        return atomr_op_fail (op, error);
      break;
    case ATOMR_RNG_BERNOULLI:
    default:
      if (!atomr_check_dtype_in (what, "buffer", buffer, bernoulli_dtypes,
                                 G_N_ELEMENTS (bernoulli_dtypes), &error))
        return atomr_op_fail (op, error);
      if (!(param1 >= 0.0 && param1 <= 1.0))
        return FAIL ("rng fill (bernoulli): param1 (probability) is %g; it must be in [0, 1]", param1);
      if (param2 != 0.0)
        return FAIL ("rng fill (bernoulli): param2 is %g; Bernoulli takes one parameter (pass 0)", param2);
      break;
    }

  req = g_new0 (FillRequest, 1);
  g_mutex_lock (&self->lock);
  req->seed = self->seed;
  req->offset = self->offset;
  req->dimensions = self->dimensions;
  req->epoch = self->epoch;
  g_mutex_unlock (&self->lock);

  if (self->kind == ATOMR_RNG_MTGP32 && req->offset != 0)
    {
      guint64 offset = req->offset;
      g_free (req);
      return FAIL ("rng fill: offset is %" G_GUINT64_FORMAT "; MTGP32 generators cannot skip ahead "
                   "(use offset 0 or another kind)", offset);
    }
  if (self->kind == ATOMR_RNG_SOBOL && n % req->dimensions != 0)
    {
      guint dims = req->dimensions;
      g_free (req);
      return FAIL ("rng fill: buffer holds %" G_GUINT64_FORMAT " elements, not a multiple of the "
                   "%u Sobol dimensions", n, dims);
    }

  req->buffer = buffer;
  req->first = first;
  req->count = count;
  req->distribution = distribution;
  req->param1 = param1;
  req->param2 = param2;
  atomr_op_set_detail (op, dist);
  atomr_op_set_data (op, req, g_free);
  if (!whole)
    atomr_op_read (op, buffer);    /* the rest of it keeps its values */
  atomr_op_write (op, buffer);
  atomr_op_set_enqueue (op, fill_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_rng_actor_new:
 * @device: the device
 * @kind: the generator
 * @error: return location for a [struct@GLib.Error]
 *
 * Creates an RNG actor with its own stream and generator, bound to the
 * calling thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
 *
 * Since: 0.1
 */
AtomrRngActor *
atomr_rng_actor_new (AtomrDevice   *device,
                     AtomrRngKind   kind,
                     GError       **error)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  if ((guint) kind > ATOMR_RNG_SOBOL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "rng actor: kind %d is not an AtomrRngKind", (gint) kind);
      return NULL;
    }
  return g_initable_new (ATOMR_TYPE_RNG_ACTOR, NULL, error, "device", device, "kind", kind, NULL);
}

/**
 * atomr_rng_actor_get_kind:
 * @self: an [class@Atomr.RngActor]
 *
 * Gets the generator kind.
 *
 * This is the value of the [property@Atomr.RngActor:kind] property.
 *
 * Returns: the generator kind
 *
 * Since: 0.1
 */
AtomrRngKind
atomr_rng_actor_get_kind (AtomrRngActor *self)
{
  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), ATOMR_RNG_XORWOW);
  return self->kind;
}

static guint64
get_setting (AtomrRngActor *self,
             guint64       *field)
{
  guint64 v;

  g_mutex_lock (&self->lock);
  v = *field;
  g_mutex_unlock (&self->lock);
  return v;
}

static void
set_setting (AtomrRngActor *self,
             guint64       *field,
             guint64        value,
             guint          prop)
{
  g_mutex_lock (&self->lock);
  *field = value;
  self->epoch++;   /* a setting always restarts the sequence */
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

/**
 * atomr_rng_actor_get_seed:
 * @self: an [class@Atomr.RngActor]
 *
 * Gets the seed of pseudo-random generators.
 *
 * This is the value of the [property@Atomr.RngActor:seed] property.
 *
 * Returns: the seed of pseudo-random generators
 *
 * Since: 0.1
 */
guint64
atomr_rng_actor_get_seed (AtomrRngActor *self)
{
  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), 0);
  return get_setting (self, &self->seed);
}

/**
 * atomr_rng_actor_set_seed:
 * @self: an [class@Atomr.RngActor]
 * @seed: the seed
 *
 * Sets the seed; the next fill restarts the sequence from it (also when
 * the value is unchanged).  Sobol generators have no seed and ignore it.
 *
 * Since: 0.1
 */
void
atomr_rng_actor_set_seed (AtomrRngActor *self,
                          guint64        seed)
{
  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));
  set_setting (self, &self->seed, seed, PROP_SEED);
}

/**
 * atomr_rng_actor_get_offset:
 * @self: an [class@Atomr.RngActor]
 *
 * Gets how many numbers of the sequence are skipped after a restart.
 *
 * This is the value of the [property@Atomr.RngActor:offset] property.
 *
 * Returns: how many numbers of the sequence are skipped after a restart
 *
 * Since: 0.1
 */
guint64
atomr_rng_actor_get_offset (AtomrRngActor *self)
{
  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), 0);
  return get_setting (self, &self->offset);
}

/**
 * atomr_rng_actor_set_offset:
 * @self: an [class@Atomr.RngActor]
 * @offset: the number of values to skip
 *
 * Sets the offset and restarts the sequence at the next fill.  MTGP32
 * cannot skip ahead: its fills fail unless the offset is 0.
 *
 * Since: 0.1
 */
void
atomr_rng_actor_set_offset (AtomrRngActor *self,
                            guint64        offset)
{
  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));
  set_setting (self, &self->offset, offset, PROP_OFFSET);
}

/**
 * atomr_rng_actor_get_dimensions:
 * @self: an [class@Atomr.RngActor]
 *
 * Gets the number of Sobol dimensions.
 *
 * This is the value of the [property@Atomr.RngActor:dimensions] property.
 *
 * Returns: the number of Sobol dimensions
 *
 * Since: 0.1
 */
guint
atomr_rng_actor_get_dimensions (AtomrRngActor *self)
{
  guint v;

  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), 0);
  g_mutex_lock (&self->lock);
  v = self->dimensions;
  g_mutex_unlock (&self->lock);
  return v;
}

/**
 * atomr_rng_actor_set_dimensions:
 * @self: an [class@Atomr.RngActor]
 * @dimensions: 1 to 20000
 *
 * Sets the number of dimensions of a Sobol sequence (ignored by pseudo-
 * random kinds): a fill writes points dimension by dimension.  Out of
 * range values are clamped.
 *
 * Since: 0.1
 */
void
atomr_rng_actor_set_dimensions (AtomrRngActor *self,
                                guint          dimensions)
{
  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));
  dimensions = CLAMP (dimensions, 1, 20000);
  g_mutex_lock (&self->lock);
  self->dimensions = dimensions;
  self->epoch++;
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DIMENSIONS]);
}

static void
atomr_rng_actor_finalize (GObject *object)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (object);

  G_OBJECT_CLASS (atomr_rng_actor_parent_class)->finalize (object);
  g_mutex_clear (&self->lock);
}

static void
atomr_rng_actor_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (object);

  switch (prop_id)
    {
    case PROP_KIND: g_value_set_enum (value, self->kind); break;
    case PROP_SEED: g_value_set_uint64 (value, atomr_rng_actor_get_seed (self)); break;
    case PROP_OFFSET: g_value_set_uint64 (value, atomr_rng_actor_get_offset (self)); break;
    case PROP_DIMENSIONS: g_value_set_uint (value, atomr_rng_actor_get_dimensions (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_rng_actor_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (object);

  switch (prop_id)
    {
    case PROP_KIND: self->kind = g_value_get_enum (value); break;
    case PROP_SEED: atomr_rng_actor_set_seed (self, g_value_get_uint64 (value)); break;
    case PROP_OFFSET: atomr_rng_actor_set_offset (self, g_value_get_uint64 (value)); break;
    case PROP_DIMENSIONS: atomr_rng_actor_set_dimensions (self, g_value_get_uint (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_rng_actor_class_init (AtomrRngActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AtomrActorClass *actor_class = ATOMR_ACTOR_CLASS (klass);

  object_class->finalize = atomr_rng_actor_finalize;
  object_class->get_property = atomr_rng_actor_get_property;
  object_class->set_property = atomr_rng_actor_set_property;
  actor_class->library = "curand";
  actor_class->setup = rng_setup;
  actor_class->teardown = rng_teardown;

  /**
   * AtomrRngActor:kind:
   *
   * The generator.
   *
   * Since: 0.1
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL, ATOMR_TYPE_RNG_KIND, ATOMR_RNG_XORWOW,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:seed:
   *
   * The seed of pseudo-random generators; setting it restarts the sequence.
   *
   * Since: 0.1
   */
  properties[PROP_SEED] =
    g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, DEFAULT_SEED,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:offset:
   *
   * Values skipped after a restart; setting it restarts the sequence.
   *
   * Since: 0.1
   */
  properties[PROP_OFFSET] =
    g_param_spec_uint64 ("offset", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:dimensions:
   *
   * Dimensions of a Sobol sequence.
   *
   * Since: 0.1
   */
  properties[PROP_DIMENSIONS] =
    g_param_spec_uint ("dimensions", NULL, NULL, 1, 20000, 1,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_rng_actor_init (AtomrRngActor *self)
{
  g_mutex_init (&self->lock);
  self->seed = DEFAULT_SEED;
  self->dimensions = 1;
  self->applied_epoch = -1;
}

/* ------------------------------------------------------------------ */
/* Views                                                                */

static gboolean
fill_nothing (AtomrOp  *op,
              GError  **error)
{
  return TRUE;
}

/**
 * atomr_rng_actor_fill_tensor_async:
 * @self: an [class@Atomr.RngActor]
 * @tensor: a contiguous view, of its buffer's dtype
 * @distribution: what to draw
 * @param1: the first parameter of @distribution
 * @param2: the second parameter of @distribution
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the elements are filled
 * @user_data: data for @callback
 *
 * [method@Atomr.RngActor.fill_range_async] over the elements of a view: the
 * view must be contiguous (curand writes consecutive elements), else the
 * request fails with %ATOMR_ERROR_NOT_SUPPORTED — fill a contiguous tensor
 * and [method@Atomr.Actor.copy_tensor_async] it into place.  A view without
 * elements is filled at once.
 *
 * Since: 0.2
 */
void
atomr_rng_actor_fill_tensor_async (AtomrRngActor        *self,
                                   AtomrTensor          *tensor,
                                   AtomrRngDistribution  distribution,
                                   gdouble               param1,
                                   gdouble               param2,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data)
{
  GError *error = NULL;
  AtomrBuffer *buffer;
  gsize elem;

  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));

  if (!atomr_tensor_check (tensor, atomr_actor_get_device (ATOMR_ACTOR (self)),
                           "rng fill-tensor: tensor", &error))
    goto fail;
  buffer = atomr_tensor_get_buffer (tensor);
  if (atomr_tensor_get_dtype (tensor) != atomr_buffer_get_dtype (buffer))
    {
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "rng fill-tensor: the view's dtype %s is not its buffer's (%s)",
                   atomr_dtype_get_name (atomr_tensor_get_dtype (tensor)),
                   atomr_dtype_get_name (atomr_buffer_get_dtype (buffer)));
      goto fail;
    }
  if (!atomr_tensor_is_contiguous (tensor))
    {
      g_autofree gchar *desc = atomr_tensor_to_string (tensor);
      g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "rng fill-tensor: %s is not contiguous; fill a contiguous tensor and copy "
                   "it into the view", desc);
      goto fail;
    }
  if (atomr_tensor_get_n_elements (tensor) == 0)
    {
      AtomrOp *op = atomr_op_new (self, "fill-tensor", atomr_rng_actor_fill_tensor_async,
                                  cancellable, callback, user_data);
      atomr_op_write_tensor (op, tensor);
      atomr_op_set_enqueue (op, fill_nothing);   /* nothing to draw */
      atomr_op_submit (op);
      return;
    }
  elem = atomr_dtype_get_size (atomr_tensor_get_dtype (tensor));
  fill_submit (self, atomr_rng_actor_fill_tensor_async, buffer, FALSE,
               atomr_tensor_get_byte_offset (tensor) / elem, atomr_tensor_get_n_elements (tensor),
               distribution, param1, param2, cancellable, callback, user_data);
  return;

fail:
  atomr_op_fail (atomr_op_new (self, "fill-tensor", atomr_rng_actor_fill_tensor_async,
                               cancellable, callback, user_data), error);
}

/**
 * atomr_rng_actor_fill_tensor_finish:
 * @self: an [class@Atomr.RngActor]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.RngActor.fill_tensor_async].
 *
 * Returns: %TRUE when the elements were filled
 *
 * Since: 0.2
 */
gboolean
atomr_rng_actor_fill_tensor_finish (AtomrRngActor  *self,
                                    GAsyncResult   *result,
                                    GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_rng_actor_fill_tensor_async, error);
}
