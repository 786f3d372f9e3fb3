/* atomr-kernel-cache-entry.c — AtomrKernelCacheEntry: one entry file, as listed
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

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"

/**
 * AtomrKernelCacheEntry:
 *
 * One entry of a cache directory, as listed by [method@Atomr.KernelCache.list]:
 * its metadata is read when listed; the source, log, PTX, CUBIN and LTO-IR
 * are read (and checksummed) on demand by the `load` functions.
 *
 * Since: 0.1
 */
G_DEFINE_FINAL_TYPE (AtomrKernelCacheEntry, atomr_kernel_cache_entry, G_TYPE_OBJECT)

enum {
  ENTRY_PROP_0,
  ENTRY_PROP_KEY,
  ENTRY_PROP_PATH,
  ENTRY_PROP_KERNEL_NAMES,
  ENTRY_PROP_LOWERED_NAMES,
  ENTRY_PROP_FLAGS,
  ENTRY_PROP_ARCH,
  ENTRY_PROP_NVRTC_VERSION,
  ENTRY_PROP_PTX_SIZE,
  ENTRY_PROP_CUBIN_SIZE,
  ENTRY_PROP_LTOIR_SIZE,
  ENTRY_PROP_SOURCE_SIZE,
  ENTRY_PROP_FILE_SIZE,
  ENTRY_PROP_COMPILE_TIME_MS,
  ENTRY_PROP_CREATED,
  ENTRY_PROP_LAST_USED,
  ENTRY_PROP_HIT_COUNT,
  ENTRY_PROP_HAS_SOURCE,
  ENTRY_N_PROPS
};

static GParamSpec *entry_properties[ENTRY_N_PROPS];

static void
atomr_kernel_cache_entry_finalize (GObject *object)
{
  AtomrKernelCacheEntry *self = ATOMR_KERNEL_CACHE_ENTRY (object);

  g_free (self->path);
  atomr_cache_meta_clear (&self->meta);
  g_clear_pointer (&self->created, g_date_time_unref);
  g_clear_pointer (&self->last_used, g_date_time_unref);
  G_OBJECT_CLASS (atomr_kernel_cache_entry_parent_class)->finalize (object);
}

static void
atomr_kernel_cache_entry_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  AtomrKernelCacheEntry *self = ATOMR_KERNEL_CACHE_ENTRY (object);

  switch (prop_id)
    {
    case ENTRY_PROP_KEY: g_value_set_string (value, self->h.key); break;
    case ENTRY_PROP_PATH: g_value_set_string (value, self->path); break;
    case ENTRY_PROP_KERNEL_NAMES: g_value_set_boxed (value, self->meta.kernel_names); break;
    case ENTRY_PROP_LOWERED_NAMES: g_value_set_boxed (value, self->meta.lowered_names); break;
    case ENTRY_PROP_FLAGS: g_value_set_boxed (value, self->meta.flags); break;
    case ENTRY_PROP_ARCH: g_value_set_string (value, self->meta.arch); break;
    case ENTRY_PROP_NVRTC_VERSION: g_value_set_string (value, self->meta.nvrtc_version); break;
    case ENTRY_PROP_PTX_SIZE: g_value_set_uint64 (value, self->h.ptx_size); break;
    case ENTRY_PROP_CUBIN_SIZE: g_value_set_uint64 (value, self->h.cubin_size); break;
    case ENTRY_PROP_LTOIR_SIZE: g_value_set_uint64 (value, self->h.ltoir_size); break;
    case ENTRY_PROP_SOURCE_SIZE: g_value_set_uint64 (value, self->h.source_size); break;
    case ENTRY_PROP_FILE_SIZE: g_value_set_uint64 (value, self->h.file_size); break;
    case ENTRY_PROP_COMPILE_TIME_MS: g_value_set_double (value, self->meta.compile_time_ms); break;
    case ENTRY_PROP_CREATED: g_value_set_boxed (value, self->created); break;
    case ENTRY_PROP_LAST_USED: g_value_set_boxed (value, self->last_used); break;
    case ENTRY_PROP_HIT_COUNT: g_value_set_uint64 (value, self->h.hit_count); break;
    case ENTRY_PROP_HAS_SOURCE: g_value_set_boolean (value, self->h.source_size > 0); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
atomr_kernel_cache_entry_class_init (AtomrKernelCacheEntryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags f = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

  object_class->finalize = atomr_kernel_cache_entry_finalize;
  object_class->get_property = atomr_kernel_cache_entry_get_property;

  /**
   * AtomrKernelCacheEntry:key:
   *
   * The cache key (64 hex digits of SHA-256).
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_KEY] = g_param_spec_string ("key", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:path:
   *
   * The entry's file.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:kernel-names:
   *
   * The kernel names and name expressions compiled.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_KERNEL_NAMES] = g_param_spec_boxed ("kernel-names", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:lowered-names:
   *
   * The mangled symbol of each kernel name, in the same order.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_LOWERED_NAMES] = g_param_spec_boxed ("lowered-names", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:flags:
   *
   * The exact NVRTC flags.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_FLAGS] = g_param_spec_boxed ("flags", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:arch:
   *
   * The target architecture, %NULL for NVRTC's default.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_ARCH] = g_param_spec_string ("arch", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:nvrtc-version:
   *
   * The NVRTC version that compiled the entry.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_NVRTC_VERSION] = g_param_spec_string ("nvrtc-version", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:ptx-size:
   *
   * Bytes of PTX.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_PTX_SIZE] = g_param_spec_uint64 ("ptx-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:cubin-size:
   *
   * Bytes of CUBIN.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_CUBIN_SIZE] = g_param_spec_uint64 ("cubin-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:ltoir-size:
   *
   * Bytes of LTO-IR.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_LTOIR_SIZE] = g_param_spec_uint64 ("ltoir-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:source-size:
   *
   * Bytes of source kept, 0 when the source was not stored.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_SOURCE_SIZE] = g_param_spec_uint64 ("source-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:file-size:
   *
   * Bytes on disk.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_FILE_SIZE] = g_param_spec_uint64 ("file-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:compile-time-ms:
   *
   * How long the compile took.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_COMPILE_TIME_MS] = g_param_spec_double ("compile-time-ms", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  /**
   * AtomrKernelCacheEntry:created:
   *
   * When the entry was written.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_CREATED] = g_param_spec_boxed ("created", NULL, NULL, G_TYPE_DATE_TIME, f);
  /**
   * AtomrKernelCacheEntry:last-used:
   *
   * When the entry was last written or hit.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_LAST_USED] = g_param_spec_boxed ("last-used", NULL, NULL, G_TYPE_DATE_TIME, f);
  /**
   * AtomrKernelCacheEntry:hit-count:
   *
   * How many times the entry was read from disk.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_HIT_COUNT] = g_param_spec_uint64 ("hit-count", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:has-source:
   *
   * Whether the source was stored.
   *
   * Since: 0.1
   */
  entry_properties[ENTRY_PROP_HAS_SOURCE] = g_param_spec_boolean ("has-source", NULL, NULL, FALSE, f);
  g_object_class_install_properties (object_class, ENTRY_N_PROPS, entry_properties);
}

static void
atomr_kernel_cache_entry_init (AtomrKernelCacheEntry *self)
{
}

GDateTime *
atomr_cache_date_time_from_usec (gint64 usec)
{
  g_autoptr(GDateTime) seconds = g_date_time_new_from_unix_utc (usec / G_USEC_PER_SEC);

  if (seconds == NULL)
    return NULL;
  return g_date_time_add (seconds, usec % G_USEC_PER_SEC);
}

/* Reads the header and metadata of @path (not the payload). */
AtomrKernelCacheEntry *
atomr_cache_entry_read (const gchar  *path,
                        GError      **error)
{
  g_autoptr(AtomrKernelCacheEntry) self = NULL;
  guint8 header[ATOMR_CACHE_HEADER_SIZE];
  g_autofree gchar *json = NULL;
  struct stat st;
  int fd;
  ssize_t n;

  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "%s: %s", path, g_strerror (errsv));
      return NULL;
    }
  self = g_object_new (ATOMR_TYPE_KERNEL_CACHE_ENTRY, NULL);
  self->path = g_strdup (path);
  if (fstat (fd, &st) != 0
      || (n = pread (fd, header, sizeof header, 0)) < 0)
    {
      int errsv = errno;
      close (fd);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "%s: %s", path, g_strerror (errsv));
      return NULL;
    }
  if (!atomr_cache_parse_header (header, (guint64) st.st_size, &self->h, error))
    {
      close (fd);
      return NULL;
    }
  json = g_malloc (self->h.meta_size + 1);
  n = pread (fd, json, self->h.meta_size, ATOMR_CACHE_HEADER_SIZE);
  close (fd);
  if (n != (ssize_t) self->h.meta_size)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: short read of the metadata", path);
      return NULL;
    }
  json[n] = '\0';
  if (!atomr_cache_meta_parse (json, n, &self->meta, error))
    return NULL;
  self->created = atomr_cache_date_time_from_usec (self->h.created);
  self->last_used = atomr_cache_date_time_from_usec (MAX (self->h.last_used, self->h.created));
  if (self->created == NULL || self->last_used == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "%s: timestamps out of range", path);
      return NULL;
    }
  return g_steal_pointer (&self);
}

/**
 * atomr_kernel_cache_entry_get_key:
 * @self: an entry
 *
 * Gets the key.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:key] property.
 *
 * Returns: the key
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_entry_get_key (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->h.key;
}

/**
 * atomr_kernel_cache_entry_get_path:
 * @self: an entry
 *
 * Gets the entry's file.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:path] property.
 *
 * Returns: (type filename): the entry's file
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_entry_get_path (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->path;
}

/**
 * atomr_kernel_cache_entry_get_kernel_names: (skip)
 * @self: an entry
 *
 * Gets the kernel names and name expressions.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:kernel-names] property.
 *
 * Returns: (transfer none) (array zero-terminated=1): kernel names and
 *   name expressions
 *
 * Since: 0.1
 */
const gchar * const *
atomr_kernel_cache_entry_get_kernel_names (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return (const gchar * const *) self->meta.kernel_names;
}

/**
 * atomr_kernel_cache_entry_get_lowered_names: (skip)
 * @self: an entry
 *
 * Gets the mangled symbol of each kernel name, in the same order.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:lowered-names] property.
 *
 * Returns: (transfer none) (array zero-terminated=1): the mangled symbol of
 *   each kernel name, in the same order
 *
 * Since: 0.1
 */
const gchar * const *
atomr_kernel_cache_entry_get_lowered_names (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return (const gchar * const *) self->meta.lowered_names;
}

/**
 * atomr_kernel_cache_entry_lookup_lowered_name:
 * @self: an entry
 * @kernel_name: a kernel name or name expression
 *
 * Gets the mangled symbol of a kernel or name expression of the entry.
 *
 * Returns: (nullable): its mangled symbol
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_entry_lookup_lowered_name (AtomrKernelCacheEntry *self,
                                              const gchar           *kernel_name)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  g_return_val_if_fail (kernel_name != NULL, NULL);
  for (guint i = 0; self->meta.kernel_names && self->meta.lowered_names && self->meta.kernel_names[i]; i++)
    if (g_str_equal (self->meta.kernel_names[i], kernel_name))
      return self->meta.lowered_names[i];
  return NULL;
}

/**
 * atomr_kernel_cache_entry_get_flags: (skip)
 * @self: an entry
 *
 * Gets the NVRTC flags.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:flags] property.
 *
 * Returns: (transfer none) (array zero-terminated=1): the NVRTC flags
 *
 * Since: 0.1
 */
const gchar * const *
atomr_kernel_cache_entry_get_flags (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return (const gchar * const *) self->meta.flags;
}

/**
 * atomr_kernel_cache_entry_get_arch:
 * @self: an entry
 *
 * Gets the target architecture.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:arch] property.
 *
 * Returns: (nullable): the target architecture
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_entry_get_arch (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->meta.arch;
}

/**
 * atomr_kernel_cache_entry_get_nvrtc_version:
 * @self: an entry
 *
 * Gets the NVRTC version ("13.0").
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:nvrtc-version] property.
 *
 * Returns: the NVRTC version ("13.0")
 *
 * Since: 0.1
 */
const gchar *
atomr_kernel_cache_entry_get_nvrtc_version (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->meta.nvrtc_version;
}

#define ENTRY_U64_GETTER(name, expr, what)                                     \
guint64                                                                        \
atomr_kernel_cache_entry_get_##name (AtomrKernelCacheEntry *self)              \
{                                                                              \
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), 0);                \
  return expr;                                                                 \
}

/**
 * atomr_kernel_cache_entry_get_ptx_size:
 * @self: an entry
 *
 * Gets the size in bytes of the PTX.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:ptx-size] property.
 *
 * Returns: bytes of PTX
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (ptx_size, self->h.ptx_size, "PTX")
/**
 * atomr_kernel_cache_entry_get_cubin_size:
 * @self: an entry
 *
 * Gets the size in bytes of the CUBIN.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:cubin-size] property.
 *
 * Returns: bytes of CUBIN
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (cubin_size, self->h.cubin_size, "CUBIN")
/**
 * atomr_kernel_cache_entry_get_ltoir_size:
 * @self: an entry
 *
 * Gets the size in bytes of the LTO-IR.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:ltoir-size] property.
 *
 * Returns: bytes of LTO-IR
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (ltoir_size, self->h.ltoir_size, "LTO-IR")
/**
 * atomr_kernel_cache_entry_get_source_size:
 * @self: an entry
 *
 * Gets the size in bytes of the stored source.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:source-size] property.
 *
 * Returns: bytes of source stored
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (source_size, self->h.source_size, "source")
/**
 * atomr_kernel_cache_entry_get_file_size:
 * @self: an entry
 *
 * Gets the size in bytes on disk.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:file-size] property.
 *
 * Returns: bytes on disk
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (file_size, self->h.file_size, "file")
/**
 * atomr_kernel_cache_entry_get_hit_count:
 * @self: an entry
 *
 * Gets how many times the entry was read from disk.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:hit-count] property.
 *
 * Returns: how many times the entry was read from disk
 *
 * Since: 0.1
 */
ENTRY_U64_GETTER (hit_count, self->h.hit_count, "hits")

/**
 * atomr_kernel_cache_entry_get_compile_time_ms:
 * @self: an entry
 *
 * Gets how long the compile took.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:compile-time-ms] property.
 *
 * Returns: how long the compile took
 *
 * Since: 0.1
 */
gdouble
atomr_kernel_cache_entry_get_compile_time_ms (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), 0);
  return self->meta.compile_time_ms;
}

/**
 * atomr_kernel_cache_entry_get_created:
 * @self: an entry
 *
 * Gets when the entry was written.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:created] property.
 *
 * Returns: (transfer none): when the entry was written
 *
 * Since: 0.1
 */
GDateTime *
atomr_kernel_cache_entry_get_created (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->created;
}

/**
 * atomr_kernel_cache_entry_get_last_used:
 * @self: an entry
 *
 * Gets when the entry was last written or hit.
 *
 * This is the value of the [property@Atomr.KernelCacheEntry:last-used] property.
 *
 * Returns: (transfer none): when the entry was last written or hit
 *
 * Since: 0.1
 */
GDateTime *
atomr_kernel_cache_entry_get_last_used (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->last_used;
}

/**
 * atomr_kernel_cache_entry_has_source:
 * @self: an entry
 *
 * Tells whether the entry stored the source it was compiled from.
 *
 * Returns: whether the source was stored
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_cache_entry_has_source (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), FALSE);
  return self->h.source_size > 0;
}

/* Reads the whole file again and checks its checksum and key, so a file
 * replaced or damaged since listing is never served. */
GBytes *
atomr_cache_entry_load_section (AtomrKernelCacheEntry  *self,
                                Section                 section,
                                GError                **error)
{
  g_autofree guint8 *data = NULL;
  guint64 size = 0, off, len;
  FileHeader h;
  int fd;

  if (self->path == NULL)
    {
      /* Built bare (a binding's constructor): no file behind it. */
      g_set_error_literal (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "This AtomrKernelCacheEntry was constructed directly and has no file: "
                           "get entries from atomr_kernel_cache_list() or _lookup()");
      return NULL;
    }
  fd = g_open (self->path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "%s: %s", self->path, g_strerror (errsv));
      return NULL;
    }
  data = atomr_cache_read_fd (fd, &size, error);
  close (fd);
  if (data == NULL || !atomr_cache_parse_header (data, size, &h, error) || !atomr_cache_verify_payload (data, &h, error))
    return NULL;
  if (!g_str_equal (h.key, self->h.key))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: holds key %s, not %s", self->path, h.key, self->h.key);
      return NULL;
    }
  atomr_cache_section_range (&h, section, &off, &len);
  return g_bytes_new (data + off, len);
}

gchar *
atomr_cache_bytes_to_string (GBytes *bytes)
{
  gsize len;
  const gchar *p = g_bytes_get_data (bytes, &len);
  return p ? g_strndup (p, len) : g_strdup ("");
}

/**
 * atomr_kernel_cache_entry_load_source:
 * @self: an entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the source the entry was compiled from, if it was stored.
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with no error
 *   when it was not stored
 *
 * Since: 0.1
 */
gchar *
atomr_kernel_cache_entry_load_source (AtomrKernelCacheEntry  *self,
                                      GError                **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  if (self->h.source_size == 0)
    return NULL;
  bytes = atomr_cache_entry_load_section (self, SECTION_SOURCE, error);
  return bytes ? atomr_cache_bytes_to_string (bytes) : NULL;
}

/**
 * atomr_kernel_cache_entry_load_log:
 * @self: an entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads NVRTC's compile log of the entry from disk.
 *
 * Returns: (transfer full): NVRTC's log, possibly empty
 *
 * Since: 0.1
 */
gchar *
atomr_kernel_cache_entry_load_log (AtomrKernelCacheEntry  *self,
                                   GError                **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  bytes = atomr_cache_entry_load_section (self, SECTION_LOG, error);
  return bytes ? atomr_cache_bytes_to_string (bytes) : NULL;
}

static GBytes *
load_optional (AtomrKernelCacheEntry  *self,
               Section                 section,
               guint64                 size,
               GError                **error)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  if (size == 0)
    return NULL;
  return atomr_cache_entry_load_section (self, section, error);
}

/**
 * atomr_kernel_cache_entry_load_ptx:
 * @self: an entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the entry's PTX from disk.
 *
 * Returns: (transfer full) (nullable): the PTX, %NULL with no error when
 *   the entry has none
 *
 * Since: 0.1
 */
GBytes *
atomr_kernel_cache_entry_load_ptx (AtomrKernelCacheEntry  *self,
                                   GError                **error)
{
  return load_optional (self, SECTION_PTX, self->h.ptx_size, error);
}

/**
 * atomr_kernel_cache_entry_load_cubin:
 * @self: an entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the entry's CUBIN from disk.
 *
 * Returns: (transfer full) (nullable): the CUBIN, %NULL with no error when
 *   the entry has none
 *
 * Since: 0.1
 */
GBytes *
atomr_kernel_cache_entry_load_cubin (AtomrKernelCacheEntry  *self,
                                     GError                **error)
{
  return load_optional (self, SECTION_CUBIN, self->h.cubin_size, error);
}

/**
 * atomr_kernel_cache_entry_load_ltoir:
 * @self: an entry
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the entry's LTO-IR from disk.
 *
 * Returns: (transfer full) (nullable): the LTO-IR, %NULL with no error
 *   when the entry has none
 *
 * Since: 0.1
 */
GBytes *
atomr_kernel_cache_entry_load_ltoir (AtomrKernelCacheEntry  *self,
                                     GError                **error)
{
  return load_optional (self, SECTION_LTOIR, self->h.ltoir_size, error);
}
