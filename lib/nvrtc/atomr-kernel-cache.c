/* atomr-kernel-cache.c — memory LRU in front of one file per entry on disk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#ifdef __linux__
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#endif
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-private.h"
#ifdef ATOMR_HAVE_SOUP
#include "atomr-remote-cache-private.h"
#endif
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
#define OFF_MANIFEST_SIZE 100
#define OFF_PTX_SIZE     104
#define OFF_CUBIN_SIZE   112
#define OFF_LTOIR_SIZE   120
#define OFF_CHECKSUM     128
#define OFF_RESERVED     160
#define RESERVED_LEN     16
#define STATS_FILE       "stats"
#define USAGE_FILE       "usage"
#define LOCK_SUFFIX      ".lock"
/* How long a compile waits for another process's lock on its key, and when
 * a lock of another host counts as abandoned (ATOMR_CACHE_LOCK_TIMEOUT,
 * ATOMR_CACHE_LOCK_STALE, in seconds). */
#define LOCK_TIMEOUT_SECONDS 300
#define LOCK_STALE_SECONDS   900
/* The usage journal is compacted by gc once it is larger than this. */
#define USAGE_COMPACT_BYTES (256 * 1024)
#define STATS_MAGIC      "ATOMRKS\n"
#define DEFAULT_MEMORY_CAPACITY 256
/* The default directory's size cap unless $ATOMR_CACHE_MAX_SIZE says. */
#define DEFAULT_MAX_SIZE (G_GUINT64_CONSTANT (1) << 30)
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
  guint32  meta_size, source_size, log_size, manifest_size;
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
  h->manifest_size = get_u32 (data + OFF_MANIFEST_SIZE);
  h->ptx_size = get_u64 (data + OFF_PTX_SIZE);
  h->cubin_size = get_u64 (data + OFF_CUBIN_SIZE);
  h->ltoir_size = get_u64 (data + OFF_LTOIR_SIZE);
  for (guint i = 0; i < RESERVED_LEN; i++)
    if (data[OFF_RESERVED + i] != 0)
      {
        g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                     "cache file: reserved header byte %u is 0x%02x, not zero",
                     OFF_RESERVED + i, data[OFF_RESERVED + i]);
        return FALSE;
      }
  h->last_used = h->created;
  h->hit_count = 0;
  h->file_size = file_size;
  total = ATOMR_CACHE_HEADER_SIZE + (guint64) h->meta_size + h->source_size + h->log_size
          + h->manifest_size;
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

/* The entry checksum: four independent 64-bit lanes over 32-byte blocks,
 * each step h = rotl ((h ^ word) * K, 31) — a bijection of h for a given
 * word, so a change confined to one block (any burst of up to 32 bytes,
 * every single bit flip) always changes the digest; other damage goes
 * unnoticed with probability 2^-64 per lane.  Several GB/s, where SHA-256
 * (the format-1 checksum) cost more than cuModuleLoadData on a disk hit.
 * It guards against damage, not against someone able to write the cache
 * directory (who could write any entry anyway). */
typedef struct {
  guint64 h[4];
  guint8  buf[32];
  gsize   buf_len;
  guint64 total;
} FastSum;

static const guint64 fast_k[4] = {
  G_GUINT64_CONSTANT (0x9e3779b97f4a7c15), G_GUINT64_CONSTANT (0xc2b2ae3d27d4eb4f),
  G_GUINT64_CONSTANT (0x165667b19e3779f9), G_GUINT64_CONSTANT (0xff51afd7ed558ccd),
};

static inline void
fast_block (FastSum      *s,
            const guint8 *p)
{
  for (guint j = 0; j < 4; j++)
    {
      guint64 w, h;
      memcpy (&w, p + 8 * j, 8);
      h = (s->h[j] ^ GUINT64_FROM_LE (w)) * fast_k[j];
      s->h[j] = (h << 31) | (h >> 33);
    }
}

static void
fast_init (FastSum *s)
{
  memset (s, 0, sizeof *s);
  for (guint j = 0; j < 4; j++)
    s->h[j] = fast_k[(j + 1) % 4] ^ (G_GUINT64_CONSTANT (0x4174726b43) + j);   /* "AtrkC" */
}

static void
fast_update (FastSum      *s,
             const guint8 *p,
             gsize         n)
{
  s->total += n;
  if (s->buf_len > 0)
    {
      gsize take = MIN (32 - s->buf_len, n);
      memcpy (s->buf + s->buf_len, p, take);
      s->buf_len += take;
      p += take;
      n -= take;
      if (s->buf_len < 32)
        return;
      fast_block (s, s->buf);
      s->buf_len = 0;
    }
  for (; n >= 32; p += 32, n -= 32)
    fast_block (s, p);
  if (n > 0)
    {
      memcpy (s->buf, p, n);
      s->buf_len = n;
    }
}

static void
fast_final (FastSum *s,
            guint8   digest[32])
{
  memset (s->buf + s->buf_len, 0, 32 - s->buf_len);
  fast_block (s, s->buf);
  for (guint j = 0; j < 4; j++)
    {
      guint64 h = s->h[j] ^ (s->total * fast_k[3 - j]);
      h ^= h >> 33;
      h *= G_GUINT64_CONSTANT (0xff51afd7ed558ccd);
      h ^= h >> 33;
      h *= G_GUINT64_CONSTANT (0xc4ceb9fe1a85ec53);
      h ^= h >> 33;
      put_u64 (digest + 8 * j, h);
    }
}

static void
compute_checksum (const guint8 *header,
                  const guint8 *payload,
                  gsize         payload_size,
                  guint8        digest[32])
{
  FastSum sum;

  fast_init (&sum);
  fast_update (&sum, header, OFF_CHECKSUM);
  fast_update (&sum, header + OFF_RESERVED, RESERVED_LEN);
  fast_update (&sum, payload, payload_size);
  fast_final (&sum, digest);
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
  gchar   *manifest;    /* JSON object, NULL for entries without one */
} Meta;

static void
meta_clear (Meta *m)
{
  g_strfreev (m->kernel_names);
  g_strfreev (m->lowered_names);
  g_strfreev (m->flags);
  g_free (m->arch);
  g_free (m->nvrtc_version);
  g_free (m->manifest);
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
  /* Empty or blank text parses, with no root at all. */
  if (json_parser_get_root (parser) == NULL || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
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
 * One entry of a cache directory, as listed by [method@Atomr.KernelCache.list]:
 * its metadata is read when listed; the source, log, PTX, CUBIN and LTO-IR
 * are read (and checksummed) on demand by the `load` functions.
 *
 * Since: 0.1
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

typedef enum { SECTION_META, SECTION_SOURCE, SECTION_LOG, SECTION_PTX, SECTION_CUBIN, SECTION_LTOIR,
               SECTION_MANIFEST } Section;

static void
section_range (const FileHeader *h,
               Section           section,
               guint64          *offset,
               guint64          *size)
{
  guint64 sizes[7] = { h->meta_size, h->source_size, h->log_size, h->ptx_size, h->cubin_size, h->ltoir_size,
                       h->manifest_size };
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
  bytes = entry_load_section (self, SECTION_SOURCE, error);
  return bytes ? bytes_to_string (bytes) : NULL;
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

/* ------------------------------------------------------------------ */
/* AtomrKernelCache                                                    */

struct _AtomrCacheRequest {
  GBytes    *blob;      /* everything but header contents: the memory key */
  gchar     *key;
  GPtrArray *headers;   /* AtomrCacheHeaderStamp */
  AtomrKernelCache *cache;     /* set while in flight or holding a lock */
  gboolean   in_flight; /* key is in cache->flights: this request compiles */
  gchar     *lock_path; /* the KEY.lock file this request created */
  /* For the manifest, copied after a memory miss: */
  gchar     *program_name;
  gchar    **kernel_names;
  gchar    **flags;
  gchar     *arch;
  GPtrArray *link_objects;   /* AtomrLinkObject, borrowed refs of data */
};

typedef struct {
  GBytes             *blob;
  AtomrModuleContent *content;
  GPtrArray          *headers;
  GList              *link;    /* in lru, data = this */
  gboolean            watched;   /* every header directory is watched */
  guint64             checked;   /* the watch generation of the last check */
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
 *
 * Since: 0.1
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
  GHashTable *flights;       /* keys being compiled in this process */
  int         watch_fd;      /* inotify, -1 when unavailable; under lock */
  GHashTable *watched_dirs;  /* directories watched; under lock */
  guint64     watch_gen;     /* bumped on any event; under lock */
  GCond       flight_done;   /* with lock: a key left flights */
  gchar      *store_error;   /* the first store failure, under lock */
  gboolean    store_warned;  /* under lock */
  gint        usage_failed;  /* atomic */
  int         usage_fd;      /* the journal, O_APPEND; -1 until the first hit */
  guint       n_rejected;    /* atomic: entries the driver rejected */
  gboolean    probe;         /* explain: look, record and remove nothing */
  GObject    *remote;        /* the remote layer, under lock; NULL: none */
  AtomrCacheRemoteFetch  remote_fetch;   /* under lock */
  AtomrCacheRemoteStored remote_stored;  /* under lock */
  guint64     remote_hits;   /* under lock */
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

static void flight_end (AtomrCacheRequest *request);
static void disk_unlock (AtomrCacheRequest *request);

void
atomr_cache_request_free (AtomrCacheRequest *request)
{
  /* A compile that failed (or was never stored) lets the next one try. */
  flight_end (request);
  disk_unlock (request);
  g_clear_object (&request->cache);
  g_free (request->program_name);
  g_strfreev (request->kernel_names);
  g_strfreev (request->flags);
  g_free (request->arch);
  g_clear_pointer (&request->link_objects, g_ptr_array_unref);
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
atomr_kernel_cache_disabled_by_env (void)
{
  return env_flag ("ATOMR_CACHE_DISABLE");
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
  self->memory = g_hash_table_new_full (request_hash, g_bytes_equal, NULL, memory_entry_free);
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
  memory_trim_locked (self, capacity);
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

/* Store failures (read-only directory, no space, a directory in the way)
 * are warned about once per cache object; the first one is kept for
 * atomr_kernel_cache_get_store_error().  With @warn FALSE (a hit that could
 * not be recorded: normal for a read-only cache) it is only kept. */
static void
note_store_failure (AtomrKernelCache *self,
                    const GError     *error,
                    gboolean          warn)
{
  g_mutex_lock (&self->lock);
  /* Set once and never freed before the cache: callers may hold it. */
  if (self->store_error == NULL)
    self->store_error = g_strdup (error->message);
  if (warn && !self->store_warned)
    self->store_warned = TRUE;
  else
    warn = FALSE;
  g_mutex_unlock (&self->lock);
  if (warn)
    g_warning ("kernel cache: %s (compiles are not kept on disk; further failures of this "
               "cache are not reported; `atomr cache stats` shows the state)", error->message);
  else
    g_debug ("kernel cache: %s", error->message);
}

/* The usage journal: one line "KEY USEC\n" appended per disk hit (a
 * write(2) of < 100 bytes with O_APPEND, so concurrent writers on a local
 * file system do not interleave), and "= KEY USEC HITS\n" lines written
 * by compaction.  It is advisory: a lost or torn line only changes which
 * entry gc removes first; unparseable lines are skipped. */
typedef struct {
  gint64  last_used;
  guint64 hits;
} Usage;

static void
usage_append (AtomrKernelCache *self,
              const gchar      *key)
{
  gchar line[128];
  gint len, fd;

  if (self->probe || g_atomic_int_get (&self->usage_failed))
    return;
  len = g_snprintf (line, sizeof line, "%s %" G_GINT64_FORMAT "\n", key, g_get_real_time ());
  /* One descriptor per cache object, opened on the first hit: a hit costs
   * one write(2).  Compaction rewrites the file in place (same inode). */
  g_mutex_lock (&self->lock);
  if (self->usage_fd < 0)
    {
      g_autofree gchar *path = g_build_filename (self->directory, USAGE_FILE, NULL);
      self->usage_fd = g_open (path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (self->usage_fd < 0)
        {
          int errsv = errno;
          g_autoptr(GError) error = g_error_new (G_IO_ERROR, g_io_error_from_errno (errsv),
                                                 "cannot record usage in %s: %s (read-only cache)",
                                                 path, g_strerror (errsv));
          g_mutex_unlock (&self->lock);
          g_atomic_int_set (&self->usage_failed, TRUE);
          note_store_failure (self, error, FALSE);
          return;
        }
    }
  fd = self->usage_fd;
  g_mutex_unlock (&self->lock);
  if (write (fd, line, len) != len)
    {
      int errsv = errno;
      g_autoptr(GError) error = g_error_new (G_IO_ERROR, g_io_error_from_errno (errsv),
                                             "cannot record usage in %s: %s", self->directory,
                                             g_strerror (errsv));
      g_atomic_int_set (&self->usage_failed, TRUE);
      note_store_failure (self, error, FALSE);
    }
}

static void
usage_add (GHashTable  *usage,
           const gchar *key,
           gint64       when,
           guint64      hits)
{
  Usage *u = g_hash_table_lookup (usage, key);

  if (u == NULL)
    {
      u = g_new0 (Usage, 1);
      g_hash_table_insert (usage, g_strdup (key), u);
    }
  u->last_used = MAX (u->last_used, when);
  u->hits += hits;
}

/* key -> Usage; empty when there is no journal.  *size_out: its bytes. */
static GHashTable *
usage_load (AtomrKernelCache *self,
            gsize            *size_out)
{
  g_autofree gchar *path = g_build_filename (self->directory, USAGE_FILE, NULL);
  g_autofree gchar *text = NULL;
  GHashTable *usage = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  gsize len = 0;

  if (size_out)
    *size_out = 0;
  if (!g_file_get_contents (path, &text, &len, NULL))
    return usage;
  if (size_out)
    *size_out = len;
  for (gchar *line = text, *next; line && *line; line = next)
    {
      gchar **f;
      guint n;

      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      f = g_strsplit (line, " ", 5);
      n = g_strv_length (f);
      if (n == 2 && key_is_valid (f[0]))
        usage_add (usage, f[0], g_ascii_strtoll (f[1], NULL, 10), 1);
      else if (n == 4 && g_str_equal (f[0], "=") && key_is_valid (f[1]))
        usage_add (usage, f[1], g_ascii_strtoll (f[2], NULL, 10), g_ascii_strtoull (f[3], NULL, 10));
      g_strfreev (f);
    }
  return usage;
}

/* Adds to the directory's counters (flock()ed read-modify-write). Hits
 * live in the usage journal; gc moves those of entries it drops here. */
static void
stats_add (AtomrKernelCache *self,
           guint64           hits,
           guint64           misses)
{
  g_autofree gchar *path = g_build_filename (self->directory, STATS_FILE, NULL);
  guint8 buf[24];
  int fd;

  if (self->probe)
    return;
  fd = g_open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  if (flock (fd, LOCK_EX) == 0)
    {
      guint64 h = 0, m = 0;
      if (pread (fd, buf, sizeof buf, 0) == sizeof buf && memcmp (buf, STATS_MAGIC, 8) == 0)
        {
          h = get_u64 (buf + 8);
          m = get_u64 (buf + 16);
        }
      memcpy (buf, STATS_MAGIC, 8);
      put_u64 (buf + 8, h + hits);
      put_u64 (buf + 16, m + misses);
      if (pwrite (fd, buf, sizeof buf, 0) != sizeof buf)
        g_debug ("kernel cache: cannot update %s: %s", path, g_strerror (errno));
    }
  close (fd);
}

/* Reads, checks and decodes entry @key.  Damaged, foreign or outdated files
 * are removed.  Records the hit in the usage journal. */
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
  int fd;

  /* Read only: a hit never writes the entry (usage goes to the journal),
   * so read-only and copy-on-write (overlayfs) directories stay as they
   * are. */
  fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return NULL;
  data = read_fd (fd, &size, &error);
  close (fd);
  if (data == NULL || !parse_header (data, size, &h, &error) || !verify_payload (data, &h, &error)
      || !g_str_equal (h.key, key))
    {
      if (error == NULL)
        g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "holds key %s", h.key);
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      if (!self->probe)
        g_unlink (path);
      return NULL;
    }
  section_range (&h, SECTION_META, &off, &len);
  if (!meta_parse ((const gchar *) data + off, len, &meta, &error))
    {
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      if (!self->probe)
        g_unlink (path);
      return NULL;
    }
  usage_append (self, key);

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
            JsonNode            *manifest,
            GError             **error)
{
  g_autofree gchar *path = entry_path (self, key);
  g_autofree gchar *tmp = NULL;
  g_autofree gchar *meta = NULL;
  g_autofree gchar *manifest_text = NULL;
  gsize manifest_len = 0;
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
  manifest_text = manifest ? json_to_string (manifest, FALSE) : NULL;
  manifest_len = manifest_text ? strlen (manifest_text) : 0;
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
  put_u32 (header + OFF_MANIFEST_SIZE, manifest_len);
  put_u64 (header + OFF_PTX_SIZE, bytes_size (content->ptx));
  put_u64 (header + OFF_CUBIN_SIZE, bytes_size (content->cubin));
  put_u64 (header + OFF_LTOIR_SIZE, bytes_size (content->ltoir));

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
  if (manifest_len)
    g_byte_array_append (file, (const guint8 *) manifest_text, manifest_len);
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

static gboolean gc_internal (AtomrKernelCache *self, guint64 max_size, gboolean verify,
                             gboolean compact, AtomrKernelCacheReport *report, GError **error);

/* Header validation by generation.  Every directory holding a header of a
 * memory entry (or where an absent one could appear) is watched with
 * inotify; any event there bumps watch_gen.  A memory hit whose entry was
 * checked at the current generation skips the stat() of its headers:
 * one non-blocking read() instead of hundreds of stat() calls (577 for
 * CUB).  inotify reports a change made by any process of this machine
 * before that change's write() returns, so nothing finished before the
 * lookup is missed.  It cannot see edits made on another machine (NFS,
 * CIFS, FUSE) nor writes through mmap(): headers on a network or FUSE file
 * system, a directory that cannot be watched (missing, watch limit), or
 * ATOMR_CACHE_STAT_HEADERS=1 make the entry stat() every time as before. */
#ifdef __linux__
static gboolean
is_local_file_system (const gchar *dir)
{
  struct statfs sf;

  if (statfs (dir, &sf) != 0)
    return FALSE;
  switch ((unsigned long) sf.f_type)
    {
    case NFS_SUPER_MAGIC:
    case SMB_SUPER_MAGIC:
    case 0xFF534D42:   /* CIFS */
    case 0xFE534D42:   /* SMB2 */
    case 0x65735546:   /* FUSE */
    case 0x6B414653:   /* AFS */
    case CODA_SUPER_MAGIC:
      return FALSE;
    default:
      return TRUE;
    }
}
#endif

static gboolean
watch_headers_locked (AtomrKernelCache *self,
                      GPtrArray        *headers)
{
#ifdef __linux__
  if (self->watch_fd < 0)
    return FALSE;
  for (guint i = 0; i < headers->len; i++)
    {
      AtomrCacheHeaderStamp *stamp = g_ptr_array_index (headers, i);
      g_autofree gchar *dir = NULL;

      /* A relative path names another file after chdir(), which no watch
       * on the old directory reports: such entries stat() every time. */
      if (!g_path_is_absolute (stamp->path))
        return FALSE;
      dir = g_path_get_dirname (stamp->path);
      if (g_hash_table_contains (self->watched_dirs, dir))
        continue;
      if (!is_local_file_system (dir)
          || inotify_add_watch (self->watch_fd, dir,
                                IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE
                                | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF) < 0)
        return FALSE;
      g_hash_table_add (self->watched_dirs, g_steal_pointer (&dir));
    }
  return TRUE;
#else
  return FALSE;
#endif
}

/* Drains the inotify queue; any event (or overflow) starts a generation. */
static void
watch_poll_locked (AtomrKernelCache *self)
{
#ifdef __linux__
  gchar buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  gboolean any = FALSE;

  if (self->watch_fd < 0)
    return;
  while (read (self->watch_fd, buf, sizeof buf) > 0)
    any = TRUE;
  if (any)
    self->watch_gen++;
#endif
}

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
  e->watched = watch_headers_locked (self, headers);
  /* The stamps predate the watches: the first hit stat()s them all. */
  e->checked = 0;
  g_queue_push_head (&self->lru, e);
  e->link = self->lru.head;
  g_hash_table_insert (self->memory, e->blob, e);
  memory_trim_locked (self, self->memory_capacity);
}

/* ------------------------------------------------------------------ */
/* Manifests                                                           */

static gchar *
sha256_of (gconstpointer data,
           gsize         len)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, len);
}

/* What the key of @request was computed from, readable: stored in the
 * entry and compared by explain/diff.  Header digests are taken here (at
 * store time); a header edited between the key and the store shows a
 * digest of the newer contents. */
static JsonNode *
manifest_build (AtomrCacheRequest *request,
                const gchar       *source)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree gchar *source_sum = sha256_of (source, strlen (source));

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "manifest_version");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "source_sha256");
  json_builder_add_string_value (b, source_sum);
  json_builder_set_member_name (b, "source_bytes");
  json_builder_add_int_value (b, strlen (source));
  json_builder_set_member_name (b, "program_name");
  if (request->program_name)
    json_builder_add_string_value (b, request->program_name);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "name_expressions");
  json_builder_begin_array (b);
  for (guint i = 0; request->kernel_names && request->kernel_names[i]; i++)
    json_builder_add_string_value (b, request->kernel_names[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "flags");
  json_builder_begin_array (b);
  for (guint i = 0; request->flags && request->flags[i]; i++)
    json_builder_add_string_value (b, request->flags[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "arch");
  if (request->arch)
    json_builder_add_string_value (b, request->arch);
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "nvrtc");
  json_builder_add_string_value (b, atomr_nvrtc_get_identity () ? atomr_nvrtc_get_identity () : "");
  json_builder_set_member_name (b, "nvjitlink");
  if (atomr_cache_flags_use_lto ((const gchar * const *) request->flags))
    json_builder_add_string_value (b, atomr_jitlink_get_identity () ? atomr_jitlink_get_identity () : "");
  else
    json_builder_add_null_value (b);
  json_builder_set_member_name (b, "headers");
  json_builder_begin_object (b);
  for (guint i = 0; request->headers && i < request->headers->len; i++)
    {
      AtomrCacheHeaderStamp *stamp = g_ptr_array_index (request->headers, i);
      g_autofree gchar *text = NULL;
      gsize len = 0;

      json_builder_set_member_name (b, stamp->path);
      if (stamp->exists && g_file_get_contents (stamp->path, &text, &len, NULL))
        {
          g_autofree gchar *sum = sha256_of (text, len);
          json_builder_add_string_value (b, sum);
        }
      else
        json_builder_add_null_value (b);   /* absent: could appear */
    }
  json_builder_end_object (b);
  json_builder_set_member_name (b, "link_objects");
  json_builder_begin_array (b);
  for (guint i = 0; request->link_objects && i < request->link_objects->len; i++)
    {
      gsize len;
      gconstpointer data = g_bytes_get_data (g_ptr_array_index (request->link_objects, i), &len);
      g_autofree gchar *sum = sha256_of (data, len);
      json_builder_add_string_value (b, sum);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

/* ------------------------------------------------------------------ */
/* One compile per key                                                 */

static void
flight_end (AtomrCacheRequest *request)
{
  AtomrKernelCache *self = request->cache;

  if (!request->in_flight)
    return;
  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->flights, request->key);
  request->in_flight = FALSE;
  g_cond_broadcast (&self->flight_done);
  g_mutex_unlock (&self->lock);
}

static void
disk_unlock (AtomrCacheRequest *request)
{
  if (request->lock_path == NULL)
    return;
  if (g_unlink (request->lock_path) != 0 && errno != ENOENT)
    g_debug ("kernel cache: cannot remove %s: %s", request->lock_path, g_strerror (errno));
  g_clear_pointer (&request->lock_path, g_free);
}

static gint64
env_seconds (const gchar *name,
             gint64       fallback)
{
  const gchar *v = g_getenv (name);
  guint64 n;

  if (v && g_ascii_string_to_unsigned (v, 10, 0, G_MAXINT32, &n, NULL))
    return (gint64) n;
  return fallback;
}

/* A lock file is stale when its process is gone (same host) or when it is
 * older than ATOMR_CACHE_LOCK_STALE seconds (another host, whose processes
 * cannot be asked: NFS). */
static gboolean
lock_is_stale (const gchar *path)
{
  g_autofree gchar *text = NULL;
  g_auto(GStrv) f = NULL;
  struct stat st;

  if (stat (path, &st) != 0)
    return FALSE;
  if (g_get_real_time () - (gint64) st.st_mtime * G_USEC_PER_SEC
      > env_seconds ("ATOMR_CACHE_LOCK_STALE", LOCK_STALE_SECONDS) * G_USEC_PER_SEC)
    return TRUE;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  f = g_strsplit (g_strstrip (text), " ", 3);
  if (g_strv_length (f) == 3 && g_str_equal (f[0], g_get_host_name ()))
    {
      gint64 pid = g_ascii_strtoll (f[1], NULL, 10);
      if (pid > 0 && pid != getpid () && kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
        return TRUE;
    }
  return FALSE;
}

/* The cross-process half: KEY.lock, created with O_EXCL (atomic on local
 * file systems and NFSv3+, unlike flock() over NFS), holds "HOST PID USEC".
 * Returns the entry if another process stored it meanwhile; else NULL with
 * request->lock_path set when this process now holds the lock (or unset
 * when it could not be had: unwritable directory, timeout — then it
 * compiles anyway, which is only wasted work). */
static AtomrModuleContent *
disk_lock (AtomrKernelCache  *self,
           AtomrCacheRequest *request)
{
  g_autofree gchar *name = g_strconcat (request->key, LOCK_SUFFIX, NULL);
  g_autofree gchar *path = g_build_filename (self->directory, name, NULL);
  gint64 deadline = g_get_monotonic_time ()
                    + env_seconds ("ATOMR_CACHE_LOCK_TIMEOUT", LOCK_TIMEOUT_SECONDS) * G_USEC_PER_SEC;
  gulong pause = 1000;

  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    return NULL;
  for (;;)
    {
      AtomrModuleContent *content;
      int fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

      if (fd >= 0)
        {
          g_autofree gchar *owner = g_strdup_printf ("%s %d %" G_GINT64_FORMAT "\n", g_get_host_name (),
                                                     (int) getpid (), g_get_real_time ());
          if (write (fd, owner, strlen (owner)) < 0)
            g_debug ("kernel cache: cannot write %s: %s", path, g_strerror (errno));
          close (fd);
          request->lock_path = g_steal_pointer (&path);
          /* Stored between our miss and the lock? */
          content = disk_read (self, request->key);
          if (content)
            disk_unlock (request);
          return content;
        }
      if (errno != EEXIST)
        {
          g_debug ("kernel cache: no lock %s (%s): compiling without", path, g_strerror (errno));
          return NULL;
        }
      content = disk_read (self, request->key);
      if (content)
        return content;
      if (lock_is_stale (path))
        {
          /* Renamed away first, so two processes that both judge it stale
           * do not remove a fresh lock taken in between. */
          g_autofree gchar *aside = g_strdup_printf ("%s.stale-%d-%08x", path, (int) getpid (), g_random_int ());
          if (g_rename (path, aside) == 0)
            {
              g_debug ("kernel cache: removed the stale lock %s", path);
              g_unlink (aside);
            }
          continue;
        }
      if (g_get_monotonic_time () > deadline)
        {
          g_debug ("kernel cache: %s still locked after the timeout: compiling anyway", path);
          return NULL;
        }
      g_usleep (pause);
      pause = MIN (pause * 2, 50000);
    }
}

static gboolean entry_data_verify (const gchar *name, const guint8 *data, guint64 size, GError **error);
static gboolean write_file_atomically (const gchar *dir, const gchar *name, const guint8 *data,
                                       guint64 size, GError **error);

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
  content = disk_read (self, key);
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
      content = disk_read (self, request->key);
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
      g_cond_wait (&self->flight_done, &self->lock);
    }
  if (waited)
    {
      MemoryEntry *e = g_hash_table_lookup (self->memory, request->blob);
      if (e)
        {
          g_queue_unlink (&self->lru, e->link);
          g_queue_push_head_link (&self->lru, e->link);
          self->memory_hits++;
          module = atomr_module_new (e->content, ATOMR_CACHE_STATUS_MEMORY_HIT);
          g_mutex_unlock (&self->lock);
          return module;
        }
    }
  g_hash_table_add (self->flights, g_strdup (request->key));
  request->in_flight = TRUE;
  if (request->cache == NULL)
    request->cache = g_object_ref (self);
  g_mutex_unlock (&self->lock);

  content = disk_read (self, request->key);
  if (content == NULL)
    content = remote_read (self, request->key);
  if (content == NULL)
    content = disk_lock (self, request);
  if (content == NULL)
    return NULL;
  g_mutex_lock (&self->lock);
  self->disk_hits++;
  memory_insert_locked (self, request->blob, content, request->headers);
  g_mutex_unlock (&self->lock);
  flight_end (request);
  module = atomr_module_new (content, ATOMR_CACHE_STATUS_DISK_HIT);
  atomr_module_content_unref (content);
  return module;
}

/* The memory level.  The headers' stat() calls (hundreds for CUB) run
 * outside the lock, on references taken under it, so concurrent hits of
 * other threads do not queue behind them. */
static AtomrModule *
memory_lookup (AtomrKernelCache *self,
               GBytes           *blob)
{
  g_autoptr(AtomrModuleContent) content = NULL;
  g_autoptr(GPtrArray) headers = NULL;
  MemoryEntry *e;
  guint64 gen;

  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->memory, blob);
  if (e == NULL)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  if (e->watched && e->headers->len > 0)
    watch_poll_locked (self);
  if (e->headers->len == 0 || (e->watched && e->checked == self->watch_gen))
    {
      /* Nothing to check: the common case stays one lock round. */
      g_queue_unlink (&self->lru, e->link);
      g_queue_push_head_link (&self->lru, e->link);
      self->memory_hits++;
      content = atomr_module_content_ref (e->content);
      g_mutex_unlock (&self->lock);
      return atomr_module_new (content, ATOMR_CACHE_STATUS_MEMORY_HIT);
    }
  content = atomr_module_content_ref (e->content);
  headers = g_ptr_array_ref (e->headers);
  gen = self->watch_gen;
  g_mutex_unlock (&self->lock);

  if (!atomr_cache_stamps_unchanged (headers))
    return NULL;
  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->memory, blob);
  if (e && e->content == content)
    {
      g_queue_unlink (&self->lru, e->link);
      g_queue_push_head_link (&self->lru, e->link);
      /* Valid as of the generation read before the stat()s. */
      e->checked = gen;
    }
  self->memory_hits++;
  g_mutex_unlock (&self->lock);
  return atomr_module_new (content, ATOMR_CACHE_STATUS_MEMORY_HIT);
}

AtomrModule *
atomr_kernel_cache_lookup_request (AtomrKernelCache         *self,
                                   const AtomrCacheKeyInput *input,
                                   AtomrCacheRequest       **request_out)
{
  g_autoptr(AtomrCacheRequest) request = g_new0 (AtomrCacheRequest, 1);
  g_autoptr(GError) error = NULL;
  AtomrModule *module;

  request->blob = atomr_cache_request_blob (input);

  module = memory_lookup (self, request->blob);
  if (module)
    return module;

  /* The key: the request plus every file NVRTC may read for it.  A
   * request that cannot be keyed bypasses the cache (*request_out stays
   * NULL). */
  request->key = atomr_cache_key_compute (request->blob, input, &request->headers, &error);
  if (request->key == NULL)
    {
      g_debug ("kernel cache: not cached: %s", error->message);
      return NULL;
    }
  request->program_name = g_strdup (input->program_name ? input->program_name : ATOMR_DEFAULT_PROGRAM_NAME);
  request->kernel_names = g_strdupv ((gchar **) input->kernel_names);
  request->flags = g_strdupv ((gchar **) input->flags);
  request->arch = g_strdup (input->arch);
  request->link_objects = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; input->link_objects && i < input->link_objects->len; i++)
    g_ptr_array_add (request->link_objects,
                     g_bytes_ref (((AtomrLinkObject *) g_ptr_array_index (input->link_objects, i))->data));

  module = lookup_single_flight (self, request);
  if (module)
    return module;
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
  g_autoptr(JsonNode) manifest = NULL;

  g_free (content->key);
  content->key = g_strdup (request->key);
  g_mutex_lock (&self->lock);
  self->misses++;
  memory_insert_locked (self, request->blob, content, request->headers);
  g_mutex_unlock (&self->lock);
  flight_end (request);   /* waiters in this process find it in memory */

  manifest = manifest_build (request, source);
  if (!disk_write (self, request->key, content, source, manifest, &error))
    {
      disk_unlock (request);
      note_store_failure (self, error, TRUE);
      return;
    }
  disk_unlock (request);  /* other processes find it on disk */
  stats_add (self, 0, 1);
  {
    g_autoptr(GObject) remote = NULL;
    AtomrCacheRemoteStored stored;

    g_mutex_lock (&self->lock);
    remote = self->remote ? g_object_ref (self->remote) : NULL;
    stored = self->remote_stored;
    g_mutex_unlock (&self->lock);
    if (remote && stored)
      {
        g_autofree gchar *path = entry_path (self, request->key);
        stored (remote, request->key, path);
      }
  }
  if (self->max_size > 0)
    {
      AtomrKernelCacheReport report;
      /* Headers only: verifying every checksum is `atomr cache gc`'s job. */
      if (!gc_internal (self, self->max_size, FALSE, FALSE, &report, &error))
        g_debug ("kernel cache: eviction failed: %s", error->message);
    }
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

static void
entry_apply_usage (AtomrKernelCacheEntry *entry,
                   GHashTable            *usage)
{
  Usage *u = g_hash_table_lookup (usage, entry->h.key);
  GDateTime *t;

  if (u == NULL)
    return;
  entry->h.hit_count = u->hits;
  if (u->last_used > entry->h.last_used && (t = date_time_from_usec (u->last_used)) != NULL)
    {
      entry->h.last_used = u->last_used;
      g_date_time_unref (entry->last_used);
      entry->last_used = t;
    }
}

/* Reads the whole file and checks its checksum and key. */
static gboolean
entry_verify (AtomrKernelCacheEntry  *entry,
              GError                **error)
{
  g_autoptr(GBytes) meta = entry_load_section (entry, SECTION_META, error);
  return meta != NULL;
}

static gboolean
remove_counted (const gchar *path,
                guint64     *freed)
{
  struct stat st;

  if (lstat (path, &st) != 0 || g_unlink (path) != 0)
    return FALSE;
  *freed += (guint64) st.st_size;
  return TRUE;
}

/* Every valid entry, least recently used first, with the usage journal
 * applied.  Counts damaged files and stale temporary files in @report
 * (when not NULL); with @verify reads every entry whole and checks its
 * checksum; with @clean removes what is damaged or stale, counting the
 * bytes really freed. */
static GPtrArray *
scan_directory (AtomrKernelCache        *self,
                gboolean                 clean,
                gboolean                 verify,
                AtomrKernelCacheReport  *report,
                GError                 **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GHashTable) usage = NULL;
  g_autoptr(GDir) dir = NULL;
  AtomrKernelCacheReport scratch = { 0 };
  const gchar *name;

  if (report == NULL)
    report = &scratch;
  dir = g_dir_open (self->directory, 0, &local_error);
  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&entries);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  usage = usage_load (self, NULL);
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree gchar *path = g_build_filename (self->directory, name, NULL);
      struct stat st;

      if (g_str_has_suffix (name, LOCK_SUFFIX))
        {
          if (lock_is_stale (path) && lstat (path, &st) == 0)
            {
              report->n_stale_temp++;
              report->stale_temp_bytes += (guint64) st.st_size;
              if (clean)
                remove_counted (path, &report->bytes_freed);
            }
          continue;
        }
      if (g_str_has_prefix (name, ".tmp-"))
        {
          if (lstat (path, &st) == 0
              && g_get_real_time () - (gint64) st.st_mtime * G_USEC_PER_SEC > STALE_TEMP_USEC)
            {
              report->n_stale_temp++;
              report->stale_temp_bytes += (guint64) st.st_size;
              if (clean)
                remove_counted (path, &report->bytes_freed);
            }
          continue;
        }
      if (g_str_has_suffix (name, ATOMR_CACHE_SUFFIX))
        {
          g_autoptr(GError) entry_error = NULL;
          AtomrKernelCacheEntry *entry = entry_read (path, &entry_error);
          g_autofree gchar *expected = NULL;

          if (entry)
            {
              expected = g_strconcat (entry->h.key, ATOMR_CACHE_SUFFIX, NULL);
              if (!g_str_equal (expected, name))
                g_set_error (&entry_error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                             "the file name does not match its key %s", entry->h.key);
              else if (verify)
                entry_verify (entry, &entry_error);
            }
          if (entry && entry_error == NULL)
            {
              entry_apply_usage (entry, usage);
              g_ptr_array_add (entries, entry);
              continue;
            }
          g_clear_object (&entry);
          if (g_error_matches (entry_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
            continue;   /* removed meanwhile */
          report->n_damaged++;
          if (lstat (path, &st) == 0)
            report->damaged_bytes += (guint64) st.st_size;
          if (clean)
            {
              g_debug ("kernel cache: removing %s: %s", path, entry_error->message);
              remove_counted (path, &report->bytes_freed);
            }
        }
    }
  g_ptr_array_sort (entries, compare_last_used);
  for (guint i = 0; i < entries->len; i++)
    {
      AtomrKernelCacheEntry *entry = g_ptr_array_index (entries, i);
      report->n_entries++;
      report->entry_bytes += entry->h.file_size;
    }
  return g_steal_pointer (&entries);
}

/**
 * atomr_kernel_cache_list:
 * @self: a cache
 * @error: return location for a [struct@GLib.Error]
 *
 * Reads the metadata of every valid entry in the directory (damaged files
 * are skipped, not removed).  The list is a snapshot, least recently used
 * first.
 *
 * Returns: (transfer full): a [iface@Gio.ListModel] of [class@Atomr.KernelCacheEntry], or
 *   %NULL when the directory cannot be read
 *
 * Since: 0.1
 */
GListModel *
atomr_kernel_cache_list (AtomrKernelCache  *self,
                         GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  GListStore *store;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  entries = scan_directory (self, FALSE, FALSE, NULL, error);
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
 * @error: return location for a [struct@GLib.Error]
 *
 * Finds the entry of a key, or of a unique prefix of one.
 *
 * Returns: (transfer full): the entry; %NULL with
 *   %ATOMR_ERROR_INVALID_ARGUMENT when no valid entry (or several) match
 *
 * Since: 0.1
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
        {
          g_autoptr(GHashTable) usage = usage_load (self, NULL);
          entry_apply_usage (entry, usage);
          return entry;
        }
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
  entries = scan_directory (self, FALSE, FALSE, NULL, error);
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
 * @error: return location for a [struct@GLib.Error]
 *
 * Removes one entry from the disk and from memory.
 *
 * Returns: %TRUE if the entry was removed
 *
 * Since: 0.1
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

/* Rewrites the usage journal with one line per entry still there.  Lines
 * appended between reading and the rename are lost (the journal is
 * advisory). */
/* Rewrites the usage journal in place (appenders keep their descriptor)
 * with one line per entry still there; the hits of lines dropped go to
 * the stats file so the directory's hit count does not shrink.  Lines
 * appended between the read and the truncation are lost (the journal is
 * advisory). */
static void
usage_compact (AtomrKernelCache *self,
               GPtrArray        *entries,
               guint             first_kept)
{
  g_autofree gchar *path = g_build_filename (self->directory, USAGE_FILE, NULL);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GHashTable) usage = NULL;
  guint64 total = 0, kept = 0;
  GHashTableIter iter;
  Usage *u;
  int fd;

  fd = g_open (path, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    return;
  if (flock (fd, LOCK_EX) != 0)
    {
      close (fd);
      return;
    }
  usage = usage_load (self, NULL);
  g_hash_table_iter_init (&iter, usage);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &u))
    total += u->hits;
  for (guint i = first_kept; i < entries->len; i++)
    {
      AtomrKernelCacheEntry *e = g_ptr_array_index (entries, i);
      u = g_hash_table_lookup (usage, e->h.key);
      if (u && u->hits > 0)
        {
          g_string_append_printf (text, "= %s %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT "\n",
                                  e->h.key, u->last_used, u->hits);
          kept += u->hits;
        }
    }
  if (ftruncate (fd, 0) != 0
      || (text->len > 0 && pwrite (fd, text->str, text->len, 0) != (gssize) text->len))
    g_debug ("kernel cache: cannot compact %s: %s", path, g_strerror (errno));
  else if (total > kept)
    stats_add (self, total - kept, 0);
  close (fd);   /* releases the flock */
}

static void stats_read (AtomrKernelCache *self, guint64 *hits, guint64 *misses);

static gboolean
gc_internal (AtomrKernelCache        *self,
             guint64                  max_size,
             gboolean                 verify,
             gboolean                 compact,
             AtomrKernelCacheReport  *report,
             GError                 **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  guint64 total;
  guint i;
  gsize usage_size = 0;

  memset (report, 0, sizeof *report);
  entries = scan_directory (self, TRUE, verify, report, error);
  if (entries == NULL)
    return FALSE;
  total = report->entry_bytes;
  for (i = 0; i < entries->len && total > max_size; i++)
    {
      AtomrKernelCacheEntry *entry = g_ptr_array_index (entries, i);
      if (remove_counted (entry->path, &report->bytes_freed))
        report->n_removed++;
      else if (errno != ENOENT)
        break;
      total -= entry->h.file_size;
      report->n_entries--;
    }
  report->entry_bytes = total;
  if (!compact)
    g_hash_table_unref (usage_load (self, &usage_size));
  if (compact || usage_size > USAGE_COMPACT_BYTES)
    {
      g_autofree gchar *path = g_build_filename (self->directory, USAGE_FILE, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        usage_compact (self, entries, i);
    }
  return TRUE;
}

/**
 * atomr_kernel_cache_gc: (skip)
 * @self: a cache
 * @max_size: bytes on disk to keep at most; 0 removes every entry
 * @n_removed: (out) (optional): entries removed to fit @max_size
 * @bytes_freed: (out) (optional): bytes really freed, damaged and
 *   temporary files included
 * @error: return location for a [struct@GLib.Error]
 *
 * Removes damaged files (every entry's checksum is verified), temporary
 * files of dead writers, then the least recently used entries until the
 * rest fits in @max_size.  [method@Atomr.KernelCache.collect] reports more.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_cache_gc (AtomrKernelCache  *self,
                       guint64            max_size,
                       guint             *n_removed,
                       guint64           *bytes_freed,
                       GError           **error)
{
  AtomrKernelCacheReport report;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  if (!gc_internal (self, max_size, TRUE, TRUE, &report, error))
    return FALSE;
  if (n_removed)
    *n_removed = report.n_removed;
  if (bytes_freed)
    *bytes_freed = report.bytes_freed;
  return TRUE;
}

/**
 * atomr_kernel_cache_collect:
 * @self: a cache
 * @max_size: bytes on disk to keep at most; 0 removes every entry,
 *   %G_MAXUINT64 only removes damaged and stale files
 * @report: (out caller-allocates): what was found and removed
 * @error: return location for a [struct@GLib.Error]
 *
 * [method@Atomr.KernelCache.gc] with a full report: damaged entries (failed
 * checksum, foreign format, misnamed) and stale temporary files found and
 * removed, entries removed to fit @max_size, bytes really freed, and what
 * is left.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_kernel_cache_collect (AtomrKernelCache        *self,
                            guint64                  max_size,
                            AtomrKernelCacheReport  *report,
                            GError                 **error)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  g_return_val_if_fail (report != NULL, FALSE);
  if (!gc_internal (self, max_size, TRUE, TRUE, report, error))
    return FALSE;
  stats_read (self, &report->hits, &report->misses);
  report->writable = atomr_kernel_cache_check_writable (self, NULL);
  return TRUE;
}

static void
stats_read (AtomrKernelCache *self,
            guint64          *hits,
            guint64          *misses)
{
  g_autofree gchar *path = g_build_filename (self->directory, STATS_FILE, NULL);
  g_autofree gchar *data = NULL;
  g_autoptr(GHashTable) usage = usage_load (self, NULL);
  GHashTableIter iter;
  Usage *u;
  gsize len = 0;

  *hits = *misses = 0;
  if (g_file_get_contents (path, &data, &len, NULL) && len >= 24
      && memcmp (data, STATS_MAGIC, 8) == 0)
    {
      *hits = get_u64 ((guint8 *) data + 8);
      *misses = get_u64 ((guint8 *) data + 16);
    }
  g_hash_table_iter_init (&iter, usage);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &u))
    *hits += u->hits;
}

/**
 * atomr_kernel_cache_get_report:
 * @self: a cache
 * @verify: whether to read every entry whole and check its checksum
 *   (else only headers and metadata are read)
 * @report: (out caller-allocates): the state of the directory
 * @error: return location for a [struct@GLib.Error]
 *
 * Counts valid and damaged entries, stale temporary files, hits and
 * misses recorded by every process, and whether the directory is
 * writable.  Removes nothing.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_kernel_cache_get_report (AtomrKernelCache        *self,
                               gboolean                 verify,
                               AtomrKernelCacheReport  *report,
                               GError                 **error)
{
  g_autoptr(GPtrArray) entries = NULL;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  g_return_val_if_fail (report != NULL, FALSE);
  memset (report, 0, sizeof *report);
  entries = scan_directory (self, FALSE, verify, report, error);
  if (entries == NULL)
    return FALSE;
  stats_read (self, &report->hits, &report->misses);
  report->writable = atomr_kernel_cache_check_writable (self, NULL);
  return TRUE;
}

/**
 * atomr_kernel_cache_get_stats: (skip)
 * @self: a cache
 * @n_entries: (out) (optional): valid entries on disk
 * @total_bytes: (out) (optional): their size
 * @hits: (out) (optional): disk hits recorded by every process using the
 *   directory
 * @misses: (out) (optional): misses (compiles stored) recorded likewise
 * @error: return location for a [struct@GLib.Error]
 *
 * A short form of [method@Atomr.KernelCache.get_report].
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
atomr_kernel_cache_get_stats (AtomrKernelCache  *self,
                              guint             *n_entries,
                              guint64           *total_bytes,
                              guint64           *hits,
                              guint64           *misses,
                              GError           **error)
{
  AtomrKernelCacheReport report;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  if (!atomr_kernel_cache_get_report (self, FALSE, &report, error))
    return FALSE;
  if (n_entries)
    *n_entries = report.n_entries;
  if (total_bytes)
    *total_bytes = report.entry_bytes;
  if (hits)
    *hits = report.hits;
  if (misses)
    *misses = report.misses;
  return TRUE;
}

/**
 * atomr_kernel_cache_check_writable:
 * @self: a cache
 * @error: return location for a [struct@GLib.Error]
 *
 * Whether new entries can be stored: creates the directory if needed and
 * a probe file in it (removed at once).  A read-only cache still serves
 * hits.
 *
 * Returns: %TRUE if the directory is writable
 *
 * Since: 0.2
 */
gboolean
atomr_kernel_cache_check_writable (AtomrKernelCache  *self,
                                   GError           **error)
{
  g_autofree gchar *probe = NULL;
  int fd;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  probe = g_strdup_printf ("%s/.tmp-probe-%d-%08x", self->directory, (int) getpid (), g_random_int ());
  fd = g_open (probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot write in %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  close (fd);
  g_unlink (probe);
  return TRUE;
}

/**
 * atomr_kernel_cache_get_store_error:
 * @self: a cache
 *
 * The first failure of this cache object to store an entry or record a
 * hit (a read-only directory, no space left, a directory in the way).
 * Store failures are also warned about once.
 *
 * Returns: (nullable): the message, %NULL when every store succeeded
 *
 * Since: 0.2
 */
const gchar *
atomr_kernel_cache_get_store_error (AtomrKernelCache *self)
{
  const gchar *msg;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), NULL);
  g_mutex_lock (&self->lock);
  msg = self->store_error;   /* set once, freed with the cache */
  g_mutex_unlock (&self->lock);
  return msg;
}

/**
 * atomr_kernel_cache_report_copy:
 * @report: a report
 *
 * Copies a report.
 *
 * Returns: (transfer full): a copy
 *
 * Since: 0.2
 */
AtomrKernelCacheReport *
atomr_kernel_cache_report_copy (const AtomrKernelCacheReport *report)
{
  return g_memdup2 (report, sizeof *report);
}

/**
 * atomr_kernel_cache_report_free:
 * @report: a report from [method@Atomr.KernelCacheReport.copy]
 *
 * Frees @report.
 *
 * Since: 0.2
 */
void
atomr_kernel_cache_report_free (AtomrKernelCacheReport *report)
{
  g_free (report);
}

G_DEFINE_BOXED_TYPE (AtomrKernelCacheReport, atomr_kernel_cache_report,
                     atomr_kernel_cache_report_copy, atomr_kernel_cache_report_free)

/**
 * atomr_parse_size:
 * @text: a size: a number with an optional unit, `k`, `M`, `G` or `T`
 *   (powers of 1024, optionally followed by `B` or `iB`), such as `20k`
 *   or `1G`
 * @size: (out): the size in bytes
 * @error: return location for a [struct@GLib.Error]
 *
 * Parses a size as the CLI and `ATOMR_CACHE_MAX_SIZE` take it.
 *
 * Returns: %TRUE on success; %ATOMR_ERROR_INVALID_ARGUMENT naming @text
 *   otherwise
 *
 * Since: 0.2
 */
gboolean
atomr_parse_size (const gchar  *text,
                  guint64      *size,
                  GError      **error)
{
  const gchar *units = "kMGT";
  gchar *end = NULL;
  guint64 value, mult = 1;
  const gchar *u;

  g_return_val_if_fail (size != NULL, FALSE);
  if (text == NULL || !g_ascii_isdigit (text[0]))
    goto bad;
  errno = 0;
  value = g_ascii_strtoull (text, &end, 10);
  if (errno != 0)
    goto bad;
  if (*end != '\0')
    {
      u = strchr (units, *end == 'K' ? 'k' : *end);
      if (u == NULL)
        goto bad;
      for (const gchar *q = units; q <= u; q++)
        mult *= 1024;
      end++;
      if (g_str_equal (end, "B") || g_str_equal (end, "iB"))
        end += strlen (end);
      if (*end != '\0')
        goto bad;
    }
  else
    mult = 1;
  if (mult > 1 && value > G_MAXUINT64 / mult)
    goto bad;
  *size = value * mult;
  return TRUE;

bad:
  g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
               "size: \"%s\" is not a size (a number with an optional unit k, M, G or T, "
               "such as 20k or 1G)", text ? text : "(null)");
  return FALSE;
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
    g_autofree gchar *path = entry_path (self, key);
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
  g_return_val_if_fail (key_is_valid (key), FALSE);
  return disk_write (self, key, content, source, NULL, error);
}

/* ------------------------------------------------------------------ */
/* Bundles: export and import                                          */

#define TAR_BLOCK 512

static gboolean
name_is_entry (const gchar *name)
{
  gsize len = strlen (name);
  g_autofree gchar *key = NULL;

  if (len != KEY_LEN + strlen (ATOMR_CACHE_SUFFIX) || !g_str_has_suffix (name, ATOMR_CACHE_SUFFIX))
    return FALSE;
  key = g_strndup (name, KEY_LEN);
  return key_is_valid (key);
}

/* Checks a whole entry file held in memory: header, checksum, and that it
 * holds the key its name says. */
static gboolean
entry_data_verify (const gchar   *name,
                   const guint8  *data,
                   guint64        size,
                   GError       **error)
{
  FileHeader h;

  if (!name_is_entry (name))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: not an entry name (64 lower-case hex digits and %s)", name, ATOMR_CACHE_SUFFIX);
      return FALSE;
    }
  if (!parse_header (data, size, &h, error) || !verify_payload (data, &h, error))
    {
      g_prefix_error (error, "%s: ", name);
      return FALSE;
    }
  if (strncmp (name, h.key, KEY_LEN) != 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "%s: holds the entry of key %s", name, h.key);
      return FALSE;
    }
  return TRUE;
}

static void
tar_octal (gchar *field, gsize width, guint64 value)
{
  g_snprintf (field, width, "%0*" G_GINT64_MODIFIER "o", (int) width - 1, value);
}

static gboolean
tar_write_member (int           fd,
                  const gchar  *name,
                  const guint8 *data,
                  guint64       size,
                  gint64        mtime,
                  GError      **error)
{
  guint8 header[TAR_BLOCK] = { 0 };
  static const guint8 zeros[TAR_BLOCK] = { 0 };
  guint sum = 0;

  memcpy (header, name, MIN (strlen (name), 99));
  tar_octal ((gchar *) header + 100, 8, 0644);
  tar_octal ((gchar *) header + 108, 8, 0);
  tar_octal ((gchar *) header + 116, 8, 0);
  tar_octal ((gchar *) header + 124, 12, size);
  tar_octal ((gchar *) header + 136, 12, (guint64) MAX (mtime, 0));
  memset (header + 148, ' ', 8);
  header[156] = '0';
  memcpy (header + 257, "ustar", 6);
  memcpy (header + 263, "00", 2);
  for (guint i = 0; i < TAR_BLOCK; i++)
    sum += header[i];
  g_snprintf ((gchar *) header + 148, 8, "%06o", sum);
  header[155] = ' ';
  return write_all (fd, header, TAR_BLOCK, error)
         && write_all (fd, data, size, error)
         && write_all (fd, zeros, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK, error);
}

/* Writes @data as @dir/@name atomically (temporary name, rename). */
static gboolean
write_file_atomically (const gchar   *dir,
                       const gchar   *name,
                       const guint8  *data,
                       guint64        size,
                       GError       **error)
{
  g_autofree gchar *path = g_build_filename (dir, name, NULL);
  g_autofree gchar *tmp = g_strdup_printf ("%s/.tmp-%s-%d-%08x", dir, name, (int) getpid (), g_random_int ());
  int fd = g_open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "cannot create %s: %s", tmp, g_strerror (errsv));
      return FALSE;
    }
  if (!write_all (fd, data, size, error))
    {
      close (fd);
      g_unlink (tmp);
      return FALSE;
    }
  if (close (fd) != 0 || g_rename (tmp, path) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "cannot store %s: %s", path, g_strerror (errsv));
      g_unlink (tmp);
      return FALSE;
    }
  return TRUE;
}

/**
 * atomr_kernel_cache_export:
 * @self: a cache
 * @destination: (type filename): a directory (created if needed) or a file
 *   whose name ends in `.tar` (a POSIX ustar archive)
 * @n_exported: (out) (optional): entries written
 * @error: return location for a [struct@GLib.Error]
 *
 * Writes every valid entry (its checksum verified) into a relocatable
 * bundle for containers and CI: entry files hold no path of this machine,
 * and [method@Atomr.KernelCache.import] verifies them again.  Usage and the
 * hit/miss counters stay behind.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_kernel_cache_export (AtomrKernelCache  *self,
                           const gchar       *destination,
                           guint             *n_exported,
                           GError           **error)
{
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree gchar *tmp = NULL;
  gboolean tar;
  guint n = 0;
  int fd = -1;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  g_return_val_if_fail (destination != NULL, FALSE);
  entries = scan_directory (self, FALSE, TRUE, NULL, error);
  if (entries == NULL)
    return FALSE;
  tar = g_str_has_suffix (destination, ".tar");
  if (tar)
    {
      tmp = g_strdup_printf ("%s.tmp-%d", destination, (int) getpid ());
      fd = g_open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                       "destination: cannot create %s: %s", destination, g_strerror (errsv));
          return FALSE;
        }
    }
  else if (g_mkdir_with_parents (destination, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "destination: cannot create the directory %s: %s", destination, g_strerror (errsv));
      return FALSE;
    }
  for (guint i = 0; i < entries->len; i++)
    {
      AtomrKernelCacheEntry *e = g_ptr_array_index (entries, i);
      g_autofree gchar *name = g_path_get_basename (e->path);
      g_autofree guint8 *data = NULL;
      g_autoptr(GError) local = NULL;
      guint64 size = 0;
      int in = g_open (e->path, O_RDONLY | O_CLOEXEC, 0);
      gboolean ok;

      if (in < 0)
        continue;   /* removed meanwhile */
      data = read_fd (in, &size, &local);
      close (in);
      if (data == NULL || !entry_data_verify (name, data, size, &local))
        {
          g_debug ("kernel cache: not exported: %s", local ? local->message : name);
          continue;
        }
      ok = tar ? tar_write_member (fd, name, data, size, e->h.created / G_USEC_PER_SEC, error)
               : write_file_atomically (destination, name, data, size, error);
      if (!ok)
        {
          if (fd >= 0)
            {
              close (fd);
              g_unlink (tmp);
            }
          return FALSE;
        }
      n++;
    }
  if (tar)
    {
      guint8 zeros[2 * TAR_BLOCK] = { 0 };
      if (!write_all (fd, zeros, sizeof zeros, error))
        {
          close (fd);
          g_unlink (tmp);
          return FALSE;
        }
      if (close (fd) != 0 || g_rename (tmp, destination) != 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                       "destination: cannot write %s: %s", destination, g_strerror (errsv));
          g_unlink (tmp);
          return FALSE;
        }
    }
  if (n_exported)
    *n_exported = n;
  return TRUE;
}

typedef struct {
  AtomrKernelCache *self;
  guint             imported, rejected;
} ImportState;

static gboolean
import_member (ImportState   *st,
               const gchar   *name,
               const guint8  *data,
               guint64        size,
               GError       **error)
{
  g_autoptr(GError) local = NULL;

  if (!entry_data_verify (name, data, size, &local))
    {
      g_debug ("kernel cache: import rejected %s", local->message);
      st->rejected++;
      return TRUE;
    }
  if (!write_file_atomically (st->self->directory, name, data, size, error))
    return FALSE;
  st->imported++;
  return TRUE;
}

static guint64
tar_parse_octal (const guint8 *field, gsize width, gboolean *ok)
{
  guint64 v = 0;
  gsize i = 0;

  while (i < width && field[i] == ' ')
    i++;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; i++)
    {
      if (v > G_MAXUINT64 >> 3)
        *ok = FALSE;
      v = v * 8 + (field[i] - '0');
    }
  if (i < width && field[i] != '\0' && field[i] != ' ')
    *ok = FALSE;
  return v;
}

static gboolean
read_exact (int fd, guint8 *buf, gsize len, gboolean *eof, GError **error)
{
  gsize done = 0;

  *eof = FALSE;
  while (done < len)
    {
      ssize_t n = read (fd, buf + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int errsv = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "read: %s", g_strerror (errsv));
          return FALSE;
        }
      if (n == 0)
        {
          *eof = TRUE;
          return done == 0;
        }
      done += n;
    }
  return TRUE;
}

static gboolean
import_tar (ImportState  *st,
            const gchar  *path,
            GError      **error)
{
  int fd = g_open (path, O_RDONLY | O_CLOEXEC, 0);
  guint8 header[TAR_BLOCK];
  gboolean eof, result = FALSE;
  guint64 offset = 0;

  if (fd < 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv), "source: %s: %s", path, g_strerror (errsv));
      return FALSE;
    }
  for (;;)
    {
      g_autofree guint8 *data = NULL;
      g_autofree gchar *name = NULL;
      gboolean ok = TRUE, zero = TRUE;
      guint64 size, padded;
      guint sum = 0, stored_sum;

      if (!read_exact (fd, header, TAR_BLOCK, &eof, error))
        {
          if (error && *error == NULL)
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "source: %s: truncated tar header at byte %" G_GUINT64_FORMAT, path, offset);
          break;
        }
      if (eof)
        {
          result = TRUE;   /* no end blocks: tolerated */
          break;
        }
      for (guint i = 0; i < TAR_BLOCK; i++)
        {
          zero = zero && header[i] == 0;
          sum += (i >= 148 && i < 156) ? ' ' : header[i];
        }
      if (zero)
        {
          result = TRUE;
          break;
        }
      stored_sum = (guint) tar_parse_octal (header + 148, 8, &ok);
      size = tar_parse_octal (header + 124, 12, &ok);
      if (!ok || stored_sum != sum || size > G_GUINT64_CONSTANT (1) << 36)
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "source: %s: not a tar archive, or damaged at byte %" G_GUINT64_FORMAT
                       " (header checksum %u, computed %u)", path, offset, stored_sum, sum);
          break;
        }
      offset += TAR_BLOCK;
      name = g_strndup ((const gchar *) header, 100);
      padded = (size + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
      data = g_malloc (MAX (padded, 1));
      if (!read_exact (fd, data, padded, &eof, error) || eof)
        {
          if (error && *error == NULL)
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "source: %s: member %s truncated", path, name);
          break;
        }
      offset += padded;
      if (header[156] != '0' && header[156] != '\0')
        {
          if (header[156] != '5')   /* directories are fine; nothing else */
            st->rejected++;
          continue;
        }
      {
        /* "./KEY.akc" is how tar(1) names members of `tar -C dir .` */
        const gchar *base = g_str_has_prefix (name, "./") ? name + 2 : name;
        if (!import_member (st, base, data, size, error))
          break;
      }
    }
  close (fd);
  return result;
}

static gboolean
import_directory (ImportState  *st,
                  const gchar  *path,
                  GError      **error)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, error);
  const gchar *name;

  if (dir == NULL)
    {
      g_prefix_error (error, "source: ");
      return FALSE;
    }
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree gchar *file = g_build_filename (path, name, NULL);
      g_autofree guint8 *data = NULL;
      g_autoptr(GError) local = NULL;
      guint64 size = 0;
      int fd;

      if (!g_str_has_suffix (name, ATOMR_CACHE_SUFFIX))
        continue;   /* usage, stats, locks: not entries */
      fd = g_open (file, O_RDONLY | O_CLOEXEC, 0);
      if (fd < 0)
        {
          st->rejected++;
          continue;
        }
      data = read_fd (fd, &size, &local);
      close (fd);
      if (data == NULL)
        {
          st->rejected++;
          continue;
        }
      if (!import_member (st, name, data, size, error))
        return FALSE;
    }
  return TRUE;
}

/**
 * atomr_kernel_cache_import:
 * @self: a cache
 * @source: (type filename): a directory or a `.tar` file, as written by
 *   [method@Atomr.KernelCache.export] (or `tar -cf B.tar -C DIR .`)
 * @n_imported: (out) (optional): entries added (or replaced)
 * @n_rejected: (out) (optional): members refused: not named as an entry,
 *   damaged (checksum), of another format version, holding another key,
 *   or not regular files
 * @error: return location for a [struct@GLib.Error]
 *
 * Copies the valid entries of a bundle into the cache directory, each
 * verified and written atomically.  An unreadable source or a malformed
 * archive is an error; entries imported before it stay.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
atomr_kernel_cache_import (AtomrKernelCache  *self,
                           const gchar       *source,
                           guint             *n_imported,
                           guint             *n_rejected,
                           GError           **error)
{
  ImportState st = { self, 0, 0 };
  gboolean ok;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  g_return_val_if_fail (source != NULL, FALSE);
  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  if (g_file_test (source, G_FILE_TEST_IS_DIR))
    ok = import_directory (&st, source, error);
  else
    ok = import_tar (&st, source, error);
  if (n_imported)
    *n_imported = st.imported;
  if (n_rejected)
    *n_rejected = st.rejected;
  return ok;
}

/* ------------------------------------------------------------------ */
/* explain and diff                                                    */

/* A module of this cache's memory level holding @key, if any (no stat). */
static AtomrModule *
memory_lookup_key (AtomrKernelCache *self,
                   const gchar      *key)
{
  GHashTableIter iter;
  MemoryEntry *e;
  AtomrModule *module = NULL;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->memory);
  while (module == NULL && g_hash_table_iter_next (&iter, NULL, (gpointer *) &e))
    if (g_strcmp0 (e->content->key, key) == 0)
      module = atomr_module_new (e->content, ATOMR_CACHE_STATUS_MEMORY_HIT);
  g_mutex_unlock (&self->lock);
  return module;
}

/**
 * atomr_kernel_cache_entry_get_manifest:
 * @self: an entry
 *
 * What the entry's key was computed from, as a JSON object:
 * `manifest_version`, `source_sha256`, `source_bytes`, `name_expressions`,
 * `flags`, `arch`, `nvrtc` (the library's identity), `headers` (path →
 * SHA-256 of every header read, null where an absent header could
 * appear), `link_objects` (SHA-256 of each), and whatever the key gains
 * later.
 *
 * Returns: (nullable): the manifest, %NULL for entries written without one
 *
 * Since: 0.2
 */
const gchar *
atomr_kernel_cache_entry_get_manifest (AtomrKernelCacheEntry *self)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  if (self->meta.manifest == NULL && self->h.manifest_size > 0 && self->path)
    {
      /* Read on first use (not when listing: it can be large), checksum
       * verified with the rest of the file. */
      g_autoptr(GBytes) bytes = entry_load_section (self, SECTION_MANIFEST, NULL);
      gchar *text = bytes ? bytes_to_string (bytes) : NULL;
      if (text && !g_atomic_pointer_compare_and_exchange (&self->meta.manifest, NULL, text))
        g_free (text);
    }
  return self->meta.manifest;
}

static JsonObject *
parse_object (const gchar *json,
              JsonParser  *parser)
{
  if (json == NULL || !json_parser_load_from_data (parser, json, -1, NULL)
      || json_parser_get_root (parser) == NULL   /* empty text */
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return NULL;
  return json_node_get_object (json_parser_get_root (parser));
}

static gchar *
short_value (JsonNode *n)
{
  if (n == NULL)
    return g_strdup ("(none)");
  if (JSON_NODE_HOLDS_NULL (n))
    return g_strdup ("null");
  if (JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (n));
  return json_to_string (n, FALSE);
}

static void
diff_string_lists (GPtrArray   *out,
                   const gchar *what,
                   JsonNode    *a,
                   JsonNode    *b)
{
  g_autoptr(GPtrArray) va = g_ptr_array_new ();
  g_autoptr(GPtrArray) vb = g_ptr_array_new ();
  gboolean same_set = TRUE;

  for (guint k = 0; k < 2; k++)
    {
      JsonNode *n = k ? b : a;
      GPtrArray *v = k ? vb : va;
      if (n && JSON_NODE_HOLDS_ARRAY (n))
        for (guint i = 0; i < json_array_get_length (json_node_get_array (n)); i++)
          {
            JsonNode *e = json_array_get_element (json_node_get_array (n), i);
            if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING)
              g_ptr_array_add (v, (gpointer) json_node_get_string (e));
          }
    }
  for (guint i = 0; i < va->len; i++)
    if (!g_ptr_array_find_with_equal_func (vb, va->pdata[i], g_str_equal, NULL))
      {
        g_ptr_array_add (out, g_strdup_printf ("%s removed: %s", what, (gchar *) va->pdata[i]));
        same_set = FALSE;
      }
  for (guint i = 0; i < vb->len; i++)
    if (!g_ptr_array_find_with_equal_func (va, vb->pdata[i], g_str_equal, NULL))
      {
        g_ptr_array_add (out, g_strdup_printf ("%s added: %s", what, (gchar *) vb->pdata[i]));
        same_set = FALSE;
      }
  if (same_set && va->len == vb->len)
    for (guint i = 0; i < va->len; i++)
      if (!g_str_equal (va->pdata[i], vb->pdata[i]))
        {
          g_ptr_array_add (out, g_strdup_printf ("%s reordered", what));
          break;
        }
}

static void
diff_headers (GPtrArray *out,
              JsonNode  *a,
              JsonNode  *b)
{
  JsonObject *oa = a && JSON_NODE_HOLDS_OBJECT (a) ? json_node_get_object (a) : NULL;
  JsonObject *ob = b && JSON_NODE_HOLDS_OBJECT (b) ? json_node_get_object (b) : NULL;
  g_autoptr(GList) ma = oa ? json_object_get_members (oa) : NULL;
  g_autoptr(GList) mb = ob ? json_object_get_members (ob) : NULL;

  for (GList *l = ma; l; l = l->next)
    {
      JsonNode *na = json_object_get_member (oa, l->data);
      JsonNode *nb = ob && json_object_has_member (ob, l->data) ? json_object_get_member (ob, l->data) : NULL;
      gboolean had = !JSON_NODE_HOLDS_NULL (na);

      if (nb == NULL)
        {
          if (had)
            g_ptr_array_add (out, g_strdup_printf ("header no longer read: %s", (gchar *) l->data));
        }
      else if (had && JSON_NODE_HOLDS_NULL (nb))
        g_ptr_array_add (out, g_strdup_printf ("header disappeared: %s", (gchar *) l->data));
      else if (!had && !JSON_NODE_HOLDS_NULL (nb))
        g_ptr_array_add (out, g_strdup_printf ("header appeared (shadows or adds one): %s", (gchar *) l->data));
      else if (had && g_strcmp0 (json_node_get_string (na), json_node_get_string (nb)) != 0)
        g_ptr_array_add (out, g_strdup_printf ("header changed: %s", (gchar *) l->data));
    }
  for (GList *l = mb; l; l = l->next)
    if ((oa == NULL || !json_object_has_member (oa, l->data))
        && !JSON_NODE_HOLDS_NULL (json_object_get_member (ob, l->data)))
      g_ptr_array_add (out, g_strdup_printf ("header newly read: %s", (gchar *) l->data));
}

/* The differences from manifest @a to manifest @b, one line each. */
static gchar **
manifest_diff (const gchar *a,
               const gchar *b)
{
  g_autoptr(JsonParser) pa = json_parser_new ();
  g_autoptr(JsonParser) pb = json_parser_new ();
  JsonObject *oa = parse_object (a, pa);
  JsonObject *ob = parse_object (b, pb);
  GPtrArray *out = g_ptr_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);

  if (oa == NULL || ob == NULL)
    {
      g_ptr_array_add (out, g_strdup ("no manifest to compare (an entry written without one)"));
      g_ptr_array_add (out, NULL);
      return (gchar **) g_ptr_array_free (out, FALSE);
    }
  for (guint k = 0; k < 2; k++)
    {
      g_autoptr(GList) members = json_object_get_members (k ? ob : oa);
      for (GList *l = members; l; l = l->next)
        {
          const gchar *m = l->data;
          JsonNode *na = json_object_has_member (oa, m) ? json_object_get_member (oa, m) : NULL;
          JsonNode *nb = json_object_has_member (ob, m) ? json_object_get_member (ob, m) : NULL;

          if (!g_hash_table_add (seen, (gpointer) m))
            continue;
          if (g_str_equal (m, "headers"))
            diff_headers (out, na, nb);
          else if (g_str_equal (m, "flags") || g_str_equal (m, "name_expressions"))
            diff_string_lists (out, g_str_equal (m, "flags") ? "flag" : "name expression", na, nb);
          else if (g_str_equal (m, "source_bytes") || g_str_equal (m, "manifest_version"))
            continue;
          else if (na == NULL || nb == NULL || !json_node_equal (na, nb))
            {
              g_autofree gchar *va = short_value (na);
              g_autofree gchar *vb = short_value (nb);
              if (g_str_equal (m, "source_sha256"))
                g_ptr_array_add (out, g_strdup_printf ("source changed (sha256 %.12s… → %.12s…)", va, vb));
              else
                g_ptr_array_add (out, g_strdup_printf ("%s: %s → %s", m, va, vb));
            }
        }
    }
  g_ptr_array_add (out, NULL);
  return (gchar **) g_ptr_array_free (out, FALSE);
}

/**
 * atomr_kernel_cache_entry_diff:
 * @self: an entry
 * @other: another entry
 *
 * What differs between the inputs of two entries (from their manifests):
 * source, flags, name expressions, architecture, NVRTC, each header read
 * (changed, appeared, disappeared, newly or no longer read), link objects.
 *
 * Returns: (transfer full) (array zero-terminated=1): one line per
 *   difference, from @self to @other; empty when the inputs are the same
 *
 * Since: 0.2
 */
gchar **
atomr_kernel_cache_entry_diff (AtomrKernelCacheEntry *self,
                               AtomrKernelCacheEntry *other)
{
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (self), NULL);
  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE_ENTRY (other), NULL);
  return manifest_diff (atomr_kernel_cache_entry_get_manifest (self),
                        atomr_kernel_cache_entry_get_manifest (other));
}

static gint
manifest_score (JsonObject *entry,
                JsonObject *request)
{
  gint score = 0;
  const gchar *keys[] = { "source_sha256", "name_expressions", "arch", "flags" };
  const gint weights[] = { 8, 2, 1, 1 };

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    if (json_object_has_member (entry, keys[i]) && json_object_has_member (request, keys[i])
        && json_node_equal (json_object_get_member (entry, keys[i]), json_object_get_member (request, keys[i])))
      score += weights[i];
  return score;
}

/**
 * atomr_kernel_cache_explain:
 * @self: a cache
 * @source: CUDA C++ source
 * @options: (nullable): compile options, as for [func@Atomr.nvrtc_compile]
 *   (the architecture cannot be %ATOMR_ARCH_NATIVE here)
 * @key: (out) (optional) (transfer full): the key of this compile
 * @nearest: (out) (optional) (transfer full) (nullable): on a miss, the
 *   entry whose inputs are closest (same source first), or %NULL
 * @reasons: (out) (optional) (transfer full) (array zero-terminated=1): on
 *   a miss, what differs from @nearest (or why there is none); empty on a
 *   hit
 * @error: return location for a [struct@GLib.Error]
 *
 * Says whether compiling @source with @options would hit the cache, and
 * if not, why: it computes the key as a compile would (reading the
 * headers) and compares what went into it with the manifest of the
 * closest entry.  Compiles nothing, records nothing, removes nothing.
 * The program name is [func@Atomr.nvrtc_compile]'s default; see
 * [method@Atomr.KernelCache.explain_program].
 *
 * Returns: %ATOMR_CACHE_STATUS_MEMORY_HIT, %ATOMR_CACHE_STATUS_DISK_HIT or
 *   %ATOMR_CACHE_STATUS_MISS; %ATOMR_CACHE_STATUS_NONE when the compile
 *   would not be cached (@reasons says why, @error is not set) or on error
 *   (@error set)
 *
 * Since: 0.2
 */
AtomrCacheStatus
atomr_kernel_cache_explain (AtomrKernelCache     *self,
                            const gchar          *source,
                            AtomrCompileOptions  *options,
                            gchar               **key,
                            gchar               **nearest,
                            gchar              ***reasons,
                            GError              **error)
{
  return atomr_kernel_cache_explain_program (self, source, NULL, options, key, nearest, reasons, error);
}

/**
 * atomr_kernel_cache_explain_program:
 * @self: a cache
 * @source: CUDA C++ source
 * @program_name: (nullable): the program name the compile gives NVRTC (it
 *   is part of the key, and quoted includes are looked up next to it);
 *   %NULL for [func@Atomr.nvrtc_compile]'s default
 * @options: (nullable): compile options, as for [func@Atomr.nvrtc_compile]
 * @key: (out) (optional) (transfer full): the key of this compile
 * @nearest: (out) (optional) (transfer full) (nullable): on a miss, the
 *   closest entry, or %NULL
 * @reasons: (out) (optional) (transfer full) (array zero-terminated=1): on
 *   a miss, what differs from @nearest
 * @error: return location for a [struct@GLib.Error]
 *
 * [method@Atomr.KernelCache.explain] for a compile with a program name.  A
 * compile the cache refuses to key (see the design notes) is
 * %ATOMR_CACHE_STATUS_NONE without an error, @reasons saying why
 * ("not cacheable: ...").
 *
 * Returns: as for [method@Atomr.KernelCache.explain]
 *
 * Since: 0.2
 */
AtomrCacheStatus
atomr_kernel_cache_explain_program (AtomrKernelCache     *self,
                                    const gchar          *source,
                                    const gchar          *program_name,
                                    AtomrCompileOptions  *options,
                                    gchar               **key,
                                    gchar               **nearest,
                                    gchar              ***reasons,
                                    GError              **error)
{
  g_autoptr(AtomrCompileOptions) opts = NULL;
  g_autoptr(AtomrKernelCache) probe = NULL;
  g_autoptr(AtomrCacheRequest) request = NULL;
  g_autoptr(AtomrModule) module = NULL;
  g_autoptr(JsonNode) manifest = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_auto(GStrv) flags = NULL;
  g_autofree gchar *manifest_text = NULL;
  AtomrKernelCacheEntry *best = NULL;
  JsonObject *mine;
  gint best_score = -1;

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), ATOMR_CACHE_STATUS_NONE);
  if (key)
    *key = NULL;
  if (nearest)
    *nearest = NULL;
  if (reasons)
    *reasons = NULL;
  if (source == NULL)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "source: NULL");
      return ATOMR_CACHE_STATUS_NONE;
    }
  opts = options ? g_object_ref (options) : atomr_compile_options_new ();
  if (!atomr_compile_options_check (opts, error))
    return ATOMR_CACHE_STATUS_NONE;
  if (g_strcmp0 (atomr_compile_options_get_arch (opts), ATOMR_ARCH_NATIVE) == 0)
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "arch: explain needs a named architecture (sm_NN), not \"%s\"", ATOMR_ARCH_NATIVE);
      return ATOMR_CACHE_STATUS_NONE;
    }
  flags = atomr_compile_options_get_flags (opts);

  /* Memory first, as a compile would (a hit there records a hit). */
  probe = atomr_kernel_cache_new (self->directory);
  probe->probe = TRUE;
  {
    AtomrCacheKeyInput input = {
      .source = source,
      .program_name = program_name,
      .kernel_names = atomr_compile_options_get_name_expressions (opts),
      .flags = (const gchar * const *) flags,
      .arch = atomr_compile_options_get_arch (opts),
      .link_objects = atomr_compile_options_get_link_objects (opts),
    };
    module = atomr_kernel_cache_lookup_request (probe, &input, &request);
    if (module == NULL && request == NULL)
      {
        /* What the key cannot cover is never cached: say why. */
        g_autoptr(GBytes) blob = atomr_cache_request_blob (&input);
        g_autoptr(GPtrArray) headers = NULL;
        g_autoptr(GError) key_error = NULL;
        g_autofree gchar *k = atomr_cache_key_compute (blob, &input, &headers, &key_error);

        if (reasons)
          {
            *reasons = g_new0 (gchar *, 2);
            (*reasons)[0] = g_strdup_printf ("not cacheable: %s",
                                             key_error ? key_error->message : "the key cannot be computed");
          }
        return ATOMR_CACHE_STATUS_NONE;
      }
  }
  if (module)
    {
      g_autoptr(AtomrModule) mem = memory_lookup_key (self, atomr_module_get_key (module));
      if (key)
        *key = g_strdup (atomr_module_get_key (module));
      if (reasons)
        *reasons = g_new0 (gchar *, 1);
      return mem ? ATOMR_CACHE_STATUS_MEMORY_HIT : ATOMR_CACHE_STATUS_DISK_HIT;
    }
  if (key)
    *key = g_strdup (request->key);
  {
    g_autoptr(AtomrModule) mem = memory_lookup_key (self, request->key);
    if (mem)
      {
        if (reasons)
          *reasons = g_new0 (gchar *, 1);
        return ATOMR_CACHE_STATUS_MEMORY_HIT;
      }
  }

  manifest = manifest_build (request, source);
  manifest_text = json_to_string (manifest, FALSE);
  mine = json_node_get_object (manifest);
  entries = scan_directory (self, FALSE, FALSE, NULL, NULL);
  for (guint i = 0; entries && i < entries->len; i++)
    {
      AtomrKernelCacheEntry *e = g_ptr_array_index (entries, i);
      JsonObject *theirs = parse_object (atomr_kernel_cache_entry_get_manifest (e), parser);
      gint score = theirs ? manifest_score (theirs, mine) : -1;

      if (score >= best_score && theirs)   /* ties: the most recently used */
        {
          best_score = score;
          best = e;
        }
    }
  if (best && nearest)
    *nearest = g_strdup (best->h.key);
  if (reasons)
    {
      if (best == NULL)
        {
          *reasons = g_new0 (gchar *, 2);
          (*reasons)[0] = g_strdup (entries && entries->len ? "no entry has a manifest to compare with"
                                                           : "the cache holds no entry");
        }
      else
        {
          *reasons = manifest_diff (atomr_kernel_cache_entry_get_manifest (best), manifest_text);
          if ((*reasons)[0] == NULL)
            {
              g_strfreev (*reasons);
              *reasons = g_new0 (gchar *, 2);
              (*reasons)[0] = g_strdup_printf ("same inputs as %s, another key (cache format or key "
                                               "derivation changed)", best->h.key);
            }
        }
    }
  return ATOMR_CACHE_STATUS_MISS;
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

gboolean
atomr_kernel_cache_adopt_entry (AtomrKernelCache *self,
                                const gchar      *key,
                                GBytes           *data,
                                GError          **error)
{
  g_autofree gchar *name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  gsize size = 0;
  const guint8 *bytes = g_bytes_get_data (data, &size);

  g_return_val_if_fail (ATOMR_IS_KERNEL_CACHE (self), FALSE);
  if (!entry_data_verify (name, bytes, size, error))
    return FALSE;
  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  return write_file_atomically (self->directory, name, bytes, size, error);
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

gboolean
atomr_kernel_cache_verify_entry_data (const gchar *key,
                                      GBytes      *data,
                                      GError     **error)
{
  g_autofree gchar *name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  gsize size = 0;
  const guint8 *bytes = g_bytes_get_data (data, &size);

  return entry_data_verify (name, bytes, size, error);
}

void
atomr_kernel_cache_seal_entry_data (guint8 *data,
                                    gsize   size)
{
  guint8 digest[32];

  if (size < ATOMR_CACHE_HEADER_SIZE)
    return;
  compute_checksum (data, data + ATOMR_CACHE_HEADER_SIZE, size - ATOMR_CACHE_HEADER_SIZE, digest);
  memcpy (data + OFF_CHECKSUM, digest, sizeof digest);
}
