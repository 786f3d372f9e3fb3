/* atomr-kernel-cache-memory.c — the memory tier: hash of requests, LRU, header validation by inotify generation
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
#ifdef __linux__
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#endif

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "atomr-error.h"
#include "atomr-kernel-cache-impl-private.h"

void
atomr_cache_memory_entry_free (gpointer data)
{
  MemoryEntry *e = data;
  g_bytes_unref (e->blob);
  atomr_module_content_unref (e->content);
  g_ptr_array_unref (e->headers);
  g_free (e);
}
/* The memory level hashes whole requests (source and all) on every lookup;
 * g_bytes_hash() goes a byte at a time.  Eight at a time, mixed with a
 * multiply, is several times faster and spreads as well. */
guint
atomr_cache_request_hash (gconstpointer key)
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
void
atomr_cache_memory_trim_locked (AtomrKernelCache *self,
                                guint             capacity)
{
  while (self->lru.length > capacity)
    {
      MemoryEntry *e = g_queue_pop_tail (&self->lru);
      g_hash_table_remove (self->memory, e->blob);
    }
}
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

void
atomr_cache_memory_insert_locked (AtomrKernelCache   *self,
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
  atomr_cache_memory_trim_locked (self, self->memory_capacity);
}
/* The memory level.  The headers' stat() calls (hundreds for CUB) run
 * outside the lock, on references taken under it, so concurrent hits of
 * other threads do not queue behind them. */
AtomrModule *
atomr_cache_memory_lookup (AtomrKernelCache *self,
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
/* A module of this cache's memory level holding @key, if any (no stat). */
AtomrModule *
atomr_cache_memory_lookup_key (AtomrKernelCache *self,
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
