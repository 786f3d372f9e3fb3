/* atomr-kernel-cache-format.c — the entry file format: header, checksum, metadata, sections, atomic writes
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
#include "atomr-kernel-params-private.h"

gboolean
atomr_cache_key_is_valid (const gchar *key)
{
  if (key == NULL || strlen (key) != KEY_LEN)
    return FALSE;
  for (guint i = 0; i < KEY_LEN; i++)
    if (!g_ascii_isxdigit (key[i]) || g_ascii_isupper (key[i]))
      return FALSE;
  return TRUE;
}

/* Checks the fixed header against @file_size: magic, version, header size,
 * key and section sizes.  The checksum is checked by atomr_cache_verify_payload(). */
gboolean
atomr_cache_parse_header (const guint8  *data,
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
  if (!atomr_cache_key_is_valid (h->key))
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
  if (n >= 32)
    {
      /* The lanes in locals: through s->h the compiler must assume every
       * store may change *p (guint8 aliases everything) and kept each lane
       * in memory, 2.3 GB/s; in registers the four multiply chains
       * overlap.  Same arithmetic as fast_block(). */
      guint64 h0 = s->h[0], h1 = s->h[1], h2 = s->h[2], h3 = s->h[3];

      for (; n >= 32; p += 32, n -= 32)
        {
          guint64 w0, w1, w2, w3;

          memcpy (&w0, p, 8);
          memcpy (&w1, p + 8, 8);
          memcpy (&w2, p + 16, 8);
          memcpy (&w3, p + 24, 8);
          h0 = (h0 ^ GUINT64_FROM_LE (w0)) * fast_k[0];
          h1 = (h1 ^ GUINT64_FROM_LE (w1)) * fast_k[1];
          h2 = (h2 ^ GUINT64_FROM_LE (w2)) * fast_k[2];
          h3 = (h3 ^ GUINT64_FROM_LE (w3)) * fast_k[3];
          h0 = (h0 << 31) | (h0 >> 33);
          h1 = (h1 << 31) | (h1 >> 33);
          h2 = (h2 << 31) | (h2 >> 33);
          h3 = (h3 << 31) | (h3 >> 33);
        }
      s->h[0] = h0;
      s->h[1] = h1;
      s->h[2] = h2;
      s->h[3] = h3;
    }
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

void
atomr_cache_compute_checksum (const guint8 *header,
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

gboolean
atomr_cache_verify_payload (const guint8  *data,
                            FileHeader    *h,
                            GError       **error)
{
  guint8 digest[32];

  atomr_cache_compute_checksum (data, data + ATOMR_CACHE_HEADER_SIZE,
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
guint8 *
atomr_cache_read_fd (int       fd,
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

void
atomr_cache_meta_clear (Meta *m)
{
  g_strfreev (m->kernel_names);
  g_strfreev (m->lowered_names);
  g_strfreev (m->param_layouts);
  g_strfreev (m->flags);
  g_free (m->arch);
  g_free (m->nvrtc_version);
  g_free (m->manifest);
  memset (m, 0, sizeof *m);
}

gchar *
atomr_cache_meta_to_json (AtomrModuleContent *c,
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
  /* Only when known: entries without it load as before. */
  if (c->param_layouts)
    {
      ADD_STRV (param_layouts)
    }
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

/* A reader for exactly the metadata meta_to_json() writes: one object
 * whose members are arrays of strings, strings, null (arch only) or
 * numbers, strings of printable ASCII with the simple escapes.  A disk hit
 * spent more in json-glib's parser (tens of thousands of instructions)
 * than in everything else it does; anything this reader does not know
 * (another writer's formatting, \u escapes, UTF-8, nesting) returns FALSE
 * and json-glib reads it as before, so what a file means never depends on
 * which reader read it. */
typedef struct {
  const gchar *p, *end;
} Reader;

static void
reader_ws (Reader *r)
{
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
    r->p++;
}

static gboolean
reader_char (Reader *r,
             gchar   c)
{
  reader_ws (r);
  if (r->p < r->end && *r->p == c)
    {
      r->p++;
      return TRUE;
    }
  return FALSE;
}

static gchar *
reader_string (Reader *r)
{
  GString *out;

  if (!reader_char (r, '"'))
    return NULL;
  /* The common case: no escape, so one copy. */
  for (const gchar *q = r->p; q < r->end && *q != '\\' && (guchar) *q >= 0x20 && (guchar) *q <= 0x7e; q++)
    if (*q == '"')
      {
        gchar *s = g_strndup (r->p, q - r->p);
        r->p = q + 1;
        return s;
      }
  out = g_string_new (NULL);
  while (r->p < r->end && *r->p != '"')
    {
      guchar c = (guchar) *r->p++;
      if (c == '\\')
        {
          if (r->p >= r->end)
            break;
          c = (guchar) *r->p++;
          switch (c)
            {
            case '"': case '\\': case '/': break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            default:
              g_string_free (out, TRUE);   /* \u and the unknown */
              return NULL;
            }
        }
      else if (c < 0x20 || c > 0x7e)
        {
          g_string_free (out, TRUE);
          return NULL;
        }
      g_string_append_c (out, (gchar) c);
    }
  if (r->p >= r->end)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  r->p++;
  return g_string_free (out, FALSE);
}

static gchar **
reader_strv (Reader *r)
{
  GPtrArray *v;

  if (!reader_char (r, '['))
    return NULL;
  v = g_ptr_array_new_with_free_func (g_free);
  if (!reader_char (r, ']'))
    for (;;)
      {
        gchar *s = reader_string (r);
        if (s == NULL)
          {
            g_ptr_array_unref (v);
            return NULL;
          }
        g_ptr_array_add (v, s);
        if (reader_char (r, ']'))
          break;
        if (!reader_char (r, ','))
          {
            g_ptr_array_unref (v);
            return NULL;
          }
      }
  g_ptr_array_set_free_func (v, NULL);
  g_ptr_array_add (v, NULL);
  return (gchar **) g_ptr_array_free (v, FALSE);
}

static gboolean
reader_number (Reader  *r,
               gdouble *value)
{
  gchar buf[64];
  gsize n = 0;
  gchar *end = NULL;

  reader_ws (r);
  while (r->p + n < r->end && n < sizeof buf - 1 && strchr ("+-0123456789.eE", r->p[n]) != NULL
         && r->p[n] != '\0')
    n++;
  if (n == 0 || n == sizeof buf - 1)
    return FALSE;
  memcpy (buf, r->p, n);
  buf[n] = '\0';
  *value = g_ascii_strtod (buf, &end);
  if (end != buf + n)
    return FALSE;
  r->p += n;
  return TRUE;
}

static gboolean
meta_parse_simple (const gchar *json,
                   gsize        length,
                   Meta        *m)
{
  Reader r = { json, json + length };
  gboolean first = TRUE;
  gboolean have_version = FALSE;

  if (!reader_char (&r, '{'))
    return FALSE;
  while (!reader_char (&r, '}'))
    {
      g_autofree gchar *name = NULL;

      if (!first && !reader_char (&r, ','))
        goto fail;
      first = FALSE;
      if ((name = reader_string (&r)) == NULL || !reader_char (&r, ':'))
        goto fail;
      reader_ws (&r);
      if (g_str_equal (name, "kernel_names") || g_str_equal (name, "lowered_names")
          || g_str_equal (name, "flags") || g_str_equal (name, "param_layouts"))
        {
          gchar ***field = g_str_equal (name, "flags") ? &m->flags
                           : g_str_equal (name, "kernel_names") ? &m->kernel_names
                           : g_str_equal (name, "param_layouts") ? &m->param_layouts : &m->lowered_names;
          gchar **v = reader_strv (&r);
          if (v == NULL)
            goto fail;
          g_strfreev (*field);
          *field = v;
        }
      else if (g_str_equal (name, "arch"))
        {
          g_clear_pointer (&m->arch, g_free);
          if (r.end - r.p >= 4 && memcmp (r.p, "null", 4) == 0)
            r.p += 4;
          else if ((m->arch = reader_string (&r)) == NULL)
            goto fail;
        }
      else if (g_str_equal (name, "nvrtc_version"))
        {
          g_clear_pointer (&m->nvrtc_version, g_free);
          if ((m->nvrtc_version = reader_string (&r)) == NULL)
            goto fail;
          have_version = TRUE;
        }
      else if (g_str_equal (name, "compile_time_ms"))
        {
          if (!reader_number (&r, &m->compile_time_ms))
            goto fail;
        }
      else
        goto fail;   /* a member this reader does not know */
    }
  reader_ws (&r);
  if (r.p != r.end)
    goto fail;
  if (m->kernel_names == NULL)
    m->kernel_names = g_new0 (gchar *, 1);
  if (m->lowered_names == NULL)
    m->lowered_names = g_new0 (gchar *, 1);
  if (m->flags == NULL)
    m->flags = g_new0 (gchar *, 1);
  if (!have_version)
    m->nvrtc_version = g_strdup ("");
  return TRUE;

fail:
  atomr_cache_meta_clear (m);
  return FALSE;
}

gboolean
atomr_cache_meta_parse (const gchar  *json,
                        gsize         length,
                        Meta         *m,
                        GError      **error)
{
  if (!meta_parse_simple (json, length, m))
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
      if (json_object_has_member (o, "param_layouts"))
        {
          /* Every element must be a string: json_strv() skips others. */
          JsonNode *n = json_object_get_member (o, "param_layouts");
          if (!JSON_NODE_HOLDS_ARRAY (n))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "cache file: param_layouts is not an array");
              atomr_cache_meta_clear (m);
              return FALSE;
            }
          m->param_layouts = json_strv (o, "param_layouts");
          if (g_strv_length (m->param_layouts) != json_array_get_length (json_node_get_array (n)))
            {
              g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                           "cache file: param_layouts holds something other than strings");
              atomr_cache_meta_clear (m);
              return FALSE;
            }
        }
      m->arch = g_strdup (json_object_get_string_member_with_default (o, "arch", NULL));
      m->nvrtc_version = g_strdup (json_object_get_string_member_with_default (o, "nvrtc_version", ""));
      m->compile_time_ms = json_object_get_double_member_with_default (o, "compile_time_ms", 0);
    }
  if (g_strv_length (m->kernel_names) != g_strv_length (m->lowered_names))
    {
      g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                   "cache file: %u kernel names but %u lowered names",
                   g_strv_length (m->kernel_names), g_strv_length (m->lowered_names));
      atomr_cache_meta_clear (m);
      return FALSE;
    }
  /* A layout decides how arguments are checked at every launch of a
   * kernel loaded from this entry: one that is not exactly right makes
   * the entry damaged (a miss), it is never used. */
  if (m->param_layouts)
    {
      if (g_strv_length (m->param_layouts) != g_strv_length (m->lowered_names))
        {
          g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                       "cache file: %u parameter layouts for %u kernels",
                       g_strv_length (m->param_layouts), g_strv_length (m->lowered_names));
          atomr_cache_meta_clear (m);
          return FALSE;
        }
      for (guint i = 0; m->param_layouts[i]; i++)
        if (!g_str_equal (m->param_layouts[i], "?") && !atomr_param_layout_parse (m->param_layouts[i], NULL, NULL, NULL))
          {
            g_set_error (error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT,
                         "cache file: parameter layout %u (\"%s\") of kernel %s is not valid",
                         i, m->param_layouts[i], m->lowered_names[i]);
            atomr_cache_meta_clear (m);
            return FALSE;
          }
    }
  return TRUE;
}

void
atomr_cache_section_range (const FileHeader *h,
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

gboolean
atomr_cache_write_all (int           fd,
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

gsize
atomr_cache_bytes_size (GBytes *b)
{
  return b ? g_bytes_get_size (b) : 0;
}

static gboolean
name_is_entry (const gchar *name)
{
  gsize len = strlen (name);
  g_autofree gchar *key = NULL;

  if (len != KEY_LEN + strlen (ATOMR_CACHE_SUFFIX) || !g_str_has_suffix (name, ATOMR_CACHE_SUFFIX))
    return FALSE;
  key = g_strndup (name, KEY_LEN);
  return atomr_cache_key_is_valid (key);
}

/* Checks a whole entry file held in memory: header, checksum, and that it
 * holds the key its name says. */
gboolean
atomr_cache_entry_data_verify (const gchar   *name,
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
  if (!atomr_cache_parse_header (data, size, &h, error) || !atomr_cache_verify_payload (data, &h, error))
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

/* Writes @data as @dir/@name atomically (temporary name, rename). */
gboolean
atomr_cache_write_file_atomically (const gchar   *dir,
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
  if (!atomr_cache_write_all (fd, data, size, error))
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
