/* atomr-buffer.c — device memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "atomr-actor-private.h"
#include "atomr-buffer-private.h"
#include "atomr-device-private.h"
#include "atomr-enum-types.h"
#include "atomr-error.h"
#include "atomr-memory-pool-private.h"

/**
 * AtomrBuffer:
 *
 * A block of device memory holding @n_elements values of one [enum@Atomr.Dtype],
 * with an optional shape.  Allocated with the stream-ordered allocator.
 *
 * A buffer belongs to the device generation it was allocated in.  When the
 * context is rebuilt the memory is gone, and every use of the buffer fails
 * at once with %ATOMR_ERROR_STALE.
 *
 * Buffers remember which operation last wrote them and which have read
 * them since, in the order the operations were submitted.  An actor that
 * reads a buffer on another stream makes its stream wait for the last
 * writer's CUDA event on the GPU; a writer also waits for the readers.  No
 * host thread ever blocks for ordering.
 *
 * The `upload`, `download` and `fill` conveniences go through the device's
 * default copy actor; use [method@Atomr.Actor.upload_async] and friends to choose
 * the stream.
 *
 * Since: 0.1
 */

struct _AtomrBuffer
{
  GObject      parent_instance;

  AtomrDevice *device;
  AtomrMemoryPool *pool;     /* the device's (owned by it), for the free */
  guint        generation;
  AtomrDtype   dtype;
  guint64      n_elements;
  guint64      byte_size;
  GArray      *shape;

  CUdeviceptr  ptr;
  gpointer     host_data;

  /* foreign memory (atomr_buffer_new_for_device_pointer ()): not ours to free */
  gboolean       foreign;
  GDestroyNotify foreign_notify;
  gpointer       foreign_data;
  gint           read_only;  /* atomic: never an operation's output */

  AtomrHazards hazards;      /* atomr-hazard.c */
};

G_DEFINE_FINAL_TYPE (AtomrBuffer, atomr_buffer, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DEVICE,
  PROP_DTYPE,
  PROP_N_ELEMENTS,
  PROP_BYTE_SIZE,
  PROP_GENERATION,
  PROP_READ_ONLY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void release_foreign (AtomrBuffer *self);

/* Gives the memory of a buffer of the current generation back (while
 * entered; every operation that used the buffer has completed or failed,
 * so every slot is resolved).  Into the pool's block cache with the
 * fences of its last users, so that the next buffer of the same size
 * starts after them, with no driver call; or, when the cache does not
 * take it, freed on the utility stream after them. */
static void
free_device_memory (AtomrBuffer *self)
{
  AtomrFence *fences[ATOMR_MEMORY_POOL_MAX_FENCES];
  guint n = atomr_hazards_take_fences (&self->hazards, fences, G_N_ELEMENTS (fences));
  g_autoptr(AtomrStream) utility = NULL;
  AtomrFence *ordered = NULL;

  if (n <= G_N_ELEMENTS (fences))
    {
      /* Fences nobody has asked about yet (typically the allocation's):
       * ask once, so that an idle block travels with nothing and its next
       * buffer needs no hazard slot at all. */
      for (guint i = 0; i < n;)
        if (atomr_fence_query (fences[i]) == CUDA_SUCCESS)
          {
            atomr_fence_unref (fences[i]);
            fences[i] = fences[--n];
          }
        else
          i++;
      if (atomr_memory_pool_put_cached (self->pool, self->device, self->generation, self->ptr,
                                        self->byte_size, fences, n))
        return;
      for (guint i = 0; i < n; i++)
        atomr_fence_unref (fences[i]);
    }
  utility = atomr_device_get_utility_stream (self->device, NULL);
  if (utility == NULL)
    return;   /* no stream to order the free on: the block stays reserved */
  atomr_hazards_order_all (&self->hazards, utility);
  /* Too many users to carry: the utility stream stands for them.  (A
   * pending slot, G_MAXUINT, should not exist here; if one does, the block
   * is not cached: freed as without the cache.) */
  if (n == G_N_ELEMENTS (fences) + 1 &&
      (ordered = atomr_stream_record (utility, ATOMR_EVENT_PLAIN, NULL)) != NULL &&
      atomr_memory_pool_put_cached (self->pool, self->device, self->generation, self->ptr,
                                    self->byte_size, &ordered, 1))
    return;
  g_clear_pointer (&ordered, atomr_fence_unref);
  ATOMR_CU->cuMemFreeAsync (self->ptr, utility->handle);
}

static void
atomr_buffer_finalize (GObject *object)
{
  AtomrBuffer *self = ATOMR_BUFFER (object);

  if (self->foreign)
    release_foreign (self);
  else if (self->host_data)
    {
      atomr_memory_pool_free_host (self->pool, self->host_data, self->byte_size);
    }
  else if (self->ptr && atomr_device_enter (self->device, NULL))
    {
      /* Entered, the generation cannot change under us: a buffer of an
       * older one must never give its (dead) address to the cache. */
      if (self->generation == atomr_device_get_generation (self->device))
        free_device_memory (self);
      atomr_device_leave (self->device);
    }
  /* Memory of an older generation died with its context. */

  atomr_hazards_clear (&self->hazards);
  g_clear_pointer (&self->shape, g_array_unref);
  g_clear_object (&self->device);

  G_OBJECT_CLASS (atomr_buffer_parent_class)->finalize (object);
}

static void
atomr_buffer_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  AtomrBuffer *self = ATOMR_BUFFER (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      g_value_set_object (value, self->device);
      break;
    case PROP_DTYPE:
      g_value_set_enum (value, self->dtype);
      break;
    case PROP_N_ELEMENTS:
      g_value_set_uint64 (value, self->n_elements);
      break;
    case PROP_BYTE_SIZE:
      g_value_set_uint64 (value, self->byte_size);
      break;
    case PROP_GENERATION:
      g_value_set_uint (value, self->generation);
      break;
    case PROP_READ_ONLY:
      g_value_set_boolean (value, atomr_buffer_get_read_only (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_buffer_class_init (AtomrBufferClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_buffer_finalize;
  object_class->get_property = atomr_buffer_get_property;

  /**
   * AtomrBuffer:device:
   *
   * The device that holds the memory.
   *
   * Since: 0.1
   */
  properties[PROP_DEVICE] =
    g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBuffer:dtype:
   *
   * The element type.
   *
   * Since: 0.1
   */
  properties[PROP_DTYPE] =
    g_param_spec_enum ("dtype", NULL, NULL, ATOMR_TYPE_DTYPE, ATOMR_DTYPE_F32,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBuffer:n-elements:
   *
   * The number of elements.
   *
   * Since: 0.1
   */
  properties[PROP_N_ELEMENTS] =
    g_param_spec_uint64 ("n-elements", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBuffer:byte-size:
   *
   * The size in bytes.
   *
   * Since: 0.1
   */
  properties[PROP_BYTE_SIZE] =
    g_param_spec_uint64 ("byte-size", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBuffer:generation:
   *
   * The device generation the memory was allocated in.
   *
   * Since: 0.1
   */
  properties[PROP_GENERATION] =
    g_param_spec_uint ("generation", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrBuffer:read-only:
   *
   * Whether no operation may write the memory: set for memory imported
   * from a read-only DLPack tensor or `__cuda_array_interface__`.  An
   * operation that would write the buffer (an upload, a fill, a copy
   * destination, any actor's output) fails with
   * %ATOMR_ERROR_INVALID_ARGUMENT when it is submitted.  Once set it stays
   * set.
   *
   * Since: 0.2
   */
  properties[PROP_READ_ONLY] =
    g_param_spec_boolean ("read-only", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_buffer_init (AtomrBuffer *self)
{
}

/**
 * atomr_buffer_new:
 * @device: the device to allocate on
 * @dtype: the element type
 * @n_elements: how many elements, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Allocates device memory for @n_elements values of @dtype (contents
 * undefined).  Asking for more than the device has fails with
 * %ATOMR_ERROR_OUT_OF_MEMORY and leaves the device usable.
 *
 * Returns: (transfer full): a new buffer, or %NULL on error
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_buffer_new (AtomrDevice  *device,
                  AtomrDtype    dtype,
                  guint64       n_elements,
                  GError      **error)
{
  g_autoptr(AtomrBuffer) self = NULL;
  gsize elem;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  elem = atomr_dtype_get_size (dtype);
  if (elem == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "Invalid dtype %d for a buffer", (int) dtype);
      return NULL;
    }
  if (n_elements == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A buffer needs at least one element (n_elements is 0)");
      return NULL;
    }
  if (n_elements > G_MAXUINT64 / elem)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A buffer of %" G_GUINT64_FORMAT " %s elements overflows 64 bits",
                   n_elements, atomr_dtype_get_name (dtype));
      return NULL;
    }

  self = g_object_new (ATOMR_TYPE_BUFFER, NULL);
  self->device = g_object_ref (device);
  self->pool = atomr_device_get_memory_pool (device);
  self->dtype = dtype;
  self->n_elements = n_elements;
  self->byte_size = n_elements * elem;

  if (!atomr_device_enter (device, error))
    return NULL;
  self->generation = atomr_device_get_generation (device);

  if (atomr_device_is_host (device))
    {
      self->host_data = atomr_memory_pool_alloc_host (self->pool, device, self->byte_size);
      atomr_device_leave (device);
      if (self->host_data == NULL)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_OUT_OF_MEMORY,
                       "Cannot allocate %" G_GUINT64_FORMAT " bytes of host memory",
                       self->byte_size);
          return NULL;
        }
      return g_steal_pointer (&self);
    }

  {
    AtomrFence *fences[ATOMR_MEMORY_POOL_MAX_FENCES];
    guint n_fences = 0;

    /* A block of a freed buffer of the same size: no driver call; its
     * first users wait for the last users of the old buffer. */
    self->ptr = atomr_memory_pool_take_cached (self->pool, device, self->byte_size,
                                               fences, &n_fences);
    if (self->ptr != 0)
      {
        atomr_device_leave (device);
        atomr_hazards_init_after (&self->hazards, fences, n_fences);
        return g_steal_pointer (&self);
      }
  }

  {
    g_autoptr(GError) local = NULL;
    g_autoptr(AtomrStream) utility = atomr_device_get_utility_stream (device, error);
    CUresult res;

    if (utility == NULL)
      {
        atomr_device_leave (device);
        return NULL;
      }
    res = atomr_memory_pool_alloc_async_in (self->pool, device, &self->ptr, self->byte_size,
                                            utility->handle);
    if (res != CUDA_SUCCESS)
      {
        self->ptr = 0;
        atomr_device_leave (device);
        atomr_cuda_check (res, "cuMemAllocFromPoolAsync", &local);
        g_set_error (error, local->domain, local->code,
                     "Cannot allocate %" G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT
                     " × %s) on device %d (%s, %" G_GUINT64_FORMAT " bytes in all): %s",
                     self->byte_size, n_elements, atomr_dtype_get_name (dtype),
                     atomr_device_get_ordinal (device), atomr_device_get_name (device),
                     atomr_device_get_total_memory (device), local->message);
        return NULL;
      }
    /* First users wait for the allocation on the GPU, like for a writer. */
    {
      g_autoptr(AtomrFence) fence = atomr_stream_record (utility, ATOMR_EVENT_PLAIN, error);
      atomr_device_leave (device);
      if (fence == NULL)
        return NULL;
      atomr_hazards_init_written (&self->hazards, fence);
    }
  }

  return g_steal_pointer (&self);
}

/**
 * atomr_buffer_new_with_shape:
 * @device: the device to allocate on
 * @dtype: the element type
 * @shape: (array length=n_dims): the extent of each dimension
 * @n_dims: the number of dimensions, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Allocates a buffer of the product of @shape elements and records the shape.
 *
 * Returns: (transfer full): a new buffer, or %NULL on error
 *
 * Since: 0.1
 */
AtomrBuffer *
atomr_buffer_new_with_shape (AtomrDevice   *device,
                             AtomrDtype     dtype,
                             const gint64  *shape,
                             guint          n_dims,
                             GError       **error)
{
  guint64 n = 1;
  AtomrBuffer *self;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);

  if (n_dims == 0 || shape == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A shape needs at least one dimension (n_dims is %u)", n_dims);
      return NULL;
    }
  for (guint i = 0; i < n_dims; i++)
    {
      if (shape[i] <= 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the shape is %" G_GINT64_FORMAT "; it must be positive",
                       i, shape[i]);
          return NULL;
        }
      if (n > G_MAXUINT64 / (guint64) shape[i])
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "The shape's element count overflows 64 bits at dimension %u", i);
          return NULL;
        }
      n *= (guint64) shape[i];
    }
  self = atomr_buffer_new (device, dtype, n, error);
  if (self && !atomr_buffer_set_shape (self, shape, n_dims, error))
    g_clear_object (&self);
  return self;
}

/**
 * atomr_buffer_get_device:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the device holding the memory.
 *
 * This is the value of the [property@Atomr.Buffer:device] property.
 *
 * Returns: (transfer none): the device holding the memory
 *
 * Since: 0.1
 */
AtomrDevice *
atomr_buffer_get_device (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), NULL);
  return self->device;
}

/**
 * atomr_buffer_get_dtype:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the element type.
 *
 * This is the value of the [property@Atomr.Buffer:dtype] property.
 *
 * Returns: the element type
 *
 * Since: 0.1
 */
AtomrDtype
atomr_buffer_get_dtype (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), ATOMR_DTYPE_F32);
  return self->dtype;
}

/**
 * atomr_buffer_get_n_elements:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the number of elements.
 *
 * This is the value of the [property@Atomr.Buffer:n-elements] property.
 *
 * Returns: the number of elements
 *
 * Since: 0.1
 */
guint64
atomr_buffer_get_n_elements (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), 0);
  return self->n_elements;
}

/**
 * atomr_buffer_get_byte_size:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the size in bytes.
 *
 * This is the value of the [property@Atomr.Buffer:byte-size] property.
 *
 * Returns: the size in bytes
 *
 * Since: 0.1
 */
guint64
atomr_buffer_get_byte_size (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), 0);
  return self->byte_size;
}

/**
 * atomr_buffer_get_shape:
 * @self: an [class@Atomr.Buffer]
 * @n_dims: (out): the number of dimensions, 0 when no shape was set
 *
 * Gets the shape.
 *
 * Returns: (array length=n_dims) (transfer none) (nullable): the shape
 *
 * Since: 0.1
 */
const gint64 *
atomr_buffer_get_shape (AtomrBuffer *self,
                        guint       *n_dims)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), NULL);
  *n_dims = self->shape ? self->shape->len : 0;
  return self->shape ? (const gint64 *) self->shape->data : NULL;
}

/**
 * atomr_buffer_set_shape:
 * @self: an [class@Atomr.Buffer]
 * @shape: (array length=n_dims): the extent of each dimension
 * @n_dims: the number of dimensions
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives the buffer a shape whose element count must equal the buffer's.
 *
 * Returns: %TRUE if the shape fits
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_set_shape (AtomrBuffer   *self,
                        const gint64  *shape,
                        guint          n_dims,
                        GError       **error)
{
  guint64 n = 1;

  g_return_val_if_fail (ATOMR_IS_BUFFER (self), FALSE);

  if (shape == NULL && n_dims > 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A shape of %u dimensions was given without its extents", n_dims);
      return FALSE;
    }
  for (guint i = 0; i < n_dims; i++)
    {
      if (shape[i] <= 0)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "Dimension %u of the shape is %" G_GINT64_FORMAT "; it must be positive",
                       i, shape[i]);
          return FALSE;
        }
      /* A product that wraps could land on the element count exactly
       * (2^32 × 2^32 + 1 is 1 modulo 2^64): check before multiplying. */
      if (n > G_MAXUINT64 / (guint64) shape[i])
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "The shape's element count overflows 64 bits at dimension %u "
                       "(extent %" G_GINT64_FORMAT "); the buffer holds %" G_GUINT64_FORMAT
                       " elements", i, shape[i], self->n_elements);
          return FALSE;
        }
      n *= (guint64) shape[i];
    }
  if (n_dims == 0 || n != self->n_elements)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "A shape of %" G_GUINT64_FORMAT " elements does not fit a buffer of %"
                   G_GUINT64_FORMAT, n_dims ? n : 0, self->n_elements);
      return FALSE;
    }
  g_clear_pointer (&self->shape, g_array_unref);
  self->shape = g_array_sized_new (FALSE, FALSE, sizeof (gint64), n_dims);
  g_array_append_vals (self->shape, shape, n_dims);
  return TRUE;
}

/**
 * atomr_buffer_get_generation:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the device generation the memory belongs to.
 *
 * This is the value of the [property@Atomr.Buffer:generation] property.
 *
 * Returns: the device generation the memory belongs to
 *
 * Since: 0.1
 */
guint
atomr_buffer_get_generation (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), 0);
  return self->generation;
}

/**
 * atomr_buffer_get_read_only:
 * @self: an [class@Atomr.Buffer]
 *
 * Gets the value of the [property@Atomr.Buffer:read-only] property.  May
 * be called from any thread.
 *
 * Returns: %TRUE when no operation may write the buffer
 *
 * Since: 0.2
 */
gboolean
atomr_buffer_get_read_only (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), FALSE);
  return g_atomic_int_get (&self->read_only) != 0;
}

/**
 * atomr_buffer_mark_read_only:
 * @self: an [class@Atomr.Buffer]
 *
 * Makes the buffer [property@Atomr.Buffer:read-only] for good: from now on
 * every operation submitted that would write it fails with
 * %ATOMR_ERROR_INVALID_ARGUMENT.  For memory a producer lends without the
 * right to write it (a read-only `__cuda_array_interface__`); DLPack
 * imports do it themselves.  Operations submitted before are not affected.
 * May be called from any thread.
 *
 * Since: 0.2
 */
void
atomr_buffer_mark_read_only (AtomrBuffer *self)
{
  g_return_if_fail (ATOMR_IS_BUFFER (self));
  if (g_atomic_int_compare_and_exchange (&self->read_only, 0, 1))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_READ_ONLY]);
}

/**
 * atomr_buffer_is_stale:
 * @self: an [class@Atomr.Buffer]
 *
 * Tells whether the device's context was rebuilt since allocation.
 *
 * Returns: %TRUE when the device's context was rebuilt since allocation
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_is_stale (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), TRUE);
  if (self->device == NULL)
    return TRUE;    /* built bare: no memory at all */
  return self->generation != atomr_device_get_generation (self->device);
}

/**
 * atomr_buffer_check:
 * @self: an [class@Atomr.Buffer]
 * @error: return location for a [struct@GLib.Error]
 *
 * Fails with %ATOMR_ERROR_STALE when the buffer's memory died with an
 * older context.
 *
 * Returns: %TRUE if the buffer is usable
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_check (AtomrBuffer  *self,
                    GError      **error)
{
  guint current;

  g_return_val_if_fail (ATOMR_IS_BUFFER (self), FALSE);
  if (G_UNLIKELY (self->device == NULL))
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "This AtomrBuffer was constructed directly (g_object_new() or a binding's "
                           "constructor) and has no memory: allocate buffers with atomr_buffer_new()");
      return FALSE;
    }
  current = atomr_device_get_generation (self->device);
  if (G_UNLIKELY (self->generation != current))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_STALE,
                   "Buffer of %" G_GUINT64_FORMAT " %s is stale: allocated in generation %u "
                   "of device %d, which is now at generation %u",
                   self->n_elements, atomr_dtype_get_name (self->dtype), self->generation,
                   atomr_device_get_ordinal (self->device), current);
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_buffer_get_device_pointer:
 * @self: an [class@Atomr.Buffer]
 *
 * An escape hatch for interoperation with other CUDA code.  The address is
 * valid only in the buffer's generation, and only after ordering with the
 * buffer's pending work (for example after a completed download).
 *
 * Returns: the device address, or 0 on the host test device
 *
 * Since: 0.1
 */
guint64
atomr_buffer_get_device_pointer (AtomrBuffer *self)
{
  g_return_val_if_fail (ATOMR_IS_BUFFER (self), 0);
  return (guint64) self->ptr;
}

CUdeviceptr
atomr_buffer_get_ptr (AtomrBuffer *self)
{
  return self->ptr;
}

gpointer
atomr_buffer_get_host_data (AtomrBuffer *self)
{
  return self->host_data;
}

AtomrHazards *
atomr_buffer_get_hazards (AtomrBuffer *self)
{
  return &self->hazards;
}

/* Conveniences through the device's default actor. */

static AtomrActor *
default_actor_or_fail (AtomrBuffer        *self,
                       gpointer            source_tag,
                       GAsyncReadyCallback callback,
                       gpointer            user_data)
{
  GError *error = NULL;
  AtomrActor *actor = atomr_device_get_default_actor (self->device, &error);

  if (actor == NULL)
    g_task_report_error (self, callback, user_data, source_tag, error);
  return actor;
}

typedef struct {
  GAsyncReadyCallback callback;
  gpointer            user_data;
  AtomrBuffer        *buffer;
  gboolean            returns_bytes;
} Forward;

/* Re-issues the actor's reply (an AtomrReply) as the buffer's own GTask,
 * so that the buffer is the source object the caller expects. */
static void
forward_reply (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  Forward *fw = data;
  GTask *task = g_task_new (fw->buffer, NULL, fw->callback, fw->user_data);
  GError *error = NULL;

  g_task_set_source_tag (task, forward_reply);
  if (fw->returns_bytes)
    {
      GBytes *bytes = atomr_reply_propagate_pointer (result, &error);
      if (error)
        g_task_return_error (task, error);
      else
        g_task_return_pointer (task, bytes, (GDestroyNotify) g_bytes_unref);
    }
  else if (atomr_reply_propagate_boolean (result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
  g_object_unref (fw->buffer);
  g_free (fw);
}

static gpointer
forward_new (AtomrBuffer        *self,
             gboolean            returns_bytes,
             GAsyncReadyCallback callback,
             gpointer            user_data)
{
  Forward *fw = g_new0 (Forward, 1);
  fw->callback = callback;
  fw->user_data = user_data;
  fw->buffer = g_object_ref (self);
  fw->returns_bytes = returns_bytes;
  return fw;
}

/**
 * atomr_buffer_upload_async:
 * @self: an [class@Atomr.Buffer]
 * @data: exactly [property@Atomr.Buffer:byte-size] bytes
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when the data is on the device
 * @user_data: data for @callback
 *
 * Copies @data to the buffer through the device's default copy actor.
 *
 * Since: 0.1
 */
void
atomr_buffer_upload_async (AtomrBuffer         *self,
                           GBytes              *data,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  AtomrActor *actor;

  g_return_if_fail (ATOMR_IS_BUFFER (self));
  g_return_if_fail (data != NULL);
  if ((actor = default_actor_or_fail (self, forward_reply, callback, user_data)))
    atomr_actor_upload_async (actor, self, data, cancellable, forward_reply,
                              forward_new (self, FALSE, callback, user_data));
}

/**
 * atomr_buffer_upload_finish:
 * @self: an [class@Atomr.Buffer]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Buffer.upload_async].
 *
 * Returns: %TRUE if the upload completed
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_upload_finish (AtomrBuffer   *self,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * atomr_buffer_upload_sync:
 * @self: an [class@Atomr.Buffer]
 * @data: exactly [property@Atomr.Buffer:byte-size] bytes
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking upload, for scripts and tests.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_upload_sync (AtomrBuffer   *self,
                          GBytes        *data,
                          GCancellable  *cancellable,
                          GError       **error)
{
  AtomrActor *actor;
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_BUFFER (self), FALSE);
  if (!(actor = atomr_device_get_default_actor (self->device, error)))
    return FALSE;
  atomr_sync_begin (&sync, actor);
  atomr_actor_upload_async (actor, self, data, cancellable, atomr_sync_callback, &sync);
  ok = atomr_actor_upload_finish (actor, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/**
 * atomr_buffer_download_async:
 * @self: an [class@Atomr.Buffer]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called with the contents
 * @user_data: data for @callback
 *
 * Copies the buffer to host memory through the device's default copy
 * actor, after the work that last wrote it.
 *
 * Since: 0.1
 */
void
atomr_buffer_download_async (AtomrBuffer         *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  AtomrActor *actor;

  g_return_if_fail (ATOMR_IS_BUFFER (self));
  if ((actor = default_actor_or_fail (self, forward_reply, callback, user_data)))
    atomr_actor_download_async (actor, self, cancellable, forward_reply,
                                forward_new (self, TRUE, callback, user_data));
}

/**
 * atomr_buffer_download_finish:
 * @self: an [class@Atomr.Buffer]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Buffer.download_async].
 *
 * Returns: (transfer full): the buffer's contents, or %NULL on error
 *
 * Since: 0.1
 */
GBytes *
atomr_buffer_download_finish (AtomrBuffer   *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * atomr_buffer_download_sync:
 * @self: an [class@Atomr.Buffer]
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking download, for scripts and tests.
 *
 * Returns: (transfer full): the contents, or %NULL on error
 *
 * Since: 0.1
 */
GBytes *
atomr_buffer_download_sync (AtomrBuffer   *self,
                            GCancellable  *cancellable,
                            GError       **error)
{
  AtomrActor *actor;
  AtomrSync sync;
  GBytes *bytes;

  g_return_val_if_fail (ATOMR_IS_BUFFER (self), NULL);
  if (!(actor = atomr_device_get_default_actor (self->device, error)))
    return NULL;
  atomr_sync_begin (&sync, actor);
  atomr_actor_download_async (actor, self, cancellable, atomr_sync_callback, &sync);
  bytes = atomr_actor_download_finish (actor, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return bytes;
}

/**
 * atomr_buffer_fill_async:
 * @self: an [class@Atomr.Buffer]
 * @value: the value, converted to the buffer's dtype (complex: real part)
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Sets every element to @value through the device's default copy actor.
 *
 * Since: 0.1
 */
void
atomr_buffer_fill_async (AtomrBuffer         *self,
                         gdouble              value,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  AtomrActor *actor;

  g_return_if_fail (ATOMR_IS_BUFFER (self));
  if ((actor = default_actor_or_fail (self, forward_reply, callback, user_data)))
    atomr_actor_fill_async (actor, self, value, cancellable, forward_reply,
                            forward_new (self, FALSE, callback, user_data));
}

/**
 * atomr_buffer_fill_finish:
 * @self: an [class@Atomr.Buffer]
 * @result: the [iface@Gio.AsyncResult]
 * @error: return location for a [struct@GLib.Error]
 *
 * Finishes the operation started with [method@Atomr.Buffer.fill_async].
 *
 * Returns: %TRUE if the fill completed
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_fill_finish (AtomrBuffer   *self,
                          GAsyncResult  *result,
                          GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * atomr_buffer_fill_sync:
 * @self: an [class@Atomr.Buffer]
 * @value: the value
 * @cancellable: (nullable): a [class@Gio.Cancellable]
 * @error: return location for a [struct@GLib.Error]
 *
 * Blocking fill, for scripts and tests.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_buffer_fill_sync (AtomrBuffer   *self,
                        gdouble        value,
                        GCancellable  *cancellable,
                        GError       **error)
{
  AtomrActor *actor;
  AtomrSync sync;
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_BUFFER (self), FALSE);
  if (!(actor = atomr_device_get_default_actor (self->device, error)))
    return FALSE;
  atomr_sync_begin (&sync, actor);
  atomr_actor_fill_async (actor, self, value, cancellable, atomr_sync_callback, &sync);
  ok = atomr_actor_fill_finish (actor, atomr_sync_wait (&sync), error);
  atomr_sync_end (&sync);
  return ok;
}

/* Encodes |@a| (finite, not NaN) in a binary format with @mant_bits
 * mantissa bits and exponent bias @bias, rounding once to nearest even
 * straight from the double: converting to float first would round twice
 * (1 + 2^-11 + 2^-40 would become the tie 1 + 2^-11 and then 1.0 in f16).
 * @a / quantum is exact in double (at most 53 significant bits and a power
 * of two divisor), so the only rounding is the one below.  The result may
 * carry into the exponent field; callers check it against their largest
 * finite encoding (a double's exponent, at most 1023, keeps the result
 * within 32 bits for every format here). */
static guint32
encode_binary (gdouble a,
               guint   mant_bits,
               gint    bias)
{
  gint e, exp, emin = 1 - bias;
  gdouble x, f, r;
  guint32 q;

  if (a == 0.0)
    return 0;
  (void) frexp (a, &e);                 /* a = m × 2^e, m in [0.5, 1) */
  exp = e - 1;                          /* a = 1.f × 2^exp */
  if (exp < emin)
    exp = emin;                         /* subnormal: fixed quantum */
  x = ldexp (a, (gint) mant_bits - exp);
  f = floor (x);
  r = x - f;
  if (r > 0.5 || (r == 0.5 && fmod (f, 2.0) != 0.0))
    f += 1.0;
  q = (guint32) f;                      /* in [0, 2^(mant_bits + 1)] */
  if (q < (1u << mant_bits))
    return q;                           /* subnormal (or zero) */
  /* normal: a carry out of the mantissa bumps the exponent by itself */
  return ((guint32) (exp - emin + 1) << mant_bits) + (q - (1u << mant_bits));
}

static guint16
double_to_half (gdouble d)
{
  guint16 sign = signbit (d) ? 0x8000 : 0;
  guint32 bits;

  if (isnan (d))
    return sign | 0x7e00;
  bits = isinf (d) ? G_MAXUINT32 : encode_binary (fabs (d), 10, 15);
  return sign | (guint16) MIN (bits, 0x7c00u);          /* overflow: inf */
}

static guint16
double_to_bf16 (gdouble d)
{
  guint16 sign = signbit (d) ? 0x8000 : 0;
  guint32 bits;

  if (isnan (d))
    return sign | 0x7fc0;
  bits = isinf (d) ? G_MAXUINT32 : encode_binary (fabs (d), 7, 127);
  return sign | (guint16) MIN (bits, 0x7f80u);
}

/* OCP E4M3: bias 7, no infinities, 0x7f/0xff are NaN, largest finite 448.
 * Round to nearest even, saturate out-of-range values to ±448. */
static guint8
double_to_e4m3 (gdouble d)
{
  guint8 sign = signbit (d) ? 0x80 : 0;
  guint32 bits;

  if (isnan (d))
    return 0x7f;
  bits = isinf (d) ? G_MAXUINT32 : encode_binary (fabs (d), 3, 7);
  return sign | (guint8) MIN (bits, 0x7eu);
}

/* OCP E5M2: IEEE-like, bias 15, infinities; largest finite 57344. */
static guint8
double_to_e5m2 (gdouble d)
{
  guint8 sign = signbit (d) ? 0x80 : 0;
  guint32 bits;

  if (isnan (d))
    return sign | 0x7e;
  bits = isinf (d) ? G_MAXUINT32 : encode_binary (fabs (d), 2, 15);
  return sign | (guint8) MIN (bits, 0x7cu);
}

/**
 * atomr_dtype_pack:
 * @dtype: an [enum@Atomr.Dtype]
 * @real: the value (or its real part)
 * @imag: the imaginary part, for complex dtypes
 *
 * Encodes one element of @dtype in the device's byte order: rounds to
 * nearest even for f16, bf16 and the fp8 formats (E4M3 saturates at ±448),
 * truncates toward zero and saturates for integers.
 *
 * Returns: (transfer full): the element's bytes, or %NULL for an invalid dtype
 *
 * Since: 0.1
 */
GBytes *
atomr_dtype_pack (AtomrDtype dtype,
                  gdouble    real,
                  gdouble    imag)
{
  guint8 out[16];
  gsize size = atomr_dtype_pack_into (dtype, real, imag, out);

  return size ? g_bytes_new (out, size) : NULL;
}

gsize
atomr_dtype_pack_into (AtomrDtype dtype,
                       gdouble    real,
                       gdouble    imag,
                       guint8     out[16])
{
  gsize size = atomr_dtype_get_size (dtype);

  memset (out, 0, 16);
#define SAT(type, lo, hi) \
  { type v = isnan (real) ? 0 : real <= (gdouble) (lo) ? (lo) : real >= (gdouble) (hi) ? (hi) : (type) real; \
    memcpy (out, &v, sizeof v); }

  switch (dtype)
    {
    case ATOMR_DTYPE_F16:
      { guint16 v = double_to_half (real); memcpy (out, &v, 2); }
      break;
    case ATOMR_DTYPE_BF16:
      { guint16 v = double_to_bf16 (real); memcpy (out, &v, 2); }
      break;
    case ATOMR_DTYPE_F8_E4M3:
      out[0] = double_to_e4m3 (real);
      break;
    case ATOMR_DTYPE_F8_E5M2:
      out[0] = double_to_e5m2 (real);
      break;
    case ATOMR_DTYPE_F32:
      { float v = (float) real; memcpy (out, &v, 4); }
      break;
    case ATOMR_DTYPE_F64:
      memcpy (out, &real, 8);
      break;
    case ATOMR_DTYPE_C64:
      { float v[2] = { (float) real, (float) imag }; memcpy (out, v, 8); }
      break;
    case ATOMR_DTYPE_C128:
      memcpy (out, &real, 8);
      memcpy (out + 8, &imag, 8);
      break;
    case ATOMR_DTYPE_I8:  SAT (gint8, G_MININT8, G_MAXINT8); break;
    case ATOMR_DTYPE_U8:  SAT (guint8, 0, G_MAXUINT8); break;
    case ATOMR_DTYPE_I32: SAT (gint32, G_MININT32, G_MAXINT32); break;
    case ATOMR_DTYPE_U32: SAT (guint32, 0, G_MAXUINT32); break;
    case ATOMR_DTYPE_I64: SAT (gint64, G_MININT64, G_MAXINT64); break;
    case ATOMR_DTYPE_U64: SAT (guint64, 0, G_MAXUINT64); break;
    default:
      return 0;
    }
#undef SAT
  return size;
}

/* ------------------------------------------------------------------ */
/* Foreign memory                                                       */

typedef struct {
  GDestroyNotify notify;
  gpointer       data;
  GMainContext  *context;
} ForeignRelease;

static gboolean
foreign_release_run (gpointer user_data)
{
  ForeignRelease *r = user_data;

  if (r->notify)
    r->notify (r->data);
  return G_SOURCE_REMOVE;
}

static void
foreign_release_free (gpointer user_data)
{
  ForeignRelease *r = user_data;

  g_main_context_unref (r->context);
  g_free (r);
}

/* Runs on a driver thread once the GPU passed the last work on the buffer:
 * no CUDA calls here, so the owner's notify runs on the device's thread. */
static void CUDA_CB
foreign_release_host_func (void *user_data)
{
  ForeignRelease *r = user_data;

  g_main_context_invoke_full (r->context, G_PRIORITY_DEFAULT, foreign_release_run, r,
                              foreign_release_free);
}

/* The owner of foreign memory gets it back only after the last work that
 * touched it has run on the GPU: the utility stream waits for the last
 * writer and the readers, then a host function hands the notify to the
 * device's thread.  When the context is gone (or on the host device) there
 * is nothing to wait for. */
static void
release_foreign (AtomrBuffer *self)
{
  ForeignRelease *r;

  if (self->foreign_notify == NULL)
    return;
  if (self->host_data == NULL && self->generation == atomr_device_get_generation (self->device))
    {
      /* the device thread's context before entering: it takes the device
       * lock, which must not be taken while entered */
      GMainContext *context = atomr_device_get_thread_context (self->device);
      g_autoptr(AtomrStream) utility = NULL;

      if (!atomr_device_enter (self->device, NULL))
        {
          self->foreign_notify (self->foreign_data);
          return;
        }
      utility = atomr_device_get_utility_stream (self->device, NULL);
      r = g_new0 (ForeignRelease, 1);
      r->notify = self->foreign_notify;
      r->data = self->foreign_data;
      r->context = g_main_context_ref (context);
      if (utility)
        atomr_hazards_order_all (&self->hazards, utility);
      if (utility && ATOMR_CU->cuLaunchHostFunc (utility->handle, foreign_release_host_func, r) == CUDA_SUCCESS)
        {
          atomr_device_leave (self->device);
          return;
        }
      /* No way to wait on the GPU timeline: wait here. */
      if (utility)
        ATOMR_CU->cuStreamSynchronize (utility->handle);
      atomr_device_leave (self->device);
      foreign_release_run (r);
      foreign_release_free (r);
      return;
    }
  self->foreign_notify (self->foreign_data);
}

AtomrBuffer *
atomr_buffer_new_foreign (AtomrDevice    *device,
                          AtomrDtype      dtype,
                          guint64         n_elements,
                          CUdeviceptr     ptr,
                          gpointer        host_data,
                          GDestroyNotify  notify,
                          gpointer        notify_data)
{
  AtomrBuffer *self = g_object_new (ATOMR_TYPE_BUFFER, NULL);

  self->device = g_object_ref (device);
  self->generation = atomr_device_get_generation (device);
  self->dtype = dtype;
  self->n_elements = n_elements;
  self->byte_size = n_elements * atomr_dtype_get_size (dtype);
  self->ptr = ptr;
  self->host_data = host_data;
  self->foreign = TRUE;
  self->foreign_notify = notify;
  self->foreign_data = notify_data;
  return self;
}
