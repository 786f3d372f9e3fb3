/* atomr-memory-pool.c — the stream-ordered allocator of a device
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <string.h>

#include "atomr-device-private.h"
#include "atomr-error.h"
#include "atomr-memory-pool-private.h"

/**
 * AtomrMemoryPool:
 *
 * The memory pool every [class@Atomr.Buffer] of a device is allocated from: a
 * `CUmemoryPool` of the device's own (cuMemPoolCreate), used with
 * cuMemAllocFromPoolAsync() on the device's utility stream and
 * cuMemFreeAsync() after the last work on a buffer.  Allocation and free
 * are ordered on the GPU timeline: no host thread waits for either.
 *
 * Freed memory stays reserved by the pool for the next allocation up to
 * [property@Atomr.MemoryPool:release-threshold] bytes (by default all of it, as
 * PyTorch's caching allocator does), so a loop that allocates and frees
 * costs no driver allocation after the first round.  [method@Atomr.MemoryPool.trim]
 * gives unused memory back to the driver.
 *
 * On top of that, the block of a freed buffer is kept for the next buffer
 * of the same byte size, which takes it with no driver call at all; its
 * first users wait on the GPU for the last users of the old buffer.  The
 * cache holds only memory the pool allocated in the current context
 * (never memory wrapped from elsewhere), is given back to the driver when
 * an allocation misses it, by [method@Atomr.MemoryPool.trim] and by
 * [method@Atomr.MemoryPool.reset_high_water], and is off while
 * [property@Atomr.MemoryPool:release-threshold] is not %G_MAXUINT64.
 *
 * [property@Atomr.MemoryPool:reserved], [property@Atomr.MemoryPool:used] and
 * [property@Atomr.MemoryPool:high-water] are read from the driver when asked for; they
 * change with every allocation and are not notified.  A context rebuild
 * ([method@Atomr.Device.reset]) starts a new pool: the old one died with its
 * memory.
 *
 * On the host test device the same statistics are kept by hand for the
 * buffers in host memory, so code and tests behave alike without a GPU.
 *
 * Thread safety: every method may be called from any thread.
 *
 * Since: 0.2
 */

struct _AtomrMemoryPool
{
  GObject       parent_instance;

  GWeakRef      device;
  GMutex        lock;
  guint64       threshold;
  /* under the lock: the pool of one generation */
  CUmemoryPool  handle;
  guint         generation;
  gboolean      failed;         /* cuMemPoolCreate refused: use the default pool */
  /* host test device accounting, under the lock */
  guint64       host_used, host_cached, host_high;
  /* under the lock: blocks of freed buffers by exact byte size (a GArray of
   * CachedBlock per size, used as a stack), reused without a driver call;
   * they still count as used by the driver's pool (see "Block cache" in
   * docs/DESIGN-NOTES.md) */
  GHashTable   *cache;
  guint64       cached_bytes;
  guint         cache_generation;
  guint64       cache_hits;
  gboolean      host;           /* the cache holds host memory (g_free) */
};

/* A cached block: its address and the fences of its last users that were
 * not known to have finished when it was freed (references; none when the
 * memory was idle).  Blocks are all of the generation cache_generation. */
typedef struct {
  guint64     addr;
  guint       n_fences;
  AtomrFence *fences[ATOMR_MEMORY_POOL_MAX_FENCES];
} CachedBlock;

G_DEFINE_FINAL_TYPE (AtomrMemoryPool, atomr_memory_pool, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DEVICE,
  PROP_RESERVED,
  PROP_USED,
  PROP_HIGH_WATER,
  PROP_RELEASE_THRESHOLD,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
atomr_memory_pool_finalize (GObject *object)
{
  AtomrMemoryPool *self = ATOMR_MEMORY_POOL (object);

  /* The device outlives its pool (the pool hangs off the device), and a
   * CUmemoryPool of a live context is destroyed with it by the driver when
   * the process ends; nothing is freed here. */
  {
    GHashTableIter iter;
    gpointer value;

    g_hash_table_iter_init (&iter, self->cache);
    while (g_hash_table_iter_next (&iter, NULL, &value))
      for (guint i = 0; i < ((GArray *) value)->len; i++)
        {
          CachedBlock *block = &g_array_index ((GArray *) value, CachedBlock, i);

          if (self->host)
            g_free (GSIZE_TO_POINTER ((gsize) block->addr));
          for (guint j = 0; j < block->n_fences; j++)
            atomr_fence_unref (block->fences[j]);
        }
  }
  g_weak_ref_clear (&self->device);
  g_mutex_clear (&self->lock);
  g_clear_pointer (&self->cache, g_hash_table_unref);

  G_OBJECT_CLASS (atomr_memory_pool_parent_class)->finalize (object);
}

static void
atomr_memory_pool_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  AtomrMemoryPool *self = ATOMR_MEMORY_POOL (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      g_value_take_object (value, g_weak_ref_get (&self->device));
      break;
    case PROP_RESERVED:
      g_value_set_uint64 (value, atomr_memory_pool_get_reserved (self));
      break;
    case PROP_USED:
      g_value_set_uint64 (value, atomr_memory_pool_get_used (self));
      break;
    case PROP_HIGH_WATER:
      g_value_set_uint64 (value, atomr_memory_pool_get_high_water (self));
      break;
    case PROP_RELEASE_THRESHOLD:
      g_value_set_uint64 (value, atomr_memory_pool_get_release_threshold (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_memory_pool_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  AtomrMemoryPool *self = ATOMR_MEMORY_POOL (object);

  switch (prop_id)
    {
    case PROP_RELEASE_THRESHOLD:
      atomr_memory_pool_set_release_threshold (self, g_value_get_uint64 (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_memory_pool_class_init (AtomrMemoryPoolClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = atomr_memory_pool_finalize;
  object_class->get_property = atomr_memory_pool_get_property;
  object_class->set_property = atomr_memory_pool_set_property;

  /**
   * AtomrMemoryPool:device:
   *
   * The device whose buffers the pool holds (%NULL for a bare instance).
   *
   * Since: 0.2
   */
  properties[PROP_DEVICE] =
    g_param_spec_object ("device", NULL, NULL, ATOMR_TYPE_DEVICE,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrMemoryPool:reserved:
   *
   * Bytes the pool holds from the driver: in use plus cached for reuse.
   * Read on demand, not notified.
   *
   * Since: 0.2
   */
  properties[PROP_RESERVED] =
    g_param_spec_uint64 ("reserved", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrMemoryPool:used:
   *
   * Bytes allocated to buffers (and not yet freed on the GPU timeline).
   * Read on demand, not notified.
   *
   * Since: 0.2
   */
  properties[PROP_USED] =
    g_param_spec_uint64 ("used", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrMemoryPool:high-water:
   *
   * The most bytes ever used at once since the pool was made or
   * [method@Atomr.MemoryPool.reset_high_water].  Read on demand, not notified.
   *
   * Since: 0.2
   */
  properties[PROP_HIGH_WATER] =
    g_param_spec_uint64 ("high-water", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrMemoryPool:release-threshold:
   *
   * How many reserved bytes the pool keeps when the GPU is idle; memory
   * above it goes back to the driver at the next synchronization.  The
   * default, %G_MAXUINT64, keeps everything until [method@Atomr.MemoryPool.trim].
   *
   * Since: 0.2
   */
  properties[PROP_RELEASE_THRESHOLD] =
    g_param_spec_uint64 ("release-threshold", NULL, NULL, 0, G_MAXUINT64, G_MAXUINT64,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
atomr_memory_pool_init (AtomrMemoryPool *self)
{
  g_weak_ref_init (&self->device, NULL);
  g_mutex_init (&self->lock);
  self->threshold = G_MAXUINT64;
  self->cache = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL,
                                       (GDestroyNotify) g_array_unref);
}

G_LOCK_DEFINE_STATIC (pools);

/**
 * atomr_device_get_memory_pool:
 * @device: an [class@Atomr.Device]
 *
 * The pool the device's buffers come from; the same object for the life
 * of the device.
 *
 * Returns: (transfer none): the memory pool
 *
 * Since: 0.2
 */
AtomrMemoryPool *
atomr_device_get_memory_pool (AtomrDevice *device)
{
  static GQuark quark;
  AtomrMemoryPool *pool;

  g_return_val_if_fail (ATOMR_IS_DEVICE (device), NULL);

  if (G_UNLIKELY (quark == 0))
    quark = g_quark_from_static_string ("atomr-memory-pool");

  /* Set once and kept for the life of the device: qdata is read safely
   * without our lock (the allocation path asks for it every time). */
  pool = g_object_get_qdata (G_OBJECT (device), quark);
  if (G_LIKELY (pool != NULL))
    return pool;
  G_LOCK (pools);
  pool = g_object_get_qdata (G_OBJECT (device), quark);
  if (pool == NULL)
    {
      pool = g_object_new (ATOMR_TYPE_MEMORY_POOL, NULL);
      g_weak_ref_set (&pool->device, device);
      g_object_set_qdata_full (G_OBJECT (device), quark, pool, g_object_unref);
    }
  G_UNLOCK (pools);
  return pool;
}

/* The pool of the current generation, made on first use (while entered).
 * Called with the lock held. */
static CUmemoryPool
current_handle_locked (AtomrMemoryPool *self,
                       AtomrDevice     *device)
{
  guint generation = atomr_device_get_generation (device);
  CUmemPoolProps props = { 0, };
  cuuint64_t threshold = self->threshold;
  CUmemoryPool handle = NULL;

  if (self->handle && self->generation == generation)
    return self->handle;
  if (self->failed && self->generation == generation)
    return NULL;

  /* A pool of an older generation died with its context: forget it. */
  self->handle = NULL;
  self->failed = FALSE;
  self->generation = generation;

  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = atomr_device_get_ordinal (device);
  if (ATOMR_CU->cuMemPoolCreate (&handle, &props) != CUDA_SUCCESS ||
      ATOMR_CU->cuMemPoolSetAttribute (handle, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                       &threshold) != CUDA_SUCCESS)
    {
      g_debug ("device %d: no memory pool of our own; using the driver's default pool",
               atomr_device_get_ordinal (device));
      if (handle)
        ATOMR_CU->cuMemPoolDestroy (handle);
      self->failed = TRUE;
      return NULL;
    }
  self->handle = handle;
  return handle;
}

static void
account_host_locked (AtomrMemoryPool *self,
                     gint64           delta)
{
  if (delta > 0)
    {
      guint64 n = (guint64) delta;
      self->host_cached -= MIN (self->host_cached, n);
      self->host_used += n;
      self->host_high = MAX (self->host_high, self->host_used);
    }
  else
    {
      guint64 n = (guint64) -delta;
      self->host_used -= MIN (self->host_used, n);
      self->host_cached += n;
      if (self->host_used + self->host_cached > self->threshold)
        self->host_cached = self->threshold > self->host_used ? self->threshold - self->host_used : 0;
    }
}

/* Hands every cached block back: to the driver's pool with cuMemFreeAsync on
 * @stream after making @stream wait for the fences the block carries (its
 * last users), or to the allocator on the host device.  Blocks of an older
 * generation died with their context and are only forgotten.  The fences
 * go to @drop, to be unreferenced once the lock is released (that takes
 * the device's lock; host blocks carry none, and pass NULL).  Called with the lock held (and, on a GPU, while
 * entered). */
static void
flush_cache_locked (AtomrMemoryPool *self,
                    AtomrDevice     *device,
                    CUstream         stream,
                    GPtrArray      **drop)
{
  gboolean host = atomr_device_is_host (device);
  guint generation = atomr_device_get_generation (device);
  gboolean alive = host || self->cache_generation == generation;
  GHashTableIter iter;
  gpointer key, value;

  if (self->cached_bytes == 0)
    return;
  g_hash_table_iter_init (&iter, self->cache);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      GArray *blocks = value;
      gsize size = GPOINTER_TO_SIZE (key);

      for (guint i = 0; i < blocks->len; i++)
        {
          CachedBlock *block = &g_array_index (blocks, CachedBlock, i);

          if (host)
            {
              g_free (GSIZE_TO_POINTER ((gsize) block->addr));
              account_host_locked (self, -(gint64) size);
            }
          else if (alive && stream != NULL)
            {
              for (guint j = 0; j < block->n_fences; j++)
                {
                  AtomrFence *fence = block->fences[j];

                  if ((g_atomic_int_get (&fence->signalled) && fence->result == CUDA_SUCCESS) ||
                      fence->generation != generation || fence->stream->handle == stream)
                    continue;
                  ATOMR_CU->cuStreamWaitEvent (stream, fence->event, 0);
                }
              ATOMR_CU->cuMemFreeAsync ((CUdeviceptr) block->addr, stream);
            }
          for (guint j = 0; j < block->n_fences; j++)
            {
              if (drop == NULL)
                {
                  atomr_fence_unref (block->fences[j]);
                  continue;
                }
              if (*drop == NULL)
                *drop = g_ptr_array_new_with_free_func ((GDestroyNotify) atomr_fence_unref);
              g_ptr_array_add (*drop, block->fences[j]);
            }
        }
    }
  g_hash_table_remove_all (self->cache);
  self->cached_bytes = 0;
}

/* Takes a cached block of exactly @size bytes, FALSE if there is none.
 * Called with the lock held. */
static gboolean
take_cached_locked (AtomrMemoryPool *self,
                    gsize            size,
                    CachedBlock     *out)
{
  GArray *blocks = g_hash_table_lookup (self->cache, GSIZE_TO_POINTER (size));

  if (blocks == NULL || blocks->len == 0)
    return FALSE;
  *out = g_array_index (blocks, CachedBlock, blocks->len - 1);
  g_array_set_size (blocks, blocks->len - 1);
  self->cached_bytes -= size;
  self->cache_hits++;
  return TRUE;
}

static void
put_cached_locked (AtomrMemoryPool   *self,
                   const CachedBlock *block,
                   gsize              size)
{
  GArray *blocks = g_hash_table_lookup (self->cache, GSIZE_TO_POINTER (size));

  if (blocks == NULL)
    {
      blocks = g_array_new (FALSE, FALSE, sizeof (CachedBlock));
      g_hash_table_insert (self->cache, GSIZE_TO_POINTER (size), blocks);
    }
  g_array_append_vals (blocks, block, 1);
  self->cached_bytes += size;
}

CUresult
atomr_memory_pool_alloc_async (AtomrDevice *device,
                               CUdeviceptr *ptr,
                               gsize        size,
                               CUstream     stream)
{
  return atomr_memory_pool_alloc_async_in (atomr_device_get_memory_pool (device),
                                           device, ptr, size, stream);
}

CUresult
atomr_memory_pool_alloc_async_in (AtomrMemoryPool *self,
                                  AtomrDevice     *device,
                                  CUdeviceptr     *ptr,
                                  gsize            size,
                                  CUstream         stream)
{
  g_autoptr(GPtrArray) drop = NULL;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUmemoryPool handle;

  /* An allocation in a capture would belong to the graph, and the frees of
   * the flush below would become graph nodes: buffers are allocated
   * outside graphs (atomr_buffer_new() uses the utility stream, which no
   * graph captures). */
  if (ATOMR_CU->cuStreamGetCaptureInfo (stream, &capture, NULL, NULL, NULL, NULL, NULL) == CUDA_SUCCESS &&
      capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;

  g_mutex_lock (&self->lock);
  handle = current_handle_locked (self, device);
  if (self->cache_generation != self->generation)
    {
      /* a new context: the cached blocks died with the old one */
      flush_cache_locked (self, device, NULL, &drop);
      self->cache_generation = self->generation;
    }
  /* A miss gives the cached blocks back to the driver's pool first, so the
   * pool reserves no more than it would without the cache (and reuses
   * them on this stream at once, after their last users). */
  flush_cache_locked (self, device, stream, &drop);
  g_mutex_unlock (&self->lock);

  if (handle == NULL)
    return ATOMR_CU->cuMemAllocAsync (ptr, size, stream);
  return ATOMR_CU->cuMemAllocFromPoolAsync (ptr, size, handle, stream);
}

CUmemoryPool
atomr_memory_pool_get_handle (AtomrMemoryPool *self,
                              AtomrDevice     *device)
{
  CUmemoryPool handle;

  g_mutex_lock (&self->lock);
  handle = current_handle_locked (self, device);
  g_mutex_unlock (&self->lock);
  return handle;
}

CUdeviceptr
atomr_memory_pool_take_cached (AtomrMemoryPool  *self,
                               AtomrDevice      *device,
                               gsize             size,
                               AtomrFence      **fences,
                               guint            *n_fences)
{
  guint generation = atomr_device_get_generation (device);
  CachedBlock block;
  gboolean hit;

  *n_fences = 0;
  g_mutex_lock (&self->lock);
  hit = self->handle != NULL && self->generation == generation &&
        self->cache_generation == generation && take_cached_locked (self, size, &block);
  g_mutex_unlock (&self->lock);
  if (!hit)
    return 0;
  memcpy (fences, block.fences, block.n_fences * sizeof (AtomrFence *));
  *n_fences = block.n_fences;
  return (CUdeviceptr) block.addr;
}

gboolean
atomr_memory_pool_put_cached (AtomrMemoryPool  *self,
                              AtomrDevice      *device,
                              guint             generation,
                              CUdeviceptr       ptr,
                              gsize             size,
                              AtomrFence      **fences,
                              guint             n_fences)
{
  CachedBlock block = { (guint64) ptr, n_fences, { NULL, } };
  gboolean kept = FALSE;

  g_return_val_if_fail (n_fences <= ATOMR_MEMORY_POOL_MAX_FENCES, FALSE);
  memcpy (block.fences, fences, n_fences * sizeof (AtomrFence *));
  g_mutex_lock (&self->lock);
  /* Only a block of the pool of the current generation (the caller is
   * entered, so that cannot change meanwhile): memory of an older
   * context is gone, and must never reach a new buffer. */
  if (self->handle != NULL && self->generation == generation &&
      self->cache_generation == generation &&
      atomr_device_get_generation (device) == generation &&
      self->threshold == G_MAXUINT64)
    {
      put_cached_locked (self, &block, size);
      kept = TRUE;
    }
  g_mutex_unlock (&self->lock);
  return kept;
}

gpointer
atomr_memory_pool_alloc_host (AtomrMemoryPool *self,
                              AtomrDevice     *device,
                              gsize            size)
{
  gpointer data;
  CachedBlock block;

  g_mutex_lock (&self->lock);
  if (take_cached_locked (self, size, &block))
    {
      g_mutex_unlock (&self->lock);
      /* like fresh memory of the host device: zeroed */
      data = GSIZE_TO_POINTER ((gsize) block.addr);
      memset (data, 0, size);
      return data;
    }
  /* host blocks carry no fences: nothing to drop */
  flush_cache_locked (self, device, NULL, NULL);
  g_mutex_unlock (&self->lock);

  data = g_try_malloc0 (size);
  if (data == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  account_host_locked (self, (gint64) size);
  g_mutex_unlock (&self->lock);
  return data;
}

void
atomr_memory_pool_free_host (AtomrMemoryPool *self,
                             gpointer         data,
                             gsize            size)
{

  g_mutex_lock (&self->lock);
  self->host = TRUE;
  if (self->threshold == G_MAXUINT64)
    {
      CachedBlock block = { (guint64) GPOINTER_TO_SIZE (data), 0, { NULL, } };
      put_cached_locked (self, &block, size);
    }
  else
    {
      g_free (data);
      account_host_locked (self, -(gint64) size);
    }
  g_mutex_unlock (&self->lock);
}

guint64
atomr_memory_pool_get_cache_hits (AtomrMemoryPool *self)
{
  guint64 hits;

  g_mutex_lock (&self->lock);
  hits = self->cache_hits;
  g_mutex_unlock (&self->lock);
  return hits;
}

guint64
atomr_memory_pool_get_cached_bytes (AtomrMemoryPool *self)
{
  guint64 bytes;

  g_mutex_lock (&self->lock);
  bytes = self->cached_bytes;
  g_mutex_unlock (&self->lock);
  return bytes;
}

void
atomr_memory_pool_account_host (AtomrDevice *device,
                                gint64       delta)
{
  AtomrMemoryPool *self = atomr_device_get_memory_pool (device);

  g_mutex_lock (&self->lock);
  account_host_locked (self, delta);
  g_mutex_unlock (&self->lock);
}

/* Reads one attribute of the current generation's pool, 0 when there is
 * none (or on the host device, where @host_value is the answer). */
static guint64
read_attribute (AtomrMemoryPool      *self,
                CUmemPool_attribute   attr,
                guint64               host_value)
{
  g_autoptr(AtomrDevice) device = g_weak_ref_get (&self->device);
  cuuint64_t value = 0;

  if (device == NULL)
    return 0;
  if (atomr_device_is_host (device))
    return host_value;
  if (!atomr_device_enter (device, NULL))
    return 0;
  g_mutex_lock (&self->lock);
  if (self->handle && self->generation == atomr_device_get_generation (device) &&
      ATOMR_CU->cuMemPoolGetAttribute (self->handle, attr, &value) != CUDA_SUCCESS)
    value = 0;
  g_mutex_unlock (&self->lock);
  atomr_device_leave (device);
  return value;
}

/**
 * atomr_memory_pool_get_device:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Gets the device, %NULL for a bare instance.
 *
 * This is the value of the [property@Atomr.MemoryPool:device] property.
 *
 * Returns: (transfer none) (nullable): the device, %NULL for a bare instance
 *
 * Since: 0.2
 */
AtomrDevice *
atomr_memory_pool_get_device (AtomrMemoryPool *self)
{
  g_autoptr(AtomrDevice) device = NULL;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), NULL);
  device = g_weak_ref_get (&self->device);
  /* the device owns the pool, so it outlives this call's caller's use */
  return device;
}

/**
 * atomr_memory_pool_get_reserved:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Gets the bytes the pool holds from the driver.
 *
 * This is the value of the [property@Atomr.MemoryPool:reserved] property.
 *
 * Returns: the bytes the pool holds from the driver
 *
 * Since: 0.2
 */
guint64
atomr_memory_pool_get_reserved (AtomrMemoryPool *self)
{
  guint64 host;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), 0);
  g_mutex_lock (&self->lock);
  host = self->host_used + self->host_cached;
  g_mutex_unlock (&self->lock);
  return read_attribute (self, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, host);
}

/**
 * atomr_memory_pool_get_used:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Gets the bytes allocated to buffers.
 *
 * This is the value of the [property@Atomr.MemoryPool:used] property.
 *
 * Returns: the bytes allocated to buffers
 *
 * Since: 0.2
 */
guint64
atomr_memory_pool_get_used (AtomrMemoryPool *self)
{
  guint64 host;

  guint64 value;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), 0);
  g_mutex_lock (&self->lock);
  host = self->host_used;
  g_mutex_unlock (&self->lock);
  value = read_attribute (self, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, host);
  /* the driver counts the cached blocks as used; no buffer uses them */
  g_mutex_lock (&self->lock);
  value -= MIN (value, self->cached_bytes);
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * atomr_memory_pool_get_high_water:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Gets the most bytes used at once since the last reset.
 *
 * This is the value of the [property@Atomr.MemoryPool:high-water] property.
 *
 * Returns: the most bytes used at once since the last reset
 *
 * Since: 0.2
 */
guint64
atomr_memory_pool_get_high_water (AtomrMemoryPool *self)
{
  guint64 host;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), 0);
  g_mutex_lock (&self->lock);
  host = self->host_high;
  g_mutex_unlock (&self->lock);
  return read_attribute (self, CU_MEMPOOL_ATTR_USED_MEM_HIGH, host);
}

/**
 * atomr_memory_pool_get_release_threshold:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Gets the bytes the pool keeps reserved when idle.
 *
 * This is the value of the [property@Atomr.MemoryPool:release-threshold] property.
 *
 * Returns: the bytes the pool keeps reserved when idle
 *
 * Since: 0.2
 */
guint64
atomr_memory_pool_get_release_threshold (AtomrMemoryPool *self)
{
  guint64 value;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), 0);
  g_mutex_lock (&self->lock);
  value = self->threshold;
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * atomr_memory_pool_set_release_threshold:
 * @self: an [class@Atomr.MemoryPool]
 * @bytes: the bytes to keep reserved when idle (%G_MAXUINT64: all)
 *
 * Sets [property@Atomr.MemoryPool:release-threshold]; it applies to the pool of the
 * current generation and to the pools of later ones.
 *
 * Since: 0.2
 */
void
atomr_memory_pool_set_release_threshold (AtomrMemoryPool *self,
                                         guint64          bytes)
{
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(AtomrStream) utility = NULL;
  g_autoptr(GPtrArray) drop = NULL;
  gboolean changed;

  g_return_if_fail (ATOMR_IS_MEMORY_POOL (self));

  device = g_weak_ref_get (&self->device);
  if (device && !atomr_device_is_host (device) && !atomr_device_enter (device, NULL))
    g_clear_object (&device);   /* no context now: the next pool gets it */
  if (device && !atomr_device_is_host (device) && bytes != G_MAXUINT64)
    utility = atomr_device_get_utility_stream (device, NULL);
  g_mutex_lock (&self->lock);
  changed = self->threshold != bytes;
  self->threshold = bytes;
  /* the block cache works only while the pool keeps everything */
  if (device && bytes != G_MAXUINT64 && (atomr_device_is_host (device) || utility))
    flush_cache_locked (self, device, utility ? utility->handle : NULL, &drop);
  if (device && atomr_device_is_host (device) && self->host_used + self->host_cached > bytes)
    self->host_cached = bytes > self->host_used ? bytes - self->host_used : 0;
  else if (device && self->handle && self->generation == atomr_device_get_generation (device))
    {
      cuuint64_t value = bytes;
      ATOMR_CU->cuMemPoolSetAttribute (self->handle, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value);
    }
  g_mutex_unlock (&self->lock);
  if (device && !atomr_device_is_host (device))
    atomr_device_leave (device);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RELEASE_THRESHOLD]);
}

/**
 * atomr_memory_pool_trim:
 * @self: an [class@Atomr.MemoryPool]
 * @min_bytes_to_keep: reserved bytes to keep for reuse
 * @error: return location for a [struct@GLib.Error]
 *
 * Gives reserved memory that no buffer uses back to the driver, keeping at
 * least @min_bytes_to_keep.  Memory of buffers freed on the GPU timeline
 * but whose last work is still running is not yet unused and stays.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_memory_pool_trim (AtomrMemoryPool  *self,
                        guint64           min_bytes_to_keep,
                        GError          **error)
{
  g_autoptr(AtomrDevice) device = NULL;
  g_autoptr(AtomrStream) utility = NULL;
  g_autoptr(GPtrArray) drop = NULL;
  gboolean ok = TRUE;
  gboolean flushed;

  g_return_val_if_fail (ATOMR_IS_MEMORY_POOL (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  device = g_weak_ref_get (&self->device);
  if (device == NULL)
    {
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "The memory pool has no device (it was made with g_object_new(); "
                           "use atomr_device_get_memory_pool())");
      return FALSE;
    }
  if (atomr_device_is_host (device))
    {
      g_mutex_lock (&self->lock);
      flush_cache_locked (self, device, NULL, NULL);
      if (self->host_used + self->host_cached > min_bytes_to_keep)
        self->host_cached = min_bytes_to_keep > self->host_used ? min_bytes_to_keep - self->host_used : 0;
      g_mutex_unlock (&self->lock);
      return TRUE;
    }
  if (!atomr_device_enter (device, error))
    return FALSE;
  utility = atomr_device_get_utility_stream (device, error);
  if (utility == NULL)
    {
      atomr_device_leave (device);
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  flushed = self->cached_bytes > 0;
  flush_cache_locked (self, device, utility->handle, &drop);
  g_mutex_unlock (&self->lock);
  /* The cached blocks were freed on the utility stream, after their last
   * users: wait for the frees so that the driver can give them back (the
   * only host wait of the pool, in an explicit maintenance call). */
  if (flushed &&
      !atomr_cuda_check (ATOMR_CU->cuStreamSynchronize (utility->handle),
                         "cuStreamSynchronize", error))
    {
      atomr_device_leave (device);
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  if (self->handle && self->generation == atomr_device_get_generation (device))
    ok = atomr_cuda_check (ATOMR_CU->cuMemPoolTrimTo (self->handle, min_bytes_to_keep),
                           "cuMemPoolTrimTo", error);
  g_mutex_unlock (&self->lock);
  atomr_device_leave (device);
  return ok;
}

/**
 * atomr_memory_pool_reset_high_water:
 * @self: an [class@Atomr.MemoryPool]
 *
 * Restarts [property@Atomr.MemoryPool:high-water] from the bytes used now.
 * The blocks kept for reuse are given back to the driver first (on a GPU
 * this waits for their frees), so that the mark counts buffers only.
 *
 * Since: 0.2
 */
void
atomr_memory_pool_reset_high_water (AtomrMemoryPool *self)
{
  g_autoptr(AtomrDevice) device = NULL;

  g_return_if_fail (ATOMR_IS_MEMORY_POOL (self));

  device = g_weak_ref_get (&self->device);
  if (device == NULL)
    return;
  if (atomr_device_is_host (device))
    {
      g_mutex_lock (&self->lock);
      flush_cache_locked (self, device, NULL, NULL);
      self->host_high = self->host_used;
      g_mutex_unlock (&self->lock);
      return;
    }
  if (!atomr_device_enter (device, NULL))
    return;
  /* The driver counts cached blocks as used: give them back first (and
   * let the frees pass), so that the mark restarts from the buffers' bytes. */
  {
    g_autoptr(AtomrStream) utility = atomr_device_get_utility_stream (device, NULL);
    g_autoptr(GPtrArray) drop = NULL;
    gboolean flushed = FALSE;

    if (utility)
      {
        g_mutex_lock (&self->lock);
        flushed = self->cached_bytes > 0;
        flush_cache_locked (self, device, utility->handle, &drop);
        g_mutex_unlock (&self->lock);
        if (flushed)
          ATOMR_CU->cuStreamSynchronize (utility->handle);
      }
  }
  g_mutex_lock (&self->lock);
  if (self->handle && self->generation == atomr_device_get_generation (device))
    {
      cuuint64_t zero = 0;
      ATOMR_CU->cuMemPoolSetAttribute (self->handle, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero);
    }
  g_mutex_unlock (&self->lock);
  atomr_device_leave (device);
}
