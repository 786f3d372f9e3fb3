/* atomr-kernel-cache-bundle.c — bundles and the remote layer: export, import, adopting verified entry files
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

#define TAR_BLOCK 512
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
  return atomr_cache_write_all (fd, header, TAR_BLOCK, error)
         && atomr_cache_write_all (fd, data, size, error)
         && atomr_cache_write_all (fd, zeros, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK, error);
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
  entries = atomr_cache_scan_directory (self, FALSE, TRUE, NULL, error);
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
      data = atomr_cache_read_fd (in, &size, &local);
      close (in);
      if (data == NULL || !atomr_cache_entry_data_verify (name, data, size, &local))
        {
          g_debug ("kernel cache: not exported: %s", local ? local->message : name);
          continue;
        }
      ok = tar ? tar_write_member (fd, name, data, size, e->h.created / G_USEC_PER_SEC, error)
               : atomr_cache_write_file_atomically (destination, name, data, size, error);
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
      if (!atomr_cache_write_all (fd, zeros, sizeof zeros, error))
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

  if (!atomr_cache_entry_data_verify (name, data, size, &local))
    {
      g_debug ("kernel cache: import rejected %s", local->message);
      st->rejected++;
      return TRUE;
    }
  if (!atomr_cache_write_file_atomically (st->self->directory, name, data, size, error))
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
      data = atomr_cache_read_fd (fd, &size, &local);
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
  if (!atomr_cache_entry_data_verify (name, bytes, size, error))
    return FALSE;
  if (g_mkdir_with_parents (self->directory, 0755) != 0)
    {
      int errsv = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "cannot create %s: %s", self->directory, g_strerror (errsv));
      return FALSE;
    }
  return atomr_cache_write_file_atomically (self->directory, name, bytes, size, error);
}

gboolean
atomr_kernel_cache_verify_entry_data (const gchar *key,
                                      GBytes      *data,
                                      GError     **error)
{
  g_autofree gchar *name = g_strconcat (key, ATOMR_CACHE_SUFFIX, NULL);
  gsize size = 0;
  const guint8 *bytes = g_bytes_get_data (data, &size);

  return atomr_cache_entry_data_verify (name, bytes, size, error);
}
