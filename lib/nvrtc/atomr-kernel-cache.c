/* atomr-kernel-cache.c — memory LRU in front of one file per entry on disk
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
#include "atomr-kernel-cache-private.h"
#include "atomr-kernel-cache-key-private.h"
#include "atomr-compile-options-private.h"
#include "atomr-nvrtc-loader-private.h"

#define OFF_VERSION      8
#define OFF_HEADER_SIZE  12
#define OFF_KEY          16
#define KEY_LEN          64
#define OFF_CREATED      80
#define OFF_META_SIZE    88
#define OFF_SOURCE_SIZE  92
#define OFF_LOG_SIZE     96
#define OFF_PTX_SIZE     104
#define OFF_CUBIN_SIZE   112
#define OFF_LTOIR_SIZE   120
#define OFF_CHECKSUM     128
#define OFF_LAST_USED    160
#define OFF_HIT_COUNT    168
#define STATS_FILE       "stats"
#define STATS_MAGIC      "ATOMRKS\n"
#define DEFAULT_MEMORY_CAPACITY 256
/* Temporary files older than this belong to a writer that died. */
#define STALE_TEMP_USEC  (G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC)

G_DEFINE_ENUM_TYPE (AtomrCacheStatus, atomr_cache_status,
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_NONE, "none"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_MISS, "miss"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_MEMORY_HIT, "memory-hit"),
  G_DEFINE_ENUM_VALUE (ATOMR_CACHE_STATUS_DISK_HIT, "disk-hit"))

/* ------------------------------------------------------------------ */
/* Little-endian fields                                                */

static guint32
get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static guint64
get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static void
put_u32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static void
put_u64 (guint8 *p, guint64 v)
{
  v = GUINT64_TO_LE (v);
  memcpy (p, &v, 8);
}

/* ------------------------------------------------------------------ */
/* A parsed file                                                       */

typedef struct {
  guint8   header[ATOMR_CACHE_HEADER_SIZE];
  gchar    key[KEY_LEN + 1];
  gint64   created;
  gint64   last_used;
  guint64  hit_count;
  guint32  meta_size, source_size, log_size;
  guint64  ptx_size, cubin_size, ltoir_size;
  guint64  file_size;
} FileHeader;

static gboolean
key_is_valid (const gchar *key)
{
  if (key == NULL || strlen (key) != KEY_LEN)
    return FALSE;
  for (guint i = 0; i < KEY_LEN; i++)
    if (!g_ascii_isxdigit (key[i]) || g_ascii_isupper (key[i]))
      return FALSE;
  return TRUE;
}

/* Checks the fixed header against @file_size: magic, version, header size,
 * key and section sizes.  The checksum is checked by verify_payload(). */
static gboolean
parse_header (const guint8  *data,
              guint64        file_size,
              FileHeader    *h,
              GError       **error)
{
  guint64 total;

  if (file_size < ATOMR_CACHE_HEADER_SIZE)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: %" G_GUINT64_FORMAT " bytes is shorter than the %d-byte header",
                   file_size, ATOMR_CACHE_HEADER_SIZE);
      return FALSE;
    }
  if (memcmp (data, ATOMR_CACHE_MAGIC, 8) != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: not an atomr kernel cache entry (bad magic)");
      return FALSE;
    }
  if (get_u32 (data + OFF_VERSION) != ATOMR_CACHE_FORMAT_VERSION
      || get_u32 (data + OFF_HEADER_SIZE) != ATOMR_CACHE_HEADER_SIZE)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: format version %u, header size %u (expected %d, %d)",
                   get_u32 (data + OFF_VERSION), get_u32 (data + OFF_HEADER_SIZE),
                   ATOMR_CACHE_FORMAT_VERSION, ATOMR_CACHE_HEADER_SIZE);
      return FALSE;
    }
  memcpy (h->header, data, ATOMR_CACHE_HEADER_SIZE);
  memcpy (h->key, data + OFF_KEY, KEY_LEN);
  h->key[KEY_LEN] = '\0';
  if (!key_is_valid (h->key))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: the key field is not 64 hex digits");
      return FALSE;
    }
  h->created = (gint64) get_u64 (data + OFF_CREATED);
  h->meta_size = get_u32 (data + OFF_META_SIZE);
  h->source_size = get_u32 (data + OFF_SOURCE_SIZE);
  h->log_size = get_u32 (data + OFF_LOG_SIZE);
  h->ptx_size = get_u64 (data + OFF_PTX_SIZE);
  h->cubin_size = get_u64 (data + OFF_CUBIN_SIZE);
  h->ltoir_size = get_u64 (data + OFF_LTOIR_SIZE);
  h->last_used = (gint64) get_u64 (data + OFF_LAST_USED);
  h->hit_count = get_u64 (data + OFF_HIT_COUNT);
  h->file_size = file_size;
  total = ATOMR_CACHE_HEADER_SIZE + (guint64) h->meta_size + h->source_size + h->log_size;
  if (h->ptx_size > G_MAXUINT32 * 16ULL || h->cubin_size > G_MAXUINT32 * 16ULL
      || h->ltoir_size > G_MAXUINT32 * 16ULL
      || total + h->ptx_size + h->cubin_size + h->ltoir_size != file_size)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: %" G_GUINT64_FORMAT " bytes, but the header announces "
                   "%" G_GUINT64_FORMAT " (truncated or corrupt)",
                   file_size, total + h->ptx_size + h->cubin_size + h->ltoir_size);
      return FALSE;
    }
  return TRUE;
}

static void
compute_checksum (const guint8 *header,
                  const guint8 *payload,
                  gsize         payload_size,
                  guint8        digest[32])
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  gsize len = 32;

  g_checksum_update (sum, header, OFF_CHECKSUM);
  g_checksum_update (sum, payload, payload_size);
  g_checksum_get_digest (sum, digest, &len);
}

static gboolean
verify_payload (const guint8  *data,
                FileHeader    *h,
                GError       **error)
{
  guint8 digest[32];

  compute_checksum (data, data + ATOMR_CACHE_HEADER_SIZE,
                    h->file_size - ATOMR_CACHE_HEADER_SIZE, digest);
  if (memcmp (digest, data + OFF_CHECKSUM, 32) != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: checksum mismatch (corrupt entry %s)", h->key);
      return FALSE;
    }
  return TRUE;
}

/* Reads a whole file from an open descriptor. */
static guint8 *
read_fd (int       fd,
         guint64  *size_out,
         GError  **error)
{
  struct stat st;
  guint8 *data;
  guint64 done = 0;

  if (fstat (fd, &st) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "fstat: %s", g_strerror (errsv));
      return NULL;
    }
  data = g_malloc ((gsize) st.st_size + 1);
  while (done < (guint64) st.st_size)
    {
      ssize_t n = pread (fd, data + done, st.st_size - done, done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "read: %s",
                       n < 0 ? g_strerror (errsv) : "file shrank while reading");
          g_free (data);
          return NULL;
        }
      done += n;
    }
  data[done] = 0;
  *size_out = done;
  return data;
}

/* ------------------------------------------------------------------ */
/* Metadata                                                            */

typedef struct {
  gchar  **kernel_names;
  gchar  **lowered_names;
  gchar  **flags;
  gchar   *arch;
  gchar   *nvrtc_version;
  gdouble  compile_time_ms;
} Meta;

static void
meta_clear (Meta *m)
{
  g_strfreev (m->kernel_names);
  g_strfreev (m->lowered_names);
  g_strfreev (m->flags);
  g_free (m->arch);
  g_free (m->nvrtc_version);
  memset (m, 0, sizeof *m);
}

static gchar *
meta_to_json (AtomrModuleContent *c,
              gsize              *length)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
#define ADD_STRV(field) \
  json_builder_set_member_name (b, #field); \
  json_builder_begin_array (b); \
  for (guint i = 0; c->field && c->field[i]; i++) \
    json_builder_add_string_value (b, c->field[i]); \
  json_builder_end_array (b);
  ADD_STRV (kernel_names)
  ADD_STRV (lowered_names)
  ADD_STRV (flags)
#undef ADD_STRV
  json_builder_set_member_name (b, "arch");
  if (c->arch)
    json_builder_add_string_value (b, c->arch);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "nvrtc_version");
  json_builder_add_string_value (b, c->nvrtc_version ? c->nvrtc_version : "");
  json_builder_set_member_name (b, "compile_time_ms");
  json_builder_add_double_value (b, c->compile_time_ms);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, length);
}

static gchar **
json_strv (JsonObject  *o,
           const gchar *member)
{
  JsonArray *a;
  GPtrArray *v = g_ptr_array_new ();

  if (json_object_has_member (o, member)
      && JSON_NODE_HOLDS_ARRAY (json_object_get_member (o, member)))
    {
      a = json_object_get_array_member (o, member);
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          JsonNode *n = json_array_get_element (a, i);
          if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
            g_ptr_array_add (v, g_strdup (json_node_get_string (n)));
        }
    }
  g_ptr_array_add (v, NULL);
  return (gchar **) g_ptr_array_free (v, FALSE);
}

static gboolean
meta_parse (const gchar  *json,
            gsize         length,
            Meta         *m,
            GError      **error)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o;

  if (!json_parser_load_from_data (parser, json, length, error))
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: metadata is not a JSON object");
      return FALSE;
    }
  o = json_node_get_object (json_parser_get_root (parser));
  m->kernel_names = json_strv (o, "kernel_names");
  m->lowered_names = json_strv (o, "lowered_names");
  m->flags = json_strv (o, "flags");
  if (g_strv_length (m->kernel_names) != g_strv_length (m->lowered_names))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: %u kernel names but %u lowered names",
                   g_strv_length (m->kernel_names), g_strv_length (m->lowered_names));
      meta_clear (m);
      return FALSE;
    }
  m->arch = g_strdup (json_object_get_string_member_with_default (o, "arch", NULL));
  m->nvrtc_version = g_strdup (json_object_get_string_member_with_default (o, "nvrtc_version", ""));
  m->compile_time_ms = json_object_get_double_member_with_default (o, "compile_time_ms", 0);
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* AtomrKernelCacheEntry                                               */

/**
 * AtomrKernelCacheEntry:
 *
 * One entry of a cache directory, as listed by atomr_kernel_cache_list():
 * its metadata is read when listed; the source, log, PTX, CUBIN and LTO-IR
 * are read (and checksummed) on demand by the `load` functions.
 */
struct _AtomrKernelCacheEntry
{
  GObject    parent_instance;
  gchar     *path;
  FileHeader h;
  Meta       meta;
  GDateTime *created;
  GDateTime *last_used;
};

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
  meta_clear (&self->meta);
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
   */
  entry_properties[ENTRY_PROP_KEY] = g_param_spec_string ("key", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:path:
   *
   * The entry's file.
   */
  entry_properties[ENTRY_PROP_PATH] = g_param_spec_string ("path", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:kernel-names:
   *
   * The kernel names and name expressions compiled.
   */
  entry_properties[ENTRY_PROP_KERNEL_NAMES] = g_param_spec_boxed ("kernel-names", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:lowered-names:
   *
   * The mangled symbol of each kernel name, in the same order.
   */
  entry_properties[ENTRY_PROP_LOWERED_NAMES] = g_param_spec_boxed ("lowered-names", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:flags:
   *
   * The exact NVRTC flags.
   */
  entry_properties[ENTRY_PROP_FLAGS] = g_param_spec_boxed ("flags", NULL, NULL, G_TYPE_STRV, f);
  /**
   * AtomrKernelCacheEntry:arch:
   *
   * The target architecture, %NULL for NVRTC's default.
   */
  entry_properties[ENTRY_PROP_ARCH] = g_param_spec_string ("arch", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:nvrtc-version:
   *
   * The NVRTC version that compiled the entry.
   */
  entry_properties[ENTRY_PROP_NVRTC_VERSION] = g_param_spec_string ("nvrtc-version", NULL, NULL, NULL, f);
  /**
   * AtomrKernelCacheEntry:ptx-size:
   *
   * Bytes of PTX.
   */
  entry_properties[ENTRY_PROP_PTX_SIZE] = g_param_spec_uint64 ("ptx-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:cubin-size:
   *
   * Bytes of CUBIN.
   */
  entry_properties[ENTRY_PROP_CUBIN_SIZE] = g_param_spec_uint64 ("cubin-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:ltoir-size:
   *
   * Bytes of LTO-IR.
   */
  entry_properties[ENTRY_PROP_LTOIR_SIZE] = g_param_spec_uint64 ("ltoir-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:source-size:
   *
   * Bytes of source kept, 0 when the source was not stored.
   */
  entry_properties[ENTRY_PROP_SOURCE_SIZE] = g_param_spec_uint64 ("source-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:file-size:
   *
   * Bytes on disk.
   */
  entry_properties[ENTRY_PROP_FILE_SIZE] = g_param_spec_uint64 ("file-size", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:compile-time-ms:
   *
   * How long the compile took.
   */
  entry_properties[ENTRY_PROP_COMPILE_TIME_MS] = g_param_spec_double ("compile-time-ms", NULL, NULL, 0, G_MAXDOUBLE, 0, f);
  /**
   * AtomrKernelCacheEntry:created:
   *
   * When the entry was written.
   */
  entry_properties[ENTRY_PROP_CREATED] = g_param_spec_boxed ("created", NULL, NULL, G_TYPE_DATE_TIME, f);
  /**
   * AtomrKernelCacheEntry:last-used:
   *
   * When the entry was last written or hit.
   */
  entry_properties[ENTRY_PROP_LAST_USED] = g_param_spec_boxed ("last-used", NULL, NULL, G_TYPE_DATE_TIME, f);
  /**
   * AtomrKernelCacheEntry:hit-count:
   *
   * How many times the entry was read from disk.
   */
  entry_properties[ENTRY_PROP_HIT_COUNT] = g_param_spec_uint64 ("hit-count", NULL, NULL, 0, G_MAXUINT64, 0, f);
  /**
   * AtomrKernelCacheEntry:has-source:
   *
   * Whether the source was stored.
   */
  entry_properties[ENTRY_PROP_HAS_SOURCE] = g_param_spec_boolean ("has-source", NULL, NULL, FALSE, f);
  g_object_class_install_properties (object_class, ENTRY_N_PROPS, entry_properties);
}

static void
atomr_kernel_cache_entry_init (AtomrKernelCacheEntry *self)
{
}

static GDateTime *
date_time_from_usec (gint64 usec)
{
  g_autoptr(GDateTime) seconds = g_date_time_new_from_unix_utc (usec / G_USEC_PER_SEC);

  if (seconds == NULL)
    return NULL;
  return g_date_time_add (seconds, usec % G_USEC_PER_SEC);
}

/* Reads the header and metadata of @path (not the payload). */
static AtomrKernelCacheEntry *
entry_read (const gchar  *path,
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
  if (!parse_header (header, (guint64) st.st_size, &self->h, error))
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
  if (!meta_parse (json, n, &self->meta, error))
    return NULL;
  self->created = date_time_from_usec (self->h.created);
  self->last_used = date_time_from_usec (MAX (self->h.last_used, self->h.created));
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
 * Returns: the key
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
 * Returns: (type filename): the entry's file
 */
const gchar *
atomr_kernel_cache_entry_get_path (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return self->path;
}

/**
 * atomr_kernel_cache_entry_get_kernel_names:
 * @self: an entry
 *
 * Returns: (transfer none) (array zero-terminated=1): kernel names and
 *   name expressions
 */
const gchar * const *
atomr_kernel_cache_entry_get_kernel_names (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  return (const gchar * const *) self->meta.kernel_names;
}

/**
 * atomr_kernel_cache_entry_get_lowered_names:
 * @self: an entry
 *
 * Returns: (transfer none) (array zero-terminated=1): the mangled symbol of
 *   each kernel name, in the same order
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
 * Returns: (nullable): its mangled symbol
 */
const gchar *
atomr_kernel_cache_entry_lookup_lowered_name (AtomrKernelCacheEntry *self,
                                              const gchar           *kernel_name)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  g_return_val_if_fail (kernel_name != NULL, NULL);
  for (guint i = 0; self->meta.kernel_names[i]; i++)
    if (g_str_equal (self->meta.kernel_names[i], kernel_name))
      return self->meta.lowered_names[i];
  return NULL;
}

/**
 * atomr_kernel_cache_entry_get_flags:
 * @self: an entry
 *
 * Returns: (transfer none) (array zero-terminated=1): the NVRTC flags
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
 * Returns: (nullable): the target architecture
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
 * Returns: the NVRTC version ("13.0")
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
 * Returns: bytes of PTX
 */
ENTRY_U64_GETTER (ptx_size, self->h.ptx_size, "PTX")
/**
 * atomr_kernel_cache_entry_get_cubin_size:
 * @self: an entry
 *
 * Returns: bytes of CUBIN
 */
ENTRY_U64_GETTER (cubin_size, self->h.cubin_size, "CUBIN")
/**
 * atomr_kernel_cache_entry_get_ltoir_size:
 * @self: an entry
 *
 * Returns: bytes of LTO-IR
 */
ENTRY_U64_GETTER (ltoir_size, self->h.ltoir_size, "LTO-IR")
/**
 * atomr_kernel_cache_entry_get_source_size:
 * @self: an entry
 *
 * Returns: bytes of source stored
 */
ENTRY_U64_GETTER (source_size, self->h.source_size, "source")
/**
 * atomr_kernel_cache_entry_get_file_size:
 * @self: an entry
 *
 * Returns: bytes on disk
 */
ENTRY_U64_GETTER (file_size, self->h.file_size, "file")
/**
 * atomr_kernel_cache_entry_get_hit_count:
 * @self: an entry
 *
 * Returns: how many times the entry was read from disk
 */
ENTRY_U64_GETTER (hit_count, self->h.hit_count, "hits")

/**
 * atomr_kernel_cache_entry_get_compile_time_ms:
 * @self: an entry
 *
 * Returns: how long the compile took
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
 * Returns: (transfer none): when the entry was written
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
 * Returns: (transfer none): when the entry was last written or hit
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
 * Returns: whether the source was stored
 */
gboolean
atomr_kernel_cache_entry_has_source (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), FALSE);
  return self->h.source_size > 0;
}

typedef enum { SECTION_META, SECTION_SOURCE, SECTION_LOG, SECTION_PTX, SECTION_CUBIN, SECTION_LTOIR } Section;

static void
section_range (const FileHeader *h,
               Section           section,
               guint64          *offset,
               guint64          *size)
{
  guint64 sizes[6] = { h->meta_size, h->source_size, h->log_size, h->ptx_size, h->cubin_size, h->ltoir_size };
  guint64 off = ATOMR_CACHE_HEADER_SIZE;

  for (guint i = 0; i < (guint) section; i++)
    off += sizes[i];
  *offset = off;
  *size = sizes[section];
}

/* Reads the whole file again and checks its checksum and key, so a file
 * replaced or damaged since listing is never served. */
static GBytes *
entry_load_section (AtomrKernelCacheEntry  *self,
                    Section                 section,
                    GError                **error)
{
  g_autofree guint8 *data = NULL;
  guint64 size = 0, off, len;
  FileHeader h;
  int fd;

  fd = g_open (self->path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "%s: %s", self->path, g_strerror (errsv));
      return NULL;
    }
  data = read_fd (fd, &size, error);
  close (fd);
  if (data == NULL || !parse_header (data, size, &h, error) || !verify_payload (data, &h, error))
    return NULL;
  if (!g_str_equal (h.key, self->h.key))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: holds key %s, not %s", self->path, h.key, self->h.key);
      return NULL;
    }
  section_range (&h, section, &off, &len);
  return g_bytes_new (data + off, len);
}

static gchar *
bytes_to_string (GBytes *bytes)
{
  gsize len;
  const gchar *p = g_bytes_get_data (bytes, &len);
  return p ? g_strndup (p, len) : g_strdup ("");
}

/**
 * atomr_kernel_cache_entry_load_source:
 * @self: an entry
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the source, or %NULL with no error
 *   when it was not stored
 */
gchar *
atomr_kernel_cache_entry_load_source (AtomrKernelCacheEntry  *self,
                                      GError                **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  if (self->h.source_size == 0)
    return NULL;
  bytes = entry_load_section (self, SECTION_SOURCE, error);
  return bytes ? bytes_to_string (bytes) : NULL;
}

/**
 * atomr_kernel_cache_entry_load_log:
 * @self: an entry
 * @error: return location for a #GError
 *
 * Returns: (transfer full): NVRTC's log, possibly empty
 */
gchar *
atomr_kernel_cache_entry_load_log (AtomrKernelCacheEntry  *self,
                                   GError                **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  bytes = entry_load_section (self, SECTION_LOG, error);
  return bytes ? bytes_to_string (bytes) : NULL;
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
  return entry_load_section (self, section, error);
}

/**
 * atomr_kernel_cache_entry_load_ptx:
 * @self: an entry
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the PTX, %NULL with no error when
 *   the entry has none
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
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the CUBIN, %NULL with no error when
 *   the entry has none
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
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (nullable): the LTO-IR, %NULL with no error
 *   when the entry has none
 */
GBytes *
atomr_kernel_cache_entry_load_ltoir (AtomrKernelCacheEntry  *self,
                                     GError                **error)
{
  return load_optional (self, SECTION_LTOIR, self->h.ltoir_size, error);
}

/* ------------------------------------------------------------------ */
/* AtomrKernelCache                                                    */

struct _AtomrCacheRequest {
  GBytes    *blob;      /* everything but header contents: the memory key */
  gchar     *key;
  GPtrArray *headers;   /* AtomrCacheHeaderStamp */
};

typedef struct {
  GBytes             *blob;
  AtomrModuleContent *content;
  GPtrArray          *headers;
  GList              *link;    /* in lru, data = this */
} MemoryEntry;

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
 */
struct _AtomrKernelCache
{
  GObject     parent_instance;
  gchar      *directory;
  guint64     max_size;
  guint       memory_capacity;
  gboolean    store_source;

  GMutex      lock;
  GHashTable *memory;     /* GBytes blob -> MemoryEntry */
  GQueue      lru;        /* head = most recent */
  guint64     memory_hits, disk_hits, misses;
};

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

static void
memory_entry_free (gpointer data)
{
  MemoryEntry *e = data;
  g_bytes_unref (e->blob);
  atomr_module_content_unref (e->content);
  g_ptr_array_unref (e->headers);
  g_free (e);
}

void
atomr_cache_request_free (AtomrCacheRequest *request)
{
  g_clear_pointer (&request->blob, g_bytes_unref);
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
  g_queue_clear (&self->lru);
  g_mutex_clear (&self->lock);
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
        self->directory = atomr_kernel_cache_get_default_directory ();
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
   */
  properties[PROP_DIRECTORY] = g_param_spec_string ("directory", NULL, NULL, NULL,
                                                    G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AtomrKernelCache:max-size:
   *
   * Bytes on disk at most; after each store the least recently used
   * entries beyond it are removed.  0 for no limit.
   */
  properties[PROP_MAX_SIZE] = g_param_spec_uint64 ("max-size", NULL, NULL, 0, G_MAXUINT64, 0, rw);
  /**
   * AtomrKernelCache:memory-capacity:
   *
   * Modules kept in memory at most (least recently used dropped first);
   * 0 disables the memory level.
   */
  properties[PROP_MEMORY_CAPACITY] = g_param_spec_uint ("memory-capacity", NULL, NULL, 0, G_MAXUINT,
                                                        DEFAULT_MEMORY_CAPACITY, rw);
  /**
   * AtomrKernelCache:store-source:
   *
   * Whether entries keep the source, for browsing.
   */
  properties[PROP_STORE_SOURCE] = g_param_spec_boolean ("store-source", NULL, NULL, TRUE, rw);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/* The memory level hashes whole requests (source and all) on every lookup;
 * g_bytes_hash() goes a byte at a time.  Eight at a time, mixed with a
 * multiply, is several times faster and spreads as well. */
static guint
request_hash (gconstpointer key)
{
  gsize len;
  const guint8 *p = g_bytes_get_data ((GBytes *) key, &len);
  guint64 h = 0x9e3779b97f4a7c15ull ^ len;

  for (; len >= 8; p += 8, len -= 8)
    {
      guint64 w;
      memcpy (&w, p, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
  if (len > 0)
    {
      guint64 w = 0;
      memcpy (&w, p, len);
      h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    }
  h ^= h >> 29;
  return (guint) (h ^ (h >> 32));
}

static void
atomr_kernel_cache_init (AtomrKernelCache *self)
{
  g_mutex_init (&self->lock);
  self->memory = g_hash_table_new_full (request_hash, g_bytes_equal, NULL, memory_entry_free);
  self->memory_capacity = DEFAULT_MEMORY_CAPACITY;
  self->store_source = TRUE;
}

/**
 * atomr_kernel_cache_get_default_directory:
 *
 * `$ATOMR_CACHE_DIR` if set, else `atomr/kernels` in the user cache
 * directory (`$XDG_CACHE_HOME`, ~/.cache).
 *
 * Returns: (transfer full) (type filename): the default cache directory
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
 */
AtomrKernelCache *
atomr_kernel_cache_get_default (void)
{
  static gsize once;
  static AtomrKernelCache *cache;

  if (g_once_init_enter (&once))
    {
      cache = atomr_kernel_cache_new (NULL);
      g_once_init_leave (&once, 1);
    }
  return cache;
}

/**
 * atomr_kernel_cache_new:
 * @directory: (nullable) (type filename): the cache directory, %NULL for
 *   atomr_kernel_cache_get_default_directory()
 *
 * Opens a cache; the directory need not exist yet.
 *
 * Returns: (transfer full): a new cache
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
 * Returns: (type filename): the cache directory
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
 * Returns: the size cap in bytes, 0 for none
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
 * Sets #AtomrKernelCache:max-size.
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

static void
memory_trim_locked (AtomrKernelCache *self,
                    guint             capacity)
{
  while (self->lru.length > capacity)
    {
      MemoryEntry *e = g_queue_pop_tail (&self->lru);
      g_hash_table_remove (self->memory, e->blob);
    }
}

/**
 * atomr_kernel_cache_get_memory_capacity:
 * @self: a cache
 *
 * Returns: modules kept in memory at most
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
 * Sets #AtomrKernelCache:memory-capacity.
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
  memory_trim_locked (self, capacity);
  g_mutex_unlock (&self->lock);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MEMORY_CAPACITY]);
}

/**
 * atomr_kernel_cache_get_store_source:
 * @self: a cache
 *
 * Returns: whether entries keep their source
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
 * Sets #AtomrKernelCache:store-source.
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
 */
void
atomr_kernel_cache_clear_memory (AtomrKernelCache *self)
{
  g_return_if_fail (ATOMR_IS_KERNEL_CACHE (self));
  g_mutex_lock (&self->lock);
  memory_trim_locked (self, 0);
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

/* ------------------------------------------------------------------ */
/* Disk                                                                */

static gchar *
entry_path (AtomrKernelCache *self,
            const gchar      *key)
{
  g_autofree gchar *name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  return g_build_filename (self->directory, name, NULL);
}

static void
stats_bump (AtomrKernelCache *self,
            gboolean          hit)
{
  g_autofree gchar *path = g_build_filename (self->directory, STATS_FILE, NULL);
  guint8 buf[24];
  int fd;

  fd = g_open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  if (flock (fd, LOCK_EX) == 0)
    {
      guint64 hits = 0, misses = 0;
      if (pread (fd, buf, sizeof buf, 0) == sizeof buf && memcmp (buf, STATS_MAGIC, 8) == 0)
        {
          hits = get_u64 (buf + 8);
          misses = get_u64 (buf + 16);
        }
      if (hit)
        hits++;
      else
        misses++;
      memcpy (buf, STATS_MAGIC, 8);
      put_u64 (buf + 8, hits);
      put_u64 (buf + 16, misses);
      if (pwrite (fd, buf, sizeof buf, 0) != sizeof buf)
        g_debug ("kernel cache: cannot update %s: %s", path, g_strerror (errno));
    }
  close (fd);
}

/* Reads, checks and decodes entry @key.  Damaged, foreign or outdated files
 * are removed.  Records the hit in the file. */
static AtomrModuleContent *
disk_read (AtomrKernelCache *self,
           const gchar      *key)
{
  g_autofree gchar *path = entry_path (self, key);
  g_autofree guint8 *data = NULL;
  g_autoptr(GError) error = NULL;
  AtomrModuleContent *content;
  guint64 size = 0, off, len;
  FileHeader h;
  Meta meta = { 0 };
  guint8 mutable[16];
  int fd;

  fd = g_open (path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
    fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return NULL;
  data = read_fd (fd, &size, &error);
  if (data == NULL || !parse_header (data, size, &h, &error) || !verify_payload (data, &h, &error)
      || !g_str_equal (h.key, key))
    {
      if (error == NULL)
        g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "holds key %s", h.key);
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      close (fd);
      g_unlink (path);
      return NULL;
    }
  section_range (&h, SECTION_META, &off, &len);
  if (!meta_parse ((const gchar *) data + off, len, &meta, &error))
    {
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      close (fd);
      g_unlink (path);
      return NULL;
    }
  put_u64 (mutable, (guint64) g_get_real_time ());
  put_u64 (mutable + 8, h.hit_count + 1);
  if (pwrite (fd, mutable, sizeof mutable, OFF_LAST_USED) != sizeof mutable)
    g_debug ("kernel cache: cannot record the hit in %s: %s", path, g_strerror (errno));
  close (fd);

  content = atomr_module_content_new ();
  content->kernel_names = g_steal_pointer (&meta.kernel_names);
  content->lowered_names = g_steal_pointer (&meta.lowered_names);
  content->flags = g_steal_pointer (&meta.flags);
  content->arch = g_steal_pointer (&meta.arch);
  content->nvrtc_version = g_steal_pointer (&meta.nvrtc_version);
  content->compile_time_ms = meta.compile_time_ms;
  content->key = g_strdup (key);
  section_range (&h, SECTION_LOG, &off, &len);
  content->log = g_strndup ((const gchar *) data + off, len);
  section_range (&h, SECTION_PTX, &off, &len);
  if (len)
    content->ptx = g_bytes_new (data + off, len);
  section_range (&h, SECTION_CUBIN, &off, &len);
  if (len)
    content->cubin = g_bytes_new (data + off, len);
  section_range (&h, SECTION_LTOIR, &off, &len);
  if (len)
    content->ltoir = g_bytes_new (data + off, len);
  meta_clear (&meta);
  return content;
}

static gboolean
write_all (int           fd,
           const guint8 *data,
           gsize         len,
           GError      **error)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "write: %s", g_strerror (errsv));
          return FALSE;
        }
      data += n;
      len -= n;
    }
  return TRUE;
}

static gsize
bytes_size (GBytes *b)
{
  return b ? g_bytes_get_size (b) : 0;
}

static gboolean
disk_write (AtomrKernelCache    *self,
            const gchar         *key,
            AtomrModuleContent  *content,
            const gchar         *source,
            GError             **error)
{
  g_autofree gchar *path = entry_path (self, key);
  g_autofree gchar *tmp = NULL;
  g_autofree gchar *meta = NULL;
  g_autoptr(GByteArray) file = NULL;
  guint8 header[ATOMR_CACHE_HEADER_SIZE] = { 0 };
  guint8 digest[32];
  gsize meta_len = 0, source_len = 0, log_len;
  gint64 now = g_get_real_time ();
  int fd;

  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  meta = meta_to_json (content, &meta_len);
  source_len = self->store_source ? strlen (source) : 0;
  log_len = content->log ? strlen (content->log) : 0;

  memcpy (header, ATOMR_CACHE_MAGIC, 8);
  put_u32 (header + OFF_VERSION, ATOMR_CACHE_FORMAT_VERSION);
  put_u32 (header + OFF_HEADER_SIZE, ATOMR_CACHE_HEADER_SIZE);
  memcpy (header + OFF_KEY, key, KEY_LEN);
  put_u64 (header + OFF_CREATED, (guint64) now);
  put_u32 (header + OFF_META_SIZE, meta_len);
  put_u32 (header + OFF_SOURCE_SIZE, source_len);
  put_u32 (header + OFF_LOG_SIZE, log_len);
  put_u64 (header + OFF_PTX_SIZE, bytes_size (content->ptx));
  put_u64 (header + OFF_CUBIN_SIZE, bytes_size (content->cubin));
  put_u64 (header + OFF_LTOIR_SIZE, bytes_size (content->ltoir));
  put_u64 (header + OFF_LAST_USED, (guint64) now);
  put_u64 (header + OFF_HIT_COUNT, 0);

  file = g_byte_array_new ();
  g_byte_array_append (file, header, sizeof header);
  g_byte_array_append (file, (const guint8 *) meta, meta_len);
  g_byte_array_append (file, (const guint8 *) source, source_len);
  if (log_len)
    g_byte_array_append (file, (const guint8 *) content->log, log_len);
  if (content->ptx)
    g_byte_array_append (file, g_bytes_get_data (content->ptx, NULL), bytes_size (content->ptx));
  if (content->cubin)
    g_byte_array_append (file, g_bytes_get_data (content->cubin, NULL), bytes_size (content->cubin));
  if (content->ltoir)
    g_byte_array_append (file, g_bytes_get_data (content->ltoir, NULL), bytes_size (content->ltoir));
  compute_checksum (file->data, file->data + ATOMR_CACHE_HEADER_SIZE,
                    file->len - ATOMR_CACHE_HEADER_SIZE, digest);
  memcpy (file->data + OFF_CHECKSUM, digest, 32);

  /* Same directory as the entry, so rename() is atomic; readers of the
   * old file (or of none) never see a partial one. */
  tmp = g_strdup_printf ("%s/.tmp-%s-%d-%08x", self->directory, key, (int) getpid (), g_random_int ());
  fd = g_open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", tmp, g_strerror (errsv));
      return FALSE;
    }
  if (!write_all (fd, file->data, file->len, error))
    {
      close (fd);
      g_unlink (tmp);
      return FALSE;
    }
  if (close (fd) != 0 || g_rename (tmp, path) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot store %s: %s", path, g_strerror (errsv));
      g_unlink (tmp);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------ */
/* The compile path                                                    */

static void
memory_insert_locked (AtomrKernelCache   *self,
                      GBytes             *blob,
                      AtomrModuleContent *content,
                      GPtrArray          *headers)
{
  MemoryEntry *e;

  if (self->memory_capacity == 0)
    return;
  e = g_hash_table_lookup (self->memory, blob);
  if (e)
    {
      g_queue_unlink (&self->lru, e->link);
      g_list_free (e->link);
      g_hash_table_remove (self->memory, blob);
    }
  e = g_new0 (MemoryEntry, 1);
  e->blob = g_bytes_ref (blob);
  e->content = atomr_module_content_ref (content);
  e->headers = g_ptr_array_ref (headers);
  g_queue_push_head (&self->lru, e);
  e->link = self->lru.head;
  g_hash_table_insert (self->memory, e->blob, e);
  memory_trim_locked (self, self->memory_capacity);
}

AtomrModule *
atomr_kernel_cache_lookup_request (AtomrKernelCache         *self,
                                   const AtomrCacheKeyInput *input,
                                   AtomrCacheRequest       **request_out)
{
  g_autoptr(AtomrCacheRequest) request = g_new0 (AtomrCacheRequest, 1);
  g_autoptr(GError) error = NULL;
  AtomrModuleContent *content;
  AtomrModule *module;
  MemoryEntry *e;

  request->blob = atomr_cache_request_blob (input);

  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->memory, request->blob);
  if (e && atomr_cache_stamps_unchanged (e->headers))
    {
      g_queue_unlink (&self->lru, e->link);
      g_queue_push_head_link (&self->lru, e->link);
      self->memory_hits++;
      module = atomr_module_new (e->content, ATOMR_CACHE_STATUS_MEMORY_HIT);
      g_mutex_unlock (&self->lock);
      return module;
    }
  g_mutex_unlock (&self->lock);

  /* The key: the request plus every file NVRTC may read for it.  A
   * request that cannot be keyed bypasses the cache (*request_out stays
   * NULL). */
  request->key = atomr_cache_key_compute (request->blob, input, &request->headers, &error);
  if (request->key == NULL)
    {
      g_debug ("kernel cache: not cached: %s", error->message);
      return NULL;
    }

  content = disk_read (self, request->key);
  if (content)
    {
      stats_bump (self, TRUE);
      g_mutex_lock (&self->lock);
      self->disk_hits++;
      memory_insert_locked (self, request->blob, content, request->headers);
      g_mutex_unlock (&self->lock);
      module = atomr_module_new (content, ATOMR_CACHE_STATUS_DISK_HIT);
      atomr_module_content_unref (content);
      return module;
    }
  *request_out = g_steal_pointer (&request);
  return NULL;
}

void
atomr_kernel_cache_store (AtomrKernelCache   *self,
                          AtomrCacheRequest  *request,
                          AtomrModuleContent *content,
                          const gchar        *source)
{
  g_autoptr(GError) error = NULL;

  g_free (content->key);
  content->key = g_strdup (request->key);
  g_mutex_lock (&self->lock);
  self->misses++;
  memory_insert_locked (self, request->blob, content, request->headers);
  g_mutex_unlock (&self->lock);

  if (!disk_write (self, request->key, content, source, &error))
    {
      g_debug ("kernel cache: not stored: %s", error->message);
      return;
    }
  stats_bump (self, FALSE);
  if (self->max_size > 0
      && !atomr_kernel_cache_gc (self, self->max_size, NULL, NULL, &error))
    g_debug ("kernel cache: eviction failed: %s", error->message);
}

/* ------------------------------------------------------------------ */
/* Browsing and maintenance                                            */

static gint
compare_last_used (gconstpointer a,
                   gconstpointer b)
{
  AtomrKernelCacheEntry *ea = *(AtomrKernelCacheEntry **) a;
  AtomrKernelCacheEntry *eb = *(AtomrKernelCacheEntry **) b;
  gint64 ua = MAX (ea->h.last_used, ea->h.created), ub = MAX (eb->h.last_used, eb->h.created);

  return ua < ub ? -1 : ua > ub ? 1 : g_strcmp0 (ea->h.key, eb->h.key);
}

/* Every valid entry, least recently used first.  With @clean, removes
 * damaged files and temporary files left by dead writers. */
static GPtrArray *
scan_directory (AtomrKernelCache  *self,
                gboolean           clean,
                GError           **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = NULL;
  const gchar *name;

  dir = g_dir_open (self->directory, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&entries);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree gchar *path = g_build_filename (self->directory, name, NULL);

      if (g_str_has_prefix (name, ".tmp-"))
        {
          struct stat st;
          if (clean && stat (path, &st) == 0
              && g_get_real_time () - (gint64) st.st_mtime * G_USEC_PER_SEC > STALE_TEMP_USEC)
            g_unlink (path);
          continue;
        }
      if (g_str_has_suffix (name, ATOMR_CACHE_SUFFIX))
        {
          g_autoptr(GError) entry_error = NULL;
          AtomrKernelCacheEntry *entry = entry_read (path, &entry_error);
          g_autofree gchar *expected = NULL;

          if (entry)
            expected = g_strconcat (entry->h.key, ATOMR_CACHE_SUFFIX, NULL);
          if (entry && g_str_equal (expected, name))
            g_ptr_array_add (entries, entry);
          else
            {
              g_clear_object (&entry);
              if (clean)
                {
                  g_debug ("kernel cache: removing %s: %s", path,
                           entry_error ? entry_error->message : "file name does not match its key");
                  g_unlink (path);
                }
            }
        }
    }
  g_ptr_array_sort (entries, compare_last_used);
  return g_steal_pointer (&entries);
}

/**
 * atomr_kernel_cache_list:
 * @self: a cache
 * @error: return location for a #GError
 *
 * Reads the metadata of every valid entry in the directory (damaged files
 * are skipped, not removed).  The list is a snapshot, least recently used
 * first.
 *
 * Returns: (transfer full): a #GListModel of #AtomrKernelCacheEntry, or
 *   %NULL when the directory cannot be read
 */
GListModel *
atomr_kernel_cache_list (AtomrKernelCache  *self,
                         GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  GListStore *store;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  entries = scan_directory (self, FALSE, error);
  if (entries == NULL)
    return NULL;
  store = g_list_store_new (ATOMR_TYPE_KERNEL_CACHE_ENTRY);
  g_list_store_splice (store, 0, 0, entries->pdata, entries->len);
  return G_LIST_MODEL (store);
}

/**
 * atomr_kernel_cache_lookup:
 * @self: a cache
 * @key: a key, or a unique prefix of one (at least 4 hex digits)
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the entry; %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT when no valid entry (or several) match
 */
AtomrKernelCacheEntry *
atomr_kernel_cache_lookup (AtomrKernelCache  *self,
                           const gchar       *key,
                           GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  AtomrKernelCacheEntry *found = NULL;
  guint n_found = 0;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  g_return_val_if_fail (key != NULL, NULL);

  if (key_is_valid (key))
    {
      g_autofree gchar *path = entry_path (self, key);
      g_autoptr(GError) local_error = NULL;
      AtomrKernelCacheEntry *entry = entry_read (path, &local_error);

      if (entry && g_str_equal (entry->h.key, key))
        return entry;
      g_clear_object (&entry);
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "key: no valid entry %s in %s%s%s", key, self->directory,
                   local_error ? ": " : "", local_error ? local_error->message : "");
      return NULL;
    }
  if (strlen (key) < 4 || strspn (key, "0123456789abcdef") != strlen (key))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "key: \"%s\" is neither a key nor a prefix of at least 4 lower-case hex digits", key);
      return NULL;
    }
  entries = scan_directory (self, FALSE, error);
  if (entries == NULL)
    return NULL;
  for (guint i = 0; i < entries->len; i++)
    {
      AtomrKernelCacheEntry *entry = g_ptr_array_index (entries, i);
      if (g_str_has_prefix (entry->h.key, key))
        {
          found = entry;
          n_found++;
        }
    }
  if (n_found != 1)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "key: prefix \"%s\" matches %u entries in %s", key, n_found, self->directory);
      return NULL;
    }
  return g_object_ref (found);
}

/**
 * atomr_kernel_cache_remove:
 * @self: a cache
 * @key: a key, or a unique prefix of one
 * @error: return location for a #GError
 *
 * Removes one entry from the disk and from memory.
 *
 * Returns: %TRUE if the entry was removed
 */
gboolean
atomr_kernel_cache_remove (AtomrKernelCache  *self,
                           const gchar       *key,
                           GError           **error)
{
  g_autoptr(AtomrKernelCacheEntry) entry = NULL;
  GHashTableIter iter;
  MemoryEntry *e;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);

  entry = atomr_kernel_cache_lookup (self, key, error);
  if (entry == NULL)
    return FALSE;
  if (g_unlink (entry->path) != 0 && errno != ENOENT)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot remove %s: %s", entry->path, g_strerror (errsv));
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->memory);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &e))
    if (g_strcmp0 (e->content->key, entry->h.key) == 0)
      {
        g_queue_unlink (&self->lru, e->link);
        g_list_free (e->link);
        g_hash_table_iter_remove (&iter);
      }
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/**
 * atomr_kernel_cache_gc:
 * @self: a cache
 * @max_size: bytes on disk to keep at most; 0 removes every entry
 * @n_removed: (out) (optional): entries removed
 * @bytes_freed: (out) (optional): bytes removed
 * @error: return location for a #GError
 *
 * Removes damaged files, temporary files of dead writers, then the least
 * recently used entries until the rest fits in @max_size.
 *
 * Returns: %TRUE on success
 */
gboolean
atomr_kernel_cache_gc (AtomrKernelCache  *self,
                       guint64            max_size,
                       guint             *n_removed,
                       guint64           *bytes_freed,
                       GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  guint64 total = 0, freed = 0;
  guint removed = 0;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  entries = scan_directory (self, TRUE, error);
  if (entries == NULL)
    return FALSE;
  for (guint i = 0; i < entries->len; i++)
    total += ((AtomrKernelCacheEntry *) g_ptr_array_index (entries, i))->h.file_size;
  for (guint i = 0; i < entries->len && total > max_size; i++)
    {
      AtomrKernelCacheEntry *entry = g_ptr_array_index (entries, i);
      if (g_unlink (entry->path) == 0)
        {
          total -= entry->h.file_size;
          freed += entry->h.file_size;
          removed++;
        }
      else if (errno == ENOENT)
        total -= entry->h.file_size;
    }
  if (n_removed)
    *n_removed = removed;
  if (bytes_freed)
    *bytes_freed = freed;
  return TRUE;
}

/**
 * atomr_kernel_cache_get_stats:
 * @self: a cache
 * @n_entries: (out) (optional): valid entries on disk
 * @total_bytes: (out) (optional): their size
 * @hits: (out) (optional): disk hits recorded by every process using the
 *   directory
 * @misses: (out) (optional): misses (compiles stored) recorded likewise
 * @error: return location for a #GError
 *
 * Returns: %TRUE on success
 */
gboolean
atomr_kernel_cache_get_stats (AtomrKernelCache  *self,
                              guint             *n_entries,
                              guint64           *total_bytes,
                              guint64           *hits,
                              guint64           *misses,
                              GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree gchar *path = NULL;
  g_autofree gchar *data = NULL;
  gsize len = 0;
  guint64 total = 0;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  entries = scan_directory (self, FALSE, error);
  if (entries == NULL)
    return FALSE;
  for (guint i = 0; i < entries->len; i++)
    total += ((AtomrKernelCacheEntry *) g_ptr_array_index (entries, i))->h.file_size;
  if (n_entries)
    *n_entries = entries->len;
  if (total_bytes)
    *total_bytes = total;
  path = g_build_filename (self->directory, STATS_FILE, NULL);
  if (g_file_get_contents (path, &data, &len, NULL) && len >= 24
      && memcmp (data, STATS_MAGIC, 8) == 0)
    {
      if (hits)
        *hits = get_u64 ((guint8 *) data + 8);
      if (misses)
        *misses = get_u64 ((guint8 *) data + 16);
    }
  else
    {
      if (hits)
        *hits = 0;
      if (misses)
        *misses = 0;
    }
  return TRUE;
}
