/* atomr-kernel-cache.c — AtomrKernelCache: the object, its settings, and the compile path (lookup, single flight, store)
 *
 * The cache is split by concern (see atomr-kernel-cache-impl-private.h):
 * -format (the file), -entry (AtomrKernelCacheEntry), -memory, -disk,
 * -lock, -manifest (explain/diff), -gc (maintenance), -bundle
 * (export/import/remote).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"
#ifdef ATOMR_HAVE_SOUP
#include "atomr-remote-cache-private.h"
#endif
#include "atomr-compile-options-private.h"
#include "atomr-nvrtc-loader-private.h"

G_DEFINE_ENUM_TYPE (AtomrCacheStatus, atomr_cache_status,
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_NONE, "none"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_MISS, "miss"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_MEMORY_HIT, "memory-hit"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_DISK_HIT, "disk-hit"))
/**
 * AtomrKernelCache:
 *
 * Compiled kernels, in memory (least recently used dropped first) in front
 * of a directory with one checksummed file per entry.  The key covers the
 * source, the exact NVRTC flags, the architecture, NVRTC's identity, the
 * cache format version and the contents of the headers the source includes
 * from its include paths.  Several processes may share a directory: files
 * are written to a temporary name and renamed into place, and damaged or
 * foreign files are treated as misses and removed.
 *
 * Since: 0.1
 */
G_DEFINE_FINAL_TYPE (AtomrKernelCache, atomr_kernel_cache, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_DIRECTORY,
  PROP_MAX_SIZE,
  PROP_MEMORY_CAPACITY,
  PROP_STORE_SOURCE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];
void
atomr_cache_request_free (AtomrCacheRequest *request)
{
  /* A compile that failed (or was never stored) lets the next one try. */
  atomr_cache_flight_end (request);
  atomr_cache_disk_unlock (request);
  g_clear_object (&request->cache);
  g_free (request->program_name);
  g_strfreev (request->kernel_names);
  g_strfreev (request->flags);
  g_free (request->arch);
  g_clear_pointer (&request->link_objects, g_ptr_array_unref);
  g_clear_pointer (&request->memkey.key_part, g_bytes_unref);
  g_free (request->source);
  g_free (request->key);
  g_clear_pointer (&request->headers, g_ptr_array_unref);
  g_free (request);
}

const gchar *
atomr_cache_request_get_key (AtomrCacheRequest *request)
{
  return request->key;
}

static void
atomr_kernel_cache_finalize (GObject *object)
{
  AtomrKernelCache *self = ATOMR_KERNEL_CACHE (object);

  g_hash_table_unref (self->memory);
  g_hash_table_unref (self->key_memo);
  g_queue_clear (&self->key_memo_order);
  g_hash_table_unref (self->flights);
  g_clear_object (&self->remote);
  if (self->usage_fd >= 0)
    close (self->usage_fd);
  if (self->watch_fd >= 0)
    close (self->watch_fd);
  g_hash_table_unref (self->watched_dirs);
  g_cond_clear (&self->flight_done);
  g_queue_clear (&self->lru);
  g_mutex_clear (&self->lock);
  g_free (self->store_error);
  g_free (self->directory);
  G_OBJECT_CLASS (atomr_kernel_cache_parent_class)->finalize (object);
}

static void
atomr_kernel_cache_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  AtomrKernelCache *self = ATOMR_KERNEL_CACHE (object);

  switch (prop_id)
    {
    case PROP_DIRECTORY: g_value_set_string (value, self->directory); break;
    case PROP_MAX_SIZE: g_value_set_uint64 (value, self->max_size); break;
    case PROP_MEMORY_CAPACITY: g_value_set_uint (value, self->memory_capacity); break;
    case PROP_STORE_SOURCE: g_value_set_boolean (value, self->store_source); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static guint64 default_max_size (void);

static void
atomr_kernel_cache_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  AtomrKernelCache *self = ATOMR_KERNEL_CACHE (object);

  switch (prop_id)
    {
    case PROP_DIRECTORY:
      self->directory = g_value_dup_string (value);
      if (self->directory == NULL)
        {
          /* The default cache is bounded by default. */
          self->directory = atomr_kernel_cache_get_default_directory ();
          self->max_size = default_max_size ();
        }
      break;
    case PROP_MAX_SIZE: atomr_kernel_cache_set_max_size (self, g_value_get_uint64 (value)); break;
    case PROP_MEMORY_CAPACITY: atomr_kernel_cache_set_memory_capacity (self, g_value_get_uint (value)); break;
    case PROP_STORE_SOURCE: atomr_kernel_cache_set_store_source (self, g_value_get_boolean (value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_kernel_cache_class_init (AtomrKernelCacheClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_kernel_cache_finalize;
  object_class->get_property = atomr_kernel_cache_get_property;
  object_class->set_property = atomr_kernel_cache_set_property;

  /**
   * AtomrKernelCache:directory:
   *
   * The cache directory (created on the first store).
   *
   * Since: 0.1
   */
  properties[PROP_DIRECTORY] = g_param_spec_string ("directory", NULL, NULL, NULL,
                                                    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrKernelCache:max-size:
   *
   * Bytes on disk at most; after each store the least recently used
   * entries beyond it are removed.  0 for no limit.  A cache opened on the
   * default directory starts at `$ATOMR_CACHE_MAX_SIZE` (a size such as
   * `500M`; `0` for none) or 1 GiB; other caches at 0.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_SIZE] = g_param_spec_uint64 ("max-size", NULL, NULL, 0, G_MAXUINT64, 0, rw);
  /**
   * AtomrKernelCache:memory-capacity:
   *
   * Modules kept in memory at most (least recently used dropped first);
   * 0 disables the memory level.
   *
   * Since: 0.1
   */
  properties[PROP_MEMORY_CAPACITY] = g_param_spec_uint ("memory-capacity", NULL, NULL, 0, G_MAXUINT,
                                                        DEFAULT_MEMORY_CAPACITY, rw);
  /**
   * AtomrKernelCache:store-source:
   *
   * Whether new entries keep the source, for browsing.  Off unless
   * `ATOMR_CACHE_STORE_SOURCE=1` is set (sources may be confidential and
   * are often the bulk of an entry).
   *
   * Since: 0.1
   */
  properties[PROP_STORE_SOURCE] = g_param_spec_boolean ("store-source", NULL, NULL, FALSE, rw);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/* "1", "yes", "true" (anything but empty, "0", "no", "false"). */
static gboolean
env_flag (const gchar *name)
{
  const gchar *v = g_getenv (name);

  return v && *v && !g_str_equal (v, "0") && g_ascii_strcasecmp (v, "no") != 0
         && g_ascii_strcasecmp (v, "false") != 0;
}

static gboolean
store_source_default (void)
{
  return env_flag ("ATOMR_CACHE_STORE_SOURCE");
}

gboolean
atomr_kernel_cache_disabled_by_env (AtomrKernelCache *self)
{
  return self->env_disabled;
}

/* The size cap of caches in the default directory: $ATOMR_CACHE_MAX_SIZE
 * ("0" for none) or DEFAULT_MAX_SIZE. */
static guint64
default_max_size (void)
{
  const gchar *env = g_getenv ("ATOMR_CACHE_MAX_SIZE");
  g_autoptr(GError) error = NULL;
  guint64 size;

  if (env == NULL || *env == '\0')
    return DEFAULT_MAX_SIZE;
  if (atomr_parse_size (env, &size, &error))
    return size;
  g_warning ("ATOMR_CACHE_MAX_SIZE: %s; using %" G_GUINT64_FORMAT " bytes", error->message,
             (guint64) DEFAULT_MAX_SIZE);
  return DEFAULT_MAX_SIZE;
}

static void
atomr_kernel_cache_init (AtomrKernelCache *self)
{
  g_mutex_init (&self->lock);
  self->memory = g_hash_table_new_full (atomr_cache_memory_key_hash, atomr_cache_memory_key_equal, NULL,
                                        atomr_cache_memory_entry_free);
  self->key_memo = g_hash_table_new_full (atomr_cache_memory_key_hash, atomr_cache_memory_key_equal, NULL,
                                          atomr_cache_key_memo_free);
  self->flights = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->watched_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->watch_fd = -1;
#ifdef __linux__
  if (!env_flag ("ATOMR_CACHE_STAT_HEADERS"))
    self->watch_fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
#endif
  self->watch_gen = 1;
  self->usage_fd = -1;
  g_cond_init (&self->flight_done);
  self->memory_capacity = DEFAULT_MEMORY_CAPACITY;
  self->store_source = store_source_default ();
  self->env_disabled = env_flag ("ATOMR_CACHE_DISABLE");
}

/**
 * atomr_kernel_cache_get_default_directory:
 *
 * `$ATOMR_CACHE_DIR` if set, else `atomr/kernels` in the user cache
 * directory (`$XDG_CACHE_HOME`, ~/.cache).
 *
 * Returns: (transfer full) (type filename): the default cache directory
 *
 * Since: 0.1
 */
gchar *
atomr_kernel_cache_get_default_directory (void)
{
  const gchar *env = g_getenv ("ATOMR_CACHE_DIR");

  if (env && *env)
    return g_strdup (env);
  return g_build_filename (g_get_user_cache_dir (), "atomr", "kernels", NULL);
}

/**
 * atomr_kernel_cache_get_default:
 *
 * The process-wide cache at the default directory, created on first use;
 * what the NVRTC actor uses unless given another.
 *
 * Returns: (transfer none): the default cache
 *
 * Since: 0.1
 */
AtomrKernelCache *
atomr_kernel_cache_get_default (void)
{
  static gsize once;
  static AtomrKernelCache *cache;

  if (g_once_init_enter (&once))
    {
      cache = atomr_kernel_cache_new (NULL);
#ifdef ATOMR_HAVE_SOUP
      atomr_remote_cache_attach_from_env (cache);   /* ATOMR_CACHE_REMOTE */
#endif
      g_once_init_leave (&once, 1);
    }
  return cache;
}

/**
 * atomr_kernel_cache_new:
 * @directory: (nullable) (type filename): the cache directory, %NULL for
 *   [func@Atomr.KernelCache.get_default_directory]
 *
 * Opens a cache; the directory need not exist yet.
 *
 * Returns: (transfer full): a new cache
 *
 * Since: 0.1
 */
AtomrKernelCache *
atomr_kernel_cache_new (const gchar *directory)
{
  return g_object_new (ATOMR_TYPE_KERNEL_CACHE, "directory", directory, NULL);
}

/**
 * atomr_kernel_cache_get_directory:
 * @self: a cache
 *
 * Gets the cache directory.
 *
 * This is the value of the [property@Atomr.KernelCache:directory] property.
 *
 * Returns: (type filename): the cache directory
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_get_directory (AtomrKernelCache *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  return self->directory;
}

/**
 * atomr_kernel_cache_get_max_size:
 * @self: a cache
 *
 * Gets the size cap in bytes, 0 for none.
 *
 * This is the value of the [property@Atomr.KernelCache:max-size] property.
 *
 * Returns: the size cap in bytes, 0 for none
 *
 * Since: 0.1
 */
guint64
atomr_kernel_cache_get_max_size (AtomrKernelCache *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), 0);
  return self->max_size;
}

/**
 * atomr_kernel_cache_set_max_size:
 * @self: a cache
 * @max_size: bytes on disk at most, 0 for no limit
 *
 * Sets [property@Atomr.KernelCache:max-size].
 *
 * Since: 0.1
 */
void
atomr_kernel_cache_set_max_size (AtomrKernelCache *self,
                                 guint64           max_size)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  if (self->max_size == max_size)
    return;
  self->max_size = max_size;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_SIZE]);
}

/**
 * atomr_kernel_cache_get_memory_capacity:
 * @self: a cache
 *
 * Gets how many modules are kept in memory at most.
 *
 * This is the value of the [property@Atomr.KernelCache:memory-capacity] property.
 *
 * Returns: modules kept in memory at most
 *
 * Since: 0.1
 */
guint
atomr_kernel_cache_get_memory_capacity (AtomrKernelCache *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), 0);
  return self->memory_capacity;
}

/**
 * atomr_kernel_cache_set_memory_capacity:
 * @self: a cache
 * @capacity: modules kept in memory at most, 0 to disable the memory level
 *
 * Sets [property@Atomr.KernelCache:memory-capacity].
 *
 * Since: 0.1
 */
void
atomr_kernel_cache_set_memory_capacity (AtomrKernelCache *self,
                                        guint             capacity)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  if (self->memory_capacity == capacity)
    return;
  g_mutex_lock (&self->lock);
  self->memory_capacity = capacity;
  atomr_cache_memory_trim_locked (self, capacity);
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MEMORY_CAPACITY]);
}

/**
 * atomr_kernel_cache_get_store_source:
 * @self: a cache
 *
 * Gets whether entries keep their source.
 *
 * This is the value of the [property@Atomr.KernelCache:store-source] property.
 *
 * Returns: whether entries keep their source
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_cache_get_store_source (AtomrKernelCache *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  return self->store_source;
}

/**
 * atomr_kernel_cache_set_store_source:
 * @self: a cache
 * @store_source: whether new entries keep their source
 *
 * Sets [property@Atomr.KernelCache:store-source].
 *
 * Since: 0.1
 */
void
atomr_kernel_cache_set_store_source (AtomrKernelCache *self,
                                     gboolean          store_source)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  store_source = !!store_source;
  if (self->store_source == store_source)
    return;
  self->store_source = store_source;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STORE_SOURCE]);
}

/**
 * atomr_kernel_cache_clear_memory:
 * @self: a cache
 *
 * Drops every module kept in memory (the disk is untouched).
 *
 * Since: 0.1
 */
void
atomr_kernel_cache_clear_memory (AtomrKernelCache *self)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  g_mutex_lock (&self->lock);
  atomr_cache_memory_trim_locked (self, 0);
  g_mutex_unlock (&self->lock);
}

void
atomr_kernel_cache_get_counters (AtomrKernelCache *self,
                                 guint64          *memory_hits,
                                 guint64          *disk_hits,
                                 guint64          *misses)
{
  g_mutex_lock (&self->lock);
  *memory_hits = self->memory_hits;
  *disk_hits = self->disk_hits;
  *misses = self->misses;
  g_mutex_unlock (&self->lock);
}

/* The remote layer, after a disk miss: fetch, verify, backfill the disk,
 * read it back as any disk entry. */
static AtomrModuleContent *
remote_read (AtomrKernelCache *self,
             const gchar      *key)
{
  g_autoptr(GObject) remote = NULL;
  g_autoptr(GBytes) data = NULL;
  g_autoptr(GError) error = NULL;
  AtomrCacheRemoteFetch fetch;
  AtomrModuleContent *content;

  g_mutex_lock (&self->lock);
  remote = self->remote ? g_object_ref (self->remote) : NULL;
  fetch = self->remote_fetch;
  g_mutex_unlock (&self->lock);
  if (remote == NULL || fetch == NULL)
    return NULL;
  data = fetch (remote, key);
  if (data == NULL)
    return NULL;
  if (!atomr_kernel_cache_adopt_entry (self, key, data, &error))
    {
      g_debug ("kernel cache: remote entry %s not used: %s", key, error->message);
      return NULL;
    }
  content = atomr_cache_disk_read (self, key);
  if (content)
    {
      g_mutex_lock (&self->lock);
      self->remote_hits++;
      g_mutex_unlock (&self->lock);
    }
  return content;
}

/* After a memory miss: waits for a compile of the same key in this
 * process, then reads the disk, then takes the key's lock file.  Returns a
 * module on a hit; NULL when @request is to compile and store. */
static AtomrModule *
lookup_single_flight (AtomrKernelCache  *self,
                      AtomrCacheRequest *request)
{
  AtomrModuleContent *content;
  AtomrModule *module;
  gboolean waited = FALSE;

  if (self->probe)
    {
      content = atomr_cache_disk_read (self, request->key);
      if (content == NULL)
        return NULL;
      module = atomr_module_new (content, ATOMR_CACHE_STATUS_DISK_HIT);
      atomr_module_content_unref (content);
      return module;
    }
  g_mutex_lock (&self->lock);
  while (g_hash_table_contains (self->flights, request->key))
    {
      waited = TRUE;
      self->flight_waiters++;
      g_cond_wait (&self->flight_done, &self->lock);
      self->flight_waiters--;
    }
  if (waited)
    {
      MemoryEntry *e = g_hash_table_lookup (self->memory, &request->memkey);
      if (e)
        {
          g_queue_unlink (&self->lru, e->link);
          g_queue_push_head_link (&self->lru, e->link);
          self->memory_hits++;
          module = atomr_cache_memory_entry_module_locked (e);
          g_mutex_unlock (&self->lock);
          return module;
        }
    }
  g_hash_table_add (self->flights, g_strdup (request->key));
  request->in_flight = TRUE;
  if (request->cache == NULL)
    request->cache = g_object_ref (self);
  g_mutex_unlock (&self->lock);

  content = atomr_cache_disk_read (self, request->key);
  if (content == NULL)
    content = remote_read (self, request->key);
  if (content == NULL)
    content = atomr_cache_disk_lock (self, request);
  if (content == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  self->disk_hits++;
  atomr_cache_memory_insert_locked (self, &request->memkey, content, request->headers);
  g_mutex_unlock (&self->lock);
  atomr_cache_flight_end (request);
  module = atomr_module_new (content, ATOMR_CACHE_STATUS_DISK_HIT);
  atomr_module_content_unref (content);
  return module;
}

AtomrModule *
atomr_kernel_cache_lookup_request (AtomrKernelCache         *self,
                                   const AtomrCacheKeyInput *input,
                                   AtomrCacheRequest       **request_out)
{
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(GBytes) key_part = NULL;
  g_autoptr(GError) error = NULL;
  AtomrModule *module;
  MemoryKey memkey;

  /* The memory level first: a hash of the source and one table lookup
   * (the options' share of the key comes precomputed from the options'
   * snapshot on the compile path). */
  if (input->key_part)
    atomr_cache_memory_key_init (&memkey, input->key_part, input->key_part_hash,
                                 input->program_name, input->source);
  else
    {
      key_part = atomr_cache_options_blob (input->flags, input->kernel_names, input->arch,
                                           input->link_objects);
      atomr_cache_memory_key_init (&memkey, key_part, atomr_cache_bytes_hash (key_part),
                                   input->program_name, input->source);
    }
  module = atomr_cache_memory_lookup (self, &memkey, TRUE);
  if (module)
    return module;

  request = g_new0 (AtomrCacheRequest, 1);
  /* The key: the request plus every file NVRTC may read for it (computed
   * once and remembered while those files do not change).  A request
   * that cannot be keyed bypasses the cache (*request_out stays NULL). */
  request->key = self->probe ? NULL : atomr_cache_key_memo_lookup (self, &memkey, TRUE, &request->headers);
  if (request->key == NULL)
    {
      g_autoptr(GBytes) blob = atomr_cache_request_blob (input);

      g_clear_pointer (&request->headers, g_ptr_array_unref);
      request->key = atomr_cache_key_compute (blob, input, &request->headers, &error);
      if (request->key == NULL)
        {
          g_debug ("kernel cache: not cached: %s", error->message);
          return NULL;
        }
      if (!self->probe)
        atomr_cache_key_memo_insert (self, &memkey, request->key, request->headers);
    }
  request->program_name = g_strdup (memkey.program_name);
  request->source = g_strdup (input->source);
  request->memkey = memkey;
  request->memkey.key_part = g_bytes_ref (memkey.key_part);
  request->memkey.program_name = request->program_name;
  request->memkey.source = request->source;

  module = lookup_single_flight (self, request);
  if (module)
    return module;
  /* What only the manifest of a new entry needs: not copied on a hit. */
  request->kernel_names = g_strdupv ((gchar **) input->kernel_names);
  request->flags = g_strdupv ((gchar **) input->flags);
  request->arch = g_strdup (input->arch);
  request->link_objects = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; input->link_objects && i < input->link_objects->len; i++)
    g_ptr_array_add (request->link_objects,
                     g_bytes_ref (((AtomrLinkObject *) g_ptr_array_index (input->link_objects, i))->data));
  *request_out = g_steal_pointer (&request);
  return NULL;
}

AtomrModule *
atomr_kernel_cache_lookup_memory (AtomrKernelCache         *self,
                                  const AtomrCacheKeyInput *input)
{
  MemoryKey memkey;

  g_return_val_if_fail (input->key_part != NULL, NULL);
  atomr_cache_memory_key_init (&memkey, input->key_part, input->key_part_hash,
                               input->program_name, input->source);
  return atomr_cache_memory_lookup (self, &memkey, FALSE);
}

AtomrModule *
atomr_kernel_cache_lookup_nonblocking (AtomrKernelCache         *self,
                                       const AtomrCacheKeyInput *input)
{
  g_autoptr(AtomrModuleContent) content = NULL;
  g_autoptr(GPtrArray) headers = NULL;
  g_autofree gchar *key = NULL;
  AtomrModule *module;
  MemoryKey memkey;

  g_return_val_if_fail (input->key_part != NULL, NULL);
  atomr_cache_memory_key_init (&memkey, input->key_part, input->key_part_hash,
                               input->program_name, input->source);
  module = atomr_cache_memory_lookup (self, &memkey, FALSE);
  if (module || self->probe)
    return module;
  /* The disk key as this process computed it before, still valid without
   * a stat() of its headers. */
  key = atomr_cache_key_memo_lookup (self, &memkey, FALSE, &headers);
  if (key == NULL)
    return NULL;
  /* Being compiled here: the blocking path waits for it. */
  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->flights, key))
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  g_mutex_unlock (&self->lock);
  content = atomr_cache_disk_read_full (self, key, TRUE);
  if (content == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  self->disk_hits++;
  atomr_cache_memory_insert_locked (self, &memkey, content, headers);
  g_mutex_unlock (&self->lock);
  return atomr_module_new (content, ATOMR_CACHE_STATUS_DISK_HIT);
}

void
atomr_kernel_cache_store (AtomrKernelCache   *self,
                          AtomrCacheRequest  *request,
                          AtomrModuleContent *content,
                          const gchar        *source)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) manifest = NULL;

  g_free (content->key);
  content->key = g_strdup (request->key);
  g_mutex_lock (&self->lock);
  self->misses++;
  atomr_cache_memory_insert_locked (self, &request->memkey, content, request->headers);
  g_mutex_unlock (&self->lock);
  atomr_cache_flight_end (request);   /* waiters in this process find it in memory */

  manifest = atomr_cache_manifest_build (request, source);
  /* what ptxas reported: not an input of the key (diff and explain skip it) */
  if (content->resources)
    json_object_set_member (json_node_get_object (manifest), "resources", json_node_copy (content->resources));
  if (!atomr_cache_disk_write (self, request->key, content, source, manifest, &error))
    {
      atomr_cache_disk_unlock (request);
      atomr_cache_note_store_failure (self, error, TRUE);
      return;
    }
  atomr_cache_disk_unlock (request);  /* other processes find it on disk */
  atomr_cache_stats_add (self, 0, 1);
  {
    g_autoptr(GObject) remote = NULL;
    AtomrCacheRemoteStored stored;

    g_mutex_lock (&self->lock);
    remote = self->remote ? g_object_ref (self->remote) : NULL;
    stored = self->remote_stored;
    g_mutex_unlock (&self->lock);
    if (remote && stored)
      {
        g_autofree gchar *path = atomr_cache_entry_path (self, request->key);
        stored (remote, request->key, path);
      }
  }
  if (self->max_size > 0)
    {
      AtomrKernelCacheReport report;
      /* Headers only: verifying every checksum is `atomr cache gc`'s job. */
      if (!atomr_cache_gc_internal (self, self->max_size, FALSE, FALSE, &report, &error))
        g_debug ("kernel cache: eviction failed: %s", error->message);
    }
}

void
atomr_kernel_cache_evict_rejected (AtomrKernelCache *self,
                                   const gchar      *key,
                                   const gchar      *why)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  if (key == NULL)
    return;
  g_atomic_int_inc (&self->n_rejected);
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_INFO,
                    "ATOMR_CACHE_EVENT", "rejected-image",
                    "ATOMR_CACHE_KEY", key,
                    "MESSAGE", "kernel cache: the driver rejected entry %s (%s): evicted, compiling again",
                    key, why ? why : "");
  {
    g_autofree gchar *path = atomr_cache_entry_path (self, key);
    GHashTableIter iter;
    MemoryEntry *e;

    g_mutex_lock (&self->lock);
    g_hash_table_iter_init (&iter, self->memory);
    while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &e))
      if (g_strcmp0 (e->content->key, key) == 0)
        {
          g_queue_unlink (&self->lru, e->link);
          g_list_free (e->link);
          g_hash_table_iter_remove (&iter);
        }
    g_mutex_unlock (&self->lock);
    if (g_unlink (path) != 0 && errno != ENOENT)
      g_debug ("kernel cache: evicting %s: %s", path, g_strerror (errno));
  }
}

guint
atomr_kernel_cache_get_n_rejected (AtomrKernelCache *self)
{
  return (guint) g_atomic_int_get (&self->n_rejected);
}

gboolean
atomr_kernel_cache_write_entry (AtomrKernelCache    *self,
                                const gchar         *key,
                                AtomrModuleContent  *content,
                                const gchar         *source,
                                GError             **error)
{
  g_return_val_if_fail (atomr_cache_key_is_valid (key), FALSE);
  return atomr_cache_disk_write (self, key, content, source, NULL, error);
}

void
atomr_kernel_cache_set_remote (AtomrKernelCache       *self,
                               GObject                *remote,
                               AtomrCacheRemoteFetch   fetch,
                               AtomrCacheRemoteStored  stored)
{
  GObject *old;

  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  g_mutex_lock (&self->lock);
  old = self->remote;
  self->remote = remote ? g_object_ref (remote) : NULL;
  self->remote_fetch = remote ? fetch : NULL;
  self->remote_stored = remote ? stored : NULL;
  g_mutex_unlock (&self->lock);
  g_clear_object (&old);
}

guint64
atomr_kernel_cache_get_remote_hits (AtomrKernelCache *self)
{
  guint64 n;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), 0);
  g_mutex_lock (&self->lock);
  n = self->remote_hits;
  g_mutex_unlock (&self->lock);
  return n;
}

void
atomr_kernel_cache_seal_entry_data (guint8 *data,
                                    gsize   size)
{
  guint8 digest[32];

  if (size < ATOMR_CACHE_HEADER_SIZE)
    return;
  atomr_cache_compute_checksum (data, data + ATOMR_CACHE_HEADER_SIZE, size - ATOMR_CACHE_HEADER_SIZE, digest);
  memcpy (data + OFF_CHECKSUM, digest, sizeof digest);
}
