/* atomr-kernel-cache-gc.c — browsing and maintenance: list, lookup, remove, gc, stats, reports
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
  if (u->last_used > entry->h.last_used && (t = atomr_cache_date_time_from_usec (u->last_used)) != NULL)
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
  g_autoptr(GBytes) meta = atomr_cache_entry_load_section (entry, SECTION_META, error);
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
GPtrArray *
atomr_cache_scan_directory (AtomrKernelCache        *self,
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
  usage = atomr_cache_usage_load (self, NULL);
  while ((name = g_dir_read_name (dir)))
    {
      g_autofree gchar *path = g_build_filename (self->directory, name, NULL);
      struct stat st;

      if (g_str_has_suffix (name, LOCK_SUFFIX))
        {
          if (atomr_cache_lock_is_stale (path) && lstat (path, &st) == 0)
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
          AtomrKernelCacheEntry *entry = atomr_cache_entry_read (path, &entry_error);
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
  entries = atomr_cache_scan_directory (self, FALSE, FALSE, NULL, error);
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

  if (atomr_cache_key_is_valid (key))
    {
      g_autofree gchar *path = atomr_cache_entry_path (self, key);
      g_autoptr(GError) local_error = NULL;
      AtomrKernelCacheEntry *entry = atomr_cache_entry_read (path, &local_error);

      if (entry && g_str_equal (entry->h.key, key))
        {
          g_autoptr(GHashTable) usage = atomr_cache_usage_load (self, NULL);
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
  entries = atomr_cache_scan_directory (self, FALSE, FALSE, NULL, error);
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
  usage = atomr_cache_usage_load (self, NULL);
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
    atomr_cache_stats_add (self, total - kept, 0);
  close (fd);   /* releases the flock */
}

static void stats_read (AtomrKernelCache *self, guint64 *hits, guint64 *misses);

gboolean
atomr_cache_gc_internal (AtomrKernelCache        *self,
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
  entries = atomr_cache_scan_directory (self, TRUE, verify, report, error);
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
    g_hash_table_unref (atomr_cache_usage_load (self, &usage_size));
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
  if (!atomr_cache_gc_internal (self, max_size, TRUE, TRUE, &report, error))
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
  if (!atomr_cache_gc_internal (self, max_size, TRUE, TRUE, report, error))
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
  g_autoptr(GHashTable) usage = atomr_cache_usage_load (self, NULL);
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
  entries = atomr_cache_scan_directory (self, FALSE, verify, report, error);
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
