/* atomr-kernel-cache-lock.c — one compile per key: in-process flights and cross-process lock files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"

void
atomr_cache_flight_end (AtomrCacheRequest *request)
{
  AtomrKernelCache *self = request->cache;

  if (!request->in_flight)
    return;
  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->flights, request->key);
  request->in_flight = FALSE;
  /* Every disk hit passes here: GCond's broadcast is a system call even
   * when nobody waits. */
  if (self->flight_waiters > 0)
    g_cond_broadcast (&self->flight_done);
  g_mutex_unlock (&self->lock);
}

void
atomr_cache_disk_unlock (AtomrCacheRequest *request)
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
gboolean
atomr_cache_lock_is_stale (const gchar *path)
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
AtomrModuleContent *
atomr_cache_disk_lock (AtomrKernelCache  *self,
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
          content = atomr_cache_disk_read (self, request->key);
          if (content)
            atomr_cache_disk_unlock (request);
          return content;
        }
      if (errno != EEXIST)
        {
          g_debug ("kernel cache: no lock %s (%s): compiling without", path, g_strerror (errno));
          return NULL;
        }
      content = atomr_cache_disk_read (self, request->key);
      if (content)
        return content;
      if (atomr_cache_lock_is_stale (path))
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
