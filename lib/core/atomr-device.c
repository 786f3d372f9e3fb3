/* atomr-device.c — one GPU, its context and its supervisor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include "atomr-completion-service-private.h"
#include "atomr-device-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-memory-pool.h"

/**
 * AtomrDevice:
 *
 * One GPU.  There is a single [class@Atomr.Device] per ordinal for the life of the
 * process, obtained with [func@Atomr.Device.get].  It owns the primary CUDA
 * context, pools of streams, events and pinned staging memory, and a
 * monotonically increasing [property@Atomr.Device:generation].
 *
 * When a sticky CUDA error (an illegal address, a failed launch) poisons the
 * context, the device's supervisor applies [property@Atomr.Device:supervisor-policy]:
 * by default it rebuilds the context at once.  Rebuilding bumps the
 * generation; every buffer, kernel and library handle of an older
 * generation then fails fast with %ATOMR_ERROR_STALE instead of touching
 * freed memory.
 *
 * The device's methods may be called from any thread.
 *
 * Since: 0.1
 */

struct _AtomrDevice
{
  GObject parent_instance;

  gint       ordinal;
  gboolean   made;               /* by atomr_device_get() or _new_host(), not bare */
  gboolean   host;
  gboolean   host_autocomplete;
  CUdevice   cu_device;
  gchar     *name;
  gint       cc_major;
  gint       cc_minor;
  guint64    total_memory;
  gint       sm_count;

  /* Readers: any use of context handles.  Writer: a context rebuild. */
  GRWLock    ctx_lock;
  CUcontext  context;
  gboolean   context_retained;

  GMutex     lock;               /* everything below */
  guint      generation;         /* also read atomically */
  gint       state;              /* AtomrDeviceState, atomic */
  AtomrSupervisorPolicy policy;
  AtomrStream *utility;
  GArray    *events[ATOMR_EVENT_N_KINDS];  /* CUevent pools, current generation */
  GHashTable *pinned;            /* size -> GSList of blocks */
  GArray    *streams;            /* CUstream pool, current generation */
  gsize      pinned_pooled;
  guint      next_stream_id;
  gboolean   restart_pending;
  gchar     *stop_reason;        /* why the supervisor stopped it */

  AtomrCompletionService *completion;   /* under lock; created on first use */

  GThread      *thread;
  GMainContext *thread_context;
  GMainLoop    *thread_loop;
  gboolean      thread_running;
  GCond         thread_cond;
};

G_DEFINE_FINAL_TYPE (AtomrDevice, atomr_device, G_TYPE_OBJECT)

/* A device built bare (g_object_new(), `Atomr.Device()` in a binding) has
 * no context behind it: everything that needs one fails with this. */
static gboolean
device_check_made (AtomrDevice  *self,
                   GError      **error)
{
  if (G_LIKELY (self->made))
    return TRUE;
  g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "This AtomrDevice was constructed directly (g_object_new() or a binding's "
                       "constructor) and has no CUDA context: obtain devices with atomr_device_get()");
  return FALSE;
}

enum {
  PROP_0,
  PROP_ORDINAL,
  PROP_NAME,
  PROP_ARCH,
  PROP_COMPUTE_CAPABILITY_MAJOR,
  PROP_COMPUTE_CAPABILITY_MINOR,
  PROP_TOTAL_MEMORY,
  PROP_MULTIPROCESSOR_COUNT,
  PROP_GENERATION,
  PROP_STATE,
  PROP_SUPERVISOR_POLICY,
  PROP_MEMORY_RESERVED,
  PROP_MEMORY_USED,
  PROP_MEMORY_HIGH_WATER,
  N_PROPS
};

enum {
  SIGNAL_CONTEXT_REBUILT,
  SIGNAL_CONTEXT_POISONED,
  SIGNAL_CONTEXT_LOST,
  SIGNAL_CHOOSE_POLICY,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

#define PINNED_POOL_LIMIT (256u << 20)
#define EVENT_POOL_LIMIT  1024

/* The per-ordinal table: the only global state of the library. */
G_LOCK_DEFINE_STATIC (devices);
static GPtrArray *devices;

static void
atomr_device_finalize (GObject *object)
{
  AtomrDevice *self = ATOMR_DEVICE (object);

  if (self->thread_loop)
    {
      g_main_loop_quit (self->thread_loop);
      g_thread_join (self->thread);
      g_main_loop_unref (self->thread_loop);
      g_main_context_unref (self->thread_context);
    }
  /* Watched fences hold their stream, which holds us: none is left, or
   * the last one is being dropped on the service thread right now. */
  g_clear_pointer (&self->completion, atomr_completion_service_free);
  g_clear_pointer (&self->utility, atomr_stream_unref);
  for (guint k = 0; k < ATOMR_EVENT_N_KINDS; k++)
    g_clear_pointer (&self->events[k], g_array_unref);
  g_clear_pointer (&self->streams, g_array_unref);
  {
    GHashTableIter iter;
    gpointer list;
    gboolean alive = !self->host && self->context_retained &&
                     ATOMR_CU && ATOMR_CU->cuCtxSetCurrent (self->context) == CUDA_SUCCESS;

    g_hash_table_iter_init (&iter, self->pinned);
    while (g_hash_table_iter_next (&iter, NULL, &list))
      {
        for (GSList *l = list; l; l = l->next)
          if (self->host)
            g_free (l->data);
          else if (alive)
            ATOMR_CU->cuMemFreeHost (l->data);
        g_slist_free (list);
      }
  }
  g_cond_clear (&self->thread_cond);
  g_clear_pointer (&self->pinned, g_hash_table_unref);
  g_free (self->name);
  g_free (self->stop_reason);
  g_rw_lock_clear (&self->ctx_lock);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (atomr_device_parent_class)->finalize (object);
}

static void
atomr_device_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AtomrDevice *self = ATOMR_DEVICE (object);

  switch (prop_id)
    {
    case PROP_ORDINAL:
      g_value_set_int (value, self->ordinal);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_ARCH:
      g_value_take_string (value, atomr_device_get_arch (self));
      break;
    case PROP_COMPUTE_CAPABILITY_MAJOR:
      g_value_set_int (value, self->cc_major);
      break;
    case PROP_COMPUTE_CAPABILITY_MINOR:
      g_value_set_int (value, self->cc_minor);
      break;
    case PROP_TOTAL_MEMORY:
      g_value_set_uint64 (value, self->total_memory);
      break;
    case PROP_MULTIPROCESSOR_COUNT:
      g_value_set_int (value, self->sm_count);
      break;
    case PROP_GENERATION:
      g_value_set_uint (value, atomr_device_get_generation (self));
      break;
    case PROP_STATE:
      g_value_set_enum (value, atomr_device_get_state (self));
      break;
    case PROP_SUPERVISOR_POLICY:
      g_value_set_enum (value, atomr_device_get_supervisor_policy (self));
      break;
    case PROP_MEMORY_RESERVED:
      g_value_set_uint64 (value, atomr_memory_pool_get_reserved (atomr_device_get_memory_pool (self)));
      break;
    case PROP_MEMORY_USED:
      g_value_set_uint64 (value, atomr_memory_pool_get_used (atomr_device_get_memory_pool (self)));
      break;
    case PROP_MEMORY_HIGH_WATER:
      g_value_set_uint64 (value, atomr_memory_pool_get_high_water (atomr_device_get_memory_pool (self)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_device_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  AtomrDevice *self = ATOMR_DEVICE (object);

  switch (prop_id)
    {
    case PROP_SUPERVISOR_POLICY:
      atomr_device_set_supervisor_policy (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static AtomrSupervisorPolicy
default_choose_policy (AtomrDevice  *self,
                       guint         generation,
                       gint          cuda_result,
                       const GError *error)
{
  return atomr_device_get_supervisor_policy (self);
}

static void
atomr_device_class_init (AtomrDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_device_finalize;
  object_class->get_property = atomr_device_get_property;
  object_class->set_property = atomr_device_set_property;

  /**
   * AtomrDevice:ordinal:
   *
   * The CUDA ordinal of the device, or -1 for the host test device.
   *
   * Since: 0.1
   */
  properties[PROP_ORDINAL] =
    g_param_spec_int ("ordinal", NULL, NULL, -1, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:name:
   *
   * The marketing name of the GPU, such as "NVIDIA H100 80GB HBM3".
   *
   * Since: 0.1
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:arch:
   *
   * The device's own NVRTC architecture name, such as "sm_90".
   *
   * Since: 0.1
   */
  properties[PROP_ARCH] =
    g_param_spec_string ("arch", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:compute-capability-major:
   *
   * The major compute capability (9 on Hopper).
   *
   * Since: 0.1
   */
  properties[PROP_COMPUTE_CAPABILITY_MAJOR] =
    g_param_spec_int ("compute-capability-major", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:compute-capability-minor:
   *
   * The minor compute capability.
   *
   * Since: 0.1
   */
  properties[PROP_COMPUTE_CAPABILITY_MINOR] =
    g_param_spec_int ("compute-capability-minor", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:total-memory:
   *
   * Device memory in bytes.
   *
   * Since: 0.1
   */
  properties[PROP_TOTAL_MEMORY] =
    g_param_spec_uint64 ("total-memory", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:multiprocessor-count:
   *
   * The number of streaming multiprocessors.
   *
   * Since: 0.1
   */
  properties[PROP_MULTIPROCESSOR_COUNT] =
    g_param_spec_int ("multiprocessor-count", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:generation:
   *
   * Bumped each time the context is rebuilt.  Objects remember the
   * generation they were made in and fail as stale once it moves on.
   *
   * Since: 0.1
   */
  properties[PROP_GENERATION] =
    g_param_spec_uint ("generation", NULL, NULL, 0, G_MAXUINT, 1,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrDevice:state:
   *
   * The health of the context.
   *
   * Since: 0.1
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, ATOMR_TYPE_DEVICE_STATE,
                       ATOMR_DEVICE_STATE_READY,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrDevice:supervisor-policy:
   *
   * What happens when a sticky error poisons the context.
   *
   * Since: 0.1
   */
  properties[PROP_SUPERVISOR_POLICY] =
    g_param_spec_enum ("supervisor-policy", NULL, NULL, ATOMR_TYPE_SUPERVISOR_POLICY,
                       ATOMR_SUPERVISOR_RESTART,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AtomrDevice:memory-reserved:
   *
   * [property@Atomr.MemoryPool:reserved] of [method@Atomr.Device.get_memory_pool]: bytes the
   * buffer pool holds from the driver.  Read on demand, not notified.
   *
   * Since: 0.2
   */
  properties[PROP_MEMORY_RESERVED] =
    g_param_spec_uint64 ("memory-reserved", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:memory-used:
   *
   * [property@Atomr.MemoryPool:used]: bytes allocated to buffers.  Read on demand,
   * not notified.
   *
   * Since: 0.2
   */
  properties[PROP_MEMORY_USED] =
    g_param_spec_uint64 ("memory-used", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrDevice:memory-high-water:
   *
   * [property@Atomr.MemoryPool:high-water]: the most bytes used at once.  Read on
   * demand, not notified.
   *
   * Since: 0.2
   */
  properties[PROP_MEMORY_HIGH_WATER] =
    g_param_spec_uint64 ("memory-high-water", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * AtomrDevice::context-rebuilt:
   * @self: the device
   * @generation: the new generation
   *
   * Emitted after the context was rebuilt, in the thread that rebuilt it
   * (the device's own thread when the supervisor restarts it).
   *
   * Since: 0.1
   */
  signals[SIGNAL_CONTEXT_REBUILT] =
    g_signal_new ("context-rebuilt", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);

  /**
   * AtomrDevice::context-poisoned:
   * @self: the device
   * @generation: the generation that was poisoned
   * @error: the error that poisoned it
   *
   * Emitted on the device's own thread when a sticky error poisoned the
   * context, before the supervisor policy is applied.
   *
   * Since: 0.1
   */
  signals[SIGNAL_CONTEXT_POISONED] =
    g_signal_new ("context-poisoned", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_ERROR);

  /**
   * AtomrDevice::context-lost:
   * @self: the device
   * @generation: the generation that was lost
   * @error: an %ATOMR_ERROR_UNRECOVERABLE error whose message says what
   *   happened and what to do
   *
   * Emitted on the device's own thread when the supervisor has stopped the
   * device: the policy chose %ATOMR_SUPERVISOR_STOP, or the context could
   * not be rebuilt (after an illegal address the driver refuses every new
   * context in this process).  From now on every request fails at once
   * with %ATOMR_ERROR_UNRECOVERABLE.
   *
   * What the application should do: save what it still holds on the host,
   * tell the user, and start a new process to use this GPU again (or go on
   * with the CPU or another device).  Buffers of this device cannot be read
   * back any more.
   *
   * Since: 0.2
   */
  signals[SIGNAL_CONTEXT_LOST] =
    g_signal_new ("context-lost", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_ERROR);

  /**
   * AtomrDevice::choose-policy:
   * @self: the device
   * @generation: the generation that was poisoned
   * @cuda_result: the CUDA driver status (a `CUresult`) that poisoned it,
   *   such as 700 for `CUDA_ERROR_ILLEGAL_ADDRESS`
   * @error: the error that poisoned it
   *
   * The supervisor's per-error decider, emitted on the device's own thread
   * after [signal@Atomr.Device::context-poisoned].  The first handler that runs
   * decides what happens; without handlers the device applies
   * [property@Atomr.Device:supervisor-policy] whatever the error.
   *
   * Returns: the policy for this error
   *
   * Since: 0.2
   */
  signals[SIGNAL_CHOOSE_POLICY] =
    g_signal_newv ("choose-policy", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                   g_cclosure_new (G_CALLBACK (default_choose_policy), NULL, NULL),
                   g_signal_accumulator_first_wins, NULL, NULL,
                   ATOMR_TYPE_SUPERVISOR_POLICY, 3,
                   (GType[]) { G_TYPE_UINT, G_TYPE_INT, G_TYPE_ERROR });
}

static void
atomr_device_init (AtomrDevice *self)
{
  g_rw_lock_init (&self->ctx_lock);
  g_mutex_init (&self->lock);
  self->generation = 1;
  self->policy = ATOMR_SUPERVISOR_RESTART;
  for (guint k = 0; k < ATOMR_EVENT_N_KINDS; k++)
    self->events[k] = g_array_new (FALSE, FALSE, sizeof (CUevent));
  g_cond_init (&self->thread_cond);
  self->streams = g_array_new (FALSE, FALSE, sizeof (CUstream));
  self->pinned = g_hash_table_new_full (NULL, NULL, NULL, NULL);
}

static gboolean
device_open (AtomrDevice *self,
             GError     **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  char name[256] = "";
  size_t total = 0;

  if (!atomr_cuda_check (cu->cuDeviceGet (&self->cu_device, self->ordinal), "cuDeviceGet", error) ||
      !atomr_cuda_check (cu->cuDeviceGetName (name, sizeof name, self->cu_device), "cuDeviceGetName", error) ||
      !atomr_cuda_check (cu->cuDeviceTotalMem (&total, self->cu_device), "cuDeviceTotalMem", error) ||
      !atomr_cuda_check (cu->cuDeviceGetAttribute (&self->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, self->cu_device), "cuDeviceGetAttribute", error) ||
      !atomr_cuda_check (cu->cuDeviceGetAttribute (&self->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, self->cu_device), "cuDeviceGetAttribute", error) ||
      !atomr_cuda_check (cu->cuDeviceGetAttribute (&self->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self->cu_device), "cuDeviceGetAttribute", error) ||
      !atomr_cuda_check (cu->cuDevicePrimaryCtxRetain (&self->context, self->cu_device), "cuDevicePrimaryCtxRetain", error))
    return FALSE;

  self->context_retained = TRUE;
  self->name = g_strdup (name);
  self->total_memory = total;
  return TRUE;
}

/**
 * atomr_device_get_driver_version:
 *
 * Gets the CUDA version that the installed driver supports, loading the driver if needed.
 *
 * Returns: the CUDA version the installed driver supports (for example
 *   13000 for 13.0), or 0 when there is no driver.
 *
 * Since: 0.1
 */
gint
atomr_device_get_driver_version (void)
{
  const AtomrCudaDriver *cu = atomr_cuda_load (NULL);
  return cu ? cu->driver_version : 0;
}

/**
 * atomr_device_get_count:
 *
 * Counts the GPUs the driver sees.  Never fails: a machine without a
 * driver simply has none.
 *
 * Returns: the number of CUDA devices, 0 without a driver.
 *
 * Since: 0.1
 */
gint
atomr_device_get_count (void)
{
  const AtomrCudaDriver *cu = atomr_cuda_load (NULL);
  int count = 0;

  if (cu == NULL || cu->cuDeviceGetCount (&count) != CUDA_SUCCESS)
    return 0;
  return count;
}

/**
 * atomr_device_get:
 * @ordinal: the CUDA device ordinal, from 0
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the device of @ordinal, opening its primary context on first use.
 * Every call for one ordinal returns the same object.
 *
 * Returns: (transfer full): the device, or %NULL with
 *   %ATOMR_ERROR_NO_DEVICE when there is no driver or no such GPU.
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_device_get (gint      ordinal,
                  GError  **error)
{
  AtomrDevice *self;
  gint count;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (atomr_cuda_load (error) == NULL)
    return NULL;

  count = atomr_device_get_count ();
  if (ordinal < 0 || ordinal >= count)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_NO_DEVICE,
                   "No CUDA device with ordinal %d: the driver sees %d device%s",
                   ordinal, count, count == 1 ? "" : "s");
      return NULL;
    }

  G_LOCK (devices);
  if (devices == NULL)
    devices = g_ptr_array_new ();
  if ((guint) ordinal >= devices->len)
    g_ptr_array_set_size (devices, ordinal + 1);
  self = g_ptr_array_index (devices, ordinal);
  if (self == NULL)
    {
      self = g_object_new (ATOMR_TYPE_DEVICE, NULL);
      self->ordinal = ordinal;
      self->made = TRUE;
      if (!device_open (self, error))
        {
          G_UNLOCK (devices);
          g_object_unref (self);
          return NULL;
        }
      /* The table keeps one reference for the life of the process. */
      g_ptr_array_index (devices, ordinal) = self;
    }
  G_UNLOCK (devices);

  return g_object_ref (self);
}

AtomrDevice *
atomr_device_new_host (void)
{
  AtomrDevice *self = g_object_new (ATOMR_TYPE_DEVICE, NULL);

  self->ordinal = -1;
  self->host = TRUE;
  self->made = TRUE;
  self->name = g_strdup ("Host test device");
  self->total_memory = 1u << 30;
  self->sm_count = 1;
  return self;
}

gboolean
atomr_device_is_host (AtomrDevice *self)
{
  return self->host;
}

void
atomr_device_set_host_autocomplete (AtomrDevice *self,
                                    gboolean     autocomplete)
{
  g_return_if_fail (self->host);
  g_atomic_int_set (&self->host_autocomplete, autocomplete);
}

gboolean
atomr_device_get_host_autocomplete (AtomrDevice *self)
{
  return g_atomic_int_get (&self->host_autocomplete);
}

/**
 * atomr_device_get_ordinal:
 * @self: an [class@Atomr.Device]
 *
 * Gets the CUDA ordinal.
 *
 * This is the value of the [property@Atomr.Device:ordinal] property.
 *
 * Returns: the CUDA ordinal.
 *
 * Since: 0.1
 */
gint
atomr_device_get_ordinal (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), -1);
  return self->ordinal;
}

/**
 * atomr_device_get_name:
 * @self: an [class@Atomr.Device]
 *
 * Gets the GPU's name.
 *
 * This is the value of the [property@Atomr.Device:name] property.
 *
 * Returns: (transfer none): the GPU's name.
 *
 * Since: 0.1
 */
const gchar *
atomr_device_get_name (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), NULL);
  return self->name ? self->name : "";
}

/**
 * atomr_device_get_compute_capability:
 * @self: an [class@Atomr.Device]
 * @major: (out) (optional): the major version
 * @minor: (out) (optional): the minor version
 *
 * Gets the compute capability, for example 9.0 for an H100.
 *
 * Since: 0.1
 */
void
atomr_device_get_compute_capability (AtomrDevice *self,
                                     gint        *major,
                                     gint        *minor)
{
  g_return_if_fail (ATOMR_IS_DEVICE (self));
  if (major)
    *major = self->cc_major;
  if (minor)
    *minor = self->cc_minor;
}

/**
 * atomr_device_get_arch:
 * @self: an [class@Atomr.Device]
 *
 * Gets the NVRTC architecture of the device, "sm_90" for compute capability 9.0.
 *
 * This is the value of the [property@Atomr.Device:arch] property.
 *
 * Returns: (transfer full): the NVRTC architecture of the device, "sm_90"
 *   for compute capability 9.0.
 *
 * Since: 0.1
 */
gchar *
atomr_device_get_arch (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), NULL);
  return g_strdup_printf ("sm_%d%d", self->cc_major, self->cc_minor);
}

/**
 * atomr_device_get_total_memory:
 * @self: an [class@Atomr.Device]
 *
 * Gets the device memory in bytes.
 *
 * This is the value of the [property@Atomr.Device:total-memory] property.
 *
 * Returns: device memory in bytes.
 *
 * Since: 0.1
 */
guint64
atomr_device_get_total_memory (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), 0);
  return self->total_memory;
}

/**
 * atomr_device_get_multiprocessor_count:
 * @self: an [class@Atomr.Device]
 *
 * Gets the number of streaming multiprocessors.
 *
 * This is the value of the [property@Atomr.Device:multiprocessor-count] property.
 *
 * Returns: the number of streaming multiprocessors.
 *
 * Since: 0.1
 */
gint
atomr_device_get_multiprocessor_count (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), 0);
  return self->sm_count;
}

/**
 * atomr_device_get_generation:
 * @self: an [class@Atomr.Device]
 *
 * Gets the current generation of the context, from 1.
 *
 * This is the value of the [property@Atomr.Device:generation] property.
 *
 * Returns: the current generation of the context, from 1.
 *
 * Since: 0.1
 */
guint
atomr_device_get_generation (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), 0);
  return (guint) g_atomic_int_get ((gint *) &self->generation);
}

/**
 * atomr_device_get_state:
 * @self: an [class@Atomr.Device]
 *
 * Gets the state of the context: ready, poisoned or stopped.
 *
 * This is the value of the [property@Atomr.Device:state] property.
 *
 * Returns: whether the context is ready, poisoned or stopped.
 *
 * Since: 0.1
 */
guint
atomr_device_get_generation_internal (AtomrDevice *self)
{
  return (guint) g_atomic_int_get ((gint *) &self->generation);
}

AtomrDeviceState
atomr_device_get_state (AtomrDevice *self)
{
  g_return_val_if_fail (ATOMR_IS_DEVICE (self), ATOMR_DEVICE_STATE_STOPPED);
  return (AtomrDeviceState) g_atomic_int_get (&self->state);
}

/**
 * atomr_device_get_supervisor_policy:
 * @self: an [class@Atomr.Device]
 *
 * Gets the policy applied when the context is poisoned.
 *
 * This is the value of the [property@Atomr.Device:supervisor-policy] property.
 *
 * Returns: the policy applied when the context is poisoned.
 *
 * Since: 0.1
 */
AtomrSupervisorPolicy
atomr_device_get_supervisor_policy (AtomrDevice *self)
{
  AtomrSupervisorPolicy policy;

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), ATOMR_SUPERVISOR_RESTART);
  g_mutex_lock (&self->lock);
  policy = self->policy;
  g_mutex_unlock (&self->lock);
  return policy;
}

/**
 * atomr_device_set_supervisor_policy:
 * @self: an [class@Atomr.Device]
 * @policy: the new policy
 *
 * Sets what happens when a sticky error poisons the context.
 *
 * Since: 0.1
 */
void
atomr_device_set_supervisor_policy (AtomrDevice          *self,
                                    AtomrSupervisorPolicy policy)
{
  gboolean changed;

  g_return_if_fail (ATOMR_IS_DEVICE (self));
  g_return_if_fail (policy <= ATOMR_SUPERVISOR_ESCALATE);

  g_mutex_lock (&self->lock);
  changed = self->policy != policy;
  self->policy = policy;
  g_mutex_unlock (&self->lock);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SUPERVISOR_POLICY]);
}

/* The context each thread made current last, with its generation: making
 * it current again is a driver call on every request otherwise. */
static __thread CUcontext tls_context;
static __thread guint     tls_generation;

static inline CUresult
make_current (AtomrDevice *self)
{
  CUcontext current = NULL;

  /* Other code on this thread may have switched contexts since (another
   * library, the application): the cache alone would go stale, so ask the
   * driver too — a thread-local read, no lock. */
  if (G_LIKELY (tls_context == self->context && tls_generation == self->generation) &&
      ATOMR_CU->cuCtxGetCurrent (&current) == CUDA_SUCCESS && current == self->context)
    return CUDA_SUCCESS;
  tls_context = self->context;
  tls_generation = self->generation;
  return ATOMR_CU->cuCtxSetCurrent (self->context);
}

CUdevice
atomr_device_get_cu_device (AtomrDevice *self)
{
  return self->cu_device;
}

CUcontext
atomr_device_get_cu_context (AtomrDevice *self)
{
  return self->context;
}

gboolean
atomr_device_enter (AtomrDevice *self,
                    GError     **error)
{
  gint state;

  if (!device_check_made (self, error))
    return FALSE;
  g_rw_lock_reader_lock (&self->ctx_lock);
  state = g_atomic_int_get (&self->state);
  if (G_UNLIKELY (state != ATOMR_DEVICE_STATE_READY))
    {
      g_rw_lock_reader_unlock (&self->ctx_lock);
      if (state == ATOMR_DEVICE_STATE_STOPPED)
        {
          g_mutex_lock (&self->lock);
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE,
                       "Device %d (%s) was stopped by its supervisor: %s", self->ordinal, self->name,
                       self->stop_reason ? self->stop_reason : "policy is stop");
          g_mutex_unlock (&self->lock);
        }
      else
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_CONTEXT_POISONED,
                     "The context of device %d (%s), generation %u, is poisoned; "
                     "it must be reset before it takes more work",
                     self->ordinal, self->name, atomr_device_get_generation (self));
      return FALSE;
    }
  if (!self->host)
    {
      CUresult res = make_current (self);
      if (res != CUDA_SUCCESS)
        {
          tls_context = NULL;
          g_rw_lock_reader_unlock (&self->ctx_lock);
          return atomr_cuda_check (res, "cuCtxSetCurrent", error);
        }
    }
  return TRUE;
}

void
atomr_device_leave (AtomrDevice *self)
{
  g_rw_lock_reader_unlock (&self->ctx_lock);
}

gboolean
atomr_device_hold (AtomrDevice *self,
                   guint        generation)
{
  g_rw_lock_reader_lock (&self->ctx_lock);
  if (generation != self->generation)
    {
      g_rw_lock_reader_unlock (&self->ctx_lock);
      return FALSE;
    }
  if (!self->host && make_current (self) != CUDA_SUCCESS)
    tls_context = NULL;
  return TRUE;
}

void
atomr_device_release (AtomrDevice *self)
{
  g_rw_lock_reader_unlock (&self->ctx_lock);
}

guint
atomr_device_next_stream_id (AtomrDevice *self)
{
  return (guint) g_atomic_int_add ((gint *) &self->next_stream_id, 1) + 1;
}

AtomrStream *
atomr_device_get_utility_stream (AtomrDevice *self,
                                 GError     **error)
{
  AtomrStream *stream = NULL;
  guint generation = atomr_device_get_generation (self);

  g_mutex_lock (&self->lock);
  if (self->utility && self->utility->generation == generation)
    stream = atomr_stream_ref (self->utility);
  g_mutex_unlock (&self->lock);
  if (stream)
    return stream;

  stream = atomr_stream_new (self, error);
  if (stream == NULL)
    return NULL;

  g_mutex_lock (&self->lock);
  if (self->utility && self->utility->generation == stream->generation)
    {
      /* Another thread won the race. */
      AtomrStream *winner = atomr_stream_ref (self->utility);
      g_mutex_unlock (&self->lock);
      atomr_stream_unref (stream);
      return winner;
    }
  g_clear_pointer (&self->utility, atomr_stream_unref);
  self->utility = atomr_stream_ref (stream);
  g_mutex_unlock (&self->lock);
  return stream;
}

CUstream
atomr_device_take_stream (AtomrDevice *self)
{
  CUstream stream = NULL;

  g_mutex_lock (&self->lock);
  if (self->streams->len > 0)
    {
      stream = g_array_index (self->streams, CUstream, self->streams->len - 1);
      g_array_set_size (self->streams, self->streams->len - 1);
    }
  g_mutex_unlock (&self->lock);
  return stream;
}

void
atomr_device_return_stream (AtomrDevice *self,
                            guint        generation,
                            CUstream     stream)
{
  g_mutex_lock (&self->lock);
  if (generation == self->generation && self->streams->len < 64)
    {
      g_array_append_val (self->streams, stream);
      stream = NULL;
    }
  g_mutex_unlock (&self->lock);

  /* Work already enqueued still runs: a destroyed stream drains. */
  if (stream && generation == atomr_device_get_generation (self) &&
      atomr_device_enter (self, NULL))
    {
      ATOMR_CU->cuStreamDestroy (stream);
      atomr_device_leave (self);
    }
}

CUevent
atomr_device_take_event (AtomrDevice   *self,
                         AtomrEventKind kind,
                         GError       **error)
{
  static const guint flags[ATOMR_EVENT_N_KINDS] = {
    [ATOMR_EVENT_PLAIN] = CU_EVENT_DISABLE_TIMING,
    [ATOMR_EVENT_BLOCKING] = CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC,
    [ATOMR_EVENT_TIMING] = CU_EVENT_DEFAULT,
  };
  GArray *pool = self->events[kind];
  CUevent event = NULL;
  CUresult res;

  g_mutex_lock (&self->lock);
  if (pool->len > 0)
    {
      event = g_array_index (pool, CUevent, pool->len - 1);
      g_array_set_size (pool, pool->len - 1);
    }
  g_mutex_unlock (&self->lock);
  if (event)
    return event;

  res = ATOMR_CU->cuEventCreate (&event, flags[kind]);
  if (!atomr_cuda_check (res, "cuEventCreate", error))
    return NULL;
  return event;
}

void
atomr_device_return_event (AtomrDevice   *self,
                           guint          generation,
                           CUevent        event,
                           AtomrEventKind kind)
{
  GArray *pool = self->events[kind];

  g_mutex_lock (&self->lock);
  /* An event of an older generation died with its context. */
  if (generation == self->generation && pool->len < EVENT_POOL_LIMIT)
    {
      g_array_append_val (pool, event);
      event = NULL;
    }
  g_mutex_unlock (&self->lock);

  if (event && generation == atomr_device_get_generation (self) &&
      atomr_device_enter (self, NULL))
    {
      ATOMR_CU->cuEventDestroy (event);
      atomr_device_leave (self);
    }
}

gpointer
atomr_device_pinned_take (AtomrDevice *self,
                          gsize        size,
                          guint       *generation,
                          GError     **error)
{
  GSList *list;
  gpointer data = NULL;
  CUresult res;

  g_mutex_lock (&self->lock);
  *generation = self->generation;
  list = g_hash_table_lookup (self->pinned, GSIZE_TO_POINTER (size));
  if (list)
    {
      data = list->data;
      g_hash_table_insert (self->pinned, GSIZE_TO_POINTER (size), g_slist_delete_link (list, list));
      self->pinned_pooled -= size;
    }
  g_mutex_unlock (&self->lock);
  if (data)
    return data;

  if (self->host)
    return g_malloc (size);

  if (!atomr_device_enter (self, error))
    return NULL;
  res = ATOMR_CU->cuMemHostAlloc (&data, size, CU_MEMHOSTALLOC_PORTABLE);
  atomr_device_leave (self);
  if (!atomr_cuda_check (res, "cuMemHostAlloc (pinned staging memory)", error))
    return NULL;
  return data;
}

void
atomr_device_pinned_give (AtomrDevice *self,
                          gpointer     data,
                          gsize        size,
                          guint        generation)
{
  gboolean keep = FALSE;

  g_mutex_lock (&self->lock);
  if (generation == self->generation && self->pinned_pooled + size <= PINNED_POOL_LIMIT)
    {
      GSList *list = g_hash_table_lookup (self->pinned, GSIZE_TO_POINTER (size));
      g_hash_table_insert (self->pinned, GSIZE_TO_POINTER (size), g_slist_prepend (list, data));
      self->pinned_pooled += size;
      keep = TRUE;
    }
  g_mutex_unlock (&self->lock);
  if (keep)
    return;

  if (self->host)
    g_free (data);
  else if (generation == atomr_device_get_generation (self) && atomr_device_enter (self, NULL))
    {
      ATOMR_CU->cuMemFreeHost (data);
      atomr_device_leave (self);
    }
}

static gpointer
device_thread_main (gpointer data)
{
  AtomrDevice *self = data;

  g_main_context_push_thread_default (self->thread_context);
  /* Only now may callers see the context: once we own it, nobody else can
   * acquire it and mistake it for an idle one. */
  g_mutex_lock (&self->lock);
  self->thread_running = TRUE;
  g_cond_broadcast (&self->thread_cond);
  g_mutex_unlock (&self->lock);
  g_main_loop_run (self->thread_loop);
  g_main_context_pop_thread_default (self->thread_context);
  return NULL;
}

GMainContext *
atomr_device_get_thread_context (AtomrDevice *self)
{
  g_mutex_lock (&self->lock);
  if (self->thread_context == NULL)
    {
      g_autofree gchar *name = g_strdup_printf ("atomr-dev%d", self->ordinal);
      self->thread_context = g_main_context_new ();
      self->thread_loop = g_main_loop_new (self->thread_context, FALSE);
      self->thread = g_thread_new (name, device_thread_main, self);
    }
  while (!self->thread_running)
    g_cond_wait (&self->thread_cond, &self->lock);
  g_mutex_unlock (&self->lock);
  return self->thread_context;
}

static void
set_state (AtomrDevice *self,
           AtomrDeviceState state)
{
  if (g_atomic_int_get (&self->state) != (gint) state)
    {
      g_atomic_int_set (&self->state, state);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
    }
}

/**
 * atomr_device_reset:
 * @self: an [class@Atomr.Device]
 * @error: return location for a [struct@GLib.Error]
 *
 * Rebuilds the device's context: waits for work in flight (a poisoned
 * context returns at once), resets the primary context, bumps
 * [property@Atomr.Device:generation] and emits [signal@Atomr.Device::context-rebuilt].
 * Everything allocated in the old context is gone: buffers, kernels and
 * library handles of older generations fail with %ATOMR_ERROR_STALE, and
 * actors take a fresh stream and fresh handles on their next request.
 *
 * A stopped device stays stopped.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_device_reset (AtomrDevice *self,
                    GError     **error)
{
  const AtomrCudaDriver *cu = ATOMR_CU;
  guint generation;
  gboolean ok = TRUE;
  AtomrStream *old_utility;

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!device_check_made (self, error))
    return FALSE;
  if (atomr_device_get_state (self) == ATOMR_DEVICE_STATE_STOPPED)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE,
                   "Device %d (%s) was stopped by its supervisor and cannot be reset",
                   self->ordinal, self->name);
      return FALSE;
    }

  g_rw_lock_writer_lock (&self->ctx_lock);
  if (!self->host)
    {
      if (cu->cuCtxSetCurrent (self->context) == CUDA_SUCCESS)
        cu->cuCtxSynchronize ();   /* errors are expected when poisoned */
      cu->cuCtxSetCurrent (NULL);
      tls_context = NULL;
      if (self->context_retained)
        cu->cuDevicePrimaryCtxRelease (self->cu_device);
      self->context_retained = FALSE;
      cu->cuDevicePrimaryCtxReset (self->cu_device);
      ok = atomr_cuda_check (cu->cuDevicePrimaryCtxRetain (&self->context, self->cu_device),
                             "cuDevicePrimaryCtxRetain", error);
      self->context_retained = ok;
    }

  g_mutex_lock (&self->lock);
  /* Pools of the old context died with it: forget them, free nothing. */
  for (guint k = 0; k < ATOMR_EVENT_N_KINDS; k++)
    g_array_set_size (self->events[k], 0);
  g_array_set_size (self->streams, 0);
  if (self->host)
    {
      GHashTableIter iter;
      gpointer list;
      g_hash_table_iter_init (&iter, self->pinned);
      while (g_hash_table_iter_next (&iter, NULL, &list))
        g_slist_free_full (list, g_free);
    }
  else
    {
      GHashTableIter iter;
      gpointer list;
      g_hash_table_iter_init (&iter, self->pinned);
      while (g_hash_table_iter_next (&iter, NULL, &list))
        g_slist_free (list);
    }
  g_hash_table_remove_all (self->pinned);
  self->pinned_pooled = 0;
  /* Released below, once the generation has moved on: a stream of a dead
   * context is forgotten, not destroyed (and we hold the write lock). */
  old_utility = g_steal_pointer (&self->utility);
  self->generation++;
  generation = self->generation;
  self->restart_pending = FALSE;
  g_mutex_unlock (&self->lock);
  g_rw_lock_writer_unlock (&self->ctx_lock);
  g_clear_pointer (&old_utility, atomr_stream_unref);

  if (!ok)
    {
      g_atomic_int_set (&self->state, ATOMR_DEVICE_STATE_POISONED);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
      return FALSE;
    }

  set_state (self, ATOMR_DEVICE_STATE_READY);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GENERATION]);
  g_signal_emit (self, signals[SIGNAL_CONTEXT_REBUILT], 0, generation);
  return TRUE;
}

/**
 * atomr_device_synchronize:
 * @self: an [class@Atomr.Device]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocks until all work on the device has finished.  Meant for scripts and
 * tests; actors never need it.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_device_synchronize (AtomrDevice *self,
                          GError     **error)
{
  gboolean ok = TRUE;
  guint generation;

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), FALSE);
  if (!device_check_made (self, error))
    return FALSE;
  if (self->host)
    return TRUE;
  if (!atomr_device_enter (self, error))
    return FALSE;
  generation = atomr_device_get_generation (self);
  {
    CUresult res = ATOMR_CU->cuCtxSynchronize ();
    ok = atomr_cuda_check (res, "cuCtxSynchronize", error);
    atomr_device_leave (self);
    if (!ok)
      atomr_device_report_result (self, generation, res);
  }
  return ok;
}

/**
 * atomr_device_get_memory_info: (skip)
 * @self: an [class@Atomr.Device]
 * @free_bytes: (out) (optional): free device memory
 * @total_bytes: (out) (optional): total device memory
 * @error: return location for a [struct@GLib.Error]
 *
 * Asks the driver how much memory is free.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_device_get_memory_info (AtomrDevice *self,
                              guint64     *free_bytes,
                              guint64     *total_bytes,
                              GError     **error)
{
  size_t f = 0, t = 0;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_DEVICE (self), FALSE);
  if (!device_check_made (self, error))
    return FALSE;
  if (self->host)
    {
      f = t = self->total_memory;
      ok = TRUE;
    }
  else
    {
      if (!atomr_device_enter (self, error))
        return FALSE;
      ok = atomr_cuda_check (ATOMR_CU->cuMemGetInfo (&f, &t), "cuMemGetInfo", error);
      atomr_device_leave (self);
    }
  if (free_bytes)
    *free_bytes = f;
  if (total_bytes)
    *total_bytes = t;
  return ok;
}

typedef struct {
  AtomrDevice *device;
  guint        generation;
  CUresult     result;
  GError      *error;
} PoisonData;

static void
poison_data_free (gpointer data)
{
  PoisonData *pd = data;
  g_object_unref (pd->device);
  g_clear_error (&pd->error);
  g_free (pd);
}

static void
emit_context_lost (AtomrDevice *self,
                   guint        generation)
{
  g_autoptr(GError) error = NULL;

  g_mutex_lock (&self->lock);
  error = g_error_new (ATOMR_ERROR, ATOMR_ERROR_UNRECOVERABLE,
                       "Device %d (%s) is lost to this process: %s. Save what the "
                       "application holds on the host and start a new process to use "
                       "this GPU again; until then every request fails",
                       self->ordinal, self->name, self->stop_reason);
  g_mutex_unlock (&self->lock);
  g_signal_emit (self, signals[SIGNAL_CONTEXT_LOST], 0, generation, error);
}

static gboolean
supervise (gpointer data)
{
  PoisonData *pd = data;
  AtomrDevice *self = pd->device;
  AtomrSupervisorPolicy policy;

  g_signal_emit (self, signals[SIGNAL_CONTEXT_POISONED], 0, pd->generation, pd->error);

  policy = atomr_device_get_supervisor_policy (self);
  g_signal_emit (self, signals[SIGNAL_CHOOSE_POLICY], 0, pd->generation, (gint) pd->result,
                 pd->error, &policy);
  if (atomr_device_get_generation (self) != pd->generation)
    return G_SOURCE_REMOVE;   /* somebody reset it already */

  switch (policy)
    {
    case ATOMR_SUPERVISOR_RESTART:
      {
        g_autoptr(GError) error = NULL;
        if (!atomr_device_reset (self, &error))
          {
            /* Some sticky errors (an illegal address) leave the driver
             * unable to make a new context in this process: stop, and say
             * why, instead of failing every request as merely poisoned. */
            g_mutex_lock (&self->lock);
            g_free (self->stop_reason);
            self->stop_reason = g_strdup_printf ("the context could not be rebuilt after \"%s\" "
                                                 "(%s); CUDA needs a new process to use this GPU again",
                                                 pd->error->message, error->message);
            g_mutex_unlock (&self->lock);
            g_message ("Device %d stopped: %s", self->ordinal, self->stop_reason);
            set_state (self, ATOMR_DEVICE_STATE_STOPPED);
            emit_context_lost (self, pd->generation);
          }
      }
      break;
    case ATOMR_SUPERVISOR_STOP:
      g_mutex_lock (&self->lock);
      g_free (self->stop_reason);
      self->stop_reason = g_strdup_printf ("policy is stop, after \"%s\"", pd->error->message);
      g_mutex_unlock (&self->lock);
      set_state (self, ATOMR_DEVICE_STATE_STOPPED);
      emit_context_lost (self, pd->generation);
      break;
    case ATOMR_SUPERVISOR_ESCALATE:
    default:
      break;
    }
  return G_SOURCE_REMOVE;
}

void
atomr_device_report_result (AtomrDevice *self,
                            guint        generation,
                            CUresult     result)
{
  PoisonData *pd;

  if (!atomr_cuda_result_is_sticky (result))
    return;

  g_mutex_lock (&self->lock);
  if (generation != self->generation || self->restart_pending ||
      g_atomic_int_get (&self->state) != ATOMR_DEVICE_STATE_READY)
    {
      g_mutex_unlock (&self->lock);
      return;
    }
  self->restart_pending = TRUE;
  g_atomic_int_set (&self->state, ATOMR_DEVICE_STATE_POISONED);
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);

  pd = g_new0 (PoisonData, 1);
  pd->device = g_object_ref (self);
  pd->generation = generation;
  pd->result = result;
  atomr_cuda_check (result, "a GPU operation", &pd->error);
  /* The supervisor runs on the device's own thread: never inside an
   * actor's dispatch, never while a caller holds the context lock. */
  g_main_context_invoke_full (atomr_device_get_thread_context (self), G_PRIORITY_HIGH,
                              supervise, pd, poison_data_free);
}

AtomrCompletionService *
atomr_device_get_completion_service (AtomrDevice *self)
{
  AtomrCompletionService *service;

  g_mutex_lock (&self->lock);
  if (self->completion == NULL)
    self->completion = atomr_completion_service_new ();
  service = self->completion;
  g_mutex_unlock (&self->lock);
  return service;
}

void
atomr_device_kick_completion (AtomrDevice *self)
{
  g_mutex_lock (&self->lock);
  if (self->completion)
    atomr_completion_service_kick (self->completion);
  g_mutex_unlock (&self->lock);
}
