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

static void header_watch_clear (HeaderWatch *w);

void
atomr_cache_memory_entry_free (gpointer data)
{
  MemoryEntry *e = data;
  g_bytes_unref (e->key.key_part);
  g_free ((gchar *) e->key.program_name);
  g_free ((gchar *) e->key.source);
  atomr_module_content_unref (e->content);
  g_clear_object (&e->module);
  header_watch_clear (&e->w);
  g_free (e);
}

/* @program_name NULL: ATOMR_DEFAULT_PROGRAM_NAME.  Borrows everything. */
void
atomr_cache_memory_key_init (MemoryKey   *key,
                             GBytes      *key_part,
                             guint        key_part_hash,
                             const gchar *program_name,
                             const gchar *source)
{
  key->key_part = key_part;
  key->program_name = program_name ? program_name : ATOMR_DEFAULT_PROGRAM_NAME;
  key->source = source;
  key->source_len = strlen (source);
  key->hash = atomr_cache_hash_data (source, key->source_len,
                                     key_part_hash ^ ((guint64) atomr_cache_hash_data (key->program_name, strlen (key->program_name), 1) << 32));
}

guint
atomr_cache_memory_key_hash (gconstpointer key)
{
  return ((const MemoryKey *) key)->hash;
}

gboolean
atomr_cache_memory_key_equal (gconstpointer a,
                              gconstpointer b)
{
  const MemoryKey *x = a, *y = b;

  return x->hash == y->hash && x->source_len == y->source_len
         && (x->key_part == y->key_part || g_bytes_equal (x->key_part, y->key_part))
         && strcmp (x->program_name, y->program_name) == 0
         && memcmp (x->source, y->source, x->source_len) == 0;
}

static void memory_key_copy (MemoryKey *dst, const MemoryKey *src);

/* The module memory hits of @e hand out: one object per entry (modules
 * are immutable), so a hit costs a reference, not a GObject. */
AtomrModule *
atomr_cache_memory_entry_module_locked (MemoryEntry *e)
{
  if (e->module == NULL)
    e->module = atomr_module_new (e->content, ATOMR_CACHE_STATUS_MEMORY_HIT);
  return g_object_ref (e->module);
}

void
atomr_cache_memory_trim_locked (AtomrKernelCache *self,
                                guint             capacity)
{
  while (self->lru.length > capacity)
    {
      MemoryEntry *e = g_queue_pop_tail (&self->lru);
      g_hash_table_remove (self->memory, &e->key);
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

/* Watches the directories of @headers that can be watched; returns the
 * stamps no watch covers (borrowed), or NULL without inotify. */
static GPtrArray *
watch_headers_locked (AtomrKernelCache *self,
                      GPtrArray        *headers)
{
#ifdef __linux__
  GPtrArray *unwatched;

  if (self->watch_fd < 0)
    return NULL;
  unwatched = g_ptr_array_new ();
  for (guint i = 0; i < headers->len; i++)
    {
      AtomrCacheHeaderStamp *stamp = g_ptr_array_index (headers, i);
      g_autofree gchar *dir = NULL;

      /* A relative path names another file after chdir(), which no watch
       * on the old directory reports: stat()ed every time. */
      if (!g_path_is_absolute (stamp->path))
        {
          g_ptr_array_add (unwatched, stamp);
          continue;
        }
      dir = g_path_get_dirname (stamp->path);
      if (g_hash_table_contains (self->watched_dirs, dir))
        continue;
      if (!is_local_file_system (dir)
          || inotify_add_watch (self->watch_fd, dir,
                                IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE
                                | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF) < 0)
        {
          g_ptr_array_add (unwatched, stamp);
          continue;
        }
      g_hash_table_add (self->watched_dirs, g_steal_pointer (&dir));
    }
  return unwatched;
#else
  return NULL;
#endif
}

/* Drains the inotify queue; any event (or overflow) starts a generation. */
static void
watch_poll_locked (AtomrKernelCache *self)
{
#ifdef __linux__
  gchar buf[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  gboolean any = FALSE;

  gboolean lost = FALSE;
  ssize_t n;

  if (self->watch_fd < 0)
    return;
  while ((n = read (self->watch_fd, buf, sizeof buf)) > 0)
    {
      any = TRUE;
      for (gchar *p = buf; p < buf + n;)
        {
          const struct inotify_event *ev = (const struct inotify_event *) p;
          /* The watched directory went away or moved (its path now names
           * another directory, unwatched), or events were dropped. */
          if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW))
            lost = TRUE;
          p += sizeof (struct inotify_event) + ev->len;
        }
    }
  if (any)
    self->watch_gen++;
  if (lost)
    {
      /* Entries watched before no longer count on their watches (full
       * stat() from now on); new entries watch again. */
      self->watch_epoch++;
      g_hash_table_remove_all (self->watched_dirs);
    }
#endif
}

static void
header_watch_init_locked (AtomrKernelCache *self,
                          HeaderWatch      *w,
                          GPtrArray        *headers)
{
  w->headers = g_ptr_array_ref (headers);
  w->unwatched = watch_headers_locked (self, headers);
  w->epoch = self->watch_epoch;
  w->checked = 0;   /* the stamps predate the watches: check them all once */
}

static void
header_watch_clear (HeaderWatch *w)
{
  g_clear_pointer (&w->unwatched, g_ptr_array_unref);
  g_clear_pointer (&w->headers, g_ptr_array_unref);
}

/* What must be stat()ed before @w can be trusted: NULL when nothing (no
 * headers, or every one watched and nothing happened since the last full
 * check); else a reference to the stamps to check, *@full telling whether
 * that is all of them (the caller then records the generation in *@gen
 * as checked once they match). */
static GPtrArray *
header_watch_pending_locked (AtomrKernelCache *self,
                             HeaderWatch      *w,
                             gboolean         *full,
                             guint64          *gen)
{
  gboolean watching = w->unwatched != NULL && w->epoch == self->watch_epoch;

  *full = FALSE;
  if (w->headers->len == 0)
    return NULL;
  if (watching && w->unwatched->len < w->headers->len)
    watch_poll_locked (self);
  *gen = self->watch_gen;
  if (watching && w->epoch == self->watch_epoch && w->checked == self->watch_gen)
    return w->unwatched->len > 0 ? g_ptr_array_ref (w->unwatched) : NULL;
  *full = TRUE;
  return g_ptr_array_ref (w->headers);
}

void
atomr_cache_memory_insert_locked (AtomrKernelCache   *self,
                                  const MemoryKey    *key,
                                  AtomrModuleContent *content,
                                  GPtrArray          *headers)
{
  MemoryEntry *e;

  if (self->memory_capacity == 0)
    return;
  e = g_hash_table_lookup (self->memory, key);
  if (e)
    {
      g_queue_unlink (&self->lru, e->link);
      g_list_free (e->link);
      g_hash_table_remove (self->memory, key);
    }
  e = g_new0 (MemoryEntry, 1);
  memory_key_copy (&e->key, key);
  e->content = atomr_module_content_ref (content);
  header_watch_init_locked (self, &e->w, headers);
  g_queue_push_head (&self->lru, e);
  e->link = self->lru.head;
  g_hash_table_insert (self->memory, &e->key, e);
  atomr_cache_memory_trim_locked (self, self->memory_capacity);
}

/* The memory level.  The headers' stat() calls (hundreds for CUB) run
 * outside the lock, on references taken under it, so concurrent hits of
 * other threads do not queue behind them. */
AtomrModule *
atomr_cache_memory_lookup (AtomrKernelCache *self,
                           const MemoryKey  *key,
                           gboolean          may_stat)
{
  g_autoptr(AtomrModuleContent) content = NULL;
  g_autoptr(GPtrArray) pending = NULL;
  AtomrModule *module;
  MemoryEntry *e;
  gboolean full = FALSE;
  guint64 gen = 0;

  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->memory, key);
  if (e == NULL)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  pending = header_watch_pending_locked (self, &e->w, &full, &gen);
  if (pending == NULL)
    {
      /* Nothing to check: the common case stays one lock round. */
      g_queue_unlink (&self->lru, e->link);
      g_queue_push_head_link (&self->lru, e->link);
      self->memory_hits++;
      module = atomr_cache_memory_entry_module_locked (e);
      g_mutex_unlock (&self->lock);
      return module;
    }
  if (!may_stat)
    {
      /* The caller must not block on the file system: a miss here, the
       * full lookup elsewhere. */
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  content = atomr_module_content_ref (e->content);
  g_mutex_unlock (&self->lock);

  if (!atomr_cache_stamps_unchanged (pending))
    return NULL;
  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->memory, key);
  if (e && e->content == content)
    {
      g_queue_unlink (&self->lru, e->link);
      g_queue_push_head_link (&self->lru, e->link);
      /* Valid as of the generation read before the stat()s. */
      if (full)
        e->w.checked = gen;
      module = atomr_cache_memory_entry_module_locked (e);
    }
  else
    module = atomr_module_new (content, ATOMR_CACHE_STATUS_MEMORY_HIT);
  self->memory_hits++;
  g_mutex_unlock (&self->lock);
  return module;
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
      module = atomr_cache_memory_entry_module_locked (e);
  g_mutex_unlock (&self->lock);
  return module;
}

static void
memory_key_copy (MemoryKey       *dst,
                 const MemoryKey *src)
{
  *dst = *src;
  dst->key_part = g_bytes_ref (src->key_part);
  dst->program_name = g_strdup (src->program_name);
  dst->source = g_memdup2 (src->source, src->source_len + 1);
}

void
atomr_cache_key_memo_free (gpointer data)
{
  KeyMemo *m = data;

  g_bytes_unref (m->key.key_part);
  g_free ((gchar *) m->key.program_name);
  g_free ((gchar *) m->key.source);
  g_free (m->disk_key);
  header_watch_clear (&m->w);
  g_free (m);
}

/* The disk key of @key if it was computed recently and every file it
 * depends on is unchanged (as a memory hit checks them); *@headers_out
 * then gets a reference to the stamps. */
gchar *
atomr_cache_key_memo_lookup (AtomrKernelCache *self,
                             const MemoryKey  *key,
                             gboolean          may_stat,
                             GPtrArray       **headers_out)
{
  g_autoptr(GPtrArray) headers = NULL;
  g_autoptr(GPtrArray) pending = NULL;
  g_autofree gchar *disk_key = NULL;
  gboolean full = FALSE;
  guint64 gen = 0;
  KeyMemo *m;

  g_mutex_lock (&self->lock);
  m = g_hash_table_lookup (self->key_memo, key);
  if (m == NULL)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  pending = header_watch_pending_locked (self, &m->w, &full, &gen);
  if (pending && !may_stat)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  disk_key = g_strdup (m->disk_key);
  headers = g_ptr_array_ref (m->w.headers);
  g_mutex_unlock (&self->lock);

  if (pending)
    {
      if (!atomr_cache_stamps_unchanged (pending))
        return NULL;
      if (full)
        {
          g_mutex_lock (&self->lock);
          m = g_hash_table_lookup (self->key_memo, key);
          if (m && m->w.headers == headers)
            m->w.checked = gen;
          g_mutex_unlock (&self->lock);
        }
    }
  *headers_out = g_steal_pointer (&headers);
  return g_steal_pointer (&disk_key);
}

void
atomr_cache_key_memo_insert (AtomrKernelCache *self,
                             const MemoryKey  *key,
                             const gchar      *disk_key,
                             GPtrArray        *headers)
{
  KeyMemo *m;

  g_mutex_lock (&self->lock);
  m = g_hash_table_lookup (self->key_memo, key);
  if (m)
    {
      g_queue_unlink (&self->key_memo_order, m->link);
      g_list_free (m->link);
      g_hash_table_remove (self->key_memo, key);
    }
  m = g_new0 (KeyMemo, 1);
  memory_key_copy (&m->key, key);
  m->disk_key = g_strdup (disk_key);
  header_watch_init_locked (self, &m->w, headers);
  g_queue_push_head (&self->key_memo_order, m);
  m->link = self->key_memo_order.head;
  g_hash_table_insert (self->key_memo, &m->key, m);
  while (self->key_memo_order.length > KEY_MEMO_CAPACITY)
    {
      KeyMemo *old = g_queue_pop_tail (&self->key_memo_order);
      g_hash_table_remove (self->key_memo, &old->key);
    }
  g_mutex_unlock (&self->lock);
}
