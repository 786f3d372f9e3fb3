/* atomr-kernel-cache-key.c — the kernel cache's key: the request blob and
 * the headers it includes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <sys/stat.h>

#include "atomr-kernel-cache-key-private.h"
#include "atomr-compile-options-private.h"
#include "atomr-nvrtc-loader-private.h"

void
atomr_cache_header_stamp_free (gpointer data)
{
  AtomrCacheHeaderStamp *s = data;
  g_free (s->path);
  g_free (s);
}

static void
blob_add (GByteArray   *blob,
          gconstpointer data,
          gsize         len)
{
  guint64 le = GUINT64_TO_LE ((guint64) len);
  g_byte_array_append (blob, (const guint8 *) &le, 8);
  if (len)
    g_byte_array_append (blob, data, len);
}

static void
blob_add_count (GByteArray *blob,
                guint64     n)
{
  guint64 le = GUINT64_TO_LE (n);
  g_byte_array_append (blob, (const guint8 *) &le, 8);
}

static void
blob_add_string (GByteArray  *blob,
                 const gchar *s)
{
  if (s == NULL)
    {
      guint64 none = G_MAXUINT64;
      g_byte_array_append (blob, (const guint8 *) &none, 8);
      return;
    }
  blob_add (blob, s, strlen (s));
}

static void
blob_add_strv (GByteArray          *blob,
               const gchar * const *v)
{
  guint n = v ? g_strv_length ((gchar **) v) : 0;
  blob_add_count (blob, n);
  for (guint i = 0; i < n; i++)
    blob_add_string (blob, v[i]);
}

static void
stamp_fill (AtomrCacheHeaderStamp *s)
{
  struct stat st;

  s->exists = stat (s->path, &st) == 0;
  if (s->exists)
    {
      s->size = st.st_size;
      s->mtime_ns = (gint64) st.st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000) + st.st_mtim.tv_nsec;
      s->inode = st.st_ino;
    }
}

gboolean
atomr_cache_stamps_unchanged (GPtrArray *headers)
{
  for (guint i = 0; i < headers->len; i++)
    {
      AtomrCacheHeaderStamp *old = g_ptr_array_index (headers, i);
      AtomrCacheHeaderStamp now = { old->path };

      stamp_fill (&now);
      if (now.exists != old->exists
          || (now.exists && (now.size != old->size || now.mtime_ns != old->mtime_ns
                             || now.inode != old->inode)))
        return FALSE;
    }
  return TRUE;
}

/* Calls @func for each `#include "x"` / `#include <x>` of @text. */
static void
scan_includes (const gchar *text,
               gsize        len,
               void       (*func) (const gchar *name, gboolean quoted, gpointer data),
               gpointer     data)
{
  const gchar *p = text, *end = text + len;

  while (p < end)
    {
      const gchar *line_end = memchr (p, '\n', end - p);
      const gchar *q = p;

      if (line_end == NULL)
        line_end = end;
      while (q < line_end && (*q == ' ' || *q == '\t'))
        q++;
      if (q < line_end && *q == '#')
        {
          q++;
          while (q < line_end && (*q == ' ' || *q == '\t'))
            q++;
          if (line_end - q > 7 && strncmp (q, "include", 7) == 0)
            {
              gchar close;
              const gchar *name, *stop;

              q += 7;
              while (q < line_end && (*q == ' ' || *q == '\t'))
                q++;
              if (q < line_end && (*q == '"' || *q == '<'))
                {
                  close = *q == '"' ? '"' : '>';
                  name = q + 1;
                  stop = memchr (name, close, line_end - name);
                  if (stop && stop > name)
                    {
                      g_autofree gchar *n = g_strndup (name, stop - name);
                      func (n, close == '"', data);
                    }
                }
            }
        }
      p = line_end + 1;
    }
}

typedef struct {
  const gchar * const *include_paths;
  const gchar         *current_dir;   /* of the header being scanned */
  GHashTable          *visited;       /* path */
  GPtrArray           *headers;       /* AtomrCacheHeaderStamp */
  GChecksum           *sum;
  guint                depth;
} IncludeScan;

static void scan_file (IncludeScan *scan, const gchar *path);

static void
on_include (const gchar *name,
            gboolean     quoted,
            gpointer     data)
{
  IncludeScan *scan = data;
  g_autofree gchar *found = NULL;

  if (quoted && scan->current_dir)
    {
      g_autofree gchar *candidate = g_build_filename (scan->current_dir, name, NULL);
      if (g_file_test (candidate, G_FILE_TEST_IS_REGULAR))
        found = g_steal_pointer (&candidate);
    }
  for (guint i = 0; found == NULL && scan->include_paths && scan->include_paths[i]; i++)
    {
      g_autofree gchar *candidate = g_build_filename (scan->include_paths[i], name, NULL);
      if (g_file_test (candidate, G_FILE_TEST_IS_REGULAR))
        found = g_steal_pointer (&candidate);
    }
  /* Headers outside the include paths (NVRTC's own, cuda_fp16.h, ...)
   * belong to NVRTC, whose identity is in the key.  Remember where they
   * could appear, so that creating one there invalidates the memory level
   * (the key then changes because its contents are hashed). */
  if (found == NULL)
    {
      for (guint i = 0; scan->include_paths && scan->include_paths[i]; i++)
        {
          AtomrCacheHeaderStamp *absent = g_new0 (AtomrCacheHeaderStamp, 1);
          absent->path = g_build_filename (scan->include_paths[i], name, NULL);
          g_ptr_array_add (scan->headers, absent);
        }
      return;
    }
  if (g_hash_table_contains (scan->visited, found))
    return;
  g_hash_table_add (scan->visited, g_strdup (found));
  scan_file (scan, found);
}

static void
scan_file (IncludeScan *scan,
           const gchar *path)
{
  g_autofree gchar *contents = NULL;
  g_autofree gchar *dir = NULL;
  const gchar *saved_dir = scan->current_dir;
  AtomrCacheHeaderStamp *stamp = g_new0 (AtomrCacheHeaderStamp, 1);
  gsize len = 0;
  guint64 le;

  stamp->path = g_strdup (path);
  stamp_fill (stamp);
  g_ptr_array_add (scan->headers, stamp);
  le = GUINT64_TO_LE ((guint64) strlen (path));
  g_checksum_update (scan->sum, (const guchar *) &le, 8);
  g_checksum_update (scan->sum, (const guchar *) path, -1);
  if (!g_file_get_contents (path, &contents, &len, NULL))
    {
      g_checksum_update (scan->sum, (const guchar *) "\0unreadable", 11);
      return;
    }
  le = GUINT64_TO_LE ((guint64) len);
  g_checksum_update (scan->sum, (const guchar *) &le, 8);
  g_checksum_update (scan->sum, (const guchar *) contents, len);
  if (scan->depth >= 64)
    return;
  dir = g_path_get_dirname (path);
  scan->current_dir = dir;
  scan->depth++;
  scan_includes (contents, len, on_include, scan);
  scan->depth--;
  scan->current_dir = saved_dir;
}

GBytes *
atomr_cache_request_blob (const gchar         *source,
                          const gchar * const *kernel_names,
                          const gchar * const *flags,
                          const gchar         *arch,
                          GPtrArray           *link_objects)
{
  GByteArray *blob = g_byte_array_sized_new (strlen (source) + 256);
  guint32 version = GUINT32_TO_LE (ATOMR_CACHE_FORMAT_VERSION);

  blob_add (blob, "atomr-kernel-cache", 18);
  blob_add (blob, &version, 4);
  blob_add_string (blob, atomr_nvrtc_get_identity ());
  blob_add_string (blob, arch);
  blob_add_strv (blob, flags);
  blob_add_strv (blob, kernel_names);
  blob_add_string (blob, source);
  blob_add_count (blob, link_objects ? link_objects->len : 0);
  for (guint i = 0; link_objects && i < link_objects->len; i++)
    {
      AtomrLinkObject *obj = g_ptr_array_index (link_objects, i);
      gsize len;
      gconstpointer data = g_bytes_get_data (obj->data, &len);
      blob_add (blob, obj->ptx ? "ptx" : "ltoir", obj->ptx ? 3 : 5);
      blob_add (blob, data, len);
    }
  return g_byte_array_free_to_bytes (blob);
}

gchar *
atomr_cache_key_compute (GBytes              *blob,
                         const gchar         *source,
                         const gchar * const *include_paths,
                         GPtrArray          **headers_out)
{
  g_autoptr(GHashTable) visited = NULL;
  g_autoptr(GChecksum) sum = NULL;
  GPtrArray *headers;
  IncludeScan scan = { 0 };
  gsize blob_len;
  gconstpointer blob_data;

  /* The key: the request plus every header the source includes from its
   * include paths, recursively. */
  sum = g_checksum_new (G_CHECKSUM_SHA256);
  blob_data = g_bytes_get_data (blob, &blob_len);
  g_checksum_update (sum, blob_data, blob_len);
  visited = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  headers = g_ptr_array_new_with_free_func (atomr_cache_header_stamp_free);
  scan.include_paths = include_paths;
  scan.visited = visited;
  scan.headers = headers;
  scan.sum = sum;
  scan_includes (source, strlen (source), on_include, &scan);
  *headers_out = headers;
  return g_strdup (g_checksum_get_string (sum));
}
