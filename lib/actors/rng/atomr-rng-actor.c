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
  gint64            applied_epoch; /* -1: nothing applied yet */
};

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
  self->has_generator = FALSE;
  self->applied_epoch = -1;
}

typedef struct {
  AtomrBuffer          *buffer;   /* kept by the op */
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

static gboolean
fill_enqueue (AtomrOp  *op,
              GError  **error)
{
  AtomrRngActor *self = ATOMR_RNG_ACTOR (atomr_op_get_actor (op));
  FillRequest *req = atomr_op_get_data (op);
  gsize n = atomr_buffer_get_n_elements (req->buffer);
  gpointer ptr;
  gboolean dbl = atomr_buffer_get_dtype (req->buffer) == ATOMR_DTYPE_F64;
  curandStatus_t s;

  if (atomr_op_is_host (op))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NOT_SUPPORTED,
                   "rng fill: cuRAND needs a CUDA device; %s is the host test device",
                   atomr_device_get_name (atomr_actor_get_device (ATOMR_ACTOR (self))));
      return FALSE;
    }
  if (!apply_settings (self, req, error))
    return FALSE;

  ptr = (gpointer) (guintptr) atomr_buffer_get_ptr (req->buffer);
  switch (req->distribution)
    {
    case ATOMR_RNG_UNIFORM:
      if (atomr_buffer_get_dtype (req->buffer) == ATOMR_DTYPE_U32)
        s = curandGenerate (self->generator, ptr, n);
      else if (dbl)
        s = curandGenerateUniformDouble (self->generator, ptr, n);
      else
        s = curandGenerateUniform (self->generator, ptr, n);
      break;
    case ATOMR_RNG_NORMAL:
      s = dbl ? curandGenerateNormalDouble (self->generator, ptr, n, req->param1, req->param2)
              : curandGenerateNormal (self->generator, ptr, n, (float) req->param1, (float) req->param2);
      break;
    case ATOMR_RNG_LOG_NORMAL:
      s = dbl ? curandGenerateLogNormalDouble (self->generator, ptr, n, req->param1, req->param2)
              : curandGenerateLogNormal (self->generator, ptr, n, (float) req->param1, (float) req->param2);
      break;
    case ATOMR_RNG_POISSON:
    default:
      s = curandGeneratePoisson (self->generator, ptr, n, req->param1);
      break;
    }
  return curand_check (s, "curandGenerate", error);
}

static const gchar *
distribution_name (AtomrRngDistribution d)
{
  static const gchar *names[] = { "uniform", "normal", "log-normal", "poisson" };
  return (guint) d < G_N_ELEMENTS (names) ? names[d] : "invalid";
}

#define FAIL(...) \
  atomr_op_fail (op, g_error_new (ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, __VA_ARGS__))

/**
 * atomr_rng_actor_fill_async:
 * @self: an #AtomrRngActor
 * @buffer: the buffer to fill, all of it
 * @distribution: what to draw
 * @param1: the first parameter of @distribution (mean, or λ)
 * @param2: the second parameter of @distribution (standard deviation)
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the buffer is filled
 * @user_data: data for @callback
 *
 * Fills @buffer with random numbers from the actor's generator, on its
 * stream.  Dtypes: f32 or f64 for uniform, normal and log-normal, u32 for
 * Poisson and for raw uniform bits.  Pseudo-random generators make normal
 * and log-normal numbers in pairs, so those need an even element count;
 * Sobol needs a multiple of #AtomrRngActor:dimensions.
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
  static const AtomrDtype uniform_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64, ATOMR_DTYPE_U32 };
  static const AtomrDtype real_dtypes[] = { ATOMR_DTYPE_F32, ATOMR_DTYPE_F64 };
  AtomrOp *op;
  FillRequest *req;
  GError *error = NULL;
  guint64 n;
  const gchar *dist;

  g_return_if_fail (ATOMR_IS_RNG_ACTOR (self));

  op = atomr_op_new (self, "rng-fill", atomr_rng_actor_fill_async, cancellable, callback, user_data);
  if (!atomr_check_buffer ("rng fill", "buffer", buffer, &error))
    return atomr_op_fail (op, error);
  if ((guint) distribution > ATOMR_RNG_POISSON)
    return FAIL ("rng fill: distribution %d is not an AtomrRngDistribution", (gint) distribution);
  dist = distribution_name (distribution);
  n = atomr_buffer_get_n_elements (buffer);

  switch (distribution)
    {
    case ATOMR_RNG_UNIFORM:
      if (!atomr_check_dtype_in ("rng fill (uniform)", "buffer", buffer, uniform_dtypes,
                                 G_N_ELEMENTS (uniform_dtypes), &error))
        return atomr_op_fail (op, error);
      if (param1 != 0.0 || param2 != 0.0)
        return FAIL ("rng fill (uniform): param1 is %g and param2 is %g; uniform draws on (0, 1] "
                     "and takes no parameters (pass 0)", param1, param2);
      break;
    case ATOMR_RNG_NORMAL:
    case ATOMR_RNG_LOG_NORMAL:
      if (!atomr_check_dtype_in (distribution == ATOMR_RNG_NORMAL ? "rng fill (normal)"
                                 : "rng fill (log-normal)", "buffer", buffer, real_dtypes,
                                 G_N_ELEMENTS (real_dtypes), &error))
        return atomr_op_fail (op, error);
      if (!(param2 > 0.0) || !isfinite (param2))
        return FAIL ("rng fill (%s): param2 (standard deviation) is %g; it must be positive",
                     dist, param2);
      if (!isfinite (param1))
        return FAIL ("rng fill (%s): param1 (mean) is %g; it must be finite", dist, param1);
      if (self->kind != ATOMR_RNG_SOBOL && n % 2 != 0)
        return FAIL ("rng fill (%s): buffer holds %" G_GUINT64_FORMAT " elements; pseudo-random "
                     "generators draw %s numbers in pairs, so it must be even", dist, n, dist);
      break;
    case ATOMR_RNG_POISSON:
    default:
      if (!atomr_check_dtype ("rng fill (poisson)", "buffer", buffer, ATOMR_DTYPE_U32, &error))
        return atomr_op_fail (op, error);
      if (!(param1 > 0.0) || !isfinite (param1))
        return FAIL ("rng fill (poisson): param1 (lambda) is %g; it must be positive", param1);
      if (param2 != 0.0)
        return FAIL ("rng fill (poisson): param2 is %g; Poisson takes one parameter (pass 0)", param2);
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
  req->distribution = distribution;
  req->param1 = param1;
  req->param2 = param2;
  atomr_op_set_detail (op, dist);
  atomr_op_set_data (op, req, g_free);
  atomr_op_write (op, buffer);
  atomr_op_set_enqueue (op, fill_enqueue);
  atomr_op_submit (op);
}

/**
 * atomr_rng_actor_fill_finish:
 * @self: an #AtomrRngActor
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Returns: %TRUE when the buffer was filled
 */
gboolean
atomr_rng_actor_fill_finish (AtomrRngActor  *self,
                             GAsyncResult   *result,
                             GError        **error)
{
  return atomr_op_finish_boolean (self, result, atomr_rng_actor_fill_async, error);
}

/**
 * atomr_rng_actor_new:
 * @device: the device
 * @kind: the generator
 * @error: return location for a #GError
 *
 * Creates an RNG actor with its own stream and generator, bound to the
 * calling thread's thread-default main context.
 *
 * Returns: (transfer full): a new actor, or %NULL on error
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
 * @self: an #AtomrRngActor
 *
 * Returns: the generator kind
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
 * @self: an #AtomrRngActor
 *
 * Returns: the seed of pseudo-random generators
 */
guint64
atomr_rng_actor_get_seed (AtomrRngActor *self)
{
  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), 0);
  return get_setting (self, &self->seed);
}

/**
 * atomr_rng_actor_set_seed:
 * @self: an #AtomrRngActor
 * @seed: the seed
 *
 * Sets the seed; the next fill restarts the sequence from it (also when
 * the value is unchanged).  Sobol generators have no seed and ignore it.
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
 * @self: an #AtomrRngActor
 *
 * Returns: how many numbers of the sequence are skipped after a restart
 */
guint64
atomr_rng_actor_get_offset (AtomrRngActor *self)
{
  g_return_val_if_fail (ATOMR_IS_RNG_ACTOR (self), 0);
  return get_setting (self, &self->offset);
}

/**
 * atomr_rng_actor_set_offset:
 * @self: an #AtomrRngActor
 * @offset: the number of values to skip
 *
 * Sets the offset and restarts the sequence at the next fill.  MTGP32
 * cannot skip ahead: its fills fail unless the offset is 0.
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
 * @self: an #AtomrRngActor
 *
 * Returns: the number of Sobol dimensions
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
 * @self: an #AtomrRngActor
 * @dimensions: 1 to 20000
 *
 * Sets the number of dimensions of a Sobol sequence (ignored by pseudo-
 * random kinds): a fill writes points dimension by dimension.  Out of
 * range values are clamped.
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
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL, ATOMR_TYPE_RNG_KIND, ATOMR_RNG_XORWOW,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:seed:
   *
   * The seed of pseudo-random generators; setting it restarts the sequence.
   */
  properties[PROP_SEED] =
    g_param_spec_uint64 ("seed", NULL, NULL, 0, G_MAXUINT64, DEFAULT_SEED,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:offset:
   *
   * Values skipped after a restart; setting it restarts the sequence.
   */
  properties[PROP_OFFSET] =
    g_param_spec_uint64 ("offset", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrRngActor:dimensions:
   *
   * Dimensions of a Sobol sequence.
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
