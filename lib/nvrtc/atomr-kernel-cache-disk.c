/* atomr-kernel-cache-disk.c — the disk tier: reading and writing entries, the usage journal, counters, store failures
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* preadv2() and RWF_NOWAIT */
#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"

/* Images at least this large are handed out as slices of the file's
 * buffer rather than copied. */
#define SLICE_MIN_BYTES (64 * 1024)

gchar *
atomr_cache_entry_path (AtomrKernelCache *self,
                        const gchar      *key)
{
  g_autofree gchar *name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  return g_build_filename (self->directory, name, NULL);
}

/* Store failures (read-only directory, no space, a directory in the way)
 * are warned about once per cache object; the first one is kept for
 * atomr_kernel_cache_get_store_error().  With @warn FALSE (a hit that could
 * not be recorded: normal for a read-only cache) it is only kept. */
void
atomr_cache_note_store_failure (AtomrKernelCache *self,
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
          atomr_cache_note_store_failure (self, error, FALSE);
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
      atomr_cache_note_store_failure (self, error, FALSE);
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
GHashTable *
atomr_cache_usage_load (AtomrKernelCache *self,
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
      if (n == 2 && atomr_cache_key_is_valid (f[0]))
        usage_add (usage, f[0], g_ascii_strtoll (f[1], NULL, 10), 1);
      else if (n == 4 && g_str_equal (f[0], "=") && atomr_cache_key_is_valid (f[1]))
        usage_add (usage, f[1], g_ascii_strtoll (f[2], NULL, 10), g_ascii_strtoull (f[3], NULL, 10));
      g_strfreev (f);
    }
  return usage;
}

/* Adds to the directory's counters (flock()ed read-modify-write). Hits
 * live in the usage journal; gc moves those of entries it drops here. */
void
atomr_cache_stats_add (AtomrKernelCache *self,
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

/* Reads all of @fd (@size bytes, from fstat()) only from the page cache:
 * FALSE if that would block (or the file changed size), and the caller
 * reads it on a thread that may block.  File systems without RWF_NOWAIT
 * read normally. */
static guint8 *
read_fd_nowait (int      fd,
                guint64 *size_out)
{
  struct stat st;
  g_autofree guint8 *data = NULL;
  struct iovec iov;
  ssize_t n;

  if (fstat (fd, &st) != 0 || st.st_size <= 0 || (guint64) st.st_size > G_MAXSIZE / 2)
    return NULL;
  data = g_malloc ((gsize) st.st_size + 1);
  iov.iov_base = data;
  iov.iov_len = st.st_size;
  n = preadv2 (fd, &iov, 1, 0, RWF_NOWAIT);
  if (n < 0 && (errno == EOPNOTSUPP || errno == EINVAL))
    n = pread (fd, data, st.st_size, 0);
  if (n != st.st_size)
    return NULL;
  data[n] = 0;
  *size_out = n;
  return g_steal_pointer (&data);
}

/* Reads, checks and decodes entry @key.  Damaged, foreign or outdated files
 * are removed.  Records the hit in the usage journal. */
AtomrModuleContent *
atomr_cache_disk_read (AtomrKernelCache *self,
                       const gchar      *key)
{
  return atomr_cache_disk_read_full (self, key, FALSE);
}

/* @nowait: the data only from the page cache; NULL, removing nothing,
 * when it is not all there or anything is wrong (the blocking path then
 * reads, judges and removes). */
AtomrModuleContent *
atomr_cache_disk_read_full (AtomrKernelCache *self,
                            const gchar      *key,
                            gboolean          nowait)
{
  g_autofree gchar *path = atomr_cache_entry_path (self, key);
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
  data = nowait ? read_fd_nowait (fd, &size) : atomr_cache_read_fd (fd, &size, &error);
  close (fd);
  if (nowait && data == NULL)
    return NULL;
  if (data == NULL || !atomr_cache_parse_header (data, size, &h, &error) || !atomr_cache_verify_payload (data, &h, &error)
      || !g_str_equal (h.key, key))
    {
      if (nowait)
        return NULL;
      if (error == NULL)
        g_set_error (&error, ATOMR_ERROR, ATOMR_ERROR_INVALID_ARGUMENT, "holds key %s", h.key);
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      if (!self->probe)
        g_unlink (path);
      return NULL;
    }
  atomr_cache_section_range (&h, SECTION_META, &off, &len);
  if (!atomr_cache_meta_parse ((const gchar *) data + off, len, &meta, &error))
    {
      if (nowait)
        return NULL;
      g_debug ("kernel cache: removing %s: %s", path, error->message);
      if (!self->probe)
        g_unlink (path);
      return NULL;
    }
  usage_append (self, key);

  content = atomr_module_content_new ();
  content->kernel_names = g_steal_pointer (&meta.kernel_names);
  content->lowered_names = g_steal_pointer (&meta.lowered_names);
  content->param_layouts = g_steal_pointer (&meta.param_layouts);
  content->flags = g_steal_pointer (&meta.flags);
  content->arch = g_steal_pointer (&meta.arch);
  content->nvrtc_version = g_steal_pointer (&meta.nvrtc_version);
  content->compile_time_ms = meta.compile_time_ms;
  content->key = g_strdup (key);
  atomr_cache_section_range (&h, SECTION_LOG, &off, &len);
  content->log = g_strndup ((const gchar *) data + off, len);
  {
    /* Large images stay in the buffer read() filled (slices of it), small
     * ones are copied so a module does not pin the source, log and
     * manifest of its file. */
    g_autoptr(GBytes) file = g_bytes_new_take (g_steal_pointer (&data), size);
    static const Section images[] = { SECTION_PTX, SECTION_CUBIN, SECTION_LTOIR };
    GBytes **fields[] = { &content->ptx, &content->cubin, &content->ltoir };

    for (guint i = 0; i < G_N_ELEMENTS (images); i++)
      {
        atomr_cache_section_range (&h, images[i], &off, &len);
        if (len >= SLICE_MIN_BYTES)
          *fields[i] = g_bytes_new_from_bytes (file, off, len);
        else if (len)
          *fields[i] = g_bytes_new ((const guint8 *) g_bytes_get_data (file, NULL) + off, len);
      }
  }
  atomr_cache_meta_clear (&meta);
  return content;
}

gboolean
atomr_cache_disk_write (AtomrKernelCache    *self,
                        const gchar         *key,
                        AtomrModuleContent  *content,
                        const gchar         *source,
                        JsonNode            *manifest,
                        GError             **error)
{
  g_autofree gchar *name = NULL;
  g_autofree gchar *meta = NULL;
  g_autofree gchar *manifest_text = NULL;
  gsize manifest_len = 0;
  g_autoptr(GByteArray) file = NULL;
  guint8 header[ATOMR_CACHE_HEADER_SIZE] = { 0 };
  guint8 digest[32];
  gsize meta_len = 0, source_len = 0, log_len;
  gint64 now = g_get_real_time ();

  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  meta = atomr_cache_meta_to_json (content, &meta_len);
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
  put_u64 (header + OFF_PTX_SIZE, atomr_cache_bytes_size (content->ptx));
  put_u64 (header + OFF_CUBIN_SIZE, atomr_cache_bytes_size (content->cubin));
  put_u64 (header + OFF_LTOIR_SIZE, atomr_cache_bytes_size (content->ltoir));

  file = g_byte_array_new ();
  g_byte_array_append (file, header, sizeof header);
  g_byte_array_append (file, (const guint8 *) meta, meta_len);
  g_byte_array_append (file, (const guint8 *) source, source_len);
  if (log_len)
    g_byte_array_append (file, (const guint8 *) content->log, log_len);
  if (content->ptx)
    g_byte_array_append (file, g_bytes_get_data (content->ptx, NULL), atomr_cache_bytes_size (content->ptx));
  if (content->cubin)
    g_byte_array_append (file, g_bytes_get_data (content->cubin, NULL), atomr_cache_bytes_size (content->cubin));
  if (content->ltoir)
    g_byte_array_append (file, g_bytes_get_data (content->ltoir, NULL), atomr_cache_bytes_size (content->ltoir));
  if (manifest_len)
    g_byte_array_append (file, (const guint8 *) manifest_text, manifest_len);
  atomr_cache_compute_checksum (file->data, file->data + ATOMR_CACHE_HEADER_SIZE,
                    file->len - ATOMR_CACHE_HEADER_SIZE, digest);
  memcpy (file->data + OFF_CHECKSUM, digest, 32);

  /* Same directory as the entry, so rename() is atomic; readers of the
   * old file (or of none) never see a partial one. */
  name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  return atomr_cache_write_file_atomically (self->directory, name, file->data, file->len, error);
}
