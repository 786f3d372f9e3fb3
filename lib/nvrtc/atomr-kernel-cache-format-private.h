/* atomr-kernel-cache-format-private.h — the entry file format
 *
 * The layout is described in atomr-kernel-cache-private.h.  Everything here
 * works on bytes and file descriptors and knows no cache object.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>

#include "atomr-kernel-cache-private.h"

G_BEGIN_DECLS

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

/* Little-endian fields */


static inline guint32
get_u32 (const guint8 *p)
{
  guint32 v;
  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static inline guint64
get_u64 (const guint8 *p)
{
  guint64 v;
  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static inline void
put_u32 (guint8 *p, guint32 v)
{
  v = GUINT32_TO_LE (v);
  memcpy (p, &v, 4);
}

static inline void
put_u64 (guint8 *p, guint64 v)
{
  v = GUINT64_TO_LE (v);
  memcpy (p, &v, 8);
}

/* A parsed file */
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

/* Metadata */
typedef struct {
  gchar  **kernel_names;
  gchar  **lowered_names;
  gchar  **param_layouts;   /* parallel to lowered_names ("?": unknown); NULL: none */
  gchar  **flags;
  gchar   *arch;
  gchar   *nvrtc_version;
  gdouble  compile_time_ms;
  gchar   *manifest;    /* JSON object, NULL for entries without one */
} Meta;

typedef enum { SECTION_META, SECTION_SOURCE, SECTION_LOG, SECTION_PTX, SECTION_CUBIN, SECTION_LTOIR,
               SECTION_MANIFEST } Section;

gsize atomr_cache_bytes_size (GBytes *b);

void atomr_cache_compute_checksum (const guint8 *header,
                                   const guint8 *payload,
                                   gsize payload_size,
                                   guint8 digest[32]);

gboolean atomr_cache_entry_data_verify (const gchar *name,
                                        const guint8 *data,
                                        guint64 size,
                                        GError **error);

gboolean atomr_cache_key_is_valid (const gchar *key);

void atomr_cache_meta_clear (Meta *m);

gboolean atomr_cache_meta_parse (const gchar *json, gsize length, Meta *m, GError **error);

gchar *atomr_cache_meta_to_json (AtomrModuleContent *c, gsize *length);

gboolean atomr_cache_parse_header (const guint8 *data,
                                   guint64 file_size,
                                   FileHeader *h,
                                   GError **error);

guint8 *atomr_cache_read_fd (int fd, guint64 *size_out, GError **error);

void atomr_cache_section_range (const FileHeader *h,
                                Section section,
                                guint64 *offset,
                                guint64 *size);

gboolean atomr_cache_verify_payload (const guint8 *data, FileHeader *h, GError **error);

gboolean atomr_cache_write_all (int fd, const guint8 *data, gsize len, GError **error);

gboolean atomr_cache_write_file_atomically (const gchar *dir,
                                            const gchar *name,
                                            const guint8 *data,
                                            guint64 size,
                                            GError **error);

G_END_DECLS
